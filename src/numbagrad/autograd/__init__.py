"""``numbagrad.autograd``: backward, grad, grad modes, gradient checking, the Variable shim."""

from __future__ import annotations

import warnings

from .._tensor import Tensor
from . import forward_ad, function, functional  # noqa: F401
from .anomaly_mode import (  # noqa: F401
    detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly,
)
from .api import backward, grad
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
