"""``numbagrad.nn``: the functional API (``numbagrad.nn.functional``)."""

from . import functional

__all__ = ["functional"]
