"""Grid sampling kernels (ops/grid.py), written once for both targets as row functions (see
kernels_conv.py for the form: ``cpu.run_row_kernel`` loops over the rows, ``gpu.run_row_kernel``
runs one thread per row).

Output point (n, oh, ow) reads the input at the position its grid entry names, through
``taps`` x ``taps`` input pixels: 1 (nearest), 2 (bilinear) or 4 (bicubic) per axis. The weight
of tap (tx, ty) is a product of one weight per axis, each a polynomial of the position's
fraction, so its derivatives by the grid's x and y are products too: ``_weight(.., m, ..)`` is
the m-th derivative of an axis weight by that axis' grid coordinate. A sample is a sum of such
products, ``sum_(a, b) coeffs[a, b] * wx^(a) * wy^(b)``, with coefficients per output point (one
coefficient 1 for an ordinary sample, ``nc = 1``): the derivatives of a sample by its grid are
samples of this form again, so the backward's own gradients, of any order, are these kernels
(ops/grid.py). ``grid_plan_row`` computes the taps and weights once per point; the sample, its
adjoint (the input's gradient, ``grid_scatter_row``) and its projections on the derivative
orders (``grid_project_row``) read them.

Modes and paddings are PyTorch's numbers: mode 0 bilinear, 1 nearest, 2 bicubic; padding 0
zeros, 1 border, 2 reflection. The positions are computed as PyTorch's CPU kernels do
(aten/src/ATen/native/cpu/GridSamplerKernel.cpp), in the kernel's dtype.
"""

import math  # noqa: F401  (used by the generated modules)

import numpy as np

_c = np.float64  # replaced by the kernel dtype in generated modules


# ---------------------------------------------------------------- positions and weights


def _clip(p, size):
    # (position clipped to [0, size - 1], its derivative: 0 on the borders too, as PyTorch)
    hi = _c(size - 1)
    if p <= _c(0):
        return _c(0), _c(0)
    if p >= hi:
        return hi, _c(0)
    return p, _c(1)


def _reflect(p, size, align):
    # (position reflected at the borders into [low, low + span], its derivative +-1)
    if align == 1:
        if size <= 1:
            return _c(0), _c(0)
        low = _c(0)
        twice_span = _c(2 * (size - 1))
    else:
        low = _c(-0.5)
        twice_span = _c(2 * size)
    q = p - low
    sign = _c(1)
    if q < _c(0):
        q = -q
        sign = _c(-1)
    flips = q / twice_span
    if flips < _c(4503599627370496.0):  # (an integer past 2 ** 52, past int64 for floor)
        flips = _c(math.floor(flips))
    extra = q - flips * twice_span
    flipped = twice_span - extra
    if extra > flipped:
        return flipped + low, -sign
    return extra + low, sign


def _locate(v, size, mode, padding, align):
    # grid coordinate v along an axis of ``size`` pixels: (the first tap's pixel, the
    # position's fraction past its floor, d position / d v)
    if align == 1:
        scale = _c(size - 1) / _c(2)
        p = (v + _c(1)) * scale
    else:
        scale = _c(size) / _c(2)
        p = (v + _c(1)) * scale - _c(0.5)
    mult = scale
    if mode != 2 and padding != 0:  # (bicubic pads each tap instead: _tap)
        if padding == 2:
            p, m = _reflect(p, size, align)
            mult = mult * m
        p, m = _clip(p, size)
        mult = mult * m
    if not (p >= _c(-2147483648.0) and p <= _c(2147483646.0)):
        # NaN, inf and positions past int32 read nothing; NaN and inf leave NaN weights, which
        # make the sample NaN, as in PyTorch's CPU kernel
        return -100, (_c(0) if mode == 1 else p - p), mult
    fl = math.floor(p)
    if mode == 1:  # the nearest pixel, halves to even (PyTorch's nearbyint)
        d = p - _c(fl)
        if d > _c(0.5) or (d == _c(0.5) and fl % 2 != 0):
            fl += 1
        return fl, _c(0), mult
    if mode == 2:
        return fl - 1, p - _c(fl), mult
    return fl, p - _c(fl), mult


