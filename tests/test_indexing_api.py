"""Indexing, shape, sorting and random ops against PyTorch: values, int64 indices, gradients,
exact errors, in-place version bumps and node names."""

from __future__ import annotations

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

A = np.random.default_rng(0).standard_normal((3, 4))
IDX = [[0, 1, 2, 0], [1, 0, 0, 2]]
MASK = [[True, False, True, False]]


def _pair(a=A):
    return (ng.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True))


CASES = {
    "tril": lambda m, x: x.tril(-1),
    "triu_": lambda m, x: (x * 1).triu_(1),
    "masked_fill": lambda m, x: x.masked_fill(m.tensor(MASK), 2.5),
    "masked_fill_tensor": lambda m, x: x.masked_fill(m.tensor(MASK), (x[0, 0] * 3).sum()),
    "masked_fill_": lambda m, x: (x * 1).masked_fill_(m.tensor(MASK), -1.0),
    "masked_select": lambda m, x: x.masked_select(m.tensor(MASK)),
    "gather": lambda m, x: x.gather(0, m.tensor(IDX)),
    "scatter": lambda m, x: x.scatter(1, m.tensor([[2, 0], [1, 3]]), x[:2, :2] * 2),
    "scatter_value": lambda m, x: x.scatter(0, m.tensor(IDX), 1.5),
    "scatter_add": lambda m, x: x.scatter_add(0, m.tensor(IDX), x[:2] ** 2),
    "scatter_add_": lambda m, x: (x * 1).scatter_add_(0, m.tensor(IDX), x[1:] * 3),
    "index_select": lambda m, x: x.index_select(1, m.tensor([3, 0, 3])),
    "index_add": lambda m, x: x.index_add(0, m.tensor([2, 2]), x[:2] * 2, alpha=0.5),
    "index_add_": lambda m, x: (x * 1).index_add_(1, m.tensor([0]), x[:, 1:2]),
    "index_fill_": lambda m, x: (x * 1).index_fill_(1, m.tensor([0, 3]), -2.0),
    "take_along_dim": lambda m, x: m.take_along_dim(x, m.tensor([[0], [2], [1]]), 1),
    "take_along_dim_flat": lambda m, x: m.take_along_dim(x, m.tensor([0, 11, 5])),
    "repeat": lambda m, x: x.repeat(2, 1, 3),
    "tile": lambda m, x: m.tile(x, (2,)),
    "flip": lambda m, x: x.flip(0, 1),
    "fliplr": lambda m, x: m.fliplr(x),
    "roll": lambda m, x: x.roll(5),
    "roll_dims": lambda m, x: x.roll((1, -3), (0, 1)),
    "narrow": lambda m, x: x.narrow(1, -3, 2),
    "unbind": lambda m, x: x.unbind(1)[2],
    "diagonal": lambda m, x: x.diagonal(-1),
    "diag": lambda m, x: m.diag(x[0], 1),
    "diag_embed": lambda m, x: m.diag_embed(x, 1, 0, 2),
    "trace": lambda m, x: x.trace(),
    "outer": lambda m, x: m.outer(x[0], x[1]),
    "cumprod": lambda m, x: x.cumprod(0),
    "sort": lambda m, x: x.sort(1, descending=True).values,
    "topk": lambda m, x: x.topk(2, 0).values,
    "kthvalue": lambda m, x: x.kthvalue(2, 1, True).values,
    "median": lambda m, x: x.median(0).values,
    "median_all": lambda m, x: x.median(),
}


@pytest.mark.parametrize("name", list(CASES))
def test_values_gradients_and_nodes_match_torch(name):
    x, tx = _pair()
    out, tout = CASES[name](ng, x), CASES[name](torch, tx)
    assert tuple(out.shape) == tuple(tout.shape)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-12)
    assert out.grad_fn.name() == type(tout.grad_fn).__name__
    w = np.random.default_rng(1).standard_normal(tuple(out.shape))
    out.backward(ng.tensor(w))
    tout.backward(torch.tensor(w))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("eq,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 2)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 2)]),
    ("i,i->", [(4,), (4,)]), ("ij->ji", [(3, 4)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]),
    ("bi,bi->b", [(2, 3), (2, 3)]), ("ij,j->i", [(3, 4), (4,)]), ("i,j->ij", [(3,), (2,)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 2)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
])
def test_einsum_values_and_gradients_match_torch(eq, shapes):
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal(s) for s in shapes]
    ours = [ng.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, tout = ng.einsum(eq, *ours), torch.einsum(eq, *theirs)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-10)
    out.sum().backward() if out.ndim else out.backward()
    tout.sum().backward()
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10)


