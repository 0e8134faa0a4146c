import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

import numbagrad as ng  # noqa: E402


@pytest.fixture(autouse=True)
def _seed():
    np.random.seed(0)
    ng.manual_seed(0)
