"""The op registry: each op's forward and backward rule, defined once, side by side.

Vocabulary of the rules (after PyTorch's derivatives.yaml):

- ``grad``: the gradient flowing into the op's output;
- the op's own argument names (``x``, ``y``, ``cond``, scalar parameters such as ``exponent``);
- ``result``: the op's output.

**Elementwise ops** are a scalar Python function plus one pointwise rule per input. The backend
compiles the scalar function into a loop kernel per dtype. A rule may use operators and the
names of other elementwise ops (``cos``, ``where``, ``sign``) and nothing else, so it runs two
ways: compiled into a fused kernel (its globals rebound to the scalar functions) when the
backward pass is not recorded, and on Tensors (its globals are then the ops themselves, so the
backward pass is differentiable) under ``create_graph=True``. Broadcasting is not the rule's job:
the framework sums gradients back to each input's shape.

**Composite ops** (reductions, linear algebra, movement) have an explicit ``forward(ctx, ...)``
that returns arrays, and a ``backward(ctx, grad)`` written with Tensor ops.
"""

from __future__ import annotations

import inspect
from types import MappingProxyType

import numpy as np

from .. import dtypes as D
from ..autograd.grad_mode import _state as _grad_state
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.anomaly_mode import _state as _anomaly_state
from ..autograd.anomaly_mode import forward_stack as _anomaly_forward_stack
from ..autograd.graph import _TENSOR, Node, _sequence, _tensor_class, edge_of, grad_accumulator
from .. import backend
from ..backend import cpu
from . import lazy as _lazy_module

REGISTRY: dict[str, OpDef] = {}


# ---------------------------------------------------------------- saved tensors


class SavedTensor:
    """A tensor kept for backward, with the version it had when saved.

    A lazy tensor (``ops/lazy.py``) is kept as its expression: ``data`` is None until
    ``array()`` evaluates it, and the backward fusion may compute it instead."""

    __slots__ = ("tensor", "data", "expr", "version_cell", "version", "is_output", "dtype")

    def __init__(self, tensor, is_output: bool, dtype=None):
        self.is_output = is_output
        # an output is not kept as a Tensor (that would make a cycle through its grad_fn)
        self.tensor = None if is_output else tensor
        expr = self.expr = tensor._lazy
        if expr is None:
            self.data = tensor._data
        else:
            self.data = None
            expr.saved = True  # (a forward evaluation keeps it if it is heavy: lazy.py)
        self.dtype = tensor.dtype if dtype is None else dtype
        self.version_cell = tensor._version_cell
        self.version = tensor._version_cell[0]

    @classmethod
    def _of(cls, tensor, data, version_cell, version, dtype):
        """One rebuilt from what ``Elementwise._record_small`` kept (``tensor`` None: the
        op's output)."""
        s = object.__new__(cls)
        s.is_output = tensor is None
        s.tensor = tensor
        s.expr = None
        s.data = data
        s.dtype = dtype
        s.version_cell = version_cell
        s.version = version
        return s

    def array(self):
        """The saved values as an array."""
        a = self.data
        if a is None:
            a = self.data = self.expr.evaluate()
            self.expr = None
        return a

    def check(self, node, index: int):
        if self.version_cell[0] != self.version:
            shape = list(self.array().shape)
            kind = {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int",
                    "bool": "Bool"}[self.dtype.name]
            if self.is_output:
                where = f", which is output {index} of {node.name()},"
            elif self.tensor.grad_fn is not None:
                fn = self.tensor.grad_fn
                where = f", which is output {self.tensor._output_nr} of {fn.name()},"
            else:
                where = ""
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [numbagrad.{kind}Tensor {shape}]{where} is at "
                f"version {self.version_cell[0]}; expected version {self.version} instead. Hint: "
                "enable anomaly detection to find the operation that failed to compute its "
                "gradient, with numbagrad.autograd.set_detect_anomaly(True, check_nan=False)."
            )

    def unpack(self, node, index: int = 0):
        from ..tensor import Tensor

        self.check(node, index)
        if not self.is_output:
            return self.tensor
        t = Tensor._make(self.array(), requires_grad=False)
        t._version_cell = self.version_cell
        if is_grad_enabled():
            # a saved output re-enters the graph through the node that made it
            t._requires_grad = True
            t.grad_fn = node
            t._output_nr = index
        return t


class OpNode(Node):
    """The backward node of a registry op; the class name is PyTorch's (``MulBackward0``).

    ``attach`` makes it and sets ``ctx``, the forward's ``Ctx``."""

    op: OpDef
    ctx: Ctx

    def saved(self, name):
        self.check_not_released()
        s = self.ctx.saved[name]
        return s.unpack(self, self.ctx.output_index.get(name, 0))

    def apply(self, grads):
        return self.op.backward_node(self, grads)

    def release(self):
        if self._has_saved:
            self._released = True
            self.ctx.saved = {}


class _LeanCtx:
    """``ctx`` of a node ``Elementwise._record_small`` made: that keeps no Ctx, only the
    node's ``_lean`` tuple; the Ctx is built the first time something reads it (the general
    backward path, ops/fusion.py, ``saved``), and from then on the node uses it."""

    def __get__(self, node, cls=None):
        if node is None:
            return self
        lean = node._lean
        if lean is None:
            raise AttributeError("ctx")
        _, compute, params, shape, saved, names = lean
        ctx = Ctx()
        ctx.params = params
        ctx.compute = compute
        ctx.shapes = [shape] * len(node.next_functions)
        for name, (t, data, cell, version) in zip(names, saved):
            ctx.saved[name] = SavedTensor._of(t, data, cell, version, compute)
            if t is None:
                ctx.output_index = {name: 0}
        node.__dict__["ctx"] = ctx
        node._lean = None
        return ctx


