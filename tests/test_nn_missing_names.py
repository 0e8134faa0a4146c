"""The ``torch.nn`` names training scripts use that came last, against PyTorch: ``Dropout3d``,
``AlphaDropout`` and ``FeatureAlphaDropout``; the deprecated ``upsample`` functions; the
``*_with_indices`` poolings; max unpooling; power-average (LP) pooling; ``NLLLoss2d``;
``MultiLabelMarginLoss``; and ``DataParallel`` as PyTorch's CPU build has it."""

import math
import warnings

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)


def _name(t):
    return t.grad_fn.name().split("::")[-1]


def _raises(error, message, call):
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == message


def _side_by_side(fn, *arrays):
    """``fn(lib, *tensors)`` on numbagrad and on PyTorch, from the same float32 arrays: its
    output's values and the inputs' gradients for an uneven incoming gradient."""
    got = []
    for lib in (ng, torch):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = fn(lib, *xs)
        weights = lib.arange(out.numel(), dtype=out.dtype).reshape(out.shape) % 3 + 1
        grads = lib.autograd.grad(out, xs, weights)
        got.append((out.detach().numpy(), [g.numpy() for g in grads]))
    (out, grads), (want, want_grads) = got
    assert out.shape == want.shape
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    for g, w in zip(grads, want_grads, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- dropout


DROPOUT3D_WARNING = (
    "dropout3d: Received a {}-D input to dropout3d, which is deprecated and will result in an "
    "error in a future release. To retain the behavior and silence this warning, please use "
    "dropout instead. Note that dropout3d exists to provide channel-wise dropout on inputs "
    "with 3 spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 4D "
    "or 5D inputs).")


@pytest.mark.parametrize("shape", [(3, 6, 2, 2, 3), (6, 2, 2, 3)])
def test_dropout3d_zeroes_whole_channels(lib, shape):
    lib.manual_seed(0)
    x = lib.ones(*shape, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = lib.nn.functional.dropout3d(x, 0.5)
    channels = y.detach().reshape(-1, 12)
    # each channel is all dropped or all kept and scaled by 1 / (1 - p)
    assert ((channels == 0).all(1) | (channels == 2).all(1)).all()
    assert 0 < int((channels[:, 0] == 0).sum()) < channels.shape[0]
    (grad,) = lib.autograd.grad(y.sum(), x)
    assert grad.tolist() == y.tolist()


@pytest.mark.parametrize("shape", [(4,), (3, 8), (2, 3, 8), (1, 2, 1, 1, 1, 3)])
def test_dropout3d_warns_for_other_ranks_and_drops_along_dim_0(lib, shape):
    lib.manual_seed(0)
    message = DROPOUT3D_WARNING.format(len(shape)).replace("(", r"\(").replace(")", r"\)")
    with pytest.warns(UserWarning, match=f"^{message}$"):
        y = lib.nn.functional.dropout3d(lib.ones(*shape), 0.5)
    assert tuple(y.shape) == shape
    if len(shape) > 1:  # (dim 0 is the channels: a 1-d input drops single elements)
        rows = y.reshape(shape[0], -1)
        assert ((rows == 0).all(1) | (rows == 2).all(1)).all()


def test_dropout3d_errors_and_eval(lib):
    F = lib.nn.functional
    _raises(ValueError, "dropout probability has to be between 0 and 1, but got 1.5",
            lambda: F.dropout3d(lib.ones(2, 2, 2, 2), 1.5))
    with pytest.warns(UserWarning):
        _raises(RuntimeError, "Feature dropout requires at least 2 dimensions in the input",
                lambda: F.dropout3d(lib.tensor(1.0), 0.5))
    x = lib.ones(2, 3, 1, 1, 2, requires_grad=True)
    assert F.dropout3d(x, 0.5, training=False) is x
    # an unbatched input goes through a batch of one: a view even in eval mode
    x = lib.ones(3, 1, 1, 2, requires_grad=True)
    y = F.dropout3d(x, 0.5, training=False)
    assert y is not x and y.tolist() == x.tolist() and _name(y) == "SqueezeBackward1"
    assert F.dropout3d(x, 1.0).tolist() == [[[[0.0, 0.0]]]] * 3


def test_dropout3d_inplace(lib):
    lib.manual_seed(0)
    x = lib.ones(4, 1, 1, 2)
    y = lib.nn.functional.dropout3d(x, 0.5, inplace=True)
    assert y is x and tuple(x.shape) == (4, 1, 1, 2)
    assert sorted({v for v in x.flatten().tolist()}) == [0.0, 2.0]


def test_dropout_module_reprs_and_checks(lib):
    nn = lib.nn
    assert repr(nn.Dropout3d()) == "Dropout3d(p=0.5, inplace=False)"
    assert repr(nn.AlphaDropout(0.2)) == "AlphaDropout(p=0.2, inplace=False)"
    assert repr(nn.FeatureAlphaDropout(inplace=True)) == "FeatureAlphaDropout(p=0.5, inplace=True)"
    for cls in (nn.Dropout3d, nn.AlphaDropout, nn.FeatureAlphaDropout):
        _raises(ValueError, "dropout probability has to be between 0 and 1, but got 2",
                lambda: cls(2))


def test_dropout3d_module(lib):
    lib.manual_seed(0)
    m = lib.nn.Dropout3d(0.5)
    x = lib.ones(2, 4, 1, 2, 2)
    channels = m(x).reshape(8, 4)
    assert ((channels == 0).all(1) | (channels == 2).all(1)).all()
    m.eval()
    assert m(x) is x


def test_alpha_dropout_modules(lib):
    lib.manual_seed(0)
    # a dropped element becomes a * -alpha + b, a kept one x * a + b (p = 0.5, x = 1)
    dropped, kept = -0.7792, 1.6656
    y = lib.nn.AlphaDropout(0.5)(lib.ones(4, 6))
    assert sorted({round(v, 4) for v in y.flatten().tolist()}) == [dropped, kept]
    y = lib.nn.FeatureAlphaDropout(0.5)(lib.ones(4, 6, 3))
    assert sorted({round(v, 4) for v in y.flatten().tolist()}) == [dropped, kept]
    assert (y == y[:, :, :1]).all()  # (whole channels)
    # ``inplace`` is not passed on (as PyTorch): the input is left alone
    x = lib.ones(4)
    assert lib.nn.AlphaDropout(0.5, inplace=True)(x) is not x and x.tolist() == [1.0] * 4
    for m in (lib.nn.AlphaDropout(0.5), lib.nn.FeatureAlphaDropout(0.5)):
        m.eval()
        assert m(x) is x


# ---------------------------------------------------------------- upsample


@pytest.mark.parametrize("name, kwargs, want", [
    ("upsample", {"scale_factor": 2}, [[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 3, 3], [2, 2, 3, 3]]),
    ("upsample", {"size": 3, "mode": "bilinear", "align_corners": True},
     [[0, 0.5, 1], [1, 1.5, 2], [2, 2.5, 3]]),
    ("upsample_nearest", {"size": (2, 3)}, [[0, 0, 1], [2, 2, 3]]),
    ("upsample_bilinear", {"size": 3}, [[0, 0.5, 1], [1, 1.5, 2], [2, 2.5, 3]]),
    ("upsample_bilinear", {"scale_factor": 1.5}, [[0, 0.5, 1], [1, 1.5, 2], [2, 2.5, 3]]),
])
def test_upsample_functions_are_interpolate_with_a_warning(lib, name, kwargs, want):
    x = lib.arange(4.0).reshape(1, 1, 2, 2).requires_grad_()
    with pytest.warns(UserWarning, match=rf"^`nn.functional.{name}` is deprecated. Use "
                                         r"`nn.functional.interpolate` instead.$") as record:
        y = getattr(lib.nn.functional, name)(x, **kwargs)
    assert record[0].filename == __file__  # (the warning points at the caller)
    assert y[0, 0].tolist() == want
    (grad,) = lib.autograd.grad(y.sum(), x)
    assert grad.sum().item() == y.numel()


def test_upsample_default_mode_arguments(lib):
    x = lib.arange(6.0).reshape(1, 1, 2, 3)
    with pytest.warns(UserWarning):
        y = lib.nn.functional.upsample(x, size=(3, 5), mode="bilinear")
    assert y.tolist() == lib.nn.functional.interpolate(x, size=(3, 5), mode="bilinear").tolist()
    with pytest.warns(UserWarning):
        _raises(ValueError, "align_corners option can only be set with the interpolating "
                "modes: linear | bilinear | bicubic | trilinear",
                lambda: lib.nn.functional.upsample(x, scale_factor=2, align_corners=True))


# ---------------------------------------------------------------- pooling with indices


def test_pooling_with_indices(lib):
    F = lib.nn.functional
    x1 = lib.tensor([[[1.0, 5.0, 2.0, 0.0, 3.0, 4.0, -1.0]]])
    x2 = lib.tensor([[[1.0, 5.0, 2.0, 0.0], [3.0, 4.0, -1.0, 6.0], [7.0, 0.0, 2.0, 2.0]]])
    x3 = lib.arange(8.0).flip(0).reshape(1, 2, 2, 2)
    for got, values, indices in (
            (F.max_pool1d_with_indices(x1, 3, 2), [[[5, 3, 4]]], [[[1, 4, 5]]]),
            (F.adaptive_max_pool1d_with_indices(x1, 3), [[[5, 3, 4]]], [[[1, 4, 5]]]),
            (F.max_pool2d_with_indices(x2, 2, ceil_mode=True), [[[5, 6], [7, 2]]],
             [[[1, 7], [8, 10]]]),
            (F.adaptive_max_pool2d_with_indices(x2, (2, 1)), [[[6], [7]]], [[[7], [8]]]),
            (F.max_pool3d_with_indices(x3, (1, 2, 2)), [[[[7]], [[3]]]], [[[[0]], [[4]]]]),
            (F.adaptive_max_pool3d_with_indices(x3, (2, 1, 1)), [[[[7]], [[3]]]],
             [[[[0]], [[4]]]])):
        assert got[0].tolist() == values and got[1].tolist() == indices
        assert got[1].dtype == lib.int64
    # (``return_indices`` says nothing to them: always the pair)
    values, indices = F.max_pool1d_with_indices(x1, 3, return_indices=False)
    assert values.tolist() == [[[5, 4]]] and indices.tolist() == [[[1, 5]]]
    values, indices = F.adaptive_max_pool2d_with_indices(x2, 1, return_indices=False)
    assert values.tolist() == [[[7]]] and indices.tolist() == [[[8]]]


def test_max_pool1d_with_indices_checks_the_rank_in_its_words(lib):
    for shape in ((4,), (1, 1, 1, 4)):
        _raises(RuntimeError, f"Expected 2 to 3 dimensions, but got {len(shape)}-dimensional "
                "tensor for argument #1 'self' (while checking arguments for max_pool1d)",
                lambda: lib.nn.functional.max_pool1d_with_indices(lib.zeros(*shape), 2))
    _raises(RuntimeError, "stride should not be zero",
            lambda: lib.nn.functional.max_pool1d(lib.zeros(1, 1, 4), 2, 0, return_indices=True))


# ---------------------------------------------------------------- max unpooling


def test_max_unpool1d_values_gradient_and_output_size(lib):
    F = lib.nn.functional
    x = lib.tensor([[[1.0, 5.0, 2.0, 0.0, 3.0, 4.0, -1.0]]], requires_grad=True)
    out, indices = F.max_pool1d(x, 2, return_indices=True)
    u = F.max_unpool1d(out, indices, 2)
    assert u.tolist() == [[[0, 5, 2, 0, 0, 4]]]
    (grad,) = lib.autograd.grad(u, x, lib.arange(1.0, 7.0).reshape(1, 1, 6))
    assert grad.tolist() == [[[0, 2, 3, 0, 0, 6, 0]]]
    assert F.max_unpool1d(out, indices, 2, output_size=[7]).tolist() == [[[0, 5, 2, 0, 0, 4, 0]]]
    assert lib.nn.MaxUnpool1d(2)(out, indices, output_size=[1, 1, 7]).shape == (1, 1, 7)


def test_max_unpool2d_values_gradient_and_output_size(lib):
    x = lib.tensor([[[1.0, 5.0, 2.0, 0.0], [3.0, 4.0, -1.0, 6.0], [7.0, 0.0, 2.0, 2.0],
                     [0.0, 1.0, 8.0, 1.0]]], requires_grad=True)
    out, indices = lib.nn.functional.max_pool2d(x, 2, return_indices=True)
    u = lib.nn.MaxUnpool2d(2)(out, indices)
    assert u.tolist() == [[[0, 5, 0, 0], [0, 0, 0, 6], [7, 0, 0, 0], [0, 0, 8, 0]]]
    (grad,) = lib.autograd.grad(u, x, lib.arange(16.0).reshape(1, 4, 4))
    assert grad.tolist() == [[[0, 1, 0, 0], [0, 0, 0, 7], [8, 0, 0, 0], [0, 0, 14, 0]]]
    # (the indices count in the output's own rows: a wider output moves the values)
    u = lib.nn.MaxUnpool2d(2)(out, indices, output_size=[5, 5])
    assert u.tolist() == [[[0, 5, 0, 0, 0], [0, 0, 6, 7, 0], [0, 0, 0, 0, 8], [0] * 5, [0] * 5]]


def test_max_unpool3d_stride_and_unbatched(lib):
    x = lib.arange(8.0).reshape(1, 1, 2, 2, 2)
    out, indices = lib.nn.functional.max_pool3d(x, 2, return_indices=True)
    u = lib.nn.functional.max_unpool3d(out, indices, 2, stride=1)
    assert u.tolist() == [[[[[0, 0], [0, 0]], [[0, 0], [0, 7]]]]]
    u = lib.nn.MaxUnpool3d(2)(out[0], indices[0])
    assert tuple(u.shape) == (1, 2, 2, 2) and u.sum().item() == 7


@pytest.mark.parametrize("n, pool, unpool", [
    (1, {"kernel_size": 3, "stride": 2, "padding": 1}, {"kernel_size": 3, "stride": 2,
                                                        "padding": 1, "output_size": [9]}),
    (2, {"kernel_size": 2}, {"kernel_size": 2}),
    (2, {"kernel_size": 3, "stride": 2, "padding": 1}, {"kernel_size": 3, "stride": 2,
                                                        "padding": 1, "output_size": (7, 6)}),
    (3, {"kernel_size": 2}, {"kernel_size": 2, "output_size": (5, 4, 7)}),
])
def test_max_unpool_matches_pytorch(n, pool, unpool):
    shape = {1: (2, 3, 9), 2: (2, 3, 7, 6), 3: (2, 2, 5, 4, 7)}[n]

    def fn(lib, x):
        F = lib.nn.functional
        out, indices = getattr(F, f"max_pool{n}d")(x, return_indices=True, **pool)
        return getattr(F, f"max_unpool{n}d")(out * 2, indices, **unpool)

    _side_by_side(fn, rng.standard_normal(shape).astype(np.float32))


def test_max_unpool_module_reprs(lib):
    nn = lib.nn
    assert repr(nn.MaxUnpool1d(2)) == "MaxUnpool1d(kernel_size=(2,), stride=(2,), padding=(0,))"
    assert repr(nn.MaxUnpool2d(2, stride=1, padding=1)) == (
        "MaxUnpool2d(kernel_size=(2, 2), stride=(1, 1), padding=(1, 1))")
    assert repr(nn.MaxUnpool3d((2, 1, 2))) == (
        "MaxUnpool3d(kernel_size=(2, 1, 2), stride=(2, 1, 2), padding=(0, 0, 0))")


def _pooled(lib, n=2):
    x = lib.arange(16.0).reshape((1, 1, 4, 4) if n == 2 else (1, 1, 2, 2, 4))
    return getattr(lib.nn.functional, f"max_pool{n}d")(x, 2, return_indices=True)


@pytest.mark.parametrize("call, error, message", [
    (lambda F, o, i: F.max_unpool2d(o, i, 2, output_size=(9, 9)), ValueError,
     'invalid output_size "(9, 9)" (dim 0 must be between 2 and 6)'),
    (lambda F, o, i: F.max_unpool2d(o, i, 2, output_size=[4]), ValueError,
     "output_size should be a sequence containing 2 or 4 elements, but it has a length of '1'"),
    (lambda F, o, i: F.max_unpool2d(o, i, 2, stride=1, padding=3), ValueError,
     "max_unpooling: output_size must contain non-negative spatial dimensions, but got "
     "output_size[0]=-3"),
    (lambda F, o, i: F.max_unpool2d(o, i.int(), 2), RuntimeError,
     "elements in indices should be type int64 but got: Int"),
    (lambda F, o, i: F.max_unpool2d(o, i[..., :1], 2), RuntimeError,
     "Expected shape of indices to be same as that of the input tensor ([1, 1, 2, 2]) but got "
     "indices tensor with shape: [1, 1, 2, 1]"),
    (lambda F, o, i: F.max_unpool2d(o[0, 0], i[0, 0], 2), RuntimeError,
     "Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with 2 "
     "dimensions."),
    (lambda F, o, i: F.max_unpool2d(o.long(), i, 2), NotImplementedError,
     "\"max_unpool2d\" not implemented for 'Long'"),
    (lambda F, o, i: F.max_unpool2d(o, i * 0 + (i == 15) * 20, 2), RuntimeError,
     "Found an invalid max index: 20 (output volumes are of size 4x4)"),
    (lambda F, o, i: F.max_unpool2d(o[:, :0], i[:, :0], 2), RuntimeError,
     "max_unpooling2d_forward_out_cpu(): Expected input to have non-zero size for non-batch "
     "dimensions, but got [1, 0, 2, 2] with dimension 1 being empty."),
    # (one bad index each: PyTorch's planes run in parallel, so which of several it names
    # varies)
    (lambda F, o, i: F.max_unpool1d(o[0], (i[0] == 15) * 5, 2), RuntimeError,
     "Found an invalid max index: 5 (output volumes are of size 4x1)"),
    (lambda F, o, i: F.max_unpool3d(o, i + (i == 15) * 30, 2), RuntimeError,
     "Found an invalid max index: 45 (output volumes are of size 2x4x4)"),
    (lambda F, o, i: F.max_unpool3d(o[0], i[0], 2), RuntimeError,
     "Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with 3 "
     "dimensions."),
    (lambda F, o, i: F.max_unpool3d(o[None], i[None].int(), 2), RuntimeError,
     "elements in indices should be type int64"),
    (lambda F, o, i: F.max_unpool3d(o[None], i[None], (2, 2)), RuntimeError,
     "There should be exactly three elements (depth, height, width) in output_size, but got 2 "
     "elements."),
    (lambda F, o, i: F.max_unpool3d(o[None], i[None], 2, stride=0), RuntimeError,
     "strides should be greater than zero, but got stride: [0, 0, 0]"),
])
def test_max_unpool_errors(lib, call, error, message):
    out, indices = _pooled(lib)
    _raises(error, message, lambda: call(lib.nn.functional, out, indices))


def test_max_unpool_empty_batch(lib):
    x = lib.zeros(0, 2, 2, 2, requires_grad=True)
    u = lib.nn.functional.max_unpool2d(x, lib.zeros(0, 2, 2, 2, dtype=lib.int64), 2)
    assert tuple(u.shape) == (0, 2, 4, 4)


# ---------------------------------------------------------------- power-average pooling


@pytest.mark.parametrize("norm_type, values, grad", [
    (2.0, [2.2361, 3.0], [0.4472, -0.8944, 1.0, 0.0, 0.0]),
    # (PyTorch's sign * relu(abs(mean)) keeps a negative sum for odd powers)
    (1.0, [-1.0, 3.0], [1.0, 1.0, 1.0, 1.0, 0.0]),
    (math.inf, [2.0, 3.0], [0.0, -1.0, 1.0, 0.0, 0.0]),
    (-math.inf, [1.0, 0.0], [1.0, 0.0, 0.0, 0.0, 0.0]),
])
def test_lp_pool1d_values_and_gradients(lib, norm_type, values, grad):
    x = lib.tensor([[[1.0, -2.0, 3.0, 0.0, 4.0]]], requires_grad=True)
    y = lib.nn.functional.lp_pool1d(x, norm_type, 2)
    assert [round(v, 4) for v in y.flatten().tolist()] == values
    (g,) = lib.autograd.grad(y.sum(), x)
    assert [round(v, 4) + 0.0 for v in g.flatten().tolist()] == grad


def test_lp_pool_ceil_mode_odd_power_and_zero_windows(lib):
    F = lib.nn.functional
    x = lib.tensor([[[1.0, -2.0, 3.0, 0.0, 4.0]]], requires_grad=True)
    # (the window cut short at the edge is an average of one, times the full kernel size)
    y = F.lp_pool1d(x, 2, 2, ceil_mode=True)
    assert [round(v, 4) for v in y.flatten().tolist()] == [2.2361, 3.0, 5.6569]
    y = F.lp_pool1d(x, 3, 2)
    assert math.isnan(y[0, 0, 0].item()) and y[0, 0, 1].item() == pytest.approx(3.0)
    z = lib.zeros(1, 2, 2, requires_grad=True)
    y = F.lp_pool2d(z, 2, 2)
    (g,) = lib.autograd.grad(y.sum(), z)
    assert y.tolist() == [[[0.0]]] and g.tolist() == [[[0.0, 0.0], [0.0, 0.0]]]


@pytest.mark.parametrize("n, norm_type, kwargs", [
    (1, 2, {"kernel_size": 3}), (1, 1.5, {"kernel_size": 3, "stride": 2, "ceil_mode": True}),
    (2, 2, {"kernel_size": (3, 2), "ceil_mode": True}), (2, 3, {"kernel_size": 2, "stride": 1}),
    (2, math.inf, {"kernel_size": 2}), (3, 2, {"kernel_size": 2, "stride": (1, 2, 2)}),
    (3, 1.5, {"kernel_size": (2, 1, 3), "ceil_mode": True}),
])
def test_lp_pool_matches_pytorch(n, norm_type, kwargs):
    shape = {1: (2, 3, 7), 2: (2, 3, 7, 6), 3: (2, 2, 5, 4, 6)}[n]
    # (positive inputs: a fractional power of a negative one is NaN in both)
    data = np.abs(rng.standard_normal(shape)).astype(np.float32) + 0.1
    _side_by_side(lambda lib, x: getattr(lib.nn.functional, f"lp_pool{n}d")(
        x, norm_type, **kwargs), data)
    modules = {1: "LPPool1d", 2: "LPPool2d", 3: "LPPool3d"}
    _side_by_side(lambda lib, x: getattr(lib.nn, modules[n])(norm_type, **kwargs)(x), data)


def test_lp_pool_modules_and_errors(lib):
    nn = lib.nn
    assert repr(nn.LPPool1d(2, 3)) == (
        "LPPool1d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)")
    assert repr(nn.LPPool2d(1.5, (2, 3), stride=1, ceil_mode=True)) == (
        "LPPool2d(norm_type=1.5, kernel_size=(2, 3), stride=1, ceil_mode=True)")
    assert repr(nn.LPPool3d(2, 2)) == (
        "LPPool3d(norm_type=2, kernel_size=2, stride=None, ceil_mode=False)")
    x = lib.tensor([[[[1.0, -2.0, 3.0], [0.0, 4.0, 1.0]]]])
    assert [round(v, 4) for v in nn.LPPool2d(2, 2, stride=1)(x).flatten().tolist()] == [
        4.5826, 5.4772]
    # (lp_pool1d multiplies by its kernel size as given)
    _raises(TypeError, "mul(): argument 'other' (position 1) must be Tensor, not tuple",
            lambda: lib.nn.functional.lp_pool1d(lib.ones(1, 1, 4), 2, (2,)))


# ---------------------------------------------------------------- losses


NLLLOSS2D_WARNING = (
    "^`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in replacement "
    r"and see https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.$")


def test_nllloss2d_is_nllloss_with_a_future_warning(lib):
    with pytest.warns(FutureWarning, match=NLLLOSS2D_WARNING) as record:
        loss = lib.nn.NLLLoss2d(ignore_index=1, reduction="sum")
    assert record[0].filename == __file__
    assert isinstance(loss, lib.nn.NLLLoss) and repr(loss) == "NLLLoss2d()"
    assert (loss.ignore_index, loss.reduction, loss.weight) == (1, "sum", None)
    logp = lib.tensor([[[[-0.5, -1.0]], [[-2.0, -0.25]]]])  # (N, C, H, W) = (1, 2, 1, 2)
    assert loss(logp, lib.tensor([[[0, 1]]])).item() == 0.5


MLML_INPUT = [[0.1, 0.2, 0.4, 0.8], [0.3, -0.2, 0.5, 0.1]]
MLML_TARGET = [[3, 0, -1, 1], [1, 2, 3, -1]]


@pytest.mark.parametrize("reduction, value, grad", [
    ("mean", 0.8625, [[-0.25, 0.25, 0.25, -0.25], [0.375, -0.125, -0.125, -0.125]]),
    ("sum", 1.725, [[-0.5, 0.5, 0.5, -0.5], [0.75, -0.25, -0.25, -0.25]]),
    ("none", [0.85, 0.875], [[-0.5, 0.5, 0.5, -0.5], [0.75, -0.25, -0.25, -0.25]]),
])
def test_multilabel_margin_loss(lib, reduction, value, grad):
    x = lib.tensor(MLML_INPUT, requires_grad=True)
    for loss in (lib.nn.functional.multilabel_margin_loss(x, lib.tensor(MLML_TARGET),
                                                          reduction=reduction),
                 lib.nn.MultiLabelMarginLoss(reduction=reduction)(x, lib.tensor(MLML_TARGET))):
        np.testing.assert_allclose(loss.tolist(), value, rtol=1e-6)
        (g,) = lib.autograd.grad(loss.sum(), x)
        np.testing.assert_allclose(g.tolist(), grad, rtol=1e-6)


def test_multilabel_margin_loss_targets(lib):
    F = lib.nn.functional
    x = lib.tensor([[0.1, 1.1, 0.4, 0.8]], requires_grad=True)
    # only the entries before the first -1 are targets: here class 0 alone
    loss = F.multilabel_margin_loss(x, lib.tensor([[0, -1, -1, 1]]))
    (g,) = lib.autograd.grad(loss, x)
    assert loss.item() == pytest.approx(1.25)
    np.testing.assert_allclose(g.tolist(), [[-0.75, 0.25, 0.25, 0.25]])
    # a repeated target counts twice; a row without targets costs nothing
    loss = F.multilabel_margin_loss(x.detach(), lib.tensor([[2, 2, -1, 0]]), reduction="sum")
    assert loss.item() == pytest.approx(0.5 * (0.7 + 1.7 + 1.4))
    assert F.multilabel_margin_loss(x, lib.tensor([[-1, 0, 0, 0]])).item() == 0.0
    # a vector is one sample (a 0-d loss), a 0-d input one class
    loss = F.multilabel_margin_loss(x[0], lib.tensor([0, -1, 2, 2]), reduction="none")
    assert loss.shape == () and loss.item() == pytest.approx(1.25)
    assert F.multilabel_margin_loss(lib.tensor(0.5), lib.tensor(0)).item() == 0.0
    # the gradient is zero where a margin is exactly met
    x = lib.tensor([[0.0, 1.0, 0.0]], requires_grad=True)
    (g,) = lib.autograd.grad(F.multilabel_margin_loss(x, lib.tensor([[1, -1, 0]])), x)
    assert g.tolist() == [[0.0, 0.0, 0.0]]


def test_multilabel_margin_loss_matches_pytorch():
    x = rng.standard_normal((6, 5)).astype(np.float32)
    target = rng.integers(-1, 5, size=(6, 5))
    _side_by_side(lambda lib, t: lib.nn.functional.multilabel_margin_loss(
        t, lib.tensor(target), reduction="none"), x)


@pytest.mark.parametrize("input, target, error, message", [
    ((1, 2, 3), (2, 3), RuntimeError,
     "Expected non-empty vector or matrix with optional 0-dim batch size, but got: [1, 2, 3]"),
    ((2, 0), (2, 0), RuntimeError,
     "Expected non-empty vector or matrix with optional 0-dim batch size, but got: [2, 0]"),
    ((2, 3), (2, 2), RuntimeError, "inconsistent target size: [2, 2] for input of size: [2, 3]"),
    ((3,), (2, 3), RuntimeError, "inconsistent target size: [2, 3] for input of size: [3]"),
    ((2, 3), (3,), RuntimeError, "inconsistent target size: [3] for input of size: [2, 3]"),
    ((), (1, 1), RuntimeError, "inconsistent target size: [1, 1] for input of size: []"),
])
def test_multilabel_margin_loss_shape_errors(lib, input, target, error, message):
    _raises(error, message, lambda: lib.nn.functional.multilabel_margin_loss(
        lib.zeros(input), lib.zeros(target, dtype=lib.int64)))


def test_multilabel_margin_loss_value_errors(lib):
    F = lib.nn.functional
    x = lib.zeros(2, 3)
    target = lib.zeros(2, 3, dtype=lib.int64)
    _raises(NotImplementedError,
            "\"multilabel_margin_loss_forward_out_frame\" not implemented for 'Long'",
            lambda: F.multilabel_margin_loss(x.long(), target + 2))
    # (the range is checked before the dtypes)
    _raises(RuntimeError, "argument #2 'target' is out of range",
            lambda: F.multilabel_margin_loss(x.long(), target + 5))
    for bad in (target + 3, target - 2):
        _raises(RuntimeError, "argument #2 'target' is out of range",
                lambda: F.multilabel_margin_loss(x, bad))
    # (the range is checked before the dtype; PyTorch's check reads an int32 target as int64,
    # so its "expected scalar type Long but found Int" for an int32 one in range depends on
    # the memory past it, and is not tested here)
    _raises(RuntimeError, "argument #2 'target' is out of range",
            lambda: F.multilabel_margin_loss(x, (target + 3).int()))
    _raises(ValueError, "bad is not a valid value for reduction",
            lambda: F.multilabel_margin_loss(x, target, reduction="bad"))
    with pytest.warns(UserWarning, match="^size_average and reduce args will be deprecated, "
                                         "please use reduction='sum' instead.$"):
        assert F.multilabel_margin_loss(x, target, size_average=False).item() == 4.0
    assert repr(lib.nn.MultiLabelMarginLoss()) == "MultiLabelMarginLoss()"


# ---------------------------------------------------------------- DataParallel


def test_data_parallel_holds_and_calls_its_module(lib):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lib.manual_seed(0)
        layer = lib.nn.Linear(2, 3)
        dp = lib.nn.DataParallel(layer, device_ids=[0, 1], output_device=0, dim=1)
    assert lib.nn.parallel.DataParallel is lib.nn.DataParallel
    assert dp.module is layer and dp.device_ids == []
    assert repr(dp) == ("DataParallel(\n  (module): Linear(in_features=2, out_features=3, "
                        "bias=True)\n)")
    assert list(dp.state_dict()) == ["module.weight", "module.bias"]
    assert [n for n, _ in dp.named_parameters()] == ["module.weight", "module.bias"]
    _raises(AttributeError, "'DataParallel' object has no attribute 'output_device'",
            lambda: dp.output_device)
    x = lib.ones(4, 2)
    assert dp(x).tolist() == layer(x).tolist()
    assert dp(input=x).tolist() == layer(x).tolist()
    dp.eval()
    assert not layer.training
    dp(x).sum().backward()
    assert layer.weight.grad.tolist() == [[4.0, 4.0]] * 3
