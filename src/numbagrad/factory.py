"""Tensor creation: tensor, zeros, ones, arange, rand, ... with PyTorch's dtype inference."""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence

import numpy as np

from . import _memory_format as MF
from . import backend
from . import cuda as _cuda
from . import dtypes as D
from ._tensor import Tensor, _check_device, _on, _unwrap, warn_once
from .backend.memory import escape
from .random import manual_seed  # noqa: F401  (re-exported)
from .random import numpy_rng as _rng  # (also the ops' random draws)
from .random import standard_normal as _standard_normal


def _infer_dtype(data, numpy_scalars=False) -> D.dtype:
    """PyTorch's inference for Python data: any float -> default float, else int64 or bool; a
    NumPy array has its own dtype, and so has a NumPy scalar with ``numpy_scalars`` (in
    ``tensor``'s data; a Scalar argument such as ``full``'s value is a plain number)."""
    kind = type(data)  # (the plain Python numbers first: the ABC checks below cost 1 us)
    if kind is float:
        return D.default_float
    if kind is int:
        return D.default_int
    if kind is bool:
        return D.bool_
    if kind is list or kind is tuple:
        return _infer_sequence(data, numpy_scalars)
    if isinstance(data, np.ndarray) or numpy_scalars and isinstance(data, np.generic):
        return D.from_numpy_dtype(data.dtype)
    if isinstance(data, Tensor):
        return data.dtype
    if isinstance(data, (bool, np.bool_)):
        return D.bool_
    if isinstance(data, numbers.Integral):
        return D.default_int
    if isinstance(data, numbers.Real):
        return D.default_float
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    # any Python sequence: a list, a tuple, a range, a deque
    if isinstance(data, (range, Sequence)):
        return _infer_sequence(data, numpy_scalars)
    raise RuntimeError(f"Could not infer dtype of {type(data).__name__}")


def _infer_sequence(data, numpy_scalars) -> D.dtype:
    kinds = [_infer_dtype(d, numpy_scalars) for d in data]
    if not kinds:
        return D.default_float
    best = kinds[0]
    for k in kinds[1:]:
        if k is not best:
            best = D.promote(best, k)
    return best


def _finish(data, requires_grad: bool, dev=None) -> Tensor:
    t = Tensor._make(_on(data, dev) if isinstance(data, np.ndarray) else data)
    if requires_grad:
        if data.dtype.kind != "f":
            raise RuntimeError(ERR_GRAD_DTYPE)
        t._requires_grad = True
    return t


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False) -> Tensor:
    """A new tensor holding a copy of ``data``."""
    if isinstance(data, Tensor):
        warn_copy_construct("numbagrad.tensor")
    return copy_of(data, dtype, device, requires_grad)


def warn_copy_construct(spelling):
    """PyTorch's warning when ``spelling(sourceTensor)`` copies a tensor, at its caller's
    line."""
    warnings.warn(
        "To copy construct from a tensor, it is recommended to use sourceTensor.detach()."
        "clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
        f"{spelling}(sourceTensor).", UserWarning, stacklevel=3)


def copy_of(data, dtype=None, device=None, requires_grad=False) -> Tensor:
    """``tensor(data)`` without its warning: ``Tensor.new_tensor`` warns in its own words."""
    if device is None and isinstance(data, Tensor):
        device = data.device
    device = _check_device(device)
    t = type(data)
    kinds = _plain_kinds(data) if (t is list or t is tuple) and data else 0
    if kinds:  # (the common case: numbers, checked and typed in one pass; nothing to unwrap)
        dt = (D.as_dtype(dtype) if dtype is not None else D.default_float if kinds & 4
              else D.default_int if kinds & 2 else D.bool_)
    else:
        dt = D.as_dtype(dtype) if dtype is not None else _infer_dtype(data, numpy_scalars=True)
        data = _unwrap(data)
    try:
        arr = np.array(data, dtype=dt.np)
    except OverflowError:  # an integer out of the dtype's range: PyTorch's check of each
        arr = np.array(data)
        arr = np.array([D.number(v, dt, dt.name) for v in arr.reshape(-1).tolist()],
                       dt.np).reshape(arr.shape)
    except ValueError:  # (NumPy's word for a ragged list)
        arr = _ragged(data, dt)
    return _finish(arr, requires_grad, device)


_PLAIN_KINDS = {bool: 1, int: 2, float: 4}


