"""Stochastic gradient descent (``torch.optim.SGD``)."""

from __future__ import annotations

from ..backend import kernels_optim as K
from .optimizer import Optimizer, check_implementation_flags, run_update


class SGD(Optimizer):
    """Stochastic gradient descent, optionally with momentum (Nesterov's too), dampening and
    L2 weight decay; PyTorch's update order and defaults."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        check_implementation_flags(foreach, fused, differentiable)
        super().__init__(params, defaults)

    def _update(self, p, grad, group) -> None:
        momentum = group["momentum"]
        buf, first = p, False  # (without momentum the kernel never reads its buffer)
        if momentum != 0:
            state = self.state[p]
            buf = state.get("momentum_buffer")
            first = buf is None
            if first:  # (the first step's buffer is the gradient itself, as a clone)
                buf = state["momentum_buffer"] = p.new_empty(p.shape)
        run_update(K.sgd_row, [p, buf], [grad], (
            group["maximize"], group["weight_decay"], momentum, first, 1 - group["dampening"],
            group["nesterov"], -group["lr"]), (1, 0 if first or momentum == 0 else 2))
