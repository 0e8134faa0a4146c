"""torch.linalg's decompositions and what PyTorch builds on them: svd, qr, geqrf and
householder_product, cholesky, eigh, slogdet, pinv, lstsq, matrix_exp, solve_triangular,
cholesky_solve and cholesky_inverse, and their ``torch.*`` spellings (svd, qr, cholesky,
pinverse, logdet, matrix_power, vander, orgqr, ...).

The forwards run NumPy's LAPACK on the host (a CUDA tensor's values are copied there and the
results back: there is no device solver yet). The backward rules are PyTorch's
(FunctionsManual.cpp: svd_backward, linalg_qr_backward, cholesky_backward,
linalg_eig_backward, pinv_backward, linalg_lstsq_backward, ...) written with Tensor ops, so
they are differentiable again under ``create_graph=True``.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as D
from .._tensor import Tensor, warn_once
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.graph import sum_to
from ..backend.cpu import broadcast_shapes
from . import movement as M
from .forward import zeros_like
from .indexing import where
from .linalg import _NAMES, LinAlgError, _back, _matrices, linalg_inv, matmul
from .reduce import _named
from .registry import composite, public

_SCALAR = D.SCALAR_TYPE  # (a dtype's name in PyTorch's messages: Long, Float)

# PyTorch's result types (``torch.return_types.linalg_svd``: named tuples with these fields)
SVD = ("U", "S", "Vh")
QR = ("Q", "R")
EIGH = ("eigenvalues", "eigenvectors")
SLOGDET = ("sign", "logabsdet")
LSTSQ = ("solution", "residuals", "rank", "singular_values")


def _wrap(name, fields):
    cls = _named(name, fields)
    return lambda outs: cls(*outs)


def _eye_like(s):
    """The identity matrices (..., k, k) of ``s``'s last dim, as a constant of its dtype."""
    return Tensor._make(np.ones(s.shape, s.dtype.np)).to(s.device).diag_embed()


# ---------------------------------------------------------------- svd


@composite("linalg_svd", node="LinalgSvdBackward0")
def linalg_svd(ctx, x, full_matrices=True, compute_uv=True):
    """``U, S, Vh`` with ``x = U diag(S) Vh`` (without ``compute_uv``, U and Vh empty: what
    svdvals asks when no gradient is, as PyTorch's ``_linalg_svd``)."""
    a = _matrices(x, "linalg.svd", square=False)
    ctx.full_matrices = full_matrices
    ctx.wrap = _wrap("linalg_svd", SVD)
    if not compute_uv:
        empty = _back(ctx, np.zeros((0,), a.dtype))
        return empty, _back(ctx, np.linalg.svd(a, compute_uv=False)), empty
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    ctx.save_outputs = {"U": 0, "S": 1, "Vh": 2}
    return _back(ctx, u), _back(ctx, s), _back(ctx, vh)


linalg_svd.keeps_missing_grads = True  # (svd_backward tells undefined gradients apart)


@linalg_svd.defvjp
def linalg_svd_vjp(ctx, grads):
    gU, gS, gVh = grads
    return svd_backward(gU, gS, gVh, ctx["U"], ctx["S"], ctx["Vh"], ctx.full_matrices)


def _needs_vectors(t):
    """Whether a values-only call must still compute the vectors: their rules read them
    (PyTorch's ``_may_require_fw_or_bw_grad``: a gradient or a forward-mode tangent)."""
    return is_grad_enabled() and t.requires_grad or t._fw_grad is not None


def _skew(a):
    return a - a.mT


def svd_backward(gU, gS, gVh, U, S, Vh, full_matrices):
    """PyTorch's svd_backward (real matrices): the gradient of ``A = U diag(S) Vh``."""
    m, n = U.shape[-2], Vh.shape[-1]
    k = S.shape[-1]
    if full_matrices:  # (the extra columns of U or rows of Vh do not depend on A)
        U, Vh = U.narrow(-1, 0, k), Vh.narrow(-2, 0, k)
        gU = None if gU is None else gU.narrow(-1, 0, k)
        gVh = None if gVh is None else gVh.narrow(-2, 0, k)
    if gU is None and gVh is None:  # (svdvals: U diag(gS) Vh)
        if gS is None:
            return None
        return U @ (gS.unsqueeze(-1) * Vh) if m >= n else (U * gS.unsqueeze(-2)) @ Vh
    V = Vh.mT
    gV = None if gVh is None else gVh.mT
    # E[j, k] = S[k]^2 - S[j]^2, ones on the diagonal (where the skew parts are zero)
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + _eye_like(S)
    if gU is not None and gV is not None:
        gA = (_skew(U.mT @ gU) * S.unsqueeze(-2) + S.unsqueeze(-1) * _skew(Vh @ gV)) / E
    elif gU is not None:
        gA = _skew(U.mT @ gU) / E * S.unsqueeze(-2)
    else:
        gA = S.unsqueeze(-1) * (_skew(Vh @ gV) / E)
    if gS is not None:
        gA = gA + gS.diag_embed()
    if m > n and gU is not None:
        # the part of gU outside U's span: (I - U U^T) gU S^-1
        gA = U @ gA
        gU_Sinv = gU / S.unsqueeze(-2)
        gA = (gA + gU_Sinv - U @ (U.mT @ gU_Sinv)) @ Vh
    elif m < n and gV is not None:
        gA = gA @ Vh
        gV_Sinv = gV / S.unsqueeze(-2)
        gA = U @ (gA + gV_Sinv.mT - (gV_Sinv.mT @ V) @ Vh)
    else:
        gA = U @ (gA @ Vh) if m >= n else (U @ gA) @ Vh
    return gA


