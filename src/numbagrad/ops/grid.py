"""Grid sampling: ``affine_grid`` (the sampling positions of affine maps) and ``grid_sample``
(an input read at a grid's positions), with PyTorch's nodes and errors.

``grid_sampler_2d`` samples through row kernels (backend/kernels_grid.py). A sample is a sum of
tap weights times input pixels, and a tap's weight a product of two axis weights, polynomials
of the position: so the derivative of a sample by its grid is again such a sum, with
derivatives of the axis weights. The op takes optional per-point ``coeffs`` over those
derivative orders (an ordinary sample has none), and its gradients are the op itself and
``grid_sampler_2d_backward``: the scatter of a gradient to the input's pixels and its
projections on each derivative order. Both ops' backwards are written with the two, so
gradients of every order exist, as in PyTorch.
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import numpy as np

from .. import backend
from .. import dtypes as D
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..backend import cpu
from ..backend import kernels_grid as KG
from . import linalg as L
from . import movement as M
from . import reduce as R
from .registry import composite, public


class Sampling(NamedTuple):
    """How ``grid_sampler_2d`` reads: PyTorch's enum values of its mode and padding mode."""

    mode: int  # 0 bilinear, 1 nearest, 2 bicubic
    padding: int  # 0 zeros, 1 border, 2 reflection
    align: int  # align_corners

    @property
    def taps(self) -> int:
        """Input pixels read per axis, and the number of derivative orders of an axis weight
        that can be nonzero."""
        return (2, 1, 4)[self.mode]


_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}

WARN_ALIGN = ("Default grid_sample and affine_grid behavior has changed to align_corners=False "
              "since 1.3.0. Please specify align_corners=True if the old behavior is desired. "
              "See the documentation of grid_sample for details.")
WARN_UNIT_SIZE = ("Since version 1.3.0, affine_grid behavior has changed for unit-size grids "
                  "when align_corners=True. This is not an intended use case of affine_grid. "
                  "See the documentation of affine_grid for details.")


# ---------------------------------------------------------------- kernels on arrays


class Plan(NamedTuple):
    """Each output point's taps and weight derivatives (backend/kernels_grid.py)."""

    idx: object  # flat (points * 2 * taps,) int64 pixels, -1 for a tap that reads zero
    wts: object  # flat (points * 2 * taps * nb,) the derivatives of orders below nb
    nb: int


def plan_arrays(be, g, shape, how, nb):
    """The plan of grid ``g`` (N, OH, OW, 2) over an input of ``shape`` (N, C, H, W)."""
    N, _, H, W = shape
    OH, OW = g.shape[1:3]
    points, taps = N * OH * OW, how.taps
    idx = be.flat_view(be.empty((points * 2 * taps,), np.int64))[0]
    wts = be.flat_view(be.empty((points * 2 * taps * nb,), g.dtype))[0]
    gb, go, gs = be.flat_view(g)
    be.run_row_kernel(KG.grid_plan_row, N * OH, points * taps * nb * 8,
                      (gb, go, *gs, H, W, OH, OW, taps, nb, *how, idx, wts), g.dtype)
    return Plan(idx, wts, nb)


def _coeff_args(be, coeffs, how, dtype):
    """The kernels' coefficient arguments (buffer, offset, 4 strides, orders per axis): one
    coefficient 1 of order (0, 0) for every point when ``coeffs`` is None."""
    if coeffs is None:
        return (be.flat_view(be.full((1,), 1, dtype))[0], 0, 0, 0, 0, 0, 1)
    cb, co, cs = be.flat_view(coeffs)
    return (cb, co, *cs, how.taps)


def sample_arrays(be, x, g, coeffs, how, plan):
    """(N, C, OH, OW): ``x`` (N, C, H, W) sampled at grid ``g`` (N, OH, OW, 2)."""
    N, C = x.shape[:2]
    OH, OW = g.shape[1:3]
    out = be.empty((N, C, OH, OW), x.dtype)
    xb, xo, xs = be.flat_view(x)
    be.run_row_kernel(KG.grid_sample_row, N * OH, out.size * how.taps ** 2,
                      (xb, xo, *xs, C, OH, OW, how.taps, plan.idx, plan.wts, plan.nb,
                       *_coeff_args(be, coeffs, how, x.dtype), be.flat_view(out)[0]), x.dtype)
    return out