class ElementwiseNode(OpNode):
    """An elementwise op's node. One that ``Elementwise._record_small`` recorded holds
    ``_lean``: (the rules' plan or None, compute dtype, params, shape, saved, their names),
    each saved tensor as (tensor or None for the output, array, version cell, version). When
    its gradient is as lean as its inputs were (1-d, C-contiguous, of the compute dtype and
    the inputs' shape) it runs here: no Ctx, no dtype, device or broadcast bookkeeping (W3 in
    benchmarks/). Anything else reads ``ctx`` (built then) and takes the general path."""

    ctx = _LeanCtx()
    _lean = None

    def apply(self, grads):
        if self._lean is not None and not _grad_state.enabled:
            grad = grads[0]
            outs = self.lean_grads(grad._data)
            if outs is not None:
                Tensor = _TENSOR[0]
                res = []
                for a in outs:
                    if a is None:
                        res.append(None)
                    elif a is grad._data:  # ``grad`` passed on: the tensor itself, shared
                        res.append(grad)
                    else:
                        g = object.__new__(Tensor)  # Tensor._make, inlined
                        g._data = a
                        g._version_cell = [0]
                        res.append(g)
                return tuple(res)
        if self._released:
            self.check_not_released()
        return self.op.backward_node(self, grads)

    def lean_grads(self, gdata, release=False, carried=False):
        """The lean path on the array ``gdata`` of this node's gradient: a list of one array
        or None per input (an input whose rule passes the gradient on gets ``gdata``, the
        very array); None when the node must take the general path (a Ctx was built, the node
        was released, or ``gdata`` is not as lean as the inputs). With ``release`` the saved
        arrays go after (``release()``); ``carried``: ``gdata`` is what another lean node
        computed for its input of this node's output, so a C-contiguous array."""
        lean = self._lean
        if lean is None or lean[0] is None or self._released:
            return None
        plan, _, _, shape, saved, _ = lean
        cnp = plan[0]
        if not carried and (type(gdata) is not np.ndarray or not gdata.flags.carray):
            if (type(gdata) is not np.ndarray or gdata.strides != (0,)
                    or gdata.dtype is not cnp or gdata.shape != shape):
                return None
            # one value broadcast (a small 1-d sum's gradient, ``expand``): as an array, so
            # the node stays lean (and no broadcast loop is compiled for it)
            gdata = np.ascontiguousarray(gdata)
        if gdata.dtype is not cnp or gdata.shape != shape:
            return None
        out = [None] * plan[2]
        for k, rule in plan[1]:  # the inputs that need a gradient
            if rule is True:
                out[k] = gdata
                continue
            slots, pnames, entry, _ = rule
            if pnames or len(slots) != 2 or entry is None:
                out[k] = self._lean_rule(rule, gdata, lean)
                continue
            # the common rule: two arrays (the gradient and a saved one: mul, sin, exp, ...)
            j, i = slots
            a = np.empty(shape, cnp)
            entry(a, gdata if j is None else self._lean_saved(j),
                  gdata if i is None else self._lean_saved(i))
            out[k] = a
        if release and saved:
            self._released = True
            saved.clear()
        return out

    def _lean_rule(self, rule, gdata, lean):
        """One rule of the lean path, in general: any number of arrays and parameters, and on
        first use finding the rule kernel's compiled entry point."""
        slots, pnames, entry, k = rule
        arrays = [gdata if j is None else self._lean_saved(j) for j in slots]
        pvals = self.op._param_values(lean[1], lean[2], pnames) if pnames else ()
        if entry is not None:
            a = np.empty(lean[3], lean[0][0])
            entry(a, *arrays, *pvals)
            return a
        # the first time: the rule's kernel, then its compiled entry point
        mod = self.op.vjp_kernel(k, lean[1])
        a = cpu.launch_small(mod, arrays, lean[0][0], pvals)
        rule[2] = mod.ENTRIES.get(len(arrays) + 8 * len(pvals))
        return a

    def _lean_saved(self, j):
        """The lean node's saved array ``j``, checked against in-place changes."""
        _, data, cell, version = self._lean[4][j]
        if cell[0] != version:
            self._check_saved(j)
        return data

    def _check_saved(self, j):
        """Raise the in-place modification error for the lean node's saved tensor ``j``."""
        name = self._lean[5][j]
        ctx = self.ctx
        ctx.saved[name].check(self, ctx.output_index.get(name, 0))

    def release(self):
        if self._has_saved:
            self._released = True
            lean = self._lean
            if lean is None:
                self.ctx.saved = {}
            else:  # the saved arrays go; a Ctx built later has none
                lean[4].clear()


_NO_INDEX = MappingProxyType({})
_RESULT_INDEX = MappingProxyType({"result": 0})  # (a saved result is output 0)


class Ctx:
    """What a forward leaves for its backward: attributes, plus tensors via ``save``."""

    # which output a saved output is (only ``save_output`` writes one, then into its own dict)
    output_index = _NO_INDEX
    # elementwise ops: which inputs take their gradient back to the CPU (None: all stay),
    # and the dtype each input's gradient is cast back to (None: all have the compute dtype)
    to_cpu = None
    dtypes = None

    def __init__(self):
        self.saved: dict[str, SavedTensor] = {}

    def save(self, **tensors):
        for name, t in tensors.items():
            if t is not None:
                self.saved[name] = SavedTensor(t, is_output=False)

    def __getitem__(self, name):
        """A saved tensor, checked against in-place changes (inside ``backward``)."""
        return self.node.saved(name)

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


def _node_class(name: str, op) -> type:
    from .saved_names import saved_properties  # (it imports this module; once per class)

    attrs = {"op": op, "__module__": "numbagrad.autograd.graph",
             "_fusable": 1 if op.kind == "elementwise" else 2 if op.fuses_backward else 0}
    # PyTorch's grad_fn._saved_self, _saved_dim, ...: properties, read only when asked
    attrs.update(saved_properties(op, name))
    return type(name, (ElementwiseNode if op.kind == "elementwise" else OpNode,), attrs)


class OpDef:
    """Common part of every registry entry."""

    kind = "op"
    # whether the engine offers this op's nodes to ops/fusion.py (elementwise ops, and a
    # whole-tensor sum whose broadcast gradient the region reads as a scalar)
    fuses_backward = False

    def __init__(self, name: str, node: str | None):
        if name in REGISTRY:
            raise ValueError(f"op {name!r} registered twice")
        self.name = name
        self.node_name = node
        self._node_classes: dict[str, type] = {}
        REGISTRY[name] = self

    def node_class(self, name: str | None = None) -> type:
        name = name or self.node_name
        cls = self._node_classes.get(name)
        if cls is None:
            cls = self._node_classes[name] = _node_class(name, self)
        return cls

    def __repr__(self):
        return f"<op {self.name}>"


def needs_grad(tensors) -> bool:
    """Whether an op on ``tensors`` is recorded (views are brought up to date on the way)."""
    if not is_grad_enabled():
        return False
    req = False
    for t in tensors:
        if t is not None:
            # a view whose base was written in place re-derives its flags via the property
            req = (t.requires_grad if t._base is not None else t._requires_grad) or req
    return req


