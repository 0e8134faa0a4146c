"""Derivatives of scalar Python functions, read from their source: the rules of
``numbagrad.elementwise`` ops.

A function's body (arithmetic, ``math`` calls, locals, ``if``/``else`` and conditional
expressions) is lowered to straight-line bindings over elementwise ops, ``where`` standing for
each branch. An input's rule is that program's forward derivative, with the derivative of each
op call taken from the op's own rule, written back as Python in the rules' vocabulary
(``grad``, the arguments, ``result``, ``where``, ``exp``, ...): it compiles into a kernel and
runs on Tensors (``create_graph``) like a built-in rule.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import itertools
import linecache
import math
import re
import textwrap

import numpy as np

from ..backend.codegen import function_source, kernel_dtype
from .registry import REGISTRY, Elementwise

# ---------------------------------------------------------------- what a function may call

# math.<name> -> the registry's elementwise op that computes it on Tensors (its rule gives the
# derivative; floor, ceil and trunc have derivative zero)
MATH = {
    "exp": "exp", "log": "log", "log1p": "log1p", "expm1": "expm1", "sqrt": "sqrt",
    "sin": "sin", "cos": "cos", "tan": "tan", "tanh": "tanh", "fabs": "abs",
    "erf": "erf", "erfc": "erfc", "atan": "atan", "asin": "asin", "acos": "acos",
    "sinh": "sinh", "cosh": "cosh", "asinh": "asinh", "acosh": "acosh", "atanh": "atanh",
    "log2": "log2", "log10": "log10", "atan2": "atan2", "hypot": "hypot", "floor": "floor",
    "ceil": "ceil", "trunc": "trunc",
}
CONSTANTS = {"pi": math.pi, "e": math.e, "tau": math.tau, "inf": math.inf, "nan": math.nan}
# calls of these fold to a number when their arguments are numbers
_FOLD = {"exp": math.exp, "log": math.log, "sqrt": math.sqrt}
# names a function's arguments may not keep: the rules' own words and the kernels' globals
RESERVED = {"grad", "result", "math", "np", "njit", "prange", "_c", "_pow", "_exp"}


class DeriveError(NotImplementedError):
    """numbagrad cannot differentiate a scalar function; the message names the construct."""


def rule_ops() -> dict:
    """The ops a rule may call, by name: the registry's elementwise ops."""
    return {n: op for n, op in REGISTRY.items() if isinstance(op, Elementwise)}


# ---------------------------------------------------------------- source and locations


class _Where:
    """Where a function's source lies, for error messages."""

    def __init__(self, fn, label):
        self.label = label
        try:
            self.file = inspect.getsourcefile(fn) or fn.__code__.co_filename
            self.first = inspect.getsourcelines(fn)[1]
        except (OSError, TypeError):
            self.file, self.first = fn.__code__.co_filename, fn.__code__.co_firstlineno

    def error(self, node, what) -> DeriveError:
        line = self.first + getattr(node, "lineno", 1) - 1
        return DeriveError(f"numbagrad.elementwise cannot differentiate {self.label!r}: {what} "
                           f"(line {line} of {self.file}); give its rule with "
                           f"{self.label}.defvjp(...)")


def _function_def(fn) -> ast.FunctionDef:
    """``fn``'s ``def`` (a lambda as a ``def``), undecorated, lines counted from its first."""
    try:
        src = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError) as e:
        raise TypeError(f"numbagrad.elementwise reads the source of {fn!r}, and Python has "
                        f"none for it ({e}): define it in a file or a notebook cell") from None
    if fn.__name__ != "<lambda>":
        fdef = ast.parse(src).body[0]
        if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
            raise TypeError(f"numbagrad.elementwise: cannot find the def of {fn!r}")
        fdef.decorator_list = []
        return fdef
    # several lambdas may share the lines: the one whose compiled code reads the same names
    # and constants (bytecode itself differs with how the enclosing code was compiled)
    want = fn.__code__
    for node in _lambdas(src.strip()):
        code = compile(ast.Expression(node), "<rule>", "eval").co_consts
        code = next(c for c in code if hasattr(c, "co_code"))
        if (code.co_names, code.co_varnames, code.co_consts) == (
                want.co_names, want.co_varnames, want.co_consts):
            body = [ast.Return(node.body, lineno=node.lineno, col_offset=node.col_offset)]
            return ast.FunctionDef(name="_lambda", args=node.args, body=body,
                                   decorator_list=[], returns=None, type_params=[],
                                   lineno=node.lineno, col_offset=node.col_offset)
    raise TypeError(f"numbagrad.elementwise: cannot find the source of {fn!r}")


