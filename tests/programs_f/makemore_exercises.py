"""Karpathy's makemore part 1, the exercises at the end of the video, as students write them:
E01 a trigram model by counting (``N = torch.zeros((27, 27, 27), dtype=torch.int32)`` filled by
``N[ix1, ix2, ix3] += 1``, ``(N + smoothing).float()`` normalised with ``P /= P.sum(2,
keepdims=True)``, the average negative log likelihood) and by a neural net (``F.one_hot`` of both
context characters ``torch.cat``-ed, ``xenc @ W``, softmax written out, ``W.data += -50 *
W.grad``); E02 a train/dev/test split of the words (Python ``random.shuffle`` with a seed);
E03 the smoothing strength tuned on dev; E04 the one-hot matmul replaced by row indexing
``W[ix1] + W[27 + ix2]`` with the same gradients; E05 the hand-written loss replaced by
``F.cross_entropy``; plus sampling from the counts, with ``torch.multinomial`` replaced by an
inverse-CDF draw on NumPy uniforms.

    python makemore_exercises.py [torch|numbagrad]
"""
import random

import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
    import torch.nn.functional as F
else:
    import numbagrad as torch
    import numbagrad.nn.functional as F

words = """olivia emma charlotte amelia sophia mia isabella ava evelyn luna harper camila sofia
scarlett elizabeth eleanor emily chloe mila violet penelope gianna aria abigail ella avery hazel
nora layla lily aurora nova ellie madison grace isla willow zoe riley stella eliana ivy victoria
emilia zoey naomi hannah lucy elena lillian maya leah paisley addison natalie valentina everly
delilah leilani madelyn kinsley ruby sophie alice genesis claire audrey sadie aaliyah josephine
autumn brooklyn quinn kennedy cora savannah caroline athena natalia hailey aubrey emery anna iris
bella eloise skylar jade gabriella ariana maria adeline lydia sarah nevaeh serenity liliana ayla
everleigh raelynn allison madeline vivian maeve lyla samantha rylee eva melody clara hadley julia
liam noah oliver james elijah william henry lucas benjamin theodore mateo levi sebastian daniel
jack michael alexander owen asher samuel ethan leo jackson mason ezra john hudson luca aiden
joseph david jacob logan luke julian gabriel grayson wyatt matthew maverick dylan isaac elias
anthony thomas jayden carter santiago ezekiel charles josiah caleb cooper lincoln miles
christopher nathan isaiah kai joshua andrew angel adrian cameron nolan waylon jaxon roman eli
wesley aaron ian christian ryan leonardo brooks axel walker jonathan easton everett weston
bennett rowan silas jameson xavier jose beau""".split()
show("number_of_words", len(words))
show("shortest_longest", [min(len(w) for w in words), max(len(w) for w in words)])

chars = sorted(list(set(''.join(words))))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi['.'] = 0
itos = {i: s for s, i in stoi.items()}
show("alphabet", len(stoi))

# E02: split up the dataset randomly into 80% train set, 10% dev set, 10% test set
random.seed(42)
random.shuffle(words)
n1 = int(0.8 * len(words))
n2 = int(0.9 * len(words))
train_words, dev_words, test_words = words[:n1], words[n1:n2], words[n2:]
show("split_sizes", [len(train_words), len(dev_words), len(test_words)])


def trigrams(ws):
    for w in ws:
        chs = ['.', '.'] + list(w) + ['.']
        for ch1, ch2, ch3 in zip(chs, chs[1:], chs[2:]):
            yield stoi[ch1], stoi[ch2], stoi[ch3]


# E01: train a trigram language model by counting
N = torch.zeros((27, 27, 27), dtype=torch.int32)
for ix1, ix2, ix3 in trigrams(train_words):
    N[ix1, ix2, ix3] += 1
show("N_dtype_int32", float(N.dtype == torch.int32))
show("N_total", N.sum())
show("N_start_row", N[0, 0])
show("N_most_common", [N.max(), N.argmax()])


def count_model(smoothing):
    P = (N + smoothing).float()
    P /= P.sum(2, keepdims=True)
    return P


def evaluate_counts(P, ws):
    log_likelihood = 0.0
    n = 0
    for ix1, ix2, ix3 in trigrams(ws):
        prob = P[ix1, ix2, ix3]
        logprob = torch.log(prob)
        log_likelihood += logprob
        n += 1
    nll = -log_likelihood
    return nll / n


P = count_model(1)
show("P_row_sums", P.sum(2)[0, :5])
show("trigram_count_train_nll", evaluate_counts(P, train_words))
show("trigram_count_dev_nll", evaluate_counts(P, dev_words))

