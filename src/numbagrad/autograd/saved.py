"""SavedTensor: a tensor an op or a custom Function keeps for its backward, with the version
it had when saved, so that the backward can tell it was modified in place since.

Under saved-tensor hooks (``autograd.graph.saved_tensors_hooks``) a saved tensor becomes a
PackedTensor: what the pack hook made of the tensor, given to the unpack hook whenever the
backward reads it. ``RawSavedTensor`` is what ``grad_fn._raw_saved_<name>`` hands a user to set
hooks on one saved tensor."""

from __future__ import annotations

import weakref

from .._tensor import Tensor
from ..backend import cpu
from ..dtypes import _BY_NP, SCALAR_TYPE
from .grad_mode import is_grad_enabled, no_grad
from .graph import AccumulateGrad, edge_of


class SavedTensor:
    """A tensor kept for backward, with the version it had when saved.

    A lazy tensor (``ops/lazy.py``) is kept as its expression: ``data`` is None until
    ``array()`` evaluates it, and the backward fusion may compute it instead."""

    __slots__ = ("tensor", "data", "expr", "version_cell", "version", "is_output", "dtype",
                 "fw_grad")

    def __init__(self, tensor, is_output: bool, dtype=None):
        self.is_output = is_output
        # a saved output's forward-mode tangent, given back when unpacked (ops/forward.py:
        # a backward run inside a dual level is then differentiated forward too)
        self.fw_grad = None
        # an output is not kept as a Tensor (that would make a cycle through its grad_fn)
        self.tensor = None if is_output else tensor
        expr = self.expr = tensor._lazy
        if expr is None:
            data = self.data = tensor._data
            if dtype is None:  # (Tensor.dtype's lookup, without the property's call)
                dtype = _BY_NP.get(data.dtype)
        else:
            self.data = None
            expr.saved = True  # (a forward evaluation keeps it if it is heavy: lazy.py)
        self.dtype = tensor.dtype if dtype is None else dtype
        self.version_cell = tensor._version_cell
        self.version = tensor._version_cell[0]

    @classmethod
    def _of(cls, tensor, data, version_cell, version, dtype):
        """One rebuilt from an item of a lean node's ``_saved`` (``tensor`` None: the op's
        output)."""
        s = object.__new__(cls)
        s.is_output = tensor is None
        s.tensor = tensor
        s.expr = None
        s.data = data
        s.dtype = dtype
        s.version_cell = version_cell
        s.version = version
        s.fw_grad = None
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
            kind = SCALAR_TYPE[self.dtype.name]
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
        self.check(node, index)
        if not self.is_output:
            return self.tensor
        t = Tensor._make(self.array(), requires_grad=False)
        t._version_cell = self.version_cell
        if self.fw_grad is not None:
            t._fw_grad = self.fw_grad
        if is_grad_enabled() and t.dtype.is_floating_point:
            # a saved output re-enters the graph through the node that made it (not an
            # integer one, cummax's indices: it has no gradient)
            t._requires_grad = True
            t.grad_fn = node
            t._output_nr = index
        return t


# ---------------------------------------------------------------- saved-tensor hooks

ERR_PACK_INPLACE = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to "
    "pack hook cannot be modified by in-place operations as this can lead to unexpected "
    "side-effects. Please open an issue if you need to perform in-place operations on the "
    "input to a pack hook."
)
ERR_UNPACK_TYPE = (
    "Output of saved tensor unpack_hook expected to be a Tensor but got result of type {}"
)
ERR_REGISTER_TWICE = (
    "Calling register_hooks on a saved tensor whose hooks have already been set. Hint: only one "
    "pair of hooks is allowed at a time."
)
ERR_REGISTER_FREED = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate "
    "values of the graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if you need "
    "to access saved variables after calling backward."
)
ERR_REGISTER_NONE = "Calling register_hooks on a saved tensor with value None is forbidden"
ERR_REGISTER_ARGS = (
    "register_hooks(): incompatible function arguments. The following argument types are "
    "supported:\n    1. (self: numbagrad.autograd.saved.RawSavedTensor, arg0: "
    "collections.abc.Callable, arg1: collections.abc.Callable) -> None\n\nInvoked with: {}"
)

ERR_INT_GRAD = "Only Tensors of floating point and complex dtype can require gradients"

FREED = object()  # what a RawSavedTensor's lookup gives for a tensor the backward freed


def call_pack(pack_hook, tensor):
    """``pack_hook(tensor)``, under no_grad, refused if it wrote ``tensor`` in place."""
    cell = tensor._version_cell
    version = cell[0]
    with no_grad():
        packed = pack_hook(tensor)
    if cell[0] != version:
        raise RuntimeError(ERR_PACK_INPLACE)
    return packed


