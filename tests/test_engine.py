"""The engine's contract: graph structure, backward and autograd.grad, higher order, hooks,
grad modes (thread-local), detach/data, memory. Expected values are hand-derived or what
PyTorch 2.13 does (checked with it)."""

from __future__ import annotations

import gc
import re
import threading
import weakref

import numpy as np
import pytest

import numbagrad as ng
from numbagrad.autograd.graph import ERR_FREED

from devices import cpu_only, on_each_device  # noqa: E402

# every test runs on the CPU and (under -m cuda) on CUDA: factories default to that device
pytestmark = on_each_device


def vals(t):
    return t.detach().tolist()


# ---------------------------------------------------------------- the graph


def test_requires_grad_flags_and_errors():
    x = ng.ones(3, requires_grad=True)
    assert x.requires_grad and x.is_leaf and x.grad_fn is None
    y = x * 2
    assert y.requires_grad and not y.is_leaf
    with pytest.raises(RuntimeError, match=r"^you can only change requires_grad flags of leaf variables\."):
        y.requires_grad = False
    y.requires_grad_(True)  # a no-op on a non-leaf that requires grad, as in PyTorch
    with pytest.raises(RuntimeError) as e:
        ng.ones(3, dtype=ng.int64, requires_grad=True)
    assert str(e.value) == "Only Tensors of floating point and complex dtype can require gradients"
    with pytest.raises(RuntimeError) as e:
        ng.ones(3, dtype=ng.int64).requires_grad_()
    assert str(e.value) == "only Tensors of floating point dtype can require gradients"
    z = ng.zeros(2)
    z.requires_grad = True
    assert z.requires_grad and z.is_leaf


def test_output_requires_grad_iff_grad_mode_and_an_input_does():
    a, b = ng.ones(2), ng.ones(2, requires_grad=True)
    assert not (a + a).requires_grad
    assert (a + b).requires_grad
    with ng.no_grad():
        assert not (a + b).requires_grad
    # comparisons and integer results never require grad
    assert not (b > 0).requires_grad
    assert not b.argmax().requires_grad


def test_next_functions_and_one_accumulator_per_leaf():
    w = ng.rand(3, requires_grad=True)
    x = ng.ones(3)
    y = w * x
    z = y + w
    (m, m_nr), (acc, acc_nr) = z.grad_fn.next_functions
    assert m is y.grad_fn and (m_nr, acc_nr) == (0, 0)
    assert type(acc).__name__ == "AccumulateGrad" and acc.variable is w
    assert y.grad_fn.next_functions[0][0] is acc  # the same leaf, the same AccumulateGrad
    assert y.grad_fn.next_functions[1] == (None, 0)
    assert re.fullmatch(r"<MulBackward0 object at 0x[0-9a-f]+>", repr(y.grad_fn))
    assert y.grad_fn.name() == "MulBackward0"
    a, b = ng.rand(4, requires_grad=True).split(2)
    assert (a.output_nr, b.output_nr) == (0, 1) and a.grad_fn is b.grad_fn


# ---------------------------------------------------------------- backward


def test_backward_errors():
    x = ng.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError) as e:
        (x * 2).backward()
    assert str(e.value) == "grad can be implicitly created only for scalar outputs"
    with pytest.raises(RuntimeError) as e:
        (x * 2).backward(ng.ones(2))
    assert str(e.value) == (
        "Mismatch in shape: grad_output[0] has a shape of numbagrad.Size([2]) and output[0] "
        "has a shape of numbagrad.Size([3])."
    )
    with pytest.raises(RuntimeError) as e:
        ng.ones(3).sum().backward()
    assert str(e.value) == "element 0 of tensors does not require grad and does not have a grad_fn"
    with pytest.raises(RuntimeError) as e:
        ng.autograd.backward([x.sum(), x.sum()], [ng.tensor(1.0)])
    assert str(e.value) == "got 2 tensors and 1 gradients"


def test_autograd_backward_with_several_roots():
    a = ng.tensor([2.0], requires_grad=True)
    ng.autograd.backward([a * 2, a * 3], [ng.ones(1), ng.ones(1) * 2])
    assert vals(a.grad) == [8.0]  # 2*1 + 3*2


