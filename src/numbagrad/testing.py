"""Checks for users' own ops (``numbagrad.elementwise``), for their test suites, and
``assert_close`` (``torch.testing.assert_close``: PyTorch's comparisons, tolerances and
messages).

``check_elementwise`` tests an op the way numbagrad's op table tests the built-in ones:
forward against a NumPy reference in float32 and float64, gradients against finite differences
(``gradcheck``), second derivatives (``gradgradcheck``), float32 gradients against float64
ones, the node's name, and, where CUDA or its simulator is available, CUDA against the CPU.
"""

from __future__ import annotations

import cmath
import collections.abc
import contextlib
from typing import Callable, Sequence

import numpy as np

from . import cuda as _cuda
from . import dtypes as D
from .autograd import gradcheck, gradgradcheck
from .dtypes import float32, float64
from .factory import as_tensor, tensor
from .ops import isclose
from .tensor import Tensor


def check_elementwise(op: Callable, reference: Callable, *, params: Sequence = (),
                      domain: tuple = (-2.0, 2.0), shapes: Sequence = ((3,), (2, 3)),
                      dtypes: Sequence = (float32, float64), cuda: bool | None = None,
                      gradgrad: bool = True, rtol32: float = 1e-5, seed: int = 0) -> None:
    """Raise ``AssertionError`` unless ``op`` passes the op-table checks.

    ``op`` is called as ``op(*tensors, *params)``, one tensor per argument not in ``params``
    (numbers given for its last arguments), with values drawn uniformly from ``domain``;
    ``reference`` is called the same way on float64 NumPy arrays. ``shapes``: each entry is one
    shape for every tensor, or a tuple of shapes, one per tensor (to test broadcasting).
    ``cuda``: also compare CUDA with the CPU (None: when ``numbagrad.cuda.is_available()``,
    the CUDA simulator included).

    >>> import math, numpy as np, numbagrad
    >>> @numbagrad.elementwise
    ... def swish(x, beta):
    ...     return x / (1 + math.exp(-beta * x))
    >>> check_elementwise(swish, lambda x, b: x / (1 + np.exp(-b * x)), params=(1.5,))
    """
    n_args = getattr(op, "_n_args", None)
    n_tensors = (n_args - len(params)) if n_args is not None else 1
    rng = np.random.default_rng(seed)
    cuda = _cuda.is_available() if cuda is None else cuda
    name = getattr(op, "__name__", repr(op))
    for shape in shapes:
        per_tensor = (list(shape) if shape and not isinstance(shape[0], int)
                      else [tuple(shape)] * n_tensors)
        if len(per_tensor) != n_tensors:
            raise ValueError(f"check_elementwise: {n_tensors} tensors, {len(per_tensor)} shapes")
        arrays = [rng.uniform(*domain, size=s) for s in per_tensor]
        with np.errstate(all="ignore"):
            expected = np.asarray(reference(*arrays, *params), dtype=np.float64)
        where = f"{name} at shapes {per_tensor}"
        grads = {}
        for dt in dtypes:
            ts = [tensor(a, dtype=dt, requires_grad=True) for a in arrays]
            out = op(*ts, *params)
            got = out.detach().numpy()
            assert got.dtype == dt.np, f"{where}: result dtype {got.dtype}, expected {dt}"
            rtol = rtol32 if dt is float32 else 1e-10
            np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol,
                                       err_msg=f"{where}: forward in {dt} vs the reference")
            node = getattr(op, "node_name", None)
            assert out.grad_fn is not None, f"{where}: the result has no grad_fn"
            if node is not None:
                assert out.grad_fn.name() == node, f"{where}: node {out.grad_fn.name()}"
            out.sum().backward()
            grads[dt] = [t.grad.numpy() for t in ts]
            for t in ts:
                assert t.grad.dtype is dt, f"{where}: gradient dtype {t.grad.dtype}"
            if cuda:
                _check_cuda(op, arrays, params, dt, got, grads[dt], rtol, where)
        if float32 in grads and float64 in grads:
            for g32, g64 in zip(grads[float32], grads[float64]):
                np.testing.assert_allclose(g32, g64, rtol=1e-4, atol=1e-5,
                                           err_msg=f"{where}: float32 vs float64 gradients")
        ts = tuple(tensor(a, dtype=float64, requires_grad=True) for a in arrays)

        def fn(*ts):
            return op(*ts, *params)

        assert gradcheck(fn, ts), f"{where}: gradcheck"
        if gradgrad:
            assert gradgradcheck(fn, ts), f"{where}: gradgradcheck"


