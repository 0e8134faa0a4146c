"""Elementwise ops: a scalar forward and a pointwise rule per input, side by side.

Names a rule may call: the ops of this module (``where``, ``sign``, ``exp``, ...) and
operators. Literals take the kernel's dtype when compiled; on Tensors they are Python scalars.
"""

from __future__ import annotations

import math

from .. import dtypes as D
from ..backend.codegen import kernel_dtype as _c
from .registry import binary, public, unary

# PyTorch's refusals of bool tensors, by op (the message names its CPU kernel where PyTorch's
# does: the op has no bool kernel there)
ERR_NEG_BOOL = (
    "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert "
    "a mask, use the `~` or `logical_not()` operator instead."
)
ERR_SUB_BOOL = (
    "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
    "invert a mask, use the `~` or `logical_not()` operator instead."
)
ERR_SUB_BOOLS = (
    "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
    "`logical_xor()` operator instead."
)


def _no_kernel(name, dtype="Bool"):
    return NotImplementedError, f'"{name}" not implemented for \'{dtype}\''


# ================================================================ unary


@unary("neg", refuse_bool=(RuntimeError, ERR_NEG_BOOL),
       variants="function method inplace inplace_function", aliases="negative")
def neg(x):
    return -x


neg.defvjp(lambda grad: -grad)


@unary("abs", refuse_bool=_no_kernel("abs_cpu"),
       variants="function method inplace inplace_function")
def abs(x):
    return x if x >= 0 else -x


abs.defvjp(lambda grad, x: grad * sign(x))
# (PyTorch has abs_ but no absolute_ at the top level)
public("function method inplace", "absolute", method=abs.function.method)(abs.function)


@unary("sign", variants="function method inplace")
def sign(x):
    # NaN has no sign: PyTorch returns 0 for it, as for 0 itself
    if x > 0:
        return 1
    if x < 0:
        return -1
    return 0


# sign is piecewise constant: its gradient is zero everywhere PyTorch defines it, also where
# the incoming gradient is infinite or NaN (so not ``grad * 0``)
sign.defvjp(lambda grad: abs(sign(grad)) * 0)  # (finite, +0, of grad's dtype)
sign.constant_gradient = True


@unary("exp", dtype="float", variants="function method inplace inplace_function")
def exp(x):
    return math.exp(x)


exp.defvjp(lambda grad, result: grad * result)


@unary("log", dtype="float", variants="function method inplace inplace_function")
def log(x):
    # math.log raises on non-positive input; NumPy semantics want -inf / nan
    if x > 0:
        return math.log(x)
    if x == 0:
        return -math.inf
    return math.nan


log.defvjp(lambda grad, x: grad / x)


@unary("log1p", node="Log1PBackward0", dtype="float",
       variants="function method inplace inplace_function")
def log1p(x):
    if x > -1:
        return math.log1p(x)
    if x == -1:
        return -math.inf
    return math.nan


log1p.defvjp(lambda grad, x: grad / (x + 1))


@unary("expm1", dtype="float", variants="function method inplace inplace_function")
def expm1(x):
    return math.expm1(x)


expm1.defvjp(lambda grad, result: grad * (result + 1))


@unary("sqrt", dtype="float", variants="function method inplace inplace_function")
def sqrt(x):
    return math.sqrt(x) if x >= 0 else math.nan


sqrt.defvjp(lambda grad, result: grad / (2 * result))


@unary("rsqrt", dtype="float", variants="function method inplace inplace_function")
def rsqrt(x):
    return 1 / math.sqrt(x) if x >= 0 else math.nan


rsqrt.defvjp(lambda grad, result: -0.5 * grad * result * result * result)


@unary("reciprocal", dtype="float", variants="function method inplace inplace_function")
def reciprocal(x):
    return 1 / x


reciprocal.defvjp(lambda grad, result: -grad * result * result)


@unary("sin", dtype="float", variants="function method inplace inplace_function")
def sin(x):
    return math.sin(x)


sin.defvjp(lambda grad, x: grad * cos(x))


@unary("cos", dtype="float", variants="function method inplace inplace_function")
def cos(x):
    return math.cos(x)


cos.defvjp(lambda grad, x: -grad * sin(x))


@unary("tan", dtype="float", variants="function method inplace inplace_function")
def tan(x):
    return math.tan(x)


tan.defvjp(lambda grad, result: grad * (1 + result * result))


@unary("tanh", dtype="float", variants="function method inplace inplace_function")
def tanh(x):
    return math.tanh(x)


tanh.defvjp(lambda grad, result: tanh_backward(grad, result))


# PyTorch's tanh_backward: a node of its own under create_graph (TanhBackwardBackward0), whose
# double-backward formula keeps an infinite grad_output infinite (inf * 0 is not formed)
@binary("tanh_backward", dtype="float")
def tanh_backward(grad_output, output):
    return grad_output * (1 - output * output)


def tanh_backward_vjp_output(grad, grad_output, output):
    return grad * (-2 * output * grad_output)


tanh_backward.defvjp(lambda grad, output: tanh_backward(grad, output), tanh_backward_vjp_output)


@unary("sigmoid", dtype="float", variants="function method inplace inplace_function")
def sigmoid(x):
    # one formula, as PyTorch's kernel: below about -88 (float32) exp(-x) overflows to inf
    # and the result is 0 as PyTorch's; without a branch the loop vectorizes
    return 1 / (1 + math.exp(-x))


sigmoid.defvjp(lambda grad, result: sigmoid_backward(grad, result))


@binary("sigmoid_backward", dtype="float")
def sigmoid_backward(grad_output, output):
    """PyTorch's sigmoid_backward (SigmoidBackwardBackward0; see tanh_backward), in its
    kernel's order of rounding: ``grad * (1 - y) * y``."""
    return grad_output * (1 - output) * output


def sigmoid_backward_vjp_output(grad, grad_output, output):
    return grad * grad_output * (-2 * output + 1)


sigmoid_backward.defvjp(lambda grad, output: sigmoid_backward(grad, output),
                        sigmoid_backward_vjp_output)


