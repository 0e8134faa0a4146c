"""Helpers of the DataLoader: collation and worker information."""

from . import collate, worker

__all__ = ["collate", "worker"]
