"""Karpathy's micrograd demo notebook (demo.ipynb) rewritten with torch tensors: micrograd's
``nn.py`` classes kept as they are (a ``Module`` base with ``zero_grad``/``parameters``, a
``Neuron`` holding ``w``/``b`` leaves with ``requires_grad=True``, ``Layer`` and ``MLP`` built from
lists, ``__repr__`` strings), the two-moons data made by hand in NumPy (``y*2 - 1`` labels), the
SVM "max-margin" loss ``(1 + -yi*scorei).relu()`` averaged over a batch with an L2 term
``alpha * sum(p*p)``, the accuracy list, and the notebook's optimisation loop with
``p.data -= learning_rate * p.grad`` under a decaying rate; all in float64 as micrograd's Python
floats are. Ends with the decision-boundary grid evaluated under ``torch.no_grad()`` and a
minibatch variant that picks rows by a NumPy permutation.

    python micrograd_moons.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
else:
    import numbagrad as torch

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(1337)


def make_moons(n_samples=100, noise=0.1):
    """sklearn.datasets.make_moons, written out."""
    n_out = n_samples // 2
    n_in = n_samples - n_out
    outer_x = np.cos(np.linspace(0, np.pi, n_out))
    outer_y = np.sin(np.linspace(0, np.pi, n_out))
    inner_x = 1 - np.cos(np.linspace(0, np.pi, n_in))
    inner_y = 1 - np.sin(np.linspace(0, np.pi, n_in)) - .5
    X = np.vstack([np.append(outer_x, inner_x), np.append(outer_y, inner_y)]).T
    y = np.hstack([np.zeros(n_out, dtype=np.intp), np.ones(n_in, dtype=np.intp)])
    X += rng.normal(scale=noise, size=X.shape)
    return X, y


# ---- micrograd/nn.py, on tensors
class Module:

    def zero_grad(self):
        for p in self.parameters():
            if p.grad is not None:
                p.grad.zero_()

    def parameters(self):
        return []


class Neuron(Module):

    def __init__(self, nin, nonlin=True):
        self.w = torch.tensor(rng.uniform(-1, 1, nin), requires_grad=True)
        self.b = torch.tensor(0.0, requires_grad=True)
        self.nonlin = nonlin

    def __call__(self, x):
        # x: (batch, nin) -- every example of the batch at once
        act = (x * self.w).sum(dim=-1) + self.b
        return act.relu() if self.nonlin else act

    def parameters(self):
        return [self.w, self.b]

    def __repr__(self):
        return f"{'ReLU' if self.nonlin else 'Linear'}Neuron({len(self.w)})"


class Layer(Module):

    def __init__(self, nin, nout, **kwargs):
        self.neurons = [Neuron(nin, **kwargs) for _ in range(nout)]

    def __call__(self, x):
        out = torch.stack([n(x) for n in self.neurons], dim=-1)
        return out[..., 0] if len(self.neurons) == 1 else out

    def parameters(self):
        return [p for n in self.neurons for p in n.parameters()]

    def __repr__(self):
        return f"Layer of [{', '.join(str(n) for n in self.neurons)}]"


class MLP(Module):

    def __init__(self, nin, nouts):
        sz = [nin] + nouts
        self.layers = [Layer(sz[i], sz[i + 1], nonlin=i != len(nouts) - 1) for i in range(len(nouts))]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def parameters(self):
        return [p for layer in self.layers for p in layer.parameters()]

    def __repr__(self):
        return f"MLP of [{', '.join(str(layer) for layer in self.layers)}]"


# ---- the notebook
X, y = make_moons(n_samples=100, noise=0.1)
y = y * 2 - 1  # make y be -1 or 1
show("moons_first", X[:3])
show("labels_sum", float(y.sum()))

# initialize a model
model = MLP(2, [16, 16, 1])  # 2-layer neural network
print(model)
show("number_of_parameters", len(model.parameters()))
show("parameter_count", sum(p.numel() for p in model.parameters()))

Xt = torch.tensor(X)
yt = torch.tensor(y.astype(np.float64))


# loss function
def loss(batch_size=None):
    # inline DataLoader :)
    if batch_size is None:
        Xb, yb = Xt, yt
    else:
        ri = rng.permutation(X.shape[0])[:batch_size]
        Xb, yb = Xt[torch.from_numpy(ri)], yt[torch.from_numpy(ri)]

    # forward the model to get scores
    scores = model(Xb)

    # svm "max-margin" loss
    losses = (1 + -yb * scores).relu()
    data_loss = losses.sum() * (1.0 / len(losses))
    # L2 regularization
    alpha = 1e-4
    reg_loss = alpha * sum((p * p).sum() for p in model.parameters())
    total_loss = data_loss + reg_loss

    # also get accuracy
    accuracy = [(yi > 0) == (scorei > 0) for yi, scorei in zip(yb.tolist(), scores.tolist())]
    return total_loss, sum(accuracy) / len(accuracy)


total_loss, acc = loss()
show("initial_loss_acc", [total_loss.item(), acc])

# optimization
history = []
for k in range(60):

    # forward
    total_loss, acc = loss()

    # backward
    model.zero_grad()
    total_loss.backward()

    # update (sgd)
    learning_rate = 1.0 - 0.9 * k / 100
    for p in model.parameters():
        p.data -= learning_rate * p.grad

    if k % 10 == 0:
        print(f"step {k} loss {total_loss.data}, accuracy {acc*100}%")
    history.append(total_loss.item())
show("loss_history", history)
show("final_accuracy", acc)
show("first_neuron_w", model.layers[0].neurons[0].w)
show("last_bias", model.layers[-1].neurons[0].b)

# visualize decision boundary (the grid the notebook colours with plt.contourf)
h = 0.25
x_min, x_max = X[:, 0].min() - 1, X[:, 0].max() + 1
y_min, y_max = X[:, 1].min() - 1, X[:, 1].max() + 1
xx, yy = np.meshgrid(np.arange(x_min, x_max, h), np.arange(y_min, y_max, h))
Xmesh = np.c_[xx.ravel(), yy.ravel()]
with torch.no_grad():
    scores = model(torch.tensor(Xmesh))
Z = np.array([s > 0 for s in scores.tolist()])
Z = Z.reshape(xx.shape)
show("grid_shape", list(Z.shape))
show("grid_positive", float(Z.sum()))
show("grid_scores_head", scores[:6])
show("grid_requires_grad", float(scores.requires_grad))

# minibatches of 32 (the loss function's batch_size argument)
for k in range(10):
    total_loss, acc = loss(batch_size=32)
    model.zero_grad()
    total_loss.backward()
    for p in model.parameters():
        p.data -= 0.05 * p.grad
show("minibatch_last_loss", total_loss.item())
show("grad_norm_last_layer", model.layers[-1].neurons[0].w.grad.norm())
