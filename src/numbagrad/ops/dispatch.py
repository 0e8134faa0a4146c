"""How a call of an elementwise op becomes a kernel launch and, when recorded, a node.

``make_function(op)`` is the op as a plain function of one operand (and its parameters) or two
(``numbagrad.mul``, ``Tensor.__mul__``, ``x.mul``, ``x ** 2``). Its fast path takes the calls
most code makes on small tensors: CPU tensors, C-contiguous, of any rank, one dtype and shape,
a Python number as the second operand of a float tensor or as a parameter, below the size
where threads or deferral pay. It runs the op's serial loop through its compiled entry point
(``cpu.flat_entry``: no Numba dispatch, no broadcasting, no casts) and records the node with
``record.record_lean``. Everything else goes to ``op._call``, the general path (registry.py):
casts, broadcasting, strided views, CUDA, lazy tensors, large sizes. There is no third path.

A plain function with inline checks and a direct call of the entry point is the measured
shape of the win (a plain function's call costs 0.04 us against 0.13 for ``__call__``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import backend
from .. import dtypes as D
from .._tensor import PLAIN_SUBCLASSES, LazyTensor, Tensor
from ..autograd.grad_mode import _state as _grad_state
from ..autograd.grad_mode import backward_passes
from ..autograd.graph import _wrap
from ..backend import cpu
from ..backend.memory import before_write
from . import lazy
from .record import (
    _NUMBER_OTHER, SINGLE_INPUT, SINGLE_OTHER, SPREAD_INPUT, SPREAD_OTHER, CompositeCtx, edges,
    mark_views, needs_grad, record_composite, record_general, record_lean,
)

_make = Tensor._make  # (bound once: the fast path makes a Tensor per call)

# what an op's function takes besides Tensors (a NumPy array is refused by the op itself)
NUMBERS = (bool, int, float, np.bool_, np.integer, np.floating, np.ndarray)


class Plan(NamedTuple):
    """How an op runs on the fast path for one input dtype; made once per (op, dtype)."""

    compute: D.DType  # the dtype the kernel computes in: the inputs' own
    out: np.dtype  # the result's dtype
    kernels: object  # the op's loop module for ``compute`` (cpu.get_elementwise_kernel)
    entries: dict  # its loops' compiled entry points, by key (``cpu.flat_entry``)
    small_below: int  # from this size on: the general path (threads, deferral)
    leans: dict  # record.LeanPlan, by (number operands << 4 | inputs needing grad)


# False while op observers are set (ops/observe.py): every call then takes the general path
FAST_PATH = True


def make_plan(op, np_dtype):
    """``op``'s Plan for inputs of ``np_dtype``, or False when such inputs take the general
    path (an int input of a float op needs a cast; a dtype the op refuses; ``where``; op
    observers set)."""
    plan = False
    dt = D.from_numpy_dtype(np_dtype)
    # (an op without a derivative records the general node, which raises in backward;
    # ``where``'s plan is that of its values' dtype)
    if (FAST_PATH and op._refused(dt) is None and op.derivative_missing is None):
        compute = D.to_float(dt) if op.dtype_rule == "float" else dt
        if compute is dt:
            mod = op.kernel(compute)
            plan = Plan(compute, op.out_dtype(compute).np, mod, mod.ENTRIES,
                        min(mod.PARALLEL_MIN, lazy.DEFER_MIN_ITEMS), {})
    op._plans[np_dtype] = plan
    return plan


def first_launch(plan, key, out, values):
    """Run the plan's loop ``key`` on ``out`` (flat) and ``values`` the first time, which finds
    its compiled entry point for the next calls (``cpu.flat_entry``)."""
    cpu.flat_entry(plan.kernels, key, out, values, plan.compute.np)


def operand(a) -> bool:
    """Whether ``a`` may be an operand of an elementwise op or operator: a Tensor or a number.
    Anything else (None, a string, a list) makes an operator return NotImplemented, so Python
    raises its "unsupported operand type(s)" error, as with PyTorch's tensors."""
    return isinstance(a, Tensor) or isinstance(a, NUMBERS)


