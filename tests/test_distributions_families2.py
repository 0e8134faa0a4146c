"""The families added to numbagrad.distributions after the first ones (Gumbel, Cauchy,
HalfNormal, HalfCauchy, StudentT, Chi2, Binomial, Geometric, NegativeBinomial,
Multinomial, RelaxedBernoulli, RelaxedOneHotCategorical, MixtureSameFamily,
LowRankMultivariateNormal, ContinuousBernoulli, Pareto, Weibull, Kumaraswamy,
InverseGamma, LogisticNormal, FisherSnedecor) and the KL divergences between families,
against torch.distributions: values and gradients of log_prob, cdf, icdf, entropy and
moments on the same inputs; samples by shape, support and loose statistics; reprs and
validation errors."""

import math
import warnings

import numpy as np
import pytest

import numbagrad as ng
import numbagrad.distributions as ngd

torch = pytest.importorskip("torch")
td = torch.distributions

from test_distributions import _same_error  # noqa: E402 (the comparison of errors, shared)

RNG = np.random.default_rng(5)
LOC = RNG.normal(size=(2, 3))
X = RNG.normal(size=(2, 3)) * 2
POS = RNG.uniform(0.5, 3.0, size=(2, 3))
POS2 = RNG.uniform(0.5, 3.0, size=(2, 3))
UNIT = RNG.uniform(0.05, 0.95, size=(2, 3))
LOGITS = RNG.normal(size=(2, 3))
COUNTS = np.array([[0.0, 1.0, 5.0], [2.0, 3.0, 4.0]])
GAMMA_TOL = 1e-8  # numbagrad's digamma (lgamma's derivative) agrees with PyTorch's to ~1e-9


def _check(fn, *arrays, tol=1e-10):
    """fn(library, distributions, *params) gives a tensor: its value and the grads of its
    sum with respect to every param agree (NaN and inf where PyTorch has them)."""
    ours = [ng.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    a, b = fn(ng, ngd, *ours), fn(torch, td, *theirs)
    assert tuple(a.shape) == tuple(b.shape)
    assert a.dtype.name == str(b.dtype).split(".")[1]
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)
    if not b.requires_grad:
        assert not a.requires_grad
        return
    a.sum().backward()
    b.sum().backward()
    for x, y in zip(ours, theirs):
        if y.grad is None:
            assert x.grad is None
            continue
        np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=tol, atol=tol)


def _moments(make, *names):
    """The sum of the named properties of make(T, D, *params)."""
    def fn(T, D, *params):
        return sum(getattr(make(T, D, *params), n) for n in names)
    return fn


# ---------------------------------------------------------------- continuous families

def test_gumbel():
    make = lambda T, D, m, s: D.Gumbel(m, s)  # noqa: E731
    _check(lambda T, D, m, s: make(T, D, m, s).log_prob(T.tensor(X)), LOC, POS)
    _check(lambda T, D, m, s: make(T, D, m, s).cdf(T.tensor(X)), LOC, POS)
    _check(lambda T, D, m, s: make(T, D, m, s).icdf(T.tensor(UNIT)), LOC, POS)
    _check(lambda T, D, m, s: make(T, D, m, s).entropy(), LOC, POS)
    _check(_moments(make, "mean", "mode", "variance", "stddev"), LOC, POS)
    ng.manual_seed(0)
    loc = ng.tensor([0.0, 3.0], requires_grad=True)
    s = ngd.Gumbel(loc, ng.tensor([1.0, 0.5])).rsample((40000,))
    np.testing.assert_allclose(s.detach().numpy().mean(0), [0.5772, 3.2886], atol=0.03)
    s.sum().backward()  # loc shifts every sample
    np.testing.assert_allclose(loc.grad.numpy(), [40000.0, 40000.0])


def test_cauchy():
    make = lambda T, D, m, s: D.Cauchy(m, s)  # noqa: E731
    _check(lambda T, D, m, s: make(T, D, m, s).log_prob(T.tensor(X)), LOC, POS)
    _check(lambda T, D, m, s: make(T, D, m, s).cdf(T.tensor(X)), LOC, POS)
    _check(lambda T, D, m, s: make(T, D, m, s).icdf(T.tensor(UNIT)), LOC, POS)
    _check(lambda T, D, m, s: make(T, D, m, s).entropy(), LOC, POS)
    a = ngd.Cauchy(ng.tensor(LOC), ng.tensor(POS))
    assert np.isnan(a.mean.numpy()).all() and np.isinf(a.variance.numpy()).all()
    np.testing.assert_array_equal(a.mode.numpy(), LOC)
    ng.manual_seed(1)
    s = ngd.Cauchy(ng.tensor([1.0, -2.0]), ng.tensor([0.5, 2.0])).rsample((40000,)).numpy()
    np.testing.assert_allclose(np.median(s, 0), [1.0, -2.0], atol=0.05)
    q = np.percentile(s, [25, 75], axis=0)  # the quartiles are loc -+ scale
    np.testing.assert_allclose(q[1] - q[0], [1.0, 4.0], rtol=0.05)


def test_half_normal_and_half_cauchy():
    for name in ("HalfNormal", "HalfCauchy"):
        make = lambda T, D, s: getattr(D, name)(s)  # noqa: E731
        _check(lambda T, D, s: make(T, D, s).log_prob(T.tensor(POS2)), POS)
        _check(lambda T, D, s: make(T, D, s).cdf(T.tensor(POS2)), POS)
        _check(lambda T, D, s: make(T, D, s).icdf(T.tensor(UNIT)), POS)
        _check(lambda T, D, s: make(T, D, s).entropy(), POS)
        _check(_moments(make, "mean", "mode", "variance"), POS)
        a = getattr(ngd, name)(ng.tensor(POS), validate_args=False)
        b = getattr(td, name)(torch.tensor(POS), validate_args=False)
        np.testing.assert_array_equal(a.log_prob(ng.tensor(-POS2)).numpy(),
                                      b.log_prob(torch.tensor(-POS2)).numpy())  # -inf
        assert isinstance(a, ngd.TransformedDistribution) and a.has_rsample
        ng.manual_seed(2)
        d = getattr(ngd, name)(ng.tensor([1.0, 2.0]))
        s = d.rsample((40000,)).numpy()
        assert (s >= 0).all()
        np.testing.assert_allclose(np.median(s, 0), d.icdf(ng.tensor(0.5)).numpy(), rtol=0.03)


