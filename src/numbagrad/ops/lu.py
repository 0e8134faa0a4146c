"""The LU family and what is built on it: ``linalg.lu_factor(_ex)``, ``linalg.lu``,
``lu_unpack``, ``linalg.lu_solve``, ``linalg.solve`` (whose errors name the singular matrix by
its LU), the ``_ex`` variants of inv, solve and cholesky, LDL, and ``multi_dot`` /
``chain_matmul``. Kept apart from linalg.py because it uses the triangular solves and
Cholesky rules of decompositions.py, which itself builds on linalg.py."""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as D
from .._tensor import Tensor, warn_once
from ..backend.cpu import broadcast_shapes
from . import decompositions
from . import movement as M
from .linalg import _NAMES, _TYPE, LinAlgError, _back, _matrices
from .reduce import _named
from .registry import composite, public, sum_to


def _vector_rhs(a_shape, b_shape) -> bool:
    """Whether ``B`` of ``solve(A, B)`` is a (batch of) vector(s), as PyTorch decides."""
    return len(b_shape) == 1 or (len(b_shape) == len(a_shape) - 1
                                 and tuple(b_shape) == tuple(a_shape[:-1]))


@composite("linalg_solve", node="LinalgSolveExBackward0")
def linalg_solve(ctx, x, b):
    """``X`` with ``A X = B`` for each square matrix ``A`` in ``x`` (batch dims broadcast);
    ``B`` (..., n, k) or, a vector right-hand side, (..., n)."""
    a, rhs, vector = _solve_operands(x, b, True)
    n = a.shape[-1]
    batch = broadcast_shapes(a.shape[:-2], rhs.shape[:-2])
    try:
        out = np.linalg.solve(np.broadcast_to(a, (*batch, n, n)),
                              np.broadcast_to(rhs, (*batch, *rhs.shape[-2:])))
    except np.linalg.LinAlgError:
        # (PyTorch names the singular matrix by its index in A's own batch)
        raise _failure(_lu_array(a)[2], "torch.linalg.solve", _solver_failed) from None
    ctx.vector = vector
    ctx.save(x=x, b=b)
    return _back(ctx, out[..., 0] if vector else out)


@linalg_solve.defvjp
def linalg_solve_vjp(ctx, grad):
    # X = A^-1 B: dB = A^-T G, dA = -dB X^T
    x, b = ctx["x"], ctx["b"]
    gb = linalg_solve(x.transpose(-2, -1), grad)
    sol = linalg_solve(x, b)
    if ctx.vector:
        ga = -(gb.unsqueeze(-1) * sol.unsqueeze(-2))
    else:
        ga = -(gb @ sol.transpose(-2, -1))
    return sum_to(ga, ctx.input_shapes[0]), sum_to(gb, ctx.input_shapes[1])


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


# ---------------------------------------------------------------- LU: factor, unpack, solve
#
# NumPy has no LU with its pivots (LAPACK's getrf), so it is computed here: partial pivoting as
# getrf's (the first largest magnitude of each column), panels of columns factored one column
# at a time and the rest of the matrix updated by one matmul per panel. A zero pivot is
# reported as getrf's ``info`` and the factorization goes on, as getrf's does.


_PANEL = 32  # columns factored one by one before the trailing block's matmul update


def _lu_array(a, pivot=True):
    """The LU factors of each matrix of ``a`` (..., m, n), packed as getrf leaves them (L's
    unit diagonal left out), their row exchanges (1-based, int32, ``min(m, n)`` of them) and
    getrf's info (the 1-based column of the first zero pivot, or 0)."""
    *batch, m, n = a.shape
    k = min(m, n)
    count = math.prod(batch)
    lu = np.array(a, order="C").reshape(count, m, n)  # (a copy: factored in place)
    piv = np.empty((count, k), np.int32)
    info = np.zeros(count, np.int32)
    every = np.arange(count)
    tiny = np.finfo(lu.dtype).tiny
    with np.errstate(all="ignore"):
        for start in range(0, k, _PANEL):
            end = min(start + _PANEL, k)
            for j in range(start, end):
                if pivot:
                    p = j + np.argmax(np.abs(lu[:, j:, j]), axis=1)
                    moved = p != j
                    if moved.any():
                        b, r = every[moved], p[moved]
                        held = lu[b, r].copy()
                        lu[b, r] = lu[b, j]
                        lu[b, j] = held
                    piv[:, j] = p + 1
                else:
                    piv[:, j] = j + 1
                d = lu[:, j, j]
                zero = d == 0
                info[(info == 0) & zero] = j + 1
                if j + 1 == m:
                    continue
                # (by the pivot's reciprocal unless that overflows, as getrf; a zero pivot's
                # column is zeros under partial pivoting and stays as it is)
                safe = np.where(zero, 1, d)[:, None]
                col = lu[:, j + 1:, j]
                col = np.where((np.abs(d) >= tiny)[:, None], col * (1 / safe), col / safe)
                lu[:, j + 1:, j] = col
                if j + 1 < end:
                    lu[:, j + 1:, j + 1:end] -= col[:, :, None] * lu[:, j, None, j + 1:end]
            if end < n:
                # the panel's rows right of it: U12 = L11^-1 A12, row by row
                for i in range(start + 1, end):
                    lu[:, i, end:] -= np.einsum("bk,bkc->bc", lu[:, i, start:i],
                                                lu[:, start:i, end:])
                if end < m:
                    lu[:, end:, end:] -= lu[:, end:, start:end] @ lu[:, start:end, end:]
    return lu.reshape(a.shape), piv.reshape(*batch, k), info.reshape(batch)


