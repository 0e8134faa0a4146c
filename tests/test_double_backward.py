"""Gradients recorded with ``create_graph=True``: their nodes are PyTorch's (its dedicated
backward ops, SigmoidBackwardBackward0, MseLossBackwardBackward0, ..., or the ordinary ops its
formulas compose), and second derivatives follow PyTorch's double-backward formulas, also
with an infinite incoming gradient (inf, not inf * 0 = nan).

Each test runs on numbagrad and, when it is installed, on PyTorch itself, against the same
literals (measured on PyTorch 2.13)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import numbagrad as ng

INF = math.inf

# (PyTorch warns of the reference cycle that backward(create_graph=True) makes)
pytestmark = pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph")


def _leaf(lib, shape):
    n = int(np.prod(shape))
    return lib.tensor(np.arange(n, dtype=np.float32).reshape(shape) * 0.75 - 1.6,
                      requires_grad=True)


def _node(t):
    return type(t.grad_fn).__name__ if t.grad_fn is not None else None


# name: (the leaf's shape, the function of it, the node of its create_graph gradient)
NODE_CASES = {
    # PyTorch's dedicated backward ops
    "sigmoid": ((3, 2), lambda lib, x: x.sigmoid(), "SigmoidBackwardBackward0"),
    # maximum/minimum: where(ties, grad / 2, grad).masked_fill_(the other side, 0)
    "maximum": ((3, 2), lambda lib, x: lib.maximum(x, lib.zeros(2)), "MaskedFillBackward0"),
    "minimum_other": ((3, 2), lambda lib, x: lib.minimum(lib.zeros(2), x),
                      "MaskedFillBackward0"),
    # a (1, 1) matrix is column-major by PyTorch's test (strides (1, 1)): its mm gradient
    # is a transpose
    "mm_1x1_mat2": ((1, 1), lambda lib, x: lib.ones(4, 1).mm(x), "TBackward0"),
    "mm_1x1_mat1": ((1, 1), lambda lib, x: x.mm(lib.ones(1, 3)), "TBackward0"),
    # a 1-D or 2-D operand that requires grad times a batch: PyTorch folds the batch into
    # the rows of y.mT (one mv or mm), so y's gradient comes back through a transpose
    "matmul_1d_3d": ((2, 3, 1), lambda lib, x: lib.ones(3, requires_grad=True) @ x,
                     "TransposeBackward0"),
    "matmul_2d_3d": ((5, 3, 6), lambda lib, x: lib.ones(2, 3, requires_grad=True) @ x,
                     "TransposeBackward0"),
    "sigmoid_0d": ((), lambda lib, x: x.sigmoid(), "SigmoidBackwardBackward0"),
    "tanh": ((3, 2), lambda lib, x: x.tanh(), "TanhBackwardBackward0"),
    "relu": ((3, 2), lambda lib, x: lib.nn.functional.relu(x), "ThresholdBackwardBackward0"),
    "mse_loss_input": ((3, 2), lambda lib, x: lib.nn.functional.mse_loss(x, lib.ones(3, 2)),
                       "MseLossBackwardBackward0"),
    "mse_loss_target": ((3, 2), lambda lib, x: lib.nn.functional.mse_loss(
        lib.ones(3, 2), x, reduction="sum"), "MseLossBackwardBackward0"),
    "mse_loss_none": ((3, 2), lambda lib, x: lib.nn.functional.mse_loss(
        x, lib.ones(3, 2), reduction="none"), "MseLossBackwardBackward0"),
    "nll_loss": ((2, 3), lambda lib, x: lib.nn.functional.nll_loss(x, lib.tensor([0, 2])),
                 "NllLossBackwardBackward0"),
    "cross_entropy": ((2, 3), lambda lib, x: lib.nn.functional.cross_entropy(
        x, lib.tensor([0, 2]), reduction="none"), "LogSoftmaxBackwardDataBackward0"),
    "leaky_relu": ((3, 2), lambda lib, x: lib.nn.functional.leaky_relu(x, 0.2),
                   "LeakyReluBackwardBackward0"),
    "softplus": ((3, 2), lambda lib, x: lib.nn.functional.softplus(x, beta=1.5, threshold=2.0),
                 "SoftplusBackwardBackward0"),
    "gelu": ((3, 2), lambda lib, x: lib.nn.functional.gelu(x), "GeluBackwardBackward0"),
    "gelu_tanh": ((3, 2), lambda lib, x: lib.nn.functional.gelu(x, approximate="tanh"),
                  "GeluBackwardBackward0"),
    "softmax": ((3, 2), lambda lib, x: x.softmax(1), "SoftmaxBackwardDataBackward0"),
    "log_softmax": ((3, 2), lambda lib, x: x.log_softmax(0), "LogSoftmaxBackwardDataBackward0"),
    "slice": ((3, 2), lambda lib, x: x[1:], "SliceBackwardBackward0"),
    "slice_then_select": ((3, 2), lambda lib, x: x[1:, 0], "SliceBackwardBackward0"),
    "select": ((3, 2), lambda lib, x: x[1], "SelectBackwardBackward0"),
    "advanced_index": ((3, 2), lambda lib, x: x[[0, 2, 0]], "IndexPutImplBackward0"),
    "bool_mask": ((3, 2), lambda lib, x: x[x > 0], "IndexPutImplBackward0"),
    # the ordinary ops PyTorch's formulas compose
    "square": ((3, 2), lambda lib, x: x.square(), "MulBackward0"),
    "pow": ((3, 2), lambda lib, x: x**3, "MulBackward0"),
    "pow_zero": ((3, 2), lambda lib, x: x**0, None),  # (zeros, not recorded)
    "div_denominator": ((3, 2), lambda lib, x: 2.5 / x, "MulBackward0"),
    "unsqueeze": ((3, 2), lambda lib, x: x.unsqueeze(1), "SqueezeBackward1"),
    "squeeze_dim": ((1, 3), lambda lib, x: x.squeeze(0), "UnsqueezeBackward0"),
    "squeeze_all": ((1, 3, 1), lambda lib, x: x.squeeze(), "UnsqueezeBackward0"),
    "squeeze_size_not_one": ((3, 2), lambda lib, x: x.squeeze(0), None),  # (the gradient)
    "none_index": ((3, 2), lambda lib, x: x[None], "SqueezeBackward1"),
    "alias_index": ((3, 2), lambda lib, x: x[...], None),  # (the gradient itself)
    "vector_matrix": ((3,), lambda lib, x: x @ lib.ones(3, 4), "SqueezeBackward1"),
    "batch_of_one": ((1, 3, 2), lambda lib, x: lib.ones(4, 2, 3) @ x, "UnsqueezeBackward0"),
    "cat": ((3, 2), lambda lib, x: lib.cat([x, lib.ones(3, 1)], 1), "SliceBackward0"),
    "expand": ((3, 1), lambda lib, x: x.expand(3, 4), "SumBackward1"),
    "expand_0d": ((), lambda lib, x: x.expand(()), "SumBackward0"),
    "broadcast_0d": ((), lambda lib, x: x + lib.ones(3), "SumBackward0"),
    "sum_dim": ((3, 2), lambda lib, x: x.sum(0), "ExpandBackward0"),
    "mean_dim": ((3, 2), lambda lib, x: x.mean(1), "DivBackward1"),
    "mean": ((3, 2), lambda lib, x: x.mean(), "DivBackward1"),
    "repeat": ((3, 2), lambda lib, x: x.repeat(2, 1), "SumBackward1"),
    "max": ((3, 2), lambda lib, x: x.max(), "MaskedFillBackward1"),
    "max_dim": ((3, 2), lambda lib, x: x.max(0)[0], "ScatterBackward0"),
    "min_dim_keepdim": ((3, 2), lambda lib, x: x.min(1, keepdim=True)[0], "ScatterBackward0"),
    "cumsum": ((3, 2), lambda lib, x: x.cumsum(0), "FlipBackward0"),
}


@pytest.mark.parametrize("case", list(NODE_CASES))
def test_create_graph_gradient_node_is_pytorchs(lib, case):
    shape, fn, node = NODE_CASES[case]
    x = _leaf(lib, shape)
    y = fn(lib, x)
    # (an incoming gradient that requires grad: the gradient is recorded even for linear ops)
    w = (lib.arange(y.numel(), dtype=y.dtype).reshape(y.shape) * 0.5 + 1).requires_grad_()
    g, = lib.autograd.grad(y, x, w, create_graph=True)
    assert _node(g) == node


def test_a_leaf_grad_is_a_recorded_copy_then_a_sum(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward(create_graph=True)
    assert _node(x.grad) == "CopyBackwards"
    assert x.grad.tolist() == [2.0, 4.0]
    (x * x).sum().backward(create_graph=True)
    assert _node(x.grad) == "AddBackward0"
    assert x.grad.tolist() == [4.0, 8.0]


def test_a_retained_grad_is_a_recorded_clone(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    (y * y).sum().backward(create_graph=True)
    assert _node(y.grad) == "CloneBackward0"
    assert y.grad.tolist() == [6.0, 12.0]


def test_a_view_regenerated_after_a_write_to_its_base(lib):
    x = lib.tensor([[1.5, 0.5], [2.5, -1.0], [-1.0, -1.5]], requires_grad=True)
    v = x.reshape(2, -1)
    with lib.no_grad():
        x.mul_(0.5)  # (v's node becomes AsStridedBackward0)
    g, = lib.autograd.grad((v * v).sum(), x, create_graph=True)
    assert _node(g) == "AsStridedBackward0"
    assert g.tolist() == [[1.5, 0.5], [2.5, -1.0], [-1.0, -1.5]]


# ---------------------------------------------------------------- second derivatives


def _second_order(lib, fn, x, incoming, weight):
    """``d/dx sum(weight * g)`` where ``g`` is the gradient of ``fn(x)`` for ``incoming``."""
    x = lib.tensor(x, requires_grad=True)
    g, = lib.autograd.grad(fn(x), x, lib.tensor(incoming), create_graph=True)
    gg, = lib.autograd.grad(g, x, lib.tensor(weight))
    return g.tolist(), gg.tolist()


def test_second_derivatives_with_an_infinite_incoming_gradient(lib):
    # (the fuzzer's repro: PyTorch's formulas keep the infinity, inf * 0 would give nan)
    g, gg = _second_order(lib, lambda x: x.sigmoid(), [2.0], [INF], [0.08])
    assert g == [INF] and gg == [-INF]
    g, gg = _second_order(lib, lambda x: x.sigmoid(), [2.0, -1.0, 0.5], [INF, 1.0, -INF],
                          [0.08, 1.0, 0.5])
    assert g[0] == INF and g[2] == -INF
    assert gg[0] == -INF and gg[2] == INF
    assert gg[1] == pytest.approx(0.0908577, rel=1e-5)
    g, gg = _second_order(lib, lambda x: x.tanh(), [2.0, -1.0, 0.5], [INF, 1.0, -INF],
                          [0.08, 1.0, 0.5])
    assert g[0] == INF and g[2] == -INF
    assert gg[0] == -INF and gg[2] == INF
    assert gg[1] == pytest.approx(0.6397, rel=1e-4)
    # relu's gradient is a function of its result: the second derivative is 0
    g, gg = _second_order(lib, lambda x: x.relu(), [2.0, -1.0, 0.5], [INF, 1.0, -INF],
                          [0.08, 1.0, 0.5])
    assert g == [INF, 0.0, -INF] and gg == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_second_derivatives(lib, reduction):
    F = lib.nn.functional
    x = lib.tensor([[2.0, -1.0, 0.5], [1.0, 2.0, 3.0]], requires_grad=True)
    t = lib.tensor([[1.0, 1.0, -0.5], [0.0, 1.0, 1.0]], requires_grad=True)
    go = lib.tensor(3.0) if reduction != "none" else lib.ones(2, 3) * 1.5
    go.requires_grad_()
    gx, gt = lib.autograd.grad(F.mse_loss(x, t, reduction=reduction), [x, t], go,
                               create_graph=True)
    w = lib.tensor([[1.0, -2.0, 3.0], [0.5, 0.25, -1.0]])
    a, b, c = lib.autograd.grad((gx * w).sum() + (gt * w * w).sum(), [x, t, go])
    scale = {"mean": 1 / 6 * 6.0, "sum": 6.0, "none": 3.0}[reduction]
    expected = np.array([[0.0, -6.0, -6.0], [0.25, 0.1875, -2.0]]) * scale
    np.testing.assert_allclose(np.array(a.tolist()), expected, rtol=1e-6)
    np.testing.assert_allclose(np.array(b.tolist()), -expected, rtol=1e-6)
    if reduction == "none":
        np.testing.assert_allclose(np.array(c.tolist()),
                                   [[0.0, 24.0, -12.0], [0.5, 0.375, -8.0]], rtol=1e-6)
    else:
        assert c.item() == pytest.approx({"mean": 0.8125, "sum": 4.875}[reduction], rel=1e-6)
    # an infinite incoming gradient: PyTorch's 2 * grad * grad_output, inf
    g, = lib.autograd.grad(F.mse_loss(x, t, reduction=reduction), x, go.detach() * INF,
                           create_graph=True)
    gg, = lib.autograd.grad(g.sum(), x)
    assert gg.tolist() == [[INF] * 3] * 2


@pytest.mark.parametrize("fn, expected_x, expected_go", [
    ("softmax", [[-1.1128415, 0.5547192, 0.5581223], [0.0987265, 0.0969261, -0.1956525]],
     [[-0.2748525, -0.1896907, 0.4645433], [0.1430195, 0.2969940, -0.4400134]]),
    ("log_softmax", [[0.5497050, 0.3793814, -0.9290866], [0.0357549, 0.0742485, -0.1100034]],
     [[-0.3498645, -4.8498645, 2.6501355], [1.5885652, 1.2135652, -0.6614348]]),
])
def test_softmax_second_derivatives(lib, fn, expected_x, expected_go):
    x = lib.tensor([[2.0, -1.0, 0.5], [1.0, 2.0, 3.0]], requires_grad=True)
    go = lib.tensor([[1.0, -2.0, 3.0], [0.5, 0.25, -1.0]], requires_grad=True)
    gx, = lib.autograd.grad(getattr(x, fn)(1), x, go, create_graph=True)
    w = lib.tensor([[1.0, -2.0, 3.0], [0.5, 0.25, -1.0]]) * 1.5
    a, b = lib.autograd.grad((gx * w).sum(), [x, go])
    np.testing.assert_allclose(np.array(a.tolist()), expected_x, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.array(b.tolist()), expected_go, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("x, y, g, gg", [
    (2.75, INF, 0.0, [0.0, -0.0]),  # (the fuzzer's seed 20485: nan from y * y before)
    (1.0, -0.607, 6.2559543, [3.1217215, 10.2857380]),
    (3.0, 1e-30, INF, [INF, -INF]),  # (float32 y * y underflows: x / y / y stays finite longer)
])
def test_division_by_y_second_derivatives(lib, x, y, g, gg):
    xt = lib.tensor(x, requires_grad=True)
    yt = lib.tensor(y, requires_grad=True)
    gy, = lib.autograd.grad(xt / yt * -2.305, yt, create_graph=True)
    assert _node(gy) == "MulBackward0"
    assert gy.item() == pytest.approx(g, rel=1e-6)
    a, b = lib.autograd.grad(gy * 0.499, [xt, yt])
    assert [a.item(), b.item()] == pytest.approx(gg, rel=1e-6)
    if gg[1] == 0:
        assert math.copysign(1.0, b.item()) == -1.0


@pytest.mark.parametrize("exponent", [0, 0.0, 1, 2, -1, 0.5, 3])
def test_pow_gradient_and_second_derivative(lib, exponent):
    x = lib.tensor([2.0, 0.0, 0.5, -1.0], requires_grad=True)
    incoming = lib.tensor([INF, 1.0, -2.0, math.nan])
    g, = lib.autograd.grad(x**exponent, x, incoming, create_graph=True)
    plain, = lib.autograd.grad(x**exponent, x, incoming)
    np.testing.assert_array_equal(np.array(g.tolist()), np.array(plain.tolist()))
    if exponent == 0:  # PyTorch's zeros_like: zeros even for inf and nan, not recorded
        assert g.tolist() == [0.0] * 4 and not g.requires_grad
        return
    assert _node(g) == "MulBackward0"
    gg, = lib.autograd.grad((g * lib.tensor([1.0, 2.0, 3.0, 4.0])).sum(), x)
    expected = {1: [0.0, 0.0, 0.0, 0.0], 2: [INF, 4.0, -12.0, math.nan],
                -1: [INF, INF, -96.0, math.nan], 0.5: [-INF, -INF, 4.2426405, math.nan],
                3: [INF, 0.0, -18.0, math.nan]}[exponent]
    np.testing.assert_allclose(np.array(gg.tolist()), expected, rtol=1e-6)


@pytest.mark.parametrize("kwargs", [{}, {"reduction": "sum"}, {"reduction": "none"},
                                    {"ignore_index": 1}])
def test_nll_loss_second_derivatives(lib, kwargs):
    F = lib.nn.functional
    x = lib.tensor([[1.0, 2.0, -1.0], [3.0, 4.0, 0.5]], requires_grad=True)
    loss = F.nll_loss(x, lib.tensor([0, 1]), **kwargs)
    go = (lib.ones(loss.shape) * 1.5).requires_grad_()
    g, = lib.autograd.grad(loss, x, go, create_graph=True)
    a, b = lib.autograd.grad((g * lib.tensor([[1.0, 2.0, -1.0], [3.0, 4.0, 0.5]])).sum(),
                             [go, x])
    # go's: the loss of the weights (linear in its input); x's: zeros (PyTorch's zeros_like)
    expected = {"": -2.5, "sum": -5.0, "none": [-1.0, -4.0], "ignore_index": -1.0}
    key = kwargs.get("reduction", "ignore_index" if kwargs else "")
    assert a.tolist() == expected[key]
    assert b.tolist() == [[0.0] * 3] * 2


def test_written_tensors_gradients(lib):
    x = lib.tensor([1.5, -1.0, 2.0], requires_grad=True)
    w = lib.ones(3, requires_grad=True)
    v = x.clone()
    v[lib.tensor([True, False, True])] = lib.tensor(0.5)
    g, = lib.autograd.grad(v, x, w, create_graph=True)
    assert _node(g) == "IndexPutBackward0" and g.tolist() == [0.0, 1.0, 0.0]
    v = x.clone()
    v[1:] = lib.tensor(0.5)
    g, = lib.autograd.grad(v, x, w, create_graph=True)
    assert _node(g) == "CopySlices" and g.tolist() == [1.0, 0.0, 0.0]
    # an in-place op on a view: PyTorch hands it a clone of the region's gradient
    c = lib.tensor(1.75, requires_grad=True)
    b = lib.tensor([2.0, -1.0, 0.5])
    b[1].add_(c)
    g, = lib.autograd.grad(b, c, lib.tensor([1.0, 2.0, 3.0], requires_grad=True),
                           create_graph=True)
    assert _node(g) == "CloneBackward0" and g.item() == 2.0


@pytest.mark.parametrize("fn, g_expected, gx_expected, gg_expected", [
    (lambda F, x: F.leaky_relu(x, 0.2), [1.0, 0.4, INF, -1.5], [0.0, 0.0, 0.0, 0.0],
     [1.0, -0.4, 3.0, 0.5]),
    (lambda F, x: F.softplus(x, beta=1.5, threshold=2.0), [0.81757, 0.09485, INF, -1.5],
     [0.22372, -0.27106, INF, -0.0], [0.81757, -0.09485, 2.03754, 0.5]),
    (lambda F, x: F.gelu(x), [1.08332, -0.17046, INF, -1.51792],
     [0.24197, 0.43193, INF, 0.02327], [1.08332, 0.17046, 2.60249, 0.50597]),
    (lambda F, x: F.gelu(x, approximate="tanh"), [1.08296, -0.1722, INF, -1.51738],
     [0.24215, 0.4315, INF, 0.02383], [1.08296, 0.1722, 2.60211, 0.50579]),
])
def test_activation_second_derivatives(lib, fn, g_expected, gx_expected, gg_expected):
    x = lib.tensor([1.0, -2.0, 0.5, 3.0], requires_grad=True)
    go = lib.tensor([1.0, 2.0, INF, -1.5], requires_grad=True)
    g, = lib.autograd.grad(fn(lib.nn.functional, x), x, go, create_graph=True)
    a, b = lib.autograd.grad((g * lib.tensor([1.0, -2.0, 3.0, 0.5])).sum(), [x, go])
    np.testing.assert_allclose(np.array(g.tolist()), g_expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.array(a.tolist()), gx_expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.array(b.tolist()), gg_expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("index", [(1,), (slice(1, 1),), (slice(0, 2), 0)], ids=str)
def test_the_value_written_through_a_basic_index_gets_a_clone(lib, index):
    # x[basic] = v copies v into a view of x: PyTorch's CopySlices hands the copy a clone of
    # the region's gradient (CloneBackward0), an empty region's too
    x = lib.zeros(3, 2)
    v = _leaf(lib, tuple(x[index].shape))
    x[index] = v
    w = lib.arange(6.0).reshape(3, 2).requires_grad_()  # (so that the gradient is recorded)
    g, = lib.autograd.grad((x * w).sum(), v, create_graph=True)
    assert _node(g) == "CloneBackward0"
    assert g.tolist() == w[index].tolist()
