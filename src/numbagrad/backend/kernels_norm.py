"""Normalisation kernels (ops/normalization.py).

Layer norm's row functions are written once for both targets (see kernels_conv.py for the
form). Row ``i`` is one group of ``N`` values normalised together (the trailing dims of a
C-contiguous input): its mean and biased variance (two passes: the mean, then squared
deviations from it), then ``(x - mean) * rstd`` with ``rstd = 1 / sqrt(var + eps)`` and the
affine map. Each row's ``mean`` and ``rstd`` are kept for the backward, which recomputes
``xhat`` from them. Sums run in the dtype over blocks of 4096 values (vectorized) and add up
in float64 across blocks, so a long float32 row keeps its digits. Buffers are flat 1-D
arrays; ``x`` and ``g`` are read from an element offset.

Batch norm's (and the CPU's layer norm backward) are whole-array CPU kernels, compiled by
``cpu.get_reduce_kernel``; CUDA runs those ops composed of others.
"""

import math  # noqa: F401  (used by the generated modules)

import numpy as np

from .kernels_reduce import REASSOC, jit_options

_c = np.float64  # replaced by the kernel dtype in generated modules


def _moments(xs, N, eps):
    # the mean of the N values of xs and 1 / sqrt(their biased variance + eps): each sum in
    # blocks of 4096 added in float64, so long rows keep their digits
    s = 0.0
    for k in range(0, N, 4096):
        p = _c(0)
        block = xs[k:k + 4096]  # (a loop bounded by its length vectorizes; one by min() not)
        for j in range(block.shape[0]):
            p += block[j]
        s += p
    m = _c(s / N)
    v = 0.0
    for k in range(0, N, 4096):
        p = _c(0)
        block = xs[k:k + 4096]
        for j in range(block.shape[0]):
            d = block[j] - m
            p += d * d
        v += p
    return m, _c(1) / math.sqrt(_c(v / N) + _c(eps))


# (the row sums may be reassociated, so that they vectorize; eps is cast to the dtype, so a
# float32 row is standardized in float32, as PyTorch's)
@jit_options(REASSOC)
def layer_norm_row(i, N, x, xo, w, has_w, b, has_b, eps, out, mean, rstd):
    xs = x[xo + i * N:xo + i * N + N]
    m, r = _moments(xs, N, eps)
    mean[i] = m
    rstd[i] = r
    y = out[i * N:i * N + N]
    for j in range(N):
        t = (xs[j] - m) * r
        t = t * w[j] if has_w else t
        y[j] = t + b[j] if has_b else t


@jit_options(REASSOC)
def layer_norm_backward_row(i, N, g, go, x, xo, w, has_w, mean, rstd, gx):
    # d/dx of xhat applied to g * w: rstd (gw - mean(gw) - xhat mean(gw xhat))
    gs = g[go + i * N:go + i * N + N]
    xs = x[xo + i * N:xo + i * N + N]
    m = mean[i]
    r = rstd[i]
    m1 = 0.0
    m2 = 0.0
    for j in range(N):
        t = gs[j] * w[j] if has_w else gs[j]
        m1 += t
        m2 += t * ((xs[j] - m) * r)
    a = _c(m1 / N)
    c = _c(m2 / N)
    y = gx[i * N:i * N + N]
    for j in range(N):
        t = gs[j] * w[j] if has_w else gs[j]
        y[j] = (t - a - (xs[j] - m) * r * c) * r


@jit_options(REASSOC)
def layer_norm_backward(g, x, mean, rstd, w, has_w, sums, gx, gw, gb):
    # layer_norm_backward_row's gradient for every row of the (rows, N) matrices, and with
    # ``sums`` the weight's and bias's, sum(g xhat) and sum(g) over the rows, from the same
    # pass (in the dtype over blocks of 256 rows, then in float64)
    rows = x.shape[0]
    N = x.shape[1]
    tw = np.zeros(N, np.float64)
    tb = np.zeros(N, np.float64)
    pw = np.zeros(N, x.dtype)
    pb = np.zeros(N, x.dtype)
    h = np.empty(N, x.dtype)
    for i in range(rows):
        m = mean[i]
        r = rstd[i]
        m1 = _c(0)
        m2 = _c(0)
        for j in range(N):
            h[j] = (x[i, j] - m) * r
            t = g[i, j] * w[j] if has_w else g[i, j]
            m1 += t
            m2 += t * h[j]
        if sums:
            for j in range(N):
                pw[j] += g[i, j] * h[j]
                pb[j] += g[i, j]
            if i % 256 == 255 or i == rows - 1:
                for j in range(N):
                    tw[j] += pw[j]
                    tb[j] += pb[j]
                    pw[j] = _c(0)
                    pb[j] = _c(0)
        a = m1 / _c(N)
        c = m2 / _c(N)
        for j in range(N):
            t = g[i, j] * w[j] if has_w else g[i, j]
            gx[i, j] = (t - a - h[j] * c) * r
    for j in range(N):
        gw[j] = tw[j]
        gb[j] = tb[j]


