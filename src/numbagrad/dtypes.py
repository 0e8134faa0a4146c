"""dtype objects with PyTorch's names, and PyTorch's type-promotion rules."""

from __future__ import annotations

import numpy as np


class dtype:
    """A tensor element type: ``numbagrad.float32`` and friends."""

    __slots__ = ("name", "np", "is_floating_point", "is_signed", "itemsize", "_kind")
    __module__ = "numbagrad"  # (its class prints as numbagrad.dtype, as PyTorch's torch.dtype)

    def __init__(self, name: str, np_type, kind: int):
        self.name = name
        self.np = np.dtype(np_type)
        self.itemsize = self.np.itemsize
        # kind orders categories for promotion: bool < integer < floating
        self._kind = kind
        self.is_floating_point = kind == 2
        self.is_signed = self.np.kind in "if"  # (not bool, not uint8)

    def __repr__(self) -> str:
        return f"numbagrad.{self.name}"

    def __reduce__(self):
        # by name through _by_name (no module attribute is named "bool")
        return (_by_name, (self.name,))


bool_ = dtype("bool", np.bool_, 0)
uint8 = dtype("uint8", np.uint8, 1)
int8 = dtype("int8", np.int8, 1)
int16 = dtype("int16", np.int16, 1)
int32 = dtype("int32", np.int32, 1)
int64 = dtype("int64", np.int64, 1)
float32 = dtype("float32", np.float32, 2)
float64 = dtype("float64", np.float64, 2)

ALL = (bool_, uint8, int8, int16, int32, int64, float32, float64)


class _NoTensors(dtype):
    """A PyTorch dtype numbagrad has no tensors of (half precision). A script may name it (a
    table of dtypes, ``autocast``'s argument, ``finfo``) and choose another; a tensor of it
    raises NotImplementedError (``as_dtype``)."""

    __slots__ = ()

    def __init__(self, name: str):
        self.name, self.np, self.itemsize, self._kind = name, None, 2, 2
        self.is_floating_point = self.is_signed = True

    def refuse(self):
        raise NotImplementedError(f"numbagrad has no {self.name} tensors (half precision is "
                                  "not supported yet): use float32")