@unary("softplus", dtype="float")  # (F.softplus: nn/functional.py, which refuses integers)
def softplus(x, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta * x)) / beta``; ``x`` itself where ``beta * x > threshold``."""
    return x if x * beta > threshold else math.log1p(math.exp(x * beta)) / beta


softplus.defvjp(lambda grad, x, beta, threshold: softplus_backward(grad, x, beta, threshold))


@binary("softplus_backward", dtype="float")
def softplus_backward(grad_output, x, beta, threshold):
    """PyTorch's softplus_backward, softplus's rule (SoftplusBackwardBackward0)."""
    return grad_output if x * beta > threshold else grad_output * sigmoid(x * beta)


def softplus_backward_vjp_x(grad, grad_output, x, beta, threshold):
    # PyTorch's softplus_double_backward
    z = x * beta
    return sigmoid_backward(grad * grad_output, sigmoid(z)) * (z < threshold) * beta


softplus_backward.defvjp(
    lambda grad, x, beta, threshold: softplus_backward(grad, x, beta, threshold),
    softplus_backward_vjp_x)


@unary("relu", refuse_bool=(RuntimeError, "Boolean inputs not supported for relu"),
       variants="function method inplace inplace_function")
def relu(x):
    return 0 if x <= 0 else x  # (NaN stays NaN, as in PyTorch)


relu.defvjp(lambda grad, result: threshold_backward(grad, result, 0))


@binary("threshold_backward", dtype="same")
def threshold_backward(grad_output, x, threshold):
    """PyTorch's threshold_backward, relu's rule (ThresholdBackwardBackward0): a function of
    ``x``, so relu'' is 0, not undefined."""
    # (x <= threshold, not x > threshold: at NaN the gradient passes, as PyTorch's)
    return 0 if x <= threshold else grad_output


# a gradient that is PyTorch's zeros_like(grad) (rounding's, sign's; x's in the backward ops
# of piecewise-linear activations): marked constant where it is used, so not recorded
def _zero_gradient(grad):
    return abs(sign(grad)) * 0


threshold_backward.defvjp(lambda grad, x, threshold: threshold_backward(grad, x, threshold),
                          _zero_gradient)
threshold_backward.constant_gradient = (False, True)


@unary("log10", dtype="float", variants="function method inplace inplace_function")
def log10(x):
    if x > 0:
        return math.log10(x)
    if x == 0:
        return -math.inf
    return math.nan


log10.defvjp(lambda grad, x: grad / (x * 2.302585092994046))  # (ln 10)


@unary("log2", dtype="float", variants="function method inplace inplace_function")
def log2(x):
    if x > 0:
        return math.log2(x)
    if x == 0:
        return -math.inf
    return math.nan


log2.defvjp(lambda grad, x: grad / (x * 0.6931471805599453))  # (ln 2)


@unary("exp2", dtype="float", variants="function method inplace inplace_function")
def exp2(x):
    return 2.0**x


exp2.defvjp(lambda grad, result: grad * result * 0.6931471805599453)
# (PyTorch's grad * result * M_LN2 multiplies by a Scalar last: MulBackward1)
exp2.recorded_vjps = [lambda grad, result: mul_scalar(grad * result, 0.6931471805599453)]


@unary("erf", dtype="float", variants="function method inplace inplace_function")
def erf(x):
    return math.erf(x)


erf.defvjp(lambda grad, x: grad * 1.1283791670955126 * exp(-x * x))  # 2 / sqrt(pi)


# ---------------------------------------------------------------- activations (nn.functional)
# declared without public variants: nn/functional.py spells them with PyTorch's ``inplace=``


@unary("leaky_relu", node="LeakyReluBackward0", dtype="float")
def leaky_relu(x, negative_slope=0.01):
    return x if x > 0 else x * negative_slope


leaky_relu.defvjp(lambda grad, x, negative_slope: leaky_relu_backward(grad, x, negative_slope))


@binary("leaky_relu_backward", dtype="float")
def leaky_relu_backward(grad_output, x, negative_slope):
    """PyTorch's leaky_relu_backward, leaky_relu's rule (LeakyReluBackwardBackward0; see
    threshold_backward)."""
    return grad_output if x > 0 else grad_output * negative_slope


leaky_relu_backward.defvjp(
    lambda grad, x, negative_slope: leaky_relu_backward(grad, x, negative_slope),
    _zero_gradient)
leaky_relu_backward.constant_gradient = (False, True)  # (x's: PyTorch's zeros_like(grad))


@unary("elu", dtype="float")
def elu(x, alpha=1.0, scale=1.0, input_scale=1.0):
    """PyTorch's elu: ``scale * x`` where ``x > 0``, else
    ``scale * alpha * (exp(input_scale * x) - 1)`` (selu is elu with fixed alpha and scale)."""
    return x * scale if x > 0 else alpha * scale * math.expm1(x * input_scale)


@elu.defvjp
def elu_vjp(grad, x, alpha, scale, input_scale):
    return elu_backward(grad, x, alpha, scale, input_scale, 0)


@unary("celu", dtype="float")
def celu(x, alpha):
    """elu with ``input_scale = 1 / alpha``, under a node of its own (CeluBackward0)."""
    return elu(x, alpha, 1.0, 1.0 / alpha)


celu.defvjp(lambda grad, x, alpha: elu_backward(grad, x, alpha, 1, 1 / alpha, 0))


@binary("elu_backward", dtype="float")
def elu_backward(grad_output, x, alpha, scale, input_scale, is_result):
    """PyTorch's elu_backward, the rule of elu, celu and their in-place forms
    (EluBackwardBackward0): ``x`` is the input, or the result where ``is_result`` is nonzero.
    A NaN ``x`` takes the positive side's slope, as PyTorch's ``x <= 0`` test sends it there."""
    if x <= 0:
        if is_result != 0:
            return grad_output * input_scale * (x + alpha * scale)
        return grad_output * alpha * scale * input_scale * math.exp(x * input_scale)
    return grad_output * scale


def elu_backward_vjp_x(grad, grad_output, x, alpha, scale, input_scale, is_result):
    # PyTorch's elu_double_backward: zero at x == 0 (x < 0, not x <= 0), by a mask it
    # multiplies with, so a NaN product (0 * inf) stays NaN where the mask is 0
    g = grad * grad_output * input_scale
    return where(is_result != 0, g, elu_backward(g, x, alpha, scale, input_scale, 0)) * (x < 0)


def elu_backward_vjp_grad_output(grad, x, alpha, scale, input_scale, is_result):
    return elu_backward(grad, x, alpha, scale, input_scale, is_result)


elu_backward.defvjp(elu_backward_vjp_grad_output, elu_backward_vjp_x)


# PyTorch's in-place spellings of these activations record another node (EluBackward1, ...)
# whose rule reads the result (or, threshold_'s, the input before the write: ops/inplace.py
# copies it): an op each, whose forward is its out-of-place op's


@unary("elu_", node="EluBackward1", dtype="float")
def elu_(x, alpha, scale, input_scale):
    return elu(x, alpha, scale, input_scale)


@elu_.defvjp
def elu__vjp(grad, result, alpha, scale, input_scale):
    return elu_backward(grad, result, alpha, scale, input_scale, 1)


@unary("celu_", node="CeluBackward1", dtype="float")
def celu_(x, alpha):
    return celu(x, alpha)


celu_.defvjp(lambda grad, result, alpha: elu_backward(grad, result, alpha, 1, 1 / alpha, 1))


@unary("leaky_relu_", node="LeakyReluBackward1", dtype="float")
def leaky_relu_(x, negative_slope):
    """leaky_relu_'s op (for a slope >= 0: the result has the input's sign)."""
    return leaky_relu(x, negative_slope)


@leaky_relu_.defvjp
def leaky_relu__vjp(grad, result, negative_slope):
    return leaky_relu_backward(grad, result, negative_slope)


@unary("threshold", refuse_bool=_no_kernel("threshold_cpu"))
def threshold(x, limit, value):
    """``value`` where ``x <= limit`` (PyTorch's ``threshold``), else ``x`` (NaN stays NaN)."""
    return value if x <= limit else x


threshold.defvjp(lambda grad, x, limit: threshold_backward(grad, x, limit))


@unary("threshold_", node="ThresholdBackward1", refuse_bool=_no_kernel("threshold_cpu"))
def threshold_(x, limit, value):
    return threshold(x, limit, value)


threshold_.defvjp(lambda grad, x, limit: threshold_backward(grad, x, limit))


@unary("hardtanh", refuse_bool=(RuntimeError, "Bool inputs not supported for hardtanh"))
def hardtanh(x, min_val, max_val):
    """``x`` clamped to ``[min_val, max_val]``, as by clamp (PyTorch's hardtanh is clamp, with
    its own gradient); relu6 is hardtanh(x, 0, 6)."""
    return clamp(x, min_val, max_val)


hardtanh.defvjp(lambda grad, x, min_val, max_val: hardtanh_backward(grad, x, min_val, max_val))


@binary("hardtanh_backward")
def hardtanh_backward(grad_output, x, min_val, max_val):
    """PyTorch's hardtanh_backward (HardtanhBackwardBackward0): zero at the bounds too, unlike
    clamp's gradient; at NaN the gradient passes."""
    if x <= min_val:
        return 0
    if x >= max_val:
        return 0
    return grad_output


hardtanh_backward.defvjp(
    lambda grad, x, min_val, max_val: hardtanh_backward(grad, x, min_val, max_val),
    _zero_gradient)
hardtanh_backward.constant_gradient = (False, True)


@unary("hardsigmoid", dtype="float")
def hardsigmoid(x):
    """``relu6(x + 3) / 6``."""
    return hardtanh(x + 3, 0, 6) / 6


# PyTorch's hardsigmoid_backward: grad times 1/6 strictly inside (-3, 3), 1/6 rounded to float
# as PyTorch's constant is, whatever the dtype. PyTorch has no derivative for it: under
# create_graph the gradient's node is NotImplemented, and a second backward raises
@hardsigmoid.defvjp
def hardsigmoid_vjp(grad, x):
    return where(x > -3, where(x < 3, grad * 0.1666666716337204, 0), 0)


hardsigmoid.no_second_order = "aten::hardsigmoid_backward"


@unary("hardswish", dtype="float")
def hardswish(x):
    """``x * relu6(x + 3) / 6``."""
    return x * hardtanh(x + 3, 0, 6) / 6


hardswish.defvjp(lambda grad, x: hardswish_backward(grad, x))


@binary("hardswish_backward", dtype="float")
def hardswish_backward(grad_output, x):
    """PyTorch's hardswish_backward (HardswishBackwardBackward0): 0 up to -3 included, 1 from
    3 included, ``x / 3 + 1/2`` between."""
    if x <= -3:
        return 0
    if x < 3:
        return grad_output * (x / 3 + 0.5)
    return grad_output


def hardswish_backward_vjp_x(grad, grad_output, x):
    # PyTorch's: grad * grad_output / 3 strictly inside (-3, 3)
    return where(x > -3, where(x < 3, grad * grad_output / 3, 0), 0)


hardswish_backward.defvjp(lambda grad, x: hardswish_backward(grad, x), hardswish_backward_vjp_x)


@unary("log_sigmoid", dtype="float")
def log_sigmoid(x):
    """``log(sigmoid(x))`` as ``min(x, 0) - log1p(exp(-|x|))``: exp never overflows (and,
    as one expression without a branch, the loop vectorizes)."""
    return min(x, 0) - math.log1p(math.exp(-abs(x)))


log_sigmoid.defvjp(lambda grad, x: log_sigmoid_backward(grad, x))


@binary("log_sigmoid_backward", dtype="float")
def log_sigmoid_backward(grad_output, x):
    """PyTorch's log_sigmoid_backward (LogSigmoidBackwardBackward0): ``grad * sigmoid(-x)``."""
    return grad_output * sigmoid(-x)


def log_sigmoid_backward_vjp_x(grad, grad_output, x):
    # PyTorch's log_sigmoid_double_backward
    s = sigmoid(x)
    return grad * grad_output * (s - 1) * s


log_sigmoid_backward.defvjp(lambda grad, x: log_sigmoid_backward(grad, x),
                            log_sigmoid_backward_vjp_x)


@binary("bce_with_logits_elementwise")
def bce_with_logits_elementwise(x, target):
    """The elementwise binary cross-entropy of ``sigmoid(x)`` from the logit ``x`` (ops/loss.py
    reduces it): PyTorch's ``(1 - target) x - log_sigmoid(x)``."""
    return (1 - target) * x - log_sigmoid(x)


def bce_with_logits_vjp_x(grad, x, target):
    return (sigmoid(x) - target) * grad


bce_with_logits_elementwise.defvjp(bce_with_logits_vjp_x, lambda grad, x: -x * grad)


@binary("binary_cross_entropy_elementwise")
def binary_cross_entropy_elementwise(x, target):
    """PyTorch's binary cross-entropy of probabilities ``x`` (ops/loss.py weights and reduces
    it): ``(target - 1) max(log(1 - x), -100) - target max(log(x), -100)``."""
    log_1mx = math.log1p(-x)
    log_x = math.log(x)
    return ((target - 1) * (-100.0 if log_1mx < -100 else log_1mx)
            - target * (-100.0 if log_x < -100 else log_x))


def binary_cross_entropy_vjp_x(grad, x, target):
    return binary_cross_entropy_backward(grad, x, target, 1.0, 1.0)


def binary_cross_entropy_vjp_target(grad, x, target):
    # PyTorch's binary_cross_entropy_target_backward: -logit(x) times the gradient
    return -log(x / (1 - x)) * grad


binary_cross_entropy_elementwise.defvjp(binary_cross_entropy_vjp_x,
                                        binary_cross_entropy_vjp_target)


@binary("binary_cross_entropy_backward", node="BinaryCrossEntropyBackwardBackward0", n_in=4)
def binary_cross_entropy_backward(grad_output, x, target, weight, divisor):
    """PyTorch's binary_cross_entropy_backward: ``grad_output (x - target) / max((1 - x) x,
    EPSILON)``, times the weight, over ``divisor`` (the mean's element count, else 1)."""
    # (PyTorch's EPSILON is the float 1e-12f, also in double kernels)
    d = (1 - x) * x
    return (grad_output * (x - target) / (9.999999960041972e-13 if d < 9.999999960041972e-13
                                          else d) * weight / divisor)


# its derivatives, PyTorch's binary_cross_entropy_double_backward* (the weight has none)
def binary_cross_entropy_backward_vjp_grad_output(grad, grad_output, x, target, weight,
                                                  divisor):
    return (x - target) / ((x + 1e-12) * (1 - x + 1e-12)) * grad * weight / divisor


def binary_cross_entropy_backward_vjp_x(grad, grad_output, x, target, weight, divisor):
    a = x + 1e-12
    b = 1 - x + 1e-12
    return ((x * x - 2 * x * target + target) / (a * a * (b * b)) * (grad * grad_output)
            * weight / divisor)


def binary_cross_entropy_backward_vjp_target(grad, grad_output, x, target, weight, divisor):
    d = (1 - x) * x
    return -grad * grad_output * weight / where(d < 1e-12, 1e-12, d) / divisor


binary_cross_entropy_backward.defvjp(binary_cross_entropy_backward_vjp_grad_output,
                                     binary_cross_entropy_backward_vjp_x,
                                     binary_cross_entropy_backward_vjp_target, None)


@unary("mish", dtype="float")
def mish(x):
    """``x * tanh(softplus(x))``."""
    return x * math.tanh(math.log1p(math.exp(x)))


@mish.defvjp
def mish_vjp(grad, x):
    # PyTorch's mish_backward, composed of ops (its second derivative records MulBackward0)
    t = tanh(log1p(exp(x)))
    return grad * (t + x * sigmoid(x) * (1 - t * t))


@unary("hardshrink", dtype="float")
def hardshrink(x, lambd):
    """0 within ``[-lambd, lambd]``, else ``x`` (NaN stays NaN)."""
    if x >= -lambd:
        if x <= lambd:
            return 0
    return x


hardshrink.defvjp(lambda grad, x, lambd: hardshrink_backward(grad, x, lambd))


@binary("hardshrink_backward", dtype="float")
def hardshrink_backward(grad_output, x, lambd):
    """PyTorch's hardshrink_backward (HardshrinkBackwardBackward0): zero within
    ``[-lambd, lambd]``, bounds included."""
    if x >= -lambd:
        if x <= lambd:
            return 0
    return grad_output


hardshrink_backward.defvjp(lambda grad, x, lambd: hardshrink_backward(grad, x, lambd),
                           _zero_gradient)
hardshrink_backward.constant_gradient = (False, True)


@unary("softshrink", dtype="float")
def softshrink(x, lambd):
    """``x`` moved ``lambd`` towards 0, and 0 within ``[-lambd, lambd]`` (NaN stays NaN)."""
    if x > lambd:
        return x - lambd
    if x < -lambd:
        return x + lambd
    return x * 0


softshrink.defvjp(lambda grad, x, lambd: softshrink_backward(grad, x, lambd))


@binary("softshrink_backward", dtype="float")
def softshrink_backward(grad_output, x, lambd):
    """PyTorch's softshrink_backward (SoftshrinkBackwardBackward0): hardshrink_backward's
    mask, under a node of its own."""
    return hardshrink_backward(grad_output, x, lambd)


softshrink_backward.defvjp(lambda grad, x, lambd: softshrink_backward(grad, x, lambd),
                           _zero_gradient)
softshrink_backward.constant_gradient = (False, True)


@binary("prelu", node="PreluKernelBackward0")
def prelu(x, weight):
    """PyTorch's _prelu_kernel: ``x`` where positive, else ``weight * x`` (nn/functional.py
    shapes ``weight`` to broadcast along the channels)."""
    return x if x > 0 else weight * x


def prelu_vjp_x(grad, x, weight):
    return prelu_backward_input(grad, x, weight)


def prelu_vjp_weight(grad, x, weight):
    return prelu_backward_weight(grad, x, weight)


prelu.defvjp(prelu_vjp_x, prelu_vjp_weight)


# PyTorch's _prelu_kernel_backward, one op per result (its node PreluKernelBackwardBackward0
# gives both). Its kernel counts x == 0 as negative, as prelu does; its double backward (the
# rules below) counts x == 0 as positive (derivatives.yaml: ``self >= 0``)


@binary("prelu_backward_input", node="PreluKernelBackwardBackward0", n_in=3)
def prelu_backward_input(grad_output, x, weight):
    """The gradient of prelu's input: ``grad_output`` where ``x > 0``, else
    ``weight * grad_output``."""
    return grad_output if x > 0 else weight * grad_output


def prelu_backward_vjp_grad_output(grad, x, weight):
    return where(x >= 0, grad, grad * weight)


def prelu_backward_vjp_weight(grad, grad_output, x):
    return where(x >= 0, 0, grad * grad_output)


prelu_backward_input.defvjp(prelu_backward_vjp_grad_output, _zero_gradient,
                            prelu_backward_vjp_weight)
prelu_backward_input.constant_gradient = (False, True, False)


@binary("prelu_backward_weight", node="PreluKernelBackwardBackward0", n_in=3)
def prelu_backward_weight(grad_output, x, weight):
    """The gradient of prelu's weight (before its sum to the weight's shape): 0 where
    ``x > 0``, else ``x * grad_output``."""
    return 0 if x > 0 else x * grad_output


def prelu_backward_weight_vjp_grad_output(grad, x):
    return where(x >= 0, 0, grad * x)


prelu_backward_weight.defvjp(prelu_backward_weight_vjp_grad_output,
                             prelu_backward_vjp_weight, _zero_gradient)
prelu_backward_weight.constant_gradient = (False, False, True)


# Smooth L1 and Huber losses: the elementwise loss (ops/loss.py reduces it) and PyTorch's
# backward kernels, whose own derivatives are its double-backward formulas (0 outside the
# quadratic part). A reduction's 1/n comes folded into ``grad_output``.


@binary("smooth_l1_elementwise")
def smooth_l1_elementwise(x, target, beta):
    """``0.5 z**2 / beta`` where ``z = |x - target| < beta``, else ``z - 0.5 beta``."""
    z = abs(x - target)
    return 0.5 * z * z / beta if z < beta else z - 0.5 * beta


def smooth_l1_vjp_x(grad, x, target, beta):
    return smooth_l1_loss_backward(grad, x, target, beta)


def smooth_l1_vjp_target(grad, x, target, beta):
    return smooth_l1_loss_backward(grad, target, x, beta)


smooth_l1_elementwise.defvjp(smooth_l1_vjp_x, smooth_l1_vjp_target)


@binary("smooth_l1_loss_backward", node="SmoothL1LossBackwardBackward0", n_in=3)
def smooth_l1_loss_backward(grad_output, x, target, beta):
    """PyTorch's smooth_l1_loss_backward: ``x - target`` clamped to [-beta, beta], over beta,
    times ``grad_output`` (a NaN difference stays NaN)."""
    d = x - target
    return -grad_output if d <= -beta else (grad_output if d >= beta else d * grad_output / beta)


# (PyTorch's smooth_l1_loss_double_backward multiplies by the mask, not a select: an infinite
# gradient outside it gives NaN)
def smooth_l1_loss_backward_vjp_x(grad, grad_output, x, target, beta):
    return grad * grad_output * where(abs(x - target) < beta, 1, 0) / beta


def smooth_l1_loss_backward_vjp_target(grad, grad_output, x, target, beta):
    return -(grad * grad_output * where(abs(x - target) < beta, 1, 0) / beta)


smooth_l1_loss_backward.defvjp(smooth_l1_vjp_x, smooth_l1_loss_backward_vjp_x,
                               smooth_l1_loss_backward_vjp_target)


@binary("huber_elementwise")
def huber_elementwise(x, target, delta):
    """``0.5 z**2`` where ``z = |x - target| < delta``, else ``delta (z - 0.5 delta)``."""
    z = abs(x - target)
    return 0.5 * z * z if z < delta else delta * (z - 0.5 * delta)


def huber_vjp_x(grad, x, target, delta):
    return huber_loss_backward(grad, x, target, delta)


def huber_vjp_target(grad, x, target, delta):
    return huber_loss_backward(grad, target, x, delta)


huber_elementwise.defvjp(huber_vjp_x, huber_vjp_target)


@binary("huber_loss_backward", node="HuberLossBackwardBackward0", n_in=3)
def huber_loss_backward(grad_output, x, target, delta):
    """PyTorch's huber_loss_backward: ``x - target`` clamped to [-delta, delta], times
    ``grad_output``."""
    d = x - target
    return (-grad_output * delta if d <= -delta
            else (grad_output * delta if d >= delta else d * grad_output))


def huber_loss_backward_vjp_x(grad, grad_output, x, target, delta):
    return grad * grad_output * where(abs(x - target) < delta, 1, 0)


def huber_loss_backward_vjp_target(grad, grad_output, x, target, delta):
    return -(grad * grad_output * where(abs(x - target) < delta, 1, 0))


huber_loss_backward.defvjp(huber_vjp_x, huber_loss_backward_vjp_x, huber_loss_backward_vjp_target)


@binary("rrelu_with_noise")
def rrelu_with_noise(x, noise):
    """rrelu: ``x * noise`` where ``x <= 0`` (the slopes drawn in training, or their mean in
    eval, come in as ``noise``)."""
    return x if x > 0 else noise * x


rrelu_with_noise.defvjp(lambda grad, x, noise: where(x > 0, grad, grad * noise), None)


@binary("rrelu_with_noise_", node="RreluWithNoiseBackward1")
def rrelu_with_noise_(x, noise):
    return x if x > 0 else noise * x  # (not a call of rrelu_with_noise: ops/derive.py reads it)


rrelu_with_noise_.defvjp(lambda grad, result, noise: where(result > 0, grad, grad * noise), None)
# (x enters these rules only through a comparison: PyTorch's backward ops are functions of x,
# so a second derivative reaches it, zeros)
rrelu_with_noise.zero_second_order = True
rrelu_with_noise.contiguous_result = True  # (PyTorch's empty_like(x, contiguous))
rrelu_with_noise_.zero_second_order = True
# (the in-place ops' results are written into their input at once: never deferred)
elu_._defers = celu_._defers = leaky_relu_._defers = threshold_._defers = False
# (PyTorch's threshold_ skips the check of a target whose elements share memory, an expanded
# view: each element is written from its own value, so the aliases agree)
threshold_.writes_overlapping = True
rrelu_with_noise_._defers = False


@unary("gelu", dtype="float")
def gelu(x):
    """``x * Phi(x)``, Phi the standard normal CDF."""
    return 0.5 * x * (1 + math.erf(x * 0.7071067811865476))


gelu.defvjp(lambda grad, x: gelu_backward(grad, x))


@binary("gelu_backward", dtype="float")
def gelu_backward(grad_output, x):
    """PyTorch's gelu_backward, gelu's rule (GeluBackwardBackward0): ``grad_output`` times
    Phi(x) + x * phi(x), phi the standard normal density (1 / sqrt(2 pi) = 0.3989...)."""
    return grad_output * (0.5 * (1 + math.erf(x * 0.7071067811865476))
                          + x * math.exp(-0.5 * x * x) * 0.3989422804014327)


def gelu_backward_vjp_x(grad, grad_output, x):
    # PyTorch's gelu_double_backward: phi(x) * (2 - x^2)
    pdf = exp(-0.5 * x * x) * 0.3989422804014327
    return grad * grad_output * (2 * pdf - x * x * pdf)


gelu_backward.defvjp(lambda grad, x: gelu_backward(grad, x), gelu_backward_vjp_x)


@unary("gelu_tanh", node="GeluBackward0", dtype="float")
def gelu_tanh(x):
    """GELU's tanh approximation: ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``."""
    return 0.5 * x * (1 + math.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


gelu_tanh.defvjp(lambda grad, x: gelu_tanh_backward(grad, x))


@binary("gelu_tanh_backward", node="GeluBackwardBackward0", dtype="float")
def gelu_tanh_backward(grad_output, x):
    """PyTorch's gelu_backward for the tanh approximation (GeluBackwardBackward0)."""
    t = math.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))
    return grad_output * (0.5 * (1 + t)
                          + 0.5 * x * (1 - t * t) * 0.7978845608028654 * (1 + 0.134145 * x * x))


