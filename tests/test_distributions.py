"""numbagrad.distributions against torch.distributions: log_prob, entropy, moments, KL and
their gradients on the same inputs; samples only by shape and loose statistics (the random
streams differ); validation errors by type and message."""

import math

import numpy as np
import pytest

import numbagrad as ng
import numbagrad.distributions as ngd

torch = pytest.importorskip("torch")
td = torch.distributions

RNG = np.random.default_rng(0)
LOC = RNG.normal(size=(2, 3))
SCALE = RNG.uniform(0.5, 2.0, size=(2, 3))
LOGITS = RNG.normal(size=(2, 4))
PROBS = RNG.uniform(0.1, 1.0, size=(2, 4))
BPROBS = RNG.uniform(0.1, 0.9, size=(3,))
VALUE = RNG.normal(size=(2, 3))


def _both(*arrays, dtype="float64"):
    """The arrays as leaf tensors requiring grad, in numbagrad and in torch."""
    ours = [ng.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    return ours, theirs


def _check(fn, *arrays, dtype="float64"):
    """fn(library, *params) gives a tensor: its value and the grads of its sum agree."""
    ours, theirs = _both(*arrays, dtype=dtype)
    a, b = fn(ng, ngd, *ours), fn(torch, td, *theirs)
    assert tuple(a.shape) == tuple(b.shape)
    tol = 1e-12 if dtype == "float64" else 1e-5
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)
    a.sum().backward()
    b.sum().backward()
    for x, y in zip(ours, theirs):
        if y.grad is None:  # a parameter the result does not depend on
            assert x.grad is None
            continue
        np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normal_log_prob_entropy_cdf(dtype):
    v = VALUE.astype(dtype)
    _check(lambda T, D, m, s: D.Normal(m, s).log_prob(T.tensor(v)), LOC, SCALE, dtype=dtype)
    _check(lambda T, D, m, s: D.Normal(m, s).entropy(), LOC, SCALE, dtype=dtype)
    _check(lambda T, D, m, s: D.Normal(m, s).cdf(T.tensor(v)), LOC, SCALE, dtype=dtype)
    _check(lambda T, D, m, s: D.Normal(m, s).variance + D.Normal(m, s).stddev
           + D.Normal(m, s).mean, LOC, SCALE, dtype=dtype)


def test_normal_log_prob_grad_wrt_value_and_scalar_params():
    _check(lambda T, D, x: D.Normal(0.5, 2.0).log_prob(x), VALUE)
    n = ngd.Normal(0.5, 2.0)
    assert n.batch_shape == () and n.event_shape == () and n.loc.dtype == ng.float32
    assert ngd.Normal.has_rsample and not ngd.Categorical.has_rsample


def test_normal_rsample_reparameterized_grads():
    ng.manual_seed(0)
    loc = ng.tensor(LOC, requires_grad=True)
    scale = ng.tensor(SCALE, requires_grad=True)
    z = ngd.Normal(loc, scale).rsample((5,))
    assert tuple(z.shape) == (5, 2, 3)
    z.sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), np.full((2, 3), 5.0))
    eps = (z.detach().numpy() - LOC) / SCALE  # d z / d scale = eps
    np.testing.assert_allclose(scale.grad.numpy(), eps.sum(0), rtol=1e-12)
    s = ngd.Normal(loc, scale).sample((2,))
    assert not s.requires_grad and tuple(s.shape) == (2, 2, 3)


def test_normal_sample_statistics():
    ng.manual_seed(1)
    s = ngd.Normal(ng.tensor([1.0, -2.0]), ng.tensor([0.5, 3.0])).sample((20000,)).numpy()
    np.testing.assert_allclose(s.mean(0), [1.0, -2.0], atol=0.06)
    np.testing.assert_allclose(s.std(0), [0.5, 3.0], rtol=0.03)


@pytest.mark.parametrize("kind", ["probs", "logits"])
def test_categorical_log_prob_entropy_probs_logits(kind):
    param = PROBS if kind == "probs" else LOGITS
    idx = np.array([[0, 3], [2, 1], [3, 3]])  # (3, 2): broadcasts with batch (2,)
    make = lambda D, p: D.Categorical(**{kind: p})  # noqa: E731
    _check(lambda T, D, p: make(D, p).log_prob(T.tensor(idx)), param)
    _check(lambda T, D, p: make(D, p).entropy(), param)
    _check(lambda T, D, p: make(D, p).probs * 2 + make(D, p).logits, param)
    ours, theirs = _both(param)
    a, b = make(ngd, *ours), make(td, *theirs)
    assert a.batch_shape == b.batch_shape and a.event_shape == b.event_shape
    assert a.param_shape == b.param_shape
    np.testing.assert_array_equal(a.mode.numpy(), b.mode.numpy())
    assert np.isnan(a.mean.numpy()).all() and a.variance.shape == b.variance.shape
    np.testing.assert_array_equal(a.enumerate_support().numpy(), b.enumerate_support().numpy())


