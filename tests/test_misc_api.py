"""torch.linalg (inv, det, solve, norms) against PyTorch: values, gradients, node names and
errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

INF = math.inf
rng = np.random.default_rng(0)
A = rng.standard_normal((3, 3, 3))
B = rng.standard_normal((3, 3, 2))

LINALG = {
    "inv": (lambda L, x: L.linalg.inv(x), [A]),
    "inverse": (lambda L, x: x.inverse() + L.inverse(x), [A]),
    "det": (lambda L, x: L.linalg.det(x), [A]),
    "det_method": (lambda L, x: x.det() * L.det(x[0]), [A]),
    "solve": (lambda L, x, y: L.linalg.solve(x, y), [A, B]),
    "solve_broadcast": (lambda L, x, y: L.linalg.solve(x, y), [A, B[:1]]),
    "solve_vector": (lambda L, x, y: L.linalg.solve(x, y), [A[0], B[0, :, 0]]),
    "solve_vectors": (lambda L, x, y: L.linalg.solve(x, y), [A, B[..., 0]]),
    "vector_norm": (lambda L, x: L.linalg.vector_norm(x), [A]),
    "vector_norm_dims": (lambda L, x: L.linalg.vector_norm(x, dim=(0, 1, 2)), [A]),
    "vector_norm_3": (lambda L, x: L.linalg.vector_norm(x, 3, dim=(0, 2)), [A]),
    "vector_norm_inf": (lambda L, x: L.linalg.vector_norm(x, INF, dim=1, keepdim=True), [A]),
    "vector_norm_-inf": (lambda L, x: L.linalg.vector_norm(x, -INF, dim=0), [A]),
    "vector_norm_1": (lambda L, x: L.linalg.vector_norm(x, 1, dim=-1), [A]),
    "vector_norm_0": (lambda L, x: L.linalg.vector_norm(x, 0, dim=-1), [A]),
    "matrix_norm_fro": (lambda L, x: L.linalg.matrix_norm(x), [A]),
    "matrix_norm_1": (lambda L, x: L.linalg.matrix_norm(x, 1), [A]),
    "matrix_norm_-1": (lambda L, x: L.linalg.matrix_norm(x, -1, keepdim=True), [A]),
    "matrix_norm_inf": (lambda L, x: L.linalg.matrix_norm(x, INF, dim=(0, 2)), [A]),
    "matrix_norm_-inf": (lambda L, x: L.linalg.matrix_norm(x, -INF), [A]),
    "norm_matrix": (lambda L, x: L.linalg.norm(x[0], 1), [A]),
    "norm_flat": (lambda L, x: L.linalg.norm(x), [A]),
    "norm_vector": (lambda L, x: L.linalg.norm(x[0, 0], INF), [A]),
    "norm_dims": (lambda L, x: L.linalg.norm(x, "fro", dim=(1, 2)), [A]),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", list(LINALG))
def test_linalg_matches_pytorch(case, dtype):
    f, args = LINALG[case]
    T = [torch.tensor(v.astype(dtype), requires_grad=True) for v in args]
    N = [ng.tensor(v.astype(dtype), requires_grad=True) for v in args]
    yt, yn = f(torch, *T), f(ng, *N)
    assert type(yn.grad_fn).__name__ == type(yt.grad_fn).__name__
    assert yn.dtype.name == dtype and tuple(yn.shape) == tuple(yt.shape)
    tol = 1e-10 if dtype == "float64" else 2e-4
    np.testing.assert_allclose(yn.detach().numpy(), yt.detach().numpy(), rtol=tol, atol=tol)
    w = rng.standard_normal(tuple(yt.shape)).astype(dtype)
    (yt * torch.tensor(w)).sum().backward()
    (yn * ng.tensor(w)).sum().backward()
    for t, n in zip(T, N):
        if t.grad is None:  # (ord 0)
            assert n.grad is None
            continue
        np.testing.assert_allclose(n.grad.numpy(), t.grad.numpy(), rtol=tol, atol=tol)


def test_second_derivatives_match_pytorch():
    xt = torch.tensor(A, requires_grad=True)
    xn = ng.tensor(A, requires_grad=True)
    for L, x in ((torch, xt), (ng, xn)):
        (g,) = L.autograd.grad(L.linalg.det(L.linalg.inv(x)).sum(), x, create_graph=True)
        (g * g).sum().backward()
    np.testing.assert_allclose(xn.grad.numpy(), xt.grad.numpy(), rtol=1e-8)


def _errors(call):
    out = []
    for L in (torch, ng):
        with pytest.raises(Exception) as info:
            call(L)
        out.append(info.value)
    return out


SINGULAR = [[1.0, 2.0], [2.0, 4.0]]
ERRORS = {
    "singular": lambda L: L.linalg.inv(L.tensor(SINGULAR)),
    "singular_first_pivot": lambda L: L.linalg.inv(L.zeros(3, 3)),
    "singular_in_batch": lambda L: L.linalg.inv(L.stack([L.eye(2), L.tensor(SINGULAR)])),
    "solve_singular": lambda L: L.linalg.solve(L.tensor(SINGULAR), L.ones(2)),
    "not_square": lambda L: L.linalg.inv(L.ones(2, 3)),
    "det_not_square": lambda L: L.linalg.det(L.ones(2, 3)),
    "one_dim": lambda L: L.linalg.inv(L.ones(3)),
    "integer": lambda L: L.linalg.inv(L.ones(2, 2, dtype=L.long)),
    "solve_shapes": lambda L: L.linalg.solve(L.eye(2), L.ones(3)),
    "solve_dtypes": lambda L: L.linalg.solve(L.eye(2), L.ones(2, dtype=L.float64)),
    "vector_norm_integer": lambda L: L.linalg.vector_norm(L.ones(2, dtype=L.long)),
    "matrix_norm_one_dim": lambda L: L.linalg.matrix_norm(L.ones(3)),
    "matrix_norm_three_dims": lambda L: L.linalg.matrix_norm(L.ones(2, 2, 2), dim=(0, 1, 2)),
    "norm_3d_with_ord": lambda L: L.linalg.norm(L.ones(2, 2, 2), 1),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_linalg_errors_match_pytorch(case):
    theirs, ours = _errors(ERRORS[case])
    assert str(ours) == str(theirs)
    assert isinstance(ours, RuntimeError)
    assert isinstance(ours, ng.linalg.LinAlgError) == isinstance(theirs, torch.linalg.LinAlgError)


# ---------------------------------------------------------------- F.interpolate, nn.Upsample

X4 = rng.standard_normal((2, 3, 4, 5))
X3 = rng.standard_normal((2, 3, 5))
INTERPOLATE = [
    (X4, dict(size=3)), (X4, dict(size=(7, 11))), (X4, dict(scale_factor=2)),
    (X4, dict(scale_factor=1.7)), (X4, dict(scale_factor=(0.5, 2.3))), (X3, dict(size=13)),
    (X4, dict(size=(7, 3), mode="bilinear")), (X4, dict(scale_factor=2, mode="bilinear")),
    (X4, dict(scale_factor=1.3, mode="bilinear", align_corners=True)),
    (X4, dict(size=(2, 9), mode="bilinear", align_corners=True)),
    (X4, dict(scale_factor=1.7, mode="bilinear", recompute_scale_factor=True)),
    (X4, dict(size=1, mode="bilinear")), (X3, dict(size=13, mode="linear")),
    (X3, dict(scale_factor=0.6, mode="linear")),
    (X3, dict(size=1, mode="linear", align_corners=True)),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("k", range(len(INTERPOLATE)))
def test_interpolate_matches_pytorch(k, dtype):
    x, kw = INTERPOLATE[k]
    xt = torch.tensor(x.astype(dtype), requires_grad=True)
    xn = ng.tensor(x.astype(dtype), requires_grad=True)
    yt = torch.nn.functional.interpolate(xt, **kw)
    yn = ng.nn.functional.interpolate(xn, **kw)
    assert tuple(yn.shape) == tuple(yt.shape) and yn.dtype.name == dtype
    assert yn.is_contiguous()
    tol = 1e-12 if dtype == "float64" else 1e-5
    np.testing.assert_allclose(yn.detach().numpy(), yt.detach().numpy(), rtol=tol, atol=tol)
    w = rng.standard_normal(tuple(yt.shape)).astype(dtype)
    (yt * torch.tensor(w)).sum().backward()
    (yn * ng.tensor(w)).sum().backward()
    np.testing.assert_allclose(xn.grad.numpy(), xt.grad.numpy(), rtol=tol, atol=tol)


def test_upsample_module_matches_pytorch():
    for kw in (dict(scale_factor=2, mode="bilinear"), dict(size=3), dict(size=(5, 2)),
               dict(scale_factor=(2, 1.5), mode="bilinear", align_corners=True)):
        ours, theirs = ng.nn.Upsample(**kw), torch.nn.Upsample(**kw)
        assert repr(ours) == repr(theirs)
        np.testing.assert_allclose(ours(ng.tensor(X4)).numpy(),
                                   theirs(torch.tensor(X4)).numpy(), rtol=1e-12)


INTERPOLATE_ERRORS = {
    "no_size": lambda L, x4, x3: L.nn.functional.interpolate(x4),
    "both": lambda L, x4, x3: L.nn.functional.interpolate(x4, size=3, scale_factor=2),
    "bilinear_3d": lambda L, x4, x3: L.nn.functional.interpolate(x3, size=3, mode="bilinear"),
    "linear_4d": lambda L, x4, x3: L.nn.functional.interpolate(x4, size=3, mode="linear"),
    "align_nearest": lambda L, x4, x3: L.nn.functional.interpolate(x4, size=3,
                                                                   align_corners=True),
    "size_dims": lambda L, x4, x3: L.nn.functional.interpolate(x4, size=(3,)),
    "scale_dims": lambda L, x4, x3: L.nn.functional.interpolate(x4, scale_factor=(2,)),
    "bad_mode": lambda L, x4, x3: L.nn.functional.interpolate(x4, size=3, mode="bicubicx"),
    "1d": lambda L, x4, x3: L.nn.functional.interpolate(x3[0, 0], size=3),
}


@pytest.mark.parametrize("case", list(INTERPOLATE_ERRORS))
def test_interpolate_errors_match_pytorch(case):
    f = INTERPOLATE_ERRORS[case]
    theirs, ours = (_errors(lambda L: f(L, L.tensor(X4), L.tensor(X3))))
    assert type(ours) is type(theirs) and str(ours) == str(theirs)


# ---------------------------------------------------------------- channel dropout


def test_dropout2d_zeroes_whole_channels():
    ng.manual_seed(0)
    x = ng.ones(8, 16, 3, 2, requires_grad=True)
    y = ng.nn.functional.dropout2d(x, 0.25)
    planes = y.detach().numpy().reshape(8, 16, -1)
    assert set(np.unique(planes)) == {0.0, np.float32(1 / 0.75)}
    assert (planes == planes[..., :1]).all()  # one draw per (sample, channel)
    assert 0.1 < (planes[..., 0] == 0).mean() < 0.4
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())
    m = ng.nn.Dropout2d(0.3)
    assert repr(m) == repr(torch.nn.Dropout2d(0.3)) == "Dropout2d(p=0.3, inplace=False)"
    m.eval()
    assert m(x) is x
    z = ng.ones(4, 6, 5)
    planes = ng.nn.Dropout1d(0.5)(z).numpy()
    assert (planes == planes[..., :1]).all() and set(np.unique(planes)) == {0.0, 2.0}
    assert repr(ng.nn.Dropout1d()) == repr(torch.nn.Dropout1d())
    assert (ng.nn.functional.dropout2d(ng.ones(2, 3, 2, 2), 1.0).numpy() == 0).all()


DROPOUT_CASES = {
    "3d": lambda L: L.nn.functional.dropout2d(L.ones(2, 3, 5)),
    "2d": lambda L: L.nn.functional.dropout2d(L.ones(3, 4)),
}


@pytest.mark.parametrize("case", list(DROPOUT_CASES))
def test_dropout2d_warnings_match_pytorch(case):
    out = []
    for L in (torch, ng):
        with pytest.warns(UserWarning) as record:
            DROPOUT_CASES[case](L)
        out.append([str(w.message) for w in record])
    assert out[0] == out[1]


def test_channel_dropout_errors_match_pytorch():
    for call in (lambda L: L.nn.functional.dropout1d(L.ones(3)),
                 lambda L: L.nn.functional.dropout2d(L.ones(2, 3, 4, 4), 1.5)):
        theirs, ours = _errors(call)
        assert type(ours) is type(theirs) and str(ours) == str(theirs)


@pytest.mark.cuda
@pytest.mark.skipif(not ng.cuda.is_available(), reason="no CUDA device or simulator")
def test_cuda_interpolate_and_linalg():
    x = ng.tensor(X4[:1, :1], device="cuda", requires_grad=True)
    y = ng.nn.functional.interpolate(x, scale_factor=2, mode="bilinear")
    ref = torch.nn.functional.interpolate(torch.tensor(X4[:1, :1]), scale_factor=2,
                                          mode="bilinear")
    assert y.device.type == "cuda"
    np.testing.assert_allclose(y.cpu().detach().numpy(), ref.numpy(), rtol=1e-12)
    a = ng.tensor([[2.0, 1.0], [1.0, 3.0]], device="cuda", requires_grad=True)
    inv = ng.linalg.inv(a)  # (computed on the host, the result on the device)
    assert inv.device.type == "cuda"
    np.testing.assert_allclose(inv.cpu().detach().numpy(), np.linalg.inv(a.cpu().detach().numpy()),
                               rtol=1e-12)
    ng.linalg.det(a).backward()
    np.testing.assert_allclose(a.grad.cpu().numpy(), [[3.0, -1.0], [-1.0, 2.0]], rtol=1e-12)