def gelu_tanh_backward_vjp_x(grad, grad_output, x):
    # PyTorch's gelu_double_backward (tanh): the derivative of 0.5 x (1 + tanh(inner)),
    # product rule over f = x / 2, g = 1 - tanh^2, h = inner'
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    t = tanh(inner)
    sech = 1 / cosh(inner)
    f = 0.5 * x
    g = 1 - t * t
    h = 0.7978845608028654 * (1 + 3 * 0.044715 * x * x)
    f_prime_gh = 0.5 * g * h
    g_prime_fh = f * h * ((2 * sech) * (-sech * t) * h)
    h_prime_fg = f * g * (6 * 0.044715 * x * 0.7978845608028654)
    return grad * grad_output * (2 * f_prime_gh + g_prime_fh + h_prime_fg)


gelu_tanh_backward.defvjp(lambda grad, x: gelu_tanh_backward(grad, x), gelu_tanh_backward_vjp_x)


@unary("silu", dtype="float")
def silu(x):
    """``x * sigmoid(x)``."""
    # PyTorch's formula: below about -88 (float32) exp(-x) overflows to inf and the result
    # is -0.0 as PyTorch's; without a branch the loop vectorizes
    return x / (1 + math.exp(-x))


@silu.defvjp
def silu_vjp(grad, x):
    s = sigmoid(x)
    return grad * s * (1 + x * (1 - s))


@unary("erfc", dtype="float", variants="function method inplace inplace_function")
def erfc(x):
    return math.erfc(x)


erfc.defvjp(lambda grad, x: -grad * 1.1283791670955126 * exp(-x * x))


@unary("erfinv", dtype="float", variants="function method inplace")
def erfinv(x):
    """The inverse of erf on (-1, 1): Giles' single-precision approximation ("Approximating
    the erfinv function", 2010), then two Newton steps on erf(y) = x for full precision."""
    if x >= 1 or x <= -1:
        if x == 1:
            return math.inf
        if x == -1:
            return -math.inf
        return math.nan
    w = -math.log((1 - x) * (1 + x))
    if w < 5:
        w = w - 2.5
        p = 2.81022636e-08
        p = 3.43273939e-07 + p * w
        p = -3.5233877e-06 + p * w
        p = -4.39150654e-06 + p * w
        p = 0.00021858087 + p * w
        p = -0.00125372503 + p * w
        p = -0.00417768164 + p * w
        p = 0.246640727 + p * w
        p = 1.50140941 + p * w
    else:
        w = math.sqrt(w) - 3
        p = -0.000200214257
        p = 0.000100950558 + p * w
        p = 0.00134934322 + p * w
        p = -0.00367342844 + p * w
        p = 0.00573950773 + p * w
        p = -0.0076224613 + p * w
        p = 0.00943887047 + p * w
        p = 1.00167406 + p * w
        p = 2.83297682 + p * w
    y = p * x
    y = y - (math.erf(y) - x) / (1.1283791670955126 * math.exp(-y * y))  # (2 / sqrt(pi))
    return y - (math.erf(y) - x) / (1.1283791670955126 * math.exp(-y * y))


# d erfinv(x) / dx = sqrt(pi) / 2 * exp(erfinv(x)^2)
erfinv.defvjp(lambda grad, result: grad * 0.886226925452758 * exp(result * result))


@unary("atan", dtype="float", variants="function method inplace inplace_function", aliases="arctan")
def atan(x):
    return math.atan(x)


atan.defvjp(lambda grad, x: grad / (1 + x * x))


# (asin, acos, acosh and atanh answer NaN outside their domain, where Python's math raises)
@unary("asin", dtype="float", variants="function method inplace inplace_function", aliases="arcsin")
def asin(x):
    return math.asin(x) if -1 <= x <= 1 else math.nan


asin.defvjp(lambda grad, x: grad * rsqrt(1 - x * x))


@unary("acos", dtype="float", variants="function method inplace inplace_function", aliases="arccos")
def acos(x):
    return math.acos(x) if -1 <= x <= 1 else math.nan


acos.defvjp(lambda grad, x: -grad * rsqrt(1 - x * x))


@unary("sinh", dtype="float", variants="function method inplace inplace_function")
def sinh(x):
    return math.sinh(x)


sinh.defvjp(lambda grad, x: grad * cosh(x))


@unary("cosh", dtype="float", variants="function method inplace inplace_function")
def cosh(x):
    return math.cosh(x)


cosh.defvjp(lambda grad, x: grad * sinh(x))


# (its in-place variant is PyTorch's, without a derivative: ops/__init__.py)
@unary("asinh", dtype="float", variants="function method", aliases="arcsinh")
def asinh(x):
    return math.asinh(x)


asinh.defvjp(lambda grad, x: grad * rsqrt(x * x + 1))


# (its in-place variant is PyTorch's, without a derivative: ops/__init__.py)
@unary("acosh", dtype="float", variants="function method", aliases="arccosh")
def acosh(x):
    return math.acosh(x) if x >= 1 else math.nan


acosh.defvjp(lambda grad, x: grad * rsqrt(x * x - 1))


# (its in-place variant is PyTorch's, without a derivative: ops/__init__.py)
@unary("atanh", dtype="float", variants="function method", aliases="arctanh")
def atanh(x):
    if -1 < x < 1:
        return math.atanh(x)
    if x == 1:
        return math.inf
    if x == -1:
        return -math.inf
    return math.nan


atanh.defvjp(lambda grad, x: grad / (1 - x * x))


@unary("logit", dtype="float")
def logit(x, eps):
    """``log(x / (1 - x))``, ``x`` clamped to ``[eps, 1 - eps]`` when ``eps >= 0`` (a negative
    ``eps`` stands for PyTorch's ``eps=None``: no clamp)."""
    if eps >= 0:
        if x < eps:
            x = eps
        if x > 1 - eps:
            x = 1 - eps
    z = x / (1 - x)
    if z > 0:
        return math.log(z)
    if z == 0:
        return -math.inf
    return math.nan


@logit.defvjp
def logit_vjp(grad, x, eps):
    # PyTorch's logit_backward: zero where the clamp holds x, NaN outside [0, 1] without one
    # (a NaN x is outside neither: its gradient is NaN)
    lo = where(eps < 0, 0, eps)
    outside = logical_or(x < lo, x > 1 - lo)
    return where(outside, where(eps < 0, math.nan, 0), grad / (x * (1 - x)))


# ---------------------------------------------------------------- rounding
# (float inputs only: ops/__init__.py returns an integer tensor copied, as PyTorch does. The
# truncation goes through int(), as Numba's math.floor returns an integer; |x| >= 2 ** 52 is
# integral already, and a zero result keeps x's sign, as C's floor and ceil do)


@unary("trunc")
def trunc(x):
    if not (-4503599627370496.0 < x < 4503599627370496.0):  # (also inf and NaN)
        return x
    t = int(x)
    if t == 0:
        return x * 0
    return x - x + _c(t)  # (x's dtype: an int would make the sum float64 in a float32 kernel)


@unary("floor")
def floor(x):
    t = trunc(x)
    return t - 1 if t > x else t


@unary("ceil")
def ceil(x):
    t = trunc(x)
    return t + 1 if t < x else t


@unary("round")
def round(x):
    # half to even, as PyTorch's (and C's nearbyint)
    f = floor(x)
    d = x - f
    r = f + 1 if d > 0.5 or (d == 0.5 and f % 2 != 0) else f
    return x * 0 if r == 0 else r


@unary("round_decimals", node="RoundBackward1")
def round_decimals(x, decimals):
    if decimals < 0:
        scale = 10.0 ** -decimals
        return round(x / scale) * scale
    scale = 10.0**decimals
    return round(x * scale) / scale


# rounding is piecewise constant: PyTorch's gradient is zeros (as sign's)
for _op in (trunc, floor, ceil, round, round_decimals):
    _op.defvjp(_zero_gradient)
    _op.constant_gradient = True
del _op


@unary("frac")
def frac(x):
    return x - trunc(x)


frac.defvjp(lambda grad: grad)


@unary("pow", node="PowBackward0")
def pow(x, exponent):
    """``x ** exponent`` for a scalar exponent."""
    # PyTorch computes exponents 0.5 and -0.5 as sqrt and rsqrt: NaN below 0, -inf included
    # (C's pow gives inf and 0 there). Tested as 2 * exponent, since literals take the
    # kernel's dtype: in an integer kernel 0.5 would be 0
    if exponent + exponent == 1:
        return math.sqrt(x) if x >= 0 else math.nan
    if exponent + exponent == -1:
        return 1 / math.sqrt(x) if x >= 0 else math.nan
    return x**exponent


@pow.defvjp
def pow_vjp(grad, x, exponent):
    # d/dx x**0 is 0 everywhere, including x == 0 where the formula gives 0 * inf; else
    # PyTorch's pow_backward, grad * (exponent * x ** (exponent - 1)): MulBackward0 on Tensors
    # (where the parameter is a 0-d tensor, read here as a bool)
    if exponent == 0:
        return abs(sign(grad)) * 0  # (zeros of grad's shape and dtype, as sign's rule)
    return grad * (exponent * pow(x, exponent - 1))