def test_categorical_zero_prob_entropy_is_finite():
    p = np.array([0.5, 0.5, 0.0])
    _check(lambda T, D, p: D.Categorical(probs=p).entropy(), p)


def test_categorical_sample_shapes_and_frequencies():
    ng.manual_seed(2)
    c = ngd.Categorical(probs=ng.tensor([[0.1, 0.2, 0.7], [0.6, 0.3, 0.1]]))
    assert tuple(c.sample().shape) == (2,) and c.sample().dtype == ng.int64
    s = c.sample((4000,)).numpy()
    assert s.shape == (4000, 2)
    freq = np.stack([(s == k).mean(0) for k in range(3)], -1)
    np.testing.assert_allclose(freq, [[0.1, 0.2, 0.7], [0.6, 0.3, 0.1]], atol=0.03)


def test_categorical_reinforce_gradient():
    """-(log_prob(action) * R).sum() backpropagates into the policy's logits."""
    actions, returns = np.array([1, 0]), np.array([2.0, -1.0])
    _check(lambda T, D, lg: -(D.Categorical(logits=lg).log_prob(T.tensor(actions))
                              * T.tensor(returns)).sum(), LOGITS)


@pytest.mark.parametrize("kind", ["probs", "logits"])
def test_bernoulli(kind):
    param = BPROBS if kind == "probs" else np.log(BPROBS / (1 - BPROBS))
    v = np.array([1.0, 0.0, 1.0])
    make = lambda D, p: D.Bernoulli(**{kind: p})  # noqa: E731
    _check(lambda T, D, p: make(D, p).log_prob(T.tensor(v)), param)
    _check(lambda T, D, p: make(D, p).entropy(), param)
    _check(lambda T, D, p: make(D, p).mean + make(D, p).variance, param)
    ng.manual_seed(3)
    s = ngd.Bernoulli(probs=ng.tensor([0.2, 0.9])).sample((5000,)).numpy()
    assert set(np.unique(s)) <= {0.0, 1.0}
    np.testing.assert_allclose(s.mean(0), [0.2, 0.9], atol=0.03)


def test_uniform():
    low, high = np.array([0.0, -1.0]), np.array([1.0, 3.0])
    v = np.array([0.5, 3.5])  # the second is outside: log_prob -inf
    _check(lambda T, D, a, b: D.Uniform(a, b).entropy() + D.Uniform(a, b).mean
           + D.Uniform(a, b).variance + D.Uniform(a, b).stddev, low, high)
    a = ngd.Uniform(ng.tensor(low), ng.tensor(high), validate_args=False).log_prob(ng.tensor(v))
    b = td.Uniform(torch.tensor(low), torch.tensor(high), validate_args=False).log_prob(
        torch.tensor(v))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    ng.manual_seed(4)
    lo = ng.tensor(low, requires_grad=True)
    hi = ng.tensor(high, requires_grad=True)
    s = ngd.Uniform(lo, hi).rsample((4000,))
    assert ((s.detach().numpy() >= low) & (s.detach().numpy() < high)).all()
    np.testing.assert_allclose(s.detach().numpy().mean(0), (low + high) / 2, atol=0.06)
    s.sum().backward()  # d/dhigh = u, d/dlow = 1 - u, summing to the count
    np.testing.assert_allclose((lo.grad + hi.grad).numpy(), [4000.0, 4000.0])


def test_one_hot_categorical():
    v = np.array([[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]])
    _check(lambda T, D, p: D.OneHotCategorical(probs=p).log_prob(T.tensor(v)), PROBS)
    _check(lambda T, D, p: D.OneHotCategorical(logits=p).entropy(), LOGITS)
    ng.manual_seed(5)
    o = ngd.OneHotCategorical(probs=ng.tensor(PROBS))
    s = o.sample((3,)).numpy()
    assert s.shape == (3, 2, 4) and (s.sum(-1) == 1).all()
    assert o.event_shape == (4,) and o.batch_shape == (2,)


