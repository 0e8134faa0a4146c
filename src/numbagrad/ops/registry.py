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

This module holds the definitions; the machinery they bind lives beside it: ops/kernels.py
compiles an elementwise op's kernels, ops/backward.py runs a node's general backward,
ops/dispatch.py and ops/record.py make the calls and their nodes, and ops/table.py is the table
the definitions fill.
"""

from __future__ import annotations

import inspect

from .. import dtypes as D
from .._tensor import Tensor
from ..autograd.graph import sum_to  # noqa: F401 (ops import sum_to from here)
from . import backward, dispatch, kernels, record
from .dispatch import operand, refuse  # noqa: F401 (the ops' functional layer uses them)
from .record import (  # noqa: F401 (ops import them from here with the definitions)
    CompositeCtx, SavedTensor, as_tensor, attach, node_class,
)
from .table import PUBLIC, REGISTRY, Binding, public  # noqa: F401 (the definitions fill them)


class OpDef:
    """Common part of every registry entry."""

    kind = "op"
    # whether REGISTRY lists the op (not the ops users make with ``numbagrad.elementwise``)
    listed = True
    # whether the engine offers this op's nodes to ops/fusion.py (elementwise ops, and a
    # whole-tensor sum whose broadcast gradient the region reads as a scalar)
    fuses_backward = False

    def __init__(self, name: str, node: str | None):
        if name in REGISTRY:
            raise ValueError(f"op {name!r} registered twice")
        self.name = name
        self.node_name = node
        self._node_classes: dict[str, type] = {}
        if self.listed:
            REGISTRY[name] = self

    def node_class(self, name: str | None = None) -> type:
        name = name or self.node_name
        cls = self._node_classes.get(name)
        if cls is None:
            cls = self._node_classes[name] = node_class(name, self)
        return cls

    def __repr__(self):
        return f"<op {self.name}>"


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
        # whether a number parameter is a Scalar PyTorch converts to the op's dtype with its
        # overflow check (``clamp(x, max=1e300)`` on float32 raises, as ``add``'s alpha and an
        # activation's slope): not where its kernel reads the number as a double (``pow``'s
        # exponent, ``softshrink``'s lambd) or it is an operand (``mul_scalar``: ``x * 1e300`` is
        # inf)
        self.checked_params = True
        # whether a gradient that does not vary with the saved values is still recorded as their
        # function (derivative zero), as PyTorch's formula for the op is (relu's)
        self.zero_second_order = False
        # PyTorch's name of the op's backward when that has no derivative itself
        # ("aten::hardsigmoid_backward"): under create_graph the gradient is then recorded as
        # PyTorch's NotImplemented node, whose backward raises
        self.no_second_order = None
        # whether the gradient is a constant (sign's zeros), or a function of the op's
        # parameters saying when it is (x ** 0), or a tuple of either per input: then it is not
        # recorded under create_graph, as PyTorch's formula does not depend on the incoming
        # gradient
        self.constant_gradient = False
        # the node names of PyTorch's Scalar overloads, where they are the op's own: (a number
        # first, a number second), as xlogy's XlogyBackward1 and XlogyBackward2
        self.scalar_nodes: tuple | None = None
        # PyTorch's name of an op it records without a derivative (``aten::heaviside``): the
        # node is NotImplemented, and a backward through it raises
        self.derivative_missing: str | None = None
        # what the op saves whenever it is recorded, beyond what the needed rules read: each is
        # checked against in-place changes at the start of the backward, as PyTorch unpacks
        # every saved variable of a node (PowBackward1 saves self, exponent and result)
        self.always_saves: tuple = ()
        # whether the result is C-contiguous whatever its operands' layout (else it is laid
        # out as they are, as by PyTorch's TensorIterator: backend/layout.py)
        self.contiguous_result = False
        # PyTorch's formulas that negate or subtract an operand (atan2's gradient by its second
        # input, -self; logaddexp's, other - self): rule index -> (the saved operands it does
        # that to, (exception type, message)), raised when one of them is a bool tensor, as
        # PyTorch's neg and sub refuse bool; None: no such rule
        self.bool_operand_vjp: dict | None = None
        self.vjps: list = [None] * n_in
        # the rules a recorded backward (create_graph) applies on Tensors instead, where PyTorch
        # composes the formula with ops the scalar rule cannot call (mul.Scalar: MulBackward1);
        # same parameters as ``vjps``, None keeping the plain rule
        self.recorded_vjps: list | None = None
        self.vjp_args: list = [()] * n_in
        self._passes_grad: list = [False] * n_in
        self.__doc__ = fn.__doc__
        # per NumPy dtype of same-dtype CPU inputs: (compute dtype, out dtype, kernel module)
        self._plans: dict = {}
        # per tuple of "input requires grad" flags: (names of inputs to save, save result?)
        self._saves: dict = {}
        self._vjp_kernels: dict = {}
        self._kernels: dict = {}  # the forward kernel modules, by (compute dtype, backend)
        # whether a large result may stay an unevaluated expression (ops/lazy.py)
        # (not an op that refuses floats: the lazy path computes before any dtype check)
        self._defers = dtype in ("same", "float") and refuse_float is None
        # the op as a plain function of its tensors (``numbagrad.sin``, ``Tensor.__mul__``,
        # ``addcmul``'s)
        self.function = dispatch.make_function(self)

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

    # ---- kernels (ops/kernels.py)

    kernel = kernels.kernel
    vjp_kernel = kernels.vjp_kernel

    def _param_values(self, dtype, params, names=None):
        """Scalar parameters typed as the kernel's dtype (optionally only ``names``)."""
        if names is None:
            return [D.number(v, dtype) for v in params]
        return [D.number(params[self.param_names.index(n)], dtype) for n in names]

    def _rule_params(self, i):
        # a rule lists its tensor arguments first, then the parameters it reads
        if not self.param_names:
            return ()
        return tuple([n for n in self.vjp_args[i] if n in self.param_names])

    # ---- forward

    _call = dispatch.call_general  # (the general path: casts, broadcasting, views, CUDA)
    _record = record.record_general

    def __call__(self, *args):
        if self.function is not None:
            return self.function(*args)
        return self._call(args)

    # ---- backward (ops/backward.py)

    _save_plan = backward.save_plan
    backward_node = backward.elementwise_backward


