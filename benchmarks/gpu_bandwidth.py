"""W1 at n = 1e8 on a GPU against the device's copy bandwidth (issue 20's GPU check).

    python benchmarks/gpu_bandwidth.py [--n 100000000]

Prints the device-to-device copy bandwidth (bytes read plus bytes written a second, through
numba-cuda's copy, and through PyTorch's where it has CUDA), then for numbagrad and PyTorch:

- single ops at n under ``no_grad`` (``x * y``, ``exp(x)``, ``x.sum()``), each with the bytes it
  must move, so the bandwidth a kernel reaches reads against the copy's;
- W1 (``(x**2 * exp(x)).sum().backward()``) and the bandwidth it reaches on its fewest bytes:
  the forward reads x, the backward reads x and writes x.grad, 12 bytes an element in float32.
  Neither library fuses W1's kernels, so this figure is far under the copy's for both; the
  single ops say how near each kernel comes.

The last column is the first call's time: for numbagrad, compiling its kernels (NVVM), which
bounds the real-GPU test suite. Times are medians of ``--repeat`` batches of ``--batch`` calls launched back to back, each
batch ended by a synchronize: the device's queue stays full, so the figure is the kernels' time,
not the host's launch latency (a single call followed by a synchronize also times the ~50 us the
host takes to launch it, during which the GPU waits). Needs a CUDA GPU.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

import numbagrad

try:
    import torch
except ImportError:  # PyTorch is only the reference
    torch = None


def median_seconds(fn, sync, repeat, batch=1):
    """(median seconds per call of ``fn`` over ``repeat`` batches of ``batch`` calls, seconds
    of the first call: its kernels' compile when not cached)."""
    start = time.perf_counter()
    fn()
    sync()
    first = time.perf_counter() - start
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(batch):
            fn()
        sync()
        times.append((time.perf_counter() - start) / batch)
    return statistics.median(times), first


def copy_bandwidth(n, repeat):
    """Bytes read + written a second by numba-cuda's device-to-device copy of n float32."""
    from numba import cuda

    src = cuda.to_device(np.ones(n, np.float32))
    dst = cuda.device_array_like(src)
    start, stop = cuda.event(), cuda.event()
    dst.copy_to_device(src)
    cuda.synchronize()
    best = float("inf")
    for _ in range(repeat):
        start.record()
        dst.copy_to_device(src)
        stop.record()
        stop.synchronize()
        best = min(best, cuda.event_elapsed_time(start, stop) / 1e3)
    return 8 * n / best


def rows(lib, n, repeat, batch):
    """(label, (seconds, first call's seconds), bytes) for the single ops and W1 in ``lib`` at
    n float32."""
    gen = np.random.default_rng(0)
    x = lib.tensor(gen.standard_normal(n, dtype=np.float32), device="cuda")
    y = lib.tensor(gen.standard_normal(n, dtype=np.float32), device="cuda")
    sync = lib.cuda.synchronize
    out = []
    with lib.no_grad():
        out.append(("x * y", median_seconds(lambda: x * y, sync, repeat, batch), 12 * n))
        out.append(("exp(x)", median_seconds(lambda: lib.exp(x), sync, repeat, batch), 8 * n))
        out.append(("x.sum()", median_seconds(lambda: x.sum(), sync, repeat, batch), 4 * n))
    leaf = x.clone().requires_grad_(True)

    def w1():
        leaf.grad = None
        (leaf**2 * lib.exp(leaf)).sum().backward()

    out.append(("W1 (fewest bytes)", median_seconds(w1, sync, repeat, batch), 12 * n))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=10**8)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--batch", type=int, default=10)
    args = p.parse_args(argv)
    if not numbagrad.cuda.is_available() or numbagrad.cuda.is_simulator():
        sys.exit("needs a CUDA GPU (the simulator's timings mean nothing)")
    n = args.n
    copy = copy_bandwidth(n, args.repeat)
    print(f"{numbagrad.cuda.get_device_name()}: n = {n:.0e} float32, median of {args.repeat} "
          f"batches of {args.batch} calls")
    print(f"device-to-device copy (numba-cuda): {copy / 1e12:.2f} TB/s (read + written)")
    libs = [("numbagrad", numbagrad)]
    if torch is not None and torch.cuda.is_available():
        libs.append(("PyTorch", torch))
        a = torch.ones(n, device="cuda")
        b = torch.empty_like(a)
        t, _ = median_seconds(lambda: b.copy_(a), torch.cuda.synchronize, args.repeat,
                              args.batch)
        print(f"device-to-device copy (PyTorch {torch.__version__}): {8 * n / t / 1e12:.2f} TB/s")
        copy = max(copy, 8 * n / t)  # the faster copy is the device's rate
        del a, b
    print()
    print("| op | library | time | bandwidth | of the copy's | first call |")
    print("|---|---|---|---|---|---|")
    for name, lib in libs:
        for label, (seconds, first), nbytes in rows(lib, n, args.repeat, args.batch):
            bw = nbytes / seconds
            print(f"| {label} | {name} | {seconds * 1e3:.3g} ms | {bw / 1e12:.2f} TB/s "
                  f"| {bw / copy:.0%} | {first:.3g} s |", flush=True)
        if name == "numbagrad":
            numbagrad.cuda.empty_cache()


if __name__ == "__main__":
    main()