def test_grad_accumulates_in_place_and_resets():
    a = ng.tensor([2.0], requires_grad=True)
    (a * 2).backward()
    g0 = a.grad
    (a * 2).backward()
    assert a.grad is g0 and vals(a.grad) == [4.0]
    a.grad.zero_()
    assert vals(a.grad) == [0.0]
    a.grad = None
    assert a.grad is None
    with pytest.raises(RuntimeError) as e:
        a.grad = ng.ones(2)
    assert str(e.value) == (
        "attempting to assign a gradient of size '[2]' to a tensor of size '[1]'. Please ensure "
        "that the gradient and the tensor are the same size"
    )
    with pytest.raises(RuntimeError, match="attempting to assign a gradient with dtype 'double' to a tensor with grad_dtype 'Float'"):
        a.grad = ng.ones(1, dtype=ng.float64)
    with pytest.raises(TypeError, match="assigned grad expected to be a Tensor or None but got grad of type int"):
        a.grad = 3
    a.grad = ng.tensor([5.0])
    (a * 1).backward()
    assert vals(a.grad) == [6.0]


def test_non_leaf_grad_is_none_with_a_warning():
    a = ng.ones(2, requires_grad=True)
    y = a * 2
    y.sum().backward()
    with pytest.warns(UserWarning, match=r"^The .grad attribute of a Tensor that is not a leaf Tensor is being accessed"):
        assert y.grad is None


def test_saved_tensors_are_freed_unless_retain_graph():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()  # MulBackward0 saved x
    y.backward(retain_graph=True)
    y.backward()
    assert vals(x.grad) == [4.0, 8.0]
    with pytest.raises(RuntimeError) as e:
        y.backward()
    assert str(e.value) == ERR_FREED
    assert str(e.value).startswith(
        "Trying to backward through the graph a second time (or directly access saved tensors "
        "after they have already been freed)."
    )


@pytest.fixture
def general(monkeypatch):
    """The names of the elementwise ops whose nodes take the general backward path."""
    from numbagrad.ops.registry import Elementwise

    names = []
    full = Elementwise.backward_node
    monkeypatch.setattr(Elementwise, "backward_node",
                        lambda self, *a: names.append(self.name) or full(self, *a))
    return names


@cpu_only
def test_small_contiguous_ops_take_the_lean_backward_with_the_general_checks(general):
    x = ng.tensor([0.5, -1.25, 2.0], dtype=ng.float64, requires_grad=True)
    w = ng.tensor([1.5, 0.25, -3.0], dtype=ng.float64)
    four = ng.full((3,), 4.0, dtype=ng.float64)
    y = ((ng.sin(x * w) + w) / (x - four)) ** 3  # (a scalar operand takes the general path)
    y.backward(ng.ones(3, dtype=ng.float64))
    a, b = x.detach().numpy(), w.numpy()
    u = np.sin(a * b) + b
    # d/dx (u / (x - 4))^3 = 3 (u / (x - 4))^2 (cos(x w) w (x - 4) - u) / (x - 4)^2
    expected = 3 * (u / (a - 4)) ** 2 * (np.cos(a * b) * b * (a - 4) - u) / (a - 4) ** 2
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)
    assert general == []
    assert ng.autograd.gradcheck(lambda t: ng.cos(t * w - t) * t, (x,))

    # what the general path checks, the lean one checks too
    x.grad = None
    y = ng.sin(x * w)
    w.add_(1.0)  # MulBackward0 saved w
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward(ng.ones(3, dtype=ng.float64))
    y = ng.sin(x)
    y.backward(ng.ones(3, dtype=ng.float64))
    with pytest.raises(RuntimeError) as e, ng.no_grad():
        y.grad_fn(ng.ones(3, dtype=ng.float64))  # its saved x is freed
    assert str(e.value) == ERR_FREED

    # x * x (both gradients to one place), a strided or a float32 gradient: the general path
    del general[:]
    x.grad = None
    (x * x).backward(ng.ones(3, dtype=ng.float64))
    ng.sin(x).backward(ng.ones(6, dtype=ng.float64)[::2])
    ng.sin(x).backward(ng.ones(3))
    np.testing.assert_allclose(x.grad.numpy(), 2 * a + 2 * np.cos(a), rtol=1e-7)
    assert general == ["mul", "sin", "sin"]


