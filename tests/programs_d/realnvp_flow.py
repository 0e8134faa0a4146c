"""A RealNVP normalizing flow on 2-D two-moons data, as in the PyTorch flow notebooks: affine
coupling layers holding their binary mask as a registered buffer, a scale net (nn.Sequential
of Linear/LeakyReLU ending in nn.Tanh) and a translate net; the data-to-latent direction
``z = (1 - mask) * (x - t) * torch.exp(-s) + mask * x`` accumulating the log-det-Jacobian
``-s.sum(dim=1)`` from ``x.new_zeros``, and the inverse ``x * torch.exp(s) + t``; a
torch.distributions.MultivariateNormal(torch.zeros(2), torch.eye(2)) prior, the loss
``-(prior.log_prob(z) + logp).mean()`` minimised by Adam over the parameters that require
grad. The moons come from NumPy (make_moons' formula); prior.sample is replaced by NumPy
normal draws pushed through the inverse.

    python realnvp_flow.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    from torch import distributions
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    from numbagrad import distributions

data_rng = np.random.default_rng(2)


def make_moons(n_samples, noise):
    # sklearn.datasets.make_moons, with NumPy noise
    n_out = n_samples // 2
    n_in = n_samples - n_out
    outer_x = np.cos(np.linspace(0, np.pi, n_out))
    outer_y = np.sin(np.linspace(0, np.pi, n_out))
    inner_x = 1 - np.cos(np.linspace(0, np.pi, n_in))
    inner_y = 1 - np.sin(np.linspace(0, np.pi, n_in)) - .5
    X = np.vstack([np.append(outer_x, inner_x), np.append(outer_y, inner_y)]).T
    X += data_rng.normal(scale=noise, size=X.shape)
    return X


class CouplingLayer(nn.Module):
    def __init__(self, mask, hidden):
        super().__init__()
        self.register_buffer('mask', mask)
        self.s = nn.Sequential(nn.Linear(2, hidden), nn.LeakyReLU(), nn.Linear(hidden, hidden),
                               nn.LeakyReLU(), nn.Linear(hidden, 2), nn.Tanh())
        self.t = nn.Sequential(nn.Linear(2, hidden), nn.LeakyReLU(), nn.Linear(hidden, hidden),
                               nn.LeakyReLU(), nn.Linear(hidden, 2))

    def forward(self, x):
        # data -> latent: returns z and log|det dz/dx|
        x_ = self.mask * x
        s = self.s(x_) * (1 - self.mask)
        t = self.t(x_) * (1 - self.mask)
        z = (1 - self.mask) * (x - t) * torch.exp(-s) + x_
        return z, -s.sum(dim=1)

    def inverse(self, z):
        z_ = self.mask * z
        s = self.s(z_) * (1 - self.mask)
        t = self.t(z_) * (1 - self.mask)
        return z_ + (1 - self.mask) * (z * torch.exp(s) + t)


class RealNVP(nn.Module):
    def __init__(self, masks, hidden, prior):
        super().__init__()
        self.prior = prior
        self.layers = nn.ModuleList([CouplingLayer(m, hidden) for m in masks])

    def f(self, x):
        log_det_J, z = x.new_zeros(x.shape[0]), x
        for layer in reversed(self.layers):
            z, ld = layer(z)
            log_det_J += ld
        return z, log_det_J

    def g(self, z):
        x = z
        for layer in self.layers:
            x = layer.inverse(x)
        return x

    def log_prob(self, x):
        z, logp = self.f(x)
        return self.prior.log_prob(z) + logp


masks = torch.from_numpy(np.array([[0, 1], [1, 0]] * 3).astype(np.float32))
prior = distributions.MultivariateNormal(torch.zeros(2), torch.eye(2))
flow = RealNVP(masks, 32, prior)
numpy_init(torch, flow)

show('buffers', [len(list(flow.buffers())), len(list(flow.parameters())),
                 len(flow.state_dict()), flow.layers[1].mask])
show('prior', [prior.log_prob(torch.tensor([[0.0, 0.0], [1.0, -2.0]])), prior.mean,
               prior.covariance_matrix])

optimizer = torch.optim.Adam([p for p in flow.parameters() if p.requires_grad == True], lr=3e-3)  # noqa: E712
losses = []
for t in range(15):
    noisy_moons = make_moons(n_samples=64, noise=.05).astype(np.float32)
    loss = -flow.log_prob(torch.from_numpy(noisy_moons)).mean()

    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())

show('losses', losses)
show('scale_last_bias', flow.layers[0].s[4].bias)
show('translate_weight', flow.layers[2].t[0].weight[:4, 0])
show('grad', flow.layers[5].s[2].weight.grad[0, :6])

x = torch.from_numpy(make_moons(n_samples=8, noise=.05).astype(np.float32))
with torch.no_grad():
    z, logdet = flow.f(x)
    x_back = flow.g(z)
    logp = flow.log_prob(x)
show('z', z[:4])
show('logdet', logdet)
show('log_prob', logp)
show('round_trip', (x_back - x).abs().max() < 1e-4)

# sampling: z from the standard normal (NumPy), pushed through the inverse
z = torch.from_numpy(data_rng.standard_normal((6, 2)).astype(np.float32))
with torch.no_grad():
    samples = flow.g(z)
show('samples', samples)