def _permutation(piv, m):
    """The row order ``perm`` that the row exchanges ``piv`` (1-based, applied in order) make
    of ``m`` rows: ``(P^T A)[i] = A[perm[i]]`` for ``A = P L U``."""
    *batch, k = piv.shape
    count = math.prod(batch)
    perm = np.tile(np.arange(m), (count, 1))
    p = piv.reshape(count, k).astype(np.intp) - 1
    every = np.arange(count)
    for i in range(k):
        other = p[:, i]
        held = perm[every, i].copy()
        perm[every, i] = perm[every, other]
        perm[every, other] = held
    return perm.reshape(*batch, m)


def _permutation_matrix(perm, dtype):
    """``P`` (..., m, m) with ``P[perm[i], i] = 1``."""
    m = perm.shape[-1]
    return np.ascontiguousarray(np.swapaxes(np.eye(m, dtype=dtype)[perm], -1, -2))


def _unit_lower(lu):
    """L's matrices (..., m, min(m, n)) of packed LU factors, with their unit diagonal."""
    m, n = lu.shape[-2:]
    k = min(m, n)
    lower = np.tril(lu[..., :k], -1)
    lower[..., np.arange(k), np.arange(k)] = 1
    return lower


def _lu_solve_array(lu, piv, b, left=True, adjoint=False):
    """``X`` with ``A X = B`` (``adjoint``: ``A^T X = B``; not ``left``: ``X A = B`` or
    ``X A^T = B``) for ``A = P L U`` given as packed factors and pivots; batches broadcast.
    Substitutions without checks: a zero pivot gives infs and NaNs, as LAPACK's getrs."""
    if not left:  # (X A = B is A^T X^T = B^T)
        return np.swapaxes(_lu_solve_array(lu, piv, np.swapaxes(b, -1, -2), True, not adjoint),
                           -1, -2)
    solve = decompositions._triangular_solve
    n = lu.shape[-1]
    batch = broadcast_shapes(lu.shape[:-2], b.shape[:-2])
    perm = np.broadcast_to(_permutation(piv, n), (*batch, n))[..., None]
    b = np.broadcast_to(b, (*batch, *b.shape[-2:]))
    lower, upper = _unit_lower(lu), np.triu(lu)
    with np.errstate(all="ignore"):
        if not adjoint:  # X = U^-1 L^-1 P^T B
            return solve(upper, solve(lower, np.take_along_axis(b, perm, -2), True), False)
        # A^T = U^T L^T P^T: X = P L^-T U^-T B
        z = solve(np.swapaxes(lower, -1, -2),
                  solve(np.swapaxes(upper, -1, -2), b, True), False)
    out = np.empty_like(z)
    np.put_along_axis(out, np.broadcast_to(perm, z.shape[:-1] + (1,)), z, -2)
    return out


def _failure(info, op, text, kind=LinAlgError):
    """PyTorch's error for the first matrix whose ``info`` is not 0: ``text(info)`` after
    ``op`` and, for a batch, the matrix's index in it."""
    flat = np.asarray(info).reshape(-1)
    failed = np.flatnonzero(flat)
    if not failed.size:  # (LAPACK saw a zero pivot that these factors did not: rounding)
        return kind(f"{op}: {text(0)}")
    b = int(failed[0])
    where = f"(Batch element {b}): " if np.ndim(info) else ""
    return kind(f"{op}: {where}{text(int(flat[b]))}")


