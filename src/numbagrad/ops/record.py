"""Recording: what a forward call leaves for its backward.

``Ctx`` and ``SavedTensor`` are what every op's backward reads; ``attach`` makes the node of a
general call; ``record_lean`` the node of a call on the fast path (``ops/dispatch.py``), whose
record is the node's own slots (no Ctx is built unless something asks for ``node.ctx``).
"""

from __future__ import annotations

from functools import cached_property
from types import MappingProxyType
from typing import NamedTuple

import numpy as np

from .. import backend
from ..dtypes import _BY_NP
from .._tensor import PLAIN_SUBCLASSES, LazyTensor, Tensor
from ..autograd.anomaly_mode import _state as _anomaly_state
from ..autograd.anomaly_mode import forward_stack as _anomaly_forward_stack
from ..autograd.anomaly_mode import run_checked
from ..autograd.grad_mode import _state as _grad_state
from ..autograd.graph import Node, _sequence, edge_of, saved_hooks
from ..autograd.saved import PackedTensor, SavedTensor
from ..backend import cpu
from . import fusion
from .saved_names import saved_properties

# ---------------------------------------------------------------- saved tensors


def saved_cast(t, compute, like):
    """Operand ``t`` of another dtype than ``compute``, saved for backward: the values are a
    copy in ``compute`` (what the rule kernels read), but the version checked, the tensor
    unpacked and named in errors are ``t``'s own, as PyTorch saves the operand itself."""
    # (the copy on the arrays: a recorded ``.to()`` call costs 5 us, and nothing unpacks it)
    copy = t
    if t._lazy is None:
        copy = Tensor._make(backend.of(t._data).clone(t._data, compute.np))
    s = SavedTensor(as_tensor(copy, compute, like), False, compute)
    s.tensor = t
    s.dtype = t.dtype
    s.version_cell = t._version_cell
    s.version = t._version_cell[0]
    return s


_NO_INDEX = MappingProxyType({})
RESULT_INDEX = MappingProxyType({"result": 0})  # (a saved result is output 0)


class Ctx:
    """What a forward leaves for its backward: attributes, plus tensors via ``save``."""

    # (slots for what every composite call sets: stores that never grow the instance's dict,
    # 0.2 us of a call; anything else an op sets goes in the dict)
    __slots__ = ("saved", "backend", "input_shapes", "input_dtypes", "__dict__")

    # which output a saved output is (only ``save_output`` writes one, then into its own dict)
    output_index = _NO_INDEX
    # elementwise ops: which inputs take their gradient back to the CPU (None: all stay),
    # and the dtype each input's gradient is cast back to (None: all have the compute dtype)
    to_cpu = None
    dtypes = None
    # whether a node will read what is saved (False: a composite call that is not recorded)
    recorded = True

    def __init__(self):
        self.saved: dict[str, SavedTensor] = {}

    def save(self, **tensors):
        if not self.recorded:
            return
        for name, t in tensors.items():
            if t is not None:
                self.saved[name] = SavedTensor(t, is_output=False)

    def __getitem__(self, name):
        """A saved tensor, checked against in-place changes (inside ``backward``)."""
        return self.node.saved(name)

    def needs_grad(self, k) -> bool:
        """Whether input ``k`` gets a gradient from this node (inside ``backward``): a formula
        skips the others (a loss's target), as PyTorch's generated code does."""
        return self.node.next_functions[k][0] is not None

    def save_output(self, name, t, index=0, dtype=None):
        self.saved[name] = SavedTensor(t, True, dtype)
        if type(self.output_index) is not dict:  # (the shared read-only defaults)
            self.output_index = dict(self.output_index)
        self.output_index[name] = index


class CompositeCtx(Ctx):
    """A composite op's ctx: what its forward may set, with the defaults when it does not."""

    view = False  # the outputs are views of the first input
    node_name = None  # a node name other than the op's (SumBackward1)
    non_differentiable = ()  # indices of outputs that get no gradient
    save_outputs = None  # {name: output index} to save for backward
    wrap = tuple  # what a multi-output forward's Tensors are returned as
    total = None  # sum: its output's ``lazy.Total``, which the backward fusion may compute
    dim_arg = None  # a reduction's ``dim`` as passed (PyTorch's ``_saved_dim``: saved_names.py)


# ---------------------------------------------------------------- nodes