def device_backend(tensors, scalars_ok=False):
    """The backend module all Tensors in ``tensors`` live on, with PyTorch's error when they
    differ. With ``scalars_ok`` a 0-d CPU tensor may join CUDA tensors (it acts as a scalar)."""
    Tensor = _TENSOR[0] if _TENSOR else _tensor_class()

    first = None
    for t in tensors:
        if not isinstance(t, Tensor):
            continue
        on_cpu = type(t._data) is np.ndarray
        if on_cpu and scalars_ok and t._data.ndim == 0:
            continue
        if first is None:
            first = t
        elif on_cpu != (type(first._data) is np.ndarray):
            raise RuntimeError(
                "Expected all tensors to be on the same device, but found at least two devices, "
                f"{first.device} and {t.device}!"
            )
    if first is None or type(first._data) is np.ndarray:
        return cpu
    return backend.of(first._data)


def attach(op: OpDef, ctx: Ctx, inputs, outputs, node_name=None, non_diff=(), edges=None):
    """Record ``outputs`` as made by ``op`` from ``inputs`` (called only when grad is needed).

    ``edges``: the inputs' ``edge_of``, when the caller has them already."""
    cls = op._node_classes.get(node_name) or op.node_class(
        node_name or getattr(ctx, "node_name", None)
    )
    node = cls(edges or tuple([edge_of(t) for t in inputs]), len(outputs))
    node.ctx = ctx
    if ctx.saved:
        node._has_saved = True
    if len(outputs) == 1 and not non_diff:  # most ops
        out = outputs[0]
        out._requires_grad = True
        out._grad_fn = node
        if out._output_nr:
            out._output_nr = 0
        return node
    for k, out in enumerate(outputs):
        if k in non_diff:
            continue
        out._requires_grad = True
        out._grad_fn = node
        if out._output_nr != k:
            out._output_nr = k
    return node


# ---------------------------------------------------------------- elementwise ops


