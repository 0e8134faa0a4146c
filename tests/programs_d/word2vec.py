"""Word2vec skip-gram with negative sampling, as the popular PyTorch implementations write it
(d2l "Pretraining word2vec", "word2vec-pytorch" repos): center/context embeddings,
``torch.bmm`` scores, ``F.logsigmoid`` loss over true and negative pairs, noise words drawn
from the unigram^0.75 distribution (drawn with NumPy here), ``torch.multinomial`` shapes,
SGD on a sparse-ish update, nearest neighbours by cosine similarity, and
``nn.Embedding.from_pretrained`` (frozen and not).

    python word2vec.py [torch|numbagrad]
"""
from collections import Counter

import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F

corpus = ("the king rules the kingdom the queen rules the kingdom "
          "a man walks the dog a woman walks the cat "
          "the king and the queen love the kingdom the dog and the cat love a man").split()
counts = Counter(corpus)
vocab = sorted(counts, key=lambda w: (-counts[w], w))
word2idx = {w: i for i, w in enumerate(vocab)}
idx2word = {i: w for w, i in word2idx.items()}
ids = [word2idx[w] for w in corpus]

window = 2
pairs = [(ids[i], ids[j]) for i in range(len(ids))
         for j in range(max(0, i - window), min(len(ids), i + window + 1)) if j != i]
freq = np.array([counts[w] for w in vocab], dtype=np.float64)
noise_dist = freq ** 0.75 / (freq ** 0.75).sum()
K = 4
rng = np.random.default_rng(0)
negatives_all = rng.choice(len(vocab), size=(len(pairs), K), p=noise_dist)
show('n_pairs', len(pairs))
show('noise_dist', noise_dist)

# torch.multinomial: values differ between the libraries' generators, shapes and ranges do not
noise = torch.tensor(noise_dist, dtype=torch.float)
draw = torch.multinomial(noise, 10 * K, replacement=True).view(10, K)
show('multinomial', list(draw.shape) + [int(draw.min() >= 0), int(draw.max() < len(vocab)),
                                        int(draw.dtype == torch.int64)])
show('multinomial_norep', sorted(torch.multinomial(noise, len(vocab)).tolist()))


class SkipGramNeg(nn.Module):
    def __init__(self, n_vocab, n_embed):
        super().__init__()
        self.in_embed = nn.Embedding(n_vocab, n_embed)
        self.out_embed = nn.Embedding(n_vocab, n_embed)
        # initialize embedding tables with uniform distribution
        self.in_embed.weight.data.uniform_(-1, 1)
        self.out_embed.weight.data.uniform_(-1, 1)

    def forward_input(self, input_words):
        return self.in_embed(input_words)

    def forward_output(self, output_words):
        return self.out_embed(output_words)


class NegativeSamplingLoss(nn.Module):
    def forward(self, input_vectors, output_vectors, noise_vectors):
        batch_size, embed_size = input_vectors.shape
        input_vectors = input_vectors.view(batch_size, embed_size, 1)
        output_vectors = output_vectors.view(batch_size, 1, embed_size)
        out_loss = torch.bmm(output_vectors, input_vectors).sigmoid().log()
        out_loss = out_loss.squeeze()
        noise_loss = torch.bmm(noise_vectors.neg(), input_vectors).sigmoid().log()
        noise_loss = noise_loss.squeeze().sum(1)
        return -(out_loss + noise_loss).mean()


embedding_dim = 10
model = SkipGramNeg(len(vocab), embedding_dim)
with torch.no_grad():  # the same start in both libraries
    model.in_embed.weight.copy_(torch.from_numpy(rng.uniform(-1, 1, (len(vocab), embedding_dim)).astype(np.float32)))
    model.out_embed.weight.copy_(torch.from_numpy(rng.uniform(-1, 1, (len(vocab), embedding_dim)).astype(np.float32)))
criterion = NegativeSamplingLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.2)

centers = torch.tensor([c for c, _ in pairs])
contexts = torch.tensor([o for _, o in pairs])
negatives = torch.from_numpy(negatives_all)
batch_size = 32
losses = []
for epoch in range(3):
    for start in range(0, len(pairs), batch_size):
        inputs = centers[start:start + batch_size]
        targets = contexts[start:start + batch_size]
        input_vectors = model.forward_input(inputs)
        output_vectors = model.forward_output(targets)
        noise_vectors = model.forward_output(negatives[start:start + batch_size])
        loss = criterion(input_vectors, output_vectors, noise_vectors)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
show('losses', losses[::4] + losses[-1:])
# the rows of words absent from the last batch got no gradient
last = set(centers[-(len(pairs) % batch_size):].tolist())
show('untouched_rows', [int(model.in_embed.weight.grad[i].abs().sum().item() == 0)
                        for i in range(len(vocab))])
show('touched', sorted(last))

# the same loss written with F.logsigmoid and einsum, its gradient against the bmm form
iv = model.in_embed(centers[:8])
ov = model.out_embed(contexts[:8])
nv = model.out_embed(negatives[:8])
pos = F.logsigmoid((iv * ov).sum(-1))
neg = F.logsigmoid(-torch.einsum('bkd,bd->bk', nv, iv)).sum(1)
loss2 = -(pos + neg).mean()
show('loss_forms', [loss2.item(), criterion(iv, ov, nv).item()])
model.zero_grad()
loss2.backward()
show('logsigmoid_grad', model.out_embed.weight.grad.sum(0))


def cosine_neighbours(embeddings, word, k=3):
    emb = F.normalize(embeddings, dim=1)
    sims = emb @ emb[word2idx[word]]
    values, indices = sims.topk(k + 1)
    return values[1:], indices[1:]


with torch.no_grad():
    vals, idx = cosine_neighbours(model.in_embed.weight, 'king')
show('neighbours_king', vals)
show('neighbours_king_idx', idx)
print('king ->', [idx2word[i] for i in idx.tolist()])
sim = F.cosine_similarity(model.in_embed.weight[word2idx['man']].unsqueeze(0),
                          model.in_embed.weight, dim=1)
show('cos_man', sim)

# reuse the trained vectors: frozen, then fine-tuned
pretrained = model.in_embed.weight.detach().clone()
frozen = nn.Embedding.from_pretrained(pretrained)
show('frozen', [int(frozen.weight.requires_grad), frozen.num_embeddings, frozen.embedding_dim])
tuned = nn.Embedding.from_pretrained(pretrained, freeze=False, padding_idx=0, max_norm=1.0)
out = tuned(torch.tensor([[1, 2], [0, 3]]))
out.sum().backward()
show('from_pretrained_out', out)
show('from_pretrained_grad', tuned.weight.grad[:4])
show('max_norm_renorm', tuned.weight.norm(dim=1)[:4])
bag = nn.EmbeddingBag.from_pretrained(pretrained, mode='mean')
show('bag', bag(torch.tensor([1, 2, 3, 4]), torch.tensor([0, 2])))