def _returns_its_argument(rule) -> bool:
    marker = object()
    try:
        return rule(marker) is marker
    except Exception:  # an arithmetic rule on a plain object: not the identity
        return False


def unary(name, node=None, dtype="same", refuse_bool=None, refuse_float=None,
          refuse_bool_operand=None, variants="", aliases=""):
    """Register a one-input elementwise op from its scalar definition; ``variants`` and
    ``aliases``: its public spellings (``public``)."""
    return binary(name, node, dtype, 1, refuse_bool, refuse_float, refuse_bool_operand,
                  variants, aliases)


def binary(name, node=None, dtype="same", n_in=2, refuse_bool=None, refuse_float=None,
           refuse_bool_operand=None, variants="", aliases="", tensors_only=False, check=None):
    """Register a two-input (or ``n_in``-input) elementwise op from its scalar definition;
    ``variants`` and ``aliases``: its public spellings (``public``); ``tensors_only``: they
    refuse a Python number operand (``refusing_numbers``), as PyTorch's do that have no Scalar
    overload (logical_and, gcd), then call ``check`` (if given) on the two tensors."""

    def deco(fn):
        op = Elementwise(name, fn, n_in, node or _default_node(name), dtype, refuse_bool,
                         refuse_float, refuse_bool_operand)
        if variants:
            function = op.function or op
            if op.param_names and "functional" in variants:
                function = _with_defaults(op, fn)
            if tensors_only:
                function = refusing_numbers(function, check=check)
            public(variants, name, aliases, getattr(function, "method", None))(function)
        return op

    return deco


def refusing_numbers(fn, names=("input", "other"), check=None):
    """``fn`` (a function of two tensors, with its ``method`` variant if it has one) refusing
    an operand that is no Tensor with PyTorch's TypeError, as its argument parser does for ops
    without a Scalar overload, then calling ``check`` (if given) on the two tensors. The
    in-place variant refuses too (``inplace_check``: the in-place path may write through the
    op's loop without calling ``fn``)."""
    name = fn.__name__
    plain_method = getattr(fn, "method", None)

    def refuse_numbers(args, method):
        for k, a in enumerate(args):
            if not isinstance(a, Tensor):
                raise TypeError(f"{name}(): argument '{names[k]}' (position "
                                f"{k + 1 - method}) must be Tensor, not {type(a).__name__}")
        if check is not None:
            check(*args)

    def function(input, other):
        refuse_numbers((input, other), False)
        return fn(input, other)

    def method(self, other):
        refuse_numbers((self, other), True)
        return (plain_method or fn)(self, other)

    function.__name__ = function.__qualname__ = method.__name__ = name
    function.__doc__ = fn.__doc__
    if hasattr(fn, "op"):
        function.op = fn.op
    function.method = method
    function.inplace_check = lambda x, other, *rest: refuse_numbers((x, other), True)
    function.check_args = function.inplace_check  # (Tensor.<name>_: before the in-place checks)
    return function


def _with_defaults(op, fn):
    """``op`` as a function whose parameters may be passed by keyword and default to the
    scalar definition's defaults (``F.softplus(x, beta=2)``)."""
    sig = inspect.signature(fn)
    params = [sig.parameters[n] for n in op.param_names]
    call = op.function

    def function(input, *args, **kwargs):
        bound = sig.bind_partial(*([None] * op.n_in), *args, **kwargs)
        values = []
        for p in params:
            v = bound.arguments.get(p.name, p.default)
            if v is inspect.Parameter.empty:
                raise TypeError(f"{op.name}() missing required argument '{p.name}'")
            values.append(v)
        return call(input, *values)

    function.__name__ = function.__qualname__ = op.name
    function.__doc__ = op.__doc__
    function.op = op
    return function


