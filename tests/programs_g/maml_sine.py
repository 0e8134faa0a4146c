"""Meta-learning on sine waves, three well-known scripts in turn, scaled down: Eric Jang's MAML
as PyTorch's functorch examples keep it (``maml_regression/evjang.py``: a functional ``net(x,
params)`` of ``F.linear``/``F.relu`` over a list of leaf tensors, ``sample_tasks`` by
``np.random.uniform`` and ``torch.tensor`` of a list of arrays, the inner step through
``torch.autograd.grad(loss, params, create_graph=True)``, the outer Adam step on the average
post-update loss), its torch.func version (``evjang_transforms.py``: ``grad(inner_loss)(tuple(
params), x1, y1)`` inside a function ``vmap``-ed over the tasks, the outer backward through both)
and the module version (``evjang_transforms_module.py``: ``functional_call`` on a ThreeLayerNet's
``dict(named_parameters())``), with first-order MAML for contrast; then OpenAI's Reptile
sine-wave demo (``reptile-sinewaves-demo.py``: ``torch.autograd.Variable(torch.Tensor(x))``,
``param.data -= innerstepsize * param.grad.data``, ``deepcopy(model.state_dict())`` and the
interpolated ``load_state_dict`` with a linear outer schedule, the evaluation on a fixed task
restored from a snapshot).

    python maml_sine.py [torch|numbagrad]
"""
import math
from copy import deepcopy

import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.autograd as ag
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.func import functional_call, grad, vmap
else:
    import numbagrad as torch
    import numbagrad.autograd as ag
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F
    from numbagrad.func import functional_call, grad, vmap

mse_loss = F.mse_loss
np.random.seed(0)


def sample_tasks(outer_batch_size, inner_batch_size):
    # Select amplitude and phase for the task
    As = []
    phases = []
    for _ in range(outer_batch_size):
        As.append(np.random.uniform(low=0.1, high=.5))
        phases.append(np.random.uniform(low=0., high=np.pi))

    def get_batch():
        xs, ys = [], []
        for A, phase in zip(As, phases):
            x = np.random.uniform(low=-5., high=5., size=(inner_batch_size, 1))
            y = A * np.sin(x + phase)
            xs.append(x)
            ys.append(y)
        return torch.tensor(np.array(xs), dtype=torch.float), torch.tensor(np.array(ys), dtype=torch.float)
    x1, y1 = get_batch()
    x2, y2 = get_batch()
    return x1, y1, x2, y2


def make_params(seed):
    """evjang.py's ``torch.Tensor(40, 1).uniform_(-1., 1.)`` and friends, drawn by NumPy."""
    rng = np.random.default_rng(seed)
    b = 1. / math.sqrt(40)
    arrays = [rng.uniform(-1., 1., (40, 1)), np.zeros(40), rng.uniform(-b, b, (40, 40)),
              np.zeros(40), rng.uniform(-b, b, (1, 40)), np.zeros(1)]
    return [torch.from_numpy(a.astype(np.float32)).requires_grad_() for a in arrays]


# ---------------------------------------------------------------- evjang.py
def net(x, params):
    x = F.linear(x, params[0], params[1])
    x = F.relu(x)

    x = F.linear(x, params[2], params[3])
    x = F.relu(x)

    x = F.linear(x, params[4], params[5])
    return x


num_tasks = 4
K = 10
alpha = 0.1
iterations = 12

for first_order in (False, True):
    tag = "fomaml" if first_order else "maml"
    np.random.seed(1)
    params = make_params(2)
    opt = torch.optim.Adam(params, lr=1e-2)
    losses = []
    for it in range(iterations):
        loss2 = 0.0
        opt.zero_grad()

        def get_loss_for_task(x1, y1, x2, y2):
            f = net(x1, params)
            loss = mse_loss(f, y1)

            # create_graph=True because computing grads here is part of the forward pass.
            # We want to differentiate through the SGD update steps and get higher order
            # derivatives in the backward pass.
            grads = torch.autograd.grad(loss, params, create_graph=not first_order)
            new_params = [(params[i] - alpha*grads[i]) for i in range(len(params))]

            v_f = net(x2, new_params)
            return mse_loss(v_f, y2)

        task = sample_tasks(num_tasks, K)
        inner_losses = [get_loss_for_task(task[0][i], task[1][i], task[2][i], task[3][i])
                        for i in range(num_tasks)]
        loss2 = sum(inner_losses)/len(inner_losses)
        loss2.backward()
        if it == 0:
            show(f"{tag}_first_meta_grad", params[0].grad[:5, 0])
            show(f"{tag}_first_meta_grad_out", params[4].grad[0, :5])

        opt.step()

        if it % 4 == 0:
            print('Iteration %d -- Outer Loss: %.4f' % (it, loss2))
        losses.append(loss2.detach())
    show(f"{tag}_losses", losses)
    show(f"{tag}_params", params[2][0, :5])

# ---------------------------------------------------------------- evjang_transforms.py
np.random.seed(1)
params = make_params(2)
opt = torch.optim.Adam(params, lr=1e-2)
losses = []
for it in range(iterations):
    loss2 = 0.0
    opt.zero_grad()

    def get_loss_for_task(x1, y1, x2, y2):
        def inner_loss(params, x1, y1):
            f = net(x1, params)
            loss = mse_loss(f, y1)
            return loss

        grads = grad(inner_loss)(tuple(params), x1, y1)
        new_params = [(params[i] - alpha*grads[i]) for i in range(len(params))]

        v_f = net(x2, new_params)
        return mse_loss(v_f, y2)

    task = sample_tasks(num_tasks, K)

    # Fully vmapped version
    inner_losses = vmap(get_loss_for_task)(task[0], task[1], task[2], task[3])
    loss2 = sum(inner_losses)/len(inner_losses)
    loss2.backward()
    if it == 0:
        show("vmap_inner_losses", inner_losses)
        show("vmap_first_meta_grad", params[0].grad[:5, 0])

    opt.step()
    losses.append(loss2.detach())
