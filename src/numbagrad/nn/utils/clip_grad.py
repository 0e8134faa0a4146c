"""Gradient clipping: ``clip_grad_norm_`` (``get_total_norm`` then ``clip_grads_with_norm_``)
and ``clip_grad_value_``, in place on ``.grad``; ``clip_grad_norm`` is its deprecated name."""

from __future__ import annotations

import math
import types
import warnings

from ... import factory
from ...autograd.grad_mode import no_grad
from ...ops import stack
from ...tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm"]

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


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None) -> Tensor:
    """The ``norm_type``-norm of the norms of ``tensors``: that of all their elements."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return factory.tensor(0.0)
    with no_grad():
        device = tensors[0].device
        norms = [_vector_norm(t, norm_type).to(device) for t in tensors]
        total = _vector_norm(stack(norms), norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    return total


def clip_grads_with_norm_(parameters, max_norm: float, total_norm: Tensor,
                          foreach=None) -> None:
    """Scale the parameters' gradients by ``max_norm / total_norm`` where that is below 1."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return
    with no_grad():
        coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device))


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Scale the gradients so that their joint ``norm_type``-norm is at most ``max_norm``;
    returns that norm before clipping."""
    parameters = _as_list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Deprecated: ``clip_grad_norm_``."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


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
