"""numbagrad.distributions.transforms, TransformedDistribution and the constraint registry
(biject_to / transform_to) against torch.distributions: forward, inverse and
log-det-Jacobian values and their gradients on the same inputs; caching, shapes, domains,
reprs and errors."""

import math
import pickle

import numpy as np
import pytest

import numbagrad as ng
import numbagrad.distributions as ngd
import numbagrad.distributions.transforms as ngt

torch = pytest.importorskip("torch")
td = torch.distributions

from test_distributions import _same_error  # noqa: E402 (the comparison of errors, shared)

RNG = np.random.default_rng(11)
X = RNG.normal(size=(2, 3))
POS = RNG.uniform(0.5, 3.0, size=(2, 3))
UNIT = RNG.uniform(0.05, 0.95, size=(2, 3))
SIMPLEX = RNG.dirichlet(np.ones(4), size=2)  # (2, 4)
SQUARE = RNG.normal(size=(2, 3, 3))
TOL = 1e-10


def _check(fn, *arrays, tol=TOL):
    """fn(library, distributions, *params) gives a tensor: its value and the grads of its
    sum with respect to every param agree."""
    ours = [ng.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    a, b = fn(ng, ngd, *ours), fn(torch, td, *theirs)
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)
    assert a.requires_grad == b.requires_grad
    if not b.requires_grad:  # a constant (a Jacobian of number parameters)
        return
    a.sum().backward()
    b.sum().backward()
    for x, y in zip(ours, theirs):
        if y.grad is None:
            assert x.grad is None
            continue
        np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=tol, atol=tol)


def _same(a, b):
    """A numbagrad and a torch tensor are equal in shape and value."""
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(np.asarray(a.detach().numpy(), dtype=float),
                               np.asarray(b.detach().numpy(), dtype=float), rtol=TOL,
                               atol=TOL)


# ---------------------------------------------------------------- elementwise transforms

# (make(distributions module), an input in the domain, an output in the codomain)
ELEMENTWISE = {
    "exp": (lambda D: D.ExpTransform(), X, POS),
    "exp_inv": (lambda D: D.ExpTransform().inv, POS, X),
    "sigmoid": (lambda D: D.SigmoidTransform(), X, UNIT),
    "tanh": (lambda D: D.TanhTransform(), X, UNIT * 2 - 1),
    "softplus": (lambda D: D.SoftplusTransform(), X * 10, POS),
    "power": (lambda D: D.PowerTransform(2.5), POS, POS),
    "power_neg": (lambda D: D.PowerTransform(-1.0), POS, POS),
    "affine_numbers": (lambda D: D.AffineTransform(1.5, -2.0), X, X),
    "abs": (lambda D: D.AbsTransform(), X, POS),
}


@pytest.mark.parametrize("name", list(ELEMENTWISE))
def test_elementwise_forward_inverse_jacobian(name):
    make, x, y = ELEMENTWISE[name]
    # a number exponent becomes a float32 tensor; PyTorch's pow backward then computes
    # exponent - 1 in float32, numbagrad's in float64: they agree to float32 precision
    tol = 1e-7 if name.startswith("power") else TOL
    _check(lambda T, D, v: make(D)(v), x, tol=tol)
    _check(lambda T, D, v: make(D).inv(v), y, tol=tol)
    if name != "abs":  # not bijective: no Jacobian
        _check(lambda T, D, v: make(D).log_abs_det_jacobian(v, make(D)(v)), x, tol=tol)
    a, b = make(ngt), make(td.transforms)
    assert repr(a) == repr(b)
    assert repr(a.domain) == repr(b.domain) and repr(a.codomain) == repr(b.codomain)
    assert a.bijective == b.bijective and a.event_dim == b.event_dim
    assert repr(a.inv) == repr(b.inv) and a.inv.inv is a


