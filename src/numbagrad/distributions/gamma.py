"""The gamma distribution."""

from __future__ import annotations

import numbers

from .. import ops, special
from ..tensor import Size, Tensor
from . import constraints
from .dirichlet import _NO_RSAMPLE, _clamped_gamma
from .distribution import Distribution
from .utils import _numpy_sample, broadcast_all

__all__ = ["Gamma"]


class Gamma(Distribution):
    """Gamma distribution with shape ``concentration`` and inverse scale ``rate``."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = False

    def __init__(self, concentration, rate, validate_args=None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        if isinstance(concentration, numbers.Number) and isinstance(rate, numbers.Number):
            batch_shape = Size()
        else:
            batch_shape = self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gamma, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Gamma, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def sample(self, sample_shape=Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        dtype = self.concentration.dtype.np
        return _numpy_sample(lambda rng, c, r: _clamped_gamma(rng, c, r, dtype), shape,
                             self.concentration, self.concentration, self.rate)

    def rsample(self, sample_shape=Size()) -> Tensor:
        raise NotImplementedError(_NO_RSAMPLE.format(type(self).__name__))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c, r = self.concentration, self.rate
        return ops.xlogy(c, r) + ops.xlogy(c - 1, value) - r * value - ops.lgamma(c)

    def entropy(self):
        c = self.concentration
        return c - self.rate.log() + ops.lgamma(c) + (1.0 - c) * ops.digamma(c)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return special.gammainc(self.concentration, self.rate * value)
