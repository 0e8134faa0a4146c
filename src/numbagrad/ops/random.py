"""Random sampling: ``multinomial``, ``bernoulli``, ``normal``, ``poisson``, ``binomial``,
``_standard_gamma`` (with its reparameterization gradient), ``_sample_dirichlet`` and the
in-place fills (``normal_``, ``uniform_``, ``random_``, ``cauchy_``, ...).

Values are drawn on the host from a NumPy generator (``numbagrad.random.numpy_rng``: the
default generator's, reseeded by ``manual_seed``, or a ``generator=``'s own) and moved to the
tensor's device. A sample's gradient is zero, as PyTorch defines it; the nodes carry
PyTorch's names.
"""

from __future__ import annotations

import numpy as np

from .. import _overloads
from .. import backend
from .. import dtypes as D
from .._tensor import Tensor, _on
from ..backend import cpu
from ..factory import _random_float
from ..random import numpy_rng as _generator_rng
from ..random import standard_normal as _standard_normal
from ..backend.cpu import broadcast_shapes
from .forward import constant, refused
from .inplace import _tracked, _writable, assign_inplace, check_inplace
from .reduce import _TYPE
from . import elementwise as E
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
    a = x._data
    if type(a) is np.ndarray and not _tracked(x):
        # (the commonest: a CPU tensor's values written over, cast as they are copied)
        a = _writable(x)
        if values.dtype == a.dtype:
            a[...] = values
        else:
            with np.errstate(over="ignore"):  # (past the dtype's range: inf, as PyTorch's)
                a[...] = values
        x._bump()
        return x
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
    values = _standard_normal(_generator_rng(generator), tuple(x.shape), x.dtype.np)
    if mean != 0 or std != 1:
        with np.errstate(over="ignore"):  # (past the dtype's range: inf, as PyTorch's)
            values = mean + std * values
    return _fill(x, "NormalBackward0", values)


@public("method", name="uniform_")
def uniform_fill(x, *args, **kwargs):
    """``uniform_(from=0, to=1, *, generator=None)``: PyTorch's keyword ``from`` is one of
    Python's, passed only as ``**{"from": ...}``."""
    _overloads.check("uniform_", args, kwargs, _overloads.UNIFORM_)
    from_ = args[0] if args else kwargs.get("from", 0.0)
    to = args[1] if len(args) > 1 else kwargs.get("to", 1.0)
    generator = kwargs.get("generator")
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
    # (uniform(0, 1) draws what random draws, 0 + 1 * u, at less cost)
    values = (rng.random(x.shape) if from_ == 0 and to == 1
              else rng.uniform(from_, to, x.shape))
    return _fill(x, "UniformBackward0", values)


_RANDOM_TOP = {"float32": 2**24, "float64": 2**53, "int64": 2**63 - 1, "int32": 2**31 - 1,
               "int16": 2**15 - 1, "int8": 2**7 - 1, "uint8": 2**8 - 1, "bool": 1}


@public("method", name="random_")
def random_fill_(x, *args, **kwargs):
    """Integers drawn uniformly from [from, to); ``random_(to)`` is [0, to); ``random_()`` is
    [0, 2**mantissa] for floats and [0, max] for integers. PyTorch's overloads: ``()``,
    ``(to)`` and ``(from, to)``, each with ``*, generator=None`` (``from`` by keyword only as
    ``**{"from": ...}``: a keyword of Python's)."""
    _overloads.check("random_", args, kwargs, _overloads.RANDOM_)
    given = list(args) + [kwargs[k] for k in ("from", "to") if k in kwargs]
    from_, to = (None, None) if not given else (0, given[0]) if len(given) == 1 else given
    generator = kwargs.get("generator")
    D.check_int64(from_, to)
    if from_ is None:
        from_ = 0
    if to is None:  # (``random_(from, None)``: [from, the dtype's top])
        to = _RANDOM_TOP[x.dtype.name] + 1
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


@public("method", name="cauchy_")
def cauchy_fill(x, median=0.0, sigma=1.0, *, generator=None):
    """``x`` filled with draws from the Cauchy distribution of ``median`` and scale ``sigma``."""
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_fmt(sigma)}")
    if not x.dtype.is_floating_point:  # (even an empty tensor, as PyTorch's check)
        name = D.C_TYPE.get(x.dtype.name, x.dtype.name)
        raise RuntimeError("Cauchy distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {name}")
    rng = _generator_rng(generator)
    return _fill(x, "CauchyBackward0", median + sigma * rng.standard_cauchy(x.shape))


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