def test_tensor_parameters_and_their_gradients():
    _check(lambda T, D, v, e: D.transforms.PowerTransform(e)(v), POS, POS2 := POS[::-1].copy())
    _check(lambda T, D, v, e: D.transforms.PowerTransform(e).log_abs_det_jacobian(
        v, v.pow(e)), POS, POS2)
    _check(lambda T, D, v, m, s: D.transforms.AffineTransform(m, s)(v), X, X[::-1].copy(), POS)
    _check(lambda T, D, v, m, s: D.transforms.AffineTransform(m, s).inv(v), X, X[::-1].copy(),
           POS)
    _check(lambda T, D, v, m, s: D.transforms.AffineTransform(m, s).log_abs_det_jacobian(
        v, v), X, X[::-1].copy(), POS)
    # event_dim sums the Jacobian over the event's dims
    _check(lambda T, D, v, s: D.transforms.AffineTransform(0.0, s, event_dim=1)
           .log_abs_det_jacobian(v, v), X, -POS)
    _check(lambda T, D, v: D.transforms.AffineTransform(0.0, 3.0, event_dim=2)
           .log_abs_det_jacobian(v, v), X)


def test_signs():
    assert ngt.ExpTransform().sign == 1 and ngt.SigmoidTransform().inv.sign == 1
    assert ngt.AffineTransform(0.0, -2.0).sign == -1 and ngt.AffineTransform(0.0, 0.0).sign == 0
    scale = np.array([1.0, -2.0, 0.0])
    np.testing.assert_array_equal(ngt.AffineTransform(0.0, ng.tensor(scale)).sign.numpy(),
                                  np.sign(scale))
    np.testing.assert_array_equal(ngt.PowerTransform(ng.tensor([-1.0, 2.0])).sign.numpy(),
                                  [-1.0, 1.0])
    compose = ngt.ComposeTransform([ngt.ExpTransform(), ngt.AffineTransform(0.0, -1.0)])
    assert compose.sign == -1
    with pytest.raises(NotImplementedError):
        ngt.Transform().sign


def test_equality():
    assert ngt.ExpTransform() == ngt.ExpTransform() and ngt.ExpTransform() != ngt.AbsTransform()
    assert ngt.ExpTransform().inv == ngt.ExpTransform().inv
    assert ngt.ExpTransform().inv != ngt.ExpTransform()
    assert ngt.AffineTransform(1.0, 2.0) == ngt.AffineTransform(1.0, 2.0)
    assert ngt.AffineTransform(1.0, 2.0) != ngt.AffineTransform(1.0, 3.0)
    assert ngt.AffineTransform(ng.tensor([1.0]), 2.0) == ngt.AffineTransform(ng.tensor([1.0]), 2.0)
    assert ngt.PowerTransform(2.0) == ngt.PowerTransform(2.0) != ngt.PowerTransform(3.0)
    parts = [ngt.ExpTransform(), ngt.SigmoidTransform()]
    assert ngt.ComposeTransform(parts) == ngt.ComposeTransform(list(parts))
    t = ngt.Transform()
    assert t == t and t != ngt.Transform()


# ---------------------------------------------------------------- caching

def test_cache_size_one_returns_the_cached_tensors():
    for T, D in ((ng, ngt), (torch, td.transforms)):
        t = D.ExpTransform(cache_size=1)
        x = T.tensor([0.5, 1.0])
        y = t(x)
        assert t(x) is y and t.inv(y) is x  # the very tensors: no recomputation
        assert t.inv(T.tensor([1.0])) is not x
    t0 = ngt.ExpTransform()
    x = ng.tensor([0.5])
    assert t0.inv(t0(x)) is not x  # cache_size 0 recomputes


def test_cache_makes_a_saturated_tanh_invertible():
    x = ng.tensor([30.0], dtype=ng.float32)
    t = ngt.TanhTransform(cache_size=1)
    y = t(x)
    assert t.inv(y) is x
    assert math.isinf(ngt.TanhTransform().inv(y).item())  # atanh(1): why the cache exists


def test_with_cache():
    t = ngt.ExpTransform()
    assert t.with_cache(0) is t
    c = t.with_cache(1)
    assert isinstance(c, ngt.ExpTransform) and c._cache_size == 1
    assert t.inv.with_cache(1)._cache_size == 1 and isinstance(t.inv.with_cache(1).inv,
                                                              ngt.ExpTransform)
    a = ngt.AffineTransform(1.0, 2.0, event_dim=1).with_cache(1)
    assert a._cache_size == 1 and a.event_dim == 1 and a.loc == 1.0
    composed = ngt.ComposeTransform([ngt.ExpTransform(), ngt.AffineTransform(0.0, 2.0)],
                                    cache_size=1)
    assert all(p._cache_size == 1 for p in composed.parts)
    assert ngt.IndependentTransform(ngt.ExpTransform(), 1, cache_size=1).base_transform \
        ._cache_size == 1

    class Custom(ngt.Transform):
        def __init__(self, k, cache_size=0):
            super().__init__(cache_size=cache_size)

    with pytest.raises(NotImplementedError, match="with_cache is not implemented"):
        Custom(1).with_cache(1)
    _same_error(lambda T, D: D.transforms.ExpTransform(cache_size=2))


