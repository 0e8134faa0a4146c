"""The NeurIPS 2020 tutorial "Deep Implicit Layers" (Kolter, Duvenaud, Johnson), chapters 1 and 4,
scaled down, on generated data, with ``torch.solve(b, A)[0]`` written as its successor
``torch.linalg.solve(A, b)``: chapter 1's TanhFixedPointLayer (a ``while`` loop until
``torch.norm`` of the step is small), TanhNewtonLayer (the Jacobian ``torch.eye(n)[None] -
(1 / torch.cosh(z_linear)**2)[:, :, None] * W[None]``, batched Newton solves, the unconverged rows
zeroed by ``z[torch.norm(g, dim=1) > tol, :] = 0``) and TanhNewtonImplicitLayer (Newton under
``no_grad``, then one differentiable step whose gradient hook ``z.register_hook(lambda grad:
solve(J^T, grad))`` applies the implicit-function theorem), each trained a few epochs with SGD
and the implicit gradients checked by ``gradcheck`` in float64; chapter 4's ``forward_iteration``
and ``anderson`` acceleration (``X[:, k % m] = ...`` writes, ``torch.bmm``, a bordered system
solved per batch), ResNetLayer with GroupNorm, and DEQFixedPoint (solver under ``no_grad``, one
re-engaged call, a backward hook solving the adjoint fixed point with ``autograd.grad(f0, z0, y,
retain_graph=True)``), in a small CIFAR-style model trained with Adam, and its ``gradcheck``.

    python implicit_layers.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.autograd as autograd
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.optim as optim
else:
    import numbagrad as torch
    import numbagrad.autograd as autograd
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F
    import numbagrad.optim as optim

rng = np.random.default_rng(0)


# ---------------------------------------------------------------- chapter 1
class TanhFixedPointLayer(nn.Module):
    def __init__(self, out_features, tol=1e-4, max_iter=50):
        super().__init__()
        self.linear = nn.Linear(out_features, out_features, bias=False)
        self.tol = tol
        self.max_iter = max_iter

    def forward(self, x):
        # initialize output z to be zero
        z = torch.zeros_like(x)
        self.iterations = 0

        # iterate until convergence
        while self.iterations < self.max_iter:
            z_next = torch.tanh(self.linear(z) + x)
            self.err = torch.norm(z - z_next)
            z = z_next
            self.iterations += 1
            if self.err < self.tol:
                break

        return z


class TanhNewtonLayer(nn.Module):
    def __init__(self, out_features, tol=1e-4, max_iter=50):
        super().__init__()
        self.linear = nn.Linear(out_features, out_features, bias=False)
        self.tol = tol
        self.max_iter = max_iter

    def forward(self, x):
        # initialize output z to be zero
        z = torch.tanh(x)
        self.iterations = 0

        # iterate until convergence
        while self.iterations < self.max_iter:
            z_linear = self.linear(z) + x
            g = z - torch.tanh(z_linear)
            self.err = torch.norm(g)
            if self.err < self.tol:
                break

            # newton step
            J = torch.eye(z.shape[1])[None, :, :] - (1 / torch.cosh(z_linear)**2)[:, :, None]*self.linear.weight[None, :, :]
            z = z - torch.linalg.solve(J, g[:, :, None])[:, :, 0]
            self.iterations += 1

        g = z - torch.tanh(self.linear(z) + x)
        z[torch.norm(g, dim=1) > self.tol, :] = 0
        return z


class TanhNewtonImplicitLayer(nn.Module):
    def __init__(self, out_features, tol=1e-4, max_iter=50):
        super().__init__()
        self.linear = nn.Linear(out_features, out_features, bias=False)
        self.tol = tol
        self.max_iter = max_iter

    def forward(self, x):
        # Run Newton's method outside of the autograd framework
        with torch.no_grad():
            z = torch.tanh(x)
            self.iterations = 0
            while self.iterations < self.max_iter:
                z_linear = self.linear(z) + x
                g = z - torch.tanh(z_linear)
                self.err = torch.norm(g)
                if self.err < self.tol:
                    break

                # newton step
                J = torch.eye(z.shape[1], dtype=x.dtype)[None, :, :] - (1 / torch.cosh(z_linear)**2)[:, :, None]*self.linear.weight[None, :, :]
                z = z - torch.linalg.solve(J, g[:, :, None])[:, :, 0]
                self.iterations += 1

        # reengage autograd and add the gradient hook
        z = torch.tanh(self.linear(z) + x)
        z.register_hook(lambda grad: torch.linalg.solve(J.transpose(1, 2), grad[:, :, None])[:, :, 0])
        return z


# a stand-in for MNIST: 64 images of 6x6, ten classes of noisy prototypes
protos = rng.normal(size=(10, 36)).astype(np.float32)
labels = rng.integers(0, 10, 64)
images = protos[labels] + 0.5 * rng.normal(size=(64, 36)).astype(np.float32)
X_all = torch.from_numpy(images.astype(np.float32))
y_all = torch.from_numpy(labels)


def epoch(loader, model, opt=None, monitor=None):
    total_loss, total_err, total_monitor = 0., 0., 0.
    model.eval() if opt is None else model.train()
    for X, y in loader:
        yp = model(X)
        loss = nn.CrossEntropyLoss()(yp, y)
        if opt:
            opt.zero_grad()
            loss.backward()
            if sum(torch.sum(torch.isnan(p.grad)) for p in model.parameters()) == 0:
                opt.step()

        total_err += (yp.max(dim=1)[1] != y).sum().item()
        total_loss += loss.item() * X.shape[0]
        if monitor is not None:
            total_monitor += monitor(model)
    return total_err / len(loader) / 16, total_loss / len(loader) / 16, total_monitor / len(loader)


loader = [(X_all[i:i + 16], y_all[i:i + 16]) for i in range(0, 64, 16)]
for name, layer_cls in (("fixed_point", TanhFixedPointLayer), ("newton", TanhNewtonLayer),
                        ("implicit", TanhNewtonImplicitLayer)):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(),
                          nn.Linear(36, 24),
                          layer_cls(24, max_iter=200),
                          nn.Linear(24, 10))
    numpy_init(torch, model, seed=1)
    with torch.no_grad():  # a contraction, so that each layer converges
        model[2].linear.weight.mul_(0.5)
    opt = optim.SGD(model.parameters(), lr=0.2)
    history = []
    for i in range(4):
        history.append(epoch(loader, model, opt, lambda x: x[2].iterations))
    show(f"{name}_epochs", history)
    show(f"{name}_converged", float(model[2].err < model[2].tol))  # (the residual itself is rounding noise)
    show(f"{name}_weight", model[2].linear.weight[0, :6])
    show(f"{name}_first_grad", model[1].weight.grad[0, :6])

# the implicit gradient against gradcheck, in float64
layer = TanhNewtonImplicitLayer(5, tol=1e-10).double()
numpy_init(torch, layer, seed=2)
with torch.no_grad():
    layer.linear.weight.mul_(0.5)
x = torch.from_numpy(rng.normal(size=(3, 5))).requires_grad_()
show("implicit_gradcheck", float(autograd.gradcheck(layer, x, check_undefined_grad=False)))
z = layer(x)
show("implicit_input_grad", autograd.grad(z.sum(), x)[0][0])
show("implicit_weight_grad", autograd.grad(layer(x).pow(2).sum(), layer.linear.weight)[0][0])


# ---------------------------------------------------------------- chapter 4
def forward_iteration(f, x0, max_iter=50, tol=1e-2):
    f0 = f(x0)
    res = []
    for k in range(max_iter):
        x = f0
        f0 = f(x)
        res.append((f0 - x).norm().item() / (1e-5 + f0.norm().item()))
        if (res[-1] < tol):
            break
    return f0, res


def anderson(f, x0, m=5, lam=1e-4, max_iter=50, tol=1e-2, beta=1.0):
    """ Anderson acceleration for fixed point iteration. """
    bsz, d, H, W = x0.shape
    X = torch.zeros(bsz, m, d*H*W, dtype=x0.dtype, device=x0.device)
    F = torch.zeros(bsz, m, d*H*W, dtype=x0.dtype, device=x0.device)
    X[:, 0], F[:, 0] = x0.view(bsz, -1), f(x0).view(bsz, -1)
    X[:, 1], F[:, 1] = F[:, 0], f(F[:, 0].view_as(x0)).view(bsz, -1)

    H = torch.zeros(bsz, m+1, m+1, dtype=x0.dtype, device=x0.device)
    H[:, 0, 1:] = H[:, 1:, 0] = 1
    y = torch.zeros(bsz, m+1, 1, dtype=x0.dtype, device=x0.device)
    y[:, 0] = 1

    res = []
    for k in range(2, max_iter):
        n = min(k, m)
        G = F[:, :n]-X[:, :n]
        H[:, 1:n+1, 1:n+1] = torch.bmm(G, G.transpose(1, 2)) + lam*torch.eye(n, dtype=x0.dtype, device=x0.device)[None]
        alpha = torch.linalg.solve(H[:, :n+1, :n+1], y[:, :n+1])[:, 1:n+1, 0]   # (bsz x n)

        X[:, k % m] = beta * (alpha[:, None] @ F[:, :n])[:, 0] + (1-beta)*(alpha[:, None] @ X[:, :n])[:, 0]
        F[:, k % m] = f(X[:, k % m].view_as(x0)).view(bsz, -1)
        res.append((F[:, k % m] - X[:, k % m]).norm().item()/(1e-5 + F[:, k % m].norm().item()))
        if (res[-1] < tol):
            break
    return X[:, k % m].view_as(x0), res


class ResNetLayer(nn.Module):
    def __init__(self, n_channels, n_inner_channels, kernel_size=3, num_groups=8):
        super().__init__()
        self.conv1 = nn.Conv2d(n_channels, n_inner_channels, kernel_size, padding=kernel_size//2, bias=False)
        self.conv2 = nn.Conv2d(n_inner_channels, n_channels, kernel_size, padding=kernel_size//2, bias=False)
        self.norm1 = nn.GroupNorm(num_groups, n_inner_channels)
        self.norm2 = nn.GroupNorm(num_groups, n_channels)
        self.norm3 = nn.GroupNorm(num_groups, n_channels)
        self.conv1.weight.data.normal_(0, 0.01)
        self.conv2.weight.data.normal_(0, 0.01)

    def forward(self, z, x):
        y = self.norm1(F.relu(self.conv1(z)))
        return self.norm3(F.relu(z + self.norm2(x + self.conv2(y))))


class DEQFixedPoint(nn.Module):
    def __init__(self, f, solver, **kwargs):
        super().__init__()
        self.f = f
        self.solver = solver
        self.kwargs = kwargs

    def forward(self, x):
        # compute forward pass and re-engage autograd tape
        with torch.no_grad():
            z, self.forward_res = self.solver(lambda z: self.f(z, x), torch.zeros_like(x), **self.kwargs)
        z = self.f(z, x)

        # set up Jacobian vector product (without additional forward calls)
        z0 = z.clone().detach().requires_grad_()
        f0 = self.f(z0, x)

        def backward_hook(grad):
            g, self.backward_res = self.solver(lambda y: autograd.grad(f0, z0, y, retain_graph=True)[0] + grad,
                                               grad, **self.kwargs)
            return g

        z.register_hook(backward_hook)
        return z


def small_normal(module, seed):
    """conv weights ``normal_(0, 0.01)``, from NumPy."""
    r = np.random.default_rng(seed)
    with torch.no_grad():
        for conv in (module.conv1, module.conv2):
            conv.weight.copy_(torch.from_numpy(r.normal(0, 0.01, tuple(conv.weight.shape)).astype(np.float32)))


# the solvers on one layer
f = ResNetLayer(8, 16, num_groups=4)
small_normal(f, 3)
X = torch.from_numpy(rng.normal(size=(4, 8, 6, 6)).astype(np.float32))
Z, res_fw = forward_iteration(lambda Z: f(Z, X), torch.zeros_like(X), tol=1e-4)
Z2, res_and = anderson(lambda Z: f(Z, X), torch.zeros_like(X), tol=1e-4, max_iter=30)
show("forward_iteration_steps", len(res_fw))
show("anderson_steps", len(res_and))
show("anderson_residuals", res_and[:4])
show("solvers_agree", float((Z - Z2).norm() / Z.norm() < 1e-3))
show("fixed_point", Z2[0, 0, 0, :4])

# the DEQ model, trained on 8x8 "CIFAR" images
chan = 8
torch.manual_seed(0)
f = ResNetLayer(chan, 16, kernel_size=3, num_groups=4)
model = nn.Sequential(nn.Conv2d(3, chan, kernel_size=3, bias=True, padding=1),
                      nn.BatchNorm2d(chan),
                      DEQFixedPoint(f, anderson, tol=1e-3, max_iter=25, m=5),
                      nn.BatchNorm2d(chan),
                      nn.AvgPool2d(4, 4),
                      nn.Flatten(),
                      nn.Linear(chan*2*2, 10))
numpy_init(torch, model, seed=4)
small_normal(f, 5)
cifar_protos = rng.normal(size=(10, 3, 8, 8)).astype(np.float32)
cifar_labels = rng.integers(0, 10, 32)
cifar = cifar_protos[cifar_labels] + rng.normal(size=(32, 3, 8, 8)).astype(np.float32)
cifar_loader = [(torch.from_numpy(cifar[i:i + 16]), torch.from_numpy(cifar_labels[i:i + 16]))
                for i in (0, 16)]
opt = optim.Adam(model.parameters(), lr=1e-3)
history = []
for i in range(3):
    history.append(epoch(cifar_loader, model, opt, lambda m: len(m[2].forward_res)))
show("deq_epochs", history)
show("deq_backward_res", model[2].backward_res[:3])
show("deq_f_grad", f.conv1.weight.grad[0, 0, 0])
# (the conv bias before BatchNorm gets a gradient of rounding noise only, which Adam turns
# into full steps: the running variance is what the two libraries share, not the mean)
show("deq_bn_running_var", model[1].running_var)
show("deq_eval", epoch(cifar_loader, model))

# gradcheck: a very small network with double precision, iterating to high precision
f = ResNetLayer(2, 2, num_groups=2).double()
small_normal(f, 6)
deq = DEQFixedPoint(f, anderson, tol=1e-10, max_iter=100).double()
x = torch.from_numpy(np.random.default_rng(9).normal(size=(1, 2, 3, 3))).requires_grad_()
show("deq_gradcheck", float(autograd.gradcheck(deq, x, check_undefined_grad=False)))
