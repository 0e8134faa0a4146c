"""Memory that pending computations will read, and memory NumPy code can write.

A lazy tensor (``ops/lazy.py``) reads its leaf arrays only when it is evaluated, so those must
not change before. Two rules keep that so:

- every write into an existing array first evaluates the pending computations that read the
  memory it writes (``before_write``, called by each in-place op and so by ``.grad``
  accumulation and optimizers);
- memory NumPy code can write to behind our back (``numpy()``, ``from_numpy``,
  ``__array__``) is never a leaf (``escape``; ``private`` tells).

A pending computation is any object with ``value`` (None until it is computed), ``leaves()``
(the arrays it reads) and ``evaluate()``: lazy.py's ``Expr`` and ``Total``.
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

# weak references to computations that may not be evaluated yet (a list pruned as it grows:
# a WeakSet's add and its removal callback cost 0.3 us an expression more)
pending: list = []
_prune_at = 64  # the list's length from which ``track`` prunes it
_prune_lock = threading.Lock()


def root(a):
    """The array that owns ``a``'s memory, or None when that is not a NumPy array."""
    while True:
        b = a.base
        if b is None:
            return a
        if type(b) is not np.ndarray:
            return None
        a = b


_escaped: dict = {}  # id of a root array -> weak reference to it


def escape(a) -> None:
    """``a``'s memory is now reachable from NumPy code: evaluate what reads it, and never take
    it as a leaf while that memory lives (or until the pool hands its block out anew)."""
    if type(a) is not np.ndarray:
        return
    before_write(a)
    r = root(a)
    if r is None:
        return
    key = id(r)
    if key not in _escaped:
        _escaped[key] = weakref.ref(r, lambda _, k=key: _escaped.pop(k, None))


def reused(block) -> None:
    """The CPU pool hands ``block`` out again: nothing outside refers to it any more (a view of
    it would hold it as its ``base``), so its memory may be a leaf again."""
    if _escaped:
        _escaped.pop(id(block), None)


def private(a) -> bool:
    """Whether no NumPy code can write to ``a``'s memory (it may be a leaf)."""
    r = root(a)
    if r is None:
        return False
    ref = _escaped.get(id(r))
    return ref is None or ref() is not r


def track(e) -> None:
    """Note ``e``, not evaluated yet, for ``before_write``."""
    pending.append(weakref.ref(e))
    if len(pending) > _prune_at:
        prune()


def prune() -> None:
    """Drop the references to computations gone or evaluated.

    Safe under threads: ``track`` appends without a lock, so only the entries seen here are
    replaced (a slice assignment is one step under the GIL) and what another thread appended
    meanwhile stays at the end; prunes themselves take turns."""
    global _prune_at
    with _prune_lock:
        n = len(pending)
        live = []
        for ref in pending[:n]:
            e = ref()
            if e is not None and e.value is None:
                live.append(ref)
        pending[:n] = live
        _prune_at = max(64, 2 * len(pending))


def before_write(a) -> None:
    """Evaluate every pending computation that reads memory ``a`` is part of."""
    if not pending or type(a) is not np.ndarray:  # (CUDA memory is never a leaf)
        return
    r = root(a)
    for ref in list(pending):  # noqa: PERF101 (a copy: an evaluation may prune the list)
        e = ref()
        if (e is not None and e.value is None
                and any(r is None or root(x) is r for x in e.leaves())):
            e.evaluate()
    prune()
