"""The general backward of an op's node: what ``Elementwise.backward_node`` and
``Composite.backward_node`` run (registry.py binds these functions as those methods), and the
plan of what an elementwise call saves for it (``Elementwise._save_plan``).

The fast path's nodes (record.py) run their own lean backward and come here only when that
does not apply.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from .. import dtypes as D
from .._tensor import Tensor
from ..autograd.grad_mode import _state as _grad_state
from ..autograd.grad_mode import backward_fusion, backward_passes
from ..autograd.graph import _wrap, sum_to
from ..backend import cpu
from .kernels import both_args, vjp_kernel
from .record import as_tensor
from .table import REGISTRY


def save_plan(op, flags):
    """(input index, name) of the inputs to save, and whether to save the result, when
    bit k of ``flags`` says input k needs a gradient: what those inputs' rules read."""
    used = set(op.always_saves if flags else ())
    for k, args_ in enumerate(op.vjp_args):
        if flags >> k & 1:
            used.update(args_)
    plan = op._saves[flags] = (
        [(k, name) for k, name in enumerate(op.arg_names) if name in used],
        "result" in used,
    )
    return plan


def elementwise_backward(op, node, grads):
    """``Elementwise.backward_node``: the gradients of ``node``'s inputs from its output's
    ``grad``, by the ops' rule kernels, or on Tensors (recorded) under ``create_graph``."""
    ctx = node.ctx
    if op.always_saves:
        for name, s in ctx.saved.items():
            s.check(node, ctx.output_index.get(name, 0))
    grad = grads[0]
    compute = ctx.compute
    cnp = compute.np
    gdata = grad._data
    if gdata.dtype is not cnp and gdata.dtype != cnp:
        grad = grad.to(compute)
        gdata = grad._data
    create_graph = _grad_state.enabled
    saved = ctx.saved
    be = cpu if type(gdata) is np.ndarray else backend.of(gdata)
    nexts = node.next_functions
    if (
        len(nexts) == 2 and nexts[0][0] is nexts[1][0] and nexts[0] == nexts[1]
        and nexts[0][0] is not None
        and not create_graph and be is cpu and None not in op.vjps
        and ctx.shapes[0] == ctx.shapes[1] == gdata.shape and ctx.dtypes is None
        and not node._post_hooks
    ):
        # both inputs are one tensor (x * x): its two gradients would be summed by the
        # engine anyway, so one kernel computes the sum (a post hook would see them apart)
        tensor_args, params = both_args(op)
        arrays = saved_arrays(node, tensor_args, gdata)
        pvals = op._param_values(compute, ctx.params, params) if params else ()
        kernel = vjp_kernel(op, "both", compute, be)
        return Tensor._make(be.run_elementwise(kernel, arrays, cnp, pvals)), None
    shapes, to_cpu, dtypes = ctx.shapes, ctx.to_cpu, ctx.dtypes
    if op.bool_operand_vjp is not None:
        _refuse_bool_operands(op.bool_operand_vjp, ctx, nexts)
    out = []
    for i, rule in enumerate(op.vjps):
        if rule is None or nexts[i][0] is None:
            out.append(None)
            continue
        if create_graph:
            values = []
            for name in op.vjp_args[i]:
                if name == "grad":
                    values.append(grad)
                elif name in saved:
                    values.append(node.saved(name))
                else:
                    # on Tensors a scalar parameter is a 0-d tensor of the compute dtype
                    p = ctx.params[op.param_names.index(name)]
                    values.append(as_tensor(p, compute))
            recorded = op.recorded_vjps
            g = (rule if recorded is None or recorded[i] is None else recorded[i])(*values)
            if not isinstance(g, Tensor):
                g = as_tensor(g, compute)
            constant = op.constant_gradient
            if type(constant) is tuple:
                constant = constant[i]
            if constant is True or constant and constant(*ctx.params):
                g = g.detach()
            elif op.no_second_order is not None:
                sources = [v for v in values if isinstance(v, Tensor) and v.requires_grad]
                if sources:
                    g = REGISTRY["not_implemented"](g.detach(), op.no_second_order, *sources)
            elif op.zero_second_order:
                # the saved tensors the rule reads only through a comparison: PyTorch's rule
                # (threshold_backward) is a function of them, so a second derivative reaches
                # them (zeros, not None) even when g requires grad through ``grad`` alone
                sources = [v for v in values if isinstance(v, Tensor) and v.requires_grad
                           and (v is not grad or not g._requires_grad)]
                if sources:
                    # (registry.py defines depends_on with the classes that bind this module's
                    # functions, so it is found in the op table, not imported)
                    g = REGISTRY["depends_on"](g, *sources)
        else:
            if op._passes_grad[i]:
                g = grad  # shared, as PyTorch does: gradients are never written in place
            else:
                arrays = saved_arrays(node, op.vjp_args[i], gdata)
                names = op._rule_params(i)
                pvals = op._param_values(compute, ctx.params, names) if names else ()
                kernel = op._vjp_kernels.get((i, compute, be)) or vjp_kernel(op, i, compute, be)
                if be is cpu and cpu.is_small_flat(arrays, cnp, kernel.PARALLEL_MIN):
                    g = _wrap(Tensor, cpu.launch_small(kernel, arrays, cnp, pvals))
                else:
                    g = _wrap(Tensor, be.run_elementwise(kernel, arrays, cnp, pvals))
        shape = shapes[i]
        if g._data.shape != shape:
            g = sum_to(g, shape)
        if to_cpu is not None and to_cpu[i]:
            g = g.cpu()
        if dtypes is not None:
            dt = dtypes[i]
            if dt is not None and g._data.dtype != dt.np:
                g = g.to(dt)
        out.append(g)
    return tuple(out)


