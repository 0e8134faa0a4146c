"""A Gaussian mixture model fitted by expectation-maximisation in torch, as blog posts and course
notebooks write it: the E-step's log-responsibilities ``torch.log(pi[k]) +
MultivariateNormal(mu[k], Sigma[k]).log_prob(X)`` stacked over components and normalised by
``torch.logsumexp``, the M-step's ``Nk = resp.sum(0)``, ``resp.T @ X / Nk[:, None]`` and
covariances by ``torch.einsum('nk,nkd,nke->kde', ...)`` plus a ridge ``1e-6 * torch.eye``; the
log-likelihood rising monotonically; the same log-densities written by hand with
``torch.linalg.cholesky``, ``torch.linalg.solve_triangular`` and the log-determinant from the
Cholesky diagonal; a diagonal-covariance EM in a batched form with ``unsqueeze`` broadcasting;
hard assignments by ``argmax`` compared with the true labels through a permutation; BIC; and
the same mixture fitted by gradient ascent instead, ``MixtureSameFamily(Categorical(logits=...),
Independent(Normal(loc, scale), 1))`` with unconstrained ``nn.Parameter``s and Adam.

    python gmm_em.py [torch|numbagrad]
"""
import itertools
import math

import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    from torch.distributions import Categorical, Independent, MixtureSameFamily, MultivariateNormal, Normal
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    from numbagrad.distributions import Categorical, Independent, MixtureSameFamily, MultivariateNormal, Normal

rng = np.random.default_rng(7)
torch.set_default_dtype(torch.float64)

# ---- data: three 2-d Gaussians
true_means = np.array([[0.0, 0.0], [4.0, 4.0], [-3.0, 5.0]])
true_covs = np.array([[[1.0, 0.6], [0.6, 1.0]], [[0.5, 0.0], [0.0, 2.0]], [[1.5, -0.7], [-0.7, 0.8]]])
counts = [120, 80, 100]
X_np = np.concatenate([rng.multivariate_normal(m, c, n) for m, c, n in zip(true_means, true_covs, counts)])
labels = np.concatenate([[k] * n for k, n in enumerate(counts)])
X = torch.from_numpy(X_np)
N, D = X.shape
K = 3
show("data_mean", X.mean(0))


def e_step(X, pi, mu, Sigma):
    log_resp = torch.stack([torch.log(pi[k]) + MultivariateNormal(mu[k], Sigma[k]).log_prob(X)
                            for k in range(K)], dim=1)  # (N, K)
    log_norm = torch.logsumexp(log_resp, dim=1, keepdim=True)  # (N, 1)
    resp = torch.exp(log_resp - log_norm)
    return resp, log_norm.sum()


def m_step(X, resp):
    Nk = resp.sum(0)  # (K,)
    pi = Nk / X.shape[0]
    mu = resp.T @ X / Nk[:, None]  # (K, D)
    diff = X[:, None, :] - mu[None, :, :]  # (N, K, D)
    Sigma = torch.einsum('nk,nkd,nke->kde', resp, diff, diff) / Nk[:, None, None]
    Sigma = Sigma + 1e-6 * torch.eye(X.shape[1])
    return pi, mu, Sigma


# initialisation: three data points chosen by NumPy, identity covariances, uniform weights
init_idx = rng.choice(N, K, replace=False)
mu = X[torch.from_numpy(init_idx)].clone()
Sigma = torch.eye(D).repeat(K, 1, 1)
pi = torch.full((K,), 1.0 / K)
show("init_mu", mu)
show("Sigma_shape", list(Sigma.shape))

log_likelihoods = []
for it in range(30):
    resp, ll = e_step(X, pi, mu, Sigma)
    log_likelihoods.append(ll.item())
    pi, mu, Sigma = m_step(X, resp)
show("em_last_change", float(abs(log_likelihoods[-1] - log_likelihoods[-2]) < 1e-6))
show("em_log_likelihood", log_likelihoods[::3] + log_likelihoods[-1:])
show("em_monotone", float(all(b >= a - 1e-9 for a, b in zip(log_likelihoods, log_likelihoods[1:]))))
order = torch.argsort(mu[:, 0])
show("em_pi_sorted", pi[order])
show("em_mu_sorted", mu[order])
show("em_Sigma_sorted", Sigma[order])
show("resp_rows_sum_to_one", float(torch.allclose(resp.sum(1), torch.ones(N))))


