"""grid_sample and affine_grid against PyTorch: values, gradients of the input, the grid and
theta, second derivatives, the spatial-transformer pattern, warnings and error texts.

Shapes are few and small, so the kernels compile once per dtype and are shared by the cases.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import numbagrad as ng
import numbagrad.nn.functional as F
from devices import on_cuda
from numbagrad.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RTOL = {"float32": 5e-5, "float64": 1e-10}
MODES = ["bilinear", "nearest", "bicubic"]
PADDINGS = ["zeros", "border", "reflection"]


def _input_and_grid(shape=(2, 3, 4, 5), out=(3, 2), seed=0):
    """An input and a grid whose points fall inside and outside [-1, 1], two of them far
    enough out to be reflected more than once."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    g = rng.uniform(-1.6, 1.6, (shape[0],) + out + (2,))
    g[0, 0, 0] = (3.5, -2.7)
    g[-1, -1, -1] = (-4.2, 2.3)
    return x, g


def _pair(a, dtype, device="cpu"):
    """The same values as a numbagrad and a torch tensor, both requiring grad."""
    a = a.astype(dtype)
    return ng.tensor(a, requires_grad=True, device=device), torch.tensor(a, requires_grad=True)


def _close(got, ref, dtype):
    rtol = RTOL[dtype]
    np.testing.assert_allclose(got.detach().cpu().numpy(), ref.detach().numpy(), rtol=rtol,
                               atol=rtol)


def _compare(x, g, dtype, device="cpu", transposed=False, **kw):
    """grid_sample of both libraries on ``x`` and ``g`` (with ``transposed``, as views: the
    input's H and W swapped, the grid a (N, OH, 2, OW) array seen as (N, OH, OW, 2)): values,
    node names and both gradients."""
    if transposed:
        x, g = np.swapaxes(x, -1, -2).copy(), np.swapaxes(g, -1, -2).copy()
    (nx, tx), (ng_, tg) = _pair(x, dtype, device), _pair(g, dtype, device)
    views = (lambda t: t.transpose(-1, -2)) if transposed else (lambda t: t)
    out = F.grid_sample(views(nx), views(ng_), **kw)
    ref = TF.grid_sample(views(tx), views(tg), **kw)
    _close(out, ref, dtype)
    assert out.dtype.name == dtype and out.grad_fn.name() == ref.grad_fn.name()
    w = np.random.default_rng(1).standard_normal(tuple(ref.shape)).astype(dtype)
    out.backward(ng.tensor(w, device=device))
    ref.backward(torch.tensor(w))
    _close(nx.grad, tx.grad, dtype)
    _close(ng_.grad, tg.grad, dtype)


# ---------------------------------------------------------------- grid_sample


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("padding_mode", PADDINGS)
@pytest.mark.parametrize("mode", MODES)
def test_grid_sample_and_its_gradients_match_torch(mode, padding_mode, align_corners, dtype):
    x, g = _input_and_grid()
    _compare(x, g, dtype, mode=mode, padding_mode=padding_mode, align_corners=align_corners)


@pytest.mark.parametrize("mode", MODES)
def test_views_and_odd_shapes_match_torch(mode):
    kw = dict(mode=mode, align_corners=False)
    x, g = _input_and_grid((1, 2, 3, 5), (4, 3))
    _compare(x, g, "float64", transposed=True, padding_mode="border", **kw)
    # one row and one column of pixels (with align_corners, a size of 1 spans nothing)
    for shape in ((2, 1, 1, 3), (1, 2, 4, 1)):
        x, g = _input_and_grid(shape, (1, 5))
        for padding_mode in PADDINGS:
            _compare(x, g, "float32", mode=mode, padding_mode=padding_mode, align_corners=True)


def test_empty_batch_channels_and_grid_give_empty_results():
    for xs, gs in (((0, 2, 3, 4), (0, 2, 2, 2)), ((2, 0, 3, 4), (2, 2, 2, 2)),
                   ((2, 3, 3, 4), (2, 0, 2, 2))):
        (nx, tx), (ng_, tg) = _pair(np.ones(xs), "float32"), _pair(np.zeros(gs), "float32")
        out = F.grid_sample(nx, ng_, align_corners=False)
        ref = TF.grid_sample(tx, tg, align_corners=False)
        assert tuple(out.shape) == tuple(ref.shape)
        out.sum().backward()
        assert tuple(nx.grad.shape) == xs and tuple(ng_.grad.shape) == gs
        assert not nx.grad.numpy().any() and not ng_.grad.numpy().any()


