"""Elementwise ops: a scalar forward and a pointwise rule per input, side by side.

Names a rule may call: the ops of this module (``where``, ``sign``, ``exp``, ...) and
operators. Literals take the kernel's dtype when compiled; on Tensors they are Python scalars.
"""

from __future__ import annotations

import math

from .registry import binary, unary

# ================================================================ unary


@unary("neg", allow_bool=False)
def neg(x):
    return -x


neg.defvjp(lambda grad: -grad)


@unary("abs")
def abs(x):
    return x if x >= 0 else -x


abs.defvjp(lambda grad, x: grad * sign(x))


@unary("sign")
def sign(x):
    # NaN has no sign: PyTorch returns 0 for it, as for 0 itself
    if x > 0:
        return 1
    if x < 0:
        return -1
    return 0


# sign is piecewise constant: its gradient is zero everywhere PyTorch defines it
sign.defvjp(lambda grad: grad * 0)


@unary("exp", dtype="float")
def exp(x):
    return math.exp(x)


exp.defvjp(lambda grad, result: grad * result)


@unary("log", dtype="float")
def log(x):
    # math.log raises on non-positive input; NumPy semantics want -inf / nan
    if x > 0:
        return math.log(x)
    if x == 0:
        return -math.inf
    return math.nan


log.defvjp(lambda grad, x: grad / x)


@unary("log1p", node="Log1PBackward0", dtype="float")
def log1p(x):
    if x > -1:
        return math.log1p(x)
    if x == -1:
        return -math.inf
    return math.nan


log1p.defvjp(lambda grad, x: grad / (x + 1))


@unary("expm1", dtype="float")
def expm1(x):
    return math.expm1(x)


expm1.defvjp(lambda grad, result: grad * (result + 1))


@unary("sqrt", dtype="float")
def sqrt(x):
    return math.sqrt(x) if x >= 0 else math.nan


sqrt.defvjp(lambda grad, result: grad / (2 * result))


@unary("rsqrt", dtype="float")
def rsqrt(x):
    return 1 / math.sqrt(x) if x >= 0 else math.nan


rsqrt.defvjp(lambda grad, result: -0.5 * grad * result * result * result)


@unary("reciprocal", dtype="float")
def reciprocal(x):
    return 1 / x


reciprocal.defvjp(lambda grad, result: -grad * result * result)


@unary("sin", dtype="float")
def sin(x):
    return math.sin(x)


sin.defvjp(lambda grad, x: grad * cos(x))


@unary("cos", dtype="float")
def cos(x):
    return math.cos(x)


cos.defvjp(lambda grad, x: -grad * sin(x))


@unary("tan", dtype="float")
def tan(x):
    return math.tan(x)


tan.defvjp(lambda grad, result: grad * (1 + result * result))


@unary("tanh", dtype="float")
def tanh(x):
    return math.tanh(x)


tanh.defvjp(lambda grad, result: grad * (1 - result * result))


@unary("sigmoid", dtype="float")
def sigmoid(x):
    # split by sign so exp never overflows
    if x >= 0:
        return 1 / (1 + math.exp(-x))
    e = math.exp(x)
    return e / (1 + e)


sigmoid.defvjp(lambda grad, result: grad * result * (1 - result))


@unary("relu", allow_bool=False)
def relu(x):
    return x if x > 0 else 0


relu.defvjp(lambda grad, result: where(result > 0, grad, 0))


@unary("pow", node="PowBackward0")
def pow(x, exponent):
    """``x ** exponent`` for a scalar exponent."""
    return x**exponent


@pow.defvjp
def pow_vjp(grad, x, exponent):
    # d/dx x**0 is 0 everywhere, including x == 0 where the formula gives 0 * inf
    return where(exponent == 0, 0, grad * exponent * x ** (exponent - 1))


@unary("rpow", node="PowBackward2")
def rpow(x, base):
    """``base ** x`` for a scalar base."""
    return base**x


@rpow.defvjp
def rpow_vjp(grad, result, base):
    # base == 0: the derivative of 0 ** x is 0 for x > 0, where log(0) would give nan
    return where(base == 0, 0, grad * result * log(base + 0 * result))


@unary("rsub", node="RsubBackward1", allow_bool=False)
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


@unary("logical_not", dtype="bool")
def logical_not(x):
    return not x


# ================================================================ binary


@binary("add")
def add(x, y):
    return x + y


add.defvjp(lambda grad: grad, lambda grad: grad)


@binary("sub", allow_bool=False)
def sub(x, y):
    return x - y


sub.defvjp(lambda grad: grad, lambda grad: -grad)


@binary("mul")
def mul(x, y):
    return x * y


mul.defvjp(lambda grad, y: grad * y, lambda grad, x: grad * x)


@binary("div", dtype="float")
def div(x, y):
    return x / y


div.defvjp(lambda grad, y: grad / y, lambda grad, x, y: -grad * x / (y * y))


@binary("pow_tensor", node="PowBackward1", dtype="float")
def pow_tensor(x, y):
    return x**y


def pow_tensor_vjp_x(grad, x, y):
    return where(y == 0, 0, grad * y * x ** (y - 1))


def pow_tensor_vjp_y(grad, x, result):
    # at x == 0 PyTorch takes the gradient wrt the exponent as 0 (0 ** y is flat for y > 0)
    return where(x == 0, 0, grad * result * log(x))


pow_tensor.defvjp(pow_tensor_vjp_x, pow_tensor_vjp_y)


@binary("maximum")
def maximum(x, y):
    if x != x:
        return x
    if y != y:
        return y
    return x if x >= y else y


def maximum_vjp_x(grad, x, y):
    # ties share the gradient equally, as PyTorch does
    return where(x > y, grad, where(x == y, grad * 0.5, 0))


def maximum_vjp_y(grad, x, y):
    return where(y > x, grad, where(x == y, grad * 0.5, 0))


maximum.defvjp(maximum_vjp_x, maximum_vjp_y)


@binary("minimum")
def minimum(x, y):
    if x != x:
        return x
    if y != y:
        return y
    return x if x <= y else y


def minimum_vjp_x(grad, x, y):
    return where(x < y, grad, where(x == y, grad * 0.5, 0))


def minimum_vjp_y(grad, x, y):
    return where(y < x, grad, where(x == y, grad * 0.5, 0))


minimum.defvjp(minimum_vjp_x, minimum_vjp_y)


@binary("where", n_in=3, dtype="where")
def where(cond, x, y):
    return x if cond else y


where.defvjp(None, lambda grad, cond: where(cond, grad, 0), lambda grad, cond: where(cond, 0, grad))


@binary("logical_and", dtype="bool")
def logical_and(x, y):
    return (x != 0) and (y != 0)


@binary("logical_or", dtype="bool")
def logical_or(x, y):
    return (x != 0) or (y != 0)


@binary("eq", dtype="bool")
def eq(x, y):
    return x == y


@binary("ne", dtype="bool")
def ne(x, y):
    return x != y


@binary("lt", dtype="bool")
def lt(x, y):
    return x < y


@binary("le", dtype="bool")
def le(x, y):
    return x <= y


@binary("gt", dtype="bool")
def gt(x, y):
    return x > y


@binary("ge", dtype="bool")
def ge(x, y):
    return x >= y
