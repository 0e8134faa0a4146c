"""Linear algebra: matmul and friends on NumPy's BLAS; rules are matmuls with transposes."""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as D
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..backend.cpu import broadcast_shapes
from . import elementwise as E
from . import movement as M
from .forward import multilinear
from .registry import composite, public, sum_to

_NAMES = {"float32": "float", "float64": "double", "int64": "long", "int32": "int", "bool": "bool"}


def _same_dtype(a, b, names=("m1", "m2")):
    if a.dtype is not b.dtype:
        raise RuntimeError(
            f"expected {names[0]} and {names[1]} to have the same dtype, but got: "
            f"{_NAMES[a.dtype.name]} != {_NAMES[b.dtype.name]}"
        )


@composite("mm", variants="function method")
def mm(ctx, x, y):
    a, b = x._data, y._data
    if a.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
            f"{b.shape[0]}x{b.shape[1]})"
        )
    if a.dtype != b.dtype:
        _same_dtype(x, y)
    if ctx.recorded:
        ctx.save(x=x if y.requires_grad else None, y=y if x.requires_grad else None)
    return ctx.backend.matmul(a, b)


_mm_jvp = mm.defjvp(multilinear(mm, 0, 1))


@mm.defvjp
def mm_vjp(ctx, grad):
    gx = grad.mm(ctx["y"].t()) if "y" in ctx.saved else None
    gy = ctx["x"].t().mm(grad) if "x" in ctx.saved else None
    return gx, gy


@composite("addmm", variants="function method")
def addmm(ctx, bias, x, y, *, beta=1, alpha=1):
    """``beta * bias + alpha * (x @ y)``: ``F.linear``'s one node, as in PyTorch (the sum is
    written into the product's new array). With ``beta=0`` the bias is not read (NaN in it
    does not propagate)."""
    out = mm.forward(ctx, x, y)
    if bias.dtype is not x.dtype:
        _same_dtype(bias, x, ("self", "mat1"))
    try:
        np.broadcast_shapes(tuple(bias.shape), out.shape)
    except ValueError:
        raise RuntimeError(
            f"The expanded size of the tensor ({out.shape[-1]}) must match the existing size "
            f"({bias.shape[-1]}) at non-singleton dimension 1.  Target sizes: "
            f"{list(out.shape)}.  Tensor sizes: {list(bias.shape)}"
        ) from None
    ctx.beta, ctx.alpha = beta, alpha
    if beta != 1 or alpha != 1:
        with no_grad():
            prod = Tensor._make(out) * alpha
            return (prod.expand(out.shape) if beta == 0 else prod + bias * beta)._data
    be = ctx.backend
    be.run_elementwise(E.add.kernel(x.dtype, be), [out, bias._data], x.dtype.np, out=out)
    return out


@addmm.defjvp
def addmm_jvp(result, tangents, bias, x, y, *, beta=1, alpha=1):
    t = _mm_jvp(result, tangents[1:], x, y)
    if t is not None and alpha != 1:
        t = t * alpha
    if tangents[0] is not None:
        tb = tangents[0] if beta == 1 else tangents[0] * beta
        t = tb.expand(result.shape) if t is None else t + tb
    return t


@addmm.defvjp
def addmm_vjp(ctx, grad):
    gx, gy = mm_vjp(ctx, grad if ctx.alpha == 1 else grad * ctx.alpha)
    return sum_to(grad if ctx.beta == 1 else grad * ctx.beta, ctx.input_shapes[0]), gx, gy


@composite("bmm", variants="function method")
def bmm(ctx, x, y):
    if x.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if y.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if y.shape[0] != x.shape[0] or y.shape[1] != x.shape[2]:
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{x.shape[0]}, {x.shape[2]}] but got: [{y.shape[0]}, {y.shape[1]}]."
        )
    ctx.save(x=x if y.requires_grad else None, y=y if x.requires_grad else None)
    if not (x.shape[0] and x.shape[1] and y.shape[2]):
        # an empty result: PyTorch returns it, in the promoted dtype, before it compares the
        # operands' dtypes
        shape = (x.shape[0], x.shape[1], y.shape[2])
        return ctx.backend.zeros(shape, D.result_type(x, y).np)
    _same_dtype(x, y, ("batch1", "batch2"))
    return ctx.backend.matmul(x._data, y._data)


bmm.defjvp(multilinear(bmm, 0, 1))


@bmm.defvjp
def bmm_vjp(ctx, grad):
    # (an empty product of two dtypes has the promoted one, which its gradients take)
    x = ctx["x"] if "x" in ctx.saved else None
    y = ctx["y"] if "y" in ctx.saved else None
    gx = grad.bmm(y.transpose(1, 2).to(grad.dtype)) if y is not None else None
    gy = x.transpose(1, 2).to(grad.dtype).bmm(grad) if x is not None else None
    return gx, gy


@composite("mv", variants="function method")
def mv(ctx, x, v):
    if x.ndim != 2 or v.ndim != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got {v.ndim}, {x.ndim}, {v.ndim}"
        )
    if x.shape[1] != v.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({x.shape[0]}), mat ({x.shape[0]}x{x.shape[1]}), "
            f"vec ({v.shape[0]})"
        )
    _same_dtype(x, v)
    ctx.save(x=x if v.requires_grad else None, v=v if x.requires_grad else None)
    return ctx.backend.matmul(x._data, v._data)