def test_pickle_drops_the_inverse_link():
    t = ngt.ExpTransform()
    t.inv  # noqa: B018 (creates the inverse)
    clone = pickle.loads(pickle.dumps(t))
    assert clone._inv is None and isinstance(clone.inv.inv, ngt.ExpTransform)


# ---------------------------------------------------------------- structured transforms

def test_compose():
    make = lambda D: D.ComposeTransform([D.AffineTransform(0.5, 2.0), D.ExpTransform(),  # noqa
                                         D.AffineTransform(1.0, -3.0)])
    _check(lambda T, D, v: make(D.transforms)(v), X)
    _check(lambda T, D, v: make(D.transforms).inv(v), X)
    _check(lambda T, D, v: make(D.transforms).log_abs_det_jacobian(v, make(D.transforms)(v)), X)
    a, b = make(ngt), make(td.transforms)
    assert repr(a) == repr(b) and repr(a.inv) == repr(b.inv)
    assert a.inv.inv is a and a.bijective and a.sign == b.sign == -1
    # the empty composition is the identity
    assert repr(ngt.identity_transform) == repr(td.transforms.identity_transform)
    _same(ngt.identity_transform(ng.tensor(X)), td.transforms.identity_transform(torch.tensor(X)))
    _same(ngt.identity_transform.log_abs_det_jacobian(ng.tensor(X), ng.tensor(X)),
          td.transforms.identity_transform.log_abs_det_jacobian(torch.tensor(X), torch.tensor(X)))
    assert repr(ngt.identity_transform.domain) == "Real()"


def test_compose_event_dims_and_jacobian_sums():
    # an elementwise part followed by a coupling one: the whole input is one event
    make = lambda D: D.ComposeTransform([D.ExpTransform(), D.StickBreakingTransform()])  # noqa
    a, b = make(ngt), make(td.transforms)
    assert repr(a.domain) == repr(b.domain) and repr(a.codomain) == repr(b.codomain)
    assert a.domain.event_dim == b.domain.event_dim == 1
    _check(lambda T, D, v: make(D.transforms).log_abs_det_jacobian(v, make(D.transforms)(v)), X)
    make2 = lambda D: D.ComposeTransform([D.StickBreakingTransform(), D.ExpTransform().inv])  # noqa
    c, d = make2(ngt), make2(td.transforms)
    assert repr(c.codomain) == repr(d.codomain)
    _check(lambda T, D, v: make2(D.transforms).log_abs_det_jacobian(v, make2(D.transforms)(v)), X)


def test_independent_transform():
    make = lambda D: D.IndependentTransform(D.SigmoidTransform(), 1)  # noqa: E731
    _check(lambda T, D, v: make(D.transforms)(v), X)
    _check(lambda T, D, v: make(D.transforms).log_abs_det_jacobian(v, make(D.transforms)(v)), X)
    _check(lambda T, D, v: make(D.transforms).inv(v), UNIT)
    a, b = make(ngt), make(td.transforms)
    assert repr(a) == repr(b) and repr(a.domain) == repr(b.domain)
    assert a.event_dim == 1 and a.bijective and a.sign == 1
    _same_error(lambda T, D: D.transforms.IndependentTransform(D.transforms.ExpTransform(), 2)(
        T.zeros(3)))


def test_reshape_transform():
    make = lambda D: D.ReshapeTransform((2, 3), (3, 2))  # noqa: E731
    _check(lambda T, D, v: make(D.transforms)(v), np.stack([X, X * 2]))
    _check(lambda T, D, v: make(D.transforms).inv(v), np.stack([X, X]).reshape(2, 3, 2))
    a, b = make(ngt), make(td.transforms)
    _same(a.log_abs_det_jacobian(ng.tensor(np.stack([X, X])), None),
          b.log_abs_det_jacobian(torch.tensor(np.stack([X, X])), None))
    assert repr(a.domain) == repr(b.domain) and repr(a.codomain) == repr(b.codomain)
    assert tuple(a.forward_shape((5, 2, 3))) == tuple(b.forward_shape((5, 2, 3))) == (5, 3, 2)
    assert tuple(a.inverse_shape((3, 2))) == (2, 3)
    _same_error(lambda T, D: D.transforms.ReshapeTransform((2, 3), (4,)))
    _same_error(lambda T, D: D.transforms.ReshapeTransform((2, 3), (6,)).forward_shape(
        T.Size((2, 2))))
    _same_error(lambda T, D: D.transforms.ReshapeTransform((2, 3), (6,)).forward_shape(
        T.Size((3,))))


