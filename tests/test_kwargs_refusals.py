"""What PyTorch refuses among the calls numbagrad's ``*args, **kwargs`` methods once took
silently (``x.uniform_(a=0, b=1)``, ``x.to(bogus=1)``, ``module.to(copy=True)``,
``x.random_(from_=1, to=3)``), and ``func.functional_call``'s ``strict`` and ``tie_weights``:
each call made the same way in both libraries, with the same exception type and message."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")


def _outcome(call):
    """``("ok", what call returned)``, or the exception's type name and message."""
    try:
        result = call()
    except Exception as e:  # noqa: BLE001 (the comparison is the point)
        return type(e).__name__, str(e)
    return "ok", result


def _same_outcome(call):
    """``call(lib)`` in both libraries; asserts they end alike and returns PyTorch's."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # (stateless.functional_call's)
        ours, theirs = _outcome(lambda: call(ng)), _outcome(lambda: call(torch))
    assert ours == theirs
    return theirs


def _x(L):
    return L.zeros(3, dtype=L.float32)


# calls PyTorch refuses (TypeError unless noted), made the same way in both libraries
REFUSED = {
    # uniform_(from=0, to=1, *, generator=None): no ``a``/``b`` (nn.init's names), no ``from_``
    "uniform_/a,b": lambda L: _x(L).uniform_(a=0.0, b=1.0),
    "uniform_/a": lambda L: _x(L).uniform_(a=0.0),
    "uniform_/b": lambda L: _x(L).uniform_(0.0, b=1.0),
    "uniform_/from_": lambda L: _x(L).uniform_(from_=0.0),
    "uniform_/bogus": lambda L: _x(L).uniform_(0.0, 1.0, bogus=1),
    "uniform_/generator-by-position": lambda L: _x(L).uniform_(0.0, 1.0, None),
    "uniform_/from-twice": lambda L: _x(L).uniform_(0.0, **{"from": 1.0}),
    "uniform_/to-twice": lambda L: _x(L).uniform_(0.0, 1.0, to=1.0),
    # random_'s three overloads: (), (to), (from, to)
    "random_/bogus": lambda L: _x(L).random_(bogus=1),
    "random_/to,bogus": lambda L: _x(L).random_(1, bogus=1),
    "random_/from,to,bogus": lambda L: _x(L).random_(1, 3, bogus=1),
    "random_/from_": lambda L: _x(L).random_(from_=1),
    "random_/from_,to": lambda L: _x(L).random_(from_=1, to=3),
    "random_/to,from_": lambda L: _x(L).random_(1, from_=3),
    "random_/from-alone": lambda L: _x(L).random_(**{"from": 1}),
    "random_/missing-from": lambda L: _x(L).random_(bogus=1, to=2, generator=None),
    # Tensor.to's three overloads
    "to/bogus": lambda L: _x(L).to(bogus=1),
    "to/dtype,bogus": lambda L: _x(L).to(L.float64, bogus=1),
    "to/dtype=,bogus": lambda L: _x(L).to(dtype=L.float64, bogus=1),
    "to/device,bogus": lambda L: _x(L).to("cpu", bogus=None),
    "to/tensor,bogus": lambda L: _x(L).to(_x(L), True, bogus=2.0),
    "to/two-unknown": lambda L: _x(L).to(zzz=1, bogus=2),
    "to/memory_format,bogus": lambda L: _x(L).to(memory_format=L.channels_last, bogus=[1]),
    # (five arguments: only the first overload takes as many, and names its own error)
    "to/four-positional,bogus": lambda L: _x(L).to("cpu", L.float32, False, False, bogus=1),
    "to/four-positional,dtype=": lambda L: _x(L).to("cpu", L.float32, False, False, dtype=1),
    # (six: as many as the first overload's entries, which PyTorch explains)
    "to/six": lambda L: _x(L).to("cpu", L.float32, False, False,
                                  memory_format=L.preserve_format, bogus=_x(L)),
    "PackedSequence.to/bogus": lambda L: L.nn.utils.rnn.pack_sequence([_x(L)]).to(bogus=1),
    # nn.Module.to parses its arguments as Tensor.to, and refuses ``copy`` (RuntimeError)
    "Module.to/bogus": lambda L: L.nn.Linear(2, 2).to(bogus=1),
    "Module.to/dtype,bogus": lambda L: L.nn.Linear(2, 2).to(L.float64, bogus=1),
    "Module.to/device,bogus": lambda L: L.nn.Linear(2, 2).to("cpu", bogus=1),
    "Module.to/copy=True": lambda L: L.nn.Linear(2, 2).to("cpu", copy=True),
    "Module.to/copy=False": lambda L: L.nn.Linear(2, 2).to(copy=False),
    "Module.to/copy-by-position": lambda L: L.nn.Linear(2, 2).to("cpu", L.float64, True, True),
    "Module.to/dtype,flags": lambda L: L.nn.Linear(2, 2).to(L.float32, True, False),
    # RNN checks its nonlinearity (ValueError) before RNNBase refuses an unknown keyword
    "RNN/nonlinearity-first": lambda L: L.nn.RNN(2, 2, 2, 2, bogus=1),
    "RNN/bogus": lambda L: L.nn.RNN(2, 2, bogus=1),
    "GRU/bogus": lambda L: L.nn.GRU(2, 2, bogus=1),
}


@pytest.mark.parametrize("name", REFUSED)
def test_refused_as_pytorch(name):
    kind, message = _same_outcome(lambda L: REFUSED[name](L) and None)
    assert kind in ("TypeError", "RuntimeError", "ValueError"), message


def test_to_message_in_full():
    """PyTorch's text of an unknown keyword to ``to``, overloads and all."""
    expected = (
        "to() received an invalid combination of arguments - got (torch.dtype, bogus=int), "
        "but expected one of:\n"
        " * (torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, "
        "bool copy = False, *, torch.memory_format memory_format = None)\n"
        " * (torch.dtype dtype, bool non_blocking = False, bool copy = False, *, "
        "torch.memory_format memory_format = None)\n"
        " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, "
        "torch.memory_format memory_format = None)\n")
    for L in (ng, torch):
        for target in (_x(L), L.nn.Linear(2, 2)):
            with pytest.raises(TypeError) as e:
                target.to(L.float64, bogus=1)
            assert str(e.value) == expected


