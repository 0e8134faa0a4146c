"""fast.ai course part 2 notebooks "01_matmul", "03_backprop" and "04_minibatch_training",
scaled down: matrix multiplication by loops, elementwise products, broadcasting and einsum
(``expand_as``, ``stride``, ``c[:, None]``); kaiming initialisation by hand and by
``init.kaiming_normal_``, activation statistics; the forward and backward passes written by
hand with gradients stored in a ``.g`` attribute of each tensor, as functions, as layer classes
and as a ``Module`` with ``forward``/``bwd``, checked against autograd; log_softmax and
logsumexp by hand, ``nll`` by fancy indexing, accuracy; the minibatch loop updating
parameters under ``no_grad``, then ``nn.Module`` with ``named_children``, a hand-made module
registry (``__setattr__``), ``add_module``, ``nn.ModuleList``, ``functools.reduce``, an
Optimizer, Dataset and DataLoader by hand, and ``optim.SGD``.

    python fastai_from_scratch.py [torch|numbagrad]
"""
import math
from functools import reduce

import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
    import torch.nn.functional as F
    from torch import nn, optim, tensor
    from torch.nn import init
else:
    import numbagrad as torch
    import numbagrad.nn.functional as F
    from numbagrad import nn, optim, tensor
    from numbagrad.nn import init

rng = np.random.default_rng(0)


def randn(*shape):
    """``torch.randn`` with NumPy's numbers (the libraries' generators differ)."""
    return torch.from_numpy(rng.normal(size=shape).astype(np.float32))


def test_close(a, b, eps=1e-5):
    assert torch.allclose(a, b, rtol=0, atol=eps), (a, b)


# "MNIST": 64 flattened 6x6 images and their labels
x_train = torch.from_numpy(rng.uniform(0, 1, (64, 36)).astype(np.float32))
y_train = torch.from_numpy((x_train.numpy()[:, :4].sum(1) * 2.5).astype(np.int64) % 10)
x_valid, y_valid = x_train[48:], y_train[48:]
x_train, y_train = x_train[:48], y_train[:48]

# ----- 01_matmul
weights = randn(36, 10)
bias = torch.zeros(10)
m1 = x_valid[:5]
m2 = weights


def matmul(a, b):
    (ar, ac), (br, bc) = a.shape, b.shape
    c = torch.zeros(ar, bc)
    for i in range(ar):
        for j in range(bc):
            for k in range(ac): c[i, j] += a[i, k] * b[k, j]
    return c


t1 = matmul(m1[:2], m2)
show("matmul_loops", t1[:, :4])
test_close(t1, m1[:2] @ m2)


def matmul(a, b):
    (ar, ac), (br, bc) = a.shape, b.shape
    c = torch.zeros(ar, bc)
    for i in range(ar):
        for j in range(bc): c[i, j] = (a[i, :] * b[:, j]).sum()
    return c


test_close(matmul(m1, m2), m1 @ m2)

a = tensor([10., 6, -4])
b = tensor([2., 8, 7])
show("elementwise", [a + b, a < b, (a < b).float().mean()])
m = tensor([[1., 2, 3], [4, 5, 6], [7, 8, 9]])
show("frobenius", (m * m).sum().sqrt())

c = tensor([10., 20, 30])
show("broadcast_add", c + m)
t = c.expand_as(m)
show("expand_as", [t, list(t.stride()), list(t.shape)])
show("unsqueeze", [list(c.unsqueeze(0).shape), list(c.unsqueeze(1).shape), list(c[None].shape), list(c[:, None].shape),
                   list(c[None, :].shape), list(c[..., None].shape)])
show("broadcast_col", c[:, None].expand_as(m))
show("outer", c[:, None] * c[None, :])
show("greater", c[None] > c[:, None])


def matmul(a, b):
    (ar, ac), (br, bc) = a.shape, b.shape
    c = torch.zeros(ar, bc)
    for i in range(ar):
        c[i] = (a[i, :, None] * b).sum(dim=0)
    return c


