"""``out=`` of an elementwise op: the op's loop writes into ``out`` where it can
(``dispatch.write_result``); every call gives PyTorch's values, dtypes, version counts,
warnings and errors, whichever path takes it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")


def _both(fn):
    res = []
    for lib in (ng, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                out = fn(lib)
            except Exception as e:  # (compared below: type and message)
                out = (type(e), str(e))
        # (PyTorch adds where in its C++ code a warning came from)
        res.append((out, [str(x.message).split(" (Triggered internally")[0] for x in w]))
    return res


CASES = {
    "add": lambda L, x, y, o: L.add(x, y, out=o),
    "sub": lambda L, x, y, o: L.sub(x, y, out=o),
    "mul": lambda L, x, y, o: L.mul(x, y, out=o),
    "div": lambda L, x, y, o: L.div(x, y, out=o),
    "atan2": lambda L, x, y, o: L.atan2(x, y, out=o),
    "sin": lambda L, x, y, o: L.sin(x, out=o),
    "exp": lambda L, x, y, o: L.exp(x, out=o),
    "add alias": lambda L, x, y, o: L.add(o, y, out=o),
    "add alpha": lambda L, x, y, o: L.add(x, y, alpha=2, out=o),
    "mul number": lambda L, x, y, o: L.mul(x, 2.5, out=o),
    "pow param": lambda L, x, y, o: L.pow(x, 2, out=o),
    "maximum number": lambda L, x, y, o: L.maximum(x, 2.0, out=o),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("shape", [(5,), (3, 4), (70000,)])
def test_out_values_and_versions_match_torch(name, shape):
    rng = np.random.default_rng(0)
    xd, yd, od = (rng.uniform(0.5, 2, shape).astype(np.float32) for _ in range(3))

    def run(L):
        x, y, o = L.tensor(xd), L.tensor(yd), L.tensor(od)
        v = o._version
        r = CASES[name](L, x, y, o)
        return r is o, o.numpy().copy(), o._version - v, str(o.dtype).split(".")[-1]

    (ours, w1), (theirs, w2) = _both(run)
    assert w1 == w2
    if isinstance(theirs[0], type):
        assert ours == theirs
        return
    assert ours[0] is theirs[0] is True and ours[2:] == theirs[2:]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)


@pytest.mark.parametrize("case", [
    # (another dtype, another shape, a broadcast operand, a bool result, a grad)
    lambda L: L.add(L.ones(3), L.ones(3), out=L.zeros(3, dtype=L.float64)),
    lambda L: L.mul(L.ones(3), L.ones(3), out=L.zeros(2)),
    lambda L: L.mul(L.ones(2, 3), L.ones(3), out=L.zeros(2, 3)),
    lambda L: L.lt(L.ones(3), L.zeros(3), out=L.ones(3, dtype=L.bool)),
    lambda L: L.add(L.ones(3, requires_grad=True), 1.0, out=L.zeros(3)),
    lambda L: L.sin(L.ones(4), out=L.zeros(8)[::2]),
    lambda L: L.mul(L.arange(3), L.arange(3), out=L.zeros(3, dtype=L.int64)),
])
def test_out_other_calls_match_torch(case):
    def run(L):
        r = case(L)
        return r.numpy().tolist(), str(r.dtype).split(".")[-1], tuple(r.shape)

    (ours, w1), (theirs, w2) = _both(run)
    assert ours == theirs and w1 == w2
