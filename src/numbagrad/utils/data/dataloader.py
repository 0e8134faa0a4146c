"""``DataLoader``: batches of a dataset, read through a sampler and collated.

Workers (``num_workers > 0``) run in the calling process, one fetch at a time, not in
subprocesses; what they give is what PyTorch's worker processes give: batches in the same
order (for an ``IterableDataset``, each worker iterates its own copy of the dataset and the
workers take turns), ``worker_init_fn`` run once per worker, ``get_worker_info()`` inside a
worker, and per-worker random streams seeded ``base_seed + id`` (numbagrad's default generator,
``random`` and ``numpy.random`` are swapped in while a worker runs, so a worker never moves the
main process's streams). Loading is therefore not parallel, and ``timeout`` has nothing to wait
for.
"""

from __future__ import annotations

import copy
import math
import random
import warnings
from collections.abc import Callable, Iterable

import numpy as np

from ... import cuda
from ... import random as ng_random
from ._utils import worker as _worker
from ._utils.collate import default_collate, default_convert
from ._utils.worker import WorkerInfo
from .dataset import Dataset, IterableDataset, TensorDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

get_worker_info = _worker.get_worker_info


class _DatasetKind:
    Map = 0
    Iterable = 1


class _InfiniteConstantSampler(Sampler):
    """None forever: the sampler of an IterableDataset, whose batches end with its data."""

    def __iter__(self):
        while True:
            yield None


# ---------------------------------------------------------------- fetching

class _MapDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn

    def fetch(self, possibly_batched_index):
        if self.auto_collation:
            if self.collate_fn is default_collate and type(self.dataset) is TensorDataset:
                batch = self.dataset._collated(possibly_batched_index)
                if batch is not None:
                    return batch
            if hasattr(self.dataset, "__getitems__") and self.dataset.__getitems__:
                data = self.dataset.__getitems__(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


class _IterableDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


# ---------------------------------------------------------------- workers

class _Worker:
    """One worker run in this process: its information (and dataset copy) and its own random
    streams, swapped in around everything it runs."""

    def __init__(self, loader: DataLoader, worker_id: int, base_seed: int):
        seed = base_seed + worker_id
        # a shallow copy: its own attributes (worker_init_fn may set them), shared tensors
        self.info = WorkerInfo(id=worker_id, num_workers=loader.num_workers, seed=seed,
                               dataset=copy.copy(loader.dataset))
        self.generator = ng_random.Generator().manual_seed(seed)
        self.py_state = random.Random(seed).getstate()
        np_seed = np.random.SeedSequence([worker_id, base_seed]).generate_state(4)
        self.np_state = np.random.RandomState(np_seed).get_state()
        if loader.worker_init_fn is not None:
            self.run(loader.worker_init_fn, worker_id)

    def run(self, fn, *args):
        default = ng_random.default_generator
        saved = (default._rng, default._seed, random.getstate(), np.random.get_state(),
                 _worker._worker_info)
        default._rng, default._seed = self.generator._rng, self.generator._seed
        random.setstate(self.py_state)
        np.random.set_state(self.np_state)
        _worker._worker_info = self.info
        try:
            return fn(*args)
        finally:
            self.generator._rng, self.generator._seed = default._rng, default._seed
            self.py_state, self.np_state = random.getstate(), np.random.get_state()
            (default._rng, default._seed, py_state, np_state, _worker._worker_info) = saved
            random.setstate(py_state)
            np.random.set_state(np_state)


class _DataLoaderIter:
    """One pass over a DataLoader."""

    def __init__(self, loader: DataLoader, workers: list[_Worker] | None = None):
        if loader.num_workers == 0 and loader.timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        if loader.pin_memory and not cuda.is_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=3)
        self._loader = loader
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._index_sampler = loader._index_sampler
        self._sampler_iter = iter(self._index_sampler)
        # (persistent workers keep the seeds they started with, as PyTorch's)
        self._base_seed = workers[0].info.seed if workers else ng_random.draw_seed(loader.generator)
        self._num_yielded = 0
        kind = (_MapDatasetFetcher if self._dataset_kind == _DatasetKind.Map
                else _IterableDatasetFetcher)
        args = (loader._auto_collation, loader.collate_fn, loader.drop_last)
        if loader.num_workers == 0:
            self._workers = [None]
            self._fetchers = [kind(loader.dataset, *args)]
        else:
            self._workers = workers or [_Worker(loader, i, self._base_seed)
                                        for i in range(loader.num_workers)]
            self._fetchers = [w.run(kind, w.info.dataset, *args) for w in self._workers]
        self._active = list(range(len(self._workers)))
        self._turn = 0

    def __iter__(self):
        return self

    def __len__(self) -> int:
        return len(self._index_sampler)

    def _next_data(self):
        while self._active:
            index = next(self._sampler_iter)  # may raise StopIteration
            k = self._active[self._turn % len(self._active)]
            worker, fetcher = self._workers[k], self._fetchers[k]
            try:
                data = fetcher.fetch(index) if worker is None else worker.run(fetcher.fetch, index)
            except StopIteration:
                if self._dataset_kind == _DatasetKind.Map:
                    raise
                # this worker's copy of the IterableDataset is exhausted; the others go on
                self._active.remove(k)
                continue
            self._turn += 1
            return data
        raise StopIteration

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if (self._dataset_kind == _DatasetKind.Iterable
                and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            msg = (f"Length of IterableDataset {self._loader.dataset} was reported to be "
                   f"{self._IterableDataset_len_called}(when accessing len(dataloader)), but "
                   f"{self._num_yielded} samples have been fetched. ")
            if self._loader.num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly "
                        "configuring the IterableDataset replica at each worker. Please see "
                        "https://pytorch.org/docs/stable/data.html#torch.utils.data."
                        "IterableDataset for examples.")
            warnings.warn(msg, stacklevel=2)
        return data

    def __getstate__(self):
        raise NotImplementedError("{} cannot be pickled", self.__class__.__name__)


