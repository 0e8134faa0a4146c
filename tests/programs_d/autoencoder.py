"""A convolutional autoencoder as the course notebooks write it (the "Convolutional
Autoencoder" examples of fast.ai/Udacity/PyTorch forums): a strided Conv2d encoder, a decoder
of ConvTranspose2d and ``F.interpolate`` upsampling, Sigmoid output, BCELoss, Adam; then the
reconstruction error per image and a denoising variant with ``nn.Upsample``.

    python autoencoder.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, TensorDataset
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F
    from numbagrad.utils.data import DataLoader, TensorDataset


class ConvAutoencoder(nn.Module):
    def __init__(self):
        super(ConvAutoencoder, self).__init__()
        # encoder: 1x16x16 -> 8x8x8 -> 4x4x4
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 8, 3, stride=2, padding=1),
            nn.ReLU(True),
            nn.Conv2d(8, 4, 3, stride=2, padding=1),
            nn.ReLU(True),
        )
        # decoder: 4x4x4 -> 8x8x8 -> 1x16x16
        self.t_conv1 = nn.ConvTranspose2d(4, 8, 2, stride=2)
        self.t_conv2 = nn.ConvTranspose2d(8, 1, 3, stride=2, padding=1, output_padding=1)

    def forward(self, x):
        x = self.encoder(x)
        x = F.relu(self.t_conv1(x))
        x = torch.sigmoid(self.t_conv2(x))
        return x


class UpsampleDecoder(nn.Module):
    """The "resize-convolution" decoder (upsample, then convolve) instead of transposed convs."""
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(4, 8, 3, padding=1)
        self.up = nn.Upsample(scale_factor=2, mode='nearest')
        self.conv2 = nn.Conv2d(8, 1, 3, padding=1)

    def forward(self, z):
        x = F.interpolate(z, scale_factor=2, mode='bilinear', align_corners=False)
        x = F.leaky_relu(self.conv1(x), 0.2)
        x = self.up(x)
        return torch.sigmoid(self.conv2(x))


rng = np.random.default_rng(0)
# blobs on a 16x16 canvas, in [0, 1]
yy, xx = np.mgrid[0:16, 0:16]
centres = rng.uniform(4, 12, size=(40, 2))
images = np.exp(-((yy[None] - centres[:, :1, None]) ** 2 + (xx[None] - centres[:, 1:, None]) ** 2) / 8.0)
images = torch.from_numpy(images[:, None].astype(np.float32))
loader = DataLoader(TensorDataset(images), batch_size=10)

model = ConvAutoencoder()
numpy_init(torch, model)
print(model)
show('shapes', list(model.encoder(images[:2]).shape) + list(model(images[:2]).shape))
criterion = nn.BCELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
n_epochs = 4
history = []
for epoch in range(1, n_epochs + 1):
    train_loss = 0.0
    for data in loader:
        images_b = data[0]
        optimizer.zero_grad()
        outputs = model(images_b)
        loss = criterion(outputs, images_b)
        loss.backward()
        optimizer.step()
        train_loss += loss.item() * images_b.size(0)
    train_loss = train_loss / len(loader.dataset)
    history.append(train_loss)
    print('Epoch: {} \tTraining Loss: {:.6f}'.format(epoch, train_loss))
show('history', history)
show('adam_step', optimizer.state[model.t_conv2.bias]['step'])
show('adam_exp_avg_sq', optimizer.state[model.t_conv1.weight]['exp_avg_sq'].sum())

model.eval()
with torch.no_grad():
    recon = model(images[:5])
    per_image = F.mse_loss(recon, images[:5], reduction='none').mean(dim=[1, 2, 3])
show('per_image_mse', per_image)
show('recon_pixels', recon[0, 0, 6:9, 6:9])

# a denoising autoencoder with the resize-convolution decoder, trained on noisy inputs
encoder = model.encoder
decoder = UpsampleDecoder()
numpy_init(torch, decoder, seed=1)
noise = torch.from_numpy(rng.normal(0, 0.3, size=tuple(images.shape)).astype(np.float32))
noisy = torch.clamp(images + noise, 0., 1.)
params = list(encoder.parameters()) + list(decoder.parameters())
opt = torch.optim.Adam(params, lr=0.005, betas=(0.9, 0.99), eps=1e-7, amsgrad=True)
losses = []
for step in range(5):
    opt.zero_grad()
    out = decoder(encoder(noisy))
    loss = F.binary_cross_entropy(out, images)
    loss.backward()
    opt.step()
    losses.append(loss.item())
show('denoise_losses', losses)
show('denoise_grad', decoder.conv1.weight.grad.abs().sum())
up = F.interpolate(images[:1, :, 5:9, 5:9], size=(6, 7), mode='bicubic', align_corners=True)
show('bicubic', up)
show('nearest_exact', F.interpolate(images[:1, :, 6:9, 6:9], scale_factor=1.5, mode='nearest-exact'))
show('area', F.interpolate(images[:1], size=(5, 5), mode='area'))
