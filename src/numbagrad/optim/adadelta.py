"""Adadelta (``torch.optim.Adadelta``)."""

from __future__ import annotations

from .optimizer import (
    Optimizer, add_scaled_, addcmul_, check_implementation_flags, new_step, next_step,
)


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
        if group["maximize"]:
            grad = -grad
        rho, eps = group["rho"], group["eps"]
        if group["weight_decay"] != 0:
            grad = grad + p * group["weight_decay"]
        square_avg = addcmul_(state["square_avg"].mul_(rho), grad, grad, 1 - rho)
        std = (square_avg + eps).sqrt()
        delta = (state["acc_delta"] + eps).sqrt().div_(std).mul_(grad)
        addcmul_(state["acc_delta"].mul_(rho), delta, delta, 1 - rho)
        add_scaled_(p, delta, -group["lr"])
