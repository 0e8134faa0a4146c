"""Adam (``torch.optim.Adam``), with L2 or decoupled weight decay and AMSGrad."""

from __future__ import annotations

from ..backend import kernels_optim as K
from .optimizer import (
    Optimizer, check_adam_arguments, check_implementation_flags, new_step, next_step, run_update,
    weight_decay_numbers,
)


class Adam(Optimizer):
    """Adam (Kingma & Ba); ``decoupled_weight_decay=True`` is AdamW. PyTorch's update order,
    defaults and state (``step``, ``exp_avg``, ``exp_avg_sq``, ``max_exp_avg_sq``)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False) -> None:
        check_adam_arguments(lr, eps, betas, weight_decay)
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
        step = next_step(state)
        lr, (beta1, beta2) = group["lr"], group["betas"]
        decay, weight_decay = weight_decay_numbers(group)
        amsgrad = group["amsgrad"]
        weight = 1 - beta1
        written = [p, state["exp_avg"], state["exp_avg_sq"]]
        # (without AMSGrad the kernel's maximum is never read: exp_avg_sq stands in)
        written.append(state["max_exp_avg_sq"] if amsgrad else written[2])
        run_update(K.adam_row, written, [grad], (
            amsgrad, group["maximize"], decay, weight_decay, abs(weight) < 0.5, weight,
            1 - weight, 1 - beta2, beta2, (1 - beta2**step) ** 0.5, group["eps"],
            -(lr / (1 - beta1**step))), (1 + (decay != 1), 1, 2, 1 if amsgrad else 0))
