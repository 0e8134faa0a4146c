"""``numbagrad.utils``: PyTorch's ``torch.utils`` namespace (``data``)."""

from . import data

__all__ = ["data"]
