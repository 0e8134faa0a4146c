"""``numbagrad.backends.cuda``: PyTorch's CUDA math switches, settable and without effect
(numbagrad's CUDA matmuls never use TF32 nor reduced-precision reductions)."""

from .. import cuda as _cuda


class _MatmulFlags:
    """``backends.cuda.matmul``: ``allow_tf32`` (False, as PyTorch's default) and the
    reduced-precision reduction flags."""

    def __init__(self):
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True


matmul = _MatmulFlags()


def is_built() -> bool:
    """Whether numbagrad can run on CUDA here (numba-cuda and a GPU, or the simulator)."""
    return _cuda.is_available()


def flash_sdp_enabled() -> bool:
    return False


def mem_efficient_sdp_enabled() -> bool:
    return False


def math_sdp_enabled() -> bool:
    return True
