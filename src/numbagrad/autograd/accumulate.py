"""What AccumulateGrad does with a leaf's gradient: add it into ``.grad``, taking its memory
when nothing else can see it. Only Tensor methods are used (``tensor.py`` binds those that
run ops), so the graph can import this below ``ops/``."""

from __future__ import annotations

import sys

import numpy as np

from .._tensor import PLAIN_SUBCLASSES, Tensor
from ..backend import cpu, layout
from .grad_mode import _state as _grad_state


def accumulate_into_grad(t: Tensor, grad: Tensor, unshared: bool = False) -> None:
    """Add ``grad`` into ``t.grad`` (in place unless the backward pass is being recorded).

    ``unshared``: nothing else refers to ``grad`` or its memory, so a first ``.grad`` may take
    its array instead of a copy (PyTorch steals such a gradient too).
    """
    if type(grad) is Tensor and (type(t) is Tensor or type(t) in PLAIN_SUBCLASSES):
        # (the arrays: no Size, no dtype lookup)
        gd, td = grad._data, t._data
        same = gd.shape == td.shape and gd.dtype == td.dtype
        gd = td = None
    else:
        same = False
    if not same:
        if grad.shape != t.shape:
            grad = grad.expand(t.shape) if grad.ndim <= t.ndim else grad.reshape(t.shape)
            unshared = False
        if grad.dtype is not t.dtype:
            grad = grad.to(t.dtype)
            unshared = False
    if t._grad is None:
        if _grad_state.enabled:
            # a copy even now, as PyTorch's (clone_obey_contract), recorded when grad requires
            # grad: into new memory (CopyBackwards), or for a leaf whose elements overlap (an
            # expanded tensor made a leaf) a contiguous clone (CloneBackward0)
            td = t._data
            if not td.size or layout.is_non_overlapping_and_dense(
                    td.shape, [st // td.itemsize for st in td.strides]):
                t._grad = grad.new_empty(grad.shape).copy_(grad)
            else:
                t._grad = grad.clone()
        elif unshared:
            t._grad = Tensor._make(grad._data)
        else:
            # .grad owns its memory: never an alias of another tensor or an expanded view
            data = grad._data
            if type(data) is np.ndarray:
                t._grad = Tensor._make(cpu.empty(data.shape, data.dtype))
                np.copyto(t._grad._data, data)
            else:
                t._grad = Tensor._make(data.copy())
    elif _grad_state.enabled:
        t._grad = t._grad + grad
    else:
        t._grad.add_(grad)


def run_post_accumulate_grad_hooks(t: Tensor, hooks) -> None:
    """Call each ``hook(t)`` now that ``t.grad`` holds this pass's gradient (PyTorch's
    post-accumulate-grad hooks: they see the leaf, and may not return a value)."""
    for hook in tuple(hooks.values()):
        if hook(t) is not None:
            raise RuntimeError("Tensor post accumulate grad hooks should return None.")


# ---------------------------------------------------------------- gradient ownership
# AccumulateGrad may hand a gradient's array to ``.grad`` when nothing else can see it. That
# is judged by reference counts, each taken through one of these functions; what each returns
# for an unshared value is measured once on a probe of the same structure, because the count
# a given call shape sees differs between Python versions.


def _refs(x) -> int:
    return sys.getrefcount(x)


def _tensor_refs(grads) -> int:
    return _refs(grads[0])


def _array_refs(t) -> int:
    return _refs(t._data)


def _base_refs(a) -> int:
    return _refs(a.base)


def _probe_counts():
    block = np.empty(16, np.uint8)
    pool = [block]  # held like a pool block
    t = Tensor._make(block.view(np.float32))
    del block
    grads = [t]
    del t
    counts = _tensor_refs(grads), _array_refs(grads[0]), _base_refs(grads[0]._data)
    del pool
    return counts


_UNSHARED_TENSOR, _UNSHARED_ARRAY, _UNSHARED_BLOCK = _probe_counts()


def gradient_is_unshared(grads) -> bool:
    """Whether the CPU tensor ``grads[0]`` is referred to by nothing but the list ``grads``,
    and its memory by nothing but it: a fresh, contiguous kernel output whose array owns its
    memory or is the only array on a pool block."""
    if _tensor_refs(grads) != _UNSHARED_TENSOR:
        return False
    g = grads[0]
    a = g._data
    if type(a) is not np.ndarray or not a.flags.carray or g._base is not None:
        return False
    del a, g
    if _array_refs(grads[0]) != _UNSHARED_ARRAY:
        return False
    base = grads[0]._data.base
    if base is None:
        return True
    ok = cpu.is_pool_block(base)
    del base
    return ok and _base_refs(grads[0]._data) == _UNSHARED_BLOCK