class Elementwise(OpDef):
    """An op defined by a scalar function of ``n_in`` tensor arguments and scalar parameters.

    ``dtype``: how inputs promote and what the output is: ``"same"`` (promoted inputs),
    ``"float"`` (promoted, ints computed as the default float), ``"bool"`` (comparisons),
    ``"where"`` (the first input is a bool condition).
    """

    kind = "elementwise"

    def __init__(self, name, fn, n_in, node, dtype, refuse_bool=None, refuse_float=None,
                 refuse_bool_operand=None):
        super().__init__(name, node)
        self.scalar = fn
        names = list(inspect.signature(fn).parameters)
        self.arg_names = names[:n_in]
        self.param_names = names[n_in:]
        self.n_in = n_in
        self.dtype_rule = dtype
        # (exception type, message) raised for bool inputs; None: bool is computed
        self.refuse_bool = refuse_bool
        self.refuse_float = refuse_float  # the same for float inputs (bitwise ops)
        # the same for one bool operand (a tensor or a Python bool) among others (sub). Bool
        # operands never take the lean or lazy paths, so the general path's check suffices
        self.refuse_bool_operand = refuse_bool_operand
        # whether a gradient that does not vary with the saved values is still recorded as their
        # function (derivative zero), as PyTorch's formula for the op is (relu's)
        self.zero_second_order = False
        self.vjps: list = [None] * n_in
        self.vjp_args: list = [()] * n_in
        self._passes_grad: list = [False] * n_in
        self.__doc__ = fn.__doc__
        # per NumPy dtype of same-dtype CPU inputs: (compute dtype, out dtype, kernel module)
        self._plans: dict = {}
        # per tuple of "input requires grad" flags: (names of inputs to save, save result?)
        self._saves: dict = {}
        self._vjp_kernels: dict = {}
        # whether a large result may stay an unevaluated expression (ops/lazy.py)
        # (not an op that refuses floats: the lazy path computes before any dtype check)
        self._defers = dtype in ("same", "float") and refuse_float is None
        # the op as a plain function of its tensors (``numbagrad.sin``, ``Tensor.__mul__``):
        # ops of one or two tensors and no scalar parameters
        self.function = _function(self) if n_in < 3 and not self.param_names else None

    def defvjp(self, *rules):
        """Set the pointwise rule of each input (``None``: not differentiable).

        With one function and a unary op it works as a decorator.
        """
        if len(rules) != self.n_in:
            raise ValueError(f"{self.name}: expected {self.n_in} rules, got {len(rules)}")
        self.vjps = list(rules)
        self.vjp_args = [
            tuple(inspect.signature(r).parameters) if r is not None else () for r in rules
        ]
        # rules that pass ``grad`` through unchanged (add, sub's first input): no kernel
        self._passes_grad = [args == ("grad",) and _returns_its_argument(r)
                             for r, args in zip(rules, self.vjp_args)]
        return rules[0] if self.n_in == 1 else None

    # ---- dtypes

    def compute_dtype(self, args):
        values = args[1:] if self.dtype_rule == "where" else args
        dt = D.result_type(*values)
        if self.dtype_rule == "float":
            dt = D.to_float(dt)
        refused = self._refused(dt)
        if refused is None and self.refuse_bool_operand is not None:
            for v in values:
                if type(v) is bool or getattr(v, "dtype", None) is D.bool_:
                    refused = self.refuse_bool_operand
        if refused is not None:
            kind, message = refused
            raise kind(message)
        return dt

    def _refused(self, dt):
        """(exception type, message) when the op has no kernel for ``dt``, else None."""
        if dt is D.bool_:
            return self.refuse_bool
        if dt.is_floating_point:
            return self.refuse_float
        return None

    def out_dtype(self, compute):
        return D.bool_ if self.dtype_rule == "bool" else compute

    # ---- kernels

    def _helpers(self, fn, seen=None):
        """(name, scalar fn) of every elementwise op ``fn`` calls, callees first."""
        from ..backend.codegen import names_used

        seen = {} if seen is None else seen

        for name in sorted(names_used(fn)):
            op = REGISTRY.get(name)
            if isinstance(op, Elementwise) and name not in seen and op.scalar is not fn:
                op._helpers(op.scalar, seen)
                seen[name] = op.scalar
        return seen

    def kernel(self, dtype, be=cpu):
        """The forward loop kernel for ``dtype`` on backend ``be`` (on the CPU: the module of
        loop kernels, see ``cpu.get_elementwise_kernel``)."""
        key = (self.name, "fwd", dtype.name)

        def body():
            helpers = list(self._helpers(self.scalar).items()) + [(self.name, self.scalar)]
            return be.scalar_module_body(helpers, self.name, self.n_in, len(self.param_names))

        return be.get_elementwise_kernel(key, dtype.np, body)

    def vjp_kernel(self, i, dtype, be=cpu):
        """The kernel of input ``i``'s pointwise rule (its gradient times ``grad``)."""
        k = self._vjp_kernels.get((i, dtype, be))
        if k is None:
            k = self._vjp_kernels[(i, dtype, be)] = self._build_vjp_kernel(i, dtype, be)
        return k

    def _build_vjp_kernel(self, i, dtype, be):
        key = (self.name, "vjp", i, dtype.name)
        if i == "both":
            tensor_args, params = self._both_args()
            call = [f"_rule{k}({', '.join(self.vjp_args[k])})" for k in (0, 1)]
            entry = f"def _both({', '.join(tensor_args + params)}):\n    return " + " + ".join(call)
            rules = [("_rule0", self.vjps[0]), ("_rule1", self.vjps[1]), ("_both", entry)]
            n_in, n_params = len(tensor_args), len(params)
        else:
            rules = [("_rule", self.vjps[i])]
            n_params = len(self._rule_params(i))
            n_in = len(self.vjp_args[i]) - n_params

        def body():
            helpers = {}
            for _, rule in rules[:2]:
                self._helpers(rule, helpers)
            funcs = list(helpers.items()) + rules
            return be.scalar_module_body(funcs, rules[-1][0], n_in, n_params)

        return be.get_elementwise_kernel(key, dtype.np, body)

    def _both_args(self):
        """(tensor arguments, parameters) of the kernel that adds both inputs' rules, for
        ``x * x``-like calls where both inputs are one tensor: one pass instead of three."""
        tensor_args, params = [], []
        for k in (0, 1):
            names = self._rule_params(k)
            for name in self.vjp_args[k]:
                group = params if name in names else tensor_args
                if name not in group:
                    group.append(name)
        return tensor_args, params

    def _param_values(self, dtype, params, names=None):
        """Scalar parameters typed as the kernel's dtype (optionally only ``names``)."""
        if names is None:
            return [dtype.np.type(v) for v in params]
        return [dtype.np.type(params[self.param_names.index(n)]) for n in names]

    def _rule_params(self, i):
        # a rule lists its tensor arguments first, then the parameters it reads
        if not self.param_names:
            return ()
        return tuple([n for n in self.vjp_args[i] if n in self.param_names])

    # ---- forward

    def _plan(self, np_dtype):
        """How to run inputs that are all CPU tensors of ``np_dtype``, or None when they need
        a cast first (int inputs of a float op) or the general path."""
        plan = None
        dt = D.from_numpy_dtype(np_dtype)
        if self.dtype_rule != "where" and self._refused(dt) is None:
            compute = D.to_float(dt) if self.dtype_rule == "float" else dt
            if compute is dt:
                # with the module's compiled entry points (see ``cpu.launch_small``)
                mod = self.kernel(compute)
                # (results from the lazy threshold up take the path that may defer them)
                small = min(mod.PARALLEL_MIN, _lazy_module.DEFER_MIN_ITEMS)
                plan = (compute, self.out_dtype(compute).np, mod, mod.ENTRIES, small, {})
        self._plans[np_dtype] = plan
        return plan

    def __call__(self, *args):
        if len(args) == self.n_in and self.function is not None:
            return self.function(*args)
        return self._call(args)

    def _call(self, args, tried=False):
        """The op on ``args`` (``tried``: deferring it was tried already, see ``_function``)."""
        Tensor = _TENSOR[0]
        # the lean path: CPU tensors of one dtype, no casts, no scalars (small contiguous ones
        # skip even cpu.run_elementwise and Numba's dispatch)
        n_in = self.n_in
        tensors = args if len(args) == n_in else args[:n_in]
        np_dtype = None
        arrays = []
        for a in tensors:
            if type(a) is not Tensor or type(a._data) is not np.ndarray:
                break
            data = a._data
            if np_dtype is None:
                np_dtype = data.dtype
            elif data.dtype is not np_dtype and data.dtype != np_dtype:
                break
            arrays.append(data)
        else:
            plan = self._plans.get(np_dtype, _NO_PLAN)
            if plan is _NO_PLAN:
                plan = self._plan(np_dtype)
            if plan is not None:
                compute, out_np, mod, entries, par_min, leans = plan
                a0 = arrays[0]
                if (a0.size >= _lazy_module.DEFER_MIN_ITEMS and self._defers and not tried
                        and len(args) > n_in):
                    # (an op with parameters, ``x ** 2``: deferred before they are converted)
                    lazy = _defer(self, args)
                    if lazy is not None:
                        return lazy
                    tried = True
                if len(args) == n_in:
                    params = pvals = ()
                else:
                    params = args[n_in:]
                    pvals = self._param_values(compute, params)
                # Tensor._make, inlined: this runs once per op
                result = object.__new__(Tensor)
                shape = a0.shape
                small = a0.size < par_min and a0.ndim == 1 and a0.flags.carray and (
                    n_in == 1 or (n_in == 2 and arrays[1].shape == shape
                                  and arrays[1].flags.carray)
                )
                if small:
                    entry = entries.get(n_in + 8 * len(pvals))
                    if entry is not None:
                        out = np.empty(shape, out_np)
                        entry(out, *arrays, *pvals)
                        result._data = out
                    else:
                        result._data = cpu.launch_small(mod, arrays, out_np, pvals)
                else:
                    if a0.size >= _lazy_module.DEFER_MIN_ITEMS and self._defers and not tried:
                        lazy = _defer(self, args)
                        if lazy is not None:
                            return lazy
                    result._data = cpu.run_elementwise(mod, arrays, out_np, pvals)
                result._version_cell = [0]
                if _grad_state.enabled and self.dtype_rule != "bool":
                    for a in tensors:
                        # a view re-derives its flags through the property
                        if a._requires_grad if a._base is None else a.requires_grad:
                            if small:  # (inputs that match the result: the lean record)
                                self._record_small(tensors, params, compute, result, leans)
                            else:
                                self._record(tensors, tensors, params, compute, result, cpu)
                            break
                elif _grad_state.inference:  # made under inference_mode(): an inference tensor
                    result._inference = True
                return result
        return self._call_general(args, tried)

    def _call_general(self, args, tried=False):
        Tensor = _TENSOR[0]

        if self._defers and not tried:
            lazy = _defer(self, args)
            if lazy is not None:
                return lazy
        tensors = args[: self.n_in]
        params = args[self.n_in :]
        be = device_backend(tensors, scalars_ok=True)
        compute = self.compute_dtype(tensors)
        arrays = []
        for k, a in enumerate(tensors):
            want = D.bool_ if (self.dtype_rule == "where" and k == 0) else compute
            arrays.append(_as_array(a, want))
        pvals = self._param_values(compute, params)
        out = be.run_elementwise(self.kernel(compute, be), arrays, self.out_dtype(compute).np, pvals)
        result = Tensor._make(out)
        inputs = [a if isinstance(a, Tensor) else None for a in tensors]
        if self.dtype_rule != "bool" and needs_grad(inputs):
            self._record(tensors, inputs, params, compute, result, be)
        return result

    def _record(self, tensors, inputs, params, compute, result, be, edges=None, flags=0):
        """Attach the backward node: save what the rules of the inputs needing grad read.
        ``edges`` and ``flags``: ``_edges(inputs)``, when the caller has them."""
        # (no comprehensions, Ctx() and attach inlined: this runs once per op)
        if edges is None:
            edges, flags = _edges(inputs)
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
        saves = self._saves.get(flags)
        if saves is None:
            saves = self._save_plan(flags)
        ctx = object.__new__(Ctx)
        ctx.saved = saved = {}
        ctx.params = params
        ctx.compute = compute
        ctx.shapes = shapes
        if cast:
            # gradients go back in each input's own dtype
            ctx.dtypes = [None if a is None or a.dtype is compute else a.dtype for a in inputs]
        Tensor = _TENSOR[0]
        if be is not cpu:
            # a 0-d CPU tensor used with CUDA tensors gets its gradient back on the CPU
            ctx.to_cpu = [isinstance(a, Tensor) and not a.is_cuda for a in tensors]
        for k, name in saves[0]:
            t = tensors[k]
            tt = type(t)
            if tt is Tensor:
                if t._data.dtype != cnp:
                    t = _as_tensor(t, compute, like=result)
            elif tt is not Tensor._Lazy or t._lazy.np_dtype != cnp:  # (a lazy one is kept)
                t = _as_tensor(t, compute, like=result)
            saved[name] = SavedTensor(t, False, compute)
        if saves[1]:
            saved["result"] = SavedTensor(result, True, compute)
            ctx.output_index = _RESULT_INDEX
        # attach() and Node.__init__, inlined
        node = object.__new__(self._node_classes.get(self.node_name) or self.node_class())
        node.next_functions = tuple(edges)
        node._sequence_nr = next(_sequence)
        if _anomaly_state.enabled:
            node._anomaly_stack = _anomaly_forward_stack()
        node.ctx = ctx
        if saved:
            node._has_saved = True
        result._requires_grad = True
        result._grad_fn = node

    def _record_small(self, tensors, params, compute, result, leans):
        """``_record`` for the lean forward path: every input a CPU tensor of the compute dtype,
        1-d, C-contiguous and of the result's shape, so no dtype, device or broadcast
        bookkeeping is needed, and the backward may take ``ElementwiseNode``'s lean path."""
        edges, flags = _edges(tensors)
        self._attach_lean(tensors, params, tuple(edges), flags, compute, result, leans)

    def _attach_lean(self, tensors, params, edges, flags, compute, result, leans):
        """The node of a lean record (``_record_small``), given the inputs' ``edges`` and
        ``flags`` (bit k: input k needs a gradient); ``leans``: the dtype's lean plans."""
        plan = leans.get(flags)
        if plan is None:
            plan = leans[flags] = self._lean_plan(flags, compute)
        cls, rules, saves, save_result, names = plan
        saved = []
        for k in saves:
            t = tensors[k]
            cell = t._version_cell
            saved.append((t, t._data, cell, cell[0]))
        data = result._data
        if save_result:
            saved.append((None, data, result._version_cell, 0))
        # attach() and Node.__init__, inlined (this runs once per recorded op)
        node = object.__new__(cls)
        node.next_functions = edges
        node._sequence_nr = next(_sequence)
        if _anomaly_state.enabled:
            node._anomaly_stack = _anomaly_forward_stack()
        # no Ctx: ElementwiseNode builds one if something asks (x * x: both gradients go to
        # one place, which the general path sums in one kernel)
        node._lean = (rules if flags != 3 or edges[0] != edges[1] else None, compute, params,
                      data.shape, saved, names)
        if saved:
            node._has_saved = True
        result._requires_grad = True
        result._grad_fn = node

    def _lean_plan(self, flags, compute):
        """What ``_record_small`` keeps and ``ElementwiseNode.lean_grads`` computes when bit k
        of ``flags`` says input k needs a gradient: (the node class, rules, indices of the
        inputs to save, whether to save the result, the saved tensors' names). ``rules`` is
        (compute dtype, one (k, rule) per input k that gets a gradient, the number of inputs):
        the rule is True when it passes ``grad`` on, else ``[array arguments, parameter names,
        entry point, k]``, an array argument being None for ``grad`` or its index among the
        saved tensors (the rule kernel's compiled entry point, see ``cpu.launch_small``, is
        found on first use)."""
        saves, save_result = self._saves.get(flags) or self._save_plan(flags)
        names = tuple([name for _, name in saves]) + (("result",) if save_result else ())
        rules = []
        for k in range(self.n_in):
            if not flags >> k & 1 or self.vjps[k] is None:
                continue
            if self._passes_grad[k]:
                rules.append((k, True))
            else:
                pnames = self._rule_params(k)
                slots = tuple([None if n == "grad" else names.index(n) for n in self.vjp_args[k]
                               if n not in pnames])
                rules.append((k, [slots, pnames, None, k]))
        cls = self._node_classes.get(self.node_name) or self.node_class()
        return (cls, (compute.np, tuple(rules), self.n_in), tuple([k for k, _ in saves]),
                save_result, names)

    def _save_plan(self, flags):
        """(input index, name) of the inputs to save, and whether to save the result, when
        bit k of ``flags`` says input k needs a gradient: what those inputs' rules read."""
        used = set()
        for k, args_ in enumerate(self.vjp_args):
            if flags >> k & 1:
                used.update(args_)
        plan = self._saves[flags] = (
            [(k, name) for k, name in enumerate(self.arg_names) if name in used],
            "result" in used,
        )
        return plan

    # ---- backward

    def backward_node(self, node, grads):
        Tensor = _TENSOR[0] if _TENSOR else _tensor_class()
        ctx = node.ctx
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
            and not create_graph and be is cpu and None not in self.vjps
            and ctx.shapes[0] == ctx.shapes[1] == gdata.shape and ctx.dtypes is None
            and not node._post_hooks
        ):
            # both inputs are one tensor (x * x): its two gradients would be summed by the
            # engine anyway, so one kernel computes the sum (a post hook would see them apart)
            tensor_args, params = self._both_args()
            arrays = self._saved_arrays(node, tensor_args, gdata)
            pvals = self._param_values(compute, ctx.params, params) if params else ()
            kernel = self.vjp_kernel("both", compute, be)
            return Tensor._make(be.run_elementwise(kernel, arrays, cnp, pvals)), None
        shapes, to_cpu, dtypes = ctx.shapes, ctx.to_cpu, ctx.dtypes
        out = []
        for i, rule in enumerate(self.vjps):
            if rule is None or nexts[i][0] is None:
                out.append(None)
                continue
            if create_graph:
                values = []
                for name in self.vjp_args[i]:
                    if name == "grad":
                        values.append(grad)
                    elif name in saved:
                        values.append(node.saved(name))
                    else:
                        # on Tensors a scalar parameter is a 0-d tensor of the compute dtype
                        p = ctx.params[self.param_names.index(name)]
                        values.append(_as_tensor(p, compute))
                g = rule(*values)
                if not isinstance(g, Tensor):
                    g = _as_tensor(g, compute)
                if self.zero_second_order and not g._requires_grad:
                    sources = [v for v in values if isinstance(v, Tensor) and v.requires_grad]
                    if sources:
                        g = depends_on(g, *sources)
            else:
                if self._passes_grad[i]:
                    g = grad  # shared, as PyTorch does: gradients are never written in place
                else:
                    arrays = self._saved_arrays(node, self.vjp_args[i], gdata)
                    names = self._rule_params(i)
                    pvals = self._param_values(compute, ctx.params, names) if names else ()
                    kernel = self._vjp_kernels.get((i, compute, be)) or self.vjp_kernel(
                        i, compute, be
                    )
                    g = object.__new__(Tensor)  # Tensor._make, inlined
                    if be is cpu and cpu.is_small_flat(arrays, cnp, kernel.PARALLEL_MIN):
                        g._data = cpu.launch_small(kernel, arrays, cnp, pvals)
                    else:
                        g._data = be.run_elementwise(kernel, arrays, cnp, pvals)
                    g._version_cell = [0]
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

    @staticmethod
    def _saved_arrays(node, names, gdata):
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


