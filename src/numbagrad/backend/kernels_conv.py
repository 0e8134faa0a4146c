"""Convolution and pooling kernels, written once for both targets as row functions.

``name_row(i, ...)`` computes row ``i`` of its output. The CPU runs it in a loop over rows
(``prange`` when the work pays, ``cpu.run_row_kernel``), CUDA as one thread per row
(``gpu.run_row_kernel``): one definition, compiled per dtype, never per shape. Every buffer is
a flat 1-D array; an input is read through an element offset and element strides, so views
need no copy, and shapes, strides, padding and dilation are runtime arguments. Outputs are
contiguous. Rows are chosen so that no two rows write one element (no atomics, the same
result in any order). Literals are not retyped: ``_c(0)`` is a value of the kernel's dtype.

Convolution is im2col + matmul: ``cols[n * csn + k * csk + oh * OW + ow]`` holds the input
value that kernel tap ``k = (c * KH + kh) * KW + kw`` sees at output position (oh, ow) of
image n (0 in the padding). ``csn`` and ``csk`` say how the columns are laid out.
"""

import math  # noqa: F401  (used by the generated modules)

import numpy as np

_c = np.float64  # replaced by the kernel dtype in generated modules


# ---------------------------------------------------------------- convolution


def im2col_row(i, x, xo, sn, sc, sh, sw, C, H, W, KH, KW, OH, OW, st_h, st_w, pad_h, pad_w,
               dil_h, dil_w, cols, csn, csk):
    # row i = (n, c, kh, kw): one kernel tap's OH * OW values. (A row per tap, not per output
    # row: the index arithmetic below, integer divisions, is then paid once per tap.)
    kw = i % KW
    r = i // KW
    kh = r % KH
    r = r // KH
    c = r % C
    n = r // C
    base = n * csn + ((c * KH + kh) * KW + kw) * csk
    w0 = kw * dil_w - pad_w
    lo, hi = _inside(w0, st_w, W, OW)  # the same for every output row
    step = st_w * sw
    h = kh * dil_h - pad_h
    for oh in range(OH):
        b = base + oh * OW
        if h < 0 or h >= H:
            for ow in range(OW):
                cols[b + ow] = _c(0)
        else:
            src = xo + n * sn + c * sc + h * sh + w0 * sw
            for ow in range(lo):
                cols[b + ow] = _c(0)
            if step == 1:  # (stride 1 along a contiguous row: a copy the loop vectorizes)
                for ow in range(lo, hi):
                    cols[b + ow] = x[src + ow]
            else:
                for ow in range(lo, hi):
                    cols[b + ow] = x[src + ow * step]
            for ow in range(hi, OW):
                cols[b + ow] = _c(0)
        h += st_h


