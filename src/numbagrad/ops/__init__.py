"""The functional API over the registry: what ``numbagrad.*`` functions and Tensor methods call.

Every public name is declared where it is defined: an op by its decorator's ``variants``
(``@unary("sin", ..., variants="function method inplace")``), a function of this layer by
``@public``. ``FUNCTIONS``, ``METHODS``, ``INPLACE`` and ``FUNCTIONAL`` are made from those
declarations at the end of this module; ``numbagrad``, ``Tensor`` and ``nn.functional`` read
them."""

from __future__ import annotations

import inspect
import warnings

import numpy as np

from .. import backend
from .. import dtypes as D
from .._tensor import Tensor, _wrap_dim
from ..autograd.grad_mode import _state as _grad_state
from . import activation  # noqa: F401 (declares its op and functions)
from . import attention  # noqa: F401 (declares its op)
from . import conv  # noqa: F401 (declares its ops)
from . import decompositions  # noqa: F401 (declares its ops)
from . import differences  # noqa: F401 (declares its functions)
from . import dispatch
from . import elementwise as E
from . import embedding  # noqa: F401 (declares its op)
from . import grid  # noqa: F401 (declares its ops and functions)
from . import indexing  # noqa: F401 (declares its ops)
from . import random  # noqa: F401 (declares its ops)
from . import linalg as L  # noqa: F401 (declares its ops)
from . import lu  # noqa: F401 (declares its ops)
from . import loss  # noqa: F401
from . import normalization  # noqa: F401
from . import recurrent  # noqa: F401 (declares its ops)
from . import pointwise  # noqa: F401 (declares its functions)
from . import shaping  # noqa: F401 (declares its functions)
from . import movement as M
from . import reduce as R
from .movement import getitem, to_device, to_dtype  # noqa: F401 (Tensor's methods use them)
from .registry import (  # noqa: F401
    PUBLIC, REGISTRY, Elementwise, OpDef, operand, public, refuse, refusing_numbers, sum_to,
)


def _tensors_only(fn, variants="function method", aliases=""):
    """``fn`` (an op's plain function), refusing a number as PyTorch's maximum and minimum do
    (they take no Python scalar): ``refusing_numbers``, declared public."""
    function = refusing_numbers(fn)
    return public(variants, aliases=aliases, method=function.method)(function)


maximum = _tensors_only(E.maximum.function)
minimum = _tensors_only(E.minimum.function)
fmax = _tensors_only(E.fmax.function)
fmin = _tensors_only(E.fmin.function)


def _is_scalar(v) -> bool:
    """A number operand (anything else that is no Tensor is refused by the op, by name)."""
    return not isinstance(v, Tensor) and operand(v)


_add = E.add.function  # (the operators and ``x.add(y)`` call the op's plain function)
# the plain functions the wrappers below call (an op's ``__call__`` only hands on to them)
_sub, _div, _pow = E.sub.function, E.div.function, E.pow.function


def _check_alpha(x, y, alpha):
    """PyTorch's refusals of an ``alpha`` the result's dtype cannot take."""
    kind = type(alpha)
    if kind is int or kind is float and type(x) is Tensor and x._data.dtype.kind == "f":
        return  # (any result takes it: the common call, told without result_type)
    dt = D.result_type(x, y)
    if isinstance(alpha, bool) or isinstance(alpha, np.bool_):
        if dt is not D.bool_:
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif not dt.is_floating_point and isinstance(alpha, (float, np.floating)):
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number.")


def _add_method(self, other, *, alpha=1):
    if alpha == 1 and type(alpha) is not bool:
        return _add.method(self, other)
    refuse("add", (self, other), method=True)
    _check_alpha(self, other, alpha)
    return E.add_alpha(self, other, alpha)


_add_method.__name__ = "add"


@public("function method", method=_add_method)
def add(input, other, *, alpha=1):
    """``input + alpha * other`` (one AddBackward0 node, as PyTorch's)."""
    if alpha == 1 and type(alpha) is not bool:
        return _add(input, other)
    refuse("add", (input, other))
    _check_alpha(input, other, alpha)
    return E.add_alpha(input, other, alpha)


add.out_overlap = True  # (its in-place variant is add_ below)
add.out_op = E.add  # (``add(x, y, out=o)``: the op whose loop writes into o, alpha being 1)


@public("function method inplace", aliases="subtract")
def sub(input, other, *, alpha=1):
    """``input - alpha * other``."""
    if alpha == 1 and type(alpha) is not bool:
        return _sub(input, other)  # (a number first is a wrapped scalar: SubBackward0)
    refuse("sub", (input, other))
    _check_alpha(input, other, alpha)
    return E.sub_alpha(input, other, alpha)


