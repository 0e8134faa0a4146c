"""numbagrad.elementwise: users' scalar functions as differentiable ops, their derived rules,
and numbagrad.testing.check_elementwise."""

from __future__ import annotations

import inspect
import math
import re

import numpy as np
import pytest
from devices import on_cuda

import numbagrad as ng
from numbagrad.autograd import gradcheck, gradgradcheck
from numbagrad.ops import REGISTRY
from numbagrad.ops.derive import DeriveError, derive, rule_ops, source, write_rule
from numbagrad.ops.registry import Elementwise
from numbagrad.testing import check_elementwise

SCALE = 1.7  # a global number a kernel reads (inlined as a literal)

# ---------------------------------------------------------------- a dozen user functions


@ng.elementwise
def swish(x, beta):
    return x / (1 + math.exp(-beta * x))


@ng.elementwise
def gelu(x):
    return 0.5 * x * (1 + math.erf(x / math.sqrt(2)))


@ng.elementwise(params=("slope",))
def leaky(x, slope=0.1):
    return x if x > 0 else slope * x


@ng.elementwise
def logsigmoid(x):
    # an early return, a local, two branches computed stably
    if x >= 0:
        return -math.log1p(math.exp(-x))
    e = math.exp(x)
    return x - math.log1p(e)


@ng.elementwise
def poly(x, y):
    return x**3 - 2 * x * y**2 + y**0.5


@ng.elementwise
def vpow(x, y):
    return x**y


@ng.elementwise
def smooth_abs(x, eps):
    t = x * x
    t += eps
    return math.sqrt(t)


@ng.elementwise
def huber(x, delta):
    a = abs(x)
    if a <= delta:
        out = 0.5 * x * x
    else:
        out = delta * (a - 0.5 * delta)
    return out


@ng.elementwise
def trig(x, y):
    return math.sin(x) * math.cosh(y) + math.atan(x * y)


@ng.elementwise
def lerp(a, b, w):
    return a + w * (b - a)


@ng.elementwise
def scaled_tanh(x):
    return SCALE * math.tanh(x / SCALE)


@ng.elementwise
def clip_soft(x):
    return min(max(x, -1.0), 1.0) if -3 < x < 3 else 0.25 * x


gauss = ng.elementwise(lambda x: x * math.exp(-x * x), name="gauss")


def _make_scaled(k):
    @ng.elementwise
    def scaled(x):
        return k * x * x  # ``k`` from the closure

    return scaled


scaled3 = _make_scaled(3.0)


def _np_erf(v):
    return np.vectorize(math.erf)(v)


# ---- kernels whose rule reuses a value the function computes later, and erfinv's shape (a
# rule computes every branch on every element, so no branch here makes a NaN where it is not
# taken: through create_graph, 0 * NaN would reach the second derivative, as with torch.where)


@ng.elementwise
def erf_then_gauss(x):
    # erf's derivative, 2 / sqrt(pi) * exp(-x * x), is the exp the next line computes
    y = math.erf(x)
    return y + math.exp(-x * x)


@ng.elementwise
def pow_twice(x, y):
    z = x**y + 1  # (the derivative of x**y binds x**y: the next line's value)
    w = x**y
    return z * w


@ng.elementwise
def one_branch_temp(x):
    # t only in one branch, p and w in both, exp(x) again after the if
    if x < 0.5:
        t = math.exp(x)
        p = t * x
        w = p + 1
    else:
        p = math.sqrt(1 + x * x)
        w = p * p
    return p * w + math.exp(x)


@ng.elementwise
def erfinv_like(x):
    # erfinv's shape: returns in nested branches, w and p set in both branches of the next if
    # (t in one), then a Newton-like step whose exp(-y * y) erf's derivative needs as well
    if x >= 1.5 or x <= -1.5:
        if x >= 1.5:
            return 0.25 * x * x
        return -1.0
    w = x * x
    if w < 1:
        w = w - 0.5
        p = 0.5 + 0.25 * w
    else:
        t = math.sqrt(w)
        w = t - 1
        p = 0.625 + 0.5 * w * t
    y = p * x
    return y - 0.5 * (math.erf(y) - x) * math.exp(-y * y)


