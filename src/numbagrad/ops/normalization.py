"""Normalisation layers' ops with PyTorch's nodes: ``layer_norm`` (NativeLayerNormBackward0),
``batch_norm`` (NativeBatchNormBackward0), ``group_norm`` (NativeGroupNormBackward0);
``weight_norm_interface`` (WeightNormInterfaceBackward0): ``v`` scaled to norm ``g`` along a dim.

Each normalises ``x`` to ``xhat = (x - mean) * rstd`` over some dims and applies an optional
per-feature ``weight`` and ``bias``. A float CPU input (and layer norm's on CUDA) runs fused
kernels (backend/kernels_norm.py) that keep ``mean`` and ``rstd``, whose backward kernels
recompute ``xhat``; other inputs run composed ops with grad mode off and keep ``xhat`` and
``rstd``. A backward that is itself recorded (``create_graph``) recomputes the statistics
from the saved input with recorded ops, so second derivatives see how they depend on ``x``."""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from .._tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..backend import cpu
from ..backend import kernels_norm as KN
from . import elementwise as E
from . import reduce as R
from .forward import through_vjp
from .kernels import row_buffer
from .registry import composite, recorded_on


def _standardize(x, dims, eps, moments=None):
    """``(xhat, rstd)`` of ``x`` over ``dims`` (biased variance, as every norm layer uses);
    the mean and variance go into the list ``moments`` if one is given."""
    mean = R.mean(x, dims, True)
    var = R.var(x, dims, 0, True)
    if moments is not None:
        moments += [mean, var]
    rstd = E.rsqrt(E.add(var, eps))
    return E.mul(E.sub(x, mean), rstd), rstd


def _save_params(ctx, weight):
    """Save the weight (and a layer norm's bias, ``ctx.bias_input``), as PyTorch's nodes do:
    an in-place change of one before backward is the version error (``_check_params``)."""
    ctx.save(weight=weight, bias=getattr(ctx, "bias_input", None))


def _check_params(ctx):
    """The version check of what ``_save_params`` saved."""
    for name in ("weight", "bias"):
        if name in ctx.saved:
            ctx[name]  # noqa: B018


def _affine(xhat, weight, bias, shape):
    """``xhat * weight + bias``, the parameters viewed as ``shape`` to broadcast."""
    y = xhat if weight is None else E.mul(xhat, weight.reshape(shape))
    return y if bias is None else E.add(y, bias.reshape(shape))


def _forward(ctx, x, weight, bias, stat_dims, eps, param_shape, param_dims, view=None,
             moments=None):
    """The shared forward: standardise ``x`` (viewed as ``view`` for the statistics, if given)
    over ``stat_dims``, then the affine map whose parameters broadcast as ``param_shape`` and
    whose gradients sum over ``param_dims``. ``moments``: a list for the statistics' mean and
    variance (``_standardize``)."""
    ctx.save(x=x)
    # (``stat_view``, not ``view``: a composite's ctx.view marks its outputs as views of its
    # input, which a group norm's output is not)
    ctx.stat_dims, ctx.eps, ctx.stat_view = stat_dims, eps, view
    ctx.param_shape, ctx.param_dims = param_shape, param_dims
    ctx.weight, ctx.has_weight, ctx.has_bias = weight, weight is not None, bias is not None
    _save_params(ctx, weight)
    with no_grad():
        xv = x if view is None else x.reshape(view)
        xhat, ctx.rstd = _standardize(xv, stat_dims, eps, moments)
        ctx.xhat = xhat = xhat if view is None else xhat.reshape(x.shape)
        return _affine(xhat, weight, bias, param_shape)._data


