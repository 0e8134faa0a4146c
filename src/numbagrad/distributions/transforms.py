"""Invertible transformations with computable log-det-Jacobians, as
``torch.distributions.transforms``: the building blocks of ``TransformedDistribution``
and of ``biject_to`` / ``transform_to``. Every forward, inverse and Jacobian is built from
recorded ops, so gradients flow through all three."""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import factory
from .. import linalg
from .. import ops
from ..nn import functional as F
from ..ops import shaping
from ..tensor import Size, Tensor
from . import constraints
from .utils import _sum_rightmost, broadcast_all, lazy_property

__all__ = [
    "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
    "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform",
    "LowerCholeskyTransform", "PositiveDefiniteTransform", "PowerTransform",
    "ReshapeTransform", "SigmoidTransform", "SoftplusTransform", "TanhTransform",
    "SoftmaxTransform", "StackTransform", "StickBreakingTransform", "Transform",
    "identity_transform",
]


class Transform:
    """An invertible (or pseudo-invertible) map ``x -> y`` with ``log |dy/dx|``.

    Subclasses implement ``_call`` and/or ``_inverse``; bijective ones also
    ``log_abs_det_jacobian``. With ``cache_size=1`` the latest ``(x, y)`` pair is kept, so
    ``t.inv(t(x))`` gives back the very tensor ``x`` (and ``t(t.inv(y))`` the very ``y``)
    without recomputing: the way to invert transforms that lose precision (sigmoid
    saturating, tanh near +-1). The cache compares by identity, not by value.

    Attributes:
        domain, codomain: the constraints on inputs and outputs.
        bijective: whether ``t.inv(t(x)) == x`` and ``t(t.inv(y)) == y``.
        sign: +1 or -1 (a tensor for elementwise ones) for monotone univariate transforms.
    """

    bijective = False
    domain: constraints.Constraint
    codomain: constraints.Constraint

    def __init__(self, cache_size: int = 0) -> None:
        self._cache_size = cache_size
        self._inv = None
        if cache_size == 1:
            self._cached_x_y = None, None
        elif cache_size != 0:
            raise ValueError("cache_size must be 0 or 1")
        super().__init__()

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_inv"] = None  # the inverse refers back to self: rebuilt on demand
        return state

    @property
    def event_dim(self) -> int:
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self) -> Transform:
        """The inverse transform; ``t.inv.inv is t``."""
        if self._inv is None:
            self._inv = _InverseTransform(self)
        return self._inv

    @property
    def sign(self):
        """The sign of the Jacobian's determinant (bijective univariate transforms)."""
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        """``log |det dy/dx|`` given both the input and the output."""
        raise NotImplementedError

    def __repr__(self):
        return self.__class__.__name__ + "()"

    def forward_shape(self, shape):
        """The output shape for an input of ``shape`` (the same unless overridden)."""
        return shape

    def inverse_shape(self, shape):
        """The input shape for an output of ``shape`` (the same unless overridden)."""
        return shape


