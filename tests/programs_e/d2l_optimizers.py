"""d2l.ai chapter 12 "Optimization Algorithms", on a generated airfoil-like regression set:
gradient descent and Newton's method on ``torch.cosh`` with a tensor constant; the 2-d
momentum trajectories; minibatch SGD, momentum, AdaGrad, RMSProp, Adadelta, Adam and Yogi
from scratch, their states as tensors updated in place under ``torch.no_grad()`` through
``v[:] = ...`` / ``p[:] -= ...`` / ``s[:] += torch.square(p.grad)``, ``p.grad.data.zero_()``,
``hyperparams['t'] += 1``; ``train_ch11`` on ``d2l.linreg`` / ``squared_loss`` with
``evaluate_loss`` every 200 examples; the concise versions through ``torch.optim`` (SGD with
momentum, Adagrad, RMSprop with ``alpha``, Adadelta with ``rho``, Adam) on
``nn.Sequential(nn.Linear(5, 1))`` initialised by ``net.apply`` with ``torch.nn.init.normal_``
(then NumPy's weights), ``nn.MSELoss(reduction='none')``, each compared with its scratch twin;
and the learning-rate scheduling section (square-root, factor and cosine-with-warmup schedulers
written into ``trainer.param_groups[0]["lr"]``, ``lr_scheduler.MultiStepLR``).

    python d2l_optimizers.py [torch|numbagrad]
"""
import math

import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
    from torch import nn
    from torch.optim import lr_scheduler
    from torch.utils import data
else:
    import numbagrad as torch
    from numbagrad import nn
    from numbagrad.optim import lr_scheduler
    from numbagrad.utils import data

# --- 12.3 gradient descent and Newton's method
c = torch.tensor(0.5)


def f(x):  # Objective function
    return torch.cosh(c * x)


def f_grad(x):  # Gradient of the objective function
    return c * torch.sinh(c * x)


def f_hess(x):  # Hessian of the objective function
    return c ** 2 * torch.cosh(c * x)


def newton(eta=1):
    x = 10.0
    results = [x]
    for i in range(10):
        x -= eta * f_grad(x) / f_hess(x)
        results.append(float(x))
    return results


show("newton", newton())
show("newton_f_at_end", f(torch.tensor(newton()[-1])))


def f_grad_1d(x):
    return 2 * x


def gd(eta, f_grad):
    x = 10.0
    results = [x]
    for i in range(10):
        x -= eta * f_grad(x)
        results.append(float(x))
    return results


show("gd", gd(0.2, f_grad_1d))

# nonconvex: x * cos(c x)
c = torch.tensor(0.15 * np.pi)


def f(x):  # Objective function
    return x * torch.cos(c * x)


def f_grad(x):  # Gradient of the objective function
    return torch.cos(c * x) - c * x * torch.sin(c * x)


def f_hess(x):  # Hessian of the objective function
    return - 2 * c * torch.sin(c * x) - x * c ** 2 * torch.cos(c * x)


show("newton_nonconvex", newton(0.5))
show("nonconvex_f_at_end", f(torch.tensor(newton(0.5)[-1])))

# --- 12.6 momentum on the ill-conditioned quadratic
eta, beta = 0.6, 0.5


def f_2d(x1, x2):
    return 0.1 * x1 ** 2 + 2 * x2 ** 2


def momentum_2d(x1, x2, v1, v2):
    v1 = beta * v1 + 0.2 * x1
    v2 = beta * v2 + 4 * x2
    return x1 - eta * v1, x2 - eta * v2, v1, v2


def train_2d(trainer, steps=20):
    x1, x2, s1, s2 = -5, -2, 0, 0
    results = [(x1, x2)]
    for i in range(steps):
        x1, x2, s1, s2 = trainer(x1, x2, s1, s2)
        results.append((x1, x2))
    return results


show("momentum_2d", train_2d(momentum_2d)[::4])
betas = [0.95, 0.9, 0.6, 0]
x = torch.arange(40).detach().numpy()
show("effective_weights", [float((beta ** x).sum()) for beta in betas])

