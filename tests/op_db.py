"""The op table: one row per registry op, driving forward, gradient and name tests.

A row gives the public call, a NumPy reference, the sample shapes and the input domain.
``test_ops.py`` fails if a registry op has no row here.
"""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import numbagrad as ng

# sample shapes: a tuple is a plain contiguous shape; strings are layouts built by ``make``
UNARY_SHAPES = [(), (3,), (2, 3), (2, 3, 2), "transposed", "strided", "expanded", (0, 3)]
BINARY_SHAPES = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((2, 1), (1, 3)),
    ((), (2, 3)),
    ((2, 3), ()),
    ("transposed", "transposed"),
    ("strided", (3,)),
    ((0, 3), (3,)),
]
REDUCE_SHAPES = [(4,), (2, 3), (2, 3, 2), "transposed", "strided"]


@dataclass
class OpInfo:
    name: str  # registry key
    call: Callable  # on numbagrad tensors (and Python scalars)
    ref: Callable | None  # the same on NumPy arrays
    arity: int = 1
    shapes: list = field(default_factory=lambda: UNARY_SHAPES)
    domain: tuple = (-2.0, 2.0)
    kink: float | None = None  # keep samples this far from 0 (abs, relu, sign, ...)
    grad: bool = True
    gradgrad: bool = True
    node: str | None = None  # grad_fn name PyTorch gives it
    rtol32: float = 1e-5
    int_ok: bool = False  # also run forward on int64 inputs
    same_dtype: bool = True  # the output has the input's dtype
    # also run with the lazy forward and the backward fusion from size 0 (ops/lazy.py,
    # ops/fusion.py) and compare with the eager run: values, dtypes and gradients
    lazy_and_fused: bool = True


LAYOUTS = {
    # name: (base shape, how the view is made from the base)
    # (a grid (N, OH, OW, 2) that is a view of one laid out (N, OH, 2, OW))
    "grid_transposed": ((2, 2, 2, 2), lambda b: b.transpose(-1, -2),
                        lambda a: np.swapaxes(a, -1, -2)),
    "transposed": ((3, 2), lambda b: b.t(), lambda a: a.T),
    "strided": ((2, 6), lambda b: b[:, ::2], lambda a: a[:, ::2]),
    "expanded": ((2, 1), lambda b: b.expand(2, 3), lambda a: np.broadcast_to(a, (2, 3))),
}


def base_and_layout(shape, dtype, info: OpInfo, rng):
    """(contiguous base array, tensor layout fn, NumPy layout fn) for a sample shape."""
    if isinstance(shape, str):
        base_shape, tfn, afn = LAYOUTS[shape]
    else:
        base_shape, tfn, afn = shape, (lambda b: b), (lambda a: a)
    lo, hi = info.domain
    return _values(base_shape, lo, hi, info, rng).astype(dtype), tfn, afn


def _values(shape, lo, hi, info, rng):
    v = rng.uniform(lo, hi, size=shape)
    if info.kink is not None:
        v = np.where(np.abs(v) < info.kink, np.sign(v + 1e-12) * info.kink + v, v)
    return v


def _well(x):
    return x + 3 * ng.eye(x.shape[-1], dtype=x.dtype)


def _nll_loss_backward(g, x):
    """nll_loss_backward (reduction='none', targets 0 and 2) of ``x``, from the ctx of the
    loss it is the gradient of."""
    loss = ng.nn.functional.nll_loss(x.detach().requires_grad_(), ng.tensor([0, 2]),
                                     reduction="none")
    return ng.ops.loss.nll_loss_backward(g, x, loss.grad_fn.ctx)


def _nll_loss_backward_np(g, a):
    out = np.zeros(a.shape, a.dtype)
    out[[0, 1], [0, 2]] = -g
    return out


def _gelu_tanh_grad_np(a):
    k = math.sqrt(2 / math.pi)
    t = np.tanh(k * (a + 0.044715 * a**3))
    return 0.5 * (1 + t) + 0.5 * a * (1 - t * t) * k * (1 + 3 * 0.044715 * a * a)


def _well_np(a):
    return a + 3 * np.eye(a.shape[-1], dtype=a.dtype)


def _erfinv_np(a):
    """erfinv by Newton's method on erf from 0, to convergence (|a| < 1)."""
    erf = np.vectorize(math.erf, otypes=[np.float64])
    y = np.zeros(np.shape(a))
    for _ in range(30):
        y = y - (erf(y) - a) / (2 / math.sqrt(math.pi) * np.exp(-y * y))
    return y.astype(np.asarray(a).dtype)


def _i1_np(a):
    """The modified Bessel function of order 1 by its power series (|a| small)."""
    h = np.asarray(a, np.float64) / 2
    out = sum(h ** (2 * k + 1) / (math.factorial(k) * math.factorial(k + 1)) for k in range(30))
    return out.astype(np.asarray(a).dtype)


def _written_np(a, index, b):
    out = a.copy()
    out[index] = b
    return out


def _renorm_np(a, maxnorm):
    norm = np.sqrt((a * a).sum(1, keepdims=True))
    return a * np.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)


def _tri(x):
    """A well-conditioned triangular factor (what the upper triangle of ``x`` contributes is
    its gradient's)."""
    return _well(x).tril()


def _tri_np(a):
    return np.tril(_well_np(a))


def _block_diag_np(*blocks):
    out = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)),
                   blocks[0].dtype)
    r = c = 0
    for b in blocks:
        out[r:r + b.shape[0], c:c + b.shape[1]] = b
        r, c = r + b.shape[0], c + b.shape[1]
    return out


def _spd(x):
    return x @ x.mT + 3 * ng.eye(x.shape[-1], dtype=x.dtype)


def _spd_np(a):
    return a @ np.swapaxes(a, -1, -2) + 3 * np.eye(a.shape[-1], dtype=a.dtype)


def _dominant(x):  # (no row exchanges in its LU: the reference below does not pivot)
    return x + 10 * ng.eye(x.shape[-1], dtype=x.dtype)


def _dominant_np(a):
    return a + 10 * np.eye(a.shape[-1], dtype=a.dtype)


def _lu_np(a):
    """LU factors of ``a`` without pivoting, packed as getrf leaves them."""
    lu = np.array(a)
    n = lu.shape[-1]
    for j in range(n - 1):
        lu[..., j + 1:, j] /= lu[..., j, j, None]
        lu[..., j + 1:, j + 1:] -= lu[..., j + 1:, j, None] * lu[..., j, None, j + 1:]
    return lu


_CTC_TARGETS = [[1, 2], [1, 1]]


def _ctc(x):
    return NF.ctc_loss(x.log_softmax(-1), ng.tensor(_CTC_TARGETS), [x.shape[0]] * 2, [2, 2],
                       reduction="none")


def _ctc_np(a):
    """Each sequence's CTC loss by the alpha recursion in log space (blank 0)."""
    lp = a - np.log(np.exp(a).sum(-1, keepdims=True))
    out = []
    for b, target in enumerate(_CTC_TARGETS):
        ext = [0]
        for label in target:
            ext += [label, 0]
        alpha = np.full(len(ext), -np.inf)
        alpha[:2] = lp[0, b, ext[:2]]
        for t in range(1, lp.shape[0]):
            prev = alpha.copy()
            for s in range(len(ext)):
                terms = [prev[s]] + ([prev[s - 1]] if s > 0 else [])
                if s > 1 and ext[s] != 0 and ext[s] != ext[s - 2]:
                    terms.append(prev[s - 2])
                alpha[s] = np.logaddexp.reduce(terms) + lp[t, b, ext[s]]
        out.append(-np.logaddexp(alpha[-1], alpha[-2]))
    return np.array(out, a.dtype)


def _expm_np(a):
    """exp of (diagonalisable) matrices through their eigendecomposition."""
    w, v = np.linalg.eig(a)
    return ((v * np.exp(w)[..., None, :]) @ np.linalg.inv(v)).real.astype(a.dtype)


def _householder_np(a, tau):
    """The product of the reflectors I - tau_i v_i v_i^T, each formed as a matrix."""
    m, n = a.shape[-2:]
    out = np.empty(a.shape, a.dtype)
    for idx in np.ndindex(*a.shape[:-2]):
        q = np.eye(m)
        for i in range(tau.shape[-1]):
            v = np.where(np.arange(m) > i, a[idx][:, i], 0.0)
            v[i] = 1.0
            q = q @ (np.eye(m) - tau[idx][i] * np.outer(v, v))
        out[idx] = q[:, :n]
    return out


def _geqrf_np(a):
    """geqrf's packed factors (Fortran order in NumPy's raw mode)."""
    return np.swapaxes(np.linalg.qr(a, mode="raw")[0], -1, -2)


U = OpInfo
NF = ng.nn.functional
B = BINARY_SHAPES
# fewer samples for the ops whose kernels share the code paths above (a shorter suite)
S2 = ["transposed", (2, 3)]
B2 = [("transposed", "transposed"), ((2, 3), (3,))]

# max pooling's backward and its gather: 2 planes of 2 x 2 (x 2) positions, and indices into
# them as a 2 x 2 (x 2) max pooling with padding 1 gives them (3 x 3 (x 3) per plane)
_POOL_IDX = {n: np.random.default_rng(5).integers(0, 2**n, (2,) + (3,) * n) for n in (2, 3)}


def _pool_grad(g, n, op="max_pool_backward"):
    idx = ng.tensor(_POOL_IDX[n]).to(g.device)
    return getattr(ng.ops.conv.POOLING[n], op)(g, idx, (2,) * n)


def _pool_grad_np(g, n):
    out = np.zeros((2, 2**n), g.dtype)
    for c in range(2):
        np.add.at(out[c], _POOL_IDX[n][c].ravel(), g[c].ravel())
    return out.reshape((2,) + (2,) * n)


def _pool_gather(h, n):
    return ng.ops.conv.POOLING[n].max_pool_gather(h, ng.tensor(_POOL_IDX[n]).to(h.device), n)


def _pool_gather_np(h, n):
    return np.stack([h[c].ravel()[_POOL_IDX[n][c]] for c in range(2)])


def _avg_back(g, n):
    geom = ng.ops.conv.Geometry((2,) * n, (1,) * n, (1,) * n, (0,) * n, (1,) * n,
                                count_include_pad=False)
    return ng.ops.conv.POOLING[n].avg_pool_backward(g, (2,) * n, geom)


def _pool_rows(n):
    """The op rows of the n-d pooling ops (n = 2, 3): small planes, and a batch of one."""
    F, nd, ND = ng.nn.functional, f"{n}d", f"{n}D"
    pool = (2,) * n  # an input's plane (and 3 x 3 (x 3): a padded pooling's output)
    size = (2, 3) if n == 2 else (2, 3, 2)  # adaptive pooling's output
    return [
        U(f"max_pool{nd}_with_indices", lambda x: getattr(F, f"max_pool{nd}")(x, 2, 1, 1),
          lambda a: _pool_np(a, 2, 1, 1, np.max, n),
          shapes=[(2, 3, 3, 2)[: n + 1], (1, 2, 4, 3, 2)[: n + 2]],
          node=f"MaxPool{ND}WithIndicesBackward0"),
        U(f"max_pool{nd}_backward", lambda g: _pool_grad(g, n), lambda g: _pool_grad_np(g, n),
          shapes=[(2,) + (3,) * n], node=f"MaxPool{ND}WithIndicesBackwardBackward0"),
        U(f"max_pool{nd}_gather", lambda h: _pool_gather(h, n),
          lambda h: _pool_gather_np(h, n), shapes=[(2,) + pool], node="GatherBackward0"),
        U(f"avg_pool{nd}",
          lambda x: getattr(F, f"avg_pool{nd}")(x, 2, 1, 1, count_include_pad=False),
          lambda a: _pool_np(a, 2, 1, 1, np.mean, n),
          shapes=[(2, 3, 3, 2)[: n + 1], (1, 2, 4, 3, 2)[: n + 2]],
          node=f"AvgPool{ND}Backward0"),
        U(f"avg_pool{nd}_backward", lambda g: _avg_back(g, n),
          lambda g: _adjoint(lambda v: _pool_np(v, 2, 1, 1, np.mean, n), (2,) + pool, g),
          shapes=[(2,) + (3,) * n], node=f"AvgPool{ND}BackwardBackward0"),
        U(f"adaptive_avg_pool{nd}",
          lambda x: getattr(F, f"adaptive_avg_pool{nd}")(x, size),
          lambda a: _adaptive_np(a, size), shapes=[(2, 3, 4, 3)[: n + 1], (1, 2, 5, 3, 4)[: n + 2]],
          node=f"AdaptiveAvgPool{ND}Backward0"),
        U(f"adaptive_avg_pool{nd}_backward",
          lambda g: ng.ops.conv.POOLING[n].adaptive_avg_pool_backward(g, (3, 4, 3)[:n]),
          lambda g: _adjoint(lambda v: _adaptive_np(v, size), (2,) + (3, 4, 3)[:n], g),
          shapes=[(2,) + size], node=f"AdaptiveAvgPool{ND}BackwardBackward0"),
        U(f"adaptive_max_pool{nd}",
          lambda x: getattr(F, f"adaptive_max_pool{nd}")(x, (2,) * n),
          lambda a: _adaptive_np(a, (2,) * n, np.max),
          shapes=[(2, 3, 4, 3)[: n + 1], (1, 2, 3, 3, 2)[: n + 2]],
          node=f"AdaptiveMaxPool{ND}Backward0"),
        U(f"adaptive_max_pool{nd}_backward",
          lambda g: _pool_grad(g, n, "adaptive_max_pool_backward"),
          lambda g: _pool_grad_np(g, n), shapes=[(2,) + (3,) * n],
          node=f"AdaptiveMaxPool{ND}BackwardBackward0"),
    ]


