"""Graph nodes: the base Node (PyTorch's ``grad_fn`` objects) and AccumulateGrad; the edges
a new node records, and the framework's gradient helpers (``sum_to``). As in
``torch.autograd.graph``: the hooks on saved tensors (``saved_tensors_hooks``, ``save_on_cpu``,
``disable_saved_tensors_hooks``), ``register_multi_grad_hook`` and ``increment_version``."""

from __future__ import annotations

import contextlib
import itertools
import threading
import weakref

import numpy as np

from .._tensor import Tensor
from ..backend import kernels_reduce
from ..backend.cpu import run_reduce, summed_dims
from . import anomaly_mode as _anomaly
from .grad_mode import _state as _grad_state
from .accumulate import accumulate_into_grad, gradient_is_unshared, run_post_accumulate_grad_hooks

_sequence = itertools.count()
# ``passes``: the backward passes running in this thread, innermost last (autograd/engine.py
# runs them; the hooks here ask the innermost)
running_passes = threading.local()

ERR_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you "
    "call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling "
    "backward."
)


class RemovableHandle:
    """Returned by ``register_hook``; ``remove()`` takes the hook out again."""

    _ids = itertools.count()

    def __init__(self, hooks: HookDict):
        self.id = next(RemovableHandle._ids)
        self._hooks = weakref.ref(hooks)

    def remove(self) -> None:
        hooks = self._hooks()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class HookDict(dict):
    """A dict that can be weakly referenced by handles."""


class Node:
    """A backward function: ``apply`` maps gradients of its outputs to those of its inputs.

    ``next_functions`` holds one ``(node, output_nr)`` edge per differentiable input, in input
    order; ``(None, 0)`` marks an input that does not require grad.
    """

    # Hook tables start as these shared empty class attributes (a node is made per op, hooks
    # are rare); ``_own`` gives a node its own table before the first hook goes in.
    _pre_hooks = _post_hooks = HookDict()
    # tensor hooks per output slot (registered on the tensor, run before this node)
    _tensor_hooks: dict[int, HookDict] = {}
    _retain_grad_hooks: dict[int, object] = {}
    _released = False
    _has_saved = False
    # whether any hook table was ever made (``_own``): the engine checks this one flag per node
    _hooked = False
    # registry nodes the engine may run several of as one kernel (``run_region``,
    # ops/record.py): 1 for an elementwise op (from ``grad_mode.backward_fusion.min_items``
    # elements), 2 for a whole-tensor sum
    _fusable = 0
    # what a small elementwise node recorded on the lean path keeps (ops/record.py,
    # ElementwiseNode): the engine hands such a node its gradient as an array
    _lean = None

    _num_outputs = 1
    # the names of its saved tensors that saved-tensor hooks packed (ops/record.py,
    # ``pack_node``), in the order PyTorch unpacks them: each backward through the node unpacks
    # them once (``OpNode.apply_unpacked``)
    _packed = ()

    def __init__(self, next_functions=(), num_outputs: int = 1):
        if type(next_functions) is not tuple:
            next_functions = tuple(next_functions)
        self.next_functions = next_functions
        self._sequence_nr = next(_sequence)
        if num_outputs != 1:
            self._num_outputs = num_outputs
        if _anomaly._state.enabled:
            self._anomaly_stack = _anomaly.forward_stack()

    def _own(self, table: str) -> dict:
        """This node's own hook table ``table`` (created on first use)."""
        d = self.__dict__.get(table)
        if d is None:
            d = HookDict()
            setattr(self, table, d)
            self._hooked = True
        return d

    def name(self) -> str:
        n = type(self).__name__
        # (PyTorch's hand-written C++ nodes name themselves with their namespace; the
        # generated ones, and every repr, use the bare class name)
        return "torch::autograd::" + n if n in _CPP_NODES else n

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    @property
    def metadata(self) -> dict:
        if not hasattr(self, "_metadata"):
            self._metadata = {}
        return self._metadata

    def register_hook(self, fn) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after the node; may replace grad_inputs."""
        hooks = self._own("_post_hooks")
        handle = RemovableHandle(hooks)
        hooks[handle.id] = fn
        return handle

    def register_prehook(self, fn) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before the node; may replace grad_outputs."""
        hooks = self._own("_pre_hooks")
        handle = RemovableHandle(hooks)
        hooks[handle.id] = fn
        return handle

    def __call__(self, *grads):
        """The node's gradients for ``grads``: a tuple, or the Tensor itself for a node of one
        input (PyTorch's ``grad_fn(g)``)."""
        res = self.apply_unpacked(list(grads)) if self._packed else self.apply(list(grads))
        if len(self.next_functions) == 1 and isinstance(res, (tuple, list)) and len(res) == 1:
            return res[0]
        return res

    # subclasses implement these two
    def apply(self, grads: list) -> tuple:
        raise NotImplementedError

    def release(self) -> None:
        """Drop saved tensors after a backward pass without ``retain_graph``."""
        if self._has_saved:
            self._released = True

    def check_not_released(self) -> None:
        if self._released:
            raise RuntimeError(ERR_FREED)


