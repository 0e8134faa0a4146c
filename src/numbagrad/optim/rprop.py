"""Rprop (``torch.optim.Rprop``): resilient backpropagation."""

from __future__ import annotations

from ..backend import kernels_optim as K
from .optimizer import Optimizer, check_implementation_flags, new_step, next_step, run_update


class Rprop(Optimizer):
    """Rprop (Riedmiller & Braun): a step size per element, grown by ``etas[1]`` while the
    gradient keeps its sign and shrunk by ``etas[0]`` when it flips (that element then skips
    its step); PyTorch's update order, defaults and state (``step``, ``prev``,
    ``step_size``)."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False,
                 differentiable=False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        check_implementation_flags(foreach, None, differentiable, capturable)
        super().__init__(params, defaults)

    def _update(self, p, grad, group) -> None:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = new_step()
            state["prev"] = p.new_zeros(p.shape)
            state["step_size"] = p.new_full(p.shape, group["lr"])
        next_step(state)
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        run_update(K.rprop_row, [p, state["step_size"], state["prev"]], [grad], (
            group["maximize"], etaminus, etaplus, step_size_min, step_size_max), (1, 2, 1))