def _lu_zero_pivot(k):
    return (f"U[{k},{k}] is zero and using it on lu_solve would result in a division by zero. "
            "If you still want to perform the factorization, consider calling "
            "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def _lu_operand(x, op, pivot):
    """``x``'s values for an LU factorization, with PyTorch's checks in its order."""
    if x.ndim < 2:
        raise RuntimeError(f"{op}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(x.shape)} instead")
    if x.dtype not in (D.float32, D.float64):
        raise NotImplementedError(f"\"lu_cpu\" not implemented for '{_TYPE[x.dtype.name]}'")
    if not pivot and x.device.type == "cpu":
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    return x._data if x.device.type == "cpu" else x._host()


def _lu_factors(LU):
    """``L`` (unit lower, (..., m, k)) and ``U`` ((..., k, n)) of a packed ``LU`` Tensor, as
    differentiable functions of it."""
    m, n = LU.shape[-2:]
    k = min(m, n)
    eye = Tensor._make(np.eye(m, k, dtype=LU.dtype.np)).to(LU.device)
    return LU.narrow(-1, 0, k).tril(-1) + eye, LU.narrow(-2, 0, k).triu()


def _lu_grad(P, L, U, gL, gU):
    """The gradient of ``A = P L U`` (``P`` a constant, or None for the identity) from those
    of ``L`` (..., m, k) and ``U`` (..., k, n), None for zeros.

    With ``X = L^-1 P^T dA U^-1`` (square case), ``dL = L tril(X, -1)`` and ``dU = triu(X) U``,
    so ``gA = P L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T``. Only the strictly lower part of
    ``gL`` and the upper part of ``gU`` reach that sum, so they need no masking. A tall ``A``
    adds the rows of ``L`` under the square block (``L2``: ``dL2 = (dA2 - L2 dU) U^-1``), a
    wide one the columns of ``U`` right of it (``dU2 = L^-1 (dA2 - dL U2)``)."""
    if gL is None and gU is None:
        return None
    solve = decompositions.linalg_solve_triangular
    m, k = L.shape[-2:]
    n = U.shape[-1]
    phi = None if gL is None else (L.mT @ gL).tril(-1)
    if gU is not None:
        upper = (gU @ U.mT).triu()
        phi = upper if phi is None else phi + upper
    if m > n:
        below = (gL.narrow(-2, k, m - k) if gL is not None
                 else L.new_zeros(*L.shape[:-2], m - k, k))
        phi = phi - L.narrow(-2, k, m - k).mT @ below
        top = solve(L.narrow(-2, 0, k), phi, upper=False, unitriangular=True, transposed=True)
        gA = solve(U, M.cat([top, below], -2), upper=True, left=False, transposed=True)
    elif m < n:
        right = (gU.narrow(-1, k, n - k) if gU is not None
                 else U.new_zeros(*U.shape[:-2], k, n - k))
        phi = phi - right @ U.narrow(-1, k, n - k).mT
        first = solve(U.narrow(-1, 0, k), phi, upper=True, left=False, transposed=True)
        gA = solve(L, M.cat([first, right], -1), upper=False, unitriangular=True,
                   transposed=True)
    else:
        gA = solve(L, phi, upper=False, unitriangular=True, transposed=True)
        gA = solve(U, gA, upper=True, left=False, transposed=True)
    return gA if P is None else P @ gA


def _constant(like, array):
    """A host array as a constant Tensor on ``like``'s device."""
    return Tensor._make(array).to(like.device)


@composite("linalg_lu_factor_ex", node="LinalgLuFactorExBackward0")
def linalg_lu_factor_ex(ctx, x, pivot=True, check_errors=False, op="torch.linalg.lu_factor_ex"):
    """``(LU, pivots, info)``: the LU factors of each matrix of ``x`` packed in one matrix,
    their row exchanges (int32, 1-based) and getrf's info (int32: the column of the first zero
    pivot, or 0). ``check_errors``: a zero pivot raises, naming ``op``."""
    a = _lu_operand(x, "torch.lu_factor", pivot)
    lu, piv, info = _lu_array(a, pivot)
    if check_errors and info.any():
        raise _failure(info, op, _lu_zero_pivot, RuntimeError)
    ctx.perm = _permutation(piv, a.shape[-2]) if pivot else None
    ctx.save_outputs = {"LU": 0}
    ctx.non_differentiable = (1, 2)
    return _back(ctx, lu), _back(ctx, piv), _back(ctx, info)


linalg_lu_factor_ex.keeps_missing_grads = True


@linalg_lu_factor_ex.defvjp
def linalg_lu_factor_ex_vjp(ctx, grads):
    # the packed factors' gradient is L's below the diagonal and U's on and above it
    g = grads[0]
    if g is None:
        return None
    LU = ctx["LU"]
    k = min(LU.shape[-2:])
    L, U = _lu_factors(LU)
    P = None if ctx.perm is None else _constant(LU, _permutation_matrix(ctx.perm, LU.dtype.np))
    return _lu_grad(P, L, U, g.narrow(-1, 0, k), g.narrow(-2, 0, k))


@composite("linalg_lu", node="LinalgLuBackward0")
def linalg_lu(ctx, x, pivot=True):
    """``(P, L, U)`` with ``x = P L U``: ``P`` a permutation matrix (empty without ``pivot``),
    ``L`` (..., m, k) unit lower triangular, ``U`` (..., k, n) upper, ``k = min(m, n)``."""
    a = _lu_operand(x, "linalg.lu", pivot)
    lu, piv, _ = _lu_array(a, pivot)
    lower, upper = _unit_lower(lu), np.triu(lu[..., :min(lu.shape[-2:]), :])
    if pivot:
        ctx.perm = _permutation(piv, a.shape[-2])
        p = _permutation_matrix(ctx.perm, a.dtype)
    else:
        ctx.perm, p = None, np.zeros((0,), a.dtype)
    ctx.save_outputs = {"L": 1, "U": 2}
    ctx.non_differentiable = (0,)
    ctx.wrap = _named_wrap("linalg_lu", ("P", "L", "U"))
    return _back(ctx, p), _back(ctx, lower), _back(ctx, np.ascontiguousarray(upper))


linalg_lu.keeps_missing_grads = True


@linalg_lu.defvjp
def linalg_lu_vjp(ctx, grads):
    L, U = ctx["L"], ctx["U"]
    P = None if ctx.perm is None else _constant(L, _permutation_matrix(ctx.perm, L.dtype.np))
    return _lu_grad(P, L, U, grads[1], grads[2])


def _named_wrap(name, fields):
    cls = _named(name, fields)
    return lambda outs: cls(*outs)


def _pivots_array(pivots):
    return pivots._data if pivots.device.type == "cpu" else pivots._host()


@composite("lu_unpack", node="LuUnpackBackward0", variants="function")
def lu_unpack(ctx, LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """``(P, L, U)`` from packed LU factors and their pivots (as ``linalg.lu_factor`` gives
    them): each left empty when not asked for (``unpack_pivots``, ``unpack_data``)."""
    if LU_data.ndim < 2:
        raise RuntimeError("torch.lu_unpack: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(LU_data.shape)} instead")
    if LU_pivots.dtype is not D.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                           "torch.int32 dtype.\nNote: this function is intended to be used "
                           "with the output produced by torch.linalg.lu_factor")
    lu = LU_data._data if LU_data.device.type == "cpu" else LU_data._host()
    *batch, m, n = lu.shape
    k = min(m, n)
    empty = np.zeros((0,), lu.dtype)
    p = empty
    if unpack_pivots:
        piv = _pivots_array(LU_pivots)
        bad = RuntimeError("pivots passed to lu_unpack must be between 1 and LU.size(-2) "
                           "inclusive.Did you properly pass the result of lu_factor?")
        # (PyTorch reads k pivots of each matrix, the batch of pivots broadcast)
        if piv.ndim == 0 or piv.shape[-1] < k:
            raise bad
        piv = np.broadcast_to(piv[..., :k], (*batch, k))
        if piv.size and (piv.min() < 1 or piv.max() > m):
            raise bad
        p = _permutation_matrix(_permutation(piv, m), lu.dtype)
    lower = upper = empty
    if unpack_data:
        lower, upper = _unit_lower(lu), np.ascontiguousarray(np.triu(lu[..., :k, :]))
    ctx.unpacked = unpack_data
    ctx.non_differentiable = (0,)
    ctx.wrap = _named_wrap("lu_unpack", ("P", "L", "U"))
    return _back(ctx, p), _back(ctx, lower), _back(ctx, empty.copy() if upper is empty else upper)


lu_unpack.keeps_missing_grads = True


@lu_unpack.defvjp
def lu_unpack_vjp(ctx, grads):
    # L's strictly lower part and U's upper part are LU's; the rest of them are constants
    gL, gU = grads[1], grads[2]
    if not ctx.unpacked or (gL is None and gU is None):
        return None, None
    m, n = ctx.input_shapes[0][-2:]
    k = min(m, n)
    batch = tuple(ctx.input_shapes[0][:-2])
    dtype = ctx.input_dtypes[0]
    like = gL if gL is not None else gU
    parts = []
    if gL is not None:
        low = gL.tril(-1)
        if n > k:
            low = M.cat([low, like.new_zeros(*batch, m, n - k, dtype=dtype)], -1)
        parts.append(low)
    if gU is not None:
        up = gU.triu()
        if m > k:
            up = M.cat([up, like.new_zeros(*batch, m - k, n, dtype=dtype)], -2)
        parts.append(up)
    return (parts[0] if len(parts) == 1 else parts[0] + parts[1]), None


def _check_lu_solve(LU, pivots, B, left):
    """PyTorch's checks of ``linalg.lu_solve``'s operands, in its order."""
    a = _matrices(LU, "torch.linalg.lu_solve")
    if B.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 dimensions.")
    if B.dtype is not LU.dtype:
        raise RuntimeError("linalg.lu_solve: Expected LU and B to have the same dtype, but found "
                           f"LU of type {_TYPE[LU.dtype.name]} and B of type "
                           f"{_TYPE[B.dtype.name]} instead")
    if pivots.dtype is not D.int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32")
    if pivots.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    n = a.shape[-1]
    if pivots.shape[-1] != n:
        raise RuntimeError("linalg.lu_solve: Number of pivots per batch should be same as the "
                           "dimension of the matrix")
    if tuple(pivots.shape) != tuple(LU.shape[:-1]):
        raise RuntimeError("linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the "
                           f"same, but got pivots with shape {list(pivots.shape)} instead")
    rows, cols = B.shape[-2:]
    if (rows if left else cols) != n:
        raise RuntimeError("linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {rows}x{cols})")
    broadcast_shapes(tuple(B.shape[:-2]), tuple(LU.shape[:-2]))  # (PyTorch's error, if any)
    piv = _pivots_array(pivots)
    if piv.size and piv.min() < 1:
        raise RuntimeError("Pivots given to lu_solve must all be greater or equal to 1. Did you "
                           "properly pass the result of lu_factor?")
    if piv.size and piv.max() > n:
        raise RuntimeError("Pivots given to lu_solve must all be smaller or equal to "
                           "LU.size(-2). Did you properly pass the result of lu_factor?")
    return a, piv


@composite("linalg_lu_solve", node="LinalgLuSolveBackward0")
def linalg_lu_solve(ctx, LU, pivots, B, left=True, adjoint=False):
    """``X`` with ``A X = B`` for ``A = P L U`` given by ``linalg.lu_factor``'s ``LU`` and
    ``pivots`` (``adjoint``: ``A^T X = B``; not ``left``: ``X A = B``); batches broadcast."""
    a, piv = _check_lu_solve(LU, pivots, B, left)
    rhs = B._data if B.device.type == "cpu" else B._host()
    out = _lu_solve_array(a, piv, rhs, left, adjoint)
    ctx.args = (left, adjoint)
    ctx.save(LU=LU, pivots=pivots)
    ctx.save_outputs = {"X": 0}
    return _back(ctx, np.ascontiguousarray(out.astype(a.dtype, copy=False)))


@linalg_lu_solve.defvjp
def linalg_lu_solve_vjp(ctx, grad):
    # B's gradient is the same solve with A^T for A; A's follows from X = A^-1 B (or its
    # transposed and right-hand forms), and LU's from A = P L U: dA = P (dL U + L dU)
    left, adjoint = ctx.args
    LU, pivots, X = ctx["LU"], ctx["pivots"], ctx["X"]
    gB = linalg_lu_solve(LU, pivots, grad, left, not adjoint)
    gLU = None
    if ctx.needs_grad(0):
        if left:
            gA = -(X @ gB.mT) if adjoint else -(gB @ X.mT)
        else:
            gA = -(gB.mT @ X) if adjoint else -(X.mT @ gB)
        L, U = _lu_factors(LU)
        P = _constant(LU, _permutation_matrix(_permutation(_pivots_array(pivots), LU.shape[-1]),
                                              LU.dtype.np))
        PtgA = P.mT @ gA
        gLU = sum_to((PtgA @ U.mT).tril(-1) + (L.mT @ PtgA).triu(), ctx.input_shapes[0])
    return gLU, None, sum_to(gB, ctx.input_shapes[2])


WARN_LU = (
    "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and "
    "will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\n"
    "should be replaced with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
    "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\n"
    "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)"
)
# (PyTorch's text, without the space before "and")
WARN_LU_SOLVE = (
    "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
    "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\n"
    "X = torch.lu_solve(B, LU, pivots)\nshould be replaced with\n"
    "X = torch.linalg.lu_solve(LU, pivots, B)"
)
WARN_CHAIN_MATMUL = (
    "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
    "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
    "multiple parameters."
)


def _lu_method(self, pivot=True, get_infos=False):
    """``Tensor.lu``: ``torch.lu``, its three results a plain tuple (as PyTorch's)."""
    warn_once("lu", WARN_LU, stacklevel=2)  # (bound as it is: no public wrapper between)
    LU, pivots, info = linalg_lu_factor_ex(self, pivot, False)
    return (LU, pivots, info) if get_infos else (LU, pivots)


@public("function method", method=_lu_method)
def lu(A, pivot=True, get_infos=False):
    """``linalg.lu_factor_ex`` under its old name (deprecated): ``(LU, pivots)``, with
    ``get_infos`` also getrf's info. It never raises for a zero pivot."""
    warn_once("lu", WARN_LU, stacklevel=3)
    LU, pivots, info = linalg_lu_factor_ex(A, pivot, False)
    if get_infos:
        return _named("_lu_with_info", ("LU", "pivots", "info"))(LU, pivots, info)
    return LU, pivots


@public("function method")
def lu_solve(input, LU_data, LU_pivots):
    """``linalg.lu_solve(LU_data, LU_pivots, input)`` under its old name (deprecated)."""
    warn_once("lu_solve", WARN_LU_SOLVE, stacklevel=3)
    return linalg_lu_solve(LU_data, LU_pivots, input)


@public("function")
def chain_matmul(*matrices):
    """``linalg.multi_dot`` of its arguments, all matrices (deprecated); one is cloned."""
    warn_once("chain_matmul", WARN_CHAIN_MATMUL, stacklevel=3)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for t in matrices:
        if t.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {t.ndim}, expected 2 instead.")
    if len(matrices) == 1:
        return matrices[0].clone()
    return multi_dot(list(matrices))


# ---------------------------------------------------------------- the _ex variants
#
# They return LAPACK's info (int32, one per matrix) and raise only with ``check_errors``. The
# values come from NumPy's LAPACK when it succeeds; where a matrix is singular (or not
# positive-definite), from the LU (or Cholesky) factors above, which give the infs and NaNs
# PyTorch's solvers give.


def _inverse_and_info(a):
    try:
        return np.linalg.inv(a), np.zeros(a.shape[:-2], np.int32)
    except np.linalg.LinAlgError:
        lu, piv, info = _lu_array(a)
        eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
        return _lu_solve_array(lu, piv, eye).astype(a.dtype, copy=False), info


def _inversion_failed(k):
    return (f"The diagonal element {k} is zero, the inversion could not be completed because "
            "the input matrix is singular.")


@composite("linalg_inv_ex", node="LinalgInvExBackward0")
def linalg_inv_ex(ctx, x, check_errors=False, op="linalg.inv_ex"):
    """``(inverse, info)``: the inverse of each square matrix of ``x`` and getrf's info
    (infs and NaNs where it is not 0); ``check_errors``: a singular matrix raises, naming
    ``op``."""
    a = _matrices(x, "linalg.inv")
    out, info = _inverse_and_info(a)
    if check_errors and info.any():
        raise _failure(info, op, _inversion_failed)
    ctx.save_outputs = {"inverse": 0}
    ctx.non_differentiable = (1,)
    ctx.wrap = _named_wrap("linalg_inv_ex", ("inverse", "info"))
    return _back(ctx, np.ascontiguousarray(out)), _back(ctx, info)


linalg_inv_ex.keeps_missing_grads = True


@linalg_inv_ex.defvjp
def linalg_inv_ex_vjp(ctx, grads):
    # linalg.inv's rule, from the saved inverse: dA = -A^-T G A^-T
    if grads[0] is None:
        return None
    inv_t = ctx["inverse"].mT
    return -(inv_t @ grads[0] @ inv_t)


@linalg_inv_ex.defjvp
def linalg_inv_ex_jvp(result, tangents, x, check_errors=False, op="linalg.inv_ex"):
    inverse = result[0]
    return -(inverse @ tangents[0] @ inverse), None


def _solve_operands(x, b, left, op="linalg.solve"):
    """``linalg.solve``'s checks: ``A``'s values, ``B``'s as matrices (a vector's with a
    column dim), and whether ``B`` is a (batch of) vector(s)."""
    a = _matrices(x, op)
    if x.dtype is not b.dtype:
        raise RuntimeError(
            f"{op}: Expected A and B to have the same dtype, but found A of type "
            f"{_TYPE[x.dtype.name]} and B of type {_TYPE[b.dtype.name]} instead")
    vector = _vector_rhs(x.shape, b.shape)
    rhs = b._data if b.device.type == "cpu" else b._host()
    rhs = rhs[..., None] if vector else rhs
    if rhs.ndim < 2:  # (a scalar B)
        raise RuntimeError(f"{op}: The input tensor B must have at least 2 dimensions.")
    n = a.shape[-1]
    if (rhs.shape[-2] if left else rhs.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation {eq} "
                           f"({a.shape[-2]}x{n} and {rhs.shape[-2]}x{rhs.shape[-1]})")
    return a, rhs, vector


def _solve_and_info(a, rhs, left):
    """The solutions of each system, and getrf's info of each matrix of ``a`` (its own batch,
    not broadcast: PyTorch's); infs and NaNs where a matrix is singular."""
    n = a.shape[-1]
    batch = broadcast_shapes(a.shape[:-2], rhs.shape[:-2])
    try:
        if left:
            out = np.linalg.solve(np.broadcast_to(a, (*batch, n, n)),
                                  np.broadcast_to(rhs, (*batch, *rhs.shape[-2:])))
        else:  # (X A = B is A^T X^T = B^T)
            out = np.swapaxes(np.linalg.solve(
                np.broadcast_to(np.swapaxes(a, -1, -2), (*batch, n, n)),
                np.broadcast_to(np.swapaxes(rhs, -1, -2), (*batch, *rhs.shape[-2:][::-1]))),
                -1, -2)
        return out, np.zeros(a.shape[:-2], np.int32)
    except np.linalg.LinAlgError:
        lu, piv, info = _lu_array(a)
        return _lu_solve_array(lu, piv, rhs, left).astype(a.dtype, copy=False), info


def _solver_failed(k):
    return "The solver failed because the input matrix is singular."


@composite("linalg_solve_ex", node="LinalgSolveExBackward0")
def linalg_solve_ex(ctx, x, b, left=True, check_errors=False, op="torch.linalg.solve_ex"):
    """``(result, info)``: ``X`` with ``A X = B`` (not ``left``: ``X A = B``) for each square
    matrix ``A`` of ``x``, and getrf's info of each (infs and NaNs where it is not 0);
    ``check_errors``: a singular matrix raises, naming ``op``."""
    a, rhs, vector = _solve_operands(x, b, left)
    out, info = _solve_and_info(a, rhs, left)
    if check_errors and info.any():
        raise _failure(info, op, _solver_failed)
    ctx.vector, ctx.left = vector, left
    ctx.save(x=x)
    ctx.save_outputs = {"result": 0}
    ctx.non_differentiable = (1,)
    ctx.wrap = _named_wrap("linalg_solve_ex", ("result", "info"))
    return _back(ctx, np.ascontiguousarray(out[..., 0] if vector else out)), _back(ctx, info)


linalg_solve_ex.keeps_missing_grads = True


@linalg_solve_ex.defvjp
def linalg_solve_ex_vjp(ctx, grads):
    # linalg.solve's rule from the saved solution: X = A^-1 B gives gB = A^-T G and
    # gA = -gB X^T (X = B A^-1: gB = G A^-T, gA = -X^T gB)
    g = grads[0]
    if g is None:
        return None, None
    x, sol = ctx["x"], ctx["result"]
    gb = linalg_solve_ex(x.mT, g, ctx.left).result
    if ctx.vector:
        ga = -(gb.unsqueeze(-1) * sol.unsqueeze(-2))
    else:
        ga = -(gb @ sol.mT) if ctx.left else -(sol.mT @ gb)
    return sum_to(ga, ctx.input_shapes[0]), sum_to(gb, ctx.input_shapes[1])


def _cholesky_partial(a):
    """The Cholesky factors of the matrices of ``a`` (lower triangles read) column by column,
    each stopped at its first non-positive pivot: ``(factors, info)``, info the order of the
    first leading minor that is not positive-definite, as potrf's. A stopped factor keeps that
    pivot on its diagonal and the rest of the updated matrix below, as potrf leaves them."""
    *batch, n, _ = a.shape
    count = math.prod(batch)
    low = np.tril(a).reshape(count, n, n).copy()
    info = np.zeros(count, np.int32)
    going = np.ones(count, bool)
    with np.errstate(all="ignore"):
        for j in range(n):
            d = low[:, j, j]
            failed = going & ~(d > 0)  # (NaN included)
            info[failed] = j + 1
            going &= ~failed
            if not going.any():
                break
            g = np.flatnonzero(going)
            r = np.sqrt(d[g])
            low[g, j, j] = r
            col = low[g, j + 1:, j] / r[:, None]
            low[g, j + 1:, j] = col
            low[g, j + 1:, j + 1:] -= np.tril(col[:, :, None] * col[:, None, :])
    return low.reshape(a.shape), info.reshape(batch)


@composite("linalg_cholesky_ex", node="LinalgCholeskyExBackward0")
def linalg_cholesky_ex(ctx, x, upper=False, check_errors=False):
    """``(L, info)``: ``linalg.cholesky``'s factors and potrf's info (a factor where it is not
    0 is potrf's partial one); ``check_errors``: a matrix that is not positive-definite
    raises."""
    a = _matrices(x, "linalg.cholesky")
    src = np.swapaxes(a, -1, -2) if upper else a
    try:
        out, info = np.linalg.cholesky(src), np.zeros(a.shape[:-2], np.int32)
    except np.linalg.LinAlgError:
        out, info = _cholesky_partial(src)
    if check_errors and info.any():
        raise decompositions._not_positive_definite(src, "linalg.cholesky_ex")
    ctx.upper = upper
    ctx.save_outputs = {"result": 0}
    ctx.non_differentiable = (1,)
    ctx.wrap = _named_wrap("linalg_cholesky_ex", ("L", "info"))
    out = np.ascontiguousarray(np.swapaxes(out, -1, -2)) if upper else out
    return _back(ctx, out), _back(ctx, info)


linalg_cholesky_ex.keeps_missing_grads = True


@linalg_cholesky_ex.defvjp
def linalg_cholesky_ex_vjp(ctx, grads):
    # (linalg.cholesky's rule: it reads the same saved factor and ``upper``)
    if grads[0] is None:
        return None
    return decompositions.linalg_cholesky_vjp(ctx, grads[0])


@linalg_cholesky_ex.defjvp
def linalg_cholesky_ex_jvp(result, tangents, x, upper=False, check_errors=False):
    return decompositions.linalg_cholesky_jvp(result[0], tangents, x, upper), None


# ---------------------------------------------------------------- LDL (Bunch-Kaufman)
#
# PyTorch's ldl_factor is LAPACK's sytrf on the lower triangle: symmetric pivoting of 1x1 and
# 2x2 blocks (Bunch and Kaufman's choice). These follow the unblocked sytf2 step by step, in
# its order of operations, so the pivots and the rounding are LAPACK's (sytrf runs blocks of
# 64 columns on larger matrices: the same choices, their rounding a little different). Neither
# has a derivative in PyTorch.

_BUNCH_KAUFMAN = (1 + math.sqrt(17)) / 8  # (the growth bound of the pivot choice)


def _ldl_one(a):
    """``(LD, pivots, info)`` of one symmetric matrix ``a`` (its lower triangle read), as
    sytf2 leaves them (LAPACK's pivots: 1-based, negative for each row of a 2x2 block)."""
    a = np.tril(a)  # (a copy; only the lower triangle is read and written)
    n = a.shape[0]
    piv = np.zeros(n, np.int32)
    info = 0
    k = 0
    while k < n:
        step = 1
        absakk = abs(a[k, k])
        if k < n - 1:
            imax = k + 1 + int(np.argmax(np.abs(a[k + 1:, k])))
            colmax = abs(a[imax, k])
        else:
            colmax = 0.0
        if max(absakk, colmax) == 0 or math.isnan(absakk):
            # (a zero column: noted, and nothing to eliminate)
            info = info or k + 1
            kp = k
        else:
            if absakk >= _BUNCH_KAUFMAN * colmax:
                kp = k
            else:
                # the largest off-diagonal magnitude in row and column imax
                rowmax = float(np.max(np.abs(a[imax, k:imax])))
                if imax < n - 1:
                    rowmax = max(rowmax, float(np.max(np.abs(a[imax + 1:, imax]))))
                if absakk >= _BUNCH_KAUFMAN * colmax * (colmax / rowmax):
                    kp = k
                elif abs(a[imax, imax]) >= _BUNCH_KAUFMAN * rowmax:
                    kp = imax
                else:
                    kp, step = imax, 2
            kk = k + step - 1
            if kp != kk:
                # rows and columns kk and kp exchanged, in the lower triangle's terms
                if kp < n - 1:
                    a[kp + 1:, [kk, kp]] = a[kp + 1:, [kp, kk]]
                held = a[kk + 1:kp, kk].copy()
                a[kk + 1:kp, kk] = a[kp, kk + 1:kp]
                a[kp, kk + 1:kp] = held
                a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
                if step == 2:
                    a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]
            with np.errstate(all="ignore"):
                if step == 1 and k < n - 1:
                    # A22 -= x x^T / d (its lower triangle), then x / d is L's column
                    d11 = 1 / a[k, k]
                    x = a[k + 1:, k].copy()
                    a[k + 1:, k + 1:] += np.tril(x[:, None] * (-d11 * x)[None, :])
                    a[k + 1:, k] = x * d11
                elif step == 2 and k < n - 2:
                    # the same with the 2x2 block D: its inverse applied to two columns
                    d21 = a[k + 1, k]
                    d11 = a[k + 1, k + 1] / d21
                    d22 = a[k, k] / d21
                    d21 = (1 / (d11 * d22 - 1)) / d21
                    c0, c1 = a[k + 2:, k].copy(), a[k + 2:, k + 1].copy()
                    wk = d21 * (d11 * c0 - c1)
                    wkp1 = d21 * (d22 * c1 - c0)
                    a[k + 2:, k + 2:] -= np.tril(c0[:, None] * wk[None, :]
                                                 + c1[:, None] * wkp1[None, :])
                    a[k + 2:, k], a[k + 2:, k + 1] = wk, wkp1
        if step == 1:
            piv[k] = kp + 1
        else:
            piv[k] = piv[k + 1] = -(kp + 1)
        k += step
    return a, piv, info