# ---------------------------------------------------------------- qr


@composite("linalg_qr", node="LinalgQrBackward0")
def linalg_qr(ctx, x, mode="reduced"):
    """``Q, R`` with ``x = Q R`` (mode 'reduced', 'complete', or 'r': R and an empty Q)."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    a = _matrices(x, "linalg.qr", square=False)
    ctx.mode = mode
    ctx.wrap = _wrap("linalg_qr", QR)
    ctx.save_outputs = {"Q": 0, "R": 1}
    if mode == "r":
        r = np.linalg.qr(a, mode="r")
        return _back(ctx, np.zeros((0,), a.dtype)), _back(ctx, np.ascontiguousarray(r))
    q, r = np.linalg.qr(a, mode=mode)
    return _back(ctx, q), _back(ctx, r)


linalg_qr.keeps_missing_grads = True


@linalg_qr.defvjp
def linalg_qr_vjp(ctx, grads):
    gQ, gR = grads
    Q, R = ctx["Q"], ctx["R"]
    m, n = ctx.input_shapes[0][-2:]
    if ctx.mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when "
                           "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
                           "differentiate through linalg.qr.")
    if ctx.mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")
    if m >= n:
        return _qr_backward_tall(gQ, gR, Q, R)
    # A = [X | Y] with X = Q U square and Y = Q V: Y's gradient is Q gV, and X's the square
    # case's with gQ + Y gV^T for gQ
    U, V = R.narrow(-1, 0, m), R.narrow(-1, m, n - m)
    if gR is None:
        gU, gV = None, zeros_like(V)
    else:
        gU, gV = gR.narrow(-1, 0, m), gR.narrow(-1, m, n - m)
        YgVt = (Q @ V) @ gV.mT
        gQ = YgVt if gQ is None else gQ + YgVt
    return M.cat([_qr_backward_tall(gQ, gU, Q, U), Q @ gV], -1)


def _qr_backward_tall(gQ, gR, Q, R):
    """PyTorch's linalg_qr_backward for m >= n: gA = [gQ + Q copyltu(M)] R^-T, where
    M = R gR^T - gQ^T Q and copyltu(M) is M's lower triangle mirrored to the upper one."""
    if gR is not None:
        M_ = R @ gR.mT
        if gQ is not None:
            M_ = M_ - gQ.mT @ Q
    else:
        M_ = -(gQ.mT @ Q)
    lower = M_.tril(-1)
    b = Q @ (lower + lower.mT + M_.diagonal(0, -2, -1).diag_embed())
    if gQ is not None:
        b = b + gQ
    return linalg_solve_triangular(R, b, upper=True, left=False, transposed=True)


# ---------------------------------------------------------------- householder reflectors

GEQRF = ("a", "tau")


@composite("geqrf", variants="function method")
def geqrf(ctx, x):
    """LAPACK's ``geqrf``: R on and above the diagonal of ``a``, and below it the Householder
    vectors whose product with the scales ``tau`` is Q (``linalg.householder_product``).
    Not differentiable, as in PyTorch."""
    if x.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f'"geqrf_cpu" not implemented for \'{_SCALAR[x.dtype.name]}\'')
    a = x._data if x.device.type == "cpu" else x._host()
    ctx.wrap = _wrap("geqrf", GEQRF)
    m, n = a.shape[-2:]
    if min(m, n) == 0:
        return _back(ctx, a.copy()), _back(ctx, np.zeros(a.shape[:-2] + (0,), a.dtype))
    # (NumPy's raw mode is geqrf's output in Fortran order: transposed)
    h, tau = np.linalg.qr(a, mode="raw")
    return (_back(ctx, np.ascontiguousarray(np.swapaxes(h, -1, -2)).astype(a.dtype)),
            _back(ctx, tau.astype(a.dtype)))


@geqrf.defvjp
def geqrf_vjp(ctx, grads):
    raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


