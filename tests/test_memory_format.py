"""``numbagrad.memory_format`` against PyTorch: the four formats, the layouts ``contiguous``,
``clone``, ``to``, ``empty`` and the ``*_like`` factories give (strides, values, whether the
tensor itself comes back), ``is_contiguous(memory_format=...)``, the errors, gradients and
node names through the copies, ``Module.to(memory_format=...)``, and a CNN on channels-last
inputs."""

from __future__ import annotations

import copy
import pickle
import random

import numpy as np
import pytest

import numbagrad as ng
from devices import on_cuda

torch = pytest.importorskip("torch")

FORMATS = ["contiguous_format", "preserve_format", "channels_last", "channels_last_3d"]


def _outcome(fn):
    """What ``fn()`` gives, or its error's type and message (PyTorch's names made alike)."""
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 (any error, compared with PyTorch's)
        return type(e).__name__, str(e).replace("torch.", "").replace("numbagrad.", "")


def _same_error(fn_ng, fn_torch):
    with pytest.raises(Exception) as want:
        fn_torch()
    with pytest.raises(type(want.value)) as got:
        fn_ng()
    assert str(got.value) == str(want.value)


def _pair(shape, strides, offset=0):
    """The same strided view of ``arange`` in both libraries."""
    n = int(np.prod(shape)) + offset + sum((s - 1) * st for s, st in zip(shape, strides)) + 1
    t = torch.arange(float(n)).as_strided(shape, strides, offset)
    x = ng.arange(float(n)).as_strided(shape, strides, offset)
    assert x.stride() == t.stride() and x.tolist() == t.tolist()
    return x, t


# ---------------------------------------------------------------- the objects


def test_the_formats_are_four_named_objects():
    for name in FORMATS:
        f = getattr(ng, name)
        assert type(f) is ng.memory_format and isinstance(f, ng.memory_format)
        assert repr(f) == str(f) == repr(getattr(torch, name)).replace("torch.", "numbagrad.")
        assert pickle.loads(pickle.dumps(f)) is f
        assert copy.deepcopy(f) is f and copy.copy(f) is f
        assert f == getattr(ng, name) and hash(f) == hash(getattr(ng, name))
    assert len({getattr(ng, name) for name in FORMATS}) == 4
    assert pickle.loads(pickle.dumps({"f": ng.channels_last}))["f"] is ng.channels_last
    with pytest.raises(TypeError) as want:
        torch.memory_format()
    with pytest.raises(TypeError) as got:
        ng.memory_format()
    assert str(got.value) == str(want.value).replace("torch.", "numbagrad.")


# ---------------------------------------------------------------- layouts, fuzzed


def _layouts(seed, n):
    """``n`` views of arange, as PyTorch lays them out: permuted, sliced, expanded."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        nd = rng.choice([0, 1, 2, 3, 4, 4, 4, 4, 4, 5, 5, 5])
        shape = tuple(rng.choice([1, 1, 2, 3, 4]) for _ in range(nd))
        t = torch.arange(float(np.prod(shape))).reshape(shape)
        if nd and rng.random() < 0.7:
            perm = list(range(nd))
            rng.shuffle(perm)
            t = t.permute(*perm)
        if nd:
            t = t[tuple(slice(None, None, rng.choice([1, 1, 1, 2])) for _ in range(nd))]
        if nd < 5 and rng.random() < 0.15:
            d = rng.randrange(nd + 1)
            t = t.unsqueeze(d).expand(*[2 if i == d else -1 for i in range(nd + 1)])
        out.append((tuple(t.shape), t.stride(), t.storage_offset()))
    return out


def _layout_report(lib, x):
    """Everything a memory format decides about ``x``'s copies, in plain values."""
    def copied(y):
        return y is x, y.stride(), y.tolist(), str(y.dtype).split(".")[-1]

    rows = []
    for name in FORMATS:
        f = getattr(lib, name)
        rows += [
            _outcome(lambda: x.is_contiguous(memory_format=f)),
            _outcome(lambda: copied(x.contiguous(memory_format=f))),
            _outcome(lambda: copied(x.clone(memory_format=f))),
            _outcome(lambda: copied(lib.clone(x, memory_format=f))),
            _outcome(lambda: copied(x.to(memory_format=f))),
            _outcome(lambda: copied(x.to(lib.float64, memory_format=f))),
            _outcome(lambda: copied(x.to(memory_format=f, copy=True))),
            _outcome(lambda: copied(x.double(memory_format=f))),
            _outcome(lambda: lib.empty_like(x, memory_format=f).stride()),
            _outcome(lambda: copied(lib.zeros_like(x, memory_format=f))),
            _outcome(lambda: copied(lib.ones_like(x, memory_format=f))),
            _outcome(lambda: copied(lib.full_like(x, 2.5, memory_format=f))),
            _outcome(lambda: lib.rand_like(x, memory_format=f).stride()),
            _outcome(lambda: lib.randn_like(x, memory_format=f).stride()),
            _outcome(lambda: lib.randint_like(x, 3, memory_format=f).stride()),
        ]
    # the defaults: preserve_format for the copies and factories, C order for contiguous()
    rows += [copied(x.clone()), copied(x.contiguous()), copied(x.to(lib.float64)),
             lib.empty_like(x).stride(), copied(lib.zeros_like(x)), x.is_contiguous()]
    return rows


@pytest.mark.parametrize("seed", range(4))
def test_copies_and_factories_are_laid_out_as_pytorchs(seed):
    for shape, strides, offset in _layouts(seed, 40):
        x, t = _pair(shape, strides, offset)
        got, want = _layout_report(ng, x), _layout_report(torch, t)
        for k, (g, w) in enumerate(zip(got, want)):
            assert g == w, (shape, strides, k)


@pytest.mark.parametrize("shape,strides", [
    ((2, 0, 4, 5), (20, 20, 5, 1)), ((2, 0, 4, 5), (0, 1, 0, 0)), ((0, 3, 4, 5), (60, 1, 15, 3)),
    ((2, 3, 0, 5), (0, 1, 15, 3)), ((1, 1, 1, 1), (1, 1, 1, 1)), ((2, 1, 4, 5), (20, 1, 5, 1)),
    ((2, 1, 4, 5), (20, 20, 5, 1)), ((2, 3, 1, 1), (3, 1, 1, 1)), ((2, 3, 1, 1), (3, 1, 3, 3)),
    ((2, 3, 4, 5, 6), (360, 1, 90, 18, 3)), ((2, 1, 1, 1, 3), (3, 1, 3, 3, 1)),
    ((2, 0, 3, 4, 5), (0, 1, 0, 0, 0)),
])
def test_is_contiguous_in_each_format_counts_dims_of_size_one_and_empty_ones(shape, strides):
    t = torch.empty_strided(shape, strides)
    x = ng.empty_strided(shape, strides)
    assert x.stride() == t.stride()
    for name in FORMATS:
        f = getattr(ng, name)
        assert x.is_contiguous(memory_format=f) == t.is_contiguous(
            memory_format=getattr(torch, name)), name


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (1, 3, 1, 1), (2, 1, 4, 5), (3, 2, 1, 4),
                                   (2, 3, 0, 5), (2, 0, 4, 5)])
