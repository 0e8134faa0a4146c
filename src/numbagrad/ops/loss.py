"""Losses with nodes of their own (``MseLossBackward0``, ``NllLossBackward0``, ...), as in
PyTorch; the losses PyTorch itself composes from other ops (``l1_loss``, ``kl_div``,
``cross_entropy`` with probabilities or label smoothing) are composed in ``nn.functional``.

The forwards run the registry's ops with grad mode off; the backwards are Tensor expressions, so
they are differentiable (``create_graph``). Arguments checked by the caller (``nn.functional``):
the reduction's name, shapes and dtypes."""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as D
from .._tensor import Tensor
from ..autograd.grad_mode import _state as _grad_state
from ..autograd.grad_mode import no_grad
from ..backend import cpu
from ..backend import kernels_loss as KL
from . import elementwise as E
from . import reduce as R
from .forward import linear, refused
from .registry import composite, sum_to

REDUCTIONS = ("none", "mean", "sum")


def _reduce(loss, reduction):
    if reduction == "mean":
        return R.mean(loss)
    if reduction == "sum":
        return R.sum(loss)
    return loss


def _scaled(ctx, grad, n):
    """The gradient of a reduction of ``n`` elements' losses, before the per-element factor."""
    return E.mul(grad, 1.0 / n) if ctx.reduction == "mean" and n else grad


def _weighted(loss, weight):
    return loss if weight is None else E.mul(loss, weight)


def _both(ctx, g):
    """``(g, -g)`` summed to the shapes of the two operands (input, target); None for one
    that gets no gradient."""
    return (sum_to(g, ctx.input_shapes[0]) if ctx.needs_grad(0) else None,
            sum_to(E.neg(g), ctx.input_shapes[1]) if ctx.needs_grad(1) else None)


@composite("mse_loss", node="MseLossBackward0")
def mse_loss(ctx, input, target, reduction="mean"):
    ctx.save(x=input, target=target)
    ctx.reduction = reduction
    with no_grad():
        d = E.sub(input, target)
        return _reduce(E.mul(d, d), reduction)._data


@mse_loss.defjvp
def mse_loss_jvp(result, tangents, input, target, reduction="mean"):
    tx, tt = tangents[:2]
    dt = tx if tt is None else tt.neg() if tx is None else E.sub(tx, tt)
    return _reduce(E.mul(E.mul(E.sub(input, target), dt), 2.0), reduction)


def _mse_gradient(grad_output, x, target, reduction):
    """``(x - target) * (grad_output * 2 / n)``: the gradient of ``x``, ``n`` the number of
    losses for a mean, else 1."""
    d = E.sub(x, target)
    return E.mul(d, E.mul(grad_output, _mse_scale(d, reduction)))


def _mse_scale(d, reduction):
    return 2.0 / max(d.numel(), 1) if reduction == "mean" else 2.0


@mse_loss.defvjp
def mse_loss_vjp(ctx, grad):
    x, target = ctx["x"], ctx["target"]
    if not _grad_state.enabled:
        return _both(ctx, _mse_gradient(grad, x, target, ctx.reduction))
    # recorded (create_graph): PyTorch's nodes; target's gradient is (target - x) * ..., the
    # negation of x's, exactly
    return (sum_to(mse_loss_backward(grad, x, target, ctx.reduction), ctx.input_shapes[0]),
            sum_to(mse_loss_backward(grad, target, x, ctx.reduction), ctx.input_shapes[1]))


@composite("mse_loss_backward", node="MseLossBackwardBackward0")
def mse_loss_backward(ctx, grad_output, x, target, reduction="mean"):
    """PyTorch's mse_loss_backward (``_mse_gradient``): a node of its own under create_graph,
    whose backward is PyTorch's double-backward formula."""
    ctx.save(grad_output=grad_output, x=x, target=target)
    ctx.reduction = reduction
    with no_grad():
        return _mse_gradient(grad_output, x, target, reduction)._data


@mse_loss_backward.defjvp
def mse_loss_backward_jvp(result, tangents, grad_output, x, target, reduction="mean"):
    # linear in grad_output, and in x - target
    t_out, tx, tt = tangents[:3]
    out = None if t_out is None else _mse_gradient(t_out, x, target, reduction)
    if tx is not None or tt is not None:
        dt = tx if tt is None else E.neg(tt) if tx is None else E.sub(tx, tt)
        d = E.mul(dt, E.mul(grad_output, 2.0 / max(math.prod(result.shape), 1)
                            if reduction == "mean" else 2.0))
        out = d if out is None else E.add(out, d)
    return out


