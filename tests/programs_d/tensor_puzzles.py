"""Sasha Rush's "Tensor Puzzles" (each NumPy/PyTorch function rebuilt from ``arange``,
``where``, indexing and broadcasting only), checked against the library's own function, then
the "Tensors" tutorial's in-place, scatter and NumPy-bridge idioms.

    python tensor_puzzles.py [torch|numbagrad]
"""
import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
else:
    import numbagrad as torch


def arange(i: int):
    "Use this function to replace a for-loop."
    return torch.tensor(range(i))


def where(q, a, b):
    "Use this function to replace an if-statement."
    return (q * a) + (~q) * b


def ones(i):
    return where(arange(i) >= 0, 1, 0)


def sum(a):
    return ones(a.shape[0]) @ a[:, None]


def outer(a, b):
    return a[:, None] * b[None, :]


def diag(a):
    return a[arange(a.shape[0]), arange(a.shape[0])]


def eye(j):
    return where(arange(j)[:, None] == arange(j), 1, 0)


def triu(j):
    return where(arange(j)[:, None] <= arange(j), 1, 0)


def cumsum(a):
    return a @ triu(a.shape[0])


def diff(a, i):
    return a[arange(i)] - where(arange(i) > 0, a[arange(i) - 1], 0)


def vstack(a, b):
    return where(arange(2)[:, None] == 0, a, b)


def roll(a, i):
    return a[(arange(i) + 1) % i]


def flip(a, i):
    return a[i - arange(i) - 1]


def compress(g, v, i):
    return where(g, v, 0) @ where(cumsum(1 * g) - 1 == arange(i)[:, None], 1, 0).T


def pad_to(a, i, j):
    return a @ where(arange(i)[:, None] == arange(j), 1, 0)


def sequence_mask(values, length):
    return where(arange(values.shape[1]) < length[:, None], values, 0)


def bincount(a, j):
    return ones(a.shape[0]) @ eye(j)[a]


def scatter_add(values, link, j):
    return values @ eye(j)[link]


