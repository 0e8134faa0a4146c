"""Functions that course programs (tests/programs_b/) needed, each against PyTorch: values,
dtypes, gradients and error messages."""

import math

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))
A[1] = 0.0  # a zero row: the norms' subgradient there
A[2, 1] = A[2, 2] = 3.0  # a tie for the largest |x|


def _both(fn, *arrays, grad=True):
    """``fn`` on each library's tensors made from ``arrays``: (outputs, input grads) per lib,
    as NumPy, with the backward of the outputs' sum of squares."""
    res = []
    for lib in (ng, torch):
        ts = [lib.tensor(a, requires_grad=grad and np.issubdtype(a.dtype, np.floating))
              for a in arrays]
        out = fn(lib, *ts)
        outs = out if isinstance(out, tuple) else (out,)
        grads = []
        if grad and any(o.requires_grad for o in outs):
            sum((o * o).sum() for o in outs if o.requires_grad).backward()
            grads = [None if t.grad is None else t.grad.numpy() for t in ts]
        res.append(([o.detach().numpy() for o in outs], [str(o.dtype).split(".")[-1] for o in outs],
                    grads))
    return res


def _assert_same(fn, *arrays, grad=True, rtol=1e-6):
    (mo, md, mg), (to, td, tg) = _both(fn, *arrays, grad=grad)
    assert md == td
    for m, t in zip(mo, to):
        assert m.shape == t.shape
        np.testing.assert_allclose(m, t, rtol=rtol, atol=1e-12)
    assert len(mg) == len(tg)
    for m, t in zip(mg, tg):
        assert (m is None) == (t is None)
        if m is not None:
            np.testing.assert_allclose(m, t, rtol=rtol, atol=1e-12)


def _error(fn, lib):
    with pytest.raises(Exception) as e:
        fn(lib)
    return type(e.value), str(e.value)


def _same_error(fn):
    assert _error(fn, ng) == _error(fn, torch)


@pytest.mark.parametrize("p", [1, 3, 0.5, 1.5, math.inf, -math.inf, 0])
@pytest.mark.parametrize("dim,keepdim", [(None, False), (1, False), (0, True), ((0, 1), False)])
def test_norm_of_any_order(p, dim, keepdim):
    _assert_same(lambda lib, x: x.norm(p=p, dim=dim, keepdim=keepdim), A)
    _assert_same(lambda lib, x: lib.norm(x, p, dim, keepdim), A)


def test_norm_node_and_double_backward():
    x = ng.tensor(A + 0.5, requires_grad=True)
    tx = torch.tensor(A + 0.5, requires_grad=True)
    y, ty = x.norm(p=3, dim=1), tx.norm(p=3, dim=1)
    assert y.grad_fn.name() == ty.grad_fn.name() == "LinalgVectorNormBackward0"
    (g,) = ng.autograd.grad(y.sum(), x, create_graph=True)
    (tg,) = torch.autograd.grad(ty.sum(), tx, create_graph=True)
    (gg,) = ng.autograd.grad(g.pow(2).sum(), x)
    (tgg,) = torch.autograd.grad(tg.pow(2).sum(), tx)
    np.testing.assert_allclose(gg.numpy(), tgg.numpy(), rtol=1e-6)
    _same_error(lambda lib: lib.tensor([1, 2]).norm(p=1))


def test_isnan_isinf_isfinite():
    v = np.array([np.nan, np.inf, -np.inf, 1.0, 0.0, -2.5])
    for name in ("isnan", "isinf", "isfinite"):
        _assert_same(lambda lib, x: getattr(lib, name)(x), v, grad=False)
        _assert_same(lambda lib, x: getattr(x.float(), name)(), v, grad=False)
        _assert_same(lambda lib, x: getattr(x, name)(), np.array([3, -1]), grad=False)


def test_unique():
    v = np.array([3, 1, 2, 3, 3, 1, 0])
    _assert_same(lambda lib, x: lib.unique(x), v)
    _assert_same(lambda lib, x: lib.unique(x, return_counts=True), v)
    _assert_same(lambda lib, x: x.unique(return_inverse=True, return_counts=True), v)
    _assert_same(lambda lib, x: lib.unique(x, return_inverse=True), v.reshape(7, 1) * 0.5,
                 grad=False)
    rows = np.array([[1, 2], [1, 2], [0, 5]])
    _assert_same(lambda lib, x: lib.unique(x, dim=0, return_inverse=True, return_counts=True),
                 rows)


def test_bincount():
    v = np.array([3, 1, 2, 3, 3, 1, 0])
    _assert_same(lambda lib, x: lib.bincount(x), v)
    _assert_same(lambda lib, x: x.bincount(minlength=6), v)
    _assert_same(lambda lib, x: lib.bincount(x, lib.arange(7.0)), v)
    _assert_same(lambda lib, x: lib.bincount(x, lib.arange(7)), v)
    _assert_same(lambda lib, x: lib.bincount(x), np.zeros(0, np.int64))
    for fn in (lambda lib: lib.bincount(lib.tensor([-1, 2])),
               lambda lib: lib.bincount(lib.tensor([1.0, 2.0])),
               lambda lib: lib.bincount(lib.tensor([[1, 2]])),
               lambda lib: lib.bincount(lib.tensor([1, 2]), minlength=-1),
               lambda lib: lib.bincount(lib.tensor([1, 2]), weights=lib.ones(3))):
        _same_error(fn)