def test_student_t():
    make = lambda T, D, df, m, s: D.StudentT(df, m, s)  # noqa: E731
    _check(lambda T, D, df, m, s: make(T, D, df, m, s).log_prob(T.tensor(X)), POS, LOC, POS2)
    _check(lambda T, D, df, m, s: make(T, D, df, m, s).entropy(), POS, LOC, POS2,
           tol=GAMMA_TOL)
    df = np.array([[0.5, 1.5, 2.5], [1.0, 2.0, 4.0]])  # no mean, infinite variance, finite
    _check(_moments(make, "mean", "mode", "variance"), df, LOC, POS2)
    _check(lambda T, D, d: D.StudentT(d).log_prob(T.tensor(X)), df)
    ng.manual_seed(3)
    s = ngd.StudentT(ng.tensor([5.0, 30.0]), ng.tensor([1.0, -1.0]), 2.0).sample((40000,))
    np.testing.assert_allclose(s.numpy().mean(0), [1.0, -1.0], atol=0.06)
    np.testing.assert_allclose(s.numpy().var(0), [4 * 5 / 3, 4 * 30 / 28], rtol=0.1)
    assert not ngd.StudentT.has_rsample
    with pytest.raises(NotImplementedError, match="no reparameterized sampler"):
        ngd.StudentT(3.0).rsample()


def test_chi2():
    _check(lambda T, D, df: D.Chi2(df).log_prob(T.tensor(POS2)), POS)
    _check(lambda T, D, df: D.Chi2(df).entropy(), POS, tol=GAMMA_TOL)
    _check(lambda T, D, df: D.Chi2(df).df + D.Chi2(df).mean + D.Chi2(df).variance, POS)
    _check(lambda T, D, df: D.Chi2(df).expand((4, 2, 3)).log_prob(T.tensor(POS2)), POS)
    assert isinstance(ngd.Chi2(1.0), ngd.Gamma)
    ng.manual_seed(4)
    s = ngd.Chi2(ng.tensor([2.0, 6.0])).sample((40000,)).numpy()
    np.testing.assert_allclose(s.mean(0), [2.0, 6.0], rtol=0.03)


def test_pareto():
    make = lambda T, D, s, a: D.Pareto(s, a)  # noqa: E731
    v = POS + 3.0  # above every scale
    _check(lambda T, D, s, a: make(T, D, s, a).log_prob(T.tensor(v)), POS, POS2)
    _check(lambda T, D, s, a: make(T, D, s, a).cdf(T.tensor(v)), POS, POS2)
    _check(lambda T, D, s, a: make(T, D, s, a).icdf(T.tensor(UNIT)), POS, POS2)
    _check(lambda T, D, s, a: make(T, D, s, a).entropy(), POS, POS2)
    alpha = np.array([[0.5, 1.5, 2.5], [1.0, 2.0, 4.0]])  # infinite mean, variance, finite
    _check(_moments(make, "mean", "mode", "variance"), POS, alpha)
    a = ngd.Pareto(ng.tensor(POS), ng.tensor(POS2))
    b = td.Pareto(torch.tensor(POS), torch.tensor(POS2))
    assert repr(a.support).replace("numbagrad", "torch") == repr(b.support)
    ng.manual_seed(5)
    s = ngd.Pareto(ng.tensor([1.0, 2.0]), ng.tensor([3.0, 5.0])).rsample((40000,)).numpy()
    assert (s >= [1.0, 2.0]).all()
    np.testing.assert_allclose(s.mean(0), [1.5, 2.5], rtol=0.03)


def test_weibull():
    make = lambda T, D, s, c: D.Weibull(s, c)  # noqa: E731
    _check(lambda T, D, s, c: make(T, D, s, c).log_prob(T.tensor(POS2)), POS, POS2)
    _check(lambda T, D, s, c: make(T, D, s, c).cdf(T.tensor(POS2)), POS, POS2)
    _check(lambda T, D, s, c: make(T, D, s, c).icdf(T.tensor(UNIT)), POS, POS2)
    _check(lambda T, D, s, c: make(T, D, s, c).entropy(), POS, POS2)
    _check(_moments(make, "mean", "mode", "variance"), POS, POS2 + 1.0)
    e = ngd.Weibull(ng.tensor(POS[0]), ng.tensor(POS2[0])).expand((2, 3))
    f = td.Weibull(torch.tensor(POS[0]), torch.tensor(POS2[0])).expand((2, 3))
    np.testing.assert_allclose(e.log_prob(ng.tensor(POS2)).numpy(),
                               f.log_prob(torch.tensor(POS2)).detach().numpy(), rtol=1e-12)
    ng.manual_seed(6)
    d = ngd.Weibull(ng.tensor([1.0, 2.0]), ng.tensor([0.5, 3.0]))
    s = d.rsample((40000,)).numpy()
    np.testing.assert_allclose(s.mean(0), d.mean.numpy(), rtol=0.05)


def test_kumaraswamy():
    make = lambda T, D, a, b: D.Kumaraswamy(a, b)  # noqa: E731
    _check(lambda T, D, a, b: make(T, D, a, b).log_prob(T.tensor(UNIT)), POS, POS2)
    _check(lambda T, D, a, b: make(T, D, a, b).cdf(T.tensor(UNIT)), POS, POS2)
    _check(lambda T, D, a, b: make(T, D, a, b).icdf(T.tensor(UNIT)), POS, POS2)
    _check(lambda T, D, a, b: make(T, D, a, b).entropy(), POS, POS2, tol=GAMMA_TOL)
    _check(_moments(make, "mean", "variance"), POS, POS2, tol=GAMMA_TOL)
    _check(_moments(make, "mode"), POS, POS2)  # NaN where a or b is below 1
    ng.manual_seed(7)
    d = ngd.Kumaraswamy(ng.tensor([2.0, 0.5]), ng.tensor([5.0, 0.5]))
    s = d.rsample((40000,)).numpy()
    assert ((s >= 0) & (s <= 1)).all()
    np.testing.assert_allclose(s.mean(0), d.mean.numpy(), rtol=0.03)


def test_inverse_gamma():
    make = lambda T, D, c, r: D.InverseGamma(c, r)  # noqa: E731
    _check(lambda T, D, c, r: make(T, D, c, r).log_prob(T.tensor(POS2)), POS, POS2)
    _check(lambda T, D, c, r: make(T, D, c, r).entropy(), POS, POS2, tol=GAMMA_TOL)
    _check(_moments(make, "mean", "mode", "variance"), POS, POS2)  # inf below 1 and 2
    ng.manual_seed(8)
    s = ngd.InverseGamma(ng.tensor([3.0, 5.0]), ng.tensor([2.0, 1.0])).sample((40000,))
    np.testing.assert_allclose(s.numpy().mean(0), [1.0, 0.25], rtol=0.05)
    assert not ngd.InverseGamma(1.0, 1.0).has_rsample
    with pytest.raises(NotImplementedError, match="InverseGamma has no reparameterized"):
        ngd.InverseGamma(1.0, 1.0).rsample()


