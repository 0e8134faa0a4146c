"""Run under ``mpiexec -n 2``: rank 1 raises while rank 0 waits in a collective that rank 1
never joins. The job must end with an error (the traceback printed), not hang."""

import numbagrad as torch
import numbagrad.distributed as dist

dist.init_process_group("mpi")
if dist.get_rank() == 1:
    raise ValueError("rank 1 fails on purpose")
dist.all_reduce(torch.ones(3))
print("rank 0 passed a collective rank 1 never joined", flush=True)