def _erfinv_like_ref(x):
    w = x * x
    p = np.where(w < 1, 0.5 + 0.25 * (w - 0.5), 0.625 + 0.5 * (np.sqrt(w) - 1) * np.sqrt(w))
    y = p * x
    out = y - 0.5 * (_np_erf(y) - x) * np.exp(-y * y)
    return np.where(x >= 1.5, 0.25 * x * x, np.where(x <= -1.5, -1.0, out))


# (op, NumPy reference, params, domain, shapes)
CASES = [
    (swish, lambda x, b: x / (1 + np.exp(-b * x)), (1.5,), (-2, 2), [(3,), (2, 3)]),
    (swish, lambda x, b: x / (1 + np.exp(-b * x)), (), (-2, 2), [((2, 3), (3,))]),
    (gelu, lambda x: 0.5 * x * (1 + _np_erf(x / np.sqrt(2))), (), (-2, 2), [(2, 3)]),
    (leaky, lambda x, s: np.where(x > 0, x, s * x), (0.2,), (-2, 2), [(2, 3)]),
    (logsigmoid, lambda x: -np.logaddexp(0, -x), (), (-3, 3), [(2, 3)]),
    (poly, lambda x, y: x**3 - 2 * x * y**2 + y**0.5, (), (0.2, 2), [(2, 3)]),
    (vpow, lambda x, y: x**y, (), (0.2, 2), [((2, 3), (3,))]),
    (smooth_abs, lambda x, e: np.sqrt(x * x + e), (0.01,), (-2, 2), [(2, 3)]),
    (huber, lambda x, d: np.where(np.abs(x) <= d, 0.5 * x * x, d * (np.abs(x) - 0.5 * d)),
     (1.0,), (-2, 2), [(2, 3)]),
    (trig, lambda x, y: np.sin(x) * np.cosh(y) + np.arctan(x * y), (), (-1, 1), [(2, 3)]),
    (lerp, lambda a, b, w: a + w * (b - a), (), (-2, 2), [((2, 3), (3,), (2, 1))]),
    (scaled_tanh, lambda x: SCALE * np.tanh(x / SCALE), (), (-2, 2), [(2, 3)]),
    (clip_soft, lambda x: np.where((-3 < x) & (x < 3), np.clip(x, -1, 1), 0.25 * x), (),
     (-4, 4), [(2, 3)]),
    (gauss, lambda x: x * np.exp(-x * x), (), (-2, 2), [(2, 3)]),
    (scaled3, lambda x: 3.0 * x * x, (), (-2, 2), [(2, 3)]),
    (erf_then_gauss, lambda x: _np_erf(x) + np.exp(-x * x), (), (-2, 2), [(2, 3)]),
    (pow_twice, lambda x, y: (x**y + 1) * x**y, (), (0.2, 2), [(2, 3)]),
    (one_branch_temp, lambda x: np.where(x < 0.5, x * np.exp(x) * (x * np.exp(x) + 1),
                                         np.sqrt(1 + x * x) ** 3) + np.exp(x),
     (), (-2, 2), [(2, 3)]),
    (erfinv_like, _erfinv_like_ref, (), (-2, 2), [(4, 5)]),
]


@pytest.mark.parametrize("op,ref,params,domain,shapes", CASES,
                         ids=[f"{c[0].__name__}-{k}" for k, c in enumerate(CASES)])
def test_user_op_passes_the_op_table_checks(op, ref, params, domain, shapes):
    # forward vs NumPy in float32 and float64, gradcheck, gradgradcheck, float32 vs float64
    # gradients, the node name (kinks of leaky, huber and clip_soft are where samples land
    # with probability 0)
    check_elementwise(op, ref, params=params, domain=domain, shapes=shapes, cuda=False)


