"""Dive into Deep Learning (2nd edition), chapters 3-4 in the book's object-oriented style:
``add_to_class`` decorators, ``HyperParameters.save_hyperparameters`` reading the caller's frame
by ``inspect``, a ``ProgressBoard`` that averages points ``every_n`` (no plotting), ``Module``
(``nn.Module`` + HyperParameters with ``training_step``/``validation_step``/``plot``),
``DataModule.get_tensorloader`` slicing tensors, and the ``Trainer`` whose ``fit_epoch`` calls
``loss.backward()`` and ``optim.step()`` inside ``with torch.no_grad():``; 3.3's
SyntheticRegressionData; 3.4's LinearRegressionScratch (``torch.normal(0, sigma, (n, 1),
requires_grad=True)`` replaced by NumPy draws, the hand-written ``SGD`` with ``param -= lr *
param.grad`` and ``param.grad.zero_()``); 3.5's concise LinearRegression (``nn.LazyLinear(1)``
with ``weight.data.normal_(0, 0.01)`` and ``bias.data.fill_(0)`` on the uninitialised
parameters, which the first forward re-initialises; ``apply_init`` materialising it, ``nn.MSELoss``,
``get_w_b``, the error in estimating w and b); and 4.1-4.5's Classifier with ``accuracy``
(``argmax(axis=1).type(Y.dtype)``) and ``loss`` by ``F.cross_entropy(..., reduction='mean' if
averaged else 'none')``, softmax from scratch and SoftmaxRegression with ``nn.Flatten()`` +
``nn.LazyLinear(10)`` on generated 28x28 images. Shuffling is off (``shuffle=train`` would draw
from each library's generator).

    python d2l_oop_regression.py [torch|numbagrad]
"""
import collections
import inspect

import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
    from torch import nn
    from torch.nn import functional as F
else:
    import numbagrad as torch
    from numbagrad import nn
    from numbagrad.nn import functional as F

rng = np.random.default_rng(2)


def add_to_class(Class):  #@save
    """Register functions as methods in created class."""
    def wrapper(obj):
        setattr(Class, obj.__name__, obj)
    return wrapper


class HyperParameters:  #@save
    """The base class of hyperparameters."""
    def save_hyperparameters(self, ignore=[]):
        """Save function arguments into class attributes."""
        frame = inspect.currentframe().f_back
        _, _, _, local_vars = inspect.getargvalues(frame)
        self.hparams = {k: v for k, v in local_vars.items()
                        if k not in set(ignore + ['self']) and not k.startswith('_')}
        for k, v in self.hparams.items():
            setattr(self, k, v)


class ProgressBoard(HyperParameters):  #@save
    """The board that plots data points in animation (here: only collects them)."""
    def __init__(self, xlabel=None, ylabel=None, xlim=None, ylim=None, xscale='linear',
                 yscale='linear', ls=['-', '--', '-.', ':'], colors=['C0', 'C1', 'C2', 'C3'],
                 fig=None, axes=None, figsize=(3.5, 2.5), display=True):
        self.save_hyperparameters()

    def draw(self, x, y, label, every_n=1):
        Point = collections.namedtuple('Point', ['x', 'y'])
        if not hasattr(self, 'raw_points'):
            self.raw_points = collections.OrderedDict()
            self.data = collections.OrderedDict()
        if label not in self.raw_points:
            self.raw_points[label] = []
            self.data[label] = []
        points = self.raw_points[label]
        line = self.data[label]
        points.append(Point(x, y))
        if len(points) != every_n:
            return
        mean = lambda x: sum(x) / len(x)
        line.append(Point(mean([p.x for p in points]), mean([p.y for p in points])))
        points.clear()


class Module(nn.Module, HyperParameters):  #@save
    """The base class of models."""
    def __init__(self, plot_train_per_epoch=2, plot_valid_per_epoch=1):
        super().__init__()
        self.save_hyperparameters()
        self.board = ProgressBoard()

    def loss(self, y_hat, y):
        raise NotImplementedError

    def forward(self, X):
        assert hasattr(self, 'net'), 'Neural network is defined'
        return self.net(X)

    def plot(self, key, value, train):
        """Plot a point in animation."""
        assert hasattr(self, 'trainer'), 'Trainer is not inited'
        self.board.xlabel = 'epoch'
        if train:
            x = self.trainer.train_batch_idx / self.trainer.num_train_batches
            n = self.trainer.num_train_batches / self.plot_train_per_epoch
        else:
            x = self.trainer.epoch + 1
            n = self.trainer.num_val_batches / self.plot_valid_per_epoch
        self.board.draw(x, value.to('cpu').detach().numpy(), ('train_' if train else 'val_') + key,
                        every_n=int(n))

    def training_step(self, batch):
        l = self.loss(self(*batch[:-1]), batch[-1])
        self.plot('loss', l, train=True)
        return l

    def validation_step(self, batch):
        l = self.loss(self(*batch[:-1]), batch[-1])
        self.plot('loss', l, train=False)

    def configure_optimizers(self):
        raise NotImplementedError

    def apply_init(self, inputs, init=None):
        self.forward(*inputs)
        if init is not None:
            self.net.apply(init)


