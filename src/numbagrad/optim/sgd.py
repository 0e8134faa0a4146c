"""Stochastic gradient descent (``torch.optim.SGD``)."""

from __future__ import annotations

from .optimizer import Optimizer, add_scaled_, check_implementation_flags


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
        if group["maximize"]:
            grad = -grad
        weight_decay = group["weight_decay"]
        if weight_decay != 0:
            grad = grad + p * weight_decay
        momentum = group["momentum"]
        if momentum != 0:
            state = self.state[p]
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = grad.detach().clone()
            else:
                add_scaled_(buf.mul_(momentum), grad, 1 - group["dampening"])
            grad = grad + buf * momentum if group["nesterov"] else buf
        p.add_(grad, alpha=-group["lr"])
