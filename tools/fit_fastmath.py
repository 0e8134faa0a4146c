"""Fits the polynomial of ``exp_float32`` in ``src/numbagrad/backend/fastmath.py`` (run it to
print it; the module's other functions use Taylor series or a Pade approximant, whose
coefficients are closed forms, and erf_float32's fits are described where it is defined).

The fit is a least-squares fit in the Chebyshev basis on Chebyshev nodes of the interval the
kernel evaluates it on (near-minimax), converted to monomial coefficients for Horner's rule.
Targets are computed in NumPy's long double (80-bit on x86), so their own rounding is far
below the float32 result's precision. tests/test_kernels.py measures the function against
NumPy.
"""

from __future__ import annotations

import numpy as np
from numpy.polynomial import chebyshev as C

LD = np.longdouble


def fit(f, lo, hi, degree, nodes=4000):
    """Monomial coefficients (constant first) of a degree-``degree`` fit of ``f`` on
    [lo, hi], and the fit's largest relative error on the nodes."""
    k = np.arange(nodes, dtype=LD)
    t = np.cos((2 * k + 1) * LD(np.pi) / (2 * nodes))  # Chebyshev nodes on [-1, 1]
    x = (LD(lo) + LD(hi)) / 2 + (LD(hi) - LD(lo)) / 2 * t
    y = f(x)
    # fit in the variable u = (2x - lo - hi) / (hi - lo) (well conditioned), then expand
    u = ((2 * x - LD(lo) - LD(hi)) / (LD(hi) - LD(lo))).astype(np.float64)
    cheb = C.chebfit(u, y.astype(np.float64), degree)
    mono_u = C.cheb2poly(cheb)
    # x = a u + b  ->  u = (x - b) / a: re-expand in x
    a, b = (hi - lo) / 2, (hi + lo) / 2
    poly_x = np.polynomial.Polynomial(mono_u)(np.polynomial.Polynomial([-b / a, 1 / a]))
    coef = poly_x.coef
    err = np.max(np.abs((np.polynomial.polynomial.polyval(x.astype(np.float64), coef) - y)
                        / np.where(y == 0, 1, y)))
    return coef, float(err)


def main():
    half_ln2 = float(np.log(2) / 2)
    # exp_float32: exp(r) = 1 + r + r*r * P(r), |r| <= ln(2)/2
    coef, err = fit(lambda r: (np.expm1(r) - r) / (r * r), -half_ln2, half_ln2, 5)
    print("exp_float32 P (constant first):", [float(np.float32(c)) for c in coef], err)

if __name__ == "__main__":
    main()
