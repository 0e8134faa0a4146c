"""``numbagrad.nn.grad`` (also ``nn.functional.grad``): the gradients of conv1d/2d/3d with
respect to their input or their weight, given the output's gradient, as ``torch.nn.grad``.

Each is the convolution op's own backward (``ops.conv.convolution_backward``), so its result
is differentiable again (node ``ConvolutionBackwardBackward0``, as PyTorch's)."""

from __future__ import annotations

from ..ops import conv as _conv

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]


def _check_batched(input_shape, weight_shape, n):
    # (PyTorch's convolution_backward takes batched shapes only)
    if len(input_shape) != n + 2:
        raise RuntimeError(
            f"Expected {n + 2}-dimensional input for {n + 2}-dimensional weight "
            f"{list(weight_shape)}, but got {len(input_shape)}-dimensional input of size "
            f"{list(input_shape)} instead")


def _check_grad_output(grad_output, input, weight, geom, n):
    """``grad_output`` must have the shape of the convolution's output (PyTorch's
    check_dim_size wording)."""
    spatial = [_conv._conv_out(*a) for a in zip(
        input.shape[2:], *(v[3 - n:] for v in (geom.kernel, geom.stride, geom.pad,
                                              geom.pad_end, geom.dilation)))]
    want = [input.shape[0], weight.shape[0], *spatial]
    got = list(grad_output.shape)
    for d, size in enumerate(want):
        if len(got) != len(want) or got[d] != size:
            raise RuntimeError(
                f"Expected a tensor of dimension {len(want)} and tensor.size[{d}] == {size} but "
                f"got: dimension {len(got)} and tensor.size[{d}] = "
                f"{got[d] if d < len(got) else 'none'}")


def _grad(n, input, weight, grad_output, stride, padding, dilation, groups, which):
    if isinstance(padding, str):
        # (PyTorch's nn.grad passes padding straight to convolution_backward, which takes
        # numbers only)
        name = f"conv{n}d_{'input' if which == 0 else 'weight'}"
        raise RuntimeError(f"{name}(): padding must be an int or a tuple of {n} ints, not "
                           f"'{padding}'")
    _check_batched(input.shape, weight.shape, n)
    geom = _conv._conv_geometry(input, weight, None, stride, padding, dilation, groups, n)
    _check_grad_output(grad_output, input, weight, geom, n)
    mask = (which == 0, which == 1, False)
    return _conv.convolution_backward(grad_output, input, weight, geom, mask)[0]


def _input_grad(n, input_size, weight, grad_output, stride, padding, dilation, groups):
    # (only the input's shape is read: a placeholder of that shape stands for it)
    input = grad_output.new_empty(tuple(input_size))
    return _grad(n, input, weight, grad_output, stride, padding, dilation, groups, 0)


def _weight_grad(n, input, weight_size, grad_output, stride, padding, dilation, groups):
    weight = grad_output.new_empty(tuple(weight_size))
    return _grad(n, input, weight, grad_output, stride, padding, dilation, groups, 1)


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv1d`` with respect to its input of shape ``input_size`` (N, C,
    L), given ``weight`` and the output's gradient ``grad_output``."""
    return _input_grad(1, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv1d`` with respect to its weight of shape ``weight_size``, given
    ``input`` and the output's gradient ``grad_output``."""
    return _weight_grad(1, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv2d`` with respect to its input of shape ``input_size`` (N, C, H,
    W), given ``weight`` and the output's gradient ``grad_output``."""
    return _input_grad(2, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv2d`` with respect to its weight of shape ``weight_size``, given
    ``input`` and the output's gradient ``grad_output``."""
    return _weight_grad(2, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv3d`` with respect to its input of shape ``input_size`` (N, C, D,
    H, W), given ``weight`` and the output's gradient ``grad_output``."""
    return _input_grad(3, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv3d`` with respect to its weight of shape ``weight_size``, given
    ``input`` and the output's gradient ``grad_output``."""
    return _weight_grad(3, input, weight_size, grad_output, stride, padding, dilation, groups)
