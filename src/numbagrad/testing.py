"""Checks for users' own ops (``numbagrad.elementwise``), for their test suites.

``check_elementwise`` tests an op the way numbagrad's op table tests the built-in ones:
forward against a NumPy reference in float32 and float64, gradients against finite differences
(``gradcheck``), second derivatives (``gradgradcheck``), float32 gradients against float64
ones, the node's name, and, where CUDA or its simulator is available, CUDA against the CPU.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from . import cuda as _cuda
from .autograd import gradcheck, gradgradcheck
from .dtypes import float32, float64
from .factory import tensor


def check_elementwise(op: Callable, reference: Callable, *, params: Sequence = (),
                      domain: tuple = (-2.0, 2.0), shapes: Sequence = ((3,), (2, 3)),
                      dtypes: Sequence = (float32, float64), cuda: bool | None = None,
                      gradgrad: bool = True, rtol32: float = 1e-5, seed: int = 0) -> None:
    """Raise ``AssertionError`` unless ``op`` passes the op-table checks.

    ``op`` is called as ``op(*tensors, *params)``, one tensor per argument not in ``params``
    (numbers given for its last arguments), with values drawn uniformly from ``domain``;
    ``reference`` is called the same way on float64 NumPy arrays. ``shapes``: each entry is one
    shape for every tensor, or a tuple of shapes, one per tensor (to test broadcasting).
    ``cuda``: also compare CUDA with the CPU (None: when ``numbagrad.cuda.is_available()``,
    the CUDA simulator included).

    >>> import math, numpy as np, numbagrad
    >>> @numbagrad.elementwise
    ... def swish(x, beta):
    ...     return x / (1 + math.exp(-beta * x))
    >>> check_elementwise(swish, lambda x, b: x / (1 + np.exp(-b * x)), params=(1.5,))
    """
    n_args = getattr(op, "_n_args", None)
    n_tensors = (n_args - len(params)) if n_args is not None else 1
    rng = np.random.default_rng(seed)
    cuda = _cuda.is_available() if cuda is None else cuda
    name = getattr(op, "__name__", repr(op))
    for shape in shapes:
        per_tensor = (list(shape) if shape and not isinstance(shape[0], int)
                      else [tuple(shape)] * n_tensors)
        if len(per_tensor) != n_tensors:
            raise ValueError(f"check_elementwise: {n_tensors} tensors, {len(per_tensor)} shapes")
        arrays = [rng.uniform(*domain, size=s) for s in per_tensor]
        with np.errstate(all="ignore"):
            expected = np.asarray(reference(*arrays, *params), dtype=np.float64)
        where = f"{name} at shapes {per_tensor}"
        grads = {}
        for dt in dtypes:
            ts = [tensor(a, dtype=dt, requires_grad=True) for a in arrays]
            out = op(*ts, *params)
            got = out.detach().numpy()
            assert got.dtype == dt.np, f"{where}: result dtype {got.dtype}, expected {dt}"
            rtol = rtol32 if dt is float32 else 1e-10
            np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol,
                                       err_msg=f"{where}: forward in {dt} vs the reference")
            node = getattr(op, "node_name", None)
            assert out.grad_fn is not None, f"{where}: the result has no grad_fn"
            if node is not None:
                assert out.grad_fn.name() == node, f"{where}: node {out.grad_fn.name()}"
            out.sum().backward()
            grads[dt] = [t.grad.numpy() for t in ts]
            for t in ts:
                assert t.grad.dtype is dt, f"{where}: gradient dtype {t.grad.dtype}"
            if cuda:
                _check_cuda(op, arrays, params, dt, got, grads[dt], rtol, where)
        if float32 in grads and float64 in grads:
            for g32, g64 in zip(grads[float32], grads[float64]):
                np.testing.assert_allclose(g32, g64, rtol=1e-4, atol=1e-5,
                                           err_msg=f"{where}: float32 vs float64 gradients")
        ts = tuple(tensor(a, dtype=float64, requires_grad=True) for a in arrays)

        def fn(*ts):
            return op(*ts, *params)

        assert gradcheck(fn, ts), f"{where}: gradcheck"
        if gradgrad:
            assert gradgradcheck(fn, ts), f"{where}: gradgradcheck"


def _check_cuda(op, arrays, params, dt, out, grads, rtol, where):
    ts = [tensor(a, dtype=dt, device="cuda", requires_grad=True) for a in arrays]
    y = op(*ts, *params)
    assert y.is_cuda, f"{where}: the CUDA result is on {y.device}"
    np.testing.assert_allclose(y.detach().cpu().numpy(), out, rtol=rtol, atol=rtol,
                               err_msg=f"{where}: CUDA vs CPU forward in {dt}")
    y.sum().backward()
    for t, g in zip(ts, grads):
        np.testing.assert_allclose(t.grad.cpu().numpy(), g, rtol=rtol * 10, atol=rtol * 10,
                                   err_msg=f"{where}: CUDA vs CPU gradient in {dt}")
