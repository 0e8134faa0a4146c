"""Folding an eval-mode BatchNorm into the convolution or linear layer before it: one layer
whose output is the pair's, ``fuse_conv_bn_eval`` and ``fuse_linear_bn_eval``, and the
parameter arithmetic they use (``fuse_conv_bn_weights``, ``fuse_linear_bn_weights``)."""

from __future__ import annotations

import copy

from ...autograd.grad_mode import no_grad
from ...factory import ones_like, zeros_like
from ...ops import rsqrt
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


def _check_eval(layer, bn):
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")


def _check_running_stats(bn):
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of ``conv`` whose output is ``bn(conv(x))`` with both in eval mode (``transpose``:
    ``conv`` is a transposed convolution, its output channels on the weight's dim 1)."""
    _check_eval(conv, bn)
    fused = copy.deepcopy(conv)
    _check_running_stats(bn)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose)
    return fused


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """The weight and bias (new leaf Parameters, in the conv's dtypes) of a convolution
    followed by an eval-mode BatchNorm: each output channel scaled by ``bn_w / sqrt(bn_rv +
    eps)``, the bias moved by the running mean and BatchNorm's bias. A missing conv bias or
    BatchNorm weight / bias counts as zeros / ones / zeros."""
    weight_dtype = conv_w.dtype
    bias_dtype = conv_w.dtype if conv_b is None else conv_b.dtype
    # (a missing conv bias makes a bias that does not require grad, as PyTorch's)
    bias_grad = False if conv_b is None else conv_b.requires_grad
    with no_grad():
        conv_b = zeros_like(bn_rm) if conv_b is None else conv_b
        bn_w = ones_like(bn_rm) if bn_w is None else bn_w
        bn_b = zeros_like(bn_rm) if bn_b is None else bn_b
        inv_std = rsqrt(bn_rv + bn_eps)
        # the channel dim of the weight: 0, or 1 for a transposed convolution's
        shape = [1] * conv_w.ndim
        shape[1 if transpose else 0] = -1
        # (the operations in PyTorch's order, so that float32 results round the same)
        weight = (conv_w * (bn_w * inv_std).reshape(shape)).to(dtype=weight_dtype)
        bias = ((conv_b - bn_rm) * inv_std * bn_w + bn_b).to(dtype=bias_dtype)
    return Parameter(weight, conv_w.requires_grad), Parameter(bias, bias_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of ``linear`` whose output is ``bn(linear(x))`` with both in eval mode: the
    BatchNorm's features are the linear layer's outputs (or one feature, broadcast)."""
    _check_eval(linear, bn)
    fused = copy.deepcopy(linear)
    # (the folded weight keeps its shape only when BatchNorm's scale broadcasts over its rows)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(
            "To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
            f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}")
    _check_running_stats(bn)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The weight and bias (new leaf Parameters, in the linear layer's dtypes) of a linear
    layer followed by an eval-mode BatchNorm over its outputs. A missing linear bias counts
    as zeros (and a missing BatchNorm weight / bias, which PyTorch's refuses, as ones /
    zeros)."""
    weight_dtype = linear_w.dtype
    bias_dtype = linear_w.dtype if linear_b is None else linear_b.dtype
    bias_grad = False if linear_b is None else linear_b.requires_grad
    with no_grad():
        linear_b = zeros_like(bn_rm) if linear_b is None else linear_b
        bn_w = ones_like(bn_rm) if bn_w is None else bn_w
        bn_b = zeros_like(bn_rm) if bn_b is None else bn_b
        scale = bn_w * rsqrt(bn_rv + bn_eps)
        weight = linear_w * scale.unsqueeze(-1).to(dtype=weight_dtype)
        bias = ((linear_b - bn_rm) * scale + bn_b).to(dtype=bias_dtype)
    return Parameter(weight, linear_w.requires_grad), Parameter(bias, bias_grad)
