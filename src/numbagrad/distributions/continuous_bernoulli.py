"""The continuous Bernoulli distribution on [0, 1] (Loaiza-Ganem and Cunningham, 2019)."""

from __future__ import annotations

import math
import numbers

from .. import factory
from .. import ops
from ..autograd.grad_mode import no_grad
from ..nn.functional import binary_cross_entropy_with_logits
from ..tensor import Size, Tensor
from . import constraints
from .distribution import Distribution, expand_probs_or_logits
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(Distribution):
    """Density proportional to ``p ** x * (1 - p) ** (1 - x)`` on [0, 1] for
    ``p`` = ``probs`` (or ``sigmoid(logits)``). Near ``p = 1/2`` (within ``lims``) the
    closed forms cancel catastrophically, so Taylor expansions around 1/2 are used
    there."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501),
                 validate_args=None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, numbers.Number)
            (self.probs,) = broadcast_all(probs)
            # checked before the clamp below would hide values outside [0, 1]
            if validate_args is not None:
                if not bool(self.arg_constraints["probs"].check(self.probs).all()):
                    raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, numbers.Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = Size() if is_scalar else self._param.size()
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_probs_or_logits(self, ContinuousBernoulli, batch_shape, _instance,
                                      kept=("_lims",))

    def _outside_unstable_region(self):
        return self.probs.le(self._lims[0]) | self.probs.gt(self._lims[1])

    def _cut_probs(self):
        # inside the unstable region: a stable stand-in, whose result where() discards
        return ops.where(self._outside_unstable_region(), self.probs,
                         self._lims[0] * factory.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """The log of the normalizing constant ``2 atanh(1 - 2p) / (1 - 2p)``."""
        cut_probs = self._cut_probs()
        below_half = ops.where(cut_probs.le(0.5), cut_probs, factory.zeros_like(cut_probs))
        above_half = ops.where(cut_probs.ge(0.5), cut_probs, factory.ones_like(cut_probs))
        log_norm = (ops.log(ops.abs(ops.log1p(-cut_probs) - ops.log(cut_probs)))
                    - ops.where(cut_probs.le(0.5), ops.log1p(-2.0 * below_half),
                                ops.log(2.0 * above_half - 1.0)))
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return ops.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> Tensor:
        cut_probs = self._cut_probs()
        mus = (cut_probs / (2.0 * cut_probs - 1.0)
               + 1.0 / (ops.log1p(-cut_probs) - ops.log(cut_probs)))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return ops.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    @property
    def variance(self) -> Tensor:
        cut_probs = self._cut_probs()
        variances = (cut_probs * (cut_probs - 1.0) / (1.0 - 2.0 * cut_probs).pow(2)
                     + 1.0 / (ops.log1p(-cut_probs) - ops.log(cut_probs)).pow(2))
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return ops.where(self._outside_unstable_region(), variances, taylor)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def sample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = factory.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        with no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = factory.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return (-binary_cross_entropy_with_logits(logits, value, reduction="none")
                + self._cont_bern_log_norm())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut_probs = self._cut_probs()
        cdfs = ((cut_probs.pow(value) * (1.0 - cut_probs).pow(1.0 - value) + cut_probs - 1.0)
                / (2.0 * cut_probs - 1.0))
        unbounded_cdfs = ops.where(self._outside_unstable_region(), cdfs, value)
        return ops.where(value.le(0.0), factory.zeros_like(value),
                         ops.where(value.ge(1.0), factory.ones_like(value), unbounded_cdfs))

    def icdf(self, value):
        cut_probs = self._cut_probs()
        return ops.where(
            self._outside_unstable_region(),
            (ops.log1p(-cut_probs + value * (2.0 * cut_probs - 1.0)) - ops.log1p(-cut_probs))
            / (ops.log(cut_probs) - ops.log1p(-cut_probs)),
            value)

    def entropy(self):
        log_probs0 = ops.log1p(-self.probs)
        log_probs1 = ops.log(self.probs)
        return (self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm()
                - log_probs0)
