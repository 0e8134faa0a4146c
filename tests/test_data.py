"""numbagrad.utils.data against torch.utils.data: batches, collation, lengths, samplers,
random_split and error texts; shuffling's reproducibility; workers run in this process."""

from __future__ import annotations

import collections
import random

import numpy as np
import pytest

import numbagrad as ng
import numbagrad.utils.data
from numbagrad.utils.data import (
    BatchSampler, ConcatDataset, DataLoader, Dataset, IterableDataset, RandomSampler,
    SequentialSampler, StackDataset, Subset, SubsetRandomSampler, TensorDataset,
    WeightedRandomSampler, default_collate, default_convert, get_worker_info, random_split,
)

torch = pytest.importorskip("torch")
tdata = torch.utils.data

Point = collections.namedtuple("Point", ["x", "y"])


def same(a, b):
    """``a`` (numbagrad) equals ``b`` (torch) element for element: container types, tensor
    dtypes, shapes and values."""
    if isinstance(b, torch.Tensor):
        assert isinstance(a, ng.Tensor), (a, b)
        assert a.dtype.name == str(b.dtype).removeprefix("torch."), (a.dtype, b.dtype)
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    elif isinstance(b, dict):
        assert type(a) is type(b) and list(a) == list(b)
        for k in b:
            same(a[k], b[k])
    elif isinstance(b, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            same(x, y)
    else:
        assert type(a) is type(b) and a == b, (a, b)


def error(fn, *args, **kwargs):
    with pytest.raises(Exception) as info:
        fn(*args, **kwargs)
    return type(info.value), str(info.value)


X = np.arange(30, dtype=np.float32).reshape(10, 3)
Y = np.arange(10, dtype=np.int64) % 3


def pair():
    return (TensorDataset(ng.tensor(X), ng.tensor(Y)),
            tdata.TensorDataset(torch.tensor(X), torch.tensor(Y)))


class Samples(Dataset):
    """A map-style dataset of mixed samples (as a torch Dataset too: same items)."""

    def __init__(self, n=5):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"id": i, "score": i / 2, "flag": i % 2 == 0, "name": f"s{i}",
                "feat": np.full(2, i, np.float32), "pt": Point(i, float(i)), "pair": (i, [i, -i])}


class TorchSamples(tdata.Dataset):
    __len__ = Samples.__len__
    __getitem__ = Samples.__getitem__
    __init__ = Samples.__init__


def test_both_import_forms_name_the_same_objects():
    assert ng.utils.data.DataLoader is DataLoader
    assert numbagrad.utils.data.TensorDataset is TensorDataset
    assert ng.utils.data.dataloader.default_collate is default_collate


@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (3, False), (3, True), (10, False),
                                                  (4, True), (20, False)])
def test_batches_and_lengths_equal_torch(batch_size, drop_last):
    ds, tds = pair()
    dl = DataLoader(ds, batch_size=batch_size, drop_last=drop_last)
    tdl = tdata.DataLoader(tds, batch_size=batch_size, drop_last=drop_last)
    assert len(dl) == len(tdl)
    same(list(dl), list(tdl))


def test_mixed_samples_collate_as_torch():
    same(list(DataLoader(Samples(), batch_size=2)),
         list(tdata.DataLoader(TorchSamples(), batch_size=2)))


@pytest.mark.parametrize("batch", [
    [0, 1, 2], [1.5, 2.0], [True, False], ["a", "b"], [b"a", b"b"], [(0, 1.5), (2, 3.5)],
    [[0, 1], [2, 3]], [{"A": 0, "B": 1.0}, {"A": 100, "B": 2.0}], [Point(0, 0), Point(1, 1)],
    [np.array([1, 2], np.int32), np.array([3, 4], np.int32)], [np.array(1.0), np.array(2.0)],
    [np.float32(1), np.float32(2)], [np.float64(1), np.float64(2)], [np.int32(1), np.int32(5)],
    [np.int64(2)], [np.bool_(True), np.bool_(False)],
    [{"a": [(1, "x"), (2, "y")]}, {"a": [(3, "z"), (4, "w")]}],
], ids=lambda b: type(b[0]).__name__)
def test_default_collate_equals_torch(batch):
    same(default_collate(batch), tdata.default_collate(batch))


