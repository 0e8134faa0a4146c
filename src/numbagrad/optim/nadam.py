"""NAdam (``torch.optim.NAdam``): Adam with Nesterov momentum."""

from __future__ import annotations

from ..backend import kernels_optim as K
from .optimizer import (
    Optimizer, check_adam_arguments, check_implementation_flags, new_step, next_step,
    run_update, weight_decay_numbers,
)


class NAdam(Optimizer):
    """NAdam (Dozat), with L2 or decoupled weight decay and the momentum schedule
    ``momentum_decay``; PyTorch's update order, defaults and state (``step``, ``mu_product``,
    ``exp_avg``, ``exp_avg_sq``)."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False) -> None:
        check_adam_arguments(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        check_implementation_flags(foreach, None, differentiable, capturable)
        super().__init__(params, defaults)

    def _update(self, p, grad, group) -> None:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = new_step()
            # (a tensor of the step's dtype, as PyTorch's: its float32 rounding is the update's)
            state["mu_product"] = new_step(1.0)
            state["exp_avg"] = p.new_zeros(p.shape)
            state["exp_avg_sq"] = p.new_zeros(p.shape)
        step = next_step(state)
        lr, (beta1, beta2) = group["lr"], group["betas"]
        momentum_decay = group["momentum_decay"]
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product = state["mu_product"].mul_(mu).item()
        decay, weight_decay = weight_decay_numbers(group)
        weight = 1 - beta1
        run_update(K.nadam_row, [p, state["exp_avg"], state["exp_avg_sq"]], [grad], (
            group["maximize"], decay, weight_decay, abs(weight) < 0.5, weight, 1 - weight,
            1 - beta2, beta2, 1 - beta2**step, group["eps"], -lr * (1.0 - mu) / (1.0 - mu_product),
            (-lr * mu_next) / (1.0 - mu_product * mu_next)), (2 + (decay != 1), 1, 2))
