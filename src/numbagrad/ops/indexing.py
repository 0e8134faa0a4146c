"""Indexing, selection and sorting ops: gather/scatter, masks, triangles, diagonals, flips,
rolls, sorts and einsum, each with its backward.

Index arithmetic runs on the host, as ``x[index]``'s does (ops/movement.py); the values move on
the tensor's device through the backend's ``gather`` and ``scatter``. Sorts and ``cumprod`` have
no device kernel: they refuse CUDA tensors by name.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from .. import _memory_format as MF
from .. import _overloads
from .. import dtypes as D
from .._tensor import Tensor, _on, _wrap_dim, warn_once
from ..autograd.grad_mode import _state as _grad_state
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..backend import cpu
from ..backend import layout as _layout
from ..factory import arange, eye, full, zeros
from . import elementwise as E
from . import movement as M
from . import reduce as R
from .forward import ERR_NO_JVP, linear
from .inplace import fill_, inplace
from .registry import composite, public, sum_to
from .table import REGISTRY

# ---------------------------------------------------------------- helpers


def _host(ctx, x):
    """``x``'s values as a NumPy array: the sorts, selections and cumulative products run on
    the host. On CUDA that is a copy to the host, and ``_device`` copies the results back (no
    CUDA kernel for these yet: correct, not fast)."""
    return x._data if ctx.backend is cpu else x._host()


def _device(ctx, result):
    """``result`` (an array or a tuple of them) on ``ctx``'s device."""
    if ctx.backend is cpu:
        return result
    if isinstance(result, tuple):
        return tuple(ctx.backend.to_device(np.asarray(a, order="C")) for a in result)
    return ctx.backend.to_device(np.asarray(result, order="C"))


def _cpu_only(ctx, name):
    if ctx.backend is not cpu:
        raise NotImplementedError(
            f"numbagrad.{name} has no CUDA kernel yet: call it on a CPU tensor (x.cpu())"
        )


def _shares(a, b) -> bool:
    """Whether arrays ``a`` and ``b`` may share memory (on the host; on a GPU, one buffer)."""
    if type(a) is np.ndarray and type(b) is np.ndarray:
        return np.may_share_memory(a, b)
    return getattr(a, "buf", None) is not None and getattr(a, "buf", None) is getattr(b, "buf", 0)


def _take(be, a, index):
    """``a[index]`` for a NumPy-style index on either backend (a copy)."""
    return a[index] if be is cpu else be.gather(a, index)


def _index_array(index, error) -> np.ndarray:
    """An index tensor's values on the host as int64; ``error`` (a RuntimeError's text) for
    anything but an int32 or int64 tensor."""
    if not isinstance(index, Tensor) or index.dtype not in (D.int64, D.int32):
        raise RuntimeError(error)
    return index._host().astype(np.int64, copy=False)


def _check_bounds(idx, n, dim, kind=RuntimeError, message=None):
    bad = (idx < 0) | (idx >= n)
    if bad.any():
        v = int(idx[bad].flat[0])
        raise kind(message or f"index {v} is out of bounds for dimension {dim} with size {n}")


def _coords(idx, dim):
    """The open grid that reads, for each position of ``idx``, the element whose ``dim``
    coordinate is the index there and the others the position's own (gather/scatter), in an
    array of as many dims as ``idx``."""
    grids = list(np.indices(idx.shape, sparse=True))
    grids[dim] = idx
    return tuple(grids)


def _atleast_1d(a):
    """``a``, a 0-d array as a 1-d one (a view: writes reach ``a``). PyTorch's gather and
    scatters take a 0-d input, index or source as 1-d (its ensure_nonempty_dim)."""
    return a.reshape(1) if a.ndim == 0 else a


def _size(shape, k):
    """``shape[k]``, 1 for a 0-d shape (PyTorch's ensure_nonempty_size)."""
    return shape[k] if shape else 1


def _region(shape):
    return tuple(slice(0, n) for n in shape)


def _dim(x, dim):
    return _wrap_dim(dim, max(x.ndim, 1))


def _zeros_like_shape(shape, like):
    return zeros(shape, dtype=like.dtype, device=like.device)


def _src_gradient(ctx, g, shape, name):
    """A scatter's source gradient ``g`` (of its index's shape, or broadcast from it) as
    PyTorch's engine takes it for a source of ``shape``: summed down to a source that expands to
    it; a larger source (its extra elements unread) is refused. None where the source, the
    op's last input, does not require grad."""
    node = getattr(ctx, "node", None)
    if node is not None and node.next_functions[-1][0] is None:
        return None
    have = tuple(g.shape)
    if have == tuple(shape):
        return g
    lead = len(have) - len(shape)
    if lead < 0 or any(n != 1 and n != h for n, h in zip(shape, have[lead:])):
        raise RuntimeError(f"Function {name} returned an invalid gradient at index 1 - got "
                           f"{list(have)} but expected shape compatible with {list(shape)}")
    return sum_to(g, shape)


# ---------------------------------------------------------------- gather / scatter


# PyTorch checks the shapes of a nonempty index only, taking 0-d tensors as 1-d


def _check_gather_shape(x, idx, d):
    if not idx.size:
        return
    if max(idx.ndim, 1) != max(x.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for k in range(max(x.ndim, 1)):
        if k != d and _size(idx.shape, k) > _size(x.shape, k):
            raise RuntimeError(
                f"Size does not match at dimension {k} expected index {list(idx.shape)} to be no "
                f"larger than self {list(x.shape)} apart from dimension {d}"
            )


def _check_scatter_shape(x, idx, d, src=None):
    if not idx.size:
        return
    n = max(x.ndim, 1)
    if max(idx.ndim, 1) != n:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    wrong = any(k != d and _size(idx.shape, k) > _size(x.shape, k) for k in range(n))
    if not wrong and src is not None:
        for k in range(n):
            if src.ndim and k >= src.ndim:  # (PyTorch reads src.size(k) before its rank check)
                raise IndexError(f"Dimension out of range (expected to be in range of "
                                 f"[{-src.ndim}, {src.ndim - 1}], but got {k})")
            if _size(idx.shape, k) > _size(src.shape, k):
                wrong = True
                break
    if src is not None and max(src.ndim, 1) != n:  # (PyTorch's order of the checks)
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if wrong:
        tail = f" and to be no larger size than src {list(src.shape)}" if src is not None else ""
        raise RuntimeError(
            f"Expected index {list(idx.shape)} to be no larger than self {list(x.shape)} "
            f"apart from dimension {d}{tail}"
        )


@composite("gather", variants="function method")
def gather(ctx, x, dim, index, *, sparse_grad=False):
    d = _dim(x, dim)
    idx = _index_array(index, "gather(): Expected dtype int32/int64 for index")
    _check_gather_shape(x, idx, d)
    _check_bounds(idx, x.shape[d] if x.ndim else 1, d)
    ctx.dim = d
    ctx.save(x=x, index=index)  # (PyTorch's GatherBackward0 saves both: see _saved_index)
    if not idx.size:
        return ctx.backend.zeros(idx.shape, x._data.dtype)
    idx1 = _atleast_1d(idx)
    out = _take(ctx.backend, _atleast_1d(x._data), _coords(idx1, d))
    return out.reshape(idx.shape)


gather.defjvp(linear(gather))


@gather.defvjp
def gather_vjp(ctx, grad):
    ctx["x"]  # noqa: B018 (the saved input's version check)
    zeros = _zeros_like_shape(ctx.input_shapes[0], grad)
    return scatter_add(zeros, ctx.dim, ctx["index"], grad), None


@composite("scatter_add", variants="function method inplace")
def scatter_add(ctx, x, dim, index, src):
    d = _dim(x, dim)
    idx = _index_array(index, "scatter(): Expected dtype int32/int64 for index")
    if src.dtype is not x.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    _check_scatter_shape(x, idx, d, src)
    _check_bounds(idx, x.shape[d] if x.ndim else 1, d)
    ctx.dim = d
    ctx.save(index=index)
    out = x._data.copy()
    if idx.size:
        idx1 = _atleast_1d(idx)
        values = _atleast_1d(src._data)[_region(idx1.shape)]
        ctx.backend.scatter(_atleast_1d(out), _coords(idx1, d), values, True)
    return out


scatter_add.defjvp(linear(scatter_add, 0, 3))


@scatter_add.defvjp
def scatter_add_vjp(ctx, grad):
    return grad, None, _src_gradient(ctx, gather(grad, ctx.dim, ctx["index"]),
                                     ctx.input_shapes[2], "ScatterAddBackward0")


_MULTIPLY_AT = {"add": None, "multiply": np.multiply}


@composite("scatter", variants="function method inplace")
def scatter(ctx, x, dim, index, src=None, *, value=None, reduce=None):
    """``x`` with ``src`` (a tensor, or a number as ``value``) written at ``index`` along
    ``dim``; ``reduce="add"``/``"multiply"`` combines instead (no backward, as in PyTorch)."""
    if src is None:
        src = value
    d = _dim(x, dim)
    idx = _index_array(index, "scatter(): Expected dtype int32/int64 for index")
    tensor = isinstance(src, Tensor)
    if tensor and src.dtype is not x.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    _check_scatter_shape(x, idx, d, src if tensor else None)
    _check_bounds(idx, x.shape[d] if x.ndim else 1, d)
    if reduce not in (None, "add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    if reduce is not None and tensor:
        warn_once("scatter_reduce_argument",
                  "The reduce argument of torch.scatter with Tensor src is deprecated and will "
                  "be removed in a future PyTorch release. Use torch.scatter_reduce instead for "
                  "more reduction options.", stacklevel=R._outside_stacklevel())
    ctx.dim, ctx.reduce = d, reduce
    ctx.save(index=index)
    # (with reduce, PyTorch records its NotImplemented node: scatter_vjp raises)
    ctx.node_name = ("NotImplemented" if reduce is not None else
                     "ScatterBackward0" if tensor else "ScatterBackward1")
    out = x._data.copy()
    if not idx.size:
        return out
    idx1, out1 = _atleast_1d(idx), _atleast_1d(out)
    values = (_atleast_1d(src._data)[_region(idx1.shape)] if tensor
              else D.checked_number(src, x.dtype))  # (PyTorch's conversion of a Scalar value)
    where = _coords(idx1, d)
    if reduce == "multiply":
        _cpu_only(ctx, "scatter(reduce='multiply')")
        np.multiply.at(out1, where, values)
    else:
        ctx.backend.scatter(out1, where, values, reduce == "add")
    return out


@scatter.defjvp
def scatter_jvp(result, tangents, x, dim, index, src=None, *, value=None, reduce=None):
    if reduce is not None:
        raise NotImplementedError(ERR_NO_JVP.format(name="scatter_reduce"))
    if isinstance(src, Tensor):
        return linear(scatter, 0, 3)(result, tangents, x, dim, index, src)
    return scatter(tangents[0], dim, index, value=0.0)  # (a number written: no tangent)


@scatter.defvjp
def scatter_vjp(ctx, grad):
    if ctx.reduce is not None:
        raise RuntimeError("derivative for aten::scatter is not implemented")
    index = ctx["index"]
    g_x = scatter(grad, ctx.dim, index, value=0.0)
    if len(ctx.input_shapes) == 2:
        return g_x, None
    return g_x, None, _src_gradient(ctx, gather(grad, ctx.dim, index),
                                    ctx.input_shapes[2], "ScatterBackward0")


# ---------------------------------------------------------------- scatter_reduce, index_reduce

_REDUCE_AT = {"sum": np.add, "prod": np.multiply, "mean": np.add, "amax": np.maximum,
              "amin": np.minimum}


def _reduce_into(ctx, x, d, idx, src, reduce, include_self):
    """``x`` with ``src`` combined by ``reduce`` into the positions ``idx`` names along ``d``
    (host array ``idx`` no larger than ``src``); without ``include_self`` the positions
    written to forget x's values first. PyTorch's integer mean rounds down."""
    ctx.dim, ctx.reduce, ctx.include_self = d, reduce, include_self
    out = _host(ctx, x).copy()
    if not idx.size:
        return _device(ctx, out)
    idx1, out1 = _atleast_1d(idx), _atleast_1d(out)
    values = _atleast_1d(_host(ctx, src))[_region(idx1.shape)]
    where = _coords(idx1, d)
    if not include_self:
        dt = out.dtype
        out1[where] = {"sum": 0, "mean": 0, "prod": 1, "amax": R._lowest(dt),
                       "amin": R._highest(dt)}[reduce]
    _REDUCE_AT[reduce].at(out1, where, values)
    if reduce == "mean":
        count = np.full(out1.shape, int(include_self), out.dtype)
        np.add.at(count, where, 1)
        count[count == 0] = 1
        out1 = out1 // count if out.dtype.kind in "iu" else out1 / count
        out = out1.reshape(out.shape)
    return _device(ctx, out)


def _reduce_into_vjp(ctx, grad, index, node):
    """PyTorch's scatter_reduce_backward (index_reduce's too: its index expanded to the
    source's shape). Its formulas read the whole source: one larger than the index broadcasts
    against the index's values, as PyTorch's does."""
    d, reduce, include_self = ctx.dim, ctx.reduce, ctx.include_self
    x, result, src = ctx["x"], ctx["result"], ctx["src"]

    def at_src(t):  # (each src position's element of t)
        return gather(t, d, index)

    def again(x, src):  # (the forward on other values)
        return scatter_reduce(x, d, index, src, reduce, include_self=include_self)

    if reduce == "sum":
        g_x, g_src = grad, at_src(grad)
    else:
        if reduce == "prod":
            # (the products without each zero factor, so a lone zero gets its gradient)
            masked_x = x.masked_fill(x == 0, 1)
            g_x = grad * again(masked_x, src) / masked_x
            src_zero = src == 0
            zeros = scatter_add(_zeros_like_shape(x.shape, x), d, index, src_zero.to(x.dtype))
            lone_zero = src_zero.logical_and(at_src(zeros) == 1)
            g_src = E.where(lone_zero, at_src(grad * again(x, src.masked_fill(lone_zero, 1))),
                            at_src(grad * result) / src.masked_fill(src_zero, 1))
        elif reduce == "mean":
            n = full(grad.shape, int(include_self), dtype=grad.dtype, device=grad.device)
            n = scatter_add(n, d, index, full(src.shape, 1, dtype=grad.dtype, device=grad.device))
            n = n.masked_fill(n == 0, 1)
            g_x, g_src = grad / n, at_src(grad) / at_src(n)
        else:  # (amax, amin: shared evenly by the elements equal to the result)
            x_is, src_is = x == result, src == at_src(result)
            share = grad / scatter_add(x_is.to(grad.dtype), d, index, src_is.to(grad.dtype))
            g_x, g_src = x_is * share, src_is * at_src(share)
    if not include_self:
        g_x = scatter(g_x, d, index, value=0.0)
    return g_x, _src_gradient(ctx, g_src, ctx.src_shape, node)


def _save_reduce_into(ctx, x, src):
    # (what PyTorch's nodes save, whatever the reduction: an in-place change of any raises)
    ctx.src_shape = tuple(src.shape)
    ctx.save(x=x, src=src)
    ctx.save_outputs = {"result": 0}


@composite("scatter_reduce", variants="function method inplace")
def scatter_reduce(ctx, x, dim, index, src, reduce, *, include_self=True):
    """``x`` with ``src`` combined into it at ``index`` along ``dim`` by ``reduce`` ("sum",
    "prod", "mean", "amax" or "amin"), x's own values included unless ``include_self`` is
    False."""
    d = _dim(x, dim)
    idx = _index_array(index, "scatter(): Expected dtype int32/int64 for index")
    if src.dtype is not x.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    _check_scatter_shape(x, idx, d, src)
    _check_bounds(idx, x.shape[d] if x.ndim else 1, d)
    if reduce not in _REDUCE_AT:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got "
                           + str(reduce))
    if reduce == "mean" and x.dtype is D.bool_:
        # (no bool kernel for the mean; with nothing to scatter, the division by the counts
        # that follows has none either)
        raise NotImplementedError(
            f'"{"scatter_gather_tensor_cpu_reduce_mean" if idx.size else "div_floor_cpu"}" not '
            "implemented for 'Bool'")
    _save_reduce_into(ctx, x, src)  # (x first: an in-place call saves a copy of it instead)
    ctx.save(index=index)
    return _reduce_into(ctx, x, d, idx, src, reduce, include_self)


@scatter_reduce.defvjp
def scatter_reduce_vjp(ctx, grad):
    g_x, g_src = _reduce_into_vjp(ctx, grad, ctx["index"], "ScatterReduceBackward0")
    return g_x, None, g_src


@composite("index_reduce", variants="function method inplace")
def index_reduce(ctx, x, dim, index, source, reduce, *, include_self=True):
    """``x`` with each slice ``source.select(dim, i)`` combined by ``reduce`` ("prod", "mean",
    "amax" or "amin") into ``x.select(dim, index[i])``, x's own values included unless
    ``include_self`` is False: ``scatter_reduce`` with the index spread over the slices."""
    d = _dim(x, dim)
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError("index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    idx = _index_array(index, "index_reduce_(): Expected dtype int32/int64 for index but got: "
                       + R._TYPE[index.dtype.name])
    if idx.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: "
                         f"{idx.ndim} with type: {R._TYPE[index.dtype.name]} and size: "
                         f"{list(index.shape)}")
    if source.ndim != x.ndim or any(a != b for k, (a, b) in enumerate(zip(x.shape, source.shape))
                                    if k != d):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(x.shape)} "
                           f"source.shape = {list(source.shape)}")
    n = source.shape[d] if source.ndim else 1
    if idx.size != n:
        raise RuntimeError(f"index_reduce_(): Number of indices ({idx.size}) should be equal to "
                           f"source.size(dim): ({n}), for dim: {d}")
    if source.dtype is not x.dtype:
        raise RuntimeError(f"index_reduce_(): self ({R._TYPE[x.dtype.name]}) and source "
                           f"({R._TYPE[source.dtype.name]}) must have the same scalar type")
    _check_bounds(idx, x.shape[d] if x.ndim else 1, d, IndexError, "index out of range in self")
    warn_once("index_reduce", "index_reduce() is in beta and the API may change at any time.",
              stacklevel=R._outside_stacklevel())
    if x.dtype is D.bool_:
        raise NotImplementedError("\"index_func_\" not implemented for 'Bool'")
    at = [1] * x.ndim
    if x.ndim:
        at[d] = n
    spread = np.ascontiguousarray(np.broadcast_to(idx.reshape(at), source.shape))
    ctx.spread = Tensor._make(_on(spread, x.device))
    _save_reduce_into(ctx, x, source)  # (x first: an in-place call saves a copy of it instead)
    ctx.save(index=index)
    return _reduce_into(ctx, x, d, spread, source, reduce, include_self)


