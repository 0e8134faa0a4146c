"""Layer norm's row kernels (ops/normalization.py), written once for both targets as row
functions (see kernels_conv.py for the form).

Row ``i`` is one group of ``N`` values normalised together (the trailing dims of a C-contiguous
input): its mean and biased variance, then ``xhat = (x - mean) * rstd`` with ``rstd =
1 / sqrt(var + eps)`` and the affine map, in the order of the ops the composite backward
recomputes. The sums accumulate in float64 whatever the dtype (a long float32 row would lose
digits). Buffers are flat 1-D arrays; ``x`` and ``g`` are read from an element offset.
"""

import math  # noqa: F401  (used by the generated modules)

import numpy as np

from .kernels_reduce import REASSOC, jit_options

_c = np.float64  # replaced by the kernel dtype in generated modules


# (the row sums may be reassociated, so that they vectorize: one add after another kept the
# (256, 64) rows of a transformer layer at 50 us against PyTorch's 14)
@jit_options(REASSOC)
def layer_norm_row(i, N, x, xo, w, has_w, b, has_b, eps, out, xhat, rstd):
    xs = x[xo + i * N:xo + i * N + N]
    s = 0.0
    for j in range(N):
        s += xs[j]
    mean = _c(s / N)
    v = 0.0
    for j in range(N):
        d = xs[j] - mean
        v += d * d
    r = _c(1) / math.sqrt(_c(v / N) + eps)
    rstd[i] = r
    h = xhat[i * N:i * N + N]
    y = out[i * N:i * N + N]
    for j in range(N):
        h[j] = (xs[j] - mean) * r
        t = h[j] * w[j] if has_w else h[j]
        y[j] = t + b[j] if has_b else t


@jit_options(REASSOC)
def layer_norm_backward_row(i, N, g, go, w, has_w, xhat, rstd, gx):
    # d/dx of xhat applied to g * w: rstd (gw - mean(gw) - xhat mean(gw xhat))
    gs = g[go + i * N:go + i * N + N]
    h = xhat[i * N:i * N + N]
    m1 = 0.0
    m2 = 0.0
    for j in range(N):
        t = gs[j] * w[j] if has_w else gs[j]
        m1 += t
        m2 += t * h[j]
    a = _c(m1 / N)
    c = _c(m2 / N)
    r = rstd[i]
    y = gx[i * N:i * N + N]
    for j in range(N):
        t = gs[j] * w[j] if has_w else gs[j]
        y[j] = (t - a - h[j] * c) * r