class OpNode(Node):
    """The backward node of a registry op; the class name is PyTorch's (``MulBackward0``).

    ``attach`` makes it and sets ``ctx``, the forward's ``Ctx``."""

    op = None
    ctx: Ctx
    # numbagrad's name of a saved tensor -> PyTorch's, where saved_names.py knows it
    _torch_saved_names = MappingProxyType({})

    def saved(self, name):
        self.check_not_released()
        s = self.ctx.saved[name]
        return s.unpack(self, self.ctx.output_index.get(name, 0))

    def apply(self, grads):
        return self.op.backward_node(self, grads)

    def apply_unpacked(self, grads, checked=False):
        """``apply`` (``run_checked`` with ``checked``: anomaly mode) with the saved tensors
        that hooks packed unpacked for its duration, each once, in PyTorch's order; an
        elementwise op's backward reads them broadcast to their saved shapes."""
        saved = self.ctx.saved
        held = {}
        fit = "broadcast" if self.op.kind == "elementwise" else "exact"
        try:
            for name in self._packed:
                s = saved.get(name)
                if type(s) is PackedTensor:
                    held[name] = s
                    saved[name] = s.fresh(fit)
            return run_checked(self, grads) if checked else self.apply(grads)
        finally:
            saved.update(held)  # (packed again: a retained graph unpacks them again)

    def mark_packed(self, names):
        """Note that hooks packed the saved tensors ``names``: the engine unpacks them around
        the node's backward (``apply_unpacked``), which then runs on its own (no fusion)."""
        order = self._torch_saved_names
        self._packed = tuple(sorted({*self._packed, *names}, key=lambda n: (
            self.ctx.saved[n].is_output, order.get(n, n))))
        self._hooked = True
        self._fusable = 0

    def release(self):
        if self._has_saved:
            self._released = True
            self.ctx.saved = {}


class FusableNode(OpNode):
    """A node the engine may run with others as one kernel: it offers the region it leads
    (``run_region``, ops/fusion.py). ``_fusable`` is 2 here, for a whole-tensor sum's node
    (``op.fuses_backward``), which only leads a region: its one-value gradient is read there
    as a scalar; 1 for an elementwise op's (``ElementwiseNode``), which may also join one."""

    _fusable = 2

    def run_region(self, grads, pending, buffers):
        """Run the region grown from this node as one kernel: (members, contributions,
        external), or None when this node should run on its own (``fusion.run``)."""
        return fusion.run(self, grads, pending, buffers)


class LeanPlan(NamedTuple):
    """How a lean node of one op computes its inputs' gradients, for one compute dtype, one
    set of inputs needing a gradient and one layout of operands (made once, kept on the op's
    ``dispatch.Plan``)."""

    cls: type  # the node class
    compute: object  # the compute dtype (the gradients', the saved arrays')
    cnp: np.dtype  # ... as a NumPy dtype
    # ``gradients(node, gdata, release, carried)``: ``ElementwiseNode.lean_grads`` for this
    # plan (``lean_gradients``)
    gradients: object
    # ``record(operands, params, result, edges)``: makes the node and links ``result`` to it
    # (``with_record``)
    record: object
    names: tuple  # the kept items' names (what the rules call them)


# A node's first steps, shared by ``new_node`` and each lean plan's generated ``record``
# (one template: a recorded op makes a node, and a call costs 0.06 us of it).
_NODE_START = """\
    node = new(cls)
    node.next_functions = edges_
    node._sequence_nr = next(sequence)
    if anomaly.enabled:
        node._anomaly_stack = forward_stack()
"""
_NODE_ENV = {"new": object.__new__, "sequence": _sequence, "anomaly": _anomaly_state,
             "forward_stack": _anomaly_forward_stack}


def with_record(plan, saves, save_result, numbers, params, broadcast):
    """``plan`` with its ``record``, the function ``record_lean`` makes its lean nodes with:
    ``record(operands, params, result, edges_)`` makes the node of class ``plan.cls`` with
    input edges ``edges_``, keeps what the rules read (``saves``: ``(index, name)`` pairs, then
    the result if ``save_result``; bit k of ``numbers``: operand k was a number), the op's
    parameters if it has any (``params``), the operands' shapes if one was broadcast, and links
    ``result`` to it. Generated per plan, straight-line code, from the node's first steps
    (``_NODE_START``): which attributes a plan sets is known when it is made.

    ``node._saved`` is one flat tuple, four items per kept value: the tensor (None for the
    result, ``NUMBER`` for a number), its array (or the number), its version cell and the
    version it had."""
    lines = ["def record(operands, params, result, edges_):", _NODE_START.rstrip("\n"),
             "    node._lean = plan"]
    if params:
        lines.append("    node._params = params")
    lines.append("    node._shape = result._data.shape")
    if broadcast:
        lines.append("    node._shapes = (operands[0]._data.shape, operands[1]._data.shape)")
    items = []
    for j, (k, _) in enumerate(saves):
        if numbers >> k & 1:
            items.append(f"NUMBER, operands[{k}], CONST_CELL, 0")
        else:
            lines += [f"    t{j} = operands[{k}]",
                      f"    c{j} = t{j}._version_cell"]
            items.append(f"t{j}, t{j}._data, c{j}, c{j}[0]")
    if save_result:
        items.append("None, result._data, result._version_cell, 0")
    if items:
        lines += [f"    node._saved = ({', '.join(items)})",
                  "    node._has_saved = True"]
    lines += ["    result._requires_grad = True",
              "    result._grad_fn = node"]
    env = dict(_NODE_ENV, cls=plan.cls, NUMBER=NUMBER, CONST_CELL=_CONST_CELL)
    exec("\n".join(lines), env)  # noqa: S102 (our own source, built above)
    env["plan"] = plan = plan._replace(record=env["record"])  # (what its nodes' _lean is)
    return plan


