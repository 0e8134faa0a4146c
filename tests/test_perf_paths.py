"""The fast paths of sorts and selections (``kernels_sort``), transposed copies
(``kernels_copy``), random draws and small factory calls, against PyTorch (values, indices,
gradients, layouts) and against the stable order numbagrad defines where PyTorch's depends on
its algorithm (topk and kthvalue among equal values)."""

from __future__ import annotations

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.backend import cpu

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64", "int64", "int32", "int16", "int8", "uint8"]


def _data(rng, shape, dtype, ties=False, specials=False, dim=-1):
    """Values of ``dtype``: with ``ties`` a few small ones, else distinct along ``dim`` (a
    random permutation there, from the dtype's least value for an integer dtype)."""
    if dtype.startswith("float"):
        a = (rng.integers(-3, 3, shape) if ties else rng.standard_normal(shape)).astype(dtype)
        if specials:
            m = rng.random(shape)
            a[m < 0.1] = np.nan
            a[(m >= 0.1) & (m < 0.2)] = -0.0
            a[(m >= 0.2) & (m < 0.25)] = np.inf
            a[(m >= 0.25) & (m < 0.3)] = -np.inf
        return a
    info = np.iinfo(dtype)
    if ties:
        return rng.integers(max(info.min, -4), min(info.max, 4), shape).astype(dtype)
    return (rng.random(shape).argsort(axis=dim) + int(info.min)).astype(dtype)


def _stable(a, d, k, largest):
    """The first k along d in numbagrad's order: a stable sort, largest or smallest first,
    NaN the largest (PyTorch's stable sort's order)."""
    t = torch.from_numpy(np.ascontiguousarray(a))
    v, i = t.sort(dim=d, descending=largest, stable=True)
    return v.narrow(d, 0, k).numpy(), i.narrow(d, 0, k).numpy()


def _same(x, y):
    x, y = np.asarray(x), np.asarray(y)
    assert x.shape == y.shape and x.dtype == y.dtype, (x.shape, y.shape, x.dtype, y.dtype)
    if x.dtype.kind == "f":
        np.testing.assert_array_equal(np.isnan(x), np.isnan(y))
        np.testing.assert_array_equal(np.signbit(x), np.signbit(y))  # (-0.0 kept)
    np.testing.assert_array_equal(x, y)


# ---------------------------------------------------------------- topk, sort, kthvalue


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,dim", [((5, 40), 1), ((5, 40), 0), ((3, 4, 50), 1),
                                       ((3, 4, 50), -1), ((200,), 0), ((2, 3, 4), 0)])
