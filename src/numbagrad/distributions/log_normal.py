"""The log-normal distribution: ``exp`` of a normal variable."""

from __future__ import annotations

from ..tensor import Size, Tensor
from . import constraints
from .distribution import Distribution
from .normal import Normal

__all__ = ["LogNormal"]


class LogNormal(Distribution):
    """``exp(X)`` for ``X ~ Normal(loc, scale)``. PyTorch builds it as a
    TransformedDistribution of ``base_dist`` under exp; this class has the same values,
    repr and support."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None) -> None:
        self.base_dist = Normal(loc, scale, validate_args=validate_args)
        super().__init__(self.base_dist.batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogNormal, _instance)
        batch_shape = Size(batch_shape)
        new.base_dist = self.base_dist.expand(batch_shape)
        super(LogNormal, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def loc(self) -> Tensor:
        return self.base_dist.loc

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mean(self) -> Tensor:
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self) -> Tensor:
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self) -> Tensor:
        scale_sq = self.scale.pow(2)
        return scale_sq.expm1() * (2 * self.loc + scale_sq).exp()

    def sample(self, sample_shape=Size()) -> Tensor:
        return self.base_dist.sample(sample_shape).exp()

    def rsample(self, sample_shape=Size()) -> Tensor:
        return self.base_dist.rsample(sample_shape).exp()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        x = value.log()
        # the density of exp(X) at y is X's density at log(y) times |d log(y)/dy| = 1/y
        return self.base_dist.log_prob(x) - x

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.base_dist.cdf(value.log())

    def entropy(self):
        return self.base_dist.entropy() + self.loc
