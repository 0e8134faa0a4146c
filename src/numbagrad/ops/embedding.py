"""``embedding``: rows of a weight matrix picked by an index tensor (``nn.Embedding``'s op)."""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from .._tensor import Tensor
from .movement import _Index, index_put_zeros
from .registry import composite


@composite("embedding", node="EmbeddingBackward0")
def embedding(ctx, weight, indices, padding_idx=-1, scale_grad_by_freq=False):
    """``weight[indices]``; the gradient skips row ``padding_idx`` (-1: none)."""
    if indices.dtype is not D.int64 and indices.dtype is not D.int32:
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got numbagrad.{D.TENSOR_TYPE[indices.dtype.name]} instead "
            "(while checking arguments for embedding)"
        )
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