pow.constant_gradient = lambda exponent: exponent == 0  # (PyTorch's zeros_like for x ** 0)


@unary("pow_bool_exponent", node="PowBackward0")
def pow_bool_exponent(x, exponent):
    """``x ** exponent`` for a Python bool exponent (as 0 or 1)."""
    return pow(x, exponent)


# PyTorch's pow_backward takes its zeros shortcut for an exponent that equals 0, which a bool
# Scalar never does: the gradient of x ** False is grad * (0 * x ** -1), NaN at x == 0
pow_bool_exponent.defvjp(lambda grad, x, exponent: grad * (exponent * pow(x, exponent - 1)))


@unary("rpow", node="PowBackward2")
def rpow(x, base):
    """``base ** x`` for a scalar base."""
    if x < 0 and base == 0 and 0.5 == 0:  # (as pow_tensor: PyTorch's integer 0 ** -n is 0)
        return 0
    return base**x


@rpow.defvjp
def rpow_vjp(grad, x, result, base):
    # base == 0: PyTorch takes the derivative of 0 ** x as 0 for x >= 0, where log(0) would
    # give nan; grad multiplies it, so a NaN or infinite gradient still gives NaN. (log's
    # argument is made a tensor through sign(x), which is finite: 0 * inf is nan)
    return grad * where(logical_and(base == 0, x >= 0), 0, result * log(base + 0 * sign(x)))


rpow.always_saves = ("x", "result")  # (PowBackward2 saves the exponent and the result)
rpow.contiguous_result = True  # (PyTorch's pow(Scalar, Tensor) makes its result so)
# (PyTorch's log_sigmoid_forward and rrelu_with_noise make theirs so too: seed 116020)
log_sigmoid.contiguous_result = True


@unary("rsub", node="RsubBackward1", refuse_bool=(RuntimeError, ERR_SUB_BOOL))
def rsub(x, other):
    """``other - x`` for a scalar ``other``."""
    return other - x


rsub.defvjp(lambda grad: -grad)


@unary("clamp", node="ClampBackward1")
def clamp(x, min, max):
    if x != x:
        return x
    if min != min:  # (a NaN bound gives NaN, as PyTorch's)
        return min
    if max != max:
        return max
    if x < min:
        x = min
    if x > max:
        x = max
    return x


@clamp.defvjp
def clamp_vjp(grad, x, min, max):
    # the gradient passes where min <= x <= max, boundaries included (as in PyTorch)
    return where(x >= min, where(x <= max, grad, 0), 0)


@unary("logical_not", dtype="bool", variants="function method inplace")
def logical_not(x):
    return not x


# ================================================================ binary


@binary("add")
def add(x, y):
    return x + y


add.defvjp(lambda grad: grad, lambda grad: grad)


@binary("sub", refuse_bool=(RuntimeError, ERR_SUB_BOOLS),
        refuse_bool_operand=(RuntimeError, ERR_SUB_BOOL))
def sub(x, y):
    return x - y


sub.defvjp(lambda grad: grad, lambda grad: -grad)


@binary("mul", variants="function method inplace", aliases="multiply")
def mul(x, y):
    return x * y


mul.defvjp(lambda grad, y: grad * y, lambda grad, x: grad * x)


@binary("div", dtype="float")
def div(x, y):
    return x / y


# (y's rule is PyTorch's form, -grad * ((x / y) / y): y * y would overflow or underflow first,
# and at y = inf its derivative is -0, not nan)
div.defvjp(lambda grad, y: grad / y, lambda grad, x, y: -grad * ((x / y) / y))


@binary("div_mode", node="DivBackward2", dtype="float")
def div_mode(x, y):
    """``div(x, y, rounding_mode=None)``: PyTorch's div.Tensor_mode overload, the same
    quotient under its own node."""
    return x / y


div_mode.defvjp(lambda grad, y: grad / y, lambda grad, x, y: -grad * ((x / y) / y))


@unary("mul_scalar", node="MulBackward1")
def mul_scalar(x, other):
    """``x * other`` for a scalar ``other`` as PyTorch's own compositions multiply (its
    mul.Scalar: MulBackward1, where Python's ``x * 0.5`` is MulBackward0)."""
    return x * other


mul_scalar.defvjp(lambda grad, other: grad * other)
# (recorded, the factor stays a Scalar, as PyTorch's mul.Scalar formula multiplies by it)
mul_scalar.recorded_vjps = [lambda grad, other: mul_scalar(grad, other.item())]


@unary("div_scalar", node="DivBackward1", dtype="float")
def div_scalar(x, other):
    """``x / other`` for a scalar ``other``, as PyTorch's formulas divide (mean's gradient)."""
    return x / other


div_scalar.defvjp(lambda grad, other: grad / other)
div_scalar.recorded_vjps = [lambda grad, other: div_scalar(grad, other.item())]


@binary("pow_tensor", node="PowBackward1", refuse_bool=_no_kernel("pow"))
def pow_tensor(x, y):
    # PyTorch's integer pow: a negative exponent of a zero base gives 0, where x**y gives
    # INT_MIN (C's inf). Only an integer kernel has 0.5 == 0 (literals take its dtype); a
    # float's zero base keeps its inf
    if y < 0 and x == 0 and 0.5 == 0:
        return 0
    return x**y


def pow_tensor_vjp_x(grad, x, y):
    return where(y == 0, 0, grad * y * x ** (y - 1))


def pow_tensor_vjp_y(grad, x, y, result):
    # at x == 0 with y >= 0 PyTorch takes the derivative wrt the exponent as 0 (0 ** y is flat
    # there); grad multiplies it, so a NaN or infinite gradient still gives NaN
    return grad * where(logical_and(x == 0, y >= 0), 0, result * log(x))


pow_tensor.defvjp(pow_tensor_vjp_x, pow_tensor_vjp_y)
pow_tensor.always_saves = ("x", "y", "result")


def _pow_tensor_backward(node, grads, general=pow_tensor.backward_node):
    # PyTorch's pow_backward_self computes ``exponent - 1``, which refuses a bool exponent:
    # the backward of x ** bool_tensor raises (the forward runs)
    dtypes = node.ctx.dtypes
    if dtypes is not None and dtypes[1] is D.bool_:
        raise RuntimeError(ERR_SUB_BOOL)
    return general(node, grads)


pow_tensor.backward_node = _pow_tensor_backward


@binary("remainder", node="RemainderBackward1", refuse_bool=_no_kernel("remainder_cpu"))
def remainder(x, y):
    # Python's %, as PyTorch's remainder: the result takes the divisor's sign
    return x % y


# (y's: PyTorch's -grad * x.div(y, rounding_mode="floor"), whose own derivative is zero)
remainder.defvjp(lambda grad: grad, lambda grad, x, y: -grad * div_floor(x, y))


@unary("remainder_scalar", node="RemainderBackward0", refuse_bool=_no_kernel("remainder_cpu"))
def remainder_scalar(x, other):
    """``x % other`` for a scalar ``other``."""
    return x % other


remainder_scalar.defvjp(lambda grad: grad)


@unary("remainder_of_number", node="NotImplemented", refuse_bool=_no_kernel("remainder_cpu"))
def remainder_of_number(x, number):
    """``number % x`` (PyTorch's remainder.Scalar_Tensor, which has no derivative)."""
    return number % x


remainder_of_number.defvjp(None)
remainder_of_number.derivative_missing = "aten::remainder"  # (PyTorch records NotImplemented)


@binary("fmod", node="FmodBackward1", refuse_bool=_no_kernel("fmod_cpu"))
def fmod(x, y):
    # C's fmod: the result takes the dividend's sign. (Python's % of the magnitudes is exact;
    # a zero result keeps x's sign)
    r = abs(x) % abs(y)
    if r == 0:
        return x * 0
    return -r if x < 0 else r


# (y's: PyTorch's -grad * x.div(y, rounding_mode="trunc"), whose own derivative is zero: no
# x / y recorded under create_graph, whose derivative by y is NaN at an infinite y)
fmod.defvjp(lambda grad: grad, lambda grad, x, y: -grad * div_trunc(x, y))


@unary("fmod_scalar", node="FmodBackward0", refuse_bool=_no_kernel("fmod_cpu"))
def fmod_scalar(x, other):
    """``fmod(x, other)`` for a scalar ``other``."""
    return fmod(x, other)


fmod_scalar.defvjp(lambda grad: grad)


@binary("div_trunc", node="DivBackward2")
def div_trunc(x, y):
    """``div(x, y, rounding_mode="trunc")`` of floats, as PyTorch's: ``trunc(x / y)``."""
    return trunc(x / y)


@binary("div_floor", node="DivBackward2", refuse_bool=_no_kernel("div_floor_cpu"))
def div_floor(x, y):
    """``div(x, y, rounding_mode="floor")``: Python's ``//`` (whose float algorithm is
    PyTorch's); a float division by zero gives ``x / y``, as in PyTorch."""
    if y == 0:
        return x / y
    return x // y


def _zero_gradient_x(grad, y):
    # (PyTorch's formula for x reads y, so y is saved when x needs a gradient: an in-place
    # change of it before backward is the version error)
    return abs(sign(grad)) * 0


def _zero_gradient_y(grad, x):
    return abs(sign(grad)) * 0


for _op in (div_trunc, div_floor):
    _op.defvjp(_zero_gradient_x, _zero_gradient_y)
    _op.constant_gradient = True
del _op


@binary("add_alpha", node="AddBackward0")
def add_alpha(x, y, alpha):
    """``x + alpha * y``."""
    return x + alpha * y


add_alpha.defvjp(lambda grad: grad, lambda grad, alpha: grad * alpha)


@binary("sub_alpha", node="SubBackward0", refuse_bool=(RuntimeError, ERR_SUB_BOOLS),
        refuse_bool_operand=(RuntimeError, ERR_SUB_BOOL))
def sub_alpha(x, y, alpha):
    """``x - alpha * y``."""
    return x - alpha * y


sub_alpha.defvjp(lambda grad: grad, lambda grad, alpha: -grad * alpha)


@binary("rsub_alpha", node="RsubBackward0", refuse_bool=(RuntimeError, ERR_SUB_BOOLS),
        refuse_bool_operand=(RuntimeError, ERR_SUB_BOOL))
def rsub_alpha(x, y, alpha):
    """``y - alpha * x`` (``torch.rsub``)."""
    return y - alpha * x


rsub_alpha.defvjp(lambda grad, alpha: -grad * alpha, lambda grad: grad)
# (a number ``y`` is PyTorch's Scalar overload)
rsub_alpha.scalar_nodes = ("RsubBackward0", "RsubBackward1")


@binary("atan2", dtype="float")
def atan2(x, y):
    return math.atan2(x, y)


# PyTorch's atan2_backward: grad * other * recip and grad * -self * recip, with recip the
# reciprocal of self^2 + other^2 taken as 0 where that is 0 (the origin, or an underflow):
# a gradient of 0 there, not 0 / 0


def atan2_vjp_x(grad, x, y):
    d = x * x + y * y
    return grad * y * where(d == 0, 0, 1 / d)


def atan2_vjp_y(grad, x, y):
    d = x * x + y * y
    return grad * -x * where(d == 0, 0, 1 / d)


atan2.defvjp(atan2_vjp_x, atan2_vjp_y)
atan2.bool_operand_vjp = {1: (("x",), (RuntimeError, ERR_NEG_BOOL))}


def _ldexp_check(x, y):
    # (PyTorch's kernel for a floating input dispatches on the exponent's dtype, bool not
    # among them; an integral input goes through mul and pow, which take a bool exponent)
    if x.dtype.is_floating_point and y.dtype is D.bool_:
        raise NotImplementedError('"ldexp_cpu_exp" not implemented for \'Bool\'')


@binary("ldexp", dtype="float", variants="function method inplace inplace_function",
        tensors_only=True, check=_ldexp_check)
def ldexp(x, y):
    """``x * 2 ** y``."""
    return x * exp2(y)


def ldexp_vjp_x(grad, y):
    return grad * exp2(y)


def ldexp_vjp_y(grad, result):
    return grad * result * 0.6931471805599453  # (log(2))


ldexp.defvjp(ldexp_vjp_x, ldexp_vjp_y)
# (PyTorch's grad * result * M_LN2 for the exponent multiplies by a Scalar last: MulBackward1)
ldexp.recorded_vjps = [None, lambda grad, result: mul_scalar(grad * result, 0.6931471805599453)]
ldexp.always_saves = ("y", "result")  # (PyTorch's LdexpBackward0 saves other and result)


@binary("nextafter")
def nextafter(x, y):
    """The next number of ``x``'s dtype after ``x`` towards ``y``."""
    return math.nextafter(x, y)  # (Numba's, CUDA's too, in the kernel's dtype: nextafterf)


# (as PyTorch's: x's gradient passes where the result moved away from x, y's is zeros)
nextafter.defvjp(lambda grad, x, y: where(x == y, 0, grad), _zero_gradient)
nextafter.constant_gradient = (False, True)


@binary("hypot")
def hypot(x, y):
    return math.hypot(x, y)


def hypot_vjp_x(grad, x, result):
    return grad * x / result


def hypot_vjp_y(grad, y, result):
    return grad * y / result


hypot.defvjp(hypot_vjp_x, hypot_vjp_y)


@binary("lerp")
def lerp(x, y, weight):
    """``x + weight * (y - x)`` for a scalar ``weight`` (PyTorch's two-sided formula, exact
    at both ends; the first side where ``|weight| < 0.5``, as its is_lerp_weight_small, so an
    infinite weight of either sign takes the second)."""
    if abs(weight) < 0.5:
        return x + weight * (y - x)
    return y - (y - x) * (1 - weight)


