"""Connectionist temporal classification loss (``nn.functional.ctc_loss``, ``nn.CTCLoss``).

``ctc_loss`` is one op per batch, PyTorch's ``_ctc_loss`` (its node ``CtcLossBackward0``): the
negative log-likelihood of each sequence's target under its log-probabilities, from the alpha
recursion of backend/kernels_ctc.py. Its backward runs the beta recursion and gives PyTorch's
gradient, ``exp(log_probs) - posterior / exp(log_probs)``: the gradient through a log_softmax
the log-probabilities are taken to come from, so it is not the derivative of the loss where
``log_probs`` are not normalised, as in PyTorch. Its second derivative raises, as PyTorch's.

``loss`` is the functional's body: the arguments checked in PyTorch's order and words, then
the op, then what PyTorch composes around it from other ops (``where`` for ``zero_infinity``,
the division by the target lengths and the mean, the sum, the squeeze of an unbatched loss),
so the nodes are PyTorch's too.

The recursions run on the host in float64; a CUDA tensor's values are copied there and the
results back (correct, not fast).
"""

from __future__ import annotations

import math
import operator

import numpy as np

from .. import dtypes as D
from .._tensor import Tensor
from ..autograd.grad_mode import _state as _grad_state
from ..backend import cpu
from ..backend import kernels_ctc as KC
from . import elementwise as E
from . import movement as M
from . import reduce as R
from .forward import refused
from .indexing import _device, _host
from .registry import composite, not_implemented

_WHERE = "(while checking arguments for ctc_loss_allocate_outputs)"
_OVERLOADS = (
    " * (Tensor log_probs, Tensor targets, tuple of ints input_lengths, tuple of ints "
    "target_lengths, int blank = 0, int reduction = at::Reduction::Mean, bool zero_infinity = "
    "False)\n"
    " * (Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, int "
    "blank = 0, int reduction = at::Reduction::Mean, bool zero_infinity = False)\n")


@composite("_ctc_loss", node="CtcLossBackward0")  # (ATen's name, in PyTorch's messages)
def ctc_loss(ctx, log_probs, targets=None, offsets=None, target_lengths=None,
             input_lengths=None, blank=0, zero_infinity=False):
    """Each sequence's negative log-likelihood, (N,), from ``log_probs`` (T, N, C) and the
    checked host int64 arrays ``targets`` (1-d, sequence ``b``'s labels from ``offsets[b]``),
    ``target_lengths`` and ``input_lengths`` (N,)."""
    ctx.save(log_probs=log_probs)
    lp = np.ascontiguousarray(_host(ctx, log_probs), np.float64)
    steps, batch = lp.shape[:2]
    width = 2 * int(target_lengths.max(initial=0)) + 1
    log_alpha = np.empty((batch, steps, width))
    nll = np.empty(batch)
    cpu.get_reduce_kernel(KC.ctc_forward, np.float64)(
        lp, targets, offsets, target_lengths, input_lengths, blank, log_alpha, nll)
    # (kept for backward in float64: PyTorch's node saves its log_alpha and result too)
    ctx.lp, ctx.log_alpha, ctx.nll = lp, log_alpha, nll
    ctx.args = (targets, offsets, target_lengths, input_lengths, blank, zero_infinity)
    return _device(ctx, nll.astype(log_probs.dtype.np))


@ctc_loss.defvjp
def ctc_loss_vjp(ctx, grad):
    log_probs = ctx["log_probs"]  # (raises if it was written in place since)
    targets, offsets, target_lengths, input_lengths, blank, zero_infinity = ctx.args
    lp = ctx.lp
    steps, _, classes = lp.shape
    g = np.ascontiguousarray(_host(ctx, grad), np.float64).reshape(-1)
    out = np.empty(lp.shape)
    cpu.get_reduce_kernel(KC.ctc_backward, np.float64)(
        lp, targets, offsets, target_lengths, input_lengths, blank, ctx.log_alpha, ctx.nll, g,
        zero_infinity, np.empty((steps, ctx.log_alpha.shape[2])), np.empty(classes), out)
    result = Tensor._make(_device(ctx, out.astype(log_probs.dtype.np)))
    if _grad_state.enabled:  # a recorded backward: PyTorch's has no derivative of its own
        return (not_implemented(result, "aten::_ctc_loss_backward", grad, log_probs),)
    return (result,)


ctc_loss.defjvp(refused(ctc_loss))  # (PyTorch has no forward derivative)


# ---------------------------------------------------------------- the functional


def _type_name(v):
    return "Tensor" if isinstance(v, Tensor) else type(v).__name__