@cpu_only
def test_lean_nodes_hand_their_gradient_on_as_an_array_with_every_check(general):
    f64 = ng.float64
    x = ng.tensor([0.5, -1.25], dtype=f64, requires_grad=True)
    w = ng.tensor([1.5, 0.25], dtype=f64)
    a, b = x.detach().numpy().copy(), w.numpy().copy()
    ones = ng.ones(2, dtype=f64)
    # sin hands its gradient to x * x, which refuses it (both its gradients go to one node):
    # that node gets it as a tensor and takes the general path
    y = x * w
    ng.sin(y * y).backward(ones)
    np.testing.assert_allclose(x.grad.numpy(), np.cos((a * b) ** 2) * 2 * a * b * b,
                               rtol=1e-12)
    assert general == ["mul"]
    # a node reached from two sides: the hand-off to the older one waits in the queue until
    # the newer one has run, and the two gradients are summed first
    del general[:]
    x.grad = None
    order = []
    y = ng.sin(x)
    y.register_hook(lambda g: order.append(g.tolist()))
    z = y * w + ng.cos(y)
    z.backward(ones)
    s = np.sin(a)
    np.testing.assert_allclose(order, [b - np.sin(s)], rtol=1e-12)  # one call, the sum
    np.testing.assert_allclose(x.grad.numpy(), (b - np.sin(s)) * np.cos(a), rtol=1e-12)
    assert general == []
    # a handed-on gradient meets an in-place change: the same error as node by node
    y = x * w
    z = ng.exp(y)
    w.add_(1.0)  # MulBackward0 saved w
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward(ones)
    # retain_graph keeps a lean chain's saved arrays; without it they go
    x.grad = None
    w = ng.tensor([1.5, 0.25], dtype=f64)
    z = ng.exp(ng.sin(x * w))
    z.backward(ones, retain_graph=True)
    z.backward(ones)
    expected = 2 * np.exp(np.sin(a * b)) * np.cos(a * b) * b
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)
    with pytest.raises(RuntimeError) as e:
        z.backward(ones)
    assert str(e.value) == ERR_FREED
    assert general == []


@cpu_only
def test_a_small_1d_sums_broadcast_gradient_keeps_its_inputs_lean(general):
    x = ng.tensor([0.5, -1.25, 2.0], requires_grad=True)
    a = x.detach().numpy().astype(np.float64)
    seen = []
    y = x ** 2 * ng.exp(x)
    y.register_hook(lambda g: seen.append(g))
    y.sum().backward()
    (g,) = seen  # (the hook sees sum's gradient as PyTorch gives it, expanded)
    assert g.tolist() == [1.0, 1.0, 1.0] and not g.is_contiguous() and g.stride() == (0,)
    np.testing.assert_allclose(x.grad.numpy(), (2 * a + a * a) * np.exp(a), rtol=1e-6)
    assert general == []  # pow, exp and mul: each node took the lean path
    # a loss times 3: the gradient is the scalar 3 everywhere
    x.grad = None
    (ng.sin(x).sum() * 3.0).backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.cos(a), rtol=1e-6)
    # with create_graph the gradient stays an expand (recorded, so differentiable again)
    x.grad = None
    (gx,) = ng.autograd.grad((x * x * x).sum(), x, create_graph=True)
    np.testing.assert_allclose(gx.detach().numpy(), 3 * a * a, rtol=1e-6)
    gx.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * a, rtol=1e-6)
    # 2-d, or a sum over a dim: the broadcast view, as before
    m = ng.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    seen.clear()
    z = m * 2.0
    z.register_hook(lambda g: seen.append(g))
    z.sum().backward()
    assert seen[0].tolist() == [[1.0, 1.0], [1.0, 1.0]] and seen[0].stride() == (0, 0)