def test_fisher_snedecor():
    make = lambda T, D, a, b: D.FisherSnedecor(a, b)  # noqa: E731
    _check(lambda T, D, a, b: make(T, D, a, b).log_prob(T.tensor(POS2)), POS, POS2)
    df1 = np.array([[1.0, 3.0, 5.0], [2.0, 8.0, 0.5]])
    df2 = np.array([[1.0, 3.0, 5.0], [2.0, 8.0, 10.0]])  # NaN mean, NaN variance, finite
    _check(_moments(make, "mean", "mode", "variance"), df1, df2)
    ng.manual_seed(9)
    s = ngd.FisherSnedecor(ng.tensor([5.0, 10.0]), ng.tensor([10.0, 20.0])).sample((40000,))
    assert (s.numpy() > 0).all()
    np.testing.assert_allclose(s.numpy().mean(0), [10 / 8, 20 / 18], rtol=0.04)


def test_continuous_bernoulli():
    # probs at 1/2 exercise the Taylor expansions, the others the closed forms
    probs = np.array([[0.1, 0.4995, 0.5], [0.7, 0.9, 0.3]])
    for kind, param in (("probs", probs), ("logits", np.log(probs / (1 - probs)))):
        make = lambda T, D, p: D.ContinuousBernoulli(**{kind: p})  # noqa: E731
        _check(lambda T, D, p: make(T, D, p).log_prob(T.tensor(UNIT)), param)
        _check(lambda T, D, p: make(T, D, p).cdf(T.tensor(UNIT)), param)
        _check(lambda T, D, p: make(T, D, p).icdf(T.tensor(UNIT)), param)
        _check(lambda T, D, p: make(T, D, p).entropy(), param)
        _check(_moments(make, "mean", "variance", "stddev"), param)
    ng.manual_seed(10)
    d = ngd.ContinuousBernoulli(ng.tensor([0.2, 0.5, 0.9]))
    s = d.rsample((40000,)).numpy()
    assert ((s >= 0) & (s <= 1)).all()
    np.testing.assert_allclose(s.mean(0), d.mean.numpy(), atol=0.01)


def test_logistic_normal():
    v = RNG.dirichlet(np.ones(4), size=2)
    make = lambda T, D, m, s: D.LogisticNormal(m, s)  # noqa: E731
    _check(lambda T, D, m, s: make(T, D, m, s).log_prob(T.tensor(v)), LOC, POS)
    a, b = make(ng, ngd, ng.tensor(LOC), ng.tensor(POS)), make(torch, td, torch.tensor(LOC),
                                                               torch.tensor(POS))
    assert a.batch_shape == b.batch_shape == (2,) and a.event_shape == b.event_shape == (4,)
    np.testing.assert_array_equal(a.loc.numpy(), LOC)
    c = ngd.LogisticNormal(0.0, 1.0)  # a scalar base is made a vector of one
    assert c.event_shape == (2,) and tuple(c.sample((3,)).shape) == (3, 2)
    ng.manual_seed(11)
    s = a.rsample((5,)).detach().numpy()
    assert s.shape == (5, 2, 4) and np.allclose(s.sum(-1), 1.0)


# ---------------------------------------------------------------- discrete families

@pytest.mark.parametrize("kind", ["probs", "logits"])
def test_binomial(kind):
    param = UNIT if kind == "probs" else LOGITS
    make = lambda T, D, p: D.Binomial(5, **{kind: p})  # noqa: E731
    _check(lambda T, D, p: make(T, D, p).log_prob(T.tensor(COUNTS)), param)
    _check(lambda T, D, p: make(T, D, p).entropy(), param)
    _check(_moments(make, "mean", "mode", "variance"), param)
    _check(lambda T, D, p, n: D.Binomial(n, **{kind: p}).log_prob(T.tensor(COUNTS)), param,
           np.array([[5.0, 6.0, 7.0], [8.0, 9.0, 10.0]]))
    a, b = make(ng, ngd, ng.tensor(param)), make(torch, td, torch.tensor(param))
    np.testing.assert_array_equal(a.enumerate_support().numpy(), b.enumerate_support().numpy())
    assert tuple(a.enumerate_support(False).shape) == (6, 1, 1)
    assert repr(a.support).replace("numbagrad", "torch") == repr(b.support)
    ng.manual_seed(12)
    d = ngd.Binomial(ng.tensor([10.0, 3.0]), ng.tensor([0.3, 0.9]))
    s = d.sample((20000,))
    assert s.dtype == ng.float32 and tuple(s.shape) == (20000, 2)
    assert ((s.numpy() >= 0) & (s.numpy() <= [10, 3]) & (s.numpy() % 1 == 0)).all()
    np.testing.assert_allclose(s.numpy().mean(0), [3.0, 2.7], rtol=0.02)
    with pytest.raises(NotImplementedError, match="Inhomogeneous total count"):
        d.entropy()


@pytest.mark.parametrize("kind", ["probs", "logits"])
def test_geometric(kind):
    param = UNIT if kind == "probs" else LOGITS
    make = lambda T, D, p: D.Geometric(**{kind: p})  # noqa: E731
    _check(lambda T, D, p: make(T, D, p).log_prob(T.tensor(COUNTS)), param)
    _check(lambda T, D, p: make(T, D, p).entropy(), param)
    _check(_moments(make, "mean", "mode", "variance"), param)
    one = ngd.Geometric(ng.tensor([1.0])).log_prob(ng.tensor([0.0]))
    assert one.item() == 0.0  # the certain first success: no 0 * log(0) NaN
    ng.manual_seed(13)
    s = ngd.Geometric(ng.tensor([0.2, 0.7])).sample((40000,)).numpy()
    assert (s >= 0).all() and (s % 1 == 0).all()
    np.testing.assert_allclose(s.mean(0), [4.0, 3 / 7], rtol=0.04)


