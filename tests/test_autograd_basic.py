"""The minimal backward every op relies on: leaves, broadcasting, reuse, accumulation, errors."""

from __future__ import annotations

import numpy as np
import pytest

import numbagrad as ng

from devices import cpu_only, on_each_device  # noqa: E402

# every test runs on the CPU and (under -m cuda) on CUDA: factories default to that device
pytestmark = on_each_device


@cpu_only  # asserts CPU printing; test_device.py checks CUDA printing
def test_tutorial_square():
    x = ng.tensor([4.0], requires_grad=True)
    y = x * x
    assert repr(x) == "tensor([4.], requires_grad=True)"
    assert repr(y) == "tensor([16.], grad_fn=<MulBackward0>)"
    y.backward()
    assert repr(x.grad) == "tensor([8.])"


def test_broadcast_gradients_are_summed_to_each_input_shape():
    a = ng.ones(2, 3, requires_grad=True)
    b = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
    c = ng.tensor(2.0, requires_grad=True)
    ((a * b + c) ** 2).sum().backward()
    expected_a = 2 * (np.ones((2, 3)) * [1, 2, 3] + 2) * [1, 2, 3]
    np.testing.assert_allclose(a.grad.cpu().numpy(), expected_a)
    np.testing.assert_allclose(b.grad.cpu().numpy(), (2 * (np.array([1, 2, 3]) + 2)) * 2)
    assert c.grad.shape == ()
    np.testing.assert_allclose(c.grad.item(), (2 * (np.ones((2, 3)) * [1, 2, 3] + 2)).sum())


def test_reused_tensor_and_diamond_accumulate():
    x = ng.tensor([3.0], requires_grad=True)
    (x * x).backward()
    assert x.grad.item() == 6.0
    x.grad = None
    y = x + x
    z = y * y + y.exp()  # diamond through y
    z.backward()
    np.testing.assert_allclose(x.grad.item(), 2 * (2 * 6.0 + np.exp(6.0)), rtol=1e-6)


def test_gradients_accumulate_across_backward_calls_in_place():
    w = ng.tensor([1.0, 2.0], requires_grad=True)
    (w * 3).sum().backward()
    first = w.grad
    (w * 3).sum().backward()
    assert w.grad is first
    assert w.grad.tolist() == [6.0, 6.0]
    w.grad.zero_()
    assert w.grad.tolist() == [0.0, 0.0]


@cpu_only  # 100,000 launches: minutes in the CUDA simulator
def test_deep_chain_does_not_recurse():
    x = ng.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.backward()
    assert x.grad.item() == 1.0


def test_matmul_batched_broadcast_gradients():
    rng = np.random.default_rng(1)
    a_np, b_np = rng.standard_normal((2, 1, 3, 4)), rng.standard_normal((5, 4, 2))
    a = ng.tensor(a_np, requires_grad=True)
    b = ng.tensor(b_np, requires_grad=True)
    out = a @ b
    assert out.shape == (2, 5, 3, 2)
    np.testing.assert_allclose(out.numpy(force=True), a_np @ b_np, rtol=1e-12)
    out.sum().backward()
    g = np.ones((2, 5, 3, 2))
    np.testing.assert_allclose(a.grad.cpu().numpy(), (g @ np.swapaxes(b_np, -1, -2)).sum(1, keepdims=True))
    np.testing.assert_allclose(b.grad.cpu().numpy(), (np.swapaxes(a_np, -1, -2) @ g).sum(0))


def test_vector_matrix_products():
    v = ng.tensor([1.0, 2.0], requires_grad=True)
    m = ng.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    (v @ m).sum().backward()
    assert v.grad.tolist() == [6.0, 15.0]
    assert m.grad.tolist() == [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]


def test_repeated_advanced_index_accumulates():
    x = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[[0, 0, 2]].sum().backward()
    assert x.grad.tolist() == [2.0, 0.0, 1.0]
    x.grad = None
    x[x > 1.5].sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 1.0]


def test_max_with_dim_routes_gradient_to_the_index_and_ties_share_for_amax():
    x = ng.tensor([[1.0, 5.0, 5.0], [7.0, 0.0, 2.0]], requires_grad=True)
    values, indices = x.max(1)
    assert indices.tolist() == [1, 0]
    values.sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]
    x.grad = None
    x.amax(1).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]]


def test_prod_gradient_with_a_zero():
    x = ng.tensor([2.0, 0.0, 3.0], requires_grad=True)
    x.prod().backward()
    assert x.grad.tolist() == [0.0, 6.0, 0.0]


def test_no_grad_update_and_leaf_inplace_error():
    w = ng.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used"):
        w -= 0.1 * w.grad
    with ng.no_grad():
        w -= 0.1 * w.grad
    assert w.tolist() == pytest.approx([0.8, 1.6])
    assert w.is_leaf and w.requires_grad and w.grad_fn is None


def test_errors_for_bad_backward_calls():
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (ng.ones(3, requires_grad=True) * 2).backward()
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        ng.ones(1).backward()
    x = ng.tensor([1.0], requires_grad=True)
    y = x.exp()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    z = x + 1  # saved nothing: a second backward is allowed, as in PyTorch
    z.backward()
    z.backward()
    assert x.grad.item() == pytest.approx(np.e + 2)


@cpu_only  # a CUDA tensor has no host memory to share
def test_numpy_shares_memory_and_refuses_graph_tensors():
    a = np.zeros(3, dtype=np.float32)
    t = ng.from_numpy(a)
    t += 1
    assert a.tolist() == [1.0, 1.0, 1.0]
    assert t.cpu().numpy() is a
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        ng.ones(2, requires_grad=True).cpu().numpy()