def lean_gradients(op, flags, numbers, saves, save_result, compute, single=0, spread=0):
    """The function a lean node of ``op`` computes its inputs' gradients with, when bit k of
    ``flags`` says input k needs one and bit k of ``numbers`` that operand k was a number:
    ``gradients(node, gdata, release, carried)``, what ``ElementwiseNode.lean_grads`` returns.
    An operand the result broadcast (bit k of ``single``: of one value, which the rules read
    as a number; of ``spread``: of more values, which they read spread to the result's shape)
    gets its gradient summed back to its shape (``node._shapes``).

    It is generated per plan from the template below, straight-line code that reads each kept
    item once, checks its version, and calls each rule kernel's serial loop through its entry
    point (``cpu.flat_entry``): a loop over rules and their arguments cost 0.6 us per node,
    half of a small node's backward."""
    kept = [k for k, _ in saves] + ([None] if save_result else [])  # operand per kept item
    names = [name for _, name in saves] + (["result"] if save_result else [])
    env = {"empty": np.empty, "ndarray": np.ndarray, "cnp": compute.np, "compute": compute,
           "op": op, "first": cpu.flat_entry, "as_lean": _as_lean, "sum_to": cpu.sum_to_array,
           "spread": _spread}
    lines = ["def gradients(node, gdata, release, carried):",
             "    if node._released:",
             "        return None",
             "    shape = node._shape",
             "    if not carried and (type(gdata) is not ndarray or not gdata.flags.carray):",
             "        gdata = as_lean(gdata, shape, cnp)",
             "        if gdata is None:",
             "            return None",
             "    if gdata.dtype is not cnp or gdata.shape != shape:",
             "        return None",
             "    nd = len(shape)",
             "    saved = node._saved"]
    read = {}  # kept item -> the expression of its value as a rule's argument

    def item(j):
        if j not in read:
            if kept[j] is not None and numbers >> kept[j] & 1:  # a number: no version
                lines.append(f"    d{j} = saved[{4 * j + 1}]")
                read[j] = f"d{j}"
            elif kept[j] is not None and (single | spread) >> kept[j] & 1:
                # an operand broadcast to the result: its one value, as a number, or its
                # values spread to the result's shape (a small copy)
                lines.append(f"    d{j} = saved[{4 * j + 1}]")
                lines.append(f"    if saved[{4 * j + 2}][0] != saved[{4 * j + 3}]:")
                lines.append(f"        node._check({j})")
                lines.append(f"    d{j} = d{j}.reshape(-1)[0]" if single >> kept[j] & 1
                             else f"    d{j} = spread(d{j}, shape)")
                read[j] = f"d{j}"
            else:
                lines.append(f"    d{j} = saved[{4 * j + 1}]")
                lines.append(f"    if saved[{4 * j + 2}][0] != saved[{4 * j + 3}]:")
                lines.append(f"        node._check({j})")
                read[j] = f"d{j}"
        return read[j]

    if op.always_saves:  # (every kept value is checked, not only those the rules read)
        for j in range(len(kept)):
            item(j)
    out = []
    for k in range(op.n_in):
        if not flags >> k & 1 or op.vjps[k] is None:
            out.append("None")
            continue
        if op._passes_grad[k]:
            if (single | spread) >> k & 1:
                lines.append(f"    g{k} = sum_to(gdata, node._shapes[{k}])")
                out.append(f"g{k}")
            else:
                out.append("gdata")
            continue
        pnames = op._rule_params(k)
        values, pattern = [], ""
        for name in op.vjp_args[k]:
            if name == "grad":
                values.append("gdata")
                pattern += "a"
            elif name not in pnames:
                j = names.index(name)
                values.append(item(j))
                pattern += ("s" if kept[j] is not None and (numbers | single) >> kept[j] & 1
                            else "a")
        if pnames:
            env[f"p{k}"] = pnames
            lines.append(f"    params = op._param_values(compute, node._params, p{k})")
            values.append("*params")
        args = ", ".join(values)
        env[f"kernels{k}"] = kernels = op.vjp_kernel(k, compute)
        env[f"entries{k}"] = kernels.ENTRIES
        env[f"key{k}"] = pattern + "p" * len(pnames)
        env[f"names{k}"] = cpu.ranked(env[f"key{k}"])
        # (every array of the shape of the result, read by the loop of its rank)
        lines += [f"    g{k} = empty(shape, cnp)",
                  f"    entry = entries{k}.get(names{k}[nd])",
                  "    if entry is None:  # (the first call finds the loop's entry point)",
                  f"        first(kernels{k}, key{k}, g{k}, [{args}], cnp)",
                  "    else:",
                  f"        entry(g{k}, {args})"]
        if (single | spread) >> k & 1:
            lines.append(f"    g{k} = sum_to(g{k}, node._shapes[{k}])")
        out.append(f"g{k}")
    if kept:  # (with ``release`` the saved arrays go, ``ElementwiseNode.release``)
        lines += ["    if release:",
                  "        node._released = True",
                  "        node._saved = ()"]
    lines.append(f"    return [{', '.join(out)}]")
    exec("\n".join(lines), env)  # noqa: S102 (our own source, built above)
    return env["gradients"]


