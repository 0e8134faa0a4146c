"""The multinomial distribution: category counts of ``total_count`` categorical draws."""

from __future__ import annotations

import math

from .. import factory
from .. import ops
from ..tensor import Size, Tensor
from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Counts over the last dim of ``probs`` (or ``logits``) of ``total_count`` independent
    categorical draws. ``total_count`` is one int for the whole batch; ``log_prob`` does
    not need it (any total scores)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    total_count: int

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = self._binomial.expand(tuple(batch_shape) + tuple(self.event_shape))
        super(Multinomial, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    def sample(self, sample_shape=Size()) -> Tensor:
        sample_shape = Size(sample_shape)
        draws = self._categorical.sample(Size((self.total_count,) + tuple(sample_shape)))
        # the draws' dim to the end, then counted per category
        draws = draws.permute(*range(1, draws.dim()), 0)
        counts = factory.zeros(tuple(self._extended_shape(sample_shape)), dtype=draws.dtype,
                               device=draws.device)
        counts.scatter_add_(-1, draws, factory.ones_like(draws))
        return counts.type_as(self.probs)

    def entropy(self):
        n = factory.tensor(float(self.total_count), dtype=self.probs.dtype,
                           device=self.probs.device)
        term1 = n * self._categorical.entropy() - ops.lgamma(n + 1)
        # E[sum_i log(x_i!)], each count x_i binomial(n, p_i)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = ops.exp(self._binomial.log_prob(support))
        weights = ops.lgamma(support + 1)
        term2 = (binomial_probs * weights).sum([0, -1])
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        logits = logits.clone()
        log_factorial_n = ops.lgamma(value.sum(-1) + 1)
        log_factorial_xs = ops.lgamma(value + 1).sum(-1)
        logits[(value == 0) & (logits == -math.inf)] = 0  # a count of 0 of an impossible one
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers
