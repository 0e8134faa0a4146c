"""Elementwise ops: a scalar forward and a pointwise rule per input, side by side.

Names a rule may call: the ops of this module (``where``, ``sign``, ``exp``, ...) and
operators. Literals take the kernel's dtype when compiled; on Tensors they are Python scalars.
"""

from __future__ import annotations

import math

from .registry import binary, unary

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


@unary("neg", refuse_bool=(RuntimeError, ERR_NEG_BOOL), variants="function method inplace",
       aliases="negative")
def neg(x):
    return -x


neg.defvjp(lambda grad: -grad)


@unary("abs", refuse_bool=_no_kernel("abs_cpu"), variants="function method inplace",
       aliases="absolute")
def abs(x):
    return x if x >= 0 else -x


abs.defvjp(lambda grad, x: grad * sign(x))


@unary("sign", variants="function method")
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


@unary("exp", dtype="float", variants="function method inplace")
def exp(x):
    return math.exp(x)


exp.defvjp(lambda grad, result: grad * result)


@unary("log", dtype="float", variants="function method inplace")
def log(x):
    # math.log raises on non-positive input; NumPy semantics want -inf / nan
    if x > 0:
        return math.log(x)
    if x == 0:
        return -math.inf
    return math.nan


log.defvjp(lambda grad, x: grad / x)


@unary("log1p", node="Log1PBackward0", dtype="float", variants="function method")
def log1p(x):
    if x > -1:
        return math.log1p(x)
    if x == -1:
        return -math.inf
    return math.nan


log1p.defvjp(lambda grad, x: grad / (x + 1))


@unary("expm1", dtype="float", variants="function method")
def expm1(x):
    return math.expm1(x)


expm1.defvjp(lambda grad, result: grad * (result + 1))


@unary("sqrt", dtype="float", variants="function method inplace")
def sqrt(x):
    return math.sqrt(x) if x >= 0 else math.nan


sqrt.defvjp(lambda grad, result: grad / (2 * result))


@unary("rsqrt", dtype="float", variants="function method")
def rsqrt(x):
    return 1 / math.sqrt(x) if x >= 0 else math.nan


rsqrt.defvjp(lambda grad, result: -0.5 * grad * result * result * result)


@unary("reciprocal", dtype="float", variants="function method inplace")
def reciprocal(x):
    return 1 / x


reciprocal.defvjp(lambda grad, result: -grad * result * result)


@unary("sin", dtype="float", variants="function method inplace")
def sin(x):
    return math.sin(x)


sin.defvjp(lambda grad, x: grad * cos(x))


@unary("cos", dtype="float", variants="function method inplace")
def cos(x):
    return math.cos(x)


cos.defvjp(lambda grad, x: -grad * sin(x))


@unary("tan", dtype="float", variants="function method")
def tan(x):
    return math.tan(x)


tan.defvjp(lambda grad, result: grad * (1 + result * result))


@unary("tanh", dtype="float", variants="function method inplace")
def tanh(x):
    return math.tanh(x)


tanh.defvjp(lambda grad, result: grad * (1 - result * result))


@unary("sigmoid", dtype="float", variants="function method inplace")
def sigmoid(x):
    # split by sign so exp never overflows
    if x >= 0:
        return 1 / (1 + math.exp(-x))
    e = math.exp(x)
    return e / (1 + e)


sigmoid.defvjp(lambda grad, result: grad * result * (1 - result))


