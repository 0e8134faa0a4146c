"""The public spellings of the elementwise ops of ``elementwise.py``'s "more math" section that
need more than the op itself: PyTorch's dtype refusals, defaults and scalar forms."""

from __future__ import annotations

import numpy as np

from .. import backend
from .. import dtypes as D
from .._tensor import Tensor, _on
from ..autograd.graph import running_passes
from . import elementwise as E
from . import movement as M
from . import reduce as R
from .forward import refused, zeros_like
from .inplace import _CAST_NAMES, _zeros, inplace
from .registry import composite, public, refusing_numbers, sum_to


def _no_kernel(kernel, dt):
    raise NotImplementedError(f'"{kernel}" not implemented for \'{_CAST_NAMES[dt.name]}\'')


# ---------------------------------------------------------------- classification


def _classify(op, integral):
    """``op`` for float tensors; for integer and bool ones (no NaN, no infinity) a bool tensor
    of ``integral`` everywhere."""

    def function(input):
        if input.dtype.is_floating_point:
            return op.function(input)
        same = E.eq(input, input)  # (all True, on the input's device)
        return same if integral else E.logical_not(same)

    function.__name__ = function.__qualname__ = op.name
    function.__doc__ = f"{op.name}(input) -> Tensor: elementwise, a bool tensor."
    return public("function method")(function)


isnan = _classify(E.isnan, False)
isinf = _classify(E.isinf, False)
isposinf = _classify(E.isposinf, False)
isneginf = _classify(E.isneginf, False)
isfinite = _classify(E.isfinite, True)


@public("function method")
def signbit(input):
    """Whether each element's sign bit is set (-0.0 included); False for a bool tensor."""
    if input.dtype.is_floating_point:
        return E.signbit(input)
    return E.lt(input, 0) if input.dtype is not D.bool_ else E.ne(input, input)


@public("function method")
def isreal(input):
    """All True: numbagrad has no complex dtypes (a NaN is real too, as in PyTorch)."""
    be = backend.of(input._data)
    return E.logical_not(Tensor._make(be.zeros(tuple(input.shape), np.bool_)))


