"""``numbagrad.nn.parallel``: DistributedDataParallel (on MPI, ``numbagrad.distributed``)."""

from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