def _check_householder(x, tau):
    op = "torch.linalg.householder_product"
    if x.ndim < 2:
        raise RuntimeError(f"{op}: input must have at least 2 dimensions.")
    if x.shape[-2] < x.shape[-1]:
        raise RuntimeError(f"{op}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if tau.ndim and x.shape[-1] < tau.shape[-1]:
        raise RuntimeError(f"{op}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if x.ndim - tau.ndim != 1:
        raise RuntimeError(f"{op}: Expected tau to have one dimension less than input, but got "
                           f"tau.ndim equal to {tau.ndim} and input.ndim is equal to {x.ndim}")
    if x.ndim > 2 and tuple(tau.shape[:-1]) != tuple(x.shape[:-2]):
        raise RuntimeError(f"{op}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    if tau.dtype != x.dtype:
        raise RuntimeError(f"{op}: tau dtype {_SCALAR[tau.dtype.name]} does not match input "
                           f"dtype {_SCALAR[x.dtype.name]}")
    if tau.device != x.device:
        raise RuntimeError(f"Expected tau and input to be on the same device, but found tau on "
                           f"{tau.device} and input on {x.device} instead.")
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f'"orgqr_cpu" not implemented for \'{_SCALAR[x.dtype.name]}\'')


@composite("linalg_householder_product", node="LinalgHouseholderProductBackward0")
def linalg_householder_product(ctx, x, tau):
    """The first ``n`` columns of ``H_1 ... H_k`` for ``x`` (..., m, n), where
    ``H_i = I - tau_i v_i v_i^T`` and ``v_i`` is column i of ``x`` below the diagonal with a
    1 on it (LAPACK's orgqr)."""
    _check_householder(x, tau)
    a = x._data if x.device.type == "cpu" else x._host()
    t = tau._data if tau.device.type == "cpu" else tau._host()
    m, n = a.shape[-2:]
    q = np.broadcast_to(np.eye(m, n, dtype=a.dtype), a.shape).copy()
    for i in reversed(range(t.shape[-1])):
        v = a[..., :, i].copy()
        v[..., :i] = 0
        v[..., i] = 1
        q -= t[..., i, None, None] * v[..., :, None] * (v[..., None, :] @ q)
    ctx.save(x=x, tau=tau)
    return _back(ctx, q)


@linalg_householder_product.defvjp
def linalg_householder_product_vjp(ctx, grad):
    # Q = P_i H_i R_i with P_i = H_1 ... H_{i-1}, R_i = H_{i+1} ... H_k I[:, :n], so reflector
    # i sees the gradient P_i^T G R_i^T; with a = P_i v and b = R_i^T v:
    # d tau_i = -a.(G b), d v_i = -tau_i (P_i^T G b + R_i G^T a)
    x, tau = ctx["x"], ctx["tau"]
    m, n = x.shape[-2:]
    k = tau.shape[-1]
    eye = Tensor._make(np.eye(m, n, dtype=x.dtype.np)).to(x.device)
    V = x.tril(-1) + eye
    vs = [V.select(-1, i).unsqueeze(-1) for i in range(k)]
    taus = [tau.select(-1, i).unsqueeze(-1).unsqueeze(-1) for i in range(k)]
    rights = [None] * k  # R_i
    r = eye.expand(V.shape)
    for i in reversed(range(k)):
        rights[i] = r
        r = r - taus[i] * vs[i] @ (vs[i].mT @ r)
    p = _eye_like(x.new_ones(*x.shape[:-2], m))  # P_i
    gx_cols, gtau = [], []
    for i in range(k):
        v, t = vs[i], taus[i]
        a, b = p @ v, rights[i].mT @ v
        Gb = grad @ b
        gtau.append(-(a * Gb).sum((-2, -1)))
        gv = -t * (p.mT @ Gb + rights[i] @ (grad.mT @ a))
        gx_cols.append(gv.squeeze(-1))
        p = p - (t * a) @ v.mT
    below = Tensor._make(np.tril(np.ones((m, n), dtype=x.dtype.np), -1)).to(x.device)
    zeros = x.new_zeros(*x.shape[:-1])
    gx = M.stack(gx_cols + [zeros] * (n - k), -1) * below
    gt = M.stack(gtau, -1) if k else tau.new_zeros(tau.shape)
    return gx, gt


# ---------------------------------------------------------------- triangular systems


@composite("linalg_solve_triangular", node="LinalgSolveTriangularBackward0")
def linalg_solve_triangular(ctx, x, b, *, upper, left=True, unitriangular=False,
                            transposed=False):
    """``X`` with ``A X = B`` (``left``) or ``X A = B``, reading only ``A``'s upper or lower
    triangle (its diagonal taken as ones if ``unitriangular``); ``transposed``: with ``A^T``
    for ``A`` (what the backward rules solve)."""
    op = "linalg.solve_triangular"
    a = _matrices(x, op)
    if b.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor B must have at least 2 dimensions.")
    rhs = b._data if b.device.type == "cpu" else b._host()
    dtype = np.result_type(a, rhs)  # (PyTorch promotes the two)
    n = a.shape[-1]
    if (rhs.shape[-2] if left else rhs.shape[-1]) != n:
        shape = f"{rhs.shape[-2]}x{rhs.shape[-1]}"
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation {eq} "
                           f"({n}x{n} and {shape})")
    t = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        t[..., np.arange(n), np.arange(n)] = 1  # (triu and tril made a copy)
    if transposed:
        t = np.swapaxes(t, -1, -2)
    batch = broadcast_shapes(rhs.shape[:-2], t.shape[:-2])  # (in the order of PyTorch's error)
    t = np.broadcast_to(t, (*batch, n, n))
    rhs = np.broadcast_to(rhs, (*batch, *rhs.shape[-2:]))
    with np.errstate(all="ignore"):
        # (X A = B is A^T X^T = B^T; a zero on the diagonal gives infs and NaNs, as LAPACK's
        # trtrs would, not an error: PyTorch checks nothing)
        out = _triangular_solve(t, rhs, not upper ^ transposed) if left else np.swapaxes(
            _triangular_solve(np.swapaxes(t, -1, -2), np.swapaxes(rhs, -1, -2),
                              upper ^ transposed), -1, -2)
    ctx.args = (upper, left, unitriangular, transposed)
    ctx.save(x=x)
    ctx.save_outputs = {"result": 0}
    return _back(ctx, np.ascontiguousarray(out.astype(dtype, copy=False)))


def _triangular_solve(t, rhs, lower):
    """``t^-1 rhs`` for triangular ``t`` by substitution, one row of the result at a time
    (vectorised over the batch and the right-hand sides)."""
    n = t.shape[-1]
    out = np.zeros(np.broadcast_shapes(t.shape[:-1], rhs.shape[:-1]) + rhs.shape[-1:],
                   np.result_type(t, rhs))
    for i in (range(n) if lower else range(n - 1, -1, -1)):
        done = slice(0, i) if lower else slice(i + 1, n)
        acc = rhs[..., i, :] - np.einsum("...j,...jk->...k", t[..., i, done], out[..., done, :])
        out[..., i, :] = acc / t[..., i, i, None]
    return out


@linalg_solve_triangular.defvjp
def linalg_solve_triangular_vjp(ctx, grad):
    # X = A^-1 B: gB = A^-T gX, gA = -gB X^T on A's triangle (X = B A^-1: gB = gX A^-T,
    # gA = -X^T gB); ``transposed`` solves with A^T, whose gradient is the transpose's
    upper, left, unit, transposed = ctx.args
    x, result = ctx["x"], ctx["result"]
    gB = linalg_solve_triangular(x, grad, upper=upper, left=left, unitriangular=unit,
                                 transposed=not transposed)
    gA = -(gB @ result.mT) if left else -(result.mT @ gB)
    if transposed:
        gA = gA.mT
    gA = gA.triu(int(unit)) if upper else gA.tril(-int(unit))
    return sum_to(gA, ctx.input_shapes[0]), sum_to(gB, ctx.input_shapes[1])


# ---------------------------------------------------------------- cholesky


def _not_positive_definite(a, op):
    """PyTorch's error for the first matrix of ``a`` that is not positive-definite, naming
    the order of its first leading minor that is not."""
    batch = a.reshape(-1, *a.shape[-2:])
    for b, m in enumerate(batch):
        for k in range(1, m.shape[-1] + 1):
            try:
                np.linalg.cholesky(m[:k, :k])
            except np.linalg.LinAlgError:
                where = f"(Batch element {b}): " if a.ndim > 2 else ""
                return LinAlgError(
                    f"{op}: {where}The factorization could not be completed because the input "
                    f"is not positive-definite (the leading minor of order {k} is not "
                    "positive-definite).")
    return LinAlgError(f"{op}: The factorization could not be completed because the input is "
                       "not positive-definite.")


@composite("linalg_cholesky", node="LinalgCholeskyExBackward0")
def linalg_cholesky(ctx, x, upper=False, op="linalg.cholesky"):
    """``L`` lower-triangular with ``x = L L^T``, from ``x``'s lower triangle (``upper``:
    ``U = L^T`` from its upper triangle). ``op``: the name its errors give (torch.cholesky's
    node is CholeskyBackward0)."""
    a = _matrices(x, op)
    if op == "cholesky":
        ctx.node_name = "CholeskyBackward0"
    try:
        out = np.linalg.cholesky(np.swapaxes(a, -1, -2) if upper else a)
    except np.linalg.LinAlgError:
        raise _not_positive_definite(np.swapaxes(a, -1, -2) if upper else a, op) from None
    ctx.upper = upper
    ctx.save_outputs = {"result": 0}
    return _back(ctx, np.ascontiguousarray(np.swapaxes(out, -1, -2)) if upper else out)


@linalg_cholesky.defvjp
def linalg_cholesky_vjp(ctx, grad):
    # PyTorch's cholesky_backward: gA = L^-T Phi(L^T gL) L^-1, Phi taking the lower triangle
    # with its diagonal halved and symmetrising it
    L = ctx["result"]
    if ctx.upper:
        L, grad = L.mT, grad.mT
    gA = (L.mT @ grad).tril()
    gA = 0.5 * (gA + gA.tril(-1).mT)
    gA = linalg_solve_triangular(L, gA, upper=False, transposed=True)
    return linalg_solve_triangular(L, gA, upper=False, left=False)


@linalg_cholesky.defjvp
def linalg_cholesky_jvp(result, tangents, x, upper=False, op="linalg.cholesky"):
    # PyTorch's cholesky_jvp: dL = L Phi(L^-1 dA L^-T), Phi the lower triangle with its
    # diagonal halved (the VJP assumes a symmetric dA; this reads dA as it is, as PyTorch's)
    L = result.mT if upper else result
    dL = linalg_solve_triangular(L, tangents[0], upper=False)
    dL = linalg_solve_triangular(L, dL, upper=False, left=False, transposed=True)
    dL = L @ (dL.tril() - 0.5 * dL.diagonal(0, -2, -1).diag_embed())
    return dL.mT if upper else dL


def _cholesky_solve_array(b, t, upper):
    """``A^-1 b`` for ``A = t t^T`` (``t`` lower) or ``t^T t`` (``upper``), batches broadcast."""
    first = np.swapaxes(t, -1, -2) if upper else t  # (the lower-triangular factor)
    y = _triangular_solve(first, b, True)
    return _triangular_solve(np.swapaxes(first, -1, -2), y, False)


def _not_implemented_for(t, kernel):
    if not t.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{_SCALAR[t.dtype.name]}'")


@composite("cholesky_solve", variants="function method")
def cholesky_solve(ctx, input, input2, upper=False):
    """``X`` with ``A X = B``, given ``B`` (``input``) and ``A``'s Cholesky factor ``L``
    (``input2``; ``upper``: ``U = L^T``)."""
    b, L = input, input2
    if b.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {b.ndim} dimensions "
                           "instead")
    if L.ndim < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {L.ndim} dimensions "
                           "instead")
    if b.dtype is not L.dtype:
        raise RuntimeError(
            f"Expected b and A to have the same dtype, but found b of type "
            f"{_SCALAR[b.dtype.name]} and A of type "
            f"{_SCALAR[L.dtype.name]} instead.")
    if L.shape[-1] != L.shape[-2]:
        raise RuntimeError("A must be batches of square matrices, but they are "
                           f"{L.shape[-2]} by {L.shape[-1]} matrices")
    if L.shape[-1] != b.shape[-2]:
        raise RuntimeError("Incompatible matrix sizes for cholesky_solve: each A matrix is "
                           f"{L.shape[-2]} by {L.shape[-1]} but each b matrix is {b.shape[-2]} "
                           f"by {b.shape[-1]}")
    _not_implemented_for(b, "cholesky_solve_cpu")
    broadcast_shapes(tuple(b.shape[:-2]), tuple(L.shape[:-2]))  # (PyTorch's error, if any)
    t = L._data if L.device.type == "cpu" else L._host()
    rhs = b._data if b.device.type == "cpu" else b._host()
    ctx.upper = upper
    ctx.save(L=L)
    ctx.save_outputs = {"result": 0}
    return _back(ctx, _cholesky_solve_array(rhs, t, upper).astype(t.dtype, copy=False))


