"""Adadelta (``torch.optim.Adadelta``)."""

from __future__ import annotations

from ..backend import kernels_optim as K
from .optimizer import Optimizer, check_implementation_flags, new_step, next_step, run_update


class Adadelta(Optimizer):
    """Adadelta (Zeiler), with L2 weight decay; PyTorch's update order, defaults and state
    (``step``, ``square_avg``, ``acc_delta``)."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        check_implementation_flags(foreach, None, differentiable, capturable)
        super().__init__(params, defaults)

    def _update(self, p, grad, group) -> None:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = new_step()
            state["square_avg"] = p.new_zeros(p.shape)
            state["acc_delta"] = p.new_zeros(p.shape)
        next_step(state)
        rho = group["rho"]
        run_update(K.adadelta_row, [p, state["square_avg"], state["acc_delta"]], [grad], (
            group["maximize"], group["weight_decay"], rho, 1 - rho, group["eps"],
            -group["lr"]), (1, 2, 2))
