"""Student's t distribution."""

from __future__ import annotations

import math

from .. import ops
from ..autograd.grad_mode import no_grad
from ..tensor import Size, Tensor
from . import constraints
from .chi2 import Chi2
from .dirichlet import _NO_RSAMPLE
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t distribution with ``df`` degrees of freedom, location ``loc`` and scale
    ``scale``: ``loc + scale * X / sqrt(Z / df)`` for a standard normal ``X`` and
    ``Z ~ Chi2(df)``. (No rsample: that of the chi-squared part is missing, see Gamma.)"""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = Size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        super(StudentT, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        m = self.loc.clone()
        m[self.df <= 1] = math.nan  # no mean for df <= 1
        return m

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        df, scale = self.df, self.scale
        m = df.clone()
        finite = df > 2
        m[finite] = scale[finite].pow(2) * df[finite] / (df[finite] - 2)
        m[(df <= 2) & (df > 1)] = math.inf
        m[df <= 1] = math.nan
        return m

    def sample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            x = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
            z = self._chi2.sample(sample_shape)
            return self.loc + self.scale * x * ops.rsqrt(z / self.df)

    def rsample(self, sample_shape=Size()) -> Tensor:
        raise NotImplementedError(_NO_RSAMPLE.format(type(self).__name__))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        log_norm = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
                    + ops.lgamma(0.5 * self.df) - ops.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * ops.log1p(y**2.0 / self.df) - log_norm

    def entropy(self):
        df = self.df
        lbeta = ops.lgamma(0.5 * df) + math.lgamma(0.5) - ops.lgamma(0.5 * (df + 1))
        return (self.scale.log()
                + 0.5 * (df + 1) * (ops.digamma(0.5 * (df + 1)) - ops.digamma(0.5 * df))
                + 0.5 * df.log() + lbeta)