def _refuse_bool_operands(refusals, ctx, nexts):
    """PyTorch's error where a gradient that is needed negates or subtracts a saved bool
    operand (``Elementwise.bool_operand_vjp``): its formula runs on the operands as saved,
    where numbagrad's rule kernels read them cast to the op's compute dtype."""
    saved = ctx.saved
    for i, (names, (kind, message)) in refusals.items():
        if nexts[i][0] is None:
            continue
        for name in names:
            s = saved.get(name)
            if s is not None and s.dtype is D.bool_:
                raise kind(message)


def saved_arrays(node, names, gdata):
    """The arrays a fused rule kernel reads: ``grad`` and the saved tensors among ``names``
    (checked against in-place changes; no Tensors are made for them)."""
    ctx = node.ctx
    saved = ctx.saved
    arrays = []
    for name in names:
        if name == "grad":
            arrays.append(gdata)
        else:
            s = saved.get(name)
            if s is not None:
                if s.version_cell[0] != s.version:
                    s.check(node, ctx.output_index.get(name, 0))
                a = s.data
                arrays.append(a if a is not None else s.array())
    return arrays


def composite_backward(op, node, grads):
    """``Composite.backward_node``: the gradients of ``node``'s inputs, by the op's Tensor
    ``backward``, cast to the inputs' dtypes."""
    ctx = node.ctx
    if node._num_outputs == 1:
        grads = grads[0]
        if grads is not None and not _grad_state.enabled and grads._lazy is None:
            a = grads._data
            if (type(a) is np.ndarray and not a.flags.c_contiguous
                    and a.size < backward_fusion.min_items and 0 in a.strides):
                # a small broadcast gradient (a sum's, expanded): contiguous, so the op's
                # backward takes its kernels' paths (a row kernel, a lean loop) instead of
                # the general path's broadcasting on each of its ops
                grads = _wrap(Tensor, np.ascontiguousarray(a))
    else:
        # outputs that received no gradient contribute zeros (or None, for an op that tells
        # them apart)
        if not op.keeps_missing_grads:
            grads = [
                g if g is not None else Tensor._make(ctx.backend.zeros(s, d.np))
                for g, s, d in zip(grads, ctx.out_shapes, ctx.out_dtypes)
            ]
    # ``ctx[name]`` reads the node's saved tensors; the link goes after, so that node and
    # ctx make no reference cycle (the graph is then freed with its last tensor, not by
    # the garbage collector)
    ctx.node = node
    # Without create_graph, the formula's large elementwise ops defer as they do in a forward
    # (ops/lazy.py): ``(x - t) * s`` of a loss's gradient is then one loop, and a gradient no
    # input asks for (a target's) is never computed. The results are evaluated below, so no
    # expression leaves the node.
    deferring = not _grad_state.enabled
    if deferring:
        backward_passes.running -= 1
    try:
        res = op.backward(ctx, grads)
    finally:
        ctx.node = None
        if deferring:
            backward_passes.running += 1
    if not isinstance(res, tuple):
        res = (res,)
    out = []
    for g, (nxt, _), dt in zip(res, node.next_functions, ctx.input_dtypes):
        if g is not None and nxt is not None:
            if g.dtype is not dt:
                g = g.to(dt)
            if g._lazy is not None:
                g._data  # noqa: B018 (evaluated: LazyTensor.__getattr__)
        out.append(g if nxt is not None else None)
    return tuple(out)
