"""The Cauchy (Lorentz) distribution."""

from __future__ import annotations

import math

from .. import factory
from .. import ops
from ..tensor import Size, Tensor
from .distribution import LocationScale

__all__ = ["Cauchy"]


class Cauchy(LocationScale):
    """Cauchy distribution with median ``loc`` and half width at half maximum ``scale``:
    the ratio of two independent standard normals, scaled and shifted. It has no mean and
    an infinite variance."""

    @property
    def mean(self) -> Tensor:
        return factory.full(self._extended_shape(), math.nan, dtype=self.loc.dtype,
                            device=self.loc.device)

    @property
    def variance(self) -> Tensor:
        return factory.full(self._extended_shape(), math.inf, dtype=self.loc.dtype,
                            device=self.loc.device)

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        # the inverse cdf of uniform noise (numbagrad has no Tensor.cauchy_)
        u = factory.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        eps = ops.tan(math.pi * (u - 0.5))
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (-math.log(math.pi) - self.scale.log()
                - (((value - self.loc) / self.scale) ** 2).log1p())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ops.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return ops.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