_CPP_NODES = frozenset({"AccumulateGrad", "CopySlices", "DelayedError", "Error", "GraphRoot"})


class AccumulateGrad(Node):
    """The node that adds an incoming gradient into a leaf's ``.grad``."""

    # ``hook(leaf)`` after each accumulation (``Tensor.register_post_accumulate_grad_hook``)
    _post_accumulate_hooks = HookDict()

    def __init__(self, variable):
        super().__init__(())
        self.variable = variable

    def apply(self, grads: list) -> tuple:
        if grads[0] is not None:
            t = self.variable
            # (only a first .grad may take the gradient's memory: no probe once there is one)
            unshared = t._grad is None and gradient_is_unshared(grads)
            accumulate_into_grad(t, grads[0], unshared)
            if self._post_accumulate_hooks:
                run_post_accumulate_grad_hooks(t, self._post_accumulate_hooks)
        return ()


class Unconnected(Node):
    """The end of an edge to a view that requires grad only through its base and has no node
    of its own (made before its base's ``requires_grad_()``, or under no_grad): PyTorch
    records an op on it with an empty edge there, so that gradient reaches nothing."""

    def apply(self, grads: list) -> tuple:
        return ()


def grad_accumulator(tensor) -> AccumulateGrad:
    """The one AccumulateGrad of a leaf that requires grad, for as long as it lives."""
    ref = tensor._accumulator
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(tensor)
        tensor._accumulator = weakref.ref(acc)
    return acc


def edge_of(tensor):
    """The (node, output_nr) edge a new node records for input ``tensor``."""
    if tensor is None:
        return (None, 0)
    if tensor._base is None:  # not a view: the flags are current, skip the properties
        if not tensor._requires_grad:
            return (None, 0)
        fn = tensor._grad_fn
    elif not tensor.requires_grad:
        return (None, 0)
    else:
        fn = tensor.grad_fn
        if fn is None and not tensor._requires_grad:
            return (Unconnected(), 0)
    if fn is not None:
        return (fn, tensor._output_nr)
    return (grad_accumulator(tensor), 0)


def sum_to(g, shape):
    """Sum a broadcast gradient back to ``shape`` (the framework's job, never a rule's)."""
    shape = tuple(shape)
    have = g._data.shape if g._lazy is None else tuple(g.shape)
    if have == shape:
        return g
    if not shape:
        return g.sum()  # (one node, SumBackward0, as PyTorch's sum_to to a 0-d shape)
    lead = len(have) - len(shape)
    dims = summed_dims(have, shape)
    if dims and lead >= 0 and not _grad_state.enabled:
        a = g._data if g._lazy is None else None
        if type(a) is np.ndarray and a.dtype.kind == "f" and a.size:
            # nothing records (a bias's gradient, once a step): the sum's kernel on the array,
            # as ``g.sum(dims)`` runs it, without the op's dispatch around it
            return _wrap(type(g), run_reduce(kernels_reduce.sum_rows, a, tuple(dims),
                                             a.dtype).reshape(shape))
    if dims:
        g = g.sum(tuple(dims), True)  # (dim, keepdim)
        if lead >= 0 and not _grad_state.enabled:
            # nothing records: the new sum's own array takes the shape (a view op would
            # make a Tensor and a view of it, 2.5 us, for what nothing else holds)
            return _wrap(type(g), g._data.reshape(shape))
    if lead > 0:
        g = g.view(shape)  # (a new sum: contiguous, so the view reshape would make)
    elif lead:
        g = g.reshape(shape)
    elif g.shape != shape:
        g = g.expand(shape)
    return g


