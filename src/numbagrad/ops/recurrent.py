"""Recurrent layers' ops: one cell step as recorded ops (``rnn_cell``, ``lstm_cell``: what the
cells ``nn.RNNCell``, ``nn.LSTMCell``, ``nn.GRUCell`` are), and a whole layer (every timestep of
one direction) as one op per mode (``lstm_layer``, ``gru_layer``, ``rnn_tanh_layer``,
``rnn_relu_layer``: what ``nn.LSTM``, ``nn.GRU`` and ``nn.RNN`` run per layer and direction, as
PyTorch's ``mkldnn_rnn_layer``).

A layer op takes the input's projection for every step at once (``x_proj = x @ w_ih.T + b_ih``,
one matmul made by the caller) and runs the steps itself: per step one matmul with ``w_hh`` and
one kernel (backend/kernels_rnn.py) for the gates' nonlinearities and the state update. Its
backward runs the steps in reverse the same way, from the gates' values kept by the forward,
and makes the weight's gradient with one matmul over all steps. A recorded backward
(``create_graph``) instead replays the layer with the cell step's recorded ops and
differentiates that, so gradients of any order are those of the cells.

``pack_padded_sequence`` gathers the steps of padded sequences into a packed sequence's data
(PyTorch's ``_pack_padded_sequence``, its node ``PackPaddedSequenceBackward0``).
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ..autograd.api import grad as _grad
from ..autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..backend import kernels_rnn as KR
from . import elementwise as E
from . import linalg as L
from . import movement as M
from . import reduce as R
from .forward import through_vjp
from .indexing import _device, _host
from .kernels import row_buffer
from .movement import _Index, index_put_zeros
from .registry import composite

# ---------------------------------------------------------------- one step, as recorded ops


def _linear(x, w, b):
    # nn.functional.linear of a 2-D input (ops do not import nn): addmm, or mm without a bias
    return L.matmul(x, w.t()) if b is None else L.addmm(b, x, w.t())


def rnn_cell(mode, x_proj, h, w_hh, b_hh):
    """One step of an RNN/GRU with the input's projection ``x_proj`` already made."""
    h_proj = _linear(h, w_hh, b_hh)
    if mode == "GRU":
        xr, xz, xn = x_proj.chunk(3, -1)
        hr, hz, hn = h_proj.chunk(3, -1)
        r = (xr + hr).sigmoid()
        z = (xz + hz).sigmoid()
        n = (xn + r * hn).tanh()
        return (1 - z) * n + z * h
    pre = x_proj + h_proj
    return pre.tanh() if mode == "RNN_TANH" else pre.relu()


def lstm_cell(x_proj, h, c, w_hh, b_hh):
    """One LSTM step with the input's projection ``x_proj`` already made: ``(h, c)``."""
    gates = x_proj + _linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c.tanh(), c


def _replay(mode, x_proj, h, c, w_hh, b_hh, reverse):
    """The layer as cell steps of recorded ops: ``(out, h_T[, c_T])``."""
    steps = range(x_proj.shape[0] - 1, -1, -1) if reverse else range(x_proj.shape[0])
    seq = [None] * x_proj.shape[0]
    for t in steps:
        if mode == "LSTM":
            h, c = lstm_cell(x_proj[t], h, c, w_hh, b_hh)
        else:
            h = rnn_cell(mode, x_proj[t], h, w_hh, b_hh)
        seq[t] = h
    out = M.stack(seq) if seq else x_proj.new_zeros((0, *h.shape))
    return (out, h, c) if mode == "LSTM" else (out, h)


# ---------------------------------------------------------------- the layer op


def _flat(be, a):
    """(flat buffer, element offset) of contiguous array ``a``."""
    buf, off, _ = be.flat_view(a)
    return buf, off