def refuse(name, args, names=("input", "other"), method=False):
    """PyTorch's TypeError for the first of ``args`` that is no operand (``operand``); a
    method's positions do not count ``self``."""
    for k, a in enumerate(args):
        if not operand(a):
            raise TypeError(f"{name}(): argument '{names[k]}' (position {k + 1 - method}) "
                            f"must be Tensor, not {type(a).__name__}")


def make_function(op, operator=False, method=False):
    """``op`` as a plain function (see the module's docstring). An argument that is neither a
    Tensor nor a number raises PyTorch's TypeError; the ``operator`` variant
    (``Tensor.__add__``) returns NotImplemented instead (its ``.operator``), and the
    ``method`` one (``x.add``) counts the positions after ``self`` (its ``.method``)."""
    plans = op._plans
    records = op.dtype_rule != "bool"
    name = op.name
    n_params = len(op.param_names)

    # One function per arity, each with the same steps: the checks that let its operands
    # take the fast path; the plan of their dtype; the loop's entry point called on a new
    # array; the node recorded if an operand may need a gradient (a view's flags are checked
    # by record_lean); anything else to ``op._call``.
    if op.n_in == 1 and not n_params:
        names = cpu.ranked("a")

        def function(input):
            if type(input) is Tensor or type(input) in PLAIN_SUBCLASSES:
                a = input._data
                if type(a) is np.ndarray and a.flags.carray:
                    plan = plans.get(a.dtype)
                    if plan is None:
                        plan = make_plan(op, a.dtype)
                    if plan and a.size < plan.small_below:
                        out = np.empty(a.shape, plan.out)
                        nd = a.ndim
                        entry = plan.entries.get(names[nd])
                        if entry is None:
                            first_launch(plan, "a", out, (a,))
                        else:
                            entry(out, a)
                        result = _make(out)
                        if records and _grad_state.enabled and (
                                input._requires_grad or input._base is not None):
                            record_lean(op, plan, 0, (input,), (), result)
                        return result
            elif not operand(input):
                return NotImplemented if operator else refuse(name, (input,), method=method)
            return op._call((input,))
    elif op.n_in == 1:
        # (the same steps with parameters: one function for both would take ``*params`` on
        # every unary call, 0.1 us of a 1.2 us ``sin(x)``)
        key_ = "a" + "p" * n_params
        names = cpu.ranked(key_)

        def function(input, *params):
            if type(input) is Tensor or type(input) in PLAIN_SUBCLASSES:
                a = input._data
                if (type(a) is np.ndarray and a.flags.carray and len(params) == n_params
                        and _numbers(params, a.dtype, op.checked_params)):
                    plan = plans.get(a.dtype)
                    if plan is None:
                        plan = make_plan(op, a.dtype)
                    if plan and a.size < plan.small_below:
                        out = np.empty(a.shape, plan.out)
                        nd = a.ndim
                        entry = plan.entries.get(names[nd])
                        if entry is None:
                            first_launch(plan, key_, out, (a, *params))
                        else:
                            entry(out, a, *params)
                        result = _make(out)
                        if records and _grad_state.enabled and (
                                input._requires_grad or input._base is not None):
                            record_lean(op, plan, 0, (input,), params, result)
                        return result
            elif not operand(input):
                return NotImplemented if operator else refuse(name, (input,), method=method)
            return op._call((input, *params))
    elif op.n_in == 2 and not n_params:
        arrays, with_number = cpu.ranked("aa"), cpu.ranked("as")

        def function(input, other):
            if type(input) is Tensor or type(input) in PLAIN_SUBCLASSES:
                a = input._data
                if type(a) is np.ndarray and a.flags.carray:
                    kind = type(other)
                    if kind is float or kind is int and _INT_MIN <= other <= _INT_MAX:
                        # its value, as the tensor's dtype (a float tensor's)
                        b, key = other, _NUMBER_OTHER if a.dtype.kind == "f" else -1
                    elif kind is Tensor or kind in PLAIN_SUBCLASSES:
                        b = other._data
                        if type(b) is np.ndarray and b.dtype is a.dtype and b.flags.carray:
                            if b.shape != a.shape:  # (a bias added to rows, a mask, a scale)
                                return call_broadcast(op, input, other, records)
                            key = 0
                        else:
                            key = -1
                    else:
                        key = -1
                    if key >= 0:
                        plan = plans.get(a.dtype)
                        if plan is None:
                            plan = make_plan(op, a.dtype)
                        if plan and a.size < plan.small_below:
                            out = np.empty(a.shape, plan.out)
                            pattern = "as" if key else "aa"
                            nd = a.ndim
                            entry = plan.entries.get((with_number if key else arrays)[nd])
                            if entry is None:
                                first_launch(plan, pattern, out, (a, b))
                            else:
                                entry(out, a, b)
                            result = _make(out)
                            if records and _grad_state.enabled and (
                                    input._requires_grad or input._base is not None or not key
                                    and (other._requires_grad or other._base is not None)):
                                record_lean(op, plan, key, (input, other), (), result)
                            return result
            if not (operand(input) and operand(other)):
                return (NotImplemented if operator
                        else refuse(name, (input, other), method=method))
            return op._call((input, other))
    else:
        # three operands, or two with parameters (``addcmul``, ``lerp``, ``add`` with alpha,
        # a loss's backward kernel, ``where``): the same steps over any number of operands,
        # each a tensor of the first one's shape and float dtype, a tensor of that dtype and
        # one value (a mean's gradient; read as a number), or a Python number, recorded by the
        # general path's recorder. ``where``'s first operand is a bool tensor of that shape,
        # and its second one gives the dtype.
        n_in = op.n_in
        n_args = n_in + n_params
        first = 1 if op.dtype_rule == "where" else 0

        def function(*args):
            input = args[first]
            if (len(args) == n_args
                    and (type(input) is Tensor or type(input) in PLAIN_SUBCLASSES)):
                a = input._data
                if type(a) is np.ndarray and a.size == 1 and not first:
                    a = _shape_giver(args, n_in, a)  # (``loss_backward(grad, x, target)``)
                if type(a) is np.ndarray and a.flags.carray and a.dtype.kind == "f":
                    values = []
                    key = ""
                    for k in range(n_args):
                        v = args[k]
                        kind = type(v)
                        if ((kind is float or kind is int) and k != first
                                and _fits(v, op.checked_params if k >= n_in else first)):
                            values.append(v)  # (the entry point converts it to a's dtype)
                            key += "s" if k < n_in else "p"
                        elif k < n_in and (kind is Tensor or kind in PLAIN_SUBCLASSES):
                            b = v._data
                            if (type(b) is not np.ndarray or not b.flags.carray
                                    or b.dtype is not a.dtype and (k or not first
                                                                   or b.dtype.kind != "b")):
                                break
                            if b.shape != a.shape:
                                # one value the result broadcasts, of a's dtype: a number
                                if b.size != 1 or b.ndim > a.ndim or b.dtype is not a.dtype:
                                    break
                                values.append(b.reshape(-1)[0])
                                key += "s"
                                continue
                            values.append(b)
                            key += "a"
                        else:
                            break
                    else:
                        plan = plans.get(a.dtype)
                        if plan is None:
                            plan = make_plan(op, a.dtype)
                        if plan and a.size < plan.small_below:
                            out = np.empty(a.shape, plan.out)
                            nd = a.ndim
                            entry = plan.entries.get(cpu.ranked(key)[nd])
                            if entry is None:
                                first_launch(plan, key, out, values)
                            else:
                                entry(out, *values)
                            result = _make(out)
                            if records and _grad_state.enabled:
                                tensors = args[:n_in]
                                inputs = [t if isinstance(t, Tensor) else None for t in tensors]
                                if needs_grad(inputs):
                                    record_general(op, tensors, inputs, args[n_in:],
                                                   plan.compute, result, cpu)
                            return result
            return op._call(args)

    function.__name__ = function.__qualname__ = op.name
    function.__module__ = "numbagrad"
    args = "input" if op.n_in == 1 else "input, other"
    function.__doc__ = op.__doc__ or f"{op.name}({args}) -> Tensor: elementwise, by a Numba kernel."
    function.op = op
    if not (operator or method):
        function.operator = make_function(op, operator=True)
        function.method = make_function(op, method=True)
    return function