# --- 12.5 the data: an airfoil-like table, standardised
rng = np.random.default_rng(0)
raw = rng.normal(size=(1500, 6)).astype(np.float32)
raw[:, 5] = raw[:, :5] @ np.array([0.8, -0.5, 0.3, 0.0, 1.2], np.float32) + 0.3 * raw[:, 5]


def load_array(data_arrays, batch_size, is_train=True):
    """Construct a PyTorch data iterator."""
    dataset = data.TensorDataset(*data_arrays)
    return data.DataLoader(dataset, batch_size, shuffle=is_train)


def get_data_ch11(batch_size=10, n=1500):
    data_np = raw  # np.genfromtxt(d2l.download('airfoil'), dtype=np.float32, delimiter='\t')
    data_t = torch.from_numpy((data_np - data_np.mean(axis=0)) / data_np.std(axis=0))
    data_iter = load_array((data_t[:n, :-1], data_t[:n, -1]), batch_size,
                           is_train=False)  # (d2l shuffles; the libraries' orders differ)
    return data_iter, data_t.shape[1] - 1


def linreg(X, w, b):
    """The linear regression model."""
    return torch.matmul(X, w) + b


def squared_loss(y_hat, y):
    """Squared loss."""
    return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2


def evaluate_loss(net, data_iter, loss):
    """Evaluate the loss of a model on the given dataset."""
    metric = [0.0, 0.0]  # Sum of losses, no. of examples
    for X, y in data_iter:
        out = net(X)
        y = y.reshape(out.shape)
        l = loss(out, y)
        metric[0] += float(l.sum())
        metric[1] += l.numel()
    return metric[0] / metric[1]


def train_ch11(trainer_fn, states, hyperparams, data_iter, feature_dim, num_epochs=2):
    # Initialization
    # w = torch.normal(mean=0.0, std=0.01, size=(feature_dim, 1), requires_grad=True)
    w = torch.from_numpy(np.random.default_rng(1).normal(0, 0.01, size=(feature_dim, 1)).astype(np.float32))
    w.requires_grad_(True)
    b = torch.zeros((1), requires_grad=True)
    net, loss = lambda X: linreg(X, w, b), squared_loss
    # Train
    n, losses = 0, []
    for _ in range(num_epochs):
        for X, y in data_iter:
            l = loss(net(X), y).mean()
            l.backward()
            trainer_fn([w, b], states, hyperparams)
            n += X.shape[0]
            if n % 200 == 0:
                with torch.no_grad():
                    losses.append(evaluate_loss(net, data_iter, loss))
    return losses, (w, b)


def train_concise_ch11(trainer_fn, hyperparams, data_iter, num_epochs=4):
    # Initialization
    net = nn.Sequential(nn.Linear(5, 1))

    def init_weights(module):
        if type(module) == nn.Linear:
            torch.nn.init.normal_(module.weight, std=0.01)
    net.apply(init_weights)
    with torch.no_grad():  # (the same start as the scratch version, drawn by NumPy)
        net[0].weight.copy_(torch.from_numpy(
            np.random.default_rng(1).normal(0, 0.01, size=(5, 1)).astype(np.float32)).T)
        net[0].bias.zero_()

    optimizer = trainer_fn(net.parameters(), **hyperparams)
    loss = nn.MSELoss(reduction='none')
    n, losses = 0, []
    for _ in range(num_epochs):
        for X, y in data_iter:
            optimizer.zero_grad()
            out = net(X)
            y = y.reshape(out.shape)
            l = loss(out, y)
            l.mean().backward()
            optimizer.step()
            n += X.shape[0]
            if n % 200 == 0:
                with torch.no_grad():
                    # `MSELoss` computes squared error without the 1/2 factor
                    losses.append(evaluate_loss(net, data_iter, loss) / 2)
    return losses, net


data_iter, feature_dim = get_data_ch11(batch_size=10)
show("feature_dim", feature_dim)
X0, y0 = next(iter(data_iter))
show("first_batch", [X0[0], y0[:3]])


