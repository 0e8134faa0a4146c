"""What the tutorial programs of tests/programs_d needed and numbagrad lacked, each checked
against PyTorch."""

from __future__ import annotations

import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn"])
def test_factory_size_keyword(name):
    # d2l traces shapes with torch.rand(size=(1, 1, 96, 96))
    mine, ref = getattr(ng, name), getattr(torch, name)
    for size in ((2, 3), [4], ()):
        t = mine(size=size, dtype=ng.float64)
        assert tuple(t.shape) == tuple(ref(size=size).shape) and t.dtype == ng.float64
    if name in ("zeros", "ones"):
        assert mine(size=(2,)).tolist() == ref(size=(2,)).tolist()
    both = _error(lambda: mine(2, size=(3,))), _error(lambda: ref(2, size=(3,)))
    # (rand and randn list their overloads in the message, which numbagrad does not)
    assert both[0] == both[1] if name in ("zeros", "ones", "empty") else both[0][0] is TypeError
    assert _error(lambda: mine(size=3)) == _error(lambda: ref(size=3))
    if name in ("zeros", "ones", "empty"):
        assert _error(lambda: mine()) == _error(lambda: ref())