def _backward(ctx, grad, xhat=None, rstd=None):
    """Gradients of (x, weight, bias) for the inputs given. With ``xhat`` and ``rstd`` given
    (batch norm in eval mode), they are constants; else they are the batch's statistics."""
    w = ctx.weight
    batch_stats = xhat is None
    if batch_stats:
        if is_grad_enabled():  # a recorded backward: the statistics as functions of x
            x = ctx["x"]
            xv = x if ctx.stat_view is None else x.reshape(ctx.stat_view)
            xhat, rstd = _standardize(xv, ctx.stat_dims, ctx.eps)
            if ctx.stat_view is not None:
                xhat = xhat.reshape(x.shape)
                if not x.requires_grad and w is not None and w.requires_grad:
                    # (PyTorch's group norm backward is composed of ops on the forward's mean
                    # and rstd, outputs of the node that takes the weight: they require grad
                    # with it, so the weight's gradient is recorded as the ops that make it,
                    # sum(grad * xhat) viewed as the weight, not as one node of its own)
                    xhat = recorded_on(xhat, w)
        else:
            xhat, rstd = ctx.xhat, ctx.rstd
    if batch_stats:
        gxhat = grad if w is None else E.mul(grad, w.reshape(ctx.param_shape))
        view, dims = ctx.stat_view, ctx.stat_dims
        g = gxhat if view is None else gxhat.reshape(view)
        h = xhat if view is None else xhat.reshape(view)
        # d/dx of (x - mean) * rstd, applied to g: rstd (g - mean(g) - xhat mean(g xhat))
        gx = E.mul(E.sub(E.sub(g, R.mean(g, dims, True)),
                         E.mul(h, R.mean(E.mul(g, h), dims, True))), rstd)
        gx = gx if view is None else gx.reshape(ctx.input_shapes[0])
    else:
        gx = E.mul(grad if w is None else E.mul(grad, w.reshape(ctx.param_shape)), rstd)
    grads = [gx]
    if ctx.has_weight:
        grads.append(_summed(E.mul(grad, xhat), ctx.param_dims).reshape(ctx.input_shapes[1]))
    if ctx.has_bias:
        grads.append(_summed(grad, ctx.param_dims).reshape(ctx.input_shapes[-1]))
    if is_grad_enabled():
        grads = _as_one_node(ctx, grads)
    return tuple(grads)


def _summed(t, dims):
    """``t`` summed over ``dims``; none (a layer norm over every dim) sums nothing, where a
    sum over ``dim=()`` would sum everything."""
    return R.sum(t, dims) if dims else t


def _as_one_node(ctx, grads):
    """The recorded gradients as outputs of PyTorch's double-backward node, which takes the
    input and the weight (and a layer norm's bias, ``ctx.bias_input``): each requires grad
    when one of those does, even where it does not
    depend on them (the bias's ``sum(grad)``; a group norm's is composed, so only its input's
    and weight's), with no derivative by them (``recorded_on``)."""
    sources = [t for t in (ctx["x"], ctx.weight, getattr(ctx, "bias_input", None))
               if t is not None and t.requires_grad]
    if not sources:
        return grads
    # (a group norm: the one whose statistics are taken over a view of the input)
    n = len(grads) - (ctx.has_bias and ctx.stat_view is not None)
    return [recorded_on(g, *sources) if k < n and not g.requires_grad else g
            for k, g in enumerate(grads)]


@composite("layer_norm", node="NativeLayerNormBackward0")
def layer_norm(ctx, x, normalized_ndim, weight, bias, eps):
    """Standardise over the last ``normalized_ndim`` dims (shapes checked by the caller)."""
    dims = tuple(range(x.ndim - normalized_ndim, x.ndim))
    outer = tuple(range(x.ndim - normalized_ndim))
    shape = x.shape[x.ndim - normalized_ndim:]
    n = 1
    for d in shape:
        n *= d
    dt = x._data.dtype
    # (PyTorch's native_layer_norm_backward takes the bias too: a recorded backward's
    # gradients require grad when it does, batch and group norm's take no bias)
    ctx.bias_input = bias
    if n and (dt is _F32 or dt is _F64):
        return _layer_norm_rows(ctx, x, weight, bias, eps, n, dims, shape, outer)
    return _forward(ctx, x, weight, bias, dims, eps, shape, outer)


