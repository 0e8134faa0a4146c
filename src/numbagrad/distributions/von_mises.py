"""The von Mises distribution: the circular analogue of the normal distribution."""

from __future__ import annotations

import math
import numbers

from .. import dtypes as D
from .. import factory
from .. import ops
from .. import special
from ..autograd.grad_mode import no_grad
from ..tensor import Size, Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]


class VonMises(Distribution):
    """Von Mises distribution on the circle, with mean direction ``loc`` and concentration
    ``concentration`` (``kappa``): density ``exp(kappa cos(x - loc)) / (2 pi I0(kappa))``.
    Samples lie in ``[-pi, pi)``; they are drawn by Best and Fisher's rejection method
    (Applied Statistics 28, 1979), which has no reparameterized gradient."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        if isinstance(loc, numbers.Number) and isinstance(concentration, numbers.Number):
            batch_shape = Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        k = self.concentration
        # log I0(k) = log(i0e(k)) + k, finite for large k
        return (k * ops.cos(value - self.loc) - math.log(2 * math.pi)
                - (special.i0e(k).log() + k))

    @lazy_property
    def _proposal_r(self) -> Tensor:
        """Best and Fisher's ``r = (1 + rho^2) / (2 rho)`` of the wrapped-Cauchy envelope, in
        float64 (the acceptance test loses its accuracy in float32)."""
        k = self.concentration.detach().to(D.float64)
        tau = 1 + (1 + 4 * k * k).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * k)
        r = (1 + rho * rho) / (2 * rho)
        # for a tiny k, rho underflows towards 0 (and r overflows): r ~ 1/k + k there
        return ops.where(k < 1e-5, 1 / k + k, r)

    def sample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            k = self.concentration.detach().to(D.float64).expand(shape)
            r = self._proposal_r.expand(shape)
            x = factory.zeros(shape, dtype=D.float64, device=self.loc.device)
            done = factory.zeros(shape, dtype=D.bool_, device=self.loc.device)
            while not bool(done.all()):
                u1, u2, u3 = (factory.rand(shape, dtype=D.float64, device=self.loc.device)
                              for _ in range(3))
                z = ops.cos(math.pi * u1)
                f = (1 + r * z) / (r + z)
                c = k * (r - f)
                # the quick test, then the exact one
                accept = (c * (2 - c) - u2 > 0) | ((c / u2).log() + 1 - c >= 0)
                theta = ops.sign(u3 - 0.5) * ops.acos(f.clamp(-1, 1))
                new = accept & ~done
                x = ops.where(new, theta, x)
                done = done | accept
            # the angle about loc, wrapped into [-pi, pi)
            loc = self.loc.detach().to(D.float64)
            x = ops.remainder(x + loc + math.pi, 2 * math.pi) - math.pi
            return x.to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(VonMises, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        super(VonMises, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        """The mean direction (``loc``), not the mean of samples on ``[-pi, pi)``."""
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:
        """The circular variance ``1 - I1(k) / I0(k)``."""
        k = self.concentration
        return 1 - special.i1e(k) / special.i0e(k)