sub.out_op = E.sub


@public("function")
def rsub(input, other, alpha=1):
    """``other - alpha * input`` (``other - input``: the reflected operator)."""
    if _is_scalar(other):
        if type(other) is bool or input.dtype is D.bool_:
            raise RuntimeError(E.ERR_SUB_BOOL)
        # the number takes part in the result's dtype (-1.5 - int_tensor is a float tensor)
        dt = D.result_type(input, other)
        x = input if dt is input.dtype else input.to(dt)
        if alpha == 1 and type(alpha) is not bool:
            return E.rsub(x, other)
        _check_alpha(x, other, alpha)
        return E.rsub_alpha(x, other, alpha)
    refuse("rsub", (input, other))
    if alpha != 1 or type(alpha) is bool:
        _check_alpha(input, other, alpha)
    return E.rsub_alpha(input, other, alpha)


reflected_sub = rsub  # (Tensor.__rsub__: the function itself, not its public wrapper)


@public("function method")
def positive(input):
    """``input`` itself (``+input``), which PyTorch refuses for a bool tensor."""
    if input.dtype is D.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


@public("function method inplace")
def bitwise_not(x):
    """``~x``: ``logical_not`` for a bool tensor (Numba's ``~True`` is the int -2)."""
    return E.logical_not(x) if x.dtype is D.bool_ else E.bitwise_not(x)


def _check_divisor(x, y):
    """PyTorch's error for an integer division by zero (a kernel cannot raise it); none where
    the result has no elements, as PyTorch's kernel divides nothing, or where the operands do
    not broadcast (the op's own error comes first)."""
    shapes = [t.shape for t in (x, y) if isinstance(t, Tensor)]
    if len(shapes) == 2 and shapes[0] != shapes[1]:
        try:
            shapes = [np.broadcast_shapes(*shapes)]
        except ValueError:
            return
    if shapes and 0 in shapes[0]:
        return
    if D.result_type(x, y)._kind == 1 and (
            bool(any_(y == 0)) if isinstance(y, Tensor) else y == 0):
        raise RuntimeError("ZeroDivisionError")


@public("function method inplace")
def remainder(input, other):
    """Python's ``%``: the result takes the divisor's sign."""
    refuse("remainder", (input, other))
    _check_divisor(input, other)
    if isinstance(input, Tensor) and _is_scalar(other):
        dt = D.result_type(input, other)  # (the number takes part: int_tensor % 2.5 is float)
        return E.remainder_scalar(input if dt is input.dtype else input.to(dt), other)
    if _is_scalar(input) and isinstance(other, Tensor):
        return _remainder_of_number(input, other)
    return E.remainder(input, other)


def _remainder_of_number(number, x):
    dt = D.result_type(x, number)
    return E.remainder_of_number(x if dt is x.dtype else x.to(dt), number)


def rremainder(x, other):
    """``other % x`` (the reflected operator)."""
    _check_divisor(other, x)
    if _is_scalar(other):
        return _remainder_of_number(other, x)
    return E.remainder(other, x)


@public("function method inplace")
def floor_divide(input, other):
    refuse("floor_divide", (input, other))
    _check_divisor(input, other)
    return E.floor_divide(input, other)


def rfloor_divide(x, other):
    """``other // x`` (the reflected operator)."""
    _check_divisor(other, x)
    return E.floor_divide(other, x)


ERR_FMOD_ARGS = (
    "fmod() received an invalid combination of arguments - got ({}, {}), but expected one of:\n"
    " * (Tensor input, Tensor other, *, Tensor out = None)\n"
    " * (Tensor input, Number other, *, Tensor out = None)\n"
)


@public("function method inplace")
def fmod(input, other):
    """C's ``fmod``: the result takes the dividend's sign."""
    if not isinstance(input, Tensor) or not operand(other):
        raise TypeError(ERR_FMOD_ARGS.format(type(input).__name__, type(other).__name__))
    _check_divisor(input, other)
    if isinstance(other, Tensor):
        return E.fmod(input, other)
    dt = D.result_type(input, other)
    return E.fmod_scalar(input if dt is input.dtype else input.to(dt), other)


class _NoRoundingMode:
    """div's ``rounding_mode`` when not given: told apart from an explicit None, which picks
    PyTorch's div.Tensor_mode overload (its node is DivBackward2, not DivBackward0)."""

    def __repr__(self):
        return "None"


_NO_MODE = _NoRoundingMode()


