"""The geometric distribution: the number of failures before the first success."""

from __future__ import annotations

import numbers

import numpy as np

from .. import factory
from ..autograd.grad_mode import no_grad
from ..nn.functional import binary_cross_entropy_with_logits
from ..tensor import Size, Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Geometric"]


class Geometric(Distribution):
    """Geometric distribution over ``{0, 1, 2, ...}``: ``P(k) = (1 - p) ** k * p`` for the
    success probability ``p`` = ``probs`` (in (0, 1]) or ``sigmoid(logits)``."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        given = probs if probs is not None else logits
        batch_shape = Size() if isinstance(given, numbers.Number) else given.size()
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            # the unit interval admits 0, which has no geometric distribution
            value = self.probs
            valid = value > 0
            if not bool(valid.all()):
                invalid_value = value.detach()[~valid]
                raise ValueError(
                    f"Expected parameter probs "
                    f"({type(value).__name__} of shape {tuple(value.shape)}) "
                    f"of distribution {self!r} "
                    f"to be positive but found invalid values:\n{invalid_value}")

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Geometric, _instance)
        batch_shape = Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
        super(Geometric, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return factory.zeros_like(self.probs)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        tiny = float(np.finfo(self.probs.dtype.np).tiny)
        with no_grad():
            u = factory.empty(shape, dtype=self.probs.dtype, device=self.probs.device)
            u = u.uniform_(tiny, 1)
            # inverse cdf: the number of failures is floor(log(u) / log(1 - p))
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone()
        probs[(probs == 1) & (value == 0)] = 0  # 0 * log(0) is 0 here
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs,
                                                reduction="none") / self.probs
