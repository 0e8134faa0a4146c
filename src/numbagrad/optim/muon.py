"""Muon (``torch.optim.Muon``): momentum SGD for 2-d parameters whose update is
orthogonalized by a few Newton-Schulz iterations (K. Jordan, "Muon: An optimizer for hidden
layers in neural networks"; "Muon is Scalable for LLM Training" for the learning-rate scale)."""

from __future__ import annotations

import math

from .. import dtypes as D
from ..tensor import Tensor
from .optimizer import Optimizer

ADJUST_LR_FNS = ("original", "match_rms_adamw")


def _bfloat16(x: Tensor) -> Tensor:
    """``x`` rounded to bfloat16's precision (to nearest, ties to even), kept as float32.
    PyTorch runs the Newton-Schulz iterations in bfloat16, which numbagrad has no tensors of:
    rounding each result the same way gives PyTorch's values."""
    bits = x.to(D.float32).contiguous().view(D.int32)
    # bfloat16 is float32's upper 16 bits: add half of the dropped part (plus the kept part's
    # last bit, for ties to even), then drop it
    bits = (bits + (0x7FFF + ((bits >> 16) & 1))) & -65536
    return bits.view(D.float32)


def _orthogonalize(g: Tensor, coefficients, steps: int, eps: float) -> Tensor:
    """The Newton-Schulz approximation of ``U V^T`` for ``g = U S V^T``: the polynomial
    ``a X + b (X X^T) X + c (X X^T)^2 X`` applied ``steps`` times to ``g`` scaled to norm one,
    on the wide orientation (so ``X X^T`` is the smaller Gram matrix)."""
    a, b, c = coefficients
    x = _bfloat16(g)
    tall = x.shape[0] > x.shape[1]
    if tall:
        x = x.t()
    x = _bfloat16(x / _bfloat16(_bfloat16(x.norm()).clamp(min=eps)))
    for _ in range(steps):
        gram = _bfloat16(x @ x.t())
        poly = _bfloat16(gram * b + (gram @ gram) * c)
        x = _bfloat16(x * a + poly @ x)
    return x.t() if tall else x


def _adjusted_lr(lr: float, how, shape) -> float:
    """The learning rate scaled to the matrix's shape (rows A, columns B): by
    ``sqrt(max(1, A / B))`` ("original", the default), or ``0.2 sqrt(max(A, B))``
    ("match_rms_adamw": the update's RMS then matches AdamW's)."""
    rows, cols = shape[:2]
    if how == "match_rms_adamw":
        return 0.2 * math.sqrt(max(rows, cols)) * lr
    return math.sqrt(max(1, rows / cols)) * lr


class Muon(Optimizer):
    """Muon with PyTorch's defaults and state (``momentum_buffer``): the momentum buffer is an
    exponential average of the gradients, its (Nesterov) update orthogonalized, decoupled
    weight decay, the step scaled by ``adjust_lr_fn``. Only 2-d parameters are accepted."""

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(3.4445, -4.775, 2.0315), eps=1e-7, ns_steps=5,
                 adjust_lr_fn=None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ADJUST_LR_FNS:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                        adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        # (checked once here, as PyTorch does: a group added later is not checked)
        for group in self.param_groups:
            for p in group["params"]:
                if p.dim() != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def _update(self, p, grad, group) -> None:
        state = self.state[p]
        if len(state) == 0:
            state["momentum_buffer"] = grad.new_zeros(grad.shape)
        lr, momentum = float(group["lr"]), group["momentum"]
        buf = state["momentum_buffer"]
        buf.lerp_(grad, 1 - momentum)
        update = grad.lerp(buf, momentum) if group["nesterov"] else buf
        update = _orthogonalize(update, group["ns_coefficients"], group["ns_steps"],
                                group["eps"])
        p.mul_(1 - lr * group["weight_decay"])
        p.add_(update.to(p.dtype), alpha=-_adjusted_lr(lr, group["adjust_lr_fn"], p.shape))