def test_topk_matches_torch_without_ties(dtype, shape, dim):
    rng = np.random.default_rng(1)
    a = _data(rng, shape, dtype, dim=dim)
    n = shape[dim]
    for k in sorted({0, 1, min(n, 5), min(n, 16), min(n, 17), n // 2, n}):
        for largest in (True, False):
            v, i = ng.tensor(a).topk(k, dim, largest=largest)
            tv, ti = torch.from_numpy(a).topk(k, dim, largest=largest)
            _same(v.numpy(), tv.numpy())
            _same(i.numpy(), ti.numpy())
            assert v._data.flags.c_contiguous and i._data.flags.c_contiguous


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8"])
@pytest.mark.parametrize("n", [7, 40, 300])
def test_topk_ties_and_nan_in_stable_order(dtype, n):
    # among equal values, the lower index first; NaN counts as the largest value; -0.0 and
    # 0.0 are equal (PyTorch's kernels pick among ties by their algorithm: fuzz.py's
    # KNOWN_OPEN topk_kthvalue_ties)
    rng = np.random.default_rng(2)
    a = _data(rng, (6, n), dtype, ties=True, specials=True)
    for k in sorted({0, 1, 3, min(n, 16), min(n, 17), min(n, 30), n}):
        for largest in (True, False):
            for dim in (1, 0):
                kk = min(k, a.shape[dim])
                v, i = ng.topk(ng.tensor(a), kk, dim=dim, largest=largest)
                ev, ei = _stable(a, dim, kk, largest)
                _same(v.numpy(), ev)
                _same(i.numpy(), ei)


def test_topk_sorted_false_and_noncontiguous_and_empty():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((40, 30)).astype(np.float32)
    x, t = ng.tensor(a).t(), torch.from_numpy(a).t()  # (a transposed view: copied by tiles)
    v, i = x.topk(4, 1, sorted=False)
    tv, ti = t.topk(4, 1, sorted=True)  # (numbagrad's unsorted order is the sorted one)
    _same(v.numpy(), tv.numpy())
    _same(i.numpy(), ti.numpy())
    v, i = x[:, ::3].topk(3, 0, largest=False)
    tv, ti = t[:, ::3].topk(3, 0, largest=False)
    _same(v.numpy(), tv.numpy())
    _same(i.numpy(), ti.numpy())
    for shape, dim, k in [((0, 5), 1, 2), ((0, 5), 0, 0), ((3, 0), 1, 0), ((2, 0, 4), 2, 3)]:
        v, i = ng.zeros(shape).topk(k, dim)
        tv, ti = torch.zeros(shape).topk(k, dim)
        assert tuple(v.shape) == tuple(tv.shape) and i.dtype == ng.int64
    with pytest.raises(RuntimeError):
        ng.zeros(3, 4).topk(5, 1)
    v, i = ng.tensor(2.5).topk(1)
    assert v.item() == 2.5 and i.item() == 0


def test_sort_bool_matches_torch():
    a = np.random.default_rng(16).random((3, 40)) < 0.5
    for desc in (False, True):
        v, i = ng.tensor(a).sort(1, descending=desc)
        tv, ti = torch.from_numpy(a).sort(dim=1, descending=desc, stable=True)
        _same(v.numpy(), tv.numpy())
        _same(i.numpy(), ti.numpy())


@pytest.mark.parametrize("dim,k,largest", [(1, 3, True), (0, 2, False), (1, 20, True),
                                           (-1, 25, False)])
def test_topk_gradient_matches_torch(dim, k, largest):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((6, 25))
    x, t = ng.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    g = rng.standard_normal(tuple(t.topk(k, dim, largest=largest).values.shape))
    ng.topk(x, k, dim, largest).values.backward(ng.tensor(g))
    torch.topk(t, k, dim, largest).values.backward(torch.tensor(g))
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())
    assert ng.topk(x, k, dim, largest).values.grad_fn.name() == "TopkBackward0"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,dim", [((4, 37), 1), ((4, 37), 0), ((3, 20, 6), 1),
                                       ((300,), 0), ((2, 2000), 1)])
def test_sort_is_torchs_stable_sort(dtype, shape, dim):
    rng = np.random.default_rng(5)
    for ties in (False, True):
        a = _data(rng, shape, dtype, ties=ties, specials=True)
        for desc in (False, True):
            v, i = ng.tensor(a).sort(dim, descending=desc)
            tv, ti = torch.from_numpy(a).sort(dim=dim, descending=desc, stable=True)
            _same(v.numpy(), tv.numpy())
            _same(i.numpy(), ti.numpy())
            _same(ng.argsort(ng.tensor(a), dim, descending=desc).numpy(), ti.numpy())
    a = _data(rng, shape, dtype, ties=True)
    _same(ng.msort(ng.tensor(a)).numpy(), torch.msort(torch.from_numpy(a)).numpy())


