"""Backends: ``cpu`` (NumPy storage, ``@njit`` kernels) and ``gpu`` (device storage,
``@cuda.jit`` kernels). Both generate their kernels from the same scalar op definitions and
offer the same functions (``base.Backend``), so ops pick one with ``of(array)``. ``gpu`` is
imported on first use.
"""

from __future__ import annotations

import numpy as np

from . import cpu
from .base import Backend


def gpu_module() -> Backend:
    """The CUDA backend (imports numba.cuda on first use)."""
    from . import gpu  # (here: it imports numba.cuda, which a CPU program never loads)

    return gpu


def of(a) -> Backend:
    """The backend module that owns array ``a``: the GPU's only for device arrays, so that a
    CPU program never imports numba-cuda (a NumPy scalar is host data too)."""
    if type(a) is np.ndarray or not hasattr(type(a), "__cuda_array_interface__"):
        return cpu
    from . import gpu  # (here: it imports numba.cuda, which a CPU program never loads)

    return gpu

