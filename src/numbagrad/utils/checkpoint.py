"""Activation checkpointing (``torch.utils.checkpoint``): ``checkpoint`` runs a function
without keeping its intermediate results and runs it again during backward;
``checkpoint_sequential`` does so for the segments of a sequential model.

Two ways, as PyTorch's: the reentrant one (``CheckpointFunction``) runs the function under
no_grad and, in backward, again with grad and a backward of its own; the non-reentrant one
records the function's graph as usual but keeps each tensor it saves as a handle
(saved-tensor hooks, ``_CheckpointFrame``): the first backward read of one runs the function
again and hands out what that run saved, in the same order."""

from __future__ import annotations

import contextlib
import itertools
import warnings
import weakref

from ..autograd import Function
from ..autograd import backward as _backward
from ..autograd.graph import current_graph_task_id, saved_tensors_hooks
from ..autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..autograd.saved import SavedTensor
from ..nn.modules.container import Sequential
from ..random import get_rng_state, set_rng_state
from ..tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError"]


def detach_variable(inputs: tuple) -> tuple:
    """``inputs`` with each tensor detached, keeping its ``requires_grad``."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs) -> None:
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


class CheckpointFunction(Function):
    """The reentrant checkpoint: the forward under no_grad, keeping only the inputs (and the
    random generator's state); the backward runs the function again with grad enabled, from
    that state, and backpropagates through it (its node: CheckpointFunctionBackward)."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            # (one generator draws for every device: its state is all there is to restore)
            ctx.fwd_rng_state = get_rng_state()
        ctx.inputs, ctx.tensor_indices, tensor_inputs = [], [], []
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensor_inputs.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensor_inputs)
        with no_grad():
            outputs = run_function(*args)
        return outputs

    @staticmethod
    def backward(ctx, *args):
        inputs = list(ctx.inputs)
        for i, idx in enumerate(ctx.tensor_indices):
            inputs[idx] = ctx.saved_tensors[i]
        state = get_rng_state() if ctx.preserve_rng_state else None
        try:
            if ctx.preserve_rng_state:
                set_rng_state(ctx.fwd_rng_state)
            detached_inputs = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached_inputs)
        finally:
            if state is not None:
                set_rng_state(state)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        outputs_with_grad, args_with_grad = [], []
        for i in range(len(outputs)):
            if isinstance(outputs[i], Tensor) and outputs[i].requires_grad:
                outputs_with_grad.append(outputs[i])
                args_with_grad.append(args[i])
        if len(outputs_with_grad) == 0:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not "
                               "necessary")
        _backward(outputs_with_grad, args_with_grad)
        grads = tuple(inp.grad if isinstance(inp, Tensor) else None for inp in detached_inputs)
        return (None, None) + grads


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


class CheckpointError(RuntimeError):
    """The recomputation did not save what the forward saved (non-reentrant checkpoint)."""


def _metadata(t) -> dict:
    """What ``determinism_check="default"`` compares of a saved tensor and its recomputation."""
    return {"shape": t.shape, "dtype": t.dtype, "device": t.device}


class _Stop(Exception):
    """Raised inside the recomputation once it has saved all the forward saved (early stop)."""


class _Holder:
    """What the forward's pack hook keeps of a saved tensor: its place in the recomputation,
    per backward pass (``pass id -> index``, None once read)."""

    __slots__ = ("reads", "__weakref__")

    def __init__(self):
        self.reads = {}


