import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

import numbagrad as ng  # noqa: E402


def _cuda_param():
    """The ``cuda`` device: runs under ``-m cuda`` on a GPU or in the CUDA simulator."""
    return pytest.param(
        "cuda",
        marks=[
            pytest.mark.cuda,
            pytest.mark.skipif(
                not ng.cuda.is_available(),
                reason="no CUDA device (run with NUMBA_ENABLE_CUDASIM=1 for the simulator)",
            ),
        ],
    )


DEVICES = ["cpu", _cuda_param()]


@pytest.fixture(params=DEVICES)
def device(request):
    """Each test that takes ``device`` runs on the CPU and on CUDA; factories default to it."""
    ng.set_default_device(request.param)
    yield request.param
    ng.set_default_device(None)


@pytest.fixture(autouse=True)
def _seed():
    np.random.seed(0)
    ng.manual_seed(0)
