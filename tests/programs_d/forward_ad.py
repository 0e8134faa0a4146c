"""PyTorch tutorial "Forward-mode Automatic Differentiation": dual tensors under
``fwAD.dual_level()`` (``make_dual``, ``unpack_dual`` and its ``.tangent``), the same with
modules (parameters swapped for dual tensors via ``del_attr``/``setattr`` and via
``torch.func.functional_call``), a custom Function with ``jvp``, and ``torch.func.jvp`` and
``linearize``-style products checked against reverse mode.

    python forward_ad.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.autograd.forward_ad as fwAD
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.func import functional_call, jvp, vjp
else:
    import numbagrad as torch
    import numbagrad.autograd.forward_ad as fwAD
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F
    from numbagrad.func import functional_call, jvp, vjp

rng = np.random.default_rng(0)
primal = torch.from_numpy(rng.normal(size=(10, 10)).astype(np.float32))
tangent = torch.from_numpy(rng.normal(size=(10, 10)).astype(np.float32))


def fn(x, y):
    return x ** 2 + y ** 2


# All forward AD computation must be performed in the context of
# a ``dual_level`` context. All dual tensors created in such a context
# will have their tangents destroyed upon exit. This is to ensure that
# if the output or intermediate results of this computation are reused
# in a future forward AD computation, their tangents (which are associated
# with this computation) won't be confused with tangents from a later
# computation.
with fwAD.dual_level():
    # To create a dual tensor we associate a tensor, which we call the
    # primal with another tensor of the same size, which we call the tangent.
    # If the layout of the tangent is different from that of the primal,
    # The values of the tangent are copied into a new tensor with the same
    # metadata as the primal. Otherwise, the tangent itself is used as-is.
    #
    # It is also important to note that the dual tensor created by
    # ``make_dual`` is a view of the primal.
    dual_input = fwAD.make_dual(primal, tangent)
    assert fwAD.unpack_dual(dual_input).tangent is tangent

    # To demonstrate the case where the copy of the tangent happens,
    # we pass in a tangent with a layout different from that of the primal
    dual_input_alt = fwAD.make_dual(primal, tangent.T)
    assert fwAD.unpack_dual(dual_input_alt).tangent is not tangent

    # Tensors that do not have an associated tangent are automatically
    # considered to have a zero-filled tangent of the same shape.
    plain_tensor = torch.from_numpy(rng.normal(size=(10, 10)).astype(np.float32))
    dual_output = fn(dual_input, plain_tensor)

    # Unpacking the dual returns a ``namedtuple`` with ``primal`` and ``tangent``
    # as attributes
    jvp_out = fwAD.unpack_dual(dual_output).tangent
    show('alt_tangent_contiguous', fwAD.unpack_dual(dual_input_alt).tangent.is_contiguous())
    show('alt_tangent', fwAD.unpack_dual(dual_input_alt).tangent[0, :4])

assert fwAD.unpack_dual(dual_output).tangent is None
show('jvp_out', jvp_out[0])
show('jvp_out_analytic', bool(torch.allclose(jvp_out, 2 * primal * tangent)))

# Usage with Modules
model = nn.Linear(5, 5)
numpy_init(torch, model)
input = torch.from_numpy(rng.normal(size=(16, 5)).astype(np.float32))

params = {name: p for name, p in model.named_parameters()}
tangents = {name: torch.from_numpy(rng.normal(size=tuple(p.shape)).astype(np.float32)) for name, p in params.items()}

with fwAD.dual_level():
    for name, p in params.items():
        delattr(model, name)
        setattr(model, name, fwAD.make_dual(p, tangents[name]))

    out = model(input)
    jvp_module = fwAD.unpack_dual(out).tangent
show('module_jvp', jvp_module[:2])

# Using the functional Module API (beta)
model = nn.Linear(5, 5)
numpy_init(torch, model)
dual_params = {}
with fwAD.dual_level():
    for name, p in params.items():
        # Using the same ``tangents`` from the above section
        dual_params[name] = fwAD.make_dual(p, tangents[name])
    out = functional_call(model, dual_params, input)
    jvp_functional = fwAD.unpack_dual(out).tangent
show('functional_jvp_matches', bool(torch.allclose(jvp_functional, jvp_module)))

# Check our results
with fwAD.dual_level():
    dual_input = fwAD.make_dual(input, torch.ones_like(input))
    out = model(dual_input)
    show('input_tangent_out', fwAD.unpack_dual(out).tangent[0])

# Custom autograd Function
class Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, foo):
        result = torch.exp(foo)
        # Tensors stored in ``ctx`` can be used in the subsequent forward grad
        # computation.
        ctx.result = result
        return result

    @staticmethod
    def jvp(ctx, gI):
        gO = gI * ctx.result
        # If the tensor stored in`` ctx`` will not also be used in the backward pass,
        # one can manually free it using ``del``
        del ctx.result
        return gO


fn = Fn.apply

primal = torch.from_numpy(rng.normal(size=(10, 10))).requires_grad_()
tangent = torch.from_numpy(rng.normal(size=(10, 10)))

with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    dual_output = fn(dual_input)
    jvp_output = fwAD.unpack_dual(dual_output).tangent

# It is important to use ``autograd.gradcheck`` to verify that your
# custom autograd Function computes the gradients correctly. By default,
# ``gradcheck`` only checks the backward-mode (reverse-mode) AD gradients. Specify
# ``check_forward_ad=True`` to also check forward grads. If you did not
# implement the backward formula for your function, you can also tell ``gradcheck``
# to skip the tests that require backward-mode AD by specifying
# ``check_backward_ad=False``, ``check_undefined_grad=False``, and
# ``check_batched_grad=False``.
show('custom_gradcheck', torch.autograd.gradcheck(Fn.apply, (primal,), check_forward_ad=True,
                                                  check_backward_ad=False, check_undefined_grad=False,
                                                  check_batched_grad=False))
show('custom_jvp', jvp_output[0, :5])

# Functional API (beta): torch.func.jvp
x = torch.from_numpy(rng.normal(size=5).astype(np.float32))
y = torch.from_numpy(rng.normal(size=5).astype(np.float32))


def f(x, y):
    return (x * y)


# In the ``jvp(f, primals, tangents)`` call, ``primals`` and ``tangents`` are tuples.
_, output = jvp(f, (x, y), (torch.ones(5), torch.ones(5)))
show('func_jvp', output)
show('func_jvp_sum', bool(torch.allclose(output, x + y)))

# Using the functional API with Modules
model = nn.Linear(5, 5)
numpy_init(torch, model, seed=2)
input = torch.from_numpy(rng.normal(size=(16, 5)).astype(np.float32))
tangents = tuple([torch.from_numpy(rng.normal(size=tuple(p.shape)).astype(np.float32)) for p in model.parameters()])

# Given a ``torch.nn.Module``, ``ft.functional_call`` extracts the state
# (``params`` and buffers) and returns a functional version of the model that
# can be invoked like a function.
func, params = model, tuple(model.parameters())


def func_params_only(*params):
    names = [n for n, _ in model.named_parameters()]
    return functional_call(func, dict(zip(names, params)), (input,))


model_output, jvp_out = jvp(func_params_only, params, tangents)
show('module_func_jvp', jvp_out[:2])

# forward over reverse: the jvp of a gradient, against reverse over reverse
w = torch.from_numpy(rng.normal(size=(4, 3))).requires_grad_()
xs = torch.from_numpy(rng.normal(size=(6, 4)))
v = torch.from_numpy(rng.normal(size=(4, 3)))


def loss(w):
    return F.softplus(xs @ w).pow(2).mean()


_, hvp_fwd = jvp(lambda w: torch.func.grad(loss)(w), (w.detach(),), (v,))
g, = torch.autograd.grad(loss(w), w, create_graph=True)
hvp_rev, = torch.autograd.grad(g, w, v)
show('hvp_fwd_rev', bool(torch.allclose(hvp_fwd, hvp_rev)))
show('hvp', hvp_fwd[0])
_, vjp_fn = vjp(loss, w.detach())
show('vjp_grad', vjp_fn(torch.tensor(1.0, dtype=torch.float64))[0][1])

# forward AD through common layers: the tangent of a small CNN's output
net = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.Tanh(), nn.Flatten(), nn.Linear(2 * 4 * 4, 3),
                    nn.LogSoftmax(dim=1))
numpy_init(torch, net, seed=3)
img = torch.from_numpy(rng.normal(size=(2, 1, 6, 6)).astype(np.float32))
timg = torch.from_numpy(rng.normal(size=(2, 1, 6, 6)).astype(np.float32))
net.eval()
with fwAD.dual_level():
    out = net(fwAD.make_dual(img, timg))
    p, t = fwAD.unpack_dual(out)
show('cnn_primal', p)
show('cnn_tangent', t)
_, t2 = jvp(net, (img,), (timg,))
show('cnn_tangent_func', bool(torch.allclose(t, t2, atol=1e-6)))

# forward-over-reverse checked by gradgradcheck
xd = torch.from_numpy(rng.normal(size=(2, 3))).requires_grad_()
show('fwd_over_rev', torch.autograd.gradgradcheck(lambda x: (x.sin() * x).tanh(), (xd,),
                                                  check_fwd_over_rev=True))
show('gradcheck_both', torch.autograd.gradcheck(lambda x: F.softplus(x).log_softmax(1), (xd,),
                                                check_forward_ad=True))