def test_node_names_follow_the_function():
    x = ng.tensor([0.5, 1.0], requires_grad=True)
    assert swish(x, 2.0).grad_fn.name() == "SwishBackward0"
    assert logsigmoid(x).grad_fn.name() == "LogsigmoidBackward0"
    assert smooth_abs(x, 0.1).grad_fn.name() == "SmoothAbsBackward0"
    assert gauss(x).grad_fn.name() == "GaussBackward0"
    named = ng.elementwise(name="my_op", node="MyCustomBackward0")(lambda x: x * x)
    assert named(x).grad_fn.name() == "MyCustomBackward0"
    assert repr(swish) == "<numbagrad.elementwise swish>"


def test_number_and_tensor_operands_and_keywords():
    x = ng.tensor([[0.5, -1.0, 2.0]], requires_grad=True)
    beta = ng.tensor([[1.0], [2.0]], requires_grad=True)  # broadcast to (2, 3)
    y = swish(x, beta)
    assert y.shape == (2, 3)
    y.sum().backward()
    xv, bv = x.detach().numpy(), beta.detach().numpy()
    s = 1 / (1 + np.exp(-bv * xv))
    np.testing.assert_allclose(x.grad.numpy(), (s + bv * xv * s * (1 - s)).sum(0, keepdims=True),
                               rtol=1e-5)
    np.testing.assert_allclose(beta.grad.numpy(), (xv * xv * s * (1 - s)).sum(1, keepdims=True),
                               rtol=1e-5)
    # keywords and defaults as the Python function takes them
    np.testing.assert_allclose(swish(x, beta=2.0).detach().numpy(),
                               swish(x, 2.0).detach().numpy())
    np.testing.assert_allclose(leaky(x).detach().numpy(), [[0.5, -0.1, 2.0]], rtol=1e-6)
    with pytest.raises(TypeError, match="missing a required argument: 'beta'"):
        swish(x)


def test_int_inputs_compute_in_the_default_float():
    assert swish(ng.tensor([1, 2]), 1).dtype is ng.float32
    same = ng.elementwise(dtype="same")(lambda x, y: x * y + 1)
    assert same(ng.tensor([1, 2]), ng.tensor([3, 4])).tolist() == [4, 9]


@pytest.mark.parametrize("op", [gelu, swish, logsigmoid, poly, trig, huber],
                         ids=lambda op: op.__name__)
def test_float32_kernels_compute_in_float32(op):
    # no float64 arithmetic leaks into a float32 kernel: Numba types every value of the
    # scalar function of the forward and of each rule float32 (a Python float literal, or
    # math.pi, would be float64; the kernels' _c(...) types them)
    from numba import types

    from numbagrad.backend import cpu

    modules = [op.kernel(ng.float32)] + [op.vjp_kernel(i, ng.float32) for i in range(op.n_in)]
    for mod in modules:
        fn = getattr(mod, cpu.ENTRY)
        args = (types.float32,) * fn.py_func.__code__.co_argcount
        fn.compile(args)
        cres = fn.overloads[args]
        assert cres.signature.return_type == types.float32
        # (a literal is a float64 constant that _c converts at compile time)
        f64 = [line for line in str(cres.type_annotation).splitlines()
               if line.endswith(":: float64") and "= const(" not in line]
        assert f64 == [], (op.__name__, f64)
    x = ng.tensor(np.full((2, op.n_in + 1), 0.5), dtype=ng.float32, requires_grad=True)
    y = op(*[x] * op.n_in, *[0.5] * len(op.param_names))
    y.sum().backward()
    assert y.dtype is ng.float32 and x.grad.dtype is ng.float32


def test_create_graph_gives_second_derivatives():
    x = ng.tensor([0.3, -1.2, 2.0], dtype=ng.float64, requires_grad=True)
    (g,) = ng.autograd.grad(gelu(x).sum(), x, create_graph=True)
    (h,) = ng.autograd.grad(g.sum(), x)
    v = x.detach().numpy()
    pdf = np.exp(-v * v / 2) / np.sqrt(2 * np.pi)
    np.testing.assert_allclose(h.numpy(), pdf * (2 - v * v), rtol=1e-10)
    assert gradgradcheck(lambda a, b: swish(a, b), (x, ng.tensor(1.5, dtype=ng.float64,
                                                                 requires_grad=True)))