class ElementwiseNode(FusableNode):
    """An elementwise op's node.

    One recorded on the fast path (``record_lean``) keeps no Ctx, only these attributes:
    ``_lean`` (its ``LeanPlan``), ``_params`` (the op's parameters), ``_shape`` (the result's
    shape, every operand's that is an array, unless ``_shapes`` names each operand's) and
    ``_saved``: one item per kept value, unpacked as ``(tensor, data, version cell, version)``;
    ``tensor`` is None for the op's output and ``NUMBER`` for a Python number (``data`` is then
    the number), and ``data`` is the tensor's own array. When its gradient is as lean as its
    inputs were (C-contiguous, of the compute dtype and shape) it is computed here on arrays;
    anything else reads ``ctx`` (built then from the attributes) and takes the op's general
    backward."""

    _fusable = 1
    _params = ()
    _saved = ()  # (a lean node that keeps nothing)
    _shapes = None  # the operands' shapes, when one is broadcast (else all are ``_shape``)

    def apply(self, grads):
        if self._lean is not None and not _grad_state.enabled:
            grad = grads[0]
            outs = self.lean_grads(grad._data)
            if outs is not None:
                make = Tensor._make
                return tuple([None if a is None else grad if a is grad._data else make(a)
                              for a in outs])
        if self._released:
            self.check_not_released()
        return self.op.backward_node(self, grads)

    def lean_grads(self, gdata, release=False, carried=False):
        """This node's input gradients from the array ``gdata``: one array or None per input
        (an input whose rule passes the gradient on gets ``gdata`` itself); None when the node
        must take the general path (a Ctx was built, the node was released, or ``gdata`` is
        not as lean as the inputs). With ``release`` the saved arrays go after (``release``);
        ``carried``: ``gdata`` is what another lean node computed, so a C-contiguous array."""
        plan = self._lean
        return None if plan is None else plan.gradients(self, gdata, release, carried)

    def _check(self, j):
        """Raise the in-place modification error for the lean node's kept tensor ``j``."""
        name = self._lean.names[j]
        self.ctx.saved[name].check(self, 0)  # (building the ctx ends the lean record)

    def saved_item(self, name):
        """The lean node's kept value ``name`` as a SavedTensor, or None if it kept none."""
        names = self._lean.names
        if name not in names:
            return None
        j = 4 * names.index(name)
        t, data, cell, version = self._saved[j:j + 4]
        if t is NUMBER:  # (an operand that was a number is saved as PyTorch wraps it)
            return SavedTensor(as_tensor(data, self._lean.compute), False, self._lean.compute)
        return SavedTensor._of(t, data, cell, version, self._lean.compute)

    @cached_property
    def ctx(self):
        """The Ctx the general backward reads, built from a lean node's slots the first time
        something asks (a node recorded by ``attach`` has it set)."""
        ctx = Ctx()
        ctx.params = self._params
        ctx.compute = self._lean.compute
        ctx.shapes = (list(self._shapes) if self._shapes is not None
                      else [self._shape] * len(self.next_functions))
        for name in self._lean.names if self._saved else ():  # (none once released)
            ctx.saved[name] = s = self.saved_item(name)
            if s.is_output:
                ctx.output_index = RESULT_INDEX
        self._lean = self._saved = None  # (the ctx holds the saved values from now on)
        return ctx

    def release(self):
        if self._has_saved:
            self._released = True
            if self._lean is None:
                self.ctx.saved = {}
            else:  # the saved arrays go; a Ctx built later has none
                self._saved = ()