# calls both libraries take: the refusals above must leave them alone
ACCEPTED = {
    "uniform_/from,to-by-keyword": lambda L: _x(L).uniform_(**{"from": 2.0}, to=3.0),
    "uniform_/to": lambda L: _x(L).uniform_(to=0.5),
    "uniform_/generator": lambda L: _x(L).uniform_(-1.0, 1.0, generator=L.Generator()),
    "random_/to=": lambda L: _x(L).random_(to=3),
    "random_/from,to=": lambda L: _x(L).random_(2, to=4),
    "random_/from,None": lambda L: _x(L).random_(5, None),
    "to/tensor=": lambda L: _x(L).to(tensor=L.zeros(1, dtype=L.float64)),
    "to/flags": lambda L: _x(L).to(L.float64, True, True),
    "to/device,dtype,flags": lambda L: _x(L).to("cpu", L.float64, False, True),
    "to/all-keywords": lambda L: _x(L).to(device="cpu", dtype=L.float64, non_blocking=False,
                                          copy=True, memory_format=L.preserve_format),
    "Module.to/non_blocking": lambda L: L.nn.Linear(2, 2).to("cpu", L.float64, True),
    "Module.to/non_blocking=": lambda L: L.nn.Linear(2, 2).to(L.float64, non_blocking=True),
    "Module.to/tensor=": lambda L: L.nn.Linear(2, 2).to(tensor=L.zeros(1, dtype=L.float64)),
}


