"""Adamax (``torch.optim.Adamax``): Adam with the infinity norm."""

from __future__ import annotations

from .optimizer import (
    Optimizer, addcdiv_, check_adam_arguments, check_implementation_flags, lerp_, new_step,
    next_step,
)


class Adamax(Optimizer):
    """Adamax (Kingma & Ba), with L2 weight decay; PyTorch's update order, defaults and state
    (``step``, ``exp_avg``, ``exp_inf``)."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False,
                 capturable=False) -> None:
        check_adam_arguments(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        check_implementation_flags(foreach, None, differentiable, capturable)
        super().__init__(params, defaults)

    def _update(self, p, grad, group) -> None:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = new_step()
            state["exp_avg"] = p.new_zeros(p.shape)
            state["exp_inf"] = p.new_zeros(p.shape)
        if group["maximize"]:
            grad = -grad
        step = next_step(state)
        (beta1, beta2), weight_decay = group["betas"], group["weight_decay"]
        if weight_decay != 0:
            grad = grad + p * weight_decay
        exp_avg = lerp_(state["exp_avg"], grad, 1 - beta1)
        exp_inf = state["exp_inf"]
        exp_inf.copy_(exp_inf.mul_(beta2).maximum(grad.abs().add_(group["eps"])))
        addcdiv_(p, exp_avg, exp_inf, -(group["lr"] / (1 - beta1**step)))
