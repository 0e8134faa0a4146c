"""The two fixed costs of a small op on a GPU: launching a kernel and getting a buffer.

Measured on an H100 with numba-cuda 0.30.4 (``docs/CUDA_NOTES.md``): calling a Numba CUDA
dispatcher with an elementwise kernel's arguments (four flat arrays, shape and stride tuples)
costs about 100 us of Python, most of it numba-cuda's marshalling of each argument; a
``cuda.device_array`` (cuMemAlloc, and later cuMemFree) 25-75 us. PyTorch pays neither: its
launches are C++ and its allocator caches freed blocks. This module does both in the same way:

- ``BufferPool``: device buffers given back when their last array dies are kept, by rounded
  size, and handed out again without a driver call (PyTorch's caching allocator, without block
  splitting). Reuse needs no events because every kernel and copy of this backend runs on the
  default stream, in order: a kernel that writes a reused buffer is queued after every kernel
  that read it.
- ``Launcher``: the first launch of a kernel with given argument types goes through the
  dispatcher (which compiles); then the launcher packs the same arguments itself and calls
  ``cuda.core.launch`` directly. It packs them as numba-cuda does (``_Kernel._prepare_args``)
  and checks that on the first launch: where the two differ (another numba-cuda version, an
  argument kind it does not know), that kernel keeps going through the dispatcher.

Neither is used in the CUDA simulator, which has no driver.
"""

from __future__ import annotations

import ctypes
import functools
import threading

# ---------------------------------------------------------------- buffers

SMALL = 1 << 20  # up to 1 MiB, sizes round up to 512 bytes; above, to 2 MiB (as PyTorch)
SMALL_STEP = 512
LARGE_STEP = 2 << 20