_NO_PLAN = object()
_NO_EDGE = (None, 0)


def _edges(inputs):
    """Each input's ``edge_of`` (None, a scalar, has none), and flags: bit k set when input k
    needs a gradient. (edge_of inlined for a tensor that is not a view.)"""
    edges = []
    flags = 0
    bit = 1
    for a in inputs:
        if a is None:
            e = _NO_EDGE
        elif a._base is not None:  # a view: its flags come through the properties
            e = edge_of(a)
            if e[0] is not None:
                flags |= bit
        elif a._requires_grad:
            fn = a._grad_fn
            e = (fn, a._output_nr) if fn is not None else (grad_accumulator(a), 0)
            flags |= bit
        else:
            e = _NO_EDGE
        edges.append(e)
        bit <<= 1
    return edges, flags


# what an op's function takes besides Tensors (a NumPy array is refused by the op itself)
_NUMBERS = (bool, int, float, np.bool_, np.integer, np.floating, np.ndarray)


def operand(a) -> bool:
    """Whether ``a`` may be an operand of an elementwise op or operator: a Tensor or a number.
    Anything else (None, a string, a list) makes an operator return NotImplemented, so Python
    raises its "unsupported operand type(s)" error, as with PyTorch's tensors."""
    return isinstance(a, OPERANDS[0])


