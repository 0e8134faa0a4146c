"""``torch.gradient``: derivatives of sampled values by finite differences, composed of
slices, arithmetic and one ``cat`` per dim (so its node is CatBackward0, as PyTorch's).

Inside each dim the central difference (second order; with coordinates, the formula that is
exact for a quadratic through three unevenly spaced points); at each end a one-sided
difference of ``edge_order`` 1 or 2."""

from __future__ import annotations

from .. import dtypes as D
from .._tensor import Tensor, _wrap_dim
from .movement import cat
from .registry import public


def _check_spacing(spacing, dims, ndim, given_dim):
    """One spacing per dim of ``dims``: a number or a coordinates tensor (PyTorch's checks)."""
    if spacing is None:
        return [1.0] * len(dims)
    if isinstance(spacing, (int, float)) or isinstance(spacing, Tensor) and spacing.ndim == 0:
        return [spacing] * len(dims)
    spacing = list(spacing)
    if len(spacing) != len(dims):
        if given_dim:
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and "
                f"dim arguments to have the same length, but got a spacing argument of length "
                f"{len(spacing)} and a dim argument of length {len(dims)}.")
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
            f"equal to 'self.dim() = {ndim}', since dim argument was not given, but got a list "
            f"of length {len(spacing)}")
    return spacing


def _slice(x, d, start, stop):
    return x.narrow(d, start, stop - start)


def _along(c, d, ndim):
    """Coordinates ``c`` (1-d) shaped to broadcast along dim ``d`` of an ``ndim``-d tensor."""
    return c.reshape([-1 if k == d else 1 for k in range(ndim)])


def _uniform(x, d, h, edge_order):
    n = x.shape[d]
    inner = (_slice(x, d, 2, n) - _slice(x, d, 0, n - 2)) / (2 * h)
    first, second, last = (_slice(x, d, k, k + 1) for k in (0, 1, n - 1))
    before = _slice(x, d, n - 2, n - 1)
    if edge_order == 1:
        front = (second - first) / h
        back = (last - before) / h
    else:
        third, before2 = _slice(x, d, 2, 3), _slice(x, d, n - 3, n - 2)
        front = (-1.5 * first + 2 * second - 0.5 * third) / h
        back = (0.5 * before2 - 2 * before + 1.5 * last) / h
    return cat([front, inner, back], d)


def _coordinates(x, d, c, edge_order):
    # the three-point weights of each inner point, in the coordinates' dtype (as PyTorch
    # computes them), then applied to x's samples
    n, nd = x.shape[d], x.ndim
    step = c[1:] - c[:-1]
    h1, h2 = step[:-1], step[1:]
    a = _along(-h2 / (h1 * (h1 + h2)), d, nd)
    b = _along((h2 - h1) / (h1 * h2), d, nd)
    w = _along(h1 / (h2 * (h1 + h2)), d, nd)
    inner = a * _slice(x, d, 0, n - 2) + b * _slice(x, d, 1, n - 1) + w * _slice(x, d, 2, n)
    x0, x1, x2 = (_slice(x, d, k, k + 1) for k in (0, 1, 2))
    y3, y2, y1 = (_slice(x, d, k, k + 1) for k in (n - 3, n - 2, n - 1))
    if edge_order == 1:
        front = (x1 - x0) / step[0]
        back = (y1 - y2) / step[-1]
    else:
        s0, s1 = step[0], step[1]
        front = (-(2.0 * s0 + s1) / (s0 * (s0 + s1)) * x0 + (s0 + s1) / (s0 * s1) * x1
                 + (-s0) / (s1 * (s0 + s1)) * x2)
        s0, s1 = step[-1], step[-2]
        back = (s0 / (s1 * (s0 + s1)) * y3 - (s0 + s1) / (s0 * s1) * y2
                + (2 * s0 + s1) / (s0 * (s0 + s1)) * y1)
    return cat([front, inner, back], d)


@public("function")
def gradient(input, *, spacing=None, dim=None, edge_order=1):
    """The derivative of ``input``'s samples along each of ``dim`` (every dim by default), a
    tuple of tensors of its shape; ``spacing`` a number, one per dim, or one coordinates
    tensor per dim."""
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    given = dim is not None
    if dim is None:
        dims = list(range(input.ndim))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
        dims = [_wrap_dim(d, input.ndim) for d in dims]
    spacing = _check_spacing(spacing, dims, input.ndim, given)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError(
                "torch.gradient expected each dimension size to be at least edge_order+1")
    x = input if input.dtype.is_floating_point else input.to(D.default_float)
    out = []
    for d, h in zip(dims, spacing):
        if isinstance(h, Tensor) and h.ndim == 1:
            out.append(_coordinates(x, d, h, edge_order))
        else:
            out.append(_uniform(x, d, h.item() if isinstance(h, Tensor) else h, edge_order))
    return tuple(out)