@pytest.mark.parametrize("kind", ["probs", "logits"])
def test_negative_binomial(kind):
    param = UNIT if kind == "probs" else LOGITS
    make = lambda T, D, n, p: D.NegativeBinomial(n, **{kind: p})  # noqa: E731
    _check(lambda T, D, n, p: make(T, D, n, p).log_prob(T.tensor(COUNTS)), POS, param,
           tol=GAMMA_TOL)
    _check(_moments(make, "mean", "mode", "variance"), POS, param)
    zero = ngd.NegativeBinomial(ng.tensor([0.0]), ng.tensor([0.5])).log_prob(ng.tensor([0.0]))
    assert zero.item() == 0.0  # total_count 0 is the point mass at 0
    ng.manual_seed(14)
    d = ngd.NegativeBinomial(ng.tensor([3.0, 0.5]), ng.tensor([0.4, 0.8]))
    s = d.sample((40000,)).numpy()
    assert (s >= 0).all() and (s % 1 == 0).all()
    np.testing.assert_allclose(s.mean(0), d.mean.numpy(), rtol=0.04)
    np.testing.assert_allclose(s.var(0), d.variance.numpy(), rtol=0.08)


@pytest.mark.parametrize("kind", ["probs", "logits"])
def test_multinomial(kind):
    param = POS if kind == "probs" else LOGITS
    v = np.array([[0.0, 1.0, 3.0], [2.0, 2.0, 0.0]])
    make = lambda T, D, p: D.Multinomial(4, **{kind: p})  # noqa: E731
    _check(lambda T, D, p: make(T, D, p).log_prob(T.tensor(v)), param)
    _check(_moments(make, "mean", "variance"), param)
    # PyTorch computes lgamma(total_count + 1) in float32 even for float64 probs
    _check(lambda T, D, p: make(T, D, p).entropy(), param, tol=1e-6)
    a, b = make(ng, ngd, ng.tensor(param)), make(torch, td, torch.tensor(param))
    assert a.batch_shape == b.batch_shape == (2,) and a.event_shape == b.event_shape == (3,)
    assert repr(a.support) == repr(b.support)
    ng.manual_seed(15)
    d = ngd.Multinomial(10, ng.tensor([[0.2, 0.3, 0.5], [0.6, 0.4, 0.0]]))
    s = d.sample((10000,))
    assert tuple(s.shape) == (10000, 2, 3) and s.dtype == ng.float32
    assert (s.numpy().sum(-1) == 10).all() and (s.numpy()[:, 1, 2] == 0).all()
    np.testing.assert_allclose(s.numpy().mean(0), d.mean.numpy(), atol=0.05)
    e = d.expand((4, 2))
    assert e.batch_shape == (4, 2) and tuple(e.entropy().shape) == (4, 2)


# ---------------------------------------------------------------- relaxed families

@pytest.mark.parametrize("kind", ["probs", "logits"])
def test_relaxed_bernoulli(kind):
    param = UNIT if kind == "probs" else LOGITS
    make = lambda T, D, t, p: D.RelaxedBernoulli(t, **{kind: p})  # noqa: E731
    _check(lambda T, D, t, p: make(T, D, t, p).log_prob(T.tensor(UNIT[::-1].copy())),
           np.array(0.7), param)
    logit = lambda T, D, t, p: D.relaxed_bernoulli.LogitRelaxedBernoulli(  # noqa: E731
        t, **{kind: p})
    _check(lambda T, D, t, p: logit(T, D, t, p).log_prob(T.tensor(X)), np.array(0.7), param)
    leaf = ng.tensor(param, requires_grad=True)
    a = make(ng, ngd, ng.tensor(0.5), leaf)
    np.testing.assert_array_equal(a.temperature.numpy(), 0.5)
    ng.manual_seed(16)
    s = a.rsample((20000,))
    assert ((s.detach().numpy() > 0) & (s.detach().numpy() < 1)).all()
    s.sum().backward()  # reparameterized: samples increase with probs and logits
    assert (leaf.grad.numpy() > 0).all()
    cold = ngd.RelaxedBernoulli(ng.tensor(0.01), ng.tensor([0.2, 0.9])).sample((20000,))
    np.testing.assert_allclose((cold.numpy() > 0.5).mean(0), [0.2, 0.9], atol=0.02)


def test_relaxed_bernoulli_gradient_reaches_the_logits():
    ng.manual_seed(17)
    logits = ng.tensor([0.3, -1.0], requires_grad=True)
    s = ngd.RelaxedBernoulli(ng.tensor(0.5), logits=logits).rsample((10,))
    s.sum().backward()
    assert logits.grad is not None and (logits.grad.numpy() > 0).all()  # sigmoid increases


@pytest.mark.parametrize("kind", ["probs", "logits"])
def test_relaxed_one_hot_categorical(kind):
    param = POS if kind == "probs" else LOGITS
    v = RNG.dirichlet(np.ones(3), size=2)
    make = lambda T, D, t, p: D.RelaxedOneHotCategorical(t, **{kind: p})  # noqa: E731
    _check(lambda T, D, t, p: make(T, D, t, p).log_prob(T.tensor(v)), np.array(0.6), param)
    _check(lambda T, D, t, p: D.transforms.ExpTransform().inv(  # the base's own log_prob
        T.tensor(v)).sum() + make(T, D, t, p).base_dist.log_prob(T.tensor(np.log(v))),
        np.array(0.6), param)
    a = make(ng, ngd, ng.tensor(0.6), ng.tensor(param))
    b = make(torch, td, torch.tensor(0.6), torch.tensor(param))
    assert a.batch_shape == b.batch_shape and a.event_shape == b.event_shape
    assert repr(a.support) == repr(b.support)
    ng.manual_seed(18)
    logits = ng.tensor([[1.0, 0.0, -1.0]], requires_grad=True)
    s = ngd.RelaxedOneHotCategorical(ng.tensor(0.1), logits=logits).rsample((20000,))
    np.testing.assert_allclose(s.detach().numpy().sum(-1), 1.0, rtol=1e-5)
    freq = np.bincount(s.detach().numpy()[:, 0].argmax(-1), minlength=3) / 20000
    np.testing.assert_allclose(freq, np.exp([1.0, 0.0, -1.0]) / np.exp([1.0, 0.0, -1.0]).sum(),
                               atol=0.02)
    (s[..., 0] * ng.tensor([[1.0]])).sum().backward()
    assert logits.grad is not None


# ---------------------------------------------------------------- mixtures, low-rank normal