OPERANDS: list = []  # [(Tensor, *_NUMBERS)], set by tensor.py once the class exists


def refuse(name, args, names=("input", "other"), method=False):
    """PyTorch's TypeError for the first of ``args`` that is no operand (``operand``); a
    method's positions do not count ``self``."""
    for k, a in enumerate(args):
        if not operand(a):
            raise TypeError(f"{name}(): argument '{names[k]}' (position {k + 1 - method}) "
                            f"must be Tensor, not {type(a).__name__}")


def _function(op, operator=False, method=False):
    """``op`` as a plain function of its one or two tensors: what ``numbagrad.<name>``, the
    Tensor methods and the operators are. It runs the leanest path inline, one or two small
    1-d C-contiguous CPU tensors of one dtype (W3 in benchmarks/: a plain function's call
    costs 0.04 us against 0.13 for an object's ``__call__``, and the checks for the argument
    count go); anything else goes on to ``op._call``. An argument that is neither a Tensor
    nor a number raises PyTorch's TypeError; the ``operator`` variant (``Tensor.__add__``)
    returns NotImplemented instead (its ``.operator``), and the ``method`` one (``x.add``)
    counts the positions after ``self`` (its ``.method``)."""
    plans = op._plans
    records = op.dtype_rule != "bool"
    defers = op._defers
    record = op._record_small
    attach = op._attach_lean
    call = op._call
    name = op.name

    if op.n_in == 1:
        def function(input):
            Tensor = _TENSOR[0]
            kind = type(input)
            if kind is Tensor:
                da = input._data
                if type(da) is np.ndarray and da.ndim == 1 and da.flags.carray:
                    plan = plans.get(da.dtype, _NO_PLAN)
                    if plan is _NO_PLAN:
                        plan = op._plan(da.dtype)
                    if (plan is not None and defers
                            and da.size >= _lazy_module.DEFER_MIN_ITEMS):
                        lazy = _defer(op, (input,))
                        return lazy if lazy is not None else call((input,), True)
                    if plan is not None and da.size < plan[4]:
                        entry = plan[3].get(1)
                        if entry is not None:
                            out = np.empty(da.shape, plan[1])
                            entry(out, da)
                            result = object.__new__(Tensor)  # Tensor._make, inlined
                            result._data = out
                            result._version_cell = [0]
                            if records and _grad_state.enabled:
                                if input._base is not None:  # a view: the general record
                                    if input.requires_grad:
                                        record((input,), (), plan[0], result, plan[5])
                                elif input._requires_grad:  # edge_of, inlined
                                    fn = input._grad_fn
                                    attach((input,), (), ((fn, input._output_nr),) if fn
                                           is not None else ((grad_accumulator(input), 0),),
                                           1, plan[0], result, plan[5])
                            elif _grad_state.inference:
                                result._inference = True
                            return result
            elif kind is Tensor._Lazy and defers:  # (a large result, not computed yet)
                lazy = _defer(op, (input,))
                return lazy if lazy is not None else call((input,), True)
            elif not operand(input):
                return NotImplemented if operator else refuse(name, (input,), method=method)
            return call((input,))
    else:
        def function(input, other):
            Tensor = _TENSOR[0]
            ki = type(input)
            ko = type(other)
            if ki is Tensor and ko is Tensor:
                da = input._data
                db = other._data
                if (type(da) is np.ndarray and type(db) is np.ndarray and da.ndim == 1
                        and db.dtype is da.dtype and db.shape == da.shape and da.flags.carray
                        and db.flags.carray):
                    plan = plans.get(da.dtype, _NO_PLAN)
                    if plan is _NO_PLAN:
                        plan = op._plan(da.dtype)
                    if (plan is not None and defers
                            and da.size >= _lazy_module.DEFER_MIN_ITEMS):
                        lazy = _defer(op, (input, other))
                        return lazy if lazy is not None else call((input, other), True)
                    if plan is not None and da.size < plan[4]:
                        entry = plan[3].get(2)
                        if entry is not None:
                            out = np.empty(da.shape, plan[1])
                            entry(out, da, db)
                            result = object.__new__(Tensor)  # Tensor._make, inlined
                            result._data = out
                            result._version_cell = [0]
                            if records and _grad_state.enabled:
                                if input._base is not None or other._base is not None:
                                    # a view: its flags come through the properties
                                    if input.requires_grad or other.requires_grad:
                                        record((input, other), (), plan[0], result, plan[5])
                                    return result
                                flags = 0
                                ea = eb = _NO_EDGE
                                if input._requires_grad:  # edge_of, inlined
                                    fn = input._grad_fn
                                    ea = ((fn, input._output_nr) if fn is not None
                                          else (grad_accumulator(input), 0))
                                    flags = 1
                                if other._requires_grad:
                                    fn = other._grad_fn
                                    eb = ((fn, other._output_nr) if fn is not None
                                          else (grad_accumulator(other), 0))
                                    flags |= 2
                                if flags:
                                    attach((input, other), (), (ea, eb), flags, plan[0],
                                           result, plan[5])
                            elif _grad_state.inference:
                                result._inference = True
                            return result
            elif defers and (ki is Tensor._Lazy or ko is Tensor._Lazy):
                # (a large result, not computed yet)
                lazy = _defer(op, (input, other))
                return lazy if lazy is not None else call((input, other), True)
            elif ki is Tensor and (ko is float or ko is int):
                # a small float tensor and a Python number (``y + 2``, ``z * 3``): the flat
                # loop with the number as a scalar of the tensor's dtype, which is the result's
                # (the general path's result_type, casts and broadcast took 27 us on 2x2)
                da = input._data
                if type(da) is np.ndarray and da.dtype.kind == "f" and da.flags.carray:
                    plan = plans.get(da.dtype, _NO_PLAN)
                    if plan is _NO_PLAN:
                        plan = op._plan(da.dtype)
                    if plan is not None and da.size < plan[4]:
                        out = np.empty(da.shape, plan[1])
                        plan[2].FLAT["as"](out.reshape(-1), da.reshape(-1), da.dtype.type(other))
                        result = object.__new__(Tensor)  # Tensor._make, inlined
                        result._data = out
                        result._version_cell = [0]
                        if records and _grad_state.enabled and (
                                input._requires_grad if input._base is None
                                else input.requires_grad):
                            op._record((input, other), (input, None), (), plan[0], result, cpu)
                        elif _grad_state.inference:
                            result._inference = True
                        return result
            if (ki is not Tensor or ko is not Tensor) and not (operand(input)
                                                                and operand(other)):
                return (NotImplemented if operator
                        else refuse(name, (input, other), method=method))
            return call((input, other))

    function.__name__ = function.__qualname__ = op.name
    function.__module__ = "numbagrad"
    args = "input" if op.n_in == 1 else "input, other"
    function.__doc__ = op.__doc__ or f"{op.name}({args}) -> Tensor: elementwise, by a Numba kernel."
    function.op = op
    if not (operator or method):
        function.operator = _function(op, operator=True)
        function.method = _function(op, method=True)
    return function