class _InverseTransform(Transform):
    """The inverse of a transform; reached through ``Transform.inv``."""

    def __init__(self, transform: Transform) -> None:
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return self._inv.codomain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self) -> bool:
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self) -> Transform:
        return self._inv

    def with_cache(self, cache_size=1):
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other):
        if not isinstance(other, _InverseTransform):
            return False
        return self._inv == other._inv

    def __repr__(self):
        return f"{self.__class__.__name__}({self._inv!r})"

    def __call__(self, x):
        # the forward transform's cache serves both directions
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """``parts`` applied in order; each part does its own caching."""

    def __init__(self, parts, cache_size: int = 0) -> None:
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = parts

    def __eq__(self, other):
        if not isinstance(other, ComposeTransform):
            return False
        return self.parts == other.parts

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        # a later part coupling more dims makes the whole input that many dims an event
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @lazy_property
    def bijective(self) -> bool:
        return all(p.bijective for p in self.parts)

    @lazy_property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self) -> Transform:
        if self._inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = inv
            inv._inv = self
        return self._inv

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return factory.zeros_like(x)
        # the intermediate values: free when the parts cache them
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        total = None
        event_dim = self.domain.event_dim
        for part, x_i, y_i in zip(self.parts, xs[:-1], xs[1:]):
            term = _sum_rightmost(part.log_abs_det_jacobian(x_i, y_i),
                                  event_dim - part.domain.event_dim)
            total = term if total is None else total + term
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return total

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        return (self.__class__.__name__ + "(\n    "
                + ",\n    ".join(repr(p) for p in self.parts) + "\n)")


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """``base_transform`` with its rightmost ``reinterpreted_batch_ndims`` dims treated as
    one event: the values are unchanged, ``log_abs_det_jacobian`` sums over those dims."""

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int,
                 cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(self.base_transform.domain,
                                       self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        result = self.base_transform.log_abs_det_jacobian(x, y)
        return _sum_rightmost(result, self.reinterpreted_batch_ndims)

    def __repr__(self):
        return (f"{self.__class__.__name__}({self.base_transform!r}, "
                f"{self.reinterpreted_batch_ndims})")

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """Reshapes the rightmost ``in_shape`` dims to ``out_shape`` (as many elements); its
    Jacobian determinant is 1."""

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size: int = 0) -> None:
        self.in_shape = Size(in_shape)
        self.out_shape = Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        batch_shape = tuple(x.shape[: x.dim() - len(self.in_shape)])
        return x.reshape(batch_shape + tuple(self.out_shape))

    def _inverse(self, y):
        batch_shape = tuple(y.shape[: y.dim() - len(self.out_shape)])
        return y.reshape(batch_shape + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        batch_shape = tuple(x.shape[: x.dim() - len(self.in_shape)])
        return x.new_zeros(batch_shape)

    @staticmethod
    def _replace_rightmost(shape, old, new):
        shape = Size(shape)
        if len(shape) < len(old):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(old)
        if shape[cut:] != old:
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {old}")
        return shape[:cut] + new

    def forward_shape(self, shape):
        return self._replace_rightmost(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._replace_rightmost(shape, self.out_shape, self.in_shape)


class ExpTransform(Transform):
    """``y = exp(x)``."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


def _param_shape(value):
    return tuple(value.shape) if isinstance(value, Tensor) else ()


class PowerTransform(Transform):
    """``y = x ** exponent`` on positive numbers."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @lazy_property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other):
        if not isinstance(other, PowerTransform):
            return False
        return self.exponent.eq(other.exponent).all().item()

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        # d(x ** e)/dx = e * x ** (e - 1) = e * y / x
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return Size(shaping.broadcast_shapes(tuple(shape), _param_shape(self.exponent)))

    def inverse_shape(self, shape):
        return Size(shaping.broadcast_shapes(tuple(shape), _param_shape(self.exponent)))


def _clipped_sigmoid(x):
    """sigmoid kept inside (0, 1): its log and logit stay finite."""
    finfo = np.finfo(x.dtype.np)
    return ops.sigmoid(x).clamp(min=float(finfo.tiny), max=1.0 - float(finfo.eps))


class SigmoidTransform(Transform):
    """``y = 1 / (1 + exp(-x))``, inverted by ``logit``."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    def _call(self, x):
        return _clipped_sigmoid(x)

    def _inverse(self, y):
        finfo = np.finfo(y.dtype.np)
        y = y.clamp(min=float(finfo.tiny), max=1.0 - float(finfo.eps))
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        # log(sigmoid(x) * sigmoid(-x)), without rounding either factor to 0
        return -F.softplus(-x) - F.softplus(x)


class SoftplusTransform(Transform):
    """``y = log(1 + exp(x))`` (linear above 20, as ``softplus``)."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SoftplusTransform)

    def _call(self, x):
        return F.softplus(x)

    def _inverse(self, y):
        # log(exp(y) - 1) = y + log(1 - exp(-y)), which does not overflow
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x)


class TanhTransform(Transform):
    """``y = tanh(x)``. Its inverse ``atanh`` is infinite at +-1, which float rounding of
    large inputs reaches: ``cache_size=1`` gives back the input instead."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return y.atanh()

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2) = 2 * (log 2 - x - softplus(-2x)), stable for large |x|
        return 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))


class AbsTransform(Transform):
    """``y = |x|`` (not bijective: its inverse picks the nonnegative root)."""

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """``y = loc + scale * x`` elementwise; ``event_dim`` is the number of rightmost dims
    that form one event (its log-det-Jacobian sums over them)."""

    bijective = True

    def __init__(self, loc, scale, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
                if a != b:
                    return False
            elif not (a == b).all().item():
                return False
        return True

    @property
    def sign(self):
        if isinstance(self.scale, numbers.Number):
            scale = float(self.scale)
            return 1 if scale > 0 else -1 if scale < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = tuple(x.shape)
        if isinstance(self.scale, numbers.Number):
            result = factory.full_like(x, math.log(abs(self.scale)))
        else:
            result = self.scale.abs().log()
        if self.event_dim:
            result = result.reshape(tuple(result.shape[: result.dim() - self.event_dim])
                                    + (-1,)).sum(-1)
            shape = shape[: len(shape) - self.event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        return Size(shaping.broadcast_shapes(tuple(shape), _param_shape(self.loc),
                                             _param_shape(self.scale)))

    def inverse_shape(self, shape):
        return self.forward_shape(shape)


class SoftmaxTransform(Transform):
    """``y = exp(x)`` normalized over the last dim: onto the simplex, but not bijective
    (adding a constant to ``x`` changes nothing); its inverse is ``log``."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    def _call(self, x):
        probs = (x - x.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape


def _stick_offsets(x: Tensor) -> Tensor:
    """K, K-1, ..., 1 for a last dim of K: the shift that makes x = 0 the simplex's
    centre."""
    k = x.shape[-1]
    return k + 1 - x.new_ones(k).cumsum(-1)


class StickBreakingTransform(Transform):
    """Onto the simplex of one more dim by stick breaking: the i-th coordinate's sigmoid
    is the fraction of what is left of the stick given to component i. Bijective, but it
    mixes the coordinates."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    def _call(self, x):
        z = _clipped_sigmoid(x - _stick_offsets(x).log())
        remaining = (1 - z).cumprod(-1)
        return F.pad(z, [0, 1], value=1) * F.pad(remaining, [1, 0], value=1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        offset = y.shape[-1] - y.new_ones(y_crop.shape[-1]).cumsum(-1)
        remaining = (1 - y_crop.cumsum(-1)).clamp(min=float(np.finfo(y.dtype.np).tiny))
        return y_crop.log() - remaining.log() + offset.log()

    def log_abs_det_jacobian(self, x, y):
        x = x - _stick_offsets(x).log()
        return (-x + F.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return Size(tuple(shape[:-1]) + (shape[-1] + 1,))

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return Size(tuple(shape[:-1]) + (shape[-1] - 1,))


class LowerCholeskyTransform(Transform):
    """Unconstrained square matrices to lower-triangular ones with a positive diagonal:
    the strict lower triangle is kept, the diagonal exponentiated (the upper triangle is
    dropped, so not bijective)."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """Unconstrained square matrices to positive-definite ones, ``L @ L^T`` for ``L`` the
    ``LowerCholeskyTransform`` of the input."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    def _call(self, x):
        x = LowerCholeskyTransform()(x)
        return x @ x.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(linalg.cholesky(y))


def _check_slices(name, dim, value, size, what):
    if not -value.dim() <= dim < value.dim():
        raise AssertionError(
            f"dim {dim} out of range for {what} with {value.dim()} dimensions")
    if value.size(dim) != size:
        raise AssertionError(
            f"{name}.size({dim}) = {value.size(dim)} must equal length {size}")


class CatTransform(Transform):
    """The transforms ``tseq`` on consecutive slices of dim ``dim`` of ``lengths`` (1 each
    by default), as ``cat`` joins them."""

    def __init__(self, tseq, dim: int = 0, lengths=None, cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms "
                                 f"({len(self.transforms)})")
        self.dim = dim

    @lazy_property
    def event_dim(self) -> int:
        return max(t.event_dim for t in self.transforms)

    @lazy_property
    def length(self) -> int:
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _slices(self, value):
        start = 0
        for length in self.lengths:
            yield value.narrow(self.dim, start, length)
            start += length

    def _call(self, x):
        _check_slices("x", self.dim, x, self.length, "tensor")
        return ops.cat([t(s) for t, s in zip(self.transforms, self._slices(x))], self.dim)

    def _inverse(self, y):
        _check_slices("y", self.dim, y, self.length, "tensor")
        return ops.cat([t.inv(s) for t, s in zip(self.transforms, self._slices(y))],
                       self.dim)

    def log_abs_det_jacobian(self, x, y):
        _check_slices("x", self.dim, x, self.length, "x")
        _check_slices("y", self.dim, y, self.length, "y")
        terms = []
        for t, xs, ys in zip(self.transforms, self._slices(x), self._slices(y)):
            term = t.log_abs_det_jacobian(xs, ys)
            if t.event_dim < self.event_dim:
                term = _sum_rightmost(term, self.event_dim - t.event_dim)
            terms.append(term)
        dim = self.dim - x.dim() if self.dim >= 0 else self.dim
        dim += self.event_dim
        if dim < 0:  # the joined dim is a batch dim of the Jacobian terms
            return ops.cat(terms, dim)
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        return total

    @property
    def bijective(self) -> bool:
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim,
                               self.lengths)


class StackTransform(Transform):
    """The transforms ``tseq`` on the successive slices along dim ``dim``, as ``stack``
    joins them."""

    def __init__(self, tseq, dim: int = 0, cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z):
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _check(self, name, value, what):
        if not -value.dim() <= self.dim < value.dim():
            raise AssertionError(
                f"dim {self.dim} out of range for {what} with {value.dim()} dimensions")
        if value.size(self.dim) != len(self.transforms):
            raise AssertionError(f"{name}.size({self.dim}) = {value.size(self.dim)} must "
                                 f"equal len(transforms) {len(self.transforms)}")

    def _call(self, x):
        self._check("x", x, "tensor")
        return ops.stack([t(s) for s, t in zip(self._slice(x), self.transforms)], self.dim)

    def _inverse(self, y):
        self._check("y", y, "tensor")
        return ops.stack([t.inv(s) for s, t in zip(self._slice(y), self.transforms)],
                         self.dim)

    def log_abs_det_jacobian(self, x, y):
        self._check("x", x, "x")
        self._check("y", y, "y")
        terms = [t.log_abs_det_jacobian(xs, ys)
                 for xs, ys, t in zip(self._slice(x), self._slice(y), self.transforms)]
        return ops.stack(terms, self.dim)

    @property
    def bijective(self) -> bool:
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """``y = distribution.cdf(x)``: onto the unit interval (e.g. a copula's marginals)."""

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)