@cpu_only
def test_lean_nodes_after_a_fused_region_keep_its_dependency_counts(monkeypatch):
    from numbagrad.autograd.grad_mode import backward_fusion
    from numbagrad.ops.record import FusableNode

    monkeypatch.setattr(backward_fusion, "min_items", 4)
    regions = []
    real = FusableNode.run_region
    monkeypatch.setattr(
        FusableNode, "run_region", lambda *a: regions.append(r := real(*a)) or r)
    big = ng.tensor(np.linspace(-1, 1, 8), requires_grad=True)
    s = ng.tensor([0.3], requires_grad=True)
    w = ng.tensor([2.0])
    t = ng.sin(s * w)  # small: lean nodes
    loss = ((big * big).exp().sum() * t + t * w).sum()
    loss.backward()
    bv = np.linspace(-1, 1, 8)
    sv = 0.3
    total = np.exp(bv * bv).sum()
    np.testing.assert_allclose(big.grad.numpy(), np.sin(2 * sv) * 2 * bv * np.exp(bv * bv),
                               rtol=1e-5)
    np.testing.assert_allclose(s.grad.numpy(), [(total + 2) * np.cos(2 * sv) * 2], rtol=1e-5)
    assert any(r is not None for r in regions)  # the big part ran as one region


@cpu_only
def test_a_lean_node_builds_its_ctx_when_read_and_then_keeps_to_it():
    x = ng.tensor([0.5, 2.0], dtype=ng.float64, requires_grad=True)
    w = ng.tensor([3.0, -1.0], dtype=ng.float64)
    y = ng.exp(x * w)  # ExpBackward0 saves its result, MulBackward0 saves w
    node = y.grad_fn
    assert node._lean is not None  # no Ctx yet
    ones = ng.ones(2, dtype=ng.float64)
    y.backward(ones, retain_graph=True)  # the lean path, saved values kept
    y.backward(ones, retain_graph=True)
    a, b = x.detach().numpy(), w.numpy()
    np.testing.assert_allclose(x.grad.numpy(), 2 * b * np.exp(a * b), rtol=1e-14)
    # reading ctx builds it from the lean record; from then on the node uses the Ctx
    ctx = node.ctx
    assert node._lean is None and node.ctx is ctx
    assert list(ctx.saved) == ["result"] and ctx.output_index == {"result": 0}
    np.testing.assert_array_equal(ctx.saved["result"].array(), np.exp(a * b))
    x.grad = None
    (g,) = ng.autograd.grad(y, x, ones, create_graph=True)  # the general path, recorded
    (gg,) = ng.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), b * b * np.exp(a * b), rtol=1e-14)
    # a released lean node: its saved values are gone, a Ctx built later has none
    z = ng.sin(x * w)
    z.backward(ones)
    assert z.grad_fn.ctx.saved == {} and z.grad_fn.next_functions[0][0].ctx.saved == {}
    with pytest.raises(RuntimeError) as e:
        z.backward(ones)
    assert str(e.value) == ERR_FREED


def test_a_graph_that_saved_nothing_can_run_twice():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = (x + 1).sum()
    y.backward()
    y.backward()
    assert vals(x.grad) == [2.0, 2.0]


def test_diamonds_and_reuse_accumulate():
    a = ng.tensor([3.0], requires_grad=True)
    y = a + a
    y.backward()
    assert vals(a.grad) == [2.0]
    a.grad = None
    b = a * 2
    c = b.exp()
    d = b.sin()
    (c + d * b).backward()  # b feeds three paths
    av = 3.0
    bv = 2 * av
    assert np.isclose(a.grad.item(), 2 * (np.exp(bv) + np.cos(bv) * bv + np.sin(bv)), rtol=1e-5)


def test_nodes_run_after_all_their_consumers():
    order = []
    x = ng.ones(1, requires_grad=True)
    a = x * 2
    b = a * 3
    c = a + b  # a is used by b and c: its node must wait for both
    for name, t in (("a", a), ("b", b), ("c", c)):
        t.register_hook(lambda g, name=name: order.append(name))
    c.backward()
    assert order == ["c", "b", "a"]
    assert vals(x.grad) == [8.0]  # d(2x + 6x)/dx


