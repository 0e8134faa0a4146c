"""The loops that broadcast a row or a column (``x + b``, ``x - x.mean(1, keepdim=True)``),
in-place writes of any size (an optimizer's step), and the movement ops read through plain
tuples: values and gradients against PyTorch."""

import warnings

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

# (a, b): b a row, a column, or neither (middle dims: the strided kernel)
SHAPES = [((64, 128), (128,)), ((64, 128), (1, 128)), ((64, 128), (64, 1)), ((3, 4, 5), (4, 5)),
          ((3, 4, 5), (3, 1, 1)), ((3, 4, 5), (3, 4, 1)), ((3, 4, 5), (1, 4, 1)),
          ((1, 5), (5,)), ((6, 7), (1, 1))]


@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "atan2", "lt"])
@pytest.mark.parametrize("swap", [False, True])
def test_row_and_column_broadcasts_match_pytorch(shapes, op, swap):
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    if swap:
        a, b = b, a
    got = getattr(ng, op)(ng.tensor(a), ng.tensor(b))
    want = getattr(torch, op)(torch.tensor(a), torch.tensor(b))
    assert tuple(got.shape) == tuple(want.shape)
    assert got.dtype.is_floating_point == want.dtype.is_floating_point
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_broadcast_gradients_match_pytorch(dtype):
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal(s).astype(dtype) for s in ((8, 5), (5,), (8, 1))]
    grads = []
    for lib in (ng, torch):
        x, b, c = (lib.tensor(a, requires_grad=True) for a in arrays)
        ((x + b) * c - b / (c * c + 1) + (x - x.mean(1, keepdim=True)) ** 2).sum().backward()
        grads.append([t.grad.numpy() for t in (x, b, c)])
    for g, w in zip(*grads):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_integer_row_broadcast():
    x = np.arange(12).reshape(3, 4)
    assert (ng.tensor(x) * ng.tensor(np.arange(4))).tolist() == (x * np.arange(4)).tolist()
    assert (ng.tensor(x) - ng.tensor([[1], [2], [3]])).tolist() == (x - [[1], [2], [3]]).tolist()


@pytest.mark.parametrize("n", [7, 200_000])  # below and above the parallel loops' size
def test_inplace_writes_match_pytorch(n):
    rng = np.random.default_rng(5)
    a, g = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = []
    for lib in (ng, torch):
        x, y = lib.tensor(a), lib.tensor(g)
        v0 = x._version
        with lib.no_grad():
            x.mul_(2.5)
            x.add_(y, alpha=-0.5)
            x.sub_(x * 0.25)  # (an operand that is x's own values)
            x.add_(x)
            x.clamp_(-1.0, 3.0)
            x.relu_()
        out.append((x.numpy().copy(), x._version - v0))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-6, atol=1e-6)
    assert out[0][1] == out[1][1] == 6


@pytest.mark.parametrize("name", ["relu6", "threshold"])
def test_inplace_activations_of_integer_tensors(name):
    # (an elementwise op's parameters take no part in the dtype check of its in-place write)
    got, want = ng.tensor([[-1], [4], [9]]), torch.tensor([[-1], [4], [9]])
    if name == "relu6":
        ng.nn.functional.relu6(got, inplace=True)
        torch.nn.functional.relu6(want, inplace=True)
    else:
        ng.threshold_(got, threshold=0.0, value=1.5)
        torch.threshold_(want, threshold=0.0, value=1.5)
    assert got.tolist() == want.tolist() and got.dtype == ng.int64


def test_inplace_refuses_a_float_result_in_an_integer_tensor():
    for lib in (ng, torch):
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                               "output type Long"):
            lib.ones(3, dtype=lib.int64).sub_(1.5)


@pytest.mark.parametrize("name,kw", [("SGD", {}), ("SGD", {"momentum": 0.9}), ("Adam", {}),
                                     ("AdamW", {"amsgrad": True}),
                                     ("Adam", {"weight_decay": 0.1, "maximize": True})])
def test_optimizer_steps_on_a_large_weight_match_pytorch(name, kw):
    rng = np.random.default_rng(6)
    w0 = rng.standard_normal((300, 250)).astype(np.float32)
    grads = [rng.standard_normal(w0.shape).astype(np.float32) for _ in range(3)]
    out = []
    for lib in (ng, torch):
        w = lib.tensor(w0, requires_grad=True)
        opt = getattr(lib.optim, name)([w], lr=0.01, **kw)
        for g in grads:
            w.grad = lib.tensor(g)
            opt.step()
        out.append(w.detach().numpy())
    np.testing.assert_allclose(out[0], out[1], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("shape,dim", [((64, 128), 1), ((64, 128), -1), ((3, 4, 5), 2),
                                       ((3, 4, 5), 1), ((7,), 0)])
@pytest.mark.parametrize("fn", ["softmax", "log_softmax", "cumsum"])
def test_row_functions_over_any_dim_match_pytorch(shape, dim, fn):
    a = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    got = getattr(ng, fn)(ng.tensor(a), dim)
    want = getattr(torch, fn)(torch.tensor(a), dim)
    assert got.is_contiguous()
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


def test_cat_through_plain_shapes_matches_pytorch():
    cases = [([(2, 3), (4, 3)], 0), ([(2, 3), (2, 1)], 1), ([(0,), (2, 3)], 0),
             ([(0,), (0,)], 0), ([(2, 3), (0,), (1, 3)], -2)]
    for shapes, dim in cases:
        arrays = [np.ones(s, np.float32) * k for k, s in enumerate(shapes)]
        got = ng.cat([ng.tensor(a) for a in arrays], dim)
        want = torch.cat([torch.tensor(a) for a in arrays], dim)
        assert got.tolist() == want.tolist() and tuple(got.shape) == tuple(want.shape)
    for lib in (ng, torch):
        with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension "
                                               "1. Expected size 2 but got size 3 for tensor "
                                               "number 1 in the list."):
            lib.cat([lib.ones(2, 3), lib.ones(3, 3)], 1)
        with pytest.raises(RuntimeError, match="zero-dimensional tensor \\(at position 1\\) "
                                               "cannot be concatenated"):
            lib.cat([lib.ones(2), lib.tensor(1.0)])


