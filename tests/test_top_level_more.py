"""More of PyTorch's top-level names: the in-place functions (``torch.abs_``), the ATen spellings
of nn.functional's layers and losses (``torch.dropout(input, p, train)``, int reductions),
factories (``range``, ``asarray``, windows) and small helpers, against PyTorch."""

import math
import warnings

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")


def _pair(a, dtype="float64", requires_grad=False):
    """The array ``a`` as a numbagrad and a torch tensor."""
    a = np.asarray(a, dtype=dtype)
    return (ng.tensor(a, requires_grad=requires_grad),
            torch.tensor(a, requires_grad=requires_grad))


def _close(got, want, tol=1e-6):
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w, tol)
        return
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(np.asarray(got.tolist(), dtype=np.float64),
                               np.asarray(want.tolist(), dtype=np.float64), rtol=tol, atol=tol)


def _node(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


# ---------------------------------------------------------------- in-place functions

_RNG = np.random.default_rng(0)
_UNIT = _RNG.uniform(0.1, 0.9, (2, 3))
_ABOVE_ONE = _RNG.uniform(1.1, 2.0, (2, 3))
_OTHER = _RNG.uniform(0.5, 1.5, (2, 3))

# case: (input, the extra arguments given the library and dtype, keyword arguments)
INPLACE = {
    **{n: (_UNIT, lambda lib, dt: (), {}) for n in (
        "abs", "acos", "arccos", "arcsin", "arcsinh", "arctan", "arctanh", "asin", "asinh",
        "atan", "atanh", "ceil", "cos", "cosh", "deg2rad", "erf", "erfc", "exp2", "exp", "expm1",
        "fix", "floor", "frac", "i0", "log10", "log1p", "log2", "log", "logit", "neg",
        "negative", "rad2deg", "reciprocal", "round", "rsqrt", "sigmoid", "sin", "sinc", "sinh",
        "sqrt", "square", "tan", "tanh", "trunc", "relu", "nan_to_num", "zero")},
    "acosh": (_ABOVE_ONE, lambda lib, dt: (), {}),
    "arccosh": (_ABOVE_ONE, lambda lib, dt: (), {}),
    "clamp": (_UNIT, lambda lib, dt: (), {"min": 0.3, "max": 0.6}),
    "clip": (_UNIT, lambda lib, dt: (0.3, 0.6), {}),
    "clamp_min": (_UNIT, lambda lib, dt: (0.5,), {}),
    "clamp_max": (_UNIT, lambda lib, dt: (0.5,), {}),
    "logit eps": (_UNIT, lambda lib, dt: (0.2,), {}),
    "round decimals": (_UNIT, lambda lib, dt: (), {"decimals": 1}),
    "xlogy": (_UNIT, lambda lib, dt: (lib.tensor(_OTHER, dtype=dt),), {}),
    # (no negative exponent: PyTorch's gradient computes 2 ** exponent in integers, 0 there)
    "ldexp": (_UNIT, lambda lib, dt: (lib.tensor([[1, 2, 3], [0, 4, 2]]),), {}),
    "addmv": (_UNIT[0], lambda lib, dt: (lib.tensor(_OTHER.T, dtype=dt),
                                         lib.tensor(_UNIT[1, :2], dtype=dt)), {}),
    "fill": (_UNIT, lambda lib, dt: (2.5,), {}),
}


NO_INPLACE_DERIVATIVE = {"acosh_", "arccosh_", "asinh_", "arcsinh_", "atanh_", "arctanh_"}


@pytest.mark.parametrize("case", sorted(INPLACE))
def test_an_inplace_function_writes_its_argument_as_pytorchs(case):
    data, args, kwargs = INPLACE[case]
    name = case.split()[0] + "_"
    for dtype in ("float32", "float64"):
        x, tx = _pair(data, dtype)
        version = x._version
        out = getattr(ng, name)(x, *args(ng, getattr(ng, dtype)), **kwargs)
        want = getattr(torch, name)(tx, *args(torch, getattr(torch, dtype)), **kwargs)
        assert out is x and x._version == version + 1
        _close(x, want, 1e-5 if dtype == "float32" else 1e-12)
    # recorded as the method records it: the in-place node, its gradient
    x, tx = _pair(data, requires_grad=True)
    y, ty = x * 1, tx * 1
    getattr(ng, name)(y, *args(ng, ng.float64), **kwargs)
    getattr(torch, name)(ty, *args(torch, torch.float64), **kwargs)
    z = x * 1
    getattr(z, name)(*args(ng, ng.float64), **kwargs)
    assert _node(y) == _node(z) == _node(ty)
    if name in NO_INPLACE_DERIVATIVE:
        # (PyTorch's in-place acosh_, asinh_, atanh_ have no derivative)
        op = _node(ty)[:-len("Backward1")].lower()
        for out in (y, ty):
            with pytest.raises(NotImplementedError, match=f"the derivative for 'inplace version "
                                                          f"of {op}' is not implemented."):
                out.sum().backward()
        return
    weights = _OTHER if y.ndim == 2 else _OTHER[0]
    (y * ng.tensor(weights)).sum().backward()
    (ty * torch.tensor(weights)).sum().backward()
    _close(x.grad, tx.grad, 1e-10)


@pytest.mark.parametrize("name", ["gcd", "lcm"])
def test_integer_inplace_functions(name):
    a, b = [[12, 18, 7], [0, 5, 9]], [[8, 12, 3], [4, 0, 6]]
    x, tx = ng.tensor(a), torch.tensor(a)
    assert getattr(ng, name + "_")(x, ng.tensor(b)) is x
    assert x.tolist() == getattr(torch, name + "_")(tx, torch.tensor(b)).tolist()


def test_inplace_functions_are_declared_where_pytorch_has_them():
    # PyTorch's set is irregular: abs_ but no absolute_, sin_ but no mul_
    assert hasattr(ng, "abs_") and not hasattr(ng, "absolute_") and not hasattr(ng, "mul_")
    names = [n for n in dir(ng) if n.endswith("_") and not n.startswith("_")]
    assert [n for n in names if not hasattr(torch, n)] == []
    assert ng.Tensor.absolute_.__name__ == "absolute_"


def test_inplace_function_errors_are_pytorchs():
    for lib in (ng, torch):
        with pytest.raises(TypeError, match=r"^abs_\(\): argument 'input' \(position 1\) must "
                                            r"be Tensor, not int$"):
            lib.abs_(3)
        leaf = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being "
                                               "used in an in-place operation."):
            lib.sin_(leaf)


