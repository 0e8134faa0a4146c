"""``numbagrad.memory_format``: the order a tensor's elements take in memory, and the layouts
(strides, in elements) each format gives a tensor of a shape.

A tensor's strides are real here (views share memory), so a channels-last tensor is just a
4-d array strided as NHWC; ops read any strides, and these formats only choose the strides of
new tensors (``contiguous``, ``clone``, ``to``, the ``*_like`` and ``empty`` factories)."""

from __future__ import annotations

from .backend import layout

# the dims of each channels-last layout, fastest first (C, then W, H, N; 3-d: C, W, H, D, N)
_ORDERS = {4: layout.CHANNELS_LAST, 5: (1, 4, 3, 2, 0)}


class memory_format:
    """How a new tensor's elements are ordered in memory: ``numbagrad.contiguous_format``
    (C order), ``channels_last`` (NHWC for a 4-d tensor), ``channels_last_3d`` (NDHWC for a
    5-d one), or ``preserve_format`` (as the tensor it is made from)."""

    # (its class prints as numbagrad.memory_format, as PyTorch's torch.memory_format)
    __module__ = "numbagrad"

    __slots__ = ("name", "rank")
    _sealed = False

    def __new__(cls, *args, **kwargs):
        # (the four values only, as PyTorch's: a fifth would be a format nothing knows)
        if cls._sealed:
            raise TypeError("cannot create 'numbagrad.memory_format' instances")
        return object.__new__(cls)

    def __init__(self, name: str, rank: int | None = None):
        self.name = name
        self.rank = rank  # the rank a channels-last format requires

    def __repr__(self) -> str:
        return f"numbagrad.{self.name}"

    def __reduce__(self):
        return self.name  # (the module attribute of that name: the one object, unpickled)


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last", 4)
channels_last_3d = memory_format("channels_last_3d", 5)
memory_format._sealed = True
# PyTorch's names in its messages ("unsupported memory format Preserve")
_CPP_NAME = {contiguous_format: "Contiguous", preserve_format: "Preserve",
             channels_last: "ChannelsLast", channels_last_3d: "ChannelsLast3d"}


def checked(fmt, fname: str, default=None):
    """``fmt`` as a memory_format (None: ``default`` where the function takes None), with
    PyTorch's TypeError for anything else given as ``fname``'s ``memory_format``."""
    if type(fmt) is memory_format:
        return fmt
    if fmt is None and default is not None:
        return default
    raise TypeError(f"{fname}(): argument 'memory_format' must be torch.memory_format, not "
                    f"{type(fmt).__name__}")


def check_rank(fmt: memory_format, ndim: int) -> None:
    """PyTorch's refusal of a channels-last format for a tensor of another rank."""
    if fmt.rank is not None and ndim != fmt.rank:
        raise RuntimeError(f"required rank {fmt.rank} tensor to use {fmt.name} format")


def format_strides(shape, fmt: memory_format):
    """The strides ``fmt`` gives a new tensor of ``shape`` (its rank checked): None for C
    order (the backend's own allocation), else the channels-last strides, which (as
    PyTorch's) are products of the sizes, 0 past an empty dim."""
    check_rank(fmt, len(shape))
    if fmt.rank is None:
        return None
    return layout.permuted_strides(shape, _ORDERS[fmt.rank])


def is_contiguous(shape, strides, fmt: memory_format) -> bool:
    """PyTorch's ``is_contiguous(memory_format=fmt)`` of a layout: C order for
    contiguous_format and preserve_format; dense in the channels-last order for the others
    (the stride of a dim of size 1 does not count; an empty tensor counts only where its
    strides fit, unlike C order's, which takes any empty tensor)."""
    if fmt.rank is None:
        return 0 in shape or layout.is_contiguous(shape, strides)
    if len(shape) != fmt.rank:
        return False
    expected = 1
    for d in _ORDERS[fmt.rank]:
        n = shape[d]
        if n != 1:
            if strides[d] != expected:
                return False
            expected *= n
    return True


def suggest(shape, strides) -> memory_format:
    """PyTorch's ``suggest_memory_format``: the channels-last format a 4-d or 5-d layout is
    strided like (``layout.is_strides_like_channels_last``), else contiguous_format."""
    if len(shape) in _ORDERS and layout.is_strides_like_channels_last(shape, strides):
        return channels_last if len(shape) == 4 else channels_last_3d
    return contiguous_format


def like_strides(t, fmt: memory_format):
    """The strides of a new tensor made like ``t`` in ``fmt`` (``empty_like``, ``clone``,
    ``.to()``): None for C order; preserve_format keeps ``t``'s strides when its elements
    are dense and do not overlap (those of its dims of size 1 too), else takes a dense layout
    of its dims in the same order."""
    if fmt is preserve_format:
        if t._lazy is not None:  # (its expression evaluates to a C-contiguous array)
            return None
        a = t._data
        # (the common case, quickly: a C-contiguous array's strides are C order's but where a
        # dim has size 1, whose stride may be any; an empty tensor has no layout to keep)
        if a.flags.c_contiguous and (1 not in a.shape or 0 in a.shape):
            return None
        shape, strides = tuple(t.shape), t.stride()
        if layout.is_non_overlapping_and_dense(shape, strides):
            return None if strides == c_strides(shape) else strides
        out = layout.clone_strides(shape, strides)
        return None if out == c_strides(shape) else out
    return format_strides(tuple(t.shape), fmt)


def c_strides(shape):
    """C order's strides of ``shape``."""
    return layout.permuted_strides(shape, range(len(shape) - 1, -1, -1))
