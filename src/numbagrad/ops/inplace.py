"""In-place ops: a write into a tensor's memory, and the graph kept right around it.

An in-place op is its out-of-place op followed by a write: ``x.exp_()`` computes
``result = exp(x)``, writes it into ``x``'s memory, bumps ``x``'s version counter, and makes
``x`` stand for ``result`` in the graph (its ``grad_fn`` becomes ``ExpBackward0``).

Two details keep the gradients right, as in PyTorch:

- A formula that needs the *old* value of ``x`` (``pow_``, ``clamp_``) gets a copy of it taken
  before the write; a formula that needs ``result`` reads ``x``'s memory, so a later in-place
  change of ``x`` is caught by the version check.
- When ``x`` is a view, its base changes too: the base becomes the output of a ``CopySlices``
  node (the old base, with the view's region replaced by ``result``), and each view of that
  base re-derives its ``grad_fn`` from the new base (``AsStridedBackward0``) the next time it
  is asked for it (``refresh_view``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import backend
from .. import dtypes as D
from .._tensor import Tensor
from ..autograd.grad_mode import _state as _grad_state
from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.graph import saved_hooks
from ..autograd.saved import PackedTensor
from ..backend import cpu, layout
from ..backend.memory import before_write
from . import elementwise as E
from . import movement as M
from . import dispatch
from .dispatch import _as_array, device_backend
from .forward import linear, refused, set_tangent
from .registry import SavedTensor, composite, public, sum_to

ERR_LEAF = "a leaf Variable that requires grad is being used in an in-place operation."
ERR_LEAF_VIEW = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)
ERR_NO_GRAD_VIEW = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
    "your code by moving both the view and the inplace either both inside the no_grad block "
    "(if you don't want the inplace to be tracked) or both outside (if you want the inplace to "
    "be tracked)."
)
ERR_MULTI_VIEW = (
    "Output {k} of {node} is a view and is being modified inplace. This view is the output of "
    "a function that returns multiple views. Such functions do not allow the output views to be "
    "modified inplace. You should replace the inplace operation by an out-of-place one."
)
ERR_NO_GRAD_VIEW_REBASE = (
    "A view was created in no_grad mode and its base or another view of its base has been "
    "modified inplace with grad mode enabled. Given that this use case is ambiguous and "
    "error-prone, it is forbidden. You can clarify your code by moving both the view and the "
    "inplace either both inside the no_grad block (if you don't want the inplace to be "
    "tracked) or both outside (if you want the inplace to be tracked)."
)
ERR_MULTI_VIEW_REBASE = (
    "Output {k} of {node} is a view and its base or another view of its base has been modified "
    "inplace. This view is the output of a function that returns multiple views. Such "
    "functions do not allow the output views to be modified inplace. You should replace the "
    "inplace operation by an out-of-place one."
)
_MULTI_TAIL = (
    " This view is the output of a function that returns multiple views. Such functions do not "
    "allow the output views to be modified inplace. You should replace the inplace operation "
    "by an out-of-place one."
)
# (one of several views (split) of a base that did not require grad: PyTorch words it as a
# view made in no_grad mode, then gives the multi-output reason)
ERR_MULTI_VIEW_NO_GRAD = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled."
    + _MULTI_TAIL
)
ERR_MULTI_VIEW_NO_GRAD_REBASE = (
    "A view was created in no_grad mode and its base or another view of its base has been "
    "modified inplace with grad mode enabled." + _MULTI_TAIL
)
ERR_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)
ERR_PARTIAL_OVERLAP = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer "
    "to a single memory location. Please clone() the tensor before performing the operation."
)
_CAST_NAMES = D.SCALAR_TYPE


ERR_INFERENCE_INPLACE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details.")


def check_inplace(x):
    """Refuse in-place changes autograd could not account for (PyTorch's rules and words)."""
    if x._inference and not _grad_state.inference and not x._inference_writable:
        # (an inference tensor keeps no version counter: a write to it could not be seen
        # by a graph that saved it)
        raise RuntimeError(ERR_INFERENCE_INPLACE)
    if not _grad_state.enabled:
        return
    base = x._base
    if base is None:
        if x._grad_fn is None and x._requires_grad:
            raise RuntimeError(ERR_LEAF)
        return
    if not x.requires_grad:  # (a view made while its base required grad still does)
        return
    kind = x._view_kind
    if kind == "no_grad":
        raise RuntimeError(ERR_NO_GRAD_VIEW)
    if kind is not None:
        raise RuntimeError(ERR_MULTI_VIEW.format(k=x._output_nr, node=_op_name(x)))
    if base._grad_fn is None:
        raise RuntimeError(ERR_LEAF_VIEW)


def _op_name(v):
    """The op that made view ``v``, as PyTorch's errors name it (``Split``, ``Squeeze1``)."""
    # (PyTorch drops "Backward" and a version 0: SplitBackward0 is Split, SqueezeBackward1
    # is Squeeze1)
    op, _, version = type(v._grad_fn).__name__.rpartition("Backward")
    return op + (version if version != "0" else "")


def check_no_overlap(x):
    """Refuse an op that reads and writes ``x`` when elements of ``x`` share memory (an expanded
    tensor): each alias would be updated once per element, as PyTorch refuses it. Writes of
    values that do not depend on ``x`` (``fill_``, ``zero_``, ``x[i] = v``) stay allowed."""
    a = x._data
    if 0 in a.strides and _self_overlapping(a):  # (no stride 0, no overlap: no call)
        raise RuntimeError(ERR_OVERLAP)


def _self_overlapping(a) -> bool:
    """Whether elements of array ``a`` share memory: a stride 0 over a dim of several elements
    (PyTorch's test; other overlaps are too hard to tell, and allowed)."""
    return 0 in a.strides and a.size > 0 and any(
        st == 0 and n > 1 for n, st in zip(a.shape, a.strides))


def check_no_partial_overlap(x, inputs, full=False):
    """Refuse writing into ``x`` what is computed from an input whose memory is partly ``x``'s
    (an input read after parts of it were written): PyTorch's elementwise ops, ``out=`` and
    copy_ refuse it (``assert_no_partial_overlap``). ``x`` itself, or all of its memory laid
    out alike, is fine; with ``full`` that is refused too (index_put_'s
    ``assert_no_overlap``). Layouts that are not dense are too hard to tell: allowed."""
    a = x._data
    for t in inputs:
        if isinstance(t, Tensor) and t is not x and t._lazy is None:
            b = t._data
            if _may_share(a, b) and _overlap(a, b) in (("partial", "full") if full
                                                       else ("partial",)):
                raise RuntimeError(ERR_PARTIAL_OVERLAP)


def _may_share(a, b) -> bool:
    """Whether arrays ``a`` and ``b`` may share memory (GPU arrays: one buffer; a NumPy
    scalar, one element selected by integers, is a copy)."""
    if type(a) is np.ndarray:
        if type(b) is not np.ndarray:
            return False
        if a.base is None and b.base is None and a is not b:
            return False  # (two arrays that own their memory: told without NumPy's 0.3 us)
        return np.may_share_memory(a, b)
    return getattr(b, "buf", None) is getattr(a, "buf", False)


def _overlap(a, b):
    """How arrays ``a`` and ``b`` of one memory block do: "full" (the same elements at the
    same addresses), "partial", or None (none, or too hard to tell): at::get_overlap_status."""
    if not (a.size and b.size and _dense(a) and _dense(b)):
        return None
    a0, b0 = _first_byte(a), _first_byte(b)
    a1, b1 = a0 + a.size * a.itemsize, b0 + b.size * b.itemsize
    if a0 == b0 and a1 == b1:
        return "full" if a.strides == b.strides else "partial"
    return "partial" if a0 < b1 and b0 < a1 else None


def _first_byte(a) -> int:
    """Where array ``a`` starts: an address on the host, an offset into its buffer on a GPU."""
    if type(a) is np.ndarray:
        return a.__array_interface__["data"][0]
    return a.offset * a.itemsize


def _dense(a) -> bool:
    return layout.is_non_overlapping_and_dense(a.shape, [st // a.itemsize for st in a.strides])


def _writable(x):
    """``x``'s array, about to be written: expressions that read it are evaluated first."""
    a = x._data
    before_write(a)
    return a


class _Traits(NamedTuple):
    """What ``inplace`` reads of an op, found once per op (a ``getattr`` that misses costs
    0.3 us, and most ops declare none of these)."""

    writes_overlapping: bool  # it may write into a tensor with internal overlap
    check: object  # its ``inplace_check`` or None
    overlap: object  # its ``inplace_overlap``: what it refuses of the tensors it reads
    elementwise: object  # the elementwise op it is (or is without keywords, ``sub``), or None
    checks_cast: bool  # PyTorch checks the result's dtype against x's before the kernel
    # its ``inplace_args(*args, **kwargs)``: the elementwise op's operands and parameters, in
    # order, from the call's (``x.addcmul_(y, z, value=0.1)``: ``(y, z, 0.1)``), or None
    positional: object


_TRAITS: dict = {}


def _traits(op) -> _Traits:
    traits = _TRAITS.get(op)
    if traits is None:
        # (an elementwise op itself, or a function that is one: ``sub`` without keywords)
        elementwise = getattr(op, "op", None) or getattr(op, "inplace_op", None) or op
        if getattr(elementwise, "kind", None) != "elementwise":
            elementwise = None
        traits = _TRAITS[op] = _Traits(
            getattr(op, "writes_overlapping", False), getattr(op, "inplace_check", None),
            getattr(op, "inplace_overlap", "partial"), elementwise,
            elementwise is not None and bool(elementwise.refuse_float or elementwise.refuse_bool),
            getattr(op, "inplace_args", None))
    return traits


def inplace(x, op, *args, **kwargs):
    """``x.op_(*args)``: run ``op(x, *args)`` and write its result into ``x``."""
    check_inplace(x)
    traits = _TRAITS.get(op) or _traits(op)
    if not traits.writes_overlapping:
        check_no_overlap(x)
    if traits.check is not None:
        traits.check(x, *args, **kwargs)
    if traits.overlap is not None and (args or kwargs):
        check_no_partial_overlap(x, (*args, *kwargs.values()), traits.overlap == "full")
    if traits.checks_cast:
        # PyTorch checks that the result's dtype fits x before it looks for the op's kernel
        # (the dtype of x and the op's other operands: its parameters take no part)
        operands = args[:traits.elementwise.n_in - 1]
        if not _keeps_dtype(x, operands):
            check_cast(D.result_type(x, *operands), x.dtype)
    # an elementwise op on a call no graph records: its loop writes into x
    if traits.elementwise is not None and not _tracked(x, *args):
        operands = args if traits.positional is None else traits.positional(*args, **kwargs)
        if ((not kwargs or traits.positional is not None)
                and dispatch.write_into(traits.elementwise, x, operands)):
            x._bump()
            return x
    if not dispatch.FAST_PATH:
        return assign_inplace(x, _observed_inplace(x, op, args, kwargs))
    return assign_inplace(x, op(x, *args, **kwargs))


def _observed_inplace(x, op, args, kwargs):
    """``op(x, ...)`` while op observers are set, with ``x`` noted as the tensor about to be
    written: under saved-tensor hooks, a node that saves ``x`` packs a copy of its value
    (ops/record.py, ``pack_saved``), as PyTorch's in-place op saves ``self.clone()``."""
    before = saved_hooks.writing
    saved_hooks.writing = x
    try:
        return op(x, *args, **kwargs)
    finally:
        saved_hooks.writing = before


def _keeps_dtype(x, args) -> bool:
    """Whether ``x`` and ``args`` promote to ``x``'s dtype as they are, told without
    ``result_type``: each a tensor of that dtype, or a Python number with a float ``x`` (the
    optimizer's ``p -= lr * p.grad``); False where that needs a look."""
    if x._lazy is not None:
        return False
    dt = x._data.dtype
    for a in args:
        kind = type(a)
        if kind is float or kind is int:
            if dt.kind != "f":
                return False
        elif not isinstance(a, Tensor) or a._lazy is not None or a._data.dtype is not dt:
            return False
    return True


def check_cast(rdt, xdt):
    """PyTorch's refusal to write a result of dtype ``rdt`` into a tensor of dtype ``xdt``."""
    if rdt is not xdt and not D.can_cast(rdt, xdt):
        raise RuntimeError(
            f"result type {_CAST_NAMES[rdt.name]} can't be cast to the desired output "
            f"type {_CAST_NAMES[xdt.name]}"
        )


def assign_inplace(x, result, region=None):
    """Write ``result`` into ``x``'s memory and make ``x`` stand for it in the graph."""
    data = result._data
    a = x._data
    if data.shape != a.shape:
        raise RuntimeError(
            f"output with shape {list(x.shape)} doesn't match the broadcast shape "
            f"{list(result.shape)}"
        )
    check_cast(result.dtype, x.dtype)
    tracked = result._requires_grad
    if tracked and x._base is not None and x._view_kind is not None and not x.requires_grad:
        # a view made in no_grad mode, or one of several views of a base that did not require
        # grad, would join the graph here: refused, as PyTorch's view creation meta does
        raise RuntimeError(ERR_NO_GRAD_VIEW if x._view_kind == "no_grad"
                           else ERR_MULTI_VIEW_NO_GRAD)
    if tracked:
        _keep_old_self(x, result)
    before_write(a)
    a[...] = data
    x._bump()
    if result._fw_grad is not None or x._fw_grad is not None:  # (inside a dual level)
        set_tangent(x, result._fw_grad)
    if not tracked:
        return x
    _saved_result_is_x(x, result)
    base = x._base
    # .grad is now the gradient of the new value, as in PyTorch (a write through a view
    # changes its base's value too): a retain_grad hook moves to the new node
    if base is None:
        old = x._grad_fn, x._output_nr
        x._grad_fn = result._grad_fn
        x._requires_grad = True
        x._output_nr = result._output_nr
        move_retain_grad(x, *old)
    else:
        old = base._grad_fn, base._output_nr
        _reroute_old_view(x, result, base)
        node = copy_slices(base, result, x._data, region)._grad_fn
        base._grad_fn = node
        base._requires_grad = True
        base._output_nr = 0
        move_retain_grad(base, *old)
        # x itself (like every other view of base) re-derives its node from base, at once as
        # PyTorch's rebase_history does (the other views when next asked: refresh_view)
        x.grad_fn  # noqa: B018
    return x


def _reroute_old_view(x, result, base):
    """Send the gradient of view ``x``'s old value (input 0 of ``result``'s node, the in-place
    op's) into its base's old node directly, as PyTorch's CopySlices puts it into the base's
    gradient: the view's own old node (and a view it was made from) is left off the path, so
    hooks and retain_grad there see nothing."""
    node = result._grad_fn
    edges = getattr(node, "next_functions", ())
    if not edges or edges[0][0] is None or edges[0][0] is not x._grad_fn or \
            base._grad_fn is None or not x._data.size:
        # (an empty view keeps its path: AsStridedBackward0's gradient of an empty view is
        # zeros that are not recorded, where CopySlices' copy into the base's is, under
        # create_graph)
        return
    old_base = Tensor._make(base._data)  # (stands for the old value: only its node is read)
    old_base._grad_fn, old_base._output_nr = base._grad_fn, base._output_nr
    old_base._requires_grad = True
    view_node = _as_strided_node(old_base, x._data)
    # (it stands where the view's old node stood, between the base's old node and the op's:
    # the engine runs nodes in the order of their sequence numbers)
    view_node._sequence_nr = edges[0][0]._sequence_nr
    node.next_functions = ((view_node, 0),) + edges[1:]


def _as_strided_node(base, view):
    """The AsStridedBackward0 node of array ``view`` taken from ``base``'s memory."""
    isz = view.itemsize
    a = base._data
    # (as_strided's offset counts in memory from base's first element, as its strides do: a
    # base laid out as a transpose (x.T ** 2) is not in C order)
    if not view.size:
        start = 0
    elif type(a) is np.ndarray:
        start = (view.__array_interface__["data"][0] - a.__array_interface__["data"][0]) // isz
    else:
        start = view.offset - a.offset
    with enable_grad():
        return M.as_strided(base, view.shape, [st // isz for st in view.strides],
                            start)._grad_fn


def move_retain_grad(x, old_node, old_nr):
    """Move ``x``'s retain_grad hook from ``old_node`` (its output ``old_nr``) to ``x``'s
    node now, as PyTorch's update_tensor_hooks_on_new_gradfn: ``.grad`` is the gradient of
    the value ``x`` holds when backward runs, not of the one it held at retain_grad()."""
    if not x._retains_grad or old_node is None or old_node is x._grad_fn:
        return
    hooks = old_node.__dict__.get("_retain_grad_hooks")
    capture = hooks.pop(old_nr, None) if hooks is not None else None
    if capture is not None and x._grad_fn is not None:
        x._grad_fn._own("_retain_grad_hooks")[x._output_nr] = capture


def _keep_old_self(x, result):
    """If ``result``'s node saved ``x`` itself as its first input, save a copy instead."""
    ctx = getattr(result._grad_fn, "ctx", None)
    if ctx is None:
        return
    for name, s in ctx.saved.items():
        if not s.is_output:
            if s.tensor is x:
                old = Tensor._make(x._data.copy())
                old._grad_fn, old._output_nr = x.grad_fn, x._output_nr
                old._requires_grad = x._requires_grad
                if x._fw_grad is not None:  # (the old value's tangent, for forward over reverse)
                    set_tangent(old, x._fw_grad)
                ctx.saved[name] = SavedTensor(old, is_output=False)
            return


def _saved_result_is_x(x, result):
    """A saved ``result`` now lives in ``x``'s memory, under ``x``'s version counter."""
    ctx = getattr(result._grad_fn, "ctx", None)
    if ctx is None:
        return
    for s in ctx.saved.values():
        # (one packed by saved-tensor hooks is the hooks' to keep)
        if s.is_output and type(s) is not PackedTensor and s.array() is result._data:
            s.data = x._data
            s.version_cell = x._version_cell
            s.version = x._version_cell[0]


def refresh_view(v):
    """Re-derive a view's node after its base, or memory they share, was modified in place,
    recorded or not (PyTorch does it lazily, when the version counter moved)."""
    base = v._base
    if v._version_cell[0] == v._view_version:
        # the base's node changed but not the memory: it was detached in place (detach_, which
        # PyTorch's version counter does not see): its views keep their history, as in PyTorch
        v._view_src = base._grad_fn
        return
    if v._grad_fn is None and not base._requires_grad:
        # (PyTorch returns a view's node at once when it has none and its base needs none, and
        # takes no note of the version: once the base requires grad, the write counts still)
        v._view_src = base._grad_fn
        return
    kind = v._view_kind
    if kind == "no_grad":
        raise RuntimeError(ERR_NO_GRAD_VIEW_REBASE)
    if kind is not None:
        if v._grad_fn is None:
            raise RuntimeError(ERR_MULTI_VIEW_NO_GRAD_REBASE)
        raise RuntimeError(ERR_MULTI_VIEW_REBASE.format(k=v._output_nr, node=_op_name(v)))
    v._view_src, v._view_version = base._grad_fn, v._version_cell[0]
    if base._requires_grad:
        node = _as_strided_node(base, v._data)
        old = v._grad_fn, v._output_nr
        v._grad_fn, v._output_nr, v._requires_grad = node, 0, True
        # (a view asked for its node only after backward keeps the hook on the old node,
        # where the backward through its base may not pass: .grad stays None, as PyTorch's)
        move_retain_grad(v, *old)
    else:
        v._grad_fn, v._requires_grad = None, False


# ---------------------------------------------------------------- ops behind in-place methods


@composite("copy_slices", node="CopySlices")
def copy_slices(ctx, base, src, view, region=None):
    """``base`` after ``src`` was written into its region ``view`` (an array into ``base``'s
    memory; the write is already done). ``region``: the part of ``view`` the in-place op was
    applied to, if less (``view[i] = v`` writes ``view[i]``)."""
    ctx.positions = M.view_positions(base._data, view)
    # (the backward writes the gradient of the tensor written in place into the base's:
    # PyTorch refuses that where that tensor's elements share memory, as after fill_ or zero_
    # of an expanded view, but not after a write into one element of it, nor where the base
    # needs no gradient: CopySlices then computes only the value's)
    ctx.overlap = base.requires_grad and _self_overlapping(view if region is None else region)
    return base._data


@copy_slices.defvjp
def copy_slices_vjp(ctx, grad):
    if ctx.overlap:
        raise RuntimeError(ERR_OVERLAP)
    where = M._Index((ctx.positions,), {"advanced"})
    flat = grad.reshape(-1)
    g_base = M.index_put(flat, where, 0).reshape(ctx.input_shapes[0])
    g_src = M.index_select_any(flat, where)
    if _grad_state.enabled:  # recorded: PyTorch hands the op a clone of the region's gradient
        g_src = g_src.clone()
    return g_base, sum_to(g_src, ctx.input_shapes[1])


# (the write into the base is done before the op runs: the derived rule cannot run it again)
copy_slices.defjvp(refused(copy_slices))


@composite("zero", node="ZeroBackward0")
def zero(ctx, x):
    return ctx.backend.zeros(x.shape, x._data.dtype)


zero.defvjp(lambda ctx, grad: _zeros(ctx, 0))
zero.defjvp(linear(zero))


@composite("inplace_without_derivative", node="LeakyReluBackward1")
def without_derivative(ctx, x, op, params, node, error):
    """``op(x, *params)``, recorded as PyTorch's in-place node ``node`` whose backward raises
    ``error`` (an exception type and its message): what ``x.<op>_(*params)`` records where
    PyTorch's in-place form has no derivative (``acosh_``, ``leaky_relu_`` with a negative
    slope)."""
    ctx.node_name, ctx.error = node, error
    with no_grad():
        return op(x, *params)._data


@without_derivative.defvjp
def without_derivative_vjp(ctx, grad):
    kind, message = ctx.error
    raise kind(message)


@composite("fill", node="FillBackward2")
def fill(ctx, x, value, out_of_place=False):
    """``x``'s shape and dtype filled with ``value`` (a number or a 0-d tensor): what
    ``x.fill_(value)`` writes (FillBackward2, 3), or ``numbagrad.fill`` (FillBackward0, 1)."""
    version = 0 if out_of_place else 2
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.ndim} dimensions."
            )
        version += 1
        value = value._host()
    ctx.node_name = f"FillBackward{version}"
    return ctx.backend.full(x.shape, value, x._data.dtype)


@public("function", name="fill")
def fill_function(input, value):
    """A new tensor of ``input``'s shape, dtype and device filled with ``value`` (a number or a
    0-d tensor, which gets the gradient's sum)."""
    return fill(input, value, True)


fill.defjvp(linear(fill, 0, 1))


@fill.defvjp
def fill_vjp(ctx, grad):
    if len(ctx.input_shapes) == 1:
        return _zeros(ctx, 0)
    return _zeros(ctx, 0), grad.sum()


@composite("copy", node="CopyBackwards")
def copy(ctx, x, src):
    out = ctx.backend.empty(x.shape, x._data.dtype)
    _copy_into(out, x, src)
    return out


def _copy_into(a, x, src):
    """``a[...] = src`` (``a`` is ``x``'s memory or its new value), in PyTorch's words when
    ``src`` does not broadcast to ``x``."""
    try:
        if src.ndim > x.ndim:
            raise ValueError  # NumPy drops leading size-1 dims; PyTorch refuses them
        if type(a) is np.ndarray:
            cpu.copyto(a, src._data)  # (without NumPy's warning for inf cast to an integer)
        else:
            a[...] = src._data
    except (ValueError, RuntimeError):
        bad = next((d for d in range(-1, -min(x.ndim, src.ndim) - 1, -1)
                    if 1 not in (src.shape[d], x.shape[d]) and src.shape[d] != x.shape[d]), None)
        if bad is None:  # the two broadcast, to a shape larger than x
            raise RuntimeError(
                f"output with shape {list(x.shape)} doesn't match the broadcast shape "
                f"{list(np.broadcast_shapes(x.shape, src.shape))}"
            ) from None
        raise RuntimeError(
            f"The size of tensor a ({x.shape[bad] if x.ndim else 1}) must match the size of "
            f"tensor b ({src.shape[bad] if src.ndim else 1}) at non-singleton dimension "
            f"{x.ndim + bad if x.ndim else 0}"
        ) from None


copy.defjvp(linear(copy, 0, 1))


@copy.defvjp
def copy_vjp(ctx, grad):
    return _zeros(ctx, 0), sum_to(grad, ctx.input_shapes[1])


def _zeros(ctx, i):
    """The gradient of an input whose values the op overwrote entirely."""
    return Tensor._make(ctx.backend.zeros(ctx.input_shapes[i], ctx.input_dtypes[i].np))


# ---------------------------------------------------------------- the methods


def _tracked(*tensors) -> bool:
    """Whether the in-place op runs as its op and a write (``assign_inplace``): a tensor needs
    a gradient, or op observers are set (ops/observe.py: a tangent to carry, a result to
    check)."""
    if not dispatch.FAST_PATH:
        return True
    if _grad_state.enabled:
        for t in tensors:  # (a loop: a generator for ``any`` costs 0.3 us on each call)
            if isinstance(t, Tensor) and t.requires_grad:
                return True
    return False


def add_(x, other):
    check_inplace(x)
    check_no_overlap(x)
    check_no_partial_overlap(x, (other,))
    if not _tracked(x, other):
        # the kernel writes straight into x (no temporary)
        if dispatch.write_into(E.add, x, (other,)):
            x._bump()
            return x
        a = x._data
        b = other._data if type(other) is Tensor else None
        xdt = x.dtype
        if type(a) is np.ndarray and type(b) is np.ndarray and b.dtype is a.dtype:
            be, dt = cpu, xdt  # (two CPU tensors of one dtype: what the two calls give)
        else:
            be = device_backend((x, other), scalars_ok=True)
            dt = D.result_type(x, other)
        if dt is xdt and be is backend.of(a):
            before_write(a)
            be.run_elementwise(E.add.kernel(dt, be), [a, _as_array(other, dt)], dt.np, out=a)
            x._bump()
            return x
    return assign_inplace(x, E.add(x, other))


def zero_(x):
    check_inplace(x)
    if not _tracked(x):
        a = _writable(x)
        if type(a) is np.ndarray:
            a.fill(0)  # (half of ``a[...] = 0``'s 0.3 us: ``p.grad.zero_()`` runs every step)
        else:
            a[...] = 0
        x._bump()
        return x
    return assign_inplace(x, zero(x))


def fill_(x, value):
    check_inplace(x)
    if isinstance(value, Tensor):  # (PyTorch fills with a number even where memory is shared)
        check_no_overlap(x)
    if not _tracked(x, value):
        # (a tensor's value is cast as a copy casts it: wrapped into an integer dtype, not
        # checked as a Python number is)
        if isinstance(value, Tensor):
            value = cpu.without_fp_warnings(np.array(value.item()).astype, x.dtype.np)[()].item()
        _writable(x)[...] = (value.item() if hasattr(value, "item")
                             else D.checked_number(value, x.dtype))
        x._bump()
        return x
    return assign_inplace(x, fill(x, value))


def copy_(x, src, non_blocking=False):
    # (non_blocking: whether a copy between host and device may run asynchronously; the copies
    # here finish before they return, as a blocking one does)
    check_inplace(x)
    if _is_same(x, src) and not _tracked(x, src):
        # a copy of x's own elements onto themselves: PyTorch returns before its overlap check
        # (an expanded x too); its version moves
        x._bump()
        return x
    check_no_overlap(x)
    check_no_partial_overlap(x, (src,))
    if not _tracked(x, src) or not x.dtype.is_floating_point:
        # (an integer or bool tensor carries no gradient: the values are only cast into it)
        _copy_into(_writable(x), x, src)
        x._bump()
        return x
    return assign_inplace(x, copy(x, src))


def _is_same(x, src) -> bool:
    """Whether ``src`` is ``x``'s elements as they are laid out: the tensor itself, or a view
    of the same memory with x's dtype, shape and strides (PyTorch's ``is_same`` and same-data
    test in ``copy_``)."""
    if src is x:
        return True
    if not isinstance(src, Tensor) or x._lazy is not None or src._lazy is not None:
        return False
    a, b = x._data, src._data
    return (type(a) is type(b) is np.ndarray and a.dtype == b.dtype and a.shape == b.shape
            and a.strides == b.strides and _first_byte(a) == _first_byte(b))


def view_inplace(x, op, node, *args):
    """``x.t_()``, ``x.unsqueeze_(d)``: ``x`` takes the shape and strides of the view
    ``op(x, *args)`` of its memory, and that view's node under ``node``, PyTorch's name for the
    in-place variant (TBackward1). Its version moves, as PyTorch's does."""
    check_inplace(x)
    v = op(x, *args)  # (a bad argument raises here, x unchanged)
    x._data = v._data
    x._bump()
    if v._grad_fn is None:
        return x
    v._grad_fn.__class__ = op.node_class(node)
    x._grad_fn, x._output_nr, x._requires_grad = v._grad_fn, 0, True
    if x._base is not None:
        # (x stays a view of its base: its node is this one, not one re-derived from the base)
        x._view_src, x._view_version = x._base._grad_fn, x._version_cell[0]
    return x


def _one_mask(where):
    """Whether the index is one bool mask among slices, None and Ellipsis: PyTorch's
    index_put_ fills through it with masked_fill_ when the value has one element."""
    arrays = [i for i in where.index if isinstance(i, np.ndarray)]
    return len(arrays) == 1 and arrays[0].dtype == np.bool_ and all(
        i is None or i is Ellipsis or isinstance(i, slice) or i is arrays[0]
        for i in where.index)


def _fills_nonfloat(x, where, value, advanced):
    """Whether PyTorch records writing ``value`` (which requires grad) into the integer or
    bool ``x`` at ``where``: it copies a value into such a target without a graph, but records
    the fill of a region by one element (a 0-d value into a region that is not, or anything
    through a single bool mask, where the dtypes need not match)."""
    if advanced:  # (the dtype check let only one element through one mask get here)
        return True
    return value.ndim == 0 and np.ndim(x._data[where.index]) > 0


def setitem(x, index, value):
    # a number is converted to x's dtype first, as PyTorch's setitem does before it reads the
    # index (a value that does not fit raises before a bad index or a refused write)
    if type(value) is int or isinstance(value, float) and x.dtype.np.kind in "iu":
        value = D.checked_number(value, x.dtype)
    elif isinstance(value, float):
        D.checked_number(value, x.dtype)  # (a finite float past float32's range raises)
    if _grad_state.enabled and x._base is None and x._grad_fn is None and x._requires_grad:
        # x[i] = v writes through a view of x, as PyTorch words it
        basic = M._normalize_index(x, index)[1].isdisjoint({"advanced"})
        raise RuntimeError(ERR_LEAF_VIEW if basic else ERR_LEAF)
    if (isinstance(index, Tensor) and index.dtype is D.uint8
            and not (isinstance(value, Tensor) and value.ndim)):
        # PyTorch fills through one mask with masked_fill_, which takes bool masks only
        raise M.mask_error("masked_fill_", index)
    # the index becomes arrays here, once: an index Tensor must not count as an input of the
    # node (its gradient slot would take the value's gradient). A bad index raises its
    # IndexError first, as in PyTorch, then a write PyTorch refuses its RuntimeError
    where = M._Index.of(x, index)
    check_inplace(x)
    if where.staged is not None:  # integers first, as PyTorch: a view, then the rest
        first, then = where.staged
        return setitem(M.getitem(x, first), then, value)
    if "advanced" not in where.kinds and 0 in x._data.strides:
        # a write through a view, which PyTorch refuses where its elements share memory (an
        # advanced index writes with index_put_, which allows it)
        check_no_overlap(Tensor._make(x._data[where.index]))
    if where.kinds <= {"slice", "ellipsis"}:
        # an index that selects all of x: PyTorch fills it with a number or a 0-d tensor and
        # copies anything else into it (FillBackward3, CopyBackwards)
        if not isinstance(value, Tensor):
            value = Tensor._make(np.asarray(value, dtype=x.dtype.np))
        elif value.ndim > x.ndim:
            lead = value.shape[:value.ndim - x.ndim]
            if any(n != 1 for n in lead):  # (PyTorch drops leading 1s only)
                raise M.expand_error(list(value.shape), list(x.shape), value._data.dtype)
            value = value.reshape(value.shape[value.ndim - x.ndim:])
        if value.ndim == 0 and x.ndim:  # (into a 0-d tensor PyTorch copies)
            fill_(x, value)
            return
        if any(n not in (1, m) for n, m in zip(value.shape[::-1], x.shape[::-1])):
            raise M.expand_error(list(value.shape), list(x.shape), value._data.dtype)
        copy_(x, value)
        return
    advanced = "advanced" in where.kinds
    if isinstance(value, Tensor):
        # PyTorch copies into the view x[index] (copy_), or puts into x (index_put_, which
        # refuses a value sharing any of x's memory)
        if advanced:
            check_no_partial_overlap(x, (value,), True)
        else:
            region = x._data[where.index]
            if "none" in where.kinds:
                region = M.unsqueezed_as_pytorch(x._data, where.index, region)
            check_no_partial_overlap(Tensor._make(region), (value,))
    if advanced and isinstance(value, Tensor) and value.numel() == 1 and _one_mask(where):
        # one value through a single bool mask is masked_fill_(mask, value.item()) in
        # PyTorch: cast with its checked conversion
        D.checked_number(value.item(), x.dtype)
    elif advanced and isinstance(value, Tensor) and value.dtype is not x.dtype:
        # (PyTorch builds the index first: an index into a dim of size 0 is its IndexError)
        M.region_shape(x.shape, where.index)
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{_CAST_NAMES[x.dtype.name]} for the destination and "
            f"{_CAST_NAMES[value.dtype.name]} for the source."
        )
    if not _tracked(x, value) or not (x.dtype.is_floating_point
                                      or _fills_nonfloat(x, where, value, advanced)):
        # an integer or bool target carries no gradient: the value is only cast into it
        M.write_region(_writable(x), where.index,
                       value._data if isinstance(value, Tensor) else value, advanced)
        x._bump()
        return
    # (a basic index writes through the view x[index]; an advanced one into x itself)
    assign_inplace(x, M.index_put(x, where, value),
                   None if advanced else x._data[where.index])
    if _self_overlapping(x._data):
        # x's elements share memory (expanded): the whole new value written back above left
        # each shared element with its last alias's old value; the region wins, as in PyTorch
        M.write_region(x._data, where.index,
                       value._data if isinstance(value, Tensor) else value, advanced)
