"""The beta distribution on [0, 1]: a two-component Dirichlet."""

from __future__ import annotations

import numbers

from .. import factory
from .. import ops
from ..tensor import Size, Tensor
from . import constraints
from .dirichlet import _NO_RSAMPLE, Dirichlet
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Beta"]


class Beta(Distribution):
    """Beta distribution with density proportional to
    ``x ** (concentration1 - 1) * (1 - x) ** (concentration0 - 1)``."""

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = False

    def __init__(self, concentration1, concentration0, validate_args=None) -> None:
        if isinstance(concentration1, numbers.Number) and isinstance(
                concentration0, numbers.Number):
            pair = factory.tensor([float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            pair = ops.stack([concentration1, concentration0], -1)
        # (x, 1 - x) is Dirichlet((concentration1, concentration0))
        self._dirichlet = Dirichlet(pair, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = Size(batch_shape)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        super(Beta, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def concentration1(self) -> Tensor:
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self) -> Tensor:
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def sample(self, sample_shape=Size()) -> Tensor:
        return self._dirichlet.sample(sample_shape)[..., 0]

    def rsample(self, sample_shape=Size()) -> Tensor:
        raise NotImplementedError(_NO_RSAMPLE.format(type(self).__name__))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = ops.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self):
        return self._dirichlet.entropy()