def _layer_forward(ctx, mode, x_proj, h0, c0, w_hh, b_hh, reverse):
    be = ctx.backend
    lstm = mode == "LSTM"
    ctx.mode, ctx.reverse = mode, reverse
    ctx.save(x_proj=x_proj, h0=h0, c0=c0, w_hh=w_hh, b_hh=b_hh)
    ctx.has_bias = b_hh is not None
    ctx.save_outputs = {"out": 0}
    xa = be.ascontiguousarray(x_proj._data)
    dt = xa.dtype
    T, B, G = xa.shape
    H = w_hh.shape[1]
    wt = be.ascontiguousarray(w_hh._data.T)
    bias = row_buffer(be, be.zeros((G,), dt) if b_hh is None
                  else be.ascontiguousarray(b_hh._data))
    h_prev = be.ascontiguousarray(h0._data)
    out = be.empty((T, B, H), dt)
    ob = row_buffer(be, out)
    xb, xo = _flat(be, xa)
    acts = ctx.acts = be.empty((T, B, 4 * H), dt) if lstm or mode == "GRU" else None
    if acts is not None:
        ab = row_buffer(be, acts)
    if lstm:
        cs = ctx.cs = be.empty((T, B, H), dt)
        cb = row_buffer(be, cs)
        cpb, cpo = _flat(be, be.ascontiguousarray(c0._data))
    hpb, hpo = _flat(be, h_prev)
    relu = mode == "RNN_RELU"
    rows, work = B * H, B * G  # (a step's elements of the state, of the gates)
    gh2 = be.empty((B, G), dt)  # (each step's h_prev @ w_hh.T, written in place)
    gh = row_buffer(be, gh2)
    for t in range(T - 1, -1, -1) if reverse else range(T):
        be.matmul(h_prev, wt, out=gh2)
        if lstm:
            be.run_row_kernel(KR.lstm_forward_row, B, work, (
                H, xb, xo + t * work, gh, bias, cpb, cpo, ob, cb, t * rows, ab, t * 4 * rows), dt)
            cpb, cpo = cb, t * rows
        elif mode == "GRU":
            be.run_row_kernel(KR.gru_forward_row, B, work, (
                H, xb, xo + t * work, gh, bias, hpb, hpo, ob, t * rows, ab, t * 4 * rows), dt)
        else:
            be.run_row_kernel(KR.rnn_forward_row, B, work, (
                H, xb, xo + t * work, gh, bias, relu, ob, t * rows), dt)
        h_prev, hpb, hpo = out[t], ob, t * rows
    last = (0 if reverse else T - 1) if T else None
    h_last = h_prev.copy() if last is None else out[last].copy()
    if not lstm:
        return out, h_last
    c_last = be.ascontiguousarray(c0._data).copy() if last is None else cs[last].copy()
    return out, h_last, c_last


def _layer_backward(ctx, grads):
    if is_grad_enabled():  # a recorded backward: the layer's steps as recorded ops
        return _replayed_backward(ctx, grads)
    mode, reverse = ctx.mode, ctx.reverse
    lstm = mode == "LSTM"
    be = ctx.backend
    w = ctx["w_hh"]._data
    out = ctx["out"]._data
    h0 = be.ascontiguousarray(ctx["h0"]._data)
    T, B, H = out.shape
    G = w.shape[0]
    dt = out.dtype
    rows, work = B * H, B * G  # (a step's elements of the state, of the gates)
    g_out = be.ascontiguousarray(grads[0]._data.astype(dt, copy=False))
    gob, goo = _flat(be, g_out)
    dgx = be.empty((T, B, G), dt)
    dxb = row_buffer(be, dgx)
    dgh, dhb = dgx, dxb  # (the hidden state's projection gets the gates' gradient but in GRU)
    # (dh_next and dc are read without an offset, and dc is written: fresh copies)
    dh_next = be.ascontiguousarray(grads[1]._data.astype(dt, copy=True))
    if lstm:
        acts, cs = ctx.acts, ctx.cs
        ab = row_buffer(be, acts)
        cb = row_buffer(be, cs)
        c0b, c0o = _flat(be, be.ascontiguousarray(ctx["c0"]._data))
        dc = be.ascontiguousarray(grads[2]._data.astype(dt, copy=True))
        dcb = row_buffer(be, dc)
    elif mode == "GRU":
        ab = row_buffer(be, ctx.acts)
        dgh = be.empty((T, B, G), dt)
        dhb = row_buffer(be, dgh)
        carry, dh_next = dh_next.copy(), be.zeros((B, H), dt)
        cab = row_buffer(be, carry)
    ob = row_buffer(be, out)
    h0b, h0o = _flat(be, h0)
    relu = mode == "RNN_RELU"
    dnb = row_buffer(be, dh_next)  # (each step's dgh @ w_hh is written into dh_next)
    for t in range(T) if reverse else range(T - 1, -1, -1):
        first = t == (T - 1 if reverse else 0)  # (the step that read h0, c0)
        prev = t + 1 if reverse else t - 1
        if lstm:
            cpb, cpo = (c0b, c0o) if first else (cb, prev * rows)
            be.run_row_kernel(KR.lstm_backward_row, B, work, (
                H, gob, goo + t * rows, dnb, ab, t * 4 * rows, cb, t * rows, cpb, cpo, dcb, dxb,
                t * work), dt)
        elif mode == "GRU":
            hpb, hpo = (h0b, h0o) if first else (ob, prev * rows)
            be.run_row_kernel(KR.gru_backward_row, B, work, (
                H, gob, goo + t * rows, dnb, cab, ab, t * 4 * rows, hpb, hpo, dxb, dhb,
                t * work), dt)
        else:
            be.run_row_kernel(KR.rnn_backward_row, B, work, (
                H, gob, goo + t * rows, dnb, relu, ob, t * rows, dxb, t * work), dt)
        be.matmul(dgh[t], w, out=dh_next)
    # the hidden state each step read, in time order, against the gradients of its projection
    if T:
        before = [out[1:], h0.reshape(1, B, H)] if reverse else [h0.reshape(1, B, H), out[:-1]]
        h_prev = be.concatenate(before, 0).reshape(T * B, H)
    else:
        h_prev = be.zeros((0, H), dt)
    wrap = Tensor._make
    with no_grad():
        g_h0 = wrap(dh_next)
        if mode == "GRU":
            g_h0 = E.add(g_h0, wrap(carry))
        grads_in = [wrap(dgx), g_h0]
        if lstm:
            grads_in.append(wrap(dc))
        g2 = wrap(dgh.reshape(T * B, G))
        grads_in.append(L.mm(g2.t(), wrap(h_prev)))
        if ctx.has_bias:
            grads_in.append(R.sum(g2, (0,)))
    return tuple(grads_in)


