"""Reductions and row ops: Numba kernels forward (``backend/kernels_reduce.py``), Tensor rules back."""

from __future__ import annotations

import math
import sys
import warnings
from collections import namedtuple

import numpy as np

from .. import backend
from .. import dtypes as D
from .._tensor import PLAIN_SUBCLASSES, LazyTensor, Size, Tensor, _wrap_dim
from ..autograd.grad_mode import _state as _grad_state
from ..autograd.grad_mode import backward_fusion, is_grad_enabled, no_grad
from ..autograd.graph import _wrap, grad_accumulator
from ..backend import cpu
from ..backend import kernels_gpu as KG
from ..backend import kernels_reduce as KR
from ..factory import arange
from . import lazy
from . import movement as M
from .forward import linear, zeros_like
from .elementwise import div_scalar, exp, where
from .elementwise import sqrt as sqrt_op
from .movement import normalize_dims
from .record import needs_grad, record_composite
from .registry import CompositeCtx, attach, composite, public, sum_to
from .table import REGISTRY

_values_indices = {}


def _named(name, fields=("values", "indices")):
    """PyTorch's ``return_types.max`` style named tuple: (values, indices), or ``fields``."""
    cls = _values_indices.get(name)
    if cls is None:
        base = namedtuple(name, fields)

        def __repr__(self):
            parts = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
            return f"numbagrad.return_types.{name}(\n{parts})"

        cls = _values_indices[name] = type(name, (base,), {"__repr__": __repr__, "__slots__": ()})
    return cls


def reduction_dims(dim, ndim) -> tuple:
    """The dims a reduction runs over, as ``normalize_dims`` gives them, with PyTorch's two
    special cases: an empty list means every dim, and a 0-d tensor (which accepts dim 0 and -1,
    range-checked as such) has no dim to reduce over, so its reduction is the identity."""
    if dim is None:
        return tuple(range(ndim))  # (what the two steps below give)
    dims = normalize_dims(dim, ndim)
    if not ndim:
        return ()
    return dims if dims else tuple(range(ndim))


def _keep_shape(shape, dims):
    return tuple([1 if d in dims else n for d, n in enumerate(shape)])


def _finish(out, shape, dims, keepdim):
    return out.reshape(_keep_shape(shape, dims)) if keepdim else out


def unreduce(grad, ctx, dense=False):
    """Broadcast a reduction's gradient back over the reduced dims (the inverse movement).

    ``dense``: the caller computes on the result and gives back only what it computes, so
    where nothing records it a small result may be a new contiguous array: the ops on it
    then take the fast path (an expanded view sends each to the general path's strided
    loops). Without it the result is expand's view, as PyTorch's gradient is."""
    if not _grad_state.enabled and grad._lazy is None and type(grad._data) is np.ndarray:
        # nothing records it: made on the array (a reshape and an expand call cost 6 us of
        # a small backward)
        g = grad._data
        shape = tuple(ctx.shape)
        if not ctx.keepdim and len(ctx.dims) < len(shape):
            g = g.reshape(_keep_shape(shape, ctx.dims))
        if dense and math.prod(shape) < backward_fusion.min_items:
            out = np.empty(shape, g.dtype)
            out[...] = g
            return _wrap(Tensor, out)
        return _wrap(Tensor, _expanded(g, shape))
    if not ctx.keepdim and len(ctx.dims) < len(ctx.shape):
        if _grad_state.enabled:  # recorded: PyTorch's unsqueeze_multiple (UnsqueezeBackward0)
            for d in sorted(ctx.dims):
                grad = M.unsqueeze(grad, d)
        else:
            grad = grad.reshape(_keep_shape(ctx.shape, ctx.dims))
    # (a full reduction's 0-d gradient expands as it is: new dims are added in front)
    return grad.expand(ctx.shape)


def _expanded(a, shape):
    """CPU array ``a`` broadcast to ``shape`` as ``expand`` makes it: a writable view with
    stride 0 along the dims it spreads (``a`` made contiguous first if it is not, so the
    view is made on its buffer)."""
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    lead = len(shape) - a.ndim
    strides = [0] * lead
    for n, have, st in zip(shape[lead:], a.shape, a.strides):
        strides.append(0 if have == 1 and n != 1 else st)
    return cpu.as_strided(a, shape, strides)


def _setup(ctx, x, dim, keepdim):
    ctx.dims = reduction_dims(dim, x.ndim)
    ctx.dim_arg = dim  # as passed: what PyTorch's grad_fn._saved_dim gives back
    ctx.shape = x.shape
    ctx.keepdim = keepdim
    return ctx.dims


def _check_nonempty(x, dims, name, whole=False):
    if whole and x.numel() == 0:
        raise RuntimeError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument."
        )
    for d in dims:
        if x.shape[d] == 0:
            raise IndexError(
                f"{name}(): Expected reduction dim {d} to have non-zero size."
                if x.ndim
                else f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
            )
    if x.ndim == 0 or not dims:
        if x.numel() == 0:
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )


def _require_float(x, name):
    if not x.dtype.is_floating_point:
        raise RuntimeError(
            f"{name}(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {_TYPE[x.dtype.name]}"
        )


_TYPE = D.SCALAR_TYPE


_ALL_DIMS = [tuple(range(n)) for n in range(65)]  # (``reduction_dims(None, n)``, made once)


_DIM_KEYWORDS = frozenset(("dim", "keepdim"))


def end_dims(ndim, args, kwargs):
    """``(dims, keepdim)`` of a reduction's call ``op(x, dim, keepdim=False)`` (each by position
    or by name, nothing else passed) when ``dim``, an int or a non-empty tuple or list of ints
    in range and distinct, names the trailing dims of an ``x`` of ``ndim`` dims (the rows of a
    C-contiguous array are then its own) or its leading ones (its columns); ``dims`` sorted,
    the trailing ones when they are all of ``x``'s. None for any other call (the general path
    takes it, and raises what it raises)."""
    n = len(args)
    if n > 2 or kwargs and (not kwargs.keys() <= _DIM_KEYWORDS or n and "dim" in kwargs
                            or n == 2 and "keepdim" in kwargs):
        return None
    dim = args[0] if n else kwargs.get("dim")
    keepdim = args[1] if n == 2 else kwargs.get("keepdim", False)
    if type(keepdim) is not bool or not ndim:
        return None
    if type(dim) is int:
        if dim < 0:
            dim += ndim
        return ((dim,), keepdim) if dim == ndim - 1 or dim == 0 else None
    if type(dim) is not tuple and type(dim) is not list or not dim:
        return None
    for d in dim:
        if type(d) is not int:
            return None
    dims = sorted([d + ndim if -ndim <= d < 0 else d for d in dim])
    if dims[0] < 0 or dims[-1] >= ndim or dims != list(range(dims[0], dims[0] + len(dims))):
        return None
    return (tuple(dims), keepdim) if dims[0] == 0 or dims[-1] == ndim - 1 else None


def trailing_dims(ndim, args, kwargs):
    """``end_dims`` for a call over trailing dims only."""
    dims = end_dims(ndim, args, kwargs)
    return dims if dims is not None and dims[0][-1] == ndim - 1 else None