def test_detach_fill_zero_conj_physical_resize_as():
    x = ng.ones(2, 3, requires_grad=True)
    y = x * 2
    assert ng.detach_(y) is y and y.grad_fn is None and not y.requires_grad
    z = ng.zeros(2, 3)
    assert ng.fill_(z, 1.5) is z and z.tolist() == [[1.5] * 3] * 2
    assert ng.zero_(z) is z and z.tolist() == [[0.0] * 3] * 2
    assert ng.conj_physical_(z) is z
    w = ng.zeros(5)
    assert ng.resize_as_(w, z) is w and tuple(w.shape) == (2, 3)
    s = ng.arange(6.0)
    assert ng.as_strided_(s, (2, 2), (1, 2)) is s and s.tolist() == [[0.0, 2.0], [1.0, 3.0]]


def test_fill_out_of_place():
    x, tx = _pair(_UNIT, requires_grad=True)
    v, tv = ng.tensor(2.5, requires_grad=True, dtype=ng.float64), torch.tensor(
        2.5, requires_grad=True, dtype=torch.float64)
    for got, want in ((ng.fill(x, 1.5), torch.fill(tx, 1.5)), (ng.fill(x, v), torch.fill(tx, tv))):
        _close(got, want)
        assert _node(got) == _node(want) and got is not x
        (got * 3).sum().backward()
        (want * 3).sum().backward()
    _close(x.grad, tx.grad)
    _close(v.grad, tv.grad)
    assert ng.fill(ng.ones(2, dtype=ng.int64), 2.7).tolist() == [2, 2]
    for lib in (ng, torch):
        with pytest.raises(RuntimeError, match="fill_ only supports 0-dimension value tensor but "
                                               "got tensor with 1 dimensions."):
            lib.fill(lib.ones(2), lib.ones(2))


def test_an_inplace_function_on_cuda(device):
    x = ng.tensor([0.25, 4.0], device=device)
    assert ng.sqrt_(x) is x and x.tolist() == [0.5, 2.0] and x.device.type == device
    assert ng.clamp_(x, max=1.0).tolist() == [0.5, 1.0]


# ---------------------------------------------------------------- dropout