def test_the_pass_runs_the_newest_reached_node_first_as_pytorch_does():
    # two leaves, shared intermediates, a node reached early (a) that must wait for three
    # consumers; the order and the gradients are what PyTorch 2.13 gives
    order = []
    x = ng.ones(1, requires_grad=True)
    w = ng.ones(1, requires_grad=True)
    a = x * 2
    b = w * 3
    c = a * b
    d = a + 1
    e = b.sin()
    h = (c + d) * e + a
    f, g = h.grad_fn.next_functions[0][0], h.grad_fn
    names = {"a": a, "b": b, "c": c, "d": d, "e": e, "h": h}
    for name, t in names.items():
        t.register_hook(lambda gr, name=name: order.append(name))
    g.register_prehook(lambda gr: order.append("g"))
    f.register_prehook(lambda gr: order.append("f"))
    x.register_hook(lambda gr: order.append("x"))
    w.register_hook(lambda gr: order.append("w"))
    h.backward()
    assert order == ["h", "g", "f", "e", "d", "c", "b", "w", "a", "x"]
    s3 = np.sin(3.0)
    assert np.isclose(x.grad.item(), 2 * (3 * s3 + s3) + 2, rtol=1e-6)  # 3.128959...
    assert np.isclose(w.grad.item(), 3 * (2 * s3 + (6 + 3) * np.cos(3.0)), rtol=1e-6)


def test_an_edge_to_a_newer_node_is_an_error_not_a_wrong_gradient():
    # the engine relies on every edge leading to an older node (ops, views and Functions all
    # keep to it); a graph that broke it would run a node before all its gradient is in
    from numbagrad.autograd.engine import ERR_ORDER
    from numbagrad.autograd.graph import Node

    class Pass(Node):
        def apply(self, grads):
            return tuple(grads)

    first = Pass(())
    later = Pass(())  # made after ``first``
    first.next_functions = ((later, 0),)
    t = ng.tensor([1.0])
    t._grad_fn, t._requires_grad = first, True
    with pytest.raises(RuntimeError) as e:
        t.backward(ng.ones(1))
    assert str(e.value) == ERR_ORDER.format(nxt=later, node=first)


def test_a_root_that_feeds_another_root_waits_for_it():
    order = []
    x = ng.tensor([2.0], requires_grad=True)
    y = x * 3
    z = y * y  # y is a root and also feeds z
    y.register_hook(lambda g: order.append(vals(g)))
    ng.autograd.backward([y, z, y], [ng.ones(1), ng.ones(1), ng.ones(1) * 2])
    assert order == [[1.0 + 2.0 + 2 * 6.0]]  # one call, with all three contributions
    assert vals(x.grad) == [3 * 15.0]


def test_backward_inputs_restricts_accumulation():
    a = ng.tensor([1.0], requires_grad=True)
    b = ng.tensor([2.0], requires_grad=True)
    (a * b).backward(inputs=[a])
    assert vals(a.grad) == [2.0] and b.grad is None
    y = a * 3
    z = y * y
    z.backward(inputs=[y])
    assert vals(y.grad) == [6.0]  # a non-leaf in inputs gets .grad
    assert vals(a.grad) == [2.0]
    with pytest.raises(RuntimeError, match="cannot be empty"):
        (a * 2).backward(inputs=[])


def test_autograd_grad_returns_a_tuple_and_leaves_grad_alone():
    x = ng.ones(3, requires_grad=True)
    w = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * w
    (gy, gw) = ng.autograd.grad(y.sum(), [y, w])
    assert vals(gy) == [1.0, 1.0, 1.0] and vals(gw) == [1.0, 1.0, 1.0]
    assert x.grad is None and w.grad is None
    g = ng.autograd.grad(w * ng.ones(2, 1), w, ng.tensor([[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]))
    assert vals(g[0]) == [3.0, 3.0, 3.0]


def test_autograd_grad_unused_inputs():
    a = ng.ones(3, requires_grad=True)
    other = ng.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError) as e:
        ng.autograd.grad((a * 2).sum(), [a, other])
    assert str(e.value) == (
        "The differentiated Tensor at index 1 appears to not have been used in the graph. Set "
        "allow_unused=True if this is the desired behavior."
    )
    ga, go = ng.autograd.grad((a * 2).sum(), [a, other], allow_unused=True)
    assert vals(ga) == [2.0] * 3 and go is None
    ga, go = ng.autograd.grad((a * 2).sum(), [a, other], materialize_grads=True)
    assert vals(go) == [0.0, 0.0]
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require grad"):
        ng.autograd.grad((a * 2).sum(), ng.ones(1))