@public("function method inplace", aliases="true_divide divide")
def div(input, other, *, rounding_mode=_NO_MODE):
    """``input / other``; ``rounding_mode`` "trunc" or "floor" rounds the quotient (and the
    result keeps the operands' promoted dtype)."""
    if rounding_mode is _NO_MODE:
        return _div(input, other)  # (``2 / x`` is ``rdiv``; ``div(2, x)`` is DivBackward0)
    if rounding_mode is None:
        refuse("div", (input, other))
        return E.div_mode(input, other)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{rounding_mode}'")
    refuse("div", (input, other))
    _check_divisor(input, other)
    if rounding_mode == "floor":
        return E.div_floor(input, other)
    if D.result_type(input, other).is_floating_point:
        return E.div_trunc(input, other)
    # integers (no gradient): the floor quotient, one up where it was rounded down below 0
    q = E.floor_divide(input, other)
    return E.where(E.logical_and(q < 0, E.mul(q, other) != input), q + 1, q)


# what ``x.sub_(y)``, ``x.div_(y)`` and ``x.clamp_(lo, hi)`` are when called without keywords
# (and numbers for clamp's bounds): the elementwise op whose loop may write into x
# (``inplace.inplace``)
sub.inplace_op, div.inplace_op = E.sub, E.div


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
        if isinstance(exponent, bool):
            return E.pow_bool_exponent(x, exponent)
        return _pow(x, exponent)
    return E.pow_tensor(x, exponent)


def rpow(x, base):
    """``base ** x`` for a scalar base."""
    if isinstance(base, bool) and x.dtype is D.bool_:
        raise NotImplementedError("\"pow\" not implemented for 'Bool'")
    dt = D.result_type(x, base)
    return E.rpow(x if dt is x.dtype else x.to(dt), base)


# ---------------------------------------------------------------- rounding, float-only ops


def _no_kernel(kernel, x):
    """PyTorch's refusal of ``x``'s dtype by an op with no kernel for it."""
    raise NotImplementedError(f'"{kernel}" not implemented for \'{_CAST_NAMES[x.dtype.name]}\'')


def _integral_copied(op, kernel, variants="function method inplace inplace_function", aliases=""):
    """``op`` (floor, ceil, trunc, round) as a public function: an integer tensor is integral
    already, so PyTorch returns a copy of it; a bool one has no kernel."""
    call = op.function

    def function(input):
        if isinstance(input, Tensor) and not input.dtype.is_floating_point:
            if input.dtype is D.bool_:
                _no_kernel(kernel, input)
            return M.clone(input)
        return call(input)

    def refuse_bool(x, *args, **kwargs):
        # (the in-place call writes through the op's loop, not ``function``: floor_ of a bool
        # tensor, even an empty one, finds no kernel)
        if x.dtype is D.bool_:
            _no_kernel(kernel, x)

    function.__name__ = function.__qualname__ = op.name
    function.__doc__ = f"{op.name}(input) -> Tensor: elementwise."
    function.op = op
    function.inplace_check = refuse_bool
    return public(variants, aliases=aliases)(function) if variants else function


floor = _integral_copied(E.floor, "floor_vml_cpu")
ceil = _integral_copied(E.ceil, "ceil_vml_cpu")
trunc = _integral_copied(E.trunc, "trunc_vml_cpu", aliases="fix")
_round = _integral_copied(E.round, "round_vml_cpu", variants="")  # (round, below, takes decimals)


@public("function method inplace inplace_function")
def round(input, *, decimals=0):
    """Round half to even, to ``decimals`` decimal places (negative: left of the point)."""
    if decimals == 0:
        return _round(input)
    if not input.dtype.is_floating_point:
        _no_kernel("round_cpu", input)
    return E.round_decimals(input, decimals)


@public("function method inplace inplace_function")
def frac(input):
    """``input - trunc(input)``."""
    if not input.dtype.is_floating_point:
        _no_kernel("frac_cpu", input)
    return E.frac(input)


atan2 = _tensors_only(E.atan2.function, "function method inplace", aliases="arctan2")


@public("function method inplace")
def hypot(input, other):
    """``sqrt(input ** 2 + other ** 2)``, without overflow in between."""
    for k, a in enumerate((input, other)):
        if not isinstance(a, Tensor):
            raise TypeError(f"hypot(): argument '{('input', 'other')[k]}' (position {k + 1}) "
                            f"must be Tensor, not {type(a).__name__}")
    dt = D.result_type(input, other)
    if not dt.is_floating_point:
        _no_kernel("hypot_cpu", input if input.dtype is dt else other)
    return E.hypot(input, other)


