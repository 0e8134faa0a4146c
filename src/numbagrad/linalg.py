"""``numbagrad.linalg``: the functions of ``torch.linalg`` numbagrad has. The factorizations
run NumPy's LAPACK on the host: a CUDA tensor's values go there and back."""

from __future__ import annotations

import math

import numpy as np

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
from .ops.linalg import LinAlgError, _matrices, linalg_cross, linalg_det, linalg_inv, vdot
from .ops.linalg import matmul as _matmul
from .ops.lu import (
    _failure, ldl_array, ldl_solve_array, linalg_cholesky_ex, linalg_inv_ex, linalg_lu,
    linalg_lu_factor_ex, linalg_lu_solve, linalg_solve, linalg_solve_ex, multi_dot,
)
from .ops.registry import not_implemented
from .tensor import Tensor
from .ops.movement import cat
from .ops.reduce import _named

_SCALAR = D.SCALAR_TYPE  # (a dtype's name in PyTorch's messages: Long, Float)

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eigh",
           "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor", "ldl_factor_ex",
           "ldl_solve", "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matmul",
           "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm",
           "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals",
           "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm"]


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
    """``X`` with ``A X = B`` (not ``left``: ``X A = B``) (LinalgSolveExBackward0); ``B``
    (..., n, k) or (..., n)."""
    if not left:
        return linalg_solve_ex(A, B, False, True, "torch.linalg.solve").result
    return linalg_solve(A, B)


def solve_ex(A, B, *, left=True, check_errors=False):
    """``(result, info)``: ``solve``'s solution and getrf's info of each matrix of ``A`` (its
    own batch shape, int32); a singular matrix raises only with ``check_errors``."""
    return linalg_solve_ex(A, B, left, check_errors)


def inv_ex(A, *, check_errors=False):
    """``(inverse, info)``: ``inv``'s inverses and getrf's info of each matrix (int32); a
    singular matrix raises only with ``check_errors``."""
    return linalg_inv_ex(A, check_errors)


# (the matrix argument is ``input`` where PyTorch's keyword is: cholesky, eigh, the norms, ...;
# ``A`` where it is: det, inv, solve, lu, qr, svd)


def cholesky_ex(input, *, upper=False, check_errors=False):
    """``(L, info)``: ``cholesky``'s factors and potrf's info of each matrix (int32); a matrix
    that is not positive-definite raises only with ``check_errors``."""
    return linalg_cholesky_ex(input, upper, check_errors)


# ---------------------------------------------------------------- LU


def lu_factor(A, *, pivot=True):
    """``(LU, pivots)``: the LU factors of each matrix of ``A`` (..., m, n) packed in one
    matrix, and their row exchanges (int32, 1-based, as LAPACK's getrf); a zero pivot raises
    (LinalgLuFactorExBackward0)."""
    LU, pivots, _ = linalg_lu_factor_ex(A, pivot, True, "torch.linalg.lu_factor")
    return _named("linalg_lu_factor", ("LU", "pivots"))(LU, pivots)


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """``(LU, pivots, info)``: ``lu_factor``'s and getrf's info (int32: the column of the first
    zero pivot, or 0); a zero pivot raises only with ``check_errors``."""
    return _named("linalg_lu_factor_ex", ("LU", "pivots", "info"))(
        *linalg_lu_factor_ex(A, pivot, check_errors))


def lu(A, *, pivot=True):
    """``(P, L, U)`` with ``A = P L U`` (LinalgLuBackward0)."""
    return linalg_lu(A, pivot)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """``X`` with ``A X = B`` given ``lu_factor(A)`` (``adjoint``: ``A^T X = B``; not
    ``left``: ``X A = B``) (LinalgLuSolveBackward0)."""
    return linalg_lu_solve(LU, pivots, B, left, adjoint)


# ---------------------------------------------------------------- LDL (no derivatives in PyTorch)


def _host(t):
    return t._data if t.device.type == "cpu" else t._host()


def _ldl(A, check_errors, op):
    a = _matrices(A, "torch.linalg.ldl_factor_ex")
    ld, piv, info = ldl_array(a)
    if check_errors and info.any():
        # (PyTorch's check fails on an internal assert here; these words are numbagrad's)
        raise _failure(info, op, lambda k: (
            f"D[{k},{k}] is zero and using it on ldl_solve would result in a division by "
            "zero. If you still want to perform the factorization, consider calling "
            "linalg.ldl_factor_ex(A)"), RuntimeError)
    # (recorded without a derivative: a backward through LD raises, as PyTorch's)
    LD = not_implemented(Tensor._make(ld).to(A.device), "aten::linalg_ldl_factor_ex", A)
    return LD, Tensor._make(piv).to(A.device), Tensor._make(info).to(A.device)


