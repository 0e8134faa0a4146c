"""ASGD (``torch.optim.ASGD``): averaged stochastic gradient descent."""

from __future__ import annotations

from ..factory import tensor
from ..backend import kernels_optim as K
from .optimizer import Optimizer, check_implementation_flags, new_step, next_step, run_update


class ASGD(Optimizer):
    """Averaged SGD (Polyak & Juditsky), with L2 weight decay: ``ax`` averages the parameters
    from step ``t0`` on; PyTorch's update order, defaults and state (``step``, ``eta``, ``mu``,
    ``ax``; ``eta`` and ``mu`` 0-dim tensors of the step's dtype, whose rounding the update
    reads)."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        check_implementation_flags(foreach, None, differentiable, capturable)
        super().__init__(params, defaults)

    def _update(self, p, grad, group) -> None:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = new_step()
            state["eta"] = new_step(group["lr"])
            state["mu"] = new_step(1.0)
            state["ax"] = p.new_zeros(p.shape)
        step = next_step(state)
        lr, lambd = group["lr"], group["lambd"]
        eta, mu = state["eta"].item(), state["mu"].item()
        run_update(K.asgd_row, [p, state["ax"]], [grad], (
            group["maximize"], group["weight_decay"], 1 - lambd * eta, -eta, mu != 1, mu),
            (2, 1))
        # through a tensor of the default dtype, as PyTorch's ``as_tensor``: rounded to float32
        # even where ``eta`` and ``mu`` are float64 (loaded for a float64 parameter)
        state["eta"].copy_(tensor(lr / ((1 + lambd * lr * step) ** group["alpha"])))
        state["mu"].copy_(tensor(1 / max(1, step - group["t0"])))
