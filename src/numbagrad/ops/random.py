"""Random sampling: ``multinomial``, ``bernoulli``, ``normal`` and the in-place fills
(``normal_``, ``uniform_``, ``random_``, ...).

Values are drawn on the host from a NumPy generator (``numbagrad.random.numpy_rng``: the
default generator's, reseeded by ``manual_seed``, or a ``generator=``'s own) and moved to the
tensor's device. A sample's gradient is zero, as PyTorch defines it; the nodes carry
PyTorch's names.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from .. import dtypes as D
from .._tensor import Tensor, _on
from ..backend import cpu
from ..factory import _random_float
from ..random import numpy_rng as _generator_rng
from ..backend.cpu import broadcast_shapes
from .forward import constant
from .inplace import _tracked, _writable, assign_inplace, check_inplace
from .reduce import _TYPE
from .registry import composite, public


def _zeros_for(ctx, grad=None):
    return tuple(Tensor._make(ctx.backend.zeros(s, d.np))
                 for s, d in zip(ctx.input_shapes, ctx.input_dtypes))


@composite("random_fill", node="NormalBackward0")
def random_fill(ctx, x, values, node):
    """``values`` (an array on ``x``'s device) standing for ``x`` filled at random in place."""
    ctx.node_name = node
    return values


random_fill.defvjp(lambda ctx, grad: _zeros_for(ctx)[0])
# (a draw's derivative is zero; the derived rule would draw again)
random_fill.defjvp(constant)


def _fill(x, node, values):
    """Write host array ``values`` into ``x`` in place (PyTorch's version bump and node)."""
    check_inplace(x)
    with np.errstate(over="ignore"):  # (a draw past the dtype's range is inf, as PyTorch's)
        values = _on(np.ascontiguousarray(values, dtype=x.dtype.np), x.device)
    if _tracked(x):
        return assign_inplace(x, random_fill(x, values, node))
    a = _writable(x)
    if type(a) is np.ndarray:
        a[...] = values
    else:
        backend.of(a).copyto(a, values)
    x._bump()
    return x


def _fmt(v):
    return f"{v:g}" if isinstance(v, float) else str(v)


@public("method", name="normal_")
def normal_fill(x, mean=0.0, std=1.0, *, generator=None):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(std)}")
    _random_float(x.dtype, "normal_kernel_cpu", x.shape)
    rng = _generator_rng(generator)
    return _fill(x, "NormalBackward0", mean + std * rng.standard_normal(x.shape))


@public("method", name="uniform_")
def uniform_fill(x, from_=0.0, to=1.0, *, generator=None, **kwargs):
    from_ = kwargs.pop("from", from_)  # (PyTorch's keyword is ``from``, a Python keyword)
    _random_float(x.dtype, "check_uniform_bounds")
    top = float(np.finfo(x.dtype.np).max)
    for name, v in (("from", from_), ("to", to)):
        if not -top <= v <= top:
            raise RuntimeError(f"{name} is out of bounds for {D.C_TYPE[x.dtype.name]}")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={_fmt(from_)} > to={_fmt(to)}")
    if to - from_ > top:
        raise RuntimeError(
            f"uniform_ expects to-from <= std::numeric_limits<{D.SCALAR_TYPE[x.dtype.name]}>"
            f"::max(), but found to={_fmt(to)} and from={_fmt(from_)} which result in to-from "
            "to exceed the limit")
    rng = _generator_rng(generator)
    return _fill(x, "UniformBackward0", rng.uniform(from_, to, x.shape))


_RANDOM_TOP = {"float32": 2**24, "float64": 2**53, "int64": 2**63 - 1, "int32": 2**31 - 1,
               "int16": 2**15 - 1, "int8": 2**7 - 1, "uint8": 2**8 - 1, "bool": 1}


@public("method", name="random_")
def random_fill_(x, from_=None, to=None, *, generator=None, **kwargs):
    """Integers drawn uniformly from [from, to); ``random_(to)`` is [0, to); ``random_()`` is
    [0, 2**mantissa] for floats and [0, max] for integers."""
    from_ = kwargs.pop("from", from_)
    D.check_int64(from_, to)
    if to is None:
        from_, to = 0, (from_ if from_ is not None else _RANDOM_TOP[x.dtype.name] + 1)
    if from_ >= to:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={from_} "
                           f">= to={to}")
    rng = _generator_rng(generator)
    return _fill(x, "RandomBackward0", rng.integers(from_, to, x.shape, dtype=np.int64,
                                                    endpoint=False))


@public("method", name="exponential_")
def exponential_fill(x, lambd=1.0, *, generator=None):
    if lambd <= 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_fmt(lambd)}")
    if not x.dtype.is_floating_point and x.numel():  # (checked in the kernel, as normal_'s)
        name = D.SCALAR_TYPE.get(x.dtype.name, x.dtype.name)
        raise RuntimeError("Exponential distribution is a continuous probability distribution."
                           f" dtype must be a floating point but you specified {name}")
    rng = _generator_rng(generator)
    return _fill(x, "ExponentialBackward0", rng.exponential(1.0 / lambd, x.shape))


