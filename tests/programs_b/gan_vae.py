"""The DCGAN tutorial's training loop (two networks, two optimizers, BCELoss on real and
``G(z).detach()`` fakes) on MLPs, and pytorch/examples vae/main.py's model and loss.

    python gan_vae.py [torch|numbagrad]
"""
import sys

import numpy as np

BACKEND = sys.argv[1] if len(sys.argv) > 1 else "numbagrad"
if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.optim as optim
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F
    import numbagrad.optim as optim

torch.manual_seed(999)
rng = np.random.default_rng(999)


def numpy_init(model):
    """Both libraries start from the same weights (the tutorial's N(0, 0.02) for weights)."""
    model.load_state_dict({k: torch.from_numpy((rng.standard_normal(tuple(v.shape)) * 0.02 + (1.0 if 'norm' in k and k.endswith('weight') else 0.0)).astype(np.float32))
                           for k, v in model.state_dict().items() if 'running' not in k and 'num_batches' not in k},
                          strict=False)


nz, ngf, n_out = 8, 32, 16


class Generator(nn.Module):
    def __init__(self):
        super(Generator, self).__init__()
        self.main = nn.Sequential(
            nn.Linear(nz, ngf),
            nn.BatchNorm1d(ngf),
            nn.ReLU(True),
            nn.Linear(ngf, n_out),
            nn.Tanh(),
        )

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        self.main = nn.Sequential(
            nn.Linear(n_out, ngf),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(ngf, 1),
            nn.Sigmoid(),
        )

    def forward(self, input):
        return self.main(input)


netG = Generator()
netD = Discriminator()
numpy_init(netG)
numpy_init(netD)
print(netG)

criterion = nn.BCELoss()
real_label = 1.
fake_label = 0.
beta1 = 0.5
optimizerD = optim.Adam(netD.parameters(), lr=0.0002, betas=(beta1, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=0.0002, betas=(beta1, 0.999))

G_losses = []
D_losses = []
b = 16
real_data = torch.from_numpy(np.tanh(rng.standard_normal((4, b, n_out))).astype(np.float32))
noises = torch.from_numpy(rng.standard_normal((4, b, nz)).astype(np.float32))
for i in range(4):
    ############################
    # (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
    ###########################
    ## Train with all-real batch
    netD.zero_grad()
    real_cpu = real_data[i]
    label = torch.full((b,), real_label, dtype=torch.float)
    output = netD(real_cpu).view(-1)
    errD_real = criterion(output, label)
    errD_real.backward()
    D_x = output.mean().item()

    ## Train with all-fake batch
    noise = noises[i]
    fake = netG(noise)
    label.fill_(fake_label)
    output = netD(fake.detach()).view(-1)
    errD_fake = criterion(output, label)
    errD_fake.backward()
    D_G_z1 = output.mean().item()
    errD = errD_real + errD_fake
    optimizerD.step()

    ############################
    # (2) Update G network: maximize log(D(G(z)))
    ###########################
    netG.zero_grad()
    label.fill_(real_label)  # fake labels are real for generator cost
    output = netD(fake).view(-1)
    errG = criterion(output, label)
    errG.backward()
    D_G_z2 = output.mean().item()
    optimizerG.step()

    print('[%d/%d]\tLoss_D: %.4f\tLoss_G: %.4f\tD(x): %.4f\tD(G(z)): %.4f / %.4f'
          % (i, 4, errD.item(), errG.item(), D_x, D_G_z1, D_G_z2))
    G_losses.append(errG.item())
    D_losses.append(errD.item())

# the "simple GAN" variant of courses: ones/zeros targets and BCEWithLogitsLoss
ones, zeros = torch.ones(b, 1), torch.zeros(b, 1)
logits_real = netD.main[:-1](real_data[0])
bce = nn.BCEWithLogitsLoss()(logits_real, ones) + nn.BCEWithLogitsLoss()(logits_real, zeros)


class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()

        self.fc1 = nn.Linear(784, 64)
        self.fc21 = nn.Linear(64, 8)
        self.fc22 = nn.Linear(64, 8)
        self.fc3 = nn.Linear(8, 64)
        self.fc4 = nn.Linear(64, 784)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5*logvar)
        eps = torch.randn_like(std)
        return mu + eps*std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


# Reconstruction + KL divergence losses summed over all elements and batch
def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction='sum')

    # see Appendix B from VAE paper:
    # Kingma and Welling. Auto-Encoding Variational Bayes. ICLR, 2014
    # https://arxiv.org/abs/1312.6114
    # 0.5 * sum(1 + log(sigma^2) - mu^2 - sigma^2)
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())

    return BCE + KLD


model = VAE()
numpy_init(model)
optimizer = optim.Adam(model.parameters(), lr=1e-3)
images = torch.from_numpy(rng.random((5, 8, 1, 28, 28)).astype(np.float32) ** 3)

# the deterministic part: the loss at the mean (no sampling) is the same in both libraries
model.eval()
with torch.no_grad():
    mu, logvar = model.encode(images[0].view(-1, 784))
    det_loss = loss_function(model.decode(mu), images[0], mu, logvar).item()

model.train()
train_losses = []
for epoch in range(1, 3):
    train_loss = 0
    for batch_idx, data in enumerate(images):
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data)
        loss = loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
    train_losses.append(train_loss / (len(images) * 8))
    print('====> Epoch: {} Average loss: {:.4f}'.format(epoch, train_loss / (len(images) * 8)))

with torch.no_grad():
    sample = torch.randn(4, 8)
    sample = model.decode(sample).cpu()
    assert sample.view(4, 1, 28, 28).shape == (4, 1, 28, 28)

print('gan', *G_losses, *D_losses)
print('bce', bce.item())
print('vae', det_loss)
print('~vae_train', *train_losses)
