"""CUDA backend: device storage, and ``@cuda.jit`` kernels made from the ops' scalar definitions.

Imported only when a CUDA tensor is made, so ``import numbagrad`` never touches CUDA. The same
code runs on a GPU and in Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``); only the launch
configuration differs (``launch``).

A CUDA tensor's storage is a ``DeviceArray``: a flat, contiguous 1-D device buffer plus an
element offset, a shape and element strides. Views (reshape, transpose, slicing, expand,
as_strided) only change that metadata; kernels receive (buffer, offset, strides) per operand,
like the CPU kernels, so one compiled kernel per op and dtype serves every shape and view.
Shapes and strides are passed as tuples, so a kernel is compiled per rank, never per shape.
"""

from __future__ import annotations

import math
import os

import numpy as np

# Grid sizes below 128 blocks are normal for small tensors, so numba-cuda's low-occupancy
# warning is off unless the user's environment turns it on (``numbagrad.cuda`` sets the same
# default before its first import of numba.cuda; ``_quiet_low_occupancy`` covers a numba.cuda
# imported earlier by someone else).
os.environ.setdefault("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")

import numba  # noqa: E402
from numba import cuda  # noqa: E402

from . import codegen  # noqa: E402
from . import cpu  # noqa: E402
from . import gpu_launch  # noqa: E402
from . import kernels_gpu  # noqa: E402
from . import layout  # noqa: E402

SIMULATOR = bool(numba.config.ENABLE_CUDASIM)


def _quiet_low_occupancy() -> None:
    try:
        from numba.cuda.core import config
    except ImportError:
        return
    try:
        value = int(os.environ["NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS"])
    except ValueError:  # not a number: numba-cuda's own reading of it stands
        return
    if hasattr(config, "CUDA_LOW_OCCUPANCY_WARNINGS"):
        config.CUDA_LOW_OCCUPANCY_WARNINGS = value


_quiet_low_occupancy()

# ---------------------------------------------------------------- launch configuration (one place)

if SIMULATOR:
    # every simulated thread is a Python thread and every syncthreads polls: stay tiny
    THREADS = 32
    REDUCE_THREADS = 4
    MAX_BLOCKS = 2
    TILE = 4
else:
    THREADS = 256
    REDUCE_THREADS = 256
    MAX_BLOCKS = None  # set from the device on first use
    TILE = 16


def _max_blocks() -> int:
    global MAX_BLOCKS
    if MAX_BLOCKS is None:
        sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
        MAX_BLOCKS = 32 * sms
    return MAX_BLOCKS


