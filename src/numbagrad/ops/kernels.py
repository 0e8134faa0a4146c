"""The kernels of an elementwise op: its forward loop and the loops of its pointwise rules,
compiled per dtype and backend from the scalar definitions (registry.py binds these functions
as ``Elementwise.kernel`` and ``Elementwise.vjp_kernel``)."""

from __future__ import annotations

from ..backend import cpu
from ..backend.codegen import names_used
from .table import REGISTRY


def helpers(fn, seen=None):
    """(name, scalar fn) of every elementwise op ``fn`` calls, callees first."""
    seen = {} if seen is None else seen
    for name in sorted(names_used(fn)):
        op = REGISTRY.get(name)
        if (op is not None and op.kind == "elementwise" and name not in seen
                and op.scalar is not fn):
            helpers(op.scalar, seen)
            seen[name] = op.scalar
    return seen


def kernel(op, dtype, be=cpu):
    """The forward loop kernel of ``op`` for ``dtype`` on backend ``be`` (on the CPU: the
    module of loop kernels, see ``cpu.get_elementwise_kernel``)."""
    k = op._kernels.get((dtype, be))
    if k is not None:
        return k
    key = (op.name, "fwd", dtype.name)

    def body():
        functions = list(helpers(op.scalar).items()) + [(op.name, op.scalar)]
        return be.scalar_module_body(functions, op.name, op.n_in, len(op.param_names))

    k = op._kernels[(dtype, be)] = be.get_elementwise_kernel(key, dtype.np, body)
    return k


def vjp_kernel(op, i, dtype, be=cpu):
    """The kernel of input ``i``'s pointwise rule (its gradient times ``grad``); ``i`` is
    ``"both"`` for the sum of both inputs' rules (``both_args``)."""
    k = op._vjp_kernels.get((i, dtype, be))
    if k is None:
        k = op._vjp_kernels[(i, dtype, be)] = _build_vjp_kernel(op, i, dtype, be)
    return k


def _build_vjp_kernel(op, i, dtype, be):
    key = (op.name, "vjp", i, dtype.name)
    if i == "both":
        tensor_args, params = both_args(op)
        call = [f"_rule{k}({', '.join(op.vjp_args[k])})" for k in (0, 1)]
        entry = f"def _both({', '.join(tensor_args + params)}):\n    return " + " + ".join(call)
        rules = [("_rule0", op.vjps[0]), ("_rule1", op.vjps[1]), ("_both", entry)]
        n_in, n_params = len(tensor_args), len(params)
    else:
        rules = [("_rule", op.vjps[i])]
        n_params = len(op._rule_params(i))
        n_in = len(op.vjp_args[i]) - n_params

    def body():
        called = {}
        for _, rule in rules[:2]:
            helpers(rule, called)
        functions = list(called.items()) + rules
        return be.scalar_module_body(functions, rules[-1][0], n_in, n_params)

    return be.get_elementwise_kernel(key, dtype.np, body)


def both_args(op):
    """(tensor arguments, parameters) of the kernel that adds both inputs' rules, for
    ``x * x``-like calls where both inputs are one tensor: one pass instead of three."""
    tensor_args, params = [], []
    for k in (0, 1):
        names = op._rule_params(k)
        for name in op.vjp_args[k]:
            group = params if name in names else tensor_args
            if name not in group:
                group.append(name)
    return tensor_args, params


def row_buffer(be, a):
    """A flat buffer of contiguous array ``a`` that starts at its first element: what a row
    kernel (backend/kernels_norm.py, kernels_rnn.py) takes for an array it indexes from 0."""
    buf, off, _ = be.flat_view(a)
    return buf if not off else be.flat_view(a.copy())[0]
