"""Forward fusion on the CPU: large elementwise results kept as expressions until read.

An elementwise op on CPU float tensors of at least ``DEFER_MIN_ITEMS`` elements returns a
*lazy* tensor: it holds the op and its operands (an ``Expr``), not an array. Whatever reads it
decides how it is computed:

- a whole-tensor ``sum`` adds the expression up in one pass over its leaves and writes nothing
  (``total``); when that sum is recorded for backward (a loss), even that pass waits: the sum
  is a ``Total``, which the backward fusion adds up in the same pass as the gradients, unless
  something reads it first;
- the backward fusion (``ops/fusion.py``) computes a saved lazy tensor inside the fused gradient
  kernel, from the same leaves, instead of reading an array;
- anything else that reads its values (printing, ``numpy()``, a matmul, an in-place op, a
  non-elementwise op) evaluates the whole expression in one loop into a new array; the tensor is
  then an ordinary one.

``((a + b) * a).sum().backward()`` so reads ``a`` and ``b`` once, in the backward kernel, and
writes only the two gradients; ``(x**2 * exp(x)).sum().backward()`` reads ``x`` once and
computes ``exp`` once, both in the backward kernel. A heavy op (one that calls a transcendental
function) waits like the others, but a forward evaluation keeps its value when a backward node
saved it (``_store_heavy``), so it is never computed twice before backward. Operands are the
tensors' arrays: contiguous of the result's shape (``a``), one broadcast value (``s``, read
when the op runs), or a contiguous row broadcast over leading dimensions (``r``,
``(m, n) + (n,)``). Anything else runs at once, as does every op on small, integer, CUDA or
mixed-dtype tensors.

Safety: an expression reads its leaf arrays when it is evaluated, so those must not change
before. Every write into an existing array first evaluates the pending expressions that read
the memory it writes, and memory NumPy code can write to behind our back is never a leaf
(``backend/memory.py``: ``before_write``, ``escape``).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from .. import dtypes as D
from ..autograd.grad_mode import backward_passes
from ..backend import cpu
from ..backend.codegen import function_source
from ..backend.memory import pending as _pending  # noqa: F401 (the expressions not evaluated)
from ..backend.memory import private as _private
from ..backend.memory import prune as _prune  # noqa: F401
from ..backend.memory import track as _track
from .kernels import helpers

ENABLED = True
LATER = True  # a recorded whole sum of an expression is left to the backward pass (Total)
DEFER_MIN_ITEMS = 1 << 15
MAX_NODES = 16  # ops in one expression; beyond, its operands are evaluated
MAX_KERNELS = 256  # new expression kernels per process; then node by node
BLOCK = 16384  # elements per partial sum in ``total``
# elements per block of rows in ``Loop.run`` (at most 64 blocks): small enough that a loop of
# 1e5 elements splits evenly over two threads (docs/PERFORMANCE.md has the measurement)
ROW_BLOCK = 4096
_kernel_keys: set = set()
_loaded: dict = {}  # key -> module, for those of _kernel_keys that loaded
_failed: set = set()


class Expr:
    """An elementwise op applied to operands: ``Expr`` or (kind, array or scalar) leaves."""

    __slots__ = ("op", "args", "params", "shape", "np_dtype", "cols", "nodes", "uses", "value",
                 "saved", "__weakref__")

    def __init__(self, op, args, params, shape, np_dtype, cols, nodes):
        self.op = op
        self.args = args
        self.params = params
        self.shape = shape
        self.np_dtype = np_dtype
        self.cols = cols  # the length of the ``r`` rows below, or None
        self.nodes = nodes
        self.uses = 0  # consumers that embed it (a second one evaluates it instead)
        self.value = None
        self.saved = False  # kept by a backward node (``SavedTensor``)

    def evaluate(self) -> np.ndarray:
        """The values as an array (computed once, then kept)."""
        v = self.value
        if v is None:
            v = _evaluate(self)
        return v

    def leaves(self, out=None):
        """The arrays this expression reads (evaluated sub-expressions as their values)."""
        out = [] if out is None else out
        if self.value is not None:
            out.append(self.value)
            return out
        for a in self.args:
            if type(a) is Expr:
                a.leaves(out)
            elif a[0] != "s":
                out.append(a[1])
        return out


# ---------------------------------------------------------------- deferring an op


def _kind(a, shape):
    """How an expression reads array ``a`` for a result of ``shape``: ("a", a), ("s", value),
    ("r", a) or None (it cannot)."""
    flags = a.flags  # (each ``a.flags`` makes a new object)
    if a.shape == shape and flags.c_contiguous and flags.aligned:
        return ("a", a)
    if a.size == 1 or (a.size and not any(a.strides)):
        return ("s", a[(0,) * a.ndim])
    k = 0
    while k < a.ndim and a.shape[k] == 1:
        k += 1
    row = a.shape[k:]
    if (0 < len(row) < len(shape) and tuple(shape[len(shape) - len(row):]) == row
            and flags.c_contiguous and flags.aligned):
        return ("r", a)
    return None


_heavy: dict = {}


def _is_heavy(op) -> bool:
    """Whether ``op`` calls a transcendental function (exp, sin, tanh, ...): its result is worth
    storing once rather than computing again in every loop that reads it (``_store_heavy``)."""
    h = _heavy.get(op)
    if h is None:
        fns = [op.scalar, *helpers(op.scalar).values()]  # with the ops it calls
        h = _heavy[op] = any("math." in function_source(f, type_literals=False) for f in fns)
    return h


def _store_heavy(e) -> None:
    """Before a forward loop computes ``e``: evaluate and keep each heavy sub-expression that a
    backward node saved, so the backward reads it rather than computing it a second time.

    A heavy op (exp in ``(x**2 * exp(x)).sum()``) is deferred like any other: when nothing reads
    it before backward, the backward fusion computes it once, in the gradient kernel, and the
    forward never does. When the forward does need it (``loss.item()`` first, a print), this
    keeps the one evaluation, as running the op at once would have."""
    for a in e.args:
        if type(a) is Expr and a.value is None:
            if a.saved and _is_heavy(a.op):
                a.evaluate()
            else:
                _store_heavy(a)


def defer(op, args, Tensor, Lazy):
    """``op(*args)`` as a lazy tensor (class ``Lazy``), or None when it should run now."""
    n_in = op.n_in
    tensors = args if len(args) == n_in else args[:n_in]
    # the common case first, in one loop: tensors of one shape and float dtype, each a
    # C-contiguous array of our own or an expression nothing else embeds (``x**2``,
    # ``exp(x)`` and their product)
    items = []
    np_dtype = shape = cols = None
    nodes = 1
    for t in tensors:
        kind = type(t)
        if kind is Lazy:
            e = t._lazy
            if type(e) is not Expr or e.value is not None or e.uses:
                break
            if np_dtype is None:
                np_dtype, shape = e.np_dtype, e.shape
            elif e.np_dtype is not np_dtype or e.shape != shape:
                break
            if e.cols is not None:
                if cols is not None and cols != e.cols:
                    break
                cols = e.cols
            nodes += e.nodes
            items.append(e)
        elif kind is Tensor:
            d = t._data
            if type(d) is not np.ndarray:
                break
            if np_dtype is None:
                np_dtype, shape = d.dtype, d.shape
            elif d.dtype is not np_dtype or d.shape != shape:
                break
            flags = d.flags
            if not (flags.c_contiguous and flags.aligned and _private(d)):
                break
            items.append(("a", d))
        else:
            break
    else:
        if (np_dtype.kind == "f" and nodes <= MAX_NODES
                and math.prod(shape) >= DEFER_MIN_ITEMS):
            for item in items:
                if type(item) is Expr:
                    item.uses += 1
            expr = Expr(op, tuple(items), args[n_in:], shape, np_dtype, cols, nodes)
            _track(expr)
            out = object.__new__(Lazy)
            out._lazy = expr
            out._version_cell = [0]
            return out
    return _defer_general(op, args, tensors, Tensor, Lazy)


def _defer_general(op, args, tensors, Tensor, Lazy):
    """``defer`` for any mix of tensors, scalars and broadcast shapes."""
    n_in = op.n_in
    np_dtype = None
    shapes = []
    for t in tensors:
        if isinstance(t, Tensor):
            e = t._lazy
            if e is not None:
                dt, s = e.np_dtype, e.shape
            else:
                d = t._data
                if type(d) is not np.ndarray:
                    return None
                dt, s = d.dtype, d.shape
            if np_dtype is None:
                np_dtype = dt
            elif dt != np_dtype:
                return None
            shapes.append(s)
        elif type(t) not in (int, float):
            return None
    if np_dtype is None or np_dtype.kind != "f":
        return None
    # (a float op on tensors of one float dtype and Python numbers computes in that dtype)
    shape = shapes[0]
    for s in shapes:
        if s != shape:
            try:
                shape = cpu.broadcast_shapes(*shapes)
            except (RuntimeError, ValueError):
                return None  # the op itself raises PyTorch's error
            break
    if math.prod(shape) < DEFER_MIN_ITEMS:
        return None
    items = []
    cols = None
    nodes = 1
    for t in tensors:
        if not isinstance(t, Tensor):
            items.append(("s", np_dtype.type(t)))
            continue
        e = t._lazy
        if type(e) is Expr and e.value is None and e.shape == shape and e.uses == 0:
            if e.cols is not None:
                if cols is not None and cols != e.cols:
                    return None
                cols = e.cols
            items.append(e)
            nodes += e.nodes
            continue
        item = _kind(t._data, shape)  # (a lazy tensor used twice is evaluated here)
        if item is None:
            return None
        if item[0] != "s":
            if not _private(item[1]):
                return None
            if item[0] == "r":
                c = item[1].size
                if cols is not None and cols != c:
                    return None
                cols = c
        items.append(item)
    for item in items:
        if type(item) is Expr:
            item.uses += 1
    if nodes > MAX_NODES:  # a long chain: keep its operands as arrays
        items = [("a", item.evaluate()) if type(item) is Expr else item for item in items]
        nodes = 1
        cols = None
        for item in items:
            if item[0] == "r":
                cols = item[1].size
    params = tuple(args[n_in:])
    expr = Expr(op, tuple(items), params, shape, np_dtype, cols, nodes)
    _track(expr)
    out = object.__new__(Lazy)
    out._lazy = expr
    out._version_cell = [0]
    return out


# ---------------------------------------------------------------- generated loops


# x**2, x * 0.5: constants the compiler folds, and their text in a loop's lines (2 and 2.0
# are one key)
_LITERALS = {v: f"_c({float(v)!r})" for v in (0, 1, 2, 3, 0.5, -1)}
_NAMES = 64  # the first variable names of leaves (v0..) and expressions (e0..), made once
_VAR = [f"v{k}" for k in range(_NAMES)]
_LINE = [f"e{k}" for k in range(_NAMES)]


class Loop:
    """The operands, parameters and lines of one generated loop (``cpu.fused_module_body``),
    shared by the expression kernels here and the backward fusion."""

    def __init__(self, np_dtype, shape):
        self.np_dtype = np_dtype
        self.shape = shape
        self.patterns = []
        self.arrays = []
        self.params = []
        self.lines = []
        self.functions = {}  # name -> (op, scalar function) the lines call
        self.cols = None
        self._var_of = {}  # id of an array or Expr -> its variable
        self._keep = []  # what those ids belong to, alive while the loop is built

    def leaf(self, kind, a):
        """The variable of a leaf; None when its rows do not match the loop's."""
        key = id(a)
        var = self._var_of.get(key)
        if var is not None:
            return var
        if kind == "r":
            if self.cols is not None and self.cols != a.size:
                return None
            self.cols = a.size
            value = a.reshape(-1)
        elif kind == "a" and a.ndim != 1:
            value = a.reshape(-1)
        else:
            value = a
        k = len(self.arrays)
        var = self._var_of[key] = _VAR[k] if k < _NAMES else f"v{k}"
        self._keep.append(a)
        self.patterns.append(kind)
        self.arrays.append(value)
        return var

    def operand(self, a):
        """The variable of array ``a`` (as ``_kind`` reads it), or None."""
        item = _kind(a, self.shape)
        return None if item is None else self.leaf(*item)

    def param(self, value):
        """The variable (or literal) of a scalar parameter."""
        if type(value) in (int, float):
            # a constant the compiler folds (a runtime exponent keeps pow's branches in a long
            # loop, which then does not vectorize: 10x slower)
            text = _LITERALS.get(value)
            if text is not None and (value or math.copysign(1.0, value) > 0):  # (not -0.0)
                return text
        self.params.append(self.np_dtype.type(value))
        return f"p{len(self.params) - 1}"

    def function(self, name, fn, op):
        if name not in self.functions:
            self.functions[name] = (op, fn)

    def expr(self, e):
        """The variable of expression ``e``, its lines added once; None when it cannot."""
        if e.value is not None:
            return self.operand(e.value)
        var = self._var_of.get(id(e))
        if var is not None:
            return var
        names = []
        for a in e.args:
            v = self.expr(a) if type(a) is Expr else self.leaf(*a)
            if v is None:
                return None
            names.append(v)
        for p in e.params:
            names.append(self.param(p))
        op = e.op
        self.function(op.name, op.scalar, op)
        k = len(self.lines)
        var = self._var_of[id(e)] = _LINE[k] if k < _NAMES else f"e{k}"
        self._keep.append(e)
        self.lines.append(f"{var} = {op.name}({', '.join(names)})")
        return var

    def module(self, kind, n_out, n_col=0, tot=False):
        """The compiled module, or None (over budget, or Numba could not compile it)."""
        patterns = "".join(self.patterns)
        key = (kind, self.np_dtype, patterns, n_out, n_col, tot, len(self.params),
               tuple(self.lines))
        mod = _loaded.get(key)  # (the common case: one lookup of the key, not three)
        if mod is not None:
            return mod
        if key in _failed:
            return None
        if key not in _kernel_keys:
            if len(_kernel_keys) >= MAX_KERNELS:
                return None
            _kernel_keys.add(key)
        def body():
            functions = {}  # the scalar functions called, each after its callees
            for name, (op, fn) in self.functions.items():
                helpers(fn, functions)
                functions[name] = fn
            return cpu.fused_module_body(list(functions.items()), patterns, n_out,
                                         len(self.params), self.lines, total=kind == "total",
                                         n_col=n_col, tot=tot)

        try:
            mod = cpu.get_elementwise_kernel(key, self.np_dtype, body)
        except numba.core.errors.NumbaError:
            _failed.add(key)
            return None
        _loaded[key] = mod
        return mod

    def run(self, mod, outs, cols=(), tot=None):
        """Run ``flat`` or ``par`` of ``mod`` into the C-contiguous ``outs`` (and the row sums
        ``cols``, each ``self.cols`` values, and the total ``tot``, one value, of a module with
        ``n_col`` / ``tot``); False when Numba could not compile it for these arguments."""
        n = math.prod(self.shape)
        loop = mod.par if n >= mod.PARALLEL_MIN and cpu.num_threads() > 1 else mod.flat
        head = []  # (loops, not comprehensions, and no reshape of a 1-d array: once a step)
        for o in outs:
            head.append(o if o.ndim == 1 else o.reshape(-1))
        if cols or tot is not None:
            C = self.cols
            m = n // C
            if m == 0:
                return False
            # a blocking fixed by the shape alone (the same sums on any number of threads):
            # about ROW_BLOCK elements a block, at most 64 blocks
            rows = max(1, ROW_BLOCK // C, -(-m // 64))
            blocks = -(-m // rows)
            for c in cols:
                head.append(c.reshape(-1))
            for _ in cols:
                head.append(np.empty((blocks, C), self.np_dtype))
            if tot is not None:
                head.append(tot)
                head.append(np.empty(blocks, self.np_dtype))
            head.append(C)
            head.append(m)
            head.append(rows)
        elif self.cols is not None:
            head.append(self.cols)
        try:
            loop(*head, *self.arrays, *self.params)
        except numba.core.errors.NumbaError:
            return False
        return True


def _evaluate(e) -> np.ndarray:
    _store_heavy(e)
    loop = Loop(e.np_dtype, e.shape)
    var = loop.expr(e)
    out = None
    if var is not None:
        loop.lines.append(f"o0 = {var}")
        mod = loop.module("eval", 1)
        if mod is not None:
            out = cpu.empty(e.shape, e.np_dtype)
            if not loop.run(mod, [out]):
                out = None
    if out is None:  # node by node, with the op's own kernel
        arrays = [a.evaluate() if type(a) is Expr else
                  np.asarray(a[1]) if a[0] == "s" else a[1] for a in e.args]
        op = e.op
        compute = D.from_numpy_dtype(e.np_dtype)
        out = cpu.run_elementwise(op.kernel(compute), arrays, e.np_dtype,
                                  op._param_values(compute, e.params))
        if out.shape != e.shape:  # (every operand was one broadcast value)
            out = np.ascontiguousarray(np.broadcast_to(out, e.shape))
    e.value = out
    e.args = None  # the leaves are no longer needed
    return out


class Total:
    """A whole sum of expression ``inner``, not computed yet (the value of ``loss`` in
    ``loss = f(x).sum(); loss.backward()``). The backward fusion adds it up in the same pass as
    the gradients (``ops/fusion.py``); reading it first sums it on its own (``total``, else
    ``fallback()``). Either way it is computed once."""

    __slots__ = ("inner", "fallback", "np_dtype", "value", "saved", "__weakref__")
    shape = ()
    uses = 0

    def __init__(self, inner, fallback):
        self.inner = inner
        self.fallback = fallback
        self.np_dtype = inner.np_dtype
        self.value = None
        self.saved = False
        inner.uses += 1  # (another consumer of ``inner`` evaluates it rather than embeds it)
        _track(self)

    def evaluate(self) -> np.ndarray:
        v = self.value
        if v is None:
            v = total(self.inner)
            self.set(self.fallback() if v is None else v)
            v = self.value
        return v

    def set(self, value) -> None:
        self.value = value
        self.inner = self.fallback = None

    def leaves(self, out=None):
        return self.inner.leaves(out)


def later_total(e, fallback):
    """The whole sum of lazy ``e`` as a ``Total``, or None when deferring is off."""
    if not ENABLED or not LATER or backward_passes.running or type(e) is not Expr:
        return None
    return Total(e, fallback)


def total(e):
    """The sum of all of ``e``'s values as a 0-d array, in one pass, nothing written; None
    when it cannot be built (the caller then sums the evaluated array)."""
    if type(e) is not Expr or e.value is not None:
        return None
    if e.saved and _is_heavy(e.op):
        e.evaluate()  # (kept for backward: the caller sums the array)
        return None
    _store_heavy(e)
    loop = Loop(e.np_dtype, e.shape)
    var = loop.expr(e)
    if var is None:
        return None
    loop.lines.append(f"o0 = {var}")
    mod = loop.module("total", 0)
    if mod is None:
        return None
    n = math.prod(e.shape)
    c = loop.cols
    if c is None:
        c, rows, blocks = 1, 0, -(-n // BLOCK)
    else:
        rows = max(1, BLOCK // c)
        blocks = -(-(n // c) // rows)
    out = np.empty(1, e.np_dtype)
    part = np.empty(blocks, e.np_dtype)
    run = mod.total if n >= mod.PARALLEL_MIN and cpu.num_threads() > 1 else mod.total_flat
    try:
        run(out, part, n, c, rows, *loop.arrays, *loop.params)
    except numba.core.errors.NumbaError:
        return None
    return out.reshape(())
