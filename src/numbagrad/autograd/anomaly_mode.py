"""Anomaly detection: say which forward call made the node whose backward failed.

While it is on, every new node records the stack of the forward call that made it; when that
node's backward raises, a warning prints the stack before the error propagates, and with
``check_nan`` a gradient containing NaN is an error naming the node. It costs a stack capture
per op, so it is for debugging only.
"""

from __future__ import annotations

import os
import threading
import traceback
import warnings

from .grad_mode import _DecoratorContextManager



class _State(threading.local):
    # class defaults, as in grad_mode: cheap to read on every op
    enabled = False
    check_nan = True


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


def _set(mode: bool, check_nan: bool) -> None:
    _state.enabled, _state.check_nan = bool(mode), bool(check_nan)


class detect_anomaly(_DecoratorContextManager):
    """Turn anomaly detection on inside the block or the decorated function."""

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        warnings.warn(WARN_ENABLED, UserWarning, stacklevel=2)

    def __enter__(self):
        self.prev = (is_anomaly_enabled(), is_anomaly_check_nan_enabled())
        _set(True, self.check_nan)

    def __exit__(self, *exc):
        _set(*self.prev)
        return False

    def clone(self):
        return type(self)(self.check_nan)


class set_detect_anomaly(_DecoratorContextManager):
    """Set anomaly detection on or off; takes effect at once, so it also works as a plain call."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self.prev = (is_anomaly_enabled(), is_anomaly_check_nan_enabled())
        self.mode, self.check_nan = bool(mode), check_nan
        _set(self.mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _set(*self.prev)
        return False

    def clone(self):
        return type(self)(self.mode, self.check_nan)


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
        import numpy as np

        for k, g in enumerate(out):
            if g is not None and g.dtype.is_floating_point and np.isnan(g._host()).any():
                raise RuntimeError(
                    f"Function '{node.name()}' returned nan values in its {k}th output."
                )
    return out
