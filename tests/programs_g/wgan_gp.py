"""caogang/wgan-gp ``gan_toy.py`` (WGAN with gradient penalty on the 8-Gaussians toy set), as its
maintained forks write it for PyTorch >= 1.0 (``one = torch.tensor(1, dtype=torch.float)``), scaled
down, with ``torch.rand``/``torch.randn`` draws made by NumPy: the Generator and Discriminator MLPs
with ``nn.ReLU(True)`` and ``output.view(-1)``; ``weights_init`` through ``apply`` and
``classname.find('Linear')`` (``m.weight.data.normal_``, ``m.bias.data.fill_(0)``; the normal
draws then replaced by NumPy's); ``inf_train_gen`` with Python's ``random.choice`` of centres;
``calc_gradient_penalty`` (``alpha.expand(real_data.size())``, ``autograd.Variable(interpolates,
requires_grad=True)``, ``autograd.grad(outputs=, inputs=, grad_outputs=torch.ones(...),
create_graph=True, retain_graph=True, only_inputs=True)``, ``gradients.norm(2, dim=1)``); the
critic loop with ``p.requires_grad = True/False`` toggles, ``D_real.backward(mone)`` and
``D_fake.backward(one)`` on 0-d tensors, ``autograd.Variable(netG(noisev, real_data_v).data)``,
two Adam optimizers with ``betas=(0.5, 0.9)``; the weight-clipping WGAN mode
(``p.data.clamp_(-0.01, 0.01)``, RMSprop); and the same critic with
``nn.utils.parametrizations.spectral_norm`` (its ``_u``/``_v`` power-iteration vectors set from
NumPy) and a ``weight_norm`` generator, trained the same way.

    python wgan_gp.py [torch|numbagrad]
"""
import random

import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
    import torch.autograd as autograd
    import torch.nn as nn
    import torch.optim as optim
    from torch.nn.utils.parametrizations import spectral_norm, weight_norm
else:
    import numbagrad as torch
    import numbagrad.autograd as autograd
    import numbagrad.nn as nn
    import numbagrad.optim as optim
    from numbagrad.nn.utils.parametrizations import spectral_norm, weight_norm

MODE = 'wgan-gp'  # wgan or wgan-gp
DATASET = '8gaussians'  # 8gaussians, 25gaussians, swissroll
DIM = 32  # Model dimensionality
FIXED_GENERATOR = False  # whether to hold the generator fixed at real data plus
# Gaussian noise, as in the plots in the paper
LAMBDA = .1  # Smaller lambda seems to help for toy tasks specifically
CRITIC_ITERS = 5  # How many critic iterations per generator iteration
BATCH_SIZE = 64  # Batch size
ITERS = 6  # how many generator iterations to train for
use_cuda = False

random.seed(1)
noise_rng = np.random.default_rng(2)
np.random.seed(3)


def rand(*shape):
    return torch.from_numpy(noise_rng.random(shape).astype(np.float32))


def randn(*shape):
    return torch.from_numpy(noise_rng.standard_normal(shape).astype(np.float32))


class Generator(nn.Module):

    def __init__(self):
        super(Generator, self).__init__()

        main = nn.Sequential(
            nn.Linear(2, DIM),
            nn.ReLU(True),
            nn.Linear(DIM, DIM),
            nn.ReLU(True),
            nn.Linear(DIM, DIM),
            nn.ReLU(True),
            nn.Linear(DIM, 2),
        )
        self.main = main

    def forward(self, noise, real_data):
        if FIXED_GENERATOR:
            return noise + real_data
        else:
            output = self.main(noise)
            return output


class Discriminator(nn.Module):

    def __init__(self):
        super(Discriminator, self).__init__()

        main = nn.Sequential(
            nn.Linear(2, DIM),
            nn.ReLU(True),
            nn.Linear(DIM, DIM),
            nn.ReLU(True),
            nn.Linear(DIM, DIM),
            nn.ReLU(True),
            nn.Linear(DIM, 1),
        )
        self.main = main

    def forward(self, inputs):
        output = self.main(inputs)
        return output.view(-1)


