"""A Neural ODE in the style of torchdiffeq's ``examples/ode_demo.py``, with the solver written by
hand as the blog posts do: a fixed-step classical Runge-Kutta ``odeint(func, y0, t)`` that
subdivides each interval and ``torch.stack``s the states; its fourth-order convergence checked on
a linear system against ``torch.linalg.matrix_exp``; the spiral ``true_A`` dynamics ``torch.mm(y**3,
true_A)`` integrated under ``torch.no_grad()``; ``get_batch`` gathering ``true_y[s + i]`` for
NumPy-chosen start indices ``s`` (``np.random.choice(..., replace=False)``); the ODEFunc MLP
(``nn.init.normal_(m.weight, mean=0, std=0.1)`` then NumPy weights, ``nn.init.constant_`` bias)
trained through the unrolled solver by RMSprop on ``torch.mean(torch.abs(pred_y - batch_y))``,
with the demo's RunningAverageMeter and test evaluations; a gradient of the final state with
respect to ``y0`` checked against central differences in float64; and a time-dependent ODEFunc
that uses ``t`` (``torch.cat`` of ``y`` and ``t.expand``).

    python neural_ode_rk4.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.optim as optim
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.optim as optim

np.random.seed(0)


def rk4_step(func, t, dt, y):
    k1 = func(t, y)
    k2 = func(t + dt / 2, y + dt * k1 / 2)
    k3 = func(t + dt / 2, y + dt * k2 / 2)
    k4 = func(t + dt, y + dt * k3)
    return y + dt * (k1 + 2 * k2 + 2 * k3 + k4) / 6


def odeint(func, y0, t, substeps=4):
    """Fixed-step RK4; returns the state at each time in t, shape (len(t), *y0.shape)."""
    ys = [y0]
    y = y0
    for i in range(len(t) - 1):
        dt = (t[i + 1] - t[i]) / substeps
        for k in range(substeps):
            y = rk4_step(func, t[i] + k * dt, dt, y)
        ys.append(y)
    return torch.stack(ys, dim=0)


# ---- the solver's order on a linear system, dy/dt = y A, exact solution y0 expm(A t)
A = torch.tensor([[-0.1, 2.0], [-2.0, -0.1]], dtype=torch.float64)
y0 = torch.tensor([[2.0, 0.0]], dtype=torch.float64)
T_end = 2.0
exact = y0 @ torch.linalg.matrix_exp(A * T_end)
errors = []
for n in [5, 10, 20, 40]:
    t = torch.linspace(0, T_end, n + 1, dtype=torch.float64)
    y = odeint(lambda t, y: y @ A, y0, t, substeps=1)[-1]
    errors.append((y - exact).norm().item())
show("rk4_errors", errors)
show("rk4_observed_orders", [np.log2(errors[i] / errors[i + 1]) for i in range(3)])
show("matrix_exp", torch.linalg.matrix_exp(A * T_end))

# ---- ode_demo.py
data_size = 200
batch_time = 10
batch_size = 16
niters = 40
test_freq = 10

true_y0 = torch.tensor([[2., 0.]])
t = torch.linspace(0., 25., data_size)
true_A = torch.tensor([[-0.1, 2.0], [-2.0, -0.1]])


class Lambda(nn.Module):

    def forward(self, t, y):
        return torch.mm(y ** 3, true_A)


with torch.no_grad():
    true_y = odeint(Lambda(), true_y0, t, substeps=8)
show("true_y_shape", list(true_y.shape))
show("true_y_samples", true_y[::40, 0])


def get_batch():
    s = torch.from_numpy(np.random.choice(np.arange(data_size - batch_time, dtype=np.int64), batch_size,
                                          replace=False))
    batch_y0 = true_y[s]  # (M, D)
    batch_t = t[:batch_time]  # (T)
    batch_y = torch.stack([true_y[s + i] for i in range(batch_time)], dim=0)  # (T, M, D)
    return batch_y0, batch_t, batch_y


class ODEFunc(nn.Module):

    def __init__(self):
        super(ODEFunc, self).__init__()

        self.net = nn.Sequential(
            nn.Linear(2, 50),
            nn.Tanh(),
            nn.Linear(50, 2),
        )

        for m in self.net.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, mean=0, std=0.1)
                nn.init.constant_(m.bias, val=0)

    def forward(self, t, y):
        return self.net(y ** 3)


class RunningAverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self, momentum=0.99):
        self.momentum = momentum
        self.reset()

    def reset(self):
        self.val = None
        self.avg = 0

    def update(self, val):
        if self.val is None:
            self.avg = val
        else:
            self.avg = self.avg * self.momentum + val * (1 - self.momentum)
        self.val = val


func = ODEFunc()
show("normal_init_std_close", float(abs(func.net[0].weight.std().item() - 0.1) < 0.05))
show("constant_bias", func.net[0].bias.abs().sum())
numpy_init(torch, func, seed=0)
with torch.no_grad():
    for m in func.net.modules():
        if isinstance(m, nn.Linear):
            m.weight.mul_(0.3)
            m.bias.zero_()

optimizer = optim.RMSprop(func.parameters(), lr=1e-3)
loss_meter = RunningAverageMeter(0.97)
train_losses, test_losses = [], []
for itr in range(1, niters + 1):
    optimizer.zero_grad()
    batch_y0, batch_t, batch_y = get_batch()
    pred_y = odeint(func, batch_y0, batch_t, substeps=1)
    loss = torch.mean(torch.abs(pred_y - batch_y))
    loss.backward()
    optimizer.step()
    loss_meter.update(loss.item())
    train_losses.append(loss.item())

    if itr % test_freq == 0:
        with torch.no_grad():
            pred_y = odeint(func, true_y0, t[:50], substeps=1)
            loss = torch.mean(torch.abs(pred_y - true_y[:50]))
            print('Iter {:04d} | Total Loss {:.6f}'.format(itr, loss.item()))
            test_losses.append(loss.item())
show("batch_shapes", [list(batch_y0.shape), list(batch_t.shape), list(batch_y.shape)])
show("train_losses", train_losses[::5] + train_losses[-1:])
show("test_losses", test_losses)
show("running_average", loss_meter.avg)
show("rmsprop_square_avg", optimizer.state[func.net[2].bias]['square_avg'])

# ---- gradient of the final state w.r.t. y0, against central differences (float64)
func64 = ODEFunc().double()
numpy_init(torch, func64, seed=1)
tt = torch.linspace(0, 1, 6, dtype=torch.float64)
y0 = torch.tensor([[0.5, -0.3]], dtype=torch.float64, requires_grad=True)
yT = odeint(func64, y0, tt)[-1]
(yT ** 2).sum().backward()
h = 1e-6
num = []
with torch.no_grad():
    for j in range(2):
        e = torch.zeros(1, 2, dtype=torch.float64)
        e[0, j] = h
        fp = (odeint(func64, y0 + e, tt)[-1] ** 2).sum()
        fm = (odeint(func64, y0 - e, tt)[-1] ** 2).sum()
        num.append(((fp - fm) / (2 * h)).item())
show("grad_y0_autograd", y0.grad)
show("grad_y0_matches_numeric", float(np.allclose(y0.grad.numpy()[0], num, rtol=1e-6, atol=1e-9)))
show("param_grad_norm", torch.stack([p.grad.norm() for p in func64.parameters()]))


# ---- a time-dependent vector field: the MLP sees t as an extra input
class TimeODEFunc(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 16), nn.Softplus(), nn.Linear(16, 2))

    def forward(self, t, y):
        tt = t.expand(y.shape[0], 1)
        return self.net(torch.cat([y, tt], dim=-1))


tfunc = TimeODEFunc()
numpy_init(torch, tfunc, seed=2)
opt = optim.Adam(tfunc.parameters(), lr=1e-2)
target = torch.tensor([[1.0, 1.0], [-1.0, 0.5]])
y0 = torch.tensor([[0.0, 0.0], [0.5, -0.5]])
tt = torch.linspace(0, 1, 5)
losses = []
for it in range(25):
    opt.zero_grad()
    yT = odeint(tfunc, y0, tt, substeps=2)[-1]
    loss = ((yT - target) ** 2).sum()
    loss.backward()
    opt.step()
    losses.append(loss.item())
show("time_dependent_losses", losses[::4] + losses[-1:])