# --- 12.5 minibatch SGD
def sgd(params, states, hyperparams):
    for p in params:
        p.data.sub_(hyperparams['lr'] * p.grad)
        p.grad.data.zero_()


losses_sgd, _ = train_ch11(sgd, None, {'lr': 0.05}, data_iter, feature_dim)
show("sgd_scratch", losses_sgd[::4])
losses_sgd_c, _ = train_concise_ch11(torch.optim.SGD, {'lr': 0.05}, data_iter, num_epochs=2)
show("sgd_concise", losses_sgd_c[::4])


# --- 12.6 momentum from scratch
def init_momentum_states(feature_dim):
    v_w = torch.zeros((feature_dim, 1))
    v_b = torch.zeros(1)
    return (v_w, v_b)


def sgd_momentum(params, states, hyperparams):
    for p, v in zip(params, states):
        with torch.no_grad():
            v[:] = hyperparams['momentum'] * v + p.grad
            p[:] -= hyperparams['lr'] * v
        p.grad.data.zero_()


def train_momentum(lr, momentum, num_epochs=2):
    return train_ch11(sgd_momentum, init_momentum_states(feature_dim),
                      {'lr': lr, 'momentum': momentum}, data_iter, feature_dim, num_epochs)


momentum_losses = {}
for lr, momentum in [(0.02, 0.5), (0.01, 0.9), (0.005, 0.9)]:
    losses, (w, b) = train_momentum(lr, momentum)
    momentum_losses[lr] = losses
    show(f"momentum_{lr}_{momentum}", losses[::4])
losses_c, net = train_concise_ch11(torch.optim.SGD, {'lr': 0.005, 'momentum': 0.9}, data_iter, num_epochs=2)
show("momentum_concise", losses_c[::4])
# (MSELoss has no 1/2: its gradients are twice squared_loss's, so lr 0.005 here is 0.01 there)
show("momentum_scratch_vs_concise", float(np.allclose(momentum_losses[0.01], losses_c, rtol=1e-4)))


# --- 12.7 AdaGrad
def init_adagrad_states(feature_dim):
    s_w = torch.zeros((feature_dim, 1))
    s_b = torch.zeros(1)
    return (s_w, s_b)


def adagrad(params, states, hyperparams):
    eps = 1e-6
    for p, s in zip(params, states):
        with torch.no_grad():
            s[:] += torch.square(p.grad)
            p[:] -= hyperparams['lr'] * p.grad / torch.sqrt(s + eps)
        p.grad.data.zero_()


losses, _ = train_ch11(adagrad, init_adagrad_states(feature_dim), {'lr': 0.1}, data_iter, feature_dim)
show("adagrad_scratch", losses[::4])
losses_c, net = train_concise_ch11(torch.optim.Adagrad, {'lr': 0.1}, data_iter, num_epochs=2)
show("adagrad_concise", losses_c[::4])


# --- 12.8 RMSProp
def init_rmsprop_states(feature_dim):
    s_w = torch.zeros((feature_dim, 1))
    s_b = torch.zeros(1)
    return (s_w, s_b)


def rmsprop(params, states, hyperparams):
    gamma, eps = hyperparams['gamma'], 1e-6
    for p, s in zip(params, states):
        with torch.no_grad():
            s[:] = gamma * s + (1 - gamma) * torch.square(p.grad)
            p[:] -= hyperparams['lr'] * p.grad / torch.sqrt(s + eps)
        p.grad.data.zero_()


losses, _ = train_ch11(rmsprop, init_rmsprop_states(feature_dim), {'lr': 0.01, 'gamma': 0.9},
                       data_iter, feature_dim)
show("rmsprop_scratch", losses[::4])
losses_c, net = train_concise_ch11(torch.optim.RMSprop, {'lr': 0.01, 'alpha': 0.9}, data_iter, num_epochs=2)
show("rmsprop_concise", losses_c[::4])