class DataModule(HyperParameters):  #@save
    """The base class of data."""
    def __init__(self, root='../data', num_workers=4):
        self.save_hyperparameters()

    def get_dataloader(self, train):
        raise NotImplementedError

    def train_dataloader(self):
        return self.get_dataloader(train=True)

    def val_dataloader(self):
        return self.get_dataloader(train=False)

    def get_tensorloader(self, tensors, train, indices=slice(0, None)):
        tensors = tuple(a[indices] for a in tensors)
        dataset = torch.utils.data.TensorDataset(*tensors)
        return torch.utils.data.DataLoader(dataset, self.batch_size,
                                           shuffle=False)  # (shuffle=train in the book)


class Trainer(HyperParameters):  #@save
    """The base class for training models with data."""
    def __init__(self, max_epochs, num_gpus=0, gradient_clip_val=0):
        self.save_hyperparameters()
        assert num_gpus == 0, 'No GPU support yet'

    def prepare_data(self, data):
        self.train_dataloader = data.train_dataloader()
        self.val_dataloader = data.val_dataloader()
        self.num_train_batches = len(self.train_dataloader)
        self.num_val_batches = (len(self.val_dataloader)
                                if self.val_dataloader is not None else 0)

    def prepare_model(self, model):
        model.trainer = self
        model.board.xlim = [0, self.max_epochs]
        self.model = model

    def fit(self, model, data):
        self.prepare_data(data)
        self.prepare_model(model)
        self.optim = model.configure_optimizers()
        self.epoch = 0
        self.train_batch_idx = 0
        self.val_batch_idx = 0
        for self.epoch in range(self.max_epochs):
            self.fit_epoch()

    def prepare_batch(self, batch):
        return batch

    def fit_epoch(self):
        self.model.train()
        for batch in self.train_dataloader:
            loss = self.model.training_step(self.prepare_batch(batch))
            self.optim.zero_grad()
            with torch.no_grad():
                loss.backward()
                if self.gradient_clip_val > 0:  # To be discussed later
                    self.clip_gradients(self.gradient_clip_val, self.model)
                self.optim.step()
            self.train_batch_idx += 1
        if self.val_dataloader is None:
            return
        self.model.eval()
        for batch in self.val_dataloader:
            with torch.no_grad():
                self.model.validation_step(self.prepare_batch(batch))
            self.val_batch_idx += 1


# ---- 3.3 Synthetic Regression Data
class SyntheticRegressionData(DataModule):  #@save
    """Synthetic data for linear regression."""
    def __init__(self, w, b, noise=0.01, num_train=1000, num_val=1000, batch_size=32):
        super().__init__()
        self.save_hyperparameters()
        n = num_train + num_val
        self.X = torch.from_numpy(rng.normal(size=(n, len(w))).astype(np.float32))  # torch.randn(n, len(w))
        noise = torch.from_numpy(rng.normal(size=(n, 1)).astype(np.float32)) * noise
        self.y = torch.matmul(self.X, w.reshape((-1, 1))) + b + noise

    def get_dataloader(self, train):
        i = slice(0, self.num_train) if train else slice(self.num_train, None)
        return self.get_tensorloader((self.X, self.y), train, i)


data = SyntheticRegressionData(w=torch.tensor([2, -3.4]), b=4.2)
print('features:', data.X[0], '\nlabel:', data.y[0])
show("hparams_keys", len(data.hparams))
show("first_example", [data.X[0], data.y[0]])
X, y = next(iter(data.train_dataloader()))
show("batch_shapes", [list(X.shape), list(y.shape)])
show("num_train_batches", len(data.train_dataloader()))


# ---- 3.4 Linear Regression Implementation from Scratch
class LinearRegressionScratch(Module):  #@save
    """The linear regression model implemented from scratch."""
    def __init__(self, num_inputs, lr, sigma=0.01):
        super().__init__()
        self.save_hyperparameters()
        self.w = torch.tensor(rng.normal(0, sigma, (num_inputs, 1)).astype(np.float32), requires_grad=True)
        self.b = torch.zeros(1, requires_grad=True)


