"""d2l.ai "Recurrent Neural Network Implementation from Scratch" and "Batch Normalization"
(from scratch), scaled down: an RNN's parameters made by hand, ``F.one_hot`` inputs, a tanh
RNN loop, gradient clipping by the global norm written out, perplexity, greedy prediction;
then ``batch_norm`` with moving averages by hand (``torch.is_grad_enabled`` to tell training),
a ``BatchNorm`` module with it inside LeNet, trained a few steps.

    python d2l_scratch.py [torch|numbagrad]
"""
import math

import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    from torch import nn
    from torch.nn import functional as F
else:
    import numbagrad as torch
    from numbagrad import nn
    from numbagrad.nn import functional as F

rng = np.random.default_rng(0)
text = "the time machine by h g wells the time traveller for so it will be convenient to speak of him "
vocab = sorted(set(text))
token_to_idx = {t: i for i, t in enumerate(vocab)}
corpus = [token_to_idx[c] for c in text]
vocab_size = len(vocab)
show('vocab_size', vocab_size)
show('one_hot', F.one_hot(torch.tensor([0, 2]), len(vocab)).sum(0)[:5])


def seq_data_iter_sequential(corpus, batch_size, num_steps, offset):
    num_tokens = ((len(corpus) - offset - 1) // batch_size) * batch_size
    Xs = torch.tensor(corpus[offset: offset + num_tokens])
    Ys = torch.tensor(corpus[offset + 1: offset + 1 + num_tokens])
    Xs, Ys = Xs.reshape(batch_size, -1), Ys.reshape(batch_size, -1)
    num_batches = Xs.shape[1] // num_steps
    for i in range(0, num_steps * num_batches, num_steps):
        X = Xs[:, i: i + num_steps]
        Y = Ys[:, i: i + num_steps]
        yield X, Y


def get_params(vocab_size, num_hiddens, device):
    num_inputs = num_outputs = vocab_size

    def normal(shape):
        return torch.from_numpy(rng.normal(size=shape).astype(np.float32)) * 0.01

    # Hidden layer parameters
    W_xh = normal((num_inputs, num_hiddens))
    W_hh = normal((num_hiddens, num_hiddens))
    b_h = torch.zeros(num_hiddens, device=device)
    # Output layer parameters
    W_hq = normal((num_hiddens, num_outputs))
    b_q = torch.zeros(num_outputs, device=device)
    # Attach gradients
    params = [W_xh, W_hh, b_h, W_hq, b_q]
    for param in params:
        param.requires_grad_(True)
    return params


def init_rnn_state(batch_size, num_hiddens, device):
    return (torch.zeros((batch_size, num_hiddens), device=device), )


def rnn(inputs, state, params):
    # Here `inputs` shape: (`num_steps`, `batch_size`, `vocab_size`)
    W_xh, W_hh, b_h, W_hq, b_q = params
    H, = state
    outputs = []
    # Shape of `X`: (`batch_size`, `vocab_size`)
    for X in inputs:
        H = torch.tanh(torch.mm(X, W_xh) + torch.mm(H, W_hh) + b_h)
        Y = torch.mm(H, W_hq) + b_q
        outputs.append(Y)
    return torch.cat(outputs, dim=0), (H,)


class RNNModelScratch:  #@save
    """A RNN Model implemented from scratch."""
    def __init__(self, vocab_size, num_hiddens, device,
                 get_params, init_state, forward_fn):
        self.vocab_size, self.num_hiddens = vocab_size, num_hiddens
        self.params = get_params(vocab_size, num_hiddens, device)
        self.init_state, self.forward_fn = init_state, forward_fn

    def __call__(self, X, state):
        X = F.one_hot(X.T, self.vocab_size).type(torch.float32)
        return self.forward_fn(X, state, self.params)

    def begin_state(self, batch_size, device):
        return self.init_state(batch_size, self.num_hiddens, device)


num_hiddens = 32
device = torch.device('cpu')
net = RNNModelScratch(len(vocab), num_hiddens, device, get_params, init_rnn_state, rnn)
X = torch.arange(10).reshape((2, 5))
state = net.begin_state(X.shape[0], device)
Y, new_state = net(X.to(device), state)
show('shapes', list(Y.shape) + [len(new_state)] + list(new_state[0].shape))


def predict_ch8(prefix, num_preds, net, device):  #@save
    """Generate new characters following the `prefix`."""
    state = net.begin_state(batch_size=1, device=device)
    outputs = [token_to_idx[prefix[0]]]
    get_input = lambda: torch.tensor([outputs[-1]], device=device).reshape((1, 1))
    for y in prefix[1:]:  # Warm-up period
        _, state = net(get_input(), state)
        outputs.append(token_to_idx[y])
    for _ in range(num_preds):  # Predict `num_preds` steps
        y, state = net(get_input(), state)
        outputs.append(int(y.argmax(dim=1).reshape(1)))
    return ''.join([vocab[i] for i in outputs])


def grad_clipping(net, theta):  #@save
    """Clip the gradient."""
    if isinstance(net, nn.Module):
        params = [p for p in net.parameters() if p.requires_grad]
    else:
        params = net.params
    norm = torch.sqrt(sum(torch.sum((p.grad ** 2)) for p in params))
    if norm > theta:
        for param in params:
            param.grad[:] *= theta / norm
    return norm


def sgd(params, lr, batch_size):
    with torch.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()


def train_epoch_ch8(net, train_iter, loss, updater, device, use_random_iter):
    """Train a net within one epoch (defined in Chapter 8)."""
    state = None
    total, count = 0.0, 0
    norms = []
    for X, Y in train_iter:
        if state is None or use_random_iter:
            # Initialize `state` when either it is the first iteration or
            # using random sampling
            state = net.begin_state(batch_size=X.shape[0], device=device)
        else:
            for s in state:
                s.detach_()
        y = Y.T.reshape(-1)
        X, y = X.to(device), y.to(device)
        y_hat, state = net(X, state)
        l = loss(y_hat, y.long()).mean()
        l.backward()
        norms.append(float(grad_clipping(net, 1)))
        updater(batch_size=1)
        total += float(l) * y.numel()
        count += y.numel()
    return math.exp(total / count), norms


lr = 1.0
loss = nn.CrossEntropyLoss()
updater = lambda batch_size: sgd(net.params, lr, batch_size)
ppls = []
for epoch in range(6):
    ppl, norms = train_epoch_ch8(net, seq_data_iter_sequential(corpus, 2, 6, epoch % 3), loss, updater, device, False)
    ppls.append(ppl)
show('perplexity', ppls)
show('clip_norms', norms)
print(predict_ch8('time ', 10, net, device))
show('W_hq_row', net.params[3][0, :6])


# ----- Batch normalization from scratch
def batch_norm(X, gamma, beta, moving_mean, moving_var, eps, momentum):
    # Use is_grad_enabled to determine whether we are in training mode
    if not torch.is_grad_enabled():
        # In prediction mode, use mean and variance obtained by moving average
        X_hat = (X - moving_mean) / torch.sqrt(moving_var + eps)
    else:
        assert len(X.shape) in (2, 4)
        if len(X.shape) == 2:
            # When using a fully connected layer, calculate the mean and
            # variance on the feature dimension
            mean = X.mean(dim=0)
            var = ((X - mean) ** 2).mean(dim=0)
        else:
            # When using a two-dimensional convolutional layer, calculate the
            # mean and variance on the channel dimension (axis=1). Here we
            # need to maintain the shape of `X`, so that the broadcasting
            # operation can be carried out later
            mean = X.mean(dim=(0, 2, 3), keepdim=True)
            var = ((X - mean) ** 2).mean(dim=(0, 2, 3), keepdim=True)
        # In training mode, the current mean and variance are used
        X_hat = (X - mean) / torch.sqrt(var + eps)
        # Update the mean and variance using moving average
        moving_mean = (1.0 - momentum) * moving_mean + momentum * mean
        moving_var = (1.0 - momentum) * moving_var + momentum * var
    Y = gamma * X_hat + beta  # Scale and shift
    return Y, moving_mean.data, moving_var.data


class BatchNorm(nn.Module):
    # `num_features`: the number of outputs for a fully connected layer
    # or the number of output channels for a convolutional layer. `num_dims`:
    # 2 for a fully connected layer and 4 for a convolutional layer
    def __init__(self, num_features, num_dims):
        super().__init__()
        if num_dims == 2:
            shape = (1, num_features)
        else:
            shape = (1, num_features, 1, 1)
        # The scale parameter and the shift parameter (model parameters) are
        # initialized to 1 and 0, respectively
        self.gamma = nn.Parameter(torch.ones(shape))
        self.beta = nn.Parameter(torch.zeros(shape))
        # The variables that are not model parameters are initialized to 0 and
        # 1
        self.moving_mean = torch.zeros(shape)
        self.moving_var = torch.ones(shape)

    def forward(self, X):
        # If `X` is not on the main memory, copy `moving_mean` and
        # `moving_var` to the device where `X` is located
        if self.moving_mean.device != X.device:
            self.moving_mean = self.moving_mean.to(X.device)
            self.moving_var = self.moving_var.to(X.device)
        # Save the updated `moving_mean` and `moving_var`
        Y, self.moving_mean, self.moving_var = batch_norm(
            X, self.gamma, self.beta, self.moving_mean,
            self.moving_var, eps=1e-5, momentum=0.1)
        return Y


net = nn.Sequential(
    nn.Conv2d(1, 6, kernel_size=5), BatchNorm(6, num_dims=4), nn.Sigmoid(),
    nn.AvgPool2d(kernel_size=2, stride=2),
    nn.Conv2d(6, 16, kernel_size=3), BatchNorm(16, num_dims=4), nn.Sigmoid(),
    nn.AvgPool2d(kernel_size=2, stride=2), nn.Flatten(),
    nn.Linear(16 * 2 * 2, 30), BatchNorm(30, num_dims=2), nn.Sigmoid(),
    nn.Linear(30, 20), BatchNorm(20, num_dims=2), nn.Sigmoid(),
    nn.Linear(20, 10))
numpy_init(torch, net)
show('param_count', sum(p.numel() for p in net.parameters()))
X = torch.from_numpy(rng.normal(size=(16, 1, 16, 16)).astype(np.float32))
y = torch.from_numpy(rng.integers(0, 10, 16))
for layer in net:
    X_shape = layer.__class__.__name__
trainer = torch.optim.SGD(net.parameters(), lr=0.9)
loss = nn.CrossEntropyLoss(reduction='none')
losses = []
for step in range(6):
    trainer.zero_grad()
    l = loss(net(X), y)
    l.mean().backward()
    trainer.step()
    losses.append(l.mean().item())
show('bn_losses', losses)
show('gamma', net[1].gamma.reshape((-1,)))
show('beta', net[1].beta.reshape((-1,)))
show('moving_mean', net[1].moving_mean.reshape((-1,)))
show('moving_var', net[5].moving_var.reshape((-1,))[:6])
with torch.no_grad():
    eval_out = net(X)
show('eval_acc', (eval_out.argmax(1) == y).float().mean())
show('eval_out', eval_out[0])

# the concise version: nn.BatchNorm2d/1d, same data, same starting weights
net2 = nn.Sequential(
    nn.Conv2d(1, 6, kernel_size=5), nn.BatchNorm2d(6), nn.Sigmoid(),
    nn.AvgPool2d(kernel_size=2, stride=2),
    nn.Conv2d(6, 16, kernel_size=3), nn.BatchNorm2d(16), nn.Sigmoid(),
    nn.AvgPool2d(kernel_size=2, stride=2), nn.Flatten(),
    nn.Linear(64, 30), nn.BatchNorm1d(30), nn.Sigmoid(),
    nn.Linear(30, 20), nn.BatchNorm1d(20), nn.Sigmoid(),
    nn.Linear(20, 10))
numpy_init(torch, net2)
out2 = net2(X)
show('concise_out', out2[0])
show('concise_running_var', net2[1].running_var)