def test_softmax_transform():
    _check(lambda T, D, v: D.transforms.SoftmaxTransform()(v), X)
    _check(lambda T, D, v: D.transforms.SoftmaxTransform().inv(v), SIMPLEX)
    t = ngt.SoftmaxTransform()
    assert not t.bijective and repr(t.codomain) == "Simplex()" and t.event_dim == 1


def test_stick_breaking_transform():
    make = lambda D: D.transforms.StickBreakingTransform()  # noqa: E731
    _check(lambda T, D, v: make(D)(v), X)
    _check(lambda T, D, v: make(D).inv(v), SIMPLEX)
    _check(lambda T, D, v: make(D).log_abs_det_jacobian(v, make(D)(v)), X)
    y = make(ngd)(ng.tensor(X))
    np.testing.assert_allclose(y.sum(-1).numpy(), 1.0, rtol=1e-12)
    np.testing.assert_allclose(make(ngd).inv(y).numpy(), X, rtol=1e-9, atol=1e-12)
    assert tuple(make(ngd).forward_shape((2, 3))) == (2, 4)
    assert tuple(make(ngd).inverse_shape((2, 4))) == (2, 3)


def test_lower_cholesky_and_positive_definite_transforms():
    _check(lambda T, D, v: D.transforms.LowerCholeskyTransform()(v), SQUARE)
    L = np.tril(SQUARE) + np.eye(3) * 2.0 * (np.abs(SQUARE) + 0.1)  # positive diagonal
    L = np.tril(L)
    _check(lambda T, D, v: D.transforms.LowerCholeskyTransform().inv(v), L)
    _check(lambda T, D, v: D.transforms.PositiveDefiniteTransform()(v), SQUARE)
    pd = L @ np.swapaxes(L, -1, -2)
    _check(lambda T, D, v: D.transforms.PositiveDefiniteTransform().inv(v), pd, tol=1e-8)
    y = ngt.LowerCholeskyTransform()(ng.tensor(SQUARE))
    assert bool(ngd.constraints.lower_cholesky.check(y).all())


def test_cat_and_stack_transforms():
    v = RNG.uniform(0.1, 0.9, size=(4, 5))
    make = lambda D: D.CatTransform([D.ExpTransform(), D.SigmoidTransform(),  # noqa: E731
                                     D.AffineTransform(1.0, 2.0)], dim=1, lengths=[1, 2, 2])
    _check(lambda T, D, x: make(D.transforms)(x), v)
    _check(lambda T, D, x: make(D.transforms).inv(x), v)
    _check(lambda T, D, x: make(D.transforms).log_abs_det_jacobian(x, make(D.transforms)(x)), v)
    a, b = make(ngt), make(td.transforms)
    assert a.bijective and a.event_dim == b.event_dim == 0 and a.length == 5
    _same(a.domain.check(ng.tensor(v)), b.domain.check(torch.tensor(v)))
    _same(a.codomain.check(ng.tensor(v - 0.5)), b.codomain.check(torch.tensor(v - 0.5)))
    make0 = lambda D: D.CatTransform([D.ExpTransform(), D.AffineTransform(1.0, 2.0)],  # noqa
                                     dim=0, lengths=[1, 3])
    _check(lambda T, D, x: make0(D.transforms).log_abs_det_jacobian(x, make0(D.transforms)(x)), v)
    stack = lambda D: D.StackTransform([D.ExpTransform(), D.SigmoidTransform(),  # noqa
                                        D.PowerTransform(2.0)], dim=1)
    w = v[:, :3]
    _check(lambda T, D, x: stack(D.transforms)(x), w)
    _check(lambda T, D, x: stack(D.transforms).inv(x), w)
    _check(lambda T, D, x: stack(D.transforms).log_abs_det_jacobian(x, stack(D.transforms)(x)), w)
    s, t = stack(ngt), stack(td.transforms)
    _same(s.codomain.check(ng.tensor(w - 0.5)), t.codomain.check(torch.tensor(w - 0.5)))
    assert s.domain.event_dim == t.domain.event_dim
    with pytest.raises(AssertionError, match=r"x.size\(1\) = 3 must equal length 5"):
        make(ngt)(ng.tensor(w))


