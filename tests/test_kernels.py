"""Kernel properties: one compile per op and dtype (never per shape), disk cache, float32 purity."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import numbagrad as ng
from numbagrad import dtypes as D
from numbagrad.backend import cpu
from numbagrad.backend import kernels_reduce as KR
from numbagrad.ops import elementwise as E
from numbagrad.ops.registry import REGISTRY
from threads import on_one_and_two_threads


def test_one_compiled_kernel_serves_every_shape_and_layout():
    mod = E.tanh.kernel(D.float64)
    # (ranks whose own loop an earlier test in this process compiled stay compiled; the others
    # count their calls from here)
    ranks = sorted(sig[0].ndim for sig in mod.FLATN["a"].signatures)
    mod.SEEN.clear()
    x = ng.tensor(np.random.rand(4, 5, 6))
    for t in (ng.tensor(1.0, dtype=ng.float64), x, x[0], x.transpose(0, 2), x[:, ::2, 1:],
              x[:, :1].expand(4, 3, 6), ng.zeros(0, 3, dtype=ng.float64), ng.rand(7, 3).double(),
              x[0, 0, :1].expand(9)):
        np.testing.assert_allclose(t.tanh().numpy(), np.tanh(t.numpy()))
    # small strided views are read into dense copies for the flat loop (cpu.DENSE_BELOW):
    # no strided kernel yet; larger ones share one compile of ``kernel``
    assert not mod.kernel.signatures
    big = ng.tensor(np.random.rand(64, 32, 16))
    for t in (big.transpose(0, 2), big[:, ::2, :], big[:, :1].expand(64, 32, 16)):
        np.testing.assert_allclose(t.tanh().numpy(), np.tanh(t.numpy()))
    # contiguous inputs share one compile of ``flat_a`` (1-d ones, the dense copies, and those
    # of another rank called fewer than FLATN_AFTER times, through 1-d views), broadcast
    # scalars one of ``flat_s`` (serial sizes here: no ``par_*``)
    assert len(mod.kernel.signatures) == 1
    assert len(mod.FLAT["a"].signatures) == 1 and len(mod.FLAT["s"].signatures) == 1
    assert sorted(sig[0].ndim for sig in mod.FLATN["a"].signatures) == ranks
    # a rank called again and again compiles its own loop, once (``flatn_a``)
    for _ in range(cpu.FLATN_AFTER):
        for t in (x, x[0], ng.rand(2, 3).double()):
            np.testing.assert_allclose(t.tanh().numpy(), np.tanh(t.numpy()))
    compiled = sorted(sig[0].ndim for sig in mod.FLATN["a"].signatures)
    assert compiled == sorted(set(ranks) | {2, 3})
    assert len(mod.FLAT["a"].signatures) == 1
    assert all(not k.signatures for k in mod.PAR.values())


@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 3, 2), (1, 2, 1, 3, 1)])
def test_fast_path_loops_of_every_rank_give_values_and_gradients(shape):
    # the fast path runs ``flat_*`` on 1-d operands and ``flatn_*`` (one compile per rank) on
    # the others, forward and in the lean nodes' rules; a single value broadcast either way
    rng = np.random.default_rng(len(shape))
    a = rng.uniform(0.5, 2.0, shape).astype(np.float32)
    b = rng.uniform(0.5, 2.0, shape).astype(np.float32)
    x = ng.from_numpy(a.copy()).requires_grad_()
    y = ng.from_numpy(b.copy()).requires_grad_()
    want = (np.sin(a * b + 0.5) + (a + 0.5 * a * b) - (1 / (1 + np.exp(-a))) ** 2) / b
    sg = 1 / (1 + np.exp(-a))
    gx = (np.cos(a * b + 0.5) * b + 1 + 0.5 * b - 2 * sg * sg * (1 - sg)) / b
    gy = (np.cos(a * b + 0.5) * a + 0.5 * a) / b - want / b
    for _ in range(cpu.FLATN_AFTER + 1):  # (the 1-d views first, then the rank's own loops)
        x.grad = y.grad = None
        out = ((x * y + 0.5).sin() + ng.addcmul(x, x, y, value=0.5) - x.sigmoid() ** 2) / y
        np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-5, atol=1e-6)
        assert out.shape == shape
        out.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), gx, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(y.grad.numpy(), gy, rtol=1e-4, atol=1e-5)
    if len(shape) != 1:
        mod = E.mul.kernel(D.float32)
        assert len(shape) in [sig[0].ndim for sig in mod.FLATN["aa"].signatures]
    # one value against the rank's array, either side (``x + b`` with b of one value)
    s1 = ng.tensor([2.0])
    for left, right, ref in ((x, s1, a * 2), (s1, x, 2 * a)):
        np.testing.assert_allclose((left * right).detach().numpy(), ref, rtol=1e-6)
    z = ng.tensor(np.float32(3.0))  # a 0-d operand against the rank's array
    np.testing.assert_allclose((z - x).detach().numpy(), 3 - a, rtol=1e-6)


def test_several_operand_ops_take_one_value_tensors_as_numbers_with_their_gradients():
    # the n-operand fast path reads a tensor of one value (a mean's gradient, a 0-d weight) as
    # a number; the result keeps the shape of the others, and the gradient of the one-value
    # tensor is summed back to its shape; a (1, 1) operand of a 1-d x broadcasts the result
    # to 2-d (the general path)
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s) for s in ((3, 4), (), (3, 4), (1, 1), (4,))]
    calls = [lambda L, a, b, c, d, e: L.addcmul(a, b, c, value=0.5),
             lambda L, a, b, c, d, e: L.addcmul(b, a, c),
             lambda L, a, b, c, d, e: L.lerp(a, c, b),
             lambda L, a, b, c, d, e: L.addcdiv(a, c, d, value=2.0),
             lambda L, a, b, c, d, e: L.addcmul(e, d, e)]
    for call in calls:
        results = []
        for L in (ng, torch):
            ts = [L.tensor(v, requires_grad=True) for v in arrays]
            out = call(L, *ts)
            (out * out).sum().backward()
            results.append([out] + [t.grad for t in ts])
        for a, b in zip(*results):
            assert (a is None) == (b is None)
            if a is not None:
                assert tuple(a.shape) == tuple(b.shape)
                np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)


def test_broadcast_binary_matches_numpy_on_strided_operands():
    a = ng.tensor(np.random.rand(3, 8))[:, ::3]
    b = ng.tensor(np.random.rand(4, 3)).t()  # (3, 4), not contiguous
    c = ng.tensor(np.random.rand(3, 1))
    np.testing.assert_allclose((a * c + b[:, :3]).numpy(), a.numpy() * c.numpy() + b.numpy()[:, :3])


F64_CHECK = textwrap.dedent(
    """
    import numbagrad as ng
    from numbagrad import dtypes as D
    from numbagrad.ops import elementwise as E
    x = ng.tensor([0.5, -1.5, 2.0], requires_grad=True)
    y = (x.sigmoid() + x.tanh() * 0.5 + (1 - x).rsqrt().exp()).sum()
    y.backward()
    # (not tanh's forward, nor log's: fastmath.tanh_float32 and log_float32 compute in
    # float64 on purpose, and round once)
    kernels = [op.kernel(D.float32) for op in (E.sigmoid, E.rsqrt, E.exp, E.mul, E.add)]
    kernels += [op.vjp_kernel(0, D.float32) for op in (E.sigmoid, E.tanh, E.rsqrt)]
    for mod in kernels:
        for k in [mod.kernel, *mod.FLAT.values(), *mod.PAR.values()]:
            if k.signatures:
                ir = "".join(k.inspect_llvm().values())
                bad = [w for w in ("fpext float", "fadd double", "fmul double", "fdiv double")
                       if w in ir]
                print(mod.__name__, k.py_func.__name__, bad)
    """
)


def test_float32_kernels_do_no_float64_arithmetic(tmp_path):
    # compiled fresh in a clean cache: Numba cannot show the IR of cache-loaded code
    env = dict(os.environ, NUMBAGRAD_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", F64_CHECK], env=env, capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert len(out) >= 8  # at least one compiled loop per kernel module
    for line in out:
        assert line.endswith("[]"), line


def test_second_process_loads_kernels_from_the_disk_cache(tmp_path):
    script = textwrap.dedent(
        """
        import numbagrad as ng
        from numbagrad import dtypes as D
        from numbagrad.ops import elementwise as E
        x = ng.tensor([1.0, 2.0], requires_grad=True)
        (x.exp() * 3).sum().backward()
        k = E.exp.kernel(D.float32).FLAT["a"]  # the contiguous loop x.exp() ran
        print(sum(k.stats.cache_hits.values()), sum(k.stats.cache_misses.values()))
        """
    )
    env = dict(os.environ, NUMBAGRAD_CACHE_DIR=str(tmp_path))
    runs = [
        subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                       check=True).stdout.split()
        for _ in range(2)
    ]
    assert runs[0] == ["0", "1"]  # cold: compiled
    assert runs[1] == ["1", "0"]  # warm: loaded from disk
    assert any(p.suffix == ".nbi" for p in tmp_path.rglob("*"))


def test_generated_kernel_source_is_readable_python():
    source = Path(E.sigmoid.kernel(D.float32).__file__).read_text()
    assert "_c = np.float32" in source
    # the op's scalar function, as the loops call it: its arguments x0, x1, ... (below)
    assert "def _entry(x0):" in source
    # math.exp is routed to the vectorizable exp of backend/fastmath.py, pasted in
    assert "_c(1) / (_c(1) + exp_float32(-x0))" in source
    assert "def exp_float32(x):" in source


def test_ops_and_rules_of_one_formula_share_one_module():
    # mul's x * y, its rules grad * y and grad * x, exp's rule grad * result: one text, one
    # import, one compile per process (and one file in the on-disk cache)
    mul, exp = REGISTRY["mul"], REGISTRY["exp"]
    mods = [mul.kernel(D.float32), mul.vjp_kernel(0, D.float32), mul.vjp_kernel(1, D.float32),
            exp.vjp_kernel(0, D.float32)]
    assert all(m is mods[0] for m in mods)
    assert "return x0 * x1" in Path(mods[0].__file__).read_text()
    # another formula, or another dtype, is another module
    assert REGISTRY["add"].kernel(D.float32) is not mods[0]
    assert mul.kernel(D.float64) is not mods[0]
    # the gradients are still each rule's own
    x = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = ng.tensor([4.0, 5.0, 6.0], requires_grad=True)
    (x * y * ng.exp(x)).sum().backward()
    xv, yv = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])
    np.testing.assert_allclose(x.grad.numpy(), yv * np.exp(xv) * (1 + xv), rtol=1e-6)
    np.testing.assert_allclose(y.grad.numpy(), xv * np.exp(xv), rtol=1e-6)


def _ulps(got, ref):
    """Distance in units in the last place, from the integer bit patterns."""
    ints = np.int32 if got.dtype == np.float32 else np.int64
    return np.abs(got.view(ints).astype(np.int64) - ref.view(ints).astype(np.int64))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_vectorizable_exp_is_within_3_ulp_of_numpy_over_the_whole_range(dtype):
    lim = 105.0 if dtype == np.float32 else 750.0
    v = np.linspace(-lim, lim, 400_001).astype(dtype)
    got = ng.exp(ng.from_numpy(v)).numpy()
    with np.errstate(over="ignore"):
        ref = np.exp(v)
    normal = np.isfinite(ref) & (ref >= np.finfo(dtype).tiny)
    assert _ulps(got[normal], ref[normal]).max() <= 3
    # subnormal results, overflow to inf and underflow to 0 as NumPy gives them
    sub = ~normal & np.isfinite(ref)
    assert np.abs(got[sub] - ref[sub]).max() <= 2 * np.finfo(dtype).smallest_subnormal
    assert np.array_equal(got[np.isinf(ref)], ref[np.isinf(ref)])
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30], dtype)
    np.testing.assert_array_equal(ng.exp(ng.from_numpy(special)).numpy(), np.exp(special))


def test_vectorizable_float32_erf_is_within_2_ulp_of_the_correctly_rounded_erf():
    """float32 kernels read erf from fastmath.erf_float32 (GELU and its gradient): checked
    against math.erf in float64 rounded to float32, and the special values as math.erf's."""
    v = np.concatenate([np.linspace(-6.0, 6.0, 400_001), np.logspace(-30, 0.7, 20_001),
                        -np.logspace(-30, 0.7, 20_001)]).astype(np.float32)
    got = ng.from_numpy(v).erf().numpy()
    ref = np.array([math.erf(x) for x in v.astype(np.float64)]).astype(np.float32)
    assert _ulps(got, ref).max() <= 2
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, 4.5, -10.0], np.float32)
    want = np.array([math.erf(x) for x in special.astype(np.float64)], np.float32)
    got = ng.from_numpy(special).erf().numpy()
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))
    src = Path(E.erf.kernel(D.float32).__file__).read_text()
    assert "erf_float32(" in src and "math.erf(" not in src


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_vectorizable_tanh_is_correctly_rounded_in_float32_and_within_3_ulp_in_float64(dtype):
    # elementwise kernels and row kernels (seen through a tanh RNN layer whose recurrent
    # weight is 0, one step, a batch of the values and one hidden unit) route math.tanh to
    # fastmath.py's; float32 is computed in float64 and rounded once
    v = np.concatenate([np.linspace(-20, 20, 100_001), np.geomspace(1e-30, 1, 2001),
                        -np.geomspace(1e-30, 1, 2001), [np.nan, np.inf, -np.inf, 0.0, -0.0]]
                       ).astype(dtype)
    n = v.size
    zeros = [ng.zeros(n, 1, dtype=ng.float32 if dtype == np.float32 else ng.float64),
             ng.zeros(1, 1, dtype=ng.float32 if dtype == np.float32 else ng.float64)]
    row = ng.ops.recurrent.rnn_tanh_layer(ng.from_numpy(v.reshape(1, n, 1)), *zeros, None)[0]
    ref = np.tanh(v.astype(np.float64)).astype(dtype)
    finite = np.isfinite(v) & (v != 0)
    for got in (row.numpy().reshape(-1), ng.tanh(ng.from_numpy(v)).numpy()):
        assert _ulps(got[finite], ref[finite]).max() <= (1 if dtype == np.float32 else 3)
        np.testing.assert_array_equal(got[~finite], ref[~finite])  # (0.0 == -0.0)
    # -0.0 keeps its sign (the RNN's pre-activation adds +0.0 to it, so not there)
    assert np.signbit(ng.tanh(ng.from_numpy(v)).numpy()[-1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_vectorizable_log_is_within_2_ulp_of_numpy_over_the_whole_range(dtype):
    fi = np.finfo(dtype)
    with np.errstate(over="ignore"):  # (geomspace's last power may overflow: dropped)
        v = np.concatenate([np.geomspace(fi.smallest_subnormal, fi.max, 400_001),
                            np.linspace(0.5, 2.0, 100_001)]).astype(dtype)
    v = v[np.isfinite(v)]
    got = ng.log(ng.from_numpy(v)).numpy()
    ref = np.log(v.astype(np.float64)).astype(dtype)
    assert _ulps(got, ref).max() <= (1 if dtype == np.float32 else 2)
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0, 1.0, -fi.tiny], dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.log(special)
    got = ng.log(ng.from_numpy(special)).numpy()
    assert np.array_equal(got, want, equal_nan=True)
    src = Path(E.log.kernel(D.float32).__file__).read_text()
    assert "log_float32(" in src and "math.log(" not in src


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_vectorizable_float32_sin_and_cos_are_within_1_ulp_over_every_exponent(name):
    # float32 kernels route math.sin and math.cos to fastmath.py's, whose argument reduction
    # is exact for every float32 (fastmath.TWO_OVER_PI): random bit patterns cover every
    # exponent up to 3.4e38; checked against NumPy's float64 rounded to float32
    rng = np.random.default_rng(0)
    v = rng.integers(0, 0x7F7FFFFF, 1_000_000, dtype=np.int64).astype(np.int32).view(np.float32)
    near = (np.arange(1, 20_001) * (np.pi / 2)).astype(np.float32)  # next to multiples of pi/2
    v = np.concatenate([v, -v, near, np.nextafter(near, np.float32(0)),
                        np.linspace(-10, 10, 100_001, dtype=np.float32)])
    got = getattr(ng, name)(ng.from_numpy(v)).numpy()
    ref = getattr(np, name)(v.astype(np.float64)).astype(np.float32)
    assert _ulps(got, ref).max() <= 1
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45], np.float32)
    with np.errstate(invalid="ignore"):
        want = getattr(np, name)(special.astype(np.float64)).astype(np.float32)
    got = getattr(ng, name)(ng.from_numpy(special)).numpy()
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got[:2]), np.signbit(want[:2]))  # sin(-0.0) is -0.0
    src = Path(getattr(E, name).kernel(D.float32).__file__).read_text()
    assert f"{name}_float32(" in src and f"math.{name}(" not in src


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_float32_sin_and_cos_below_2_19_take_the_table_free_loop_with_the_same_values(name):
    # a loop whose arguments are all below fastmath.SMALL_BELOW calls the twins without the
    # table (codegen.split_ranges); they give the table's values for every float32 there
    # (checked whole once: 1.2e9 values each sign), so the same 1 ulp against NumPy; one
    # large value, inf or NaN sends the whole call to the exact loop
    rng = np.random.default_rng(1)
    near = (np.arange(1, 333_000, 7) * (np.pi / 2)).astype(np.float32)  # up to 5.2e5
    near = near[near < 524288.0]
    v = np.concatenate([rng.uniform(-524287, 524287, 300_000).astype(np.float32),
                        near, np.nextafter(near, np.float32(0)), -near,
                        np.float32([0.0, -0.0, 1e-45, -1e-45, 524287.97])])
    assert np.abs(v).max() < 524288.0
    fn = getattr(ng, name)
    got = fn(ng.from_numpy(v)).numpy()
    ref = getattr(np, name)(v.astype(np.float64)).astype(np.float32)
    assert _ulps(got, ref).max() <= 1
    assert np.array_equal(np.signbit(got[-5:-1]), np.signbit(ref[-5:-1]))
    for odd in (np.float32(524288.0), np.float32(3e38), np.inf, np.nan):
        w = v[:1000].copy()
        w[17] = odd
        with np.errstate(invalid="ignore"):
            ref = getattr(np, name)(w.astype(np.float64)).astype(np.float32)
        got = fn(ng.from_numpy(w)).numpy()
        assert _ulps(got[np.isfinite(ref)], ref[np.isfinite(ref)]).max() <= 1
        assert np.array_equal(got[~np.isfinite(ref)], ref[~np.isfinite(ref)], equal_nan=True)
    # the gradient's rule (grad * cos(x), -grad * sin(x)) is split the same way
    x = ng.from_numpy(v[:4096].copy()).requires_grad_()
    fn(x).sum().backward()
    other = np.cos if name == "sin" else (lambda a: -np.sin(a))
    ref = other(v[:4096].astype(np.float64)).astype(np.float32)
    assert _ulps(x.grad.numpy(), ref).max() <= 1
    src = Path(getattr(E, name).kernel(D.float32).__file__).read_text()
    assert f"{name}_small_float32(" in src and "all_below(a0, 524288.0)" in src


