"""The Dirichlet distribution over the probability simplex."""

from __future__ import annotations

import numpy as np

from .. import ops
from ..nn import functional as F
from ..tensor import Size, Tensor
from . import constraints
from .distribution import Distribution
from .utils import _numpy_sample

__all__ = ["Dirichlet"]

_NO_RSAMPLE = ("{} has no reparameterized sampler in numbagrad: PyTorch's rsample "
               "differentiates the sample implicitly through the gamma CDF, which numbagrad "
               "does not implement. Use sample() (no gradient) instead.")


def _clamped_gamma(rng, concentration, rate, dtype):
    """Gamma(concentration, rate) draws, clamped to the dtype's smallest normal number so
    that their logs stay finite."""
    values = rng.standard_gamma(concentration) / rate
    return np.maximum(values.astype(dtype), np.finfo(dtype).tiny)


class Dirichlet(Distribution):
    """Dirichlet distribution with density proportional to ``prod(x_i ** (c_i - 1))`` over
    the last dim of ``concentration``."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = False

    def __init__(self, concentration, validate_args=None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(Size(batch_shape), Size(event_shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(tuple(batch_shape) + tuple(self.event_shape))
        super(Dirichlet, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Tensor:
        concentration_m1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentration_m1 / concentration_m1.sum(-1, keepdim=True)
        # with every concentration below 1 the density peaks at the vertex of the largest:
        # written in place, as PyTorch's (so the node is CopySlices)
        mask = (self.concentration < 1).all(dim=-1)
        mode[mask] = F.one_hot(mode[mask].argmax(dim=-1), concentration_m1.shape[-1]).to(mode)
        return mode

    @property
    def variance(self) -> Tensor:
        con0 = self.concentration.sum(-1, keepdim=True)
        return (self.concentration * (con0 - self.concentration)
                / (con0.pow(2) * (con0 + 1)))

    def sample(self, sample_shape=Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        dtype = self.concentration.dtype.np

        def draw(rng, concentration):
            gammas = _clamped_gamma(rng, concentration, 1.0, dtype)
            return np.maximum(gammas / gammas.sum(-1, keepdims=True), np.finfo(dtype).tiny)

        return _numpy_sample(draw, shape, self.concentration, self.concentration)

    def rsample(self, sample_shape=Size()) -> Tensor:
        raise NotImplementedError(_NO_RSAMPLE.format(type(self).__name__))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (ops.xlogy(c - 1.0, value).sum(-1) + ops.lgamma(c.sum(-1))
                - ops.lgamma(c).sum(-1))

    def entropy(self):
        k = self.concentration.size(-1)
        c = self.concentration
        a0 = c.sum(-1)
        return (ops.lgamma(c).sum(-1) - ops.lgamma(a0) - (k - a0) * ops.digamma(a0)
                - ((c - 1.0) * ops.digamma(c)).sum(-1))
