"""Linear algebra: matmul and friends on NumPy's BLAS; rules are matmuls with transposes."""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import dtypes as D
from .._tensor import PLAIN_SUBCLASSES, Tensor, _wrap_dim
from ..autograd.grad_mode import _state as _grad_state
from ..backend import cpu
from ..backend.cpu import broadcast_shapes
from . import elementwise as E
from . import movement as M
from .forward import multilinear
from .record import needs_grad, record_composite
from .registry import CompositeCtx, composite, depends_on, public, sum_to

_TYPE = D.SCALAR_TYPE
_NAMES = D.C_TYPE


def _same_dtype(a, b, names=("m1", "m2")):
    if a.dtype is not b.dtype:
        raise RuntimeError(
            f"expected {names[0]} and {names[1]} to have the same dtype, but got: "
            f"{_NAMES[a.dtype.name]} != {_NAMES[b.dtype.name]}"
        )


@composite("mm", variants="function method")
def mm(ctx, x, mat2):
    y = mat2
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
        # (x's layout matters only for x's gradient, which needs y saved, and so on)
        x_grad, y_grad = x.requires_grad, y.requires_grad
        ctx.save(x=x if y_grad else None, y=y if x_grad else None)
        ctx.columns = (x_grad and _column_major(a), y_grad and _column_major(b))
    return ctx.backend.matmul(a, b)


def _column_major(a) -> bool:
    """Whether matrix ``a`` is laid out by columns (``w.t()`` of a row-major ``w``), by
    PyTorch's test (strides (1, rows)): a (1, 1) matrix is, so its gradient is a transpose
    (TBackward0 under create_graph)."""
    st0, st1 = a.strides
    return st0 == a.itemsize and st1 == a.shape[0] * a.itemsize


_mm_jvp = mm.defjvp(multilinear(mm, 0, 1))


@mm.defvjp
def mm_vjp(ctx, grad):
    # each gradient in its operand's layout, as PyTorch's mm backward: an operand read by
    # columns (the weight of F.linear, ``w.t()``) gets ``(.. @ ..).t()``, so the gradient that
    # reaches ``w`` is row-major like ``w`` and is stored without a copy
    x_columns, y_columns = getattr(ctx, "columns", (False, False))
    gx = gy = None
    # (where nothing records and all is on the CPU, the same products on the arrays: each
    # mm or t through the op machinery costs 2 to 4 us, six of them here on a small layer)
    g = grad._data if not _grad_state.enabled and grad._lazy is None else None
    if "y" in ctx.saved:
        y = ctx["y"]
        a = y._data if type(g) is np.ndarray else None
        if type(a) is np.ndarray:
            gx = Tensor._make(cpu.matmul(a, g.T).T if x_columns else cpu.matmul(g, a.T))
        else:
            gx = y.mm(grad.t()).t() if x_columns else grad.mm(y.t())
    if "x" in ctx.saved:
        x = ctx["x"]
        a = x._data if type(g) is np.ndarray else None
        if type(a) is np.ndarray:
            gy = Tensor._make(cpu.matmul(g.T, a).T if y_columns else cpu.matmul(a.T, g))
        else:
            gy = grad.t().mm(x).t() if y_columns else x.t().mm(grad)
    return gx, gy


@composite("addmm", variants="function method inplace")
def addmm(ctx, input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)``: ``F.linear``'s one node, as in PyTorch (the
    sum is written into the product's new array)."""
    bias, x, y = input, mat1, mat2
    # (PyTorch's checks, in its order: the bias against mat2, then mat1 against mat2)
    for name, t in (("self", bias), ("mat1", x)):
        if t.dtype is not y.dtype:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got "
                               f"{_TYPE[t.dtype.name]} and {_TYPE[y.dtype.name]}")
    if beta != 1 or alpha != 1:
        if ctx.recorded:
            ctx.save(x=x, y=y)
        return _scaled_sum(ctx, bias, mm(_plain(x), _plain(y)), beta, alpha)
    ctx.beta = ctx.alpha = 1
    out = mm.forward(ctx, x, y)
    try:
        broadcast_shapes(bias._data.shape, out.shape)  # (NumPy's costs 3 us a call)
    except RuntimeError:
        raise RuntimeError(
            f"The expanded size of the tensor ({out.shape[-1]}) must match the existing size "
            f"({bias.shape[-1]}) at non-singleton dimension 1.  Target sizes: "
            f"{list(out.shape)}.  Tensor sizes: {list(bias.shape)}"
        ) from None
    be = ctx.backend
    be.run_elementwise(E.add.kernel(x.dtype, be), [out, bias._data], x.dtype.np, out=out)
    return out