def flatten(a, i, j):
    return a[arange(i * j) // j, arange(i * j) % j]


def linspace(i, j, n):
    return i + (j - i) * arange(n) / max(1, n - 1)


def heaviside(a, b):
    return where(a == 0, b, a > 0)


def repeat(a, d):
    return a[None, :] + (arange(d) * 0)[:, None]


def bucketize(v, boundaries):
    return (1 * (v[:, None] >= boundaries)) @ ones(boundaries.shape[0])


a = torch.tensor([3, -1, 4, 1, -5, 9, 2])
b = torch.tensor([2, 7, 1, 8, 2, 8, 1])
m = torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
show('ones', [ones(4), torch.ones(4, dtype=torch.long)])
show('sum', [sum(a), torch.sum(a)])
show('outer', [outer(a[:3], b[:2]), torch.outer(a[:3], b[:2])])
show('diag', [diag(m), torch.diag(m)])
show('eye', [eye(3), torch.eye(3, dtype=torch.long)])
show('triu', [triu(3), torch.triu(torch.ones(3, 3, dtype=torch.long))])
show('cumsum', [cumsum(a), torch.cumsum(a, 0)])
show('diff', [diff(a, 7), torch.diff(a, prepend=torch.tensor([0]))])
show('vstack', [vstack(a, b), torch.vstack([a, b])])
show('roll', [roll(a, 7), torch.roll(a, -1)])
show('flip', [flip(a, 7), torch.flip(a, [0])])
g = a > 0
show('compress', [compress(g, a, 7), torch.cat([a[g], torch.zeros(7 - int(g.sum()), dtype=torch.long)])])
show('pad_to', [pad_to(a, 7, 9), torch.nn.functional.pad(a, (0, 2))])
lengths = torch.tensor([1, 3, 0])
show('sequence_mask', [sequence_mask(m, lengths),
                       m.masked_fill(torch.arange(3)[None, :] >= lengths[:, None], 0)])
idx = torch.tensor([0, 2, 2, 1, 4, 2])
show('bincount', [bincount(idx, 5), torch.bincount(idx, minlength=5)])
vals = torch.tensor([1, 10, 100, 1000, 5, 7])
show('scatter_add', [scatter_add(vals, idx, 5),
                     torch.zeros(5, dtype=torch.long).scatter_add_(0, idx, vals)])
show('flatten', [flatten(m, 3, 3), m.flatten()])
show('linspace', [linspace(0.0, 1.0, 5), torch.linspace(0, 1, 5)])
show('heaviside', [heaviside(a, torch.tensor(7)), torch.heaviside(a, torch.tensor(7))])
show('repeat', [repeat(a[:3], 2), a[:3].repeat(2, 1)])
bounds = torch.tensor([0, 2, 5])
show('bucketize', [bucketize(a, bounds), torch.bucketize(a, bounds, right=True)])
show('dtypes', [int(cumsum(a).dtype == torch.int64), int(linspace(0.0, 1.0, 5).dtype == torch.float32),
                int(where(a > 0, 1, 0).dtype == torch.int64),
                int(heaviside(a, torch.tensor(7)).dtype == torch.int64)])

# the tutorial's in-place ops, scatters and the NumPy bridge
t = torch.ones(4, 4)
t[:, 1] = 0
t.add_(5)
show('inplace', t)
src = torch.arange(1, 11).reshape((2, 5)).float()
index = torch.tensor([[0, 1, 2, 0]])
show('scatter_', torch.zeros(3, 5, dtype=src.dtype).scatter_(0, index, src))
show('scatter_reduce', torch.ones(3, 5).scatter_(1, torch.tensor([[0, 1], [2, 2]]), 2.0, reduce='multiply'))
show('scatter_reduce_amax', torch.zeros(3).scatter_reduce(0, torch.tensor([0, 1, 0, 1, 2]), torch.tensor([5., 1., 3., 4., -2.]), reduce='amax', include_self=False))
show('index_add_', torch.ones(5, 3).index_add_(0, torch.tensor([0, 4, 2]), torch.arange(9.).view(3, 3), alpha=2))
show('index_fill', torch.zeros(3, 4).index_fill_(1, torch.tensor([0, 3]), -1))
show('index_copy', torch.zeros(5, 2).index_copy_(0, torch.tensor([4, 0]), torch.tensor([[1., 2.], [3., 4.]])))
show('put_', torch.zeros(2, 3).put_(torch.tensor([1, 5]), torch.tensor([9., 8.])))
show('take', torch.take(m, torch.tensor([0, 4, 8])))
show('masked_scatter', torch.zeros(2, 3).masked_scatter_(torch.tensor([[True, False, True], [False, True, False]]), torch.arange(1., 7.).view(2, 3)))
n = np.ones(5)
t = torch.from_numpy(n)
np.add(n, 1, out=n)
show('from_numpy_shared', t)
t.mul_(3)
show('numpy_sees', n)
u = torch.ones(3)
v = u.numpy()
u.add_(1)
show('numpy_view', v)
x = torch.arange(12.)
y = x.view(3, 4).t()
show('contiguous', [int(y.is_contiguous()), int(y.contiguous().is_contiguous()),
                    y.stride(), y.reshape(-1)])
try:
    y.view(-1)
except RuntimeError as e:
    print('view_error', str(e).split('.')[0])
show('unbind', torch.stack(torch.unbind(m, dim=1)))
show('narrow', m.narrow(1, 1, 2))
show('chunk_last', torch.chunk(torch.arange(7), 3)[-1])
show('broadcast', torch.broadcast_tensors(torch.ones(3, 1), torch.arange(2.))[0].shape)
show('promote', [int((torch.tensor([1, 2]) / 2).dtype == torch.float32),
                 int((torch.tensor([1, 2]) // 2).dtype == torch.int64),
                 int((torch.tensor([1, 2], dtype=torch.int32) + 1.5).dtype == torch.float32),
                 int(torch.result_type(torch.tensor([1]), 1.0) == torch.float32)])