def _first_and_second(op, values):
    x = ng.tensor(values, dtype=ng.float64, requires_grad=True)
    (g,) = ng.autograd.grad(op(x).sum(), x, create_graph=True)
    (h,) = ng.autograd.grad(g.sum(), x)
    return g.detach().numpy(), h.numpy()


def test_rules_reusing_a_later_value_match_hand_written_derivatives():
    # erf's derivative needs exp(-x * x), which erf_then_gauss computes on its next line: the
    # derived rule once read that binding before making it (UnboundLocalError in backward)
    for op in (erf_then_gauss, pow_twice, one_branch_temp, erfinv_like):
        assert op.derive_error is None, op.__name__
    v = np.array([-1.7, -0.6, 0.3, 1.2])
    g, h = _first_and_second(erf_then_gauss, v)
    gauss_ = np.exp(-v * v)
    np.testing.assert_allclose(g, (2 / np.sqrt(np.pi) - 2 * v) * gauss_, rtol=1e-12)
    np.testing.assert_allclose(h, (4 * v * v - 4 * v / np.sqrt(np.pi) - 2) * gauss_, rtol=1e-12)
    # one_branch_temp: (u^2 + u) with u = x e^x below 0.5, (1 + x^2)^(3/2) above, plus e^x
    v = np.array([-1.5, -0.2, 0.4, 0.7, 1.9])
    e = np.exp(v)
    u, du, ddu, s = v * e, e * (1 + v), e * (2 + v), np.sqrt(1 + v * v)
    g, h = _first_and_second(one_branch_temp, v)
    np.testing.assert_allclose(g, np.where(v < 0.5, (2 * u + 1) * du, 3 * v * s) + e, rtol=1e-12)
    np.testing.assert_allclose(h, np.where(v < 0.5, 2 * du * du + (2 * u + 1) * ddu,
                                           3 * s + 3 * v * v / s) + e, rtol=1e-12)
    # erfinv_like's returns: 0.25 x^2 above 1.5 and a constant below -1.5
    g, h = _first_and_second(erfinv_like, np.array([-1.8, 1.6, 2.0]))
    np.testing.assert_allclose(g, [0.0, 0.8, 1.0], rtol=1e-12)
    np.testing.assert_allclose(h, [0.0, 0.5, 0.5], rtol=1e-12)


def test_a_rule_reading_a_binding_before_making_it_is_refused():
    # what the deriver writes must run: a binding read before it is made is a DeriveError
    # (derive_error at elementwise time), not an UnboundLocalError in a backward pass
    lines = [("_a", ("*", ("v", "_b"), ("v", "x"))), ("_b", ("call", "exp", (("v", "x"),)))]
    with pytest.raises(DeriveError, match="its derivative would read `_b` before computing it"):
        write_rule("r", lines, ("*", ("v", "grad"), ("v", "_a")), ["x"], [], rule_ops())


def test_lazy_forward_and_fused_backward_match_the_eager_run(monkeypatch):
    from numbagrad.autograd.grad_mode import backward_fusion
    from numbagrad.ops import lazy

    def run():
        x = ng.tensor(np.linspace(-2, 2, 12).reshape(3, 4), requires_grad=True)
        y = swish(x, 1.5)
        deferred = type(y) is ng.Tensor._Lazy
        (y * gelu(y)).sum().backward()
        return y.detach().numpy(), x.grad.numpy(), deferred

    out1, g1, deferred1 = run()
    monkeypatch.setattr(lazy, "DEFER_MIN_ITEMS", 0)
    monkeypatch.setattr(backward_fusion, "min_items", 0)
    try:
        for op in (swish, gelu):
            op._plans.clear()  # (a plan keeps the size from which calls defer)
        out2, g2, deferred2 = run()
    finally:
        monkeypatch.undo()
        for op in (swish, gelu):
            op._plans.clear()
    assert not deferred1 and deferred2
    np.testing.assert_allclose(out2, out1, rtol=1e-6)
    np.testing.assert_allclose(g2, g1, rtol=1e-5, atol=1e-6)


