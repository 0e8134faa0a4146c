"""Convolution and pooling against PyTorch: values, every gradient, indices and error texts.

Shapes are few and small, so the kernels compile once per dtype and are shared by the cases.
"""

from __future__ import annotations

import numpy as np
import pytest

import numbagrad as ng
import numbagrad.nn.functional as F
from devices import on_cuda
from numbagrad.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RTOL = {"float32": 2e-5, "float64": 1e-10}


def _compare(fn_ng, fn_torch, arrays, dtype, requires=None, layout=None, device="cpu",
             rtol=None):
    """Both libraries on ``arrays`` (``layout`` makes each input of more than one dim a view
    first): the values, node names and every asked-for gradient agree (to ``rtol``, by
    default ``RTOL``'s); a pair of outputs is (values, indices)."""
    requires = requires or [True] * len(arrays)
    layout = layout or (lambda a: a)
    xs = [ng.tensor(a.astype(dtype), requires_grad=r, device=device)
          for a, r in zip(arrays, requires)]
    ts = [torch.tensor(a.astype(dtype), requires_grad=r) for a, r in zip(arrays, requires)]
    out = fn_ng(*[layout(x) if x.ndim > 1 else x for x in xs])
    ref = fn_torch(*[layout(t) if t.ndim > 1 else t for t in ts])
    if isinstance(ref, tuple):
        assert out[1].dtype is ng.int64
        np.testing.assert_array_equal(out[1].cpu().numpy(), ref[1].numpy())
        out, ref = out[0], ref[0]
    rtol = rtol or RTOL[dtype]
    assert tuple(out.shape) == tuple(ref.shape)
    np.testing.assert_allclose(out.detach().cpu().numpy(), ref.detach().numpy(), rtol=rtol,
                               atol=rtol)
    assert out.grad_fn.name() == ref.grad_fn.name()
    g = np.random.default_rng(1).standard_normal(tuple(ref.shape)).astype(dtype)
    out.backward(ng.tensor(g, device=device))
    ref.backward(torch.tensor(g))
    for x, t in zip(xs, ts):
        assert (x.grad is None) == (t.grad is None)
        if t.grad is not None:
            np.testing.assert_allclose(x.grad.cpu().numpy(), t.grad.numpy(), rtol=rtol,
                                       atol=rtol)


