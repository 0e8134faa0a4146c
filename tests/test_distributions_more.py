"""MultivariateNormal, Independent, Exponential, Laplace, LogNormal, Gamma, Beta, Dirichlet and
Poisson against torch.distributions: values and gradients of log_prob, entropy and moments on
the same inputs; samples by shape and loose statistics; reprs and validation errors."""

import numpy as np
import pytest

import numbagrad as ng
import numbagrad.distributions as ngd

torch = pytest.importorskip("torch")
td = torch.distributions

from test_distributions import _same_error  # noqa: E402 (the comparison of errors, shared)

RNG = np.random.default_rng(1)
LOC3 = RNG.normal(size=(2, 3))
_B = RNG.normal(size=(3, 3))
COV = _B @ _B.T + 0.5 * np.eye(3)
COVS = np.stack([COV, COV * 0.7 + 0.3 * np.eye(3)])  # (2, 3, 3): one per batch element
X3 = RNG.normal(size=(4, 2, 3))
POS = RNG.uniform(0.5, 3.0, size=(2, 3))
POS2 = RNG.uniform(0.5, 3.0, size=(2, 3))
SIMPLEX = RNG.dirichlet(np.ones(3), size=2)
GAMMA_TOL = 1e-8  # numbagrad's digamma (lgamma's derivative) agrees with PyTorch's to ~1e-9


def _check(fn, *arrays, tol=1e-10):
    """fn(library, distributions, *params) gives a tensor: its value and the grads of its
    sum with respect to every param agree."""
    ours = [ng.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    a, b = fn(ng, ngd, *ours), fn(torch, td, *theirs)
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)
    a.sum().backward()
    b.sum().backward()
    for x, y in zip(ours, theirs):
        if y.grad is None:
            assert x.grad is None
            continue
        np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=tol, atol=tol)


# ---------------------------------------------------------------- MultivariateNormal

def _mvn(D, T, kind, loc, m):
    if kind == "scale_tril":
        return D.MultivariateNormal(loc, scale_tril=T.linalg.cholesky(m))
    return D.MultivariateNormal(loc, **{kind: m})


@pytest.mark.parametrize("kind", ["covariance_matrix", "precision_matrix", "scale_tril"])
@pytest.mark.parametrize("cov", [COV, COVS], ids=["shared", "batched"])
def test_mvn_log_prob_entropy_moments(kind, cov):
    _check(lambda T, D, m, c: _mvn(D, T, kind, m, c).log_prob(T.tensor(X3)), LOC3, cov)
    _check(lambda T, D, m, c: _mvn(D, T, kind, m, c).entropy(), LOC3, cov)
    _check(lambda T, D, m, c: _mvn(D, T, kind, m, c).variance + _mvn(D, T, kind, m, c).mean
           + _mvn(D, T, kind, m, c).mode, LOC3, cov)
    for prop in ("covariance_matrix", "precision_matrix", "scale_tril"):
        _check(lambda T, D, m, c: getattr(_mvn(D, T, kind, m, c), prop), LOC3, cov)


def test_mvn_shapes_broadcasting_and_repr():
    a = ngd.MultivariateNormal(ng.tensor(LOC3[0]), ng.tensor(COVS))
    b = td.MultivariateNormal(torch.tensor(LOC3[0]), torch.tensor(COVS))
    assert a.batch_shape == b.batch_shape == (2,) and a.event_shape == b.event_shape == (3,)
    assert tuple(a.sample((5,)).shape) == (5, 2, 3)
    assert repr(a).replace("numbagrad", "torch") == repr(b)
    assert repr(a.support) == repr(b.support)
    assert repr(ngd.MultivariateNormal.arg_constraints) == repr(b.arg_constraints)
    e = a.expand((4, 2))
    assert e.batch_shape == (4, 2) and tuple(e.log_prob(ng.tensor(X3[0])).shape) == (4, 2)