@public("function method inplace")
def lerp(input, end, weight):
    """``input + weight * (end - input)``; a tensor or a number ``weight``."""
    if isinstance(end, Tensor) and isinstance(input, Tensor) and end.dtype is not input.dtype:
        raise RuntimeError(f"expected dtype {_CAST_NAMES[input.dtype.name].lower()} for `end` "
                           f"but got dtype {_CAST_NAMES[end.dtype.name].lower()}")
    if isinstance(weight, Tensor):
        if weight.ndim and weight.dtype is not input.dtype:
            # (a 0-d weight is taken as a number of any dtype)
            raise RuntimeError(
                f"expected dtype {_CAST_NAMES[input.dtype.name].lower()} for `weight` but got "
                f"dtype {_CAST_NAMES[weight.dtype.name].lower()}")
        if not D.result_type(input, end, weight).is_floating_point:
            _no_kernel("lerp_kernel_tensor", input)
        return E.lerp_tensor(input, end, weight)
    if not D.result_type(input, end).is_floating_point:
        _no_kernel("lerp_kernel_scalar", input)
    return E.lerp(input, end, weight)


# ``x.lerp_(end, 0.1)`` (an EMA's update) written by lerp's loop straight into x
# (``inplace.inplace``; a tensor weight goes on to ``lerp``)
lerp.inplace_op = E.lerp


@public("function method inplace inplace_function")
def logit(input, eps=None):
    """``log(input / (1 - input))``, the input clamped to ``[eps, 1 - eps]`` if ``eps`` is
    given."""
    return E.logit(input, -1.0 if eps is None else eps)


@public("function method inplace inplace_function")
def square(x):
    if x.dtype is D.bool_:
        x = x.to(D.int64)  # PyTorch squares a bool tensor as integers
    return _pow(x, 2)