def test_channels_last_strides_are_nhwc(shape):
    for name, t_shape in [("channels_last", shape), ("channels_last_3d", (*shape, 3))]:
        want = torch.empty(t_shape, memory_format=getattr(torch, name))
        got = ng.empty(t_shape, memory_format=getattr(ng, name))
        assert got.stride() == want.stride()
        assert got.is_contiguous(memory_format=getattr(ng, name))
    n, c, h, w = shape
    assert ng.empty(shape, memory_format=ng.channels_last).stride() == (h * w * c, 1, w * c, c)
    x = ng.randn(2, 3, 4, 5)
    y = x.contiguous(memory_format=ng.channels_last)
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    assert not y.is_contiguous() and y.contiguous().stride() == (60, 20, 5, 1)
    # the memory, in order, is NHWC
    np.testing.assert_array_equal(
        np.lib.stride_tricks.as_strided(y.numpy(), (120,), (4,)),
        x.numpy().transpose(0, 2, 3, 1).ravel())


def test_the_tensor_itself_comes_back_as_pytorchs_does():
    for lib in (ng, torch):
        cl, cf, pf = lib.channels_last, lib.contiguous_format, lib.preserve_format
        x = lib.randn(2, 3, 4, 5)
        xc = x.contiguous(memory_format=cl)
        assert x.contiguous() is x and x.contiguous(memory_format=cf) is x
        assert x.contiguous(memory_format=pf) is x
        assert xc.contiguous(memory_format=cl) is xc
        assert xc.to(memory_format=cl) is xc and xc.to(memory_format=pf) is xc
        assert xc.to(xc) is xc and x.to(xc) is x and xc.float() is xc
        assert xc.to(memory_format=cl, copy=True) is not xc
        assert xc.to(lib.float32, False, True) is not xc  # (non_blocking, copy)
        assert xc.clone(memory_format=cl) is not xc
        # ``to`` asks which format the strides suggest, not whether they are contiguous
        t = x.transpose(1, 2)
        assert t.to(memory_format=cf) is t and t.to(memory_format=pf) is t
        assert t.to(memory_format=cl) is not t