def _wrap(Tensor, data):
    """A new ``Tensor`` on ``data`` that is never an inference tensor (what ``Tensor._make``
    would mark under inference_mode): a gradient the backward pass computed, or an output the
    caller marks itself."""
    t = object.__new__(Tensor)
    t._data = data
    t._version_cell = [0]
    return t


# ---------------------------------------------------------------- saved-tensor hooks


class _SavedHooks(threading.local):
    """This thread's saved-tensor hooks (PyTorch keeps them per thread too)."""

    def __init__(self):
        self.stack = []  # (pack_hook, unpack_hook) pairs, the innermost (the one used) last
        self.disabled = None  # ``disable_saved_tensors_hooks``'s message while it holds
        # the sequence number at which the stack last became non-empty: only nodes from then
        # on may be packed (an op that returns its input as it is returns an older node)
        self.mark = 0
        # the tensor an in-place op is about to write, while its op runs (ops/inplace.py): a
        # node that saves it packs a copy, its old value, as PyTorch's in-place ops save
        # ``self.clone()``
        self.writing = None


saved_hooks = _SavedHooks()

# Packing runs as an op observer (ops/observe.py), set while any thread has hooks: the ops
# layer sets ``pack_switch(on)`` (this module is below it), and the count is of such threads.
pack_switch = None
threads_with_hooks = [0]
_switch_lock = threading.Lock()

ERR_HOOKS_ARGS = (
    "_push_saved_tensors_default_hooks(): incompatible function arguments. The following "
    "argument types are supported:\n    1. (arg0: collections.abc.Callable, arg1: "
    "collections.abc.Callable) -> None\n\nInvoked with: {!r}, {!r}"
)


def _push_hooks(pack_hook, unpack_hook) -> None:
    state = saved_hooks
    if state.disabled is not None:
        raise RuntimeError(state.disabled)
    if not (callable(pack_hook) and callable(unpack_hook)):
        raise TypeError(ERR_HOOKS_ARGS.format(pack_hook, unpack_hook))
    if not state.stack:
        state.mark = next(_sequence)
        with _switch_lock:
            threads_with_hooks[0] += 1
            if threads_with_hooks[0] == 1:
                pack_switch(True)
    state.stack.append((pack_hook, unpack_hook))


def _pop_hooks() -> None:
    state = saved_hooks
    state.stack.pop()
    if not state.stack:
        with _switch_lock:
            threads_with_hooks[0] -= 1
            if not threads_with_hooks[0]:
                pack_switch(False)