OPS = [
    # ---------------------------------------------------------------- unary
    U("neg", lambda x: -x, np.negative, int_ok=True),
    U("abs", lambda x: x.abs(), np.abs, kink=0.1, int_ok=True),
    U("sign", lambda x: x.sign(), np.sign, kink=0.1, int_ok=True),
    U("exp", lambda x: x.exp(), np.exp),
    U("log", lambda x: x.log(), np.log, domain=(0.2, 3.0), node="LogBackward0"),
    U("log1p", lambda x: x.log1p(), np.log1p, domain=(-0.5, 2.0), node="Log1PBackward0"),
    U("expm1", lambda x: x.expm1(), np.expm1),
    U("sqrt", lambda x: x.sqrt(), np.sqrt, domain=(0.2, 3.0)),
    U("rsqrt", lambda x: x.rsqrt(), lambda a: 1 / np.sqrt(a), domain=(0.2, 3.0)),
    U("reciprocal", lambda x: x.reciprocal(), np.reciprocal, domain=(0.5, 2.0)),
    U("sin", lambda x: x.sin(), np.sin),
    U("cos", lambda x: x.cos(), np.cos),
    U("tan", lambda x: x.tan(), np.tan, domain=(-1.0, 1.0)),
    U("tanh", lambda x: x.tanh(), np.tanh),
    U("sigmoid", lambda x: x.sigmoid(), lambda a: 1 / (1 + np.exp(-a))),
    U("relu", lambda x: x.relu(), lambda a: np.maximum(a, 0), kink=0.1, int_ok=True),
    # the rules' own ops, under create_graph (their double backward is PyTorch's formula)
    U("tanh_backward", lambda g, y: ng.ops.elementwise.tanh_backward(g, y),
      lambda g, b: g * (1 - b * b), 2, B2),
    U("sigmoid_backward", lambda g, y: ng.ops.elementwise.sigmoid_backward(g, y),
      lambda g, b: g * b * (1 - b), 2, B2),
    U("leaky_relu_backward", lambda g, x: ng.ops.elementwise.leaky_relu_backward(g, x, 0.2),
      lambda g, a: np.where(a > 0, g, g * 0.2), 2, B2, kink=0.1),
    U("softplus_backward",
      lambda g, x: ng.ops.elementwise.softplus_backward(g, x, 1.5, 2.0),
      lambda g, a: np.where(1.5 * a > 2.0, g, g / (1 + np.exp(-1.5 * a))), 2, B2,
      domain=(-2.0, 2.5), kink=0.05),
    U("gelu_backward", lambda g, x: ng.ops.elementwise.gelu_backward(g, x),
      lambda g, a: g * (0.5 * (1 + np.vectorize(math.erf)(a / math.sqrt(2)))
                        + a * np.exp(-0.5 * a * a) / math.sqrt(2 * math.pi)), 2, B2),
    U("gelu_tanh_backward", lambda g, x: ng.ops.elementwise.gelu_tanh_backward(g, x),
      lambda g, a: g * _gelu_tanh_grad_np(a), 2, B2, node="GeluBackwardBackward0"),
    U("masked_fill_scalar", lambda x: ng.ops.elementwise.masked_fill_scalar(x, x > 0, 0.5),
      lambda a: np.where(a > 0, 0.5, a), kink=0.1, node="MaskedFillBackward0"),
    U("threshold_backward", lambda g, x: ng.ops.elementwise.threshold_backward(g, x, 0.5),
      lambda g, a: np.where(a <= 0.5, 0, g), 2, B2, domain=(-1.0, 2.0), kink=0.1),
    U("softplus", lambda x: ng.nn.functional.softplus(x, beta=1.5, threshold=2.0),
      lambda a: np.where(1.5 * a > 2.0, a, np.log1p(np.exp(1.5 * a)) / 1.5), kink=0.05,
      domain=(-2.0, 2.5)),
    U("erf", lambda x: x.erf(), lambda a: np.vectorize(math.erf, otypes=[a.dtype])(a)),
    U("leaky_relu", lambda x: ng.nn.functional.leaky_relu(x, 0.2),
      lambda a: np.where(a > 0, a, a * 0.2), kink=0.1, node="LeakyReluBackward0"),
    U("elu", lambda x: ng.nn.functional.elu(x, alpha=1.5),
      lambda a: np.where(a > 0, a, 1.5 * np.expm1(a)), kink=0.1, node="EluBackward0"),
    U("gelu", lambda x: ng.nn.functional.gelu(x),
      lambda a: 0.5 * a * (1 + np.vectorize(math.erf, otypes=[a.dtype])(a / math.sqrt(2))),
      node="GeluBackward0"),
    U("gelu_tanh", lambda x: ng.nn.functional.gelu(x, approximate="tanh"),
      lambda a: 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a**3))),
      node="GeluBackward0"),
    U("silu", lambda x: ng.nn.functional.silu(x), lambda a: a / (1 + np.exp(-a)),
      node="SiluBackward0"),
    # the activations of tests/test_activations_more.py (which checks them against PyTorch):
    # few samples, their kernels' code paths are those above
    U("elu_backward", lambda g, x: ng.ops.elementwise.elu_backward(g, x, 1.5, 1.2, 0.8, 0),
      lambda g, a: np.where(a > 0, g * 1.2, g * 1.44 * np.exp(0.8 * a)), 2, B2, kink=0.1),
    U("elu_", lambda x: NF.elu(x * 1, 1.5, inplace=True),
      lambda a: np.where(a > 0, a, 1.5 * np.expm1(a)), shapes=S2, kink=0.1, node="EluBackward1"),
    U("celu", lambda x: NF.celu(x, 1.5), lambda a: np.where(a > 0, a, 1.5 * np.expm1(a / 1.5)),
      shapes=S2, kink=0.1),
    U("celu_", lambda x: NF.celu(x * 1, 1.5, inplace=True),
      lambda a: np.where(a > 0, a, 1.5 * np.expm1(a / 1.5)), shapes=S2, kink=0.1,
      node="CeluBackward1"),
    U("leaky_relu_", lambda x: NF.leaky_relu(x * 1, 0.2, inplace=True),
      lambda a: np.where(a > 0, a, a * 0.2), shapes=S2, kink=0.1, node="LeakyReluBackward1"),
    U("threshold", lambda x: NF.threshold(x, 0.5, 2.0), lambda a: np.where(a <= 0.5, 2.0, a),
      shapes=S2),
    U("threshold_", lambda x: NF.threshold(x * 1, 0.5, 2.0, inplace=True),
      lambda a: np.where(a <= 0.5, 2.0, a), shapes=S2, node="ThresholdBackward1"),
    U("hardtanh", lambda x: NF.hardtanh(x, -1.0, 0.5), lambda a: np.clip(a, -1.0, 0.5), shapes=S2),
    U("hardtanh_backward",
      lambda g, x: ng.ops.elementwise.hardtanh_backward(g, x, -1.0, 0.5),
      lambda g, a: np.where((a <= -1.0) | (a >= 0.5), 0, g), 2, B2),
    # (no second derivative, as in PyTorch: its gradient's node is NotImplemented)
    U("hardsigmoid", lambda x: NF.hardsigmoid(x), lambda a: np.clip(a + 3, 0, 6) / 6,
      domain=(-4.0, 4.0), shapes=S2, gradgrad=False),
    U("hardswish", lambda x: NF.hardswish(x), lambda a: a * np.clip(a + 3, 0, 6) / 6,
      domain=(-4.0, 4.0), shapes=S2),
    U("hardswish_backward", lambda g, x: ng.ops.elementwise.hardswish_backward(g, x),
      lambda g, a: np.where(a <= -3, 0, np.where(a < 3, g * (a / 3 + 0.5), g)), 2, B2,
      domain=(-4.0, 4.0)),
    U("log_sigmoid", lambda x: NF.logsigmoid(x), lambda a: -np.logaddexp(0, -a), shapes=S2),
    U("log_sigmoid_backward", lambda g, x: ng.ops.elementwise.log_sigmoid_backward(g, x),
      lambda g, a: g / (1 + np.exp(a)), 2, B2),
    U("mish", lambda x: NF.mish(x), lambda a: a * np.tanh(np.log1p(np.exp(a))), shapes=S2),
    U("hardshrink", lambda x: NF.hardshrink(x, 0.5),
      lambda a: np.where(np.abs(a) <= 0.5, 0, a), shapes=S2),
    U("hardshrink_backward", lambda g, x: ng.ops.elementwise.hardshrink_backward(g, x, 0.5),
      lambda g, a: np.where(np.abs(a) <= 0.5, 0, g), 2, B2),
    U("softshrink_backward", lambda g, x: ng.ops.elementwise.softshrink_backward(g, x, 0.5),
      lambda g, a: np.where(np.abs(a) <= 0.5, 0, g), 2, B2),
    U("softshrink", lambda x: NF.softshrink(x, 0.5),
      lambda a: np.where(np.abs(a) <= 0.5, 0, a - 0.5 * np.sign(a)), shapes=S2),
    U("prelu", lambda x, w: NF.prelu(x, w),
      lambda a, b: np.where(a > 0, a, (_channel(b, a.ndim) if a.ndim > 1 else b) * a),
      2, [((2, 3, 2), (3,)), ((2, 3), (3,)), ((3,), (1,))], kink=0.1,
      node="PreluKernelBackward0"),
    U("prelu_backward_input",
      lambda g, x, w: ng.ops.elementwise.prelu_backward_input(g, x, w),
      lambda g, a, b: np.where(a > 0, g, b * g), 3, [((2, 3), (2, 3), (3,)), ((3,), (3,), ())],
      kink=0.1, node="PreluKernelBackwardBackward0"),
    U("prelu_backward_weight",
      lambda g, x, w: ng.ops.elementwise.prelu_backward_weight(g, x, w),
      lambda g, a, b: np.where(a > 0, 0, a * g), 3, [((2, 3), (2, 3), (3,)), ((3,), (3,), ())],
      kink=0.1, node="PreluKernelBackwardBackward0"),
    U("rrelu_with_noise", lambda x: NF.rrelu(x, 0.1, 0.3), lambda a: np.where(a > 0, a, a * 0.2),
      shapes=S2, kink=0.1, node="RreluWithNoiseBackward0"),
    U("rrelu_with_noise_", lambda x: NF.rrelu(x * 1, 0.1, 0.3, inplace=True),
      lambda a: np.where(a > 0, a, a * 0.2), shapes=S2, kink=0.1,
      node="RreluWithNoiseBackward1"),
    U("glu", lambda x: NF.glu(x, -1), lambda a: a[..., :2] / (1 + np.exp(-a[..., 2:])),
      shapes=[(2, 4), (3, 2, 4)]),
    U("log10", lambda x: x.log10(), np.log10, domain=(0.2, 3.0), shapes=S2),
    U("log2", lambda x: x.log2(), np.log2, domain=(0.2, 3.0), shapes=S2),
    U("exp2", lambda x: ng.exp2(x), np.exp2, shapes=S2),
    U("erfc", lambda x: ng.erfc(x), np.vectorize(math.erfc), shapes=S2),
    U("erfinv", lambda x: x.erfinv(), lambda a: _erfinv_np(a), domain=(-0.9, 0.9)),
    U("atan", lambda x: x.atan(), np.arctan, shapes=S2),
    U("asin", lambda x: x.asin(), np.arcsin, domain=(-0.9, 0.9), shapes=S2),
    U("acos", lambda x: ng.acos(x), np.arccos, domain=(-0.9, 0.9), shapes=S2),
    U("sinh", lambda x: x.sinh(), np.sinh, shapes=S2),
    U("cosh", lambda x: ng.cosh(x), np.cosh, shapes=S2),
    U("asinh", lambda x: x.asinh(), np.arcsinh, shapes=S2),
    U("acosh", lambda x: x.acosh(), np.arccosh, domain=(1.2, 3.0), shapes=S2),
    U("atanh", lambda x: ng.atanh(x), np.arctanh, domain=(-0.9, 0.9), shapes=S2),
    U("logit", lambda x: ng.logit(x, eps=0.2), lambda a: np.log(np.clip(a, 0.2, 0.8) /
      (1 - np.clip(a, 0.2, 0.8))), domain=(0.05, 0.95), kink=None, shapes=S2),
    # (rounding: samples kept off the integers and half-integers, where it jumps)
    U("trunc", lambda x: x.trunc(), np.trunc, domain=(-3.0, 3.0), shapes=S2, int_ok=True),
    U("floor", lambda x: ng.floor(x), np.floor, domain=(-3.0, 3.0), shapes=S2, int_ok=True),
    U("ceil", lambda x: x.ceil(), np.ceil, domain=(-3.0, 3.0), shapes=S2, int_ok=True),
    U("round", lambda x: x.round(), np.round, domain=(-3.0, 3.0), shapes=S2, int_ok=True),
    U("round_decimals", lambda x: ng.round(x, decimals=1), lambda a: np.round(a, 1),
      node="RoundBackward1", shapes=S2),
    U("frac", lambda x: x.frac(), lambda a: a - np.trunc(a), domain=(-3.0, 3.0), shapes=S2),
    U("remainder_scalar", lambda x: x % 0.75, lambda a: np.remainder(a, 0.75), shapes=S2,
      node="RemainderBackward0"),
    U("fmod_scalar", lambda x: ng.fmod(x, 0.75), lambda a: np.fmod(a, 0.75), shapes=S2,
      node="FmodBackward0"),
    U("pow", lambda x: x**3, lambda a: a**3, node="PowBackward0", int_ok=True),
    U("pow_bool_exponent", lambda x: x**False, lambda a: a**0, node="PowBackward0",
      domain=(0.5, 2.0)),
    U("rpow", lambda x: 2.5**x, lambda a: 2.5**a, node="PowBackward2"),
    U("rsub", lambda x: 1.5 - x, lambda a: 1.5 - a, node="RsubBackward1"),
    U("clamp", lambda x: x.clamp(-1.0, 0.5), lambda a: np.clip(a, -1.0, 0.5), node="ClampBackward1"),
    U("logical_not", lambda x: x.logical_not(), np.logical_not, grad=False, int_ok=True),
    # ---------------------------------------------------------------- binary
    U("add", lambda x, y: x + y, np.add, 2, B, int_ok=True),
    U("sub", lambda x, y: x - y, np.subtract, 2, B, int_ok=True),
    U("mul", lambda x, y: x * y, np.multiply, 2, B, int_ok=True),
    U("mul_scalar", lambda x: ng.ops.elementwise.mul_scalar(x, -1.5), lambda a: a * -1.5,
      shapes=S2, node="MulBackward1"),
    U("div_scalar", lambda x: ng.ops.elementwise.div_scalar(x, 2.5), lambda a: a / 2.5,
      node="DivBackward1"),
    U("div", lambda x, y: x / y, np.divide, 2, B, domain=(0.5, 2.0)),
    U("pow_tensor", lambda x, y: x**y, np.power, 2, B, domain=(0.5, 2.0), node="PowBackward1"),
    U("remainder", lambda x, y: x % y, np.remainder, 2, B, domain=(0.5, 2.0), int_ok=True,
      node="RemainderBackward1"),
    U("fmod", ng.fmod, np.fmod, 2, B2, domain=(0.5, 2.0), node="FmodBackward1"),
    U("div_mode", lambda x, y: ng.div(x, y, rounding_mode=None), np.divide, 2, B,
      domain=(0.5, 2.0), node="DivBackward2"),
    # (a number divided: PyTorch's remainder.Scalar_Tensor has no derivative)
    U("remainder_of_number", lambda x: 2.5 % x, lambda a: np.remainder(2.5, a), shapes=S2,
      domain=(0.5, 2.0), grad=False, node="NotImplemented"),
    U("div_trunc", lambda x, y: ng.div(x, -y, rounding_mode="trunc"),
      lambda a, b: np.trunc(a / -b), 2, B2, domain=(0.3, 2.0), node="DivBackward2"),
    U("div_floor", lambda x, y: x.div(-y, rounding_mode="floor"),
      lambda a, b: np.floor_divide(a, -b), 2, B2, domain=(0.3, 2.0), node="DivBackward2"),
    U("add_alpha", lambda x, y: ng.add(x, y, alpha=2.5), lambda a, b: a + 2.5 * b, 2, B2,
      node="AddBackward0"),
    U("sub_alpha", lambda x, y: x.sub(y, alpha=-1.5), lambda a, b: a + 1.5 * b, 2, B2,
      node="SubBackward0"),
    U("rsub_alpha", lambda x, y: ng.rsub(x, y, alpha=-1.5), lambda a, b: b + 1.5 * a, 2, B2,
      node="RsubBackward0"),
    U("atan2", ng.atan2, np.arctan2, 2, B2, kink=0.2),
    U("hypot", ng.hypot, np.hypot, 2, B2, kink=0.2),
    U("lerp", lambda x, y: ng.lerp(x, y, 0.3), lambda a, b: a + 0.3 * (b - a), 2, B2,
      node="LerpBackward0"),
    U("lerp_tensor", lambda x, y: ng.lerp(x, y, y), lambda a, b: a + b * (b - a), 2, B2,
      node="LerpBackward1"),
    U("floor_divide", lambda x, y: x // y, np.floor_divide, 2, B, domain=(0.5, 2.0), grad=False,
      int_ok=True),
    U("maximum", ng.maximum, np.maximum, 2, B),
    U("minimum", ng.minimum, np.minimum, 2, B),
    U("fmax", ng.fmax, np.fmax, 2, B),
    U("fmin", ng.fmin, np.fmin, 2, B),
    U("where", lambda x, y: ng.where(x > y, x, y), lambda a, b: np.where(a > b, a, b), 2, B),
    U("logical_and", ng.logical_and, np.logical_and, 2, B, kink=0.1, grad=False),
    U("logical_or", ng.logical_or, np.logical_or, 2, B, kink=0.1, grad=False),
    U("logical_xor", ng.logical_xor, np.logical_xor, 2, B, kink=0.1, grad=False),
    # (bitwise ops have no float kernel: the rows run them on the inputs made integers and bools)
    U("bitwise_and", lambda x, y: x.to(ng.int64) & y.to(ng.int64),
      lambda a, b: a.astype(np.int64) & b.astype(np.int64), 2, B, domain=(-20.0, 20.0),
      grad=False, int_ok=True),
    U("bitwise_or", lambda x, y: (x > 0) | (y > 0), lambda a, b: (a > 0) | (b > 0), 2, B,
      grad=False, int_ok=True),
    U("bitwise_xor", lambda x, y: x.to(ng.int64) ^ y.to(ng.int64),
      lambda a, b: a.astype(np.int64) ^ b.astype(np.int64), 2, B, domain=(-20.0, 20.0),
      grad=False, int_ok=True),
    U("bitwise_not", lambda x: ~x.to(ng.int64), lambda a: ~a.astype(np.int64),
      domain=(-20.0, 20.0), grad=False, int_ok=True),
    U("bitwise_left_shift", lambda x, y: x.to(ng.int64) << y.abs().to(ng.int64),
      lambda a, b: a.astype(np.int64) << np.abs(b).astype(np.int64), 2, B,
      domain=(-20.0, 20.0), grad=False, int_ok=True),
    U("bitwise_right_shift", lambda x, y: x.to(ng.int64) >> y.abs().to(ng.int64),
      lambda a, b: a.astype(np.int64) >> np.abs(b).astype(np.int64), 2, B,
      domain=(-20.0, 20.0), grad=False, int_ok=True),
    U("gcd", lambda x, y: ng.gcd(x.to(ng.int64), y.to(ng.int64)),
      lambda a, b: np.gcd(a.astype(np.int64), b.astype(np.int64)), 2, B,
      domain=(-20.0, 20.0), grad=False, int_ok=True),
    U("lcm", lambda x, y: x.to(ng.int64).lcm(y.to(ng.int64)),
      lambda a, b: np.lcm(a.astype(np.int64), b.astype(np.int64)), 2, B,
      domain=(-20.0, 20.0), grad=False, int_ok=True),
    U("eq", lambda x, y: x == y, np.equal, 2, B, grad=False, int_ok=True),
    U("ne", lambda x, y: x != y, np.not_equal, 2, B, grad=False, int_ok=True),
    U("lt", lambda x, y: x < y, np.less, 2, B, grad=False, int_ok=True),
    U("le", lambda x, y: x <= y, np.less_equal, 2, B, grad=False, int_ok=True),
    U("gt", lambda x, y: x > y, np.greater, 2, B, grad=False, int_ok=True),
    U("ge", lambda x, y: x >= y, np.greater_equal, 2, B, grad=False, int_ok=True),
    # ---------------------------------------------------------------- reductions
    U("sum", lambda x: x.sum(), np.sum, shapes=[()] + REDUCE_SHAPES + [(0, 3)], int_ok=True),
    U("mean", lambda x: x.mean(-1), lambda a: a.mean(-1), shapes=REDUCE_SHAPES,
      node="MeanBackward1"),
    U("prod", lambda x: x.prod(0), lambda a: a.prod(0), shapes=REDUCE_SHAPES, node="ProdBackward1",
      domain=(0.5, 1.5), int_ok=True),
    U("amax", lambda x: x.amax(0), lambda a: a.max(0), shapes=REDUCE_SHAPES, int_ok=True),
    U("amin", lambda x: x.amin(-1, keepdim=True), lambda a: a.min(-1, keepdims=True),
      shapes=REDUCE_SHAPES, int_ok=True),
    U("max_dim", lambda x: x.max(0).values, lambda a: a.max(0), shapes=REDUCE_SHAPES,
      node="MaxBackward0"),
    U("min_dim", lambda x: x.min(-1, keepdim=True)[0], lambda a: a.min(-1, keepdims=True),
      shapes=REDUCE_SHAPES, node="MinBackward0"),
    U("max_all", lambda x: x.max(), np.max, shapes=REDUCE_SHAPES, node="MaxBackward1"),
    U("min_all", lambda x: x.min(), np.min, shapes=REDUCE_SHAPES, node="MinBackward1"),
    U("argmax", lambda x: x.argmax(0), lambda a: a.argmax(0), shapes=REDUCE_SHAPES, grad=False,
      int_ok=True),
    U("argmin", lambda x: x.argmin(), lambda a: a.argmin(), shapes=REDUCE_SHAPES, grad=False,
      int_ok=True),
    U("var", lambda x: x.var(0), lambda a: a.var(0, ddof=1), shapes=REDUCE_SHAPES, rtol32=1e-4),
    U("std", lambda x: x.std(-1, correction=0), lambda a: a.std(-1), shapes=REDUCE_SHAPES,
      rtol32=1e-4),
    U("norm", lambda x: x.norm(), lambda a: np.sqrt((a * a).sum()), shapes=REDUCE_SHAPES,
      node="LinalgVectorNormBackward0"),
    U("vector_norm", lambda x: x.norm(p=3, dim=-1),
      lambda a: (np.abs(a) ** 3).sum(-1) ** (1 / 3), shapes=REDUCE_SHAPES,
      node="LinalgVectorNormBackward0", rtol32=1e-4),
    U("logsumexp", lambda x: x.logsumexp(-1),
      lambda a: np.log(np.exp(a).sum(-1)), shapes=REDUCE_SHAPES),
    U("nansum", lambda x: ng.nansum(x, -1), lambda a: np.nansum(a, -1),
      shapes=[(4,), (2, 3), "transposed"]),
    U("aminmax", lambda x: x.aminmax(dim=0).max, lambda a: a.max(0),
      shapes=[(4,), (2, 3), "transposed"]),
    U("norm_p_dim", lambda x: ng.ops.reduce.norm_p_dim(x, 3, -1),
      lambda a: (np.abs(a) ** 3).sum(-1) ** (1 / 3), shapes=REDUCE_SHAPES,
      node="NormBackward1", rtol32=1e-4),
    U("dist", lambda x, y: ng.dist(x, y, 3), lambda a, b: (np.abs(a - b) ** 3).sum() ** (1 / 3),
      2, [((3,), (3,)), ((2, 3), (3,))], rtol32=1e-4),
    U("softmax", lambda x: x.softmax(-1),
      lambda a: np.exp(a) / np.exp(a).sum(-1, keepdims=True), shapes=REDUCE_SHAPES),
    U("log_softmax", lambda x: x.log_softmax(0),
      lambda a: a - np.log(np.exp(a).sum(0, keepdims=True)), shapes=REDUCE_SHAPES,
      node="LogSoftmaxBackward0"),
    U("softmax_backward_data", lambda g, y: ng.ops.reduce.softmax_backward_data(g, y, -1),
      lambda g, b: b * (g - (g * b).sum(-1, keepdims=True)), 2,
      [((2, 3), (2, 3)), ("transposed", (2, 3))]),
    U("log_softmax_backward_data",
      lambda g, y: ng.ops.reduce.log_softmax_backward_data(g, y, 0),
      lambda g, b: g - np.exp(b) * g.sum(0, keepdims=True), 2,
      [((2, 3), (2, 3)), ("transposed", (2, 3))]),
    # ---------------------------------------------------------------- linear algebra
    U("mm", lambda x, y: x.mm(y), np.matmul, 2, [((2, 3), (3, 4)), ("transposed", (3, 2))]),
    U("squeeze_result", lambda x, y: x @ y, np.matmul, 2, [((3,), (3, 4)), ((2,), "transposed")],
      node="SqueezeBackward4"),
    U("mse_loss", lambda x, y: ng.nn.functional.mse_loss(x, y), lambda a, b: ((a - b) ** 2).mean(),
      2, [((2, 3), (2, 3)), ((3,), (3,)), ("transposed", (2, 3))], node="MseLossBackward0"),
    U("mse_loss_backward", lambda g, x, y: ng.ops.loss.mse_loss_backward(g, x, y),
      lambda g, a, b: (a - b) * (2 / a.size) * g, 3,
      [((), (2, 3), (2, 3)), ((), "transposed", (2, 3))]),
    U("nll_loss", lambda x: ng.nn.functional.nll_loss(x, ng.tensor([0, 2])),
      lambda a: -(a[0, 0] + a[1, 2]) / 2, shapes=[(2, 3), "transposed"], node="NllLossBackward0"),
    U("nll_loss_backward", lambda g, x: _nll_loss_backward(g, x), _nll_loss_backward_np, 2,
      [((2,), (2, 3)), ((2,), "transposed")]),
    U("smooth_l1_loss", lambda x, y: ng.nn.functional.smooth_l1_loss(x, y, beta=0.5),
      lambda a, b: np.where(np.abs(a - b) < 0.5, (a - b) ** 2, np.abs(a - b) - 0.25).mean(), 2,
      [((2, 3), (2, 3)), ("transposed", (2, 3))], node="SmoothL1LossBackward0"),
    U("huber_loss", lambda x, y: ng.nn.functional.huber_loss(x, y, reduction="sum", delta=0.5),
      lambda a, b: np.where(np.abs(a - b) < 0.5, 0.5 * (a - b) ** 2,
                            0.5 * (np.abs(a - b) - 0.25)).sum(), 2,
      [((2, 3), (2, 3)), ((3,), (3,))], node="HuberLossBackward0"),
    # the elementwise smooth L1 / Huber losses and their backward kernels (domain keeps
    # |x - y| off the kinks at 0.5)
    U("smooth_l1_elementwise", lambda x, y: ng.ops.elementwise.smooth_l1_elementwise(x, y, 0.5),
      lambda a, b: np.where(np.abs(a - b) < 0.5, (a - b) ** 2, np.abs(a - b) - 0.25), 2, B2,
      node="SmoothL1ElementwiseBackward0"),
    U("smooth_l1_loss_backward", lambda g, x, y: ng.ops.elementwise.smooth_l1_loss_backward(g, x, y, 0.5),
      lambda g, a, b: np.clip(a - b, -0.5, 0.5) / 0.5 * g, 3,
      [((), "transposed", (2, 3)), ((2, 3), (2, 3), (2, 3))],
      node="SmoothL1LossBackwardBackward0"),
    U("huber_elementwise", lambda x, y: ng.ops.elementwise.huber_elementwise(x, y, 0.5),
      lambda a, b: np.where(np.abs(a - b) < 0.5, 0.5 * (a - b) ** 2,
                            0.5 * (np.abs(a - b) - 0.25)), 2, B2, node="HuberElementwiseBackward0"),
    U("huber_loss_backward", lambda g, x, y: ng.ops.elementwise.huber_loss_backward(g, x, y, 0.5),
      lambda g, a, b: np.clip(a - b, -0.5, 0.5) * g, 3,
      [((), "transposed", (2, 3)), ((2, 3), (2, 3), (2, 3))],
      node="HuberLossBackwardBackward0"),
    U("bce_with_logits_elementwise", lambda x, y: ng.ops.elementwise.bce_with_logits_elementwise(x, y),
      lambda a, b: (1 - b) * a + np.log1p(np.exp(-np.abs(a))) + np.maximum(-a, 0), 2, B2,
      node="BceWithLogitsElementwiseBackward0"),
    # the elementwise binary cross-entropy of probabilities and its backward kernel (with a
    # weight and the mean's count; the weight has no gradient)
    U("binary_cross_entropy_elementwise",
      lambda x, y: ng.ops.elementwise.binary_cross_entropy_elementwise(x, y),
      lambda a, b: (b - 1) * np.log1p(-a) - b * np.log(a), 2, B2, domain=(0.1, 0.9),
      node="BinaryCrossEntropyElementwiseBackward0"),
    U("binary_cross_entropy_backward",
      lambda g, x, y: ng.ops.elementwise.binary_cross_entropy_backward(g, x, y, 0.5, 3.0),
      lambda g, a, b: g * (a - b) / ((1 - a) * a) * 0.5 / 3.0, 3,
      [((), "transposed", (2, 3)), ((2, 3), (2, 3), (2, 3))], domain=(0.1, 0.9),
      node="BinaryCrossEntropyBackwardBackward0"),
    U("binary_cross_entropy",
      lambda x, y: ng.nn.functional.binary_cross_entropy(x, y, weight=ng.tensor([1.0, 0.5, 2.0],
                                                                               dtype=x.dtype)),
      lambda a, b: -(np.array([1.0, 0.5, 2.0]) * (b * np.log(a) + (1 - b) * np.log1p(-a))).mean(),
      2, [((2, 3), (2, 3)), ("transposed", (2, 3))], domain=(0.1, 0.9),
      node="BinaryCrossEntropyBackward0"),
    U("binary_cross_entropy_with_logits",
      lambda x, y: ng.nn.functional.binary_cross_entropy_with_logits(
          x, y, pos_weight=ng.tensor([1.0, 3.0, 0.5], dtype=x.dtype), reduction="sum"),
      lambda a, b: ((1 - b) * a + (1 + (np.array([1.0, 3.0, 0.5]) - 1) * b)
                    * np.log1p(np.exp(-a))).sum(),
      2, [((2, 3), (2, 3)), ((3,), (3,))], node="BinaryCrossEntropyWithLogitsBackward0"),
    U("layer_norm", lambda x, w, b: ng.nn.functional.layer_norm(x, (3,), w, b),
      lambda a, w, b: _standardized(a, (-1,)) * w + b, 3,
      [((2, 3), (3,), (3,)), ("transposed", (3,), (3,)), ((2, 2, 3), (3,), (3,))],
      node="NativeLayerNormBackward0"),
    U("batch_norm", lambda x, w, b: ng.nn.functional.batch_norm(x, None, None, w, b, True),
      lambda a, w, b: _standardized(a, (0, *range(2, a.ndim))) * _channel(w, a.ndim)
      + _channel(b, a.ndim), 3, [((4, 3), (3,), (3,)), ((2, 3, 2), (3,), (3,))],
      node="NativeBatchNormBackward0"),
    U("group_norm", lambda x, w, b: ng.nn.functional.group_norm(x, 2, w, b),
      lambda a, w, b: _standardized(a.reshape(a.shape[0], 2, -1), (-1,)).reshape(a.shape)
      * _channel(w, a.ndim) + _channel(b, a.ndim), 3,
      [((2, 4, 2), (4,), (4,)), ((3, 4), (4,), (4,))], node="NativeGroupNormBackward0"),
    U("weight_norm_interface",
      lambda v, g: ng.ops.normalization.weight_norm_interface(v, g, 0),
      lambda v, g: v * g.reshape(-1, *[1] * (v.ndim - 1))
      / np.sqrt((v * v).reshape(v.shape[0], -1).sum(1)).reshape(-1, *[1] * (v.ndim - 1)), 2,
      [((2, 3), (2, 1)), ((3, 2, 2), (3, 1, 1))], domain=(0.5, 2.0),
      node="WeightNormInterfaceBackward0"),
    U("constant_pad_nd", lambda x: ng.nn.functional.pad(x, (1, 2), value=0.5),
      lambda a: np.pad(a, [(0, 0)] * (a.ndim - 1) + [(1, 2)], constant_values=0.5),
      shapes=[(3,), (2, 3), "transposed", "strided"], node="ConstantPadNdBackward0"),
    U("scaled_dot_product_flash_attention_for_cpu",
      lambda q, k, v: ng.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True),
      lambda q, k, v: _causal_attention(q, k, v), 3,
      [((1, 2, 3, 2), (1, 2, 3, 2), (1, 2, 3, 3)), ((2, 1, 2, 3), (2, 1, 4, 3), (2, 1, 4, 3))]),
    # (where PyTorch's flash attention does not run: 3-d inputs, head sizes that differ)
    U("scaled_dot_product_attention_math",
      lambda q, k, v: ng.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True),
      lambda q, k, v: _causal_attention(q, k, v), 3,
      [((2, 3, 2), (2, 4, 2), (2, 4, 3)), ((2, 1, 2, 3), (2, 1, 4, 3), (2, 1, 4, 2))],
      node="UnsafeViewBackward0"),
    # (a recurrent layer's output; its last states are checked through nn.LSTM/GRU/RNN)
    U("lstm_layer", lambda xp, h, c, w, b: ng.ops.recurrent.lstm_layer(xp, h, c, w, b)[0],
      lambda xp, h, c, w, b: _recurrent(xp, h, c, w, b, "LSTM", False), 5,
      [((3, 2, 8), (2, 2), (2, 2), (8, 2), (8,))], node="MkldnnRnnLayerBackward0"),
    U("gru_layer", lambda xp, h, w, b: ng.ops.recurrent.gru_layer(xp, h, w, b, reverse=True)[0],
      lambda xp, h, w, b: _recurrent(xp, h, None, w, b, "GRU", True), 4,
      [((3, 2, 6), (2, 2), (6, 2), (6,))], node="StackBackward0"),
    U("rnn_tanh_layer", lambda xp, h, w, b: ng.ops.recurrent.rnn_tanh_layer(xp, h, w, b)[0],
      lambda xp, h, w, b: _recurrent(xp, h, None, w, b, "RNN_TANH", False), 4,
      [((3, 2, 2), (2, 2), (2, 2), (2,)), ((4, 2, 3), "transposed", (3, 3), (3,))],
      node="StackBackward0"),
    U("rnn_relu_layer",
      lambda xp, h, w, b: ng.ops.recurrent.rnn_relu_layer(xp, h, w, b, reverse=True)[0],
      lambda xp, h, w, b: _recurrent(xp, h, None, w, b, "RNN_RELU", True), 4,
      [((3, 2, 2), (2, 2), (2, 2), (2,))], node="StackBackward0"),
    # (the steps of sequences of lengths 3, 2, 2 in a (3, 3, *) padded batch: rows 0..6)
    U("pack_padded_sequence",
      lambda x: ng.nn.utils.rnn.pack_padded_sequence(x, [3, 2, 2]).data,
      lambda a: a.reshape(9, *a.shape[2:])[:7], shapes=[(3, 3), (3, 3, 2)],
      node="PackPaddedSequenceBackward0"),
    U("addmm", ng.addmm, lambda b, x, y: b + x @ y, 3,
      [((4,), (2, 3), (3, 4)), ((2, 1), (2, 3), (3, 4)), ((), "transposed", (3, 2))],
      node="AddmmBackward0"),
    U("bmm", lambda x, y: x.bmm(y), np.matmul, 2, [((2, 2, 3), (2, 3, 2))]),
    U("mv", lambda x, y: x.mv(y), np.matmul, 2, [((2, 3), (3,)), ("strided", (3,))]),
    U("dot", lambda x, y: x.dot(y), np.dot, 2, [((3,), (3,))]),
    # ---------------------------------------------------------------- movement
    U("view", lambda x: x.view(-1), lambda a: a.reshape(-1), shapes=[(), (3,), (2, 3), (2, 3, 2)],
      int_ok=True),
    U("reshape_copy", lambda x: x.reshape(6), lambda a: a.reshape(6), shapes=["transposed"],
      node="UnsafeViewBackward0"),
    U("reshape_alias", lambda x: x.reshape(*x.shape, 1), lambda a: a[..., None],
      shapes=["transposed", "strided"], node="ReshapeAliasBackward0"),
    U("unsafe_view", lambda x: x.reshape(2, 6) @ ng.ones(6, 1, dtype=x.dtype),
      lambda a: a.reshape(2, 6) @ np.ones((6, 1)), shapes=[(2, 3, 2)], node="MmBackward0"),
    U("permute", lambda x: x.permute(2, 0, 1), lambda a: a.transpose(2, 0, 1),
      shapes=[(2, 3, 2)]),
    U("transpose", lambda x: x.transpose(0, -1), lambda a: np.swapaxes(a, 0, -1),
      shapes=[(2, 3), (2, 3, 2), "strided"]),
    U("t", lambda x: x.t(), lambda a: a.T, shapes=[(3,), (2, 3), "transposed"], node="TBackward0"),
    U("transpose_result", lambda x: ng.ops.movement.transpose_result(x, 0, 1),
      lambda a: np.swapaxes(a, 0, 1), shapes=[(2, 3), (2, 3, 2), "transposed"],
      node="TransposeBackward1"),
    U("squeeze", lambda x: x.unsqueeze(1).squeeze(1), lambda a: a, shapes=[(3,), (2, 3)],
      node="SqueezeBackward1"),
    U("unsqueeze", lambda x: x.unsqueeze(-1), lambda a: a[..., None], shapes=[(), (3,), "strided"]),
    U("expand", lambda x: x.expand(4, *x.shape), lambda a: np.broadcast_to(a, (4,) + a.shape),
      shapes=[(), (3,), (2, 1)]),
    U("alias", lambda x: x[...], lambda a: a, shapes=[(3,)], node="AliasBackward0"),
    U("depends_on", lambda x: ng.ops.registry.depends_on(x * 2, x), lambda a: a * 2,
      shapes=[(3,), (2, 3)], node="AliasBackward0"),
    U("recorded_on", lambda x: ng.ops.registry.recorded_on(x * 2, x), lambda a: a * 2,
      shapes=[(3,), (2, 3)], node="AliasBackward0"),
    # (F.pad's reflect, replicate and circular modes and F.interpolate: gathers or matrices
    # along dims, one node under PyTorch's name)
    U("resample", lambda x: ng.nn.functional.pad(x, (2, 1), mode="replicate"),
      lambda a: np.pad(a, [(0, 0)] * (a.ndim - 1) + [(2, 1)], mode="edge"),
      shapes=[(2, 3), (2, 3, 2), "transposed"], node="ReplicationPad1DBackward0"),
    # (no derivative: PyTorch's NotImplemented node, whose backward raises)
    U("not_implemented", lambda x: ng.ops.registry.not_implemented(x * 2, "aten::op", x),
      lambda a: a * 2, shapes=[(3,), (2, 3)], grad=False, node="NotImplemented"),
    # (in place with a negative slope: PyTorch's in-place node, whose backward raises)
    U("inplace_without_derivative", lambda x: ng.nn.functional.leaky_relu_(x * 1, -0.5),
      lambda a: np.where(a > 0, a, -0.5 * a), shapes=[(3,), (2, 3)], grad=False,
      node="LeakyReluBackward1", lazy_and_fused=False),
    U("clone", lambda x: x.clone(), lambda a: a.copy(), shapes=[(2, 3), "strided"], int_ok=True),
    U("contiguous_copy", lambda x: x.contiguous(), np.ascontiguousarray,
      shapes=["transposed", "strided"], int_ok=True, node="CloneBackward0"),
    U("to_dtype", lambda x: x.double(), lambda a: a.astype(np.float64), shapes=[(3,), "strided"],
      node="ToCopyBackward0", same_dtype=False),
    U("getitem", lambda x: x[1:, ::2][0], lambda a: a[1:, ::2][0], shapes=[(3, 4)],
      node="SelectBackward0"),
    U("index_put_zeros", lambda x: x[[0, 2, 0]], lambda a: a[[0, 2, 0]], shapes=[(3,), (3, 2)],
      node="IndexBackward0"),
    U("index_put", lambda x: _index_put(x), lambda a: _index_put_np(a), shapes=[(3, 2)],
      node="CopySlices"),
    U("embedding", lambda x: ng.nn.functional.embedding(ng.tensor([[0, 1], [1, 1]]), x),
      lambda a: a[[[0, 1], [1, 1]]], shapes=[(3, 2), "transposed"], node="EmbeddingBackward0"),
    # (bags [0] and [2, 1, 2] of rows, each row scaled by its sample's weight)
    U("embedding_bag",
      lambda x, w: ng.nn.functional.embedding_bag(ng.tensor([0, 2, 1, 2]), x, ng.tensor([0, 1]),
                                                  mode="sum", per_sample_weights=w),
      lambda a, w: np.stack([a[0] * w[0], a[2] * w[1] + a[1] * w[2] + a[2] * w[3]]), 2,
      [((3, 2), (4,)), ((3, 1), (4,))], node="EmbeddingBagBackward0"),
    U("as_strided", lambda x: x.contiguous().as_strided((3, 2), (1, 1), 1),
      lambda a: np.lib.stride_tricks.as_strided(a.ravel()[1:], (3, 2), (a.itemsize,) * 2),
      shapes=[(2, 3), (5,), "transposed"]),  # overlapping windows: gradients accumulate
    U("unfold", lambda x: x.unfold(-1, 2, 1), lambda a: np.lib.stride_tricks.sliding_window_view(
        a, 2, -1), shapes=[(3,), (2, 3), "transposed"]),  # overlapping windows
    U("unfold_backward", lambda x: x.unfold(0, 2, 1).pow(2).sum() * x,
      lambda a: (np.lib.stride_tricks.sliding_window_view(a, 2, 0) ** 2).sum() * a,
      shapes=[(3,), (3, 2)], node="MulBackward0", lazy_and_fused=False),
    U("narrow_copy", lambda x: x.narrow_copy(-1, 1, 2), lambda a: a[..., 1:3],
      shapes=[(3,), (2, 3), "transposed"]),
    U("slice_scatter", lambda x, s: ng.slice_scatter(x, s, 1, 0, None, 2),
      lambda a, b: _written_np(a, (slice(None), slice(0, None, 2)), b), 2,
      [((2, 3), (2, 2)), ("transposed", (2, 2))]),
    U("select_scatter", lambda x, s: x.select_scatter(s, 0, -1),
      lambda a, b: _written_np(a, -1, b), 2, [((2, 3), (3,)), ("transposed", (3,))]),
    U("diagonal_scatter", lambda x, s: ng.diagonal_scatter(x, s, 1),
      lambda a, b: _written_np(a, (np.arange(b.size), np.arange(b.size) + 1), b), 2,
      [((2, 3), (2,)), ((3, 3), (2,))]),
    U("copy_slices", lambda x, s: _write_view(x, s), lambda a, b: _write_view_np(a, b), 2,
      [((2, 3), (3,)), ((2, 3), ()), ((3, 2), (1,))], node="CopySlices"),
    U("zero", lambda x: _inplace_on_copy(x, "zero_"), np.zeros_like, shapes=[(3,), (2, 3)],
      node="ZeroBackward0"),
    U("fill", lambda x: _inplace_on_copy(x, "fill_", 1.5), lambda a: np.full_like(a, 1.5),
      shapes=[(3,), (2, 3)], node="FillBackward2"),
    U("copy", lambda x, y: _inplace_on_copy(x, "copy_", y), lambda a, b: np.broadcast_to(b, a.shape),
      2, [((2, 3), (3,)), ((3,), (3,)), ((2, 3), ())], node="CopyBackwards"),
    U("cat", lambda x, y: ng.cat([x, y], -1), lambda a, b: np.concatenate([a, b], -1), 2,
      [((2, 3), (2, 1)), ((3,), (3,))]),
    U("stack", lambda x, y: ng.stack([x, y], 1), lambda a, b: np.stack([a, b], 1), 2,
      [((2, 3), (2, 3)), ((3,), (3,))]),
    U("split", lambda x: x.split([1, 2], 1)[1], lambda a: a[:, 1:], shapes=[(2, 3), "transposed"],
      node="SplitWithSizesBackward0"),
    U("cumsum", lambda x: x.cumsum(-1), lambda a: np.cumsum(a, axis=-1) if a.ndim else a,
      shapes=REDUCE_SHAPES + [()], node="CumsumBackward0"),
    U("rcumsum", lambda x: ng.ops.reduce.rcumsum(x, 0),
      lambda a: np.flip(np.cumsum(np.flip(a, 0), 0), 0) if a.ndim else a,
      shapes=REDUCE_SHAPES + [()], node="RcumsumBackward0"),
    # ---------------------------------------------------------------- indexing (ops/indexing.py)
    U("gather", lambda x: x.gather(1, _IDX.to(x.device)), lambda a: np.take_along_axis(a, _IDX_NP, 1),
      shapes=[(2, 3), "transposed"]),
    U("scatter_add", lambda x, s: x.scatter_add(0, _IDX.to(x.device), s),
      lambda a, b: _scatter_np(a, b, np.add), 2, [((3, 3), (2, 3)), ((4, 3), (2, 3))]),
    U("scatter_reduce", lambda x, s: x.scatter_reduce(0, _IDX.to(x.device), s, "prod"),
      lambda a, b: _scatter_np(a, b, np.multiply), 2, [((3, 3), (2, 3)), ((4, 3), (2, 3))]),
    U("index_reduce", lambda x, s: _quietly(ng.index_reduce, x, 1, ng.tensor([2, 0, 2]), s, "prod"),
      lambda a, b: _index_reduce_np(a, b), 2, [((2, 3), (2, 3)), ("transposed", (2, 3))]),
    U("scatter", lambda x, s: x.scatter(1, _PERM.to(x.device), s), lambda a, b: _scatter1_np(a, b), 2,
      [((2, 3), (2, 3)), ((2, 4), (2, 3))], node="ScatterBackward0"),
    U("index_select", lambda x: x.index_select(0, ng.tensor([1, 0, 1])),
      lambda a: a[[1, 0, 1]], shapes=[(2, 3), "transposed"]),
    U("index_add", lambda x, s: x.index_add(0, ng.tensor([1, 0, 1]), s, alpha=2.0),
      lambda a, b: _index_add_np(a, b), 2, [((2, 3), (3, 3)), ((3,), (3,))]),
    U("index_copy", lambda x, s: x.index_copy(0, ng.tensor([2, 0]), s),
      lambda a, b: _index_copy_np(a, b), 2, [((3, 3), (2, 3)), ((3,), (2,))]),
    U("take", lambda x: x.take(ng.tensor([[0, 3], [-1, 1]])),
      lambda a: a.reshape(-1)[[[0, 3], [-1, 1]]], shapes=[(4,), (2, 3), "transposed"]),
    U("put", lambda x, s: x.put(ng.tensor([1, -1, 1]), s, accumulate=True),
      lambda a, b: _put_np(a, b), 2, [((2, 3), (3,)), ((4,), (3,))]),
    U("index_fill", lambda x: x.index_fill(1, ng.tensor([0, 2]), -1.5),
      lambda a: _index_fill_np(a), shapes=[(2, 3), "transposed"]),
    U("masked_fill", lambda x: x.masked_fill(ng.tensor([True, False, True]), 0.5),
      lambda a: np.where([True, False, True], 0.5, a), shapes=[(3,), (2, 3)]),
    U("masked_scatter", lambda x, s: x.masked_scatter(ng.tensor([True, False, True]), s),
      lambda a, b: _masked_scatter_np(a, b), 2, [((3,), (4,)), ((2, 3), (2, 3))]),
    # (masked_scatter's source gradient: the picked elements, then zeros, as the source)
    U("masked_scatter_backward",
      lambda g: ng.ops.indexing.masked_scatter_backward(g, ng.tensor([True, False, True]), (4,)),
      lambda a: _masked_scatter_backward_np(a), shapes=[(3,), (2, 3), "transposed"],
      node="MaskedScatterBackwardBackward0"),
    U("masked_select", lambda x: x.masked_select(ng.tensor([True, False, True])),
      lambda a: np.broadcast_to(a, np.broadcast_shapes(a.shape, (3,)))[
          np.broadcast_to([True, False, True], np.broadcast_shapes(a.shape, (3,)))],
      shapes=[(3,), (2, 3), "strided"]),
    U("tril", lambda x: x.tril(), np.tril, shapes=[(3, 3), (2, 3), "transposed"]),
    U("triu", lambda x: x.triu(1), lambda a: np.triu(a, 1), shapes=[(3, 3), (2, 3, 2)]),
    U("diagonal", lambda x: x.diagonal(1), lambda a: np.diagonal(a, 1),
      shapes=[(3, 3), (2, 3), "transposed"]),
    U("diagonal_backward", lambda x: x.diagonal(-1).sum() * x,
      lambda a: np.diagonal(a, -1).sum() * a, shapes=[(3, 3)], node="MulBackward0",
      lazy_and_fused=False),  # (its gradgradcheck runs diagonal_backward's own backward)
    U("diagonal_copy", lambda x: ng.diagonal_copy(x, 1), lambda a: np.diagonal(a, 1).copy(),
      shapes=[(3, 3), (2, 3), "transposed"], node="DiagonalBackward0_copy"),
    U("diag_embed", lambda x: x.diag_embed(), lambda a: _diag_embed_np(a), shapes=[(3,), (2, 3)]),
    U("trace", lambda x: x.trace(), np.trace, shapes=[(3, 3), (2, 3), "transposed"]),
    U("repeat", lambda x: x.repeat(2, 1, 2), lambda a: np.tile(a, (2, 1, 2)),
      shapes=[(3,), (2, 3), "transposed"]),
    U("flip", lambda x: x.flip(0, -1), lambda a: np.flip(a, (0, -1)),
      shapes=[(2, 3), (2, 3, 2), "strided"]),
    U("roll", lambda x: x.roll((1, -1), (0, -1)), lambda a: np.roll(a, (1, -1), (0, -1)),
      shapes=[(2, 3), (2, 3, 2), "transposed"]),
    U("unbind", lambda x: x.unbind(1)[1], lambda a: a[:, 1], shapes=[(2, 3), "transposed"]),
    U("cumprod", lambda x: x.cumprod(-1), lambda a: np.cumprod(a, -1),
      shapes=[(4,), (2, 3), "transposed"], domain=(0.5, 1.5)),
    U("sort", lambda x: x.sort(-1, descending=True).values, lambda a: -np.sort(-a, -1),
      shapes=[(4,), (2, 3), "transposed"]),
    U("cummax", lambda x: x.cummax(-1).values, lambda a: np.maximum.accumulate(a, -1),
      shapes=[(4,), (2, 3), "transposed"]),
    U("cummin", lambda x: x.cummin(0).values, lambda a: np.minimum.accumulate(a, 0),
      shapes=[(4,), (2, 3)]),
    U("logcumsumexp", lambda x: x.logcumsumexp(-1), lambda a: np.logaddexp.accumulate(a, -1),
      shapes=[(4,), (2, 3), "transposed"]),
    U("topk", lambda x: x.topk(2, 0).values, lambda a: -np.sort(-a, 0)[:2],
      shapes=[(4,), (3, 2), "transposed"]),
    U("kthvalue", lambda x: x.kthvalue(2, 0, keepdim=True).values,
      lambda a: np.sort(a, 0)[1:2], shapes=[(4,), (3, 2)]),
    U("median_dim", lambda x: x.median(-1).values, lambda a: np.sort(a, -1)[..., (a.shape[-1] - 1) // 2],
      shapes=[(4,), (2, 3)], node="MedianBackward1"),
    U("median_all", lambda x: x.median(), lambda a: np.sort(a, None)[(a.size - 1) // 2],
      shapes=[(4,), (2, 3)], node="MedianBackward0"),
    U("nanmedian_dim", lambda x: x.nanmedian(-1).values,
      lambda a: np.sort(a, -1)[..., (a.shape[-1] - 1) // 2], shapes=[(4,), (2, 3)],
      node="NanmedianBackward1"),
    U("nanmedian_all", lambda x: x.nanmedian(), lambda a: np.sort(a, None)[(a.size - 1) // 2],
      shapes=[(4,), (2, 3)], node="NanmedianBackward0"),
    # (repeated values: the mode is each row's smallest value that appears twice)
    U("mode", lambda x: ng.cat([x, x[..., :2]], -1).mode(-1).values,
      lambda a: np.sort(a[..., :2], -1)[..., 0], shapes=[(4,), (2, 3)]),
    # ---------------------------------------------------------------- more math (ops/pointwise.py)
    # (the classification rows see infinities where |x| < 0.5, NaN where they are times 0)
    U("isnan", lambda x: ng.isnan(x / x.round() * 0), lambda a: np.isnan(a / np.round(a) * 0),
      shapes=S2, grad=False, same_dtype=False),
    U("isinf", lambda x: ng.isinf(x / x.round()), lambda a: np.isinf(a / np.round(a)),
      shapes=S2, grad=False, same_dtype=False),
    U("isposinf", lambda x: (x / x.round()).isposinf(), lambda a: np.isposinf(a / np.round(a)),
      shapes=S2, grad=False, same_dtype=False),
    U("isneginf", lambda x: ng.isneginf(x / x.round()), lambda a: np.isneginf(a / np.round(a)),
      shapes=S2, grad=False, same_dtype=False),
    U("isfinite", lambda x: ng.isfinite(x / x.round()), lambda a: np.isfinite(a / np.round(a)),
      shapes=S2, grad=False, same_dtype=False),
    U("compare", lambda x, y: _inplace_on_copy(x, "gt_", y), lambda a, b: (a > b).astype(a.dtype),
      2, [((2, 3), (3,)), ((3,), (3,))], node="GtBackward1"),
    U("signbit", lambda x: ng.signbit(x * x.round()), lambda a: np.signbit(a * np.round(a)),
      shapes=S2, grad=False, same_dtype=False),
    U("nan_to_num", lambda x: ng.nan_to_num(x, nan=0.5, posinf=2.0), lambda a: a, shapes=S2),
    U("lgamma", lambda x: x.lgamma(), np.vectorize(math.lgamma), domain=(0.5, 3.0), shapes=S2),
    U("digamma", lambda x: ng.digamma(x), lambda a: _zeta_shifted(a, 1), domain=(-1.7, -1.2),
      shapes=S2),
    U("polygamma", lambda x: ng.polygamma(1, x),
      lambda a: _zeta_shifted(a, 2), domain=(0.5, 3.0), shapes=S2),
    U("i0", lambda x: x.i0(), np.i0, shapes=S2, domain=(-4.0, 4.0)),
    U("special_i1", lambda x: ng.ops.elementwise.special_i1(x), lambda a: _i1_np(a), shapes=S2,
      domain=(-4.0, 4.0)),
    U("mvlgamma", lambda x: x.mvlgamma(2),
      lambda a: np.vectorize(math.lgamma)(a) + np.vectorize(math.lgamma)(a - 0.5)
      + math.log(math.pi) / 2, shapes=S2, domain=(1.0, 3.0)),
    U("frexp", lambda x: ng.frexp(x).mantissa, lambda a: np.frexp(a)[0], shapes=S2,
      kink=0.1),
    U("polygamma_", lambda x: _inplace_on_copy(x, "polygamma_", 1), lambda a: _zeta_shifted(a, 2),
      domain=(0.5, 3.0), shapes=S2, node="PolygammaBackward1",
      lazy_and_fused=False),  # (an in-place op writes at once: nothing to defer)
    U("sinc", lambda x: x.sinc(), np.sinc, shapes=S2, kink=0.1),
    U("deg2rad", lambda x: ng.deg2rad(x), np.deg2rad, shapes=S2, node="Deg2RadBackward0"),
    U("rad2deg", lambda x: x.rad2deg(), np.rad2deg, shapes=S2, node="Rad2DegBackward0"),
    U("sgn", lambda x: x.sgn(), np.sign, shapes=S2, kink=0.1, int_ok=True),
    U("angle", lambda x: x.angle(), lambda a: np.where(a < 0, np.pi, 0.0), shapes=S2, kink=0.1),
    U("clamp_min", lambda x: x.clamp_min(-0.5), lambda a: np.maximum(a, -0.5), shapes=S2,
      node="ClampMinBackward0", kink=None),
    U("clamp_max", lambda x: ng.clamp_max(x, 0.5), lambda a: np.minimum(a, 0.5), shapes=S2,
      node="ClampMaxBackward0"),
    U("ldexp", ng.ldexp, lambda a, b: a * 2.0**b, 2, B2),
    U("nextafter", ng.nextafter, np.nextafter, 2, B2, kink=0.1),
    U("logaddexp", ng.logaddexp, np.logaddexp, 2, B2),
    U("logaddexp2", lambda x, y: x.logaddexp2(y), np.logaddexp2, 2, B2),
    U("xlogy", ng.xlogy, lambda a, b: a * np.log(b), 2, B2, domain=(0.3, 2.0)),
    U("special_xlog1py", ng.special.xlog1py, lambda a, b: a * np.log1p(b), 2, B2,
      domain=(0.3, 2.0), node="SpecialXlog1PyBackward0"),
    U("special_entr", ng.special.entr, lambda a: -a * np.log(a), shapes=S2, domain=(0.2, 2.0),
      node="SpecialEntrBackward0"),
    U("copysign", lambda x, y: x.copysign(y), np.copysign, 2, B2, kink=0.1),
    U("heaviside", lambda x, y: ng.heaviside(x.round(), y),
      lambda a, b: np.heaviside(np.round(a), b), 2, B2, grad=False),
    U("clamp_min_tensor", lambda x, y: ng.clamp_min(x, y), np.maximum, 2, B2,
      node="ClampMinBackward1"),
    U("clamp_max_tensor", lambda x, y: x.clamp_max(y), np.minimum, 2, B2, node="ClampMaxBackward1"),
    U("clamp_tensor", lambda x, y, z: ng.clamp(x, y, z),
      lambda a, b, c: np.minimum(np.maximum(a, b), c), 3,
      [((2, 3), (3,), (2, 1)), ((2, 3), (2, 3), ()), ("transposed", (2, 3), ())],
      node="ClampBackward0"),
    U("clamp_tensor_min", lambda x, y: ng.clamp(x, min=y), np.maximum, 2, B2,
      node="ClampBackward0"),
    U("clamp_tensor_max", lambda x, y: x.clamp(max=y), np.minimum, 2, B2, node="ClampBackward0"),
    U("addcmul", lambda x, y, z: ng.addcmul(x, y, z, value=-1.5), lambda a, b, c: a - 1.5 * b * c,
      3, [((2, 3), (3,), (2, 1)), ("transposed", (2, 3), ())]),
    U("addcdiv", lambda x, y, z: x.addcdiv(y, z, value=0.5), lambda a, b, c: a + 0.5 * b / c,
      3, [((2, 3), (3,), (2, 1)), ("transposed", (2, 3), ())], domain=(0.5, 2.0)),
    U("var_mean", lambda x: ng.var_mean(x, -1)[0], lambda a: a.var(-1, ddof=1),
      shapes=[(2, 3), "transposed"], rtol32=1e-4),
    U("std_mean", lambda x: ng.std_mean(x, 0, keepdim=True)[0],
      lambda a: a.std(0, ddof=1, keepdims=True), shapes=[(2, 3), "transposed"], rtol32=1e-4),
    U("rot90", lambda x: x.rot90(1, (0, -1)), lambda a: np.rot90(a, 1, (0, -1)),
      shapes=[(2, 3), (2, 3, 2), "transposed"]),
    U("addmv", lambda b, x, y: ng.addmv(b, x, y, beta=0.5, alpha=2.0),
      lambda b, x, y: 0.5 * b + 2 * x @ y, 3, [((2,), (2, 3), (3,)), ((), "transposed", (3,))]),
    U("baddbmm", lambda b, x, y: b.baddbmm(x, y, alpha=-1.0), lambda b, x, y: b - x @ y, 3,
      [((2, 2, 2), (2, 2, 3), (2, 3, 2)), ((2,), (2, 1, 3), (2, 3, 2))]),
    U("addbmm", lambda b, x, y: ng.addbmm(b, x, y, beta=2.0),
      lambda b, x, y: 2 * b + (x @ y).sum(0), 3, [((2, 2), (3, 2, 3), (3, 3, 2)), ((2,), (2, 2, 3), (2, 3, 2))]),
    U("addr", lambda b, x, y: b.addr(x, y, beta=0.5, alpha=-2.0),
      lambda b, x, y: 0.5 * b - 2 * np.outer(x, y), 3, [((2, 3), (2,), (3,)), ((3,), (2,), (3,))]),
    U("renorm", lambda x: x.renorm(2, 0, 0.8), lambda a: _renorm_np(a, 0.8),
      shapes=[(2, 3), "transposed"], domain=(0.2, 1.0)),  # (one row scaled, one not)
    U("vdot", ng.vdot, np.vdot, 2, [((3,), (3,))]),
    U("linalg_cross", lambda x, y: ng.linalg.cross(x, y), np.cross, 2,
      [((2, 3), (2, 3)), ((2, 3), (1, 3)), ("transposed", (2, 3))]),
    # (3 I added: well-conditioned matrices)
    U("linalg_inv", lambda x: ng.linalg.inv(_well(x)), lambda a: np.linalg.inv(_well_np(a)),
      shapes=[(3, 3), (2, 2, 2)], node="LinalgInvExBackward0", rtol32=1e-4),
    U("linalg_det", lambda x: ng.linalg.det(_well(x)), lambda a: np.linalg.det(_well_np(a)),
      shapes=[(3, 3), (2, 2, 2)], node="LinalgDetBackward0", rtol32=1e-4),
    U("linalg_solve", lambda x, y: ng.linalg.solve(_well(x), y),
      lambda a, b: np.linalg.solve(_well_np(a), b), 2,
      [((3, 3), (3, 2)), ((2, 2, 2), (2, 1)), ((2, 2), (2,))],
      node="LinalgSolveExBackward0", rtol32=1e-4),
    # (the factorizations: symmetric or well-conditioned inputs; outputs free of sign choices)
    U("linalg_svd", lambda x: ng.linalg.svdvals(x), lambda a: np.linalg.svd(a, compute_uv=False),
      shapes=[(3, 2), (2, 2, 3)], node="LinalgSvdBackward0", rtol32=1e-4),
    U("linalg_qr", lambda x: ng.linalg.qr(x).Q, lambda a: np.linalg.qr(a)[0],
      shapes=[(3, 2), (2, 2, 3)], node="LinalgQrBackward0", rtol32=1e-4),
    U("linalg_solve_triangular", lambda x, y: ng.linalg.solve_triangular(_well(x), y, upper=True),
      lambda a, b: np.linalg.solve(np.triu(_well_np(a)), b), 2,
      [((3, 3), (3, 2)), ((2, 2, 2), (2, 1))], node="LinalgSolveTriangularBackward0",
      rtol32=1e-4),
    U("linalg_cholesky", lambda x: ng.linalg.cholesky(_spd(x)),
      lambda a: np.linalg.cholesky(_spd_np(a)), shapes=[(3, 3), (2, 2, 2)],
      node="LinalgCholeskyExBackward0", rtol32=1e-4),
    U("linalg_eigh", lambda x: ng.linalg.eigvalsh(x + x.mT),
      lambda a: np.linalg.eigvalsh(a + np.swapaxes(a, -1, -2)), shapes=[(3, 3), (2, 2, 2)],
      node="LinalgEighBackward0", rtol32=1e-4),
    U("linalg_slogdet", lambda x: ng.linalg.slogdet(_well(x)).logabsdet,
      lambda a: np.linalg.slogdet(_well_np(a))[1], shapes=[(3, 3), (2, 2, 2)],
      node="LinalgSlogdetBackward0", rtol32=1e-4),
    U("linalg_pinv", lambda x: ng.linalg.pinv(x), np.linalg.pinv, shapes=[(3, 2), (2, 2, 3)],
      node="LinalgPinvBackward0", rtol32=1e-4),
    U("linalg_lstsq", lambda x, y: ng.linalg.lstsq(x, y).solution,
      lambda a, b: np.linalg.pinv(a) @ b, 2, [((3, 2), (3, 2)), ((2, 3, 2), (2, 3, 1))],
      node="LinalgLstsqBackward0", rtol32=1e-4),
    U("linalg_lu_factor_ex", lambda x: ng.linalg.lu_factor_ex(_dominant(x)).LU,
      lambda a: _lu_np(_dominant_np(a)), shapes=[(3, 3), (2, 2, 2)],
      node="LinalgLuFactorExBackward0", rtol32=1e-4),
    U("linalg_lu", lambda x: ng.linalg.lu(_dominant(x)).U,
      lambda a: np.triu(_lu_np(_dominant_np(a))), shapes=[(3, 3), (2, 2, 2)],
      node="LinalgLuBackward0", rtol32=1e-4),
    U("lu_unpack", lambda x: ng.lu_unpack(x, ng.tensor([1, 2, 3], dtype=ng.int32)).L,
      lambda a: np.tril(a, -1) + np.eye(3, dtype=a.dtype), shapes=[(3, 3), (2, 3, 3)],
      node="LuUnpackBackward0"),
    U("linalg_lu_solve",
      lambda x, y: ng.linalg.lu_solve(_dominant(x), ng.tensor([1, 2, 3], dtype=ng.int32), y),
      lambda a, b: np.linalg.solve(
          (np.tril(_dominant_np(a), -1) + np.eye(3)) @ np.triu(_dominant_np(a)), b), 2,
      [((3, 3), (3, 2)), ((3, 3), (2, 3, 1))], node="LinalgLuSolveBackward0", rtol32=1e-4),
    U("linalg_inv_ex", lambda x: ng.linalg.inv_ex(_dominant(x)).inverse,
      lambda a: np.linalg.inv(_dominant_np(a)), shapes=[(3, 3), (2, 2, 2)],
      node="LinalgInvExBackward0", rtol32=1e-4),
    U("linalg_solve_ex", lambda x, y: ng.linalg.solve_ex(_dominant(x), y).result,
      lambda a, b: np.linalg.solve(_dominant_np(a), b), 2,
      [((3, 3), (3, 2)), ((2, 2, 2), (2, 1))], node="LinalgSolveExBackward0", rtol32=1e-4),
    U("linalg_cholesky_ex", lambda x: ng.linalg.cholesky_ex(_spd(x)).L,
      lambda a: np.linalg.cholesky(_spd_np(a)), shapes=[(3, 3), (2, 2, 2)],
      node="LinalgCholeskyExBackward0", rtol32=1e-4),
    # (its second derivative raises, as PyTorch's)
    U("_ctc_loss", _ctc, _ctc_np, shapes=[(4, 2, 3)], node="CtcLossBackward0",
      gradgrad=False, rtol32=1e-4),
    U("cholesky_solve", lambda x, y: ng.cholesky_solve(x, _tri(y)),
      lambda a, b: np.linalg.solve(_tri_np(b) @ np.swapaxes(_tri_np(b), -1, -2), a), 2,
      [((3, 2), (3, 3)), ((2, 2, 1), (2, 2))], node="CholeskySolveBackward0", rtol32=1e-4),
    U("cholesky_inverse", lambda x: ng.cholesky_inverse(_tri(x).mT, upper=True),
      lambda a: np.linalg.inv(_tri_np(a) @ np.swapaxes(_tri_np(a), -1, -2)),
      shapes=[(3, 3), (2, 2, 2)], node="CholeskyInverseBackward0", rtol32=1e-4),
    U("block_diag", lambda x, y: ng.block_diag(x, y[0], x[0, 0]),
      lambda a, b: _block_diag_np(a, np.atleast_2d(b[0]), np.atleast_2d(a[0, 0])), 2,
      [((2, 3), (3, 2)), ("transposed", (2,))]),
    U("linalg_matrix_exp", lambda x: ng.linalg.matrix_exp(x), lambda a: _expm_np(a),
      shapes=[(3, 3), (2, 2, 2)], node="LinalgMatrixExpBackward0", rtol32=1e-4),
    # (geqrf is not differentiable: PyTorch's NotImplementedError)
    U("geqrf", lambda x: ng.geqrf(x).a, _geqrf_np, shapes=[(3, 2), (2, 3, 3)], grad=False),
    U("linalg_householder_product", lambda x, t: ng.linalg.householder_product(x, t),
      _householder_np, 2, [((3, 2), (2,)), ((2, 3, 3), (2, 2)), ((4, 2), (1,))],
      node="LinalgHouseholderProductBackward0", rtol32=1e-4),
    # ---------------------------------------------------------------- random (ops/random.py)
    # (a zero std or probability makes the draws constant: the values and zero gradients are
    # checked against references)
    U("random_fill", lambda x: (x * 1).normal_(0.5, 0.0), lambda a: np.full_like(a, 0.5),
      shapes=[(3,), (2, 3)], node="NormalBackward0"),
    U("normal", lambda x: ng.normal(x * 0, 0.0), np.zeros_like, shapes=[(3,), (2, 3)],
      node="NormalBackward1"),
    U("bernoulli", lambda x: ng.bernoulli(x * 0), np.zeros_like, shapes=[(3,), (2, 3)]),
    # ---------------------------------------------------------------- convolution, pooling
    U("convolution", lambda x, w, b: _conv(x, w, b), lambda a, w, b: _conv_np(a, w, b), 3,
      [((2, 2, 5, 4), (4, 1, 2, 2), (4,)), ((2, 2, 5), (4, 1, 3), (4,)),
       ("transposed", (2, 1, 2), (2,)), ((2, 2, 3, 4, 3), (4, 1, 2, 2, 2), (4,))],
      node="ConvolutionBackward0"),
    U("convolution_backward", lambda g, x, w: _conv_backward(g, x, w),
      lambda g, a, w: _adjoint(lambda v: _conv_np(v, w, None), a.shape, g), 3,
      [((2, 4, 6, 3), (2, 2, 5, 4), (4, 1, 2, 2)), ((2, 4, 5), (2, 2, 5), (4, 1, 3)),
       ((1, 4, 4, 4, 2), (1, 2, 3, 3, 3), (4, 1, 2, 2, 2))],
      node="ConvolutionBackwardBackward0"),
    U("convolution_transpose", lambda x, w, b: _conv_t(x, w, b),
      lambda a, w, b: _conv_t_np(a, w, b), 3,
      [((2, 4, 3, 3), (4, 1, 2, 2), (2,)), ((2, 4, 5), (4, 1, 3), (2,)),
       ((1, 4, 2, 3, 2), (4, 1, 2, 2, 2), (2,))],
      node="ConvolutionBackward0"),
    # (the pooling ops of both ranks are one definition, registered twice: ops/conv.py)
    *[row for n in (2, 3) for row in _pool_rows(n)],
    U("im2col", lambda x: ng.nn.functional.unfold(x, 2), lambda a: _im2col_np(a),
      shapes=[(1, 2, 3, 3), (2, 3, 4)], node="Im2ColBackward0"),
    U("col2im", lambda x: ng.nn.functional.fold(x, (3, 3), 2),
      lambda a: _adjoint(_im2col_np, (1, 2, 3, 3), a) if a.ndim == 3
      else _adjoint(_im2col_np, (2, 3, 3), a), shapes=[(1, 8, 4), (8, 4)],
      node="Col2ImBackward0"),
    U("pixel_shuffle", lambda x: ng.nn.functional.pixel_shuffle(x, 2),
      lambda a: _pixel_shuffle_np(a),
      shapes=[(4, 2, 3), (1, 8, 2, 2)], node="PixelShuffleBackward0"),
    U("pixel_unshuffle", lambda x: ng.nn.functional.pixel_unshuffle(x, 2),
      lambda a: _pixel_unshuffle_np(a),
      shapes=[(1, 4, 4), (2, 2, 2, 4)], node="PixelUnshuffleBackward0"),
    U("channel_shuffle", lambda x: ng.channel_shuffle(x, 2),
      lambda a: a.reshape(a.shape[0], 2, a.shape[1] // 2, *a.shape[2:]).swapaxes(1, 2)
      .reshape(a.shape), shapes=[(2, 4, 3), (1, 6, 2, 2)], node="ChannelShuffleBackward0"),
    # ---------------------------------------------------------------- grid sampling
    # (bilinear, zeros, align_corners=False; tests/test_grid_sample.py checks every mode and
    # padding against PyTorch)
    U("grid_sampler_2d", lambda x, g: _grid_sample(x, g), lambda a, b: _grid_sample_np(a, b)[0],
      2, [((1, 2, 3, 4), (1, 3, 2, 2)), ((2, 1, 2, 3), "grid_transposed")],
      node="GridSampler2DBackward0"),
    U("grid_sampler_2d_backward", lambda r, x, g: _grid_sample_grad(r, x, g),
      lambda r, a, b: _grid_sample_grad_np(r, a, b), 3,
      [((1, 2, 3, 2), (1, 2, 3, 4), (1, 3, 2, 2)), ((2, 1, 2, 2), (2, 1, 2, 3), (2, 2, 2, 2))],
      node="GridSampler2DBackwardBackward0"),
    U("affine_grid_generator", lambda t: _affine_grid(t), lambda a: _affine_grid_np(a),
      shapes=[(2, 2, 3), (1, 3, 4)], node="AffineGridGeneratorBackward0"),
    # ---------------------------------------------------------------- losses added with nn's
    U("soft_margin_loss",
      lambda x: ng.nn.functional.soft_margin_loss(
          x, ng.tensor([1.0, -1.0, 1.0], dtype=x.dtype, device=x.device)),
      lambda a: np.log1p(np.exp(-np.array([1.0, -1.0, 1.0]) * a)).mean(),
      shapes=[(3,), (2, 3)], node="SoftMarginLossBackward0"),
    # (hinges: samples near their kinks are unlikely at these shapes; no second derivative,
    # as in PyTorch, whose gradient's node has none)
    U("multi_margin_loss",
      lambda x: ng.nn.functional.multi_margin_loss(x, ng.tensor([0, 2], device=x.device)),
      lambda a: _multi_margin_np(a), shapes=[(2, 3), "transposed"], gradgrad=False,
      node="MultiMarginLossBackward0"),
    U("multi_margin_loss_backward",
      lambda x: _multi_margin_grad(x),
      lambda a: _multi_margin_grad_np(a), shapes=[(2, 3)], grad=False,
      node="NotImplemented"),
    # ---------------------------------------------------------------- torch.special, more
    # (elementwise.py's kernels against independent NumPy references; the functions PyTorch
    # does not differentiate have grad=False, the composites of pointwise.py and random.py
    # their nodes)
    U("special_erfcx", lambda x: ng.special.erfcx(x),
      lambda a: np.exp(a * a) * np.vectorize(math.erfc, otypes=[np.float64])(a), shapes=S2),
    U("special_log_ndtr", lambda x: ng.special.log_ndtr(x),
      lambda a: np.log(np.vectorize(math.erfc, otypes=[np.float64])(-a / math.sqrt(2)) / 2),
      shapes=S2),
    U("special_ndtri", lambda x: ng.special.ndtri(x),
      lambda a: math.sqrt(2) * _erfinv_np(2 * np.asarray(a, np.float64) - 1), shapes=S2,
      domain=(0.05, 0.95)),
    U("special_i0e", lambda x: ng.special.i0e(x), lambda a: np.i0(a) * np.exp(-np.abs(a)),
      shapes=S2, domain=(-4.0, 4.0), kink=0.1, node="SpecialI0EBackward0"),
    U("special_i1e", lambda x: ng.special.i1e(x), lambda a: _i1_np(a) * np.exp(-np.abs(a)),
      shapes=S2, domain=(-4.0, 4.0), kink=0.1, node="SpecialI1EBackward0"),
    U("scaled_bessel_k", lambda x: ng.ops.elementwise.scaled_bessel_k(x, 0.5),
      lambda a: np.sqrt(np.pi / (2 * a)), shapes=S2, domain=(0.5, 4.0), grad=False),
    U("modified_bessel", lambda x: ng.special.modified_bessel_i0(x), np.i0, shapes=S2,
      domain=(-4.0, 4.0), grad=False),
    U("bessel_jy", lambda x: ng.special.bessel_j0(x), lambda a: _bessel_j0_np(a), shapes=S2,
      domain=(-4.0, 4.0), grad=False),
    U("special_spherical_bessel_j0", lambda x: ng.special.spherical_bessel_j0(x),
      lambda a: np.sinc(a / np.pi), shapes=S2, domain=(-3.0, 3.0), grad=False),
    U("special_airy_ai", lambda x: ng.special.airy_ai(x), lambda a: _airy_ai_np(a), shapes=S2,
      grad=False),
    U("orthogonal_polynomial", lambda x, y: ng.special.legendre_polynomial_p(x, y * 3 + 6),
      lambda a, b: _legendre_np(a, np.trunc(b * 3 + 6)), 2, B2, grad=False),
    U("hurwitz_zeta", lambda x, y: ng.ops.elementwise.hurwitz_zeta(x + 3, y + 3),
      lambda a, b: _hurwitz_np(a + 3, b + 3), 2, B2, grad=False),
    U("lgamma1p", lambda x: ng.ops.elementwise.lgamma1p(x),
      lambda a: np.vectorize(math.lgamma, otypes=[np.float64])(1 + np.asarray(a, np.float64)),
      shapes=S2, domain=(-0.5, 1.5), grad=False),
    U("regularized_gamma", lambda x, y: ng.ops.elementwise.regularized_gamma(x + 3, y + 3, 0),
      lambda a, b: _igamma_np(a + 3, b + 3), 2, B2, grad=False),
    U("standard_gamma_grad", lambda x, y: ng.ops.elementwise.standard_gamma_grad(x + 3, y + 3),
      lambda a, b: _standard_gamma_grad_np(a + 3, b + 3), 2, B2, grad=False),
    # (differentiable in their second argument, but as in PyTorch not in forward mode, which
    # the generic gradient tests run too: their gradients are tested in test_special_more.py)
    U("special_zeta", lambda x: ng.special.zeta(2.0, x), lambda a: _zeta_shifted(a, 2),
      shapes=S2, domain=(0.5, 3.0), grad=False, node="SpecialZetaBackward1"),
    U("igamma", lambda x: ng.igamma(ng.full_like(x, 2.0), x), lambda a: 1 - np.exp(-a) * (1 + a),
      shapes=S2, domain=(0.1, 3.0), grad=False, node="IgammaBackward0"),
    U("igammac", lambda x: x.new_full(x.shape, 2.0).igammac(x), lambda a: np.exp(-a) * (1 + a),
      shapes=S2, domain=(0.1, 3.0), grad=False, node="IgammacBackward0"),
    U("_standard_gamma_grad", lambda x, y: ng._standard_gamma_grad(x + 3, y + 3),
      lambda a, b: _standard_gamma_grad_np(a + 3, b + 3), 2, B2, grad=False),
    # (draws made constant: a rate of 0, a probability of 0, a concentration below 0 (the
    # smallest normal number), one category (the float below 1))
    U("poisson", lambda x: ng.poisson(x * 0), np.zeros_like, shapes=[(3,), (2, 3)],
      node="PoissonBackward0"),
    U("binomial", lambda x: ng.binomial(x * 0 + 3, x * 0), np.zeros_like, shapes=[(3,), (2, 3)],
      grad=False),
    U("_standard_gamma", lambda x: ng._standard_gamma(x * 0 - 1),
      lambda a: np.full_like(a, np.finfo(a.dtype).tiny), shapes=[(3,), (2, 3)], grad=False,
      node="StandardGammaBackward0"),
    U("_sample_dirichlet", lambda x: ng._sample_dirichlet(x.unsqueeze(-1)).squeeze(-1),
      lambda a: np.full_like(a, np.nextafter(a.dtype.type(1), a.dtype.type(0))),
      shapes=[(3,), (2, 3)], grad=False),
]

# ---------------------------------------------------------------- convolution and pooling


def _conv(x, w, b):
    """The rows' convolution: conv3d or conv2d (stride 2 along the last dim, padding 1) or
    conv1d (padding 1), in two groups."""
    F = ng.nn.functional
    if w.ndim > 3:
        conv = F.conv3d if w.ndim == 5 else F.conv2d
        return conv(x, w, b, stride=(1,) * (w.ndim - 3) + (2,), padding=1, groups=2)
    return F.conv1d(x, w, b, padding=1, groups=2)


def _conv_backward(g, x, w):
    geom = _conv_geom(x, w)
    return ng.ops.conv.convolution_backward(g, x, w, geom, (True, False, False))[0]


def _conv_t(x, w, b):
    """The transposed convolution of ``_conv``'s parameters (a 2-d or 3-d one with an output
    padding): its input gradient."""
    F = ng.nn.functional
    if w.ndim > 3:
        conv = F.conv_transpose3d if w.ndim == 5 else F.conv_transpose2d
        last = (0,) * (w.ndim - 3)
        return conv(x, w, b, stride=(1,) * (w.ndim - 3) + (2,), padding=1,
                    output_padding=last + (1,), groups=2)
    return F.conv_transpose1d(x, w, b, padding=1, groups=2)


def _conv_t_np(a, w, b):
    """``_conv_np``'s adjoint in its input at ``a`` (of ``_conv_t``'s output shape) plus ``b``."""
    n, _, *sizes = a.shape
    k = w.shape[2:]
    if w.ndim > 3:
        sizes = [s - 3 + kk for s, kk in zip(sizes[:-1], k)] + [(sizes[-1] - 1) * 2 + k[-1] - 1]
    else:
        sizes = [sizes[0] - 3 + k[0]]
    shape = (n, w.shape[1] * 2, *sizes)
    out = _adjoint(lambda v: _conv_np(v, w, None), shape, a)
    return out + b.reshape((-1,) + (1,) * len(sizes)).astype(out.dtype)


def _conv_geom(x, w):
    F = ng.ops.conv
    if w.ndim > 3:
        return F._conv_geometry(x, w, None, (1,) * (w.ndim - 3) + (2,), 1, 1, 2, w.ndim - 2)
    return F._conv_geometry(x, w, None, 1, 1, 1, 2, 1)


def _conv_np(a, w, b):
    """NumPy convolution with ``_conv``'s parameters (windows by sliding_window_view)."""
    if a.ndim < w.ndim:  # unbatched
        return _conv_np(a[None], w, b)[0]
    one = w.ndim == 3
    if one:
        a, w = a[:, :, None], w[:, :, None]
    n = w.ndim - 2
    stride, pad = ((1, 1), (0, 1)) if one else ((1,) * (n - 1) + (2,), (1,) * n)
    ap = np.pad(a, [(0, 0)] * 2 + [(p, p) for p in pad])
    win = np.lib.stride_tricks.sliding_window_view(ap, w.shape[2:], axis=tuple(range(2, 2 + n)))
    win = win[(slice(None),) * 2 + tuple(slice(None, None, s) for s in stride)]
    at, taps = "dhw"[-n:], "ijk"[:n]
    cg, og = w.shape[1], w.shape[0] // 2
    out = np.concatenate([np.einsum(f"nc{at}{taps},oc{taps}->no{at}",
                                    win[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og])
                          for g in range(2)], axis=1)
    if b is not None:
        out = out + b.reshape((-1,) + (1,) * n)
    return out[:, :, 0] if one else out


def _adjoint(f, shape, g):
    """``J^T g`` of the linear NumPy function ``f`` at inputs of ``shape`` (column by column:
    a backward op's reference)."""
    out = np.zeros(int(np.prod(shape)))
    for i in range(out.size):
        e = np.zeros(out.size)
        e[i] = 1.0
        out[i] = (f(e.reshape(shape)) * g).sum()
    return out.reshape(shape).astype(g.dtype)


def _pool_np(a, k, s, p, reduce, n=2):
    """NumPy pooling of (.., *spatial), ``n`` spatial dims: ``reduce`` over each k^n window;
    the padding is left out of both the max and the mean (count_include_pad=False)."""
    ap = np.pad(a, [(0, 0)] * (a.ndim - n) + [(p, p)] * n, constant_values=np.nan)
    win = np.lib.stride_tricks.sliding_window_view(ap, (k,) * n, axis=tuple(range(-n, 0)))
    win = win[(...,) + (slice(None, None, s),) * n + (slice(None),) * n]
    with np.errstate(all="ignore"):
        return (np.nanmax if reduce is np.max else np.nanmean)(win, axis=tuple(range(-n, 0)))


def _adaptive_np(a, size, reduce=np.mean):
    """NumPy adaptive pooling of (.., *spatial) into ``size`` windows."""
    n = len(size)
    out = np.empty(a.shape[:-n] + tuple(size), a.dtype)
    for o in itertools.product(*map(range, size)):
        window = tuple(slice(i * m // s, -(-(i + 1) * m // s))
                       for i, m, s in zip(o, a.shape[-n:], size))
        out[(...,) + o] = reduce(a[(...,) + window], axis=tuple(range(-n, 0)))
    return out


def _im2col_np(a, k=2):
    """unfold's columns of (N, C, H, W) or (C, H, W), kernel k, stride 1."""
    x = a if a.ndim == 4 else a[None]
    n, c, h, w = x.shape
    oh, ow = h - k + 1, w - k + 1
    cols = np.empty((n, c * k * k, oh * ow), a.dtype)
    for ci in range(c):
        for i in range(k):
            for j in range(k):
                cols[:, (ci * k + i) * k + j] = x[:, ci, i:i + oh, j:j + ow].reshape(n, -1)
    return cols if a.ndim == 4 else cols[0]


def _pixel_shuffle_np(a, r=2):
    *lead, c, h, w = a.shape
    n = len(lead)
    b = a.reshape(*lead, c // (r * r), r, r, h, w)
    b = b.transpose(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return b.reshape(*lead, c // (r * r), h * r, w * r)


def _pixel_unshuffle_np(a, r=2):
    *lead, c, h, w = a.shape
    n = len(lead)
    b = a.reshape(*lead, c, h // r, r, w // r, r)
    b = b.transpose(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return b.reshape(*lead, c * r * r, h // r, w // r)


# ---------------------------------------------------------------- grid sampling

_BILINEAR = ng.ops.grid.Sampling(0, 0, 0)


def _grid_sample(x, g):
    return ng.nn.functional.grid_sample(x, g, align_corners=False)


def _grid_sample_grad(r, x, g):
    """grid_sampler_2d's gradient by its grid (``r``: its output's gradient)."""
    return ng.ops.grid.grid_sampler_2d_backward(r, x, g, None, _BILINEAR, (False, True, False))[0]


def _grid_sample_np(a, g):
    """Bilinear sampling of ``a`` (N, C, H, W) at grid ``g`` (zeros padding, align_corners
    False), and its derivative by the grid's x and y: three (N, C, OH, OW) arrays."""
    N, C, H, W = a.shape
    ix = ((g[..., 0] + 1) * W - 1) / 2
    iy = ((g[..., 1] + 1) * H - 1) / 2
    x0, y0 = np.floor(ix), np.floor(iy)
    fx, fy = ix - x0, iy - y0
    out, dx, dy = (np.zeros((N, C) + g.shape[1:3], a.dtype) for _ in range(3))
    n = np.arange(N)[:, None, None]
    for ty, wy, dwy in ((0, 1 - fy, -1), (1, fy, 1)):
        for tx, wx, dwx in ((0, 1 - fx, -1), (1, fx, 1)):
            xx, yy = (x0 + tx).astype(int), (y0 + ty).astype(int)
            inside = (xx >= 0) & (xx < W) & (yy >= 0) & (yy < H)
            v = a[n, :, np.clip(yy, 0, H - 1), np.clip(xx, 0, W - 1)]  # (N, OH, OW, C)
            v = np.moveaxis(np.where(inside[..., None], v, 0), -1, 1)
            out += (wx * wy)[:, None] * v
            dx += (dwx * W / 2 * wy)[:, None] * v
            dy += (wx * dwy * H / 2)[:, None] * v
    return out, dx, dy


def _grid_sample_grad_np(r, a, g):
    _, dx, dy = _grid_sample_np(a, g)
    return np.stack([(r * dx).sum(1), (r * dy).sum(1)], -1)


def _affine_size(theta):
    return (theta.shape[0], 1, 3, 4) if theta.shape[1] == 2 else (theta.shape[0], 1, 2, 3, 2)


def _affine_grid(t):
    return ng.nn.functional.affine_grid(t, _affine_size(t), align_corners=False)


def _affine_grid_np(a):
    """Each output pixel's position (x first, in [-1, 1], align_corners False) times theta."""
    spatial = _affine_size(a)[2:]
    axes = [np.linspace(-1, 1, n) * (n - 1) / n for n in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")
    base = np.stack([m for m in reversed(mesh)] + [np.ones(mesh[0].shape)], -1)
    return (base[None, ..., None, :] * a.reshape((a.shape[0],) + (1,) * len(spatial)
                                                 + a.shape[1:])).sum(-1).astype(a.dtype)


def _multi_margin_np(a, target=(0, 2)):
    """multi_margin_loss (p=1, margin 1, mean) of (N, C) scores."""
    n, c = a.shape
    total = 0.0
    for i, y in enumerate(target):
        z = np.maximum(0.0, 1.0 - a[i, y] + a[i])
        z[y] = 0.0
        total += z.sum() / c
    return np.asarray(total / n)


def _multi_margin_grad(x):
    """multi_margin_loss's gradient of ``x`` under create_graph: PyTorch's backward node."""
    leaf = x if x.requires_grad else x.detach().requires_grad_()
    loss = ng.nn.functional.multi_margin_loss(leaf, ng.tensor([0, 2], device=x.device))
    g = ng.autograd.grad(loss, leaf, create_graph=True)[0]
    return g if x.requires_grad else g.detach()


def _multi_margin_grad_np(a, target=(0, 2)):
    """_multi_margin_np's gradient: each live hinge adds 1 / (C N) to its class, and takes it
    from the target's."""
    n, c = a.shape
    g = np.zeros_like(a)
    for i, y in enumerate(target):
        live = 1.0 - a[i, y] + a[i] > 0
        live[y] = False
        g[i, live] += 1.0 / (c * n)
        g[i, y] -= live.sum() / (c * n)
    return g


_IDX = ng.tensor([[0, 2, 1], [1, 1, 0]])
_IDX_NP = np.array([[0, 2, 1], [1, 1, 0]])
_PERM = ng.tensor([[2, 0, 1], [0, 1, 2]])


def _scatter_np(a, b, op):
    out = a.copy()
    rows, cols = np.indices(_IDX_NP.shape)
    op.at(out, (_IDX_NP, cols), b[: _IDX_NP.shape[0], : _IDX_NP.shape[1]])
    return out


def _quietly(fn, *args):
    """``fn(*args)`` without its warnings (index_reduce's, once a process: "in beta")."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def _index_reduce_np(a, b):
    out = a.copy()
    np.multiply.at(out, (slice(None), [2, 0, 2]), b)
    return out


def _scatter1_np(a, b):
    out = a.copy()
    perm = np.array([[2, 0, 1], [0, 1, 2]])
    out[np.arange(2)[:, None], perm] = b[:, :3]
    return out


def _index_add_np(a, b):
    out = a.copy()
    np.add.at(out, [1, 0, 1], 2.0 * b if a.ndim > 1 else 2.0 * b)
    return out


def _index_fill_np(a):
    out = a.copy()
    out[:, [0, 2]] = -1.5
    return out


def _diag_embed_np(a):
    out = np.zeros(a.shape + a.shape[-1:], a.dtype)
    i = np.arange(a.shape[-1])
    out[..., i, i] = a
    return out


def _index_put(x):
    y = x * 1
    y[0] = x[1] * 2
    return y


def _index_copy_np(a, b):
    out = a.copy()
    out[[2, 0]] = b
    return out


def _put_np(a, b):
    out = a.copy().reshape(-1)
    np.add.at(out, [1, -1, 1], b)
    return out.reshape(a.shape)


def _masked_scatter_backward_np(a):
    picked = a[np.broadcast_to([True, False, True], a.shape)]
    return np.concatenate([picked, np.zeros(4 - picked.size, a.dtype)])


def _masked_scatter_np(a, b):
    out = np.array(a)
    where = np.broadcast_to([True, False, True], a.shape)
    out[where] = b.reshape(-1)[:where.sum()]
    return out


def _inplace_on_copy(x, method, *args):
    y = x * 1
    getattr(y, method)(*args)
    return y


def _write_view(x, s):
    """Multiply the last row of a copy of x, in place, through a view."""
    y = x * 1
    y[-1].mul_(s)
    return y


def _write_view_np(a, b):
    c = a.copy()
    c[-1] = c[-1] * b
    return c


def _index_put_np(a):
    b = a.copy()
    b[0] = a[1] * 2
    return b


def _zeta_shifted(a, m):
    """sum_k 1/(a+k)^m over k >= 0 (m >= 1: the sum of 1/(a+k) up to the shift, for digamma):
    30 terms summed, the rest by Euler-Maclaurin (a reference independent of ops' kernels)."""
    a = np.asarray(a, np.float64)
    z = a + 30
    if m == 1:  # digamma(a) = digamma(z) - sum_{k<30} 1/(a+k)
        s = sum(1 / (a + k) for k in range(30))
        r = 1 / (z * z)
        return np.log(z) - 0.5 / z - r * (1 / 12 - r * (1 / 120 - r / 252)) - s
    s = sum(1 / (a + k) ** m for k in range(30))
    return s + 1 / ((m - 1) * z ** (m - 1)) + 0.5 / z**m + m / (12 * z ** (m + 1)) - (
        m * (m + 1) * (m + 2) / (720 * z ** (m + 3)))


def _bessel_j0_np(a):
    """J0 by the trapezoid rule on (1/pi) int_0^pi cos(x sin t) dt (periodic: exact to
    rounding with 64 points for |x| < 30)."""
    t = np.arange(64) * np.pi / 64
    return np.cos(np.asarray(a, np.float64)[..., None] * np.sin(t)).mean(-1)


def _airy_ai_np(a):
    """Ai by its Maclaurin series (|x| <= 2: 40 terms)."""
    x = np.asarray(a, np.float64)
    f = g = 0.0
    tf, tg = np.ones_like(x), x.copy()
    for k in range(40):
        f, g = f + tf, g + tg
        tf = tf * x**3 / ((3 * k + 2) * (3 * k + 3))
        tg = tg * x**3 / ((3 * k + 3) * (3 * k + 4))
    return 0.3550280538878172 * f - 0.2588194037928068 * g


def _legendre_np(a, n):
    """P_n(a), n an integer array (NumPy's Legendre series, one degree at a time)."""
    a, n = np.broadcast_arrays(np.asarray(a, np.float64), n)
    out = [np.polynomial.legendre.legval(x, np.eye(int(k) + 1)[-1])
           for x, k in zip(a.ravel(), n.ravel())]
    return np.asarray(out).reshape(a.shape)


def _hurwitz_np(s, q):
    """sum_k (q + k)^-s by 2000 terms and the Euler-Maclaurin tail (s > 1, q > 0)."""
    s, q = np.broadcast_arrays(np.asarray(s, np.float64), np.asarray(q, np.float64))
    head = sum((q + k) ** -s for k in range(2000))
    z = q + 2000
    return head + z ** (1 - s) / (s - 1) + z**-s / 2 + s * z ** (-s - 1) / 12


def _igamma_np(a, x):
    """P(a, x) by its power series (300 terms)."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    lgam = np.vectorize(math.lgamma, otypes=[np.float64])
    term, total = np.ones_like(a), np.ones_like(a)
    for k in range(1, 300):
        term = term * x / (a + k)
        total = total + term
    return np.exp(a * np.log(x) - x - lgam(a + 1)) * total


def _standard_gamma_grad_np(a, x):
    """d x / d a of Gamma(a, 1) at its quantile x: the power series of P(a, x) differentiated
    term by term, over the density (-x/a sum_k t_k (log x - psi(a+1) - H_k))."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    lx = np.log(x) - _zeta_shifted(a + 1, 1)
    term, h, total = np.ones_like(a), np.zeros_like(a), lx.copy()
    for k in range(1, 300):
        term = term * x / (a + k)
        h = h + 1 / (a + k)
        total = total + term * (lx - h)
    return -x / a * total


OP_DB = {info.name: info for info in OPS}
assert len(OP_DB) == len(OPS), "duplicate op_db rows"


def _standardized(a, dims):
    """``(a - mean) / sqrt(var + 1e-5)`` over ``dims`` (biased variance), the norm layers'."""
    mean = a.mean(dims, keepdims=True)
    return (a - mean) / np.sqrt(((a - mean) ** 2).mean(dims, keepdims=True) + 1e-5)


def _channel(p, ndim):
    """A per-channel parameter shaped to broadcast along dim 1 of an ``ndim``-d input."""
    return p.reshape(1, -1, *([1] * (ndim - 2)))


def _recurrent(xp, h, c, w, b, mode, reverse):
    """The output of one direction of a recurrent layer (the cells' formulas, as PyTorch's)."""
    def sig(a):
        return 1 / (1 + np.exp(-a))

    out = [None] * xp.shape[0]
    for t in (range(xp.shape[0] - 1, -1, -1) if reverse else range(xp.shape[0])):
        gh = h @ w.T + b
        if mode == "LSTM":
            i, f, g, o = np.split(xp[t] + gh, 4, -1)
            c = sig(f) * c + sig(i) * np.tanh(g)
            h = sig(o) * np.tanh(c)
        elif mode == "GRU":
            (xr, xz, xn), (hr, hz, hn) = np.split(xp[t], 3, -1), np.split(gh, 3, -1)
            r, z = sig(xr + hr), sig(xz + hz)
            h = (1 - z) * np.tanh(xn + r * hn) + z * h
        else:
            h = np.tanh(xp[t] + gh) if mode == "RNN_TANH" else np.maximum(xp[t] + gh, 0)
        out[t] = h
    return np.stack(out)


def _causal_attention(q, k, v):
    """``softmax(q k^T / sqrt(E))`` over the keys up to each query's position, times ``v``."""
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    w = np.exp(s - s.max(-1, keepdims=True))
    return w / w.sum(-1, keepdims=True) @ v
