"""Reductions over trailing dims of small tensors (``x.sum(-1)``, ``x.mean(1, keepdim=True)``)
take ``reduce.whole``'s lean hook: values, shapes, node names, saved dims and gradients are
PyTorch's, and every other spelling still reaches the general path's results and errors."""

from __future__ import annotations

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.ops import reduce as R

torch = pytest.importorskip("torch")

CALLS = [
    ("sum", (3, 5), (1,), {}),
    ("sum", (3, 5), (-1,), {"keepdim": True}),
    ("sum", (3, 5), (), {"dim": 1}),
    ("sum", (2, 3, 4), ((1, 2),), {}),
    ("sum", (2, 3, 4), ([-1, 1],), {"keepdim": True}),
    ("sum", (2, 3, 4), (), {"dim": (2,), "keepdim": False}),
    ("sum", (7,), (0,), {}),
    ("sum", (7,), (0, True), {}),
    ("sum", (3, 5), (0,), {}),  # (a leading dim: the general path)
    ("sum", (2, 3, 4), ((0, 2),), {}),  # (not trailing: the general path)
    ("mean", (4, 6), (1,), {}),
    ("mean", (4, 6), (-1,), {"keepdim": True}),
    ("mean", (2, 3, 4), ((1, 2),), {"keepdim": True}),
    ("mean", (4, 6), (0,), {}),
    ("amax", (4, 6), (1,), {}),
    ("amax", (2, 3, 4), ((-2, -1),), {"keepdim": True}),
    ("amin", (4, 6), (), {"dim": -1}),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, shape, args, kwargs", CALLS)
def test_trailing_reduction_matches_torch(name, shape, args, kwargs, dtype):
    data = np.random.default_rng(len(shape) + len(args)).standard_normal(shape).astype(dtype)
    data.flat[1] = data.flat[0]  # (a tie: amax/amin share the gradient)
    outs = {}
    for lib in (ng, torch):
        x = lib.tensor(data, requires_grad=True)
        y = getattr(x, name)(*args, **kwargs)
        w = lib.tensor(np.linspace(-1, 1, int(np.prod(tuple(y.shape)))).reshape(tuple(y.shape))
                       .astype(dtype))
        (y * w).sum().backward()
        outs[lib] = (y, x.grad)
    (y, g), (ty, tg) = outs[ng], outs[torch]
    assert tuple(y.shape) == tuple(ty.shape)
    assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-6, atol=1e-6)
    if args or "dim" in kwargs:
        assert y.grad_fn._saved_dim == ty.grad_fn._saved_dim


def test_trailing_dims_reads_only_trailing_dims():
    assert R.trailing_dims(2, (1,), {}) == ((1,), False)
    assert R.trailing_dims(2, (), {"dim": -1, "keepdim": True}) == ((1,), True)
    assert R.trailing_dims(3, ([2, 1],), {}) == ((1, 2), False)
    assert R.trailing_dims(3, ((0, 2),), {}) is None
    assert R.trailing_dims(2, (0,), {}) is None
    assert R.trailing_dims(2, ((1, 1),), {}) is None  # (a repeated dim: the general error)
    assert R.trailing_dims(2, (2,), {}) is None  # (out of range: the general error)
    assert R.trailing_dims(2, (1,), {"keepdim": 1}) is None
    assert R.trailing_dims(2, (1,), {"dim": 1}) is None
    assert R.trailing_dims(2, (), {"dtype": None}) is None
    assert R.trailing_dims(0, (0,), {}) is None


@pytest.mark.parametrize("call", [
    lambda lib, x: x.sum(2), lambda lib, x: x.sum((1, 1)), lambda lib, x: x.mean(-3),
    lambda lib, x: x.sum(dim=1, dim2=0), lambda lib, x: x.amax(5)])
def test_refused_calls_raise_as_torch(call):
    errors = []
    for lib in (ng, torch):
        x = lib.ones(2, 3)
        with pytest.raises(Exception) as e:
            call(lib, x)
        errors.append((type(e.value), str(e.value)))
    assert errors[0] == errors[1]


def test_no_grad_and_integer_inputs():
    x = ng.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    with ng.no_grad():
        y = x.sum(-1)
    assert y.grad_fn is None and not y.requires_grad
    assert y.tolist() == [6.0, 22.0, 38.0]
    i = ng.arange(12).reshape(3, 4)
    assert i.sum(1).dtype == ng.int64 and i.sum(1).tolist() == [6, 22, 38]


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape", [(4, 7), (2, 3, 5)])
def test_row_op_gradient_from_a_sum_matches_torch(name, shape):
    # (the sum's gradient reaches the row op expanded, stride 0: the row kernel takes a dense
    # copy of it)
    data = np.random.default_rng(3).standard_normal(shape)
    grads = []
    for lib in (ng, torch):
        x = lib.tensor(data, requires_grad=True)
        (getattr(lib, name)(x, -1) * 1.5).sum().backward()
        y = lib.tensor(data, requires_grad=True)
        getattr(lib, name)(y, -1).sum().backward()
        grads.append((x.grad.numpy(), y.grad.numpy()))
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
