"""``x[index] = value``: values, gradients of target and value, node names and errors.

The regression cases are written out with PyTorch 2.13's results; the index-kind matrix is
checked against PyTorch itself (torch is part of the test extra)."""

from __future__ import annotations

import numpy as np
import pytest

import numbagrad as ng


def test_bool_mask_assignment_keeps_the_values_gradient():
    # the NaN-safe idiom of PyTorch's autograd-mechanics note
    x = ng.tensor([1.0, 1.0], requires_grad=True)
    div = ng.tensor([0.0, 1.0])
    mask = div != 0
    safe = ng.zeros_like(x)
    safe[mask] = x[mask] / div[mask]
    assert type(safe.grad_fn).__name__ == "IndexPutBackward0"
    safe.sum().backward()
    assert x.grad.tolist() == [0.0, 1.0]


def test_long_tensor_index_assignment_keeps_the_values_gradient():
    x = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
    out = ng.zeros(3)
    out[ng.tensor([0, 2])] = x[:2] * 2
    out.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 0.0]


def test_a_mask_selecting_several_elements():
    x = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
    out = ng.zeros(3)
    out[ng.tensor([True, False, True])] = x[:2] * 2
    assert out.tolist() == [2.0, 0.0, 4.0]
    out.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 0.0]


def test_an_integer_target_does_not_start_requiring_grad():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    i = ng.zeros(3, dtype=ng.int64)
    i[0] = x[0] * 3
    assert i.tolist() == [3, 0, 0] and not i.requires_grad and i.grad_fn is None


@pytest.mark.parametrize("stmt,kind,message", [
    ("out[0:2] = T.ones(3)", "RuntimeError",
     "The expanded size of the tensor (2) must match the existing size (3) at non-singleton "
     "dimension 0.  Target sizes: [2].  Tensor sizes: [3]"),
    ("out[[0, 1]] = T.ones(3)", "RuntimeError",
     "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of "
     "shape [2]"),
    ("out[[0, 1]] = T.ones(2, dtype=T.float64)", "RuntimeError",
     "Index put requires the source and destination dtypes match, got Float for the "
     "destination and Double for the source."),
    ("out.copy_(T.ones(2))", "RuntimeError",
     "The size of tensor a (3) must match the size of tensor b (2) at non-singleton "
     "dimension 0"),
    ("out.copy_(T.ones(2, 3))", "RuntimeError",
     "output with shape [3] doesn't match the broadcast shape [2, 3]"),
])
def test_setitem_and_copy_errors(stmt, kind, message):
    out = ng.zeros(3)
    with pytest.raises(Exception) as info:
        exec(stmt, {"T": ng, "out": out})
    assert (type(info.value).__name__, str(info.value)) == (kind, message)
    assert out.tolist() == [0.0, 0.0, 0.0]  # the target is left unchanged


# every index kind, as a function of the library (so one spelling serves both)
INDEXES = {
    "int": lambda T: 1,
    "negative int": lambda T: -2,
    "slice": lambda T: slice(0, 2),
    "step": lambda T: slice(None, None, 2),
    "none": lambda T: (None, 1),
    "ellipsis tuple": lambda T: (Ellipsis, 1),
    "list": lambda T: [0, 2],
    "long tensor": lambda T: T.tensor([2, 0]),
    "repeated long tensor": lambda T: T.tensor([1, 1]),
    "bool mask": lambda T: T.tensor([True, False, True, False]),
    "range": lambda T: range(1, 3),
    "int and slice": lambda T: (1, slice(1, 3)),
    "slice and list": lambda T: (slice(0, 2), [2, 0]),
    "int and long tensor": lambda T: (0, T.tensor([1, 2])),
    "mask and slice": lambda T: (T.tensor([True, False, True, False]), slice(1, None)),
    "2-d mask": lambda T: T.arange(12).reshape(4, 3).remainder(5) == 1,
}


def _run(T, index_name, target_grad, on_view, value_kind):
    base = np.arange(1.0, 13.0).reshape(4, 3)
    x = T.tensor(base, dtype=T.float32, requires_grad=True)
    w = T.tensor(base[::-1].copy(), dtype=T.float32, requires_grad=True)
    t = x * 1 if target_grad else T.zeros(4, 3)
    holder = t
    if on_view:
        holder = t
        t = t[:, :]
    index = INDEXES[index_name](T)
    region = t.detach()[index].shape
    if value_kind == "scalar":
        value = 7.5
    elif value_kind == "0-d":
        value = (w[0, 0] * 3)
    else:
        value = (w.reshape(-1)[: int(np.prod(region))].reshape(region) * 3)
    t[index] = value
    out = (holder * T.tensor(base, dtype=T.float32)).sum()
    out.backward()
    return (holder.detach().numpy().copy(), type(holder.grad_fn).__name__,
            None if x.grad is None else x.grad.numpy().copy(),
            None if w.grad is None else w.grad.numpy().copy())


# (a plain target and a number: nothing requires grad, so there is no graph to compare)
CASES = [(i, g, v, k) for i in INDEXES for g in (False, True) for v in (False, True)
         for k in ("tensor", "0-d", "scalar") if g or k != "scalar"]


@pytest.mark.parametrize("index_name,target_grad,on_view,value_kind", CASES,
                         ids=["-".join(map(str, c)) for c in CASES])
def test_every_index_kind_matches_torch(index_name, target_grad, on_view, value_kind):
    torch = pytest.importorskip("torch")
    got = _run(ng, index_name, target_grad, on_view, value_kind)
    want = _run(torch, index_name, target_grad, on_view, value_kind)
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1]
    for g, e in zip(got[2:], want[2:]):
        assert (g is None) == (e is None)
        if g is not None:
            np.testing.assert_allclose(g, e, rtol=1e-6)
