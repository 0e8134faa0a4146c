"""In-place ops whose operand is a 0-d tensor (a clip coefficient, a tensor learning rate):
written straight into the tensor, the 0-d operand read once as a number, as PyTorch's CPU
loops read a CPU scalar. Values, dtypes, versions and errors compared with PyTorch."""

import numpy as np
import pytest
import torch

import numbagrad as ng

CASES = [
    ("mul_", "float32", "float32"), ("mul_", "float32", "float64"), ("add_", "float32", "int64"),
    ("add_", "float64", "bool"), ("sub_", "float64", "int64"), ("div_", "float32", "float32"), ("mul_", "float64", "int32"),
]


@pytest.mark.parametrize("size", [5, 50_000])  # (the small loop and the large one)
@pytest.mark.parametrize("method, dtype, cdtype", CASES)
def test_values_and_versions_as_pytorchs(method, dtype, cdtype, size):
    a = np.random.default_rng(0).standard_normal(size) + 3.0
    outs = []
    for lib in (ng, torch):
        x = lib.tensor(a, dtype=getattr(lib, dtype))
        c = lib.tensor(True if cdtype == "bool" else 3, dtype=getattr(lib, cdtype))
        with lib.no_grad():
            r = getattr(x, method)(c)
        assert r is x
        outs.append((x.numpy().copy(), str(x.dtype).split(".")[1], x._version))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    assert outs[0][1:] == outs[1][1:]


def test_an_operand_aliasing_the_target_and_a_bool_subtrahend_are_refused_as_pytorch():
    for lib in (ng, torch):
        x = lib.arange(1.0, 6.0)
        with lib.no_grad(), pytest.raises(RuntimeError) as e:
            x.mul_(x[1])  # (a 0-d view of x)
        assert str(e.value).startswith("unsupported operation: some elements of the input "
                                       "tensor and the written-to tensor refer to a single")
        with lib.no_grad(), pytest.raises(RuntimeError) as e:
            x.sub_(lib.tensor(True))
        assert str(e.value).startswith("Subtraction, the `-` operator, with a bool tensor")
        assert x.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]


def test_an_int_target_refuses_a_float_operand_as_pytorch():
    for lib in (ng, torch):
        x = lib.arange(4)
        with pytest.raises(RuntimeError) as e:
            x.mul_(lib.tensor(0.5))
        assert str(e.value) == "result type Float can't be cast to the desired output type Long"
        assert x.tolist() == [0, 1, 2, 3]


def test_recorded_calls_keep_their_graph():
    w = ng.randn(4, requires_grad=True)
    c = ng.tensor(2.0, requires_grad=True)
    y = w * 1
    y.mul_(c)
    assert y.grad_fn.name() == "MulBackward0"
    y.sum().backward()
    np.testing.assert_allclose(c.grad.item(), w.detach().sum().item(), rtol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), np.full(4, 2.0))