@cholesky_solve.defvjp
def cholesky_solve_vjp(ctx, grad):
    # PyTorch's cholesky_solve_backward: gB = A^-1 gX, and for the factor the symmetric part
    # of -gB X^T times L (U times it, for upper)
    L, result = ctx["L"], ctx["result"]
    gB = cholesky_solve(grad, L, ctx.upper)
    common = gB @ result.mT
    common = common + common.mT
    gL = -(L @ common) if ctx.upper else -(common @ L)
    return sum_to(gB, ctx.input_shapes[0]), sum_to(gL, ctx.input_shapes[1])


@composite("cholesky_inverse", variants="function method")
def cholesky_inverse(ctx, L, upper=False):
    """``A^-1`` given ``A``'s Cholesky factor ``L`` (``upper``: ``U = L^T``)."""
    _not_implemented_for(L, "cholesky_inverse_out_cpu")
    t = _matrices(L, "cholesky_inverse")
    ctx.upper = upper
    ctx.save(L=L)
    ctx.save_outputs = {"result": 0}
    eye = np.broadcast_to(np.eye(t.shape[-1], dtype=t.dtype), t.shape)
    return _back(ctx, _cholesky_solve_array(eye, t, upper).astype(t.dtype, copy=False))


@cholesky_inverse.defvjp
def cholesky_inverse_vjp(ctx, grad):
    # PyTorch's cholesky_inverse_backward
    L, inverse = ctx["L"], ctx["result"]
    common = inverse @ ((grad + grad.mT) @ inverse)
    return -(L @ common) if ctx.upper else -(common @ L)


