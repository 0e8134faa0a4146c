"""The Kumaraswamy distribution on [0, 1]."""

from __future__ import annotations

import math

from .. import factory
from .. import ops
from ..tensor import Size, Tensor
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _moments(a, b, n):
    """The n-th moment ``b * B(1 + n / a, b)``, the beta function taken through lgamma."""
    arg1 = 1 + n / a
    log_value = ops.lgamma(arg1) + ops.lgamma(b) - ops.lgamma(arg1 + b)
    return b * ops.exp(log_value)


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy distribution, density ``a b x^(a-1) (1 - x^a)^(b-1)`` for ``a`` =
    ``concentration1`` and ``b`` = ``concentration0``: Beta-like, with a closed-form
    inverse cdf, ``(1 - U^(1/b))^(1/a)``, the transforms it is built from."""

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1,
                                                                 concentration0)
        base_dist = Uniform(factory.full_like(self.concentration0, 0),
                            factory.full_like(self.concentration0, 1),
                            validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        batch_shape = Size(batch_shape)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self) -> Tensor:
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Tensor:
        # log of ((a - 1) / (a b - 1)) ** (1 / a); no interior mode when a or b is below 1
        log_mode = (self.concentration0.reciprocal() * (-self.concentration0).log1p()
                    - (-self.concentration0 * self.concentration1).log1p())
        log_mode[(self.concentration0 < 1) | (self.concentration1 < 1)] = math.nan
        return log_mode.exp()

    @property
    def variance(self) -> Tensor:
        return (_moments(self.concentration1, self.concentration0, 2)
                - self.mean.pow(2))

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        H0 = ops.digamma(self.concentration0 + 1) + euler_constant
        return (t0 + t1 * H0 - ops.log(self.concentration1)
                - ops.log(self.concentration0))
