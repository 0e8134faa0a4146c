"""max/min with indices (one kernel, NaN and ties as PyTorch's CPU), their scatter gradient,
sums and means over leading dims and large whole sums (the lean reduction hook), and einsum's
planned ops, each against torch."""

import numpy as np
import pytest
import torch

import numbagrad as ng

RNG = np.random.default_rng(7)


def _pair(a, requires_grad=False):
    return (ng.tensor(a, requires_grad=requires_grad),
            torch.tensor(a, requires_grad=requires_grad))


def _ints(shape, dtype):
    # few distinct values: ties in every row
    return RNG.integers(-3, 3, shape).astype(dtype)


def _with_nans(shape, dtype=np.float32):
    a = _ints(shape, dtype)
    if a.size:
        a.flat[RNG.integers(0, a.size, max(1, a.size // 7))] = np.nan
        a[(0,) * (a.ndim - 1)] = np.nan if a.ndim else a  # a row of NaNs only
    return a


SHAPES = [(7, 13), (3, 9, 5), (2, 33), (1, 1), (5,), (), (4, 0, 3)]
DTYPES = [np.float32, np.float64, np.int64, np.int32, np.int16, np.uint8, np.bool_]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_values_and_indices_match_torch(shape, dtype):
    a = _with_nans(shape, dtype) if np.dtype(dtype).kind == "f" else _ints(shape, dtype)
    x, tx = _pair(a)
    for dim in range(-max(len(shape), 1), max(len(shape), 1)):
        for keepdim in (False, True):
            for name in ("max", "min"):
                try:
                    want = getattr(tx, name)(dim=dim, keepdim=keepdim)
                except (RuntimeError, IndexError) as e:
                    message = str(e)[:30].replace("(", ".").replace(")", ".")
                    with pytest.raises(type(e), match=message):
                        getattr(x, name)(dim=dim, keepdim=keepdim)
                    continue
                got = getattr(x, name)(dim, keepdim)
                assert type(got).__name__ == name
                np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
                np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
                assert got.indices.dtype is ng.int64
            for name in ("amax", "amin") + (() if dtype is np.bool_ else ("argmax", "argmin")):
                if not a.size:
                    continue
                np.testing.assert_array_equal(getattr(x, name)(dim, keepdim).numpy(),
                                              getattr(tx, name)(dim, keepdim).numpy())
    if a.size and dtype is not np.bool_:
        for name in ("argmax", "argmin", "amax", "amin", "max", "min"):
            np.testing.assert_array_equal(getattr(x, name)().numpy(), getattr(tx, name)().numpy())


@pytest.mark.parametrize("n", [1, 7, 8, 9, 16, 63, 64, 65, 517])
def test_nan_position_and_ties_in_long_rows(n):
    # every position of the first NaN and of the first maximum against the 8-lane loops
    for k in range(0, n, max(1, n // 9)):
        a = RNG.standard_normal((3, n)).astype(np.float32)
        a[0, k] = np.nan
        a[0, (k + 3) % n] = np.nan
        a[1, k] = a[1, (k + n // 2) % n] = 100.0
        a[2, :] = 1.0
        a[2, k] = -np.inf
        x, tx = _pair(a)
        for name in ("max", "min"):
            got, want = getattr(x, name)(1), getattr(tx, name)(1)
            np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
            np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
            for other in ("amax", "amin", "argmax", "argmin"):
                np.testing.assert_array_equal(getattr(x, other)(1).numpy(),
                                              getattr(tx, other)(1).numpy())


def test_non_contiguous_inputs():
    a = RNG.integers(-4, 4, (6, 10, 4)).astype(np.float64)
    a[2, 3, 1] = np.nan
    x, tx = _pair(a)
    for xs, ts in ((x.transpose(0, 2), tx.transpose(0, 2)), (x[:, ::3], tx[:, ::3]),
                   (x.permute(2, 0, 1), tx.permute(2, 0, 1))):
        for dim in range(3):
            for name in ("max", "min"):
                got, want = getattr(xs, name)(dim), getattr(ts, name)(dim)
                np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
                np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
            for name in ("amax", "argmax", "sum", "mean"):
                np.testing.assert_allclose(getattr(xs, name)(dim).numpy(),
                                           getattr(ts, name)(dim).numpy(), rtol=1e-12)


def _grad_of(lib, x, name, dim, keepdim, weights):
    v = getattr(x, name)(dim, keepdim).values
    (v * lib.tensor(weights)).sum().backward()
    return v


@pytest.mark.parametrize("shape,dim", [((7, 13), 1), ((7, 13), 0), ((3, 9, 5), 1),
                                       ((3, 9, 5), -1), ((5,), 0), ((), 0), ((), -1)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_gradient_scattered_to_the_index(shape, dim, keepdim):
    a = _with_nans(shape) if shape else np.float32(2.5)
    for name in ("max", "min"):
        x, tx = _pair(np.asarray(a), requires_grad=True)
        want = getattr(tx, name)(dim, keepdim).values
        weights = np.arange(1, want.numel() + 1, dtype=np.float32).reshape(want.shape)
        got = _grad_of(ng, x, name, dim, keepdim, weights)
        _grad_of(torch, tx, name, dim, keepdim, weights)
        assert got.grad_fn.name() == want.grad_fn.name()
        np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
        # an expanded gradient (a sum's) and a non-contiguous input
        x, tx = _pair(np.asarray(a), requires_grad=True)
        xs, ts = (x.t(), tx.t()) if x.ndim == 2 else (x, tx)
        getattr(xs, name)(dim, keepdim).values.sum().backward()
        getattr(ts, name)(dim, keepdim).values.sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_gradient_under_create_graph_records_the_scatter():
    a = RNG.standard_normal((4, 6)).astype(np.float64)
    for name in ("max", "min"):
        x, tx = _pair(a, requires_grad=True)
        outs = []
        for lib, t in ((ng, x), (torch, tx)):
            v = getattr(t, name)(1).values
            (g,) = lib.autograd.grad((v * v).sum(), t, create_graph=True)
            (gg,) = lib.autograd.grad((g * g).sum(), t)
            outs.append((g, gg))
        (g, gg), (tg, tgg) = outs
        assert g.grad_fn.name() == tg.grad_fn.name()
        assert ([f.name() for f, _ in g.grad_fn.next_functions if f is not None]
                == [f.name() for f, _ in tg.grad_fn.next_functions if f is not None])
        np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy())
        np.testing.assert_allclose(gg.numpy(), tgg.numpy())


# ---------------------------------------------------------------- sums and means over leading dims


LEADING = [((256, 64), 0), ((32, 16, 16), (0, 1)), ((32, 16, 16), [1, 0]), ((32, 16, 16), -3),
           ((5, 4, 3), [-3, -2]), ((6, 7), (0, 1)), ((6, 7), [0, -1]), ((3, 1, 4), 0),
           ((1000, 60), 0), ((4, 5), 1), ((2, 3, 4), (1, 2))]


@pytest.mark.parametrize("shape,dim", LEADING)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sum_and_mean_over_leading_dims(shape, dim, keepdim, dtype):
    a = RNG.standard_normal(shape).astype(dtype)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype is np.float32 else dict(rtol=1e-12)
    for name, node in (("sum", "SumBackward1"), ("mean", "MeanBackward1")):
        for requires_grad in (False, True):
            x, tx = _pair(a, requires_grad)
            got = getattr(x, name)(dim, keepdim=keepdim)
            want = getattr(tx, name)(dim, keepdim=keepdim)
            assert got.shape == want.shape and got.dtype is getattr(ng, str(want.dtype)[6:])
            np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), **tol)
            if not requires_grad:
                assert got.grad_fn is None
                continue
            assert got.grad_fn.name() == want.grad_fn.name() == node
            weights = np.arange(got.numel(), dtype=dtype).reshape(tuple(got.shape))
            (got * ng.tensor(weights)).sum().backward()
            (want * torch.tensor(weights)).sum().backward()
            np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), **tol)


def test_sum_over_leading_dims_keyword_and_dtype_rules():
    a = RNG.integers(-5, 5, (6, 4, 3))
    for dtype in (np.int64, np.int32, np.uint8, np.bool_, np.float32):
        x, tx = _pair(a.astype(dtype))
        for kwargs in ({"dim": 0}, {"dim": (0, 1), "keepdim": True}, {"dim": [0]}):
            got, want = x.sum(**kwargs), tx.sum(**kwargs)
            assert str(got.dtype)[10:] == str(want.dtype)[6:]
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    x, tx = _pair(a.astype(np.float32))
    assert ng.sum(x, 0, True).shape == torch.sum(tx, 0, True).shape
    np.testing.assert_allclose(ng.mean(x, dim=(0,)).numpy(), torch.mean(tx, dim=(0,)).numpy(),
                               rtol=1e-6)
    # empty dim lists reduce everything; empty tensors; errors as PyTorch's
    np.testing.assert_allclose(x.sum([]).numpy(), tx.sum([]).numpy(), rtol=1e-6)
    e, te = _pair(np.zeros((0, 3), np.float32))
    np.testing.assert_array_equal(e.sum(0).numpy(), te.sum(0).numpy())
    assert e.sum(1).shape == te.sum(1).shape
    for bad in (3, (0, 3), (0, 0), -4):
        with pytest.raises((IndexError, RuntimeError)) as err:
            tx.sum(bad)
        with pytest.raises(type(err.value), match=str(err.value)[:20].replace("(", ".")):
            x.sum(bad)


def test_saved_dim_of_the_leading_sum_node():
    x, tx = _pair(RNG.standard_normal((4, 5, 6)).astype(np.float32), requires_grad=True)
    got, want = x.sum((1, 0), keepdim=True), tx.sum((1, 0), keepdim=True)
    assert got.grad_fn.name() == want.grad_fn.name()
    assert tuple(got.grad_fn._saved_dim) == tuple(want.grad_fn._saved_dim)
    assert got.grad_fn._saved_keepdim == want.grad_fn._saved_keepdim


@pytest.mark.parametrize("shape", [(256, 256), (65536,), (300, 301), (70000,)])
def test_large_whole_sum(shape):
    a = RNG.standard_normal(shape).astype(np.float32)
    x, tx = _pair(a, requires_grad=True)
    got, want = x.sum(), tx.sum()
    assert got.grad_fn.name() == want.grad_fn.name() == "SumBackward0"
    np.testing.assert_allclose(got.item(), a.astype(np.float64).sum(), rtol=1e-5, atol=1e-3)
    got.backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones(shape, np.float32))
    np.testing.assert_allclose(x.mean().item(), want.item() / a.size, rtol=1e-5, atol=1e-6)
    # a permuted (dense) input: its memory in order
    xt = ng.tensor(a.reshape(-1, 1)).t() if a.ndim == 1 else ng.tensor(a).t()
    np.testing.assert_allclose(xt.sum().item(), a.astype(np.float64).sum(), rtol=1e-5,
                               atol=1e-3)


# ---------------------------------------------------------------- einsum

EQUATIONS = [
    ("bij,bjk->bik", [(3, 4, 5), (3, 5, 2)]),
    ("ij,jk->ik", [(4, 5), (5, 2)]),
    ("bi,bi->b", [(3, 4), (3, 4)]),
    ("ii->i", [(4, 4)]),
    ("ij->ji", [(3, 4)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("i,j->ij", [(3,), (4,)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(3, 4), (1, 4, 5)]),
    ("bij,bjk", [(3, 4, 5), (3, 5, 2)]),
    ("ij,ij->", [(3, 4), (3, 4)]),
    ("ijk->kji", [(2, 3, 4)]),
    ("ij->", [(3, 4)]),
    ("ii", [(3, 3)]),
    ("bij,bjk,bkl->bil", [(2, 3, 4), (2, 4, 5), (2, 5, 6)]),
    ("i,j,k->ijk", [(2,), (3,), (4,)]),
    ("ij,j->i", [(3, 4), (4,)]),
    ("bij,jk->bik", [(2, 3, 4), (4, 5)]),
    ("bi,ci->bci", [(1, 3), (4, 3)]),
]


def _chain(fn):
    if fn is None:
        return None
    return (fn.name(), tuple(_chain(f) for f, _ in fn.next_functions))


@pytest.mark.parametrize("equation,shapes", EQUATIONS)
def test_einsum_values_gradients_and_nodes(equation, shapes):
    arrays = [RNG.standard_normal(s).astype(np.float64) for s in shapes]
    for repeat in range(2):  # (the second call runs the cached plan)
        for requires_grad in (False, True):
            xs = [ng.tensor(a, requires_grad=requires_grad) for a in arrays]
            ts = [torch.tensor(a, requires_grad=requires_grad) for a in arrays]
            got, want = ng.einsum(equation, *xs), torch.einsum(equation, *ts)
            assert got.shape == want.shape
            np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12,
                                       atol=1e-12)
            if not requires_grad:
                assert got.grad_fn is None
                continue
            if equation in ("ij->ji", "ijk->kji"):  # (the ones whose nodes are PyTorch's)
                assert _chain(got.grad_fn) == _chain(want.grad_fn)
            weights = RNG.standard_normal(tuple(want.shape))
            (got * ng.tensor(weights)).sum().backward()
            (want * torch.tensor(weights)).sum().backward()
            for x, t in zip(xs, ts):
                np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-10,
                                           atol=1e-12)


def test_einsum_plan_is_per_shape_and_errors_every_call():
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((3, 4))
    got = ng.einsum("ij,jk->ik", ng.tensor(a), ng.tensor(b))
    np.testing.assert_allclose(got.numpy(), a @ b)
    c = RNG.standard_normal((5, 2))
    np.testing.assert_allclose(ng.einsum("ij,jk->ik", ng.tensor(c), ng.tensor(a)).numpy(), c @ a)
    np.testing.assert_allclose(ng.einsum("ij,jk->ik", [ng.tensor(a), ng.tensor(b)]).numpy(),
                               a @ b)
    for _ in range(2):
        with pytest.raises(RuntimeError, match="does not broadcast"):
            ng.einsum("ij,jk->ik", ng.tensor(a), ng.tensor(c))
        with pytest.raises(RuntimeError, match="more operands"):
            ng.einsum("ij->ij", ng.tensor(a), ng.tensor(b))