@index_reduce.defvjp
def index_reduce_vjp(ctx, grad):
    ctx["index"]  # noqa: B018 (the saved index's version check)
    g_x, g_src = _reduce_into_vjp(ctx, grad, ctx.spread, "IndexReduceBackward0")
    return g_x, None, g_src


@public("function method")
def take_along_dim(input, indices, dim=None):
    if indices.dtype is not D.int64:
        raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got "
                           + R._TYPE[indices.dtype.name])
    if dim is None:  # (PyTorch's self.view(-1): refused for a layout a view cannot take)
        return gather(M.view(input, -1), 0, M.view(indices, -1))
    d = _dim(input, dim)
    if input.ndim != indices.ndim:
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.ndim} dimensions for input, "
                           f"and {indices.ndim} dimensions for indices")
    shape = list(cpu.broadcast_shapes(
        tuple(1 if k == d else n for k, n in enumerate(input.shape)),
        tuple(1 if k == d else n for k, n in enumerate(indices.shape))))
    xs, ids = list(shape), list(shape)
    xs[d], ids[d] = input.shape[d], indices.shape[d]
    if input.shape[d]:
        # (PyTorch 2.13 reduces the indices modulo the dim's size: -1 is the last element,
        # and one out of range wraps around instead of raising)
        indices = E.remainder(indices, input.shape[d])
    return gather(M.expand(input, xs), d, M.expand(indices, ids))



# ---------------------------------------------------------------- index_select / index_add


def _vector_index(index, name):
    idx = _index_array(index, f"{name}(): Expected dtype int32 or int64 for index")
    if idx.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    return idx.reshape(-1)


def _index_select_bounds(x, d, idx):
    """PyTorch's CPU index_select refusals, which depend on its kernel: along an empty dim of
    a tensor of 2 or more dims, or out of range along a dim that is neither the first nor
    the last of 3 or more (the last of 2 included), RuntimeError; else IndexError."""
    n = x.shape[d] if x.ndim else 1
    if x.ndim >= 2 and n == 0 and idx.size:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    if x.ndim >= 2 and 0 < d and (d < x.ndim - 1 or x.ndim == 2):
        bad = (idx < 0) | (idx >= n)
        if bad.any():
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={int(idx[bad][0])} "
                               f"axis_dim={n}")
    _check_bounds(idx, n, d, IndexError, "index out of range in self")


@composite("index_select", variants="function method")
def index_select(ctx, x, dim, index):
    d = _dim(x, dim)
    idx = _vector_index(index, "index_select")
    if not x.ndim and idx.size != 1:
        raise RuntimeError("index_select(): Index to scalar can have only 1 value, got "
                           f"{idx.size} value(s)")
    _index_select_bounds(x, d, idx)
    ctx.dim = d
    ctx.save(index=index)
    if x.ndim == 0:
        return x._data.copy()
    # (C-contiguous, as PyTorch's result: NumPy lays out a[:, idx] column by column)
    return ctx.backend.ascontiguousarray(_take(ctx.backend, x._data, (slice(None),) * d + (idx,)))


index_select.defjvp(linear(index_select))


@index_select.defvjp
def index_select_vjp(ctx, grad):
    zeros = _zeros_like_shape(ctx.input_shapes[0], grad)
    return index_add(zeros, ctx.dim, ctx["index"], grad), None


def _check_index_func_source(x, d, idx, source, name):
    """PyTorch's checks of the source of index_add (its index_func_meta_impl): ``d`` an index
    into it, one slice per index, the other dims as ``x``'s (0-d tensors compared whole)."""
    if d and d >= source.ndim:
        raise RuntimeError(f"{name}_(): Indexing dim {d} is out of bounds of the source tensor "
                           f"with dim {source.ndim}")
    if idx.size != (source.shape[d] if source.ndim else 1):
        if not source.ndim:  # (PyTorch's message reads source.size(dim) of a 0-d source)
            raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
        raise RuntimeError(f"{name}_(): Number of indices ({idx.size}) should be equal to "
                           f"source.size(dim): ({source.shape[d]}), for dim: {d}")
    xs, ss = list(x.shape), list(source.shape)
    if xs and ss:
        del xs[d], ss[d]
    if xs != ss:
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(x.shape)} "
                           f"source.shape = {list(source.shape)}")


@composite("index_add", variants="function method inplace")
def index_add(ctx, x, dim, index, source, *, alpha=1):
    d = _dim(x, dim)
    if isinstance(index, Tensor) and index.ndim > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: "
                         f"{index.ndim} with type: {R._TYPE[index.dtype.name]} and size: "
                         f"{list(index.shape)}")
    idx = _index_array(index, "index_add_(): Expected dtype int32/int64 for index but got: "
                       + R._TYPE.get(getattr(index, "dtype", D.float32).name, "Float"))
    if source.dtype is not x.dtype:
        raise RuntimeError(f"index_add_(): self ({R._TYPE[x.dtype.name]}) and source "
                           f"({R._TYPE[source.dtype.name]}) must have the same scalar type")
    _check_index_func_source(x, d, idx, source, "index_add")
    idx = idx.reshape(-1)
    _check_bounds(idx, x.shape[d] if x.ndim else 1, d)
    ctx.dim, ctx.alpha = d, alpha
    # (PyTorch's node saves the source for its gradient, which reads the source's shape)
    ctx.save(index=index, source=source if source.requires_grad else None)
    src = source._data
    if alpha != 1:
        with no_grad():
            src = E.mul(source, alpha)._data
    out = x._data.copy()
    if x.ndim == 0:  # (through a 1-d view of it: NumPy's 0-d sums are scalars)
        ctx.backend.scatter(out.reshape(1), (idx,), src.reshape(-1), True)
        return out
    ctx.backend.scatter(out, (slice(None),) * d + (idx,), src, True)
    return out


index_add.defjvp(linear(index_add, 0, 3))


@index_add.defvjp
def index_add_vjp(ctx, grad):
    if "source" in ctx.saved:
        ctx["source"]  # noqa: B018 (the saved source's version check)
    g_src = index_select(grad, ctx.dim, ctx["index"])
    shape = tuple(ctx.input_shapes[2])
    # (PyTorch's maybe_multiply(grad.index_select(dim, index).expand_as(source), alpha):
    # ExpandBackward0, then MulBackward1 for an alpha other than 1)
    g_src = M.expand(g_src, shape) if tuple(g_src.shape) == shape else g_src.reshape(shape)
    if ctx.alpha != 1:
        g_src = E.mul_scalar(g_src, ctx.alpha)
    return grad, None, g_src


