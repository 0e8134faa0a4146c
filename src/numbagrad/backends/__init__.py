"""``numbagrad.backends``: the switches ``torch.backends`` offers, for scripts that set them.

numbagrad has no cuDNN, no MPS and no TF32 arithmetic: the flags can be read and set as in
PyTorch and change nothing (float32 matmuls are always computed in float32)."""

from . import cpu, cuda, cudnn, mkldnn, mps  # noqa: F401
