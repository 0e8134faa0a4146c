"""Gradient clipping: ``clip_grad_norm_`` and ``clip_grad_value_`` (in place on ``.grad``)."""

from __future__ import annotations

import math
import types
import warnings

from ... import factory
from ...autograd.grad_mode import no_grad
from ...ops import stack
from ...tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_"]

ERR_NO_GRADS = (
    "Expected !nested_tensorlist[0].empty() to be true, but got false.  (Could this error "
    "message be improved?  If so, please report an enhancement request to PyTorch.)"
)


def _as_list(parameters) -> list:
    if isinstance(parameters, Tensor):
        return [parameters]
    is_generator = isinstance(parameters, types.GeneratorType)
    parameters = list(parameters)
    if is_generator and not parameters:
        warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                      stacklevel=3)
    return parameters


def _vector_norm(t: Tensor, p: float) -> Tensor:
    """The ``p``-norm of all of ``t``'s elements (PyTorch's ``linalg.vector_norm``)."""
    if p == 2:
        return t.norm()
    if p == math.inf:
        return t.abs().max()
    if p == -math.inf:
        return t.abs().min()
    if p == 0:
        return (t != 0).sum().to(t.dtype)
    return t.abs().pow(p).sum().pow(1.0 / p)


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Scale the gradients so that their joint ``norm_type``-norm is at most ``max_norm``;
    returns that norm before clipping."""
    parameters = _as_list(parameters)
    norm_type = float(norm_type)
    with no_grad():
        grads = [p.grad for p in parameters if p.grad is not None]
        if not grads:
            return factory.tensor(0.0)
        device = grads[0].device
        norms = [_vector_norm(g, norm_type).to(device) for g in grads]
        total = _vector_norm(stack(norms), norm_type)
        if error_if_nonfinite and not math.isfinite(total.item()):
            raise RuntimeError(
                f"The total norm of order {norm_type} for gradients from `parameters` is "
                "non-finite, so it cannot be clipped. To disable this error and scale the "
                "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
            )
        coef = (float(max_norm) / (total + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device))
    return total


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient to ``[-clip_value, clip_value]`` in place."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    clip_value = float(clip_value)
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        # (PyTorch's foreach kernels reject an empty list of gradients)
        raise RuntimeError(ERR_NO_GRADS)
    with no_grad():
        for g in grads:
            g.clamp_(min=-clip_value, max=clip_value)