def test_default_collate_stacks_tensors_of_each_dtype():
    for dt in ("float32", "float64", "int64", "int32", "bool"):
        rows = [np.arange(3).astype(dt), np.arange(3, 6).astype(dt)]
        same(default_collate([ng.tensor(r) for r in rows]),
             tdata.default_collate([torch.tensor(r) for r in rows]))


@pytest.mark.parametrize("data", [
    0, 1.5, "s", np.array([0, 1]), np.float32(2), (np.array([1.0]), 2), [np.array([2])],
    {"a": np.float32(1), "b": "x"}, Point(np.array(0), np.array(1)), np.array(["a"]),
], ids=lambda d: type(d).__name__)
def test_default_convert_equals_torch(data):
    same(default_convert(data), tdata.default_convert(data))


@pytest.mark.parametrize("batch", [
    [object()], [[1, 2], [3]], [np.array(["a"])], [ng.ones(2), ng.ones(3)],
], ids=["object", "ragged", "strings", "sizes"])
def test_collate_errors_equal_torch(batch):
    tbatch = [torch.tensor(b.numpy()) if isinstance(b, ng.Tensor) else b for b in batch]
    assert error(default_collate, batch) == error(tdata.default_collate, tbatch)


def test_batch_size_none_converts_each_sample_as_torch():
    dl = DataLoader(Samples(3), batch_size=None)
    tdl = tdata.DataLoader(TorchSamples(3), batch_size=None)
    assert len(dl) == len(tdl) == 3
    same(list(dl), list(tdl))


def test_batch_sampler_and_sampler_options_equal_torch():
    ds, tds = pair()
    order = [3, 1, 4, 1, 5, 9, 2, 6]
    same(list(DataLoader(ds, sampler=order, batch_size=3)),
         list(tdata.DataLoader(tds, sampler=order, batch_size=3)))
    batches = [[0, 2], [5], [9, 8, 7]]
    dl, tdl = DataLoader(ds, batch_sampler=batches), tdata.DataLoader(tds, batch_sampler=batches)
    assert len(dl) == len(tdl) == 3
    same(list(dl), list(tdl))
    assert (list(BatchSampler(SequentialSampler(range(10)), 3, False))
            == list(tdata.BatchSampler(tdata.SequentialSampler(range(10)), 3, False)))
    assert len(BatchSampler(range(10), 3, True)) == len(tdata.BatchSampler(range(10), 3, True))


def test_a_custom_collate_fn_gets_the_list_of_samples():
    ds, _ = pair()
    out = list(DataLoader(ds, batch_size=4, collate_fn=lambda b: len(b)))
    assert out == [4, 4, 2]


@pytest.mark.parametrize("kwargs", [
    dict(sampler=[0, 1], shuffle=True), dict(batch_sampler=[[0]], batch_size=2),
    dict(batch_sampler=[[0]], drop_last=True), dict(batch_sampler=[[0]], shuffle=True),
    dict(batch_size=None, drop_last=True), dict(num_workers=-1), dict(timeout=-1),
    dict(prefetch_factor=2), dict(num_workers=1, prefetch_factor=-1),
    dict(persistent_workers=True), dict(multiprocessing_context="fork"), dict(batch_size=0),
    dict(batch_size=2, drop_last=1),
], ids=lambda k: ",".join(k))
def test_option_errors_equal_torch(kwargs):
    ds, tds = pair()
    assert error(DataLoader, ds, **kwargs) == error(tdata.DataLoader, tds, **kwargs)


class Stream(IterableDataset):
    """range(start, end), split between workers by get_worker_info (torch's doc example)."""

    def __init__(self, start, end, shard=True):
        self.start, self.end, self.shard = start, end, shard

    def __len__(self):
        return self.end - self.start

    def __iter__(self):
        info = get_worker_info()
        start, end = self.start, self.end
        if info is not None and self.shard:
            per = -(-(end - start) // info.num_workers)
            start = self.start + info.id * per
            end = min(start + per, self.end)
        return iter(range(start, end))


class TorchStream(tdata.IterableDataset):
    __init__ = Stream.__init__
    __len__ = Stream.__len__

    def __iter__(self):
        return iter(range(self.start, self.end))


def test_iterable_dataset_errors_and_lengths_equal_torch():
    ds, tds = Stream(0, 7), TorchStream(0, 7)
    for kwargs in (dict(shuffle=True), dict(batch_sampler=[[0]])):
        assert error(DataLoader, ds, **kwargs) == error(tdata.DataLoader, tds, **kwargs)
    assert error(DataLoader, ds, sampler=[0])[1].startswith(
        "DataLoader with IterableDataset: expected unspecified sampler option, but got sampler=")
    for kwargs in (dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=None)):
        dl, tdl = DataLoader(ds, **kwargs), tdata.DataLoader(tds, **kwargs)
        assert len(dl) == len(tdl)
        same(list(dl), list(tdl))