@public("function method inplace inplace_function", aliases="clip")
def clamp(x, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("numbagrad.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _clamp_tensors(x, min, max)
    dt = x.dtype
    for v in (min, max):
        # (a Python number keeps a float tensor's dtype, an int one an int or float
        # tensor's; the rest is promotion's to decide)
        if v is not None and not (type(v) is float and dt.is_floating_point
                                  or type(v) is int and dt is not D.bool_):
            dt = D.result_type(x, *(v for v in (min, max) if v is not None))
            break
    if dt is not x.dtype:
        x = x.to(dt)
    if dt.is_floating_point:
        lo, hi = -float("inf"), float("inf")
    else:
        info = np.iinfo(dt.np)
        lo, hi = int(info.min), int(info.max)
    return E.clamp(x, lo if min is None else min, hi if max is None else max)


clamp.inplace_op = E.clamp


def _clamp_tensors(x, min, max):
    """``clamp`` with tensor bounds (PyTorch's clamp.Tensor overload: both bounds tensors or
    None), computed in the dtype all three promote to."""
    for v in (min, max):
        if v is not None and not isinstance(v, Tensor):
            given = ", ".join([f"{k}={type(v).__name__ if not isinstance(v, Tensor) else 'Tensor'}"
                               for k, v in (("max", max), ("min", min)) if v is not None])
            raise TypeError(
                f"clamp() received an invalid combination of arguments - got (Tensor, {given}), "
                "but expected one of:\n * (Tensor input, Tensor min = None, Tensor max = None, "
                "*, Tensor out = None)\n * (Tensor input, Number min = None, Number max = None, "
                "*, Tensor out = None)\n")
    bounds = [v for v in (min, max) if v is not None]
    dt = D.result_type(x, *bounds)
    x, *bounds = [t if t.dtype is dt else t.to(dt) for t in (x, *bounds)]
    if min is None:
        return E.clamp_tensor_max(x, *bounds)
    if max is None:
        return E.clamp_tensor_min(x, *bounds)
    return E.clamp_tensor(x, *bounds)


def _one_dim(name, dim):
    """PyTorch's TypeError for max/min given several dims (its overloads take one int)."""
    if isinstance(dim, (tuple, list)):
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"(dim={type(dim).__name__}), but expected one of: (Tensor input), "
                        "(Tensor input, int dim, bool keepdim), (Tensor input, Tensor other)")


@public("function method")
def max(x, dim=None, keepdim=False):
    if isinstance(dim, Tensor):
        return E.maximum(x, dim)
    _one_dim("max", dim)
    if dim is None:
        return R.max_all(x)
    return R.max_dim(x, dim, keepdim)


@public("function method")
def min(x, dim=None, keepdim=False):
    if isinstance(dim, Tensor):
        return E.minimum(x, dim)
    _one_dim("min", dim)
    if dim is None:
        return R.min_all(x)
    return R.min_dim(x, dim, keepdim)


_var_args = R.var_args


@public("function method", name="var")
def var_(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    dim, correction = _var_args(dim, unbiased, correction)
    return R.var(x, dim, correction, keepdim)


@public("function method", name="std")
def std_(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    dim, correction = _var_args(dim, unbiased, correction)
    return R.std(x, dim, correction, keepdim)


@public("function method", name="norm")
def norm_(input, p="fro", dim=None, keepdim=False, *, dtype=None):
    # (a number p is a vector norm over any dims, as PyTorch's; "fro" takes at most two.
    # ``dtype``: the norm computed in it, the cast inside the op, as PyTorch records it)
    x = input
    if p == "fro" or p in (2, 2.0) and not (isinstance(dim, (tuple, list)) and len(dim) > 2):
        return R.norm(x, dim, keepdim, dtype)
    if isinstance(p, str):
        raise NotImplementedError(f"norm with p={p!r} is not implemented")
    return R.vector_norm(x, p, dim, keepdim, dtype)


@public("function method")
def broadcast_to(x, size):
    return M.expand(x, *size) if isinstance(size, (tuple, list)) else M.expand(x, size)


@public("method")
def expand_as(x, other):
    return M.expand(x, other.shape)


def _logical_reduce(x, dim, keepdim, np_fn, reduce):
    """``all``/``any``: a bool tensor, a uint8 one for uint8 ``x`` as in PyTorch (NumPy's
    reduction on the host; ``reduce`` of ``x != 0`` as integers on the device, with no copy to
    the host)."""
    if dim is not None and x.ndim:
        # (a dim named twice is PyTorch's RuntimeError, not NumPy's ValueError)
        dim = (M.normalize_dims(dim, x.ndim) if isinstance(dim, (tuple, list))
               else _wrap_dim(dim, x.ndim))
    elif dim is not None:
        _wrap_dim(dim if isinstance(dim, int) else dim[0], 1)  # (a 0-d tensor takes 0 and -1)
        dim = None
    out = D.uint8 if x.dtype is D.uint8 else D.bool_
    if type(x._data) is np.ndarray:
        return Tensor._make(np.asarray(np_fn(x._data, axis=dim, keepdims=keepdim), out.np))
    if x.numel() == 0:
        return Tensor._make(np.asarray(np_fn(x._host(), axis=dim, keepdims=keepdim),
                                       out.np)).to(x.device)
    return reduce((x != 0).long(), dim=() if dim is None else dim, keepdim=keepdim).to(out)


@public("function method", name="all")
def all_(input, dim=None, keepdim=False):
    """Whether every element (along ``dim``) is nonzero."""
    return _logical_reduce(input, dim, keepdim, np.all, R.amin)


@public("function method", name="any")
def any_(input, dim=None, keepdim=False):
    """Whether any element (along ``dim``) is nonzero."""
    return _logical_reduce(input, dim, keepdim, np.any, R.amax)


@public("function method")
def count_nonzero(input, dim=None):
    """The number of nonzero elements (along ``dim``), as int64."""
    return R.sum(input != 0, dim)


def _dtypes_match(input, other):
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{_CAST_NAMES[input.dtype.name]} did not match "
                           f"{_CAST_NAMES[other.dtype.name]}")


@public("function method")
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``|input - other| <= atol + rtol * |other|`` (equal infinities included)."""
    for k, a in enumerate((input, other)):
        if not isinstance(a, Tensor):
            raise TypeError(f"isclose(): argument '{('input', 'other')[k]}' (position {k + 1}) "
                            f"must be Tensor, not {type(a).__name__}")
    _dtypes_match(input, other)
    same = input == other
    if input.dtype is D.bool_:
        return same
    if not input.dtype.is_floating_point:
        input, other = input.double(), other.double()
    # (a non-finite operand is close only when equal: inf - x is no distance)
    finite = E.logical_and(input - input == 0, other - other == 0)
    close = E.logical_or(same, E.logical_and(
        finite, E.abs(input - other) <= atol + rtol * E.abs(other)))
    if equal_nan:
        close = E.logical_or(close, E.logical_and(input != input, other != other))
    return close


@public("function method")
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    return bool(all_(isclose(input, other, rtol, atol, equal_nan)))


@public("function method")
def equal(input, other) -> bool:
    """Whether the two tensors have one shape and equal elements (any dtypes)."""
    return input.shape == other.shape and bool(all_(input == other))


# ---------------------------------------------------------------- in-place


from .inplace import add_ as _add_inplace  # noqa: E402
from .inplace import (  # noqa: E402,F401
    _CAST_NAMES, assign_inplace, check_inplace, check_no_partial_overlap, copy_, fill_, inplace,
    refresh_view, setitem, without_derivative, zero_,
)



def add_(x, other, *, alpha=1):
    """``x += alpha * other`` in place (``p.add_(grad, alpha=-lr)``: one loop writing p)."""
    if alpha == 1 and type(alpha) is not bool:
        return _add_inplace(x, other)
    refuse("add", (x, other))
    _check_alpha(x, other, alpha)
    return inplace(x, E.add_alpha, other, alpha)


def _no_inplace_derivative(op, aliases):
    """``op``'s in-place variant as PyTorch's: recorded as ``<Name>Backward1``, whose backward
    raises (derivatives.yaml has ``not_implemented("inplace version of acosh")``)."""
    call, node = op.function, op.node_name[:-1] + "1"
    error = (NotImplementedError,
             f"the derivative for 'inplace version of {op.name}' is not implemented.")

    def function(input):
        return without_derivative(input, call, (), node, error)

    function.__name__ = function.__qualname__ = op.name
    return public("inplace inplace_function", aliases=aliases)(function)


_no_inplace_derivative(E.acosh, "arccosh")
_no_inplace_derivative(E.asinh, "arcsinh")
_no_inplace_derivative(E.atanh, "arctanh")


# ---------------------------------------------------------------- the public names


def _as_method(fn, name):
    """``fn`` as a Tensor method (``self`` its first argument)."""

    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = fn.__doc__
    return method


# ---------------------------------------------------------------- keywords and out=
# What every public function takes besides its own parameters, done here once: PyTorch's
# operand keywords (``matmul(input=a, other=b)``), NumPy's ``axis=`` and ``keepdims=`` for
# ``dim=`` and ``keepdim=`` (PyTorch takes both), and ``out=``.

_NUMPY_KEYWORDS = (("axis", "dim"), ("keepdims", "keepdim"))
ERR_OUT_GRAD = ("{}(): functions with out=... arguments don't support automatic "
                "differentiation, but one of the arguments requires grad.")
WARN_RESIZE = (
    "An output with one or more elements was resized since it had shape {}, which does not "
    "match the required output shape {}. This behavior is deprecated, and in a future PyTorch "
    "release outputs will not be resized unless they have zero elements. You can explicitly "
    "reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0)."
)


def _parameter_names(fn) -> tuple:
    """The names of ``fn``'s parameters (a composite op's: its forward's, after ``ctx``)."""
    forward = getattr(fn, "forward", None)
    try:
        names = tuple(inspect.signature(forward or fn).parameters)
    except (TypeError, ValueError):
        return ()
    return names[1:] if forward is not None else names


def _with_keywords(name, fn, takes_out, params, out_overlap=False, tensor_first=False):
    """``fn`` taking the keywords above (``out=`` if ``takes_out``); ``params``: the names of
    its parameters; ``out_overlap``: ``out=`` refuses an input sharing part of its memory;
    ``tensor_first``: a first argument that is no Tensor is PyTorch's TypeError
    (``_refuse_input``; "either": the first two, neither a Tensor). A call without them goes straight to ``fn``: through a wrapper with
    ``fn``'s own signature where it has a plain one (``_fixed_signature``: one call more, not
    the ``*args, **kwargs`` of the general wrapper, a third of its cost on a small op)."""
    general = _general_keywords(name, fn, takes_out, params, out_overlap, tensor_first)
    return _fixed_signature(name, fn, general, takes_out, params, tensor_first) or general


# The functions whose PyTorch signature takes a Number as its first argument (an overload, or
# a Python wrapper that accepts one): every other function whose first parameter is its input
# refuses a number there with the argument parser's TypeError (``torch.exp(2.0)``), where
# numbagrad's ops would compute it or fail on the number with an AttributeError.
_NUMBER_FIRST = frozenset(
    "add sub subtract mul multiply div divide true_divide floor_divide remainder pow "
    "float_power xlogy bitwise_and bitwise_or bitwise_xor bitwise_left_shift "
    "bitwise_right_shift bucketize norm unique unique_consecutive".split())
# (of those, the ones that take two numbers, each wrapped as a tensor; the others want a
# Tensor among their first two arguments)
_NUMBERS_ONLY = frozenset(
    "add sub subtract mul multiply div divide true_divide floor_divide norm unique "
    "unique_consecutive".split())


def _refuse_input(name, fn, args, kwargs):
    """PyTorch's TypeError for a first argument that is no Tensor (see ``_NUMBER_FIRST``): the
    function's own, where it raises one for it (its words for the overloads it has, as
    fmod's), else the argument parser's for a single overload. (Only the failing call is run
    twice, without ``out=``: a number input changes no tensor.)"""
    try:
        fn(*args, **{k: v for k, v in kwargs.items() if k != "out"})
    except TypeError:
        raise
    except Exception:  # noqa: BLE001, S110 - any other outcome: the parser's error below
        pass
    if len(args) >= 2 and not isinstance(args[1], Tensor):  # (two numbers)
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({type(args[0]).__name__}, {type(args[1]).__name__}), but expected "
                        "a Tensor among them")
    raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                    f"{type(args[0]).__name__}")