def test_kl_divergence():
    _check(lambda T, D, m, s: D.kl_divergence(D.Normal(m, s), D.Normal(0.2, 1.5)), LOC, SCALE)
    _check(lambda T, D, m, s: D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(m, s)), LOC, SCALE)
    _check(lambda T, D, a, b: D.kl_divergence(D.Categorical(logits=a), D.Categorical(probs=b)),
           LOGITS, PROBS)
    _check(lambda T, D, a, b: D.kl_divergence(D.Bernoulli(probs=a), D.Bernoulli(logits=b)),
           BPROBS, BPROBS - 0.5)
    _check(lambda T, D, a, b: D.kl_divergence(D.Uniform(a, b + 1.0), D.Uniform(a - 1.0, b + 2.0)),
           np.array([0.0, 1.0]), np.array([0.5, 2.0]))
    # zeros in q where p has mass give inf, zeros in p give nothing
    p, q = np.array([0.5, 0.5, 0.0]), np.array([0.0, 0.5, 0.5])
    a = ngd.kl_divergence(ngd.Categorical(probs=ng.tensor(q)), ngd.Categorical(probs=ng.tensor(p)))
    b = td.kl_divergence(td.Categorical(probs=torch.tensor(q)),
                         td.Categorical(probs=torch.tensor(p)))
    assert a.item() == b.item() == math.inf
    with pytest.raises(NotImplementedError,
                       match=r"No KL\(p \|\| q\) is implemented for p type Normal and q type "
                             r"Categorical"):
        ngd.kl_divergence(ngd.Normal(0.0, 1.0), ngd.Categorical(probs=ng.tensor([0.5, 0.5])))


def _same_error(fn):
    """fn(library, distributions) raises the same exception type and message in both."""
    with pytest.raises(Exception) as theirs:
        fn(torch, td)
    with pytest.raises(type(theirs.value)) as ours:
        fn(ng, ngd)
    assert str(ours.value).replace("numbagrad", "torch") == str(theirs.value)


@pytest.mark.parametrize("case", [
    lambda T, D: D.Normal(T.tensor([0.0, 1.0]), T.tensor([1.0, -1.0])),
    lambda T, D: D.Normal(0.0, 0.0),
    lambda T, D: D.Categorical(probs=T.tensor([0.5, -0.5])),
    lambda T, D: D.Categorical(probs=T.tensor([0.5, 0.5]), logits=T.tensor([0.0, 0.0])),
    lambda T, D: D.Categorical(),
    lambda T, D: D.Categorical(logits=T.tensor(1.0)),
    lambda T, D: D.Bernoulli(probs=T.tensor([0.5, 1.5])),
    lambda T, D: D.Uniform(T.tensor([0.0, 2.0]), T.tensor([1.0, 1.0])),
    lambda T, D: D.Normal(0.0, 1.0).log_prob(0.5),
    lambda T, D: D.Normal(T.zeros(3), T.ones(3)).log_prob(T.zeros(2)),
    lambda T, D: D.Categorical(probs=T.tensor([0.5, 0.5])).log_prob(T.tensor([2])),
    lambda T, D: D.Bernoulli(probs=T.tensor([0.5])).log_prob(T.tensor([0.5])),
    lambda T, D: D.Uniform(0.0, 1.0).log_prob(T.tensor(2.0)),
    lambda T, D: D.OneHotCategorical(probs=T.tensor([0.5, 0.5])).log_prob(T.tensor([1.0])),
    lambda T, D: D.Normal("a", 1.0),
], ids=lambda f: "")
def test_validation_errors(case):
    _same_error(case)


def test_validate_args_false_skips_checks_and_repr():
    ngd.Normal(0.0, -1.0, validate_args=False)  # no error, as PyTorch
    assert repr(ngd.Normal(0.0, 1.0)) == repr(td.Normal(0.0, 1.0))
    assert repr(ngd.constraints.real_vector) == repr(td.constraints.real_vector)
    assert repr(ngd.Categorical(probs=ng.tensor([0.5, 0.5])).support) == repr(
        td.Categorical(probs=torch.tensor([0.5, 0.5])).support)


def test_expand():
    n = ngd.Normal(ng.tensor([0.0, 1.0]), ng.tensor([1.0, 2.0])).expand((3, 2))
    assert n.batch_shape == (3, 2) and tuple(n.sample().shape) == (3, 2)
    np.testing.assert_allclose(n.log_prob(ng.zeros(3, 2)).numpy(),
                               td.Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0]))
                               .expand((3, 2)).log_prob(torch.zeros(3, 2)).numpy(), rtol=1e-6)
    c = ngd.Categorical(logits=ng.tensor([0.0, 1.0, 2.0])).expand((4,))
    assert c.batch_shape == (4,) and tuple(c.sample((2,)).shape) == (2, 4)
