"""cat and stack of plain CPU tensors on their lean hook: values, layouts, nodes, gradients
and errors as PyTorch's (the hook records the node call_composite would)."""

import numpy as np
import pytest
import torch

import numbagrad as ng


@pytest.mark.parametrize("fn, dim", [("cat", 0), ("cat", 1), ("cat", -1), ("stack", 0),
                                     ("stack", 1), ("stack", -1)])
def test_values_nodes_and_gradients_as_pytorchs(fn, dim):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((3, 4)) for _ in range(3)]
    got = []
    for lib in (ng, torch):
        ts = [lib.tensor(a, requires_grad=k != 1) for k, a in enumerate(arrays)]
        y = getattr(lib, fn)(ts, dim)
        names = (y.grad_fn.name(), len(y.grad_fn.next_functions),
                 y.grad_fn.next_functions[1][0] is None)
        (y * y * lib.arange(y.numel()).reshape(y.shape)).sum().backward()
        got.append((names, tuple(y.shape), y.stride(), y.detach().numpy(),
                    [None if t.grad is None else t.grad.numpy() for t in ts]))
    assert got[0][:3] == got[1][:3]
    np.testing.assert_allclose(got[0][3], got[1][3])
    for g, w in zip(got[0][4], got[1][4]):
        assert (g is None) == (w is None)
        if g is not None:
            np.testing.assert_allclose(g, w)


def test_mixed_calls_take_the_general_path_with_pytorchs_results_and_errors():
    for lib in (ng, torch):
        a, b = lib.ones(2, 3), lib.zeros(2, 3, dtype=lib.float64)
        assert lib.cat([a, b]).dtype == lib.float64  # (promoted, off the hook)
        with pytest.raises(RuntimeError, match="Sizes of tensors must match except in "
                                               "dimension 0"):
            lib.cat([a, lib.ones(2, 4)])
        with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
            lib.stack([a, lib.ones(3, 2)])
        lazy = lib.ones(300, 300) * 2  # (numbagrad: a lazy result)
        assert lib.cat([lazy, lib.ones(2, 300)]).shape == (302, 300)


def test_no_grad_records_nothing_and_results_are_new():
    a = ng.ones(2, 2, requires_grad=True)
    with ng.no_grad():
        y = ng.cat([a, a])
    assert y.grad_fn is None and not y.requires_grad and y._base is None