# E03: use the dev set to tune the strength of smoothing
results = []
for smoothing in [0.01, 0.1, 0.5, 1, 2, 5]:
    P = count_model(smoothing)
    results.append((evaluate_counts(P, dev_words).item(), smoothing))
    show(f"smoothing_{smoothing}", [evaluate_counts(P, train_words), results[-1][0]])
best_dev, best_smoothing = min(results)
show("best_smoothing", best_smoothing)
P = count_model(best_smoothing)
show("test_nll_best_smoothing", evaluate_counts(P, test_words))

# sampling from the trigram counts (inverse CDF on NumPy uniforms instead of torch.multinomial)
rng = np.random.default_rng(2147483647)
samples = []
for i in range(5):
    out = []
    ix1, ix2 = 0, 0
    while True:
        p = P[ix1, ix2]
        ix = int((torch.cumsum(p, 0) < float(rng.random())).sum().clamp(max=26))
        out.append(itos[ix])
        ix1, ix2 = ix2, ix
        if ix == 0 or len(out) > 15:
            break
    samples.append(''.join(out))
    print(''.join(out))
show("sample_lengths", [len(s) for s in samples])


# the dataset of trigrams for the neural net
def build(ws):
    xs, ys = [], []
    for ix1, ix2, ix3 in trigrams(ws):
        xs.append((ix1, ix2))
        ys.append(ix3)
    return torch.tensor(xs), torch.tensor(ys)


Xtr, Ytr = build(train_words)
Xdev, Ydev = build(dev_words)
num = Ytr.nelement()
show("number_of_examples", num)

# E01 (neural net): one-hot of two characters, concatenated, times a (54, 27) matrix
W0 = rng.normal(size=(27 * 2, 27)).astype(np.float32)  # torch.randn((27*2, 27), generator=g)
W = torch.tensor(W0, requires_grad=True)
xenc = torch.cat([F.one_hot(Xtr[:, 0], num_classes=27), F.one_hot(Xtr[:, 1], num_classes=27)], dim=1).float()
show("xenc_shape", list(xenc.shape))
show("xenc_dtype_float32", float(xenc.dtype == torch.float32))
onehot_losses = []
for k in range(30):
    # forward pass
    logits = xenc @ W  # predict log-counts
    counts = logits.exp()  # counts, equivalent to N
    probs = counts / counts.sum(1, keepdims=True)  # probabilities for next character
    loss = -probs[torch.arange(num), Ytr].log().mean() + 0.01 * (W ** 2).mean()
    onehot_losses.append(loss.item())

    # backward pass
    W.grad = None  # set to zero the gradient
    loss.backward()

    # update
    W.data += -50 * W.grad
show("onehot_losses", onehot_losses[::5] + onehot_losses[-1:])
onehot_grad = W.grad.clone()

# E04: indexing into rows of W instead of the one-hot matmul -- same forward, same gradient
W = torch.tensor(W0, requires_grad=True)
index_losses = []
for k in range(30):
    logits = W[Xtr[:, 0]] + W[27 + Xtr[:, 1]]
    counts = logits.exp()
    probs = counts / counts.sum(1, keepdims=True)
    loss = -probs[torch.arange(num), Ytr].log().mean() + 0.01 * (W ** 2).mean()
    index_losses.append(loss.item())
    W.grad = None
    loss.backward()
    W.data += -50 * W.grad
show("index_losses", index_losses[::5] + index_losses[-1:])
show("index_grad_matches_onehot", float(torch.allclose(W.grad, onehot_grad, atol=1e-6)))
show("grad_rows_of_unused_chars", W.grad.abs().sum(1)[:5])

# E05: F.cross_entropy instead of the explicit softmax and log
W = torch.tensor(W0, requires_grad=True)
ce_losses = []
for k in range(30):
    logits = W[Xtr[:, 0]] + W[27 + Xtr[:, 1]]
    loss = F.cross_entropy(logits, Ytr) + 0.01 * (W ** 2).mean()
    ce_losses.append(loss.item())
    W.grad = None
    loss.backward()
    W.data += -50 * W.grad
show("cross_entropy_losses", ce_losses[::5] + ce_losses[-1:])
show("cross_entropy_same_as_index", float(np.allclose(ce_losses, index_losses, rtol=1e-4)))

with torch.no_grad():
    logits = W[Xdev[:, 0]] + W[27 + Xdev[:, 1]]
    dev_loss = F.cross_entropy(logits, Ydev)
show("neural_dev_nll", dev_loss)
show("W_mean_abs", W.abs().mean())