@cholesky_inverse.defjvp
def cholesky_inverse_jvp(result, tangents, L, upper=False):
    # PyTorch's cholesky_inverse_jvp: X = (C C^T)^-1 with C the lower factor, so
    # dX = -(P + P^T), P = X dC C^T X
    C, dC = (L.mT, tangents[0].mT) if upper else (L, tangents[0])
    P = result @ dC @ C.mT @ result
    return -(P + P.mT)


# ---------------------------------------------------------------- eigh


@composite("linalg_eigh", node="LinalgEighBackward0")
def linalg_eigh(ctx, x, UPLO="L", compute_v=True):
    """The eigenvalues (ascending) and eigenvectors of each symmetric matrix of ``x``, read
    from its lower (``UPLO='L'``) or upper triangle (without ``compute_v``, the vectors are
    empty: what eigvalsh asks when no gradient is, as PyTorch's ``_linalg_eigh``)."""
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    if x.ndim >= 2 and not x.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"linalg_eigh_cpu\" not implemented for '{_SCALAR[x.dtype.name]}'")
    a = _matrices(x, "linalg.eigh")
    ctx.wrap = _wrap("linalg_eigh", EIGH)
    if not compute_v:
        return _back(ctx, np.linalg.eigvalsh(a, UPLO)), _back(ctx, np.zeros((0,), a.dtype))
    w, v = np.linalg.eigh(a, UPLO)
    ctx.save_outputs = {"L": 0, "V": 1}
    return _back(ctx, w), _back(ctx, v)


