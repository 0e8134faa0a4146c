"""What a DataLoader worker knows about itself: ``get_worker_info``.

numbagrad's DataLoader runs its workers in the calling process, one after the other (see
``dataloader.py``); ``get_worker_info`` returns the running worker's information while a
worker fetches, and None otherwise, as in PyTorch's main process.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """The current worker: ``id`` (0 to num_workers - 1), ``num_workers``, ``seed`` (of its
    random streams) and ``dataset`` (its own copy of the dataset)."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The running DataLoader worker's ``WorkerInfo``; None outside a worker."""
    return _worker_info