def test_mvn_rsample_gradient_with_fixed_eps():
    ng.manual_seed(0)
    loc = ng.tensor(LOC3, requires_grad=True)
    cov = ng.tensor(COV, requires_grad=True)
    z = ngd.MultivariateNormal(loc, cov).rsample((5,))
    assert tuple(z.shape) == (5, 2, 3)
    L = np.linalg.cholesky(COV)
    eps = np.linalg.solve(L, (z.detach().numpy() - LOC3)[..., None])[..., 0]
    # the same eps through PyTorch's loc + scale_tril @ eps
    tloc = torch.tensor(LOC3, requires_grad=True)
    tcov = torch.tensor(COV, requires_grad=True)
    tz = tloc + (torch.linalg.cholesky(tcov) @ torch.tensor(eps).unsqueeze(-1)).squeeze(-1)
    np.testing.assert_allclose(z.detach().numpy(), tz.detach().numpy(), rtol=1e-10)
    w = RNG.normal(size=(5, 2, 3))
    (z * ng.tensor(w)).sum().backward()
    (tz * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), tloc.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(cov.grad.numpy(), tcov.grad.numpy(), rtol=1e-8, atol=1e-10)


def test_mvn_sample_statistics():
    ng.manual_seed(1)
    s = ngd.MultivariateNormal(ng.tensor(LOC3[0]), ng.tensor(COV)).sample((40000,)).numpy()
    np.testing.assert_allclose(s.mean(0), LOC3[0], atol=0.05)
    np.testing.assert_allclose(np.cov(s.T), COV, atol=0.1)


def test_mvn_kl_divergence():
    _check(lambda T, D, m, c: D.kl_divergence(
        D.MultivariateNormal(m, c), D.MultivariateNormal(m[0] * 0.5, c[0] + T.eye(3))),
        LOC3, COVS)
    _check(lambda T, D, m, c: D.kl_divergence(
        D.MultivariateNormal(m[0], scale_tril=T.linalg.cholesky(c)),
        D.MultivariateNormal(m, precision_matrix=c)), LOC3, COV)
    with pytest.raises(ValueError, match="different event shapes"):
        ngd.kl_divergence(ngd.MultivariateNormal(ng.zeros(2), ng.eye(2)),
                          ngd.MultivariateNormal(ng.zeros(3), ng.eye(3)))


# ---------------------------------------------------------------- Independent

def test_independent():
    v = RNG.normal(size=(2, 3))
    make = lambda D, m, s: D.Independent(D.Normal(m, s), 1)  # noqa: E731
    _check(lambda T, D, m, s: make(D, m, s).log_prob(T.tensor(v)), LOC3, POS)
    _check(lambda T, D, m, s: make(D, m, s).entropy(), LOC3, POS)
    _check(lambda T, D, m, s: D.Independent(D.Normal(m, s), 2).entropy(), LOC3, POS)
    a = make(ngd, ng.tensor(LOC3), ng.tensor(POS))
    b = make(td, torch.tensor(LOC3), torch.tensor(POS))
    assert a.batch_shape == b.batch_shape and a.event_shape == b.event_shape
    assert repr(a).replace("numbagrad", "torch") == repr(b)
    assert repr(a.support) == repr(b.support) and a.has_rsample
    assert tuple(a.rsample((4,)).shape) == (4, 2, 3)
    e = a.expand((5, 2))
    assert e.batch_shape == (5, 2) and e.event_shape == (3,)
    assert tuple(e.log_prob(ng.tensor(v)).shape) == (5, 2)


# ---------------------------------------------------------------- Exponential, Laplace, LogNormal