# ---------------------------------------------------------------- errors


RANK_CASES = [
    ("contiguous", lambda lib, x, f: x.contiguous(memory_format=f)),
    ("clone", lambda lib, x, f: x.clone(memory_format=f)),
    ("to", lambda lib, x, f: x.to(memory_format=f)),
    ("to_dtype", lambda lib, x, f: x.to(lib.float64, memory_format=f)),
    ("float", lambda lib, x, f: x.float(memory_format=f)),
    ("empty_like", lambda lib, x, f: lib.empty_like(x, memory_format=f)),
    ("zeros_like", lambda lib, x, f: lib.zeros_like(x, memory_format=f)),
    ("full_like", lambda lib, x, f: lib.full_like(x, 1.0, memory_format=f)),
    ("rand_like", lambda lib, x, f: lib.rand_like(x, memory_format=f)),
    ("randint_like", lambda lib, x, f: lib.randint_like(x, 4, memory_format=f)),
    ("empty", lambda lib, x, f: lib.empty(tuple(x.shape), memory_format=f)),
]


@pytest.mark.parametrize("case", RANK_CASES, ids=[c[0] for c in RANK_CASES])
@pytest.mark.parametrize("ndim", [0, 1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("fmt", ["channels_last", "channels_last_3d"])
def test_a_channels_last_format_requires_its_rank(case, ndim, fmt):
    _, fn = case
    shape = (2, 3, 2, 3, 2, 2)[:ndim]
    x, t = ng.ones(shape), torch.ones(shape)
    want = _outcome(lambda: fn(torch, t, getattr(torch, fmt)).stride())
    got = _outcome(lambda: fn(ng, x, getattr(ng, fmt)).stride())
    assert got == want
    if (fmt == "channels_last") != (ndim == 4) or (fmt == "channels_last_3d") != (ndim == 5):
        assert want[0] == "RuntimeError"


def test_preserve_format_refusals():
    t = torch.randn(2, 3, 4, 5).transpose(1, 2)
    x = ng.randn(2, 3, 4, 5).transpose(1, 2)
    _same_error(lambda: x.contiguous(memory_format=ng.preserve_format),
                lambda: t.contiguous(memory_format=torch.preserve_format))
    _same_error(lambda: ng.empty(2, 3, 4, 5, memory_format=ng.preserve_format),
                lambda: torch.empty(2, 3, 4, 5, memory_format=torch.preserve_format))


@pytest.mark.parametrize("call", [
    lambda lib, x, v: x.contiguous(memory_format=v),
    lambda lib, x, v: x.is_contiguous(memory_format=v),
    lambda lib, x, v: x.clone(memory_format=v),
    lambda lib, x, v: lib.clone(x, memory_format=v),
    lambda lib, x, v: lib.empty_like(x, memory_format=v),
    lambda lib, x, v: lib.zeros_like(x, memory_format=v),
    lambda lib, x, v: lib.full_like(x, 1, memory_format=v),
    lambda lib, x, v: lib.empty(2, 3, memory_format=v),
    lambda lib, x, v: x.double(memory_format=v),
])
@pytest.mark.parametrize("value", [3, "channels_last", None])
def test_a_memory_format_of_another_type_is_refused_in_pytorchs_words(call, value):
    t, x = torch.ones(2, 3, 4, 5), ng.ones(2, 3, 4, 5)
    want = _outcome(lambda: call(torch, t, value).stride())
    got = _outcome(lambda: call(ng, x, value).stride())
    assert got == want  # (None: preserve_format or contiguous_format where PyTorch takes it)


def test_to_and_module_to_refuse_a_memory_format_of_another_type():
    with pytest.raises(TypeError):
        torch.ones(2, 3, 4, 5).to(memory_format=3)
    with pytest.raises(TypeError, match="memory_format"):
        ng.ones(2, 3, 4, 5).to(memory_format=3)
    with pytest.raises(TypeError, match="memory_format"):
        ng.nn.Conv2d(1, 1, 1).to(memory_format=3)
    assert ng.ones(2, 3, 4, 5).to(memory_format=None).stride() == (60, 20, 5, 1)


# ---------------------------------------------------------------- gradients


def _through(lib, kind, x):
    cl = lib.channels_last
    return {
        "contiguous": lambda: x.contiguous(memory_format=cl),
        "clone": lambda: x.clone(memory_format=cl),
        "clone_contiguous": lambda: x.contiguous(memory_format=cl).clone(
            memory_format=lib.contiguous_format),
        "to": lambda: x.to(memory_format=cl),
        "to_dtype": lambda: x.to(lib.float32, memory_format=cl),
        "double": lambda: x.float().double(memory_format=cl),
        "back": lambda: x.contiguous(memory_format=cl).contiguous(),
        "to_back": lambda: x.to(memory_format=cl).to(memory_format=lib.contiguous_format),
    }[kind]()


@pytest.mark.parametrize("kind", ["contiguous", "clone", "clone_contiguous", "to", "to_dtype",
                                  "double", "back", "to_back"])
def test_gradients_flow_through_the_copies_with_pytorchs_nodes(kind):
    a = np.random.RandomState(0).randn(2, 3, 4, 5)
    w = np.random.RandomState(1).randn(2, 3, 4, 5)
    got, want = [], []
    for lib, out in ((ng, got), (torch, want)):
        x = lib.tensor(a, requires_grad=True)
        y = _through(lib, kind, x)
        names, node = [], y.grad_fn
        while node is not None:
            names.append(type(node).__name__)
            node = node.next_functions[0][0] if node.next_functions else None
        g, = lib.autograd.grad((y * y * lib.tensor(w, dtype=y.dtype)).sum(), x,
                               create_graph=True)
        gg, = lib.autograd.grad((g * g).sum(), x)
        out += [names, y.stride(), str(y.dtype).split(".")[-1], g.stride()]
        out.append((y.detach().numpy(), g.detach().numpy(), gg.numpy()))
    *meta_g, (y_g, g_g, gg_g) = got
    *meta_w, (y_w, g_w, gg_w) = want
    assert meta_g == meta_w
    for p, q in ((y_g, y_w), (g_g, g_w), (gg_g, gg_w)):
        np.testing.assert_allclose(p, q, rtol=1e-5, atol=1e-6)


# (torch's forward_ad import warns about torch.jit.script)
@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
def test_forward_mode_tangents_take_the_layout():
    import numbagrad.autograd.forward_ad as nfw

    a = np.random.RandomState(0).randn(2, 3, 4, 5)
    for lib, fw in ((ng, nfw), (torch, torch.autograd.forward_ad)):
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(a), lib.tensor(np.ones_like(a) * 2))
            for y in (d.contiguous(memory_format=lib.channels_last),
                      d.clone(memory_format=lib.channels_last),
                      d.to(lib.float32, memory_format=lib.channels_last)):
                p, t = fw.unpack_dual(y)
                assert p.stride() == t.stride() == (60, 1, 15, 3)
                np.testing.assert_allclose(t.numpy(), 2.0)


# ---------------------------------------------------------------- conversions, factories


def test_dtype_conversions_and_type_as_keep_the_layout():
    for lib in (ng, torch):
        x = lib.randn(2, 3, 4, 5, requires_grad=True)
        xc = x.contiguous(memory_format=lib.channels_last)
        for y in (xc.double(), xc.int(), xc.bool(), xc.to(lib.float64),
                  xc.type_as(lib.zeros(1, dtype=lib.float64)), xc.cpu(),
                  x.float(memory_format=lib.channels_last), x.long(memory_format=lib.channels_last),
                  x.cpu(memory_format=lib.channels_last)):
            assert y.stride() == (60, 1, 15, 3)
            np.testing.assert_array_equal(y.detach().double().numpy(),
                                          x.detach().to(y.dtype).double().numpy())
        assert xc.to(lib.float64, memory_format=lib.contiguous_format).stride() == (60, 20, 5, 1)
        assert x.cpu(memory_format=lib.channels_last).grad_fn.name() == "ToCopyBackward0"
        assert xc.int().grad_fn is None


def test_factories_fill_the_layout():
    for lib in (ng, torch):
        xc = lib.randn(2, 3, 4, 5).contiguous(memory_format=lib.channels_last)
        t = lib.randn(2, 3, 4, 5).transpose(1, 3)
        for like, value in ((lib.zeros_like, 0.0), (lib.ones_like, 1.0),
                            (lambda x, **k: lib.full_like(x, 7, **k), 7.0)):
            for src in (xc, t):
                y = like(src)
                assert y.stride() == src.stride()
                assert (y == value).all() and y.dtype == src.dtype
            y = like(xc, dtype=lib.int32, memory_format=lib.contiguous_format)
            assert y.stride() == (60, 20, 5, 1) and (y == value).all()
        r = lib.rand_like(xc, requires_grad=True)
        assert r.requires_grad and r.is_leaf and r.stride() == xc.stride()
        assert ((r >= 0) & (r < 1)).all()
        r = lib.randint_like(xc, 2, 5)
        assert r.stride() == xc.stride() and ((r >= 2) & (r < 5)).all()
        assert lib.empty(2, 3, 4, 5, memory_format=lib.channels_last, dtype=lib.float64,
                         requires_grad=True).requires_grad
        assert lib.empty(2, 3, memory_format=lib.contiguous_format).stride() == (3, 1)
        # the new_* constructors take no memory_format: C order, whatever the layout
        for y in (xc.new_empty((2, 3, 4, 5)), xc.new_zeros(2, 3, 4, 5), xc.new_ones((2, 3, 4, 5)),
                  xc.new_full((2, 3, 4, 5), 1.0), xc.new_empty(2, 3, 4, 5, requires_grad=True)):
            assert y.stride() == (60, 20, 5, 1) and y.dtype == xc.dtype
        assert xc.new_zeros(2, device="cpu", requires_grad=True).requires_grad


def test_a_lazy_tensor_is_contiguous_in_c_order():
    def lazy():
        x = ng.rand(30, 10, 20, 10, requires_grad=True)
        y = x * 2.0
        z = ng.exp(y) * y  # (an unevaluated expression at this size)
        return z

    z = lazy()
    if type(z) is not ng.Tensor._Lazy:
        pytest.skip("this configuration evaluates the expression at once")
    assert z.is_contiguous() and not z.is_contiguous(memory_format=ng.channels_last)
    assert type(z) is ng.Tensor._Lazy  # (neither question evaluated it)
    assert ng.zeros_like(lazy()).stride() == (2000, 200, 10, 1)
    z = lazy()
    c = z.contiguous(memory_format=ng.channels_last)
    assert c.stride() == (2000, 1, 100, 10) and c.grad_fn.name() == "CloneBackward0"
    np.testing.assert_array_equal(c.detach().numpy(), z.detach().numpy())


# ---------------------------------------------------------------- modules


def test_module_to_lays_out_4d_parameters_buffers_and_grads():
    results = []
    for lib in (ng, torch):
        m = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4), lib.nn.Linear(4, 2))
        m[0].weight.grad = lib.ones_like(m[0].weight)
        m[0].register_buffer("b4", lib.zeros(1, 4, 2, 2))
        w, g = m[0].weight, m[0].weight.grad
        assert m.to(memory_format=lib.channels_last) is m
        assert m[0].weight is w and m[0].weight.grad is g  # (the same objects, new data)
        assert isinstance(m[0].weight, lib.nn.Parameter) and m[0].weight.requires_grad
        results.append((m[0].weight.stride(), g.stride(), m[0].b4.stride(), m[2].weight.stride(),
                        m[0].bias.stride(), m[1].running_mean.stride()))
        m2 = lib.nn.Conv2d(3, 4, 3).to(lib.float64, memory_format=lib.channels_last)
        results.append((str(m2.weight.dtype).split(".")[-1], m2.weight.stride()))
        m2.to(memory_format=lib.contiguous_format)
        results.append(m2.weight.stride())
        m3 = lib.nn.Conv3d(2, 3, 2).to(memory_format=lib.channels_last_3d)
        results.append(m3.weight.stride())
        results.append(_outcome(lambda: lib.nn.Conv3d(2, 3, 2).to(
            memory_format=lib.channels_last)))  # (a 5-d weight: PyTorch converts it too)
    assert results[:5] == results[5:]


