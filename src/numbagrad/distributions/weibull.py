"""The two-parameter Weibull distribution."""

from __future__ import annotations

from .. import factory
from .. import ops
from ..tensor import Size, Tensor
from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all, euler_constant

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """Weibull distribution with scale ``scale`` and shape ``concentration``:
    ``scale * E ** (1 / concentration)`` for ``E ~ Exponential(1)``."""

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(factory.ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        batch_shape = Size(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(batch_shape)
        transforms = [PowerTransform(exponent=new.concentration_reciprocal),
                      AffineTransform(loc=0, scale=new.scale)]
        super(Weibull, new).__init__(base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.scale * ops.exp(ops.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self) -> Tensor:
        return (self.scale * ((self.concentration - 1) / self.concentration)
                ** self.concentration.reciprocal())

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (
            ops.exp(ops.lgamma(1 + 2 * self.concentration_reciprocal))
            - ops.exp(2 * ops.lgamma(1 + self.concentration_reciprocal)))

    def entropy(self):
        return (euler_constant * (1 - self.concentration_reciprocal)
                + ops.log(self.scale * self.concentration_reciprocal) + 1)
