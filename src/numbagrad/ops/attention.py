"""Scaled dot-product attention: the weights ``softmax(query @ key^T * scale + mask)`` as
recorded ops (``attention_weights``), and attention as one op (``attention``): PyTorch's
``_scaled_dot_product_flash_attention_for_cpu`` and its node where PyTorch's CPU kernel takes
the arguments, otherwise ``scaled_dot_product_attention_math`` (dropout too) under the
``_unsafe_view`` that ends PyTorch's math formulation.

The op's forward runs two batched matmuls of the backend and, between them, the scale, the mask
and the softmax (one row kernel on the CPU); it keeps the weights. Its backward is written from
them: ``dv = w^T g``, the softmax's backward of ``g v^T`` (a row kernel on the CPU), ``dq``,
``dk`` from that. A recorded backward (``create_graph``) recomputes the weights with recorded
ops first, so that second derivatives see how they depend on the query and key. Grouped-query
attention needs no repeated key and value: the query heads that share a key head are stacked as
more rows of one matrix.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as D
from .. import factory
from .._tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..backend import cpu
from ..backend import kernels_attention as KA
from ..random import numpy_rng
from . import elementwise as E
from . import linalg as L
from . import movement as M
from . import reduce as R
from .forward import through_vjp
from .registry import composite


def attention_weights(query, key, scale, attn_mask=None, is_causal=False):
    """``softmax(query @ key^T * scale + mask)`` over the keys (PyTorch's math formulation). A
    bool ``attn_mask`` marks the positions that take part; a float one is added to the scores.
    Rows with every position masked are zeros, as PyTorch's kernels give them."""
    return _masked_softmax(L.matmul(query, key.transpose(-2, -1)) * scale, attn_mask,
                           is_causal)


def _masked_softmax(scores, attn_mask, is_causal):
    masked = is_causal or attn_mask is not None
    if is_causal:
        keep = factory.ones(scores.shape[-2:], dtype=D.bool_, device=scores.device).tril()
        scores = E.where(keep, scores, -math.inf)
    elif attn_mask is not None:
        if attn_mask.dtype is D.bool_:
            scores = E.where(attn_mask, scores, -math.inf)
        else:
            scores = scores + attn_mask
    weights = R.softmax(scores, -1)
    if masked:
        # (PyTorch's _safe_softmax: a row with nothing to attend to is zero, not NaN)
        weights = E.where((scores == -math.inf).all(-1, keepdim=True), 0.0, weights)
    return weights


# ---------------------------------------------------------------- which path


def fuses(query, key, value, attn_mask, enable_gqa) -> bool:
    """Whether ``attention`` takes these arguments: inputs of one float dtype with at least 3
    dims, equal batch dims (the heads' too, but for the key heads that groups of query heads
    share under ``enable_gqa``), no empty dim, and a mask that needs no gradient, of the
    inputs' dtype (or bool), broadcastable to the weights. Others are composed of recorded
    ops (scaled_dot_product_attention)."""
    qs, ks, vs = _dims(query), _dims(key), _dims(value)
    nd = len(qs)
    if nd < 3 or len(ks) != nd or len(vs) != nd:
        return False
    dt = query.dtype
    if not (dt is key.dtype is value.dtype and (dt is D.float32 or dt is D.float64)):
        return False
    if not (query.device == key.device == value.device):
        return False
    heads, kv_heads = qs[-3], ks[-3]
    if not (qs[:-3] == ks[:-3] == vs[:-3] and kv_heads == vs[-3] and ks[-2] == vs[-2]
            and qs[-1] == ks[-1]):
        return False
    if heads != kv_heads and not (enable_gqa and heads % kv_heads == 0):
        return False
    if 0 in qs or 0 in ks or 0 in vs:
        return False
    if attn_mask is not None:
        if attn_mask.requires_grad or attn_mask.device != query.device:
            return False
        if attn_mask.dtype is not D.bool_ and attn_mask.dtype is not dt:
            return False
        ms, weights = _dims(attn_mask), qs[:-1] + ks[-2:-1]
        if len(ms) > nd or any(m != 1 and m != w for m, w in zip(ms[::-1], weights[::-1])):
            return False
    return True


def _dims(t):
    """``t``'s shape as a plain tuple (a ``Size`` is slower to index)."""
    return t._data.shape if t._lazy is None else t._lazy.shape


def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=1.0):
    """``softmax(query @ key^T * scale + mask)``, dropped out with probability ``dropout_p``,
    ``@ value``, as one op (arguments that ``fuses``). PyTorch's CPU flash attention takes 4-d
    inputs of one head size without dropout, and this op records its node for them."""
    qs, ks, vs = _dims(query), _dims(key), _dims(value)
    kw = dict(attn_mask=attn_mask, is_causal=is_causal, scale=scale, groups=qs[-3] // ks[-3])
    if dropout_p == 0.0 and len(qs) == 4 and qs[-1] == vs[-1]:
        return flash_attention(query, key, value, **kw)
    drop = None
    if dropout_p > 0.0:
        # dropout's draw (nn.functional.dropout_impl), one per weight
        shape = qs[:-1] + ks[-2:-1]
        if dropout_p >= 1.0:
            drop = factory.zeros(shape, dtype=query.dtype, device=query.device)
        else:
            keep = numpy_rng(None).random(shape) >= dropout_p
            drop = factory.tensor(keep / (1 - dropout_p), dtype=query.dtype,
                                  device=query.device)
    out = attention_math(query, key, value, drop=drop, **kw)
    return M.unsafe_view(out, qs[:-1] + vs[-1:])


# ---------------------------------------------------------------- the op


def _grouped(a, groups):
    """Array ``a`` (..., heads, rows, cols) as (..., heads // groups, groups * rows, cols): the
    rows of the query heads that share a key head, one matrix."""
    if groups == 1:
        return a
    s = a.shape
    return a.reshape(*s[:-3], s[-3] // groups, groups * s[-2], s[-1])


def _mT(a):
    return a.swapaxes(-1, -2)


def _mul(a, b):
    """``a * b`` for arrays of either backend."""
    with no_grad():
        return E.mul(Tensor._make(a), Tensor._make(b))._data


def _weights_rows(s, attn_mask, is_causal, scale, shape):
    """Scores ``s`` (a C-contiguous CPU array) made the weights of ``shape`` (batch, queries,
    keys) in place by the row kernel for the mask (kernels_attention)."""
    rows = s.reshape(-1, *shape[-2:])
    if attn_mask is None:
        cpu.get_reduce_kernel(KA.attention_weights_rows, s.dtype)(rows, scale, is_causal)
        return
    # the mask's own rows, each as long as the keys (a small copy at most), broadcast to the
    # weights as a view where NumPy can make one: the kernel reads row n * sn + i * si
    m = attn_mask._data
    m = np.ascontiguousarray(np.broadcast_to(m, m.shape[:-1] + shape[-1:]))
    full = np.broadcast_to(m, shape).reshape(rows.shape)
    base = m if np.may_share_memory(full, m) else full
    sn, si = (st // (full.itemsize * shape[-1]) for st in full.strides[:2])
    kernel = (KA.attention_weights_bool_rows if attn_mask.dtype is D.bool_
              else KA.attention_weights_float_rows)
    cpu.get_reduce_kernel(kernel, s.dtype)(rows, scale, base.reshape(-1, shape[-1]), sn, si)


def _attention_forward(ctx, query, key, value, *, attn_mask=None, drop=None, is_causal=False,
                       scale=1.0, groups=1):
    be = ctx.backend
    ctx.attn_mask, ctx.drop, ctx.is_causal, ctx.scale, ctx.groups = (attn_mask, drop, is_causal,
                                                                     scale, groups)
    ctx.save(query=query, key=key, value=value)
    q, k, v = query._data, key._data, value._data
    # weights: (..., kv heads, groups * rows, keys), which is (..., heads, rows, keys) in memory
    s = be.matmul(_grouped(q, groups), _mT(k))
    shape = q.shape[:-1] + k.shape[-2:-1]
    if type(s) is np.ndarray:
        _weights_rows(s, attn_mask, is_causal, scale, shape)
        w = s
    else:
        with no_grad():
            scores = Tensor._make(s.reshape(shape))
            w = _masked_softmax(E.mul(scores, scale), attn_mask, is_causal)._data
            w = w.reshape(s.shape)
    ctx.weights = ctx.dropped = w
    if drop is not None:
        ctx.dropped = w = _mul(w, _grouped(drop._data, groups))
    return be.matmul(w, v)


@composite("scaled_dot_product_flash_attention_for_cpu")
def flash_attention(ctx, query, key, value, **kw):
    """Attention on 4-d inputs without dropout: PyTorch's CPU flash attention op."""
    return _attention_forward(ctx, query, key, value, **kw).reshape(
        _dims(query)[:-1] + _dims(value)[-1:])


@composite("scaled_dot_product_attention_math")
def attention_math(ctx, query, key, value, **kw):
    """Attention as PyTorch's math formulation computes it, up to its last batched matmul: the
    output as a stack of matrices (batch, rows, features)."""
    out = _attention_forward(ctx, query, key, value, **kw)
    return out.reshape(-1, *out.shape[-2:])


def _attention_vjp(ctx, grad):
    query, key, value = ctx["query"], ctx["key"], ctx["value"]
    groups, drop = ctx.groups, ctx.drop
    if is_grad_enabled():  # a recorded backward: the weights as functions of query and key
        if groups > 1:
            key = key.repeat_interleave(groups, -3)
            value = value.repeat_interleave(groups, -3)
        grad = grad.reshape(*query.shape[:-1], value.shape[-1])
        w = attention_weights(query, key, ctx.scale, ctx.attn_mask, ctx.is_causal)
        wd = w if drop is None else w * drop
        gv = L.matmul(wd.transpose(-2, -1), grad)
        gw = L.matmul(grad, value.transpose(-2, -1))
        if drop is not None:
            gw = gw * drop
        # the softmax's backward (a masked weight is 0: its score gets no gradient), the scale
        gs = w * (gw - (gw * w).sum(-1, keepdim=True)) * ctx.scale
        gq, gk = L.matmul(gs, key), L.matmul(gs.transpose(-2, -1), query)
        if groups > 1:
            gk, gv = (_group_sum(t, groups) for t in (gk, gv))
        return gq, gk, gv
    # the same on the arrays, each matmul one batched matmul of the backend
    be = ctx.backend
    w = ctx.weights
    q, k, v = query._data, key._data, value._data
    qs = q.shape
    q = _grouped(q, groups)
    g = _grouped(grad._data.reshape(qs[:-1] + v.shape[-1:]), groups)
    gv = be.matmul(_mT(ctx.dropped), g)
    gw = be.matmul(g, _mT(v))
    if drop is not None:
        gw = _mul(gw, _grouped(drop._data, groups))
    if type(gw) is np.ndarray:
        n = gw.shape[-2:]
        cpu.get_reduce_kernel(KA.attention_weights_backward_rows, gw.dtype)(
            gw.reshape(-1, *n), w.reshape(-1, *n), ctx.scale)
        gs = gw
    else:
        with no_grad():
            tw, tg = Tensor._make(w), Tensor._make(gw)
            gs = (tw * (tg - (tg * tw).sum(-1, keepdim=True)) * ctx.scale)._data
    gq = be.matmul(gs, k).reshape(qs)
    gk = be.matmul(_mT(gs), q)
    return Tensor._make(gq), Tensor._make(gk), Tensor._make(gv)


def _group_sum(t, groups):
    """The gradient ``t`` of a key or value repeated ``groups`` times along the heads, summed
    back over each group."""
    s = t.shape
    return t.reshape(*s[:-3], s[-3] // groups, groups, *s[-2:]).sum(-3)


for _op in (flash_attention, attention_math):
    _op.defvjp(_attention_vjp)
    _op.defjvp(through_vjp(_op))
