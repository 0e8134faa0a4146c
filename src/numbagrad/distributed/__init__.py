"""``numbagrad.distributed``: data-parallel training on MPI, with PyTorch's names.

Start N processes with ``mpiexec -n N python train.py``; each calls
``init_process_group("mpi")``. mpi4py is imported then, never at ``import numbagrad``
(``pip install 'numbagrad[mpi]'`` installs it with MPICH).
"""

from .c10d import (  # noqa: F401
    GroupMember, ProcessGroup, RedOpType, ReduceOp, Work, all_gather, all_gather_into_tensor,
    all_reduce, barrier, broadcast, destroy_process_group, gather, get_backend, get_rank,
    get_world_size, group, init_process_group, is_available, is_gloo_available, is_initialized,
    is_mpi_available, is_nccl_available, reduce, reduce_scatter, reduce_scatter_tensor, scatter,
)
from .reducer import Reducer  # noqa: F401

__all__ = [
    "GroupMember", "ProcessGroup", "ReduceOp", "Work", "all_gather", "all_gather_into_tensor",
    "all_reduce", "barrier", "broadcast", "destroy_process_group", "gather", "get_backend",
    "get_rank", "get_world_size", "group", "init_process_group", "is_available",
    "is_gloo_available", "is_initialized", "is_mpi_available", "is_nccl_available", "reduce",
    "reduce_scatter", "reduce_scatter_tensor", "scatter",
]
