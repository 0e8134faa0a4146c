"""Losses with nodes of their own (``MseLossBackward0``, ``NllLossBackward0``), as in PyTorch.

The forwards run the registry's ops with grad mode off; the backwards are Tensor expressions, so
they are differentiable (``create_graph``)."""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from . import elementwise as E
from . import reduce as R
from .registry import composite, sum_to

REDUCTIONS = ("none", "mean", "sum")


def _reduce(loss, reduction):
    if reduction == "mean":
        return R.mean(loss)
    if reduction == "sum":
        return R.sum(loss)
    return loss


@composite("mse_loss", node="MseLossBackward0")
def mse_loss(ctx, input, target, reduction="mean"):
    ctx.save(x=input, target=target)
    ctx.reduction = reduction
    with no_grad():
        d = E.sub(input, target)
        return _reduce(E.mul(d, d), reduction)._data


@mse_loss.defvjp
def mse_loss_vjp(ctx, grad):
    x, t = ctx["x"], ctx["target"]
    d = E.sub(x, t)
    scale = 2.0 / max(d.numel(), 1) if ctx.reduction == "mean" else 2.0
    g = E.mul(d, E.mul(grad, scale))
    return sum_to(g, ctx.input_shapes[0]), sum_to(E.neg(g), ctx.input_shapes[1])


@composite("nll_loss", node="NllLossBackward0")
def nll_loss(ctx, input, target, reduction="mean"):
    """``-input[i, target[i]]``, reduced; ``target`` holds class indices (checked by the caller)."""
    ctx.target = t = target._host()
    ctx.save(x=input)
    ctx.reduction = reduction
    picked = input._data[np.arange(input.shape[0]), t]  # (either backend's array)
    with no_grad():
        return _reduce(E.neg(Tensor._make(picked)), reduction)._data


@nll_loss.defvjp
def nll_loss_vjp(ctx, grad):
    x = ctx["x"]
    n, c = ctx.input_shapes[0]
    # the one-hot positions of the targets, a constant: the gradient is -grad there
    onehot = np.zeros((n, c), np.bool_)
    onehot[np.arange(n), ctx.target] = True
    mask = Tensor._make(onehot).to(x.device)
    if ctx.reduction == "none":
        grad = grad.reshape(n, 1)
    elif ctx.reduction == "mean" and n:
        grad = E.mul(grad, 1.0 / n)
    # (a select, not -mask * grad: an infinite gradient must not make 0 * inf elsewhere)
    return E.where(mask, E.neg(grad), 0), None