def test_derived_rules_read_like_built_in_ones():
    assert source(swish.vjps[1]).splitlines()[0] == "def swish_vjp_beta(grad, x, beta):"
    exp_like = ng.elementwise(lambda x: math.exp(2 * x), name="exp2x")
    assert source(exp_like.vjps[0]).splitlines()[1:] == ["    return grad * (2 * result)"]
    assert source(leaky.vjps[0]).splitlines()[1:] == [
        "    return where(x > 0, grad, grad * slope)"]


def test_user_rule_replaces_the_derived_one():
    @ng.elementwise
    def softsign(x):
        return x / (1 + abs(x))

    @softsign.defvjp
    def softsign_vjp(grad, x):  # scalar Python: math and if/else, as the forward
        d = 1 + abs(x)
        return grad / (d * d)

    x = ng.tensor([0.5, -2.0, 3.0], dtype=ng.float64, requires_grad=True)
    assert gradcheck(softsign, (x,)) and gradgradcheck(softsign, (x,))
    softsign(x).sum().backward()
    with pytest.raises(RuntimeError, match="give the rules before the op's first use"):
        softsign.defvjp(lambda grad, x: grad)


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


@ng.elementwise
def cube_loop(x):
    r = 1.0
    for _ in range(3):
        r = r * x
    return r


@ng.elementwise
def step_times(x):
    return (x > 0) * x


def test_what_cannot_be_derived_raises_when_first_recorded():
    x = ng.tensor([1.0, 2.0])
    assert cube_loop(x).tolist() == [1.0, 8.0]  # (the forward needs no derivative)
    assert isinstance(cube_loop.derive_error, DeriveError)
    xg = ng.tensor([1.0, 2.0], requires_grad=True)
    line = _line_of(cube_loop.__wrapped__, "for _ in")
    message = (f"numbagrad.elementwise cannot differentiate 'cube_loop': a `for` loop (line "
               f"{line} of {__file__}); give its rule with cube_loop.defvjp(...)")
    with pytest.raises(NotImplementedError, match=re.escape(message)):
        cube_loop(xg)
    line = _line_of(step_times.__wrapped__, "(x > 0)")
    with pytest.raises(NotImplementedError, match=re.escape(
            f"`x > 0` is a comparison or truth value used as a number (line {line} of")):
        step_times(xg)

    @ng.elementwise
    def cube_loop2(x):
        r = 1.0
        for _ in range(3):
            r = r * x
        return r

    cube_loop2.defvjp(lambda grad, x: 3 * grad * x * x)
    cube_loop2(xg).sum().backward()
    assert xg.grad.tolist() == [3.0, 12.0]


def helper(v):
    return v + 1


def test_errors_at_decoration():
    with pytest.raises(TypeError, match=re.escape(
            "numbagrad.elementwise: 'uses_helper' reads the global `helper` (a function), "
            "which its kernel cannot see")):
        @ng.elementwise
        def uses_helper(x):
            return helper(x)
    with pytest.raises(ValueError, match="params .'x',. must name the last arguments"):
        ng.elementwise(params=("x",))(lambda x, y: x * y)
    with pytest.raises(TypeError, match="calls the numbagrad.elementwise op 'swish'"):
        @ng.elementwise
        def twice(x):
            return swish(x, 1.0) * 2


# ---------------------------------------------------------------- every built-in's rule, derived

# the built-in elementwise ops with a rule; where has a bool condition, so it is compared by
# calling the rules, not through an op of the decorator (whose dtypes are "float"/"same")
BUILT_INS = sorted(n for n, op in REGISTRY.items() if isinstance(op, Elementwise)
                   and any(r is not None for r in op.vjps))