def _plain_kinds(data) -> int:
    """For lists and tuples, nested, none empty, of Python bools, ints and floats only: which
    of them occur (bits 1, 2, 4; ``_infer_dtype``'s bool, int or float by the highest). 0 for
    any other data (``_infer_dtype`` and ``_unwrap`` then look at it)."""
    kinds = 0
    for d in data:
        t = type(d)
        k = _PLAIN_KINDS.get(t)
        if k is None:
            if (t is not list and t is not tuple) or not d:
                return 0
            k = _plain_kinds(d)
            if not k:
                return 0
        kinds |= k
    return kinds


def _ragged(data, dt):
    """What PyTorch makes of nested lists NumPy finds ragged: its shape is read along the
    first elements, then every element is checked against it, in order: a number where a list
    belongs is a TypeError, a list of another length a ValueError, a list where a number
    belongs a TypeError. A shape with no elements is not checked (``[[], [1]]`` is (2, 0))."""
    sizes, s = [], data
    while isinstance(s, (list, tuple)):
        sizes.append(len(s))
        if not s:
            break
        s = s[0]
    if 0 in sizes:
        return np.zeros(sizes, dt.np)

    def walk(s, d):
        if d == len(sizes):
            if isinstance(s, (list, tuple)):
                raise TypeError(f"'{type(s).__name__}' object cannot be interpreted as an "
                                "integer")
            return
        if not isinstance(s, (list, tuple)):
            raise TypeError("not a sequence")
        if len(s) != sizes[d]:
            raise ValueError(f"expected sequence of length {sizes[d]} at dim {d} "
                             f"(got {len(s)})")
        for item in s:
            walk(item, d + 1)

    walk(data, 0)
    return np.array(data, dtype=dt.np)  # (not ragged after all: NumPy's own error)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like ``tensor`` but shares memory where it can: with a NumPy array, a Tensor, or (on
    CUDA) any object exposing ``__cuda_array_interface__`` (Numba device arrays, CuPy arrays,
    PyTorch CUDA tensors), when dtype and device already match."""
    device = _check_device(device)
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype)
    if _is_cuda_array(data):
        _check_device("cuda")
        t = Tensor._make(backend.gpu_module().from_cuda_array(data))
        return t.to(device=device, dtype=dtype)
    if isinstance(data, np.ndarray):
        dt = D.as_dtype(dtype) if dtype is not None else D.from_numpy_dtype(data.dtype)
        if data.dtype == dt.np:
            escape(data)  # shared with NumPy code: never read later by an expression
            return Tensor._make(data).to(device=device)
        return Tensor._make(data.astype(dt.np)).to(device=device)
    return tensor(data, dtype=dtype, device=device)


def _is_cuda_array(obj) -> bool:
    if hasattr(type(obj), "__cuda_array_interface__"):
        try:
            obj.__cuda_array_interface__  # CPU torch tensors have the property but raise
            return True
        except Exception:
            return False
    # the CUDA simulator's device arrays have no interface; they are recognised by type
    return type(obj).__name__ == "FakeCUDAArray"


def from_dlpack(ext_tensor) -> Tensor:
    """A CPU tensor sharing memory with a DLPack producer (NumPy arrays, CPU torch tensors,
    ...), via NumPy's DLPack support. CUDA producers go through ``as_tensor`` and
    ``__cuda_array_interface__``."""
    ext = ext_tensor
    dev = ext.__dlpack_device__()[0] if hasattr(ext, "__dlpack_device__") else 1
    if dev != 1 and _is_cuda_array(ext):
        return as_tensor(ext)
    arr = np.from_dlpack(ext)
    if not arr.flags.writeable:
        # NumPy marks some imports read-only; numbagrad tensors are writable, so copy those
        arr = arr.copy()
    return Tensor._make(arr)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``array``."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    D.from_numpy_dtype(array.dtype)
    strides = array.strides
    if strides and min(strides) < 0:
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative "
            "strides are not currently supported. (You can probably work around this by making "
            "a copy of your array  with array.copy().) "
        )
    escape(array)  # shared with NumPy code: never read later by an expression
    return Tensor._make(array)


_MISSING = object()  # (frombuffer: an argument not given, told from None)
WARN_FROMBUFFER_READONLY = (
    "The given buffer is not writable, and PyTorch does not support non-writable tensors. This "
    "means you can write to the underlying (supposedly non-writable) buffer using the tensor. "
    "You may want to copy the buffer to protect its data or make it writable before converting "
    "it to a tensor. This type of warning will be suppressed for the rest of this program.")


def frombuffer(buffer=_MISSING, *args, dtype=_MISSING, count=-1, offset=0,
               requires_grad=False) -> Tensor:
    """A 1-D tensor of ``dtype`` over the bytes of ``buffer`` (an object of the buffer
    protocol) from byte ``offset`` on, ``count`` elements (-1: to the end), sharing its memory.

    A read-only buffer (``bytes``) gives PyTorch's warning and a copy: numbagrad's tensors are
    writable, and writing into an immutable object's memory is not something to offer."""
    if args:
        raise TypeError(f"frombuffer() takes from 2 to 1 positional arguments but "
                        f"{len(args) + 1} were given")
    missing = [n for n, v in (("buffer", buffer), ("dtype", dtype)) if v is _MISSING]
    if missing:
        raise TypeError(f"frombuffer() missing {len(missing)} required positional argument"
                        f"{'s' if len(missing) == 1 else ''}: "
                        + ", ".join(f'"{n}"' for n in missing))
    if not isinstance(dtype, D.dtype):
        raise TypeError("frombuffer(): argument 'dtype' must be torch.dtype, not "
                        f"{type(dtype).__name__}")
    for name, value in (("count", count), ("offset", offset)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
            raise TypeError(f"frombuffer(): argument '{name}' must be int, not "
                            f"{type(value).__name__}")
    if not isinstance(requires_grad, bool):
        raise TypeError("frombuffer(): argument 'requires_grad' must be bool, not "
                        f"{type(requires_grad).__name__}")
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    if not view.c_contiguous:
        raise RuntimeError("could not retrieve buffer from object")
    if view.readonly:
        warn_once("frombuffer_readonly", WARN_FROMBUFFER_READONLY, stacklevel=2)
    np_dtype = D.as_dtype(dtype).np
    size, length = np_dtype.itemsize, view.nbytes
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0 and (length - offset) % size:
        raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) "
                         f"must be a multiple of element size ({size})")
    if count < 0:
        count = (length - offset) // size
    if offset + count * size > length:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    # (a multi-dimensional view read as its flat bytes, as PyTorch's simple buffer request)
    array = np.frombuffer(view.cast("B"), np_dtype, count, offset)
    if view.readonly:
        array = array.copy()
    else:
        escape(array)  # shared with other code: never read later by an expression
    return _finish(array, requires_grad)


