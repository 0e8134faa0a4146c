"""Adam (``torch.optim.Adam``), with L2 or decoupled weight decay and AMSGrad."""

from __future__ import annotations

from ..ops import maximum
from .optimizer import (
    Optimizer, addcdiv_, addcmul_, check_implementation_flags, lerp_, new_step, next_step,
)


class Adam(Optimizer):
    """Adam (Kingma & Ba); ``decoupled_weight_decay=True`` is AdamW. PyTorch's update order,
    defaults and state (``step``, ``exp_avg``, ``exp_avg_sq``, ``max_exp_avg_sq``)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not (isinstance(betas[0], float) and isinstance(betas[1], float)):
            raise ValueError("betas must be either both floats or both Tensors")
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        check_implementation_flags(foreach, fused, differentiable, capturable)
        super().__init__(params, defaults)

    def _update(self, p, grad, group) -> None:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = new_step()
            state["exp_avg"] = p.new_zeros(p.shape)
            state["exp_avg_sq"] = p.new_zeros(p.shape)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = p.new_zeros(p.shape)
        if group["maximize"]:
            grad = -grad
        step = next_step(state)
        lr, (beta1, beta2) = group["lr"], group["betas"]
        weight_decay = group["weight_decay"]
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1 - lr * weight_decay)
            else:
                grad = grad + p * weight_decay
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        lerp_(exp_avg, grad, 1 - beta1)
        addcmul_(exp_avg_sq.mul_(beta2), grad, grad, 1 - beta2)
        step_size = lr / (1 - beta1**step)
        bias_correction2_sqrt = (1 - beta2**step) ** 0.5
        if group["amsgrad"]:
            max_exp_avg_sq = state["max_exp_avg_sq"]
            max_exp_avg_sq.copy_(maximum(max_exp_avg_sq, exp_avg_sq))
            exp_avg_sq = max_exp_avg_sq
        # out of place: on a temporary, an in-place op costs more and computes the same
        denom = exp_avg_sq.sqrt() / bias_correction2_sqrt + group["eps"]
        addcdiv_(p, exp_avg, denom, -step_size)
