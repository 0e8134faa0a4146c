"""Anomaly detection: say which forward call made the node whose backward failed.

While it is on, every new node records the stack of the forward call that made it; when that
node's backward raises, a warning prints the stack before the error propagates, and with
``check_nan`` a gradient containing NaN is an error naming the node. It costs a stack capture
per op, so it is for debugging only.

``check_forward=True`` (numbagrad's own option, off by default) also checks every op's output
in the forward pass: the first NaN or infinity is a RuntimeError naming the op and the line
of the caller's code. It is an op observer (ops/observe.py): nothing runs while it is off.
"""

from __future__ import annotations

import os
import sys
import traceback
import warnings

import numpy as np

from .._tensor import Tensor
from .grad_mode import _DecoratorContextManager



class _State:
    # one switch for the process, as PyTorch's (a thread started inside detect_anomaly sees it
    # on); a plain object's attribute is read on every recorded op (a thread-local's costs
    # 0.1 us more per op)
    __slots__ = ("enabled", "check_nan")

    def __init__(self):
        self.enabled = False
        self.check_nan = True


_state = _State()
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
WARN_ENABLED = (
    "Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
    "enabled for debugging."
)


def is_anomaly_enabled() -> bool:
    return _state.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return _state.check_nan


# the forward check's switch, called with True or False when it is turned on or off; set by
# ops/observe.py (the ops import this module, so it cannot import them)
forward_check_switch = None
_forward = [False]  # whether the forward check is on (for every thread: op observers are)


def is_anomaly_check_forward_enabled() -> bool:
    return _forward[0]


def _set(mode: bool, check_nan: bool, check_forward: bool = False) -> None:
    _state.enabled, _state.check_nan = bool(mode), bool(check_nan)
    on = bool(mode and check_forward)
    if on != _forward[0]:
        _forward[0] = on
        forward_check_switch(on)


def _prev():
    return is_anomaly_enabled(), is_anomaly_check_nan_enabled(), _forward[0]


class detect_anomaly(_DecoratorContextManager):
    """Turn anomaly detection on inside the block or the decorated function (with
    ``check_forward``: also check each op's output for NaN and infinities)."""

    def __init__(self, check_nan: bool = True, check_forward: bool = False):
        self.check_nan = check_nan
        self.check_forward = check_forward
        warnings.warn(WARN_ENABLED, UserWarning, stacklevel=2)

    def __enter__(self):
        self.prev = _prev()
        _set(True, self.check_nan, self.check_forward)

    def __exit__(self, *exc):
        _set(*self.prev)
        return False

    def clone(self):
        return type(self)(self.check_nan, self.check_forward)


class set_detect_anomaly(_DecoratorContextManager):
    """Set anomaly detection on or off; takes effect at once, so it also works as a plain call."""

    def __init__(self, mode: bool, check_nan: bool = True, check_forward: bool = False):
        self.prev = _prev()
        self.mode, self.check_nan, self.check_forward = bool(mode), check_nan, check_forward
        _set(self.mode, check_nan, check_forward)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _set(*self.prev)
        return False

    def clone(self):
        return type(self)(self.mode, self.check_nan, self.check_forward)


def caller_line() -> str:
    """``file:line`` of the innermost frame outside numbagrad."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
    return "<unknown>" if frame is None else f"{frame.f_code.co_filename}:{frame.f_lineno}"


def check_forward(op, args, kwargs, result) -> None:
    """The forward check (an op observer): raise on the first NaN or infinity in an output."""
    outs = result if isinstance(result, tuple) else (result,)
    for k, out in enumerate(outs):
        if isinstance(out, Tensor) and out.dtype.is_floating_point:
            a = out._host()
            if a.size and not np.isfinite(a).all():
                nan, inf = bool(np.isnan(a).any()), bool(np.isinf(a).any())
                what = "nan and inf" if nan and inf else "nan" if nan else "inf"
                raise RuntimeError(
                    f"Function '{op.name}' returned {what} values in its {k}th output in the "
                    f"forward pass, called at {caller_line()}.")


def forward_stack() -> str:
    """The stack of the current forward call, without numbagrad's own frames."""
    frames = [f for f in traceback.extract_stack()[:-1] if not f.filename.startswith(_PACKAGE)]
    return "".join(traceback.format_list(frames))


def run_checked(node, grads):
    """``node.apply(grads)`` with the anomaly checks."""
    try:
        out = node.apply(grads)
    except Exception:
        stack = getattr(node, "_anomaly_stack", None)
        if stack is not None:
            warnings.warn(
                f"Error detected in {node.name()}. Traceback of forward call that caused the "
                f"error:\n{stack}",
                UserWarning,
                stacklevel=2,
            )
        raise
    if is_anomaly_check_nan_enabled():
        for k, g in enumerate(out):
            if g is not None and g.dtype.is_floating_point and np.isnan(g._host()).any():
                raise RuntimeError(
                    f"Function '{node.name()}' returned nan values in its {k}th output."
                )
    return out
