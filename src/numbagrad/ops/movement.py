"""Movement ops: views, copies, indexing, joins. No kernels; each backward is the inverse movement."""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _memory_format as MF
from .. import backend
from .. import dtypes as D
from .._tensor import PLAIN_SUBCLASSES, Tensor, _wrap_dim
from ..autograd.grad_mode import _state as _grad_state
from ..backend import cpu, layout
from ..factory import zeros
from .forward import linear
from .record import CompositeCtx, needs_grad, record_composite, record_view
from .registry import composite, public, sum_to

# ---------------------------------------------------------------- shapes


def normalize_dims(dim, ndim) -> tuple:
    """``dim`` (None, int, or a sequence) as sorted non-negative dims, range-checked."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (list, tuple)):
        # (a dim that is an int in range already is kept as it is: no call per dim)
        dims = [d if type(d) is int and 0 <= d < ndim else _wrap_dim(d, ndim) for d in dim]
        if len(dims) > 1:
            if len(set(dims)) != len(dims):
                raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
            dims.sort()
        return tuple(dims)
    return (dim if type(dim) is int and 0 <= dim < ndim else _wrap_dim(dim, ndim),)


def parse_shape(args) -> tuple:
    """``f(2, 3)``, ``f((2, 3))`` and ``f([2, 3])`` all mean shape (2, 3)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    for a in args:
        if type(a) is not int:
            return tuple([int(a) for a in args])
    return args


