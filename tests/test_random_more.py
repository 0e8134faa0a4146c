"""Tensor.cauchy_, torch.poisson, torch.binomial, torch._standard_gamma (and its
reparameterization gradient, torch._standard_gamma_grad) and torch._sample_dirichlet: their
distributions (moments within a few standard errors, for fixed seeds), PyTorch's edge values,
dtypes, shapes, nodes and errors. numbagrad's streams are not PyTorch's: draws are compared by
their statistics, everything deterministic against torch."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import numbagrad as ng  # noqa: E402

N = 40000  # (draws per statistic: a mean's standard error is std / 200)


def _dtype(lib, name):
    return getattr(lib, name)


# ---------------------------------------------------------------- cauchy_


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cauchy_quartiles(dtype):
    ng.manual_seed(1)
    x = ng.empty(N, dtype=getattr(ng, dtype))
    assert x.cauchy_(1.5, 2.0) is x and x.dtype is getattr(ng, dtype)
    q1, med, q3 = np.quantile(x.numpy(), [0.25, 0.5, 0.75])
    # (the quartiles of Cauchy(m, s) are m -+ s; their standard error here is about 0.02)
    assert med == pytest.approx(1.5, abs=0.05)
    assert q1 == pytest.approx(-0.5, abs=0.08) and q3 == pytest.approx(3.5, abs=0.08)
    y = ng.empty(N).cauchy_(median=-3.0, sigma=0.5)
    assert np.median(y.numpy()) == pytest.approx(-3.0, abs=0.02)


def test_cauchy_edges_and_node(lib):
    assert lib.isnan(lib.empty(3).cauchy_(math.nan, 1.0)).all()
    y = lib.empty(400).cauchy_(0.0, math.inf)
    assert lib.isinf(y).all() and (y > 0).any() and (y < 0).any()
    leaf = lib.zeros(3, requires_grad=True)
    y = leaf.clone().cauchy_()
    assert type(y.grad_fn).__name__ == "CauchyBackward0"
    y.sum().backward()
    assert leaf.grad.tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in "
                                           "an in-place operation."):
        leaf.cauchy_()


@pytest.mark.parametrize("call, kind, message", [
    (lambda L: L.empty(3).cauchy_(0, 0.0), RuntimeError,
     "cauchy_ expects sigma > 0.0, but found sigma=0"),
    (lambda L: L.empty(3).cauchy_(0, -1.0), RuntimeError,
     "cauchy_ expects sigma > 0.0, but found sigma=-1"),
    # (the sigma check comes first, then the dtype's, also for an empty tensor)
    (lambda L: L.empty(3, dtype=L.int64).cauchy_(0, -1.0), RuntimeError,
     "cauchy_ expects sigma > 0.0, but found sigma=-1"),
    (lambda L: L.empty(0, dtype=L.int64).cauchy_(), RuntimeError,
     "Cauchy distribution is a continuous probability distribution. dtype must be a floating "
     "point but you specified long int"),
    (lambda L: L.empty(2, dtype=L.bool).cauchy_(), RuntimeError,
     "Cauchy distribution is a continuous probability distribution. dtype must be a floating "
     "point but you specified bool"),
])
def test_cauchy_errors(lib, call, kind, message):
    with pytest.raises(kind) as e:
        call(lib)
    assert str(e.value) == message


# ---------------------------------------------------------------- poisson


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_poisson_moments(dtype):
    ng.manual_seed(2)
    rates = ng.tensor([0.5, 3.0, 40.0, 1000.0], dtype=getattr(ng, dtype))
    draws = ng.poisson(rates.expand(N, 4))
    assert draws.dtype is rates.dtype and tuple(draws.shape) == (N, 4)
    d = draws.numpy().astype(np.float64)
    assert (d == np.round(d)).all() and (d >= 0).all()
    r = rates.numpy().astype(np.float64)
    se = np.sqrt(r / N)
    np.testing.assert_array_less(np.abs(d.mean(0) - r), 5 * se)
    np.testing.assert_allclose(d.var(0), r, rtol=0.05)


def test_poisson_edges_node_and_errors(lib):
    y = lib.poisson(lib.tensor([0.0, math.inf, 1e30, 0.0]))
    # (past int64's range PyTorch's count wraps to its lowest value)
    assert y.tolist() == [0.0, -2.0**63, -2.0**63, 0.0]
    assert lib.poisson(lib.tensor(0.0, dtype=lib.float64)).shape == ()
    r = lib.tensor([1.0, 2.0], requires_grad=True)
    y = lib.poisson(r)
    assert type(y.grad_fn).__name__ == "PoissonBackward0"
    y.sum().backward()
    assert r.grad.tolist() == [0.0, 0.0]
    for rates in ([-1.0, 2.0], [math.nan]):
        with pytest.raises(RuntimeError, match="^invalid Poisson rate, expected rate to be "
                                               "non-negative$"):
            lib.poisson(lib.tensor(rates))
    with pytest.raises(NotImplementedError, match="^\"poisson_cpu\" not implemented for "
                                                  "'Long'$"):
        lib.poisson(lib.tensor([1, 2]))


def test_poisson_is_reproducible_and_takes_a_generator():
    ng.manual_seed(7)
    a = ng.poisson(ng.full((50,), 3.0))
    ng.manual_seed(7)
    b = ng.poisson(ng.full((50,), 3.0))
    assert a.tolist() == b.tolist()
    g1, g2 = ng.Generator().manual_seed(3), ng.Generator().manual_seed(3)
    c = ng.poisson(ng.full((50,), 3.0), generator=g1)
    ng.poisson(ng.full((50,), 3.0))  # (the default generator: no effect on g2)
    assert ng.poisson(ng.full((50,), 3.0), generator=g2).tolist() == c.tolist()


# ---------------------------------------------------------------- binomial


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binomial_moments(dtype):
    ng.manual_seed(3)
    count = ng.tensor([[10.0], [200.0], [5.0]], dtype=getattr(ng, dtype))
    prob = ng.tensor([0.5, 0.05, 0.9], dtype=getattr(ng, dtype))
    draws = ng.binomial(count.expand(3, 3).reshape(1, 3, 3).expand(N // 8, 3, 3),
                        prob.expand(N // 8, 3, 3))
    assert draws.dtype is count.dtype and tuple(draws.shape) == (N // 8, 3, 3)
    d = draws.numpy().astype(np.float64)
    n, p = np.broadcast_arrays(count.numpy().astype(np.float64), prob.numpy())
    assert (d >= 0).all() and (d <= n).all() and (d == np.round(d)).all()
    mean, var = n * p, n * p * (1 - p)
    np.testing.assert_array_less(np.abs(d.mean(0) - mean), 5 * np.sqrt(var / d.shape[0]))
    np.testing.assert_allclose(d.var(0), var, rtol=0.1)


def test_binomial_edges_match_pytorch(lib):
    count = lib.tensor([-10.0, 0.0, 7.0, 7.0, 7.0, 2.5, 10.0, 3.0, math.nan])
    prob = lib.tensor([0.5, 0.5, 0.0, 1.0, -0.5, 1.5, math.nan, 1.0, 1.0])
    y = lib.binomial(count, prob).tolist()
    assert y[:6] == [0.0, 0.0, 0.0, 7.0, 0.0, 2.5] and math.isnan(y[6]) and y[7] == 3.0
    assert math.isnan(y[8])
    # (a fractional count: floor(count) trials)
    z = lib.binomial(lib.full((2000,), 2.5), lib.full((2000,), 0.5))
    assert set(z.tolist()) == {0.0, 1.0, 2.0}
    assert lib.binomial(lib.tensor([10.0, 5.0]), lib.tensor([0.5])).shape == (2,)


def test_binomial_of_a_nan_count_is_nan():
    # (PyTorch's sampler never ends there: its loop compares a sum of draws with NaN)
    assert math.isnan(ng.binomial(ng.tensor([math.nan]), ng.tensor([0.5])).item())


def test_binomial_node_and_errors(lib):
    c = lib.tensor([10.0], requires_grad=True)
    y = lib.binomial(c, lib.tensor([0.5], requires_grad=True))
    assert type(y.grad_fn).__name__ == "NotImplemented"
    with pytest.raises(RuntimeError, match="^derivative for aten::binomial is not implemented$"):
        y.sum().backward()
    cases = [
        (lambda: lib.binomial(lib.tensor([10]), lib.tensor([0.5])), ValueError,
         "binomial only supports floating-point dtypes for count, got: Long"),
        (lambda: lib.binomial(lib.tensor([10.0]), lib.tensor([True])), ValueError,
         "binomial only supports floating-point dtypes for prob, got: Bool"),
        (lambda: lib.binomial(lib.tensor([10.0]), lib.tensor([0.5], dtype=lib.float64)),
         RuntimeError, "Found dtype Double but expected Float"),
        (lambda: lib.binomial(lib.tensor([10.0], dtype=lib.float64), lib.tensor([0.5])),
         RuntimeError, "Found dtype Float but expected Double"),
        (lambda: lib.binomial(10.0, lib.tensor([0.5])), TypeError,
         "binomial(): argument 'count' (position 1) must be Tensor, not float"),
        (lambda: lib.binomial(lib.tensor([1.0, 2.0]), lib.tensor([0.5, 0.5, 0.5])),
         RuntimeError,
         "The size of tensor a (2) must match the size of tensor b (3) at non-singleton "
         "dimension 0"),
    ]
    for call, kind, message in cases:
        with pytest.raises(kind) as e:
            call()
        assert str(e.value) == message


# ---------------------------------------------------------------- _standard_gamma


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_standard_gamma_moments(dtype):
    ng.manual_seed(4)
    alpha = ng.tensor([0.3, 1.0, 5.0, 100.0], dtype=getattr(ng, dtype))
    x = ng._standard_gamma(alpha.expand(N, 4))
    assert x.dtype is alpha.dtype and tuple(x.shape) == (N, 4)
    d = x.numpy().astype(np.float64)
    a = alpha.numpy().astype(np.float64)
    assert (d > 0).all()
    np.testing.assert_array_less(np.abs(d.mean(0) - a), 5 * np.sqrt(a / N))
    np.testing.assert_allclose(d.var(0), a, rtol=0.06)


def test_standard_gamma_edges_match_pytorch(lib):
    for name in ("float32", "float64"):
        dt = _dtype(lib, name)
        tiny = np.finfo(name).tiny
        y = lib._standard_gamma(lib.tensor([0.0, -1.0, math.nan, math.inf], dtype=dt))
        assert y.dtype == dt and y.tolist() == [tiny, tiny, tiny, math.inf]
    # (draws that underflow are the smallest normal number too)
    y = lib._standard_gamma(lib.full((200,), 1e-3, dtype=lib.float64))
    assert (y >= np.finfo(np.float64).tiny).all()
    assert lib._standard_gamma(lib.tensor(2.0)).shape == ()
    with pytest.raises(NotImplementedError, match="^\"gamma_cpu\" not implemented for 'Long'$"):
        lib._standard_gamma(lib.tensor([1, 2]))
    with pytest.raises(NotImplementedError, match="^\"gamma_cpu\" not implemented for 'Int'$"):
        lib._standard_gamma(lib.tensor([1, 2], dtype=lib.int32))


def test_standard_gamma_gradient_is_the_reparameterization_gradient(lib):
    a = lib.tensor([0.4, 1.0, 2.0, 9.0], dtype=lib.float64, requires_grad=True)
    x = lib._standard_gamma(a)
    assert type(x.grad_fn).__name__ == "StandardGammaBackward0"
    g, = lib.autograd.grad(x.sum(), a, create_graph=True)
    want = lib._standard_gamma_grad(a.detach(), x.detach())
    np.testing.assert_allclose(g.detach().numpy(), want.numpy(), rtol=1e-14)
    # (PyTorch's _standard_gamma_grad has no derivative)
    assert type(g.grad_fn).__name__ == "MulBackward0"
    with pytest.raises(NotImplementedError, match="^the derivative for '_standard_gamma_grad' is "
                                                  "not implemented\\.$"):
        lib.autograd.grad(g.sum(), a)


def test_the_mean_reparameterization_gradient_is_that_of_the_mean():
    """E[x] = alpha, so E[dx/dalpha] = 1 (and E[x dx/dalpha] = alpha + 1/2 d Var/dalpha =
    alpha + 1/2, from E[x^2] = alpha^2 + alpha)."""
    ng.manual_seed(5)
    for alpha in (0.2, 1.0, 3.0, 30.0):
        a = ng.full((N,), alpha, dtype=ng.float64, requires_grad=True)
        x = ng._standard_gamma(a)
        g, = ng.autograd.grad(x.sum(), a)
        g, x = g.numpy(), x.detach().numpy()
        assert g.mean() == pytest.approx(1.0, abs=5 * g.std() / math.sqrt(N))
        assert (g * x).mean() == pytest.approx(alpha + 0.5, abs=5 * (g * x).std() / math.sqrt(N))


# ---------------------------------------------------------------- _standard_gamma_grad

SGG_A = [0.05, 0.3, 0.9, 1.0, 2.5, 7.9, 8.1, 30.0, 200.0]
SGG_R = [0.05, 0.3, 0.7, 0.95, 1.0, 1.05, 1.3, 2.0]


def test_standard_gamma_grad_matches_pytorch_within_its_approximation():
    """PyTorch approximates it (a 6-term series below x = 0.8, Rice's saddle point expansion
    for alpha > 8, a fitted rational function between): within 1e-2 of the exact gradient on
    this grid, 1e-3 in most places. numbagrad computes it to the precision (next test)."""
    a, r = [v.ravel() for v in np.meshgrid(SGG_A, SGG_R)]
    x = a * r
    got = ng._standard_gamma_grad(ng.tensor(a), ng.tensor(x)).numpy()
    want = torch._standard_gamma_grad(torch.tensor(a), torch.tensor(x)).numpy()
    rel = np.abs(got - want) / np.abs(want)
    assert rel.max() < 1e-2 and np.median(rel) < 2e-4


def test_standard_gamma_grad_is_the_implicit_derivative():
    """Held at the quantile: P(a + h, x + h g) = P(a - h, x - h g) to O(h^3) (igamma, checked
    against mpmath in test_special_more.py)."""
    a, r = [v.ravel() for v in np.meshgrid(SGG_A, SGG_R)]
    x = a * r
    g = ng._standard_gamma_grad(ng.tensor(a), ng.tensor(x)).numpy()
    h = 1e-5 * a
    up = ng.igamma(ng.tensor(a + h), ng.tensor(x + h * g)).numpy()
    down = ng.igamma(ng.tensor(a - h), ng.tensor(x - h * g)).numpy()
    density = np.exp((a - 1) * np.log(x) - x - np.vectorize(math.lgamma)(a))
    # (the residual, as a relative error of g: (up - down) / (2 h g p))
    np.testing.assert_array_less(np.abs(up - down) / (2 * h * np.abs(g) * density), 1e-6)


def test_standard_gamma_grad_against_mpmath():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    pairs = [(0.05, 0.01), (0.3, 0.5), (1.0, 1.0), (2.5, 0.4), (8.1, 9.0), (30.0, 30.0),
             (200.0, 190.0), (200.0, 800.0)]

    def exact(a, x):
        a, x = mpmath.mpf(a), mpmath.mpf(x)
        dq = mpmath.diff(lambda s: mpmath.gammainc(s, x, mpmath.inf, regularized=True), a)
        return float(dq * mpmath.gamma(a) / (x ** (a - 1) * mpmath.exp(-x)))

    a, x = zip(*pairs)
    got = ng._standard_gamma_grad(ng.tensor(a, dtype=ng.float64),
                                  ng.tensor(x, dtype=ng.float64)).numpy()
    np.testing.assert_allclose(got, [exact(*p) for p in pairs], rtol=1e-11)


def test_standard_gamma_grad_edges_and_errors(lib):
    a = lib.tensor([1.0, 1.0, 0.0, -1.0, 1.0, math.nan, math.inf, 2.0], dtype=lib.float64)
    x = lib.tensor([0.0, math.inf, 1.0, 1.0, -1.0, 1.0, 1.0, math.nan], dtype=lib.float64)
    y = lib._standard_gamma_grad(a, x).tolist()
    # (0 at x = 0, and where PyTorch's series below 0.8 gives NaN, as PyTorch's)
    assert y[0] == 0.0 and y[4] == 0.0
    assert all(math.isnan(v) for v in y[1:4] + y[5:])
    assert lib._standard_gamma_grad(lib.tensor([1.0, 2.0]), lib.tensor([0.5])).shape == (2,)
    with pytest.raises(NotImplementedError, match="^\"_standard_gamma_grad_cpu\" not "
                                                  "implemented for 'Long'$"):
        lib._standard_gamma_grad(lib.tensor([1]), lib.tensor([1]))
    with pytest.raises(RuntimeError, match="^Found dtype Double but expected Float$"):
        lib._standard_gamma_grad(lib.tensor([1.0]), lib.tensor([0.5], dtype=lib.float64))
    s = lib.tensor([1.0, 2.0], requires_grad=True)
    y = lib._standard_gamma_grad(s, lib.tensor([1.0, 1.0]))
    assert type(y.grad_fn).__name__ == "StandardGammaGradBackward0"
    with pytest.raises(NotImplementedError, match="^the derivative for '_standard_gamma_grad' is "
                                                  "not implemented\\.$"):
        y.sum().backward()
    # (no derivative for the sample: a result of it alone records nothing)
    o = lib.tensor([1.0, 2.0], requires_grad=True)
    assert not lib._standard_gamma_grad(lib.tensor([1.0, 1.0]), o).requires_grad


def test_float32_standard_gamma_grad():
    a = ng.tensor([0.3, 1.0, 2.5, 9.0]), ng.tensor([0.2, 1.5, 2.0, 8.0])
    got = ng._standard_gamma_grad(*a).numpy()
    want = ng._standard_gamma_grad(*[t.double() for t in a]).numpy()
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5)


# ---------------------------------------------------------------- _sample_dirichlet


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dirichlet_moments(dtype):
    ng.manual_seed(6)
    alpha = ng.tensor([[0.5, 1.0, 3.5], [2.0, 2.0, 2.0]], dtype=getattr(ng, dtype))
    d = ng._sample_dirichlet(alpha.expand(N // 4, 2, 3))
    assert d.dtype is alpha.dtype and tuple(d.shape) == (N // 4, 2, 3)
    v = d.numpy().astype(np.float64)
    np.testing.assert_allclose(v.sum(-1), 1, rtol=1e-5 if dtype == "float32" else 1e-12)
    a = alpha.numpy().astype(np.float64)
    a0 = a.sum(-1, keepdims=True)
    mean, var = a / a0, a * (a0 - a) / (a0**2 * (a0 + 1))
    np.testing.assert_array_less(np.abs(v.mean(0) - mean), 5 * np.sqrt(var / v.shape[0]))
    np.testing.assert_allclose(v.var(0), var, rtol=0.08)


def test_dirichlet_edges_node_and_errors(lib):
    for name in ("float32", "float64"):
        dt = _dtype(lib, name)
        info = np.finfo(name)
        top = float(np.nextafter(info.dtype.type(1), info.dtype.type(0)))
        assert lib._sample_dirichlet(lib.tensor(1.0, dtype=dt)).tolist() == top
        # (a concentration not above 0: the smallest normal gamma draw, over the row's sum)
        for alpha in ([-1.0, 2.0], [0.0, 3.0]):
            low, high = lib._sample_dirichlet(lib.tensor([alpha], dtype=dt)).tolist()[0]
            assert high == top and info.tiny <= low < 1e4 * info.tiny
    assert lib._sample_dirichlet(lib.tensor([-1.0, 2.0])).tolist()[0] == np.finfo("f4").tiny
    assert lib._sample_dirichlet(lib.empty(0, 3)).shape == (0, 3)
    y = lib._sample_dirichlet(lib.tensor([1.0, 2.0], requires_grad=True))
    assert type(y.grad_fn).__name__ == "NotImplemented"
    with pytest.raises(RuntimeError, match="^derivative for aten::_sample_dirichlet is not "
                                           "implemented$"):
        y.sum().backward()
    with pytest.raises(NotImplementedError, match="^\"dirichlet\" not implemented for 'Long'$"):
        lib._sample_dirichlet(lib.tensor([1, 2]))


def test_samplers_follow_the_seed():
    def draw():
        return [ng._standard_gamma(ng.full((5,), 2.0)).tolist(),
                ng._sample_dirichlet(ng.ones(2, 3)).tolist(),
                ng.binomial(ng.full((5,), 9.0), ng.full((5,), 0.3)).tolist(),
                ng.empty(5).cauchy_().tolist()]

    ng.manual_seed(11)
    first = draw()
    ng.manual_seed(11)
    assert draw() == first
    g = ng.Generator().manual_seed(11)
    assert ng._standard_gamma(ng.full((5,), 2.0), generator=g).tolist() == first[0]


def test_the_other_fills_draw_their_distributions():
    """exponential_, geometric_ and log_normal_ (ops/random.py had them): their means."""
    ng.manual_seed(8)
    e = ng.empty(N, dtype=ng.float64).exponential_(2.0).numpy()
    assert e.mean() == pytest.approx(0.5, abs=5 * 0.5 / math.sqrt(N)) and (e >= 0).all()
    g = ng.empty(N, dtype=ng.float64).geometric_(0.25).numpy()
    assert (g >= 1).all() and g.mean() == pytest.approx(4.0, abs=5 * math.sqrt(12) / math.sqrt(N))
    ln = np.log(ng.empty(N, dtype=ng.float64).log_normal_(1.0, 0.5).numpy())
    assert ln.mean() == pytest.approx(1.0, abs=5 * 0.5 / math.sqrt(N))
    assert ln.std() == pytest.approx(0.5, rel=0.03)


def test_random_bounds_by_keyword_as_pytorch():
    """``random_``'s overloads (), (to) and (from, to), by position or keyword: ``to=n`` alone
    draws from [0, n); ``from`` alone by keyword is PyTorch's TypeError, as is an unknown
    keyword."""
    for lib in (ng, torch):
        t = lib.zeros(400, dtype=lib.float64)
        r = t.random_(to=3)
        assert r.min().item() == 0.0 and r.max().item() == 2.0
        assert sorted(t.random_(2, to=4).unique().tolist()) == [2.0, 3.0]
        assert set(lib.zeros(50, dtype=lib.int64).random_(**{"from": 5, "to": 7}).tolist()) \
            == {5, 6}
        with pytest.raises(TypeError, match=r"^random_\(\) received an invalid combination of "
                                            r"arguments - got \(from=int, \), but expected"):
            t.random_(**{"from": 2})
    messages = []
    for lib in (ng, torch):
        with pytest.raises(TypeError) as e:
            lib.zeros(2).random_(bogus=1)
        messages.append(str(e.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith("random_() received an invalid combination of arguments - "
                                  "got (bogus=int, ), but expected one of:")