test_close(matmul(m1, m2), m1 @ m2)


def matmul(a, b): return torch.einsum('ik,kj->ij', a, b)


test_close(matmul(m1, m2), m1 @ m2)
show("einsum_forms", [torch.einsum('ik,kj->ikj', m1[:1, :2], m2[:2]).sum((0, 1)), torch.einsum('i,i->', c, c),
                      torch.einsum('ij->ji', m)[0], torch.einsum('bi,bj->bij', m[:2], m[:2])[1, 2]])

# ----- 03_backprop: the forward and backward passes
n, m = x_train.shape
y_reg = y_train.float()
nh = 12

# simplified kaiming init / he init
w1 = randn(m, nh) * math.sqrt(2 / m)
b1 = torch.zeros(nh)
w2 = randn(nh, 1) / math.sqrt(nh)
b2 = torch.zeros(1)


def lin(x, w, b): return x @ w + b


def relu(x): return x.clamp_min(0.)


t = relu(lin(x_valid, w1, b1))
show("relu_stats", [t.mean(), t.std()])

w_k = torch.zeros(m, nh)
init.kaiming_normal_(w_k, mode='fan_out')
# (fan_out is dim 0 in PyTorch's (out, in) layout: here the m rows)
show("kaiming_std_near", bool(abs(w_k.std().item() - math.sqrt(2 / m)) < 0.05))
show("kaiming_gain", [init.calculate_gain('relu'), init.calculate_gain('leaky_relu', math.sqrt(5))])


def relu(x): return x.clamp_min(0.) - 0.5


t = relu(lin(x_valid, w1, b1))
show("shifted_relu_stats", [t.mean(), t.std()])


def relu(x): return x.clamp_min(0.)


def model(xb):
    l1 = lin(xb, w1, b1)
    l2 = relu(l1)
    l3 = lin(l2, w2, b2)
    return l3


res = model(x_valid)
show("model_shape", list(res.shape))


def mse(output, targ): return (output.squeeze(-1) - targ).pow(2).mean()


show("mse", mse(model(x_train), y_reg))


def mse_grad(inp, targ):
    # grad of loss with respect to output of previous layer
    inp.g = 2. * (inp.squeeze() - targ).unsqueeze(-1) / inp.shape[0]


def relu_grad(inp, out):
    # grad of relu with respect to input activations
    inp.g = (inp > 0).float() * out.g


def lin_grad(inp, out, w, b):
    # grad of matmul with respect to input
    inp.g = out.g @ w.t()
    w.g = (inp.unsqueeze(-1) * out.g.unsqueeze(1)).sum(0)
    b.g = out.g.sum(0)


def forward_and_backward(inp, targ):
    # forward pass:
    l1 = lin(inp, w1, b1)
    l2 = relu(l1)
    out = lin(l2, w2, b2)
    diff = out[:, 0] - targ
    loss = diff.pow(2).mean()

    # backward pass:
    mse_grad(out, targ)
    lin_grad(l2, out, w2, b2)
    relu_grad(l1, l2)
    lin_grad(inp, l1, w1, b1)


forward_and_backward(x_train, y_reg)
# Save for testing against later
w1g = w1.g.clone()
w2g = w2.g.clone()
b1g = b1.g.clone()
b2g = b2.g.clone()
ig = x_train.g.clone()
show("hand_grads", [w1g[0, :4], w2g[:4, 0], b1g[:4], b2g, ig[0, :4]])


def mkgrad(x): return x.clone().requires_grad_(True)


ptgrads = w12, w22, b12, b22, xt2 = tuple(map(mkgrad, (w1, w2, b1, b2, x_train)))


def forward(inp, targ):
    l1 = lin(inp, w12, b12)
    l2 = relu(l1)
    out = lin(l2, w22, b22)
    return mse(out, targ)


