"""The normal (Gaussian) distribution."""

from __future__ import annotations

import math

from .. import ops
from ..autograd.grad_mode import no_grad
from ..tensor import Size, Tensor
from .distribution import LocationScale
from .utils import _standard_normal

__all__ = ["Normal"]


class Normal(LocationScale):
    """Normal distribution with mean ``loc`` and standard deviation ``scale``."""

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def sample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return ops.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        return (-((value - self.loc) ** 2) / (2 * var) - self.scale.log()
                - math.log(math.sqrt(2 * math.pi)))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ops.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * ops.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + ops.log(self.scale)