def _replayed_backward(ctx, grads):
    names = ["x_proj", "h0", "c0", "w_hh", "b_hh"]
    inputs = [ctx[n] if n in ctx.saved else None for n in names]
    with enable_grad():
        outs = _replay(ctx.mode, *inputs, ctx.reverse)
        wanted = [t for t in inputs if t is not None and t.requires_grad]
        found = iter(_grad(outs, wanted, grads, create_graph=True, allow_unused=True))
    return tuple(next(found) if t.requires_grad else None for t in inputs if t is not None)


def _register(name, mode, node=None):
    def forward(ctx, x_proj, h0, *rest, reverse=False):
        """One direction of one layer of a recurrent net: ``(out, h_T[, c_T])`` from the
        input's projection ``x_proj`` (T, B, gates * H), the initial state(s) (B, H), the
        recurrent weight ``w_hh`` (gates * H, H) and its bias (or None); the steps run from
        the last to the first with ``reverse``."""
        if mode == "LSTM":
            c0, w_hh, b_hh = rest
        else:
            (w_hh, b_hh), c0 = rest, None
        return _layer_forward(ctx, mode, x_proj, h0, c0, w_hh, b_hh, reverse)

    forward.__name__ = name
    op = composite(name, node=node)(forward)
    op.defvjp(_layer_backward)
    op.defjvp(through_vjp(op))
    return op


# (the nodes a printed output shows are PyTorch's: its CPU LSTM runs each layer as one mkldnn
# op; its GRU and RNN run the steps as ops and stack the steps' states, StackBackward0)
lstm_layer = _register("lstm_layer", "LSTM", node="MkldnnRnnLayerBackward0")
gru_layer = _register("gru_layer", "GRU", node="StackBackward0")
rnn_tanh_layer = _register("rnn_tanh_layer", "RNN_TANH", node="StackBackward0")
rnn_relu_layer = _register("rnn_relu_layer", "RNN_RELU", node="StackBackward0")
LAYERS = {"LSTM": lstm_layer, "GRU": gru_layer, "RNN_TANH": rnn_tanh_layer,
          "RNN_RELU": rnn_relu_layer}


# ---------------------------------------------------------------- packing


@composite("pack_padded_sequence", node="PackPaddedSequenceBackward0")
def pack_padded_sequence(ctx, input, lengths=()):
    """The packed data of sorted padded sequences ``input`` (T, B, *) of ``lengths`` (a tuple
    of ints, non-increasing, each at most T): each step's elements of the sequences still
    running, step after step."""
    T, B = input.shape[:2]
    # (the rows of input seen as (T * B, *) that hold a step of a sequence, time-major)
    steps = lengths[0] if lengths else 0
    rows = ctx.rows = np.flatnonzero(np.arange(steps)[:, None] < np.asarray(lengths))
    a = _host(ctx, input).reshape(T * B, *input.shape[2:])
    return _device(ctx, a.take(rows, 0))


@pack_padded_sequence.defvjp
def pack_padded_sequence_vjp(ctx, grad):
    shape = ctx.input_shapes[0]
    flat = (shape[0] * shape[1], *shape[2:])
    return (index_put_zeros(grad, _Index((ctx.rows,), ()), flat).reshape(shape),)