loss = forward(xt2, y_reg)
loss.backward()
for a, b in zip((w1g, w2g, b1g, b2g, ig), ptgrads): test_close(a, b.grad, eps=1e-4)
show("autograd_matches", True)


# Refactor model: layers as classes
class Relu():
    def __call__(self, inp):
        self.inp = inp
        self.out = inp.clamp_min(0.)
        return self.out

    def backward(self): self.inp.g = (self.inp > 0).float() * self.out.g


class Lin():
    def __init__(self, w, b): self.w, self.b = w, b

    def __call__(self, inp):
        self.inp = inp
        self.out = lin(inp, self.w, self.b)
        return self.out

    def backward(self):
        self.inp.g = self.out.g @ self.w.t()
        self.w.g = self.inp.t() @ self.out.g
        self.b.g = self.out.g.sum(0)


class Mse():
    def __call__(self, inp, targ):
        self.inp, self.targ = inp, targ
        self.out = mse(inp, targ)
        return self.out

    def backward(self):
        self.inp.g = 2. * (self.inp.squeeze() - self.targ).unsqueeze(-1) / self.targ.shape[0]


class Model():
    def __init__(self, w1, b1, w2, b2):
        self.layers = [Lin(w1, b1), Relu(), Lin(w2, b2)]
        self.loss = Mse()

    def __call__(self, x, targ):
        for l in self.layers: x = l(x)
        return self.loss(x, targ)

    def backward(self):
        self.loss.backward()
        for l in reversed(self.layers): l.backward()


model = Model(w1, b1, w2, b2)
loss = model(x_train, y_reg)
model.backward()
test_close(w2g, w2.g, eps=1e-4)
test_close(b2g, b2.g, eps=1e-4)
test_close(w1g, w1.g, eps=1e-4)
test_close(b1g, b1.g, eps=1e-4)
test_close(ig, x_train.g, eps=1e-4)
show("class_loss", loss)


# Module.forward()
class Module():
    def __call__(self, *args):
        self.args = args
        self.out = self.forward(*args)
        return self.out

    def forward(self): raise Exception('not implemented')
    def backward(self): self.bwd(self.out, *self.args)
    def bwd(self): raise Exception('not implemented')


class Relu(Module):
    def forward(self, inp): return inp.clamp_min(0.)
    def bwd(self, out, inp): inp.g = (inp > 0).float() * out.g


class Lin(Module):
    def __init__(self, w, b): self.w, self.b = w, b
    def forward(self, inp): return inp @ self.w + self.b

    def bwd(self, out, inp):
        inp.g = self.out.g @ self.w.t()
        self.w.g = inp.t() @ self.out.g
        self.b.g = self.out.g.sum(0)


class Mse(Module):
    def forward(self, inp, targ): return (inp.squeeze() - targ).pow(2).mean()
    def bwd(self, out, inp, targ): inp.g = 2 * (inp.squeeze() - targ).unsqueeze(-1) / targ.shape[0]


model = Model(w1, b1, w2, b2)
model.layers = [Lin(w1, b1), Relu(), Lin(w2, b2)]
model.loss = Mse()
loss = model(x_train, y_reg)
model.backward()
test_close(w2g, w2.g, eps=1e-4)
test_close(ig, x_train.g, eps=1e-4)
show("module_loss", loss)