def _lambdas(src):
    """The lambdas in ``src``, the lines a lambda's source is (which need not parse alone: a
    dict entry, a call's argument): each from its ``lambda`` to the longest end that parses."""
    try:
        return [n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Lambda)]
    except SyntaxError:
        pass
    found = []
    for m in re.finditer(r"\blambda\b", src):
        for end in range(len(src), m.start(), -1):
            try:
                tree = ast.parse(src[m.start():end], mode="eval")
            except SyntaxError:
                continue
            if isinstance(tree.body, ast.Lambda):
                found.append(tree.body)
                break
    return found


_made = itertools.count()


def make_function(source: str, namespace: dict, label: str):
    """The function defined by ``source``, its globals ``namespace``; its source stays
    readable (``inspect.getsource``), which the kernel builder needs."""
    filename = f"<numbagrad {label} #{next(_made)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    ns = dict(namespace)
    exec(compile(source, filename, "exec"), ns)
    return ns[ast.parse(source).body[0].name]


def _arg_names(fdef) -> list[str]:
    a = fdef.args
    if a.vararg or a.kwarg or a.kwonlyargs:
        raise TypeError("numbagrad.elementwise: the function takes *args, **kwargs or "
                        "keyword-only arguments; give it plain positional ones")
    return [x.arg for x in a.posonlyargs + a.args]


# ---------------------------------------------------------------- the scalar function


class _Normalize(ast.NodeTransformer):
    """A user's function rewritten so a kernel module can compile it alone: numbers it reads
    from globals or its closure become literals, ``math``'s functions imported by name become
    ``math.<name>``, numbagrad's elementwise ops become their names (the kernel builder adds
    their scalar definitions), and arguments that clash with ``RESERVED`` are renamed."""

    def __init__(self, fn, ops, renames):
        self.fn = fn
        self.ops = ops
        self.renames = renames
        self.bound = set()

    def lookup(self, name):
        code = self.fn.__code__
        if name in code.co_freevars and self.fn.__closure__:
            cell = self.fn.__closure__[code.co_freevars.index(name)]
            try:
                return cell.cell_contents
            except ValueError:
                return _MISSING
        if name in self.fn.__globals__:
            return self.fn.__globals__[name]
        return getattr(builtins, name, _MISSING)

    def replacement(self, obj, node):
        """What a global ``obj`` becomes in the kernel's source, or None: left as it is."""
        if isinstance(obj, (int, float)) and not isinstance(obj, bool):
            return ast.copy_location(ast.Constant(obj), node)
        if obj is math:
            return ast.copy_location(ast.Name("math", ast.Load()), node)
        name = getattr(obj, "__name__", None)
        if callable(obj) and (getattr(obj, "__module__", None) == "math"
                              or isinstance(obj, np.ufunc) and name in MATH):
            return ast.copy_location(
                ast.Attribute(ast.Name("math", ast.Load()), name, ast.Load()), node)
        op = getattr(obj, "op", obj)
        name = getattr(op, "name", None)
        if isinstance(name, str) and getattr(op, "kind", None) == "elementwise":
            if self.ops.get(name) is not op:
                raise TypeError(f"numbagrad.elementwise: {self.fn.__name__!r} calls the "
                                f"numbagrad.elementwise op {op.__name__!r}; an op made by "
                                "the decorator cannot call another yet (call its scalar "
                                "function instead)")
            return ast.copy_location(ast.Name(name, ast.Load()), node)
        return None

    def visit_Call(self, node):
        # float(x) would compute a float32 kernel's value in float64
        if (isinstance(node.func, ast.Name) and node.func.id == "float" and len(node.args) == 1
                and not node.keywords and "float" not in self.bound
                and self.lookup("float") is builtins.float):
            return self.visit(node.args[0])
        self.generic_visit(node)
        func = node.func
        if (isinstance(func, ast.Attribute) and _is_math(func.value) and func.attr == "log"
                and len(node.args) == 2):
            # (Numba has no math.log of two arguments)
            a, b = (ast.Call(func, [arg], []) for arg in node.args)
            return ast.copy_location(ast.BinOp(a, ast.Div(), b), node)
        return node

    def visit_Name(self, node):
        if node.id in self.renames:
            node.id = self.renames[node.id]
            return node
        if isinstance(node.ctx, ast.Load) and node.id not in self.bound:
            obj = self.lookup(node.id)
            if obj is getattr(builtins, node.id, _MISSING) or node.id in self.ops or (
                    node.id == "_c" and obj is kernel_dtype):
                return node  # (abs, min, max; a rule's bare op names; the dtype cast)
            if obj is np:
                return ast.copy_location(ast.Name("np", ast.Load()), node)
            new = None if obj is _MISSING else self.replacement(obj, node)
            if new is None:
                what = "an unknown name" if obj is _MISSING else f"a {type(obj).__name__}"
                raise TypeError(f"numbagrad.elementwise: {self.fn.__name__!r} reads the global "
                                f"`{node.id}` ({what}), which its kernel cannot see: a kernel "
                                "sees its arguments, numbers, math and numbagrad's "
                                "elementwise ops")
            return new
        return node

    def visit_arg(self, node):
        node.arg = self.renames.get(node.arg, node.arg)
        return node

    def visit_Attribute(self, node):
        # numbagrad.exp, np.pi, a module's constant: resolved when its base is a global name
        base = node.value
        if isinstance(base, ast.Name) and base.id not in self.bound:
            obj = self.lookup(base.id)
            if obj is not _MISSING and obj is not math:
                value = getattr(obj, node.attr, _MISSING)
                if value is not _MISSING:
                    new = self.replacement(value, node)
                    if new is not None:
                        return new
        self.generic_visit(node)
        return node


