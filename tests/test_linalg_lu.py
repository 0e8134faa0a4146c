"""LU and the ``_ex`` variants of torch.linalg against PyTorch: ``linalg.lu_factor`` /
``lu_factor_ex`` / ``lu`` / ``lu_solve``, ``torch.lu_unpack``, the old ``torch.lu`` /
``torch.lu_solve`` (and their Tensor methods), ``linalg.solve_ex`` / ``inv_ex`` /
``cholesky_ex``, ``tensorinv`` / ``tensorsolve``, ``torch.chain_matmul`` and
``linalg.ldl_factor`` / ``ldl_factor_ex`` / ``ldl_solve``: values, result types, pivots and
info (int32), gradients (first and second order, forward mode), the _ex variants on singular
matrices, and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

rng = np.random.default_rng(7)
SQ = rng.standard_normal((2, 4, 4))
TALL = rng.standard_normal((2, 5, 3))
WIDE = rng.standard_normal((2, 3, 5))
RHS = rng.standard_normal((2, 4, 2))
SPD = SQ @ SQ.transpose(0, 2, 1) + 4 * np.eye(4)
T4 = rng.standard_normal((2, 4, 2, 4))  # (a square system of 8 unknowns, as a 4-d tensor)
B8 = rng.standard_normal((2, 4))
BIG = rng.standard_normal((3, 70, 70))  # (more than one panel of the factorization)
BIG_WIDE = rng.standard_normal((40, 90))
BIG_TALL = rng.standard_normal((90, 40))

# singular matrices whose factors are exact in floating point (their zero pivots are exact)
SINGULAR = {
    "zeros": np.zeros((3, 3)),
    "rank_one": np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [3.0, 6.0, 9.5]]),
    "zero_column": np.array([[0.0, 1.0], [0.0, 2.0]]),
    "equal_rows": np.array([[1.0, 2.0], [1.0, 2.0]]),
    "ones_tall": np.ones((3, 2)),
    "ones_wide": np.ones((2, 3)),
}
# a batch of an invertible matrix and a singular one
MIXED = np.stack([np.eye(2) + 1, np.array([[1.0, 2.0], [2.0, 4.0]])])
NOT_PD = np.stack([np.eye(3) * 2, np.array([[4.0, 2.0, 0.0], [2.0, -1.0, 0.0], [0.0, 0.0, 1.0]])])


def _cat(L, ts):
    return L.cat([t.flatten(-2) for t in ts], -1)


CASES = {
    "lu_factor": (lambda L, a: L.linalg.lu_factor(a).LU, [SQ]),
    "lu_factor_tall": (lambda L, a: L.linalg.lu_factor(a).LU, [TALL]),
    "lu_factor_wide": (lambda L, a: L.linalg.lu_factor(a)[0], [WIDE]),
    "lu_factor_ex": (lambda L, a: L.linalg.lu_factor_ex(a).LU, [SQ]),
    "lu_factor_2d": (lambda L, a: L.linalg.lu_factor(a[0]).LU, [SQ]),
    "lu_factor_big": (lambda L, a: L.linalg.lu_factor(a).LU, [BIG]),
    "lu_factor_big_wide": (lambda L, a: L.linalg.lu_factor(a).LU, [BIG_WIDE]),
    "lu_factor_big_tall": (lambda L, a: L.linalg.lu_factor(a).LU, [BIG_TALL]),
    "lu_L": (lambda L, a: L.linalg.lu(a).L, [SQ]),
    "lu_U": (lambda L, a: L.linalg.lu(a).U, [SQ]),
    "lu_all": (lambda L, a: _cat(L, L.linalg.lu(a)), [SQ]),
    "lu_tall": (lambda L, a: _cat(L, L.linalg.lu(a)[1:]), [TALL]),
    "lu_tall_L": (lambda L, a: L.linalg.lu(a).L, [TALL]),
    "lu_tall_U": (lambda L, a: L.linalg.lu(a).U, [TALL]),
    "lu_wide": (lambda L, a: _cat(L, L.linalg.lu(a)[1:]), [WIDE]),
    "lu_wide_L": (lambda L, a: L.linalg.lu(a).L, [WIDE]),
    "lu_wide_U": (lambda L, a: L.linalg.lu(a).U, [WIDE]),
    "lu_solve": (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b), [SQ, RHS]),
    "lu_solve_adjoint": (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b,
                                                           adjoint=True), [SQ, RHS]),
    "lu_solve_right": (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b.mT,
                                                         left=False), [SQ, RHS]),
    "lu_solve_right_adjoint": (lambda L, a, b: L.linalg.lu_solve(
        *L.linalg.lu_factor(a), b.mT, left=False, adjoint=True), [SQ, RHS]),
    "lu_solve_broadcast_B": (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a[0]), b),
                             [SQ, RHS]),
    "lu_solve_broadcast_LU": (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b[0]),
                              [SQ, RHS]),
    "lu_solve_big": (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b[..., :3]),
                     [BIG, BIG]),
    "lu_unpack": (lambda L, a: _cat(L, L.lu_unpack(*L.linalg.lu_factor(a))), [SQ]),
    "lu_unpack_tall": (lambda L, a: _cat(L, L.lu_unpack(*L.linalg.lu_factor(a))), [TALL]),
    "lu_unpack_wide": (lambda L, a: _cat(L, L.lu_unpack(*L.linalg.lu_factor(a))), [WIDE]),
    "lu_unpack_U": (lambda L, a: L.lu_unpack(*L.linalg.lu_factor(a)).U, [WIDE]),
    "lu_unpack_no_pivots": (lambda L, a: L.lu_unpack(*L.linalg.lu_factor(a),
                                                     unpack_pivots=False).L, [TALL]),
    "torch_lu": (lambda L, a: L.lu(a)[0] + a.lu(get_infos=True)[0], [SQ]),
    "torch_lu_solve": (lambda L, a, b: L.lu_solve(b, *L.lu(a)) + b.lu_solve(*a.lu()),
                       [SQ, RHS]),
    "solve_ex": (lambda L, a, b: L.linalg.solve_ex(a, b).result, [SQ, RHS]),
    "solve_ex_vector": (lambda L, a, b: L.linalg.solve_ex(a, b[..., 0]).result, [SQ, RHS]),
    "solve_ex_right": (lambda L, a, b: L.linalg.solve_ex(a, b.mT, left=False).result,
                       [SQ, RHS]),
    "solve_ex_broadcast": (lambda L, a, b: L.linalg.solve_ex(a[0], b).result, [SQ, RHS]),
    "solve_right": (lambda L, a, b: L.linalg.solve(a, b.mT, left=False), [SQ, RHS]),
    "inv_ex": (lambda L, a: L.linalg.inv_ex(a).inverse, [SQ]),
    "inv_ex_2d": (lambda L, a: L.linalg.inv_ex(a[1])[0], [SQ]),
    "cholesky_ex": (lambda L, a: L.linalg.cholesky_ex(a).L, [SPD]),
    "cholesky_ex_upper": (lambda L, a: L.linalg.cholesky_ex(a, upper=True).L, [SPD]),
    "tensorinv": (lambda L, a: L.linalg.tensorinv(a, ind=2), [T4]),
    "tensorinv_ind1": (lambda L, a: L.linalg.tensorinv(a.reshape(8, 2, 4), ind=1), [T4]),
    "tensorsolve": (lambda L, a, b: L.linalg.tensorsolve(a, b), [T4, B8]),
    "tensorsolve_dims": (lambda L, a, b: L.linalg.tensorsolve(a, b.mT, dims=(0,)), [T4, B8]),
    "chain_matmul": (lambda L, a, b: L.chain_matmul(a[0], a[1], b[0]), [SQ, RHS]),
    "chain_matmul_4": (lambda L, a, b: L.chain_matmul(b[0].mT, a[0], a[1], b[1]), [SQ, RHS]),
    "chain_matmul_one": (lambda L, a: L.chain_matmul(a[0]), [SQ]),
}
# (PyTorch's LU comes out in LAPACK's column-major layout: a reshape of it is a
# ReshapeAliasBackward0 there and a view here)
OTHER_NODES = {"tensorinv", "tensorinv_ind1"}


def _run(case, dtype="float64"):
    f, args = CASES[case]
    T = [torch.tensor(v.astype(dtype), requires_grad=True) for v in args]
    N = [ng.tensor(v.astype(dtype), requires_grad=True) for v in args]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yt, yn = f(torch, *T), f(ng, *N)
    if case not in OTHER_NODES:
        assert type(yn.grad_fn).__name__ == type(yt.grad_fn).__name__
    assert yn.dtype.name == dtype and tuple(yn.shape) == tuple(yt.shape)
    tol = 1e-9 if dtype == "float64" else 2e-4
    np.testing.assert_allclose(yn.detach().numpy(), yt.detach().numpy(), rtol=tol, atol=tol)
    return T, N, yt, yn, tol


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", list(CASES))
def test_values_nodes_and_gradients_match_pytorch(case, dtype):
    T, N, yt, yn, tol = _run(case, dtype)
    w = rng.standard_normal(tuple(yt.shape)).astype(dtype)
    (yt * torch.tensor(w)).sum().backward()
    (yn * ng.tensor(w)).sum().backward()
    for t, n in zip(T, N):
        scale = max(1.0, float(np.abs(t.grad.numpy()).max()))
        np.testing.assert_allclose(n.grad.numpy(), t.grad.numpy(), rtol=tol * 10,
                                   atol=tol * 10 * scale)


def test_second_derivatives_match_pytorch():
    def loss(L, a, t, w, b):
        LU, piv = L.linalg.lu_factor(a)
        _, Lt, Ut = L.linalg.lu(t)
        _, Lw, Uw = L.linalg.lu(w)
        x = (L.linalg.lu_solve(LU, piv, b)
             + L.linalg.lu_solve(LU, piv, b.mT, left=False, adjoint=True).mT)
        y = L.linalg.solve_ex(a, b).result.sum() + L.linalg.inv_ex(a).inverse.sum()
        C = L.linalg.cholesky_ex(a @ a.mT + L.eye(4, dtype=a.dtype)).L
        _, Lu, Uu = L.lu_unpack(LU, piv)
        return ((LU**2).sum() + (Lt**3).sum() + (Ut**2).sum() + (Lw.sum() * Uw**2).sum()
                + (x**2).sum() + y + (C**2).sum() + (Lu**3).sum() + (Uu**3).sum())

    grads = []
    for L in (torch, ng):
        xs = [L.tensor(v, requires_grad=True) for v in (SQ, TALL, WIDE, RHS)]
        gs = L.autograd.grad(loss(L, *xs), xs, create_graph=True)
        sum((g * g).sum() for g in gs).backward()
        grads.append([x.grad.numpy() for x in xs])
    for theirs, ours in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=1e-8)


def test_lu_solve_gradients_of_given_factors_match_pytorch():
    # (LU a leaf, with pivots that exchange rows, in every form of the system)
    lu = np.triu(SQ) + 3 * np.eye(4) + 0.3 * np.tril(rng.standard_normal((2, 4, 4)), -1)
    pivots = np.array([[2, 2, 4, 4], [1, 3, 3, 4]], np.int32)
    out = []
    for L in (torch, ng):
        LU, B = L.tensor(lu, requires_grad=True), L.tensor(RHS, requires_grad=True)
        results = []
        for left in (True, False):
            for adjoint in (False, True):
                X = L.linalg.lu_solve(LU, L.tensor(pivots), B if left else B.mT, left=left,
                                      adjoint=adjoint)
                (X * X).sum().backward()
                results.append(X.detach().numpy())
        out.append([LU.grad.numpy(), B.grad.numpy(), *results])
    for theirs, ours in zip(*out):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-10)


# (torch's forward_ad import warns about torch.jit.script)
@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
def test_forward_mode_matches_pytorch():
    import numbagrad.autograd.forward_ad as nfw

    tfw = torch.autograd.forward_ad

    out = []
    for L, fw in ((torch, tfw), (ng, nfw)):
        with fw.dual_level():
            a = fw.make_dual(L.tensor(SQ), L.tensor(np.repeat(RHS[..., :1], 4, -1)))
            ys = (L.linalg.lu_factor(a).LU, L.linalg.lu(a).U, L.linalg.inv_ex(a).inverse,
                  L.linalg.solve_ex(a, L.tensor(RHS)).result, L.linalg.cholesky_ex(a @ a.mT).L)
            out.append([fw.unpack_dual(y).tangent.numpy() for y in ys])
    for theirs, ours in zip(*out):
        np.testing.assert_allclose(ours, theirs, rtol=1e-8, atol=1e-9)


def _same(ours, theirs, exact=True):
    assert ours.dtype.name == str(theirs.dtype)[6:] and tuple(ours.shape) == tuple(theirs.shape)
    if exact:
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    else:
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (5, 3), (3, 5), (2, 1, 3, 3), (0, 3, 3),
                                   (2, 0, 0), (0, 2), BIG.shape])
def test_pivots_and_info_match_pytorch(shape):
    a = rng.standard_normal(shape)
    theirs = torch.linalg.lu_factor_ex(torch.tensor(a))
    ours = ng.linalg.lu_factor_ex(ng.tensor(a))
    _same(ours.pivots, theirs.pivots)
    _same(ours.info, theirs.info)
    _same(ours.LU, theirs.LU, exact=False)
    for o, t in zip(ng.lu_unpack(*ours[:2]), torch.lu_unpack(*theirs[:2])):
        _same(o, t, exact=False)


@pytest.mark.parametrize("name", list(SINGULAR))
def test_lu_of_singular_matrices_matches_pytorch(name):
    a = SINGULAR[name]
    theirs = torch.linalg.lu_factor_ex(torch.tensor(a))
    ours = ng.linalg.lu_factor_ex(ng.tensor(a))
    assert ours.info.item() > 0
    for o, t in zip(ours, theirs):
        _same(o, t)
    for o, t in zip(ng.linalg.lu(ng.tensor(a)), torch.linalg.lu(torch.tensor(a))):
        _same(o, t)
    # (the old spelling never raises, with or without its infos)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        o, t = ng.lu(ng.tensor(a), get_infos=True), torch.lu(torch.tensor(a), get_infos=True)
        assert o.info.item() == t.info.item()
        _same(ng.lu(ng.tensor(a))[0], torch.lu(torch.tensor(a))[0])


def test_ex_variants_report_singular_matrices_without_raising():
    theirs = torch.linalg.lu_factor_ex(torch.tensor(MIXED))
    ours = ng.linalg.lu_factor_ex(ng.tensor(MIXED))
    _same(ours.info, theirs.info)
    assert ours.info.tolist() == [0, 2]
    for L in (torch, ng):
        L.linalg.lu(L.tensor(MIXED))  # (never checks)
    # inv_ex and solve_ex: the invertible matrix's results, infs and NaNs for the other
    b = rng.standard_normal((2, 2, 3))
    for ours, theirs in [
        (ng.linalg.inv_ex(ng.tensor(MIXED)), torch.linalg.inv_ex(torch.tensor(MIXED))),
        (ng.linalg.solve_ex(ng.tensor(MIXED), ng.tensor(b)),
         torch.linalg.solve_ex(torch.tensor(MIXED), torch.tensor(b))),
        (ng.linalg.solve_ex(ng.tensor(MIXED), ng.tensor(b[0, :, 0])),
         torch.linalg.solve_ex(torch.tensor(MIXED), torch.tensor(b[0, :, 0]))),
    ]:
        _same(ours[1], theirs[1])
        assert ours[1].tolist() == [0, 2]
        _same(ours[0], theirs[0], exact=False)  # (the same infs and NaNs in the same places)
    for a in SINGULAR.values():
        if a.shape[0] != a.shape[1]:
            continue
        o, t = ng.linalg.inv_ex(ng.tensor(a)), torch.linalg.inv_ex(torch.tensor(a))
        _same(o.info, t.info)
        _same(o.inverse, t.inverse, exact=False)
    # solve_ex's info has A's own batch shape, not the broadcast one
    info = ng.linalg.solve_ex(ng.tensor(MIXED[1]), ng.ones(3, 2, 1, dtype=ng.float64)).info
    assert info.shape == () and info.item() == 2 and info.dtype is ng.int32


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_ex_reports_matrices_that_are_not_positive_definite(upper):
    theirs = torch.linalg.cholesky_ex(torch.tensor(NOT_PD), upper=upper)
    ours = ng.linalg.cholesky_ex(ng.tensor(NOT_PD), upper=upper)
    _same(ours.info, theirs.info)
    assert ours.info.tolist() == [0, 2]
    _same(ours.L, theirs.L, exact=False)  # (potrf's partial factor of the second)
    ok = ng.linalg.cholesky_ex(ng.tensor(SPD))
    assert ok.info.tolist() == [0, 0] and ok.info.dtype is ng.int32


def test_ex_variants_of_invertible_matrices_report_zeros():
    for ours, theirs in [
        (ng.linalg.inv_ex(ng.tensor(SQ)), torch.linalg.inv_ex(torch.tensor(SQ))),
        (ng.linalg.solve_ex(ng.tensor(SQ), ng.tensor(RHS)),
         torch.linalg.solve_ex(torch.tensor(SQ), torch.tensor(RHS))),
        (ng.linalg.cholesky_ex(ng.tensor(SPD[0])), torch.linalg.cholesky_ex(torch.tensor(SPD[0]))),
        (ng.linalg.lu_factor_ex(ng.tensor(SQ)), torch.linalg.lu_factor_ex(torch.tensor(SQ))),
    ]:
        _same(ours[-1], theirs[-1])
        _same(ours[0], theirs[0], exact=False)


def test_singular_ex_backward_is_not_an_error():
    # (the rules read the saved results: NaNs where PyTorch's give NaNs, no LinAlgError)
    out = []
    for L in (torch, ng):
        a = L.tensor(MIXED, requires_grad=True)
        L.linalg.inv_ex(a).inverse[0].sum().backward()
        out.append(a.grad.numpy())
    np.testing.assert_allclose(out[1], out[0], rtol=1e-12)


def test_result_types_match_pytorch():
    calls = [
        lambda L: L.linalg.lu_factor(L.eye(2)), lambda L: L.linalg.lu_factor_ex(L.eye(2)),
        lambda L: L.linalg.lu(L.eye(2)), lambda L: L.lu_unpack(*L.linalg.lu_factor(L.eye(2))),
        lambda L: L.linalg.solve_ex(L.eye(2), L.ones(2)), lambda L: L.linalg.inv_ex(L.eye(2)),
        lambda L: L.linalg.cholesky_ex(L.eye(2)), lambda L: L.lu(L.eye(2), get_infos=True),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for call in calls:
            theirs, ours = call(torch), call(ng)
            assert type(ours).__name__ == type(theirs).__name__
            assert repr(ours).startswith(f"numbagrad.return_types.{type(theirs).__name__}(")
            names = [line.split("=")[0] for line in repr(theirs).splitlines()[1:]
                     if "=" in line and not line.startswith(" ")]
            assert list(ours._fields) == names
            for o, t in zip(ours, theirs):
                _same(o, t, exact=False)
        # the plain tuples of the old spellings
        for L in (torch, ng):
            assert type(L.lu(L.eye(2))) is tuple and len(L.lu(L.eye(2))) == 2
            assert type(L.eye(2).lu(get_infos=True)) is tuple
            assert len(L.eye(2).lu(get_infos=True)) == 3


def test_unpack_what_is_asked():
    a = TALL[0]
    theirs = torch.lu_unpack(*torch.linalg.lu_factor(torch.tensor(a)), unpack_data=False)
    ours = ng.lu_unpack(*ng.linalg.lu_factor(ng.tensor(a)), unpack_data=False)
    for o, t in zip(ours, theirs):
        _same(o, t)
    theirs = torch.lu_unpack(*torch.linalg.lu_factor(torch.tensor(a)), unpack_pivots=False)
    ours = ng.lu_unpack(*ng.linalg.lu_factor(ng.tensor(a)), unpack_pivots=False)
    for o, t in zip(ours, theirs):
        _same(o, t, exact=False)
    # an integer LU, and a tall one
    for args in [(np.arange(6).reshape(2, 3), [2, 2]), (np.arange(6.0).reshape(3, 2), [3, 3])]:
        theirs = torch.lu_unpack(torch.tensor(args[0]), torch.tensor(args[1], dtype=torch.int32))
        ours = ng.lu_unpack(ng.tensor(args[0]), ng.tensor(args[1], dtype=ng.int32))
        for o, t in zip(ours, theirs):
            _same(o, t)


def test_lu_solve_of_empty_systems():
    for L in (torch, ng):
        X = L.linalg.lu_solve(L.eye(0), L.zeros(0, dtype=L.int32), L.ones(0, 3))
        assert tuple(X.shape) == (0, 3)
        X = L.linalg.lu_solve(*L.linalg.lu_factor(L.eye(2)), L.ones(2, 0))
        assert tuple(X.shape) == (2, 0)


def _symmetric_cases():
    """Symmetric matrices of every kind of pivot: definite, indefinite, small diagonals (2x2
    blocks), integers (ties and zeros), a singular one."""
    rs = np.random.default_rng(5)
    out = []
    for n in (1, 2, 3, 5, 9, 20):
        for kind in range(4):
            a = rs.standard_normal((n, n))
            a = a + a.T if kind != 3 else a  # (only the lower triangle is read)
            if kind == 1:
                a[np.diag_indices(n)] *= 0.01
            if kind == 2:
                a = np.round(a)
            out.append(a)
    out.append(np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]))
    return out


@pytest.mark.parametrize("k", range(25))
def test_ldl_matches_pytorch(k):
    a = _symmetric_cases()[k]
    theirs = torch.linalg.ldl_factor_ex(torch.tensor(a))
    ours = ng.linalg.ldl_factor_ex(ng.tensor(a))
    _same(ours.pivots, theirs.pivots)
    _same(ours.info, theirs.info)
    np.testing.assert_allclose(ours.LD.detach().numpy(), theirs.LD.numpy(), rtol=1e-10,
                               atol=1e-12)
    if theirs.info.item() == 0:
        b = rng.standard_normal((a.shape[0], 3))
        for hermitian in (False, True):
            np.testing.assert_allclose(
                ng.linalg.ldl_solve(*ours[:2], ng.tensor(b), hermitian=hermitian).numpy(),
                torch.linalg.ldl_solve(*theirs[:2], torch.tensor(b), hermitian=hermitian).numpy(),
                rtol=1e-9, atol=1e-9)
        t = torch.linalg.ldl_factor(torch.tensor(a), hermitian=True)
        o = ng.linalg.ldl_factor(ng.tensor(a), hermitian=True)
        for x, y in zip(o, t):
            _same(x.detach(), y, exact=False)


def test_ldl_batches_match_pytorch():
    a = rng.standard_normal((2, 3, 5, 5))
    a = a + a.swapaxes(-1, -2)
    theirs = torch.linalg.ldl_factor(torch.tensor(a))
    ours = ng.linalg.ldl_factor(ng.tensor(a))
    assert type(ours).__name__ == "linalg_ldl_factor" and ours._fields == ("LD", "pivots")
    _same(ours.pivots, theirs.pivots)
    np.testing.assert_allclose(ours.LD.numpy(), theirs.LD.numpy(), rtol=1e-12, atol=1e-12)
    b = rng.standard_normal((5, 2))
    np.testing.assert_allclose(ng.linalg.ldl_solve(*ours, ng.tensor(b)).numpy(),
                               torch.linalg.ldl_solve(*theirs, torch.tensor(b)).numpy(),
                               rtol=1e-9, atol=1e-9)
    # (a batch of right-hand sides against one factorization; PyTorch crashes where both
    # batches broadcast, numbagrad solves it)
    b = rng.standard_normal((4, 5, 2))
    np.testing.assert_allclose(
        ng.linalg.ldl_solve(ours.LD[0, 0], ours.pivots[0, 0], ng.tensor(b)).numpy(),
        torch.linalg.ldl_solve(theirs.LD[0, 0], theirs.pivots[0, 0], torch.tensor(b)).numpy(),
        rtol=1e-9, atol=1e-9)
    x = ng.linalg.ldl_solve(*ours, ng.tensor(rng.standard_normal((4, 1, 1, 5, 2))))
    assert tuple(x.shape) == (4, 2, 3, 5, 2)


def test_ldl_of_a_singular_matrix():
    for L in (torch, ng):
        r = L.linalg.ldl_factor_ex(L.zeros(2, 3, 3))
        assert r.info.tolist() == [1, 1] and r.pivots.tolist() == [[1, 2, 3]] * 2
        # (PyTorch's error is an internal assert; numbagrad's says which D is zero)
        with pytest.raises(RuntimeError, match="ldl_factor"):
            L.linalg.ldl_factor(L.zeros(3, 3))
    with pytest.raises(RuntimeError, match=r"^torch.linalg.ldl_factor_ex: \(Batch element 1\): "
                       r"D\[1,1\] is zero"):
        ng.linalg.ldl_factor_ex(ng.stack([ng.eye(2), ng.zeros(2, 2)]), check_errors=True)


def test_ldl_has_no_derivative_as_in_pytorch():
    out = []
    for L in (torch, ng):
        a = L.tensor(SPD, requires_grad=True)
        LD, pivots = L.linalg.ldl_factor(a)
        b = L.tensor(RHS, requires_grad=True)
        X = L.linalg.ldl_solve(LD.detach(), pivots, b)
        assert type(LD.grad_fn).__name__ == type(X.grad_fn).__name__ == "NotImplemented"
        for y in (LD, X):
            with pytest.raises(RuntimeError) as info:
                y.sum().backward()
            out.append(str(info.value))
    assert out[2:] == out[:2]


# PyTorch's texts (its TORCH_WARN_ONCE gives them once a process, so they are written here)
DEPRECATED = {
    "lu": (lambda L: L.lu(L.eye(2)),
           "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex "
           "and will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, "
           "compute_pivots)\nshould be replaced with\nLU, pivots = torch.linalg.lu_factor(A, "
           "compute_pivots)\nand\nLU, pivots, info = torch.lu(A, compute_pivots, "
           "get_infos=True)\nshould be replaced with\nLU, pivots, info = "
           "torch.linalg.lu_factor_ex(A, compute_pivots)"),
    "tensor_lu": (lambda L: L.eye(2).lu(), None),
    "lu_solve": (lambda L: L.lu_solve(L.ones(2, 1), *L.linalg.lu_factor(L.eye(2))),
                 "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be "
                 "removed in a future PyTorch release.\nNote that torch.linalg.lu_solve has its "
                 "arguments reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be replaced "
                 "with\nX = torch.linalg.lu_solve(LU, pivots, B)"),
    "chain_matmul": (lambda L: L.chain_matmul(L.eye(2), L.eye(2)),
                     "torch.chain_matmul is deprecated and will be removed in a future PyTorch "
                     "release. Use torch.linalg.multi_dot instead, which accepts a list of two "
                     "or more tensors rather than multiple parameters."),
}


@pytest.mark.parametrize("name", list(DEPRECATED))
def test_deprecation_warnings_match_pytorch(name):
    call, text = DEPRECATED[name]
    text = DEPRECATED["lu"][1] if text is None else text
    ng.set_warn_always(True)
    try:
        with pytest.warns(UserWarning) as record:
            call(ng)
    finally:
        ng.set_warn_always(False)
    assert [str(w.message) for w in record] == [text]
    assert record[0].filename == __file__  # (attributed to the caller)
    torch.set_warn_always(True)
    try:
        with pytest.warns(UserWarning) as record:
            call(torch)
    finally:
        torch.set_warn_always(False)
    assert str(record[0].message).startswith(text + " (Triggered internally")


I32 = "int32"
ERRORS = {
    "lu_factor_one_dim": lambda L: L.linalg.lu_factor(L.ones(3)),
    "lu_factor_scalar": lambda L: L.linalg.lu_factor(L.tensor(1.0)),
    "lu_factor_one_dim_long": lambda L: L.linalg.lu_factor(L.ones(3, dtype=L.long)),
    "lu_factor_long": lambda L: L.linalg.lu_factor(L.ones(2, 2, dtype=L.long)),
    "lu_factor_bool": lambda L: L.linalg.lu_factor(L.ones(2, 2, dtype=L.bool)),
    "lu_factor_no_pivot": lambda L: L.linalg.lu_factor(L.eye(2), pivot=False),
    "lu_factor_ex_no_pivot": lambda L: L.linalg.lu_factor_ex(L.eye(2), pivot=False),
    "lu_factor_singular": lambda L: L.linalg.lu_factor(L.zeros(2, 2)),
    "lu_factor_singular_second": lambda L: L.linalg.lu_factor(L.tensor([[1.0, 2], [2, 4]])),
    "lu_factor_singular_batch": lambda L: L.linalg.lu_factor(L.tensor(MIXED)),
    "lu_factor_singular_batch_of_one": lambda L: L.linalg.lu_factor(L.zeros(1, 2, 2)),
    "lu_factor_singular_4d": lambda L: L.linalg.lu_factor(
        L.stack([L.eye(2)] * 3 + [L.zeros(2, 2)]).reshape(2, 2, 2, 2)),
    "lu_factor_singular_wide": lambda L: L.linalg.lu_factor(L.ones(2, 3)),
    "lu_factor_ex_check_errors": lambda L: L.linalg.lu_factor_ex(L.zeros(2, 2),
                                                                 check_errors=True),
    "lu_factor_ex_check_errors_batch": lambda L: L.linalg.lu_factor_ex(L.tensor(MIXED),
                                                                       check_errors=True),
    "lu_one_dim": lambda L: L.linalg.lu(L.ones(3)),
    "lu_long": lambda L: L.linalg.lu(L.ones(2, 2, dtype=L.long)),
    "lu_no_pivot": lambda L: L.linalg.lu(L.eye(2), pivot=False),
    "torch_lu_one_dim": lambda L: L.lu(L.ones(3)),
    "torch_lu_long": lambda L: L.lu(L.ones(2, 2, dtype=L.long)),
    "tensor_lu_no_pivot": lambda L: L.eye(2).lu(pivot=False),
    "lu_solve_B_one_dim": lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(L.eye(2)), L.ones(2)),
    "lu_solve_shapes": lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(L.eye(2)), L.ones(3, 1)),
    "lu_solve_shapes_right": lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(L.eye(2)),
                                                         L.ones(1, 3), left=False),
    "lu_solve_not_square": lambda L: L.linalg.lu_solve(L.ones(3, 2), L.tensor([1, 2],
                                                       dtype=L.int32), L.ones(3, 1)),
    "lu_solve_LU_one_dim": lambda L: L.linalg.lu_solve(L.ones(2), L.tensor([1, 2],
                                                       dtype=L.int32), L.ones(2, 1)),
    "lu_solve_long": lambda L: L.linalg.lu_solve(L.eye(2, dtype=L.long),
                                                 L.tensor([1, 2], dtype=L.int32),
                                                 L.ones(2, 1, dtype=L.long)),
    "lu_solve_dtypes": lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(L.eye(2)),
                                                   L.ones(2, 1, dtype=L.float64)),
    "lu_solve_B_long": lambda L: L.linalg.lu_solve(L.eye(2), L.tensor([1, 2], dtype=L.int32),
                                                   L.ones(2, 1, dtype=L.long)),
    "lu_solve_pivots_dtype": lambda L: L.linalg.lu_solve(L.eye(2), L.tensor([1, 2]),
                                                         L.ones(2, 1)),
    "lu_solve_pivots_count": lambda L: L.linalg.lu_solve(L.eye(2), L.tensor([1, 2, 3],
                                                         dtype=L.int32), L.ones(2, 1)),
    "lu_solve_pivots_scalar": lambda L: L.linalg.lu_solve(L.eye(2), L.tensor(1, dtype=L.int32),
                                                          L.ones(2, 1)),
    "lu_solve_pivots_batch": lambda L: L.linalg.lu_solve(L.eye(2).expand(3, 2, 2),
                                                         L.tensor([1, 2], dtype=L.int32),
                                                         L.ones(2, 1)),
    "lu_solve_pivots_extra_batch": lambda L: L.linalg.lu_solve(
        L.eye(2), L.tensor([[1, 2]] * 3, dtype=L.int32), L.ones(2, 1)),
    "lu_solve_batches": lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(L.eye(2).expand(3, 2, 2)),
                                                    L.ones(4, 2, 1)),
    "lu_solve_pivot_too_big": lambda L: L.linalg.lu_solve(L.eye(2), L.tensor([5, 2],
                                                          dtype=L.int32), L.ones(2, 1)),
    "lu_solve_pivot_zero": lambda L: L.linalg.lu_solve(L.eye(2), L.tensor([0, 2],
                                                       dtype=L.int32), L.ones(2, 1)),
    "torch_lu_solve_shapes": lambda L: L.lu_solve(L.ones(3, 1), *L.linalg.lu_factor(L.eye(2))),
    "lu_unpack_one_dim": lambda L: L.lu_unpack(L.ones(2), L.tensor([1, 2], dtype=L.int32)),
    "lu_unpack_pivots_dtype": lambda L: L.lu_unpack(L.eye(2), L.tensor([1, 2])),
    "lu_unpack_pivot_too_big": lambda L: L.lu_unpack(L.eye(2), L.tensor([3, 2], dtype=L.int32)),
    "lu_unpack_pivot_zero": lambda L: L.lu_unpack(L.eye(2), L.tensor([0, 2], dtype=L.int32)),
    "lu_unpack_pivots_scalar": lambda L: L.lu_unpack(L.eye(2), L.tensor(1, dtype=L.int32)),
    "lu_unpack_tall_pivot": lambda L: L.lu_unpack(L.ones(3, 2), L.tensor([4, 2], dtype=L.int32)),
    "solve_ex_check_errors": lambda L: L.linalg.solve_ex(L.zeros(2, 2), L.ones(2, 1),
                                                         check_errors=True),
    "solve_ex_check_errors_batch": lambda L: L.linalg.solve_ex(L.tensor(MIXED), L.ones(2, 2, 1),
                                                               check_errors=True),
    "solve_ex_check_errors_broadcast": lambda L: L.linalg.solve_ex(
        L.tensor(MIXED), L.ones(3, 2, 2, 1), check_errors=True),
    "solve_singular_batch": lambda L: L.linalg.solve(L.tensor(MIXED), L.ones(3, 2, 2, 1)),
    "solve_singular_right": lambda L: L.linalg.solve(L.tensor(MIXED), L.ones(1, 2), left=False),
    "solve_ex_one_dim": lambda L: L.linalg.solve_ex(L.ones(2), L.ones(2)),
    "solve_ex_not_square": lambda L: L.linalg.solve_ex(L.ones(2, 3), L.ones(2)),
    "solve_ex_long": lambda L: L.linalg.solve_ex(L.ones(2, 2, dtype=L.long),
                                                 L.ones(2, 1, dtype=L.long)),
    "solve_ex_shapes": lambda L: L.linalg.solve_ex(L.eye(2), L.ones(3, 1)),
    "solve_ex_dtypes": lambda L: L.linalg.solve_ex(L.eye(2), L.ones(2, 1, dtype=L.float64)),
    "solve_scalar_B": lambda L: L.linalg.solve(L.eye(2), L.tensor(1.0)),
    "solve_ex_scalar_B": lambda L: L.linalg.solve_ex(L.eye(2), L.tensor(1.0)),
    "solve_right_vector": lambda L: L.linalg.solve(L.eye(2), L.ones(2), left=False),
    "solve_right_shapes": lambda L: L.linalg.solve(L.eye(2), L.ones(2, 3), left=False),
    "solve_right_batch_vector": lambda L: L.linalg.solve(L.eye(2).expand(3, 2, 2), L.ones(3, 2),
                                                         left=False),
    "inv_ex_check_errors": lambda L: L.linalg.inv_ex(L.zeros(2, 2), check_errors=True),
    "inv_ex_check_errors_batch": lambda L: L.linalg.inv_ex(L.tensor(MIXED), check_errors=True),
    "inv_ex_long": lambda L: L.linalg.inv_ex(L.ones(2, 2, dtype=L.long)),
    "inv_ex_not_square": lambda L: L.linalg.inv_ex(L.ones(2, 3)),
    "inv_ex_one_dim": lambda L: L.linalg.inv_ex(L.ones(3)),
    "cholesky_ex_check_errors": lambda L: L.linalg.cholesky_ex(L.tensor(NOT_PD[1]),
                                                               check_errors=True),
    "cholesky_ex_check_errors_batch": lambda L: L.linalg.cholesky_ex(L.tensor(NOT_PD),
                                                                     check_errors=True),
    "cholesky_ex_check_errors_upper": lambda L: L.linalg.cholesky_ex(
        L.tensor(NOT_PD), upper=True, check_errors=True),
    "cholesky_ex_long": lambda L: L.linalg.cholesky_ex(L.ones(2, 2, dtype=L.long)),
    "cholesky_ex_not_square": lambda L: L.linalg.cholesky_ex(L.ones(2, 3)),
    "cholesky_ex_one_dim": lambda L: L.linalg.cholesky_ex(L.ones(2)),
    "tensorinv_ind_zero": lambda L: L.linalg.tensorinv(L.ones(2, 2), ind=0),
    "tensorinv_sizes": lambda L: L.linalg.tensorinv(L.ones(2, 3, 4), ind=1),
    "tensorinv_singular": lambda L: L.linalg.tensorinv(L.zeros(2, 2, 4), ind=2),
    "tensorinv_long": lambda L: L.linalg.tensorinv(L.ones(2, 2, dtype=L.long), ind=1),
    "tensorinv_ind_too_big": lambda L: L.linalg.tensorinv(L.ones(2, 2), ind=3),
    "tensorsolve_sizes": lambda L: L.linalg.tensorsolve(L.ones(2, 3, 4), L.ones(2, 3)),
    "tensorsolve_singular": lambda L: L.linalg.tensorsolve(L.zeros(2, 3, 6), L.ones(2, 3)),
    "tensorsolve_long": lambda L: L.linalg.tensorsolve(L.ones(2, 3, 6, dtype=L.long),
                                                       L.ones(2, 3, dtype=L.long)),
    "tensorsolve_dims_out_of_range": lambda L: L.linalg.tensorsolve(L.ones(2, 3, 6),
                                                                    L.ones(2, 3), dims=(5,)),
    "ldl_one_dim": lambda L: L.linalg.ldl_factor(L.ones(3)),
    "ldl_not_square": lambda L: L.linalg.ldl_factor(L.ones(2, 3)),
    "ldl_long": lambda L: L.linalg.ldl_factor_ex(L.ones(2, 2, dtype=L.long)),
    "ldl_solve_B_one_dim": lambda L: L.linalg.ldl_solve(*L.linalg.ldl_factor(L.eye(3)),
                                                        L.ones(3)),
    "ldl_solve_shapes": lambda L: L.linalg.ldl_solve(*L.linalg.ldl_factor(L.eye(3)),
                                                     L.ones(2, 2)),
    "ldl_solve_dtypes": lambda L: L.linalg.ldl_solve(*L.linalg.ldl_factor(L.eye(3)),
                                                     L.ones(3, 2, dtype=L.float64)),
    "ldl_solve_pivots_shape": lambda L: L.linalg.ldl_solve(L.eye(3), L.ones(2, dtype=L.int32),
                                                           L.ones(3, 2)),
    "ldl_solve_LD_one_dim": lambda L: L.linalg.ldl_solve(L.ones(3), L.ones(3, dtype=L.int32),
                                                         L.ones(3, 2)),
    "ldl_solve_LD_not_square": lambda L: L.linalg.ldl_solve(L.ones(2, 3),
                                                            L.ones(2, dtype=L.int32),
                                                            L.ones(3, 2)),
    "ldl_solve_long": lambda L: L.linalg.ldl_solve(L.eye(3, dtype=L.long),
                                                   L.ones(3, dtype=L.int32),
                                                   L.ones(3, 2, dtype=L.long)),
    "chain_matmul_none": lambda L: L.chain_matmul(),
    "chain_matmul_one_3d": lambda L: L.chain_matmul(L.ones(2, 2, 2)),
    "chain_matmul_3d": lambda L: L.chain_matmul(L.ones(2, 2), L.ones(2, 2, 2)),
    "chain_matmul_vector": lambda L: L.chain_matmul(L.ones(2, 2), L.ones(2)),
    "chain_matmul_shapes": lambda L: L.chain_matmul(L.ones(2, 3), L.ones(2, 2)),
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
