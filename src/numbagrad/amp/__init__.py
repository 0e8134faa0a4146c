"""``numbagrad.amp``: autocast and GradScaler, as ``torch.amp`` spells them.

numbagrad has no float16 or bfloat16 tensors, so ``autocast`` cannot lower any op's precision:
an enabled autocast runs its code unchanged and says so once (a warning); a disabled one is
exactly PyTorch's, which also runs the code unchanged. ``GradScaler`` is PyTorch's algorithm
in full (a scaled loss, gradients unscaled and checked for inf/NaN, a skipped step and a
smaller scale after an overflow, a larger one after ``growth_interval`` clean steps): with
float32 gradients it is rarely needed, but a script that uses it trains the same."""

from __future__ import annotations

import functools
import warnings
from collections import defaultdict

import numpy as np

from .. import cuda as _cuda
from .. import dtypes as D
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad

_DEVICE_TYPES = ("cpu", "cuda")
WARN_NO_LOW_PRECISION = (
    "numbagrad has no float16 or bfloat16 tensors: autocast runs the code in the tensors' own "
    "dtypes (it changes nothing)."
)
_warned = [False]


class autocast:
    """A context manager (or decorator) under which PyTorch runs some ops in a lower
    precision; numbagrad runs them unchanged (see the module's docstring)."""

    def __init__(self, device_type: str, dtype=None, enabled: bool = True,
                 cache_enabled: bool | None = None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type not in _DEVICE_TYPES:
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{device_type}'")
        self.device = device_type
        self.fast_dtype = dtype
        self._cache_enabled = cache_enabled
        if enabled and device_type == "cuda" and not _cuda.is_available():
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.",
                          stacklevel=2)
            enabled = False
        if enabled and not _warned[0]:
            _warned[0] = True
            warnings.warn(WARN_NO_LOW_PRECISION, UserWarning, stacklevel=2)
        self._enabled = enabled

    def __enter__(self):
        return None

    def __exit__(self, exc_type, exc_val, exc_tb):
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return decorate_autocast


def is_autocast_available(device_type: str) -> bool:
    return device_type in _DEVICE_TYPES


# ---------------------------------------------------------------- GradScaler

_READY, _UNSCALED, _STEPPED = 0, 1, 2


def _fresh_state():
    return {"stage": _READY, "found_inf": None}


class GradScaler:
    """Loss scaling for mixed-precision training, PyTorch's algorithm and messages (the scale
    and growth tracker kept as Python numbers, on no device)."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled and not _cuda.is_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale: float | None = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker: int | None = None
            self._per_optimizer_states = defaultdict(_fresh_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = ("This may indicate your script did not use scaler.scale(loss or outputs) earlier "
               "in the iteration.")
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)

    def _lazy_init(self):
        if self._scale is None:
            # (PyTorch keeps the scale as a float32 tensor: the same rounding here)
            self._scale = float(D.float32.np.type(self._init_scale))
            self._growth_tracker = self._init_growth_tracker

    def scale(self, outputs):
        """``outputs`` (a tensor, or an iterable of them) times the scale."""
        if not self._enabled:
            return outputs
        self._lazy_init()
        if isinstance(outputs, Tensor):
            return outputs * _scale_tensor(self._scale, outputs)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        if hasattr(outputs, "__iter__"):
            return map(self.scale, outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale, in place, noting any inf or NaN."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] == _UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # (PyTorch: the reciprocal in float64, rounded to float32)
        inv_scale = float(D.float32.np.type(1.0 / self._scale))
        found = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if not found and not bool(g.isfinite().all()):
                        found = True
                    g.mul_(inv_scale)
        state["found_inf"] = found
        state["stage"] = _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step()`` on the unscaled gradients, skipped if any is inf or NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        retval = None
        if not state["found_inf"]:
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return retval

    def update(self, new_scale=None) -> None:
        """Back the scale off after a skipped step; grow it after ``growth_interval`` clean
        ones (or set it to ``new_scale``)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("update")
        if new_scale is not None:
            value = new_scale.item() if isinstance(new_scale, Tensor) else new_scale
            self._scale = float(D.float32.np.type(value))
        else:
            found = [s["found_inf"] for s in self._per_optimizer_states.values()
                     if s["found_inf"] is not None]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            f32 = D.float32.np.type
            if any(found):
                self._scale = float(f32(self._scale) * f32(self._backoff_factor))
                self._growth_tracker = 0
            else:
                successful = self._growth_tracker + 1
                if successful == self._growth_interval:
                    self._scale = float(f32(self._scale) * f32(self._growth_factor))
                    successful = 0
                self._growth_tracker = successful
        self._per_optimizer_states = defaultdict(_fresh_state)

    def get_scale(self) -> float:
        if self._enabled:
            return self._init_scale if self._scale is None else self._scale
        return 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if self._enabled:
            return (self._init_growth_tracker if self._growth_tracker is None
                    else self._growth_tracker)
        return 0

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        if self._enabled:
            return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                    "backoff_factor": self._backoff_factor,
                    "growth_interval": self._growth_interval,
                    "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale = float(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker = state_dict["_growth_tracker"]


def _scale_tensor(scale, like):
    """The scale as PyTorch's: a 0-d float32 tensor on ``like``'s device."""
    t = Tensor._make(np.full((), scale, np.float32))
    return t if like.device.type == "cpu" else t.to(like.device)
