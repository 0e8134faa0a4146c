"""Activations beyond one elementwise op of ``elementwise.py``: glu (a node of its own over
two halves of its input) and the spellings ``torch.*`` gives activations (``selu``, ``celu``,
``threshold``, ``hardshrink``, ``prelu``, ``rrelu`` and their in-place forms), with PyTorch's
checks; ``nn.functional`` builds on them."""

from __future__ import annotations

from .. import dtypes as D
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..random import numpy_rng
from . import elementwise as E
from . import movement as M
from .inplace import _CAST_NAMES, inplace, without_derivative
from .pointwise import _no_kernel
from .registry import as_tensor, composite, public

# selu's constants (PyTorch's, from the SELU paper)
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def check_float(input: Tensor, kernel: str) -> None:
    """Refuse an input that is not a float tensor, naming PyTorch's ``kernel``."""
    if not input.dtype.is_floating_point:
        _no_kernel(kernel, input.dtype)


@public("function")
def selu(input):
    check_float(input, "elu_cpu")
    return E.elu(input, SELU_ALPHA, SELU_SCALE, 1.0)


@public("function")
def selu_(input):
    check_float(input, "elu_cpu")
    return inplace(input, E.elu_, SELU_ALPHA, SELU_SCALE, 1.0)


def _check_celu(input, alpha):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    check_float(input, "elu_cpu")


@public("function")
def celu(input, alpha=1.0):
    _check_celu(input, alpha)
    return E.celu(input, alpha)


@public("function")
def celu_(input, alpha=1.0):
    _check_celu(input, alpha)
    if alpha < 0:
        return negative_slope_inplace(input, E.celu, (alpha,), "CeluBackward1", "elu")
    return inplace(input, E.celu_, alpha)


# PyTorch's in-place leaky_relu_ / elu_ / celu_ / rrelu_ with a negative slope (or alpha) record
# their in-place node, whose backward refuses: the result no longer tells the input's sign
ERR_NEGATIVE_SLOPE = {
    "leakyReLu": "In-place leakyReLu backward calculation is triggered with a negative slope "
                 "which is not supported. This is caused by calling in-place forward function "
                 "with a negative slope, please call out-of-place version instead. File an "
                 "issue at https://github.com/pytorch/pytorch if you do require supporting "
                 "in-place leakRelu backward calculation with negative slope",
    "elu": "In-place elu backward calculation is triggered with a negative slope which is not "
           "supported. This is caused by calling in-place forward function with a negative "
           "slope, please call out-of-place version instead.",
}


def negative_slope_inplace(x, op, params, node, what):
    """``x.<op>_(*params)`` with a negative slope: see ``ERR_NEGATIVE_SLOPE``."""
    return inplace(x, without_derivative, op, params, node,
                   (RuntimeError, ERR_NEGATIVE_SLOPE[what]))


@public("function")
def threshold(input, threshold, value):
    """``value`` where ``input <= threshold``, else ``input``."""
    return E.threshold(input, threshold, value)


@public("function")
def threshold_(input, threshold, value):
    return inplace(input, E.threshold_, threshold, value)


@public("function method")
def hardshrink(input, lambd=0.5):
    """0 where ``-lambd <= input <= lambd``, else ``input``."""
    check_float(input, "hardshrink_cpu")
    return E.hardshrink(input, lambd)


@public("function method")
def prelu(input, weight):
    """``input`` where positive, else ``weight * input``, one weight per channel (dim 1) or one
    for all (PyTorch's checks, and its weight reshaped to broadcast: ViewBackward0)."""
    if input.dtype is not weight.dtype:
        raise RuntimeError("prelu: Type promoting not supported. Got "
                           f"{_CAST_NAMES[input.dtype.name]} and {_CAST_NAMES[weight.dtype.name]}")
    check_float(input, "prelu_cpu")
    n = weight.numel()
    if n != 1:
        if input.ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.ndim > 1 else 1
        if channels != n:
            raise RuntimeError("Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {n} and channel size = {channels}.")
    if weight.ndim > 1:
        raise RuntimeError("prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    if input.ndim != weight.ndim:
        shape = [1] * input.ndim
        if input.ndim > 1:
            shape[1] = n
        weight = weight.reshape(shape)
    return E.prelu(input, weight)


def _rrelu_noise(input, lower, upper, training, generator):
    """rrelu's slopes: drawn uniformly from ``[lower, upper)`` per element in training (only
    those of ``input <= 0`` are read), else their mean."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    check_float(input, "rrelu_with_noise_out_cpu" if training else "leaky_relu_cpu")
    D.check_overflow(lower, input.dtype)  # (PyTorch's Scalar bounds)
    D.check_overflow(upper, input.dtype)
    if not training:
        return (lower + upper) / 2
    u = numpy_rng(generator).random(tuple(input.shape))
    return as_tensor(lower + (upper - lower) * u, input.dtype, like=input)


@public("function")
def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """leaky_relu with a random slope from ``[lower, upper)`` per element in training, and
    their mean in eval (the default generator's draws: ``manual_seed`` governs them)."""
    noise = _rrelu_noise(input, lower, upper, training, generator)
    return E.rrelu_with_noise(input, noise)


@public("function")
def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    noise = _rrelu_noise(input, lower, upper, training, generator)
    if lower < 0:  # (RreluWithNoiseBackward1's rule reads the result's sign)
        return negative_slope_inplace(input, E.rrelu_with_noise, (noise,),
                                      "RreluWithNoiseBackward1", "leakyReLu")
    return inplace(input, E.rrelu_with_noise_, noise)


# ---------------------------------------------------------------- glu


@composite("glu", node="GluBackward0")
def glu(ctx, x, dim):
    """``a * sigmoid(b)``, ``a`` and ``b`` the first and second halves of ``x`` along ``dim``
    (checked by nn.functional.glu: a float ``x``, an even size)."""
    ctx.save(x=x)
    ctx.dim = dim
    with no_grad():
        a, b = M.chunk(x, 2, dim)
        return E.mul(a, E.sigmoid(b))._data


@glu.defvjp
def glu_vjp(ctx, grad):
    # PyTorch's glu_backward, of Tensors (so differentiable): the gradients of both halves
    # side by side
    a, b = M.chunk(ctx["x"], 2, ctx.dim)
    s = E.sigmoid(b)
    return M.cat([grad * s, grad * a * s * (1 - s)], ctx.dim)
