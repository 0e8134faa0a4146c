"""Karpathy's "Let's build GPT" notebook (gpt-dev.ipynb), in order: the character vocabulary,
``encode``/``decode`` lambdas, ``torch.tensor(encode(text), dtype=torch.long)`` split 90/10,
``get_batch`` stacking ``data[i:i+block_size]`` (offsets drawn by NumPy in place of
``torch.randint``), the context/target loop; the BigramLanguageModel (``nn.Embedding(vocab,
vocab)``, ``logits.view(B*T, C)``, ``F.cross_entropy``, ``generate`` with ``logits[:, -1, :]``,
``F.softmax`` and a sample read off ``torch.cumsum`` with NumPy uniforms in place of
``torch.multinomial``, ``torch.cat((idx, idx_next), dim=1)``) trained with AdamW; "the
mathematical trick in self-attention" in its four versions (a double loop of ``torch.mean`` over
``x[b,:t+1]``, ``tril / sum(1, keepdim=True)``, ``masked_fill(tril == 0, float('-inf'))`` +
softmax, and one self-attention head with ``k.transpose(-2, -1)``), all compared with
``torch.allclose``; the variance of scaled attention, softmax sharpening by ``*8``; the
hand-written ``LayerNorm1d`` class; and the notebook's single-head model (position embeddings
from ``torch.arange(T)``, ``register_buffer('tril', ...)``, ``idx[:, -block_size:]``) with
``estimate_loss`` under ``@torch.no_grad()`` and ``model.eval()``/``model.train()``.

    python gpt_dev_notebook.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    from torch.nn import functional as F
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    from numbagrad.nn import functional as F

rng = np.random.default_rng(1337)

text = """First Citizen:
Before we proceed any further, hear me speak.

All:
Speak, speak.

First Citizen:
You are all resolved rather to die than to famish?

All:
Resolved. resolved.

First Citizen:
First, you know Caius Marcius is chief enemy to the people.

All:
We know't, we know't.

First Citizen:
Let us kill him, and we'll have corn at our own price.
Is't a verdict?

