"""Op observers: functions called after every op while set (forward-mode AD, the anomaly
mode's forward check, the packing of saved tensors under saved-tensor hooks, the profiler,
which also gives a function to call before each op).

While none is set nothing here runs, and ops take their usual paths at their usual cost. The
first one set routes every elementwise call off the fast path (``dispatch.FAST_PATH``, the
plans made so far put aside) and wraps the two calls every op goes through, the general
elementwise call and the composite call; the last one removed puts all of it back.
"""

from __future__ import annotations

from ..autograd import anomaly_mode
from ..autograd import graph
from . import dispatch
from .dispatch import call_composite, call_general
from .record import pack_saved
from .registry import REGISTRY, Composite, Elementwise

OBSERVERS: list = []  # fn(op, args, kwargs, result), in the order they were added
# before(op, args, kwargs), called before every op, for the observers that gave one (the
# profiler's clock: an op's time is from its before-call to its observer's call; an op that
# raises gets no observer call)
BEFORE: list = []
_befores: dict = {}  # observer -> its before function
_plans_aside: dict = {}  # op -> its fast-path plans while observers are set


def add(fn, before=None) -> None:
    """Call ``fn(op, args, kwargs, result)`` after every op from now on (``kwargs``: None for
    an elementwise op, whose ``args`` are its operands then its parameters), and
    ``before(op, args, kwargs)`` before it when given."""
    if not OBSERVERS:
        _install()
    OBSERVERS.append(fn)
    if before is not None:
        _befores[fn] = before
        BEFORE.append(before)


def remove(fn) -> None:
    OBSERVERS.remove(fn)
    before = _befores.pop(fn, None)
    if before is not None:
        BEFORE.remove(before)
    if not OBSERVERS:
        _uninstall()


def _observed_general(op, args):
    for fn in BEFORE:
        fn(op, args, None)
    result = call_general(op, args)
    for fn in OBSERVERS:
        fn(op, args, None, result)
    return result


def _observed_composite(op, *args, **kwargs):
    for fn in BEFORE:
        fn(op, args, kwargs)
    result = call_composite(op, *args, **kwargs)
    for fn in OBSERVERS:
        fn(op, args, kwargs, result)
    return result


def _install():
    dispatch.FAST_PATH = False
    for op in REGISTRY.values():
        if isinstance(op, Elementwise):
            # (the dict itself stays: the op's functions hold it)
            _plans_aside[op] = dict(op._plans)
            op._plans.clear()
    Elementwise._call = _observed_general
    Composite.__call__ = _observed_composite


def _uninstall():
    Elementwise._call = call_general
    Composite.__call__ = call_composite
    for op, plans in _plans_aside.items():
        op._plans.clear()
        op._plans.update(plans)
    _plans_aside.clear()
    dispatch.FAST_PATH = True


def _switch_forward_check(on: bool) -> None:
    (add if on else remove)(anomaly_mode.check_forward)


anomaly_mode.forward_check_switch = _switch_forward_check


def _switch_packing(on: bool) -> None:
    (add if on else remove)(pack_saved)


graph.pack_switch = _switch_packing
