"""Forward-mode AD: tangents carried on tensors (``Tensor._fw_grad``) through every op.

Inside a dual level (``autograd.forward_ad.dual_level``) ``propagate`` observes every op call
(ops/observe.py). When an input carries a tangent, the output gets one:

- an elementwise op's tangent is its reverse-mode rules applied to the inputs' tangents in
  place of ``grad``, summed over the inputs: an elementwise op's Jacobian is diagonal, so its
  VJP rule and its JVP rule are the same pointwise product;
- a composite op's is its ``jvp`` rule (``Composite.defjvp``, beside its VJP; ``linear`` and
  ``multilinear`` make the common ones); an op without one gets its tangent from its VJP
  (``through_vjp``: the op run again and two backward passes, correct for any op whose
  backward is differentiable, which every registry op's is, but slower than a rule).

Tangents are computed with the observer paused (a rule's own ops carry none) but recorded for
reverse mode as usual, so a tangent is differentiable. Outside a dual level this module costs
nothing: no observer is set.
"""

from __future__ import annotations

import threading
import weakref

from .. import backend
from .._tensor import Tensor
from ..autograd.api import grad as _grad
from ..autograd.grad_mode import enable_grad
from . import observe
from .record import as_tensor

ERR_NO_LEVEL = ("Trying to create a dual Tensor for forward AD but no level exists, make sure "
                "to enter_dual_level() first.")
ERR_NESTED = "Nested forward mode AD is not supported at the moment"
ERR_NO_JVP = (
    "Trying to use forward AD with {name} that does not support it because it has not been "
    "implemented yet.\nPlease file an issue to PyTorch at "
    "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that we can "
    "prioritize its implementation or submit a PR adding the implementation to derivatives.yaml"
)


class _State:
    level = None  # the dual level's index (0) while one is entered
    paused = 0  # > 0 while tangents are being computed
    lock = threading.Lock()
    holders: list = []  # weak references to the tensors given a tangent at this level
    saved: list = []  # the saved outputs given a tangent at this level (SavedTensor.fw_grad)


_state = _State()


def current_level():
    return _state.level


def enter_level() -> int:
    with _state.lock:
        if _state.level is not None:
            raise RuntimeError(ERR_NESTED)
        _state.level = 0
        _state.holders = []
    observe.add(propagate)
    return 0


def exit_level() -> None:
    """Leave the dual level: every tangent given at it is dropped."""
    with _state.lock:
        if _state.level is None:
            return
        observe.remove(propagate)
        for ref in _state.holders:
            t = ref()
            if t is not None:
                t.__dict__.pop("_fw_grad", None)
        for saved in _state.saved:
            saved.fw_grad = None
        _state.holders, _state.saved = [], []
        _state.level = None


def set_tangent(t: Tensor, tangent) -> None:
    """Give ``t`` the tangent ``tangent`` (None: take its tangent away)."""
    if tangent is None:
        t.__dict__.pop("_fw_grad", None)
        return
    if "_fw_grad" not in t.__dict__:
        _state.holders.append(weakref.ref(t))
    t._fw_grad = tangent


class paused:
    """Ops run inside carry no tangents (make_dual's and unpack_dual's own views)."""

    def __enter__(self):
        _state.paused += 1

    def __exit__(self, *exc):
        _state.paused -= 1
        return False


# ---------------------------------------------------------------- propagation


def propagate(op, args, kwargs, result) -> None:
    """The observer: give ``result`` its tangent when an input of ``op`` carries one."""
    if _state.paused:
        return
    for a in args:
        if isinstance(a, Tensor):
            if a._fw_grad is not None:
                break
        elif isinstance(a, (list, tuple)) and any(
                isinstance(t, Tensor) and t._fw_grad is not None for t in a):
            break
    else:
        return
    outs = result if isinstance(result, tuple) else (result,)
    if not any(isinstance(o, Tensor) and o.dtype.is_floating_point for o in outs):
        return  # (argmax, comparisons: no differentiable output)
    _state.paused += 1
    try:
        if op.kind == "elementwise":
            tangent = _elementwise_jvp(op, args, result)
        else:
            rule = op.jvp if op.jvp is not None else through_vjp(op)
            tangent = rule(result, _tangents(args), *args, **(kwargs or {}))
    finally:
        _state.paused -= 1
    if not isinstance(result, tuple):
        result, tangent = (result,), (tangent,)
    for o, t in zip(result, tangent):
        if t is not None and isinstance(o, Tensor) and o.dtype.is_floating_point:
            set_tangent(o, t if t.dtype is o.dtype else t.to(o.dtype))
            _share_with_saved(o)


def _share_with_saved(o):
    """Give ``o``'s tangent to its node's saved copy of it: a backward that reads the saved
    output (exp's, tanh's) inside this level then carries tangents too (jacfwd(jacrev(f)))."""
    node = o._grad_fn
    ctx = None if node is None else getattr(node, "ctx", None)
    if ctx is None:
        return
    for s in ctx.saved.values():
        if s.is_output and (s.data is o._data if s.data is not None else s.expr is o._lazy):
            s.fw_grad = o._fw_grad
            _state.saved.append(s)


def _tangents(args):
    out = []
    for a in args:
        if isinstance(a, Tensor):
            out.append(a._fw_grad)
        elif isinstance(a, (list, tuple)) and a and isinstance(a[0], Tensor):
            out.append([t._fw_grad for t in a])
        else:
            out.append(None)
    return tuple(out)