def call_broadcast(op, input, other, records):
    """``op(input, other)`` for two C-contiguous CPU tensors of one dtype and different shapes
    that broadcast: the op's plan for that dtype (no casts to find), its loops run over the
    broadcast shapes, and a lean node (``record_lean``), whose gradients are summed back to
    each operand's shape. Large results (threads, deferral) and dtypes without a plan go to
    the general path."""
    a = input._data
    plan = op._plans.get(a.dtype)
    if plan is None:
        plan = make_plan(op, a.dtype)
    if not plan:
        return op._call((input, other))
    b = other._data
    # (PyTorch's error if they don't broadcast)
    shape, pattern = cpu.broadcast_pattern(a.shape, b.shape)
    size = 1
    for n in shape:
        size *= n
    if size >= plan.small_below:
        return op._call((input, other))
    if b.size == 1 and shape == a.shape or a.size == 1 and shape == b.shape:
        # one operand a single value (``x + b`` with b of shape (1,), a 0-d tensor's scale):
        # the flat loop that takes it as a number, through its entry point
        out = np.empty(shape, plan.out)
        if b.size == 1 and shape == a.shape:  # (an array operand has the result's shape)
            pattern, values = "as", (a, b.reshape(-1)[0])
        else:
            pattern, values = "sa", (a.reshape(-1)[0], b)
        nd = out.ndim
        entry = plan.entries.get(cpu.ranked(pattern)[nd])
        if entry is None:
            first_launch(plan, pattern, out, values)
        else:
            entry(out, *values)
        result = _make(out)
    elif pattern is not None:
        # a row or a column of the other's shape (``x + b``, ``x - x.mean(1, keepdim=True)``):
        # the loop over the result's rows (cpu.BROADCASTS) through its entry point
        out = np.empty(shape, plan.out)
        values = (a.ravel(), b.ravel())
        entry = plan.entries.get(pattern)
        if entry is None:
            first_launch(plan, pattern, out.ravel(), values)
        else:
            entry(out.ravel(), *values)
        result = _make(out)
    else:
        result = _make(cpu.run_elementwise(plan.kernels, [a, b], plan.out))
    if records and _grad_state.enabled:
        key = 0
        if a.shape != shape:
            key = SINGLE_INPUT if a.size == 1 else SPREAD_INPUT
        if b.shape != shape:
            key |= SINGLE_OTHER if b.size == 1 else SPREAD_OTHER
        record_lean(op, plan, key, (input, other), (), result)
    return result


