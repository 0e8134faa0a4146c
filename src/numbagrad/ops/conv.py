"""Convolution and pooling: row kernels (backend/kernels_conv.py) and matmuls forward; each
backward is one of these ops too, so gradients of any order are convolutions and poolings.

Every op works on 4-D arrays (N, C, H, W); a 1-d convolution is a 2-d one with H = 1, and an
unbatched input one with N = 1, as views. The public functions below check the arguments with
PyTorch's errors and hand the ops a normalized ``Geometry``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .. import dtypes as D
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..backend import kernels_conv as KC
from . import elementwise as E
from . import indexing as I
from . import movement as M
from . import reduce as R
from .registry import composite, public


class Geometry(NamedTuple):
    """A convolution's or pooling's parameters, per spatial dim (H, W)."""

    kernel: tuple  # (KH, KW): the pooling window (a convolution's is its weight's)
    stride: tuple
    pad: tuple  # padding before (top, left)
    pad_end: tuple  # padding after (bottom, right): differs from ``pad`` for 'same' only
    dilation: tuple
    groups: int = 1
    ceil_mode: bool = False
    count_include_pad: bool = True
    divisor: int = 0  # avg_pool2d's divisor_override; 0: none


def _as4d(a, spatial: int, batched: bool):
    """Array ``a`` (N, C, *spatial) or (C, *spatial) viewed as (N, C, H, W)."""
    shape = a.shape if batched else (1,) + tuple(a.shape)
    if spatial == 1:
        shape = tuple(shape[:2]) + (1,) + tuple(shape[2:])
    return a.reshape(shape)


def _flat_out(be, shape, dtype):
    out = be.empty(shape, dtype)
    return out, be.flat_view(out)[0]


# ---------------------------------------------------------------- convolution kernels


def _conv_out(n, k, s, p0, p1, d):
    return (n + p0 + p1 - d * (k - 1) - 1) // s + 1


def transposed_out(n, k, s, p0, p1, d):
    """The size along one dim of a transposed convolution's output: the input size whose
    convolution has size ``n`` (``p1``: ``padding - output_padding``)."""
    return (n - 1) * s - p0 - p1 + d * (k - 1) + 1


def _im2col(be, x, geom, KH, KW, OH, OW):
    """The columns of 4-D ``x``: (C * KH * KW, N * OH * OW), so that a group's rows are one
    block (``(G, Kg, N * L)`` for the matmuls)."""
    N, C, H, W = x.shape
    L = OH * OW
    cols, cb = _flat_out(be, (C * KH * KW, N * L), x.dtype)
    xb, xo, (sn, sc, sh, sw) = be.flat_view(x)
    be.run_row_kernel(KC.im2col_row, N * C * KH * KW, cols.size,
                      (xb, xo, sn, sc, sh, sw, C, H, W, KH, KW, OH, OW, *geom.stride, *geom.pad,
                       *geom.dilation, cb, L, N * L), x.dtype)
    return cols


def _grad_rows(be, grad, G):
    """Gradient (N, O, OH, OW) as contiguous (G, O // G, N * OH * OW)."""
    N, O = grad.shape[:2]
    L = grad.shape[2] * grad.shape[3]
    moved = be.ascontiguousarray(grad.reshape(N, O, L).transpose((1, 0, 2)))
    return moved.reshape(G, O // G, N * L)


def conv_arrays(be, x, w, b, geom):
    """The convolution of 4-D arrays ``x`` and ``w`` plus bias ``b`` (or None)."""
    N, C, H, W = x.shape
    O, Cg, KH, KW = w.shape
    G = geom.groups
    OH = _conv_out(H, KH, geom.stride[0], geom.pad[0], geom.pad_end[0], geom.dilation[0])
    OW = _conv_out(W, KW, geom.stride[1], geom.pad[1], geom.pad_end[1], geom.dilation[1])
    cols = _im2col(be, x, geom, KH, KW, OH, OW)
    wg = be.ascontiguousarray(w).reshape(G, O // G, Cg * KH * KW)
    out = be.matmul(wg, cols.reshape(G, Cg * KH * KW, N * OH * OW))
    by_image = out.reshape(O, N, OH * OW).transpose((1, 0, 2))
    if b is None:
        out = be.ascontiguousarray(by_image)
    else:  # the bias added while the result is made contiguous: one pass
        dt = D.from_numpy_dtype(x.dtype)
        out = be.run_elementwise(E.add.kernel(dt, be), [by_image, b.reshape(O, 1)], x.dtype)
    return out.reshape(N, O, OH, OW)


def conv_input_grad(be, grad, w, x_shape, geom):
    """The gradient of a convolution with respect to its input (a transposed convolution)."""
    N, C, H, W = x_shape
    O, Cg, KH, KW = w.shape
    G = geom.groups
    OH, OW = grad.shape[2:]
    wg = be.ascontiguousarray(w).reshape(G, O // G, Cg * KH * KW)
    dcols = be.matmul(wg.transpose((0, 2, 1)), _grad_rows(be, grad, G))
    dx, db = _flat_out(be, (N, C, H, W), grad.dtype)
    L = OH * OW
    be.run_row_kernel(KC.col2im_row, N * C, dcols.size,
                      (be.flat_view(dcols)[0], L, N * L, C, H, W, KH, KW, OH, OW, *geom.stride,
                       *geom.pad, *geom.dilation, db), grad.dtype)
    return dx


def conv_weight_grad(be, grad, x, w_shape, geom):
    """The gradient of a convolution with respect to its weight."""
    O, Cg, KH, KW = w_shape
    G = geom.groups
    OH, OW = grad.shape[2:]
    cols = _im2col(be, x, geom, KH, KW, OH, OW).reshape(G, Cg * KH * KW, -1)
    gw = be.matmul(_grad_rows(be, grad, G), cols.transpose((0, 2, 1)))
    return gw.reshape(O, Cg, KH, KW)


# ---------------------------------------------------------------- convolution ops


def _layout(x, w):
    """(spatial dims, batched) of a convolution's input ``x`` and weight ``w``."""
    return w.ndim - 2, x.ndim == w.ndim


@composite("convolution", node="ConvolutionBackward0")
def convolution(ctx, input, weight, bias, geom):
    """Convolution of ``input`` (N, C, *spatial) or (C, *spatial) by ``weight``; ``bias``
    may be None."""
    spatial, batched = _layout(input, weight)
    ctx.geom, ctx.has_bias = geom, bias is not None
    ctx.save(x=input, w=weight)
    be = ctx.backend
    out = conv_arrays(be, _as4d(input._data, spatial, batched), _as4d(weight._data, spatial, True),
                      None if bias is None else bias._data, geom)
    shape = out.shape if batched else out.shape[1:]
    return out.reshape(shape[:-2] + shape[-1:] if spatial == 1 else shape)


@convolution.defvjp
def convolution_vjp(ctx, grad):
    needs = [f is not None for f, _ in ctx.node.next_functions]
    mask = (needs[0], needs[1], ctx.has_bias and needs[2])
    outs = iter(convolution_backward(grad, ctx["x"], ctx["w"], ctx.geom, mask))
    return tuple(next(outs) if m else None for m in mask[: 2 + ctx.has_bias])


@composite("convolution_backward", node="ConvolutionBackwardBackward0")
def convolution_backward(ctx, grad, input, weight, geom, mask):
    """The gradients (input, weight, bias) of a convolution whose output's gradient is
    ``grad``: those ``mask`` asks for, in that order."""
    spatial, batched = _layout(input, weight)
    ctx.geom, ctx.mask = geom, mask
    ctx.save(grad=grad, x=input, w=weight)
    be = ctx.backend
    g = _as4d(grad._data, spatial, batched)
    x = _as4d(input._data, spatial, batched)
    w = _as4d(weight._data, spatial, True)
    outs = []
    if mask[0]:
        outs.append(conv_input_grad(be, g, w, x.shape, geom).reshape(input.shape))
    if mask[1]:
        outs.append(conv_weight_grad(be, g, x, w.shape, geom).reshape(weight.shape))
    if mask[2]:
        with no_grad():
            outs.append(R.sum(Tensor._make(g), (0, 2, 3))._data)
    return tuple(outs)


@convolution_backward.defvjp
def convolution_backward_vjp(ctx, grads):
    # the op is bilinear: <h_x, dx(g, w)> = <conv(h_x, w), g> and <h_w, dw(g, x)> =
    # <conv(x, h_w), g>, so each derivative is a convolution or its backward
    grads = iter(grads if isinstance(grads, list) else [grads])  # (a list for several outputs)
    hx, hw, hb = (next(grads) if m else None for m in ctx.mask)
    needs = [f is not None for f, _ in ctx.node.next_functions]
    g, x, w, geom = ctx["grad"], ctx["x"], ctx["w"], ctx.geom
    gg = gx = gw = None
    if needs[0]:
        terms = []
        if hx is not None:
            terms.append(convolution(hx, w, None, geom))
        if hw is not None:
            terms.append(convolution(x, hw, None, geom))
        if hb is not None:
            spatial = w.ndim - 2
            terms.append(M.expand(hb.reshape((hb.shape[0],) + (1,) * spatial), g.shape))
        gg = terms[0]
        for t in terms[1:]:
            gg = gg + t
    if needs[1] and hw is not None:
        gx = convolution_backward(g, x, hw, geom, (True, False, False))[0]
    if needs[2] and hx is not None:
        gw = convolution_backward(g, hx, w, geom, (False, True, False))[0]
    return gg, gx, gw


@composite("convolution_transpose", node="ConvolutionBackward0")
def convolution_transpose(ctx, input, weight, bias, geom):
    """Transposed convolution of ``input`` (N, C_in, *spatial) or (C_in, *spatial) by
    ``weight`` (C_in, C_out / groups, *kernel): the input gradient of the convolution by
    ``weight`` (geometry ``geom``) whose output gradient is ``input``; ``bias`` may be None."""
    spatial, batched = _layout(input, weight)
    ctx.geom, ctx.has_bias = geom, bias is not None
    ctx.save(x=input, w=weight)
    be = ctx.backend
    x = _as4d(input._data, spatial, batched)
    w = _as4d(weight._data, spatial, True)
    size = tuple(transposed_out(*a) for a in zip(x.shape[2:], w.shape[2:], geom.stride, geom.pad,
                                                 geom.pad_end, geom.dilation))
    out = conv_input_grad(be, x, w, (x.shape[0], w.shape[1] * geom.groups) + size, geom)
    if bias is not None:
        dt = D.from_numpy_dtype(x.dtype)
        out = be.run_elementwise(E.add.kernel(dt, be), [out, bias._data.reshape(-1, 1, 1)],
                                 x.dtype)
    shape = out.shape if batched else out.shape[1:]
    return out.reshape(shape[:-2] + shape[-1:] if spatial == 1 else shape)


@convolution_transpose.defvjp
def convolution_transpose_vjp(ctx, grad):
    # the adjoint of the forward: the input's gradient is the convolution of ``grad``, the
    # weight's that convolution's weight gradient (``input`` in the role of its output's)
    needs = [f is not None for f, _ in ctx.node.next_functions]
    x, w, geom = ctx["x"], ctx["w"], ctx.geom
    gx = convolution(grad, w, None, geom) if needs[0] else None
    gw = convolution_backward(x, grad, w, geom, (False, True, False))[0] if needs[1] else None
    if not ctx.has_bias:
        return gx, gw
    channel = grad.ndim - (w.ndim - 1)  # (1 batched, 0 unbatched)
    gb = R.sum(grad, tuple(d for d in range(grad.ndim) if d != channel)) if needs[2] else None
    return gx, gw, gb


# ---------------------------------------------------------------- pooling ops


def _pool_setup(ctx, input, geom):
    """(backend, 4-D input array, rows of planes N * C) for a pooling forward."""
    ctx.geom, ctx.in_shape = geom, input.shape
    x = input._data if input.ndim == 4 else input._data.reshape((1,) + tuple(input.shape))
    return ctx.backend, x


def _pool_out_shape(input, OH, OW):
    return tuple(input.shape[:-2]) + (OH, OW)


def pool_out(n, k, s, p, d, ceil_mode):
    """PyTorch's pooling_output_shape: the number of windows along one dim."""
    out = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1  # the last window would start inside the right padding
    return out


@composite("max_pool2d_with_indices", node="MaxPool2DWithIndicesBackward0")
def max_pool2d_with_indices(ctx, input, geom):
    """(values, int64 indices into each H * W plane) of 2-d max pooling."""
    be, x = _pool_setup(ctx, input, geom)
    N, C, H, W = x.shape
    (KH, KW), (sh_, sw_), (ph, pw), (dh, dw) = geom.kernel, geom.stride, geom.pad, geom.dilation
    OH = pool_out(H, KH, sh_, ph, dh, geom.ceil_mode)
    OW = pool_out(W, KW, sw_, pw, dw, geom.ceil_mode)
    out, ob = _flat_out(be, (N, C, OH, OW), x.dtype)
    idx, ib = _flat_out(be, (N, C, OH, OW), D.int64.np)
    xb, xo, (sn, sc, sh, sw) = be.flat_view(x)
    be.run_row_kernel(KC.max_pool2d_row, N * C * OH, out.size * KH * KW,
                      (xb, xo, sn, sc, sh, sw, C, H, W, KH, KW, OH, OW, sh_, sw_, ph, pw, dh, dw,
                       ob, ib), x.dtype)
    shape = _pool_out_shape(input, OH, OW)
    ctx.non_differentiable = (1,)
    ctx.save_outputs = {"indices": 1}
    return out.reshape(shape), idx.reshape(shape)


@max_pool2d_with_indices.defvjp
def max_pool2d_with_indices_vjp(ctx, grads):
    return max_pool2d_backward(grads[0], ctx["indices"], ctx.in_shape)


@composite("max_pool2d_backward", node="MaxPool2DWithIndicesBackwardBackward0")
def max_pool2d_backward(ctx, grad, indices, shape):
    """Max pooling's input gradient: ``grad`` added at the positions in ``indices``."""
    ctx.save(indices=indices)
    be = ctx.backend
    H, W = shape[-2:]
    planes = math.prod(shape[:-2])
    OHW = grad.shape[-1] * grad.shape[-2]
    g = be.ascontiguousarray(grad._data)
    dx, db = _flat_out(be, tuple(shape), g.dtype)
    i = be.ascontiguousarray(indices._data)
    be.run_row_kernel(KC.max_pool2d_backward_row, planes, dx.size + g.size,
                      (be.flat_view(g)[0], be.flat_view(i)[0], H * W, OHW, db), g.dtype)
    return dx


@max_pool2d_backward.defvjp
def max_pool2d_backward_vjp(ctx, grad):
    return max_pool2d_gather(grad, ctx["indices"]), None


@composite("max_pool2d_gather", node="GatherBackward0")
def max_pool2d_gather(ctx, input, indices):
    """The values of ``input`` (.., H, W) at ``indices`` (.., OH, OW) of each plane."""
    ctx.save(indices=indices)
    ctx.in_shape = input.shape
    be = ctx.backend
    H, W = input.shape[-2:]
    OHW = indices.shape[-1] * indices.shape[-2]
    h = be.ascontiguousarray(input._data)
    out, ob = _flat_out(be, tuple(indices.shape), h.dtype)
    i = be.ascontiguousarray(indices._data)
    be.run_row_kernel(KC.max_pool2d_gather_row, math.prod(input.shape[:-2]), out.size,
                      (be.flat_view(h)[0], be.flat_view(i)[0], H * W, OHW, ob), h.dtype)
    return out


@max_pool2d_gather.defvjp
def max_pool2d_gather_vjp(ctx, grad):
    return max_pool2d_backward(grad, ctx["indices"], ctx.in_shape), None


def _avg_params(geom):
    return (*geom.kernel, *geom.stride, *geom.pad, int(geom.count_include_pad), geom.divisor)


@composite("avg_pool2d", node="AvgPool2DBackward0")
def avg_pool2d(ctx, input, geom):
    be, x = _pool_setup(ctx, input, geom)
    N, C, H, W = x.shape
    OH = pool_out(H, geom.kernel[0], geom.stride[0], geom.pad[0], 1, geom.ceil_mode)
    OW = pool_out(W, geom.kernel[1], geom.stride[1], geom.pad[1], 1, geom.ceil_mode)
    out, ob = _flat_out(be, (N, C, OH, OW), x.dtype)
    xb, xo, (sn, sc, sh, sw) = be.flat_view(x)
    KH, KW, sh_, sw_, ph, pw, inc, div = _avg_params(geom)
    be.run_row_kernel(KC.avg_pool2d_row, N * C * OH, out.size * KH * KW,
                      (xb, xo, sn, sc, sh, sw, C, H, W, KH, KW, OH, OW, sh_, sw_, ph, pw, inc,
                       div, ob), x.dtype)
    return out.reshape(_pool_out_shape(input, OH, OW))


@avg_pool2d.defvjp
def avg_pool2d_vjp(ctx, grad):
    return avg_pool2d_backward(grad, ctx.in_shape, ctx.geom)


@composite("avg_pool2d_backward", node="AvgPool2DBackwardBackward0")
def avg_pool2d_backward(ctx, grad, shape, geom):
    """Average pooling's input gradient (of input shape ``shape``)."""
    ctx.geom = geom
    be = ctx.backend
    H, W = shape[-2:]
    OH, OW = grad.shape[-2:]
    g = be.ascontiguousarray(grad._data)
    dx, db = _flat_out(be, tuple(shape), g.dtype)
    KH, KW, *params = _avg_params(geom)
    be.run_row_kernel(KC.avg_pool2d_backward_row, math.prod(shape[:-2]), g.size * KH * KW,
                      (be.flat_view(g)[0], H, W, KH, KW, OH, OW, *params, db), g.dtype)
    return dx


@avg_pool2d_backward.defvjp
def avg_pool2d_backward_vjp(ctx, grad):
    return avg_pool2d(grad, ctx.geom)  # (the backward is linear in grad: its adjoint)


@composite("adaptive_avg_pool2d", node="AdaptiveAvgPool2DBackward0")
def adaptive_avg_pool2d(ctx, input, output_size):
    ctx.geom, ctx.in_shape = output_size, input.shape
    be = ctx.backend
    x = input._data if input.ndim == 4 else input._data.reshape((1,) + tuple(input.shape))
    N, C, H, W = x.shape
    OH, OW = output_size
    out, ob = _flat_out(be, (N, C, OH, OW), x.dtype)
    xb, xo, (sn, sc, sh, sw) = be.flat_view(x)
    be.run_row_kernel(KC.adaptive_avg_pool2d_row, N * C * OH, x.size + out.size,
                      (xb, xo, sn, sc, sh, sw, C, H, W, OH, OW, ob), x.dtype)
    return out.reshape(_pool_out_shape(input, OH, OW))


@adaptive_avg_pool2d.defvjp
def adaptive_avg_pool2d_vjp(ctx, grad):
    return adaptive_avg_pool2d_backward(grad, ctx.in_shape)


@composite("adaptive_avg_pool2d_backward", node="AdaptiveAvgPool2DBackwardBackward0")
def adaptive_avg_pool2d_backward(ctx, grad, shape):
    """Adaptive average pooling's input gradient (of input shape ``shape``)."""
    be = ctx.backend
    H, W = shape[-2:]
    OH, OW = grad.shape[-2:]
    ctx.out_size = (OH, OW)
    g = be.ascontiguousarray(grad._data)
    dx, db = _flat_out(be, tuple(shape), g.dtype)
    be.run_row_kernel(KC.adaptive_avg_pool2d_backward_row, math.prod(shape[:-2]),
                      dx.size + g.size, (be.flat_view(g)[0], H, W, OH, OW, db), g.dtype)
    return dx


@adaptive_avg_pool2d_backward.defvjp
def adaptive_avg_pool2d_backward_vjp(ctx, grad):
    return adaptive_avg_pool2d(grad, ctx.out_size)


def _adaptive_windows(n, m):
    """The positions each of ``m`` adaptive windows over ``n`` reads, (m, k): the window ``i``
    is [floor(i n / m), ceil((i + 1) n / m)), as PyTorch's; one narrower than the widest
    repeats its last position (a repeat is never the first maximum)."""
    i = np.arange(m)
    start, end = (i * n) // m, -((-(i + 1) * n) // m)
    k = int((end - start).max()) if m else 0
    return np.minimum(start[:, None] + np.arange(k), end[:, None] - 1)


@composite("adaptive_max_pool2d", node="AdaptiveMaxPool2DBackward0")
def adaptive_max_pool2d(ctx, input, output_size):
    """(values, int64 indices into each H * W plane) of adaptive max pooling of (N, C, H, W)
    or (C, H, W) into ``output_size`` (OH, OW) windows."""
    ctx.in_shape = input.shape
    H, W = input.shape[-2:]
    (OH, OW), lead = output_size, tuple(input.shape[:-2])
    rows, cols = _adaptive_windows(H, OH), _adaptive_windows(W, OW)
    kh, kw = rows.shape[1], cols.shape[1]
    # each window's positions as flat indices into the plane, (OH, OW, kh * kw)
    flat = (rows[:, None, :, None] * W + cols[None, :, None, :]).reshape(OH, OW, kh * kw)
    with no_grad():
        x = Tensor._make(input._data).reshape(*lead, H * W)
        if OH * OW == 0:
            idx = Tensor._make(ctx.backend.zeros(lead + (OH, OW), D.int64.np))
        else:
            table = Tensor._make(flat).to(input.device)
            win = I.gather(M.expand(x.reshape(*lead, 1, 1, H * W), *lead, OH, OW, H * W), -1,
                           M.expand(table, *lead, OH, OW, kh * kw))
            pick = M.unsqueeze(R.argmax(win, -1), -1)
            idx = M.squeeze(I.gather(M.expand(table, *lead, OH, OW, kh * kw), -1, pick), -1)
        values = max_pool2d_gather(Tensor._make(input._data), idx)
    ctx.non_differentiable = (1,)
    ctx.save_outputs = {"indices": 1}
    return values._data, idx._data


@adaptive_max_pool2d.defvjp
def adaptive_max_pool2d_vjp(ctx, grads):
    return max_pool2d_backward(grads[0], ctx["indices"], ctx.in_shape)


# ---------------------------------------------------------------- unfold and fold (im2col)


def _blocks(shape, geom):
    """The number of sliding blocks (OH, OW) over the spatial ``shape`` (H, W)."""
    return tuple(_conv_out(n, k, s, p, p, d) for n, k, s, p, d in
                 zip(shape, geom.kernel, geom.stride, geom.pad, geom.dilation))


@composite("im2col", node="Im2ColBackward0")
def im2col(ctx, input, geom):
    """The sliding blocks of (N, C, H, W) or (C, H, W) as columns: (N, C * KH * KW, L), a row
    per channel and kernel tap, a column per block (the im2col convolutions run on)."""
    be = ctx.backend
    ctx.geom, ctx.size = geom, tuple(input.shape[-2:])
    x = input._data if input.ndim == 4 else input._data.reshape((1,) + tuple(input.shape))
    N, C, H, W = x.shape
    (KH, KW), (OH, OW) = geom.kernel, _blocks((H, W), geom)
    K, L = C * KH * KW, OH * OW
    cols, cb = _flat_out(be, (N, K, L), x.dtype)
    xb, xo, (sn, sc, sh, sw) = be.flat_view(x)
    be.run_row_kernel(KC.im2col_row, N * K, cols.size,
                      (xb, xo, sn, sc, sh, sw, C, H, W, KH, KW, OH, OW, *geom.stride, *geom.pad,
                       *geom.dilation, cb, K * L, L), x.dtype)
    return cols if input.ndim == 4 else cols.reshape(K, L)


im2col.defvjp(lambda ctx, grad: col2im(grad, ctx.size, ctx.geom))


@composite("col2im", node="Col2ImBackward0")
def col2im(ctx, input, output_size, geom):
    """im2col's adjoint: columns (N, C * KH * KW, L) or (C * KH * KW, L) summed back into
    (N, C, H, W) or (C, H, W), ``output_size`` (H, W)."""
    be = ctx.backend
    ctx.geom = geom
    cols = be.ascontiguousarray(input._data)
    if input.ndim == 2:
        cols = cols.reshape((1,) + tuple(cols.shape))
    N, K, L = cols.shape
    (KH, KW), (H, W) = geom.kernel, output_size
    OH, OW = _blocks((H, W), geom)
    C = K // (KH * KW)
    dx, db = _flat_out(be, (N, C, H, W), cols.dtype)
    be.run_row_kernel(KC.col2im_row, N * C, dx.size + cols.size,
                      (be.flat_view(cols)[0], K * L, L, C, H, W, KH, KW, OH, OW, *geom.stride,
                       *geom.pad, *geom.dilation, db), cols.dtype)
    return dx if input.ndim == 3 else dx.reshape(C, H, W)


col2im.defvjp(lambda ctx, grad: im2col(grad, ctx.geom))


def _fold_geometry(kernel_size, dilation, padding, stride):
    """PyTorch's im2col/col2im argument checks; the Geometry of the call."""
    pairs = []
    for what, v in (("kernel_size", kernel_size), ("dilation", dilation),
                    ("padding", padding), ("stride", stride)):
        v = (v, v) if isinstance(v, int) else tuple(v)
        if len(v) != 2:
            raise RuntimeError(f"It is expected {what} equals to 2, but got size {len(v)}")
        pairs.append(v)
    kernel, dilation, padding, stride = pairs
    for what, (a, b), (h, w) in (
            ("kernel size should be greater than zero", kernel, ("kernel_height", "kernel_width")),
            ("stride should be greater than zero", stride, ("stride_height", "stride_width")),
            ("dilation should be greater than zero", dilation,
             ("dilation_height", "dilation_width"))):
        if a <= 0 or b <= 0:
            raise RuntimeError(f"{what}, but got {h}: {a} {w}: {b}")
    if min(padding) < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {padding[0]} "
                           f"pad_width: {padding[1]}")
    return Geometry(kernel, stride, padding, padding, dilation)


@public("functional", name="unfold")
def unfold_(input, kernel_size, dilation=1, padding=0, stride=1):
    """The sliding blocks of (N, C, H, W) or (C, H, W) as columns (N, C * prod(kernel_size),
    L) (``nn.Unfold``; im2col)."""
    geom = _fold_geometry(kernel_size, dilation, padding, stride)
    if input.ndim not in (3, 4) or 0 in input.shape[-3:]:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size "
                           f"for input, but got: {list(input.shape)}")
    blocks = _blocks(input.shape[-2:], geom)
    if min(blocks) < 1:
        raise RuntimeError(
            f"Given input with spatial size {tuple(input.shape[-2:])}, kernel_size="
            f"{geom.kernel}, dilation={geom.dilation}, padding={geom.pad}, calculated shape of "
            f"the array of sliding blocks as {blocks}, but its components must be at least one.")
    return im2col(input, geom)


@public("functional", name="fold")
def fold_(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Columns (N, C * prod(kernel_size), L) summed into (N, C, *output_size) (``nn.Fold``;
    col2im, unfold's adjoint)."""
    geom = _fold_geometry(kernel_size, dilation, padding, stride)
    size = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    if len(size) != 2:
        raise RuntimeError(f"It is expected output_size equals to 2, but got size {len(size)}")
    if input.ndim not in (2, 3) or 0 in input.shape[-2:]:
        raise RuntimeError(
            "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
            f"non-zero dimensions for input, but got: {list(input.shape)}")
    (KH, KW), K, L = geom.kernel, input.shape[-2], input.shape[-1]
    if K % (KH * KW):
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
            f"but got input.size(1)={K} and kernel_size={geom.kernel}.")
    OH, OW = _blocks(size, geom)
    if OH * OW != L:
        raise RuntimeError(
            f"Given output_size={size}, kernel_size={geom.kernel}, dilation={geom.dilation}, "
            f"padding={geom.pad}, stride={geom.stride}, expected size of input's dimension 2 to "
            f"match the calculated number of sliding blocks {OH} * {OW} = {OH * OW}, but got "
            f"input.size(2)={L}.")
    return col2im(input, size, geom)


# ---------------------------------------------------------------- the public functions

_TYPE = D.SCALAR_TYPE


def _require_float(input, name):
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"{name}\" is implemented for floating point tensors only in numbagrad, not "
            f"'{_TYPE.get(input.dtype.name, input.dtype.name)}'")


def _conv_tuple(v, n):
    return (v,) * n if isinstance(v, int) else tuple(v)


def _conv_geometry(input, weight, bias, stride, padding, dilation, groups, n,
                   output_padding=None):
    """Check a conv{n}d call (a conv_transpose{n}d one given ``output_padding``) as PyTorch
    does; its ``Geometry`` in 2-d form (a transposed convolution's is that of the convolution
    whose input gradient it is)."""
    transposed = output_padding is not None
    name = f"conv_transpose{n}d" if transposed else f"conv{n}d"
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {name}, "
                           f"but got input of size: {list(input.shape)}")
    if transposed and not isinstance(padding, int) and (
            isinstance(padding, str) or not all(isinstance(p, int) for p in padding)):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not "
                        f"{type(padding).__name__}")  # (no 'same' or 'valid' here)
    spatial = weight.ndim - 2
    stride, dilation = _conv_tuple(stride, n), _conv_tuple(dilation, n)
    pad_str = padding if isinstance(padding, str) else None
    pads = (0,) * n if pad_str else _conv_tuple(padding, n)
    out_pads = _conv_tuple(output_padding or 0, n)
    checked = (("stride", stride), ("padding", pads), ("dilation", dilation))
    if transposed:
        checked += (("output_padding", out_pads),)
    for what, v in checked:
        if len(v) != spatial:
            shown = list(v) if what != "padding" or pad_str is None else padding
            raise RuntimeError(
                f"expected {what} to be a single integer value or a list of {spatial} values to "
                f"match the convolution dimensions, but got {what}={shown}")
    if pad_str is not None and pad_str not in ("valid", "same"):
        raise RuntimeError(f"Invalid padding string: '{pad_str}'")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in pads):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in out_pads):
        raise RuntimeError("negative output_padding is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at "
                           f"dimension 0, but got weight of size [{list(weight.shape)}] instead")
    batched = input.ndim == n + 2
    shape = list(input.shape) if batched else [1] + list(input.shape)
    # (a transposed convolution reads weight (C_in, C_out / groups, *kernel))
    in_channels = weight.shape[0] if transposed else weight.shape[1] * groups
    out_channels = weight.shape[1] * groups if transposed else weight.shape[0]
    given = "Given transposed=1, " if transposed else "Given "
    if shape[1] != in_channels:
        lead = given if transposed else f"Given groups={groups}, "
        raise RuntimeError(
            f"{lead}weight of size {list(weight.shape)}, expected input{shape} to have "
            f"{in_channels} channels, but got {shape[1]} channels instead")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_channels):
        raise RuntimeError(
            f"{given}weight of size {list(weight.shape)}, expected bias to be 1-dimensional with "
            f"{out_channels} elements, but got bias of size {list(bias.shape)} instead")
    if input.dtype is not weight.dtype:
        cuda = "cuda." if input.device.type == "cuda" else ""
        raise RuntimeError(
            f"Input type (torch.{cuda}{_TYPE[input.dtype.name]}Tensor) and weight type "
            f"(torch.{cuda}{_TYPE[weight.dtype.name]}Tensor) should be the same or input should "
            "be a MKLDNN tensor and weight is a dense tensor")
    if bias is not None and bias.dtype is not input.dtype:
        names = {"float32": "float", "float64": "double"}
        a, b = (names.get(t.dtype.name, t.dtype.name) for t in (input, bias))
        raise RuntimeError(f"Input type ({a}) and bias type ({b}) should be the same")
    _require_float(input, name)
    ks = tuple(weight.shape[2:])
    if transposed:
        return _transposed_geometry(shape[2:], ks, stride, pads, out_pads, dilation, groups)
    if pad_str == "same":
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        total = [d * (k - 1) for d, k in zip(dilation, ks)]
        pad, pad_end = tuple(t // 2 for t in total), tuple(t - t // 2 for t in total)
    else:
        pad = pad_end = pads
    padded = [s + a + b for s, a, b in zip(shape[2:], pad, pad_end)]
    eff = [d * (k - 1) + 1 for d, k in zip(dilation, ks)]
    if any(p < e for p, e in zip(padded, eff)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
            f"Kernel size: ({' x '.join(map(str, eff))}). Kernel size can't be greater than "
            "actual input size")
    return _as2d(Geometry(ks, stride, pad, pad_end, dilation, groups))


def _as2d(geom):
    """A 1-d convolution's ``Geometry`` as that of a 2-d one of height 1."""
    if len(geom.kernel) == 2:
        return geom
    return Geometry((1,) + geom.kernel, (1,) + geom.stride, (0,) + geom.pad,
                    (0,) + geom.pad_end, (1,) + geom.dilation, geom.groups)


def _transposed_geometry(sizes, ks, stride, pads, out_pads, dilation, groups):
    """A transposed convolution's checks (PyTorch's slow_conv_transpose2d_shape_check, in its
    2-d words also for 1-d) and ``Geometry``: the padding after each dim is ``padding -
    output_padding``, so that the convolution of the output has the input's size."""
    two = [(1, 0, 1, 1, 1)] * (2 - len(sizes)) + list(zip(sizes, out_pads, stride, dilation, ks))
    n_, op, st, dil, k = zip(*two)
    if not all(o < s or o < d for o, s, d in zip(op, st, dil)):
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            f"output_padding_height: {op[0]} output_padding_width: {op[1]} stride_height: "
            f"{st[0]} stride_width: {st[1]} dilation_height: {dil[0]} dilation_width: {dil[1]}")
    geom = _as2d(Geometry(ks, stride, pads, tuple(p - o for p, o in zip(pads, out_pads)),
                          dilation, groups))
    out = [transposed_out(*a) for a in zip(n_, geom.kernel, geom.stride, geom.pad, geom.pad_end,
                                            geom.dilation)]
    if min(out) < 1:
        raise RuntimeError(f"Given input size per channel: ({n_[0]} x {n_[1]}). Calculated output "
                           f"size per channel: ({out[0]} x {out[1]}). Output size is too small")
    return geom


