"""Activation checkpointing (``torch.utils.checkpoint``): ``checkpoint`` runs a function
without keeping its intermediate results and runs it again during backward;
``checkpoint_sequential`` does so for the segments of a sequential model."""

from __future__ import annotations

import contextlib
import warnings

from ..autograd import Function
from ..autograd import backward as _backward
from ..autograd.grad_mode import enable_grad, no_grad
from ..nn.modules.container import Sequential
from ..random import get_rng_state, set_rng_state
from ..tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential"]


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


def checkpoint(function, *args, use_reentrant: bool | None = None,
               context_fn=noop_context_fn, determinism_check: str = "default",
               debug: bool = False, early_stop: bool = True, **kwargs):
    """``function(*args)``, with its intermediate results recomputed during backward instead
    of kept (``use_reentrant=True``, the default when it is not given, with PyTorch's warning
    that it should be). ``preserve_rng_state`` (default True) makes the recomputation draw the
    same random numbers (dropout masks).

    ``use_reentrant=False`` gives PyTorch's results, graph (the function's own nodes) and
    gradients, keyword arguments and ``autograd.grad`` included, but keeps the intermediate
    results: numbagrad has no saved-tensor hooks through which to drop and recompute them.
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
    if determinism_check not in ("default", "none"):
        raise ValueError("determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    forward_context, _ = context_fn()
    with forward_context:
        return function(*args, **kwargs)


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