# --- 12.9 Adadelta
def init_adadelta_states(feature_dim):
    s_w, s_b = torch.zeros((feature_dim, 1)), torch.zeros(1)
    delta_w, delta_b = torch.zeros((feature_dim, 1)), torch.zeros(1)
    return ((s_w, delta_w), (s_b, delta_b))


def adadelta(params, states, hyperparams):
    rho, eps = hyperparams['rho'], 1e-5
    for p, (s, delta) in zip(params, states):
        with torch.no_grad():
            # In-place updates via [:]
            s[:] = rho * s + (1 - rho) * torch.square(p.grad)
            g = (torch.sqrt(delta + eps) / torch.sqrt(s + eps)) * p.grad
            p[:] -= g
            delta[:] = rho * delta + (1 - rho) * g * g
        p.grad.data.zero_()


losses, _ = train_ch11(adadelta, init_adadelta_states(feature_dim), {'rho': 0.9}, data_iter, feature_dim)
show("adadelta_scratch", losses[::4])
losses_c, net = train_concise_ch11(torch.optim.Adadelta, {'rho': 0.9}, data_iter, num_epochs=2)
show("adadelta_concise", losses_c[::4])


# --- 12.10 Adam and Yogi
def init_adam_states(feature_dim):
    v_w, v_b = torch.zeros((feature_dim, 1)), torch.zeros(1)
    s_w, s_b = torch.zeros((feature_dim, 1)), torch.zeros(1)
    return ((v_w, s_w), (v_b, s_b))


def adam(params, states, hyperparams):
    beta1, beta2, eps = 0.9, 0.999, 1e-6
    for p, (v, s) in zip(params, states):
        with torch.no_grad():
            v[:] = beta1 * v + (1 - beta1) * p.grad
            s[:] = beta2 * s + (1 - beta2) * torch.square(p.grad)
            v_bias_corr = v / (1 - beta1 ** hyperparams['t'])
            s_bias_corr = s / (1 - beta2 ** hyperparams['t'])
            p[:] -= hyperparams['lr'] * v_bias_corr / (torch.sqrt(s_bias_corr) + eps)
        p.grad.data.zero_()
    hyperparams['t'] += 1


hyper = {'lr': 0.01, 't': 1}
losses, (w, b) = train_ch11(adam, init_adam_states(feature_dim), hyper, data_iter, feature_dim)
show("adam_scratch", losses[::4])
show("adam_t", hyper['t'])
show("adam_w", w)
losses_c, net = train_concise_ch11(torch.optim.Adam, {'lr': 0.01}, data_iter, num_epochs=2)
show("adam_concise", losses_c[::4])
show("adam_concise_w", net[0].weight)


def yogi(params, states, hyperparams):
    beta1, beta2, eps = 0.9, 0.999, 1e-3
    for p, (v, s) in zip(params, states):
        with torch.no_grad():
            v[:] = beta1 * v + (1 - beta1) * p.grad
            s[:] = s + (1 - beta2) * torch.sign(
                torch.square(p.grad) - s) * torch.square(p.grad)
            v_bias_corr = v / (1 - beta1 ** hyperparams['t'])
            s_bias_corr = s / (1 - beta2 ** hyperparams['t'])
            p[:] -= hyperparams['lr'] * v_bias_corr / (torch.sqrt(s_bias_corr)
                                                       + eps)
        p.grad.data.zero_()
    hyperparams['t'] += 1


losses, _ = train_ch11(yogi, init_adam_states(feature_dim), {'lr': 0.01, 't': 1}, data_iter, feature_dim)
show("yogi_scratch", losses[::4])


# --- 12.11 learning rate scheduling
class SquareRootScheduler:
    def __init__(self, lr=0.1):
        self.lr = lr

    def __call__(self, num_update):
        return self.lr * pow(num_update + 1.0, -0.5)


class FactorScheduler:
    def __init__(self, factor=1, stop_factor_lr=1e-7, base_lr=0.1):
        self.factor = factor
        self.stop_factor_lr = stop_factor_lr
        self.base_lr = base_lr

    def __call__(self, num_update):
        self.base_lr = max(self.stop_factor_lr, self.base_lr * self.factor)
        return self.base_lr


