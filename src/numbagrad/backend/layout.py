"""PyTorch's memory layout rules, on shapes and strides counted in elements.

A new result's strides are visible: ``.stride()``, whether ``.view()`` works, whether
``.contiguous()`` copies. PyTorch's elementwise ops (TensorIterator) lay their result out as
their operands are laid out, so ``x.t() + 1`` is transposed too; these functions compute that
layout, for any backend.
"""

from __future__ import annotations

CHANNELS_LAST = (1, 3, 2, 0)  # the dims of a 4-d channels-last layout, fastest first
# ... of the layouts ``suggest_memory_format`` may take a 4-d or 5-d one for (channels_last,
# channels_last_3d)
_SUGGESTED = {4: CHANNELS_LAST, 5: (1, 4, 3, 2, 0)}


def storage_size(shape, strides) -> int:
    """The elements a layout reaches, from its first: PyTorch's storage size of a new strided
    tensor (``prod(shape)`` for a dense one; 0 when a dim is empty)."""
    if not all(shape):
        return 0
    return 1 + sum((n - 1) * st for n, st in zip(shape, strides))


def is_contiguous(shape, strides) -> bool:
    """PyTorch's ``is_contiguous()`` (C order; the stride of a dim of size 1 does not count)."""
    expected = 1
    for n, st in zip(reversed(shape), reversed(strides)):
        if n == 0:
            return True
        if n != 1:
            if st != expected:
                return False
            expected *= n
    return True


def is_channels_last(shape, strides) -> bool:
    """``is_contiguous(memory_format=torch.channels_last)`` of a 4-d layout."""
    if len(shape) != 4:
        return False
    expected = 1
    for d in CHANNELS_LAST:
        n = shape[d]
        if n != 1:
            if strides[d] != expected:
                return False
            expected *= n
    return True


def is_non_overlapping_and_dense(shape, strides) -> bool:
    """Whether the elements fill a block of memory, each at its own address (in any order of
    dims): PyTorch's ``is_non_overlapping_and_dense``."""
    if len(shape) == 1:
        return shape[0] < 2 or strides[0] == 1
    required = 1
    for d in sorted((d for d in range(len(shape)) if shape[d] >= 2), key=lambda d: strides[d]):
        if strides[d] != required:
            return False
        required *= shape[d]
    return True


def is_strides_like_channels_last(shape, strides) -> bool:
    """Whether PyTorch's ``suggest_memory_format`` takes a 4-d or 5-d layout for channels-last
    (``is_channels_last_strides_2d`` / ``_3d``; an ambiguous layout is taken for C order)."""
    order = _SUGGESTED.get(len(shape))
    if order is None or strides[1] == 0:
        return False
    low = 0
    for d in order:
        if shape[d] == 0 or strides[d] < low or d == 0 and low == strides[1]:
            return False
        low = strides[d] * shape[d] if shape[d] > 1 else strides[d]
    return True


def join_strides(shape, layouts):
    """The strides of PyTorch's ``cat`` result of ``shape`` from its inputs' (shape, strides):
    channels-last ones when every input suggests channels-last, else None (C order)."""
    order = _SUGGESTED.get(len(shape))
    if order is None:
        return None
    for s, st in layouts:
        if len(s) != len(shape) or not is_strides_like_channels_last(s, st):
            return None
    return permuted_strides(shape, order)


def clone_strides(shape, strides):
    """The strides of PyTorch's copy of a layout that keeps it (``clone``, ``.to()``: the
    preserve_format): its own when it is dense, else a dense layout of its dims in the same
    order (``infer_dense_strides``, TensorIterator's sort on the one layout)."""
    if is_non_overlapping_and_dense(shape, strides):
        return tuple(strides)
    return permuted_strides(shape, _sorted_dims(shape, [strides]))


def permuted_strides(shape, perm):
    """C-contiguous strides of the dims taken in ``perm`` order, fastest first."""
    strides = [0] * len(shape)
    step = 1
    for d in perm:
        strides[d] = step
        step *= shape[d]
    return tuple(strides)


def iterator_strides(shape, operands):
    """The strides PyTorch's TensorIterator gives a new result of ``shape`` computed from
    ``operands``, the inputs' (shape, strides) in order; None for C-contiguous ones.

    As TensorIterator's ``fast_set_up``: operands of the result's shape, all C-contiguous (or
    all channels-last) give that layout, all laid out alike and densely give theirs. Otherwise
    ``reorder_dimensions`` (``_sorted_dims``) on the strides broadcast to ``shape``."""
    ndim = len(shape)
    if ndim < 2:
        return None
    if all(s == shape for s, _ in operands):
        if all(is_contiguous(s, st) for s, st in operands):
            return None
        if ndim == 4 and all(is_channels_last(s, st) for s, st in operands):
            return permuted_strides(shape, CHANNELS_LAST)
        last = operands[-1][1]
        if all(st == last for _, st in operands) and is_non_overlapping_and_dense(shape, last):
            return tuple(last)
    # each operand's strides broadcast to ``shape`` (0 where a dim of size 1 is broadcast)
    broadcast = []
    for s, st in operands:
        off = ndim - len(s)
        b = [0] * ndim
        for i, n in enumerate(s):
            if n != 1 or shape[off + i] == 1:
                b[off + i] = st[i]
        broadcast.append(b)

    perm = _sorted_dims(shape, broadcast)
    if perm == list(range(ndim - 1, -1, -1)):
        return None
    return permuted_strides(shape, perm)


def _sorted_dims(shape, stride_lists):
    """The dims, fastest first, as TensorIterator's ``reorder_dimensions`` sorts them: their
    strides compared operand by operand; a stride of 0 (broadcast) says nothing and the next
    operand decides; of equal strides the smaller dim goes first; dims no operand orders stay
    in C order."""
    def should_swap(d0, d1):
        for st in stride_lists:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    ndim = len(shape)
    perm = list(range(ndim - 1, -1, -1))
    # (an insertion sort that passes over the pairs no operand orders, as PyTorch's)
    for i in range(1, ndim):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm
