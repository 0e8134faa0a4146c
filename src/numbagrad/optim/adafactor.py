"""Adafactor (``torch.optim.Adafactor``): Adam-like steps whose second moment of a matrix is
kept factored, as its row and column means (Shazeer & Stern, 2018)."""

from __future__ import annotations

import math

from .. import dtypes as D
from ..tensor import Tensor
from .optimizer import Optimizer, new_step, next_step


class Adafactor(Optimizer):
    """Adafactor with PyTorch's variant: relative step sizes bounded by ``lr``, the decay of
    the second moment ``1 - t ** beta2_decay``, update clipping at ``d`` and decoupled weight
    decay. State: ``step`` and, for a parameter of two or more dimensions, ``row_var`` and
    ``col_var`` (means over the last and the second-to-last dimension), else ``variance``."""

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False) -> None:
        if isinstance(lr, Tensor):
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
            lr = lr.item()  # (kept as a number: the step reads it as one)
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                        weight_decay=weight_decay, foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    def _update(self, p, grad, group) -> None:
        state = self.state[p]
        factored = grad.dim() > 1
        if len(state) == 0:
            state["step"] = new_step()
            if factored:
                state["row_var"] = grad.new_zeros(grad.shape[:-1]).unsqueeze(-1)
                state["col_var"] = grad.new_zeros(grad.shape[:-2] + grad.shape[-1:]).unsqueeze(-2)
            else:
                state["variance"] = grad.new_zeros(grad.shape)
        step = next_step(state)
        lr, weight_decay = group["lr"], group["weight_decay"]
        eps1, eps2 = group["eps"]
        if eps1 is None:
            eps1 = D.finfo(p.dtype).eps
        if group["maximize"]:
            grad = -grad
        # the second moment forgets more slowly as the steps go on
        beta2 = 1 - step ** group["beta2_decay"]
        # the step size is relative to the parameter's RMS (at least eps2), capped by lr
        rho = min(lr, 1 / math.sqrt(step))
        alpha = max(eps2, p.norm(2).item() / math.sqrt(p.numel())) * rho
        if weight_decay != 0:
            p.mul_(1 - lr * weight_decay)
        square = grad * grad
        if factored:
            row_var, col_var = state["row_var"], state["col_var"]
            row_var.lerp_(square.mean(dim=-1, keepdim=True), 1 - beta2)
            col_var.lerp_(square.mean(dim=-2, keepdim=True), 1 - beta2)
            # the rank-one estimate of the second moment: outer(row, col) / mean(row)
            variance = row_var @ col_var
            variance.div_(row_var.mean(dim=-2, keepdim=True))
        else:
            state["variance"].lerp_(square, 1 - beta2)
            variance = state["variance"].clone()
        # max(sqrt(v), eps1) as one clamp of v
        update = variance.clamp_(min=eps1 * eps1).rsqrt_() * grad
        # clip the update so that its RMS is at most d
        denom = max(1.0, update.norm(2).item() / (math.sqrt(update.numel()) * group["d"]))
        p.add_(update, alpha=-alpha / denom)