def test_cumprod_gradient_with_zeros_matches_torch():
    a = np.array([[2.0, 0.0, 3.0, 0.0, 5.0], [1.5, -2.0, 0.0, 4.0, 0.5], [1.0, 2.0, 3.0, 4.0, 0.0]])
    x, tx = _pair(a)
    w = np.arange(15.0).reshape(3, 5) - 4
    x.cumprod(1).backward(ng.tensor(w))
    tx.cumprod(1).backward(torch.tensor(w))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    # second derivatives too: the recorded backward writes the products out
    x, tx = _pair(a)
    for lib, t in ((ng, x), (torch, tx)):
        (g,) = lib.autograd.grad((t.cumprod(1) * lib.tensor(w)).sum(), t, create_graph=True)
        (g * g).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    assert ng.tensor([1, 2, 3]).cumprod(0).dtype is ng.int64
    assert ng.tensor([True, True]).cumprod(0).tolist() == [1, 1]


def test_sort_topk_indices_are_int64_named_tuples_like_torch():
    a = np.array([2.0, 1.0, 2.0, np.nan, 1.0])
    for kw in ({}, {"descending": True}):
        s, ts = ng.tensor(a).sort(**kw), torch.tensor(a).sort(stable=True, **kw)
        assert s.indices.dtype is ng.int64 and type(s).__name__ == "sort"
        assert s.indices.tolist() == ts.indices.tolist()
        np.testing.assert_array_equal(s.values.numpy(), ts.values.numpy())
    assert ng.tensor([1.0, 3, 3, 2]).topk(2).indices.tolist() == [1, 2]
    assert ng.tensor([3, 1, 2]).argsort(descending=True).tolist() == [0, 2, 1]
    v, i = ng.tensor(5.0).sort()
    assert v.item() == 5.0 and i.ndim == 0 and i.item() == 0


def test_where_one_argument_and_nonzero():
    a = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
    got, want = ng.where(ng.tensor(a) != 0), torch.where(torch.tensor(a) != 0)
    assert [g.tolist() for g in got] == [w.tolist() for w in want]
    assert ng.tensor(a).nonzero().tolist() == torch.tensor(a).nonzero().tolist()
    assert ng.tensor(a).nonzero().dtype is ng.int64
    assert ng.tensor(a).where(ng.tensor(a) > 0, 7.0).tolist() == [[7.0, 1.5, 7.0], [2.0, 7.0, 7.0]]