def _batched(op, input, weight, *args):
    """``op`` on a batch of one for an unbatched ``input``, squeezed back (as PyTorch)."""
    if input.ndim == weight.ndim:
        return op(input, weight, *args)
    return M.squeeze(op(M.unsqueeze(input, 0), weight, *args), 0)


@public("function functional")
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d convolution of ``input`` (N, C, H, W) or (C, H, W) by ``weight`` (O, C / groups,
    KH, KW); ``padding`` an int, a pair, 'valid' or 'same'."""
    geom = _conv_geometry(input, weight, bias, stride, padding, dilation, groups, 2)
    return _batched(convolution, input, weight, bias, geom)


@public("function functional")
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d convolution of ``input`` (N, C, L) or (C, L) by ``weight`` (O, C / groups, K)."""
    geom = _conv_geometry(input, weight, bias, stride, padding, dilation, groups, 1)
    return _batched(convolution, input, weight, bias, geom)


@public("function functional")
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """2-d transposed convolution of ``input`` (N, C_in, H, W) or (C_in, H, W) by ``weight``
    (C_in, C_out / groups, KH, KW): the input gradient of conv2d with these arguments."""
    geom = _conv_geometry(input, weight, bias, stride, padding, dilation, groups, 2,
                          output_padding)
    return _batched(convolution_transpose, input, weight, bias, geom)


