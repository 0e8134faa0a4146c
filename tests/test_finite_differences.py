"""``torch.gradient`` against PyTorch's: values, the gradient through it, its node and errors."""

from __future__ import annotations

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

X = [1.0, 2.0, 4.0, 7.0, 11.0]
C = [0.0, 1.0, 3.0, 4.0, 8.0]
M = np.random.default_rng(0).random((4, 5))
CASES = {
    "default": lambda L, x: L.gradient(x),
    "spacing": lambda L, x: L.gradient(x, spacing=2.0),
    "coordinates": lambda L, x: L.gradient(x, spacing=(L.tensor(C, dtype=L.float64),)),
    "coordinates_order2": lambda L, x: L.gradient(x, spacing=(L.tensor(C, dtype=L.float64),),
                                                  edge_order=2),
    "order2": lambda L, x: L.gradient(x, edge_order=2),
}
CASES_2D = {
    "all_dims": lambda L, x: L.gradient(x),
    "dim1": lambda L, x: L.gradient(x, dim=1),
    "spacings": lambda L, x: L.gradient(x, spacing=[2.0, 3.0], edge_order=2),
    "coordinates": lambda L, x: L.gradient(x, spacing=[L.tensor([0.0, 1.0, 3.0, 4.0]),
                                                       L.tensor([0.0, 0.5, 1.0, 2.0, 2.5])],
                                           edge_order=2),
    "dims_negative": lambda L, x: L.gradient(x, dim=[-1, 0], spacing=0.5),
}


def _both(call, data):
    out = []
    for lib in (ng, torch):
        x = lib.tensor(data, dtype=lib.float64, requires_grad=True)
        parts = call(lib, x)
        sum(((p * (k + 1)) ** 2).sum() for k, p in enumerate(parts)).backward()
        out.append(([p.detach().numpy() for p in parts], [p.grad_fn.name() for p in parts],
                    x.grad.numpy()))
    return out


@pytest.mark.parametrize("name,data", [(k, X) for k in CASES] + [(k, M) for k in CASES_2D],
                         ids=[*CASES, *(k + "_2d" for k in CASES_2D)])
def test_gradient_as_pytorch(name, data):
    call = CASES.get(name) if data is X else CASES_2D[name]
    (va, na, ga), (vb, nb, gb) = _both(call, data)
    assert len(va) == len(vb) and na == nb
    for a, b in zip(va, vb):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ga, gb, rtol=1e-12, atol=1e-12)


def test_gradient_of_integers_is_float():
    for lib in (ng, torch):
        (g,) = lib.gradient(lib.tensor([1, 3, 6]))
        assert str(g.dtype).endswith("float32") and g.tolist() == [2.0, 2.5, 3.0]


@pytest.mark.parametrize("call", [
    lambda L: L.gradient(L.tensor([1.0])),
    lambda L: L.gradient(L.tensor([1.0, 2.0]), edge_order=2),
    lambda L: L.gradient(L.tensor(X), spacing=[1.0, 2.0]),
    lambda L: L.gradient(L.ones(2, 3), dim=0, spacing=[1.0, 2.0]),
    lambda L: L.gradient(L.tensor(X), edge_order=3),
])
def test_gradient_errors_as_pytorch(call):
    messages = []
    for lib in (ng, torch):
        with pytest.raises(RuntimeError) as e:
            call(lib)
        messages.append(str(e.value))
    assert messages[0] == messages[1]