def test_setting_a_fixed_attribute_after_init_is_refused_as_torch():
    ds, tds = pair()
    dl, tdl = DataLoader(ds), tdata.DataLoader(tds)

    def set_batch_size(loader):
        loader.batch_size = 4

    assert error(set_batch_size, dl) == error(set_batch_size, tdl)


def test_timeout_without_workers_is_refused_at_iteration_as_torch():
    ds, tds = pair()
    assert error(iter, DataLoader(ds, timeout=1)) == error(iter, tdata.DataLoader(tds, timeout=1))


def test_datasets_equal_torch():
    a, b = ng.arange(6).reshape(3, 2), ng.arange(4).reshape(2, 2)
    ta, tb = torch.arange(6).reshape(3, 2), torch.arange(4).reshape(2, 2)
    cat = TensorDataset(a) + TensorDataset(b)
    tcat = tdata.TensorDataset(ta) + tdata.TensorDataset(tb)
    assert isinstance(cat, ConcatDataset) and len(cat) == len(tcat) == 5
    for i in (0, 2, 3, 4, -1, -5):
        same(cat[i], tcat[i])
    assert error(cat.__getitem__, -6) == error(tcat.__getitem__, -6)
    same(Subset(cat, [4, 0])[1], tdata.Subset(tcat, [4, 0])[1])
    same(StackDataset(p=TensorDataset(a), q=TensorDataset(a))[2],
         tdata.StackDataset(p=tdata.TensorDataset(ta), q=tdata.TensorDataset(ta))[2])
    assert (error(TensorDataset, a, ng.zeros(2))
            == error(tdata.TensorDataset, ta, torch.zeros(2))
            == (AssertionError, "Size mismatch between tensors"))
    assert error(ConcatDataset, []) == error(tdata.ConcatDataset, [])
    assert list(Stream(0, 2) + Stream(5, 7)) == list(TorchStream(0, 2) + TorchStream(5, 7))


@pytest.mark.parametrize("n,lengths", [(10, [3, 7]), (11, [0.3, 0.3, 0.4]), (10, [0.5, 0.5]),
                                       (5, [1.0]), (7, [2, 0, 5])])
def test_random_split_lengths_and_cover(n, lengths):
    parts = random_split(range(n), lengths, generator=ng.Generator().manual_seed(1))
    tparts = tdata.random_split(range(n), lengths, generator=torch.Generator().manual_seed(1))
    assert [len(p) for p in parts] == [len(p) for p in tparts]
    seen = [i for p in parts for i in p]
    assert sorted(seen) == list(range(n))  # disjoint and covering
    again = random_split(range(n), lengths, generator=ng.Generator().manual_seed(1))
    assert [list(p) for p in again] == [list(p) for p in parts]


@pytest.mark.parametrize("lengths", [[0.5, 0.6], [3, 4], [-0.5, 1.5], [1.2, -0.2]])
def test_random_split_errors_equal_torch(lengths):
    assert error(random_split, range(10), lengths) == error(tdata.random_split, range(10), lengths)


def test_random_split_warns_of_an_empty_split_as_torch():
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0. This might result"):
        random_split(range(1), [0.5, 0.5])


def _epoch(loader):
    return [i for (x,) in loader for i in x.tolist()]


def test_shuffle_with_a_seeded_generator_is_reproducible_and_a_permutation():
    ds = TensorDataset(ng.arange(50))
    g1, g2 = ng.Generator().manual_seed(0), ng.Generator().manual_seed(0)
    a = DataLoader(ds, batch_size=7, shuffle=True, generator=g1)
    b = DataLoader(ds, batch_size=7, shuffle=True, generator=g2)
    first, second = _epoch(a), _epoch(a)
    assert first == _epoch(b) and second == _epoch(b)
    assert sorted(first) == sorted(second) == list(range(50))
    assert first != second and first != list(range(50))