def test_grid_points_on_pixel_centres_and_borders_match_torch():
    # the identity grid with align_corners=True puts every point on a pixel centre, the
    # corners on the borders, where clipping's derivative is 0 (as PyTorch's)
    x = np.random.default_rng(2).standard_normal((1, 2, 3, 4))
    ys, xs = np.meshgrid(np.linspace(-1, 1, 3), np.linspace(-1, 1, 4), indexing="ij")
    g = np.stack([xs, ys], -1)[None]
    for mode in MODES:
        for padding_mode in PADDINGS:
            _compare(x, g, "float64", mode=mode, padding_mode=padding_mode, align_corners=True)
    # halfway between two pixels: nearest rounds halves to even, as PyTorch's
    g = np.array([[[[-0.75, -1.0], [-0.25, -1.0], [0.25, -1.0], [0.75, -1.0]]]])
    _compare(x, g, "float64", mode="nearest", align_corners=True)


@pytest.mark.parametrize("mode", MODES)
def test_nan_and_infinite_grid_points_match_torch(mode):
    # (zeros padding only: PyTorch's CPU kernel crashes on them with the other paddings)
    x = np.arange(1.0, 13.0).reshape(1, 1, 3, 4)
    g = np.array([[[[np.nan, 0.0], [0.0, np.nan], [np.inf, 0.0], [-np.inf, 0.0], [1e30, 0.0],
                    [0.2, -0.3]]]])
    with np.errstate(invalid="ignore"):
        for align_corners in (False, True):
            _compare(x, g, "float64", mode=mode, align_corners=align_corners)


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("padding_mode", PADDINGS)
@pytest.mark.parametrize("mode", MODES)
def test_second_derivatives_match_torch(mode, padding_mode, align_corners):
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    x, g = _input_and_grid((2, 2, 3, 4), (2, 2), seed=3)
    (nx, tx), (ng_, tg) = _pair(x, "float64"), _pair(g, "float64")
    rng = np.random.default_rng(4)
    w = rng.standard_normal((2, 2, 2, 2))
    u, v = rng.standard_normal(x.shape), rng.standard_normal(g.shape)
    grads = []
    for lib, fn, a, b in ((ng, F, nx, ng_), (torch, TF, tx, tg)):
        y = fn.grid_sample(a, b, **kw)
        da, db = lib.autograd.grad((y * y * lib.tensor(w)).sum(), (a, b), create_graph=True)
        assert da.grad_fn.name() == db.grad_fn.name() == "GridSampler2DBackwardBackward0"
        second = lib.autograd.grad((da * lib.tensor(u)).sum() + (db * lib.tensor(v)).sum(),
                                   (a, b))
        grads.append([da, db, *second])
    for got, ref in zip(*grads):
        _close(got, ref, "float64")


@pytest.mark.parametrize("mode", MODES)
def test_gradgradcheck_and_a_third_derivative(mode):
    x, g = _input_and_grid((1, 2, 2, 3), (2, 1), seed=5)
    x, g = ng.tensor(x, requires_grad=True), ng.tensor(g, requires_grad=True)

    def fn(a, b):
        return F.grid_sample(a, b, mode=mode, padding_mode="reflection", align_corners=False)

    assert gradcheck(fn, (x, g))
    assert gradgradcheck(fn, (x, g))

    def grads(a, b):
        y = fn(a, b)
        da, db = ng.autograd.grad((y * y).sum(), (a, b), create_graph=True)
        return da.sum() + (db * db).sum()

    # the gradients of the second derivatives are samples, scatters and projections too
    assert gradgradcheck(grads, (x, g))


def test_a_constant_grid_or_input_gets_no_gradient():
    x, g = _input_and_grid()
    out = F.grid_sample(ng.tensor(x, requires_grad=True), ng.tensor(g), align_corners=False)
    assert [f is None for f, _ in out.grad_fn.next_functions] == [False, True]
    gx = ng.tensor(g, requires_grad=True)
    out = F.grid_sample(ng.tensor(x), gx, align_corners=False)
    out.sum().backward()
    ref = torch.tensor(g, requires_grad=True)
    TF.grid_sample(torch.tensor(x), ref, align_corners=False).sum().backward()
    _close(gx.grad, ref.grad, "float64")
    with ng.no_grad():
        assert F.grid_sample(ng.tensor(x, requires_grad=True), gx, align_corners=False).grad_fn \
            is None