All:
No more talking on't; let it be done: away, away!
"""
show("length_of_dataset_in_characters", len(text))

# here are all the unique characters that occur in this text
chars = sorted(list(set(text)))
vocab_size = len(chars)
print(''.join(chars))
show("vocab_size", vocab_size)

# create a mapping from characters to integers
stoi = {ch: i for i, ch in enumerate(chars)}
itos = {i: ch for i, ch in enumerate(chars)}
encode = lambda s: [stoi[c] for c in s]  # encoder: take a string, output a list of integers
decode = lambda l: ''.join([itos[i] for i in l])  # decoder: take a list of integers, output a string
show("encode_hii_there", encode("hii there"))
print(decode(encode("hii there")))

# let's now encode the entire text dataset and store it into a torch.Tensor
data = torch.tensor(encode(text), dtype=torch.long)
show("data_shape", list(data.shape))
show("data_dtype_int64", float(data.dtype == torch.int64))
show("data_head", data[:20])

# Let's now split up the data into train and validation sets
n = int(0.9 * len(data))  # first 90% will be train, rest val
train_data = data[:n]
val_data = data[n:]

block_size = 8
show("first_block", train_data[:block_size + 1])
x = train_data[:block_size]
y = train_data[1:block_size + 1]
for t in range(block_size):
    context = x[:t + 1]
    target = y[t]
    if t in (0, block_size - 1):
        show(f"context_{t}_target", context.tolist() + [target.item()])

torch.manual_seed(1337)
batch_size = 4  # how many independent sequences will we process in parallel?
block_size = 8  # what is the maximum context length for predictions?


def get_batch(split):
    # generate a small batch of data of inputs x and targets y
    data = train_data if split == 'train' else val_data
    ix = torch.from_numpy(rng.integers(0, len(data) - block_size, size=(batch_size,)))  # torch.randint
    x = torch.stack([data[i:i + block_size] for i in ix])
    y = torch.stack([data[i + 1:i + block_size + 1] for i in ix])
    return x, y


xb, yb = get_batch('train')
show("inputs_shape", list(xb.shape))
show("inputs", xb)
show("targets", yb)


def sample_next(probs):
    # torch.multinomial(probs, num_samples=1), with the uniforms drawn by NumPy
    u = torch.from_numpy(rng.random((probs.shape[0], 1)).astype(np.float32))
    return (torch.cumsum(probs, dim=-1) < u).sum(dim=-1, keepdim=True).clamp(max=probs.shape[-1] - 1)


class BigramLanguageModel(nn.Module):

    def __init__(self, vocab_size):
        super().__init__()
        # each token directly reads off the logits for the next token from a lookup table
        self.token_embedding_table = nn.Embedding(vocab_size, vocab_size)

    def forward(self, idx, targets=None):

        # idx and targets are both (B,T) tensor of integers
        logits = self.token_embedding_table(idx)  # (B,T,C)

        if targets is None:
            loss = None
        else:
            B, T, C = logits.shape
            logits = logits.view(B * T, C)
            targets = targets.view(B * T)
            loss = F.cross_entropy(logits, targets)

        return logits, loss

    def generate(self, idx, max_new_tokens):
        # idx is (B, T) array of indices in the current context
        for _ in range(max_new_tokens):
            # get the predictions
            logits, loss = self(idx)
            # focus only on the last time step
            logits = logits[:, -1, :]  # becomes (B, C)
            # apply softmax to get probabilities
            probs = F.softmax(logits, dim=-1)  # (B, C)
            # sample from the distribution
            idx_next = sample_next(probs)  # (B, 1)
            # append sampled index to the running sequence
            idx = torch.cat((idx, idx_next), dim=1)  # (B, T+1)
        return idx


m = BigramLanguageModel(vocab_size)
with torch.no_grad():
    m.token_embedding_table.weight.copy_(torch.from_numpy(rng.normal(size=(vocab_size, vocab_size)).astype(np.float32)))
logits, loss = m(xb, yb)
show("bigram_logits_shape", list(logits.shape))
show("bigram_loss", loss)
out = m.generate(idx=torch.zeros((1, 1), dtype=torch.long), max_new_tokens=30)[0].tolist()
show("bigram_generated", out)

# create a PyTorch optimizer
optimizer = torch.optim.AdamW(m.parameters(), lr=1e-3)
batch_size = 32
losses = []
for steps in range(100):  # increase number of steps for good results...

    # sample a batch of data
    xb, yb = get_batch('train')

    # evaluate the loss
    logits, loss = m(xb, yb)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
show("bigram_train_losses", losses[::10] + [losses[-1]])

# ---- The mathematical trick in self-attention
# toy example illustrating how matrix multiplication can be used for a "weighted aggregation"
torch.manual_seed(42)
a = torch.tril(torch.ones(3, 3))
a = a / torch.sum(a, 1, keepdim=True)
b = torch.from_numpy(rng.integers(0, 10, (3, 2)).astype(np.float32))  # torch.randint(0,10,(3,2)).float()
c = a @ b
show("a", a)
show("b", b)
show("c", c)

# consider the following toy example:
B, T, C = 4, 8, 2  # batch, time, channels
x = torch.from_numpy(rng.normal(size=(B, T, C)).astype(np.float32))
show("x_shape", list(x.shape))

# We want x[b,t] = mean_{i<=t} x[b,i]
xbow = torch.zeros((B, T, C))
for b in range(B):
    for t in range(T):
        xprev = x[b, :t + 1]  # (t,C)
        xbow[b, t] = torch.mean(xprev, 0)
show("xbow_0", xbow[0])

# version 2: using matrix multiply for a weighted aggregation
wei = torch.tril(torch.ones(T, T))
wei = wei / wei.sum(1, keepdim=True)
xbow2 = wei @ x  # (B, T, T) @ (B, T, C) ----> (B, T, C)
show("version2_allclose", float(torch.allclose(xbow, xbow2)))

# version 3: use Softmax
tril = torch.tril(torch.ones(T, T))
wei = torch.zeros((T, T))
wei = wei.masked_fill(tril == 0, float('-inf'))
wei = F.softmax(wei, dim=-1)
xbow3 = wei @ x
show("version3_allclose", float(torch.allclose(xbow, xbow3)))
show("version3_wei_row1", wei[1])

# version 4: self-attention!
torch.manual_seed(1337)
B, T, C = 4, 8, 32  # batch, time, channels
x = torch.from_numpy(rng.normal(size=(B, T, C)).astype(np.float32))

# let's see a single Head perform self-attention
head_size = 16
key = nn.Linear(C, head_size, bias=False)
query = nn.Linear(C, head_size, bias=False)
value = nn.Linear(C, head_size, bias=False)
for i, layer in enumerate((key, query, value)):
    numpy_init(torch, layer, seed=i)
k = key(x)  # (B, T, 16)
q = query(x)  # (B, T, 16)
wei = q @ k.transpose(-2, -1)  # (B, T, 16) @ (B, 16, T) ---> (B, T, T)

tril = torch.tril(torch.ones(T, T))
# wei = torch.zeros((T,T))
wei = wei.masked_fill(tril == 0, float('-inf'))
wei = F.softmax(wei, dim=-1)

v = value(x)
out = wei @ v
# out = wei @ x
show("head_out_shape", list(out.shape))
show("wei_0", wei[0, :3, :3])
show("head_out_0", out[0, -1])

# "Scaled" attention additional divides wei by 1/sqrt(head_size)
k = torch.from_numpy(rng.normal(size=(B, T, head_size)).astype(np.float32))
q = torch.from_numpy(rng.normal(size=(B, T, head_size)).astype(np.float32))
wei = q @ k.transpose(-2, -1) * head_size ** -0.5
show("k_q_wei_var", [k.var(), q.var(), wei.var()])
show("softmax_plain", torch.softmax(torch.tensor([0.1, -0.2, 0.3, -0.2, 0.5]), dim=-1))
show("softmax_sharpened", torch.softmax(torch.tensor([0.1, -0.2, 0.3, -0.2, 0.5]) * 8, dim=-1))


class LayerNorm1d:  # (used to be BatchNorm1d)

    def __init__(self, dim, eps=1e-5, momentum=0.1):
        self.eps = eps
        self.gamma = torch.ones(dim)
        self.beta = torch.zeros(dim)

    def __call__(self, x):
        # calculate the forward pass
        xmean = x.mean(1, keepdim=True)  # batch mean
        xvar = x.var(1, keepdim=True)  # batch variance
        xhat = (x - xmean) / torch.sqrt(xvar + self.eps)  # normalize to unit variance
        self.out = self.gamma * xhat + self.beta
        return self.out

    def parameters(self):
        return [self.gamma, self.beta]


torch.manual_seed(1337)
module = LayerNorm1d(100)
x = torch.from_numpy(rng.normal(size=(32, 100)).astype(np.float32))  # batch size 32 of 100-dimensional vectors
x = module(x)
show("layernorm_shape", list(x.shape))
show("feature0_mean_std", [x[:, 0].mean(), x[:, 0].std()])  # mean,std of one feature across all batch inputs
show("row0_mean_std", [x[0, :].mean(), x[0, :].std()])  # mean,std of a single input from the batch, of its features

# ---- the single-head language model of the notebook's "v2"
batch_size = 16
block_size = 8
eval_iters = 5
n_embd = 32


class Head(nn.Module):
    """ one head of self-attention """

    def __init__(self, head_size):
        super().__init__()
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.register_buffer('tril', torch.tril(torch.ones(block_size, block_size)))

    def forward(self, x):
        B, T, C = x.shape
        k = self.key(x)  # (B,T,C)
        q = self.query(x)  # (B,T,C)
        # compute attention scores ("affinities")
        wei = q @ k.transpose(-2, -1) * C ** -0.5  # (B, T, C) @ (B, C, T) -> (B, T, T)
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float('-inf'))  # (B, T, T)
        wei = F.softmax(wei, dim=-1)  # (B, T, T)
        # perform the weighted aggregation of the values
        v = self.value(x)  # (B,T,C)
        out = wei @ v  # (B, T, T) @ (B, T, C) -> (B, T, C)
        return out


class SingleHeadModel(nn.Module):

    def __init__(self):
        super().__init__()
        self.token_embedding_table = nn.Embedding(vocab_size, n_embd)
        self.position_embedding_table = nn.Embedding(block_size, n_embd)
        self.sa_head = Head(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size)

    def forward(self, idx, targets=None):
        B, T = idx.shape

        # idx and targets are both (B,T) tensor of integers
        tok_emb = self.token_embedding_table(idx)  # (B,T,C)
        pos_emb = self.position_embedding_table(torch.arange(T))  # (T,C)
        x = tok_emb + pos_emb  # (B,T,C)
        x = self.sa_head(x)  # apply one head of self-attention. (B,T,C)
        logits = self.lm_head(x)  # (B,T,vocab_size)

        if targets is None:
            loss = None
        else:
            B, T, C = logits.shape
            logits = logits.view(B * T, C)
            targets = targets.view(B * T)
            loss = F.cross_entropy(logits, targets)

        return logits, loss

    def generate(self, idx, max_new_tokens):
        # idx is (B, T) array of indices in the current context
        for _ in range(max_new_tokens):
            # crop idx to the last block_size tokens
            idx_cond = idx[:, -block_size:]
            # get the predictions
            logits, loss = self(idx_cond)
            # focus only on the last time step
            logits = logits[:, -1, :]  # becomes (B, C)
            # apply softmax to get probabilities
            probs = F.softmax(logits, dim=-1)  # (B, C)
            idx_next = sample_next(probs)  # (B, 1)
            idx = torch.cat((idx, idx_next), dim=1)  # (B, T+1)
        return idx


@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ['train', 'val']:
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch(split)
            logits, loss = model(X, Y)
            losses[k] = loss.item()
        out[split] = losses.mean()
    model.train()
    return out


model = SingleHeadModel()
numpy_init(torch, model, seed=7)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
for iter in range(60):
    if iter % 20 == 0:
        losses = estimate_loss()
        print(f"step {iter}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
        show(f"estimate_loss_{iter}", [losses['train'], losses['val']])
    xb, yb = get_batch('train')
    logits, loss = model(xb, yb)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
show("single_head_last_loss", loss)
show("model_training_flag", float(model.training))
context = torch.zeros((1, 1), dtype=torch.long)
generated = model.generate(context, max_new_tokens=20)[0].tolist()
show("single_head_generated", generated)
print(decode(generated))