def _inside(w0, st, W, OW):
    # the outputs ow whose input position w0 + ow * st lies in [0, W): range(lo, hi)
    lo = 0 if w0 >= 0 else min(OW, (st - 1 - w0) // st)
    hi = 0 if W - 1 - w0 < 0 else min(OW, (W - 1 - w0) // st + 1)
    return lo, max(lo, hi)


def col2im_row(i, cols, csn, csk, C, H, W, KH, KW, OH, OW, st_h, st_w, pad_h, pad_w, dil_h,
               dil_w, dx):
    # row i = (n, c): the plane dx[n, c] (H * W), the sum of every column entry that read it
    # (im2col's adjoint; each row adds into its own plane only). Tap by tap, so the range of
    # outputs inside the input is found once per tap, not per element.
    c = i % C
    n = i // C
    base = i * H * W
    for p in range(H * W):
        dx[base + p] = _c(0)
    for kh in range(KH):
        for kw in range(KW):
            src = n * csn + ((c * KH + kh) * KW + kw) * csk
            w0 = kw * dil_w - pad_w
            lo, hi = _inside(w0, st_w, W, OW)
            h = kh * dil_h - pad_h
            for oh in range(OH):
                if 0 <= h < H:
                    dst = base + h * W + w0
                    row = src + oh * OW
                    for ow in range(lo, hi):
                        dx[dst + ow * st_w] += cols[row + ow]
                h += st_h


# ---------------------------------------------------------------- max pooling


def max_pool2d_row(i, x, xo, sn, sc, sh, sw, C, H, W, KH, KW, OH, OW, st_h, st_w, pad_h, pad_w,
                   dil_h, dil_w, out, idx):
    # row i = (n, c, oh). As PyTorch: a NaN wins (the last one), and a window of -inf gives
    # the index of its first position inside the input
    oh = i % OH
    r = i // OH
    c = r % C
    n = r // C
    src = xo + n * sn + c * sc
    h0 = oh * st_h - pad_h
    hs = h0
    while hs < 0:
        hs += dil_h
    for ow in range(OW):
        w0 = ow * st_w - pad_w
        ws = w0
        while ws < 0:
            ws += dil_w
        best = _c(-np.inf)
        k = hs * W + ws
        for kh in range(KH):
            h = h0 + kh * dil_h
            if h < 0 or h >= H:
                continue
            for kw in range(KW):
                w = w0 + kw * dil_w
                if w < 0 or w >= W:
                    continue
                v = x[src + h * sh + w * sw]
                if v > best or v != v:
                    best = v
                    k = h * W + w
        out[i * OW + ow] = best
        idx[i * OW + ow] = k


def max_pool2d_backward_row(i, g, idx, HW, OHW, dx):
    # row i = one (n, c) plane: each output's gradient added at the position it took
    base = i * HW
    for p in range(HW):
        dx[base + p] = _c(0)
    for o in range(i * OHW, (i + 1) * OHW):
        dx[base + idx[o]] += g[o]


def max_pool2d_gather_row(i, h, idx, HW, OHW, out):
    # row i = one (n, c) plane: the values at the positions the pooling took
    base = i * HW
    for o in range(i * OHW, (i + 1) * OHW):
        out[o] = h[base + idx[o]]


# ---------------------------------------------------------------- average pooling


def avg_pool2d_row(i, x, xo, sn, sc, sh, sw, C, H, W, KH, KW, OH, OW, st_h, st_w, pad_h, pad_w,
                   include_pad, divisor, out):
    # row i = (n, c, oh); ``divisor`` 0 means none given (PyTorch's divisor_override)
    oh = i % OH
    r = i // OH
    c = r % C
    n = r // C
    src = xo + n * sn + c * sc
    for ow in range(OW):
        hs = oh * st_h - pad_h
        ws = ow * st_w - pad_w
        he = min(hs + KH, H + pad_h)
        we = min(ws + KW, W + pad_w)
        size = (he - hs) * (we - ws)
        hs = max(hs, 0)
        ws = max(ws, 0)
        he = min(he, H)
        we = min(we, W)
        if hs >= he or ws >= we:
            out[i * OW + ow] = _c(0)
            continue
        if divisor != 0:
            size = divisor
        elif include_pad == 0:
            size = (he - hs) * (we - ws)
        s = _c(0)
        for h in range(hs, he):
            for w in range(ws, we):
                s += x[src + h * sh + w * sw]
        out[i * OW + ow] = s / _c(size)


def avg_pool2d_backward_row(i, g, H, W, KH, KW, OH, OW, st_h, st_w, pad_h, pad_w, include_pad,
                            divisor, dx):
    # row i = one (n, c) plane: each output's gradient spread over its window
    base = i * H * W
    for p in range(H * W):
        dx[base + p] = _c(0)
    for oh in range(OH):
        for ow in range(OW):
            hs = oh * st_h - pad_h
            ws = ow * st_w - pad_w
            he = min(hs + KH, H + pad_h)
            we = min(ws + KW, W + pad_w)
            size = (he - hs) * (we - ws)
            hs = max(hs, 0)
            ws = max(ws, 0)
            he = min(he, H)
            we = min(we, W)
            if hs >= he or ws >= we:
                continue
            if divisor != 0:
                size = divisor
            elif include_pad == 0:
                size = (he - hs) * (we - ws)
            v = g[(i * OH + oh) * OW + ow] / _c(size)
            for h in range(hs, he):
                for w in range(ws, we):
                    dx[base + h * W + w] += v


def adaptive_avg_pool2d_row(i, x, xo, sn, sc, sh, sw, C, H, W, OH, OW, out):
    # row i = (n, c, oh); window [floor(o * H / OH), ceil((o + 1) * H / OH)), as PyTorch
    oh = i % OH
    r = i // OH
    c = r % C
    n = r // C
    src = xo + n * sn + c * sc
    hs = (oh * H) // OH
    he = ((oh + 1) * H + OH - 1) // OH
    for ow in range(OW):
        ws = (ow * W) // OW
        we = ((ow + 1) * W + OW - 1) // OW
        s = _c(0)
        for h in range(hs, he):
            for w in range(ws, we):
                s += x[src + h * sh + w * sw]
        out[i * OW + ow] = s / _c((he - hs) * (we - ws))


def adaptive_avg_pool2d_backward_row(i, g, H, W, OH, OW, dx):
    # row i = one (n, c) plane
    base = i * H * W
    for p in range(H * W):
        dx[base + p] = _c(0)
    for oh in range(OH):
        hs = (oh * H) // OH
        he = ((oh + 1) * H + OH - 1) // OH
        for ow in range(OW):
            ws = (ow * W) // OW
            we = ((ow + 1) * W + OW - 1) // OW
            v = g[(i * OH + oh) * OW + ow] / _c((he - hs) * (we - ws))
            for h in range(hs, he):
                for w in range(ws, we):
                    dx[base + h * W + w] += v
