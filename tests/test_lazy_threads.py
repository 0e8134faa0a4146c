"""Deferred expressions under threads: no pending expression may be lost."""

from __future__ import annotations

import sys
import threading

import numpy as np

import numbagrad as ng
from numbagrad.ops import lazy


def test_writes_from_several_threads_evaluate_every_pending_expression_first():
    # each thread defers expressions reading x, then writes x: the write must evaluate them
    # with x's old values. A prune in one thread used to drop the references another thread
    # had just added, and those expressions later read the new values (seen with a 1 us
    # switch interval, as here)
    n = lazy.DEFER_MIN_ITEMS
    base = np.arange(n, dtype=np.float32)
    wrong = []

    def work():
        for _ in range(300):
            x = ng.tensor(base)
            ys = [x * float(k) for k in range(1, 6)]
            x.add_(1.0)
            for k, y in enumerate(ys, 1):
                if y.numpy()[1] != k:
                    wrong.append(k)
                    return

    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(before)
    assert wrong == []