def test_cumulative_distribution_transform():
    make = lambda T, D, m, s: D.transforms.CumulativeDistributionTransform(  # noqa: E731
        D.Normal(m, s))
    _check(lambda T, D, m, s: make(T, D, m, s)(T.tensor(X)), X[::-1].copy(), POS)
    _check(lambda T, D, m, s: make(T, D, m, s).inv(T.tensor(UNIT)), X[::-1].copy(), POS)
    _check(lambda T, D, m, s: make(T, D, m, s).log_abs_det_jacobian(T.tensor(X), None),
           X[::-1].copy(), POS)
    t = ngt.CumulativeDistributionTransform(ngd.Normal(0.0, 1.0))
    assert repr(t.domain) == "Real()" and t.sign == 1 and t.with_cache(1)._cache_size == 1


def test_event_dim_mismatch_error():
    _same_error(lambda T, D: D.transforms.ComposeTransform(
        [D.transforms.StickBreakingTransform(), D.transforms.ReshapeTransform((4,), (2, 2))]
    ).event_dim)


# ---------------------------------------------------------------- TransformedDistribution

def _logistic(D, loc, scale):
    """The logistic distribution as PyTorch's docs build it."""
    return D.TransformedDistribution(D.Uniform(0.0, 1.0), [D.SigmoidTransform().inv,
                                                           D.AffineTransform(loc, scale)])


def test_transformed_log_prob_cdf_icdf():
    _check(lambda T, D, m, s: _logistic(D, m, s).log_prob(T.tensor(X)), X[::-1].copy(), POS)
    _check(lambda T, D, m, s: _logistic(D, m, s).cdf(T.tensor(X)), X[::-1].copy(), POS)
    _check(lambda T, D, m, s: _logistic(D, m, s).icdf(T.tensor(UNIT)), X[::-1].copy(), POS)
    # a decreasing chain: the cdf is flipped so that it still increases
    make = lambda D, r: D.TransformedDistribution(  # noqa: E731
        D.Exponential(r), [D.AffineTransform(0.0, -1.0)])
    _check(lambda T, D, r: make(D, r).cdf(-T.tensor(POS)), POS[::-1].copy())
    _check(lambda T, D, r: make(D, r).icdf(T.tensor(UNIT)), POS[::-1].copy())
    _check(lambda T, D, r: make(D, r).log_prob(-T.tensor(POS)), POS[::-1].copy())


def test_transformed_shapes_support_and_repr():
    a = _logistic(ngd, ng.tensor(X, requires_grad=True), ng.tensor(POS))
    b = _logistic(td, torch.tensor(X, requires_grad=True), torch.tensor(POS))
    # the Uniform(0, 1) base is expanded to the transforms' batch shape
    assert a.batch_shape == b.batch_shape == (2, 3) and a.event_shape == b.event_shape == ()
    assert a.base_dist.batch_shape == (2, 3)
    assert repr(a) == repr(b) == "TransformedDistribution()"
    assert repr(a.support) == repr(b.support) and a.has_rsample
    s = a.rsample((5,))
    assert tuple(s.shape) == (5, 2, 3) and s.requires_grad
    assert not a.sample((5,)).requires_grad
    e = a.expand((4, 2, 3))
    assert e.batch_shape == (4, 2, 3) and tuple(e.log_prob(ng.tensor(X)).shape) == (4, 2, 3)
    # a coupling transform makes the base's batch dim part of the event
    c = ngd.TransformedDistribution(ngd.Normal(ng.zeros(2, 3), 1.0),
                                    ngt.StickBreakingTransform())
    d = td.TransformedDistribution(td.Normal(torch.zeros(2, 3), 1.0),
                                   td.transforms.StickBreakingTransform())
    assert c.batch_shape == d.batch_shape == (2,) and c.event_shape == d.event_shape == (4,)
    assert isinstance(c.base_dist, ngd.Independent)
    assert repr(c.support) == repr(d.support)
    _same(c.log_prob(ng.tensor(SIMPLEX)), d.log_prob(torch.tensor(SIMPLEX)))
    assert tuple(c.sample((3,)).shape) == (3, 2, 4)
    ce = c.expand((5, 2))
    assert ce.batch_shape == (5, 2) and ce.base_dist.batch_shape == (5, 2)
    # no transforms: the base's support
    n = ngd.TransformedDistribution(ngd.Exponential(1.0), [])
    assert repr(n.support) == "GreaterThanEq(lower_bound=0.0)"


