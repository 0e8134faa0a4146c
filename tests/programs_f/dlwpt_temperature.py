"""Stevens, Antiga & Viehmann, "Deep Learning with PyTorch", chapters 5 and 6: the thermometer
readings ``t_c``/``t_u``; ch5's ``model(t_u, w, b)`` and ``loss_fn``, the finite-difference rate of
change, hand-derived ``dloss_fn``/``dmodel_dw`` gradients stacked by ``torch.stack``, the
``training_loop`` on a ``params`` tensor (diverging at ``1e-2`` into inf, then ``1e-4``, then on
normalised ``t_un = 0.1 * t_u``), the autograd version with ``requires_grad=True``,
``params.grad.zero_()`` and ``with torch.no_grad(): params -= learning_rate * params.grad``,
``optim.SGD([params])`` and Adam on the unnormalised inputs, a train/validation split by shuffled
indices with ``torch.set_grad_enabled(is_train)``; ch6's ``unsqueeze(1)`` data, ``nn.Linear(1,
1)`` with ``nn.MSELoss``, the ``nn.Sequential`` of Tanh, named parameters of an
``OrderedDict``-named Sequential, ``seq_model.output_linear.bias`` and
``hidden_linear.weight.grad``, and predictions on ``torch.arange(20., 90.).unsqueeze(1)``.

    python dlwpt_temperature.py [torch|numbagrad]
"""
import math
import warnings
from collections import OrderedDict

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

torch.set_printoptions(edgeitems=2, linewidth=75)
rng = np.random.default_rng(5)

t_c = [0.5, 14.0, 15.0, 28.0, 11.0, 8.0, 3.0, -4.0, 6.0, 13.0, 21.0]
t_u = [35.7, 55.9, 58.2, 81.9, 56.3, 48.9, 33.9, 21.8, 48.4, 60.4, 68.4]
t_c = torch.tensor(t_c)
t_u = torch.tensor(t_u)


def model(t_u, w, b):
    return w * t_u + b


def loss_fn(t_p, t_c):
    squared_diffs = (t_p - t_c) ** 2
    return squared_diffs.mean()


w = torch.ones(())
b = torch.zeros(())

t_p = model(t_u, w, b)
show("t_p", t_p)
loss = loss_fn(t_p, t_c)
show("loss", loss)

x = torch.ones(())
y = torch.ones(3, 1)
z = torch.ones(1, 3)
a = torch.ones(2, 1, 1)
show("broadcast_shapes", [list((x * y).shape), list((y * z).shape), list((y * z * a).shape)])

delta = 0.1

loss_rate_of_change_w = \
    (loss_fn(model(t_u, w + delta, b), t_c) -
     loss_fn(model(t_u, w - delta, b), t_c)) / (2.0 * delta)

learning_rate = 1e-2

w = w - learning_rate * loss_rate_of_change_w

loss_rate_of_change_b = \
    (loss_fn(model(t_u, w, b + delta), t_c) -
     loss_fn(model(t_u, w, b - delta), t_c)) / (2.0 * delta)

b = b - learning_rate * loss_rate_of_change_b
show("finite_difference_w", w)
# (b comes from the difference of two losses near 5.8e6, where float32 steps are 0.5: the two
# libraries' sums of the squared differences may round apart; printed, not compared)
print(f"b = {float(b):.1f}")


def dloss_fn(t_p, t_c):
    dsq_diffs = 2 * (t_p - t_c) / t_p.size(0)  # <1>
    return dsq_diffs


def dmodel_dw(t_u, w, b):
    return t_u


def dmodel_db(t_u, w, b):
    return 1.0


def grad_fn(t_u, t_c, t_p, w, b):
    dloss_dtp = dloss_fn(t_p, t_c)
    dloss_dw = dloss_dtp * dmodel_dw(t_u, w, b)
    dloss_db = dloss_dtp * dmodel_db(t_u, w, b)
    return torch.stack([dloss_dw.sum(), dloss_db.sum()])  # <1>


def training_loop(n_epochs, learning_rate, params, t_u, t_c, print_params=True):
    losses = []
    for epoch in range(1, n_epochs + 1):
        w, b = params

        t_p = model(t_u, w, b)  # <1>
        loss = loss_fn(t_p, t_c)
        grad = grad_fn(t_u, t_c, t_p, w, b)  # <2>

        params = params - learning_rate * grad

        if epoch in {1, 2, 3, 10, 11, 99, 100, 4000, 5000}:  # <3>
            print('Epoch %d, Loss %f' % (epoch, float(loss)))
            if print_params:
                print('    Params:', params)
                print('    Grad:  ', grad)
        if epoch in {1, 2, 3, 10, 11, 99, 100}:
            losses.append(float(loss))
        if epoch in {4, 5, 6} and not math.isfinite(float(loss)):
            losses.append(-1.0)  # (diverged)
    return params, losses


