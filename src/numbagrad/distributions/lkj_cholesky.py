"""The LKJ distribution over the Cholesky factors of correlation matrices (Lewandowski,
Kurowicka and Joe, "Generating random correlation matrices based on vines and extended
onion method", J. Multivariate Analysis 100, 2009)."""

from __future__ import annotations

import math

import numpy as np

from .. import factory
from .. import ops
from ..autograd.grad_mode import no_grad
from ..tensor import Size, Tensor
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ["LKJCholesky"]


class _CorrCholesky(constraints.Constraint):
    """Lower-triangular matrices with a positive diagonal and rows of unit Euclidean norm:
    the Cholesky factors of correlation matrices."""

    event_dim = 2

    def check(self, value):
        tol = float(np.finfo(value.dtype.np).eps) * value.shape[-1] * 10
        lower = (value.tril() == value).flatten(-2).all(-1)
        positive_diagonal = (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)
        row_norm = value.norm(dim=-1)
        unit_rows = ((row_norm - 1.0).abs() <= tol).all(-1)
        return lower & positive_diagonal & unit_rows


# (constraints.corr_cholesky, where the constraints module has none)
corr_cholesky = getattr(constraints, "corr_cholesky", None) or _CorrCholesky()


class LKJCholesky(Distribution):
    """The LKJ distribution over ``dim x dim`` lower Cholesky factors ``L`` of correlation
    matrices ``C = L L^T``: the density of ``C`` is proportional to ``det(C) ** (eta - 1)``,
    ``eta`` the ``concentration`` (1: uniform over correlation matrices). The density of ``L``
    (over its strictly lower entries) is
    ``prod_{i >= 1} L_ii ** (2 (eta - 1) + dim - 1 - i) / Z`` (rows ``i`` from 0).

    Samples come from the onion method: row ``i`` of ``L`` is ``(sqrt(y) u, sqrt(1 - y))``,
    ``u`` uniform on the unit sphere in ``R^i`` and
    ``y ~ Beta(i / 2, eta + (dim - 1 - i) / 2)``."""

    arg_constraints = {"concentration": constraints.positive}
    support = corr_cholesky
    has_rsample = False

    def __init__(self, dim, concentration=1.0, validate_args=None) -> None:
        if dim < 2:
            raise ValueError(
                f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = Size((dim, dim))
        self._beta = self._row_betas()
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def _row_betas(self) -> Beta:
        """The Beta laws of ``y`` for rows 0 .. dim-1, as a batch (..., dim); row 0 (with no
        off-diagonal entries) gets the unused Beta(1/2, eta + (dim - 2) / 2)."""
        c = self.concentration
        i = factory.arange(self.dim, dtype=c.dtype, device=c.device)
        conc1 = (i / 2).clamp(min=0.5)
        conc0 = (c.unsqueeze(-1) + (self.dim - 1) / 2) - (i / 2).clamp(min=0.5)
        return Beta(conc1.expand(conc0.shape), conc0)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=Size()) -> Tensor:
        with no_grad():
            c = self.concentration
            y = self._beta.sample(sample_shape).unsqueeze(-1)  # (..., dim, 1)
            shape = self._extended_shape(sample_shape)
            z = _standard_normal(shape, dtype=c.dtype, device=c.device).tril(-1)
            # each row's direction, uniform on its sphere (row 0 has none)
            norm = z.norm(dim=-1, keepdim=True)
            u = z / norm.clamp(min=float(np.finfo(c.dtype.np).tiny))
            w = y.sqrt() * u
            eye = factory.eye(self.dim, dtype=c.dtype, device=c.device)
            diag = (1 - w.pow(2).sum(-1)).clamp(min=float(np.finfo(c.dtype.np).tiny)).sqrt()
            return w + diag.unsqueeze(-1) * eye

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        eta = self.concentration
        dim = self.dim
        diag = value.diagonal(dim1=-2, dim2=-1)[..., 1:]
        i = factory.arange(1, dim, dtype=eta.dtype, device=eta.device)
        power = 2 * (eta.unsqueeze(-1) - 1) + (dim - 1) - i
        unnormalized = (power * diag.log()).sum(-1)
        # log Z = sum_{i=1}^{dim-1} [lgamma(eta + (dim - 1 - i) / 2) + (i / 2) log pi]
        #         - (dim - 1) lgamma(eta + (dim - 1) / 2)
        a = eta.unsqueeze(-1) + (dim - 1 - i) / 2
        log_z = (ops.lgamma(a).sum(-1) + dim * (dim - 1) / 4 * math.log(math.pi)
                 - (dim - 1) * ops.lgamma(eta + (dim - 1) / 2))
        return unnormalized - log_z
