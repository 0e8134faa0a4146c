"""The CUDA backend's buffer pool, with plain-Python buffers (its logic needs no GPU).

On a GPU the same pool hands out numba-cuda memory pointers (``test_device.py`` checks the
reuse there)."""

from __future__ import annotations

import gc

import pytest

from numbagrad.backend.gpu_launch import BufferPool, round_size


class Handle:
    """What ``wrap`` hands out: gives its buffer back when it dies, as a MemoryPointer does."""

    def __init__(self, base, give_back):
        self.base = base
        self._give_back = give_back

    def __del__(self):
        self._give_back()


class Driver:
    def __init__(self, capacity=None):
        self.capacity = capacity
        self.live = []  # (id, size) of buffers the driver has handed out and not freed
        self.calls = 0

    def alloc(self, nbytes):
        self.calls += 1
        if self.capacity is not None and sum(s for _, s in self.live) + nbytes > self.capacity:
            raise RuntimeError("[2] Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY")
        base = (self.calls, nbytes)
        self.live.append(base)
        return base


def make_pool(driver):
    def release_all():  # the driver frees what nobody holds any more
        held = {h for stack in pool.free.values() for h in stack}
        driver.live = [b for b in driver.live if b in held or b in in_use]

    in_use = set()

    def wrap(base, nbytes, give_back):
        in_use.add(base)

        def back():
            in_use.discard(base)
            give_back()

        return Handle(base, back)

    pool = BufferPool(driver.alloc, wrap, release_all)
    return pool


def test_sizes_round_up_to_512_bytes_then_to_2_mib():
    assert [round_size(n) for n in (1, 512, 513, 4000, 1 << 20)] == [512, 512, 1024, 4096, 1 << 20]
    assert round_size((1 << 20) + 1) == 2 << 20
    assert round_size(5 << 20) == 6 << 20


def test_a_freed_buffer_is_handed_out_again_for_the_same_rounded_size():
    d = Driver()
    pool = make_pool(d)
    a = pool.take(1000)
    assert d.calls == 1 and pool.reserved_bytes == 1024 and pool.cached_bytes == 0
    base = a.base
    del a
    gc.collect()
    assert pool.cached_bytes == 1024 and pool.free == {1024: [base]}
    b = pool.take(900)  # rounds to 1024 too: no driver call
    assert b.base is base and d.calls == 1 and pool.cached_bytes == 0
    c = pool.take(2000)  # another size: a new buffer
    assert c.base is not base and d.calls == 2 and pool.reserved_bytes == 1024 + 2048
    del b, c
    pool.empty_cache()
    assert pool.free == {} and pool.cached_bytes == 0 and pool.reserved_bytes == 0
    assert d.live == []


def test_out_of_memory_gives_the_cache_back_and_tries_once_more():
    d = Driver(capacity=4096)
    pool = make_pool(d)
    a = pool.take(2048)
    b = pool.take(2048)
    del a  # cached: still held from the driver, which is now full
    gc.collect()
    assert pool.cached_bytes == 2048 and len(d.live) == 2
    e = pool.take(1500)  # 1536: not in the cache; the driver refuses until the cache goes back
    assert e.base[1] == 1536 and d.calls == 4  # two buffers, one refusal, one retry
    assert pool.cached_bytes == 0 and pool.free == {} and pool.reserved_bytes == 2048 + 1536
    assert sorted(s for _, s in d.live) == [1536, 2048]
    del b, e


def test_out_of_memory_with_nothing_cached_and_other_errors_are_raised():
    d = Driver(capacity=1024)
    pool = make_pool(d)
    keep = pool.take(1024)
    with pytest.raises(RuntimeError, match="OUT_OF_MEMORY"):
        pool.take(512)

    def broken(nbytes):
        raise ValueError("not a memory error")

    other = BufferPool(broken, lambda base, n, back: base)
    with pytest.raises(ValueError, match="not a memory error"):
        other.take(10)
    del keep