def _elementwise_jvp(op, args, result):
    """Each input's VJP rule with its tangent for ``grad``, summed, at the result's shape."""
    n = op.n_in
    compute = result.dtype
    total = None
    for i in range(n):
        a = args[i]
        tangent = a._fw_grad if isinstance(a, Tensor) else None
        rule = op.vjps[i]
        if tangent is None or rule is None:
            continue
        values = []
        for name in op.vjp_args[i]:
            if name == "grad":
                values.append(as_tensor(tangent, compute))
            elif name == "result":
                values.append(result)
            elif name in op.arg_names:
                values.append(as_tensor(args[op.arg_names.index(name)], compute, result))
            else:  # a scalar parameter, as a 0-d tensor (as under create_graph)
                values.append(as_tensor(args[n + op.param_names.index(name)], compute, result))
        g = rule(*values)
        if not isinstance(g, Tensor):
            g = as_tensor(g, compute, result)
        total = g if total is None else total + g
    if total is not None and total.shape != result.shape:
        total = total.expand(result.shape)
    return total


# ---------------------------------------------------------------- rules of composite ops


def zeros_like(t: Tensor) -> Tensor:
    """Zeros of ``t``'s shape, dtype and device: the tangent of an argument without one."""
    return Tensor._make(backend.of(t._data).zeros(t._data.shape, t._data.dtype))


def linear(op, *positions):
    """The JVP of ``op``, linear in its arguments at ``positions`` together (each a Tensor, a
    list of Tensors or a number; default: the first): ``op`` of their tangents, zeros for a
    missing one (a number's is 0), the other arguments as they are."""
    positions = positions or (0,)

    def jvp(result, tangents, *args, **kwargs):
        args = list(args)
        for p in positions:
            a, t = args[p], tangents[p]
            if isinstance(a, Tensor):
                args[p] = t if t is not None else zeros_like(a)
            elif isinstance(a, (list, tuple)):
                args[p] = [ti if ti is not None else zeros_like(ai) for ai, ti in zip(a, t)]
            elif isinstance(a, (int, float)) and not isinstance(a, bool):
                args[p] = 0.0
        return op(*args, **kwargs)

    return jvp


def multilinear(op, *positions):
    """The JVP of ``op``, linear in each of its arguments at ``positions`` apart (``mm``):
    the sum over them of ``op`` with that argument's tangent in its place."""

    def jvp(result, tangents, *args, **kwargs):
        total = None
        for p in positions:
            if tangents[p] is None:
                continue
            term = op(*args[:p], tangents[p], *args[p + 1:], **kwargs)
            total = term if total is None else total + term
        return total

    return jvp


def through_vjp(op, inputs=None):
    """The JVP of ``op`` derived from its VJP: the VJP ``u -> J^T u`` is linear in ``u``, so
    the derivative of ``<J^T u, t>`` with respect to ``u`` is ``J t``. ``op`` runs again on
    detached copies of the Tensor arguments that carry tangents; ``inputs(args, kwargs)``, if
    given, returns the arguments for that run (to leave out side effects, as batch norm's
    running statistics). Arguments that are lists of Tensors with tangents are refused."""

    def jvp(result, tangents, *args, **kwargs):
        if inputs is not None:
            args, kwargs = inputs(args, kwargs)
        leaves, ts, run = [], [], list(args)
        for k, (a, t) in enumerate(zip(args, tangents)):
            if isinstance(a, (list, tuple)) and t is not None and any(
                    x is not None for x in t):
                raise NotImplementedError(ERR_NO_JVP.format(name=op.name))
            if isinstance(a, Tensor) and t is not None:
                run[k] = a.detach().requires_grad_(a.dtype.is_floating_point)
                leaves.append(run[k])
                ts.append(t)
        with enable_grad():
            out = op(*run, **kwargs)
            outs = out if isinstance(out, tuple) else (out,)
            keep = [o for o in outs if isinstance(o, Tensor) and o.requires_grad]
            us = [zeros_like(o).requires_grad_(True) for o in keep]
            gs = _grad(keep, leaves, us, create_graph=True, allow_unused=True)
            inner = None
            for g, t in zip(gs, ts):
                if g is not None:
                    term = (g * t).sum()
                    inner = term if inner is None else inner + term
            if inner is None:
                return tuple(None for _ in outs) if isinstance(out, tuple) else None
            # (the graph kept: a tangent with a history of its own, as a rule written with
            # Tensor ops gives under forward over reverse, leads into it, and freeing it would
            # free that history)
            # (terms that are all constants, a backward op's zeros by the input it was given:
            # the tangents are zeros)
            tangents_out = (iter(_grad(inner, us, allow_unused=True, retain_graph=True))
                            if inner.requires_grad else None)
        found = [next(tangents_out) if tangents_out is not None and isinstance(o, Tensor)
                 and o.requires_grad else None for o in outs]
        found = [zeros_like(o) if t is None and isinstance(o, Tensor) and
                 o.dtype.is_floating_point else t for o, t in zip(outs, found)]
        return tuple(found) if isinstance(out, tuple) else found[0]

    return jvp


def constant(result, tangents, *args, **kwargs):
    """The JVP of an op whose derivative is zero (a random draw): a zero tangent."""
    return zeros_like(result)


def refused(op):
    """The JVP of an op forward mode does not serve: PyTorch's error."""

    def jvp(result, tangents, *args, **kwargs):
        raise NotImplementedError(ERR_NO_JVP.format(name=op.name))

    return jvp
