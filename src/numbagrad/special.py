"""``numbagrad.special``: the functions of ``torch.special`` numbagrad has. Most are other
names of numbagrad's functions, as they are in PyTorch (``expit`` is ``sigmoid``: its node is
SigmoidBackward0); ``entr`` and ``xlog1py`` are ops of their own, ``ndtr`` is composed as
PyTorch composes it."""

from __future__ import annotations

from . import dtypes as D
from .nn.functional import log_softmax, softmax
from .ops import elementwise as E
from .ops import (  # noqa: F401
    digamma, erf, erfc, erfinv, exp2, expm1, i0, lgamma, log1p, logit, logsumexp, mvlgamma,
    polygamma, round, sigmoid, sinc, xlogy,
)

__all__ = ["digamma", "entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammaln",
           "i0", "i1", "log1p", "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr",
           "polygamma", "psi", "round", "sinc", "softmax", "xlog1py", "xlogy"]

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
