"""Every registry op: forward against NumPy, gradients against finite differences, node names."""

from __future__ import annotations

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.autograd import gradcheck, gradgradcheck
from numbagrad.ops import REGISTRY
from op_db import OP_DB, OPS, base_and_layout


# ops that need two devices: tested in test_device.py (forward, gradient, node name)
TWO_DEVICE_OPS = {"to_device"}


def test_every_registry_op_has_a_row():
    assert sorted(set(REGISTRY) - TWO_DEVICE_OPS) == sorted(OP_DB)


def _cases(kind):
    for info in OPS:
        if kind == "grad" and not info.grad:
            continue
        for shape in info.shapes:
            yield pytest.param(info, shape, id=f"{info.name}-{shape}")


def _build(info, shape, dtype, seed=0, requires_grad=False):
    rng = np.random.default_rng(seed)
    shapes = shape if info.arity > 1 else (shape,)
    bases, tfns, afns = [], [], []
    for s in shapes:
        b, tf, af = base_and_layout(s, dtype, info, rng)
        bases.append(b)
        tfns.append(tf)
        afns.append(af)
    tensors = [ng.tensor(b, requires_grad=requires_grad) for b in bases]
    return bases, tensors, tfns, afns


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("info,shape", list(_cases("forward")))
def test_forward_matches_numpy(info, shape, dtype):
    bases, tensors, tfns, afns = _build(info, shape, dtype)
    out = info.call(*[f(t) for f, t in zip(tfns, tensors)])
    with np.errstate(all="ignore"):
        ref = np.asarray(info.ref(*[f(b) for f, b in zip(afns, bases)]))
    assert tuple(out.shape) == ref.shape
    got = out.numpy()
    if got.dtype == np.bool_ or got.dtype.kind == "i":
        np.testing.assert_array_equal(got, ref)
    else:
        if info.same_dtype:
            assert got.dtype == np.dtype(dtype)
        rtol = info.rtol32 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("info", [i for i in OPS if i.int_ok], ids=lambda i: i.name)
def test_forward_int64(info):
    bases, tensors, tfns, afns = _build(info, info.shapes[1], "int64")
    out = info.call(*[f(t) for f, t in zip(tfns, tensors)])
    ref = np.asarray(info.ref(*[f(b) for f, b in zip(afns, bases)]))
    np.testing.assert_array_equal(out.numpy(), ref)


@pytest.mark.parametrize("info,shape", list(_cases("grad")))
def test_gradcheck(info, shape):
    bases, tensors, tfns, _ = _build(info, shape, "float64", requires_grad=True)

    def fn(*ts):
        return info.call(*[f(t) for f, t in zip(tfns, ts)])

    assert gradcheck(fn, tuple(tensors))


@pytest.mark.parametrize("info", [i for i in OPS if i.grad], ids=lambda i: i.name)
def test_grad_fn_name(info):
    shape = info.shapes[1] if len(info.shapes) > 1 else info.shapes[0]
    _, tensors, tfns, _ = _build(info, shape, "float32", requires_grad=True)
    out = info.call(*[f(t) for f, t in zip(tfns, tensors)])
    expected = info.node or "".join(p.capitalize() for p in info.name.split("_")) + "Backward0"
    # (PyTorch's hand-written C++ nodes, CopySlices among them, name their namespace)
    cpp = "torch::autograd::" if expected == "CopySlices" else ""
    assert out.grad_fn.name() == cpp + expected
    assert repr(out.grad_fn).startswith(f"<{expected} object at 0x")


