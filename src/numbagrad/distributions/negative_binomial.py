"""The negative binomial distribution: the number of successes before ``total_count``
failures."""

from __future__ import annotations

import numpy as np

from .. import ops
from ..nn import functional as F
from ..tensor import Size, Tensor
from . import constraints
from .binomial import _counts_init
from .distribution import Distribution, expand_probs_or_logits
from .gamma import Gamma
from .utils import _numpy_sample, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    """Negative binomial distribution: successes (each of probability ``probs``, or
    ``sigmoid(logits)``) counted until ``total_count`` failures; ``total_count`` need not
    be an integer (a gamma-Poisson mixture)."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None) -> None:
        _counts_init(self, total_count, probs, logits, validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_probs_or_logits(self, NegativeBinomial, batch_shape, _instance,
                                      ("total_count",))

    @property
    def mean(self) -> Tensor:
        return self.total_count * ops.exp(self.logits)

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / ops.sigmoid(-self.logits)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @lazy_property
    def _gamma(self) -> Gamma:
        # the Poisson rate's law: the counts are Poisson(rate) for rate ~ this Gamma
        return Gamma(concentration=self.total_count, rate=ops.exp(-self.logits),
                     validate_args=False)

    def sample(self, sample_shape=Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))

        def draw(rng, total_count, logits):
            return rng.poisson(rng.standard_gamma(total_count) * np.exp(logits))

        return _numpy_sample(draw, shape, self._param, self.total_count, self.logits)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = (self.total_count * F.logsigmoid(-self.logits)
                                 + value * F.logsigmoid(self.logits))
        log_normalization = (-ops.lgamma(self.total_count + value) + ops.lgamma(1.0 + value)
                             + ops.lgamma(self.total_count))
        # total_count = 0 is the point mass at 0: its log-normalizer is 0, not lgamma(0)
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0,
                                                          0.0)
        return log_unnormalized_prob - log_normalization
