"""Backward fusion on the CPU: a connected run of elementwise backward nodes as one kernel.

During ``Tensor.backward()`` the engine offers each ready elementwise node (the *root*) here,
through ``node.run_region`` (ops/record.py).
The region grows from the root through every elementwise node whose whole incoming gradient
comes from inside the region: all its consumers still to run are region members, it holds no
gradient yet, it has no hooks, and its gradients need no broadcast sum or cast. The members'
pointwise rules (the scalar functions the per-node kernels are built from) are composed into
one loop: gradients between members stay in registers, and each gradient leaving the region
is written once, already summed over every path inside the region that reaches it.
``(x**2 * exp(x)).sum().backward()`` so runs one pass over memory instead of five.

A gradient leaving for an input broadcast along rows (``b`` of ``(m, n) + (n,)``) is summed
over the rows inside the loop: each block of rows adds into its own partial row, and those are
added in order, so it is never written at the full shape and the sum does not depend on the
thread count. When the region is led by a loss whose value is still lazy (``lazy.Total``), the
loop adds that up too, so the forward pass never reads the operands.

A kernel is compiled per region structure, dtype and operand layout (never per shape) and
cached on disk like every other kernel. Regions under ``backward_fusion.min_items`` elements
(``autograd/grad_mode.py``, where ``backward_fusion.enabled`` turns the fusion off) run node by
node: their kernels cost little, a first compile a lot. Anything unusual (a strided or
partly broadcast operand, ``create_graph``, anomaly mode, ``inputs=``) takes the node-by-node
path, which computes the same gradients.
"""

from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor
from ..autograd.grad_mode import backward_fusion
from ..autograd.graph import _wrap, sum_to
from ..backend import cpu
from . import lazy
from .lazy import Loop, _kind

MAX_MEMBERS = 32
# a graph whose structure keeps changing would compile a kernel per new region: after this
# many in one process, new regions run node by node (their rule kernels are compiled already)


_specs: dict = {}


def _spec(op, i):
    """(function name, argument kinds) of input ``i``'s rule in a fused kernel, or None when
    the input has no rule. A kind is (0, None) for ``grad``, (1, index) for a parameter,
    (2, name) for a saved tensor."""
    if op.vjps[i] is None:
        return None
    kinds = []
    for name in op.vjp_args[i]:
        if name == "grad":
            kinds.append((0, None))
        elif name in op.param_names:
            kinds.append((1, op.param_names.index(name)))
        else:
            kinds.append((2, name))
    spec = _specs[(op, i)] = (f"_r_{op.name}_{i}", tuple(kinds))
    return spec


def _joins(node, compute, buffers, shape) -> bool:
    """Whether ``node``, all of whose pending gradient comes from the region, can join it."""
    if not node._fusable or node._released or node in buffers or node.op.kind != "elementwise":
        return False  # (a sum only leads a region)
    if node._hooked:  # (set once any of its four hook tables is made)
        return False
    ctx = node.ctx
    if ctx.compute is not compute or ctx.dtypes is not None or ctx.to_cpu is not None:
        return False
    for s in ctx.saved.values():  # what its rules read, in a layout the loop can read
        e = s.expr
        if e is not None and e.value is None:
            if e.shape != shape:  # (an expression is computed at the region's shape)
                return False
            continue
        a = s.array()
        if type(a) is not np.ndarray or _kind(a, shape) is None:
            return False
    return True


def _summed_in_loop(loop, shape, in_shape) -> bool:
    """Whether the gradient to an input of ``in_shape``, broadcast along the rows of
    ``shape``, can be summed over those rows inside the loop (its rows fit the loop's)."""
    k = 0
    while k < len(in_shape) and in_shape[k] == 1:
        k += 1
    row = tuple(in_shape[k:])
    if not 0 < len(row) < len(shape) or tuple(shape[len(shape) - len(row):]) != row:
        return False
    n = math.prod(row)
    if loop.cols is None:
        loop.cols = n
    return loop.cols == n


_lane_of: dict = {}  # size -> the row length ``_lanes`` found for it (None: none divides it)


