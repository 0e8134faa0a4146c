"""All-reduce bandwidth of a 100 MB float32 gradient: numbagrad.distributed against mpi4py
alone on a NumPy array (the floor: the same MPI call, no tensor around it).

    mpiexec -n 2 python benchmarks/bench_mpi.py [--mb 100] [--rounds 10]

Prints, from rank 0, the best round of each as seconds and as algorithm bandwidth (bytes
reduced per second) and bus bandwidth (algbw * 2(p-1)/p: what each link carried in a ring).
Not an asv benchmark (it needs mpiexec): asv imports this module and finds nothing to time.
"""

from __future__ import annotations

import argparse
import time


def _best(fn, rounds, comm):
    best = float("inf")
    for _ in range(rounds):
        comm.Barrier()
        t0 = time.perf_counter()
        fn()
        comm.Barrier()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=100.0)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()

    import numpy as np
    from mpi4py import MPI

    import numbagrad as torch
    import numbagrad.distributed as dist

    dist.init_process_group("mpi")
    comm = MPI.COMM_WORLD
    p = comm.Get_size()
    n = int(args.mb * 1e6) // 4
    array = np.ones(n, np.float32)
    tensor = torch.ones(n)
    # one warm-up each (first touches of the memory, MPI's buffers)
    comm.Allreduce(MPI.IN_PLACE, array, MPI.SUM)
    dist.all_reduce(tensor)
    floor = _best(lambda: comm.Allreduce(MPI.IN_PLACE, array, MPI.SUM), args.rounds, comm)
    ours = _best(lambda: dist.all_reduce(tensor), args.rounds, comm)
    if comm.Get_rank() == 0:
        nbytes = n * 4
        print(f"all-reduce of {nbytes / 1e6:.0f} MB float32 on {p} ranks "
              f"(best of {args.rounds}; {MPI.Get_library_version().splitlines()[0]})")
        for name, t in (("mpi4py Allreduce on NumPy", floor),
                        ("numbagrad.distributed.all_reduce", ours)):
            algbw = nbytes / t / 1e9
            print(f"  {name:34s} {t * 1e3:8.1f} ms  algbw {algbw:6.2f} GB/s  "
                  f"busbw {algbw * 2 * (p - 1) / p:6.2f} GB/s")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