_MISSING = object()


def normalize(fn, ops=None, keep=()):
    """(``fn`` as a kernel can compile it (see ``_Normalize``), its renamed arguments, its
    ``def`` as the AST that was compiled, whose lines are counted from ``fn``'s first);
    ``keep``: reserved names it may take as arguments (a rule's ``grad``)."""
    ops = rule_ops() if ops is None else ops
    fdef = _function_def(fn)
    args = _arg_names(fdef)
    renames = {}
    for a in args:
        if (a in RESERVED or a in ops) and a not in keep:
            new = a + "_"
            while new in args or new in ops:
                new += "_"
            renames[a] = new
    norm = _Normalize(fn, ops, renames)
    norm.bound = {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name)
                  and isinstance(n.ctx, ast.Store)} | set(args)
    fdef = norm.visit(fdef)
    fdef.name = "_scalar"
    if fdef.body and isinstance(fdef.body[0], ast.Expr) and isinstance(
            getattr(fdef.body[0], "value", None), ast.Constant):
        fdef.body = fdef.body[1:] or [ast.Pass()]
    ast.fix_missing_locations(fdef)
    source = ast.unparse(fdef) + "\n"
    scalar = make_function(source, {"math": math, **ops}, f"scalar {fn.__name__}")
    return scalar, [renames.get(a, a) for a in args], fdef


# ---------------------------------------------------------------- expressions

# An expression is a tuple: ("c", number), ("v", name), (op, a, b) for op in + - * / **,
# ("neg", a), ("call", op name, args), ("where", cond, a, b), ("cmp", op, a, b),
# ("and", a, b), ("or", a, b), ("not", a).

ZERO, ONE = ("c", 0), ("c", 1)
_BOOL = {"cmp", "and", "or", "not"}


def _c(e, v=None) -> bool:
    return e[0] == "c" and (v is None or e[1] == v)


def _is_bool(e) -> bool:
    return e[0] in _BOOL or (e[0] == "c" and isinstance(e[1], bool))


def add(a, b):
    if _c(a, 0):
        return b
    if _c(b, 0):
        return a
    if _c(a) and _c(b):
        return ("c", a[1] + b[1])
    if b[0] == "neg":
        return sub(a, b[1])
    if a[0] == "neg":
        return sub(b, a[1])
    return ("+", a, b)


def sub(a, b):
    if _c(b, 0):
        return a
    if _c(a, 0):
        return neg(b)
    if _c(a) and _c(b):
        return ("c", a[1] - b[1])
    if b[0] == "neg":
        return add(a, b[1])
    if a == b:
        return ZERO
    return ("-", a, b)


def neg(a):
    if _c(a):
        return ("c", -a[1])
    if a[0] == "neg":
        return a[1]
    return ("neg", a)


def mul(a, b):
    if _c(a, 0) or _c(b, 0):
        return ZERO
    if _c(a, 1):
        return b
    if _c(b, 1):
        return a
    if _c(a, -1):
        return neg(b)
    if _c(b, -1):
        return neg(a)
    if _c(a) and _c(b):
        return ("c", a[1] * b[1])
    if b[0] == "/" and _c(b[1], 1):
        return div(a, b[2])
    if a[0] == "/" and _c(a[1], 1):
        return div(b, a[2])
    if a[0] == "neg":
        return neg(mul(a[1], b))
    if b[0] == "neg":
        return neg(mul(a, b[1]))
    if _c(b):
        a, b = b, a  # (a number first: 2 * x)
    return ("*", a, b)


