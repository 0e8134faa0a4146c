"""Physics-informed neural networks for the damped harmonic oscillator, after Ben Moseley's
"So, what is a physics-informed neural network?" notebook: the ``exact_solution`` with
``torch.cos``/``torch.exp``, the FCN of nested ``nn.Sequential``s with Tanh, a boundary point
``torch.tensor(0.).view(-1, 1).requires_grad_(True)`` and collocation points
``torch.linspace(0, 1, 30).view(-1, 1).requires_grad_(True)``; derivatives of the network output
with respect to its input by ``torch.autograd.grad(u, t, torch.ones_like(u), create_graph=True)``
taken twice, the boundary, derivative and residual losses ``d2udt2 + mu*dudt + k*u`` weighted
and backpropagated through the double derivative into the weights, Adam; the derivatives checked
against ``torch.func.grad`` of a scalar wrapper and ``vmap``; the inverse problem learning the
friction ``mu`` as an ``nn.Parameter`` from noisy observations (NumPy noise); and a few L-BFGS
steps with a ``closure`` as PINN papers finish the fit.

    python pinn_oscillator.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
else:
    import numbagrad as torch
    import numbagrad.nn as nn

rng = np.random.default_rng(123)


def exact_solution(d, w0, t):
    "Defines the analytical solution to the under-damped harmonic oscillator problem above."
    assert d < w0
    w = np.sqrt(w0 ** 2 - d ** 2)
    phi = np.arctan(-d / w)
    A = 1 / (2 * np.cos(phi))
    cos = torch.cos(phi + w * t)
    exp = torch.exp(-d * t)
    u = exp * 2 * A * cos
    return u


class FCN(nn.Module):
    "Defines a standard fully-connected network in PyTorch"

    def __init__(self, N_INPUT, N_OUTPUT, N_HIDDEN, N_LAYERS):
        super().__init__()
        activation = nn.Tanh
        self.fcs = nn.Sequential(*[
            nn.Linear(N_INPUT, N_HIDDEN),
            activation()])
        self.fch = nn.Sequential(*[
            nn.Sequential(*[
                nn.Linear(N_HIDDEN, N_HIDDEN),
                activation()]) for _ in range(N_LAYERS - 1)])
        self.fce = nn.Linear(N_HIDDEN, N_OUTPUT)

    def forward(self, x):
        x = self.fcs(x)
        x = self.fch(x)
        x = self.fce(x)
        return x


torch.manual_seed(123)

# define a neural network to train
pinn = FCN(1, 1, 32, 3)
numpy_init(torch, pinn, seed=123)

# define boundary points, for the boundary loss
t_boundary = torch.tensor(0.).view(-1, 1).requires_grad_(True)  # (1, 1)

# define training points over the entire domain, for the physics loss
t_physics = torch.linspace(0, 1, 30).view(-1, 1).requires_grad_(True)  # (30, 1)

# train the PINN
d, w0 = 2, 20
mu, k = 2 * d, w0 ** 2
t_test = torch.linspace(0, 1, 300).view(-1, 1)
u_exact = exact_solution(d, w0, t_test)
show("u_exact_samples", u_exact[::50, 0])

# the derivatives autograd gives, and torch.func's version of them
u = pinn(t_physics)
dudt = torch.autograd.grad(u, t_physics, torch.ones_like(u), create_graph=True)[0]
d2udt2 = torch.autograd.grad(dudt, t_physics, torch.ones_like(dudt), create_graph=True)[0]
show("dudt_head", dudt[:4, 0])
show("d2udt2_head", d2udt2[:4, 0])
show("dudt_requires_grad", float(dudt.requires_grad))
u_scalar = lambda t: pinn(t.view(1, 1)).squeeze()
dudt_func = torch.vmap(torch.func.grad(u_scalar))(t_physics.detach().view(-1))
d2udt2_func = torch.vmap(torch.func.grad(torch.func.grad(u_scalar)))(t_physics.detach().view(-1))
show("func_grad_matches_autograd", float(torch.allclose(dudt_func, dudt.detach().view(-1), atol=1e-5)))
show("func_grad2_matches_autograd", float(torch.allclose(d2udt2_func, d2udt2.detach().view(-1), atol=1e-4)))

optimiser = torch.optim.Adam(pinn.parameters(), lr=1e-3)
history = []
for i in range(301):
    optimiser.zero_grad()

    # compute each term of the PINN loss function above
    # using the following hyperparameters:
    lambda1, lambda2 = 1e-1, 1e-4

    # compute boundary loss
    u = pinn(t_boundary)  # (1, 1)
    loss1 = (torch.squeeze(u) - 1) ** 2
    dudt = torch.autograd.grad(u, t_boundary, torch.ones_like(u), create_graph=True)[0]  # (1, 1)
    loss2 = (torch.squeeze(dudt) - 0) ** 2

    # compute physics loss
    u = pinn(t_physics)  # (30, 1)
    dudt = torch.autograd.grad(u, t_physics, torch.ones_like(u), create_graph=True)[0]  # (30, 1)
    d2udt2 = torch.autograd.grad(dudt, t_physics, torch.ones_like(dudt), create_graph=True)[0]  # (30, 1)
    loss3 = torch.mean((d2udt2 + mu * dudt + k * u) ** 2)

    # backpropagate joint loss, take optimiser step
    loss = loss1 + lambda1 * loss2 + lambda2 * loss3
    loss.backward()
    optimiser.step()

    if i % 50 == 0:
        history.append([loss1.item(), loss2.item(), loss3.item()])
        print(f"step {i}: loss1 {loss1.item():.5f}, loss2 {loss2.item():.5f}, loss3 {loss3.item():.3f}")
show("forward_problem_history", history)
with torch.no_grad():
    u = pinn(t_test)
show("forward_problem_prediction", u[::50, 0])
show("forward_problem_error", torch.mean(torch.abs(u - u_exact)))
show("t_physics_grad_accumulated", float(t_physics.grad is not None))

# ---- the inverse problem: learn mu from noisy observations
torch.manual_seed(123)
t_obs = torch.from_numpy(rng.random((40, 1)).astype(np.float32))  # torch.rand(40).view(-1,1)
u_obs = exact_solution(d, w0, t_obs) + 0.04 * torch.from_numpy(rng.normal(size=(40, 1)).astype(np.float32))

pinn = FCN(1, 1, 32, 3)
numpy_init(torch, pinn, seed=7)
t_physics = torch.linspace(0, 1, 30).view(-1, 1).requires_grad_(True)

# treat mu as a learnable parameter
mu = torch.nn.Parameter(torch.zeros(1, requires_grad=True))
mus = []
optimiser = torch.optim.Adam(list(pinn.parameters()) + [mu], lr=1e-2)
losses = []
for i in range(201):
    optimiser.zero_grad()

    # compute each term of the PINN loss function above
    # using the following hyperparameters:
    lambda1 = 1e4

    # compute physics loss
    u = pinn(t_physics)
    dudt = torch.autograd.grad(u, t_physics, torch.ones_like(u), create_graph=True)[0]
    d2udt2 = torch.autograd.grad(dudt, t_physics, torch.ones_like(dudt), create_graph=True)[0]
    loss1 = torch.mean((d2udt2 + mu * dudt + k * u) ** 2)

    # compute data loss
    u = pinn(t_obs)
    loss2 = torch.mean((u - u_obs) ** 2)

    # backpropagate joint loss, take optimiser step
    loss = loss1 + lambda1 * loss2
    loss.backward()
    optimiser.step()

    # record mu value
    mus.append(mu.item())
    losses.append(loss.item())
show("inverse_mu_trace", mus[::20] + mus[-1:])
show("inverse_losses", losses[::40] + losses[-1:])
show("mu_grad", mu.grad)

# ---- L-BFGS to finish
lbfgs = torch.optim.LBFGS(list(pinn.parameters()) + [mu], lr=0.5, max_iter=5, history_size=10)


def closure():
    lbfgs.zero_grad()
    u = pinn(t_physics)
    dudt = torch.autograd.grad(u, t_physics, torch.ones_like(u), create_graph=True)[0]
    d2udt2 = torch.autograd.grad(dudt, t_physics, torch.ones_like(dudt), create_graph=True)[0]
    loss1 = torch.mean((d2udt2 + mu * dudt + k * u) ** 2)
    loss2 = torch.mean((pinn(t_obs) - u_obs) ** 2)
    loss = loss1 + 1e4 * loss2
    loss.backward()
    return loss


lbfgs_losses = []
for step in range(3):
    lbfgs_losses.append(lbfgs.step(closure).item())
show("lbfgs_losses", lbfgs_losses)
show("lbfgs_mu", mu)
