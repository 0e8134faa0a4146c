"""Scaled dot-product attention: the weights ``softmax(query @ key^T * scale + mask)`` as
recorded ops (``attention_weights``), and attention on 4-d inputs without dropout as one op
(``flash_attention``, PyTorch's ``_scaled_dot_product_flash_attention_for_cpu`` and its node).

The op's forward runs the weights and ``weights @ value`` unrecorded and keeps the weights; its
backward is written with ops from them: ``dv = w^T g``, the softmax's backward of ``g v^T``,
``dq``, ``dk`` from that. A recorded backward (``create_graph``) recomputes the weights with
recorded ops first, so that second derivatives see how they depend on the query and key.
"""

from __future__ import annotations

import math

from .. import dtypes as D
from .. import factory
from .._tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled, no_grad
from . import elementwise as E
from . import linalg as L
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


def fuses(query, key, value, attn_mask, dropout_p) -> bool:
    """Whether ``flash_attention`` takes these arguments (PyTorch's CPU flash attention does:
    4-d inputs of one batch shape, no dropout; here also no mask that needs a gradient)."""
    return (dropout_p == 0.0 and query.ndim == 4 and key.ndim == 4 and value.ndim == 4
            and query.shape[:2] == key.shape[:2] == value.shape[:2]
            and (attn_mask is None or not attn_mask.requires_grad))


def _stack3(be, a):
    """4-d array ``a`` as a contiguous stack of matrices (batch * heads, rows, cols)."""
    return be.ascontiguousarray(a).reshape(-1, a.shape[-2], a.shape[-1])


def _t(a):
    return a.transpose((0, 2, 1))


@composite("scaled_dot_product_flash_attention_for_cpu")
def flash_attention(ctx, query, key, value, *, attn_mask=None, is_causal=False, scale=1.0):
    """``attention_weights(...) @ value`` for 4-d (batch, heads, length, features) inputs: the
    matmuls as one batched matmul of the backend each, the rest unrecorded ops."""
    be = ctx.backend
    ctx.attn_mask, ctx.is_causal, ctx.scale = attn_mask, is_causal, scale
    ctx.save(query=query, key=key, value=value)
    q, k, v = _stack3(be, query._data), _stack3(be, key._data), _stack3(be, value._data)
    lead = query.shape[:2]
    with no_grad():
        scores = Tensor._make(be.matmul(q, _t(k)).reshape(*lead, q.shape[1], k.shape[1]))
        w = _masked_softmax(E.mul(scores, scale), attn_mask, is_causal)
    ctx.weights = w
    return be.matmul(_stack3(be, w._data), v).reshape(*lead, q.shape[1], v.shape[2])


@flash_attention.defvjp
def flash_attention_vjp(ctx, grad):
    query, key, value = ctx["query"], ctx["key"], ctx["value"]
    if is_grad_enabled():  # a recorded backward: the weights as functions of query and key
        w = attention_weights(query, key, ctx.scale, ctx.attn_mask, ctx.is_causal)
        gv = L.matmul(w.transpose(-2, -1), grad)
        gw = L.matmul(grad, value.transpose(-2, -1))
        # the softmax's backward (a masked weight is 0: its score gets no gradient), the scale
        gs = w * (gw - (gw * w).sum(-1, keepdim=True)) * ctx.scale
        return L.matmul(gs, key), L.matmul(gs.transpose(-2, -1), query), gv
    # the same, the matmuls batched on the arrays
    be = ctx.backend
    w = ctx.weights
    shape = w.shape
    w3, g3 = _stack3(be, w._data), _stack3(be, grad._data)
    q, k, v = _stack3(be, query._data), _stack3(be, key._data), _stack3(be, value._data)
    gv = Tensor._make(be.matmul(_t(w3), g3).reshape(value.shape))
    gw = Tensor._make(be.matmul(g3, _t(v)).reshape(shape))
    gs = _stack3(be, (w * (gw - (gw * w).sum(-1, keepdim=True)) * ctx.scale)._data)
    gq = Tensor._make(be.matmul(gs, k).reshape(query.shape))
    gk = Tensor._make(be.matmul(_t(gs), q).reshape(key.shape))
    return gq, gk, gv


flash_attention.defjvp(through_vjp(flash_attention))