mv.defjvp(multilinear(mv, 0, 1))


@mv.defvjp
def mv_vjp(ctx, grad):
    gx = grad.unsqueeze(1) * ctx["v"].unsqueeze(0) if "v" in ctx.saved else None
    gv = ctx["x"].t().mv(grad) if "x" in ctx.saved else None
    return gx, gv


@composite("dot", variants="function method")
def dot(ctx, x, y):
    if x.ndim != 1 or y.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {x.ndim}D and {y.ndim}D tensors"
        )
    if x.shape[0] != y.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{x.shape[0]}] and src [{y.shape[0]}] to "
            f"have the same number of elements, but got {x.shape[0]} and {y.shape[0]} elements "
            "respectively"
        )
    _same_dtype(x, y, ("self", "other"))
    ctx.save(x=x if y.requires_grad else None, y=y if x.requires_grad else None)
    out = ctx.backend.matmul(x._data, y._data)
    return np.asarray(out) if isinstance(out, np.generic) else out


dot.defjvp(multilinear(dot, 0, 1))


@dot.defvjp
def dot_vjp(ctx, grad):
    gx = grad * ctx["y"] if "y" in ctx.saved else None
    gy = grad * ctx["x"] if "x" in ctx.saved else None
    return gx, gy


@public("function method")
def matmul(x, y):
    """``x @ y`` with PyTorch's rules for 1-D operands and broadcast batch dimensions."""
    if not isinstance(x, Tensor) or not isinstance(y, Tensor):
        raise TypeError("matmul(): argument 'other' must be Tensor")
    if x.ndim == 2 and y.ndim == 2:  # (the commonest first)
        return mm(x, y)
    if x.ndim == 0 or y.ndim == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {x.ndim}D and "
            f"{y.ndim}D"
        )
    if x.ndim == 1 and y.ndim == 1:
        return dot(x, y)
    if x.ndim == 2 and y.ndim == 1:
        return mv(x, y)
    if x.ndim == 1 and y.ndim == 2:
        return M.squeeze_result(mm(M.unsqueeze(x, 0), y), 0)
    if x.ndim == 2 and y.ndim == 2:
        return mm(x, y)
    if y.ndim <= 2 and x.ndim >= 3:
        # fold the batch into the rows: one mm (or mv) on a (batch*n, k) matrix
        k = x.shape[-1]
        # (the row count spelled out: -1 cannot be inferred when k is 0)
        rows = M.reshape(x, math.prod(x.shape[:-1]), k)
        if y.ndim == 1:
            return M.unsafe_view(mv(rows, y), x.shape[:-1])
        if k != y.shape[0]:
            raise RuntimeError(
                f"mat1 and mat2 shapes cannot be multiplied ({rows.shape[0]}x{k} and "
                f"{y.shape[0]}x{y.shape[1]})"
            )
        return M.unsafe_view(mm(rows, y), x.shape[:-1] + (y.shape[1],))
    # general case: broadcast the batch dims and run one bmm
    xe = M.unsqueeze(x, 0) if x.ndim == 1 else x
    ye = M.unsqueeze(y, -1) if y.ndim == 1 else y
    batch = broadcast_shapes(xe.shape[:-2], ye.shape[:-2])
    n, k = xe.shape[-2:]
    k2, m = ye.shape[-2:]
    if k != k2:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{int(np.prod(batch))}, {k}] but got: [{int(np.prod(batch))}, {k2}]."
        )
    b = int(np.prod(batch))
    xb = M.reshape(M.expand(xe, batch + (n, k)), b, n, k)
    yb = M.reshape(M.expand(ye, batch + (k, m)), b, k, m)
    # the 1-D operands' dims are left out of the view itself (PyTorch's UnsafeViewBackward0)
    return M.unsafe_view(
        bmm(xb, yb), batch + ((n,) if x.ndim > 1 else ()) + ((m,) if y.ndim > 1 else ())
    )



_TYPE = {"int64": "Long", "int32": "Int", "bool": "Bool", "float32": "Float", "float64": "Double"}


@public("function")
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The ``p``-norm distance between each row of ``x1`` (..., P, M) and each row of ``x2``
    (..., R, M): shape (..., P, R). Composed of a broadcast difference and ``norm``, so the
    backward is theirs (node LinalgVectorNormBackward0, not PyTorch's CdistBackward0)."""
    for name, t in (("X1", x1), ("X2", x2)):
        if not t.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_TYPE[t.dtype.name]}")
        if t.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {t.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError("X1 and X2 must have the same number of columns. "
                           f"X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1.dtype is not x2.dtype:
        raise RuntimeError(f"expected scalar type {_TYPE[x1.dtype.name]} but found "
                           f"{_TYPE[x2.dtype.name]}")
    diff = M.unsqueeze(x1, -2) - M.unsqueeze(x2, -3)
    return diff.norm(p=p, dim=-1)


__all__ = ["mm", "bmm", "mv", "dot", "matmul", "sum_to"]
