"""The performance workloads W1-W6, written once for any PyTorch-like module.

``lib`` is ``numbagrad`` or ``torch``: both the asv suite and ``compare.py`` build their
benchmarks from these functions, so the two libraries run exactly the same code. Each ``w*``
function does its set-up (and one warm-up call, so JIT compilation is never timed) and returns
a zero-argument callable that runs one forward + backward.
"""

from __future__ import annotations

import numpy as np

CHAIN_LEN = 100


def _sync(lib, device):
    if device == "cuda":
        lib.cuda.synchronize()


def _leaf(lib, values, dtype, device):
    return lib.tensor(values, dtype=getattr(lib, dtype), device=device, requires_grad=True)


def _data(shape, seed=0, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float64)


def w1(lib, n, dtype="float32", device="cpu"):
    """``(x**2 * exp(x)).sum().backward()``."""
    x = _leaf(lib, _data(n), dtype, device)

    def run():
        x.grad = None
        (x**2 * lib.exp(x)).sum().backward()
        _sync(lib, device)

    run()
    return run


def w2(lib, dtype="float32", device="cpu", batch=256):
    """One step of an MLP 784-512-10: matmul, bias, relu, cross-entropy, backward."""
    w1_ = _leaf(lib, _data((784, 512), 1, 784**-0.5), dtype, device)
    b1 = _leaf(lib, _data(512, 2, 0.1), dtype, device)
    w2_ = _leaf(lib, _data((512, 10), 3, 512**-0.5), dtype, device)
    b2 = _leaf(lib, _data(10, 4, 0.1), dtype, device)
    x = lib.tensor(_data((batch, 784), 5), dtype=getattr(lib, dtype), device=device)
    labels = np.random.default_rng(6).integers(0, 10, batch)
    y = lib.tensor(labels, dtype=lib.int64, device=device)
    params = (w1_, b1, w2_, b2)
    cross_entropy = lib.nn.functional.cross_entropy

    def run():
        for p in params:
            p.grad = None
        h = lib.relu(x @ w1_ + b1)
        loss = cross_entropy(h @ w2_ + b2, y)
        loss.backward()
        _sync(lib, device)

    run()
    return run


def w3(lib, grad=True, dtype="float32", device="cpu", length=CHAIN_LEN):
    """A chain of ``length`` ops (mul, add, sin in turn) on 1-element tensors, then backward.

    With ``grad=False`` the forward chain runs under ``no_grad``. Time per op is the call's
    time divided by ``length``.
    """
    x = _leaf(lib, [0.5], dtype, device)
    w = lib.tensor([1.001], dtype=getattr(lib, dtype), device=device)
    c = lib.tensor([0.1], dtype=getattr(lib, dtype), device=device)
    sin = lib.sin

    def chain():
        y = x
        for i in range(length):
            k = i % 3
            if k == 0:
                y = y * w
            elif k == 1:
                y = y + c
            else:
                y = sin(y)
        return y

    if grad:
        def run():
            x.grad = None
            chain().backward()
            _sync(lib, device)
    else:
        def run():
            with lib.no_grad():
                chain()
            _sync(lib, device)

    run()
    return run


def w4(lib, which, n=10**7, dtype="float32", device="cpu"):
    """``x.sum()``, ``x.mean()`` or ``(x*x).max()`` and its backward."""
    x = _leaf(lib, _data(n), dtype, device)
    forward = {
        "sum": lambda: x.sum(),
        "mean": lambda: x.mean(),
        "max": lambda: (x * x).max(),
    }[which]

    def run():
        x.grad = None
        forward().backward()
        _sync(lib, device)

    run()
    return run


def w5(lib, dtype="float32", device="cpu", n=1000):
    """``((a + b) * a).sum().backward()`` with a (n, n) and a broadcast row b (n,)."""
    a = _leaf(lib, _data((n, n), 7), dtype, device)
    b = _leaf(lib, _data(n, 8), dtype, device)

    def run():
        a.grad = None
        b.grad = None
        ((a + b) * a).sum().backward()
        _sync(lib, device)

    run()
    return run


# W6 runs in a new interpreter: the import plus one W1 at n = 1e3.
W6_SOURCE = """\
import {module} as lib
x = lib.randn(1000, requires_grad=True)
(x**2 * lib.exp(x)).sum().backward()
assert x.grad is not None
"""


def w6_source(module: str) -> str:
    return W6_SOURCE.format(module=module)