def _invalid(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
    """PyTorch's argument parser's TypeError (without its lines on why each overload failed)."""
    got = ", ".join(_type_name(v) for v in (log_probs, targets, input_lengths, target_lengths,
                                            blank)) + ", int, " + _type_name(zero_infinity)
    return TypeError(f"ctc_loss() received an invalid combination of arguments - got ({got}), "
                     f"but expected one of:\n{_OVERLOADS}")


def _int_list(v):
    """``v`` as a list of ints when it is a tuple or list of ints (a bool is none), else None."""
    if not isinstance(v, (list, tuple)) or not v:
        return None
    out = []
    for x in v:
        if isinstance(x, bool):
            return None
        try:
            out.append(operator.index(x))
        except TypeError:
            return None
    return out


def _lengths(input_lengths, target_lengths, call):
    """The lengths as two int64 host arrays: both tensors of an integral dtype, or both
    sequences of ints, as PyTorch's two overloads."""
    if isinstance(input_lengths, Tensor) and isinstance(target_lengths, Tensor):
        for name, t in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
            if t.dtype.is_floating_point or t.dtype is D.bool_:
                raise RuntimeError(f"{name} must be integral")
        return (np.asarray(t._host(), np.int64).reshape(-1)
                for t in (input_lengths, target_lengths))
    lists = _int_list(input_lengths), _int_list(target_lengths)
    if lists[0] is None or lists[1] is None:
        raise _invalid(*call)
    return (np.asarray(v, np.int64) for v in lists)


def _targets(targets, target_lengths, batch):
    """``(flat int64 targets, each sequence's offset in them)``, checked as PyTorch does: a
    1-d ``targets`` holds the targets one after another, a 2-d one a (padded) row each."""
    name = "argument #2 'targets'"
    for v in target_lengths:
        if v < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got "
                               f"value {v} {_WHERE}")
    flat = np.asarray(targets._host()).astype(np.int64)
    if flat.ndim == 1:
        total = int(target_lengths.sum())
        if flat.shape[0] != total:
            raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got "
                               f"size {flat.shape[0]} for {name} {_WHERE}")
        offsets = np.concatenate([[0], np.cumsum(target_lengths)[:-1]]).astype(np.int64)
        return np.ascontiguousarray(flat), offsets
    longest = int(target_lengths.max(initial=0))
    if flat.shape[0] != batch:
        raise RuntimeError(f"Expected tensor to have size {batch} at dimension 0, but got "
                           f"size {flat.shape[0]} for {name} {_WHERE}")
    if flat.shape[1] < longest:
        raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, "
                           f"but got size {flat.shape[1]} for {name} {_WHERE}")
    offsets = np.arange(batch, dtype=np.int64) * flat.shape[1]
    return np.ascontiguousarray(flat).reshape(-1), offsets


def _check_labels(flat, offsets, target_lengths, classes):
    # (PyTorch reads a label outside [0, C) out of bounds, unchecked; here it is an error)
    for off, n in zip(offsets.tolist(), target_lengths.tolist()):
        labels = flat[off:off + n]
        bad = (labels < 0) | (labels >= classes)
        if bad.any():
            raise IndexError(f"Target {int(labels[bad][0])} is out of bounds.")


def loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
         zero_infinity=False):
    """``nn.functional.ctc_loss`` once the reduction's name is checked."""
    call = (log_probs, targets, input_lengths, target_lengths, blank, zero_infinity)
    if (not isinstance(blank, int) or isinstance(blank, bool)
            or not isinstance(zero_infinity, bool)):
        raise _invalid(*call)
    input_lengths, target_lengths = _lengths(input_lengths, target_lengths, call)
    if not log_probs.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"ctc_loss_cpu\" not implemented for '{D.SCALAR_TYPE[log_probs.dtype.name]}'")
    if log_probs.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    batched = log_probs.ndim == 3
    lp = log_probs if batched else M.unsqueeze(log_probs, 1)
    if lp.ndim != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {lp.ndim}-dimensional "
                           f"tensor for argument #1 'log_probs' {_WHERE}")
    if targets.ndim not in (1, 2):
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.ndim}-dimensional "
                           f"tensor for argument #2 'targets' {_WHERE}")
    steps, batch, classes = lp.shape
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    if input_lengths.shape[0] != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if target_lengths.shape[0] != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    flat, offsets = _targets(targets, target_lengths, batch)
    for v in input_lengths.tolist():
        if v < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value "
                               f"{v} {_WHERE}")
        if v > steps:
            raise RuntimeError(f"Expected input_lengths to have value at most {steps}, but got "
                               f"value {v} {_WHERE}")
    _check_labels(flat, offsets, target_lengths, classes)
    res = ctc_loss(lp, targets=flat, offsets=offsets, target_lengths=target_lengths,
                   input_lengths=input_lengths, blank=blank, zero_infinity=zero_infinity)
    if zero_infinity:  # (the op's gradient of such a sequence is zero already)
        res = E.where(E.eq(res, math.inf), _like(res, np.zeros(())), res)
    if reduction == "mean":
        return R.mean(E.div(res, _like(res, np.maximum(target_lengths, 1))))
    if reduction == "sum":
        return R.sum(res)
    return res if batched else M.squeeze(res, 0)


def _like(t, values):
    """Host ``values`` as a tensor of ``t``'s dtype on its device."""
    return Tensor._make(np.asarray(values, t.dtype.np)).to(t.device)
