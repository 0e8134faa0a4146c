"""numbagrad.distributions.VonMises against torch.distributions.VonMises: log_prob and its
gradients, mean, mode and circular variance, support and constraints, sample shapes and
dtypes, the methods it lacks, reprs and validation errors; samples by their statistics (the
trigonometric moments against the Bessel-function ratios, within a tolerance from their
sample variance)."""

import math

import numpy as np
import pytest

import numbagrad as ng
import numbagrad.distributions as ngd

torch = pytest.importorskip("torch")
td = torch.distributions

from test_distributions import _same_error  # noqa: E402 (the comparison of errors, shared)
from test_distributions_families2 import _check, _moments  # noqa: E402

RNG = np.random.default_rng(7)
LOC = RNG.uniform(-3.0, 3.0, size=(2, 3))
KAPPA = np.array([[1e-3, 0.5, 2.0], [10.0, 80.0, 700.0]])  # (large ones: I0 overflows)
X = RNG.uniform(-6.0, 6.0, size=(2, 3))


# PyTorch evaluates log I0 and I1/I0 by Abramowitz & Stegun's polynomial approximations
# (9.8.1-9.8.4: relative errors to about 1e-7), numbagrad by its i0e and i1e (to rounding)
TOL = 2e-6


def _make(T, D, m, k):
    return D.VonMises(m, k)


def test_log_prob_values_and_gradients():
    _check(lambda T, D, m, k: _make(T, D, m, k).log_prob(T.tensor(X)), LOC, KAPPA, tol=TOL)
    # broadcast against a batch of values
    _check(lambda T, D, m, k: _make(T, D, m, k).log_prob(T.tensor(np.stack([X, -X]))),
           LOC, KAPPA, tol=TOL)


def test_moments_and_their_gradients():
    _check(_moments(lambda T, D, m, k: _make(T, D, m, k), "mean", "mode", "variance"),
           LOC, KAPPA, tol=TOL)
    _check(lambda T, D, m, k: _make(T, D, m, k).variance, LOC, KAPPA, tol=TOL)


@pytest.mark.parametrize("method", ["entropy", "rsample", "cdf", "icdf"])
def test_what_pytorch_leaves_undefined(method):
    for lib, D in ((ng, ngd), (torch, td)):
        d = D.VonMises(lib.tensor([0.0]), lib.tensor([1.0]))
        args = () if method in ("entropy", "rsample") else (lib.tensor([0.5]),)
        with pytest.raises(NotImplementedError):
            getattr(d, method)(*args)


@pytest.mark.parametrize("make", [
    lambda T, D: D.VonMises(T.tensor([0.0, 1.0]), T.tensor([0.5, 3.0])),
    lambda T, D: D.VonMises(0.0, 1.0),
    lambda T, D: D.VonMises(T.tensor([0.0, 1.0]), 2.0),
    lambda T, D: D.VonMises(T.zeros(2, 1), T.ones(3)),
    lambda T, D: D.VonMises(T.tensor([0.0], dtype=T.float64), 2.0),
], ids=lambda f: "")
def test_shapes_reprs_supports_flags(make):
    a, b = make(ng, ngd), make(torch, td)
    assert repr(a).replace("numbagrad", "torch") == repr(b)
    assert a.batch_shape == b.batch_shape and a.event_shape == b.event_shape
    assert repr(a.support) == repr(b.support)
    assert repr(a.arg_constraints) == repr(b.arg_constraints)
    assert (a.has_rsample, a.has_enumerate_support) == (b.has_rsample, b.has_enumerate_support)
    for shape in ((), (3,), (4, 2)):
        sa, sb = a.sample(shape), b.sample(shape)
        assert tuple(sa.shape) == tuple(sb.shape)
        assert sa.dtype.name == str(sb.dtype).split(".")[1]
        assert not sa.requires_grad
        assert bool(((sa >= -math.pi) & (sa <= math.pi)).all())
    e, f = a.expand((4,) + tuple(a.batch_shape)), b.expand((4,) + tuple(b.batch_shape))
    assert type(e) is type(a) and e.batch_shape == f.batch_shape
    assert repr(e).replace("numbagrad", "torch") == repr(f)
    value = f.sample()
    np.testing.assert_allclose(e.log_prob(ng.tensor(value.numpy())).numpy(),
                               f.log_prob(value).numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", [
    lambda T, D: D.VonMises(0.0, -1.0),
    lambda T, D: D.VonMises(0.0, 0.0),
    lambda T, D: D.VonMises(math.nan, 1.0),
    lambda T, D: D.VonMises(T.tensor([0.0, 1.0]), T.tensor([1.0, -2.0])),
    lambda T, D: D.VonMises(T.zeros(2), T.ones(3)),
    lambda T, D: D.VonMises(T.zeros(3), T.ones(3)).log_prob(T.zeros(2)),
    lambda T, D: D.VonMises(0.0, 1.0).log_prob(0.5),
    lambda T, D: D.VonMises(0.0, 1.0).log_prob(T.tensor(math.nan)),
], ids=lambda f: "")
def test_validation_errors(case):
    _same_error(case)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sample_statistics(dtype):
    """E[cos(X - loc)] = I1(k)/I0(k) (one minus the circular variance), E[sin(X - loc)] = 0
    and E[cos 2(X - loc)] = I2(k)/I0(k) = 1 - 2 I1(k) / (k I0(k)), each within five standard
    errors of the sample mean."""
    ng.manual_seed(0)
    loc = np.array([0.0, 2.0, -3.0, 1.0, 3.1])
    k = np.array([1e-6, 0.7, 3.0, 50.0, 0.2])
    d = ngd.VonMises(ng.tensor(loc, dtype=getattr(ng, dtype)), ng.tensor(k))
    n = 100_000
    s = d.sample((n,)).numpy().astype(np.float64)
    assert s.shape == (n, 5) and s.min() >= -math.pi and s.max() <= math.pi
    t = torch.tensor(k, dtype=torch.float64)
    ratio1 = (torch.special.i1e(t) / torch.special.i0e(t)).numpy()
    ratio2 = 1 - 2 * ratio1 / k
    want = 1 - td.VonMises(torch.tensor(loc), t).variance.numpy()
    np.testing.assert_allclose(ratio1, want, rtol=TOL)
    for stat, expected in ((np.cos(s - loc), ratio1), (np.sin(s - loc), 0 * k),
                           (np.cos(2 * (s - loc)), ratio2)):
        stderr = np.sqrt(stat.var(0) / n)
        assert (np.abs(stat.mean(0) - expected) < 5 * stderr + 1e-9).all(), (stat.mean(0),
                                                                              expected)


def test_samples_follow_the_seed():
    ng.manual_seed(3)
    a = ngd.VonMises(ng.zeros(4), ng.ones(4)).sample((5,))
    ng.manual_seed(3)
    b = ngd.VonMises(ng.zeros(4), ng.ones(4)).sample((5,))
    assert a.tolist() == b.tolist()


def test_log_prob_integrates_to_one():
    # the density over one period, by the trapezoid rule on a fine periodic grid
    x = np.linspace(-math.pi, math.pi, 4001)[:-1]
    d = ngd.VonMises(ng.tensor([[0.3], [-2.0], [1.0]], dtype=ng.float64),
                     ng.tensor([[0.1], [4.0], [300.0]], dtype=ng.float64))
    total = d.log_prob(ng.tensor(x)).exp().numpy().sum(1) * (2 * math.pi / len(x))
    np.testing.assert_allclose(total, 1.0, rtol=1e-10)
