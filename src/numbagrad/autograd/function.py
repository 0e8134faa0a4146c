"""Custom differentiable functions: subclass ``Function``, call ``YourFunction.apply(...)``.

As in PyTorch, the ``ctx`` that ``forward`` and ``backward`` receive *is* the graph node: the
output's ``grad_fn`` is an instance of ``<YourFunction>Backward``, a class made for each
``Function`` subclass when it is defined.

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y
"""

from __future__ import annotations

import contextlib
import functools

import numpy as np

from .._tensor import Tensor
from ..factory import zeros
from ..ops import forward as _forward
from .grad_mode import is_grad_enabled, no_grad
from .graph import ERR_FREED, Node, _sequence, edge_of, saved_hooks, sum_to, threads_with_hooks
from .saved import FREED, PackedTensor, RawSavedTensor, SavedTensor

ERR_DIRTY_LEAF = "a leaf Variable that requires grad has been used in an in-place operation."
ERR_NO_JVP = ("You must implement the jvp function for custom autograd.Function to use it with "
              "forward mode AD.")


class FunctionCtx:
    """What ``forward`` can leave for ``backward`` (the node class below inherits it)."""

    def save_for_backward(self, *tensors) -> None:
        """Keep tensors (or None) for backward; they come back checked for in-place changes."""
        self._to_save = tensors

    def save_for_forward(self, *tensors) -> None:
        self.saved_for_forward = tensors

    def mark_dirty(self, *tensors) -> None:
        """Declare inputs that ``forward`` modified in place (and returns)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """Declare outputs that have no gradient (indices, masks)."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """With False, ``backward`` gets None (not zeros) for outputs that got no gradient."""
        self._materialize_grads = bool(value)


class BackwardCFunction(FunctionCtx, Node):
    """The node of a custom Function: its ``apply`` calls the Function's ``backward``."""

    _forward_cls: type

    def __init__(self):
        Node.__init__(self)
        self._to_save = ()
        self._dirty = ()
        self._non_differentiable = ()
        self._materialize_grads = True
        self._in_jvp = False  # while ``jvp`` runs: saved_tensors are save_for_forward's
        self._saved = None
        self.needs_input_grad = ()

    def __repr__(self) -> str:
        return f"<numbagrad.autograd.function.{self.name()} object at {hex(id(self))}>"

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to ``save_for_backward``, checked against the version counters."""
        if self._in_jvp:
            return tuple(getattr(self, "saved_for_forward", ()))
        if self._released:
            raise RuntimeError(ERR_FREED)
        if self._saved is None:
            return tuple(self._to_save)  # inside forward, before the outputs are known
        return tuple(s.unpack(self, k) if s is not None else None for s, k in self._saved)

    saved_variables = saved_tensors

    @property
    def _raw_saved_tensors(self) -> tuple:
        """A ``RawSavedTensor`` per tensor given to ``save_for_backward`` (PyTorch's)."""
        if self._released:
            raise RuntimeError(ERR_FREED)
        return tuple(RawSavedTensor(self, *_raw_access(k)) for k in range(len(self._saved or ())))

    def release(self) -> None:
        if self._saved:
            self._released = True
            self._saved = ()

    def apply(self, grads):
        cls = self._forward_cls
        if self._materialize_grads:
            grads = [
                g if g is not None else zeros(shape, dtype=dt, device=dev)
                for g, (shape, dt, dev) in zip(grads, self._output_meta)
            ]
        res = cls.backward(self, *grads)
        if not isinstance(res, tuple):
            res = (res,)
        n_args = len(self.needs_input_grad)
        if len(res) != n_args:
            # trailing Nones for arguments beyond the given gradients are allowed (PyTorch)
            if len(res) > n_args and all(r is None for r in res[n_args:]):
                res = res[:n_args]
            else:
                raise RuntimeError(
                    f"function {self.name()} returned an incorrect number of gradients "
                    f"(expected {n_args}, got {len(res)})"
                )
        out = []
        for k, (pos, shape, dt) in enumerate(self._input_meta):
            g = res[pos]
            if g is not None and not isinstance(g, Tensor):
                raise TypeError(f"expected Tensor or None as gradient, got {type(g).__name__}")
            if g is None or self.next_functions[k][0] is None:
                # (a gradient for an input that needs none goes on as returned: the engine
                # drops it, the node's post-hooks see it, as in PyTorch)
                out.append(g)
                continue
            if g.shape != shape:
                g = _fit_shape(self, g, shape, k)
            if g.dtype is not dt:
                g = g.to(dt)
            out.append(g)
        return tuple(out)


def _fit_shape(node, g, shape, index):
    try:
        np.broadcast_shapes(tuple(shape), tuple(g.shape))
        expandable = np.broadcast_shapes(tuple(shape), tuple(g.shape)) == tuple(g.shape)
    except ValueError:
        expandable = False
    if not expandable:
        raise RuntimeError(
            f"Function {node.name()} returned an invalid gradient at index {index} - got "
            f"{list(g.shape)} but expected shape compatible with {list(shape)}"
        )
    return sum_to(g, shape)


class FunctionMeta(type):
    """Gives each Function subclass its own node class, ``<Name>Backward``."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(
            name + "Backward",
            (BackwardCFunction,),
            {"_forward_cls": cls, "__module__": "numbagrad.autograd.function"},
        )
        super().__init__(name, bases, attrs)


class Function(FunctionCtx, metaclass=FunctionMeta):
    """Base class of custom differentiable operations (use ``apply``, not an instance)."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError(ERR_NO_JVP)

    @classmethod
    def apply(cls, *args, **kwargs):
        node = cls._backward_cls()
        node.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        tensor_args = [(i, a) for i, a in enumerate(args) if isinstance(a, Tensor)]
        record = is_grad_enabled() and any(a.requires_grad for _, a in tensor_args)
        separate_setup = cls.setup_context is not Function.setup_context
        # inside a dual level, forward runs without tangents: the Function's own ``jvp`` gives
        # its outputs theirs (as PyTorch, which never differentiates a custom forward)
        dual = (_forward.current_level() is not None
                and any(a._fw_grad is not None for _, a in tensor_args))
        with no_grad(), (_without_tangents(args) if dual else contextlib.nullcontext()):
            if separate_setup:
                output = cls.forward(*args, **kwargs)
            else:
                output = cls.forward(node, *args, **kwargs)
        if separate_setup:
            cls.setup_context(node, args, output)
        single = not isinstance(output, tuple)
        outputs = (output,) if single else output
        if not record:
            if dual:
                outputs = _with_tangents(cls, node, args, outputs)
                return outputs[0] if single else outputs
            return output
        node.next_functions = tuple(edge_of(a) for _, a in tensor_args)
        # numbered now, after its inputs' nodes (edge_of may have just made an
        # AccumulateGrad): the engine runs nodes newest-first and every edge must lead to
        # an older node
        node._sequence_nr = next(_sequence)
        node._input_meta = [(i, a.shape, a.dtype) for i, a in tensor_args]
        dirty = {id(t) for t in node._dirty}
        non_diff = {id(t) for t in node._non_differentiable}
        inputs_by_id = {id(a): a for _, a in tensor_args}
        results = []
        meta = []
        for k, o in enumerate(outputs):
            if not isinstance(o, Tensor):
                results.append(o)
                meta.append(((), None))
                continue
            if id(o) in inputs_by_id and id(o) not in dirty:
                o = _alias(o)  # an input returned as is: a new tensor, so the input keeps its node
            elif id(o) in dirty:
                _check_dirty(o)
                o._bump()
            meta.append((o.shape, o.dtype, o.device))
            if id(outputs[k]) in non_diff or not o.dtype.is_floating_point:
                o._requires_grad = False
                o._grad_fn = None
            else:
                o._grad_fn, o._requires_grad, o._output_nr = node, True, k
            results.append(o)
        node._output_meta = meta
        node._num_outputs = len(outputs)
        node._saved = _pack_saved(node, results)
        node._has_saved = bool(node._saved)
        if threads_with_hooks[0] and node._saved and saved_hooks.stack:
            # in the order given, each read by the unpack hook on each ``saved_tensors``
            hooks = saved_hooks.stack[-1]
            node._saved = [(s if s is None else PackedTensor.pack(
                s, results[k] if s.is_output else s.tensor, hooks), k) for s, k in node._saved]
        if dual:
            results = _with_tangents(cls, node, args, results)
        return results[0] if single else tuple(results)


@contextlib.contextmanager
def _without_tangents(args):
    """Forward AD paused, and the inputs' tangents put aside while ``forward`` runs (its
    ``unpack_dual`` of an input finds none, as in PyTorch); ``_with_tangents`` reads them
    after."""
    held = [(a, a._fw_grad) for a in args if isinstance(a, Tensor) and a._fw_grad is not None]
    for a, _ in held:
        a.__dict__.pop("_fw_grad", None)
    try:
        with _forward.paused():
            yield
    finally:
        for a, t in held:
            a._fw_grad = t


def _with_tangents(cls, ctx, args, outputs):
    """``outputs`` with the tangents ``cls.jvp`` gives them from the inputs' tangents (zeros
    for a tensor input without one, None for a non-tensor argument); an input returned as is
    becomes a new tensor, so the input keeps its own tangent."""
    if cls.jvp is Function.jvp:
        raise NotImplementedError(ERR_NO_JVP)
    tangents = [None if not isinstance(a, Tensor) else a._fw_grad if a._fw_grad is not None
                else zeros(a.shape, dtype=a.dtype, device=a.device) for a in args]
    ctx._in_jvp = True
    try:
        with _forward.paused():
            res = cls.jvp(ctx, *tangents)
    finally:
        ctx._in_jvp = False
    res = res if isinstance(res, tuple) else (res,)
    if len(res) != len(outputs):
        raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients "
                           f"(expected {len(outputs)} but got {len(res)})")
    inputs = {id(a) for a in args if isinstance(a, Tensor)}
    out = []
    for o, t in zip(outputs, res):
        if isinstance(o, Tensor) and t is not None and o.dtype.is_floating_point:
            if id(o) in inputs:
                o = _alias(o)
            if t.shape != o.shape:
                raise RuntimeError(
                    "Trying to set a forward gradient that has a different size than that of "
                    f"the original Tensor, this is not supported. Tensor is of size "
                    f"{list(o.shape)} while the given forward gradient is of size "
                    f"{list(t.shape)}.")
            _forward.set_tangent(o, t if t.dtype is o.dtype else t.to(o.dtype))
        out.append(o)
    return tuple(out)


