"""Shape conveniences built from the movement and indexing ops (their nodes are those ops',
as PyTorch's are), ``rot90`` with its own node, the sorted-sequence lookups and the
quantiles."""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import backend
from .. import dtypes as D
from .._tensor import Size, Tensor, _wrap_dim
from ..factory import full, zeros_like
from . import elementwise as E
from . import indexing as I
from . import movement as M
from .forward import linear
from .inplace import copy_, inplace, view_inplace
from .registry import composite, not_implemented, public, sum_to

# ---------------------------------------------------------------- dims


@public("function method", aliases="moveaxis")
def movedim(input, source, destination):
    """``input`` with the dims ``source`` moved to the positions ``destination``."""
    src = list(source) if isinstance(source, (list, tuple)) else [source]
    dst = list(destination) if isinstance(destination, (list, tuple)) else [destination]
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({src} dims) should contain "
            f"the same number of dims as destination ({dst} dims)")
    n = input.ndim
    src = [_wrap_dim(d, n) for d in src]
    dst = [_wrap_dim(d, n) for d in dst]
    for name, dims in (("source", src), ("destination", dst)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({dims})")
    if n == 0:  # (a 0-d tensor: dim 0 or -1 names its one position; PyTorch's alias)
        return M.alias(input)
    order = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(n) if d not in src)
    return M.permute(input, tuple(o if o is not None else next(rest) for o in order))


# (each alias under its own PyTorch keywords: swapaxes' axis0 and axis1, swapdims' dim0 and dim1)
@public("function method")
def swapaxes(input, axis0, axis1):
    return M.transpose(input, axis0, axis1)


@public("function method")
def swapdims(input, dim0, dim1):
    return M.transpose(input, dim0, dim1)


# the in-place view changes (methods only, as PyTorch's)


@public("method", name="t_")
def t_(input):
    if input.ndim > 2:  # (t's refusal, in the in-place variant's name)
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return view_inplace(input, M.t, "TBackward1")


@public("method", name="transpose_", aliases="swapdims_")
def transpose_(input, dim0, dim1):
    return view_inplace(input, M.transpose, "TransposeBackward1", dim0, dim1)


@public("method", name="swapaxes_")
def swapaxes_(input, axis0, axis1):
    return transpose_(input, axis0, axis1)


@public("method", name="unsqueeze_")
def unsqueeze_(input, dim):
    return view_inplace(input, M.unsqueeze, "UnsqueezeBackward1", dim)


@public("method", name="squeeze_")
def squeeze_(input, dim=None):
    # (squeeze's nodes SqueezeBackward0, 1, 2 (no dim, a dim, dims) are 3, 4, 5 in place)
    node = 3 if dim is None else 4 if isinstance(dim, int) else 5
    return view_inplace(input, M.squeeze, f"SqueezeBackward{node}", dim)


@public("function method", name="as_strided_")
def as_strided_(input, size, stride, storage_offset=0):
    return view_inplace(input, M.as_strided, "AsStridedBackward1", size, stride, storage_offset)


