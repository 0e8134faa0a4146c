"""``numbagrad.linalg``: the functions of ``torch.linalg`` numbagrad has (inv, det and solve
on the CPU only)."""

from __future__ import annotations

import math

from .ops import reduce as R
from .ops.linalg import LinAlgError, linalg_cross, linalg_det, linalg_inv, linalg_solve

__all__ = ["LinAlgError", "cross", "det", "inv", "matrix_norm", "norm", "solve", "vector_norm"]


def cross(input, other, *, dim=-1):
    """The cross product of 3-vectors along ``dim`` (LinalgCrossBackward0)."""
    return linalg_cross(input, other, dim)


def inv(A):
    """The inverse of each square matrix in ``A`` (..., n, n) (LinalgInvExBackward0); a
    singular one is a ``LinAlgError``."""
    return linalg_inv(A)


def det(A):
    """The determinant of each square matrix in ``A`` (LinalgDetBackward0)."""
    return linalg_det(A)


def solve(A, B, *, left=True):
    """``X`` with ``A X = B`` (LinalgSolveExBackward0); ``B`` (..., n, k) or (..., n)."""
    if not left:
        raise NotImplementedError("linalg.solve with left=False is not implemented in numbagrad")
    return linalg_solve(A, B)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The ``ord``-norm of ``x`` seen as a vector over ``dim`` (LinalgVectorNormBackward0)."""
    if dtype is not None:
        x = x.to(dtype)
    if ord == 2 and (dim is None or isinstance(dim, int) or len(dim) <= 2):
        return R.norm(x, dim, keepdim)  # (its own kernel; it reads 3 dims as an error)
    return R.vector_norm(x, ord, dim, keepdim)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """The ``ord``-norm of the matrices of ``A`` over the two dims ``dim``: ``'fro'``, or the
    induced 1 / inf norms (largest column / row sum of ``|A|``) and -1 / -inf (smallest)."""
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    if len(dim) != 2:
        raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got "
                           + " ".join(str(d) for d in dim))
    if dtype is not None:
        A = A.to(dtype)
    if ord == "fro":
        return vector_norm(A, 2, dim, keepdim)
    if ord not in (1, -1, math.inf, -math.inf):
        raise NotImplementedError(f"linalg.matrix_norm with ord={ord!r} is not implemented in "
                                  "numbagrad (only 'fro', 1, -1, inf, -inf)")
    rows, cols = (d % A.ndim for d in dim)
    # ord 1: over the columns' sums; inf: over the rows' sums
    summed = rows if ord in (1, -1) else cols
    sums = A.abs().sum(summed, keepdim=True)
    both = (rows, cols)  # (the summed one has size 1 now)
    return sums.amax(both, keepdim=keepdim) if ord > 0 else sums.amin(both, keepdim=keepdim)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """``vector_norm`` or ``matrix_norm`` as PyTorch chooses: without ``ord``, the 2-norm of
    ``A`` flattened (or over ``dim``); with ``ord``, the matrix norm for a 2-d ``A`` or two
    ``dim`` and the vector norm for a 1-d ``A`` or one ``dim``."""
    if ord is None:
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if (dim is None and A.ndim == 2) or (dim is not None and not isinstance(dim, int)
                                         and len(dim) == 2):
        return matrix_norm(A, ord, (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    if dim is None and A.ndim != 1:
        raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be "
                           f"1D or 2D. Got {A.ndim}D.")
    return vector_norm(A, ord, dim, keepdim, dtype=dtype)
