"""Karpathy, makemore parts 2-3: the MLP language model (Bengio et al. 2003), learning-rate
search, and batch normalisation written by hand.

    python mlp.py [torch|numbagrad]
"""
import random
import sys

import numpy as np
from _words import WORDS

BACKEND = sys.argv[1] if len(sys.argv) > 1 else "numbagrad"
if BACKEND == "torch":
    import torch
    import torch.nn.functional as F
else:
    import numbagrad as torch
    import numbagrad.nn.functional as F

words = list(WORDS)
chars = sorted(list(set(''.join(words))))
stoi = {s: i+1 for i, s in enumerate(chars)}
stoi['.'] = 0
itos = {i: s for s, i in stoi.items()}
vocab_size = len(itos)

block_size = 3  # context length: how many characters do we take to predict the next one?


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


random.seed(42)
random.shuffle(words)
n1 = int(0.8*len(words))
n2 = int(0.9*len(words))
Xtr, Ytr = build_dataset(words[:n1])
Xdev, Ydev = build_dataset(words[n1:n2])
Xte, Yte = build_dataset(words[n2:])

# the two libraries' generators give different streams: parameters come from numpy
rng = np.random.default_rng(2147483647)


def randn(*shape):
    return torch.tensor(rng.standard_normal(shape).astype(np.float32))


g = torch.Generator().manual_seed(2147483647)  # for reproducibility
C = torch.randn((27, 10), generator=g)
assert C.shape == (27, 10) and C.dtype == torch.float32
C = randn(27, 10)
W1 = randn(30, 200) * (5/3)/(30**0.5)
b1 = randn(200) * 0.01
W2 = randn(200, 27) * 0.01
b2 = randn(27) * 0
bngain = torch.ones((1, 200))
bnbias = torch.zeros((1, 200))
bnmean_running = torch.zeros((1, 200))
bnstd_running = torch.ones((1, 200))
parameters = [C, W1, b1, W2, b2, bngain, bnbias]
print(sum(p.nelement() for p in parameters))  # number of parameters in total
for p in parameters:
    p.requires_grad = True

lre = torch.linspace(-3, 0, 1000)
lrs = 10**lre
assert abs(lrs[0].item() - 1e-3) < 1e-9 and lrs[-1].item() == 1.0

# minibatches from numpy too (torch.randint's draws differ between the libraries)
ix = torch.randint(0, Xtr.shape[0], (32,))
assert ix.shape == (32,) and ix.dtype == torch.int64 and 0 <= ix.min().item()
batches = rng.integers(0, Xtr.shape[0], size=(30, 32))

lri = []
lossi = []
stepi = []
for i in range(30):
    # minibatch construct
    ix = torch.tensor(batches[i])
    Xb, Yb = Xtr[ix], Ytr[ix]  # batch X,Y

    # forward pass
    emb = C[Xb]  # (32, 3, 10)
    embcat = emb.view(-1, 30)  # concatenate the vectors
    # Linear layer
    hpreact = embcat @ W1 + b1  # hidden layer pre-activation
    # BatchNorm layer
    bnmeani = hpreact.mean(0, keepdim=True)
    bnstdi = hpreact.std(0, keepdim=True)
    hpreact = bngain * (hpreact - bnmeani) / bnstdi + bnbias
    with torch.no_grad():
        bnmean_running = 0.999 * bnmean_running + 0.001 * bnmeani
        bnstd_running = 0.999 * bnstd_running + 0.001 * bnstdi
    # Non-linearity
    h = torch.tanh(hpreact)  # hidden layer
    logits = h @ W2 + b2  # output layer
    loss = F.cross_entropy(logits, Yb)  # loss function

    # backward pass
    for p in parameters:
        p.grad = None
    loss.backward()

    # update
    lr = lrs[600 + 10 * i].item() if i < 20 else 0.01  # step learning rate decay
    for p in parameters:
        p.data += -lr * p.grad

    # track stats
    lri.append(lre[i])
    stepi.append(i)
    lossi.append(loss.log10().item())

# calibrate the batch norm at the end of training
with torch.no_grad():
    # pass the training set through
    emb = C[Xtr]
    embcat = emb.view(emb.shape[0], -1)
    hpreact = embcat @ W1 + b1
    # measure the mean/std over the entire training set
    bnmean = hpreact.mean(0, keepdim=True)
    bnstd = hpreact.std(0, keepdim=True)


@torch.no_grad()  # this decorator disables gradient tracking
def split_loss(split):
    x, y = {
        'train': (Xtr, Ytr),
        'val': (Xdev, Ydev),
        'test': (Xte, Yte),
    }[split]
    emb = C[x]  # (N, block_size, n_embd)
    embcat = emb.view(emb.shape[0], -1)  # concat into (N, block_size * n_embd)
    hpreact = embcat @ W1 + b1
    hpreact = bngain * (hpreact - bnmean) / bnstd + bnbias
    h = torch.tanh(hpreact)  # (N, n_hidden)
    logits = h @ W2 + b2  # (N, vocab_size)
    loss = F.cross_entropy(logits, y)
    assert not loss.requires_grad
    print(split, loss.item())
    return loss.item()


train_loss = split_loss('train')
val_loss = split_loss('val')

# sample from the model
g = torch.Generator().manual_seed(2147483647 + 10)
names = []
for _ in range(5):
    out = []
    context = [0] * block_size  # initialize with all ...
    while True:
        emb = C[torch.tensor([context])]  # (1,block_size,d)
        embcat = emb.view(1, -1)
        hpreact = embcat @ W1 + b1
        hpreact = bngain * (hpreact - bnmean_running) / bnstd_running + bnbias
        h = torch.tanh(hpreact)
        logits = h @ W2 + b2
        probs = F.softmax(logits, dim=1)
        ix = torch.multinomial(probs, num_samples=1, generator=g).item()
        context = context[1:] + [ix]
        out.append(ix)
        if ix == 0 or len(out) > 30:
            break
    names.append(''.join(itos[i] for i in out))

x = torch.cat([bnmean, bnstd], 0)
print('loss0', 10 ** lossi[0])
print('loss', 10 ** lossi[-1])
print('split', train_loss, val_loss)
print('running', bnmean_running.mean().item(), bnstd_running.mean().item())
print('cat', x.shape[0], x.sum().item())
