import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

import numbagrad as ng  # noqa: E402


from devices import DEVICES  # noqa: E402


@pytest.fixture(params=DEVICES)
def device(request):
    """Each test that takes ``device`` runs on the CPU and on CUDA; factories default to it."""
    ng.set_default_device(request.param)
    yield request.param
    ng.set_default_device(None)


@pytest.fixture(params=["numbagrad", "torch"])
def lib(request):
    """Tests written once for both libraries run on numbagrad and, when it is installed, on
    PyTorch, against the same literals (PyTorch's values and messages)."""
    if request.param == "numbagrad":
        return ng
    return pytest.importorskip("torch", reason="torch not installed")


@pytest.fixture(autouse=True)
def _seed(monkeypatch):
    np.random.seed(0)
    ng.manual_seed(0)
    # (the warnings PyTorch gives once per process: once per test here, so a test's outcome
    # does not depend on which tests ran before it)
    ng._tensor._WARNED_ONCE.clear()
    # (the same for the budget of new expression kernels a process compiles, lazy.MAX_KERNELS:
    # once earlier tests spent it, a region that should fuse runs node by node)
    monkeypatch.setattr(ng.ops.lazy, "_kernel_keys", set())