def _check_cuda(op, arrays, params, dt, out, grads, rtol, where):
    ts = [tensor(a, dtype=dt, device="cuda", requires_grad=True) for a in arrays]
    y = op(*ts, *params)
    assert y.is_cuda, f"{where}: the CUDA result is on {y.device}"
    np.testing.assert_allclose(y.detach().cpu().numpy(), out, rtol=rtol, atol=rtol,
                               err_msg=f"{where}: CUDA vs CPU forward in {dt}")
    y.sum().backward()
    for t, g in zip(ts, grads):
        np.testing.assert_allclose(t.grad.cpu().numpy(), g, rtol=rtol * 10, atol=rtol * 10,
                                   err_msg=f"{where}: CUDA vs CPU gradient in {dt}")


# ---------------------------------------------------------------- assert_close


class _Failure(Exception):
    """A comparison's failure: the exception type to raise, its message, and where in the
    nested inputs it occurred."""

    def __init__(self, type, msg: str, id: tuple = ()) -> None:
        super().__init__(msg)
        self.type, self.msg, self.id = type, msg, id

    def to_error(self, msg=None) -> Exception:
        if not isinstance(msg, str):
            generated = self.msg
            if self.id:
                where = "".join(str([item]) for item in self.id)
                generated += f"\n\nThe failure occurred for item {where}"
            msg = msg(generated) if callable(msg) else generated
        return self.type(msg)


class _Unsupported(Exception):
    """The inputs are not for this kind of comparison."""


# {dtype: (rtol, atol)}; other dtypes compare exactly
_DTYPE_PRECISIONS = {D.float32: (1.3e-6, 1e-5), D.float64: (1e-7, 1e-7)}
_NUMBER_DTYPES = {int: D.int64, float: D.float64}


def _tolerances(dtypes, rtol, atol, id) -> tuple:
    if (rtol is None) ^ (atol is None):
        raise _Failure(ValueError, "Both 'rtol' and 'atol' must be either specified or "
                       f"omitted, but got no {'rtol' if rtol is None else 'atol'}.", id)
    if rtol is not None:
        return rtol, atol
    rtols, atols = zip(*[_DTYPE_PRECISIONS.get(dt, (0.0, 0.0)) for dt in dtypes])
    return max(rtols), max(atols)


def _mismatch_msg(identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol) -> str:
    equality = rtol == 0 and atol == 0

    def diff_msg(kind, diff, idx, tol):
        msg = (f"{kind.title()} difference: {diff}" if idx is None
               else f"Greatest {kind} difference: {diff} at index {idx}")
        return msg + ("" if equality else f" (up to {tol} allowed)") + "\n"

    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n{extra.strip()}\n"
    msg += diff_msg("absolute", abs_diff, abs_idx, atol)
    msg += diff_msg("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_mismatch_msg(actual, expected, rtol, atol) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None,
                         atol, rel_diff, None, rtol)


