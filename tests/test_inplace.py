"""In-place ops, version counters and views: the gradients stay right or the error is
PyTorch's. Expected gradients are hand-derived (checked against PyTorch 2.13)."""

from __future__ import annotations

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.autograd import gradcheck

VERSION_MSG = (
    "one of the variables needed for gradient computation has been modified by an inplace "
    "operation: [numbagrad.FloatTensor [3]], which is output 0 of {node}, is at version {v}; "
    "expected version {e} instead. Hint: enable anomaly detection to find the operation that "
    "failed to compute its gradient, with numbagrad.autograd.set_detect_anomaly(True, "
    "check_nan=False)."
)

from devices import on_each_device  # noqa: E402

# every test runs on the CPU and (under -m cuda) on CUDA: factories default to that device
pytestmark = on_each_device


def vals(t):
    return t.detach().cpu().numpy().tolist()


def x3():
    return ng.tensor([1.0, 2.0, 3.0], requires_grad=True)


INPLACE = [
    # method, args, d(result)/dx as a function of the original x
    ("add_", (2.0,), lambda x: np.ones_like(x)),
    ("sub_", (2.0,), lambda x: np.ones_like(x)),
    ("mul_", (3.0,), lambda x: np.full_like(x, 3.0)),
    ("div_", (4.0,), lambda x: np.full_like(x, 0.25)),
    ("pow_", (2,), lambda x: 2 * x),
    ("clamp_", (1.5, 2.5), lambda x: ((x > 1.5) & (x < 2.5)).astype(float)),
    ("exp_", (), np.exp),
    ("sigmoid_", (), lambda x: np.exp(-x) / (1 + np.exp(-x)) ** 2),
    ("relu_", (), lambda x: (x > 0).astype(float)),
    ("neg_", (), lambda x: -np.ones_like(x)),
    ("zero_", (), np.zeros_like),
    ("fill_", (7.0,), np.zeros_like),
]


@pytest.mark.parametrize("method,args,deriv", INPLACE, ids=[m for m, _, _ in INPLACE])
def test_inplace_on_a_non_leaf_bumps_version_and_differentiates(method, args, deriv):
    x = x3()
    y = x * 1
    v0 = y._version
    out = getattr(y, method)(*args)
    assert out is y and y._version == v0 + 1
    y.sum().backward()
    np.testing.assert_allclose(vals(x.grad), deriv(np.array([1.0, 2.0, 3.0])), rtol=1e-6)


def test_operator_forms_and_setitem_bump_the_version():
    y = x3() * 1
    for k, op in enumerate(("__iadd__", "__isub__", "__imul__", "__itruediv__"), start=1):
        y = getattr(y, op)(2.0)
        assert y._version == k
    y[0] = 5.0
    assert y._version == 5
    y.copy_(ng.ones(3))
    assert y._version == 6 and y.grad_fn.name() == "CopyBackwards"


def test_inplace_nodes_are_named_as_in_pytorch():
    names = {}
    for method, args in (("zero_", ()), ("fill_", (3.0,)), ("copy_", (ng.ones(3),)),
                         ("exp_", ()), ("mul_", (2.0,))):
        y = x3() * 2
        getattr(y, method)(*args)
        names[method] = y.grad_fn.name()
    y = x3() * 2
    y[0] = 5.0
    names["setitem"] = y.grad_fn.name()
    assert names == {"zero_": "ZeroBackward0", "fill_": "FillBackward2", "copy_": "CopyBackwards",
                     "exp_": "ExpBackward0", "mul_": "MulBackward0",
                     "setitem": "torch::autograd::CopySlices"}