def _cnn(lib, fmt_name, train=True):
    rs = np.random.RandomState(1)
    m = lib.nn.Sequential(
        lib.nn.Conv2d(3, 4, 3, padding=1), lib.nn.BatchNorm2d(4), lib.nn.ReLU(),
        lib.nn.MaxPool2d(2), lib.nn.Conv2d(4, 5, 3, groups=1), lib.nn.BatchNorm2d(5),
        lib.nn.GELU(), lib.nn.AdaptiveAvgPool2d(1), lib.nn.Flatten())
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.tensor(rs.randn(*p.shape).astype(np.float32)))
    m.train(train)
    fmt = getattr(lib, fmt_name)
    m = m.to(memory_format=fmt)
    a = np.random.RandomState(0).randn(2, 3, 8, 8).astype(np.float32)
    x = lib.tensor(a).to(memory_format=fmt).requires_grad_()
    y = m(x)
    (y * lib.arange(5.0)).sum().backward()
    return ([y.detach().numpy(), x.grad.numpy()]
            + [p.grad.numpy() for p in m.parameters()]
            + [b.numpy() for b in m.buffers() if b.dtype == lib.float32])


@pytest.mark.parametrize("train", [True, False])
def test_a_cnn_on_channels_last_inputs_matches_contiguous_ones_and_pytorch(train):
    want = _cnn(torch, "contiguous_format", train)
    for fmt in ("channels_last", "contiguous_format"):
        got = _cnn(ng, fmt, train)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)
    for g, w in zip(_cnn(torch, "channels_last", train), want):  # (PyTorch agrees with itself)
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("op", ["conv2d", "batch_norm", "batch_norm_eval", "relu", "add_bias",
                                "mul", "sigmoid", "max_pool2d", "interpolate"])
