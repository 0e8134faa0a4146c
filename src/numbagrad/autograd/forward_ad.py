"""``numbagrad.autograd.forward_ad``: forward-mode AD with dual tensors, as in PyTorch.

>>> import numbagrad as torch
>>> import numbagrad.autograd.forward_ad as fwAD
>>> x = torch.tensor([0.0, 1.0])
>>> with fwAD.dual_level():
...     y = fwAD.make_dual(x, torch.ones(2)).exp()
...     fwAD.unpack_dual(y).tangent
tensor([1.0000, 2.7183])

Each op propagates the tangent by its forward rule (ops/forward.py); an op without one raises
PyTorch's NotImplementedError. Only one level exists at a time, as in PyTorch.
"""

from __future__ import annotations

from typing import NamedTuple

from .._tensor import Tensor
from ..ops import forward as _forward
from ..ops import movement as _movement
from .grad_mode import _DecoratorContextManager

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level",
           "make_dual", "unpack_dual"]


class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the primal (a view without the tangent) and the tangent."""

    primal: Tensor
    tangent: Tensor | None


def enter_dual_level() -> int:
    """Enter a new forward grad level (returns its index); prefer ``dual_level``."""
    return _forward.enter_level()


def exit_dual_level(*, level=None) -> None:
    """Leave the forward grad level: the tangents made in it are dropped."""
    _forward.exit_level()


class dual_level(_DecoratorContextManager):
    """The context in which dual tensors exist: their tangents are dropped on exit."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False


def make_dual(tensor: Tensor, tangent: Tensor, *, level=None) -> Tensor:
    """A view of ``tensor`` carrying ``tangent`` as its forward gradient."""
    if _forward.current_level() is None:
        raise RuntimeError(_forward.ERR_NO_LEVEL)
    if not tensor.dtype.is_floating_point:
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if not tangent.dtype.is_floating_point:
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    if tangent.shape != tensor.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}."
        )
    with _forward.paused():
        out = _movement.view(tensor, *tensor.shape)
        if tangent.dtype is not tensor.dtype or not _same_layout(tangent, tensor):
            # (PyTorch's rule: a tangent whose layout differs from the primal's is copied into
            # a new tensor with the primal's strides; one with the same layout is kept as is)
            tangent = tensor.new_empty_strided(tensor.shape, tensor.stride()).copy_(tangent)
    _forward.set_tangent(out, tangent)
    return out


def _storage_numel(t: Tensor) -> int:
    return (t if t._base is None else t._base).numel()


def _same_layout(a: Tensor, b: Tensor) -> bool:
    """Whether ``a`` and ``b`` have the same strides, offset and memory size."""
    return (a.stride() == b.stride() and a.storage_offset() == b.storage_offset()
            and _storage_numel(a) == _storage_numel(b))


def unpack_dual(tensor: Tensor, *, level=None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of ``tensor``; the tangent is None where it has none."""
    tangent = tensor._fw_grad
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    with _forward.paused():
        primal = _movement.alias(tensor)
    return UnpackedDualTensor(primal, tangent)
