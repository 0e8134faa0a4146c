"""PyTorch-style functional layers and losses built from registry ops."""

from __future__ import annotations

import math

from .. import ops as _F
from ..tensor import Tensor

# the ops declared with a "functional" variant (softplus, ...); the rest is written out below
globals().update(_F.FUNCTIONAL)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return input.relu_() if inplace else _F.relu(input)


def sigmoid(input: Tensor) -> Tensor:
    return _F.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    return _F.tanh(input)


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