@pytest.mark.parametrize("name", ["dropout", "feature_dropout", "alpha_dropout",
                                  "feature_alpha_dropout"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dropout_family(name, dtype):
    x, tx = _pair(_RNG.uniform(0.5, 1.5, (8, 6, 5)), dtype, requires_grad=True)
    fn = getattr(ng, name)
    # not training, or p = 0: the input itself
    assert fn(x, 0.5, False) is x and getattr(torch, name)(tx, 0.5, False) is tx
    assert fn(x, 0.0, True) is x
    out, want = fn(x, 0.4, True), getattr(torch, name)(tx, 0.4, True)
    assert _node(out) == _node(want) and out.dtype == x.dtype
    p = 0.4
    values, xs = out.detach().numpy(), x.detach().numpy()
    if name.startswith(("alpha", "feature_alpha")):
        alpha = 1.7580993408473766
        a = 1 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
        kept = np.isclose(values, a * xs + alpha * a * p, rtol=1e-5)
        dropped = np.isclose(values, -alpha * a + alpha * a * p, rtol=1e-5)
        scale = a
    else:
        kept, dropped = np.isclose(values, xs / (1 - p), rtol=1e-5), values == 0
        scale = 1 / (1 - p)
    assert (kept | dropped).all() and kept.any() and dropped.any()
    if name.startswith("feature"):  # (one draw per (sample, channel))
        assert (kept.all(axis=2) | (~kept).all(axis=2)).all()
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, scale, 0.0), rtol=1e-5)
    # p = 1: all zeros (MulBackward0), as PyTorch
    zeroed = fn(x, 1.0, True)
    assert _node(zeroed) == _node(getattr(torch, name)(tx, 1.0, True)) == "MulBackward0"
    assert not zeroed.detach().numpy().any()


@pytest.mark.parametrize("name", ["dropout", "feature_dropout", "alpha_dropout",
                                  "feature_alpha_dropout"])
def test_dropout_family_inplace_and_errors(name):
    x = ng.ones(4, 3, 2) * 1  # (not a leaf)
    version = x._version
    assert getattr(ng, name + "_")(x, 0.5, True) is x and x._version > version
    assert getattr(ng, name + "_")(x, 0.5, False) is x
    for lib in (ng, torch):
        with pytest.raises(RuntimeError, match=r"^dropout probability has to be between 0 and 1, "
                                               r"but got 2$"):
            getattr(lib, name)(lib.ones(3, 2), 2.0, True)
        with pytest.raises(RuntimeError, match=r"but got 1.5$"):
            getattr(lib, name + "_")(lib.ones(3, 2), 1.5, True)
    if name.startswith("feature"):
        for lib in (ng, torch):
            with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 "
                                                   "dimensions in the input"):
                getattr(lib, name)(lib.ones(3), 0.5, True)
            assert getattr(lib, name)(lib.ones(3), 0.5, False).shape == (3,)


def test_functional_alpha_dropouts():
    F, tF = ng.nn.functional, torch.nn.functional
    x = ng.ones(4, 3)
    for fname in ("alpha_dropout", "feature_alpha_dropout"):
        assert getattr(F, fname)(x) is x  # (training=False by default, as PyTorch's)
        for f in (getattr(F, fname), getattr(tF, fname)):
            with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, "
                                                 "but got 1.5"):
                f(ng.ones(2) if f is getattr(F, fname) else torch.ones(2), 1.5, True)
    y = ng.ones(4, 3) * 1
    assert F.alpha_dropout(y, 0.5, True, inplace=True) is y


# ---------------------------------------------------------------- normalization


def _compare_fn(fn_ng, fn_torch, arrays, tol=1e-9, grad=True):
    """``fn`` of each library on the arrays (float64, requiring grad), then the same
    backward: values, nodes and gradients."""
    ng_in = [ng.tensor(a, requires_grad=grad) for a in arrays]
    t_in = [torch.tensor(a, requires_grad=grad) for a in arrays]
    got, want = fn_ng(*ng_in), fn_torch(*t_in)
    _close(got, want, tol)
    outs = zip(got, want) if isinstance(got, tuple) else [(got, want)]
    for g, w in outs:
        assert _node(g) == _node(w)
    if grad:
        g, w = (got[0], want[0]) if isinstance(got, tuple) else (got, want)
        weights = np.linspace(-1, 1, w.numel()).reshape(tuple(w.shape))
        (g * ng.tensor(weights)).sum().backward()
        (w * torch.tensor(weights)).sum().backward()
        for a, b in zip(ng_in, t_in):
            if b.grad is not None:
                _close(a.grad, b.grad, tol)
    return got, want


