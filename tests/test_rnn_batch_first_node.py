"""GRU and RNN with batch_first return their output transposed as PyTorch's in-place
``transpose_`` leaves it (TransposeBackward1, not a view); LSTM's is a view
(TransposeBackward0). Writing into the output in place is allowed, as in PyTorch, and the
gradients stay PyTorch's."""

import numpy as np
import pytest
import torch

import numbagrad as ng


@pytest.mark.parametrize("name, node", [("GRU", "TransposeBackward1"),
                                        ("RNN", "TransposeBackward1"),
                                        ("LSTM", "TransposeBackward0")])
def test_node_layout_and_gradients_as_pytorchs(name, node):
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((2, 3, 4))
    got = []
    for lib in (ng, torch):
        lib.manual_seed(0)
        m = getattr(lib.nn, name)(4, 5, num_layers=2, batch_first=True).double()
        with lib.no_grad():
            for k, p in enumerate(m.parameters()):
                p.copy_(lib.tensor(np.random.default_rng(k).uniform(-0.4, 0.4, tuple(p.shape))))
        x = lib.tensor(x_np, requires_grad=True)
        out = m(x)[0]
        seen = (out.grad_fn.name(), out.stride(), out.is_contiguous(), out._base is None)
        if name != "LSTM":
            out.mul_(2.0)  # (allowed: the layer's saved values are not this memory)
        (out * out).sum().backward()
        got.append((seen, x.grad.numpy(), [p.grad.numpy() for p in m.parameters()]))
    assert got[0][0] == got[1][0] and got[0][0][0] == node
    np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-10)
    for g, w in zip(got[0][2], got[1][2]):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)