@unary("softplus", dtype="float", variants="functional")
def softplus(x, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta * x)) / beta``; ``x`` itself where ``beta * x > threshold``."""
    return x if x * beta > threshold else math.log1p(math.exp(x * beta)) / beta


softplus.defvjp(lambda grad, x, beta, threshold:
                where(x * beta > threshold, grad, grad * sigmoid(x * beta)))


@unary("relu", refuse_bool=(RuntimeError, "Boolean inputs not supported for relu"),
       variants="function method inplace")
def relu(x):
    return 0 if x <= 0 else x  # (NaN stays NaN, as in PyTorch)


# (result <= 0, not result > 0: at NaN the gradient passes, as PyTorch's threshold_backward)
relu.defvjp(lambda grad, result: where(result <= 0, 0, grad))
# PyTorch's rule (threshold_backward) is a function of result: relu'' is 0, not undefined
relu.zero_second_order = True


@unary("erf", dtype="float", variants="function method inplace")
def erf(x):
    return math.erf(x)


erf.defvjp(lambda grad, x: grad * 1.1283791670955126 * exp(-x * x))  # 2 / sqrt(pi)


# ---------------------------------------------------------------- activations (nn.functional)
# declared without public variants: nn/functional.py spells them with PyTorch's ``inplace=``


@unary("leaky_relu", node="LeakyReluBackward0", dtype="float")
def leaky_relu(x, negative_slope=0.01):
    return x if x > 0 else x * negative_slope


leaky_relu.defvjp(lambda grad, x, negative_slope:
                  where(x > 0, grad, grad * negative_slope))
leaky_relu.zero_second_order = True  # (as relu: PyTorch's rule is recorded as a function of x)


@unary("elu", dtype="float")
def elu(x, alpha=1.0):
    return x if x > 0 else alpha * math.expm1(x)


elu.defvjp(lambda grad, x, alpha: where(x > 0, grad, grad * alpha * exp(x)))


@unary("gelu", dtype="float")
def gelu(x):
    """``x * Phi(x)``, Phi the standard normal CDF."""
    return 0.5 * x * (1 + math.erf(x * 0.7071067811865476))


# Phi(x) + x * phi(x), phi the standard normal density (1 / sqrt(2 pi) = 0.3989...)
gelu.defvjp(lambda grad, x: grad * (0.5 * (1 + erf(x * 0.7071067811865476))
                                    + x * exp(-0.5 * x * x) * 0.3989422804014327))


@unary("gelu_tanh", node="GeluBackward0", dtype="float")
def gelu_tanh(x):
    """GELU's tanh approximation: ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``."""
    return 0.5 * x * (1 + math.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


@gelu_tanh.defvjp
def gelu_tanh_vjp(grad, x):
    t = tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))
    return grad * (0.5 * (1 + t)
                   + 0.5 * x * (1 - t * t) * 0.7978845608028654 * (1 + 0.134145 * x * x))


@unary("silu", dtype="float")
def silu(x):
    """``x * sigmoid(x)``."""
    # split by sign so exp never overflows (as sigmoid)
    if x >= 0:
        return x / (1 + math.exp(-x))
    e = math.exp(x)
    return x * e / (1 + e)


@silu.defvjp
def silu_vjp(grad, x):
    s = sigmoid(x)
    return grad * s * (1 + x * (1 - s))


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
    # d/dx x**0 is 0 everywhere, including x == 0 where the formula gives 0 * inf
    return where(exponent == 0, 0, grad * exponent * pow(x, exponent - 1))


pow.constant_gradient = lambda exponent: exponent == 0  # (PyTorch's zeros_like for x ** 0)


@unary("rpow", node="PowBackward2")
def rpow(x, base):
    """``base ** x`` for a scalar base."""
    return base**x


@rpow.defvjp
def rpow_vjp(grad, x, result, base):
    # base == 0: PyTorch takes the derivative of 0 ** x as 0 for x >= 0, where log(0) would
    # give nan; grad multiplies it, so a NaN or infinite gradient still gives NaN. (log's
    # argument is made a tensor through sign(x), which is finite: 0 * inf is nan)
    return grad * where(logical_and(base == 0, x >= 0), 0, result * log(base + 0 * sign(x)))


rpow.always_saves = ("x", "result")  # (PowBackward2 saves the exponent and the result)


@unary("rsub", node="RsubBackward1", refuse_bool=(RuntimeError, ERR_SUB_BOOL))
def rsub(x, other):
    """``other - x`` for a scalar ``other``."""
    return other - x


rsub.defvjp(lambda grad: -grad)


@unary("clamp", node="ClampBackward1")
def clamp(x, min, max):
    if x != x:
        return x
    if x < min:
        x = min
    if x > max:
        x = max
    return x


@clamp.defvjp
def clamp_vjp(grad, x, min, max):
    # the gradient passes where min <= x <= max, boundaries included (as in PyTorch)
    return where(x >= min, where(x <= max, grad, 0), 0)


@unary("logical_not", dtype="bool", variants="function method")
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