# the wrapper's source, per plain signature
_WRAPPER = """def {name}({signature}):
{body}"""
_WITH_OUT = """    if out is None:
        return _fn({call})
    return _general({call_out})
"""
_RENAMED = {0: ("x", "input"), 1: ("y", "other")}  # (PyTorch's operand names)


def _fixed_signature(name, fn, general, takes_out, params, tensor_first=False):
    """A wrapper of ``fn`` whose signature is ``fn``'s (``x``, ``y`` named ``input``,
    ``other``, as PyTorch's) plus ``out=``, or None where ``fn``'s is not that plain: its
    parameters all positional, none with a default."""
    forward = getattr(fn, "forward", None)
    try:
        sig = inspect.signature(forward or fn)
    except (TypeError, ValueError):
        return None
    plist = list(sig.parameters.values())[1 if forward is not None else 0:]
    P = inspect.Parameter
    # (no defaults: a wrapper would pass them on explicitly, and some functions tell an
    # argument left out from one given, as ``max(x)`` from ``max(x, dim)``)
    # (a loop: this module's ``any`` is numbagrad.any)
    for p in plist:
        if (p.kind is not P.POSITIONAL_OR_KEYWORD or p.default is not P.empty
                or p.name in ("out", "_fn", "_general")):
            return None
    args = [_RENAMED[i][1] if _RENAMED.get(i, (None,))[0] == p.name else p.name
            for i, p in enumerate(plist)]
    call = ", ".join(args)
    signature = ", ".join(args + (["*", "out=None"] if takes_out else []))
    body = (_WITH_OUT.format(call=call, call_out=", ".join(args + ["out=out"]))
            if takes_out else f"    return _fn({call})\n")
    if tensor_first == "either" and len(args) >= 2:
        body = (f"    if not isinstance({args[0]}, _Tensor) and not isinstance({args[1]}, _Tensor):"
                f"\n        _refuse_input({name!r}, _fn, ({call},), {{}})\n" + body)
    elif tensor_first and tensor_first != "either" and args:
        body = (f"    if not isinstance({args[0]}, _Tensor):\n"
                f"        _refuse_input({name!r}, _fn, ({call},), {{}})\n" + body)
    namespace = {"_fn": fn, "_general": general, "_Tensor": Tensor,
                 "_refuse_input": _refuse_input}
    exec(_WRAPPER.format(name=name, signature=signature, body=body), namespace)
    return _named_like(namespace[name], name, fn)


