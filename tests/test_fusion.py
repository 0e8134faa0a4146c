"""Backward fusion (ops/fusion.py): a run of elementwise backward nodes as one kernel.

Every test checks the fused gradients against a hand-derived formula and against the same
backward run node by node, and checks which nodes were fused: the fusion must be invisible
except for speed (hooks, retain_grad, in-place checks and freed graphs behave as without it).
The size threshold is set to 0 here so small tensors exercise the fused kernels.
"""

from __future__ import annotations

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.autograd.grad_mode import backward_fusion
from numbagrad.autograd.graph import ERR_FREED
from numbagrad.ops import fusion, lazy
from numbagrad.ops.record import FusableNode
from threads import on_one_and_two_threads


@pytest.fixture
def fused(monkeypatch):
    """Fuse regions of any size; yields the list of (root name, member names) that ran fused."""
    monkeypatch.setattr(backward_fusion, "min_items", 0)
    ran = []
    real = FusableNode.run_region

    def spy(root, grads, deps, buffers):
        res = real(root, grads, deps, buffers)
        if res is not None:
            ran.append([m.name() for m in res[0]])
        return res

    monkeypatch.setattr(FusableNode, "run_region", spy)
    return ran


def node_by_node(fn, *leaves):
    """The leaves' gradients of ``fn(*leaves).backward()`` with fusion off."""
    backward_fusion.enabled = False
    try:
        copies = [t.detach().clone().requires_grad_(True) for t in leaves]
        fn(*copies).backward()
        return [c.grad.numpy() for c in copies]
    finally:
        backward_fusion.enabled = True


def rand(*shape, dtype=ng.float32, seed=0, low=-1.0, high=1.0):
    a = np.random.default_rng(seed).uniform(low, high, shape)
    return ng.tensor(a, dtype=dtype, requires_grad=True)


def check(fn, leaves, want, rtol=1e-5):
    ref = node_by_node(fn, *leaves)
    fn(*leaves).backward()
    for t, w, r in zip(leaves, want, ref):
        np.testing.assert_allclose(t.grad.numpy(), w, rtol=rtol, atol=1e-6)
        np.testing.assert_allclose(t.grad.numpy(), r, rtol=rtol, atol=1e-6)


@pytest.mark.parametrize("dtype", [ng.float32, ng.float64])
def test_w1_runs_as_one_kernel(fused, dtype):
    x = rand(1000, dtype=dtype)
    xv = x.detach().numpy().astype(np.float64)
    check(lambda x: (x**2 * ng.exp(x)).sum(), [x], [(2 * xv + xv**2) * np.exp(xv)])
    assert fused == [["MulBackward0", "PowBackward0", "ExpBackward0", "SumBackward0"]]
    assert x.grad.dtype == dtype


def test_broadcast_input_gets_its_gradient_summed_back(fused):
    a, b = rand(30, 40, seed=1), rand(40, seed=2)
    av, bv = a.detach().numpy(), b.detach().numpy()
    check(lambda a, b: ((a + b) * a).sum(), [a, b], [2 * av + bv, av.sum(0)])
    assert fused == [["MulBackward0", "AddBackward0", "SumBackward0"]]
    assert b.grad.shape == (40,)


def test_a_scalar_operand_and_its_gradient(fused):
    x, w = rand(500, seed=3), rand(1, seed=4)
    xv, wv = x.detach().numpy(), w.detach().numpy()
    check(lambda x, w: (ng.sin(x * w) * 3.0).sum(), [x, w],
          [3 * np.cos(xv * wv) * wv, [(3 * np.cos(xv * wv) * xv).sum()]], rtol=1e-4)
    assert fused == [["MulBackward0", "SinBackward0", "MulBackward0", "SumBackward0"]]


def test_a_node_with_several_consumers_joins_once_all_are_in(fused):
    # y feeds sin, cos and the product: its gradient is the sum of three paths
    x = rand(300, seed=5, low=-0.5, high=0.5)
    xv = x.detach().numpy().astype(np.float64)
    yv = np.exp(xv)
    want = ((np.cos(yv) - np.sin(yv)) * yv + (np.sin(yv) + np.cos(yv))) * yv

    def diamond(x):
        y = ng.exp(x)
        return ((ng.sin(y) + ng.cos(y)) * y).sum()

    check(diamond, [x], [want], rtol=1e-4)
    assert len(fused) == 1 and sorted(fused[0]) == sorted(
        ["MulBackward0", "AddBackward0", "SinBackward0", "CosBackward0", "ExpBackward0",
         "SumBackward0"])