@public("function method")
def unflatten(input, dim, sizes):
    """``input`` with dim ``dim`` split into ``sizes`` (one of them may be -1)."""
    if not input.ndim:  # (PyTorch wraps its index error in its own)
        raise RuntimeError("unflatten got an unexpected error:\nDimension specified as "
                           f"{dim} but tensor has no dimensions")
    d = _wrap_dim(dim, input.ndim)
    sizes = list(sizes)
    n = input.shape[d]
    known = math.prod(s for s in sizes if s != -1)
    if sizes.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if (-1 in sizes and (known == 0 or n % known)) or (-1 not in sizes and known != n):
        raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size of "
                           f"dim {dim} ({n}) in the input tensor")
    # (a view, as PyTorch's: splitting one dim is possible whatever the strides; the -1
    # inferred here, from that dim alone, as an empty tensor's view could not)
    sizes = [n // known if s == -1 else s for s in sizes]
    shape = tuple(input.shape[:d]) + tuple(sizes) + tuple(input.shape[d + 1:])
    return M.view(input, shape)


# ---------------------------------------------------------------- splits

ERR_TENSOR_SPLIT_ARGS = (
    "tensor_split() received an invalid combination of arguments - got (Tensor, {}), but "
    "expected one of:\n"
    " * (Tensor input, tuple of ints indices, int dim = 0)\n"
    " * (Tensor input, Tensor tensor_indices_or_sections, int dim = 0)\n"
    " * (Tensor input, int sections, int dim = 0)\n"
)


def _sections_or_indices(name, given, sections, indices, tensor_indices_or_sections):
    """The one of PyTorch's overloads' arguments given: by position (``given``) or by its
    keyword, ``sections`` (an int), ``indices`` (ints) or, for ``tensor_split``,
    ``tensor_indices_or_sections`` (a tensor)."""
    named = {k: v for k, v in (("sections", sections), ("indices", indices),
                               ("tensor_indices_or_sections", tensor_indices_or_sections))
             if v is not None}
    if given is not None:
        named = {"": given, **named}
    if len(named) != 1:
        kinds = ("sections, indices or tensor_indices_or_sections" if name == "tensor_split"
                 else "sections or indices")
        raise TypeError(f"{name}() takes one argument of {kinds}, given {len(named)}")
    (key, how), = named.items()
    # a keyword names one overload: a value of another kind matches none (PyTorch's TypeError)
    fits = {"": True, "sections": isinstance(how, (int, np.integer)) and not isinstance(how, bool),
            "indices": isinstance(how, (list, tuple)),
            "tensor_indices_or_sections": isinstance(how, Tensor)}[key]
    if not fits:
        raise TypeError(ERR_TENSOR_SPLIT_ARGS.format(f"{key}={type(how).__name__}")
                        if name == "tensor_split" else
                        f"{name}() received an invalid combination of arguments - got (Tensor, "
                        f"{key}={type(how).__name__})")
    return how


@public("function method")
def tensor_split(input, indices_or_sections=None, dim=0, *, sections=None, indices=None,
                 tensor_indices_or_sections=None):
    """Slices of ``input`` along ``dim`` (views, SliceBackward0 each): ``sections`` pieces of
    sizes differing by one at most, the larger first, or the pieces between ``indices``."""
    how = _sections_or_indices("tensor_split", indices_or_sections, sections, indices,
                               tensor_indices_or_sections)
    if isinstance(how, Tensor):
        if how.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                               "zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {how.ndim} dims")
        if how.dtype is not D.int64:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {D.SCALAR_TYPE[how.dtype.name]}")
        how = how.tolist()
    listed = isinstance(how, (list, tuple))
    if (not listed and not isinstance(how, (int, np.integer)) or isinstance(how, bool)
            or listed and not all(isinstance(i, (int, np.integer)) for i in how)):
        raise TypeError(ERR_TENSOR_SPLIT_ARGS.format(type(how).__name__))
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    d = _wrap_dim(dim, input.ndim)
    if listed:
        bounds = [0, *how, None]
    else:
        if how <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {how}")
        size, more = divmod(input.shape[d], how)
        bounds = [k * size + min(k, more) for k in range(how + 1)]
    lead = (slice(None),) * d
    return tuple(M.slice_dim(input, (*lead, slice(a, b))) for a, b in zip(bounds, bounds[1:]))


def _split_along(name, input, indices_or_sections, least, dim):
    """``hsplit``, ``vsplit``, ``dsplit``: ``tensor_split`` along ``dim`` of a tensor of
    ``least`` dims or more, whose size there a number of sections must divide."""
    if input.ndim < least:
        raise RuntimeError(f"numbagrad.{name} requires a tensor with at least {least} dimension, "
                           f"but got a tensor with {input.ndim} dimensions!")
    n = input.shape[dim]
    if isinstance(indices_or_sections, int) and (
            indices_or_sections == 0 or n % indices_or_sections):
        raise RuntimeError(f"numbagrad.{name} attempted to split along dimension {dim}, but the "
                           f"size of the dimension {n} is not divisible by the split_size "
                           f"{indices_or_sections}!")
    return tensor_split(input, indices_or_sections, dim)


# (PyTorch's overloads take ``sections`` (an int) or ``indices`` (ints), by those keywords)
@public("function method")
def hsplit(input, indices_or_sections=None, *, sections=None, indices=None):
    how = _sections_or_indices("hsplit", indices_or_sections, sections, indices, None)
    return _split_along("hsplit", input, how, 1, 0 if input.ndim == 1 else 1)


@public("function method")
def vsplit(input, indices_or_sections=None, *, sections=None, indices=None):
    how = _sections_or_indices("vsplit", indices_or_sections, sections, indices, None)
    return _split_along("vsplit", input, how, 2, 0)