def lerp_vjp_x(grad, weight):
    return grad * (1 - weight)


def lerp_vjp_y(grad, weight):
    return grad * weight


lerp.defvjp(lerp_vjp_x, lerp_vjp_y)
# (recorded: PyTorch's lerp.Scalar formulas multiply by a Scalar, MulBackward1)
lerp.recorded_vjps = [lambda grad, weight: mul_scalar(grad, 1 - weight.item()),
                      lambda grad, weight: mul_scalar(grad, weight.item())]


@binary("lerp_tensor", node="LerpBackward1", n_in=3)
def lerp_tensor(x, y, weight):
    """``lerp`` with a tensor ``weight``."""
    if abs(weight) < 0.5:
        return x + weight * (y - x)
    return y - (y - x) * (1 - weight)


def lerp_vjp_weight(grad, x, y):
    return grad * (y - x)


lerp_tensor.defvjp(lerp_vjp_x, lerp_vjp_y, lerp_vjp_weight)


@binary("floor_divide", node="NotImplemented", refuse_bool=_no_kernel("div_floor_cpu"))
def floor_divide(x, y):
    return x // y


floor_divide.defvjp(None, None)
floor_divide.derivative_missing = "aten::floor_divide"  # (PyTorch records NotImplemented)


@binary("maximum")
def maximum(x, y):
    if x != x:
        return x
    if y != y:
        return y
    return x if x >= y else y


def maximum_vjp_x(grad, x, y):
    # PyTorch's formula: ties share the gradient equally; where either is NaN (no order), both
    # inputs get the whole gradient (MaskedFillBackward0 under create_graph)
    return masked_fill_scalar(where(x == y, grad / 2, grad), x < y, 0)


def maximum_vjp_y(grad, x, y):
    return masked_fill_scalar(where(x == y, grad / 2, grad), x > y, 0)


maximum.defvjp(maximum_vjp_x, maximum_vjp_y)


@binary("minimum")
def minimum(x, y):
    if x != x:
        return x
    if y != y:
        return y
    return x if x <= y else y


def minimum_vjp_x(grad, x, y):
    return masked_fill_scalar(where(x == y, grad / 2, grad), x > y, 0)


def minimum_vjp_y(grad, x, y):
    return masked_fill_scalar(where(x == y, grad / 2, grad), x < y, 0)


minimum.defvjp(minimum_vjp_x, minimum_vjp_y)


@binary("fmax")
def fmax(x, y):
    """``maximum`` ignoring NaN: the other operand where one is NaN."""
    if x != x:
        return y
    if y != y:
        return x
    return x if x >= y else y


# (PyTorch's formulas: x's gradient where x >= y or y is NaN, y's everywhere else)
def fmax_vjp_x(grad, x, y):
    return masked_fill_scalar(grad, logical_not(logical_or(x >= y, y != y)), 0)


def fmax_vjp_y(grad, x, y):
    return masked_fill_scalar(grad, logical_or(x >= y, y != y), 0)


fmax.defvjp(fmax_vjp_x, fmax_vjp_y)


@binary("fmin")
def fmin(x, y):
    """``minimum`` ignoring NaN: the other operand where one is NaN."""
    if x != x:
        return y
    if y != y:
        return x
    return x if x <= y else y


def fmin_vjp_x(grad, x, y):
    return masked_fill_scalar(grad, logical_not(logical_or(x <= y, y != y)), 0)


def fmin_vjp_y(grad, x, y):
    return masked_fill_scalar(grad, logical_or(x <= y, y != y), 0)


fmin.defvjp(fmin_vjp_x, fmin_vjp_y)


@binary("masked_fill_scalar", node="MaskedFillBackward0")
def masked_fill_scalar(x, mask, value):
    """``x.masked_fill(mask, value)`` for a number ``value``, as PyTorch's formulas call it
    (maximum's and minimum's rules)."""
    return value if mask else x


masked_fill_scalar.defvjp(lambda grad, mask, value: masked_fill_scalar(grad, mask, 0), None)
masked_fill_scalar._defers = False  # (its bool mask never shares the float dtype deferral needs)


@binary("where", n_in=3, dtype="where")  # (public in ops/indexing.py: also where(cond))
def where(cond, x, y):
    return x if cond else y


where.defvjp(None, lambda grad, cond: where(cond, grad, 0), lambda grad, cond: where(cond, 0, grad))


@binary("logical_and", dtype="bool", variants="function method inplace",
        tensors_only=True)
def logical_and(x, y):
    return (x != 0) and (y != 0)


@binary("logical_or", dtype="bool", variants="function method inplace",
        tensors_only=True)
def logical_or(x, y):
    return (x != 0) or (y != 0)


@binary("logical_xor", dtype="bool", variants="function method inplace",
        tensors_only=True)
def logical_xor(x, y):
    return (x != 0) != (y != 0)


@binary("bitwise_and", refuse_float=_no_kernel("bitwise_and_cpu", "Float"),
        variants="function method inplace")
def bitwise_and(x, y):
    return x & y


@binary("bitwise_or", refuse_float=_no_kernel("bitwise_or_cpu", "Float"),
        variants="function method inplace")
def bitwise_or(x, y):
    return x | y


@binary("bitwise_xor", refuse_float=_no_kernel("bitwise_xor_cpu", "Float"),
        variants="function method inplace")
def bitwise_xor(x, y):
    return x ^ y


# (PyTorch's shifts: by a negative amount or by the width of int64 or more, a left shift gives
# 0 and a right shift the sign; narrower ints are shifted as int64 and wrap when stored)
@binary("bitwise_left_shift", refuse_float=_no_kernel("lshift_cpu", "Float"),
        refuse_bool=_no_kernel("lshift_cpu"), variants="function method inplace")
def bitwise_left_shift(x, y):
    if y < 0 or y >= 64:
        return x - x
    return x << y


@binary("bitwise_right_shift", refuse_float=_no_kernel("rshift_cpu", "Float"),
        refuse_bool=_no_kernel("rshift_cpu"), variants="function method inplace")
def bitwise_right_shift(x, y):
    if y < 0 or y >= 64:
        return x >> 63
    return x >> y


@binary("gcd", refuse_float=_no_kernel("gcd_cpu", "Float"), refuse_bool=_no_kernel("gcd_cpu"),
        variants="function method inplace inplace_function", tensors_only=True)
def gcd(x, y):
    """The greatest common divisor of ``|x|`` and ``|y|`` (Euclid's; 0 for two zeros)."""
    x, y = abs(x), abs(y)
    while y != 0:
        x, y = y, x % y
    return x


@binary("lcm", refuse_float=_no_kernel("lcm_cpu", "Float"), refuse_bool=_no_kernel("lcm_cpu"),
        variants="function method inplace inplace_function", tensors_only=True)