def launch(n: int, threads: int = THREADS) -> tuple[int, int]:
    """(blocks, threads) for a grid-stride loop over ``n`` items."""
    return max(1, min((n + threads - 1) // threads, _max_blocks())), threads


def _dispatch(kernel, griddim, blockdim, args) -> None:
    kernel[griddim, blockdim](*args)


# every launch of this backend goes through here: (kernel, griddim, blockdim, args)
_launch = _dispatch if SIMULATOR else gpu_launch.Launcher()


# ---------------------------------------------------------------- storage


class _Flags:
    __slots__ = ("c_contiguous",)
    writeable = True

    def __init__(self, c):
        self.c_contiguous = c


def _c_strides(shape) -> tuple:
    st, acc = [], 1
    for n in reversed(shape):
        st.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(st))


def _is_c_contiguous(shape, estrides) -> bool:
    acc = 1
    for n, s in zip(reversed(shape), reversed(estrides)):
        if n != 1 and s != acc:
            return False
        acc *= n
    return True


class DeviceArray:
    """A strided view of a flat device buffer: the NumPy-like surface the ops need."""

    __slots__ = ("buf", "offset", "shape", "estrides", "dtype", "__weakref__")

    def __init__(self, buf, offset: int, shape: tuple, estrides: tuple):
        self.buf = buf
        self.offset = int(offset)
        self.shape = tuple(int(s) for s in shape)
        self.estrides = tuple(int(s) for s in estrides)
        self.dtype = np.dtype(buf.dtype)

    # ---- NumPy-like attributes
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def strides(self) -> tuple:
        return tuple(s * self.itemsize for s in self.estrides)

    @property
    def flags(self):
        return _Flags(_is_c_contiguous(self.shape, self.estrides))

    @property
    def T(self):
        return self.transpose(tuple(range(self.ndim - 1, -1, -1)))

    def __repr__(self):
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, offset={self.offset})"

    # ---- views
    def view(self):
        return DeviceArray(self.buf, self.offset, self.shape, self.estrides)

    def transpose(self, axes=None):
        axes = tuple(range(self.ndim - 1, -1, -1)) if axes is None else tuple(axes)
        return DeviceArray(self.buf, self.offset, tuple(self.shape[a] for a in axes),
                           tuple(self.estrides[a] for a in axes))

    def swapaxes(self, a, b):
        axes = list(range(self.ndim))
        axes[a], axes[b] = axes[b], axes[a]
        return self.transpose(axes)

    def reshape(self, *shape, copy=None):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = tuple(int(s) for s in shape)
        if -1 in shape:
            known = math.prod(s for s in shape if s != -1)
            shape = tuple(self.size // known if s == -1 else s for s in shape)
        st = _view_strides(self.shape, self.estrides, shape)
        if st is not None:
            return DeviceArray(self.buf, self.offset, shape, st)
        if copy is False:
            raise ValueError("cannot reshape this view without copying")
        return ascontiguousarray(self).reshape(shape)

    def __getitem__(self, index):
        if not isinstance(index, tuple):
            index = (index,)
        if any(not (i is None or i is Ellipsis or isinstance(i, (slice, int, np.integer)))
               or isinstance(i, (bool, np.bool_)) for i in index):
            return gather(self, index)
        return _basic_view(self, index)

    def __setitem__(self, index, value):
        if not isinstance(index, tuple):
            index = (index,)
        if any(not (i is None or i is Ellipsis or isinstance(i, (slice, int, np.integer)))
               or isinstance(i, (bool, np.bool_)) for i in index):
            scatter(self, index, value, accumulate=False)
            return
        copyto(_basic_view(self, index), value)

    # ---- copies
    def copy(self):
        return ascontiguousarray(self, force=True)

    def astype(self, dtype, copy=True):
        dtype = np.dtype(dtype)
        if dtype == self.dtype and not copy:
            return self
        out = empty(self.shape, dtype)
        copyto(out, self)
        return out

    def get(self) -> np.ndarray:
        """A host (NumPy) copy."""
        if self.size == 0:
            return np.empty(self.shape, self.dtype)
        a = ascontiguousarray(self)
        return a.buf[a.offset : a.offset + a.size].copy_to_host().reshape(self.shape)

    def tolist(self):
        return self.get().tolist()

    def __array__(self, dtype=None, copy=None):
        a = self.get()
        return a if dtype is None else a.astype(dtype)

    @property
    def __cuda_array_interface__(self):
        ptr = _buffer_pointer(self.buf) + self.offset * self.itemsize
        contiguous = _is_c_contiguous(self.shape, self.estrides)
        return {
            "shape": self.shape,
            "strides": None if contiguous else self.strides,
            "typestr": self.dtype.str,
            "data": (ptr if self.size else 0, False),
            "version": 3,
            "stream": None,
        }


def _buffer_pointer(buf) -> int:
    if SIMULATOR:
        return buf._ary.__array_interface__["data"][0]
    return buf.__cuda_array_interface__["data"][0]


def _view_strides(old_shape, old_strides, new_shape):
    """Element strides viewing (old_shape, old_strides) as new_shape, or None (NumPy's rule)."""
    if math.prod(old_shape) != math.prod(new_shape):
        raise ValueError(f"cannot reshape array of size {math.prod(old_shape)} into {new_shape}")
    if math.prod(new_shape) == 0 or _is_c_contiguous(old_shape, old_strides):
        return _c_strides(new_shape)
    # split/merge runs of dims that are contiguous among themselves
    old = [(n, s) for n, s in zip(old_shape, old_strides) if n != 1]
    new_strides = [0] * len(new_shape)
    i = 0  # position in old
    j = 0  # position in new
    while j < len(new_shape):
        if new_shape[j] == 1:
            new_strides[j] = 0
            j += 1
            continue
        if i >= len(old):
            return None
        # grow a group of old dims and new dims until their sizes match
        o_prod, n_prod = old[i][0], new_shape[j]
        i_end, j_end = i + 1, j + 1
        while o_prod != n_prod:
            if o_prod < n_prod:
                if i_end >= len(old):
                    return None
                o_prod *= old[i_end][0]
                i_end += 1
            else:
                while j_end < len(new_shape) and new_shape[j_end] == 1:
                    j_end += 1
                if j_end >= len(new_shape):
                    return None
                n_prod *= new_shape[j_end]
                j_end += 1
        for k in range(i, i_end - 1):
            if old[k][1] != old[k + 1][1] * old[k + 1][0]:
                return None
        st = old[i_end - 1][1]
        for k in range(j_end - 1, j - 1, -1):
            new_strides[k] = st if new_shape[k] != 1 else 0
            st *= new_shape[k]
        i, j = i_end, j_end
    return tuple(new_strides)


def _basic_view(a: DeviceArray, index: tuple) -> DeviceArray:
    """``a[index]`` for ints, slices, None and Ellipsis: a view."""
    n_real = sum(1 for i in index if i is not None and i is not Ellipsis)
    if Ellipsis in index:
        k = index.index(Ellipsis)
        index = index[:k] + (slice(None),) * (a.ndim - n_real) + index[k + 1 :]
    index = index + (slice(None),) * (a.ndim - sum(1 for i in index if i is not None))
    off, shape, strides, d = a.offset, [], [], 0
    for item in index:
        if item is None:
            shape.append(1)
            strides.append(0)
            continue
        n, st = a.shape[d], a.estrides[d]
        if isinstance(item, slice):
            start, stop, step = item.indices(n)
            length = len(range(start, stop, step))
            if length:
                off += start * st
            shape.append(length)
            strides.append(st * step)
        else:
            item = int(item)
            if not -n <= item < n:
                raise IndexError(f"index {item} is out of bounds for axis {d} with size {n}")
            off += (item % n) * st
        d += 1
    return DeviceArray(a.buf, off, tuple(shape), tuple(strides))


def element_offsets(a: DeviceArray) -> np.ndarray:
    """Each element's position in ``a.buf`` (host int64 array of ``a``'s shape)."""
    pos = np.full(a.shape, a.offset, dtype=np.int64)
    for d, (n, st) in enumerate(zip(a.shape, a.estrides)):
        pos += (np.arange(n, dtype=np.int64) * st).reshape(
            (1,) * d + (n,) + (1,) * (a.ndim - d - 1)
        )
    return pos


# ---------------------------------------------------------------- allocation and transfer


def _make_pool():
    from numba.cuda.cudadrv.devicearray import DeviceNDArray
    from numba.cuda.cudadrv.driver import MemoryPointer

    def alloc(nbytes):
        return cuda.current_context().memalloc(nbytes)

    def wrap(base, nbytes, give_back):
        return MemoryPointer(base.context, base.device_pointer, nbytes, finalizer=give_back)

    def release_all():
        cuda.current_context().deallocations.clear()

    return gpu_launch.BufferPool(alloc, wrap, release_all), DeviceNDArray


_pool = None  # (BufferPool, DeviceNDArray) on a GPU, made on first use


def _flat_buffer(n: int, dtype: np.dtype):
    """A flat device buffer of ``n`` elements, from the pool on a GPU."""
    global _pool
    if SIMULATOR:
        return cuda.device_array(n, dtype=dtype)
    if _pool is None:
        _pool = _make_pool()
    pool, DeviceNDArray = _pool
    isz = dtype.itemsize
    return DeviceNDArray((n,), (isz,), dtype, gpu_data=pool.take(n * isz))


def empty_cache() -> None:
    """Give the pool's cached buffers back to the driver (``torch.cuda.empty_cache``)."""
    if _pool is not None:
        _pool[0].empty_cache()


def empty(shape, dtype) -> DeviceArray:
    shape = tuple(int(s) for s in shape)
    n = math.prod(shape)
    buf = _flat_buffer(max(n, 1), np.dtype(dtype))
    return DeviceArray(buf, 0, shape, _c_strides(shape))


def empty_strided(shape, strides, dtype) -> DeviceArray:
    """A new array of ``shape`` with element ``strides`` (as much memory as the layout
    reaches)."""
    return DeviceArray(_flat_buffer(max(layout.storage_size(shape, strides), 1),
                                    np.dtype(dtype)), 0, shape, strides)


def full(shape, value, dtype) -> DeviceArray:
    out = empty(shape, dtype)
    copyto(out, value)
    return out


def zeros(shape, dtype) -> DeviceArray:
    return full(shape, 0, dtype)


def to_device(a: np.ndarray) -> DeviceArray:
    a = a if a.flags.c_contiguous else a.copy()  # (ascontiguousarray makes 0-d 1-d)
    flat = a.reshape(-1) if a.size else np.zeros(1, a.dtype)
    buf = _flat_buffer(flat.size, flat.dtype)
    buf.copy_to_device(flat)
    return DeviceArray(buf, 0, a.shape, _c_strides(a.shape))


def from_cuda_array(obj) -> DeviceArray:
    """Wrap anything exposing ``__cuda_array_interface__`` (or a Numba device array): no copy."""
    if SIMULATOR:
        host = getattr(obj, "_ary", None)
        if host is None:
            raise TypeError(
                f"the CUDA simulator cannot wrap {type(obj).__name__}: only Numba device arrays"
            )
        return _wrap_host_memory(host)
    desc = obj.__cuda_array_interface__
    dtype = np.dtype(desc["typestr"])
    shape = tuple(desc["shape"])
    strides = desc.get("strides")
    est = _c_strides(shape) if strides is None else tuple(s // dtype.itemsize for s in strides)
    if any(s < 0 for s in est):
        raise ValueError("arrays with negative strides are not supported")
    span = 1 + sum((n - 1) * s for n, s in zip(shape, est)) if math.prod(shape) else 1
    flat = cuda.from_cuda_array_interface(
        {"shape": (span,), "strides": None, "typestr": desc["typestr"],
         "data": desc["data"], "version": 3, "stream": desc.get("stream")},
        owner=obj, sync=True,
    )
    return DeviceArray(flat, 0, shape, est)


def _wrap_host_memory(host: np.ndarray) -> DeviceArray:
    # simulator only: device memory is host memory, so a flat span view shares it
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    isz = host.itemsize
    est = tuple(s // isz for s in host.strides)
    if any(s < 0 for s in est):
        raise ValueError("arrays with negative strides are not supported")
    span = 1 + sum((n - 1) * s for n, s in zip(host.shape, est)) if host.size else 1
    flat = np.lib.stride_tricks.as_strided(host, (span,), (isz,))
    return DeviceArray(FakeCUDAArray(flat), 0, host.shape, est)


def synchronize() -> None:
    cuda.synchronize()


# ---------------------------------------------------------------- elementwise kernels

HEADER = "from numba import cuda\n"
# Scalar helpers are plain @njit functions: a CUDA kernel compiles them for the GPU (inlined),
# and, unlike @cuda.jit(device=True), they type-check without a GPU, so compile_ptx works in CI.
# In the simulator kernels run as Python, so the helpers stay plain Python (no CPU compile).
DEVICE_FN = "" if SIMULATOR else "@njit(inline='always')\n"


# Elements a thread takes per step of its grid-stride loop. Their loads are written before any
# of their stores: a store may alias a load, so the compiler keeps each element's load, compute
# and store in order otherwise, and a warp waits out one element's memory latency at a time
# (seen in the PTX of x * y: two loads, the product, its store, four times over).
UNROLL = 4


def _positions_source(u: int, n_in: int) -> list:
    """Lines setting element ``j{u}``'s position in the output (``q{u}``) and each operand's
    (``q{u}_{k}``). The outermost index is what is left of ``j``: a rank-1 run, what most
    calls coalesce to, divides nothing (an integer division is tens of instructions on a GPU,
    dearer than most elements' arithmetic)."""
    ops = [("q{u}", "oo", "so")] + [(f"q{{u}}_{k}", f"o{k}", f"s{k}") for k in range(n_in)]
    ops = [(q.format(u=u), o, st) for q, o, st in ops]
    lines = [f"        r = j{u}"] + [f"        {q} = {o}" for q, o, _ in ops]
    lines += ["        for d in range(len(shape) - 1, 0, -1):",
              "            c = r % shape[d]",
              "            r = r // shape[d]"]
    lines += [f"            {q} += c * {st}[d]" for q, _, st in ops]
    lines += [f"        {q} += r * {st}[0]" for q, _, st in ops]
    return lines


def _elementwise_source(fname: str, n_in: int, n_params: int) -> str:
    ins = [f"a{i}, o{i}, s{i}" for i in range(n_in)]
    params = [f"p{i}" for i in range(n_params)]
    args = ", ".join(["n, shape", "out, oo, so"] + ins + params)
    lines = [
        HEADER + "@cuda.jit(cache=True)",
        f"def kernel({args}):",
        "    g = cuda.gridsize(1)",
        f"    for i in range(cuda.grid(1), n, {UNROLL} * g):",
    ]
    # elements i, i + g, ...: past the end a step re-reads element n - 1 (its loads stay
    # unconditional, issued together) and stores nothing
    for u in range(UNROLL):
        lines.append(f"        j{u} = i" if u == 0 else f"        j{u} = min(i + {u} * g, n - 1)")
        lines += _positions_source(u, n_in)
        lines += [f"        x{u}_{k} = a{k}[q{u}_{k}]" for k in range(n_in)]
    for u in range(UNROLL):
        call = ", ".join([f"x{u}_{k}" for k in range(n_in)] + params)
        lines.append(f"        y{u} = {fname}({call})")
    lines.append("        out[q0] = y0")
    for u in range(1, UNROLL):
        lines += [f"        if i + {u} * g < n:", f"            out[q{u}] = y{u}"]
    return "\n".join(lines)


def scalar_module_body(functions, entry: str, n_in: int, n_params: int) -> str:
    """Device functions from the scalar definitions, plus a grid-stride kernel over ``entry``,
    which is written as ``_entry(x0, ...)`` as on the CPU (``cpu.scalar_module_body``): ops
    and rules of one formula share one module, compiled once."""
    parts = [HEADER]
    for name, fn in functions:
        if name == entry:
            parts.append(DEVICE_FN + codegen.function_source(fn, "_entry", canonical=True))
        else:
            parts.append(DEVICE_FN + codegen.function_source(fn, name))
    parts.append(_elementwise_source("_entry", n_in, n_params))
    return "\n\n\n".join(parts)


_kernels: dict[tuple, object] = {}


def get_elementwise_kernel(key: tuple, np_dtype, build_body):
    """The compiled CUDA kernel for ``key``; ``build_body()`` gives its source."""
    return codegen.cached_kernel(_kernels, key, np_dtype, build_body)


def _operand(a: DeviceArray, shape: tuple):
    nd = len(shape)
    strides = [0] * nd
    off = nd - a.ndim
    for i in range(a.ndim):
        if a.shape[i] != 1:
            strides[off + i] = a.estrides[i]
    return strides


_constants: dict = {}  # (dtype, bytes) -> one-element DeviceArray, only ever read
_MAX_CONSTANTS = 1024


def _host_operand(a) -> DeviceArray:
    """A host operand on the device. A scalar (``x / 2``, a mean's count) is copied once per
    value and kept: a host-to-device copy costs more than the kernel that reads it."""
    a = np.asarray(a)
    if a.ndim:
        return to_device(a)
    key = (a.dtype.str, a.tobytes())
    d = _constants.get(key)
    if d is None:
        if len(_constants) >= _MAX_CONSTANTS:
            _constants.clear()
        d = _constants[key] = to_device(a)
    return d


def _same_contiguous(arrays):
    """The shape all ``arrays`` share, each C-contiguous; None otherwise."""
    shape = arrays[0].shape
    cs = None
    for a in arrays:
        if a.shape != shape:
            return None
        if cs is None:
            cs = _c_strides(shape)
        if a.estrides != cs:
            return None
    return shape


def _new_array(buf, shape: tuple, estrides: tuple, dtype) -> DeviceArray:
    """``DeviceArray(buf, 0, shape, estrides)`` for a clean tuple of ints (no conversions)."""
    a = object.__new__(DeviceArray)
    a.buf, a.offset, a.shape, a.estrides, a.dtype = buf, 0, shape, estrides, dtype
    return a


def run_elementwise(kernel, arrays, out_dtype, params=(), out=None):
    """Run an elementwise kernel over broadcast device ``arrays``."""
    arrays = [a if isinstance(a, DeviceArray) else _host_operand(a) for a in arrays]
    if out is None and arrays and (shape := _same_contiguous(arrays)) is not None:
        # the common case (operands of one shape, each contiguous): one flat run of n items,
        # the launch the general path below makes for it after coalescing, without the work
        n = math.prod(shape)
        dt = np.dtype(out_dtype)
        out = _new_array(_flat_buffer(max(n, 1), dt), shape, _c_strides(shape), dt)
        if n:
            args = [n, (n,), out.buf, 0, (1,)]
            for a in arrays:
                args += [a.buf, a.offset, (1,)]
            _launch(kernel, *launch(n), (*args, *params))
        return out
    shapes = [a.shape for a in arrays]
    if out is None:
        shape = cpu.broadcast_shapes(*shapes)
        strides = cpu.result_strides(arrays, shape)  # (PyTorch's layout, as on the CPU)
        out = empty(shape, out_dtype) if strides is None else empty_strided(shape, strides,
                                                                             out_dtype)
    elif (shape := cpu.broadcast_shapes(out.shape, *shapes)) != out.shape:
        raise RuntimeError(
            f"output with shape {list(out.shape)} doesn't match the broadcast shape {list(shape)}"
        )
    n = math.prod(shape)
    if n == 0:
        return out
    operands = [out] + arrays
    cshape, cstrides = cpu._coalesce(shape, [_operand(a, shape) for a in operands])
    args = [n, tuple(cshape)]
    for a, st in zip(operands, cstrides):
        args += [a.buf, a.offset, tuple(st)]
    _launch(kernel, *launch(n), (*args, *params))
    return out


def _identity(x):
    return x


def identity_kernel(name: str, dtype):
    """``_copy`` (out = its one input) or ``_fill`` (out = its one parameter) for ``dtype``."""
    n_in, n_params = (1, 0) if name == "_copy" else (0, 1)
    return get_elementwise_kernel(
        (name, np.dtype(dtype).name), dtype,
        lambda: scalar_module_body([(name, _identity)], name, n_in, n_params),
    )


def copyto(dst: DeviceArray, src) -> None:
    """``dst[...] = src`` (broadcast, cast to ``dst``'s dtype) on the device.

    A scalar ``src`` is a kernel parameter (no host-to-device copy)."""
    if not isinstance(src, DeviceArray):
        value = np.asarray(src, dtype=dst.dtype)
        if value.ndim == 0:
            run_elementwise(identity_kernel("_fill", dst.dtype), [], dst.dtype, (value[()],),
                            out=dst)
            return
        src = to_device(value)
    run_elementwise(identity_kernel("_copy", dst.dtype), [src], dst.dtype, out=dst)


def clone(a: DeviceArray, dtype=None) -> DeviceArray:
    """A copy of ``a`` (as ``dtype`` if given) laid out as PyTorch's ``clone`` and ``.to()``
    lay it out (as the CPU's)."""
    if a.flags.c_contiguous:
        return a.copy() if dtype is None else a.astype(dtype)
    out = empty_strided(a.shape, layout.clone_strides(a.shape, a.estrides),
                        a.dtype if dtype is None else dtype)
    copyto(out, a)
    return out


def ascontiguousarray(a: DeviceArray, force: bool = False) -> DeviceArray:
    if not force and a.flags.c_contiguous:
        return a
    out = empty(a.shape, a.dtype)
    copyto(out, a)
    return out


def as_strided(a: DeviceArray, shape, strides) -> DeviceArray:
    """A view with byte ``strides`` starting at ``a``'s first element (like NumPy's)."""
    return DeviceArray(a.buf, a.offset, tuple(shape), tuple(s // a.itemsize for s in strides))


def moveaxis(a: DeviceArray, src, dst) -> DeviceArray:
    src = [s % a.ndim for s in (src if isinstance(src, (list, tuple, range)) else [src])]
    dst = [d % a.ndim for d in (dst if isinstance(dst, (list, tuple, range)) else [dst])]
    order = [d for d in range(a.ndim) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return a.transpose(order)


def concatenate(parts, axis=0, out=None) -> DeviceArray:
    if out is None:
        shape = list(parts[0].shape)
        shape[axis] = sum(p.shape[axis] for p in parts)
        out = empty(shape, parts[0].dtype)
    start = 0
    for p in parts:
        n = p.shape[axis]
        copyto(_basic_view(out, (slice(None),) * axis + (slice(start, start + n),)), p)
        start += n
    return out


# ---------------------------------------------------------------- gather / scatter (indexing)


def _kernel(fn, dtype, **called):
    """Kernel ``fn`` of ``kernels_gpu`` compiled for ``dtype``, with the device functions it
    calls by other names: ``combine=kernels_gpu.sum_rows`` puts ``sum_rows`` in its module as
    ``combine`` (the fold a reduction loop calls)."""
    key = (fn, *called.items(), np.dtype(dtype).name)
    k = _kernels.get(key)
    if k is None:
        body = [HEADER, f"THREADS = {REDUCE_THREADS}", f"TILE = {TILE}"]
        for name, f in called.items():
            body.append(DEVICE_FN + codegen.function_source(f, name, type_literals=False))
        body.append("@cuda.jit(cache=True)\n" + codegen.function_source(fn, type_literals=False))
        mod = codegen.load_module(np.dtype(dtype).name, "\n\n\n".join(body))
        k = _kernels[key] = getattr(mod, fn.__name__)
    return k


def _positions(a: DeviceArray, index) -> np.ndarray:
    """Buffer positions of ``a[index]`` for any NumPy index (index math runs on the host)."""
    index = tuple(i.get() if isinstance(i, DeviceArray) else i for i in index)
    return element_offsets(a)[index]


def gather(a: DeviceArray, index) -> DeviceArray:
    pos = np.ascontiguousarray(_positions(a, index))
    out = empty(pos.shape, a.dtype)
    if pos.size:
        k = _kernel(kernels_gpu.gather, a.dtype)
        _launch(k, *launch(pos.size), (a.buf, to_device(pos.reshape(-1)).buf, out.buf, pos.size))
    return out


def scatter(a: DeviceArray, index, value, accumulate: bool) -> None:
    """``a[index] = value`` or, with ``accumulate``, NumPy's ``np.add.at(a, index, value)``."""
    pos = np.ascontiguousarray(_positions(a, index))
    if not pos.size:
        return
    vals = empty(pos.shape, a.dtype)
    copyto(vals, value)
    k = _kernel(kernels_gpu.scatter_add if accumulate else kernels_gpu.scatter, a.dtype)
    _launch(k, *launch(pos.size), (a.buf, to_device(pos.reshape(-1)).buf, vals.buf, pos.size))


# ---------------------------------------------------------------- reductions


def reduce_rows(a: DeviceArray, dims: tuple, fold, init, out_dtype=None) -> DeviceArray:
    """Reduce ``a`` over ``dims`` with ``fold`` (a fold of ``kernels_gpu``: ``sum_rows``,
    ``amax_rows``, ...) starting from ``init``; the result has the kept dims' shape.

    Many short rows: one thread per row. Few long rows: a block per (row, chunk) with a
    shared-memory tree, then a second pass over the chunk results.
    """
    dt = np.dtype(out_dtype or a.dtype)
    rows, kept = as_rows(a, dims)
    if rows.dtype != dt:
        rows = rows.astype(dt)
    r, n = rows.shape
    out = empty((r,), dt)
    if r == 0:
        return out.reshape(kept)
    init = dt.type(init)
    if n < 2 * REDUCE_THREADS or r >= 4 * REDUCE_THREADS:
        _launch(_kernel(kernels_gpu.fold_thread, dt, combine=fold), *launch(r),
                (rows.buf, r, n, out.buf, init))
        return out.reshape(kept)
    chunks = 1
    if r < _max_blocks():
        chunks = max(1, min(_max_blocks() // r, n // (8 * REDUCE_THREADS)))
    clen = (n + chunks - 1) // chunks
    part = empty((r * chunks,), dt) if chunks > 1 else out
    blocks = min(r * chunks, _max_blocks())
    tree = _kernel(kernels_gpu.fold_tree, dt, combine=fold)
    _launch(tree, blocks, REDUCE_THREADS, (rows.buf, r * chunks, n, chunks, clen, part.buf, init))
    if chunks > 1:
        _launch(tree, min(r, _max_blocks()), REDUCE_THREADS,
                (part.buf, r, chunks, 1, chunks, out.buf, init))
    return out.reshape(kept)


def argreduce_rows(a: DeviceArray, dims: tuple, better) -> DeviceArray:
    """Per row of ``a`` over ``dims``, the first index of its extreme by the index fold
    ``better`` (``kernels_gpu.argmax_rows`` or ``argmin_rows``); NaN counts as extreme."""
    rows, kept = as_rows(a, dims)
    r, n = rows.shape
    out = empty((r,), np.int64)
    if r == 0:
        return out.reshape(kept)
    if n < 2 * REDUCE_THREADS or r >= 4 * REDUCE_THREADS:
        k = _kernel(kernels_gpu.argfold_thread, rows.dtype, better=better)
        _launch(k, *launch(r), (rows.buf, r, n, out.buf))
    else:
        k = _kernel(kernels_gpu.argfold_tree, rows.dtype, better=better)
        _launch(k, min(r, _max_blocks()), REDUCE_THREADS, (rows.buf, r, n, out.buf))
    return out.reshape(kept)


def as_rows(a: DeviceArray, dims: tuple):
    """Move ``dims`` last and copy to a contiguous (outer, inner) matrix; also the kept shape."""
    keep = [d for d in range(a.ndim) if d not in dims]
    kept_shape = tuple(a.shape[d] for d in keep)
    inner = math.prod(a.shape[d] for d in dims)
    moved = a.transpose(keep + list(dims))
    return ascontiguousarray(moved).reshape(math.prod(kept_shape), inner), kept_shape


def run_rows(kernel, a: DeviceArray, dim: int) -> DeviceArray:
    """Apply a row kernel (``kernel(x, r, n, out)``, one thread per row, same shape out) of
    ``kernels_gpu`` along ``dim``."""
    order = [d for d in range(a.ndim) if d != dim] + [dim]
    moved = a.transpose(order)
    rows = ascontiguousarray(moved).reshape(-1, a.shape[dim])
    out = empty(rows.shape, rows.dtype)
    r, n = rows.shape
    if r and n:
        _launch(_kernel(kernel, rows.dtype), *launch(r), (rows.buf, r, n, out.buf))
    back = [order.index(d) for d in range(a.ndim)]
    return ascontiguousarray(out.reshape(moved.shape).transpose(back))


# ---------------------------------------------------------------- row kernels


def run_row_kernel(fn, rows: int, work: int, args, dtype) -> None:
    """Run row function ``fn`` (kernels_conv) for every row in ``range(rows)``, one thread
    per row, from the same definition as the CPU's ``cpu.run_row_kernel`` (``work`` is only
    the CPU's hint). Arrays among ``args`` are flat buffers (``flat_view``)."""
    key = ("rows", fn.__name__, np.dtype(dtype).name)
    k = _kernels.get(key)
    if k is None:
        loop = ("@cuda.jit(cache=True)\ndef kernel(rows, {args}):\n"
                "    for i in range(cuda.grid(1), rows, cuda.gridsize(1)):")
        body = HEADER + "\n\n" + cpu.row_kernel_source(fn, loop, DEVICE_FN)
        k = _kernels[key] = codegen.load_module(np.dtype(dtype).name, body).kernel
    if rows:
        _launch(k, *launch(rows), (rows, *args))


def flat_view(a: DeviceArray):
    """(flat buffer, element offset, element strides) of ``a``: its own storage."""
    return a.buf, a.offset, a.estrides


# ---------------------------------------------------------------- matmul


def matmul(x: DeviceArray, y: DeviceArray, out: DeviceArray | None = None) -> DeviceArray:
    """(b, n, k) @ (b, k, m) (or 2-D, or a 1-D operand as in NumPy, or more leading dims, equal
    in both) with a tiled kernel; written into ``out`` (a C-contiguous array of the result's
    shape) if given, as NumPy's."""
    if x.ndim == 1 or y.ndim == 1:
        shape = (x.shape[:-1] if x.ndim > 1 else ()) + (y.shape[-1:] if y.ndim > 1 else ())
        xm = x.reshape(1, x.shape[0]) if x.ndim == 1 else x
        ym = y.reshape(y.shape[0], 1) if y.ndim == 1 else y
        res = matmul(xm, ym).reshape(shape)
        if out is None:
            return res
        copyto(out, res)
        return out
    if x.ndim > 3:  # equal leading dims, as one batch
        shape = x.shape[:-1] + y.shape[-1:]
        return matmul(x.reshape(-1, *x.shape[-2:]), y.reshape(-1, *y.shape[-2:]),
                      None if out is None else out.reshape(-1, *shape[-2:])).reshape(shape)
    two_d = x.ndim == 2
    if two_d:
        x, y = x.reshape(1, *x.shape), y.reshape(1, *y.shape)
    x, y = ascontiguousarray(x), ascontiguousarray(y)
    b, n, k = x.shape
    m = y.shape[2]
    # (the kernel writes its output buffer from element 0)
    res = out.reshape(b, n, m) if out is not None and out.offset == 0 else empty((b, n, m),
                                                                                 x.dtype)
    if res.size:
        if k == 0:
            copyto(res, 0)
        else:
            grid = ((m + TILE - 1) // TILE, (n + TILE - 1) // TILE, b)
            _launch(_kernel(kernels_gpu.matmul_tiled, x.dtype), grid, (TILE, TILE),
                    (x.buf, x.offset, y.buf, y.offset, res.buf, n, k, m))
    if out is not None:
        if res.buf is not out.buf:
            copyto(out, res.reshape(out.shape))
        return out
    return res.reshape(n, m) if two_d else res
