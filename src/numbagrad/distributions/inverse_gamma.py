"""The inverse gamma distribution: ``1 / X`` for a gamma variable ``X``."""

from __future__ import annotations

import math

from .. import ops
from ..tensor import Size, Tensor
from . import constraints
from .dirichlet import _NO_RSAMPLE
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """``1 / X`` for ``X ~ Gamma(concentration, rate)``. (No rsample: Gamma has none.)"""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = False

    def __init__(self, concentration, rate, validate_args=None) -> None:
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base_dist.rate.new_ones(())
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    def rsample(self, sample_shape=Size()) -> Tensor:
        raise NotImplementedError(_NO_RSAMPLE.format(type(self).__name__))

    @property
    def concentration(self) -> Tensor:
        return self.base_dist.concentration

    @property
    def rate(self) -> Tensor:
        return self.base_dist.rate

    @property
    def mean(self) -> Tensor:
        result = self.rate / (self.concentration - 1)
        return ops.where(self.concentration > 1, result, math.inf)

    @property
    def mode(self) -> Tensor:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Tensor:
        result = self.rate.square() / ((self.concentration - 1).square()
                                       * (self.concentration - 2))
        return ops.where(self.concentration > 2, result, math.inf)

    def entropy(self):
        c = self.concentration
        return c + self.rate.log() + c.lgamma() - (1 + c) * c.digamma()
