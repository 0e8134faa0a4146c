"""``numbagrad.linalg``: the functions of ``torch.linalg`` numbagrad has."""

from __future__ import annotations

from .ops.linalg import linalg_cross


def cross(input, other, *, dim=-1):
    """The cross product of 3-vectors along ``dim`` (LinalgCrossBackward0)."""
    return linalg_cross(input, other, dim)