div.defvjp(lambda grad, y: grad / y, lambda grad, x, y: -grad * x / (y * y))


@binary("pow_tensor", node="PowBackward1", refuse_bool=_no_kernel("pow"))
def pow_tensor(x, y):
    return x**y


def pow_tensor_vjp_x(grad, x, y):
    return where(y == 0, 0, grad * y * x ** (y - 1))


def pow_tensor_vjp_y(grad, x, y, result):
    # at x == 0 with y >= 0 PyTorch takes the derivative wrt the exponent as 0 (0 ** y is flat
    # there); grad multiplies it, so a NaN or infinite gradient still gives NaN
    return grad * where(logical_and(x == 0, y >= 0), 0, result * log(x))


pow_tensor.defvjp(pow_tensor_vjp_x, pow_tensor_vjp_y)
pow_tensor.always_saves = ("x", "y", "result")


@binary("remainder", node="RemainderBackward1", refuse_bool=_no_kernel("remainder_cpu"),
        variants="function method")
def remainder(x, y):
    # Python's %, as PyTorch's remainder: the result takes the divisor's sign
    return x % y


remainder.defvjp(lambda grad: grad, lambda grad, x, y: -grad * floor_divide(x, y))


@binary("floor_divide", refuse_bool=_no_kernel("div_floor_cpu"), variants="function method")
def floor_divide(x, y):
    return x // y


floor_divide.defvjp(None, None)


@binary("maximum")
def maximum(x, y):
    if x != x:
        return x
    if y != y:
        return y
    return x if x >= y else y


def maximum_vjp_x(grad, x, y):
    # ties share the gradient equally, as PyTorch does; where either is NaN (no order), both
    # inputs get the whole gradient, as in PyTorch
    return where(x < y, 0, where(x == y, grad * 0.5, grad))


def maximum_vjp_y(grad, x, y):
    return where(y < x, 0, where(x == y, grad * 0.5, grad))


maximum.defvjp(maximum_vjp_x, maximum_vjp_y)


@binary("minimum")
def minimum(x, y):
    if x != x:
        return x
    if y != y:
        return y
    return x if x <= y else y


def minimum_vjp_x(grad, x, y):
    return where(x > y, 0, where(x == y, grad * 0.5, grad))


def minimum_vjp_y(grad, x, y):
    return where(y > x, 0, where(x == y, grad * 0.5, grad))


minimum.defvjp(minimum_vjp_x, minimum_vjp_y)


@binary("where", n_in=3, dtype="where")  # (public in ops/indexing.py: also where(cond))
def where(cond, x, y):
    return x if cond else y


where.defvjp(None, lambda grad, cond: where(cond, grad, 0), lambda grad, cond: where(cond, 0, grad))


@binary("logical_and", dtype="bool", variants="function method")
def logical_and(x, y):
    return (x != 0) and (y != 0)


@binary("logical_or", dtype="bool", variants="function method")
def logical_or(x, y):
    return (x != 0) or (y != 0)


@binary("bitwise_and", refuse_float=_no_kernel("bitwise_and_cpu", "Float"),
        variants="function method")
def bitwise_and(x, y):
    return x & y


@binary("bitwise_or", refuse_float=_no_kernel("bitwise_or_cpu", "Float"),
        variants="function method")
def bitwise_or(x, y):
    return x | y


@binary("bitwise_xor", refuse_float=_no_kernel("bitwise_xor_cpu", "Float"),
        variants="function method")
def bitwise_xor(x, y):
    return x ^ y


@unary("bitwise_not", refuse_float=(
    TypeError, "~ (operator.invert) is only implemented on integer and Boolean-type tensors"))
def bitwise_not(x):
    return ~x


@binary("eq", dtype="bool", variants="function method")
def eq(x, y):
    return x == y


@binary("ne", dtype="bool", variants="function method")
def ne(x, y):
    return x != y


@binary("lt", dtype="bool", variants="function method", aliases="less")
def lt(x, y):
    return x < y


@binary("le", dtype="bool", variants="function method")
def le(x, y):
    return x <= y


@binary("gt", dtype="bool", variants="function method", aliases="greater")
def gt(x, y):
    return x > y


@binary("ge", dtype="bool", variants="function method")
def ge(x, y):
    return x >= y
