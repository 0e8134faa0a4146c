"""``numbagrad.accelerator``: the device-agnostic accelerator API of ``torch.accelerator``.

numbagrad's one accelerator is CUDA (``numbagrad.cuda``). It has no build without CUDA
support, so "available at compilation time" (PyTorch's ``current_accelerator()`` without
``check_available``) is read as available now: both ask ``numbagrad.cuda.is_available()``.
"""

from __future__ import annotations

from . import cuda
from ._tensor import device


def _require() -> None:
    if not cuda.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")


def is_available() -> bool:
    """Whether an accelerator (a CUDA device, or Numba's CUDA simulator) can be used."""
    return cuda.is_available()


def current_accelerator(check_available: bool = False) -> device | None:
    """``device(type='cuda')`` where CUDA can be used, else None."""
    return device("cuda") if cuda.is_available() else None


def device_count() -> int:
    return cuda.device_count()


def current_device_index() -> int:
    _require()
    return cuda.current_device()


def set_device_index(device) -> None:
    _require()
    index = device if isinstance(device, int) or device is None else device.index
    cuda._require(index)


def synchronize(device=None) -> None:
    """Wait until every kernel launched so far has finished."""
    _require()
    cuda.synchronize(device)
