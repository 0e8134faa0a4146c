"""The Laplace (double exponential) distribution."""

from __future__ import annotations

import math

import numpy as np

from .. import factory
from .. import ops
from ..tensor import Size, Tensor
from .distribution import LocationScale

__all__ = ["Laplace"]


class Laplace(LocationScale):
    """Laplace distribution with location ``loc`` and scale ``scale``:
    density ``exp(-|x - loc| / scale) / (2 * scale)``."""

    @property
    def stddev(self) -> Tensor:
        return math.sqrt(2) * self.scale

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        # u in (-1, 1): excluding -1 keeps log1p(-|u|) finite
        eps = float(np.finfo(self.loc.dtype.np).eps)
        u = factory.empty(shape, dtype=self.loc.dtype, device=self.loc.device)
        u = u.uniform_(eps - 1, 1)
        return self.loc - self.scale * ops.sign(u) * ops.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = value - self.loc
        return 0.5 - 0.5 * ops.sign(z) * ops.expm1(-z.abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * ops.sign(term) * ops.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + (2 * self.scale).log()