def _shape(size, name) -> tuple:
    """``size`` (ints, or one sequence of them) as a shape; PyTorch's TypeError for anything
    else (a float is not truncated)."""
    if not size:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    one_sequence = len(size) == 1 and isinstance(size[0], (tuple, list))
    if one_sequence:
        size = tuple(size[0])
    for k, s in enumerate(size):
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            kind = type(s).__name__
            if one_sequence:
                raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, "
                                f"but found element of type {kind} at pos {k}")
            if len(size) == 1:
                raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, "
                                f"not {kind}")
            raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos "
                            f"{k + 1} with error \"type must be tuple of ints,but got {kind}\"")
    shape = tuple(int(s) for s in size)
    for s in shape:
        if s < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {s}: {list(shape)}"
            )
    return shape


def _size_arg(args, size, name) -> tuple:
    """The shape of ``zeros(2, 3)``, ``zeros((2, 3))`` or ``zeros(size=(2, 3))``."""
    if size is None:
        return _shape(args, name)
    if args:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"{name}(): argument 'size' must be tuple of ints, "
                        f"not {type(size).__name__}")
    return _shape((size,), name)


def check_options(name, layout, pin_memory) -> None:
    """PyTorch's ``layout=`` and ``pin_memory=`` of a factory. numbagrad's tensors are all
    dense and strided: ``strided`` (or None) is the one layout taken. Pinned memory only
    speeds up host-to-device copies, which numbagrad makes the same way pinned or not: with
    CUDA, ``pin_memory=True`` changes nothing; without it, it raises as PyTorch does."""
    if layout is not None and layout is not D.strided:
        if not isinstance(layout, D.layout):
            raise TypeError(f"{name}(): argument 'layout' must be torch.layout, not "
                            f"{type(layout).__name__}")
        raise RuntimeError(f"{name}(): numbagrad has no {layout} layout, only numbagrad.strided")
    if pin_memory and not _cuda.is_available():
        raise RuntimeError("pin_memory=True requires a CUDA or other accelerator backend; no "
                           "pinned memory allocator is available on this system.")