@public("function functional")
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """1-d transposed convolution of ``input`` (N, C_in, L) or (C_in, L) by ``weight``
    (C_in, C_out / groups, K)."""
    geom = _conv_geometry(input, weight, bias, stride, padding, dilation, groups, 1,
                          output_padding)
    return _batched(convolution_transpose, input, weight, bias, geom)


def _pair(v, fn, what, empty=None):
    """An int or a sequence of one or two as a pair (PyTorch's pooling arguments)."""
    if empty is not None and (v is None or (isinstance(v, (tuple, list)) and not v)):
        return empty
    if isinstance(v, int):
        return (v, v)
    if isinstance(v, (tuple, list)) and len(v) in (1, 2):
        return (v[0], v[0]) if len(v) == 1 else tuple(v)
    must = {"stride": "must either be omitted, a single int, or a tuple of two ints",
            "dilation": "must be either a single int, or a tuple of two ints"}
    raise RuntimeError(
        f"{fn}: {what} {must.get(what, 'must either be a single int, or a tuple of two ints')}")


def _pool_geometry(input, kernel, stride, padding, dilation, ceil_mode, fn):
    """Check a 2-d pooling call as PyTorch does (pooling_output_shape, pool2d_shape_check);
    the output's (OH, OW)."""
    if input.ndim not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    sizes = []
    for n, k, s, p, d in zip(input.shape[-2:], kernel, stride, padding, dilation):
        if s == 0:
            raise RuntimeError("stride should not be zero")
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > ((k - 1) * d + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
        sizes.append(pool_out(n, k, s, p, d, ceil_mode) if k > 0 and s > 0 and d > 0 else 0)
    if min(kernel) <= 0:
        raise RuntimeError(
            f"kernel size should be greater than zero, but got kH: {kernel[0]} kW: {kernel[1]}")
    if min(stride) <= 0:
        raise RuntimeError(
            f"stride should be greater than zero, but got dH: {stride[0]} dW: {stride[1]}")
    if min(dilation) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: "
                           f"{dilation[0]} dilationW: {dilation[1]}")
    if 0 in input.shape[-3:]:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size "
                           f"for input, but got:{list(input.shape)}")
    if min(sizes) < 1:
        c, h, w = input.shape[-3:]
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: "
                           f"({c}x{sizes[0]}x{sizes[1]}). Output size is too small")
    _require_float(input, fn)
    return tuple(sizes)


