"""Scalar math the CPU kernels use in place of libm calls that stop LLVM vectorizing.

PyPI's Numba has no vector math library: ``math.exp`` in a loop is a scalar call to libm
(about 7 ns an element, 9x slower than NumPy's SIMD exp). The functions here are plain
arithmetic, so a loop that calls them vectorizes. The CPU backend pastes their source into each
generated kernel module that needs them (``math.exp(`` becomes ``exp_float32(`` in a float32
kernel, ``a ** b`` becomes ``_pow(a, b)``), so the on-disk kernel cache sees every change to
this file.

Accuracy (measured against NumPy over the whole float range, see tests/test_kernels.py):
``exp`` within 3 ulp (float32) and 2 ulp (float64), including the subnormal range, overflow
to inf, underflow to 0 and NaN; ``tanh`` and ``log`` in float32 computed in float64 and rounded
once (correctly rounded but for rare double roundings), in float64 within 3 and 2 ulp;
``expm1`` and ``log1p`` likewise in float32, within 4 ulp in float64; float32 ``sin`` and
``cos`` (an exact argument reduction for every float32) within 1 ulp, and their table-free
twins for loops whose arguments are all below 2**19 (``SMALL_TWINS``) the same values;
``erf_float32`` (``math.erf`` in float32 kernels: GELU and its gradient) within 2 ulp.
"""

from __future__ import annotations

import math

import numpy as np
from numba import types
from numba.extending import intrinsic, overload


@intrinsic
def float32_from_bits(typingctx, bits):
    """The float32 whose IEEE bit pattern is the int32 ``bits``."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.float32))

    return types.float32(types.int32), codegen


@intrinsic
def float64_from_bits(typingctx, bits):
    """The float64 whose IEEE bit pattern is the int64 ``bits``."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.float64))

    return types.float64(types.int64), codegen


@intrinsic
def float64_bits(typingctx, x):
    """The int64 IEEE bit pattern of the float64 ``x``."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.int64))

    return types.int64(types.float64), codegen



@intrinsic
def float32_bits(typingctx, x):
    """The int32 IEEE bit pattern of the float32 ``x``."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.int32))

    return types.int32(types.float32), codegen