# ---------------------------------------------------------------- gamma, Poisson, binomial,
# Dirichlet (torch.poisson, torch.binomial, torch._standard_gamma, torch._sample_dirichlet)


def _float_kernel(t, kernel):
    """PyTorch's refusal of a tensor its sampler has no kernel for (integers, bool)."""
    if not t.dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_TYPE[t.dtype.name]}\'')


def _gamma_draws(rng, alpha):
    """Gamma(alpha, 1) draws (float64) for the float64 array ``alpha``: PyTorch's smallest
    normal number where alpha is not positive or NaN (and for a draw that underflows), inf
    where alpha is."""
    valid = alpha > 0  # (False for NaN)
    out = rng.standard_gamma(np.where(valid & np.isfinite(alpha), alpha, 1.0))
    return np.asarray(np.where(alpha == np.inf, np.inf, np.where(valid, out, 0.0)))


def _tiny(values, dt):
    """``values`` as dtype ``dt``, no smaller than its smallest normal number."""
    with np.errstate(over="ignore"):
        v = values.astype(dt.np)
    return np.asarray(np.maximum(v, np.finfo(dt.np).tiny))


@composite("poisson", node="PoissonBackward0", variants="function")
def poisson(ctx, input, generator=None):
    """Poisson draws of the rates ``input`` (a float tensor), in its dtype."""
    _float_kernel(input, "poisson_cpu")
    rates = np.asarray(input._host(), np.float64)
    if not (rates >= 0).all():  # (NaN too)
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    # (past int64's range PyTorch's int64 count wraps to its lowest value; NumPy refuses)
    huge = rates > 9.2e18
    draws = np.asarray(_generator_rng(generator).poisson(np.where(huge, 0.0, rates)), np.float64)
    draws[huge] = -(2.0 ** 63)
    return _on(draws.astype(input.dtype.np), input.device)


poisson.defvjp(lambda ctx, grad: _zeros_for(ctx)[0])
poisson.defjvp(constant)


@composite("binomial", node="NotImplemented", variants="function")
def binomial(ctx, count, prob, generator=None):
    """The number of successes in ``floor(count)`` trials of probability ``prob`` (float
    tensors of one dtype, broadcast), in their dtype. PyTorch's edges: 0 for a count or a
    probability not above 0, ``count`` itself for a probability of 1 or more, NaN for NaN."""
    for k, (name, t) in enumerate((("count", count), ("prob", prob))):
        if not isinstance(t, Tensor):
            raise TypeError(f"binomial(): argument '{name}' (position {k + 1}) must be Tensor, "
                            f"not {type(t).__name__}")
    for name, t in (("count", count), ("prob", prob)):
        if not t.dtype.is_floating_point:
            raise ValueError(f"binomial only supports floating-point dtypes for {name}, got: "
                             f"{_TYPE[t.dtype.name]}")
    if prob.dtype is not count.dtype:
        raise RuntimeError(f"Found dtype {_TYPE[prob.dtype.name]} but expected "
                           f"{_TYPE[count.dtype.name]}")
    shape = broadcast_shapes(tuple(count.shape), tuple(prob.shape))
    n = np.broadcast_to(np.asarray(count._host(), np.float64), shape)
    p = np.broadcast_to(np.asarray(prob._host(), np.float64), shape)
    rng = _generator_rng(generator)
    with np.errstate(invalid="ignore"):
        trials = np.floor(n)
        drawn = (n > 0) & (p > 0) & (p < 1) & np.isfinite(n)
        small = drawn & (trials < 2.0 ** 62)
        out = np.zeros(shape)
        out[small] = rng.binomial(trials[small].astype(np.int64), p[small])
        big = drawn & ~small  # (beyond int64 counts: the normal approximation, rounded)
        if big.any():
            m, q = trials[big] * p[big], p[big] * (1 - p[big])
            out[big] = np.floor(m + np.sqrt(trials[big] * q) * rng.standard_normal(m.shape) + 0.5)
        out = np.where((n > 0) & (p >= 1), n, out)
        out = np.where(np.isnan(n) | np.isnan(p) | (n == np.inf) & (p > 0), np.nan, out)
    return _on(np.asarray(out, count.dtype.np), count.device)