@public("function functional", name="max_pool2d")
def max_pool2d_(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                return_indices=False):
    """2-d max pooling of (N, C, H, W) or (C, H, W); with ``return_indices`` also the int64
    index of each maximum in its H * W plane."""
    fn = "max_pool2d"
    kernel = _pair(kernel_size, fn, "kernel_size")
    geom = Geometry(kernel, _pair(stride, fn, "stride", kernel), _pair(padding, fn, "padding"),
                    (0, 0), _pair(dilation, fn, "dilation"), ceil_mode=ceil_mode)
    _pool_geometry(input, geom.kernel, geom.stride, geom.pad, geom.dilation, ceil_mode, fn)
    out, indices = max_pool2d_with_indices(input, geom)
    return (out, indices) if return_indices else out


@public("functional", name="avg_pool2d")
def avg_pool2d_(input, kernel_size, stride=None, padding=0, ceil_mode=False,
                count_include_pad=True, divisor_override=None):
    """2-d average pooling of (N, C, H, W) or (C, H, W)."""
    fn = "avg_pool2d"
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    kernel = _pair(kernel_size, fn, "kernel_size")
    geom = Geometry(kernel, _pair(stride, fn, "stride", kernel), _pair(padding, fn, "padding"),
                    (0, 0), (1, 1), ceil_mode=ceil_mode, count_include_pad=count_include_pad,
                    divisor=divisor_override or 0)
    _pool_geometry(input, geom.kernel, geom.stride, geom.pad, geom.dilation, ceil_mode, fn)
    return avg_pool2d(input, geom)