def _addmm_lean(input, mat1, mat2, **kwargs):
    """``addmm(bias, x, w.t())`` as ``F.linear`` calls it on a layer's small CPU batch (a
    1-d bias of the product's width, float32 or float64 matrices of one dtype, no ``beta`` or
    ``alpha``): ``mm``'s forward on a ctx made as ``call_composite`` makes it, the bias added
    in place, and the node recorded as ``call_composite`` records it; None for any other call
    (the composite call checks and runs it)."""
    if kwargs:
        return None
    t = type(input)
    if not (t is Tensor or t in PLAIN_SUBCLASSES) or type(mat1) is not t or type(mat2) is not t:
        return None
    b, x, y = input._data, mat1._data, mat2._data
    if (type(b) is not np.ndarray or type(x) is not np.ndarray or type(y) is not np.ndarray
            or b.ndim != 1 or x.ndim != 2 or y.ndim != 2 or x.dtype.kind != "f"
            or b.dtype is not x.dtype or y.dtype is not x.dtype or b.shape[0] != y.shape[1]
            or x.shape[1] != y.shape[0]):
        return None
    ctx = object.__new__(CompositeCtx)  # (as call_composite makes it)
    ctx.saved = {}
    ctx.backend = cpu
    inputs = (input, mat1, mat2)
    recorded = _grad_state.enabled and needs_grad(inputs)
    if not recorded:
        ctx.recorded = False
    ctx.beta = ctx.alpha = 1
    out = mm.forward(ctx, mat1, mat2)
    np.add(out, b, out=out)  # (one rounding, as the add kernel's)
    result = Tensor._make(out)
    if recorded:
        record_composite(addmm, ctx, inputs, (result,))
    return result


addmm.lean = _addmm_lean


@addmm.defjvp
def addmm_jvp(result, tangents, bias, x, y, *, beta=1, alpha=1):
    t = _mm_jvp(result, tangents[1:], x, y)
    t = None if t is None else _times(t, alpha)
    if tangents[0] is not None:
        tb = _times(tangents[0], beta)
        t = tb.expand(result.shape) if t is None else t + tb
    return t


@addmm.defvjp
def addmm_vjp(ctx, grad):
    gx, gy = mm_vjp(ctx, _times(grad, ctx.alpha))
    return sum_to(_times(grad, ctx.beta), ctx.input_shapes[0]), gx, gy


@composite("bmm", variants="function method")
def bmm(ctx, x, mat2):
    y = mat2
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
    if not (x.shape[0] and x.shape[1] and y.shape[2] and x.shape[2]):
        # an empty result, or an empty sum (zeros): PyTorch makes it in batch2's dtype and
        # returns before it compares the operands' dtypes; an integer result cannot then be
        # recorded (the other operand requires grad)
        if ctx.recorded and not y.dtype.is_floating_point:
            raise RuntimeError(f"Autograd not support dtype: {_TYPE[y.dtype.name]}")
        shape = (x.shape[0], x.shape[1], y.shape[2])
        return ctx.backend.zeros(shape, y._data.dtype)
    if x.dtype is not y.dtype:
        raise RuntimeError(f"expected scalar type {_TYPE[x.dtype.name]} but found "
                           f"{_TYPE[y.dtype.name]}")
    return ctx.backend.matmul(x._data, y._data)


bmm.defjvp(multilinear(bmm, 0, 1))


@bmm.defvjp
def bmm_vjp(ctx, grad):
    # (an empty product of two dtypes has batch2's, which its gradients take)
    x = ctx["x"] if "x" in ctx.saved else None
    y = ctx["y"] if "y" in ctx.saved else None
    gx = grad.bmm(y.transpose(1, 2).to(grad.dtype)) if y is not None else None
    gy = x.transpose(1, 2).to(grad.dtype).bmm(grad) if x is not None else None
    return gx, gy