def test_default_align_corners_warns_and_is_false():
    x, g = _input_and_grid()
    with pytest.warns(UserWarning) as got:
        out = F.grid_sample(ng.tensor(x), ng.tensor(g))
    with pytest.warns(UserWarning) as ref:
        TF.grid_sample(torch.tensor(x), torch.tensor(g))
    assert [str(w.message) for w in got] == [str(w.message) for w in ref]
    assert got[0].filename == __file__
    np.testing.assert_array_equal(
        out.numpy(), F.grid_sample(ng.tensor(x), ng.tensor(g), align_corners=False).numpy())


def test_saved_names_match_torch():
    x, g = _input_and_grid()
    nodes = []
    for lib, fn in ((ng, F), (torch, TF)):
        a, b = lib.tensor(x, requires_grad=True), lib.tensor(g, requires_grad=True)
        y = fn.grid_sample(a, b, mode="bicubic", padding_mode="border", align_corners=True)
        da, _ = lib.autograd.grad(y.sum(), (a, b), create_graph=True)
        theta = lib.zeros(2, 2, 3, requires_grad=True)
        nodes.append((y.grad_fn, da.grad_fn, fn.affine_grid(theta, (2, 3, 4, 5), False).grad_fn))
    for got, ref in zip(*nodes):
        names = [n for n in dir(ref) if n.startswith("_saved_")]
        assert [n for n in dir(got) if n.startswith("_saved_")] == names
        for name in names:
            v, r = getattr(got, name), getattr(ref, name)
            if isinstance(r, torch.Tensor):
                np.testing.assert_array_equal(v.detach().numpy(), r.detach().numpy())
            else:
                assert v == r and type(v) is type(r)


# ---------------------------------------------------------------- affine_grid


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 1, 1, 3), (2, 1, 3, 1), (2, 2, 3, 4, 2),
                                  (2, 1, 1, 2, 3)])
def test_affine_grid_and_its_theta_gradient_match_torch(size, dtype):
    k = len(size) - 2
    theta = np.random.default_rng(6).standard_normal((2, k, k + 1))
    for align_corners in (False, True):
        (nt, tt) = _pair(theta, dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (align_corners with a size of 1: checked below)
            out = F.affine_grid(nt, size, align_corners=align_corners)
            ref = TF.affine_grid(tt, size, align_corners=align_corners)
        _close(out, ref, dtype)
        assert out.grad_fn.name() == ref.grad_fn.name() == "AffineGridGeneratorBackward0"
        w = np.random.default_rng(7).standard_normal(tuple(ref.shape)).astype(dtype)
        out.backward(ng.tensor(w))
        ref.backward(torch.tensor(w))
        _close(nt.grad, tt.grad, dtype)


def test_affine_grid_second_derivative_and_size_types():
    theta = ng.tensor(np.random.default_rng(8).standard_normal((2, 2, 3)), requires_grad=True)

    def fn(t):
        return F.affine_grid(t, ng.Size([2, 1, 3, 4]), align_corners=False)

    assert gradcheck(fn, (theta,)) and gradgradcheck(fn, (theta,))
    grad, = ng.autograd.grad((fn(theta) ** 2).sum(), theta, create_graph=True)
    assert grad.grad_fn.name() == "TransposeBackward0"  # (PyTorch's formula: bmm, transpose)
    for size in ([2, 1, 3, 4], (2, 1, 3, np.int64(4))):
        np.testing.assert_array_equal(F.affine_grid(theta, size, False).detach().numpy(),
                                      fn(theta).detach().numpy())


def test_affine_grid_warnings_match_torch():
    theta = np.eye(2, 3)[None].repeat(2, 0)
    for lib, fn in ((ng, F), (torch, TF)):
        with pytest.warns(UserWarning) as got:
            fn.affine_grid(lib.tensor(theta), (2, 1, 3, 4))
            fn.affine_grid(lib.tensor(theta), (2, 1, 1, 4), align_corners=True)
        if lib is ng:
            messages = [str(w.message) for w in got]
            assert got[0].filename == got[1].filename == __file__
        else:
            assert messages == [str(w.message) for w in got]


def test_the_spatial_transformer_pattern_matches_torch():
    # affine_grid then grid_sample, the gradient reaching theta (PyTorch's tutorial), and a
    # few SGD steps on theta
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 3, 6, 5))
    theta0 = np.eye(2, 3)[None] + 0.2 * rng.standard_normal((2, 2, 3))
    target = rng.standard_normal((2, 3, 6, 5))
    for dtype in ("float32", "float64"):
        results = []
        for lib, fn in ((ng, F), (torch, TF)):
            theta = lib.tensor(theta0.astype(dtype), requires_grad=True)
            img = lib.tensor(x.astype(dtype), requires_grad=True)
            opt = lib.optim.SGD([theta], lr=0.05)
            for _ in range(3):
                opt.zero_grad()
                grid = fn.affine_grid(theta, img.size(), align_corners=False)
                out = fn.grid_sample(img, grid, align_corners=False)
                loss = fn.mse_loss(out, lib.tensor(target.astype(dtype)))
                loss.backward()
                opt.step()
            results.append((loss, theta, img.grad))
        for got, ref in zip(*results):
            _close(got, ref, dtype)


