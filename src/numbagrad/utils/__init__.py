"""``numbagrad.utils``: PyTorch's ``torch.utils`` namespace (``data``, ``checkpoint``,
``benchmark``)."""

from . import benchmark, checkpoint, data

__all__ = ["benchmark", "checkpoint", "data"]