def _two_over_pi_table():
    """For each float32 exponent field e, three float64 T0, T1, T2 with which ``|x| * Tj``
    gives x 2/pi mod 4 exactly enough for any float32 x of that exponent (Payne and Hanek's
    reduction, without its loop): x = M 2**E with M < 2**24 an integer, and
    G = 2**E 2/pi mod 4 = G0 + G1 + G2 where G0 keeps G's bits down to 2**-27, G1 the next 29
    bits and G2 the rest rounded to float64; Tj = Gj 2**-E. Then |x| T0 = M G0 and |x| T1 =
    M G1 are exact products (24 + 29 bits) and M G0 mod 4 is exact, so the reduced argument is
    accurate to float64's relative precision even next to a multiple of pi/2. Field 255 (inf,
    NaN) gives NaN. 2/pi comes from Machin's formula in integers, to 480 bits."""
    bits = 480
    one = 1 << bits

    def atan_inv(n):  # atan(1/n) * 2**bits by its series
        total, term, k, sign = 0, one // n, 1, 1
        while term:
            total += sign * (term // k)
            term //= n * n
            k += 2
            sign = -sign
        return total

    two_over_pi = (2 * one * one) // (16 * atan_inv(5) - 4 * atan_inv(239))
    table = np.full((3, 256), np.nan)
    for e in range(255):
        E = max(e, 1) - 150
        g = (two_over_pi << E if E >= 0 else two_over_pi >> -E) % (4 << bits)
        g0 = g >> (bits - 27) << (bits - 27)
        g1 = (g - g0) >> (bits - 56) << (bits - 56)
        g2 = g - g0 - g1
        table[0, e] = math.ldexp(g0 >> (bits - 27), -27 - E)
        table[1, e] = math.ldexp(g1 >> (bits - 56), -56 - E)
        table[2, e] = math.ldexp(g2 / (1 << 100), 100 - bits - E)
    return table


TWO_OVER_PI = _two_over_pi_table()


def in_float64(fn):
    """Mark kernel source that computes in float64 whatever the kernel's dtype: its literals
    stay Python floats (float64 in Numba) instead of taking the kernel's dtype."""
    fn.type_literals = False
    return fn


# The functions below are kernel source: the literals of those not marked ``in_float64`` are
# typed by the kernel's dtype (codegen), so they must not be called from plain Python.
# Their polynomials are our own: least-squares Chebyshev fits printed by tools/fit_fastmath.py,
# or Taylor series where those converge fast enough on the reduced interval.


def exp_float32(x):
    # exp(x) = 2**n * exp(r), n = round(x / ln 2), r = x - n ln 2 in two parts (n * the first
    # is exact for |n| < 256), |r| <= ln(2) / 2, exp(r) = 1 + r + r*r * P(r) (fitted).
    # x is clamped just past where exp overflows (88.72) and where it rounds to 0 (-103.97):
    # the formula itself then gives inf and 0 there, with no select per element for them.
    # Numba's min and max keep a NaN, which then runs through to the result. (The clamp
    # written as two conditional expressions, with a NaN select at the end, made the loop
    # 1.35x slower: 68 against 50 us for 1e5 elements.)
    xc = max(min(x, 89.0), -104.0)
    n = np.floor(xc * 1.4426950408889634 + 0.5)  # np.floor stays a float (math.floor: int)
    r = xc - n * 0.69314575 - n * 1.4286068e-06
    p = 0.00019899275503121316
    p = p * r + 0.0013933643931522965
    p = p * r + 0.0083332983776927
    p = p * r + 0.04166646674275398
    p = p * r + 0.1666666716337204
    p = p * r + 0.5
    p = p * r * r + r + 1.0
    # 2**n as two factors, so subnormal results and n = 128 stay representable
    k = np.int32(n)
    h = k >> np.int32(1)
    e1 = (h + np.int32(127)) << np.int32(23)
    e2 = (k - h + np.int32(127)) << np.int32(23)
    return p * float32_from_bits(e1) * float32_from_bits(e2)


@in_float64
def expm1_reduced(r):
    # exp(r) - 1 for |r| <= ln(2) / 2 from the [6/6] Pade approximant of exp, P(r) / P(-r)
    # with P(r) = E(r*r) + r O(r*r) (coefficients (12-k)! 6! / (12! k! (6-k)!), the constant
    # made 1): exp(r) - 1 = 2 r O / (E - r O), relatively accurate at 0; its error is below
    # 2e-19 on the interval
    z = r * r
    ev = ((1.503126503126503e-06 * z + 0.0012626262626262627) * z + 0.11363636363636363) * z
    od = r * ((6.313131313131313e-05 * z + 0.015151515151515152) * z + 0.5)
    return 2.0 * od / (ev + 1.0 - od)


@in_float64
def exp_float64(x):
    # 2**n * exp(r) as exp_float32, with ln 2 in two parts for float64 (n * the first is
    # exact for |n| < 2**21) and exp(r) = 1 + expm1_reduced(r); clamped past overflow
    # (709.78) and underflow (-745.13) as in exp_float32
    xc = max(min(x, 710.0), -746.0)
    n = np.floor(xc * 1.4426950408889634 + 0.5)
    r = xc - n * 0.6931471806019545 - n * -4.2009150715352495e-11
    p = 1.0 + expm1_reduced(r)
    k = np.int64(n)
    h = k >> np.int64(1)
    e1 = (h + np.int64(1023)) << np.int64(52)
    e2 = (k - h + np.int64(1023)) << np.int64(52)
    return p * float64_from_bits(e1) * float64_from_bits(e2)


@in_float64
def expm1_float64(x):
    # exp(x) - 1 = 2**n (1 + q) - 1 = 2**n q + (2**n - 1), q = expm1_reduced(r), so near 0
    # (n = 0) it is q itself; clamped at -40 (where it rounds to -1) and 710 (past overflow,
    # where 2**n is inf); a NaN stays one through min and max, and -0.0 is kept
    xc = max(min(x, 710.0), -40.0)
    n = np.floor(xc * 1.4426950408889634 + 0.5)
    r = xc - n * 0.6931471806019545 - n * -4.2009150715352495e-11
    scale = float64_from_bits((np.int64(n) + np.int64(1023)) << np.int64(52))
    e = scale * expm1_reduced(r) + (scale - 1.0)
    return x if x == 0.0 else e


@in_float64
def expm1_float32(x):
    return np.float32(expm1_float64(np.float64(x)))


@in_float64
def tanh_float64(x):
    # tanh |x| = E / (E + 2), E = exp(2|x|) - 1 = 2**n (1 + q) - 1 with q = expm1_reduced(r):
    # no cancellation near 0 (E is q there). |x| is clamped at 20, where tanh rounds to 1 in
    # float64; a NaN stays one through min and the arithmetic
    a = min(abs(x), 20.0) * 2.0
    n = np.floor(a * 1.4426950408889634 + 0.5)
    r = a - n * 0.6931471806019545 - n * -4.2009150715352495e-11
    scale = float64_from_bits((np.int64(n) + np.int64(1023)) << np.int64(52))
    e = scale * expm1_reduced(r) + (scale - 1.0)
    # (above 0.55 as 1 - 2 / (E + 2), whose rounding errors are smaller there)
    t = 1.0 - 2.0 / (e + 2.0) if a > 1.1 else e / (e + 2.0)
    return math.copysign(t, x)


@in_float64
def tanh_float32(x):
    # tanh_float64 rounded once to float32: correctly rounded but for rare double roundings
    return np.float32(tanh_float64(np.float64(x)))


@in_float64
def log_float64(x):
    # log x = e ln 2 + log m, x = m 2**e with m in [sqrt(1/2), sqrt(2)) (read from the bits;
    # a float32 subnormal is a normal float64), log m = 2 atanh(s), s = (m - 1) / (m + 1),
    # |s| <= 0.172, by its series 2 (s + s**3/3 + ...) to s**21 (the rest is below 3e-17 of
    # it); ln 2 in two parts so e ln 2 keeps float64's precision. Zero, negatives, inf and
    # NaN are selected at the end.
    sub = x < 2.2250738585072014e-308  # a float64 subnormal (or less): scaled by 2**54
    bits = float64_bits(x * 18014398509481984.0 if sub else x)
    e = (bits >> 52) - (1023 + 54 if sub else 1023)
    m = float64_from_bits((bits & 0x000FFFFFFFFFFFFF) | 0x3FF0000000000000)
    high = m > 1.4142135623730951
    m = m * 0.5 if high else m
    e = e + 1 if high else e
    s = (m - 1.0) / (m + 1.0)
    z = s * s
    p = 0.09523809523809523
    p = p * z + 0.10526315789473684
    p = p * z + 0.11764705882352941
    p = p * z + 0.13333333333333333
    p = p * z + 0.15384615384615385
    p = p * z + 0.18181818181818182
    p = p * z + 0.2222222222222222
    p = p * z + 0.2857142857142857
    p = p * z + 0.4
    p = p * z + 0.6666666666666666
    fe = np.float64(e)
    r = fe * 0.6931471806019545 + (fe * -4.2009150715352495e-11 + (s + s + s * z * p))
    r = r if x > 0.0 else (-math.inf if x == 0.0 else math.nan)
    return x if x == math.inf else r


@in_float64
def log1p_float64(x):
    # log(u) x / (u - 1) with u = 1 + x rounded: the factor corrects for u's rounding (the
    # usual device; u - 1 is exact); x itself where u rounds to 1, and inf at inf
    u = 1.0 + x
    r = log_float64(u) * (x / (u - 1.0)) if u != 1.0 else x
    return x if x == math.inf else r


@in_float64
def log1p_float32(x):
    # 1 + x is exact in float64 for a float32 |x| >= 2**-20 (within 2**-53 of it from 2**53
    # on), so log(1 + x) needs no correction (nor log1p_float64's division, which keeps the
    # loop from vectorizing); below, x - x**2 / 2 (the next term is under float32's precision,
    # and -0.0 stays -0.0)
    a = np.float64(x)
    r = log_float64(1.0 + a)
    return np.float32(r if abs(a) >= 9.5367431640625e-07 else a - a * a * 0.5)


@in_float64
def log_float32(x):
    # log_float64 rounded once to float32
    return np.float32(log_float64(np.float64(x)))


@in_float64
def sin_quarter_turns(x, turns):
    # sin(pi/2 (|x| 2/pi + turns)) for a float32 x: turns 0 gives sin |x|, 1 gives cos x.
    # |x| 2/pi + turns mod 4 from TWO_OVER_PI (exact parts first), then reduced mod 2 to
    # f in [-1, 1], r = f pi/2 (sin_turned)
    e = max((float32_bits(np.float32(x)) >> 23) & 0xFF, 1)
    a = abs(np.float64(x))
    p0 = a * TWO_OVER_PI[0, e] + turns
    p0 = p0 - 4.0 * np.floor(p0 * 0.25)
    p1 = a * TWO_OVER_PI[1, e]
    n = np.floor((p0 + p1) * 0.5 + 0.5)
    return sin_turned(((p0 - (n + n)) + p1 + a * TWO_OVER_PI[2, e]) * 1.5707963267948966, n)


@in_float64
def sin_quarter_turns_small(x, turns):
    # sin_quarter_turns for |x| < SMALL_BELOW, without the table (whose lookups are gathers
    # in a vector loop: 2.9 against 0.8 ns a value): m = 2n - turns, the multiple of pi/2
    # next to |x|, and r = |x| - m pi/2 with pi/2 in three parts (Cody and Waite) of 32, 32
    # and 53 bits, so that m P1 and m P2 are exact for m < 2**21 and so is |x| - m P1 next to a
    # multiple; r's error is then ~2**-96, far below the least |r| of any float32 there. The
    # same values as sin_quarter_turns over every float32 below the bound (checked whole).
    a = abs(np.float64(x))
    n = np.floor((a * 0.6366197723675814 + turns) * 0.5 + 0.5)
    m = (n + n) - turns
    return sin_turned(((a - m * 1.5707963267341256) - m * 6.077100506303966e-11)
                      - m * 2.0222662487959506e-21, n)


@in_float64
def sin_turned(r, n):
    # sin(r + n pi) = (-1)**n sin r for |r| <= pi/2, sin r by its Taylor series to r**15
    # (the rest is below 7e-12 of it there)
    z = r * r
    p = -7.647163731819816e-13
    p = p * z + 1.6059043836821613e-10
    p = p * z - 2.505210838544172e-08
    p = p * z + 2.7557319223985893e-06
    p = p * z - 0.0001984126984126984
    p = p * z + 0.008333333333333333
    p = p * z - 0.16666666666666666
    v = r + r * z * p
    return -v if np.int64(n) & 1 else v


@in_float64
def sin_float32(x):
    # (times the sign of x, not copysign: sin |x| may be negative; -0.0 stays -0.0)
    return np.float32(sin_quarter_turns(x, 0.0) * math.copysign(1.0, np.float64(x)))


@in_float64
def cos_float32(x):
    return np.float32(sin_quarter_turns(x, 1.0))


# sin_float32 and cos_float32 for arguments below SMALL_BELOW in magnitude: a loop whose every
# argument of them is (``codegen.split_ranges``) calls these instead
@in_float64
def sin_small_float32(x):
    return np.float32(sin_quarter_turns_small(x, 0.0) * math.copysign(1.0, np.float64(x)))


@in_float64
def cos_small_float32(x):
    return np.float32(sin_quarter_turns_small(x, 1.0))


def all_below(x, bound):
    """Whether every value of ``x`` (an array or a number) is below ``bound`` in magnitude
    (NaN is not): the test before a loop that calls the small twins (kernel source only)."""
    raise NotImplementedError("all_below is compiled into kernels only")


@overload(all_below, jit_options={"error_model": "numpy"})
def _all_below(x, bound):
    if isinstance(x, types.Array):
        if x.layout == "C":
            def below(x, bound):  # (an and over the whole array: the loop vectorizes)
                v = x.reshape(x.size)
                ok = True
                for j in range(v.shape[0]):
                    ok &= abs(v[j]) < bound
                return ok
        elif x.ndim == 1:
            def below(x, bound):
                ok = True
                for j in range(x.shape[0]):
                    ok &= abs(x[j]) < bound
                return ok
        else:
            def below(x, bound):
                ok = True
                for v in np.nditer(x):
                    ok &= abs(v.item()) < bound
                return ok
        return below
    if isinstance(x, (types.Float, types.Integer, types.Boolean)):
        return lambda x, bound: abs(x) < bound
    return lambda x, bound: False


SMALL_BELOW = 524288.0  # 2**19
SMALL_TWINS = {"sin_float32": ("sin_small_float32", SMALL_BELOW),
               "cos_float32": ("cos_small_float32", SMALL_BELOW)}


def erf_float32(x):
    # |x| < 1: x + x * r(x * x); above: sign(x) * (1 - exp(-x * x + q(t))), q(t) = log(erfc(t))
    # + t * t written in u = (t - 2.5) / 1.5 over [1, 4]; from 4 on erf rounds to +-1 (t is
    # clamped there; a NaN stays one). Both polynomials are least-squares Chebyshev fits made
    # for numbagrad (numpy.polynomial.chebyshev.chebfit, degrees 6 and 9): within 1.1 ulp of
    # the correctly rounded erf over [-5, 5] (tests/test_kernels.py). Both sides are computed
    # and one is selected, so the loop vectorizes.
    t = min(abs(x), 4.0)
    s = t * t
    r = 7.933381999744174e-05
    r = r * s - 0.0008034813593287845
    r = r * s + 0.005191214663779523
    r = r * s - 0.026855397479865744
    r = r * s + 0.11283625675272523
    r = r * s - 0.3761262987247353
    r = r * s + 0.12837916659171694
    small = x + x * r
    u = (t - 2.5) * 0.6666666666666666
    q = -2.5305397880671097e-06
    q = q * u + 4.13664234458161e-05
    q = q * u - 0.0002217096648183833
    q = q * u + 0.0008815712462765141
    q = q * u - 0.0031947431450426614
    q = q * u + 0.010961123870902981
    q = q * u - 0.03664630870652346
    q = q * u + 0.12623930941968564
    q = q * u - 0.5290211105756345
    q = q * u - 1.5568152770527501
    big = math.copysign(1.0 - math.exp(q - s), x)
    return small if t < 1.0 else big


def pow_(x, y):
    # small integer exponents as products: libm's pow is a scalar call that blocks vectorizing
    if y == 2:
        return x * x
    if y == 1:
        return x
    if y == 3:
        return x * x * x
    return x**y


# The libm calls CPU kernels route to this module, per dtype (float64 keeps libm's erf:
# erf_float32 has float32's accuracy), and every function a routed one may call.
ROUTES = {
    "float32": {"math.exp(": exp_float32, "math.tanh(": tanh_float32, "math.log(": log_float32,
                "math.erf(": erf_float32, "math.sin(": sin_float32, "math.cos(": cos_float32,
                "math.expm1(": expm1_float32, "math.log1p(": log1p_float32},
    "float64": {"math.exp(": exp_float64, "math.tanh(": tanh_float64, "math.log(": log_float64,
                "math.expm1(": expm1_float64, "math.log1p(": log1p_float64},
}
HELPERS = (exp_float32, expm1_reduced, exp_float64, expm1_float64, expm1_float32, tanh_float64,
           tanh_float32, log_float64, log_float32, log1p_float64, log1p_float32, erf_float32,
           sin_quarter_turns, sin_turned, sin_float32, cos_float32, sin_quarter_turns_small,
           sin_small_float32, cos_small_float32)