def test_mixture_same_family():
    mix = lambda T, D, w, m, s: D.MixtureSameFamily(D.Categorical(logits=w),  # noqa: E731
                                                    D.Normal(m, s))
    v = np.array([[0.3], [1.2], [-2.0]])  # (3, 1): broadcasts with the batch (2,)
    _check(lambda T, D, w, m, s: mix(T, D, w, m, s).log_prob(T.tensor(v)), LOGITS, LOC, POS)
    _check(lambda T, D, w, m, s: mix(T, D, w, m, s).cdf(T.tensor(v)), LOGITS, LOC, POS)
    _check(_moments(mix, "mean", "variance"), LOGITS, LOC, POS)
    # a mixture of multivariate components; one mixture shared by the batch
    mvn = lambda T, D, w, m, s: D.MixtureSameFamily(  # noqa: E731
        D.Categorical(logits=w[0]), D.Independent(D.Normal(m.reshape(2, 3, 1).expand(2, 3, 2),
                                                           s.reshape(2, 3, 1).expand(2, 3, 2)),
                                                  1))
    _check(lambda T, D, w, m, s: mvn(T, D, w, m, s).log_prob(T.tensor(X[:, :2])), LOGITS, LOC,
           POS)
    _check(_moments(mvn, "mean", "variance"), LOGITS, LOC, POS)
    a = mix(ng, ngd, ng.tensor(LOGITS), ng.tensor(LOC), ng.tensor(POS))
    b = mix(torch, td, torch.tensor(LOGITS), torch.tensor(LOC), torch.tensor(POS))
    assert repr(a).replace("numbagrad", "torch") == repr(b)
    assert repr(a.support) == repr(b.support) and not a.has_rsample
    assert a.batch_shape == b.batch_shape == (2,)
    e = a.expand((4, 2))
    assert e.batch_shape == (4, 2) and tuple(e.log_prob(ng.tensor(0.5)).shape) == (4, 2)
    ng.manual_seed(19)
    d = ngd.MixtureSameFamily(ngd.Categorical(probs=ng.tensor([0.3, 0.7])),
                              ngd.Normal(ng.tensor([-5.0, 5.0]), ng.tensor([1.0, 1.0])))
    s = d.sample((20000,)).numpy()
    assert s.shape == (20000,)
    np.testing.assert_allclose((s > 0).mean(), 0.7, atol=0.02)
    np.testing.assert_allclose(s.var(), d.variance.item(), rtol=0.05)
    # a mixture shared by the batch picks a component per batch element (PyTorch's sample
    # fails on this gather)
    s2 = mvn(ng, ngd, ng.tensor(LOGITS), ng.tensor(LOC), ng.tensor(POS)).sample((7,))
    assert tuple(s2.shape) == (7, 2, 2)
    ng.manual_seed(21)
    shared = ngd.MixtureSameFamily(ngd.Categorical(probs=ng.tensor([0.5, 0.5])),
                                   ngd.Normal(ng.tensor([[-9.0, 9.0]] * 2000), 0.01))
    picks = shared.sample().numpy() > 0
    assert picks.shape == (2000,) and 0.4 < picks.mean() < 0.6


@pytest.mark.parametrize("case", [
    lambda T, D: D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(T.zeros(2), 1.0)),
    lambda T, D: D.MixtureSameFamily(D.Categorical(logits=T.zeros(2)), "normal"),
    lambda T, D: D.MixtureSameFamily(D.Categorical(logits=T.zeros(3, 2)),
                                     D.Normal(T.zeros(4, 2), 1.0)),
    lambda T, D: D.MixtureSameFamily(D.Categorical(logits=T.zeros(3)), D.Normal(T.zeros(2), 1.0)),
], ids=lambda f: "")
def test_mixture_errors(case):
    _same_error(case)


def test_low_rank_multivariate_normal():
    W = RNG.normal(size=(2, 3, 2))
    make = lambda T, D, m, w, d: D.LowRankMultivariateNormal(m, w, d)  # noqa: E731
    v = RNG.normal(size=(4, 2, 3))
    _check(lambda T, D, m, w, d: make(T, D, m, w, d).log_prob(T.tensor(v)), LOC, W, POS)
    _check(lambda T, D, m, w, d: make(T, D, m, w, d).entropy(), LOC, W, POS)
    _check(_moments(make, "mean", "mode", "variance"), LOC, W, POS)
    for prop in ("covariance_matrix", "precision_matrix", "scale_tril"):
        _check(_moments(make, prop), LOC, W, POS)
    # it is the MultivariateNormal of the same covariance
    cov = W @ np.swapaxes(W, -1, -2) + np.einsum("bi,ij->bij", POS, np.eye(3))
    a = make(ng, ngd, ng.tensor(LOC), ng.tensor(W), ng.tensor(POS))
    np.testing.assert_allclose(a.log_prob(ng.tensor(v)).numpy(),
                               ngd.MultivariateNormal(ng.tensor(LOC), ng.tensor(cov)).log_prob(
                                   ng.tensor(v)).numpy(), rtol=1e-10)
    b = make(torch, td, torch.tensor(LOC), torch.tensor(W), torch.tensor(POS))
    assert a.batch_shape == b.batch_shape and a.event_shape == b.event_shape
    assert repr(a).replace("numbagrad", "torch") == repr(b)
    e = a.expand((5, 2))
    assert e.batch_shape == (5, 2) and tuple(e.log_prob(ng.tensor(v[0])).shape) == (5, 2)
    # a shared factor broadcast against batched locs
    _check(lambda T, D, m, w, d: D.LowRankMultivariateNormal(m, w[0], d[0]).log_prob(
        T.tensor(v)), LOC, W, POS)
    ng.manual_seed(20)
    s = ngd.LowRankMultivariateNormal(ng.tensor(LOC[0]), ng.tensor(W[0]),
                                      ng.tensor(POS[0])).rsample((40000,)).numpy()
    np.testing.assert_allclose(np.cov(s.T), cov[0], atol=0.15)


@pytest.mark.parametrize("case", [
    lambda T, D: D.LowRankMultivariateNormal(T.tensor(0.0), T.zeros(1, 1), T.ones(1)),
    lambda T, D: D.LowRankMultivariateNormal(T.zeros(3), T.zeros(3), T.ones(3)),
    lambda T, D: D.LowRankMultivariateNormal(T.zeros(3), T.zeros(2, 1), T.ones(3)),
    lambda T, D: D.LowRankMultivariateNormal(T.zeros(3), T.zeros(3, 1), T.ones(2)),
    lambda T, D: D.LowRankMultivariateNormal(T.zeros(2, 3), T.zeros(4, 3, 1), T.ones(3)),
    lambda T, D: D.LowRankMultivariateNormal(T.zeros(3), T.zeros(3, 1), -T.ones(3)),
], ids=lambda f: "")
def test_low_rank_errors(case):
    _same_error(case)


# ---------------------------------------------------------------- shapes, reprs, flags

