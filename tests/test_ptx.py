"""Every CUDA kernel compiles for sm_90, and float32 kernels contain no float64 instructions.

The CUDA simulator runs kernels as Python, so it checks no types: a float literal that leaks
float64 arithmetic into a float32 kernel passes there and costs 2-64x on a GPU. Here each
kernel is compiled to PTX with ``numba.cuda.compile_ptx`` (no GPU needed, but the NVVM and
NVRTC libraries are: ``make test-ptx`` installs them) and the PTX is searched for ``.f64``.
"""

from __future__ import annotations

import os
import re

import pytest

pytestmark = pytest.mark.ptx

if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
    pytest.skip("PTX is compiled by the real CUDA target, not the simulator",
                allow_module_level=True)

cuda = pytest.importorskip("numba.cuda")
from numba import types  # noqa: E402

from numbagrad.backend import gpu  # noqa: E402
from numbagrad.dtypes import float32, float64, int64  # noqa: E402
from numbagrad.ops import REGISTRY  # noqa: E402
from numbagrad.ops.registry import Elementwise  # noqa: E402

NB = {"float32": types.float32, "float64": types.float64, "int64": types.int64,
      "bool": types.boolean}
F64 = re.compile(r"\.f64\b")
I64 = types.int64


def arr(name):
    return types.Array(NB[name], 1, "C")


def ptx(kernel, sig):
    code, _ = cuda.compile_ptx(kernel.py_func, sig, cc=(9, 0))
    assert ".target sm_90" in code
    return code


# libdevice's own sinf/cosf/tanf reduce huge arguments (Payne-Hanek) with one int64 -> f64
# multiply by pi/2 * 2**-64 (0d3BF921FB54442D19): CUDA's float32 trig, not a leak of ours.
LIBDEVICE_TRIG = re.compile(
    r"\.reg \.f64|cvt\.rn\.f64\.s64|mul\.f64 \t%fd\d+, %fd\d+, 0d3BF921FB54442D19;|"
    r"cvt\.rn\.f32\.f64"
)


def f64_lines(code):
    lines = [line.strip() for line in code.splitlines() if F64.search(line)]
    if any("0d3BF921FB54442D19" in line for line in lines):  # (one set per unrolled element)
        lines = [line for line in lines if not LIBDEVICE_TRIG.search(line)]
    return lines


def _elementwise_sig(in_dtypes, out_dtype, n_params, param_dtype, ndim=2):
    tup = types.UniTuple(I64, ndim)
    sig = [I64, tup, arr(out_dtype), I64, tup]
    for d in in_dtypes:
        sig += [arr(d), I64, tup]
    sig += [NB[param_dtype]] * n_params
    return tuple(sig)


ELEMENTWISE = sorted(n for n, op in REGISTRY.items() if isinstance(op, Elementwise))
# the ops PyTorch has no float kernel for (bitwise_and, ...): compiled for int64 instead
INTEGER_ONLY = [n for n in ELEMENTWISE if REGISTRY[n].refuse_float]


@pytest.mark.parametrize("dtype", [float32, float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", [n for n in ELEMENTWISE if n not in INTEGER_ONLY])
def test_elementwise_kernels_compile_without_f64_in_float32(name, dtype):
    _check_elementwise(name, dtype)


@pytest.mark.parametrize("name", INTEGER_ONLY)
def test_integer_only_kernels_compile_without_f64(name):
    _check_elementwise(name, int64)


def _check_elementwise(name, dtype):
    op = REGISTRY[name]
    out = "bool" if op.dtype_rule == "bool" else dtype.name
    ins = ["bool" if (op.dtype_rule == "where" and k == 0) else dtype.name
           for k in range(op.n_in)]
    codes = [ptx(op.kernel(dtype, gpu), _elementwise_sig(ins, out, len(op.param_names),
                                                         dtype.name))]
    for i, rule in enumerate(op.vjps):
        if rule is None:
            continue
        n_params = len(op._rule_params(i))
        names = op.vjp_args[i][: len(op.vjp_args[i]) - n_params]
        vins = ["bool" if n == "cond" else dtype.name for n in names]
        codes.append(ptx(op.vjp_kernel(i, dtype, gpu),
                         _elementwise_sig(vins, dtype.name, n_params, dtype.name)))
    if dtype is not float64:
        for code in codes:
            assert f64_lines(code) == []


from numbagrad.backend import kernels_gpu as KG  # noqa: E402

# (loop, the fold it runs under its name) of every reduction kernel the ops make
FOLDS = {f"{fold.__name__}_{loop.__name__}": (loop, {"combine": fold})
         for fold in (KG.sum_rows, KG.prod_rows, KG.amax_rows, KG.amin_rows)
         for loop in (KG.fold_thread, KG.fold_tree)}
ARGFOLDS = {f"{fold.__name__}_{loop.__name__}": (loop, {"better": fold})
            for fold in (KG.argmax_rows, KG.argmin_rows)
            for loop in (KG.argfold_thread, KG.argfold_tree)}
OTHERS = {fn.__name__: (fn, {}) for fn in (KG.prod_others_rows, KG.cumsum_rows,
                                            KG.rcumsum_rows, KG.gather, KG.scatter,
                                            KG.scatter_add, KG.matmul_tiled)}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", [*FOLDS, *ARGFOLDS, *OTHERS, "_copy", "_fill"])
def test_other_kernels_compile_without_f64_in_float32(name, dtype):
    a = arr(dtype)
    if name in ("_copy", "_fill"):
        n_in, n_params = (1, 0) if name == "_copy" else (0, 1)  # a fill's value is a parameter
        k = gpu.identity_kernel(name, dtype)
        code = ptx(k, _elementwise_sig([dtype] * n_in, dtype, n_params, dtype))
    else:
        fn, called = {**FOLDS, **ARGFOLDS, **OTHERS}[name]
        k = gpu._kernel(fn, dtype, **called)
        if name in FOLDS:
            sig = ((a, I64, I64, a, NB[dtype]) if fn is KG.fold_thread
                   else (a, I64, I64, I64, I64, a, NB[dtype]))
        elif name in ARGFOLDS:
            sig = (a, I64, I64, arr("int64"))
        elif fn in (KG.prod_others_rows, KG.cumsum_rows, KG.rcumsum_rows):
            sig = (a, I64, I64, a)
        elif fn in (KG.gather, KG.scatter, KG.scatter_add):
            sig = (a, arr("int64"), a, I64)
        else:
            sig = (a, I64, a, I64, a, I64, I64, I64)
        code = ptx(k, sig)
    if dtype == "float32":
        assert f64_lines(code) == []