def ldl_factor_ex(input, *, hermitian=False, check_errors=False):
    """``(LD, pivots, info)``: the Bunch-Kaufman factorization ``A = P L D L^T P^T`` of each
    symmetric matrix of ``A`` (its lower triangle read) as LAPACK's sytrf packs it, its
    pivots (int32, negative for 2x2 blocks) and info (int32: the first zero of ``D``, or 0);
    a zero raises only with ``check_errors``. (Real matrices: ``hermitian`` changes
    nothing.)"""
    return _named("linalg_ldl_factor_ex", ("LD", "pivots", "info"))(
        *_ldl(input, check_errors, "torch.linalg.ldl_factor_ex"))


def ldl_factor(input, *, hermitian=False):
    """``(LD, pivots)``: ``ldl_factor_ex``'s, a zero of ``D`` raising."""
    LD, pivots, _ = _ldl(input, True, "torch.linalg.ldl_factor")
    return _named("linalg_ldl_factor", ("LD", "pivots"))(LD, pivots)


def ldl_solve(LD, pivots, B, *, hermitian=False):
    """``X`` with ``A X = B`` given ``ldl_factor(A)``; batches broadcast."""
    op = "torch.linalg.ldl_solve"
    ld = _matrices(LD, op)
    if B.ndim < 2:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got "
                         "-2)")
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError(f"{op}: Expected LD.shape[:-1] and pivots.shape to be the same, but "
                           f"got pivots with shape {list(pivots.shape)} instead")
    if B.dtype is not LD.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_SCALAR[B.dtype.name]} and A of type {_SCALAR[LD.dtype.name]} "
                           "instead.")
    n = LD.shape[-1]
    if B.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {op}: each A matrix is {n} by {n} "
                           f"but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    out = ldl_solve_array(ld, _host(pivots).astype(np.int64), _host(B))
    return not_implemented(Tensor._make(out).to(B.device), "aten::linalg_ldl_solve", LD, B)


def tensorinv(input=None, ind=2, *, a=None):
    """The inverse of ``input`` (PyTorch also takes it as ``a=``) for ``tensordot(., ., ind)``:
    its first ``ind`` dims and its others, each group flattened, make a square matrix, whose
    inverse is reshaped to the others' shape then the first's."""
    A = _one_operand("tensorinv", input, a, "a")
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    if ind > A.ndim:  # (PyTorch's slice of A's shape fails)
        raise RuntimeError(f"ArrayRef: invalid slice, N = {ind}; size = {A.ndim}")
    rows, cols = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    if math.prod(rows) != math.prod(cols):
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {math.prod(cols)} != "
                           f"{math.prod(rows)}")
    # (a singular matrix is named as PyTorch's at::inverse names it)
    inverse = linalg_inv_ex(A.reshape(math.prod(rows), -1), True, "inv").inverse
    return inverse.reshape(cols + rows)


def tensorsolve(input, other, dims=None):
    """``X`` with ``tensordot(A, X, X.ndim) = B`` (``input``, ``other``): ``A``'s first
    ``B.ndim`` dims (after ``dims`` are moved last) against the rest, solved as one square
    system."""
    A, B = input, other
    if dims is not None:
        dims = [d % A.ndim if -A.ndim <= d < A.ndim else d for d in dims]
        for d in dims:
            if not -A.ndim <= d < A.ndim:
                raise IndexError(f"Dimension out of range (expected to be in range of "
                                 f"[{-A.ndim}, {A.ndim - 1}], but got {d})")
        A = A.movedim(dims, list(range(A.ndim - len(dims), A.ndim)))
    shape = tuple(A.shape[B.ndim:])
    rows = math.prod(A.shape[:B.ndim])
    if math.prod(shape) != rows:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:]) "
                           f"== prod(self.shape[:other.ndim]), but got {math.prod(shape)} != "
                           f"{rows}")
    # (B's own shape is not checked, only its size: PyTorch's reshape)
    return linalg_solve(A.reshape(rows, rows), B.reshape(rows)).reshape(shape)


def _one_operand(name, given, alias, alias_name):
    """The operand given as ``input`` or under PyTorch's other keyword for it."""
    if (given is None) == (alias is None):
        raise TypeError(f"{name}() takes its tensor once, as input or {alias_name}")
    return alias if given is None else given


def vector_norm(input=None, ord=2, dim=None, keepdim=False, *, dtype=None, x=None):
    """The ``ord``-norm of ``input`` (PyTorch also takes it as ``x=``) seen as a vector over
    ``dim`` (LinalgVectorNormBackward0; with ``dtype``, computed in it, the cast in that one
    node as PyTorch's)."""
    x = _one_operand("linalg_vector_norm", input, x, "x")
    if ord == 2 and (dim is None or isinstance(dim, int) or len(dim) <= 2):
        return R.norm(x, dim, keepdim, dtype)  # (its own kernel; it reads 3 dims as an error)
    return R.vector_norm(x, ord, dim, keepdim, dtype)


