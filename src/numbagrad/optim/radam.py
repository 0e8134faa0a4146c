"""RAdam (``torch.optim.RAdam``): Adam with the variance of its adaptive rate rectified."""

from __future__ import annotations

from .optimizer import (
    Optimizer, addcmul_, check_adam_arguments, check_implementation_flags,
    decayed_gradient, lerp_, new_step, next_step,
)


class RAdam(Optimizer):
    """RAdam (Liu et al.), with L2 or decoupled weight decay; PyTorch's update order, defaults
    and state (``step``, ``exp_avg``, ``exp_avg_sq``). While the rectification term is not
    defined (its ``rho_t <= 5``) the step is SGD with momentum, as in PyTorch."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False) -> None:
        check_adam_arguments(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        check_implementation_flags(foreach, None, differentiable, capturable)
        super().__init__(params, defaults)

    def _update(self, p, grad, group) -> None:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = new_step()
            state["exp_avg"] = p.new_zeros(p.shape)
            state["exp_avg_sq"] = p.new_zeros(p.shape)
        grad = decayed_gradient(p, grad, group)
        step = next_step(state)
        lr, (beta1, beta2) = group["lr"], group["betas"]
        exp_avg = lerp_(state["exp_avg"], grad, 1 - beta1)
        exp_avg_sq = addcmul_(state["exp_avg_sq"].mul_(beta2), grad, grad, 1 - beta2)
        bias_correction2 = 1 - beta2**step
        bias_corrected_exp_avg = exp_avg / (1 - beta1**step)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive_lr = (bias_correction2**0.5) / exp_avg_sq.sqrt().add_(group["eps"])
            p.sub_(bias_corrected_exp_avg * lr * adaptive_lr * rect)
        else:
            p.sub_(bias_corrected_exp_avg * lr)