def write_into(op, x, args) -> bool:
    """``x.op_(*args)`` written straight into ``x``'s memory by the fast path's loop (no
    result array, no copy), for a call no graph records: True when done; False when the call
    takes the general path (an in-place op is its op, then a write). Taken by the fast path's
    calls, of any size: a C-contiguous CPU ``x`` whose dtype the op keeps; each operand a
    tensor of ``x``'s shape, dtype and layout or a Python number (with a float ``x``); numbers
    as parameters. (The loop reads element i of each operand before it writes element i of
    ``x``, so an operand that is ``x`` itself is read as it was.)"""
    a = x._data
    if type(a) is not np.ndarray or not a.flags.carray or x._fw_grad is not None:
        return False
    # (the in-place loop: operand 0 is the output)
    return _write(op, a, a.dtype, args, op.n_in - 1, "i", True)


def write_result(op, out, args) -> bool:
    """``op(*args, out=out)`` written straight into ``out``'s memory by the fast path's loop,
    as ``write_into`` writes an in-place op: True when done; False when the call takes the
    general path (the result computed, then copied into ``out``). Taken when ``out`` is a
    C-contiguous CPU tensor of the result's shape and dtype and every operand a tensor as
    ``write_into`` takes them (numbers only as parameters)."""
    a = out._data
    if (type(a) is not np.ndarray or not a.flags.carray or out._fw_grad is not None or not args
            or op.dtype_rule == "where"):
        return False
    first = args[0]
    if not (type(first) is Tensor or type(first) in PLAIN_SUBCLASSES):
        return False
    return _write(op, a, first._data.dtype, args, op.n_in, "", False)


