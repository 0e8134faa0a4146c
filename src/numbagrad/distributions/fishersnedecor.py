"""The Fisher-Snedecor (F) distribution."""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..autograd.grad_mode import no_grad
from ..tensor import Size, Tensor
from . import constraints
from .dirichlet import _NO_RSAMPLE
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """F distribution with ``df1`` and ``df2`` degrees of freedom: the ratio of two
    independent chi-squared variables, each divided by its degrees of freedom. (No
    rsample: Gamma has none.)"""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = False

    def __init__(self, df1, df2, validate_args=None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        # Gamma(df / 2, rate=df) is Chi2(df) / (2 df): the 2s cancel in the ratio
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        if isinstance(df1, numbers.Number) and isinstance(df2, numbers.Number):
            batch_shape = Size()
        else:
            batch_shape = self.df1.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(FisherSnedecor, _instance)
        batch_shape = Size(batch_shape)
        new.df1 = self.df1.expand(batch_shape)
        new.df2 = self.df2.expand(batch_shape)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        super(FisherSnedecor, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        df2 = self.df2.clone()
        df2[df2 <= 2] = math.nan
        return df2 / (df2 - 2)

    @property
    def mode(self) -> Tensor:
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        mode[self.df1 <= 2] = math.nan
        return mode

    @property
    def variance(self) -> Tensor:
        df2 = self.df2.clone()
        df2[df2 <= 4] = math.nan
        return (2 * df2.pow(2) * (self.df1 + df2 - 2)
                / (self.df1 * (df2 - 2).pow(2) * (df2 - 4)))

    def sample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            x1 = self._gamma1.sample(sample_shape).view(shape)
            x2 = self._gamma2.sample(sample_shape).view(shape)
            tiny = float(np.finfo(x2.dtype.np).tiny)
            return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def rsample(self, sample_shape=Size()) -> Tensor:
        raise NotImplementedError(_NO_RSAMPLE.format(type(self).__name__))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * value.log()
        t3 = (ct1 + ct2) * (ct3 * value).log1p()
        return t1 + t2 - t3