class PackedTensor(SavedTensor):
    """A saved tensor kept as its pack hook's result (``packed``). Each read calls
    ``unpack_hook(packed)`` (``fresh``): a backward through the node once, before it runs
    (``OpNode.apply_unpacked``), ``_saved_<name>`` and a Function's ``saved_tensors`` on each
    access, as PyTorch's. No version is checked: the hooks decide what comes back."""

    __slots__ = ("packed", "unpack_hook", "edge", "shape", "np_dtype", "device")

    @classmethod
    def pack(cls, s, source, hooks):
        """``s``, a SavedTensor, kept as what ``hooks``' pack hook makes of ``source`` (the
        tensor PyTorch hands it: the saved input itself, the op's output)."""
        p = object.__new__(cls)
        p.is_output = s.is_output
        p.tensor = p.data = p.expr = None
        p.dtype = s.dtype
        p.fw_grad = s.fw_grad
        p.version_cell, p.version = s.version_cell, s.version
        if s.data is not None:
            p.shape, p.np_dtype = tuple(s.data.shape), s.data.dtype
        else:
            p.shape, p.np_dtype = tuple(s.expr.shape), s.expr.np_dtype
        p.device = source.device
        # an unpacked input takes its gradient along the edge the input had when saved (its
        # node, or its leaf's AccumulateGrad), as PyTorch's saved metadata
        p.edge = None if s.is_output else edge_of(s.tensor)
        p.unpack_hook = hooks[1]
        p.packed = call_pack(hooks[0], source)
        return p

    def fresh(self, fit=None):
        """A SavedTensor of what the unpack hook gives back now. ``fit``: None, as it is (what
        the user reads); "exact", required in the saved shape, and cast to the saved dtype
        (what a composite op's backward reads); "broadcast", the same but broadcast to the
        saved shape where it broadcasts (an elementwise op's, as PyTorch's formula would)."""
        value = self.unpack_hook(self.packed)
        if not isinstance(value, Tensor):
            raise TypeError(ERR_UNPACK_TYPE.format(type(value).__name__))
        if self.edge is not None and self.edge[0] is not None and \
                not value.dtype.is_floating_point:
            # (the unpacked input would take the saved input's place in the graph)
            raise RuntimeError(ERR_INT_GRAD)
        with no_grad():
            data = value
            if fit is not None:
                value = data = self._fitted(value, fit)
                if value._data.dtype != self.np_dtype:
                    data = value.to(_BY_NP[self.np_dtype])
            cell = value._version_cell
            if self.is_output:
                s = SavedTensor._of(None, data._data, cell, cell[0], self.dtype)
            else:
                if fit is not None and value.dtype is not self.dtype:
                    value = value.to(self.dtype)
                t = Tensor._make(value._data)
                t._version_cell = value._version_cell
                node, nr = self.edge
                if node is not None:
                    t._requires_grad = True
                    if type(node) is AccumulateGrad:
                        t._accumulator = weakref.ref(node)
                    else:
                        t._grad_fn, t._output_nr = node, nr
                s = SavedTensor._of(t, data._data, cell, cell[0], self.dtype)
        s.fw_grad = self.fw_grad
        return s

    def _fitted(self, value, fit):
        if value.device != self.device:
            raise RuntimeError(
                "Expected all tensors to be on the same device, but found at least two "
                f"devices, {self.device} and {value.device}!")
        got = tuple(value.shape)
        if got == self.shape:
            return value
        if fit == "broadcast" and cpu.broadcast_shapes(self.shape, got) == self.shape:
            return value.expand(self.shape)  # (else PyTorch's broadcast error, above)
        raise RuntimeError(
            f"unpack_hook returned a tensor of shape {list(got)} for a saved tensor of shape "
            f"{list(self.shape)}")

    def check(self, node, index: int):
        pass  # (with hooks PyTorch checks no version: the unpacked tensor is the hooks' own)

    def array(self):
        return self.fresh().array()

    def unpack(self, node, index: int = 0):
        return self.fresh().unpack(node, index)


class RawSavedTensor:
    """``grad_fn._raw_saved_<name>``, a custom Function's ``ctx._raw_saved_tensors``:
    PyTorch's ``torch._C._autograd.SavedTensor``, a handle on one tensor a node saved.
    ``register_hooks(pack_hook, unpack_hook)`` packs it at once and unpacks it when read.

    It keeps its node alive; ``lookup(node)`` gives the saved tensor (None where the node
    saved none, ``FREED`` once the backward freed it), ``store(node, packed)`` replaces it."""

    __slots__ = ("_node", "_lookup", "_store", "__weakref__")

    def __init__(self, node, lookup, store):
        self._node = node
        self._lookup = lookup
        self._store = store

    def _saved(self):
        return self._lookup(self._node)

    def register_hooks(self, *args, **kwargs) -> None:
        if kwargs or len(args) != 2 or not all(callable(a) for a in args):
            invoked = ", ".join([repr(self)] + [repr(a) for a in args])
            if kwargs:
                invoked += "; kwargs: " + ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
            raise TypeError(ERR_REGISTER_ARGS.format(invoked))
        s = self._saved()
        if s is FREED:
            raise RuntimeError(ERR_REGISTER_FREED)
        if s is None:
            raise RuntimeError(ERR_REGISTER_NONE)
        if isinstance(s, PackedTensor):
            raise RuntimeError(ERR_REGISTER_TWICE)
        # the pack hook sees the saved values outside the graph (PyTorch's detached alias)
        if s.is_output:
            source = Tensor._make(s.array())
            source._version_cell = s.version_cell
        else:
            source = s.tensor.detach()
        self._store(self._node, PackedTensor.pack(s, source, args))

    @property
    def data(self):
        """What is kept: the pack hook's result, or the tensor itself (None once freed)."""
        s = self._saved()
        if s is None or s is FREED:
            return None
        if isinstance(s, PackedTensor):
            return s.packed
        if not s.is_output:
            return s.tensor
        t = Tensor._make(s.array())
        t._version_cell = s.version_cell
        return t

    @property
    def unpack_hook(self):
        s = self._saved()
        return s.unpack_hook if isinstance(s, PackedTensor) else None