@composite("mv", variants="function method")
def mv(ctx, x, vec):
    v = vec
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
def dot(ctx, x, tensor):
    y = tensor
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
def matmul(x, other):
    """``x @ other`` with PyTorch's rules for 1-D operands and broadcast batch dimensions."""
    y = other
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
    if x.ndim == 3 and y.ndim == 3 and y.shape[0] == 1 and x.shape[0] != 1 and y.requires_grad:
        # PyTorch drops the batch of one of a y that requires grad (squeeze: SqueezeBackward1,
        # in or out of no_grad) and folds x's into rows; otherwise the general bmm below
        y = M.squeeze(y, 0)
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
    if x.ndim <= 2 and y.ndim >= 3 and _folds_transposed(x, y):
        # PyTorch folds y's batch into the rows of y.mT and runs one mv or mm (its gradient
        # then reaches y through TransposeBackward0, and a 2-D x's result is made contiguous)
        t1 = M.transpose(y, -2, -1)
        t2 = M.t(x) if x.ndim == 2 else x
        rows = M.reshape(t1, math.prod(t1.shape[:-1]), t1.shape[-1])
        if t2.ndim == 1:
            return M.unsafe_view(mv(rows, t2), t1.shape[:-1])
        out = M.unsafe_view(mm(rows, t2), t1.shape[:-1] + (t2.shape[1],))
        return M.contiguous(M.transpose(out, -2, -1))
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


def _folds_transposed(x, y) -> bool:
    """Whether PyTorch's matmul folds ``x @ y`` (x 1-D or 2-D, y at least 3-D) into one mm or
    mv on the rows of ``y.mT`` (its ``should_fold``): always when x requires grad; never for
    a 2-D x otherwise; else when y.mT's batch dims fold into rows without a copy."""
    if x.requires_grad:
        return True
    if x.ndim == 2:
        return False
    if y.numel() == 0:
        return True
    shape, strides = list(y.shape), list(y.stride())
    shape[-2:], strides[-2:] = shape[:-3:-1], strides[:-3:-1]  # (y.mT's)
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(len(shape) - 2))


# ---------------------------------------------------------------- products of more operands


def _plain(t):
    """``t``'s values as a Tensor no graph records (what a composite's forward computes on)."""
    return Tensor._make(t._data)


def _scaled_sum(ctx, input, product, beta, alpha):
    """``beta * input + alpha * product`` (``input`` ignored when ``beta`` is 0, NaN included,
    as in PyTorch); saves what the backward reads."""
    D.check_overflow(beta, product.dtype)
    D.check_overflow(alpha, product.dtype)
    ctx.beta, ctx.alpha = beta, alpha
    out = product if alpha == 1 else E.mul(product, alpha)
    if beta != 0:
        out = E.add(out, _plain(input) if beta == 1 else E.mul(_plain(input), beta))
    elif out.shape != tuple(input.shape):
        out = M.expand(out, *np.broadcast_shapes(tuple(input.shape), out.shape))
    return M.contiguous(out)._data


def _times(g, k):
    return g if k == 1 else g * k


@composite("addmv", variants="function method inplace inplace_function")
def addmv(ctx, input, mat, vec, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)``."""
    ctx.save(mat=mat, vec=vec)
    return _scaled_sum(ctx, input, mv(_plain(mat), _plain(vec)), beta, alpha)


@addmv.defvjp
def addmv_vjp(ctx, grad):
    g = _times(grad, ctx.alpha)
    return (sum_to(_times(grad, ctx.beta), ctx.input_shapes[0]),
            g.unsqueeze(1) * ctx["vec"].unsqueeze(0), ctx["mat"].t().mv(g))


@composite("baddbmm", variants="function method inplace")
def baddbmm(ctx, input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * (batch1 @ batch2)``, batch by batch."""
    ctx.save(x=batch1, y=batch2)
    return _scaled_sum(ctx, input, bmm(_plain(batch1), _plain(batch2)), beta, alpha)


@baddbmm.defvjp
def baddbmm_vjp(ctx, grad):
    g = _times(grad, ctx.alpha)
    return (sum_to(_times(grad, ctx.beta), ctx.input_shapes[0]),
            g.bmm(ctx["y"].transpose(1, 2)), ctx["x"].transpose(1, 2).bmm(g))


