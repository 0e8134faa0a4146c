"""numbagrad.nn.functional against hand-derived NumPy values and gradients."""

from __future__ import annotations

import numpy as np

import numbagrad as ng
import numbagrad.nn.functional as F
from numbagrad.autograd import gradcheck


def _log_softmax(a):
    m = a.max(1, keepdims=True)
    return a - m - np.log(np.exp(a - m).sum(1, keepdims=True))


def test_cross_entropy_value_and_gradient():
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((4, 3))
    target = np.array([0, 2, 1, 2])
    x = ng.tensor(logits, requires_grad=True)
    loss = F.cross_entropy(x, ng.tensor(target))
    expected = -_log_softmax(logits)[np.arange(4), target].mean()
    np.testing.assert_allclose(loss.item(), expected, rtol=1e-12)
    loss.backward()
    soft = np.exp(_log_softmax(logits))
    soft[np.arange(4), target] -= 1
    np.testing.assert_allclose(x.grad.numpy(), soft / 4, rtol=1e-10)
    assert gradcheck(lambda t: F.cross_entropy(t, ng.tensor(target), reduction="sum"), (x,))


def test_nll_loss_rejects_out_of_range_targets():
    x = ng.zeros(2, 3)
    try:
        F.nll_loss(x, ng.tensor([0, 3]))
    except IndexError as e:
        assert str(e) == "Target 3 is out of bounds."
    else:
        raise AssertionError("no error")


def test_mse_loss_and_linear():
    rng = np.random.default_rng(1)
    inp, w, b = rng.standard_normal((5, 3)), rng.standard_normal((2, 3)), rng.standard_normal(2)
    target = rng.standard_normal((5, 2))
    ti, tw, tb = (ng.tensor(a, requires_grad=True) for a in (inp, w, b))
    loss = F.mse_loss(F.linear(ti, tw, tb), ng.tensor(target))
    out = inp @ w.T + b
    np.testing.assert_allclose(loss.item(), ((out - target) ** 2).mean(), rtol=1e-12)
    loss.backward()
    g = 2 * (out - target) / out.size
    np.testing.assert_allclose(tw.grad.numpy(), g.T @ inp, rtol=1e-10)
    np.testing.assert_allclose(tb.grad.numpy(), g.sum(0), rtol=1e-10)
    np.testing.assert_allclose(ti.grad.numpy(), g @ w, rtol=1e-10)


def test_activations_match_the_tensor_methods():
    x = ng.tensor([-1.0, 0.5, 2.0])
    assert F.relu(x).tolist() == [0.0, 0.5, 2.0]
    np.testing.assert_allclose(F.sigmoid(x).numpy(), 1 / (1 + np.exp(-x.numpy())), rtol=1e-6)
    np.testing.assert_allclose(F.tanh(x).numpy(), np.tanh(x.numpy()), rtol=1e-6)
    np.testing.assert_allclose(F.softmax(x, 0).sum().item(), 1.0, rtol=1e-6)
    np.testing.assert_allclose(F.log_softmax(x, 0).exp().sum().item(), 1.0, rtol=1e-6)