def round_size(nbytes: int) -> int:
    if nbytes <= SMALL:
        return max(SMALL_STEP, -(-nbytes // SMALL_STEP) * SMALL_STEP)
    return -(-nbytes // LARGE_STEP) * LARGE_STEP


def _is_out_of_memory(exc: BaseException) -> bool:
    return "OUT_OF_MEMORY" in str(exc) or getattr(exc, "code", None) == 2


class BufferPool:
    """Device buffers kept for reuse, keyed by rounded byte size.

    ``alloc(nbytes)`` gets a new buffer from the driver; ``wrap(base, nbytes, give_back)``
    makes the object handed out, which must call ``give_back()`` when it dies. Both are
    numba-cuda's on a GPU (``gpu._pool``) and plain Python in the unit tests.
    """

    def __init__(self, alloc, wrap, release_all=None):
        self._alloc = alloc
        self._wrap = wrap
        self._release_all = release_all  # after dropping the cache: let the driver free it
        self.free: dict[int, list] = {}
        self.cached_bytes = 0  # held in the free lists
        self.reserved_bytes = 0  # obtained from the driver and not released

    def take(self, nbytes: int):
        size = round_size(nbytes)
        stack = self.free.get(size)
        if stack:
            base = stack.pop()
            self.cached_bytes -= size
        else:
            try:
                base = self._alloc(size)
            except Exception as exc:  # out of memory: give the cache back and try once more
                if not _is_out_of_memory(exc) or not self.cached_bytes:
                    raise
                self.empty_cache()
                base = self._alloc(size)
            self.reserved_bytes += size
        return self._wrap(base, size, functools.partial(self._give_back, size, base))

    def _give_back(self, size: int, base) -> None:
        self.free.setdefault(size, []).append(base)
        self.cached_bytes += size

    def empty_cache(self) -> None:
        """Release every cached buffer to the driver (buffers in use stay)."""
        self.reserved_bytes -= self.cached_bytes
        self.free = {}
        self.cached_bytes = 0
        if self._release_all is not None:
            self._release_all()


# ---------------------------------------------------------------- launches


def _tag(v):
    """What decides a kernel's overload for one argument (all arrays here are flat buffers)."""
    t = type(v)
    if t is tuple:
        return (tuple, len(v))
    dt = getattr(v, "dtype", None)
    return t if dt is None or t in (float, int, bool) else (t, dt)


class Launcher:
    """Launch a ``@cuda.jit`` dispatcher: ``launcher(kernel, griddim, blockdim, args)``.

    ``entries`` maps (kernel, argument tags) to the packing plan, or to None where the
    dispatcher is used (shown by tests and by ``docs/CUDA_NOTES.md``'s measurements).
    """

    def __init__(self):
        self.entries: dict = {}
        self._configs: dict = {}
        self._api = None  # (launch, LaunchConfig, ge_1_0, stream), or False without them
        self._threads = threading.local()  # .bound: this thread has the CUDA context current

    def _numba_api(self):
        if self._api is None:
            try:
                from numba.cuda import dispatcher as D
                from numba.cuda.cudadrv import driver

                self._api = (D.launch, D.LaunchConfig, D.CUDA_CORE_GE_1_0,
                             driver._to_core_stream(0))
            except (ImportError, AttributeError):
                self._api = False
        return self._api

    def __call__(self, kernel, griddim, blockdim, args) -> None:
        key = (kernel, tuple(map(_tag, args)))
        plan = self.entries.get(key, False)
        if plan:
            cufunc, packers = plan
            kargs = []
            for pack, v in zip(packers, args):
                pack(v, kargs)
            if not getattr(self._threads, "bound", False):
                # the dispatcher makes the context current in each new thread; so must we
                from numba.cuda.cudadrv.devices import get_context

                get_context()
                self._threads.bound = True
            launch, _, _, stream = self._api
            launch(stream, self._config(griddim, blockdim), cufunc, *kargs)
            return
        kernel[griddim, blockdim](*args)
        if plan is False:  # first launch with these types: learn its plan
            self.entries[key] = self._plan(kernel, args)

    def _config(self, griddim, blockdim):
        key = (griddim, blockdim)
        cfg = self._configs.get(key)
        if cfg is None:
            _, LaunchConfig, ge_1_0, _ = self._api
            grid = griddim if isinstance(griddim, tuple) else (griddim,)
            block = blockdim if isinstance(blockdim, tuple) else (blockdim,)
            grid = tuple(grid) + (1,) * (3 - len(grid))
            block = tuple(block) + (1,) * (3 - len(block))
            flag = {"is_cooperative": False} if ge_1_0 else {"cooperative_launch": False}
            cfg = self._configs[key] = LaunchConfig(grid=grid, block=block, shmem_size=0, **flag)
        return cfg

    def _plan(self, kernel, args):
        """(cufunc, packers) when packing ``args`` ourselves gives numba-cuda's own arguments."""
        api = self._numba_api()
        if not api:
            return None
        try:
            sig = tuple(kernel.typeof_pyval(a) for a in args)
            ov = kernel.overloads.get(sig)
            if (ov is None or ov.debug or ov.cooperative or ov.extensions
                    or getattr(ov, "launch_config_sensitive", False)):
                return None
            packers = [_packer(t, v) for t, v in zip(sig, args)]
            if any(p is None for p in packers):
                return None
            ours, theirs, retr = [], [], []
            for pack, v in zip(packers, args):
                pack(v, ours)
            for t, v in zip(sig, args):
                ov._prepare_args(t, v, api[3], retr, theirs)
            if list(map(_plain, ours)) != list(map(_plain, theirs)):
                return None
            return ov._codelibrary.get_cufunc().kernel, packers
        except Exception:  # anything unexpected in numba-cuda's internals: use the dispatcher
            return None


def _plain(v):
    return (type(v).__name__, v.value) if isinstance(v, ctypes._SimpleCData) else v


def _packer(ty, val):
    """A function appending ``val``'s kernel arguments for numba type ``ty``, or None."""
    try:
        from numba.cuda import types
    except ImportError:
        from numba.core import types

    if isinstance(ty, types.Array):
        if ty.ndim != 1 or ty.layout != "C" or not getattr(val, "__cuda_memory__", False):
            return None
        isz = val.dtype.itemsize  # (numba's boolean has no bitwidth)

        def pack_array(v, out):
            n = v.size
            out += (0, 0, n, isz, v.device_ctypes_pointer.value or 0, n, isz)

        return pack_array
    if isinstance(ty, types.Integer):
        ct = getattr(ctypes, f"c_{ty}")
        return lambda v, out: out.append(ct(v))
    if ty == types.float64 or ty == types.float32:
        ct = ctypes.c_double if ty == types.float64 else ctypes.c_float
        return lambda v, out: out.append(ct(v))
    if ty == types.boolean:
        return lambda v, out: out.append(v)
    if isinstance(ty, types.UniTuple) and isinstance(ty.dtype, types.Integer):
        ct = getattr(ctypes, f"c_{ty.dtype}")
        return lambda v, out: out.extend(map(ct, v))
    return None