linalg_eigh.keeps_missing_grads = True


@linalg_eigh.defvjp
def linalg_eigh_vjp(ctx, grads):
    # PyTorch's linalg_eig_backward for Hermitian A: gA = V (diag(gL) + skew(V^T gV) / E) V^T,
    # E[i, j] = L[j] - L[i] (ones on the diagonal, where the skew part is zero)
    gL, gV = grads
    L, V = ctx["L"], ctx["V"]
    if gV is None:
        return (V * gL.unsqueeze(-2)) @ V.mT
    E = L.unsqueeze(-2) - L.unsqueeze(-1) + _eye_like(L)
    inner = 0.5 * _skew(V.mT @ gV) / E
    if gL is not None:
        inner = inner + gL.diag_embed()
    return V @ (inner @ V.mT)


@linalg_eigh.defjvp
def linalg_eigh_jvp(result, tangents, x, UPLO="L", compute_v=True):
    # PyTorch's linalg_eig_jvp for Hermitian A: with dP = V^T dA V, dL = diag(dP) and
    # dV = V (dP / E) off the diagonal, E[i, j] = L[j] - L[i]
    L, V = result
    dP = V.mT @ tangents[0] @ V
    off = dP / (L.unsqueeze(-2) - L.unsqueeze(-1) + _eye_like(L)) - dP * _eye_like(L)
    return dP.diagonal(0, -2, -1), V @ off


# ---------------------------------------------------------------- slogdet


@composite("linalg_slogdet", node="LinalgSlogdetBackward0")
def linalg_slogdet(ctx, x):
    """The sign and the log of the absolute value of each determinant of ``x``."""
    a = _matrices(x, "linalg.slogdet")
    sign, logabsdet = np.linalg.slogdet(a)
    ctx.save(x=x)
    ctx.wrap = _wrap("linalg_slogdet", SLOGDET)
    return (_back(ctx, np.asarray(sign, a.dtype)), _back(ctx, np.asarray(logabsdet, a.dtype)))


linalg_slogdet.keeps_missing_grads = True


@linalg_slogdet.defvjp
def linalg_slogdet_vjp(ctx, grads):
    # the sign of a real determinant is locally constant: only logabsdet has a gradient,
    # d log|det A| = tr(A^-1 dA)
    g = grads[1]
    if g is None:
        return None
    return g.unsqueeze(-1).unsqueeze(-1) * linalg_inv(ctx["x"]).mT


# ---------------------------------------------------------------- pinv, lstsq


def _cutoff_rtol(a, atol, rtol):
    """PyTorch's default relative tolerance: eps * max(m, n) when neither is given."""
    if rtol is None:
        rtol = np.finfo(a.dtype).eps * max(a.shape[-2:]) if atol is None or atol <= 0 else 0.0
    return 0.0 if atol is None else atol, rtol


def pinv_array(a, atol=None, rtol=None, hermitian=False):
    """The pseudo-inverse of each matrix of ``a`` (singular values at or under
    ``max(atol, rtol * largest)`` taken as zero)."""
    atol, rtol = _cutoff_rtol(a, atol, rtol)
    if hermitian:
        w, v = np.linalg.eigh(a)
        absw = np.abs(w)
        cut = np.maximum(atol, rtol * absw.max(-1, initial=0))[..., None]
        inv = np.where(absw > cut, 1 / np.where(absw > cut, w, 1), 0)
        return (v * inv[..., None, :]) @ np.swapaxes(v, -1, -2)
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    cut = np.maximum(atol, rtol * s.max(-1, initial=0))[..., None]
    inv = np.where(s > cut, 1 / np.where(s > cut, s, 1), 0)
    return (np.swapaxes(vh, -1, -2) * inv[..., None, :]) @ np.swapaxes(u, -1, -2)


@composite("linalg_pinv", node="LinalgPinvBackward0")
def linalg_pinv(ctx, x, atol=None, rtol=None, hermitian=False):
    """The Moore-Penrose pseudo-inverse of each matrix of ``x``."""
    if x.ndim < 2 or not x.dtype.is_floating_point:
        shape = ", ".join(str(s) for s in x.shape)
        raise RuntimeError(f"linalg.pinv({_SCALAR[x.dtype.name]}{{[{shape}]}}): "
                           "expected a tensor with 2 or more dimensions of float, double, cfloat "
                           "or cdouble types")
    a = x._data if x.device.type == "cpu" else x._host()
    ctx.save(x=x)
    ctx.save_outputs = {"result": 0}
    return _back(ctx, np.ascontiguousarray(pinv_array(a, atol, rtol, hermitian), a.dtype))


@linalg_pinv.defvjp
def linalg_pinv_vjp(ctx, grad):
    return pinv_backward(grad, ctx["result"], ctx["x"])