_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def _layer_norm_rows(ctx, x, weight, bias, eps, n, dims, shape, outer):
    """``_forward`` of layer norm by one row kernel over the rows of ``n`` values: the same
    ctx but for ``xhat`` (the backward recomputes it from ``mean`` and ``rstd``, kept per
    row), and ``rows`` for the backward's kernels."""
    be = ctx.backend
    ctx.save(x=x)
    ctx.stat_dims, ctx.eps, ctx.stat_view = dims, eps, None
    ctx.param_shape, ctx.param_dims = shape, outer
    ctx.weight, ctx.has_weight, ctx.has_bias = weight, weight is not None, bias is not None
    _save_params(ctx, weight)
    xa = be.ascontiguousarray(x._data)
    dt = xa.dtype
    rows = xa.size // n
    ctx.rows = rows, n
    out, mean, rstd = be.empty(xa.shape, dt), be.empty((rows,), dt), be.empty((rows,), dt)
    w = _param_buffer(be, weight, dt)
    b = _param_buffer(be, bias, dt)
    if be is cpu:  # (a contiguous array's flat buffer is itself, from element 0)
        xb, xo, bufs = xa.reshape(-1), 0, (out.reshape(-1), mean, rstd)
    else:
        xb, xo, _ = be.flat_view(xa)
        bufs = tuple(row_buffer(be, a) for a in (out, mean, rstd))
    be.run_row_kernel(KN.layer_norm_row, rows, xa.size, (
        n, xb, xo, w, weight is not None, b, bias is not None, eps, *bufs), dt)
    ctx.mean, ctx.rstd = mean, rstd
    return out


def _param_buffer(be, p, dt):
    """Parameter ``p`` (or None) as a flat contiguous buffer of ``dt`` for a kernel (a
    one-element placeholder for None)."""
    if p is None:
        return be.empty((1,), dt)
    a = p._data
    if be is cpu and a.dtype is dt and a.flags.c_contiguous:
        return a.reshape(-1)
    return row_buffer(be, be.ascontiguousarray(a.astype(dt, copy=False)))


@layer_norm.defvjp
def layer_norm_vjp(ctx, grad):
    _check_params(ctx)
    if getattr(ctx, "rows", None) is None or is_grad_enabled():
        return _backward(ctx, grad)  # (a recorded backward recomputes the statistics)
    be = ctx.backend
    x = ctx["x"]
    xa = be.ascontiguousarray(x._data)
    dt = xa.dtype
    rows, n = ctx.rows
    g = be.ascontiguousarray(grad._data.astype(dt, copy=False))
    # (the weight as it is now, as the general path reads it)
    w = _param_buffer(be, ctx.weight, dt)
    sums = ctx.has_weight or ctx.has_bias
    if be is cpu:
        gx, gw, gb = np.empty(xa.shape, dt), np.empty(n, dt), np.empty(n, dt)
        cpu.get_reduce_kernel(KN.layer_norm_backward, dt)(
            g.reshape(rows, n), xa.reshape(rows, n), ctx.mean, ctx.rstd, w, ctx.has_weight,
            sums, gx.reshape(rows, n), gw, gb)
        return _kernel_grads(ctx, gx, gw, gb)
    gb_, go, _ = be.flat_view(g)
    xb, xo, _ = be.flat_view(xa)
    gx = be.empty(xa.shape, dt)
    be.run_row_kernel(KN.layer_norm_backward_row, rows, xa.size, (
        n, gb_, go, xb, xo, w, ctx.has_weight, row_buffer(be, ctx.mean),
        row_buffer(be, ctx.rstd), row_buffer(be, gx)), dt)
    grads = [Tensor._make(gx)]
    if ctx.has_weight:
        stat_shape = xa.shape[:len(ctx.param_dims)] + (1,) * len(ctx.stat_dims)
        xhat = E.mul(E.sub(x, Tensor._make(ctx.mean.reshape(stat_shape))),
                     Tensor._make(ctx.rstd.reshape(stat_shape)))
        grads.append(_summed(E.mul(grad, xhat), ctx.param_dims).reshape(ctx.input_shapes[1]))
    if ctx.has_bias:
        grads.append(_summed(grad, ctx.param_dims).reshape(ctx.input_shapes[-1]))
    return tuple(grads)


def _kernel_grads(ctx, gx, gw, gb):
    """The input's gradient ``gx`` and, where the op has them, the weight's ``gw`` and the
    bias's ``gb`` (arrays a backward kernel made) as the Tensors the node returns."""
    grads = [Tensor._make(gx)]
    if ctx.has_weight:
        grads.append(Tensor._make(gw.reshape(ctx.input_shapes[1])))
    if ctx.has_bias:
        grads.append(Tensor._make(gb.reshape(ctx.input_shapes[-1])))
    return tuple(grads)


def _channel_shape(x):
    return (1, x.shape[1], *([1] * (x.ndim - 2)))