def test_higher_order_gradients():
    a = ng.tensor([2.0], requires_grad=True, dtype=ng.float64)
    (g,) = ng.autograd.grad(a**3, a, create_graph=True)
    assert g.requires_grad and vals(g) == [12.0]
    (gg,) = ng.autograd.grad(g, a, create_graph=True)
    assert vals(gg) == [12.0]  # 6a
    (ggg,) = ng.autograd.grad(gg, a)
    assert vals(ggg) == [6.0]
    # backward(create_graph=True) leaves a differentiable .grad
    b = ng.tensor([2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="reference cycle between the parameter and its "
                                         "gradient"):
        (b**3).backward(create_graph=True)
    assert b.grad.requires_grad and b.grad.grad_fn is not None
    gb = b.grad
    b.grad = None
    gb.backward()
    assert vals(b.grad) == [12.0]


def test_without_create_graph_the_gradient_has_no_graph():
    a = ng.tensor([2.0], requires_grad=True)
    (g,) = ng.autograd.grad(a**3, a)
    assert not g.requires_grad and g.grad_fn is None


# ---------------------------------------------------------------- hooks


def test_hooks_run_in_order_and_may_replace_the_gradient():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(("h1", vals(g))) or g + 1)
    x.register_hook(lambda g: seen.append(("h2", vals(g))))  # returns None: keeps it
    x.register_hook(lambda g: seen.append(("h3", vals(g))) or g * 2)
    (x * 1).sum().backward()
    assert seen == [("h1", [1.0, 1.0]), ("h2", [2.0, 2.0]), ("h3", [2.0, 2.0])]
    assert vals(x.grad) == [4.0, 4.0]  # leaf hooks run before accumulation


def test_hooks_apply_to_autograd_grad_results_and_removal():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    h = y.register_hook(lambda g: g * 0)
    z = y * 2
    assert vals(ng.autograd.grad(z.sum(), y, retain_graph=True)[0]) == [0.0, 0.0]
    assert vals(ng.autograd.grad(z.sum(), x, retain_graph=True)[0]) == [0.0, 0.0]
    h.remove()
    assert vals(ng.autograd.grad(z.sum(), x)[0]) == [2.0, 2.0]
    leaf = ng.tensor([1.0], requires_grad=True)
    with leaf.register_hook(lambda g: g * 5):
        (leaf * 2).backward()
    (leaf * 2).backward()  # the handle removed the hook on leaving the block
    assert vals(leaf.grad) == [12.0]


def test_leaf_hook_survives_graphs():
    x = ng.tensor([1.0], requires_grad=True)
    x.register_hook(lambda g: g * 5)
    (x * 2).backward()
    (x * 2).backward()
    assert vals(x.grad) == [20.0]


def test_retain_grad_sees_the_hooked_gradient():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.register_hook(lambda g: g * 2)
    y.retain_grad()
    y.register_hook(lambda g: g * 10)
    y.sum().backward()
    assert vals(y.grad) == [20.0, 20.0]  # PyTorch 2.x: retains_grad runs after all hooks
    assert vals(x.grad) == [60.0, 60.0]
    assert y.retains_grad and not x.retains_grad
    x.retain_grad()  # a no-op on a leaf


def test_node_pre_and_post_hooks():
    a = ng.tensor([2.0], requires_grad=True)
    y = a * 3
    calls = []
    y.grad_fn.register_prehook(lambda go: calls.append(("pre", [vals(g) for g in go])))
    y.grad_fn.register_hook(
        lambda gi, go: calls.append(("post", [None if g is None else vals(g) for g in gi]))
    )
    y.backward()
    assert calls == [("pre", [[1.0]]), ("post", [[3.0], None])]


# ---------------------------------------------------------------- grad modes