def _write(op, a, dtype, args, n_tensors, key, numbers) -> bool:
    """Run ``op``'s loop for operands of ``dtype`` into array ``a``: ``args`` are its
    operands (the first ``n_tensors``; Python numbers among them if ``numbers``) then its
    parameters, ``key`` the loop's key so far. False when they do not fit a loop."""
    n_params = len(op.param_names)
    if len(args) != n_tensors + n_params:
        return False
    plan = op._plans.get(dtype)
    if plan is None:
        plan = make_plan(op, dtype)
    if not plan or plan.out is not a.dtype:
        return False
    flat = a if a.ndim == 1 else a.ravel()
    values = []
    for k, v in enumerate(args):
        kind = type(v)
        if k < n_tensors and (kind is Tensor or kind in PLAIN_SUBCLASSES):
            b = v._data
            if type(b) is not np.ndarray or v._fw_grad is not None:
                return False
            if b.shape == a.shape and b.dtype is dtype and b.flags.carray:
                values.append(b if b.ndim == 1 else b.ravel())
                key += "a"
            elif numbers and b.ndim == 0 and dtype.kind == "f" and b.dtype.kind in "iuf":
                # a 0-d CPU tensor (a clip coefficient, a tensor learning rate) is read once,
                # as a number of a float x's dtype: as PyTorch's loops read a CPU scalar (a
                # bool one goes the general way, whose refusals, as sub's, apply)
                values.append(b.item())
                key += "s"
            else:
                return False
        elif ((kind is float or kind is int) and dtype.kind == "f" and (numbers or k >= n_tensors)
              and _fits(v, k >= n_tensors and op.checked_params)):
            values.append(v)  # (the entry point converts it to the tensors' dtype)
            key += "s" if k < n_tensors else "p"
        else:
            return False
    before_write(a)  # (lazy expressions that read a are computed first)
    if a.size >= plan.small_below:
        # a large a: the loop for its size (threads from PARALLEL_MIN on), numbers as the
        # dtype (an optimizer's step on a large weight: one pass, no result to copy back)
        dt = plan.compute.np.type
        cpu.loops_for(plan.kernels, a.size)[key.rstrip("p")](
            flat, *[v if type(v) is np.ndarray else dt(v) for v in values])
        return True
    entry = plan.entries.get(key)
    if entry is None:
        first_launch(plan, key, flat, values)
    else:
        entry(flat, *values)
    return True


def _shape_giver(args, n_in, a):
    """The array of the first tensor among the first ``n_in`` of ``args`` with more than one
    value (the result's shape, for ``a`` of one value), else ``a``."""
    for k in range(n_in):
        v = args[k]
        if isinstance(v, Tensor):
            b = v._data
            if type(b) is np.ndarray and b.size != 1:
                return b
    return a


# The Python numbers a fast path's loop takes as they are (its entry point converts each to
# the tensor's dtype). Any other goes to the general path, whose ``check_numbers`` raises as
# PyTorch does: an int outside PyTorch's Scalar range; a checked number (a parameter of an op
# with ``checked_params``, ``where``'s value) past float32's range, with a float32 tensor.
_INT_MIN, _INT_MAX, _F32_MAX = D.INT_MIN, D.INT_MAX, D.F32_MAX


def _fits(v, checked) -> bool:
    """Whether the Python number ``v`` goes to a fast path's loop (see above)."""
    if type(v) is int:
        return _INT_MIN <= v <= _INT_MAX
    # (inf and NaN fit: clamp's missing bound is inf)
    return not checked or -_F32_MAX <= v <= _F32_MAX or v - v != 0


