"""PyTorch tutorials "Double Backward with Custom Functions" and "Fusing Convolution and Batch
Norm using Custom Function": a custom ``Function`` whose backward is itself differentiable
(saving inputs, saving outputs, saving intermediate results as outputs), one marked
``once_differentiable``, ``gradcheck``/``gradgradcheck``; then a fused conv + batch norm
``Function`` whose backward uses ``torch.nn.grad.conv2d_weight``/``conv2d_input``, checked by
gradcheck and trained next to the unfused ``nn.Conv2d`` + ``nn.BatchNorm2d``.

    python custom_function.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.autograd.function import once_differentiable
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F
    from numbagrad.autograd.function import once_differentiable

rng = np.random.default_rng(0)


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        # Because we are saving one of the inputs use `save_for_backward`
        # Save non-tensors and non-inputs/non-outputs directly on ctx
        ctx.save_for_backward(x)
        return x**2

    @staticmethod
    def backward(ctx, grad_out):
        # A function support double backward automatically if autograd
        # is able to record the computations performed in backward
        x, = ctx.saved_tensors
        return grad_out * 2 * x


# Use double precision because finite differencing method magnifies errors
x = torch.from_numpy(rng.normal(size=(3, 3))).requires_grad_()
show('square_gradcheck', torch.autograd.gradcheck(Square.apply, x))
# Use gradcheck to verify second-order derivatives
show('square_gradgradcheck', torch.autograd.gradgradcheck(Square.apply, x))
y = Square.apply(x)
g, = torch.autograd.grad(y.sum(), x, create_graph=True)
show('square_grad', g)
gg, = torch.autograd.grad(g.sum(), x)
show('square_gradgrad', gg)


class Exp(torch.autograd.Function):
    # Simple case where everything goes well
    @staticmethod
    def forward(ctx, x):
        # This time we save the output
        result = torch.exp(x)
        # Note that we should use `save_for_backward` here when
        # the tensor saved is an ouptut (or an input).
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_out):
        result, = ctx.saved_tensors
        return result * grad_out


x = torch.tensor(1., requires_grad=True, dtype=torch.double).clone()
# Validate our gradients using gradcheck
show('exp_gradcheck', torch.autograd.gradcheck(Exp.apply, x))
show('exp_gradgradcheck', torch.autograd.gradgradcheck(Exp.apply, x))
out = Exp.apply(x)
print(type(out.grad_fn).__name__ == 'ExpBackward')


class Sinh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        expx = torch.exp(x)
        expnegx = torch.exp(-x)
        ctx.save_for_backward(expx, expnegx)
        # In order to be able to save the intermediate results, a trick is to
        # include them as our outputs, so that the backward graph is constructed
        return (expx - expnegx) / 2, expx, expnegx

    @staticmethod
    def backward(ctx, grad_out, _grad_out_exp, _grad_out_negexp):
        expx, expnegx = ctx.saved_tensors
        grad_input = grad_out * (expx + expnegx) / 2
        # We cannot skip accumulating these even though we won't use the outputs
        # directly. They will be used later in the second backward.
        grad_input += _grad_out_exp * expx
        grad_input -= _grad_out_negexp * expnegx
        return grad_input


def sinh(x):
    # Create a wrapper that only returns the first output
    return Sinh.apply(x)[0]


x = torch.from_numpy(rng.normal(size=(3, 3))).requires_grad_()
show('sinh_gradcheck', torch.autograd.gradcheck(sinh, x))
show('sinh_gradgradcheck', torch.autograd.gradgradcheck(sinh, x))
s = sinh(x)
g, = torch.autograd.grad(s.sum(), x, create_graph=True)
show('sinh_gradgrad', torch.autograd.grad(g.sum(), x)[0])


class SinhBad(torch.autograd.Function):
    # This is an example of what NOT to do!
    @staticmethod
    def forward(ctx, x):
        expx = torch.exp(x)
        expnegx = torch.exp(-x)
        ctx.expx = expx
        ctx.expnegx = expnegx
        return (expx - expnegx) / 2

    @staticmethod
    def backward(ctx, grad_out):
        expx = ctx.expx
        expnegx = ctx.expnegx
        grad_input = grad_out * (expx + expnegx) / 2
        return grad_input


x = torch.from_numpy(rng.normal(size=(2, 2))).requires_grad_()
g, = torch.autograd.grad(SinhBad.apply(x).sum(), x, create_graph=True)
show('sinhbad_grad_no_graph', g.requires_grad)


def cube_forward(x):
    return x**3


def cube_backward(grad_out, x):
    return grad_out * 3 * x**2


def cube_backward_backward(grad_out, sav_grad_out, x):
    return grad_out * sav_grad_out * 6 * x


def cube_backward_backward_grad_out(grad_out, x):
    return grad_out * 3 * x**2


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return cube_forward(x)

    @staticmethod
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        return CubeBackward.apply(grad_out, x)


class CubeBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, grad_out, x):
        ctx.save_for_backward(x, grad_out)
        return cube_backward(grad_out, x)

    @staticmethod
    def backward(ctx, grad_out):
        x, sav_grad_out = ctx.saved_tensors
        dx = cube_backward_backward(grad_out, sav_grad_out, x)
        dgrad_out = cube_backward_backward_grad_out(grad_out, x)
        return dgrad_out, dx


x = torch.tensor(2., requires_grad=True, dtype=torch.double)
show('cube_gradcheck', torch.autograd.gradcheck(Cube.apply, x))
show('cube_gradgradcheck', torch.autograd.gradgradcheck(Cube.apply, x))


class OnceSquare(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        return grad_out * 2 * x


x = torch.tensor([1.5, -2.0], dtype=torch.double, requires_grad=True)
v = torch.ones(2, dtype=torch.double, requires_grad=True)
g, = torch.autograd.grad(OnceSquare.apply(x), x, grad_outputs=v, create_graph=True)
show('once_grad', g)
show('once_grad_requires_grad', g.requires_grad)
try:
    g.sum().backward()
except RuntimeError as e:
    show('once_error', 'trying to differentiate twice a function that was marked with @once_differentiable' in str(e))


# ----- Fusing Convolution and Batch Norm using Custom Function
def convolution_backward(grad_out, X, weight):
    grad_input = F.conv2d(X.transpose(0, 1), grad_out.transpose(0, 1)).transpose(0, 1)
    grad_X = F.conv_transpose2d(grad_out, weight)
    return grad_X, grad_input


class Conv2D(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, weight):
        ctx.save_for_backward(X, weight)
        return F.conv2d(X, weight)

    # Use @once_differentiable by default unless we intend to double backward
    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        X, weight = ctx.saved_tensors
        return convolution_backward(grad_out, X, weight)


weight = torch.from_numpy(rng.normal(size=(5, 3, 3, 3))).requires_grad_()
X = torch.from_numpy(rng.normal(size=(2, 3, 7, 7))).requires_grad_()
show('conv_gradcheck', torch.autograd.gradcheck(Conv2D.apply, (X, weight)))
# the same gradients by torch.nn.grad
go = torch.from_numpy(rng.normal(size=(2, 5, 5, 5)))
gX, gW = convolution_backward(go, X, weight)
show('nn_grad_input_close', bool(torch.allclose(torch.nn.grad.conv2d_input(X.shape, weight, go), gX)))
show('nn_grad_weight_close', bool(torch.allclose(torch.nn.grad.conv2d_weight(X, weight.shape, go), gW)))
show('nn_grad_weight', torch.nn.grad.conv2d_weight(X, weight.shape, go[:, :, :4, :4], stride=2, padding=1)[0, 0])
show('nn_grad_input', torch.nn.grad.conv2d_input((2, 3, 8, 8), weight, go[:, :, :4, :4], stride=2, padding=1)[0, 0, 0])


def unsqueeze_all(t):
    # Helper function to unsqueeze all the dimensions that we reduce over
    return t[None, :, None, None]


def batch_norm_backward(grad_out, X, sum, sqrt_var, N, eps):
    # We use the formula: out = (X - mean(X)) / (sqrt(var(X)) + eps)
    # in batch norm 2d's forward. To simplify our derivation, we follow the
    # chain rule and compute the gradients as follows before accumulating
    # them all into a final grad_input.
    #  1) 'grad of out wrt var(X)' * 'grad of var(X) wrt X'
    #  2) 'grad of out wrt mean(X)' * 'grad of mean(X) wrt X'
    #  3) 'grad of out wrt X in the numerator' * 'grad of X wrt X'
    # We then rewrite the formulas to use as few extra buffers as possible
    tmp = ((X - unsqueeze_all(sum) / N) * grad_out).sum(dim=(0, 2, 3))
    tmp *= -1
    d_denom = tmp / (sqrt_var + eps)**2  # d_denom = -num / denom**2
    # It is useful to delete tensors when you no longer need them with `del`
    # For example, we could've done `del tmp` here because we won't use it later
    # In this case, it's not a big difference because tmp only has size of (C,)
    # The important thing is avoid allocating NCHW-sized tensors unnecessarily
    d_var = d_denom / (2 * sqrt_var)  # denom = torch.sqrt(var) + eps
    # Compute d_mean_dx before allocating the final NCHW-sized grad_input buffer
    d_mean_dx = grad_out / unsqueeze_all(sqrt_var + eps)
    d_mean_dx = unsqueeze_all(-d_mean_dx.sum(dim=(0, 2, 3)) / N)
    # d_mean_dx has already been reassigned to a C-sized buffer so no need to worry

    # (1) unbiased_var(x) = ((X - unsqueeze_all(mean))**2).sum(dim=(0, 2, 3)) / (N - 1)
    grad_input = X * unsqueeze_all(d_var * N)
    grad_input += unsqueeze_all(-d_var * sum)
    grad_input *= 2 / ((N - 1) * N)
    # (2) mean (see above)
    grad_input += d_mean_dx
    # (3) Add 'grad_out / <factor>' without allocating an extra buffer
    grad_input *= unsqueeze_all(sqrt_var + eps)
    grad_input += grad_out
    grad_input /= unsqueeze_all(sqrt_var + eps)  # sqrt_var + eps > 0!
    return grad_input


class BatchNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, eps=1e-3):
        # Don't save keepdim'd values for backward
        sum = X.sum(dim=(0, 2, 3))
        var = X.var(unbiased=True, dim=(0, 2, 3))
        N = X.numel() / X.size(1)
        sqrt_var = torch.sqrt(var)
        ctx.save_for_backward(X)
        ctx.eps = eps
        ctx.sum = sum
        ctx.N = N
        ctx.sqrt_var = sqrt_var
        mean = sum / N
        denom = sqrt_var + eps
        out = X - unsqueeze_all(mean)
        out /= unsqueeze_all(denom)
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        X, = ctx.saved_tensors
        return batch_norm_backward(grad_out, X, ctx.sum, ctx.sqrt_var, ctx.N, ctx.eps)


a = torch.from_numpy(rng.normal(size=(1, 2, 3, 4))).requires_grad_()
show('bn_gradcheck', torch.autograd.gradcheck(BatchNorm.apply, (a,), fast_mode=False))


class FusedConvBN2DFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, conv_weight, eps=1e-3):
        assert X.ndim == 4  # N, C, H, W
        # (1) Only need to save this single buffer for backward!
        ctx.save_for_backward(X, conv_weight)

        # (2) Exact same Conv2D forward from example above
        X = F.conv2d(X, conv_weight)
        # (3) Exact same BatchNorm2D forward from example above
        sum = X.sum(dim=(0, 2, 3))
        var = X.var(unbiased=True, dim=(0, 2, 3))
        N = X.numel() / X.size(1)
        sqrt_var = torch.sqrt(var)
        ctx.eps = eps
        ctx.sum = sum
        ctx.N = N
        ctx.sqrt_var = sqrt_var
        mean = sum / N
        denom = sqrt_var + eps
        # Try to do as many things in-place as possible
        # Instead of `out = (X - a) / b`, doing `out = X - a; out /= b`
        # avoids allocating one extra NCHW-sized buffer here
        out = X - unsqueeze_all(mean)
        out /= unsqueeze_all(denom)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        X, conv_weight, = ctx.saved_tensors
        # (4) Batch norm backward
        # (5) We need to recompute conv
        X_conv_out = F.conv2d(X, conv_weight)
        grad_out = batch_norm_backward(grad_out, X_conv_out, ctx.sum, ctx.sqrt_var,
                                       ctx.N, ctx.eps)
        # (6) Conv2d backward
        grad_X, grad_input = convolution_backward(grad_out, X, conv_weight)
        return grad_X, grad_input, None, None, None, None, None


weight = torch.from_numpy(rng.normal(size=(5, 3, 3, 3))).requires_grad_()
X = torch.from_numpy(rng.normal(size=(2, 3, 4, 5))).requires_grad_()
show('fused_gradcheck', torch.autograd.gradcheck(FusedConvBN2DFunction.apply, (X, weight)))


class FusedConvBN(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, exp_avg_factor=0.1,
                 eps=1e-3, device=None, dtype=None):
        super(FusedConvBN, self).__init__()
        factory_kwargs = {'device': device, 'dtype': dtype}
        # Conv parameters
        weight_shape = (out_channels, in_channels, kernel_size, kernel_size)
        self.conv_weight = nn.Parameter(torch.empty(*weight_shape, **factory_kwargs))
        # Batch norm parameters
        num_features = out_channels
        self.num_features = num_features
        self.eps = eps
        # Initialize
        self.reset_parameters()

    def forward(self, X):
        return FusedConvBN2DFunction.apply(X, self.conv_weight, self.eps)

    def reset_parameters(self) -> None:
        nn.init.kaiming_uniform_(self.conv_weight, a=5 ** 0.5)


class Net(nn.Module):
    def __init__(self, fused=True):
        super(Net, self).__init__()
        self.fused = fused
        if fused:
            self.convbn1 = FusedConvBN(1, 4, 3)
            self.convbn2 = FusedConvBN(4, 8, 3)
        else:
            self.conv1 = nn.Conv2d(1, 4, 3, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(4, affine=False, track_running_stats=False)
            self.conv2 = nn.Conv2d(4, 8, 3, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(8, affine=False, track_running_stats=False)
        self.fc1 = nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        if self.fused:
            x = self.convbn1(x)
        else:
            x = self.conv1(x)
            x = self.bn1(x)
        F.relu_(x)
        if self.fused:
            x = self.convbn2(x)
        else:
            x = self.conv2(x)
            x = self.bn2(x)
        F.relu_(x)
        x = F.max_pool2d(x, 2)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        output = F.log_softmax(x, dim=1)
        return output


data = torch.from_numpy(rng.normal(size=(8, 1, 12, 12)).astype(np.float32))
target = torch.from_numpy(rng.integers(0, 10, 8))
w1 = rng.uniform(-0.3, 0.3, size=(4, 1, 3, 3)).astype(np.float32)
w2 = rng.uniform(-0.2, 0.2, size=(8, 4, 3, 3)).astype(np.float32)
fcw = rng.uniform(-0.1, 0.1, size=(10, 128)).astype(np.float32)
results = {}
for fused in (True, False):
    model = Net(fused=fused)
    with torch.no_grad():
        (model.convbn1.conv_weight if fused else model.conv1.weight).copy_(torch.from_numpy(w1))
        (model.convbn2.conv_weight if fused else model.conv2.weight).copy_(torch.from_numpy(w2))
        model.fc1.weight.copy_(torch.from_numpy(fcw))
        model.fc1.bias.zero_()
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    losses = []
    for step in range(4):
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    results[fused] = losses
show('fused_losses', results[True])
show('unfused_losses', results[False])
# (the fused batch norm divides by sqrt(unbiased var) + eps, nn.BatchNorm2d by
# sqrt(biased var + eps): close, not equal)
show('fused_vs_unfused_close', bool(abs(results[True][0] - results[False][0]) < 0.05))