# ---------------------------------------------------------------- batch norm (CPU)
# Whole-array kernels (compiled by ``cpu.get_reduce_kernel``) for a C-contiguous input viewed
# as (N, C, S): channel c's values are x[:, c, :]. Where S is 1 (an (N, C) input) a channel is
# a column, and the loops run along rows so that they vectorize across channels; otherwise
# along each contiguous run of S values. Sums accumulate in the dtype over one run (or a block
# of 256 rows) and in float64 across runs.


def _channel_sums(x, shift, sq, out):
    # out[c] = the sum over channel c of x - shift[c] (sq: of its square), in float64
    n = x.shape[0]
    C = x.shape[1]
    S = x.shape[2]
    for c in range(C):
        out[c] = 0.0
    if S == 1:
        x2 = x.reshape((n, C))
        part = np.empty(C, x.dtype)
        for b in range(0, n, 256):
            for c in range(C):
                part[c] = _c(0)
            for i in range(b, min(b + 256, n)):
                for c in range(C):
                    d = x2[i, c] - shift[c]
                    part[c] += d * d if sq else d
            for c in range(C):
                out[c] += part[c]
    else:
        for i in range(n):
            for c in range(C):
                m = shift[c]
                s = _c(0)
                if sq:
                    for k in range(S):
                        d = x[i, c, k] - m
                        s += d * d
                else:
                    for k in range(S):
                        s += x[i, c, k] - m
                out[c] += s


def _channel_apply(x, shift, scale, offset, out):
    # out = (x - shift[c]) * scale[c] + offset[c], channel by channel
    n = x.shape[0]
    C = x.shape[1]
    S = x.shape[2]
    if S == 1:
        x2 = x.reshape((n, C))
        o2 = out.reshape((n, C))
        for i in range(n):
            for c in range(C):
                o2[i, c] = (x2[i, c] - shift[c]) * scale[c] + offset[c]
    else:
        for i in range(n):
            for c in range(C):
                m = shift[c]
                a = scale[c]
                b = offset[c]
                for k in range(S):
                    out[i, c, k] = (x[i, c, k] - m) * a + b


@jit_options(REASSOC)
def batch_norm_forward(x, w, has_w, b, has_b, eps, training, momentum, update, run_mean,
                       run_var, out, mean, rstd):
    # training: the batch's mean and biased variance (two passes: the mean, then squared
    # deviations from it), and, with ``update``, the running statistics moved towards them by
    # ``momentum`` (the variance unbiased, as PyTorch's); else the running statistics.
    # Then one pass, PyTorch's affine form: out = x * alpha + beta, with alpha = rstd * w and
    # beta = b - mean * alpha (so a non-finite weight gives what PyTorch's gives: inf - inf).
    C = x.shape[1]
    count = x.shape[0] * x.shape[2]
    acc = np.empty(C, np.float64)
    if training:
        zero = np.zeros(C, x.dtype)
        _channel_sums(x, zero, False, acc)
        for c in range(C):
            mean[c] = acc[c] / count
        _channel_sums(x, mean, True, acc)
        for c in range(C):
            rstd[c] = _c(1) / math.sqrt(_c(acc[c] / count) + _c(eps))
        if update:
            keep = _c(1) - _c(momentum)
            for c in range(C):
                unbiased = acc[c] / max(count - 1, 1)
                run_mean[c] = keep * run_mean[c] + _c(momentum) * mean[c]
                run_var[c] = keep * run_var[c] + _c(momentum) * _c(unbiased)
    else:
        for c in range(C):
            mean[c] = run_mean[c]
            rstd[c] = _c(1) / math.sqrt(run_var[c] + _c(eps))
    scale = np.empty(C, x.dtype)
    offset = np.empty(C, x.dtype)
    origin = np.zeros(C, x.dtype)
    for c in range(C):
        scale[c] = rstd[c] * w[c] if has_w else rstd[c]
        offset[c] = (b[c] if has_b else _c(0)) - mean[c] * scale[c]
    _channel_apply(x, origin, scale, offset, out)


