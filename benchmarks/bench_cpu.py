"""asv benchmarks W1-W6 on the CPU (see workloads.py for what each one runs).

Every ``setup`` builds the workload and calls it once, so JIT compilation (or loading the
on-disk kernel cache) is never inside a timed region.
"""

import subprocess
import sys
import tempfile

import numba
import numbagrad as ng

from . import workloads as W


class W1ExpPoly:
    """``(x**2 * exp(x)).sum().backward()``."""

    params = ([10**5, 10**6, 10**7], ["float32", "float64"])
    param_names = ["n", "dtype"]
    timeout = 600

    def setup(self, n, dtype):
        self.run = W.w1(ng, n, dtype)

    def time_w1(self, n, dtype):
        self.run()

    def peakmem_w1(self, n, dtype):
        self.run()


class W1Fusion:
    """W1 with backward fusion on and off (ops/fusion.py): what one fused kernel saves."""

    params = ([10**5, 10**6], [True, False])
    param_names = ["n", "fused"]

    def setup(self, n, fused):
        from numbagrad.autograd.grad_mode import backward_fusion

        backward_fusion.enabled = fused
        self.run = W.w1(ng, n)

    def teardown(self, n, fused):
        from numbagrad.autograd.grad_mode import backward_fusion

        backward_fusion.enabled = True

    def time_w1(self, n, fused):
        self.run()


class W5Lazy:
    """W5 with forward fusion off, on, and on with the loss left to the backward kernel
    (ops/lazy.py): what deferring ``a + b`` and the product saves (the sum reads ``a`` once;
    nothing is written forward), then what summing the loss in the backward pass saves (the
    forward reads nothing)."""

    params = (["off", "forward", "loss"],)
    param_names = ["lazy"]

    def setup(self, lazy):
        from numbagrad.ops import lazy as module

        module.ENABLED = lazy != "off"
        module.LATER = lazy == "loss"  # (an attribute older commits do not read)
        self.run = W.w5(ng)

    def teardown(self, lazy):
        from numbagrad.ops import lazy as module

        module.ENABLED = module.LATER = True

    def time_w5(self, lazy):
        self.run()


class W2MLP:
    """One forward + backward step of an MLP 784-512-10, batch 256, with cross-entropy or a
    mean-squared error written out (``d = out - t; (d * d).mean()``)."""

    params = (["float32", "float64"], ["cross_entropy", "mse"])
    param_names = ["dtype", "loss"]

    def setup(self, dtype, loss):
        self.run = W.w2(ng, dtype, loss=loss)

    def time_w2(self, dtype, loss):
        self.run()

    def peakmem_w2(self, dtype, loss):
        self.run()


class W2NN:
    """W2's step spelled with modules: ``nn.Sequential`` of ``nn.Linear``/``nn.ReLU``,
    ``nn.CrossEntropyLoss()`` and an optimizer's ``zero_grad`` and ``step``."""

    params = (["sgd", "adam"],)
    param_names = ["optimizer"]

    def setup(self, optimizer):
        self.run = W.w2_nn(ng, optimizer=optimizer)

    def time_w2_nn(self, optimizer):
        self.run()


class W3Chain:
    """100 ops (mul, add, sin) on small tensors: the per-op Python overhead, with tensor or
    Python-number operands, on 1 element or a 16x16 tensor."""

    params = ([True, False], ["tensor", "scalar"], ["1", "16x16"])
    param_names = ["grad", "operands", "shape"]

    def setup(self, grad, operands, shape):
        self.run = W.w3(ng, grad, operands=operands, shape=(1,) if shape == "1" else (16, 16))

    def time_w3(self, grad, operands, shape):
        self.run()


class W4Reduce:
    """``x.sum()``, ``x.mean()``, ``(x*x).max()`` and backward, n = 1e7."""

    params = (["sum", "mean", "max"],)
    param_names = ["which"]
    timeout = 600

    def setup(self, which):
        self.run = W.w4(ng, which)

    def time_w4(self, which):
        self.run()


class W5Broadcast:
    """``((a + b) * a).sum().backward()`` with a (1000, 1000), b (1000,)."""

    def setup(self):
        self.run = W.w5(ng)

    def time_w5(self):
        self.run()


class W7SmallBatch:
    """10 steps of a batch-10 linear regression loop: minibatch fancy indexing, a squared
    loss, backward, SGD under ``no_grad``."""

    def setup(self):
        self.run = W.w7(ng)

    def time_w7(self):
        self.run()


class W7NN:
    """W7's loop spelled with modules: ``nn.Linear(2, 1)``, ``nn.MSELoss()``, an optimizer."""

    params = (["sgd", "adam"],)
    param_names = ["optimizer"]

    def setup(self, optimizer):
        self.run = W.w7_nn(ng, optimizer=optimizer)

    def time_w7_nn(self, optimizer):
        self.run()


class W6Startup:
    """A new interpreter: ``import numbagrad`` plus one W1 at n = 1e3.

    ``warm``: the on-disk kernel cache already holds the kernels (``setup`` fills it).
    ``cold``: every run starts from an empty cache directory, so every kernel compiles.
    """

    timeout = 600
    repeat = (1, 3, 600.0)
    number = 1

    def setup(self):
        # fill the default cache once, outside the timed region
        subprocess.run([sys.executable, "-c", W.w6_source("numbagrad")], check=True)

    def timeraw_w6_warm(self):
        return W.w6_source("numbagrad")

    def timeraw_w6_cold(self):
        cold = tempfile.mkdtemp(prefix="numbagrad-cold-")
        return f"import os\nos.environ['NUMBAGRAD_CACHE_DIR'] = {cold!r}\n" + W.w6_source(
            "numbagrad"
        )


def track_threads():
    """The number of threads Numba's parallel kernels use in these runs."""
    return numba.get_num_threads()


track_threads.unit = "threads"


class W9Tutorials:
    """Steps of tutorial models spelled as tutorials spell them (workloads.w9)."""

    params = ["lstm", "gru", "embedding", "mlp_norm", "transformer", "loader"]
    param_names = ["model"]

    def setup(self, model):
        self.run = W.w9(ng, model)

    def time_w9(self, model):
        self.run()


class W10MathFunctions:
    """``fn(x).sum().backward()`` at 1e5 elements (workloads.w10)."""

    params = ["tanh", "sigmoid", "log", "sin"]
    param_names = ["fn"]

    def setup(self, fn):
        self.run = W.w10(ng, fn)

    def time_w10(self, fn):
        self.run()


class W11LossFunctions:
    """``F.<loss>(x, t).backward()`` at 1e5 elements (workloads.w11)."""

    params = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
              "binary_cross_entropy_with_logits"]
    param_names = ["loss"]

    def setup(self, loss):
        self.run = W.w11(ng, loss)

    def time_w11(self, loss):
        self.run()


class W12TwoD:
    """A (1000, 100) tensor's forward and backward in 2-d spellings (workloads.w12)."""

    params = ["w1", "rows", "softmax"]
    param_names = ["which"]

    def setup(self, which):
        self.run = W.w12(ng, which)

    def time_w12(self, which):
        self.run()
