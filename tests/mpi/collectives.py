"""Run under ``mpiexec -n N``: every collective of numbagrad.distributed against NumPy's
reduction of all ranks' inputs (which each rank rebuilds from the ranks' seeds), in place on
the tensors' memory, blocking and asynchronous. Prints OK on success."""

import numpy as np

import numbagrad as torch
import numbagrad.distributed as dist

dist.init_process_group("mpi")
rank, size = dist.get_rank(), dist.get_world_size()
OPS = {
    dist.ReduceOp.SUM: lambda xs: np.sum(xs, axis=0),
    dist.ReduceOp.AVG: lambda xs: np.mean(xs, axis=0),
    dist.ReduceOp.PRODUCT: lambda xs: np.prod(xs, axis=0),
    dist.ReduceOp.MAX: lambda xs: np.max(xs, axis=0),
    dist.ReduceOp.MIN: lambda xs: np.min(xs, axis=0),
}
DTYPES = {"float32": torch.float32, "float64": torch.float64, "int64": torch.int64}


def data(r, dtype, shape=(3, 4)):
    """Rank ``r``'s input: small values (the product of N of them stays exact)."""
    return np.random.default_rng(100 + r).integers(-3, 4, size=shape).astype(dtype)


def check(got, want, what):
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=what)


for name, dt in DTYPES.items():
    every = np.stack([data(r, name) for r in range(size)])
    for op, ref in OPS.items():
        if op == dist.ReduceOp.AVG and name == "int64":
            continue
        want = ref(every).astype(name)
        # blocking, in place: the tensor keeps its array
        t = torch.from_numpy(data(rank, name).copy())
        before = t._data
        assert dist.all_reduce(t, op=op) is None
        assert t._data is before
        check(t.numpy(), want, f"all_reduce {op!r} {name}")
        # asynchronous
        t = torch.from_numpy(data(rank, name).copy())
        work = dist.all_reduce(t, op=op, async_op=True)
        assert work.wait() is True and work.is_completed()
        check(t.numpy(), want, f"async all_reduce {op!r} {name}")
        # a non-contiguous tensor: staged, written back
        base = torch.from_numpy(data(rank, name, (4, 3)).copy())
        t = base.t()
        dist.all_reduce(t, op=op)
        check(base.numpy().T, ref(np.stack([data(r, name, (4, 3)) for r in range(size)]))
              .astype(name).T, f"non-contiguous all_reduce {op!r} {name}")
        # reduce: only the destination gets the result
        dst = size - 1
        t = torch.from_numpy(data(rank, name).copy())
        dist.reduce(t, dst=dst, op=op)
        if rank == dst:
            check(t.numpy(), want, f"reduce {op!r} {name}")
        else:
            check(t.numpy(), data(rank, name), f"reduce {op!r} {name} (not dst)")
        # reduce_scatter(_tensor): rank r gets block r of the reduction
        blocks = [np.random.default_rng(7 * r).integers(-3, 4, (size, 2)).astype(name)
                  for r in range(size)]
        out = torch.zeros(2, dtype=dt)
        dist.reduce_scatter_tensor(out, torch.from_numpy(blocks[rank].reshape(-1).copy()), op=op)
        check(out.numpy(), ref(np.stack(blocks))[rank].astype(name),
              f"reduce_scatter_tensor {op!r}")
        out = torch.zeros(2, dtype=dt)
        dist.reduce_scatter(out, [torch.from_numpy(b.copy()) for b in blocks[rank]], op=op)
        check(out.numpy(), ref(np.stack(blocks))[rank].astype(name), f"reduce_scatter {op!r}")

    mine = data(rank, name)
    # broadcast from the last rank, in place
    t = torch.from_numpy(mine.copy())
    before = t._data
    dist.broadcast(t, src=size - 1)
    assert t._data is before
    check(t.numpy(), data(size - 1, name), f"broadcast {name}")
    work = dist.broadcast(torch.from_numpy(mine.copy()), src=0, async_op=True)
    work.wait()
    # all_gather into a list, and into one tensor
    outs = [torch.zeros(3, 4, dtype=dt) for _ in range(size)]
    dist.all_gather(outs, torch.from_numpy(mine.copy()))
    for r in range(size):
        check(outs[r].numpy(), data(r, name), f"all_gather {name}")
    out = torch.zeros(size * 3, 4, dtype=dt)
    dist.all_gather_into_tensor(out, torch.from_numpy(mine.copy()))
    check(out.numpy(), np.concatenate([data(r, name) for r in range(size)]), "all_gather_into")
    work = dist.all_gather_into_tensor(torch.zeros(size, 3, 4, dtype=dt),
                                       torch.from_numpy(mine.copy()), async_op=True)
    work.wait()
    # gather to rank 0, scatter from rank 0
    t = torch.from_numpy(mine.copy())
    if rank == 0:
        outs = [torch.zeros(3, 4, dtype=dt) for _ in range(size)]
        dist.gather(t, outs, dst=0)
        for r in range(size):
            check(outs[r].numpy(), data(r, name), f"gather {name}")
        ins = [torch.from_numpy(data(10 + r, name)) for r in range(size)]
        dist.scatter(t, ins, src=0)
    else:
        dist.gather(t, dst=0)
        dist.scatter(t, src=0)
    check(t.numpy(), data(10 + rank, name), f"scatter {name}")

# errors that name the problem
try:
    dist.broadcast(torch.zeros(2), src=size)
    raise AssertionError("no error")
except RuntimeError as e:
    assert "invalid root rank" in str(e), e
try:
    dist.all_gather([torch.zeros(2)] * (size + 1), torch.zeros(2))
    raise AssertionError("no error")
except RuntimeError as e:
    assert f"expected a list of {size} tensors" in str(e), e

assert dist.barrier() is None
dist.barrier(async_op=True).wait()
dist.destroy_process_group()
print(f"rank {rank}: OK", flush=True)
