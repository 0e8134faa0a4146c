"""``numbagrad.nn.attention``: which kernels ``scaled_dot_product_attention`` may use.

numbagrad runs attention on the CPU as PyTorch's CPU build does: its flash kernel
(``_scaled_dot_product_flash_attention_for_cpu``) where that takes the arguments, else the math
formulation. ``sdpa_kernel`` narrows that choice as PyTorch's does; the GPU-only backends
(efficient, cuDNN, overrideable) are accepted and never chosen, so a set holding only those
raises PyTorch's CPU error when attention runs.
"""

from __future__ import annotations

import contextlib
import enum
import warnings

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.Enum):
    """The kernels of scaled dot-product attention (PyTorch's values)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __str__(self):
        return f"SDPBackend.{self.name}"

    def __int__(self):
        return self.value

    __index__ = __int__


# every backend but ERROR is enabled until sdpa_kernel says otherwise (PyTorch's defaults)
_ENABLED: set = {b for b in SDPBackend if b is not SDPBackend.ERROR}

ERR_NO_VIABLE = ("No viable backend for scaled_dot_product_attention was found. This is likely "
                 "due to turning off both the math kernel and the fused kernels.")
ERR_NO_KERNEL = "No available kernel.  Aborting execution."


def _cur_sdpa_kernel_backends() -> list:
    """The enabled backends, in their order of value."""
    return sorted(_ENABLED, key=int)


@contextlib.contextmanager
def sdpa_kernel(backends: list | SDPBackend, set_priority: bool = False):
    """Within the block, ``scaled_dot_product_attention`` uses only ``backends`` (one
    ``SDPBackend`` or a list). ``set_priority`` is accepted: numbagrad's CPU choice tries its
    flash kernel first whatever the order, as PyTorch's CPU build does."""
    if isinstance(backends, SDPBackend):
        backends = [backends]
    if not isinstance(backends, (list, tuple)) or not all(
            isinstance(b, SDPBackend) for b in backends):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend "
                             f"instances, got {type(backends).__name__}")
    before = set(_ENABLED)
    _ENABLED.clear()
    _ENABLED.update(b for b in backends if b is not SDPBackend.ERROR)
    try:
        yield {}
    finally:
        _ENABLED.clear()
        _ENABLED.update(before)


# ---------------------------------------------------------------- the CPU choice


def _flash_refusal(query, key, value, attn_mask, dropout_p, enable_gqa):
    """Why PyTorch's CPU flash kernel does not take these arguments (its warning), "" when
    only the header is given, or None when it takes them."""
    if dropout_p > 0.0:
        return "Both fused kernels do not support non-zero dropout."
    qs, ks, vs = tuple(query.shape), tuple(key.shape), tuple(value.shape)
    if not len(qs) == len(ks) == len(vs) == 4:
        return ("All fused kernels requires query, key and value to be 4 dimensional, but got "
                f"Query dim: {len(qs)}, Key dim: {len(ks)}, Value dim: {len(vs)} instead.")
    if not qs[0] == ks[0] == vs[0]:
        return ("For dense inputs, both fused kernels require query, key and value to have the "
                f"same batch_size. Query.sizes(): {list(qs)}, Key.sizes(): {list(ks)}, "
                f"Value.sizes(): {list(vs)} instead. To broadcast dense inputs, try using "
                "unsqueeze and expand_to before passing them into the kernel.")
    if enable_gqa and (ks[1] != vs[1] or qs[1] % ks[1]):
        return ("The number of heads in key/value must divide number of heads in query.Got "
                f"input Key sizes(): {ks[1]}, Value sizes(): {vs[1]}, Query sizes(): {qs[1]} "
                "instead.")
    if not enable_gqa and not qs[1] == ks[1] == vs[1]:
        return ("For dense input, both fused kernels require query, key and value to have the "
                f"same num_heads. Query.sizes(): {list(qs)}, Key sizes(): {list(ks)}, Value "
                f"sizes(): {list(vs)} instead. To broadcast dense inputs, try using unsqueeze "
                "and expand_to before passing them into the kernel.")
    if not qs[-1] == ks[-1] == vs[-1]:
        return ("Flash attention requires q,k,v to have the same last dimension. Got "
                f"Query.size(-1): {qs[-1]}, Key.size(-1): {ks[-1]}, Value.size(-1): {vs[-1]} "
                "instead.")
    if not query.dtype.is_floating_point:
        names = [_C_NAMES.get(t.dtype.name, t.dtype.name) for t in (query, key, value)]
        return ("Expected query, key and value to all be of dtype: {Float, Double, BFloat16, "
                f"Half}}. Got Query dtype: {names[0]}, Key dtype: {names[1]}, and Value dtype: "
                f"{names[2]} instead.")
    if attn_mask is not None and attn_mask.requires_grad:
        return ""
    return None


# (the C type names PyTorch's message gives)
_C_NAMES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "bool": "bool", "float32": "float", "float64": "double"}


def cpu_path(query, key, value, attn_mask, dropout_p, enable_gqa) -> str:
    """How attention runs under the enabled backends: "any" (numbagrad's own choice, both
    allowed), "math" or "flash"; PyTorch's errors (and warnings) when none can run it."""
    math_on = SDPBackend.MATH in _ENABLED
    flash_on = SDPBackend.FLASH_ATTENTION in _ENABLED
    if math_on and flash_on:
        return "any"
    if flash_on:
        why = _flash_refusal(query, key, value, attn_mask, dropout_p, enable_gqa)
        if why is None:
            return "flash"
        warnings.warn("Flash attention kernel not used because:", UserWarning, stacklevel=3)
        if why:
            warnings.warn(why, UserWarning, stacklevel=3)
        raise RuntimeError(ERR_NO_KERNEL)
    if math_on:
        return "math"
    raise RuntimeError(ERR_NO_VIABLE)