@public("function method")
def dsplit(input, indices_or_sections=None, *, sections=None, indices=None):
    how = _sections_or_indices("dsplit", indices_or_sections, sections, indices, None)
    return _split_along("dsplit", input, how, 3, 2)


@public("function method")
def split_with_sizes(input, split_sizes, dim=0):
    return M.split(input, list(split_sizes), dim)


# ---------------------------------------------------------------- joins


def _at_least(grow):
    """``atleast_Nd``: one tensor (or each of several, then a tuple) with ``grow`` applied when
    it has fewer than N dims."""

    def function(*tensors):
        if len(tensors) == 1 and not isinstance(tensors[0], Tensor):
            return tuple(grow(t) for t in tensors[0])
        if len(tensors) == 1:
            return grow(tensors[0])
        return tuple(grow(t) for t in tensors)

    return function


def _1d(t):
    return M.reshape(t, 1) if t.ndim == 0 else t


def _2d(t):
    if t.ndim == 0:
        return M.reshape(t, 1, 1)
    return M.unsqueeze(t, 0) if t.ndim == 1 else t


def _3d(t):
    # (PyTorch's: a vector (n) becomes (1, n, 1), a matrix (m, n) becomes (m, n, 1))
    if t.ndim == 0:
        return M.reshape(t, 1, 1, 1)
    if t.ndim == 1:
        return M.unsqueeze(M.unsqueeze(t, 0), -1)
    return M.unsqueeze(t, -1) if t.ndim == 2 else t


atleast_1d = public("function", "atleast_1d")(_at_least(_1d))
atleast_2d = public("function", "atleast_2d")(_at_least(_2d))
atleast_3d = public("function", "atleast_3d")(_at_least(_3d))


def _nonempty(name, tensors):
    if not len(tensors):
        raise RuntimeError(f"{name} expects a non-empty TensorList")


@public("function")
def hstack(tensors):
    _nonempty("hstack", tensors)
    parts = [_1d(t) for t in tensors]
    return M.cat(parts, 0 if parts[0].ndim == 1 else 1)


@public("function", aliases="row_stack")
def vstack(tensors):
    _nonempty("vstack", tensors)
    return M.cat([_2d(t) for t in tensors], 0)


@public("function")
def dstack(tensors):
    _nonempty("dstack", tensors)
    return M.cat([_3d(t) for t in tensors], 2)


@public("function")
def column_stack(tensors):
    """The tensors side by side as columns: a vector (or a number) is one column."""
    _nonempty("column_stack", tensors)
    return hstack([M.reshape(t, t.numel(), 1) if t.ndim <= 1 else t for t in tensors])


@public("method")
def reshape_as(input, other):
    return M.reshape(input, tuple(other.shape))


@public("method")
def type_as(input, other):
    """``input`` in ``other``'s dtype, on ``other``'s device (itself if they match)."""
    out = input
    if out.device != other.device:
        out = M.to_device(out, other.device)
    return M.to_dtype(out, other.dtype) if out.dtype is not other.dtype else out


@public("method")
def sum_to_size(input, *sizes, size=None):
    """``input`` summed down to ``size`` (given as ints, one sequence, or ``size=``), which
    must expand to ``input``'s shape."""
    size = M.parse_shape(M.by_keyword(sizes, size))
    shape = tuple(input.shape)
    lead = len(shape) - len(size)
    if lead < 0 or any(s != 1 and s != n for s, n in zip(size, shape[lead:])):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    return sum_to(input, size)


# ---------------------------------------------------------------- broadcasting


def broadcast_shapes(*shapes):
    """The shape the ``shapes`` broadcast to, as PyTorch's ``torch.broadcast_shapes``."""
    out: list = []
    for k, s in enumerate(shapes):
        s = (s,) if isinstance(s, int) else tuple(s)
        for i in range(1, len(s) + 1):
            n = s[-i]
            if i > len(out):
                out.insert(0, n)
            elif out[-i] == 1:
                out[-i] = n
            elif n != 1 and n != out[-i]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {n} at -{i}! Mismatching "
                    f"argument at index {k} had {s}; but expected shape should be broadcastable "
                    f"to {out}")
    return Size(out)


public("function")(broadcast_shapes)