# ---------------------------------------------------------------- errors


def _same_error(call):
    """``call(lib, functional)`` raises the same exception type and message on both."""
    with pytest.raises(Exception) as ref:
        call(torch, TF)
    with pytest.raises(type(ref.value)) as got:
        call(ng, F)
    assert str(got.value) == str(ref.value).replace("torch.", "numbagrad.")


def _sample(x_shape, g_shape, dtypes=("float32", "float32"), **kw):
    def call(lib, fn):
        x = lib.zeros(x_shape, dtype=getattr(lib, dtypes[0]))
        g = lib.zeros(g_shape, dtype=getattr(lib, dtypes[1]))
        return fn.grid_sample(x, g, **{"align_corners": False, **kw})

    return call


GRID_SAMPLE_ERRORS = {
    "mode": _sample((2, 3, 4, 5), (2, 6, 7, 2), mode="foo"),
    "mode not a string": _sample((2, 3, 4, 5), (2, 6, 7, 2), mode=1),
    "padding_mode": _sample((2, 3, 4, 5), (2, 6, 7, 2), padding_mode="bar"),
    "unbatched": _sample((3, 4, 5), (6, 7, 2)),
    "batch sizes": _sample((2, 3, 4, 5), (1, 6, 7, 2)),
    "grid's last dim": _sample((2, 3, 4, 5), (2, 6, 7, 3)),
    "grid's dims": _sample((2, 3, 4, 5), (2, 6, 2)),
    "grid's dims, 5-d": _sample((2, 3, 4, 5), (2, 6, 7, 8, 2)),
    "3-d input": _sample((2, 3, 4), (2, 6, 1)),
    "6-d input": _sample((2, 3, 4, 5, 6, 7), (2, 6, 7, 8, 3, 4)),
    "empty spatial dim": _sample((2, 3, 0, 5), (2, 6, 7, 2)),
    "5-d bicubic": _sample((2, 3, 4, 5, 6), (2, 6, 7, 8, 3), mode="bicubic"),
    "0-d input": lambda lib, fn: fn.grid_sample(lib.tensor(1.0), lib.zeros(2, 6, 7, 2),
                                                align_corners=False),
    "grid dtype": _sample((2, 3, 4, 5), (2, 6, 7, 2), ("float32", "float64")),
    "input dtype": _sample((2, 3, 4, 5), (2, 6, 7, 2), ("float64", "float32")),
    "int grid": _sample((2, 3, 4, 5), (2, 6, 7, 2), ("float64", "int32")),
    "int input": _sample((2, 3, 4, 5), (2, 6, 7, 2), ("int64", "float32")),
    "bool input": _sample((2, 3, 4, 5), (2, 6, 7, 2), ("bool", "bool")),
    "align_corners": _sample((2, 3, 4, 5), (2, 6, 7, 2), align_corners=1),
    "grid not a tensor": lambda lib, fn: fn.grid_sample(lib.zeros(2, 3, 4, 5), [[1.0]],
                                                        align_corners=False),
}