def _dt(dtype, default=None) -> D.dtype:
    return D.as_dtype(dtype) if dtype is not None else (default or D.default_float)


def _filled(shape, value, np_dtype, requires_grad, dev) -> Tensor:
    """A tensor of ``shape`` holding ``value`` (None: uninitialized). On a CUDA device a kernel
    fills it there: no host array, no copy."""
    if dev is None or dev.type == "cpu":
        data = (np.empty(shape, np_dtype) if value is None
                else np.zeros(shape, np_dtype) if type(value) is int and value == 0
                else np.full(shape, value, np_dtype))
    else:
        gpu = backend.gpu_module()
        data = gpu.empty(shape, np_dtype)
        if value is not None:
            gpu.copyto(data, value)
    return _finish(data, requires_grad, dev)


def zeros(*args, size=None, dtype=None, layout=None, device=None, pin_memory=False,
          requires_grad=False) -> Tensor:
    check_options("zeros", layout, pin_memory)
    device = _check_device(device)
    return _filled(_size_arg(args, size, "zeros"), 0, _dt(dtype).np, requires_grad, device)


def ones(*args, size=None, dtype=None, layout=None, device=None, pin_memory=False,
         requires_grad=False) -> Tensor:
    check_options("ones", layout, pin_memory)
    device = _check_device(device)
    return _filled(_size_arg(args, size, "ones"), 1, _dt(dtype).np, requires_grad, device)


def empty(*args, size=None, dtype=None, layout=None, device=None, pin_memory=False,
          requires_grad=False, memory_format=MF.contiguous_format) -> Tensor:
    """An uninitialized tensor, laid out in ``memory_format`` (C order by default)."""
    check_options("empty", layout, pin_memory)
    device = _check_device(device)
    shape = _size_arg(args, size, "empty")
    if memory_format is not MF.contiguous_format:
        fmt = MF.checked(memory_format, "empty", MF.contiguous_format)
        if fmt is MF.preserve_format:  # (no tensor to preserve the layout of)
            raise RuntimeError("unsupported memory format Preserve")
        strides = MF.format_strides(shape, fmt)
        if strides is not None:
            return _strided(shape, strides, None, _dt(dtype).np, requires_grad, device)
    return _filled(shape, None, _dt(dtype).np, requires_grad, device)


def _strided(shape, strides, value, np_dtype, requires_grad, dev) -> Tensor:
    """A tensor of ``shape`` laid out with element ``strides``, holding ``value`` (None:
    uninitialized; an array: its values, broadcast)."""
    be = backend.cpu if dev is None or dev.type == "cpu" else backend.gpu_module()
    data = be.empty_strided(shape, strides, np_dtype)
    if value is not None:
        be.copyto(data, value)
    return _finish(data, requires_grad, dev)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False) -> Tensor:
    """An uninitialized tensor of ``size`` laid out with element ``stride``s (over as much
    memory as they reach)."""
    check_options("empty_strided", layout, pin_memory)
    device = _check_device(device)
    shape = _shape((size,), "empty_strided")
    stride = tuple(int(st) for st in stride)
    if len(stride) != len(shape):
        raise RuntimeError(f"dimensionality of sizes ({len(shape)}) must match dimensionality "
                           f"of strides ({len(stride)})")
    if any(st < 0 for st in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)} and "
                           f"strides={list(stride)}")
    be = backend.cpu if device is None or device.type == "cpu" else backend.gpu_module()
    return _finish(be.empty_strided(shape, stride, _dt(dtype).np), requires_grad, device)


def full(size, fill_value, dtype=None, device=None, requires_grad=False, *, layout=None,
         pin_memory=False) -> Tensor:
    check_options("full", layout, pin_memory)
    device = _check_device(device)
    dt = _dt(dtype, _infer_dtype(fill_value))
    return _filled(_shape((size,), "full"), D.checked_number(fill_value, dt), dt.np, requires_grad,
                   device)