def test_shuffle_without_a_generator_follows_manual_seed_and_reshuffles_each_epoch():
    ds = TensorDataset(ng.arange(40))
    dl = DataLoader(ds, batch_size=8, shuffle=True)
    ng.manual_seed(3)
    first, second = _epoch(dl), _epoch(dl)
    ng.manual_seed(3)
    assert _epoch(dl) == first and _epoch(dl) == second
    assert first != second and sorted(first) == list(range(40))


def test_random_samplers():
    g = ng.Generator().manual_seed(0)
    drawn = list(RandomSampler(range(5), replacement=True, num_samples=70, generator=g))
    assert len(drawn) == 70 and set(drawn) <= set(range(5))
    cut = list(RandomSampler(range(5), num_samples=12, generator=g))
    assert len(cut) == 12 and sorted(cut[:10]) == sorted(list(range(5)) * 2)
    assert sorted(SubsetRandomSampler([7, 3, 9], generator=g)) == [3, 7, 9]
    w = list(WeightedRandomSampler([0.0, 1.0, 0.0, 2.0], 50, generator=g))
    assert set(w) <= {1, 3} and len(w) == 50
    distinct = WeightedRandomSampler([1, 1, 0, 1], 3, replacement=False, generator=g)
    assert sorted(distinct) == [0, 1, 3]
    for weights, n, replacement in [([1.0, -1.0], 1, True), ([0.0, 0.0], 1, True),
                                    ([1.0, 1.0], 3, False)]:
        assert (error(list, WeightedRandomSampler(weights, n, replacement))
                == error(list, tdata.WeightedRandomSampler(weights, n, replacement)))
    for args, kwargs in [((range(3),), dict(num_samples=0)), ((range(3),), dict(replacement=1))]:
        assert error(RandomSampler, *args, **kwargs) == error(tdata.RandomSampler, *args, **kwargs)
    assert (error(WeightedRandomSampler, [[1.0]], 2)
            == error(tdata.WeightedRandomSampler, [[1.0]], 2))


