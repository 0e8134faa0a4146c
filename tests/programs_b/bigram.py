"""Karpathy, makemore part 1: the bigram character model, counted and then learned.

    python bigram.py [torch|numbagrad]
"""
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

words = WORDS[:60]

# --- counting ---
N = torch.zeros((27, 27), dtype=torch.int32)
chars = sorted(list(set(''.join(WORDS))))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi['.'] = 0
itos = {i: s for s, i in stoi.items()}

for w in words:
    chs = ['.'] + list(w) + ['.']
    for ch1, ch2 in zip(chs, chs[1:]):
        ix1 = stoi[ch1]
        ix2 = stoi[ch2]
        N[ix1, ix2] += 1

p = N[0].float()
p = p / p.sum()

g = torch.Generator().manual_seed(2147483647)
ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
assert isinstance(ix, int) and N[0, ix].item() > 0

P = (N+1).float()
P /= P.sum(1, keepdims=True)

g = torch.Generator().manual_seed(2147483647)
samples = []
for i in range(5):
    out = []
    ix = 0
    while True:
        p = P[ix]
        ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
        out.append(itos[ix])
        if ix == 0:
            break
    samples.append(''.join(out))

log_likelihood = 0.0
n = 0
for w in words:
    chs = ['.'] + list(w) + ['.']
    for ch1, ch2 in zip(chs, chs[1:]):
        ix1 = stoi[ch1]
        ix2 = stoi[ch2]
        prob = P[ix1, ix2]
        logprob = torch.log(prob)
        log_likelihood += logprob
        n += 1
nll = -log_likelihood
print(f'{log_likelihood=}')
print(f'{nll=}')
print(f'{nll/n}')

# --- the neural net ---
xs, ys = [], []
for w in words:
    chs = ['.'] + list(w) + ['.']
    for ch1, ch2 in zip(chs, chs[1:]):
        xs.append(stoi[ch1])
        ys.append(stoi[ch2])
xs = torch.tensor(xs)
ys = torch.tensor(ys)
num = xs.nelement()
print('number of examples: ', num)

g = torch.Generator().manual_seed(2147483647)
W = torch.randn((27, 27), generator=g, requires_grad=True)
# the streams of the two libraries' generators differ: the same start for both from numpy
W.data = torch.tensor(np.random.default_rng(0).standard_normal((27, 27)).astype(np.float32))

losses = []
for k in range(20):
    # forward pass
    xenc = F.one_hot(xs, num_classes=27).float()  # input to the network: one-hot encoding
    logits = xenc @ W  # predict log-counts
    counts = logits.exp()  # counts, equivalent to N
    probs = counts / counts.sum(1, keepdims=True)  # probabilities for next character
    loss = -probs[torch.arange(num), ys].log().mean() + 0.01*(W**2).mean()
    losses.append(loss.item())

    # backward pass
    W.grad = None  # set to zero the gradient
    loss.backward()

    # update
    W.data += -50 * W.grad

g = torch.Generator().manual_seed(2147483647)
for i in range(3):
    out = []
    ix = 0
    while True:
        xenc = F.one_hot(torch.tensor([ix]), num_classes=27).float()
        logits = xenc @ W
        counts = logits.exp()
        p = counts / counts.sum(1, keepdims=True)
        ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
        out.append(itos[ix])
        if ix == 0:
            break
    samples.append(''.join(out))

assert all(s.endswith('.') for s in samples)
print('counts', N.sum().item(), N[0].sum().item(), N.max().item())
print('nll', (nll / n).item())
print('loss0', losses[0])
print('loss', losses[-1])
print('wsum', W.sum().item(), W.abs().sum().item())
