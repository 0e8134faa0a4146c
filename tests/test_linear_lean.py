"""``F.linear`` on a 2-d batch reaches ``addmm``'s lean hook (``linalg._addmm_lean``): values,
nodes, saved tensors and gradients are PyTorch's, and other calls keep theirs."""

from __future__ import annotations

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("needs", ["x", "w", "b", "xwb", ""])
def test_linear_matches_torch(dtype, needs):
    rng = np.random.default_rng(1)
    xd, wd, bd = (rng.standard_normal(s).astype(dtype) for s in ((5, 3), (4, 3), (4,)))
    res = []
    for lib in (ng, torch):
        x, w, b = (lib.tensor(d, requires_grad=k in needs) for d, k in
                   ((xd, "x"), (wd, "w"), (bd, "b")))
        y = lib.nn.functional.linear(x, w, b)
        name = type(y.grad_fn).__name__ if y.grad_fn is not None else None
        nexts = ([type(f).__name__ if f is not None else None for f, _ in
                  y.grad_fn.next_functions] if y.grad_fn is not None else None)
        grads = None
        if needs:
            (y * lib.tensor(np.arange(20.0).reshape(5, 4).astype(dtype))).sum().backward()
            grads = [t.grad.numpy() for t in (x, w, b) if t.requires_grad]
        res.append((y.detach().numpy(), name, nexts, grads))
    (y, n, nx, g), (ty, tn, tnx, tg) = res
    np.testing.assert_allclose(y, ty, rtol=1e-6)
    assert (n, nx) == (tn, tnx)
    for a, b in zip(g or (), tg or ()):
        np.testing.assert_allclose(a, b, rtol=1e-6)


@pytest.mark.parametrize("call", [
    lambda L: L.addmm(L.ones(4), L.ones(5, 3), L.ones(4, 3)),  # (inner sizes differ)
    lambda L: L.addmm(L.ones(3), L.ones(5, 3), L.ones(3, 4)),  # (bias of another width)
] + [
    # (each mix of float32 and float64: PyTorch's message names the first pair that differs)
    lambda L, k=k: L.addmm(*[L.ones(s, dtype=L.float64 if k >> i & 1 else L.float32)
                             for i, s in enumerate((4, (5, 3), (3, 4)))])
    for k in range(1, 7)
])
def test_refused_addmm_calls_raise_as_torch(call):
    errors = []
    for lib in (ng, torch):
        with pytest.raises(Exception) as e:
            call(lib)
        errors.append((type(e.value), str(e.value)))
    assert errors[0] == errors[1]


def test_addmm_with_scales_and_inference_mode_match_torch():
    outs = []
    for lib in (ng, torch):
        b, x, w = lib.ones(4), lib.ones(5, 3) * 2, lib.ones(3, 4)
        a = lib.addmm(b, x, w, beta=0.5, alpha=2)
        with lib.inference_mode():
            c = lib.addmm(b, x, w)
        outs.append((a.numpy().tolist(), c.numpy().tolist(), c.is_inference()))
    assert outs[0] == outs[1]