@public("method", name="geometric_")
def geometric_fill(x, p, *, generator=None):
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_fmt(p)}")
    rng = _generator_rng(generator)
    return _fill(x, "GeometricBackward0", rng.geometric(p, x.shape))


@public("method", name="log_normal_")
def log_normal_fill(x, mean=1.0, std=2.0, *, generator=None):
    if std <= 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_fmt(std)}")
    _random_float(x.dtype, "log_normal_cpu", x.shape)
    rng = _generator_rng(generator)
    return _fill(x, "LogNormalBackward0", rng.lognormal(mean, std, x.shape))


@public("method", name="bernoulli_")
def bernoulli_fill(x, p=0.5, *, generator=None):
    rng = _generator_rng(generator)
    if isinstance(p, Tensor):
        probs = np.broadcast_to(p._host(), x.shape)
        node = "BernoulliBackward1"
    else:
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_fmt(p)}")
        probs, node = p, "BernoulliBackward2"
    return _fill(x, node, rng.random(x.shape) < probs)


# ---------------------------------------------------------------- sampling functions


@composite("bernoulli", node="BernoulliBackward0", variants="function method")
def bernoulli(ctx, input, p=None, *, generator=None):
    """1 with probability ``input`` (or ``p``), else 0, in ``input``'s dtype."""
    probs = input._host() if p is None else np.full(input.shape, p)
    if ((probs < 0) | (probs > 1)).any():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could "
                           "this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    draws = _generator_rng(generator).random(input.shape) < probs
    return _on(draws.astype(input.dtype.np), input.device)


bernoulli.defvjp(lambda ctx, grad: _zeros_for(ctx)[0])
bernoulli.defjvp(constant)


@composite("normal", node="NormalBackward3")
def normal(ctx, mean, std=1.0, size=None, *, generator=None, dtype=None, device=None):
    """Samples of N(mean, std**2): tensors (broadcast) or numbers (then ``size`` is needed)."""
    tm, ts = isinstance(mean, Tensor), isinstance(std, Tensor)
    if ts:
        if (std._host() < 0).any():
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(float(std))}")
    if tm and ts:
        shape = broadcast_shapes(tuple(mean.shape), tuple(std.shape))
        dt, dev = D.result_type(mean, std), mean.device
    elif tm or ts:
        t = mean if tm else std
        ctx.node_name = "NormalBackward1" if tm else "NormalBackward2"
        shape, dt, dev = tuple(t.shape), t.dtype, t.device
    else:
        if size is None:
            raise TypeError("normal() missing 1 required positional argument: \"size\"")
        shape = tuple(size)
        dt = D.as_dtype(dtype) if dtype is not None else D.default_float
        dev = device if device is None or not isinstance(device, str) else None
    m = mean._host() if tm else mean
    s = std._host() if ts else std
    values = m + s * _generator_rng(generator).standard_normal(shape)
    with np.errstate(over="ignore"):
        return _on(np.asarray(values, dtype=dt.np), dev)


normal.defvjp(_zeros_for)
normal.defjvp(constant)


@public("function", name="normal")
def normal_function(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None,
                    requires_grad=False):
    """``normal``, whose samples of numbers may be a leaf that requires grad (d2l's
    ``torch.normal(0, 0.01, size=(2, 1), requires_grad=True)``)."""
    out = normal(mean, std, size, generator=generator, dtype=dtype, device=device)
    return out.requires_grad_() if requires_grad else out


def _check_probs(input, n, replacement):
    if not input.dtype.is_floating_point:
        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: "
                           + _TYPE[input.dtype.name])
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if n <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and n > input.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    p = input._host().astype(np.float64)
    if not np.isfinite(p).all() or (p < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (p.sum(-1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    return p


@public("function method")
def multinomial(input, num_samples, replacement=False, *, generator=None):
    """``num_samples`` category indices per row of ``input`` (weights, not necessarily
    normalised), int64."""
    p = _check_probs(input, num_samples, replacement)
    rows = p.reshape(-1, p.shape[-1])
    rng = _generator_rng(generator)
    if replacement:
        cdf = np.cumsum(rows, -1)
        cdf /= cdf[:, -1:]
        u = rng.random((rows.shape[0], num_samples))
        out = np.stack([np.searchsorted(c, r, side="right") for c, r in zip(cdf, u)])
        out = np.minimum(out, rows.shape[1] - 1)
    else:
        # exponential races: the k smallest of E_i / p_i are a weighted draw without
        # replacement; zero-weight categories come last (as in PyTorch, when there are few
        # nonzero ones)
        with np.errstate(divide="ignore"):
            keys = rng.exponential(size=rows.shape) / rows
        out = np.argsort(keys, axis=-1, kind="stable")[:, :num_samples]
    out = out.astype(np.int64).reshape(p.shape[:-1] + (num_samples,))
    return Tensor._make(_on(out, input.device))