@composite("batch_norm", node="NativeBatchNormBackward0")
def batch_norm(ctx, x, weight, bias, running_mean, running_var, training, momentum, eps):
    """Standardise each channel (dim 1) over the batch and the other dims with the batch's
    statistics (``training``; the running ones, if given, move towards them by ``momentum``),
    or with the running statistics. ``running_*``: tensors outside the graph, or None."""
    dims = (0, *range(2, x.ndim))
    shape = _channel_shape(x)
    ctx.training = training
    ctx.running = running_mean is not None
    if (ctx.backend is cpu and (running_mean is None) == (running_var is None)
            and _cpu_kernel_ok(x, weight, bias, running_mean, running_var)):
        out = _batch_norm_cpu(ctx, x, weight, bias, running_mean, running_var, training,
                              momentum, eps, dims, shape)
        _save_running(ctx, running_mean, running_var)
        return out
    ctx.fused = False
    if training:
        moments = []  # (the batch's mean and biased variance, for the running statistics)
        out = _forward(ctx, x, weight, bias, dims, eps, shape, dims, moments=moments)
        if running_mean is not None:
            with no_grad():
                n = x.numel() // x.shape[1]
                mean, var = (m.reshape(running_mean.shape) for m in moments)
                var = E.mul(var, n / max(n - 1, 1))  # (unbiased, as PyTorch's)
                running_mean.mul_(1 - momentum).add_(E.mul(mean, momentum))
                running_var.mul_(1 - momentum).add_(E.mul(var, momentum))
        _save_running(ctx, running_mean, running_var)
        return out
    ctx.weight, ctx.has_weight, ctx.has_bias = weight, weight is not None, bias is not None
    _save_params(ctx, weight)
    ctx.param_shape, ctx.param_dims = shape, dims
    _save_running(ctx, running_mean, running_var)
    with no_grad():
        ctx.rstd = rstd = E.rsqrt(E.add(running_var, eps)).reshape(shape)
        ctx.xhat = xhat = E.mul(E.sub(x, running_mean.reshape(shape)), rstd)
        return _affine(xhat, weight, bias, shape)._data


def _save_running(ctx, running_mean, running_var):
    """Save the running statistics, as PyTorch's node does (after this op's own update of
    them): an in-place change of one before backward is the version error."""
    if running_mean is not None:
        ctx.save(running_mean=running_mean, running_var=running_var)


def _batch_norm_cpu(ctx, x, weight, bias, running_mean, running_var, training, momentum, eps,
                    dims, shape):
    """batch_norm's forward by one kernel (``kernels_norm.batch_norm_forward``); ctx keeps the
    per-channel ``mean`` and ``rstd`` (``fused``), and what ``_backward`` reads for a recorded
    backward."""
    xa = x._data
    dt = xa.dtype
    stats = () if running_mean is None else (running_mean._data, running_var._data)
    ctx.save(x=x)
    ctx.stat_dims, ctx.eps, ctx.stat_view = dims, eps, None
    ctx.param_shape, ctx.param_dims = shape, dims
    ctx.weight, ctx.has_weight, ctx.has_bias = weight, weight is not None, bias is not None
    _save_params(ctx, weight)
    ctx.fused = True
    c = xa.shape[1]
    x3 = np.ascontiguousarray(xa).reshape(xa.shape[0], c, -1)
    out = cpu.empty(xa.shape, dt)
    ctx.mean, ctx.rstd = np.empty(c, dt), np.empty(c, dt)
    update = training and running_mean is not None
    # The running statistics are written in place, by the kernel where they are contiguous,
    # without a version bump (PyTorch's kernel leaves their version counters alone); an
    # inference tensor's goes through copy_, which raises as an in-place op does.
    plain = update and all(a.flags.writeable for a in stats) and not (
        running_mean._inference or running_var._inference)
    direct = plain and all(a.flags.c_contiguous for a in stats)
    if running_mean is None:
        rm = rv = ctx.mean
    elif direct:
        rm, rv = stats[0].reshape(-1), stats[1].reshape(-1)
    else:
        rm, rv = (np.array(a, order="C").reshape(-1) for a in stats)
    cpu.get_reduce_kernel(KN.batch_norm_forward, dt)(
        x3, _param_array(weight, dt), weight is not None, _param_array(bias, dt),
        bias is not None, eps, training, momentum, update, rm, rv,
        out.reshape(x3.shape), ctx.mean, ctx.rstd)
    if plain and not direct:
        np.copyto(stats[0], rm.reshape(stats[0].shape))
        np.copyto(stats[1], rv.reshape(stats[1].shape))
    elif update and not plain:
        with no_grad():
            running_mean.copy_(Tensor._make(rm.reshape(stats[0].shape)))
            running_var.copy_(Tensor._make(rv.reshape(stats[1].shape)))
    return out