def _tap(first, t, size, mode, padding, align):
    # the pixel of tap t along an axis, or -1 where it lies outside (it reads zero)
    q = first + t
    if mode == 2 and padding != 0:
        v = _c(q)
        if padding == 2:
            v = _reflect(v, size, align)[0]
        v = _clip(v, size)[0]
        q = int(v)
    if q < 0 or q >= size:
        return -1
    return q


def _weight(mode, m, t, f, mult):
    # the m-th derivative of tap t's weight by the grid coordinate (fraction f, d position /
    # d coordinate ``mult``)
    if mode == 1:
        d = _c(1) if m == 0 else _c(0)
    elif mode == 0:
        if m == 0:
            d = f if t == 1 else _c(1) - f
        elif m == 1:
            d = _c(1) if t == 1 else _c(-1)
        else:
            d = _c(0)
    else:  # cubic convolution, A = -0.75 (PyTorch's), by the tap's distance x from f
        a = _c(-0.75)
        s = _c(1) if t < 2 else _c(-1)  # d x / d f
        if t == 0 or t == 3:
            x = f + _c(1) if t == 0 else _c(2) - f
            if m == 0:
                d = ((a * x - _c(5) * a) * x + _c(8) * a) * x - _c(4) * a
            elif m == 1:
                d = s * ((_c(3) * a * x - _c(10) * a) * x + _c(8) * a)
            elif m == 2:
                d = _c(6) * a * x - _c(10) * a
            elif m == 3:
                d = s * _c(6) * a
            else:
                d = _c(0)
        else:
            x = f if t == 1 else _c(1) - f
            if m == 0:
                d = ((a + _c(2)) * x - (a + _c(3))) * x * x + _c(1)
            elif m == 1:
                d = s * (_c(3) * (a + _c(2)) * x - _c(2) * (a + _c(3))) * x
            elif m == 2:
                d = _c(6) * (a + _c(2)) * x - _c(2) * (a + _c(3))
            elif m == 3:
                d = s * _c(6) * (a + _c(2))
            else:
                d = _c(0)
    for _ in range(m):
        d = d * mult
    return d


# ---------------------------------------------------------------- plan, sample, scatter, project
# A plan holds, per output point i, axis a (0: x, 1: y) and tap t, at k = (i * 2 + a) * taps + t:
# the tap's pixel ``idx[k]`` (-1: it reads zero) and the derivatives of its weight,
# ``wts[k * nb + m]`` of order m < nb. The kernels below read it, so the positions and weights
# are computed once per point, not once per channel.


def grid_plan_row(i, g, go, sgn, sgh, sgw, sgk, H, W, OH, OW, taps, nb, mode, padding, align,
                  idx, wts):
    # row i = output row (n, oh): the plan of its OW points
    oh = i % OH
    n = i // OH
    for ow in range(OW):
        gp = go + n * sgn + oh * sgh + ow * sgw
        pt = i * OW + ow
        for a in range(2):
            size = W if a == 0 else H
            first, f, mult = _locate(g[gp + a * sgk], size, mode, padding, align)
            for t in range(taps):
                k = (pt * 2 + a) * taps + t
                idx[k] = _tap(first, t, size, mode, padding, align)
                for m in range(nb):
                    wts[k * nb + m] = _weight(mode, m, t, f, mult)