@mse_loss_backward.defvjp
def mse_loss_backward_vjp(ctx, grad):
    grad_output, x, target = ctx["grad_output"], ctx["x"], ctx["target"]
    # PyTorch's mse_loss_double_backward_grad_output and mse_loss_double_backward
    if ctx.reduction == "none":
        g_out = mse_loss_backward(grad, x, target, "none")
    else:
        ones = Tensor._make(ctx.backend.full(grad_output.shape, 1, grad_output.dtype.np))
        g_out = R.sum(E.mul(mse_loss_backward(ones, x, target, ctx.reduction), grad))
    g_x = E.mul(E.mul(grad, grad_output), 2.0)
    if ctx.reduction == "mean":
        g_x = E.div(g_x, max(math.prod(np.broadcast_shapes(x.shape, target.shape)), 1))
    shapes = ctx.input_shapes
    return (sum_to(g_out, shapes[0]), sum_to(g_x, shapes[1]), sum_to(E.neg(g_x), shapes[2]))


def _piecewise_forward(ctx, input, target, reduction, width, loss):
    """Smooth L1 and Huber: the elementwise ``loss`` (quadratic within ``width`` of 0, linear
    outside; one kernel, deferred as any elementwise op), reduced."""
    ctx.save(x=input, target=target)
    ctx.reduction, ctx.width = reduction, width
    with no_grad():
        return _reduce(loss(input, target, width), reduction)._data


def _piecewise_vjp(backward, same_dtypes=False):
    """The vjp of a piecewise loss whose elementwise gradient is PyTorch's ``backward`` kernel
    (its node under create_graph: SmoothL1LossBackwardBackward0, HuberLossBackwardBackward0).
    ``same_dtypes``: PyTorch's kernel (huber's) refuses a target of another dtype than the
    input's, in backward only."""

    def vjp(ctx, grad):
        x, target = ctx["x"], ctx["target"]
        if same_dtypes and target.dtype is not x.dtype:
            raise RuntimeError(f"Found dtype {D.SCALAR_TYPE[target.dtype.name]} but expected "
                               f"{D.SCALAR_TYPE[x.dtype.name]}")
        g = _scaled(ctx, grad, math.prod(np.broadcast_shapes(x.shape, target.shape)))
        shapes = ctx.input_shapes
        gx = sum_to(backward(g, x, target, ctx.width), shapes[0]) if ctx.needs_grad(0) else None
        gt = sum_to(backward(g, target, x, ctx.width), shapes[1]) if ctx.needs_grad(1) else None
        return gx, gt

    return vjp


@composite("smooth_l1_loss", node="SmoothL1LossBackward0")
def smooth_l1_loss(ctx, input, target, reduction="mean", beta=1.0):
    return _piecewise_forward(ctx, input, target, reduction, beta, E.smooth_l1_elementwise)


@composite("huber_loss", node="HuberLossBackward0")
def huber_loss(ctx, input, target, reduction="mean", delta=1.0):
    return _piecewise_forward(ctx, input, target, reduction, delta, E.huber_elementwise)


smooth_l1_loss.defvjp(_piecewise_vjp(E.smooth_l1_loss_backward))
huber_loss.defvjp(_piecewise_vjp(E.huber_loss_backward, same_dtypes=True))


def _target_positions(shape, target):
    """The index (a tuple of host arrays) of each target's class in an input of ``shape``:
    classes along dim 1, or dim 0 of a 1-d input."""
    if len(shape) == 1:
        return (target.reshape(1),)
    grid = np.indices(target.shape, sparse=True)
    return (grid[0], target, *grid[1:])


def _as_rows(shape):
    """(N, C, S): an nll_loss input of ``shape`` read as its batch, its classes and its
    trailing dims flattened (``kernels_loss``): (C,) is (1, C, 1), (N, C) is (N, C, 1)."""
    if len(shape) == 1:
        return 1, shape[0], 1
    s = 1
    for d in shape[2:]:
        s *= d
    return shape[0], shape[1], s


