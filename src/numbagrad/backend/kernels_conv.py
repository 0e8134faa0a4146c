"""Convolution and pooling kernels, written once for both targets as row functions.

``name_row(i, ...)`` computes row ``i`` of its output. The CPU runs it in a loop over rows
(``prange`` when the work pays, ``cpu.run_row_kernel``), CUDA as one thread per row
(``gpu.run_row_kernel``): one definition, compiled per dtype, never per shape. Every buffer is
a flat 1-D array; an input is read through an element offset and element strides, so views
need no copy, and shapes, strides, padding and dilation are runtime arguments. Outputs are
contiguous. Rows are chosen so that no two rows write one element (no atomics, the same
result in any order). Literals are not retyped: ``_c(0)`` is a value of the kernel's dtype.

Every kernel is 3-d, over volumes (D, H, W): a 2-d problem is one of depth 1 (D = KD = OD =
1, no depth padding), a 1-d one also of height 1, so each is written once for all ranks.

Convolution is im2col + matmul: ``cols[n * csn + k * csk + (od * OH + oh) * OW + ow]`` holds
the input value that kernel tap ``k = ((c * KD + kd) * KH + kh) * KW + kw`` sees at output
position (od, oh, ow) of image n (0 in the padding). ``csn`` and ``csk`` say how the columns
are laid out. The CPU reads them from a zero-padded copy of the input (``pad_row``,
``im2col_padded_row``, ``col2im_padded_row``), the GPU from the input itself.
"""

import math  # noqa: F401  (used by the generated modules)

import numpy as np

_c = np.float64  # replaced by the kernel dtype in generated modules


def _u(i):
    # a position known to be non-negative, as an unsigned index: Numba then leaves out its
    # negative-index wraparound, a third of the instructions of a pooling's inner loop
    return np.uint64(i)


# ---------------------------------------------------------------- convolution


def im2col_row(i, x, xo, sn, sc, sd, sh, sw, C, D, H, W, KD, KH, KW, OD, OH, OW, st_d, st_h,
               st_w, pad_d, pad_h, pad_w, dil_d, dil_h, dil_w, cols, csn, csk):
    # row i = (n, c, kd, kh, kw): one kernel tap's OD * OH * OW values. (A row per tap, not
    # per output row: the index arithmetic below, integer divisions, is then paid once per tap.)
    kw = i % KW
    r = i // KW
    kh = r % KH
    r = r // KH
    kd = r % KD
    r = r // KD
    c = r % C
    n = r // C
    base = n * csn + (((c * KD + kd) * KH + kh) * KW + kw) * csk
    w0 = kw * dil_w - pad_w
    lo, hi = _inside(w0, st_w, W, OW)  # the same for every output row
    step = st_w * sw
    d = kd * dil_d - pad_d
    for od in range(OD):
        h = kh * dil_h - pad_h
        for oh in range(OH):
            b = base + (od * OH + oh) * OW
            if d < 0 or d >= D or h < 0 or h >= H:
                for ow in range(OW):
                    cols[_u(b + ow)] = _c(0)
            else:
                src = xo + n * sn + c * sc + d * sd + h * sh + w0 * sw
                for ow in range(lo):
                    cols[_u(b + ow)] = _c(0)
                if step == 1:  # (stride 1 along a contiguous row: a copy the loop vectorizes)
                    for ow in range(lo, hi):
                        cols[_u(b + ow)] = x[_u(src + ow)]
                else:
                    for ow in range(lo, hi):
                        cols[_u(b + ow)] = x[_u(src + ow * step)]
                for ow in range(hi, OW):
                    cols[_u(b + ow)] = _c(0)
            h += st_h
        d += st_d


def pad_row(i, x, xo, sn, sc, sd, sh, sw, C, D, H, W, Dp, Hp, Wp, pad_d, pad_h, pad_w, xp):
    # row i = (n, c): the volume xp[n, c] (Dp * Hp * Wp) of x's zero-padded copy: zeros, then
    # the input's rows that fall inside it
    c = i % C
    n = i // C
    base = i * Dp * Hp * Wp
    for j in range(Dp * Hp * Wp):
        xp[_u(base + j)] = _c(0)
    w_lo = min(pad_w, Wp)
    w_hi = min(pad_w + W, Wp)
    for d in range(max(0, -pad_d), min(D, Dp - pad_d)):
        for h in range(max(0, -pad_h), min(H, Hp - pad_h)):
            src = xo + n * sn + c * sc + d * sd + h * sh - pad_w * sw
            dst = base + ((d + pad_d) * Hp + h + pad_h) * Wp
            for j in range(w_lo, w_hi):
                xp[_u(dst + j)] = x[_u(src + j * sw)]