@pytest.mark.parametrize("case", GRID_SAMPLE_ERRORS)
def test_grid_sample_errors_match_torch(case):
    _same_error(GRID_SAMPLE_ERRORS[case])


def _affine(theta_shape, size, dtype="float32", align_corners=False):
    def call(lib, fn):
        theta = lib.zeros(theta_shape, dtype=getattr(lib, dtype))
        return fn.affine_grid(theta, size, align_corners=align_corners)

    return call


AFFINE_GRID_ERRORS = {
    "int theta": _affine((2, 2, 3), (2, 1, 4, 5), "int32"),
    "2-d theta shape": _affine((2, 3, 4), (2, 1, 4, 5)),
    "unbatched theta": _affine((2, 3), (2, 1, 4, 5)),
    "3-d theta shape": _affine((2, 2, 3), (2, 1, 4, 5, 6)),
    "size of 3": _affine((2, 2, 3), (2, 1, 4)),
    "empty size": _affine((2, 2, 3), (2, 1, 0, 5)),
    "negative size": _affine((2, 2, 3), [2, 1, -1, 5]),
    "empty batch": _affine((0, 2, 3), (0, 1, 4, 5)),
    "batch sizes": _affine((1, 2, 3), (2, 1, 4, 5)),
    "3-d batch sizes": _affine((3, 3, 4), (2, 1, 4, 5, 6)),
    "float size": _affine((2, 2, 3), (2.0, 1, 4, 5)),
    "Size of 3": lambda lib, fn: fn.affine_grid(lib.zeros(2, 2, 3), lib.Size([2, 1, 4]),
                                                align_corners=False),
}


@pytest.mark.parametrize("case", AFFINE_GRID_ERRORS)
def test_affine_grid_errors_match_torch(case):
    _same_error(AFFINE_GRID_ERRORS[case])


def test_volumetric_grid_sample_is_not_implemented():
    x, g = ng.zeros(1, 2, 3, 4, 5), ng.zeros(1, 2, 2, 2, 3)
    with pytest.raises(NotImplementedError, match="grid_sample of 5-d .* not implemented"):
        F.grid_sample(x, g, align_corners=False)


# ---------------------------------------------------------------- CUDA (simulator in CI)


@on_cuda
def test_cuda_grid_sample_matches_torch():
    x, g = _input_and_grid((2, 2, 3, 4), (2, 2))
    for mode, padding_mode in zip(MODES, PADDINGS):
        _compare(x, g, "float32", "cuda", mode=mode, padding_mode=padding_mode,
                 align_corners=mode == "nearest")
    _compare(x, g, "float64", "cuda", transposed=True, mode="bicubic", padding_mode="border",
             align_corners=True)


@on_cuda
def test_cuda_second_derivatives_and_spatial_transformer_match_torch():
    x, g = _input_and_grid((1, 2, 3, 4), (2, 1), seed=3)
    (nx, tx), (ng_, tg) = _pair(x, "float64", "cuda"), _pair(g, "float64")
    nt, tt = _pair(np.eye(2, 3)[None] + 0.1, "float64", "cuda")
    grads = []
    for lib, fn, a, b, t in ((ng, F, nx, ng_.cuda(), nt), (torch, TF, tx, tg, tt)):
        y = fn.grid_sample(a, b, padding_mode="reflection", align_corners=False)
        da, db = lib.autograd.grad((y * y).sum(), (a, b), create_graph=True)
        second = lib.autograd.grad(da.sum() + (db * db).sum(), (a, b))
        grid = fn.affine_grid(t, (1, 2, 3, 4), align_corners=False)
        stn = lib.autograd.grad(fn.grid_sample(a, grid, align_corners=False).sum(), t)
        grads.append([da, db, *second, grid, *stn])
    for got, ref in zip(*grads):
        assert got.device.type == "cuda"
        _close(got, ref, "float64")


@on_cuda
def test_cuda_input_and_cpu_grid_are_refused_as_in_torch():
    with pytest.raises(RuntimeError) as got:
        F.grid_sample(ng.zeros(1, 1, 2, 2, device="cuda"), ng.zeros(1, 1, 1, 2),
                      align_corners=False)
    assert str(got.value) == ("grid_sampler(): expected input and grid to be on same device, "
                              "but input is on cuda:0 and grid is on cpu")