def test_grad_mode_contexts_decorators_and_nesting():
    x = ng.ones(2, requires_grad=True)
    assert ng.is_grad_enabled()
    with ng.no_grad():
        assert not ng.is_grad_enabled()
        with ng.enable_grad():
            assert (x * 2).requires_grad
        with ng.set_grad_enabled(True):
            assert (x * 2).requires_grad
        assert not (x * 2).requires_grad
    assert ng.is_grad_enabled()

    @ng.set_grad_enabled(False)
    def f():
        return (x * 2).requires_grad

    assert ng.is_grad_enabled()  # decorating did not switch the mode
    assert f() is False and ng.is_grad_enabled()

    @ng.no_grad()
    def g():
        return ng.is_grad_enabled()

    assert g() is False and ng.is_grad_enabled()
    with ng.inference_mode():
        assert not (x * 2).requires_grad
    with pytest.raises(ValueError):
        with ng.no_grad():
            raise ValueError
    assert ng.is_grad_enabled()  # restored after an exception


def test_grad_mode_is_thread_local():
    x = ng.ones(2, requires_grad=True)
    inside, started, release = {}, threading.Event(), threading.Event()

    def worker():
        with ng.no_grad():
            started.set()
            release.wait(5)
            inside["worker"] = (x * 2).requires_grad

    th = threading.Thread(target=worker)
    th.start()
    started.wait(5)
    inside["main"] = (x * 2).requires_grad  # while the worker sits inside no_grad
    release.set()
    th.join()
    assert inside == {"worker": False, "main": True}

    with ng.no_grad():
        th = threading.Thread(target=lambda: inside.update(new=ng.is_grad_enabled()))
        th.start()
        th.join()
    assert inside["new"] is True  # a new thread starts with grad enabled


def test_two_threads_train_at_once(device):
    if device == "cuda" and ng.cuda.is_simulator():
        pytest.skip("the CUDA simulator runs kernels on shared state: not thread-safe")
    results = {}

    def train(name, mode):
        w = ng.tensor([1.0, 2.0], requires_grad=True)
        for _ in range(50):
            with ng.set_grad_enabled(mode):
                loss = (w * w).sum()
            if mode:
                loss.backward()
        results[name] = (loss.requires_grad, None if w.grad is None else vals(w.grad))

    ts = [threading.Thread(target=train, args=(n, m)) for n, m in (("on", True), ("off", False))]
    for th in ts:
        th.start()
    for th in ts:
        th.join()
    assert results == {"on": (True, [100.0, 200.0]), "off": (False, None)}


# ---------------------------------------------------------------- detach, data, numpy


def test_detach_shares_storage_and_version():
    a = ng.ones(3, requires_grad=True)
    d = a.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    d[0] = 5.0
    assert vals(a) == [5.0, 1.0, 1.0] and a._version == 1


def test_data_is_untracked():
    a = ng.ones(3, requires_grad=True)
    y = a.sigmoid()
    a.data.add_(1)  # autograd does not see this
    assert a._version == 0
    y.sum().backward()  # no version error: sigmoid saved its result, not a
    a.data = ng.zeros(3)
    assert vals(a) == [0.0] * 3 and a.requires_grad


def test_detach_inplace():
    a = ng.ones(3, requires_grad=True)
    b = a * 2
    b.detach_()
    assert not b.requires_grad and b.is_leaf
    v = (a * 2)[1:]
    with pytest.raises(RuntimeError, match=r"^Can't detach views in-place\. Use detach\(\) instead\."):
        v.detach_()


@cpu_only  # CUDA tensors: test_device.py checks their numpy() refusal
def test_numpy_refusal_and_force():
    a = ng.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError) as e:
        a.numpy()
    assert str(e.value) == (
        "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
    )
    assert a.numpy(force=True).tolist() == [1.0, 1.0]


# ---------------------------------------------------------------- memory


def test_saved_buffers_are_freed_after_backward():
    x = ng.rand(1000, requires_grad=True)
    y = x.exp()  # ExpBackward0 saves its result
    z = y.sum()
    node = y.grad_fn
    saved = weakref.ref(node.ctx.saved["result"].data)
    del y
    gc.collect()
    assert saved() is not None  # kept by the graph until backward
    z.backward()
    gc.collect()
    assert saved() is None


