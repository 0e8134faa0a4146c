"""``skip_init``: a module made without its parameters' initial values."""

from __future__ import annotations

import inspect

from ...factory import empty_like
from ..modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` with its parameters and buffers left uninitialized
    (their memory's contents), on ``device`` (default the CPU).

    PyTorch builds the module on its meta device, where initializing costs nothing; numbagrad
    has none, so the module is built (and initialized) on ``device`` and then every parameter
    and buffer gets new, uninitialized memory, as ``Module.to_empty`` gives it: the same
    result, without the saving."""
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs.setdefault("device", "cpu")
    module = module_cls(*args, **kwargs)
    return module._apply(lambda t: empty_like(t))