@public("function")
def broadcast_tensors(*tensors):
    """The tensors expanded to one shape (views)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape: list = []
    for t in tensors:
        for i in range(1, t.ndim + 1):
            n = t.shape[-i]
            if i > len(shape):
                shape.insert(0, n)
            elif shape[-i] == 1:
                shape[-i] = n
            elif n != 1 and n != shape[-i]:
                raise RuntimeError(
                    f"The size of tensor a ({shape[-i]}) must match the size of tensor b ({n}) "
                    f"at non-singleton dimension {len(shape) - i}")
    # a tensor of the shape already is returned itself, as PyTorch's (no ExpandBackward0: a
    # distribution's parameter prints as the leaf it was given)
    shape = tuple(shape)
    return tuple(t if t.shape == shape else M.expand(t, *shape) for t in tensors)


WARN_MESHGRID = ("torch.meshgrid: in an upcoming release, it will be required to pass the "
                 "indexing argument.")


@public("function")
def meshgrid(*tensors, indexing=None):
    """Coordinate grids of 0-d or 1-d tensors: ``"ij"`` (matrix indexing, the default) or
    ``"xy"`` (Cartesian: the grids of the first two tensors swapped, as is their order)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn(WARN_MESHGRID, UserWarning, stacklevel=3)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: '
                           f"{indexing}")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(
                f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    swap = indexing == "xy" and len(tensors) >= 2
    order = list(tensors)
    if swap:
        order[0], order[1] = order[1], order[0]
    shape = [t.numel() for t in order]
    grids = []
    for k, t in enumerate(order):
        view = [1] * len(order)
        view[k] = -1
        grids.append(M.expand(M.view(t, *view), *shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


# ---------------------------------------------------------------- differences, rotation


@public("function method")
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim`` (``prepend``/``append`` joined first)."""
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _wrap_dim(dim, input.ndim)
    if n == 0:
        # (PyTorch's diff_helper: zeros_like(input).copy_(input), prepend and append unused;
        # a new tensor in input's layout, CopyBackwards)
        return copy_(zeros_like(input), input)
    parts = [p for p in (prepend, input, append) if p is not None]
    x = M.cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        if x.shape[d] == 0:
            break
        hi = M.getitem(x, (slice(None),) * d + (slice(1, None),))
        lo = M.getitem(x, (slice(None),) * d + (slice(None, -1),))
        x = E.ne(hi, lo) if x.dtype is D.bool_ else hi - lo  # (bools: logical xor)
    return x


# ---------------------------------------------------------------- trapezoidal integration


def _samples(y, x, dim, name):
    """The steps between the sample points ``x`` (a tensor), viewed to broadcast with ``y``'s
    differences along ``dim``, as PyTorch's (NumPy's) trapezoid."""
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y.ndim
        shape[dim] = x.shape[0]
        x = M.view(x, *shape)
    elif x.ndim < y.ndim:
        x = M.view(x, *([1] * (y.ndim - x.ndim) + list(x.shape)))
    return _slice(x, dim, 1, None) - _slice(x, dim, None, -1)


def _slice(t, dim, start, stop):
    return M.getitem(t, (slice(None),) * dim + (slice(start, stop),))


def _integrate(y, x, dx, dim, name):
    if x is not None and dx is not None:  # (PyTorch's argument parser's refusal)
        raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, "
                        f"Tensor, dx={type(dx).__name__}), but expected one of:\n"
                        " * (Tensor y, Tensor x, *, int dim = -1)\n"
                        " * (Tensor y, *, Number dx = 1, int dim = -1)\n")
    if y.dtype is D.bool_:
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")
    d = _wrap_dim(dim, y.ndim)
    steps = None if x is None else _samples(y, x, d, name)
    if not y.dtype.is_floating_point:  # (integers integrate to floats; they carry no gradient)
        y = y.to(D.to_float(y.dtype))
    return y, d, steps, 1 if dx is None else dx


@public("function", aliases="trapz")
def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule's integral of ``y`` along ``dim``, at the sample points ``x`` or
    ``dx`` apart (composed as PyTorch's)."""
    y, d, steps, dx = _integrate(y, x, dx, dim, "trapezoid")
    if y.shape[d] == 0:
        shape = tuple(n for k, n in enumerate(y.shape) if k != d)
        return Tensor._make(backend.of(y._data).zeros(shape, D.to_float(y.dtype).np))
    # (a scalar factor as PyTorch's C++ multiplies and divides: MulBackward1, DivBackward1)
    if steps is None:
        ends = M.select(y, d, 0) + M.select(y, d, -1)
        return E.mul_scalar(y.sum(d) - E.mul_scalar(ends, 0.5), dx)
    return E.div_scalar((steps * (_slice(y, d, 1, None) + _slice(y, d, None, -1))).sum(d), 2.0)


@public("function")
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal integrals of ``y`` along ``dim`` (one fewer than the samples)."""
    y, d, steps, dx = _integrate(y, x, dx, dim, "cumulative_trapezoid")
    sums = _slice(y, d, None, -1) + _slice(y, d, 1, None)
    if steps is None:
        return E.mul_scalar(sums, dx / 2.0).cumsum(d)
    return E.div_scalar((steps * sums).cumsum(d), 2.0)


# ---------------------------------------------------------------- products of sets, blocks


@public("function")
def cartesian_prod(*tensors):
    """The tuples of the Cartesian product of 1-d tensors, one per row (a single tensor is
    returned as it is), stacked from their meshgrid as PyTorch's."""
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return M.stack([M.reshape(g, -1) for g in grids], 1)


@public("function")
def combinations(input, r=2, with_replacement=False):
    """The length-``r`` combinations of the elements of the 1-d ``input`` (with replacement:
    ``itertools.combinations_with_replacement``'s), one per row: its meshgrid's grids taken
    where the indices rise, as PyTorch's."""
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return Tensor._make(backend.of(input._data).zeros((0,), input._data.dtype))
    n = input.shape[0]
    index = np.indices((n,) * r).reshape(r, -1)
    rising = np.diff(index, axis=0)
    keep = np.all(rising >= 0 if with_replacement else rising > 0, axis=0).reshape((n,) * r)
    mask = Tensor._make(keep).to(input.device)
    grids = meshgrid(*([input] * r), indexing="ij")
    return M.stack([I.masked_select(g, mask) for g in grids], 1)


@composite("block_diag")
def block_diag(ctx, tensors):
    """The matrices (0-d: 1 x 1, 1-d: one row) on the diagonal of a matrix of zeros."""
    for k, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError("torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {k} has {t.ndim} dimensions")
    if not tensors:  # (PyTorch's empty row)
        return ctx.backend.zeros((1, 0), D.default_float.np)
    dt = D.result_type(*tensors)
    blocks = [M.reshape(Tensor._make(t._data).to(dt), (1,) * (2 - t.ndim) + tuple(t.shape))._data
              for t in tensors]
    be = ctx.backend
    out = be.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)), dt.np)
    r = c = 0
    for b in blocks:
        be.copyto(out[r:r + b.shape[0], c:c + b.shape[1]], b)
        r, c = r + b.shape[0], c + b.shape[1]
    ctx.corners = [(b.shape, k) for k, b in enumerate(blocks)]
    return out