def infer_shape(shape, numel) -> tuple:
    # nothing to infer (the common case)
    if -1 not in shape and math.prod(shape) == numel and (not shape or min(shape) >= 0):
        return tuple(shape)
    shape = list(shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if -1 in shape:
        if known == 0 and numel == 0:
            raise RuntimeError(
                f"cannot reshape tensor of 0 elements into shape {_fmt(shape)} because the "
                "unspecified dimension size -1 can be any value and is ambiguous"
            )
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{_fmt(shape)}' is invalid for input of size {numel}")
        shape[shape.index(-1)] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{_fmt(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _fmt(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _view_or_none(a: np.ndarray, shape):
    """A view of ``a`` with ``shape``, or None when that needs a copy."""
    if a.flags.c_contiguous:  # (always a view: no copy= check)
        return a.reshape(shape)
    try:
        return a.reshape(shape, copy=False)
    except TypeError:  # NumPy < 2.1 has no copy= argument
        v = a.view()
        try:
            v.shape = shape
        except AttributeError:
            return None
        return v
    except ValueError:
        return None


def _on_array(grad, fn, *args):
    """``fn(grad's array, *args)`` as a Tensor, where nothing records it and ``grad`` is a
    CPU array: a view's backward moves the array (a reshape, a transpose) without a call
    through the op machinery, 3 to 5 us each; None otherwise (the caller uses the op)."""
    if not _grad_state.enabled and grad._lazy is None:
        a = grad._data
        if type(a) is np.ndarray:
            return Tensor._make(fn(a, *args))
    return None


def _reshape_back(ctx, grad):
    out = _on_array(grad, np.reshape, ctx.input_shapes[0])
    return grad.reshape(ctx.input_shapes[0]) if out is None else out


def _unsqueeze_back(ctx, grad):
    """The gradient of a squeeze of ``ctx.dims`` (None: all dims): a reshape, or under
    create_graph PyTorch's unsqueeze_to, one unsqueeze per squeezed dim (UnsqueezeBackward0;
    none, and no node, where no dim had size 1)."""
    shape = ctx.input_shapes[0]
    if not _grad_state.enabled:
        return _reshape_back(ctx, grad)
    dims = range(len(shape)) if ctx.dims is None else sorted(ctx.dims)
    for d in dims:
        if shape[d] == 1:
            grad = unsqueeze(grad, d)
    return grad


# ---------------------------------------------------------------- views


def by_keyword(args, given):
    """Sizes or dims given as ``*args`` or, as PyTorch also takes them, by keyword
    (``x.view(size=(2, 3))``, ``torch.flip(x, dims=(0,))``): ``given`` when not None."""
    return args if given is None else (given,)


@composite("view", view=True, variants="method")
def view(ctx, x, *shape, size=None, dtype=None):
    # (``x.view(dtype)`` never reaches here: the lean hook below answers it, every time)
    shape = infer_shape(parse_shape(by_keyword(shape, size)), x.numel())
    out = _view_or_none(x._data, shape)
    if out is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        )
    return out


view.defvjp(_reshape_back)
view.defjvp(linear(view))


def _cpu_array(x):
    """The array of ``x`` when it is a CPU tensor with its values (not lazy, not a subclass
    with its own behaviour), else None: what the view ops' lean hooks take."""
    if type(x) is Tensor or type(x) in PLAIN_SUBCLASSES:
        a = x._data
        if type(a) is np.ndarray:
            return a
    return None


# The lean hooks of the view ops (``Composite.lean``): the result and node ``call_composite``
# would make, through ``record_view``, for the calls models make on every step (a reshape
# before a linear layer, the heads' transposes of attention); anything else (keywords, other
# argument types, a bad dim or shape: the op's own errors) goes the general way.


def _lean_dim(d, n):
    """``d`` wrapped into ``range(n)`` when it is an int within PyTorch's range for ``n``
    dims, else None (the op's own checks and errors then run)."""
    return d % n if type(d) is int and -n <= d < n else None


def _view_lean(x, *shape, **kwargs):
    if "dtype" in kwargs or len(shape) == 1 and type(shape[0]) is D.dtype:
        return view_dtype(x, *shape, **kwargs)
    a = _cpu_array(x)
    if a is None or kwargs or not a.flags.c_contiguous:
        return None
    shape = parse_shape(shape)
    if -1 in shape or math.prod(shape) != a.size or shape and min(shape) < 0:
        try:
            shape = infer_shape(shape, a.size)
        except RuntimeError:
            return None
    return record_view(view, x, a.reshape(shape))


view.lean = _view_lean


def view_dtype(x, *args, **kwargs):
    """``x.view(dtype)``: ``x``'s bytes read as ``dtype``. The last dim is rescaled by the ratio
    of the element sizes (which needs it contiguous and, for a larger element, a size and an
    offset it divides), as PyTorch's. The result shares ``x``'s memory and version counter but
    not its graph: PyTorch marks view.dtype not differentiable, whatever the dtypes (the
    alias of ``detach``, read as another dtype)."""
    given = (*args, *kwargs.values())
    if len(given) != 1 or kwargs.keys() - {"dtype"}:
        raise TypeError("view() received an invalid combination of arguments: it takes a size "
                        "or a dtype")
    dtype = D.as_dtype(given[0])
    a = x._data
    old, new = x.dtype.itemsize, dtype.itemsize
    if old != new:
        names = [D.SCALAR_TYPE.get(d.name, d.name) for d in (x.dtype, dtype)]
        what = f"to view {names[0]} as {names[1]} (different element sizes)"
        if x.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        strides = x.stride()
        # (PyTorch's checks in its order; a larger element must also start, and each row
        # must begin, on one of its own boundaries)
        ratio = new // old
        if new > old:
            if x.shape[-1] % ratio:
                raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but got "
                                   f"{x.shape[-1]}")
            if x.storage_offset() % ratio:
                raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {what}, "
                                   f"but got {x.storage_offset()}")
        if strides[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {strides[-1]}")
        for d, st in enumerate(strides[:-1]):
            if new > old and st % ratio:
                raise RuntimeError(f"self.stride({d}) must be divisible by {ratio} {what}, but "
                                   f"got {st}")
    t = Tensor._make(a.view(dtype.np))
    t._version_cell = x._version_cell
    if t._inference is not x._inference:
        t._inference = x._inference
    return t


@public("method")
def view_as(x, other):
    """``x.view(other.size())``."""
    return view(x, tuple(other.shape))


@composite("reshape_copy", node="UnsafeViewBackward0")
def reshape_copy(ctx, x, shape):
    return backend.of(x._data).ascontiguousarray(x._data).reshape(shape)


reshape_copy.defvjp(_reshape_back)
reshape_copy.defjvp(linear(reshape_copy))


@composite("unsafe_view", node="UnsafeViewBackward0")
def unsafe_view(ctx, x, shape):
    """``x`` reshaped, sharing its memory but not a view of it (no base, its own version):
    for a fresh result that nothing else holds, as PyTorch's ``_unsafe_view``."""
    return x._data.reshape(shape)


unsafe_view.defvjp(_reshape_back)
unsafe_view.defjvp(linear(unsafe_view))


@composite("squeeze_result", node="SqueezeBackward4")
def squeeze_result(ctx, x, dim):
    """``x`` with size-1 dim ``dim`` dropped, for a fresh result that nothing else holds
    (PyTorch squeezes it in place: ``squeeze_``, no view)."""
    ctx.dims = (dim,)
    return x._data.reshape(x.shape[:dim] + x.shape[dim + 1:])


squeeze_result.defvjp(_unsqueeze_back)
squeeze_result.defjvp(linear(squeeze_result))


@composite("reshape_alias", node="ReshapeAliasBackward0", view=True)
def reshape_alias(ctx, x, shape):
    """``x`` reshaped as a view of a layout that is not contiguous (PyTorch's
    ``_reshape_alias``: the caller checked that a view can have ``shape``)."""
    return _view_or_none(x._data, shape)


reshape_alias.defvjp(_reshape_back)
reshape_alias.defjvp(linear(reshape_alias))


@public("function method")
def reshape(x, *sizes, shape=None):
    """A view when the layout allows one, else a copy (as in PyTorch)."""
    if shape is None and type(x._data) is np.ndarray and x._data.flags.c_contiguous:
        # (the view's own call parses the sizes: once, not twice)
        return view(x, *sizes)
    shape = infer_shape(parse_shape(by_keyword(sizes, shape)), x.numel())
    a = x._data
    if a.flags.c_contiguous:
        return view(x, shape)
    if _view_or_none(a, shape) is not None:
        return reshape_alias(x, shape)
    return reshape_copy(x, shape)


@public("function method")
def flatten(x, start_dim=0, end_dim=-1):
    # (plain tuples and int dims read directly: a CNN's step flattens once a batch, and Size
    # slices and the general dim parser cost 5 of its 7 us)
    shape = x._data.shape if x._lazy is None else tuple(x.shape)
    nd = len(shape)
    if nd == 0:
        return reshape(x, 1)
    s = (start_dim % nd if type(start_dim) is int and -nd <= start_dim < nd
         else normalize_dims(start_dim, nd)[0])
    e = (end_dim % nd if type(end_dim) is int and -nd <= end_dim < nd
         else normalize_dims(end_dim, nd)[0])
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return x
    return reshape(x, shape[:s] + (math.prod(shape[s : e + 1]),) + shape[e + 1 :])


@public("function method")
def ravel(input):
    """``input`` flattened: a view when it is contiguous, else a contiguous copy viewed (as
    PyTorch's ``contiguous().view(-1)``: CloneBackward0, then ViewBackward0)."""
    return view(contiguous(input), -1)


@composite("permute", view=True, variants="function method")
def permute(ctx, x, *args, dims=None):
    dims = by_keyword(args, dims)
    if not dims:
        raise TypeError('permute() missing 1 required positional arguments: "dims"')
    dims = parse_shape(dims)
    if len(dims) != x.ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {x.ndim} is not "
            f"equal to len(dims) = {len(dims)}"
        )
    ctx.dims = tuple(_wrap_dim(d, x.ndim) for d in dims)
    if len(set(ctx.dims)) != len(ctx.dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return x._data.transpose(ctx.dims)


permute.defjvp(linear(permute))


def _permute_lean(x, *dims, **kwargs):
    a = _cpu_array(x)
    if a is None or kwargs or not dims:
        return None
    nd = a.ndim
    dims = tuple([_lean_dim(d, nd) for d in parse_shape(dims)])
    if len(dims) != nd or None in dims or len(set(dims)) != nd:
        return None
    return record_view(permute, x, a.transpose(dims), dims=dims)


permute.lean = _permute_lean


@permute.defvjp
def permute_vjp(ctx, grad):
    dims = tuple(np.argsort(ctx.dims).tolist())
    out = _on_array(grad, np.transpose, dims)
    return grad.permute(dims) if out is None else out


@composite("transpose", view=True, variants="function method")
def transpose(ctx, x, dim0, dim1):
    if x.ndim == 0:
        normalize_dims(dim0, 0), normalize_dims(dim1, 0)
        ctx.pair = (0, 0)  # (the gradient transposed too: TransposeBackward0 under create_graph)
        return x._data
    d0, d1 = normalize_dims(dim0, x.ndim)[0], normalize_dims(dim1, x.ndim)[0]
    ctx.pair = (d0, d1)
    return x._data.swapaxes(d0, d1)


transpose.defjvp(linear(transpose))


def _transpose_lean(x, *args, **kwargs):
    a = _cpu_array(x)
    if a is None or kwargs or len(args) != 2:
        return None
    d0, d1 = _lean_dim(args[0], a.ndim), _lean_dim(args[1], a.ndim)
    if d0 is None or d1 is None:
        return None
    return record_view(transpose, x, a.swapaxes(d0, d1), pair=(d0, d1))


transpose.lean = _transpose_lean


@transpose.defvjp
def transpose_vjp(ctx, grad):
    # (a 0-d tensor's transpose is itself: no axes to swap on its array)
    out = _on_array(grad, np.swapaxes, *ctx.pair) if ctx.input_shapes[0] else None
    return grad.transpose(*ctx.pair) if out is None else out


@composite("transpose_result", node="TransposeBackward1")
def transpose_result(ctx, x, dim0, dim1):
    """``x`` (a fresh result, dims in range) with two dims swapped where PyTorch transposes it
    in place (``transpose_``: the batch-first output of GRU and RNN): a copy, laid out as the
    in-place transpose leaves it, so that writing into it cannot reach what ``x``'s own node
    keeps for its backward."""
    ctx.pair = (dim0, dim1)
    a = x._data
    return backend.of(a).clone(a).swapaxes(dim0, dim1)


transpose_result.defvjp(transpose_vjp)
transpose_result.defjvp(linear(transpose_result))


@public("function method")
def adjoint(input):
    """The conjugate transpose of each matrix: their transpose, numbagrad's dtypes being
    real."""
    if input.ndim < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {input.ndim}-D tensor.")
    return transpose(input, -2, -1)


@composite("t", node="TBackward0", view=True, variants="function method")
def t(ctx, x):
    if x.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return x._data.T


@t.defvjp
def t_vjp(ctx, grad):
    out = _on_array(grad, np.transpose)
    return grad.t() if out is None else out

t.defjvp(linear(t))


def _t_lean(x, *args, **kwargs):
    a = _cpu_array(x)
    if a is None or args or kwargs or a.ndim > 2:
        return None
    return record_view(t, x, a.T)


t.lean = _t_lean


@composite("squeeze", view=True, variants="function method")
def squeeze(ctx, x, dim=None):
    if dim is None:
        ctx.node_name = "SqueezeBackward0"
        ctx.dims = None
        return x._data.reshape(tuple(n for n in x.shape if n != 1))
    ctx.node_name = "SqueezeBackward1" if isinstance(dim, int) else "SqueezeBackward2"
    # (a 0-d tensor's dims name its one position: checked, a repeat refused as for others)
    dims = normalize_dims(dim, max(x.ndim, 1))
    dims = ctx.dims = dims if x.ndim else ()
    return x._data.reshape(tuple(n for d, n in enumerate(x.shape) if not (d in dims and n == 1)))


squeeze.defvjp(_unsqueeze_back)
squeeze.defjvp(linear(squeeze))


def _squeeze_lean(x, *args, **kwargs):
    a = _cpu_array(x)
    if a is None or kwargs or len(args) != 1:
        return None
    shape, d = a.shape, _lean_dim(args[0], a.ndim)
    if d is None:
        return None
    squeezed = shape[:d] + shape[d + 1:] if shape[d] == 1 else shape
    return record_view(squeeze, x, a.reshape(squeezed), "SqueezeBackward1", dims=(d,))


squeeze.lean = _squeeze_lean


@composite("unsqueeze", view=True, variants="function method")
def unsqueeze(ctx, x, dim):
    a = x._data
    shape = a.shape  # (the array's: a tuple, not a new Size for each slice)
    d = ctx.dim = normalize_dims(dim, len(shape) + 1)[0]
    return a.reshape(shape[:d] + (1,) + shape[d:])


@unsqueeze.defvjp
def unsqueeze_vjp(ctx, grad):
    # (under create_graph PyTorch's squeeze(dim): SqueezeBackward1)
    return squeeze(grad, ctx.dim) if _grad_state.enabled else _reshape_back(ctx, grad)


unsqueeze.defjvp(linear(unsqueeze))


def _unsqueeze_lean(x, *args, **kwargs):
    a = _cpu_array(x)
    if a is None or kwargs or len(args) != 1:
        return None
    shape, d = a.shape, _lean_dim(args[0], a.ndim + 1)
    if d is None:
        return None
    return record_view(unsqueeze, x, a.reshape(shape[:d] + (1,) + shape[d:]), dim=d)


unsqueeze.lean = _unsqueeze_lean


@composite("expand", view=True, variants="method")
def expand(ctx, x, *sizes, size=None):
    sizes = parse_shape(by_keyword(sizes, size))
    a = x._data
    have = a.shape
    if len(sizes) < len(have):
        raise RuntimeError(
            f"expand(numbagrad.{_tname(x)}{{{_fmt(x.shape)}}}, size={_fmt(sizes)}): the number of "
            "sizes provided (" + str(len(sizes)) + ") must be greater or equal to the number of "
            "dimensions in the tensor (" + str(x.ndim) + ")"
        )
    lead = len(sizes) - len(have)
    have_strides = a.strides
    shape, strides = [], []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(
                    f"The expanded size of the tensor ({s}) isn't allowed in a leading, "
                    "non-existing dimension " + str(i)
                )
            shape.append(s)
            strides.append(0)
            continue
        n = have[i - lead]
        st = have_strides[i - lead]
        if s == -1 or s == n:
            shape.append(n)
            strides.append(st)
        elif n == 1:
            shape.append(s)
            strides.append(0)
        else:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({n}) at "
                f"non-singleton dimension {i}.  Target sizes: {_fmt(sizes)}.  Tensor sizes: "
                f"{_fmt(x.shape)}"
            )
    # as_strided keeps the view writable (broadcast_to would make a read-only array)
    return backend.of(a).as_strided(a, shape, strides)


expand.defjvp(linear(expand))


@expand.defvjp
def expand_vjp(ctx, grad):
    shape = ctx.input_shapes[0]
    if not shape and _grad_state.enabled:
        return grad.sum()  # (PyTorch's sum_to sums to a 0-d shape even from one: SumBackward0)
    return sum_to(grad, shape)


_TNAMES = D.TENSOR_TYPE
_MASKS = (D.bool_, D.uint8)  # the dtypes of index tensors that are masks
_NO_INDEX = (D.int16.np, D.int8.np)  # integer tensors PyTorch does not index with


def _tname(x):
    return _TNAMES[x.dtype.name]


def view_positions(base: np.ndarray, view: np.ndarray) -> np.ndarray:
    """Where each element of ``view`` (an array into ``base``'s memory) sits in ``base``.

    The answer is a C-order flat index into ``base`` per element of ``view``: how in-place
    writes through a view and regenerated view nodes (AsStridedBackward0, CopySlices) route
    gradients between a view and its base.
    """
    if type(base) is np.ndarray:
        isz = base.itemsize
        start = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // isz
    else:
        start = view.offset - base.offset
    vpos = cpu.element_offsets(view) + start
    if base.flags.c_contiguous:
        return vpos
    bpos = cpu.element_offsets(base).reshape(-1)
    order = np.argsort(bpos, kind="stable")
    return order[np.searchsorted(bpos[order], vpos)]


@composite("as_strided", node="AsStridedBackward0", view=True, variants="function method")
def as_strided(ctx, x, size, stride, storage_offset=0):
    """A view of ``x``'s elements with the given sizes and strides (in elements).

    Offsets count from ``x``'s first element, which is PyTorch's storage offset when ``x`` is
    a contiguous tensor that owns its memory.
    """
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    need = storage_offset + 1 + sum((n - 1) * st for n, st in zip(size, stride)) if all(size) else 0
    if not x._data.flags.c_contiguous and x._base is not None:
        raise RuntimeError("as_strided: only contiguous tensors and views' bases are supported")
    # (the memory x spans: its elements, or, laid out with gaps and owning none of its own
    # (x.diagonal().data), from its first element to its last)
    avail = x.numel()
    if avail and not x._data.flags.c_contiguous:
        avail = 1 + sum((n - 1) * abs(st) // x._data.itemsize
                        for n, st in zip(x._data.shape, x._data.strides))
    if need > avail or storage_offset < 0:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
            f"{storage_offset}, and itemsize {x.element_size()} requiring a storage size of "
            f"{need * x.element_size()} are out of bounds for storage of size "
            f"{x.numel() * x.element_size()}"
        )
    isz = x._data.itemsize
    be = backend.of(x._data)
    start = be.as_strided(x._data, (storage_offset + 1,), (isz,))[storage_offset:]
    out = be.as_strided(start, size, tuple(st * isz for st in stride))
    ctx.positions = view_positions(x._data, out)
    return out