class _CheckpointFrame:
    """One non-reentrant ``checkpoint`` call: the function and its arguments (kept as saved
    tensors, so an argument written in place since raises the usual error), the forward's
    holders (weakly: a holder the backward freed is not recomputed for) and the metadata of
    what they stood for, and the recomputed tensors of each pass."""

    def __init__(self, recompute, args, early_stop, metadata):
        self.recompute = recompute
        self.args = [SavedTensor(a, False) if isinstance(a, Tensor) else a for a in args]
        self.early_stop = early_stop
        self.metadata = metadata  # None: determinism_check="none"
        self.holders = []  # weak references, in the forward's order of saving
        self.metas = []
        self.recomputed = {}  # pass id -> {index: tensor}
        self.forward_done = False
        # a backward inside the function's forward recomputes a part of it: its counts are
        # not checked (as PyTorch's)
        self.partial = False

    def pack(self, t):
        holder = _Holder()
        self.holders.append(weakref.ref(holder))
        if self.metadata is not None:
            self.metas.append(self.metadata(t))
        return holder

    def unpack(self, holder):
        gid = current_graph_task_id()
        if gid == -1:  # (read outside a backward pass: a recomputation of its own)
            gid = ("outside", next(_reads_outside))
        if gid not in self.recomputed:
            self._recompute(gid)
        if holder.reads.get(gid) is None:
            raise CheckpointError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already "
                "unpacked once. If you are calling ctx.saved_tensors in backward, make sure to "
                "do so only once. Otherwise please open an issue with details on your use case.")
        index, holder.reads[gid] = holder.reads[gid], None
        return self.recomputed[gid].pop(index)

    def _recompute(self, gid):
        found = self.recomputed[gid] = {}
        count = [0]

        def pack(t):
            k = count[0]
            count[0] += 1
            if k >= len(self.holders):
                if not self.forward_done:
                    self.partial = True
                    return t
                raise CheckpointError(
                    "torch.utils.checkpoint: trying to save more tensors during recomputation "
                    "than during the original forward pass.")
            holder = self.holders[k]()
            if holder is not None:  # (one the backward freed already is not kept)
                holder.reads[gid] = k
                found[k] = t.detach() if t.requires_grad else t
            if self.early_stop and count[0] == len(self.holders):
                raise _Stop
            return t

        args = [a.unpack(None) if isinstance(a, SavedTensor) else a for a in self.args]
        try:
            with saved_tensors_hooks(pack, _same), enable_grad():
                self.recompute(*args)
        except _Stop:
            pass
        self._check(count[0], found)

    def _check(self, count, found):
        """PyTorch's checks of a recomputation, without the tip its errors end with (on its
        debug mode and torch.compile)."""
        if self.partial:
            return
        if count != len(self.holders):
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.holders)}\n"
                f"Number of tensors saved during recomputation: {count}.")
        if self.metadata is None:
            return
        different = ""
        for k, t in sorted(found.items()):
            if self.metas[k] != self.metadata(t):
                different += (f"tensor at position {k}:\nsaved metadata: {self.metas[k]}\n"
                              f"recomputed metadata: {self.metadata(t)}\n")
        if different:
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have "
                f"different metadata than during the forward pass.\n{different}.")


_reads_outside = itertools.count()


def _same(t):
    return t


def _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, debug,
                                  early_stop, *args, **kwargs):
    """``function(*args, **kwargs)`` with what its graph saves kept as handles, recomputed
    when the backward reads them (see the module's docstring)."""
    if debug and context_fn is not noop_context_fn:
        raise ValueError("debug=True is incompatible with non-default context_fn")
    if determinism_check not in ("default", "none"):
        raise ValueError("determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    forward_context, recompute_context = context_fn()
    if not is_grad_enabled():  # (nothing is saved: nothing to recompute)
        with forward_context:
            return function(*args, **kwargs)
    state = get_rng_state() if preserve else None

    def recompute(*inputs):
        kept = get_rng_state() if preserve else None
        try:
            if preserve:
                set_rng_state(state)
            with recompute_context:
                function(*inputs, **kwargs)
        finally:
            if preserve:
                set_rng_state(kept)

    frame = _CheckpointFrame(recompute, args, early_stop,
                             _metadata if determinism_check == "default" else None)
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_context:
        out = function(*args, **kwargs)
    frame.forward_done = True
    return out


def checkpoint(function, *args, use_reentrant: bool | None = None,
               context_fn=noop_context_fn, determinism_check: str = "default",
               debug: bool = False, early_stop: bool = True, **kwargs):
    """``function(*args)``, with its intermediate results recomputed during backward instead
    of kept (``use_reentrant=True``, the default when it is not given, with PyTorch's warning
    that it should be). ``preserve_rng_state`` (default True) makes the recomputation draw the
    same random numbers (dropout masks).

    ``use_reentrant=False`` records the function's own graph (its nodes, keyword arguments,
    ``autograd.grad`` and retained graphs work as without checkpointing) whose saved tensors
    are handles: each backward pass runs the function once more, on its first read of one,
    stopping once it has saved them all (``early_stop``). ``determinism_check="default"``
    compares their shapes, dtypes and devices with the forward's (``CheckpointError``);
    ``context_fn`` gives the contexts of the forward and of the recomputation. ``debug`` adds
    nothing to the errors here.
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check,
                                         debug, early_stop, *args, **kwargs)


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None,
                          **kwargs):
    """Run ``functions`` (a list of modules, or an ``nn.Sequential``) on ``input`` in
    ``segments`` parts, checkpointing all but the last."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be "
            "passed explicitly. In version 2.9 we will raise an exception if use_reentrant is "
            "not passed. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(input):
            for j in range(start, end + 1):
                input = functions[j](input)
            return input
        return forward

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input,
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)
