"""``embedding``: rows of a weight matrix picked by an index tensor (``nn.Embedding``'s op);
``embedding_bag``: the sum, mean or max of bags of such rows (``nn.EmbeddingBag``'s)."""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from .._tensor import Tensor
from .indexing import _device, _host
from .movement import _Index, index_put_zeros
from .registry import composite


def _check_indices(indices, op):
    if indices.dtype is not D.int64 and indices.dtype is not D.int32:
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got numbagrad.{D.TENSOR_TYPE[indices.dtype.name]} instead "
            f"(while checking arguments for {op})"
        )


@composite("embedding", node="EmbeddingBackward0")
def embedding(ctx, weight, indices, padding_idx=-1, scale_grad_by_freq=False):
    """``weight[indices]``; the gradient skips row ``padding_idx`` (-1: none)."""
    _check_indices(indices, "embedding")
    idx = indices._host()  # (index arithmetic runs on the host, as for x[i])
    n = weight.shape[0]
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError("index out of range in self")
    ctx.idx, ctx.padding_idx, ctx.scale_grad_by_freq = idx, padding_idx, scale_grad_by_freq
    a = weight._data
    return a.take(idx, 0) if type(a) is np.ndarray else a[(idx,)]


@embedding.defvjp
def embedding_vjp(ctx, grad):
    idx = ctx.idx.reshape(-1)
    n, dim = ctx.input_shapes[0]
    g = grad.reshape(idx.size, dim)
    if ctx.scale_grad_by_freq and idx.size:
        counts = np.bincount(idx, minlength=n)
        scale = Tensor._make((1.0 / counts[idx]).astype(g._data.dtype).reshape(-1, 1))
        g = g * scale.to(g.device)
    if ctx.padding_idx >= 0:
        keep = idx != ctx.padding_idx
        if not keep.all():
            idx, g = idx[keep], g[keep]
    return index_put_zeros(g, _Index((idx,), ()), (n, dim)), None


@composite("embedding_bag", node="EmbeddingBagBackward0")
def embedding_bag(ctx, weight, indices, offsets, per_sample_weights=None, mode="mean",
                  padding_idx=-1, scale_grad_by_freq=False, include_last_offset=False):
    """One row per bag: the ``mode`` ("sum", "mean" or "max") of the rows of ``weight`` that
    the 1-d ``indices`` pick, bag b being ``indices[offsets[b]:offsets[b + 1]]`` (the last bag
    runs to the end unless ``include_last_offset``). Entries equal to ``padding_idx`` (-1:
    none) are left out; a bag with none left is zeros. ``per_sample_weights`` (mode "sum")
    scale each picked row."""
    _check_indices(indices, "embedding_bag")
    idx = indices._host().reshape(-1)
    off = offsets._host().reshape(-1).astype(np.int64)
    n, dim = weight.shape
    bad = np.flatnonzero((idx < 0) | (idx >= n))
    if bad.size:
        raise RuntimeError(f"Index {bad[0]} of input takes value {idx[bad[0]]} which is not in "
                           f"the valid range [0, {n})")
    if off.size and off[0] != 0:
        raise RuntimeError(
            "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
            f"from position 0. However, got {off[0]}")
    if off.size and off[-1] > idx.size:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {idx.size} but "
                           f"got offsets[-1] of {off[-1]}")
    starts = off[:-1] if include_last_offset else off
    ends = off[1:] if include_last_offset else np.append(off[1:], idx.size)
    bags = starts.size
    # each entry's bag (-1: past the last offset, with ``include_last_offset``)
    bag = np.full(idx.size, -1)
    bag[:ends[-1] if bags else 0] = np.repeat(np.arange(bags), ends - starts)
    keep = np.flatnonzero((idx != padding_idx) & (bag >= 0))  # (the entries that count)
    bag = bag[keep]
    rows = idx[keep]
    counts = np.bincount(bag, minlength=bags)
    a = _host(ctx, weight)
    picked = a.take(rows, 0)
    if mode == "max":
        out = np.full((bags, dim), -np.inf, a.dtype)
        np.maximum.at(out, bag, picked)
        out[counts == 0] = 0
        # the row of weight each maximum came from (its first entry in the bag; -1: empty bag)
        order = np.where(picked == out[bag], np.arange(rows.size)[:, None], rows.size)
        first = np.full((bags, dim), rows.size)
        np.minimum.at(first, bag, order)
        ctx.argmax = np.where(first < rows.size, np.append(rows, -1)[first], -1)
    else:
        out = np.zeros((bags, dim), a.dtype)
        if per_sample_weights is not None:
            picked = picked * _host(ctx, per_sample_weights).reshape(-1)[keep, None]
        np.add.at(out, bag, picked)
        if mode == "mean":
            out /= np.maximum(counts, 1)[:, None].astype(a.dtype)
    ctx.mode, ctx.keep, ctx.bag, ctx.rows, ctx.counts = mode, keep, bag, rows, counts
    ctx.n_indices, ctx.scale_grad_by_freq = idx.size, scale_grad_by_freq
    if per_sample_weights is not None:  # (the weight is read only for their gradient)
        ctx.save(weight=weight, per_sample_weights=per_sample_weights)
    return _device(ctx, out)


@embedding_bag.defvjp
def embedding_bag_vjp(ctx, grad):
    n, dim = ctx.input_shapes[0]
    psw = ctx["per_sample_weights"] if "per_sample_weights" in ctx.saved else None
    if ctx.mode == "max":
        filled = ctx.argmax >= 0
        cols = np.broadcast_to(np.arange(dim), ctx.argmax.shape)
        g_weight = index_put_zeros(grad[filled], _Index((ctx.argmax[filled], cols[filled]), ()),
                                   (n, dim))
        return g_weight, None, None
    rows, bag = ctx.rows, ctx.bag
    g = grad[bag]  # (each counted entry's bag's gradient)
    scale = np.ones(rows.size)
    if ctx.mode == "mean":
        scale = scale / ctx.counts[bag]
    if ctx.scale_grad_by_freq:
        scale = scale / np.bincount(rows, minlength=n)[rows]
    g_rows = g * Tensor._make(_device(ctx, scale.astype(g._data.dtype)[:, None]))
    if psw is not None:
        g_rows = g_rows * psw.reshape(-1)[ctx.keep].unsqueeze(1)
    g_weight = index_put_zeros(g_rows, _Index((rows,), ()), (n, dim))
    if psw is None:
        return g_weight, None, None
    # (each weight's gradient: its row's dot product with its bag's gradient)
    dots = (g * ctx["weight"][rows]).sum(1)
    return g_weight, None, None, index_put_zeros(dots, _Index((ctx.keep,), ()),
                                                 (ctx.n_indices,)).view(psw.shape)