as_strided.defjvp(linear(as_strided))


@as_strided.defvjp
def as_strided_vjp(ctx, grad):
    if not grad._data.size:  # (an empty view: PyTorch's gradient is zeros, not recorded)
        return Tensor._make(backend.of(grad._data).zeros(ctx.input_shapes[0], grad._data.dtype))
    where = _Index((ctx.positions,), {"advanced"})
    shape = ctx.input_shapes[0]
    flat = index_put_zeros(grad, where, (math.prod(shape),))
    if _grad_state.enabled:  # recorded: PyTorch's as_strided view of the storage
        strides = [1] * len(shape)
        for d in range(len(shape) - 2, -1, -1):
            strides[d] = strides[d + 1] * max(shape[d + 1], 1)
        return as_strided(flat, shape, strides)
    return flat.reshape(shape)


@composite("unfold", view=True, variants="method")
def unfold(ctx, x, dimension, size, step):
    """A view of every window of ``size`` elements along ``dimension``, ``step`` apart: that
    dim counts the windows and a new last dim of ``size`` holds each one."""
    d = ctx.dim = normalize_dims(dimension, max(x.ndim, 1))[0]
    n = x.shape[d] if x.ndim else 1
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    ctx.size, ctx.step = size, step
    a = x._data
    if x.ndim == 0:
        return a.reshape(1)[:size]
    shape = a.shape[:d] + ((n - size) // step + 1,) + a.shape[d + 1:] + (size,)
    strides = a.strides[:d] + (a.strides[d] * step,) + a.strides[d + 1:] + (a.strides[d],)
    return backend.of(a).as_strided(a, shape, strides)


unfold.defjvp(linear(unfold))


@unfold.defvjp
def unfold_vjp(ctx, grad):
    return unfold_backward(grad, ctx.input_shapes[0], ctx.dim, ctx.size, ctx.step)


@composite("unfold_backward", node="UnfoldBackwardBackward0")
def unfold_backward(ctx, grad, shape, d, size, step):
    """The gradient of ``unfold``: each window's gradient added back where the window read
    (windows that overlap add up)."""
    ctx.dim, ctx.size, ctx.step = d, size, step
    be = backend.of(grad._data)
    out = be.zeros(shape, grad._data.dtype)
    if not shape:
        return grad._data.reshape(()).copy() if size else out  # (the one window)
    g = be.moveaxis(grad._data, -1, d + 1)  # (..., windows, size, ...)
    at = [1] * g.ndim
    at[d], at[d + 1] = g.shape[d], size
    starts = np.arange(g.shape[d]).reshape(-1, 1) * step
    grids = list(np.indices(g.shape, sparse=True))
    where = (*grids[:d], (starts + np.arange(size)).reshape(at), *grids[d + 2:])
    be.scatter(out, where, g, True)
    return out


unfold_backward.defvjp(lambda ctx, grad: (unfold(grad, ctx.dim, ctx.size, ctx.step),))


@composite("alias", view=True)
def alias(ctx, x):
    return x._data.view()


alias.defvjp(lambda ctx, grad: grad)
alias.defjvp(linear(alias))


# ---------------------------------------------------------------- copies


@composite("clone", variants="function method")
def clone(ctx, x, *, memory_format=MF.preserve_format):
    a = x._data
    if memory_format is MF.preserve_format:
        if a.flags.c_contiguous and 1 not in a.shape:  # (like_strides' common case, inline)
            return ctx.backend.clone(a)
    else:
        memory_format = MF.checked(memory_format, "clone", MF.preserve_format)
    return _copy_as(ctx.backend, a, MF.like_strides(x, memory_format))


def _copy_as(be, a, strides, dtype=None):
    """A copy of array ``a`` (as ``dtype`` if given) in new memory with element ``strides``
    (None: C order); it is always a copy, as clone's is, even where ``a`` is laid out so."""
    if strides is None and a.flags.c_contiguous:
        return be.clone(a, dtype)  # (NumPy's copy: the common case, at its speed)
    dtype = a.dtype if dtype is None else dtype
    out = be.empty(a.shape, dtype) if strides is None else be.empty_strided(a.shape, strides,
                                                                             dtype)
    be.copyto(out, a)
    return out


@composite("contiguous_copy", node="CloneBackward0")
def contiguous_copy(ctx, x, memory_format=MF.contiguous_format):
    """A copy in ``memory_format`` (C order by default): PyTorch's ``contiguous()`` is a
    clone to that format."""
    if memory_format is MF.contiguous_format:
        return ctx.backend.ascontiguousarray(x._data)
    return _copy_as(ctx.backend, x._data, MF.format_strides(tuple(x.shape), memory_format))


for _op in (clone, contiguous_copy):
    _op.defvjp(lambda ctx, grad: grad)
    _op.defjvp(linear(_op))
del _op


@public("method")
def contiguous(x, *, memory_format=MF.contiguous_format):
    """``x`` itself when it is laid out in ``memory_format`` already, else a copy that is."""
    if memory_format is MF.contiguous_format:  # (the common case first)
        if x._data.flags.c_contiguous:
            return x
        return contiguous_copy(x)
    fmt = MF.checked(memory_format, "contiguous")
    if x.is_contiguous(memory_format=fmt):
        return x
    if fmt is MF.preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return contiguous_copy(x, fmt)


@composite("to_dtype", node="ToCopyBackward0")
def to_dtype(ctx, x, dtype, memory_format=MF.preserve_format):
    """``x`` copied as ``dtype`` (PyTorch's ``_to_copy``), laid out in ``memory_format``."""
    if not dtype.is_floating_point:
        ctx.non_differentiable = (0,)
    a = x._data
    if memory_format is MF.preserve_format and a.flags.c_contiguous and 1 not in a.shape:
        return ctx.backend.clone(a, dtype.np)  # (like_strides' common case, inline)
    return _copy_as(ctx.backend, a, MF.like_strides(x, memory_format), dtype.np)


to_dtype.defvjp(lambda ctx, grad: grad)
to_dtype.defjvp(linear(to_dtype))


def _to_dtype_lean(x, dtype, memory_format=MF.preserve_format):
    """``to_dtype``'s lean hook: ``x.double()``, ``x.float()``, ``x.long()`` of a CPU tensor
    that is not recorded (no gradient needed), the copy and Tensor ``call_composite`` would
    make, without its ctx and its generic steps; anything else goes the general way."""
    a = _cpu_array(x)
    if (a is None or memory_format is not MF.preserve_format or type(dtype) is not D.dtype
            or not a.flags.c_contiguous or 1 in a.shape):
        return None
    if _grad_state.enabled and (x._requires_grad if x._base is None else x.requires_grad):
        return None
    return Tensor._make(cpu.clone(a, dtype.np))  # (an inference tensor under inference_mode)


to_dtype.lean = _to_dtype_lean


@composite("to_device", node="ToCopyBackward0")
def to_device(ctx, x, device):
    """A copy of ``x`` on ``device`` (host <-> GPU); the gradient goes back the other way."""
    ctx.source = x.device
    if device.type == "cpu":
        be, out = cpu, x._data.get()
    else:
        be = backend.gpu_module()
        out = be.to_device(x._data)
    # the transfer moves C order; the copy keeps x's layout (preserve_format), as PyTorch's
    strides = MF.like_strides(x, MF.preserve_format)
    return out if strides is None else _copy_as(be, out, strides)


to_device.defvjp(lambda ctx, grad: grad.to(ctx.source))
to_device.defjvp(linear(to_device))


# ---------------------------------------------------------------- indexing


WARN_BYTE_INDEX = (f"indexing with dtype {D.uint8} is now deprecated, please use a dtype "
                   f"{D.bool_} instead.")


def mask_error(name, mask):
    """PyTorch's error for a mask that is not bool given to ``name`` (``masked_fill_``)."""
    return RuntimeError(f"{name} only supports boolean masks, but got mask with dtype "
                        f"{D.C_TYPE[mask.dtype.name]}")


def _normalize_index(x, index):
    """Turn Tensors in an index into arrays, check ranges and steps; return (index, kind)."""
    if not isinstance(index, tuple):
        index = (index,)
    ndim = x.ndim
    simple = _simple_index(x, index, ndim)
    if simple is not None:
        return index, simple
    out = []
    kinds = set()
    dim = 0
    n_real = 0
    mask_dims = 0  # (the dims masks take: an ellipsis stands for the rest)
    for i in index:
        kind = type(i)
        if isinstance(i, Tensor) and i.dtype in _MASKS or (
                isinstance(i, np.ndarray) and i.dtype == np.bool_):
            mask_dims += i.ndim
        elif kind is int or kind is slice or not (i is None or i is Ellipsis or kind is bool):
            n_real += 1
    if n_real > ndim:  # (before any other complaint about the index, as PyTorch)
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    for item in index:
        kind = type(item)
        if kind is int or kind is slice:  # (the commonest: nothing to convert)
            pass
        elif kind is bool:
            item = np.array(item)  # (a Python bool is a 0-d mask, as in PyTorch: x[True])
        elif isinstance(item, Tensor):
            item = item._host()  # index arithmetic runs on the host
            if item.dtype == np.uint8:
                # a byte tensor is a mask, which PyTorch still takes, with its warning (a 0-d
                # one is a Python bool's index, silently)
                if item.ndim:
                    warnings.warn(WARN_BYTE_INDEX, UserWarning, stacklevel=5)
                item = item.astype(np.bool_)
            elif item.ndim == 0 and item.dtype.kind in "iu":
                item = int(item)  # PyTorch selects with a 0-d integer tensor, as with an int
            elif item.dtype in _NO_INDEX:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        elif isinstance(item, (list, tuple, range)):
            item = np.array(item, dtype=np.int64 if isinstance(item, range) else None)
            if not item.size:
                item = item.astype(np.int64)  # ([] is an empty index, as in PyTorch)
            if item.dtype.kind == "f":
                raise IndexError(
                    "tensors used as indices must be long, int, byte or bool tensors"
                )
        # (the kinds are disjoint but for bool, an int: the commonest are asked first)
        if kind is slice or isinstance(item, slice):
            if item.step is not None and item.step <= 0:
                raise ValueError("step must be greater than zero")
            kinds.add("slice")
            if dim < ndim and not _whole(item, x.shape[dim]):
                kinds.add("narrow")
            dim += 1
        elif isinstance(item, np.ndarray):
            if item.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            kinds.add("advanced")
            if item.dtype == np.bool_:
                if not item.ndim:
                    # a 0-d mask (x[True], x[torch.tensor(True)]): PyTorch unsqueezes, a view,
                    # then indexes it, so writing through it makes the base's node CopySlices
                    kinds.add("mask0")
                for j, n in enumerate(item.shape):
                    if dim + j < ndim and n != x.shape[dim + j]:
                        raise IndexError(
                            f"The shape of the mask {list(item.shape)} at index {j} does not "
                            f"match the shape of the indexed tensor {list(x.shape)} at index "
                            f"{dim + j}")
                dim += item.ndim
            else:
                dim += 1
        elif item is None:
            kinds.add("none")
        elif item is Ellipsis:
            kinds.add("ellipsis")
            dim += max(ndim - n_real - mask_dims, 0)
        elif isinstance(item, (bool, np.bool_)):
            kinds.update(("advanced", "mask0"))
        elif isinstance(item, (int, np.integer)):
            if dim >= ndim:
                raise IndexError(
                    f"too many indices for tensor of dimension {ndim}"
                )
            size = x.shape[dim]
            if not -size <= item < size:
                raise IndexError(
                    f"index {item} is out of bounds for dimension {dim} with size {size}"
                )
            kinds.add("int")
            dim += 1
        elif isinstance(item, str):
            raise TypeError(f"new(): invalid data type '{type(item).__name__}'")
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                "are valid indices (got " + type(item).__name__ + ")"
            )
        out.append(item)
    if dim > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    return tuple(out), kinds


def _simple_index(x, index, ndim):
    """``_normalize_index``'s kinds for a basic index: Python ints and slices, at most one per
    dim, with None and one Ellipsis among them (``x[0]``, ``x[:, 1:3]``, ``x[..., :5]``,
    ``x[:, None]``: the commonest, with nothing to convert; its general walk costs 2 us);
    None for any other index."""
    n_real = 0
    ellipsis = False
    for item in index:
        kind = type(item)
        if kind is int or kind is slice:
            n_real += 1
        elif item is Ellipsis and not ellipsis:
            ellipsis = True
        elif item is not None:
            return None
    if n_real > ndim:
        return None
    shape = x._data.shape if x._lazy is None else tuple(x.shape)
    kinds = set()
    dim = 0
    for at, item in enumerate(index):
        kind = type(item)
        if kind is slice:
            if item.step is not None and item.step <= 0:
                raise ValueError("step must be greater than zero")
            kinds.add("slice")
            if not _whole(item, shape[dim]):
                kinds.add("narrow")
            dim += 1
        elif kind is int:
            size = shape[dim]
            if not -size <= item < size:
                # (PyTorch names the item's place in the index as its dimension)
                raise IndexError(
                    f"index {item} is out of bounds for dimension {at} with size {size}")
            kinds.add("int")
            dim += 1
        elif item is None:
            kinds.add("none")
        else:
            kinds.add("ellipsis")
            dim += ndim - n_real
    return kinds


def _whole(item, size) -> bool:
    """Whether slice ``item`` is written as the whole of a dim of ``size`` (PyTorch's test is
    textual: ``0:n``, ``:``, ``::1``, ``:n + 5``; ``-n:`` is not)."""
    return (item.start in (None, 0) and item.step in (None, 1)
            and (item.stop is None or item.stop >= size))


def _last_view_node(index, shape):
    """The node of basic indexing: PyTorch applies the parts left to right (select, slice,
    unsqueeze) and names the result after the last one that does something (a slice over the
    whole dim does nothing); none: AliasBackward0."""
    name = "AliasBackward0"
    n_dims = sum(1 for i in index if i is not None and i is not Ellipsis)
    dim = 0
    for item in index:
        if item is None:
            name = "UnsqueezeBackward0"
        elif item is Ellipsis:
            dim += len(shape) - n_dims
        elif isinstance(item, slice):
            if not _whole(item, shape[dim]):
                name = "SliceBackward0"
            dim += 1
        else:
            name = "SelectBackward0"
            dim += 1
    return name