def scatter_arrays(be, grad, g, coeffs, shape, how, plan):
    """The gradient (``shape``, the input's) of a sample whose output's gradient is ``grad``."""
    N, C, H, W = shape
    OH, OW = g.shape[1:3]
    dx = be.empty(tuple(shape), grad.dtype)
    rb, ro, rs = be.flat_view(grad)
    be.run_row_kernel(KG.grid_scatter_row, N * C, grad.size * how.taps ** 2 + dx.size,
                      (rb, ro, *rs, C, H, W, OH, OW, how.taps, plan.idx, plan.wts, plan.nb,
                       *_coeff_args(be, coeffs, how, grad.dtype), be.flat_view(dx)[0]),
                      grad.dtype)
    return dx


def project_arrays(be, grad, x, g, how, plan, first):
    """(N, OH, OW, K): per point, the sum over channels of ``grad`` times the sample of each
    derivative order: with ``first`` the orders (1, 0) and (0, 1) (an ordinary sample's grid
    gradient), else every (a, b) below the plan's ``nb`` as index ``a * nb + b``."""
    N, C = x.shape[:2]
    OH, OW = g.shape[1:3]
    K = 2 if first else plan.nb ** 2
    out = be.empty((N, OH, OW, K), x.dtype)
    rb, ro, rs = be.flat_view(grad)
    xb, xo, xs = be.flat_view(x)
    be.run_row_kernel(KG.grid_project_row, N * OH, grad.size * how.taps ** 2,
                      (rb, ro, *rs, xb, xo, *xs, C, OH, OW, how.taps, plan.idx, plan.wts,
                       plan.nb, int(first), K, be.flat_view(out)[0]), x.dtype)
    return out


# ---------------------------------------------------------------- derivative orders


def _zeros(like, shape):
    return Tensor._make(backend.of(like._data).zeros(tuple(shape), like.dtype.np))


def _by_order(t, nb):
    """(N, OH, OW, nb * nb) as (N, OH, OW, nb, nb): axis -2 the x order, -1 the y order."""
    return t.reshape(tuple(t.shape[:3]) + (nb, nb))


def _raised(coeffs, hg, how, like):
    """The coefficients of ``sum_axis hg[.., axis] * d/d grid[axis]`` of the sample with
    ``coeffs`` (None: the ordinary sample): each order raised by one along each axis."""
    nb = how.taps
    if hg is None or nb == 1:
        return None
    if coeffs is None:
        # the ordinary sample's derivatives are orders (1, 0) and (0, 1)
        z = _zeros(like, tuple(hg.shape[:3]) + (1,))
        parts = [z, hg[..., 1:2], _zeros(like, tuple(hg.shape[:3]) + (nb - 2,)), hg[..., 0:1],
                 _zeros(like, tuple(hg.shape[:3]) + (nb * nb - nb - 1,))]
        return M.cat(parts, -1)
    c = _by_order(coeffs, nb)
    lead = tuple(c.shape[:3])
    up_x = M.cat([_zeros(like, lead + (1, nb)), c[..., :-1, :]], -2)
    up_y = M.cat([_zeros(like, lead + (nb, 1)), c[..., :, :-1]], -1)
    out = hg[..., 0:1].unsqueeze(-1) * up_x + hg[..., 1:2].unsqueeze(-1) * up_y
    return out.reshape(lead + (nb * nb,))