@composite("nll_loss", node="NllLossBackward0")
def nll_loss(ctx, input, target, reduction="mean", weight=None, ignore_index=-100, *,
             weight_tensor=None):
    """``-weight[t] * input[n, t, ...]`` for the class index ``t`` of each target, reduced (the
    mean divides by the summed weights); targets equal to ``ignore_index`` count nothing, one
    outside the classes raises IndexError. ``weight``: a host array of one weight per class,
    or None; ``weight_tensor``: the Tensor it was read from, if any. The rest is checked by
    the caller."""
    if input.ndim == 4:
        ctx.node_name = "NllLoss2DBackward0"
    # (PyTorch's node saves its input, target and weight: writing one of them in place before
    # backward is an error)
    ctx.save(x=input, target=target, weight=weight_tensor)
    ctx.weight_tensor = weight_tensor
    ctx.args = (target, weight, ignore_index)
    ctx.reduction = reduction
    a = input._data
    if type(a) is np.ndarray:  # one pass of kernels_loss.nll_forward
        n, c, s = _as_rows(a.shape)
        t = np.ascontiguousarray(target._host(), np.int64).reshape(n, s)
        w = np.empty(0, a.dtype) if weight is None else np.ascontiguousarray(weight, a.dtype)
        terms = np.empty((n, s), a.dtype)
        sums, bad = np.empty(3), np.zeros(2, np.int64)
        cpu.get_reduce_kernel(KL.nll_forward, a.dtype)(
            np.ascontiguousarray(a).reshape(n, c, s), t, w, ignore_index, terms, sums, bad)
        if bad[0]:
            raise IndexError(f"Target {bad[1]} is out of bounds.")
        ctx.targets, ctx.total = (t, w, ignore_index), sums[1]
        if reduction == "none":
            return terms.reshape(target.shape)
        return np.array(sums[2] if reduction == "mean" else sums[0], a.dtype)
    t = target._host()
    ignored = t == ignore_index
    bad = ~ignored & ((t < 0) | (t >= (input.shape[1] if input.ndim > 1 else input.shape[0])))
    if bad.any():
        raise IndexError(f"Target {int(t[bad][0])} is out of bounds.")
    some_ignored = ignored.any()
    if some_ignored:
        t = np.where(ignored, 0, t)
    index = _target_positions(input.shape, t)
    picked = Tensor._make(input._data[index].reshape(t.shape))  # (either backend's array)
    w = None
    if weight is not None or some_ignored:
        w = np.ones(t.shape, input.dtype.np) if weight is None else weight[t].astype(input.dtype.np)
        w[ignored] = 0
    ctx.targets, ctx.index, ctx.kept = None, index, ~ignored
    ctx.weight = w = None if w is None else Tensor._make(w).to(input.device)
    with no_grad():
        loss = E.neg(_weighted(picked, w))
        if reduction == "mean" and w is not None:
            ctx.total = total = R.sum(w)
            return E.div(R.sum(loss), total)._data
        ctx.total = t.size
        return _reduce(loss, reduction)._data


nll_loss.defjvp(linear(nll_loss))


def _check_targets(ctx, weight_tensor):
    """Read the saved target and weight: their version check (see nll_loss)."""
    ctx["target"]  # noqa: B018
    if weight_tensor is not None:
        ctx["weight"]  # noqa: B018


@nll_loss.defvjp
def nll_loss_vjp(ctx, grad):
    x = ctx["x"]
    _check_targets(ctx, ctx.weight_tensor)
    if _grad_state.enabled:  # recorded: PyTorch's node, NllLossBackwardBackward0
        return nll_loss_backward(grad, x, ctx), None
    return _nll_gradient(ctx, grad, ctx.input_shapes[0]), None