def _one(v):
    return v[0] if isinstance(v, (tuple, list)) else v


@public("function functional", name="max_pool1d")
def max_pool1d_(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                return_indices=False):
    """1-d max pooling of (N, C, L) or (C, L): the 2-d one over a height of 1, as PyTorch."""
    if not return_indices:  # (PyTorch's own max_pool1d checks first, in its words)
        if input.ndim not in (2, 3) or 0 in input.shape[-2:]:
            raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional "
                               f"0 dim batch size for input, but got:{list(input.shape)}")
        k = _one(kernel_size)
        s = k if stride is None or stride == () or stride == [] else _one(stride)
        p, d = _one(padding), _one(dilation)
        for what, v in (("kernel_size", k), ("stride", s)):
            if v <= 0:
                raise RuntimeError(f"max_pool1d() {what} must be greater than zero, but got {v}")
        if p < 0:
            raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
        if p > k // 2:
            raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, "
                               f"but got padding={p} and kernel_size={k}")
        if d <= 0:
            raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
        size = pool_out(input.shape[-1], k, s, p, d, ceil_mode)
        if size <= 0:
            raise RuntimeError(f"max_pool1d() Invalid computed output size: {size}")
    args = [(1, _one(v)) if v is not None else v for v in (kernel_size, stride)]
    if isinstance(stride, (tuple, list)) and not stride:
        args[1] = None
    out = max_pool2d_(M.unsqueeze(input, -2), args[0], args[1], (0, _one(padding)),
                      (1, _one(dilation)), ceil_mode, True)
    values, indices = M.squeeze(out[0], -2), M.squeeze(out[1], -2)
    return (values, indices) if return_indices else values


