"""``numbagrad.nn.parallel``: DataParallel (one device: the module called directly) and
DistributedDataParallel (on MPI, ``numbagrad.distributed``)."""

from .data_parallel import DataParallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
