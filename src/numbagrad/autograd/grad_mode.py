"""Thread-local grad mode (no_grad, enable_grad, set_grad_enabled, inference_mode), and the
backward pass's process-wide state that ``ops/`` reads: ``backward_passes``, ``backward_fusion``."""

from __future__ import annotations

import functools
import inspect
import sys
import threading
import warnings


class _State(threading.local):
    # a class default, not getattr(..., default): a missing thread-local attribute raises
    # AttributeError inside getattr, which costs more than the rest of a small op's bookkeeping
    enabled = True
    # inside ``inference_mode()``: the tensors made there are inference tensors
    inference = False


_state = _State()


class _BackwardPasses:
    """How many backward passes are running, in the whole process (not per thread): while any
    is, elementwise ops run at once rather than deferring (``ops/lazy.py`` reads it; the
    engine counts)."""

    __slots__ = ("running",)

    def __init__(self):
        self.running = 0


backward_passes = _BackwardPasses()


class _BackwardFusion:
    """The backward fusion's settings, for the whole process; the engine reads them at the
    start of each pass, ``ops/fusion.py`` as it grows a region. ``enabled``: whether a plain
    ``backward()`` runs connected elementwise nodes as one kernel (``node.run_region``).
    ``min_items``: the gradient size from which it does; below it a region's first compile
    costs more than a loop per node saves, and small elementwise nodes hand their gradients
    on as arrays instead."""

    __slots__ = ("enabled", "min_items")

    def __init__(self):
        self.enabled = True
        self.min_items = 1 << 14


backward_fusion = _BackwardFusion()


def is_grad_enabled() -> bool:
    return _state.enabled


def is_inference_mode_enabled() -> bool:
    return _state.inference


def _wrap_generator(ctx_factory, func):
    """``func``, a generator function, with each of its steps run inside a fresh
    ``ctx_factory()``: the mode holds while the generator runs and the caller's mode is back
    at each ``yield`` (PyTorch's ``torch.utils._contextlib._wrap_generator``)."""

    @functools.wraps(func)
    def run_in_mode(*args, **kwargs):
        gen = func(*args, **kwargs)
        try:
            with ctx_factory():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with ctx_factory():
                        gen.close()
                    raise
                except BaseException:
                    # an exception thrown in by the caller goes on into the generator
                    with ctx_factory():
                        response = gen.throw(*sys.exc_info())
                else:
                    with ctx_factory():
                        response = gen.send(request)
        except StopIteration as e:
            return e.value

    return run_in_mode


class _DecoratorContextManager:
    """A context manager that can also decorate a function (the function runs inside it)."""

    def __call__(self, orig_func):
        if inspect.isclass(orig_func):
            warnings.warn(
                "Decorating classes is deprecated and will be disabled in future versions. You "
                "should only decorate functions or methods. To preserve the current behavior of "
                "class decoration, you can directly decorate the `__init__` method and nothing "
                "else.",
                FutureWarning,
                stacklevel=2,
            )
            func = lambda *args, **kwargs: orig_func(*args, **kwargs)  # noqa: E731
        else:
            func = orig_func
        # each call (each generator step) gets a fresh copy: set_grad_enabled's copy records
        # the mode it replaces when made
        if inspect.isgeneratorfunction(func):
            return _wrap_generator(self.clone, func)

        @functools.wraps(func)
        def run_inside(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return run_inside

    def clone(self):
        return type(self)()


class _BareDecoratorContextManager(_DecoratorContextManager):
    """One that also decorates without parentheses: ``@no_grad`` as well as ``@no_grad()``."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_BareDecoratorContextManager):
    """Disable gradient recording inside the block or the decorated function."""

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self):
        self.prev = _state.enabled
        _state.enabled = False

    def __exit__(self, *exc):
        _state.enabled = self.prev
        return False


class enable_grad(_BareDecoratorContextManager):
    """Enable gradient recording inside the block, even under ``no_grad``."""

    def __enter__(self):
        self.prev = _state.enabled
        _state.enabled = True

    def __exit__(self, *exc):
        _state.enabled = self.prev
        return False


def _tp_name(value) -> str:
    """The type name PyTorch's argument errors give: qualified for a type defined in C outside
    the builtins (``numpy.bool``), plain for builtins and Python classes."""
    t = type(value)
    heap_type = t.__flags__ & (1 << 9)  # Py_TPFLAGS_HEAPTYPE: a class made by Python code
    if heap_type or t.__module__ == "builtins":
        return t.__name__
    return f"{t.__module__}.{t.__name__}"


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode; takes effect at once, so it also works as a plain call."""

    def __init__(self, mode: bool):
        if type(mode) is not bool:
            raise TypeError(
                "set_grad_enabled(): argument 'enabled' (position 1) must be bool, not "
                f"{_tp_name(mode)}"
            )
        self.prev = _state.enabled
        self.mode = mode
        _state.enabled = mode

    def __call__(self, orig_func):
        # used as @set_grad_enabled(False): undo the immediate switch, apply per call
        _state.enabled = self.prev
        return super().__call__(orig_func)

    def __enter__(self):
        _state.enabled = self.mode

    def __exit__(self, *exc):
        _state.enabled = self.prev
        return False

    def clone(self):
        return type(self)(self.mode)

    # (PyTorch's: torch.autograd.grad_mode.set_grad_enabled(mode=True))
    def __repr__(self) -> str:
        return f"{type(self).__module__}.{type(self).__qualname__}(mode={self.mode})"

    __str__ = __repr__


class inference_mode(_DecoratorContextManager):
    """``no_grad`` whose new tensors are inference tensors (``Tensor.is_inference()``): they
    keep no version counter. ``inference_mode(False)`` turns both off (grad mode on)."""

    def __new__(cls, mode=True):
        # anything but a bool is the function to decorate: @inference_mode without parentheses
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)

    def __init__(self, mode: bool = True):
        self.mode = mode

    def __enter__(self):
        self.prev = (_state.enabled, _state.inference)
        _state.enabled = not self.mode
        _state.inference = self.mode

    def __exit__(self, *exc):
        _state.enabled, _state.inference = self.prev
        return False

    def clone(self):
        return type(self)(self.mode)