def whole(op, kernel, setup=None, dim_node=None):
    """Set ``op.lean`` (``Composite.lean``) to the reduction calls a training step makes on a
    C-contiguous float32/float64 CPU tensor ``x``: ``op(x)`` over every element (its loss),
    and ``op(x, dim, keepdim)`` over trailing dims (``x.sum(-1)``, ``x.mean(1,
    keepdim=True)``), whose rows are the array's own, or over leading dims (``x.sum(0)``, a
    bias's gradient: ``end_dims``), whose columns the kernel's ``columns`` twin reduces. The
    kernels run through their compiled entry points (``cpu.whole_entry``: one row, or one row
    per result; ``cpu.kernel_entry``), on the layouts and below the sizes ``cpu.run_reduce``
    runs them (a whole sum from ``WHOLE_BLOCKS_FROM`` on in blocks), so the values are the
    general path's. When ``x`` needs a gradient the ctx holds what ``op``'s forward and
    ``_setup`` would set (``setup(ctx, x)`` the op's own part; ``dim_node``: the node's name
    when ``dim`` is given, PyTorch's other overload), recorded as ``call_composite`` records
    it. Any other call goes on to the hook ``op`` had (``then``), or to the general path."""
    then = op.lean
    columns = KR.sum_cols if kernel is KR.sum_rows else getattr(kernel, "columns", None)

    def lean(x, *args, **kwargs):
        if type(x) is Tensor or type(x) in PLAIN_SUBCLASSES:
            a = x._data
            if args or kwargs:
                if type(a) is not np.ndarray or not a.flags.carray:
                    return None
                dims = end_dims(a.ndim, args, kwargs)
                if dims is None:
                    return None
                dims, keepdim = dims
            else:
                dims, keepdim = None, False
                if type(a) is np.ndarray and not a.flags.carray:
                    # a permuted dense array: its memory in order (TensorIterator's order too)
                    dense = cpu.dense_order(a)
                    if dense is not None:
                        a = a.transpose(dense[0])
            if type(a) is np.ndarray and a.flags.carray and a.size:
                entry = cpu.whole_entry(kernel, a.dtype)
                if entry is None:
                    return None
                shape = a.shape
                if dims is None:
                    out = np.empty(1, a.dtype)
                    if a.size < cpu.WHOLE_BLOCKS_FROM or kernel is not KR.sum_rows:
                        entry(a.reshape(1, a.size), out)
                    else:  # (run_reduce's blocks, whatever the thread count)
                        part = np.empty(-(-a.size // 16384), a.dtype)
                        cpu.kernel_entry(KR.sum_all_par, a.dtype, a.reshape(1, a.size), out,
                                         part)
                    out = out.reshape(())
                elif a.size >= cpu.WHOLE_BLOCKS_FROM:
                    return None  # (rows or columns over threads: the general path)
                elif dims[-1] == a.ndim - 1:  # trailing dims: one row per result
                    kept = shape[:a.ndim - len(dims)]
                    rows = math.prod(kept)
                    out = np.empty(rows, a.dtype)
                    entry(a.reshape(rows, a.size // rows), out)
                    out = out.reshape(_keep_shape(shape, dims) if keepdim else kept)
                elif columns is not None:  # leading dims: one column per result
                    kept = shape[len(dims):]
                    n = math.prod(kept)
                    if not n:
                        return None
                    out = np.empty(n, a.dtype)
                    cols = a.reshape(a.size // n, n)
                    if columns is KR.sum_cols:  # (its block sums: ``part``)
                        cpu.kernel_entry(columns, a.dtype, cols, out, np.empty(n, a.dtype))
                    else:
                        cpu.kernel_entry(columns, a.dtype, cols, out)
                    out = out.reshape(_keep_shape(shape, dims) if keepdim else kept)
                else:
                    return None
                result = Tensor._make(out)
                if (_grad_state.enabled and (x._requires_grad or x._base is not None)
                        and needs_grad((x,))):
                    ctx = object.__new__(CompositeCtx)  # (as call_composite makes it)
                    ctx.saved = {}
                    ctx.backend = cpu
                    ctx.shape = x._data.shape  # (a tuple: a Size costs 0.2 us)
                    ctx.keepdim = keepdim
                    if dims is None:
                        ctx.dims = _ALL_DIMS[a.ndim]
                    else:
                        ctx.dims = dims
                        ctx.dim_arg = args[0] if args else kwargs["dim"]
                        if dim_node is not None:
                            ctx.node_name = dim_node
                    if setup is not None:
                        setup(ctx, x)
                    record_composite(op, ctx, (x,), (result,))
                return result
            return None
        return None if then is None else then(x, *args, **kwargs)

    op.lean = lean


# ---------------------------------------------------------------- where reductions run
# Each reduction names how it runs on each backend where it is defined: ``cpu=`` one fused
# Numba kernel of backend/kernels_reduce.py; ``cuda=`` one of the functions below, which run
# the folds of backend/kernels_gpu.py (``sum_rows``, ``amax_rows``, ...) through the backend's
# tree kernels, and compose them with the registry's elementwise ops where a reduction is more
# than one fold (mean, var, norm, logsumexp, softmax), all on the device.


def _reduce(a, dims, out_dtype, cpu, cuda, params=()):
    """``a`` reduced over ``dims``: by kernel ``cpu`` on the CPU, by ``cuda(g, a, dims,
    params)`` on CUDA (``g`` the CUDA backend); the result has the kept dims' shape."""
    if type(a) is np.ndarray:
        if not a.size:
            kept = tuple(n for d, n in enumerate(a.shape) if d not in dims)
            if 0 in kept:
                # an empty result has no values to compute (and the column-sum path cannot
                # reshape an empty array to (-1, 0))
                return np.empty(kept, out_dtype)
        return backend.cpu.run_reduce(cpu, a, dims, out_dtype, params)
    return cuda(backend.of(a), a, dims, params)


def _rows(a, dim, cpu, cuda):
    """``a`` through the row kernel declared for its backend (``kernels_reduce`` on the CPU,
    ``kernels_gpu`` on CUDA) along ``dim``: same shape out."""
    if not a.size:  # (no rows to run)
        return a.copy()
    if type(a) is np.ndarray:
        return backend.cpu.run_rows(cpu, a, dim)
    return backend.of(a).run_rows(cuda, a, dim)


def _lowest(dt):
    """The identity of a maximum over ``dt``: its lowest value."""
    dt = np.dtype(dt)
    if dt.kind == "f":
        return -np.inf
    return False if dt.kind == "b" else np.iinfo(dt).min


def _highest(dt):
    """The identity of a minimum over ``dt``: its highest value."""
    dt = np.dtype(dt)
    if dt.kind == "f":
        return np.inf
    return True if dt.kind == "b" else np.iinfo(dt).max


def _t(a):
    return Tensor._make(a)


def _count(a, dims):
    return int(np.prod([a.shape[d] for d in dims])) if dims else 1


def _sum_cuda(g, a, dims, params):
    return g.reduce_rows(a, dims, KG.sum_rows, 0)


def _prod_cuda(g, a, dims, params):
    return g.reduce_rows(a, dims, KG.prod_rows, 1)


def _amax_cuda(g, a, dims, params):
    return g.reduce_rows(a, dims, KG.amax_rows, _lowest(a.dtype))


def _amin_cuda(g, a, dims, params):
    return g.reduce_rows(a, dims, KG.amin_rows, _highest(a.dtype))


def _argmax_cuda(g, a, dims, params):
    return g.argreduce_rows(a, dims, KG.argmax_rows)


def _argmin_cuda(g, a, dims, params):
    return g.argreduce_rows(a, dims, KG.argmin_rows)


def _mean_cuda(g, a, dims, params):
    return (_t(_sum_cuda(g, a, dims, params)) / _count(a, dims))._data


def _var_cuda(g, a, dims, params):
    with no_grad():
        x = _t(a)
        centered = x - _t(_sum_cuda(g, a, dims, ())).reshape(_keep_shape(a.shape, dims)) / (
            _count(a, dims)
        )
        ss = _sum_cuda(g, (centered * centered)._data, dims, ())
        return (_t(ss) / max(_count(a, dims) - params[0], 0))._data


def _norm2_cuda(g, a, dims, params):
    return _t(_sum_cuda(g, (_t(a) * _t(a))._data, dims, ())).sqrt()._data


def _logsumexp_cuda(g, a, dims, params):
    with no_grad():
        m = _t(_amax_cuda(g, a, dims, ()))
        # an infinite maximum cannot be subtracted; shift by 0 and let inf/-inf through
        m = where(m.abs() == np.inf, 0, m)
        s = _t(_sum_cuda(g, (exp(_t(a) - m.reshape(_keep_shape(a.shape, dims))))._data, dims,
                         ()))
        return (s.log() + m)._data


def _softmax_parts(a, dim):
    """(x - max, exp(x - max), sum of exp(x - max)) along ``dim`` of device array ``a``."""
    g = backend.of(a)
    with no_grad():
        x = _t(a)
        m = _t(_amax_cuda(g, a, (dim,), ()))
        shifted = x - m.unsqueeze(dim)
        e = exp(shifted)
        s = _t(_sum_cuda(g, e._data, (dim,), ())).unsqueeze(dim)
        return shifted, e, s


def _softmax_cuda(a, dim):
    _, e, s = _softmax_parts(a, dim)
    return (e / s)._data


def _log_softmax_cuda(a, dim):
    shifted, _, s = _softmax_parts(a, dim)
    return (shifted - s.log())._data


# ---------------------------------------------------------------- sum / mean / prod


def no_integral_node(ctx, dtype):
    """PyTorch's error for a reduction or scan asked for an integral ``dtype`` on a call it
    records (an input requires grad): its output, of that dtype, cannot require grad."""
    if dtype is not None and ctx.recorded:
        dt = D.as_dtype(dtype)
        if not dt.is_floating_point:
            raise RuntimeError(f"Autograd not support dtype: {_TYPE[dt.name]}")


@composite("sum", node="SumBackward0", variants="function method")
def sum(ctx, x, dim=None, keepdim=False, dtype=None):
    no_integral_node(ctx, dtype)
    dims = _setup(ctx, x, dim, keepdim)
    ctx.node_name = "SumBackward0" if dim is None else "SumBackward1"
    e = x._lazy
    if e is not None and dtype is None and len(dims) == x.ndim:
        # a whole sum of an unevaluated elementwise result: one pass over its operands
        if not keepdim and is_grad_enabled() and x.requires_grad:
            # a loss: left to the backward pass, which adds it up while it reads the same
            # operands for the gradients (reading it first sums it on its own)
            later = lazy.later_total(e, lambda: _reduce(e.evaluate(), dims, e.np_dtype,
                                                        cpu=KR.sum_rows, cuda=_sum_cuda))
            if later is not None:
                ctx.total = later
                return later
        out = lazy.total(e)
        if out is not None:
            return _finish(out, x.shape, dims, keepdim)
    a = x._data
    if dtype is not None:
        a = a.astype(D.as_dtype(dtype).np)
    elif a.dtype.kind == "b" and type(a) is np.ndarray:
        # a bool sum is a count: no int64 copy of the whole array (the max/min backward
        # counts a mask of its input's size)
        # (axis=None is NumPy's fast count; with an axis it sums a converted copy)
        whole = len(dims) == a.ndim
        counts = np.asarray(np.count_nonzero(a, axis=None if whole else dims), dtype=np.int64)
        return _finish(counts, x.shape, dims, keepdim)
    elif a.dtype.kind != "f":
        a = a.astype(np.int64)  # integer and bool sums are int64, as in PyTorch
    out = _reduce(a, dims, a.dtype, cpu=KR.sum_rows, cuda=_sum_cuda)
    return _finish(out, x._data.shape, dims, keepdim)


sum.defjvp(linear(sum))


@sum.defvjp
def sum_vjp(ctx, grad):
    return unreduce(grad, ctx)


sum.fuses_backward = True  # ops/fusion.py: a whole-tensor sum's gradient, read as a scalar


def _sum_lean(x, *args, **kwargs):
    """``x.sum()`` of a lazy tensor that needs a gradient (``loss = f(x).sum()``, once a
    step): the ``Total``, ctx and SumBackward0 that ``sum`` through ``Composite.__call__``
    makes, written out. None for anything else."""
    if args or kwargs or type(x) is not LazyTensor or not x._requires_grad or x._base is not None:
        return None
    e = x._lazy
    if not _grad_state.enabled:
        return None
    dims = tuple(range(len(e.shape)))
    later = lazy.later_total(e, lambda: _reduce(e.evaluate(), dims, e.np_dtype,
                                                cpu=KR.sum_rows, cuda=_sum_cuda))
    if later is None:
        return None
    ctx = object.__new__(CompositeCtx)  # (what ``sum`` and ``Composite.__call__`` set)
    ctx.saved = {}
    ctx.backend = cpu
    ctx.dims = dims
    ctx.shape = shape = Size(e.shape)
    ctx.keepdim = False
    ctx.node_name = "SumBackward0"
    ctx.total = later
    dtype = D.from_numpy_dtype(e.np_dtype)
    ctx.input_shapes, ctx.input_dtypes = [shape], [dtype]
    out = object.__new__(LazyTensor)
    out._lazy = later
    out._version_cell = [0]
    fn = x._grad_fn
    edge = (fn, x._output_nr) if fn is not None else (grad_accumulator(x), 0)
    attach(sum, ctx, None, (out,), "SumBackward0", edges=(edge,))
    return out


sum.lean = _sum_lean
whole(sum, KR.sum_rows, dim_node="SumBackward1")


@composite("nansum", variants="function method")
def nansum(ctx, x, dim=None, keepdim=False, dtype=None):
    """``sum`` with NaN counted as zero."""
    ctx.save(x=x)
    clean = where(x != x, 0, x.detach()) if x.dtype.is_floating_point else x.detach()
    out = sum.forward(ctx, clean, dim, keepdim, dtype)
    ctx.node_name = "NansumBackward0"  # (sum's forward named its own)
    return out


@nansum.defvjp
def nansum_vjp(ctx, grad):
    x = ctx["x"]
    if grad.dtype is not x.dtype and x.dtype.is_floating_point:
        grad = grad.to(x.dtype)  # (PyTorch's nansum_backward takes the gradient cast first)
    return unreduce(grad, ctx, dense=True) * (x == x)


@public("function method")
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """``mean`` of the elements that are not NaN (NaN where there are none): PyTorch's
    ``nansum / count``."""
    if not input.dtype.is_floating_point:
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {_TYPE[input.dtype.name]}")
    count = sum(input == input, dim, keepdim)
    return nansum(input, dim, keepdim, dtype) / count


@composite("mean", variants="function method")
def mean(ctx, x, dim=None, keepdim=False, dtype=None):
    if dtype is not None:
        x = x.to(dtype)
    _require_float(x, "mean")
    dims = _setup(ctx, x, dim, keepdim)
    if dim is not None:
        ctx.node_name = "MeanBackward1"  # PyTorch's mean.dim overload
    _count_reduced(ctx, x)
    e = x._lazy
    if e is not None and len(dims) == x.ndim and ctx.n:
        # the whole mean of an unevaluated elementwise result (a loss's squared differences):
        # its sum in one pass over the operands, nothing written (as ``sum``'s)
        total = lazy.total(e)
        if total is not None:
            total /= ctx.n  # (a new 0-d array: in place keeps it an array of its dtype)
            return _finish(total, x.shape, dims, keepdim)
    out = _reduce(x._data, dims, x._data.dtype, cpu=KR.mean_rows, cuda=_mean_cuda)
    return _finish(out, x.shape, dims, keepdim)


def _count_reduced(ctx, x):
    """``ctx.n``: how many elements each result of the reduction over ``ctx.dims`` adds up."""
    shape = x._data.shape if x._lazy is None else x._lazy.shape  # (a lazy x: not evaluated)
    ctx.n = math.prod([shape[d] for d in ctx.dims])


whole(mean, KR.mean_rows, _count_reduced, "MeanBackward1")


mean.defjvp(linear(mean))


@mean.defvjp
def mean_vjp(ctx, grad):
    if _grad_state.enabled:  # recorded: PyTorch's order (DivBackward1 on top)
        return div_scalar(unreduce(grad, ctx, dense=True), ctx.n)
    # divide before expanding: one small division, not one per element
    return unreduce(grad / ctx.n, ctx)


@composite("prod", node="ProdBackward0", variants="function method")
def prod(ctx, x, dim=None, keepdim=False, dtype=None):
    if isinstance(dim, (list, tuple)):
        raise TypeError("prod(): argument 'dim' must be int, not tuple")
    no_integral_node(ctx, dtype)
    dims = _setup(ctx, x, dim, keepdim)
    ctx.node_name = "ProdBackward0" if dim is None else "ProdBackward1"
    if dtype is not None:  # (cast inside the op, as PyTorch's: its node reads x itself)
        a = x._data.astype(D.as_dtype(dtype).np)
    else:
        a = x._data if x.dtype.is_floating_point else x._data.astype(np.int64)
    ctx.dtype = dtype and D.as_dtype(dtype)
    out = _reduce(a, dims, a.dtype, cpu=KR.prod_rows, cuda=_prod_cuda)
    ctx.save(x=x)
    ctx.save_outputs = {"result": 0}
    return _finish(out, x.shape, dims, keepdim)


@prod.defvjp
def prod_vjp(ctx, grad):
    x, result = ctx["x"], ctx["result"]
    if getattr(ctx, "dtype", None) is not None and x.dtype is not ctx.dtype:
        x = x.to(ctx.dtype)  # (PyTorch's prod_backward reads self in the result's dtype)
    if not ctx.dims:  # a 0-d tensor: its product is itself (the gradient passed on as it is)
        return grad if tuple(grad.shape) == tuple(ctx.shape) else grad.reshape(ctx.shape)
    with no_grad():
        zeros = x == 0
        has_zero = bool(zeros.any())
    if not has_zero:
        return unreduce(grad, ctx, dense=True) * (unreduce(result, ctx, dense=True) / x)
    if all(x.shape[d] == 1 for d in ctx.dims):
        return unreduce(grad, ctx)  # (PyTorch's prod_safe_zeros_backward over a dim of 1)
    # a whole product with two zeros or more has gradient 0 everywhere, NaN and inf elements
    # notwithstanding (PyTorch's rule for prod(); prod(dim), and create_graph, multiply the
    # other elements out as below)
    if _grad_state.enabled:  # create_graph: the products of the others as a function of x
        g = unreduce(grad, ctx, dense=True) * _prod_others(x, ctx.dims)
        # (PyTorch's rule for a whole product ends in a view_as(input): ViewBackward0)
        return g if ctx.dim_arg is not None else M.view(g, tuple(x.shape))
    if ctx.dim_arg is None and int(zeros.sum()) >= 2:
        return Tensor._make(backend.of(x._data).zeros(x.shape, x._data.dtype))
    # with zeros, divide-free: the product of all the other elements of each slice
    be = backend.of(x._data)
    rows, _ = be.as_rows(x._data, ctx.dims)
    others = _rows(rows, 1, cpu=KR.prod_others_rows, cuda=KG.prod_others_rows)
    keep = [d for d in range(x.ndim) if d not in ctx.dims]
    moved_shape = [x.shape[d] for d in keep + list(ctx.dims)]
    others = be.moveaxis(others.reshape(moved_shape), range(len(keep)), keep) if keep else (
        others.reshape(x.shape)
    )
    return unreduce(grad, ctx, dense=True) * Tensor._make(be.ascontiguousarray(others))


def _prod_others(x, dims):
    """For each element, the product of the other elements of its slice, as Tensor ops
    (prefix times suffix products, no division), so that second derivatives through a prod
    over zeros are right. Its cost grows with the slice length: for create_graph only."""
    if len(dims) != 1:  # a full product: one slice
        return _prod_others(x.reshape(-1), (0,)).reshape(x.shape)
    d = dims[0]
    n = x.shape[d]
    parts = [M.select(x, d, k) for k in range(n)]
    prefix, acc = [], None
    for p in parts:
        prefix.append(acc)
        acc = p if acc is None else acc * p
    suffix, acc = [None] * n, None
    for k in range(n - 1, -1, -1):
        suffix[k] = acc
        acc = parts[k] if acc is None else acc * parts[k]
    others = []
    for pre, suf, p in zip(prefix, suffix, parts):
        if pre is None and suf is None:
            others.append(p * 0 + 1)
        else:
            others.append(pre if suf is None else suf if pre is None else pre * suf)
    return M.stack(others, d)


# ---------------------------------------------------------------- max / min family


def _even_backward(grad, ctx, x, result):
    # ties share the gradient evenly, as PyTorch's amax/amin backward does: one bool pass,
    # one count, one fused multiply (not four full-size float passes). A slice whose result
    # is NaN matches nowhere (NaN != NaN): its count is 0 and PyTorch's ``share * mask``
    # makes the whole slice NaN (inf * 0), which a select by the mask would not
    mask = x == unreduce(result, ctx, dense=True)
    count = mask.sum(dim=ctx.dims, keepdim=True)
    share = (grad if ctx.keepdim else grad.reshape(_keep_shape(ctx.shape, ctx.dims))) / count
    if _unsqueezes_0d(ctx):
        return share.reshape(1) * mask  # (summed by the caller: _sum_to_0d)
    return share.expand(ctx.shape) * mask


def _unsqueezes_0d(ctx) -> bool:
    """Whether PyTorch's restore_reduced_dims makes the recorded gradient of a 0-d input 1-d
    (a dim named, not kept), which its engine then sums to 0-d (SumBackward0)."""
    return (not ctx.shape and not ctx.keepdim and ctx.dim_arg not in (None, (), [])
            and _grad_state.enabled)


def _sum_to_0d(ctx, g):
    return g.sum() if _unsqueezes_0d(ctx) else g


def _extreme(ctx, x, dim, keepdim, name, cpu, cuda):
    dims = _setup(ctx, x, dim, keepdim)
    if dim is not None and x.numel() == 0:
        # amax and amin name the first empty dim as it was given (-1, not 1)
        for d in dim if isinstance(dim, (list, tuple)) else (dim,):
            if x.shape[d] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    _check_nonempty(x, dims, name, whole=dim is None)
    _save_input_result(ctx, x)
    out = _reduce(x._data, dims, x._data.dtype, cpu, cuda)
    return _finish(out, x.shape, dims, keepdim)


def _save_input_result(ctx, x):
    ctx.save(x=x)
    ctx.save_outputs = {"result": 0}


@composite("amax", variants="function method")
def amax(ctx, x, dim=(), keepdim=False):
    return _extreme(ctx, x, None if dim == () else dim, keepdim, "amax",
                    cpu=KR.amax_rows, cuda=_amax_cuda)


@amax.defvjp
def amax_vjp(ctx, grad):
    return _sum_to_0d(ctx, _even_backward(grad, ctx, ctx["x"], ctx["result"]))

whole(amax, KR.amax_rows, _save_input_result)


@composite("amin", variants="function method")
def amin(ctx, x, dim=(), keepdim=False):
    return _extreme(ctx, x, None if dim == () else dim, keepdim, "amin",
                    cpu=KR.amin_rows, cuda=_amin_cuda)


@amin.defvjp
def amin_vjp(ctx, grad):
    return _sum_to_0d(ctx, _even_backward(grad, ctx, ctx["x"], ctx["result"]))

whole(amin, KR.amin_rows, _save_input_result)


def _with_indices(ctx, x, dim, keepdim, name, cpu, cuda):
    """``cpu``: the kernel of the values and indices in one pass (``kernels_reduce``'s
    ``max_rows_indices``); ``cuda``: the (values, indices) reductions on CUDA."""
    dims = _setup(ctx, x, dim, keepdim)
    _check_nonempty(x, dims, name)
    a = x._data
    if type(a) is np.ndarray:
        # (the indices are the kernel's second output, passed as its parameter)
        indices = np.empty(math.prod([n for d, n in enumerate(a.shape) if d not in dims]),
                           np.int64)
        values = _reduce(a, dims, a.dtype, cpu, None, (indices,))
        indices = indices.reshape(values.shape)
    else:
        values = _reduce(a, dims, a.dtype, None, cuda[0])
        indices = _reduce(a, dims, np.int64, None, cuda[1])
    ctx.node_name = name.capitalize() + "Backward0"
    ctx.non_differentiable = (1,)
    ctx.wrap = lambda outs: _named(f"{name}")(*outs)
    ctx.save_outputs = {"indices": 1}
    return _finish(values, x.shape, dims, keepdim), _finish(indices, x.shape, dims, keepdim)


def _index_backward(ctx, grad):
    # the gradient goes to the one position each index points at
    grad = grad[0]
    idx = ctx["indices"]  # (checked against in-place changes, as PyTorch does, also for 0-d)
    recorded = _grad_state.enabled
    if not ctx.dims:  # a 0-d input: its one element is the max
        # (under create_graph PyTorch scatters it into zeros all the same: ScatterBackward0)
        return _op("scatter")(_zeros(ctx, grad), 0, idx.detach(), grad) if recorded else grad
    (d,) = ctx.dims
    g, i = grad._data, idx._data
    if not recorded and type(g) is np.ndarray and type(i) is np.ndarray:
        # one scatter into zeros, as PyTorch's (no positions, mask and select of the input's
        # size): the input viewed as (before d, along d, after d), the gradient and the
        # indices as (before d, after d)
        shape = tuple(ctx.shape)
        out = np.zeros(shape, g.dtype)
        before = math.prod(shape[:d])
        after = math.prod(shape[d + 1:])
        if out.size:
            cpu.get_reduce_kernel(KR.put_along_dim, g.dtype)(
                out.reshape(before, shape[d], after),
                np.ascontiguousarray(g).reshape(before, after),
                np.ascontiguousarray(i).reshape(before, after))
        return Tensor._make(out)
    if not ctx.keepdim:
        grad = grad.unsqueeze(d)
        idx = idx.unsqueeze(d)
    if recorded:  # PyTorch's value_selecting_reduction_backward: ScatterBackward0
        return _op("scatter")(_zeros(ctx, grad), d, idx.detach(), grad)
    shape = [1] * len(ctx.shape)
    shape[d] = ctx.shape[d]
    positions = arange(ctx.shape[d], device=grad.device).reshape(shape)
    return where(positions == idx, grad, 0)


@composite("max_dim", node="MaxBackward0")
def max_dim(ctx, x, dim, keepdim=False):
    return _with_indices(ctx, x, dim, keepdim, "max", cpu=KR.max_rows_indices,
                         cuda=(_amax_cuda, _argmax_cuda))


max_dim.defvjp(_index_backward)


@composite("min_dim", node="MinBackward0")
def min_dim(ctx, x, dim, keepdim=False):
    return _with_indices(ctx, x, dim, keepdim, "min", cpu=KR.min_rows_indices,
                         cuda=(_amin_cuda, _argmin_cuda))


min_dim.defvjp(_index_backward)


@composite("max_all", node="MaxBackward1")
def max_all(ctx, x):
    return _extreme(ctx, x, None, False, "max", cpu=KR.amax_rows, cuda=_amax_cuda)


def _all_backward(ctx, grad):
    # PyTorch's evenly_distribute_backward: the gradient is shared by the elements equal to
    # the result, or by the NaNs when the result is NaN
    x, result = ctx["x"], ctx["result"]
    with no_grad():
        nan = bool(result != result)
    mask = x != x if nan else x == result
    if _grad_state.enabled:  # recorded: PyTorch's zeros.masked_fill_(mask, grad / count)
        return _op("masked_fill")(_zeros(ctx, grad), mask, grad / mask.sum())
    return where(mask, grad / mask.sum(), 0)


def _zeros(ctx, grad):
    """Zeros of the reduced input's shape, as ``grad``: what PyTorch's formulas scatter or
    fill into."""
    return Tensor._make(ctx.backend.zeros(tuple(ctx.input_shapes[0]), grad._data.dtype))


def _op(name):
    # (ops of indexing.py, which imports this module: found in the op table, not imported)
    return REGISTRY[name]


max_all.defvjp(_all_backward)

whole(max_all, KR.amax_rows, _save_input_result)


@composite("min_all", node="MinBackward1")
def min_all(ctx, x):
    return _extreme(ctx, x, None, False, "min", cpu=KR.amin_rows, cuda=_amin_cuda)


min_all.defvjp(_all_backward)

whole(min_all, KR.amin_rows, _save_input_result)


@composite("aminmax", node="AminmaxBackward0", variants="function method")
def aminmax(ctx, x, *, dim=None, keepdim=False):
    """(min, max) of ``x`` (along ``dim``) in one call, PyTorch's ``return_types.aminmax``."""
    if dim is None and x.numel() == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                           "operation has no identity.")
    dims = _setup(ctx, x, dim, keepdim)
    for d in dims:
        if x.shape[d] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
    ctx.save(x=x)
    ctx.save_outputs = {"min": 0, "max": 1}
    ctx.wrap = lambda outs: _named("aminmax", ("min", "max"))(*outs)
    a = x._data
    low = _reduce(a, dims, a.dtype, KR.amin_rows, _amin_cuda)
    high = _reduce(a, dims, a.dtype, KR.amax_rows, _amax_cuda)
    return _finish(low, x.shape, dims, keepdim), _finish(high, x.shape, dims, keepdim)


@aminmax.defvjp
def aminmax_vjp(ctx, grads):
    # (each shared evenly by the elements equal to it, as amin's and amax's)
    x = ctx["x"]
    g_min, g_max = grads
    return _sum_to_0d(ctx, _even_backward(g_min, ctx, x, ctx["min"])
                      + _even_backward(g_max, ctx, x, ctx["max"]))


def _refuse_bool_arg(x, name):
    if x.dtype is D.bool_:
        raise RuntimeError(f"{name}(): does not support bool input")


@composite("argmax", variants="function method")
def argmax(ctx, x, dim=None, keepdim=False):
    _refuse_bool_arg(x, "argmax")
    dims = reduction_dims(dim, x.ndim)
    _check_nonempty(x, dims, "argmax")
    a = x._data if dim is not None else x._data.reshape(-1)
    dims = dims if dim is not None else (0,)
    out = _reduce(a, dims, np.int64, cpu=KR.argmax_rows, cuda=_argmax_cuda)
    return _finish(out, x.shape, dims, keepdim) if dim is not None else (
        out.reshape((1,) * x.ndim) if keepdim else out
    )


@composite("argmin", variants="function method")
def argmin(ctx, x, dim=None, keepdim=False):
    _refuse_bool_arg(x, "argmin")
    dims = reduction_dims(dim, x.ndim)
    _check_nonempty(x, dims, "argmin")
    a = x._data if dim is not None else x._data.reshape(-1)
    dims = dims if dim is not None else (0,)
    out = _reduce(a, dims, np.int64, cpu=KR.argmin_rows, cuda=_argmin_cuda)
    return _finish(out, x.shape, dims, keepdim) if dim is not None else (
        out.reshape((1,) * x.ndim) if keepdim else out
    )


# ---------------------------------------------------------------- var / std / norm / logsumexp


def _var_setup(ctx, x, dim, correction, keepdim, name):
    if not x.dtype.is_floating_point:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = _setup(ctx, x, dim, keepdim)
    _count_reduced(ctx, x)
    ctx.correction = correction
    # PyTorch's backward takes the whole-tensor formula for dim=None and for a 0-d input;
    # with an explicit empty dim list it counts the reduced elements as 1 (the product over
    # no dims) while the forward reduces everything: its gradient is then 2 / (1 - correction)
    ctx.full = dim is None or x.ndim == 0
    ctx.n_grad = 1 if isinstance(dim, (list, tuple)) and not dim else ctx.n
    # (PyTorch's count here is input numel / output numel: 0 for an empty input)
    if (ctx.n if x.numel() else 0) - correction <= 0:
        warnings.warn(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "reduction factor (input numel divided by output numel).",
            UserWarning,
            stacklevel=_outside_stacklevel(),
        )
    ctx.save(x=x)
    ctx.save_outputs = {"result": 0}
    c = x._data.dtype.type(correction)
    return _finish(
        _reduce(x._data, dims, x._data.dtype, cpu=KR.var_rows, cuda=_var_cuda, params=(c,)),
        x.shape, dims, keepdim
    )


def _outside_stacklevel():
    """The ``stacklevel`` that points a warning at the first caller outside numbagrad (how
    many numbagrad frames lie between depends on how the op was called)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith("numbagrad"):
        frame, level = frame.f_back, level + 1
    return level


@composite("var")
def var(ctx, x, dim=None, correction=1, keepdim=False):
    return _var_setup(ctx, x, dim, correction, keepdim, "var")


@var.defjvp
def var_jvp(result, tangents, x, dim=None, correction=1, keepdim=False):
    t = tangents[0]
    dims = () if dim is None else dim
    dof = x.numel() // max(result.numel(), 1) - correction
    centred = (x - x.mean(dim=dims, keepdim=True)) * (t - t.mean(dim=dims, keepdim=True))
    return centred.sum(dim=dims, keepdim=keepdim) * (2.0 / dof if dof > 0 else math.inf)


@var.defvjp
def var_vjp(ctx, grad):
    # PyTorch's var_backward, inf and NaN included: grad * 2 / (n - correction) * (x - mean)
    x = ctx["x"]
    dof = ctx.n_grad - ctx.correction
    if ctx.full:
        if dof <= 0:
            # 2 / dof is infinite: NaN where x is the mean (inf * 0), inf elsewhere
            return grad * where(x == x.mean(), math.nan, math.inf)
        # (the scale goes on the small gradient first, as in PyTorch: one full pass less)
        return grad * (2.0 / dof) * (x - x.mean())
    scale = 2.0 / dof if dof else math.inf  # (C++'s 2.0 / 0.0)
    return unreduce(grad * scale, ctx, dense=True) * (x - x.mean(dim=ctx.dims, keepdim=True))


@composite("std")
def std(ctx, x, dim=None, correction=1, keepdim=False):
    out = _var_setup(ctx, x, dim, correction, keepdim, "std")
    return _sqrt_kernel(out)


def _sqrt_kernel(a):
    be = backend.of(a)
    return be.run_elementwise(sqrt_op.kernel(D.from_numpy_dtype(a.dtype), be), [a], a.dtype)


@std.defjvp
def std_jvp(result, tangents, x, dim=None, correction=1, keepdim=False):
    dvar = var_jvp(result, tangents, x, dim, correction, keepdim)
    return where(result == 0, 0, dvar / (2 * result))


@std.defvjp
def std_vjp(ctx, grad):
    # d std = d var / (2 std); where the std is 0 (a constant slice) PyTorch takes 0, not
    # 0 / 0, and goes on with var's backward
    result = ctx["result"]
    return var_vjp(ctx, where(result == 0, 0, grad / (2 * result)))


def var_args(dim, unbiased, correction):
    """(dim, correction) from PyTorch's spellings: ``unbiased`` (also in ``dim``'s place, the
    legacy positional form) or ``correction``."""
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    if correction is None:
        correction = 1 if unbiased in (None, True) else 0
    return dim, correction


def _mean_of_var(ctx, x, dims, keepdim):
    out = _reduce(x._data, dims, x._data.dtype, cpu=KR.mean_rows, cuda=_mean_cuda)
    return _finish(out, x.shape, dims, keepdim)


@composite("var_mean")
def var_mean_op(ctx, x, dim=None, correction=1, keepdim=False):
    v = _var_setup(ctx, x, dim, correction, keepdim, "var_mean")
    return v, _mean_of_var(ctx, x, ctx.dims, keepdim)


def _moments_vjp(spread_vjp, ctx, grads):
    """var_mean / std_mean's backward: each output's formula only where that output got a
    gradient (PyTorch's var_mean_backward skips an undefined one, so the mean's alone is
    ``grad / n``, which does not depend on ``x``: not recorded as its function)"""
    gv, gm = grads
    ctx["x"]  # noqa: B018 (PyTorch's node unpacks its saved input whichever output it serves)
    parts = []
    if gv is not None:
        parts.append(spread_vjp(ctx, gv))
    if gm is not None:  # (PyTorch's mean_backward: expanded, then divided: DivBackward1)
        parts.append(div_scalar(unreduce(gm, ctx, dense=True), ctx.n))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else parts[0] + parts[1]


@var_mean_op.defvjp
def var_mean_vjp(ctx, grads):
    return _moments_vjp(var_vjp, ctx, grads)


var_mean_op.keeps_missing_grads = True  # (None for an output without a gradient)


@composite("std_mean")
def std_mean_op(ctx, x, dim=None, correction=1, keepdim=False):
    v = _var_setup(ctx, x, dim, correction, keepdim, "std_mean")
    return _sqrt_kernel(v), _mean_of_var(ctx, x, ctx.dims, keepdim)


@std_mean_op.defvjp
def std_mean_vjp(ctx, grads):
    ctx["result"]  # noqa: B018 (PyTorch's StdMeanBackward0 unpacks the saved std, too)
    return _moments_vjp(std_vjp, ctx, grads)


std_mean_op.keeps_missing_grads = True


@public("function")
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(variance, mean) of ``input`` (along ``dim``), one node."""
    dim, correction = var_args(dim, unbiased, correction)
    return var_mean_op(input, dim, correction, keepdim)


@public("function")
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(standard deviation, mean) of ``input`` (along ``dim``), one node."""
    dim, correction = var_args(dim, unbiased, correction)
    return std_mean_op(input, dim, correction, keepdim)


def _norm_input(x, dtype):
    """``x`` as a vector norm computes it: in ``dtype`` when given (``norm(x, dtype=...)``),
    cast inside the op as PyTorch's ``linalg_vector_norm`` does, so no ToCopyBackward0 is
    recorded; PyTorch's checks, in its order. The op saves ``x`` itself: its gradient rule,
    in ``x``'s dtype and the result's, promotes to the result's, and the engine casts the
    gradient back to ``x``'s dtype."""
    if not x.dtype.is_floating_point:
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            + _TYPE[x.dtype.name]
        )
    if dtype is None or dtype is x.dtype:
        return x
    dtype = D.as_dtype(dtype)
    if not dtype.is_floating_point:
        raise RuntimeError("linalg.vector_norm: dtype should be floating point or complex, but "
                           f"got {_TYPE.get(dtype.name, dtype.name)}")
    if D.promote(x.dtype, dtype) is not dtype:
        raise RuntimeError(
            f"linalg.vector_norm: the dtype of the input ({_TYPE.get(x.dtype.name)}) should be "
            "convertible without narrowing to the specified dtype "
            f"({_TYPE.get(dtype.name, dtype.name)})")
    with no_grad():
        return M.to_dtype(x, dtype)


@composite("norm", node="LinalgVectorNormBackward0")
def norm(ctx, x, dim=None, keepdim=False, dtype=None):
    x, source = _norm_input(x, dtype), x
    if isinstance(dim, (list, tuple)) and len(dim) > 2:
        # PyTorch's norm takes a pair of dims as a matrix norm, and no more
        raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got "
                           + " ".join(str(d) for d in dim))
    dims = _setup(ctx, x, dim, keepdim)
    ctx.save(x=source)
    ctx.save_outputs = {"result": 0}
    out = _reduce(x._data, dims, x._data.dtype, cpu=KR.norm2_rows, cuda=_norm2_cuda)
    return _finish(out, x.shape, dims, keepdim)


@norm.defjvp
def norm_jvp(result, tangents, x, dim=None, keepdim=False, dtype=None):
    dims = () if dim is None else dim
    return where(result == 0, 0, (x * tangents[0]).sum(dim=dims, keepdim=keepdim) / result)


@norm.defvjp
def norm_vjp(ctx, grad):
    # at a zero vector the subgradient 0 is taken, as in PyTorch
    # (PyTorch's order: grad times the masked x / norm, so an infinite grad at a zero norm
    # gives NaN, a negative one -0)
    x, result = ctx["x"], unreduce(ctx["result"], ctx, dense=True)
    return unreduce(grad, ctx, dense=True) * where(result == 0, 0, x / result)


@composite("vector_norm", node="LinalgVectorNormBackward0")
def vector_norm(ctx, x, ord=2, dim=None, keepdim=False, dtype=None):
    """``linalg.vector_norm`` of any order: ``sum(|x|**ord) ** (1/ord)``, the largest or
    smallest ``|x|`` for +-inf, the count of nonzeros for 0 (``norm`` is the 2-norm's kernel);
    computed in ``dtype`` when given (``_norm_input``)."""
    x, source = _norm_input(x, dtype), x
    dims = _setup(ctx, x, dim, keepdim)
    if math.isinf(ord) and x.numel() == 0 and (
            not x.ndim or any(x.shape[d] == 0 for d in (dims or range(x.ndim)))):
        raise RuntimeError("linalg.vector_norm cannot compute the inf norm on an empty tensor "
                           "because the operation does not have an identity")
    ctx.ord = ord
    ctx.save(x=source)
    ctx.save_outputs = {"result": 0}
    with no_grad():
        a = x.abs()
        if ord == math.inf:
            out = a.amax(dims, keepdim)
        elif ord == -math.inf:
            out = a.amin(dims, keepdim)
        elif ord == 0:
            out = (a != 0).sum(dims, keepdim, dtype=x.dtype)
        elif ord == 1:
            out = a.sum(dims, keepdim)
        else:
            out = a.pow(ord).sum(dims, keepdim).pow(1.0 / ord)
    return out._data


@vector_norm.defvjp
def vector_norm_vjp(ctx, grad):
    return norm_backward(ctx, grad, ctx["x"], ctx["result"])


@composite("norm_p_dim", node="NormBackward1")
def norm_p_dim(ctx, x, p=2, dim=None, keepdim=False):
    """ATen's ``norm(x, p, dim, keepdim)`` (what PyTorch's ``pairwise_distance`` calls): the
    vector norm's forward and backward, recorded as NormBackward1."""
    return vector_norm.forward(ctx, x, p, dim, keepdim)


norm_p_dim.defvjp(vector_norm_vjp)


def norm_backward(ctx, grad, x, result):
    """PyTorch's norm_backward: the gradient of the ``ctx.ord``-norm ``result`` of ``x``; where
    the norm is 0 the subgradient 0 is taken."""
    p = ctx.ord
    result, grad = unreduce(result, ctx, dense=True), unreduce(grad, ctx, dense=True)
    if p == 0:
        return None  # (PyTorch leaves the input's gradient undefined)
    if p == 1:
        return x.sign() * grad
    if math.isinf(p):
        # the largest (smallest) |x| of each slice share the gradient evenly
        a = x.abs()
        mask = (a == result).logical_or(a.isnan())
        share = grad / mask.sum(ctx.dims, keepdim=True)
        return x.sign() * (share * mask)
    if p < 1:
        return x.sign() * where(x == 0, 0, x.abs().pow(p - 1)) * grad * result.pow(1 - p)
    if p == 2:
        return grad * where(result == 0, 0, x / result)
    return x.sign() * x.abs().pow(p - 1) * where(result == 0, 0, grad / result.pow(p - 1))


@composite("renorm", variants="function method inplace")
def renorm(ctx, x, p, dim, maxnorm):
    """Each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled to it (by
    ``maxnorm / (norm + 1e-7)``, as PyTorch's)."""
    if x.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {x.ndim} dimensions")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    d = _wrap_dim(dim, x.ndim)
    _setup(ctx, x, tuple(k for k in range(x.ndim) if k != d), True)
    ctx.ord, ctx.maxnorm = p, maxnorm
    ctx.save(x=x)
    with no_grad():
        norm = vector_norm(x, p, ctx.dims, True)
        out = x * where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return out._data


@renorm.defvjp
def renorm_vjp(ctx, grad):
    # PyTorch's renorm_backward: the scaled slices' gradients through their norm too
    x, maxnorm = ctx["x"], ctx.maxnorm
    norm = vector_norm(x, ctx.ord, ctx.dims, True)
    through_norm = norm_backward(ctx, (x * grad).sum(ctx.dims, keepdim=True), x, norm)
    inverse = (norm + 1e-7).reciprocal()
    return where(norm > maxnorm, inverse * maxnorm * (grad - inverse * through_norm), grad)


@composite("dist", variants="function method")
def dist(ctx, x, other, p=2):
    """The ``p``-norm of ``x - other`` (broadcast), one node (DistBackward0)."""
    if not D.result_type(x, other).is_floating_point:
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {_TYPE[D.result_type(x, other).name]} instead.")
    with no_grad():
        diff = x - other
    # (the norm's forward and backward, of the difference: what PyTorch's formula reuses)
    out = vector_norm.forward(ctx, diff, p)
    ctx.node_name = "DistBackward0"
    ctx.save(x=x, other=other)  # (the inputs, not their difference: checked, differentiable)
    return out


@dist.defvjp
def dist_vjp(ctx, grad):
    g = norm_backward(ctx, grad, ctx["x"] - ctx["other"], ctx["result"])
    if g is None:  # (p = 0: PyTorch leaves both gradients undefined)
        return None, None
    return sum_to(g, ctx.input_shapes[0]), sum_to(-g, ctx.input_shapes[1])


@composite("logsumexp", variants="function method")
def logsumexp(ctx, x, dim, keepdim=False):
    dims = _setup(ctx, x, dim, keepdim)
    ctx.save(x=x)
    ctx.save_outputs = {"result": 0}
    a = x._data
    if not x.dtype.is_floating_point:
        a = a.astype(D.default_float.np)  # integers and bools: PyTorch works in the default float
    out = _reduce(a, dims, a.dtype, cpu=KR.logsumexp_rows, cuda=_logsumexp_cuda)
    return _finish(out, x.shape, dims, keepdim)


@logsumexp.defjvp
def logsumexp_jvp(result, tangents, x, dim, keepdim=False):
    return (tangents[0] * exp(x - logsumexp(x, dim, keepdim=True))).sum(dim, keepdim=keepdim)


@logsumexp.defvjp
def logsumexp_vjp(ctx, grad):
    result = unreduce(ctx["result"], ctx, dense=True)
    return unreduce(grad, ctx, dense=True) * exp(ctx["x"] - result)


# ---------------------------------------------------------------- cumulative sums


@composite("cumsum", variants="function method inplace")
def cumsum(ctx, x, dim, *, dtype=None):
    """The running sums of ``x`` along ``dim`` (integer and bool sums are int64)."""
    no_integral_node(ctx, dtype)
    ctx.dim = _wrap_dim(dim, max(x.ndim, 1))
    if dtype is not None:
        out = D.as_dtype(dtype)
    else:
        out = x.dtype if x.dtype.is_floating_point else D.int64
    no_bool_scan("cumsum", x, out)
    a = x._data if x._data.dtype == out.np else x._data.astype(out.np)
    if x.ndim == 0:
        return a.copy()
    return _rows(a, ctx.dim, cpu=KR.cumsum_rows, cuda=KG.cumsum_rows)


cumsum.defjvp(linear(cumsum))


def no_bool_scan(name, x, out):
    """PyTorch's refusal of a running sum or product into bool (no kernel), which a 0-d or
    empty tensor never reaches."""
    if out is D.bool_ and x.ndim and x.numel():
        raise NotImplementedError(f'"{name}_out_cpu" not implemented for \'Bool\'')


def same_dtype_inplace(x, dim=None, *, dtype=None, **_):
    """PyTorch's refusal of an in-place running sum or product (``cumsum_``, ``cumprod_``)
    asked for a dtype other than the tensor's own."""
    if dtype is not None and D.as_dtype(dtype) is not x.dtype:
        raise RuntimeError(f"Bad in-place call: input tensor dtype {D.C_TYPE[x.dtype.name]} and "
                           f"output tensor dtype {D.C_TYPE[D.as_dtype(dtype).name]} should match")


cumsum.inplace_check = same_dtype_inplace


@cumsum.defvjp
def cumsum_vjp(ctx, grad):
    if _grad_state.enabled:  # recorded: PyTorch's cumsum_backward, flip(cumsum(flip(grad)))
        # (of the gradient cast to the input's dtype first; one element, or one along dim:
        # the gradient itself)
        dt = ctx.input_dtypes[0]
        if grad.dtype is not dt and dt.is_floating_point:
            grad = grad.to(dt)
        if grad.numel() <= 1 or grad.shape[ctx.dim] == 1:
            return grad
        flip = _op("flip")
        return flip(cumsum(flip(grad, ctx.dim), ctx.dim), ctx.dim)
    return rcumsum(grad, ctx.dim)


@composite("rcumsum")
def rcumsum(ctx, x, dim):
    """The sums from each element to the end along ``dim``: cumsum's gradient."""
    ctx.dim = _wrap_dim(dim, max(x.ndim, 1))
    if x.ndim == 0:
        return x._data.copy()
    return _rows(x._data, ctx.dim, cpu=KR.rcumsum_rows, cuda=KG.rcumsum_rows)


rcumsum.defjvp(linear(rcumsum))


@rcumsum.defvjp
def rcumsum_vjp(ctx, grad):
    return cumsum(grad, ctx.dim)


# ---------------------------------------------------------------- softmax


def _row_op(ctx, x, dim, name, cpu, cuda):
    """Row op ``name`` of ``x`` along ``dim``: by row kernel ``cpu`` on the CPU, by
    ``cuda(a, dim)`` on CUDA."""
    ctx.dim = _wrap_dim(dim, x.ndim)
    if not x.dtype.is_floating_point and x.numel():
        # PyTorch's kernel refuses it (an empty tensor never reaches the kernel); which kernel
        # depends on whether the dim is the last one
        last = "_lastdim" if ctx.dim >= x.ndim - 1 else ""
        raise NotImplementedError(
            f'"{name}{last}_kernel_impl" not implemented for \'{_TYPE[x.dtype.name]}\''
        )
    ctx.save_outputs = {"result": 0}
    a, d = (x._data.reshape(1), 0) if x.ndim == 0 else (x._data, ctx.dim)
    if type(a) is np.ndarray:
        # (nothing to normalize in an empty array, and the row kernel cannot reshape one)
        out = backend.cpu.run_rows(cpu, a, d) if a.size else np.empty_like(a)
    else:
        out = cuda(a, d)
    return out.reshape(()) if x.ndim == 0 else out


@composite("softmax", variants="function method")
def softmax(ctx, x, dim, dtype=None):
    return _row_op(ctx, x, dim, "softmax", cpu=KR.softmax_rows, cuda=_softmax_cuda)


@softmax.defjvp
def softmax_jvp(result, tangents, x, dim):
    t = tangents[0]
    return result * (t - (t * result).sum(dim=dim, keepdim=True))


@softmax.defvjp
def softmax_vjp(ctx, grad):
    if _grad_state.enabled:  # recorded (create_graph): PyTorch's node
        return softmax_backward_data(grad, ctx["result"], ctx.dim)
    return _softmax_gradient(grad, ctx["result"], ctx.dim)


def _softmax_gradient(grad_output, output, dim):
    out = _rows_gradient(KR.softmax_backward_rows, grad_output, output, dim)
    if out is not None:
        return out
    return output * (grad_output - (grad_output * output).sum(dim=dim, keepdim=True))


def _rows_gradient(kernel, grad_output, output, dim):
    """The gradient of a row op along the last dim by its row kernel (``kernels_reduce``),
    where nothing is recorded and both are C-contiguous CPU arrays of one float dtype and
    shape; None otherwise (the formula on Tensors: recorded, CUDA, other dims)."""
    if _grad_state.enabled or grad_output._lazy is not None or output._lazy is not None:
        return None
    g, y = grad_output._data, output._data
    if (type(g) is not np.ndarray or type(y) is not np.ndarray or g.dtype is not y.dtype
            or g.dtype.kind != "f" or g.shape != y.shape or not g.ndim or not g.size
            or dim not in (-1, g.ndim - 1) or not y.flags.c_contiguous):
        return None
    if not g.flags.c_contiguous:
        # (a gradient expanded from a sum's, ``softmax(x).sum().backward()``: a dense copy
        # costs a sixth of the formula's passes on Tensors)
        g = np.ascontiguousarray(g)
    n = g.shape[-1]
    out = np.empty(g.shape, g.dtype)
    backend.cpu.get_reduce_kernel(kernel, g.dtype)(g.reshape(-1, n), y.reshape(-1, n),
                                                   out.reshape(-1, n))
    return Tensor._make(out)


@composite("softmax_backward_data")
def softmax_backward_data(ctx, grad_output, output, dim):
    """PyTorch's _softmax_backward_data, softmax's gradient: a node of its own under
    create_graph, whose backward is PyTorch's double-backward formula."""
    return _backward_data(ctx, _softmax_gradient, grad_output, output, dim)


@softmax_backward_data.defjvp
def softmax_backward_data_jvp(result, tangents, grad_output, output, dim):
    t_go, t_y = tangents[:2]
    t_go = t_go if t_go is not None else zeros_like(grad_output)
    t_y = t_y if t_y is not None else zeros_like(output)
    return (t_y * (grad_output - (grad_output * output).sum(dim, True))
            + output * (t_go - (t_go * output + grad_output * t_y).sum(dim, True)))


@softmax_backward_data.defvjp
def softmax_backward_data_vjp(ctx, grad):
    grad_output, output, dim = ctx["grad_output"], ctx["output"], ctx.dim
    # (the map is symmetric: grad_output's gradient is the op itself; output's is PyTorch's
    # softmax_double_backward)
    return (softmax_backward_data(grad, output, dim),
            grad_output * grad - (output * grad_output).sum(dim, True) * grad
            - grad_output * (output * grad).sum(dim, True))


@composite("log_softmax", node="LogSoftmaxBackward0", variants="function method")
def log_softmax(ctx, x, dim, dtype=None):
    return _row_op(ctx, x, dim, "log_softmax", cpu=KR.log_softmax_rows,
                   cuda=_log_softmax_cuda)


def _cast_first(op):
    """``op(x, dim, dtype=dt)`` as PyTorch's: ``x`` cast to ``dt`` (its own node), then the
    op; the hook lets any other call through."""
    def lean(x, dim=None, dtype=None, **kwargs):
        if dtype is None or kwargs or dim is None:
            return None
        return op(x.to(dtype), dim)

    op.lean = lean


_cast_first(softmax)
_cast_first(log_softmax)


@log_softmax.defjvp
def log_softmax_jvp(result, tangents, x, dim):
    t = tangents[0]
    return t - (exp(result) * t).sum(dim=dim, keepdim=True)


@log_softmax.defvjp
def log_softmax_vjp(ctx, grad):
    if _grad_state.enabled:  # recorded (create_graph): PyTorch's node
        return log_softmax_backward_data(grad, ctx["result"], ctx.dim)
    return _log_softmax_gradient(grad, ctx["result"], ctx.dim)


def _log_softmax_gradient(grad_output, output, dim):
    out = _rows_gradient(KR.log_softmax_backward_rows, grad_output, output, dim)
    if out is not None:
        return out
    return grad_output - exp(output) * grad_output.sum(dim=dim, keepdim=True)


@composite("log_softmax_backward_data")
def log_softmax_backward_data(ctx, grad_output, output, dim):
    """PyTorch's _log_softmax_backward_data, log_softmax's gradient (see
    softmax_backward_data)."""
    return _backward_data(ctx, _log_softmax_gradient, grad_output, output, dim)


def _backward_data(ctx, gradient, grad_output, output, dim):
    """The forward of softmax's and log_softmax's backward ops: ``gradient`` computed without
    recording, its inputs saved for the op's own backward."""
    ctx.save(grad_output=grad_output, output=output)
    ctx.dim = dim
    with no_grad():
        return gradient(grad_output, output, dim)._data


@log_softmax_backward_data.defjvp
def log_softmax_backward_data_jvp(result, tangents, grad_output, output, dim):
    t_go, t_y = tangents[:2]
    t_go = t_go if t_go is not None else zeros_like(grad_output)
    t_y = t_y if t_y is not None else zeros_like(output)
    e = exp(output)
    return t_go - e * t_y * grad_output.sum(dim, True) - e * t_go.sum(dim, True)


@log_softmax_backward_data.defvjp
def log_softmax_backward_data_vjp(ctx, grad):
    grad_output, output, dim = ctx["grad_output"], ctx["output"], ctx.dim
    return (grad - (grad * exp(output)).sum(dim, True),
            -grad_output.sum(dim, True) * exp(output) * grad)