def _defer(op, args):
    """``op(*args)`` as a lazy tensor, or None (see ``ops/lazy.py``); recorded if needed."""
    lazy = _lazy_module
    if not lazy.ENABLED or lazy._off[0]:
        return None
    Tensor = _TENSOR[0]
    out = lazy.defer(op, args, Tensor, Tensor._Lazy)
    if out is None:
        return None
    if _grad_state.enabled:
        n_in = op.n_in
        tensors = args if len(args) == n_in else args[:n_in]
        inputs = []
        for a in tensors:
            inputs.append(a if isinstance(a, Tensor) else None)
        edges, flags = _edges(inputs)  # (flags: which inputs need a gradient)
        if flags:
            op._record(tensors, inputs, args[n_in:], D.from_numpy_dtype(out._lazy.np_dtype),
                       out, cpu, edges, flags)
    elif _grad_state.inference:
        out._inference = True
    return out


def _returns_its_argument(rule) -> bool:
    marker = object()
    try:
        return rule(marker) is marker
    except Exception:  # an arithmetic rule on a plain object: not the identity
        return False




def _as_array(a, dt):
    Tensor = _TENSOR[0]  # (an import statement per call costs about 1 us)

    if isinstance(a, Tensor):
        arr = a._data
        return arr if arr.dtype == dt.np else arr.astype(dt.np)
    return np.array(a, dtype=dt.np)


def _as_tensor(a, dt, like=None):
    """``a`` (a Tensor or a scalar) as a Tensor of dtype ``dt`` (on ``like``'s device)."""
    Tensor = _TENSOR[0]

    if isinstance(a, Tensor):
        return a if a.dtype is dt else a.to(dt)
    arr = np.array(a, dtype=dt.np)
    if like is not None and like.is_cuda:
        arr = backend.of(like._data).to_device(arr)
    return Tensor._make(arr)