def pinv_backward(grad, pinvA, A):
    """PyTorch's pinv_backward: the products ordered to keep the matrices small."""
    m, n = A.shape[-2:]
    pinvAh, gradh = pinvA.mT, grad.mT
    if m <= n:
        K = gradh @ pinvA
        KpinvAh = K @ pinvAh
        return (-(pinvA @ K).mT + KpinvAh - (A @ pinvA) @ KpinvAh
                + (pinvAh @ pinvA) @ (gradh - K @ A))
    K = pinvA @ gradh
    pinvAhK = pinvAh @ K
    return (-(K @ pinvA).mT + (gradh - A @ K) @ pinvA @ pinvAh + pinvAhK
            - pinvAhK @ pinvA @ A)


DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


@composite("linalg_lstsq", node="LinalgLstsqBackward0")
def linalg_lstsq(ctx, x, b, rcond=None, driver=None):
    """The least-squares solutions of ``A X = B`` (minimum norm where ``A`` is rank-deficient):
    ``(solution, residuals, rank, singular_values)``, filled as LAPACK's ``driver`` fills them
    in PyTorch (gelsy, the CPU's default: no residuals nor singular values; gels: no rank;
    residuals, the squared norms of the columns of ``A X - B``, only for tall ``A`` of full
    rank)."""
    driver = "gelsy" if driver is None else driver
    if driver not in DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of "
                           "(gels, gelsy, gelsd, gelss)")
    if x.dtype is not b.dtype:
        raise RuntimeError("torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {_SCALAR[x.dtype.name]} "
                           f"and other's dtype {_SCALAR[b.dtype.name]}")
    if x.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    a = x._data if x.device.type == "cpu" else x._host()
    rhs = b._data if b.device.type == "cpu" else b._host()
    vector = b.ndim == x.ndim - 1
    rhs = rhs[..., None] if vector else rhs
    if rhs.shape[-2] != a.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match "
                           f"other.size({-1 if vector else -2})")
    m, n = a.shape[-2:]
    rtol = np.finfo(a.dtype).eps * max(m, n) if rcond is None or rcond < 0 else rcond
    batch = broadcast_shapes(a.shape[:-2], rhs.shape[:-2])
    a = np.broadcast_to(a, (*batch, m, n))
    rhs = np.broadcast_to(rhs, (*batch, *rhs.shape[-2:]))
    # (the rank and the minimum-norm solution by the singular values, for every driver: for a
    # rank-deficient A, gelsy's own rank estimate may differ)
    s = np.linalg.svd(a, compute_uv=False)
    rank = (s > rtol * s.max(-1, initial=0)[..., None]).sum(-1).astype(np.int64)
    out = (pinv_array(a, rtol=rtol) @ rhs).astype(a.dtype, copy=False)
    empty = np.zeros((0,), a.dtype)
    residuals = empty
    if m > n and driver != "gelsy" and (driver == "gels" or np.all(rank == n)):
        residuals = ((a @ out - rhs) ** 2).sum(-2)
    ctx.vector, ctx.residuals = vector, residuals.size > 0
    ctx.save(x=x, b=b)
    ctx.save_outputs = {"solution": 0}
    ctx.non_differentiable = (2, 3)
    ctx.wrap = _wrap("linalg_lstsq", LSTSQ)
    return (_back(ctx, np.ascontiguousarray(out[..., 0] if vector else out)),
            _back(ctx, residuals),
            _back(ctx, np.zeros((0,), np.int64) if driver == "gels" else np.asarray(rank)),
            _back(ctx, s if driver in ("gelsd", "gelss") else empty.copy()))


linalg_lstsq.keeps_missing_grads = True


@linalg_lstsq.defvjp
def linalg_lstsq_vjp(ctx, grads):
    # PyTorch's linalg_lstsq_backward: the solution's through the pseudo-inverse; the
    # residuals' where X is optimal (so X's own change adds nothing): d|A x - b|^2 is
    # 2 (A x - b) x^T for A and -2 (A x - b) for b
    gX, gR = grads[0], grads[1] if ctx.residuals else None
    x, b, X = ctx["x"], ctx["b"], ctx["solution"]
    if ctx.vector:
        b, X = b.unsqueeze(-1), X.unsqueeze(-1)
        gX = None if gX is None else gX.unsqueeze(-1)
    gA = gB = None
    if gX is not None:
        pinvA = linalg_pinv(x)
        gA = pinv_backward(gX @ b.mT, pinvA, x)
        gB = pinvA.mT @ gX
    if gR is not None:
        r = 2 * (x @ X - b) * gR.unsqueeze(-2)
        gA = r @ X.mT if gA is None else gA + r @ X.mT
        gB = -r if gB is None else gB - r
    if ctx.vector:
        gB = gB.squeeze(-1)
    return sum_to(gA, ctx.input_shapes[0]), sum_to(gB, ctx.input_shapes[1])


# ---------------------------------------------------------------- matrix_exp


def _expm(a):
    """exp of each matrix of ``a``: scaled so its 1-norm is under 1/2, a Taylor series of 18
    terms (its error under 1e-19 there), then squared back."""
    norm = np.abs(a).sum(-2).max(-1).max(initial=0) if a.size else 0.0
    s = max(0, math.ceil(math.log2(norm / 0.5))) if norm > 0.5 else 0
    x = a.astype(np.float64) / 2.0**s
    out = term = np.broadcast_to(np.eye(a.shape[-1]), a.shape).copy()
    for k in range(1, 19):
        term = term @ x / k
        out = out + term
    for _ in range(s):
        out = out @ out
    return out.astype(a.dtype)