def test_relu_where_and_integer_powers(fused):
    x = rand(400, dtype=ng.float64, seed=6)
    xv = x.detach().numpy()
    want = np.where(3 * xv > 0, 3, 0) * xv**3 + np.maximum(3 * xv, 0) * 3 * xv**2
    check(lambda x: (ng.relu(x * 3) * x**3).sum(), [x], [want])
    assert fused and "ReluBackward0" in fused[0] and "PowBackward0" in fused[0]


def test_a_hook_on_an_intermediate_sees_its_gradient_and_can_change_it(fused):
    x = rand(200, seed=7)
    xv = x.detach().numpy()
    seen = []
    y = x * 2
    y.register_hook(lambda g: seen.append(g.numpy().copy()) or g * 10)
    (ng.exp(y) * 3).sum().backward()
    np.testing.assert_allclose(seen[0], 3 * np.exp(2 * xv), rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), 60 * np.exp(2 * xv), rtol=1e-6)
    assert fused == [["MulBackward0", "ExpBackward0", "SumBackward0"]]  # stops before y's node


def test_retain_grad_keeps_the_intermediate_gradient(fused):
    x = rand(200, seed=8)
    xv = x.detach().numpy()
    y = ng.sin(x)
    y.retain_grad()
    (y * y * 0.5).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), np.sin(xv), rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), np.sin(xv) * np.cos(xv), rtol=1e-6)
    assert all("SinBackward0" not in f for f in fused)


def test_an_inplace_change_of_a_saved_tensor_raises_as_without_fusion(fused):
    x = rand(100, seed=9)
    y = x * 1.0
    z = ng.exp(y) * y
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_a_freed_graph_raises_and_retain_graph_accumulates(fused):
    x = rand(100, seed=10)
    xv = x.detach().numpy()
    loss = (ng.exp(x) * x).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * (np.exp(xv) * (1 + xv)), rtol=1e-6)
    with pytest.raises(RuntimeError, match=ERR_FREED[:40]):
        loss.backward()


def test_a_first_grad_takes_the_fused_output_and_later_ones_add(fused):
    x = rand(100, seed=11)
    xv = x.detach().numpy()
    (x * x * 2).sum().backward()
    first = x.grad
    (x * x * 2).sum().backward()
    assert x.grad is first  # accumulated in place, as in PyTorch
    np.testing.assert_allclose(x.grad.numpy(), 8 * xv, rtol=1e-6)


def test_create_graph_and_autograd_grad_run_node_by_node(fused):
    x = rand(50, dtype=ng.float64, seed=12)
    xv = x.detach().numpy()
    (g,) = ng.autograd.grad((ng.sin(x) * x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), np.cos(xv) * xv + np.sin(xv))
    assert fused == []
    # the graph of the first backward is elementwise nodes too: its backward may fuse
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), -np.sin(xv) * xv + 2 * np.cos(xv))


def test_a_row_broadcast_operand_fuses(fused):
    # b (30,) over a (20, 30): the loop goes over rows and reads b at the column
    a, b = rand(20, 30, seed=13), rand(30, seed=14)
    av, bv = a.detach().numpy(), b.detach().numpy()
    check(lambda a, b: (ng.exp(a) * b).sum(), [a, b],
          [np.exp(av) * bv, np.exp(av).sum(0)], rtol=1e-5)
    assert fused == [["MulBackward0", "ExpBackward0", "SumBackward0"]]


@pytest.mark.parametrize("sa, sb", [((30, 40), (40,)), ((2, 30, 40), (1, 40)),
                                     ((5, 30, 40), (30, 40)), ((3, 7, 5), (1, 1, 5))])
def test_a_row_broadcast_input_is_summed_in_the_loop(fused, monkeypatch, sa, sb):
    # b's gradient is summed over a's rows inside the kernel: no full-size gradient, no sum_to
    a, b = rand(*sa, seed=15, dtype=ng.float64), rand(*sb, seed=16, dtype=ng.float64)
    av, bv = a.detach().numpy(), b.detach().numpy()
    lead = tuple(range(len(sa) - len(sb))) + tuple(
        len(sa) - len(sb) + i for i, n in enumerate(sb) if n == 1)
    summed = []
    monkeypatch.setattr(fusion, "sum_to", lambda g, s: summed.append(s))
    check(lambda a, b: ((a + b) * a).sum(), [a, b],
          [2 * av + bv, av.sum(lead).reshape(sb)], rtol=1e-12)
    assert fused == [["MulBackward0", "AddBackward0", "SumBackward0"]]
    assert summed == [] and b.grad.shape == sb


def test_one_row_sum_per_input_shape(fused, monkeypatch):
    # b (40,) and c (1, 40) get the same sum, each in its own shape, as separate tensors
    a, b, c = rand(30, 40, seed=17), rand(40, seed=18), rand(1, 40, seed=19)
    monkeypatch.setattr(fusion, "sum_to", lambda g, s: pytest.fail("summed outside the loop"))
    ((a + b + c) * 3.0).sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), np.full(40, 90.0), rtol=1e-6)
    np.testing.assert_allclose(c.grad.numpy(), np.full((1, 40), 90.0), rtol=1e-6)
    assert b.grad.shape == (40,) and c.grad.shape == (1, 40)
    assert b.grad._data is not c.grad._data and len(fused) == 1


