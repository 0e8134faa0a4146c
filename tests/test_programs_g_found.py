"""What checking the idioms of the tutorials behind tests/programs_g/ turned up, each checked
against PyTorch: the legacy constructors read their arguments as PyTorch's parser does. One int
is a size, not data (``weight.new(hidden_size).zero_()`` in older RNN and GAN code), and so is a
Size given to ``torch.Tensor``; ``size=`` is taken; a number is refused as data; ``Tensor(t)``
and ``x.new(t)`` alias ``t`` (the latter a view with ``AliasBackward0``); the refusals are
PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

LIBS = (ng, torch)


def _raises_like(fn):
    """``fn(lib)`` raises the same exception type and message with both libraries."""
    with pytest.raises(Exception) as want:
        fn(torch)
    with pytest.raises(type(want.value)) as got:
        fn(ng)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("args, kwargs", [((3,), {}), ((0,), {}), ((np.int64(2),), {}),
                                          ((np.int32(4),), {}), ((2,), {"device": "cpu"}),
                                          ((), {"size": (2, 3)}), ((), {"size": [4]}),
                                          ((2, 3), {}), ((), {})])
def test_new_sizes(args, kwargs):
    got, want = [lib.ones(2, dtype=lib.float64).new(*args, **kwargs) for lib in LIBS]
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1] == "float64"
    assert not got.requires_grad


def test_new_one_int_then_filled():
    # (the legacy idiom: an uninitialized tensor of the module's dtype, filled in place)
    got, want = [lib.zeros(3, dtype=lib.int32).new(4).fill_(7) for lib in LIBS]
    assert got.tolist() == want.tolist() == [7, 7, 7, 7]
    assert str(got.dtype).split(".")[-1] == "int32"


@pytest.mark.parametrize("data", [(2, 3), [2, 3], [[1, 2]], np.array([1.5, 2.5])])
def test_new_data_still_data(data):
    got, want = [lib.ones(2).new(data) for lib in LIBS]
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize("call", [
    lambda lib: lib.ones(2).new(-1),
    lambda lib: lib.ones(2).new(2.5),
    lambda lib: lib.ones(2).new(True),
    lambda lib: lib.ones(2).new(2, "a"),
    lambda lib: lib.ones(2).new(2, size=(2,)),
    lambda lib: lib.ones(2).new([1, 2], size=(2,)),
    lambda lib: lib.ones(2).new(size=2),
])
def test_new_errors(call):
    _raises_like(call)


@pytest.mark.parametrize("make", [
    lambda lib: lib.Tensor(3),
    lambda lib: lib.Tensor(np.int64(2)),
    lambda lib: lib.Tensor(lib.Size([2, 3])),
    lambda lib: lib.Tensor(),
    lambda lib: lib.Tensor(size=(2, 1)),
    lambda lib: lib.FloatTensor(size=(2, 1)),
    lambda lib: lib.LongTensor(4),
    lambda lib: lib.DoubleTensor(2, 3),
])
def test_legacy_constructor_sizes(make):
    got, want = make(ng), make(torch)
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]


@pytest.mark.parametrize("make", [
    lambda lib: lib.Tensor((2, 3)),
    lambda lib: lib.Tensor(np.array(2.0)),
    lambda lib: lib.Tensor(np.array([1, 2])),
    lambda lib: lib.Tensor(lib.tensor([1, 2])),  # (an alias: its dtype kept)
    lambda lib: lib.LongTensor(lib.tensor([1, 2])),
    lambda lib: lib.BoolTensor([0, 2]),
])
def test_legacy_constructor_data(make):
    got, want = make(ng), make(torch)
    assert got.tolist() == want.tolist()
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]


@pytest.mark.parametrize("call", [
    lambda lib: lib.Tensor(2.5),
    lambda lib: lib.Tensor(True),
    lambda lib: lib.Tensor(np.float32(2.0)),
    lambda lib: lib.Tensor(-1),
    lambda lib: lib.Tensor([[1, 2], [3]]),
    lambda lib: lib.Tensor(2, size=(2,)),
    lambda lib: lib.FloatTensor(lib.tensor([1, 2])),
])
def test_legacy_constructor_errors(call):
    _raises_like(call)


def test_legacy_constructor_aliases():
    for lib in LIBS:
        t = lib.tensor([1.0, 2.0])
        a = lib.Tensor(t)
        a[0] = 5.0  # (one memory, one version counter)
        assert t.tolist() == [5.0, 2.0] and t._version == a._version == 1
        r = lib.ones(2, requires_grad=True)
        b = lib.zeros(2).new(r)
        assert b._base is r and type(b.grad_fn).__name__ == "AliasBackward0"
        (b * lib.tensor([2.0, 3.0])).sum().backward()
        assert r.grad.tolist() == [2.0, 3.0]
