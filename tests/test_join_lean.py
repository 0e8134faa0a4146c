"""``cat`` and ``stack`` of small C-contiguous tensors take their lean joins (``_cat_alike``,
``_stack_alike``): values, shapes, strides, node names and gradients are PyTorch's, and the
calls they leave to the general code raise PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

SHAPES = [(), (3,), (2, 3)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dim", [0, 1, -1, 2])
@pytest.mark.parametrize("n", [1, 3])
def test_stack_matches_torch(shape, dim, n):
    if not -len(shape) - 1 <= dim <= len(shape):
        return test_stack_error_matches_torch(shape, dim, n)
    data = [np.random.default_rng(k).standard_normal(shape) for k in range(n)]
    res = []
    for lib in (ng, torch):
        xs = [lib.tensor(d, requires_grad=True) for d in data]
        y = lib.stack(xs, dim)
        w = lib.tensor(np.arange(np.prod(tuple(y.shape))).reshape(tuple(y.shape)) * 0.5)
        (y * w).sum().backward()
        res.append((y.detach().numpy(), y.stride(), type(y.grad_fn).__name__,
                    [x.grad.numpy() for x in xs]))
    (y, st, name, gs), (ty, tst, tname, tgs) = res
    np.testing.assert_array_equal(y, ty)
    assert (st, name) == (tst, tname)
    for g, tg in zip(gs, tgs):
        np.testing.assert_array_equal(g, tg)


def test_stack_error_matches_torch(shape=(2, 3), dim=5, n=2):
    errors = []
    for lib in (ng, torch):
        with pytest.raises(Exception) as e:
            lib.stack([lib.ones(shape)] * n, dim)
        errors.append((type(e.value), str(e.value)))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("parts", [
    [(2, 3), (2, 4)], [(2, 3), (3,)], [(2, 3), (3, 2)]])
def test_stack_and_cat_refusals_match_torch(parts):
    for op in ("stack", "cat"):
        errors = []
        for lib in (ng, torch):
            with pytest.raises(Exception) as e:
                getattr(lib, op)([lib.ones(s) for s in parts])
            errors.append((type(e.value), str(e.value)))
        assert errors[0] == errors[1]


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_of_mixed_dtypes_and_layouts_matches_torch(dim):
    a = np.arange(6.0).reshape(2, 3)
    for make in (lambda lib: [lib.tensor(a), lib.tensor(a, dtype=lib.float32)],
                 lambda lib: [lib.tensor(a), lib.tensor(a.T.copy()).t()]):
        outs = [lib.cat(make(lib), dim) for lib in (ng, torch)]
        assert outs[0].dtype.__repr__().split(".")[-1] == str(outs[1].dtype).split(".")[-1]
        np.testing.assert_array_equal(outs[0].numpy(), outs[1].numpy())
        assert outs[0].stride() == outs[1].stride()
