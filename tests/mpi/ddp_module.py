"""Run under ``mpiexec -n N``: nn.parallel.DistributedDataParallel around an nn.Module:
PyTorch's module surface (``module``, forward, parameters, ``module.``-prefixed state_dict)
and training equal to one process on the whole batch. Prints OK."""

import numpy as np

import numbagrad as torch
import numbagrad.distributed as dist
from numbagrad import nn
from numbagrad.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi")
rank, size = dist.get_rank(), dist.get_world_size()


def make(seed):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))


model = make(seed=rank)
ddp = DDP(model)
ref = make(seed=0)
assert ddp.module is model
assert [id(p) for p in ddp.parameters()] == [id(p) for p in model.parameters()]
assert list(ddp.state_dict()) == ["module." + k for k in model.state_dict()]
for p, q in zip(model.parameters(), ref.parameters()):
    assert np.array_equal(p.detach().numpy(), q.detach().numpy())

rng = np.random.default_rng(0)
opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
def loss_fn(out, y):
    return ((out - y) ** 2).mean()


for step in range(3):
    x = rng.standard_normal((4 * size, 4)).astype(np.float32)
    y = rng.standard_normal((4 * size, 1)).astype(np.float32)
    mine = slice(4 * rank, 4 * rank + 4)
    opt.zero_grad()
    loss_fn(ddp(torch.tensor(x[mine])), torch.tensor(y[mine])).backward()
    opt.step()
    ref_opt.zero_grad()
    loss_fn(ref(torch.tensor(x)), torch.tensor(y)).backward()
    ref_opt.step()
for (name, p), q in zip(model.named_parameters(), ref.parameters()):
    np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=2e-6, atol=2e-7,
                               err_msg=name)
with ddp.no_sync():
    ddp(torch.ones(2, 4)).sum().backward()
dist.destroy_process_group()
print(f"rank {rank}: OK", flush=True)
