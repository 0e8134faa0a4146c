"""The functional API over the registry: what ``numbagrad.*`` functions and Tensor methods call.

Every public name is declared where it is defined: an op by its decorator's ``variants``
(``@unary("sin", ..., variants="function method inplace")``), a function of this layer by
``@public``. ``FUNCTIONS``, ``METHODS``, ``INPLACE`` and ``FUNCTIONAL`` are made from those
declarations at the end of this module; ``numbagrad``, ``Tensor`` and ``nn.functional`` read
them."""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from .._tensor import Tensor
from . import conv  # noqa: F401 (declares its ops)
from . import elementwise as E
from . import embedding  # noqa: F401 (declares its op)
from . import indexing  # noqa: F401 (declares its ops)
from . import random  # noqa: F401 (declares its ops)
from . import linalg as L  # noqa: F401 (declares its ops)
from . import loss  # noqa: F401
from . import movement as M
from . import reduce as R
from .movement import getitem, to_device, to_dtype  # noqa: F401 (Tensor's methods use them)
from .registry import PUBLIC, REGISTRY, operand, public, refuse, sum_to  # noqa: F401


def _tensors_only(fn):
    """``fn`` (an op's plain function), refusing a number as PyTorch's maximum and minimum do
    (they take no Python scalar); its ``method`` variant counts positions after ``self``."""
    name, plain_method = fn.__name__, fn.method

    def refuse_numbers(args, method):
        for k, a in enumerate(args):
            if not isinstance(a, Tensor):
                raise TypeError(f"{name}(): argument '{('input', 'other')[k]}' (position "
                                f"{k + 1 - method}) must be Tensor, not {type(a).__name__}")

    def function(input, other):
        refuse_numbers((input, other), False)
        return fn(input, other)

    def method(self, other):
        refuse_numbers((self, other), True)
        return plain_method(self, other)

    function.__name__ = method.__name__ = name
    function.op, function.method = fn.op, method
    return public("function method", method=method)(function)


maximum = _tensors_only(E.maximum.function)
minimum = _tensors_only(E.minimum.function)


def _is_scalar(v) -> bool:
    """A number operand (anything else that is no Tensor is refused by the op, by name)."""
    return not isinstance(v, Tensor) and operand(v)


_add = E.add.function  # (the operators and ``x.add(y)`` call the op's plain function)
# the plain functions the wrappers below call (an op's ``__call__`` only hands on to them)
_sub, _div, _pow = E.sub.function, E.div.function, E.pow.function


def _add_method(self, other, *, alpha=1):
    return _add.method(self, other if alpha == 1 else E.mul(other, alpha))


_add_method.__name__ = "add"


@public("function method", method=_add_method)
def add(x, y, *, alpha=1):
    """``x + alpha * y``."""
    return _add(x, y if alpha == 1 else E.mul(y, alpha))


@public("function method inplace")
def sub(x, y, *, alpha=1):
    """``x - alpha * y``."""
    if alpha != 1:
        y = E.mul(y, alpha)
    return _sub(x, y)  # (a number first is a wrapped scalar: SubBackward0, as in PyTorch)


def rsub(x, other):
    """``other - x`` (the reflected operator)."""
    if _is_scalar(other):
        if type(other) is bool or x.dtype is D.bool_:
            raise RuntimeError(E.ERR_SUB_BOOL)
        # the number takes part in the result's dtype (-1.5 - int_tensor is a float tensor)
        dt = D.result_type(x, other)
        return E.rsub(x if dt is x.dtype else x.to(dt), other)
    return _sub(other, x)


@public("function method")
def bitwise_not(x):
    """``~x``: ``logical_not`` for a bool tensor (Numba's ``~True`` is the int -2)."""
    return E.logical_not(x) if x.dtype is D.bool_ else E.bitwise_not(x)


def rremainder(x, other):
    """``other % x`` (the reflected operator)."""
    return E.remainder(other, x)


def rfloor_divide(x, other):
    """``other // x`` (the reflected operator)."""
    return E.floor_divide(other, x)


@public("function method inplace", aliases="true_divide divide")
def div(x, y):
    return _div(x, y)  # (``2 / x`` is ``rdiv``; ``div(2, x)`` is DivBackward0, as in PyTorch)


def rdiv(x, other):
    """``other / x``; like PyTorch, a scalar numerator is ``reciprocal(x) * other``."""
    if _is_scalar(other):
        return E.mul(E.reciprocal(x), other)
    return _div(other, x)



ERR_POW_ARGS = (
    "pow() received an invalid combination of arguments - got ({}, {}), but expected one of:\n"
    " * (Tensor input, Tensor exponent, *, Tensor out = None)\n"
    " * (Number self, Tensor exponent, *, Tensor out = None)\n"
    " * (Tensor input, Number exponent, *, Tensor out = None)\n"
)


