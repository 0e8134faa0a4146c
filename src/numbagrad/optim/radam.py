"""RAdam (``torch.optim.RAdam``): Adam with the variance of its adaptive rate rectified."""

from __future__ import annotations

from ..backend import kernels_optim as K
from .optimizer import (
    Optimizer, check_adam_arguments, check_implementation_flags, new_step, next_step,
    run_update, weight_decay_numbers,
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
        step = next_step(state)
        lr, (beta1, beta2) = group["lr"], group["betas"]
        bias_correction2 = 1 - beta2**step
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        rectified = rho_t > 5.0
        rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5 if rectified else 1.0
        decay, weight_decay = weight_decay_numbers(group)
        weight = 1 - beta1
        run_update(K.radam_row, [p, state["exp_avg"], state["exp_avg_sq"]], [grad], (
            group["maximize"], decay, weight_decay, abs(weight) < 0.5, weight, 1 - weight,
            1 - beta2, beta2, 1 - beta1**step, lr, rectified, bias_correction2**0.5,
            group["eps"], rect), (1 + (decay != 1), 1, 2))