FAMILIES = [
    lambda T, D: D.Gumbel(T.tensor([0.0, 1.0]), 2.0),
    lambda T, D: D.Gumbel(0.0, 1.0),
    lambda T, D: D.Cauchy(T.tensor([0.0, 1.0]), 2.0),
    lambda T, D: D.Cauchy(0.0, 1.0),
    lambda T, D: D.HalfNormal(T.tensor([1.0, 2.0])),
    lambda T, D: D.HalfCauchy(2.0),
    lambda T, D: D.StudentT(T.tensor([3.0, 4.0])),
    lambda T, D: D.StudentT(3.0, 1.0, 2.0),
    lambda T, D: D.Chi2(T.tensor([3.0, 4.0])),
    lambda T, D: D.Binomial(4, T.tensor([0.3, 0.7])),
    lambda T, D: D.Binomial(T.tensor([4.0, 5.0]), logits=T.tensor([0.3, 0.7])),
    lambda T, D: D.Geometric(T.tensor([0.3, 0.7])),
    lambda T, D: D.Geometric(0.3),
    lambda T, D: D.NegativeBinomial(3.0, T.tensor([0.3, 0.7])),
    lambda T, D: D.Multinomial(5, T.tensor([[0.3, 0.7], [0.5, 0.5]])),
    lambda T, D: D.RelaxedBernoulli(T.tensor(0.5), T.tensor([0.3, 0.7])),
    lambda T, D: D.RelaxedOneHotCategorical(T.tensor(0.5), T.tensor([0.3, 0.7])),
    lambda T, D: D.ContinuousBernoulli(T.tensor([0.3, 0.7])),
    lambda T, D: D.ContinuousBernoulli(logits=0.3),
    lambda T, D: D.Pareto(T.tensor([1.0, 2.0]), 3.0),
    lambda T, D: D.Pareto(1.0, 2.0),
    lambda T, D: D.Weibull(T.tensor([1.0, 2.0]), 3.0),
    lambda T, D: D.Kumaraswamy(T.tensor([1.0, 2.0]), 3.0),
    lambda T, D: D.InverseGamma(T.tensor([1.0, 2.0]), 3.0),
    lambda T, D: D.LogisticNormal(T.zeros(2, 3), 1.0),
    lambda T, D: D.FisherSnedecor(T.tensor([1.0, 2.0]), 3.0),
    lambda T, D: D.FisherSnedecor(1.0, 2.0),
    lambda T, D: D.LowRankMultivariateNormal(T.zeros(2, 3), T.ones(3, 1), T.ones(3)),
    lambda T, D: D.MixtureSameFamily(D.Categorical(T.ones(2)), D.Normal(T.zeros(2), 1.0)),
]