@add_to_class(LinearRegressionScratch)  #@save
def forward(self, X):
    return torch.matmul(X, self.w) + self.b


@add_to_class(LinearRegressionScratch)  #@save
def loss(self, y_hat, y):
    l = (y_hat - y) ** 2 / 2
    return l.mean()


class SGD(HyperParameters):  #@save
    """Minibatch stochastic gradient descent."""
    def __init__(self, params, lr):
        self.save_hyperparameters()

    def step(self):
        for param in self.params:
            param -= self.lr * param.grad

    def zero_grad(self):
        for param in self.params:
            if param.grad is not None:
                param.grad.zero_()


@add_to_class(LinearRegressionScratch)  #@save
def configure_optimizers(self):
    return SGD([self.w, self.b], self.lr)


model = LinearRegressionScratch(2, lr=0.03)
data = SyntheticRegressionData(w=torch.tensor([2, -3.4]), b=4.2)
trainer = Trainer(max_epochs=3)
trainer.fit(model, data)
with torch.no_grad():
    print(f'error in estimating w: {data.w - model.w.reshape(data.w.shape)}')
    print(f'error in estimating b: {data.b - model.b}')
    show("scratch_error_w", data.w - model.w.reshape(data.w.shape))
    show("scratch_error_b", data.b - model.b)
show("scratch_train_loss_points", [p.y for p in model.board.data['train_loss']])
show("scratch_val_loss_points", [p.y for p in model.board.data['val_loss']])
show("scratch_points_x", [p.x for p in model.board.data['train_loss']])
show("scratch_w_is_leaf", float(model.w.is_leaf and model.w.requires_grad))


# ---- 3.5 Concise Implementation of Linear Regression
class LinearRegression(Module):  #@save
    """The linear regression model implemented with high-level APIs."""
    def __init__(self, lr):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.LazyLinear(1)
        self.net.weight.data.normal_(0, 0.01)
        self.net.bias.data.fill_(0)


@add_to_class(LinearRegression)  #@save
def forward(self, X):
    return self.net(X)


@add_to_class(LinearRegression)  #@save
def loss(self, y_hat, y):
    fn = nn.MSELoss()
    return fn(y_hat, y)


@add_to_class(LinearRegression)  #@save
def configure_optimizers(self):
    return torch.optim.SGD(self.parameters(), self.lr)


@add_to_class(LinearRegression)  #@save
def get_w_b(self):
    return (self.net.weight.data, self.net.bias.data)


model = LinearRegression(lr=0.03)
show("lazy_weight_uninitialized", float(isinstance(model.net.weight, nn.parameter.UninitializedParameter)))
x0 = torch.from_numpy(rng.normal(size=(2, 2)).astype(np.float32))


def init_normal_from_numpy(module):
    # (the book's init draws torch.normal; here NumPy's numbers, so both libraries agree)
    if type(module) == nn.Linear:
        module.weight.data = torch.from_numpy(rng.normal(0, 0.01, tuple(module.weight.shape)).astype(np.float32))
        nn.init.zeros_(module.bias)


model.apply_init([x0], init_normal_from_numpy)
show("lazy_weight_materialized", float(type(model.net.weight) == nn.Parameter))
show("lazy_in_features", model.net.in_features)
data = SyntheticRegressionData(w=torch.tensor([2, -3.4]), b=4.2)
trainer = Trainer(max_epochs=3)
trainer.fit(model, data)
w, b = model.get_w_b()
print(f'error in estimating w: {data.w - w.reshape(data.w.shape)}')
print(f'error in estimating b: {data.b - b}')
show("concise_error_w", data.w - w.reshape(data.w.shape))
show("concise_error_b", data.b - b)
show("concise_train_loss_points", [p.y for p in model.board.data['train_loss']])

# the bias filled before materialisation is re-drawn by the first forward
lazy = nn.LazyLinear(1)
lazy.bias.data.fill_(0)
lazy(torch.ones(4, 3))
show("fill_before_materialize_kept_shape", list(lazy.bias.shape))


# ---- 4.1-4.3 the classifier base class
class Classifier(Module):  #@save
    """The base class of classification models."""
    def validation_step(self, batch):
        Y_hat = self(*batch[:-1])
        self.plot('loss', self.loss(Y_hat, batch[-1]), train=False)
        self.plot('acc', self.accuracy(Y_hat, batch[-1]), train=False)


@add_to_class(Module)  #@save
def configure_optimizers(self):
    return torch.optim.SGD(self.parameters(), lr=self.lr)


