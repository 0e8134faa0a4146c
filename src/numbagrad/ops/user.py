"""``numbagrad.elementwise``: elementwise ops users write as scalar Python functions.

The function is compiled into the same kernels as the built-in ops (CPU, CUDA, lazy forward,
fused backward, the disk cache); its derivative is read from its source (ops/derive.py).
"""

from __future__ import annotations

import inspect
import math
from typing import Callable

from ..backend.codegen import names_used
from . import derive
from .registry import REGISTRY, Elementwise, _default_node

_taken: set[str] = set()  # internal names given so far: never two ops with one in a process


def _internal_name(name: str) -> str:
    """A name for the op's kernels and fused expressions that no other op has had in this
    process (kernels are cached by it), prefixed so it never meets a generated variable."""
    base = "u_" + derive._identifier(name).strip("_")
    candidate, k = base, 0
    while candidate in _taken or candidate in REGISTRY:
        k += 1
        candidate = f"{base}_{k}"
    _taken.add(candidate)
    return candidate


class UserElementwise(Elementwise):
    """An elementwise op made from a user's scalar function by ``numbagrad.elementwise``.

    Not listed in ``REGISTRY`` (the op table is the library's own); ``derive_error`` is the
    reason numbagrad could not differentiate the function, raised when a call is recorded
    for backward unless ``defvjp`` gave the rules.
    """

    listed = False

    def __init__(self, fn: Callable, name: str, dtype: str = "float", params=(),
                 node: str | None = None, internal: str | None = None, derived: bool = True):
        if dtype not in ("float", "same"):
            raise ValueError(f"numbagrad.elementwise: dtype must be 'float' or 'same', not "
                             f"{dtype!r}")
        ops = derive.rule_ops()
        normalized = derive.normalize(fn, ops)
        scalar, args, _ = normalized
        sig = inspect.signature(fn)
        params = (params,) if isinstance(params, str) else tuple(params)
        names = list(sig.parameters)
        if list(params) != names[len(names) - len(params):]:
            raise ValueError(f"numbagrad.elementwise: params {params} must name the last "
                             f"arguments of {fn.__name__}{sig}")
        n_in = len(args) - len(params)
        if n_in < 1:
            raise ValueError("numbagrad.elementwise: the function needs a tensor argument "
                             "before its params")
        super().__init__(internal or _internal_name(name), scalar, n_in,
                         node or _default_node(name.strip("<>")), dtype)
        self.__name__ = self.__qualname__ = name
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn
        self.__module__ = getattr(fn, "__module__", None)
        self.signature = sig
        self._n_args = len(args)
        # the plain function of one tensor (with parameters) or two: the built-ins' fast path
        self._fast = self.function if n_in == 1 or not params else None
        self.derive_error: derive.DeriveError | None = None
        if derived:
            try:
                rules = derive.derive(fn, name, n_in, ops, normalized)
            except derive.DeriveError as e:
                self.derive_error = e
            else:
                Elementwise.defvjp(self, *rules)

    def __call__(self, *args, **kwargs):
        if kwargs or len(args) != self._n_args:
            bound = self.signature.bind(*args, **kwargs)
            bound.apply_defaults()
            args = bound.args
        if self._fast is not None:
            return self._fast(*args)
        return self._call(args)

    def __repr__(self):
        return f"<numbagrad.elementwise {self.__name__}>"

    def defvjp(self, *rules):
        """Set each input's rule, in place of the derived one (``None``: not differentiable).
        A rule takes ``grad``, any of the op's arguments and ``result``, and may be written
        with numbagrad's ops (``where``, ``exp``) or as scalar Python (``math.exp``,
        ``if``/``else``). With one input it works as a decorator."""
        if len(rules) != self.n_in:
            raise ValueError(f"{self.__name__}.defvjp: expected {self.n_in} rules (one per "
                             f"input: {', '.join(self.arg_names)}), got {len(rules)}")
        if self._saves or self._vjp_kernels:
            raise RuntimeError(f"{self.__name__}.defvjp: give the rules before the op's first "
                               "use with gradients")
        ops = derive.rule_ops()
        converted = [None if r is None else derive.rule_from(
            r, self.__name__, self.arg_names, self.param_names, ops) for r in rules]
        Elementwise.defvjp(self, *converted)
        self.derive_error = None
        return rules[0] if self.n_in == 1 else None

    def rule_source(self, i: int = 0) -> str:
        """The source of input ``i``'s rule, as numbagrad derived or rewrote it."""
        rule = self.vjps[i]
        if rule is None:
            raise (self.derive_error or ValueError(f"{self.__name__}: input {i} has no rule"))
        return derive.source(rule)

    def _save_plan(self, flags):
        if self.derive_error is not None:
            raise derive.DeriveError(str(self.derive_error))
        return super()._save_plan(flags)

def elementwise(fn: Callable | None = None, *, name: str | None = None, dtype: str = "float",
                params=(), node: str | None = None):
    """Make an elementwise op, differentiable, from a scalar Python function.

    ``@numbagrad.elementwise`` or ``@numbagrad.elementwise(name=, dtype=, params=, node=)``.
    Each argument is an operand: a Tensor or a Python number, broadcast together as the
    built-in ops' operands; gradients flow to every Tensor that requires them. ``params``
    names trailing arguments that are always numbers (no broadcasting, no gradient: they go
    to the kernel as values). ``dtype``: ``"float"`` (integer inputs compute in the default
    float, as ``exp``) or ``"same"`` (the inputs' promoted dtype, as ``mul``). The node is
    named after the function (``swish`` -> ``SwishBackward0``) unless ``node`` names it.

    The function's body is compiled by Numba for the CPU and CUDA; its derivative is derived
    from its source (arithmetic, ``**``, ``math`` functions, locals, ``if``/``else``) unless
    ``op.defvjp(...)`` gives the rules. What cannot be derived raises ``NotImplementedError``
    naming the construct and line when a call is first recorded for backward.

    >>> import math, numbagrad
    >>> @numbagrad.elementwise
    ... def swish(x, beta):
    ...     return x / (1 + math.exp(-beta * x))
    >>> x = numbagrad.tensor([1.0, -2.0], requires_grad=True)
    >>> swish(x, 1.5).sum().backward()
    >>> x.grad
    tensor([ 1.0413, -0.0881])
    """
    def deco(f):
        return UserElementwise(f, name or f.__name__, dtype, params, node)

    return deco(fn) if fn is not None else deco