@composite("addbmm", variants="function method inplace")
def addbmm(ctx, input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``."""
    ctx.save(x=batch1, y=batch2)
    product = M.reshape(M.permute(_plain(batch1), (1, 0, 2)), batch1.shape[1], -1).mm(
        M.reshape(_plain(batch2), -1, batch2.shape[2]))
    return _scaled_sum(ctx, input, product, beta, alpha)


@addbmm.defvjp
def addbmm_vjp(ctx, grad):
    g = _times(grad, ctx.alpha)
    x, y = ctx["x"], ctx["y"]
    gb = M.expand(g.unsqueeze(0), x.shape[0], *g.shape)
    return (sum_to(_times(grad, ctx.beta), ctx.input_shapes[0]),
            gb.bmm(y.transpose(1, 2)), x.transpose(1, 2).bmm(gb))


@composite("addr", variants="function method inplace")
def addr(ctx, input, vec1, vec2, *, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)``."""
    for name, t in (("vec1", vec1), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {t.ndim}-D")
    for name, v in (("beta", beta), ("alpha", alpha)):
        if type(v) is bool and input.dtype is not D.bool_:
            raise RuntimeError(f"Boolean {name} only supported for Boolean results.")
    ctx.save(vec1=vec1, vec2=vec2)
    product = E.mul(M.reshape(_plain(vec1), -1, 1), _plain(vec2))
    # (input expanded to the product's shape first: PyTorch's error when it cannot be)
    return _scaled_sum(ctx, M.expand(_plain(input), *product.shape), product, beta, alpha)


@addr.defvjp
def addr_vjp(ctx, grad):
    g = _times(grad, ctx.alpha)
    return (sum_to(_times(grad, ctx.beta), ctx.input_shapes[0]), g.mv(ctx["vec2"]),
            g.t().mv(ctx["vec1"]))


def _bad_inplace_call(x, shape):
    if tuple(x.shape) != shape:
        raise RuntimeError(f"Bad in-place call: input tensor size {list(x.shape)} and output "
                           f"tensor size {list(shape)} should match")


def _addmm_inplace_check(x, mat1, mat2, **_):
    if mat1.ndim == mat2.ndim == 2:
        _bad_inplace_call(x, (mat1.shape[0], mat2.shape[1]))


def _baddbmm_inplace_check(x, batch1, batch2, **_):
    if batch1.ndim == batch2.ndim == 3:
        _bad_inplace_call(x, (batch1.shape[0], batch1.shape[1], batch2.shape[2]))


def _addr_inplace_check(x, vec1, vec2, **_):
    if x.ndim != 2:
        raise RuntimeError(f"2D tensor expected, got {x.ndim}D tensor for input")
    if vec1.ndim == vec2.ndim == 1 and tuple(x.shape) != (vec1.shape[0], vec2.shape[0]):
        raise RuntimeError(f"size mismatch, input: {list(x.shape)}, v1: {list(vec1.shape)}, "
                           f"v2: {list(vec2.shape)}")


# (PyTorch's in-place variants check x's shape before they compute, in their own words)
addmm.inplace_check = _addmm_inplace_check
baddbmm.inplace_check = _baddbmm_inplace_check
addr.inplace_check = _addr_inplace_check


@composite("vdot", variants="function method")
def vdot(ctx, input, other):
    """The dot product of two 1-d tensors (of real numbers: ``dot``), under its own node."""
    return dot.forward(ctx, input, other)


vdot.defvjp(dot_vjp)


@composite("linalg_cross", node="LinalgCrossBackward0")
def linalg_cross(ctx, x, y, dim=-1):
    """The cross product of 3-vectors along ``dim`` (the operands broadcast)."""
    if x.ndim != y.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = _wrap_dim(dim, x.ndim)
    x_, y_ = _plain(x), _plain(y)
    if x_.shape[d] != 3 or y_.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{x_.shape[d]} and {y_.shape[d]}")
    ctx.dim = d
    ctx.save(x=x, y=y)
    a, b = x_, y_
    part = [(lambda t, k=k: M.select(t, d, k)) for k in range(3)]
    comps = [E.sub(E.mul(part[i](a), part[j](b)), E.mul(part[j](a), part[i](b)))
             for i, j in ((1, 2), (2, 0), (0, 1))]
    return M.stack(comps, d)._data


@linalg_cross.defvjp
def linalg_cross_vjp(ctx, grad):
    x, y = ctx["x"], ctx["y"]
    return (sum_to(linalg_cross(y, grad, ctx.dim), ctx.input_shapes[0]),
            sum_to(linalg_cross(grad, x, ctx.dim), ctx.input_shapes[1]))


WARN_CROSS_DIM = (
    "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the "
    "dim explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to "
    "agree with that of linalg.cross in a future release."
)


@public("function method")
def cross(input, other, dim=None):
    """``linalg.cross``; without ``dim``, along the first dim of size 3 (deprecated)."""
    if dim is None:
        warnings.warn(WARN_CROSS_DIM, UserWarning, stacklevel=3)
        shape = np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
        dim = next((k for k, n in enumerate(shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return linalg_cross(input, other, dim)


@public("function method")
def kron(input, other):
    """The Kronecker product: every element of ``input`` times the whole of ``other``."""
    n = max(input.ndim, other.ndim)
    a_shape = (1,) * (n - input.ndim) + tuple(input.shape)
    b_shape = (1,) * (n - other.ndim) + tuple(other.shape)
    # (PyTorch's _unsafe_view for the operands too: no views of them, so a later in-place
    # write into an operand leaves the product's saved operands valid, UnsafeViewBackward0)
    a = M.unsafe_view(input, tuple(v for s in a_shape for v in (s, 1)))
    b = M.unsafe_view(other, tuple(v for s in b_shape for v in (1, s)))
    return M.unsafe_view(E.mul(a, b), tuple(p * q for p, q in zip(a_shape, b_shape)))


def _check_weights(w, kind, n, integral):
    """PyTorch's checks of ``cov``'s fweights (``integral``) or aweights."""
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {kind} to have one or fewer dimensions but got "
                           f"{kind} with {w.ndim} dimensions")
    if w.dtype.is_floating_point == integral or w.dtype is D.bool_:
        raise RuntimeError(f"cov(): expected {kind} to have "
                           f"{'integral' if integral else 'floating point'} dtype but got "
                           f"{kind} with {_TYPE[w.dtype.name]} dtype")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {kind} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {n}")
    if n and bool(w.min() < 0):
        raise RuntimeError(f"cov(): {kind} cannot be negative")


@public("function method")
def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables (rows) of ``input`` over its observations
    (columns), optionally weighted: PyTorch's composition (DivBackward0, then squeezed)."""
    if input.ndim > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    if input.dtype is D.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = M.view(input, 1, -1) if input.ndim < 2 else input
    n = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights(fweights, "fweights", n, True)
        w = fweights
    if aweights is not None:
        _check_weights(aweights, "aweights", n, False)
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum = Tensor._make(np.asarray(n, np.int64)).to(input.device)
    else:
        w_sum = w.sum()
        if not bool(w_sum != 0):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (x if w is None else x * w).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm_factor = w_sum - correction
    if bool(norm_factor <= 0):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=3)
        norm_factor = norm_factor.zero_()
    x = x - M.unsqueeze(avg, 1)
    c = mm(x, M.t(x if w is None else x * w))
    return M.squeeze(c / norm_factor)


@public("function method")
def corrcoef(input):
    """Pearson's correlation coefficients of the variables (rows) of ``input``: ``cov``
    normalized by the standard deviations, clipped to [-1, 1] (as PyTorch and NumPy)."""
    if input.ndim > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got "
                           f"an input with {input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:
        return c / c  # (NaN for a covariance of 0, NaN or inf: 1 otherwise)
    stddev = c.diagonal().sqrt()
    c = c / M.view(stddev, -1, 1)
    c = c / M.view(stddev, 1, -1)
    return c.clip(-1, 1)


@public("function")
def tensordot(a, b, dims=2):
    """The sum over the pairs of dims ``dims`` (a count: ``a``'s last and ``b``'s first; or a
    pair of lists) of the products of ``a`` and ``b``."""
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    da = [_wrap_dim(d, a.ndim) for d in da]
    db = [_wrap_dim(d, b.ndim) for d in db]
    for i, j in zip(da, db):
        if a.shape[i] != b.shape[j]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[i]} in dim {i} and second has size {b.shape[j]} in "
                               f"dim {j}")
    keep_a = [d for d in range(a.ndim) if d not in da]
    keep_b = [d for d in range(b.ndim) if d not in db]
    k = math.prod(a.shape[d] for d in da)
    left = M.reshape(M.permute(a, tuple(keep_a + da)), -1 if k else
                     math.prod(a.shape[d] for d in keep_a), k)
    right = M.reshape(M.permute(b, tuple(db + keep_b)), k, -1 if k else
                      math.prod(b.shape[d] for d in keep_b))
    return M.reshape(mm(left, right), tuple(a.shape[d] for d in keep_a)
                     + tuple(b.shape[d] for d in keep_b))


@public("function method")
def inner(input, other):
    """The sum of products over the last dims (a scalar operand: the product)."""
    if input.ndim == 0 or other.ndim == 0:
        return E.mul(input, other)
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, ([-1], [-1]))




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