@pytest.mark.parametrize("make", FAMILIES, ids=lambda f: "")
def test_shapes_reprs_supports_flags(make):
    a, b = make(ng, ngd), make(torch, td)
    assert repr(a).replace("numbagrad", "torch") == repr(b)
    assert a.batch_shape == b.batch_shape and a.event_shape == b.event_shape
    if not ngd.constraints.is_dependent(type(a).__dict__.get("support")):
        assert repr(a.support) == repr(b.support)
    assert repr(a.arg_constraints) == repr(b.arg_constraints)
    assert a.has_enumerate_support == b.has_enumerate_support
    if b.has_rsample and not a.has_rsample:  # only where Gamma's rsample is missing
        assert type(a).__name__ in ("StudentT", "Chi2", "InverseGamma", "FisherSnedecor")
    else:
        assert a.has_rsample == b.has_rsample
    sa, sb = a.sample((3,)), b.sample((3,))
    assert tuple(sa.shape) == tuple(sb.shape)
    assert sa.dtype.name == str(sb.dtype).split(".")[1]
    assert bool(a.support.check(sa).all())
    e, f = a.expand((4,) + tuple(a.batch_shape)), b.expand((4,) + tuple(b.batch_shape))
    assert e.batch_shape == f.batch_shape and e.event_shape == f.event_shape
    assert type(e) is type(a) and tuple(e.sample().shape) == tuple(f.sample().shape)
    value = sb[0]
    la = e.log_prob(ng.tensor(value.numpy()))
    lb = f.log_prob(value)
    np.testing.assert_allclose(la.detach().numpy(), lb.detach().numpy(), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- validation

@pytest.mark.parametrize("case", [
    lambda T, D: D.Gumbel(0.0, -1.0),
    lambda T, D: D.Gumbel(T.tensor([0.0, math.nan]), 1.0),
    lambda T, D: D.Cauchy(0.0, T.tensor([1.0, 0.0])),
    lambda T, D: D.HalfNormal(T.tensor([1.0, -1.0])),
    lambda T, D: D.HalfNormal(1.0).log_prob(T.tensor(-1.0)),
    lambda T, D: D.HalfCauchy(-1.0),
    lambda T, D: D.StudentT(T.tensor([1.0, -1.0])),
    lambda T, D: D.StudentT(1.0, 0.0, -1.0),
    lambda T, D: D.Chi2(T.tensor([1.0, 0.0])),
    lambda T, D: D.Binomial(T.tensor([1.0, 1.5]), T.tensor([0.5, 0.5])),
    lambda T, D: D.Binomial(3, T.tensor([0.5, 1.5])),
    lambda T, D: D.Binomial(3, T.tensor([0.5])).log_prob(T.tensor([4.0])),
    lambda T, D: D.Binomial(),
    lambda T, D: D.Geometric(T.tensor([0.5, 0.0])),
    lambda T, D: D.Geometric(T.tensor([0.5, 1.5])),
    lambda T, D: D.Geometric(0.5).log_prob(T.tensor(1.5)),
    lambda T, D: D.NegativeBinomial(-1.0, T.tensor([0.5])),
    lambda T, D: D.NegativeBinomial(1.0, T.tensor([1.0])),
    lambda T, D: D.Multinomial(2.5, T.tensor([0.5, 0.5])),
    lambda T, D: D.Multinomial(3, T.tensor([0.5, -0.5])),
    lambda T, D: D.Multinomial(3, T.tensor([0.5, 0.5])).log_prob(T.tensor([-1.0, 4.0])),
    lambda T, D: D.RelaxedBernoulli(T.tensor(0.5), T.tensor([1.5])),
    lambda T, D: D.RelaxedBernoulli(T.tensor(0.5), T.tensor([0.5])).log_prob(T.tensor([1.5])),
    lambda T, D: D.RelaxedOneHotCategorical(T.tensor(0.5), T.tensor([0.5, -0.5])),
    lambda T, D: D.RelaxedOneHotCategorical(T.tensor(0.5), T.tensor([0.5, 0.5])).log_prob(
        T.tensor([0.5, 0.6])),
    lambda T, D: D.ContinuousBernoulli(T.tensor([1.5]), validate_args=True),
    lambda T, D: D.ContinuousBernoulli(T.tensor([0.5])).log_prob(T.tensor([1.5])),
    lambda T, D: D.Pareto(1.0, -1.0),
    lambda T, D: D.Pareto(T.tensor([2.0]), 1.0).log_prob(T.tensor([1.0])),
    lambda T, D: D.Weibull(-1.0, 1.0),
    lambda T, D: D.Weibull(1.0, 1.0).log_prob(T.tensor(-1.0)),
    lambda T, D: D.Kumaraswamy(1.0, -1.0),
    lambda T, D: D.Kumaraswamy(1.0, 1.0).log_prob(T.tensor(1.5)),
    lambda T, D: D.InverseGamma(-1.0, 1.0),
    lambda T, D: D.LogisticNormal(0.0, -1.0),
    lambda T, D: D.LogisticNormal(T.zeros(2), 1.0).log_prob(T.tensor([0.5, 0.6, 0.1])),
    lambda T, D: D.FisherSnedecor(1.0, -1.0),
    lambda T, D: D.FisherSnedecor(1.0, 1.0).log_prob(T.tensor(-1.0)),
], ids=lambda f: "")
def test_validation_errors(case):
    _same_error(case)


# ---------------------------------------------------------------- KL divergences

A = np.array([0.7, 1.9, 3.2])
B = np.array([1.3, 0.6, 2.4])
U = np.array([0.2, 0.55, 0.8])
M = np.array([-0.4, 0.3, 1.1])

# (p(T, D, *params), q(T, D, *params), params, tolerance)
KL_CASES = {
    "beta_beta": (lambda T, D, a, b: D.Beta(a, b), lambda T, D, a, b: D.Beta(b, a + 1)),
    "binomial_binomial": (lambda T, D, a, b: D.Binomial(5, a / 4),
                          lambda T, D, a, b: D.Binomial(5, b / 3)),
    "binomial_more_trials": (lambda T, D, a, b: D.Binomial(T.tensor([5.0, 6.0, 5.0]), a / 4),
                             lambda T, D, a, b: D.Binomial(5, b / 3)),
    "contbern_contbern": (lambda T, D, a, b: D.ContinuousBernoulli(a / 4),
                          lambda T, D, a, b: D.ContinuousBernoulli(logits=b)),
    "dirichlet_dirichlet": (lambda T, D, a, b: D.Dirichlet(a.expand(2, 3)),
                            lambda T, D, a, b: D.Dirichlet(b)),
    "exponential_exponential": (lambda T, D, a, b: D.Exponential(a),
                                lambda T, D, a, b: D.Exponential(b)),
    "gamma_gamma": (lambda T, D, a, b: D.Gamma(a, b), lambda T, D, a, b: D.Gamma(b, a)),
    "chi2_chi2": (lambda T, D, a, b: D.Chi2(a), lambda T, D, a, b: D.Chi2(b)),
    "gumbel_gumbel": (lambda T, D, a, b: D.Gumbel(a - 2, b),
                      lambda T, D, a, b: D.Gumbel(b, a)),
    "geometric_geometric": (lambda T, D, a, b: D.Geometric(a / 4),
                            lambda T, D, a, b: D.Geometric(logits=b)),
    "halfnormal_halfnormal": (lambda T, D, a, b: D.HalfNormal(a),
                              lambda T, D, a, b: D.HalfNormal(b)),
    "laplace_laplace": (lambda T, D, a, b: D.Laplace(a - 1, b),
                        lambda T, D, a, b: D.Laplace(b, a)),
    "pareto_pareto": (lambda T, D, a, b: D.Pareto(a, b), lambda T, D, a, b: D.Pareto(b, a)),
    "poisson_poisson": (lambda T, D, a, b: D.Poisson(a), lambda T, D, a, b: D.Poisson(b)),
    "cauchy_cauchy": (lambda T, D, a, b: D.Cauchy(a, b), lambda T, D, a, b: D.Cauchy(b, a)),
    "lognormal_lognormal": (lambda T, D, a, b: D.LogNormal(a, b),
                            lambda T, D, a, b: D.LogNormal(b, a)),
    "independent_independent": (lambda T, D, a, b: D.Independent(D.Normal(a, b), 1),
                                lambda T, D, a, b: D.Independent(D.Normal(b, a), 1)),
    "bernoulli_poisson": (lambda T, D, a, b: D.Bernoulli(a / 4),
                          lambda T, D, a, b: D.Poisson(b)),
    "beta_contbern": (lambda T, D, a, b: D.Beta(a, b),
                      lambda T, D, a, b: D.ContinuousBernoulli(b / 3)),
    "beta_exponential": (lambda T, D, a, b: D.Beta(a, b), lambda T, D, a, b: D.Exponential(b)),
    "beta_gamma": (lambda T, D, a, b: D.Beta(a, b), lambda T, D, a, b: D.Gamma(b, a)),
    "beta_normal": (lambda T, D, a, b: D.Beta(a, b), lambda T, D, a, b: D.Normal(b, a)),
    "beta_uniform": (lambda T, D, a, b: D.Beta(a, b),
                     lambda T, D, a, b: D.Uniform(a - 4, T.tensor([1.0, 1.5, 0.9]))),
    "beta_pareto": (lambda T, D, a, b: D.Beta(a, b), lambda T, D, a, b: D.Pareto(b, a)),
    "contbern_exponential": (lambda T, D, a, b: D.ContinuousBernoulli(a / 4),
                             lambda T, D, a, b: D.Exponential(b)),
    "contbern_normal": (lambda T, D, a, b: D.ContinuousBernoulli(a / 4),
                        lambda T, D, a, b: D.Normal(b, a)),
    "contbern_uniform": (lambda T, D, a, b: D.ContinuousBernoulli(a / 4),
                         lambda T, D, a, b: D.Uniform(-a, T.tensor([1.5, 0.9, 2.0]))),
    "exponential_gamma": (lambda T, D, a, b: D.Exponential(a), lambda T, D, a, b: D.Gamma(b, a)),
    "exponential_gumbel": (lambda T, D, a, b: D.Exponential(a),
                           lambda T, D, a, b: D.Gumbel(b, a)),
    "exponential_normal": (lambda T, D, a, b: D.Exponential(a),
                           lambda T, D, a, b: D.Normal(b, a)),
    "exponential_uniform": (lambda T, D, a, b: D.Exponential(a),
                            lambda T, D, a, b: D.Uniform(b - 3, b)),
    "gamma_exponential": (lambda T, D, a, b: D.Gamma(a, b), lambda T, D, a, b: D.Exponential(a)),
    "gamma_gumbel": (lambda T, D, a, b: D.Gamma(a, b), lambda T, D, a, b: D.Gumbel(b, a)),
    "gamma_normal": (lambda T, D, a, b: D.Gamma(a, b), lambda T, D, a, b: D.Normal(b, a)),
    "gumbel_normal": (lambda T, D, a, b: D.Gumbel(a, b), lambda T, D, a, b: D.Normal(b, a)),
    "gumbel_exponential": (lambda T, D, a, b: D.Gumbel(a, b),
                           lambda T, D, a, b: D.Exponential(a)),
    "laplace_normal": (lambda T, D, a, b: D.Laplace(a, b), lambda T, D, a, b: D.Normal(b, a)),
    "laplace_gamma": (lambda T, D, a, b: D.Laplace(a, b), lambda T, D, a, b: D.Gamma(b, a)),
    "normal_gumbel": (lambda T, D, a, b: D.Normal(a, b), lambda T, D, a, b: D.Gumbel(b, a)),
    "normal_laplace": (lambda T, D, a, b: D.Normal(a, b), lambda T, D, a, b: D.Laplace(b, a)),
    "normal_beta": (lambda T, D, a, b: D.Normal(a, b), lambda T, D, a, b: D.Beta(b, a)),
    "pareto_exponential": (lambda T, D, a, b: D.Pareto(a, b),
                           lambda T, D, a, b: D.Exponential(a)),
    "pareto_gamma": (lambda T, D, a, b: D.Pareto(a, b), lambda T, D, a, b: D.Gamma(b, a)),
    "pareto_normal": (lambda T, D, a, b: D.Pareto(a, b + 0.2), lambda T, D, a, b: D.Normal(b, a)),
    "pareto_uniform": (lambda T, D, a, b: D.Pareto(a, b), lambda T, D, a, b: D.Uniform(0.0, a)),
    "poisson_binomial": (lambda T, D, a, b: D.Poisson(a), lambda T, D, a, b: D.Binomial(3, b / 3)),
    "uniform_beta": (lambda T, D, a, b: D.Uniform(a / 4, a / 4 + 0.1),
                     lambda T, D, a, b: D.Beta(a, b)),
    "uniform_beta_outside": (lambda T, D, a, b: D.Uniform(a / 4, a / 4 + 0.5),
                             lambda T, D, a, b: D.Beta(a, b)),
    "uniform_contbern": (lambda T, D, a, b: D.Uniform(a / 4, a / 4 + 0.1),
                         lambda T, D, a, b: D.ContinuousBernoulli(b / 3)),
    "uniform_exponential": (lambda T, D, a, b: D.Uniform(a - 1, a + b),
                            lambda T, D, a, b: D.Exponential(b)),
    "uniform_gamma": (lambda T, D, a, b: D.Uniform(a - 0.5, a + b),
                      lambda T, D, a, b: D.Gamma(b, a)),
    "uniform_gumbel": (lambda T, D, a, b: D.Uniform(a - 1, a + b),
                       lambda T, D, a, b: D.Gumbel(b, a)),
    "uniform_normal": (lambda T, D, a, b: D.Uniform(a - 1, a + b),
                       lambda T, D, a, b: D.Normal(b, a)),
    "uniform_pareto": (lambda T, D, a, b: D.Uniform(a, a + b),
                       lambda T, D, a, b: D.Pareto(T.tensor([0.5, 2.0, 1.0]), b)),
}
_GAMMA_KL = {"beta_beta", "dirichlet_dirichlet", "gamma_gamma", "chi2_chi2", "beta_gamma",
             "gamma_gumbel", "gamma_normal", "gamma_exponential", "beta_contbern",
             "beta_exponential", "beta_normal", "beta_uniform", "uniform_beta",
             "uniform_beta_outside", "gumbel_gumbel"}


@pytest.mark.parametrize("name", list(KL_CASES))
def test_kl_divergence(name):
    p, q = KL_CASES[name]
    tol = GAMMA_TOL if name in _GAMMA_KL else 1e-10
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ambiguous dispatch
        _check(lambda T, D, a, b: D.kl_divergence(p(T, D, a, b), q(T, D, a, b)), A, B, tol=tol)


def test_kl_low_rank_and_full_multivariate_normals():
    W = RNG.normal(size=(2, 3, 2))
    cov = (lambda c: c @ np.swapaxes(c, -1, -2) + np.eye(3))(RNG.normal(size=(3, 3)))
    lr = lambda T, D, m, w, d: D.LowRankMultivariateNormal(m, w, d)  # noqa: E731
    full = lambda T, D, m, c: D.MultivariateNormal(m, c)  # noqa: E731
    _check(lambda T, D, m, w, d: D.kl_divergence(lr(T, D, m, w, d),
                                                 lr(T, D, m[0] * 2, w[1], d[0] + 1)),
           LOC, W, POS)
    _check(lambda T, D, m, w, d, c: D.kl_divergence(lr(T, D, m, w, d), full(T, D, m[0], c)),
           LOC, W, POS, cov)
    _check(lambda T, D, m, w, d, c: D.kl_divergence(full(T, D, m[0], c), lr(T, D, m, w, d)),
           LOC, W, POS, cov)
    # the low-rank KL is the full one of the same covariances
    covs = W @ np.swapaxes(W, -1, -2) + np.einsum("bi,ij->bij", POS, np.eye(3))
    a = ngd.kl_divergence(lr(ng, ngd, ng.tensor(LOC), ng.tensor(W), ng.tensor(POS)),
                          full(ng, ngd, ng.tensor(LOC[0]), ng.tensor(cov)))
    b = ngd.kl_divergence(full(ng, ngd, ng.tensor(LOC), ng.tensor(covs)),
                          full(ng, ngd, ng.tensor(LOC[0]), ng.tensor(cov)))
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10)
    with pytest.raises(ValueError, match="different event shapes"):
        ngd.kl_divergence(ngd.LowRankMultivariateNormal(ng.zeros(2), ng.ones(2, 1), ng.ones(2)),
                          ngd.MultivariateNormal(ng.zeros(3), ng.eye(3)))


def test_kl_errors():
    _same_error(lambda T, D: D.kl_divergence(D.Binomial(3, T.tensor([0.5])),
                                             D.Binomial(5, T.tensor([0.5]))))
    _same_error(lambda T, D: D.kl_divergence(D.Independent(D.Normal(T.zeros(2, 2), 1.0), 1),
                                             D.Independent(D.Normal(T.zeros(2, 2), 1.0), 2)))
    _same_error(lambda T, D: D.kl_divergence(D.Weibull(1.0, 2.0), D.Weibull(1.0, 3.0)))
    _same_error(lambda T, D: D.kl_divergence(D.StudentT(2.0), D.Normal(0.0, 1.0)))
