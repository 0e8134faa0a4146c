"""The multivariate normal distribution, parameterized by a covariance, a precision or a
lower-triangular scale matrix (the covariance's Cholesky factor)."""

from __future__ import annotations

import math

from .. import factory
from .. import linalg
from ..ops import shaping
from ..tensor import Size, Tensor
from . import constraints
from .distribution import Distribution
from .utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mahalanobis(L: Tensor, x: Tensor) -> Tensor:
    """The squared norm of ``L^{-1} x`` over the last dim: ``x^T (L L^T)^{-1} x``; the batch
    dims of ``L`` (..., n, n) and ``x`` (..., n) broadcast."""
    z = linalg.solve_triangular(L, x.unsqueeze(-1), upper=False).squeeze(-1)
    return z.pow(2).sum(-1)


def _half_log_det(L: Tensor) -> Tensor:
    """Half the log-determinant of ``L L^T``: the sum of the logs of ``L``'s diagonal."""
    return L.diagonal(dim1=-2, dim2=-1).log().sum(-1)


class ScaleTrilMatrices:
    """The matrices of a distribution parameterized by a Cholesky factor (MultivariateNormal,
    Wishart), each from its ``_unbroadcasted_scale_tril`` broadcast to ``_matrix_shape()``."""

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        eye = factory.eye(L.shape[-1], dtype=L.dtype, device=L.device)
        L_inv = linalg.solve_triangular(L, eye, upper=False)
        return (L_inv.mT @ L_inv).expand(self._matrix_shape())


class MultivariateNormal(ScaleTrilMatrices, Distribution):
    """Multivariate normal with mean ``loc`` and exactly one of ``covariance_matrix``,
    ``precision_matrix`` or ``scale_tril`` (lower triangular, positive diagonal)."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (
                precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        name, matrix = next((n, m) for n, m in (("scale_tril", scale_tril),
                                                ("covariance_matrix", covariance_matrix),
                                                ("precision_matrix", precision_matrix))
                            if m is not None)
        if matrix.dim() < 2:
            label = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{label} must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        batch_shape = Size(shaping.broadcast_shapes(tuple(matrix.shape[:-2]),
                                                tuple(loc.shape[:-1])))
        event_shape = Size(tuple(loc.shape[-1:]))
        setattr(self, name, matrix.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        # the factor of the matrix as given, before broadcasting: the cheapest to work with
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = linalg.cholesky(linalg.inv(precision_matrix))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        cov_shape = loc_shape + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        super(MultivariateNormal, new).__init__(batch_shape, self.event_shape,
                                                validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self) -> tuple:
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return (self._unbroadcasted_scale_tril.pow(2).sum(-1)
                .expand(tuple(self._batch_shape) + tuple(self._event_shape)))

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        half_log_det = _half_log_det(self._unbroadcasted_scale_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self):
        half_log_det = _half_log_det(self._unbroadcasted_scale_tril)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        if len(self._batch_shape) == 0:
            return H  # (not expanded: its node is AddBackward0, as PyTorch's)
        return H.expand(self._batch_shape)