def test_split_ranges_splits_only_loops_whose_twinned_arguments_trace_to_parameters():
    from numbagrad.backend import codegen
    src = textwrap.dedent("""
        def f(x):
            return s(x)

        def g(x):
            return s(3.0 * x)

        def h(y, x):
            return (y, f(x))[1]

        def loop(out, a0, a1):
            w1 = a1[0:4]
            for j in range(out.shape[0]):
                v1 = w1[j]
                out[j] = h(a0[j], v1)

        def loop_expr(out, a0):
            for j in range(out.shape[0]):
                out[j] = g(a0[j])

        def loop_inplace(out, a0):
            for j in range(out.shape[0]):
                out[j] = f(out[j])

        def loop_scan(out, a0):
            for j in range(1, out.shape[0]):
                out[j] = f(out[j - 1]) + a0[j]

        def loop_intermediate(out, a0):
            for j in range(out.shape[0]):
                e = a0[j] * 2.0
                out[j] = f(e)
        """)
    got = codegen.split_ranges(src, {"s": ("s_fast", 8.0)}, "below")
    ns = {"s": lambda x: ("exact", x), "s_fast": lambda x: ("fast", x),
          "below": lambda a, b: bool(np.all(np.abs(a) < b))}
    exec(got, ns)  # noqa: S102 (the source above)
    out = np.empty(2, object)
    ns["loop"](out, [1, 1], np.array([1.0, 2.0]))
    assert list(out) == [("fast", 1.0), ("fast", 2.0)]
    ns["loop"](out, [1, 1], np.array([1.0, 9.0]))
    assert list(out) == [("exact", 1.0), ("exact", 9.0)]
    assert "h_small" in ns and "f_small" in ns and "g_small" not in ns
    # an in-place update element by element reads each element before writing it: the test
    # made before the loop holds for what it reads (an in-place op's loop, ``x.sin_()``)
    out = np.array([1.0, 2.0], object)
    ns["loop_inplace"](out, np.array([0, 0]))
    assert list(out) == [("fast", 1.0), ("fast", 2.0)]
    # a loop that reads an element it wrote (a scan), or reads a value not traced to a
    # parameter, keeps its one loop
    for name in ("loop_expr", "loop_scan", "loop_intermediate"):
        body = got[got.index(f"def {name}("):].split("\ndef ")[0]
        assert "below(" not in body and "_small" not in body
    assert codegen.split_ranges("def k(x):\n    return x\n", {"s": ("t", 1.0)}, "b") == (
        "def k(x):\n    return x\n")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_vectorizable_expm1_and_log1p_are_within_4_ulp_and_keep_the_special_values(dtype):
    # float32: computed in float64 and rounded once (within 1 ulp); float64 within 4
    bound = 1 if dtype == np.float32 else 4
    tiny = np.geomspace(1e-30, 1, 20_001)
    v = np.concatenate([np.linspace(-50, 90, 200_001), tiny, -tiny]).astype(dtype)
    with np.errstate(over="ignore"):
        ref = np.expm1(v.astype(np.float64)).astype(dtype)
    got = ng.expm1(ng.from_numpy(v)).numpy()
    finite = np.isfinite(ref)
    assert _ulps(got[finite], ref[finite]).max() <= bound
    assert np.array_equal(got[~finite], ref[~finite])  # overflow to inf
    v = np.concatenate([np.geomspace(1e-30, 1e30, 200_001),
                        -np.geomspace(1e-30, 0.999999, 20_001),
                        np.linspace(-0.99, 3, 100_001)]).astype(dtype)
    got = ng.log1p(ng.from_numpy(v)).numpy()
    assert _ulps(got, np.log1p(v.astype(np.float64)).astype(dtype)).max() <= bound
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0, -2.0, 1e-40], dtype)
    for name in ("expm1", "log1p"):
        with np.errstate(all="ignore"):
            want = getattr(np, name)(special)
        got = getattr(ng, name)(ng.from_numpy(special)).numpy()
        assert np.array_equal(got, want, equal_nan=True), name
        assert np.array_equal(np.signbit(got[3:5]), np.signbit(want[3:5])), name  # -0.0


