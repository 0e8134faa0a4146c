"""PyTorch-style functional layers and losses built from registry ops."""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as _D
from .. import factory
from .. import ops as _F
from ..ops import elementwise as _E
from ..autograd.grad_mode import no_grad as _no_grad
from ..ops.embedding import embedding as _embedding
from ..tensor import Tensor

# the ops declared with a "functional" variant (softplus, ...); the rest is written out below
globals().update(_F.FUNCTIONAL)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return input.relu_() if inplace else _F.relu(input)


def sigmoid(input: Tensor) -> Tensor:
    return _F.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    return _F.tanh(input)


def _activation(op, input, params, inplace):
    """``op(input, *params)``, written into ``input`` with ``inplace``."""
    return _F.inplace(input, op, *params) if inplace else op(input, *params)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    return _activation(_E.leaky_relu, input, (negative_slope,), inplace)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _activation(_E.elu, input, (alpha,), inplace)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    if approximate == "none":
        return _E.gelu(input)
    if approximate == "tanh":
        return _E.gelu_tanh(input)
    raise RuntimeError("approximate argument must be either none or tanh.")


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    return _activation(_E.silu, input, (), inplace)


def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)`` (only
    when ``training``)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not training or input.numel() == 0:
        return input  # (the input itself, as PyTorch)
    if p == 1:
        mask = factory.zeros((), dtype=input.dtype, device=input.device)
    else:
        keep = factory._rng(None).random(input.shape) >= p
        mask = factory.tensor(keep / (1 - p), dtype=input.dtype, device=input.device)
    return input.mul_(mask) if inplace else input * mask


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


def _embedding_renorm_(weight, input, max_norm, norm_type):
    """Scale the rows of ``weight`` that ``input`` picks down to norm ``max_norm`` (in place,
    unrecorded, as PyTorch's embedding_renorm_)."""
    rows = np.unique(input._host())
    with _no_grad():
        picked = weight[rows]
        norms = picked.abs().pow(norm_type).sum(1, keepdim=True).pow(1.0 / norm_type)
        scale = _F.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight[rows] = picked * scale


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """Class indices as int64 one-hot vectors along a new last dimension."""
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


def softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    return _F.softmax(input if dtype is None else input.to(dtype), dim)


def log_softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
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


def _check_reduction(reduction: str) -> None:
    if reduction not in _F.loss.REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    if input.shape != target.shape:
        import warnings

        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            UserWarning,
            stacklevel=2,
        )
    _check_reduction(reduction)
    return _F.loss.mse_loss(input, target, reduction)


def nll_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class indices ``target`` under log-probabilities ``input``."""
    if input.ndim != 2 or target.ndim != 1:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0] if input.ndim else 1}) to match target "
            f"batch_size ({target.shape[0] if target.ndim else 1})."
            if input.ndim == 2
            else "nll_loss: expected input of shape (N, C) and target of shape (N,)"
        )
    if input.shape[0] != target.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
            f"({target.shape[0]})."
        )
    if target.dtype.is_floating_point:
        raise RuntimeError(
            f"expected scalar type Long but found {_F.L._NAMES[target.dtype.name].capitalize()}"
        )
    n_classes = input.shape[1]
    t = target._host()
    if t.size and (t.min() < 0 or t.max() >= n_classes):
        bad = int(t[(t < 0) | (t >= n_classes)][0])
        raise IndexError(f"Target {bad} is out of bounds.")
    _check_reduction(reduction)
    return _F.loss.nll_loss(input, target, reduction)


def cross_entropy(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """``nll_loss(log_softmax(input, 1), target)`` for class-index targets."""
    return nll_loss(log_softmax(input, 1), target, reduction=reduction)
