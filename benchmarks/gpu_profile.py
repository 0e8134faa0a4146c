"""Where a small CUDA step's time goes on the host: W1 at 1e5 and W2 on a GPU, timed and then
under cProfile (the top functions by own time and by cumulative time).

    python benchmarks/gpu_profile.py

Small CUDA calls are bound by the host's Python per op (docs/PERFORMANCE.md), so this profile,
not the kernels' time, says what to make faster. Needs a CUDA GPU.
"""

from __future__ import annotations

import cProfile
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numbagrad as lib  # noqa: E402
import workloads  # noqa: E402


def main():
    if not lib.cuda.is_available() or lib.cuda.is_simulator():
        sys.exit("needs a CUDA GPU (the simulator's timings mean nothing)")
    cases = [("W1 n=1e5", lambda: workloads.w1(lib, 10**5, device="cuda")),
             ("W2", lambda: workloads.w2(lib, device="cuda"))]
    for name, make in cases:
        run = make()
        for _ in range(20):
            run()
        start = time.perf_counter()
        for _ in range(100):
            run()
        print(f"{name}: {(time.perf_counter() - start) * 10:.3f} ms a step", flush=True)
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(100):
            run()
        profile.disable()
        stats = pstats.Stats(profile)
        stats.sort_stats("tottime").print_stats(25)
        stats.sort_stats("cumtime").print_stats(35)


if __name__ == "__main__":
    main()
