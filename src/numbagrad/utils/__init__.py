"""``numbagrad.utils``: PyTorch's ``torch.utils`` namespace (``data``, ``checkpoint``)."""

from . import checkpoint, data

__all__ = ["checkpoint", "data"]
