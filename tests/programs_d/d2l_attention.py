"""d2l.ai "Attention Pooling by Similarity" (Nadaraya-Watson kernel regression with a
learnable bandwidth ``w``, trained with SGD on ``torch.bmm`` batches built with
``repeat_interleave``) and "Attention Scoring Functions" (``masked_softmax`` through
``sequence_mask``, ``AdditiveAttention`` and ``DotProductAttention`` classes), then
multi-head attention from ``transpose_qkv``/``transpose_output``.

    python d2l_attention.py [torch|numbagrad]
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
n_train = 50
x_train, _ = torch.sort(torch.from_numpy(rng.uniform(0, 5, n_train).astype(np.float32)))


def f(x):
    return 2 * torch.sin(x) + x**0.8


y_train = f(x_train) + torch.from_numpy(rng.normal(0.0, 0.5, (n_train,)).astype(np.float32))
x_test = torch.arange(0, 5, 0.1)
y_truth = f(x_test)
n_test = len(x_test)
show('n_test', n_test)

# average pooling, then nonparametric attention pooling
y_hat = torch.repeat_interleave(y_train.mean(), n_test)
show('avg_pool', y_hat[:3])
X_repeat = x_test.repeat_interleave(n_train).reshape((-1, n_train))
attention_weights = nn.functional.softmax(-(X_repeat - x_train)**2 / 2, dim=1)
y_hat = torch.matmul(attention_weights, y_train)
show('np_pool', y_hat[::10])
show('np_weights_rowsum', attention_weights.sum(1)[:3])

# batch matrix multiplication
X = torch.ones((2, 1, 4))
Y = torch.ones((2, 4, 6))
show('bmm_shape', list(torch.bmm(X, Y).shape))
weights = torch.ones((2, 10)) * 0.1
values = torch.arange(20.0).reshape((2, 10))
show('bmm_weighted', torch.bmm(weights.unsqueeze(1), values.unsqueeze(-1)))


class NWKernelRegression(nn.Module):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.w = nn.Parameter(torch.rand((1,), requires_grad=True))

    def forward(self, queries, keys, values):
        # Shape of the output `queries` and `attention_weights`:
        # (no. of queries, no. of key-value pairs)
        queries = queries.repeat_interleave(keys.shape[1]).reshape((-1, keys.shape[1]))
        self.attention_weights = nn.functional.softmax(
            -((queries - keys) * self.w)**2 / 2, dim=1)
        # Shape of `values`: (no. of queries, no. of key-value pairs)
        return torch.bmm(self.attention_weights.unsqueeze(1),
                         values.unsqueeze(-1)).reshape(-1)


# Shape of `X_tile`: (`n_train`, `n_train`), where each column contains the
# same training inputs
X_tile = x_train.repeat((n_train, 1))
# Shape of `Y_tile`: (`n_train`, `n_train`), where each column contains the
# same training outputs
Y_tile = y_train.repeat((n_train, 1))
# Shape of `keys`: ('n_train', 'n_train' - 1)
keys = X_tile[(1 - torch.eye(n_train)).type(torch.bool)].reshape((n_train, -1))
# Shape of `values`: ('n_train', 'n_train' - 1)
values = Y_tile[(1 - torch.eye(n_train)).type(torch.bool)].reshape((n_train, -1))
show('keys_shape', list(keys.shape))

net = NWKernelRegression()
with torch.no_grad():
    net.w.fill_(0.5)
loss = nn.MSELoss(reduction='none')
trainer = torch.optim.SGD(net.parameters(), lr=0.5)
losses = []
for epoch in range(5):
    trainer.zero_grad()
    l = loss(net(x_train, keys, values), y_train)
    l.sum().backward()
    trainer.step()
    losses.append(float(l.sum()))
show('nw_losses', losses)
show('nw_w', net.w)
keys = x_train.repeat((n_test, 1))
values = y_train.repeat((n_test, 1))
y_hat = net(x_test, keys, values).unsqueeze(1).detach()
show('nw_pred', y_hat[::10, 0])


#@save
def masked_softmax(X, valid_lens):
    """Perform softmax operation by masking elements on the last axis."""
    # `X`: 3D tensor, `valid_lens`: 1D or 2D tensor
    def _sequence_mask(X, valid_len, value=0):
        maxlen = X.size(1)
        mask = torch.arange((maxlen), dtype=torch.float32,
                            device=X.device)[None, :] < valid_len[:, None]
        X[~mask] = value
        return X

    if valid_lens is None:
        return nn.functional.softmax(X, dim=-1)
    else:
        shape = X.shape
        if valid_lens.dim() == 1:
            valid_lens = torch.repeat_interleave(valid_lens, shape[1])
        else:
            valid_lens = valid_lens.reshape(-1)
        # On the last axis, replace masked elements with a very large negative
        # value, whose exponentiation outputs 0
        X = _sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
        return nn.functional.softmax(X.reshape(shape), dim=-1)


Xr = torch.from_numpy(rng.uniform(size=(2, 2, 4)).astype(np.float32))
show('masked_1d', masked_softmax(Xr, torch.tensor([2, 3])))
show('masked_2d', masked_softmax(Xr, torch.tensor([[1, 3], [2, 4]])))


class AdditiveAttention(nn.Module):  #@save
    """Additive attention."""
    def __init__(self, num_hiddens, dropout, **kwargs):
        super(AdditiveAttention, self).__init__(**kwargs)
        self.W_k = nn.LazyLinear(num_hiddens, bias=False)
        self.W_q = nn.LazyLinear(num_hiddens, bias=False)
        self.w_v = nn.LazyLinear(1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        queries, keys = self.W_q(queries), self.W_k(keys)
        # After dimension expansion, shape of `queries`: (`batch_size`, no. of
        # queries, 1, `num_hiddens`) and shape of `keys`: (`batch_size`, 1, no.
        # of key-value pairs, `num_hiddens`). Sum them up with broadcasting
        features = queries.unsqueeze(2) + keys.unsqueeze(1)
        features = torch.tanh(features)
        # There is only one output of `self.w_v`, so we remove the last
        # one-dimensional entry from the shape. Shape of `scores`:
        # (`batch_size`, no. of queries, no. of key-value pairs)
        scores = self.w_v(features).squeeze(-1)
        self.attention_weights = masked_softmax(scores, valid_lens)
        # Shape of `values`: (`batch_size`, no. of key-value pairs, value
        # dimension)
        return torch.bmm(self.dropout(self.attention_weights), values)


queries = torch.from_numpy(rng.normal(0, 1, (2, 1, 20)).astype(np.float32))
keys = torch.ones((2, 10, 2))
# The two value matrices in the `values` minibatch are identical
values = torch.arange(40, dtype=torch.float32).reshape(1, 10, 4).repeat(2, 1, 1)
valid_lens = torch.tensor([2, 6])

attention = AdditiveAttention(num_hiddens=8, dropout=0.1)
attention.eval()
out = attention(queries, keys, values, valid_lens)
numpy_init(torch, attention)
out = attention(queries, keys, values, valid_lens)
show('additive_out', out)
show('additive_weights', attention.attention_weights[1, 0])
show('lazy_shapes', list(attention.W_q.weight.shape) + list(attention.W_k.weight.shape))


class DotProductAttention(nn.Module):  #@save
    """Scaled dot product attention."""
    def __init__(self, dropout, **kwargs):
        super(DotProductAttention, self).__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)

    # Shape of `queries`: (`batch_size`, no. of queries, `d`)
    # Shape of `keys`: (`batch_size`, no. of key-value pairs, `d`)
    # Shape of `values`: (`batch_size`, no. of key-value pairs, value
    # dimension)
    # Shape of `valid_lens`: (`batch_size`,) or (`batch_size`, no. of queries)
    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        # Set `transpose_b=True` to swap the last two dimensions of `keys`
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


queries = torch.from_numpy(rng.normal(0, 1, (2, 1, 2)).astype(np.float32))
attention = DotProductAttention(dropout=0.5)
attention.eval()
show('dot_out', attention(queries, keys, values, valid_lens))
show('dot_weights', attention.attention_weights[0, 0])


#@save
def transpose_qkv(X, num_heads):
    """Transposition for parallel computation of multiple attention heads."""
    X = X.reshape(X.shape[0], X.shape[1], num_heads, -1)
    X = X.permute(0, 2, 1, 3)
    return X.reshape(-1, X.shape[2], X.shape[3])


#@save
def transpose_output(X, num_heads):
    """Reverse the operation of `transpose_qkv`."""
    X = X.reshape(-1, num_heads, X.shape[1], X.shape[2])
    X = X.permute(0, 2, 1, 3)
    return X.reshape(X.shape[0], X.shape[1], -1)


class MultiHeadAttention(nn.Module):  #@save
    """Multi-head attention."""
    def __init__(self, key_size, query_size, value_size, num_hiddens,
                 num_heads, dropout, bias=False, **kwargs):
        super(MultiHeadAttention, self).__init__(**kwargs)
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=bias)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=bias)
        self.W_v = nn.Linear(value_size, num_hiddens, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)

    def forward(self, queries, keys, values, valid_lens):
        queries = transpose_qkv(self.W_q(queries), self.num_heads)
        keys = transpose_qkv(self.W_k(keys), self.num_heads)
        values = transpose_qkv(self.W_v(values), self.num_heads)
        if valid_lens is not None:
            # On axis 0, copy the first item (scalar or vector) for
            # `num_heads` times, then copy the next item, and so on
            valid_lens = torch.repeat_interleave(
                valid_lens, repeats=self.num_heads, dim=0)
        output = self.attention(queries, keys, values, valid_lens)
        output_concat = transpose_output(output, self.num_heads)
        return self.W_o(output_concat)


num_hiddens, num_heads = 20, 4
attention = MultiHeadAttention(num_hiddens, num_hiddens, num_hiddens, num_hiddens, num_heads, 0.5)
numpy_init(torch, attention)
attention.eval()
batch_size, num_queries = 2, 4
num_kvpairs, valid_lens = 6, torch.tensor([3, 2])
X = torch.from_numpy(rng.normal(size=(batch_size, num_queries, num_hiddens)).astype(np.float32))
Y = torch.from_numpy(rng.normal(size=(batch_size, num_kvpairs, num_hiddens)).astype(np.float32))
out = attention(X, Y, Y, valid_lens)
show('mha_shape', list(out.shape))
show('mha_out', out[1, 2, :6])
attention.train()
opt = torch.optim.Adam(attention.parameters(), lr=0.01)
attention.attention.dropout.p = 0.0
mha_losses = []
for step in range(5):
    opt.zero_grad()
    l = (attention(X, Y, Y, valid_lens) - X).pow(2).mean()
    l.backward()
    opt.step()
    mha_losses.append(l.item())
show('mha_losses', mha_losses)
show('mha_grad', attention.W_q.weight.grad[0, :5])