@pytest.mark.parametrize("info", [i for i in OPS if i.grad], ids=lambda i: i.name)
def test_float32_backward_matches_float64(info):
    """The compiled float32 rules agree with float64 (no precision lost to the kernels)."""
    shape = info.shapes[1] if len(info.shapes) > 1 else info.shapes[0]
    grads = {}
    for dtype in ("float32", "float64"):
        _, tensors, tfns, _ = _build(info, shape, dtype, requires_grad=True)
        out = info.call(*[f(t) for f, t in zip(tfns, tensors)])
        out.sum().backward()
        grads[dtype] = [t.grad for t in tensors]
        for t in tensors:
            if t.grad is not None:
                assert t.grad.dtype.name == dtype
    for g32, g64 in zip(grads["float32"], grads["float64"]):
        if g64 is not None:
            np.testing.assert_allclose(g32.numpy(), g64.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("info", [i for i in OPS if i.grad and i.gradgrad], ids=lambda i: i.name)
def test_gradgradcheck(info):
    shape = info.shapes[1] if len(info.shapes) > 1 else info.shapes[0]
    _, tensors, tfns, _ = _build(info, shape, "float64", requires_grad=True)

    def fn(*ts):
        return info.call(*[f(t) for f, t in zip(tfns, ts)])

    assert gradgradcheck(fn, tuple(tensors))


@pytest.fixture
def all_paths(monkeypatch):
    """``run(fn)``: ``fn()`` eagerly, then with every elementwise result deferred and every
    backward region fused whatever its size; both results."""
    from numbagrad.autograd.grad_mode import backward_fusion
    from numbagrad.ops import lazy
    from numbagrad.ops.registry import Elementwise

    def forget_plans():  # (an op's plan keeps the small-size bound, the lazy one included)
        for op in REGISTRY.values():
            if isinstance(op, Elementwise):
                op._plans.clear()

    def run(fn):
        monkeypatch.setattr(lazy, "ENABLED", False)
        monkeypatch.setattr(backward_fusion, "enabled", False)
        eager = fn()
        monkeypatch.setattr(lazy, "ENABLED", True)
        monkeypatch.setattr(backward_fusion, "enabled", True)
        monkeypatch.setattr(lazy, "DEFER_MIN_ITEMS", 0)
        monkeypatch.setattr(backward_fusion, "min_items", 0)
        forget_plans()
        try:
            return eager, fn()
        finally:
            monkeypatch.undo()
            forget_plans()

    return run


@pytest.mark.parametrize("info", [i for i in OPS if i.lazy_and_fused], ids=lambda i: i.name)
def test_lazy_and_fused_paths_match_the_eager_one(info, all_paths):
    shape = info.shapes[1] if len(info.shapes) > 1 else info.shapes[0]

    def run():
        _, tensors, tfns, _ = _build(info, shape, "float32", requires_grad=info.grad)
        out = info.call(*[f(t) for f, t in zip(tfns, tensors)])
        deferred = type(out) is ng.Tensor._Lazy  # (read before anything evaluates it)
        if info.grad:
            # (an elementwise tail and a whole sum: a region the fusion runs as one loop)
            (out * out.exp()).sum().backward()
        return out.detach().numpy(), [None if t.grad is None else t.grad.numpy()
                                      for t in tensors], deferred

    (out1, grads1, eager_deferred), (out2, grads2, deferred) = all_paths(run)
    assert not eager_deferred
    op = REGISTRY[info.name]
    assert deferred == (op.kind == "elementwise" and op._defers)
    assert out1.dtype == out2.dtype and out1.shape == out2.shape
    np.testing.assert_allclose(out2, out1, rtol=1e-6, atol=1e-6)
    for g1, g2 in zip(grads1, grads2):
        assert (g1 is None) == (g2 is None)
        if g1 is not None:
            np.testing.assert_allclose(g2, g1, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- fused and counting paths


def test_bool_sum_is_an_int64_count_over_any_dims():
    m = np.random.default_rng(0).random((3, 4, 5)) > 0.5
    t = ng.tensor(m)
    assert t.sum().dtype is ng.int64 and t.sum().item() == m.sum()
    for dim, keep in ((0, False), ((0, 2), True), (-1, True), ((0, 1, 2), False)):
        got = t.sum(dim=dim, keepdim=keep)
        assert got.dtype is ng.int64
        np.testing.assert_array_equal(got.numpy(), m.sum(axis=dim, keepdims=keep))
    assert ng.zeros(0, 3).bool().sum(0).tolist() == [0, 0, 0]


@pytest.mark.parametrize("op", ["mul", "div", "sub", "add", "maximum", "pow"])
def test_one_tensor_as_both_inputs_gets_the_sum_of_both_rules(op):
    # x op x: the backward runs one kernel computing rule0 + rule1 (checked against
    # finite differences and the hand-derived value)
    x = ng.tensor([0.5, 1.5, 2.0, 3.0], dtype=ng.float64, requires_grad=True)
    fn = getattr(ng, op)
    assert gradcheck(lambda t: fn(t, t), (x,))
    y = fn(x, x)
    y.sum().backward()
    assert any(key[0] == "both" for key in y.grad_fn.op._vjp_kernels)  # the fused kernel ran
    v = x.detach().numpy()
    expected = {"mul": 2 * v, "div": 0 * v, "sub": 0 * v, "add": 2 + 0 * v,
                "maximum": 1 + 0 * v, "pow": v**v * (np.log(v) + 1)}[op]
    np.testing.assert_allclose(x.grad.numpy(), expected)


def test_post_hook_on_a_same_input_node_sees_both_gradients():
    x = ng.tensor([2.0, 3.0], requires_grad=True)
    y = x * x
    seen = []
    y.grad_fn.register_hook(lambda gi, go: seen.append([g.tolist() for g in gi]))
    y.sum().backward()
    assert seen == [[[2.0, 3.0], [2.0, 3.0]]]
    assert x.grad.tolist() == [4.0, 6.0]


def test_elementwise_ops_are_plain_functions_on_every_path():
    # numbagrad.sin, Tensor.sin and the operators are plain functions made by one factory per
    # op (ops/dispatch.py, make_function), which differ only in how they refuse a bad operand:
    # small 1-d tensors take their inline path, anything else the op's general one
    assert ng.sin.__name__ == "sin" and ng.Tensor.sin is ng.sin.method
    # (numbagrad.add itself takes alpha=, so the operators use the op's plain function)
    add = ng.ops.elementwise.add.function
    assert ng.Tensor.__mul__ is ng.mul.operator and ng.Tensor.__radd__ is add.operator
    assert ng.Tensor.sin.__name__ == "sin" and ng.Tensor.__mul__.__name__ == "mul"
    assert ng.sin.op is ng.ops.elementwise.sin and ng.Tensor.__add__.op is ng.ops.elementwise.add
    with pytest.raises(TypeError, match=r"sin\(\) takes 1 positional argument but 2 were given"):
        ng.sin(ng.ones(1), ng.ones(1))
    a = np.array([0.5, -1.5, 2.0])
    b = np.array([3.0, 0.25, -1.0])
    f64 = ng.float64
    for x_grad, w_grad in ((True, False), (False, True), (True, True)):
        x = ng.tensor(a, dtype=f64, requires_grad=x_grad)
        w = ng.tensor(b, dtype=f64, requires_grad=w_grad)
        (ng.sin(x * w) + w).backward(ng.ones(3, dtype=f64))
        if x_grad:
            np.testing.assert_allclose(x.grad.numpy(), np.cos(a * b) * b, rtol=1e-12)
        if w_grad:
            np.testing.assert_allclose(w.grad.numpy(), np.cos(a * b) * a + 1, rtol=1e-12)
        assert (x.grad is None) == (not x_grad) and (w.grad is None) == (not w_grad)
    # views of a leaf (their flags come through the properties), the same tensor twice, a
    # scalar and a strided input
    x = ng.tensor(np.r_[a, a], dtype=f64, requires_grad=True)
    v = x[1:4]
    y = ng.sin(v) * v + v * v + x[::2] * 2.0 - (-v)
    y.backward(ng.ones(3, dtype=f64))
    u = np.r_[a, a][1:4]
    expected = np.zeros(6)
    expected[1:4] += np.cos(u) * u + np.sin(u) + 2 * u + 1
    expected[::2] += 2.0
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)
    assert y.grad_fn.name() == "SubBackward0"
    # no grad recorded: under no_grad, or for a comparison
    with ng.no_grad():
        assert ng.mul(x[:3], v).grad_fn is None
    assert not ng.lt(v, v).requires_grad


@pytest.mark.parametrize("dtype", [ng.float32, ng.float64])
def test_a_small_tensor_and_a_python_number_take_the_scalar_loop(monkeypatch, dtype):
    # ``y + 2``, ``3 * z``: the op's flat loop with the number as a scalar (ops/dispatch.py,
    # make_function); the same values, dtypes, nodes and gradients as the general path
    from numbagrad.ops.registry import REGISTRY, Elementwise

    general = []
    real = Elementwise._call
    monkeypatch.setattr(Elementwise, "_call",
                        lambda self, *a: general.append(self.name) or real(self, *a))
    a = np.array([[0.5, -1.5], [2.0, 0.25]])
    ones = ng.ones(2, 2, dtype=dtype)
    cases = [(lambda t: t + 2, "add", 2), (lambda t: 3 * t, "mul", 3),
             (lambda t: t - 1.5, "sub", 1.5), (lambda t: 1 - t, "rsub", 1),
             (lambda t: t / 4, "div", 4),
             # (numbagrad.maximum refuses a number, as PyTorch's: the op's own function here)
             (lambda t: ng.ops.elementwise.maximum.function(t, 0.3), "maximum", 0.3)]
    for case, name, number in cases:
        del general[:]
        x = ng.tensor(a, dtype=dtype, requires_grad=True)
        y = case(x)
        y.backward(ones)
        assert general == []
        x2 = ng.tensor(a, dtype=dtype, requires_grad=True)
        y2 = real(REGISTRY[name], (x2, number))  # the general path: the number as a 0-d array
        y2.backward(ones)
        assert y.dtype is y2.dtype is dtype and y.grad_fn.name() == y2.grad_fn.name()
        np.testing.assert_array_equal(y.detach().numpy(), y2.detach().numpy())
        np.testing.assert_array_equal(x.grad.numpy(), x2.grad.numpy())
    # a view records through its flags; a bool, an integer tensor or a strided one go the
    # general way
    x = ng.tensor(a, dtype=dtype, requires_grad=True)
    (x[0] * 2.0).sum().backward()
    assert x.grad.tolist() == [[2.0, 2.0], [0.0, 0.0]]
    del general[:]
    assert (x.detach() * True).tolist() == a.tolist()
    assert (ng.tensor([1, 2]) * 2).tolist() == [2, 4] and (x.detach().t() + 1).shape == (2, 2)
    assert general == ["mul", "mul", "add"]
    with ng.no_grad():
        assert (x + 2).grad_fn is None and (x + 2).tolist() == (a + 2).tolist()


@pytest.mark.parametrize("dtype", [ng.float32, ng.float64])
def test_several_operands_and_parameters_take_the_fast_loop(monkeypatch, dtype):
    # addcmul, addcdiv, lerp (and its tensor weight), add with alpha, a loss's backward kernel:
    # the op's flat loop through its entry point (ops/dispatch.py, make_function's last
    # variant); the same values, dtypes, nodes and gradients as the general path
    from numbagrad.ops.registry import REGISTRY, Elementwise

    general = []
    real = Elementwise._call
    monkeypatch.setattr(Elementwise, "_call",
                        lambda self, *a: general.append(self.name) or real(self, *a))
    E = ng.ops.elementwise
    a = np.array([[0.5, -1.5], [2.0, 0.25]])
    b = np.array([[1.5, 0.5], [-1.0, 3.0]])
    c = np.array([[2.0, -0.5], [0.75, 1.25]])
    ones = ng.ones(2, 2, dtype=dtype)
    cases = [("addcmul", lambda x, y, z: ng.addcmul(x, y, z, value=0.5), (0.5,)),
             ("addcdiv", lambda x, y, z: ng.addcdiv(x, y, z, value=-2), (-2,)),
             ("lerp", lambda x, y, z: ng.lerp(x, y, 0.25), (0.25,)),
             ("lerp_tensor", lambda x, y, z: ng.lerp(x, y, z), ()),
             ("add_alpha", lambda x, y, z: ng.add(x, y, alpha=3), (3,)),
             ("smooth_l1_loss_backward", lambda x, y, z: E.smooth_l1_loss_backward(x, y, z, 0.7), (0.7,)),
             ("add_alpha", lambda x, y, z: E.add_alpha(x, 2.5, 0.5), None),
             ("where", lambda x, y, z: ng.where(x.detach() > 0, y, z), "where"),
             ("where", lambda x, y, z: ng.where(x.detach() > 0, y, -1.5), "where number")]
    for name, call, params in cases:
        del general[:]
        leaves = [ng.tensor(v, dtype=dtype, requires_grad=True) for v in (a, b, c)]
        y = call(*leaves)
        y.backward(ones)
        assert general == [], name
        copies = [ng.tensor(v, dtype=dtype, requires_grad=True) for v in (a, b, c)]
        n_in = REGISTRY[name].n_in
        cond = copies[0].detach() > 0
        args = ((copies[0], 2.5, 0.5) if params is None
                else (cond, copies[1], copies[2]) if params == "where"
                else (cond, copies[1], -1.5) if params == "where number"
                else (*copies[:n_in], *params))
        y2 = real(REGISTRY[name], args)
        y2.backward(ones)
        assert y.dtype is y2.dtype is dtype and y.grad_fn.name() == y2.grad_fn.name(), name
        np.testing.assert_array_equal(y.detach().numpy(), y2.detach().numpy())
        for t, t2 in zip(leaves, copies):
            assert (t.grad is None) == (t2.grad is None), name
            if t.grad is not None:
                np.testing.assert_array_equal(t.grad.numpy(), t2.grad.numpy())
    # another shape, an integer tensor or a strided operand: the general path
    del general[:]
    x = ng.tensor(a, dtype=dtype)
    assert ng.addcmul(x, x[0], x).shape == (2, 2)
    assert ng.addcmul(ng.tensor([1, 2]), ng.tensor([3, 4]), ng.tensor([1, 1])).tolist() == [4, 6]
    assert ng.lerp(x.t(), x, 0.5).tolist() == ((a.T + a) / 2).tolist()
    assert general == ["addcmul", "addcmul", "lerp"]
    # in place: lerp_ with a number weight writes through the loop
    with ng.no_grad():
        p = ng.tensor(a, dtype=dtype)
        p.lerp_(ng.tensor(b, dtype=dtype), 0.25)
    np.testing.assert_allclose(p.numpy(), a + 0.25 * (b - a), rtol=1e-6)
    assert general == ["addcmul", "addcmul", "lerp"] and p._version == 1