def sum_to(g, shape):
    """Sum a broadcast gradient back to ``shape`` (the framework's job, never a rule's)."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    dims = list(range(lead))
    for i, n in enumerate(shape):
        if n == 1 and g.shape[lead + i] != 1:
            dims.append(lead + i)
    if dims:
        g = g.sum(dim=tuple(dims), keepdim=True)
    if lead:
        g = g.reshape(shape)
    elif g.shape != shape:
        g = g.expand(shape)
    return g


def unary(name, node=None, dtype="same", refuse_bool=None, refuse_float=None,
          refuse_bool_operand=None):
    """Register a one-input elementwise op from its scalar definition."""

    def deco(fn):
        return Elementwise(name, fn, 1, node or _default_node(name), dtype, refuse_bool,
                           refuse_float, refuse_bool_operand)

    return deco


def binary(name, node=None, dtype="same", n_in=2, refuse_bool=None, refuse_float=None,
           refuse_bool_operand=None):
    """Register a two-input (or ``n_in``-input) elementwise op from its scalar definition."""

    def deco(fn):
        return Elementwise(name, fn, n_in, node or _default_node(name), dtype, refuse_bool,
                           refuse_float, refuse_bool_operand)

    return deco


def _default_node(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_")) + "Backward0"


# ---------------------------------------------------------------- composite ops


class Composite(OpDef):
    """An op with an explicit array ``forward(ctx, *args)`` and a Tensor ``backward(ctx, grad)``.

    Tensors among the positional arguments (or inside a list/tuple argument) are the inputs;
    ``backward`` returns one gradient per input, in that order.
    """

    kind = "composite"
    # ``lean(*args, **kwargs)``: the op's result by a shorter path that records exactly what
    # this class's ``__call__`` would, or None when the arguments need the general one
    lean = None

    def __init__(self, name, fn, node, view=False):
        super().__init__(name, node)
        self.forward = fn
        self.backward = None
        self.view = view
        self.__doc__ = fn.__doc__

    def defvjp(self, fn):
        self.backward = fn
        return fn

    def __call__(self, *args, **kwargs):
        if self.lean is not None:
            out = self.lean(*args, **kwargs)
            if out is not None:
                return out
        Tensor = _TENSOR[0] if _TENSOR else _tensor_class()
        ctx = CompositeCtx()
        inputs = []
        for a in args:
            if isinstance(a, Tensor):
                inputs.append(a)
            elif isinstance(a, (list, tuple)) and a and all(isinstance(t, Tensor) for t in a):
                inputs.extend(a)
        if len(inputs) == 1 and (inputs[0]._lazy is not None
                                 or type(inputs[0]._data) is np.ndarray):
            ctx.backend = cpu  # the common case: one CPU tensor
        else:
            ctx.backend = device_backend(inputs)
        res = self.forward(ctx, *args, **kwargs)
        multi = isinstance(res, tuple)
        if multi:
            outs = [Tensor._make(a) for a in res]
        else:
            if type(res) is _lazy_module.Total:  # (a loss whose sum is left to backward)
                out = object.__new__(Tensor._Lazy)
                out._lazy = res
            else:
                out = object.__new__(Tensor)  # Tensor._make, inlined
                out._data = res
            out._version_cell = [0]
            outs = [out]
        if self.view or ctx.view:
            _mark_views(inputs[0], outs, ctx.node_name or self.node_name)
        elif _grad_state.inference:  # (Tensor._make marked the outputs of a multi-output op)
            outs[0]._inference = True
        if self.backward is not None and needs_grad(inputs):
            if len(inputs) == 1 and len(outs) == 1:  # (most: no comprehensions, 1 us less)
                t, o = inputs[0], outs[0]
                ctx.input_shapes, ctx.input_dtypes = [t.shape], [t.dtype]
                ctx.out_shapes, ctx.out_dtypes = [o.shape], [o.dtype]
            else:
                ctx.input_shapes = [t.shape for t in inputs]
                ctx.input_dtypes = [t.dtype for t in inputs]
                ctx.out_shapes = [o.shape for o in outs]
                ctx.out_dtypes = [o.dtype for o in outs]
            if ctx.save_outputs:
                for name, idx in ctx.save_outputs.items():
                    ctx.save_output(name, outs[idx], idx)
            attach(self, ctx, inputs, outs, non_diff=ctx.non_differentiable)
        if multi:
            return ctx.wrap(outs)
        return outs[0]

    def backward_node(self, node, grads):
        Tensor = _TENSOR[0] if _TENSOR else _tensor_class()
        node.ctx.node = node
        if node._num_outputs == 1:
            grads = grads[0]
        else:
            # outputs that received no gradient contribute zeros
            grads = [
                g if g is not None else Tensor._make(node.ctx.backend.zeros(s, d.np))
                for g, s, d in zip(grads, node.ctx.out_shapes, node.ctx.out_dtypes)
            ]
        res = self.backward(node.ctx, grads)
        if not isinstance(res, tuple):
            res = (res,)
        out = []
        for g, (nxt, _), dt in zip(res, node.next_functions, node.ctx.input_dtypes):
            if g is not None and nxt is not None and g.dtype is not dt:
                g = g.to(dt)
            out.append(g if nxt is not None else None)
        return tuple(out)


def _mark_views(x, outs, node_name):
    """Make ``outs`` views of ``x``: one storage, one version counter, one base."""
    base = x._base if x._base is not None else x
    kind = None
    if len(outs) > 1:
        kind = node_name  # outputs of a multi-view op may not be modified in place
    elif not is_grad_enabled() and base._requires_grad:
        kind = "no_grad"
    for o in outs:
        o._version_cell = x._version_cell
        o._base = base
        o._view_src = base._grad_fn
        o._view_kind = kind
        # a view is an inference tensor exactly when its base is one, whatever the mode
        if o._inference is not base._inference:
            o._inference = base._inference


def composite(name, node=None, view=False):
    """Register a composite op: decorate its array forward, then ``@op.defvjp`` its backward."""

    def deco(fn):
        return Composite(name, fn, node or _default_node(name), view)

    return deco


@composite("depends_on", node="AliasBackward0")
def depends_on(ctx, g, *sources):
    """``g``, recorded as a function of ``sources`` with derivative zero (see
    ``Elementwise.zero_second_order``): a second derivative through it is zero, not an error
    that nothing requires grad."""
    return g._data


@depends_on.defvjp
def depends_on_vjp(ctx, grad):
    Tensor = _tensor_class()
    zeros = [Tensor._make(ctx.backend.zeros(shape, dt.np))
             for shape, dt in zip(ctx.input_shapes[1:], ctx.input_dtypes[1:])]
    return (grad, *zeros)