def matrix_norm(input, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """The ``ord``-norm of the matrices of ``input`` over the two dims ``dim``: ``'fro'``, or
    the induced 1 / inf norms (largest column / row sum of ``|A|``) and -1 / -inf
    (smallest)."""
    A = input
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


def norm(input, ord=None, dim=None, keepdim=False, *, dtype=None):
    """``vector_norm`` or ``matrix_norm`` as PyTorch chooses: without ``ord``, the 2-norm of
    ``A`` (``input``) flattened (or over ``dim``); with ``ord``, the matrix norm for a 2-d
    ``A`` or two ``dim`` and the vector norm for a 1-d ``A`` or one ``dim``."""
    A = input
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


def householder_product(input, tau):
    """The first ``n`` columns of the product of the Householder reflectors
    ``I - tau_i v_i v_i^T`` stored below the diagonal of ``input`` (..., m, n), as ``geqrf``
    leaves them (LinalgHouseholderProductBackward0)."""
    return linalg_householder_product(input, tau)


def cholesky(input, *, upper=False):
    """The lower-triangular ``L`` with ``A = L L^T`` (``upper``: ``L^T``), ``A`` the
    matrices of ``input``."""
    return linalg_cholesky(input, upper)


def eigh(input, UPLO="L"):
    """The eigenvalues (ascending) and eigenvectors of the symmetric matrices of ``input``."""
    return linalg_eigh(input, UPLO)


def eigvalsh(input, UPLO="L"):
    """The eigenvalues (ascending) of the symmetric matrices of ``input``."""
    return linalg_eigh(input, UPLO, F._needs_vectors(input)).eigenvalues


def slogdet(A):
    """The sign and the log of the absolute value of each determinant of ``A``."""
    return linalg_slogdet(A)


def _tolerance(name, old, old_name, atol, rtol):
    """``(atol, rtol)`` of a call that may give PyTorch's older positional tolerance ``old``
    instead: pinv's ``rcond`` (a relative one) or matrix_rank's ``tol`` (an absolute one)."""
    if old is None:
        return atol, rtol
    if atol is not None or rtol is not None:
        raise TypeError(f"{name}() takes {old_name} or atol and rtol, not both")
    return (None, old) if old_name == "rcond" else (old, 0.0)


def pinv(input, rcond=None, hermitian=False, *, atol=None, rtol=None):
    """The pseudo-inverse of each matrix of ``input`` (LinalgPinvBackward0); ``rcond``:
    PyTorch's older name of ``rtol``."""
    atol, rtol = _tolerance("linalg_pinv", rcond, "rcond", atol, rtol)
    return linalg_pinv(input, atol, rtol, hermitian)


def lstsq(input, b, rcond=None, *, driver=None):
    """The least-squares solution of ``A X = B`` (``input``, ``b``): ``(solution, residuals,
    rank, singular_values)``, filled as PyTorch fills them for ``driver`` (default
    'gelsy')."""
    return linalg_lstsq(input, b, rcond, driver)


def solve_triangular(input, B, *, upper=None, left=True, unitriangular=False):
    """``X`` with ``A X = B`` (``left``) or ``X A = B``, ``A`` read as upper or lower
    triangular (LinalgSolveTriangularBackward0)."""
    if upper is None:  # (required: PyTorch's argument parser's words)
        raise TypeError('linalg_solve_triangular() missing 1 required positional arguments: '
                        '"upper"')
    return linalg_solve_triangular(input, B, upper=upper, left=left, unitriangular=unitriangular)


def matrix_rank(input, tol=None, hermitian=False, *, atol=None, rtol=None):
    """The number of singular values of each matrix of ``input`` over ``max(atol, rtol * the
    largest)`` (rtol by default eps * max(m, n) when atol is not given); ``tol``: PyTorch's
    older absolute tolerance (atol, with rtol 0)."""
    A = input
    atol, rtol = _tolerance("linalg_matrix_rank", tol, "tol", atol, rtol)
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


def cond(input, p=None):
    """The condition number of each matrix ``A`` of ``input`` in the ``p``-norm: the ratio of
    extreme singular values (p None, 2, -2), else ``norm(A) * norm(A^-1)`` (inf for a
    singular A)."""
    A = input
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


def matmul(input, other):
    """``torch.matmul`` under PyTorch's keywords for ``linalg.matmul``."""
    return _matmul(input, other)


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
