"""Normalisation layers' ops with PyTorch's nodes: ``layer_norm`` (NativeLayerNormBackward0),
``batch_norm`` (NativeBatchNormBackward0), ``group_norm`` (NativeGroupNormBackward0);
``weight_norm_interface`` (WeightNormInterfaceBackward0): ``v`` scaled to norm ``g`` along a dim.

Each normalises ``x`` to ``xhat = (x - mean) * rstd`` over some dims and applies an optional
per-feature ``weight`` and ``bias``. The forwards run with grad mode off and keep ``xhat`` and
``rstd``; a backward uses them as they are, unless it is itself recorded (``create_graph``):
then it recomputes them from the saved input with recorded ops, so second derivatives see how
they depend on ``x``."""

from __future__ import annotations

from .._tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..backend import kernels_norm as KN
from . import elementwise as E
from . import reduce as R
from .forward import through_vjp
from .kernels import row_buffer
from .registry import composite


def _standardize(x, dims, eps, moments=None):
    """``(xhat, rstd)`` of ``x`` over ``dims`` (biased variance, as every norm layer uses);
    the mean and variance go into the list ``moments`` if one is given."""
    mean = R.mean(x, dims, True)
    var = R.var(x, dims, 0, True)
    if moments is not None:
        moments += [mean, var]
    rstd = E.rsqrt(E.add(var, eps))
    return E.mul(E.sub(x, mean), rstd), rstd


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
    ctx.stat_dims, ctx.eps, ctx.view = stat_dims, eps, view
    ctx.param_shape, ctx.param_dims = param_shape, param_dims
    ctx.weight, ctx.has_weight, ctx.has_bias = weight, weight is not None, bias is not None
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
            xv = x if ctx.view is None else x.reshape(ctx.view)
            xhat, rstd = _standardize(xv, ctx.stat_dims, ctx.eps)
            if ctx.view is not None:
                xhat = xhat.reshape(x.shape)
        else:
            xhat, rstd = ctx.xhat, ctx.rstd
    if batch_stats and getattr(ctx, "rows", None) and not is_grad_enabled():
        gx = _layer_norm_gx(ctx, grad)  # (the formula below, in one row kernel)
    elif batch_stats:
        gxhat = grad if w is None else E.mul(grad, w.reshape(ctx.param_shape))
        view, dims = ctx.view, ctx.stat_dims
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
        grads.append(R.sum(E.mul(grad, xhat), ctx.param_dims).reshape(ctx.input_shapes[1]))
    if ctx.has_bias:
        grads.append(R.sum(grad, ctx.param_dims).reshape(ctx.input_shapes[-1]))
    return tuple(grads)


@composite("layer_norm", node="NativeLayerNormBackward0")
def layer_norm(ctx, x, normalized_ndim, weight, bias, eps):
    """Standardise over the last ``normalized_ndim`` dims (shapes checked by the caller)."""
    dims = tuple(range(x.ndim - normalized_ndim, x.ndim))
    outer = tuple(range(x.ndim - normalized_ndim))
    shape = x.shape[x.ndim - normalized_ndim:]
    n = 1
    for d in shape:
        n *= d
    if n and x._data.dtype.name in ("float32", "float64"):
        return _layer_norm_rows(ctx, x, weight, bias, eps, n, dims, shape, outer)
    return _forward(ctx, x, weight, bias, dims, eps, shape, outer)


def _layer_norm_rows(ctx, x, weight, bias, eps, n, dims, shape, outer):
    """``_forward`` of layer norm by one row kernel over the rows of ``n`` values: the same
    ctx (``xhat`` and ``rstd`` included), and ``rows`` for the backward's row kernel."""
    be = ctx.backend
    ctx.save(x=x)
    ctx.stat_dims, ctx.eps, ctx.view = dims, eps, None
    ctx.param_shape, ctx.param_dims = shape, outer
    ctx.weight, ctx.has_weight, ctx.has_bias = weight, weight is not None, bias is not None
    xa = be.ascontiguousarray(x._data)
    dt = xa.dtype
    rows = xa.size // n
    ctx.rows = rows, n
    out, xhat, rstd = be.empty(xa.shape, dt), be.empty(xa.shape, dt), be.empty((rows,), dt)
    none = be.empty((1,), dt)
    w = none if weight is None else row_buffer(be, weight._data.astype(dt, copy=False))
    b = none if bias is None else row_buffer(be, bias._data.astype(dt, copy=False))
    xb, xo, _ = be.flat_view(xa)
    be.run_row_kernel(KN.layer_norm_row, rows, xa.size, (
        n, xb, xo, w, weight is not None, b, bias is not None, eps, row_buffer(be, out),
        row_buffer(be, xhat), row_buffer(be, rstd)), dt)
    ctx.xhat = Tensor._make(xhat)
    ctx.rstd = Tensor._make(rstd.reshape(xa.shape[:len(outer)] + (1,) * len(dims)))
    return out


def _layer_norm_gx(ctx, grad):
    """The input's gradient of layer norm by one row kernel (an unrecorded backward)."""
    be = ctx.backend
    rows, n = ctx.rows
    xhat = ctx.xhat._data
    g = be.ascontiguousarray(grad._data.astype(xhat.dtype, copy=False))
    gb, go, _ = be.flat_view(g)
    gx = be.empty(xhat.shape, xhat.dtype)
    dt = xhat.dtype
    # (the weight as it is now, as the general path reads it)
    w = row_buffer(be, ctx.weight._data.astype(dt, copy=False)) if ctx.has_weight else \
        be.empty((1,), dt)
    be.run_row_kernel(KN.layer_norm_backward_row, rows, xhat.size, (
        n, gb, go, w, ctx.has_weight, row_buffer(be, xhat), row_buffer(be, ctx.rstd._data),
        row_buffer(be, gx)), dt)
    return Tensor._make(gx)


layer_norm.defvjp(_backward)


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
        return out
    ctx.weight, ctx.has_weight, ctx.has_bias = weight, weight is not None, bias is not None
    ctx.param_shape, ctx.param_dims = shape, dims
    with no_grad():
        ctx.rstd = rstd = E.rsqrt(E.add(running_var, eps)).reshape(shape)
        ctx.xhat = xhat = E.mul(E.sub(x, running_mean.reshape(shape)), rstd)
        return _affine(xhat, weight, bias, shape)._data


@batch_norm.defvjp
def batch_norm_vjp(ctx, grad):
    if ctx.training:
        return _backward(ctx, grad)
    return _backward(ctx, grad, ctx.xhat, ctx.rstd)


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
    view = (x.shape[0], num_groups, -1)
    return _forward(ctx, x, weight, bias, (2,), eps, _channel_shape(x),
                    (0, *range(2, x.ndim)), view)


group_norm.defvjp(_backward)


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
        new = shape[d] + before + after
        if new < 0:
            raise RuntimeError(
                f"The input size {shape[d]}, plus negative padding {before} and {after} resulted "
                f"in a negative output size, which is invalid. Check dimension {d} of your input.")
        src[d] = slice(max(-before, 0), shape[d] - max(-after, 0))
        dst[d] = slice(max(before, 0), new - max(after, 0))
        shape[d] = new
    out = ctx.backend.full(tuple(shape), value, x._data.dtype)
    out[tuple(dst)] = x._data[tuple(src)]
    return out


@constant_pad_nd.defvjp
def constant_pad_nd_vjp(ctx, grad):
    # the padding undone: the same op with the amounts negated (it crops what was added)
    return constant_pad_nd(grad, tuple(-p for p in ctx.pad), 0)


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