def _general_only(node, gdata, release, carried):
    """The ``LeanPlan.gradients`` of a node whose gradients only the general backward computes."""
    return None


def _spread(a, shape):
    """Array ``a`` broadcast to ``shape``, as a new C-contiguous array (what a lean node's
    rule loops read of an operand the result broadcast)."""
    out = np.empty(shape, a.dtype)
    out[...] = a
    return out


def _as_lean(gdata, shape, cnp):
    """``gdata``, a gradient that is not a C-contiguous array, as one for a lean node of
    ``shape`` and dtype ``cnp``; None when it cannot be (``ElementwiseNode.lean_grads``)."""
    if (type(gdata) is not np.ndarray or any(gdata.strides) or gdata.dtype is not cnp
            or gdata.shape != shape):
        return None
    # one value broadcast (a small sum's gradient, ``expand``): as an array, so the node stays
    # lean (and no broadcast loop is compiled for it)
    return np.ascontiguousarray(gdata)


NUMBER = object()  # the ``tensor`` of a kept item that is a Python number
_CONST_CELL = (0,)  # its version cell: a number is never written in place
_NO_EDGE = (None, 0)


class NotImplementedNode(OpNode):
    """The node of an op PyTorch records without a derivative (``op.derivative_missing``):
    a backward pass through it raises PyTorch's error."""

    def apply(self, grads):
        raise RuntimeError(f"derivative for {self.op.derivative_missing} is not implemented")


def node_class(name: str, op) -> type:
    """A new node class named ``name`` (PyTorch's, ``MulBackward0``) for ``op``."""
    attrs = {"op": op, "__module__": "numbagrad.autograd.graph"}
    # PyTorch's grad_fn._saved_self, _saved_dim, ...: properties, read only when asked
    attrs.update(saved_properties(op, name))
    if getattr(op, "derivative_missing", None):
        base = NotImplementedNode
    else:
        base = (ElementwiseNode if op.kind == "elementwise" else FusableNode
                if op.fuses_backward else OpNode)
    return type(name, (base,), attrs)


def node_name(op, numbers: int) -> str:
    """``op``'s node name for a call where bit k of ``numbers`` says operand k is a Python
    number: its own name, or that of PyTorch's Scalar overload (``op.scalar_nodes``)."""
    names = op.scalar_nodes
    if names is None or not numbers:
        return op.node_name
    return names[0] if numbers & 1 else names[1]


# ---------------------------------------------------------------- recording


def needs_grad(tensors) -> bool:
    """Whether an op on ``tensors`` is recorded (views are brought up to date on the way)."""
    if not _grad_state.enabled:
        return False
    for t in tensors:
        # a view whose base was written in place re-derives its flags via the property
        if t is not None and (t._requires_grad if t._base is None else t.requires_grad):
            return True
    return False


def edges(inputs):
    """Each input's ``edge_of`` (an input that is None or a number has none), and flags: bit
    k set when input k needs a gradient."""
    out = []
    flags = 0
    bit = 1
    for a in inputs:
        e = edge_of(a) if type(a) is Tensor or isinstance(a, Tensor) else _NO_EDGE
        if e[0] is not None:
            flags |= bit
        out.append(e)
        bit <<= 1
    return out, flags


def _new_node():
    source = "\n".join([
        "def new_node(cls, edges_, ctx=None):",
        '    """A node of class ``cls`` with input ``edges_`` (a tuple), as ``Node.__init__``',
        "    makes it (without its type check and argument defaults: a node is made per",
        '    recorded op), with ``ctx`` if given."""',
        _NODE_START.rstrip("\n"),
        "    if ctx is not None:",
        "        node.ctx = ctx",
        "        if ctx.saved:",
        "            node._has_saved = True",
        "    return node"])
    env = dict(_NODE_ENV)
    exec(source, env)  # noqa: S102 (our own source: _NODE_START's steps, then the ctx's)
    return env["new_node"]


new_node = _new_node()