def _lowered(p, hg, how, like):
    """The adjoint of ``_raised`` in the coefficients: ``sum_axis hg[.., axis]`` times the
    projections ``p`` (every order) of the order one higher along that axis."""
    nb = how.taps
    q = _by_order(p, nb)
    lead = tuple(q.shape[:3])
    down_x = M.cat([q[..., 1:, :], _zeros(like, lead + (1, nb))], -2)
    down_y = M.cat([q[..., :, 1:], _zeros(like, lead + (nb, 1))], -1)
    out = hg[..., 0:1].unsqueeze(-1) * down_x + hg[..., 1:2].unsqueeze(-1) * down_y
    return out.reshape(lead + (nb * nb,))


def _sum(terms):
    terms = [t for t in terms if t is not None]
    if not terms:
        return None
    out = terms[0]
    for t in terms[1:]:
        out = out + t
    return out


# ---------------------------------------------------------------- ops


@composite("grid_sampler_2d", node="GridSampler2DBackward0")
def grid_sampler_2d(ctx, input, grid, coeffs, how):
    """``input`` (N, C, H, W) read at the positions of ``grid`` (N, OH, OW, 2), as ``how``
    says; ``coeffs`` (N, OH, OW, taps * taps) or None: see the module's docstring."""
    ctx.how = how
    ctx.save(x=input, g=grid, c=coeffs)
    be, x, g = ctx.backend, input._data, grid._data
    plan = plan_arrays(be, g, x.shape, how, 1 if coeffs is None else how.taps)
    return sample_arrays(be, x, g, None if coeffs is None else coeffs._data, how, plan)


@grid_sampler_2d.defvjp
def grid_sampler_2d_vjp(ctx, grad):
    needs = [f is not None for f, _ in ctx.node.next_functions]
    coeffs = ctx["c"] if len(needs) == 3 else None
    mask = (needs[0], needs[1], coeffs is not None and needs[2])
    outs = iter(grid_sampler_2d_backward(grad, ctx["x"], ctx["g"], coeffs, ctx.how, mask))
    return tuple(next(outs) if m else None for m in mask[:len(needs)])


@composite("grid_sampler_2d_backward", node="GridSampler2DBackwardBackward0")
def grid_sampler_2d_backward(ctx, grad, input, grid, coeffs, how, mask):
    """The gradients (input, grid, coeffs) of ``grid_sampler_2d(input, grid, coeffs, how)``
    whose output's gradient is ``grad``: those ``mask`` asks for, in that order (the coeffs'
    one has every derivative order, also when ``coeffs`` is None)."""
    ctx.how, ctx.mask = how, mask
    ctx.save(grad=grad, x=input, g=grid, c=coeffs)
    be = ctx.backend
    gr, x, g = grad._data, input._data, grid._data
    c = None if coeffs is None else coeffs._data
    # (derivative orders the plan needs: the coefficients', one more for an ordinary sample's
    # grid gradient, every order for the projections on them)
    nb = how.taps if coeffs is not None or mask[2] else 2 if mask[1] else 1
    plan = plan_arrays(be, g, x.shape, how, nb)
    outs = []
    if mask[0]:
        outs.append(scatter_arrays(be, gr, g, c, x.shape, how, plan))
    full = None
    if mask[1]:
        if coeffs is None:
            outs.append(project_arrays(be, gr, x, g, how, plan, True))
        else:  # sum_(a, b) coeffs[a, b] times the projection of (a + 1, b), and of (a, b + 1)
            full = project_arrays(be, gr, x, g, how, plan, False)
            with no_grad():
                p = _by_order(Tensor._make(full), nb)
                cc = _by_order(coeffs.detach(), nb)
                gx = R.sum(cc[..., :-1, :] * p[..., 1:, :], (-2, -1))
                gy = R.sum(cc[..., :, :-1] * p[..., :, 1:], (-2, -1))
                outs.append(M.stack([gx, gy], -1)._data)
    if mask[2]:
        outs.append(full if full is not None else project_arrays(be, gr, x, g, how, plan, False))
    return tuple(outs)