PARAMS = {"pow": [(2.0,), (3.0,), (0.5,), (-1.5,), (0.0,)], "softplus": [(1.0, 20.0), (2.0, 0.5)],
          "pow_bool_exponent": [(True,), (False,)], "rpow": [(2.0,), (0.7,)], "rsub": [(1.5,)],
          "clamp": [(-0.5, 0.5)],
          "add_alpha": [(2.5,)], "sub_alpha": [(-0.5,)], "rsub_alpha": [(1.5,)],
          "round_decimals": [(1,)],
          "remainder_scalar": [(0.75,)], "fmod_scalar": [(0.75,)], "logit": [(0.2,)],
          "lerp": [(0.3,)], "elu": [(1.5, 1.2, 0.8)], "leaky_relu": [(0.2,)], "addcmul": [(0.5,)],
          "addcdiv": [(0.5,)], "clamp_min": [(0.2,)], "clamp_max": [(0.2,)],
          "nan_to_num": [(0.0, 1e300, -1e300)], "threshold_backward": [(0.5,)],
          "div_scalar": [(2.5,)], "mul_scalar": [(2.5,)], "polygamma_": [(1,), (2,)], "leaky_relu_backward": [(0.2,)],
          "masked_fill_scalar": [(0.5,)],
          "softplus_backward": [(1.0, 20.0), (2.0, 0.5)],
          "elu_": [(1.5, 1.2, 0.8)], "celu": [(1.5,)], "celu_": [(1.5,)],
          "elu_backward": [(1.5, 1.2, 0.8, 0.0), (1.5, 1.2, 0.8, 1.0)],
          "leaky_relu_": [(0.2,)], "threshold": [(0.5, 2.0)], "threshold_": [(0.5, 2.0)],
          "hardtanh": [(-1.0, 0.5)], "hardtanh_backward": [(-1.0, 0.5)],
          "hardshrink": [(0.5,)], "hardshrink_backward": [(0.5,)], "softshrink": [(0.5,)],
          "softshrink_backward": [(0.5,)], "smooth_l1_elementwise": [(0.7,)],
          "smooth_l1_loss_backward": [(0.7,)], "huber_elementwise": [(0.7,)],
          "huber_loss_backward": [(0.7,)], "binary_cross_entropy_backward": [(2.0,)]}
POSITIVE = {"log", "log1p", "sqrt", "rsqrt", "pow", "pow_bool_exponent", "pow_tensor",
            "reciprocal", "div", "remainder", "log2", "log10", "special_entr"}
# samples drawn from (lo, hi) instead of (-2, 2), for the ops defined on less
DOMAINS = {"asin": (-0.9, 0.9), "acos": (-0.9, 0.9), "atanh": (-0.9, 0.9), "acosh": (1.1, 3.0),
           "logit": (0.05, 0.95), "erfinv": (-0.9, 0.9),
           "binary_cross_entropy_elementwise": (0.1, 0.9),
           "binary_cross_entropy_backward": (0.1, 0.9)}
# the built-ins whose scalar source the deriver cannot read (their rules are hand-written)
NOT_DERIVED = {
    "trunc": "int(x): an integer conversion",
    "clamp_min_tensor": "calls maximum's scalar function, whose rule splits ties",
    "clamp_max_tensor": "calls minimum's scalar function, whose rule splits ties",
    "copysign": "math.copysign",
    "digamma": "a while loop", "lgamma": "math.lgamma", "polygamma": "a while loop",
    "i0": "calls modified_bessel, which has no rule",
    "special_i1": "calls modified_bessel, which has no rule", "nextafter": "math.nextafter",
    "special_erfcx": "a while loop", "special_ndtri": "a while loop",
    "special_i0e": "calls modified_bessel, which has no rule",
    "special_i1e": "calls modified_bessel, which has no rule",
}


def test_every_built_in_rule_is_derived():
    failed = []
    for name in BUILT_INS:
        try:
            rules = derive(*_normalized(name))
        except DeriveError:
            failed.append(name)
        else:
            assert len(rules) == REGISTRY[name].n_in
    assert failed == sorted(NOT_DERIVED)


def _normalized(name):
    op = REGISTRY[name]
    return op.scalar, name, op.n_in


# (where and masked_fill_scalar take a bool condition: their own test below)
MASKED = ("where", "masked_fill_scalar")
# the built-ins whose hand-written rule is not the derivative of their scalar source, on purpose
NOT_COMPARED = {
    "hardsigmoid": "PyTorch's gradient is 1/6 rounded to float, in float64 too",
    "rrelu_with_noise": "the noise input is not differentiable (PyTorch's)",
    "rrelu_with_noise_": "the noise input is not differentiable (PyTorch's)",
    "binary_cross_entropy_backward": "the weight input is not differentiable (PyTorch's)",
    "binary_cross_entropy_elementwise": "PyTorch's second derivative adds 1e-12 to x and 1 - x",
}


