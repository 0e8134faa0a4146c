"""Binary ops of a column and a row of one result (``x[:, None] - y``, a one-hot
``labels[:, None] == arange(n)``, a length mask): one loop over the result's rows
(cpu.BROADCASTS ``cr`` / ``rc``), on the fast path and the general one. Values, dtypes and
gradients compared with PyTorch."""

import numpy as np
import pytest
import torch

import numbagrad as ng

SHAPES = [((256, 1), (1, 64)), ((1, 64), (256, 1)), ((5, 1), (7,)), ((7,), (5, 1)),
          ((2, 3, 1), (4,)), ((3, 1, 1), (1, 4, 5)), ((1, 4, 5), (3, 1, 1)),
          ((1024, 1), (1, 64)), ((64,), (2048, 1)), ((0, 1), (1, 3)), ((4, 1), (1, 0))]


def _pair(lib, sa, sb, dtype, grad=False):
    rng = np.random.default_rng(len(sa) * 10 + len(sb))
    a, b = rng.standard_normal(sa) * 3, rng.standard_normal(sb) * 3
    kw = {"requires_grad": True} if grad else {}
    return (lib.tensor(a, dtype=getattr(lib, dtype), **kw),
            lib.tensor(b, dtype=getattr(lib, dtype), **kw))


@pytest.mark.parametrize("sa, sb", SHAPES)
@pytest.mark.parametrize("op", ["sub", "mul", "lt", "maximum", "atan2"])
def test_values_as_pytorchs(sa, sb, op):
    got = []
    for lib in (ng, torch):
        a, b = _pair(lib, sa, sb, "float32")
        r = getattr(lib, op)(a, b)
        got.append((r.numpy(), str(r.dtype).split(".")[1], tuple(r.shape)))
    np.testing.assert_allclose(got[0][0], got[1][0], rtol=1e-6)
    assert got[0][1:] == got[1][1:]


@pytest.mark.parametrize("dtype", ["int64", "int32", "float64"])
def test_integer_and_double_operands(dtype):
    got = []
    for lib in (ng, torch):
        labels = lib.tensor([3, 0, 2, 2, 1]).to(getattr(lib, dtype))
        classes = lib.arange(4).to(getattr(lib, dtype))
        got.append([(labels[:, None] == classes).numpy(), (labels[:, None] - classes).numpy()])
    for g, w in zip(*got):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("sa, sb", SHAPES[:8])
def test_gradients_as_pytorchs(sa, sb):
    got = []
    for lib in (ng, torch):
        a, b = _pair(lib, sa, sb, "float64", grad=True)
        y = (a - b) * (a * b)
        assert y.grad_fn.name() == "MulBackward0"
        (y * y).sum().backward()
        got.append((a.grad.numpy(), b.grad.numpy()))
    for g, w in zip(*got):
        np.testing.assert_allclose(g, w, rtol=1e-10)
