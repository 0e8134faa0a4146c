"""``numbagrad.linalg``: the functions of ``torch.linalg`` numbagrad has. The factorizations
run NumPy's LAPACK on the host: a CUDA tensor's values go there and back."""

from __future__ import annotations

import math

from . import dtypes as D
from .ops import decompositions as F
from .ops import reduce as R
from .ops.decompositions import (
    linalg_cholesky,
    linalg_eigh,
    linalg_householder_product,
    linalg_lstsq,
    linalg_pinv,
    linalg_qr,
    linalg_slogdet,
    linalg_solve_triangular,
    linalg_svd,
    matrix_exp,
    matrix_power,
)
from .ops.indexing import diagonal as _diagonal
from .ops.indexing import where
from .ops.linalg import (
    _NAMES,
    LinAlgError,
    linalg_cross,
    linalg_det,
    linalg_inv,
    linalg_solve,
    matmul,
    vdot,
)
from .ops.movement import cat

_SCALAR = D.SCALAR_TYPE  # (a dtype's name in PyTorch's messages: Long, Float)

__all__ = ["LinAlgError", "cholesky", "cond", "cross", "det", "diagonal", "eigh", "eigvalsh",
           "householder_product", "inv", "lstsq", "matmul", "matrix_exp", "matrix_norm",
           "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve",
           "solve_triangular", "svd", "svdvals", "vander", "vecdot", "vector_norm"]


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
    if ord in ("nuc", 2, -2):
        # over the singular values, the two dims moved last (PyTorch's permutation)
        rows, cols = (d % A.ndim for d in dim)
        perm = [k for k in range(A.ndim) if k not in (rows, cols)] + [rows, cols]
        S = svdvals(A.permute(perm))
        reduce = {"nuc": S.sum, 2: S.amax, -2: S.amin}[ord]
        if not keepdim:
            return reduce(-1)
        back = sorted(range(A.ndim), key=perm.__getitem__)
        return reduce(-1, keepdim=True).unsqueeze(-1).permute(back)
    if ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
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


# ---------------------------------------------------------------- factorizations


def _check_driver(A, driver):
    # (a CUDA tensor's driver would pick cuSOLVER's algorithm; all run on the host here)
    if driver is not None and A.device.type == "cpu":
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on "
                           "CUDA inputs with cuSOLVER backend.")


def svd(A, full_matrices=True, *, driver=None):
    """``U, S, Vh`` with ``A = U diag(S) Vh``, S descending (LinalgSvdBackward0)."""
    _check_driver(A, driver)
    return linalg_svd(A, full_matrices)


def svdvals(A, *, driver=None):
    """The singular values of ``A``, descending."""
    _check_driver(A, driver)
    return linalg_svd(A, False, F._needs_vectors(A)).S


def qr(A, mode="reduced"):
    """``Q, R`` with ``A = Q R``: mode 'reduced', 'complete' or 'r' (R only, Q empty)."""
    return linalg_qr(A, mode)


def householder_product(A, tau):
    """The first ``n`` columns of the product of the Householder reflectors
    ``I - tau_i v_i v_i^T`` stored below the diagonal of ``A`` (..., m, n), as ``geqrf``
    leaves them (LinalgHouseholderProductBackward0)."""
    return linalg_householder_product(A, tau)


def cholesky(A, *, upper=False):
    """The lower-triangular ``L`` with ``A = L L^T`` (``upper``: ``L^T``)."""
    return linalg_cholesky(A, upper)


def eigh(A, UPLO="L"):
    """The eigenvalues (ascending) and eigenvectors of the symmetric matrices of ``A``."""
    return linalg_eigh(A, UPLO)


def eigvalsh(A, UPLO="L"):
    """The eigenvalues (ascending) of the symmetric matrices of ``A``."""
    return linalg_eigh(A, UPLO, F._needs_vectors(A)).eigenvalues


def slogdet(A):
    """The sign and the log of the absolute value of each determinant of ``A``."""
    return linalg_slogdet(A)


def pinv(A, *, atol=None, rtol=None, hermitian=False):
    """The pseudo-inverse of each matrix of ``A`` (LinalgPinvBackward0)."""
    return linalg_pinv(A, atol, rtol, hermitian)