def test_sort_gradient_and_noncontiguous():
    rng = np.random.default_rng(6)
    a = rng.standard_normal((30, 20))
    x, t = ng.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    g = rng.standard_normal((20, 30))
    x.t().sort(0, descending=True).values.backward(ng.tensor(g))
    t.t().sort(dim=0, descending=True).values.backward(torch.tensor(g))
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())
    v, i = ng.tensor(a)[::2, 1::3].sort(1)
    tv, ti = torch.from_numpy(a)[::2, 1::3].sort(1)
    _same(v.numpy(), tv.numpy())
    _same(i.numpy(), ti.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int16"])
def test_kthvalue_median_mode_without_ties_match_torch(dtype):
    rng = np.random.default_rng(7)
    for dim, keepdim in ((1, False), (0, True)):
        a = _data(rng, (5, 41), dtype, dim=dim)
        x, t = ng.tensor(a), torch.from_numpy(a)
        for k in (1, 5, 17, 21, 41):
            kk = min(k, a.shape[dim])
            v, i = x.kthvalue(kk, dim, keepdim)
            tv, ti = t.kthvalue(kk, dim, keepdim)
            _same(v.numpy(), tv.numpy())
            _same(i.numpy(), ti.numpy())
        _same(x.median(dim).values.numpy(), t.median(dim).values.numpy())
        _same(x.median(dim).indices.numpy(), t.median(dim).indices.numpy())
        if dtype.startswith("float"):
            _same(x.nanmedian(dim).indices.numpy(), t.nanmedian(dim).indices.numpy())


def test_kthvalue_gradient_matches_torch():
    b = np.random.default_rng(8).standard_normal((4, 50))
    x, t = ng.tensor(b, requires_grad=True), torch.tensor(b, requires_grad=True)
    x.kthvalue(20, 1).values.sum().backward()
    t.kthvalue(20, 1).values.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


def test_select_threads_give_the_same_result(monkeypatch):
    # the parallel selection kernel (blocks of rows over Numba's threads): the same values
    numba = pytest.importorskip("numba")
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one Numba thread")
    rng = np.random.default_rng(10)
    a = rng.integers(-50, 50, (70, 90)).astype(np.float32)
    expected = _stable(a, 1, 5, True)
    monkeypatch.setattr(cpu, "PARALLEL_MIN", 64)
    before = ng.get_num_threads()
    ng.set_num_threads(2)
    try:
        v, i = cpu.select(a, 1, 5, True)
    finally:
        ng.set_num_threads(before)
    _same(v, expected[0])
    _same(i, expected[1])


# ---------------------------------------------------------------- transposed copies


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int16", "uint8", "bool"])
@pytest.mark.parametrize("shape,perm", [((130, 140), (1, 0)), ((3, 90, 70), (0, 2, 1)),
                                        ((20, 30, 40), (2, 0, 1)), ((4, 30, 20, 9), (0, 3, 1, 2)),
                                        ((9, 3000), (1, 0)), ((3000, 9), (1, 0)),
                                        ((2, 5, 4000), (2, 1, 0)), ((4000, 5), (1, 0))])
def test_contiguous_of_a_permuted_tensor(dtype, shape, perm):
    rng = np.random.default_rng(11)
    a = (rng.standard_normal(shape) * 50).astype(dtype)
    x = ng.tensor(a).permute(*perm)
    out = x.contiguous()
    expected = torch.from_numpy(a).permute(*perm).contiguous()
    _same(out.numpy(), expected.numpy())
    assert out.stride() == expected.stride() and out.is_contiguous()
    _same(ng.tensor(a).permute(*perm).reshape(-1).numpy(), expected.reshape(-1).numpy())
    c = x.clone(memory_format=ng.contiguous_format)
    _same(c.numpy(), expected.numpy())
    assert c.stride() == expected.stride()


def test_transposed_copy_every_layout_small(monkeypatch):
    # the tiled kernel from one element on: every permutation, slices and size-1 dims
    monkeypatch.setattr(cpu, "TRANSPOSE_MIN", 1)
    rng = np.random.default_rng(12)
    for trial in range(300):
        nd = int(rng.integers(2, 5))
        shape = tuple(int(s) for s in rng.integers(1, 12 if nd > 2 else 40, nd))
        a = rng.standard_normal(shape).astype(["float32", "float64", "int8"][trial % 3])
        v = a.transpose(rng.permutation(nd))
        if trial % 4 == 0:
            v = v[tuple(slice(None, None, int(rng.choice([1, 2, -1]))) for _ in range(nd))]
        out = cpu.ascontiguousarray(v)
        assert out.flags.c_contiguous and out.dtype == v.dtype
        np.testing.assert_array_equal(out, v)


def test_transposed_copy_threads(monkeypatch):
    numba = pytest.importorskip("numba")
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one Numba thread")
    monkeypatch.setattr(cpu, "TRANSPOSE_PARALLEL_MIN", 64)
    rng = np.random.default_rng(13)
    a = rng.standard_normal((3, 600, 70)).astype(np.float32)
    before = ng.get_num_threads()
    ng.set_num_threads(2)
    try:
        out = cpu.ascontiguousarray(a.transpose(0, 2, 1))
    finally:
        ng.set_num_threads(before)
    np.testing.assert_array_equal(out, a.transpose(0, 2, 1))


def test_transposed_copy_gradients_and_einsum():
    rng = np.random.default_rng(14)
    a = rng.standard_normal((150, 130))
    x, t = ng.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    g = rng.standard_normal((130, 150))
    (x.t().contiguous() * ng.tensor(g)).sum().backward()
    (t.t().contiguous() * torch.tensor(g)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())
    e = ng.einsum("ij->ji", ng.tensor(a)).contiguous()
    _same(e.numpy(), torch.einsum("ij->ji", torch.from_numpy(a)).contiguous().numpy())
    # x.T @ y reads the transposed operand as it is
    y = rng.standard_normal((150, 40))
    np.testing.assert_allclose((ng.tensor(a).T @ ng.tensor(y)).numpy(), a.T @ y, rtol=1e-12)


def test_copy_into_from_a_transposed_tensor():
    rng = np.random.default_rng(15)
    a = rng.standard_normal((140, 120)).astype(np.float32)
    dst = ng.zeros(120, 140)
    dst.copy_(ng.tensor(a).t())
    _same(dst.numpy(), np.ascontiguousarray(a.T))
    b = rng.standard_normal((130, 130)).astype(np.float32)
    src = ng.tensor(np.concatenate([b, b.T])).reshape(2, 130, 130)
    src[0].copy_(src[1].t())  # (the same memory, apart: the tiled copy)
    _same(src[0].numpy(), b)


# ---------------------------------------------------------------- random draws


@pytest.mark.parametrize("dtype", [ng.float32, ng.float64])
def test_random_draws_are_reproducible(dtype):
    def draws():
        ng.manual_seed(1234)
        out = [ng.randn(33, 7, dtype=dtype), ng.rand(5, 9, dtype=dtype),
               ng.randint(-5, 5, (7, 3)), ng.randn(3, dtype=dtype)]
        out.append(ng.empty(4, 65, dtype=dtype).normal_(2.0, 0.5))
        out.append(ng.empty(3, 3, dtype=dtype).normal_())
        out.append(ng.empty(31, dtype=dtype).uniform_(-2.0, 3.0))
        out.append(ng.empty(31, dtype=dtype).uniform_())
        return [t.numpy().copy() for t in out]

    first, second = draws(), draws()
    for x, y in zip(first, second):
        np.testing.assert_array_equal(x, y)
    g1, g2 = ng.Generator().manual_seed(7), ng.Generator().manual_seed(7)
    np.testing.assert_array_equal(ng.randn(101, generator=g1, dtype=dtype).numpy(),
                                  ng.randn(101, generator=g2, dtype=dtype).numpy())


def test_random_draws_shapes_ranges_and_moments():
    ng.manual_seed(0)
    for shape in [(), (0,), (1,), (7,), (4, 0, 3), (3, 5, 7)]:
        for dtype in (ng.float32, ng.float64):
            for t in (ng.randn(shape, dtype=dtype), ng.rand(shape, dtype=dtype)):
                assert tuple(t.shape) == shape and t.dtype == dtype
                assert t._data.flags.c_contiguous and t._data.flags.writeable
    u = ng.rand(200_000)
    assert u.dtype == ng.float32 and 0 <= u.min().item() and u.max().item() < 1
    z = ng.randn(200_001).numpy().astype(np.float64)
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
    assert abs(np.mean(z > 1.0) - 0.158655) < 0.004  # (the tail, not just the moments)
    w = ng.empty(100_000).normal_(3.0, 2.0).numpy().astype(np.float64)
    assert abs(w.mean() - 3) < 0.03 and abs(w.std() - 2) < 0.03
    v = ng.empty(100_000).uniform_(-2.0, 3.0).numpy()
    assert v.dtype == np.float32 and -2 <= v.min() and v.max() <= 3
    assert abs(v.mean() - 0.5) < 0.03
    r = ng.randint(0, 10, (1000,))
    assert r.dtype == ng.int64 and set(r.tolist()) == set(range(10))
    assert ng.randint(0, 3, (4,), dtype=ng.int32).dtype == ng.int32
    assert ng.randn(0, dtype=ng.int64).dtype == ng.int64
    assert ng.empty(4, dtype=ng.float64).normal_(0, 1e300).isfinite().all()


# ---------------------------------------------------------------- small factory calls


@pytest.mark.parametrize("data", [
    [[1.0, 2.0], [3.0, 4.0]], [1, 2, 3], (1, 2), [True, False], [True, 1], [True, 1.5],
    [[1, 2], [3, 4.5]], [[True]], [2**62], [], [[]], [[], []], ((1.5,), (2.0,)), [0.1, 3],
])
def test_tensor_from_python_data_matches_torch(data):
    x, t = ng.tensor(data), torch.tensor(data)
    assert str(x.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(x.shape) == tuple(t.shape) and x.tolist() == t.tolist()
    x = ng.tensor(data, dtype=ng.float64)
    assert x.dtype == ng.float64 and x.tolist() == torch.tensor(data, dtype=torch.float64).tolist()


def test_tensor_from_data_the_general_way_still():
    assert ng.tensor([ng.tensor(1.5), 2]).tolist() == [1.5, 2.0]
    assert ng.tensor([np.float64(1.5), 2]).dtype == ng.float64
    assert ng.tensor([np.int32(3)]).dtype == ng.int32
    with pytest.raises(ValueError, match="expected sequence of length 1 at dim 1"):
        ng.tensor([[1], [2, 3]])
    with pytest.raises(TypeError):
        ng.tensor([1, []])
    with pytest.raises((OverflowError, RuntimeError)):
        ng.tensor([2**64])
    ng.set_default_dtype(ng.float64)
    try:
        assert ng.tensor([1.0, 2]).dtype == ng.float64
        assert ng.tensor([1, 2]).dtype == ng.int64
    finally:
        ng.set_default_dtype(ng.float32)


def test_from_numpy_like_factories_conversions_and_item():
    a = np.ones(10, np.float32)
    x = ng.from_numpy(a)
    a[0] = 5
    assert x[0].item() == 5.0  # (shared memory)
    with pytest.raises(ValueError, match="negative"):
        ng.from_numpy(a[::-1])
    assert ng.from_numpy(np.ones((), np.float32)).item() == 1.0  # (0-d: no strides)
    b = ng.tensor(np.arange(12.0).reshape(3, 4))
    for fn, fill in ((ng.zeros_like, 0), (ng.ones_like, 1)):
        z = fn(b)
        assert z.dtype == ng.float64 and tuple(z.shape) == (3, 4) and (z == fill).all()
        assert fn(b, dtype=ng.int32).dtype == ng.int32
        assert fn(b, requires_grad=True).requires_grad
        assert fn(b.t()).stride() == torch.zeros(3, 4).t().stride()  # (preserve_format)
        with pytest.raises(RuntimeError):
            fn(b, dtype=ng.int64, requires_grad=True)
    assert tuple(ng.empty_like(b).shape) == (3, 4)
    d = b.float()
    assert d.dtype == ng.float32 and d.tolist() == b.tolist() and not d.requires_grad
    r = ng.tensor([[1.5, 2.5]], requires_grad=True)
    for y in (r.double(), r.to(ng.float64)):
        assert y.grad_fn.name() == "ToCopyBackward0"
    r.double().sum().backward()
    assert r.grad.tolist() == [[1.0, 1.0]]
    with ng.inference_mode():
        assert ng.ones(2).double().is_inference()
    assert b.t().double().stride() == torch.zeros(3, 4).t().double().stride()
    assert b[1, 2].item() == 6.0 and b[-1, -1].item() == 11.0 and b[(1,)].tolist() == [4, 5, 6, 7]
    with pytest.raises(IndexError):
        b[3, 0]
    g = ng.tensor([[1.0, 2.0]], requires_grad=True)
    e = g[0, 1]
    assert e.grad_fn.name() == "SelectBackward0"
    e.backward()
    assert g.grad.tolist() == [[0.0, 1.0]]
    assert g[()].grad_fn.name() == "AliasBackward0"  # (an empty index: no select)
    assert ng.tensor(3.0, requires_grad=True)[()].grad_fn.name() == "AliasBackward0"
    assert g[0, -1]._base is g and g[0, -1]._version_cell is g._version_cell  # (a view)
    with ng.no_grad():
        d = g.double()
    assert d.grad_fn is None and not d.requires_grad and d.dtype == ng.float64