def _no_forward(what):
    def jvp(result, tangents, *args, **kwargs):
        raise NotImplementedError(f"Trying to use forward AD with {what} that does not support "
                                  "it.")

    return jvp


# (PyTorch records binomial with no derivative: a backward through it raises, and forward mode
# refuses it)
binomial.derivative_missing = "aten::binomial"
binomial.defvjp(lambda ctx, grad: None)
binomial.defjvp(_no_forward("aten::binomial"))


@composite("_standard_gamma_grad", node="StandardGammaGradBackward0")
def standard_gamma_grad(ctx, input, output):
    """dx/dalpha of Gamma(alpha, 1) samples ``output`` of ``alpha = input`` (the implicit
    reparameterization gradient, ``elementwise.standard_gamma_grad``)."""
    return E.standard_gamma_grad(Tensor._make(input._data), Tensor._make(output._data))._data


@standard_gamma_grad.defvjp
def standard_gamma_grad_vjp(ctx, grad):
    raise NotImplementedError("the derivative for '_standard_gamma_grad' is not implemented.")


standard_gamma_grad.defjvp(refused(standard_gamma_grad))


@public("function", name="_standard_gamma_grad")
def standard_gamma_grad_function(input, output):
    """PyTorch's ``_standard_gamma_grad(self, output)``: float tensors of one dtype; no
    derivative for ``output`` (its result is recorded for ``input`` only, whose backward
    raises)."""
    for k, (name, t) in enumerate((("self", input), ("output", output))):
        if not isinstance(t, Tensor):
            raise TypeError(f"_standard_gamma_grad(): argument '{name}' (position {k + 1}) "
                            f"must be Tensor, not {type(t).__name__}")
    _float_kernel(input, "_standard_gamma_grad_cpu")
    if output.dtype is not input.dtype:
        raise RuntimeError(f"Found dtype {_TYPE[output.dtype.name]} but expected "
                           f"{_TYPE[input.dtype.name]}")
    return standard_gamma_grad(input, output.detach())


@composite("_standard_gamma", node="StandardGammaBackward0", variants="function")
def standard_gamma(ctx, input, generator=None):
    """Gamma(input, 1) draws in ``input``'s (float) dtype, no smaller than its smallest normal
    number; differentiable through PyTorch's implicit reparameterization gradient
    (``_standard_gamma_grad``)."""
    _float_kernel(input, "gamma_cpu")
    alpha = np.asarray(input._host(), np.float64)
    draws = _tiny(_gamma_draws(_generator_rng(generator), alpha), input.dtype)
    ctx.save(input=input)
    ctx.save_outputs = {"result": 0}
    return _on(draws, input.device)


@standard_gamma.defvjp
def standard_gamma_vjp(ctx, grad):
    return grad * standard_gamma_grad_function(ctx["input"], ctx["result"])


standard_gamma.defjvp(refused(standard_gamma))  # (PyTorch has no forward-mode formula)


@composite("_sample_dirichlet", node="NotImplemented", variants="function")
def sample_dirichlet(ctx, input, generator=None):
    """Dirichlet draws of the concentrations ``input`` (its last dim), in its dtype: Gamma
    draws normalized, held within [its smallest normal number, the float below 1], as
    PyTorch's."""
    _float_kernel(input, "dirichlet")
    alpha = np.asarray(input._host(), np.float64)
    gammas = np.maximum(_gamma_draws(_generator_rng(generator), alpha), np.finfo(np.float64).tiny)
    if gammas.ndim:
        with np.errstate(invalid="ignore", over="ignore"):
            values = gammas / gammas.sum(-1, keepdims=True)
    else:
        values = gammas / gammas
    dt = input.dtype.np
    top = np.nextafter(dt.type(1), dt.type(0))
    with np.errstate(invalid="ignore"):
        values = np.minimum(np.maximum(values.astype(dt), np.finfo(dt).tiny), top)
    return _on(np.asarray(values), input.device)


sample_dirichlet.derivative_missing = "aten::_sample_dirichlet"
sample_dirichlet.defvjp(lambda ctx, grad: None)
sample_dirichlet.defjvp(_no_forward("aten::_sample_dirichlet"))