def im2col_padded_row(i, xp, C, Dp, Hp, Wp, KD, KH, KW, OD, OH, OW, st_d, st_h, st_w, dil_d,
                      dil_h, dil_w, cols, csn, csk):
    # im2col_row's columns from the zero-padded copy xp (pad_row) of the input, which holds 7
    # values more at its end: every output row is then a plain copy, without the tests for
    # the padding. A contiguous one (stride 1) goes 8 values at a time, read first and then
    # written (so the compiler makes each 8 one vector load and store; a plain loop of a few
    # iterations runs scalar), its last 8 reaching up to 7 past the row: into the next row of
    # the same tap (rows of 8 or more), written after it, so the tap's last row alone is
    # copied exactly.
    kw = i % KW
    r = i // KW
    kh = r % KH
    r = r // KH
    kd = r % KD
    r = r // KD
    c = r % C
    n = r // C
    base = n * csn + (((c * KD + kd) * KH + kh) * KW + kw) * csk
    plane = (n * C + c) * Dp
    for od in range(OD):
        src0 = ((plane + od * st_d + kd * dil_d) * Hp + kh * dil_h) * Wp + kw * dil_w
        for oh in range(OH):
            b = base + (od * OH + oh) * OW
            src = src0 + oh * st_h * Wp
            if st_w != 1:
                for ow in range(OW):
                    cols[_u(b + ow)] = xp[_u(src + ow * st_w)]
                continue
            end = OW if OW < 8 or (od == OD - 1 and oh == OH - 1) else OW + 7
            j = 0
            while j + 8 <= end:
                a = _u(src + j)
                v0 = xp[a]
                v1 = xp[a + _u(1)]
                v2 = xp[a + _u(2)]
                v3 = xp[a + _u(3)]
                v4 = xp[a + _u(4)]
                v5 = xp[a + _u(5)]
                v6 = xp[a + _u(6)]
                v7 = xp[a + _u(7)]
                a = _u(b + j)
                cols[a] = v0
                cols[a + _u(1)] = v1
                cols[a + _u(2)] = v2
                cols[a + _u(3)] = v3
                cols[a + _u(4)] = v4
                cols[a + _u(5)] = v5
                cols[a + _u(6)] = v6
                cols[a + _u(7)] = v7
                j += 8
            for ow in range(j, OW):
                cols[_u(b + ow)] = xp[_u(src + ow)]