def test_layer_group_rms_norm():
    x, w, b = _RNG.normal(size=(2, 4, 3)), _RNG.normal(size=(3,)), _RNG.normal(size=(3,))
    _compare_fn(lambda x, w, b: ng.layer_norm(x, [3], w, b, 1e-5, False),
                lambda x, w, b: torch.layer_norm(x, [3], w, b, 1e-5, False), (x, w, b))
    _compare_fn(lambda x: ng.layer_norm(x, (4, 3)), lambda x: torch.layer_norm(x, (4, 3)), (x,))
    gw = _RNG.normal(size=(4,))
    _compare_fn(lambda x, w: ng.group_norm(x, 2, w, None, 1e-3),
                lambda x, w: torch.group_norm(x, 2, w, None, 1e-3), (x, gw))
    _compare_fn(lambda x, w: ng.rms_norm(x, [3], w), lambda x, w: torch.rms_norm(x, [3], w),
                (x, w))


@pytest.mark.parametrize("training", [True, False])
def test_batch_and_instance_norm(training):
    x, w, b = _RNG.normal(size=(3, 2, 4)), _RNG.normal(size=(2,)), _RNG.normal(size=(2,))
    stats = {}
    for lib in (ng, torch):
        stats[lib] = (lib.tensor([0.1, -0.2], dtype=lib.float64),
                      lib.tensor([1.5, 0.5], dtype=lib.float64))
    _compare_fn(
        lambda x, w, b: ng.batch_norm(x, w, b, *stats[ng], training, 0.2, 1e-5, False),
        lambda x, w, b: torch.batch_norm(x, w, b, *stats[torch], training, 0.2, 1e-5, False),
        (x, w, b))
    _close(stats[ng], stats[torch])  # (the running statistics, updated alike)
    _compare_fn(
        lambda x, w, b: ng.instance_norm(x, w, b, *stats[ng], True, 0.1, 1e-5, True),
        lambda x, w, b: torch.instance_norm(x, w, b, *stats[torch], True, 0.1, 1e-5, True),
        (x, w, b))
    _close(stats[ng], stats[torch])
    _compare_fn(lambda x: ng.batch_norm(x, None, None, None, None, True, 0.1, 1e-5, True),
                lambda x: torch.batch_norm(x, None, None, None, None, True, 0.1, 1e-5, True),
                (x,))


# ---------------------------------------------------------------- embedding, distances


@pytest.mark.parametrize("padding_idx", [-1, 2, -3])
def test_embedding_takes_weight_first(padding_idx):
    w = _RNG.normal(size=(5, 3))
    idx = [[1, 2, 4], [2, 2, 0]]
    got, want = _compare_fn(lambda w: ng.embedding(w, ng.tensor(idx), padding_idx),
                            lambda w: torch.embedding(w, torch.tensor(idx), padding_idx), (w,))
    _compare_fn(lambda w: ng.embedding(w, ng.tensor(idx), padding_idx, True),
                lambda w: torch.embedding(w, torch.tensor(idx), padding_idx, True), (w,))
    with pytest.raises(NotImplementedError, match="sparse"):
        ng.embedding(ng.ones(3, 2), ng.tensor([0]), sparse=True)


def test_bilinear_cosine_pairwise():
    a, b = _RNG.normal(size=(2, 3)), _RNG.normal(size=(2, 4))
    w, bias = _RNG.normal(size=(5, 3, 4)), _RNG.normal(size=(5,))
    _compare_fn(ng.bilinear, torch.bilinear, (a, b, w, bias))
    c, d = _RNG.normal(size=(2, 4, 3)), _RNG.normal(size=(2, 4, 3))
    _compare_fn(ng.cosine_similarity, torch.cosine_similarity, (c, d))
    _compare_fn(lambda c, d: ng.cosine_similarity(c, d, -1, 1e-6),
                lambda c, d: torch.cosine_similarity(c, d, -1, 1e-6), (c, d))
    _compare_fn(ng.pairwise_distance, torch.pairwise_distance, (c, d))
    _compare_fn(lambda c, d: ng.pairwise_distance(c, d, 1.0, 1e-6, True),
                lambda c, d: torch.pairwise_distance(c, d, 1.0, 1e-6, True), (c, d))