def arange(start=None, end=None, step=1, dtype=None, device=None, requires_grad=False, *,
           layout=None, pin_memory=False) -> Tensor:
    """``start, start + step, ...`` below ``end``: ``arange(end)`` (also ``arange(end=5)``) or
    ``arange(start, end, step=1)``, as PyTorch's two overloads."""
    check_options("arange", layout, pin_memory)
    device = _check_device(device)
    if end is None:
        if start is None:
            raise TypeError('arange() missing 1 required positional arguments: "end"')
        start, end = 0, start
    elif start is None:
        start = 0
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError(
            "upper bound and larger bound inconsistent with step sign"
        )
    dt = _dt(dtype, _infer_dtype([start, end, step]))
    if dt is D.bool_:
        raise NotImplementedError("\"arange_cpu\" not implemented for 'Bool'")
    if dt.is_floating_point:
        # (each value start + i * step in double precision, then rounded, as PyTorch's)
        n = int(np.ceil((end - start) / step))
        data = (start + step * np.arange(max(n, 0), dtype=np.float64)).astype(dt.np)
    else:
        data = np.arange(start, end, step, dtype=dt.np)
    return _finish(data, requires_grad, device)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False, *, layout=None,
             pin_memory=False) -> Tensor:
    check_options("linspace", layout, pin_memory)
    device = _check_device(device)
    _int_steps("linspace", start, end, steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = _ends_checked(start, end, dtype)
    with np.errstate(over="ignore"):
        return _finish(np.linspace(start, end, int(steps)).astype(dt.np), requires_grad, device)


def _int_steps(name, start, end, steps):
    """PyTorch's TypeError for a ``steps`` that is no integer (its argument parser's)."""
    if not isinstance(steps, (int, np.integer)) and not (
            isinstance(steps, Tensor) and steps.ndim == 0 and not steps.dtype.is_floating_point):
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({type(start).__name__}, {type(end).__name__}, "
                        f"{type(steps).__name__}), but expected an int steps")


def _ends_checked(start, end, dtype):
    """linspace's and logspace's dtype, once their ``start`` and ``end`` (PyTorch's Scalars
    converted to it) are checked."""
    dt = _dt(dtype)
    D.checked_number(start, dt)
    D.checked_number(end, dt)
    return dt


def logspace(start, end, steps, base=10.0, dtype=None, device=None,
             requires_grad=False, *, layout=None, pin_memory=False) -> Tensor:
    """``base ** linspace(start, end, steps)``, computed in float64 and then cast."""
    check_options("logspace", layout, pin_memory)
    device = _check_device(device)
    _int_steps("logspace", start, end, steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = _ends_checked(start, end, dtype)
    with np.errstate(over="ignore"):  # (past the dtype's range: inf, as PyTorch's)
        values = np.power(float(base), np.linspace(start, end, int(steps))).astype(dt.np)
    return _finish(values, requires_grad, device)


def eye(n, m=None, dtype=None, device=None, requires_grad=False, *, layout=None,
        pin_memory=False) -> Tensor:
    check_options("eye", layout, pin_memory)
    device = _check_device(device)
    for name, v in (("n", n), ("m", m)):
        if v is not None and v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    return _finish(np.eye(n, n if m is None else m, dtype=_dt(dtype).np), requires_grad, device)


def _triangle_indices(name, row, col, offset, dtype, device, lower):
    dt = D.as_dtype(dtype)
    if dt not in (D.int64, D.int32):
        raise NotImplementedError(f'"{name}" not implemented for '
                                  f"'{D.SCALAR_TYPE.get(dt.name, dt.name)}'")
    if row < 0 or col < 0:
        raise RuntimeError(f"row must be non-negative, got{row}" if row < 0
                           else f"col must be non-negative, got{col}")
    keep = np.tri(row, col, offset, dtype=bool) if lower else ~np.tri(row, col, offset - 1,
                                                                       dtype=bool)
    return _finish(np.stack(np.nonzero(keep)).astype(dt.np), False, _check_device(device))


def tril_indices(row, col, offset=0, *, dtype=D.int64, device=None, layout=None) -> Tensor:
    """The (2, N) coordinates of the lower triangle (``offset`` above the main diagonal) of a
    ``row`` by ``col`` matrix, row by row."""
    return _triangle_indices("tril_indices", row, col, offset, dtype, device, True)


def triu_indices(row, col, offset=0, *, dtype=D.int64, device=None, layout=None) -> Tensor:
    """The (2, N) coordinates of the upper triangle (from ``offset`` above the main diagonal)
    of a ``row`` by ``col`` matrix, row by row."""
    return _triangle_indices("triu_indices", row, col, offset, dtype, device, False)


def _random_float(dt, kernel, shape=None):
    """PyTorch's refusal of an integer or bool dtype for a random float fill. Given the
    ``shape`` to fill, the refusal is the sampling kernel's own, which PyTorch never enters
    for an empty tensor (``randn(0, dtype=torch.long)`` runs; ``rand``'s bounds check does
    not wait for the kernel)."""
    if not dt.is_floating_point and (shape is None or math.prod(shape)):
        name = D.SCALAR_TYPE.get(dt.name, dt.name)
        raise NotImplementedError(f'"{kernel}" not implemented for \'{name}\'')


def rand(*args, size=None, generator=None, dtype=None, layout=None, device=None,
         pin_memory=False, requires_grad=False) -> Tensor:
    check_options("rand", layout, pin_memory)
    device = _check_device(device)
    dt = _dt(dtype)
    _random_float(dt, "check_uniform_bounds")
    shape = _size_arg(args, size, "rand")
    if dt.np == np.float32:  # (24 random bits: a float64 draw rounded to float32 may be 1.0)
        data = _rng(generator).random(shape, dtype=np.float32)
    else:
        data = _rng(generator).random(shape, dtype=np.float64).astype(dt.np, copy=False)
    return _finish(data, requires_grad, device)


def randn(*args, size=None, generator=None, dtype=None, layout=None, device=None,
          pin_memory=False, requires_grad=False) -> Tensor:
    check_options("randn", layout, pin_memory)
    device = _check_device(device)
    dt = _dt(dtype)
    shape = _size_arg(args, size, "randn")
    _random_float(dt, "normal_kernel_cpu", shape)
    data = _standard_normal(_rng(generator), shape, dt.np).astype(dt.np, copy=False)
    return _finish(data, requires_grad, device)


def randint(low=0, high=None, size=None, *, generator=None, dtype=None, layout=None,
            device=None, pin_memory=False, requires_grad=False) -> Tensor:
    check_options("randint", layout, pin_memory)
    device = _check_device(device)
    if size is None:  # randint(high, size)
        low, high, size = 0, low, high
    D.check_int64(low, high)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    dt = _dt(dtype, D.default_int)
    data = _rng(generator).integers(low, high, size=_shape((size,), "randint"))
    return _finish(data.astype(dt.np, copy=False), requires_grad, device)


def randperm(n, *, generator=None, dtype=None, layout=None, device=None,
             pin_memory=False) -> Tensor:
    check_options("randperm", layout, pin_memory)
    device = _check_device(device)
    data = _rng(generator).permutation(int(n)).astype(_dt(dtype, D.default_int).np)
    return Tensor._make(_on(data, device))


def _like(fn, fill=None):
    """``fn``'s ``*_like``: a tensor of ``input``'s shape (and dtype and device unless given),
    laid out as ``memory_format`` says: preserve_format keeps a dense layout of ``input``,
    as PyTorch's. ``fill``: the value ``fn`` fills with (None: ``fn`` draws the values, which
    are then laid out so)."""
    name = fn.__name__ + "_like"

    def like(input, dtype=None, device=None, requires_grad=False,
             memory_format=MF.preserve_format, *, layout=None, pin_memory=False, **kwargs):
        check_options(name, layout, pin_memory)
        dtype = dtype or input.dtype
        device = input.device if device is None else device
        strides = None
        if memory_format is not MF.contiguous_format:
            strides = MF.like_strides(input, MF.checked(memory_format, name,
                                                        MF.preserve_format))
        if strides is None:
            if (fill is not None or fn is empty) and not kwargs:
                # (input's shape needs none of ``fn``'s checks of a size argument)
                return _filled(tuple(input.shape), fill, _dt(dtype).np, requires_grad,
                               _check_device(device))
            return fn(tuple(input.shape), dtype=dtype, device=device,
                      requires_grad=requires_grad, **kwargs)
        if fill is not None or fn is empty:
            return _strided(tuple(input.shape), strides, fill, _dt(dtype).np, requires_grad,
                            _check_device(device))
        values = fn(tuple(input.shape), dtype=dtype, device=device, **kwargs)
        return _strided(tuple(input.shape), strides, values._data, values._data.dtype,
                        requires_grad, values.device)

    like.__name__ = like.__qualname__ = name
    return like


zeros_like = _like(zeros, 0)
ones_like = _like(ones, 1)
empty_like = _like(empty)
rand_like = _like(rand)
randn_like = _like(randn)


def full_like(input, fill_value, dtype=None, device=None, requires_grad=False,
              memory_format=MF.preserve_format, *, layout=None, pin_memory=False) -> Tensor:
    """A tensor of ``input``'s shape holding ``fill_value``, laid out as ``memory_format``
    says (as ``zeros_like``)."""
    check_options("full_like", layout, pin_memory)
    strides = None
    if memory_format is not MF.contiguous_format:
        strides = MF.like_strides(input, MF.checked(memory_format, "full_like",
                                                    MF.preserve_format))
    device = input.device if device is None else device
    if strides is None:
        return full(input.shape, fill_value, dtype=dtype or input.dtype, device=device,
                    requires_grad=requires_grad)
    dt = _dt(dtype or input.dtype)
    return _strided(tuple(input.shape), strides, D.checked_number(fill_value, dt), dt.np,
                    requires_grad, _check_device(device))


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None,
                  requires_grad=False) -> Tensor:
    """A 0-d tensor holding the number ``s``, of the default float dtype unless ``dtype`` is
    given (whatever the number's type, as PyTorch's)."""
    return full((), s, dtype=_dt(dtype), device=device, requires_grad=requires_grad)


WARN_RANGE = (
    "torch.range is deprecated and will be removed in a future release because its behavior is "
    "inconsistent with Python's range builtin. Instead, use torch.arange, which produces "
    "values in [start, end)."
)


def range_(start, end, step=1, *, dtype=None, layout=None, device=None,
            requires_grad=False) -> Tensor:
    """``start, start + step, ...`` up to ``end`` included, of the default float dtype unless
    ``dtype`` is given (deprecated, with PyTorch's warning: ``arange`` excludes ``end``)."""
    warnings.warn(WARN_RANGE, UserWarning, stacklevel=2)
    device = _check_device(device)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = int(math.floor((end - start) / step)) + 1
    data = start + step * np.arange(n, dtype=np.float64)  # (in double, then cast: PyTorch's)
    return _finish(data.astype(_dt(dtype).np), requires_grad, device)


range_.__name__ = range_.__qualname__ = "range"  # (numbagrad.range; not the builtin here)


# ---------------------------------------------------------------- asarray

WARN_ASARRAY_GRAD = (
    "torch.asarray: unspecified requires_grad now defaults to obj.requires_grad instead of "
    "False. Pass requires_grad=False explicitly to get the old behavior and silence this "
    "warning."
)
_UNSET = object()


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=_UNSET) -> Tensor:
    """``obj`` (a Tensor, a NumPy array or scalar, a number, a sequence, an object with
    ``__cuda_array_interface__``) as a tensor, sharing its memory where dtype and device
    allow unless ``copy=True``; ``copy=False`` refuses to copy (ValueError)."""
    dt = D.as_dtype(dtype) if dtype is not None else None
    if isinstance(obj, Tensor):
        return _tensor_asarray(obj, dt, device, copy, requires_grad)
    if requires_grad is _UNSET:
        requires_grad = False
    if isinstance(obj, np.ndarray) or _is_cuda_array(obj):
        if copy is False:
            src = D.from_numpy_dtype(obj.dtype)
            if dt is not None and dt is not src:
                raise ValueError(f"can't alias tensor with dtype '{D.SCALAR_TYPE[src.name]}' "
                                 f"into dtype '{D.SCALAR_TYPE[dt.name]}'.")
        t = (tensor(obj, dtype=dt, device=device) if copy
             else as_tensor(obj, dtype=dt, device=device))
    elif copy is False:
        raise ValueError("can't alias arbitrary sequence into a tensor.")
    else:
        t = tensor(obj, dtype=dt, device=device)
    return _requiring_grad(t) if requires_grad else t