def attach(op, ctx: Ctx, inputs, outputs, node_name=None, non_diff=(), edges=None):
    """Record ``outputs`` as made by ``op`` from ``inputs`` (called only when grad is needed).

    ``node_name``: the node's class name when not the op's (its ctx's ``node_name``);
    ``edges``: the inputs' ``edge_of``, when the caller has them already."""
    cls = op._node_classes.get(node_name) if node_name is not None else None
    if cls is None:
        cls = op.node_class(node_name or getattr(ctx, "node_name", None))
    if not edges:
        edges = []
        for t in inputs:
            edges.append(edge_of(t))
    node = new_node(cls, tuple(edges), ctx)
    if len(outputs) == 1 and not non_diff:  # most ops
        out = outputs[0]
        out._requires_grad = True
        out._grad_fn = node
        if out._output_nr:
            out._output_nr = 0
        return node
    if len(outputs) != 1:
        node._num_outputs = len(outputs)
    for k, out in enumerate(outputs):
        if k in non_diff:
            continue
        out._requires_grad = True
        out._grad_fn = node
        if out._output_nr != k:
            out._output_nr = k
    return node


def record_composite(op, ctx, inputs, outs):
    """Record ``outs``, made by composite ``op`` from ``inputs`` with ``ctx``: the shapes and
    dtypes its backward reads (the outputs' only when there are several), the outputs its
    forward asked to save, the node (``attach``)."""
    if len(ctx.non_differentiable) == len(outs):
        # no output can get a gradient (x.long()): no node, so no edges asked of the inputs
        # (PyTorch's generated code records nothing when no output is differentiable)
        return
    # (loops, not comprehensions: each of those is a call; shapes as the arrays' tuples: a
    # Size per tensor would cost a call each; the edges in the same loop)
    ctx.input_shapes, ctx.input_dtypes = shapes, dtypes = [], []
    edges_ = []
    for t in inputs:
        edges_.append(edge_of(t))
        if t._lazy is None:
            a = t._data
            shapes.append(a.shape)
            dtypes.append(_BY_NP.get(a.dtype) or t.dtype)  # (Tensor.dtype's lookup, no call)
        else:
            shapes.append(t.shape)
            dtypes.append(t.dtype)
    if len(outs) > 1:
        # (read only for several outputs: the zeros of one that gets no gradient, split's
        # sizes)
        ctx.out_shapes, ctx.out_dtypes = shapes, dtypes = [], []
        for o in outs:
            if o._lazy is None:
                a = o._data
                shapes.append(a.shape)
                dtypes.append(_BY_NP.get(a.dtype) or o.dtype)
            else:
                shapes.append(o.shape)
                dtypes.append(o.dtype)
    if ctx.save_outputs:
        for name, idx in ctx.save_outputs.items():
            ctx.save_output(name, outs[idx], idx)
    attach(op, ctx, inputs, outs, ctx.node_name or op.node_name, ctx.non_differentiable,
           edges_)


def record_lean(op, plan, key, operands, params, result):
    """Record ``result = op(*operands, *params)`` made on the fast path, where ``key`` says
    which operands are numbers and which the result broadcast (``dispatch.Plan.leans``).
    Returns at once when no operand needs a gradient."""
    # (operand 0 is a Tensor; operand 1, if any, a Tensor or a number; a view's flags come
    # through its properties, in edge_of)
    t = operands[0]
    e = edge_of(t) if t._requires_grad or t._base is not None else _NO_EDGE
    flags = 0 if e[0] is None else 1
    if len(operands) == 1:
        edges_ = (e,)
    else:
        t = operands[1]
        # (the key says whether operand 1 is a number)
        e1 = (edge_of(t) if not key & _NUMBER_OTHER
              and (t._requires_grad or t._base is not None) else _NO_EDGE)
        if e1[0] is not None:
            flags |= 2
            if flags == 3 and e == e1:
                key |= BOTH  # ``x * x``
        edges_ = (e, e1)
    if not flags:
        return
    lean = plan.leans.get(key | flags)
    if lean is None:
        lean = plan.leans[key | flags] = lean_plan(op, flags, key, plan.compute)
    lean.record(operands, params, result, edges_)


BOTH = 64  # a lean key's bit: both operands are one tensor
_NUMBER_OTHER = 32  # ... operand 1 is a number
# ... operand k (bit k of the key >> 7) is a tensor of one value the result broadcast
SINGLE_INPUT, SINGLE_OTHER = 128, 256
# ... operand k (bit k of the key >> 9) is a tensor of more values the result broadcast
SPREAD_INPUT, SPREAD_OTHER = 512, 1024
BROADCAST = SINGLE_INPUT | SINGLE_OTHER | SPREAD_INPUT | SPREAD_OTHER