@public("function method inplace inplace_function")
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (by default the
    largest and the lowest finite value of the dtype)."""
    if not input.dtype.is_floating_point:
        return M.clone(input)  # (no NaN nor infinity to replace)
    info = np.finfo(input.dtype.np)
    return E.nan_to_num(input, nan, float(info.max) if posinf is None else posinf,
                        float(info.min) if neginf is None else neginf)


# ---------------------------------------------------------------- in-place comparisons


@composite("compare", node="EqBackward0")
def compare(ctx, x, other, op):
    """The comparison ``op(x, other)`` in ``x``'s dtype: what ``x.eq_(other)`` writes. PyTorch
    records it (EqBackward0; EqBackward1 for a tensor ``other``), its gradients zero."""
    ctx.node_name = f"{op.name.capitalize()}Backward{int(isinstance(other, Tensor))}"
    return ctx.backend.clone(op(x, other)._data, x._data.dtype)


# (its tangent is zeros, as PyTorch's ``self_t.zero_()``)
compare.defjvp(lambda result, tangents, x, other, op: zeros_like(result))


@compare.defvjp
def compare_vjp(ctx, grad):
    return tuple(_zeros(ctx, i) for i in range(len(ctx.input_shapes)))


def _compare_inplace(op, aliases=""):
    """``Tensor.<op>_`` (and its aliases'): ``x`` holds ``op(x, other)`` in its own dtype."""

    def function(input, other):
        return compare(input, other, op)

    function.__name__ = function.__qualname__ = op.name
    return public("inplace", aliases=aliases)(function)


eq_ = _compare_inplace(E.eq)
ne_ = _compare_inplace(E.ne, "not_equal")
lt_ = _compare_inplace(E.lt, "less")
le_ = _compare_inplace(E.le, "less_equal")
gt_ = _compare_inplace(E.gt, "greater")
ge_ = _compare_inplace(E.ge, "greater_equal")


# ---------------------------------------------------------------- two-input math


def _float_only(op, kernel):
    """``op`` refusing operands whose promoted dtype is not a float, as PyTorch's kernels do."""

    def function(input, other):
        dt = D.result_type(input, other)
        if not dt.is_floating_point:
            _no_kernel(kernel, dt)
        return op.function(input, other)

    function.__name__ = function.__qualname__ = op.name
    function.__doc__ = op.__doc__
    # (these have no Scalar overload: a number operand is PyTorch's TypeError)
    function = refusing_numbers(function)
    return public("function method inplace", method=function.method)(function)


logaddexp = _float_only(E.logaddexp, "logaddexp_cpu")
logaddexp2 = _float_only(E.logaddexp2, "logaddexp2_cpu")
nextafter = _float_only(E.nextafter, "nextafter_cpu")


@public("function method")
def polygamma(n, input):
    """The ``n``-th derivative of the digamma function (``n = 0``: digamma itself)."""
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return E.digamma(input) if n == 0 else E.polygamma(input, n)


def _polygamma_method(self, n):
    return polygamma(n, self)


polygamma.method = _polygamma_method


@public("method")
def polygamma_(input, n):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return inplace(input, E.polygamma_, n)


@composite("mvlgamma", variants="function method inplace")
def mvlgamma(ctx, x, p):
    """The log of the multivariate gamma function of dimension ``p``:
    ``sum_i lgamma(x - i/2) + p (p - 1) / 4 log(pi)``, ``i < p``."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    ctx.p = p
    ctx.save(x=x)
    plain = Tensor._make(x._data)  # (its values: the node is this op's)
    out = E.lgamma(plain)
    for i in range(1, p):
        out = out + E.lgamma(plain - i / 2)
    return (out + p * (p - 1) / 4 * 1.1447298858494002)._data  # (log(pi))


@mvlgamma.defvjp
def mvlgamma_vjp(ctx, grad):
    x = ctx["x"]
    return grad * sum(E.digamma(x - i / 2) for i in range(ctx.p))


@composite("frexp", variants="function method")
def frexp(ctx, x):
    """(mantissa, exponent): ``x = mantissa * 2 ** exponent``, ``0.5 <= |mantissa| < 1``;
    the exponent int32, as PyTorch's (inf and NaN keep their values, with exponent 0)."""
    if not x.dtype.is_floating_point:
        raise RuntimeError("numbagrad.frexp() only supports floating-point dtypes")
    ctx.non_differentiable = (1,)
    named = R._named("frexp", ("mantissa", "exponent"))
    ctx.wrap = lambda outs: named(*outs)
    ctx.save_outputs = {"exponent": 1}
    mantissa, exponent = np.frexp(x._host())
    return _on(mantissa, x.device), _on(exponent.astype(np.int32), x.device)


@frexp.defvjp
def frexp_vjp(ctx, grads):
    return grads[0] / E.exp2(ctx["exponent"])


@public("function method")
def float_power(input, exponent):
    """``input ** exponent`` computed in float64."""
    if isinstance(input, Tensor):
        input = input.double()
    if isinstance(exponent, Tensor):
        exponent = exponent.double()
        if not isinstance(input, Tensor):
            return E.rpow(exponent, input)
        return E.pow_tensor(input, exponent)
    return E.pow(input, exponent)


@public("method")
def float_power_(input, exponent):
    """``input ** exponent`` in place: only for a float64 ``input``, as PyTorch's."""
    if input.dtype is not D.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype {_CAST_NAMES[input.dtype.name]} "
                           "but the operation's result requires dtype Double")
    return inplace(input, float_power, exponent)


def _heaviside(input, values):
    """0 where ``input < 0``, ``values`` where it is 0, 1 where it is positive (no gradient)."""
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return E.heaviside(input, values)


_heaviside.__name__ = "heaviside"
heaviside = refusing_numbers(_heaviside, ("input", "values"))  # (no Scalar overload)
public("function method inplace", method=heaviside.method)(heaviside)