def _first_part_backward(index, shape):
    """The node of the gradient of indexing under create_graph: PyTorch applies the basic parts
    left to right (select, slice, unsqueeze; a slice over the whole dim does nothing), then the
    advanced index, so the input's gradient comes from the backward of the first part that does
    something; none: the gradient itself (AliasBackward0 passes it on). A 0-d mask (``x[True]``,
    ``x[x > 0]`` of a 0-d x) is an unsqueeze there, then an index of the new dim."""
    n_dims = sum(1 if not isinstance(i, np.ndarray) or i.dtype != np.bool_ else i.ndim
                 for i in index if i is not None and i is not Ellipsis)
    dim = 0
    for item in index:
        if item is None or isinstance(item, np.ndarray) and item.dtype == np.bool_ \
                and not item.ndim:
            return "SqueezeBackward1"
        if item is Ellipsis:
            dim += len(shape) - n_dims
        elif isinstance(item, np.ndarray):
            dim += item.ndim if item.dtype == np.bool_ else 1
        elif isinstance(item, slice):
            if not _whole(item, shape[dim]):
                return "SliceBackwardBackward0"
            dim += 1
        else:
            return "SelectBackwardBackward0"
    return "IndexPutImplBackward0" if any(isinstance(i, np.ndarray) for i in index) else None


def slice_dim(x, index):
    """``x[index]`` for ``index`` slices, the last one the slice: PyTorch's ``slice``, whose node
    is SliceBackward0 even over a whole dim (indexing's ``x[:, 0:n]`` has none)."""
    where = _Index.of(x, index)
    where.bare_slice = True
    return index_select_any(x, where)


def getitem(x, index):
    """``x[index]``: the index is turned into NumPy terms first, so it is not an input."""
    where = _Index.of(x, index)
    if where.staged is not None:
        first, then = where.staged
        return getitem(getitem(x, first), then)
    return index_select_any(x, where)


class _Index:
    """An index in NumPy terms (``index``), its kinds, and the index Tensors it was made from
    (``sources``: saved by the op, so an in-place change of one is caught before backward)."""

    __slots__ = ("index", "kinds", "sources", "staged", "bare_slice")

    def __init__(self, index, kinds, sources=()):
        self.index, self.kinds, self.sources = index, kinds, sources
        self.staged = None
        self.bare_slice = False  # x[a:b], not in a tuple: PyTorch always slices then

    @classmethod
    def of(cls, x, index):
        where = object.__new__(cls)  # (__init__, without its call: one per indexing)
        if x._lazy is None:
            # ``x[i]`` (a dataset's sample, a row) and ``x[idx]`` with a LongTensor (a
            # minibatch, an embedding): what _normalize_index would find
            kind = type(index)
            if kind is int:
                shape = x._data.shape
                if shape and -shape[0] <= index < shape[0]:
                    where.index, where.kinds, where.sources = (index,), _SELECT, ()
                    where.staged = None
                    where.bare_slice = False
                    return where
            elif kind is Tensor and index._lazy is None and x._data.ndim:
                a = index._data
                if type(a) is np.ndarray and a.dtype is _INT64 and a.ndim:
                    where.index, where.kinds, where.sources = (a,), _ADVANCED, (index,)
                    where.staged = None
                    where.bare_slice = False
                    return where
            elif kind is slice:
                shape = x._data.shape
                if shape:  # (``x[1:3]``: PyTorch's slice, whose node it always records)
                    index = (index,)
                    where.index, where.kinds = index, _simple_index(x, index, len(shape))
                    where.sources, where.staged = (), None
                    where.bare_slice = True
                    return where
            elif kind is tuple:
                # ``x[i, j]`` (an element, ``.item()`` after): ints in range, one per dim at
                # most, select after select (_normalize_index's kinds: {"int"})
                shape = x._data.shape
                if 0 < len(index) <= len(shape):  # (``x[()]`` is an alias, not a select)
                    for i, n in zip(index, shape):
                        if type(i) is not int or not -n <= i < n:
                            break
                    else:
                        where.index, where.kinds, where.sources = index, _SELECT, ()
                        where.staged = None
                        where.bare_slice = False
                        return where
                # (``x[:, 0]``, ``x[..., :5]``, ``x[:, None]``: nothing to convert)
                kinds = _simple_index(x, index, len(shape))
                if kinds is not None:
                    where.index, where.kinds, where.sources = index, kinds, ()
                    where.staged = None
                    where.bare_slice = False
                    return where
        if isinstance(index, tuple) and sum(1 for i in index if i is Ellipsis) > 1:
            index = _later_ellipses_dropped(index)
        items = index if isinstance(index, tuple) else (index,)
        where.index, where.kinds = _normalize_index(x, index)
        where.sources = tuple([i for i, n in zip(items, where.index)
                               if isinstance(i, Tensor) and isinstance(n, np.ndarray)])
        kinds = where.kinds
        if "ellipsis" in kinds and "advanced" in kinds:
            where.index = _without_empty_ellipsis(where.index, x.ndim)
        where.staged = _ints_first(where.index) if "advanced" in kinds and "int" in kinds else None
        where.bare_slice = isinstance(index, slice)
        return where


def _later_ellipses_dropped(index):
    """``index`` without the Ellipses after its first that end it: PyTorch moves its dim past
    each Ellipsis, so those index nothing (``x[..., 0, ...]``, ``x[None, ..., None, ...]``).
    An index with another keeps them (NumPy's error; PyTorch's result depends on its walk)."""
    first = next(i for i, item in enumerate(index) if item is Ellipsis)
    end = len(index)
    while end > first + 1 and index[end - 1] is Ellipsis:
        end -= 1
    return index[:end]


def _without_empty_ellipsis(index, ndim):
    """``index`` without an Ellipsis that stands for no dimension: PyTorch expands it into
    nothing, so the advanced indices on either side of it stay next to each other (their dims
    stay in place), where NumPy takes it as a separator (their dims go first)."""
    if any(isinstance(i, np.ndarray) and i.dtype == np.bool_ or isinstance(i, (bool, np.bool_))
           for i in index):
        return index
    if sum(1 for i in index if i is not None and i is not Ellipsis) != ndim:
        return index
    return tuple(i for i in index if i is not Ellipsis)


_SELECT = frozenset(("int",))  # the kinds of an index of integers only (one, or one per dim)
_ADVANCED = frozenset(("advanced",))  # ... that is one integer array
_INT64 = np.dtype(np.int64)


def _ints_first(index):
    """PyTorch applies integer indices first (as ``select``), then the advanced ones; NumPy
    takes the integers as advanced indices, which moves the advanced dimensions when they are
    apart. So ``x[index]`` is ``x[first][then]``: ``first`` the basic part, ``then`` the arrays
    with a full slice for each dimension ``first`` kept."""
    first, then = [], []
    for item in index:
        if isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_)):
            first.append(item)
        elif isinstance(item, np.ndarray):
            first.extend([slice(None)] * (item.ndim if item.dtype == np.bool_ else 1))
            then.append(item)
        elif item is None or isinstance(item, slice):
            first.append(item)
            then.append(slice(None))
        else:  # Ellipsis, or a Python bool
            first.append(item)
            then.append(item)
    return tuple(first), tuple(then)


@composite("getitem", node="IndexBackward0")
def index_select_any(ctx, x, idx):
    index, kinds = idx.index, idx.kinds
    ctx.index = index
    ctx.bare_slice = idx.bare_slice
    _save_sources(ctx, idx)
    ctx.view = "advanced" not in kinds
    ctx.node_name = ("SelectBackward0" if kinds is _SELECT
                     else "IndexBackward0" if "advanced" in kinds
                     else "SliceBackward0" if idx.bare_slice
                     else _last_view_node(index, x.shape) if kinds else "AliasBackward0")
    a = x._data
    try:
        if (len(index) == 1 and type(a) is np.ndarray and type(index[0]) is np.ndarray
                and index[0].dtype.kind in "iu"):
            out = a.take(index[0], 0)  # one integer array: a[index], without its overhead
        else:
            out = a[index]
    except IndexError as e:
        shape = region_shape(a.shape, index)
        if shape is None or 0 not in shape:
            raise _index_error(e) from None
        return ctx.backend.zeros(shape, a.dtype)
    if "advanced" in kinds:
        # (a 0-d index array selects one element: NumPy gives a scalar, a tensor holds arrays)
        if isinstance(out, np.generic):
            return np.asarray(out)
        return _laid_out_as_index(a, index, kinds, out) if type(a) is np.ndarray else out
    if isinstance(out, np.generic):  # full integer indexing gives a NumPy scalar
        out = x._data[index + (Ellipsis,)]
    if "none" in kinds:
        out = unsqueezed_as_pytorch(a, index, out)
    return out


# the kinds of a basic index: ints and slices, None, an Ellipsis
_BASIC = frozenset(("int", "slice", "narrow", "none", "ellipsis"))


def _getitem_lean(x, idx):
    """``index_select_any``'s lean hook: ``x[0]``, ``x[:, 1:3]``, ``x[..., None]`` (a basic
    index) of a CPU tensor, the view and its node made by ``record_view`` (the general call costs 3 us more,
    a model's step indexes on every call)."""
    kinds = idx.kinds
    a = _cpu_array(x)
    if a is None or not kinds <= _BASIC:
        return None
    index = idx.index
    try:
        out = a[index]
    except IndexError:  # (the general path's error)
        return None
    if type(out) is not np.ndarray:  # (every dim selected: NumPy gives a scalar)
        out = a[index + (Ellipsis,)]
    elif "none" in kinds:
        out = unsqueezed_as_pytorch(a, index, out)
    name = None  # (the node's name, needed only where record_view records one)
    if _grad_state.enabled and (x._requires_grad if x._base is None else x.requires_grad):
        name = ("SelectBackward0" if kinds is _SELECT else "SliceBackward0" if idx.bare_slice
                else _last_view_node(index, a.shape) if kinds else "AliasBackward0")
    return record_view(index_select_any, x, out, name, index=index, bare_slice=idx.bare_slice,
                       view=True)