def _alias(t):
    o = Tensor._make(t._data)
    o._version_cell = t._version_cell
    return o


def _check_dirty(t):
    if t._base is None and t._grad_fn is None and t._requires_grad:
        raise RuntimeError(ERR_DIRTY_LEAF)


def _pack_saved(node, results):
    """Saved tensors with their versions; an output is saved by reference to this node."""
    out_index = {id(o): k for k, o in enumerate(results) if isinstance(o, Tensor)}
    saved = []
    for t in node._to_save:
        if t is None:
            saved.append((None, 0))
        elif id(t) in out_index and t._grad_fn is node:
            saved.append((SavedTensor(t, is_output=True), out_index[id(t)]))
        else:
            saved.append((SavedTensor(t, is_output=False), 0))
    return saved


def _raw_access(k):
    """The lookup and store of the ``RawSavedTensor`` of a Function node's saved tensor k."""

    def lookup(node):
        return FREED if node._released else node._saved[k][0]

    def store(node, packed):
        node._saved[k] = (packed, node._saved[k][1])

    return lookup, store


def once_differentiable(backward):
    """Mark a ``backward`` as not differentiable: it runs without recording a graph, and trying
    to differentiate its result (``create_graph=True``) raises when that gradient is used."""

    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        with no_grad():
            res = backward(ctx, *grads)
        if not is_grad_enabled() or not any(
            getattr(g, "requires_grad", False) for g in grads
        ):
            return res
        single = not isinstance(res, tuple)
        outs = (res,) if single else res
        err = DelayedError(
            "trying to differentiate twice a function that was marked with @once_differentiable",
            [g for g in grads if getattr(g, "requires_grad", False)],
        )
        wrapped = []
        for k, r in enumerate(outs):
            if r is not None and r.dtype.is_floating_point:
                r = _alias(r)
                r._grad_fn, r._requires_grad, r._output_nr = err, True, 0
            wrapped.append(r)
        return wrapped[0] if single else tuple(wrapped)

    return wrapper


class DelayedError(Node):
    """A node that raises when the backward pass reaches it."""

    def __init__(self, msg, inputs):
        super().__init__(tuple(edge_of(t) for t in inputs))
        self.msg = msg

    def apply(self, grads):
        raise RuntimeError(self.msg)


__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable"]
