"""``numbagrad.special``: the functions of ``torch.special`` numbagrad has. Most are other
names of numbagrad's functions, as they are in PyTorch (``expit`` is ``sigmoid``: its node is
SigmoidBackward0); ``entr`` and ``xlog1py`` are ops of their own, ``ndtr`` is composed as
PyTorch composes it.

The Bessel, Airy and orthogonal-polynomial functions have no derivative in PyTorch: their
results never require grad. ``zeta``, ``gammainc`` and ``gammaincc`` are differentiable in
their second argument only (a backward that reaches the first raises PyTorch's
NotImplementedError)."""

from __future__ import annotations

from . import dtypes as D
from ._tensor import Tensor
from .nn.functional import log_softmax, softmax
from .ops import _general_keywords
from .ops import elementwise as E
from .ops import pointwise as P
from .ops import (  # noqa: F401
    digamma, erf, erfc, erfinv, exp2, expm1, i0, lgamma, log1p, logit, logsumexp, mvlgamma,
    polygamma, round, sigmoid, sinc, xlogy,
)

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
    "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc",
    "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e",
    "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax",
    "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
    "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py",
    "xlogy", "zeta",
]

expit = sigmoid
gammaln = lgamma
psi = digamma
multigammaln = mvlgamma
i1 = E.special_i1.function
entr = E.special_entr.function
xlog1py = E.special_xlog1py.function

_SQRT1_2 = 0.7071067811865476


def ndtr(input):
    """The standard normal distribution function, ``(1 + erf(x / sqrt(2))) / 2`` (PyTorch's
    composition: its node is MulBackward1)."""
    x = input if input.dtype.is_floating_point else input.to(D.default_float)
    return E.mul_scalar(E.add(erf(E.mul_scalar(x, _SQRT1_2)), 1), 0.5)


def _public(name, function, params):
    """``function`` under ``name``, with PyTorch's ``out=`` keyword."""
    function.__name__ = function.__qualname__ = name
    return _general_keywords(name, function, True, params)


def _unary(name, op, which=None, differentiable=True, arg="input", doc=""):
    """``torch.special.<name>``: ``op`` (with its parameter ``which``) on a tensor named
    ``arg``; a function PyTorch does not differentiate takes the input's values only."""
    called = "special_" + name

    def apply(input):
        if not isinstance(input, Tensor):
            raise TypeError(f"{called}(): argument '{arg}' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        if not differentiable:
            input = input.detach()
        return op(input) if which is None else op(input, which)

    if arg == "x":
        def function(x):
            return apply(x)
    else:
        def function(input):
            return apply(input)

    function.__doc__ = doc or op.__doc__
    return _public(name, function, (arg,))


ndtri = _unary("ndtri", E.special_ndtri.function)
log_ndtr = _unary("log_ndtr", E.special_log_ndtr.function)
erfcx = _unary("erfcx", E.special_erfcx.function)
i0e = _unary("i0e", E.special_i0e.function)
i1e = _unary("i1e", E.special_i1e.function)

_BESSEL = "The Bessel function {} of the first or second kind (no derivative, as in PyTorch)."
bessel_j0 = _unary("bessel_j0", E.bessel_jy.function, 0, False, doc=_BESSEL.format("J0"))
bessel_j1 = _unary("bessel_j1", E.bessel_jy.function, 1, False, doc=_BESSEL.format("J1"))
bessel_y0 = _unary("bessel_y0", E.bessel_jy.function, 2, False, doc=_BESSEL.format("Y0"))
bessel_y1 = _unary("bessel_y1", E.bessel_jy.function, 3, False, doc=_BESSEL.format("Y1"))

_MODIFIED = "The modified Bessel function {} (no derivative, as in PyTorch)."
modified_bessel_i0 = _unary("modified_bessel_i0", E.modified_bessel.function, 0, False,
                            doc=_MODIFIED.format("I0"))
modified_bessel_i1 = _unary("modified_bessel_i1", E.modified_bessel.function, 1, False,
                            doc=_MODIFIED.format("I1"))
modified_bessel_k0 = _unary("modified_bessel_k0", E.modified_bessel.function, 4, False,
                            doc=_MODIFIED.format("K0"))
modified_bessel_k1 = _unary("modified_bessel_k1", E.modified_bessel.function, 5, False,
                            doc=_MODIFIED.format("K1"))
scaled_modified_bessel_k0 = _unary("scaled_modified_bessel_k0", E.modified_bessel.function, 6,
                                   False, "x", _MODIFIED.format("K0 times exp(x)"))
scaled_modified_bessel_k1 = _unary("scaled_modified_bessel_k1", E.modified_bessel.function, 7,
                                   False, "x", _MODIFIED.format("K1 times exp(x)"))
spherical_bessel_j0 = _unary("spherical_bessel_j0", E.special_spherical_bessel_j0.function,
                             differentiable=False, arg="x")
airy_ai = _unary("airy_ai", E.special_airy_ai.function, differentiable=False, arg="x")


_NUMBERS = (bool, int, float)


def _operand(a):
    return isinstance(a, (Tensor, *_NUMBERS))


def _polynomial(name, kind, what):
    called = "special_" + name

    def function(x, n):
        if not (_operand(x) and _operand(n)) or not (isinstance(x, Tensor)
                                                     or isinstance(n, Tensor)):
            P.invalid_combination(called, (x, n), ("Tensor x, Tensor n", "Number x, Tensor n",
                                                   "Tensor x, Number n"))
        # (no derivative in PyTorch: the result never requires grad)
        x = x.detach() if isinstance(x, Tensor) else x
        n = n.detach() if isinstance(n, Tensor) else n
        return E.orthogonal_polynomial(x, n, kind)

    function.__doc__ = (f"{what} of degree ``n`` (truncated to an integer; 0 for a negative "
                        "degree) at ``x`` (no derivative, as in PyTorch).")
    return _public(name, function, ("x", "n"))


chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t", 0,
                                     "The Chebyshev polynomial of the first kind T_n")
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u", 1,
                                     "The Chebyshev polynomial of the second kind U_n")
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v", 2,
                                     "The Chebyshev polynomial of the third kind V_n")
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w", 3,
                                     "The Chebyshev polynomial of the fourth kind W_n")
