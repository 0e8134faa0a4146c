"""``numbagrad.cuda``: what the CUDA backend offers.

The CUDA backend is not built yet, so no device is available: ``is_available()`` is False on
every machine (also one with a GPU) and ``numbagrad.device('cuda')`` is refused. Code written
as ``device = 'cuda' if torch.cuda.is_available() else 'cpu'`` runs on the CPU.
"""

from __future__ import annotations


def is_available() -> bool:
    """False: this build of numbagrad has no CUDA backend yet."""
    return False


def device_count() -> int:
    return 0


def synchronize(device=None) -> None:
    """Wait for the GPU; without a CUDA backend there is nothing to wait for, so it refuses."""
    raise RuntimeError("numbagrad was built without a CUDA backend: no CUDA device is available")