def lcm(x, y):
    g = gcd(x, y)
    if g == 0:
        return g
    return abs(x // g * y)


@unary("bitwise_not", refuse_float=_no_kernel("bitwise_not_cpu", "Float"))
def bitwise_not(x):
    return ~x


@binary("eq", dtype="bool", variants="function method")
def eq(x, y):
    return x == y


@binary("ne", dtype="bool", variants="function method", aliases="not_equal")
def ne(x, y):
    return x != y


@binary("lt", dtype="bool", variants="function method", aliases="less")
def lt(x, y):
    return x < y


@binary("le", dtype="bool", variants="function method", aliases="less_equal")
def le(x, y):
    return x <= y


@binary("gt", dtype="bool", variants="function method", aliases="greater")
def gt(x, y):
    return x > y


@binary("ge", dtype="bool", variants="function method", aliases="greater_equal")
def ge(x, y):
    return x >= y


# ================================================================ more math (ops/pointwise.py)
# (their public functions refuse or copy the dtypes PyTorch does, then call these)


# ---------------------------------------------------------------- classification (bool)
# (float inputs only: an integer has no NaN nor infinity, and a literal inf would take the
# kernel's integer dtype)


@unary("isnan", dtype="bool")
def isnan(x):
    return x != x


@unary("isinf", dtype="bool")
def isinf(x):
    return x - x != 0 and x == x  # (inf - inf is NaN)


@unary("isposinf", dtype="bool")
def isposinf(x):
    return x > 0 and x - x != 0


@unary("isneginf", dtype="bool")
def isneginf(x):
    return x < 0 and x - x != 0


@unary("signbit", dtype="bool")  # (float inputs: ops/pointwise.py's signbit)
def signbit(x):
    return math.copysign(1.0, x) < 0  # (-0.0 and a NaN with its sign bit set too)


@unary("isfinite", dtype="bool")
def isfinite(x):
    return x - x == 0


@unary("nan_to_num")
def nan_to_num(x, nan, posinf, neginf):
    if x != x:
        return nan
    if x - x != 0:
        return posinf if x > 0 else neginf
    return x


# (PyTorch's grad * isfinite(x): NaN where an infinite gradient meets a non-finite x, and
# MulBackward0 when recorded)
nan_to_num.defvjp(lambda grad, x: grad * where(x - x == 0, 1.0, 0.0))


# ---------------------------------------------------------------- special functions


@unary("lgamma", dtype="float", variants="function method inplace")
def lgamma(x):
    if x <= 0 and x == trunc(x):  # the poles (and -inf), where C's lgamma gives inf
        return math.inf
    return math.lgamma(x)


lgamma.defvjp(lambda grad, x: grad * digamma(x))


@unary("i0", dtype="float", variants="function method inplace inplace_function")
def i0(x):
    """The modified Bessel function of the first kind of order 0 (``modified_bessel``: its
    power series, then its asymptotic expansion past 20, which stays finite up to 709 where
    the series' terms overflow first). NaN at NaN and at the infinities, as PyTorch's."""
    return modified_bessel(x, 0)


i0.defvjp(lambda grad, x: grad * special_i1(x))


@unary("special_i1", dtype="float")
def special_i1(x):
    """The modified Bessel function of the first kind of order 1 (``modified_bessel``, as
    ``i0``)."""
    return modified_bessel(x, 1)


# (PyTorch's i1_backward: i0(x) - i1(x) / x, its limit 1/2 at 0)
special_i1.defvjp(lambda grad, x, result: grad * where(x == 0, 0.5, i0(x) - result / x))


@unary("digamma", dtype="float", variants="function method inplace")
def digamma(x):
    """The derivative of ``lgamma`` (Numba has none): the recurrence ``psi(x) = psi(x + 1) -
    1 / x`` up to ``x >= 10``, then the asymptotic series; the reflection formula below 0."""
    if x != x:
        return x
    if x == 0:
        return -math.inf if 1 / x > 0 else math.inf  # (PyTorch: copysign(inf, -x))
    s = 0.0
    if x < 0:
        if x == trunc(x):
            return math.nan
        # psi(x) = psi(1 - x) - pi / tan(pi x)
        s = -3.141592653589793 / math.tan(3.141592653589793 * x)
        x = 1 - x
    if x - x != 0:
        return x
    while x < 10:
        s -= 1 / x
        x += 1
    r = 1 / (x * x)
    tail = r * (1 / 12 - r * (1 / 120 - r * (1 / 252 - r * (1 / 240 - r * (1 / 132)))))
    return s + math.log(x) - 0.5 / x - tail


digamma.defvjp(lambda grad, x: grad * polygamma(x, 1))


@unary("polygamma", dtype="float")
def polygamma(x, n):
    """The ``n``-th derivative of ``digamma`` for ``n >= 1``: ``(-1)^(n+1) n! sum_k
    1/(x+k)^(n+1)``, the terms summed up to ``x + k >= 20`` and the rest by Euler-Maclaurin."""
    if x != x:
        return x
    if x <= 0 and x == trunc(x):  # (a pole: PyTorch's sign (-1)^(n+1) times zeta's inf)
        return math.inf if n % 2 == 1 else -math.inf
    m = n + 1
    s = 0.0
    while x < 20:
        s += 1 / x**m
        x += 1
    if x - x != 0:
        tail = 0.0
    else:
        # x^(1-m)/(m-1) + x^-m/2 + sum_j B_2j/(2j)! (m)_(2j-1) x^-(m+2j-1)
        r = 1 / (x * x)
        c = m / x**(m + 1)  # (m)_1 x^-(m+1)
        tail = 1 / ((m - 1) * x**(m - 1)) + 0.5 / x**m + c / 12
        c = c * (m + 1) * (m + 2) * r
        tail -= c / 720
        c = c * (m + 3) * (m + 4) * r
        tail += c / 30240
        c = c * (m + 5) * (m + 6) * r
        tail -= c / 1209600
        c = c * (m + 7) * (m + 8) * r
        tail += c / 47900160
    f = 1.0
    k = 2.0
    while k <= n and f - f == 0:  # (n! is inf from n = 171 on: no loop to a huge n)
        f *= k
        k += 1
    return (f if n % 2 == 1 else -f) * (s + tail)


polygamma.defvjp(lambda grad, x, n: grad * polygamma(x, n + 1))


# (PyTorch's polygamma_ records PolygammaBackward1, n = 0 included: an op of its own)
@unary("polygamma_", node="PolygammaBackward1", dtype="float")
def polygamma_(x, n):
    if n == 0:
        return digamma(x)
    return polygamma(x, n)


polygamma_.defvjp(lambda grad, x, n: grad * polygamma(x, n + 1))


@unary("sinc", dtype="float", variants="function method inplace inplace_function")
def sinc(x):
    if x == 0:
        return 1
    p = 3.141592653589793 * x
    return math.sin(p) / p


@sinc.defvjp
def sinc_vjp(grad, x):
    p = 3.141592653589793 * x
    return where(x == 0, 0, grad * (p * cos(p) - sin(p)) / (p * x))


@unary("deg2rad", node="Deg2RadBackward0", dtype="float",
       variants="function method inplace inplace_function")
def deg2rad(x):
    return x * 0.017453292519943295


deg2rad.defvjp(lambda grad: grad * 0.017453292519943295)


@unary("rad2deg", node="Rad2DegBackward0", dtype="float",
       variants="function method inplace inplace_function")
def rad2deg(x):
    return x * 57.29577951308232


rad2deg.defvjp(lambda grad: grad * 57.29577951308232)


@unary("sgn", variants="function method inplace")
def sgn(x):
    """``sign`` of a real tensor, under its own node (SgnBackward0)."""
    return sign(x)


sgn.defvjp(lambda grad: abs(sign(grad)) * 0)  # (as sign's)
sgn.constant_gradient = True
sgn.always_saves = ("x", "result")  # (SgnBackward0 saves self and result)


@unary("angle", dtype="float", variants="function method")
def angle(x):
    """The argument of a real number: pi for a negative one, 0 otherwise (also -0.0)."""
    if x < 0:
        return 3.141592653589793
    if x >= 0:
        return 0
    return x  # (NaN stays NaN)


# a real number's angle is piecewise constant: PyTorch's gradient is zeros, also for an
# infinite or NaN incoming gradient
angle.defvjp(lambda grad: abs(sign(grad)) * 0)
angle.constant_gradient = True
angle.always_saves = ("x",)  # (AngleBackward0 saves self)


# ---------------------------------------------------------------- two-input math


@binary("logaddexp", dtype="float")
def logaddexp(x, y):
    if x == y:  # (also both infinite: inf - inf would be NaN)
        return x + 0.6931471805599453
    m = x if x > y else y
    return m + math.log1p(math.exp(-abs(x - y)))


def logaddexp_vjp_x(grad, x, y):
    return grad / (1 + exp(y - x))


def logaddexp_vjp_y(grad, x, y):
    return grad / (1 + exp(x - y))


logaddexp.defvjp(logaddexp_vjp_x, logaddexp_vjp_y)
# (PyTorch's formulas: grad / (1 + exp(other - self)) and grad / (1 + exp(self - other)))
logaddexp.bool_operand_vjp = {i: (("x", "y"), (RuntimeError, ERR_SUB_BOOL)) for i in (0, 1)}


@binary("logaddexp2", dtype="float")
def logaddexp2(x, y):
    if x == y:
        return x + 1
    m = x if x > y else y
    return m + math.log1p(2.0 ** -abs(x - y)) * 1.4426950408889634  # (1 / ln 2)


def logaddexp2_vjp_x(grad, x, y):
    return grad / (1 + exp2(y - x))


def logaddexp2_vjp_y(grad, x, y):
    return grad / (1 + exp2(x - y))


logaddexp2.defvjp(logaddexp2_vjp_x, logaddexp2_vjp_y)
logaddexp2.bool_operand_vjp = logaddexp.bool_operand_vjp


@binary("xlogy", dtype="float", variants="function method inplace inplace_function")
def xlogy(x, y):
    if y != y:
        return y
    if x == 0:
        return 0
    return x * log(y)


def xlogy_vjp_x(grad, x, y):
    # PyTorch's xlogy(grad, y), zero where x is 0 and y is not positive
    return where(logical_and(x == 0, y <= 0), 0, xlogy(grad, y))


xlogy.defvjp(xlogy_vjp_x, lambda grad, x, y: grad * x / y)
xlogy.scalar_nodes = ("XlogyBackward1", "XlogyBackward2")


@binary("special_xlog1py", node="SpecialXlog1PyBackward0", dtype="float")
def special_xlog1py(x, y):
    """``x * log1p(y)``, 0 where x is 0 (``torch.special.xlog1py``)."""
    if y != y:
        return y
    if x == 0:
        return 0
    return x * log1p(y)


def special_xlog1py_vjp_x(grad, x, y):
    # PyTorch's xlog1py(grad, y), zero where x is 0 and y is not above -1
    return where(logical_and(x == 0, y <= -1), 0, special_xlog1py(grad, y))


special_xlog1py.defvjp(special_xlog1py_vjp_x, lambda grad, x, y: grad * x / (y + 1))
special_xlog1py.scalar_nodes = ("SpecialXlog1PyBackward1", "SpecialXlog1PyBackward2")


@unary("special_entr", node="SpecialEntrBackward0", dtype="float")
def special_entr(x):
    """``-x * log(x)``: 0 at 0, -inf below (``torch.special.entr``)."""
    if x != x:
        return x
    if x > 0:
        return -x * math.log(x)
    if x == 0:
        return 0
    return -math.inf


special_entr.defvjp(lambda grad, x: grad * -(1 + log(x)))


@binary("copysign", dtype="float", variants="function method inplace")
def copysign(x, y):
    return math.copysign(x, y)


def copysign_vjp_x(grad, x, result):
    # (PyTorch's copysign_tensor_self_backward: grad times the ratio result / x, zero where x
    # is 0; the mask on the ratio, not the product, keeps the derivative by grad finite there)
    return grad * where(x == 0, 0, result / x)


copysign.defvjp(copysign_vjp_x, _zero_gradient)
# (PyTorch's formula for ``other`` is zeros_like(other): not recorded under create_graph)
copysign.constant_gradient = (False, True)
copysign.scalar_nodes = ("CopysignBackward0", "CopysignBackward1")
# (CopysignBackward0 saves the result whichever input requires grad, self only for self's)
copysign.always_saves = ("result",)


@binary("heaviside", node="NotImplemented")
def heaviside(x, values):
    if x == 0:
        return values
    return 1 if x > 0 else 0


heaviside.defvjp(None, None)
heaviside.derivative_missing = "aten::heaviside"  # (PyTorch records NotImplemented)


@unary("clamp_min", node="ClampMinBackward0")
def clamp_min(x, min):
    if min != min:  # (a NaN bound gives NaN, as PyTorch's)
        return min
    return min if x < min else x  # (NaN stays NaN)


clamp_min.defvjp(lambda grad, x, min: where(x >= min, grad, 0))


@unary("clamp_max", node="ClampMaxBackward0")
def clamp_max(x, max):
    if max != max:  # (a NaN bound gives NaN, as PyTorch's)
        return max
    return max if x > max else x


clamp_max.defvjp(lambda grad, x, max: where(x <= max, grad, 0))


@binary("clamp_min_tensor", node="ClampMinBackward1")
def clamp_min_tensor(x, y):
    return maximum(x, y)


def clamp_min_vjp_x(grad, x, y):
    return where(x >= y, grad, 0)


def clamp_min_vjp_y(grad, x, y):
    return where(x < y, grad, 0)


clamp_min_tensor.defvjp(clamp_min_vjp_x, clamp_min_vjp_y)


@binary("clamp_max_tensor", node="ClampMaxBackward1")
def clamp_max_tensor(x, y):
    return minimum(x, y)


def clamp_max_vjp_x(grad, x, y):
    return where(x <= y, grad, 0)


def clamp_max_vjp_y(grad, x, y):
    return where(x > y, grad, 0)


clamp_max_tensor.defvjp(clamp_max_vjp_x, clamp_max_vjp_y)


# ``clamp`` with tensor bounds, PyTorch's clamp.Tensor (ClampBackward0): a NaN in any operand
# gives NaN; with both bounds the gradient follows PyTorch's clamp_backward_min_max (a min
# above the max gives the max, which takes the gradient there); with one, clamp_min's or
# clamp_max's rules
@binary("clamp_tensor", node="ClampBackward0", n_in=3)
def clamp_tensor(x, min, max):
    if min != min or max != max:
        return min + max
    if x < min:
        x = min
    if x > max:
        x = max
    return x  # (NaN stays NaN)


def clamp_tensor_vjp_min(grad, x, min, max):
    return where(x < min, where(min < max, grad, 0), 0)


def clamp_tensor_vjp_max(grad, x, min, max):
    return where(x > max, grad, where(max < min, grad, 0))


clamp_tensor.defvjp(lambda grad, x, min, max: where(x >= min, where(x <= max, grad, 0), 0),
                    clamp_tensor_vjp_min, clamp_tensor_vjp_max)


@binary("clamp_tensor_min", node="ClampBackward0")
def clamp_tensor_min(x, y):
    if y != y:
        return y
    return y if x < y else x


@binary("clamp_tensor_max", node="ClampBackward0")
def clamp_tensor_max(x, y):
    if y != y:
        return y
    return y if x > y else x


clamp_tensor_min.defvjp(clamp_min_vjp_x, clamp_min_vjp_y)
clamp_tensor_max.defvjp(clamp_max_vjp_x, clamp_max_vjp_y)


@binary("addcmul", n_in=3, refuse_bool=_no_kernel("addcmul_cpu_out"))
def addcmul(x, y, z, value):
    """``x + value * y * z``."""
    return x + value * y * z


def addcmul_vjp_y(grad, z, value):
    return grad * value * z


def addcmul_vjp_z(grad, y, value):
    return grad * value * y


addcmul.defvjp(lambda grad: grad, addcmul_vjp_y, addcmul_vjp_z)


@binary("addcdiv", n_in=3)
def addcdiv(x, y, z, value):
    """``x + value * y / z``."""
    return x + value * y / z


# (PyTorch's formulas, in its order: grad * (value / tensor2) and
# -grad * (value * tensor1 / tensor2**2), a product last: MulBackward0 when recorded)
def addcdiv_vjp_y(grad, z, value):
    return grad * (value / z)


def addcdiv_vjp_z(grad, y, z, value):
    return -grad * (value * y / (z * z))


addcdiv.defvjp(lambda grad: grad, addcdiv_vjp_y, addcdiv_vjp_z)
# (PyTorch's node saves tensor2 whatever needs a gradient: an in-place change of it before
# backward is the version error; addcmul's saves only what its needed formulas read)
addcdiv.always_saves = ("z",)
# (three tensors and a parameter take the general path, which computes at once)
addcmul._defers = addcdiv._defers = False


# ================================================================ torch.special: more functions
# (their public spellings are in special.py, pointwise.py and random.py). Each is computed by a
# method that is accurate over the whole range, written for these kernels: power series where
# their terms do not cancel, asymptotic expansions where they converge to the precision, Miller's
# backward recurrence, the trapezoid rule on integrals whose integrands decay doubly
# exponentially (it converges exponentially fast there), continued fractions. Loops count in
# the kernel's dtype and stop when a term no longer changes the sum, so float32 kernels stop
# sooner and hold no float64 arithmetic.


@unary("special_erfcx", dtype="float")
def special_erfcx(x):
    """The scaled complementary error function ``exp(x^2) erfc(x)``."""
    if x != x:
        return x
    ax = abs(x)
    if ax < 8:
        # (x^2 < 64: its rounding costs at most 64 ulp of the exponent, ~1e-14)
        r = math.exp(ax * ax) * math.erfc(ax)
    else:
        # 1/(x sqrt(pi)) sum_k (-1)^k (2k-1)!! / (2x^2)^k: its terms fall to below 1e-17 of
        # the sum before they grow (from k ~ x^2)
        v = 1 / (2 * ax * ax)
        term = 1.0
        s = 1.0
        k = 1.0
        while k < 40:
            term = -term * (2 * k - 1) * v
            if s + term == s:
                break
            s += term
            k += 1
        r = s / (ax * 1.7724538509055159)
    if x < 0:
        if x < -26.7:  # (2 exp(x^2) overflows)
            return math.inf
        return 2 * math.exp(x * x) - r
    return r


special_erfcx.defvjp(lambda grad, x, result: (2 * x * result - 1.1283791670955126) * grad)


@unary("special_log_ndtr", dtype="float")
def special_log_ndtr(x):
    """The log of the standard normal distribution function: through erfcx below -1, where
    the distribution function itself underflows."""
    if x < -1:
        return math.log(special_erfcx(-x * 0.7071067811865476) / 2) - x * x / 2
    return math.log1p(-math.erfc(x * 0.7071067811865476) / 2)


@special_log_ndtr.defvjp
def special_log_ndtr_vjp(grad, x, result):
    # (PyTorch's formula: grad / sqrt(2 pi) * exp(-(result + x^2 / 2)))
    return grad * 0.3989422804014327 * exp(-(result + x * x / 2))


@unary("special_ndtri", dtype="float")
def special_ndtri(p):
    """The inverse of the standard normal distribution function. Between 1/4 and 3/4 it is
    sqrt(2) erfinv(2p - 1) (2p - 1 is exact there, so the result keeps its relative accuracy
    near 0); in the tails, Hastings' rational guess (within 5e-4) refined by three Newton
    steps on log(Phi(x)) = log(q), whose derivative erfcx gives without underflow."""
    if not (p >= 0 and p <= 1):
        return math.nan
    if p == 0:
        return -math.inf
    if p == 1:
        return math.inf
    if p >= 0.25 and p <= 0.75:
        return 1.4142135623730951 * erfinv(2 * p - 1)
    q = p if p < 0.5 else 1 - p  # (exact)
    lq = math.log(q)
    t = math.sqrt(-2 * lq)
    y = (t - (2.515517 + t * (0.802853 + t * 0.010328))
         / (1 + t * (1.432788 + t * (0.189269 + t * 0.001308))))
    y = -y
    i = 0.0
    while i < 3:
        # log(Phi(y)) = log(erfcx(-y/sqrt2) / 2) - y^2 / 2; its derivative is
        # 1 / (erfcx(-y/sqrt2) sqrt(pi/2))
        e = special_erfcx(-y * 0.7071067811865476)
        y = y - (math.log(e / 2) - y * y / 2 - lq) * e * 1.2533141373155003
        i += 1
    return y if p < 0.5 else -y


# d ndtri(p) / dp = sqrt(2 pi) exp(ndtri(p)^2 / 2)
special_ndtri.defvjp(lambda grad, result: grad * 2.5066282746310002 * exp(result * result / 2))


@unary("scaled_bessel_k", dtype="float")
def scaled_bessel_k(x, nu):
    """``exp(x) K_nu(x)`` for ``x > nu^2``: the trapezoid rule on ``int_0^inf exp(-x (cosh t -
    1)) cosh(nu t) dt`` (``cosh t - 1`` as ``2 sinh(t/2)^2``, exact for small t). The step
    keeps the error below e^-40 (the integrand is analytic in a strip whose usable width
    narrows as x grows); a dozen to fifty points."""
    h = 0.6 / math.sqrt(x)
    if h > 0.2:
        h = 0.2
    s = 0.5
    t = h
    while t < 1000:
        # (the integrand falls from t = 0 on where x > nu^2, as in every use here)
        u = math.sinh(t / 2)
        g = math.exp(-2 * x * u * u) * math.cosh(nu * t)
        if s + g == s:
            break
        s += g
        t += h
    return s * h


@unary("modified_bessel", dtype="float")
def modified_bessel(x, which):
    """The modified Bessel functions: I0, I1, I0 e^-|x|, I1 e^-|x| (``which`` 0 to 3), and K0,
    K1, K0 e^x, K1 e^x (4 to 7). I: the power series (positive terms) up to 20, then the
    asymptotic expansion (its error is e^-2x relative). K: the series about 0 up to 1, then
    ``scaled_bessel_k``."""
    if x != x:
        return x
    order = which % 2
    if which < 4:
        ax = abs(x)
        sgn = -1.0 if order == 1 and x < 0 else 1.0
        if ax <= 20:
            qq = ax * ax / 4
            term = 1.0 if order == 0 else ax / 2
            s = term
            k = 1.0
            while k < 100:
                term = term * qq / (k * (k + order))
                if s + term == s:
                    break
                s += term
                k += 1
            if which >= 2:
                s = s * math.exp(-ax)
            return sgn * s
        # e^x / sqrt(2 pi x) sum_k (-1)^k a_k(nu) / x^k, a_k = prod_j (4nu^2 - (2j-1)^2)/(k! 8^k)
        mu = 4 * order * order
        z8 = 8 * ax
        term = 1.0
        s = 1.0
        k = 1.0
        while k < 60:
            term = -term * (mu - (2 * k - 1) * (2 * k - 1)) / (k * z8)
            if s + term == s:
                break
            s += term
            k += 1
        s = s / math.sqrt(6.283185307179586 * ax)
        if which < 2:
            return sgn * s * math.exp(ax)
        return sgn * s
    if x < 0:
        return math.nan
    if x == 0:
        return math.inf
    if x - x != 0:
        return 0.0
    if x > 1:
        s = scaled_bessel_k(x, order)
        return s * math.exp(-x) if which < 6 else s
    qq = x * x / 4
    lg = math.log(x / 2)
    term = 1.0
    ip = 1.0  # sum_k qq^k / (k! (k+order)!)
    hk = 0.0  # H_k
    if order == 0:
        # K0 = -(log(x/2) + euler) I0 + sum_k H_k qq^k / k!^2
        s = 0.0
        k = 1.0
        while k < 40:
            term = term * qq / (k * k)
            hk += 1 / k
            if ip + term == ip:
                break
            ip += term
            s += hk * term
            k += 1
        r = s - (lg + 0.5772156649015329) * ip
    else:
        # K1 = 1/x + log(x/2) I1 - x/4 sum_k (psi(k+1) + psi(k+2)) qq^k / (k! (k+1)!)
        s = 1 - 2 * 0.5772156649015329
        k = 1.0
        while k < 40:
            term = term * qq / (k * (k + 1))
            hk += 1 / k
            if ip + term == ip:
                break
            ip += term
            s += (2 * hk + 1 / (k + 1) - 2 * 0.5772156649015329) * term
            k += 1
        r = 1 / x + x / 2 * lg * ip - x / 4 * s
    return r * math.exp(x) if which >= 6 else r


@unary("special_i0e", node="SpecialI0EBackward0", dtype="float")
def special_i0e(x):
    """``i0(x) exp(-|x|)``."""
    return modified_bessel(x, 2)


special_i0e.defvjp(lambda grad, x, result: grad * (special_i1e(x) - sgn(x) * result))


@unary("special_i1e", node="SpecialI1EBackward0", dtype="float")
def special_i1e(x):
    """``i1(x) exp(-|x|)``."""
    return modified_bessel(x, 3)


@special_i1e.defvjp
def special_i1e_vjp(grad, x, result):
    # (PyTorch's i1e_backward: i0e(x) - i1e(x) (sgn(x) + 1/x), its limit 1/2 at 0; the formula
    # at 0 reads x = 1, so that its derivative there is 0, not 0 * inf)
    safe = where(x == 0, 1, x)
    return grad * where(x == 0, 0.5, special_i0e(safe) - result * (sgn(safe) + 1 / safe))


@unary("bessel_jy", dtype="float")
def bessel_jy(x, which):
    """The Bessel functions J0, J1, Y0, Y1 (``which`` 0 to 3). Up to |x| = 3 their power
    series; up to 25 Miller's backward recurrence from an order past which J_n(x) is below
    1e-17 of J0, normalized by J0 + 2 sum J_2k = 1, with Y from Neumann's series in the same
    J_n; beyond, Hankel's asymptotic expansion (the phase ``x - pi/4`` rounded as PyTorch
    rounds it)."""
    if x != x:
        return x
    order = which % 2
    if which >= 2:
        if x < 0:
            return math.nan
        if x == 0:
            return -math.inf
    ax = abs(x)
    if ax - ax != 0:
        return math.nan
    sgn = -1.0 if order == 1 and x < 0 else 1.0
    if ax > 25:
        # J = sqrt(2/(pi x)) (P cos chi - Q sin chi), Y = sqrt(2/(pi x)) (P sin chi + Q cos chi)
        mu = 4 * order * order
        z8 = 8 * ax
        term = 1.0
        p = 1.0
        q = 0.0
        k = 1.0
        while k < 60:
            term = term * (mu - (2 * k - 1) * (2 * k - 1)) / (k * z8)
            r = k % 4
            if r == 1:
                q += term
            elif r == 2:
                p -= term
            elif r == 3:
                q -= term
            else:
                p += term
            if abs(term) < 1e-17 * abs(p):
                break
            k += 1
        chi = ax - (0.7853981633974483 if order == 0 else 2.356194490192345)
        c = math.cos(chi)
        sn = math.sin(chi)
        amp = 0.7978845608028654 / math.sqrt(ax)
        if which < 2:
            return sgn * amp * (p * c - q * sn)
        return amp * (p * sn + q * c)
    if ax <= 3:
        qq = ax * ax / 4
        t0 = 1.0
        j0 = 1.0
        t1 = 1.0
        j1 = 1.0
        hk = 0.0
        y0s = 0.0  # sum_k H_k (-qq)^k / k!^2
        y1s = 1 - 2 * 0.5772156649015329  # sum_k (psi(k+1) + psi(k+2)) (-qq)^k / (k! (k+1)!)
        k = 1.0
        while k < 60:
            t0 = -t0 * qq / (k * k)
            t1 = -t1 * qq / (k * (k + 1))
            if j0 + t0 == j0 and j1 + t1 == j1:
                break
            j0 += t0
            j1 += t1
            hk += 1 / k
            y0s += hk * t0
            y1s += (2 * hk + 1 / (k + 1) - 2 * 0.5772156649015329) * t1
            k += 1
        j1 = j1 * ax / 2
        if which == 0:
            return j0
        if which == 1:
            return sgn * j1
        lg = math.log(ax / 2)
        if which == 2:
            return 0.6366197723675814 * ((lg + 0.5772156649015329) * j0 - y0s)
        return 0.6366197723675814 * (lg * j1 - 1 / ax) - ax * 0.15915494309189535 * y1s
    # f_m ~ J_m(x) from f_(n+1) = 0, f_n = 1e-30 down: f_(m-1) = 2m/x f_m - f_(m+1)
    n = 2 * trunc((1.5 * ax + 30) / 2)
    fp = 0.0
    f = 1e-30
    norm = 0.0
    s0 = 0.0  # sum_k (-1)^k f_2k / k
    s1 = 0.0  # sum_k (-1)^k (f_(2k-1) - f_(2k+1)) / k
    f1 = 0.0
    m = n
    while m > 0.5:
        half = m / 2
        if trunc(half) == half:
            norm += 2 * f
            s0 += (f if half % 2 == 0 else -f) / half
        else:
            kp = (m + 1) / 2
            c = (1.0 if kp % 2 == 0 else -1.0) / kp
            if m > 2:
                km = (m - 1) / 2
                c -= (1.0 if km % 2 == 0 else -1.0) / km
            s1 += c * f
            if m == 1:
                f1 = f
        fm = 2 * m / ax * f - fp
        fp = f
        f = fm
        m -= 1
    norm += f
    if which == 0:
        return f / norm
    if which == 1:
        return sgn * f1 / norm
    lg = math.log(ax / 2) + 0.5772156649015329
    # Y0 = 2/pi ((log(x/2) + euler) J0 - 2 sum_k (-1)^k J_2k / k); Y1 = -Y0'
    if which == 2:
        return 0.6366197723675814 * (lg * f - 2 * s0) / norm
    return 0.6366197723675814 * ((lg * f1 + s1) / norm - f / (norm * ax))


@unary("special_spherical_bessel_j0", dtype="float")
def special_spherical_bessel_j0(x):
    """``sin(x) / x``, by its Taylor series below 1/2."""
    if x - x != 0:
        return x - x if x != x else 0.0
    if abs(x) < 0.5:
        z = x * x
        return 1 + z * (-1 / 6 + z * (1 / 120 + z * (-1 / 5040 + z * (
            1 / 362880 + z * (-1 / 39916800 + z / 6227020800)))))
    return math.sin(x) / x


@unary("special_airy_ai", dtype="float")
def special_airy_ai(x):
    """The Airy function Ai. Above 1: ``sqrt(x/3)/pi K_1/3(z)``, z = 2/3 x^(3/2)
    (``scaled_bessel_k``). From -10 to 1: Taylor steps of length at most 1 along
    ``y'' = x y`` from Ai(0) and Ai'(0) (no cancellation, as the Maclaurin series has for
    negative x). Below -10 (z > 21): the asymptotic expansion in 1/z."""
    if x != x or x - x != 0:
        return math.nan
    if x > 103.892:  # (PyTorch's bound: below e^-700, 0)
        return 0.0
    if x > 1:
        z = 2 * x * math.sqrt(x) / 3
        return math.sqrt(x / 3) * 0.3183098861837907 * scaled_bessel_k(z, 1 / 3) * math.exp(-z)
    if x >= -10:
        y = 0.3550280538878172
        dy = -0.2588194037928068
        n = trunc(abs(x)) + 1
        h = x / n
        x0 = 0.0
        i = 0.0
        while i < n:
            # y(x0 + h) = sum_k a_k h^k, a_(k+2) = (x0 a_k + a_(k-1)) / ((k+2)(k+1))
            am = 0.0
            a0 = y
            a1 = dy
            sy = a0 + a1 * h
            sd = a1
            hp = h
            k = 0.0
            while k < 36:
                a2 = (x0 * a0 + am) / ((k + 2) * (k + 1))
                sd += (k + 2) * a2 * hp
                hp = hp * h
                sy += a2 * hp
                am = a0
                a0 = a1
                a1 = a2
                k += 1
            y = sy
            dy = sd
            x0 += h
            i += 1
        return y
    # Ai(-t) = (sin(z + pi/4) P - cos(z + pi/4) Q) / (sqrt(pi) t^(1/4)), P and Q the even and
    # odd terms, alternating, of sum_k c_k z^-k, c_k = Gamma(3k + 1/2) / (54^k k! Gamma(k + 1/2))
    t = math.sqrt(-x)
    z = -2 * x * t / 3
    t = math.sqrt(t)
    c = 1.0
    p = 1.0
    q = 0.0
    k = 0.0
    while k < 80:
        c = c * (3 * k + 0.5) * (3 * k + 1.5) * (3 * k + 2.5) / (54 * (k + 1) * (k + 0.5) * z)
        r = k % 4
        if r == 0:
            q += c
        elif r == 1:
            p -= c
        elif r == 2:
            q -= c
        else:
            p += c
        if abs(c) < 1e-17:
            break
        k += 1
    th = z + 0.7853981633974483
    return (math.sin(th) * p - math.cos(th) * q) / (1.7724538509055159 * t)


@binary("orthogonal_polynomial", dtype="float")
def orthogonal_polynomial(x, n, kind):
    """The orthogonal polynomials of ``torch.special`` at ``x``, of degree ``n`` (truncated to
    an integer, 0 below 0): ``kind`` 0-3 Chebyshev's T, U, V, W, 4-7 the same shifted to
    [0, 1], 8 Hermite's H, 9 He, 10 Laguerre's L, 11 Legendre's P. Their three-term
    recurrences, and for Chebyshev's of high degree inside (-1, 1) the trigonometric forms,
    where PyTorch takes them. (A recurrence stops at NaN, which it keeps, and where a float32
    count can no longer grow.)"""
    if n != n or n < 0 or n >= 9.223372036854776e18:  # (PyTorch's int64 cast: then 0)
        return 0.0
    n = trunc(n)
    odd = n % 2 != 0
    if kind == 8:
        if n == 0:
            return 1.0
        p = 1.0
        q = x + x
        k = 2.0
        while k < n + n and q == q and k + 2 != k:
            r = (x + x) * q - k * p
            p = q
            q = r
            k += 2
        return q
    if kind == 9:
        if n == 0:
            return 1.0
        p = 1.0
        q = x
        k = 1.0
        while k < n and q == q and k + 1 != k:
            r = x * q - k * p
            p = q
            q = r
            k += 1
        return q
    if kind == 10:
        if x == 0 or n == 0:
            return 1.0
        p = 1.0
        q = 1 - x
        k = 1.0
        while k < n and q == q and k + 1 != k:
            r = ((k + k + (1 - x)) * q - k * p) / (k + 1)
            p = q
            q = r
            k += 1
        return q
    if kind == 11:
        if abs(x) == 1:
            return -1.0 if x < 0 and odd else 1.0
        if n == 0:
            return 1.0
        p = 1.0
        q = x
        k = 1.0
        while k < n and q == q and k + 1 != k:
            r = ((k + k + 1) * x * q - k * p) / (k + 1)
            p = q
            q = r
            k += 1
        return q
    shifted = kind >= 4
    c = kind % 4  # T, U, V, W
    y = x + x - 1 if shifted else x
    if (shifted and (x == 1 or x == 0)) or (not shifted and abs(x) == 1):
        # at y = +-1
        if c == 0:
            return -1.0 if x != 1 and odd else 1.0
        if c == 1:
            return -(n + 1) if x != 1 and odd else n + 1
        if c == 2:
            if x == 1:
                return 1.0
            return -(n + n + 1) if odd else n + n + 1
        if x == 1:
            return n + n + 1
        return -1.0 if odd else 1.0
    big = 8.0
    if c == 0 or shifted:
        big = 6.0
    if shifted and c == 3:
        big = 4.0
    if n > big and abs(y) < 1:
        th = math.acos(y)
        if c == 0:
            return math.cos(n * th)
        if c == 1:
            sn = math.sin(th)
            if sn != 0:
                return math.sin((n + 1) * th) / sn
            return (n + 1) * math.cos((n + 1) * th) / y
        if c == 2:
            if math.sin(th / 2) != 1:
                return math.cos((n + 0.5) * th) / math.cos(th / 2)
            return -(n + n + 1) if odd else n + n + 1
        if math.cos(th / 2) != 1:
            return math.sin((n + 0.5) * th) / math.sin(th / 2)
        if y > 0:
            return n + n + 1
        return -1.0 if odd else 1.0
    if n == 0:
        return 1.0
    q = y
    if c == 1:
        q = y + y
    elif c == 2:
        q = y + y - 1
    elif c == 3:
        q = y + y + 1
    p = 1.0
    k = 2.0
    while k <= n and q == q and k + 1 != k:
        r = (y + y) * q - p
        p = q
        q = r
        k += 1
    return q


@binary("hurwitz_zeta", dtype="float")
def hurwitz_zeta(x, q):
    """The Hurwitz zeta function ``sum_k (q + k)^-x``: its terms summed to ``q + k > 9``, the
    rest by Euler-Maclaurin (up to the B14 term). PyTorch's values where it has no sum:
    infinite at x = 1 and at the poles q = 0, -1, ... (-inf too); NaN for x < 1, for a negative
    q with x not an integer, at q = inf, and at x = inf with q > 1."""
    if x == 1:
        return math.inf
    if x < 1 or q != q or q - q != 0 and q > 0:
        return math.nan
    if q <= 0:
        if q == trunc(q):
            return math.inf
        if x != trunc(x):
            return math.nan
    if x != x:
        return x
    if x - x != 0:  # (PyTorch's: the first term, or NaN for 0 / 0 where it is 0)
        if q == 1:
            return 1.0
        return math.inf if q < 1 else math.nan
    s = q ** -x
    a = q
    b = s
    i = 0.0
    while i < 9 or a <= 9:
        i += 1
        a += 1
        b = a ** -x
        if s + b == s:
            return s + b
        s += b
    # + a^(1-x)/(x-1) - a^-x/2 + sum_j B_2j/(2j)! (x)_(2j-1) a^(-x-2j+1), b = a^-x
    s += b * a / (x - 1) - b / 2
    r = 1 / (a * a)
    f = x * b / a
    s += f / 12
    f = f * (x + 1) * (x + 2) * r
    s -= f / 720
    f = f * (x + 3) * (x + 4) * r
    s += f / 30240
    f = f * (x + 5) * (x + 6) * r
    s -= f / 1209600
    f = f * (x + 7) * (x + 8) * r
    s += f / 47900160
    f = f * (x + 9) * (x + 10) * r
    s -= f * 691 / 1307674368000
    f = f * (x + 11) * (x + 12) * r
    return s + f / 74724249600


@unary("lgamma1p", dtype="float")
def lgamma1p(a):
    """``lgamma(1 + a)``, to its relative precision also near its zeros a = 0 and 1 (where
    ``1 + a`` would lose the digits of a): ``b (1 - euler) - log1p(b) + sum_k (-1)^k
    (zeta(k) - 1) b^k / k`` for b = a in [-1/2, 1/2], and ``log(a) + lgamma(1 + (a - 1))``
    for a in (1/2, 3/2)."""
    b = a
    shift = 0.0
    if abs(a) > 0.5:
        if not (abs(a - 1) < 0.5):
            return math.lgamma(a + 1)
        b = a - 1
        shift = math.log(a)
    p = -6.4229645638381000221e-11
    p = 1.3304764374244489481e-10 + b * p
    p = -2.7595228851242331452e-10 + b * p
    p = 5.7313672416788620133e-10 + b * p
    p = -1.1921401405860912074e-9 + b * p
    p = 2.4836745438024783172e-9 + b * p
    p = -5.1834750419700466551e-9 + b * p
    p = 1.0838659214896954091e-8 + b * p
    p = -2.271109460894316491e-8 + b * p
    p = 4.7698101693639805658e-8 + b * p
    p = -1.0043224823968099609e-7 + b * p
    p = 2.1207184805554665869e-7 + b * p
    p = -4.4924691987645660433e-7 + b * p
    p = 9.5514121304074198329e-7 + b * p
    p = -2.0392157538013662368e-6 + b * p
    p = 4.3748667899074878042e-6 + b * p
    p = -9.439488275268395904e-6 + b * p
    p = 0.000020507212775670691553 + b * p
    p = -0.0000449262367381331417 + b * p
    p = 0.000099457512781808533715 + b * p
    p = -0.00022315475845357937976 + b * p
    p = 0.00050966952474304242234 + b * p
    p = -0.0011927539117032609771 + b * p
    p = 0.0028905103307415232858 + b * p
    p = -0.0073855510286739852663 + b * p
    p = 0.020580808427784547879 + b * p
    p = -0.067352301053198095133 + b * p
    p = 0.32246703342411321824 + b * p
    return shift + b * (0.42278433509846713939 + b * p) - math.log1p(b)


@binary("regularized_gamma", dtype="float")
def regularized_gamma(a, x, upper):
    """The regularized incomplete gamma functions P(a, x) (``upper`` 0) and Q(a, x) = 1 - P
    (``upper`` 1), PyTorch's values at the edges. Of P and Q the smaller is computed (DiDonato
    and Morris' regions), the other is 1 minus it: P by its power series, Q by Legendre's
    continued fraction (Lentz) or, for x <= 1.1, by the series ``1 - x^a/Gamma(a+1) -
    x^a/Gamma(a) sum_k (-x)^k/(k! (a+k))``. Their factor ``x^a e^-x / Gamma(a+1)`` is taken
    in logs, for a >= 20 as ``a (log(x/a) - (x-a)/a) - log(2 pi a)/2 - stirling(a)`` (no
    cancellation between terms of size a log x). The series and the fraction take O(sqrt(a))
    terms where x is near a."""
    # (PyTorch's order of the edge cases: a NaN passes those that do not compare it)
    if x < 0 or a < 0:
        return math.nan
    if a == 0:
        if x > 0:
            return 1 - upper
        return math.nan
    if x == 0:
        return upper
    if a - a != 0 and a == a:
        if x - x != 0 and x == x:
            return math.nan
        return upper
    if x - x != 0 and x == x:
        return 1 - upper
    if a != a or x != x:
        return math.nan
    if x > 1.1:
        direct_q = x >= a
    elif x <= 0.5:
        direct_q = -0.4 / math.log(x) >= a
    else:
        direct_q = x * 1.1 >= a
    if direct_q and x <= 1.1:
        fac = a * math.log(x) - lgamma1p(a)
        term = 1.0
        s = 0.0
        k = 1.0
        while k < 200:
            term = -term * x / k
            t = term / (a + k)
            if s + t == s:
                break
            s += t
            k += 1
        v = -math.expm1(fac) - a * math.exp(fac) * s
    else:
        # log(x^a e^-x / Gamma(a + 1))
        if a < 20:
            lp = a * math.log(x) - x - lgamma1p(a)
        else:
            u = (x - a) / a
            if abs(u) < 0.3:
                # log1p(u) - u by its series
                pw = -u * u
                lm = pw / 2
                k = 3.0
                while k < 200:
                    pw = -pw * u
                    t = pw / k
                    if lm + t == lm:
                        break
                    lm += t
                    k += 1
            else:
                lm = math.log(x / a) - u
            r = 1 / (a * a)
            st = (1 / 12 - r * (1 / 360 - r * (1 / 1260 - r * (1 / 1680 - r / 1188)))) / a
            lp = a * lm - 0.5 * math.log(6.283185307179586 * a) - st
        if direct_q:
            # Q = a x^a e^-x / Gamma(a + 1) / (x + 1 - a - 1 (1 - a) / (x + 3 - a - ...))
            b = x + 1 - a
            c = 1e30
            d = 1 / b
            h = d
            k = 1.0
            while k < 2000000:
                an = -k * (k - a)
                b += 2
                d = an * d + b
                if abs(d) < 1e-30:
                    d = 1e-30
                c = b + an / c
                if abs(c) < 1e-30:
                    c = 1e-30
                d = 1 / d
                dl = d * c
                if h * dl == h:
                    break
                h *= dl
                k += 1
            v = math.exp(lp) * a * h
        else:
            # P = x^a e^-x / Gamma(a + 1) sum_k x^k / ((a+1) ... (a+k))
            term = 1.0
            s = term
            k = 1.0
            while k < 2000000:
                term = term * x / (a + k)
                if s + term == s:
                    break
                s += term
                k += 1
            v = math.exp(lp) * s
    if direct_q == (upper != 0):
        return v
    return 1 - v


@binary("standard_gamma_grad", dtype="float")
def standard_gamma_grad(a, x):
    """PyTorch's ``_standard_gamma_grad``: dx/da of a Gamma(a, 1) sample x held at its
    quantile, ``-(dP(a, x)/da) / p(x)`` (the implicit reparameterization gradient), computed
    to the precision rather than approximated as PyTorch's kernel does (within 1e-3 or so of
    these values). Where P is summed (``regularized_gamma``'s regions), its series
    differentiated term by term; where Q is, ``x ((log x - psi(a)) I + J)`` with I, J the
    integrals of ``(1+u)^(a-1) e^-xu`` and of that times ``log(1+u)`` over u > 0, by the
    trapezoid rule after ``u = exp(t - exp(-t)) / c``. PyTorch's 0 where its series (x < 0.8)
    gives NaN."""
    if x != x or a != a or not (a > 0) or x - x != 0 or a - a != 0:
        r = math.nan
    elif x <= 0:
        r = 0.0 if x == 0 else math.nan
    else:
        if x > 1.1:
            direct_q = x >= a
        elif x <= 0.5:
            direct_q = -0.4 / math.log(x) >= a
        else:
            direct_q = x * 1.1 >= a
        if not direct_q:
            # P = D sum_k t_k, t_k = x^k / ((a+1)...(a+k)): dP/da = D sum_k t_k (log x -
            # psi(a+1) - H_k), H_k = sum_(j<=k) 1/(a+j); the density is D a / x
            lx = math.log(x) - digamma(a + 1)
            term = 1.0
            s = lx
            hk = 0.0
            k = 1.0
            while k < 2000000:
                term = term * x / (a + k)
                hk += 1 / (a + k)
                t = term * (lx - hk)
                if s + t == s and term < 1:
                    break
                s += t
                k += 1
            r = -x / a * s
        else:
            # (the integrands' scale near 0: e^-u(x-a+1) and e^-u^2 a/2; their tail falls as
            # e^-xu, slowly where x is small: the sum goes on until past it)
            c = x - a + 1 + math.sqrt(a)
            h = 0.125
            t = -4.5
            si = 0.0
            sj = 0.0
            while t < 60:
                e = math.exp(-t)
                w = math.exp(t - e)
                u = w / c
                l1 = math.log1p(u)
                g = math.exp((a - 1) * l1 - x * u) * w * (1 + e)
                si += g
                sj += g * l1
                if t > 3 and x * u > 1 and si + g * 1e3 == si:
                    break
                t += h
            r = x * ((math.log(x) - digamma(a)) * si + sj) * h / c
    if r != r and x < 0.8:
        return 0.0
    return r


# (long scalar bodies: a large result is computed at once, not left to a fused expression)
for _op in (special_erfcx, special_log_ndtr, special_ndtri, scaled_bessel_k, modified_bessel,
            special_i0e, special_i1e, bessel_jy, special_spherical_bessel_j0, special_airy_ai,
            orthogonal_polynomial, hurwitz_zeta, lgamma1p, regularized_gamma,
            standard_gamma_grad):
    _op._defers = False
del _op


# Numbers PyTorch does not convert with its overflow check (``Elementwise.checked_params``):
# operands of its Scalar overloads (``x * 1e300`` is inf), numbers its kernels read as doubles,
# integer counts, and the losses' widths
for _op in (mul_scalar, div_scalar, fmod_scalar, remainder_scalar, rsub, pow, pow_bool_exponent,
            rpow, softshrink, softshrink_backward, nan_to_num, smooth_l1_elementwise,
            smooth_l1_loss_backward, huber_elementwise, huber_loss_backward, polygamma,
            polygamma_, round_decimals, binary_cross_entropy_backward):
    _op.checked_params = False
del _op
