"""``Conv1d``/``2d``/``3d`` and ``ConvTranspose1d``/``2d``/``3d``: PyTorch's parameters,
initialisation, padding modes and repr over ``nn.functional``'s convolutions."""

from __future__ import annotations

from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..parameter import UninitializedParameter
from .lazy import LazyModuleMixin
from .linear import reset_fan_in_uniform, weight_and_bias
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _tuple(value, n):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


class _ConvNd(Module):
    _n: int  # spatial dims
    _conv = None  # the functional
    _transposed = False  # weight (in_channels, out_channels / groups, *kernel_size)

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None) -> None:
        super().__init__()
        n = self._n
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str) and not self._transposed:
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'valid', 'same'}")
            if padding == "same" and any(s != 1 for s in _tuple(stride, n)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {list(_PADDING_MODES)}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _tuple(kernel_size, n)
        self.stride = _tuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _tuple(padding, n)
        self.dilation = _tuple(dilation, n)
        self.transposed, self.output_padding = self._transposed, (0,) * n
        self.groups, self.padding_mode = groups, padding_mode
        # F.pad's amounts for the non-zero padding modes: (before, after) from the last dim back
        if isinstance(self.padding, str):
            total = [d * (k - 1) for d, k in zip(self.dilation, self.kernel_size)]
            pairs = [(t // 2, t - t // 2) if self.padding == "same" else (0, 0) for t in total]
        else:
            pairs = [(p, p) for p in self.padding]
        self._reversed_padding_repeated_twice = tuple(a for pair in reversed(pairs) for a in pair)
        rows, cols = (in_channels, out_channels) if self._transposed else (out_channels,
                                                                            in_channels)
        weight_and_bias(self, (rows, cols // groups, *self.kernel_size), bias, device, dtype,
                        out_channels)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_fan_in_uniform(self.weight, self.bias)

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * self._n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self._n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def _conv_forward(self, input, weight, bias):
        conv = type(self)._conv
        if self.padding_mode != "zeros":
            input = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(input, weight, bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_ConvNd):
    _n = 1
    _conv = staticmethod(F.conv1d)


class Conv2d(_ConvNd):
    _n = 2
    _conv = staticmethod(F.conv2d)


class Conv3d(_ConvNd):
    _n = 3
    _conv = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    _transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        if padding_mode != "zeros":
            raise ValueError(
                f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)
        self.output_padding = _tuple(output_padding, self._n)

    def _output_padding(self, input, output_size):
        """PyTorch's: ``output_padding``, or the one that gives ``output_size`` (the spatial
        sizes, optionally after the batch and channel sizes)."""
        n = self._n
        if output_size is None:
            return self.output_padding
        lead = 2 if input.ndim == n + 2 else 1
        if len(output_size) == lead + n:
            output_size = output_size[lead:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.ndim}D input, output_size must have "
                             f"{n} or {lead + n} elements (got {len(output_size)})")
        mins = [(input.shape[d + lead] - 1) * s - 2 * p + dil * (k - 1) + 1
                for d, (s, p, dil, k) in enumerate(zip(self.stride, self.padding, self.dilation,
                                                       self.kernel_size))]
        maxs = [m + s - 1 for m, s in zip(mins, self.stride)]
        for size, lo, hi in zip(output_size, mins, maxs):
            if size < lo or size > hi:
                # (the input's sizes after its first two, unbatched or not, as PyTorch's)
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from "
                    f"{mins} to {maxs} (for an input of {type(input.shape)(input.shape[2:])})")
        return tuple(size - lo for size, lo in zip(output_size, mins))

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return type(self)._conv(input, self.weight, self.bias, self.stride, self.padding,
                                output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    _n = 1
    _conv = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    _n = 2
    _conv = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    _n = 3
    _conv = staticmethod(F.conv_transpose3d)


# ---------------------------------------------------------------- lazy


class _LazyConvMixin(LazyModuleMixin):
    """A convolution whose ``in_channels`` is its first input's channel count (dim 1, or dim 0
    of an unbatched input): until then its weight and bias are ``UninitializedParameter``;
    then it is its ``cls_to_become``."""

    def _lazy_init(self, out_channels, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _get_in_channels(self, input) -> int:
        batched = self._n + 2
        if input.dim() not in (batched - 1, batched):
            raise RuntimeError(
                f"Expected {batched - 1}D (unbatched) or {batched}D (batched) input to "
                f"{type(self).__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == batched else input.shape[0]

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            rows, cols = ((self.in_channels, self.out_channels) if self._transposed
                          else (self.out_channels, self.in_channels))
            with no_grad():
                self.weight.materialize((rows, cols // self.groups, *self.kernel_size))
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()


def _lazy_conv(base):
    """The lazy class of convolution ``base`` (``LazyConv2d`` of ``Conv2d``), PyTorch's
    signature without ``in_channels``."""

    class Lazy(_LazyConvMixin, base):
        cls_to_become = base

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                     groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
            super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                             padding_mode, device, dtype)
            self._lazy_init(out_channels, bias, device, dtype)

    Lazy.__name__ = Lazy.__qualname__ = "Lazy" + base.__name__
    return Lazy


def _lazy_conv_transpose(base):
    """``_lazy_conv`` for a transposed convolution (its own order of arguments)."""

    class Lazy(_LazyConvMixin, base):
        cls_to_become = base

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                     groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                     dtype=None):
            super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                             dilation, padding_mode, device, dtype)
            self._lazy_init(out_channels, bias, device, dtype)

    Lazy.__name__ = Lazy.__qualname__ = "Lazy" + base.__name__
    return Lazy


LazyConv1d, LazyConv2d, LazyConv3d = map(_lazy_conv, (Conv1d, Conv2d, Conv3d))
LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d = map(
    _lazy_conv_transpose, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d))