def _clamp_one(op, tensor_op, is_min):
    def function(input, bound):
        if isinstance(bound, Tensor):
            return tensor_op.function(input, bound)
        dt = D.result_type(input, bound)
        return op.function(input if dt is input.dtype else input.to(dt), bound)

    function.__name__ = function.__qualname__ = op.name
    function.__doc__ = f"{op.name}(input, {'min' if is_min else 'max'}): ``clamp`` on one side."
    return public("function method inplace inplace_function")(function)


clamp_min = _clamp_one(E.clamp_min, E.clamp_min_tensor, True)
clamp_max = _clamp_one(E.clamp_max, E.clamp_max_tensor, False)


ERR_ADDCDIV_INT = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
    "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
    "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
    "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
    "for all dtypes."
)


@public("function method inplace")
def addcmul(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 * tensor2``."""
    return E.addcmul(input, tensor1, tensor2, value)


@public("function method inplace")
def addcdiv(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 / tensor2``."""
    return E.addcdiv(input, *_addcdiv_args(tensor1, tensor2, value=value))


def _addcdiv_args(tensor1, tensor2, *, value=1):
    if not D.result_type(tensor1, tensor2).is_floating_point:
        raise RuntimeError(ERR_ADDCDIV_INT)
    return tensor1, tensor2, value


def _addcmul_args(tensor1, tensor2, *, value=1):
    return tensor1, tensor2, value


# ``x.addcmul_(y, z, value=v)`` written by the op's loop straight into x (``inplace.inplace``)
addcmul.inplace_op, addcmul.inplace_args = E.addcmul, _addcmul_args
addcdiv.inplace_op, addcdiv.inplace_args = E.addcdiv, _addcdiv_args


@public("function")
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each of ``elements`` is among ``test_elements`` (either may be a number): a
    bool tensor of ``elements``' shape, on its device (``invert``: whether it is not)."""
    tensors = [t for t in (elements, test_elements) if isinstance(t, Tensor)]
    if not tensors:
        raise TypeError("isin() received an invalid combination of arguments - got "
                        f"({type(elements).__name__}, {type(test_elements).__name__}), but "
                        "expected one of: (Tensor elements, Tensor test_elements)")
    for t in (elements, test_elements):  # (PyTorch's kernels have none for bool)
        if t.dtype is D.bool_ if isinstance(t, Tensor) else isinstance(t, (bool, np.bool_)):
            raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    values = [t._host() if isinstance(t, Tensor) else np.asarray(t)
              for t in (elements, test_elements)]
    out = np.isin(values[0], values[1], invert=bool(invert))
    return Tensor._make(_on(out, tensors[0].device))


# ---------------------------------------------------------------- Hurwitz zeta, incomplete gamma
# (PyTorch differentiates these in their second argument only: asked for the first's gradient,
# their backward raises, as PyTorch's not_implemented formula does. Composite ops: an
# elementwise op's rule cannot raise on one input and not on the other)


def _plain(a):
    """``a``'s values as a tensor no graph records (a number stays a number)."""
    return Tensor._make(a._data) if isinstance(a, Tensor) else a


def _not_tensor(name, names, args, method=False):
    """PyTorch's TypeError for the first of ``args`` that is no Tensor."""
    for k, a in enumerate(args):
        if not isinstance(a, Tensor):
            raise TypeError(f"{name}(): argument '{names[k]}' (position {k + 1 - method}) must "
                            f"be Tensor, not {type(a).__name__}")


def _asked(ctx, k):
    """Whether this backward pass computes input ``k``'s gradient (PyTorch's
    ``task_should_compute_output``): it has an edge, and under ``autograd.grad(..., inputs)``
    the edge leads to one of the inputs."""
    node = ctx.node.next_functions[k][0]
    if node is None:
        return False
    passes = getattr(running_passes, "passes", None)
    return not passes or passes[-1].plain or node in passes[-1].needed


def invalid_combination(name, args, signatures):
    """PyTorch's TypeError for arguments none of an overloaded function's signatures takes."""
    got = ", ".join(type(a).__name__ for a in args)
    lines = "".join(f" * ({s}, *, Tensor out = None)\n" for s in signatures)
    raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), "
                    f"but expected one of:\n{lines}")