def div(a, b):
    if _c(a, 0) and not _c(b, 0):
        return ZERO
    if _c(b, 1):
        return a
    if _c(b, -1):
        return neg(a)
    if _c(a) and _c(b) and b[1] != 0:
        return ("c", a[1] / b[1])
    if a[0] == "neg":
        return neg(div(a[1], b))
    return ("/", a, b)


def power(a, b):
    if _c(b, 1):
        return a
    if _c(b, 0):
        return ONE
    if _c(a) and _c(b):
        try:
            return ("c", a[1] ** b[1])
        except (OverflowError, ZeroDivisionError):
            pass
    return ("**", a, b)


def where(cond, a, b):
    if a == b:
        return a
    if _c(cond):
        return a if cond[1] else b
    return ("where", cond, a, b)


def call(name, args):
    fold = _FOLD.get(name)
    if fold is not None and all(_c(a) for a in args):
        try:
            return ("c", fold(*[a[1] for a in args]))
        except (ValueError, OverflowError):
            pass
    return ("call", name, tuple(args))


def _times_grad(d, top=True):
    """``grad * d``, with ``grad`` moved into the branches of a ``where``."""
    if d[0] == "where":
        return where(d[1], _times_grad(d[2], False), _times_grad(d[3], False))
    if _c(d, 0) and top:
        # a zero gradient, also where grad is infinite or NaN (as sign's rule)
        return ("*", ("call", "abs", (("call", "sign", (("v", "grad"),)),)), ZERO)
    return mul(("v", "grad"), d)


# ---------------------------------------------------------------- lowering