def test_transformed_samples_are_in_the_support_and_reparameterized():
    ng.manual_seed(0)
    loc = ng.tensor([0.0, 2.0], requires_grad=True)
    d = ngd.TransformedDistribution(ngd.Normal(loc, 0.5), [ngt.ExpTransform()])
    s = d.rsample((20000,))
    assert (s.detach().numpy() > 0).all()
    np.testing.assert_allclose(np.median(s.detach().numpy(), 0), np.exp([0.0, 2.0]), rtol=0.03)
    s.sum().backward()  # d exp(loc + eps)/d loc = the sample
    np.testing.assert_allclose(loc.grad.numpy(), s.detach().numpy().sum(0), rtol=1e-5)
    g = ngd.TransformedDistribution(ngd.Gamma(2.0, 1.0), ngt.ExpTransform())
    assert not g.has_rsample and (g.sample((10,)).numpy() > 1).all()


@pytest.mark.parametrize("case", [
    lambda T, D: D.TransformedDistribution(D.Normal(0.0, 1.0), [1]),
    lambda T, D: D.TransformedDistribution(D.Normal(0.0, 1.0), "exp"),
    lambda T, D: D.TransformedDistribution(D.Normal(0.0, 1.0),
                                           D.transforms.StickBreakingTransform()),
    lambda T, D: D.TransformedDistribution(D.Normal(0.0, 1.0),
                                           D.transforms.ExpTransform()).log_prob(T.tensor(-1.0)),
    lambda T, D: D.TransformedDistribution(D.Uniform(0.0, 1.0),
                                           D.transforms.ExpTransform()).cdf(T.tensor(5.0)),
    lambda T, D: D.TransformedDistribution(D.Normal(T.zeros(2), 1.0),
                                           D.transforms.ExpTransform()).log_prob(T.ones(3)),
], ids=lambda f: "")
def test_transformed_errors(case):
    _same_error(case)


def test_log_normal_is_a_transformed_distribution():
    d = ngd.LogNormal(ng.tensor(X), ng.tensor(POS))
    assert isinstance(d, ngd.TransformedDistribution)
    assert isinstance(d.base_dist, ngd.Normal) and d.transforms == [ngt.ExpTransform()]
    _check(lambda T, D, m, s: D.LogNormal(m, s).cdf(T.tensor(POS)), X, POS)
    _check(lambda T, D, m, s: D.LogNormal(m, s).icdf(T.tensor(UNIT)), X, POS)
    e = d.expand((4, 2, 3))
    assert type(e) is ngd.LogNormal and e.base_dist.batch_shape == (4, 2, 3)
    assert repr(e) == "LogNormal()"
    # KL through the shared transform reduces to that of the bases
    _check(lambda T, D, m, s: D.kl_divergence(D.LogNormal(m, s), D.LogNormal(0.3, 1.5)), X, POS)


def test_kl_transformed_needs_equal_transforms():
    p = ngd.TransformedDistribution(ngd.Normal(0.0, 1.0), [ngt.AffineTransform(0.0, 2.0)])
    q = ngd.TransformedDistribution(ngd.Normal(0.0, 1.0), [ngt.AffineTransform(0.0, 3.0)])
    with pytest.raises(NotImplementedError):
        ngd.kl_divergence(p, q)


# ---------------------------------------------------------------- biject_to / transform_to