with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    params, losses = training_loop(
        n_epochs=100,
        learning_rate=1e-2,
        params=torch.tensor([1.0, 0.0]),
        t_u=t_u,
        t_c=t_c)
show("diverging_losses_first", losses[:3])
show("diverging_params_finite", float(bool(torch.isfinite(params).all())))

params, losses = training_loop(
    n_epochs=100,
    learning_rate=1e-4,
    params=torch.tensor([1.0, 0.0]),
    t_u=t_u,
    t_c=t_c)
show("lr_1e-4_losses", losses)
show("lr_1e-4_params", params)

t_un = 0.1 * t_u

params, losses = training_loop(
    n_epochs=5000,
    learning_rate=1e-2,
    params=torch.tensor([1.0, 0.0]),
    t_u=t_un,  # <1>
    t_c=t_c,
    print_params=False)
show("normalized_params", params)

# ---- autograd
params = torch.tensor([1.0, 0.0], requires_grad=True)
show("grad_is_none", float(params.grad is None))
loss = loss_fn(model(t_u, *params), t_c)
loss.backward()
show("params_grad", params.grad)
if params.grad is not None:
    params.grad.zero_()


def training_loop_autograd(n_epochs, learning_rate, params, t_u, t_c):
    for epoch in range(1, n_epochs + 1):
        if params.grad is not None:  # <1>
            params.grad.zero_()

        t_p = model(t_u, *params)
        loss = loss_fn(t_p, t_c)
        loss.backward()

        with torch.no_grad():  # <2>
            params -= learning_rate * params.grad

        if epoch % 500 == 0:
            print('Epoch %d, Loss %f' % (epoch, loss.item()))

    return params


params = training_loop_autograd(
    n_epochs=2000,
    learning_rate=1e-2,
    params=torch.tensor([1.0, 0.0], requires_grad=True),  # <1>
    t_u=t_un,  # <2>
    t_c=t_c)
show("autograd_params", params)
show("autograd_params_is_leaf", float(params.is_leaf))

# ---- optimizers
show("optimizers_listed", float('SGD' in dir(optim) and 'Adam' in dir(optim)))
params = torch.tensor([1.0, 0.0], requires_grad=True)
learning_rate = 1e-5
optimizer = optim.SGD([params], lr=learning_rate)
t_p = model(t_u, *params)
loss = loss_fn(t_p, t_c)
loss.backward()
optimizer.step()
show("sgd_one_step_no_zero_grad", params)


def training_loop_optim(n_epochs, optimizer, params, t_u, t_c):
    for epoch in range(1, n_epochs + 1):
        t_p = model(t_u, *params)
        loss = loss_fn(t_p, t_c)

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        if epoch % 500 == 0:
            print('Epoch %d, Loss %f' % (epoch, loss.item()))

    return params


params = torch.tensor([1.0, 0.0], requires_grad=True)
learning_rate = 1e-2
optimizer = optim.SGD([params], lr=learning_rate)  # <1>
show("sgd_params", training_loop_optim(n_epochs=2000, optimizer=optimizer, params=params, t_u=t_un, t_c=t_c))

params = torch.tensor([1.0, 0.0], requires_grad=True)
learning_rate = 1e-1
optimizer = optim.Adam([params], lr=learning_rate)  # <1>
show("adam_params", training_loop_optim(n_epochs=2000, optimizer=optimizer, params=params, t_u=t_u, t_c=t_c))

# ---- training, validation
n_samples = t_u.shape[0]
n_val = int(0.2 * n_samples)

shuffled_indices = torch.from_numpy(rng.permutation(n_samples))  # torch.randperm(n_samples)

train_indices = shuffled_indices[:-n_val]
val_indices = shuffled_indices[-n_val:]
show("split_indices", [train_indices, val_indices])

train_t_u = t_u[train_indices]
train_t_c = t_c[train_indices]

val_t_u = t_u[val_indices]
val_t_c = t_c[val_indices]

train_t_un = 0.1 * train_t_u
val_t_un = 0.1 * val_t_u


def calc_forward(t_u, t_c, is_train):
    with torch.set_grad_enabled(is_train):
        t_p = model(t_u, *params)
        loss = loss_fn(t_p, t_c)
    return loss


def training_loop_val(n_epochs, optimizer, params, train_t_u, val_t_u, train_t_c, val_t_c):
    history = []
    for epoch in range(1, n_epochs + 1):
        train_loss = calc_forward(train_t_u, train_t_c, True)

        with torch.no_grad():  # <1>
            val_t_p = model(val_t_u, *params)
            val_loss = loss_fn(val_t_p, val_t_c)
            assert val_loss.requires_grad == False  # <2>
        assert calc_forward(val_t_u, val_t_c, False).requires_grad == False

        optimizer.zero_grad()
        train_loss.backward()
        optimizer.step()

        if epoch <= 3 or epoch % 500 == 0:
            print(f"Epoch {epoch}, Training loss {train_loss.item():.4f},"
                  f" Validation loss {val_loss.item():.4f}")
            history.append([train_loss.item(), val_loss.item()])
    return params, history