@public("function method inplace")
def pow(x, exponent):
    if not (operand(x) and operand(exponent)):
        raise TypeError(ERR_POW_ARGS.format(type(x).__name__, type(exponent).__name__))
    if not isinstance(x, Tensor):
        return rpow(exponent, x)
    if isinstance(exponent, bool) and x.dtype is D.bool_:
        # bool ** bool stays bool: x itself, or all True for False
        return x.clone() if exponent else x.logical_or(x.logical_not())
    if not isinstance(exponent, Tensor):
        if not x.dtype.is_floating_point:
            if isinstance(exponent, float):
                x = x.to(D.default_float)
            elif exponent < 0:
                raise RuntimeError("Integers to negative integer powers are not allowed.")
            elif x.dtype is D.bool_:
                x = x.to(D.int64)  # PyTorch raises bools to integer powers as integers
        return _pow(x, exponent)
    return E.pow_tensor(x, exponent)


def rpow(x, base):
    """``base ** x`` for a scalar base."""
    if isinstance(base, bool) and x.dtype is D.bool_:
        raise NotImplementedError("\"pow\" not implemented for 'Bool'")
    dt = D.result_type(x, base)
    return E.rpow(x if dt is x.dtype else x.to(dt), base)


@public("function method inplace")
def square(x):
    if x.dtype is D.bool_:
        x = x.to(D.int64)  # PyTorch squares a bool tensor as integers
    return _pow(x, 2)


@public("function method inplace", aliases="clip")
def clamp(x, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("numbagrad.clamp: At least one of 'min' or 'max' must not be None")
    dt = D.result_type(x, *(v for v in (min, max) if v is not None))
    if dt is not x.dtype:
        x = x.to(dt)
    if dt.is_floating_point:
        lo, hi = -float("inf"), float("inf")
    else:
        info = np.iinfo(dt.np)
        lo, hi = int(info.min), int(info.max)
    return E.clamp(x, lo if min is None else min, hi if max is None else max)


@public("function method")
def max(x, dim=None, keepdim=False):
    if isinstance(dim, Tensor):
        return E.maximum(x, dim)
    if dim is None:
        return R.max_all(x)
    return R.max_dim(x, dim, keepdim)


@public("function method")
def min(x, dim=None, keepdim=False):
    if isinstance(dim, Tensor):
        return E.minimum(x, dim)
    if dim is None:
        return R.min_all(x)
    return R.min_dim(x, dim, keepdim)


def _var_args(dim, unbiased, correction):
    if isinstance(dim, bool):  # var(unbiased) legacy positional form
        unbiased, dim = dim, None
    if correction is None:
        correction = 1 if unbiased in (None, True) else 0
    return dim, correction


@public("function method", name="var")
def var_(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    dim, correction = _var_args(dim, unbiased, correction)
    return R.var(x, dim, correction, keepdim)


@public("function method", name="std")
def std_(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    dim, correction = _var_args(dim, unbiased, correction)
    return R.std(x, dim, correction, keepdim)


@public("function method", name="norm")
def norm_(x, p="fro", dim=None, keepdim=False):
    if p not in ("fro", 2, 2.0):
        raise NotImplementedError(f"norm with p={p!r} is not implemented; only the 2-norm is")
    return R.norm(x, dim, keepdim)


@public("function method")
def broadcast_to(x, shape):
    return M.expand(x, *shape) if isinstance(shape, (tuple, list)) else M.expand(x, shape)


@public("method")
def expand_as(x, other):
    return M.expand(x, other.shape)


@public("method", name="any")
def any_(x, dim=None):
    if type(x._data) is np.ndarray:
        return Tensor._make(np.asarray(np.any(x._data, axis=dim)))
    # on the device: a max over "x != 0" (no copy to the host)
    return (x != 0).long().amax(dim=() if dim is None else dim).bool()


# ---------------------------------------------------------------- in-place


from .inplace import (  # noqa: E402,F401
    add_, assign_inplace, check_inplace, copy_, fill_, inplace, refresh_view, setitem, zero_,
)

# ---------------------------------------------------------------- the public names


def _as_method(fn, name):
    """``fn`` as a Tensor method (``self`` its first argument)."""

    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = fn.__doc__
    return method


def _tables():
    """(functions, methods, in-place ops, nn.functional functions) by public name, from the
    declarations; a name declared twice for one variant is an error."""
    tables = {"function": {}, "method": {}, "inplace": {}, "functional": {}}
    for b in PUBLIC:
        for kind in b.variants:
            table = tables[kind]
            if b.name in table:
                raise ValueError(f"{b.name!r} is declared twice as a {kind}")
            if kind == "method":
                table[b.name] = b.method or getattr(b.function, "method", None) or _as_method(
                    b.function, b.name)
            else:
                table[b.name] = b.function
    return tables["function"], tables["method"], tables["inplace"], tables["functional"]


FUNCTIONS, METHODS, INPLACE, FUNCTIONAL = _tables()
globals().update(FUNCTIONS)
