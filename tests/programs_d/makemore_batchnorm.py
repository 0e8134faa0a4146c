"""Karpathy's makemore part 3, "Activations & Gradients, BatchNorm": a character MLP on
generated names with the kaiming-style ``(5/3) / fan_in**0.5`` scale on NumPy-drawn weights,
``bngain``/``bnbias`` parameters, ``bnmean_running``/``bnstd_running`` updated under
torch.no_grad() with 0.999/0.001, hpreact's mean and std, the tanh saturation fraction
``(h.abs() > 0.97).float().mean()``, histograms of h (torch.histc and torch.histogram), the
gradient-to-data ratios ``(p.grad.std() / p.data.std()).log10()``, the update-to-data ratios
``((lr * p.grad).std() / p.data.std()).log10().item()`` per step, F.cross_entropy, and the
split losses with the running statistics.

    python makemore_batchnorm.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
    import torch.nn.functional as F
else:
    import numbagrad as torch
    import numbagrad.nn.functional as F

rng = np.random.default_rng(5)


def randn(*shape):
    return torch.from_numpy(rng.standard_normal(shape).astype(np.float32))


consonants, vowels = list('bdgklmnprstv'), list('aeiouy')
words = []
for _ in range(200):
    w = ''.join(rng.choice(consonants) + rng.choice(vowels) for _ in range(int(rng.integers(1, 4))))
    if rng.random() < 0.4:
        w += rng.choice(consonants)
    words.append(w)

chars = sorted(list(set(''.join(words))))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi['.'] = 0
itos = {i: s for s, i in stoi.items()}
vocab_size = len(itos)

block_size = 3


def build_dataset(words):
    X, Y = [], []
    for w in words:
        context = [0] * block_size
        for ch in w + '.':
            ix = stoi[ch]
            X.append(context)
            Y.append(ix)
            context = context[1:] + [ix]
    X = torch.tensor(X)
    Y = torch.tensor(Y)
    print(X.shape, Y.shape)
    return X, Y


n1 = int(0.8 * len(words))
n2 = int(0.9 * len(words))
Xtr, Ytr = build_dataset(words[:n1])
Xdev, Ydev = build_dataset(words[n1:n2])
Xte, Yte = build_dataset(words[n2:])
show('dataset_sizes', [Xtr.shape[0], Xdev.shape[0], Xte.shape[0], vocab_size])

n_embd = 10
n_hidden = 64

C = randn(vocab_size, n_embd)
W1 = randn(n_embd * block_size, n_hidden) * (5/3)/((n_embd * block_size)**0.5)
# b1 = randn(n_hidden) * 0.01  (useless beside batch norm)
W2 = randn(n_hidden, vocab_size) * 0.01
b2 = randn(vocab_size) * 0
bngain = torch.ones((1, n_hidden))
bnbias = torch.zeros((1, n_hidden))
bnmean_running = torch.zeros((1, n_hidden))
bnstd_running = torch.ones((1, n_hidden))

parameters = [C, W1, W2, b2, bngain, bnbias]
print(sum(p.nelement() for p in parameters))
show('n_params', sum(p.nelement() for p in parameters))
for p in parameters:
    p.requires_grad = True

max_steps = 60
batch_size = 32
lossi = []
ud = []
batches = [rng.integers(0, Xtr.shape[0], (batch_size,)) for _ in range(max_steps)]

for i in range(max_steps):
    ix = torch.from_numpy(batches[i])
    Xb, Yb = Xtr[ix], Ytr[ix]

    emb = C[Xb]
    embcat = emb.view(emb.shape[0], -1)
    hpreact = embcat @ W1
    bnmeani = hpreact.mean(0, keepdim=True)
    bnstdi = hpreact.std(0, keepdim=True)
    hpreact = bngain * (hpreact - bnmeani) / bnstdi + bnbias
    with torch.no_grad():
        bnmean_running = 0.999 * bnmean_running + 0.001 * bnmeani
        bnstd_running = 0.999 * bnstd_running + 0.001 * bnstdi
    h = torch.tanh(hpreact)
    logits = h @ W2 + b2
    loss = F.cross_entropy(logits, Yb)

    for p in parameters:
        p.grad = None
    loss.backward()

    lr = 0.1 if i < 40 else 0.01
    for p in parameters:
        p.data += -lr * p.grad

    if i % 20 == 0:
        print(f'{i:7d}/{max_steps:7d}: {loss.item():.4f}')
    lossi.append(loss.log10().item())
    with torch.no_grad():
        ud.append([((lr * p.grad).std() / p.data.std()).log10().item() for p in parameters])

show('lossi', lossi[::5])
show('ud_first', ud[0])
show('ud_last', ud[-1])
show('bn_running', [bnmean_running[0, :8], bnstd_running[0, :8]])

# --- the diagnostics of the last step ---
show('hpreact_stats', [hpreact.mean().item(), hpreact.std().item()])
print('hpreact mean %+.2f, std %.2f' % (hpreact.mean(), hpreact.std()))
t = h
print('tanh: mean %+.2f, std %.2f, saturated: %.2f%%' % (t.mean(), t.std(), (t.abs() > 0.97).float().mean()*100))
show('saturation', (t.abs() > 0.97).float().mean())
show('h_stats', [t.mean(), t.std()])
show('histc', torch.histc(t.detach(), bins=20, min=-1, max=1))
hy, hx = torch.histogram(t.detach(), 20, range=(-1.0, 1.0))
show('histogram_hist', hy)
show('histogram_edges', hx)
hy, hx = torch.histogram(t.detach(), bins=10)
show('histogram_auto_edges', hx)
show('histogram_auto_hist', hy)
show('histogram_density', torch.histogram(t.detach(), bins=10, density=True).hist)
show('saturated_neurons', (t.abs() > 0.99).float().mean(0)[:16])

for p in parameters:
    if p.ndim == 2:
        print('weight %10s | mean %+f | std %e | grad:data ratio %e' % (tuple(p.shape), p.grad.mean(), p.grad.std(), p.grad.std() / p.data.std()))
show('grad_data_ratio', [(p.grad.std() / p.data.std()).log10() for p in parameters if p.ndim == 2])
show('grad_means', [p.grad.mean() for p in parameters])


@torch.no_grad()
def split_loss(split):
    x, y = {
        'train': (Xtr, Ytr),
        'val': (Xdev, Ydev),
        'test': (Xte, Yte),
    }[split]
    emb = C[x]
    embcat = emb.view(emb.shape[0], -1)
    hpreact = embcat @ W1
    hpreact = bngain * (hpreact - bnmean_running) / bnstd_running + bnbias
    h = torch.tanh(hpreact)
    logits = h @ W2 + b2
    loss = F.cross_entropy(logits, y)
    print(split, loss.item())
    return loss.item()


show('split_losses', [split_loss('train'), split_loss('val'), split_loss('test')])

with torch.no_grad():
    emb = C[Xtr]
    embcat = emb.view(emb.shape[0], -1)
    hpreact = embcat @ W1
    bnmean = hpreact.mean(0, keepdim=True)
    bnstd = hpreact.std(0, keepdim=True)
show('bn_calibrated', [bnmean[0, :8], bnstd[0, :8]])
