"""Recurrent layers' per-timestep kernels (ops/recurrent.py), written once for both targets as
row functions (see kernels_conv.py for the form: ``cpu.run_row_kernel`` loops over the rows,
``gpu.run_row_kernel`` runs one thread per row; on the CPU ``math.exp`` and ``math.tanh`` are
fastmath.py's arithmetic, so the loops over a row's units vectorize).

Row ``b`` is one batch element: it reads its gate pre-activations of the step, applies the
cell's nonlinearities and writes its new state, and in the backward its gates' gradients. Its
loops run over the hidden units ``j`` (``H`` of them) with unit stride. Buffers are flat 1-D
arrays addressed by an element offset (the step's slice of a (T, B, ...) array); every array
is C-contiguous. The matmul with the recurrent weight is the caller's, between the steps.

Gate layouts are PyTorch's: LSTM (input, forget, cell, output), GRU (reset, update, new).
``xp``: the input's projection of the step (bias ``b_ih`` included); ``gh``: the previous
hidden state times ``w_hh.T`` (without its bias, ``bias``, added here). The formulas are
those of the cells' recorded ops (ops/recurrent.py), in the same order.
"""

import math  # noqa: F401  (used by the generated modules)

import numpy as np

_c = np.float64  # replaced by the kernel dtype in generated modules


def _sigmoid(x):
    # (exp(-x) overflows to inf for x below about -88 (float32): the result is then 0)
    return _c(1) / (_c(1) + math.exp(-x))


# ---------------------------------------------------------------- LSTM
# (each row takes its slices of the buffers first: indices from 0 in a loop over range() are
# known not to be negative, so the loops vectorize; an offset added to them is not)


def lstm_forward_row(b, H, xp, xo, gh, bias, c_prev, cpo, h, c, so, acts, ao):
    # acts (B, 4H): the gates after their nonlinearities, for the backward
    G = 4 * H
    x = xp[xo + b * G:xo + b * G + G]
    y = gh[b * G:b * G + G]
    a = acts[ao + b * G:ao + b * G + G]
    for m in range(2 * H):  # input and forget gates
        a[m] = _sigmoid(x[m] + (y[m] + bias[m]))
    for m in range(2 * H, 3 * H):  # cell gate
        a[m] = math.tanh(x[m] + (y[m] + bias[m]))
    for m in range(3 * H, G):  # output gate
        a[m] = _sigmoid(x[m] + (y[m] + bias[m]))
    cp = c_prev[cpo + b * H:cpo + b * H + H]
    cn = c[so + b * H:so + b * H + H]
    hn = h[so + b * H:so + b * H + H]
    for j in range(H):
        cc = a[H + j] * cp[j] + a[j] * a[2 * H + j]
        cn[j] = cc
        hn[j] = a[3 * H + j] * math.tanh(cc)


def lstm_backward_row(b, H, gout, goo, dh_next, acts, ao, c, co, c_prev, cpo, dc, dg, dgo):
    # dh_next: the gradient reaching this step's h from the next step (its gates' gradient
    # times w_hh); dc: the cell state's, read and replaced by the previous step's
    G = 4 * H
    a = acts[ao + b * G:ao + b * G + G]
    d = dg[dgo + b * G:dgo + b * G + G]
    go_ = gout[goo + b * H:goo + b * H + H]
    dn = dh_next[b * H:b * H + H]
    cn = c[co + b * H:co + b * H + H]
    cp = c_prev[cpo + b * H:cpo + b * H + H]
    dcb = dc[b * H:b * H + H]
    for j in range(H):
        dh = go_[j] + dn[j]
        gi = a[j]
        gf = a[H + j]
        gg = a[2 * H + j]
        go = a[3 * H + j]
        tc = math.tanh(cn[j])
        dcc = dcb[j] + dh * go * (_c(1) - tc * tc)
        d[j] = dcc * gg * gi * (_c(1) - gi)
        d[H + j] = dcc * cp[j] * gf * (_c(1) - gf)
        d[2 * H + j] = dcc * gi * (_c(1) - gg * gg)
        d[3 * H + j] = dh * tc * go * (_c(1) - go)
        dcb[j] = dcc * gf