def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution of ``A X = B``: ``(solution, residuals, rank,
    singular_values)``, filled as PyTorch fills them for ``driver`` (default 'gelsy')."""
    return linalg_lstsq(A, B, rcond, driver)


def solve_triangular(A, B, *, upper=None, left=True, unitriangular=False):
    """``X`` with ``A X = B`` (``left``) or ``X A = B``, ``A`` read as upper or lower
    triangular (LinalgSolveTriangularBackward0)."""
    if upper is None:  # (required: PyTorch's argument parser's words)
        raise TypeError('linalg_solve_triangular() missing 1 required positional arguments: '
                        '"upper"')
    return linalg_solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    """The number of singular values of each matrix of ``A`` over ``max(atol, rtol * the
    largest)`` (rtol by default eps * max(m, n) when atol is not given)."""
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least "
                           "2 dimensions.")
    if not A.dtype.is_floating_point:
        raise RuntimeError("This function doesn't handle types other than float and double")
    S = eigvalsh(A).abs() if hermitian else svdvals(A)
    if S.shape[-1] == 0:  # (no singular values: rank 0, as PyTorch's)
        return S.new_zeros(tuple(S.shape[:-1]), dtype=D.int64)
    atol, rtol = F._cutoff_rtol(A._data, atol, rtol)
    tol = (S.amax(-1, keepdim=True) * rtol).clamp_min(atol)
    return (S > tol).sum(-1)


def multi_dot(tensors):
    """The product of the matrices ``tensors`` (the first and last may be vectors) in the
    order of fewest multiplications, as PyTorch's (mm's, then a view)."""
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    ts = list(tensors)
    out_shape = []
    for k, which, at in ((0, "first", 0), (n - 1, "last", -1)):
        t = tensors[k]
        if t.ndim == 1:
            ts[k] = t.unsqueeze(at)
        elif t.ndim == 2:
            out_shape.append(t.shape[0 if k == 0 else 1])
        else:
            raise RuntimeError(f"multi_dot(): the {which} tensor must be 1D or 2D but got "
                               f"{t.ndim}D")
    for i in range(1, n - 1):
        if tensors[i].ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i].ndim}D")
    for i in range(1, n):
        if ts[i].dtype is not ts[0].dtype:
            raise RuntimeError("multi_dot(): all tensors must have be the same dtype but tensor 0 "
                               f"is {_NAMES[ts[0].dtype.name]} and tensor {i} "
                               f"{_NAMES[ts[i].dtype.name]}")
        if ts[i - 1].shape[-1] != ts[i].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes "
                               f"{list(tensors[i - 1].shape)} and {list(tensors[i].shape)} "
                               "cannot be multiplied")
    if n == 2:
        result = ts[0].mm(ts[1])
    elif n == 3:
        a, b, c, d = ts[0].shape[0], ts[1].shape[0], ts[2].shape[0], ts[2].shape[1]
        if a * c * (b + d) > b * d * (a + c):
            result = ts[0].mm(ts[1].mm(ts[2]))
        else:
            result = ts[0].mm(ts[1]).mm(ts[2])
    else:
        result = _chain(ts, _chain_order(ts), 0, n - 1)
    return result.view(out_shape)


def _chain_order(ts):
    """The matrix-chain split of least cost: ``split[i][j]``, where the product of matrices
    i..j is best split (the first split of least cost, as PyTorch's)."""
    n = len(ts)
    p = [ts[0].shape[0]] + [t.shape[1] for t in ts]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] is None or q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def _chain(ts, split, i, j):
    if i == j:
        return ts[i]
    k = split[i][j]
    return _chain(ts, split, i, k).mm(_chain(ts, split, k + 1, j))


def cond(A, p=None):
    """The condition number of each matrix of ``A`` in the ``p``-norm: the ratio of extreme
    singular values (p None, 2, -2), else ``norm(A) * norm(A^-1)`` (inf for a singular A)."""
    if A.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if A.numel() == 0:  # (NumPy has no condition number for 0 x 0 matrices: PyTorch's 0)
        return A.new_zeros(tuple(A.shape[:-2]))
    if p in (None, 2, -2):
        S = svdvals(A)
        big, small = S.narrow(-1, 0, 1), S.narrow(-1, -1, 1)
        return (small / big if p == -2 else big / small).squeeze(-1)
    name = p if isinstance(p, str) else ("inf" if p == math.inf else "-inf" if p == -math.inf
                                         else int(p))
    op = f"linalg.cond(ord={name})"
    if A.shape[-2] != A.shape[-1]:
        raise RuntimeError(f"{op}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    # (an inverse of infinities where A is singular, as PyTorch's inv_ex and masked_fill)
    singular = matrix_rank(A.detach()) < A.shape[-1]
    eye = F._eye_like(A.new_ones(A.shape[-1]))
    singular = singular[..., None, None]
    inverse = where(singular, math.inf, inv(where(singular, eye, A)))
    return (matrix_norm(A, p) * matrix_norm(inverse, p)).nan_to_num(math.nan, math.inf)


def vecdot(x, y, *, dim=-1):
    """The dot products of ``x`` and ``y`` along ``dim`` (broadcast): ``(x * y).sum(dim)``,
    or one vdot for two vectors, as PyTorch's."""
    for t in (x, y):
        if not t.dtype.is_floating_point:
            raise RuntimeError("linalg.vecdot: Expected a floating point or complex tensor as "
                               f"input. Got {_SCALAR[t.dtype.name]}")
    if x.dtype is not y.dtype:
        raise RuntimeError("linalg.vecdot: Expected x and y to have the same dtype, but found x "
                           f"of type {_SCALAR[x.dtype.name]} and y of type "
                           f"{_SCALAR[y.dtype.name]} instead")
    if x.ndim == 1 and y.ndim == 1:
        return vdot(x, y)
    return (x * y).sum(dim)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """``A.diagonal`` with the last two dims by default."""
    return _diagonal(A, offset, dim1, dim2)


def vander(x, *, N=None):
    """The Vandermonde matrices of the vectors of ``x``: powers 0 to N - 1 along a new last
    dim (ones, then running products: CatBackward0, as PyTorch's)."""
    if x.dtype.name == "bool":
        raise RuntimeError("linalg.vander supports floating point, complex, and integer tensors, "
                           "but got Bool")
    x = x.unsqueeze(-1) if x.ndim == 0 else x
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = x.unsqueeze(-1).expand(*x.shape, n - 1).cumprod(-1)
    return cat([powers.new_ones(*x.shape, 1), powers], -1)
