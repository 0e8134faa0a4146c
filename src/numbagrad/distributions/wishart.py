"""The Wishart distribution over positive-definite matrices, parameterized by its degrees of
freedom and a covariance, a precision or a lower-triangular scale matrix (the covariance's
Cholesky factor)."""

from __future__ import annotations

import math
import numbers
import warnings

from .. import factory
from .. import linalg
from .. import ops
from .. import special
from ..autograd.grad_mode import no_grad
from ..ops import shaping
from ..tensor import Size, Tensor
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .multivariate_normal import ScaleTrilMatrices
from .utils import _standard_normal

__all__ = ["Wishart"]


def _digamma_p(a: Tensor, p: int) -> Tensor:
    """The multivariate digamma function: ``sum_{j < p} digamma(a - j / 2)``."""
    return sum(ops.digamma(a - j / 2) for j in range(p))


class Wishart(ScaleTrilMatrices, Distribution):
    """Wishart distribution ``W_p(df, Sigma)``: the law of ``sum_k x_k x_k^T`` for ``df``
    independent ``x_k ~ N(0, Sigma)`` (for real ``df > p - 1``), with exactly one of
    ``covariance_matrix`` (``Sigma``), ``precision_matrix`` (``Sigma^{-1}``) or ``scale_tril``
    (lower triangular, positive diagonal, ``Sigma = L L^T``). Its density is
    ``|X|^((df - p - 1) / 2) exp(-tr(Sigma^{-1} X) / 2) / (2^(df p / 2) |Sigma|^(df / 2)
    Gamma_p(df / 2))``.

    Samples come from Bartlett's decomposition: ``X = L A A^T L^T``, ``A`` lower triangular
    with ``A_ii^2 ~ chi2(df - i)`` and standard normal entries below the diagonal."""

    support = constraints.positive_definite
    has_rsample = True

    @property
    def arg_constraints(self) -> dict:
        p = self._event_shape[-1] if len(self._event_shape) else 1
        return {
            "covariance_matrix": constraints.positive_definite,
            "precision_matrix": constraints.positive_definite,
            "scale_tril": constraints.lower_cholesky,
            "df": constraints.greater_than(p - 1),
        }

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None) -> None:
        if (covariance_matrix is not None) + (scale_tril is not None) + (
                precision_matrix is not None) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        name, matrix = next((n, m) for n, m in (("scale_tril", scale_tril),
                                                ("covariance_matrix", covariance_matrix),
                                                ("precision_matrix", precision_matrix))
                            if m is not None)
        if matrix.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        p = matrix.shape[-1]
        if isinstance(df, numbers.Number):
            df_tensor = factory.tensor(float(df), dtype=matrix.dtype, device=matrix.device)
        else:
            df_tensor = df
        batch_shape = Size(shaping.broadcast_shapes(tuple(matrix.shape[:-2]),
                                                    tuple(df_tensor.shape)))
        event_shape = Size((p, p))
        self._event_shape = event_shape  # (arg_constraints reads it)
        if bool((df_tensor <= p - 1).any()):
            raise ValueError(
                f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        if bool((df_tensor < p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to "
                          "occur for ndim - 1 < df < ndim.", stacklevel=2)
        setattr(self, name, matrix.expand(tuple(batch_shape) + (-1, -1)))
        self.df = df_tensor.expand(batch_shape)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        # the factor of the matrix as given, before broadcasting
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = linalg.cholesky(linalg.inv(precision_matrix))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        new.df = self.df.expand(batch_shape)
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self) -> tuple:
        return tuple(self._batch_shape) + tuple(self._event_shape)

    @property
    def mean(self) -> Tensor:
        return self.df.unsqueeze(-1).unsqueeze(-1) * self.covariance_matrix

    @property
    def mode(self) -> Tensor:
        """``(df - p - 1) Sigma``, NaN where ``df <= p + 1`` (no interior maximum)."""
        factor = self.df - self._event_shape[-1] - 1
        factor = ops.where(factor > 0, factor, math.nan)
        return factor.unsqueeze(-1).unsqueeze(-1) * self.covariance_matrix

    @property
    def variance(self) -> Tensor:
        """``Var(X_ij) = df (Sigma_ij^2 + Sigma_ii Sigma_jj)``."""
        cov = self.covariance_matrix
        diag = cov.diagonal(dim1=-2, dim2=-1)
        outer = diag.unsqueeze(-1) * diag.unsqueeze(-2)
        return self.df.unsqueeze(-1).unsqueeze(-1) * (cov.pow(2) + outer)

    def _bartlett(self, shape: tuple, max_try_correction) -> Tensor:
        """Bartlett's ``A`` factors, of ``shape`` (sample + batch + event), outside the graph;
        a factor with a zero diagonal entry (a singular sample: chi2 draws underflow for tiny
        ``df - i``) is redrawn up to ``max_try_correction`` times."""
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        with no_grad():
            df = self.df.detach()
            i = factory.arange(p, dtype=df.dtype, device=df.device)
            chi2 = Chi2(df.unsqueeze(-1) - i)  # (batch..., p)

            def draw():
                sample_shape = shape[:len(shape) - len(self._batch_shape) - 2]
                diag = chi2.sample(sample_shape).sqrt().to(L.dtype)
                noise = _standard_normal(shape, dtype=L.dtype, device=L.device).tril(-1)
                return noise + ops.diag_embed(diag)

            A = draw()
            for _ in range(max_try_correction or 0):
                singular = (A.diagonal(dim1=-2, dim2=-1) <= 0).any(-1)
                if not bool(singular.any()):
                    break
                A = ops.where(singular.unsqueeze(-1).unsqueeze(-1), draw(), A)
        return A

    def rsample(self, sample_shape=Size(), max_try_correction=None) -> Tensor:
        """A reparameterized sample: differentiable with respect to the scale matrix; the chi2
        draws are not, so ``df`` must not require grad."""
        if self.df.requires_grad:
            raise NotImplementedError(
                "Wishart.rsample is not differentiable with respect to df in numbagrad "
                "(its chi2 draws have no reparameterized gradient); detach df, or use sample()")
        shape = tuple(self._extended_shape(sample_shape))
        A = self._bartlett(shape, max_try_correction)
        LA = self._unbroadcasted_scale_tril @ A
        return LA @ LA.mT

    def sample(self, sample_shape=Size(), max_try_correction=None) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            A = self._bartlett(shape, max_try_correction)
            LA = self._unbroadcasted_scale_tril.detach() @ A
            return LA @ LA.mT

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        p = self._event_shape[-1]
        nu = self.df
        L = self._unbroadcasted_scale_tril
        Lx = linalg.cholesky(value)
        log_det_x = 2 * Lx.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        half_log_det_sigma = L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        # tr(Sigma^{-1} X) = || L^{-1} Lx ||_F^2
        M = linalg.solve_triangular(L, Lx, upper=False)
        trace = M.pow(2).sum((-2, -1))
        return (0.5 * (nu - p - 1) * log_det_x - 0.5 * trace
                - 0.5 * nu * p * math.log(2) - nu * half_log_det_sigma
                - special.multigammaln(0.5 * nu, p))

    def entropy(self):
        p = self._event_shape[-1]
        nu = self.df
        half_log_det_sigma = self._unbroadcasted_scale_tril.diagonal(
            dim1=-2, dim2=-1).log().sum(-1)
        H = ((p + 1) * half_log_det_sigma + 0.5 * p * (p + 1) * math.log(2)
             + special.multigammaln(0.5 * nu, p)
             - 0.5 * (nu - p - 1) * _digamma_p(0.5 * nu, p) + 0.5 * nu * p)
        return H.expand(self._batch_shape)