# ---------------------------------------------------------------- GRU


def gru_forward_row(b, H, xp, xo, gh, bias, h_prev, hpo, h, ho, acts, ao):
    # acts (B, 4H): r, z, n and the new gate's hidden part (w_hn h + b_hn), for the backward
    x = xp[xo + b * 3 * H:xo + b * 3 * H + 3 * H]
    y = gh[b * 3 * H:b * 3 * H + 3 * H]
    a = acts[ao + b * 4 * H:ao + b * 4 * H + 4 * H]
    hp = h_prev[hpo + b * H:hpo + b * H + H]
    hw = h[ho + b * H:ho + b * H + H]
    for j in range(H):
        hn = y[2 * H + j] + bias[2 * H + j]
        r = _sigmoid(x[j] + (y[j] + bias[j]))
        z = _sigmoid(x[H + j] + (y[H + j] + bias[H + j]))
        n = math.tanh(x[2 * H + j] + r * hn)
        hw[j] = (_c(1) - z) * n + z * hp[j]
        a[j] = r
        a[H + j] = z
        a[2 * H + j] = n
        a[3 * H + j] = hn


def gru_backward_row(b, H, gout, goo, dh_next, carry, acts, ao, h_prev, hpo, dgx, dgh, dgo):
    # dgx, dgh (B, 3H): the gradients of the input's and of the hidden state's projections
    # (they differ in the new gate, which r scales); carry: the gradient reaching the previous
    # h directly (z h), read (with dh_next, the part through w_hh) and replaced
    a = acts[ao + b * 4 * H:ao + b * 4 * H + 4 * H]
    dx = dgx[dgo + b * 3 * H:dgo + b * 3 * H + 3 * H]
    dy = dgh[dgo + b * 3 * H:dgo + b * 3 * H + 3 * H]
    go_ = gout[goo + b * H:goo + b * H + H]
    dn_ = dh_next[b * H:b * H + H]
    cr = carry[b * H:b * H + H]
    hp = h_prev[hpo + b * H:hpo + b * H + H]
    for j in range(H):
        r = a[j]
        z = a[H + j]
        n = a[2 * H + j]
        hn = a[3 * H + j]
        dh = go_[j] + cr[j] + dn_[j]
        dn = dh * (_c(1) - z) * (_c(1) - n * n)
        dr = dn * hn * r * (_c(1) - r)
        dz = dh * (hp[j] - n) * z * (_c(1) - z)
        dx[j] = dr
        dx[H + j] = dz
        dx[2 * H + j] = dn
        dy[j] = dr
        dy[H + j] = dz
        dy[2 * H + j] = dn * r
        cr[j] = dh * z


# ---------------------------------------------------------------- Elman RNN (tanh, relu)


def rnn_forward_row(b, H, xp, xo, gh, bias, relu, h, ho):
    x = xp[xo + b * H:xo + b * H + H]
    y = gh[b * H:b * H + H]
    hw = h[ho + b * H:ho + b * H + H]
    for j in range(H):
        pre = x[j] + (y[j] + bias[j])
        if relu:
            hw[j] = _c(0) if pre <= _c(0) else pre  # (NaN stays NaN, as relu)
        else:
            hw[j] = math.tanh(pre)


def rnn_backward_row(b, H, gout, goo, dh_next, relu, h, ho, dg, dgo):
    go_ = gout[goo + b * H:goo + b * H + H]
    dn = dh_next[b * H:b * H + H]
    y = h[ho + b * H:ho + b * H + H]
    d = dg[dgo + b * H:dgo + b * H + H]
    for j in range(H):
        dh = go_[j] + dn[j]
        if relu:
            d[j] = _c(0) if y[j] <= _c(0) else dh  # (as relu's rule: NaN passes)
        else:
            d[j] = dh * (_c(1) - y[j] * y[j])