def test_iterable_dataset_workers_take_turns_as_torch_documents():
    # torch.utils.data.IterableDataset's documented outputs with num_workers=2
    assert [int(x) for x in DataLoader(Stream(3, 7), num_workers=2)] == [3, 5, 4, 6]
    assert [int(x) for x in DataLoader(Stream(3, 7, shard=False), num_workers=2)] == [
        3, 3, 4, 4, 5, 5, 6, 6]

    def init(worker_id):
        info = get_worker_info()
        ds = info.dataset
        per = -(-(ds.end - ds.start) // info.num_workers)
        ds.start = ds.start + worker_id * per
        ds.end = min(ds.start + per, ds.end)

    ds = Stream(3, 7, shard=False)
    assert [int(x) for x in DataLoader(ds, num_workers=2, worker_init_fn=init)] == [3, 5, 4, 6]
    assert [int(x) for x in DataLoader(ds, num_workers=12, worker_init_fn=init)] == [3, 4, 5, 6]
    assert (ds.start, ds.end) == (3, 7)  # workers changed their own copies


class Noisy(Dataset):
    """Samples that draw from numpy's, Python's and numbagrad's global random streams."""

    def __len__(self):
        return 6

    def __getitem__(self, i):
        info = get_worker_info()
        return (i, info.id, np.random.rand(), random.random(), float(ng.rand(1)))


def test_map_style_workers_give_the_batches_in_order_and_keep_their_own_streams():
    ds, tds = pair()
    same(list(DataLoader(ds, batch_size=3, num_workers=2)),
         list(tdata.DataLoader(tds, batch_size=3)))
    started = []
    np_state, py_state = np.random.get_state()[1].copy(), random.getstate()
    dl = DataLoader(Noisy(), batch_size=2, num_workers=2, worker_init_fn=started.append)
    batches = list(dl)
    assert started == [0, 1] and get_worker_info() is None
    assert [b[1].tolist() for b in batches] == [[0, 0], [1, 1], [0, 0]]
    # the workers' draws came from their own streams, not the main process's
    assert (np.random.get_state()[1] == np_state).all() and random.getstate() == py_state
    ng.manual_seed(7)
    again = list(dl)
    ng.manual_seed(7)
    assert [b[2].tolist() for b in list(dl)] == [b[2].tolist() for b in again]


def test_persistent_workers_start_once():
    started = []
    dl = DataLoader(Noisy(), batch_size=3, num_workers=2, persistent_workers=True,
                    worker_init_fn=started.append)
    list(dl), list(dl)
    assert started == [0, 1]


def test_generator():
    g = ng.Generator()
    assert g.initial_seed() == torch.Generator().initial_seed() == 67280421310721
    assert g.manual_seed(-1) is g
    assert g.initial_seed() == torch.Generator().manual_seed(-1).initial_seed()
    assert error(g.manual_seed, 1.5) == error(torch.Generator().manual_seed, 1.5)
    assert error(g.manual_seed, 2 ** 64) == error(torch.Generator().manual_seed, 2 ** 64)
    s = g.seed()
    assert g.initial_seed() == s and 0 <= s < 2 ** 64
    g.manual_seed(5)
    state = g.get_state()
    a = ng.rand(4, generator=g)
    g.set_state(state)
    assert ng.rand(4, generator=g).tolist() == a.tolist()
    assert g.initial_seed() == 5
    assert ng.manual_seed(11) is ng.default_generator and ng.initial_seed() == 11


def test_factories_draw_from_a_given_generator_only():
    ng.manual_seed(0)
    expected = ng.rand(3).tolist()
    ng.manual_seed(0)
    g = ng.Generator().manual_seed(0)
    for fn in (lambda: ng.rand(2, generator=g), lambda: ng.randn(2, generator=g),
               lambda: ng.randint(0, 5, (2,), generator=g), lambda: ng.randperm(5, generator=g)):
        fn()
    assert ng.rand(3).tolist() == expected  # the default stream did not move
    g1, g2 = ng.Generator().manual_seed(9), ng.Generator().manual_seed(9)
    assert ng.randperm(20, generator=g1).tolist() == ng.randperm(20, generator=g2).tolist()
    assert ng.randn(3, generator=g1).tolist() == ng.randn(3, generator=g2).tolist()


def test_tensordataset_batches_are_the_default_collate_of_their_samples():
    """A DataLoader over a TensorDataset takes each batch's rows at once; the batches are
    default_collate's stack of the samples, as PyTorch's: values, dtypes, shapes, order."""
    from numbagrad.utils.data import DataLoader, TensorDataset, default_collate

    X, y, z = ng.randn(10, 3, 2), ng.arange(10), ng.rand(10) > 0.5
    ds = TensorDataset(X, y, z)
    for kwargs in ({"batch_size": 4}, {"batch_size": 3, "shuffle": True, "drop_last": True},
                   {"batch_size": 2, "sampler": [9, -1, 0, 3]}):
        ng.manual_seed(1)
        fast = list(DataLoader(ds, **kwargs))
        ng.manual_seed(1)
        slow = list(DataLoader(ds, collate_fn=lambda b: default_collate(b), **kwargs))
        assert len(fast) == len(slow)
        for a, b in zip(fast, slow):
            assert type(a) is list and len(a) == 3
            for s, t in zip(a, b):
                assert s.dtype is t.dtype and s.shape == t.shape and s.tolist() == t.tolist()
                assert s.is_contiguous()


def test_tensordataset_batches_that_record_or_index_out_of_range_as_samples_would():
    from numbagrad.utils.data import DataLoader, TensorDataset

    w = ng.randn(4, 2, requires_grad=True)
    (batch,) = next(iter(DataLoader(TensorDataset(w), batch_size=4)))
    assert type(batch.grad_fn).__name__ == "StackBackward0"  # (the stack of rows, as PyTorch)
    with pytest.raises(IndexError, match=r"^index 7 is out of bounds for dimension 0 with size 4$"):
        list(DataLoader(TensorDataset(ng.ones(4)), batch_size=2, sampler=[0, 7]))

    class Doubled(TensorDataset):  # a subclass's own __getitem__ is called per sample
        def __getitem__(self, i):
            return tuple(t[i] * 2 for t in self.tensors)

    (b,) = next(iter(DataLoader(Doubled(ng.arange(3.0)), batch_size=3)))
    assert b.tolist() == [0.0, 2.0, 4.0]