def test_histc():
    x = RNG.standard_normal(50).astype(np.float32)
    _assert_same(lambda lib, t: lib.histc(t, bins=4, min=-2, max=2), x, grad=False)
    _assert_same(lambda lib, t: t.histc(bins=7), x, grad=False)
    _assert_same(lambda lib, t: lib.histc(t, bins=4), np.array([1.0, 2.0, 1.0]), grad=False)
    _assert_same(lambda lib, t: lib.histc(t, bins=4), np.array([2.0, 2.0]), grad=False)
    _assert_same(lambda lib, t: lib.histc(t, bins=3), np.zeros(0), grad=False)
    for fn in (lambda lib: lib.histc(lib.tensor([1, 2])),
               lambda lib: lib.histc(lib.tensor([1.0, 2.0]), bins=0),
               lambda lib: lib.histc(lib.tensor([1.0, 2.0]), min=3, max=1)):
        _same_error(fn)


def test_histogram():
    x = RNG.standard_normal(50).astype(np.float32)

    def same(fn):
        (h, e), (th, te) = fn(ng, ng.tensor(x)), fn(torch, torch.tensor(x))
        assert type(h) is ng.Tensor and h.dtype is ng.float32
        assert np.allclose(h.numpy(), th.numpy()) and np.allclose(e.numpy(), te.numpy())

    same(lambda lib, t: lib.histogram(t, bins=4))
    same(lambda lib, t: t.histogram(7, range=(-1.0, 1.0), density=True))
    same(lambda lib, t: lib.histogram(t, bins=lib.tensor([-3.0, 0.0, 0.5, 3.0]),
                                      weight=t.abs()))
    r = ng.histogram(ng.tensor([1.0, 1.0]), 2)
    assert repr(r).startswith("numbagrad.return_types.histogram(\nhist=")
    assert r.hist.tolist() == [0.0, 2.0] and r.bin_edges.tolist() == [0.5, 1.0, 1.5]
    for fn in (lambda lib: lib.histogram(lib.tensor([1, 2]), 2),
               lambda lib: lib.histogram(lib.tensor([1.0, 2.0]), bins=0),
               lambda lib: lib.histogram(lib.tensor([1.0]), 2, range=(3.0, 1.0)),
               lambda lib: lib.histogram(lib.tensor([1.0]), lib.tensor([0.0, 2.0], dtype=lib.float64)),
               lambda lib: lib.histogram(lib.tensor([1.0]), 2, weight=lib.ones(2))):
        _same_error(fn)


def test_repeat_interleave():
    _assert_same(lambda lib, x: x.repeat_interleave(2), A)
    _assert_same(lambda lib, x: lib.repeat_interleave(x, 3, dim=1), A)
    _assert_same(lambda lib, x: x.repeat_interleave(lib.tensor([1, 0, 2]), dim=0), A)
    _assert_same(lambda lib, x: lib.repeat_interleave(x), np.array([2, 0, 1]))
    _same_error(lambda lib: lib.tensor([1, 2]).repeat_interleave(lib.tensor([1, -1])))
    _same_error(lambda lib: lib.tensor([1, 2]).repeat_interleave(lib.tensor([1, 1, 1])))


def test_meshgrid():
    a, b = np.arange(3.0), np.arange(2.0) + 5
    for indexing in ("ij", "xy"):
        _assert_same(lambda lib, x, y: lib.meshgrid(x, y, indexing=indexing), a, b)
        _assert_same(lambda lib, x, y: lib.meshgrid([x, y, x], indexing=indexing), a, b)
    _same_error(lambda lib: lib.meshgrid(lib.ones(2), indexing="yx"))


def test_var_mean_and_std_mean():
    _assert_same(lambda lib, x: lib.var_mean(x, 1), A)
    _assert_same(lambda lib, x: lib.var_mean(x), A)
    _assert_same(lambda lib, x: lib.std_mean(x, 0, unbiased=False, keepdim=True), A + 1)
    _assert_same(lambda lib, x: lib.std_mean(x, dim=(0, 1), correction=0), A + 1)


def test_cdist():
    x1, x2 = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 5, 4))
    x2[0, 0] = x1[0, 0]  # a zero distance: gradient 0 there
    for p in (2.0, 1.0, 3.0, math.inf):
        _assert_same(lambda lib, a, b: lib.cdist(a, b, p=p), x1, x2)
    _assert_same(lambda lib, a, b: lib.cdist(a, b), x1[0], x2)
    for fn in (lambda lib: lib.cdist(lib.ones(3, 2, dtype=lib.long), lib.ones(3, 2)),
               lambda lib: lib.cdist(lib.ones(3, 2), lib.ones(3, 4)),
               lambda lib: lib.cdist(lib.ones(3), lib.ones(3)),
               lambda lib: lib.cdist(lib.ones(3, 2), lib.ones(3, 2), p=-1),
               lambda lib: lib.cdist(lib.ones(3, 2), lib.ones(3, 2, dtype=lib.float64))):
        _same_error(fn)


@pytest.mark.parametrize("kw", [{}, dict(beta=0.5, alpha=2.0), dict(beta=0), dict(alpha=-1)])
def test_addmm_beta_alpha(kw):
    b, x, y = RNG.standard_normal(3), RNG.standard_normal((2, 4)), RNG.standard_normal((4, 3))
    _assert_same(lambda lib, c, m1, m2: lib.addmm(c, m1, m2, **kw), b, x, y)
    _assert_same(lambda lib, c, m1, m2: c.expand(2, 3).addmm(m1, m2, **kw), b, x, y)
    out = ng.addmm(ng.tensor([math.nan] * 3), ng.ones(2, 4), ng.ones(4, 3), beta=0)
    assert out.isfinite().all()  # beta=0: the bias is not read