@public("function functional")
def pdist(input, p=2):
    """The ``p``-norm distance between each pair of rows ``i < j`` of the (N, M) ``input``, in
    that order: N (N - 1) / 2 of them. Composed as ``cdist`` (node LinalgVectorNormBackward0,
    not PyTorch's PdistBackward0; a zero distance has gradient 0, as there)."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    rows, cols = (Tensor._make(a).to(input.device) for a in np.triu_indices(input.shape[0], 1))
    dist = (input[rows] - input[cols]).norm(p=p, dim=-1)
    # (the count of differing elements: PyTorch's gradient is zeros, the norm's is undefined)
    return depends_on(dist.detach(), input) if p == 0 else dist


__all__ = ["mm", "bmm", "mv", "dot", "matmul", "sum_to", "addmv", "baddbmm", "addbmm", "vdot",
           "linalg_cross", "cross", "kron", "tensordot", "inner"]


# ---------------------------------------------------------------- torch.linalg: inv, det, solve


class LinAlgError(RuntimeError):
    """A linear-algebra routine failed on its input's values (a singular matrix):
    PyTorch's ``torch.linalg.LinAlgError``."""


def _matrices(x, op: str, square=True) -> np.ndarray:
    """``x``'s values for a NumPy (LAPACK) routine on batches of (``square``) matrices: on
    CUDA a copy to the host, the result copied back by ``_back`` (no CUDA solver here yet)."""
    if x.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    n, m = x.shape[-2], x.shape[-1]
    if square and n != m:
        raise RuntimeError(
            f"{op}: A must be batches of square matrices, but they are {n} by {m} matrices")
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got "
                           f"{_TYPE[x.dtype.name]}")
    return x._data if x.device.type == "cpu" else x._host()


