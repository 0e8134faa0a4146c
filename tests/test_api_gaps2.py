"""Tensor methods and functions scripts use that numbagrad lacked (a second round), each run side
by side with PyTorch on the same inputs: values, dtypes, grad_fn names, gradients and errors."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from test_api_gaps import LIBS, NAN, _grads_match, _node, _raises_like, _same

import numbagrad as ng

torch = pytest.importorskip("torch")


# ---------------------------------------------------------------- unfold


@pytest.mark.parametrize("dim, size, step", [(1, 2, 1), (0, 2, 1), (-1, 3, 2), (1, 1, 3),
                                             (0, 3, 1)])
def test_unfold(dim, size, step):
    def run(lib, x):
        y = x * 1
        u = y.unfold(dim, size, step)
        assert u._base is y  # (a view)
        return [u, x.unfold(dim, size, step)]

    _grads_match(run, np.arange(12.0).reshape(3, 4) ** 1.5)
    got, want = [lib.arange(12.0).reshape(3, 4).unfold(dim, size, step) for lib in LIBS]
    assert got.stride() == want.stride()


def test_unfold_second_order_and_0d():
    res = []
    for lib in LIBS:
        x = lib.tensor(np.arange(8.0).reshape(2, 4) / 3, dtype=lib.float64, requires_grad=True)
        u = x.unfold(1, 3, 1)
        (g,) = lib.autograd.grad((u ** 3).sum(), x, create_graph=True)
        assert _node(g) == "UnfoldBackwardBackward0"
        g.pow(2).sum().backward()
        res.append((g, x.grad, lib.tensor(2.0).unfold(0, 1, 1), lib.tensor(2.0).unfold(-1, 0, 1)))
    for u, w in zip(*res):
        _same(u, w)


def test_unfold_writes_through():
    for lib in LIBS:
        x = lib.zeros(5)
        x.unfold(0, 2, 2)[:, 0] = 1.0
        np.testing.assert_array_equal(x.numpy(), [1, 0, 1, 0, 0])


@pytest.mark.parametrize("bad", [
    lambda x: x.unfold(2, 1, 1),
    lambda x: x.unfold(1, 4, 1),
    lambda x: x.unfold(1, 2, 0),
    lambda x: x.unfold(1, -1, 1),
    lambda x: x[0, 0].unfold(0, 2, 1),
])
def test_unfold_errors(bad):
    _raises_like(lambda lib: bad(lib.zeros(2, 3)))


# ---------------------------------------------------------------- nanmedian, mode


def test_nanmedian():
    data = [[NAN, 1.0, NAN, 1.0, 3.0], [2.0, 5.0, 4.0, 3.0, 1.0], [NAN, NAN, NAN, NAN, NAN]]
    # (the index PyTorch gives a row of NaNs depends on its selection algorithm: values only)
    _grads_match(lambda lib, x: [*x[:2].nanmedian(1), *lib.nanmedian(x, 0, keepdim=True),
                                 x.nanmedian(1).values.detach(), lib.nanmedian(x[:2]),
                                 x[2].nanmedian(),
                                 x[1].nanmedian(-1)[0]], data)
    _grads_match(lambda lib, x: [x.nanmedian()], [[1.0, NAN], [1.0, 2.0]])  # (ties share)
    for make in [lambda lib: lib.tensor([[3, 1, 2], [4, 4, 0]]), lambda lib: lib.zeros(0)]:
        for got, want in zip(*[(make(lib).nanmedian(), *make(lib).reshape(-1).nanmedian(0))
                               if make(lib).numel() else (make(lib).nanmedian(),)
                               for lib in LIBS]):
            _same(got, want)
    r = ng.nanmedian(ng.tensor([[NAN, 2.0]]), 1)
    assert r._fields == ("values", "indices") and repr(r).startswith(
        "numbagrad.return_types.nanmedian(")
    _raises_like(lambda lib: lib.zeros(2, 0).nanmedian(1))


def test_mode():
    data = [[2.0, 1.0, 2.0, 3.0, 1.0, 3.0], [5.0, 4.0, 4.0, 6.0, 5.0, 4.0]]
    _grads_match(lambda lib, x: [*x.mode(), *lib.mode(x, 1, keepdim=True), *x.mode(0),
                                 *x[0].mode(), *lib.mode(x[0, 0])], data)
    for make in [lambda lib: lib.tensor([[3, 1, 3, 1, 2], [0, 0, 7, 7, 7]]),
                 lambda lib: lib.tensor([True, False, True])]:
        for got, want in zip(*[make(lib).mode() for lib in LIBS]):
            _same(got, want)
    assert repr(ng.tensor([1, 1]).mode()).startswith("numbagrad.return_types.mode(")
    _raises_like(lambda lib: lib.zeros(2, 0).mode())
    _raises_like(lambda lib: lib.zeros(2, 3).mode(2))


# ---------------------------------------------------------------- small methods


def test_narrow_copy():
    def run(lib, x):
        return [x.narrow_copy(1, 1, 2), lib.narrow_copy(x.t(), 0, -2, 1), x.narrow_copy(0, 0, 0)]

    _grads_match(run, np.arange(6.0).reshape(2, 3))
    got, want = [lib.arange(6.0).reshape(2, 3).t().narrow_copy(1, 0, 1) for lib in LIBS]
    assert got.is_contiguous() and want.is_contiguous()
    _raises_like(lambda lib: lib.zeros(2, 3).narrow_copy(1, 2, 2))
    _raises_like(lambda lib: lib.zeros(2, 3).narrow_copy(1, 4, 0))


def test_adjoint_argwhere():
    _grads_match(lambda lib, x: [x.adjoint(), lib.adjoint(x * 2), x[None].adjoint()],
                 np.arange(6.0).reshape(2, 3))
    for lib_pair in zip(*[(lib.tensor([[0, 1], [2, 0]]).argwhere(),
                           lib.argwhere(lib.tensor(1.5)), lib.zeros(2).argwhere())
                          for lib in LIBS]):
        _same(*lib_pair)
    _raises_like(lambda lib: lib.zeros(3).adjoint())


def test_attributes_of_dense_real_tensors():
    for lib in LIBS:
        x = lib.ones(2, 3, requires_grad=True) * 2
        assert x.get_device() == -1 and x.layout is lib.strided
        assert repr(lib.strided) == f"{lib.__name__}.strided"
        assert isinstance(lib.strided, lib.layout)
        assert not (x.is_sparse or x.is_quantized or x.is_meta or x.is_conj() or x.is_neg())
        assert not (lib.is_conj(x) or lib.is_neg(x))
        for same in (x.conj(), lib.conj(x), x.conj_physical(), lib.conj_physical(x),
                     x.resolve_conj(), lib.resolve_conj(x), x.resolve_neg(),
                     lib.resolve_neg(x), x.real, lib.real(x), x.to_dense()):
            assert same is x
        d = x.to_dense(lib.float64)
        assert d.dtype == lib.float64 and _node(d) == "ToCopyBackward0"
    assert pickle.loads(pickle.dumps(ng.strided)) is ng.strided
    _raises_like(lambda lib: lib.zeros(2).imag)


def test_legacy_new():
    for lib in LIBS:
        x = lib.zeros(2, dtype=lib.float64)
        for y, shape in [(x.new(), (0,)), (x.new(2, 3), (2, 3)), (x.new(lib.Size([3])), (3,))]:
            assert tuple(y.shape) == shape and y.dtype == lib.float64 and not y.requires_grad
        v = x.new([[1, 2]])
        assert v.dtype == lib.float64 and v.tolist() == [[1.0, 2.0]]
        assert x.new((2, 3)).tolist() == [2.0, 3.0]
        t = lib.ones(2, dtype=lib.float64)
        a = x.new(t)
        assert a.data_ptr() == t.data_ptr() and a.grad_fn is None
    _raises_like(lambda lib: lib.zeros(2).new(2.5))
    for dt in ("float64", "int64", "int32", "int16", "int8", "uint8", "bool"):
        _raises_like(lambda lib, dt=dt: lib.zeros(2).new(lib.ones(1, dtype=getattr(lib, dt))))


# ---------------------------------------------------------------- bitwise, shifts, gcd, lcm

INT_DTYPES = ["uint8", "int8", "int16", "int32", "int64"]


@pytest.mark.parametrize("dt", INT_DTYPES)
def test_shifts(dt):
    def run(lib):
        d = getattr(lib, dt)
        a = lib.tensor([1, 5, 100, 3, 7, 100], dtype=d)
        s = lib.tensor([7, 8, 70, 0, 63, 2], dtype=d)
        neg = lib.tensor([200 if dt == "uint8" else -100, 100, -1 if dt != "uint8" else 1],
                         dtype=d)
        n = lib.tensor([3, 9, 70], dtype=d)
        out = [a << s, lib.bitwise_left_shift(a, 2), a.bitwise_right_shift(s), neg >> n,
               lib.bitwise_right_shift(neg, 1), 1 << s[:3], 1000 >> n, a << True]
        b = a.clone()
        b <<= 1
        c = neg.clone()
        assert c.bitwise_right_shift_(n) is c and c._version == 1
        return [*out, b, c]

    for got, want in zip(run(ng), run(torch)):
        _same(got, want)


def test_shift_sign_and_errors():
    for got, want in zip(*[(lib.tensor([-5, 5]) >> lib.tensor([-1, 64]),
                            lib.tensor([-5, 5]) << lib.tensor([-1, 64]),
                            lib.tensor([True, False]) << 1) for lib in LIBS]):
        _same(got, want)
    _raises_like(lambda lib: lib.tensor([1.0]) << 1)
    _raises_like(lambda lib: lib.tensor([2]) >> 1.5)
    _raises_like(lambda lib: lib.tensor([True]) << lib.tensor([True]))
    _raises_like(lambda lib: lib.tensor([1], dtype=lib.int8).bitwise_left_shift_(1.5))


@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor"])
def test_bitwise_inplace(name):
    op = {"bitwise_and": "__iand__", "bitwise_or": "__ior__", "bitwise_xor": "__ixor__"}[name]

    def run(lib):
        a = lib.tensor([12, 10, -3], dtype=lib.int16)
        b, c = a.clone(), lib.tensor([True, False, True])
        assert getattr(a, name + "_")(lib.tensor([10, 6, 5], dtype=lib.int16)) is a
        b = getattr(b, op)(7)
        getattr(c, name + "_")(lib.tensor([True, True, False]))
        return a, b, c, a._version

    (a, b, c, v), (at, bt, ct, vt) = run(ng), run(torch)
    for got, want in ((a, at), (b, bt), (c, ct)):
        _same(got, want)
    assert v == vt == 1
    _raises_like(lambda lib: getattr(lib.tensor([1.0]), name + "_")(lib.tensor([1])))
    _raises_like(lambda lib: getattr(lib.tensor([1]), name + "_")(lib.tensor([1.0])))


def test_bitwise_not_inplace():
    for got, want in zip(*[(lib.tensor([0, 5, -3], dtype=lib.int8).bitwise_not_(),
                            lib.tensor([True, False]).bitwise_not_()) for lib in LIBS]):
        _same(got, want)
    _raises_like(lambda lib: lib.tensor([1.0]).bitwise_not_())
    _raises_like(lambda lib: lib.bitwise_not(lib.tensor([1.0])))
    _raises_like(lambda lib: ~lib.tensor([1.0]))


@pytest.mark.parametrize("name", ["gcd", "lcm"])
def test_gcd_lcm(name):
    def run(lib):
        a = lib.tensor([12, -18, 0, 7, 0, -4], dtype=lib.int32)
        b = lib.tensor([8, 12, 5, 0, 0, -6], dtype=lib.int32)
        c = lib.tensor([4, 9], dtype=lib.uint8)
        d = a.clone()
        assert getattr(d, name + "_")(b) is d
        return [getattr(lib, name)(a, b), getattr(a, name)(b[0]), getattr(c, name)(
            lib.tensor([6, 6], dtype=lib.uint8)), getattr(lib, name)(a, b.long()), d]

    for got, want in zip(run(ng), run(torch)):
        _same(got, want)
    _raises_like(lambda lib: getattr(lib, name)(lib.tensor([1.0]), lib.tensor([2.0])))
    _raises_like(lambda lib: getattr(lib, name)(lib.tensor([True]), lib.tensor([True])))


# ---------------------------------------------------------------- more math


def _pair(fn, a, b):
    """``fn(lib, x, y)`` for float64 leaves of ``a`` and ``b``, its weighted sum
    backpropagated: the result, its node and both gradients must match."""
    res = []
    for lib in LIBS:
        x = lib.tensor(a, dtype=lib.float64, requires_grad=True)
        y = lib.tensor(b, dtype=lib.float64, requires_grad=True)
        r = fn(lib, x, y)
        (r * lib.arange(1.0, r.numel() + 1, dtype=lib.float64)).sum().backward()
        res.append((r, x.grad, y.grad))
    (r, gx, gy), (rt, gxt, gyt) = res
    assert _node(r) == _node(rt)
    for u, w in ((r, rt), (gx, gxt), (gy, gyt)):
        _same(u, w)


def test_ldexp():
    _pair(lambda lib, x, y: lib.ldexp(x, y), [0.5, -1.5, 3.0], [1.0, -2.0, 0.5])
    # (an integer exponent: PyTorch's gradient of x is grad * 2 ** exponent computed in the
    # exponent's dtype, 0 for a negative one; numbagrad's is 2 ** exponent itself)
    _pair(lambda lib, x, y: x.ldexp(lib.tensor([3, 1, 0])) + y, [0.5, -1.5, 3.0], [1.0] * 3)
    for got, want in zip(*[(lib.ldexp(lib.tensor([1, 2]), lib.tensor([3, -1])),
                            lib.tensor([1.0], dtype=lib.float64).ldexp_(lib.tensor([2])),
                            lib.ldexp(lib.tensor([1.5]), lib.tensor([2], dtype=lib.int8)))
                           for lib in LIBS]):
        _same(got, want)


def test_nextafter():
    _pair(lambda lib, x, y: lib.nextafter(x, y), [1.0, 2.0, 0.0, 5.0, 0.0, -0.0],
          [1.0, 2.0, 0.0, 6.0, 1.0, 0.0])
    for got, want in zip(*[(lib.nextafter(lib.tensor([1.0, 2.0]), lib.tensor([2.0, 0.0])),
                            lib.tensor([0.0]).nextafter(lib.tensor([1.0])),
                            lib.tensor([1.0], dtype=lib.float64).nextafter_(
                                lib.tensor([-1.0], dtype=lib.float64)))
                           for lib in LIBS]):
        _same(got, want, rtol=0)
    _raises_like(lambda lib: lib.nextafter(lib.tensor([1, 2]), lib.tensor([2, 1])))


def test_frexp():
    _grads_match(lambda lib, x: [lib.frexp(x * 3).mantissa, x.frexp()[1]],
                 [[0.5, 1.5, -3.0], [0.0, 1e-300, 7.0]])
    for lib_pair in zip(*[lib.frexp(lib.tensor([0.0, float("inf"), NAN, -3.0, 1e30]))
                          for lib in LIBS]):
        _same(*lib_pair)
    r = ng.frexp(ng.tensor([2.0]))
    assert r._fields == ("mantissa", "exponent")
    assert repr(r).startswith("numbagrad.return_types.frexp(\nmantissa=")
    _raises_like(lambda lib: lib.frexp(lib.tensor([1, 2])))


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_i0(dt):
    data = [0.0, 0.5, -1.5, 3.0, 10.0, -30.0, 85.0, 700.0, 720.0, NAN, float("inf"),
            -float("inf")]
    got, want = [lib.i0(lib.tensor(data, dtype=getattr(lib, dt))) for lib in LIBS]
    _same(got, want, rtol=1e-6 if dt == "float64" else 1e-5)
    _same(ng.ops.elementwise.special_i1(ng.tensor(data, dtype=getattr(ng, dt))),
          torch.special.i1(torch.tensor(data, dtype=getattr(torch, dt))),
          rtol=1e-6 if dt == "float64" else 1e-5)
    res = []
    for lib in LIBS:  # (second order: i0' = i1, i1' = i0 - i1 / x, 1/2 at 0)
        x = lib.tensor([0.0, 0.5, -1.5, 3.0], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(lib.i0(x).sum(), x, create_graph=True)
        g.pow(2).sum().backward()
        y = lib.tensor([0.5, 2.0])
        res.append((g, x.grad, y.i0_(), lib.i0(lib.tensor([0, 1]))))
    for u, w in zip(*res):
        _same(u, w)
    _raises_like(lambda lib: lib.tensor([1]).i0_())


def test_mvlgamma():
    _grads_match(lambda lib, x: [lib.mvlgamma(x.abs() + 2, 3), x.mvlgamma(1),
                                 (x * 1 + 3).mvlgamma_(2)], [[0.5, 1.5], [-2.2, 2.5]])
    for got, want in zip(*[(lib.mvlgamma(lib.tensor([1, 2]), 2),
                            lib.mvlgamma(lib.tensor([0.4, 2.0]), 2)) for lib in LIBS]):
        _same(got, want)
    _raises_like(lambda lib: lib.mvlgamma(lib.tensor([2.0]), 0))


def test_float_power_and_polygamma_inplace():
    def run(lib, x):
        y = x * 1
        assert y.float_power_(2) is y
        z, v = x * 1 + 3, x * 1 + 3
        assert z.polygamma_(1) is z and v.polygamma_(0) is v
        w = x.detach().clone()
        w.float_power_(lib.tensor([2, 3, 1]))
        return [y, z, v, w]

    _grads_match(run, [[0.5, 1.5, -2.2], [2.0, 1.0, 0.25]])
    _raises_like(lambda lib: lib.tensor([1.0]).polygamma_(-1))
    _raises_like(lambda lib: lib.tensor([1.0]).float_power_(2))
    _raises_like(lambda lib: lib.tensor([1]).float_power_(2))


# ---------------------------------------------------------------- in-place linear algebra


def _linalg_inplace(fn, shapes):
    """``fn(lib, x, *others)`` writing into ``x * 1`` (x a float64 leaf of ``shapes[0]``; the
    others leaves of the other shapes), its result weighted and backpropagated: the result,
    its node, its version and every gradient must match."""
    rng = np.random.default_rng(1)
    data = [rng.standard_normal(s) for s in shapes]
    res = []
    for lib in LIBS:
        leaves = [lib.tensor(a, requires_grad=True) for a in data]
        y = leaves[0] * 1
        r = fn(lib, y, *leaves[1:])
        assert r is y and y._version == 1
        (r * lib.arange(1.0, r.numel() + 1, dtype=lib.float64).reshape(r.shape)).sum().backward()
        res.append((r, [t.grad for t in leaves]))
    (r, grads), (rt, grads_t) = res
    _same(r, rt)
    assert _node(r) == _node(rt)
    for g, w in zip(grads, grads_t):
        _same(g, w)


@pytest.mark.parametrize("fn, shapes", [
    (lambda lib, y, a, b: y.addmm_(a, b), [(2, 3), (2, 4), (4, 3)]),
    (lambda lib, y, a, b: y.addmm_(a, b, beta=0.5, alpha=-2), [(2, 3), (2, 4), (4, 3)]),
    (lambda lib, y, a, b: y.addmv_(a, b, alpha=3), [(2,), (2, 3), (3,)]),
    (lambda lib, y, a, b: y.baddbmm_(a, b, beta=0), [(2, 2, 3), (2, 2, 4), (2, 4, 3)]),
    (lambda lib, y, a, b: y.addbmm_(a, b, beta=2), [(2, 3), (4, 2, 5), (4, 5, 3)]),
    (lambda lib, y, a, b: y.addr_(a, b), [(2, 3), (2,), (3,)]),
    (lambda lib, y, a, b: y.addr_(a, b, beta=-1, alpha=0.5), [(2, 3), (2,), (3,)]),
])
def test_linalg_inplace(fn, shapes):
    _linalg_inplace(fn, shapes)


def test_addr():
    def run(lib, x):
        v, w = x[0], x[1, :2]
        return [lib.addr(x[:2, :2] * 0 + 1, w, v[:2]), x[:2].addr(w, x[2], beta=2, alpha=0.5),
                lib.addr(x[0, 0], v, w), lib.addr(x[2], v, x[1], beta=0)]

    _grads_match(run, np.arange(9.0).reshape(3, 3) / 4)
    o = lambda lib, *s, dt=None: lib.ones(*s, dtype=dt or lib.float32)
    for got, want in zip(*[(lib.addr(o(lib, 2, 3, dt=lib.float64), o(lib, 2), o(lib, 3)),
                            lib.addr(lib.zeros(2, 3, dtype=lib.int64), o(lib, 2, dt=lib.int64),
                                     o(lib, 3, dt=lib.int64), beta=2, alpha=3),
                            lib.addr(lib.tensor([[True]]), lib.tensor([True]),
                                     lib.tensor([False]))) for lib in LIBS]):
        _same(got, want)


@pytest.mark.parametrize("bad", [
    lambda lib, o: lib.addr(lib.zeros(2, 3), o(2, 1), o(3)),
    lambda lib, o: lib.addr(lib.zeros(2, 3), o(2), o(3, 1)),
    lambda lib, o: lib.addr(lib.zeros(2, 3), o(2), o(4)),
    lambda lib, o: lib.addr(lib.zeros(2, 3), o(2), o(3), beta=True),
    lambda lib, o: lib.addr(lib.zeros(2, 3), o(2), o(3), alpha=False),
    lambda lib, o: lib.zeros(3).addr_(o(2), o(3)),
    lambda lib, o: lib.zeros(2, 1).addr_(o(2), o(3)),
    lambda lib, o: lib.zeros(2, 3, dtype=lib.int64).addr_(o(2), o(3)),
    lambda lib, o: lib.zeros(3).addmm_(o(2, 2), o(2, 3)),
    lambda lib, o: lib.zeros(3).baddbmm_(o(2, 2, 2), o(2, 2, 3)),
    lambda lib, o: lib.ones(2, 3, requires_grad=True).addmm_(o(2, 2), o(2, 3)),
])
def test_linalg_inplace_errors(bad):
    _raises_like(lambda lib: bad(lib, lib.ones))


# ---------------------------------------------------------------- scatters into views


def _scatter_run(fn, src_shape):
    """``fn(lib, x, s)`` for a (3, 4) leaf x and a leaf s of ``src_shape``, weighted and
    backpropagated; then twice differentiated (the backward is itself made of ops)."""
    res = []
    for lib in LIBS:
        x = lib.tensor(np.arange(12.0).reshape(3, 4), dtype=lib.float64, requires_grad=True)
        s = lib.tensor(np.arange(1.0, 1 + np.prod(src_shape)).reshape(src_shape) * 10,
                       dtype=lib.float64, requires_grad=True)
        r = fn(lib, x, s)
        w = lib.arange(1.0, r.numel() + 1, dtype=lib.float64).reshape(r.shape)
        gx, gs = lib.autograd.grad((r * r * w).sum(), (x, s), create_graph=True)
        (gx.sum() + gs.pow(2).sum()).backward()
        res.append((r, gx, gs, x.grad, s.grad, _node(r), _node(gs)))
    for u, w in zip(res[0][:5], res[1][:5]):
        _same(u, w)
    assert res[0][5:] == res[1][5:]


@pytest.mark.parametrize("fn, src_shape", [
    (lambda lib, x, s: lib.slice_scatter(x, s, 1, 0, 4, 2), (3, 2)),
    (lambda lib, x, s: x.slice_scatter(s), (3, 4)),
    (lambda lib, x, s: lib.slice_scatter(x, s, 0, -3, -1), (2, 4)),
    (lambda lib, x, s: lib.slice_scatter(x, s, 0, 5), (0, 4)),
    (lambda lib, x, s: lib.select_scatter(x, s, 1, -1), (3,)),
    (lambda lib, x, s: x.select_scatter(s, 0, 2), (4,)),
    (lambda lib, x, s: lib.diagonal_scatter(x, s), (3,)),
    (lambda lib, x, s: x.diagonal_scatter(s, 1), (3,)),
    (lambda lib, x, s: lib.diagonal_scatter(x, s, -1, 1, 0), (3,)),
])
def test_view_scatters(fn, src_shape):
    _scatter_run(fn, src_shape)


def test_view_scatter_dtypes():
    for got, want in zip(*[(lib.slice_scatter(lib.zeros(3, 2), lib.ones(1, 2, dtype=lib.float64),
                                              0, 0, 1),
                            lib.select_scatter(lib.zeros(2, 2, dtype=lib.int64),
                                               lib.tensor([1.7, -2.5]), 0, 1),
                            lib.diagonal_scatter(lib.zeros(2, 2, dtype=lib.bool),
                                                 lib.tensor([True, False])))
                           for lib in LIBS]):
        _same(got, want)


@pytest.mark.parametrize("bad", [
    lambda lib, z: lib.slice_scatter(z, lib.zeros(2, 2), 0, 0, 1),
    lambda lib, z: lib.slice_scatter(z, lib.zeros(1, 2), 0, step=0),
    lambda lib, z: lib.slice_scatter(z, lib.zeros(1, 2), 2),
    lambda lib, z: lib.select_scatter(z, lib.zeros(3), 0, 0),
    lambda lib, z: lib.select_scatter(z, lib.zeros(2), 0, 3),
    lambda lib, z: lib.select_scatter(z, lib.tensor(1.0), 1, 1),
    lambda lib, z: lib.diagonal_scatter(z, lib.zeros(3)),
    lambda lib, z: lib.diagonal_scatter(z, lib.zeros(2), 0, 0, 0),
    lambda lib, z: z.select(1, -3),
])
def test_view_scatter_errors(bad):
    _raises_like(lambda lib: bad(lib, lib.zeros(3, 2)))


# ---------------------------------------------------------------- fill_diagonal_, renorm


@pytest.mark.parametrize("shape, wrap", [((3, 3), False), ((2, 4), False), ((7, 3), True),
                                         ((7, 3), False), ((4, 3), True), ((3, 3, 3), False)])
def test_fill_diagonal(shape, wrap):
    res = []
    for lib in LIBS:
        x = lib.ones(shape, dtype=lib.float64, requires_grad=True)
        y = x * 2
        assert y.fill_diagonal_(-1.5, wrap=wrap) is y
        (y * y).sum().backward()
        z = lib.zeros(shape, dtype=lib.int64).fill_diagonal_(3, wrap)
        res.append((y, x.grad, z, _node(y)))
    for u, w in zip(res[0][:3], res[1][:3]):
        _same(u, w)
    assert res[0][3] == res[1][3] == "CopySlices"


@pytest.mark.parametrize("bad", [
    lambda lib: lib.zeros(3).fill_diagonal_(1),
    lambda lib: lib.zeros(2, 3, 3).fill_diagonal_(1),
    lambda lib: lib.zeros(2, 2, requires_grad=True).fill_diagonal_(1),
])
def test_fill_diagonal_errors(bad):
    _raises_like(bad)


@pytest.mark.parametrize("p", [2, 1, 3, 0.5, float("inf")])
def test_renorm(p):
    data = [[3.0, 4.0, 0.5], [0.1, 0.2, 0.3], [-1.0, 0.0, 2.0]]

    def run(lib, x):
        y = x * 1
        assert y.renorm_(p, 1, 1.5) is y
        return [lib.renorm(x, p, 0, 1.0), x.renorm(p, -1, 2.0), y]

    _grads_match(run, data)
    res = []
    for lib in LIBS:  # (its backward is made of ops: differentiable again)
        x = lib.tensor(data, dtype=lib.float64, requires_grad=True)
        w = lib.arange(9.0, dtype=lib.float64).reshape(3, 3)
        (g,) = lib.autograd.grad((lib.renorm(x, p, 0, 1.0) ** 3 * w).sum(), x,
                                 create_graph=True)
        g.pow(2).sum().backward()
        res.append((g, x.grad))
    for u, w in zip(*res):
        _same(u, w)


@pytest.mark.parametrize("bad", [
    lambda lib: lib.renorm(lib.zeros(2, 3), 0, 0, 1.0),
    lambda lib: lib.renorm(lib.zeros(2, 3), -1, 0, 1.0),
    lambda lib: lib.renorm(lib.zeros(2, 3), 2, 0, -1.0),
    lambda lib: lib.renorm(lib.zeros(2, 3), 2, 2, 1.0),
    lambda lib: lib.renorm(lib.ones(2, 3, dtype=lib.int64), 2, 0, 1.0),
    lambda lib: lib.renorm(lib.zeros(3), 2, 0, 1.0),
    lambda lib: lib.zeros(2, 3, dtype=lib.int64).renorm_(2, 0, 1.0),
])
def test_renorm_errors(bad):
    _raises_like(bad)


# ---------------------------------------------------------------- scatter_reduce, index_reduce

REDUCTIONS = ["sum", "prod", "mean", "amax", "amin"]


def _reduce_run(fn):
    """``fn(lib, x, s)`` for leaves x (2, 4) and s (2, 3) holding zeros and ties, weighted and
    backpropagated: values, node and both gradients must match."""
    res = []
    for lib in LIBS:
        x = lib.tensor([[1.0, 0.0, 3.0, 2.0], [4.0, 5.0, 6.0, 6.0]], dtype=lib.float64,
                       requires_grad=True)
        s = lib.tensor([[10.0, 0.0, 30.0], [6.0, 50.0, 0.0]], dtype=lib.float64,
                       requires_grad=True)
        r = fn(lib, x, s)
        (r * lib.arange(1.0, r.numel() + 1, dtype=lib.float64).reshape(r.shape)).sum().backward()
        res.append((r, x.grad, s.grad, _node(r)))
    for u, w in zip(res[0][:3], res[1][:3]):
        _same(u, w)
    assert res[0][3] == res[1][3]


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_scatter_reduce(reduce, include_self):
    _reduce_run(lambda lib, x, s: x.scatter_reduce(1, lib.tensor([[0, 0, 1], [3, 1, 3]]), s,
                                                   reduce, include_self=include_self))
    _reduce_run(lambda lib, x, s: lib.scatter_reduce(x, 0, lib.tensor([[1, 0, 1], [1, 1, 0]]),
                                                     s, reduce, include_self=include_self))
    _reduce_run(lambda lib, x, s: (x * 1).scatter_reduce_(1, lib.tensor([[3], [3]]), s[:, :1],
                                                          reduce, include_self=include_self))
    # (a src larger than the index: PyTorch's backward refuses its own gradient's shape, so
    # the values only)
    got, want = [lib.tensor([[1.0, 2.0], [3.0, 4.0]]).scatter_reduce(
        0, lib.tensor([[1], [0]]), lib.tensor([[5.0, 6.0], [7.0, 8.0]]), reduce,
        include_self=include_self) for lib in LIBS]
    _same(got, want)


@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_scatter_reduce_integers(reduce):
    for include_self in (True, False):
        got, want = [lib.tensor([[1, 2, 3], [-4, 7, 0]], dtype=lib.int32).scatter_reduce(
            1, lib.tensor([[0, 0, 1], [2, 2, 2]]), lib.tensor([[4, -5, 7], [3, 9, -8]],
                                                             dtype=lib.int32),
            reduce, include_self=include_self) for lib in LIBS]
        _same(got, want)


@pytest.mark.parametrize("bad", [
    lambda lib, x, i, s: x.scatter_reduce(1, i, s, "foo"),
    lambda lib, x, i, s: x.scatter_reduce(1, i, s.double(), "sum"),
    lambda lib, x, i, s: x.scatter_reduce(1, i.float(), s, "sum"),
    lambda lib, x, i, s: x.scatter_reduce(1, i, s[:, :2], "sum"),
    lambda lib, x, i, s: x.scatter_reduce(1, i + 2, s, "prod"),
    lambda lib, x, i, s: x.scatter_reduce(1, i[0], s, "prod"),
    lambda lib, x, i, s: lib.ones(2, 3, requires_grad=True).scatter_reduce_(1, i, s, "sum"),
])
def test_scatter_reduce_errors(bad):
    _raises_like(lambda lib: bad(lib, lib.zeros(2, 3), lib.tensor([[0, 0, 1], [1, 1, 1]]),
                                 lib.ones(2, 3)))


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
def test_index_reduce(reduce, include_self):
    with pytest.warns(UserWarning, match=r"^index_reduce\(\) is in beta"):
        _reduce_run(lambda lib, x, s: x.index_reduce(1, lib.tensor([3, 0, 3]), s, reduce,
                                                     include_self=include_self))
    _reduce_run(lambda lib, x, s: lib.index_reduce(x[:, :3], 0, lib.tensor([1, 1]), s, reduce,
                                                   include_self=include_self))
    _reduce_run(lambda lib, x, s: (x * 1).index_reduce_(1, lib.tensor([2, 2, 1]), s, reduce,
                                                        include_self=include_self))
    # (an int32 index: PyTorch's backward without include_self refuses it, so the values only)
    got, want = [lib.ones(2, 3).index_reduce(0, lib.tensor([1, 1], dtype=lib.int32),
                                             lib.tensor([[2.0, 3.0, 4.0]] * 2), reduce,
                                             include_self=include_self) for lib in LIBS]
    _same(got, want)


@pytest.mark.parametrize("bad", [
    lambda lib, x, s: x.index_reduce(0, lib.tensor([1, 1]), s, "sum"),
    lambda lib, x, s: x.index_reduce(0, lib.tensor([1, 1, 1]), s, "prod"),
    lambda lib, x, s: x.index_reduce(0, lib.tensor([1.0, 1.0]), s, "prod"),
    lambda lib, x, s: x.index_reduce(0, lib.tensor([1, 2]), s, "prod"),
    lambda lib, x, s: x.index_reduce(0, lib.tensor([1, 1]), s.double(), "prod"),
    lambda lib, x, s: x.index_reduce(0, lib.tensor([[1, 1]]), s, "prod"),
    lambda lib, x, s: x.index_reduce(1, lib.tensor([1, 1]), s, "prod"),
    lambda lib, x, s: x.index_reduce(0, lib.tensor([1, 1]), s[:, :2], "mean"),
])
def test_index_reduce_errors(bad):
    _raises_like(lambda lib: bad(lib, lib.zeros(2, 3), lib.ones(2, 3)))


# ---------------------------------------------------------------- quantile, nanquantile

QUANTILE_DATA = [[3.0, 1.0, 4.0, 1.5], [5.0, 9.0, 2.0, 6.0], [NAN, 1.0, 2.0, 3.0]]


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile(name, interpolation):
    def run(lib, x):
        f = getattr(lib, name)
        qs = lib.tensor([0.0, 0.25, 0.9, 1.0], dtype=lib.float64)
        kw = {"interpolation": interpolation}
        return [f(x, 0.3, **kw), f(x, qs, keepdim=True, **kw), f(x, 0.5, dim=1, **kw),
                getattr(x, name)(qs, 0, keepdim=True, **kw), f(x[:2], qs, -1, **kw),
                getattr(x[1], name)(0.75, **kw)]

    _grads_match(run, QUANTILE_DATA)
    got, want = [getattr(lib, name)(lib.tensor([[1.0, 2.0, 4.0], [0.5, NAN, NAN]]),
                                    lib.tensor([0.2, 0.5]), 1, interpolation=interpolation)
                 for lib in LIBS]
    _same(got, want)  # (float32, a row of NaNs and numbers)
    assert _node(getattr(ng, name)(ng.ones(3, requires_grad=True), 0.5)) == "SqueezeBackward4"


@pytest.mark.parametrize("bad", [
    lambda lib, x: lib.quantile(lib.zeros(0), 0.5),
    lambda lib, x: lib.quantile(x, 1.5),
    lambda lib, x: lib.nanquantile(x, -0.1),
    lambda lib, x: lib.quantile(x, lib.tensor([1.5])),
    lambda lib, x: lib.quantile(x, lib.tensor([[0.5]])),
    lambda lib, x: lib.quantile(x.long(), 0.5),
    lambda lib, x: lib.quantile(x.long(), 1.5),
    lambda lib, x: lib.quantile(x, lib.tensor([0.5], dtype=lib.float64)),
    lambda lib, x: lib.quantile(x, 0.5, interpolation="foo"),
    lambda lib, x: lib.quantile(x, 0.5, dim=2),
    lambda lib, x: lib.quantile(lib.zeros(2, 0), 0.5, dim=0),
])
def test_quantile_errors(bad):
    _raises_like(lambda lib: bad(lib, lib.ones(3, 4)))


# ---------------------------------------------------------------- memory: strides, resize_


def test_empty_strided():
    for lib in LIBS:
        x = lib.zeros(1, dtype=lib.float64)
        for t, stride, dt in [(x.new_empty_strided((2, 3), (4, 1)), (4, 1), lib.float64),
                              (x.new_empty_strided((2, 3), (1, 2), dtype=lib.int32), (1, 2),
                               lib.int32),
                              (lib.empty_strided((2, 2), (1, 2)), (1, 2), lib.float32),
                              (lib.empty_strided((0, 3), (3, 1)), (3, 1), lib.float32)]:
            assert t.stride() == stride and t.dtype == dt and not t.requires_grad
        w = x.new_empty_strided((2, 2), (1, 2), dtype=lib.float32, requires_grad=True)
        assert w.requires_grad and w.is_leaf and not w.is_contiguous()
        w.detach().fill_(2.0)
        assert w.sum().item() == 8.0
    _raises_like(lambda lib: lib.empty_strided((2, 3), (1,)))
    _raises_like(lambda lib: lib.empty_strided((2, 3), (-1, 1)))


def test_as_strided_inplace():
    def run(lib, x):
        y = x * 1
        assert y.as_strided_((2, 2), (1, 1)) is y and y._version == 1
        z = lib.arange(6.0)
        z.as_strided_((3,), (2,), 1)
        assert z.stride() == (2,)
        return [y, z]

    _grads_match(run, np.arange(6.0) / 3)
    _raises_like(lambda lib: lib.zeros(6, requires_grad=True).as_strided_((2,), (1,)))
    _raises_like(lambda lib: lib.zeros(6).as_strided_((2, 2), (1,)))


def test_resize():
    def run(lib):
        out = []
        x = lib.arange(6.0)
        assert x.resize_(2) is x and x._version == 1
        out.append(x.clone())
        out.append(x.resize_(6).clone())  # (its memory still holds the old elements)
        out.append(x.resize_(2, 2).clone())
        y = lib.arange(6.0).reshape(2, 3).t()
        out.append(y.resize_(3, 2))  # (the same shape: left as it is)
        z = lib.arange(6.0)
        w = z[2:]
        out.append(w.resize_(2).clone())
        out.append(w.resize_(4).clone())
        a = lib.zeros(2, dtype=lib.int16)
        out.append(a.resize_as_(lib.ones(2, 3))[0, :2])
        out.append(lib.arange(6.0).reshape(2, 3).t().contiguous().resize_(lib.Size([3])))
        return out, [t.stride() for t in out]

    (got, strides), (want, strides_t) = run(ng), run(torch)
    for u, w in zip(got, want):
        _same(u, w)
    assert strides == strides_t
    _raises_like(lambda lib: lib.zeros(2, requires_grad=True).resize_(3))
    _raises_like(lambda lib: (lib.zeros(2, requires_grad=True) * 1).resize_(2))
    _raises_like(lambda lib: lib.zeros(2, requires_grad=True).resize_as_(lib.zeros(3)))
    _raises_like(lambda lib: lib.zeros(2).resize_(2.5))
