"""``nn.attention`` (SDPBackend, sdpa_kernel) and ``frombuffer``, against PyTorch's CPU build."""

import array
import re
import warnings

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")


def _outcome(lib, backends, fn):
    """``fn(lib)`` under ``sdpa_kernel(backends)``: its grad_fn's name or its error, and the
    warnings given (without PyTorch's "Triggered internally" suffix)."""
    A = lib.nn.attention
    chosen = ([getattr(A.SDPBackend, b) for b in backends] if isinstance(backends, list)
              else getattr(A.SDPBackend, backends))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with A.sdpa_kernel(chosen):
                out = fn(lib)
            result = type(out.grad_fn).__name__
        except RuntimeError as e:
            result = str(e)
    return result, [str(w.message).split(" (Triggered internally")[0] for w in caught]


def _q(lib, *shape):
    return lib.tensor(np.linspace(-1, 1, np.prod(shape), dtype=np.float32).reshape(shape),
                      requires_grad=True)


CASES = {
    "4d": lambda lib: lib.nn.functional.scaled_dot_product_attention(
        _q(lib, 1, 2, 3, 4), _q(lib, 1, 2, 3, 4), _q(lib, 1, 2, 3, 4)),
    "3d": lambda lib: lib.nn.functional.scaled_dot_product_attention(
        _q(lib, 2, 3, 4), _q(lib, 2, 3, 4), _q(lib, 2, 3, 4)),
    "dropout": lambda lib: lib.nn.functional.scaled_dot_product_attention(
        _q(lib, 1, 2, 3, 4), _q(lib, 1, 2, 3, 4), _q(lib, 1, 2, 3, 4), dropout_p=0.5),
    "value dim": lambda lib: lib.nn.functional.scaled_dot_product_attention(
        _q(lib, 1, 2, 3, 4), _q(lib, 1, 2, 3, 4), _q(lib, 1, 2, 3, 5)),
    "batch": lambda lib: lib.nn.functional.scaled_dot_product_attention(
        _q(lib, 2, 2, 3, 4), _q(lib, 1, 2, 3, 4), _q(lib, 1, 2, 3, 4)),
    "heads": lambda lib: lib.nn.functional.scaled_dot_product_attention(
        _q(lib, 1, 2, 3, 4), _q(lib, 1, 1, 3, 4), _q(lib, 1, 1, 3, 4)),
    "causal": lambda lib: lib.nn.functional.scaled_dot_product_attention(
        _q(lib, 1, 2, 3, 4), _q(lib, 1, 2, 3, 4), _q(lib, 1, 2, 3, 4), is_causal=True),
}
BACKENDS = [["FLASH_ATTENTION"], ["MATH"], "CUDNN_ATTENTION", "EFFICIENT_ATTENTION",
            "OVERRIDEABLE", "ERROR", ["MATH", "FLASH_ATTENTION"],
            ["CUDNN_ATTENTION", "FLASH_ATTENTION", "EFFICIENT_ATTENTION"], []]


@pytest.mark.parametrize("backends", BACKENDS, ids=str)
@pytest.mark.parametrize("case", list(CASES))
def test_sdpa_kernel_choice_as_pytorch(backends, case):
    assert _outcome(ng, backends, CASES[case]) == _outcome(torch, backends, CASES[case])


def test_math_backend_gives_the_same_values():
    q = [np.random.default_rng(k).standard_normal((2, 3, 5, 4)).astype(np.float32)
         for k in range(3)]
    for lib in (ng, torch):
        A = lib.nn.attention
        ts = [lib.tensor(a, requires_grad=True) for a in q]
        with A.sdpa_kernel(A.SDPBackend.MATH):
            out = lib.nn.functional.scaled_dot_product_attention(*ts, is_causal=True)
        out.backward(lib.ones_like(out))
        if lib is ng:
            got = [out.detach().numpy()] + [t.grad.numpy() for t in ts]
        else:
            want = [out.detach().numpy()] + [t.grad.numpy() for t in ts]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_sdpbackend_and_sdpa_kernel_api():
    got, want = ng.nn.attention.SDPBackend, torch.nn.attention.SDPBackend
    assert list(got.__members__) == list(want.__members__)
    for name in want.__members__:
        g, w = getattr(got, name), getattr(want, name)
        assert (int(g), g.name, str(g), repr(g)) == (int(w), w.name, str(w), repr(w))
    assert (got.MATH == 0) is (want.MATH == 0) is False
    for lib in (ng, torch):
        A = lib.nn.attention
        for bad, kind in (("MATH", "str"), (1, "int")):
            with pytest.raises(AssertionError, match=re.escape(
                    "Backend must be an instance of SDPBackend or a list of SDPBackend "
                    f"instances, got {kind}")):
                with A.sdpa_kernel(bad):
                    pass
    # the choice is restored on leaving, even by an error
    A = ng.nn.attention
    with pytest.raises(ValueError):
        with A.sdpa_kernel([A.SDPBackend.CUDNN_ATTENTION], set_priority=True):
            raise ValueError
    assert A._cur_sdpa_kernel_backends() == [
        A.SDPBackend.MATH, A.SDPBackend.FLASH_ATTENTION, A.SDPBackend.EFFICIENT_ATTENTION,
        A.SDPBackend.CUDNN_ATTENTION, A.SDPBackend.OVERRIDEABLE]