def _named_like(function, name, fn):
    """``function`` named ``name`` with ``fn``'s docstring and op attributes."""
    function.__name__ = function.__qualname__ = name
    function.__doc__ = fn.__doc__
    function.__wrapped__ = fn
    for attr in ("op", "operator", "method"):  # (an elementwise op's plain function's)
        if hasattr(fn, attr) and not isinstance(fn, OpDef):
            setattr(function, attr, getattr(fn, attr))
    if isinstance(fn, OpDef):
        function.op = fn
    return function


def _general_keywords(name, fn, takes_out, params, out_overlap=False, tensor_first=False):
    """The wrapper for any signature: ``*args, **kwargs``, translated as above."""
    own = frozenset(params) - {"out"}

    def function(*args, **kwargs):
        if tensor_first and args and not isinstance(args[0], Tensor) and (
                tensor_first != "either" or len(args) < 2 or not isinstance(args[1], Tensor)):
            _refuse_input(name, fn, args, kwargs)
        if not kwargs or kwargs.keys() <= own:
            # (the function's own keywords, ``x.sum(dim=1)``: nothing to translate)
            return fn(*args, **kwargs)
        out = kwargs.pop("out", None) if takes_out else None
        for alias, torch_name in _NUMPY_KEYWORDS:
            if alias in kwargs and alias not in params and torch_name in params:
                if torch_name in kwargs:
                    raise TypeError(f"{name}() got multiple values for argument '{torch_name}'")
                kwargs[torch_name] = kwargs.pop(alias)
        for k, key in enumerate(("input", "other")):
            # (positional in PyTorch's signatures: the k-th parameter of ``fn``)
            if key in kwargs and key not in params and len(args) == k < len(params):
                args = (*args, kwargs.pop(key))
        if out is None:
            return fn(*args, **kwargs)
        if not isinstance(out, (Tensor, tuple, list)):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
        if _grad_state.enabled and _any_requires_grad((out, args, kwargs)):
            raise RuntimeError(ERR_OUT_GRAD.format(name))
        if out_overlap and isinstance(out, Tensor):
            check_no_partial_overlap(out, [t for a in (*args, *kwargs.values())
                                           for t in (a if isinstance(a, (list, tuple)) else (a,))])
        # (``out_op``: the op of a wrapper called without its keywords, ``add`` and ``sub``)
        op = getattr(fn, "out_op", None) or getattr(fn, "op", None)
        if (not kwargs and isinstance(op, Elementwise) and isinstance(out, Tensor)
                and dispatch.write_result(op, out, args)):
            # (an elementwise op's loop writes into ``out``: no result array to copy)
            out._bump()
            return out
        return _write_out(name, fn(*args, **kwargs), out)

    return _named_like(function, name, fn)