@grid_sampler_2d_backward.defvjp
def grid_sampler_2d_backward_vjp(ctx, grads):
    # with e = hc + _raised(coeffs, hg), the backward's outputs paired with (hx, hg, hc) sum
    # to <grad, sample(hx, grid, coeffs)> + <grad, sample(input, grid, e)>: its derivatives
    # are samples, scatters and projections again
    grads = iter(grads if isinstance(grads, list) else [grads])  # (a list for several outputs)
    hx, hg, hc = (next(grads) if m else None for m in ctx.mask)
    needs = [f is not None for f, _ in ctx.node.next_functions]
    how = ctx.how
    gr, x, g = ctx["grad"], ctx["x"], ctx["g"]
    coeffs = ctx["c"] if len(needs) == 4 else None
    e = _sum([hc, _raised(coeffs, hg, how, gr)])
    d_gr = d_x = d_g = d_c = None
    if needs[0]:
        d_gr = _sum([None if hx is None else grid_sampler_2d(hx, g, coeffs, how),
                     None if e is None else grid_sampler_2d(x, g, e, how)])
    g_terms = []
    if e is not None and (needs[1] or needs[2]):
        outs = iter(grid_sampler_2d_backward(gr, x, g, e, how, (needs[1], needs[2], False)))
        d_x = next(outs) if needs[1] else None
        g_terms.append(next(outs) if needs[2] else None)
    if hx is not None and needs[2]:
        g_terms.append(grid_sampler_2d_backward(gr, hx, g, coeffs, how, (False, True, False))[0])
    d_g = _sum(g_terms)
    if coeffs is not None and needs[3]:
        c_terms = []
        if hx is not None:
            c_terms.append(grid_sampler_2d_backward(gr, hx, g, None, how, (False, False, True))[0])
        if hg is not None and how.taps > 1:
            p = grid_sampler_2d_backward(gr, x, g, None, how, (False, False, True))[0]
            c_terms.append(_lowered(p, hg, how, gr))
        d_c = _sum(c_terms)
    out = (d_gr, d_x, d_g, d_c)
    return out[:len(needs)]


def _base_grid(spatial, align, dtype):
    """(prod(spatial), k + 1) positions of the output's pixels in [-1, 1], x (the last dim's)
    first, then a column of ones: PyTorch's base grid of affine_grid_generator."""
    axes = []
    for n in spatial:
        if n == 1:
            axes.append(np.zeros(1))
        else:
            v = np.linspace(-1.0, 1.0, n)
            axes.append(v if align else v * (n - 1) / n)
    mesh = np.meshgrid(*axes, indexing="ij")  # (one per spatial dim, outermost first)
    cols = [m.reshape(-1) for m in reversed(mesh)] + [np.ones(math.prod(spatial))]
    return np.stack(cols, -1).astype(dtype)


@composite("affine_grid_generator", node="AffineGridGeneratorBackward0")
def affine_grid_generator(ctx, theta, size, align_corners):
    """The grid (N, *spatial, k) of ``size`` (N, C, *spatial) mapped by ``theta`` (N, k,
    k + 1): each output pixel's normalized position times theta."""
    spatial = tuple(size[2:])
    ctx.size, ctx.spatial, ctx.align = tuple(size), spatial, align_corners
    base = _base_grid(spatial, align_corners, theta.dtype.np)
    if ctx.backend is not cpu:
        base = ctx.backend.to_device(base)
    with no_grad():
        out = L.matmul(Tensor._make(base), M.transpose(theta, 1, 2))
    return out._data.reshape((size[0],) + spatial + (len(spatial),))


@affine_grid_generator.defvjp
def affine_grid_generator_vjp(ctx, grad):
    base = _base_grid(ctx.spatial, ctx.align, grad.dtype.np)
    be = backend.of(grad._data)
    base = Tensor._make(base if be is cpu else be.to_device(base))
    k = len(ctx.spatial)
    rows = grad.reshape(grad.shape[0], math.prod(ctx.spatial), k)
    return M.transpose(L.matmul(M.transpose(base, 0, 1), rows), 1, 2)


# ---------------------------------------------------------------- public functions


