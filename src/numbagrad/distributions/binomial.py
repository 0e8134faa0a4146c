"""The binomial distribution: the number of successes in ``total_count`` trials."""

from __future__ import annotations

import numpy as np

from .. import factory
from .. import ops
from ..tensor import Size, Tensor
from . import constraints
from .distribution import Distribution, expand_probs_or_logits
from .utils import _numpy_sample, broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Binomial"]


def _clamp_by_zero(x: Tensor) -> Tensor:
    """``max(x, 0)`` with a gradient of 1/2 at 0 (that of the average of both sides)."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


def _counts_init(d, total_count, probs, logits, validate_args) -> None:
    """``total_count`` and ``probs`` (or ``logits``) broadcast together, the count in their
    dtype: the parameters of Binomial and NegativeBinomial."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    if probs is not None:
        d.total_count, d.probs = broadcast_all(total_count, probs)
        d.total_count = d.total_count.type_as(d.probs)
    else:
        d.total_count, d.logits = broadcast_all(total_count, logits)
        d.total_count = d.total_count.type_as(d.logits)
    d._param = d.probs if probs is not None else d.logits
    Distribution.__init__(d, d._param.size(), validate_args=validate_args)


class Binomial(Distribution):
    """Binomial distribution of ``total_count`` Bernoulli trials of success probability
    ``probs`` (or log-odds ``logits``); ``total_count`` broadcasts with them."""

    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None) -> None:
        _counts_init(self, total_count, probs, logits, validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_probs_or_logits(self, Binomial, batch_shape, _instance, ("total_count",))

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def sample(self, sample_shape=Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        return _numpy_sample(lambda rng, n, p: rng.binomial(n.astype(np.int64), p), shape,
                             self._param, self.total_count, self.probs)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_factorial_n = ops.lgamma(n + 1)
        log_factorial_k = ops.lgamma(value + 1)
        log_factorial_nmk = ops.lgamma(n - value + 1)
        # n * log(1 + exp(logits)), written so that it neither overflows nor cancels
        normalize_term = (n * _clamp_by_zero(logits)
                          + n * ops.log1p(ops.exp(-ops.abs(logits))) - log_factorial_n)
        return value * logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(ops.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError(
                "Inhomogeneous total count not supported by `enumerate_support`.")
        values = factory.arange(1 + total_count, dtype=self._param.dtype,
                                device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
