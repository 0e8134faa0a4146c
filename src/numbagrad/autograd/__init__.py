"""``numbagrad.autograd``: backward, grad, grad modes, gradient checking, the Variable shim."""

from __future__ import annotations

import warnings

from .._tensor import Tensor
from . import forward_ad, function, functional  # noqa: F401
from .anomaly_mode import (  # noqa: F401
    detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly,
)
from ..ops.movement import stack as _stack
from .api import backward
from .api import grad as _grad
from .engine import queue_callback
from .function import Function, FunctionCtx, once_differentiable  # noqa: F401
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import gradcheck, gradgradcheck
from .graph import AccumulateGrad, Node

__all__ = [
    "backward", "grad", "Variable", "no_grad", "enable_grad", "set_grad_enabled",
    "is_grad_enabled", "inference_mode", "gradcheck", "gradgradcheck", "Node",
    "AccumulateGrad", "Function", "FunctionCtx", "once_differentiable", "detect_anomaly",
    "set_detect_anomaly", "is_anomaly_enabled",
]


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Gradients of ``outputs`` with respect to ``inputs``, returned (``.grad`` is untouched).
    With ``is_grads_batched``, the first dim of each of ``grad_outputs`` is a batch of
    vectors: one backward pass per vector (PyTorch's vmap over the pass), each gradient
    stacked along a new first dim. (Here, above ``ops``, which stacks; ``api.grad`` is below.)"""
    if not is_grads_batched:
        return _grad(outputs, inputs, grad_outputs, retain_graph, create_graph, only_inputs,
                     allow_unused, False, materialize_grads)
    vectors = [grad_outputs] if isinstance(grad_outputs, Tensor) else list(grad_outputs)
    n = vectors[0].shape[0]
    keep = create_graph if retain_graph is None else retain_graph
    rows = [_grad(outputs, inputs, [v[i] for v in vectors], keep or i < n - 1, create_graph,
                  only_inputs, allow_unused, False, materialize_grads) for i in range(n)]
    return tuple(None if rows[0][k] is None else _stack([r[k] for r in rows])
                 for k in range(len(rows[0])))


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """The deprecated wrapper (Variables and Tensors merged in PyTorch 0.4).

    ``Variable(t)`` is a new leaf sharing ``t``'s storage and version counter (like
    ``t.detach()``), with ``requires_grad`` as given; every Tensor is an instance of it.
    """

    def __new__(cls, tensor, requires_grad=False, volatile=False):
        if volatile:
            warnings.warn(
                "volatile was removed and now has no effect. Use `with numbagrad.no_grad():` "
                "instead.",
                UserWarning,
                stacklevel=2,
            )
        if not isinstance(tensor, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(tensor).__name__}")
        out = tensor.detach()
        if requires_grad:
            out.requires_grad_(True)
        return out


class _ExecutionEngine:
    """``Variable._execution_engine``: what PyTorch code reaches the engine through."""

    queue_callback = staticmethod(queue_callback)


Variable._execution_engine = _ExecutionEngine()