def col2im_padded_row(i, cols, csn, csk, C, D, H, W, Dp, Hp, Wp, KD, KH, KW, OD, OH, OW, st_d,
                      st_h, st_w, pad_d, pad_h, pad_w, dil_d, dil_h, dil_w, dxp, dx):
    # col2im_row through a zero-padded volume: row i = (n, c) sums its columns into dxp[n, c]
    # (Dp * Hp * Wp) with no tests for the padding, then writes the part inside the input to
    # dx[n, c] (D * H * W, contiguous)
    c = i % C
    n = i // C
    base = i * Dp * Hp * Wp
    for j in range(Dp * Hp * Wp):
        dxp[_u(base + j)] = _c(0)
    for k in range(KD * KH * KW):
        kw = k % KW
        kh = (k // KW) % KH
        kd = k // (KW * KH)
        src = n * csn + (c * KD * KH * KW + k) * csk
        for od in range(OD):
            dst0 = (base // Wp + (od * st_d + kd * dil_d) * Hp + kh * dil_h) * Wp + kw * dil_w
            for oh in range(OH):
                dst = dst0 + oh * st_h * Wp
                row = src + (od * OH + oh) * OW
                for ow in range(OW):
                    dxp[_u(dst + ow * st_w)] += cols[_u(row + ow)]
    out = i * D * H * W
    for d in range(D):
        for h in range(H):
            at = base + ((d + pad_d) * Hp + h + pad_h) * Wp + pad_w
            for w in range(W):
                dx[_u(out + (d * H + h) * W + w)] = dxp[_u(at + w)]


def bias_row(i, out, b, O, L):
    # row i = (n, o): bias b[o] added to the L values of output plane i
    v = b[_u(i % O)]
    for j in range(i * L, (i + 1) * L):
        out[_u(j)] += v


def _inside(w0, st, W, OW):
    # the outputs ow whose input position w0 + ow * st lies in [0, W): range(lo, hi)
    lo = 0 if w0 >= 0 else min(OW, (st - 1 - w0) // st)
    hi = 0 if W - 1 - w0 < 0 else min(OW, (W - 1 - w0) // st + 1)
    return lo, max(lo, hi)


def col2im_row(i, cols, csn, csk, C, D, H, W, KD, KH, KW, OD, OH, OW, st_d, st_h, st_w, pad_d,
               pad_h, pad_w, dil_d, dil_h, dil_w, dx):
    # row i = (n, c): the volume dx[n, c] (D * H * W), the sum of every column entry that read
    # it (im2col's adjoint; each row adds into its own volume only). Tap by tap, so the range
    # of outputs inside the input is found once per tap, not per element.
    c = i % C
    n = i // C
    base = i * D * H * W
    for p in range(D * H * W):
        dx[_u(base + p)] = _c(0)
    for k in range(KD * KH * KW):
        kw = k % KW
        kh = (k // KW) % KH
        kd = k // (KW * KH)
        src = n * csn + (c * KD * KH * KW + k) * csk
        w0 = kw * dil_w - pad_w
        lo, hi = _inside(w0, st_w, W, OW)
        d = kd * dil_d - pad_d
        for od in range(OD):
            h = kh * dil_h - pad_h
            for oh in range(OH):
                if 0 <= d < D and 0 <= h < H:
                    dst = base + (d * H + h) * W + w0
                    row = src + (od * OH + oh) * OW
                    for ow in range(lo, hi):
                        dx[_u(dst + ow * st_w)] += cols[_u(row + ow)]
                h += st_h
            d += st_d


# ---------------------------------------------------------------- max pooling


def max_pool_row(i, x, xo, sn, sc, sd, sh, sw, C, D, H, W, KD, KH, KW, OD, OH, OW, st_d, st_h,
                 st_w, pad_d, pad_h, pad_w, dil_d, dil_h, dil_w, out, idx):
    # row i = (n, c, od, oh); an index counts positions in the input's D * H * W volume. As
    # PyTorch: a NaN wins (the last one), and a window of -inf gives the index of its first
    # position inside the input
    od, oh, src = _row_origin(i, xo, sn, sc, C, OD, OH)
    ds, de = _taps(od, st_d, pad_d, KD, dil_d, D)
    hs, he = _taps(oh, st_h, pad_h, KH, dil_h, H)
    for ow in range(OW):
        ws, we = _taps(ow, st_w, pad_w, KW, dil_w, W)
        best = _c(-np.inf)
        k = (ds * H + hs) * W + ws
        # (while loops: a range with a step that is a variable divides to find its length,
        # three times per output, which took most of a small pooling's time)
        d = ds
        while d < de:
            h = hs
            while h < he:
                row = src + d * sd + h * sh
                w = ws
                at = (d * H + h) * W
                while w < we:
                    v = x[_u(row + w * sw)]
                    # (selects, not a branch: on random values the branch is mispredicted
                    # one time in two)
                    better = (v > best) | (v != v)
                    k = at + w if better else k
                    best = v if better else best
                    w += dil_w
                h += dil_h
            d += dil_d
        out[_u(i * OW + ow)] = best
        idx[_u(i * OW + ow)] = k


def _row_origin(i, xo, sn, sc, C, OD, OH):
    # a pooling row i = (n, c, od, oh): (od, oh, the offset of its (n, c) plane). Integer
    # divisions take most of a small window's time: two here, not six, for 2-d planes of a
    # contiguous batch
    oh = i % OH
    r = i // OH
    od = 0
    if OD != 1:
        od = r % OD
        r = r // OD
    if sn == C * sc:  # (n, c) is plane r
        return od, oh, xo + r * sc
    return od, oh, xo + (r // C) * sn + (r % C) * sc


def _taps(o, st, pad, K, dil, N):
    # the window's taps inside the input along one dim: range(start, end, dil)
    s = o * st - pad
    e = min(s + (K - 1) * dil + 1, N)
    while s < 0:
        s += dil
    return s, e


def max_pool_backward_row(i, g, idx, P, OP, dx):
    # row i = one (n, c) plane of P positions: each of its OP outputs' gradient added at the
    # position it took
    base = i * P
    for p in range(P):
        dx[base + p] = _c(0)
    for o in range(i * OP, (i + 1) * OP):
        dx[base + idx[o]] += g[o]


def max_pool_gather_row(i, h, idx, P, OP, out):
    # row i = one (n, c) plane: the values at the positions the pooling took
    base = i * P
    for o in range(i * OP, (i + 1) * OP):
        out[o] = h[base + idx[o]]


# ---------------------------------------------------------------- average pooling


def _window(o, st, pad, K, N):
    # PyTorch's average window along one dim: (start, end) clipped to the input, and its
    # size counted up to the padding's end (count_include_pad)
    s = o * st - pad
    e = min(s + K, N + pad)
    return max(s, 0), min(e, N), e - s


def avg_pool_row(i, x, xo, sn, sc, sd, sh, sw, C, D, H, W, KD, KH, KW, OD, OH, OW, st_d, st_h,
                 st_w, pad_d, pad_h, pad_w, include_pad, divisor, out):
    # row i = (n, c, od, oh); ``divisor`` 0 means none given (PyTorch's divisor_override)
    od, oh, src = _row_origin(i, xo, sn, sc, C, OD, OH)
    ds, de, pd = _window(od, st_d, pad_d, KD, D)
    hs, he, ph = _window(oh, st_h, pad_h, KH, H)
    for ow in range(OW):
        ws, we, pw = _window(ow, st_w, pad_w, KW, W)
        if ds >= de or hs >= he or ws >= we:
            out[i * OW + ow] = _c(0)
            continue
        size = pd * ph * pw
        if divisor != 0:
            size = divisor
        elif include_pad == 0:
            size = (de - ds) * (he - hs) * (we - ws)
        s = _c(0)
        for d in range(ds, de):
            for h in range(hs, he):
                for w in range(ws, we):
                    s += x[_u(src + d * sd + h * sh + w * sw)]
        out[_u(i * OW + ow)] = s / _c(size)


def avg_pool_backward_row(i, g, D, H, W, KD, KH, KW, OD, OH, OW, st_d, st_h, st_w, pad_d, pad_h,
                          pad_w, include_pad, divisor, dx):
    # row i = one (n, c) volume: each output's gradient spread over its window. (The loop over
    # the window's depth outside the one over outputs: a 2-d pooling's single plane then costs
    # no loop per output; each element still gets its outputs' shares in their order.)
    base = i * D * H * W
    for p in range(D * H * W):
        dx[base + p] = _c(0)
    for od in range(OD):
        ds, de, pd = _window(od, st_d, pad_d, KD, D)
        for d in range(ds, de):
            for oh in range(OH):
                hs, he, ph = _window(oh, st_h, pad_h, KH, H)
                for ow in range(OW):
                    ws, we, pw = _window(ow, st_w, pad_w, KW, W)
                    if hs >= he or ws >= we:
                        continue
                    size = pd * ph * pw
                    if divisor != 0:
                        size = divisor
                    elif include_pad == 0:
                        size = (de - ds) * (he - hs) * (we - ws)
                    v = g[_u(((i * OD + od) * OH + oh) * OW + ow)] / _c(size)
                    for h in range(hs, he):
                        for w in range(ws, we):
                            dx[base + (d * H + h) * W + w] += v


def _adaptive(o, N, ON):
    # PyTorch's adaptive window: [floor(o * N / ON), ceil((o + 1) * N / ON))
    return (o * N) // ON, ((o + 1) * N + ON - 1) // ON


def adaptive_avg_pool_row(i, x, xo, sn, sc, sd, sh, sw, C, D, H, W, OD, OH, OW, out):
    # row i = (n, c, od, oh)
    od, oh, src = _row_origin(i, xo, sn, sc, C, OD, OH)
    ds, de = _adaptive(od, D, OD)
    hs, he = _adaptive(oh, H, OH)
    for ow in range(OW):
        ws, we = _adaptive(ow, W, OW)
        s = _c(0)
        for d in range(ds, de):
            for h in range(hs, he):
                for w in range(ws, we):
                    s += x[_u(src + d * sd + h * sh + w * sw)]
        out[_u(i * OW + ow)] = s / _c((de - ds) * (he - hs) * (we - ws))


def adaptive_avg_pool_backward_row(i, g, D, H, W, OD, OH, OW, dx):
    # row i = one (n, c) volume (its loops in avg_pool_backward_row's order)
    base = i * D * H * W
    for p in range(D * H * W):
        dx[base + p] = _c(0)
    for od in range(OD):
        ds, de = _adaptive(od, D, OD)
        for d in range(ds, de):
            for oh in range(OH):
                hs, he = _adaptive(oh, H, OH)
                for ow in range(OW):
                    ws, we = _adaptive(ow, W, OW)
                    v = g[_u(((i * OD + od) * OH + oh) * OW + ow)] / _c(
                        (de - ds) * (he - hs) * (we - ws))
                    for h in range(hs, he):
                        for w in range(ws, we):
                            dx[base + (d * H + h) * W + w] += v
