"""Padding layers (``torch.nn.modules.padding``) over ``F.pad``: one class per mode and
number of padded dims, with PyTorch's reprs."""

from __future__ import annotations

from collections.abc import Iterable

from .. import functional as F
from .module import Module

__all__ = [
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
    "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
    "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
]


def _padding(padding, dims: int) -> tuple:
    """``(before, after)`` for each of ``dims`` dims: one amount for all, or all of them."""
    return tuple(padding) if isinstance(padding, Iterable) else (padding,) * (2 * dims)


class _PadNd(Module):
    """``F.pad`` in ``mode`` over the last ``dims`` dims."""

    mode = ""
    dims = 0

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _padding(padding, self.dims)

    def forward(self, input):
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    mode = "circular"

    def forward(self, input):
        # (PyTorch's modules check the input's rank before F.pad, with their own message)
        if input.dim() not in (self.dims + 1, self.dims + 2):
            raise ValueError(f"expected {self.dims + 1}D or {self.dims + 2}D input (got "
                             f"{input.dim()}D input)")
        return super().forward(input)


class CircularPad1d(_CircularPadNd):
    dims = 1


class CircularPad2d(_CircularPadNd):
    dims = 2


class CircularPad3d(_CircularPadNd):
    dims = 3


class _ReflectionPadNd(_PadNd):
    mode = "reflect"


class ReflectionPad1d(_ReflectionPadNd):
    dims = 1


class ReflectionPad2d(_ReflectionPadNd):
    dims = 2


class ReflectionPad3d(_ReflectionPadNd):
    dims = 3


class _ReplicationPadNd(_PadNd):
    mode = "replicate"


class ReplicationPad1d(_ReplicationPadNd):
    dims = 1


class ReplicationPad2d(_ReplicationPadNd):
    dims = 2


class ReplicationPad3d(_ReplicationPadNd):
    dims = 3


class _ConstantPadNd(_PadNd):
    mode = "constant"

    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    dims = 1


class ConstantPad2d(_ConstantPadNd):
    dims = 2


class ConstantPad3d(_ConstantPadNd):
    dims = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd, ConstantPad1d):
    pass


class ZeroPad2d(_ZeroPadNd, ConstantPad2d):
    pass


class ZeroPad3d(_ZeroPadNd, ConstantPad3d):
    pass
