"""Corner cases found by comparing random programs with PyTorch: reductions of 0-d tensors,
empty tensors, NaNs and ties, constant slices in std/var, mT/T, splits of one piece.

Each case is written out with PyTorch 2.13's result (values, dtype, node name, gradient,
warning or error); the last tests also compare against PyTorch itself when it is installed
(it is part of the test extra)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import numbagrad as ng

NAN = math.nan
INF = math.inf
DOF_WARNING = r"\(\): degrees of freedom is <= 0\. Correction should be strictly less than"


def node(t):
    return type(t.grad_fn).__name__ if t.grad_fn is not None else None


def same(got, expected):
    """Values equal, NaN where NaN is expected (and the same shape)."""
    np.testing.assert_array_equal(np.asarray(got.tolist(), dtype=float),
                                  np.asarray(expected, dtype=float))


def scalar3():
    return ng.tensor(3.0, requires_grad=True)


# ---------------------------------------------------------------- reductions of a 0-d tensor

# (call, value, node, gradient of the value's sum); PyTorch 2.13
ZERO_D = [
    (lambda x: x.sum(0), 3.0, "SumBackward1", 1.0),
    (lambda x: x.sum(-1, keepdim=True), 3.0, "SumBackward1", 1.0),
    (lambda x: x.sum((0,)), 3.0, "SumBackward1", 1.0),
    (lambda x: x.mean(-1), 3.0, "MeanBackward1", 1.0),
    (lambda x: x.amax(0), 3.0, "AmaxBackward0", 1.0),
    (lambda x: x.amin(-1), 3.0, "AminBackward0", 1.0),
    (lambda x: x.max(0).values, 3.0, "MaxBackward0", 1.0),
    (lambda x: x.min(0, keepdim=True)[0], 3.0, "MinBackward0", 1.0),
    (lambda x: x.logsumexp(0), 3.0, "LogsumexpBackward0", 1.0),
    (lambda x: x.prod(0), 3.0, "ProdBackward1", 1.0),
    (lambda x: x.std(0, unbiased=False), 0.0, "StdBackward0", 0.0),
    (lambda x: x.var(0, correction=0), 0.0, "VarBackward0", 0.0),
    (lambda x: x.norm(dim=0), 3.0, "LinalgVectorNormBackward0", 1.0),
    (lambda x: ng.softmax(x, 0), 1.0, "SoftmaxBackward0", 0.0),
    (lambda x: ng.nn.functional.softmax(x, -1), 1.0, "SoftmaxBackward0", 0.0),
    (lambda x: ng.log_softmax(x, 0), 0.0, "LogSoftmaxBackward0", 0.0),
]


@pytest.mark.parametrize("call,value,name,grad", ZERO_D)
def test_a_reduction_along_dim_0_or_minus_1_of_a_0d_tensor(call, value, name, grad):
    x = scalar3()
    y = call(x)
    assert y.shape == () and y.dtype is ng.float32 and y.item() == value
    assert node(y) == name
    y.backward()
    assert x.grad.item() == grad


@pytest.mark.parametrize("call,value,grad", [
    (lambda x: x.prod(0), 0.0, 1.0),  # (the zero path of prod's backward)
    (lambda x: x.norm(dim=0), 0.0, 0.0),
    (lambda x: (x - 2).norm(dim=-1), 2.0, -1.0),
])
def test_prod_and_norm_of_a_0d_zero(call, value, grad):
    x = ng.tensor(0.0, requires_grad=True)
    y = call(x)
    assert y.item() == value
    y.backward()
    assert x.grad.item() == grad


def test_max_and_min_along_a_dim_of_a_0d_tensor_give_values_and_indices():
    x = scalar3()
    out = x.max(0)
    assert type(out).__name__ == "max"
    assert out.values.item() == 3.0 and node(out.values) == "MaxBackward0"
    assert out.indices.item() == 0 and out.indices.dtype is ng.int64 and out.indices.shape == ()
    out = x.min(-1, keepdim=True)
    assert type(out).__name__ == "min" and out.indices.shape == () and out.indices.item() == 0


@pytest.mark.parametrize("call", [lambda x: x.argmax(0), lambda x: x.argmin(-1),
                                  lambda x: x.argmax(0, keepdim=True)])
def test_argmax_along_a_dim_of_a_0d_tensor(call):
    out = call(scalar3())
    assert out.shape == () and out.dtype is ng.int64 and out.item() == 0


@pytest.mark.parametrize("call", [lambda x: x.std(0), lambda x: x.var(-1), lambda x: x.std()])
def test_std_and_var_of_a_0d_tensor_warn_and_give_nan(call):
    x = scalar3()
    with pytest.warns(UserWarning, match=DOF_WARNING):
        y = call(x)
    assert math.isnan(y.item())
    y.backward()
    assert math.isnan(x.grad.item())


@pytest.mark.parametrize("call,dim", [
    (lambda x: x.sum(1), 1), (lambda x: x.max(1), 1), (lambda x: x.mean(-2), -2),
    (lambda x: ng.softmax(x, 1), 1), (lambda x: x.argmax(1), 1), (lambda x: x.std(2), 2),
    (lambda x: x.logsumexp(-2), -2), (lambda x: x.amax((0, 1)), 1),
])
def test_an_out_of_range_dim_of_a_0d_tensor_is_pytorchs_index_error(call, dim):
    with pytest.raises(IndexError) as e:
        call(scalar3())
    assert str(e.value) == (
        f"Dimension out of range (expected to be in range of [-1, 0], but got {dim})"
    )


def test_dims_0_and_minus_1_of_a_0d_tensor_are_the_same_dim():
    with pytest.raises(RuntimeError) as e:
        scalar3().sum((0, -1))
    assert str(e.value) == "dim 0 appears multiple times in the list of dims"


# ---------------------------------------------------------------- an empty dim list


def test_an_empty_dim_list_reduces_every_dim():
    x = ng.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    y = x.sum(())
    assert y.shape == () and y.item() == 21.0 and node(y) == "SumBackward1"
    k = x.sum([], keepdim=True)
    assert k.shape == (1, 1) and k.item() == 21.0
    m = x.mean(())
    assert m.item() == 3.5 and node(m) == "MeanBackward1"
    m.backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 3), 1 / 6, np.float32))
    assert x.norm(dim=()).item() == pytest.approx(9.539392471313477)


def test_var_with_an_empty_dim_list_has_pytorchs_infinite_gradient():
    # PyTorch's backward counts the reduced elements over the given (no) dims: 2 / (1 - 1)
    x = ng.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    y = x.var(())
    assert y.item() == 3.5
    y.backward()
    same(x.grad, [[-INF, -INF, -INF], [INF, INF, INF]])


# ---------------------------------------------------------------- std / var corners


def test_std_of_a_constant_slice_has_a_zero_gradient():
    x = ng.tensor([[0.1, 0.1, 0.1], [1.0, 2.0, 4.0]], requires_grad=True)
    y = x.std(1)
    assert y[0].item() == 0.0
    y.sum().backward()
    assert x.grad[0].tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_allclose(x.grad[1].numpy(), [-0.4364357590675354, -0.10910891741514206,
                                                   0.5455447435379028], rtol=1e-6)


@pytest.mark.parametrize("call", [
    lambda x: x.std(), lambda x: x.std(correction=0), lambda x: x.std(1, unbiased=False),
    lambda x: x.std((0, 1)), lambda x: x.var(), lambda x: x.var(1),
    lambda x: x.var(0, correction=0),
])
def test_std_and_var_of_constant_input_have_zero_gradients(call):
    x = ng.tensor([[0.1, 0.1], [0.1, 0.1]], requires_grad=True)
    y = call(x)
    assert (y.detach().numpy() == 0).all()
    y.sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]


# (call, input, value, gradient of the value's sum, warns); PyTorch 2.13
DOF = [
    (lambda x: x.var(), [2.0], NAN, [NAN], True),
    (lambda x: x.var(1), [[1.0], [2.0]], [NAN, NAN], [[NAN], [NAN]], True),
    (lambda x: x.std(1), [[1.0], [2.0]], [NAN, NAN], [[NAN], [NAN]], True),
    (lambda x: x.var(correction=5), [1.0, 2.0, 4.0], INF, [INF, INF, INF], True),
    (lambda x: x.var(0, correction=5), [1.0, 2.0, 4.0], INF,
     [1.3333332538604736, 0.33333325386047363, -1.6666667461395264], True),
    (lambda x: x.std(correction=5), [1.0, 2.0, 4.0], INF, [NAN, NAN, NAN], True),
    (lambda x: x.std(0, correction=5), [1.0, 2.0, 4.0], INF, [0.0, 0.0, 0.0], True),
    (lambda x: x.var(0, correction=3), [1.0, 1.0, 4.0], INF, [-INF, -INF, INF], True),
    (lambda x: x.var(correction=3), [1.0, 1.0, 1.0], NAN, [NAN, NAN, NAN], True),
    (lambda x: x.std(0, correction=0), [[1.0, 2.0]], [0.0, 0.0], [[0.0, 0.0]], False),
]


@pytest.mark.parametrize("call,data,value,grad,warns", DOF)
def test_std_and_var_with_no_degrees_of_freedom(call, data, value, grad, warns):
    x = ng.tensor(data, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = call(x)
    op = "std" if node(y) == "StdBackward0" else "var"
    assert [str(w.message) for w in caught] == [
        f"{op}(): degrees of freedom is <= 0. Correction should be strictly less than the "
        "reduction factor (input numel divided by output numel)."
    ] * warns
    same(y, value)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), grad, rtol=1e-6)


@pytest.mark.parametrize("shape,dim", [((0, 3), 1), ((0, 3), 0), ((3, 0), 0)])
def test_var_of_an_empty_tensor_warns(shape, dim):
    with pytest.warns(UserWarning, match="var" + DOF_WARNING):
        y = ng.ones(shape).var(dim, correction=0)
    assert y.shape == (shape[1 - dim],)


def test_std_and_var_refuse_integers_with_pytorchs_message():
    for call in (lambda x: x.std(1), lambda x: x.var()):
        with pytest.raises(RuntimeError) as e:
            call(ng.tensor([[1, 2]]))
        assert str(e.value) == "std and var only support floating point and complex dtypes"


# ---------------------------------------------------------------- NaNs and ties in max / min

A1 = [[1.0, NAN, 3.0], [4.0, 5.0, 6.0]]
A2 = [[1.0, NAN, NAN], [NAN, 5.0, 6.0]]
TIES = [[1.0, 3.0, 3.0], [6.0, 5.0, 6.0]]
THIRD = 0.3333333432674408

# (data, call, value, node, gradient of the value's sum); PyTorch 2.13
EXTREMES = [
    (A1, lambda x: x.max(), NAN, "MaxBackward1", [[0, 1, 0], [0, 0, 0]]),
    (A1, lambda x: x.min(), NAN, "MinBackward1", [[0, 1, 0], [0, 0, 0]]),
    (A2, lambda x: x.max(), NAN, "MaxBackward1", [[0, THIRD, THIRD], [THIRD, 0, 0]]),
    (TIES, lambda x: x.max(), 6.0, "MaxBackward1", [[0, 0, 0], [0.5, 0, 0.5]]),
    (TIES, lambda x: x.min(), 1.0, "MinBackward1", [[1, 0, 0], [0, 0, 0]]),
    (A1, lambda x: x.amax(1), [NAN, 6.0], "AmaxBackward0", [[NAN, NAN, NAN], [0, 0, 1]]),
    (A1, lambda x: x.amax(0), [4.0, NAN, 6.0], "AmaxBackward0", [[0, NAN, 0], [1, NAN, 1]]),
    (A1, lambda x: x.amin(1), [NAN, 4.0], "AminBackward0", [[NAN, NAN, NAN], [1, 0, 0]]),
    (A1, lambda x: x.amax(), NAN, "AmaxBackward0", [[NAN] * 3] * 2),
    (A2, lambda x: x.amax(1), [NAN, NAN], "AmaxBackward0", [[NAN] * 3] * 2),
    (TIES, lambda x: x.amax(1), [3.0, 6.0], "AmaxBackward0", [[0, 0.5, 0.5], [0.5, 0, 0.5]]),
    (TIES, lambda x: x.amax(), 6.0, "AmaxBackward0", [[0, 0, 0], [0.5, 0, 0.5]]),
    (A1, lambda x: x.max(1).values, [NAN, 6.0], "MaxBackward0", [[0, 1, 0], [0, 0, 1]]),
    (A1, lambda x: x.min(0).values, [1.0, NAN, 3.0], "MinBackward0", [[1, 1, 1], [0, 0, 0]]),
    (A2, lambda x: x.max(1).values, [NAN, NAN], "MaxBackward0", [[0, 1, 0], [1, 0, 0]]),
    (TIES, lambda x: x.max(1).values, [3.0, 6.0], "MaxBackward0", [[0, 1, 0], [1, 0, 0]]),
]


@pytest.mark.parametrize("data,call,value,name,grad", EXTREMES)
def test_max_and_amax_gradients_with_nans_and_ties(data, call, value, name, grad):
    x = ng.tensor(data, requires_grad=True)
    y = call(x)
    same(y, value)
    assert node(y) == name
    y.sum().backward()
    same(x.grad, grad)


def test_amax_names_the_empty_dim_as_given():
    with pytest.raises(IndexError) as e:
        ng.ones(2, 0, 0).amax((-1, -2))
    assert str(e.value) == "amax(): Expected reduction dim -1 to have non-zero size."


# ---------------------------------------------------------------- large inputs (lazy paths)


def _large(seed=0):
    a = np.random.default_rng(seed).standard_normal((400, 300)).astype(np.float32)
    a[5, 7] = np.nan
    a[9, :] = 1.5  # a constant row
    a[11, 3] = a[11, 4] = 50.0  # a tie for the largest element
    return a


def test_large_amax_and_max_route_gradients_like_pytorch():
    a = _large()
    x = ng.tensor(a, requires_grad=True)
    x.amax(1).sum().backward()
    g = x.grad.numpy()
    assert np.isnan(g[5]).all() and not np.isnan(np.delete(g, 5, 0)).any()
    assert g[11, 3] == g[11, 4] == 0.5
    clean = np.delete(np.arange(400), [5, 9, 11])
    np.testing.assert_array_equal(g[clean].argmax(1), a[clean].argmax(1))
    assert (g[clean].sum(1) == 1).all()

    x = ng.tensor(a, requires_grad=True)
    (x * 0.5).exp().max().backward()  # the NaN takes the whole gradient
    g = x.grad.numpy()
    assert np.isnan(g[5, 7])  # (1 times the NaN's own exp derivative)
    assert np.count_nonzero(np.nan_to_num(g, nan=1.0)) == 1

    x = ng.tensor(a, requires_grad=True)
    x.max(1).values.sum().backward()
    g = x.grad.numpy()
    assert g[5, 7] == 1.0 and g[5].sum() == 1.0 and g[11, 3] == 1.0 and g[11, 4] == 0.0


def test_large_std_and_var_of_a_constant_row_have_zero_gradients():
    a = np.nan_to_num(_large())
    for call in (lambda x: x.std(1), lambda x: x.var(1), lambda x: x.std(1, correction=0)):
        x = ng.tensor(a, requires_grad=True)
        call(x).sum().backward()
        g = x.grad.numpy()
        assert (g[9] == 0).all()
        assert np.isfinite(g).all()
    x = ng.tensor(np.full((400, 300), 1.5, dtype=np.float32), requires_grad=True)
    x.std().backward()
    assert (x.grad.numpy() == 0).all()


# ---------------------------------------------------------------- empty tensors


@pytest.mark.parametrize("shape,dim", [((0,), 0), ((0, 3), 1), ((0, 3), 0), ((3, 0), 1),
                                       ((3, 0), 0)])
@pytest.mark.parametrize("fn,name", [(ng.softmax, "SoftmaxBackward0"),
                                     (ng.log_softmax, "LogSoftmaxBackward0")])
def test_softmax_of_an_empty_tensor_is_empty(shape, dim, fn, name):
    x = ng.ones(shape, requires_grad=True)
    y = fn(x, dim)
    assert y.shape == shape and y.dtype is ng.float32 and node(y) == name
    y.sum().backward()
    assert x.grad.shape == shape


# (shapes, result shape, node); PyTorch 2.13 (every value and gradient is 0 or empty)
EMPTY_MATMUL = [
    (lambda a, b: a @ b, (0, 3), (3, 0), (0, 0), "MmBackward0"),
    (lambda a, b: a @ b, (3, 0), (0, 2), (3, 2), "MmBackward0"),
    (lambda a, b: a @ b, (0, 3), (3, 2), (0, 2), "MmBackward0"),
    (lambda a, b: a @ b, (2, 3), (3, 0), (2, 0), "MmBackward0"),
    (ng.mm, (3, 0), (0, 2), (3, 2), "MmBackward0"),
    (ng.bmm, (2, 3, 0), (2, 0, 4), (2, 3, 4), "BmmBackward0"),
    (ng.bmm, (2, 0, 2), (2, 2, 4), (2, 0, 4), "BmmBackward0"),
    (ng.mv, (3, 0), (0,), (3,), "MvBackward0"),
    (ng.mv, (0, 3), (3,), (0,), "MvBackward0"),
    (ng.dot, (0,), (0,), (), "DotBackward0"),
    (lambda a, b: a @ b, (2, 3, 0), (0,), (2, 3), "UnsafeViewBackward0"),
    (lambda a, b: a @ b, (2, 3, 0), (0, 4), (2, 3, 4), "UnsafeViewBackward0"),
    (lambda a, b: a @ b, (0,), (2, 0, 3), (2, 3), "UnsafeViewBackward0"),
    (lambda a, b: a @ b, (2, 1, 3, 0), (4, 0, 2), (2, 4, 3, 2), "UnsafeViewBackward0"),
]


@pytest.mark.parametrize("fn,sa,sb,shape,name", EMPTY_MATMUL)
def test_zero_size_matmul_gives_zeros_and_zero_gradients(fn, sa, sb, shape, name):
    a = ng.ones(sa, requires_grad=True)
    b = ng.ones(sb, requires_grad=True)
    y = fn(a, b)
    assert y.shape == shape and node(y) == name
    assert (y.detach().numpy() == 0).all()
    (y * 2).sum().backward()
    assert a.grad.shape == sa and b.grad.shape == sb
    assert not a.grad.numpy().any() and not b.grad.numpy().any()


def test_one_d_times_batched_matrices_is_one_unsafe_view():
    y = ng.ones(3, requires_grad=True) @ ng.ones(2, 3, 4)
    assert y.shape == (2, 4) and node(y) == "UnsafeViewBackward0"


def test_stack_of_0d_tensors_backward():
    a, b = ng.tensor(3.0, requires_grad=True), ng.tensor(4.0, requires_grad=True)
    y = ng.stack([a, b], -1)
    assert y.tolist() == [3.0, 4.0] and node(y) == "StackBackward0"
    (y * ng.tensor([1.0, 2.0])).sum().backward()
    assert a.grad.item() == 1.0 and b.grad.item() == 2.0


@pytest.mark.parametrize("first", [True, False])
def test_cat_with_an_empty_1d_tensor_gives_it_an_empty_gradient(first):
    a = ng.tensor([[1.0, 2.0]], requires_grad=True)
    e = ng.ones(0, requires_grad=True)
    y = ng.cat([e, a] if first else [a, e], -1)
    assert y.tolist() == [[1.0, 2.0]] and node(y) == "CatBackward0"
    (y * 2).sum().backward()
    assert a.grad.tolist() == [[2.0, 2.0]]
    assert e.grad.shape == (0,) and e.grad.dtype is ng.float32


def test_cat_of_only_empty_1d_tensors_ignores_dim():
    y = ng.cat([ng.ones(0), ng.ones(0)], 1)
    assert y.shape == (0,)


def test_cat_names_the_position_of_a_0d_tensor():
    with pytest.raises(RuntimeError) as e:
        ng.cat([ng.ones(2), ng.tensor(3.0)], 5)
    assert str(e.value) == "zero-dimensional tensor (at position 1) cannot be concatenated"


@pytest.mark.parametrize("call,shape", [(lambda x: x.reshape(0, 3), (0,)),
                                        (lambda x: x.reshape(-1), (2, 0)),
                                        (lambda x: x.t().reshape(-1), (2, 0)),
                                        (lambda x: x.view(3, 0, 2).sum(1), (2, 0))])
def test_backward_through_empty_reshapes(call, shape):
    x = ng.ones(shape, requires_grad=True)
    y = call(x)
    y.sum().backward()
    assert x.grad.shape == shape


def test_an_ambiguous_reshape_of_an_empty_tensor():
    with pytest.raises(RuntimeError) as e:
        ng.ones(0).reshape(-1, 0)
    assert str(e.value) == (
        "cannot reshape tensor of 0 elements into shape [-1, 0] because the unspecified "
        "dimension size -1 can be any value and is ambiguous"
    )


def test_reductions_with_an_empty_result():
    # the kept dims hold no element: nothing to compute
    x = ng.ones(2, 0, 3, requires_grad=True)
    y = x.sum(0)
    assert y.shape == (0, 3) and node(y) == "SumBackward1"
    y.sum().backward()
    assert x.grad.shape == (2, 0, 3)


# ---------------------------------------------------------------- logsumexp of integers


def test_logsumexp_of_integers_is_a_default_float():
    y = ng.tensor([1, 2]).logsumexp(0)
    assert y.dtype is ng.float32 and y.item() == pytest.approx(2.3132617)
    y = ng.tensor([[True, False]]).logsumexp(1)
    assert y.dtype is ng.float32 and y.tolist() == pytest.approx([1.3132617])
    assert ng.tensor(5).logsumexp(0).item() == 5.0


def test_logsumexp_of_empty_rows_is_minus_inf_whatever_lies_next_to_them():
    # (its row kernel once began from the row's first element, which an empty row does not
    # have: it read the NaN next to it in memory; fuzzer seed 891)
    nan = float("nan")
    assert ng.full((3, 4), nan)[:, :0].logsumexp(1).tolist() == [-math.inf] * 3
    assert ng.full((2, 5), nan)[:, 1:1].logsumexp(-1).tolist() == [-math.inf] * 2
    assert ng.full((4, 3), nan).t()[:0].logsumexp(0).tolist() == [-math.inf] * 4
    # (the kernel's start, -inf, must be of the row's dtype: as a Python float it made a
    # float32 row's sum float64, where exp(89) does not overflow: [inf] gave 89.0)
    x = ng.tensor([[math.inf, 1.0, 0.5], [-math.inf] * 3, [nan, math.inf, 1.0],
                   [-math.inf, -math.inf, 1.0]])
    got = x.logsumexp(1).tolist()
    assert got[:2] == [math.inf, -math.inf] and got[2] != got[2] and got[3] == 1.0


def test_softmax_and_norm_refuse_integers_with_pytorchs_messages():
    x = ng.tensor([[1, 2]])
    with pytest.raises(NotImplementedError) as e:
        x.softmax(1)
    assert str(e.value) == "\"softmax_lastdim_kernel_impl\" not implemented for 'Long'"
    with pytest.raises(NotImplementedError) as e:
        x.log_softmax(0)
    assert str(e.value) == "\"log_softmax_kernel_impl\" not implemented for 'Long'"
    with pytest.raises(RuntimeError) as e:
        x.norm()
    assert str(e.value) == (
        "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long"
    )


# ---------------------------------------------------------------- chunk / split


def test_chunk_of_one_piece_backward():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp().chunk(1, 0)[0]
    assert node(y) == "SplitBackward0"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1.0, 2.0]), rtol=1e-6)

    x = ng.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    (x.chunk(1, dim=1)[0] * 2).sum().backward()
    assert x.grad.tolist() == [[2.0, 2.0], [2.0, 2.0]]


@pytest.mark.parametrize("call,name", [
    (lambda x: x.split(5), "SplitBackward0"),
    (lambda x: x.split(3), "SplitBackward0"),
    (lambda x: x.split([3]), "SplitWithSizesBackward0"),
    (lambda x: ng.split(x, 4), "SplitBackward0"),
])
def test_split_of_one_piece_backward(call, name):
    x = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
    pieces = call(x.exp())
    assert len(pieces) == 1 and node(pieces[0]) == name
    (pieces[0] * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 2.0, 3.0]), rtol=1e-6)


def test_chunk_and_split_of_an_empty_dim():
    x = ng.ones(0, requires_grad=True)
    pieces = x.chunk(2)
    assert [p.shape for p in pieces] == [(0,), (0,)]
    assert node(pieces[0]) == "SplitWithSizesBackward0"
    pieces = x.split(0)
    assert len(pieces) == 1 and node(pieces[0]) == "SplitBackward0"
    pieces[0].sum().backward()
    assert x.grad.shape == (0,)


@pytest.mark.parametrize("call,message", [
    (lambda: ng.tensor(3.0).chunk(1, 0), "chunk expects at least a 1-dimensional tensor"),
    (lambda: ng.ones(1).split(0),
     "split_size can only be 0 if dimension size is 0, but got dimension size of 1"),
    (lambda: ng.ones(1).split([-1, 2]),
     "split_with_sizes expects split_sizes have only non-negative entries, but got "
     "split_sizes=[-1, 2]"),
])
def test_chunk_and_split_errors(call, message):
    with pytest.raises(RuntimeError) as e:
        call()
    assert str(e.value) == message


# ---------------------------------------------------------------- mT and T


@pytest.fixture
def fresh_warnings(monkeypatch):
    # PyTorch gives these deprecation warnings once per process
    monkeypatch.setattr(ng._tensor, "_WARNED_ONCE", set())


def test_mT_of_a_0d_tensor_is_the_tensor_itself_with_a_warning(fresh_warnings):
    x = scalar3()
    with pytest.warns(UserWarning, match=r"^Tensor\.mT is deprecated on 0-D tensors\. This "
                                         r"function is the identity in these cases\.$"):
        y = x.mT
    assert y is x
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.mT is x  # (once per process)


def test_mT_of_a_1d_tensor_is_an_error():
    with pytest.raises(RuntimeError) as e:
        ng.ones(2).mT
    assert str(e.value) == (
        "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor."
    )


def test_mT_of_matrices():
    y = ng.ones(2, 3, 4, requires_grad=True).mT
    assert y.shape == (2, 4, 3) and node(y) == "TransposeBackward0"


def test_T_of_other_than_2d_warns_once(fresh_warnings):
    with pytest.warns(UserWarning, match=r"^The use of `x\.T` on tensors of dimension other "
                                         r"than 2 to reverse their shape is deprecated"):
        y = ng.ones(2, 3, 4).T
    assert y.shape == (4, 3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ng.ones(2).T.shape == (2,)
        assert ng.ones(2, 3).T.shape == (3, 2)
    with pytest.warns(UserWarning, match=r"^Tensor\.T is deprecated on 0-D tensors\."):
        y = scalar3().T
    assert node(y) == "PermuteBackward0"


# ---------------------------------------------------------------- against PyTorch itself

LIVE = [
    "x0.sum(0)", "x0.mean(-1)", "x0.amax(0)", "x0.max(0)", "x0.min(-1)", "x0.argmax(0)",
    "x0.argmin(0)", "x0.logsumexp(0)", "x0.prod(0)", "x0.std(0)", "x0.var(0)", "x0.norm(dim=0)",
    "L.softmax(x0, 0)", "L.log_softmax(x0, 0)", "x0.sum(1)", "x0.var(0, correction=0)",
    "x.amax(1)", "x.amin(0)", "x.max()", "x.min()", "x.max(1)", "x.min(0, keepdim=True)",
    "x.std(1)", "x.var(0)", "x.std()", "x.var(1, correction=0)", "x.std((0, 1))",
    "x.sum(())", "x.mean(())", "x.var(())", "x.std(2)", "x.amax(-3)",
    "L.log_softmax(x[:0], 0)", "L.softmax(x[:, :0], 1)", "x.reshape(6)[:0].reshape(0, 3)",
    "x[:, :0] @ L.ones(0, 4)", "L.cat([x[0], L.ones(0)])", "L.stack([x0, x0 * 2])",
    "x.exp().chunk(1, 0)[0]", "x.chunk(1, dim=1)[0] * 2", "x.split(5)[0]", "x.split([2])[0]",
    "x.split([1, 1])[1]", "L.tensor([1, 2]).logsumexp(0)", "x.logsumexp(1)",
]
DATA = [[1.0, float("nan"), 3.0], [0.5, 0.5, 0.5]]


def _run(L, expr):
    x0 = L.tensor(3.0, requires_grad=True)
    x = L.tensor(DATA, requires_grad=True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = eval(expr, {"L": L, "x0": x0, "x": x})
        outs = list(out) if isinstance(out, tuple) else [out]
        got = [(str(o.dtype).split(".")[-1], tuple(o.shape), node(o), o.tolist()) for o in outs]
        if outs[0].requires_grad:
            outs[0].sum().backward()
        grads = [None if t.grad is None else t.grad.tolist() for t in (x0, x)]
        messages = [str(w.message).split(" (Triggered")[0] for w in caught]
        return "ok", type(out).__name__, got, grads, messages
    except Exception as e:  # noqa: BLE001 (the error is what is compared)
        return "error", type(e).__name__, str(e)


@pytest.mark.parametrize("expr", LIVE)
def test_against_pytorch(expr):
    torch = pytest.importorskip("torch")
    expected, got = _run(torch, expr), _run(ng, expr)
    # NaN compares unequal to itself; the repr shows it as nan in both
    assert repr(got).replace("numbagrad", "torch") == repr(expected)