CONSTRAINTS = {
    "real": lambda C: C.real,
    "real_vector": lambda C: C.real_vector,
    "positive": lambda C: C.positive,
    "nonnegative": lambda C: C.nonnegative,
    "greater_than": lambda C: C.greater_than(-1.5),
    "greater_than_eq": lambda C: C.greater_than_eq(2.0),
    "less_than": lambda C: C.less_than(3.0),
    "unit_interval": lambda C: C.unit_interval,
    "interval": lambda C: C.interval(-2.0, 5.0),
    "half_open_interval": lambda C: C.half_open_interval(1.0, 2.0),
    "simplex": lambda C: C.simplex,
    "independent_positive": lambda C: C.independent(C.positive, 1),
}


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("name", list(CONSTRAINTS))
def test_registry_transforms(registry, name):
    a = getattr(ngd, registry)(CONSTRAINTS[name](ngd.constraints))
    b = getattr(td, registry)(CONSTRAINTS[name](td.constraints))
    assert repr(a) == repr(b)
    make = lambda T, D: getattr(D, registry)(CONSTRAINTS[name](D.constraints))  # noqa: E731
    _check(lambda T, D, v: make(T, D)(v), X)
    y = a(ng.tensor(X))
    assert bool(CONSTRAINTS[name](ngd.constraints).check(y).all())
    _check(lambda T, D, v: make(T, D).inv(make(T, D)(v)), X)
    if a.bijective:
        _check(lambda T, D, v: make(T, D).log_abs_det_jacobian(v, make(T, D)(v)), X)
        np.testing.assert_allclose(a.inv(y).detach().numpy(), X, rtol=1e-8, atol=1e-10)
    if registry == "biject_to":
        assert a.bijective


def test_registry_matrix_constraints_and_tensor_bounds():
    t = ngd.transform_to(ngd.constraints.lower_cholesky)
    assert isinstance(t, ngt.LowerCholeskyTransform)
    assert isinstance(ngd.transform_to(ngd.constraints.positive_definite),
                      ngt.PositiveDefiniteTransform)
    pd = ngd.transform_to(ngd.constraints.positive_definite)(ng.tensor(SQUARE))
    assert bool(ngd.constraints.positive_definite.check(pd).all())
    _same_error(lambda T, D: D.biject_to(D.constraints.lower_cholesky))
    _same_error(lambda T, D: D.biject_to(D.constraints.boolean))
    _same_error(lambda T, D: D.transform_to(D.constraints.positive_definite).log_abs_det_jacobian(
        T.eye(2), T.eye(2)))
    # tensor bounds, as a Uniform's support has: sigmoid then an affine map
    make = lambda T, D, lo, hi: D.biject_to(D.Uniform(lo, hi).support)  # noqa: E731
    _check(lambda T, D, lo, hi: make(T, D, lo, hi)(T.tensor(X)), -POS, POS)
    _check(lambda T, D, lo, hi: make(T, D, lo, hi).log_abs_det_jacobian(
        T.tensor(X), make(T, D, lo, hi)(T.tensor(X))), -POS, POS)
    cat = ngd.constraints.cat([ngd.constraints.positive, ngd.constraints.real], 0, [2, 1])
    c = ngd.biject_to(cat)
    assert isinstance(c, ngt.CatTransform)
    _same(c(ng.tensor([0.0, 1.0, -3.0])), torch.tensor([1.0, math.e, -3.0], dtype=torch.float32))
    s = ngd.transform_to(ngd.constraints.stack([ngd.constraints.unit_interval,
                                                ngd.constraints.positive], 0))
    assert isinstance(s, ngt.StackTransform)
    np.testing.assert_allclose(s(ng.tensor([0.0, 0.0])).numpy(), [0.5, 1.0])


def test_registry_register():
    class MyConstraint(ngd.constraints.Constraint):
        def check(self, value):
            return value > 7

    reg = ngd.constraint_registry.ConstraintRegistry()
    reg.register(MyConstraint, lambda c: ngt.AffineTransform(7.0, 1.0))
    assert reg(MyConstraint())(ng.tensor(1.0)).item() == 8.0

    @reg.register(ngd.constraints.positive)
    def _factory(constraint):
        return ngt.SoftplusTransform()

    assert isinstance(reg(ngd.constraints.greater_than(3.0)), ngt.SoftplusTransform)
    _same_error(lambda T, D: D.constraint_registry.ConstraintRegistry().register(int, print))
    _same_error(lambda T, D: D.constraint_registry.ConstraintRegistry()(D.constraints.real))