def ldl_array(a):
    """``_ldl_one`` over a batch ``a`` (..., n, n): ``(LD, pivots, info)``."""
    *batch, n, _ = a.shape
    count = math.prod(batch)
    flat = a.reshape(count, n, n)
    ld = np.empty_like(flat)
    piv = np.empty((count, n), np.int32)
    info = np.zeros(count, np.int32)
    for b in range(count):
        ld[b], piv[b], info[b] = _ldl_one(flat[b])
    return ld.reshape(a.shape), piv.reshape(*batch, n), info.reshape(batch)


def _ldl_solve_one(ld, piv, b):
    """``X`` with ``A X = B`` for ``A = P L D L^T P^T`` given as sytf2 leaves it (sytrs)."""
    x = np.array(b)
    n = ld.shape[0]
    k = 0
    with np.errstate(all="ignore"):
        while k < n:  # L D Y = P^T B
            if piv[k] > 0:
                kp = piv[k] - 1
                x[[k, kp]] = x[[kp, k]]
                x[k + 1:] -= ld[k + 1:, k, None] * x[k]
                x[k] /= ld[k, k]
                k += 1
            else:
                kp = -piv[k] - 1
                x[[k + 1, kp]] = x[[kp, k + 1]]
                x[k + 2:] -= ld[k + 2:, k, None] * x[k]
                x[k + 2:] -= ld[k + 2:, k + 1, None] * x[k + 1]
                akm1k = ld[k + 1, k]
                akm1, ak = ld[k, k] / akm1k, ld[k + 1, k + 1] / akm1k
                denom = akm1 * ak - 1
                bkm1, bk = x[k] / akm1k, x[k + 1] / akm1k
                x[k], x[k + 1] = (ak * bkm1 - bk) / denom, (akm1 * bk - bkm1) / denom
                k += 2
        k = n - 1
        while k >= 0:  # L^T P^T X = Y
            if piv[k] > 0:
                x[k] -= ld[k + 1:, k] @ x[k + 1:]
                kp = piv[k] - 1
                x[[k, kp]] = x[[kp, k]]
                k -= 1
            else:
                x[k] -= ld[k + 1:, k] @ x[k + 1:]
                x[k - 1] -= ld[k + 1:, k - 1] @ x[k + 1:]
                kp = -piv[k] - 1
                x[[k, kp]] = x[[kp, k]]
                k -= 2
    return x


def ldl_solve_array(ld, piv, b):
    """``_ldl_solve_one`` over broadcast batches of factors and right-hand sides."""
    n = ld.shape[-1]
    batch = broadcast_shapes(b.shape[:-2], ld.shape[:-2])
    count = math.prod(batch)
    ld = np.broadcast_to(ld, (*batch, n, n)).reshape(count, n, n)
    piv = np.broadcast_to(piv, (*batch, n)).reshape(count, n)
    rhs = np.broadcast_to(b, (*batch, *b.shape[-2:])).reshape(count, *b.shape[-2:])
    out = np.empty(rhs.shape, np.result_type(ld, rhs))
    for i in range(count):
        out[i] = _ldl_solve_one(ld[i], piv[i], rhs[i])
    return out.reshape(*batch, *b.shape[-2:])