init_rng = np.random.default_rng(4)


# custom weights initialization called on netG and netD
def weights_init(m):
    classname = m.__class__.__name__
    if classname.find('Linear') != -1:
        m.weight.data.normal_(0.0, 0.02)
        m.weight.data.copy_(torch.from_numpy(
            init_rng.normal(0.0, 0.2, tuple(m.weight.shape)).astype(np.float32)))
        m.bias.data.fill_(0)
    elif classname.find('BatchNorm') != -1:
        m.weight.data.normal_(1.0, 0.02)
        m.bias.data.fill_(0)


def inf_train_gen():
    if DATASET == '8gaussians':

        scale = 2.
        centers = [
            (1, 0),
            (-1, 0),
            (0, 1),
            (0, -1),
            (1. / np.sqrt(2), 1. / np.sqrt(2)),
            (1. / np.sqrt(2), -1. / np.sqrt(2)),
            (-1. / np.sqrt(2), 1. / np.sqrt(2)),
            (-1. / np.sqrt(2), -1. / np.sqrt(2))
        ]
        centers = [(scale * x, scale * y) for x, y in centers]
        while True:
            dataset = []
            for i in range(BATCH_SIZE):
                point = np.random.randn(2) * .02
                center = random.choice(centers)
                point[0] += center[0]
                point[1] += center[1]
                dataset.append(point)
            dataset = np.array(dataset, dtype='float32')
            dataset /= 1.414  # stdev
            yield dataset


def calc_gradient_penalty(netD, real_data, fake_data):
    alpha = rand(BATCH_SIZE, 1)
    alpha = alpha.expand(real_data.size())

    interpolates = alpha * real_data + ((1 - alpha) * fake_data)

    interpolates = autograd.Variable(interpolates, requires_grad=True)

    disc_interpolates = netD(interpolates)

    gradients = autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                              grad_outputs=torch.ones(disc_interpolates.size()),
                              create_graph=True, retain_graph=True, only_inputs=True)[0]

    gradient_penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean() * LAMBDA
    return gradient_penalty


def train(netG, netD, optimizerD, optimizerG, mode, tag):
    one = torch.tensor(1, dtype=torch.float)
    mone = one * -1
    data = inf_train_gen()
    history = []
    for iteration in range(ITERS):
        ############################
        # (1) Update D network
        ###########################
        for p in netD.parameters():  # reset requires_grad
            p.requires_grad = True  # they are set to False below in netG update

        for iter_d in range(CRITIC_ITERS):
            _data = next(data)
            real_data = torch.Tensor(_data)
            real_data_v = autograd.Variable(real_data)

            netD.zero_grad()

            # train with real
            D_real = netD(real_data_v)
            D_real = D_real.mean()
            D_real.backward(mone)

            # train with fake
            noise = randn(BATCH_SIZE, 2)
            with torch.no_grad():  # totally freeze netG
                noisev = autograd.Variable(noise)
                fake = autograd.Variable(netG(noisev, real_data_v).data)
            inputv = fake
            D_fake = netD(inputv)
            D_fake = D_fake.mean()
            D_fake.backward(one)

            if mode == 'wgan-gp':
                # train with gradient penalty
                gradient_penalty = calc_gradient_penalty(netD, real_data_v.data, fake.data)
                gradient_penalty.backward()
                D_cost = D_fake - D_real + gradient_penalty
            else:
                D_cost = D_fake - D_real

            Wasserstein_D = D_real - D_fake
            optimizerD.step()
            if mode == 'wgan':
                for p in netD.parameters():
                    p.data.clamp_(-0.01, 0.01)

        if iteration == 0:
            show(f"{tag}_critic_grad", netD.main[0].parametrizations.weight.original.grad[:3]
                 if hasattr(netD.main[0], "parametrizations") else netD.main[0].weight.grad[:3])

        if not FIXED_GENERATOR:
            ############################
            # (2) Update G network
            ###########################
            for p in netD.parameters():
                p.requires_grad = False  # to avoid computation
            netG.zero_grad()

            _data = next(data)
            real_data = torch.Tensor(_data)
            real_data_v = autograd.Variable(real_data)

            noise = randn(BATCH_SIZE, 2)
            noisev = autograd.Variable(noise)
            fake = netG(noisev, real_data_v)
            G = netD(fake)
            G = G.mean()
            G.backward(mone)
            G_cost = -G
            optimizerG.step()
            if iteration == 0:
                show(f"{tag}_critic_grads_frozen",
                     float(all(p.grad is None or float(p.grad.abs().sum()) == 0
                               or not p.requires_grad for p in netD.parameters())))

        history.append([D_cost.item(), G_cost.item(), Wasserstein_D.item()])
    show(f"{tag}_history", history)


