"""PyTorch tutorial "DCGAN Tutorial", scaled down to 16x16 images: a ConvTranspose2d +
BatchNorm2d + ReLU generator ending in Tanh, a strided Conv2d + LeakyReLU(0.2, inplace=True)
discriminator ending in Sigmoid, ``weights_init`` through ``model.apply`` (``classname.find``),
BCELoss, Adam with ``betas=(0.5, 0.999)``, ``real_label``/``fake_label`` targets made with
``torch.full`` and refilled with ``fill_``, ``fake.detach()`` for the discriminator step, the
D(x)/D(G(z)) statistics, and the fixed-noise samples normalised as ``make_grid`` does.

    python dcgan.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.optim as optim
    from torch.utils.data import DataLoader, TensorDataset
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.optim as optim
    from numbagrad.utils.data import DataLoader, TensorDataset

# Number of workers for dataloader
workers = 0
# Batch size during training
batch_size = 8
# Spatial size of training images.
image_size = 16
# Number of channels in the training images. For color images this is 3
nc = 3
# Size of z latent vector (i.e. size of generator input)
nz = 8
# Size of feature maps in generator
ngf = 4
# Size of feature maps in discriminator
ndf = 4
# Number of training epochs
num_epochs = 2
# Learning rate for optimizers
lr = 0.0002
# Beta1 hyperparameter for Adam optimizers
beta1 = 0.5
# Number of GPUs available. Use 0 for CPU mode.
ngpu = 0
device = torch.device("cuda:0" if (torch.cuda.is_available() and ngpu > 0) else "cpu")

rng = np.random.default_rng(0)
# "images" in [-1, 1] as the tutorial's Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5)) makes them
images = torch.from_numpy(np.tanh(rng.normal(size=(24, nc, image_size, image_size))).astype(np.float32))
dataset = TensorDataset(images, torch.zeros(24, dtype=torch.long))
dataloader = DataLoader(dataset, batch_size=batch_size, shuffle=False, num_workers=workers)


# custom weights initialization called on ``netG`` and ``netD``
def weights_init(m):
    classname = m.__class__.__name__
    if classname.find('Conv') != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find('BatchNorm') != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)


# the same initialization with numbers drawn by NumPy, so that both libraries train alike
init_rng = np.random.default_rng(1)


def numpy_weights_init(m):
    classname = m.__class__.__name__
    if classname.find('Conv') != -1:
        m.weight.data.copy_(torch.from_numpy(init_rng.normal(0.0, 0.02, tuple(m.weight.shape)).astype(np.float32)))
    elif classname.find('BatchNorm') != -1:
        m.weight.data.copy_(torch.from_numpy(init_rng.normal(1.0, 0.02, tuple(m.weight.shape)).astype(np.float32)))
        nn.init.constant_(m.bias.data, 0)


# Generator Code
class Generator(nn.Module):
    def __init__(self, ngpu):
        super(Generator, self).__init__()
        self.ngpu = ngpu
        self.main = nn.Sequential(
            # input is Z, going into a convolution
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            # state size. ``(ngf*2) x 4 x 4``
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            # state size. ``(ngf) x 8 x 8``
            nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False),
            nn.Tanh()
            # state size. ``(nc) x 16 x 16``
        )

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self, ngpu):
        super(Discriminator, self).__init__()
        self.ngpu = ngpu
        self.main = nn.Sequential(
            # input is ``(nc) x 16 x 16``
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            # state size. ``(ndf) x 8 x 8``
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            # state size. ``(ndf*2) x 4 x 4``
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),
            nn.Sigmoid()
        )

    def forward(self, input):
        return self.main(input)


# Create the generator
netG = Generator(ngpu).to(device)
# Apply the ``weights_init`` function to randomly initialize all weights
#  to ``mean=0``, ``stdev=0.02``.
netG.apply(weights_init)
# Print the model
print(netG)
netD = Discriminator(ngpu).to(device)
netD.apply(weights_init)
print(netD)

# the library's own draws: only their spread is compared
conv_w = torch.cat([m.weight.reshape(-1) for m in netG.modules() if isinstance(m, nn.ConvTranspose2d)])
show("init_std_near_0.02", bool(abs(conv_w.std().item() - 0.02) < 0.004))
show("init_bn_bias_zero", [bool((m.bias == 0).all()) for m in netD.modules() if isinstance(m, nn.BatchNorm2d)])
show("weight_shapes", [list(m.weight.shape) for m in netG.modules() if isinstance(m, nn.ConvTranspose2d)])

netG.apply(numpy_weights_init)
netD.apply(numpy_weights_init)

# Initialize the ``BCELoss`` function
criterion = nn.BCELoss()

# Create batch of latent vectors that we will use to visualize
#  the progression of the generator
fixed_noise = torch.from_numpy(rng.normal(size=(4, nz, 1, 1)).astype(np.float32))

# Establish convention for real and fake labels during training
real_label = 1.
fake_label = 0.

# Setup Adam optimizers for both G and D
optimizerD = optim.Adam(netD.parameters(), lr=lr, betas=(beta1, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=lr, betas=(beta1, 0.999))

# Training Loop

# Lists to keep track of progress
img_list = []
G_losses = []
D_losses = []
stats = []
iters = 0

print("Starting Training Loop...")
# For each epoch
for epoch in range(num_epochs):
    # For each batch in the dataloader
    for i, data in enumerate(dataloader, 0):

        ############################
        # (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
        ###########################
        ## Train with all-real batch
        netD.zero_grad()
        # Format batch
        real_cpu = data[0].to(device)
        b_size = real_cpu.size(0)
        label = torch.full((b_size,), real_label, dtype=torch.float, device=device)
        # Forward pass real batch through D
        output = netD(real_cpu).view(-1)
        # Calculate loss on all-real batch
        errD_real = criterion(output, label)
        # Calculate gradients for D in backward pass
        errD_real.backward()
        D_x = output.mean().item()

        ## Train with all-fake batch
        # Generate batch of latent vectors
        noise = torch.from_numpy(rng.normal(size=(b_size, nz, 1, 1)).astype(np.float32))
        # Generate fake image batch with G
        fake = netG(noise)
        label.fill_(fake_label)
        # Classify all fake batch with D
        output = netD(fake.detach()).view(-1)
        # Calculate D's loss on the all-fake batch
        errD_fake = criterion(output, label)
        # Calculate the gradients for this batch, accumulated (summed) with previous gradients
        errD_fake.backward()
        D_G_z1 = output.mean().item()
        # Compute error of D as sum over the fake and the real batches
        errD = errD_real + errD_fake
        # Update D
        optimizerD.step()

        ############################
        # (2) Update G network: maximize log(D(G(z)))
        ###########################
        netG.zero_grad()
        label.fill_(real_label)  # fake labels are real for generator cost
        # Since we just updated D, perform another forward pass of all-fake batch through D
        output = netD(fake).view(-1)
        # Calculate G's loss based on this output
        errG = criterion(output, label)
        # Calculate gradients for G
        errG.backward()
        D_G_z2 = output.mean().item()
        # Update G
        optimizerG.step()

        # Output training stats
        print('[%d/%d][%d/%d]\tLoss_D: %.4f\tLoss_G: %.4f\tD(x): %.4f\tD(G(z)): %.4f / %.4f'
              % (epoch, num_epochs, i, len(dataloader),
                 errD.item(), errG.item(), D_x, D_G_z1, D_G_z2))

        # Save Losses for plotting later
        G_losses.append(errG.item())
        D_losses.append(errD.item())
        stats.append([D_x, D_G_z1, D_G_z2])

        # Check how the generator is doing by saving G's output on fixed_noise
        if (iters % 3 == 0) or ((epoch == num_epochs-1) and (i == len(dataloader)-1)):
            with torch.no_grad():
                fake = netG(fixed_noise).detach().cpu()
            # what ``vutils.make_grid(fake, padding=2, normalize=True)`` does to the values
            fake = fake.clone()
            low, high = float(fake.min()), float(fake.max())
            fake.clamp_(min=low, max=high)
            fake.sub_(low).div_(max(high - low, 1e-5))
            img_list.append(fake)

        iters += 1

show("G_losses", G_losses)
show("D_losses", D_losses)
show("stats", stats)
show("img_list", [len(img_list), *img_list[-1].shape])
show("last_sample", img_list[-1][1, 0, 7])
show("sample_range", [img_list[-1].min(), img_list[-1].max()])
show("bn_running_mean", netG.main[1].running_mean)
show("bn_running_var", netD.main[3].running_var)
show("bn_num_batches", netD.main[3].num_batches_tracked)
show("D_first_grad", netD.main[0].weight.grad[0, 0, 0])
show("G_last_weight", netG.main[6].weight[0, 0, 1])
show("adam_state", optimizerG.state[netG.main[0].weight]["exp_avg_sq"][0, 0, 0])

# the generator in eval mode uses the running statistics
netG.eval()
with torch.no_grad():
    show("eval_sample", netG(fixed_noise[:1])[0, 2, 3, :5])