def test_exponential():
    v = POS2
    _check(lambda T, D, r: D.Exponential(r).log_prob(T.tensor(v)), POS)
    _check(lambda T, D, r: D.Exponential(r).entropy(), POS)
    _check(lambda T, D, r: D.Exponential(r).cdf(T.tensor(v)), POS)
    _check(lambda T, D, r: D.Exponential(r).mean + D.Exponential(r).variance
           + D.Exponential(r).stddev + D.Exponential(r).mode, POS)
    ng.manual_seed(2)
    rate = ng.tensor([0.5, 4.0], requires_grad=True)
    s = ngd.Exponential(rate).rsample((20000,))
    np.testing.assert_allclose(s.detach().numpy().mean(0), [2.0, 0.25], rtol=0.04)
    s.sum().backward()  # d(E/rate)/d rate = -sample / rate
    np.testing.assert_allclose(rate.grad.numpy(),
                               -(s.detach().numpy() / rate.detach().numpy()).sum(0), rtol=1e-5)


def test_laplace():
    _check(lambda T, D, m, s: D.Laplace(m, s).log_prob(T.tensor(X3)), LOC3, POS)
    _check(lambda T, D, m, s: D.Laplace(m, s).entropy(), LOC3, POS)
    _check(lambda T, D, m, s: D.Laplace(m, s).cdf(T.tensor(X3)), LOC3, POS)
    _check(lambda T, D, m, s: D.Laplace(m, s).mean + D.Laplace(m, s).variance
           + D.Laplace(m, s).stddev, LOC3, POS)
    ng.manual_seed(3)
    s = ngd.Laplace(ng.tensor([1.0, -2.0]), ng.tensor([0.5, 2.0])).rsample((40000,)).numpy()
    np.testing.assert_allclose(s.mean(0), [1.0, -2.0], atol=0.05)
    np.testing.assert_allclose(s.var(0), [0.5, 8.0], rtol=0.05)


def test_log_normal():
    _check(lambda T, D, m, s: D.LogNormal(m, s).log_prob(T.tensor(POS2)), LOC3, POS)
    _check(lambda T, D, m, s: D.LogNormal(m, s).entropy(), LOC3, POS)
    _check(lambda T, D, m, s: D.LogNormal(m, s).mean + D.LogNormal(m, s).variance
           + D.LogNormal(m, s).mode, LOC3, POS)
    ng.manual_seed(4)
    loc = ng.tensor([0.0, 1.0], requires_grad=True)
    s = ngd.LogNormal(loc, ng.tensor([0.25, 0.5])).rsample((30000,))
    np.testing.assert_allclose(np.log(s.detach().numpy()).mean(0), [0.0, 1.0], atol=0.02)
    s.sum().backward()  # d exp(loc + scale * eps) / d loc = the sample
    np.testing.assert_allclose(loc.grad.numpy(), s.detach().numpy().sum(0), rtol=1e-5)


# ---------------------------------------------------------------- Gamma, Beta, Dirichlet, Poisson

def test_gamma():
    _check(lambda T, D, c, r: D.Gamma(c, r).log_prob(T.tensor(POS2)), POS, POS2)
    _check(lambda T, D, c, r: D.Gamma(c, r).entropy(), POS, POS2, tol=GAMMA_TOL)
    _check(lambda T, D, c, r: D.Gamma(c, r).mean + D.Gamma(c, r).variance
           + D.Gamma(c, r).mode, POS, POS2, tol=GAMMA_TOL)
    ng.manual_seed(5)
    s = ngd.Gamma(ng.tensor([0.5, 3.0]), ng.tensor([1.0, 2.0])).sample((40000,)).numpy()
    assert (s > 0).all()
    np.testing.assert_allclose(s.mean(0), [0.5, 1.5], rtol=0.03)
    np.testing.assert_allclose(s.var(0), [0.5, 0.75], rtol=0.06)