def _arrays(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


# ---------------------------------------------------------------- convolution

CONV2D = [
    dict(),
    dict(stride=2, padding=1),
    dict(stride=(2, 1), padding=(0, 2), dilation=(2, 1)),
    dict(padding="same", dilation=2),
    dict(padding="valid", groups=2),
    dict(stride=(1, 3), padding=1, groups=2),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw", CONV2D, ids=str)
def test_conv2d_matches_torch(kw, dtype):
    x, w, b = _arrays((2, 4, 7, 6), (6, 4 // kw.get("groups", 1), 3, 2), (6,))
    _compare(lambda x, w, b: F.conv2d(x, w, b, **kw), lambda x, w, b: TF.conv2d(x, w, b, **kw),
             [x, w, b], dtype)


# Output rows of 8 and more take the CPU im2col's copy of 8 values at a time (the shapes
# above have shorter rows); the larger batch is enough work for the row kernels' parallel loop.
WIDE_ROWS = [
    (F.conv2d, TF.conv2d, (3, 4, 5, 19), (6, 4, 3, 3), dict(padding=1)),
    (F.conv2d, TF.conv2d, (3, 4, 6, 21), (6, 2, 2, 3),
     dict(padding="same", dilation=(2, 3), groups=2)),
    (F.conv2d, TF.conv2d, (3, 4, 7, 18), (6, 4, 3, 2), dict(stride=(2, 1), padding=(0, 3))),
    (F.conv2d, TF.conv2d, (3, 4, 5, 33), (6, 4, 3, 3), dict(stride=(1, 2), padding=1)),
    (F.conv2d, TF.conv2d, (16, 4, 12, 20), (6, 4, 3, 3), dict(padding=1)),
    (F.conv3d, TF.conv3d, (2, 2, 4, 3, 12), (4, 2, 2, 3, 3), dict(padding=1, dilation=(1, 1, 2))),
    (F.conv_transpose2d, TF.conv_transpose2d, (2, 4, 5, 9), (4, 3, 3, 3),
     dict(stride=2, padding=1, output_padding=1)),
    (F.conv1d, TF.conv1d, (2, 3, 40), (5, 3, 4), dict(padding=2, dilation=3)),
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", WIDE_ROWS, ids=lambda c: f"{c[0].__name__}{c[2]}{c[4]}")
def test_conv_wide_rows_match_torch(case, dtype, threads):
    fn, tfn, xs, ws, kw = case
    x, w, b = _arrays(xs, ws, (ws[1] * kw.get("groups", 1) if fn is F.conv_transpose2d
                               else ws[0],))
    # (the weight gradient of the large batch sums 3840 products: PyTorch's own float32 error
    # there is 2e-4 of the float64 result, ten times numbagrad's)
    rtol = 5e-4 if dtype == "float32" and xs[0] == 16 else None
    before = ng.get_num_threads()
    ng.set_num_threads(threads)
    try:
        _compare(lambda x, w, b: fn(x, w, b, **kw), lambda x, w, b: tfn(x, w, b, **kw),
                 [x, w, b], dtype, rtol=rtol)
    finally:
        ng.set_num_threads(before)


@pytest.mark.parametrize("requires", [(True, False, False), (False, True, True),
                                      (False, False, True), (True, True, False)], ids=str)
def test_conv2d_any_subset_of_inputs_gets_gradients(requires):
    x, w, b = _arrays((2, 4, 7, 6), (6, 4, 3, 2), (6,))
    _compare(lambda x, w, b: ng.conv2d(x, w, b, padding=1),
             lambda x, w, b: torch.conv2d(x, w, b, padding=1), [x, w, b], "float64", requires)


def test_conv2d_no_bias_unbatched_and_a_non_contiguous_input():
    x, w = _arrays((2, 4, 7, 6), (6, 2, 3, 2))
    kw = dict(stride=2, padding=1, groups=2)
    # a transposed input (H and W swapped) is read through its strides
    _compare(lambda x, w: F.conv2d(x, w, **kw), lambda x, w: TF.conv2d(x, w, **kw), [x, w],
             "float64", layout=lambda t: t.transpose(-1, -2))
    _compare(lambda x, w: F.conv2d(x, w, **kw), lambda x, w: TF.conv2d(x, w, **kw), [x[0], w],
             "float32")


@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=2, dilation=2),
                                dict(padding="same", groups=2)], ids=str)
def test_conv1d_matches_torch(kw):
    x, w, b = _arrays((2, 4, 9), (6, 4 // kw.get("groups", 1), 3), (6,))
    for dtype in ("float32", "float64"):
        _compare(lambda x, w, b: F.conv1d(x, w, b, **kw),
                 lambda x, w, b: TF.conv1d(x, w, b, **kw), [x, w, b], dtype)
    _compare(lambda x, w, b: ng.conv1d(x, w, b, **kw), lambda x, w, b: torch.conv1d(x, w, b, **kw),
             [x[1], w, b], "float64")


def test_conv_second_derivatives_match_torch():
    # create_graph through a convolution: the gradients are convolutions themselves
    # (ConvolutionBackwardBackward0), differentiable again
    x, w, b = _arrays((2, 2, 5, 4), (4, 1, 3, 2), (4,))
    kw = dict(stride=(1, 2), padding=1, groups=2)
    grads = []
    for lib, f in ((ng, F.conv2d), (torch, TF.conv2d)):
        ts = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = f(*ts, **kw)
        gx, gw, gb = lib.autograd.grad((y * y).sum(), ts, create_graph=True)
        assert gx.grad_fn.name() == gw.grad_fn.name() == "ConvolutionBackwardBackward0"
        (gx.sin().sum() + (gw * gw).sum() + gb.pow(3).sum()).backward()
        grads.append([t.grad.numpy() for t in ts] + [gx.detach().numpy(), gw.detach().numpy()])
    for a, b_ in zip(*grads):
        np.testing.assert_allclose(a, b_, rtol=1e-10, atol=1e-10)
    ts = [ng.tensor(a, requires_grad=True) for a in (x, w, b)]
    assert gradgradcheck(lambda *t: F.conv2d(*t, **kw), tuple(ts))


def test_conv1d_gradgradcheck():
    ts = tuple(ng.tensor(a, requires_grad=True) for a in _arrays((2, 2, 5), (2, 2, 2), (2,)))
    assert gradcheck(lambda *t: F.conv1d(*t, padding=1, stride=2), ts)
    assert gradgradcheck(lambda *t: F.conv1d(*t, padding=1, stride=2), ts)


CONV_ERRORS = [
    ((2, 4, 8, 8), (8, 3, 3, 3), None, {}),
    ((4, 8, 8), (8, 3, 3, 3), None, {}),
    ((2, 3, 2, 2), (8, 3, 3, 3), None, {}),
    ((2, 3, 8, 8), (8, 3, 3, 3), None, {"groups": 2}),
    ((2, 4, 8, 8), (6, 2, 3, 3), None, {"groups": 4}),
    ((2, 3, 8, 8), (8, 3, 3, 3), (7,), {}),
    ((2, 3, 8, 8), (8, 3, 3, 3), None, {"stride": 2, "padding": "same"}),
    ((2, 3, 8, 8), (8, 3, 3, 3), None, {"padding": "foo"}),
    ((2, 3, 8, 8), (8, 3, 3, 3), None, {"stride": 0}),
    ((2, 3, 8, 8), (8, 3, 3, 3), None, {"padding": -1}),
    ((2, 3, 8, 8), (8, 3, 3, 3), None, {"dilation": 0}),
    ((2, 3, 8, 8), (8, 3, 3, 3), None, {"groups": 0}),
    ((3, 8), (8, 3, 3, 3), None, {}),
    ((2, 3, 8, 8), (8, 3, 3), None, {}),
    ((2, 3, 8, 8), (8, 3, 3, 3), None, {"stride": (1, 2, 3)}),
    ((2, 3, 8), (8, 3, 9), None, "conv1d"),
]


@pytest.mark.parametrize("xs,ws,bs,kw", CONV_ERRORS, ids=str)
def test_conv_errors_match_torch(xs, ws, bs, kw):
    name = "conv2d"
    if kw == "conv1d":
        name, kw = "conv1d", {}
    args = _arrays(xs, ws) + ([] if bs is None else _arrays(bs))
    with pytest.raises(Exception) as expected:
        getattr(TF, name)(*[torch.tensor(a, dtype=torch.float32) for a in args], **kw)
    with pytest.raises(type(expected.value)) as got:
        getattr(F, name)(*[ng.tensor(a, dtype=ng.float32) for a in args], **kw)
    assert str(got.value) == str(expected.value).split("\n")[0]


def test_conv_dtype_mismatch_errors_match_torch():
    x, w, b = _arrays((2, 3, 5, 5), (4, 3, 3, 3), (4,))
    for wd, bd in ((torch.float64, None), (torch.float32, torch.float64)):
        with pytest.raises(RuntimeError) as expected:
            TF.conv2d(torch.tensor(x, dtype=torch.float32), torch.tensor(w, dtype=wd),
                      None if bd is None else torch.tensor(b, dtype=bd))
        with pytest.raises(RuntimeError) as got:
            F.conv2d(ng.tensor(x, dtype=ng.float32), ng.tensor(w, dtype=getattr(ng, str(wd)[6:])),
                     None if bd is None else ng.tensor(b, dtype=getattr(ng, str(bd)[6:])))
        assert str(got.value) == str(expected.value)


# ---------------------------------------------------------------- pooling

POOL2D = [
    ("max_pool2d", dict(kernel_size=2)),
    ("max_pool2d", dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("max_pool2d", dict(kernel_size=(2, 3), stride=1, dilation=(2, 1))),
    ("avg_pool2d", dict(kernel_size=2)),
    ("avg_pool2d", dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("avg_pool2d", dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                        count_include_pad=False)),
    ("avg_pool2d", dict(kernel_size=(3, 2), stride=(1, 2), padding=1, divisor_override=5)),
    ("adaptive_avg_pool2d", dict(output_size=3)),
    ("adaptive_avg_pool2d", dict(output_size=(4, None))),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kw", POOL2D, ids=str)
def test_pool2d_matches_torch(name, kw, dtype):
    (x,) = _arrays((2, 3, 7, 6))
    _compare(lambda x: getattr(F, name)(x, **kw), lambda x: getattr(TF, name)(x, **kw), [x], dtype)
    if dtype == "float64":  # unbatched, and a transposed view
        _compare(lambda x: getattr(F, name)(x, **kw), lambda x: getattr(TF, name)(x, **kw),
                 [x[0]], dtype, layout=lambda t: t.transpose(-1, -2))


POOL1D = [
    ("max_pool1d", dict(kernel_size=2)),
    ("max_pool1d", dict(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True)),
    ("avg_pool1d", dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("avg_pool1d", dict(kernel_size=3, padding=1, count_include_pad=False)),
]


@pytest.mark.parametrize("name,kw", POOL1D, ids=str)
def test_pool1d_matches_torch(name, kw):
    (x,) = _arrays((2, 3, 9))
    for a in (x, x[0]):
        _compare(lambda x: getattr(F, name)(x, **kw), lambda x: getattr(TF, name)(x, **kw), [a],
                 "float64")


@pytest.mark.parametrize("n", [1, 2])
def test_max_pool_indices_equal_torch(n):
    (x,) = _arrays((2, 3, 7, 6))
    x[0, 0, :2, :2] = -np.inf  # a window of -inf: the index of its first position in the input
    x[1, 2, 3, 3] = np.nan  # a NaN wins
    x[1, 2, 3, 4] = np.nan
    if n == 1:
        x = x[:, :, 0]
    kw = dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)
    fn = f"max_pool{n}d"
    out, idx = getattr(F, fn)(ng.tensor(x), return_indices=True, **kw)
    ref, ridx = getattr(TF, fn)(torch.tensor(x), return_indices=True, **kw)
    assert idx.dtype is ng.int64
    np.testing.assert_array_equal(idx.numpy(), ridx.numpy())
    np.testing.assert_array_equal(out.numpy(), ref.numpy())


def test_pooling_second_derivatives():
    (x,) = _arrays((2, 2, 5, 4))
    t = ng.tensor(x, requires_grad=True)
    for fn in (lambda v: F.max_pool2d(v, 2, 1), lambda v: F.avg_pool2d(v, 3, 2, 1),
               lambda v: F.adaptive_avg_pool2d(v, 3)):
        assert gradgradcheck(fn, (t,))
    y = F.max_pool2d(t, 2)
    (g,) = ng.autograd.grad((y * y).sum(), t, create_graph=True)
    ref = TF.max_pool2d(tt := torch.tensor(x, requires_grad=True), 2)
    (rg,) = torch.autograd.grad((ref * ref).sum(), tt, create_graph=True)
    assert g.grad_fn.name() == rg.grad_fn.name()
    g.pow(2).sum().backward()
    rg.pow(2).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), tt.grad.numpy(), rtol=1e-12)


POOL_ERRORS = [
    ("max_pool2d", (2, 4, 8, 8), dict(kernel_size=2, padding=2)),
    ("max_pool2d", (1, 1, 2, 2), dict(kernel_size=3)),
    ("max_pool2d", (2, 4, 8, 8), dict(kernel_size=0)),
    ("max_pool2d", (2, 4, 8, 8), dict(kernel_size=0, stride=1)),
    ("max_pool2d", (2, 4, 8, 8), dict(kernel_size=2, dilation=0)),
    ("max_pool2d", (8, 8), dict(kernel_size=2)),
    ("max_pool2d", (2, 3, 0, 4), dict(kernel_size=2)),
    ("max_pool2d", (2, 3, 4, 4), dict(kernel_size=(2, 2, 2))),
    ("avg_pool2d", (2, 4, 8, 8), dict(kernel_size=2, padding=2)),
    ("avg_pool2d", (1, 1, 2, 2), dict(kernel_size=3)),
    ("avg_pool2d", (2, 4, 8, 8), dict(kernel_size=2, divisor_override=0)),
    ("avg_pool2d", (2, 3, 4, 4), dict(kernel_size=2, stride=0)),
    ("adaptive_avg_pool2d", (8, 8), dict(output_size=2)),
    ("adaptive_avg_pool2d", (2, 4, 8, 8), dict(output_size=(2, 2, 2))),
    ("adaptive_avg_pool2d", (2, 4, 8, 8), dict(output_size=-1)),
    ("max_pool1d", (2, 3, 4), dict(kernel_size=2, padding=2)),
    ("max_pool1d", (2, 4), dict(kernel_size=5)),
    ("max_pool1d", (2, 4), dict(kernel_size=5, return_indices=True)),
    ("max_pool1d", (2, 4), dict(kernel_size=2, stride=0)),
    ("max_pool1d", (2, 4), dict(kernel_size=2, dilation=0)),
    ("max_pool1d", (4,), dict(kernel_size=2)),
    ("avg_pool1d", (4,), dict(kernel_size=2)),
    ("avg_pool1d", (2, 3, 4), dict(kernel_size=2, padding=2)),
]


@pytest.mark.parametrize("name,shape,kw", POOL_ERRORS, ids=str)
def test_pool_errors_match_torch(name, shape, kw):
    (x,) = _arrays(shape)
    with pytest.raises(Exception) as expected:
        getattr(TF, name)(torch.tensor(x), **kw)
    with pytest.raises(type(expected.value)) as got:
        getattr(F, name)(ng.tensor(x), **kw)
    assert str(got.value) == str(expected.value).split("\n")[0]


def test_public_names_as_torch():
    for name in ("conv1d", "conv2d", "max_pool1d", "max_pool2d", "avg_pool1d"):
        # (numbagrad.X wraps nn.functional.X with PyTorch's out= keyword)
        assert getattr(ng, name).__wrapped__ is getattr(F, name)
    for name in ("avg_pool2d", "adaptive_avg_pool2d"):
        assert not hasattr(torch, name) and not hasattr(ng, name)


def test_kernels_compile_per_dtype_not_per_shape():
    from numbagrad.backend import cpu

    x, w = _arrays((2, 3, 6, 5), (4, 3, 3, 3))
    F.conv2d(ng.tensor(x), ng.tensor(w))
    n = len(cpu._row_kernels)
    F.conv2d(ng.tensor(x[:1, :, :5]), ng.tensor(w[:, :, :2]), stride=2, padding=1, dilation=2)
    assert len(cpu._row_kernels) == n
    im2col = next(k for key, k in cpu._row_kernels.items()
                  if key[0].__name__ == "im2col_padded_row" and key[1] == np.float64)
    assert len(im2col.signatures) == 1


# ---------------------------------------------------------------- CUDA (simulator in CI)


@on_cuda
def test_cuda_conv_and_pools_match_torch():
    x, w, b = _arrays((2, 4, 5, 4), (4, 2, 3, 2), (4,))
    kw = dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2)
    _compare(lambda x, w, b: F.conv2d(x, w, b, **kw), lambda x, w, b: TF.conv2d(x, w, b, **kw),
             [x, w, b], "float64", device="cuda", layout=lambda t: t.transpose(-1, -2))
    for name, kw in POOL2D[1:2] + POOL2D[5:6] + POOL2D[8:]:
        _compare(lambda x: getattr(F, name)(x, **kw), lambda x: getattr(TF, name)(x, **kw),
                 [x[:1]], "float32", device="cuda")