def lean_plan(op, flags, key, compute):
    """The ``LeanPlan`` of ``op`` when bit k of ``flags`` says input k needs a gradient and
    bit k of ``key >> 4`` that operand k is a number (``BOTH``: both operands are one tensor,
    whose two gradients one kernel of the general backward adds up; ``SINGLE_*`` and
    ``SPREAD_*``: an operand the result broadcast)."""
    saves, save_result = op._saves.get(flags) or op._save_plan(flags)
    names = tuple([name for _, name in saves]) + (("result",) if save_result else ())
    numbers = key >> 4 & 3
    # (``x * x``: both gradients go to one input, by one kernel of the general backward)
    gradients = _general_only if key & BOTH else lean_gradients(
        op, flags, numbers, saves, save_result, compute, key >> 7 & 3, key >> 9 & 3)
    cls = op.node_class(node_name(op, numbers))
    return with_record(LeanPlan(cls, compute, compute.np, gradients, None, names), saves,
                       save_result, numbers, bool(op.param_names), key & BROADCAST)


def as_tensor(a, dt, like=None):
    """``a`` (a Tensor or a number) as a Tensor of dtype ``dt`` (on ``like``'s device)."""
    if isinstance(a, Tensor):
        return a if a.dtype is dt else a.to(dt)
    arr = np.array(a, dtype=dt.np)
    if like is not None and like.is_cuda:
        arr = backend.of(like._data).to_device(arr)
    return Tensor._make(arr)


def record_general(op, tensors, inputs, params, compute, result, be, edges_=None, flags=0):
    """Record ``result``, made by elementwise ``op`` on the general path: save what the rules of
    the inputs needing grad read. ``edges`` and ``flags``: ``edges(inputs)``, when the caller
    has them."""
    if edges_ is None:
        edges_, flags = edges(inputs)
    shapes = []
    cnp = compute.np
    cast = False  # an input of another dtype than ``compute`` (never a lazy one)
    for a in inputs:
        if a is None:
            shapes.append(())
            continue
        lazy = a._lazy
        if lazy is None:
            data = a._data
            shapes.append(data.shape)
            if data.dtype != cnp:
                cast = True
        else:
            shapes.append(lazy.shape)
    saves = op._saves.get(flags)
    if saves is None:
        saves = op._save_plan(flags)
    ctx = object.__new__(Ctx)  # (Ctx.__init__, without its call)
    saved = ctx.saved = {}
    ctx.params = params
    ctx.compute = compute
    ctx.shapes = shapes
    if cast:
        # gradients go back in each input's own dtype
        ctx.dtypes = [None if a is None or a.dtype is compute else a.dtype for a in inputs]
    if be is not cpu:
        # a 0-d CPU tensor used with CUDA tensors gets its gradient back on the CPU
        ctx.to_cpu = [isinstance(a, Tensor) and not a.is_cuda for a in tensors]
    inputs_saved, result_saved = saves
    for k, name in inputs_saved:
        t = tensors[k]
        tt = type(t)
        if tt is Tensor:
            if t._data.dtype != cnp:
                saved[name] = saved_cast(t, compute, result)
                continue
        elif tt is not LazyTensor or t._lazy.np_dtype != cnp:  # (a lazy one is kept)
            t = as_tensor(t, compute, like=result)
        saved[name] = SavedTensor(t, False, compute)
    if result_saved:
        saved["result"] = SavedTensor(result, True, compute)
        ctx.output_index = RESULT_INDEX
    name = op.node_name
    if op.scalar_nodes is not None:
        name = node_name(op, sum([1 << k for k, a in enumerate(inputs) if a is None]))
    node = new_node(op._node_classes.get(name) or op.node_class(name), tuple(edges_), ctx)
    result._requires_grad = True
    result._grad_fn = node


def record_view(op, x, array, node_name=None, **fields):
    """``array``, a view of CPU tensor ``x``'s array, as view op ``op``'s result: what
    ``call_composite`` makes of such a call (the Tensor, the view's bookkeeping, and when
    ``x`` needs a gradient the node, whose ctx holds ``x``'s shape and dtype and ``fields``)
    without its general steps. The lean hooks of view, transpose, unsqueeze ... call it for
    the arguments they checked."""
    out = Tensor._make(array)
    mark_views(x, (out,), False)
    if _grad_state.enabled and (x._requires_grad if x._base is None else x.requires_grad):
        ctx = object.__new__(CompositeCtx)  # (as call_composite and record_composite make it)
        ctx.saved = {}
        ctx.backend = cpu
        a = x._data
        ctx.input_shapes = [a.shape]
        ctx.input_dtypes = [_BY_NP.get(a.dtype) or x.dtype]
        if fields:
            ctx.__dict__.update(fields)
        attach(op, ctx, None, (out,), node_name or op.node_name, (), [edge_of(x)])
    return out


