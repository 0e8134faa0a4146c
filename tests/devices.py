"""Which devices tests run on: the CPU always, CUDA under ``pytest -m cuda``.

``make test`` runs ``-m "not cuda and not ptx"``, then ``-m cuda`` with NUMBA_ENABLE_CUDASIM=1;
on a GPU machine ``pytest -m cuda`` runs the CUDA tests for real.
"""

from __future__ import annotations

import pytest

import numbagrad as ng

# a CUDA test: selected by -m cuda, skipped with a reason where there is no device or simulator
CUDA = [
    pytest.mark.cuda,
    pytest.mark.skipif(
        not ng.cuda.is_available(),
        reason="no CUDA device (run with NUMBA_ENABLE_CUDASIM=1 for the simulator)",
    ),
]

DEVICES = ["cpu", pytest.param("cuda", marks=CUDA)]

# every test of a module runs once per device (conftest's ``device`` fixture sets the default)
on_each_device = pytest.mark.usefixtures("device")

# a test that stays on the CPU in a module that runs on each device
cpu_only = pytest.mark.parametrize("device", ["cpu"], indirect=True)


def on_cuda(fn):
    """Mark one test as a CUDA test."""
    for mark in CUDA:
        fn = mark(fn)
    return fn