def _nll_gradient(ctx, grad, shape):
    """nll_loss's gradient of its input (of ``shape``) from ``grad``; ``ctx``: the loss's."""
    g = grad._data
    if ctx.targets is not None and type(g) is np.ndarray:  # kernels_loss.nll_backward
        t, w, ignore = ctx.targets
        n, c, s = _as_rows(shape)
        each = ctx.reduction == "none"
        out = np.empty((n, c, s), g.dtype)
        cpu.get_reduce_kernel(KL.nll_backward, g.dtype)(
            np.ascontiguousarray(g).reshape(n, s) if each else g.reshape(1, 1), each, t,
            w.astype(g.dtype, copy=False), ignore, g.dtype.type(ctx.total),
            ctx.reduction == "mean", out)
        return Tensor._make(out.reshape(shape))
    # the targets' positions, a constant: the gradient is -grad * weight there
    mask = np.zeros(shape, np.bool_)
    mask[ctx.index] = ctx.kept
    mask = Tensor._make(mask).to(grad.device)
    if ctx.reduction == "mean":
        grad = E.div(grad, ctx.total) if ctx.weight is not None else _scaled(ctx, grad, ctx.total)
    grad = _weighted(grad, ctx.weight)
    if len(shape) > 1 and grad.ndim:  # (one loss per target: spread along the classes)
        grad = grad.unsqueeze(1)
    # (a select, not -mask * grad: an infinite gradient must not make 0 * inf elsewhere)
    return E.where(mask, E.neg(grad), 0)


class _NllSpec:
    """What nll_loss_backward reads of the loss's ctx (not the ctx: its saved input)."""

    def __init__(self, ctx):
        self.targets, self.reduction, self.total, self.args = (
            ctx.targets, ctx.reduction, ctx.total, ctx.args)
        self.weight_tensor = ctx.weight_tensor
        if ctx.targets is None:
            self.index, self.kept, self.weight = ctx.index, ctx.kept, ctx.weight


@composite("nll_loss_backward")
def nll_loss_backward(ctx, grad_output, x, loss_ctx):
    """PyTorch's nll_loss_backward, the gradient of nll_loss's input ``x`` (only its shape is
    read): a node of its own under create_graph, whose backward is PyTorch's formula."""
    spec = ctx.spec = loss_ctx if isinstance(loss_ctx, _NllSpec) else _NllSpec(loss_ctx)
    # (PyTorch's double-backward node saves the target and weight too)
    ctx.save(target=spec.args[0], weight=spec.weight_tensor)
    with no_grad():
        return _nll_gradient(spec, grad_output, tuple(x.shape))._data


nll_loss_backward.defjvp(linear(nll_loss_backward))  # (x's derivative is zero)


@nll_loss_backward.defvjp
def nll_loss_backward_vjp(ctx, grad):
    # grad_output's: the loss itself (linear in its input); x's: PyTorch's zeros_like(grad)
    target, weight, ignore_index = ctx.spec.args
    _check_targets(ctx, ctx.spec.weight_tensor)
    g_out = nll_loss(grad, target, ctx.spec.reduction, weight, ignore_index,
                     weight_tensor=ctx.spec.weight_tensor)
    return g_out, Tensor._make(ctx.backend.zeros(tuple(grad.shape), grad._data.dtype))


@composite("binary_cross_entropy", node="BinaryCrossEntropyBackward0")
def binary_cross_entropy(ctx, input, target, reduction="mean", weight=None):
    """``-weight * (t log x + (1 - t) log(1 - x))`` (each log at least -100); ``weight``
    broadcasts to the input. One kernel each way (binary_cross_entropy_elementwise,
    binary_cross_entropy_backward), as PyTorch's."""
    # (the weight saved too, as PyTorch's node: an in-place change of it before backward is
    # an error)
    ctx.save(x=input, target=target, weight=weight)
    ctx.reduction = reduction
    with no_grad():
        loss = E.binary_cross_entropy_elementwise(input, target)
        return _reduce(_weighted(loss, weight), reduction)._data


@binary_cross_entropy.defvjp
def binary_cross_entropy_vjp(ctx, grad):
    x, t, w = ctx["x"], ctx["target"], _saved_or_none(ctx, "weight")
    n = x.numel() if ctx.reduction == "mean" else 1
    gx = gt = None
    if ctx.needs_grad(0):
        gx = sum_to(E.binary_cross_entropy_backward(grad, x, t, 1.0 if w is None else w, n),
                    ctx.input_shapes[0])
    if ctx.needs_grad(1):
        # PyTorch's binary_cross_entropy_target_backward: -logit(x) times the gradient,
        # weighted, over the mean's count
        gt = _weighted(E.mul(E.neg(E.logit(x, -1.0)), grad), w)
        gt = sum_to(E.div(gt, n) if n != 1 else gt, ctx.input_shapes[1])
    return gx, gt