def pack_saved(op, args, kwargs, result):
    """The op observer (ops/observe.py) while saved-tensor hooks are set: the node the call
    recorded, if it saved tensors, keeps them packed by this thread's innermost hooks
    (``pack_node``). ``kwargs`` is None for an elementwise op, whose ``args`` are its operands
    then its parameters."""
    state = saved_hooks
    if not state.stack:
        return
    outs = result if isinstance(result, (tuple, list)) else (result,)
    for o in outs:
        if not isinstance(o, Tensor):
            continue
        node = o._grad_fn
        if node is None or node._packed or node._sequence_nr < state.mark:
            continue
        ctx = node.__dict__.get("ctx")
        if ctx is None or not ctx.saved:
            continue
        numbers = ()
        if node.op is op and kwargs is None:
            # an operand that was a Python number is saved as a tensor PyTorch never packs
            numbers = [n for k, n in enumerate(op.arg_names) if not isinstance(args[k], Tensor)]
        pack_node(node, ctx, state.stack[-1], outs, numbers, state.writing)


def pack_node(node, ctx, hooks, outs, skip=(), writing=None):
    """Replace each tensor ``node`` saved (but those named in ``skip``) by a PackedTensor of
    ``hooks``: its inputs in the order of PyTorch's names, then its outputs, as PyTorch's
    generated code saves them. The pack hook sees a saved input itself (a copy of its old
    value when it is ``writing``, the tensor an in-place op writes), a saved output as the
    Tensor the call returned. Where PyTorch's names of the node's saved tensors are known, one
    that PyTorch's node does not save (VarBackward0's result) stays as it is."""
    saved = ctx.saved
    order = node._torch_saved_names
    inputs, outputs = [], []
    for name, s in saved.items():
        if type(s) is PackedTensor or name in skip or order and name not in order:
            continue
        if s.is_output:
            outputs.append((ctx.output_index.get(name, 0), name))
        else:
            inputs.append((order.get(name, name), name))
    done = []
    try:
        for _, name in sorted(inputs) + sorted(outputs):
            s = saved[name]
            if s.is_output:
                source = _output_of(node, s, ctx.output_index.get(name, 0), outs)
            else:
                source = s.tensor
                if source is writing:
                    source = _old_value(source)
            saved[name] = PackedTensor.pack(s, source, hooks)
            done.append(name)
    finally:
        if done:
            node.mark_packed(done)


def _output_of(node, s, index, outs):
    """The Tensor the call returned that ``s`` saved (output ``index``), or, where the call
    returned no such Tensor, a new one on its memory whose node is ``node``."""
    if index < len(outs):
        o = outs[index]
        if isinstance(o, Tensor) and (o._lazy is s.expr if o._lazy is not None
                                      else o._data is s.data):
            return o
    return s.unpack(node, index)


def _old_value(x):
    """A copy of ``x`` as it is, in the graph where ``x`` is (what PyTorch's in-place op saves
    as its ``self.clone()``; inplace.py's ``_keep_old_self`` without hooks)."""
    old = Tensor._make(x._data.copy())
    old._grad_fn, old._output_nr = x.grad_fn, x._output_nr
    old._requires_grad = x._requires_grad
    return old


def mark_views(x, outs, multi):
    """Make ``outs`` views of ``x``: one storage, one version counter, one base. ``multi``: the
    outputs of an op that returns several views (split), which may not be modified in place."""
    base = x._base if x._base is not None else x
    # how the view was made, as PyTorch's creation meta: a view of such a view inherits it
    kind = x._view_kind
    if multi:
        kind = "multi"
    elif not _grad_state.enabled:
        kind = "no_grad"
    src = base._grad_fn
    version = x._version_cell[0]
    for o in outs:
        o._version_cell = x._version_cell
        o._base = base
        # (the class defaults of a new tensor are None: written only when they differ)
        if src is not None:
            o._view_src = src
        if version:
            o._view_version = version
        if kind is not None:
            o._view_kind = kind
        # a view is an inference tensor exactly when its base is one, whatever the mode
        if o._inference is not base._inference:
            o._inference = base._inference