@pytest.mark.parametrize("p", [2, 1, 3, 0, math.inf])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pdist(p, dtype):
    x = _RNG.normal(size=(5, 3)).astype(dtype)
    x[3] = x[1]  # (a zero distance: gradient 0 there)
    xs, tx = ng.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    got, want = ng.pdist(xs, p), torch.pdist(tx, p)
    _close(got, want, 1e-5 if dtype == "float32" else 1e-10)
    assert ng.nn.functional.pdist is ng.pdist.__wrapped__
    weights = np.linspace(-1, 1, want.numel())
    (got * ng.tensor(weights.astype(dtype))).sum().backward()
    (want * torch.tensor(weights.astype(dtype))).sum().backward()
    _close(xs.grad, tx.grad, 1e-4 if dtype == "float32" else 1e-10)
    assert tuple(ng.pdist(ng.ones(1, 3)).shape) == (0,)


def test_pdist_errors():
    for lib in (ng, torch):
        with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 3D"):
            lib.pdist(lib.ones(2, 3, 4))
        with pytest.raises(RuntimeError, match="pdist only supports non-negative p values"):
            lib.pdist(lib.ones(2, 3), -1)


# ---------------------------------------------------------------- losses


@pytest.mark.parametrize("reduction", [0, 1, 2, 3])
def test_losses_take_aten_reductions(reduction):
    x, y = _RNG.normal(size=(3, 4)), _RNG.normal(size=(3, 4))
    prob = _RNG.uniform(0.1, 0.9, (3, 4))
    sign = np.where(_RNG.normal(size=(3, 4)) > 0, 1.0, -1.0)
    r = reduction
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (ATen's kl_div gives no warning for the mean)
        _compare_fn(lambda a, b: ng.kl_div(a, b, r), lambda a, b: torch.kl_div(a, b, r), (x, prob))
    _compare_fn(lambda a, b: ng.kl_div(a, b, r, log_target=True),
                lambda a, b: torch.kl_div(a, b, r, log_target=True), (x, y))
    w, pw = prob[0], prob[1] + 0.5
    _compare_fn(
        lambda a, b: ng.binary_cross_entropy_with_logits(a, b, ng.tensor(w), ng.tensor(pw), r),
        lambda a, b: torch.binary_cross_entropy_with_logits(a, b, torch.tensor(w),
                                                            torch.tensor(pw), r), (x, prob))
    _compare_fn(lambda a: ng.hinge_embedding_loss(a, ng.tensor(sign), 0.5, r),
                lambda a: torch.hinge_embedding_loss(a, torch.tensor(sign), 0.5, r), (x,))
    _compare_fn(lambda a, b: ng.margin_ranking_loss(a, b, ng.tensor(sign), 0.1, r),
                lambda a, b: torch.margin_ranking_loss(a, b, torch.tensor(sign), 0.1, r), (x, y))
    _compare_fn(lambda a, b, c: ng.triplet_margin_loss(a, b, c, 1.0, 2, 1e-6, True, r),
                lambda a, b, c: torch.triplet_margin_loss(a, b, c, 1.0, 2, 1e-6, True, r),
                (x, y, prob))
    _compare_fn(lambda a, b: ng.cosine_embedding_loss(a, b, ng.tensor(sign[:, 0]), 0.2, r),
                lambda a, b: torch.cosine_embedding_loss(a, b, torch.tensor(sign[:, 0]), 0.2, r),
                (x, y))
    _compare_fn(lambda a, b: ng.poisson_nll_loss(a, b, True, False, 1e-8, r),
                lambda a, b: torch.poisson_nll_loss(a, b, True, False, 1e-8, r), (x, prob))
    _compare_fn(lambda a, b: ng.poisson_nll_loss(a, b, False, True, 1e-8, r),
                lambda a, b: torch.poisson_nll_loss(a, b, False, True, 1e-8, r), (prob, x * x))


def test_loss_reduction_must_be_an_int():
    for lib in (ng, torch):
        with pytest.raises(TypeError, match=r"kl_div\(\): argument 'reduction' \(position 3\) "
                                            r"must be int, not str"):
            lib.kl_div(lib.ones(2), lib.ones(2), "sum")


# ---------------------------------------------------------------- pooling, padding, shuffles


def test_pooling_with_indices():
    x = _RNG.normal(size=(2, 3, 7))
    for fn in (lambda lib, t: lib.adaptive_max_pool1d(t, 3),
               lambda lib, t: lib.max_pool1d_with_indices(t, 2),
               lambda lib, t: lib.max_pool1d_with_indices(t, 3, 2, 1, 1, True)):
        got, want = _compare_fn(lambda t: fn(ng, t), lambda t: fn(torch, t), (x,))
        assert got[1].dtype == ng.int64 and got[1].tolist() == want[1].tolist()


def test_constant_pad_nd():
    x = _RNG.normal(size=(2, 3, 4))
    for pad, value in (([1, 2], 0), ([-1, 2, 0, 1], 3.5), ([1, 1, 1, 1, 1, 1], -1)):
        _compare_fn(lambda t: ng.constant_pad_nd(t, pad, value),
                    lambda t: torch.constant_pad_nd(t, pad, value), (x,))


@pytest.mark.parametrize("shape,groups", [((2, 6, 3), 2), ((1, 6, 2, 2), 3), ((3, 4, 1, 2, 2), 4)])
def test_channel_shuffle(shape, groups):
    x = _RNG.normal(size=shape)
    _compare_fn(lambda t: ng.channel_shuffle(t, groups),
                lambda t: torch.channel_shuffle(t, groups), (x,))
    assert ng.nn.functional.channel_shuffle is ng.channel_shuffle.__wrapped__
    got, want = ng.native_channel_shuffle(ng.tensor(x), groups), torch.native_channel_shuffle(
        torch.tensor(x), groups)
    _close(got, want)
    xs, tx = ng.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    got, want = ng.native_channel_shuffle(xs, groups), torch.native_channel_shuffle(tx, groups)
    assert _node(got) == _node(want) == "NotImplemented"
    for out in (got, want):
        with pytest.raises(RuntimeError, match="derivative for aten::native_channel_shuffle is "
                                               "not implemented"):
            out.sum().backward()


def test_channel_shuffle_errors_and_cuda(device):
    for lib in (ng, torch):
        with pytest.raises(RuntimeError, match=r"channel_shuffle expects input with > 2 dims, but "
                                               r"got input with sizes \[4\]"):
            lib.channel_shuffle(lib.ones(4), 2)
        with pytest.raises(RuntimeError, match="Number of groups to divide channels in must be "
                                               "positive. Value of groups:0"):
            lib.channel_shuffle(lib.ones(2, 4, 3), 0)
        with pytest.raises(RuntimeError, match="Number of channels must be divisible by groups. "
                                               "Got 4 channels and 3 groups."):
            lib.channel_shuffle(lib.ones(2, 4, 3), 3)
    x = ng.arange(8.0, device=device).reshape(1, 4, 2).requires_grad_()
    y = ng.channel_shuffle(x, 2)
    assert y.device.type == device
    assert y.tolist() == torch.channel_shuffle(torch.arange(8.0).reshape(1, 4, 2), 2).tolist()
    (y * ng.arange(8.0, device=device).reshape(1, 4, 2)).sum().backward()
    assert x.grad.tolist() == [[[0.0, 1.0], [4.0, 5.0], [2.0, 3.0], [6.0, 7.0]]]


# ---------------------------------------------------------------- rsub, scalar_tensor


def test_rsub():
    x, y = _RNG.normal(size=(2, 3)), _RNG.normal(size=(3,))
    _compare_fn(ng.rsub, torch.rsub, (x, y))
    _compare_fn(lambda a, b: ng.rsub(a, b, alpha=2.5), lambda a, b: torch.rsub(a, b, alpha=2.5),
                (x, y))
    _compare_fn(lambda a: ng.rsub(a, 2), lambda a: torch.rsub(a, 2), (x,))
    _compare_fn(lambda a: ng.rsub(a, 2, 3), lambda a: torch.rsub(a, 2, 3), (x,))
    _compare_fn(lambda a: 2 - a, lambda a: 2 - a, (x,))
    got = ng.rsub(ng.tensor([1, 2]), 2.5)
    assert got.dtype == ng.float32
    assert got.tolist() == torch.rsub(torch.tensor([1, 2]), 2.5).tolist()
    for lib in (ng, torch):
        with pytest.raises(RuntimeError, match="For integral input tensors, argument alpha must "
                                               "not be a floating point number."):
            lib.rsub(lib.tensor([1, 2]), lib.tensor([1, 2]), alpha=1.5)


def test_scalar_tensor_and_is_inference():
    for s, kw in ((3, {}), (True, {}), (2.5, {"dtype": "float64"}), (3, {"dtype": "int64"})):
        got = ng.scalar_tensor(s, **{k: getattr(ng, v) for k, v in kw.items()})
        want = torch.scalar_tensor(s, **{k: getattr(torch, v) for k, v in kw.items()})
        _close(got, want)
    assert ng.scalar_tensor(1.5, requires_grad=True).requires_grad
    x = ng.ones(2)
    assert ng.is_inference(x) is torch.is_inference(torch.ones(2)) is False
    with ng.inference_mode():
        assert ng.is_inference(ng.ones(2)) is True


# ---------------------------------------------------------------- range, unravel_index


@pytest.mark.parametrize("args,kw", [
    ((1, 4), {}), ((1, 4, 0.5), {}), ((0, 3), {"dtype": "int64"}), ((1, 2, 0.3), {}),
    ((4, 1, -1), {"dtype": "float64"}), ((0.5, 0.5), {}),
])
def test_range_includes_its_end_with_pytorchs_warning(args, kw):
    with pytest.warns(UserWarning) as got_w:
        got = ng.range(*args, **{k: getattr(ng, v) for k, v in kw.items()})
    with pytest.warns(UserWarning) as want_w:
        want = torch.range(*args, **{k: getattr(torch, v) for k, v in kw.items()})
    _close(got, want)
    assert [str(w.message) for w in got_w] == [str(w.message) for w in want_w]
    assert got_w[0].filename == __file__


def test_range_errors():
    for lib in (ng, torch):
        with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="step must be nonzero"):
            lib.range(1, 4, 0)
        with pytest.warns(UserWarning), pytest.raises(
                RuntimeError, match="upper bound and lower bound inconsistent with step sign"):
            lib.range(1, 4, -1)