def _back(ctx, out):
    """A host result on the op's device."""
    return out if ctx.backend is cpu else ctx.backend.to_device(np.asarray(out, order="C"))


def _zero_pivot(a: np.ndarray) -> int:
    """The 1-based index of the first zero diagonal element of ``a``'s LU factors (partial
    pivoting, as LAPACK's getrf), or 0: the number PyTorch's singular-matrix errors give."""
    u = np.array(a, dtype=np.float64)
    n = u.shape[0]
    for k in range(n):
        p = k + int(np.argmax(np.abs(u[k:, k])))
        if u[p, k] == 0:
            return k + 1
        u[[k, p]] = u[[p, k]]
        u[k + 1:, k:] -= np.outer(u[k + 1:, k] / u[k, k], u[k, k:])
    return 0


def _singular(a: np.ndarray, op: str, what: str) -> LinAlgError:
    batch = a.reshape(-1, *a.shape[-2:])
    for b, m in enumerate(batch):
        k = _zero_pivot(m)
        if k:
            where = f"(Batch element {b}): " if a.ndim > 2 else ""
            return LinAlgError(f"{op}: {where}The diagonal element {k} is zero, {what}")
    return LinAlgError(f"{op}: the input matrix is singular.")


@composite("linalg_inv", node="LinalgInvExBackward0")
def linalg_inv(ctx, x):
    """The inverse of each square matrix in ``x`` (..., n, n)."""
    a = _matrices(x, "linalg.inv")
    try:
        out = np.linalg.inv(a)
    except np.linalg.LinAlgError:
        raise _singular(a, "linalg.inv", "the inversion could not be completed because the "
                        "input matrix is singular.") from None
    ctx.save(x=x)
    return _back(ctx, out)


@linalg_inv.defvjp
def linalg_inv_vjp(ctx, grad):
    # d(A^-1) = -A^-1 dA A^-1, so dA = -A^-T G A^-T
    inv_t = linalg_inv(ctx["x"]).transpose(-2, -1)
    return -(inv_t @ grad @ inv_t)


@public("function method")
def inverse(input):
    """``linalg.inv``."""
    return linalg_inv(input)


@composite("linalg_det", node="LinalgDetBackward0")
def linalg_det(ctx, x):
    """The determinant of each square matrix in ``x`` (..., n, n)."""
    a = _matrices(x, "linalg.det")
    ctx.save(x=x)
    return _back(ctx, np.asarray(np.linalg.det(a), dtype=a.dtype))


@linalg_det.defvjp
def linalg_det_vjp(ctx, grad):
    # d det(A) = det(A) tr(A^-1 dA); at a singular matrix the inverse raises LinAlgError
    x = ctx["x"]
    scale = (grad * linalg_det(x)).unsqueeze(-1).unsqueeze(-1)
    return scale * linalg_inv(x).transpose(-2, -1)


@public("function method")
def det(input):
    """``linalg.det``."""
    return linalg_det(input)