class _Lower:
    """A function's body as bindings (``self.lines``: (name, expression)) and the expression
    of its return value. Branches become ``where``; a return inside a branch takes the rest
    of the body along into each branch."""

    def __init__(self, where_, ops, lines=None, names=None):
        self.at = where_
        self.ops = ops
        self.lines = [] if lines is None else lines
        self.names = set() if names is None else names  # names taken in the rule
        self.count = itertools.count()
        self.memo: dict = {}  # expression -> the variable bound to it (each computed once)

    def fresh(self, hint):
        while True:
            name = f"_{hint.strip('_')}{next(self.count)}"
            if name not in self.names:
                self.names.add(name)
                return name

    def bind(self, hint, e):
        if e[0] in ("c", "v"):
            return e
        var = self.memo.get(e)
        if var is None:
            var = self.memo[e] = ("v", self.fresh(hint))
            self.lines.append((var[1], e))
        return var

    # ---- statements

    def function(self, fdef, env):
        ret = self.block(fdef.body, env)
        if ret is None:
            raise self.at.error(fdef, "a path through the function returns no value")
        return ret

    def block(self, stmts, env):
        """The expression returned by ``stmts``, or None when they end without returning
        (``env`` then holds the locals they set)."""
        for k, s in enumerate(stmts):
            if isinstance(s, ast.Return):
                if s.value is None:
                    raise self.at.error(s, "`return` without a value")
                return self.number(s.value, env)
            if isinstance(s, ast.If):
                cond = self.cond(s.test, env)
                if _returns(s):
                    rest = stmts[k + 1:]
                    a = self.block(s.body + rest, dict(env))
                    b = self.block(s.orelse + rest, dict(env))
                    if a is None or b is None:
                        return None if a is b else self._partial(s)
                    return self.bind("ret", where(cond, a, b))
                env_a, env_b = dict(env), dict(env)
                self.block(s.body, env_a)
                self.block(s.orelse, env_b)
                for name in {**env_a, **env_b}:
                    a, b = env_a.get(name, _UNSET), env_b.get(name, _UNSET)
                    if a is _UNSET or b is _UNSET:
                        env[name] = ("unset", name, s.lineno)
                    elif a != b:
                        env[name] = self.bind(name, where(cond, a, b))
                continue
            if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                self.assign(s, env)
                continue
            if isinstance(s, ast.Pass) or (isinstance(s, ast.Expr)
                                           and isinstance(s.value, ast.Constant)):
                continue
            raise self.at.error(s, _construct(s))
        return None

    def _partial(self, s):
        raise self.at.error(s, "one branch returns and the other falls through to no return")

    def assign(self, s, env):
        if isinstance(s, ast.AugAssign):
            target = s.target
            value = ast.BinOp(ast.Name(target.id, ast.Load()) if isinstance(target, ast.Name)
                              else target, s.op, s.value, lineno=s.lineno)
            targets = [target]
        else:
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            value = s.value
            if value is None:
                return  # (a bare annotation)
        for target in targets:
            if isinstance(target, ast.Name):
                env[target.id] = self.bind(target.id, self.expr(value, env))
            elif (isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
                  and len(target.elts) == len(value.elts)
                  and all(isinstance(t, ast.Name) for t in target.elts)):
                values = [self.expr(v, env) for v in value.elts]  # (all read before set)
                for t, v in zip(target.elts, values):
                    env[t.id] = self.bind(t.id, v)
            else:
                raise self.at.error(s, f"assignment to `{ast.unparse(target)}`")

    # ---- expressions

    def number(self, node, env):
        e = self.expr(node, env)
        if _is_bool(e):
            raise self.at.error(node, f"`{ast.unparse(node)}` is a comparison or truth value "
                                "used as a number")
        return e

    def cond(self, node, env):
        e = self.expr(node, env)
        return e if _is_bool(e) else ("cmp", "!=", e, ZERO)  # (Python's truth of a number)

    def expr(self, node, env):
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (bool, int, float)):
                return ("c", node.value)
        elif isinstance(node, ast.Name):
            e = env.get(node.id)
            if e is None:
                raise self.at.error(node, f"the name `{node.id}` (not an argument, a local "
                                    "or a number)")
            if e[0] == "unset":
                raise self.at.error(node, f"`{node.id}` is set in only one branch of the "
                                    f"`if` at line {self.at.first + e[2] - 1}")
            return e
        elif isinstance(node, ast.Attribute):
            if _is_math(node.value) and node.attr in CONSTANTS:
                return ("c", CONSTANTS[node.attr])
        elif isinstance(node, ast.BinOp):
            f = _BINOPS.get(type(node.op))
            if f is not None:
                return f(self.number(node.left, env), self.number(node.right, env))
        elif isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.USub):
                return neg(self.number(node.operand, env))
            if isinstance(node.op, ast.UAdd):
                return self.number(node.operand, env)
            if isinstance(node.op, ast.Not):
                return ("not", self.cond(node.operand, env))
        elif isinstance(node, ast.Compare):
            out, left = None, self.number(node.left, env)
            for op, right_node in zip(node.ops, node.comparators):
                name = _CMPS.get(type(op))
                if name is None:
                    break
                right = self.number(right_node, env)
                c = ("cmp", name, left, right)
                out, left = c if out is None else ("and", out, c), right
            else:
                return out
        elif isinstance(node, ast.BoolOp):
            kind = "and" if isinstance(node.op, ast.And) else "or"
            values = [self.expr(v, env) for v in node.values]
            if all(_is_bool(v) for v in values):
                out = values[0]
                for v in values[1:]:
                    out = (kind, out, v)
                return out
            raise self.at.error(node, f"`{kind}` of numbers (it picks a value, not a truth)")
        elif isinstance(node, ast.IfExp):
            cond = self.cond(node.test, env)
            return where(cond, self.expr(node.body, env), self.expr(node.orelse, env))
        elif isinstance(node, ast.Call):
            return self.call(node, env)
        raise self.at.error(node, _construct(node))

    def call(self, node, env):
        if node.keywords:
            raise self.at.error(node, f"keyword arguments in `{ast.unparse(node)}`")
        func = node.func
        if (isinstance(func, ast.Name) and func.id == "where" and func.id not in env
                and len(node.args) == 3):
            return where(self.cond(node.args[0], env), *[self.number(a, env)
                                                        for a in node.args[1:]])
        args = [self.number(a, env) for a in node.args]
        if _is_math(getattr(func, "value", None)):
            name = func.attr
            if name == "pow" and len(args) == 2:
                return power(*args)
            if name == "log" and len(args) == 2:
                return div(self.op("log", args[:1], node), self.op("log", args[1:], node))
            if name in MATH:
                return self.op(MATH[name], args, node)
            raise self.at.error(node, f"`math.{name}`, which numbagrad cannot differentiate")
        if isinstance(func, ast.Name) and func.id not in env:
            name = func.id
            if name in ("min", "max") and len(args) == 2:
                a, b = args
                # Python's min(a, b) is a unless b < a; max(a, b) a unless b > a
                return self.bind(name, where(("cmp", "<" if name == "min" else ">", b, a), b, a))
            if name == "pow" and len(args) == 2:
                return power(*args)
            if name == "float" and len(args) == 1:
                return args[0]
            if name in self.ops:
                return self.op(name, args, node)
        raise self.at.error(node, f"a call of `{ast.unparse(func)}`, which numbagrad cannot "
                            "differentiate")

    def op(self, name, args, node):
        op = self.ops[name]
        if len(args) != op.n_in + len(op.param_names):
            raise self.at.error(node, f"`{name}` takes {op.n_in + len(op.param_names)} "
                                f"arguments, not {len(args)}")
        if op.dtype_rule not in ("same", "float"):
            raise self.at.error(node, f"`{name}`, whose value is no number")
        return self.bind(name, call(name, args))

    # ---- derivatives

    def tangent(self, e, tangents, result=None):
        """d e / d (the input whose tangent is ONE), given the tangents of the bindings;
        ``result``: the variable ``e`` is bound to, if it is."""
        kind = e[0]
        if kind == "c":
            return ZERO
        if kind == "v":
            return tangents.get(e[1], ZERO)
        if kind in ("+", "-"):
            da, db = self.tangent(e[1], tangents), self.tangent(e[2], tangents)
            return add(da, db) if kind == "+" else sub(da, db)
        if kind == "neg":
            return neg(self.tangent(e[1], tangents))
        if kind == "*":
            a, b = e[1], e[2]
            return add(mul(self.tangent(a, tangents), b), mul(a, self.tangent(b, tangents)))
        if kind == "/":
            a, b = e[1], e[2]
            da, db = self.tangent(a, tangents), self.tangent(b, tangents)
            return sub(div(da, b), div(mul(a, db), mul(b, b)))
        if kind == "**":
            return self._pow_tangent(e[1], e[2], tangents)
        if kind == "where":
            return where(e[1], self.tangent(e[2], tangents), self.tangent(e[3], tangents))
        if kind == "call":
            return self._call_tangent(e, tangents, result)
        raise AssertionError(e)  # (truth values are never differentiated: ``number``)

    def _pow_tangent(self, a, b, tangents):
        da, db = self.tangent(a, tangents), self.tangent(b, tangents)
        if _c(b):
            # d a**c = c * a**(c - 1) da
            return mul(mul(b, power(a, ("c", b[1] - 1))), da)
        out = ZERO
        if not _c(da, 0):
            # (0 where b == 0: d/da a**0 is 0 also at a == 0, as PyTorch's pow)
            out = where(("cmp", "==", b, ZERO), ZERO,
                        mul(mul(b, power(a, sub(b, ONE))), da))
        if not _c(db, 0):
            # (0 where a == 0 and b >= 0, where log(0) would make 0 * -inf: PyTorch's choice)
            log_term = mul(self.bind("pow", power(a, b)), call("log", [a]))
            if not _c(a):
                log_term = where(("and", ("cmp", "==", a, ZERO), ("cmp", ">=", b, ZERO)),
                                 ZERO, log_term)
            out = add(out, mul(log_term, db))
        return out

    def _call_tangent(self, e, tangents, result):
        name, args = e[1], e[2]
        if name == "div_floor":
            return ZERO  # (piecewise constant)
        op = self.ops[name]
        out = ZERO
        for k in range(op.n_in):
            dk = self.tangent(args[k], tangents)
            if _c(dk, 0):
                continue
            rule = op.vjps[k]
            if rule is None:
                raise self.at.error(None, f"`{name}` has no derivative")
            env = {"grad": ONE, "result": result or self.bind(name, e)}
            for n, a in zip(op.arg_names + op.param_names, args):
                env[n] = a
            fdef = _function_def(rule)
            inner = _Lower(_Where(rule, name), self.ops, self.lines, self.names)
            inner.count, inner.memo = self.count, self.memo
            env = {n: env[n] for n in _arg_names(fdef)}
            out = add(out, mul(inner.function(fdef, env), dk))
        return out


