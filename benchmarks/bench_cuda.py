"""asv benchmarks W1, W2, W4 and W5 on a CUDA device; skipped when there is no GPU.

The simulator does not count: its kernels run as Python threads, so timings there mean nothing.
"""

import numbagrad as ng

from . import workloads as W


def _require_gpu():
    if not ng.cuda.is_available() or ng.cuda.is_simulator():
        raise NotImplementedError("no CUDA GPU")  # asv marks the benchmark as skipped


class CudaW1:
    params = ([10**5, 10**6, 10**7], ["float32", "float64"])
    param_names = ["n", "dtype"]

    def setup(self, n, dtype):
        _require_gpu()
        self.run = W.w1(ng, n, dtype, device="cuda")

    def time_w1(self, n, dtype):
        self.run()


class CudaW2:
    def setup(self):
        _require_gpu()
        self.run = W.w2(ng, device="cuda")

    def time_w2(self):
        self.run()


class CudaW4:
    params = (["sum", "mean", "max"],)
    param_names = ["which"]

    def setup(self, which):
        _require_gpu()
        self.run = W.w4(ng, which, device="cuda")

    def time_w4(self, which):
        self.run()


class CudaW5:
    def setup(self):
        _require_gpu()
        self.run = W.w5(ng, device="cuda")

    def time_w5(self):
        self.run()