def _any_requires_grad(args) -> bool:
    """Whether a Tensor in ``args`` (nested lists, tuples, dicts) requires grad. (No
    builtin ``any``: this module's globals include numbagrad.any.)"""
    if isinstance(args, Tensor):
        return args.requires_grad
    if isinstance(args, dict):
        args = list(args.values())
    if isinstance(args, (list, tuple)):
        for a in args:
            if _any_requires_grad(a):
                return True
    return False


def _write_out(name, result, out):
    """``result`` written into ``out`` (resized to its shape, PyTorch's warning when ``out``
    had elements); ``out`` returned."""
    if isinstance(result, tuple):  # (max(x, dim, out=(values, indices)))
        return type(result)(*[_write_out(name, r, o) for r, o in zip(result, out)])
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if not isinstance(result, Tensor):
        raise TypeError(f"{name}() got an unexpected keyword argument 'out'")
    if result.shape != out.shape:
        if out.numel():
            warnings.warn(WARN_RESIZE.format(list(out.shape), list(result.shape)), UserWarning,
                          stacklevel=3)
        if out._base is not None:
            raise RuntimeError(f"{name}(): a view cannot be resized to be out=")
        out._data = backend.of(out._data).zeros(tuple(result.shape), out.dtype.np)
    return assign_inplace(out, result)


def inplace_function(name, fn):
    """``numbagrad.<name>_``: ``fn``'s in-place variant as a function, what ``Tensor.<name>_``
    does (tensor.py) with PyTorch's refusal of an ``input`` that is no Tensor."""

    def function(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}_(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        return inplace(input, fn, *args, **kwargs)

    function.__name__ = function.__qualname__ = name + "_"
    function.__doc__ = f"In-place version of :func:`numbagrad.{name}`."
    return function


def _tables():
    """(functions, methods, in-place ops, nn.functional functions) by public name, from the
    declarations; a name declared twice for one variant is an error. Functions take the
    keywords above (in-place ones, PyTorch's too, take no ``out=``); methods NumPy's reduction
    keywords where they have a ``dim``."""
    tables = {"function": {}, "method": {}, "inplace": {}, "functional": {}}
    for b in PUBLIC:
        for kind in sorted(b.variants):  # (in one order: the same error for a name twice)
            if kind == "inplace_function":
                if b.name + "_" in tables["function"]:
                    raise ValueError(f"{b.name + '_'!r} is declared twice as a function")
                tables["function"][b.name + "_"] = inplace_function(b.name, b.function)
                continue
            table = tables[kind]
            if b.name in table:
                raise ValueError(f"{b.name!r} is declared twice as a {kind}")
            if kind == "method":
                method = b.method or getattr(b.function, "method", None)
                params = _parameter_names(b.function)
                if "dim" in params:
                    # (the keywords' wrapper takes ``self`` as the function's first argument:
                    # no method wrapper between them)
                    method = _general_keywords(b.name, method or b.function, False, params)
                elif method is None:
                    method = _as_method(b.function, b.name)
                table[b.name] = method
            elif kind == "function":
                # PyTorch's elementwise ops (TensorIterator: those with an in-place variant
                # among them) and those marked ``out_overlap`` refuse an out= sharing part of
                # an input's memory; reductions and matmul do not check
                overlap = ("inplace" in b.variants or getattr(b.function, "out_overlap", False)
                           or isinstance(getattr(b.function, "op", None), Elementwise))
                params = _parameter_names(b.function)
                first = params[:1] in (("input",), ("x",), ("self",))
                table[b.name] = _with_keywords(
                    b.name, b.function, True, params, overlap,
                    first and b.name not in _NUMBERS_ONLY
                    and ("either" if b.name in _NUMBER_FIRST else True))
            else:
                table[b.name] = b.function
    return tables["function"], tables["method"], tables["inplace"], tables["functional"]


FUNCTIONS, METHODS, INPLACE, FUNCTIONAL = _tables()
globals().update(FUNCTIONS)
