"""``torch.angle`` / ``Tensor.angle`` on real tensors, against PyTorch: values (NaN, signed
zeros, infinities), dtypes (integers and bools give the default float dtype), ``out=``, the
zero gradient and its node."""

import math

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

VALUES = [-2.5, -0.0, 0.0, math.nan, -math.inf, math.inf, 3.0, -1e-30]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_match_pytorch(dtype):
    got = ng.angle(ng.tensor(VALUES, dtype=getattr(ng, dtype)))
    want = torch.angle(torch.tensor(VALUES, dtype=getattr(torch, dtype)))
    assert str(got.dtype).split(".")[-1] == dtype
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    # the method spelling, on a non-contiguous view
    base = np.array(VALUES[:6], dtype=dtype).reshape(2, 3)
    got = ng.tensor(base).t().angle()
    np.testing.assert_array_equal(got.numpy(), torch.tensor(base).t().angle().numpy())


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "bool"])
def test_integer_and_bool_inputs_give_the_default_float_dtype(dtype):
    data = [True, False, True] if dtype == "bool" else [3, 0, -7 if dtype != "uint8" else 200]
    for default in (ng.float32, ng.float64):
        ng.set_default_dtype(default)
        torch.set_default_dtype(getattr(torch, str(default).split(".")[-1]))
        try:
            got = ng.tensor(data, dtype=getattr(ng, dtype)).angle()
            want = torch.tensor(data, dtype=getattr(torch, dtype)).angle()
        finally:
            ng.set_default_dtype(ng.float32)
            torch.set_default_dtype(torch.float32)
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_zero_dim_and_empty():
    for lib in (ng, torch):
        assert lib.angle(lib.tensor(-4.0)).item() == pytest.approx(math.pi, rel=1e-7)
        assert tuple(lib.angle(lib.zeros(0, 3)).shape) == (0, 3)


def test_out_argument():
    x = [-1.0, 2.0, -3.0]
    out = ng.empty(3)
    res = ng.angle(ng.tensor(x), out=out)
    tout = torch.empty(3)
    torch.angle(torch.tensor(x), out=tout)
    assert res is out
    np.testing.assert_array_equal(out.numpy(), tout.numpy())


def test_gradient_is_zero_with_pytorch_node():
    incoming = [1.0, 2.0, math.nan, math.inf, -math.inf, 5.0, 1.0, 1.0]
    grads = []
    for lib in (ng, torch):
        x = lib.tensor(VALUES, dtype=lib.float64, requires_grad=True)
        y = x.angle()
        assert y.grad_fn.name() == "AngleBackward0" and y.requires_grad
        y.backward(lib.tensor(incoming, dtype=lib.float64))
        grads.append(x.grad.numpy())
        # a constant gradient: under create_graph it is no function of x
        (g,) = lib.autograd.grad(lib.angle(x).sum(), x, create_graph=True)
        assert g.grad_fn is None and not g.requires_grad
    np.testing.assert_array_equal(grads[0], grads[1])
    assert not np.signbit(grads[0]).any()


def test_changing_the_saved_input_in_place_fails_backward():
    # AngleBackward0 saves self, so an in-place change of it is caught as PyTorch catches it
    for lib in (ng, torch):
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        a = x * 1
        y = a.angle()
        a.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_no_inplace_variant():
    for lib in (ng, torch):
        assert not hasattr(lib.Tensor, "angle_") and not hasattr(lib, "angle_")