def test_copy_routes_the_gradient_to_the_source():
    x = x3()
    src = ng.tensor([2.0], requires_grad=True)
    y = x * 2
    y.copy_(src)  # broadcast from [1] to [3]
    (y * ng.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert vals(x.grad) == [0.0, 0.0, 0.0] and vals(src.grad) == [6.0]


def test_inplace_into_a_tensor_that_did_not_require_grad():
    buf = ng.zeros(3)
    w = x3()
    buf.add_(w * w)
    assert buf.requires_grad and buf.grad_fn.name() == "AddBackward0"
    buf.sum().backward()
    assert vals(w.grad) == [2.0, 4.0, 6.0]


def test_version_error_names_the_node_that_saved_its_output():
    x = x3()
    y = x.exp()
    y.add_(1)
    with pytest.raises(RuntimeError) as e:
        y.sum().backward()
    assert str(e.value) == VERSION_MSG.format(node="ExpBackward0", v=1, e=0)


def test_version_error_for_a_saved_input_names_its_current_node():
    x = x3()
    y = x * 2
    y += 1  # y is now the output of AddBackward0
    y *= y  # MulBackward0 saved y (as `other`) at version 1
    with pytest.raises(RuntimeError) as e:
        y.sum().backward()
    assert str(e.value) == VERSION_MSG.format(node="MulBackward0", v=2, e=1)


def test_version_error_for_a_leaf_has_no_node():
    x = x3()
    y = (x * x).sum()
    with ng.no_grad():
        x.add_(0)
    with pytest.raises(RuntimeError) as e:
        y.backward()
    assert "[numbagrad.FloatTensor [3]] is at version 1; expected version 0 instead." in str(e.value)


def test_chained_inplace_ops_catch_the_first_overwritten_save():
    x = x3()
    y = x.exp()
    y.exp_().sigmoid_().relu_().neg_().clamp_(-1, 1).pow_(2).div_(2).sub_(1).mul_(3)
    assert y._version == 9
    with pytest.raises(RuntimeError) as e:
        y.sum().backward()
    # relu_ saved its result at version 3; clamp_ and pow_ saved copies of their inputs
    assert str(e.value) == VERSION_MSG.format(node="ReluBackward0", v=9, e=3)


def test_old_value_is_kept_for_formulas_that_need_it():
    x = x3()
    y = x * 1
    y.pow_(3)
    y.sum().backward()
    assert vals(x.grad) == [3.0, 12.0, 27.0]
    x = ng.tensor([2.0, 3.0], requires_grad=True, dtype=ng.float64)

    def f(t):
        y = t * 1
        y.pow_(2)
        y.mul_(t)
        return y

    assert gradcheck(f, (x,))


def test_leaf_inplace_errors_and_no_grad_updates():
    x = x3()
    for f in (lambda: x.add_(1), lambda: x.zero_(), lambda: x.fill_(1), lambda: x.copy_(x),
              lambda: x.exp_()):
        with pytest.raises(RuntimeError) as e:
            f()
        assert str(e.value) == "a leaf Variable that requires grad is being used in an in-place operation."
    with pytest.raises(RuntimeError) as e:
        x[0] = 1.0
    assert str(e.value) == (
        "a view of a leaf Variable that requires grad is being used in an in-place operation."
    )
    with pytest.raises(RuntimeError, match=r"^a view of a leaf Variable"):
        x[1:].mul_(2)
    with ng.no_grad():
        x -= 0.5 * ng.ones(3)
        x[0] = 10.0
    assert vals(x) == [10.0, 1.5, 2.5] and x.is_leaf and x.requires_grad and x._version == 2


# ---------------------------------------------------------------- views


def test_inplace_on_a_slice_rebases_the_base():
    x = ng.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = x * 1
    v = y[1:3]
    v.mul_(10)
    assert y.grad_fn.name() == "torch::autograd::CopySlices"
    assert v.grad_fn.name() == "AsStridedBackward0"
    assert vals(y) == [1.0, 20.0, 30.0, 4.0]
    y.sum().backward()
    assert vals(x.grad) == [1.0, 10.0, 10.0, 1.0]


def test_inplace_on_a_view_of_a_view_and_gradient_through_the_view():
    x = ng.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = x * 1
    v = y.view(2, 2)
    v[0].mul_(10)
    assert y.grad_fn.name() == "torch::autograd::CopySlices" and v.grad_fn.name() == "AsStridedBackward0"
    (y * ng.arange(4.0)).sum().backward()
    assert vals(x.grad) == [0.0, 10.0, 2.0, 3.0]


def test_other_views_see_the_new_graph():
    x = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    first = y[:2]  # made before the in-place change
    y[2:].mul_(5)
    y.mul_(2)
    assert first.grad_fn.name() == "AsStridedBackward0"
    first.sum().backward()
    assert vals(x.grad) == [2.0, 2.0, 0.0]


def test_writing_a_graph_value_into_a_plain_buffer_view():
    buf = ng.zeros(2, 3)
    w = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
    buf[1] = w * 2
    row = buf[1]
    assert buf.requires_grad and row.requires_grad
    (buf * ng.ones(2, 3) * 3).sum().backward()
    assert vals(w.grad) == [6.0, 6.0, 6.0]


def test_a_view_made_before_its_base_joined_the_graph_is_recorded():
    buf = ng.zeros(2, 3)
    row = buf[1]  # made while buf needs no grad
    w = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
    buf[1] = w * 2
    (w * row).sum().backward()  # row is first used after the write, beside a graph tensor
    assert vals(w.grad) == [4.0, 8.0, 12.0]  # d/dw sum(w * 2w)


def test_view_gradcheck_through_copyslices():
    x = ng.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=ng.float64, requires_grad=True)
    s = ng.tensor([0.5, -1.0, 2.0], dtype=ng.float64, requires_grad=True)

    def f(x, s):
        y = x * 2  # (exp would fail: it saved its result, which the writes change)
        y.t()[1].mul_(s[:2])  # column 1 through a transposed view
        y[0].add_(s)
        return y

    assert gradcheck(f, (x, s))


