"""Karpathy, makemore part 5 ("Building a WaveNet"), scaled down: torch.nn-like layers written
by hand -- Linear (kaiming-scaled weight ``randn / fan_in**0.5``), BatchNorm1d with running
mean/var buffers updated under torch.no_grad() and the mean/var taken over dims (0, 1) for a
3-d input, Tanh, Embedding, FlattenConsecutive (``x.view(B, T//n, C*n)``, squeeze(1) when one
step is left) and Sequential -- stacked into the hierarchical model over a block of 8
characters; the last layer's weight scaled by 0.1 under no_grad, ``p.requires_grad = True``,
F.cross_entropy on minibatches, the manual ``p.data += -lr * p.grad`` update with a learning
rate decay, then ``layer.training = False`` for the split losses and sampling. The names are
letters drawn by NumPy; every torch.randn/randint/multinomial draw comes from NumPy.

    python makemore_wavenet.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
    import torch.nn.functional as F
else:
    import numbagrad as torch
    import numbagrad.nn.functional as F

rng = np.random.default_rng(42)


def randn(*shape):
    # (torch.randn with NumPy's generator, the same in both libraries)
    return torch.from_numpy(rng.standard_normal(shape).astype(np.float32))


# a generated list of "names": consonant-vowel syllables
consonants, vowels = list('bdklmnrst'), list('aeiou')
words = []
for _ in range(120):
    n = int(rng.integers(1, 4))
    w = ''.join(rng.choice(consonants) + rng.choice(vowels) for _ in range(n))
    if rng.random() < 0.5:
        w += rng.choice(consonants)
    words.append(w)
print(len(words), max(len(w) for w in words), words[:8])

# the vocabulary of characters and mappings to/from integers
chars = sorted(list(set(''.join(words))))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi['.'] = 0
itos = {i: s for s, i in stoi.items()}
vocab_size = len(itos)
show('vocab_size', vocab_size)

# shuffle the words
perm = rng.permutation(len(words))
words = [words[i] for i in perm]

block_size = 8  # context length: how many characters do we take to predict the next one?


def build_dataset(words):
    X, Y = [], []

    for w in words:
        context = [0] * block_size
        for ch in w + '.':
            ix = stoi[ch]
            X.append(context)
            Y.append(ix)
            context = context[1:] + [ix]  # crop and append

    X = torch.tensor(X)
    Y = torch.tensor(Y)
    print(X.shape, Y.shape)
    return X, Y


n1 = int(0.8 * len(words))
n2 = int(0.9 * len(words))
Xtr, Ytr = build_dataset(words[:n1])     # 80%
Xdev, Ydev = build_dataset(words[n1:n2])   # 10%
Xte, Yte = build_dataset(words[n2:])     # 10%
show('shapes', list(Xtr.shape) + list(Xdev.shape) + list(Xte.shape))

for x, y in zip(Xtr[:10], Ytr[:10]):
    print(''.join(itos[ix.item()] for ix in x), '-->', itos[y.item()])


# -----------------------------------------------------------------------------------------------
class Linear:

    def __init__(self, fan_in, fan_out, bias=True):
        self.weight = randn(fan_in, fan_out) / fan_in**0.5  # note: kaiming init
        self.bias = torch.zeros(fan_out) if bias else None

    def __call__(self, x):
        self.out = x @ self.weight
        if self.bias is not None:
            self.out += self.bias
        return self.out

    def parameters(self):
        return [self.weight] + ([] if self.bias is None else [self.bias])


# -----------------------------------------------------------------------------------------------
class BatchNorm1d:

    def __init__(self, dim, eps=1e-5, momentum=0.1):
        self.eps = eps
        self.momentum = momentum
        self.training = True
        # parameters (trained with backprop)
        self.gamma = torch.ones(dim)
        self.beta = torch.zeros(dim)
        # buffers (trained with a running 'momentum update')
        self.running_mean = torch.zeros(dim)
        self.running_var = torch.ones(dim)

    def __call__(self, x):
        # calculate the forward pass
        if self.training:
            if x.ndim == 2:
                dim = 0
            elif x.ndim == 3:
                dim = (0, 1)
            xmean = x.mean(dim, keepdim=True)  # batch mean
            xvar = x.var(dim, keepdim=True)  # batch variance
        else:
            xmean = self.running_mean
            xvar = self.running_var
        xhat = (x - xmean) / torch.sqrt(xvar + self.eps)  # normalize to unit variance
        self.out = self.gamma * xhat + self.beta
        # update the buffers
        if self.training:
            with torch.no_grad():
                self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * xmean
                self.running_var = (1 - self.momentum) * self.running_var + self.momentum * xvar
        return self.out

    def parameters(self):
        return [self.gamma, self.beta]


# -----------------------------------------------------------------------------------------------
class Tanh:
    def __call__(self, x):
        self.out = torch.tanh(x)
        return self.out

    def parameters(self):
        return []


# -----------------------------------------------------------------------------------------------
class Embedding:

    def __init__(self, num_embeddings, embedding_dim):
        self.weight = randn(num_embeddings, embedding_dim)

    def __call__(self, IX):
        self.out = self.weight[IX]
        return self.out

    def parameters(self):
        return [self.weight]


# -----------------------------------------------------------------------------------------------
class FlattenConsecutive:

    def __init__(self, n):
        self.n = n

    def __call__(self, x):
        B, T, C = x.shape
        x = x.view(B, T//self.n, C*self.n)
        if x.shape[1] == 1:
            x = x.squeeze(1)
        self.out = x
        return self.out

    def parameters(self):
        return []


# -----------------------------------------------------------------------------------------------
class Sequential:

    def __init__(self, layers):
        self.layers = layers

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        self.out = x
        return self.out

    def parameters(self):
        # get parameters of all layers and stretch them out into one list
        return [p for layer in self.layers for p in layer.parameters()]


torch.manual_seed(42)  # seed rng for reproducibility (the draws themselves come from NumPy)

# hierarchical network
n_embd = 6  # the dimensionality of the character embedding vectors
n_hidden = 16  # the number of neurons in the hidden layer of the MLP
model = Sequential([
    Embedding(vocab_size, n_embd),
    FlattenConsecutive(2), Linear(n_embd * 2, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
    FlattenConsecutive(2), Linear(n_hidden*2, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
    FlattenConsecutive(2), Linear(n_hidden*2, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
    Linear(n_hidden, vocab_size),
])

# parameter init
with torch.no_grad():
    model.layers[-1].weight *= 0.1  # last layer make less confident

parameters = model.parameters()
print(sum(p.nelement() for p in parameters))  # number of parameters in total
show('n_params', sum(p.nelement() for p in parameters))
for p in parameters:
    p.requires_grad = True

# look at a batch of 4 examples through the layers
ix = torch.from_numpy(rng.integers(0, Xtr.shape[0], (4,)))
Xb, Yb = Xtr[ix], Ytr[ix]
logits = model(Xb)
print(Xb.shape)
for layer in model.layers:
    print(layer.__class__.__name__, ':', tuple(layer.out.shape))
show('layer_shapes', [list(layer.out.shape) for layer in model.layers])
# (restore the running statistics that this look changed)
for layer in model.layers:
    if isinstance(layer, BatchNorm1d):
        layer.running_mean = torch.zeros(layer.gamma.shape[0])
        layer.running_var = torch.ones(layer.gamma.shape[0])

# same optimization as last time
max_steps = 60
batch_size = 32
lossi = []

for i in range(max_steps):

    # minibatch construct
    ix = torch.from_numpy(rng.integers(0, Xtr.shape[0], (batch_size,)))
    Xb, Yb = Xtr[ix], Ytr[ix]  # batch X,Y

    # forward pass
    logits = model(Xb)
    loss = F.cross_entropy(logits, Yb)  # loss function

    # backward pass
    for p in parameters:
        p.grad = None
    loss.backward()

    # update: simple SGD
    lr = 0.1 if i < 45 else 0.01  # step learning rate decay
    for p in parameters:
        p.data += -lr * p.grad

    # track stats
    if i % 20 == 0:  # print every once in a while
        print(f'{i:7d}/{max_steps:7d}: {loss.item():.4f}')
    lossi.append(loss.log10().item())

show('lossi', lossi)
show('lossi_mean', torch.tensor(lossi).view(-1, 20).mean(1))
show('emb_grad', model.layers[0].weight.grad[:3])
show('last_weight_grad', model.layers[-1].weight.grad[:4])
show('gamma_grad', model.layers[3].gamma.grad)
show('running_mean_shape', list(model.layers[3].running_mean.shape))
show('running_mean', model.layers[3].running_mean)
show('running_var', model.layers[7].running_var)
show('running_var_last', model.layers[11].running_var)

# put layers into eval mode (needed for batchnorm especially)
for layer in model.layers:
    layer.training = False


# evaluate the loss
@torch.no_grad()  # this decorator disables gradient tracking inside pytorch
def split_loss(split):
    x, y = {
        'train': (Xtr, Ytr),
        'val': (Xdev, Ydev),
        'test': (Xte, Yte),
    }[split]
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    print(split, loss.item())
    return loss.item()


show('split_losses', [split_loss('train'), split_loss('val'), split_loss('test')])

# sample from the model
samples = []
for _ in range(5):

    out = []
    context = [0] * block_size  # initialize with all ...
    while True:
        # forward pass the neural net
        logits = model(torch.tensor([context]))
        probs = F.softmax(logits, dim=1)
        # sample from the distribution (torch.multinomial's place: a NumPy uniform and the cdf)
        u = torch.tensor([[rng.random()]], dtype=torch.float32)
        ix = min((probs.cumsum(dim=1) < u).sum().item(), vocab_size - 1)
        # shift the context window and track the samples
        context = context[1:] + [ix]
        out.append(ix)
        # if we sample the special '.' token, break
        if ix == 0 or len(out) > 12:
            break

    print(''.join(itos[i] for i in out))  # decode and print the generated word
    samples.append(out)
show('samples', samples)
