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


def lstm_forward_row(b, H, xp, xo, gh, bias, c_prev, cpo, h, c, so, acts, ao):
    # acts (B, 4H): the gates after their nonlinearities, for the backward
    g0 = b * 4 * H
    x0 = xo + g0
    a0 = ao + g0
    for m in range(2 * H):  # input and forget gates
        acts[a0 + m] = _sigmoid(xp[x0 + m] + (gh[g0 + m] + bias[m]))
    for m in range(2 * H, 3 * H):  # cell gate
        acts[a0 + m] = math.tanh(xp[x0 + m] + (gh[g0 + m] + bias[m]))
    for m in range(3 * H, 4 * H):  # output gate
        acts[a0 + m] = _sigmoid(xp[x0 + m] + (gh[g0 + m] + bias[m]))
    s0 = so + b * H
    p0 = cpo + b * H
    for j in range(H):
        cc = acts[a0 + H + j] * c_prev[p0 + j] + acts[a0 + j] * acts[a0 + 2 * H + j]
        c[s0 + j] = cc
        h[s0 + j] = acts[a0 + 3 * H + j] * math.tanh(cc)


def lstm_backward_row(b, H, gout, goo, dh_next, acts, ao, c, co, c_prev, cpo, dc, dg, dgo):
    # dh_next: the gradient reaching this step's h from the next step (its gates' gradient
    # times w_hh); dc: the cell state's, read and replaced by the previous step's
    a0 = ao + b * 4 * H
    d0 = dgo + b * 4 * H
    r0 = b * H
    for j in range(H):
        dh = gout[goo + r0 + j] + dh_next[r0 + j]
        gi = acts[a0 + j]
        gf = acts[a0 + H + j]
        gg = acts[a0 + 2 * H + j]
        go = acts[a0 + 3 * H + j]
        tc = math.tanh(c[co + r0 + j])
        d = dc[r0 + j] + dh * go * (_c(1) - tc * tc)
        dg[d0 + j] = d * gg * gi * (_c(1) - gi)
        dg[d0 + H + j] = d * c_prev[cpo + r0 + j] * gf * (_c(1) - gf)
        dg[d0 + 2 * H + j] = d * gi * (_c(1) - gg * gg)
        dg[d0 + 3 * H + j] = dh * tc * go * (_c(1) - go)
        dc[r0 + j] = d * gf


# ---------------------------------------------------------------- GRU


def gru_forward_row(b, H, xp, xo, gh, bias, h_prev, hpo, h, ho, acts, ao):
    # acts (B, 4H): r, z, n and the new gate's hidden part (w_hn h + b_hn), for the backward
    g0 = b * 3 * H
    x0 = xo + g0
    a0 = ao + b * 4 * H
    r0 = b * H
    for j in range(H):
        hn = gh[g0 + 2 * H + j] + bias[2 * H + j]
        r = _sigmoid(xp[x0 + j] + (gh[g0 + j] + bias[j]))
        z = _sigmoid(xp[x0 + H + j] + (gh[g0 + H + j] + bias[H + j]))
        n = math.tanh(xp[x0 + 2 * H + j] + r * hn)
        h[ho + r0 + j] = (_c(1) - z) * n + z * h_prev[hpo + r0 + j]
        acts[a0 + j] = r
        acts[a0 + H + j] = z
        acts[a0 + 2 * H + j] = n
        acts[a0 + 3 * H + j] = hn


def gru_backward_row(b, H, gout, goo, dh_next, carry, acts, ao, h_prev, hpo, dgx, dgh, dgo):
    # dgx, dgh (B, 3H): the gradients of the input's and of the hidden state's projections
    # (they differ in the new gate, which r scales); carry: the gradient reaching the previous
    # h directly (z h), read (with dh_next, the part through w_hh) and replaced
    d0 = dgo + b * 3 * H
    a0 = ao + b * 4 * H
    r0 = b * H
    for j in range(H):
        r = acts[a0 + j]
        z = acts[a0 + H + j]
        n = acts[a0 + 2 * H + j]
        hn = acts[a0 + 3 * H + j]
        dh = gout[goo + r0 + j] + carry[r0 + j] + dh_next[r0 + j]
        dn = dh * (_c(1) - z) * (_c(1) - n * n)
        dr = dn * hn * r * (_c(1) - r)
        dz = dh * (h_prev[hpo + r0 + j] - n) * z * (_c(1) - z)
        dgx[d0 + j] = dr
        dgx[d0 + H + j] = dz
        dgx[d0 + 2 * H + j] = dn
        dgh[d0 + j] = dr
        dgh[d0 + H + j] = dz
        dgh[d0 + 2 * H + j] = dn * r
        carry[r0 + j] = dh * z


# ---------------------------------------------------------------- Elman RNN (tanh, relu)


def rnn_forward_row(b, H, xp, xo, gh, bias, relu, h, ho):
    r0 = b * H
    for j in range(H):
        pre = xp[xo + r0 + j] + (gh[r0 + j] + bias[j])
        if relu:
            h[ho + r0 + j] = _c(0) if pre <= _c(0) else pre  # (NaN stays NaN, as relu)
        else:
            h[ho + r0 + j] = math.tanh(pre)


def rnn_backward_row(b, H, gout, goo, dh_next, relu, h, ho, dg, dgo):
    r0 = b * H
    for j in range(H):
        dh = gout[goo + r0 + j] + dh_next[r0 + j]
        y = h[ho + r0 + j]
        if relu:
            dg[dgo + r0 + j] = _c(0) if y <= _c(0) else dh  # (as relu's rule: NaN passes)
        else:
            dg[dgo + r0 + j] = dh * (_c(1) - y * y)
