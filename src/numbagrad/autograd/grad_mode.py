"""Thread-local grad mode: no_grad, enable_grad, set_grad_enabled, inference_mode."""

from __future__ import annotations

import functools
import threading



class _State(threading.local):
    # a class default, not getattr(..., default): a missing thread-local attribute raises
    # AttributeError inside getattr, which costs more than the rest of a small op's bookkeeping
    enabled = True


_state = _State()


def is_grad_enabled() -> bool:
    return _state.enabled


def _set_enabled(mode: bool) -> None:
    _state.enabled = bool(mode)


class _DecoratorContextManager:
    """A context manager that can also decorate a function (the function runs inside it)."""

    def __call__(self, func):
        if not callable(func):
            raise TypeError(f"{type(self).__name__} expects a callable, got {type(func).__name__}")

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return wrapper

    def clone(self):
        return type(self)()


class no_grad(_DecoratorContextManager):
    """Disable gradient recording inside the block or the decorated function."""

    def __enter__(self):
        self.prev = is_grad_enabled()
        _set_enabled(False)

    def __exit__(self, *exc):
        _set_enabled(self.prev)
        return False


class enable_grad(_DecoratorContextManager):
    """Enable gradient recording inside the block, even under ``no_grad``."""

    def __enter__(self):
        self.prev = is_grad_enabled()
        _set_enabled(True)

    def __exit__(self, *exc):
        _set_enabled(self.prev)
        return False


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode; takes effect at once, so it also works as a plain call."""

    def __init__(self, mode: bool):
        self.prev = is_grad_enabled()
        self.mode = bool(mode)
        _set_enabled(self.mode)

    def __call__(self, func):
        # used as @set_grad_enabled(False): undo the immediate switch, apply per call
        _set_enabled(self.prev)
        return super().__call__(func)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _set_enabled(self.prev)
        return False

    def clone(self):
        return type(self)(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad`` (numbagrad has no separate inference tensors)."""

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)

    def __enter__(self):
        self.prev = is_grad_enabled()
        if self.mode:
            _set_enabled(False)

    def __exit__(self, *exc):
        _set_enabled(self.prev)
        return False

    def clone(self):
        return type(self)(self.mode)