def _lanes(loop, shape) -> bool:
    """Give a loop with no rows of its own a row length (one that divides its size) so it can
    sum its values by rows; False when no good length divides it."""
    n = math.prod(shape)
    # the longest rows: each row costs the loop its slices and a vector epilogue, so (1000,
    # 100) summed by its rows of 100 took 25 us more a step than (100, 1000)
    c = shape[-1] if shape else 1
    if not (1024 < c <= lazy.BLOCK):
        c = _lane_of.get(n, 0)
        if c == 0:
            # (a loop, not a tuple of the 961 candidates: building that took 20 us a backward)
            for c in range(1024, 63, -1):
                if n % c == 0:
                    break
            else:
                c = None
            if len(_lane_of) < 1024:
                _lane_of[n] = c
        if c is None:
            return False
    loop.cols = c
    return True


def _region(root, shape, deps, buffers):
    """The region's nodes in the order they join (each after all its consumers), and each
    node's index in that list."""
    members = [root]
    index = {root: 0}
    compute = root.ctx.compute
    reached: dict = {}
    k = 0
    while k < len(members):
        m = members[k]
        k += 1
        vjps = m.op.vjps
        shapes = m.ctx.shapes
        for i, (nxt, _) in enumerate(m.next_functions):
            if nxt is None or vjps[i] is None or shapes[i] != shape:
                continue
            c = reached[nxt] = reached.get(nxt, 0) + 1
            if (c == deps[nxt] and len(members) < MAX_MEMBERS
                    and _joins(nxt, compute, buffers, shape)):
                index[nxt] = len(members)
                members.append(nxt)
    return members, index