# (their in-place variants refuse a source or index sharing any memory with the target)
for _op in (scatter_add, scatter, index_add):
    _op.inplace_overlap = "full"
del _op


@composite("index_fill", variants="inplace")
def index_fill(ctx, x, dim, index, value):
    d = _dim(x, dim)
    idx = _index_array(index, "index_fill_(): Expected dtype int64 for index").reshape(-1)
    n = x.shape[d] if x.ndim else 1
    bad = (idx < -n) | (idx >= n)
    if bad.any():
        raise IndexError(f"index {int(idx[bad][0])} is out of bounds for dimension {d} with "
                         f"size {n}")
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.ndim} dimension(s).")
        ctx.node_name = "IndexFillBackward1"
        value = value._host()[()]
    else:
        value = D.checked_number(value, x.dtype)  # (PyTorch's check of a number that does not fit)
    ctx.dim = d
    ctx.save(index=index)
    out = ctx.backend.clone(x._data)  # (laid out as x: PyTorch's clone, then index_fill_)
    if x.ndim == 0:
        if not idx.size:
            return out
        if type(out) is np.ndarray:  # (an array: NumPy's 0-d arithmetic gives a scalar)
            return np.full((), value, out.dtype)
        return np.asarray(value, out.dtype) + 0 * out
    ctx.backend.scatter(out, (slice(None),) * d + (idx % n,), value, False)
    return out


index_fill.defjvp(linear(index_fill, 0, 3))


@index_fill.defvjp
def index_fill_vjp(ctx, grad):
    index = ctx["index"]
    g_x = index_fill(grad, ctx.dim, index, 0)
    if len(ctx.input_shapes) == 2:
        return g_x, None
    if not ctx.needs_grad(2):
        # (only where the value wants one, as PyTorch's formula runs: its index_select refuses
        # a negative index, which the fill itself takes)
        return g_x, None, None
    # each filled slice once, however often the index names it (PyTorch's _unique(index))
    return g_x, None, index_select(grad, ctx.dim, index.unique()).sum()


def _long_index(index, name):
    """An index tensor's values on the host, where PyTorch's ``name`` takes int64 only."""
    if index.dtype is not D.int64:
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got "
                           f"{R._TYPE[index.dtype.name]}")
    return index._host()


@composite("index_copy", variants="function method inplace")
def index_copy(ctx, x, dim, index, source):
    """``x`` with the slices ``index`` along ``dim`` replaced by those of ``source``."""
    d = _dim(x, dim)
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    n_idx = index.numel()
    if source.ndim == 0 and n_idx != 1:
        raise IndexError("index_copy_(): When source is scalar, index should have one element "
                         f"(got {n_idx})")
    if source.ndim != x.ndim and source.ndim and x.ndim:
        raise IndexError("index_copy_(): When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({source.ndim}), "
                         f"destination dimensionality ({x.ndim})")
    idx = _long_index(index, "index_copy_").reshape(-1)
    if source.dtype is not x.dtype:
        raise RuntimeError("index_copy_(): self and source expected to have the same dtype, but "
                           f"got (self) {R._TYPE[x.dtype.name]} and (source) "
                           f"{R._TYPE[source.dtype.name]}")
    rest_x = [n for k, n in enumerate(x.shape) if k != d]
    rest_src = [n for k, n in enumerate(source.shape) if k != d]
    if source.ndim and x.ndim and rest_x != rest_src:
        raise RuntimeError(
            "index_copy_(): Source/destination tensor must have same slice shapes. Destination "
            f"slice shape: {' '.join(map(str, rest_x))} at dimension {d} and source slice "
            f"shape: {' '.join(map(str, rest_src))} at dimension 0.")
    n_src = source.shape[d] if source.ndim else 1
    if n_idx != n_src:
        raise IndexError(f"index_copy_(): Number of indices ({n_idx}) should be equal to "
                         f"source.size(dim) ({n_src})")
    n = x.shape[d] if x.ndim else 1
    bad = (idx < 0) | (idx >= n)
    if bad.any():
        raise IndexError(f"index_copy_(): index {int(idx[bad][0])} is out of bounds for "
                         f"dimension {d} with size {n}")
    ctx.dim = d
    # (PyTorch's node saves the source for its gradient, which reads the source's shape)
    ctx.save(index=index, source=source if source.requires_grad else None)
    out = x._data.copy()
    if x.ndim == 0:
        return source._data.reshape(()).copy()
    src = source._data.reshape((n_idx,)) if source.ndim == 0 else source._data
    ctx.backend.scatter(out, (slice(None),) * d + (idx,), src, False)
    return out


@index_copy.defvjp
def index_copy_vjp(ctx, grad):
    # (PyTorch's: x's gradient with the copied slices zeroed, the source's those slices)
    index = ctx["index"]
    if "source" in ctx.saved:
        ctx["source"]  # noqa: B018 (the saved source's version check)
    shape = tuple(ctx.input_shapes[2])
    if shape:  # (PyTorch's expand_as(source): ExpandBackward0 under create_graph)
        g_src = index_select(grad, ctx.dim, index)
        g_src = g_src.expand(shape) if g_src.ndim == len(shape) else g_src.reshape(shape)
    else:  # (PyTorch's formula for a 0-d source, then its engine's sum to the source's shape)
        g_src = sum_to(index_select(grad, ctx.dim, index.squeeze(0)), ())
    return index_fill(grad, ctx.dim, index, 0), None, g_src


index_copy.defjvp(linear(index_copy, 0, 3))


@public("function method inplace")
def index_put(input, indices, values, accumulate=False):
    """``input`` with ``values`` written at the positions the index tensors ``indices`` give
    (``input[indices] = values``), or with ``accumulate`` added there: IndexPutBackward0."""
    for k, i in enumerate(indices):
        if not isinstance(i, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument 0, but got "
                            f"{type(i).__name__}")
        if i.dtype.is_floating_point:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if values.dtype is not input.dtype:
        # (PyTorch builds the index first: an index into a dim of size 0 is its IndexError)
        M.region_shape(input.shape, M._Index.of(input, tuple(indices)).index)
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{R._TYPE[input.dtype.name]} for the destination and {R._TYPE[values.dtype.name]} "
            "for the source.")
    # (the index as arrays: its tensors are no inputs of the node)
    return M.index_put(input, M._Index.of(input, tuple(indices)), values, accumulate)


index_put.inplace_overlap = "full"  # (index_put_ refuses values sharing the target's memory)


@public("function")
def index_put_(input, indices, values, accumulate=False):
    return inplace(input, index_put, indices, values, accumulate)


def _flat_index(index, n, name):
    """``take``'s and ``put``'s index: int64 positions in the flattened tensor of ``n``
    elements (negative ones from the end), range-checked."""
    idx = _long_index(index, name).reshape(-1)
    bad = (idx < -n) | (idx >= n)
    if bad.any():
        raise IndexError(f"out of range: tried to access index {int(idx[bad][0])} on a tensor "
                         f"of {n} elements.")
    return idx % n if n else idx


@composite("take", variants="function method")
def take(ctx, x, index):
    """The elements of ``x``, flattened, at ``index`` (the result has its shape)."""
    idx = _flat_index(index, x.numel(), "take")
    # (as PyTorch's TakeBackward0: an in-place change of either before backward raises)
    ctx.save(x=x, index=index)
    return _take(ctx.backend, x._data.reshape(-1), (idx,)).reshape(index.shape)


@take.defvjp
def take_vjp(ctx, grad):
    ctx["x"]  # noqa: B018 (the saved input's version check)
    # (PyTorch's: the gradient added into zeros at the positions read)
    zeros = _zeros_like_shape(ctx.input_shapes[0], grad)
    return put(zeros, ctx["index"], grad, accumulate=True), None


take.defjvp(linear(take))


@composite("put", variants="function method inplace")
def put(ctx, x, index, source, accumulate=False):
    """``x`` with its elements, flattened, at ``index`` set to (or with ``accumulate``
    increased by) those of ``source``."""
    idx = _flat_index(index, x.numel(), "put_")
    if source.numel() != idx.size:
        raise IndexError("put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.numel()}, "
                         f"index.numel() = {idx.size}")
    if source.dtype is not x.dtype:
        raise RuntimeError("put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {R._TYPE[x.dtype.name]} and source.dtype = "
                           f"{R._TYPE[source.dtype.name]}")
    ctx.accumulate = accumulate
    ctx.save(index=index)
    if source.requires_grad:
        # (PyTorch's PutBackward0 keeps the source for its gradient, reshape_as(source), when
        # that is needed: an in-place change of it before backward is the version error)
        ctx.save(source=source)
    flat = x._data.reshape(-1).copy()  # (x's elements in C order, x left as it is)
    ctx.backend.scatter(flat, (idx,), source._data.reshape(-1), accumulate)
    return flat.reshape(x.shape)


@put.defvjp
def put_vjp(ctx, grad):
    index = ctx["index"]
    if "source" in ctx.saved:
        ctx["source"]  # noqa: B018 (its version check)
    g_src = take(grad, index).reshape(ctx.input_shapes[2])
    if ctx.accumulate:
        return grad, None, g_src
    zeros = _zeros_like_shape(ctx.input_shapes[2], grad)
    return put(grad, index, zeros), None, g_src


put.defjvp(linear(put, 0, 2))
# (their in-place variants refuse a source or index sharing any memory with the target)
put.inplace_overlap = index_copy.inplace_overlap = "full"


# ---------------------------------------------------------------- masks


def _check_mask(mask, message):
    if mask.dtype is not D.bool_:
        raise RuntimeError(message)


def _no_integral_grad(x, value):
    """PyTorch's error for an out-of-place fill of an integral tensor with a value that
    requires grad (recorded: its output, of x's dtype, cannot require grad; the in-place
    fill is recorded and raises nothing)."""
    if (isinstance(value, Tensor) and value.requires_grad and _grad_state.enabled
            and not x.dtype.is_floating_point):
        raise RuntimeError(f"Autograd not support dtype: {R._TYPE[x.dtype.name]}")


@composite("masked_fill", variants="inplace")
def masked_fill(ctx, x, mask, value):
    if mask.dtype is not D.bool_:
        raise M.mask_error("masked_fill_", mask)
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.ndim} dimension(s).")
        ctx.node_name = "MaskedFillBackward1"
        value = value._host()[()].item()
    cpu.broadcast_shapes(tuple(mask.shape), tuple(x.shape))  # (PyTorch's error when they don't)
    D.checked_number(value, x.dtype)  # (PyTorch's checked conversion: a value must fit)
    ctx.save(mask=mask)  # (PyTorch's node saves it: changed in place before backward, an error)
    with no_grad():
        out = E.where(mask, value, x)
    out = out._data if out.dtype is x.dtype else out.to(x.dtype)._data
    # (C order whatever x's layout: PyTorch fills a contiguous clone of x; NumPy's
    # ascontiguousarray makes a 0-d array 1-d)
    return ctx.backend.ascontiguousarray(out).reshape(out.shape)


masked_fill.defjvp(linear(masked_fill, 0, 2))


@public("function method", name="masked_fill")
def masked_fill_function(input, mask, value):
    """``masked_fill`` out of place (the in-place one is the op's inplace variant)."""
    _no_integral_grad(input, value)
    return masked_fill(input, mask, value)


@public("function method", name="index_fill")
def index_fill_function(input, dim, index, value):
    """``index_fill`` out of place (the in-place one is the op's inplace variant)."""
    _no_integral_grad(input, value)
    return index_fill(input, dim, index, value)


@masked_fill.defvjp
def masked_fill_vjp(ctx, grad):
    mask = ctx["mask"]
    # (PyTorch's grad.masked_fill(mask, 0): MaskedFillBackward0 when recorded)
    g_x = sum_to(masked_fill(grad, mask, 0), ctx.input_shapes[0])
    if len(ctx.input_shapes) == 2:
        return g_x, None
    return g_x, None, E.where(mask, grad, 0).sum()


@composite("masked_select", variants="function method")
def masked_select(ctx, x, mask):
    _check_mask(mask, "masked_select: expected BoolTensor for mask")
    # (0-d operands select from one element: taken as a shape (1,), which NumPy's nonzero
    # takes; the gradient is summed back to 0-d)
    shape = cpu.broadcast_shapes(tuple(x.shape), tuple(mask.shape)) or (1,)
    where = np.nonzero(np.broadcast_to(mask._host(), shape))
    ctx.where, ctx.shape = where, shape
    # (PyTorch's node saves self and the mask: changed in place before backward, an error)
    ctx.save(x=x, mask=mask)
    with no_grad():
        xb = M.expand(x, shape)._data
    return _take(ctx.backend, xb, where)