def _param_array(p, dt):
    """A CPU parameter (or None) as the contiguous 1-D array a kernel takes."""
    if p is None:
        return np.empty(1, dt)
    return np.ascontiguousarray(p._data).reshape(-1)


@batch_norm.defvjp
def batch_norm_vjp(ctx, grad):
    _check_params(ctx)
    if ctx.running:  # (the version check of the saved running statistics)
        ctx["running_mean"], ctx["running_var"]  # noqa: B018
    if is_grad_enabled() and not ctx.training:
        return _eval_recorded_backward(ctx, grad)
    if not ctx.fused:
        if ctx.training:
            return _backward(ctx, grad)
        return _backward(ctx, grad, ctx.xhat, ctx.rstd)
    if is_grad_enabled():  # a recorded backward: composed of ops, so it is differentiable
        return _backward(ctx, grad)
    xa = ctx["x"]._data
    dt = xa.dtype
    c = xa.shape[1]
    x3 = np.ascontiguousarray(xa).reshape(xa.shape[0], c, -1)
    g3 = np.ascontiguousarray(grad._data, dt).reshape(x3.shape)
    gx, gw, gb = cpu.empty(xa.shape, dt), np.empty(c, dt), np.empty(c, dt)
    # (the weight as it is now, as the composed backward reads it)
    cpu.get_reduce_kernel(KN.batch_norm_backward, dt)(
        g3, x3, ctx.mean, ctx.rstd, _param_array(ctx.weight, dt), ctx.has_weight, ctx.training,
        ctx.training or ctx.has_weight or ctx.has_bias, gx.reshape(x3.shape), gw, gb)
    return _kernel_grads(ctx, gx, gw, gb)


def _eval_recorded_backward(ctx, grad):
    """batch_norm's backward in eval mode, recorded (``create_graph``): the running statistics
    are constants, but ``xhat`` is still a function of ``x`` (the weight's gradient
    ``sum(grad * xhat)`` has a derivative by ``x``), and the input's gradient is recorded as a
    function of ``x`` even where it does not vary with it (no weight: ``grad * rstd``), as
    PyTorch's double-backward node takes the input whatever the mode (its derivative by ``x``
    there is undefined: None)."""
    x = ctx["x"]
    with no_grad():
        if ctx.fused:
            rstd = Tensor._make(ctx.rstd.reshape(ctx.param_shape))
            mean = Tensor._make(ctx.mean.reshape(ctx.param_shape))
        else:
            rstd = ctx.rstd
            mean = E.sub(x, E.div(ctx.xhat, rstd))  # (x - xhat / rstd: the running mean)
    xhat = E.mul(E.sub(x, mean), rstd)
    grads = _backward(ctx, grad, xhat, rstd)
    if not ctx.has_weight and x.requires_grad:
        grads = (recorded_on(grads[0], x), *grads[1:])
    return grads


def _without_running_update(args, kwargs):
    """batch_norm's arguments for a second run that must not move the running statistics
    again (while training they are not read, only updated)."""
    if kwargs.get("training"):
        kwargs = dict(kwargs, running_mean=None, running_var=None)
    return args, kwargs


# (forward mode: the derived rule, run without the side effect)
batch_norm.defjvp(through_vjp(batch_norm, _without_running_update))