def test_transform_to_optimizes_a_constrained_parameter():
    """The VI pattern: an unconstrained tensor mapped onto a Normal's scale by
    transform_to, then fitted by gradient steps; the same steps as PyTorch's."""
    data = np.random.default_rng(3).normal(1.0, 2.0, size=200)
    results = []
    for T, D in ((ng, ngd), (torch, td)):
        loc = T.zeros(1, dtype=T.float64, requires_grad=True)
        raw = T.zeros(1, dtype=T.float64, requires_grad=True)
        opt = T.optim.Adam([loc, raw], lr=0.1)
        to_scale = D.transform_to(D.Normal.arg_constraints["scale"])
        for _ in range(100):
            opt.zero_grad()
            loss = -D.Normal(loc, to_scale(raw)).log_prob(T.tensor(data)).mean()
            loss.backward()
            opt.step()
        results.append((loc.detach().numpy().copy(), to_scale(raw).detach().numpy().copy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-9)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-9)
    np.testing.assert_allclose(results[0][1], data.std(), rtol=0.05)


# ---------------------------------------------------------------- new constraints

@pytest.mark.parametrize("name, value", [
    ("lower_triangular", np.tril(SQUARE)),
    ("lower_triangular", SQUARE),
    ("square", SQUARE),
    ("square", np.zeros((2, 3, 2))),
    ("positive_semidefinite", np.stack([np.eye(3), -np.eye(3)])),
    ("positive_semidefinite", np.stack([np.eye(3), SQUARE[0]])),
    ("symmetric", np.zeros((2, 3, 2))),
])
def test_matrix_constraints(name, value):
    a = getattr(ngd.constraints, name).check(ng.tensor(value))
    b = getattr(td.constraints, name).check(torch.tensor(value))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert repr(getattr(ngd.constraints, name)) == repr(getattr(td.constraints, name))


def test_multinomial_cat_stack_and_mixture_constraints():
    v = np.array([[1.0, 2.0, 0.0], [3.0, 1.0, 1.0], [-1.0, 1.0, 0.0]])
    for T, D in ((ng, ngd), (torch, td)):
        assert D.constraints.multinomial(4).event_dim == 1
    np.testing.assert_array_equal(ngd.constraints.multinomial(4).check(ng.tensor(v)).numpy(),
                                  td.constraints.multinomial(4).check(torch.tensor(v)).numpy())
    m = ngd.constraints.MixtureSameFamilyConstraint(ngd.constraints.positive)
    tm = td.constraints.MixtureSameFamilyConstraint(td.constraints.positive)
    assert repr(m) == repr(tm) and m.event_dim == 0
    np.testing.assert_array_equal(m.check(ng.tensor(v)).numpy(), tm.check(torch.tensor(v)).numpy())
    mi = ngd.constraints.MixtureSameFamilyConstraint(ngd.constraints.simplex)
    np.testing.assert_array_equal(
        mi.check(ng.tensor(SIMPLEX)).numpy(),
        td.constraints.MixtureSameFamilyConstraint(td.constraints.simplex).check(
            torch.tensor(SIMPLEX)).numpy())
    stack = lambda C: C.stack([C.positive, C.real_vector], dim=-1)  # noqa: E731
    assert stack(ngd.constraints).event_dim == stack(td.constraints).event_dim
    assert ngd.constraints.cat([ngd.constraints.boolean, ngd.constraints.real]).is_discrete


# ---------------------------------------------------------------- float32

def test_float32_values_dtypes_and_clamps():
    x32 = X.astype(np.float32) * 30  # large enough that sigmoid saturates in float32
    for make in (lambda D: D.SigmoidTransform(), lambda D: D.StickBreakingTransform(),
                 lambda D: D.TanhTransform(), lambda D: D.SoftplusTransform()):
        a, b = make(ngt)(ng.tensor(x32)), make(td.transforms)(torch.tensor(x32))
        assert a.dtype == ng.float32
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-6)
        la = make(ngt).log_abs_det_jacobian(ng.tensor(x32), a)
        lb = make(td.transforms).log_abs_det_jacobian(torch.tensor(x32), b)
        np.testing.assert_allclose(la.numpy(), lb.numpy(), rtol=1e-5, atol=1e-4)
    y = ngt.SigmoidTransform()(ng.tensor([100.0, -100.0]))
    assert 0 < y[1].item() and y[0].item() < 1  # clipped into the open interval
    assert np.isfinite(ngt.SigmoidTransform().inv(y).numpy()).all()
    a = _logistic(ngd, 0.5, 2.0).log_prob(ng.tensor(X.astype(np.float32)))
    b = _logistic(td, 0.5, 2.0).log_prob(torch.tensor(X.astype(np.float32)))
    assert a.dtype == ng.float32
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
