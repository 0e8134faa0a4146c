"""Adagrad (``torch.optim.Adagrad``)."""

from __future__ import annotations

from ..backend import kernels_optim as K
from .optimizer import Optimizer, check_implementation_flags, new_step, next_step, run_update


class Adagrad(Optimizer):
    """Adagrad (Duchi et al.), with learning-rate decay and L2 weight decay; PyTorch's update
    order, defaults and state (``step``, ``sum``; made for every parameter at construction)."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False,
                 fused=None) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}"
            )
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        check_implementation_flags(foreach, fused, differentiable)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = new_step()
                state["sum"] = p.new_full(p.shape, initial_accumulator_value)

    def _update(self, p, grad, group) -> None:
        state = self.state[p]
        step = next_step(state)
        clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
        run_update(K.adagrad_row, [p, state["sum"]], [grad], (
            group["maximize"], group["weight_decay"], group["eps"], -clr), (1, 1))