@public("function functional", name="avg_pool1d")
def avg_pool1d_(input, kernel_size, stride=None, padding=0, ceil_mode=False,
                count_include_pad=True):
    """1-d average pooling of (N, C, L) or (C, L): the 2-d one over a height of 1."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor "
                           "for argument #1 'self' (while checking arguments for avg_pool1d)")
    stride = None if stride is None or stride in ((), []) else (1, _one(stride))
    out = avg_pool2d_(M.unsqueeze(input, -2), (1, _one(kernel_size)), stride,
                      (0, _one(padding)), ceil_mode, count_include_pad)
    return M.squeeze(out, -2)


def _adaptive_size(input, output_size, fn):
    """``output_size`` as a pair, None keeping the input's size; the input checked as PyTorch's
    adaptive pooling does."""
    if input.ndim not in (3, 4):
        raise RuntimeError(f"{fn}(): Expected 3D or 4D tensor, but got: {list(input.shape)}")
    size = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    if len(size) != 2:
        raise RuntimeError(f"{fn}(): internal error: output_size.size() must be 2")
    size = tuple(n if s is None else s for s, n in zip(size, input.shape[-2:]))
    for d in range(input.ndim - 3, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(
                f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {list(input.shape)} with dimension {d} being empty")
    if min(size) < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: "
                           f"{[*input.shape[:-2], *size]}")
    _require_float(input, fn)
    return size


@public("functional", name="adaptive_max_pool2d")
def adaptive_max_pool2d_(input, output_size, return_indices=False):
    """Max pooling of (N, C, H, W) or (C, H, W) into ``output_size`` windows per plane (an
    int or a pair, None keeping the input's size); with ``return_indices`` also the int64
    index of each maximum in its H * W plane."""
    out, indices = adaptive_max_pool2d(
        input, _adaptive_size(input, output_size, "adaptive_max_pool2d"))
    return (out, indices) if return_indices else out


def _adaptive_1d(input, output_size, fn):
    """``output_size`` of a 1-d adaptive pooling as the 2-d one's (1, L), its input checked."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor "
                           f"for argument #1 'self' (while checking arguments for {fn})")
    size = (output_size,) if isinstance(output_size, int) else tuple(output_size)
    if len(size) != 1:
        raise RuntimeError(
            f"{fn}() argument 'output_size' should contain one int (got {len(size)})")
    return (1, size[0])


