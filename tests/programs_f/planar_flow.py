"""Normalizing flows as the blog-post reimplementations of Rezende & Mohamed (2015) write them:
planar flows ``f(z) = z + u_hat * tanh(w^T z + b)`` with the invertibility fix ``u_hat = u +
(m(w^T u) - w^T u) w / ||w||^2``, ``m(x) = -1 + softplus(x)``, ``psi = h'(w^T z + b) w`` and
``log|1 + u_hat^T psi|``; radial flows with ``beta_hat = -alpha + softplus(beta)``; a
``NormalizingFlow`` ``nn.Module`` chaining an ``nn.ModuleList`` and summing log-determinants; the
paper's target energies U1 (ring with two modes, ``torch.logsumexp`` form) and U2 (a sine
band); the reverse-KL free energy ``E[log q0(z0) - sum log det - beta * (-U(zK))]`` with the
paper's annealing ``beta = min(1, 0.01 + t / T)``, base samples drawn by NumPy and their
``Normal(0, 1).log_prob(...).sum(-1)``, Adam with ``clip_grad_norm_``; log-determinants checked
against ``torch.autograd.functional.jacobian`` and ``torch.linalg.slogdet`` per sample, and the
flow density evaluated on a grid by importance weights.

    python planar_flow.py [torch|numbagrad]
"""
import math

import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.distributions import Normal
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F
    from numbagrad.distributions import Normal

rng = np.random.default_rng(15)
# (in float64: the annealed fits pass through steps whose gradient norms reach the thousands, which
# would magnify float32 rounding differences between any two libraries)
torch.set_default_dtype(torch.float64)


def param(*shape, scale=0.1):
    return nn.Parameter(torch.from_numpy(scale * rng.normal(size=shape)))


class PlanarFlow(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.u = param(1, dim)
        self.w = param(1, dim)
        self.b = param(1)

    def u_hat(self):
        # enforce w^T u >= -1 so that the transformation is invertible
        wtu = (self.w @ self.u.t()).squeeze()
        m_wtu = -1 + F.softplus(wtu)
        return self.u + (m_wtu - wtu) * self.w / (self.w.norm() ** 2)

    def forward(self, z):
        u_hat = self.u_hat()
        lin = z @ self.w.t() + self.b  # (N, 1)
        f_z = z + u_hat * torch.tanh(lin)
        psi = (1 - torch.tanh(lin) ** 2) * self.w  # (N, dim)
        det = 1 + psi @ u_hat.t()  # (N, 1)
        log_det = torch.log(torch.abs(det) + 1e-9).squeeze(-1)
        return f_z, log_det


class RadialFlow(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.z0 = param(1, dim)
        self.alpha_raw = param(1)
        self.beta = param(1)
        self.dim = dim

    def forward(self, z):
        alpha = F.softplus(self.alpha_raw)
        beta_hat = -alpha + F.softplus(self.beta)
        diff = z - self.z0
        r = diff.norm(dim=-1, keepdim=True)
        h = 1 / (alpha + r)
        h_prime = -h ** 2
        f_z = z + beta_hat * h * diff
        log_det = (self.dim - 1) * torch.log1p(beta_hat * h) + torch.log1p(beta_hat * h + beta_hat * h_prime * r)
        return f_z, log_det.squeeze(-1)


class NormalizingFlow(nn.Module):
    def __init__(self, flows):
        super().__init__()
        self.flows = nn.ModuleList(flows)

    def forward(self, z):
        sum_log_det = torch.zeros(z.shape[0])
        for flow in self.flows:
            z, log_det = flow(z)
            sum_log_det = sum_log_det + log_det
        return z, sum_log_det


def w1(z):
    return torch.sin(2 * math.pi * z[:, 0] / 4)


def U1(z):
    ring = 0.5 * ((z.norm(dim=1) - 2) / 0.4) ** 2
    modes = torch.stack([-0.5 * ((z[:, 0] - 2) / 0.6) ** 2, -0.5 * ((z[:, 0] + 2) / 0.6) ** 2], dim=1)
    return ring - torch.logsumexp(modes, dim=1)


def U2(z):
    return 0.5 * ((z[:, 1] - w1(z)) / 0.4) ** 2


base = Normal(torch.tensor(0.0), torch.tensor(1.0))

# ---- log-determinants against autograd Jacobians
flow = NormalizingFlow([PlanarFlow(2), RadialFlow(2), PlanarFlow(2)])
z = torch.from_numpy(rng.normal(size=(5, 2)))
zk, log_det = flow(z)
show("flow_out", zk)
show("flow_log_det", log_det)
jac_log_dets = []
for i in range(5):
    J = torch.autograd.functional.jacobian(lambda x: flow(x[None])[0][0], z[i])
    sign, logabsdet = torch.linalg.slogdet(J)
    jac_log_dets.append(logabsdet.item())
show("jacobian_log_det", jac_log_dets)
show("log_det_matches_jacobian", float(np.allclose(log_det.detach().numpy(), jac_log_dets, atol=1e-4)))
u_hats = [f.u_hat() for f in flow.flows if isinstance(f, PlanarFlow)]
show("invertibility_wtu_hat", [(f.w @ f.u_hat().t()).item() for f in flow.flows if isinstance(f, PlanarFlow)])

# ---- fitting U1 and U2 by the annealed reverse KL
for name, U in [("U1", U1), ("U2", U2)]:
    flow = NormalizingFlow([PlanarFlow(2) for _ in range(8)])
    optimizer = torch.optim.Adam(flow.parameters(), lr=1e-2)
    n_iters = 150
    losses = []
    for t in range(1, n_iters + 1):
        z0 = torch.from_numpy(rng.normal(size=(128, 2)))
        log_q0 = base.log_prob(z0).sum(-1)
        zk, sum_log_det = flow(z0)
        beta = min(1.0, 0.01 + t / 100)
        log_qk = log_q0 - sum_log_det
        loss = (log_qk + beta * U(zk)).mean()
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(flow.parameters(), max_norm=10.0)
        optimizer.step()
        losses.append(loss.item())
    show(f"{name}_losses", losses[::15] + losses[-1:])
    with torch.no_grad():
        z0 = torch.from_numpy(rng.normal(size=(1000, 2)))
        zk, sum_log_det = flow(z0)
        energy = U(zk).mean()
        # the flow's samples: their spread and the mean energy under the target
    show(f"{name}_sample_mean", zk.mean(0))
    show(f"{name}_sample_std", zk.std(0))
    show(f"{name}_mean_energy", energy)
    # importance estimate of log Z = log E_q[exp(-U(z)) / q(z)]
    with torch.no_grad():
        log_q = base.log_prob(z0).sum(-1) - sum_log_det
        log_w = -U(zk) - log_q
        log_Z = torch.logsumexp(log_w, 0) - math.log(len(log_w))
    show(f"{name}_log_Z_estimate", log_Z)
    show(f"{name}_param_count", sum(p.numel() for p in flow.parameters()))