def _default_node(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_")) + "Backward0"


# ---------------------------------------------------------------- composite ops


class Composite(OpDef):
    """An op with an explicit array ``forward(ctx, *args)`` and a Tensor ``backward(ctx, grad)``.

    Tensors among the positional arguments (or inside a list/tuple argument) are the inputs;
    ``backward`` returns one gradient per input, in that order.
    """

    kind = "composite"
    # what its in-place variant refuses of the tensors it reads (ops/inplace.py): None, each
    # composite checks its own; "full": any memory shared with the written tensor
    # (index_add_, scatter_: PyTorch's assert_no_overlap)
    inplace_overlap = None
    # ``inplace_check(x, *args, **kwargs)``: what its in-place variant refuses before it runs,
    # beyond the op's own checks (addmm_'s words for an ``x`` of another shape), or None
    inplace_check = None
    # ``lean(*args, **kwargs)``: the op's result by a shorter path that records exactly what
    # this class's ``__call__`` would, or None when the arguments need the general one
    lean = None
    # whether ``backward`` is given None for an output that received no gradient (PyTorch's
    # undefined gradient, which rules such as svd_backward tell apart from zeros) instead of
    # zeros
    keeps_missing_grads = False

    # ``jvp(result, tangents, *args, **kwargs)``: the output's forward-mode tangent, where
    # ``tangents[i]`` is that of ``args[i]`` (None: it has none; a list for a list of tensors).
    # None: forward-mode AD through the op raises PyTorch's error (ops/forward.py)
    jvp = None

    def __init__(self, name, fn, node, view=False):
        super().__init__(name, node)
        self.forward = fn
        self.backward = None
        self.view = view
        self.__doc__ = fn.__doc__

    def positional(self, args, kwargs):
        """``(args, kwargs)`` with every argument that ``forward`` takes by position moved
        into ``args``: a tensor passed by its keyword (``x.mm(mat2=y)``) is then an input, with
        its edge and its gradient, as one passed by position."""
        sig = self.__dict__.get("_signature")
        if sig is None:
            sig = self._signature = inspect.signature(self.forward)
        bound = sig.bind(None, *args, **kwargs)  # (None: the ctx)
        return bound.args[1:], bound.kwargs

    def defvjp(self, fn):
        self.backward = fn
        return fn

    def defjvp(self, fn):
        self.jvp = fn
        return fn

    __call__ = dispatch.call_composite
    backward_node = backward.composite_backward


def composite(name, node=None, view=False, variants="", aliases=""):
    """Register a composite op: decorate its array forward, then ``@op.defvjp`` its backward.
    ``variants`` and ``aliases``: its public spellings (``public``)."""

    def deco(fn):
        op = Composite(name, fn, node or _default_node(name), view)
        if variants:
            public(variants, name, aliases)(op)
        return op

    return deco


@composite("depends_on", node="AliasBackward0")
def depends_on(ctx, g, *sources):
    """``g``, recorded as a function of ``sources`` with derivative zero (see
    ``Elementwise.zero_second_order``): a second derivative through it is zero, not an error
    that nothing requires grad."""
    return g._data


@depends_on.defvjp
def depends_on_vjp(ctx, grad):
    zeros = [Tensor._make(ctx.backend.zeros(shape, dt.np))
             for shape, dt in zip(ctx.input_shapes[1:], ctx.input_dtypes[1:])]
    return (grad, *zeros)


depends_on.defjvp(lambda result, tangents, g, *sources: tangents[0])


@composite("recorded_on", node="AliasBackward0")
def recorded_on(ctx, g, *sources):
    """``g``, recorded as a function of ``sources`` whose derivative is undefined (PyTorch's
    formula returns no gradient for them): ``g`` requires grad as the output of a node that
    takes them, and a gradient through it reaches them as None (``allow_unused``), not zeros
    (``depends_on``)."""
    return g._data


recorded_on.defvjp(lambda ctx, grad: (grad, *[None] * (len(ctx.input_shapes) - 1)))
recorded_on.defjvp(lambda result, tangents, g, *sources: tangents[0])


@composite("not_implemented", node="NotImplemented")
def not_implemented(ctx, g, what, *sources):
    """``g``, recorded as a function of ``sources`` that has no derivative (PyTorch's
    ``NotImplemented`` node for ``what``, an ATen op)."""
    ctx.what = what
    return g._data


@not_implemented.defvjp
def not_implemented_vjp(ctx, grad):
    raise RuntimeError(f"derivative for {ctx.what} is not implemented")