ERR_GRAD_DTYPE = "Only Tensors of floating point and complex dtype can require gradients"


def _requiring_grad(t):
    if not t.dtype.is_floating_point:
        raise RuntimeError(ERR_GRAD_DTYPE)
    return t if t.requires_grad else t.requires_grad_()


def _tensor_asarray(obj, dt, device, copy, requires_grad):
    """``asarray`` of a Tensor: ``obj`` itself unless dtype, device or ``copy=True`` ask for a
    new one (recorded: ToCopyBackward0, CloneBackward0)."""
    if requires_grad is _UNSET:
        if obj.requires_grad:
            warn_once("asarray_requires_grad", WARN_ASARRAY_GRAD, stacklevel=3)
        requires_grad = obj.requires_grad
    dt = dt or obj.dtype
    device = obj.device if device is None else _check_device(device)
    if copy is False:
        if dt is not obj.dtype:
            raise ValueError(f"can't alias tensor with dtype '{D.SCALAR_TYPE[obj.dtype.name]}' "
                             f"into dtype '{D.SCALAR_TYPE[dt.name]}'.")
        if device != obj.device:
            raise ValueError(f"can't alias tensor from device '{obj.device}' to '{device}'.")
    if dt is not obj.dtype or device != obj.device:
        t = obj.to(device=device, dtype=dt)
    elif copy:
        t = obj.clone()
    else:
        t = obj
    if requires_grad:
        return _requiring_grad(t)
    if t is obj and obj.requires_grad and obj.is_leaf:
        # (PyTorch sets the flag on the tensor given, which it returns: a leaf no longer
        # requires grad after asarray(leaf, requires_grad=False))
        return obj.requires_grad_(False)
    return t.detach() if t.requires_grad else t


