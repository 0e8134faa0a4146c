"""RMSprop (``torch.optim.RMSprop``)."""

from __future__ import annotations

from .optimizer import (
    Optimizer, addcdiv_, addcmul_, check_implementation_flags, lerp_, new_step, next_step,
)


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
        if group["maximize"]:
            grad = -grad
        next_step(state)
        alpha, weight_decay = group["alpha"], group["weight_decay"]
        if weight_decay != 0:
            grad = grad + p * weight_decay
        square_avg = addcmul_(state["square_avg"].mul_(alpha), grad, grad, 1 - alpha)
        if group["centered"]:
            grad_avg = lerp_(state["grad_avg"], grad, 1 - alpha)
            # PyTorch's square_avg.addcmul(grad_avg, grad_avg, value=-1), which rounds alike
            avg = (square_avg - grad_avg * grad_avg).sqrt()
        else:
            avg = square_avg.sqrt()
        avg = avg + group["eps"]
        if group["momentum"] > 0:
            buf = addcdiv_(state["momentum_buffer"].mul_(group["momentum"]), grad, avg)
            p.add_(buf * -group["lr"])
        else:
            addcdiv_(p, grad, avg, -group["lr"])