def test_size_reads():
    x = ng.ones(2, 3, 4)
    assert type(x.shape) is ng.Size and x.shape[0] == 2 and type(x.shape[0]) is int
    assert type(x.shape[1:]) is ng.Size and x.shape[1:] == (3, 4)
    assert x.shape[-1] == 4 and x.size(1) == 3 and x.size(-1) == 4
    assert type(x.size()) is ng.Size and repr(x.size()) == "numbagrad.Size([2, 3, 4])"
    for lib in (ng, torch):
        with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range "
                                             r"of \[-3, 2\], but got 3\)"):
            lib.ones(2, 3, 4).size(3)
    assert x.unsqueeze(1).shape == (2, 1, 3, 4) and x.unsqueeze(-1).shape == (2, 3, 4, 1)


def test_copy_of_a_tensor_onto_itself():
    # PyTorch's copy_ returns before its overlap check when the source is the same elements
    # (an expanded tensor too; fuzz seed 31183); its version moves
    for lib in (ng, torch):
        x = lib.tensor([-5, 0], dtype=lib.int8).expand(3, 2)
        v = x._version
        assert x.copy_(x) is x and x._version == v + 1 and x.tolist() == [[-5, 0]] * 3
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor "
                                               "refers to a single memory location"):
            lib.ones(2).expand(3, 2).copy_(lib.zeros(3, 2))


@pytest.mark.parametrize("shape,dim", [((64, 100), 1), ((64, 100), -1), ((3, 4, 5), 2),
                                       ((3, 4, 5), 1), ((7,), 0)])
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_row_function_gradients_match_pytorch(shape, dim, fn, dtype):
    # (over the last dim of a contiguous array: one row kernel; else the formula on Tensors)
    rng = np.random.default_rng(8)
    a, g = (rng.standard_normal(shape).astype(dtype) for _ in range(2))
    grads = []
    for lib in (ng, torch):
        x = lib.tensor(a, requires_grad=True)
        getattr(lib, fn)(x, dim).backward(lib.tensor(g))
        grads.append(x.grad.numpy())
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(grads[0], grads[1], rtol=tol, atol=tol)


# (both libraries warn of a variance with no degrees of freedom: not what this test checks)
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("shape,dims", [((128, 256), (0,)), ((4, 5, 6), (0, 1)), ((4, 5, 6), (0,)),
                                        ((1, 3), (0,)), ((0, 3), (0,))])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mean_and_var_over_leading_dims_match_pytorch(shape, dims, dtype):
    # (column kernels over the array as it is: kernels_reduce.mean_cols, var_cols)
    a = (np.random.default_rng(9).standard_normal(shape) * 3 + 100).astype(dtype)
    tol = 1e-4 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(ng.mean(ng.tensor(a), dims, keepdim=True).numpy(),
                               torch.mean(torch.tensor(a), dims, keepdim=True).numpy(),
                               rtol=1e-6, atol=1e-6)
    for correction in (0, 1):
        got = ng.var(ng.tensor(a), dims, correction=correction).numpy()
        want = torch.var(torch.tensor(a), dims, correction=correction).numpy()
        np.testing.assert_allclose(got, want, rtol=tol, atol=1e-6)


@pytest.mark.parametrize("shape", [(128, 64), (8, 3, 5, 5), (4, 6, 7)])
def test_batch_norm_training_with_running_statistics_matches_pytorch(shape):
    a = np.random.default_rng(10).standard_normal(shape).astype(np.float32) * 2 + 1
    out = []
    for lib in (ng, torch):
        bn = (lib.nn.BatchNorm2d if len(shape) == 4 else lib.nn.BatchNorm1d)(shape[1],
                                                                            momentum=0.3)
        x = lib.tensor(a, requires_grad=True)
        bn(x)
        y = bn(x)
        y.backward(lib.tensor(a * 0.5))
        out.append([y.detach().numpy(), bn.running_mean.numpy(), bn.running_var.numpy(),
                    x.grad.numpy(), bn.weight.grad.numpy(), bn.bias.grad.numpy()])
    for got, want in zip(*out):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


def test_first_grad_of_an_overlapping_leaf_under_create_graph_is_a_clone():
    # (PyTorch's clone_obey_contract: a leaf whose elements overlap gets a contiguous clone,
    # any other a copy into new memory; fuzz seed 41487)
    names = []
    for lib in (ng, torch):
        v = lib.ones(1, 3)[:1].expand(4, 3).detach().requires_grad_()
        w = lib.ones(4, 3).t().detach().requires_grad_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (PyTorch's, once a process: a reference cycle)
            (v * v).sum().backward(create_graph=True)
            (w * w).sum().backward(create_graph=True)
        names.append((type(v.grad.grad_fn).__name__, type(w.grad.grad_fn).__name__,
                      v.grad.tolist()))
    assert names[0] == names[1] == ("CloneBackward0", "CopyBackwards", [[2.0] * 3] * 4)