def run(root, grads, pending, buffers):
    """Run the region grown from ``root`` as one kernel.

    ``pending()`` gives the engine's dependency counts of the nodes still to run (made on the
    first call: only a region that may be worth a kernel asks). Returns (members,
    contributions, external): the nodes it ran, ((node, nr), gradient) for each edge leaving
    the region, and one entry per edge leaving the region (for the engine's dependency
    counts). None when ``root`` should run alone.
    """
    g = grads[0]
    if g is None or len(grads) != 1:
        return None
    gdata = g._data
    if type(gdata) is not np.ndarray:
        return None
    lead = None
    if root.op.kind != "elementwise":
        # a whole-tensor sum (``loss = f(x).sum()``): its gradient is one value broadcast over
        # its input; the region starts at the node it feeds and reads that value as a scalar
        # (no expanded tensor, no node of its own)
        lead, (root, _) = root, root.next_functions[0]
        if gdata.size != 1 or root is None or lead._released:
            return None
        if not (root._fusable and root.op.kind == "elementwise"):
            return None
        shape = lead.ctx.input_shapes[0]
        if math.prod(shape) < backward_fusion.min_items or pending()[root] != 1:
            return None
        if gdata.dtype != root.ctx.compute.np or not _joins(root, root.ctx.compute, buffers,
                                                           shape):
            return None
    else:
        shape = gdata.shape
    ctx = root.ctx
    compute = ctx.compute
    cnp = compute.np
    if root._released or ctx.dtypes is not None or ctx.to_cpu is not None:
        return None  # (a released root raises on the node-by-node path)
    if cnp.kind != "f" or gdata.dtype != cnp or math.prod(shape) < backward_fusion.min_items:
        return None
    members, index = _region(root, shape, pending(), buffers)
    if len(members) < 2 and lead is None:
        return None

    loop = Loop(cnp, shape)
    if loop.operand(gdata) is None:  # (it is v0)
        return None
    lines = loop.lines
    terms = {0: ["v0"]}  # member -> the terms its incoming gradient sums
    outputs: dict = {}  # (node, nr, input shape) -> the terms that edge's gradient sums
    external = []
    for mi, m in enumerate(members):
        op = m.op
        mctx = m.ctx
        mine = terms.pop(mi)
        gvar = mine[0]
        if len(mine) > 1:
            gvar = f"g{mi}"
            lines.append(f"{gvar} = {' + '.join(mine)}")
        for i, (nxt, nr) in enumerate(m.next_functions):
            if nxt is None:
                continue
            j = index.get(nxt)
            if j is None:
                external.append(nxt)
            spec = _specs.get((op, i)) or _spec(op, i)
            if spec is None:
                continue
            if op._passes_grad[i]:
                term = gvar  # an identity rule (add, sub's first input): no term of its own
                if j is not None:
                    terms.setdefault(j, []).append(term)
                else:
                    outputs.setdefault((nxt, nr, mctx.shapes[i]), []).append(term)
                continue
            fname, kinds = spec
            args = []
            for kind, name in kinds:
                if kind == 0:
                    args.append(gvar)
                elif kind == 1:
                    args.append(loop.param(mctx.params[name]))
                else:
                    s = mctx.saved[name]
                    if s.version_cell[0] != s.version:
                        s.check(m, mctx.output_index.get(name, 0))
                    e = s.expr
                    if e is not None and e.value is None:
                        var = loop.expr(e)  # a lazy tensor: computed here, never stored
                    else:
                        var = loop.operand(s.array())
                    if var is None:
                        return None
                    args.append(var)
            loop.function(fname, op.vjps[i], op)
            term = f"t{len(lines)}"
            lines.append(f"{term} = {fname}({', '.join(args)})")
            if j is not None:
                terms.setdefault(j, []).append(term)
            else:
                outputs.setdefault((nxt, nr, mctx.shapes[i]), []).append(term)
    # one kernel output per distinct sum; the incoming gradient itself is passed on as it is
    # (shared, as node by node), so an add's two inputs get one tensor, not two equal copies.
    # A gradient to an input broadcast along rows (``b`` of ``a + b``) is summed over the rows
    # in the loop, so it is never written at the full shape.
    exprs: list = []
    sums: list = []
    which = []  # per edge leaving the region: None for ``grad`` itself, else (list, index)
    for (_, _, in_shape), summed in outputs.items():
        expr = " + ".join(summed)
        if expr == "v0" and lead is None:
            which.append(None)
            continue
        if in_shape != shape and _summed_in_loop(loop, shape, in_shape):
            into, item = sums, (expr, in_shape)  # (its output has the input's shape)
        else:
            into, item = exprs, expr
        if item not in into:
            into.append(item)
        which.append((into, into.index(item)))
    later = None if lead is None else lead.ctx.total
    if later is not None:
        # the loss itself, left lazy by its sum (``lazy.Total``): added up in this pass too,
        # in blocks of rows (the loop's own, or of a length that divides the size)
        var = None if later.value is not None else loop.expr(later.inner)
        if var is None or (loop.cols is None and not _lanes(loop, shape)):
            later = None
    n_out = len(exprs)
    for k, expr in enumerate(exprs + [expr for expr, _ in sums]):
        lines.append(f"o{k} = {expr}")
    if later is not None:
        lines.append(f"o{n_out + len(sums)} = {var}")

    results = {}
    if exprs or sums or later is not None:
        mod = loop.module("fused", n_out, len(sums), later is not None)
        if mod is None:
            return None
        outs = []
        for _ in exprs:
            outs.append(cpu.empty(shape, cnp))
        cols = [np.empty(in_shape, cnp) for _, in_shape in sums] if sums else []
        tot = None if later is None else np.empty(1, cnp)
        if not loop.run(mod, outs, cols, tot):
            return None  # every rule compiles on its own; should a composition not type
        if later is not None:
            later.set(tot.reshape(()))
        made = []
        for out in outs:
            made.append(_wrap(Tensor, out))
        results[id(exprs)] = made
        if cols:
            results[id(sums)] = [_wrap(Tensor, c) for c in cols]
        outs = cols = made = None

    contributions = []
    for (nxt, nr, in_shape), w in zip(outputs, which):
        gt = g if w is None else results[id(w[0])][w[1]]
        if gt._data.shape != in_shape:
            gt = sum_to(gt, in_shape)
        contributions.append(((nxt, nr), gt))
    results = gt = None
    if lead is not None:
        members.append(lead)  # it ran too (its one edge leads into the region)
    return members, contributions, external