@composite("group_norm", node="NativeGroupNormBackward0")
def group_norm(ctx, x, num_groups, weight, bias, eps):
    """Standardise each sample's channels in ``num_groups`` groups (checked by the caller)."""
    # (the group's size spelled out: -1 cannot be inferred from a batch of 0 samples)
    view = (x.shape[0], num_groups, x.numel() // max(x.shape[0] * num_groups, 1))
    shape, dims = _channel_shape(x), (0, *range(2, x.ndim))
    if ctx.backend is cpu and _cpu_kernel_ok(x, weight, bias):
        return _group_norm_cpu(ctx, x, num_groups, weight, bias, eps, view, shape, dims)
    ctx.fused = False
    return _forward(ctx, x, weight, bias, (2,), eps, shape, dims, view)


def _cpu_kernel_ok(x, *params):
    """Whether CPU tensor ``x`` and ``params`` (each a tensor or None) suit a norm kernel:
    one dtype, float32 or float64, and ``x`` not empty."""
    xa = x._data
    dt = xa.dtype
    if type(xa) is not np.ndarray or not (dt is _F32 or dt is _F64) or not xa.size:
        return False
    return all(p is None or type(p._data) is np.ndarray and p._data.dtype is dt
               for p in params)


def _group_norm_cpu(ctx, x, num_groups, weight, bias, eps, view, shape, dims):
    """group_norm's forward by one kernel (``kernels_norm.group_norm_forward``); ctx keeps
    each group's ``mean`` and ``rstd`` (``fused``), and what ``_backward`` reads for a recorded
    backward."""
    ctx.save(x=x)
    ctx.stat_dims, ctx.eps, ctx.stat_view = (2,), eps, view
    ctx.param_shape, ctx.param_dims = shape, dims
    ctx.weight, ctx.has_weight, ctx.has_bias = weight, weight is not None, bias is not None
    _save_params(ctx, weight)
    ctx.fused = True
    xa = x._data
    dt = xa.dtype
    n = xa.shape[0]
    x4 = np.ascontiguousarray(xa).reshape(n, num_groups, xa.shape[1] // num_groups, -1)
    out = cpu.empty(xa.shape, dt)
    ctx.mean, ctx.rstd = np.empty(n * num_groups, dt), np.empty(n * num_groups, dt)
    cpu.get_reduce_kernel(KN.group_norm_forward, dt)(
        x4, _param_array(weight, dt), weight is not None, _param_array(bias, dt),
        bias is not None, eps, out.reshape(x4.shape), ctx.mean, ctx.rstd)
    return out


@group_norm.defvjp
def group_norm_vjp(ctx, grad):
    _check_params(ctx)
    if not ctx.fused or is_grad_enabled():
        return _backward(ctx, grad)  # (a recorded backward recomputes the statistics)
    xa = ctx["x"]._data
    dt = xa.dtype
    n, groups = xa.shape[0], ctx.stat_view[1]
    x4 = np.ascontiguousarray(xa).reshape(n, groups, xa.shape[1] // groups, -1)
    g4 = np.ascontiguousarray(grad._data, dt).reshape(x4.shape)
    gx, gw, gb = cpu.empty(xa.shape, dt), np.empty(xa.shape[1], dt), np.empty(xa.shape[1], dt)
    # (the weight as it is now, as the composed backward reads it)
    cpu.get_reduce_kernel(KN.group_norm_backward, dt)(
        g4, x4, ctx.mean, ctx.rstd, _param_array(ctx.weight, dt), ctx.has_weight,
        gx.reshape(x4.shape), gw, gb)
    return _kernel_grads(ctx, gx, gw, gb)


@composite("constant_pad_nd", node="ConstantPadNdBackward0")
def constant_pad_nd(ctx, x, pad, value=0):
    """``x`` with ``pad`` (PyTorch's order: (before, after) pairs from the last dim back)
    elements of ``value`` on each side; a negative amount crops."""
    ctx.pad = pad
    shape = list(x.shape)
    src, dst = [slice(None)] * x.ndim, [slice(None)] * x.ndim
    for i in range(len(pad) // 2):
        d = x.ndim - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        # (PyTorch crops by narrow() first, the start then the end: a crop past what is left
        # is narrow's error)
        left = shape[d] + min(before, 0)
        if left < 0 or left + min(after, 0) < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
        new = shape[d] + before + after
        if new < 0:
            raise RuntimeError(
                f"The input size {shape[d]}, plus negative padding {before} and {after} resulted "
                f"in a negative output size, which is invalid. Check dimension {d} of your input.")
        src[d] = slice(max(-before, 0), shape[d] - max(-after, 0))
        dst[d] = slice(max(before, 0), new - max(after, 0))
        shape[d] = new
    # (the value is PyTorch's Scalar, converted to x's dtype with its check)
    out = ctx.backend.full(tuple(shape), D.checked_number(value, x.dtype), x._data.dtype)
    out[tuple(dst)] = x._data[tuple(src)]
    return out


@constant_pad_nd.defvjp
def constant_pad_nd_vjp(ctx, grad):
    # the padding undone: the same op with the amounts negated (it crops what was added)
    return constant_pad_nd(grad, tuple(-p for p in ctx.pad), 0)


# ---------------------------------------------------------------- resampling (pad, interpolate)


@composite("resample", node="IndexBackward0")
def resample(ctx, x, steps, names, keep=False, source=None):
    """``x`` with a linear map applied along each of some dims, in order: ``steps`` holds
    ``(dim, kind, a, size)``: "take" reads the positions ``a`` (ints) along ``dim``; "add" is
    its adjoint, adding the rows of ``x`` into ``size`` rows at the positions ``a`` (repeated
    ones add up); "mat" applies the matrix ``a`` (out, in). F.pad's reflect, replicate and
    circular modes and F.interpolate's are such maps.

    ``names``: (this node's name, its backward's), PyTorch's (ReflectionPad2DBackward0 and
    ReflectionPad2DBackwardBackward0, UpsampleBilinear2DBackward0, ...): the backward is this
    op again with the adjoint steps, named the other way round, so gradients of any order keep
    PyTorch's names. ``keep``: the op saves ``x`` and hands it to its backward as ``source``
    (PyTorch's reflection and replication pads take ``self`` in their backward: an in-place
    change of ``x`` before backward is the version error, and a second derivative reaches
    ``x`` as zeros); ``source`` is then unused by the map itself."""
    ctx.node_name, ctx.names, ctx.keep = names[0], names, keep
    ctx.has_source = source is not None
    if keep:
        ctx.save(x=x)
    adjoint = []
    with no_grad():
        out = Tensor._make(x._data)
        for d, kind, a, size in steps:
            n = out.shape[d]
            if kind == "take":
                out = out.index_select(d, Tensor._make(np.asarray(a, np.int64)).to(out.device))
                adjoint.append((d, "add", a, n))
            elif kind == "add":
                shape = list(out.shape)
                shape[d] = size
                z = Tensor._make(ctx.backend.zeros(tuple(shape), out._data.dtype))
                idx = Tensor._make(np.asarray(a, np.int64)).to(out.device)
                out = z.index_add_(d, idx, out)
                adjoint.append((d, "take", a, n))
            else:
                w = Tensor._make(np.asarray(a, dtype=out.dtype.np)).to(out.device)
                # (the weights (out, in) applied along d)
                if d == out.ndim - 1:
                    out = out @ w.t()
                elif d == out.ndim - 2:
                    out = w @ out
                else:
                    out = (out.movedim(d, -1) @ w.t()).movedim(-1, d)
                adjoint.append((d, "mat", np.asarray(a).T, n))
        ctx.adjoint = tuple(reversed(adjoint))
        return out.contiguous()._data


@resample.defvjp
def resample_vjp(ctx, grad):
    g = resample(grad, ctx.adjoint, ctx.names[::-1], False, ctx["x"] if ctx.keep else None)
    if not ctx.has_source:
        return g
    # (the backward's derivative by the input it was given: zeros, PyTorch's zeros_like(self))
    return g, Tensor._make(ctx.backend.zeros(ctx.input_shapes[-1], ctx.input_dtypes[-1].np))


@composite("weight_norm_interface", node="WeightNormInterfaceBackward0")
def weight_norm_interface(ctx, v, g, dim=0):
    """``v * (g / |v|)``, the norm taken over every dim of ``v`` but ``dim`` (``g`` has that
    norm's shape, size 1 on those dims): PyTorch's ``_weight_norm_interface``."""
    ctx.dims = tuple(d for d in range(v.ndim) if d != dim % max(v.ndim, 1))
    ctx.save(v=v, g=g)
    with no_grad():  # (the ops run on either backend; the node is this op's)
        norms = _norms(v, ctx.dims)
        return E.mul(v, E.div(g.reshape(norms.shape), norms))._data


def _norms(v, dims):
    return E.sqrt(R.sum(E.mul(v, v), dims, True))


@weight_norm_interface.defvjp
def weight_norm_interface_vjp(ctx, grad):
    v, g = ctx["v"], ctx["g"]
    norms = _norms(v, ctx.dims)
    g = g.reshape(norms.shape)
    along = R.sum(E.mul(grad, v), ctx.dims, True)  # (the gradient's part along v)
    grad_g = E.div(along, norms)
    grad_v = E.mul(E.div(g, norms), E.sub(grad, E.mul(v, E.div(grad_g, norms))))
    return grad_v, grad_g.reshape(ctx.input_shapes[1])