# ---------------------------------------------------------------- window functions


def _window(name, window_length, periodic, dtype, device, requires_grad, values):
    """A window of ``window_length`` points: ``values(n)``, the symmetric window of ``n``
    points in float64, computed for one point more and cut when ``periodic`` (PyTorch's
    checks and words)."""
    dt = _dt(dtype)
    if not dt.is_floating_point:
        raise RuntimeError(
            f"{name} expects floating point dtypes, got: TensorOptions(dtype={D.C_TYPE[dt.name]}, "
            "device=cpu, layout=Strided (default), requires_grad=false (default), "
            "pinned_memory=false, memory_format=(nullopt))")
    if window_length < 0:
        raise RuntimeError(
            f"{name} requires non-negative window_length, got window_length={window_length}")
    device = _check_device(device)
    if window_length <= 1:
        data = np.ones(window_length)
    else:
        n = window_length + 1 if periodic else window_length
        data = values(n)[:window_length]
    return _finish(data.astype(dt.np), requires_grad, device)


def _cosine_terms(n, *coefficients):
    """``sum_k (-1)^k c_k cos(2 pi k i / (n - 1))`` over ``i < n`` (the generalized cosine
    windows)."""
    phase = 2 * np.pi * np.arange(n) / (n - 1)
    return sum((-1) ** k * c * np.cos(k * phase) for k, c in enumerate(coefficients))


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                pin_memory=False, requires_grad=False) -> Tensor:
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n: _cosine_terms(n, 0.5, 0.5))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, pin_memory=False, requires_grad=False) -> Tensor:
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n: _cosine_terms(n, alpha, beta))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False) -> Tensor:
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n: _cosine_terms(n, 0.42, 0.5, 0.08))


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False) -> Tensor:
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n: 1 - np.abs(2 * np.arange(n) / (n - 1) - 1))


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, pin_memory=False, requires_grad=False) -> Tensor:
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n: np.kaiser(n, beta))