@composite("linalg_matrix_exp", node="LinalgMatrixExpBackward0")
def linalg_matrix_exp(ctx, x):
    """The matrix exponential of each square matrix of ``x``."""
    a = _matrices(x, "linalg.matrix_exp")
    ctx.save(x=x)
    return _back(ctx, _expm(a))


@linalg_matrix_exp.defvjp
def linalg_matrix_exp_vjp(ctx, grad):
    # PyTorch's block-matrix trick: exp([[A^T, G], [0, A^T]]) holds the gradient in its
    # upper-right block
    x = ctx["x"]
    n = x.shape[-1]
    at = x.mT
    big = M.cat([M.cat([at, grad], -1), M.cat([zeros_like(at), at], -1)], -2)
    return linalg_matrix_exp(big).narrow(-2, 0, n).narrow(-1, n, n)




# ---------------------------------------------------------------- torch.* spellings

WARN_QR = (
    "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch "
    "release.\nThe boolean parameter 'some' has been replaced with a string parameter 'mode'.\n"
    "Q, R = torch.qr(A, some)\nshould be replaced with\n"
    "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete')"
)
WARN_CHOLESKY = (
    "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
    "future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\n"
    "L = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\n"
    "should be replaced with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce "
    "equivalent results for all valid (symmetric positive definite) inputs."
)


@public("function method")
def svd(input, some=True, compute_uv=True):
    """``U, S, V`` with ``input = U diag(S) V^T`` (V, not linalg.svd's Vh; ``some``: the
    reduced factors; without ``compute_uv``, U and V are zeros of the full factors' shapes)."""
    named = _named("svd", ("U", "S", "V"))
    if not compute_uv:
        S = linalg_svd(input, False, _needs_vectors(input)).S
        m, n = input.shape[-2:]
        batch = tuple(input.shape[:-2])
        return named(input.new_zeros(*batch, m, m), S, input.new_zeros(*batch, n, n))
    U, S, Vh = linalg_svd(input, not some)
    return named(U, S, Vh.mT)


@public("function method")
def qr(input, some=True):
    """``linalg.qr`` in mode 'reduced' (``some``) or 'complete' (deprecated, as in PyTorch)."""
    warn_once("qr", WARN_QR, stacklevel=3)  # (through the public wrapper)
    return _named("qr", QR)(*linalg_qr(input, "reduced" if some else "complete"))


@public("function method")
def cholesky(input, upper=False):
    """``linalg.cholesky`` under its old name and node (CholeskyBackward0; deprecated)."""
    warn_once("cholesky", WARN_CHOLESKY, stacklevel=3)  # (through the public wrapper)
    return linalg_cholesky(input, upper, "cholesky")


@public("function method")
def pinverse(input, rcond=1e-15):
    """``linalg.pinv`` with ``rcond`` as its relative tolerance."""
    return linalg_pinv(input, 0.0, rcond)


@public("function method")
def slogdet(input):
    """``linalg.slogdet``, as PyTorch's ``return_types.slogdet``."""
    return _named("slogdet", SLOGDET)(*linalg_slogdet(input))


@public("function method")
def logdet(input):
    """The log of each determinant: NaN for a negative one (composed as PyTorch's, from
    slogdet: WhereBackward0)."""
    sign, logabsdet = linalg_slogdet(input)
    return where(sign == -1, math.nan, logabsdet)


@public("function method")
def matrix_power(input, n):
    """``input`` to the integer power ``n`` (the inverse's for a negative one): PyTorch's
    matmuls by the binary digits of ``n``."""
    a = input
    if a.ndim < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 "
                           "dimensions.")
    if a.shape[-2] != a.shape[-1]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but they "
                           f"are {a.shape[-2]} by {a.shape[-1]} matrices")
    if n == 0:
        eye = _eye_like(a.new_ones(a.shape[-1]))
        return a.clone().copy_(eye.expand_as(a))
    if n == 1:
        return a.clone()
    if n < 0:  # (the inverse itself for -1, as PyTorch's)
        a, n = linalg_inv(a), -n
    if n == 1:
        return a
    if n == 2:
        return matmul(a, a)
    if n == 3:
        return matmul(matmul(a, a), a)
    z = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = a if z is None else matmul(z, z)
        if bit:
            result = z if result is None else matmul(result, z)
    return result


@public("function method")
def matrix_exp(input):
    """``linalg.matrix_exp``."""
    return linalg_matrix_exp(input)


@public("function method")
def orgqr(input, input2):
    """``linalg.householder_product`` under LAPACK's name (``input2``: the ``tau``)."""
    return linalg_householder_product(input, input2)


@public("function")
def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-d ``x``: columns ``x**(N-1), ..., x, 1`` (``increasing``:
    the other way), built as PyTorch's (running products written into a matrix of ones)."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = x.dtype if x.dtype.is_floating_point else D.int64
    result = x.new_ones(x.shape[0], n, dtype=dtype)
    if n > 1:
        result[:, 1:].copy_(x.unsqueeze(1))
        result[:, 1:].copy_(result[:, 1:].cumprod(1))
    return result if increasing else result.flip(1)