def test_beta():
    v = RNG.uniform(0.05, 0.95, size=(2, 3))
    _check(lambda T, D, a, b: D.Beta(a, b).log_prob(T.tensor(v)), POS, POS2)
    _check(lambda T, D, a, b: D.Beta(a, b).entropy(), POS, POS2, tol=GAMMA_TOL)
    _check(lambda T, D, a, b: D.Beta(a, b).mean + D.Beta(a, b).variance + D.Beta(a, b).mode
           + D.Beta(a, b).concentration1 * D.Beta(a, b).concentration0, POS + 1.0, POS2,
           tol=GAMMA_TOL)
    ng.manual_seed(6)
    s = ngd.Beta(ng.tensor([2.0, 0.5]), ng.tensor([3.0, 0.5])).sample((40000,)).numpy()
    assert ((s > 0) & (s <= 1)).all()  # float32 rounds values near 1 up to 1, as PyTorch
    np.testing.assert_allclose(s.mean(0), [0.4, 0.5], atol=0.01)
    assert repr(ngd.Beta(1.0, 2.0)) == repr(td.Beta(1.0, 2.0))
    assert ngd.Beta(1.0, 2.0).concentration1.dtype == ng.float32


def test_dirichlet():
    _check(lambda T, D, c: D.Dirichlet(c).log_prob(T.tensor(SIMPLEX)), POS)
    _check(lambda T, D, c: D.Dirichlet(c).entropy(), POS, tol=GAMMA_TOL)
    _check(lambda T, D, c: D.Dirichlet(c).mean + D.Dirichlet(c).variance, POS)
    conc = np.array([[0.5, 0.7, 0.2], [2.0, 3.0, 1.5]])  # all below 1: a vertex
    np.testing.assert_allclose(ngd.Dirichlet(ng.tensor(conc)).mode.numpy(),
                               td.Dirichlet(torch.tensor(conc)).mode.numpy(), rtol=1e-12)
    ng.manual_seed(7)
    d = ngd.Dirichlet(ng.tensor([1.0, 2.0, 3.0]))
    assert d.batch_shape == () and d.event_shape == (3,)
    s = d.sample((20000,)).numpy()
    np.testing.assert_allclose(s.sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(s.mean(0), [1 / 6, 2 / 6, 3 / 6], atol=0.01)


def test_poisson():
    k = np.array([[0.0, 1.0, 4.0], [2.0, 0.0, 7.0]])
    _check(lambda T, D, r: D.Poisson(r).log_prob(T.tensor(k)), POS, tol=GAMMA_TOL)
    _check(lambda T, D, r: D.Poisson(r).mean + D.Poisson(r).variance + D.Poisson(r).mode, POS)
    ng.manual_seed(8)
    s = ngd.Poisson(ng.tensor([0.5, 6.0])).sample((40000,))
    assert s.dtype == ng.float32 and tuple(s.shape) == (40000, 2)
    np.testing.assert_allclose(s.numpy().mean(0), [0.5, 6.0], rtol=0.03)
    a = ngd.Poisson(ng.tensor([0.0]), validate_args=False).log_prob(ng.tensor([0.0]))
    assert a.item() == 0.0  # xlogy: 0 * log(0) is 0


def test_shapes_reprs_supports_and_rsample_flags():
    cases = [
        lambda T, D: D.Exponential(T.tensor([1.0, 2.0])),
        lambda T, D: D.Exponential(2.0),
        lambda T, D: D.Laplace(0.0, 1.0),
        lambda T, D: D.LogNormal(0.0, 1.0),
        lambda T, D: D.Gamma(T.tensor([1.0, 2.0]), 1.0),
        lambda T, D: D.Beta(T.tensor([1.0, 2.0]), T.tensor(3.0)),
        lambda T, D: D.Dirichlet(T.tensor([[1.0, 2.0], [3.0, 4.0]])),
        lambda T, D: D.Poisson(T.tensor([1.0, 2.0])),
    ]
    for make in cases:
        a, b = make(ng, ngd), make(torch, td)
        assert repr(a).replace("numbagrad", "torch") == repr(b)
        assert repr(a.support) == repr(b.support)
        assert repr(a.arg_constraints) == repr(b.arg_constraints)
        assert a.batch_shape == b.batch_shape and a.event_shape == b.event_shape
        assert tuple(a.sample((3,)).shape) == tuple(b.sample((3,)).shape)
        assert a.sample().dtype.name == str(b.sample().dtype).split(".")[1]
        e = a.expand((4,) + tuple(a.batch_shape))
        assert e.batch_shape == b.expand((4,) + tuple(b.batch_shape)).batch_shape
    for cls in (ngd.Gamma, ngd.Beta, ngd.Dirichlet):  # see the report: no implicit gradient
        assert not cls.has_rsample
    with pytest.raises(NotImplementedError, match="no reparameterized sampler"):
        ngd.Gamma(1.0, 1.0).rsample()


# ---------------------------------------------------------------- validation

@pytest.mark.parametrize("case", [
    lambda T, D: D.MultivariateNormal(T.zeros(2)),
    lambda T, D: D.MultivariateNormal(T.zeros(2), T.eye(2), scale_tril=T.eye(2)),
    lambda T, D: D.MultivariateNormal(T.tensor(0.0), T.eye(2)),
    lambda T, D: D.MultivariateNormal(T.zeros(2), T.zeros(2)),
    lambda T, D: D.MultivariateNormal(T.zeros(2), precision_matrix=T.zeros(2)),
    lambda T, D: D.MultivariateNormal(T.zeros(2), scale_tril=T.zeros(2)),
    lambda T, D: D.MultivariateNormal(T.zeros(2), T.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda T, D: D.MultivariateNormal(T.zeros(2), T.tensor([[1.0, 0.5], [0.4, 1.0]])),
    lambda T, D: D.MultivariateNormal(T.zeros(2), precision_matrix=T.tensor([[1.0, 2.0],
                                                                              [2.0, 1.0]])),
    lambda T, D: D.MultivariateNormal(T.zeros(2), scale_tril=T.tensor([[1.0, 2.0],
                                                                        [2.0, 1.0]])),
    lambda T, D: D.MultivariateNormal(T.zeros(2), scale_tril=T.tensor([[-1.0, 0.0],
                                                                        [2.0, 1.0]])),
    lambda T, D: D.MultivariateNormal(T.zeros(2), T.eye(2)).log_prob(T.zeros(3)),
    lambda T, D: D.Independent(D.Normal(T.zeros(3, 2), 1.0), 3),
    lambda T, D: D.Independent(D.Normal(T.zeros(3, 2), 1.0), 1).log_prob(T.zeros(3)),
    lambda T, D: D.Exponential(T.tensor([1.0, -1.0])),
    lambda T, D: D.Exponential(1.0).log_prob(T.tensor(-1.0)),
    lambda T, D: D.Laplace(0.0, 0.0),
    lambda T, D: D.LogNormal(0.0, -1.0),
    lambda T, D: D.LogNormal(0.0, 1.0).log_prob(T.tensor(-1.0)),
    lambda T, D: D.Gamma(T.tensor([1.0, 0.0]), 1.0),
    lambda T, D: D.Gamma(1.0, -2.0),
    lambda T, D: D.Gamma(1.0, 1.0).log_prob(T.tensor(-1.0)),
    lambda T, D: D.Beta(-1.0, 1.0),
    lambda T, D: D.Beta(T.tensor([1.0, 2.0]), T.tensor([1.0, -2.0])),
    lambda T, D: D.Beta(1.0, 1.0).log_prob(T.tensor(1.5)),
    lambda T, D: D.Dirichlet(T.tensor(1.0)),
    lambda T, D: D.Dirichlet(T.tensor([1.0, -1.0])),
    lambda T, D: D.Dirichlet(T.tensor([1.0, 1.0])).log_prob(T.tensor([0.5, 0.6])),
    lambda T, D: D.Poisson(T.tensor([-1.0])),
    lambda T, D: D.Poisson(T.tensor([1.0])).log_prob(T.tensor([0.5])),
], ids=lambda f: "")
def test_validation_errors(case):
    _same_error(case)
