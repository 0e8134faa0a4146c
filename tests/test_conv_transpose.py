"""Transposed convolution against PyTorch: values, every gradient, second derivatives, the
modules' parameters, init, repr and ``output_size``, and error texts.

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


def _compare(fn_ng, fn_torch, arrays, dtype, device="cpu"):
    """Both libraries on ``arrays``: values, node names and every input's gradient agree."""
    xs = [ng.tensor(a.astype(dtype), requires_grad=True, device=device) for a in arrays]
    ts = [torch.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    out, ref = fn_ng(*xs), fn_torch(*ts)
    rtol = RTOL[dtype]
    assert tuple(out.shape) == tuple(ref.shape)
    np.testing.assert_allclose(out.detach().cpu().numpy(), ref.detach().numpy(), rtol=rtol,
                               atol=rtol)
    assert out.grad_fn.name() == ref.grad_fn.name()
    g = np.random.default_rng(1).standard_normal(tuple(ref.shape)).astype(dtype)
    out.backward(ng.tensor(g, device=device))
    ref.backward(torch.tensor(g))
    for x, t in zip(xs, ts):
        np.testing.assert_allclose(x.grad.cpu().numpy(), t.grad.numpy(), rtol=rtol, atol=rtol)


def _arrays(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


# (input, weight) shapes: weight (C_in, C_out / groups, *kernel)
CASES2D = [
    dict(),
    dict(stride=2, padding=1, output_padding=1),
    dict(stride=(2, 3), padding=(1, 0), output_padding=(0, 2)),
    dict(stride=(2, 1), padding=(0, 1), output_padding=(1, 1), dilation=(1, 2)),  # op < dil
    dict(stride=2, padding=2, dilation=2, groups=2),
    dict(stride=(1, 2), output_padding=(0, 1), groups=4),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw", CASES2D, ids=str)
def test_conv_transpose2d_matches_torch(kw, dtype):
    x, w, b = _arrays((2, 4, 5, 4), (4, 2, 3, 2), (2 * kw.get("groups", 1),))
    _compare(lambda x, w, b: F.conv_transpose2d(x, w, b, **kw),
             lambda x, w, b: TF.conv_transpose2d(x, w, b, **kw), [x, w, b], dtype)


CASES1D = [dict(), dict(stride=3, padding=1, output_padding=2), dict(dilation=2, groups=2),
           dict(stride=2, padding=1, output_padding=1, dilation=3)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw", CASES1D, ids=str)
def test_conv_transpose1d_matches_torch(kw, dtype):
    x, w, b = _arrays((2, 4, 5), (4, 3, 3), (3 * kw.get("groups", 1),))
    _compare(lambda x, w, b: F.conv_transpose1d(x, w, b, **kw),
             lambda x, w, b: TF.conv_transpose1d(x, w, b, **kw), [x, w, b], "float64")


def test_unbatched_and_no_bias_match_torch():
    x, w = _arrays((4, 5, 4), (4, 2, 3, 2))
    kw = dict(stride=2, padding=1, output_padding=1)
    _compare(lambda x, w: F.conv_transpose2d(x, w, **kw),
             lambda x, w: TF.conv_transpose2d(x, w, **kw), [x, w], "float64")
    _compare(lambda x, w: ng.conv_transpose1d(x, w[..., 0], stride=2),
             lambda x, w: torch.conv_transpose1d(x, w[..., 0], stride=2), [x[:, :, 0], w],
             "float64")


def test_second_derivatives():
    x, w, b = (ng.tensor(a, requires_grad=True) for a in _arrays((1, 4, 3, 3), (4, 2, 2, 2), (4,)))
    kw = dict(stride=2, padding=1, output_padding=1, groups=2)
    fn = lambda x, w, b: F.conv_transpose2d(x, w, b, **kw)  # noqa: E731
    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))
    # and the double-backward nodes and values are PyTorch's
    tx, tw = (torch.tensor(t.detach().numpy(), requires_grad=True) for t in (x, w))
    gx = ng.autograd.grad(F.conv_transpose2d(x, w, None, **kw).pow(2).sum(), w,
                          create_graph=True)[0]
    tgx = torch.autograd.grad(TF.conv_transpose2d(tx, tw, None, **kw).pow(2).sum(), tw,
                              create_graph=True)[0]
    np.testing.assert_allclose(gx.detach().numpy(), tgx.detach().numpy(), rtol=1e-10)
    ng.autograd.backward(gx.sum())
    tgx.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-10, atol=1e-10)


# ---------------------------------------------------------------- modules


@pytest.mark.parametrize("cls, args, kw", [
    ("ConvTranspose2d", (4, 6, 3), dict(stride=2, padding=1, output_padding=1, groups=2,
                                        dilation=2, bias=False)),
    ("ConvTranspose2d", (4, 2, (3, 2)), dict(stride=(2, 1))),
    ("ConvTranspose1d", (4, 6, 3), dict(output_padding=1, stride=2)),
])
def test_modules_match_torch(cls, args, kw):
    torch.manual_seed(0)
    ng.manual_seed(0)
    m, tm = getattr(ng.nn, cls)(*args, **kw), getattr(torch.nn, cls)(*args, **kw)
    assert repr(m) == repr(tm)
    assert m.transposed is True and m.output_padding == tm.output_padding
    for (name, p), (tname, tp) in zip(m.named_parameters(), tm.named_parameters()):
        assert name == tname and tuple(p.shape) == tuple(tp.shape)
    # the init bound: fan_in from weight dim 1 times the kernel (as PyTorch's)
    fan_in = m.weight.shape[1] * int(np.prod(m.kernel_size))
    assert np.abs(m.weight.detach().numpy()).max() <= 1 / np.sqrt(fan_in)
    assert np.abs(m.weight.detach().numpy()).max() > 0.5 / np.sqrt(fan_in)
    if m.bias is not None:
        assert np.abs(m.bias.detach().numpy()).max() <= 1 / np.sqrt(fan_in)
    m.load_state_dict({k: ng.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    shape = (2, 4, 5, 4) if cls.endswith("2d") else (2, 4, 5)
    (x,) = _arrays(shape)
    _compare(lambda x: m(x), lambda x: tm(x), [x], "float32")


def test_output_size_matches_torch():
    tm = torch.nn.ConvTranspose2d(4, 6, 3, stride=(2, 3), padding=1, dtype=torch.float64)
    m = ng.nn.ConvTranspose2d(4, 6, 3, stride=(2, 3), padding=1, dtype=ng.float64)
    m.load_state_dict({k: ng.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    (x,) = _arrays((2, 4, 5, 4))
    for size in [(10, 10), (9, 11), [2, 6, 10, 12]]:
        _compare(lambda x: m(x, output_size=size), lambda x: tm(x, output_size=size), [x],
                 "float64")
    _compare(lambda x: m(x[0], output_size=(6, 9, 11)), lambda x: tm(x[0], output_size=(6, 9, 11)),
             [x], "float64")
    xt = torch.tensor(x)
    for args in [(xt, (11, 10)), (xt, (10,)), (xt[0], (2, 6, 10, 10))]:
        with pytest.raises(ValueError) as ref:
            tm(*args)
        with pytest.raises(ValueError) as got:
            m(ng.tensor(args[0].numpy()), output_size=args[1])
        assert str(got.value) == str(ref.value).replace("torch.Size", "numbagrad.Size")


# ---------------------------------------------------------------- errors


def _same_error(fn, x, w, b=None, **kw):
    """Both libraries raise the same exception type and message."""
    tensors = [x, w] + ([b] if b is not None else [])
    with pytest.raises(Exception) as ref:
        getattr(TF, fn)(*[torch.tensor(a) for a in tensors], **kw)
    with pytest.raises(ref.type) as got:
        getattr(F, fn)(*[ng.tensor(a) for a in tensors], **kw)
    assert str(got.value) == str(ref.value)


@pytest.mark.parametrize("fn, shapes, kw", [
    ("conv_transpose2d", [(2, 4, 5, 5), (3, 3, 3, 3)], {}),  # channel mismatch
    ("conv_transpose2d", [(2, 4, 5, 5), (4, 3, 3, 3)], dict(stride=2, output_padding=2)),
    ("conv_transpose2d", [(2, 4, 5, 5), (4, 3, 3, 3)], dict(stride=(2, 1), output_padding=1)),
    ("conv_transpose1d", [(2, 4, 5), (4, 3, 3)], dict(stride=2, output_padding=2)),
    ("conv_transpose2d", [(2, 4, 5, 5), (4, 2, 3, 3), (3,)], dict(groups=2)),  # bias size
    ("conv_transpose2d", [(2, 4, 5, 5), (4, 3, 3, 3)], dict(groups=3)),
    ("conv_transpose2d", [(5, 5), (4, 3, 3, 3)], {}),
    ("conv_transpose2d", [(2, 4, 5, 5), (4, 3, 3, 3)], dict(padding=(0, 4))),  # too small
    ("conv_transpose1d", [(2, 4, 5), (4, 3, 3)], dict(padding=4)),
    ("conv_transpose2d", [(2, 4, 5, 5), (4, 3, 3, 3)], dict(padding="same")),
    ("conv_transpose2d", [(2, 4, 5, 5), (4, 3, 3, 3)], dict(padding=("same", "same"))),
    ("conv_transpose2d", [(2, 4, 5, 5), (4, 3, 3, 3)], dict(output_padding=-1)),
    ("conv_transpose2d", [(2, 4, 5, 5), (4, 3, 3, 3)], dict(output_padding=(1, 2, 3))),
    ("conv_transpose2d", [(2, 4, 5, 5), (4, 3, 3, 3)], dict(stride=0)),
    ("conv_transpose2d", [(2, 4, 5, 5), (4, 3, 3, 3)], dict(groups=0)),
])
def test_errors_match_torch(fn, shapes, kw):
    # float64: PyTorch's own checks (float32 meets oneDNN's texts for some of these first)
    _same_error(fn, *_arrays(*shapes), **kw)


def test_module_errors_match_torch():
    for kw in [dict(padding_mode="reflect"), dict(groups=3)]:
        with pytest.raises(ValueError) as ref:
            torch.nn.ConvTranspose2d(4, 6, 3, **kw)
        with pytest.raises(ValueError) as got:
            ng.nn.ConvTranspose2d(4, 6, 3, **kw)
        assert str(got.value) == str(ref.value)


# ---------------------------------------------------------------- CUDA (simulator in CI)


@on_cuda
def test_cuda_conv_transpose_matches_torch():
    x, w, b = _arrays((2, 4, 5, 4), (4, 2, 3, 2), (4,))
    kw = dict(stride=(2, 1), padding=(1, 0), output_padding=(1, 0), dilation=(1, 2), groups=2)
    _compare(lambda x, w, b: F.conv_transpose2d(x, w, b, **kw),
             lambda x, w, b: TF.conv_transpose2d(x, w, b, **kw), [x, w, b], "float64",
             device="cuda")
