"""Scalar math the CPU kernels use in place of libm calls that stop LLVM vectorizing.

PyPI's Numba has no vector math library: ``math.exp`` in a loop is a scalar call to libm
(about 7 ns an element, 9x slower than NumPy's SIMD exp). The functions here are plain
arithmetic, so a loop that calls them vectorizes. The CPU backend pastes their source into each
generated kernel module that needs them (``math.exp(`` becomes ``_exp(``, ``a ** b`` becomes
``_pow(a, b)``), so the on-disk kernel cache sees every change to this file.

Accuracy (measured against NumPy over the whole float range, see tests/test_kernels.py):
``exp_float32`` within 3 ulp, ``exp_float64`` within 2 ulp, including the subnormal range,
overflow to inf, underflow to 0 and NaN; ``erf_float32`` (``math.erf`` in float32 kernels:
GELU and its gradient) within 2 ulp.
"""

from __future__ import annotations

import math  # noqa: F401  (kernel source: erf's and tanh's call math.exp, routed to _exp)

import numpy as np
from numba import types
from numba.extending import intrinsic


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


# The two functions below are kernel source: their literals are typed by the kernel's dtype
# (codegen), so they must not be called from plain Python.


def exp_float32(x):
    # exp(x) = 2**n * exp(r), n = round(x / ln 2), |r| <= ln(2) / 2 (Cephes expf).
    # x is clamped just past where exp overflows (88.72) and where it rounds to 0 (-103.97):
    # the formula itself then gives inf and 0 there, with no select per element for them.
    # Numba's min and max keep a NaN, which then runs through to the result. (The clamp
    # written as two conditional expressions, with a NaN select at the end, made the loop
    # 1.35x slower: 68 against 50 us for 1e5 elements.)
    xc = max(min(x, 89.0), -104.0)
    n = np.floor(xc * 1.4426950408889634 + 0.5)  # np.floor stays a float (math.floor: int)
    r = xc - n * 0.693359375 - n * -2.12194440e-4
    p = 1.9875691500e-4
    p = p * r + 1.3981999507e-3
    p = p * r + 8.3334519073e-3
    p = p * r + 4.1665795894e-2
    p = p * r + 1.6666665459e-1
    p = p * r + 5.0000001201e-1
    p = p * r * r + r + 1.0
    # 2**n as two factors, so subnormal results and n = 128 stay representable
    k = np.int32(n)
    h = k >> np.int32(1)
    e1 = (h + np.int32(127)) << np.int32(23)
    e2 = (k - h + np.int32(127)) << np.int32(23)
    return p * float32_from_bits(e1) * float32_from_bits(e2)


def exp_float64(x):
    # 2**n * exp(r) with a Pade form of exp(r) (Cephes exp); clamped past overflow (709.78)
    # and underflow (-745.13) as in exp_float32
    xc = max(min(x, 710.0), -746.0)
    n = np.floor(xc * 1.4426950408889634 + 0.5)
    r = xc - n * 6.93145751953125e-1 - n * 1.42860682030941723212e-6
    rr = r * r
    px = r * ((1.26177193074810590878e-4 * rr + 3.02994407707441961300e-2) * rr
              + 9.99999999999999999910e-1)
    qx = (((3.00198505138664455042e-6 * rr + 2.52448340349684104192e-3) * rr
           + 2.27265548208155028766e-1) * rr + 2.00000000000000000009e0)
    p = 1.0 + 2.0 * (px / (qx - px))
    k = np.int64(n)
    h = k >> np.int64(1)
    e1 = (h + np.int64(1023)) << np.int64(52)
    e2 = (k - h + np.int64(1023)) << np.int64(52)
    return p * float64_from_bits(e1) * float64_from_bits(e2)


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


def tanh_float32(x):
    # Cephes tanhf: an odd polynomial below |x| = 0.625, 1 - 2 / (exp(2|x|) + 1) above (exp:
    # the routed _exp). Both are computed and one selected, so the loop has no branch; a NaN
    # fails the test and takes the exp form, which keeps it
    a = abs(x)
    z = x * x
    p = (((-5.70498872745e-3 * z + 2.06390887954e-2) * z - 5.37397155531e-2) * z
         + 1.33314422036e-1) * z - 3.33332819422e-1
    big = 1.0 - 2.0 / (math.exp(a + a) + 1.0)
    return x + x * z * p if a < 0.625 else (big if x >= 0.0 else -big)


def tanh_float64(x):
    # Cephes tanh: a rational form below |x| = 0.625, as tanh_float32 above
    a = abs(x)
    z = x * x
    p = (-9.64399179425052238628e-1 * z - 9.92877231001918586564e1) * z \
        - 1.61468768441708447952e3
    q = ((z + 1.12811678491632931402e2) * z + 2.23548839060100448583e3) * z \
        + 4.84406305325125486048e3
    big = 1.0 - 2.0 / (math.exp(a + a) + 1.0)
    return x + x * z * (p / q) if a < 0.625 else (big if x >= 0.0 else -big)


EXP = {"float32": exp_float32, "float64": exp_float64}
ERF = {"float32": erf_float32}  # (float64 keeps libm's erf: this one is float32's accuracy)
TANH = {"float32": tanh_float32, "float64": tanh_float64}