def test_row_sums_are_the_same_bits_on_one_and_two_threads():
    # 300 rows of 1000: 19 blocks of 16 rows, over the parallel threshold
    a, b = rand(300, 1000, seed=20), rand(1000, seed=21)

    def grad_b():
        b.grad = None
        ((a + b) * a).sum().backward()
        return b.grad.numpy()

    one, two = on_one_and_two_threads(grad_b)
    np.testing.assert_array_equal(one, two)
    want = a.detach().numpy().astype(np.float64).sum(0)
    np.testing.assert_allclose(one, want, rtol=1e-5, atol=1e-4)


def test_a_column_broadcast_operand_runs_node_by_node(fused):
    a, b = rand(20, 30, seed=13), rand(20, 1, seed=14)
    av, bv = a.detach().numpy(), b.detach().numpy()
    check(lambda a, b: (ng.exp(a) * b).sum(), [a, b],
          [np.exp(av) * bv, np.exp(av).sum(1, keepdims=True)], rtol=1e-5)
    assert fused == []


def test_large_tensors_fuse_at_the_default_threshold(monkeypatch):
    # n above the parallel threshold too: the parallel loop gives the same gradients
    x = rand(backward_fusion.min_items * 5, seed=15)
    xv = x.detach().numpy().astype(np.float64)
    check(lambda x: (x**2 * ng.exp(x)).sum(), [x], [(2 * xv + xv**2) * np.exp(xv)])
    small = rand(100, seed=16)
    calls = []
    real = FusableNode.run_region
    monkeypatch.setattr(FusableNode, "run_region",
                        lambda *a: calls.append(real(*a)) or calls[-1])
    (small**2 * ng.exp(small)).sum().backward()
    # under the threshold each node runs on its own (nothing compiled for the region); only
    # the sum is looked at (its one-value gradient might broadcast over a large input)
    assert calls == [None]


FUSED_F64_CHECK = """
import numbagrad as ng
from numbagrad.autograd.grad_mode import backward_fusion
from numbagrad.backend import cpu
backward_fusion.min_items = 0
x = ng.tensor([0.5, -1.5, 2.0], requires_grad=True)
(x.sigmoid() * x.tanh() * 0.5 * (1 - x).rsqrt().exp() * x**2).sum().backward()
for key, mod in cpu._kernels.items():
    if key[0] == "fused" and mod.flat.signatures:
        ir = "".join(mod.flat.inspect_llvm().values())
        print(len(key[-1]), [w for w in ("fpext float", "fadd double", "fmul double",
                                          "fdiv double") if w in ir])
"""


def test_a_fused_float32_kernel_does_no_float64_arithmetic(tmp_path):
    import os
    import subprocess
    import sys

    # compiled fresh in a clean cache: Numba cannot show the IR of cache-loaded code
    env = dict(os.environ, NUMBAGRAD_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", FUSED_F64_CHECK], env=env, capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert len(out) == 1 and int(out[0].split()[0]) >= 8  # one region of every node
    assert out[0].endswith("[]"), out


def test_only_a_whole_tensor_sum_leads_a_region(fused):
    x = rand(40, 50, seed=17)
    xv = x.detach().numpy().astype(np.float64)
    want = np.cos(xv) * 2 * xv + np.sin(xv) * 2
    check(lambda x: (ng.sin(x) * x * 2).sum(dim=(0, 1)), [x], [want])
    assert fused[-1][-1] == "SumBackward1"
    x.grad = None
    # a sum over one dim gives a gradient per column: the region starts below it
    check(lambda x: (ng.sin(x) * x * 2).sum(0).sum(), [x], [want])
    assert fused[-1][0] == "MulBackward0" and "SumBackward1" not in fused[-1]
    x.grad = None
    # mean and a float64 sum of float32 values stay nodes of their own
    check(lambda x: (ng.sin(x) * x * 2).mean() * 2000, [x], [want])
    x.grad = None
    check(lambda x: (ng.sin(x) * x * 2).sum(dtype=ng.float64), [x], [want])
    assert all(f[-1] not in ("MeanBackward0", "SumBackward0") for f in fused[-2:])
    assert x.grad.dtype == ng.float32


def test_a_hook_on_the_loss_still_scales_the_fused_gradient(fused):
    x = rand(300, seed=18)
    loss = (x * x).sum()
    loss.register_hook(lambda g: g * 3)
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * x.detach().numpy(), rtol=1e-6)
    assert fused == [["MulBackward0", "SumBackward0"]]


