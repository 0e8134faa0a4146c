"""Helpers shared by the distributions: broadcasting parameters, probs <-> logits."""

from __future__ import annotations

import numbers

import numpy as np

from .. import dtypes
from .. import factory
from .. import ops
from ..autograd.grad_mode import enable_grad
from ..nn import functional as F
from ..random import numpy_rng
from ..tensor import Tensor

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs",
           "probs_to_logits"]

euler_constant = 0.57721566490153286060


def broadcast_all(*values):
    """Broadcasts tensors and numbers to one shape; numbers become tensors of the first
    tensor's dtype and device (the default float dtype if there is none)."""
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError(
            "Input arguments must all be instances of Number, "
            "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, Tensor) for v in values):
        options = dict(dtype=dtypes.default_float)
        for value in values:
            if isinstance(value, Tensor):
                options = dict(dtype=value.dtype, device=value.device)
                break
        values = [v if isinstance(v, Tensor) else factory.tensor(v, **options) for v in values]
    return ops.broadcast_tensors(*values)


def _standard_normal(shape, dtype, device) -> Tensor:
    return factory.empty(shape, dtype=dtype, device=device).normal_()


def _numpy_sample(draw, shape, like: Tensor, *params: Tensor) -> Tensor:
    """``draw(rng, *arrays)`` on host copies of ``params`` broadcast to ``shape``, with the
    default generator's NumPy stream (the one ``manual_seed`` reseeds), as a tensor like
    ``like``; outside the graph."""
    arrays = [np.broadcast_to(p.detach().cpu().numpy(), shape) for p in params]
    values = draw(numpy_rng(None), *arrays)
    return factory.tensor(np.asarray(values, dtype=like.dtype.np), device=like.device)


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """Sums out the rightmost ``dim`` dimensions."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[: value.dim() - dim]) + (-1,)).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    if is_binary:
        return ops.sigmoid(logits)
    return F.softmax(logits, dim=-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """Clamps into [eps, 1 - eps] (eps of the dtype) so that their logs stay finite."""
    eps = float(np.finfo(probs.dtype.np).eps)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return ops.log(ps_clamped) - ops.log1p(-ps_clamped)
    return ops.log(ps_clamped)


class lazy_property:
    """Computed on first access (with grad enabled, so it stays differentiable even when
    first read under no_grad) and then stored on the instance."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value