@jit_options(REASSOC)
def batch_norm_backward(g, x, mean, rstd, w, has_w, training, sums, gx, gw, gb):
    # gw = sum(g * xhat) and gb = sum(g) per channel, from one pass (``sums``: they are needed;
    # a training backward always needs them). The input's gradient in one more pass:
    #   training: rstd w (g - mean(g) - xhat mean(g xhat)), with xhat = (x - mean) rstd
    #   eval:     rstd w g (the statistics are constants)
    C = x.shape[1]
    count = x.shape[0] * x.shape[2]
    sg = np.zeros(C, np.float64)
    sgd = np.zeros(C, np.float64)
    if sums:
        _grad_sums(g, x, mean, sg, sgd)
    k1 = np.empty(C, x.dtype)
    k2 = np.empty(C, x.dtype)
    k3 = np.empty(C, x.dtype)
    for c in range(C):
        r = rstd[c]
        gw[c] = sgd[c] * r
        gb[c] = sg[c]
        k = r * w[c] if has_w else r
        k1[c] = k
        k2[c] = _c(0)
        k3[c] = _c(0)
        if training:
            k2[c] = -k * r * _c(sgd[c] * r / count)
            k3[c] = -k * _c(sg[c] / count)
    n = x.shape[0]
    S = x.shape[2]
    if S == 1:
        g2 = g.reshape((n, C))
        x2 = x.reshape((n, C))
        o2 = gx.reshape((n, C))
        for i in range(n):
            for c in range(C):
                o2[i, c] = g2[i, c] * k1[c] + (x2[i, c] - mean[c]) * k2[c] + k3[c]
    else:
        for i in range(n):
            for c in range(C):
                m = mean[c]
                a = k1[c]
                d = k2[c]
                e = k3[c]
                for k in range(S):
                    gx[i, c, k] = g[i, c, k] * a + (x[i, c, k] - m) * d + e


def _grad_sums(g, x, mean, sg, sgd):
    # sg[c] = the sum of g over channel c, sgd[c] = of g * (x - mean[c])
    n = x.shape[0]
    C = x.shape[1]
    S = x.shape[2]
    if S == 1:
        g2 = g.reshape((n, C))
        x2 = x.reshape((n, C))
        p1 = np.empty(C, x.dtype)
        p2 = np.empty(C, x.dtype)
        for b in range(0, n, 256):
            for c in range(C):
                p1[c] = _c(0)
                p2[c] = _c(0)
            for i in range(b, min(b + 256, n)):
                for c in range(C):
                    p1[c] += g2[i, c]
                    p2[c] += g2[i, c] * (x2[i, c] - mean[c])
            for c in range(C):
                sg[c] += p1[c]
                sgd[c] += p2[c]
    else:
        for i in range(n):
            for c in range(C):
                m = mean[c]
                s1 = _c(0)
                s2 = _c(0)
                for k in range(S):
                    s1 += g[i, c, k]
                    s2 += g[i, c, k] * (x[i, c, k] - m)
                sg[c] += s1
                sgd[c] += s2


# ---------------------------------------------------------------- group norm (CPU)
# The input viewed as (N, G, Cg, S): group (n, g) is the contiguous x[n, g], normalised
# together; channel g * Cg + j has its own weight and bias.


@jit_options(REASSOC)
def group_norm_forward(x, w, has_w, b, has_b, eps, out, mean, rstd):
    n = x.shape[0]
    G = x.shape[1]
    Cg = x.shape[2]
    S = x.shape[3]
    count = Cg * S
    for i in range(n):
        for g in range(G):
            m, r = _moments(x[i, g].reshape(count), count, eps)
            mean[i * G + g] = m
            rstd[i * G + g] = r
            for j in range(Cg):
                # (PyTorch's affine form: x * scale + (bias - mean * scale), so an infinite
                # value gives what PyTorch's gives)
                c = g * Cg + j
                a = r * w[c] if has_w else r
                o = (b[c] if has_b else _c(0)) - m * a
                for k in range(S):
                    out[i, g, j, k] = x[i, g, j, k] * a + o


@jit_options(REASSOC)
def group_norm_backward(g, x, mean, rstd, w, has_w, gx, gw, gb):
    # per group, with gw = g * w and xhat = (x - mean) rstd:
    #   gx = rstd (gw - mean(gw) - xhat mean(gw xhat)); per channel: sum(g xhat) and sum(g)
    n = x.shape[0]
    G = x.shape[1]
    Cg = x.shape[2]
    S = x.shape[3]
    count = Cg * S
    tw = np.zeros(G * Cg, np.float64)
    tb = np.zeros(G * Cg, np.float64)
    for i in range(n):
        for q in range(G):
            m = mean[i * G + q]
            r = rstd[i * G + q]
            m1 = 0.0
            m2 = 0.0
            for j in range(Cg):
                c = q * Cg + j
                wc = w[c] if has_w else _c(1)
                s1 = _c(0)
                s2 = _c(0)
                for k in range(S):
                    s1 += g[i, q, j, k]
                    s2 += g[i, q, j, k] * (x[i, q, j, k] - m)
                tb[c] += s1
                tw[c] += s2 * r
                m1 += s1 * wc
                m2 += s2 * r * wc
            a = _c(m1 / count)
            e = _c(m2 / count)
            for j in range(Cg):
                wc = w[q * Cg + j] if has_w else _c(1)
                for k in range(S):
                    gx[i, q, j, k] = (g[i, q, j, k] * wc - a
                                      - (x[i, q, j, k] - m) * r * e) * r
    for c in range(G * Cg):
        gw[c] = tw[c]
        gb[c] = tb[c]