params = torch.tensor([1.0, 0.0], requires_grad=True)
learning_rate = 1e-2
optimizer = optim.SGD([params], lr=learning_rate)
params, history = training_loop_val(
    n_epochs=3000,
    optimizer=optimizer,
    params=params,
    train_t_u=train_t_un,  # <1>
    val_t_u=val_t_un,  # <1>
    train_t_c=train_t_c,
    val_t_c=val_t_c)
show("train_val_history", history)
show("train_val_params", params)

# ---- chapter 6: nn.Linear on unsqueezed data
t_c6 = t_c.unsqueeze(1)  # <1>
t_u6 = t_u.unsqueeze(1)  # <1>
show("unsqueezed_shape", list(t_u6.shape))
t_u_train = t_u6[train_indices]
t_c_train = t_c6[train_indices]
t_u_val = t_u6[val_indices]
t_c_val = t_c6[val_indices]
t_un_train = 0.1 * t_u_train
t_un_val = 0.1 * t_u_val

linear_model = nn.Linear(1, 1)  # <1>
numpy_init(torch, linear_model, seed=0)
show("linear_model_val", linear_model(t_un_val))
show("linear_weight_bias", [linear_model.weight, linear_model.bias])
x = torch.ones(10, 1)
show("linear_on_ones", linear_model(x))

optimizer = optim.SGD(
    linear_model.parameters(),  # <2>
    lr=1e-2)
show("linear_parameters", list(linear_model.parameters()))


def training_loop6(n_epochs, optimizer, model, loss_fn, t_u_train, t_u_val, t_c_train, t_c_val):
    history = []
    for epoch in range(1, n_epochs + 1):
        t_p_train = model(t_u_train)  # <1>
        loss_train = loss_fn(t_p_train, t_c_train)

        t_p_val = model(t_u_val)  # <1>
        loss_val = loss_fn(t_p_val, t_c_val)

        optimizer.zero_grad()
        loss_train.backward()  # <2>
        optimizer.step()

        if epoch == 1 or epoch % 1000 == 0:
            print(f"Epoch {epoch}, Training loss {loss_train.item():.4f},"
                  f" Validation loss {loss_val.item():.4f}")
            history.append([loss_train.item(), loss_val.item()])
    return history


history = training_loop6(
    n_epochs=3000,
    optimizer=optimizer,
    model=linear_model,
    loss_fn=nn.MSELoss(),  # <1>
    t_u_train=t_un_train,
    t_u_val=t_un_val,
    t_c_train=t_c_train,
    t_c_val=t_c_val)
show("linear_history", history)
show("linear_trained", [linear_model.weight, linear_model.bias])

seq_model = nn.Sequential(
    nn.Linear(1, 13),  # <1>
    nn.Tanh(),
    nn.Linear(13, 1))  # <2>
print(seq_model)
show("seq_param_shapes", [list(param.shape) for param in seq_model.parameters()])
for name, param in seq_model.named_parameters():
    print(name, param.shape)

seq_model = nn.Sequential(OrderedDict([
    ('hidden_linear', nn.Linear(1, 8)),
    ('hidden_activation', nn.Tanh()),
    ('output_linear', nn.Linear(8, 1))
]))
print(seq_model)
show("named_param_count", len(list(seq_model.named_parameters())))
numpy_init(torch, seq_model, seed=1)
show("output_linear_bias", seq_model.output_linear.bias)

optimizer = optim.SGD(seq_model.parameters(), lr=1e-3)  # <1>

# (the book runs 5000 epochs; past about 1500 this oscillating run drifts with the float32
# rounding of either library, so it stops at 1000)
history = training_loop6(
    n_epochs=1000,
    optimizer=optimizer,
    model=seq_model,
    loss_fn=nn.MSELoss(),
    t_u_train=t_un_train,
    t_u_val=t_un_val,
    t_c_train=t_c_train,
    t_c_val=t_c_val)
show("seq_history", history)
show("seq_output", seq_model(t_un_val))
show("seq_answer", t_c_val)
# (the last gradient is a small difference of large terms: its shape is compared, its values printed)
show("hidden_weight_grad_shape", list(seq_model.hidden_linear.weight.grad.shape))
print('hidden_linear.weight.grad =', seq_model.hidden_linear.weight.grad.flatten().tolist())

t_range = torch.arange(20., 90.).unsqueeze(1)
show("t_range_shape", list(t_range.shape))
show("t_range_predictions", seq_model(0.1 * t_range).detach()[::10])