def test_new_regions_past_the_kernel_budget_run_node_by_node(fused, monkeypatch):
    monkeypatch.setattr(lazy, "_kernel_keys", set())
    monkeypatch.setattr(lazy, "_loaded", {})
    monkeypatch.setattr(lazy, "MAX_KERNELS", 1)
    x = rand(100, seed=19)
    xv = x.detach().numpy().astype(np.float64)
    check(lambda x: (ng.exp(x) * x).sum(), [x], [np.exp(xv) * (1 + xv)])
    x.grad = None
    check(lambda x: (ng.sin(x) * x).sum(), [x], [np.cos(xv) * xv + np.sin(xv)])
    x.grad = None
    check(lambda x: (ng.exp(x) * x).sum(), [x], [np.exp(xv) * (1 + xv)])
    # the first structure fused (twice); the second, over budget, ran node by node
    assert fused == [["MulBackward0", "ExpBackward0", "SumBackward0"]] * 2


UNARY = [ng.sin, ng.cos, ng.tanh, ng.sigmoid, ng.relu, lambda t: ng.exp(ng.tanh(t)),
         lambda t: t**2, lambda t: t * 0.5, lambda t: -t, lambda t: 1.5 - t]
BINARY = [lambda s, t: s + t, lambda s, t: s - t, lambda s, t: s * t,
          lambda s, t: s / (t * t + 1.0), ng.maximum, ng.minimum]


def random_graph(seed):
    """A random DAG of elementwise ops over leaves a (20, 30) and b (30,), ending in a sum:
    shared subexpressions, broadcasting and several paths into each leaf."""
    rng = np.random.default_rng(seed)

    def fn(a, b):
        pool = [a, b, a * 1.0]
        for _ in range(int(rng.integers(3, 9))):
            if rng.random() < 0.4:
                f = UNARY[int(rng.integers(len(UNARY)))]
                pool.append(f(pool[int(rng.integers(len(pool)))]))
            else:
                i, j = rng.integers(len(pool), size=2)
                pool.append(BINARY[int(rng.integers(len(BINARY)))](pool[int(i)], pool[int(j)]))
        return (pool[-1] + pool[-2] * 0.25).sum()

    return fn


@pytest.mark.parametrize("seed", range(24))
def test_random_graphs_get_the_same_gradients_fused(fused, seed):
    a = rand(20, 30, dtype=ng.float64, seed=100 + seed)
    b = rand(30, dtype=ng.float64, seed=200 + seed)
    backward_fusion.enabled = False
    try:
        a1, b1 = (t.detach().clone().requires_grad_(True) for t in (a, b))
        random_graph(seed)(a1, b1).backward()
    finally:
        backward_fusion.enabled = True
    random_graph(seed)(a, b).backward()  # the same ops again (a new generator, same seed)
    assert fused  # at least one region ran as one kernel
    for t, ref in ((a, a1), (b, b1)):
        if ref.grad is None:
            assert t.grad is None
        else:
            np.testing.assert_allclose(t.grad.numpy(), ref.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_an_add_passes_one_gradient_to_both_inputs_without_aliasing_their_grads(fused):
    a, c = rand(200, seed=20), rand(200, seed=21)
    av, cv = a.detach().numpy(), c.detach().numpy()
    check(lambda a, c: (ng.sin(a + c) * 3.0).sum(), [a, c],
          [3 * np.cos(av + cv), 3 * np.cos(av + cv)])
    assert fused == [["MulBackward0", "SinBackward0", "AddBackward0", "SumBackward0"]]
    key = [k for k in fusion.cpu._kernels if k[0] == "fused" and "_r_sin_0" in str(k[-1])][-1]
    assert key[3] == 1  # one kernel output for both inputs of the add
    a.grad.add_(1)  # each leaf got its own .grad
    np.testing.assert_allclose(c.grad.numpy(), 3 * np.cos(av + cv), rtol=1e-6)


def test_a_region_of_identity_rules_passes_the_gradient_on(fused):
    a, c, d = rand(30, 40, seed=22), rand(30, 40, seed=23), rand(40, seed=24)
    g = ng.tensor(np.random.default_rng(25).standard_normal((30, 40)), dtype=ng.float32)
    y = (a + c) + d
    y.backward(g)
    np.testing.assert_array_equal(a.grad.numpy(), g.numpy())
    np.testing.assert_array_equal(c.grad.numpy(), g.numpy())
    np.testing.assert_allclose(d.grad.numpy(), g.numpy().sum(0), rtol=1e-5)
    assert fused == [["AddBackward0", "AddBackward0"]]
    assert a.grad is not g and c.grad is not g and a.grad is not c.grad
