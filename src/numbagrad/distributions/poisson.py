"""The Poisson distribution over the nonnegative integers."""

from __future__ import annotations

import numbers

from .. import ops
from ..tensor import Size, Tensor
from . import constraints
from .distribution import Distribution
from .utils import _numpy_sample, broadcast_all

__all__ = ["Poisson"]


class Poisson(Distribution):
    """Poisson distribution: ``P(k) = rate ** k * exp(-rate) / k!``."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None) -> None:
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if isinstance(rate, numbers.Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Poisson, _instance)
        batch_shape = Size(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Poisson, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape=Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        return _numpy_sample(lambda rng, rate: rng.poisson(rate), shape, self.rate, self.rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = ops.broadcast_tensors(self.rate, value)
        return ops.xlogy(value, rate) - rate - ops.lgamma(value + 1)