masked_select.defjvp(linear(masked_select))


@masked_select.defvjp
def masked_select_vjp(ctx, grad):
    ctx["x"]  # noqa: B018 (the version check of the saved input)
    mask = ctx["mask"]
    if is_grad_enabled():
        # (recorded: PyTorch's masked_select_backward, zeros of the broadcast shape with the
        # gradient scattered in: MaskedScatterBackward0)
        shape = cpu.broadcast_shapes(tuple(ctx.input_shapes[0]), tuple(mask.shape))
        full = masked_scatter(_zeros_like_shape(shape, grad), mask, grad)
    else:
        full = M.index_put_zeros(grad, M._Index(ctx.where, {"advanced"}), ctx.shape)
    return sum_to(full, ctx.input_shapes[0]), None


@composite("masked_scatter", variants="function method inplace")
def masked_scatter(ctx, x, mask, source):
    """``x`` (broadcast with ``mask``) with the elements where ``mask`` is True replaced, in
    order, by the first elements of ``source``."""
    if mask.dtype is not D.bool_:
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with dtype "
                           + R._TYPE[mask.dtype.name])
    if source.dtype is not x.dtype:
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but got"
                           f"{R._TYPE[x.dtype.name]} and {R._TYPE[source.dtype.name]}")
    shape = cpu.broadcast_shapes(tuple(mask.shape), tuple(x.shape))  # (PyTorch's order)
    where = np.broadcast_to(mask._host(), shape)
    k = int(np.count_nonzero(where))
    if source.numel() < k:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    ctx.save(mask=mask)  # (PyTorch's node saves it: changed in place before backward, an error)
    out = np.array(np.broadcast_to(_host(ctx, x), shape))  # (a C-ordered copy)
    out[where] = _host(ctx, source).reshape(-1)[:k]
    return _device(ctx, out)


masked_scatter.defjvp(linear(masked_scatter, 0, 2))


@masked_scatter.defvjp
def masked_scatter_vjp(ctx, grad):
    # (PyTorch's: x's gradient zero where replaced; the source's the gradient where it went,
    # in order, zeros for the elements not used)
    mask = ctx["mask"]
    g_x = sum_to(masked_fill(grad, mask, 0), ctx.input_shapes[0])
    return g_x, None, masked_scatter_backward(grad, mask, tuple(ctx.input_shapes[2]))


masked_scatter.inplace_overlap = "full"


@composite("masked_scatter_backward", node="MaskedScatterBackwardBackward0")
def masked_scatter_backward(ctx, grad, mask, shape):
    """masked_scatter's source gradient (PyTorch's op of that name): the elements of ``grad``
    where ``mask`` (broadcast to it) is True, in order, then zeros for the source's elements
    not used, shaped as the source (``shape``)."""
    ctx.save(mask=mask)
    g = _host(ctx, grad)
    picked = g[np.broadcast_to(_host(ctx, mask), g.shape)]
    out = np.zeros(math.prod(shape), g.dtype)
    out[:picked.size] = picked
    return _device(ctx, out.reshape(shape))


@masked_scatter_backward.defvjp
def masked_scatter_backward_vjp(ctx, grad):
    # (PyTorch's: zeros_like(grad_output).masked_scatter(mask, grad))
    zeros = _zeros_like_shape(ctx.input_shapes[0], grad)
    return masked_scatter(zeros, ctx["mask"], grad), None


@public("function method")
def nonzero(input, *, as_tuple=False):
    """The indices of the nonzero elements (int64): one row each, or one tensor per dim."""
    # the count decides the result's shape, so it runs on the host (PyTorch synchronises
    # too): a CUDA tensor's values are copied to the host and the indices back
    dev = input.device
    a = input._host()
    if as_tuple:
        if a.ndim == 0:
            return (Tensor._make(_on(np.zeros(int(a != 0), np.int64), dev)),)
        return tuple(Tensor._make(_on(np.ascontiguousarray(i, np.int64), dev))
                     for i in np.nonzero(a))
    return Tensor._make(_on(np.argwhere(a).astype(np.int64), dev))


@public("function method")
def argwhere(input):
    return nonzero(input)


WARN_WHERE_BYTE = (
    "where received a uint8 condition tensor. This behavior is deprecated and will be removed in "
    "a future version of PyTorch. Use a boolean condition instead."
)


def _check_condition(condition, stacklevel):
    """PyTorch's check of ``where``'s condition: a bool tensor, or a uint8 one with its
    deprecation warning (once a process, as PyTorch's), pointing ``stacklevel`` frames up."""
    if isinstance(condition, Tensor) and condition.dtype is not D.bool_:
        if condition.dtype is not D.uint8:
            raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor "
                               f"with dtype {D.SCALAR_TYPE[condition.dtype.name]}")
        warn_once("where_uint8", WARN_WHERE_BYTE, stacklevel=stacklevel)


def _where_method(self, condition, other):
    _check_condition(condition, 3)
    return E.where(condition, self, other)


@public("function method", method=_where_method)
def where(condition, input=None, other=None):
    """``where(condition, input, other)``; ``where(condition)`` is ``nonzero(as_tuple=True)``."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    _check_condition(condition, 4)  # (under the public function's wrapper)
    return E.where(condition, input, other)


# ---------------------------------------------------------------- triangles and diagonals


def _triangle(ctx, x, diagonal, name, lower):
    if x.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    ctx.diagonal = diagonal
    n, m = x.shape[-2:]
    keep = np.tri(n, m, diagonal, dtype=bool) if lower else ~np.tri(n, m, diagonal - 1, dtype=bool)
    with no_grad():
        out = E.where(Tensor._make(_on(keep, x.device)), x, False if x.dtype is D.bool_ else 0)
    return out._data if out.dtype is x.dtype else out.to(x.dtype)._data


@composite("tril", variants="function method inplace")
def tril(ctx, x, diagonal=0):
    return _triangle(ctx, x, diagonal, "tril", True)


tril.defvjp(lambda ctx, grad: tril(grad, ctx.diagonal))
tril.defjvp(linear(tril))


@composite("triu", variants="function method inplace")
def triu(ctx, x, diagonal=0):
    return _triangle(ctx, x, diagonal, "triu", False)


triu.defvjp(lambda ctx, grad: triu(grad, ctx.diagonal))
triu.defjvp(linear(triu))


def _diag_view(a, be, offset, d1, d2):
    """A writable view of the diagonal of ``a`` over dims ``d1``, ``d2`` (last dim of the
    view), starting ``offset`` above the main one."""
    n1, n2 = a.shape[d1], a.shape[d2]
    if offset >= 0:
        length, start = max(0, min(n1, n2 - offset)), (0, offset)
    else:
        length, start = max(0, min(n1 + offset, n2)), (-offset, 0)
    index = [slice(None)] * a.ndim
    if length:
        index[d1], index[d2] = slice(start[0], None), slice(start[1], None)
        a = a[tuple(index)]
    keep = [k for k in range(a.ndim) if k not in (d1, d2)]
    shape = [a.shape[k] for k in keep] + [length]
    strides = [a.strides[k] for k in keep] + [a.strides[d1] + a.strides[d2]]
    return be.as_strided(a, shape, strides)


def _diag_dims(ndim, dim1, dim2):
    d1, d2 = _wrap_dim(dim1, ndim), _wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


@composite("diagonal", view=True, variants="function method")
def diagonal(ctx, x, offset=0, dim1=0, dim2=1):
    d1, d2 = _diag_dims(x.ndim, dim1, dim2)
    ctx.args = (offset, d1, d2)
    return _diag_view(x._data, ctx.backend, offset, d1, d2)


diagonal.defvjp(lambda ctx, grad: diagonal_backward(grad, ctx.input_shapes[0], *ctx.args))
diagonal.defjvp(linear(diagonal))


@composite("diagonal_backward", node="DiagonalBackwardBackward0")
def diagonal_backward(ctx, grad, shape, offset, d1, d2):
    """Zeros of ``shape`` with ``grad`` on the diagonal: ``diagonal``'s gradient."""
    ctx.args = (offset, d1, d2)
    be = ctx.backend
    out = be.zeros(tuple(shape), grad._data.dtype)
    be.copyto(_diag_view(out, be, offset, d1, d2), grad._data)
    return out


diagonal_backward.defvjp(lambda ctx, grad: diagonal(grad, *ctx.args))
diagonal_backward.defjvp(linear(diagonal_backward))


@composite("diagonal_copy", node="DiagonalBackward0_copy", variants="function")
def diagonal_copy(ctx, x, offset=0, dim1=0, dim2=1):
    """``diagonal``'s elements, copied (contiguous): what ``diag`` of a matrix returns."""
    d1, d2 = _diag_dims(x.ndim, dim1, dim2)
    ctx.args = (offset, d1, d2)
    be = ctx.backend
    # (a copy even where the diagonal is contiguous already: one element, or a 1-wide matrix)
    view = _diag_view(x._data, be, offset, d1, d2)
    out = be.ascontiguousarray(view)
    return out.copy() if _shares(out, x._data) else out


diagonal_copy.defvjp(lambda ctx, grad: diagonal_backward(grad, ctx.input_shapes[0], *ctx.args))
diagonal_copy.defjvp(linear(diagonal_copy))


@public("method")
def fill_diagonal_(input, fill_value, wrap=False):
    """The main diagonal (of a matrix, or of a tensor whose dims are all equal) filled with
    ``fill_value``; with ``wrap``, a tall matrix's diagonal starts again after each square and
    a row between (every ``ncols + 1`` rows), as PyTorch's."""
    if input.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if input.ndim > 2 and len(set(input.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    h, w = input.shape[0], input.shape[1]
    # the fills go through diagonal views: a non-leaf's node becomes CopySlices, as PyTorch's
    for start in range(0, h, w + 1) if wrap and input.ndim == 2 else (0,):
        diag = M.getitem(input, slice(start, None)) if start else input
        while diag.ndim > 1:
            diag = diagonal(diag, 0, 0, 1)
        fill_(diag, fill_value)
    return input


# ---------------------------------------------------------------- scatters into views


def _scatter_into(ctx, x, src, region):
    """A copy of ``x`` with ``src`` written into ``region(copy)`` (a view of it, as a plain
    Tensor: the view ops' own checks apply) and cast to x's dtype, as PyTorch's *_scatter."""
    out = ctx.backend.clone(x._data)
    view = region(Tensor._make(out))._data
    if tuple(src.shape) != view.shape:
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(view.shape)}")
    ctx.backend.copyto(view, src._data)
    return out


def _scatter_vjp(op, region):
    """The gradient of a view scatter ``op``: x's is ``grad`` with the region zeroed (``op``
    again), src's the region of ``grad``."""

    def vjp(ctx, grad):
        src = Tensor._make(ctx.backend.zeros(tuple(ctx.input_shapes[1]), grad._data.dtype))
        return op(grad, src, *ctx.args), region(grad, *ctx.args)

    return vjp


def _sliced(x, dim, start, end, step):
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    # (PyTorch's slice: SliceBackward0 even over a whole dim)
    return M.slice_dim(x, (slice(None),) * _dim(x, dim) + (slice(start, end, step),))


@composite("slice_scatter", variants="function method")
def slice_scatter(ctx, x, src, dim=0, start=None, end=None, step=1):
    """``x`` with ``src`` written into ``x[..., start:end:step]`` (along ``dim``)."""
    ctx.args = (dim, start, end, step)
    return _scatter_into(ctx, x, src, lambda t: _sliced(t, dim, start, end, step))


@composite("select_scatter", variants="function method")
def select_scatter(ctx, x, src, dim, index):
    """``x`` with ``src`` written into ``x.select(dim, index)``."""
    ctx.args = (dim, index)
    return _scatter_into(ctx, x, src, lambda t: M.select(t, dim, index))


@composite("diagonal_scatter", variants="function method")
def diagonal_scatter(ctx, x, src, offset=0, dim1=0, dim2=1):
    """``x`` with ``src`` written into ``x.diagonal(offset, dim1, dim2)``."""
    ctx.args = (offset, dim1, dim2)
    return _scatter_into(ctx, x, src, lambda t: diagonal(t, offset, dim1, dim2))


slice_scatter.defvjp(_scatter_vjp(slice_scatter, _sliced))
select_scatter.defvjp(_scatter_vjp(select_scatter, M.select))
diagonal_scatter.defvjp(_scatter_vjp(diagonal_scatter, diagonal))
for _op in (slice_scatter, select_scatter, diagonal_scatter):
    _op.defjvp(linear(_op, 0, 1))
del _op


@composite("diag_embed", variants="function method")
def diag_embed(ctx, x, offset=0, dim1=-2, dim2=-1):
    d1, d2 = _diag_dims(x.ndim + 1, dim1, dim2)
    ctx.args = (offset, d1, d2)
    n = (x.shape[-1] if x.ndim else 1) + abs(offset)
    shape = list(x.shape[:-1])
    for d in sorted((d1, d2)):
        shape.insert(d, n)
    be = ctx.backend
    out = be.zeros(tuple(shape), x._data.dtype)
    be.copyto(_diag_view(out, be, offset, d1, d2), x._data)
    return out


diag_embed.defvjp(lambda ctx, grad: diagonal(grad, *ctx.args))
diag_embed.defjvp(linear(diag_embed))


@public("function method")
def diagflat(input, offset=0):
    """The elements of ``input``, flattened, as the diagonal ``offset`` of a square matrix."""
    return diag(M.ravel(input), offset)


@public("function method")
def diag(input, diagonal=0):
    """A 1-D tensor as a diagonal matrix, or a matrix's diagonal as a 1-D copy."""
    if input.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input.ndim == 2:
        # (a copy, as PyTorch's: its node is DiagonalBackward0_copy)
        return diagonal_copy(input, diagonal)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


@composite("trace", variants="function method")
def trace(ctx, x):
    if x.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.ndim}")
    if x.dtype is D.bool_:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    with no_grad():
        return R.sum(diagonal(x))._data