# ---- the same log-density by hand
def log_gaussian_chol(X, mu, Sigma):
    L = torch.linalg.cholesky(Sigma)  # (D, D)
    diff = (X - mu).T  # (D, N)
    sol = torch.linalg.solve_triangular(L, diff, upper=False)  # L^{-1} (x - mu)
    maha = (sol ** 2).sum(0)
    log_det = 2 * torch.log(torch.diagonal(L)).sum()
    return -0.5 * (D * math.log(2 * math.pi) + log_det + maha)


by_hand = torch.stack([log_gaussian_chol(X, mu[k], Sigma[k]) for k in range(K)], dim=1)
by_dist = torch.stack([MultivariateNormal(mu[k], Sigma[k]).log_prob(X) for k in range(K)], dim=1)
show("log_density_by_hand_matches", float(torch.allclose(by_hand, by_dist)))
show("log_density_first_rows", by_hand[:2])
show("mvn_scale_tril_matches_cholesky",
     float(torch.allclose(MultivariateNormal(mu[0], Sigma[0]).scale_tril, torch.linalg.cholesky(Sigma[0]))))

# hard assignments against the true labels, up to a permutation
pred = resp.argmax(1)
best = 0
for perm in itertools.permutations(range(K)):
    acc = (torch.tensor(perm)[pred] == torch.from_numpy(labels)).double().mean().item()
    best = max(best, acc)
show("assignment_accuracy", best)
show("cluster_sizes", torch.bincount(pred, minlength=K).sort().values)

# BIC = -2 log L + p log N
p = K * D + K * D * (D + 1) / 2 + K - 1
bic = -2 * log_likelihoods[-1] + p * math.log(N)
show("bic", bic)

# ---- diagonal covariances, all components at once
mu_d = X[torch.from_numpy(init_idx)].clone()
var_d = torch.ones(K, D)
pi_d = torch.full((K,), 1.0 / K)
diag_ll = []
for it in range(25):
    # E-step
    diff = X.unsqueeze(1) - mu_d.unsqueeze(0)  # (N, K, D)
    log_p = -0.5 * (torch.log(2 * math.pi * var_d).unsqueeze(0) + diff ** 2 / var_d.unsqueeze(0)).sum(-1)
    log_r = torch.log(pi_d) + log_p
    ll = torch.logsumexp(log_r, dim=1)
    r = torch.exp(log_r - ll[:, None])
    diag_ll.append(ll.sum().item())
    # M-step
    Nk = r.sum(0)
    pi_d = Nk / N
    mu_d = (r.unsqueeze(-1) * X.unsqueeze(1)).sum(0) / Nk.unsqueeze(-1)
    var_d = (r.unsqueeze(-1) * (X.unsqueeze(1) - mu_d.unsqueeze(0)) ** 2).sum(0) / Nk.unsqueeze(-1) + 1e-6
show("diag_em_log_likelihood", diag_ll[::4] + diag_ll[-1:])
show("diag_em_var_sorted", var_d[torch.argsort(mu_d[:, 0])])

# ---- gradient ascent on the same diagonal mixture with MixtureSameFamily
logits = nn.Parameter(torch.zeros(K))
loc = nn.Parameter(X[torch.from_numpy(init_idx)].clone())
log_scale = nn.Parameter(torch.zeros(K, D))
optimizer = torch.optim.Adam([logits, loc, log_scale], lr=0.05)
nlls = []
for step in range(150):
    mix = Categorical(logits=logits)
    comp = Independent(Normal(loc, log_scale.exp()), 1)
    gmm = MixtureSameFamily(mix, comp)
    nll = -gmm.log_prob(X).mean()
    optimizer.zero_grad()
    nll.backward()
    optimizer.step()
    nlls.append(nll.item())
show("sgd_mixture_nll", nlls[::15] + nlls[-1:])
show("sgd_mixture_weights_sorted", torch.softmax(logits, 0).detach()[torch.argsort(loc[:, 0].detach())])
show("sgd_vs_em_nll_gap", nlls[-1] - (-diag_ll[-1] / N))
show("mixture_mean", gmm.mean)