@public("functional", name="adaptive_max_pool1d")
def adaptive_max_pool1d_(input, output_size, return_indices=False):
    """Max pooling of (N, C, L) or (C, L) into ``output_size`` windows: the 2-d one over a
    height of 1, as PyTorch."""
    size = _adaptive_1d(input, output_size, "adaptive_max_pool1d")
    out, indices = adaptive_max_pool2d_(M.unsqueeze(input, -2), size, True)
    out, indices = M.squeeze(out, -2), M.squeeze(indices, -2)
    return (out, indices) if return_indices else out


@public("function functional", name="adaptive_avg_pool1d")
def adaptive_avg_pool1d_(input, output_size):
    """Average pooling of (N, C, L) or (C, L) into ``output_size`` windows: the 2-d one over a
    height of 1, as PyTorch."""
    size = _adaptive_1d(input, output_size, "adaptive_avg_pool1d")
    return M.squeeze(adaptive_avg_pool2d_(M.unsqueeze(input, -2), size), -2)


@public("functional", name="adaptive_avg_pool2d")
def adaptive_avg_pool2d_(input, output_size):
    """Average pooling of (N, C, H, W) or (C, H, W) into ``output_size`` windows per plane
    (an int or a pair, None keeping the input's size)."""
    if input.ndim not in (3, 4):
        raise RuntimeError(
            f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(input.shape)}")
    size = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    if len(size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    size = tuple(n if s is None else s for s, n in zip(size, input.shape[-2:]))
    if min(size) < 0:
        raise RuntimeError("adaptive_avg_pool2d: elements of output_size must be greater than or "
                           f"equal to 0 but received {{{size[0]}, {size[1]}}}")
    for d in range(input.ndim - 3, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(
                "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch "
                f"dimensions, but input has sizes {list(input.shape)} with dimension {d} being "
                "empty")
    _require_float(input, "adaptive_avg_pool2d")
    return adaptive_avg_pool2d(input, size)
