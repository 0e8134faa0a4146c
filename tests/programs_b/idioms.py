"""Tensor idioms seen across courses (d2l, fast.ai, CS231n/CS224n notebooks), each printed.

    python idioms.py [torch|numbagrad]
"""
import sys

import numpy as np

BACKEND = sys.argv[1] if len(sys.argv) > 1 else "numbagrad"
if BACKEND == "torch":
    import torch
    import torch.nn.functional as F
else:
    import numbagrad as torch
    import numbagrad.nn.functional as F

out = {}


def show(name, t):
    """Record a tensor (or number) as a flat list of floats, and its dtype name."""
    if torch.is_tensor(t):
        out[name] = ([float(v) for v in t.detach().reshape(-1).tolist()], str(t.dtype).split('.')[-1],
                     tuple(t.shape))
    else:
        out[name] = ([float(v) for v in np.ravel(t)], type(t).__name__, ())


rng = np.random.default_rng(0)
x = torch.tensor(rng.standard_normal((4, 5)).astype(np.float32))
y = torch.tensor(rng.standard_normal((4, 5)).astype(np.float32))

show('stack', torch.stack([x, y]))
show('stack1', torch.stack((x, y), dim=1))
a, b, c = torch.chunk(torch.arange(10), 3)
show('chunk', torch.cat([a, b, c.flip(0)]))
show('chunk_sizes', [len(a), len(b), len(c)])
parts = x.split(2, dim=1)
show('split', [p.shape[1] for p in parts])
parts = x.split([1, 4], dim=1)
show('split_list', parts[1])
idx = torch.tensor([[0, 1], [2, 2], [4, 0], [1, 3]])
show('gather', torch.gather(x, 1, idx))
z = x.clone()
z.masked_fill_(z < 0, 0.0)
show('masked_fill_', z)
show('clamp', x.clamp(min=0))
show('clamp2', torch.clamp(x, -0.5, 0.5))
show('where', torch.where(x > 0, x, 0.))
show('where1', torch.where(x > 0))
values, indices = x.max(dim=1)
show('max_values', values)
show('max_indices', indices)
show('argmax', torch.argmax(x, dim=1))
show('argmax_all', torch.argmax(x))
show('float_mean', (x > 0).float().mean())
show('eye', torch.eye(3))
show('eye2', torch.eye(2, 3))
show('diag', torch.diag(torch.tensor([1., 2., 3.])))
show('diag_of', torch.diag(x[:, :4]))
show('t_view', x.t().contiguous().view(-1))
A = torch.tensor(rng.standard_normal((2, 3, 4)).astype(np.float32))
B = torch.tensor(rng.standard_normal((2, 4, 5)).astype(np.float32))
show('bmm', torch.bmm(A, B))
show('einsum', torch.einsum('bij,bjk->bik', A, B))
show('einsum_trace', torch.einsum('ii', x[:, :4]))
show('einsum_outer', torch.einsum('i,j->ij', x[0], y[0]))
show('permute', A.permute(0, 2, 1))
show('expand', x.unsqueeze(1).expand(-1, 3, -1))
show('norm', torch.norm(x, dim=1))
show('norm_all', x.norm())
show('norm_p1', x.norm(p=1, dim=0))
show('normalize', F.normalize(x, dim=1))
show('normalize_p1', F.normalize(x, p=1, dim=0))
show('cosine', F.cosine_similarity(x, y))
show('cosine0', F.cosine_similarity(x, y, dim=0))
show('cdist', torch.cdist(x, y))
show('cdist_p1', torch.cdist(x, y, p=1))
show('std', x.std(unbiased=False))
show('std_dim', x.std(dim=0))
var, mean = torch.var_mean(x, dim=1)
show('var_mean', torch.cat([var, mean]))
var, mean = torch.var_mean(x)
show('var_mean_all', torch.stack([var, mean]))
s, order = x[0].sort(descending=True)
show('sort', s)
show('sort_idx', order)
labels = torch.tensor([3, 1, 2, 3, 3, 1, 0])
u, counts = torch.unique(labels, return_counts=True)
show('unique', u)
show('unique_counts', counts)
u, inv = labels.unique(return_inverse=True)
show('unique_inverse', inv)
show('unique_sorted', torch.unique(torch.tensor([2., 1., 2.]), sorted=True))
show('bincount', torch.bincount(labels))
show('bincount_min', torch.bincount(labels, minlength=6))
show('bincount_w', torch.bincount(labels, weights=torch.arange(7.)))
show('histc', torch.histc(x, bins=4, min=-2, max=2))
show('histc_auto', torch.histc(torch.tensor([1., 2., 1.]), bins=4))
show('tolist', x[:2, :2].numpy().tolist())
show('ndim', [x.ndim, A.ndim, x.dim()])
show('size1', [x.size(1), x.size(-1), x.shape[-1], x.size()[0]])
show('zeros_like_long', torch.zeros_like(x, dtype=torch.long))
show('new_zeros', x.new_zeros(2, 3))
show('new_ones', x.new_ones((2,)))
show('new_tensor', x.new_tensor([1, 2]))
show('new_full', x.new_full((2,), 7.0))
show('repeat_interleave', torch.tensor([1, 2, 3]).repeat_interleave(2))
show('repeat_interleave_dim', x[:2, :2].repeat_interleave(2, dim=0))
show('repeat_interleave_t', torch.repeat_interleave(torch.tensor([1, 2]), torch.tensor([1, 3])))
show('repeat', x[:2, :2].repeat(2, 3))
show('topk', x.topk(2, dim=1).values)
show('cumsum', x.cumsum(dim=1))
show('tril', torch.tril(x))
show('triu', torch.triu(x, diagonal=1))
show('arange_step', torch.arange(0, 1, 0.25))
show('one_hot', F.one_hot(torch.tensor([0, 2]), 4))
show('logsumexp', torch.logsumexp(x, dim=1))
show('allclose', [torch.allclose(x, x + 1e-9), torch.equal(x, x.clone())])
show('any_all', [bool((x > 2).any()), bool((x > -5).all())])
show('flatten', torch.flatten(A, start_dim=1))
show('squeeze', torch.zeros(1, 3, 1).squeeze().shape)
show('outer', torch.outer(torch.tensor([1., 2.]), torch.tensor([3., 4.])))
show('mm', torch.mm(x, y.t()))
show('matmul_vec', x @ y[0])
show('masked_select', torch.masked_select(x, x > 1))
show('nonzero', torch.nonzero(x > 1))
show('index_select', torch.index_select(x, 0, torch.tensor([3, 0])))
show('sum_keepdim', x.sum(dim=(0, 1), keepdim=True))
show('prod', torch.tensor([1., 2., 3.]).prod())
show('addmm', torch.addmm(torch.ones(4, 4), x, y.t(), beta=0.5, alpha=2))
show('lerp', torch.lerp(x, y, 0.3))
show('sign_abs', torch.sign(x) * torch.abs(x))
show('round', torch.round(x * 10) / 10)
show('isclose', torch.isclose(x, x + 1e-3, atol=1e-2))
show('meshgrid', torch.stack(torch.meshgrid(torch.arange(2), torch.arange(3), indexing='ij')))
show('item', [x[0, 0].item(), int(torch.tensor(3)), float(torch.tensor(2.5))])

# gradients through a few of them
w = x.clone().requires_grad_(True)
loss = (F.cosine_similarity(w, y).sum() + torch.cdist(w, y).sum() + F.normalize(w, dim=1).pow(3).sum()
        + w.repeat_interleave(2, dim=0).pow(2).sum() + torch.gather(w, 1, idx).sum() + w.std(unbiased=False))
loss.backward()
show('grad', w.grad)

for k, (vals, dt, shape) in out.items():
    print(k, dt, *shape, '|', *vals)