def _saved_or_none(ctx, name):
    """The tensor the loss saved as ``name`` (checked against in-place changes), or None where
    it was not given (an optional weight)."""
    return ctx[name] if name in ctx.saved else None


def _softplus_neg(x):
    """``log(1 + exp(-x))`` without overflow: ``log1p(exp(-|x|)) + max(-x, 0)``."""
    return E.add(E.log1p(E.exp(E.neg(E.abs(x)))), E.clamp(E.neg(x), 0.0, math.inf))


@composite("binary_cross_entropy_with_logits", node="BinaryCrossEntropyWithLogitsBackward0")
def binary_cross_entropy_with_logits(ctx, input, target, reduction="mean", weight=None,
                                     pos_weight=None):
    """``weight * ((1 - t) x + (1 + (pos_weight - 1) t) log(1 + exp(-x)))``: binary
    cross-entropy of ``sigmoid(x)``, computed from the logit ``x``."""
    ctx.save(x=input, target=target, weight=weight, pos_weight=pos_weight)
    ctx.reduction = reduction
    with no_grad():
        if pos_weight is None:
            loss = E.bce_with_logits_elementwise(input, target)  # (one kernel)
        else:
            sp = E.mul(_softplus_neg(input), E.add(E.mul(E.sub(pos_weight, 1.0), target), 1.0))
            loss = E.add(E.mul(E.sub(1.0, target), input), sp)
        loss = _weighted(loss, weight)
        if target.dtype.is_floating_point and loss.dtype is not target.dtype:
            # PyTorch writes the loss (and its weighting) into ``1 - target`` in place: the
            # target's dtype
            loss = loss.to(target.dtype)
        return _reduce(loss, reduction)._data


@binary_cross_entropy_with_logits.defvjp
def binary_cross_entropy_with_logits_vjp(ctx, grad):
    # PyTorch's binary_cross_entropy_with_logits_backward and its target's, in its order: the
    # elementwise factor times grad, times the weight, over n for a mean (DivBackward1)
    x, t, pw = ctx["x"], ctx["target"], _saved_or_none(ctx, "pos_weight")
    w = _saved_or_none(ctx, "weight")
    n = max(math.prod(np.broadcast_shapes(x.shape, t.shape)), 1)

    def finish(d, shape):
        d = _weighted(E.mul(d, grad), w)
        return sum_to(E.div_scalar(d, n) if ctx.reduction == "mean" else d, shape)

    gx = gt = None
    if ctx.needs_grad(0):
        s = E.sigmoid(x)
        if pw is None:
            gx = E.sub(s, t)
        else:
            pt = E.mul(pw, t)
            gx = E.sub(E.mul(E.sub(E.add(pt, 1.0), t), s), pt)
        gx = finish(gx, ctx.input_shapes[0])
    if ctx.needs_grad(1):
        gt = E.neg(x)
        if pw is not None:
            gt = E.add(gt, E.mul(E.sub(pw, 1.0), _softplus_neg(x)))
        gt = finish(gt, ctx.input_shapes[1])
    return gx, gt


@composite("soft_margin_loss", node="SoftMarginLossBackward0")
def soft_margin_loss(ctx, input, target, reduction="mean"):
    """``log(1 + exp(-target * input))``, PyTorch's formula (not guarded against overflow)."""
    ctx.save(x=input, target=target)
    ctx.reduction = reduction
    with no_grad():
        # (in the input's dtype, whatever the target's: PyTorch's result takes its options)
        return _reduce(E.log1p(E.exp(E.mul(E.neg(input), target))), reduction).to(
            input.dtype)._data


@soft_margin_loss.defvjp
def soft_margin_loss_vjp(ctx, grad):
    # PyTorch's soft_margin_loss_backward: -target * z / (1 + z) with z = exp(-target * input);
    # no gradient of the target (nn.functional refuses a target that requires one)
    x, t = ctx["x"], ctx["target"]
    z = E.exp(E.mul(E.neg(t), x))
    g = E.mul(E.div(E.mul(E.neg(t), z), E.add(z, 1.0)),
              _scaled(ctx, grad, math.prod(np.broadcast_shapes(x.shape, t.shape))))
    return sum_to(g, ctx.input_shapes[0]), None


