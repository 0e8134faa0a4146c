"""PyTorch-style functional layers and losses built from registry ops."""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable

import numpy as np

from .. import dtypes as _D
from .. import factory
from .. import ops as _F
from .._tensor import _wrap_dim
from ..ops import activation as _A
from ..ops import attention as _attention
from ..ops import ctc as _ctc
from ..ops import movement as _M
from ..ops import reduce as _R
from ..ops import elementwise as _E
from ..autograd.grad_mode import is_grad_enabled as _grad_enabled
from ..autograd.grad_mode import no_grad as _no_grad
from ..ops.embedding import embedding as _embedding
from ..ops.embedding import embedding_bag as _embedding_bag
from ..tensor import Tensor
# (PyTorch's F.grad is the module torch.nn.grad)
from . import grad  # noqa: F401
from .attention import cpu_path as _sdpa_path

# the ops declared with a "functional" variant; the rest is written out below
globals().update(_F.FUNCTIONAL)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return _F.relu_(input) if inplace else _F.relu(input)


relu_ = _F.relu_


def sigmoid(input: Tensor) -> Tensor:
    return _F.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    return _F.tanh(input)


def _activation(op, input, params, inplace):
    """``op(input, *params)``, written into ``input`` with ``inplace``."""
    return _F.inplace(input, op, *params) if inplace else op(input, *params)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    # (in place with a negative slope, whose result no longer has the input's sign, PyTorch's
    # LeakyReluBackward1 raises in the backward pass, as here)
    _A.check_float(input, "leaky_relu_cpu")
    if inplace and negative_slope < 0:
        return _A.negative_slope_inplace(input, _E.leaky_relu, (negative_slope,),
                                         "LeakyReluBackward1", "leakyReLu")
    op = _E.leaky_relu_ if inplace else _E.leaky_relu
    return _activation(op, input, (negative_slope,), inplace)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return leaky_relu(input, negative_slope, inplace=True)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    _A.check_float(input, "elu_cpu")
    if inplace and alpha < 0:  # (as leaky_relu's negative slope)
        return _A.negative_slope_inplace(input, _E.elu, (alpha, 1.0, 1.0), "EluBackward1", "elu")
    op = _E.elu_ if inplace else _E.elu
    return _activation(op, input, (alpha, 1.0, 1.0), inplace)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return elu(input, alpha, inplace=True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    return _F.selu_(input) if inplace else _F.selu(input)


selu_ = _F.selu_


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _F.celu_(input, alpha) if inplace else _F.celu(input, alpha)


celu_ = _F.celu_


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    return (_F.threshold_ if inplace else _F.threshold)(input, threshold, value)


threshold_ = _F.threshold_


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    return (_F.rrelu_ if inplace else _F.rrelu)(input, lower, upper, training)


rrelu_ = _F.rrelu_
hardshrink = _F.hardshrink
prelu = _F.prelu


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        return hardtanh_(input, min_val, max_val)
    min_val, max_val = _hardtanh_limits(input, min_val, max_val)
    return _E.hardtanh(input, min_val, max_val)


def _hardtanh_limits(input, min_val, max_val):
    """The limits as PyTorch applies them: an integer input's truncated to integers (its
    legacy ``toLong``: -0.5 is 0), which an unsigned input refuses when negative."""
    dt = input.dtype
    if dt.is_floating_point or dt is _D.bool_ or not (math.isfinite(min_val)
                                                       and math.isfinite(max_val)):
        return min_val, max_val
    min_val, max_val = int(min_val), int(max_val)
    if dt is _D.uint8 and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    return min_val, max_val


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    # (bounds unchecked, as PyTorch's: with min_val > max_val every element is max_val)
    min_val, max_val = _hardtanh_limits(input, min_val, max_val)
    return _F.inplace(input, _E.hardtanh, min_val, max_val)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return hardtanh(input, 0.0, 6.0, inplace)


def _float_activation(op, kernel, input, inplace=False):
    """``op`` of a float ``input`` (PyTorch has no integer kernel, named ``kernel``)."""
    _A.check_float(input, kernel)
    return _activation(op, input, (), inplace)


def logsigmoid(input: Tensor) -> Tensor:
    return _float_activation(_E.log_sigmoid, "log_sigmoid_cpu", input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    return _float_activation(_E.mish, "mish_cpu", input, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    return _float_activation(_E.hardswish, "hardswish_cpu", input, inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    return _float_activation(_E.hardsigmoid, "hardsigmoid_cpu", input, inplace)


def softsign(input: Tensor) -> Tensor:
    return input / (input.abs() + 1)  # (composed, as PyTorch's: DivBackward0)


def tanhshrink(input: Tensor) -> Tensor:
    return input - input.tanh()  # (composed, as PyTorch's: SubBackward0)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    _A.check_float(input, "softshrink_check")
    top = float(np.finfo(input.dtype.np).max)
    if not 0 <= lambd <= top:  # (NaN too)
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype "
                           f"{_D.SCALAR_TYPE[input.dtype.name]}, but found {lambd:g}")
    return _E.softshrink(input, lambd)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """``a * sigmoid(b)``, ``a`` and ``b`` the halves of ``input`` along ``dim``."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    dim = _wrap_dim(dim, input.ndim)
    if input.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size "
                           f"{input.shape[dim]}")
    _A.check_float(input, "glu_cpu")
    return _A.glu(input, dim)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    _A.check_float(input, "GeluKernelImpl")
    if approximate == "none":
        return _E.gelu(input)
    if approximate == "tanh":
        return _E.gelu_tanh(input)
    raise RuntimeError("approximate argument must be either none or tanh.")


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    return _float_activation(_E.silu, "silu_cpu", input, inplace)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    _A.check_float(input, "softplus_cpu")
    return _E.softplus(input, beta, threshold)


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


# alpha dropout's alpha: SELU's -scale * alpha, the value a dropped SELU output is set to
ALPHA_DROPOUT_ALPHA = 1.7580993408473766


def dropout_impl(input: Tensor, p: float, train: bool, inplace: bool = False,
                 channel_dim: int | None = None, alpha: bool = False) -> Tensor:
    """PyTorch's ``_dropout_impl`` (``p`` checked by the caller): each element kept with
    probability ``1 - p`` (with ``channel_dim``, whole channels: one draw per index up to that
    dim), the kept ones scaled by ``1 / (1 - p)``; ``alpha``: SELU's alpha dropout, which keeps
    the mean and variance (dropped elements set to a value, then an affine map)."""
    if p == 0 or not train or input.numel() == 0:
        return input  # (the input itself, as PyTorch)
    if p == 1:
        zero = factory.zeros((), dtype=input.dtype, device=input.device)
        return input.mul_(zero) if inplace else input * zero
    if channel_dim is None:
        shape = tuple(input.shape)
    else:
        if input.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = tuple(input.shape[:channel_dim + 1]) + (1,) * (input.ndim - channel_dim - 1)
    keep = factory._rng(None).random(shape) >= p
    if not alpha:
        mask = factory.tensor(keep / (1 - p), dtype=input.dtype, device=input.device)
        return input.mul_(mask) if inplace else input * mask
    a = 1 / math.sqrt((ALPHA_DROPOUT_ALPHA ** 2 * p + 1) * (1 - p))
    b = factory.tensor((keep - 1.0) * ALPHA_DROPOUT_ALPHA * a + ALPHA_DROPOUT_ALPHA * a * p,
                       dtype=input.dtype, device=input.device)
    mask = factory.tensor(keep * a, dtype=input.dtype, device=input.device)
    return (input.mul_(mask) if inplace else input * mask).add_(b)


def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)`` (only
    when ``training``)."""
    _check_p(p)
    return dropout_impl(input, p, training, inplace)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Dropout for SELU networks: dropped elements take SELU's negative saturation value, and
    an affine map keeps the input's mean and variance (only when ``training``)."""
    _check_p(p)
    return dropout_impl(input, p, training, inplace, alpha=True)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """``alpha_dropout`` of whole channels (dim 1): one draw per (sample, channel)."""
    _check_p(p)
    return dropout_impl(input, p, training, inplace, channel_dim=1, alpha=True)


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` picked by the indices ``input``; row ``padding_idx`` gets no
    gradient; with ``max_norm`` the picked rows are first renormalized in place."""
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < weight.size(0), "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -weight.size(0), "Padding_idx must be within num_embeddings"
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if sparse:
        raise NotImplementedError("numbagrad has no sparse gradients: use sparse=False")
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    return _embedding(weight, input, padding_idx, scale_grad_by_freq)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """A sample of the Gumbel-softmax distribution over ``dim`` (temperature ``tau``), drawn
    from numbagrad's generator; with ``hard`` one-hot, with the soft sample's gradient."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -factory.empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = factory.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def embedding_bag(input: Tensor, weight: Tensor, offsets=None, max_norm: float | None = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean",
                  sparse: bool = False, per_sample_weights=None,
                  include_last_offset: bool = False, padding_idx: int | None = None) -> Tensor:
    """The sum, mean or max of bags of rows of ``weight``: each row of a 2-d ``input`` is a
    bag, or a 1-d ``input`` is cut into bags at ``offsets``."""
    if weight.dtype is _D.int64 and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
            f"then it must have the same shape as the input ({input.shape})")
    if weight.dim() != 2:
        raise ValueError(
            f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{type(offsets)}")
        offsets = factory.arange(0, input.numel(), input.size(1), dtype=input.dtype,
                                 device=input.device)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if sparse:
        raise NotImplementedError("numbagrad has no sparse gradients: use sparse=False")
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub.")
    n = weight.size(0)
    if padding_idx is None:
        padding_idx = -1
    elif not -n <= padding_idx < n:
        raise RuntimeError(f"padding_idx must be within the number of embeddings, -{n} through "
                           f"{n - 1}, but got {padding_idx}")
    elif padding_idx < 0:
        padding_idx += n
    return _embedding_bag(weight, input, offsets, per_sample_weights, mode=mode,
                          padding_idx=padding_idx, scale_grad_by_freq=scale_grad_by_freq,
                          include_last_offset=include_last_offset)


def _embedding_renorm_(weight, input, max_norm, norm_type):
    """Scale the rows of ``weight`` that ``input`` picks down to norm ``max_norm`` (in place,
    unrecorded, as PyTorch's embedding_renorm_)."""
    rows = np.unique(input._host())
    with _no_grad():
        picked = weight[rows]
        norms = picked.abs().pow(norm_type).sum(1, keepdim=True).pow(1.0 / norm_type)
        scale = _F.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight[rows] = picked * scale


def one_hot(input: Tensor, num_classes: int = -1) -> Tensor:
    """Class indices as int64 one-hot vectors along a new last dimension."""
    tensor = input
    if tensor.dtype is not _D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    idx = tensor._host()
    if idx.size and idx.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(idx.max()) + 1 if idx.size else 0
        if not idx.size:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    elif idx.size and idx.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = (idx[..., None] == np.arange(num_classes)).astype(np.int64)
    return factory.tensor(out, device=tensor.device)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None
             ) -> Tensor:
    """``y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]``."""
    out_f, in1, in2 = weight.shape
    lead = input1.shape[:-1]
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, in2)
    # (x1 @ W viewed per output feature, then contracted with x2)
    t = (x1 @ weight.permute(1, 0, 2).reshape(in1, out_f * in2)).view(-1, out_f, in2)
    y = (t * x2.unsqueeze(1)).sum(-1).view(*lead, out_f)
    return y if bias is None else y + bias


def _get_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    """PyTorch's legacy choice of dimension for a softmax called without ``dim``."""
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
        "dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype=None) -> Tensor:
    if dim is None:
        dim = _get_softmax_dim("softmax", input.ndim, _stacklevel)
    return _F.softmax(input if dtype is None else input.to(dtype), dim)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype=None) -> Tensor:
    """``softmax(-input)`` (composed, as PyTorch's: SoftmaxBackward0)."""
    if dim is None:
        dim = _get_softmax_dim("softmin", input.ndim, _stacklevel)
    return softmax(-input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype=None) -> Tensor:
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.ndim, _stacklevel)
    return _F.log_softmax(input if dtype is None else input.to(dtype), dim)


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``."""
    if bias is not None and input.ndim == 2:
        return _F.addmm(bias, input, weight.t())
    if bias is not None and input.ndim and weight.ndim == 2 and input.is_contiguous():
        # as PyTorch: the rows of a contiguous input folded into one addmm, then viewed back
        # (ViewBackward0); the row count spelled out, as -1 cannot be inferred for 0 elements
        rows = input.reshape(math.prod(input.shape[:-1]), input.shape[-1])
        return _F.addmm(bias, rows, weight.t()).view(*input.shape[:-1], weight.shape[0])
    out = _F.matmul(input, weight.t())
    return out if bias is None else out + bias


# ---------------------------------------------------------------- losses


def _reduction(reduction: str, size_average=None, reduce=None) -> str:
    """The reduction's name, from the legacy ``size_average``/``reduce`` flags when given."""
    if size_average is not None or reduce is not None:
        warnings.warn("size_average and reduce args will be deprecated, please use "
                      f"reduction='{_legacy_reduction(size_average, reduce)}' instead.",
                      UserWarning, stacklevel=3)
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in _F.loss.REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _legacy_reduction(size_average, reduce) -> str:
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return "none" if not reduce else "mean" if size_average else "sum"


def _warn_target_size(input: Tensor, target: Tensor) -> None:
    if input.shape != target.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            UserWarning,
            stacklevel=3,
        )


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
             reduction: str = "mean", weight=None) -> Tensor:
    _warn_target_size(input, target)
    reduction = _reduction(reduction, size_average, reduce)
    if weight is not None:
        return _weighted(input, (input - target) ** 2, weight, reduction, by_weight=True)
    return _F.loss.mse_loss(input, target, reduction)


def _weighted_mean(loss: Tensor, reduction: str) -> Tensor:
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def _weighted(input: Tensor, errors: Tensor, weight: Tensor, reduction: str,
              by_weight: bool) -> Tensor:
    """PyTorch's weighted losses (mse, l1, huber): ``errors * weight``, reduced; a mean
    divides by the weights' sum where ``by_weight`` (mse, l1), by the count otherwise
    (huber)."""
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    loss = errors * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / weight.sum() if by_weight else loss.mean()


def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
            reduction: str = "mean", weight=None) -> Tensor:
    """``|input - target|``, reduced: composed of ``sub`` and ``abs``, as PyTorch's."""
    _warn_target_size(input, target)
    reduction = _reduction(reduction, size_average, reduce)
    loss = _F.abs(input - target)
    if weight is not None:
        return _weighted(input, loss, weight, reduction, by_weight=True)
    return _weighted_mean(loss, reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    _warn_target_size(input, target)
    reduction = _reduction(reduction, size_average, reduce)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0:  # (PyTorch's rule too: the quadratic part has width 0)
        return l1_loss(input, target, reduction=reduction)
    return _F.loss.smooth_l1_loss(input, target, reduction, float(beta))


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight=None) -> Tensor:
    _warn_target_size(input, target)
    reduction = _reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is not None:
        return _weighted(input, _F.loss.huber_loss(input, target, "none", float(delta)), weight,
                         reduction, by_weight=False)
    return _F.loss.huber_loss(input, target, reduction, float(delta))


def _class_weight(weight, n_classes: int, op: str = "nll_loss_forward"):
    if weight is None:
        return None
    if weight.ndim != 1 or weight.shape[0] != n_classes:
        raise RuntimeError(
            f"weight tensor should be defined either for all {n_classes} classes or no classes "
            f"but got weight tensor of shape: {list(weight.shape)}")
    _not_differentiable(op, weight=weight)
    return weight._host()


def nll_loss(input: Tensor, target: Tensor, weight=None, size_average=None,
             ignore_index: int = -100, reduce=None, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class indices ``target`` under log-probabilities ``input``:
    input (C,) with a 0-d target, (N, C) with (N,), or (N, C, d1, ...) with (N, d1, ...)."""
    if reduction != "mean" or size_average is not None or reduce is not None:
        reduction = _reduction(reduction, size_average, reduce)
    # (the shapes read once: this runs once per step of every classifier)
    shape, tshape = input.size(), target.size()
    nd, tnd = len(shape), len(tshape)
    if nd == 0:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    if nd > 1 and (not tnd or shape[0] != tshape[0]):
        raise ValueError(
            f"Expected input batch_size ({shape[0]}) to match target batch_size "
            f"({tshape[0] if tnd else 1}).")
    if tnd > 1 and nd == 2 or tnd > 0 and nd == 1 and tshape[0] != 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if nd > 2 and tshape != (shape[0], *shape[2:]):
        raise RuntimeError(
            f"Expected target size {[shape[0], *shape[2:]]}, got {list(tshape)}")
    tdtype = target.dtype
    if tdtype is not _D.int64 and tdtype is not _D.uint8:
        raise RuntimeError(
            "expected target dtype to be Long or Byte, but got " + _D.SCALAR_TYPE[tdtype.name])
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f'"nll_loss_out_frame" not implemented for \'{_D.SCALAR_TYPE[input.dtype.name]}\'')
    w = None if weight is None else _class_weight(
        weight, shape[1] if nd > 1 else shape[0], "nll_loss2d_forward" if nd == 4 else
        "nll_loss_forward")
    if nd == 3 or nd > 4:
        # as PyTorch: the trailing dims folded into a 2-d image, the result viewed back
        n, c = input.shape[:2]
        rest = math.prod(input.shape[2:])  # (spelled out: -1 is ambiguous in 0 elements)
        if c == 0 and rest:
            # (PyTorch views an input of no elements as (n, c, 0, 0), the target as
            # (n, 1, -1): the 2-d loss's shape check refuses the pair)
            raise RuntimeError(f"size mismatch (got input: {[n, c, 0, 0]} , target: "
                               f"{[n, 1, rest]}")
        out = nll_loss(input.reshape(n, c, 1, rest), target.reshape(n, 1, rest), weight,
                       ignore_index=ignore_index, reduction=reduction)
        return out.view(target.shape) if reduction == "none" else out
    return _F.loss.nll_loss(input, target, reduction, w, ignore_index, weight_tensor=weight)


def cross_entropy(input: Tensor, target: Tensor, weight=None, size_average=None,
                  ignore_index: int = -100, reduce=None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Cross-entropy of ``softmax(input)`` along dim 1 (dim 0 of a 1-d input) against class
    indices, or against class probabilities (a float ``target`` of the input's shape)."""
    reduction = _reduction(reduction, size_average, reduce)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    # (PyTorch's class dim: 0 for a 1-d input, else 1, which a 0-d input does not have)
    dim = 0 if input.ndim == 1 else 1
    logp = log_softmax(input, dim)
    n_classes = input.shape[dim] if input.ndim else 1
    # (the smoothing's share of each class: infinite over no classes, as PyTorch's division)
    share = label_smoothing / n_classes if n_classes else math.inf
    if target.dtype.is_floating_point and target.shape == input.shape:
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + share
        terms = logp * target
        if weight is not None:
            terms = terms * _class_view(weight, input.ndim)
        if reduction == "none":
            return -terms.sum(dim)
        if reduction == "sum":
            return -terms.sum()
        if not input.numel():  # (PyTorch's: the sum, filled with NaN in place)
            out = -terms.sum()
            with _no_grad():
                out.fill_(math.nan)
            return out
        # (a division by a number inside PyTorch's kernel: DivBackward1)
        return _E.div_scalar(-terms.sum(), input.numel() / n_classes)
    loss = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing == 0:
        return loss
    # PyTorch's label smoothing for class indices: (1 - eps) nll + eps/C * sum over classes of
    # -logp (weighted), the mean normalised as nll's is
    kept = target != ignore_index
    terms = logp if weight is None else logp * _class_view(weight, input.ndim)
    smooth = _F.where(kept, -terms.sum(dim), 0.0)
    if reduction == "mean":
        total = (weight[target[kept]].sum() if weight is not None else kept.sum())
        smooth = smooth.sum() / total
    elif reduction == "sum":
        smooth = smooth.sum()
    return loss * (1 - label_smoothing) + smooth * share


def _class_view(weight: Tensor, ndim: int) -> Tensor:
    """``weight`` shaped to broadcast along the class dim (1) of an ``ndim``-d input."""
    return weight if ndim < 2 else weight.reshape(1, -1, *([1] * (ndim - 2)))


def binary_cross_entropy(input: Tensor, target: Tensor, weight=None, size_average=None,
                         reduce=None, reduction: str = "mean") -> Tensor:
    reduction = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}) is deprecated. Please ensure they have the same size.")
    if target.dtype != input.dtype:
        raise RuntimeError(f"Found dtype {_D.SCALAR_TYPE[target.dtype.name]} but expected "
                           f"{_D.SCALAR_TYPE[input.dtype.name]}")
    for name, t in (("input", input), ("target", target)):
        v = t._host()
        if v.size and not ((v >= 0) & (v <= 1)).all():
            raise RuntimeError(f"all elements of {name} should be between 0 and 1")
    _not_differentiable("binary_cross_entropy", weight=weight)
    if weight is not None:
        weight = weight.expand(input.shape)
    return _F.loss.binary_cross_entropy(input, target, reduction, weight=weight)


def _not_differentiable(fn, **args):
    """PyTorch's refusal of a tensor argument its formula has no gradient for."""
    if not _grad_enabled():
        return
    for name, t in args.items():
        if t is not None and t.requires_grad:
            raise RuntimeError(f"The function '{fn}' is not differentiable with respect to "
                               f"argument '{name}'. This input cannot have requires_grad True.")


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight=None,
                                     size_average=None, reduce=None, reduction: str = "mean",
                                     pos_weight=None) -> Tensor:
    reduction = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(
            f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    _not_differentiable("binary_cross_entropy_with_logits", weight=weight, pos_weight=pos_weight)
    return _F.loss.binary_cross_entropy_with_logits(input, target, reduction, weight=weight,
                                                    pos_weight=pos_weight)


def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """``target * (log(target) - input)`` (``input`` holds log-probabilities), composed of
    other ops as PyTorch's; ``reduction="batchmean"`` divides the sum by the batch size."""
    if reduction == "batchmean":
        if size_average is not None or reduce is not None:
            reduction = _reduction(reduction, size_average, reduce)
    else:
        reduction = _reduction(reduction, size_average, reduce)
    if reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.", UserWarning, stacklevel=2)
    if reduction == "batchmean":
        loss = kl_div_impl(input, target, "sum", log_target)
        return loss / input.shape[0] if input.ndim else loss
    return kl_div_impl(input, target, reduction, log_target)


def kl_div_impl(input: Tensor, target: Tensor, reduction: str, log_target: bool) -> Tensor:
    """ATen's ``kl_div`` (``reduction`` "none", "mean" or "sum"), which ``kl_div`` checks and
    warns for."""
    if log_target:
        loss = _F.exp(target) * (target - input)
    else:
        # xlogy(target, target): 0 where the target is 0
        loss = _F.where(target == 0, 0.0, target * _F.log(target)) - target * input
    return _weighted_mean(loss, reduction)


# PyTorch's composite losses (ATen's Loss.cpp and torch.nn.functional), spelled with the same
# ops in the same order, so their values and last nodes are PyTorch's

def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``."""
    reduction = _reduction(reduction, size_average, reduce)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    return _weighted_mean((-target * (input1 - input2)).add_(margin).clamp_min_(0), reduction)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average=None,
                         reduce=None, reduction: str = "mean") -> Tensor:
    """``input`` where ``target`` is 1, ``max(0, margin - input)`` where it is -1."""
    reduction = _reduction(reduction, size_average, reduce)
    zeros = factory.zeros_like(input)
    margin_clamp = (margin - input).clamp_min_(0)
    output_margin = _F.where(target != 1, margin_clamp, zeros)
    output_self = _F.where(target != -1, input, zeros)
    return _weighted_mean(output_margin + output_self, reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``1 - cos(input1, input2)`` where ``target`` is 1, ``max(0, cos - margin)`` where it is
    -1; the cosine along the last dim, its squared norms each plus 1e-12."""
    reduction = _reduction(reduction, size_average, reduce)
    targ_dim = target.dim()
    if targ_dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.dim() != targ_dim + 1 or input2.dim() != targ_dim + 1:
        raise RuntimeError(
            f"{targ_dim}D target tensor expects {targ_dim + 1}D input tensors, but found inputs "
            f"with sizes {list(input1.shape)} and {list(input2.shape)}.")
    eps = 1e-12
    prod_sum = (input1 * input2).sum(targ_dim)
    mag_square1 = (input1 * input1).sum(targ_dim) + eps
    mag_square2 = (input2 * input2).sum(targ_dim) + eps
    cos = prod_sum / (mag_square1 * mag_square2).sqrt_()
    zeros = factory.zeros_like(cos)
    output_pos = _F.where(target == 1, 1 - cos, zeros)
    output_neg = _F.where(target == -1, (cos - margin).clamp_min_(0), zeros)
    return _weighted_mean(output_pos + output_neg, reduction)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """The ``p``-norm of ``x1 - x2 + eps`` along the last dim (of the broadcast shape):
    ATen's ``norm(x, p, dim, keepdim)``, whose node is NormBackward1."""
    return _R.norm_p_dim(x1 - x2 + eps, p, max(x1.dim(), x2.dim()) - 1, keepdim)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False, size_average=None,
                        reduce=None, reduction: str = "mean") -> Tensor:
    """``max(0, margin + d(anchor, positive) - d(anchor, negative))``, ``d`` the pairwise
    distance; ``swap`` takes the smaller of the negative's distances to anchor and positive."""
    reduction = _reduction(reduction, size_average, reduce)
    return _triplet(anchor, positive, negative, lambda a, b: pairwise_distance(a, b, p, eps),
                    margin, swap, reduction)


def _triplet(anchor, positive, negative, distance, margin, swap, reduction):
    """The triplet losses' checks and their ``max(0, margin + d(a, p) - d(a, n))``."""
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.dim(), positive.dim(), negative.dim()
    if not a_dim == p_dim == n_dim:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative {n_dim}D "
            "inputs")
    dist_pos = distance(anchor, positive)
    dist_neg = distance(anchor, negative)
    if swap:
        dist_neg = _F.minimum(dist_neg, distance(positive, negative))
    return _weighted_mean(_F.clamp_min(margin + dist_pos - dist_neg, 0), reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function=None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean") -> Tensor:
    """``triplet_margin_loss`` with any ``distance_function`` of two tensors (default
    ``pairwise_distance``)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _triplet(anchor, positive, negative, distance_function or pairwise_distance, margin,
                    swap, reduction)


def soft_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                     reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-target * input))`` (targets 1 or -1)."""
    reduction = _reduction(reduction, size_average, reduce)
    if target.requires_grad and _grad_enabled():
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with respect "
                           "to argument 'target'. This input cannot have requires_grad True.")
    return _F.loss.soft_margin_loss(input, target, reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight=None, size_average=None,
                                reduce=None, reduction: str = "mean") -> Tensor:
    """Binary cross-entropy of ``sigmoid(input)`` against each label, averaged over the classes
    (the last dim)."""
    if size_average is not None or reduce is not None:
        reduction = _reduction(reduction, size_average, reduce)
    # PyTorch's formula, its nodes
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    if reduction not in _F.loss.REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    return _weighted_mean(loss, reduction)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average=None, eps: float = 1e-8, reduce=None,
                     reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of ``target`` under a Poisson distribution of rate
    ``exp(input)`` (``input`` itself without ``log_input``); ``full`` adds Stirling's
    approximation of ``log(target!)`` for targets above 1."""
    reduction = _reduction(reduction, size_average, reduce)
    if log_input:
        loss = _F.exp(input) - target * input
    else:
        loss = input - target * _F.log(input + eps)
    if full:
        stirling_term = target * _F.log(target) - target + 0.5 * _F.log(2 * math.pi * target)
        loss += stirling_term.masked_fill(target <= 1, 0)
    return _weighted_mean(loss, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of ``target`` under a normal distribution of mean ``input`` and
    variance ``var`` (clamped to ``eps``; a float, or a tensor one dim short of the input, or
    of its shape with one dim of size 1); ``full`` adds the constant ``log(2 pi) / 2``."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * factory.ones_like(input)
    elif (var < 0).any():
        raise ValueError("var has negative entry/entries")
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim and sum(
                y for x, y in zip(input.size(), var.size()) if x != y) == 1):
            raise ValueError("var is of incorrect size")  # (else: heteroscedastic)
    if reduction not in _F.loss.REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with _no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (_F.log(var) + (input - target) ** 2 / var)
    if full:
        loss += 0.5 * math.log(2 * math.pi)
    return _weighted_mean(loss, reduction)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight=None, size_average=None, reduce=None,
                      reduction: str = "mean") -> Tensor:
    """Multi-class hinge loss: ``sum_i w[y] max(0, margin - x[y] + x[i])**p / C`` over the
    classes ``i != y`` of each sample, ``y`` its target class."""
    reduction = _reduction(reduction, size_average, reduce)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    shape = list(input.shape)
    if not (input.ndim == 2 and shape[1] or input.ndim == 1 and shape[0] or input.ndim == 0):
        raise RuntimeError(
            f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: {shape}")
    n, c = (shape[0], shape[1]) if input.ndim == 2 else (1, shape[0] if shape else 1)
    if target.ndim > 1 or target.numel() != n:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{n}], but got "
            f"{list(target.shape)}. Input has shape {shape}.")
    if target.dtype != _D.int64:
        raise RuntimeError("expected scalar type Long but found "
                           + _D.SCALAR_TYPE[target.dtype.name])
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    _not_differentiable("multi_margin_loss", weight=weight)
    t = target._host()
    if ((t < 0) | (t >= c)).any():
        raise RuntimeError("target out of range")
    return _F.loss.multi_margin_loss(input, target, p, margin,
                                     None if weight is None else weight._host(), reduction)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                           reduction: str = "mean") -> Tensor:
    """Multi-label hinge loss: ``sum_j sum_i max(0, 1 - (x[y_j] - x[i])) / C`` over each
    sample's targets ``y_j`` (its row of ``target`` up to the first -1) and the classes ``i``
    that are none of them. Composed of gather and elementwise ops: its node is theirs, not
    PyTorch's MultilabelMarginLossBackward0, and it has a second derivative."""
    reduction = _reduction(reduction, size_average, reduce)
    shape = list(input.shape)
    if not (input.ndim == 2 and shape[1] or input.ndim == 1 and shape[0] or input.ndim == 0):
        raise RuntimeError(
            f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: {shape}")
    c = shape[-1] if shape else 1
    if (list(target.shape) != shape if input.ndim == 2
            else target.ndim > 1 or target.numel() != c):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{shape}")
    t = target._host().reshape(-1, c)
    # (PyTorch checks the targets' range before the dtypes)
    if ((t < -1) | (t >= c)).any():
        raise RuntimeError("argument #2 'target' is out of range")
    if not input.dtype.is_floating_point:
        raise NotImplementedError('"multilabel_margin_loss_forward_out_frame" not implemented '
                                  f"for '{_D.SCALAR_TYPE[input.dtype.name]}'")
    if target.dtype is not _D.int64:
        raise RuntimeError("expected scalar type Long but found "
                           + _D.SCALAR_TYPE[target.dtype.name])
    n = t.shape[0]
    listed = np.cumprod(t != -1, axis=1).astype(bool)  # (the entries before a row's first -1)
    k = int(listed.sum(1).max()) if n else 0  # (columns past the longest list pair nothing)
    t, listed = t[:, :k], listed[:, :k]
    is_target = np.zeros((n, c), bool)
    rows, cols = np.nonzero(listed)
    is_target[rows, t[rows, cols]] = True
    # pairs (n, j, i) of a listed target j (a repeated one counts twice, as PyTorch) and a
    # class i that is not a target
    pairs = factory.tensor(listed[:, :, None] & ~is_target[:, None, :], device=input.device)
    x = input.reshape(n, c)
    picked = x.gather(1, factory.tensor(np.where(listed, t, 0), device=input.device))
    z = x.unsqueeze(1) - picked.unsqueeze(2) + 1
    # (where, not clamp: PyTorch's gradient is zero at z == 0)
    loss = _F.where(pairs & (z > 0), z, 0.0).sum((1, 2)) / c
    return _weighted_mean(loss if input.ndim == 2 else loss.reshape(()), reduction)


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """Connectionist temporal classification loss of ``targets`` under ``log_probs`` (T, N, C),
    or (T, C) unbatched: targets padded (N, S) or one after another (sum(target_lengths),);
    the lengths as tensors or as tuples of ints. ``mean`` divides each sequence's loss by its
    target length (at least 1), then averages over the batch. See ops/ctc.py."""
    if reduction not in _F.loss.REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _ctc.loss(log_probs, targets, input_lengths, target_lengths, blank, reduction,
                     zero_infinity)


# ---------------------------------------------------------------- normalisation, padding


def layer_norm(input: Tensor, normalized_shape, weight=None, bias=None,
               eps: float = 1e-5) -> Tensor:
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if input.ndim < k or tuple(input.shape[input.ndim - k:]) != shape:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape "
            f"[*, {', '.join(str(s) for s in shape)}], but got input of size{list(input.shape)}")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and tuple(p.shape) != shape:
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got {name} of "
                f"shape {list(p.shape)} and normalized_shape = {list(shape)}")
    _same_dtype_params(input, weight, bias)
    return _F.normalization.layer_norm(input, k, weight, bias, float(eps))


def _same_dtype_params(input: Tensor, *params) -> None:
    """PyTorch's CPU normalisation kernels refuse parameters (weight, bias, running
    statistics) of a dtype other than the input's."""
    dt = input.dtype
    for p in params:
        if p is not None and p.dtype is not dt:
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float"
                               if dt is _D.float32 else
                               "mixed dtype (CPU): all inputs must share same datatype.")


def rms_norm(input: Tensor, normalized_shape, weight=None, eps: float | None = None) -> Tensor:
    """``input`` over the root mean square of its last ``normalized_shape`` dims (plus ``eps``,
    by default the machine epsilon of its dtype), times ``weight``: composed as PyTorch's CPU
    ``rms_norm``, so its nodes are ``MulBackward0``, ``RsqrtBackward0``, ..."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if input.ndim < k or tuple(input.shape[input.ndim - k:]) != shape:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape "
            f"[*{', '.join(str(s) for s in shape)}], but got input of size{list(input.shape)}")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(
            f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
            f"{list(weight.shape)} and normalized_shape = {list(shape)}")
    if eps is None:
        eps = float(np.finfo(input.dtype.np).eps)
    dims = tuple(range(input.ndim - k, input.ndim))
    result = input * (input.pow(2).mean(dims, keepdim=True) + eps).rsqrt()
    result = result if weight is None else result * weight
    # (PyTorch's ends in a contiguous copy where the result kept a permuted input's layout:
    # CloneBackward0)
    return result if result.is_contiguous() else result.contiguous()


def batch_norm(input: Tensor, running_mean, running_var, weight=None, bias=None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    # (PyTorch's order: nn.functional's batch-size check, the argument parser's types, the
    # empty input's early answer, then the kernel's checks)
    if training:  # (nn.functional's _verify_batch_size: size[0] times size[2:])
        if input.ndim == 0:
            raise IndexError("tuple index out of range")
        per_channel = input.shape[0] * math.prod(input.shape[2:])
        if per_channel == 1:
            raise ValueError("Expected more than 1 value per channel when training, got input "
                             f"size {input.shape}")
    if isinstance(momentum, bool) or not isinstance(momentum, (int, float)):
        raise TypeError(f"batch_norm(): argument 'momentum' (position 7) must be float, not "
                        f"{type(momentum).__name__}")
    if input.numel() == 0:
        # PyTorch's answer for an empty input: a copy (not a view, which would cut the graph),
        # scaled by the first weight and shifted by the first bias; no statistics move, and
        # nothing else is checked
        out = input.clone()
        if weight is not None:
            out = out * weight[0]
        if bias is not None:
            out = out + bias[0]
        return out
    if not training and running_mean is None:
        raise RuntimeError("running_mean must be defined in evaluation mode")
    if not training and running_var is None:
        raise RuntimeError("running_var must be defined in evaluation mode")
    channels = input.shape[1] if input.ndim > 1 else 0
    for name, p in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if p is not None and p.numel() != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {p.numel()}")
    _same_dtype_params(input, running_mean, running_var, weight, bias)
    if input.ndim < 2:  # (the kernel reads the channels' dim 1)
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    return _F.normalization.batch_norm(input, weight, bias, running_mean=running_mean,
                              running_var=running_var, training=training,
                              momentum=momentum, eps=float(eps))


def instance_norm(input: Tensor, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats: bool = True, momentum: float = 0.1,
                  eps: float = 1e-5) -> Tensor:
    """Each sample's channels normalised over their spatial dims: PyTorch's batch norm of the
    input viewed as one sample of N * C channels, the parameters and running statistics
    repeated N times (the running statistics then averaged back)."""
    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError("Expected more than 1 spatial element when training, got input size "
                         f"{input.size()}")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    b, c = input.shape[:2]
    repeated = [None if t is None else t.repeat(b)
                for t in (weight, bias, running_mean, running_var)]
    out = batch_norm(input.contiguous().view(1, b * c, *input.shape[2:]), repeated[2],
                     repeated[3], repeated[0], repeated[1], use_input_stats, momentum, eps)
    if use_input_stats:  # (only then did the statistics move)
        with _no_grad():
            for running, stats in zip((running_mean, running_var), repeated[2:]):
                if running is not None:
                    running.copy_(stats.view(b, c).mean(0))
    return out.view(input.shape)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """``input / (k + alpha * mean of the squares of `size` neighbouring channels) ** beta``
    over (N, C, ...) (PyTorch's composition; its 3-d average pool over (channels, 1, 1) is the
    2-d one over (channels, 1) of the flattened spatial dims, the same sums)."""
    dim = input.dim()
    if dim < 3:
        raise ValueError("Expected 3D or higher dimensionality                          input "
                         f"(got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    sizes = input.size()
    div = div.view(sizes[0], 1, sizes[1], -1)
    div = pad(div, (0, 0, size // 2, (size - 1) // 2))
    div = _F.conv.avg_pool2d_(div, (size, 1), stride=1).squeeze(1)
    div = div.view(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


def group_norm(input: Tensor, num_groups: int, weight=None, bias=None,
               eps: float = 1e-5) -> Tensor:
    if input.ndim < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    # (nn.functional's _verify_batch_size, on the size it makes of the groups, first)
    size = [input.shape[0] * input.shape[1] // num_groups, num_groups, *input.shape[2:]]
    if math.prod(size[2:], start=size[0]) == 1:
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size {size}")
    if num_groups <= 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {num_groups}")
    channels = input.shape[1]
    if channels % num_groups:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got input "
            f"of shape {list(input.shape)} and num_groups={num_groups}")
    _same_dtype_params(input, weight, bias)
    return _F.normalization.group_norm(input, num_groups, weight, bias, float(eps))


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out=None) -> Tensor:
    """``input / max(||input||_p, eps)`` along ``dim``."""
    norm = (input.norm(dim=dim, keepdim=True) if p == 2
            else (input.abs() ** p).sum(dim, keepdim=True) ** (1.0 / p))
    return input / norm.clamp(min=eps).expand_as(input)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps))`` along ``dim`` (PyTorch's form): the
    operands broadcast first (a norm is taken over the broadcast shape), integer ones cast to
    the common float dtype, and each norm is clamped in place under no_grad, so the gradient
    passes as if it were not clamped (PyTorch's ATen code, kept for its gradients)."""
    common = _D.result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is "
                           + _R._TYPE[common.name])
    x1 = x1 if x1.dtype.is_floating_point else x1.to(common)
    x2 = x2 if x2.dtype.is_floating_point else x2.to(common)
    if x1.shape != x2.shape:
        x1, x2 = _F.broadcast_tensors(x1, x2)
    n1 = _R.vector_norm(x1, 2, dim, True).clone()
    n2 = _R.vector_norm(x2, 2, dim, True).clone()
    with _no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pad(input: Tensor, pad, mode: str = "constant", value=None) -> Tensor:
    """PyTorch's ``pad``: ``pad`` holds (before, after) amounts from the last dim back.
    ``constant`` is one op (ConstantPadNdBackward0); ``reflect``, ``replicate`` and
    ``circular`` gather the input's elements by index, one ``resample`` op under PyTorch's
    node (ReflectionPad2DBackward0, ReplicationPad1DBackward0, CopySlices)."""
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           "dimension but got padding length "
                           f"{len(pad)} and input of dimension {input.ndim}")
    if mode == "constant":
        # (its value is a float, as PyTorch's pad takes it: -1 does not fit uint8 there)
        return _F.normalization.constant_pad_nd(input, pad,
                                                0 if value is None else float(value))
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise ValueError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if input.ndim not in (len(pad) // 2 + 1, len(pad) // 2 + 2):
        # (PyTorch has a kernel for each of these combinations, and none for others)
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    k = len(pad) // 2
    if mode in ("replicate", "reflect") and 0 in input.shape[input.ndim - k - 1:]:
        # (PyTorch's replication and reflection pad kernels take an empty batch only)
        raise RuntimeError(
            f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and "
            f"other non-zero dimensions for input, but got: {list(input.shape)}")
    steps = []
    for i in range(len(pad) // 2):
        d = input.ndim - 1 - i
        steps.append((d, "take", _pad_index(mode, input, d, i, *pad[2 * i: 2 * i + 2]), None))
    k = len(pad) // 2
    if mode == "circular":  # (PyTorch copies slices into a new tensor: its node is CopySlices)
        names, keep = ("CopySlices", "CopySlices"), False
    else:
        kind = "Reflection" if mode == "reflect" else "Replication"
        names, keep = (f"{kind}Pad{k}DBackward0", f"{kind}Pad{k}DBackwardBackward0"), True
    return _F.normalization.resample(input, tuple(steps), names, keep)


def _pad_index(mode: str, input: Tensor, d: int, i: int, before: int, after: int):
    """The positions along dim ``d`` of ``input`` (the ``i``-th padded, from the last) that an
    output of ``before + size + after`` elements reads."""
    size = input.shape[d]
    pos = np.arange(-before, size + after)
    if mode == "reflect":
        if before >= size or after >= size:
            raise RuntimeError(
                f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding "
                f"input dimension, but got: padding ({before}, {after}) at dimension {d} of "
                f"input {list(input.shape)}")
        period = 2 * (size - 1)
        pos = np.abs(pos) % period if period else np.zeros_like(pos)
        pos = np.where(pos >= size, period - pos, pos)
    elif mode == "replicate":
        pos = np.clip(pos, 0, size - 1)
    else:
        if before > size or after > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if size + before + after < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
        # a negative amount crops first; the padding then wraps around what is left
        lo, hi = max(-before, 0), size - max(-after, 0)
        pos = lo + np.arange(-max(before, 0), hi - lo + max(after, 0)) % max(hi - lo, 1)
    return pos


# ---------------------------------------------------------------- attention


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask=None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale=None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(query @ key^T * scale + mask) @ value`` (PyTorch's math formulation). A bool
    ``attn_mask`` marks the positions that take part; a float one is added to the scores. Rows
    with every position masked give zeros, as PyTorch's kernels do. Batched inputs are one op
    (ops/attention.py): PyTorch's CPU flash attention where PyTorch runs it."""
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    if (attn_mask is not None and dropout_p == 0.0 and query.ndim == 4
            and not attn_mask.requires_grad):
        # (PyTorch's choice of CPU kernel reads the mask's query dim: its IndexError for a
        # mask under 2-d, which the other cases broadcast)
        attn_mask.size(-2)
    # (the backends nn.attention.sdpa_kernel leaves: PyTorch's errors when none can run)
    path = _sdpa_path(query, key, value, attn_mask, dropout_p, enable_gqa)
    scale = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    if _attention.fuses(query, key, value, attn_mask, enable_gqa):
        if path == "math" and dropout_p == 0.0:
            # (math only: PyTorch's math formulation, not the CPU flash kernel ``attention``
            # would choose)
            out = _attention.attention_math(
                query, key, value, drop=None, attn_mask=attn_mask, is_causal=is_causal,
                scale=scale, groups=query.shape[-3] // key.shape[-3])
            return _M.unsafe_view(out, tuple(query.shape[:-1]) + (value.shape[-1],))
        return _attention.attention(query, key, value, attn_mask, dropout_p, is_causal, scale)
    if enable_gqa:
        key = key.repeat_interleave(query.shape[-3] // key.shape[-3], -3)
        value = value.repeat_interleave(query.shape[-3] // value.shape[-3], -3)
    weights = _attention.attention_weights(query, key, scale, attn_mask, is_causal)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    return _F.matmul(weights, value)


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(mask, mask_name: str, other_type, other_name: str, target_type,
                    check_other: bool = True):
    """A bool mask (True = masked out) as a float one of ``target_type`` holding ``-inf`` where
    masked; a float mask as given."""
    if mask is None:
        return None
    if mask.dtype is not _D.bool_ and not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use "
                      "same type for both instead.", stacklevel=3)
    if mask.dtype is _D.bool_:
        mask = factory.zeros(mask.shape, dtype=target_type,
                             device=mask.device).masked_fill(mask, -math.inf)
    return mask


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads) -> bool:
    """Whether the inputs are batched (3-d query), after PyTorch's checks of their ranks."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError(
                "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                f"found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D "
                f"but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError(
                    "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                    f"but found {attn_mask.dim()}-D tensor instead")
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                     f"{attn_mask.shape}")
        return False
    raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.dim()}-D query tensor")


def _in_projection(query, key, value, in_proj_weight, in_proj_bias, q_proj_weight,
                   k_proj_weight, v_proj_weight):
    """The query, key and value each through its third of the input projection. As PyTorch's
    (``_in_projection_packed``): self-attention (one tensor for all three) is one linear with
    the whole weight, and key and value being one tensor one linear with their two thirds; the
    result split into contiguous thirds."""
    if q_proj_weight is None and key is value:
        E = query.shape[-1]
        if query is key:
            return _packed_parts(linear(query, in_proj_weight, in_proj_bias), 3, E)
        w_q, w_kv = in_proj_weight.split([E, 2 * E])
        b_q, b_kv = (None, None) if in_proj_bias is None else in_proj_bias.split([E, 2 * E])
        return (linear(query, w_q, b_q), *_packed_parts(linear(key, w_kv, b_kv), 2, E))
    b_q = b_k = b_v = None
    if in_proj_bias is not None:
        b_q, b_k, b_v = in_proj_bias.chunk(3)
    if q_proj_weight is None:
        q_proj_weight, k_proj_weight, v_proj_weight = in_proj_weight.chunk(3)
    return (linear(query, q_proj_weight, b_q), linear(key, k_proj_weight, b_k),
            linear(value, v_proj_weight, b_v))


def _packed_parts(proj, n, E):
    """The ``n`` parts of size ``E`` of ``proj``'s last dim, each contiguous (one copy)."""
    proj = proj.unflatten(-1, (n, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
    return tuple(proj[i] for i in range(n))


def multi_head_attention_forward(query, key, value, embed_dim_to_check: int, num_heads: int,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v,
                                 add_zero_attn: bool, dropout_p: float, out_proj_weight,
                                 out_proj_bias, training: bool = True, key_padding_mask=None,
                                 need_weights: bool = True, attn_mask=None,
                                 use_separate_proj_weight: bool = False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights: bool = True,
                                 is_causal: bool = False):
    """PyTorch's multi-head attention on sequence-first ``(L, N, E)`` inputs (or unbatched
    ``(L, E)``); masks hold True (or -inf) where a position must not be attended to."""
    if static_k is not None or static_v is not None:
        raise NotImplementedError("multi_head_attention_forward: static_k/static_v are not "
                                  "supported by numbagrad")
    batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer "
            "module method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    q, k, v = _in_projection(query, key, value, in_proj_weight, in_proj_bias,
                             q_proj_weight if use_separate_proj_weight else None,
                             k_proj_weight, v_proj_weight)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            correct = (tgt_len, key.shape[0])
            if tuple(attn_mask.shape) != correct:
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                                   f"should be {correct}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            correct = (bsz * num_heads, tgt_len, key.shape[0])
            if tuple(attn_mask.shape) != correct:
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but "
                                   f"should be {correct}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
    if bias_k is not None and bias_v is not None:
        k = _F.cat([k, bias_k.repeat(1, bsz, 1)])
        v = _F.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    v = v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if add_zero_attn:
        zeros = factory.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype, device=k.device)
        k = _F.cat([k, zeros], 1)
        v = _F.cat([v, zeros], 1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = (key_padding_mask.view(bsz, 1, 1, src_len)
                            .expand(-1, num_heads, -1, -1).reshape(bsz * num_heads, 1, src_len))
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0
    if need_weights:
        q_scaled = q * math.sqrt(1.0 / float(head_dim))
        if attn_mask is not None:
            weights = _F.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            weights = _F.bmm(q_scaled, k.transpose(-2, -1))
        weights = softmax(weights, dim=-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = _F.bmm(weights, v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, -1)
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, -1)
    return (out if batched else out.squeeze(1)), None


# mode -> the input ndims it takes
_INTERPOLATE_MODES = {"nearest": (3, 4, 5), "nearest-exact": (3, 4, 5), "area": (3, 4, 5),
                      "linear": (3,), "bilinear": (4,), "bicubic": (4,), "trilinear": (5,)}
_TORCH_INTERPOLATE_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "lanczos",
                            "area", "nearest-exact")


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dims of a 3-d (N, C, L), 4-d (N, C, H, W) or 5-d (N, C, D, H, W)
    ``input`` to ``size`` or by ``scale_factor``. ``nearest`` and ``nearest-exact`` gather the
    input's elements by index; ``linear``, ``bilinear``, ``trilinear`` and ``bicubic``
    multiply by fixed interpolation matrices along each dim, as all of them are separable, and
    so do the ``antialias`` resizes (bilinear, bicubic and ``lanczos``, 4-d): one ``resample``
    op under PyTorch's node (UpsampleNearest2DBackward0, UpsampleBilinear2DBackward0, ...);
    ``area`` is ``adaptive_avg_pool``."""
    # (PyTorch's order of checks: align_corners, the sizes, antialias, then the mode)
    if mode in ("nearest", "nearest-exact", "area"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    else:
        align_corners = bool(align_corners)
    spatial = input.ndim - 2
    in_sizes = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        sizes = _per_dim(size, spatial, in_sizes, "output size of", "o")
        out_sizes, scales = [int(s) for s in sizes], [None] * spatial
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    elif scale_factor is not None:
        scales = [float(s) for s in _per_dim(scale_factor, spatial, in_sizes,
                                             "scale_factor of shape", "s")]
        out_sizes = [math.floor(n * s) for n, s in zip(in_sizes, scales)]
        if recompute_scale_factor or mode == "area":
            scales = [None] * spatial
    else:
        raise ValueError("either size or scale_factor should be defined")
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if mode == "lanczos" and input.ndim == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    wanted = _INTERPOLATE_MODES.get(mode, ())
    if input.ndim not in wanted and not (mode == "lanczos" and input.ndim == 4):
        if mode in ("linear", "bilinear", "trilinear") and input.ndim in (3, 4, 5):
            raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                      f"{wanted[0]}D input")
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
            "the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
            f"nearest-exact (got {mode})")
    if mode != "area" and min(in_sizes + out_sizes) <= 0:
        names = ("D", "H", "W")[3 - spatial:]
        sizes = [", ".join(f"{a}: {v}" for a, v in zip(names, vals))
                 for vals in (in_sizes, out_sizes)]
        raise RuntimeError("Input and output sizes should be greater than 0, but got input "
                           f"({sizes[0]}){' and' if spatial == 1 else ''} output ({sizes[1]})")
    if mode == "area":
        return _F.FUNCTIONAL[f"adaptive_avg_pool{spatial}d"](input, out_sizes)
    if input.shape[1] == 0:  # (PyTorch's upsample kernels take a batch of 0, not 0 channels)
        raise RuntimeError(f"Non-empty {input.ndim}D data tensor expected but got a tensor with "
                           f"sizes {list(input.shape)}")
    steps = []
    for k, (n, m, s) in enumerate(zip(in_sizes, out_sizes, scales)):
        d = 2 + k
        if mode in ("nearest", "nearest-exact"):
            steps.append((d, "take", _nearest_index(n, m, s, mode == "nearest-exact",
                                                    spatial == 2), None))
            continue
        if antialias:
            weights = _antialias_weights(n, m, s, align_corners, mode)
        else:
            weights = (_cubic_weights if mode == "bicubic" else _linear_weights)(
                n, m, s, align_corners)
        steps.append((d, "mat", weights, None))
    name = _UPSAMPLE_NODES[mode].format(spatial) + ("Aa" if antialias else "")
    return _F.normalization.resample(input, tuple(steps),
                                     (name + "Backward0", name + "BackwardBackward0"))


# PyTorch's upsample ops, by mode (their nodes: UpsampleNearest2DBackward0, ...)
_UPSAMPLE_NODES = {"nearest": "UpsampleNearest{}D", "nearest-exact": "UpsampleNearestExact{}D",
                   "linear": "UpsampleLinear{}D", "bilinear": "UpsampleBilinear{}D",
                   "bicubic": "UpsampleBicubic{}D", "trilinear": "UpsampleTrilinear{}D",
                   "lanczos": "UpsampleLanczos{}D"}


def _deprecated_upsample(name: str) -> None:
    warnings.warn(f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=3)


def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """``interpolate`` under its deprecated name (with PyTorch's warning)."""
    _deprecated_upsample("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """``interpolate(..., mode="nearest")`` under its deprecated name."""
    _deprecated_upsample("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """``interpolate(..., mode="bilinear", align_corners=True)`` under its deprecated name."""
    _deprecated_upsample("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def _per_dim(value, spatial: int, in_sizes: list, what: str, letter: str) -> list:
    """``value`` (one number or one per spatial dim) as a list of ``spatial`` numbers."""
    if not isinstance(value, (list, tuple)):
        return [value] * spatial
    if len(value) != spatial:
        name = what.split()[0] if letter == "s" else "output size"
        raise ValueError(
            f"Input and {what.split()[0]} must have the same number of spatial dimensions, but "
            f"got input with spatial dimensions of {in_sizes} and {what} {tuple(value)}. "
            "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
            f"{name} in ({letter}1, {letter}2, ...,{letter}K) format.")
    return list(value)


def _nearest_index(n: int, m: int, scale, exact: bool, shortcut: bool) -> np.ndarray:
    """The input position each of ``m`` outputs reads in PyTorch's ``nearest`` (its float32
    arithmetic, so the same rounding), or ``nearest-exact`` (output centres: ``dst + 0.5``).
    With ``shortcut`` (PyTorch's 2-d nearest kernel), ``m == n`` and ``m == 2 * n`` read
    ``dst`` and ``dst // 2`` whatever the scale given; the other kernels use the scale."""
    if shortcut and not exact and m == n:
        return np.arange(m)
    if shortcut and not exact and m == 2 * n:
        return np.arange(m) >> 1
    step = np.float32(1.0 / scale if scale is not None and scale > 0 else n / m)
    dst = np.arange(m, dtype=np.float32)
    pos = (np.floor(((dst + 0.5) * np.float64(step)).astype(np.float32)) if exact
           else np.floor(dst * step)).astype(np.int64)
    return np.minimum(pos, n - 1)


def _linear_weights(n: int, m: int, scale, align_corners: bool) -> np.ndarray:
    """The (m, n) matrix of linear interpolation from ``n`` points to ``m`` (PyTorch's source
    positions: ``(dst + 0.5) * n / m - 0.5`` clamped at 0, or ``dst * (n - 1) / (m - 1)``
    with ``align_corners``)."""
    dst = np.arange(m, dtype=np.float64)
    if align_corners:
        src = dst * ((n - 1) / (m - 1) if m > 1 else 0.0)
    else:
        step = 1.0 / scale if scale is not None and scale > 0 else n / m
        src = np.maximum(step * (dst + 0.5) - 0.5, 0.0)
    i0 = np.minimum(np.floor(src).astype(np.int64), n - 1)
    i1 = np.where(i0 < n - 1, i0 + 1, i0)
    frac = src - i0
    w = np.zeros((m, n))
    np.add.at(w, (np.arange(m), i0), 1.0 - frac)
    np.add.at(w, (np.arange(m), i1), frac)
    return w


def _cubic_weights(n: int, m: int, scale, align_corners: bool) -> np.ndarray:
    """The (m, n) matrix of PyTorch's bicubic interpolation along one dim: Keys' cubic
    convolution (A = -0.75) over the 4 input points around each source position, which is
    not clamped at 0; points past the edges read the edge."""
    dst = np.arange(m, dtype=np.float64)
    if align_corners:
        src = dst * ((n - 1) / (m - 1) if m > 1 else 0.0)
    else:
        step = 1.0 / scale if scale is not None and scale > 0 else n / m
        src = step * (dst + 0.5) - 0.5
    i0 = np.minimum(np.floor(src).astype(np.int64), n - 1)
    t = np.clip(src - i0, 0.0, 1.0)
    A = -0.75

    def near(x):  # |x| <= 1
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A

    w = np.zeros((m, n))
    for j, c in enumerate((far(t + 1), near(t), near(1 - t), far(2 - t))):
        np.add.at(w, (np.arange(m), np.clip(i0 - 1 + j, 0, n - 1)), c)
    return w


def _aa_linear(x: np.ndarray) -> np.ndarray:
    return np.maximum(1.0 - np.abs(x), 0.0)


def _aa_cubic(x: np.ndarray) -> np.ndarray:
    # Keys' cubic with A = -0.5 (PIL's), not the -0.75 of the plain bicubic mode
    x, A = np.abs(x), -0.5
    near = ((A + 2) * x - (A + 3)) * x * x + 1
    far = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
    return np.where(x < 1.0, near, np.where(x < 2.0, far, 0.0))


def _aa_lanczos(x: np.ndarray) -> np.ndarray:
    return np.where(np.abs(x) < 3.0, np.sinc(x) * np.sinc(x / 3.0), 0.0)


# mode -> (filter, taps): the filter's support is taps / 2 input pixels at scale 1
_AA_FILTERS = {"bilinear": (_aa_linear, 2), "bicubic": (_aa_cubic, 4),
               "lanczos": (_aa_lanczos, 6)}


def _antialias_weights(n: int, m: int, scale, align_corners: bool, mode: str) -> np.ndarray:
    """The (m, n) matrix of PyTorch's antialiased resize along one dim (PIL's algorithm):
    when shrinking by ``step`` > 1 the filter is stretched ``step`` times, so each output
    averages every input pixel under it; each row's taps are those whose centres lie within
    the support around the output's centre, and they are normalised to sum to 1 (so the
    edges are not clamped but renormalised). A dim whose size does not change is copied,
    whatever the scale factor (PyTorch's forward skips it)."""
    if m == n:
        return np.eye(n)
    fn, taps = _AA_FILTERS[mode]
    if align_corners:
        step = (n - 1) / (m - 1) if m > 1 else 0.0
    else:
        step = 1.0 / scale if scale is not None and scale > 0 else n / m
    support = taps * 0.5 * step if step >= 1.0 else taps * 0.5
    stretch = 1.0 / step if step >= 1.0 else 1.0
    max_taps = int(math.ceil(support)) * 2 + 1
    w = np.zeros((m, n))
    for i in range(m):
        center = step * (i + 0.5)
        # (C++ casts truncate toward zero)
        lo = max(int(center - support + 0.5), 0)
        size = min(max(min(int(center + support + 0.5), n) - lo, 0), max_taps)
        taps_w = fn((np.arange(lo, lo + size) - center + 0.5) * stretch)
        total = taps_w.sum()
        w[i, lo:lo + size] = taps_w / total if total != 0.0 else taps_w
    return w


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool,
                     channel_dim: int) -> Tensor:
    """Dropout of whole channels: one draw per (sample, channel), dims after ``channel_dim``
    share it."""
    _check_p(p)
    return dropout_impl(input, p, training, inplace, channel_dim)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of a (N, C, L) or (C, L) input with probability ``p``."""
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs).")
    if input.ndim == 3:
        return _feature_dropout(input, p, training, inplace, 1)
    # (as PyTorch: an unbatched input gets a batch of one, so the result is a view, its node
    # SqueezeBackward1, even in eval mode)
    _check_p(p)
    batched = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    out = dropout_impl(batched, p, training, inplace, 1)
    return out.squeeze_(0) if inplace else out.squeeze(0)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of a (N, C, H, W) input with probability ``p`` (a 3-d input is
    read as (N, C, L), with PyTorch's warning)."""
    if input.ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, "
            "and an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if input.ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return _feature_dropout(input, p, training, inplace, 1)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of a (N, C, D, H, W) or (C, D, H, W) input with probability ``p``
    (other ranks, with PyTorch's warning, have their dim 0 as the channels)."""
    _check_p(p)
    if input.ndim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead. Note that dropout3d exists to provide "
            "channel-wise dropout on inputs with 3 spatial dimensions, a channel dimension, "
            "and an optional batch dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    if input.ndim == 5:
        return dropout_impl(input, p, training, inplace, 1)
    # as PyTorch: any other rank gets a batch of one (so a 0-d input is refused as 1-d, and
    # the result is a view even in eval mode)
    batched = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    out = dropout_impl(batched, p, training, inplace, 1)
    return out.squeeze_(0) if inplace else out.squeeze(0)


# ---------------------------------------------------------------- pooling, composed


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False):
    """``max_pool1d(..., return_indices=True)``: (values, indices), whatever
    ``return_indices`` says (as PyTorch)."""
    return _F.FUNCTIONAL["max_pool1d"](input, kernel_size, stride, padding, dilation,
                                       ceil_mode, True)


def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False):
    """``max_pool2d(..., return_indices=True)``: (values, indices)."""
    return _F.FUNCTIONAL["max_pool2d"](input, kernel_size, stride, padding, dilation,
                                       ceil_mode, True)


def max_pool3d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False):
    """``max_pool3d(..., return_indices=True)``: (values, indices)."""
    return _F.FUNCTIONAL["max_pool3d"](input, kernel_size, stride, padding, dilation,
                                       ceil_mode, True)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """``adaptive_max_pool1d(..., return_indices=True)``: (values, indices)."""
    return _F.FUNCTIONAL["adaptive_max_pool1d"](input, output_size, True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """``adaptive_max_pool2d(..., return_indices=True)``: (values, indices)."""
    return _F.FUNCTIONAL["adaptive_max_pool2d"](input, output_size, True)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """``adaptive_max_pool3d(..., return_indices=True)``: (values, indices)."""
    return _F.FUNCTIONAL["adaptive_max_pool3d"](input, output_size, True)


def _lp_pool(n: int, input: Tensor, norm_type, kernel_size, stride, ceil_mode: bool,
             window) -> Tensor:
    """PyTorch's power-average pooling: ``(sum over the window of x ** p) ** (1 / p)``, the
    sum being the average pool times ``window`` (so a ``ceil_mode`` window cut short at the
    edge is scaled as a whole one); p = +-inf is the max pool of ``|x|`` (of ``-|x|``,
    negated)."""
    max_pool = _F.FUNCTIONAL[f"max_pool{n}d"]
    if norm_type == math.inf:
        return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = _F.FUNCTIONAL[f"avg_pool{n}d"](input.pow(norm_type), kernel_size, stride, 0,
                                         ceil_mode)
    # (sign * relu(abs) is the mean itself; PyTorch's form, kept for its gradient, zero where
    # the mean is)
    return (_F.sign(out) * relu(_F.abs(out))).mul(window).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """1-d power-average pooling of (N, C, L) or (C, L)."""
    # (the kernel size as given: PyTorch multiplies by it, so a sequence is refused by mul)
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode, kernel_size)


def lp_pool2d(input: Tensor, norm_type, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """2-d power-average pooling of (N, C, H, W) or (C, H, W)."""
    kh, kw = _ntuple(kernel_size, 2)
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode, kh * kw)


def lp_pool3d(input: Tensor, norm_type, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """3-d power-average pooling of (N, C, D, H, W) or (C, D, H, W)."""
    kd, kh, kw = _ntuple(kernel_size, 3)
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode, kd * kh * kw)


def _ntuple(value, n: int) -> tuple:
    """An iterable as a tuple, anything else repeated ``n`` times (PyTorch's ``_pair``...)."""
    return tuple(value) if isinstance(value, Iterable) else (value,) * n


def _unpool_output_size(input: Tensor, kernel: tuple, stride: tuple, padding: tuple,
                        output_size) -> list:
    """A max unpooling's spatial output size: ``output_size`` (its spatial part, checked to
    be within a stride of the default) or by default the size max pooling with these
    arguments maps onto the input's."""
    n = len(kernel)
    default = [(input.shape[d - n] - 1) * stride[d] + kernel[d] - 2 * padding[d]
               for d in range(n)]
    if output_size is None:
        size = default
    else:
        if len(output_size) == n + 2:
            output_size = output_size[2:]
        if len(output_size) != n:
            raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} "
                             f"elements, but it has a length of '{len(output_size)}'")
        for d in range(n):
            low, high = default[d] - stride[d], default[d] + stride[d]
            if not low < output_size[d] < high:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between '
                                 f"{low} and {high})")
        size = list(output_size)
    for d in range(n):
        if size[d] < 0:
            raise ValueError("max_unpooling: output_size must contain non-negative spatial "
                             f"dimensions, but got output_size[{d}]={size[d]}")
    return size


def _max_unpool(n: int, input: Tensor, indices: Tensor, output_size: list,
                stride: tuple = (), padding: tuple = ()) -> Tensor:
    """PyTorch's max_unpool2d/max_unpool3d op, checked in its words and order: each value of
    ``input`` (N, C, *spatial) or (C, *spatial) put at its index into the flattened plane (or
    volume) of size ``output_size``, zeros elsewhere. A scatter, so the input's gradient is
    the gather of the output's at ``indices``. ``stride`` and ``padding`` (3-d only) are
    checked, not used."""
    dims = ("two elements (height, width)", "three elements (depth, height, width)")[n - 2]
    if len(output_size) != n:
        raise RuntimeError(f"There should be exactly {dims} in output_size, but got "
                           f"{len(output_size)} elements.")
    if n == 3:
        for what, v in (("stride", stride), ("padding", padding)):
            if len(v) != 3:
                raise RuntimeError(f"There should be exactly {dims} in {what}, but got: "
                                   f"{len(v)} elements.")
    if indices.dtype is not _D.int64:
        raise RuntimeError("elements in indices should be type int64" + (
            f" but got: {_D.SCALAR_TYPE[indices.dtype.name]}" if n == 2 else ""))
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"Input to max_unpooling{n}d should be a {n + 1}d or {n + 2}d "
                           f"Tensor, but got a tensor with {input.ndim} dimensions.")
    if tuple(input.shape) != tuple(indices.shape):
        raise RuntimeError(
            "Expected shape of indices to be same as that of the input tensor "
            f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}")
    for d in range(input.ndim - n - 1, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(
                f"max_unpooling{n}d_forward_out_cpu(): Expected input to have non-zero size for "
                f"non-batch dimensions, but got {list(input.shape)} with dimension {d} being "
                "empty.")
    if n == 3 and min(stride) <= 0:
        raise RuntimeError(f"strides should be greater than zero, but got stride: {list(stride)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"max_unpool{n}d" not implemented for '
                                  f"'{_D.SCALAR_TYPE[input.dtype.name]}'")
    volume = math.prod(output_size)
    flat = indices._host().reshape(-1)
    bad = (flat < 0) | (flat >= volume)
    if bad.any():  # (PyTorch's kernel, run on one thread, reports the last one)
        raise RuntimeError(f"Found an invalid max index: {flat[bad][-1]} (output volumes are of "
                           f"size {'x'.join(map(str, output_size))})")
    lead, plane = tuple(input.shape[:-n]), math.prod(input.shape[-n:])
    out = input.new_zeros(*lead, volume).scatter(-1, indices.reshape(*lead, plane),
                                                 input.reshape(*lead, plane))
    return out.reshape(*lead, *output_size)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """The inverse of ``max_pool1d`` given its indices, on (N, C, L) or (C, L): the 2-d one
    over a width of 1, as PyTorch (whose errors then speak of 2-d)."""
    kernel = _ntuple(kernel_size, 1)
    stride = kernel if stride is None else _ntuple(stride, 1)
    size = _unpool_output_size(input, kernel, stride, _ntuple(padding, 1), output_size)
    return _max_unpool(2, input.unsqueeze(-1), indices.unsqueeze(-1), [*size, 1]).squeeze(-1)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """The inverse of ``max_pool2d`` given its indices, on (N, C, H, W) or (C, H, W): zeros
    but at the maxima's places; ``output_size`` picks among the sizes that pool to the
    input's."""
    kernel = _ntuple(kernel_size, 2)
    stride = kernel if stride is None else _ntuple(stride, 2)
    size = _unpool_output_size(input, kernel, stride, _ntuple(padding, 2), output_size)
    return _max_unpool(2, input, indices, size)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """The inverse of ``max_pool3d`` given its indices, on (N, C, D, H, W) or (C, D, H, W)."""
    kernel = _ntuple(kernel_size, 3)
    stride = kernel if stride is None else _ntuple(stride, 3)
    padding = _ntuple(padding, 3)
    size = _unpool_output_size(input, kernel, stride, padding, output_size)
    return _max_unpool(3, input, indices, size, stride, padding)
