"""torch.linalg's factorizations and the functions made of them (svd, qr, cholesky, eigh,
slogdet, pinv, lstsq, matrix_exp, solve_triangular, matrix_power, multi_dot, cond, ...), their
old ``torch.*`` spellings, cholesky_solve/cholesky_inverse, erfinv, trapezoid and friends,
tril/triu_indices, cartesian_prod, combinations and block_diag, against PyTorch: values, result
types, node names, gradients (through gauge-invariant losses where a factor is defined up to
signs) and errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from devices import on_cuda

import numbagrad as ng
from numbagrad.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)
TALL = rng.standard_normal((2, 4, 3))
WIDE = rng.standard_normal((2, 3, 4))
SQ = rng.standard_normal((2, 3, 3))
SPD = SQ @ SQ.transpose(0, 2, 1) + 3 * np.eye(3)
RHS = rng.standard_normal((2, 3, 2))
RHS4 = rng.standard_normal((2, 4, 2))
VEC = rng.standard_normal(4)


def _gauge_free(L, U, S, Vh):
    """Functions of an SVD that do not depend on the signs of its vectors: S and
    U diag(S^3) Vh."""
    k = S.shape[-1]
    rebuilt = U[..., :, :k] @ L.diag_embed(S**3) @ Vh[..., :k, :]
    return L.cat([S, rebuilt.flatten(-2)], -1)


def _eigh_free(L, w, V):
    return L.cat([w, (V @ L.diag_embed(w.exp()) @ V.mT).flatten(-2)], -1)


CASES = {
    "svd_tall": (lambda L, a: _gauge_free(L, *L.linalg.svd(a, full_matrices=False)), [TALL]),
    "svd_wide": (lambda L, a: _gauge_free(L, *L.linalg.svd(a, full_matrices=False)), [WIDE]),
    "svd_full": (lambda L, a: _gauge_free(L, *L.linalg.svd(a)), [TALL]),
    "svd_U_abs": (lambda L, a: L.linalg.svd(a, full_matrices=False).U.abs(), [TALL]),
    "svd_Vh_abs": (lambda L, a: L.linalg.svd(a, False).Vh.abs(), [WIDE]),
    "svd_S": (lambda L, a: L.linalg.svd(a)[1], [WIDE]),
    "svdvals": (lambda L, a: L.linalg.svdvals(a), [TALL]),
    "torch_svd": (lambda L, a: L.svd(a).V.abs() + L.svd(a, some=False).S[..., None, :1], [TALL]),
    "torch_svd_values": (lambda L, a: L.svd(a, compute_uv=False).S, [WIDE]),
    "qr_Q": (lambda L, a: L.linalg.qr(a).Q, [TALL]),
    "qr_R": (lambda L, a: L.linalg.qr(a).R, [TALL]),
    "qr_both": (lambda L, a: L.cat(list(L.linalg.qr(a)), -1), [SQ]),
    "qr_wide_Q": (lambda L, a: L.linalg.qr(a).Q, [WIDE]),
    "qr_wide_R": (lambda L, a: L.linalg.qr(a)[1], [WIDE]),
    "qr_complete": (lambda L, a: L.linalg.qr(a, mode="complete").R, [WIDE]),
    "qr_method": (lambda L, a: a.qr().R, [TALL]),
    "cholesky": (lambda L, a: L.linalg.cholesky(a), [SPD]),
    "cholesky_upper": (lambda L, a: L.linalg.cholesky(a, upper=True), [SPD]),
    "cholesky_old": (lambda L, a: L.cholesky(a, upper=True) + a.cholesky(), [SPD]),
    "eigh": (lambda L, a: _eigh_free(L, *L.linalg.eigh(a)), [SPD]),
    "eigh_upper": (lambda L, a: _eigh_free(L, *L.linalg.eigh(a, UPLO="U")), [SPD]),
    "eigh_vectors_abs": (lambda L, a: L.linalg.eigh(a).eigenvectors.abs(), [SPD]),
    "eigh_values": (lambda L, a: L.linalg.eigh(a).eigenvalues, [SPD]),
    "eigvalsh": (lambda L, a: L.linalg.eigvalsh(a), [SPD]),
    "slogdet": (lambda L, a: L.linalg.slogdet(a).logabsdet, [SQ]),
    "slogdet_sign": (lambda L, a: L.linalg.slogdet(a).sign + L.linalg.slogdet(a)[1], [SQ]),
    "slogdet_old": (lambda L, a: L.slogdet(a).logabsdet * a.slogdet()[0], [SQ]),
    "logdet": (lambda L, a: L.logdet(a) + a.logdet(), [SPD]),
    "logdet_negative": (lambda L, a: L.logdet(a), [SQ]),
    "pinv_tall": (lambda L, a: L.linalg.pinv(a), [TALL]),
    "pinv_wide": (lambda L, a: L.linalg.pinv(a), [WIDE]),
    "pinv_hermitian": (lambda L, a: L.linalg.pinv(a, hermitian=True), [SPD]),
    "pinverse": (lambda L, a: L.pinverse(a) + a.pinverse(1e-3), [TALL]),
    "lstsq": (lambda L, a, b: L.linalg.lstsq(a, b).solution, [TALL, RHS4]),
    "lstsq_vector": (lambda L, a, b: L.linalg.lstsq(a, b).solution, [TALL[0], VEC]),
    "matrix_exp": (lambda L, a: L.linalg.matrix_exp(a), [SQ]),
    "matrix_exp_old": (lambda L, a: L.matrix_exp(a[0]) + a[1].matrix_exp(), [SQ]),
    "matrix_power_5": (lambda L, a: L.linalg.matrix_power(a, 5), [SQ]),
    "matrix_power_3": (lambda L, a: L.matrix_power(a[0], 3), [SQ]),
    "matrix_power_-2": (lambda L, a: a.matrix_power(-2), [SQ]),
    "matrix_power_1": (lambda L, a: L.linalg.matrix_power(a, 1), [SQ]),
    "matrix_power_-1": (lambda L, a: L.linalg.matrix_power(a[0], -1), [SQ]),
    "matrix_power_0": (lambda L, a: L.linalg.matrix_power(a, 0), [SQ]),
    "solve_triangular": (lambda L, a, b: L.linalg.solve_triangular(a, b, upper=True), [SQ, RHS]),
    "solve_triangular_lower_right": (
        lambda L, a, b: L.linalg.solve_triangular(a, b.mT, upper=False, left=False), [SQ, RHS]),
    "solve_triangular_unit": (
        lambda L, a, b: L.linalg.solve_triangular(a, b, upper=False, unitriangular=True),
        [SQ, RHS[:1]]),
    "multi_dot_2": (lambda L, a, b: L.linalg.multi_dot([a[0], b[0]]), [TALL, SQ]),
    "multi_dot_3": (lambda L, a, b, c: L.linalg.multi_dot([a[0], b[0], c[0]]), [TALL, SQ, RHS]),
    "multi_dot_4": (lambda L, a, b, c: L.linalg.multi_dot([a[0], b[0], b[1], c[0]]),
                    [TALL, SQ, RHS]),
    "multi_dot_vectors": (lambda L, a, b: L.linalg.multi_dot([a[0, :, 0], a[0], b[0], b[1],
                                                              a[1, 0]]), [TALL, SQ]),
    "cholesky_solve": (lambda L, b, c: L.cholesky_solve(b, L.linalg.cholesky(c)), [RHS, SPD]),
    "cholesky_solve_upper": (lambda L, b, c: b.cholesky_solve(L.linalg.cholesky(c).mT, True),
                             [RHS[:1], SPD]),
    "cholesky_solve_broadcast": (lambda L, b, c: L.cholesky_solve(b, c.tril() + 3 * L.eye(3)),
                                 [RHS, SQ[:1]]),
    "cholesky_inverse": (lambda L, c: L.cholesky_inverse(L.linalg.cholesky(c)), [SPD]),
    "cholesky_inverse_upper": (lambda L, c: c.triu().cholesky_inverse(upper=True), [SPD]),
    "cond": (lambda L, a: L.linalg.cond(a), [TALL]),
    "cond_-2": (lambda L, a: L.linalg.cond(a, -2), [WIDE]),
    "matrix_norm_2": (lambda L, a: L.linalg.matrix_norm(a, 2), [TALL]),
    "matrix_norm_-2": (lambda L, a: L.linalg.matrix_norm(a, -2, dim=(0, 2)), [TALL]),
    "matrix_norm_nuc": (lambda L, a: L.linalg.matrix_norm(a, "nuc", dim=(2, 0), keepdim=True),
                        [TALL]),
    "norm_nuc": (lambda L, a: L.linalg.norm(a[0], "nuc"), [TALL]),
    "vecdot": (lambda L, a, b: L.linalg.vecdot(a, b), [TALL, TALL[:1]]),
    "vecdot_dim": (lambda L, a, b: L.linalg.vecdot(a, b, dim=0), [TALL, TALL]),
    "vecdot_vectors": (lambda L, a, b: L.linalg.vecdot(a[0, 0], b[1, 1]), [TALL, TALL]),
    "diagonal": (lambda L, a: L.linalg.diagonal(a, offset=1), [TALL]),
    "diagonal_dims": (lambda L, a: L.linalg.diagonal(a, dim1=0, dim2=2), [TALL]),
    "matmul": (lambda L, a, b: L.linalg.matmul(a, b), [TALL, SQ]),
    "vander": (lambda L, a: L.linalg.vander(a), [TALL]),
    "vander_N": (lambda L, a: L.linalg.vander(a[0, 0], N=5), [TALL]),
    # trapezoidal integration, products of sets, block matrices
    "trapezoid": (lambda L, y: L.trapezoid(y), [TALL]),
    "trapezoid_dx": (lambda L, y: L.trapezoid(y, dx=0.5, dim=1), [TALL]),
    "trapezoid_x": (lambda L, y, x: L.trapezoid(y, x), [TALL, SQ[0, 0]]),
    "trapezoid_x_dims": (lambda L, y, x: L.trapezoid(y, x, dim=1), [TALL, TALL[0]]),
    "trapz": (lambda L, y, x: L.trapz(y, x, dim=0), [TALL, VEC[:2]]),
    "cumulative_trapezoid": (lambda L, y: L.cumulative_trapezoid(y), [TALL]),
    "cumulative_trapezoid_dx": (lambda L, y: L.cumulative_trapezoid(y, dx=2.0, dim=0), [TALL]),
    "cumulative_trapezoid_x": (lambda L, y, x: L.cumulative_trapezoid(y, x, dim=1),
                               [TALL, VEC]),
    "cartesian_prod": (lambda L, x, y: L.cartesian_prod(x, y, x[:2]), [VEC, VEC[:3]]),
    "combinations": (lambda L, x: L.combinations(x), [VEC]),
    "combinations_3": (lambda L, x: L.combinations(x, 3, with_replacement=True), [VEC]),
    "block_diag": (lambda L, a, b: L.block_diag(a[0], b[0, 0], b[1, 0, 0], a[1].mT), [TALL, SQ]),
}


def _check(case, dtype):
    f, args = CASES[case]
    T = [torch.tensor(v.astype(dtype), requires_grad=True) for v in args]
    N = [ng.tensor(v.astype(dtype), requires_grad=True) for v in args]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yt, yn = f(torch, *T), f(ng, *N)
    assert type(yn.grad_fn).__name__ == type(yt.grad_fn).__name__
    assert yn.dtype.name == dtype and tuple(yn.shape) == tuple(yt.shape)
    tol = 1e-9 if dtype == "float64" else 2e-4
    np.testing.assert_allclose(yn.detach().numpy(), yt.detach().numpy(), rtol=tol, atol=tol)
    return T, N, yt, yn, tol


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", list(CASES))
def test_values_nodes_and_gradients_match_pytorch(case, dtype):
    T, N, yt, yn, tol = _check(case, dtype)
    w = rng.standard_normal(tuple(yt.shape)).astype(dtype)
    (yt * torch.tensor(w)).nan_to_num().sum().backward()
    (yn * ng.tensor(w)).nan_to_num().sum().backward()
    for t, n in zip(T, N):
        np.testing.assert_allclose(n.grad.numpy(), t.grad.numpy(), rtol=tol * 10, atol=tol * 10)


# (PyTorch cannot differentiate these: its backward meets a tensor its forward wrote in
# place; values and nodes only)
FORWARD_ONLY = {
    "cond_1": (lambda L, a: L.linalg.cond(a, 1), [SQ]),
    "cond_fro": (lambda L, a: L.linalg.cond(a, "fro"), [SQ]),
    "cond_-inf": (lambda L, a: L.linalg.cond(a, -math.inf), [SQ]),
    "cond_singular": (lambda L, a: L.linalg.cond(a * 0 + 1, math.inf), [SQ]),
    "torch_vander": (lambda L, a: L.vander(a[0, 0]), [TALL]),
    "torch_vander_increasing": (lambda L, a: L.vander(a[0, 0], N=5, increasing=True), [TALL]),
}


@pytest.mark.parametrize("case", list(FORWARD_ONLY))
def test_values_and_nodes_match_pytorch(case):
    CASES[case] = FORWARD_ONLY[case]
    try:
        _check(case, "float64")
    finally:
        del CASES[case]


def test_cond_is_differentiable_where_pytorch_writes_in_place():
    x = ng.tensor(SQ[0], requires_grad=True)
    assert gradcheck(lambda a: ng.linalg.cond(a, 1), (x,))
    assert gradcheck(lambda a: ng.linalg.cond(a, "fro"), (x,))


def test_torch_vander_backward_fails_as_pytorch():
    # (cumprod saves the columns it then overwrites, in both libraries)
    for L in (torch, ng):
        x = L.tensor(VEC, requires_grad=True)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            L.vander(x).sum().backward()


def test_result_types_match_pytorch():
    calls = [
        lambda L: L.linalg.svd(L.ones(3, 2)), lambda L: L.svd(L.ones(3, 2)),
        lambda L: L.linalg.qr(L.ones(3, 2)), lambda L: L.qr(L.ones(3, 2)),
        lambda L: L.linalg.eigh(L.eye(2)), lambda L: L.linalg.slogdet(L.eye(2)),
        lambda L: L.slogdet(L.eye(2)), lambda L: L.linalg.lstsq(L.eye(2), L.ones(2, 1)),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for call in calls:
            theirs, ours = call(torch), call(ng)
            assert type(ours).__name__ == type(theirs).__name__
            assert repr(ours).startswith(f"numbagrad.return_types.{type(theirs).__name__}(")
            names = [line.split("=")[0] for line in repr(theirs).splitlines()[1:]
                     if "=" in line]
            assert list(ours._fields) == names
            for o, t in zip(ours, theirs):
                assert tuple(o.shape) == tuple(t.shape) and o.dtype.name == str(t.dtype)[6:]


def test_lstsq_rank_and_empty_outputs():
    A = np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]])
    B = rng.standard_normal((3, 2))
    theirs = torch.linalg.lstsq(torch.tensor(A), torch.tensor(B))
    ours = ng.linalg.lstsq(ng.tensor(A), ng.tensor(B))
    assert ours.rank.item() == theirs.rank.item() == 1
    np.testing.assert_allclose(ours.solution.numpy(), theirs.solution.numpy(), atol=1e-12)


def test_matrix_rank_matches_pytorch():
    A = rng.standard_normal((3, 4, 2)) @ rng.standard_normal((3, 2, 5))
    A[1, :, 2:] = 0
    for kw in ({}, {"atol": 1.0}, {"rtol": 0.5}, {"atol": 0.1, "rtol": 0.2}):
        theirs = torch.linalg.matrix_rank(torch.tensor(A), **kw)
        ours = ng.linalg.matrix_rank(ng.tensor(A), **kw)
        assert ours.dtype.name == "int64"
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    S = SPD[0] - 2 * np.eye(3)
    assert (ng.linalg.matrix_rank(ng.tensor(S), hermitian=True).item()
            == torch.linalg.matrix_rank(torch.tensor(S), hermitian=True).item())


def test_torch_svd_without_vectors_gives_zeros():
    theirs = torch.svd(torch.tensor(TALL), compute_uv=False)
    ours = ng.svd(ng.tensor(TALL), compute_uv=False)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.numpy(), t.numpy(), atol=1e-12)


def test_second_derivatives_match_pytorch():
    def loss(L, a):
        U, S, Vh = L.linalg.svd(a, full_matrices=False)
        w, V = L.linalg.eigh(a.mT @ a)
        Q, R = L.linalg.qr(a)
        C = L.linalg.cholesky(a.mT @ a)
        return ((U @ L.diag_embed(S**3) @ Vh).sum() + (V.abs() * w.unsqueeze(-2)).sum() + (Q * R.sum()).sum()
                + C.sum() + L.linalg.pinv(a).sum() + L.linalg.matrix_exp(a[..., :3, :]).sum())

    grads = []
    for L in (torch, ng):
        x = L.tensor(TALL, requires_grad=True)
        (g,) = L.autograd.grad(loss(L, x), x, create_graph=True)
        (g * g).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("fn", [
    lambda a: ng.linalg.svd(a, full_matrices=False).U.abs(),
    lambda a: ng.linalg.eigh(a + a.mT).eigenvectors.abs(),
    lambda a: ng.linalg.qr(a).R,
    lambda a: ng.linalg.solve_triangular(a + 3 * ng.eye(3, dtype=a.dtype), a, upper=False,
                                         left=False),
    lambda a: ng.linalg.lstsq(a, a[:, :2]).solution,
], ids=["svd_U", "eigh_vectors", "qr_R", "solve_triangular_right", "lstsq"])
def test_gradgradcheck(fn):
    x = ng.tensor(SQ[0] + 2 * np.eye(3), requires_grad=True)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


NPD = [[1.0, 2.0], [2.0, 1.0]]
ERRORS = {
    "svd_one_dim": lambda L: L.linalg.svd(L.ones(3)),
    "svd_integer": lambda L: L.linalg.svd(L.ones(2, 2, dtype=L.long)),
    "svd_driver_on_cpu": lambda L: L.linalg.svd(L.eye(2), driver="gesvd"),
    "svdvals_driver_on_cpu": lambda L: L.linalg.svdvals(L.eye(2), driver="gesvd"),
    "svdvals_one_dim": lambda L: L.linalg.svdvals(L.ones(3)),
    "qr_mode": lambda L: L.linalg.qr(L.ones(2, 2), mode="x"),
    "qr_one_dim": lambda L: L.linalg.qr(L.ones(2)),
    "qr_r_backward": lambda L: L.linalg.qr(L.ones(2, 2, requires_grad=True),
                                           mode="r").R.sum().backward(),
    "qr_complete_tall_backward": lambda L: L.linalg.qr(
        L.ones(3, 2, requires_grad=True), mode="complete").Q.sum().backward(),
    "cholesky_not_pd": lambda L: L.linalg.cholesky(L.tensor(NPD)),
    "cholesky_not_pd_batch": lambda L: L.linalg.cholesky(L.stack([L.eye(2), L.tensor(NPD)])),
    "cholesky_not_square": lambda L: L.linalg.cholesky(L.ones(2, 3)),
    "cholesky_integer": lambda L: L.linalg.cholesky(L.ones(2, 2, dtype=L.long)),
    "cholesky_old_not_pd": lambda L: L.cholesky(L.tensor(NPD)),
    "eigh_not_square": lambda L: L.linalg.eigh(L.ones(2, 3)),
    "eigh_uplo": lambda L: L.linalg.eigh(L.eye(2), UPLO="X"),
    "eigh_integer": lambda L: L.linalg.eigh(L.ones(2, 2, dtype=L.long)),
    "eigvalsh_not_square": lambda L: L.linalg.eigvalsh(L.ones(2, 3)),
    "slogdet_not_square": lambda L: L.linalg.slogdet(L.ones(2, 3)),
    "matrix_power_not_square": lambda L: L.linalg.matrix_power(L.ones(2, 3), 2),
    "matrix_power_one_dim": lambda L: L.linalg.matrix_power(L.ones(3), 2),
    "matrix_power_singular": lambda L: L.linalg.matrix_power(L.ones(2, 2), -1),
    "matrix_power_integer_inverse": lambda L: L.linalg.matrix_power(
        L.ones(2, 2, dtype=L.long), -1),
    "matrix_exp_not_square": lambda L: L.linalg.matrix_exp(L.ones(2, 3)),
    "matrix_exp_integer": lambda L: L.linalg.matrix_exp(L.ones(2, 2, dtype=L.long)),
    "multi_dot_one": lambda L: L.linalg.multi_dot([L.ones(2, 2)]),
    "multi_dot_first_3d": lambda L: L.linalg.multi_dot([L.ones(2, 2, 2), L.ones(2, 2)]),
    "multi_dot_last_3d": lambda L: L.linalg.multi_dot([L.ones(2, 2), L.ones(2, 2, 2)]),
    "multi_dot_middle_3d": lambda L: L.linalg.multi_dot([L.ones(2, 2), L.ones(2, 2, 2),
                                                         L.ones(2)]),
    "multi_dot_shapes": lambda L: L.linalg.multi_dot([L.ones(2, 3), L.ones(2, 2)]),
    "multi_dot_dtypes": lambda L: L.linalg.multi_dot([L.ones(2, 2),
                                                      L.ones(2, 2, dtype=L.float64)]),
    "solve_triangular_no_upper": lambda L: L.linalg.solve_triangular(L.eye(2), L.ones(2, 2)),
    "solve_triangular_shapes": lambda L: L.linalg.solve_triangular(L.eye(2), L.ones(3, 2),
                                                                   upper=True),
    "solve_triangular_vector": lambda L: L.linalg.solve_triangular(L.eye(2), L.ones(2),
                                                                   upper=True),
    "solve_triangular_not_square": lambda L: L.linalg.solve_triangular(
        L.ones(2, 3), L.ones(2, 2), upper=True),
    "lstsq_shapes": lambda L: L.linalg.lstsq(L.ones(3, 2), L.ones(2, 2)),
    "lstsq_vector_shapes": lambda L: L.linalg.lstsq(L.ones(4, 3), L.ones(5)),
    "lstsq_batches": lambda L: L.linalg.lstsq(L.ones(2, 4, 3), L.ones(3, 4, 1)),
    "solve_triangular_batches": lambda L: L.linalg.solve_triangular(
        L.ones(2, 3, 3), L.ones(3, 3, 1), upper=True),
    "cholesky_solve_batches": lambda L: L.cholesky_solve(L.ones(2, 3, 1), L.ones(3, 3, 3)),
    "lstsq_one_dim": lambda L: L.linalg.lstsq(L.ones(3), L.ones(3)),
    "lstsq_driver": lambda L: L.linalg.lstsq(L.ones(3, 2), L.ones(3, 2), driver="x"),
    "lstsq_dtypes": lambda L: L.linalg.lstsq(L.ones(3, 2), L.ones(3, 2, dtype=L.float64)),
    "pinv_one_dim": lambda L: L.linalg.pinv(L.ones(3)),
    "pinv_integer": lambda L: L.linalg.pinv(L.ones(2, 2, dtype=L.long)),
    "cholesky_solve_not_square": lambda L: L.cholesky_solve(L.ones(2, 2), L.ones(2, 3)),
    "cholesky_solve_vector": lambda L: L.cholesky_solve(L.ones(2), L.eye(2)),
    "cholesky_solve_shapes": lambda L: L.cholesky_solve(L.ones(3, 2), L.eye(2)),
    "cholesky_solve_dtypes": lambda L: L.cholesky_solve(L.ones(2, 2),
                                                        L.eye(2, dtype=L.float64)),
    "cholesky_solve_integer": lambda L: L.cholesky_solve(L.ones(2, 2, dtype=L.long),
                                                         L.eye(2, dtype=L.long)),
    "cholesky_inverse_not_square": lambda L: L.cholesky_inverse(L.ones(2, 3)),
    "cholesky_inverse_one_dim": lambda L: L.cholesky_inverse(L.ones(3)),
    "cholesky_inverse_integer": lambda L: L.cholesky_inverse(L.ones(2, 2, dtype=L.long)),
    "matrix_rank_one_dim": lambda L: L.linalg.matrix_rank(L.ones(3)),
    "cond_one_dim": lambda L: L.linalg.cond(L.ones(3)),
    "cond_1_one_dim": lambda L: L.linalg.cond(L.ones(3), 1),
    "matrix_rank_integer": lambda L: L.linalg.matrix_rank(L.ones(2, 2, dtype=L.long)),
    "trapezoid_x_and_dx": lambda L: L.trapezoid(L.ones(3), L.ones(3), dx=1.0),
    "cumulative_trapezoid_x_and_dx": lambda L: L.cumulative_trapezoid(L.ones(3), L.ones(3),
                                                                      dx=1),
    "cond_not_square": lambda L: L.linalg.cond(L.ones(2, 3), 1),
    "cond_fro_not_square": lambda L: L.linalg.cond(L.ones(2, 3), "fro"),
    "cond_inf_not_square": lambda L: L.linalg.cond(L.ones(2, 3), math.inf),
    "matrix_norm_order": lambda L: L.linalg.matrix_norm(L.eye(2), 3),
    "vecdot_sizes": lambda L: L.linalg.vecdot(L.ones(2), L.ones(3)),
    "vecdot_dtypes": lambda L: L.linalg.vecdot(L.ones(2), L.ones(2, dtype=L.float64)),
    "vecdot_integer": lambda L: L.linalg.vecdot(L.ones(2, dtype=L.long),
                                                L.ones(2, dtype=L.long)),
    "vander_scalar": lambda L: L.linalg.vander(L.tensor(1.0)),
    "vander_bool": lambda L: L.linalg.vander(L.ones(2, dtype=L.bool)),
    "trapezoid_bool": lambda L: L.trapezoid(L.ones(3, dtype=L.bool)),
    "trapezoid_samples": lambda L: L.trapezoid(L.ones(3, 4), L.ones(3)),
    "cumulative_trapezoid_samples": lambda L: L.cumulative_trapezoid(L.ones(3, 4), L.ones(3)),
    "combinations_2d": lambda L: L.combinations(L.ones(3, 4)),
    "combinations_negative": lambda L: L.combinations(L.ones(3), -1),
    "cartesian_prod_2d": lambda L: L.cartesian_prod(L.ones(3, 4)),
    "block_diag_3d": lambda L: L.block_diag(L.ones(2, 2, 2)),
    "tril_indices_float": lambda L: L.tril_indices(3, 4, 1, dtype=L.float32),
    "triu_indices_negative": lambda L: L.triu_indices(3, -2),
    "tril_indices_negative": lambda L: L.tril_indices(-1, 3),
    "torch_vander_2d": lambda L: L.vander(L.ones(2, 2)),
    "torch_vander_negative": lambda L: L.vander(L.ones(2), N=-1),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_match_pytorch(case):
    out = []
    for L in (torch, ng):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as info:
                ERRORS[case](L)
        out.append(info.value)
    theirs, ours = out
    assert str(ours) == str(theirs)
    for kind in (RuntimeError, NotImplementedError, TypeError, ValueError, IndexError):
        assert isinstance(ours, kind) == isinstance(theirs, kind)
    assert isinstance(ours, ng.linalg.LinAlgError) == isinstance(theirs, torch.linalg.LinAlgError)


# PyTorch's texts (its TORCH_WARN_ONCE gives them once a process, so they are written here)
DEPRECATED = {
    "qr": "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future "
          "PyTorch release.\nThe boolean parameter 'some' has been replaced with a string "
          "parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced with\n"
          "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete')",
    "cholesky": "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be "
                "removed in a future PyTorch release.\nL = torch.cholesky(A)\nshould be "
                "replaced with\nL = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, "
                "upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\nThis "
                "transform will produce equivalent results for all valid (symmetric positive "
                "definite) inputs.",
}


@pytest.mark.parametrize("name", list(DEPRECATED))
def test_deprecation_warnings_match_pytorch(name):
    for L in (torch, ng):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            getattr(L, name)(L.eye(2))
            getattr(L, name)(L.eye(2))  # (once a process)
        texts = [str(w.message).split(" (Triggered internally")[0] for w in caught]
        assert texts == [DEPRECATED[name]] or L is torch and not texts


@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("shapes", ["tall", "wide", "vector", "deficient"])
def test_lstsq_drivers_match_pytorch(driver, shapes):
    A, B = {"tall": (TALL, RHS4), "wide": (WIDE, RHS), "vector": (TALL[0], VEC),
            "deficient": (np.stack([TALL[0], TALL[1] * [1, 0, 1]]), RHS4)}[shapes]
    if shapes == "deficient":
        A[1, :, 1] = A[1, :, 0]
        if driver in ("gels", "gelsy", None):
            # (gels assumes full rank; gelsy's rank is that of its pivoted QR's condition
            # estimates, which numbagrad does not reproduce: it takes the singular values', as
            # gelsd and gelss)
            return
    T = [torch.tensor(v, requires_grad=True) for v in (A, B)]
    N = [ng.tensor(v, requires_grad=True) for v in (A, B)]
    theirs, ours = torch.linalg.lstsq(*T, driver=driver), ng.linalg.lstsq(*N, driver=driver)
    for o, t in zip(ours, theirs):
        assert tuple(o.shape) == tuple(t.shape) and o.dtype.name == str(t.dtype)[6:]
        assert (o.grad_fn is None) == (t.grad_fn is None)
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), atol=1e-9)
    if shapes == "deficient":
        return  # (PyTorch differentiates its pseudo-inverse: not at a rank drop)
    for L, r in ((torch, theirs), (ng, ours)):
        loss = r.solution.sum()
        if r.residuals.numel():
            loss = loss + (r.residuals * L.arange(1.0, 1.0 + r.residuals.shape[-1])).sum()
        loss.backward()
    for t, n in zip(T, N):
        np.testing.assert_allclose(n.grad.numpy(), t.grad.numpy(), atol=1e-9)


# ---------------------------------------------------------------- erfinv

ERFINV_POINTS = [-1.0, -0.999999, -0.9, -0.5, -1e-8, 0.0, 0.3, 0.7, 0.99, 0.9999999, 1.0, 1.5,
                 -2.0, math.nan]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_erfinv_matches_pytorch(dtype):
    a = np.array(ERFINV_POINTS, dtype)
    theirs, ours = torch.tensor(a).erfinv(), ng.tensor(a).erfinv()
    # (near ±1 erfinv magnifies the rounding of its input a millionfold)
    tol = 1e-10 if dtype == "float64" else 1e-6
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=tol, atol=tol)
    assert ours.dtype.name == dtype
    t, n = torch.tensor(a), ng.tensor(a)
    t.erfinv_(), n.erfinv_()
    np.testing.assert_allclose(n.numpy(), t.numpy(), rtol=tol, atol=tol)


def test_erfinv_of_integers_and_in_place_refusal_match_pytorch():
    ints = [0, 1, -1]
    np.testing.assert_array_equal(ng.erfinv(ng.tensor(ints)).numpy(),
                                  torch.erfinv(torch.tensor(ints)).numpy())
    assert ng.erfinv(ng.tensor(ints)).dtype.name == "float32"
    msgs = []
    for L in (torch, ng):
        with pytest.raises(RuntimeError) as info:
            L.tensor(ints).erfinv_()
        msgs.append(str(info.value))
    assert msgs[1] == msgs[0]


def test_erfinv_gradients_match_pytorch():
    a = np.linspace(-0.95, 0.95, 7)
    xt, xn = torch.tensor(a, requires_grad=True), ng.tensor(a, requires_grad=True)
    yt, yn = torch.erfinv(xt), ng.erfinv(xn)
    assert type(yn.grad_fn).__name__ == type(yt.grad_fn).__name__ == "ErfinvBackward0"
    for L, x, y in ((torch, xt, yt), (ng, xn, yn)):
        (g,) = L.autograd.grad(y.sum(), x, create_graph=True)
        (g * g).sum().backward()
    np.testing.assert_allclose(xn.grad.numpy(), xt.grad.numpy(), rtol=1e-10)


# ---------------------------------------------------------------- misc. factories and edges


def test_triangle_indices_match_pytorch():
    for args in ((3, 4, -1), (4, 3, 1), (3, 3, 5), (2, 2, -5), (0, 3, 0), (5, 2, 0)):
        for name in ("tril_indices", "triu_indices"):
            theirs, ours = getattr(torch, name)(*args), getattr(ng, name)(*args)
            assert ours.dtype.name == "int64"
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    ours = ng.triu_indices(3, 3, dtype=ng.int32)
    assert ours.dtype.name == "int32"
    np.testing.assert_array_equal(ours.numpy(), torch.triu_indices(3, 3, dtype=torch.int32))


def test_empty_and_integer_edges_match_pytorch():
    calls = [
        lambda L: L.trapezoid(L.tensor([1, 2, 3])), lambda L: L.trapezoid(L.ones(3, 0)),
        lambda L: L.cumulative_trapezoid(L.ones(3, 0)), lambda L: L.combinations(L.ones(3), 0),
        lambda L: L.block_diag(), lambda L: L.block_diag(L.tensor(2), L.ones(2, 1)),
        lambda L: L.cartesian_prod(L.arange(3)), lambda L: L.vander(L.tensor([1, 2, 3])),
        lambda L: L.linalg.vander(L.tensor([1, 2, 3]), N=4),
        lambda L: L.linalg.cond(L.zeros(0, 0)), lambda L: L.linalg.cond(L.zeros(2, 0, 0), 1),
        lambda L: L.linalg.matrix_rank(L.zeros(0, 3)),
        lambda L: L.linalg.matrix_rank(L.zeros(2, 0, 3)),
        lambda L: L.combinations(L.zeros(0)), lambda L: L.combinations(L.arange(3.0), 4),
    ]
    for call in calls:
        theirs, ours = call(torch), call(ng)
        assert ours.dtype.name == str(theirs.dtype)[6:] and tuple(ours.shape) == theirs.shape
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@on_cuda
def test_cuda_tensors_take_the_host_round_trip():
    # (no device solver: the values go to NumPy's LAPACK and back; the rules run on the device)
    def loss(L, a, device):
        a = a.to(device)
        return (L.linalg.svdvals(a).sum() + L.linalg.cholesky(a).sum() + L.linalg.eigvalsh(a).sum()
                + L.linalg.qr(a).R.sum() + L.linalg.pinv(a).sum() + L.linalg.matrix_exp(a / 9).sum()
                + L.linalg.solve_triangular(a, a, upper=True).sum() + L.logdet(a)
                + L.cholesky_solve(a, a.tril()).sum() + L.block_diag(a, a[0]).sum()
                + L.erfinv(a / 20).sum() + L.trapezoid(a).sum())

    grads = []
    for L, device in ((torch, "cpu"), (ng, "cuda")):
        x = L.tensor(SPD[0], requires_grad=True)
        y = loss(L, x, device)
        assert str(y.device).startswith(device)
        y.backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-8)


# ---------------------------------------------------------------- forward mode

JVP_CASES = {
    "svdvals": (lambda L, a: L.linalg.svdvals(a), TALL),
    "svd": (lambda L, a: _gauge_free(L, *L.linalg.svd(a, full_matrices=False)), WIDE),
    "qr": (lambda L, a: L.cat(list(L.linalg.qr(a)), -1), SQ),
    "qr_tall": (lambda L, a: L.linalg.qr(a).Q, TALL),
    "qr_wide": (lambda L, a: L.linalg.qr(a).R, WIDE),
    "cholesky": (lambda L, a: L.linalg.cholesky(a, upper=True), SPD),
    "eigh": (lambda L, a: _eigh_free(L, *L.linalg.eigh(a)), SPD),
    "eigvalsh": (lambda L, a: L.linalg.eigvalsh(a), SPD),
    "slogdet": (lambda L, a: L.linalg.slogdet(a).logabsdet, SQ),
    "matrix_exp": (lambda L, a: L.linalg.matrix_exp(a), SQ),
    "pinv": (lambda L, a: L.linalg.pinv(a), TALL),
    "lstsq": (lambda L, a: L.linalg.lstsq(a, a[..., :2]).solution, TALL),
    "solve_triangular": (lambda L, a: L.linalg.solve_triangular(a, a.mT, upper=True), SPD),
    "cholesky_solve": (lambda L, a: L.cholesky_solve(a, a.tril()), SPD),
    "block_diag": (lambda L, a: L.block_diag(a[0], a[1, :2]), SQ),
    "trapezoid": (lambda L, a: L.cumulative_trapezoid(a, a[0, 0]), SQ),
}


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("case", list(JVP_CASES))
def test_forward_mode_matches_torch_func_jvp(case):
    import numbagrad.autograd.forward_ad as fwAD

    f, a = JVP_CASES[case]
    t = rng.standard_normal(a.shape)
    _, theirs = torch.func.jvp(lambda x: f(torch, x), (torch.tensor(a),), (torch.tensor(t),))
    with fwAD.dual_level():
        _, ours = fwAD.unpack_dual(f(ng, fwAD.make_dual(ng.tensor(a), ng.tensor(t))))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-9, atol=1e-11)


def test_cholesky_inverse_forward_mode_is_the_derivative():
    # (PyTorch 2.13's own forward mode differs from its finite differences here)
    import numbagrad.autograd.forward_ad as fwAD

    a, t = SPD[0], rng.standard_normal((3, 3))

    def f(x):
        return ng.cholesky_inverse(x.tril())

    eps = 1e-6
    numeric = (f(ng.tensor(a + eps * t)) - f(ng.tensor(a - eps * t))).numpy() / (2 * eps)
    with fwAD.dual_level():
        _, ours = fwAD.unpack_dual(f(fwAD.make_dual(ng.tensor(a), ng.tensor(t))))
    np.testing.assert_allclose(ours.numpy(), numeric, rtol=1e-6, atol=1e-8)
