"""CPU backend: NumPy storage, Numba loops generated from the ops' scalar definitions.

Elementwise kernels take every operand as (flat buffer, offset, strides in elements), so one
compiled kernel per op and dtype serves every shape, rank, broadcast and strided view. Before a
launch, dimensions that are contiguous for all operands are merged, so a contiguous call runs
a single flat loop.
"""

from __future__ import annotations

import ctypes
import inspect
import math
import os
import re
import sys
import threading
import zlib

import numba
import numpy as np

from . import codegen
from . import fastmath
from . import kernels_copy
from . import kernels_reduce
from . import kernels_sort
from . import layout
from . import memory

# ---------------------------------------------------------------- elementwise template


def _unit_rows(n_in: int, indent: str, base: str) -> list[str]:
    """The lines that bind ``vo`` and ``v0``.. to one output row's operands, each a unit-stride
    1-D array: a row of an operand (stride 1), or for an operand broadcast along the row
    (stride 0: ``x - x.mean(1, keepdim=True)``) its scratch row ``w{i}`` filled with its one
    value, so the row's loop vectorizes either way. ``base`` names the row offsets' prefix."""
    lines = [f"{indent}vo = out[{base}o:{base}o + inner]"]
    for i in range(n_in):
        lines += [f"{indent}if t{i} == 1:",
                  f"{indent}    v{i} = a{i}[{base}{i}:{base}{i} + inner]",
                  f"{indent}else:",
                  f"{indent}    w{i}[:] = a{i}[{base}{i}]",
                  f"{indent}    v{i} = w{i}"]
    return lines


def _unit_setup(n_in: int, indent: str) -> list[str]:
    """``unit``: whether the rows take the vectorized loop (output stride 1, each operand's
    1 or 0), and the scratch rows of the operands broadcast along them (``_unit_rows``)."""
    unit = " and ".join(["to == 1"] + [f"(t{i} == 1 or t{i} == 0)" for i in range(n_in)])
    return ([f"{indent}unit = {unit}"]
            + [f"{indent}w{i} = np.empty(inner if t{i} == 0 else 0, a{i}.dtype)"
               for i in range(n_in)])


def _elementwise_source(fname: str, n_in: int, n_params: int) -> str:
    ins = [f"a{i}, o{i}, s{i}" for i in range(n_in)]
    params = [f"p{i}" for i in range(n_params)]
    args = ", ".join(["shape", "out, oo, so"] + ins + params)
    fast_call = ", ".join([f"v{i}[j]" for i in range(n_in)] + params)
    slow_call = ", ".join([f"a{i}[o{i} + j * t{i}]" for i in range(n_in)] + params)
    lines = [
        codegen.jit_line(),
        f"def kernel({args}):",
        "    nd = shape.shape[0]",
        "    inner = shape[nd - 1]",
        "    outer = 1",
        "    for d in range(nd - 1):",
        "        outer *= shape[d]",
        "    idx = np.zeros(nd, np.int64)",
        "    to = so[nd - 1]",
    ]
    lines += [f"    t{i} = s{i}[nd - 1]" for i in range(n_in)]
    # the contiguous loop indexes slices with a non-negative counter: indexing a buffer at
    # ``offset + j`` makes Numba emit a negative-index check that stops LLVM vectorizing (7x)
    lines += _unit_setup(n_in, "    ")
    lines += ["    for _ in range(outer):", "        if unit:"]
    lines += _unit_rows(n_in, "            ", "o")
    lines += [
        "            for j in range(inner):",
        f"                vo[j] = {fname}({fast_call})",
        "        else:",
        "            for j in range(inner):",
        f"                out[oo + j * to] = {fname}({slow_call})",
        "        d = nd - 2",
        "        while d >= 0:",
        "            idx[d] += 1",
        "            oo += so[d]",
    ]
    lines += [f"            o{i} += s{i}[d]" for i in range(n_in)]
    lines += [
        "            if idx[d] < shape[d]:",
        "                break",
        "            oo -= so[d] * shape[d]",
    ]
    lines += [f"            o{i} -= s{i}[d] * shape[d]" for i in range(n_in)]
    lines += ["            idx[d] = 0", "            d -= 1"]
    return "\n".join(lines)


def _rows_source(fname: str, n_in: int, n_params: int) -> str:
    """``rows``: ``kernel`` for two (coalesced) dims, its rows split over Numba's threads (a
    broadcast ``(m, n) + (n,)`` of a large size)."""
    ins = [f"a{i}, o{i}, s{i}" for i in range(n_in)]
    params = [f"p{i}" for i in range(n_params)]
    args = ", ".join(["shape", "out, oo, so"] + ins + params)
    lines = [
        codegen.jit_line(", parallel=True"),
        f"def rows({args}):",
        "    inner = shape[1]",
        "    to = so[1]",
    ]
    lines += [f"    t{i} = s{i}[1]" for i in range(n_in)]
    # (each thread's rows in a block of their own, so that its scratch rows are its own)
    lines += [
        "    unit = " + " and ".join(["to == 1"] + [f"(t{i} == 1 or t{i} == 0)"
                                                    for i in range(n_in)]),
        "    n_blocks = min(shape[0], 64)",
        "    for blk in prange(n_blocks):",
    ]
    lines += [f"        w{i} = np.empty(inner if t{i} == 0 else 0, a{i}.dtype)"
              for i in range(n_in)]
    lines += ["        for r in range(blk * shape[0] // n_blocks, (blk + 1) * shape[0] // n_blocks):",
              "            bo = oo + r * so[0]"]
    lines += [f"            b{i} = o{i} + r * s{i}[0]" for i in range(n_in)]
    lines += ["            if unit:"]
    lines += _unit_rows(n_in, "                ", "b")
    fast_call = ", ".join([f"v{i}[j]" for i in range(n_in)] + params)
    slow_call = ", ".join([f"a{i}[b{i} + j * t{i}]" for i in range(n_in)] + params)
    lines += [
        "                for j in range(inner):",
        f"                    vo[j] = {fname}({fast_call})",
        "            else:",
        "                for j in range(inner):",
        f"                    out[bo + j * to] = {fname}({slow_call})",
    ]
    return "\n".join(lines)


def _flat_sources(fname: str, n_in: int, n_params: int) -> list[str]:
    """Loops over contiguous operands of one size: ``flat_<pattern>`` and ``par_<pattern>``
    over 1-d operands, ``flatn_<pattern>`` (serial) over operands of one shape of another rank.

    A pattern has one letter per input: ``a`` an array read at ``j``, ``s`` one broadcast
    value passed as a scalar (a gradient expanded from a sum, ``x * 2``); a first letter ``i``
    is the output itself, read and written in place. Numba compiles each function on its
    first call only, so unused patterns cost nothing.
    """
    params = [f"p{i}" for i in range(n_params)]
    out = []
    patterns = []
    for k in range(2**n_in):
        pattern = "".join("s" if k >> i & 1 else "a" for i in range(n_in))
        args = ["out"] + [f"a{i}" for i in range(n_in)] + params
        call = [f"a{i}[j]" if c == "a" else f"a{i}" for i, c in enumerate(pattern)] + params
        arrays = [f"a{i}" for i, c in enumerate(pattern) if c == "a"]
        variants = [(pattern, args, call, arrays)]
        if pattern[0] == "a":
            # the in-place loop (``x.mul_(2)``, an optimizer's step): the output is operand 0,
            # which it reads as ``out`` (an output that is also an input would keep LLVM's
            # overlap check from taking the vectorized loop: 1.5x slower)
            variants.append(("i" + pattern[1:], ["out"] + args[2:], ["out[j]"] + call[1:],
                             arrays[1:]))
        for name, args, call, arrays in variants:
            patterns.append(name)
            for prefix, loop, extra in (("flat", "range", ""),
                                        ("par", "prange", ", parallel=True")):
                out.append(
                    f"{codegen.jit_line(extra)}\ndef {prefix}_{name}({', '.join(args)}):\n"
                    f"    for j in {loop}(out.shape[0]):\n"
                    f"        out[j] = {fname}({', '.join(call)})"
                )
            # ``flatn``: the same on C-contiguous operands of one shape of any other rank,
            # each read through a 1-d view Numba makes without a copy (12 ns an operand,
            # where NumPy's ``ravel`` costs 50 to the caller; in a 1-d loop the views would
            # cost those 12 ns for nothing)
            views = "".join(f"    {a} = {a}_.reshape({a}_.size)\n" for a in ["out"] + arrays)
            nargs = [f"{a}_" if a == "out" or a in arrays else a for a in args]
            out.append(
                f"{codegen.jit_line()}\ndef flatn_{name}({', '.join(nargs)}):\n{views}"
                f"    for j in range(out.shape[0]):\n"
                f"        out[j] = {fname}({', '.join(call)})"
            )
    if n_in == 2:
        # (serial only: a large broadcast with threads takes ``rows``)
        out += _broadcast_sources(fname, params)
    for prefix in ("flat", "par", "flatn"):
        table = ", ".join(f"{p!r}: {prefix}_{p}" for p in patterns)
        if prefix == "flat" and n_in == 2:
            table += ", " + ", ".join(f"{p!r}: flat_{p}" for p in BROADCASTS)
        out.append(f"{prefix.upper()} = {{{table}}}")
    return out


# The loops of a binary op whose operands broadcast in one of two ways, by a letter per
# operand (``a``: of the result's shape): ``r`` a row repeated over the leading dims
# (``x + b`` with a bias b of shape (n,) or (1, n)), ``c`` a column, one value per row,
# repeated along the trailing dims (``x - x.mean(1, keepdim=True)``, shape (m, 1)); a first
# letter ``i``: the output is operand 0, read in place (as the flat loops' ``i``); ``cr`` /
# ``rc``: a column and a row of one result that neither has the shape of (an outer
# difference ``x[:, None] - y``, a one-hot ``labels[:, None] == arange(n)``, a length mask).
BROADCASTS = ("ar", "ra", "ac", "ca", "ir", "ic", "cr", "rc")


