"""pytorch/examples super_resolution (model.py, data.py, main.py, super_resolve.py), scaled
down: the sub-pixel CNN (Conv2d stack ending in ``nn.PixelShuffle(upscale_factor)``) with
``init.orthogonal_(w, init.calculate_gain('relu'))``, low-resolution inputs made by resizing
the targets as torchvision's tensor ``Resize`` does (``F.interpolate(mode='bicubic',
antialias=True)``), MSELoss, Adam, the per-epoch PSNR ``10 * log10(1 / mse.item())``, a whole
model saved with ``torch.save(model, ...)`` and loaded back, and super-resolving one image.

    python super_resolution.py [torch|numbagrad]
"""
import argparse
import io
from math import log10

import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.nn.init as init
    import torch.optim as optim
    from torch.utils.data import DataLoader, Dataset
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F
    import numbagrad.nn.init as init
    import numbagrad.optim as optim
    from numbagrad.utils.data import DataLoader, Dataset


# ----- model.py
class Net(nn.Module):
    def __init__(self, upscale_factor):
        super(Net, self).__init__()

        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 16, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(16, 16, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(16, 8, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(8, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)

        self._initialize_weights()

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        x = self.pixel_shuffle(self.conv4(x))
        return x

    def _initialize_weights(self):
        init.orthogonal_(self.conv1.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv2.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv3.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv4.weight)


# ----- data.py: random "luminance" crops and their downscaled versions
class DatasetFromArrays(Dataset):
    def __init__(self, images, upscale_factor):
        super(DatasetFromArrays, self).__init__()
        self.images = images
        self.upscale_factor = upscale_factor

    def input_transform(self, img):
        # torchvision's Resize(crop_size // upscale_factor) on a tensor
        size = img.shape[-1] // self.upscale_factor
        return F.interpolate(img.unsqueeze(0), size=(size, size), mode='bicubic',
                             align_corners=False, antialias=True).squeeze(0).clamp(0, 1)

    def __getitem__(self, index):
        target = self.images[index]
        input = self.input_transform(target)
        return input, target.clone()

    def __len__(self):
        return len(self.images)


rng = np.random.default_rng(0)
yy, xx = np.mgrid[0:12, 0:12] / 12.0
images = np.stack([0.5 + 0.4 * np.sin(2 * np.pi * (a * xx + b * yy) + c)
                   for a, b, c in rng.uniform(0.3, 1.5, (20, 3))])[:, None]
images = torch.from_numpy((images + 0.02 * rng.normal(size=images.shape)).clip(0, 1).astype(np.float32))

# ----- main.py
parser = argparse.ArgumentParser(description='PyTorch Super Res Example')
parser.add_argument('backend', nargs='?', default='numbagrad')
parser.add_argument('--upscale_factor', type=int, default=3, help="super resolution upscale factor")
parser.add_argument('--batchSize', type=int, default=4, help='training batch size')
parser.add_argument('--testBatchSize', type=int, default=4, help='testing batch size')
parser.add_argument('--nEpochs', type=int, default=3, help='number of epochs to train for')
parser.add_argument('--lr', type=float, default=0.01, help='Learning Rate. Default=0.01')
parser.add_argument('--seed', type=int, default=123, help='random seed to use. Default=123')
opt = parser.parse_args()
print(opt)

torch.manual_seed(opt.seed)
device = torch.device("cpu")

print('===> Loading datasets')
train_set = DatasetFromArrays(images[:16], opt.upscale_factor)
test_set = DatasetFromArrays(images[16:], opt.upscale_factor)
training_data_loader = DataLoader(dataset=train_set, num_workers=0, batch_size=opt.batchSize, shuffle=False)
testing_data_loader = DataLoader(dataset=test_set, num_workers=0, batch_size=opt.testBatchSize, shuffle=False)
lowres, highres = train_set[0]
show("pair_shapes", [*lowres.shape, *highres.shape])
show("lowres_row", lowres[0, 1])

print('===> Building model')
model = Net(upscale_factor=opt.upscale_factor).to(device)

# orthogonal_ draws from the library's generator: check what it promises (rows orthonormal,
# times the gain), then load NumPy's orthogonal matrices so both libraries train alike
gain = init.calculate_gain('relu')
show("gains", [gain, init.calculate_gain('tanh'), init.calculate_gain('leaky_relu', 0.2), init.calculate_gain('selu'), init.calculate_gain('conv2d')])
w = model.conv2.weight.reshape(16, -1)
show("orthogonal_rows", bool(torch.allclose(w @ w.t(), gain ** 2 * torch.eye(16), atol=1e-4)))
w = model.conv4.weight.reshape(9, -1)
show("orthogonal_rows_gain1", bool(torch.allclose(w @ w.t(), torch.eye(9), atol=1e-5)))
tall = init.orthogonal_(torch.empty(6, 3))
show("orthogonal_cols", bool(torch.allclose(tall.t() @ tall, torch.eye(3), atol=1e-5)))
with torch.no_grad():
    for conv, g in [(model.conv1, gain), (model.conv2, gain), (model.conv3, gain), (model.conv4, 1.0)]:
        rows, cols = conv.weight.shape[0], conv.weight[0].numel()
        q, r = np.linalg.qr(rng.normal(size=(max(rows, cols), min(rows, cols))))
        q = q * np.sign(np.diag(r))
        q = q.T if rows < cols else q
        conv.weight.copy_(torch.from_numpy((g * q).reshape(tuple(conv.weight.shape)).astype(np.float32)))
        conv.bias.copy_(torch.from_numpy(rng.uniform(-0.1, 0.1, rows).astype(np.float32)))

criterion = nn.MSELoss()

optimizer = optim.Adam(model.parameters(), lr=opt.lr)

epoch_losses, psnrs = [], []


def train(epoch):
    epoch_loss = 0
    for iteration, batch in enumerate(training_data_loader, 1):
        input, target = batch[0].to(device), batch[1].to(device)

        optimizer.zero_grad()
        loss = criterion(model(input), target)
        epoch_loss += loss.item()
        loss.backward()
        optimizer.step()

        print("===> Epoch[{}]({}/{}): Loss: {:.4f}".format(epoch, iteration, len(training_data_loader), loss.item()))

    print("===> Epoch {} Complete: Avg. Loss: {:.4f}".format(epoch, epoch_loss / len(training_data_loader)))
    epoch_losses.append(epoch_loss / len(training_data_loader))


def test():
    avg_psnr = 0
    with torch.no_grad():
        for batch in testing_data_loader:
            input, target = batch[0].to(device), batch[1].to(device)

            prediction = model(input)
            mse = criterion(prediction, target)
            psnr = 10 * log10(1 / mse.item())
            avg_psnr += psnr
    print("===> Avg. PSNR: {:.4f} dB".format(avg_psnr / len(testing_data_loader)))
    psnrs.append(avg_psnr / len(testing_data_loader))


saved = io.BytesIO()


def checkpoint(epoch):
    model_out_path = "model_epoch_{}.pth".format(epoch)
    saved.seek(0)
    torch.save(model, saved)
    print("Checkpoint saved to {}".format(model_out_path))


for epoch in range(1, opt.nEpochs + 1):
    train(epoch)
    test()
    checkpoint(epoch)

show("epoch_losses", epoch_losses)
show("psnrs", psnrs)
show("conv4_bias", model.conv4.bias)

# ----- super_resolve.py
saved.seek(0)
model = torch.load(saved, weights_only=False)
show("loaded_type", [type(model).__name__ == "Net", isinstance(model.pixel_shuffle, nn.PixelShuffle)])
img_y = images[17, 0]
input = test_set.input_transform(img_y.unsqueeze(0)).view(1, -1, 4, 4)
out = model(input)
out_img_y = out[0].detach().numpy()
out_img_y *= 255.0
out_img_y = out_img_y.clip(0, 255)
show("out_img_y", out_img_y[0, 5])

# PixelShuffle and PixelUnshuffle undo each other
x = torch.arange(2 * 9 * 2 * 2, dtype=torch.float32).reshape(2, 9, 2, 2)
shuffled = nn.PixelShuffle(3)(x)
show("pixel_shuffle", [*shuffled.shape, *shuffled[0, 0, 0]])
show("pixel_unshuffle", bool(torch.equal(nn.PixelUnshuffle(3)(shuffled), x)))
print(nn.PixelShuffle(3), nn.PixelUnshuffle(3))

# the antialiased resize, its gradient, and bilinear next to it
img = images[:2].clone().requires_grad_()
small = F.interpolate(img, size=(5, 5), mode='bilinear', antialias=True)
small.pow(2).sum().backward()
show("aa_bilinear", small[1, 0, 2])
show("aa_bilinear_grad", img.grad[0, 0, 3])
show("aa_bicubic_scale", F.interpolate(images[:1], scale_factor=0.5, mode='bicubic', antialias=True)[0, 0, 1])
show("aa_upsample", F.interpolate(images[:1, :, :3, :3], size=(5, 4), mode='bilinear', antialias=True)[0, 0, 2])