@add_to_class(Classifier)  #@save
def accuracy(self, Y_hat, Y, averaged=True):
    """Compute the number of correct predictions."""
    Y_hat = Y_hat.reshape((-1, Y_hat.shape[-1]))
    preds = Y_hat.argmax(axis=1).type(Y.dtype)
    compare = (preds == Y.reshape(-1)).type(torch.float32)
    return compare.mean() if averaged else compare


class FashionMNIST(DataModule):  #@save
    """Generated 28x28 images of ten classes standing in for Fashion-MNIST."""
    def __init__(self, batch_size=64, resize=(28, 28), n_train=600, n_val=200):
        super().__init__()
        self.save_hyperparameters()
        templates = rng.random((10, 28, 28)).astype(np.float32)
        ys = rng.integers(0, 10, n_train + n_val)
        xs = templates[ys] + 2.0 * rng.normal(size=(n_train + n_val, 28, 28)).astype(np.float32)
        self.X = torch.from_numpy(xs[:, None])
        self.Y = torch.from_numpy(ys)

    def get_dataloader(self, train):
        i = slice(0, self.n_train) if train else slice(self.n_train, None)
        return self.get_tensorloader((self.X, self.Y), train, i)


# ---- 4.2 softmax from scratch
def softmax(X):
    X_exp = torch.exp(X)
    partition = X_exp.sum(1, keepdims=True)
    return X_exp / partition  # The broadcasting mechanism is applied here


X = torch.from_numpy(rng.random((2, 5)).astype(np.float32))
X_prob = softmax(X)
show("softmax_rows", [X_prob, X_prob.sum(1)])


def cross_entropy(y_hat, y):
    return -torch.log(y_hat[list(range(len(y_hat))), y]).mean()


y = torch.tensor([0, 2])
y_hat = torch.tensor([[0.1, 0.3, 0.6], [0.3, 0.2, 0.5]])
show("pick_probabilities", y_hat[[0, 1], y])
show("cross_entropy_scratch", cross_entropy(y_hat, y))


class SoftmaxRegressionScratch(Classifier):
    def __init__(self, num_inputs, num_outputs, lr, sigma=0.01):
        super().__init__()
        self.save_hyperparameters()
        self.W = torch.tensor(rng.normal(0, sigma, (num_inputs, num_outputs)).astype(np.float32),
                              requires_grad=True)
        self.b = torch.zeros(num_outputs, requires_grad=True)

    def parameters(self):
        return [self.W, self.b]


@add_to_class(SoftmaxRegressionScratch)
def forward(self, X):
    X = X.reshape((-1, self.W.shape[0]))
    return softmax(torch.matmul(X, self.W) + self.b)


@add_to_class(SoftmaxRegressionScratch)
def loss(self, y_hat, y):
    return cross_entropy(y_hat, y)


data = FashionMNIST(batch_size=64)
model = SoftmaxRegressionScratch(num_inputs=784, num_outputs=10, lr=0.1)
trainer = Trainer(max_epochs=3)
trainer.fit(model, data)
show("scratch_softmax_val_acc", [p.y for p in model.board.data['val_acc']])
show("scratch_softmax_val_loss", [p.y for p in model.board.data['val_loss']])
X, y = next(iter(data.val_dataloader()))
preds = model(X).argmax(axis=1)
show("scratch_softmax_preds", preds[:12])
wrong = preds.type(y.dtype) != y
show("scratch_softmax_wrong", wrong.sum())


# ---- 4.5 concise softmax regression
class SoftmaxRegression(Classifier):  #@save
    """The softmax regression model."""
    def __init__(self, num_outputs, lr):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(nn.Flatten(), nn.LazyLinear(num_outputs))

    def forward(self, X):
        return self.net(X)


@add_to_class(Classifier)  #@save
def loss(self, Y_hat, Y, averaged=True):
    Y_hat = Y_hat.reshape((-1, Y_hat.shape[-1]))
    Y = Y.reshape((-1,))
    return F.cross_entropy(Y_hat, Y, reduction='mean' if averaged else 'none')


data = FashionMNIST(batch_size=64)
model = SoftmaxRegression(num_outputs=10, lr=0.1)
model.apply_init([data.X[:2]], init_normal_from_numpy)
trainer = Trainer(max_epochs=3)
trainer.fit(model, data)
show("concise_softmax_val_acc", [p.y for p in model.board.data['val_acc']])
show("concise_softmax_train_loss", [p.y for p in model.board.data['train_loss']])
X, y = next(iter(data.val_dataloader()))
show("loss_not_averaged", model.loss(model(X), y, averaged=False)[:5])
show("accuracy_not_averaged", model.accuracy(model(X), y, averaged=False)[:8])
show("hparams", [model.hparams['num_outputs'], model.hparams['lr']])
