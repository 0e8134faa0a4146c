"""Tensor methods and functions scripts use that numbagrad lacked, each run side by side with
PyTorch on the same inputs: values, dtypes, grad_fn names, gradients, versions and errors."""

from __future__ import annotations

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

LIBS = (ng, torch)


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _same(got, want, rtol=1e-6):
    """Values, dtype and shape of a numbagrad tensor against a torch one."""
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(_np(got), _np(want), rtol=rtol, atol=1e-7, equal_nan=True)


def _node(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def _both(fn):
    """``fn(lib, x)`` for numbagrad and torch, ``x`` one random float64 leaf requiring grad
    (the same values): the two results."""
    a = np.random.default_rng(0).standard_normal((2, 3))
    return [fn(lib, lib.tensor(a, requires_grad=True)) for lib in LIBS]


def _raises_like(fn):
    """``fn(lib)`` raises the same exception type and message with both libraries."""
    with pytest.raises(Exception) as want:
        fn(torch)
    with pytest.raises(type(want.value)) as got:
        fn(ng)
    assert str(got.value) == str(want.value).replace("torch.", "numbagrad.")


# ---------------------------------------------------------------- attributes


def test_attributes():
    for lib in LIBS:
        x = lib.zeros(2, 3)
        assert x.is_cpu and not x.is_complex()
        assert (x.itemsize, x.nbytes) == (4, 24)
        assert x.expand(4, 2, 3).nbytes == 96  # (counted per element, as PyTorch's)
        assert lib.zeros(3, dtype=lib.float64).nbytes == 24
        assert x.is_signed() and lib.zeros(1, dtype=lib.int32).is_signed()
        assert not lib.zeros(1, dtype=lib.bool).is_signed() and not lib.is_signed(
            lib.zeros(1, dtype=lib.bool))
        assert x.is_same_size(lib.ones(2, 3)) and not lib.is_same_size(x, x.t())
        assert lib.tensor([2]).is_nonzero() and not lib.is_nonzero(lib.tensor(0.0))
        assert lib.tensor([[True]]).is_nonzero()
    _raises_like(lambda lib: lib.zeros(2).is_nonzero())
    _raises_like(lambda lib: lib.is_nonzero(lib.zeros(0)))


# ---------------------------------------------------------------- aliases and new spellings


def test_aliases():
    def run(lib, x):
        y = x.detach() * 2
        r = [lib.subtract(x, y, alpha=2), x.subtract(y), lib.not_equal(x, y.round()),
             x.greater_equal(0), lib.less_equal(x, 0.5), lib.positive(x), x.positive()]
        z = y.clone()
        assert z.subtract_(x.detach(), alpha=3) is z
        return r + [z]

    got, want = _both(run)
    for g, w in zip(got, want):
        _same(g, w)
    assert [_node(t) for t in got] == [_node(t) for t in want]
    assert ng.positive(got[-1]) is got[-1]
    _raises_like(lambda lib: lib.positive(lib.tensor([True])))
    _raises_like(lambda lib: +lib.tensor([True]))


def test_ravel():
    got, want = _both(lambda lib, x: [x.ravel(), lib.ravel(x.t()), (x * 1).t().ravel()])
    for g, w in zip(got, want):
        _same(g, w)
        assert _node(g) == _node(w)
        assert type(g.grad_fn.next_functions[0][0]).__name__ == type(
            w.grad_fn.next_functions[0][0]).__name__
    # a view of a contiguous tensor, a copy of any other
    x = ng.zeros(2, 3)
    assert x.ravel()._base is x and x.t().ravel()._base is not x


def test_logical_xor():
    for lib in LIBS:
        a = lib.tensor([0.0, 1.0, 2.0, 0.0])
        b = lib.tensor([1, 1, 0, 0])
        np.testing.assert_array_equal(_np(lib.logical_xor(a, b)), [True, False, True, False])
        assert a.logical_xor(b).dtype == lib.bool


# ---------------------------------------------------------------- in-place spellings


@pytest.mark.parametrize("name", ["log1p", "expm1", "rsqrt", "tan", "sign", "cumsum",
                                  "cumprod"])
def test_inplace_math(name):
    args = (1,) if name.startswith("cum") else ()

    def run(lib, x):
        y = x.abs() * 1
        out = getattr(y, name + "_")(*args)
        assert out is y and y._version == 1
        y.sum().backward()
        return y, x.grad

    (y, g), (yt, gt) = _both(run)
    _same(y, yt)
    _same(g, gt)
    assert _node(y) == _node(yt)
    _raises_like(lambda lib: getattr(lib.ones(2, requires_grad=True), name + "_")(*args))


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor", "logical_not"])
def test_inplace_logical(name):
    def run(lib, x):
        y = x * 1
        other = () if name == "logical_not" else (x.detach().round(),)
        getattr(y, name + "_")(*other)  # (not differentiable: y's node stays, as PyTorch's)
        i = lib.tensor([0, 2, 3])
        getattr(i, name + "_")(*(() if name == "logical_not" else (lib.tensor([1, 0, 1]),)))
        return y, i

    (y, i), (yt, it) = _both(run)
    _same(y, yt)
    _same(i, it)
    assert _node(y) == _node(yt) == "MulBackward0"


@pytest.mark.parametrize("name", ["eq", "ne", "lt", "le", "gt", "ge", "not_equal", "greater",
                                  "less", "greater_equal", "less_equal"])
def test_inplace_comparisons(name):
    def run(lib, x):
        other = lib.tensor([0.5, -0.2, 0.1], dtype=lib.float64, requires_grad=True)
        y, z = x * 1, x * 1
        assert getattr(y, name + "_")(other) is y and y._version == 1
        getattr(z, name + "_")(0.3)
        (y + z).sum().backward()  # (zero gradients, through the comparison's node)
        i = lib.tensor([1, 2, 3])
        getattr(i, name + "_")(2)
        return y, z, x.grad, other.grad, i

    got, want = _both(run)
    for g, w in zip(got, want):
        _same(g, w)
    assert [_node(t) for t in got[:2]] == [_node(t) for t in want[:2]]
    _raises_like(lambda lib: getattr(lib.zeros(2, requires_grad=True), name + "_")(0))
    _raises_like(lambda lib: getattr(lib.zeros(2), name + "_")(lib.zeros(3, 2)))


# ---------------------------------------------------------------- in-place view changes


@pytest.mark.parametrize("name, args", [
    ("t_", ()), ("transpose_", (0, 1)), ("swapaxes_", (1, 0)), ("swapdims_", (0, -1)),
    ("unsqueeze_", (1,)), ("unsqueeze_", (-1,)), ("squeeze_", ()), ("squeeze_", (0,)),
    ("squeeze_", ((0, 2),)),
])
def test_inplace_view_changes(name, args):
    def run(lib, x):
        y = x[None] * 1 if name == "squeeze_" else x * 1
        assert getattr(y, name)(*args) is y
        weights = lib.arange(6, dtype=lib.float64).reshape(y.shape)
        (y * weights).sum().backward()
        # a leaf that needs no gradient changes too, with no node
        z = lib.zeros(1, 2, 3) if name == "squeeze_" else lib.zeros(2, 3)
        getattr(z, name)(*args)
        return y, x.grad, z

    (y, g, z), (yt, gt, zt) = _both(run)
    _same(y, yt)
    _same(g, gt)
    assert y.stride() == yt.stride() and z.stride() == zt.stride()
    assert (y._version, z._version) == (yt._version, zt._version) == (1, 1)
    assert (_node(y), _node(z)) == (_node(yt), _node(zt))
    assert type(y.grad_fn.next_functions[0][0]).__name__ == "MulBackward0"
    _raises_like(lambda lib: getattr(lib.zeros(2, 3, requires_grad=True), name)(*args))


def test_inplace_view_change_of_a_view():
    def run(lib, x):
        y = x * 1
        v = y[1]
        v.unsqueeze_(0)
        assert v._base is y
        (v * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
        return v, x.grad, y._version

    (v, g, n), (vt, gt, nt) = _both(run)
    _same(v, vt)
    _same(g, gt)
    assert n == nt == 1 and _node(v) == _node(vt) == "UnsqueezeBackward1"
    assert type(v.grad_fn.next_functions[0][0]).__name__ == "SelectBackward0"


def test_inplace_view_change_errors():
    _raises_like(lambda lib: lib.zeros(2, 3, requires_grad=True)[0].unsqueeze_(0))
    _raises_like(lambda lib: lib.zeros(3, 2, 1).t_())
    _raises_like(lambda lib: lib.zeros(2, 3).transpose_(0, 5))
    _raises_like(lambda lib: lib.zeros(2, 3).unsqueeze_(3))
    _raises_like(lambda lib: (lib.zeros(2, 3, requires_grad=True) * 1).split(1)[0].t_())
    x = ng.zeros(2, 3)
    with pytest.raises(IndexError):
        x.transpose_(0, 5)
    assert x.shape == (2, 3) and x._version == 0  # (left unchanged)


# ---------------------------------------------------------------- splits and joins


@pytest.mark.parametrize("how", [3, 7, 9, [1, 5], [5, 1, 9], (2,), "t0", "t1"])
def test_tensor_split(how):
    def run(lib, x):
        h = {"t0": lib.tensor(2), "t1": lib.tensor([2, 3])}.get(how, how) if isinstance(
            how, str) else how
        parts = lib.tensor_split(x, h, 1) if isinstance(how, int) else x.tensor_split(h, dim=-1)
        sum((p * (i + 1)).sum() for i, p in enumerate(parts)).backward()
        return parts, x.grad

    a = np.arange(14.0).reshape(2, 7)
    (p, g), (pt, gt) = [run(lib, lib.tensor(a, requires_grad=True)) for lib in LIBS]
    assert len(p) == len(pt)
    for u, w in zip(p, pt):
        _same(u, w)
        assert _node(u) == _node(w) == "SliceBackward0" and u._base is not None
    _same(g, gt)


@pytest.mark.parametrize("name, how", [("hsplit", 3), ("hsplit", [1]), ("vsplit", 2),
                                       ("vsplit", [1, 1]), ("dsplit", [1, 3]), ("dsplit", 2)])
def test_hsplit_vsplit_dsplit(name, how):
    for lib_parts in zip(*[
            (getattr(lib, name)(lib.arange(24.0).reshape(2, 3, 4), how),
             getattr(lib.arange(24.0).reshape(2, 3, 4), name)(how)) for lib in LIBS]):
        for u, w in zip(*lib_parts):
            _same(u, w)
    for u, w in zip(ng.hsplit(ng.arange(6.0), 3), torch.hsplit(torch.arange(6.0), 3)):
        _same(u, w)


@pytest.mark.parametrize("bad", [
    lambda lib: lib.tensor_split(lib.zeros(3), 0),
    lambda lib: lib.tensor_split(lib.tensor(1.0), 2),
    lambda lib: lib.tensor_split(lib.zeros(3), lib.tensor([[1]])),
    lambda lib: lib.tensor_split(lib.zeros(3), lib.tensor([1.0])),
    lambda lib: lib.tensor_split(lib.zeros(3), 2.5),
    lambda lib: lib.tensor_split(lib.zeros(3), [1.5]),
    lambda lib: lib.tensor_split(lib.zeros(3), 2, 1),
    lambda lib: lib.hsplit(lib.zeros(2, 5), 2),
    lambda lib: lib.hsplit(lib.zeros(2, 6), 0),
    lambda lib: lib.hsplit(lib.tensor(1.0), 2),
    lambda lib: lib.vsplit(lib.zeros(5), 2),
    lambda lib: lib.dsplit(lib.zeros(2, 2), 2),
    lambda lib: lib.zeros(7).split_with_sizes([3, 3]),
    lambda lib: lib.hstack([]),
    lambda lib: lib.vstack([]),
    lambda lib: lib.row_stack([]),
    lambda lib: lib.dstack([]),
    lambda lib: lib.column_stack([]),
    lambda lib: lib.vstack([lib.zeros(2), lib.zeros(3)]),
])
def test_split_and_stack_errors(bad):
    _raises_like(bad)


def test_split_with_sizes():
    def run(lib, x):
        parts = x.split_with_sizes([1, 2], 1) + lib.split_with_sizes(x, [2, 0])
        sum((p * (i + 1)).sum() for i, p in enumerate(parts)).backward()
        return parts, x.grad

    (p, g), (pt, gt) = _both(run)
    for u, w in zip(p, pt):
        _same(u, w)
        assert _node(u) == _node(w) == "SplitWithSizesBackward0"
    _same(g, gt)


@pytest.mark.parametrize("name", ["hstack", "vstack", "row_stack", "dstack", "column_stack"])
def test_stacks(name):
    def run(lib, x):
        f = getattr(lib, name)
        v = x[0]
        outs = [f([v, v.detach() * 2]), f((x, x * 3)), f([x.sum(), x[1, 1]]),
                f([x[:, :1], lib.ones(2, 1, dtype=lib.int64)])]
        sum((o * lib.arange(o.numel()).reshape(o.shape)).sum() for o in outs).backward()
        return outs, x.grad

    (o, g), (ot, gt) = _both(run)
    for u, w in zip(o, ot):
        _same(u, w)
        assert _node(u) == _node(w) == "CatBackward0"
        assert [type(n[0]).__name__ for n in u.grad_fn.next_functions] == [
            type(n[0]).__name__ for n in w.grad_fn.next_functions]
    _same(g, gt)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_atleast(n):
    for shape in [(), (2,), (2, 3), (2, 3, 1)]:
        got, want = [getattr(lib, f"atleast_{n}d")(lib.ones(shape, requires_grad=True))
                     for lib in LIBS]
        _same(got, want)
        assert _node(got) == _node(want)
    for args in [lambda lib: (lib.ones(2), lib.tensor(1.0)),
                 lambda lib: ([lib.ones(2), lib.tensor(1.0)],)]:
        got, want = [getattr(lib, f"atleast_{n}d")(*args(lib)) for lib in LIBS]
        assert isinstance(got, tuple) and len(got) == len(want) == 2
        for u, w in zip(got, want):
            _same(u, w)


# ---------------------------------------------------------------- reductions and scans

NAN = float("nan")


def _grads_match(run, data, dtype="float64"):
    """``run(lib, x)`` -> (outputs...) for a leaf ``x`` of ``data``, with weighted sums of the
    float outputs backpropagated: the outputs, their nodes and x's gradient must match."""
    res = []
    for lib in LIBS:
        x = lib.tensor(data, dtype=getattr(lib, dtype), requires_grad=True)
        outs = run(lib, x)
        total = sum((o * lib.arange(1, o.numel() + 1, dtype=o.dtype).reshape(o.shape)).sum()
                    for o in outs if o.requires_grad)
        total.backward()
        res.append((outs, x.grad))
    (outs, g), (outs_t, gt) = res
    for o, w in zip(outs, outs_t):
        _same(o, w)
        assert _node(o) == _node(w)
    _same(g, gt)


def test_nansum_nanmean():
    data = [[1.0, NAN, 3.0], [4.0, 5.0, NAN]]
    _grads_match(lambda lib, x: [lib.nansum(x), x.nansum(1, keepdim=True), lib.nanmean(x),
                                 x.nanmean(dim=0), lib.nanmean(x, 1, dtype=lib.float32)], data)
    for lib_pair in zip(*[(lib.nansum(lib.tensor([1, 2])), lib.nansum(lib.tensor([True, True])),
                           lib.nansum(lib.tensor([1, 2]), dtype=lib.float64),
                           lib.nanmean(lib.tensor([NAN])), lib.nansum(lib.tensor([NAN])))
                          for lib in LIBS]):
        _same(*lib_pair)
    _raises_like(lambda lib: lib.nanmean(lib.tensor([1, 2])))
    _raises_like(lambda lib: lib.nansum(lib.zeros(2), 1))


def test_aminmax():
    data = [[3.0, 1.0, 4.0], [1.0, 4.0, 1.0]]  # (ties share the gradient)
    _grads_match(lambda lib, x: [*lib.aminmax(x), *x.aminmax(dim=1, keepdim=True),
                                 *lib.aminmax(x, dim=-2)], data)
    r = ng.aminmax(ng.tensor([[2.0, 5.0]], requires_grad=True), dim=1)
    assert r._fields == ("min", "max") and r.min.grad_fn is r.max.grad_fn
    assert _node(r.min) == "AminmaxBackward0"
    assert repr(r).startswith("numbagrad.return_types.aminmax(\nmin=tensor([2.]")
    for u, w in zip(ng.aminmax(ng.tensor([True, False])), torch.aminmax(torch.tensor([True,
                                                                                     False]))):
        _same(u, w)
    _raises_like(lambda lib: lib.aminmax(lib.zeros(0)))
    _raises_like(lambda lib: lib.aminmax(lib.zeros(2, 0), dim=1))


@pytest.mark.parametrize("p", [2, 1, 3, 0.5, float("inf"), 0])
def test_dist(p):
    res = []
    for lib in LIBS:
        a = lib.tensor([1.0, 3.0, 2.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 2.5]], dtype=lib.float64)
        d = lib.dist(a, b, p) if p != 2 else a.dist(b)
        d.backward()
        res.append((d, a.grad))
    (d, g), (dt, gt) = res
    _same(d, dt)
    assert _node(d) == _node(dt) == "DistBackward0"
    if p == 0:
        assert g is None and gt is None  # (PyTorch leaves it undefined)
    else:
        _same(g, gt)
    _raises_like(lambda lib: lib.dist(lib.tensor([1, 2]), lib.tensor([1, 2])))


def test_dist_double_backward():
    res = []
    for lib in LIBS:
        a = lib.tensor([1.0, 3.0, 2.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([0.5, -1.0, 2.5], dtype=lib.float64, requires_grad=True)
        (ga,) = lib.autograd.grad(lib.dist(a, b, 3), a, create_graph=True)
        ga.sum().backward()
        res.append((ga, a.grad, b.grad))
    for u, w in zip(*res):
        _same(u, w)


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_cummin(name):
    data = [[3.0, 1.0, 4.0, 4.0], [1.0, 5.0, 2.0, 9.0], [2.0, 2.0, 0.0, 9.0]]

    def run(lib, x):
        a, b = getattr(lib, name)(x, 1), getattr(x, name)(dim=0)
        return [a.values, a.indices, b.values, b.indices]

    _grads_match(run, data)
    got, want = [getattr(lib, name)(lib.tensor([1.0, 3.0, 3.0, 2.0, NAN, 5.0, NAN]), 0)
                 for lib in LIBS]
    _same(got.values, want.values)
    _same(got.indices, want.indices)
    assert type(got).__name__ == name and got._fields == ("values", "indices")
    for lib_pair in zip(*[(*getattr(lib, name)(lib.tensor([2, 1, 1, 3]), 0),
                           *getattr(lib, name)(lib.tensor(2.0), 0),
                           *getattr(lib, name)(lib.zeros(0, 2), 0)) for lib in LIBS]):
        _same(*lib_pair)
    _raises_like(lambda lib: getattr(lib, name)(lib.zeros(2, 3), 2))


def test_logcumsumexp():
    _grads_match(lambda lib, x: [lib.logcumsumexp(x, 1), x.logcumsumexp(0)],
                 [[0.5, 1000.0, -2.0], [0.1, 0.2, -50.0]])
    got, want = [lib.logcumsumexp(lib.tensor([-float("inf"), 0.0, float("inf")]), 0)
                 for lib in LIBS]
    _same(got, want)
    res = []
    for lib in LIBS:  # (its backward is made of ops: differentiable again)
        x = lib.tensor([[0.5, 1.0, -2.0], [0.1, 0.2, 0.3]], dtype=lib.float64,
                       requires_grad=True)
        (g,) = lib.autograd.grad(lib.logcumsumexp(x, 0).pow(2).sum(), x, create_graph=True)
        g.sum().backward()
        res.append((g, x.grad))
    for u, w in zip(*res):
        _same(u, w)
    _raises_like(lambda lib: lib.logcumsumexp(lib.tensor([1, 2]), 0))


def test_msort_diagflat_kron():
    _grads_match(lambda lib, x: [lib.msort(x), x.msort(), lib.diagflat(x), x.diagflat(-1),
                                 x[0].diagflat(2), lib.kron(x, x[0]), x.kron(x)],
                 [[3.0, 1.0, 4.0], [1.0, 5.0, 9.0]])
    got, want = [lib.diagflat(lib.ones(2, 2, requires_grad=True)) for lib in LIBS]
    assert type(got.grad_fn.next_functions[0][0]).__name__ == type(
        want.grad_fn.next_functions[0][0]).__name__ == "ViewBackward0"


def test_logspace():
    for args, kwargs in [((0, 2, 3), {}), ((0, 2, 3), {"base": 2, "dtype": "float64"}),
                         ((0, 2, 3), {"dtype": "int64"}), ((0, 1, 1), {}), ((0, 1, 0), {}),
                         ((-1.0, 1.5, 4), {"base": 3.0})]:
        got, want = [lib.logspace(*args, **{k: getattr(lib, v) if k == "dtype" else v
                                            for k, v in kwargs.items()}) for lib in LIBS]
        _same(got, want)
    _raises_like(lambda lib: lib.logspace(0, 1, -1))


def test_fmax_fmin():
    for name in ["fmax", "fmin"]:
        res = []
        for lib in LIBS:
            a = lib.tensor([1.0, NAN, 3.0, NAN, 2.0], requires_grad=True)
            b = lib.tensor([2.0, 2.0, NAN, NAN, 2.0], requires_grad=True)
            f = getattr(lib, name)(a, b)
            f.sum().backward()
            res.append((f, a.grad, b.grad, getattr(lib.tensor([1, 5]), name)(lib.tensor([3, 2])),
                        getattr(lib, name)(lib.tensor([1, 5]), lib.tensor([3.0, 2.0]))))
        for u, w in zip(*res):
            _same(u, w)
        assert _node(res[0][0]) == _node(res[1][0])
        _raises_like(lambda lib: getattr(lib, name)(lib.zeros(2), 1.0))


def test_signbit():
    for data in [[-0.0, 0.0, -1.0, NAN, -NAN, 2.5], [-1, 2, 0], [True, False]]:
        got, want = [lib.signbit(lib.tensor(data)) for lib in LIBS]
        _same(got, want)
        _same(ng.tensor(data).signbit(), want)


@pytest.mark.parametrize("kwargs", [{}, {"return_inverse": True}, {"return_counts": True},
                                    {"return_inverse": True, "return_counts": True, "dim": 0},
                                    {"return_counts": True, "dim": 1}])
def test_unique_consecutive(kwargs):
    for data in [[1, 1, 2, 2, 3, 1, 1, 2], [[1, 1, 2], [1, 1, 3], [1, 1, 3]], [1.5, 1.5, 2.0]]:
        if "dim" in kwargs and np.ndim(data) < 2:
            continue
        got, want = [lib.unique_consecutive(lib.tensor(data), **kwargs) for lib in LIBS]
        if not isinstance(want, tuple):
            got, want = (got,), (want,)
        assert len(got) == len(want)
        for u, w in zip(got, want):
            _same(u, w)
    _same(ng.tensor([[1, 1], [2, 2]]).unique_consecutive(),
          torch.tensor([[1, 1], [2, 2]]).unique_consecutive())


# ---------------------------------------------------------------- indexing

def _index_run(fn):
    """``fn(lib, x, s)`` for x (3, 2) and s (2, 2) float64 leaves needing gradients, the
    result weighted and backpropagated: result, node and both gradients must match."""
    res = []
    for lib in LIBS:
        x = lib.tensor(np.arange(6.0).reshape(3, 2), dtype=lib.float64, requires_grad=True)
        s = lib.tensor([[10.0, 20.0], [30.0, 40.0]], dtype=lib.float64, requires_grad=True)
        r = fn(lib, x, s)
        (r * lib.arange(1.0, r.numel() + 1, dtype=lib.float64).reshape(r.shape)).sum().backward()
        res.append((r, x.grad, s.grad))
    (r, g, gs), (rt, gt, gst) = res
    _same(r, rt)
    assert _node(r) == _node(rt)
    for u, w in ((g, gt), (gs, gst)):
        assert (u is None) == (w is None)
        if u is not None:
            _same(u, w)


@pytest.mark.parametrize("fn", [
    lambda lib, x, s: lib.index_copy(x, 0, lib.tensor([2, 0]), s),
    lambda lib, x, s: x.index_copy(1, lib.tensor([1, 0]), lib.cat([s, s[:1]])),
    lambda lib, x, s: (x * 1).index_copy_(0, lib.tensor([1]), s[:1]),
    lambda lib, x, s: lib.index_copy(x[0], 0, lib.tensor(1), s[0, 0]),
])
def test_index_copy(fn):
    _index_run(fn)


@pytest.mark.parametrize("bad", [
    lambda z: z.index_copy(0, z.new_tensor([5], dtype=None).long(), z.new_ones(1, 2)),
    lambda z: z.index_copy(0, z.new_tensor([-1]).long(), z.new_ones(1, 2)),
    lambda z: z.index_copy(0, z.new_tensor([0.0]), z.new_ones(1, 2)),
    lambda z: z.index_copy(0, z.new_tensor([0]).int(), z.new_ones(1, 2)),
    lambda z: z.index_copy(0, z.new_tensor([0]).long(), z.new_ones(2, 2)),
    lambda z: z.index_copy(0, z.new_tensor([0, 1]).long(), z.new_ones(2, 2).double()),
    lambda z: z.index_copy(0, z.new_tensor([[0, 1]]).long(), z.new_ones(2, 2)),
    lambda z: z.index_copy(0, z.new_tensor([0]).long(), z.new_ones(1, 3)),
    lambda z: z.index_copy(0, z.new_tensor(1).long(), z.new_ones(2)),
    lambda z: z.index_copy(0, z.new_tensor([0, 1]).long(), z.new_tensor(1.0)),
    lambda z: z.index_copy(2, z.new_tensor([0]).long(), z.new_ones(1, 2)),
])
def test_index_copy_errors(bad):
    _raises_like(lambda lib: bad(lib.zeros(3, 2)))


@pytest.mark.parametrize("fn", [
    lambda lib, x, s: lib.index_put(x, (lib.tensor([0, 2]), lib.tensor([1, 0])), s[0]),
    lambda lib, x, s: x.index_put((lib.tensor([0, 0]),), s[1], accumulate=True),
    lambda lib, x, s: x.index_put([lib.tensor([0, 0]), lib.tensor([1, 1])], s[0],
                                  accumulate=True),
    lambda lib, x, s: x.index_put((lib.tensor([True, False, True]),), s[0, 0]),
    lambda lib, x, s: x.index_put((lib.tensor([True, False, True]), lib.tensor([0, 1])),
                                  s[0, :1], accumulate=True),
    lambda lib, x, s: (x * 1).index_put_((lib.tensor([1, -1]),), s),
    lambda lib, x, s: lib.index_put_(x * 1, (lib.tensor([1]),), s[1], accumulate=True),
])
def test_index_put(fn):
    _index_run(fn)


@pytest.mark.parametrize("bad", [
    lambda lib, z: z.index_put((lib.tensor([5]),), lib.tensor(1.0)),
    lambda lib, z: z.index_put((lib.tensor([5]),), lib.tensor(1.0), accumulate=True),
    lambda lib, z: z.index_put((lib.tensor([-4]),), lib.tensor(1.0), accumulate=True),
    lambda lib, z: z.index_put((lib.tensor([1]),), lib.tensor(1.0, dtype=lib.float64)),
    lambda lib, z: z.index_put((lib.tensor([1.0]),), lib.tensor(1.0)),
    lambda lib, z: z.index_put((lib.tensor([1]), slice(None)), lib.tensor(1.0)),
    lambda lib, z: z.index_put((lib.tensor([0]),), lib.ones(3)),
    lambda lib, z: z.index_put((lib.tensor([0]),), lib.ones(3), accumulate=True),
    lambda lib, z: lib.zeros(2, requires_grad=True).index_put_((lib.tensor([0]),),
                                                               lib.tensor(1.0)),
])
def test_index_put_errors(bad):
    _raises_like(lambda lib: bad(lib, lib.zeros(3, 2)))
    z = ng.zeros(3, 2)
    with pytest.raises(IndexError):
        z.index_put_((ng.tensor([1, 5]),), ng.tensor(1.0), accumulate=True)
    assert not z.any() and z._version == 0  # (left unchanged)


@pytest.mark.parametrize("fn", [
    lambda lib, x, s: lib.take(x, lib.tensor([[0, 5], [-1, 1]])),
    lambda lib, x, s: x.t().take(lib.tensor([1, 1, 2])),
    lambda lib, x, s: x.put(lib.tensor([0, 5]), s[0]),
    lambda lib, x, s: lib.put(x.t(), lib.tensor([[1, -1]]), s[:1]),
    lambda lib, x, s: x.put(lib.tensor([1, 1, 3, 1]), s, accumulate=True),
    lambda lib, x, s: (x * 1).put_(lib.tensor([2, 3]), s[1], accumulate=True),
])
def test_take_put(fn):
    _index_run(fn)


@pytest.mark.parametrize("bad", [
    lambda lib, z: lib.take(z, lib.tensor([6])),
    lambda lib, z: lib.take(z, lib.tensor([-7])),
    lambda lib, z: lib.take(z, lib.tensor([1.0])),
    lambda lib, z: lib.take(z, lib.tensor([1], dtype=lib.int32)),
    lambda lib, z: z.put(lib.tensor([6]), lib.tensor([1.0])),
    lambda lib, z: z.put(lib.tensor([0, 1]), lib.tensor([1.0])),
    lambda lib, z: z.put(lib.tensor([0]), lib.tensor([1])),
    lambda lib, z: z.put_(lib.tensor([0.0]), lib.tensor([1.0])),
    lambda lib, z: lib.zeros(2, requires_grad=True).put_(lib.tensor([0]), lib.tensor([1.0])),
])
def test_take_put_errors(bad):
    _raises_like(lambda lib: bad(lib, lib.zeros(3, 2)))


# ---------------------------------------------------------------- cov, corrcoef

COV_DATA = [[1.0, 2.0, 4.0, 7.0], [2.0, 1.0, 0.0, 5.0], [0.0, 3.0, 3.0, 1.0]]


@pytest.mark.parametrize("kwargs", [{}, {"correction": 0}, {"fweights": [1, 2, 1, 3]},
                                    {"aweights": [0.5, 1.0, 2.0, 1.0]},
                                    {"fweights": [1, 2, 1, 3], "aweights": [0.5, 1.0, 2.0, 1.0],
                                     "correction": 2}])
def test_cov(kwargs):
    def run(lib, x):
        kw = {k: lib.tensor(v, dtype=lib.float64) if k == "aweights" else
              lib.tensor(v) if k == "fweights" else v for k, v in kwargs.items()}
        return [lib.cov(x, **kw), x[1].cov(**kw)]

    _grads_match(run, COV_DATA)


def test_corrcoef():
    _grads_match(lambda lib, x: [lib.corrcoef(x), x[:2].corrcoef(), lib.corrcoef(x[0])],
                 COV_DATA)
    for make in [lambda lib: lib.tensor([[1, 2, 4], [0, 1, 1]]),
                 lambda lib: lib.tensor([[1.0, 2.0], [3.0, 3.0]])]:
        for name in ["cov", "corrcoef"]:
            got, want = [getattr(lib, name)(make(lib)) for lib in LIBS]
            _same(got, want)


def test_cov_degrees_of_freedom_warning():
    for lib in LIBS:
        with pytest.warns(UserWarning, match=r"^cov\(\): degrees of freedom is <= 0\."):
            c = lib.cov(lib.tensor([1.0, 2.0]), correction=3)
        assert c.item() == float("inf")


@pytest.mark.parametrize("bad", [
    lambda lib, x: lib.cov(lib.zeros(2, 2, 2)),
    lambda lib, x: lib.cov(lib.tensor([True])),
    lambda lib, x: lib.cov(x, fweights=lib.ones(4)),
    lambda lib, x: lib.cov(x, aweights=lib.ones(4, dtype=lib.int64)),
    lambda lib, x: lib.cov(x, fweights=lib.tensor([1, 2])),
    lambda lib, x: lib.cov(x, fweights=lib.tensor([1, -2, 1, 1])),
    lambda lib, x: lib.cov(x, aweights=lib.ones(2, 2)),
    lambda lib, x: lib.cov(x, fweights=lib.zeros(4, dtype=lib.int64)),
    lambda lib, x: lib.corrcoef(lib.zeros(1, 1, 1)),
])
def test_cov_errors(bad):
    _raises_like(lambda lib: bad(lib, lib.tensor(COV_DATA)))


@pytest.mark.parametrize("fn", [
    lambda lib, x, s: lib.masked_scatter(x, lib.tensor([[True, False], [False, False],
                                                        [True, True]]), s),
    lambda lib, x, s: x.masked_scatter(lib.tensor([False, True]), s.t()),
    lambda lib, x, s: x[0].masked_scatter(lib.tensor([[True, False], [True, True]]), s),
    lambda lib, x, s: (x * 1).masked_scatter_(lib.tensor([True, False]), s),
])
def test_masked_scatter(fn):
    _index_run(fn)


@pytest.mark.parametrize("bad", [
    lambda lib, z, m: z.masked_scatter(m.long(), lib.ones(6)),
    lambda lib, z, m: z.masked_scatter(m, lib.ones(2)),
    lambda lib, z, m: z.masked_scatter(m, lib.ones(6, dtype=lib.float64)),
    lambda lib, z, m: z.masked_scatter(lib.ones(3, 3, dtype=lib.bool), lib.ones(9)),
    lambda lib, z, m: lib.zeros(2, requires_grad=True).masked_scatter_(m[0, :2], lib.ones(2)),
])
def test_masked_scatter_errors(bad):
    _raises_like(lambda lib: bad(lib, lib.zeros(2, 3), lib.tensor([[True, False, True],
                                                                   [False, True, True]])))