def _broadcast_sources(fname: str, params: list) -> list[str]:
    """``flat_ar`` .. ``flat_ca`` (``BROADCASTS``) over 1-d operands: the result's rows, each
    a slice with a unit stride, so that its loop vectorizes (``_elementwise_source``)."""
    tail = "".join(", " + p for p in params)
    sources = []
    for pattern in BROADCASTS:
        if "a" not in pattern and "i" not in pattern:
            sources.append(_outer_source(fname, pattern, tail))
            continue
        inplace = pattern[0] == "i"
        full = 0 if inplace else pattern.index("a")
        other = 1 - full
        if "r" in pattern:
            size, row_value = f"a{other}.shape[0]", f"a{other}[j]"
        else:
            size, row_value = f"out.shape[0] // max(a{other}.shape[0], 1)", f"a{other}[r]"
        call = ["", ""]
        call[full], call[other] = ("vo[j]" if inplace else "v[j]"), row_value
        args = "out, a1" if inplace else "out, a0, a1"
        sources.append(
            f"{codegen.jit_line()}\ndef flat_{pattern}({args}{tail}):\n"
            f"    n = {size}\n"
            f"    for r in range(out.shape[0] // max(n, 1)):\n"
            f"        vo = out[r * n:r * n + n]\n"
            + ("" if inplace else f"        v = a{full}[r * n:r * n + n]\n") +
            f"        for j in range(n):\n"
            f"            vo[j] = {fname}({call[0]}, {call[1]}{tail})")
    return sources


def _outer_source(fname: str, pattern: str, tail: str) -> str:
    """``flat_cr`` / ``flat_rc``: row r of the result is the op of the column's value r and
    the row, element by element."""
    row = pattern.index("r")
    call = ["", ""]
    call[row], call[1 - row] = "w[j]", "v"
    return (f"{codegen.jit_line()}\ndef flat_{pattern}(out, a0, a1{tail}):\n"
            f"    w = a{row}\n"
            f"    n = w.shape[0]\n"
            f"    for r in range(out.shape[0] // max(n, 1)):\n"
            f"        vo = out[r * n:r * n + n]\n"
            f"        v = a{1 - row}[r]\n"
            f"        for j in range(n):\n"
            f"            vo[j] = {fname}({call[0]}, {call[1]}{tail})")


def scalar_functions_source(functions: list[tuple[str, object]]) -> list[str]:
    """Jitted source of scalar functions (name, python fn or generated source), inlined into
    their callers by Numba: a rule calling an op whose body is long (erf) would otherwise stay
    a call in the loop, which then does not vectorize."""
    return [codegen.jit_line(", inline='always'") + "\n"
            + codegen.function_source(fn, name, pow_calls=True) for name, fn in functions]


ENTRY = "_entry"  # the name of the scalar function a module's loops call


def scalar_module_body(functions: list[tuple[str, object]], entry: str, n_in: int, n_params: int):
    """Source for helper scalar functions (name, python fn) plus the loop kernels over ``entry``:
    ``kernel`` (any shape and strides) and the contiguous ``flat_*`` / ``par_*`` ones.

    The entry function is written as ``_entry`` with its arguments renamed and no docstring,
    so ops and rules that compute the same formula write the same module, which is then
    imported and compiled once (``mul``, its rules ``grad * y`` and ``grad * x``, and exp's
    ``grad * result`` are one module)."""
    helpers = [(name, fn) for name, fn in functions if name != entry]
    fn = next(fn for name, fn in functions if name == entry)
    parts = ["from numba import prange"] + scalar_functions_source(helpers)
    # (inline='always' in each loop, as the helpers are: LLVM leaves a large entry (gelu_backward,
    # sigmoid, mish: with fastmath.py's arithmetic pasted in) as a call per element, which
    # does not vectorize: 16 against 1.2 ns an element for gelu_backward, 4.7 against 0.7 for
    # sigmoid; compiling costs no more)
    parts.append(codegen.jit_line(", inline='always'") + "\n"
                 + codegen.function_source(fn, ENTRY, pow_calls=True, canonical=True))
    parts.append(_elementwise_source(ENTRY, n_in, n_params))
    parts.append(_rows_source(ENTRY, n_in, n_params))
    parts += _flat_sources(ENTRY, n_in, n_params)
    return "\n\n\n".join(parts)


def with_fastmath(body: str, np_dtype) -> str:
    """``body`` with the libm calls of ``fastmath.ROUTES`` (``math.exp``, ``math.tanh``, ...)
    and ``**`` routed to fastmath.py's vectorizable arithmetic, whose functions (and those
    they call) are pasted in before it."""
    routes = fastmath.ROUTES.get(np.dtype(np_dtype).name, {})

    def routed(src):
        for call, fn in routes.items():
            src = src.replace(call, fn.__name__ + "(")
        return src

    body = routed(body)
    if any(name + "(" in body for name in fastmath.SMALL_TWINS):
        body = codegen.split_ranges(body, fastmath.SMALL_TWINS, "all_below")
    sources = {}

    def need(fn):  # fn's source, after those of the helpers it calls
        if fn.__name__ in sources:
            return
        src = routed(codegen.function_source(fn, type_literals=getattr(fn, "type_literals", True)))
        sources[fn.__name__] = None
        for other in fastmath.HELPERS:
            if other is not fn and other.__name__ + "(" in src:
                need(other)
        sources[fn.__name__] = src

    for fn in fastmath.HELPERS:
        if fn.__name__ + "(" in body:
            need(fn)
    if "_pow(" in body:
        sources["_pow"] = codegen.function_source(fastmath.pow_, "_pow")
    if not sources:
        return body
    jit = codegen.jit_line(", inline='always'") + "\n"
    return "\n\n\n".join([_FASTMATH_HEAD] + [jit + src for src in sources.values()] + [body])


# (the checksums of the table and of all_below's source are part of the source, so the kernel
# cache sees a change to them)
_FASTMATH_HEAD = ("from numbagrad.backend.fastmath import float32_from_bits, float64_from_bits, "
                  "float64_bits, float32_bits, TWO_OVER_PI, all_below  # TWO_OVER_PI crc32 "
                  f"{zlib.crc32(fastmath.TWO_OVER_PI.tobytes())}, all_below crc32 "
                  f"{zlib.crc32(inspect.getsource(fastmath._all_below).encode())}")


def fastmath_pasted(src: str) -> bool:
    """Whether ``with_fastmath`` pasted fastmath.py's functions into kernel source ``src``."""
    return _FASTMATH_HEAD in src


_kernels: dict[tuple, object] = {}


# Above these sizes the ``par_*`` kernels split the loop over Numba's threads. Back to back,
# the break-even on 2 cores is ~30k elements for arithmetic, ~1k for exp/sin/tanh (NUMBA_NOTES
# 3); between a step's calls the idle threads sleep (GOMP_SPINCOUNT: numbagrad/__init__.py)
# and waking them costs 20-40 us on the project's VM, which arithmetic repays from somewhat
# above 1e5 elements (F.mse_loss at 1e5: 140 us on two threads, 104 on one; a CNN step's
# 2e5-element activations still gain: with 2**19 here W8 took 6.9 ms on two threads, not 5.1).
# A loop that calls libm (or fastmath.py's vectorized functions) costs 0.3 (exp, sigmoid) to
# 1.2 ns (tanh) an element, so threads repay the wake-up from a few 1e4 elements
# (docs/PERFORMANCE.md, "Threads for transcendental ops").
PARALLEL_MIN = 1 << 17
PARALLEL_MIN_HEAVY = 1 << 15

# libm functions about as cheap as arithmetic (math.sqrt is one instruction): a loop calling
# only these takes threads at arithmetic's size
_CHEAP_MATH = frozenset({"sqrt", "fabs", "floor", "ceil", "trunc", "copysign", "isnan", "isinf",
                         "isfinite"})
_MATH_CALL = re.compile(r"\bmath\.(\w+)\(")


def heavy_source(src: str) -> bool:
    """Whether kernel source ``src`` calls a transcendental function (a libm call other than
    ``_CHEAP_MATH``'s, a power, or fastmath.py's pasted functions)."""
    return (fastmath_pasted(src) or "_pow(" in src
            or any(f not in _CHEAP_MATH for f in _MATH_CALL.findall(src)))


def get_elementwise_kernel(key: tuple, np_dtype, build_body):
    """The kernel module for ``key`` (op, role, dtype); ``build_body()`` gives its source.

    The module holds ``kernel`` (any layout) and the contiguous ``flat_*`` / ``par_*`` loops;
    ``PARALLEL_MIN`` says from which size the parallel ones pay.
    """
    def body():
        src = with_fastmath(build_body(), np_dtype)
        if fastmath_pasted(src):
            # fused multiply-add for fastmath.py's polynomials (inlined into these loops, so the
            # loops carry the flag): about 30% faster; only rounding changes,
            # NaN and inf behave as without it (NUMBA_NOTES 4: never fastmath=True)
            src = "\n".join(
                line.replace("fastmath={", "fastmath={'contract', ") if "fastmath={" in line
                else line.replace("nogil=True", "nogil=True, fastmath={'contract'}")
                for line in src.split("\n")
            )
        heavy = heavy_source(src)
        return f"PARALLEL_MIN = {PARALLEL_MIN_HEAVY if heavy else PARALLEL_MIN}\n\n\n" + src

    mod = codegen.cached_kernel(_kernels, key, np_dtype, body, attr=None)
    if not hasattr(mod, "ENTRIES"):
        mod.ENTRIES = {}  # compiled entry points of the flat loops (see ``flat_entry``)
        mod.SEEN = {}  # (key, rank) -> calls on operands of that rank before ENTRIES has it
    return mod


# ---------------------------------------------------------------- operand layout


