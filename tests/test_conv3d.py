"""3-d convolution, transposed convolution and pooling against PyTorch: values, every gradient,
indices, node names, second derivatives, the modules' reprs and parameters, and error texts.

The 3-d ops run the kernels the 2-d ones run (a plane is a volume of depth 1), so they
compile once per dtype for both; the shapes are few and small.
"""

from __future__ import annotations

import numpy as np
import pytest

import numbagrad as ng
import numbagrad.nn.functional as F
from devices import on_cuda
from numbagrad.autograd import gradcheck, gradgradcheck
from test_conv import RTOL, _arrays, _compare  # (the 2-d file's comparison, shared)

torch = pytest.importorskip("torch")
TF = torch.nn.functional


# ---------------------------------------------------------------- convolution

CONV3D = [
    dict(),
    dict(stride=2, padding=1),
    dict(stride=(2, 1, 1), padding=(0, 1, 2), dilation=(2, 1, 1)),
    dict(padding="same", dilation=(1, 2, 1)),
    dict(padding="valid", groups=2),
    dict(stride=(1, 2, 1), padding=1, groups=4),
]


# (PyTorch warns that 'same' with an odd total padding copies the input; numbagrad pads
# unevenly in its kernels without a copy, and says nothing)
@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw", CONV3D, ids=str)
def test_conv3d_matches_torch(kw, dtype):
    x, w, b = _arrays((2, 4, 5, 4, 6), (8, 4 // kw.get("groups", 1), 2, 3, 2), (8,))
    _compare(lambda x, w, b: F.conv3d(x, w, b, **kw), lambda x, w, b: TF.conv3d(x, w, b, **kw),
             [x, w, b], dtype)


@pytest.mark.parametrize("requires", [(True, False, False), (False, True, True),
                                      (True, True, False)], ids=str)
def test_conv3d_any_subset_of_inputs_gets_gradients(requires):
    x, w, b = _arrays((2, 4, 4, 3, 5), (6, 4, 2, 2, 3), (6,))
    _compare(lambda x, w, b: ng.conv3d(x, w, b, padding=1),
             lambda x, w, b: torch.conv3d(x, w, b, padding=1), [x, w, b], "float64", requires)


def test_conv3d_unbatched_no_bias_and_a_non_contiguous_input():
    x, w = _arrays((2, 4, 5, 4, 6), (6, 2, 3, 2, 2))
    kw = dict(stride=(1, 2, 1), padding=1, groups=2)
    # (depth and width swapped: the input is read through its strides)
    _compare(lambda x, w: F.conv3d(x, w, **kw), lambda x, w: TF.conv3d(x, w, **kw), [x, w],
             "float64", layout=lambda t: t.transpose(-1, -3))
    _compare(lambda x, w: F.conv3d(x, w, **kw), lambda x, w: TF.conv3d(x, w, **kw), [x[0], w],
             "float32")


def test_conv3d_second_derivatives_match_torch():
    x, w, b = _arrays((2, 2, 3, 4, 3), (4, 1, 2, 3, 2), (4,))
    kw = dict(stride=(1, 1, 2), padding=1, groups=2)
    grads = []
    for lib, f in ((ng, F.conv3d), (torch, TF.conv3d)):
        ts = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = f(*ts, **kw)
        gx, gw, gb = lib.autograd.grad((y * y).sum(), ts, create_graph=True)
        assert gx.grad_fn.name() == gw.grad_fn.name() == "ConvolutionBackwardBackward0"
        (gx.sin().sum() + (gw * gw).sum() + gb.pow(3).sum()).backward()
        grads.append([t.grad.numpy() for t in ts] + [gx.detach().numpy(), gw.detach().numpy()])
    for a, b_ in zip(*grads):
        np.testing.assert_allclose(a, b_, rtol=1e-10, atol=1e-10)
    ts = tuple(ng.tensor(a, requires_grad=True) for a in _arrays((1, 2, 3, 2, 3), (2, 1, 2, 1, 2),
                                                                  (2,)))
    assert gradgradcheck(lambda *t: F.conv3d(*t, stride=(2, 1, 1), padding=1, groups=2), ts)


# (weight (C_in, C_out / groups, *kernel))
CONV_T3D = [
    dict(),
    dict(stride=2, padding=1, output_padding=1),
    dict(stride=(2, 1, 3), padding=(1, 0, 1), output_padding=(1, 0, 2)),
    dict(stride=(1, 2, 1), padding=(0, 1, 1), output_padding=(1, 1, 0), dilation=(2, 1, 2)),
    dict(stride=2, padding=2, dilation=2, groups=2),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw", CONV_T3D, ids=str)
def test_conv_transpose3d_matches_torch(kw, dtype):
    x, w, b = _arrays((2, 4, 3, 4, 3), (4, 3, 3, 2, 2), (3 * kw.get("groups", 1),))
    _compare(lambda x, w, b: F.conv_transpose3d(x, w, b, **kw),
             lambda x, w, b: TF.conv_transpose3d(x, w, b, **kw), [x, w, b], dtype)


def test_conv_transpose3d_unbatched_no_bias_and_second_derivatives():
    x, w = _arrays((4, 3, 2, 3), (4, 2, 2, 3, 2))
    kw = dict(stride=(2, 1, 2), padding=1, output_padding=(1, 0, 0), groups=2)
    _compare(lambda x, w: F.conv_transpose3d(x, w, **kw),
             lambda x, w: TF.conv_transpose3d(x, w, **kw), [x, w], "float64")
    ts = tuple(ng.tensor(a, requires_grad=True)
               for a in _arrays((1, 2, 2, 2, 3), (2, 1, 2, 1, 2), (1,)))
    assert gradcheck(lambda *t: F.conv_transpose3d(*t, stride=2, padding=(0, 0, 1)), ts)
    assert gradgradcheck(lambda *t: F.conv_transpose3d(*t, stride=2, padding=(0, 0, 1)), ts)


# ---------------------------------------------------------------- pooling

POOL3D = [
    ("max_pool3d", dict(kernel_size=2)),
    ("max_pool3d", dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("max_pool3d", dict(kernel_size=(2, 3, 2), stride=1, dilation=(2, 1, 2))),
    ("max_pool3d", dict(kernel_size=(3, 2, 2), stride=(2, 1, 2), padding=(1, 1, 0),
                        dilation=(1, 2, 1), ceil_mode=True, return_indices=True)),
    ("avg_pool3d", dict(kernel_size=2)),
    ("avg_pool3d", dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("avg_pool3d", dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                        count_include_pad=False)),
    ("avg_pool3d", dict(kernel_size=(2, 3, 2), stride=(1, 2, 1), padding=1, divisor_override=5)),
    ("adaptive_avg_pool3d", dict(output_size=3)),
    ("adaptive_avg_pool3d", dict(output_size=(4, None, 2))),
    ("adaptive_max_pool3d", dict(output_size=(3, 2, 4), return_indices=True)),
    ("adaptive_max_pool3d", dict(output_size=(None, 3, 1))),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kw", POOL3D, ids=str)
def test_pool3d_matches_torch(name, kw, dtype):
    (x,) = _arrays((2, 3, 5, 7, 6))
    _compare(lambda x: getattr(F, name)(x, **kw), lambda x: getattr(TF, name)(x, **kw), [x], dtype)
    if dtype == "float64":  # unbatched, and a transposed view
        _compare(lambda x: getattr(F, name)(x, **kw), lambda x: getattr(TF, name)(x, **kw),
                 [x[1]], dtype, layout=lambda t: t.transpose(-1, -3))


def test_max_pool3d_indices_with_nan_and_minus_inf_equal_torch():
    (x,) = _arrays((2, 2, 5, 4, 5))
    x[0, 0, :2, :2, :2] = -np.inf  # a window of -inf: the index of its first position inside
    x[1, 1, 2, 2, 2] = np.nan  # a NaN wins (the last of a window's)
    x[1, 1, 3, 2, 2] = np.nan
    for f in ("max_pool3d", "adaptive_max_pool3d"):
        kw = dict(output_size=(2, 3, 2)) if f.startswith("adaptive") else dict(
            kernel_size=3, stride=2, padding=1, ceil_mode=True)
        out, idx = getattr(F, f)(ng.tensor(x), return_indices=True, **kw)
        ref, ridx = getattr(TF, f)(torch.tensor(x), return_indices=True, **kw)
        # (numbagrad's adaptive max pooling, an argmax, takes a window's first NaN where
        # PyTorch's takes its last, as both max_pool3d do: its NaN windows are left out)
        if f == "max_pool3d":
            np.testing.assert_array_equal(idx.numpy(), ridx.numpy())
            np.testing.assert_array_equal(out.numpy(), ref.numpy())
        else:
            finite = np.isfinite(ref.numpy())
            np.testing.assert_array_equal(idx.numpy()[finite], ridx.numpy()[finite])


@pytest.mark.parametrize("name,kw", [("max_pool3d", dict(kernel_size=2, stride=1)),
                                     ("avg_pool3d", dict(kernel_size=2, padding=1)),
                                     ("adaptive_avg_pool3d", dict(output_size=2)),
                                     ("adaptive_max_pool3d", dict(output_size=(2, 1, 2)))])
def test_pool3d_second_derivatives_match_torch(name, kw):
    (x,) = _arrays((1, 2, 3, 3, 2))
    t = ng.tensor(x, requires_grad=True)
    assert gradgradcheck(lambda v: getattr(F, name)(v, **kw), (t,))
    grads = []
    for lib, mod in ((ng, F), (torch, TF)):
        v = lib.tensor(x, requires_grad=True)
        y = getattr(mod, name)(v, **kw)
        (g,) = lib.autograd.grad((y * y).sum(), v, create_graph=True)
        grads.append((g.grad_fn.name(), g.detach().numpy()))
        g.pow(2).sum().backward()
        grads.append(v.grad.numpy())
    assert grads[0][0] == grads[2][0]  # (MaxPool3DWithIndicesBackwardBackward0, ...)
    np.testing.assert_allclose(grads[0][1], grads[2][1], rtol=1e-12)
    np.testing.assert_allclose(grads[1], grads[3], rtol=1e-12)


def test_a_small_3d_unet_block_trains_as_in_torch():
    # conv, batch norm, relu, max pooling, transposed convolution up and a skip: one step's
    # loss and every parameter's gradient
    nets = []
    for lib in (ng, torch):
        lib.manual_seed(0)
        nn = lib.nn
        net = nn.ModuleDict(dict(
            down=nn.Sequential(nn.Conv3d(2, 4, 3, padding=1, padding_mode="replicate"),
                               nn.BatchNorm3d(4), nn.ReLU(), nn.MaxPool3d(2)),
            up=nn.ConvTranspose3d(4, 2, 2, stride=2),
            norm=nn.InstanceNorm3d(2, affine=True),
            head=nn.Sequential(nn.AvgPool3d(2, 1, 1, count_include_pad=False),
                               nn.AdaptiveAvgPool3d((2, 1, 2)))))
        nets.append((lib, net.double()))
    ng_net, t_net = nets[0][1], nets[1][1]
    ng_net.load_state_dict({k: ng.tensor(v.detach().numpy())
                            for k, v in t_net.state_dict().items()})
    (x,) = _arrays((2, 2, 4, 6, 4), seed=3)
    losses = []
    for lib, net in nets:
        inp = lib.tensor(x)
        h = net["norm"](net["up"](net["down"](inp)) + inp)
        loss = net["head"](h).pow(2).sum()
        loss.backward()
        losses.append(loss.item())
    assert losses[0] == pytest.approx(losses[1], rel=1e-10)
    for (name, p), (_, q) in zip(ng_net.named_parameters(), t_net.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-9, atol=1e-12,
                                   err_msg=name)


# ---------------------------------------------------------------- modules


MODULES = [
    ("Conv3d", (4, 6, 3), {}),
    ("Conv3d", (4, 6, (3, 2, 1)), dict(stride=(2, 1, 1), padding=(1, 0, 0), dilation=2,
                                       groups=2, bias=False, padding_mode="reflect")),
    ("Conv3d", (4, 6, 3), dict(padding="same", padding_mode="circular")),
    ("ConvTranspose3d", (4, 6, 3), dict(stride=2, output_padding=1, groups=2)),
    ("ConvTranspose3d", (4, 6, (1, 2, 3)), dict(dilation=(1, 1, 2), bias=False)),
    ("MaxPool3d", (2,), {}),
    ("MaxPool3d", ((2, 1, 2),), dict(stride=1, padding=(1, 0, 1), dilation=(1, 2, 1),
                                     return_indices=True, ceil_mode=True)),
    ("AvgPool3d", (2,), {}),
    ("AvgPool3d", ((2, 1, 2),), dict(stride=1, padding=(1, 0, 1), ceil_mode=True,
                                     count_include_pad=False, divisor_override=3)),
    ("AdaptiveAvgPool3d", ((2, None, 3),), {}),
    ("AdaptiveMaxPool3d", (2,), dict(return_indices=True)),
    ("InstanceNorm3d", (4,), {}),
    ("InstanceNorm3d", (4,), dict(affine=True, track_running_stats=True)),
]


@pytest.mark.parametrize("name,args,kw", MODULES, ids=str)
def test_modules_repr_parameters_and_forward_as_torch(name, args, kw):
    torch.manual_seed(0)
    ref = getattr(torch.nn, name)(*args, **kw).double()
    mod = getattr(ng.nn, name)(*args, **kw).double()
    assert repr(mod) == repr(ref)
    state = ref.state_dict()
    assert list(mod.state_dict()) == list(state)
    for k, v in mod.state_dict().items():
        assert tuple(v.shape) == tuple(state[k].shape)
    mod.load_state_dict({k: ng.tensor(v.numpy()) for k, v in state.items()})
    (x,) = _arrays((2, 4, 5, 6, 4))
    _compare(mod, ref, [x], "float64")
    if name == "ConvTranspose3d":  # (forward's output_size picks the output padding)
        size = [12, 13, 10] if kw.get("stride") == 2 else [5, 7, 8]
        _compare(lambda t: mod(t, size), lambda t: ref(t, size), [x], "float64")


def test_conv3d_module_initialisation_is_pytorchs_uniform_bound():
    ng.manual_seed(0)
    m = ng.nn.Conv3d(4, 8, (3, 2, 2), groups=2)
    bound = 1 / (2 * 3 * 2 * 2) ** 0.5  # 1 / sqrt(fan_in), fan_in = C / groups * prod(kernel)
    for p in (m.weight, m.bias):
        assert p.abs().max().item() <= bound
        assert p.abs().max().item() > bound / 2
    assert tuple(m.weight.shape) == (8, 2, 3, 2, 2)
    t = ng.nn.ConvTranspose3d(4, 6, 2, groups=2)
    assert tuple(t.weight.shape) == (4, 3, 2, 2, 2)


# ---------------------------------------------------------------- errors


CONV_ERRORS = [
    ("conv3d", (2, 3, 4, 4), (4, 3, 2, 2, 2), None, {}),
    ("conv3d", (2, 3, 4, 4, 4, 4), (4, 3, 2, 2, 2), None, {}),
    ("conv3d", (2, 3, 2, 2, 2), (4, 3, 3, 3, 3), None, {}),
    ("conv3d", (2, 3, 4, 4, 4), (4, 3, 2, 2, 2), None, {"padding": "foo"}),
    ("conv3d", (2, 3, 4, 4, 4), (4, 3, 2, 2, 2), None, {"padding": (1, 1)}),
    ("conv3d", (2, 3, 4, 4, 4), (4, 3, 2, 2, 2), None, {"stride": 2, "padding": "same"}),
    ("conv3d", (2, 3, 4, 4, 4), (4, 3, 2, 2, 2), None, {"padding": -1}),
    ("conv3d", (2, 3, 4, 4, 4), (4, 3, 2, 2, 2), None, {"groups": 2}),
    ("conv3d", (2, 3, 4, 4, 4), (4, 3, 2, 2), None, {}),
    ("conv3d", (2, 3, 4, 4, 4), (4, 3, 2, 2, 2), (3,), {}),
    ("conv3d", (2, 3, 4, 4, 4), (4, 3, 2, 2, 2), None, {"stride": 0}),
    ("conv3d", (2, 3, 4, 4, 4), (4, 3, 2, 2, 2), None, {"dilation": (1, 0, 1)}),
    ("conv_transpose3d", (2, 3, 4, 4), (3, 4, 2, 2, 2), None, {}),
    ("conv_transpose3d", (2, 3, 4, 4, 4), (3, 4, 2, 2, 2), None, {"output_padding": 2}),
    ("conv_transpose3d", (2, 3, 2, 2, 2), (3, 4, 2, 2, 2), None,
     {"output_padding": (1, 0, 0), "stride": (1, 2, 2)}),
    ("conv_transpose3d", (2, 3, 4, 4, 4), (4, 4, 2, 2, 2), None, {}),
    ("conv_transpose3d", (2, 3, 4, 4, 4), (3, 4, 2, 2, 2), None, {"padding": "same"}),
    ("conv_transpose3d", (2, 3, 4, 4, 4), (3, 4, 2, 2, 2), (3,), {}),
]


@pytest.mark.parametrize("fn,xs,ws,bs,kw", CONV_ERRORS, ids=str)
def test_conv_errors_match_torch(fn, xs, ws, bs, kw):
    args = _arrays(xs, ws) + ([] if bs is None else _arrays(bs))
    with pytest.raises(Exception) as expected:
        getattr(TF, fn)(*[torch.tensor(a, dtype=torch.float32) for a in args], **kw)
    with pytest.raises(type(expected.value)) as got:
        getattr(F, fn)(*[ng.tensor(a, dtype=ng.float32) for a in args], **kw)
    assert str(got.value) == str(expected.value).split("\n")[0]


def test_conv_transpose3d_output_too_small_and_dtype_errors_match_torch():
    # (in float64: PyTorch's float32 path is mkldnn's, with its own words)
    x, w, b = _arrays((2, 3, 1, 2, 3), (3, 4, 1, 1, 1), (4,))
    cases = [(lambda lib, f: f.conv_transpose3d(lib.tensor(x), lib.tensor(w),
                                                padding=(0, 1, 2)), RuntimeError),
             (lambda lib, f: f.conv3d(lib.tensor(x, dtype=lib.float32), lib.tensor(w),
                                      padding=0), RuntimeError),
             (lambda lib, f: f.conv3d(lib.tensor(x), lib.tensor(w[:, :, :1]).transpose(0, 1),
                                      lib.tensor(b, dtype=lib.float32)), RuntimeError)]
    for call, kind in cases:
        with pytest.raises(kind) as expected:
            call(torch, TF)
        with pytest.raises(kind) as got:
            call(ng, F)
        assert str(got.value) == str(expected.value)


POOL_ERRORS = [
    ("max_pool3d", (3, 4, 4), dict(kernel_size=2)),
    ("max_pool3d", (2, 3, 4, 4, 4, 4), dict(kernel_size=2)),
    ("max_pool3d", (2, 3, 4, 4, 4), dict(kernel_size=2, padding=2)),
    ("max_pool3d", (2, 3, 5, 5, 5), dict(kernel_size=3, padding=2, dilation=2)),
    ("max_pool3d", (2, 3, 2, 2, 2), dict(kernel_size=3)),
    ("max_pool3d", (2, 3, 4, 4, 4), dict(kernel_size=0)),
    ("max_pool3d", (2, 3, 4, 4, 4), dict(kernel_size=0, stride=1)),
    ("max_pool3d", (2, 3, 4, 4, 4), dict(kernel_size=2, stride=(2, 0, 2))),
    ("max_pool3d", (2, 3, 4, 4, 4), dict(kernel_size=2, dilation=0)),
    ("max_pool3d", (2, 3, 4, 4, 4), dict(kernel_size=(2, 2))),
    ("max_pool3d", (2, 3, 4, 4, 4), dict(kernel_size=2, stride=(2, 2))),
    ("max_pool3d", (2, 3, 4, 4, 4), dict(kernel_size=2, padding=(1, 1))),
    ("max_pool3d", (2, 3, 4, 4, 4), dict(kernel_size=2, dilation=(1, 1))),
    ("max_pool3d", (2, 3, 0, 4, 4), dict(kernel_size=2)),
    ("max_pool3d", (2, 3, 4, 4, 4), dict(kernel_size=2, padding=-1)),
    ("avg_pool3d", (3, 4, 4), dict(kernel_size=2)),
    ("avg_pool3d", (2, 3, 4, 4, 4), dict(kernel_size=2, padding=2)),
    ("avg_pool3d", (2, 3, 2, 2, 2), dict(kernel_size=3)),
    ("avg_pool3d", (2, 3, 2, 3, 3), dict(kernel_size=3, padding=1)),
    ("avg_pool3d", (2, 3, 4, 4, 4), dict(kernel_size=0)),
    ("avg_pool3d", (2, 3, 4, 4, 4), dict(kernel_size=2, divisor_override=0)),
    ("avg_pool3d", (3, 4, 4), dict(kernel_size=2, divisor_override=0)),
    ("avg_pool3d", (2, 3, 4, 4, 4), dict(kernel_size=(2, 2), divisor_override=0)),
    ("avg_pool3d", (2, 3, 4, 4, 4), dict(kernel_size=2, stride=(2, 2))),
    ("avg_pool3d", (2, 3, 4, 4, 4), dict(kernel_size=2, padding=(1, 1))),
    ("avg_pool3d", (2, 3, 0, 4, 4), dict(kernel_size=2)),
    ("adaptive_avg_pool3d", (4, 4), dict(output_size=2)),
    ("adaptive_avg_pool3d", (4, 4, 4), dict(output_size=(2, 2, 2))),
    ("adaptive_avg_pool3d", (2, 3, 4, 4, 4, 4), dict(output_size=2)),
    ("adaptive_avg_pool3d", (2, 3, 4, 4, 4), dict(output_size=(2, 2))),
    ("adaptive_avg_pool3d", (2, 3, 4, 4, 4), dict(output_size=(2, -1, 3))),
    ("adaptive_avg_pool3d", (2, 3, 0, 4, 4), dict(output_size=-1)),
    ("adaptive_avg_pool3d", (2, 0, 3, 4, 4), dict(output_size=2)),
    ("adaptive_max_pool3d", (4, 4), dict(output_size=2)),
    ("adaptive_max_pool3d", (2, 3, 4, 4, 4), dict(output_size=(2, 2))),
    ("adaptive_max_pool3d", (2, 3, 4, 4, 4), dict(output_size=(2, -1, 3))),
    ("adaptive_max_pool3d", (2, 3, 0, 4, 4), dict(output_size=-1)),
    ("adaptive_max_pool2d", (4, 4), dict(output_size=(2, 2))),
    ("avg_pool2d", (1, 8, 8), dict(kernel_size=(2, 2, 2), divisor_override=0)),
]


@pytest.mark.parametrize("name,shape,kw", POOL_ERRORS, ids=str)
def test_pool_errors_match_torch(name, shape, kw):
    (x,) = _arrays(shape)
    with pytest.raises(Exception) as expected:
        getattr(TF, name)(torch.tensor(x), **kw)
    with pytest.raises(type(expected.value)) as got:
        getattr(F, name)(ng.tensor(x), **kw)
    assert str(got.value) == str(expected.value).split("\n")[0]


def test_integer_inputs_are_refused():
    # (PyTorch pools integers on the CPU; numbagrad's kernels are floating point only)
    x = ng.ones(1, 2, 3, 3, 3, dtype=ng.int64)
    for f, args in ((F.max_pool3d, (2,)), (F.avg_pool3d, (2,)), (F.adaptive_avg_pool3d, (2,)),
                    (F.adaptive_max_pool3d, (2,)),
                    (F.conv3d, (ng.ones(1, 2, 1, 1, 1, dtype=ng.int64),))):
        with pytest.raises(NotImplementedError, match="floating point tensors only"):
            f(x, *args)


def test_module_argument_errors_match_torch():
    for make in (lambda lib: lib.nn.Conv3d(4, 6, 3, groups=3),
                 lambda lib: lib.nn.Conv3d(4, 6, 3, stride=2, padding="same"),
                 lambda lib: lib.nn.ConvTranspose3d(4, 6, 3, padding_mode="reflect"),
                 lambda lib: lib.nn.BatchNorm3d(2)(lib.ones(2, 2, 2, 2)),
                 lambda lib: lib.nn.InstanceNorm3d(2)(lib.ones(2, 2, 2)),
                 lambda lib: lib.nn.InstanceNorm3d(2, affine=True)(lib.ones(3, 2, 2, 2)),
                 lambda lib: lib.nn.ConvTranspose3d(2, 2, 2, stride=2)(lib.ones(1, 2, 2, 2, 2),
                                                                     [9, 9]),
                 lambda lib: lib.nn.ConvTranspose3d(2, 2, 2, stride=2)(lib.ones(2, 2, 2, 2),
                                                                     [9, 9, 9])):
        with pytest.raises(Exception) as expected:
            make(torch)
        with pytest.raises(type(expected.value)) as got:
            make(ng)
        assert str(got.value) == str(expected.value).replace("torch.Size", "numbagrad.Size")


# ---------------------------------------------------------------- names and kernels


def test_public_names_as_torch():
    for name in ("conv3d", "conv_transpose3d", "max_pool3d"):
        # (numbagrad.X wraps nn.functional.X with PyTorch's out= keyword)
        assert getattr(ng, name).__wrapped__ is getattr(F, name)
    for name in ("avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d"):
        assert hasattr(TF, name) and hasattr(F, name)
        assert not hasattr(torch, name) and not hasattr(ng, name)


def test_3d_ops_run_the_2d_ones_kernels():
    # a volume and a plane share each compiled kernel: nothing new compiles for 3-d
    from numbagrad.backend import cpu

    x, w = _arrays((1, 2, 4, 5), (3, 2, 2, 2))
    for f in (lambda v: F.conv2d(v, ng.tensor(w)), lambda v: F.max_pool2d(v, 2),
              lambda v: F.avg_pool2d(v, 2), lambda v: F.adaptive_avg_pool2d(v, 2)):
        t = ng.tensor(x, requires_grad=True)
        f(t).sum().backward()
    n = len(cpu._row_kernels)
    x3, w3 = _arrays((1, 2, 3, 4, 5), (3, 2, 2, 2, 2))
    for f in (lambda v: F.conv3d(v, ng.tensor(w3)), lambda v: F.max_pool3d(v, 2),
              lambda v: F.avg_pool3d(v, 2), lambda v: F.adaptive_avg_pool3d(v, 2)):
        t = ng.tensor(x3, requires_grad=True)
        f(t).sum().backward()
    assert len(cpu._row_kernels) == n


# ---------------------------------------------------------------- CUDA (simulator in CI)


@on_cuda
def test_cuda_conv3d_and_pools_match_torch():
    x, w, b = _arrays((1, 4, 3, 4, 3), (4, 2, 2, 3, 2), (4,))
    kw = dict(stride=(1, 2, 1), padding=(1, 0, 1), dilation=(1, 1, 2), groups=2)
    _compare(lambda x, w, b: F.conv3d(x, w, b, **kw), lambda x, w, b: TF.conv3d(x, w, b, **kw),
             [x, w, b], "float64", device="cuda", layout=lambda t: t.transpose(-1, -2))
    kt = dict(stride=(2, 1, 1), padding=(0, 1, 0), output_padding=(1, 0, 0), groups=2)
    _compare(lambda x, w, b: F.conv_transpose3d(x, w, b, **kt),
             lambda x, w, b: TF.conv_transpose3d(x, w, b, **kt), [x, w, b[:4]], "float32",
             device="cuda")
    for name, kw in POOL3D[1:2] + POOL3D[3:4] + POOL3D[6:8] + POOL3D[9:11]:
        _compare(lambda x: getattr(F, name)(x, **kw), lambda x: getattr(TF, name)(x, **kw),
                 [x[0]], "float32", device="cuda")