@pytest.mark.parametrize("name", ACCEPTED)
def test_accepted_as_pytorch(name):
    outs = [ACCEPTED[name](L) for L in (ng, torch)]
    if isinstance(outs[0], ng.nn.Module):
        outs = [o.weight for o in outs]
    assert str(outs[0].dtype).split(".")[-1] == str(outs[1].dtype).split(".")[-1]
    assert tuple(outs[0].shape) == tuple(outs[1].shape)


def test_random_bounds_kept():
    """``random_(from, None)`` draws from [from, the dtype's top]; ``uniform_`` by the
    keyword ``from`` draws from [from, to)."""
    for L in (ng, torch):
        L.manual_seed(0)
        r = L.zeros(2000).random_(5, None)
        assert r.min().item() >= 5 and r.max().item() > 1000
        u = L.zeros(2000).uniform_(**{"from": 2.0}, to=3.0)
        assert 2.0 <= u.min().item() and u.max().item() < 3.0


# ---------------------------------------------------------------- functional_call


def _tied(L):
    """``b.weight`` is ``a.weight``: forward is ``a(x) + b(x) + buf`` = 3 for x = 1."""

    class Tied(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = L.nn.Linear(1, 1, bias=False)
            self.b = L.nn.Linear(1, 1, bias=False)
            self.b.weight = self.a.weight
            self.register_buffer("buf", L.ones(1))

        def forward(self, x):
            return self.a(x) + self.b(x) + self.buf

    m = Tied()
    with L.no_grad():
        m.a.weight.fill_(1.0)
    return m


def _entry_points(L):
    return {"func": L.func.functional_call, "stateless": L.nn.utils.stateless.functional_call}


def _z(L):
    return L.zeros(1, 1)


FUNCTIONAL_CALLS = {
    # (strict: RuntimeError naming the keys, unexpected ones first, each list sorted)
    "strict/missing": lambda L, fc: fc(_tied(L), {"a.weight": _z(L)}, L.ones(1, 1),
                                       strict=True),
    "strict/missing-untied": lambda L, fc: fc(_tied(L), {"a.weight": _z(L)}, L.ones(1, 1),
                                              strict=True, tie_weights=False),
    "strict/unexpected": lambda L, fc: fc(
        _tied(L), {"a.weight": _z(L), "buf": L.zeros(1), "zz": _z(L), "c.d": _z(L)},
        L.ones(1, 1), strict=True),
    "strict/both": lambda L, fc: fc(_tied(L), {"a.weight": _z(L), "zz": _z(L), "yy": _z(L)},
                                    L.ones(1, 1), strict=True),
    "strict/exact": lambda L, fc: fc(_tied(L), {"a.weight": _z(L), "buf": L.zeros(1)},
                                     L.ones(1, 1), strict=True).tolist(),
    "strict/exact-untied": lambda L, fc: fc(
        _tied(L), {"a.weight": _z(L), "b.weight": _z(L), "buf": L.zeros(1)}, L.ones(1, 1),
        strict=True, tie_weights=False).tolist(),
    # (tie_weights: a value for one name of a tied tensor stands for all its names)
    "tied/one-name": lambda L, fc: fc(_tied(L), {"a.weight": _z(L)}, L.ones(1, 1)).tolist(),
    "untied/one-name": lambda L, fc: fc(_tied(L), {"a.weight": _z(L)}, L.ones(1, 1),
                                        tie_weights=False).tolist(),
    "tied/same-value-twice": lambda L, fc: (lambda z: fc(
        _tied(L), {"a.weight": z, "b.weight": z}, L.ones(1, 1)).tolist())(_z(L)),
    "tied/two-values": lambda L, fc: fc(
        _tied(L), {"a.weight": _z(L), "b.weight": L.full((1, 1), 3.0)}, L.ones(1, 1)),
    "untied/two-values": lambda L, fc: fc(
        _tied(L), {"a.weight": _z(L), "b.weight": L.full((1, 1), 3.0)}, L.ones(1, 1),
        tie_weights=False).tolist(),
    # (names and values)
    "no-such-submodule": lambda L, fc: fc(_tied(L), {"c.d": _z(L)}, L.ones(1, 1)),
    "not-a-tensor": lambda L, fc: fc(_tied(L), {"buf": 3}, L.ones(1, 1)),
    "attribute-not-a-tensor": lambda L, fc: fc(_tied(L), {"training": _z(L)}, L.ones(1, 1)),
    "empty-name": lambda L, fc: fc(_tied(L), {"a.": _z(L)}, L.ones(1, 1)),
    "DataParallel": lambda L, fc: fc(L.nn.DataParallel(L.nn.Linear(1, 1)), {}, L.ones(1, 1)),
    "unknown-keyword": lambda L, fc: fc(_tied(L), {}, L.ones(1, 1), bogus=1),
}


@pytest.mark.parametrize("entry", ["func", "stateless"])
@pytest.mark.parametrize("name", FUNCTIONAL_CALLS)
def test_functional_call_as_pytorch(name, entry):
    _same_outcome(lambda L: FUNCTIONAL_CALLS[name](L, _entry_points(L)[entry]))


def test_functional_call_strict_message():
    for L in (ng, torch):
        with pytest.raises(RuntimeError) as e:
            L.func.functional_call(_tied(L), {"a.weight": _z(L), "zz": _z(L)}, L.ones(1, 1),
                                   strict=True)
        assert str(e.value) == ("Error(s) in reparametrizing for Tied:\n\tUnexpected key(s): "
                                "'zz'.\n\tMissing key(s): 'buf'.")


DICTS = {
    "tuple": lambda L: ({"a.weight": _z(L)}, {"buf": L.zeros(1)}),
    "repeated-keys": lambda L: ({"a.weight": _z(L)}, {"a.weight": _z(L), "buf": _z(L)},
                                {"buf": _z(L)}),
    "not-all-dicts": lambda L: ({"a.weight": _z(L)}, 3),
    "not-a-dict": lambda L: 3,
}


@pytest.mark.parametrize("entry", ["func", "stateless"])
@pytest.mark.parametrize("name", DICTS)
def test_functional_call_dicts_as_pytorch(name, entry):
    """``func.functional_call`` takes a dict or a list or tuple of dicts with distinct keys;
    ``nn.utils.stateless``'s a dict only."""
    _same_outcome(lambda L: _entry_points(L)[entry](
        _tied(L), DICTS[name](L), L.ones(1, 1), strict=True).tolist())


def test_functional_call_restores_and_writes_back():
    """The module gets its own tensors back (after a forward that raises too), a name it did
    not have is removed again, and a buffer its forward reassigns is written back into the
    dict given, as PyTorch's."""
    results = []
    for L in (ng, torch):

        class Inc(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("foo", L.zeros(()))

            def forward(self, x):
                self.foo = self.foo + 1
                return x

        class Failing(L.nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, x):
                self.inner(x)
                raise ZeroDivisionError

        inc, given = Inc(), {"foo": L.zeros(())}
        L.func.functional_call(inc, given, L.ones(()))
        m = _tied(L)
        extra = L.func.functional_call(m, {"zz": _z(L)}, L.ones(1, 1))
        with pytest.raises(ZeroDivisionError):
            L.func.functional_call(Failing(m), {"inner.buf": L.zeros(1),
                                                "inner.a.weight": _z(L)}, L.ones(1, 1))
        results.append((given["foo"].item(), inc.foo.item(), hasattr(m, "zz"), extra.tolist(),
                        m(L.ones(1, 1)).tolist(), m.buf.tolist(), m.b.weight is m.a.weight))
    assert results[0] == results[1]
    assert results[0][:3] == (1.0, 0.0, False)


def test_functional_call_gradients_through_tied_weights():
    """Under tie_weights the one tensor given serves both names: its gradient sums both
    uses."""
    grads = []
    for L in (ng, torch):
        w = L.full((1, 1), 2.0, requires_grad=True)
        y = L.func.functional_call(_tied(L), {"a.weight": w}, L.full((1, 1), 3.0))
        y.sum().backward()
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1])
