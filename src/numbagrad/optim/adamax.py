"""Adamax (``torch.optim.Adamax``): Adam with the infinity norm."""

from __future__ import annotations

from ..backend import kernels_optim as K
from .optimizer import (
    Optimizer, check_adam_arguments, check_implementation_flags, new_step, next_step, run_update,
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
        step = next_step(state)
        beta1, beta2 = group["betas"]
        weight = 1 - beta1
        run_update(K.adamax_row, [p, state["exp_avg"], state["exp_inf"]], [grad], (
            group["maximize"], group["weight_decay"], abs(weight) < 0.5, weight, 1 - weight,
            beta2, group["eps"], -(group["lr"] / (1 - beta1**step))), (1, 1, 2))