def _numbers(params, dtype, checked) -> bool:
    """Whether ``params`` may go to the fast path's loop as they are: Python numbers (that
    ``_fits``, its test written out: this runs on each call of an op with parameters) with a
    float tensor."""
    if dtype.kind != "f":
        return False
    for p in params:
        kind = type(p)
        if kind is float:
            if checked and not -_F32_MAX <= p <= _F32_MAX and p - p == 0:
                return False
        elif kind is not int or not _INT_MIN <= p <= _INT_MAX:
            return False
    return True


def check_numbers(op, tensors, params):
    """PyTorch's refusals of the Python numbers among an op's operands ``tensors`` and its
    ``params``: an int it cannot hold as a Scalar (OverflowError), and with a float32 result a
    checked number past float32's range (``op.checked_params``; ``where``'s values)."""
    for v in (*tensors, *params):
        if type(v) is int and not _INT_MIN <= v <= _INT_MAX:
            D.check_scalar(v)
    checked = tensors[1:] if op.dtype_rule == "where" else params if op.checked_params else ()
    for v in checked:
        if type(v) is float and not -_F32_MAX <= v <= _F32_MAX and v - v == 0:
            if op.compute_dtype(tensors) is D.float32:
                raise RuntimeError("value cannot be converted to type float without overflow")
            break


# ---------------------------------------------------------------- the general path


def device_backend(tensors, scalars_ok=False):
    """The backend module all Tensors in ``tensors`` live on, with PyTorch's error when they
    differ. With ``scalars_ok`` a 0-d CPU tensor may join CUDA tensors (it acts as a scalar)."""
    for t in tensors:
        # (a lazy tensor is a CPU one: its expression is not computed for this)
        if isinstance(t, Tensor) and t._lazy is None and type(t._data) is not np.ndarray:
            break
    else:
        return cpu  # the common case: every tensor on the CPU
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


def _as_array(a, dt):
    if isinstance(a, Tensor):
        arr = a._data
        if arr.dtype == dt.np:
            return arr
        # PyTorch's CPU loops cast such an operand first, with .to(): the result's layout
        # follows that copy's
        return backend.of(arr).clone(arr, dt.np)
    return np.array(D.wrapped(a, dt))


def _defer(op, args):
    """``op(*args)`` as a lazy tensor, or None (see ``ops/lazy.py``); recorded if needed."""
    if not lazy.ENABLED or backward_passes.running:
        return None
    # a broadcast result has at most the product of the operands' sizes: below the deferral
    # size, the general path's calls on small tensors skip the look at their layout
    bound = 1
    for a in args[:op.n_in]:
        if isinstance(a, Tensor):
            if a._lazy is not None:  # (an unevaluated operand: it may extend its expression)
                break
            bound *= a._data.size
    else:
        if bound < lazy.DEFER_MIN_ITEMS:
            return None
    out = lazy.defer(op, args, Tensor, LazyTensor)
    if out is None:
        return None
    if _grad_state.enabled:
        n_in = op.n_in
        tensors = args if len(args) == n_in else args[:n_in]
        inputs = []
        for a in tensors:
            inputs.append(a if isinstance(a, Tensor) else None)
        edges_, flags = edges(inputs)  # (flags: which inputs need a gradient)
        if flags:
            record_general(op, tensors, inputs, args[n_in:], D.from_numpy_dtype(out._lazy.np_dtype),
                       out, cpu, edges_, flags)
    elif _grad_state.inference:
        out._inference = True
    return out