_UNSET = object()
_BINOPS = {ast.Add: add, ast.Sub: sub, ast.Mult: mul, ast.Div: div, ast.Pow: power,
           ast.Mod: lambda a, b: call("remainder", [a, b]),
           # (the floor division whose own derivative is zero, as PyTorch's div(rounding_mode=
           # "floor"); floor_divide records PyTorch's NotImplemented node)
           ast.FloorDiv: lambda a, b: call("div_floor", [a, b])}
_CMPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


def _is_math(node) -> bool:
    return isinstance(node, ast.Name) and node.id == "math"


def _returns(stmt) -> bool:
    return any(isinstance(n, ast.Return) for n in ast.walk(stmt))


_CONSTRUCTS = {
    ast.For: "a `for` loop", ast.While: "a `while` loop", ast.Try: "a `try` statement",
    ast.With: "a `with` statement", ast.Raise: "a `raise` statement",
    ast.Assert: "an `assert` statement", ast.FunctionDef: "a nested function",
    ast.Lambda: "a lambda", ast.Subscript: "a subscript", ast.Global: "a `global` statement",
    ast.Nonlocal: "a `nonlocal` statement", ast.Break: "`break`", ast.Continue: "`continue`",
}


def _construct(node) -> str:
    what = _CONSTRUCTS.get(type(node))
    if what is not None:
        return what
    if isinstance(node, ast.BinOp):
        return f"the operator in `{ast.unparse(node)}`"
    if isinstance(node, ast.UnaryOp):
        return f"the operator in `{ast.unparse(node)}`"
    if isinstance(node, ast.Compare):
        return f"the comparison `{ast.unparse(node)}`"
    try:
        text = ast.unparse(node).splitlines()[0]
    except Exception:  # (a node ast cannot write back)
        text = type(node).__name__
    return f"`{text}` ({type(node).__name__})"