def test_graph_is_freed_with_its_output():
    x = ng.rand(10, requires_grad=True)
    y = (x * 2).exp().sum()
    node = weakref.ref(y.grad_fn)
    del y
    gc.collect()
    assert node() is None


def test_training_loop_does_not_grow(device):
    """10,000 steps of forward, backward and update: no objects or memory pile up."""
    if device == "cuda" and ng.cuda.is_simulator():
        pytest.skip("10,000 steps take minutes in the CUDA simulator; runs on a real GPU")
    import resource

    w = ng.randn(4, 4, requires_grad=True)
    x = ng.randn(8, 4)

    def step():
        loss = ((x @ w).tanh() ** 2).mean()
        loss.backward()
        with ng.no_grad():
            w.sub_(0.01 * w.grad)
        w.grad = None

    for _ in range(1000):  # warm caches (kernels, dispatch) first
        step()
    gc.collect()
    objects = len(gc.get_objects())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    for _ in range(10_000):
        step()
    gc.collect()
    assert len(gc.get_objects()) - objects < 100
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak < 4096


# ---------------------------------------------------------------- legacy


def test_variable_is_a_detached_alias():
    from numbagrad.autograd import Variable

    x = ng.ones(2)
    v = Variable(x, requires_grad=True)
    assert v is not x and v.requires_grad and v.is_leaf and not x.requires_grad
    x[0] = 5.0  # shared storage and version counter
    assert vals(v) == [5.0, 1.0] and v._version == 1
    y = ng.ones(2, requires_grad=True) * 2
    w = Variable(y)
    assert w.is_leaf and not w.requires_grad
    assert isinstance(ng.ones(1), Variable)
    with pytest.warns(UserWarning, match=r"^volatile was removed and now has no effect\. Use `with numbagrad\.no_grad\(\):` instead\.$"):
        Variable(x, volatile=True)
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        Variable([1.0])


# ---------------------------------------------------------------- .grad takes unshared gradients


@cpu_only
def test_grad_takes_a_fresh_gradients_memory_but_never_one_someone_holds():
    x = ng.randn(1000, requires_grad=True)
    seen = []
    h = x.register_hook(lambda g: seen.append(g.data_ptr()))  # keeps only the address
    (x * 2).sum().backward()
    assert x.grad.data_ptr() == seen[0] and vals(x.grad)[:2] == [2.0, 2.0]  # no copy
    h.remove()
    x.grad = None
    kept = []
    x.register_hook(lambda g: kept.append(g))  # a hook holding the gradient: .grad copies
    (x * 3).sum().backward()
    assert x.grad.data_ptr() != kept[0].data_ptr()
    x.grad.add_(1)
    assert vals(kept[0])[:2] == [3.0, 3.0]


@cpu_only
def test_grad_never_aliases_a_gradient_the_caller_passed_or_another_leaf_got():
    a = ng.randn(5, requires_grad=True)
    b = ng.randn(5, requires_grad=True)
    g = ng.ones(5)
    (a + 0).backward(g)  # AddBackward passes the caller's tensor through
    a.backward(g)
    assert a.grad.data_ptr() != g.data_ptr() and vals(a.grad) == [2.0] * 5
    (a + b).backward(ng.ones(5))  # one gradient tensor reaches both leaves
    assert a.grad.data_ptr() != b.grad.data_ptr()
    b.grad.add_(1)
    assert vals(a.grad) == [3.0] * 5 and vals(b.grad) == [2.0] * 5


def test_calling_a_node_returns_a_tensor_for_one_input_and_a_tuple_for_several():
    torch = pytest.importorskip("torch")
    for lib in (ng, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        one = x.sum().grad_fn(lib.tensor(1.0))
        several = (x * 2).grad_fn(lib.ones(2))  # (MulBackward0 has two inputs, one a number)
        both = (x * x.detach().requires_grad_()).grad_fn(lib.ones(2))
        assert isinstance(one, lib.Tensor) and one.tolist() == [1.0, 1.0], lib
        assert isinstance(several, tuple) and several[0].tolist() == [2.0, 2.0], lib
        assert isinstance(both, tuple) and len(both) == 2, lib
