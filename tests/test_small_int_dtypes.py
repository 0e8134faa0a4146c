"""The small integer dtypes ``uint8``, ``int8`` and ``int16``: names, promotion, creation and
casts, wrap-around arithmetic, reductions, indexing (a uint8 index is a deprecated mask),
printing and saving.

Each test runs on numbagrad and, when it is installed, on PyTorch itself, against the same
literals (PyTorch 2.13's values and messages): the literals are PyTorch's behaviour, and
numbagrad is held to them. A few ops per dtype only: each dtype compiles its own kernels."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

import numbagrad as ng

WARN_BYTE_INDEX = ("indexing with dtype {0}.uint8 is now deprecated, please use a dtype "
                   "{0}.bool instead.")


def _name(dt) -> str:
    return str(dt).rpartition(".")[2]


def _u8(lib, values=(250, 10, 0)):
    return lib.tensor(list(values), dtype=lib.uint8)


def _raises(exc, fn) -> str:
    with pytest.raises(exc) as e:
        fn()
    return str(e.value)


# ---------------------------------------------------------------- dtype objects and names


def test_dtype_objects_names_and_properties(lib):
    assert lib.short is lib.int16
    assert [repr(d) for d in (lib.uint8, lib.int8, lib.int16)] == [
        f"{lib.__name__}.uint8", f"{lib.__name__}.int8", f"{lib.__name__}.int16"]
    assert [d.is_signed for d in (lib.uint8, lib.int8, lib.int16)] == [False, True, True]
    assert [d.itemsize for d in (lib.uint8, lib.int8, lib.int16)] == [1, 1, 2]
    assert not any(d.is_floating_point for d in (lib.uint8, lib.int8, lib.int16))
    assert (_u8(lib).is_signed(), lib.tensor([1], dtype=lib.int8).is_signed()) == (False, True)
    assert _u8(lib).element_size() == 1


def test_legacy_type_names(lib):
    assert lib.ByteTensor([1, 2]).dtype is lib.uint8
    assert lib.CharTensor(2).dtype is lib.int8
    assert lib.ShortTensor([1]).type() == f"{lib.__name__}.ShortTensor"
    x = lib.tensor([1, 2])
    assert [x.byte().type(), x.char().type(), x.short().type()] == [
        f"{lib.__name__}.ByteTensor", f"{lib.__name__}.CharTensor", f"{lib.__name__}.ShortTensor"]
    assert x.type("torch.ByteTensor").dtype is lib.uint8
    assert x.type(lib.int8).dtype is lib.int8


# ---------------------------------------------------------------- promotion


def test_promote_types_among_integers(lib):
    rows = (lib.bool, lib.uint8, lib.int8, lib.int16, lib.int32)
    cols = (lib.uint8, lib.int8, lib.int16, lib.float32)
    got = [_name(lib.promote_types(a, b)) for a in rows for b in cols]
    assert got == ["uint8", "int8", "int16", "float32",
                   "uint8", "int16", "int16", "float32",
                   "int16", "int8", "int16", "float32",
                   "int16", "int16", "int16", "float32",
                   "int32", "int32", "int32", "float32"]


def test_can_cast(lib):
    got = [lib.can_cast(a, b) for a in (lib.uint8, lib.int16, lib.float32, lib.bool)
           for b in (lib.uint8, lib.int8, lib.bool)]
    assert got == [True, True, False, True, True, False, False, False, False, True, True, True]


def test_result_type_with_numbers_and_zero_dim_tensors(lib):
    u = _u8(lib)
    assert [_name(lib.result_type(u, 5)), _name(lib.result_type(u, 5.0)),
            _name(lib.result_type(u, lib.tensor(5))),
            _name(lib.result_type(lib.tensor(5, dtype=lib.uint8),
                                  lib.tensor([5], dtype=lib.int8)))] == [
        "uint8", "float32", "uint8", "int8"]


def test_binary_ops_promote_as_pytorch(lib):
    u = _u8(lib)
    r = u + lib.tensor([1, 2, 3], dtype=lib.int8)
    assert (r.dtype, r.tolist()) == (lib.int16, [251, 12, 3])
    r = u + lib.tensor([1, 2, 3], dtype=lib.int32)
    assert (r.dtype, r.tolist()) == (lib.int32, [251, 12, 3])
    r = lib.tensor([True, False, True]) + u
    assert (r.dtype, r.tolist()) == (lib.uint8, [251, 10, 1])
    r = u * 2.5
    assert (r.dtype, r.tolist()) == (lib.float32, [625.0, 25.0, 0.0])
    r = u / 2
    assert (r.dtype, r.tolist()) == (lib.float32, [125.0, 5.0, 0.0])


# ---------------------------------------------------------------- arithmetic wraps


def test_arithmetic_wraps_around(lib):
    u = _u8(lib)
    assert (u + 10).tolist() == [4, 20, 10]
    assert (u + 300).tolist() == [38, 54, 44]  # (the number is cast to uint8 first)
    assert (u - 1).tolist() == [249, 9, 255]
    assert (-u).tolist() == [6, 246, 0]
    assert (u * u).dtype is lib.uint8 and (u * u).tolist() == [36, 100, 0]
    i8 = lib.tensor([-128, 5, 127], dtype=lib.int8)
    assert (i8.abs().tolist(), (-i8).tolist(), (i8 + 1).tolist()) == (
        [-128, 5, 127], [-128, -5, -127], [-127, 6, -128])
    s = lib.tensor([-300, 5, 32767], dtype=lib.int16)
    assert (s * 3).tolist() == [-900, 15, 32765]
    assert (u // 3).tolist() == [83, 3, 0] and (u % 7).tolist() == [5, 3, 0]


def test_large_uint8_tensor_wraps(lib):
    # (large enough for the threaded and deferred paths)
    x = (lib.arange(70000) % 256).to(lib.uint8)
    assert (x + 250)[:8].tolist() == [250, 251, 252, 253, 254, 255, 0, 1]
    assert int((x + 250).long().sum()) == 8917800


def test_comparisons_and_bitwise_ops(lib):
    u = _u8(lib)
    assert (u > 5).tolist() == [True, True, False]
    assert (u == 250).tolist() == [True, False, False]
    assert [(u & 3).tolist(), (u | 4).tolist(), (u ^ 1).tolist(), (~u).tolist()] == [
        [2, 2, 0], [254, 14, 4], [251, 11, 1], [5, 245, 255]]
    assert (~lib.tensor([5], dtype=lib.int8)).tolist() == [-6]


def test_clamp_where_sign(lib):
    u = _u8(lib)
    r = u.clamp(5, 100)
    assert (r.dtype, r.tolist()) == (lib.uint8, [100, 10, 5])
    r = lib.tensor([5, -1], dtype=lib.int8).clamp(-0.5, 3.5)
    assert (r.dtype, r.tolist()) == (lib.float32, [3.5, -0.5])
    assert _raises(RuntimeError, lambda: u.clamp(min=300)) == (
        "value cannot be converted to type uint8_t without overflow")
    r = lib.where(lib.tensor([True, False, True]), u, lib.tensor([1, 2, 3], dtype=lib.int8))
    assert (r.dtype, r.tolist()) == (lib.int16, [250, 2, 0])
    r = lib.where(u > 5, u, 7)
    assert (r.dtype, r.tolist()) == (lib.uint8, [250, 10, 7])
    assert lib.tensor([-3, 0, 3], dtype=lib.int8).sign().tolist() == [-1, 0, 1]


# ---------------------------------------------------------------- creation and casts


def test_factories_take_the_dtypes(lib):
    assert lib.zeros(2, dtype=lib.int16).tolist() == [0, 0]
    assert lib.ones(2, dtype=lib.uint8).dtype is lib.uint8
    assert lib.full((2,), 7, dtype=lib.int8).tolist() == [7, 7]
    assert lib.arange(5, dtype=lib.int8).tolist() == [0, 1, 2, 3, 4]
    assert lib.empty(2, dtype=lib.uint8).dtype is lib.uint8
    r = lib.randint(250, 256, (50,), dtype=lib.uint8)
    assert r.dtype is lib.uint8 and int(r.long().min()) >= 250
    assert lib.tensor([1.7, 2.2], dtype=lib.uint8).tolist() == [1, 2]


def test_numbers_that_do_not_fit(lib):
    # an unsigned dtype takes negatives down to -255, wrapped; anything else must fit
    assert lib.tensor([-1], dtype=lib.uint8).tolist() == [255]
    assert lib.full((2,), -1, dtype=lib.uint8).tolist() == [255, 255]
    assert lib.zeros(1, dtype=lib.uint8).fill_(-255).tolist() == [1]
    assert _raises(RuntimeError, lambda: lib.tensor([300], dtype=lib.uint8)) == (
        "value cannot be converted to type uint8 without overflow")
    assert _raises(RuntimeError, lambda: lib.full((2,), 300, dtype=lib.uint8)) == (
        "value cannot be converted to type uint8_t without overflow")
    assert _raises(RuntimeError, lambda: lib.zeros(1, dtype=lib.int8).fill_(-129)) == (
        "value cannot be converted to type int8_t without overflow")
    assert _raises(RuntimeError, lambda: lib.zeros(1, dtype=lib.int16).fill_(40000)) == (
        "value cannot be converted to type int16_t without overflow")
    assert _raises(RuntimeError, lambda: lib.full((1,), 2**31, dtype=lib.int32)) == (
        "value cannot be converted to type int without overflow")


def test_numpy_arrays_keep_their_dtype(lib):
    a = np.array([1, 2], np.uint8)
    t = lib.from_numpy(a)
    assert t.dtype is lib.uint8
    a[0] = 9  # (from_numpy shares memory)
    assert t.tolist() == [9, 2]
    assert lib.as_tensor(np.array([1, 2], np.int8)).dtype is lib.int8
    assert lib.tensor(np.array([1, 2], np.int16)).dtype is lib.int16
    r = lib.from_numpy(np.array([200], np.uint8)) + lib.from_numpy(np.array([-1], np.int8))
    assert (r.dtype, r.tolist()) == (lib.int16, [199])
    # NumPy scalars in a tensor's data keep their dtype; as a Scalar argument they are numbers
    assert lib.tensor(np.uint8(5)).dtype is lib.uint8
    assert lib.tensor([np.int8(-1), np.uint8(2)]).dtype is lib.int16
    assert lib.full((2,), np.uint8(3)).dtype is lib.int64


def test_casts_wrap_as_pytorch(lib):
    f = lib.tensor([300.0, -1.0, 1e10, -300.5, -5.7])
    assert f.to(lib.uint8).tolist() == [44, 255, 0, 212, 251]
    assert f.to(lib.int8).tolist() == [44, -1, 0, -44, -5]
    assert lib.tensor([40000.0]).to(lib.int16).tolist() == [-25536]
    assert lib.tensor([300, -1]).byte().tolist() == [44, 255]
    u = _u8(lib)
    assert (u.char().dtype, u.char().tolist()) == (lib.int8, [-6, 10, 0])
    assert (u.short().dtype, u.short().tolist()) == (lib.int16, [250, 10, 0])
    assert u.byte() is u and u.to(lib.uint8) is u
    assert u.numpy().dtype == np.uint8
    assert u[0].item() == 250 and type(u[0].item()) is int
    assert u.float().tolist() == [250.0, 10.0, 0.0]


# ---------------------------------------------------------------- reductions


def test_sums_and_products_are_int64(lib):
    u = _u8(lib)
    assert (u.sum().dtype, int(u.sum())) == (lib.int64, 260)
    assert u.prod().dtype is lib.int64
    assert lib.tensor([100, 100], dtype=lib.int8).cumsum(0).tolist() == [100, 200]
    assert lib.tensor([100, 100], dtype=lib.int8).cumsum(0).dtype is lib.int64
    r = lib.tensor([1, 2], dtype=lib.int16).sum(dtype=lib.int16)
    assert (r.dtype, int(r)) == (lib.int16, 3)


def test_max_min_argmax_keep_the_dtype(lib):
    x = lib.tensor([[1, 2], [3, 4]], dtype=lib.uint8)
    values, indices = x.max(1)
    assert (values.dtype, values.tolist(), indices.tolist()) == (lib.uint8, [2, 4], [1, 1])
    assert (x.min().dtype, int(x.min()), int(x.argmax())) == (lib.uint8, 1, 3)


def test_any_all_of_uint8_are_uint8(lib):
    u = _u8(lib)
    assert (u.any().dtype, int(u.any()), int(u.all())) == (lib.uint8, 1, 0)
    assert lib.tensor([1, 0], dtype=lib.int8).any().dtype is lib.bool


def test_mean_and_requires_grad_are_refused(lib):
    assert _raises(RuntimeError, lambda: _u8(lib).mean()) == (
        "mean(): could not infer output dtype. Input dtype must be either a floating point or "
        "complex dtype. Got: Byte")
    assert _raises(RuntimeError, lambda: lib.zeros(2, dtype=lib.int16, requires_grad=True)) == (
        "Only Tensors of floating point and complex dtype can require gradients")
    assert _raises(RuntimeError, lambda: _u8(lib).requires_grad_()) == (
        "only Tensors of floating point dtype can require gradients")


# ---------------------------------------------------------------- indexing


def test_indexing_and_setitem(lib):
    u = _u8(lib)
    assert u[lib.tensor([0, 2])].tolist() == [250, 0] and u[1:].tolist() == [10, 0]
    u[1] = -1
    u[2] = 3.7
    assert u.tolist() == [250, 255, 3]
    u[1:] = lib.tensor([7, 8])
    assert u.tolist() == [250, 7, 8]
    assert _raises(RuntimeError, lambda: u.__setitem__(0, 300)) == (
        "value cannot be converted to type uint8_t without overflow")
    x = lib.arange(3.0)
    assert _raises(IndexError, lambda: x[lib.tensor([1, 2], dtype=lib.int16)]) == (
        "tensors used as indices must be long, int, byte or bool tensors")


def test_uint8_index_is_a_deprecated_mask(lib):
    x = lib.arange(3.0)
    mask = lib.tensor([1, 0, 1], dtype=lib.uint8)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = x[mask]
    assert got.tolist() == [0.0, 2.0]
    assert [str(m.message).split(" (Triggered")[0] for m in w] == [
        WARN_BYTE_INDEX.format(lib.__name__)]
    assert w[0].filename == __file__
    with pytest.warns(UserWarning, match="indexing with dtype"):
        x[mask] = lib.tensor([5.0, 6.0])
    assert x.tolist() == [5.0, 1.0, 6.0]
    # one number through a byte mask is masked_fill_, which takes bool masks only
    assert _raises(RuntimeError, lambda: x.__setitem__(mask, 5.0)) == (
        "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char")
    assert _raises(RuntimeError, lambda: x.masked_fill(lib.zeros(3, dtype=lib.int16), 1.0)) == (
        "masked_fill_ only supports boolean masks, but got mask with dtype short int")


def test_where_takes_a_uint8_condition_only_besides_bool(lib):
    x = lib.arange(3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch warns once a process: see the next test)
        r = lib.where(lib.tensor([1, 0, 1], dtype=lib.uint8), x, -x)
    assert r.tolist() == [0.0, -1.0, 2.0]
    assert _raises(RuntimeError, lambda: x.where(lib.tensor([1, 0, 1], dtype=lib.int8), -x)) == (
        "where expected condition to be a boolean tensor, but got a tensor with dtype Char")


def test_where_warns_once_for_a_uint8_condition():
    # (numbagrad only: PyTorch's warning is once a process, given by whichever test came first;
    # conftest makes numbagrad's once a test)
    x = ng.arange(3.0)
    mask = ng.tensor([1, 0, 1], dtype=ng.uint8)
    with pytest.warns(UserWarning, match="^where received a uint8 condition tensor") as w:
        ng.where(mask, x, -x)
    assert w[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x.where(mask, -x)


def test_cat_and_stack_promote(lib):
    u = _u8(lib)
    r = lib.cat([u, lib.tensor([1], dtype=lib.int8)])
    assert (r.dtype, r.tolist()) == (lib.int16, [250, 10, 0, 1])
    assert lib.stack([u, u]).dtype is lib.uint8


def test_losses_and_embedding_index_dtypes(lib):
    logits = lib.zeros(2, 3)
    loss = lib.nn.functional.cross_entropy(logits, lib.tensor([1, 0], dtype=lib.uint8))
    assert abs(float(loss) - 1.0986123) < 1e-6
    assert _raises(RuntimeError, lambda: lib.nn.functional.nll_loss(
        logits, lib.tensor([1, 0], dtype=lib.int8))) == (
        "expected target dtype to be Long or Byte, but got Char")
    assert _raises(RuntimeError, lambda: lib.nn.functional.embedding(
        lib.tensor([1, 0], dtype=lib.uint8), lib.eye(2))) == (
        "Expected tensor for argument #1 'indices' to have one of the following scalar types: "
        f"Long, Int; but got {lib.__name__}.ByteTensor instead (while checking arguments for "
        "embedding)")
    assert _raises(RuntimeError, lambda: lib.zeros(2, 2).mm(lib.zeros(2, 2, dtype=lib.int8))) == (
        "expected m1 and m2 to have the same dtype, but got: float != signed char")


# ---------------------------------------------------------------- printing and saving


def test_printing(lib):
    n = lib.__name__
    assert repr(_u8(lib)) == f"tensor([250,  10,   0], dtype={n}.uint8)"
    assert repr(lib.tensor([-1, 2], dtype=lib.int8)) == f"tensor([-1,  2], dtype={n}.int8)"
    assert repr(lib.tensor(3, dtype=lib.int16)) == f"tensor(3, dtype={n}.int16)"
    assert repr(lib.tensor([], dtype=lib.uint8)) == f"tensor([], dtype={n}.uint8)"


def test_save_load_round_trip(lib):
    buf = io.BytesIO()
    saved = {"u": _u8(lib), "i": lib.tensor([-128, 127], dtype=lib.int8),
             "s": lib.tensor([[-300], [32767]], dtype=lib.int16), "dtype": lib.uint8}
    lib.save(saved, buf)
    buf.seek(0)
    out = lib.load(buf)
    assert out["dtype"] is lib.uint8
    for k in ("u", "i", "s"):
        assert (out[k].dtype, out[k].tolist()) == (saved[k].dtype, saved[k].tolist())
