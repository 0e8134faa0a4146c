"""Optimizers over leaf tensors' ``.grad`` (PyTorch's update rules, written with in-place ops).

Each step runs under ``no_grad``, so updating a leaf that requires grad in place is allowed,
as with ``w -= lr * w.grad`` by hand.
"""

from __future__ import annotations

import math

from ..autograd.grad_mode import enable_grad, no_grad
from ..tensor import Tensor


class Optimizer:
    """Parameter groups, per-parameter state and ``zero_grad``; subclasses define ``step``."""

    def __init__(self, params, defaults: dict):
        self.defaults = defaults
        self.state: dict = {}
        self.param_groups: list[dict] = []
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                f"dicts, but got {type(params).__name__}"
            )
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, group: dict) -> None:
        group = dict(group)
        params = group["params"]
        group["params"] = [params] if isinstance(params, Tensor) else list(params)
        for p in group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(
                    f"optimizer can only optimize Tensors, but one of the params is "
                    f"{type(p).__name__}"
                )
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for k, v in self.defaults.items():
            group.setdefault(k, v)
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        p._grad.zero_()

    def step(self, closure=None):
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p._grad is not None:
                        self._update(p, p._grad, group, self.state.setdefault(p, {}))
        return loss

    def _update(self, p, grad, group, state):
        raise NotImplementedError

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for k in sorted(k for k in g if k != "params"):
                lines.append(f"    {k}: {g[k]}")
        return "\n".join(lines) + "\n)"


class SGD(Optimizer):
    """Stochastic gradient descent with optional momentum, Nesterov and weight decay."""

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False, *, maximize=False):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize))

    def _update(self, p, grad, group, state):
        g = -grad if group["maximize"] else grad
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p
        if group["momentum"]:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = g.clone()
            else:
                buf.mul_(group["momentum"]).add_(g * (1 - group["dampening"]))
            g = g + group["momentum"] * buf if group["nesterov"] else buf
        p.sub_(group["lr"] * g)


class Adam(Optimizer):
    """Adam (Kingma & Ba), with optional L2 weight decay and AMSGrad."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                 amsgrad=False, *, maximize=False):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i, b in enumerate(betas):
            if not 0.0 <= b < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {b}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize))

    def _update(self, p, grad, group, state):
        b1, b2 = group["betas"]
        g = -grad if group["maximize"] else grad
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p
        if not state:
            state["step"] = 0
            state["exp_avg"] = p.new_zeros(tuple(p.shape))
            state["exp_avg_sq"] = p.new_zeros(tuple(p.shape))
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = p.new_zeros(tuple(p.shape))
        state["step"] += 1
        t = state["step"]
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m.mul_(b1).add_(g * (1 - b1))
        v.mul_(b2).add_(g * g * (1 - b2))
        if group["amsgrad"]:
            vmax = state["max_exp_avg_sq"]
            vmax.copy_(vmax.maximum(v))
            v = vmax
        step_size = group["lr"] / (1 - b1**t)
        denom = (v.sqrt() / math.sqrt(1 - b2**t)) + group["eps"]
        p.sub_(step_size * (m / denom))
