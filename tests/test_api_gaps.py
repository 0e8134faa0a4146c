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
