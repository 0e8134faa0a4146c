"""d2l's regularisation sections: weight decay from scratch (``l2_penalty`` as
``torch.sum(w.pow(2)) / 2`` added to the squared loss, minibatch SGD with ``lambd``) and the
concise version (optim.SGD with the param groups ``{"params": net.weight, "weight_decay":
wd}`` and ``{"params": net.bias}``); dropout from scratch with its mask drawn by NumPy
(``(mask > p).float() * X / (1.0 - p)``) and nn.Dropout in eval mode; and the Kaggle house
prices section's ``get_k_fold_data`` (torch.cat of slices) with ``log_rmse`` (torch.clamp to
``[1, inf)``, torch.sqrt of the MSE between logs) over k folds of Adam training.

    python d2l_regularization.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    from torch import nn
else:
    import numbagrad as torch
    from numbagrad import nn

rng = np.random.default_rng(11)


def normal(*shape, std=1.0):
    return torch.tensor((rng.standard_normal(shape) * std).astype(np.float32))


# --- weight decay: data y = 0.05 + sum(0.01 * x) + noise ---
n_train, n_test, num_inputs, batch_size = 20, 100, 200, 5
true_w, true_b = torch.ones((num_inputs, 1)) * 0.01, 0.05
X_train, X_test = normal(n_train, num_inputs), normal(n_test, num_inputs)
y_train = torch.matmul(X_train, true_w) + true_b + normal(n_train, 1, std=0.01)
y_test = torch.matmul(X_test, true_w) + true_b + normal(n_test, 1, std=0.01)


def data_iter(X, y, batch_size, order):
    for i in range(0, len(order), batch_size):
        idx = torch.tensor(order[i:i + batch_size])
        yield X[idx], y[idx]


def linreg(X, w, b):
    return torch.matmul(X, w) + b


def squared_loss(y_hat, y):
    return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2


def sgd(params, lr, batch_size):
    with torch.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()


def init_params():
    w = normal(num_inputs, 1).requires_grad_(True)
    b = torch.zeros(1, requires_grad=True)
    return [w, b]


def l2_penalty(w):
    return torch.sum(w.pow(2)) / 2


def evaluate_loss(net, X, y, loss):
    with torch.no_grad():
        return loss(net(X), y).mean().item()


orders = [rng.permutation(n_train).tolist() for _ in range(100)]


def train(lambd):
    w, b = init_params()
    net, loss = lambda X: linreg(X, w, b), squared_loss
    num_epochs, lr = 100, 0.003
    history = []
    for epoch in range(num_epochs):
        for X, y in data_iter(X_train, y_train, batch_size, orders[epoch]):
            l = loss(net(X), y) + lambd * l2_penalty(w)
            l.sum().backward()
            sgd([w, b], lr, batch_size)
        if (epoch + 1) % 20 == 0:
            history.append((evaluate_loss(net, X_train, y_train, loss),
                            evaluate_loss(net, X_test, y_test, loss)))
    print('L2 norm of w:', torch.norm(w).item())
    return torch.norm(w).item(), history, b


for lambd in (0, 3):
    norm, history, b = train(lambd)
    show(f'scratch_lambd{lambd}_norm', norm)
    show(f'scratch_lambd{lambd}_history', history)
    show(f'scratch_lambd{lambd}_b', b)


def train_concise(wd):
    net = nn.Sequential(nn.Linear(num_inputs, 1))
    numpy_init(torch, net, seed=5)
    loss = nn.MSELoss(reduction='none')
    num_epochs, lr = 100, 0.003
    trainer = torch.optim.SGD([
        {"params": net[0].weight, 'weight_decay': wd},
        {"params": net[0].bias}], lr=lr)
    history = []
    for epoch in range(num_epochs):
        for X, y in data_iter(X_train, y_train, batch_size, orders[epoch]):
            trainer.zero_grad()
            l = loss(net(X), y)
            l.mean().backward()
            trainer.step()
        if (epoch + 1) % 20 == 0:
            history.append((evaluate_loss(net, X_train, y_train, loss),
                            evaluate_loss(net, X_test, y_test, loss)))
    print('L2 norm of w:', net[0].weight.norm().item())
    groups = [(g['weight_decay'], g['lr'], len(g['params'])) for g in trainer.param_groups]
    return net[0].weight.norm().item(), history, groups


for wd in (0, 3):
    norm, history, groups = train_concise(wd)
    show(f'concise_wd{wd}_norm', norm)
    show(f'concise_wd{wd}_history', history)
    show(f'concise_wd{wd}_groups', groups)


# --- dropout from scratch ---
def dropout_layer(X, dropout, mask):
    assert 0 <= dropout <= 1
    if dropout == 1:
        return torch.zeros_like(X)
    if dropout == 0:
        return X
    mask = (mask > dropout).float()
    return mask * X / (1.0 - dropout)


X = torch.arange(16, dtype=torch.float32).reshape((2, 8))
for p in (0.0, 0.5, 1.0):
    m = torch.tensor(rng.uniform(0, 1, (2, 8)).astype(np.float32))
    show(f'dropout_{p}', dropout_layer(X, p, m))


class Net(nn.Module):
    def __init__(self, num_inputs, num_outputs, num_hiddens1, num_hiddens2, is_training=True):
        super().__init__()
        self.num_inputs = num_inputs
        self.training = is_training
        self.lin1 = nn.Linear(num_inputs, num_hiddens1)
        self.lin2 = nn.Linear(num_hiddens1, num_hiddens2)
        self.lin3 = nn.Linear(num_hiddens2, num_outputs)
        self.relu = nn.ReLU()

    def forward(self, X, masks):
        H1 = self.relu(self.lin1(X.reshape((-1, self.num_inputs))))
        if self.training:
            H1 = dropout_layer(H1, 0.2, masks[0])
        H2 = self.relu(self.lin2(H1))
        if self.training:
            H2 = dropout_layer(H2, 0.5, masks[1])
        return self.lin3(H2)


net = Net(12, 3, 16, 16)
numpy_init(torch, net, seed=6)
Xd = normal(6, 12)
yd = torch.tensor(rng.integers(0, 3, 6))
trainer = torch.optim.SGD(net.parameters(), lr=0.5)
loss = nn.CrossEntropyLoss(reduction='none')
dropout_losses = []
for step in range(15):
    masks = [torch.tensor(rng.uniform(0, 1, (6, 16)).astype(np.float32)) for _ in range(2)]
    l = loss(net(Xd, masks), yd)
    trainer.zero_grad()
    l.mean().backward()
    trainer.step()
    dropout_losses.append(l.mean().item())
show('dropout_scratch_losses', dropout_losses)

net = nn.Sequential(nn.Flatten(), nn.Linear(12, 16), nn.ReLU(), nn.Dropout(0.2),
                    nn.Linear(16, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 3))
numpy_init(torch, net, seed=6)
net.eval()
show('dropout_eval_training', [net.training, net[3].training])
show('dropout_eval_out', net(Xd))
show('dropout_eval_twice', [torch.equal(net(Xd), net(Xd))])
net.train()
show('dropout_train_training', [net[3].training, net[3].p])

# --- k-fold cross-validation ---
n, d = 40, 6
train_features = normal(n, d)
train_labels = torch.exp(train_features[:, :2].sum(1, keepdim=True) * 0.3 + 4.0
                         + normal(n, 1, std=0.05))
loss = nn.MSELoss()


def get_net():
    net = nn.Sequential(nn.Linear(d, 1))
    numpy_init(torch, net, seed=8)
    with torch.no_grad():
        net[0].bias.fill_(50.0)
    return net


def log_rmse(net, features, labels):
    clipped_preds = torch.clamp(net(features), 1, float('inf'))
    rmse = torch.sqrt(loss(torch.log(clipped_preds), torch.log(labels)))
    return rmse.item()


def get_k_fold_data(k, i, X, y):
    assert k > 1
    fold_size = X.shape[0] // k
    X_train, y_train = None, None
    for j in range(k):
        idx = slice(j * fold_size, (j + 1) * fold_size)
        X_part, y_part = X[idx, :], y[idx]
        if j == i:
            X_valid, y_valid = X_part, y_part
        elif X_train is None:
            X_train, y_train = X_part, y_part
        else:
            X_train = torch.cat([X_train, X_part], 0)
            y_train = torch.cat([y_train, y_part], 0)
    return X_train, y_train, X_valid, y_valid


def train_kfold(net, train_features, train_labels, test_features, test_labels,
                num_epochs, learning_rate, weight_decay, batch_size):
    train_ls, test_ls = [], []
    optimizer = torch.optim.Adam(net.parameters(), lr=learning_rate, weight_decay=weight_decay)
    m = train_features.shape[0]
    for epoch in range(num_epochs):
        for i in range(0, m, batch_size):
            X, y = train_features[i:i + batch_size], train_labels[i:i + batch_size]
            optimizer.zero_grad()
            l = loss(net(X), y)
            l.backward()
            optimizer.step()
        train_ls.append(log_rmse(net, train_features, train_labels))
        if test_labels is not None:
            test_ls.append(log_rmse(net, test_features, test_labels))
    return train_ls, test_ls


def k_fold(k, X_train, y_train, num_epochs, learning_rate, weight_decay, batch_size):
    train_l_sum, valid_l_sum = 0, 0
    for i in range(k):
        data = get_k_fold_data(k, i, X_train, y_train)
        show(f'fold{i}_shapes', [list(t.shape) for t in data])
        net = get_net()
        train_ls, valid_ls = train_kfold(net, *data, num_epochs, learning_rate,
                                         weight_decay, batch_size)
        train_l_sum += train_ls[-1]
        valid_l_sum += valid_ls[-1]
        show(f'fold{i}_train_ls', train_ls[::4])
        show(f'fold{i}_valid_ls', valid_ls[::4])
    return train_l_sum / k, valid_l_sum / k


train_l, valid_l = k_fold(4, train_features, train_labels, 20, 5.0, 0.01, 8)
show('kfold_avg', [train_l, valid_l])