def test_views_made_under_no_grad_or_by_split_refuse_inplace():
    x = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with ng.no_grad():
        v = x[1:3]
    with pytest.raises(RuntimeError, match=r"^A view was created in no_grad mode and is being modified inplace with grad mode enabled\."):
        v.mul_(2)
    y = x * 1
    a, b = y.split(2)
    with pytest.raises(RuntimeError) as e:
        b.mul_(2)
    assert str(e.value) == (
        "Output 1 of Split is a view and is being modified inplace. This view is the "
        "output of a function that returns multiple views. Such functions do not allow the "
        "output views to be modified inplace. You should replace the inplace operation by an "
        "out-of-place one."
    )
    with ng.no_grad():
        v.mul_(2)  # allowed without grad mode
    assert vals(x) == [1.0, 4.0, 6.0]


def test_views_share_the_version_counter():
    x = ng.zeros(2, 3)
    views = [x[0], x.t(), x.view(6), x[:, 1:], x.unsqueeze(0), x.reshape(3, 2)]
    x.add_(1)
    assert [v._version for v in views] == [1] * 6
    views[0].fill_(2)
    assert x._version == 2 and vals(x[0]) == [2.0, 2.0, 2.0]
    idx = x[[0, 1]]  # advanced indexing copies
    x.add_(1)
    assert idx._version == 0 and vals(idx[0]) == [2.0, 2.0, 2.0]


def test_in_place_ops_no_graph_records_write_into_the_tensor(lib):
    """Small contiguous tensors under no_grad (an optimizer's step): the op's loop writes into
    the tensor's memory; values, dtypes, versions and views as PyTorch's."""
    def run(dtype):
        x = lib.tensor([[0.5, -1.25], [2.0, 3.5]], dtype=dtype)
        y = lib.tensor([[2.0, 4.0], [-0.5, 1.5]], dtype=dtype)
        row = x[1]  # (a C-contiguous view: the write reaches the base)
        out = []
        with lib.no_grad():
            x.mul_(y)
            x.sub_(0.25)
            x.div_(y)
            x.add_(x)  # (an operand that is x itself is read before it is written)
            x.clamp_(-1.0, 3.0)
            row.sin_()
            x.addcmul_(y, y, value=0.5)
        out.append((x.tolist(), x._version, row.tolist()))
        i = lib.tensor([3, -4, 5])
        i.mul_(lib.tensor([2, 2, -1]))
        i.sub_(1)
        out.append((i.tolist(), str(i.dtype).split(".")[-1], i._version))
        return out

    for dtype in (lib.float32, lib.float64):
        got = run(dtype)
        x = np.array([[0.5, -1.25], [2.0, 3.5]])
        y = np.array([[2.0, 4.0], [-0.5, 1.5]])
        x = np.clip(2 * ((x * y - 0.25) / y), -1.0, 3.0)
        x[1] = np.sin(x[1])
        x = x + 0.5 * y * y
        np.testing.assert_allclose(got[0][0], x, rtol=1e-6)
        np.testing.assert_allclose(got[0][2], x[1], rtol=1e-6)
        assert got[0][1] == 7
        assert got[1] == ([5, -9, -6], "int64", 2)


def test_in_place_ops_that_cannot_write_into_the_tensor_raise_pytorchs_errors(lib):
    i = lib.tensor([1, 2])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        i.mul_(1.5)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        i.div_(lib.tensor([2, 2]))
    assert i.tolist() == [1, 2] and i._version == 0
    x = lib.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="output with shape \\[2\\] doesn't match the "
                                           "broadcast shape \\[2, 2\\]"):
        x.mul_(lib.ones(2, 2))
    assert x.tolist() == [1.0, 2.0]
