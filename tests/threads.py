"""Running a piece of a test on 1 and on 2 of Numba's threads (results that must not depend
on the thread count)."""

from __future__ import annotations

import pytest


def on_one_and_two_threads(fn):
    """``(fn() with 1 thread, fn() with 2)``; skips the test when Numba has fewer than 2."""
    import numba

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one Numba thread: nothing to compare")
    before = numba.get_num_threads()
    out = []
    try:
        for k in (1, 2):
            numba.set_num_threads(k)
            out.append(fn())
    finally:
        numba.set_num_threads(before)
    return tuple(out)
