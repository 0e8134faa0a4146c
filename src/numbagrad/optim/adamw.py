"""AdamW (``torch.optim.AdamW``): Adam with decoupled weight decay."""

from __future__ import annotations

from .adam import Adam


class AdamW(Adam):
    """Adam whose weight decay shrinks the parameters directly (Loshchilov & Hutter), with
    PyTorch's default ``weight_decay=1e-2``."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
