"""Run under ``mpiexec -n N``: DistributedDataParallel's reducer on a stand-in module
(tests/mpi/_standin.py): start from rank 0's state, training equal to one process on the whole
batch, all-reduces started during backward, no_sync, unused parameters. Prints OK."""

import sys
from pathlib import Path

import numpy as np

import numbagrad as torch
import numbagrad.distributed as dist
from numbagrad.distributed import reducer as reducer_module

sys.path.insert(0, str(Path(__file__).parent))
from _standin import MLP, StandInDDP  # noqa: E402

dist.init_process_group("mpi")
rank, size = dist.get_rank(), dist.get_world_size()
BATCH = 4 * size
rng = np.random.default_rng(0)
X = rng.standard_normal((5, BATCH, 4)).astype(np.float32)  # 5 batches, same on all ranks
Y = rng.standard_normal((5, BATCH, 1)).astype(np.float32)
mine = slice(rank * 4, rank * 4 + 4)


def loss_fn(out, y):
    return ((out - y) ** 2).mean()


def same_on_all_ranks(t, what):
    outs = [torch.zeros(*t.shape) for _ in range(size)]
    dist.all_gather(outs, t.detach())
    for o in outs:
        assert np.array_equal(o.numpy(), t.detach().numpy()), what


# ---- construction broadcasts rank 0's parameters and buffers
model = MLP(seed=rank)
ddp = StandInDDP(model)
ref0 = MLP(seed=0)
for p, q in zip(model.parameters() + model.buffers(), ref0.parameters() + ref0.buffers()):
    assert np.array_equal(p.detach().numpy(), q.detach().numpy())

# ---- N steps of SGD: equal on every rank, and to one process on the whole batch
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
ref = MLP(seed=0)
ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
for step in range(4):
    opt.zero_grad()
    loss_fn(ddp(torch.tensor(X[step][mine])), torch.tensor(Y[step][mine])).backward()
    opt.step()
    ref_opt.zero_grad()
    loss_fn(ref(torch.tensor(X[step])), torch.tensor(Y[step])).backward()
    ref_opt.step()
for name, p, q in zip(model.names, model.parameters(), ref.parameters()):
    same_on_all_ranks(p, name)
    np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=2e-6, atol=2e-7,
                               err_msg=name)

# ---- buckets are all-reduced during backward: the order of events, one parameter a bucket
events = []
model = MLP(seed=1)
for name, p in zip(model.names, model.parameters()):
    p.register_post_accumulate_grad_hook(lambda p, name=name: events.append(("grad", name)))
ddp = StandInDDP(model, bucket_bytes_cap=1)
assert [b.indices for b in ddp.reducer.buckets] == [[3], [2], [1], [0]]  # reverse order
names = {id(b.flat): [model.names[i] for i in b.indices] for b in ddp.reducer.buckets}
real_all_reduce = reducer_module.all_reduce


def recording_all_reduce(t, *args, **kwargs):
    events.append(("all_reduce", *names[id(t)]))
    return real_all_reduce(t, *args, **kwargs)


reducer_module.all_reduce = recording_all_reduce
loss_fn(ddp(torch.tensor(X[0][mine])), torch.tensor(Y[0][mine])).backward()
events.append(("backward returned",))
reducer_module.all_reduce = real_all_reduce
assert events.index(("all_reduce", "w2")) < events.index(("grad", "w1")), events
assert events.index(("all_reduce", "b2")) < events.index(("grad", "b1")), events
assert events[-2] == ("all_reduce", "w1"), events
for name, p in zip(model.names, model.parameters()):
    same_on_all_ranks(p.grad, name)

# ---- no_sync: gradients accumulate locally; the next synchronised pass averages the sum
model, ref = MLP(seed=2), MLP(seed=2)
ddp = StandInDDP(model, bucket_bytes_cap=64)
launched = []
reducer_module.all_reduce = lambda t, *a, **k: launched.append(1) or real_all_reduce(t, *a, **k)
with ddp.no_sync():
    for step in range(2):
        loss_fn(ddp(torch.tensor(X[step][mine])), torch.tensor(Y[step][mine])).backward()
assert not launched
local = model.w1.grad.numpy().copy()
loss_fn(ddp(torch.tensor(X[2][mine])), torch.tensor(Y[2][mine])).backward()
assert launched
reducer_module.all_reduce = real_all_reduce
for step in range(3):
    loss_fn(ref(torch.tensor(X[step])), torch.tensor(Y[step])).backward()
for name, p, q in zip(model.names, model.parameters(), ref.parameters()):
    same_on_all_ranks(p.grad, name)
    np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=2e-6, atol=2e-7,
                               err_msg=name)
assert not np.allclose(local * 3 / 2, model.w1.grad.numpy())  # (the local sums differed)

# ---- find_unused_parameters: an unused parameter keeps grad None, one used on rank 0 only
# gets the mean (its rank-0 gradient / size) on every rank
model = MLP(seed=3, extra=2)
ddp = StandInDDP(model, bucket_bytes_cap=1, find_unused_parameters=True)
for step in range(2):
    for p in model.parameters():
        p.grad = None
    out = ddp(torch.tensor(X[step][mine]), use_extra=(0,) if rank == 0 else ())
    loss_fn(out, torch.tensor(Y[step][mine])).backward()
    assert model.extra[1].grad is None
    same_on_all_ranks(model.extra[0].grad, "extra0")
    g = 2 * (out.detach() - torch.tensor(Y[step][mine])).mean().item()  # d loss / d extra0
    gs = [torch.zeros(1) for _ in range(size)]
    dist.all_gather(gs, torch.tensor([g if rank == 0 else 0.0]))
    want = sum(t.item() for t in gs) / size
    np.testing.assert_allclose(model.extra[0].grad.numpy(), np.full(3, want, np.float32),
                               rtol=1e-5)
    for name, p in zip(model.names[:4], model.parameters()[:4]):
        same_on_all_ranks(p.grad, name)

# ---- without it, an unused parameter stops the next forward with PyTorch's error
model = MLP(seed=4, extra=1)
ddp = StandInDDP(model)
loss_fn(ddp(torch.tensor(X[0][mine])), torch.tensor(Y[0][mine])).backward()
try:
    ddp(torch.tensor(X[1][mine]))
    raise AssertionError("no error")
except RuntimeError as e:
    assert str(e).startswith("Expected to have finished reduction in the prior iteration"), e
    assert str(e).endswith(f"Parameter indices which did not receive grad for rank {rank}: 4")

# ---- gradient_as_bucket_view: .grad is the bucket's memory from the first step on
model, ref = MLP(seed=5), MLP(seed=5)
ddp = StandInDDP(model, gradient_as_bucket_view=True)
for step in range(2):
    loss_fn(ddp(torch.tensor(X[step][mine])), torch.tensor(Y[step][mine])).backward()
    loss_fn(ref(torch.tensor(X[step])), torch.tensor(Y[step])).backward()
flat = ddp.reducer.buckets[0].flat
assert model.w1.grad._base is flat or model.w1.grad._base is flat._base
for name, p, q in zip(model.names, model.parameters(), ref.parameters()):
    np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=2e-6, atol=2e-7,
                               err_msg=name)

# ---- buffers follow rank 0 at each synchronised forward
model.running.add_(float(rank))
ddp(torch.tensor(X[0][mine])).sum().backward()
assert np.array_equal(model.running.numpy(), MLP(seed=5).running.numpy())

dist.destroy_process_group()
print(f"rank {rank}: OK", flush=True)