float16 = _NoTensors("float16")
bfloat16 = _NoTensors("bfloat16")
_BY_NAME = {d.name: d for d in (*ALL, float16, bfloat16)}
# each dtype's name in PyTorch's messages ("expected scalar type Long but found Float"); its
# legacy tensor type is this name and "Tensor" (x.type() is "torch.ByteTensor")
SCALAR_TYPE = {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int",
               "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}
TENSOR_TYPE = {name: kind + "Tensor" for name, kind in SCALAR_TYPE.items()}
# each dtype's C++ type as PyTorch's messages spell it ("float != long int")
C_TYPE = {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
          "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}


class layout:
    """How a tensor's elements are laid out in memory: numbagrad's tensors are all dense and
    strided (``numbagrad.strided``), having no sparse layouts."""

    __slots__ = ("name",)
    __module__ = "numbagrad"  # (its class prints as numbagrad.layout, as PyTorch's torch.layout)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"numbagrad.{self.name}"

    def __reduce__(self):
        return "strided"  # (the module attribute of that name)


strided = layout("strided")


def _by_name(name: str) -> dtype:
    """The dtype named ``name`` (what a pickled dtype calls)."""
    return _BY_NAME[name]
_BY_NP = {d.np: d for d in ALL}
# the C++ type PyTorch names when a number does not fit an integer dtype it writes into a
# tensor ("value cannot be converted to type uint8_t without overflow")
_CHECKED_TYPE = {"int64": "int64_t", "int32": "int", "int16": "int16_t", "int8": "int8_t",
                 "uint8": "uint8_t"}
_ALIASES = {"float": float32, "double": float64, "long": int64, "int": int32, "short": int16}

default_float = float32
default_int = int64


def from_numpy_dtype(np_dtype) -> dtype:
    """The numbagrad dtype for a NumPy dtype; refuses types PyTorch-like code never sees."""
    try:
        d = _BY_NP.get(np_dtype)  # (an array's own dtype: no np.dtype() call)
    except TypeError:  # an unhashable spec, for np.dtype to judge
        d = None
    if d is not None:
        return d
    d = np.dtype(np_dtype)
    try:
        return _BY_NP[d]
    except KeyError:
        if d.kind == "f":
            return float64 if d.itemsize > 4 else float32
        if d.kind in "iu":
            return int64 if d.itemsize > 4 else int32
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{d.name}. The only supported types are: "
            "float64, float32, int64, int32, int16, int8, uint8, and bool."
        ) from None


def as_dtype(d) -> dtype:
    """Accept a numbagrad dtype, a NumPy dtype or type, or a Python type."""
    if isinstance(d, dtype):
        if d.np is None:
            d.refuse()
        return d
    if d is float:
        return float64
    if d is int:
        return int64
    if d is bool:
        return bool_
    if isinstance(d, str) and d in _ALIASES:
        return _ALIASES[d]
    return from_numpy_dtype(d)


def _promoted(a: dtype, b: dtype) -> dtype:
    # the higher category wins; within one, NumPy's promotion is PyTorch's for these dtypes
    # (the wider type; uint8 with int8 is int16, the narrowest that holds both)
    if a._kind != b._kind:
        return a if a._kind > b._kind else b
    return _BY_NP[np.promote_types(a.np, b.np)]


_PROMOTED = {(a, b): _promoted(a, b) for a in ALL for b in ALL}


def promote(a: dtype, b: dtype) -> dtype:
    """Promotion of two tensor dtypes (both dimensioned): ``torch.promote_types``."""
    return _PROMOTED[a, b]


def can_cast(from_: dtype, to: dtype) -> bool:
    """Whether an op may write a result of ``from_`` into a tensor of ``to``
    (``torch.can_cast``): not into a lower category (a float into an integer, an integer into
    a bool); within one, any cast is allowed."""
    return from_._kind <= to._kind


F32_MAX = float(np.finfo(np.float32).max)
# PyTorch's Scalar holds a Python int from int64's minimum to uint64's maximum: its argument
# parser refuses any other with OverflowError
INT_MIN, INT_MAX = -(1 << 63), (1 << 64) - 1


def check_int64(*values):
    """PyTorch's argument parser's refusal of a Python int past int64 where it takes an int64
    (``randint``'s bounds, ``random_``'s)."""
    for v in values:
        if type(v) is int and not INT_MIN <= v < 1 << 63:
            raise ValueError("Overflow when unpacking long long")


def _past_float32(value) -> bool:
    """Whether the number ``value`` is finite and past float32's range (PyTorch's overflow)."""
    return not -F32_MAX <= value <= F32_MAX and value - value == 0


def check_scalar(value):
    """PyTorch's argument parser's refusal of a Python int it cannot hold as a Scalar."""
    if type(value) is int and not INT_MIN <= value <= INT_MAX:
        # (its message for a negative one comes from its try of uint64 after int64)
        raise OverflowError("int too big to convert" if value > 0 else
                            "can't convert negative int to unsigned")


def number(value, dt: dtype, type_name: str | None = None):
    """The Python number ``value`` as a NumPy scalar of ``dt``, PyTorch's checked conversion of
    a number written into a tensor (``full``, ``fill_``, ``x[i] = v``, ``clamp``'s bounds): an
    integer must fit ``dt``, where an unsigned dtype also takes negatives down to minus its
    maximum, wrapped (-1 is 255 as uint8), else PyTorch's RuntimeError, which names the type
    ``type_name`` (its C++ name by default). A float written into an integer dtype must lie in
    its range (NaN does not; -0.5 does not fit uint8) and is truncated."""
    check_scalar(value)
    if isinstance(value, float) and dt.np.kind in "iu":
        info = np.iinfo(dt.np)
        if not info.min <= value <= info.max:
            raise RuntimeError(f"value cannot be converted to type "
                               f"{type_name or _CHECKED_TYPE[dt.name]} without overflow")
        return dt.np.type(int(value))
    if dt is float32 and _past_float32(value):
        with np.errstate(over="ignore"):  # (an op's number past float32 is inf, silently)
            return dt.np.type(value)
    try:
        return dt.np.type(value)
    except OverflowError:  # (NumPy refuses any integer out of the dtype's range)
        info = np.iinfo(dt.np)
        if -info.max <= value <= info.max:  # (a negative value for an unsigned dtype)
            return dt.np.type(value % (info.max + 1))
        raise RuntimeError(f"value cannot be converted to type "
                           f"{type_name or _CHECKED_TYPE[dt.name]} without overflow") from None


def checked_number(value, dt: dtype, type_name: str | None = None):
    """``number`` for a value that fills a tensor (``full``, ``fill_``, ``masked_fill``,
    ``index_fill``, ``x[i] = v``) or is an op's Scalar parameter (``clamp``'s bounds, ``add``'s
    alpha: ``Elementwise.checked_params``), where PyTorch also refuses a finite number past
    float32's range (a number operand, ``x * 1e300`` or ``x ** 1e300``, is not checked)."""
    check_overflow(value, dt, type_name)
    return number(value, dt, type_name)


def check_overflow(value, dt: dtype, type_name: str | None = None):
    """PyTorch's refusal of a finite number past float32's range as a Scalar of a float32
    computation (``checked_number``'s check, where the number is not converted here:
    ``addmm``'s beta, ``rrelu``'s bounds)."""
    if dt is float32 and type(value) is not int and _past_float32(value):
        raise RuntimeError(f"value cannot be converted to type {type_name or 'float'} without "
                           "overflow")


def wrapped(value, dt: dtype):
    """The Python number ``value`` as a NumPy scalar of ``dt`` the way PyTorch casts a number
    operand of an op (``u8 + 300``): an integer outside ``dt``'s range wraps around, a number
    past float32's range is inf (without NumPy's warning)."""
    check_scalar(value)
    if dt is float32 and _past_float32(value):
        with np.errstate(over="ignore"):
            return dt.np.type(value)
    try:
        return dt.np.type(value)
    except OverflowError:
        return np.array(value).astype(dt.np)[()]


def scalar_kind(value) -> int:
    if isinstance(value, (bool, np.bool_)):
        return 0
    if isinstance(value, (int, np.integer)):
        return 1
    if isinstance(value, (float, np.floating)):
        return 2
    raise TypeError(f"unsupported scalar type {type(value).__name__}")


_PY_KIND = {bool: 0, int: 1, float: 2}  # scalar_kind of the Python number types


def result_type(*operands) -> dtype:
    """PyTorch's result_type for tensors and Python scalars.

    Tensors of any shape take part as one category; a Python scalar only raises the result to
    its category (int tensor * 2.5 -> default float, float32 tensor * 2.5 -> float32). A tensor
    is told by its ``dtype`` being one of ours (a NumPy scalar's is NumPy's).
    """
    tensor_dt = None
    zero_dim_dt = None
    scalar_kind_max = -1
    for op in operands:
        k = _PY_KIND.get(type(op))
        if k is not None:  # a Python number (no getattr that fails)
            if k > scalar_kind_max:
                scalar_kind_max = k
            continue
        dt = getattr(op, "dtype", None)
        if type(dt) is dtype:
            if dt is tensor_dt:
                continue  # (0-d or not, one more operand of that dtype changes nothing)
            if op.ndim == 0:
                zero_dim_dt = dt if zero_dim_dt is None else promote(zero_dim_dt, dt)
            elif tensor_dt is None or tensor_dt is dt:
                tensor_dt = dt
            else:
                tensor_dt = promote(tensor_dt, dt)
        else:
            scalar_kind_max = max(scalar_kind_max, scalar_kind(op))
    # 0-d tensors count like dimensioned ones only within a higher category
    result = tensor_dt
    if zero_dim_dt is not None:
        if result is None or zero_dim_dt._kind > result._kind:
            result = zero_dim_dt
    if result is None:
        return {0: bool_, 1: default_int, 2: default_float}[scalar_kind_max]
    if scalar_kind_max > result._kind:
        result = {1: default_int, 2: default_float}[scalar_kind_max]
    return result


def to_float(d: dtype) -> dtype:
    """The floating dtype an op like exp or true division computes in."""
    return d if d.is_floating_point else default_float


class finfo:
    """The limits of a floating point dtype, as ``torch.finfo`` gives them (the default dtype's
    when none is given): ``finfo(numbagrad.float32).eps``."""

    __module__ = "numbagrad"  # (its class prints as numbagrad.finfo, as PyTorch's torch.finfo)

    def __init__(self, type=None):
        dt = default_float if type is None else type
        if not isinstance(dt, dtype) or not dt.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        f = np.finfo(np.float16 if dt is float16 else dt.np)
        if dt is bfloat16:  # (NumPy has no bfloat16: its limits, as PyTorch gives them)
            self.bits, self.eps, self.max, self.min = 16, 0.0078125, 3.3895313892515355e38, \
                -3.3895313892515355e38
            self.tiny = self.smallest_normal = 1.1754943508222875e-38
            self.resolution, self.dtype = 0.01, "bfloat16"
            return
        self.bits = int(f.bits)
        self.eps, self.max, self.min = float(f.eps), float(f.max), float(f.min)
        self.tiny = self.smallest_normal = float(f.smallest_normal)
        self.resolution = 10.0 ** -int(f.precision)  # (PyTorch's: the decimal digits' power)
        self.dtype = dt.name

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """The limits of an integer dtype, as ``torch.iinfo`` gives them."""

    __module__ = "numbagrad"  # (its class prints as numbagrad.iinfo, as PyTorch's torch.iinfo)

    def __init__(self, type):
        if not isinstance(type, dtype) or type.is_floating_point or type.np.kind == "b":
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo "
                            "to handle 'torch.iinfo'")
        i = np.iinfo(type.np)
        self.bits, self.max, self.min = int(i.bits), int(i.max), int(i.min)
        self.dtype = type.name

    def __repr__(self) -> str:
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"