# ---- wgan-gp and wgan (weight clipping)
for mode in ('wgan-gp', 'wgan'):
    netG = Generator()
    netD = Discriminator()
    netD.apply(weights_init)
    netG.apply(weights_init)
    print(netG)
    print(netD)
    if mode == 'wgan-gp':
        optimizerD = optim.Adam(netD.parameters(), lr=1e-3, betas=(0.5, 0.9))
        optimizerG = optim.Adam(netG.parameters(), lr=1e-3, betas=(0.5, 0.9))
    else:
        optimizerD = optim.RMSprop(netD.parameters(), lr=5e-4)
        optimizerG = optim.RMSprop(netG.parameters(), lr=5e-4)
    train(netG, netD, optimizerD, optimizerG, mode, mode)
    show(f"{mode}_critic_weight", netD.main[2].weight[0, :6])
    show(f"{mode}_generator_weight", netG.main[6].weight[:, :4])
    with torch.no_grad():
        samples = netG(randn(8, 2), None)
    show(f"{mode}_samples", samples)

# ---- the same critic under spectral normalisation, a weight-normalised generator
netG = Generator()
netD = Discriminator()
netD.apply(weights_init)
netG.apply(weights_init)
uv_rng = np.random.default_rng(5)
for i in (0, 2, 4, 6):
    spectral_norm(netD.main[i])
    p = netD.main[i].parametrizations.weight[0]
    with torch.no_grad():  # the power iteration's starting vectors, from NumPy
        u = uv_rng.normal(size=tuple(p._u.shape)).astype(np.float32)
        v = uv_rng.normal(size=tuple(p._v.shape)).astype(np.float32)
        p._u.copy_(torch.from_numpy(u / np.linalg.norm(u)))
        p._v.copy_(torch.from_numpy(v / np.linalg.norm(v)))
    weight_norm(netG.main[i])
show("sn_names:" + ",".join(n for n, _ in netD.main[0].named_parameters()), 1)
show("wn_names:" + ",".join(n for n, _ in netG.main[0].named_parameters()), 1)
show("sn_buffers:" + ",".join(n for n, _ in netD.main[0].named_buffers()), 1)
show("wn_g", netG.main[0].parametrizations.weight.original0[:4, 0])
optimizerD = optim.Adam(netD.parameters(), lr=1e-3, betas=(0.5, 0.9))
optimizerG = optim.Adam(netG.parameters(), lr=1e-3, betas=(0.5, 0.9))
train(netG, netD, optimizerD, optimizerG, 'wgan-gp', 'sn')
netD.eval()
with torch.no_grad():
    sigma = torch.linalg.matrix_norm(netD.main[2].weight, ord=2)
show("sn_sigma_near_one", float(abs(float(sigma) - 1) < 0.1))
show("sn_u", netD.main[2].parametrizations.weight[0]._u[:6])
show("sn_weight", netD.main[2].weight[0, :6])
show("wn_weight", netG.main[2].weight[0, :6])
show("sn_state_dict:" + ",".join(k for k in netD.state_dict() if k.startswith("main.0")),
     len(netD.state_dict()))