@public("functional")
def affine_grid(theta: Tensor, size, align_corners: bool | None = None) -> Tensor:
    """The sampling grid (N, H, W, 2) of 2-d affine maps ``theta`` (N, 2, 3) for an output of
    ``size`` (N, C, H, W), or (N, D, H, W, 3) of 3-d ones (N, 3, 4) for (N, C, D, H, W)."""
    if align_corners is None:
        warnings.warn(WARN_ALIGN, UserWarning, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.ndim != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {theta.shape}.")
    elif len(size) == 5:
        if theta.ndim != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {theta.shape}.")
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn(WARN_UNIT_SIZE, UserWarning, stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    for k, n in enumerate(size):
        if not isinstance(n, (int, np.integer)):
            raise TypeError("affine_grid_generator(): argument 'size' (position 2) must be "
                            f"tuple of ints, but found element of type {type(n).__name__} at "
                            f"pos {k}")
    k = len(spatial)
    if theta.shape[0] != size[0]:  # (PyTorch's bmm of the base grid by theta refuses it)
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size[0]}, {k + 1}] but got: [{theta.shape[0]}, {k + 1}].")
    return affine_grid_generator(theta, tuple(int(n) for n in size), bool(align_corners))


def _sizes(t):
    return list(t.shape)


def _check_grid_sample(input, grid, mode):
    """PyTorch's checks of a grid_sampler call (check_grid_sampler_common, then the 2-d or
    3-d one), then its dtype checks."""
    for k, (name, t) in enumerate((("input", input), ("grid", grid))):
        if not isinstance(t, Tensor):
            raise TypeError(f"grid_sampler(): argument '{name}' (position {k + 1}) must be "
                            f"Tensor, not {type(t).__name__}")
    if input.device != grid.device:
        raise RuntimeError("grid_sampler(): expected input and grid to be on same device, but "
                           f"input is on {input.device} and grid is on {grid.device}")
    if input.ndim == 0 or grid.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {_sizes(input)} and grid with sizes "
                           f"{_sizes(grid)}")
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in "
                           f"last dimension, but got grid with sizes {_sizes(grid)}")
    for d in range(2, input.ndim):
        if input.shape[d] <= 0:
            raise RuntimeError("grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {_sizes(input)} with "
                               f"dimension {d} being empty")
    nd = 4 if input.ndim == 4 else 5
    if input.ndim != nd or grid.ndim != nd:
        raise RuntimeError(f"grid_sampler(): expected {nd}D input and grid with same number of "
                           f"dimensions, but got input with sizes {_sizes(input)} and grid with "
                           f"sizes {_sizes(grid)}")
    if nd == 5:
        if mode == 2:
            raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
        raise NotImplementedError("grid_sample of 5-d (volumetric) input is not implemented in "
                                  "numbagrad")
    if not input.dtype.is_floating_point:
        kernel = ("grid_sampler_2d_cpu_kernel_impl" if input.device.type == "cpu"
                  else "grid_sampler_2d_cuda")
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{D.SCALAR_TYPE[input.dtype.name]}'")
    if grid.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {D.SCALAR_TYPE[input.dtype.name]} but found "
                           f"{D.SCALAR_TYPE[grid.dtype.name]}")


@public("functional")
def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """``input`` (N, C, H, W) read at the normalized positions of ``grid`` (N, OH, OW, 2):
    (N, C, OH, OW); ``mode`` 'bilinear', 'nearest' or 'bicubic', ``padding_mode`` 'zeros',
    'border' or 'reflection' for positions outside [-1, 1]."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(WARN_ALIGN, UserWarning, stacklevel=2)
        align_corners = False
    if not isinstance(align_corners, bool):
        raise TypeError("grid_sampler(): argument 'align_corners' (position 5) must be bool, "
                        f"not {type(align_corners).__name__}")
    _check_grid_sample(input, grid, _MODES[mode])
    how = Sampling(_MODES[mode], _PADDINGS[padding_mode], int(align_corners))
    return grid_sampler_2d(input, grid, None, how)
