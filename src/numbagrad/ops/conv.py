"""Convolution and pooling: row kernels (backend/kernels_conv.py) and matmuls forward; each
backward is one of these ops too, so gradients of any order are convolutions and poolings.

Every op works on 5-D arrays (N, C, D, H, W), as the kernels do: a 2-d problem is a 3-d one
with D = 1, a 1-d one also with H = 1, and an unbatched input one with N = 1, all as views.
The public functions below check the arguments with PyTorch's errors and hand the ops a
normalized ``Geometry``. The pooling ops are registered once per rank (2-d, 3-d) from one
definition, under PyTorch's names, so that their grad_fn names are PyTorch's.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

from .. import _memory_format as MF
from .. import dtypes as D
from .._tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..backend import cpu
from ..backend import kernels_conv as KC
from . import elementwise as E
from . import indexing as I
from . import movement as M
from . import normalization as N
from . import reduce as R
from .registry import Composite, composite, public


class Geometry(NamedTuple):
    """A convolution's or pooling's parameters, per spatial dim ((D,) H, W)."""

    kernel: tuple  # the pooling window (a convolution's is its weight's)
    stride: tuple
    pad: tuple  # padding before each dim
    pad_end: tuple  # padding after each dim: differs from ``pad`` for 'same' only
    dilation: tuple
    groups: int = 1
    ceil_mode: bool = False
    count_include_pad: bool = True
    divisor: int = 0  # avg_pool's divisor_override; 0: none


@functools.lru_cache(maxsize=1024)  # (a NamedTuple's _replace costs 1.5 us; twice a call)
def _as3d(geom):
    """``geom`` of a 1-d or 2-d problem as that of a 3-d one of depth (and height) 1."""
    m = 3 - len(geom.kernel)
    if not m:
        return geom
    return geom._replace(kernel=(1,) * m + geom.kernel, stride=(1,) * m + geom.stride,
                         pad=(0,) * m + geom.pad, pad_end=(0,) * m + geom.pad_end,
                         dilation=(1,) * m + geom.dilation)


def _as5d(a, spatial: int, batched: bool):
    """Array ``a`` (N, C, *spatial) or (C, *spatial) viewed as (N, C, D, H, W)."""
    shape = tuple(a.shape) if batched else (1,) + tuple(a.shape)
    return a.reshape(shape[:2] + (1,) * (3 - spatial) + shape[2:])


def _from5d(a, spatial: int, batched: bool):
    """5-D ``a`` viewed back as the (N, C, *spatial) or (C, *spatial) it stands for."""
    shape = tuple(a.shape[:2]) + tuple(a.shape[5 - spatial:])
    return a.reshape(shape if batched else shape[1:])


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


def _im2col(be, x, geom, kernel, out_size, csn, csk):
    """The columns of 5-D ``x`` (laid out by ``csn`` and ``csk``, see kernels_conv) into a
    new array of ``C * prod(kernel) * N * prod(out_size)`` elements."""
    N, C = x.shape[:2]
    cols, cb = _flat_out(be, (C * math.prod(kernel) * N * math.prod(out_size),), x.dtype)
    xb, xo, strides = be.flat_view(x)
    be.run_row_kernel(KC.im2col_row, N * C * math.prod(kernel), cols.size,
                      (xb, xo, *strides, C, *x.shape[2:], *kernel, *out_size, *geom.stride,
                       *geom.pad, *geom.dilation, cb, csn, csk), x.dtype)
    return cols


def _col2im(be, cols, csn, csk, shape, geom, kernel, out_size):
    """im2col's adjoint: columns (laid out by ``csn`` and ``csk``) summed into a new 5-D array
    of ``shape``."""
    dx, db = _flat_out(be, tuple(shape), cols.dtype)
    N, C = shape[:2]
    be.run_row_kernel(KC.col2im_row, N * C, dx.size + cols.size,
                      (be.flat_view(cols)[0], csn, csk, C, *shape[2:], *kernel, *out_size,
                       *geom.stride, *geom.pad, *geom.dilation, db), cols.dtype)
    return dx


def _grad_rows(be, grad, G):
    """Gradient (N, O, *out) as contiguous (G, O // G, N * prod(out))."""
    N, O = grad.shape[:2]
    L = math.prod(grad.shape[2:])
    moved = be.ascontiguousarray(grad.reshape(N, O, L).transpose((1, 0, 2)))
    return moved.reshape(G, O // G, N * L)


def _out_size(x_shape, kernel, geom):
    return tuple(_conv_out(*a) for a in zip(x_shape[2:], kernel, geom.stride, geom.pad,
                                             geom.pad_end, geom.dilation))


# On the CPU the columns are laid out image by image, (N, G, K / G, L): one batched matmul
# with the (G, O / G, K / G) weight then gives the output in its own (N, O, L) layout, and the
# gradients need no transposed copy either. (The GPU's matmul takes equal batch dims only, so
# there the columns are one (G, K / G, N * L) block and the output is transposed after.)


def _reach(out_size, kernel, geom):
    """The input size, padding included, that the windows of ``out_size`` outputs cover."""
    return tuple((o - 1) * s + (k - 1) * d + 1 for o, k, s, d in
                 zip(out_size, kernel, geom.stride, geom.dilation))


def _cpu_cols(x, geom, kernel, out_size):
    """The columns of 5-D ``x``, (N, G, K / G, L), read from a zero-padded copy of ``x``
    (cheap beside the columns, ``prod(kernel)`` times its size): each output row's values are
    then one plain copy."""
    N, C = x.shape[:2]
    L, T = math.prod(out_size), math.prod(kernel)
    padded = _reach(out_size, kernel, geom)
    size = N * C * math.prod(padded)
    xp = cpu.empty((size + 7,), x.dtype)  # (7 more: im2col_padded_row reads ahead)
    xp[size:] = 0
    xb, xo, strides = cpu.flat_view(x)
    cpu.run_row_kernel(KC.pad_row, N * C, size,
                       (xb, xo, *strides, C, *x.shape[2:], *padded, *geom.pad, xp), x.dtype)
    cols = cpu.empty((N * C * T * L,), x.dtype)
    cpu.run_row_kernel(KC.im2col_padded_row, N * C * T, cols.size,
                       (xp, C, *padded, *kernel, *out_size, *geom.stride, *geom.dilation, cols,
                        C * T * L, L), x.dtype)
    return cols.reshape(N, geom.groups, C // geom.groups * T, L)


def _cpu_col2im(dcols, shape, geom, kernel, out_size):
    """col2im of columns (N, G, K / G, L) into a new 5-D array of ``shape``, through a
    zero-padded volume per (n, c)."""
    N, C = shape[:2]
    L = math.prod(out_size)
    padded = tuple(max(r, p + n) for r, p, n in zip(_reach(out_size, kernel, geom), geom.pad,
                                                      shape[2:]))
    dxp = cpu.empty((N * C * math.prod(padded),), dcols.dtype)
    dx = cpu.empty(tuple(shape), dcols.dtype)
    cpu.run_row_kernel(KC.col2im_padded_row, N * C, dxp.size + dcols.size,
                       (dcols.reshape(-1), C * math.prod(kernel) * L, L, C,
                        *shape[2:], *padded, *kernel, *out_size, *geom.stride, *geom.pad,
                        *geom.dilation, dxp, dx.reshape(-1)), dcols.dtype)
    return dx


def _weight_groups(be, w, G):
    O = w.shape[0]
    return be.ascontiguousarray(w).reshape(G, O // G, -1)


def conv_arrays(be, x, w, b, geom):
    """The convolution of 5-D arrays ``x`` and ``w`` plus bias ``b`` (or None)."""
    N = x.shape[0]
    O, Cg, *kernel = w.shape
    G = geom.groups
    out_size = _out_size(x.shape, kernel, geom)
    L, K = math.prod(out_size), Cg * math.prod(kernel)
    dt = D.from_numpy_dtype(x.dtype)
    if be is cpu:
        out = be.matmul(_weight_groups(be, w, G), _cpu_cols(x, geom, kernel, out_size))
        out = out.reshape((N, O) + out_size)
        if b is not None:
            be.run_row_kernel(KC.bias_row, N * O, out.size, (out.reshape(-1), b, O, L),
                              x.dtype)
        return out
    # (a group's rows one block: (G, K, N * L) for the matmuls)
    cols = _im2col(be, x, geom, kernel, out_size, L, N * L)
    out = be.matmul(_weight_groups(be, w, G), cols.reshape(G, K, N * L))
    by_image = out.reshape(O, N, L).transpose((1, 0, 2))
    if b is None:
        out = be.ascontiguousarray(by_image)
    else:  # the bias added while the result is made contiguous: one pass
        out = be.run_elementwise(E.add.kernel(dt, be), [by_image, b.reshape(O, 1)], x.dtype)
    return out.reshape((N, O) + out_size)


def conv_input_grad(be, grad, w, x_shape, geom):
    """The gradient of a convolution with respect to its input (a transposed convolution)."""
    O, Cg, *kernel = w.shape
    G = geom.groups
    N, L = grad.shape[0], math.prod(grad.shape[2:])
    wt = _weight_groups(be, w, G).transpose((0, 2, 1))
    if be is cpu:
        dcols = be.matmul(wt, grad.reshape(N, G, O // G, L))
        return _cpu_col2im(dcols, x_shape, geom, kernel, grad.shape[2:])
    dcols = be.matmul(be.ascontiguousarray(wt), _grad_rows(be, grad, G))
    return _col2im(be, dcols, L, N * L, x_shape, geom, kernel, grad.shape[2:])


_CHUNK_BYTES = 16 << 20


def conv_weight_grad(be, grad, x, w_shape, geom):
    """The gradient of a convolution with respect to its weight."""
    O, Cg, *kernel = w_shape
    G = geom.groups
    N, L = x.shape[0], math.prod(grad.shape[2:])
    if be is cpu:
        cols = _cpu_cols(x, geom, kernel, grad.shape[2:]).transpose((0, 1, 3, 2))
        rows = grad.reshape(N, G, O // G, L)
        # grad_n @ cols_n^T per image, summed over the images: a chunk of images at a time,
        # so that their products (a weight's size each) stay within _CHUNK_BYTES
        step = max(1, _CHUNK_BYTES // (math.prod(w_shape) * x.itemsize))
        gw = np.zeros((G, O // G, cols.shape[-1]), x.dtype)
        for s in range(0, N, step):
            part = be.matmul(rows[s:s + step], cols[s:s + step])
            be.without_fp_warnings(np.add, gw, np.sum(part, 0), out=gw)
        return gw.reshape(tuple(w_shape))
    cols = _im2col(be, x, geom, kernel, grad.shape[2:], L, N * L).reshape(G, -1, N * L)
    gw = be.matmul(_grad_rows(be, grad, G), cols.transpose((0, 2, 1)))
    return gw.reshape(tuple(w_shape))


# ---------------------------------------------------------------- convolution ops


def _layout(x, w):
    """(spatial dims, batched) of a convolution's input ``x`` and weight ``w``."""
    return w.ndim - 2, x.ndim == w.ndim


@composite("convolution", node="ConvolutionBackward0")
def convolution(ctx, input, weight, bias, geom):
    """Convolution of ``input`` (N, C, *spatial) or (C, *spatial) by ``weight``; ``bias``
    may be None; ``geom`` in 3-d form (``_as3d``)."""
    spatial, batched = _layout(input, weight)
    ctx.geom, ctx.has_bias = geom, bias is not None
    ctx.save(x=input, w=weight)
    be = ctx.backend
    x = _as5d(input._data, spatial, batched)
    w = _as5d(weight._data, spatial, True)
    if not (x.shape[0] and x.shape[1]):
        # PyTorch's Empty backend: no elements, in the input's dtype, and no channels for an
        # input of none (its calc_output_size keeps the input's 0 there)
        size = (x.shape[0], x.shape[1] and w.shape[0]) + _out_size(x.shape, w.shape[2:], geom)
        return _from5d(be.zeros(size, x.dtype), spatial, batched)
    out = conv_arrays(be, x, w, None if bias is None else bias._data, geom)
    return _from5d(out, spatial, batched)


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
    g = _as5d(grad._data, spatial, batched)
    x = _as5d(input._data, spatial, batched)
    w = _as5d(weight._data, spatial, True)
    if not (x.shape[0] and x.shape[1]):  # (no batch or no channels: zeros, as PyTorch's)
        shapes = (input.shape, weight.shape, (w.shape[0],))
        dtypes = (x.dtype, w.dtype, g.dtype)
        return tuple(be.zeros(tuple(shapes[k]), dtypes[k]) for k in range(3) if mask[k])
    outs = []
    if mask[0]:
        outs.append(conv_input_grad(be, g, w, x.shape, geom).reshape(input.shape))
    if mask[1]:
        outs.append(conv_weight_grad(be, g, x, w.shape, geom).reshape(weight.shape))
    if mask[2]:
        with no_grad():
            outs.append(R.sum(Tensor._make(g), (0, 2, 3, 4))._data)
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
    bias_term = None
    if hb is not None:
        # (expanded whichever inputs need a gradient, as PyTorch's double backward does: the
        # output of an input with no channels has none, and the expand is then its error)
        spatial = w.ndim - 2
        bias_term = M.expand(hb.reshape((hb.shape[0],) + (1,) * spatial), g.shape)
    if 0 in (x.shape[:2] if x.ndim == w.ndim else x.shape[:1]):
        return None, None, None  # (no batch or no channels: PyTorch's are undefined)
    if needs[0]:
        terms = []
        if hx is not None:
            terms.append(convolution(hx, w, None, geom))
        if hw is not None:
            terms.append(convolution(x, hw, None, geom))
        if bias_term is not None:
            terms.append(bias_term)
        for t in terms:
            gg = t if gg is None else gg + t
    if needs[1] and hw is not None:
        gx = convolution_backward(g, x, hw, geom, (True, False, False))[0]
    if needs[2] and hx is not None:
        gw = convolution_backward(g, hx, w, geom, (False, True, False))[0]
    return gg, gx, gw


# (an output that got no gradient is None, not zeros: a term it would give is then left out,
# and an input reached only through it gets none, as PyTorch's undefined gradient)
convolution_backward.keeps_missing_grads = True


@composite("convolution_transpose", node="ConvolutionBackward0")
def convolution_transpose(ctx, input, weight, bias, geom):
    """Transposed convolution of ``input`` (N, C_in, *spatial) or (C_in, *spatial) by
    ``weight`` (C_in, C_out / groups, *kernel): the input gradient of the convolution by
    ``weight`` (geometry ``geom``) whose output gradient is ``input``; ``bias`` may be None."""
    spatial, batched = _layout(input, weight)
    ctx.geom, ctx.has_bias = geom, bias is not None
    ctx.save(x=input, w=weight)
    be = ctx.backend
    x = _as5d(input._data, spatial, batched)
    w = _as5d(weight._data, spatial, True)
    size = tuple(transposed_out(*a) for a in zip(x.shape[2:], w.shape[2:], geom.stride, geom.pad,
                                                 geom.pad_end, geom.dilation))
    out = conv_input_grad(be, x, w, (x.shape[0], w.shape[1] * geom.groups) + size, geom)
    if bias is not None:
        dt = D.from_numpy_dtype(x.dtype)
        out = be.run_elementwise(E.add.kernel(dt, be), [out, bias._data.reshape(-1, 1, 1, 1)],
                                 x.dtype)
    return _from5d(out, spatial, batched)


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
# Each forward below serves both ranks: the rank ``n`` is that of its ``geom``, its output
# size or its input's spatial ``size``. ``_register_pooling`` registers them per rank.


def _pool_input(ctx, input, n):
    """(backend, 5-D input array) of an n-d pooling forward; ``ctx.size`` the input's
    spatial size, which the backward needs."""
    ctx.size = tuple(input.shape[-n:])
    return ctx.backend, _as5d(input._data, n, input.ndim == n + 2)


def _pool_result(input, out, n):
    """5-D pooling result ``out`` with ``input``'s leading dims."""
    return out.reshape(tuple(input.shape[:-n]) + tuple(out.shape[5 - n:]))


def pool_out(n, k, s, p, d, ceil_mode):
    """PyTorch's pooling_output_shape: the number of windows along one dim."""
    out = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1  # the last window would start inside the right padding
    return out


def _pool_params(x, geom):
    """(output size, kernel arguments) of a pooling of 5-D ``x``: the geometry in 3-d form."""
    g = _as3d(geom)
    size = tuple(pool_out(*a, geom.ceil_mode) for a in zip(x.shape[2:], g.kernel, g.stride,
                                                            g.pad, g.dilation))
    return size, (*x.shape[2:], *g.kernel, *size, *g.stride, *g.pad)


def _max_pool_nd(ctx, input, geom):
    """(values, int64 indices into each input plane of prod(spatial) positions) of max
    pooling of (N, C, *spatial) or (C, *spatial)."""
    n = len(geom.kernel)
    ctx.geom = geom
    ctx.save(x=input)
    be, x = _pool_input(ctx, input, n)
    (N, C), (size, params) = x.shape[:2], _pool_params(x, geom)
    out, ob = _flat_out(be, (N, C) + size, x.dtype)
    idx, ib = _flat_out(be, (N, C) + size, D.int64.np)
    xb, xo, strides = be.flat_view(x)
    be.run_row_kernel(KC.max_pool_row, N * C * size[0] * size[1],
                      out.size * math.prod(geom.kernel),
                      (xb, xo, *strides, C, *params, *_as3d(geom).dilation, ob, ib), x.dtype)
    ctx.non_differentiable = (1,)
    ctx.save_outputs = {"indices": 1}
    return _pool_result(input, out, n), _pool_result(input, idx, n)


def _max_pool_backward_nd(ctx, grad, indices, size, source=None):
    """Max pooling's input gradient (of spatial size ``size``): ``grad`` added at the
    positions in ``indices``. ``source``: the pooled input, which PyTorch's backward op takes
    (its derivative by it is zeros: ``_source_zeros``); the kernel does not read it."""
    ctx.has_source = source is not None
    n = len(size)
    ctx.save(indices=indices)
    ctx.size = tuple(size)
    be = ctx.backend
    g = be.ascontiguousarray(grad._data)
    dx, db = _flat_out(be, tuple(grad.shape[:-n]) + tuple(size), g.dtype)
    i = be.ascontiguousarray(indices._data)
    be.run_row_kernel(KC.max_pool_backward_row, math.prod(grad.shape[:-n]), dx.size + g.size,
                      (be.flat_view(g)[0], be.flat_view(i)[0], math.prod(size),
                       math.prod(grad.shape[-n:]), db), g.dtype)
    return dx


def _gather_planes(be, h, idx, n):
    """The values of array ``h`` (.., *spatial) at ``idx`` (.., *out) of each plane."""
    h = be.ascontiguousarray(h)
    out, ob = _flat_out(be, tuple(idx.shape), h.dtype)
    i = be.ascontiguousarray(idx)
    be.run_row_kernel(KC.max_pool_gather_row, math.prod(h.shape[:-n]), out.size,
                      (be.flat_view(h)[0], be.flat_view(i)[0], math.prod(h.shape[-n:]),
                       math.prod(idx.shape[-n:]), ob), h.dtype)
    return out


def _max_pool_gather_nd(ctx, input, indices, n):
    """The values of ``input`` (.., *spatial) at ``indices`` (.., *out) of each n-d plane."""
    ctx.save(indices=indices)
    ctx.size = tuple(input.shape[-n:])
    return _gather_planes(ctx.backend, input._data, indices._data, n)


def _avg_pool_nd(ctx, input, geom):
    n = len(geom.kernel)
    ctx.geom = geom
    ctx.save(x=input)  # (PyTorch's node saves self: see _source_zeros)
    be, x = _pool_input(ctx, input, n)
    (N, C), (size, params) = x.shape[:2], _pool_params(x, geom)
    out, ob = _flat_out(be, (N, C) + size, x.dtype)
    xb, xo, strides = be.flat_view(x)
    be.run_row_kernel(KC.avg_pool_row, N * C * size[0] * size[1],
                      out.size * math.prod(geom.kernel),
                      (xb, xo, *strides, C, *params, int(geom.count_include_pad), geom.divisor,
                       ob), x.dtype)
    return _pool_result(input, out, n)


def _avg_pool_backward_nd(ctx, grad, size, geom, source=None):
    """Average pooling's input gradient (of spatial size ``size``); ``source`` as max
    pooling's."""
    ctx.has_source = source is not None
    n = len(size)
    ctx.geom = geom
    be = ctx.backend
    g = be.ascontiguousarray(grad._data)
    dx, db = _flat_out(be, tuple(grad.shape[:-n]) + tuple(size), g.dtype)
    g3 = _as3d(geom)
    out_size = (1,) * (3 - n) + tuple(grad.shape[-n:])
    be.run_row_kernel(KC.avg_pool_backward_row, math.prod(grad.shape[:-n]),
                      g.size * math.prod(geom.kernel),
                      (be.flat_view(g)[0], *(1,) * (3 - n), *size, *g3.kernel, *out_size,
                       *g3.stride, *g3.pad, int(geom.count_include_pad), geom.divisor, db),
                      g.dtype)
    return dx


def _adaptive_avg_pool_nd(ctx, input, output_size):
    n = len(output_size)
    ctx.out_size = tuple(output_size)
    ctx.save(x=input)
    be, x = _pool_input(ctx, input, n)
    N, C = x.shape[:2]
    size = (1,) * (3 - n) + tuple(output_size)
    out, ob = _flat_out(be, (N, C) + size, x.dtype)
    xb, xo, strides = be.flat_view(x)
    be.run_row_kernel(KC.adaptive_avg_pool_row, N * C * size[0] * size[1], x.size + out.size,
                      (xb, xo, *strides, C, *x.shape[2:], *size, ob), x.dtype)
    return _pool_result(input, out, n)


def _adaptive_avg_pool_backward_nd(ctx, grad, size, source=None):
    """Adaptive average pooling's input gradient (of spatial size ``size``); ``source`` as
    max pooling's."""
    ctx.has_source = source is not None
    n = len(size)
    ctx.out_size = tuple(grad.shape[-n:])
    be = ctx.backend
    g = be.ascontiguousarray(grad._data)
    dx, db = _flat_out(be, tuple(grad.shape[:-n]) + tuple(size), g.dtype)
    fill = (1,) * (3 - n)
    be.run_row_kernel(KC.adaptive_avg_pool_backward_row, math.prod(grad.shape[:-n]),
                      dx.size + g.size,
                      (be.flat_view(g)[0], *fill, *size, *fill, *ctx.out_size, db), g.dtype)
    return dx


def _adaptive_windows(n, m):
    """The positions each of ``m`` adaptive windows over ``n`` reads, (m, k): the window ``i``
    is [floor(i n / m), ceil((i + 1) n / m)), as PyTorch's; one narrower than the widest
    repeats its last position (a repeat is never the first maximum)."""
    i = np.arange(m)
    start, end = (i * n) // m, -((-(i + 1) * n) // m)
    k = int((end - start).max()) if m else 0
    return np.minimum(start[:, None] + np.arange(k), end[:, None] - 1)


def _adaptive_table(size, output_size):
    """Each adaptive window's positions as flat indices into a plane of ``size``, in the
    order PyTorch scans them: (*output_size, k)."""
    n = len(size)
    flat, k = np.zeros((1,) * (2 * n), np.int64), 1
    for j, (s, m) in enumerate(zip(size, output_size)):
        win = _adaptive_windows(s, m)
        shape = [1] * (2 * n)
        shape[j], shape[n + j] = win.shape
        flat, k = flat * s + win.reshape(shape), k * win.shape[1]
    return flat.reshape(*output_size, k)


def _adaptive_max_pool_nd(ctx, input, output_size):
    """(values, int64 indices into each input plane) of adaptive max pooling of
    (N, C, *spatial) or (C, *spatial) into ``output_size`` windows."""
    n = len(output_size)
    ctx.size = size = tuple(input.shape[-n:])
    ctx.save(x=input)
    lead, P = tuple(input.shape[:-n]), math.prod(size)
    table = _adaptive_table(size, output_size)
    out, k = tuple(output_size), table.shape[-1]
    with no_grad():
        x = Tensor._make(input._data).reshape(*lead, P)
        if math.prod(out) == 0:
            idx = Tensor._make(ctx.backend.zeros(lead + out, D.int64.np))
        else:
            positions = M.expand(Tensor._make(table).to(input.device), *lead, *out, k)
            win = I.gather(M.expand(x.reshape(*lead, *(1,) * n, P), *lead, *out, P), -1,
                           positions)
            pick = M.unsqueeze(R.argmax(win, -1), -1)
            idx = M.squeeze(I.gather(positions, -1, pick), -1)
    ctx.non_differentiable = (1,)
    ctx.save_outputs = {"indices": 1}
    return _gather_planes(ctx.backend, input._data, idx._data, n), idx._data


def _source_zeros(ctx):
    """The gradient of a pooling backward op by the pooled input it was given (none where it
    was not): zeros, PyTorch's ``zeros_like(self)``."""
    if not ctx.has_source:
        return ()
    return (Tensor._make(ctx.backend.zeros(ctx.input_shapes[-1], ctx.input_dtypes[-1].np)),)


class PoolOps(NamedTuple):
    """One rank's pooling ops."""

    max_pool: Composite  # (values, indices)
    max_pool_backward: Composite
    max_pool_gather: Composite  # (max_pool_backward's adjoint)
    avg_pool: Composite
    avg_pool_backward: Composite
    adaptive_avg_pool: Composite
    adaptive_avg_pool_backward: Composite
    adaptive_max_pool: Composite  # (values, indices)
    adaptive_max_pool_backward: Composite


def _nonempty_grad(grad, fn):
    """``grad`` of an adaptive pooling, refused as PyTorch's backward kernels refuse it when a
    dim past the first is empty (the forward allows an output size of 0)."""
    for d in range(1, grad.ndim):
        if grad.shape[d] == 0:
            raise RuntimeError(
                f"{fn}(): Expected grad_output to have non-zero size for non-batch dimensions, "
                f"but grad_output has sizes {list(grad.shape)} with dimension {d} being empty")
    return grad


def _register_pooling(n):
    """Register the n-d pooling ops under PyTorch's names and grad_fn nodes for rank ``n``;
    their derivatives are this rank's ops again, so gradients of any order keep its names."""
    nd, ND = f"{n}d", f"{n}D"
    ops = PoolOps(*(composite(name, node=node)(fn) for name, node, fn in (
        (f"max_pool{nd}_with_indices", f"MaxPool{ND}WithIndicesBackward0", _max_pool_nd),
        (f"max_pool{nd}_backward", f"MaxPool{ND}WithIndicesBackwardBackward0",
         _max_pool_backward_nd),
        (f"max_pool{nd}_gather", "GatherBackward0", _max_pool_gather_nd),
        (f"avg_pool{nd}", f"AvgPool{ND}Backward0", _avg_pool_nd),
        (f"avg_pool{nd}_backward", f"AvgPool{ND}BackwardBackward0", _avg_pool_backward_nd),
        (f"adaptive_avg_pool{nd}", f"AdaptiveAvgPool{ND}Backward0", _adaptive_avg_pool_nd),
        (f"adaptive_avg_pool{nd}_backward", f"AdaptiveAvgPool{ND}BackwardBackward0",
         _adaptive_avg_pool_backward_nd),
        (f"adaptive_max_pool{nd}", f"AdaptiveMaxPool{ND}Backward0", _adaptive_max_pool_nd),
        # (the same kernel as max pooling's backward, under its own node, as PyTorch)
        (f"adaptive_max_pool{nd}_backward", f"AdaptiveMaxPool{ND}BackwardBackward0",
         _max_pool_backward_nd))))
    # (the backward ops take the pooled input, as PyTorch's: saved, so an in-place change of
    # it before backward is the version error, and recorded, so a second derivative reaches
    # it as zeros)
    ops.max_pool.defvjp(
        lambda ctx, grads: ops.max_pool_backward(grads[0], ctx["indices"], ctx.size,
                                                 ctx["x"]))
    ops.max_pool_backward.defvjp(
        lambda ctx, grad: (ops.max_pool_gather(grad, ctx["indices"], n), None,
                           *_source_zeros(ctx)))
    ops.max_pool_gather.defvjp(
        lambda ctx, grad: (ops.max_pool_backward(grad, ctx["indices"], ctx.size), None))
    ops.avg_pool.defvjp(lambda ctx, grad: ops.avg_pool_backward(grad, ctx.size, ctx.geom,
                                                                ctx["x"]))
    # (the backward is linear in grad: its adjoint is the forward)
    ops.avg_pool_backward.defvjp(
        lambda ctx, grad: (ops.avg_pool(grad, ctx.geom), *_source_zeros(ctx)))
    ops.adaptive_avg_pool.defvjp(
        lambda ctx, grad: ops.adaptive_avg_pool_backward(
            _nonempty_grad(grad, f"adaptive_avg_pool{nd}_backward"), ctx.size, ctx["x"]))
    ops.adaptive_avg_pool_backward.defvjp(
        lambda ctx, grad: (ops.adaptive_avg_pool(grad, ctx.out_size), *_source_zeros(ctx)))
    ops.adaptive_max_pool.defvjp(
        lambda ctx, grads: ops.adaptive_max_pool_backward(
            _nonempty_grad(grads[0], f"adaptive_max_pool{nd}_backward"), ctx["indices"],
            ctx.size, ctx["x"]))
    ops.adaptive_max_pool_backward.defvjp(
        lambda ctx, grad: (ops.max_pool_gather(grad, ctx["indices"], n), None,
                           *_source_zeros(ctx)))
    return ops


POOLING = {n: _register_pooling(n) for n in (2, 3)}


# ---------------------------------------------------------------- unfold and fold (im2col)


def _blocks(shape, geom):
    """The number of sliding blocks (OH, OW) over the spatial ``shape`` (H, W)."""
    return tuple(_conv_out(n, k, s, p, p, d) for n, k, s, p, d in
                 zip(shape, geom.kernel, geom.stride, geom.pad, geom.dilation))


@composite("im2col", node="Im2ColBackward0")
def im2col(ctx, input, geom):
    """The sliding blocks of (N, C, H, W) or (C, H, W) as columns: (N, C * KH * KW, L), a row
    per channel and kernel tap, a column per block (the im2col convolutions run on)."""
    ctx.geom, ctx.size = geom, tuple(input.shape[-2:])
    x = _as5d(input._data, 2, input.ndim == 4)
    N, C = x.shape[:2]
    blocks = _blocks(ctx.size, geom)
    K, L = C * math.prod(geom.kernel), math.prod(blocks)
    cols = _im2col(ctx.backend, x, _as3d(geom), (1, *geom.kernel), (1, *blocks), K * L, L)
    return cols.reshape(N, K, L) if input.ndim == 4 else cols.reshape(K, L)


im2col.defvjp(lambda ctx, grad: col2im(grad, ctx.size, ctx.geom))


@composite("col2im", node="Col2ImBackward0")
def col2im(ctx, input, output_size, geom):
    """im2col's adjoint: columns (N, C * KH * KW, L) or (C * KH * KW, L) summed back into
    (N, C, H, W) or (C, H, W), ``output_size`` (H, W)."""
    be = ctx.backend
    ctx.geom = geom
    cols = be.ascontiguousarray(input._data)
    N, K, L = cols.shape if input.ndim == 3 else (1,) + tuple(cols.shape)
    C = K // math.prod(geom.kernel)
    dx = _col2im(be, cols, K * L, L, (N, C, 1, *output_size), _as3d(geom), (1, *geom.kernel),
                 (1, *_blocks(output_size, geom)))
    return _from5d(dx, 2, input.ndim == 3)


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
    if weight.shape[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {list(weight.shape)} instead")
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
    # (an input of no batch or no channels takes PyTorch's Empty backend, which neither
    # compares the input's dtype with the weight's nor needs a float kernel)
    empty = not transposed and not (shape[0] and shape[1])
    if input.dtype is not weight.dtype and not empty:
        cuda = "cuda." if input.device.type == "cuda" else ""
        raise RuntimeError(
            f"Input type (torch.{cuda}{_TYPE[input.dtype.name]}Tensor) and weight type "
            f"(torch.{cuda}{_TYPE[weight.dtype.name]}Tensor) should be the same or input should "
            "be a MKLDNN tensor and weight is a dense tensor")
    if bias is not None and bias.dtype is not input.dtype:
        names = {"float32": "float", "float64": "double"}
        a, b = (names.get(t.dtype.name, t.dtype.name) for t in (input, bias))
        raise RuntimeError(f"Input type ({a}) and bias type ({b}) should be the same")
    if not empty:
        _require_float(input, name)
    ks = tuple(weight.shape[2:])
    if transposed:
        _no_empty_planes(shape)  # (before the kernel's own shape checks)
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
    _no_empty_planes(shape)
    return _as3d(Geometry(ks, stride, pad, pad_end, dilation, groups))


def _no_empty_planes(shape):
    """PyTorch's refusal (when it picks a backend, after the shape checks) of an input with no
    elements but a batch and channels: only an empty batch or no channels have an answer. The
    shape is the batched one, a 1-d problem's as PyTorch's 2-d view of it."""
    if shape[0] and shape[1] and not math.prod(shape):
        shown = shape[:2] + [1] + shape[2:] if len(shape) == 3 else shape
        raise RuntimeError("Only zero batch or zero channel inputs are supported, but got input "
                           f"shape: {shown}")


def _transposed_geometry(sizes, ks, stride, pads, out_pads, dilation, groups):
    """A transposed convolution's checks (PyTorch's slow_conv_transpose2d_shape_check, in its
    2-d words also for 1-d, or slow_conv_transpose3d_shape_check) and ``Geometry``: the
    padding after each dim is ``padding - output_padding``, so that the convolution of the
    output has the input's size."""
    m = max(len(sizes), 2)  # (the dims PyTorch's words name: a 1-d input of height 1)
    fill = [(1, 0, 1, 1)] * (m - len(sizes))
    n_, op, st, dil = zip(*fill, *zip(sizes, out_pads, stride, dilation))
    if not all(o < s or o < d for o, s, d in zip(op, st, dil)):
        got = " ".join(f"{what}_{dim}: {v}" for what, vals in (
            ("output_padding", op), ("stride", st), ("dilation", dil))
            for dim, v in zip(("depth", "height", "width")[-m:], vals))
        raise RuntimeError(
            f"output padding must be smaller than either stride or dilation, but got {got}")
    geom = _as3d(Geometry(ks, stride, pads, tuple(p - o for p, o in zip(pads, out_pads)),
                          dilation, groups))
    out = [transposed_out(*a) for a in zip(n_, *(v[-m:] for v in (
        geom.kernel, geom.stride, geom.pad, geom.pad_end, geom.dilation)))]
    if min(out) < 1:
        raise RuntimeError(
            f"Given input size per channel: ({' x '.join(map(str, n_))}). Calculated output "
            f"size per channel: ({' x '.join(map(str, out))}). Output size is too small")
    return geom


def _convolution_same(input, weight, bias, geom):
    """``convolution`` whose padding may be asymmetric ('same' over an even span): PyTorch
    pads the input's ends by the difference first (constant_pad_nd: ConstantPadNdBackward0
    in the input's gradient), then convolves with the symmetric rest."""
    if geom.pad == geom.pad_end:
        return convolution(input, weight, bias, geom)
    n = input.ndim - 2
    extra = []
    for a, b in zip(reversed(geom.pad[3 - n:]), reversed(geom.pad_end[3 - n:])):
        extra += [0, b - a]  # (F.pad's order: the last dim first)
    padded = N.constant_pad_nd(input, tuple(extra), 0)
    return convolution(padded, weight, bias, geom._replace(pad_end=geom.pad))


def _batched(op, input, weight, *args):
    """``op`` on a batch of one for an unbatched ``input``, squeezed back (as PyTorch)."""
    if input.ndim == weight.ndim:
        return op(input, weight, *args)
    return M.squeeze(op(M.unsqueeze(input, 0), weight, *args), 0)


@public("function functional")
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-d convolution of ``input`` (N, C, D, H, W) or (C, D, H, W) by ``weight`` (O,
    C / groups, KD, KH, KW); ``padding`` an int, a triple, 'valid' or 'same'."""
    geom = _conv_geometry(input, weight, bias, stride, padding, dilation, groups, 3)
    return _batched(_convolution_same, input, weight, bias, geom)


@public("function functional")
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d convolution of ``input`` (N, C, H, W) or (C, H, W) by ``weight`` (O, C / groups,
    KH, KW); ``padding`` an int, a pair, 'valid' or 'same'."""
    geom = _conv_geometry(input, weight, bias, stride, padding, dilation, groups, 2)
    return _batched(_convolution_same, input, weight, bias, geom)


@public("function functional")
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d convolution of ``input`` (N, C, L) or (C, L) by ``weight`` (O, C / groups, K)."""
    geom = _conv_geometry(input, weight, bias, stride, padding, dilation, groups, 1)
    return _batched(_convolution_same, input, weight, bias, geom)


@public("function functional")
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """3-d transposed convolution of ``input`` (N, C_in, D, H, W) or (C_in, D, H, W) by
    ``weight`` (C_in, C_out / groups, KD, KH, KW): the input gradient of conv3d with these
    arguments."""
    geom = _conv_geometry(input, weight, bias, stride, padding, dilation, groups, 3,
                          output_padding)
    return _batched(convolution_transpose, input, weight, bias, geom)


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


# ---------------------------------------------------------------- the public pooling functions


def _spatial(v, n, fn, what, empty=None):
    """An int or a sequence of one or ``n`` ints as ``n`` ints (PyTorch's pooling arguments);
    ``empty`` stands for None or an empty sequence where given."""
    if empty is not None and (v is None or (isinstance(v, (tuple, list)) and not v)):
        return empty
    if isinstance(v, int):
        return (v,) * n
    if isinstance(v, (tuple, list)) and len(v) in (1, n):
        return tuple(v) * (n if len(v) == 1 else 1)
    must = {"stride": "must either be omitted, a single int,",
            "dilation": "must be either a single int,"}.get(what, "must either be a single int,")
    if fn == "avg_pool3d":  # (its words lack the "either")
        must = must.replace("either ", "")
    raise RuntimeError(f"{fn}: {what} {must} or a tuple of {('two', 'three')[n - 2]} ints")


def _check_rank(input, n):
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(
            f"non-empty {n + 1}D or {n + 2}D (batch mode) tensor expected for input")


# the name a 3-d pooling's errors give its function
_POOL3D_WHERE = {"max_pool3d": "max_pool3d_with_indices_out_cpu_template()",
                 "avg_pool3d": "avg_pool3d()"}


_POOL_CHECKED: dict = {}  # (shape, dtype, geometry, function) -> _check_pool's sizes


def _check_pool(input, geom, fn):
    """Check an n-d pooling call as PyTorch does (pooling_output_shape along each dim, then
    its pool2d_shape_check or pool3d_shape_check); the output's spatial size. A call that
    passed is kept (a CNN's step pools the same shapes again: the checks cost 4 us)."""
    key = (input.shape, input.dtype, geom, fn)
    sizes = _POOL_CHECKED.get(key)
    if sizes is None:
        sizes = cpu.remember(_POOL_CHECKED, key, _check_pool_args(input, geom, fn))
    return sizes


def _check_pool_args(input, geom, fn):
    """``_check_pool`` itself."""
    n = len(geom.kernel)
    _check_rank(input, n)
    sizes = []
    for s, k, st, p, d in zip(input.shape[-n:], geom.kernel, geom.stride, geom.pad,
                              geom.dilation):
        if st == 0:
            raise RuntimeError("stride should not be zero")
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > ((k - 1) * d + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
        sizes.append(pool_out(s, k, st, p, d, geom.ceil_mode) if k > 0 and st > 0 and d > 0
                     else 0)
    for what, prefix, values in (("kernel size", "k", geom.kernel), ("stride", "d", geom.stride),
                                 ("dilation", "dilation", geom.dilation)):
        if min(values) <= 0:
            got = " ".join(f"{prefix}{dim}: {v}" for dim, v in zip("THW"[-n:], values))
            raise RuntimeError(f"{what} should be greater than zero, but got {got}")
    if 0 in input.shape[-n - 1:]:
        if n == 2:
            raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                               f"size for input, but got:{list(input.shape)}")
        raise RuntimeError(
            f"{_POOL3D_WHERE[fn]}: Expected input's non-batch dimensions to have positive "
            f"length, but input has a shape of {list(input.shape)} and non-batch dimension 0 has "
            "length zero!")
    if n == 3:
        (t, h, w), (kt, kh, kw), (pt, ph, pw) = input.shape[-3:], geom.kernel, geom.pad
        if fn == "avg_pool3d" and (t < kt or h < kh or w < kw):
            raise RuntimeError(f"input image (T: {t} H: {h} W: {w}) smaller than kernel size "
                               f"(kT: {kt} kH: {kh} kW: {kw})")
        # (pool3d_shape_check's own bound, on the kernel without its dilation)
        if kt // 2 < pt or kw // 2 < pw or kh // 2 < ph:
            raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but "
                               f"got kT: {kt} kW: {kw} kH: {kh} padT: {pt} padW: {pw} padH: {ph}")
    if min(sizes) < 1:
        c = input.shape[-n - 1]
        raise RuntimeError(
            f"Given input size: ({'x'.join(map(str, (c, *input.shape[-n:])))}). Calculated "
            f"output size: ({'x'.join(map(str, (c, *sizes)))}). Output size is too small")
    _require_float(input, fn)
    return tuple(sizes)


def _max_pool(n, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    fn = f"max_pool{n}d"
    kernel = _spatial(kernel_size, n, fn, "kernel_size")
    geom = Geometry(kernel, _spatial(stride, n, fn, "stride", kernel),
                    _spatial(padding, n, fn, "padding"), (0,) * n,
                    _spatial(dilation, n, fn, "dilation"), ceil_mode=ceil_mode)
    _check_pool(input, geom, fn)
    out, indices = POOLING[n].max_pool(input, geom)
    return (out, indices) if return_indices else out


@public("function functional", name="max_pool3d")
def max_pool3d_(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                return_indices=False):
    """3-d max pooling of (N, C, D, H, W) or (C, D, H, W); with ``return_indices`` also the
    int64 index of each maximum in its D * H * W volume."""
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


@public("function functional", name="max_pool2d")
def max_pool2d_(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                return_indices=False):
    """2-d max pooling of (N, C, H, W) or (C, H, W); with ``return_indices`` also the int64
    index of each maximum in its H * W plane."""
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def _avg_pool(n, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override):
    fn = f"avg_pool{n}d"
    kernel = _spatial(kernel_size, n, fn, "kernel_size")
    stride = _spatial(stride, n, fn, "stride", kernel)
    padding = _spatial(padding, n, fn, "padding")
    if n == 3:  # (avg_pool3d checks the input's rank before the divisor, avg_pool2d after)
        _check_rank(input, n)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    geom = Geometry(kernel, stride, padding, (0,) * n, (1,) * n, ceil_mode=ceil_mode,
                    count_include_pad=count_include_pad, divisor=divisor_override or 0)
    _check_pool(input, geom, fn)
    return POOLING[n].avg_pool(input, geom)


@public("functional", name="avg_pool3d")
def avg_pool3d_(input, kernel_size, stride=None, padding=0, ceil_mode=False,
                count_include_pad=True, divisor_override=None):
    """3-d average pooling of (N, C, D, H, W) or (C, D, H, W)."""
    return _avg_pool(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


@public("functional", name="avg_pool2d")
def avg_pool2d_(input, kernel_size, stride=None, padding=0, ceil_mode=False,
                count_include_pad=True, divisor_override=None):
    """2-d average pooling of (N, C, H, W) or (C, H, W)."""
    return _avg_pool(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


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
    elif input.ndim not in (2, 3):  # (max_pool1d_with_indices's words, before the 2-d ones)
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor "
                           "for argument #1 'self' (while checking arguments for max_pool1d)")
    args = [(1, _one(v)) if v is not None else v for v in (kernel_size, stride)]
    if isinstance(stride, (tuple, list)) and not stride:
        args[1] = None
    out = max_pool2d_(M.unsqueeze(input, -2), args[0], args[1], (0, _one(padding)),
                      (1, _one(dilation)), ceil_mode, True)
    values, indices = M.squeeze(out[0], -2), M.squeeze(out[1], -2)
    if return_indices:
        return values, indices
    if not (input.requires_grad and is_grad_enabled()):
        # (PyTorch pools with its own kernel into a fresh tensor when no gradient is needed,
        # through max_pool1d_with_indices's squeezed view otherwise)
        return M.clone(values)
    return values


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


def _adaptive_size(input, output_size, n, fn):
    """``output_size`` of an n-d adaptive pooling as ``n`` ints, None keeping the input's size;
    the call checked as PyTorch's adaptive poolings check it, in the words of ``fn``."""
    avg = fn.startswith("adaptive_avg")
    if not isinstance(output_size, int) and input.ndim <= len(output_size):
        # (nn.functional's _list_with_default, before the op's own checks)
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{fn}(): Expected {n + 1}D or {n + 2}D tensor, but got"
                           f"{'' if avg else ':'} {list(input.shape)}")
    size = (output_size,) * n if isinstance(output_size, int) else tuple(output_size)
    if len(size) != n:
        raise RuntimeError(f"{fn}: output_size must be {n}" if avg else
                           f"{fn}(): internal error: output_size.size() must be {n}")
    size = tuple(m if s is None else s for s, m in zip(size, input.shape[-n:]))
    # (PyTorch's 1-d and 2-d average pools check only the pooled dims; its max pools and 3-d
    # average pool every dim but the first, the channels of an unbatched input included)
    first = input.ndim - n if avg and n < 3 else 1
    empty = [d for d in range(first, input.ndim) if input.shape[d] == 0]
    if avg and min(size) < 0:
        # (PyTorch's words: "{a, b}" for 2-d, "{a, b,c}" for 3-d)
        shown = ", ".join(map(str, size[:2])) + "".join(f",{s}" for s in size[2:])
        raise RuntimeError(f"{fn}: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{shown}}}")
    # (an average to one element per plane is PyTorch's mean, which checks nothing)
    if empty and not (avg and all(s == 1 for s in size)):
        raise RuntimeError(
            f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but input "
            f"has sizes {list(input.shape)} with dimension {empty[0]} being empty")
    if min(size) < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: "
                           f"{[*input.shape[:-n], *size]}")
    _require_float(input, fn)
    return size


def _adaptive_max_pool(n, input, output_size, return_indices):
    size = _adaptive_size(input, output_size, n, f"adaptive_max_pool{n}d")
    out, indices = POOLING[n].adaptive_max_pool(input, size)
    return (out, indices) if return_indices else out


@public("functional", name="adaptive_max_pool3d")
def adaptive_max_pool3d_(input, output_size, return_indices=False):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) into ``output_size`` windows per volume
    (an int or a triple, None keeping the input's size); with ``return_indices`` also the
    int64 index of each maximum in its D * H * W volume."""
    return _adaptive_max_pool(3, input, output_size, return_indices)


@public("functional", name="adaptive_max_pool2d")
def adaptive_max_pool2d_(input, output_size, return_indices=False):
    """Max pooling of (N, C, H, W) or (C, H, W) into ``output_size`` windows per plane (an
    int or a pair, None keeping the input's size); with ``return_indices`` also the int64
    index of each maximum in its H * W plane."""
    return _adaptive_max_pool(2, input, output_size, return_indices)


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


@public("functional", name="adaptive_avg_pool3d")
def adaptive_avg_pool3d_(input, output_size):
    """Average pooling of (N, C, D, H, W) or (C, D, H, W) into ``output_size`` windows per
    volume (an int or a triple, None keeping the input's size)."""
    size = _adaptive_size(input, output_size, 3, "adaptive_avg_pool3d")
    if size == (1, 1, 1):
        return _global_avg_pool(input, 3)
    return POOLING[3].adaptive_avg_pool(input, size)


@public("functional", name="adaptive_avg_pool2d")
def adaptive_avg_pool2d_(input, output_size):
    """Average pooling of (N, C, H, W) or (C, H, W) into ``output_size`` windows per plane
    (an int or a pair, None keeping the input's size)."""
    size = _adaptive_size(input, output_size, 2, "adaptive_avg_pool2d")
    if size == (1, 1):
        return _global_avg_pool(input, 2)
    return POOLING[2].adaptive_avg_pool(input, size)


def _global_avg_pool(input, n):
    """Adaptive average pooling to one element per plane (or volume): PyTorch's shortcut, a
    mean over the last ``n`` dims (so its node is MeanBackward1), its channels-last strides
    set by as_strided_ (AsStridedBackward1) for a channels-last input."""
    out = R.mean(input, tuple(range(-1, -n - 1, -1)), keepdim=True)
    if input.ndim == n + 2 and MF.suggest(tuple(input.shape), input.stride()) is not \
            MF.contiguous_format:
        c = input.shape[1]
        out.as_strided_(out.shape, (c, 1) + (c,) * n)
    return out