def test_small_integer_powers_are_products_and_match_numpy():
    v = np.array([-2.5, -0.0, 0.0, 1.5, np.inf, -np.inf, np.nan, 3e19], np.float32)
    for p in (1, 2, 3, 2.5, -1):
        with np.errstate(all="ignore"):
            ref = v**np.float32(p)
        np.testing.assert_array_equal((ng.from_numpy(v) ** p).numpy(), ref)
    src = Path(E.pow.kernel(D.float32).__file__).read_text()
    assert "return _pow(x0, x1)" in src and "return x * x" in src


@pytest.mark.parametrize("shape,dims", [((1000, 1000), 0), ((600, 3), 0), ((513, 2, 7), (0, 1)),
                                        ((4, 5, 6), 0), ((0, 3), 0)])
def test_sum_over_leading_dims_runs_column_sums_without_a_copy(shape, dims):
    from numbagrad.backend import cpu

    a = np.random.default_rng(1).random(shape).astype(np.float32)
    got = ng.tensor(a).sum(dims).numpy()
    want = a.astype(np.float64).sum(dims)
    # blocks of 256 rows keep float32 rounding to a few ulp of the column sums
    np.testing.assert_allclose(got, want, rtol=4 * shape[0] / 256 * 1.2e-7 + 1e-6)
    if a.size:
        kernels = {k[0] for k in cpu._reduce_kernels}
        assert KR.sum_cols in kernels or KR.sum_cols_par in kernels


