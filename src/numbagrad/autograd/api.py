"""``backward()`` and ``grad()``: PyTorch's checks of their arguments, then the engine."""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import factory
from .._tensor import Tensor, warn_once
from .engine import ERR_NO_GRAD, run_backward


def _tensors(x):
    if x is None:
        return None
    if isinstance(x, Tensor):
        return [x]
    return list(x)


_ONES: dict = {}  # (shape, dtype) -> ones, copied for each loss.backward()


def _make_grads(outputs, grads):
    out = []
    for i, (t, g) in enumerate(zip(outputs, grads)):
        if g is None:  # loss.backward()
            # (shape and dtype only: a lazy loss is not computed for this)
            e = t._lazy
            a = t._data if e is None else e
            if type(a) is np.ndarray or e is not None:
                shape, dt = a.shape, (a.np_dtype if e is not None else a.dtype)
                if dt.kind == "f" and math.prod(shape) == 1:
                    one = _ONES.get((shape, dt))
                    if one is None:
                        one = _ONES[(shape, dt)] = np.ones(shape, dt)
                    # a copy: the gradient may become a leaf's .grad
                    out.append(Tensor._make(one.copy()))
                    continue
        if g is None:
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not t.dtype.is_floating_point:
                raise RuntimeError(
                    "grad can be implicitly created only for real scalar outputs but got "
                    f"{t.dtype!r}"
                )
            g = factory.ones_like(t)
        elif not isinstance(g, Tensor):
            raise TypeError(
                f"gradients can be either Tensors or None, but got {type(g).__name__}"
            )
        if g.device != t.device:
            raise RuntimeError(
                f"invalid gradient at index {i} - expected device {t.device} but got {g.device}"
            )
        if g.shape != t.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] "
                f"has a shape of {t.shape}."
            )
        out.append(g)
    return out


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the graph's leaves."""
    if grad_variables is not None:
        warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.",
                      FutureWarning, stacklevel=2)
        if grad_tensors is not None:
            raise RuntimeError(
                "`grad_tensors` and `grad_variables` (deprecated) arguments both passed to "
                "`backward()`. Please only use `grad_tensors`."
            )
        grad_tensors = grad_variables
    outputs = _tensors(tensors)
    grads = _tensors(grad_tensors) if grad_tensors is not None else [None] * len(outputs)
    for g in grads:  # (PyTorch checks this before the counts)
        if g is not None and not isinstance(g, Tensor):
            raise TypeError(
                f"gradients can be either Tensors or None, but got {type(g).__name__}"
            )
    if len(grads) != len(outputs):
        raise RuntimeError(
            f"got {len(outputs)} tensors and {len(grads)} gradients"
        )
    if retain_graph is None:
        retain_graph = create_graph
    inputs = _tensors(inputs)
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    for i, t in enumerate(outputs):
        if not t.requires_grad:
            raise RuntimeError(ERR_NO_GRAD.format(i=i))
    if create_graph:
        warn_once("backward_create_graph", WARN_CREATE_GRAPH, stacklevel=3)
    run_backward(outputs, _make_grads(outputs, grads), retain_graph, create_graph, inputs=inputs,
                 accumulate=True)


# PyTorch's, once a process, for backward() (not autograd.grad) with create_graph=True
WARN_CREATE_GRAPH = (
    "Using backward() with create_graph=True will create a reference cycle between the "
    "parameter and its gradient which can cause a memory leak. We recommend using "
    "autograd.grad when creating the graph to avoid this. If you have to use this function, "
    "make sure to reset the .grad fields of your parameters to None after use to break the "
    "cycle and avoid the leak."
)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Gradients of ``outputs`` with respect to ``inputs``, returned (``.grad`` is untouched)."""
    outs = _tensors(outputs)
    ins = _tensors(inputs)
    grads = _tensors(grad_outputs) if grad_outputs is not None else [None] * len(outs)
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    if not ins:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    for t in ins:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    for i, t in enumerate(outs):
        if not t.requires_grad:
            raise RuntimeError(ERR_NO_GRAD.format(i=i))
    if retain_graph is None:
        retain_graph = create_graph
    res = run_backward(outs, _make_grads(outs, grads), retain_graph, create_graph, inputs=ins,
                       accumulate=False, allow_unused=allow_unused)
    if materialize_grads:
        # (a zero that requires grad under create_graph, as PyTorch's)
        res = tuple(factory.zeros_like(t, requires_grad=create_graph) if g is None else g
                    for t, g in zip(ins, res))
    return res