def test_ops_on_channels_last_inputs(op):
    a = np.random.RandomState(0).randn(2, 3, 6, 5).astype(np.float32)
    w = np.random.RandomState(1).randn(4, 3, 3, 3).astype(np.float32)
    out = []
    for lib in (ng, torch):
        F = lib.nn.functional
        x = lib.tensor(a).contiguous(memory_format=lib.channels_last).requires_grad_()
        fn = {
            "conv2d": lambda x: F.conv2d(x, lib.tensor(w), padding=1),
            "batch_norm": lambda x: F.batch_norm(x, lib.zeros(3), lib.ones(3),
                                                 lib.arange(1.0, 4.0), None, training=True),
            "batch_norm_eval": lambda x: F.batch_norm(x, lib.arange(3.0), lib.ones(3) * 2,
                                                      training=False),
            "relu": F.relu,
            "add_bias": lambda x: x + lib.arange(3.0).reshape(3, 1, 1),
            "mul": lambda x: x * x,
            "sigmoid": lib.sigmoid,
            "max_pool2d": lambda x: F.max_pool2d(x, 2),
            "interpolate": lambda x: F.interpolate(x, scale_factor=2),
        }[op]
        y = fn(x)
        y_plain = fn(lib.tensor(a))
        (y * y).sum().backward()
        out.append((y.detach().numpy(), x.grad.numpy(), y.stride(), y_plain.detach().numpy()))
    (y_g, g_g, st_g, plain_g), (y_w, g_w, st_w, _) = out
    np.testing.assert_allclose(y_g, y_w, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(g_g, g_w, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(y_g, plain_g, rtol=1e-5, atol=1e-6)
    if op in ("relu", "add_bias", "mul", "sigmoid"):
        # elementwise ops follow their input's layout, as PyTorch's TensorIterator
        assert st_g == st_w == (90, 1, 15, 3)


# ---------------------------------------------------------------- CUDA


@on_cuda
def test_cuda_copies_keep_and_take_the_layout():
    x = ng.randn(2, 3, 4, 5, requires_grad=True)
    g = x.cuda(memory_format=ng.channels_last)
    assert g.is_cuda and g.stride() == (60, 1, 15, 3)
    assert g.is_contiguous(memory_format=ng.channels_last)
    for y in (ng.zeros_like(g), ng.rand_like(g), ng.full_like(g, 2.0), g.clone(),
              g.to(ng.float64), g.cpu(), ng.empty(2, 3, 4, 5, device="cuda",
                                                  memory_format=ng.channels_last)):
        assert y.stride() == (60, 1, 15, 3)
    back = g.cpu()
    np.testing.assert_array_equal(back.detach().numpy(), x.detach().numpy())
    assert (ng.full_like(g, 2.0).cpu().numpy() == 2.0).all()
    c = g.contiguous()
    assert c.stride() == (60, 20, 5, 1) and c.grad_fn.name() == "CloneBackward0"
    (back * ng.arange(120.0).reshape(2, 3, 4, 5)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy().ravel(), np.arange(120.0))