class saved_tensors_hooks:
    """Inside this context, each tensor an op saves for backward is given to
    ``pack_hook(tensor)``, and what that returns is kept instead of the tensor; the backward
    (or ``grad_fn._saved_<name>``) gets the tensor back from ``unpack_hook(packed)``. The
    innermost context's pair is used; the hooks of this thread only.

    ``pack_hook`` runs under no_grad and may not modify its input in place. The tensor
    ``unpack_hook`` returns needs the saved tensor's values (its shape: an elementwise op's
    backward broadcasts one that broadcasts to it); with hooks, no version check is made."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        _push_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *exc) -> None:
        _pop_hooks()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU and copied back to their device when backward reads
    them (a CPU tensor is kept as it is, unless ``pin_memory``: then as a copy).
    ``device_type`` names the accelerator whose page-locked memory ``pin_memory`` asks for;
    numbagrad's host memory is pageable, so it only makes the copy."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor):
            if pin_memory:
                kept = tensor.detach()
                kept = kept.cpu() if kept.is_cuda else kept.clone()
            else:
                kept = tensor.cpu()
            return tensor.device, kept

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str):
    """Inside this context (or a function it decorates), setting saved-tensor hooks raises
    ``RuntimeError(error_message)``; entering it while hooks are set raises it too."""
    state = saved_hooks
    before = state.disabled
    try:
        state.disabled = error_message
        if state.stack:
            raise RuntimeError(error_message)
        yield
    finally:
        state.disabled = before


# ---------------------------------------------------------------- the running pass


def current_graph_task_id() -> int:
    """The id of the backward pass running in this thread (the innermost), -1 outside one:
    PyTorch's ``torch._C._current_graph_task_id()``, by which a hook tells one pass from
    another (``register_multi_grad_hook``, checkpoint's recomputation)."""
    passes = getattr(running_passes, "passes", None)
    return passes[-1].id if passes else -1


def _will_engine_execute_node(node) -> bool:
    passes = getattr(running_passes, "passes", None)
    if not passes:
        raise RuntimeError(
            "_will_engine_execute_node should only be called during the backward pass")
    return passes[-1].will_execute(node)


class _MultiHandle:
    """``register_multi_grad_hook``'s handle: ``remove()`` takes out the hook of each tensor."""

    def __init__(self, handles):
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode: str = "all") -> _MultiHandle:
    """Call ``fn`` once per backward pass for the gradients of ``tensors``. ``mode="all"``:
    ``fn(grads)`` when the pass has computed all of them that it computes (a tensor the pass
    does not reach gets None; its node asked with ``_will_engine_execute_node``);
    ``mode="any"``: ``fn(grad)`` with the first one computed."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    lock = threading.Lock()
    if mode == "any":
        fired: set = set()  # the passes whose first gradient has been handed on

        def first(grad):
            task = current_graph_task_id()
            with lock:
                if task in fired:
                    return
                fired.add(task)
            fn(grad)

        return _MultiHandle(tuple(t.register_hook(first) for t in tensors if t.requires_grad))

    nodes = []
    for t in tensors:
        node = t.grad_fn if t.grad_fn is not None else (
            grad_accumulator(t) if t.requires_grad else None)
        if node is None:
            raise AssertionError("Expected gradient function to be set")
        nodes.append(node)
    counts: dict = {}  # pass id -> (gradients seen, gradients expected)
    buffers: dict = {}  # pass id -> one gradient (or None) per tensor

    def collector(k):
        def hook(grad):
            task = current_graph_task_id()
            if task == -1:
                raise AssertionError("expected this hook to be called inside a backward call")
            with lock:
                seen, expected = counts.get(task, (0, None))
                if seen == 0:
                    expected = sum(_will_engine_execute_node(n) for n in nodes)
                    buffers[task] = [None] * len(nodes)
                counts[task] = (seen + 1, expected)
            buffers[task][k] = grad
            if seen + 1 == expected:
                grads = buffers.pop(task)
                del counts[task]
                fn(grads)

        return hook

    return _MultiHandle(tuple(t.register_hook(collector(k)) for k, t in enumerate(tensors)))


def increment_version(tensor) -> None:
    """Count an in-place change of ``tensor`` (or of each tensor of an iterable) that autograd
    did not see, so that a backward reading its saved value raises the version error."""
    if isinstance(tensor, Tensor):
        tensors = [tensor]
    else:
        try:
            tensors = list(tensor)
        except TypeError:
            raise RuntimeError("increment_version expect a Iterable[Tensor] as input") from None
        if not all(isinstance(t, Tensor) for t in tensors):
            raise RuntimeError(
                "increment_version expects each element of the iterable to be a tensor")
    for t in tensors:
        t._bump()