# Autograd: a Function-free Module with nn.Linear, checked against the hand-written gradients
class Linear(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.w = torch.zeros(n_in, n_out).requires_grad_()
        self.b = torch.zeros(n_out).requires_grad_()

    def forward(self, inp): return inp @ self.w + self.b


lin_layer = Linear(m, nh)
with torch.no_grad():
    lin_layer.w.copy_(w1)
out = lin_layer(x_train)
out.backward(torch.ones_like(out))
show("linear_autograd_bias", lin_layer.b.grad[:4])

# ----- 04_minibatch_training
n, m = x_train.shape
c = int(y_train.max()) + 1
nh = 16


class Model(nn.Module):
    def __init__(self, n_in, nh, n_out):
        super().__init__()
        self.layers = [nn.Linear(n_in, nh), nn.ReLU(), nn.Linear(nh, n_out)]

    def __call__(self, x):
        for l in self.layers: x = l(x)
        return x


def load_linear(layer, seed):
    r = np.random.default_rng(seed)
    bound = 1 / math.sqrt(layer.in_features)
    with torch.no_grad():
        layer.weight.copy_(torch.from_numpy(r.uniform(-bound, bound, tuple(layer.weight.shape)).astype(np.float32)))
        layer.bias.copy_(torch.from_numpy(r.uniform(-bound, bound, tuple(layer.bias.shape)).astype(np.float32)))


model = Model(m, nh, 10)
load_linear(model.layers[0], 1)
load_linear(model.layers[2], 2)
pred = model(x_train)
show("pred_shape", list(pred.shape))


def log_softmax(x): return (x.exp() / (x.exp().sum(-1, keepdim=True))).log()


show("log_softmax_v1", log_softmax(pred)[0, :4])


def log_softmax(x): return x - x.exp().sum(-1, keepdim=True).log()


def logsumexp(x):
    m = x.max(-1)[0]
    return m + (x - m[:, None]).exp().sum(-1).log()


test_close(logsumexp(pred), pred.logsumexp(-1))


def log_softmax(x): return x - x.logsumexp(-1, keepdim=True)


sm_pred = log_softmax(pred)
show("sm_pred", sm_pred[0, :4])
show("fancy_index", sm_pred[[0, 1, 2], y_train[:3]])


def nll(input, target): return -input[range(target.shape[0]), target].mean()


loss = nll(sm_pred, y_train)
show("nll", loss)
test_close(F.nll_loss(F.log_softmax(pred, -1), y_train), loss, 1e-3)
test_close(F.cross_entropy(pred, y_train), loss, 1e-3)

loss_func = F.cross_entropy
bs = 16
xb = x_train[0:bs]  # a mini-batch from x
preds = model(xb)  # predictions
yb = y_train[0:bs]
show("batch_loss", loss_func(preds, yb))


def accuracy(out, yb): return (out.argmax(dim=1) == yb).float().mean()


show("accuracy", accuracy(preds, yb))
lr = 0.5   # learning rate
epochs = 3  # how many epochs to train for


def report(loss, preds, yb): print(f'{loss:.2f}, {accuracy(preds, yb):.2f}')


losses = []
for epoch in range(epochs):
    for i in range(0, n, bs):
        s = slice(i, min(n, i + bs))
        xb, yb = x_train[s], y_train[s]
        preds = model(xb)
        loss = loss_func(preds, yb)
        loss.backward()
        with torch.no_grad():
            for l in model.layers:
                if hasattr(l, 'weight'):
                    l.weight -= l.weight.grad * lr
                    l.bias -= l.bias.grad * lr
                    l.weight.grad.zero_()
                    l.bias.grad.zero_()
        losses.append(loss.item())
    report(loss, preds, yb)
show("manual_losses", losses)


# Using parameters and optim
class MLP(nn.Module):
    def __init__(self, n_in, nh, n_out):
        super().__init__()
        self.l1 = nn.Linear(n_in, nh)
        self.l2 = nn.Linear(nh, n_out)
        self.relu = nn.ReLU()

    def forward(self, x): return self.l2(self.relu(self.l1(x)))


model = MLP(m, nh, 10)
load_linear(model.l1, 1)
load_linear(model.l2, 2)
show("l1_shape", list(model.l1.weight.shape))
for name, l in model.named_children(): print(f"{name}: {l}")
show("children_names", [name for name, _ in model.named_children()] == ["l1", "l2", "relu"])
for p in model.parameters(): print(p.shape)


def fit():
    losses = []
    for epoch in range(epochs):
        for i in range(0, n, bs):
            s = slice(i, min(n, i + bs))
            xb, yb = x_train[s], y_train[s]
            preds = model(xb)
            loss = loss_func(preds, yb)
            loss.backward()
            with torch.no_grad():
                for p in model.parameters(): p -= p.grad * lr
                model.zero_grad()
            losses.append(loss.item())
        report(loss, preds, yb)
    return losses


show("parameters_losses", fit())


class MyModule:
    def __init__(self, n_in, nh, n_out):
        self._modules = {}
        self.l1 = nn.Linear(n_in, nh)
        self.l2 = nn.Linear(nh, n_out)

    def __setattr__(self, k, v):
        if not k.startswith("_"): self._modules[k] = v
        super().__setattr__(k, v)

    def __repr__(self): return f'{self._modules}'

    def parameters(self):
        for l in self._modules.values(): yield from l.parameters()


mdl = MyModule(m, nh, 10)
print(mdl)
show("my_module_params", [list(o.shape) for o in mdl.parameters()])

layers = [nn.Linear(m, nh), nn.ReLU(), nn.Linear(nh, 10)]
load_linear(layers[0], 1)
load_linear(layers[2], 2)


class Model(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = layers
        for i, l in enumerate(self.layers): self.add_module(f'layer_{i}', l)

    def forward(self, x): return reduce(lambda val, layer: layer(val), self.layers, x)


model = Model(layers)
print(model)
show("add_module_keys", list(model.state_dict().keys()) == ["layer_0.weight", "layer_0.bias", "layer_2.weight", "layer_2.bias"])
show("reduce_forward", model(xb)[0, :4])


class SequentialModel(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = nn.ModuleList(layers)

    def forward(self, x):
        for l in self.layers: x = l(x)
        return x


model = SequentialModel(layers)
print(model)
show("modulelist_losses", fit())
model = nn.Sequential(*layers)
show("sequential_loss", loss_func(model(x_train), y_train))


class Optimizer():
    def __init__(self, params, lr=0.5): self.params, self.lr = list(params), lr

    def step(self):
        with torch.no_grad():
            for p in self.params: p -= p.grad * self.lr

    def zero_grad(self):
        for p in self.params: p.grad.data.zero_()


def get_model(OptClass):
    model = nn.Sequential(nn.Linear(m, nh), nn.ReLU(), nn.Linear(nh, 10))
    load_linear(model[0], 3)
    load_linear(model[2], 4)
    return model, OptClass(model.parameters(), lr=lr)


class Dataset():
    def __init__(self, x, y): self.x, self.y = x, y
    def __len__(self): return len(self.x)
    def __getitem__(self, i): return self.x[i], self.y[i]


class DataLoader():
    def __init__(self, ds, bs): self.ds, self.bs = ds, bs

    def __iter__(self):
        for i in range(0, len(self.ds), self.bs): yield self.ds[i:i + self.bs]


train_ds, valid_ds = Dataset(x_train, y_train), Dataset(x_valid, y_valid)
train_dl = DataLoader(train_ds, bs)
valid_dl = DataLoader(valid_ds, bs)
xb, yb = next(iter(valid_dl))
show("dl_batch", [list(xb.shape), yb[:5]])

for OptClass in (Optimizer, optim.SGD):
    model, opt = get_model(OptClass)
    fit_losses = []
    for epoch in range(epochs):
        for xb, yb in train_dl:
            preds = model(xb)
            loss = loss_func(preds, yb)
            loss.backward()
            opt.step()
            opt.zero_grad()
            fit_losses.append(loss.item())
        report(loss, preds, yb)
    show("dl_losses", fit_losses)
    with torch.no_grad():
        tot_loss, tot_acc, count = 0., 0., 0
        for xb, yb in valid_dl:
            pred = model(xb)
            n_ = len(xb)
            count += n_
            tot_loss += loss_func(pred, yb).item() * n_
            tot_acc += accuracy(pred, yb).item() * n_
    show("valid", [tot_loss / count, tot_acc / count])