@pytest.mark.parametrize("indices,shape", [
    ([4, 1, -1, 6], (2, 3)), (4, (2, 3)), ([[5, 3], [0, 2]], [2, 3]), ([3], 4), ([7], (2, 2, 2)),
])
def test_unravel_index(indices, shape):
    got = ng.unravel_index(ng.tensor(indices), shape)
    want = torch.unravel_index(torch.tensor(indices), shape)
    assert isinstance(got, tuple)
    _close(got, want)
    got32 = ng.unravel_index(ng.tensor(indices, dtype=ng.int32), shape)
    assert all(t.dtype == ng.int64 for t in got32)


def test_unravel_index_errors():
    for lib in (ng, torch):
        with pytest.raises(TypeError, match=r"expected 'indices' to be integer dtype, but got "
                                            r"(torch|numbagrad).float32"):
            lib.unravel_index(lib.tensor([1.0]), (2, 3))
        with pytest.raises(ValueError, match=r"'shape' cannot have negative values, but got "
                                             r"\(2, -3\)"):
            lib.unravel_index(lib.tensor([1]), (2, -3))


# ---------------------------------------------------------------- asarray


def test_asarray_of_a_tensor_shares_or_copies_as_pytorch():
    for lib in (ng, torch):
        x = lib.ones(3)
        assert lib.asarray(x) is x
        c = lib.asarray(x, copy=True)
        c[0] = 5
        assert c is not x and x.tolist() == [1.0, 1.0, 1.0]
        d = lib.asarray(x, dtype=lib.float64)
        assert d.dtype == lib.float64 and x.dtype == lib.float32
        with pytest.raises(ValueError, match="can't alias tensor with dtype 'Float' into dtype "
                                             "'Double'."):
            lib.asarray(x, dtype=lib.float64, copy=False)
        # a tensor that requires grad: PyTorch's once-a-process warning, the graph kept
        leaf = lib.ones(2, requires_grad=True)
        with pytest.warns(UserWarning, match="unspecified requires_grad now defaults to "
                                             "obj.requires_grad"):
            assert lib.asarray(leaf) is leaf
        assert type(lib.asarray(leaf * 2, copy=True).grad_fn).__name__ == "CloneBackward0"
        assert type(lib.asarray(leaf, dtype=lib.float64).grad_fn).__name__ == "ToCopyBackward0"
        nonleaf = leaf * 2
        detached = lib.asarray(nonleaf, requires_grad=False)
        assert detached is not nonleaf and not detached.requires_grad and nonleaf.requires_grad
        new_leaf = lib.asarray(lib.ones(2), requires_grad=True)
        assert new_leaf.requires_grad and new_leaf.is_leaf
        # (PyTorch's own quirk: requires_grad=False turns the given leaf's flag off)
        assert lib.asarray(leaf, requires_grad=False) is leaf and not leaf.requires_grad
        with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype "
                                               "can require gradients"):
            lib.asarray(lib.ones(2, dtype=lib.int64), requires_grad=True)