# ---------------------------------------------------------------- DataLoader

class DataLoader:
    """Iterate over ``dataset`` in batches: indices from ``sampler`` (or shuffled, or in
    order), grouped by ``batch_size`` (or ``batch_sampler``), samples merged by ``collate_fn``
    (``default_collate``; ``default_convert`` with ``batch_size=None``).

    >>> import numbagrad as torch
    >>> from numbagrad.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(torch.arange(5), torch.arange(5) * 10)
    >>> [x.tolist() for x, y in DataLoader(ds, batch_size=2)]
    [[0, 1], [2, 3], [4]]
    """

    _DataLoader__initialized = False

    def __init__(self, dataset: Dataset, batch_size: int | None = 1,
                 shuffle: bool | None = None, sampler: Sampler | Iterable | None = None,
                 batch_sampler: Sampler | Iterable | None = None, num_workers: int = 0,
                 collate_fn: Callable | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable | None = None, multiprocessing_context=None,
                 generator: ng_random.Generator | None = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        # PyTorch's checks, in its order and words
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; "
                             "use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor "
                "to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            if shuffle not in {False, None}:
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        self._IterableDataset_len_called = None
        self._workers = None  # kept across epochs with persistent_workers

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context) -> None:
        # (with workers it is accepted and unused: they run in this process)
        if multiprocessing_context is not None and self.num_workers == 0:
            raise ValueError("multiprocessing_context can only be used with multi-process "
                             "loading (num_workers > 0), but got "
                             f"num_workers={self.num_workers}")
        self.__multiprocessing_context = multiprocessing_context

    def __setattr__(self, attr, val) -> None:
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler",
                                           "drop_last", "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    def __iter__(self) -> _DataLoaderIter:
        it = _DataLoaderIter(self, self._workers)
        if self.persistent_workers and self.num_workers > 0:
            self._workers = it._workers
        return it

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        if self._dataset_kind == _DatasetKind.Iterable:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = (length // self.batch_size if self.drop_last
                          else math.ceil(length / self.batch_size))
            return length
        return len(self._index_sampler)