@composite("special_zeta", node="SpecialZetaBackward0")
def special_zeta(ctx, input, other):
    """The Hurwitz zeta function ``sum_k (other + k) ** -input`` (either may be a number)."""
    if not isinstance(input, Tensor):
        ctx.node_name, ctx.number = "SpecialZetaBackward1", input
    elif not isinstance(other, Tensor):
        ctx.node_name, ctx.number = "SpecialZetaBackward2", other
    ctx.save(input=input if isinstance(input, Tensor) else None,
             other=other if isinstance(other, Tensor) else None)
    return E.hurwitz_zeta(_plain(input), _plain(other))._data


@special_zeta.defvjp
def special_zeta_vjp(ctx, grad):
    named = "input" in ctx.saved, "other" in ctx.saved
    if named[0] and _asked(ctx, 0):
        raise NotImplementedError("the derivative for 'zeta' is not implemented.")
    if not named[1]:
        return None
    k = int(named[0])
    if not _asked(ctx, k):
        return (None, None) if named[0] else None
    x = ctx["input"] if named[0] else ctx.number
    # (PyTorch's formula: d zeta(x, q) / dq = -x zeta(x + 1, q))
    g = sum_to(grad * -x * special_zeta(x + 1, ctx["other"]), ctx.input_shapes[k])
    return (None, g) if named[0] else g


# (PyTorch has no forward-mode formula for zeta, igamma, igammac: its error)
special_zeta.defjvp(refused(special_zeta))


def _igamma_op(name, node, upper):
    """``igamma`` or ``igammac`` (``upper``) as a composite op: P(a, x) or Q(a, x)."""

    def forward(ctx, input, other):
        ctx.save(input=input, other=other)  # (input first: an in-place call keeps a copy)
        return E.regularized_gamma(_plain(input), _plain(other), upper)._data

    forward.__name__ = name
    forward.__doc__ = (f"The regularized {'upper' if upper else 'lower'} incomplete gamma "
                       f"function {'Q' if upper else 'P'}(input, other).")
    op = composite(name, node=node)(forward)

    @op.defvjp
    def vjp(ctx, grad):
        if _asked(ctx, 0):
            raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
        if not _asked(ctx, 1):
            return None, None
        a, x = ctx["input"], ctx["other"]
        # (PyTorch's formula: the density of Gamma(a, 1) at x, negated for Q)
        g = (-grad if upper else grad) * E.exp((a - 1) * E.log(x) - x - E.lgamma(a))
        return None, sum_to(g, ctx.input_shapes[1])

    op.defjvp(refused(op))
    return op


igamma_op = _igamma_op("igamma", "IgammaBackward0", 0)
igammac_op = _igamma_op("igammac", "IgammacBackward0", 1)


def _igamma_public(op, name):
    """``numbagrad.<name>``, ``Tensor.<name>``, ``Tensor.<name>_``: tensors only, of a float
    result type (PyTorch's kernel has no other)."""

    def check(input, other, called, method=False):
        _not_tensor(called, ("input", "other"), (input, other), method)
        dt = D.result_type(input, other)
        if not dt.is_floating_point:
            _no_kernel(f"{name}_cpu", dt)

    def function(input, other):
        check(input, other, name)
        return op(input, other)

    def method(self, other):
        check(self, other, name, True)
        return op(self, other)

    def in_place(input, other):
        check(input, other, name + "_", True)
        return op(input, other)

    for f, n in ((function, name), (method, name), (in_place, name + "_")):
        f.__name__ = f.__qualname__ = n
    function.__doc__ = op.__doc__
    function.check = check
    public("function method", name, method=method)(function)
    public("inplace", name)(in_place)
    return function


igamma = _igamma_public(igamma_op, "igamma")
igammac = _igamma_public(igammac_op, "igammac")