def test_asarray_of_numpy_lists_and_scalars():
    a = np.arange(3.0)
    for lib in (ng, torch):
        shared = lib.asarray(a)
        shared[0] = 7
        assert a[0] == 7 and shared.dtype == lib.float64
        a[0] = 0
        copied = lib.asarray(a, copy=True)
        copied[0] = 7
        assert a[0] == 0
        assert lib.asarray(a, dtype=lib.float32).dtype == lib.float32
        with pytest.raises(ValueError, match="can't alias tensor with dtype 'Double' into dtype "
                                             "'Float'."):
            lib.asarray(a, dtype=lib.float32, copy=False)
        grad = lib.asarray(a, requires_grad=True)
        assert grad.requires_grad and grad.is_leaf
        assert lib.asarray([1, 2.5]).dtype == lib.float32
        assert lib.asarray([[1, 2], [3, 4]]).dtype == lib.int64
        assert lib.asarray(3).tolist() == 3 and lib.asarray(3).shape == ()
        assert lib.asarray(True).dtype == lib.bool
        assert lib.asarray(np.float32(2)).dtype == lib.float32
        assert lib.asarray(3.5, dtype=lib.float64).dtype == lib.float64
        with pytest.raises(ValueError, match="can't alias arbitrary sequence into a tensor."):
            lib.asarray([1, 2], copy=False)