@pytest.mark.parametrize("name", [n for n in BUILT_INS if n not in MASKED and n not in NOT_DERIVED
                                  and n not in NOT_COMPARED])
def test_derived_rule_equals_the_hand_written_one(name):
    """Derived from the op's scalar source, the rules give the hand-written ones' gradients
    and second derivatives (through create_graph) on samples away from kinks and ties."""
    op = REGISTRY[name]
    user = ng.elementwise(op.scalar, params=op.param_names, dtype=op.dtype_rule)
    assert user.derive_error is None
    rng = np.random.default_rng(0)
    lo, hi = DOMAINS.get(name, (0.1 if name in POSITIVE else -2.0, 2.0))
    for params in PARAMS.get(name, [()]):
        values = [rng.uniform(lo, hi, 7) for _ in range(op.n_in)]
        values = [np.where(np.abs(v) < 0.05, 0.3, v) for v in values]
        results = []
        for f in (op, user):
            ts = [ng.tensor(v, dtype=ng.float64, requires_grad=True) for v in values]
            out = f(*ts, *params)
            grads = ng.autograd.grad(out.sum(), ts, create_graph=True)
            total = sum(g.sum() for g in grads)
            second = (ng.autograd.grad(total, ts, allow_unused=True) if total.requires_grad
                      else [None] * len(ts))
            results.append((out.detach().numpy(), [g.detach().numpy() for g in grads],
                            [np.zeros(7) if h is None else h.numpy() for h in second]))
        (out1, g1, h1), (out2, g2, h2) = results
        np.testing.assert_allclose(out2, out1, rtol=1e-12)
        for a, b in zip(g1 + h1, g2 + h2):
            np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


def test_where_rules_derived_equal_the_hand_written_ones():
    op = REGISTRY["where"]
    rules = derive(*_normalized("where"))
    cond = ng.tensor([True, False, True])
    grad = ng.tensor([1.5, -2.0, 0.25])
    for k in (1, 2):
        np.testing.assert_array_equal(rules[k](grad, cond).numpy(), op.vjps[k](grad, cond).numpy())
    op = REGISTRY["masked_fill_scalar"]
    rule = derive(*_normalized("masked_fill_scalar"))[0]
    np.testing.assert_array_equal(rule(grad, cond).numpy(), [0.0, -2.0, 0.0])
    np.testing.assert_array_equal(op.vjps[0](grad, cond, 0.5).numpy(), [0.0, -2.0, 0.0])


# ---------------------------------------------------------------- CUDA (the simulator in CI)


@on_cuda
def test_user_ops_on_cuda_match_the_cpu():
    check_elementwise(swish, lambda x, b: x / (1 + np.exp(-b * x)), params=(1.5,),
                      shapes=[(4,)], dtypes=(ng.float32,), cuda=True, gradgrad=False)
    check_elementwise(gelu, lambda x: 0.5 * x * (1 + _np_erf(x / np.sqrt(2))),
                      shapes=[(4,)], dtypes=(ng.float32,), cuda=True, gradgrad=False)
    check_elementwise(huber, lambda x, d: np.where(np.abs(x) <= d, 0.5 * x * x,
                                                   d * (np.abs(x) - 0.5 * d)),
                      params=(1.0,), shapes=[(4,)], dtypes=(ng.float32,), cuda=True,
                      gradgrad=False)


@on_cuda
def test_create_graph_on_cuda():
    x = ng.tensor([0.3, -1.2, 2.0], device="cuda", requires_grad=True)
    (g,) = ng.autograd.grad(gelu(x).sum(), x, create_graph=True)
    (h,) = ng.autograd.grad(g.sum(), x)
    assert h.is_cuda
    v = x.detach().cpu().numpy().astype(np.float64)
    pdf = np.exp(-v * v / 2) / np.sqrt(2 * np.pi)
    np.testing.assert_allclose(h.cpu().numpy(), pdf * (2 - v * v), rtol=1e-4, atol=1e-5)