def call_general(op, args):
    """``op(*args)`` by the general path (``Elementwise._call``): casts, broadcasting, views,
    CUDA and lazy tensors."""
    n = op.n_in + len(op.param_names)
    if len(args) != n:
        raise TypeError(f"{op.name}() takes {n} positional argument{'s' * (n > 1)} but "
                        f"{len(args)} were given")
    if len(args) == op.n_in:
        tensors, params = args, ()
    else:
        tensors, params = args[: op.n_in], args[op.n_in :]
    check_numbers(op, tensors, params)
    if op._defers:
        lazy = _defer(op, args)
        if lazy is not None:
            return lazy
    be = device_backend(tensors, scalars_ok=True)
    compute = op.compute_dtype(tensors)
    arrays = []
    for k, a in enumerate(tensors):
        want = D.bool_ if (op.dtype_rule == "where" and k == 0) else compute
        arrays.append(_as_array(a, want))
    pvals = op._param_values(compute, params) if params else ()
    kernel = op._kernels.get((compute, be)) or op.kernel(compute, be)
    out_dtype = op.out_dtype(compute).np
    out = None
    if op.contiguous_result:
        out = be.empty(cpu.broadcast_shapes(*[a.shape for a in arrays]), out_dtype)
    out = be.run_elementwise(kernel, arrays, out_dtype, pvals, out)
    result = Tensor._make(out)
    inputs = [a if isinstance(a, Tensor) else None for a in tensors]
    if op.dtype_rule != "bool" and needs_grad(inputs):
        record_general(op, tensors, inputs, params, compute, result, be)
    return result


def call_composite(op, *args, **kwargs):
    """A composite op's call (``Composite.__call__``): its lean hook if it has one, else its
    array forward, the output Tensors, and the node when one is recorded."""
    if op.lean is not None:
        out = op.lean(*args, **kwargs)
        if out is not None:
            return out
    if kwargs:
        for v in kwargs.values():
            if isinstance(v, Tensor) or (isinstance(v, (list, tuple)) and v
                                         and isinstance(v[0], Tensor)):
                args, kwargs = op.positional(args, kwargs)
                break
    ctx = object.__new__(CompositeCtx)  # (Ctx.__init__, without its call)
    ctx.saved = {}
    inputs = []
    on_cpu = True
    # whether the call is recorded: an input needs a gradient (a view's flags come through
    # its property), asked first so that a forward saves nothing for a call not recorded
    can_record = op.backward is not None and _grad_state.enabled
    recorded = False
    for a in args:
        if isinstance(a, Tensor):
            inputs.append(a)
            if a._lazy is None and type(a._data) is not np.ndarray:
                on_cpu = False
            if can_record and not recorded and (
                    a._requires_grad if a._base is None else a.requires_grad):
                recorded = True
        elif isinstance(a, (list, tuple)) and a and isinstance(a[0], Tensor):
            # a list of tensors (``cat``, ``stack``): one pass over it, as over the arguments
            for t in a:
                if not isinstance(t, Tensor):
                    break
                if on_cpu and t._lazy is None and type(t._data) is not np.ndarray:
                    on_cpu = False
            else:
                inputs.extend(a)
                recorded = recorded or can_record and needs_grad(a)
    ctx.backend = cpu if on_cpu else device_backend(inputs)  # (which refuses mixed devices)
    if not recorded:
        ctx.recorded = False
    try:
        res = op.forward(ctx, *args, **kwargs) if kwargs else op.forward(ctx, *args)
    except Exception:
        if recorded:
            # PyTorch collects its inputs' edges before it runs the kernel: a view whose base
            # was written in place raises its error (re-deriving its node) before the op's own
            # (the forward runs first here, as only it knows whether an output is
            # differentiable, x.long() collects none)
            for t in inputs:
                if t._base is not None:
                    t.grad_fn  # noqa: B018
        raise
    multi = isinstance(res, tuple)
    if multi:
        outs = [Tensor._make(a) for a in res]
    else:
        if type(res) is lazy.Total:  # (a loss whose sum is left to backward)
            out = object.__new__(LazyTensor)
            out._lazy = res
            out._version_cell = [0]
        else:
            out = _wrap(Tensor, res)  # (marked an inference tensor below, if it is one)
        outs = [out]
    if op.view or ctx.view:
        mark_views(inputs[0], outs, multi)
    elif _grad_state.inference:  # (Tensor._make marked the outputs of a multi-output op)
        outs[0]._inference = True
    if recorded:
        record_composite(op, ctx, inputs, outs)
    if multi:
        return ctx.wrap(outs)
    return outs[0]
