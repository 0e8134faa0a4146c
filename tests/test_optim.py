"""numbagrad.optim: SGD and Adam follow PyTorch's update rules (hand-computed here)."""

from __future__ import annotations

import numpy as np
import pytest

import numbagrad as ng


def test_sgd_plain_momentum_nesterov_weight_decay():
    g = np.array([1.0, -2.0])
    for kw in (
        dict(lr=0.1),
        dict(lr=0.1, momentum=0.9),
        dict(lr=0.1, momentum=0.9, nesterov=True),
        dict(lr=0.1, weight_decay=0.5),
    ):
        p = ng.tensor([1.0, 2.0], dtype=ng.float64, requires_grad=True)
        opt = ng.optim.SGD([p], **kw)
        ref, buf = np.array([1.0, 2.0]), None
        for _ in range(3):
            opt.zero_grad()
            (p * ng.tensor(g, dtype=ng.float64)).sum().backward()
            opt.step()
            d = g + kw.get("weight_decay", 0.0) * ref
            if kw.get("momentum"):
                buf = d.copy() if buf is None else 0.9 * buf + d
                d = d + 0.9 * buf if kw.get("nesterov") else buf
            ref = ref - 0.1 * d
        np.testing.assert_allclose(p.detach().numpy(), ref, rtol=1e-12)
        assert p.is_leaf and p.requires_grad


def test_adam_matches_the_paper_update():
    g = np.array([0.5, -1.0, 2.0])
    p = ng.tensor([1.0, 2.0, 3.0], dtype=ng.float64, requires_grad=True)
    opt = ng.optim.Adam([p], lr=0.01)
    ref, m, v = np.array([1.0, 2.0, 3.0]), 0.0, 0.0
    for t in range(1, 6):
        opt.zero_grad()
        (p * ng.tensor(g, dtype=ng.float64) * p).sum().backward()
        opt.step()
        grad = 2 * g * ref
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad**2
        ref = ref - 0.01 * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    np.testing.assert_allclose(p.detach().numpy(), ref, rtol=1e-10)
    assert opt.state[p]["step"] == 5


def test_zero_grad_and_groups():
    a = ng.ones(2, requires_grad=True)
    b = ng.ones(2, requires_grad=True)
    opt = ng.optim.SGD([{"params": [a]}, {"params": b, "lr": 1.0}], lr=0.5)
    (a * 2 + b * 3).sum().backward()
    opt.step()
    assert a.tolist() == [0.0, 0.0] and b.tolist() == [-2.0, -2.0]
    opt.zero_grad(set_to_none=False)
    assert a.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert a.grad is None
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        ng.optim.SGD([a * 2])
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        ng.optim.Adam([])