def test_asarray_on_a_device(device):
    x = ng.asarray([1.0, 2.0], device=device)
    assert x.device.type == device and x.tolist() == [1.0, 2.0]
    assert ng.asarray(x) is x


# ---------------------------------------------------------------- windows


WINDOWS = [("hann_window", ()), ("hamming_window", ()), ("hamming_window", (0.5, 0.4)),
           ("blackman_window", ()), ("bartlett_window", ()), ("kaiser_window", ()),
           ("kaiser_window", (5.0,))]


@pytest.mark.parametrize("name,params", WINDOWS)
@pytest.mark.parametrize("n", [0, 1, 2, 5, 8])
def test_windows(name, params, n):
    for periodic in (True, False):
        for dtype in ("float32", "float64"):
            got = getattr(ng, name)(n, periodic, *params, dtype=getattr(ng, dtype))
            want = getattr(torch, name)(n, periodic, *params, dtype=getattr(torch, dtype))
            _close(got, want, 1e-6 if dtype == "float32" else 1e-12)
    if not params:
        _close(getattr(ng, name)(n), getattr(torch, name)(n), 1e-6)  # (periodic by default)
        w = getattr(ng, name)(n, requires_grad=True)
        assert w.requires_grad and w.is_leaf and w.dtype == ng.float32


def test_window_errors_and_device(device):
    for lib in (ng, torch):
        with pytest.raises(RuntimeError, match="hann_window requires non-negative window_length, "
                                               "got window_length=-1"):
            lib.hann_window(-1)
        with pytest.raises(RuntimeError, match=r"hamming_window expects floating point dtypes, "
                                               r"got: TensorOptions\(dtype=long int"):
            lib.hamming_window(5, dtype=lib.int64)
    w = ng.kaiser_window(5, device=device)
    assert w.device.type == device
    _close(w, torch.kaiser_window(5))


# ---------------------------------------------------------------- switches


def test_warn_always():
    assert ng.is_warn_always_enabled() is torch.is_warn_always_enabled() is False
    leaf = ng.ones(2, requires_grad=True)
    try:
        ng.set_warn_always(True)
        assert ng.is_warn_always_enabled() is True
        # (a warning PyTorch gives once a process is then given every time)
        with pytest.warns(UserWarning) as record:
            float(leaf.sum())
            float(leaf.sum())
        assert len(record) == 2
    finally:
        ng.set_warn_always(False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        float(leaf.sum())  # (given once already)


def test_is_anomaly_check_nan_enabled():
    assert ng.is_anomaly_check_nan_enabled() is torch.is_anomaly_check_nan_enabled() is True
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with ng.autograd.detect_anomaly(check_nan=False):
            assert ng.is_anomaly_check_nan_enabled() is False
    assert ng.is_anomaly_check_nan_enabled() is True