def test_parallel_sums_add_the_same_blocks_as_the_serial_ones():
    from numbagrad.backend import cpu

    a = np.random.default_rng(3).random((1000, 700)).astype(np.float32)
    serial, par = np.empty(700, np.float32), np.empty(700, np.float32)
    cpu.get_reduce_kernel(KR.sum_cols, a.dtype)(a, serial, np.empty(700, np.float32))
    cpu.get_reduce_kernel(KR.sum_cols_par, a.dtype)(a, par, np.empty((4, 700), np.float32))
    np.testing.assert_array_equal(par, serial)  # same blocks of 256 rows, added in order
    flat = a.reshape(1, -1)
    whole, part = np.empty(1, np.float32), np.empty(-(-flat.size // 16384), np.float32)
    cpu.get_reduce_kernel(KR.sum_all_par, a.dtype)(flat, whole, part)
    np.testing.assert_allclose(whole[0], a.astype(np.float64).sum(), rtol=1e-6)
    assert ng.tensor(a).sum().item() == pytest.approx(a.astype(np.float64).sum(), rel=1e-6)


def test_large_sums_round_the_same_on_one_thread_and_on_two():
    a = np.random.default_rng(5).random((3000, 700)).astype(np.float32)
    x = ng.tensor(a)
    one, two = on_one_and_two_threads(lambda: (x.sum().item(), x.sum(0).numpy()))
    assert one[0] == two[0]
    np.testing.assert_array_equal(one[1], two[1])


def test_identity_rules_pass_the_gradient_through_without_a_kernel():
    a = ng.tensor([1.0, 2.0], requires_grad=True)
    b = ng.tensor([3.0, 4.0], requires_grad=True)
    z = a + b
    seen = []
    z.grad_fn.register_hook(lambda gi, go: seen.append((gi[0] is go[0], gi[1] is go[0])))
    z.backward(ng.tensor([1.0, 10.0]))
    assert seen == [(True, True)]
    assert a.grad.tolist() == [1.0, 10.0] and b.grad.tolist() == [1.0, 10.0]
    a.grad.add_(1)  # each leaf's .grad owns its memory
    assert b.grad.tolist() == [1.0, 10.0]


def test_large_broadcasts_split_their_rows_over_threads(monkeypatch):
    import numba

    from numbagrad.backend import cpu
    from numbagrad.ops import lazy

    monkeypatch.setattr(lazy, "ENABLED", False)  # the ops run at once, with their own kernels

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one Numba thread: the parallel rows kernel is never chosen")
    rng = np.random.default_rng(2)
    a = rng.random((600, 2000)).astype(np.float32)
    b = rng.random(1000).astype(np.float32)
    c = rng.random((600, 1)).astype(np.float32)
    numba.set_num_threads(2)
    contiguous = (ng.tensor(a[:, :1000].copy()) + ng.tensor(b)).numpy()
    strided = (ng.tensor(a)[:, ::2] * ng.tensor(c)).numpy()  # inner stride 2: the slow loop
    np.testing.assert_array_equal(contiguous, a[:, :1000] + b)
    np.testing.assert_array_equal(strided, a[:, ::2] * c)
    assert E.add.kernel(D.float32).rows.signatures
    assert E.mul.kernel(D.float32).rows.signatures
    assert cpu.PARALLEL_MIN <= 600 * 1000


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_lean_launches_call_the_compiled_loop_directly(dtype):
    rng = np.random.default_rng(4)
    a, b = rng.random(7).astype(dtype), rng.random(7).astype(dtype)
    x, y = ng.from_numpy(a.copy()), ng.from_numpy(b.copy())
    for _ in range(2):  # the first call finds the entry point, the second calls it
        np.testing.assert_allclose((x * y).numpy(), a * b, rtol=1e-6)
        np.testing.assert_allclose((x**3).numpy(), a**3, rtol=1e-6)
        np.testing.assert_allclose(ng.sin(x).numpy(), np.sin(a), rtol=1e-6)
        assert (x[:0] * y[:0]).shape == (0,)
        # a strided view takes the general path, with the same values
        np.testing.assert_allclose((x[::2] * y[::2]).numpy(), a[::2] * b[::2], rtol=1e-6)
    entries = E.mul._plans[np.dtype(dtype)].entries
    flat = E.mul.kernel(D.from_numpy_dtype(np.dtype(dtype))).FLAT["aa"]
    assert entries["aa"] is not flat and callable(entries["aa"])  # the compiled function itself
    assert len(flat.signatures) == 1  # and no second compile of the loop


def test_permuted_dense_operands_run_over_their_memory_with_pytorchs_layout():
    # an elementwise op on a permuted dense tensor (x.permute, x.t()) and operands laid out
    # alike or of one value: the flat loop over their memory (cpu.dense_order), the result in
    # their layout, as PyTorch's; its whole sum reads the memory in order
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    base = rng.standard_normal((3, 4, 5, 2))
    other = rng.standard_normal((3, 4, 5, 2))
    calls = [lambda L, p, q: p * 2,
             lambda L, p, q: L.sin(p) + q,
             lambda L, p, q: p - L.tensor(0.5, dtype=L.float64),
             lambda L, p, q: p * q.contiguous(),  # (another layout: the general path)
             lambda L, p, q: L.exp(p).sum(),
             lambda L, p, q: (p * q).sum()]
    for call in calls:
        results = []
        for L in (ng, torch):
            x = L.tensor(base, requires_grad=True)
            y = L.tensor(other)
            p, q = x.permute(2, 0, 3, 1), y.permute(2, 0, 3, 1)
            out = call(L, p, q)
            (out * out).sum().backward()
            results.append((out, x.grad))
        (a, ga), (b, gb) = results
        assert a.stride() == b.stride() and tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(ga.numpy(), gb.numpy(), rtol=1e-12)
