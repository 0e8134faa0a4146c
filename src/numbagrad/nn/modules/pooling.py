"""Pooling layers over ``nn.functional``'s pools, with PyTorch's defaults and reprs."""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
           "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
           "LPPool1d", "LPPool2d", "LPPool3d"]


class _MaxPoolNd(Module):
    _pool = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")

    def forward(self, input):
        return type(self)._pool(input, self.kernel_size, self.stride, self.padding,
                                self.dilation, ceil_mode=self.ceil_mode,
                                return_indices=self.return_indices)


class MaxPool1d(_MaxPoolNd):
    _pool = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    _pool = staticmethod(F.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    _pool = staticmethod(F.max_pool3d)


class AvgPool1d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        one = lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v,)  # noqa: E731
        self.kernel_size = one(kernel_size)
        self.stride = one(stride if stride is not None else kernel_size)
        self.padding = one(padding)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class _AvgPoolNd(Module):
    _pool = None

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override=None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input):
        return type(self)._pool(input, self.kernel_size, self.stride, self.padding,
                                self.ceil_mode, self.count_include_pad, self.divisor_override)


class AvgPool2d(_AvgPoolNd):
    _pool = staticmethod(F.avg_pool2d)


class AvgPool3d(_AvgPoolNd):
    _pool = staticmethod(F.avg_pool3d)


class _AdaptiveAvgPoolNd(Module):
    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    def forward(self, input):
        return F.adaptive_avg_pool3d(input, self.output_size)


class _AdaptiveMaxPoolNd(Module):
    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    def forward(self, input):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    def forward(self, input):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    def forward(self, input):
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class _MaxUnpoolNd(Module):
    _n = 0
    _unpool = None

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        n = type(self)._n
        self.kernel_size = F._ntuple(kernel_size, n)
        self.stride = F._ntuple(stride if stride is not None else kernel_size, n)
        self.padding = F._ntuple(padding, n)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input, indices, output_size=None):
        return type(self)._unpool(input, indices, self.kernel_size, self.stride, self.padding,
                                  output_size)


class MaxUnpool1d(_MaxUnpoolNd):
    _n, _unpool = 1, staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    _n, _unpool = 2, staticmethod(F.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    _n, _unpool = 3, staticmethod(F.max_unpool3d)


class _LPPoolNd(Module):
    _pool = None

    def __init__(self, norm_type: float, kernel_size, stride=None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")

    def forward(self, input):
        return type(self)._pool(input, float(self.norm_type), self.kernel_size, self.stride,
                                self.ceil_mode)


class LPPool1d(_LPPoolNd):
    _pool = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    _pool = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    _pool = staticmethod(F.lp_pool3d)