trace.defjvp(linear(trace))


@trace.defvjp
def trace_vjp(ctx, grad):
    n, m = ctx.input_shapes[0]
    return grad * eye(n, m, dtype=grad.dtype, device=grad.device)


@public("function method", aliases="ger")
def outer(input, vec2):
    for name, t in (("self", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    return M.reshape(input, -1, 1) * vec2


# ---------------------------------------------------------------- repeats, flips, rolls


@composite("repeat", node="RepeatBackward0", variants="method")
def repeat(ctx, x, *sizes, repeats=None):
    sizes = M.parse_shape(M.by_keyword(sizes, repeats))
    if len(sizes) < x.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    shape = (1,) * (len(sizes) - x.ndim) + tuple(x.shape)
    target = [r * n for r, n in zip(sizes, shape)]
    if any(r < 0 for r in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(target)}: {target}")
    ctx.sizes, ctx.shape = sizes, shape
    a = x._data.reshape(shape) if x._data.flags.c_contiguous else (
        ctx.backend.ascontiguousarray(x._data).reshape(shape))
    be = ctx.backend
    # (r0, n0, r1, n1, ...) with stride 0 over each r: one copy makes the repeats
    if all(r == 1 for r in sizes):  # (a copy even so: as_strided below would be x itself)
        return a.copy().reshape(target)
    spread = be.as_strided(a, [v for r, n in zip(sizes, shape) for v in (r, n)],
                           [v for st in a.strides for v in (0, st)])
    return be.ascontiguousarray(spread).reshape(target)


repeat.defjvp(linear(repeat))


@repeat.defvjp
def repeat_vjp(ctx, grad):
    if _grad_state.enabled:
        return _repeat_backward(grad, ctx.sizes, ctx.input_shapes[0])
    pairs = [v for r, n in zip(ctx.sizes, ctx.shape) for v in (r, n)]
    summed = R.sum(M.reshape(grad, pairs), tuple(range(0, len(pairs), 2)))
    return M.reshape(summed, ctx.input_shapes[0])


def _repeat_backward(grad, sizes, shape):
    """PyTorch's repeat_backward, recorded: the leading repeats summed one by one, then each
    repeated dim split as (repeat, size) and the repeats summed at once (SumBackward1)."""
    if 0 in sizes:
        return zeros(shape, dtype=grad.dtype, device=grad.device)
    for _ in range(grad.ndim - len(shape)):
        grad = R.sum(grad, 0)
    split, summed = [], []
    for r, n in zip(sizes[len(sizes) - len(shape):], shape):
        if r != 1:
            split.append(r)
            summed.append(len(split) - 1)
        split.append(n)
    if tuple(split) != tuple(grad.shape):
        grad = M.reshape(grad, split)
    return R.sum(grad, tuple(summed)) if summed else grad


@public("function method")
def tile(input, dims):
    dims = tuple(dims) if isinstance(dims, (list, tuple)) else (dims,)
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)


@composite("flip", variants="method")
def flip(ctx, x, *args, dims=None):
    if (dims is not None and not isinstance(dims, (list, tuple))) or (
            len(args) > 1 and any(isinstance(a, (list, tuple)) for a in args)):
        _dims_not_a_sequence(dims if dims is not None else args)
    dims = M.normalize_dims(list(M.parse_shape(M.by_keyword(args, dims))), x.ndim)
    ctx.dims = dims
    a = x._data
    if not x.ndim:
        return a.copy()  # (a 0-d tensor: its dim 0 flips nothing)
    if ctx.backend is cpu:
        return _laid_out_like(a, np.flip(a, dims))
    where = list(np.indices(a.shape, sparse=True))
    for d in dims:
        where[d] = a.shape[d] - 1 - where[d]
    return _take(ctx.backend, a, tuple(where))


flip.defvjp(lambda ctx, grad: flip(grad, ctx.dims))
flip.defjvp(linear(flip))


def _dims_not_a_sequence(dims):
    raise TypeError("flip(): argument 'dims' (position 2) must be tuple of ints, not "
                    + type(dims).__name__)


@public("function", name="flip")
def flip_function(input, dims):
    """``torch.flip(input, dims)``: ``dims`` a sequence (the method also takes ints,
    ``x.flip(0, 1)``; PyTorch's function refuses them)."""
    if not isinstance(dims, (list, tuple)):
        _dims_not_a_sequence(dims)
    return flip(input, dims)


@public("function method")
def fliplr(input):
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, 1)


@public("function method")
def flipud(input):
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, 0)


@composite("roll", variants="function method")
def roll(ctx, x, shifts, dims=None):
    shifts = tuple(shifts) if isinstance(shifts, (list, tuple)) else (shifts,)
    dims = () if dims is None else tuple(dims) if isinstance(dims, (list, tuple)) else (dims,)
    if not dims and len(shifts) == 1:
        ctx.shifts, ctx.dims = shifts, None
        flat = ctx.backend.ascontiguousarray(x._data).reshape(-1)
        out = _roll(ctx.backend, flat, shifts[0], 0)
        # (a shift by a multiple of the size moves nothing: still a copy, as PyTorch's)
        return (out.copy() if out is flat else out).reshape(x.shape)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    if not x.ndim:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    dims = tuple(_dim(x, d) for d in dims)
    ctx.shifts, ctx.dims = shifts, dims
    a = x._data
    for s, d in zip(shifts, dims):
        a = _roll(ctx.backend, a, s, d)
    # (C-contiguous whatever x's layout, as PyTorch's result)
    return ctx.backend.ascontiguousarray(a) if a is not x._data else ctx.backend.ascontiguousarray(
        a.copy())


def _roll(be, a, shift, d):
    n = a.shape[d]
    if not n or not shift % n:
        return a
    s = shift % n
    head = (slice(None),) * d
    return be.concatenate([a[head + (slice(n - s, None),)], a[head + (slice(0, n - s),)]], axis=d)


roll.defvjp(lambda ctx, grad: roll(grad, tuple(-s for s in ctx.shifts), ctx.dims))
roll.defjvp(linear(roll))


@public("function method")
def narrow(input, dim, start, length):
    # (PyTorch's slice: SliceBackward0 even over the whole dim)
    return M.slice_dim(input, _narrowed(input, dim, start, length))


@composite("narrow_copy", variants="function method")
def narrow_copy(ctx, x, dim, start, length):
    """``narrow``'s elements, copied (contiguous)."""
    where = ctx.where = _narrowed(x, dim, start, length)
    out = ctx.backend.ascontiguousarray(x._data[where])
    return out.copy() if _shares(out, x._data) else out  # (a copy, even of a contiguous part)


@narrow_copy.defvjp
def narrow_copy_vjp(ctx, grad):
    return M.index_put(_zeros_like_shape(ctx.input_shapes[0], grad), ctx.where, grad)


def _narrowed(input, dim, start, length):
    """The index of ``narrow(input, dim, start, length)``'s region, with PyTorch's checks."""
    d = _dim(input, dim)
    n = input.shape[d]
    if isinstance(start, Tensor):
        start = int(start.item())
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got "
                         f"{start})")
    if start < 0:
        start += n
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return (slice(None),) * d + (slice(start, start + length),)


@composite("unbind", view=True, variants="function method")
def unbind(ctx, x, dim=0):
    if x.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = ctx.dim = _dim(x, dim)
    a = x._data
    return tuple(a[(slice(None),) * d + (i, Ellipsis)] for i in range(x.shape[d]))


unbind.defjvp(linear(unbind))


@unbind.defvjp
def unbind_vjp(ctx, grads):
    return M.stack(grads if isinstance(grads, list) else [grads], ctx.dim)


# ---------------------------------------------------------------- cumulative products


@composite("cumprod", variants="function method inplace")
def cumprod(ctx, x, dim, *, dtype=None):
    """The running products of ``x`` along ``dim`` (integer and bool products are int64)."""
    R.no_integral_node(ctx, dtype)
    ctx.dim = _dim(x, dim)
    out = D.as_dtype(dtype) if dtype is not None else (
        x.dtype if x.dtype.is_floating_point else D.int64)
    R.no_bool_scan("cumprod", x, out)
    a = _host(ctx, x).astype(out.np, copy=False)
    ctx.save(x=x)
    ctx.save_outputs = {"result": 0}
    if x.ndim == 0:
        return _device(ctx, a.copy())
    # (C-contiguous whatever x's layout, as PyTorch's result; NumPy's product of bools or
    # small integers is int64)
    return _device(ctx, np.ascontiguousarray(_accumulated(np.cumprod, a, ctx.dim),
                                             dtype=out.np))


cumprod.inplace_check = R.same_dtype_inplace


@cumprod.defvjp
def cumprod_vjp(ctx, grad):
    x, result, d = ctx["x"], ctx["result"], ctx.dim
    if x.numel() <= 1 or x.shape[d] == 1:
        # (PyTorch's cumprod_backward: the gradient itself, not recorded on x, for one element
        # or a dim of one)
        return grad
    with no_grad():
        zero = x == 0
        has_zero = bool(zero.any())
    if not has_zero:
        return R.rcumsum(grad * result, d) / x
    if is_grad_enabled():
        return _cumprod_vjp_products(x, grad, d)
    # dL/dx_i = sum_{k >= i} g_k prod_{j <= k, j != i} x_j. With z the first zero of a slice:
    # before z that is the zero-free formula cut at z; at z, the prefix product before z
    # times the running products after z; past z every term holds x_z = 0
    n = x.shape[d]
    shape = [1] * x.ndim
    shape[d] = n
    pos = M.reshape(arange(n, device=x.device), shape)
    with no_grad():
        z = R.amin(E.where(zero, pos, n), d, True)
    before = pos < z
    g_before = E.where(before, R.rcumsum(E.where(before, grad * result, 0), d)
                       / E.where(before, x, 1), 0)
    after = cumprod(E.where(pos > z, x, 1), d)
    prefix = R.prod(E.where(before, x, 1), d, True)
    at_z = R.sum(E.where(pos >= z, grad * after, 0), d, True) * prefix
    return g_before + E.where(pos == z, at_z, 0)


def _cumprod_vjp_products(x, grad, d):
    """The gradient with every product written out, for a backward that is itself recorded
    (``create_graph``) over an input holding zeros: ``dL/dx_i = sum_{k >= i} g_k p_ik`` with
    ``p_ik`` the product of ``x_j`` for ``j <= k, j != i``, an (n, n) matrix per slice. The
    zero-case formula above drops terms that are 0 in value but not in derivative."""
    xm, gm = M.transpose(x, d, -1), M.transpose(grad, d, -1)
    n = xm.shape[-1]
    pos = arange(n, device=x.device)
    row, col = M.unsqueeze(pos, -1), M.unsqueeze(pos, 0)
    # row i: x with x_i replaced by 1; its running products are p_i.
    rows = E.where(row == col, 1, M.unsqueeze(xm, -2).expand(*xm.shape[:-1], n, n))
    p = cumprod(rows, -1)
    g = R.sum(E.where(col >= row, M.unsqueeze(gm, -2) * p, 0), -1)
    return M.transpose(g, d, -1)