def _multi_margin_terms(x, onehot, picked, p, margin):
    """The hinge ``margin - x[target] + x[i]`` of each other class ``i`` (zero at the target's
    and where it is not positive) and its derivative by ``x[i]``."""
    z = E.add(E.sub(x, picked), margin)
    live = E.logical_and(E.gt(z, 0.0), E.logical_not(onehot))
    if p == 1:
        return E.where(live, z, 0.0), live.to(z.dtype)  # (1 where live, in x's dtype)
    return E.where(live, E.mul(z, z), 0.0), E.where(live, E.mul(z, 2.0), 0.0)


@composite("multi_margin_loss", node="MultiMarginLossBackward0")
def multi_margin_loss(ctx, input, target, p=1, margin=1.0, weight=None, reduction="mean"):
    """``sum_i w[y] max(0, margin - x[y] + x[i])**p / C`` over the classes ``i != y`` of each
    sample, ``y`` its target class; input (N, C), (C,) or a 0-d one-class input (the loss
    then of the target's shape). ``weight``: a host array of one weight per class, or None.
    Checked by the caller."""
    t = target._host().reshape(-1)
    n = t.size
    x = input.reshape(n, -1)
    c = x.shape[1]
    onehot = np.zeros((n, c), np.bool_)
    onehot[np.arange(n), t] = True
    ctx.onehot = Tensor._make(onehot).to(input.device)
    ctx.picked_index = (np.arange(n), t)
    ctx.p, ctx.margin, ctx.reduction, ctx.classes = p, margin, reduction, c
    ctx.weight = None if weight is None else Tensor._make(
        weight[t].astype(input.dtype.np).reshape(n, 1)).to(input.device)
    ctx.save(x=input)
    with no_grad():
        picked = Tensor._make(x._data[ctx.picked_index].reshape(n, 1))
        h = _weighted(_multi_margin_terms(x, ctx.onehot, picked, p, margin)[0], ctx.weight)
        loss = E.div(R.sum(h, 1), c)
        if input.ndim < 2:
            loss = loss.reshape(target.shape)
        return _reduce(loss, reduction)._data


multi_margin_loss.defjvp(refused(multi_margin_loss))  # (PyTorch has no forward derivative)


@multi_margin_loss.defvjp
def multi_margin_loss_vjp(ctx, grad):
    if _grad_state.enabled:  # recorded (create_graph): PyTorch's node, without a derivative
        return multi_margin_loss_backward(grad, ctx["x"], ctx), None
    return _multi_margin_gradient(ctx, grad, ctx["x"]), None


def _multi_margin_gradient(ctx, grad, x):
    """multi_margin_loss's gradient of its input ``x`` from ``grad``; ``ctx``: the loss's."""
    n = ctx.picked_index[0].size
    x2 = x.reshape(n, -1)
    picked = x2[ctx.picked_index].reshape(n, 1)
    slope = _multi_margin_terms(x2, ctx.onehot, picked, ctx.p, ctx.margin)[1]
    # PyTorch's kernel: each sample's gradient for an incoming 1 (the target's class loses what
    # every other class gains), then times the incoming gradient, so an infinite one makes
    # +-inf where a class gains or loses and NaN (0 * inf) only where nothing changes
    count = n * ctx.classes if ctx.reduction == "mean" else ctx.classes
    local = _weighted(E.mul(slope, 1.0 / count if count else 0.0), ctx.weight)
    local = E.sub(local, E.where(ctx.onehot, R.sum(local, 1, True), 0.0))
    g = grad.reshape(n, 1) if grad.ndim else grad
    return E.mul(local, g).reshape(x.shape)


@composite("multi_margin_loss_backward", node="NotImplemented")
def multi_margin_loss_backward(ctx, grad_output, x, loss_ctx):
    """PyTorch's multi_margin_loss_backward: a node of its own under create_graph, which has
    no derivative (PyTorch's node is its generic ``NotImplemented``)."""
    with no_grad():
        return _multi_margin_gradient(loss_ctx, grad_output, x)._data


@multi_margin_loss_backward.defvjp
def multi_margin_loss_backward_vjp(ctx, grad):
    raise RuntimeError("derivative for aten::multi_margin_loss_backward is not implemented")
