"""Gaussian-process regression written out in plain PyTorch: an RBF kernel from
``torch.cdist(x1, x2).pow(2)`` and ``exp(-0.5 * d / lengthscale**2)`` with log-parameterised
lengthscale, signal variance and noise as nn.Parameters, ``K + noise * torch.eye(n)``, its
torch.linalg.cholesky factor, ``alpha = torch.cholesky_solve(y, L)``, the negative log marginal
likelihood ``0.5 * y^T alpha + torch.log(torch.diagonal(L)).sum() + n/2 log(2 pi)``, Adam on the
hyper-parameters, and the posterior at test points: mean ``Ks^T alpha``, variance
``diag(Kss) - sum(v * v)`` with ``v = torch.linalg.solve_triangular(L, Ks, upper=False)``.
Double precision, noisy sin data drawn by NumPy.

    python gp_regression.py [torch|numbagrad]
"""
import math

import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
else:
    import numbagrad as torch
    import numbagrad.nn as nn

rng = np.random.default_rng(8)
n = 20
X_np = np.sort(rng.uniform(-3, 3, size=(n, 1)), axis=0)
y_np = np.sin(X_np) + 0.1 * rng.standard_normal((n, 1))
X = torch.from_numpy(X_np)
y = torch.from_numpy(y_np)
Xs = torch.linspace(-4, 4, 9, dtype=torch.float64).unsqueeze(-1)


class ExactGP(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_lengthscale = nn.Parameter(torch.tensor(0.3, dtype=torch.float64))
        self.log_variance = nn.Parameter(torch.tensor(0.0, dtype=torch.float64))
        self.log_noise = nn.Parameter(torch.tensor(-1.5, dtype=torch.float64))

    def kernel(self, x1, x2):
        lengthscale = self.log_lengthscale.exp()
        d = torch.cdist(x1, x2).pow(2)
        return self.log_variance.exp() * torch.exp(-0.5 * d / lengthscale ** 2)

    def neg_log_marginal_likelihood(self, X, y):
        n = X.shape[0]
        K = self.kernel(X, X) + self.log_noise.exp() * torch.eye(n, dtype=X.dtype)
        L = torch.linalg.cholesky(K)
        alpha = torch.cholesky_solve(y, L)
        data_fit = 0.5 * (y.T @ alpha).squeeze()
        complexity = torch.log(torch.diagonal(L)).sum()
        return data_fit + complexity + 0.5 * n * math.log(2 * math.pi)

    def predict(self, X, y, Xs):
        n = X.shape[0]
        K = self.kernel(X, X) + self.log_noise.exp() * torch.eye(n, dtype=X.dtype)
        L = torch.linalg.cholesky(K)
        alpha = torch.cholesky_solve(y, L)
        Ks = self.kernel(X, Xs)
        mean = Ks.T @ alpha
        v = torch.linalg.solve_triangular(L, Ks, upper=False)
        var = torch.diagonal(self.kernel(Xs, Xs)) - (v * v).sum(dim=0)
        return mean.squeeze(-1), var


gp = ExactGP()
optimizer = torch.optim.Adam(gp.parameters(), lr=0.1)

with torch.no_grad():
    mean0, var0 = gp.predict(X, y, Xs)
show('prior_fit_mean', mean0)

losses, hypers = [], []
for step in range(12):
    optimizer.zero_grad()
    loss = gp.neg_log_marginal_likelihood(X, y)
    loss.backward()
    if step == 0:
        show('first_grads', [p.grad for p in gp.parameters()])
    optimizer.step()
    losses.append(loss.item())
    hypers.append([p.item() for p in gp.parameters()])

show('losses', losses)
show('hypers', hypers[-1])
show('hyper_path', [h[0] for h in hypers])
show('lengthscale_variance_noise',
     [gp.log_lengthscale.exp(), gp.log_variance.exp(), gp.log_noise.exp()])

K = gp.kernel(X, X)
show('kernel', [K[0, :4], K.diagonal()[:3], list(K.shape), K.dtype == torch.float64])

gp.eval()
with torch.no_grad():
    mean, var = gp.predict(X, y, Xs)
show('pred_mean', mean)
show('pred_var', var)
show('pred_std', var.clamp_min(0).sqrt())
show('truth', torch.sin(Xs).squeeze(-1))

# the gradient of the predictive mean at one test point with respect to the hyper-parameters
mean_pt, var_pt = gp.predict(X, y, Xs[4:5])
(mean_pt.sum() + var_pt.sum()).backward()
show('pred_grads', [p.grad for p in gp.parameters()])