shifted_chebyshev_polynomial_t = _polynomial("shifted_chebyshev_polynomial_t", 4,
                                             "T_n(2x - 1)")
shifted_chebyshev_polynomial_u = _polynomial("shifted_chebyshev_polynomial_u", 5,
                                             "U_n(2x - 1)")
shifted_chebyshev_polynomial_v = _polynomial("shifted_chebyshev_polynomial_v", 6,
                                             "V_n(2x - 1)")
shifted_chebyshev_polynomial_w = _polynomial("shifted_chebyshev_polynomial_w", 7,
                                             "W_n(2x - 1)")
hermite_polynomial_h = _polynomial("hermite_polynomial_h", 8,
                                   "The physicists' Hermite polynomial H_n")
hermite_polynomial_he = _polynomial("hermite_polynomial_he", 9,
                                    "The probabilists' Hermite polynomial He_n")
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l", 10, "The Laguerre polynomial L_n")
legendre_polynomial_p = _polynomial("legendre_polynomial_p", 11, "The Legendre polynomial P_n")


def _zeta(input, other):
    """The Hurwitz zeta function ``sum_k (other + k) ** -input``: differentiable in ``other``
    only, as in PyTorch (either may be a number, not both)."""
    if not (_operand(input) and _operand(other)) or not (isinstance(input, Tensor)
                                                         or isinstance(other, Tensor)):
        P.invalid_combination("special_zeta", (input, other), (
            "Tensor input, Tensor other", "Number self, Tensor other",
            "Tensor input, Number other"))
    return P.special_zeta(input, other)


zeta = _public("zeta", _zeta, ("input", "other"))


def _incomplete_gamma(name, op, checked):
    def function(input, other):
        checked.check(input, other, "special_" + name)
        return op(input, other)

    function.__doc__ = checked.__doc__
    return _public(name, function, ("input", "other"))


gammainc = _incomplete_gamma("gammainc", P.igamma_op, P.igamma)
gammaincc = _incomplete_gamma("gammaincc", P.igammac_op, P.igammac)