# ---------------------------------------------------------------- legacy tensor types


class _LegacyType(type):
    """The type of ``numbagrad.FloatTensor`` and friends: calling one builds a CPU tensor of its
    dtype (``FloatTensor([1, 2])``, ``FloatTensor(2, 3)`` uninitialised); an instance is any
    CPU tensor of that dtype (PyTorch's metaclass check)."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and not obj.is_cuda and obj.dtype is cls.dtype

    def __call__(cls, *args, size=None, device=None):
        return Tensor(*args, size=size, dtype=cls.dtype, device=device)

    def __repr__(cls):
        return f"<class 'numbagrad.{cls.__name__}'>"


def _legacy_type(name, dtype):
    return _LegacyType(name, (), {"dtype": dtype, "__module__": "numbagrad", "__slots__": ()})


FloatTensor = _legacy_type("FloatTensor", D.float32)
DoubleTensor = _legacy_type("DoubleTensor", D.float64)
LongTensor = _legacy_type("LongTensor", D.int64)
IntTensor = _legacy_type("IntTensor", D.int32)
ShortTensor = _legacy_type("ShortTensor", D.int16)
CharTensor = _legacy_type("CharTensor", D.int8)
ByteTensor = _legacy_type("ByteTensor", D.uint8)
BoolTensor = _legacy_type("BoolTensor", D.bool_)
LEGACY_TYPES = {t.__name__: t for t in (FloatTensor, DoubleTensor, LongTensor, IntTensor,
                                         ShortTensor, CharTensor, ByteTensor, BoolTensor)}
