"""More of PyTorch's API, checked against PyTorch itself: values, gradients, dtypes, node
names, errors; script plumbing (threads, backends, autocast, GradScaler, compile)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)


def _pair(a, requires_grad=True):
    return (ng.tensor(a, requires_grad=requires_grad),
            torch.tensor(a, requires_grad=requires_grad))


def _same(ours, theirs):
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10,
                               atol=1e-12, equal_nan=True)


def _error(fn_ours, fn_theirs):
    with pytest.raises(Exception) as theirs:
        fn_theirs()
    with pytest.raises(type(theirs.value)) as ours:
        fn_ours()
    assert str(ours.value) == str(theirs.value).split(" (Triggered internally")[0]


SPECIALS = [float("nan"), float("inf"), -float("inf"), 1.5, -0.0, 0.0, -2.0]


@pytest.mark.parametrize("name", ["isnan", "isinf", "isposinf", "isneginf", "isfinite",
                                  "isreal", "nan_to_num"])
def test_classification_and_nan_to_num_match_torch(name):
    x, tx = _pair(np.array(SPECIALS), requires_grad=False)
    _same(getattr(ng, name)(x), getattr(torch, name)(tx))
    _same(getattr(x, name)(), getattr(tx, name)())
    i, ti = ng.tensor([1, 2]), torch.tensor([1, 2])
    _same(getattr(ng, name)(i), getattr(torch, name)(ti))


def test_nan_to_num_gradient_and_inplace():
    x, tx = _pair(np.array(SPECIALS))
    y, ty = ng.nan_to_num(x, nan=1.0, neginf=-5.0), torch.nan_to_num(tx, nan=1.0, neginf=-5.0)
    _same(y, ty)
    assert y.grad_fn.name() == ty.grad_fn.name() == "NanToNumBackward0"
    y.sum().backward()
    ty.sum().backward()
    _same(x.grad, tx.grad)
    z, tz = _pair(np.array(SPECIALS), requires_grad=False)
    assert z.nan_to_num_(posinf=3.0) is z
    tz.nan_to_num_(posinf=3.0)
    _same(z, tz)


UNARY = ["lgamma", "digamma", "sinc", "deg2rad", "rad2deg", "sgn"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_math_values_gradients_and_nodes(name):
    x, tx = _pair(np.array([-2.5, -0.7, 0.3, 1.0, 4.2, 11.0]))
    y, ty = getattr(x, name)(), getattr(tx, name)()
    _same(y, ty)
    assert y.grad_fn.name() == ty.grad_fn.name()
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(force=True), rtol=1e-9, atol=1e-12)


def test_special_function_poles_and_int_inputs():
    v = [0.0, -0.0, -1.0, -3.0, float("inf"), -float("inf")]
    x, tx = _pair(np.array(v), requires_grad=False)
    _same(ng.lgamma(x), torch.lgamma(tx))
    _same(ng.digamma(x), torch.digamma(tx))
    for name in UNARY:
        _same(getattr(ng, name)(ng.tensor([1, 2])), getattr(torch, name)(torch.tensor([1, 2])))


def test_polygamma_matches_torch_away_from_poles():
    x, tx = _pair(np.array([-1.5, 0.3, 2.0, 7.0, 25.0]))
    for n in (0, 1, 2, 3):
        np.testing.assert_allclose(ng.polygamma(n, x).detach().numpy(),
                                   torch.polygamma(n, tx).detach().numpy(), rtol=1e-9)
    y, ty = x.polygamma(1), tx.polygamma(1)
    assert y.grad_fn.name() == ty.grad_fn.name() == "PolygammaBackward0"
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-9)


BINARY = [
    ("logaddexp", lambda m, a, b: m.logaddexp(a, b)),
    ("logaddexp2", lambda m, a, b: m.logaddexp2(a, b)),
    ("xlogy", lambda m, a, b: m.xlogy(a, b.abs())),
    ("copysign", lambda m, a, b: m.copysign(a, b)),
    ("clamp_min", lambda m, a, b: m.clamp_min(a, b)),
    ("clamp_max", lambda m, a, b: a.clamp_max(b)),
    ("clamp_min_scalar", lambda m, a, b: m.clamp_min(a, 0.1) + b),
    ("float_power", lambda m, a, b: m.float_power(a.abs(), b)),
    ("addcmul", lambda m, a, b: m.addcmul(a, a, b, value=-2)),
    ("addcdiv", lambda m, a, b: a.addcdiv(a, b, value=0.5)),
]


@pytest.mark.parametrize("name,fn", BINARY, ids=[b[0] for b in BINARY])
def test_binary_math_values_gradients_and_nodes(name, fn):
    a = np.array([[-1.2, 0.4, 2.0], [0.0, -0.3, 1.1]])
    b = np.array([0.7, -1.5, 0.9])
    (x, tx), (y, ty) = _pair(a), _pair(b)
    out, tout = fn(ng, x, y), fn(torch, tx, ty)
    _same(out, tout)
    assert out.grad_fn.name() == tout.grad_fn.name()
    g = RNG.standard_normal(tuple(tout.shape))
    out.backward(ng.tensor(g))
    tout.backward(torch.tensor(g))
    for p, tp in ((x, tx), (y, ty)):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_heaviside_and_inplace_clamps_and_addc():
    x, tx = _pair(np.array([-1.0, 0.0, 2.0]), requires_grad=False)
    v, tv = ng.tensor(0.5, dtype=ng.float64), torch.tensor(0.5, dtype=torch.float64)
    _same(ng.heaviside(x, v), torch.heaviside(tx, tv))
    _error(lambda: ng.heaviside(x, ng.tensor([1])), lambda: torch.heaviside(tx, torch.tensor([1])))
    _same(x.clone().clamp_min_(0.5), tx.clone().clamp_min_(0.5))
    _same(x.clone().clamp_max_(0.5), tx.clone().clamp_max_(0.5))
    _same(x.clone().addcmul_(x, x, value=3), tx.clone().addcmul_(tx, tx, value=3))
    i, ti = ng.tensor([1, 2]), torch.tensor([1, 2])
    _error(lambda: ng.addcdiv(i, i, i), lambda: torch.addcdiv(ti, ti, ti))
    _error(lambda: ng.logaddexp(i, i), lambda: torch.logaddexp(ti, ti))
    _same(ng.copysign(i, -1), torch.copysign(ti, -1))
    _same(ng.float_power(i, 2), torch.float_power(ti, 2))
    _same(ng.clamp_min(i, 1.5), torch.clamp_min(ti, 1.5))


@pytest.mark.parametrize("fn_name", ["var_mean", "std_mean"])
@pytest.mark.parametrize("kwargs", [{}, {"dim": 1}, {"dim": 0, "keepdim": True, "correction": 0},
                                    {"dim": (0, 1), "unbiased": False}])
def test_var_mean_and_std_mean(fn_name, kwargs):
    x, tx = _pair(RNG.standard_normal((2, 3)))
    (a, b), (ta, tb) = getattr(ng, fn_name)(x, **kwargs), getattr(torch, fn_name)(tx, **kwargs)
    assert type(getattr(ng, fn_name)(x.detach())) is tuple
    _same(a, ta)
    _same(b, tb)
    assert a.grad_fn.name() == ta.grad_fn.name() and b.grad_fn is a.grad_fn
    (a.sum() * 2 + b.sum() * 3).backward()
    (ta.sum() * 2 + tb.sum() * 3).backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-9)


SHAPES = [
    ("movedim", lambda m, x: m.movedim(x, (0, 2), (2, 0))),
    ("moveaxis", lambda m, x: x.moveaxis(-1, 0)),
    ("swapaxes", lambda m, x: m.swapaxes(x, 0, 2)),
    ("swapdims", lambda m, x: x.swapdims(1, 2)),
    ("unflatten", lambda m, x: x.unflatten(1, (3, -1))),
    ("reshape_as", lambda m, x: x.reshape_as(x.transpose(0, 1))),
    ("sum_to_size", lambda m, x: x.sum_to_size(1, 3, 1)),
    ("rot90", lambda m, x: m.rot90(x, -1, (2, 1))),
    ("diff", lambda m, x: m.diff(x, 2, 1, append=x[:, :1] * 2)),
    ("broadcast_tensors", lambda m, x: m.broadcast_tensors(x, x[0, :, :1])[1]),
    ("kron", lambda m, x: m.kron(x[0], x[1, :2])),
    ("tensordot", lambda m, x: m.tensordot(x, x, dims=([0, 1], [0, 1]))),
    ("tensordot_int", lambda m, x: m.tensordot(x[0], x[1].t(), 1)),
    ("inner", lambda m, x: m.inner(x[0], x[1])),
    ("vdot", lambda m, x: m.vdot(x[0, 0], x[1, 1])),
    ("cross", lambda m, x: m.cross(x, x.flip(0), dim=1)),
    ("linalg_cross", lambda m, x: m.linalg.cross(x[..., :1].expand(2, 3, 3), x[:, :, :1].mT)),
    ("mT", lambda m, x: x.mT),
    ("mH", lambda m, x: x.mH),
    ("H", lambda m, x: x[0].H),
    ("dist", None),
]


@pytest.mark.parametrize("name,fn", [s for s in SHAPES if s[1]], ids=[s[0] for s in SHAPES
                                                                       if s[1]])
def test_shape_and_product_functions(name, fn):
    x, tx = _pair(RNG.standard_normal((2, 3, 2)))
    out, tout = fn(ng, x), fn(torch, tx)
    _same(out, tout)
    assert out.grad_fn.name() == tout.grad_fn.name()
    g = RNG.standard_normal(tuple(tout.shape))
    out.backward(ng.tensor(g))
    tout.backward(torch.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("fn", [
    lambda m: m.addmv(m.ones(2, dtype=m.float64), m.ones(2, 3, dtype=m.float64) * 2,
                      m.arange(3.0, dtype=m.float64), beta=0.5, alpha=3),
    lambda m: m.ones(2, 1, dtype=m.float64).addmm(m.ones(2, 3, dtype=m.float64),
                                                  m.arange(12.0, dtype=m.float64).view(3, 4),
                                                  beta=2, alpha=-1),
    lambda m: m.baddbmm(m.ones(2, 2, dtype=m.float64), m.ones(3, 2, 4, dtype=m.float64),
                        m.ones(3, 4, 2, dtype=m.float64), beta=0),
    lambda m: m.ones(2, 2, dtype=m.float64).addbmm(m.ones(3, 2, 4, dtype=m.float64),
                                                   m.ones(3, 4, 2, dtype=m.float64)),
])
def test_scaled_matrix_products(fn):
    _same(fn(ng), fn(torch))


def test_broadcast_shapes_meshgrid_and_errors():
    assert ng.broadcast_shapes((2, 1), (3,), 1) == torch.broadcast_shapes((2, 1), (3,), 1)
    _error(lambda: ng.broadcast_shapes((2, 3), (3, 2)),
           lambda: torch.broadcast_shapes((2, 3), (3, 2)))
    _error(lambda: ng.broadcast_tensors(ng.ones(2), ng.ones(3)),
           lambda: torch.broadcast_tensors(torch.ones(2), torch.ones(3)))
    a, b = ng.arange(2.0), ng.arange(3.0)
    ta, tb = torch.arange(2.0), torch.arange(3.0)
    for indexing in ("ij", "xy"):
        for g, tg in zip(ng.meshgrid(a, b, indexing=indexing),
                         torch.meshgrid(ta, tb, indexing=indexing)):
            _same(g, tg)
    with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
        ng.meshgrid(a, b)
    x, tx = ng.ones(2, 3), torch.ones(2, 3)
    for f in (lambda m, t: m.diff(t[0, 0]), lambda m, t: m.diff(t, n=-1),
              lambda m, t: m.rot90(t[0]), lambda m, t: m.rot90(t, 1, [0, 0]),
              lambda m, t: t.unflatten(1, (2, 2)), lambda m, t: t.sum_to_size(3, 3),
              lambda m, t: t.movedim((0, 1), (0,)), lambda m, t: m.inner(t, t[:, :2]),
              lambda m, t: m.vdot(t, t[0]), lambda m, t: m.linalg.cross(t, t[:, :2]),
              lambda m, t: m.ones(3).H, lambda m, t: m.ones(2).mH):
        _error(lambda: f(ng, x), lambda: f(torch, tx))
    with pytest.warns(UserWarning, match="without specifying the dim arg is deprecated"):
        ng.cross(ng.ones(2, 3), ng.ones(2, 3))


def test_searchsorted_and_bucketize():
    seq, tseq = ng.tensor([1, 3, 5, 7]), torch.tensor([1, 3, 5, 7])
    v, tv = ng.tensor([[3, 6, 9], [0, 5, 7]]), torch.tensor([[3, 6, 9], [0, 5, 7]])
    for kw in ({}, {"right": True}, {"side": "right"}, {"out_int32": True}):
        _same(ng.searchsorted(seq, v, **kw), torch.searchsorted(tseq, tv, **kw))
    rows, trows = ng.tensor([[1, 3, 5, 7], [2, 4, 6, 8]]), torch.tensor([[1, 3, 5, 7],
                                                                           [2, 4, 6, 8]])
    _same(ng.searchsorted(rows, v), torch.searchsorted(trows, tv))
    _same(ng.searchsorted(seq, 4), torch.searchsorted(tseq, 4))
    _same(ng.bucketize(v, seq, right=True), torch.bucketize(tv, tseq, right=True))
    _error(lambda: ng.searchsorted(seq, v, side="left", right=True),
           lambda: torch.searchsorted(tseq, tv, side="left", right=True))
    _error(lambda: ng.searchsorted(seq, v, side="up"),
           lambda: torch.searchsorted(tseq, tv, side="up"))
    _error(lambda: ng.searchsorted(rows[:1], seq[:3]), lambda: torch.searchsorted(trows[:1],
                                                                                  tseq[:3]))


def test_tensor_conveniences():
    x, tx = ng.ones(2, 3), torch.ones(2, 3)
    _same(x.type_as(ng.tensor([1])), tx.type_as(torch.tensor([1])))
    assert x[1:, 1:].storage_offset() == tx[1:, 1:].storage_offset() == 4
    assert x.storage_offset() == 0 and not x.is_pinned()
    assert x.share_memory_() is x
    if not ng.cuda.is_available():
        _error(lambda: x.pin_memory(), lambda: tx.pin_memory())


# ---------------------------------------------------------------- plumbing


def test_threads_determinism_precision_and_compile():
    n = ng.get_num_threads()
    try:
        ng.set_num_threads(1)
        assert ng.get_num_threads() == 1
    finally:
        ng.set_num_threads(n)
    with pytest.raises(RuntimeError, match="Number of threads must be positive"):
        ng.set_num_threads(0)
    assert ng.get_num_interop_threads() >= 1
    assert not ng.are_deterministic_algorithms_enabled()
    ng.use_deterministic_algorithms(True)
    try:
        assert ng.are_deterministic_algorithms_enabled()
    finally:
        ng.use_deterministic_algorithms(False)
    assert ng.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
    ng.set_float32_matmul_precision("high")
    try:
        assert ng.get_float32_matmul_precision() == "high"
    finally:
        ng.set_float32_matmul_precision("highest")
    model = ng.nn.Linear(2, 2)
    assert ng.compile(model) is model
    assert ng.compile(mode="max-autotune")(model) is model


def test_backends_flags():
    b = ng.backends
    assert (b.cudnn.enabled, b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.allow_tf32) == (
        torch.backends.cudnn.enabled, torch.backends.cudnn.benchmark,
        torch.backends.cudnn.deterministic, torch.backends.cudnn.allow_tf32)
    assert b.cuda.matmul.allow_tf32 is torch.backends.cuda.matmul.allow_tf32
    assert not b.cudnn.is_available() and not b.mps.is_available() and not b.mps.is_built()
    b.cudnn.benchmark = True
    b.cudnn.benchmark = False
    import numbagrad.backends.cudnn as cudnn  # noqa: F401 (the spelling scripts use)


def test_autocast_runs_code_unchanged():
    x = ng.ones(2, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with ng.autocast("cpu", enabled=False):
            assert (x @ x).dtype is ng.float32
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'tpu'"):
        ng.amp.autocast("tpu")

    @ng.autocast("cpu", enabled=False)
    def f(t):
        return t * 2

    _same(f(x), torch.ones(2, 2) * 2)
    if not ng.cuda.is_available():
        with pytest.warns(UserWarning, match="CUDA is not available"):
            with ng.amp.autocast("cuda"):
                pass
    with pytest.warns(FutureWarning, match="torch.cuda.amp.autocast"):
        ng.cuda.amp.autocast(enabled=False)


def _train(m, scaler_args, grads_by_step):
    """Steps of SGD through a GradScaler with the given raw gradients (some inf); the
    parameter, the scale and the growth tracker after each step."""
    p = m.nn.Parameter(m.tensor([1.0, -2.0]))
    opt = m.optim.SGD([p], lr=0.1)
    scaler = m.amp.GradScaler("cpu", **scaler_args)
    out = []
    for step, g in enumerate(grads_by_step):
        opt.zero_grad()
        loss = scaler.scale((p * m.tensor(g)).sum())
        loss.backward()
        if step % 2:
            scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
        out.append((p.detach().numpy().copy(), scaler.get_scale(), scaler.state_dict()))
    return out


def test_grad_scaler_matches_torch_cpu_grad_scaler():
    grads = [[1.0, 2.0], [1.0, float("inf")], [0.5, 0.5], [1.0, 1.0], [float("nan"), 1.0],
             [2.0, 2.0], [1.0, 3.0]]
    for args in ({"growth_interval": 2, "init_scale": 8.0}, {}, {"enabled": False}):
        ours, theirs = _train(ng, args, grads), _train(torch, args, grads)
        for (p, s, d), (tp, ts, td) in zip(ours, theirs):
            np.testing.assert_array_equal(p, tp)
            assert s == ts and d == td


def test_grad_scaler_errors_and_state():
    p = ng.nn.Parameter(ng.ones(2))
    opt = ng.optim.SGD([p], lr=0.1)
    s = ng.amp.GradScaler("cpu")
    assert s.get_scale() == 65536.0 and s.is_enabled()
    with pytest.raises(AssertionError, match="Attempted step but _scale is None"):
        s.step(opt)
    s.scale(p.sum()).backward()
    s.unscale_(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        s.unscale_(opt)
    s.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        s.step(opt)
    s.update()
    t = ng.amp.GradScaler("cpu")
    t.load_state_dict(s.state_dict())
    assert t.state_dict() == s.state_dict()
    with pytest.raises(RuntimeError, match="The source state dict is empty"):
        t.load_state_dict({})
    with pytest.warns(FutureWarning, match="torch.cuda.amp.GradScaler"):
        ng.cuda.amp.GradScaler(enabled=False)


def test_cuda_seeding_is_available_without_cuda():
    ng.cuda.manual_seed(0)
    ng.cuda.manual_seed_all(0)
    assert ng.cuda.device_count() == (1 if ng.cuda.is_available() else 0) or \
        ng.cuda.is_available()