# ---------------------------------------------------------------- sorts and selections


def _laid_out_like(a, values):
    """Host array ``values`` (``a``'s shape) copied into the layout PyTorch's clone of ``a``
    has (``layout.clone_strides``: a transposed array's is transposed)."""
    if a.flags.c_contiguous and values.flags.c_contiguous:
        # (a view of ``a`` looks contiguous when the dims it reverses have size 1)
        return values.copy() if np.may_share_memory(a, values) else values
    strides = _layout.clone_strides(a.shape, [st // a.itemsize for st in a.strides])
    out = cpu.empty_strided(a.shape, strides, values.dtype)
    np.copyto(out, values)
    return out


def _sort_host(a, d, descending):
    """Stable (values, indices) of host array ``a`` along ``d``; NaN counts as the largest."""
    return cpu.select(a, d, a.shape[d], descending)


def _selected(ctx, x, dim, name, node):
    """Common setup of the ops whose values are elements of ``x`` picked by indices."""
    d = ctx.dim = _dim(x, dim)
    ctx.node_name = node
    ctx.non_differentiable = (1,)
    named = R._named(name)
    ctx.wrap = lambda outs: named(*outs)
    ctx.save_outputs = {"indices": 1}
    return d


def _selected_vjp(ctx, grads):
    """Each value's gradient goes back to the element its index names (PyTorch's
    value_selecting_reduction_backward)."""
    grad, idx = grads[0], ctx["indices"]
    shape = ctx.input_shapes[0]
    if not shape and not _grad_state.enabled:
        return grad  # (a 0-d input's one element; recorded, PyTorch scatters it all the same)
    if not getattr(ctx, "keepdim", True):
        grad, idx = M.unsqueeze(grad, ctx.dim), M.unsqueeze(idx, ctx.dim)
    return scatter(_zeros_like_shape(shape, grad), ctx.dim, idx, grad)


class _NoStable:
    """sort's ``stable`` when not given (see ``sort_op``)."""

    def __repr__(self):
        return "None"


_NO_STABLE = _NoStable()


@composite("sort", node="SortBackward0")
def sort_op(ctx, x, dim=-1, descending=False, stable=_NO_STABLE):
    # (a ``stable`` given, even False or None, picks PyTorch's sort.stable overload, whose node
    # is SortBackward1; the sort itself is stable either way, as PyTorch's CPU sort is)
    d = _selected(ctx, x, dim, "sort", "SortBackward0" if stable is _NO_STABLE
                  else "SortBackward1")
    if x.ndim == 0:
        return _device(ctx, (_host(ctx, x).copy(), np.zeros((), np.int64)))
    a = _host(ctx, x)
    # (values and indices laid out as x's clone, as PyTorch's)
    return _device(ctx, tuple(_laid_out_like(a, r) for r in _sort_host(a, d, descending)))


sort_op.defvjp(_selected_vjp)


# PyTorch's two overloads of sort and argsort: dim and descending by position or keyword, or
# ``stable`` (a keyword) with dim and descending by keyword only
_SORT_FUNCTION = (
    "(Tensor input, *, bool stable, int dim = -1, bool descending = False, "
    "tuple of Tensors out = None)",
    "(Tensor input, int dim = -1, bool descending = False, *, tuple of Tensors out = None)")
_SORT_METHOD = ("(*, bool stable, int dim = -1, bool descending = False)",
                "(int dim = -1, bool descending = False)")
_ARGSORT_FUNCTION = ("(Tensor input, *, bool stable, int dim = -1, bool descending = False)",
                     "(Tensor input, int dim = -1, bool descending = False)")


def _sort_params(dim=-1, descending=False, stable=_NO_STABLE):
    return dim, descending, stable


def _sort_arguments(name, signatures, args, kwargs, parsed):
    """(dim, descending, stable) of a call of sort or argsort with ``args`` after the input
    and ``kwargs``; a call none of PyTorch's overloads takes raises its parser's TypeError
    (``parsed``: the arguments as its parser counts them, the input among them for the
    function)."""
    if len(args) > 2 or (args and "stable" in kwargs):
        _overloads.check(name, parsed, kwargs, signatures)
    try:
        return _sort_params(*args, **kwargs)
    except TypeError:
        _overloads.check(name, parsed, kwargs, signatures)
        raise


def _sort_method(self, *args, **kwargs):
    return sort_op(self, *_sort_arguments("sort", _SORT_METHOD, args, kwargs, args))


@public("function method", method=_sort_method)
def sort(input, *args, **kwargs):
    return sort_op(input, *_sort_arguments("sort", _SORT_FUNCTION, args, kwargs,
                                           (input, *args)))


@public("function method")
def msort(input):
    """``input`` sorted along its first dim."""
    return sort_op(input, 0).values


def _cumulative_extreme(ctx, x, dim, name, better):
    """(values, indices) of the running maximum or minimum along ``dim``: an element takes
    over where ``better(it, current)`` (ties included: the last of equal values), and a NaN
    takes over and stays, as PyTorch's cummax and cummin."""
    d = _selected(ctx, x, dim, name, name.capitalize() + "Backward0")
    ctx.save(x=x)  # (PyTorch's node saves the input: writing into it before backward is an error)
    a = _host(ctx, x)
    if x.ndim == 0:
        return _device(ctx, (a.copy(), np.zeros((), np.int64)))
    rows = np.moveaxis(a, d, 0)
    values, indices = np.empty_like(rows), np.zeros(rows.shape, np.int64)
    if len(rows):
        current, at = rows[0], indices[0]
        for i, row in enumerate(rows):
            take = better(row, current) | (row != row)
            current, at = np.where(take, row, current), np.where(take, i, at)
            values[i], indices[i] = current, at
    return _device(ctx, (np.ascontiguousarray(np.moveaxis(values, 0, d)),
                         np.ascontiguousarray(np.moveaxis(indices, 0, d))))


def _cumulative_extreme_vjp(ctx, grads):
    """Each value's gradient added into the element its index names (PyTorch's
    cummaxmin_backward: several values may name one element)."""
    grad, idx = grads[0], ctx["indices"]
    x = ctx["x"]  # (checked against in-place writes, as PyTorch unpacks it)
    shape = ctx.input_shapes[0]
    if 0 in shape:
        return x  # (PyTorch's cummaxmin_backward hands back the empty input itself)
    return scatter_add(_zeros_like_shape(shape, grad), ctx.dim, idx, grad)


@composite("cummax", variants="function method")
def cummax(ctx, x, dim):
    return _cumulative_extreme(ctx, x, dim, "cummax", np.greater_equal)


@composite("cummin", variants="function method")
def cummin(ctx, x, dim):
    return _cumulative_extreme(ctx, x, dim, "cummin", np.less_equal)


cummax.defvjp(_cumulative_extreme_vjp)
cummin.defvjp(_cumulative_extreme_vjp)


@composite("logcumsumexp", variants="function method")
def logcumsumexp(ctx, x, dim):
    """``log(cumsum(exp(x)))`` along ``dim``, without overflow."""
    d = ctx.dim = _dim(x, dim)
    if not x.dtype.is_floating_point:
        raise NotImplementedError('"logcumsumexp_out_cpu" not implemented for '
                                  f"'{D.SCALAR_TYPE[x.dtype.name]}'")
    ctx.save(x=x)
    ctx.save_outputs = {"result": 0}
    a = _host(ctx, x)
    # (C-contiguous whatever x's layout, as PyTorch's result)
    return _device(ctx, a.copy() if x.ndim == 0
                   else np.ascontiguousarray(_accumulated(np.logaddexp.accumulate, a, d)))


def _accumulated(scan, a, axis):
    """``scan(a, axis=axis)``, a running sum or product, carried in float64 for a float32
    ``a`` and each running value rounded: PyTorch's CPU scans accumulate in its acc_type
    (over 1e5 elements a float32 running value drifts by 1e-4 of itself)."""
    if a.dtype == np.float32:
        return scan(a.astype(np.float64), axis=axis).astype(np.float32)
    return scan(a, axis=axis)


@logcumsumexp.defjvp
def logcumsumexp_jvp(result, tangents, x, dim):
    # PyTorch's logcumsumexp_jvp: cumsum(exp(x - max) * t) / (cumsum(exp(x - max)) + 1e-13);
    # the 1e-13 keeps a leading run of elements far below the max (exp 0: the backward's
    # ``lowest`` entries) at 0 instead of 0 / 0
    t = tangents[0]
    if t is None or x.ndim == 0:
        return t
    d = _wrap_dim(dim, x.ndim)
    e = E.exp(x - x.amax(d, keepdim=True))
    return (e * t).cumsum(d) / (e.cumsum(d) + 1e-13)


@logcumsumexp.defvjp
def logcumsumexp_vjp(ctx, grad):
    # PyTorch's logcumsumexp_backward: sum_{k >= i} g_k exp(x_i - result_k), with the positive
    # and the negative parts of g each summed in log space (no overflow, no cancellation)
    x, result, d = ctx["x"], ctx["result"], ctx.dim
    if x.ndim == 0 or x.numel() == 0:
        return grad  # (PyTorch's hands an empty gradient on as it is)
    lowest = float(np.finfo(grad.dtype.np).min)
    log_abs = E.log(E.abs(grad))

    def summed_from_the_end(t):
        return flip(logcumsumexp(flip(t, d), d), d)

    positive = summed_from_the_end(E.where(grad > 0, log_abs, lowest) - result)
    negative = summed_from_the_end(E.where(grad < 0, log_abs, lowest) - result)
    return E.exp(positive + x) - E.exp(negative + x)


def _argsort(input, dim, descending, stable):
    if stable is _NO_STABLE:
        stable = False
    if not isinstance(stable, bool):  # (a bool, unlike sort's optional one)
        raise TypeError("argsort(): argument 'stable' must be bool, not "
                        + type(stable).__name__)
    return sort_op(input, dim, descending, stable if stable else _NO_STABLE).indices


def _argsort_method(self, *args, **kwargs):
    return _argsort(self, *_sort_arguments("argsort", _SORT_METHOD, args, kwargs, args))


@public("function method", method=_argsort_method)
def argsort(input, *args, **kwargs):
    return _argsort(input, *_sort_arguments("argsort", _ARGSORT_FUNCTION, args, kwargs,
                                            (input, *args)))


@composite("topk", node="TopkBackward0", variants="function method")
def topk(ctx, x, k, dim=-1, largest=True, sorted=True):
    d = _selected(ctx, x, dim, "topk", "TopkBackward0")
    _no_bool(x, "topk")
    n = x.shape[d] if x.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    if x.ndim == 0:
        return _device(ctx, (_host(ctx, x).copy(), np.zeros((), np.int64)))
    return _device(ctx, cpu.select(_host(ctx, x), d, k, largest))  # (sorted=False too)


topk.defvjp(_selected_vjp)


def _kth(ctx, x, k, d, keepdim, nan_wins=False):
    """The ``k``-th smallest along ``d`` (NaN the largest) and its index; with ``nan_wins``
    (median's rule), a slice holding NaN gives NaN and the index of its first NaN."""
    ctx.keepdim = keepdim
    if x.ndim == 0:
        return _device(ctx, (_host(ctx, x).copy(), np.zeros((), np.int64)))
    a = _host(ctx, x)
    values, idx = cpu.select(a, d, k + 1, False)  # (the stable sort's first k + 1)
    pick = (slice(None),) * d + (slice(k, k + 1) if keepdim else k,)
    values, idx = np.array(values[pick]), np.array(idx[pick])  # (0-d stays 0-d)
    if not nan_wins:
        idx = _kth_tie_indices(a, k, d, keepdim, values, idx)
    if nan_wins and a.dtype.kind == "f":
        nan = np.isnan(a)
        if nan.any():
            has = nan.any(axis=d, keepdims=keepdim)
            values = np.array(np.where(has, np.nan, values), dtype=a.dtype)
            idx = np.array(np.where(has, nan.argmax(axis=d, keepdims=keepdim), idx))
    return _device(ctx, (values, idx))


def _kth_tie_indices(a, k, d, keepdim, values, idx):
    """kthvalue's indices where the k-th smallest value of a slice occurs more than once: the
    one PyTorch's quick select ends on (its index is the stable sort's elsewhere)."""
    v = values if keepdim else np.expand_dims(values, d)
    same = (a == v) | (np.isnan(a) & np.isnan(v)) if a.dtype.kind == "f" else a == v
    tied = np.count_nonzero(same, axis=d) > 1
    if not tied.any():
        return idx
    rows = np.moveaxis(a, d, -1)
    out = np.array(idx)
    flat = out.reshape(-1) if out.ndim else out.reshape(1)
    for pos in zip(*np.nonzero(tied)) if tied.ndim else [()]:
        where = np.ravel_multi_index(pos, tied.shape) if tied.ndim else 0
        flat[where] = _quick_select(rows[pos].tolist(), k)
    return out


def _quick_select(row, k):
    """The index ATen's ``quick_select_template`` leaves at position ``k`` of ``row`` (median of
    three pivots, NaN the largest; SortingUtils.h): kthvalue's choice among equal values."""

    def gt(x, y):  # (x != x: NaN)
        return (x != x and y == y) or x > y

    arr, ind = list(row), list(range(len(row)))

    def swap(i, j):
        arr[i], arr[j] = arr[j], arr[i]
        ind[i], ind[j] = ind[j], ind[i]

    lo, hi = 0, len(arr) - 1
    while hi > lo:
        if hi == lo + 1:
            if gt(arr[lo], arr[hi]):
                swap(lo, hi)
            break
        swap(lo + (hi - lo) // 2, lo + 1)
        if gt(arr[lo + 1], arr[hi]):
            swap(lo + 1, hi)
        if gt(arr[lo], arr[hi]):
            swap(lo, hi)
        if gt(arr[lo + 1], arr[lo]):
            swap(lo + 1, lo)
        i, j, pivot = lo + 1, hi, arr[lo]
        while True:
            i += 1
            while gt(pivot, arr[i]):
                i += 1
            j -= 1
            while gt(arr[j], pivot):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return ind[k]


def _no_bool(x, kernel):
    """PyTorch's error for the order statistics it has no bool kernel for."""
    if x.dtype is D.bool_:
        if kernel == "topk":
            raise RuntimeError("topk does not support bool dtypes on CPU")
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


@composite("kthvalue", variants="function method")
def kthvalue(ctx, x, k, dim=-1, keepdim=False):
    d = _selected(ctx, x, dim, "kthvalue", "KthvalueBackward0")
    if x.ndim and x.shape[d] == 0:  # (checked before the kernel is looked for)
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if x.ndim:  # (a 0-d tensor runs no kernel)
        _no_bool(x, "kthvalue_cpu")
    if not 1 <= k <= (x.shape[d] if x.ndim else 1):
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return _kth(ctx, x, k - 1, d, keepdim)


kthvalue.defvjp(_selected_vjp)


@composite("median_dim", node="MedianBackward1")
def median_dim(ctx, x, dim, keepdim=False):
    d = _selected(ctx, x, dim, "median", "MedianBackward1")
    n = x.shape[d] if x.ndim else 1
    R._check_nonempty(x, (d,) if x.ndim else (), "median")
    _no_bool(x, "median_out")
    # the lower of the two middle values; NaN where a slice holds one
    return _kth(ctx, x, (n - 1) // 2, d, keepdim, nan_wins=True)


median_dim.defvjp(_selected_vjp)


@composite("median_all", node="MedianBackward0")
def median_all(ctx, x):
    ctx.save(x=x)
    ctx.save_outputs = {"result": 0}
    if x.numel() == 0:  # (before any kernel: an empty bool tensor too)
        return _device(ctx, np.asarray(_empty_median(x), x.dtype.np))
    _no_bool(x, "median_cpu")
    flat = np.sort(_host(ctx, x).reshape(-1), kind="stable")
    # (NaN sorts last; a NaN anywhere makes the median NaN, as PyTorch's)
    nan = flat.dtype.kind == "f" and np.isnan(flat[-1])
    return _device(ctx, np.asarray(flat[-1] if nan else flat[(flat.size - 1) // 2]))


median_all.defvjp(R._all_backward)  # (shared evenly by equal elements, as PyTorch's)


def _empty_median(x):
    """The median of no elements: NaN, which PyTorch casts to an integer dtype as C does on
    x86: through a 32-bit int (its lowest value), so the types of 32 bits and more get their
    lowest value and the narrower ones that value's low bits, 0."""
    if x.dtype is D.bool_:
        return True
    if x.dtype.is_floating_point:
        return np.nan
    info = np.iinfo(x.dtype.np)
    return info.min if info.bits >= 32 else 0


@public("function method")
def median(input, dim=None, keepdim=False):
    return median_all(input) if dim is None else median_dim(input, dim, keepdim)


def _numbers(a):
    """Where host array ``a`` holds a number (not NaN)."""
    return ~np.isnan(a) if a.dtype.kind == "f" else np.ones(a.shape, bool)


@composite("nanmedian_dim", node="NanmedianBackward1")
def nanmedian_dim(ctx, x, dim, keepdim=False):
    d = _selected(ctx, x, dim, "nanmedian", "NanmedianBackward1")
    R._check_nonempty(x, (d,) if x.ndim else (), "median")  # (PyTorch's name for it)
    _no_bool(x, "median_out")
    ctx.keepdim = keepdim
    a = _host(ctx, x)
    if x.ndim == 0:
        return _device(ctx, (a.copy(), np.zeros((), np.int64)))
    values, idx = _sort_host(a, d, False)  # (NaNs last)
    # the lower middle of each row's numbers; a row of NaNs: its first NaN
    at = np.maximum((np.sum(_numbers(a), axis=d, keepdims=True) - 1) // 2, 0)
    values, idx = np.take_along_axis(values, at, d), np.take_along_axis(idx, at, d)
    if not keepdim:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return _device(ctx, (np.array(values, order="C"), np.array(idx, order="C")))


nanmedian_dim.defvjp(_selected_vjp)


@composite("nanmedian_all", node="NanmedianBackward0")
def nanmedian_all(ctx, x):
    if x.numel():
        _no_bool(x, "median_cpu")
    flat = _host(ctx, x).reshape(-1)
    flat = np.sort(flat[_numbers(flat)], kind="stable")
    ctx.save(x=x)
    ctx.save_outputs = {"result": 0}
    if not flat.size:  # (no numbers: NaN)
        return _device(ctx, np.asarray(_empty_median(x), x.dtype.np))
    return _device(ctx, np.asarray(flat[(flat.size - 1) // 2]))


nanmedian_all.defvjp(R._all_backward)  # (shared by equal elements, or by the NaNs)


@public("function method")
def nanmedian(input, dim=None, keepdim=False):
    """``median`` of the elements that are not NaN."""
    return nanmedian_all(input) if dim is None else nanmedian_dim(input, dim, keepdim)


@composite("mode", node="ModeBackward0", variants="function method")
def mode(ctx, x, dim=-1, keepdim=False):
    """The most frequent value along ``dim`` (the smallest of equally frequent ones) and the
    index of its last occurrence."""
    d = _selected(ctx, x, dim, "mode", "ModeBackward0")
    ctx.keepdim = keepdim
    a = _host(ctx, x)
    if x.ndim == 0:
        return _device(ctx, (a.copy(), np.zeros((), np.int64)))
    n = a.shape[d]
    if n == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    values, idx = _sort_host(a, d, False)
    rows, where = np.moveaxis(values, d, -1), np.arange(n)
    starts = np.ones(rows.shape, bool)
    starts[..., 1:] = rows[..., 1:] != rows[..., :-1]
    ends = np.ones(rows.shape, bool)
    ends[..., :-1] = starts[..., 1:]
    # each run's length at its last element (a stable sort: the value's last occurrence);
    # argmax takes the first of the longest runs, the smallest value
    first = np.maximum.accumulate(np.where(starts, where, 0), axis=-1)
    at = np.expand_dims(np.argmax(np.where(ends, where - first + 1, 0), axis=-1), d)
    values, idx = np.take_along_axis(values, at, d), np.take_along_axis(idx, at, d)
    if a.dtype.kind == "f" and n <= 16:
        # slices holding NaN: PyTorch's std::sort (an insertion sort up to 16 elements) with
        # ``<`` leaves NaN in place, and its runs end wherever neighbours differ (NaN differs
        # from everything)
        nan = np.isnan(np.moveaxis(a, d, -1))
        if nan.any():
            rows_a = np.moveaxis(a, d, -1)
            v_out, i_out = np.moveaxis(values, d, -1), np.moveaxis(idx, d, -1)
            has = nan.any(-1)
            for pos in (zip(*np.nonzero(has)) if has.ndim else [()]):
                v_out[pos + (0,)], i_out[pos + (0,)] = _mode_of_small(rows_a[pos].tolist())
    if not keepdim:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return _device(ctx, (np.array(values, order="C"), np.array(idx, order="C")))


def _mode_of_small(row):
    """(value, index) of PyTorch's CPU mode of ``row`` (16 elements or fewer): its pairs
    sorted by value with libstdc++'s insertion sort and ``<`` (NaN stays where it is), then
    the first longest run of neighbours that compare equal, at its last element."""
    elems = [(v, k) for k, v in enumerate(row)]
    for i in range(1, len(elems)):
        val = elems[i]
        if val[0] < elems[0][0]:
            elems[1:i + 1] = elems[0:i]
            elems[0] = val
            continue
        j = i
        while j > 0 and val[0] < elems[j - 1][0]:
            elems[j] = elems[j - 1]
            j -= 1
        elems[j] = val
    best, best_at, run = 0, 0, 0
    for i, (v, _) in enumerate(elems):
        run += 1
        if i == len(elems) - 1 or v != elems[i + 1][0]:
            if run > best:
                best, best_at = run, i
            run = 0
    return elems[best_at]


mode.defvjp(_selected_vjp)


# ---------------------------------------------------------------- einsum


@public("function")
def einsum(equation, *operands):
    """Einstein summation, composed of differentiable ops (diagonal, sum, permute, reshape,
    matmul), so its backward comes with them; its ``grad_fn`` names are theirs, not PyTorch's.
    The ops to run are planned once per equation and operand shapes (``_einsum_plan``)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    key = (equation, *[t.shape for t in operands])
    plan = _einsum_plans.get(key)
    if plan is None:
        plan = _einsum_plan(equation, operands)
        if len(_einsum_plans) >= 256:  # (bounded: the oldest plan goes)
            del _einsum_plans[next(iter(_einsum_plans))]
        _einsum_plans[key] = plan
    prep, pairs, finish = plan
    t = _einsum_run(operands[0], prep[0])
    if pairs:
        # (each product of two (batch, m, k) and (batch, k, n) operands: bmm, as PyTorch's
        # einsum calls it; matmul would add an expand and a view of its own to each)
        bmm = REGISTRY["bmm"]
        for k, (steps_a, steps_b, steps_out) in enumerate(pairs):
            b = _einsum_run(operands[k + 1], prep[k + 1])
            t = _einsum_run(bmm(_einsum_run(t, steps_a), _einsum_run(b, steps_b)), steps_out)
    return _einsum_run(t, finish)


_einsum_plans: dict = {}


def _einsum_run(t, steps):
    for fn, args in steps:
        t = fn(t, *args)
    return t


def _einsum_plan(equation, operands):
    """The ops ``einsum`` runs for these operands' shapes, as lists of ``(op, args)`` steps:
    (per operand its diagonals, per pair contracted (each side's steps, then the product's),
    the result's). Reshapes, expands and permutes that would change nothing are left out
    (2.5 to 4 us a call). Raises PyTorch's errors for an equation that does not fit."""
    lhs, arrow, out = equation.replace(" ", "").partition("->")
    terms = lhs.split(",")
    if len(terms) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    n_ell = max((t.ndim - len(s.replace("...", "")) for s, t in zip(terms, operands)
                 if "..." in s), default=0)
    ell = "".join(chr(0x100 + k) for k in range(n_ell))  # letters no equation uses
    specs = []
    for s, t in zip(terms, operands):
        if "..." in s:
            k = t.ndim - len(s.replace("...", ""))
            s = s.replace("...", ell[n_ell - k:])
        if len(s) != t.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(s)}) "
                               f"does not match the number of dimensions ({t.ndim}) for operand "
                               f"{len(specs)}" + ("" if "..." in s else " and no ellipsis was "
                                                  "given"))
        specs.append(s)
    if arrow:
        out = out.replace("...", ell)
    else:
        counts = {}
        for s in specs:
            for c in s:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c in counts if counts[c] == 1 and c not in ell))
    sizes = {}
    for k, (s, t) in enumerate(zip(specs, operands)):
        own = {}
        for c, n in zip(s, t.shape):
            if own.setdefault(c, n) != n:
                raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {k} but the "
                                   f"sizes don't match, {n} != {own[c]}")
            if sizes.get(c, 1) != 1 and n not in (1, sizes[c]):
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {k} which "
                                   f"does not broadcast with previously seen size {sizes[c]}")
            if n != 1 or c not in sizes:
                sizes[c] = n
    prep = [[] for _ in operands]
    items = [_einsum_diagonals(tuple(t.shape), s, steps)
             for s, t, steps in zip(specs, operands, prep)]
    (shape, s), pairs = items[0], []
    for k in range(1, len(items)):
        later = out + "".join(x for _, x in items[k + 1:])
        pairs.append(([], [], []))
        shape, s = _einsum_pair(shape, s, *items[k], later, sizes, *pairs[-1])
    finish = []
    _einsum_finish(shape, s, out, finish)
    return prep, pairs, finish


def _einsum_diagonals(shape, s, steps):
    """The steps taking repeated subscripts of ``s`` along their diagonal: (shape, letters)
    after them."""
    while len(set(s)) < len(s):
        c = next(c for c in s if s.count(c) > 1)
        i = s.index(c)
        j = s.index(c, i + 1)
        steps.append((diagonal, (0, i, j)))
        shape = shape[:i] + shape[i + 1:j] + shape[j + 1:] + (shape[i],)
        s = s[:i] + s[i + 1:j] + s[j + 1:] + c
    return shape, s


def _einsum_finish(shape, s, out, steps):
    """The steps summing the letters of ``s`` not in ``out`` and ordering the rest as
    ``out``: the shape after them."""
    gone = tuple(k for k, c in enumerate(s) if c not in out)
    if gone:
        steps.append((R.sum, (gone,)))
        shape = tuple(n for k, n in enumerate(shape) if k not in gone)
        s = "".join(c for c in s if c in out)
    if s != out:
        order = tuple(s.index(c) for c in out)
        steps.append((M.permute, (order,)))
        shape = tuple(shape[k] for k in order)
    return shape


def _einsum_pair(sha, sa, shb, sb, later, sizes, steps_a, steps_b, steps_out):
    """The steps contracting two operands: the letters both have and nothing later needs
    are summed by one batched product (bmm) of 3-d operands. (shape, letters) of the
    product."""
    keep_a = "".join(c for c in sa if c in sb or c in later)
    keep_b = "".join(c for c in sb if c in sa or c in later)
    sha, sa = _einsum_finish(sha, sa, keep_a, steps_a), keep_a
    shb, sb = _einsum_finish(shb, sb, keep_b, steps_b), keep_b
    batch = [c for c in sa if c in sb and c in later]
    summed = [c for c in sa if c in sb and c not in later]
    only_a = [c for c in sa if c not in sb]
    only_b = [c for c in sb if c not in sa]

    def arrange(shape, s, order, steps):
        perm = tuple(s.index(c) for c in order)
        if perm != tuple(range(len(perm))):
            steps.append((M.permute, (perm,)))
            shape = tuple(shape[k] for k in perm)
        # (a size-1 dim of one operand broadcast to the other's)
        wanted = tuple(sizes[c] if c in sa and c in sb else shape[k] for k, c in enumerate(order))
        if wanted != shape:
            steps.append((M.expand, (list(wanted),)))
        return wanted

    sha = arrange(sha, sa, batch + only_a + summed, steps_a)
    shb = arrange(shb, sb, batch + summed + only_b, steps_b)
    nb = [sizes[c] for c in batch]
    na, ns, nbo = (math.prod(sha[len(batch):len(batch) + len(only_a)]),
                   math.prod(sizes[c] for c in summed),
                   math.prod(shb[len(batch) + len(summed):]))
    # (each operand as bmm takes it: (batch, rows, columns))
    for shape, steps, three in ((sha, steps_a, [math.prod(nb), na, ns]),
                                (shb, steps_b, [math.prod(nb), ns, nbo])):
        if tuple(three) != shape:
            steps.append((M.reshape, (three,)))
    shape = nb + list(sha[len(batch):len(batch) + len(only_a)]) + list(
        shb[len(batch) + len(summed):])
    if tuple(shape) != (math.prod(nb), na, nbo):
        steps_out.append((M.reshape, (shape,)))
    return tuple(shape), "".join(batch + only_a + only_b)


# ---------------------------------------------------------------- counting
# (the results' sizes depend on the values: computed on the host, like nonzero)


@public("function method")
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values (or slices along ``dim``) in ascending order, with the index of
    each element's value (``return_inverse``) and each value's count (``return_counts``), as
    int64 tensors. (The values come sorted also for ``sorted=False``.)"""
    dev = input.device
    a = input._host()
    if dim is None:
        values, inverse, counts = np.unique(a.reshape(-1), return_inverse=True,
                                            return_counts=True)
        inverse = inverse.reshape(a.shape)
    else:
        d = _wrap_dim(dim, a.ndim)
        values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True, axis=d)
        inverse = inverse.reshape(-1)

    return _unique_results(dev, values, inverse, counts, return_inverse, return_counts)


def _unique_results(dev, values, inverse, counts, return_inverse, return_counts):
    """``unique``'s result: the values, then the inverse and the counts asked for (int64)."""

    def out(v, dtype):
        return Tensor._make(_on(np.ascontiguousarray(v, dtype), dev))

    res = (out(values, values.dtype),)
    if return_inverse:
        res += (out(inverse, np.int64),)
    if return_counts:
        res += (out(counts, np.int64),)
    return res[0] if len(res) == 1 else res


@public("function method")
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """The values (or slices along ``dim``) with each run of equal neighbours kept once, with
    the index of each element's run (``return_inverse``) and each run's length
    (``return_counts``)."""
    a = input._host()
    if dim is None:
        rows = a.reshape(-1)
        changed = rows[1:] != rows[:-1]
    else:
        d = _wrap_dim(dim, a.ndim)
        rows = np.moveaxis(a, d, 0)
        changed = (rows[1:] != rows[:-1]).reshape(max(len(rows) - 1, 0), -1).any(axis=1)
    run = np.cumsum(np.concatenate([[0], changed]).astype(np.int64)) if len(rows) else (
        np.zeros(0, np.int64))
    starts = np.flatnonzero(np.concatenate([[True], changed])) if len(rows) else run
    values = rows[starts] if dim is None else np.moveaxis(rows[starts], 0, d)
    counts = np.diff(np.append(starts, len(rows)))
    inverse = run.reshape(a.shape) if dim is None else run
    return _unique_results(input.device, values, inverse, counts, return_inverse,
                           return_counts)


@public("function method")
def bincount(input, weights=None, minlength=0):
    """How often each non-negative integer occurs in the 1-d ``input`` (int64), or the sum of
    its ``weights`` (float32 weights give float32, others float64)."""
    if input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"bincount_cpu\" not implemented for '{R._TYPE[input.dtype.name]}'")
    if input.ndim != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    a = input._host()
    if a.size and a.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        out = np.bincount(a, minlength=minlength).astype(np.int64)
    else:
        if weights.ndim != 1 or weights.shape[0] != a.shape[0]:
            raise RuntimeError("weights should be 1-d and have the same length as input")
        dtype = np.float32 if weights.dtype is D.float32 else np.float64
        out = np.bincount(a, weights=weights._host().astype(np.float64),
                          minlength=minlength).astype(dtype)
    return Tensor._make(_on(out, input.device))


@public("function method")
def histc(input, bins=100, min=0, max=0):
    """A histogram of ``bins`` equal bins between ``min`` and ``max`` (the data's own range
    when both are 0; values outside are not counted), of ``input``'s float dtype."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"histogram_cpu\" not implemented for '{R._TYPE[input.dtype.name]}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    a = input._host().reshape(-1)
    lo, hi = float(min), float(max)
    if lo == hi and a.size:
        lo, hi = float(a.min()), float(a.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    a = a[(a >= lo) & (a <= hi)]
    # PyTorch's bin of x: (x - min) * bins / (max - min), the maximum in the last bin
    pos = ((a - lo) * bins / (hi - lo)).astype(np.int64)
    pos[pos == bins] = bins - 1
    out = np.bincount(pos, minlength=bins).astype(input._data.dtype)
    return Tensor._make(_on(out, input.device))


@public("function method")
def histogram(input, bins, *, range=None, weight=None, density=False):
    """A histogram of every value of ``input``: ``bins`` equal bins over ``range`` (the data's
    own, widened by 0.5 where it is one value), or the edges a 1-d tensor ``bins`` gives; the
    last bin is closed. (hist, bin_edges) in ``input``'s float dtype, PyTorch's
    ``return_types.histogram``: NumPy's ``histogram``, which bins as PyTorch does."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"histogramdd\" not implemented for '{R._TYPE[input.dtype.name]}'")
    dt = input._data.dtype
    name = D.C_TYPE[input.dtype.name]
    a = input._host().reshape(-1)
    if isinstance(bins, Tensor):
        if bins.ndim != 1:
            raise RuntimeError("torch.histogramdd: bins tensor should have one dimension, but "
                               f"got {bins.ndim} dimensions in the bins tensor for dimension 0")
        if bins.dtype is not input.dtype:
            raise RuntimeError(
                "torch.histogramdd: input tensor and bins tensors should have the same dtype, "
                f"but got input with dtype {name} and bins for dimension 0 with dtype "
                f"{D.C_TYPE[bins.dtype.name]}")
        edges = bins._host()
    else:
        if bins <= 0:
            raise RuntimeError(
                f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
        if range is not None and range[0] > range[1]:
            raise RuntimeError("torch.histogramdd: min should not exceed max, but got min "
                               f"{range[0]:g} max {range[1]:g} for dimension 0")
        edges = int(bins)
    w = None
    if weight is not None:
        if weight.dtype is not input.dtype:
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided, input tensor and weight "
                f"tensor should have the same dtype, but got input({name}), and "
                f"weight({D.C_TYPE[weight.dtype.name]})")
        if tuple(weight.shape) != tuple(input.shape):
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided it should have the same shape "
                "as the input tensor excluding its innermost dimension, but got input with "
                f"shape {[a.size, 1]} and weight with shape {list(weight.shape)}")
        w = weight._host().reshape(-1)
    hist, edges = np.histogram(a, edges, range=range, weights=w, density=density)
    return R._named("histogram", ("hist", "bin_edges"))(
        Tensor._make(_on(hist.astype(dt), input.device)),
        Tensor._make(_on(edges.astype(dt), input.device)))


@public("function method")
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element (or slice along ``dim``) repeated ``repeats`` times in place; with
    ``input`` alone (int64 counts), the indices ``0, 1, ...`` each repeated that often.
    A gather by index, so its backward is index_select's."""
    if repeats is None:
        counts = input._host()
        if input.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if counts.size and counts.min() < 0:
            raise RuntimeError("repeats can not be negative")
        return Tensor._make(_on(np.repeat(np.arange(counts.size, dtype=np.int64), counts),
                                input.device))
    if isinstance(repeats, (list, tuple)):  # (PyTorch takes an int or a Tensor)
        raise TypeError("repeat_interleave() received an invalid combination of arguments - got "
                        f"({type(repeats).__name__}, ...), but expected one of: (Tensor repeats, "
                        "int dim = None, *, int output_size = None), (int repeats, int dim = "
                        "None, *, int output_size = None)")
    if dim is None:
        input, dim = M.reshape(input, [-1]), 0
    if not isinstance(repeats, (Tensor, list, tuple, np.ndarray)):
        # a number of repeats: PyTorch's expand, copy and flatten (its nodes ViewBackward0,
        # CloneBackward0, ExpandBackward0), not the gather of the per-element counts below
        d = _wrap_dim(dim, max(input.ndim, 1))
        repeats = operator.index(repeats)
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        out = M.unsqueeze(input, d + 1)
        shape = list(out.shape)
        shape[d + 1] = repeats
        out = M.clone(M.expand(out, shape), memory_format=MF.contiguous_format)
        return M.flatten(out, d, d + 1)
    if not input.ndim:  # (PyTorch's index_select path: a dim of a 0-d tensor names nothing)
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if isinstance(repeats, Tensor) and repeats.dtype not in (D.int64, D.int32):
        raise NotImplementedError('"repeat_interleave_cpu" not implemented for '
                                  f"'{R._TYPE[repeats.dtype.name]}'")
    counts = repeats._host().reshape(-1) if isinstance(repeats, Tensor) else np.asarray(repeats)
    if counts.size != 1 and counts.size != n:
        raise RuntimeError("repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {counts.size} and input.size(0) = {n}")
    if counts.size and counts.min() < 0:
        raise RuntimeError("repeats can not be negative")
    idx = np.repeat(np.arange(n, dtype=np.int64), np.broadcast_to(counts, (n,)))
    return index_select(input, d, Tensor._make(_on(idx, input.device)))