def _tensor_mismatch_msg(actual, expected, matches, rtol, atol) -> str:
    shape = tuple(matches.shape)

    def unravel(flat: int) -> tuple:
        return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()

    total = matches.numel()
    mismatches = total - int(matches.sum())
    extra = f"Mismatched elements: {mismatches} / {total} ({mismatches / total:.1%})"
    actual_flat, expected_flat, matches_flat = (t.flatten() for t in (actual, expected, matches))
    if not actual.dtype.is_floating_point:
        actual_flat, expected_flat = actual_flat.to(D.int64), expected_flat.to(D.int64)
    abs_diff = (actual_flat - expected_flat).abs()
    abs_diff[matches_flat] = 0  # only the mismatches count
    max_abs, max_abs_idx = abs_diff.max(0)
    rel_diff = abs_diff / expected_flat.abs()
    rel_diff[matches_flat] = 0
    max_rel, max_rel_idx = rel_diff.max(0)
    return _mismatch_msg("Tensor-likes", extra, max_abs.item(), unravel(int(max_abs_idx)), atol,
                         max_rel.item(), unravel(int(max_rel_idx)), rtol)


# Each pair kind takes (actual, expected, id, **options) and returns the comparison to run
# (raising _Failure when it fails), or raises _Unsupported for inputs it does not take; an
# invalid option raises _Failure at once.


def _none_pair(actual, expected, id, **_):
    if actual is not None and expected is not None:
        raise _Unsupported

    def compare():
        if not (actual is None and expected is None):
            raise _Failure(AssertionError, f"None mismatch: {actual} is not {expected}", id)

    return compare


def _bool_pair(actual, expected, id, **_):
    if not all(isinstance(x, (bool, np.bool_)) for x in (actual, expected)):
        raise _Unsupported
    actual, expected = bool(actual), bool(expected)

    def compare():
        if actual is not expected:
            raise _Failure(AssertionError, f"Booleans mismatch: {actual} is not {expected}", id)

    return compare


def _number_pair(actual, expected, id, rtol, atol, equal_nan, check_dtype, **_):
    # (bool is an int: True against 1 comes here and fails as in PyTorch)
    if not all(isinstance(x, (int, float, np.integer, np.floating)) for x in (actual, expected)):
        raise _Unsupported
    actual, expected = (x.item() if isinstance(x, np.generic) else x for x in (actual, expected))
    rtol, atol = _tolerances([_NUMBER_DTYPES[type(x)] for x in (actual, expected)], rtol,
                             atol, id)

    def compare():
        if check_dtype and type(actual) is not type(expected):
            raise _Failure(AssertionError, f"The (d)types do not match: {type(actual)} != "
                           f"{type(expected)}.", id)
        if actual == expected or equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
            return
        abs_diff = abs(actual - expected)
        if cmath.isfinite(abs_diff) and abs_diff <= atol + rtol * abs(expected):
            return
        raise _Failure(AssertionError, _scalar_mismatch_msg(actual, expected, rtol, atol), id)

    return compare


def _tensor_pair(actual, expected, id, allow_subclasses, rtol, atol, equal_nan, check_device,
                 check_dtype, check_layout, check_stride, **_):
    related = isinstance(actual, type(expected)) or isinstance(expected, type(actual))
    if not related or (not allow_subclasses and type(actual) is not type(expected)):
        raise _Unsupported
    try:
        actual, expected = (x if isinstance(x, Tensor) else as_tensor(x)
                            for x in (actual, expected))
    except Exception:
        raise _Unsupported from None
    rtol, atol = _tolerances([actual.dtype, expected.dtype], rtol, atol, id)

    def mismatch(name, a, e):
        raise _Failure(AssertionError,
                       f"The values for attribute '{name}' do not match: {a} != {e}.", id)

    def compare():
        a, e = actual, expected
        if a.shape != e.shape:
            mismatch("shape", a.shape, e.shape)
        if check_stride and a.stride() != e.stride():
            mismatch("stride()", a.stride(), e.stride())
        if check_device and a.device != e.device:
            mismatch("device", a.device, e.device)
        if check_dtype and a.dtype != e.dtype:
            mismatch("dtype", a.dtype, e.dtype)
        a, e = a.detach(), e.detach()
        if a.device != e.device:
            a, e = a.cpu(), e.cpu()
        if a.dtype != e.dtype:
            dtype = D.promote(a.dtype, e.dtype)
            a, e = a.to(dtype), e.to(dtype)
        matches = isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
        if bool(matches.all()):
            return
        # (the message's statistics on the host: a few elements, read once)
        msg = (_scalar_mismatch_msg(a.item(), e.item(), rtol, atol) if a.ndim == 0
               else _tensor_mismatch_msg(a.cpu(), e.cpu(), matches.cpu(), rtol, atol))
        raise _Failure(AssertionError, msg, id)

    return compare


