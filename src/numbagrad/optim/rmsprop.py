"""RMSprop (``torch.optim.RMSprop``)."""

from __future__ import annotations

from ..backend import kernels_optim as K
from .optimizer import Optimizer, check_implementation_flags, new_step, next_step, run_update


class RMSprop(Optimizer):
    """RMSprop (Hinton), optionally centered and with momentum; PyTorch's update order,
    defaults and state (``step``, ``square_avg``, ``momentum_buffer``, ``grad_avg``)."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        check_implementation_flags(foreach, None, differentiable, capturable)
        super().__init__(params, defaults)

    def _update(self, p, grad, group) -> None:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = new_step()
            state["square_avg"] = p.new_zeros(p.shape)
            if group["momentum"] > 0:
                state["momentum_buffer"] = p.new_zeros(p.shape)
            if group["centered"]:
                state["grad_avg"] = p.new_zeros(p.shape)
        next_step(state)
        alpha, momentum, centered = group["alpha"], group["momentum"], group["centered"]
        square_avg = state["square_avg"]
        # (a buffer the options leave unread is passed as square_avg, never written)
        buf = state["momentum_buffer"] if momentum > 0 else square_avg
        grad_avg = state["grad_avg"] if centered else square_avg
        weight = 1 - alpha
        run_update(K.rmsprop_row, [p, square_avg, buf, grad_avg], [grad], (
            group["maximize"], group["weight_decay"], alpha, weight, 1 - weight,
            abs(weight) < 0.5, centered, group["eps"], momentum, -group["lr"]),
            (1, 2, 2 if momentum > 0 else 0, 1 if centered else 0))