# ---------------------------------------------------------------- writing rules


def _to_ast(e):
    kind = e[0]
    if kind == "c":
        v = e[1]
        if isinstance(v, float) and (math.isinf(v) or math.isnan(v)):
            node = ast.Attribute(ast.Name("math", ast.Load()),
                                 "nan" if math.isnan(v) else "inf", ast.Load())
            return ast.UnaryOp(ast.USub(), node) if v < 0 else node
        if v < 0 or (v == 0 and math.copysign(1.0, v) < 0):
            return ast.UnaryOp(ast.USub(), ast.Constant(-v))
        return ast.Constant(v)
    if kind == "v":
        return ast.Name(e[1], ast.Load())
    if kind in ("+", "-", "*", "/", "**"):
        op = {"+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div, "**": ast.Pow}[kind]()
        return ast.BinOp(_to_ast(e[1]), op, _to_ast(e[2]))
    if kind == "neg":
        return ast.UnaryOp(ast.USub(), _to_ast(e[1]))
    if kind == "cmp":
        op = {v: k for k, v in _CMPS.items()}[e[1]]()
        return ast.Compare(_to_ast(e[2]), [op], [_to_ast(e[3])])
    if kind in ("and", "or", "not"):
        fn = "logical_" + kind
        return ast.Call(ast.Name(fn, ast.Load()), [_to_ast(a) for a in e[1:]], [])
    if kind == "where":
        return ast.Call(ast.Name("where", ast.Load()), [_to_ast(a) for a in e[1:]], [])
    if kind == "call":
        return ast.Call(ast.Name(e[1], ast.Load()), [_to_ast(a) for a in e[2]], [])
    raise AssertionError(e)


def _vars(e, out):
    if e[0] == "v":
        out.add(e[1])
    elif e[0] == "call":
        for a in e[2]:
            _vars(a, out)
    elif e[0] not in ("c",):
        for a in e[1:]:
            if isinstance(a, tuple):
                _vars(a, out)
    return out


def _substitute(e, old, new):
    if e == old:
        return new
    if e[0] in ("c", "v"):
        return e
    if e[0] == "call":
        return ("call", e[1], tuple(_substitute(a, old, new) for a in e[2]))
    return (e[0],) + tuple(_substitute(a, old, new) if isinstance(a, tuple) else a
                           for a in e[1:])


def write_rule(name, lines, ret, inputs, params, ops, at=None):
    """The rule function ``def name(grad, <inputs read>, [result], <params read>)`` computing
    ``ret`` after ``lines``: only the bindings ``ret`` needs, each once. ``at``: where the
    function differentiated lies, for the error raised where a binding would be read before
    it is made."""
    needed = _vars(ret, set())
    body = []
    for var, e in reversed(lines):
        if var in needed:
            body.append((var, e))
            _vars(e, needed)
    body.reverse()
    args = ["grad"] + [a for a in inputs if a in needed]
    args += ["result"] * ("result" in needed) + [p for p in params if p in needed]
    # a rule that reads a name before binding it would fail only when run (UnboundLocalError
    # in a backward pass): refused here, as what the deriver cannot do
    bound = set(args)
    for var, e in body + [(None, ret)]:
        unbound = sorted(_vars(e, set()) - bound)
        if unbound:
            what = (f"its derivative would read `{unbound[0]}` before computing it (a "
                    "numbagrad bug; please report it)")
            if at is None:
                raise DeriveError(f"numbagrad cannot write the rule {name!r}: {what}")
            raise at.error(None, what)
        bound.add(var)
    stmts = [ast.Assign([ast.Name(v, ast.Store())], _to_ast(e)) for v, e in body]
    stmts.append(ast.Return(_to_ast(ret)))
    fdef = ast.FunctionDef(name=name, args=ast.arguments(
        posonlyargs=[], args=[ast.arg(a) for a in args], kwonlyargs=[], kw_defaults=[],
        defaults=[]), body=stmts, decorator_list=[], returns=None, type_params=[])
    source = ast.unparse(ast.fix_missing_locations(fdef)) + "\n"
    return make_function(source, {"math": math, **ops}, f"rule {name}")


def derive(fn, label, n_in, ops=None, normalized=None):
    """One rule per input of the ``numbagrad.elementwise`` op made from ``fn`` named
    ``label`` (the first ``n_in`` arguments are inputs, the rest parameters);
    ``normalized``: what ``normalize(fn)`` gave, if it was called. Raises ``DeriveError``
    naming what it cannot differentiate, and where."""
    ops = rule_ops() if ops is None else ops
    at = _Where(fn, label)
    _, args, fdef = normalized or normalize(fn, ops)
    inputs, params = args[:n_in], args[n_in:]
    low = _Lower(at, ops, names=set(args) | {"grad", "result"})
    ret = low.function(fdef, {a: ("v", a) for a in args})
    if _is_bool(ret):
        raise at.error(fdef, "it returns a truth value")
    primal = list(low.lines)
    rules = []
    for i, x in enumerate(inputs):
        # The memo grows with the replay, never ahead of it: seeded with all of the primal's
        # bindings, a derivative would reuse one bound further down (erf's rule needs
        # exp(-y * y), which a Newton step computes two lines later) and read it unbound.
        low.lines, low.memo = [], {}
        tangents = {x: ONE}
        for var, e in primal:
            prior = low.memo.setdefault(e, ("v", var))
            # (a derivative computed this value already: the binding reads it, and its tangent
            # is taken from the expression, as the derivative's own bindings have none)
            low.lines.append((var, e if prior[1] == var else prior))
            t = low.tangent(e, tangents, ("v", var))
            if not _c(t, 0):
                # (the return value's tangent stays an expression: grad goes into its where)
                tangents[var] = t if ret == ("v", var) else low.bind("d" + var, t)
        d = low.tangent(ret, tangents)
        if ret[0] == "v" and ret[1] not in args:
            # the return value is the op's output: read it (saved), not computed again
            d = _substitute(d, ret, ("v", "result"))
            low.lines = [(v, _substitute(e, ret, ("v", "result"))) for v, e in low.lines]
        rules.append(write_rule(f"{_identifier(label)}_vjp_{x}", low.lines, _times_grad(d), inputs,
                                params, ops, at))
    return rules


def rule_from(fn, label, inputs, params, ops=None):
    """A user's rule for ``numbagrad.elementwise``'s ``defvjp``, written in the rules'
    vocabulary or in scalar Python (``math.exp``, ``if``/``else``), rewritten as a function
    that compiles into a kernel and runs on Tensors (its arguments: ``grad``, the op's
    argument names, ``result``)."""
    ops = rule_ops() if ops is None else ops
    _, args, fdef = normalize(fn, ops, keep=("grad", "result"))
    allowed = {"grad", "result", *inputs, *params}
    for a in args:
        if a not in allowed:
            raise TypeError(f"{label}.defvjp: a rule's arguments are among grad, result and "
                            f"the op's arguments {inputs + params}; got {a!r}")
    at = _Where(fn, label)
    low = _Lower(at, ops, names=set(allowed))
    ret = low.function(fdef, {a: ("v", a) for a in args})
    if "grad" not in args:
        raise TypeError(f"{label}.defvjp: a rule takes `grad`, the gradient of the output")
    return write_rule(f"{_identifier(label)}_rule", low.lines, ret, inputs, params, ops, at)


def _identifier(label: str) -> str:
    return re.sub(r"\W", "_", label)


def source(fn) -> str:
    """The text of a rule or scalar function numbagrad made (for reading and tests)."""
    return function_source(fn, type_literals=False)