ERRORS = [
    lambda m, x: x.gather(0, m.tensor([[5]])),
    lambda m, x: x.gather(0, m.tensor([[-1]])),
    lambda m, x: x.gather(2, m.tensor(IDX)),
    lambda m, x: x.gather(0, m.tensor([[0.0]])),
    lambda m, x: x.gather(0, m.tensor([0])),
    lambda m, x: x.gather(0, m.zeros(2, 5, dtype=m.int64)),
    lambda m, x: x.scatter(0, m.tensor([[5]]), 1.0),
    lambda m, x: x.scatter(0, m.tensor(IDX), m.ones(2, 4, dtype=m.float32)),
    lambda m, x: x.scatter_add(0, m.zeros(2, 5, dtype=m.int64), m.ones(1, 1, dtype=m.float64)),
    lambda m, x: x.index_select(0, m.tensor([3])),
    lambda m, x: x.index_select(0, m.tensor([[0]])),
    lambda m, x: x.index_select(0, m.tensor([0.0])),
    lambda m, x: x.index_add(0, m.tensor([3]), m.ones(1, 4, dtype=m.float64)),
    lambda m, x: x.index_add(0, m.tensor([0]), m.ones(2, 4, dtype=m.float64)),
    lambda m, x: x.index_add(0, m.tensor([0]), m.ones(1, 4)),
    lambda m, x: x.masked_fill(m.tensor([1, 0, 1, 0]), 1.0),
    lambda m, x: x.masked_fill(m.tensor([True, False, True, False]), m.ones(2)),
    lambda m, x: x.masked_fill(m.ones(5, dtype=m.bool), 1.0),
    lambda m, x: x[0].masked_fill_(m.ones(3, 4, dtype=m.bool), 1.0),
    lambda m, x: x.masked_select(m.tensor([1, 0, 1, 0])),
    lambda m, x: x[0].tril(),
    lambda m, x: x.flip(0, 0),
    lambda m, x: x.roll((1, 2), (0,)),
    lambda m, x: x.narrow(1, 3, 2),
    lambda m, x: x.narrow(1, 0, -1),
    lambda m, x: x.narrow(1, 5, 0),
    lambda m, x: x.repeat(2),
    lambda m, x: x.repeat(-1, 1),
    lambda m, x: x.topk(5),
    lambda m, x: x.kthvalue(5),
    lambda m, x: x.sort(2),
    lambda m, x: m.zeros(2, 2, 2).diag(),
    lambda m, x: m.zeros(2, 2, 2).trace(),
    lambda m, x: m.outer(x, x),
    lambda m, x: x.cumprod(2),
    lambda m, x: x.sum().unbind(),
    lambda m, x: x.diagonal(0, 0, 0),
    lambda m, x: m.einsum("ij,jk->ik", x, x),
    lambda m, x: m.einsum("ij,jk->ik", x),
    lambda m, x: m.take_along_dim(x, m.tensor([[0.0]]), 0),
    lambda m, x: m.fliplr(x[0]),
    lambda m, x: m.multinomial(m.tensor([-1.0, 1.0]), 1),
    lambda m, x: m.multinomial(m.tensor([0.0, 0.0]), 1),
    lambda m, x: m.multinomial(m.tensor([float("nan"), 1.0]), 1),
    lambda m, x: m.multinomial(m.tensor([1.0, 1.0]), 3),
    lambda m, x: m.multinomial(m.ones(2, 2, 2), 1),
    lambda m, x: m.multinomial(m.ones(2), 0),
    lambda m, x: m.multinomial(m.ones(2, dtype=m.int64), 1),
    lambda m, x: m.bernoulli(m.tensor([1.5])),
    lambda m, x: m.zeros(2).bernoulli_(1.5),
    lambda m, x: m.normal(m.zeros(2), m.tensor([-1.0, 1.0])),
    lambda m, x: m.normal(0.0, -1.0, size=(2,)),
    lambda m, x: m.zeros(2).normal_(0, -1),
    lambda m, x: m.zeros(2).uniform_(1, 0),
    lambda m, x: m.zeros(2).random_(5, 2),
    lambda m, x: m.zeros(2).exponential_(-1),
    lambda m, x: m.zeros(2).geometric_(1.5),
    lambda m, x: m.zeros(2, dtype=m.int64).normal_(),
    lambda m, x: m.zeros(2, dtype=m.int64).uniform_(),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors_match_torch(k):
    with pytest.raises(Exception) as theirs:
        ERRORS[k](torch, torch.tensor(A))
    with pytest.raises(type(theirs.value)) as ours:
        ERRORS[k](ng, ng.tensor(A))
    assert str(ours.value) == str(theirs.value)


def _m(t):
    return ng if isinstance(t, ng.Tensor) else torch


def test_in_place_ops_bump_the_version_and_take_the_node():
    for name, call in [("tril_", lambda t: t.tril_()), ("triu_", lambda t: t.triu_()),
                       ("masked_fill_", lambda t: t.masked_fill_(t > 0, 0.0)),
                       ("scatter_", lambda t: t.scatter_(0, _m(t).tensor([[1]]), 1.0)),
                       ("scatter_add_", lambda t: t.scatter_add_(0, _m(t).tensor([[1]]), t[:1, :1] * 1)),
                       ("index_add_", lambda t: t.index_add_(0, _m(t).tensor([0]), t[1:2] * 1)),
                       ("index_fill_", lambda t: t.index_fill_(0, _m(t).tensor([0]), 1.0)),
                       ("normal_", lambda t: t.normal_()), ("uniform_", lambda t: t.uniform_()),
                       ("bernoulli_", lambda t: t.bernoulli_(0.5)),
                       ("exponential_", lambda t: t.exponential_()),
                       ("random_", lambda t: t.random_(0, 5))]:
        ours = ng.tensor(A, requires_grad=True) * 1
        theirs = torch.tensor(A, requires_grad=True) * 1
        v0 = ours._version
        assert call(ours) is ours
        call(theirs)
        assert ours._version == v0 + 1 == theirs._version, name
        assert ours.grad_fn.name() == type(theirs.grad_fn).__name__, name
        plain = ng.tensor(A)
        call(plain)
        assert plain._version == 1 and plain.grad_fn is None


def test_random_draws_are_reproducible_and_have_the_right_moments():
    def draws():
        ng.manual_seed(7)
        return [ng.empty(20000).normal_(1.0, 2.0), ng.empty(20000).uniform_(-1.0, 3.0),
                ng.empty(20000).exponential_(4.0), ng.bernoulli(ng.full((20000,), 0.25)),
                ng.normal(ng.zeros(20000), 0.5), ng.normal(2.0, 1.0, size=(20000,)),
                ng.empty(20000, dtype=ng.int64).random_(3, 7),
                ng.multinomial(ng.tensor([1.0, 2.0, 7.0]), 20000, replacement=True)]
    first, second = draws(), draws()
    for a, b in zip(first, second):
        assert a.tolist() == b.tolist()
    n, u, e, b, n2, n3, r, mn = (t.numpy().astype(np.float64) for t in first)
    assert abs(n.mean() - 1) < 0.05 and abs(n.std() - 2) < 0.05
    assert u.min() >= -1 and u.max() < 3 and abs(u.mean() - 1) < 0.05
    assert e.min() >= 0 and abs(e.mean() - 0.25) < 0.01
    assert set(np.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.25) < 0.02
    assert abs(n2.std() - 0.5) < 0.02 and abs(n3.mean() - 2) < 0.03
    assert first[6].dtype is ng.int64 and set(np.unique(r)) == {3, 4, 5, 6}
    assert first[7].dtype is ng.int64
    np.testing.assert_allclose(np.bincount(mn.astype(int)) / 20000, [0.1, 0.2, 0.7], atol=0.02)
    picks = ng.multinomial(ng.tensor([[0.0, 1.0, 0.0, 3.0]] * 50), 2)
    assert picks.shape == (50, 2) and set(np.unique(picks.numpy())) == {1, 3}
    assert ng.multinomial(ng.tensor([1.0, 0.0, 0.0]), 2).tolist()[0] == 0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gather_gradients_with_repeated_and_negative_indices_add_up_as_pytorchs(dtype):
    """The gradient of x[idx] (and of an embedding) adds the rows of repeated indices: the
    row loop that replaces np.add.at, against PyTorch, for 1-d and 2-d indices."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    v = rng.standard_normal((6, 2, 3)).astype(dtype)
    for idx in ([0, 5, 5, -1, 2], [[1, 1], [-6, 0], [3, 1]], [4]):
        g = rng.standard_normal(np.array(idx).shape + (2, 3)).astype(dtype)
        x, tx = ng.tensor(v, requires_grad=True), torch.tensor(v, requires_grad=True)
        (x[ng.tensor(idx)] * ng.tensor(g)).sum().backward()
        (tx[torch.tensor(idx)] * torch.tensor(g)).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)
        assert x.grad.dtype is getattr(ng, dtype)
    w = rng.standard_normal((5, 4)).astype(dtype)
    e, te = ng.nn.Embedding.from_pretrained(ng.tensor(w), freeze=False, padding_idx=1), \
        torch.nn.Embedding.from_pretrained(torch.tensor(w), freeze=False, padding_idx=1)
    ids = [[1, 2, 2], [4, 1, 0]]
    e(ng.tensor(ids)).pow(2).sum().backward()
    te(torch.tensor(ids)).pow(2).sum().backward()
    np.testing.assert_allclose(e.weight.grad.numpy(), te.weight.grad.numpy(), rtol=1e-6)


def test_gather_and_scatters_take_a_zero_dim_index_as_one_dim(device):
    """A 0-d index (or a 0-d input or source) is 1-d to gather, scatter, scatter_add and
    scatter_reduce, on each device: values, shapes and gradients against PyTorch's (seed-less
    fuzzer corner: a 0-d index into a 1-d tensor raised)."""
    def run(lib, dev):
        x = lib.tensor([1.0, -2.0, 3.0], device=dev, requires_grad=True)
        s = lib.tensor(5.0, device=dev, requires_grad=True)
        z = lib.tensor(-0.75, device=dev, requires_grad=True)
        i = lib.tensor(1, device=dev)
        outs = [lib.gather(x * 1, 0, i), lib.scatter(x * 1, 0, i, s * 2),
                lib.scatter_add(x * 1, 0, i, s * 3), (x * 1).scatter(0, i, 4.0),
                lib.scatter_add(z * 1, 0, lib.tensor([0, 0], device=dev), x[:2] * 1),
                lib.gather(z * 1, 0, lib.tensor([0, 0, 0], device=dev)),
                lib.scatter(x * 1, 0, lib.tensor([2], device=dev), s * 1)]
        loss = sum((o * o).sum() for o in outs)
        grads = lib.autograd.grad(loss, [x, s, z])
        return [(tuple(o.shape), o.detach().cpu().numpy()) for o in outs], \
            [g.cpu().numpy() for g in grads]

    (outs, grads), (touts, tgrads) = run(ng, device), run(torch, "cpu")
    for (shape, v), (tshape, tv) in zip(outs, touts):
        assert shape == tshape
        np.testing.assert_allclose(v, tv)
    for g, tg in zip(grads, tgrads):
        np.testing.assert_allclose(g, tg)