def grid_sample_row(i, x, xo, sxn, sxc, sxh, sxw, C, OH, OW, taps, idx, wts, nb, c, co, scn,
                    sch, scw, sck, nc, out):
    # row i = output row (n, oh): out[n, :, oh, :], the samples of every channel, with the
    # weights ``sum_(a, b) c[a, b] * wx^(a) * wy^(b)`` (nc orders of each axis; nc <= nb)
    oh = i % OH
    n = i // OH
    OHW = OH * OW
    for ow in range(OW):
        pt = i * OW + ow
        ob = n * C * OHW + oh * OW + ow
        cp = co + n * scn + oh * sch + ow * scw
        for ch in range(C):
            # (a channel at a time, its sum in a register: the few weights are recomputed)
            v = _c(0)
            for ty in range(taps):
                ky = (pt * 2 + 1) * taps + ty
                yy = idx[ky]
                for tx in range(taps):
                    kx = pt * 2 * taps + tx
                    xx = idx[kx]
                    w = _c(0)
                    for a in range(nc):
                        for b in range(nc):
                            w += c[cp + (a * nc + b) * sck] * wts[kx * nb + a] * wts[ky * nb + b]
                    if yy < 0 or xx < 0:
                        v += w * _c(0)  # (reads zero: a NaN weight still makes NaN)
                    else:
                        v += w * x[xo + n * sxn + ch * sxc + yy * sxh + xx * sxw]
            out[ob + ch * OHW] = v


def grid_scatter_row(i, r, ro, srn, src, srh, srw, C, H, W, OH, OW, taps, idx, wts, nb, c, co,
                     scn, sch, scw, sck, nc, dx):
    # row i = plane (n, ch) of dx (N, C, H, W): each output point's gradient ``r`` added to the
    # pixels it read, times their weights (grid_sample_row's adjoint in its input)
    ch = i % C
    n = i // C
    base = i * H * W
    for p in range(H * W):
        dx[base + p] = _c(0)
    for oh in range(OH):
        for ow in range(OW):
            pt = (n * OH + oh) * OW + ow
            v = r[ro + n * srn + ch * src + oh * srh + ow * srw]
            cp = co + n * scn + oh * sch + ow * scw
            for ty in range(taps):
                ky = (pt * 2 + 1) * taps + ty
                yy = idx[ky]
                if yy < 0:
                    continue
                for tx in range(taps):
                    kx = pt * 2 * taps + tx
                    xx = idx[kx]
                    if xx < 0:
                        continue
                    w = _c(0)
                    for a in range(nc):
                        for b in range(nc):
                            w += c[cp + (a * nc + b) * sck] * wts[kx * nb + a] * wts[ky * nb + b]
                    dx[base + yy * W + xx] += v * w


def grid_project_row(i, r, ro, srn, src, srh, srw, x, xo, sxn, sxc, sxh, sxw, C, OH, OW, taps,
                     idx, wts, nb, first, K, out):
    # row i = output row (n, oh): per point, out[pt, k] = the sum over channels of ``r`` times
    # the sample of derivative orders (a, b), the gradient of grid_sample_row by its
    # coefficient (a, b). ``first``: k = 0, 1 are (1, 0) and (0, 1), an ordinary sample's grid
    # gradient; else (a, b) = (k // nb, k % nb), every order below nb (K = nb * nb)
    oh = i % OH
    n = i // OH
    for ow in range(OW):
        pt = i * OW + ow
        for k in range(K):
            out[pt * K + k] = _c(0)
        rb = ro + n * srn + oh * srh + ow * srw
        for ty in range(taps):
            ky = (pt * 2 + 1) * taps + ty
            yy = idx[ky]
            for tx in range(taps):
                kx = pt * 2 * taps + tx
                xx = idx[kx]
                v = _c(0)  # (a tap that reads zero: a NaN weight still makes NaN)
                if yy >= 0 and xx >= 0:
                    s = xo + n * sxn + yy * sxh + xx * sxw
                    for ch in range(C):
                        v += r[rb + ch * src] * x[s + ch * sxc]
                for k in range(K):
                    if first == 1:
                        a = 1 - k
                        b = k
                    else:
                        a = k // nb
                        b = k % nb
                    out[pt * K + k] += wts[kx * nb + a] * wts[ky * nb + b] * v
