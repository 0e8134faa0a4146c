"""``numbagrad.cuda``: the CUDA device, as ``torch.cuda`` exposes it.

Nothing here imports CUDA until it is asked for: ``import numbagrad`` stays fast on a machine
with no GPU and no driver. The backend needs the ``numba-cuda`` package (``pip install
numbagrad[cuda]``) and either an NVIDIA GPU or Numba's CUDA simulator
(``NUMBA_ENABLE_CUDASIM=1``, which runs every kernel in Python: for tests, not for speed).
One device, ``cuda:0``, is supported.
"""

from __future__ import annotations

from .. import backend

_available: bool | None = None


def _probe() -> bool:
    global _available
    if _available is None:
        try:
            import os
            import warnings

            # small tensors launch small grids: see backend/gpu.py
            os.environ.setdefault("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                from numba import cuda

                _available = bool(cuda.is_available())
        except Exception:  # no numba-cuda, no driver, no libraries: no CUDA
            _available = False
    return _available


def is_available() -> bool:
    """Whether a CUDA device (or the CUDA simulator) can be used."""
    return _probe()


def device_count() -> int:
    if not _probe():
        return 0
    from numba import cuda

    return len(cuda.gpus) if hasattr(cuda, "gpus") else 1


def current_device() -> int:
    _require(None)
    return 0


def manual_seed(seed) -> None:
    """Accepted and ignored: numbagrad draws CUDA tensors' random numbers from the default
    generator, which ``numbagrad.manual_seed`` seeds; there is no CUDA generator of its own
    (PyTorch ignores this call too where CUDA is not available)."""
    int(seed)


def manual_seed_all(seed) -> None:
    """As ``manual_seed``: one device, and no CUDA generator of its own."""
    int(seed)


def is_simulator() -> bool:
    """True when kernels run in Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``)."""
    import numba

    return bool(numba.config.ENABLE_CUDASIM)


def get_device_name(device=None) -> str:
    _require(None)
    if is_simulator():
        return "Numba CUDA simulator"
    from numba import cuda

    name = cuda.get_current_device().name
    return name.decode() if isinstance(name, bytes) else str(name)


def empty_cache() -> None:
    """Give the device buffers numbagrad keeps for reuse back to the driver.

    Freed tensors' buffers stay in a cache, by size, so that the next tensor of that size
    needs no allocation (as PyTorch's caching allocator); buffers in use are not touched."""
    if not _probe():
        return
    backend.gpu_module().empty_cache()


def synchronize(device=None) -> None:
    """Wait until every kernel launched so far has finished."""
    _require(None)
    backend.gpu_module().synchronize()


def _require(index) -> None:
    """Raise PyTorch-style errors when CUDA (or device ``index``) cannot be used."""
    if not _probe():
        raise RuntimeError(
            "Found no NVIDIA driver on your system. numbagrad needs an NVIDIA GPU with its "
            "driver and the numba-cuda package (pip install numbagrad[cuda]); to run CUDA code "
            "without a GPU, set NUMBA_ENABLE_CUDASIM=1 for Numba's CUDA simulator."
        )
    if index is not None and index != 0:
        raise RuntimeError(
            "CUDA error: invalid device ordinal (numbagrad supports one device, cuda:0)"
        )


def seed_all() -> None:
    """As ``manual_seed``: nothing to seed."""
