"""``numbagrad.backends.cpu``."""


def get_cpu_capability() -> str:
    """The vector instruction set numbagrad's kernels use: whatever Numba's LLVM targets for
    this CPU (reported as PyTorch's name for plain builds)."""
    return "DEFAULT"