_PAIRS = (_none_pair, _bool_pair, _number_pair, _tensor_pair)
_PAIR_NAMES = {_none_pair: "NonePair", _bool_pair: "BooleanPair", _number_pair: "NumberPair",
               _tensor_pair: "TensorLikePair"}


def _originate(actual, expected, id, options) -> list:
    """The comparisons of the leaves of possibly nested sequences and mappings."""
    seq = collections.abc.Sequence
    if (isinstance(actual, seq) and not isinstance(actual, str) and isinstance(expected, seq)
            and not isinstance(expected, str)):
        if len(actual) != len(expected):
            raise _Failure(AssertionError, f"The length of the sequences mismatch: "
                           f"{len(actual)} != {len(expected)}", id)
        return [check for idx in range(len(actual))
                for check in _originate(actual[idx], expected[idx], (*id, idx), options)]
    mapping = collections.abc.Mapping
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        actual_keys, expected_keys = set(actual.keys()), set(expected.keys())
        if actual_keys != expected_keys:
            raise _Failure(AssertionError, (
                "The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(expected_keys - actual_keys)}\n"
                f"Additional keys in the actual mapping: {sorted(actual_keys - expected_keys)}"),
                id)
        keys = actual_keys
        with contextlib.suppress(Exception):
            keys = sorted(keys)
        return [check for key in keys
                for check in _originate(actual[key], expected[key], (*id, key), options)]
    for pair in _PAIRS:
        try:
            return [pair(actual, expected, id, **options)]
        except _Unsupported:
            continue
        except _Failure:
            raise
        except Exception as error:  # (True against 1: a bool has no number dtype)
            where = "".join(str([item]) for item in id)
            raise RuntimeError(
                f"Originating a {_PAIR_NAMES[pair]}() at item {where} with\n\n"
                f"{type(actual).__name__}(): {actual}\n\nand\n\n"
                f"{type(expected).__name__}(): {expected}\n\n"
                "resulted in the unexpected exception above. If you are a user and see this "
                "message during normal operation please file an issue at "
                "https://github.com/pytorch/pytorch/issues. If you are a developer and working "
                "on the comparison functions, please except the previous error and raise an "
                "expressive `ErrorMeta` instead.") from error
    raise _Failure(TypeError, "No comparison pair was able to handle inputs of type "
                   f"{type(actual)} and {type(expected)}.", id)


def assert_close(actual, expected, *, allow_subclasses: bool = True, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True, check_stride: bool = False,
                 msg=None) -> None:
    """Raise ``AssertionError`` unless ``actual`` and ``expected`` are close: tensors (and
    tensor-likes of one type, such as NumPy arrays) of the same shape, device and dtype whose
    elements satisfy ``|actual - expected| <= atol + rtol * |expected|`` (defaults by dtype:
    float32 1.3e-6 and 1e-5, float64 1e-7 and 1e-7, exact otherwise), Python numbers, bools
    and None, or sequences and mappings of them compared item by item. ``msg`` (a string, or
    a function of the generated message) replaces the message.

    >>> import numbagrad
    >>> assert_close(numbagrad.tensor([1.0, 2.0]), numbagrad.tensor([1.0, 2.0 + 1e-6]))
    """
    options = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol,
                   equal_nan=equal_nan, check_device=check_device, check_dtype=check_dtype,
                   check_layout=check_layout, check_stride=check_stride)
    try:
        checks = _originate(actual, expected, (), options)
    except _Failure as failure:
        raise failure.to_error() from None
    for check in checks:
        try:
            check()
        except _Failure as failure:
            raise failure.to_error(msg) from None
