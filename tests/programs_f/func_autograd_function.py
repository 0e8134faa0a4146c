"""PyTorch tutorial "Extending torch.func with autograd.Function": Functions whose ``forward``
takes no ctx and a separate ``setup_context(ctx, inputs, output)`` saves tensors; NumpySort
(``np.argsort``/``np.take_along_axis`` on ``x.cpu().numpy()``, intermediates returned as outputs
and ``ctx.mark_non_differentiable``) whose backward is another Function, NumpyTake, so that
``torch.func.grad`` and second derivatives work; MyCube returning ``(result, dx)`` whose backward
adds the ``grad_dx * 6 * x`` term, differentiated twice by ``torch.func.grad(torch.func.grad(...))``;
``generate_vmap_rule = True`` on MyCube under ``torch.vmap``; hand-written ``vmap``
staticmethods (``info.batch_size``, ``in_dims``, ``movedim`` to the front, out_dims tuples) for
NumpySort/NumpyTake, with ``torch.vmap(numpy_sort)`` and ``vmap`` of ``grad``; a ``jvp``
staticmethod with ``ctx.save_for_forward`` used by ``torch.func.jvp``; and the same Functions
under ordinary ``.backward()``, ``torch.autograd.grad(create_graph=True)``, ``jacrev`` and
``gradcheck``.

    python func_autograd_function.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
else:
    import numbagrad as torch

rng = np.random.default_rng(0)


def randn(*shape, dtype=np.float32):
    return torch.from_numpy(rng.normal(size=shape).astype(dtype))


def to_numpy(tensor):
    return tensor.cpu().numpy()


class NumpySort(torch.autograd.Function):
    # Note that forward does not take ctx
    @staticmethod
    def forward(x, dim):
        device = x.device
        x = to_numpy(x)
        ind = np.argsort(x, axis=dim)
        ind_inv = np.argsort(ind, axis=dim)
        result = np.take_along_axis(x, ind, axis=dim)
        # Any intermediates to be saved in backward must be returned as
        # outputs.
        return (
            # The desired output
            torch.tensor(result, device=device),
            # intermediate to save for backward
            torch.tensor(ind, device=device),
            # intermediate to save for backward
            torch.tensor(ind_inv, device=device),
        )

    # setup_context is responsible for calling methods and/or assigning to
    # the ctx object. Please do not do additional compute (e.g. add
    # Tensors together) in setup_context.
    @staticmethod
    def setup_context(ctx, inputs, output):
        x, dim = inputs
        # Note that output is whatever you returned from forward.
        # If you returned multiple values, then output is a Tuple of multiple values.
        _, ind, ind_inv = output
        ctx.mark_non_differentiable(ind, ind_inv)
        # Tensors must be saved via ctx.save_for_backward. Please do not
        # assign them directly onto the ctx object.
        ctx.save_for_backward(ind, ind_inv)
        # Non-tensors may be saved by assigning them as attributes on the ctx object.
        ctx.dim = dim

    @staticmethod
    def backward(ctx, grad_output, _0, _1):
        # We've written the backward pass of NumpySort in terms of another
        # autograd.Function, NumpyTake.
        ind, ind_inv = ctx.saved_tensors
        return NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim), None

    @staticmethod
    def vmap(info, in_dims, x, dim):
        # The strategy is: move the batch dimension to the front
        # and then call NumpySort on the new input.
        x_bdim, _ = in_dims
        x = x.movedim(x_bdim, 0)
        # Handle negative dims correctly
        dim = dim if dim >= 0 else dim + x.dim() - 1
        result = NumpySort.apply(x, dim + 1)

        # The vmap rule must return a tuple of two things
        # 1. the output. Should be the same amount of things
        #    as returned by the forward().
        # 2. one Optional[int] for each output specifying where
        #    the batch dimension is on the output.
        return result, (0, 0, 0)


class NumpyTake(torch.autograd.Function):
    @staticmethod
    def forward(x, ind, ind_inv, dim):
        device = x.device
        x = to_numpy(x)
        ind = to_numpy(ind)
        return torch.tensor(np.take_along_axis(x, ind, dim), device=device)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, ind, ind_inv, dim = inputs
        ctx.save_for_backward(ind, ind_inv)
        ctx.dim = dim

    @staticmethod
    def backward(ctx, grad_output):
        ind, ind_inv = ctx.saved_tensors
        result = NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim)
        return result, None, None, None

    @staticmethod
    def vmap(info, in_dims, x, ind, ind_inv, dim):
        x_bdim, ind_bdim, ind_inv_bdim, _ = in_dims

        # The strategy is: expand {x, ind, ind_inv} to all have the dimension
        # being vmapped over.
        # Then, call back into NumpyTake(expanded_x, expanded_ind, expanded_ind_inv, new_dim).

        # Handle negative dims by wrapping them to be positive
        logical_dim = x.dim() if x_bdim is None else x_bdim - 1
        dim = dim if dim >= 0 else dim + logical_dim

        def maybe_expand_bdim_at_front(x, x_bdim):
            if x_bdim is None:
                return x.expand(info.batch_size, *x.shape)
            return x.movedim(x_bdim, 0)

        # If the Tensor doesn't have the dimension being vmapped over,
        # expand it out. Otherwise, move it to the front of the Tensor
        x = maybe_expand_bdim_at_front(x, x_bdim)
        ind = maybe_expand_bdim_at_front(ind, ind_bdim)
        ind_inv = maybe_expand_bdim_at_front(ind_inv, ind_inv_bdim)

        # The return is a tuple (output, out_dims). Since output is a Tensor,
        # then out_dims is an Optional[int] (instead of a Tuple).
        return NumpyTake.apply(x, ind, ind_inv, dim + 1), 0


def numpy_sort(x, dim=-1):
    result, _, _ = NumpySort.apply(x, dim)
    return result


# ---- Example 1: autograd.Function calls into another system
x = randn(2, 3)
show("x", x)
show("numpy_sort", numpy_sort(x))
grad_x = torch.func.grad(lambda x: numpy_sort(x).sum())(x)
assert torch.allclose(grad_x, torch.ones_like(x))
show("func_grad_sort_sum", grad_x)

weights = torch.tensor([1.0, 2.0, 3.0])
grad_w = torch.func.grad(lambda x: (numpy_sort(x) * weights).sum())(x)
show("func_grad_sort_weighted", grad_w)

# the same through ordinary autograd
xr = x.clone().requires_grad_()
(numpy_sort(xr) * weights).sum().backward()
show("backward_sort_weighted", xr.grad)
sorted_, ind, ind_inv = NumpySort.apply(xr, -1)
show("ind_requires_grad", float(ind.requires_grad))
show("ind_dtype_int64", float(ind.dtype == torch.int64))
show("sort_dim0", numpy_sort(x, 0))

# double backward through NumpyTake's own backward
xr = x.clone().requires_grad_()
y = (numpy_sort(xr) ** 2 * weights).sum()
(g,) = torch.autograd.grad(y, xr, create_graph=True)
show("first_grad", g)
(gg,) = torch.autograd.grad((g * weights.flip(0)).sum(), xr)
show("second_grad", gg)


# ---- Example 2: autograd.Function specifies custom gradient rules
class MyCube(torch.autograd.Function):
    @staticmethod
    def forward(x):
        result = x ** 3
        # In regular PyTorch, if we had just run y = x ** 3, then the backward
        # pass computes dx = 3 * x ** 2. In this autograd.Function, we've done
        # that computation here in the forward pass instead.
        dx = 3 * x ** 2
        return result, dx

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, = inputs
        result, dx = output
        ctx.save_for_backward(x, dx)

    @staticmethod
    def backward(ctx, grad_output, grad_dx):
        x, dx = ctx.saved_tensors
        # In order for the autograd.Function to work with higher-order
        # gradients, we must add the gradient contribution of `dx`.
        result = grad_output * dx + grad_dx * 6 * x
        return result


def my_cube(x):
    result, _ = MyCube.apply(x)
    return result


x = randn()
ggx = torch.func.grad(torch.func.grad(my_cube))(x)
assert torch.allclose(ggx, 6 * x)
show("cube_x", x)
show("cube_grad", torch.func.grad(my_cube)(x))
show("cube_grad_grad", ggx)


# ---- torch.vmap: generate_vmap_rule=True
class MyCubeAuto(torch.autograd.Function):
    # Set generate_vmap_rule to True to ask PyTorch to automatically generate
    # a vmap rule.
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        result = x ** 3
        dx = 3 * x ** 2
        return result, dx

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, = inputs
        result, dx = output
        ctx.save_for_backward(x, dx)

    @staticmethod
    def backward(ctx, grad_output, grad_dx):
        x, dx = ctx.saved_tensors
        result = grad_output * dx + grad_dx * 6 * x
        return result


def my_cube_auto(x):
    result, dx = MyCubeAuto.apply(x)
    return result


x = randn(3)
result = torch.vmap(my_cube_auto)(x)
assert torch.allclose(result, x ** 3)
show("vmap_auto_cube", result)
show("vmap_grad_cube", torch.vmap(torch.func.grad(my_cube_auto))(x))
show("vmap_grad_grad_cube", torch.vmap(torch.func.grad(torch.func.grad(my_cube_auto)))(x))

# ---- torch.vmap: the hand-written vmap staticmethods
x = randn(2, 3)
result = torch.vmap(numpy_sort)(x)
assert torch.allclose(result, numpy_sort(result, 1))
show("vmap_numpy_sort", result)
x3 = randn(4, 2, 3)
show("vmap_numpy_sort_in_dims1", torch.vmap(numpy_sort, in_dims=1)(x3)[:, 0])
show("vmap_grad_numpy_sort",
     torch.vmap(torch.func.grad(lambda r: (numpy_sort(r) * weights).sum()))(x))


# ---- torch.func.jvp: a jvp staticmethod
class MyExp(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)
        ctx.save_for_forward(output)

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result

    @staticmethod
    def jvp(ctx, x_t):
        result, = ctx.saved_tensors
        return result * x_t


x = randn(4)
t = randn(4)
out, jvp_out = torch.func.jvp(MyExp.apply, (x,), (t,))
show("jvp_primal", out)
show("jvp_tangent", jvp_out)
show("jvp_matches_exp", float(torch.allclose(jvp_out, x.exp() * t)))
show("jacrev_myexp", torch.func.jacrev(MyExp.apply)(x))
out, vjp_fn = torch.func.vjp(MyExp.apply, x)
show("vjp_myexp", vjp_fn(torch.ones(4))[0])

# gradcheck in double precision, as the docs recommend
xd = torch.from_numpy(rng.normal(size=(3, 4))).requires_grad_()
show("gradcheck_sort", float(torch.autograd.gradcheck(lambda r: numpy_sort(r), (xd,))))
show("gradcheck_cube", float(torch.autograd.gradcheck(my_cube, (xd,))))
show("gradgradcheck_cube", float(torch.autograd.gradgradcheck(my_cube, (xd,))))
show("gradcheck_exp", float(torch.autograd.gradcheck(MyExp.apply, (xd,))))
