"""The tensor API training scripts use, against PyTorch on the same inputs: integer and bool
inputs of the new elementwise ops, rounding modes, ``alpha=``, keyword operands, ``out=``,
NumPy's reduction keywords, all/any/isclose, legacy tensor types, constants and ``range``
indices."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")


def _same(got, want):
    """Values, dtype and shape of a numbagrad tensor against a torch one."""
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6,
                               equal_nan=True)


def _raises_like(fn_ng, fn_torch):
    with pytest.raises(Exception) as want:
        fn_torch()
    with pytest.raises(type(want.value)) as got:
        fn_ng()
    assert str(got.value) == str(want.value).replace("torch.", "numbagrad.")


INTS = [5, -3, 7, 0]
SPECIAL = [0.3, -0.3, 2.5, -2.5, 1.5, -0.5, 0.5, -0.0, 1e20, math.nan, math.inf, -math.inf]


@pytest.mark.parametrize("name", ["floor", "ceil", "round", "trunc", "frac", "log2", "log10",
                                  "exp2", "erf", "erfc", "atan", "asin", "acos", "sinh",
                                  "cosh", "asinh", "acosh", "atanh", "logit", "square"])
def test_unary_ops_on_ints_bools_and_special_floats(name):
    for values, dtype in ((INTS, "int64"), ([True, False], "bool"), (SPECIAL, "float64")):
        ours = getattr(ng, name)
        theirs = getattr(torch, name)
        x, y = ng.tensor(values, dtype=getattr(ng, dtype)), torch.tensor(values,
                                                                        dtype=getattr(torch, dtype))
        try:
            want = theirs(y)
        except NotImplementedError as e:
            with pytest.raises(NotImplementedError, match=f"^{e}$".replace('"', '.')):
                ours(x)
            continue
        got = ours(x)
        _same(got, want)
        # signed zeros as PyTorch's (a NaN's sign is no value)
        g, w = got.numpy(), want.numpy()
        keep = ~np.isnan(w)
        np.testing.assert_array_equal(np.signbit(g)[keep], np.signbit(w)[keep])


def test_round_decimals_and_its_refusal_on_ints():
    x = [1.25, 1.35, -2.55, 1234.5678]
    for d in (1, 2, -2):
        _same(ng.round(ng.tensor(x), decimals=d), torch.round(torch.tensor(x), decimals=d))
    _raises_like(lambda: ng.round(ng.tensor([1]), decimals=1),
                 lambda: torch.round(torch.tensor([1]), decimals=1))


def test_binary_ops_with_ints_numbers_and_refusals():
    i, f = [5, -3, 7, -8], [5.5, -3.0, 2.25, -7.5]
    ti, tf = torch.tensor(i), torch.tensor(f)
    ni, nf = ng.tensor(i), ng.tensor(f)
    cases = [
        lambda m, a, b: m.fmod(a, 2), lambda m, a, b: m.fmod(b, -2.5),
        lambda m, a, b: m.fmod(a, 2.5), lambda m, a, b: m.fmod(b, a * 0 + 3),
        lambda m, a, b: m.atan2(b, a), lambda m, a, b: m.hypot(b, b),
        lambda m, a, b: m.lerp(b, b * 2, 0.7), lambda m, a, b: m.lerp(b, b * 2, b),
        lambda m, a, b: a % 3, lambda m, a, b: -7 % a, lambda m, a, b: 7.5 // a,
        lambda m, a, b: b.remainder(2), lambda m, a, b: m.floor_divide(a, -2),
        lambda m, a, b: m.div(a, 3, rounding_mode="trunc"),
        lambda m, a, b: m.div(a, -3, rounding_mode="floor"),
        lambda m, a, b: m.div(b, 2, rounding_mode="trunc"),
        lambda m, a, b: b.div(-2, rounding_mode="floor"),
        lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
        lambda m, a, b: m.div(b, 0, rounding_mode="floor"),
    ]
    for case in cases:
        _same(case(ng, ni, nf), case(torch, ti, tf))
    refusals = [
        lambda m, a, b: m.fmod(7, a), lambda m, a, b: m.atan2(b, 2), lambda m, a, b: m.hypot(a, a),
        lambda m, a, b: m.lerp(a, a, 0.5), lambda m, a, b: a % 0, lambda m, a, b: a // 0,
        lambda m, a, b: m.fmod(a, a * 0), lambda m, a, b: m.div(a, 0, rounding_mode="floor"),
        lambda m, a, b: m.div(a, 2, rounding_mode="bad"), lambda m, a, b: b.frac_() and a.frac(),
        lambda m, a, b: m.round(m.tensor([True])),
    ]
    for case in refusals:
        _raises_like(lambda: case(ng, ni, nf), lambda: case(torch, ti, tf))


def test_inplace_variants_write_the_tensor():
    for name, args in (("floor_", ()), ("fmod_", (2.0,)), ("remainder_", (2,)), ("lerp_", (
            None, 0.25)), ("atan2_", (None,)), ("sub_", (None,)), ("add_", (None,))):
        x, y = ng.tensor([1.25, -2.5]), torch.tensor([1.25, -2.5])
        kw = {"alpha": 2} if name in ("sub_", "add_") else {}
        out = getattr(x, name)(*[x * 3 if a is None else a for a in args], **kw)
        getattr(y, name)(*[y * 3 if a is None else a for a in args], **kw)
        assert out is x
        _same(x, y)


@pytest.mark.parametrize("op", ["add", "sub"])
def test_alpha_is_one_node_with_the_gradient_scaled(op):
    grads = []
    for m in (ng, torch):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([3.0, 4.0], requires_grad=True)
        y = getattr(m, op)(a, b, alpha=3)
        assert y.grad_fn.name() == op.capitalize() + "Backward0"
        assert [type(n).__name__ for n, _ in y.grad_fn.next_functions] == ["AccumulateGrad"] * 2
        y.sum().backward()
        grads.append((a.grad.tolist(), b.grad.tolist(), y.tolist()))
    assert grads[0] == grads[1]
    i = [1, 2]
    for alpha in (2.5, True):
        _raises_like(lambda: ng.add(ng.tensor(i), ng.tensor(i), alpha=alpha),
                     lambda: torch.add(torch.tensor(i), torch.tensor(i), alpha=alpha))
    _same(ng.add(ng.tensor([True]), ng.tensor([True]), alpha=2),
          torch.add(torch.tensor([True]), torch.tensor([True]), alpha=2))


def test_keyword_operands():
    a, b = [1.0, 2.0], [3.0, -4.0]
    for call in (lambda m: m.add(input=m.tensor(a), other=m.tensor(b)),
                 lambda m: m.mul(input=m.tensor(a), other=2),
                 lambda m: m.matmul(input=m.tensor(a), other=m.tensor(b)),
                 lambda m: m.sum(input=m.tensor(a), dim=0),
                 lambda m: m.maximum(m.tensor(a), other=m.tensor(b))):
        _same(call(ng), call(torch))
    x = ng.tensor(a, requires_grad=True)
    ng.matmul(input=x, other=ng.tensor(b)).backward()
    assert x.grad.tolist() == b


def test_out_writes_resizes_and_refuses_as_pytorch():
    b = [3.0, 4.0]
    calls = [
        lambda m, o: m.add(m.tensor(b), m.tensor(b), alpha=2, out=o),
        lambda m, o: m.sub(m.tensor(b), 1, out=o), lambda m, o: m.mul(m.tensor(b), 2, out=o),
        lambda m, o: m.div(m.tensor(b), 2, out=o), lambda m, o: m.exp(m.tensor(b), out=o),
        lambda m, o: m.log(m.tensor(b), out=o), lambda m, o: m.sum(m.tensor(b), 0, out=o),
        lambda m, o: m.mean(m.tensor([b, b]), dim=1, out=o),
        lambda m, o: m.matmul(m.tensor([b]), m.tensor([b]).t(), out=o),
        lambda m, o: m.mm(m.tensor([b]), m.tensor([b]).t(), out=o),
        lambda m, o: m.cat([m.tensor(b), m.tensor(b)], out=o),
        lambda m, o: m.stack([m.tensor(b), m.tensor(b)], out=o),
    ]
    for call in calls:
        for shape in ((2,), (0,)):
            o_ng, o_t = ng.zeros(shape), torch.zeros(shape)
            with warnings.catch_warnings(record=True) as w_ng:
                warnings.simplefilter("always")
                r = call(ng, o_ng)
            with warnings.catch_warnings(record=True) as w_t:
                warnings.simplefilter("always")
                call(torch, o_t)
            assert r is o_ng
            _same(o_ng, o_t)
            assert [str(w.message) for w in w_ng] == [str(w.message).split(" (Triggered")[0]
                                                     for w in w_t]
    a_ng, a_t = ng.tensor(b, requires_grad=True), torch.tensor(b, requires_grad=True)
    _raises_like(lambda: ng.add(a_ng, 1, out=ng.empty(2)),
                 lambda: torch.add(a_t, 1, out=torch.empty(2)))
    _raises_like(lambda: ng.exp(ng.tensor(b), out=ng.empty(2, requires_grad=True)),
                 lambda: torch.exp(torch.tensor(b), out=torch.empty(2, requires_grad=True)))
    _raises_like(lambda: ng.add(ng.tensor(b), 1, out=ng.empty(2, dtype=ng.int64)),
                 lambda: torch.add(torch.tensor(b), 1, out=torch.empty(2, dtype=torch.int64)))
    with ng.no_grad():
        o = ng.empty(2)
        assert ng.add(a_ng, 1, out=o).tolist() == [4.0, 5.0] and not o.requires_grad


def test_numpy_reduction_keywords():
    v = [[1.0, -2.0, 3.0], [4.0, 0.5, -6.0]]
    x, y = ng.tensor(v), torch.tensor(v)
    for name in ("sum", "mean", "prod", "amax", "amin", "argmax", "argmin", "std", "var",
                 "logsumexp", "norm", "all", "any"):
        for dims in ({"axis": 1, "keepdims": True}, {"axis": 0}, {"dim": 1, "keepdims": True}):
            if name == "norm":  # (PyTorch's norm takes neither axis nor keepdims)
                _same(ng.norm(x, **dims), torch.norm(y, dim=dims.get("axis", dims.get("dim")),
                                                      keepdim="keepdims" in dims))
                continue
            _same(getattr(ng, name)(x, **dims), getattr(torch, name)(y, **dims))
            _same(getattr(x, name)(**dims), getattr(y, name)(**dims))
    for name in ("max", "min"):
        got, want = getattr(x, name)(axis=1, keepdims=True), getattr(y, name)(axis=1, keepdims=True)
        _same(got.values, want.values)
        _same(got.indices, want.indices)


def test_all_any_count_nonzero_isclose_allclose_equal():
    v = [[0.0, 1.0, 2.0], [0.0, 0.0, 3.0]]
    x, y = ng.tensor(v), torch.tensor(v)
    for call in (lambda m, t: m.all(t), lambda m, t: m.any(t, 0), lambda m, t: t.all(1, True),
                 lambda m, t: t.any(dim=(0, 1)), lambda m, t: m.all(t[:0]),
                 lambda m, t: m.count_nonzero(t), lambda m, t: m.count_nonzero(t, dim=0),
                 lambda m, t: m.count_nonzero(t.long(), dim=-1)):
        _same(call(ng, x), call(torch, y))
    _raises_like(lambda: ng.all(x, dim=2), lambda: torch.all(y, dim=2))
    a = [1.0, math.nan, math.inf, -math.inf, 1e-9, 100.0]
    b = [1.0 + 1e-7, math.nan, math.inf, math.inf, 0.0, 100.1]
    for kw in ({}, {"equal_nan": True}, {"rtol": 1e-2, "atol": 0.0}):
        _same(ng.isclose(ng.tensor(a), ng.tensor(b), **kw),
              torch.isclose(torch.tensor(a), torch.tensor(b), **kw))
        assert ng.allclose(ng.tensor(a[:1]), ng.tensor(b[:1]), **kw) == torch.allclose(
            torch.tensor(a[:1]), torch.tensor(b[:1]), **kw)
    _raises_like(lambda: ng.isclose(ng.tensor(a), ng.tensor(a, dtype=ng.float64)),
                 lambda: torch.isclose(torch.tensor(a), torch.tensor(a, dtype=torch.float64)))
    _raises_like(lambda: ng.isclose(ng.tensor(a), 1.0), lambda: torch.isclose(torch.tensor(a), 1.0))
    assert ng.equal(ng.tensor([1.0, 2.0]), ng.tensor([1, 2])) is True
    assert ng.equal(ng.tensor([1.0]), ng.tensor([[1.0]])) is False
    assert ng.tensor([1.0, 2.0]).equal(ng.tensor([1.0, 3.0])) is False


def test_legacy_tensor_types():
    for name in ("FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "BoolTensor"):
        _same(getattr(ng, name)([1, 0, 2]), getattr(torch, name)([1, 0, 2]))
        assert tuple(getattr(ng, name)(2, 3).shape) == (2, 3)
        assert tuple(getattr(ng, name)().shape) == (0,)
    f = ng.tensor([1.5, 2.0])
    assert isinstance(f, ng.FloatTensor) and isinstance(f, ng.Tensor)
    assert not isinstance(f, ng.DoubleTensor) and not isinstance(1.0, ng.FloatTensor)
    assert f.type() == "numbagrad.FloatTensor" and f.long().type() == "numbagrad.LongTensor"
    for target in (ng.DoubleTensor, "torch.LongTensor", "numbagrad.IntTensor", ng.float64):
        assert isinstance(f.type(target), ng.Tensor)
    assert f.type(ng.DoubleTensor).dtype is ng.float64
    assert f.type("torch.LongTensor").tolist() == [1, 2]
    _raises_like(lambda: f.type("foo"), lambda: torch.tensor([1.5]).type("foo"))
    # (the half-precision dtypes can be named, not made)
    for make in (f.half, f.bfloat16, lambda: f.to(ng.float16), lambda: ng.zeros(2, dtype=ng.half)):
        with pytest.raises(NotImplementedError, match=r"^numbagrad has no b?float16 tensors "):
            make()


def test_constants_default_dtype_and_small_helpers():
    assert (ng.pi, ng.e, ng.inf) == (math.pi, math.e, math.inf) and math.isnan(ng.nan)
    assert ng.is_anomaly_enabled() is False
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with ng.autograd.detect_anomaly():
            assert ng.is_anomaly_enabled() is True
    try:
        ng.set_default_dtype(ng.float64)
        assert ng.get_default_dtype() is ng.float64 and ng.tensor([1.5]).dtype is ng.float64
        with pytest.raises(TypeError, match="only floating-point types are supported"):
            ng.set_default_dtype(ng.int64)
    finally:
        ng.set_default_dtype(ng.float32)
    assert ng.tensor([1.5]).dtype is ng.float32
    t = ng.ones(2, 3)
    assert (ng.numel(t), t.nelement(), t.ndimension(), t.element_size()) == (6, 6, 2, 4)
    assert f"{ng.tensor(2.5):.3f}" == f"{torch.tensor(2.5):.3f}" == "2.500"
    with pytest.raises(TypeError):
        format(t, ".2f")


def test_range_as_an_index():
    for index in (range(2), range(0), range(1, 2), (slice(None), range(1, 3)),
                  (range(2), range(2))):
        x, y = ng.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(2, 3)
        _same(x[index], y[index])
        x[index] = -1.0
        y[index] = -1.0
        _same(x, y)
    x = ng.arange(4.0, requires_grad=True)
    y = x[range(1, 3)]
    assert y.grad_fn.name() == "IndexBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 1.0, 0.0]


def test_size_slices_concatenations_and_repeats_are_sizes():
    ours, theirs = ng.Size([2, 3]), torch.Size([2, 3])
    for f in (lambda s: s[:1], lambda s: s[::-1], lambda s: s + (4,), lambda s: (4,) + s,
              lambda s: s * 2, lambda s: 2 * s, lambda s: s + s):
        a, b = f(ours), f(theirs)
        assert type(a) is ng.Size and type(b) is torch.Size and tuple(a) == tuple(b)
    assert type(ours[0]) is int
    with pytest.raises(TypeError, match=r"can only concatenate tuple \(not list\) to "
                                        r"numbagrad.Size"):
        ours + [1]