index_select_any.lean = _getitem_lean


def unsqueezed_as_pytorch(a, index, out):
    """``out``, NumPy's view ``a[index]`` of a basic ``index`` holding None, with PyTorch's
    strides in the dims None makes (NumPy's are 0): PyTorch unsqueezes where it meets a None,
    before the parts after it apply, so the new dim's stride is the size times the stride of
    the dim then at its place (1 at the end). Layouts (and overlaps) are told from strides."""
    if type(a) is not np.ndarray:
        return out
    shape, strides = list(a.shape), [st // a.itemsize for st in a.strides]
    ellipsis = a.ndim - sum(1 for i in index if i is not None and i is not Ellipsis)
    dim = 0
    for item in index:
        if item is None:
            strides.insert(dim, shape[dim] * strides[dim] if dim < len(shape) else 1)
            shape.insert(dim, 1)
            dim += 1
        elif item is Ellipsis:
            dim += ellipsis
        elif isinstance(item, slice):
            start, stop, step = item.indices(shape[dim])
            shape[dim] = len(range(start, stop, step))
            strides[dim] *= step
            dim += 1
        else:  # an integer selects
            del shape[dim], strides[dim]
    isz = out.itemsize
    if tuple(shape) != out.shape or [st // isz for st in out.strides] == strides:
        return out
    return cpu.as_strided(out, shape, [st * isz for st in strides])


def _laid_out_as_index(a, index, kinds, out):
    """``out``, NumPy's ``a[index]``, laid out as PyTorch's: its index kernel is a
    TensorIterator over ``a`` restrided to the result's shape and over the index arrays, so
    the result follows their layouts (``layout.iterator_strides``); NumPy's puts the indexed
    dims first in memory when they come after a slice."""
    if a.flags.c_contiguous and "narrow" not in kinds and all(
            i.flags.c_contiguous for i in index if isinstance(i, np.ndarray)):
        strides = None  # (then every operand is in C order, and so is PyTorch's result)
    else:
        strides = _index_strides(a, index, out.shape)
        if strides is False:
            return out
    if strides is None:
        return out if out.flags.c_contiguous else np.ascontiguousarray(out)
    if tuple([st // out.itemsize for st in out.strides]) == strides:
        return out
    res = cpu.empty_strided(out.shape, strides, out.dtype)
    res[...] = out
    return res


def _index_strides(a, index, shape):
    """The strides PyTorch gives ``a[index]`` (of ``shape``), None for C order; False where
    this does not follow PyTorch (a Python bool or a 0-d mask in the index, no array)."""
    # PyTorch applies the basic part of the index first (a view), then indexes that view with
    # the arrays, a mask being one 1-d array per dim it covers (its nonzero() columns)
    basic, arrays = [], []  # arrays: (position in the view, shape, element strides)
    for item in index:
        if isinstance(item, np.ndarray):
            if item.dtype == np.bool_:
                if item.ndim == 0:
                    return False
                n = int(np.count_nonzero(item))
                arrays.extend([(len(basic) + k, (n,), (1,)) for k in range(item.ndim)])
                basic.extend([slice(None)] * item.ndim)
            else:
                arrays.append((len(basic), item.shape,
                               tuple([st // item.itemsize for st in item.strides])))
                basic.append(slice(None))
        elif isinstance(item, (bool, np.bool_)):
            return False
        else:
            basic.append(item)
    if not arrays:  # (a basic index given as advanced by a backward: NumPy's result stays)
        return False
    view = a[tuple(basic)]
    if Ellipsis in basic:  # (positions after it move by the dims it stands for, less one)
        at = basic.index(Ellipsis)
        wide = view.ndim - len(basic) + 1
        arrays = [(p + wide - 1 if p > at else p, s, st) for p, s, st in arrays]
    dims = list(range(view.ndim))
    positions = [p for p, _, _ in arrays]
    if positions != list(range(positions[0], positions[0] + len(positions))):
        # arrays apart: PyTorch moves the indexed dims to the front (transposeToFront)
        dims = positions + [d for d in dims if d not in positions]
        positions = list(range(len(positions)))
    vstrides = [view.strides[d] // view.itemsize for d in dims]
    vshape = [view.shape[d] for d in dims]
    before, after = positions[0], positions[-1] + 1
    sub = cpu.broadcast_shapes(*[s for _, s, _ in arrays])
    if (*vshape[:before], *sub, *vshape[after:]) != tuple(shape):
        return False
    # the view restrided over the result (0 along the indexed dims), each array broadcast
    operands = [(tuple(shape), (*vstrides[:before], *[0] * len(sub), *vstrides[after:]))]
    ones_before, ones_after = (1,) * before, (1,) * (len(vshape) - after)
    for _, s, st in arrays:
        pad = len(sub) - len(s)
        operands.append(((*ones_before, *(1,) * pad, *s, *ones_after),
                         (*[0] * (before + pad), *st, *[0] * len(ones_after))))
    return layout.iterator_strides(tuple(shape), operands)


def _index_error(e):
    """NumPy's IndexError in PyTorch's words."""
    return IndexError(str(e).replace("axis", "dimension").replace("array", "tensor"))


def region_shape(shape, index):
    """The shape of ``a[index]`` for ``a`` of ``shape``, whatever the values of its integer
    arrays; None if the index does not fit ``shape``. PyTorch checks those values only against
    the elements it reads, so out-of-range ones are no error where the region is empty (but a
    non-empty array indexing a dim of size 0 raises)."""
    n_dims = sum(i.ndim if isinstance(i, np.ndarray) and i.dtype == np.bool_
                 else 0 if i is None or i is Ellipsis or isinstance(i, (bool, np.bool_)) else 1
                 for i in index)
    probe_shape, probe_index, d = list(shape), [], 0
    for item in index:
        if item is Ellipsis:
            d += len(shape) - n_dims
        elif isinstance(item, np.ndarray) and item.dtype != np.bool_:
            if shape[d] == 0 and item.size:
                raise IndexError("index is out of bounds for dimension with size 0")
            probe_shape[d] = max(shape[d], 1)
            item = np.zeros_like(item)
            d += 1
        elif item is not None and not isinstance(item, (bool, np.bool_)):
            d += item.ndim if isinstance(item, np.ndarray) else 1
        probe_index.append(item)
    probe = np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), probe_shape, [0] * len(shape))
    try:
        return probe[tuple(probe_index)].shape
    except IndexError:
        return None


def _save_sources(ctx, idx):
    if idx.sources and ctx.recorded:
        ctx.save(**{f"index{k}": t for k, t in enumerate(idx.sources)})


def _check_sources(ctx):
    """Raise the version-counter error if an index Tensor was changed in place since."""
    for name in ctx.saved:
        if name.startswith("index"):
            ctx[name]


index_select_any.defjvp(linear(index_select_any))


@index_select_any.defvjp
def getitem_vjp(ctx, grad):
    _check_sources(ctx)
    shape = ctx.input_shapes[0]
    if not _grad_state.enabled:
        return index_put_zeros(grad, _Index(ctx.index, ()), shape)
    # recorded: one node, named as the top one of PyTorch's chain of backward ops
    node = ("SliceBackwardBackward0" if ctx.bare_slice
            else _first_part_backward(ctx.index, shape))
    if node is None:
        return grad
    return index_put_zeros(grad, _Index(ctx.index, ()), shape, node)


@composite("index_put_zeros", node="IndexBackwardBackward0")
def index_put_zeros(ctx, grad, idx, shape, node=None):
    """Zeros of ``shape`` with ``grad`` added at ``index`` (repeated indices accumulate).
    ``node``: the node's name, PyTorch's for the index (SliceBackwardBackward0,
    IndexPutImplBackward0, ...)."""
    if node is not None:
        ctx.node_name = node
    index = ctx.index = idx.index
    be = backend.of(grad._data)
    out = be.zeros(shape, grad._data.dtype)
    if not grad._data.size:  # (nothing to add: the index may hold values out of range)
        return out
    if any(isinstance(i, np.ndarray) for i in index):
        be.scatter(out, index, grad._data, accumulate=True)
    else:
        out[index] = grad._data
    return out


index_put_zeros.defvjp(lambda ctx, grad: index_select_any(grad, _Index(ctx.index, {"advanced"})))
index_put_zeros.defjvp(linear(index_put_zeros))


_INDEX_PUT_KINDS = {"advanced", "slice", "ellipsis"}


@composite("index_put", node="CopySlices")
def index_put(ctx, x, index, value, accumulate=False):
    """``x`` with ``value`` written at ``index`` (the out-of-place core of ``x[index] = value``);
    with ``accumulate`` (an advanced index), added there, repeated positions adding up."""
    if not isinstance(index, _Index):
        index = _Index.of(x, index)
    _save_sources(ctx, index)
    advanced = "advanced" in index.kinds
    if advanced and index.kinds <= _INDEX_PUT_KINDS:
        # PyTorch writes other index kinds through a view first: its node is then CopySlices
        ctx.node_name = "IndexPutBackward0"
    ctx.index, ctx.kinds, ctx.accumulate = index.index, index.kinds, accumulate
    # (PyTorch's index_put is a clone, laid out as its input, then index_put_)
    out = cpu.clone(x._data) if type(x._data) is np.ndarray else x._data.copy()
    if accumulate:
        region = region_shape(out.shape, index.index)
        if region is not None and 0 in region:
            # (nothing to add: PyTorch checks no index of an empty region against the bounds)
            if not _fits(value.shape, region):
                raise _shape_mismatch(value.shape, region)
            return out
        where = _in_bounds(out.shape, index.index)
        region = region_shape(out.shape, where)
        if not _fits(value.shape, region):
            raise _shape_mismatch(value.shape, region)
        ctx.backend.scatter(out, where, expand(value.detach(), region)._data, True)
        return out
    write_region(out, index.index, value._data if isinstance(value, Tensor) else value, advanced)
    return out


def _in_bounds(shape, index):
    """An index of integer and bool arrays (``index_put``'s), its integers range-checked (in
    PyTorch's words) and made non-negative: an accumulating write checks none itself."""
    out, d = [], 0
    for item in index:
        if item.dtype == np.bool_:
            out.append(item)
            d += item.ndim
            continue
        n = shape[d]
        bad = (item < -n) | (item >= n)
        if bad.any():
            raise IndexError(f"index {int(item[bad].flat[0])} is out of bounds for dimension "
                             f"{d} with size {n}")
        out.append(item % n if n else item)
        d += 1
    return tuple(out)


def write_region(a, index, value, advanced):
    """``a[index] = value`` with PyTorch's error when ``value`` does not fit the region."""
    # PyTorch drops a value's leading size-1 dims first (x[i] = ones(1) into a 0-d region)
    while np.ndim(value) and np.shape(value)[0] == 1:
        value = value[0]
    if not np.size(value):  # (NumPy takes any empty value into an empty region)
        region = region_shape(a.shape, index)
        if region is not None and not _fits(np.shape(value), region):
            if advanced:
                raise _shape_mismatch(np.shape(value), region)
            raise expand_error(list(np.shape(value)), list(region), getattr(value, "dtype", None))
    try:
        a[index] = value
    except IndexError as e:
        region = region_shape(a.shape, index)
        if region is None or 0 not in region:
            raise _index_error(e) from None
        if not _fits(np.shape(value), region):  # (out-of-range indices, writing nothing)
            raise _shape_mismatch(np.shape(value), region) from None
    except (ValueError, TypeError):  # (NumPy's bool-mask assignment raises a TypeError)
        # (the region from the index alone: an out-of-range index of an empty region must not
        # raise here, as PyTorch reports the shape first)
        region = region_shape(a.shape, index)
        region = list(a[index].shape if region is None else region)
        got = list(np.shape(value))
        if advanced:
            raise _shape_mismatch(got, region) from None
        raise expand_error(got, region, getattr(value, "dtype", None)) from None


def _fits(got, region):
    return len(got) <= len(region) and all(
        n in (1, m) for n, m in zip(got[::-1], region[::-1]))


def _shape_mismatch(got, region):
    return RuntimeError(
        f"shape mismatch: value tensor of shape {list(got)} cannot be broadcast to indexing "
        f"result of shape {list(region)}")


def expand_error(got, target, dtype=None):
    """PyTorch's error for a shape ``got`` (of a value of NumPy ``dtype``, float32 when not
    given) that does not expand to ``target``."""
    if len(got) > len(target):
        name = _TNAMES.get(getattr(dtype, "name", None), "FloatTensor")
        return RuntimeError(
            f"expand(numbagrad.{name}{{{got}}}, size={target}): the number of sizes "
            f"provided ({len(target)}) must be greater or equal to the number of dimensions in "
            f"the tensor ({len(got)})"
        )
    pad = [1] * (len(target) - len(got)) + got
    dim = max(d for d in range(len(target)) if pad[d] not in (1, target[d]))
    return RuntimeError(
        f"The expanded size of the tensor ({target[dim]}) must match the existing size "
        f"({pad[dim]}) at non-singleton dimension {dim}.  Target sizes: {target}.  "
        f"Tensor sizes: {got}"
    )


index_put.defjvp(linear(index_put, 0, 2))


@index_put.defvjp
def index_put_vjp(ctx, grad):
    _check_sources(ctx)
    # (recorded: x's gradient is the same index_put as the forward's, PyTorch's
    # grad.index_put(indices, zeros): IndexPutBackward0, or CopySlices through a view)
    g_x = grad if ctx.accumulate else index_put(
        grad, _Index(ctx.index, ctx.kinds if _grad_state.enabled else ()), 0)
    if len(ctx.input_shapes) == 1:
        return g_x
    shape = tuple(ctx.input_shapes[1])
    lead = 0
    while lead < len(shape) and shape[lead] == 1:  # (the dims write_region dropped)
        lead += 1
    g_v = index_select_any(grad, _Index(ctx.index, {"advanced"}))
    if _grad_state.enabled and "advanced" not in ctx.kinds:
        # recorded: a basic index writes through a view, and PyTorch's CopySlices hands the
        # copy a clone of the region's gradient (CloneBackward0). That is the last node where
        # the value is the region's shape (leading ones beyond the region's dims aside); where
        # it broadcasts, PyTorch's last is the view of the value it wrote from (ViewBackward0)
        region = tuple(g_v.shape)
        trim = max(len(shape) - len(region), 0)
        if shape[:trim] == (1,) * trim and shape[trim:] == region:
            return g_x, g_v.reshape(shape).clone()
        if not shape:  # (a 0-d value PyTorch fills in, FillBackward's sum: no view of it)
            return g_x, sum_to(g_v.clone(), shape)
        return g_x, sum_to(g_v.clone(), shape[lead:]).view(shape)
    if tuple(g_v.shape) == shape:
        return g_x, g_v  # (the region's gradient itself: IndexBackward0 under create_graph)
    g_v = sum_to(g_v, shape[lead:])
    if lead:
        g_v = g_v.reshape(shape)
    return g_x, g_v


# ---------------------------------------------------------------- joins and splits


def _join_dtype(tensors, name):
    if not tensors:
        raise RuntimeError(f"{name}(): expected a non-empty list of Tensors")
    return D.result_type(*tensors)


@composite("cat", variants="function", aliases="concat concatenate")
def cat(ctx, tensors, dim=0):
    joined = _cat_alike(ctx, tensors, dim)
    if joined is not None:
        return joined
    dt = _join_dtype(tensors, "torch.cat")
    # (the arrays' shapes, plain tuples: a Tensor's shape is a new Size each time it is read)
    shapes = [t._data.shape for t in tensors]
    for i, sh in enumerate(shapes):
        if not sh:
            raise RuntimeError(
                f"zero-dimensional tensor (at position {i}) cannot be concatenated"
            )
    # the shape comes from the first tensor that is not a legacy empty 1-D one (PyTorch skips
    # those whatever the other tensors' dims)
    ref = next((sh for sh in shapes if sh != _LEGACY_EMPTY), shapes[0])
    nd = len(ref)
    # (when every tensor is empty 1-D, PyTorch does not check dim: the result is empty 1-D)
    d = normalize_dims(dim, nd)[0] if ref != _LEGACY_EMPTY else 0
    for i, sh in enumerate(shapes):
        if sh == _LEGACY_EMPTY:
            continue
        if len(sh) != nd:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {nd} and {len(sh)}"
            )
        for k in range(nd):
            if k != d and sh[k] != ref[k]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{ref[k]} but got size {sh[k]} for tensor number {i} in the list."
                )
    ctx.dim = d
    parts = [t._data.astype(dt.np, copy=False) for t, sh in zip(tensors, shapes)
             if not (sh == _LEGACY_EMPTY and nd != 1)]
    ctx.sizes = [sh[d] if len(sh) == nd else 0 for sh in shapes]
    shape = list(ref) if ref != _LEGACY_EMPTY else [0]
    shape[d] = sum(ctx.sizes)
    shape = tuple(shape)
    strides = layout.join_strides(shape, _layouts(tensors))
    return _join(ctx.backend, parts, d, shape, strides, dt)


_LEGACY_EMPTY = (0,)  # the shape of a tensor ``cat`` leaves out whatever the others' shapes


def _cat_alike(ctx, tensors, dim):
    """``cat``'s commonest call without its general checks: C-contiguous CPU arrays of one
    dtype and rank (below 4: no channels-last layout to keep), equal but along ``dim``, a
    plain int (an RNN step's ``cat((input, hidden), 1)``: 6 -> 2 us of Python); None for
    anything else, which the general code checks and joins."""
    if type(tensors) is not list and type(tensors) is not tuple or not tensors:
        return None
    t0 = tensors[0]
    a0 = t0._data if type(t0) is Tensor or type(t0) in PLAIN_SUBCLASSES else None
    if type(a0) is not np.ndarray:
        return None
    nd, dt = a0.ndim, a0.dtype
    if not 0 < nd < 4 or type(dim) is not int or not -nd <= dim < nd:
        return None
    d = dim % nd
    arrays = []
    for t in tensors:
        # (plain tensors: a subclass with behaviour of its own takes the general call)
        if type(t) is not Tensor and type(t) not in PLAIN_SUBCLASSES:
            return None
        a = t._data
        if type(a) is not np.ndarray or a.dtype is not dt or not a.flags.c_contiguous:
            return None  # (a lazy tensor's is no array until evaluated)
        arrays.append(a)
    try:
        # (NumPy checks the ranks and the sizes but along ``dim``; the general code raises
        # PyTorch's errors)
        out = np.concatenate(arrays, axis=d)
    except ValueError:
        return None
    ctx.dim = d
    ctx.sizes = [a.shape[d] for a in arrays]
    return out


def _layouts(tensors):
    """The (shape, element strides) of each tensor's array, as ``layout`` reads them."""
    for t in tensors:
        a = t._data
        yield a.shape, [st // a.itemsize for st in a.strides]


def _join(be, parts, d, shape, strides, dt):
    """``parts`` concatenated along ``d`` into a new array of ``shape`` and ``strides`` (None:
    C order; NumPy's own result would take its layout from the parts)."""
    if strides is None:
        out = be.empty(shape, dt.np)
    else:
        out = be.empty_strided(shape, strides, dt.np)
    return be.concatenate(parts, axis=d, out=out)


cat.defjvp(linear(cat))


@cat.defvjp
def cat_vjp(ctx, grad):
    out, start = [], 0
    for shape, n in zip(ctx.input_shapes, ctx.sizes):
        if tuple(shape) == (0,):  # an empty 1-D tensor: a new empty gradient, as PyTorch's
            out.append(zeros(0, dtype=grad.dtype, device=grad.device))
            continue
        idx = (slice(None),) * ctx.dim + (slice(start, start + n),)
        if _grad_state.enabled:  # recorded: PyTorch's slice, a node even over the whole dim
            out.append(slice_dim(grad, idx))
        else:
            out.append(_part(grad, idx))
        start += n
    return tuple(out)


def _part(grad, idx):
    """``grad[idx]`` for basic ``idx`` where nothing records it: the array's view, without
    the indexing machinery (a cat's or stack's gradient, one part per input; AccumulateGrad
    copies a view it does not own)."""
    return Tensor._make(grad._data[idx])


@composite("stack", variants="function")
def stack(ctx, tensors, dim=0):
    joined = _stack_alike(ctx, tensors, dim)
    if joined is not None:
        return joined
    dt = _join_dtype(tensors, "stack")
    # (the arrays' shapes, plain tuples, as cat's)
    each = tensors[0]._data.shape
    for i, t in enumerate(tensors):
        if t._data.shape != each:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {_fmt(tensors[0].shape)} "
                f"at entry 0 and {_fmt(t.shape)} at entry {i}"
            )
    d = ctx.dim = normalize_dims(dim, len(each) + 1)[0]
    shape = (*each[:d], len(tensors), *each[d:])
    # PyTorch's stack is cat along ``d`` viewed with the new dim split off (or, at the end,
    # cat of the inputs unsqueezed there, C order): that layout, the split dim's stride
    # spread over the two
    strides = None
    if d < len(each):
        joined = layout.join_strides((*each[:d], len(tensors) * each[d], *each[d + 1:]),
                                     _layouts(tensors))
        if joined is not None:
            strides = (*joined[:d], each[d] * joined[d], *joined[d:])
    parts = [t._data.astype(dt.np, copy=False).reshape((*each[:d], 1, *each[d:]))
             for t in tensors]
    return _join(ctx.backend, parts, d, shape, strides, dt)


def _stack_alike(ctx, tensors, dim):
    """``stack``'s commonest call without its general checks, as ``_cat_alike``: C-contiguous
    CPU arrays of one dtype and shape, of rank below 3 (a C-contiguous result, as PyTorch's),
    ``dim`` a plain int in range; None for anything else."""
    if type(tensors) is not list and type(tensors) is not tuple or not tensors:
        return None
    arrays = []
    for t in tensors:
        if type(t) is not Tensor and type(t) not in PLAIN_SUBCLASSES:
            return None  # (as _cat_alike)
        arrays.append(t._data)
    a0 = arrays[0]
    if type(a0) is not np.ndarray:
        return None
    each, dt = a0.shape, a0.dtype
    nd = len(each) + 1
    if nd > 3 or type(dim) is not int or not -nd <= dim < nd:
        return None
    for a in arrays:
        if (type(a) is not np.ndarray or a.dtype is not dt or a.shape != each
                or not a.flags.c_contiguous):
            return None
    d = ctx.dim = dim % nd
    if d == 0 and each:
        return np.concatenate(arrays).reshape((len(arrays), *each))
    split = (*each[:d], 1, *each[d:])
    return np.concatenate([a.reshape(split) for a in arrays], axis=d)


stack.defjvp(linear(stack))
cat.out_overlap = stack.out_overlap = True  # (out= refuses an input sharing part of it)


def _joined_lean(op, alike):
    """The lean hook of ``cat`` / ``stack`` (``Composite.lean``): the call ``alike`` takes
    (plain CPU tensors, one dtype, C order, an int dim), joined and recorded as
    ``call_composite`` would (the general call's checks and its scans of the list cost 3 of
    its 5 us); None for anything else."""

    def lean(tensors, dim=0, **kwargs):
        if kwargs:
            return None
        ctx = object.__new__(CompositeCtx)  # (as call_composite makes it)
        ctx.saved = {}
        ctx.backend = cpu
        out = alike(ctx, tensors, dim)
        if out is None:
            return None
        result = Tensor._make(out)
        if needs_grad(tensors):
            record_composite(op, ctx, list(tensors), (result,))
        return result

    return lean


cat.lean = _joined_lean(cat, _cat_alike)
stack.lean = _joined_lean(stack, _stack_alike)


@stack.defvjp
def stack_vjp(ctx, grad):
    if _grad_state.enabled:  # recorded: PyTorch's select nodes
        return tuple(grad.select(ctx.dim, i) for i in range(len(ctx.input_shapes)))
    lead = (slice(None),) * ctx.dim
    # (the Ellipsis keeps a 0-d part an array: NumPy gives a scalar for a full integer index)
    return tuple(_part(grad, (*lead, i, ...)) for i in range(len(ctx.input_shapes)))


@composite("split", node="SplitBackward0", view=True, variants="function")
def split(ctx, tensor, split_size_or_sections, dim=0):
    # (``tensor``: PyTorch's keyword for the function, ``torch.split(tensor=x, ...)``)
    x = tensor
    # PyTorch's checks, in its order
    if x.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if isinstance(split_size_or_sections, (list, tuple)):
        d = normalize_dims(dim, x.ndim)[0]
        n = x.shape[d]
        sizes = [int(s) for s in split_size_or_sections]
        if any(s < 0 for s in sizes):
            raise RuntimeError(
                "split_with_sizes expects split_sizes have only non-negative entries, but got "
                f"split_sizes={_fmt(sizes)}"
            )
        if sum(sizes) != n:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size "
                f"at dimension {d}), but got split_sizes={_fmt(sizes)}"
            )
        ctx.node_name = "SplitWithSizesBackward0"
    else:
        step = int(split_size_or_sections)
        if step < 0:
            raise RuntimeError(
                f"split expects split_size be non-negative, but got split_size={step}"
            )
        d = normalize_dims(dim, x.ndim)[0]
        n = x.shape[d]
        if step == 0 and n:
            raise RuntimeError(
                "split_size can only be 0 if dimension size is 0, but got dimension size of "
                f"{n}"
            )
        # one piece at least: an empty dim, or a split size past the dim's size, gives one
        sizes = [min(step, n - s) for s in range(0, n, step)] if n else [0]
    ctx.dim = d
    outs, start = [], 0
    for s in sizes:
        idx = (slice(None),) * d + (slice(start, start + s),)
        outs.append(x._data[idx])
        start += s
    return tuple(outs)


split.defjvp(linear(split))


@split.defvjp
def split_vjp(ctx, grads):
    # (a single output's gradient comes as a Tensor, not a list of one)
    return cat(grads if isinstance(grads, list) else [grads], dim=ctx.dim)


@public("method", name="split")
def split_method(x, split_size, dim=0):
    """``x.split(...)``: the method names its sizes ``split_size`` (an int or a list), where
    ``torch.split`` names them ``split_size_or_sections``."""
    return split(x, split_size, dim)


@public("function method")
def chunk(x, chunks, dim=0):
    if x.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = normalize_dims(dim, x.ndim)[0]
    n = x.shape[d]
    if n == 0:
        # as in PyTorch: ``chunks`` empty pieces (a split of size 0 would give one)
        return split(x, [0] * chunks, d)
    return split(x, -(-n // chunks), d)


@public("function method")
def select(x, dim, index):
    d = normalize_dims(dim, x.ndim)[0]
    if not -x.shape[d] <= index < x.shape[d]:  # (x[i]'s error words it otherwise)
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(x.shape)} at dimension {d}")
    return getitem(x, (slice(None),) * d + (index,))