def fused_module_body(functions, patterns: str, n_out: int, n_params: int, lines,
                      total: bool = False, n_col: int = 0, tot: bool = False) -> str:
    """Scalar ``functions`` plus loops that run ``lines`` once per element.

    The loops take ``out0..`` (contiguous, one size), then one input per letter of
    ``patterns``, then ``p0..``. An input is read as ``v<k>``: ``a``, an array of the loop's
    size read at ``j``; ``s``, one value passed as a scalar; ``r``, a row of ``C`` values
    broadcast over every row (``(m, n) + (n,)``). ``lines`` compute ``o0..``.

    ``flat`` / ``par`` (serial / over Numba's threads) store ``o<k>`` into ``out<k>``; with an
    ``r`` input they take ``C`` after the outputs and go over rows of ``C``. With ``total``,
    ``total(out, part, n, C, rows, ...)`` adds ``o0`` over ``n`` elements instead (no outputs):
    blocks of 16,384 elements (of ``rows`` rows of ``C`` with an ``r`` input), one sum each into
    ``part``, then those in order into ``out[0]``; the blocks are the same on any number of
    threads, so is the result.

    With ``n_col``, ``o<n_out>..`` are also summed over rows, into ``col<k>`` (``C`` values each),
    the loops then taking ``(out.., col.., part.., C, m, rows, inputs..)``: blocks of ``rows``
    rows each add into their own row of ``part<k>``, and those rows are added in order at the
    end, so the sums too are the same on any number of threads. (A broadcast input's gradient
    so never exists at the full shape.) With ``tot``, ``o<n_out + n_col>`` is also added up over
    everything: one sum per block into ``ptot``, those in order into ``tot[0]``.
    """
    by_rows = "r" in patterns
    ins = [f"a{k}" for k in range(len(patterns))] + [f"p{k}" for k in range(n_params)]

    def reads(pad, at):
        # an ``a`` input is sliced first: a slice indexed from 0 lets LLVM vectorize
        return [pad + (f"v{k} = w{k}[{at}]" if c == "a" else
                       f"v{k} = a{k}[c]" if c == "r" else f"v{k} = a{k}")
                for k, c in enumerate(patterns)]

    def slices(pad, lo, hi):
        return [pad + f"w{k} = a{k}[{lo}:{hi}]" for k, c in enumerate(patterns) if c == "a"]

    parts = ["from numba import prange"] + scalar_functions_source(functions)
    if total:
        # ``total`` over its blocks on Numba's threads, ``total_flat`` in turn (lazy.total
        # takes it below the module's PARALLEL_MIN): the same blocks, so the same sum
        args = ", ".join(["out", "part", "n", "C", "rows"] + ins)
        for name, rng, extra in (("total", "prange", ", parallel=True"),
                                 ("total_flat", "range", "")):
            flags = ", fastmath={'reassoc'}" + extra
            head = f"{codegen.jit_line(flags)}\ndef {name}({args}):\n"
            if by_rows:
                loop = (["    m = n // C", f"    for b in {rng}(part.shape[0]):",
                         "        acc = _c(0)",
                         "        for r in range(b * rows, min((b + 1) * rows, m)):",
                         "            lo = r * C"]
                        + slices("            ", "lo", "lo + C")
                        + ["            for c in range(C):"] + reads("                ", "c")
                        + ["                " + line for line in lines]
                        + ["                acc += o0"])
            else:
                loop = ([f"    for b in {rng}(part.shape[0]):", "        lo = b * 16384",
                         "        hi = min(lo + 16384, n)", "        acc = _c(0)"]
                        + slices("        ", "lo", "hi")
                        + ["        for j in range(hi - lo):"] + reads("            ", "j")
                        + ["            " + line for line in lines]
                        + ["            acc += o0"])
            loop += ["        part[b] = acc", "    acc = _c(0)",
                     "    for b in range(part.shape[0]):", "        acc += part[b]",
                     "    out[0] = acc"]
            parts.append(head + "\n".join(loop))
        return "\n\n\n".join(parts)
    outs = [f"out{k}" for k in range(n_out)]
    if n_col or tot:
        cols = [f"col{k}" for k in range(n_col)]
        parts_ = [f"part{k}" for k in range(n_col)] + (["tot", "ptot"] if tot else [])
        blocks = "part0.shape[0]" if n_col else "ptot.shape[0]"
        # (reassoc lets the total's additions run in vector lanes, in an order fixed by the
        # code, the same in every block)
        flags = ", fastmath={'reassoc'}" if tot else ""
        for name, rng, extra in (("flat", "range", ""), ("par", "prange", ", parallel=True")):
            args = ", ".join(outs + cols + parts_ + ["C", "m", "rows"] + ins)
            loop = ([f"{codegen.jit_line(flags + extra)}\ndef {name}({args}):",
                     f"    for b in {rng}({blocks}):"]
                    + [f"        sp{k} = part{k}[b]" for k in range(n_col)]
                    + ["        for c in range(C):"]
                    + [f"            sp{k}[c] = _c(0)" for k in range(n_col)]
                    + (["            pass", "        acc = _c(0)"] if tot else [])
                    + ["        for r in range(b * rows, min((b + 1) * rows, m)):",
                       "            lo = r * C"]
                    + slices("            ", "lo", "lo + C")
                    + [f"            q{k} = out{k}[lo:lo + C]" for k in range(n_out)]
                    + ["            for c in range(C):"] + reads("                ", "c")
                    + ["                " + line for line in lines]
                    + [f"                q{k}[c] = o{k}" for k in range(n_out)]
                    + [f"                sp{k}[c] += o{n_out + k}" for k in range(n_col)]
                    + ([f"                acc += o{n_out + n_col}", "        ptot[b] = acc"]
                       if tot else [])
                    )
            if n_col:  # (row by row in order: the same additions as per column, vectorized)
                loop += ([f"    col{k}[:] = part{k}[0]" for k in range(n_col)]
                         + ["    for b in range(1, part0.shape[0]):"]
                         + [f"        row{k} = part{k}[b]" for k in range(n_col)]
                         + ["        for c in range(C):"]
                         + [f"            col{k}[c] += row{k}[c]" for k in range(n_col)])
            if tot:
                loop += ["    whole = _c(0)", "    for b in range(ptot.shape[0]):",
                         "        whole += ptot[b]", "    tot[0] = whole"]
            parts.append("\n".join(loop))
        return "\n\n\n".join(parts)
    for name, rng, extra in (("flat", "range", ""), ("par", "prange", ", parallel=True")):
        args = ", ".join(outs + (["C"] if by_rows else []) + ins)
        head = f"{codegen.jit_line(extra)}\ndef {name}({args}):\n"
        if by_rows:
            loop = ([f"    for r in {rng}(out0.shape[0] // C):", "        lo = r * C"]
                    + slices("        ", "lo", "lo + C")
                    + [f"        q{k} = out{k}[lo:lo + C]" for k in range(n_out)]
                    + ["        for c in range(C):"] + reads("            ", "c")
                    + ["            " + line for line in lines]
                    + [f"            q{k}[c] = o{k}" for k in range(n_out)])
        else:
            loop = ([f"    for j in {rng}(out0.shape[0]):"]
                    + [f"        v{k} = a{k}[j]" if c == "a" else f"        v{k} = a{k}"
                       for k, c in enumerate(patterns)]
                    + ["        " + line for line in lines]
                    + [f"        out{k}[j] = o{k}" for k in range(n_out)])
        parts.append(head + "\n".join(loop))
    return "\n\n\n".join(parts)


def broadcast_shapes(*shapes) -> tuple:
    """NumPy/PyTorch broadcasting with PyTorch's error message."""
    if len(shapes) == 2:  # (most calls: two operands, one of them often of fewer dims)
        a, b = shapes
        if len(a) < len(b):
            a, b = b, a
        lead = len(a) - len(b)
        if len(b) == 0 or a[lead:] == b:
            return tuple(a)
        out = list(a)
        for i, n in enumerate(b):
            cur = out[lead + i]
            if n != cur and n != 1:
                if cur != 1:
                    break  # (a mismatch: the loop below names it as PyTorch does)
                out[lead + i] = n
        else:
            return tuple(out)
    elif shapes:
        # (where, addcmul, lerp: operands of the first one's shape, or 0-d)
        first = shapes[0]
        for s in shapes:
            if s != first and s:
                break
        else:
            return tuple(first)
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        off = ndim - len(s)
        # (from the last dim: PyTorch names the first mismatch from the right)
        for i in range(len(s) - 1, -1, -1):
            n = s[i]
            cur = out[off + i]
            if n == cur or n == 1:
                continue
            if cur == 1:
                out[off + i] = n
                continue
            # PyTorch names the first mismatching pair (a, b) by position from the right
            raise RuntimeError(
                f"The size of tensor a ({cur}) must match the size of tensor b ({n}) at "
                f"non-singleton dimension {off + i}"
            )
    return tuple(out)


def summed_dims(have: tuple, shape: tuple) -> list:
    """The dims of a gradient of shape ``have`` that sum it back to ``shape``, the shape of an
    operand broadcast to ``have``: the leading dims ``have`` adds, and those where ``shape``
    has a 1 that broadcast."""
    lead = len(have) - len(shape)
    dims = list(range(lead))
    for i, n in enumerate(shape):
        if n == 1 and have[lead + i] != 1:
            dims.append(lead + i)
    return dims


def sum_to_array(g: np.ndarray, shape: tuple) -> np.ndarray:
    """``g``, the gradient of an operand of ``shape`` broadcast to ``g.shape``, summed back to
    ``shape`` (a new array) by the kernel ``run_reduce`` picks for a sum (so the same values as
    ``autograd.graph.sum_to`` on a Tensor). A small float gradient whose summed dims lead runs
    that kernel through its compiled entry point: ``run_reduce``'s general steps cost 1.7 us,
    most of a small bias's gradient."""
    if not g.size:  # (a sum over no values: zeros, an empty array if ``shape`` is empty)
        return np.zeros(shape, g.dtype)
    key = (g.shape, shape)
    dims = _summed.get(key)
    if dims is None:
        dims = _summed[key] = tuple(summed_dims(g.shape, shape))
    k = len(dims)
    dt = g.dtype
    if (dims[-1] == k - 1 and g.size < PARALLEL_MIN and g.flags.c_contiguous
            and (dt is _F32 or dt is _F64)):
        if k == g.ndim:  # every dim: one row (run_reduce's sum of everything)
            out = np.empty(1, dt)
            whole_entry(kernels_reduce.sum_rows, dt)(g.reshape(1, g.size), out)
        else:  # leading dims: column sums
            cols = g.reshape(-1, math.prod(g.shape[k:]))
            out = np.empty(cols.shape[1], dt)
            part = np.empty(cols.shape[1], dt)
            kernel_entry(kernels_reduce.sum_cols, dt, cols, out, part)
        return out.reshape(shape)
    return run_reduce(kernels_reduce.sum_rows, g, dims, dt).reshape(shape)


_summed: dict[tuple, tuple] = {}  # (gradient's shape, operand's) -> summed_dims, for sum_to_array
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def _flat_operand(a: np.ndarray, shape: tuple):
    """(flat buffer, element strides broadcast to ``shape``) of an array without copying."""
    item = a.itemsize
    nd = len(shape)
    strides = [0] * nd
    off = nd - a.ndim
    for i in range(a.ndim):
        if a.shape[i] != 1:
            strides[off + i] = a.strides[i] // item
    if a.flags.c_contiguous:
        flat = a.reshape(-1)
    else:
        span = 1 + sum((n - 1) * s for n, s in zip(a.shape, a.strides)) // item
        flat = np.lib.stride_tricks.as_strided(a, (span,), (item,))
    if not flat.flags.writeable:
        # readonly arrays are a separate Numba type; one copy avoids a second compile
        return _flat_operand(np.array(a), shape)
    return flat, strides