show("vmap_losses", losses)
show("vmap_params", params[2][0, :5])


# ---------------------------------------------------------------- evjang_transforms_module.py
class ThreeLayerNet(nn.Module):
    def __init__(self):
        super(ThreeLayerNet, self).__init__()
        self.fc1 = nn.Linear(1, 40)
        self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(40, 40)
        self.relu2 = nn.ReLU()
        self.fc3 = nn.Linear(40, 1)

    def forward(self, x):
        x = self.fc1(x)
        x = self.relu1(x)
        x = self.fc2(x)
        x = self.relu2(x)
        x = self.fc3(x)
        return x


np.random.seed(1)
model = ThreeLayerNet()
numpy_init(torch, model, seed=3)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
for it in range(iterations):
    opt.zero_grad()

    def get_loss_for_task(x1, y1, x2, y2):
        def inner_loss(params, x1, y1):
            f = functional_call(model, params, (x1,))
            loss = mse_loss(f, y1)
            return loss

        params = dict(model.named_parameters())
        grads = grad(inner_loss)(params, x1, y1)
        new_params = {k: params[k] - alpha * grads[k] for k in params}

        v_f = functional_call(model, new_params, (x2,))
        return mse_loss(v_f, y2)

    task = sample_tasks(num_tasks, K)
    inner_losses = vmap(get_loss_for_task)(task[0], task[1], task[2], task[3])
    loss2 = sum(inner_losses) / len(inner_losses)
    loss2.backward()
    opt.step()
    losses.append(loss2.detach())
show("module_losses", losses)
show("module_fc2", model.fc2.weight[0, :5])

# ---------------------------------------------------------------- reptile-sinewaves-demo.py
seed = 0
innerstepsize = 0.02  # stepsize in inner SGD
innerepochs = 1  # number of epochs of each inner SGD
outerstepsize0 = 0.1  # stepsize of outer optimization, i.e., meta-optimization
niterations = 40  # number of outer updates; each iteration we sample one task and update on it

rng = np.random.RandomState(seed)
torch.manual_seed(seed)

# Define task distribution
x_all = np.linspace(-5, 5, 50)[:, None]  # All of the x points
ntrain = 10  # Size of training minibatches


def gen_task():
    "Generate classification problem"
    phase = rng.uniform(low=0, high=2*np.pi)
    ampl = rng.uniform(0.1, 5)
    f_randomsine = lambda x: np.sin(x + phase) * ampl
    return f_randomsine


# Define model. Reptile paper uses ReLU, but Tanh gives slightly better results
model = nn.Sequential(
    nn.Linear(1, 64),
    nn.Tanh(),
    nn.Linear(64, 64),
    nn.Tanh(),
    nn.Linear(64, 1),
)
numpy_init(torch, model, seed=4)


def totorch(x):
    return ag.Variable(torch.Tensor(x))


def train_on_batch(x, y):
    x = totorch(x)
    y = totorch(y)
    model.zero_grad()
    ypred = model(x)
    loss = (ypred - y).pow(2).mean()
    loss.backward()
    for param in model.parameters():
        param.data -= innerstepsize * param.grad.data


def predict(x):
    x = totorch(x)
    return model(x).data.numpy()


# Choose a fixed task and minibatch for visualization
f_plot = gen_task()
xtrain_plot = x_all[rng.choice(len(x_all), size=ntrain)]

# Reptile training loop
curve_losses = []
for iteration in range(niterations):
    weights_before = deepcopy(model.state_dict())
    # Generate task
    f = gen_task()
    y_all = f(x_all)
    # Do SGD on this task
    inds = rng.permutation(len(x_all))
    for _ in range(innerepochs):
        for start in range(0, len(x_all), ntrain):
            mbinds = inds[start:start+ntrain]
            train_on_batch(x_all[mbinds], y_all[mbinds])
    # Interpolate between current weights and trained weights from this task
    # I.e. (weights_before - weights_after) is the meta-gradient
    weights_after = model.state_dict()
    outerstepsize = outerstepsize0 * (1 - iteration / niterations)  # linear schedule
    model.load_state_dict({name:
        weights_before[name] + (weights_after[name] - weights_before[name]) * outerstepsize
        for name in weights_before})

    # Periodically "plot" the results on a particular task and minibatch
    if iteration == 0 or (iteration+1) % 20 == 0:
        f = f_plot
        weights_before = deepcopy(model.state_dict())  # save snapshot before evaluation
        preds = [predict(x_all)]
        for inneriter in range(32):
            train_on_batch(xtrain_plot, f(xtrain_plot))
            if (inneriter+1) % 8 == 0:
                preds.append(predict(x_all))
        lossval = np.square(predict(x_all) - f(x_all)).mean()
        print("-----------------------------")
        print(f"iteration               {iteration+1}")
        print(f"loss on plotted curve   {lossval:.3f}")  # would be better to average loss over a set of examples, but this is optimized for brevity
        curve_losses.append(lossval)
        show(f"reptile_preds_{iteration + 1}", [p[::10, 0] for p in preds])
        model.load_state_dict(weights_before)  # restore from snapshot
show("reptile_curve_losses", curve_losses)
show("reptile_weights", model[2].weight[0, :5])
show("reptile_state_dict_is_copy", float(weights_before["0.weight"] is not model[0].weight))
