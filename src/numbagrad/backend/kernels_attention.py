"""Attention's row kernels on the CPU (ops/attention.py): the weights from the scores, and
the scores' gradient from the weights', each row in one kernel call instead of a pass per op.

They work in place on a C-contiguous stack of (queries, keys) matrices ``s``, the fresh output
of a batched matmul.
"""

import math  # noqa: F401  (used by the generated modules)

import numpy as np

from .kernels_reduce import REASSOC, _max_of, jit_options

_c = np.float64  # replaced by the kernel dtype in generated modules

# Each weights kernel: row i of matrix n of s becomes softmax(s * scale + mask) over the keys.
# A key masked out (causal: past the query's position; a bool mask: False; a float mask: -inf)
# is weighted 0, and a row without any key is 0 (PyTorch's _safe_softmax). A mask is read as
# row ``n * sn + i * si`` of ``mask``, a C-contiguous (rows, keys) matrix: a mask broadcast
# over the batch or the queries is read without a copy, and its rows still vectorize.


@jit_options(REASSOC)
def attention_weights_rows(s, scale, causal):
    sc = _c(scale)
    keys = s.shape[2]
    for n in range(s.shape[0]):
        for i in range(s.shape[1]):
            r = s[n, i]
            stop = min(i + 1, keys) if causal else keys
            if sc < _c(0):
                # (the scale folded into the exponentials needs the row's maximum to stay the
                # maximum of the scaled row)
                for j in range(stop):
                    r[j] = r[j] * sc
                _softmax_row(r, stop, _c(1))
            else:
                _softmax_row(r, stop, sc)
            for j in range(stop, keys):
                r[j] = _c(0)


@jit_options(REASSOC)
def attention_weights_bool_rows(s, scale, mask, sn, si):
    sc = _c(scale)
    ninf = _c(-math.inf)
    keys = s.shape[2]
    for n in range(s.shape[0]):
        for i in range(s.shape[1]):
            r = s[n, i]
            mr = mask[n * sn + i * si]
            for j in range(keys):
                r[j] = r[j] * sc if mr[j] else ninf
            _softmax_row(r, keys, _c(1))


@jit_options(REASSOC)
def attention_weights_float_rows(s, scale, mask, sn, si):
    sc = _c(scale)
    keys = s.shape[2]
    for n in range(s.shape[0]):
        for i in range(s.shape[1]):
            r = s[n, i]
            mr = mask[n * sn + i * si]
            for j in range(keys):
                r[j] = r[j] * sc + mr[j]
            _softmax_row(r, keys, _c(1))


def _softmax_row(r, n, sc):
    # r[:n] = softmax(r[:n] * sc) for sc >= 0, the scale folded into the exponentials
    m = _max_of(r, n)
    if m == _c(-math.inf):
        for j in range(n):
            r[j] = _c(0)
        return
    ms = m * sc
    ninf = _c(-math.inf)
    for j in range(n):
        # (a masked key's exponential, of -inf, is 0; computing it as exp(0) keeps the loop out
        # of subnormal arithmetic, which made a masked row 2x slower)
        x = r[j] * sc - ms
        e = math.exp(x if x != ninf else _c(0))
        r[j] = e if x != ninf else _c(0)
    # (the exponentials in a loop of their own, then their sum, as softmax_rows)
    t = _c(0)
    for j in range(n):
        t += r[j]
    for j in range(n):
        r[j] = r[j] / t


@jit_options(REASSOC)
def attention_weights_backward_rows(g, w, scale):
    # g (the weights' gradient) becomes the scores': the softmax's backward, then the scale
    # (a masked weight is 0, so its score gets no gradient)
    sc = _c(scale)
    for n in range(g.shape[0]):
        for i in range(g.shape[1]):
            gr = g[n, i]
            wr = w[n, i]
            t = _c(0)
            for j in range(gr.shape[0]):
                t += gr[j] * wr[j]
            for j in range(gr.shape[0]):
                gr[j] = wr[j] * (gr[j] - t) * sc