# ---------------------------------------------------------------- frombuffer


def _frombuffer(lib, make, *args, **kw):
    """``frombuffer`` on a fresh buffer from ``make()``: (values, dtype name) or the error."""
    kw = {k: getattr(lib, v) if k == "dtype" and isinstance(v, str) and hasattr(lib, v) else v
          for k, v in kw.items()}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            t = lib.frombuffer(make(), *args, **kw)
            result = (t.tolist(), str(t.dtype).split(".")[-1], t.requires_grad)
        except (TypeError, ValueError, RuntimeError) as e:
            result = (type(e).__name__, str(e))
    return result, [str(w.message).split(" (Triggered internally")[0] for w in caught]


def _bytes8():
    return bytearray(range(1, 9))


@pytest.mark.parametrize("make,args,kw", [
    (_bytes8, (), dict(dtype="int32")),
    (_bytes8, (), dict(dtype="int8", count=3, offset=2)),
    (_bytes8, (), dict(dtype="uint8", count=-2)),
    (_bytes8, (), dict(dtype="int32", count=1, offset=4)),
    (_bytes8, (), dict(dtype="int64")),
    (_bytes8, (), dict(dtype="bool")),
    (_bytes8, (), dict(dtype="int32", count=3)),
    (_bytes8, (), dict(dtype="int32", count=2, offset=4)),
    (_bytes8, (), dict(dtype="int32", offset=8)),
    (_bytes8, (), dict(dtype="int32", offset=-1)),
    (_bytes8, (), dict(dtype="int32", count=0)),
    (_bytes8, (), dict(dtype="int32", offset=1)),
    (_bytes8, (), dict(dtype="int16", offset=1)),
    (bytearray, (), dict(dtype="uint8")),
    (_bytes8, (), dict(dtype="int32", count=1.0)),
    (_bytes8, (), dict(dtype="int32", count=True)),
    (_bytes8, (), dict(dtype="int32", offset=None)),
    (_bytes8, (), dict(dtype="float32", requires_grad=1)),
    (_bytes8, (), dict(dtype=None)),
    (lambda: [1, 2], (), dict(dtype="int32")),
    (lambda: memoryview(bytearray(8))[::2], (), dict(dtype="uint8")),
    (lambda: np.arange(6, dtype=np.float32)[::2], (), dict(dtype="float32")),
    (lambda: array.array("f", [1, 2, 3]), (), dict(dtype="float32", requires_grad=True)),
    (lambda: array.array("i", [1, 2, 3]), (), dict(dtype="int32", requires_grad=True)),
    (lambda: array.array("f", [1, 2, 3]), (), dict(dtype="float64")),
    (lambda: np.arange(6, dtype=np.float64).reshape(2, 3), (), dict(dtype="float64")),
])
def test_frombuffer_as_pytorch(make, args, kw):
    assert _frombuffer(ng, make, *args, **kw) == _frombuffer(torch, make, *args, **kw)


def test_frombuffer_signature_refusals_as_pytorch():
    for call in (lambda lib: lib.frombuffer(_bytes8(), lib.int32),
                 lambda lib: lib.frombuffer(_bytes8()), lambda lib: lib.frombuffer(),
                 lambda lib: lib.frombuffer(_bytes8(), dtype=lib.int32, device="cpu")):
        messages = []
        for lib in (ng, torch):
            with pytest.raises(TypeError) as info:
                call(lib)
            messages.append(str(info.value))
        assert messages[0] == messages[1]


def test_frombuffer_shares_memory():
    for lib in (ng, torch):
        buf = bytearray(8)
        t = lib.frombuffer(buf, dtype=lib.uint8, count=4, offset=2)
        t[0] = 100
        buf[3] = 77
        assert buf[2] == 100 and t.tolist() == [100, 77, 0, 0]
        arr = array.array("f", [1.0, 2.0, 3.0])
        lib.frombuffer(arr, dtype=lib.float32).mul_(2)
        assert arr.tolist() == [2.0, 4.0, 6.0]


def test_frombuffer_warns_for_a_read_only_buffer():
    message = ("The given buffer is not writable, and PyTorch does not support non-writable "
               "tensors. This means you can write to the underlying (supposedly non-writable) "
               "buffer using the tensor. You may want to copy the buffer to protect its data or "
               "make it writable before converting it to a tensor. This type of warning will be "
               "suppressed for the rest of this program.")
    ng.set_warn_always(True)
    try:
        with pytest.warns(UserWarning, match=re.escape(message)):
            t = ng.frombuffer(b"\x01\x02", dtype=ng.uint8)
    finally:
        ng.set_warn_always(False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        want = torch.frombuffer(b"\x01\x02", dtype=torch.uint8)
    # (PyTorch warns once a process: maybe not here)
    assert all(str(w.message).startswith(message) for w in caught)
    assert t.tolist() == want.tolist() == [1, 2]