class CosineScheduler:
    def __init__(self, max_update, base_lr=0.01, final_lr=0,
                 warmup_steps=0, warmup_begin_lr=0):
        self.base_lr_orig = base_lr
        self.max_update = max_update
        self.final_lr = final_lr
        self.warmup_steps = warmup_steps
        self.warmup_begin_lr = warmup_begin_lr
        self.max_steps = self.max_update - self.warmup_steps

    def get_warmup_lr(self, epoch):
        increase = (self.base_lr_orig - self.warmup_begin_lr) \
            * float(epoch) / float(self.warmup_steps)
        return self.warmup_begin_lr + increase

    def __call__(self, epoch):
        if epoch < self.warmup_steps:
            return self.get_warmup_lr(epoch)
        if epoch <= self.max_update:
            self.base_lr = self.final_lr + (
                self.base_lr_orig - self.final_lr) * (1 + math.cos(
                    math.pi * (epoch - self.warmup_steps) / self.max_steps)) / 2
        return self.base_lr


def net_fn():
    model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))
    g = np.random.default_rng(3)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(g.uniform(-0.3, 0.3, size=tuple(p.shape)).astype(np.float32)))
    return model


def train(net, train_iter, num_epochs, loss, trainer, scheduler=None):
    lrs, epoch_losses = [], []
    for epoch in range(num_epochs):
        total = 0.0
        for i, (X, y) in enumerate(train_iter):
            net.train()
            trainer.zero_grad()
            y_hat = net(X)
            l = loss(y_hat, y.reshape(y_hat.shape))
            l.backward()
            trainer.step()
            total += l.item()
        epoch_losses.append(total / len(train_iter))
        lrs.append(trainer.param_groups[0]["lr"])
        if scheduler:
            if scheduler.__module__ == lr_scheduler.__name__:
                # Using PyTorch In-Built scheduler
                scheduler.step()
            else:
                # Using custom defined scheduler
                for param_group in trainer.param_groups:
                    param_group['lr'] = scheduler(epoch)
    return epoch_losses, lrs


train_iter, _ = get_data_ch11(batch_size=100, n=600)
loss = nn.MSELoss()
for name, make_sched in [
        ("none", lambda: None),
        ("sqrt", lambda: SquareRootScheduler(lr=0.1)),
        ("factor", lambda: FactorScheduler(factor=0.8, stop_factor_lr=1e-2, base_lr=0.1)),
        ("cosine", lambda: CosineScheduler(max_update=8, base_lr=0.1, final_lr=0.01)),
        ("cosine_warmup", lambda: CosineScheduler(8, warmup_steps=3, base_lr=0.1, final_lr=0.01))]:
    net = net_fn()
    trainer = torch.optim.SGD(net.parameters(), lr=0.1)
    epoch_losses, lrs = train(net, train_iter, 10, loss, trainer, make_sched())
    show(f"sched_{name}_losses", epoch_losses)
    show(f"sched_{name}_lrs", lrs)

net = net_fn()
trainer = torch.optim.SGD(net.parameters(), lr=0.5)
scheduler = lr_scheduler.MultiStepLR(trainer, milestones=[3, 6], gamma=0.5)
show("multistep_module_is_lr_scheduler", float(scheduler.__module__ == lr_scheduler.__name__))


def get_lr(trainer, scheduler):
    lr = scheduler.get_last_lr()[0]
    trainer.step()
    scheduler.step()
    return lr


show("multistep_lrs", [get_lr(trainer, scheduler) for t in range(10)])
net = net_fn()
trainer = torch.optim.SGD(net.parameters(), lr=0.5)
scheduler = lr_scheduler.MultiStepLR(trainer, milestones=[3, 6], gamma=0.5)
epoch_losses, lrs = train(net, train_iter, 8, loss, trainer, scheduler)
show("multistep_losses", epoch_losses)
show("multistep_train_lrs", lrs)