@public("function", name="block_diag")
def block_diag_function(*tensors):
    """``block_diag`` of the tensors passed one by one (BlockDiagBackward0)."""
    return block_diag(list(tensors))


block_diag.defjvp(linear(block_diag))


@block_diag.defvjp
def block_diag_vjp(ctx, grad):
    out, r, c = [], 0, 0
    for (rows, cols), k in ctx.corners:
        g = grad[r:r + rows, c:c + cols]
        out.append(M.reshape(g, ctx.input_shapes[k]))
        r, c = r + rows, c + cols
    return tuple(out)


@composite("rot90", variants="function method")
def rot90(ctx, x, k=1, dims=(0, 1)):
    """``x`` rotated by ``k`` quarter turns in the plane ``dims``, from the first dim toward
    the second."""
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if x.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {x.ndim}")
    d0, d1 = _wrap_dim(dims[0], x.ndim), _wrap_dim(dims[1], x.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    ctx.k, ctx.dims = k, (d0, d1)
    x = Tensor._make(x._data)  # (the array computation, not recorded)
    k %= 4
    if k == 1:
        out = M.transpose(I.flip(x, d1), d0, d1)
    elif k == 2:
        out = I.flip(x, d0, d1)
    elif k == 3:
        out = I.flip(M.transpose(x, d0, d1), d1)
    else:
        return M.contiguous(M.clone(x))._data  # (PyTorch's clone in the contiguous format)
    # (PyTorch's flip, then transposed in place for an odd k: the copy keeps that layout)
    return out._data


rot90.defvjp(lambda ctx, grad: rot90(grad, -ctx.k, ctx.dims))
rot90.defjvp(linear(rot90))


# ---------------------------------------------------------------- pixel shuffle


def _check_shuffle(name, x, factor, what):
    if x.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {x.ndim} dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")


@composite("pixel_shuffle", variants="function functional")
def pixel_shuffle(ctx, input, upscale_factor):
    """``(*, C r^2, H, W)`` to ``(*, C, H r, W r)``: each channel group of ``r * r`` becomes an
    ``r`` by ``r`` block of pixels."""
    x, r = input, upscale_factor
    _check_shuffle("pixel_shuffle", x, r, "upscale_factor")
    *batch, c, h, w = x.shape
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
            f"of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    ctx.factor = r
    n = len(batch)
    x = M.reshape(Tensor._make(x._data), *batch, c // (r * r), r, r, h, w)  # (not recorded)
    x = M.permute(x, *range(n), n, n + 3, n + 1, n + 4, n + 2)
    return M.contiguous(x).reshape(*batch, c // (r * r), h * r, w * r)._data


@composite("pixel_unshuffle", variants="function functional")
def pixel_unshuffle(ctx, input, downscale_factor):
    """``(*, C, H r, W r)`` to ``(*, C r^2, H, W)``: pixel_shuffle's inverse."""
    x, r = input, downscale_factor
    _check_shuffle("pixel_unshuffle", x, r, "downscale_factor")
    *batch, c, h, w = x.shape
    for d, (what, size) in enumerate((("height", h), ("width", w))):
        if size % r:
            raise RuntimeError(
                f"pixel_unshuffle expects {what} to be divisible by downscale_factor, but "
                f"input.size({d - 2})={size} is not divisible by {r}")
    ctx.factor = r
    n = len(batch)
    x = M.reshape(Tensor._make(x._data), *batch, c, h // r, r, w // r, r)
    x = M.permute(x, *range(n), n, n + 2, n + 4, n + 1, n + 3)
    return M.contiguous(x).reshape(*batch, c * r * r, h // r, w // r)._data


pixel_shuffle.defvjp(lambda ctx, grad: pixel_unshuffle(grad, ctx.factor))
pixel_shuffle.defjvp(linear(pixel_shuffle))
pixel_unshuffle.defvjp(lambda ctx, grad: pixel_shuffle(grad, ctx.factor))
pixel_unshuffle.defjvp(linear(pixel_unshuffle))


def _shuffled(x, groups):
    """``x``'s channels (dim 1) in ``groups`` groups, interleaved: the channel ``g * (C /
    groups) + k`` moves to ``k * groups + g``, as an array (PyTorch's checks and words)."""
    if x.ndim <= 2:
        raise RuntimeError("channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(x.shape)}")
    if groups <= 0:
        raise RuntimeError("Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    n, c, *rest = x.shape
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    x = M.reshape(Tensor._make(x._data), n, groups, c // groups, *rest)  # (not recorded)
    return M.contiguous(M.transpose(x, 1, 2)).reshape(n, c, *rest)._data


@composite("channel_shuffle", variants="function functional")
def channel_shuffle(ctx, input, groups):
    """The channels (dim 1) of ``input`` cut into ``groups`` groups and interleaved (ShuffleNet's
    channel shuffle)."""
    ctx.groups = groups
    return _shuffled(input, groups)


# (the inverse shuffle: as many groups as each group had channels)
channel_shuffle.defvjp(lambda ctx, grad: channel_shuffle(grad, grad.shape[1] // ctx.groups))
channel_shuffle.defjvp(linear(channel_shuffle))


@public("function functional")
def native_channel_shuffle(input, groups):
    """``channel_shuffle`` recorded, as PyTorch's, without a derivative (its backward raises)."""
    out = Tensor._make(_shuffled(input, groups))
    return not_implemented(out, "aten::native_channel_shuffle", input)


@public("function")
def unravel_index(indices, shape):
    """The coordinates in an array of ``shape`` of each flat index of ``indices``: one int64
    tensor per dim (out-of-range and negative indices wrap, as PyTorch's floor division and
    remainder make them)."""
    if indices.dtype.is_floating_point or indices.dtype is D.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if isinstance(shape, int):
        shape = [shape]
    elif not isinstance(shape, (list, tuple)):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    shape = list(shape)
    for d in shape:
        if not isinstance(d, int):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(d)}")
    if any(d < 0 for d in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(shape)}")
    # each dim's stride in a C-ordered array of ``shape``
    strides = [math.prod(shape[k + 1:]) for k in range(len(shape))]
    flat = M.unsqueeze(indices, -1)
    coords = E.remainder(E.floor_divide(flat, _int64s(strides, indices)), _int64s(shape, indices))
    return I.unbind(coords, -1)


def _int64s(values, like):
    return Tensor._make(np.asarray(values, np.int64)).to(like.device)


# ---------------------------------------------------------------- sorted sequences


@public("function")
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """For each value of ``input``, the index where it would be inserted in
    ``sorted_sequence`` (its last dim; the leading dims must match ``input``'s) to keep it
    sorted: before equal values, or after them with ``right=True`` / ``side="right"``."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(
                f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    seq = sorted_sequence._host()
    if sorter is not None:
        seq = np.take_along_axis(seq, sorter._host(), -1)
    scalar = not isinstance(input, Tensor)
    values = np.asarray(input) if scalar else input._host()
    if seq.ndim > 1 and (scalar or seq.shape[:-1] != values.shape[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(seq.shape)} and input value tensor "
            f"{list(values.shape)}")
    how = "right" if right else "left"
    if seq.ndim <= 1:
        out = np.searchsorted(seq, values, how)
    else:
        rows_s = seq.reshape(-1, seq.shape[-1])
        rows_v = values.reshape(-1, values.shape[-1])
        out = np.stack([np.searchsorted(s, v, how) for s, v in zip(rows_s, rows_v)]).reshape(
            values.shape)
    out = Tensor._make(np.asarray(out, np.int32 if out_int32 else np.int64))
    device = sorted_sequence.device
    return out if device.type == "cpu" else M.to_device(out, device)


@public("function")
def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of ``boundaries`` (1-d, sorted) each value of ``input`` falls in."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


# ---------------------------------------------------------------- quantiles

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    """PyTorch's quantile_impl, op for op (so its nodes are PyTorch's): the sorted values along
    ``dim`` (all of them for None), read at rank ``q * (n - 1)`` (n: the count of numbers with
    ``ignore_nan``; a NaN among them makes a quantile NaN otherwise), interpolated between the
    neighbours as ``interpolation`` says."""
    if not isinstance(q, Tensor):
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
        q = full((), q, dtype=input.dtype, device=input.device)
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if q.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if input.dtype not in (D.float32, D.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if q.dtype is not input.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if not bool(((q >= 0) & (q <= 1)).all()):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    d = _wrap_dim(0 if dim is None else dim, input.ndim)
    if dim is not None and input.ndim:
        out_shape = list(input.shape)
        if keepdim:
            out_shape[d] = 1
        else:
            del out_shape[d]
    else:
        out_shape = [1] * input.ndim if keepdim else []
    if dim is None:
        ordered = M.reshape(input, -1)
    elif d == input.ndim - 1:
        ordered = input
    else:
        ordered = M.transpose(M.unsqueeze(input, -1), d, -1)
    ordered = I.sort(ordered).values
    ordered = M.reshape(ordered, (*out_shape, ordered.shape[-1]))
    nan = E.isnan(ordered)
    if ignore_nan:
        ranks = q * (E.logical_not(nan).sum(-1, keepdim=True) - 1)
        ranks = I.masked_fill(ranks, ranks < 0, 0)  # (no numbers: rank 0, a NaN)
    else:
        last = ordered.shape[-1] - 1
        ranks = I.masked_fill(q * last, nan.any(-1, keepdim=True), last)
    if interpolation in ("lower", "higher", "nearest"):
        ranks = {"lower": E.floor, "higher": E.ceil, "nearest": E.round}[interpolation](ranks)
    below = ranks.long()
    result = I.gather(ordered, -1, below)
    if interpolation in ("linear", "midpoint"):
        weights = (full(ranks.shape, 0.5, dtype=ranks.dtype, device=ranks.device)
                   if interpolation == "midpoint" else ranks - below)
        inplace(result, E.lerp_tensor, I.gather(ordered, -1, E.ceil(ranks).long()), weights)
    if q.ndim == 0:
        return squeeze_(result, -1)
    return squeeze_(transpose_(unsqueeze_(result, 0), 0, -1), -1)


@public("function method")
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The ``q``-quantiles of ``input`` along ``dim`` (of all its elements for None); a NaN
    makes its slice's quantiles NaN."""
    return _quantile(input, q, dim, keepdim, interpolation, False)


@public("function method")
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """``quantile`` of the elements that are not NaN."""
    return _quantile(input, q, dim, keepdim, interpolation, True)