def result_strides(arrays, shape):
    """The element strides PyTorch gives a new elementwise result of ``shape`` computed from
    ``arrays`` (``layout.iterator_strides``); None for C-contiguous ones. Operands that are
    C-contiguous, with C strides in their dims of size 1 too, always give those: they are
    told from their flags and shapes alone."""
    for a in arrays:
        if not a.flags.c_contiguous or 1 in a.shape and not _c_strided(a):
            break
    else:
        return None
    if not math.prod(shape):
        return None
    if 1 not in shape and all([_c_ordered(a) for a in arrays]):
        return None
    return layout.iterator_strides(
        shape, [(a.shape, tuple([st // a.itemsize for st in a.strides])) for a in arrays])


def _c_ordered(a) -> bool:
    """Whether ``a``'s strides, those of its broadcast dims (stride 0 or size 1) left out,
    fall from its first dim to its last, as C order's do: then PyTorch's layout rule keeps C
    order for a result of a shape without dims of size 1 (a sum's expanded gradient plus a
    mean's, a row and a column), without sorting the dims (``layout.iterator_strides``)."""
    prev = None
    for n, st in zip(a.shape, a.strides):
        if n != 1 and st != 0:
            if st < 0 or prev is not None and st >= prev:
                return False
            prev = st
    return True


def _c_strided(a) -> bool:
    """Whether ``a``'s strides are exactly C order's, those of its dims of size 1 included (a
    transposed or unsqueezed array may be C-contiguous with others)."""
    shape, strides, step = a.shape, a.strides, a.itemsize
    if len(shape) == 2:  # (the common case, a column (n, 1), without the loop)
        return strides[1] == step and strides[0] == step * shape[1]
    for k in range(len(shape) - 1, -1, -1):
        if strides[k] != step:
            return False
        step *= shape[k]
    return True


def resized(a, shape):
    """``a``'s memory from its first element on, laid out C-contiguous as ``shape``: what
    PyTorch's ``resize_`` makes of a tensor over its storage (the memory of the array ``a``
    views, as far as it reaches). Where ``shape`` needs more than that, new memory holding
    those values first (the old memory's other views keep the old)."""
    n = math.prod(shape)
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    if root.flags.c_contiguous:
        start = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        memory = root.reshape(-1).view(np.uint8)[start:]
        memory = memory[:memory.size - memory.size % a.itemsize].view(a.dtype)
    else:
        memory = a.reshape(-1)  # (its own elements, in order)
    if n <= memory.size:
        return memory[:n].reshape(shape)
    out = np.empty(n, a.dtype)
    out[:memory.size] = memory
    return out.reshape(shape)


def empty_strided(shape, strides, dtype):
    """A new array of ``shape`` with element ``strides`` (``empty``'s memory, as much as the
    layout reaches)."""
    dtype = np.dtype(dtype)
    return as_strided(empty(layout.storage_size(shape, strides), dtype), shape,
                      tuple([st * dtype.itemsize for st in strides]))


def _coalesce(shape, stride_lists):
    """Drop size-1 dims and merge dims that are contiguous for every operand."""
    dims = [d for d in range(len(shape)) if shape[d] != 1]
    if not dims:
        return [1], [[0] for _ in stride_lists]
    new_shape = [shape[dims[0]]]
    new_strides = [[s[dims[0]]] for s in stride_lists]
    for d in dims[1:]:
        n = shape[d]
        if all(ns[-1] == s[d] * n for ns, s in zip(new_strides, stride_lists)):
            new_shape[-1] *= n
            for ns, s in zip(new_strides, stride_lists):
                ns[-1] = s[d]
        else:
            new_shape.append(n)
            for ns, s in zip(new_strides, stride_lists):
                ns.append(s[d])
    return new_shape, new_strides


_ALL_ARRAYS = tuple("a" * n for n in range(9))  # (a rule may read up to eight arrays)


def _flat_launch(mod, arrays, shape, out, params):
    """Run a ``flat_*`` / ``par_*`` loop when every operand is either C-contiguous with the
    output's shape or a single broadcast value; False when some operand is neither."""
    ops = []
    pattern = ""
    for a in arrays:
        if a.shape == shape and a.flags.carray:  # C-contiguous, aligned and writeable
            if a is out and not ops:  # (written in place: the loop that reads ``out``)
                pattern = "i"
                continue
            ops.append(a if a.ndim == 1 else a.ravel())
            pattern += "a"
        elif a.size == 1 or not any(a.strides):
            ops.append(a[(0,) * a.ndim])  # a NumPy scalar of the operand's dtype
            pattern += "s"
        else:
            return False
    loops_for(mod, out.size)[pattern](out if out.ndim == 1 else out.ravel(), *ops, *params)
    return True


def _first_num_threads():
    """``numba.get_num_threads()`` costs about 1 us (it makes sure the pool is up, then asks
    through ctypes); once the pool is up, ``num_threads`` asks the ctypes function itself
    (0.17 us), or keeps Numba's public function if that private one is not there."""
    global num_threads
    n = numba.get_num_threads()
    from numba.np.ufunc import parallel

    direct = getattr(parallel, "_get_num_threads", None)
    num_threads = direct if direct is not None and direct() == n else numba.get_num_threads
    return n


num_threads = _first_num_threads  # the thread count numba.set_num_threads last set


def _row_or_column(sa: tuple, sb: tuple, shape: tuple):
    """The ``BROADCASTS`` loop for C-contiguous operands of shapes ``sa`` and ``sb`` whose
    result has ``shape``: ``"ar"`` / ``"ra"`` when one has the result's shape and the other is
    a row of it (``x + b`` with b of shape (n,) or (1, n)), ``"ac"`` / ``"ca"`` a column (one
    value per row: ``x - x.mean(1, keepdim=True)``); None for any other broadcast."""
    if sa == shape:
        first, part = True, sb
    elif sb == shape:
        first, part = False, sa
    else:
        return _outer(sa, sb, shape)
    nd = len(shape)
    padded = (1,) * (nd - len(part)) + part
    lead = 0  # the part's leading dims of size 1: a row
    while lead < nd and padded[lead] == 1:
        lead += 1
    if padded[lead:] == shape[lead:]:
        kind = "r"
    else:
        trail = nd  # its trailing dims of size 1: a column
        while trail and padded[trail - 1] == 1:
            trail -= 1
        if padded[:trail] != shape[:trail]:
            return None
        kind = "c"
    return "a" + kind if first else kind + "a"


def _outer(sa: tuple, sb: tuple, shape: tuple):
    """``"cr"`` / ``"rc"`` when, of two operands neither of the result's shape, one is a
    column (one value per row: of the result's leading dims, 1 in the others) and the other a
    row of those same trailing dims (1 in the leading ones, of the result's in the others);
    else None."""
    nd = len(shape)
    pa = (1,) * (nd - len(sa)) + sa
    pb = (1,) * (nd - len(sb)) + sb
    for k in range(1, nd):  # (the split: leading dims 0..k-1, trailing k..)
        lead, trail = shape[:k], shape[k:]
        ones_lead, ones_trail = (1,) * k, (1,) * (nd - k)
        if pa[:k] == lead and pa[k:] == ones_trail and pb[:k] == ones_lead and pb[k:] == trail:
            return "cr"
        if pb[:k] == lead and pb[k:] == ones_trail and pa[:k] == ones_lead and pa[k:] == trail:
            return "rc"
    return None


_PATTERNS: dict = {}  # (shape, shape) -> broadcast_pattern's answer


def broadcast_pattern(sa: tuple, sb: tuple):
    """(the broadcast shape of ``sa`` and ``sb``, their ``_row_or_column`` loop or None),
    kept per pair of shapes (a step makes the same broadcasts again: working them out cost
    1.5 us of a 5 us ``x + b``); PyTorch's error when they do not broadcast."""
    key = (sa, sb)
    found = _PATTERNS.get(key)
    if found is None:
        shape = broadcast_shapes(sa, sb)
        found = remember(_PATTERNS, key, (shape, _row_or_column(sa, sb, shape)))
    return found


def remember(cache: dict, key, value):
    """``cache[key] = value``, the cache emptied first once it holds 4096 entries (a bound
    on what a program of ever new shapes keeps); returns ``value``."""
    if len(cache) >= 4096:
        cache.clear()
    cache[key] = value
    return value


def loops_for(mod, n):
    """The serial (``FLAT``) or parallel (``PAR``) loop table of ``mod`` for ``n`` elements."""
    # asked only when the size could use threads
    if n >= mod.PARALLEL_MIN and num_threads() > 1:
        return mod.PAR
    return mod.FLAT


def is_small_flat(arrays, dtype, par_min) -> bool:
    """Whether ``arrays`` can take ``launch_small``: 1-d, one shape, C-contiguous, writeable,
    aligned, of ``dtype``, under ``par_min`` elements."""
    a0 = arrays[0]
    if a0.ndim != 1 or a0.size >= par_min:
        return False
    shape = a0.shape
    for a in arrays:
        if a.shape != shape or not a.flags.carray:
            return False
        if a.dtype is not dtype and a.dtype != dtype:
            return False
    return True


def ranked(key) -> tuple:
    """The names ``mod.ENTRIES`` keeps loop ``key``'s entry points under, by rank: ``key``
    itself for rank 1, ``"key/2"`` for rank 2, ... (made once per key: a caller indexes the
    tuple by its arrays' rank, and a string's hash is kept, where a ``(key, rank)`` tuple was
    made and hashed on every call)."""
    names = _RANKED.get(key)
    if names is None:
        names = _RANKED[key] = tuple([key if nd == 1 else f"{key}/{nd}" for nd in range(65)])
    return names


_RANKED: dict = {}


def flat_entry(mod, key, out, values, dtype):
    """Run ``mod``'s serial flat loop for ``key`` on ``out`` and ``values``, and return the
    loop's compiled entry point, kept in ``mod.ENTRIES`` for the next calls under its name for
    ``out``'s rank (``ranked``).

    ``key`` has a letter per operand (``a`` a C-contiguous array of ``out``'s shape, ``s`` a
    number), then ``p`` per parameter. Arrays of a rank other than 1 run ``flatn``, compiled
    once per rank (about 0.15 s, then loaded from the disk cache), from their ``FLATN_AFTER``-th
    call on: until then they run the 1-d loop on ``ravel`` views (50 ns each for the caller,
    three or four a small op and its gradient), and None is returned. So a loop compiles its
    ranks for code that calls it again and again (a training step), not for each shape a
    program or a test suite meets once (the suite's cold run took 2.5 minutes more).

    Numba's dispatcher spends about 0.2 us per call finding the compiled function from the
    argument types; a caller that fixes those types by its own checks (each array of the
    module's dtype, ``out`` of the output dtype) calls the entry point directly.
    Numbers are typed as ``dtype`` for the first call; the entry point converts the Python
    numbers of later calls to that type itself.
    """
    nd = out.ndim
    name = ranked(key)[nd]
    if nd != 1:
        seen = mod.SEEN.get(name, 0) + 1
        if seen < FLATN_AFTER:
            mod.SEEN[name] = seen
            flat = [v.ravel() if type(v) is np.ndarray else v for v in values]
            entry = mod.ENTRIES.get(key)
            if entry is None:
                flat_entry(mod, key, out.ravel(), flat, dtype)
            else:
                entry(out.ravel(), *flat)
            return None
    loop = (mod.FLAT if nd == 1 else mod.FLATN)[key.rstrip("p")]
    with np.errstate(over="ignore"):  # (a number past float32's range is inf, as PyTorch's)
        args = [out] + [v if type(v) is np.ndarray else dtype.type(v) for v in values]
    loop(*args)  # compiles or loads the loop on first use
    compiled = loop.overloads.get(tuple([loop.typeof_pyval(v) for v in args]))
    entry = getattr(compiled, "entry_point", None) or loop
    mod.ENTRIES[name] = entry
    return entry


FLATN_AFTER = 8  # the calls of a loop on operands of a rank other than 1 before its own compile


def launch_small(mod, arrays, out_dtype, params):
    """``mod``'s serial flat loop on small contiguous 1-d ``arrays`` of the module's dtype
    (see ``is_small_flat``) through its compiled entry point (``flat_entry``)."""
    out = np.empty(arrays[0].shape, out_dtype)
    key = _ALL_ARRAYS[len(arrays)] + "p" * len(params)
    entry = mod.ENTRIES.get(key)
    if entry is None:
        flat_entry(mod, key, out, [*arrays, *params], arrays[0].dtype)
    else:
        entry(out, *arrays, *params)
    return out


# Below this many elements a result with strided or broadcast operands is computed by the
# flat loop on dense copies of them (``_dense_launch``): the strided kernel's set-up in Python
# (flat buffers, coalesced dims, stride arrays, a dispatch on ten arguments) costs about 20 us
# a call, where a copy of a small operand costs well under one.
DENSE_BELOW = 1 << 14


def _dense_launch(mod, arrays, shape, out, params):
    """Run the flat loop into ``out`` (of ``shape``, new or written in place) on operands
    copied dense in ``out``'s memory order, when ``out`` is a permuted C-contiguous array (a
    transposed result); False otherwise. Each operand is read whole into its copy before the
    loop writes, so an operand that shares ``out``'s memory is read as it was."""
    nd = len(shape)
    if not out.flags.c_contiguous:
        # out's dims, slowest first (PyTorch's layout of a result of transposed operands)
        order = sorted(range(nd), key=lambda d: -out.strides[d])
        out = out.transpose(order)
        if not out.flags.c_contiguous:
            return False
    else:
        order = None
    dense_shape = out.shape
    ops = []
    for a in arrays:
        if a.size != 1:  # (one value: the loop takes it as a number)
            if order is not None:
                a = a.reshape((1,) * (nd - a.ndim) + a.shape).transpose(order)
            if a.shape != dense_shape or not a.flags.carray:
                dense = np.empty(dense_shape, a.dtype)
                dense[...] = a
                a = dense
        ops.append(a)
    return _flat_launch(mod, ops, dense_shape, out, params)


def _across_memory(arrays, out) -> bool:
    """Whether an operand of ``out``'s shape would be read across its memory order (``m +
    m.t()``, into a C-contiguous ``out``): the strided kernel then loads a cache line for
    every element it reads (3.4 ms for a 1000 x 1000 float32 sum, against 0.9 in PyTorch),
    where ``_dense_launch`` copies it once in blocks NumPy's copy chooses."""
    if not out.flags.c_contiguous or out.ndim < 2:
        return False
    for a in arrays:
        if (a.shape == out.shape and a.shape[-1] > 1 and a.shape[-2] > 1
                and abs(a.strides[-1]) > abs(a.strides[-2]) > 0):
            return True
    return False


_DENSE: dict = {}  # (shape, strides) -> dense_order's answer


def dense_order(a):
    """(order, its inverse, the shape in that order) when ``a`` is a permutation of a
    C-contiguous array (``a.transpose(order)`` is one) without dims of size 1; None otherwise.
    Kept per layout: sorting the dims costs 1.5 us."""
    key = (a.shape, a.strides)
    found = _DENSE.get(key, False)
    if found is False:
        found = None
        if 1 not in a.shape and a.ndim > 1:
            order = sorted(range(a.ndim), key=lambda d: -a.strides[d])
            if a.transpose(order).flags.c_contiguous:
                inverse = [0] * a.ndim
                for k, d in enumerate(order):
                    inverse[d] = k
                found = (tuple(order), tuple(inverse), tuple([a.shape[d] for d in order]))
        remember(_DENSE, key, found)
    return found


def _compact(a):
    """``a`` with each dim it repeats (a zero stride over more than one element) cut to one
    element, as a writeable C-contiguous array when that is what is left."""
    st = a.strides
    if 0 not in st:
        return a
    c = a[tuple([slice(0, 1) if s == 0 and n > 1 else slice(None)
                 for s, n in zip(st, a.shape)])]
    return c.copy() if c.flags.c_contiguous and not c.flags.writeable else c


def run_elementwise(mod, arrays, out_dtype, params=(), out=None):
    """Run the elementwise kernels of ``mod`` over broadcast ``arrays``; returns ``out`` (new
    if None). Contiguous operands take a flat loop, anything else the strided ``kernel``."""
    # the common case first: one shape, every operand C-contiguous (no scalars, no views), and
    # ``out`` new or of that shape and C-contiguous too
    a0 = arrays[0]
    shape = a0.shape
    same = True  # every operand of one shape
    for a in arrays:
        if a.shape != shape:
            same = False
            break
    if same and all([a.flags.carray for a in arrays]):
        if out is None or out.shape == shape and out.flags.carray:
            n = a0.size
            if n < mod.PARALLEL_MIN:  # small: no pool, no thread-count query (W3's path)
                if out is None:
                    out = np.empty(shape, out_dtype)
                loop = mod.FLAT[_ALL_ARRAYS[len(arrays)]]
            else:
                if out is None:
                    out = empty(shape, out_dtype)
                loop = loops_for(mod, n)[_ALL_ARRAYS[len(arrays)]]
            if a0.ndim == 1:
                loop(out, *arrays, *params)
            else:
                loop(out.ravel(), *[a.ravel() for a in arrays], *params)
            return out
    if out is None and not a0.flags.c_contiguous and a0.size < mod.PARALLEL_MIN:
        # a permuted dense operand (``x.permute(..)``, ``x.t()``), the others laid out alike or
        # of one value: the result takes its layout, as PyTorch's (TensorIterator's
        # fast_set_up), and the flat loop runs over their memory in order
        dense = dense_order(a0)
        if dense is not None:
            order, inverse, dense_shape = dense
            ops = []
            for a in arrays:
                if a.shape == shape and a.strides == a0.strides:
                    ops.append(a.transpose(order))
                elif a.size == 1 and a.ndim <= a0.ndim:  # (one that leaves the shape as it is)
                    ops.append(a)
                else:
                    break
            else:
                res = np.empty(dense_shape, out_dtype)
                if _flat_launch(mod, ops, dense_shape, res, params):
                    return res.transpose(inverse)
    if len(arrays) == 2 and out is None and (0 in a0.strides or 0 in arrays[1].strides):
        # an expanded operand (a dim sum's gradient spread over the dim) as the row or column
        # it repeats: the loops over rows below broadcast it, where the strided kernel reads
        # each element through its strides ((1000, 100) fwd + bwd of ``f(x).sum(1).mean()``)
        c0, c1 = _compact(a0), _compact(arrays[1])
        if broadcast_shapes(c0.shape, c1.shape) == broadcast_shapes(shape, arrays[1].shape):
            arrays, a0, shape = [c0, c1], c0, c0.shape
            same = shape == c1.shape
    if not same:
        if len(arrays) == 2:
            b = arrays[1]
            shape, pattern = broadcast_pattern(shape, b.shape)
            if (pattern is not None and a0.size != 1 and b.size != 1
                    and (out is None or out.shape == shape and out.flags.carray)
                    and a0.flags.carray and b.flags.carray):
                # a row or a column of the other (a bias, a mean kept over a dim): the loop
                # over the result's rows (a large one threads by ``rows``, below)
                if out is None:
                    out = np.empty(shape, out_dtype)
                if out.size < mod.PARALLEL_MIN or num_threads() == 1:
                    flat = out.ravel()
                    if pattern[0] == "a" and out is a0:  # (a bias added to a new product)
                        mod.FLAT["i" + pattern[1]](flat, b.ravel(), *params)
                    else:
                        mod.FLAT[pattern](flat, a0.ravel(), b.ravel(), *params)
                    return out
        else:
            shape = broadcast_shapes(*[a.shape for a in arrays])
    if out is None:
        strides = result_strides(arrays, shape)
        if strides is None:
            out = empty(shape, out_dtype)
            if out.size and _flat_launch(mod, arrays, shape, out, params):
                return out
        else:
            out = empty_strided(shape, strides, out_dtype)
    elif out.shape != shape:
        raise RuntimeError(
            f"output with shape {list(out.shape)} doesn't match the broadcast shape {list(shape)}"
        )
    elif out.size and out.flags.carray and _flat_launch(mod, arrays, shape, out, params):
        return out
    if out.size == 0:
        return out
    if ((out.size < DENSE_BELOW or _across_memory(arrays, out))
            and _dense_launch(mod, arrays, shape, out, params)):
        return out
    kernel = mod.kernel
    operands = [_flat_operand(out, shape)] + [_flat_operand(a, shape) for a in arrays]
    stride_lists = [s for _, s in operands]
    if not out.flags.c_contiguous:
        # dims in the order of out's memory, slowest first: operands laid out as ``out`` is
        # (a transposed input of a transposed result) then coalesce to one flat run
        order = sorted(range(len(shape)), key=lambda d: -stride_lists[0][d])
        shape = [shape[d] for d in order]
        stride_lists = [[st[d] for d in order] for st in stride_lists]
    cshape, cstrides = _coalesce(shape, stride_lists)
    args = [np.array(cshape, dtype=np.int64)]
    for (flat, _), st in zip(operands, cstrides):
        args += [flat, 0, np.array(st, dtype=np.int64)]
    if len(cshape) == 2 and out.size >= mod.PARALLEL_MIN and num_threads() > 1:
        kernel = mod.rows  # rows in parallel (a large broadcast)
    kernel(*args, *params)
    return out


# ---------------------------------------------------------------- reductions

_reduce_kernels: dict[tuple, object] = {}
# a whole sum from this size on runs in blocks (``sum_all_par``), on one thread too
WHOLE_BLOCKS_FROM = 4 * 16384


def get_reduce_kernel(fn, np_dtype):
    """Reduction or row kernel ``fn`` (a function of ``kernels_reduce``) compiled for one
    dtype, with the Numba options it declares (``kernels_reduce.jit_options``)."""
    key = (fn, np_dtype)
    k = _reduce_kernels.get(key)
    if k is None:
        name = fn.__name__
        extra = getattr(fn, "jit_options", "")
        inline = codegen.jit_line(", inline='always'") + "\n"
        body = "\n\n\n".join(
            [inline + codegen.function_source(h, type_literals=False) for h in module_helpers(fn)]
            + [codegen.jit_line(extra) + "\n" + codegen.function_source(fn, type_literals=False)])
        if "parallel=True" in extra:
            body = "from numba import prange\n\n\n" + body
        body = with_fastmath(body, np_dtype)
        mod = codegen.load_module(np.dtype(np_dtype).name, body)
        k = _reduce_kernels[key] = getattr(mod, name)
    return k


def whole_entry(kernel, np_dtype):
    """The compiled entry point of reduction kernel ``kernel`` (of ``kernels_reduce``) for one
    C-contiguous row of ``np_dtype`` (an array of shape (1, n)) into a 1-d output of that dtype,
    or None for a dtype other than float32 and float64. A caller that checked those types
    itself calls it without Numba's dispatch (0.2 us a call; see ``flat_entry``)."""
    key = (kernel, np_dtype)
    entry = _whole_entries.get(key)
    if entry is None and key not in _whole_entries:
        if np_dtype == np.float32 or np_dtype == np.float64:
            entry = _entry_of(kernel, np_dtype, (np.ones((1, 1), np_dtype),
                                                 np.empty(1, np_dtype)))
        _whole_entries[key] = entry
    return entry


def kernel_entry(kernel, np_dtype, *args):
    """Run reduction kernel ``kernel`` (of ``kernels_reduce``) compiled for ``np_dtype`` on
    ``args``, through its compiled entry point once it is known. The caller fixes the types:
    every call of one (kernel, dtype) passes arrays of the same dtypes, dims and layouts."""
    entry = _entries.get((kernel, np_dtype))
    if entry is None:
        _entries[kernel, np_dtype] = _entry_of(kernel, np_dtype, args)
    else:
        entry(*args)


def _entry_of(kernel, np_dtype, args):
    """``kernel`` for ``np_dtype`` run on ``args`` (which compiles or loads it), and its
    compiled entry point for their types."""
    kernel = get_reduce_kernel(kernel, np_dtype)
    kernel(*args)
    compiled = kernel.overloads.get(tuple([kernel.typeof_pyval(v) for v in args]))
    return getattr(compiled, "entry_point", None) or kernel


_whole_entries: dict[tuple, object] = {}
_entries: dict[tuple, object] = {}


def as_rows(a: np.ndarray, dims: tuple) -> tuple[np.ndarray, tuple]:
    """Move ``dims`` last and view as a C-contiguous (outer, inner) matrix.

    Returns the matrix and the shape of the kept dims.
    """
    keep = [d for d in range(a.ndim) if d not in dims]
    kept_shape = tuple(a.shape[d] for d in keep)
    inner = 1
    for d in dims:
        inner *= a.shape[d]
    outer = 1
    for n in kept_shape:
        outer *= n
    perm = keep + list(dims)
    moved = a.transpose(perm) if perm != list(range(a.ndim)) else a
    return ascontiguousarray(moved).reshape(outer, inner), kept_shape


def run_reduce(kernel, a: np.ndarray, dims: tuple, out_dtype, params=()):
    """Reduce ``a`` over ``dims`` with ``kernel`` (a reduction of ``kernels_reduce``: one
    value per row); the result has the kept dims' shape. A sum has two more layouts of its own:
    column sums over leading dims, and blocks for a large whole sum."""
    k = len(dims)
    if (
        kernel is kernels_reduce.sum_rows
        and 0 < k < a.ndim and max(dims) == k - 1  # (dims are distinct)
        and a.flags.c_contiguous and a.dtype == out_dtype
    ):
        # a sum over leading dims of a contiguous array: column sums, no transposed copy
        kept = a.shape[k:]
        cols = a.reshape(-1, math.prod(kept))
        out = np.empty(cols.shape[1], out_dtype)
        if out.size >= 2 and a.size >= PARALLEL_MIN and num_threads() > 1:
            parts = np.empty((-(-cols.shape[0] // 256), cols.shape[1]), dtype=out_dtype)
            get_reduce_kernel(kernels_reduce.sum_cols_par, a.dtype)(cols, out, parts)
        elif out.size:
            part = np.empty(out.shape, out.dtype)
            get_reduce_kernel(kernels_reduce.sum_cols, a.dtype)(cols, out, part)
        return out.reshape(kept)
    columns = getattr(kernel, "columns", None)
    if (columns is not None and 0 < k < a.ndim and max(dims) == k - 1
            and a.flags.c_contiguous and a.dtype == out_dtype):
        # (a mean or variance over leading dims: kernels_reduce.mean_cols)
        kept = a.shape[k:]
        cols = a.reshape(-1, math.prod(kept))
        out = np.empty(cols.shape[1], out_dtype)
        if out.size:
            get_reduce_kernel(columns, a.dtype)(cols, out, *params)
        return out.reshape(kept)
    if k == a.ndim and a.flags.c_contiguous:  # everything: one row, no copy
        rows, kept = a.reshape(1, a.size), ()
        # from 65,536 elements always in blocks (on one thread too), so the rounding is the
        # same whatever the thread count
        if kernel is kernels_reduce.sum_rows and a.size >= WHOLE_BLOCKS_FROM:
            out = np.empty(1, dtype=out_dtype)
            part = np.empty(-(-a.size // 16384), dtype=out_dtype)
            get_reduce_kernel(kernels_reduce.sum_all_par, a.dtype)(rows, out, part)
            return out.reshape(())
    elif k and a.flags.c_contiguous and min(dims) == a.ndim - k:
        # trailing dims of a contiguous array (``x.max(1)`` of a matrix): its rows as they are
        kept = a.shape[:a.ndim - k]
        rows = a.reshape(math.prod(kept), math.prod(a.shape[a.ndim - k:]))
    else:
        rows, kept = as_rows(a, dims)
    out = np.empty(rows.shape[0], out_dtype)
    if out.size:
        get_reduce_kernel(kernel, a.dtype)(rows, out, *params)
    return out.reshape(kept)


def run_rows(kernel, a: np.ndarray, dim: int):
    """Apply a row kernel (``kernel(rows, out)``, same shape out: softmax, cumsum) along
    ``dim``; ``kernel`` is a function of ``kernels_reduce``."""
    if a.ndim and (dim == -1 or dim == a.ndim - 1) and a.flags.c_contiguous:
        # the rows are the array's own (softmax over the last dim): no moves, no copies
        # (np.moveaxis alone costs about 2 us a call)
        rows = a.reshape(-1, a.shape[-1])
        out = np.empty(rows.shape, a.dtype)
        if out.size:
            get_reduce_kernel(kernel, a.dtype)(rows, out)
        return out.reshape(a.shape)
    moved = np.moveaxis(a, dim, -1)
    rows = ascontiguousarray(moved).reshape(-1, a.shape[dim] if a.ndim else 1)
    out = np.empty_like(rows)
    if out.size:
        get_reduce_kernel(kernel, a.dtype)(rows, out)
    return ascontiguousarray(np.moveaxis(out.reshape(moved.shape), -1, dim))


def select(a: np.ndarray, dim: int, k: int, largest: bool):
    """(values, int64 indices) of the first ``k`` elements along ``dim`` of ``a`` (ndim >= 1,
    0 <= k <= its size there) in sorted order: largest (or smallest) first, NaN as the largest
    value, equal values by index (a stable sort's order). Both C-contiguous, of ``a``'s shape
    with ``k`` along ``dim``; ``k`` the whole dim is a stable sort. Up to 16 are picked in one
    pass over each row; more by sorting keys (``kernels_sort``) with NumPy's sort."""
    shape = a.shape
    n = shape[dim]
    out_shape = shape[:dim] + (k,) + shape[dim + 1:]
    if not k or 0 in shape:
        return np.empty(out_shape, a.dtype), np.empty(out_shape, np.int64)
    nd = a.ndim
    last = dim == nd - 1
    if not last:  # (rows along dim, contiguous: a tiled transposed copy)
        a = a.transpose(tuple(range(dim)) + tuple(range(dim + 1, nd)) + (dim,))
    if not a.flags.carray:  # (readonly arrays would be a second compiled type)
        a = a.copy() if a.flags.c_contiguous else ascontiguousarray(a)
    bits = _SORT_BITS.get(a.dtype)
    if bits is None:  # (a dtype without kernels, a byte order not the machine's: NumPy's sort)
        if largest:  # (a stable sort of the reversed rows, read backwards: ties in order)
            idx = n - 1 - np.flip(np.argsort(np.flip(a, -1), axis=-1, kind="stable"), -1)
        else:
            idx = np.argsort(a, axis=-1, kind="stable")
        indices = np.ascontiguousarray(idx[..., :k])
        values = np.take_along_axis(a, indices, -1)
        return _moved_back(values, indices, dim, last)
    kind, top, nan_above = bits
    utype = top.dtype
    u = a.view(utype).reshape(-1, n)
    rows = u.shape[0]
    values = np.empty((rows, k), a.dtype)
    indices = np.empty((rows, k), np.int64)
    vals = values.view(utype)
    largest = bool(largest)
    if k <= 16:
        if rows > 1 and rows * n >= PARALLEL_MIN and num_threads() > 1:
            kernel = kernels_sort.select_small_par
        else:
            kernel = kernels_sort.select_small
        get_reduce_kernel(kernel, utype)(u, k, kind, top, nan_above, largest, vals, indices)
    else:
        keys = np.empty((rows, n), np.uint64)
        packed = utype.itemsize <= 4 and n <= 1 << 32
        get_reduce_kernel(kernels_sort.sort_keys, utype)(u, kind, top, nan_above, largest,
                                                         packed, keys)
        if packed:  # (distinct keys: NumPy's fastest sort gives the stable order)
            if 8 * k < n:  # (the first k apart, then sorted)
                keys = np.sort(np.partition(keys, k - 1, axis=-1)[:, :k], axis=-1)
            else:
                keys.sort(axis=-1)
            get_reduce_kernel(kernels_sort.take_packed, utype)(u, keys, vals, indices)
        else:
            # 8-byte values leave no room for the index in the key: an argsort, which is the
            # stable order where no two keys in the output are equal, else a stable one
            take = get_reduce_kernel(kernels_sort.take_ordered, utype)
            if take(u, keys, np.argsort(keys, axis=-1), vals, indices):
                take(u, keys, np.argsort(keys, axis=-1, kind="stable"), vals, indices)
    moved = a.shape[:-1] + (k,)
    return _moved_back(values.reshape(moved), indices.reshape(moved), dim, last)


def _moved_back(values, indices, dim, last):
    """``select``'s results, computed with ``dim`` moved last, with it back in place."""
    if last:
        return values, indices
    nd = values.ndim
    back = tuple(range(dim)) + (nd - 1,) + tuple(range(dim, nd - 1))
    return (ascontiguousarray(values.transpose(back)),
            ascontiguousarray(indices.transpose(back)))


def _sort_bits(dtype):
    """(kind, sign bit, +inf's bits) of ``kernels_sort`` for ``dtype``, the latter two of the
    unsigned type of its width."""
    dtype = np.dtype(dtype)
    utype = np.dtype(f"u{dtype.itemsize}").type
    bits = 8 * dtype.itemsize
    kind = 2 if dtype.kind == "f" else 1 if dtype.kind == "i" else 0
    inf = int(np.array(np.inf, dtype).view(utype)) if kind == 2 else 0
    return kind, utype(1 << (bits - 1)), utype(inf)


_SORT_BITS = {np.dtype(t): _sort_bits(t) for t in
              (np.bool_, np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16, np.int32,
               np.int64, np.float16, np.float32, np.float64)}


# ---------------------------------------------------------------- row kernels
# A row function ``fn(i, *args)`` of kernels_conv computes row ``i`` of its output; the module
# made for it runs it over every row, serially (``flat``) or over Numba's threads (``par``).

_row_kernels: dict[tuple, object] = {}


def module_helpers(fn) -> list:
    """The functions of ``fn``'s module named with a leading ``_`` that ``fn`` calls, directly
    or through other helpers: what its generated module must define too."""
    module = sys.modules[fn.__module__]
    helpers, todo = [], [fn]
    while todo:
        for n in sorted(codegen.names_used(todo.pop())):
            h = getattr(module, n, None)
            if n.startswith("_") and inspect.isfunction(h) and h not in helpers:
                helpers.append(h)
                todo.append(h)
    return helpers


def row_kernel_source(fn, loop: str, decorator: str) -> str:
    """``fn`` and the helpers of its module it calls, directly or through other helpers (each
    under ``decorator``, literals as written), then ``kernel(rows, *args)`` calling ``fn`` for
    each row of ``range(rows)`` through ``loop`` (a loop header with ``{args}`` to fill in)."""
    parts = [decorator + codegen.function_source(f, type_literals=False)
             for f in module_helpers(fn) + [fn]]
    args = ", ".join(list(inspect.signature(fn).parameters)[1:])
    parts.append(loop.format(args=args) + f"\n        {fn.__name__}(i, {args})")
    return "\n\n\n".join(parts)


def run_row_kernel(fn, rows: int, work: int, args, dtype) -> None:
    """Run row function ``fn`` of ``dtype``'s kernels for every row in ``range(rows)``; over
    Numba's threads when ``work`` (elements touched) reaches ``PARALLEL_MIN``."""
    par = work >= PARALLEL_MIN and num_threads() > 1
    # (keyed by the function and the dtype object: a dtype's name is a Python property that
    # costs 2 us, as much as a small kernel's work)
    key = (fn, np.dtype(dtype), par)
    k = _row_kernels.get(key)
    if k is None:
        # (with the options the row function declares, ``kernels_reduce.jit_options``: they
        # apply to its code, compiled as part of the loop)
        extra = (", parallel=True" if par else "") + getattr(fn, "jit_options", "")
        extra = extra.replace("{", "{{").replace("}", "}}")  # (the loop is a format string)
        loop = (f"{codegen.jit_line(extra)}\ndef kernel(rows, {{args}}):\n"
                f"    for i in {'prange' if par else 'range'}(rows):")
        inline = codegen.jit_line(", inline='always'") + "\n"
        body = "from numba import prange\n\n\n" + row_kernel_source(fn, loop, inline)
        # (exp, tanh and log as arithmetic, so that a row's loops vectorize)
        body = with_fastmath(body, dtype)
        k = _row_kernels[key] = codegen.load_module(np.dtype(dtype).name, body).kernel
    if rows:
        k(rows, *args)


def flat_view(a: np.ndarray):
    """(flat buffer, element offset, element strides) addressing ``a``'s elements without a
    copy (a kernel reads ``buf[offset + sum(index * stride)]``); the GPU's has the same form."""
    if a.flags.carray:  # (C order's strides, kept per shape: a pooling or a conv asks thrice)
        strides = _C_ELEMENT_STRIDES.get(a.shape)
        if strides is None:
            strides = remember(_C_ELEMENT_STRIDES, a.shape, tuple(_flat_operand(a, a.shape)[1]))
        return a.reshape(-1), 0, strides
    flat, strides = _flat_operand(a, a.shape)
    return flat, 0, tuple(strides)


_C_ELEMENT_STRIDES: dict = {}  # shape -> flat_view's strides of a C-contiguous array


# ---------------------------------------------------------------- array helpers
# The GPU backend (gpu.py) offers the same functions for its DeviceArray, so an op can call
# ``backend.of(a).concatenate(...)`` without knowing where ``a`` lives.

def ascontiguousarray(a):
    """``np.ascontiguousarray(a)``; a large transposed or permuted array is copied by tiles
    (``kernels_copy``) instead of NumPy's element by element copy, which reads the source a
    cache line per element."""
    if a.flags.c_contiguous or a.size < TRANSPOSE_MIN:
        return np.ascontiguousarray(a)
    plan = _transpose_plan(a)
    if plan is None:
        return np.ascontiguousarray(a)
    src, shape = plan
    out = empty(a.shape, a.dtype)
    _transpose_into(src, out.reshape(shape))
    return out


# From this many elements a transposed copy takes the tiled kernel; below, the source fits in
# L1 and NumPy's copy costs no more than the kernel's call and its plan
TRANSPOSE_MIN = 1 << 14


def _transpose_plan(a):
    """(src, dst shape) when a copy of ``a`` in C order is a transpose of the last two dims of
    a C-contiguous (B, M, N) view ``src`` of ``a``'s memory, into (B, N, M): ``a`` is a dense
    permutation of C order (positive strides, no gaps), whose dims, merged where they follow
    each other in memory and in ``a`` alike, are in memory the order (N, M) or (B, M, N) of
    ``a``'s (B, N, M), with N at least 8. None for any other layout (NumPy copies those: a
    layout whose last dim is contiguous copies as rows)."""
    if not (a.flags.aligned and a.flags.writeable):  # (other Numba types: NumPy's copy)
        return None
    dims = [d for d in range(a.ndim) if a.shape[d] != 1]
    strides = a.strides
    order = sorted(dims, key=lambda d: -strides[d])  # the dims in memory order
    step = a.itemsize
    for d in reversed(order):
        if strides[d] != step:
            return None  # (gaps, overlaps, broadcasts or negative strides)
        step *= a.shape[d]
    # merge each run of dims that are neighbours, in order, both in memory and in ``a``
    at = {d: k for k, d in enumerate(order)}
    groups = []  # (position in memory of the run's first dim, size)
    for k, d in enumerate(dims):
        if k and at[d] == at[dims[k - 1]] + 1:
            groups[-1][1] *= a.shape[d]
        else:
            groups.append([at[d], a.shape[d]])
    mem = [g[0] for g in groups]  # the runs' order in memory, read in a's order
    if len(groups) == 2 and mem[0] > mem[1]:
        nb, (n, m) = 1, (groups[0][1], groups[1][1])
    elif len(groups) == 3 and mem[0] < mem[2] < mem[1]:
        nb, n, m = groups[0][1], groups[1][1], groups[2][1]
    else:
        return None
    if n < 8:
        return None  # (source rows narrower than a tile: NumPy's copy along them is faster)
    perm = order + [d for d in range(a.ndim) if a.shape[d] == 1]
    return a.transpose(perm).reshape(nb, m, n), (nb, n, m)


def _transpose_into(src, dst):
    """``dst[b] = src[b].T`` for C-contiguous (B, M, N) ``src`` and (B, N, M) ``dst`` of one
    dtype, by ``kernels_copy`` (on Numba's threads from ``TRANSPOSE_PARALLEL_MIN`` elements)."""
    utype = _UINT_OF_SIZE[src.itemsize]
    # (the parallel kernel's units: blocks of 256 source rows of each batch)
    if (src.size >= TRANSPOSE_PARALLEL_MIN and src.shape[0] * -(-src.shape[1] // 256) > 1
            and num_threads() > 1):
        kernel = kernels_copy.transpose_par
    else:
        kernel = kernels_copy.transpose
    get_reduce_kernel(kernel, utype)(src.view(utype), dst.view(utype))


# A copy is bound by memory traffic, not arithmetic: a second thread repays waking it (20-40 us
# on the project's VM) only for copies well beyond the caches, from larger sizes than
# PARALLEL_MIN
TRANSPOSE_PARALLEL_MIN = 1 << 19
_UINT_OF_SIZE = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32),
                 8: np.dtype(np.uint64)}
moveaxis = np.moveaxis
concatenate = np.concatenate


# ``a @ b`` and casts to integers without NumPy's floating-point warnings: PyTorch never warns
# (inf * 0 is NaN, inf or NaN cast to an integer is its minimum, silently), and OpenBLAS can
# leave FE_INVALID set on finite input (numpy#24067; seen on a float32 (n, 5) @ (5, 1) on one
# CPU and not another), which NumPy then reports as "invalid value encountered in matmul".
# NumPy 2 keeps its error state in a context variable: setting a prepared "ignore" state
# costs 0.3 us a call where ``np.errstate`` costs 1 us (it builds the state each time). (Not
# ``ndarray.dot``, cheaper on small matrices: it gives 0 for 0 * NaN where PyTorch, and
# ``np.matmul``, give NaN.)
try:
    from numpy._core._ufunc_config import _extobj_contextvar as _FP_STATE, _make_extobj

    _FP_QUIET = _make_extobj(all="ignore")
except ImportError:  # NumPy 1.x keeps its error state elsewhere
    _FP_STATE = None


def without_fp_warnings(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` with NumPy's floating-point warnings off."""
    if _FP_STATE is None:
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)
    token = _FP_STATE.set(_FP_QUIET)
    try:
        return fn(*args, **kwargs)
    finally:
        _FP_STATE.reset(token)


def matmul(x, y, out=None):
    if out is None:  # (no keyword to pass on: the common call, 0.15 us less)
        if x.ndim == 2 and y.ndim == 2:
            n, k = x.shape
            m = y.shape[1]
            dt = x.dtype
            if (n * k * m <= SMALL_MM_MAX and y.dtype is dt and (dt is _F32 or dt is _F64)
                    and y.shape[0] == k):
                out = np.empty((n, m), dt)
                entry = _small_mm.get(dt)
                if entry is None:
                    entry = _small_mm[dt] = _small_mm_entry(dt)
                entry(x, y, out)
                return out
        return without_fp_warnings(np.matmul, x, y)
    return without_fp_warnings(np.matmul, x, y, out=out)


# Up to this many multiplications a product of two float matrices is ``kernels_reduce.small_mm``
# called through its entry point (0.5 us for a (10, 2) @ (2, 1)): NumPy's matmul costs 1.4 us
# on any size (its BLAS call and the floating-point state around it), which the loop's time
# reaches at about 16 x 16 x 16 (measured in docs/PERFORMANCE.md).
SMALL_MM_MAX = 1024
_small_mm: dict = {}


def _small_mm_entry(dt):
    """``small_mm``'s entry point for ``dt``, compiled for operands of any layout (a
    transposed weight, a column of a matrix): the entry point itself checks no types, so the
    layout it assumes must hold for every array it is given."""
    x = np.zeros((2, 4), dt)[:, ::2]  # (not contiguous: Numba types it as layout 'A')
    return _entry_of(kernels_reduce.small_mm, dt, (x, x, np.empty((2, 2), dt)))


# ---------------------------------------------------------------- caching allocator
# A freshly allocated large array is freshly mmap'ed memory: its first write page-faults on
# every 4 KiB (about 10,000 faults and several ms for 40 MB), and freeing it unmaps it again,
# so a training loop pays that on every temporary of every step. Large outputs instead come
# from blocks kept here and handed out again once nothing refers to them: every view of a
# block keeps the block itself as its ``base``, so a block whose reference count is back to
# the pool's own is free.

POOL_MIN_BYTES = 1 << 20
_POOL_MIN_ITEMS = POOL_MIN_BYTES // 16  # complex128 is the widest item
POOL_LIMIT_BYTES = int(os.environ.get("NUMBAGRAD_CPU_POOL_MB", "2048")) << 20
_pool: dict[int, list] = {}
_pool_bytes = [0]
_pool_lock = threading.Lock()


# Arrays under the pool's size come from malloc. glibc gives the free top of its heap back to
# the system (trims it) and maps it again on the next step, whose writes then page-fault on
# every 4 KiB: a (1000, 100) softmax step took 770 instead of 260 us in most processes, which
# ones depending on the heap's layout (and PyTorch's 210). So 64 MiB of that top stay mapped
# (M_TOP_PAD). Setting it stops glibc's own raising of the size from which it maps each block
# apart (M_MMAP_THRESHOLD, from 128 KiB up to 32 MiB as such blocks are freed), which alone
# made PyTorch's 4 MB temporaries in the same process 3x slower: so that is set to the 32 MiB
# it rises to. A user's own MALLOC_* settings win.
HEAP_TOP_PAD = 64 << 20
MMAP_FROM = 32 << 20
_M_TOP_PAD, _M_MMAP_THRESHOLD = -2, -3  # (glibc's malloc.h)


def _keep_heap_top() -> None:
    if sys.platform != "linux" or any(
            k in os.environ for k in ("MALLOC_TOP_PAD_", "MALLOC_MMAP_THRESHOLD_",
                                      "MALLOC_TRIM_THRESHOLD_")):
        return
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc"):
            return
        mallopt = ctypes.CDLL(None).mallopt
    except (AttributeError, OSError, ValueError):
        return
    mallopt(_M_MMAP_THRESHOLD, MMAP_FROM)
    mallopt(_M_TOP_PAD, HEAP_TOP_PAD)


_keep_heap_top()


def empty(shape, dtype):
    """``np.empty(shape, dtype)``; from 1 MiB up, memory is reused from the block pool."""
    if type(shape) is not tuple:
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
    n = math.prod(shape)
    if n < _POOL_MIN_ITEMS:  # under 1 MiB whatever the dtype: skip the dtype lookup
        return np.empty(shape, dtype)
    dtype = np.dtype(dtype)
    nbytes = n * dtype.itemsize
    if nbytes < POOL_MIN_BYTES:
        return np.empty(shape, dtype)
    with _pool_lock:
        blocks = _pool.setdefault(nbytes, [])
        for block in blocks:
            # referenced by the list, the loop variable and getrefcount's argument: free
            if sys.getrefcount(block) == 3:
                memory.reused(block)  # (its memory is private once more)
                break
        else:
            if _pool_bytes[0] + nbytes > POOL_LIMIT_BYTES:
                return np.empty(shape, dtype)
            block = np.empty(nbytes, np.uint8)
            blocks.append(block)
            _pool_bytes[0] += nbytes
        return block.view(dtype).reshape(shape)


def is_pool_block(block) -> bool:
    """Whether ``block`` is one of the pool's blocks (the ``base`` of what ``empty`` gave)."""
    return type(block) is np.ndarray and any(b is block for b in _pool.get(block.nbytes, ()))


def empty_cache() -> None:
    """Give the pool's free blocks back to the operating system."""
    with _pool_lock:
        for nbytes, blocks in list(_pool.items()):
            keep = [b for b in blocks if sys.getrefcount(b) > 3]
            _pool_bytes[0] -= nbytes * (len(blocks) - len(keep))
            _pool[nbytes] = keep


def zeros(shape, dtype):
    return np.zeros(shape, dtype)


def full(shape, value, dtype):
    return np.full(shape, value, dtype)


def as_strided(a, shape, strides):
    """A writable view of ``a``'s memory with byte ``strides``."""
    if a.flags.c_contiguous:
        # the ndarray constructor on a's buffer (0.5 us against as_strided's 3.7) when the
        # view stays inside ``a`` (an expanded gradient); a view reaching into the rest of
        # ``a``'s base goes through as_strided
        span = a.itemsize
        for n, st in zip(shape, strides):
            if st < 0 or not n:
                break
            span += (n - 1) * st
        else:
            if span <= a.nbytes:
                return np.ndarray(tuple(shape), a.dtype, a, 0, tuple(strides))
    return np.lib.stride_tricks.as_strided(a, tuple(shape), tuple(strides))


def _quiet_cast(src_dtype, dtype) -> bool:
    """Whether a cast from float ``src_dtype`` to ``dtype`` may overflow (to an integer, or to
    a narrower float): PyTorch casts without a warning (inf past float32's range), NumPy
    warns."""
    return src_dtype.kind in "fc" and (dtype.kind in "iu" or dtype.itemsize < src_dtype.itemsize)


def copyto(dst, src):
    if (type(src) is np.ndarray and src.size >= TRANSPOSE_MIN and src.dtype == dst.dtype
            and src.shape == dst.shape and dst.flags.carray
            and not src.flags.c_contiguous and not np.may_share_memory(dst, src)):
        plan = _transpose_plan(src)  # (a transposed source: ascontiguousarray's tiled copy)
        if plan is not None:
            view, shape = plan
            _transpose_into(view, dst.reshape(shape))
            return
    if _quiet_cast(getattr(src, "dtype", dst.dtype), dst.dtype):
        without_fp_warnings(dst.__setitem__, Ellipsis, src)  # (see matmul)
    else:
        dst[...] = src


def clone(a, dtype=None):
    """A copy of ``a`` (as ``dtype`` if given) laid out as PyTorch's ``clone`` and ``.to()``
    lay it out (``layout.clone_strides``: a transposed array's copy is transposed)."""
    if a.flags.c_contiguous:
        if dtype is None:
            return a.copy()
        if _quiet_cast(a.dtype, np.dtype(dtype)):  # (see matmul)
            return without_fp_warnings(a.astype, dtype)
        return a.astype(dtype)
    out = empty_strided(a.shape, layout.clone_strides(a.shape, [st // a.itemsize
                                                               for st in a.strides]),
                        a.dtype if dtype is None else dtype)
    copyto(out, a)
    return out


def scatter(a, index, value, accumulate):
    """``a[index] = value``, or with ``accumulate`` ``np.add.at`` (repeats add up)."""
    if accumulate:
        if not _add_rows(a, index, value):
            np.add.at(a, index, value)
    else:
        a[index] = value


def _add_rows(a, index, value) -> bool:
    """``np.add.at(a, index, value)`` for an index that is one integer array on the first dim
    (the rest whole: a gather's gradient), as a row loop (``kernels_reduce.index_add_rows``,
    ten times ``np.add.at``'s speed there); False for any other index."""
    first = index[0] if type(index) is tuple and index else index
    if (type(first) is not np.ndarray or first.dtype.kind != "i" or a.ndim < 1
            or not a.flags.c_contiguous or a.dtype.kind != "f" or type(value) is not np.ndarray
            or value.dtype != a.dtype or value.shape != first.shape + a.shape[1:]):
        return False
    if type(index) is tuple and any(type(i) is not slice or i != slice(None)
                                    for i in index[1:]):
        return False
    rows = first.size
    if rows == 0 or a.size == 0:
        return True  # (nothing to add: an empty index, as take's of [] has)
    get_reduce_kernel(kernels_reduce.index_add_rows, a.dtype)(
        a.reshape(a.shape[0], -1), first.reshape(rows),
        np.ascontiguousarray(value).reshape(rows, -1))
    return True


def get(a):
    """A host (NumPy) array: ``a`` itself here."""
    return a


def element_offsets(a):
    """Each element's offset from ``a``'s first element, in elements, with ``a``'s shape."""
    isz = a.itemsize
    pos = np.zeros(a.shape, dtype=np.int64)
    for d, (n, st) in enumerate(zip(a.shape, a.strides)):
        pos += (np.arange(n, dtype=np.int64) * (st // isz)).reshape(
            (1,) * d + (n,) + (1,) * (a.ndim - d - 1)
        )
    return pos
