"""Data-parallel training on MPI: every rank holds the model, reads its share of each global
batch (``DistributedSampler``), and ``DistributedDataParallel`` averages the gradients across
ranks during ``backward()``; the optimizer steps then agree on every rank.

    mpiexec -n 2 python examples/ddp.py [--epochs 2] [--global-batch 64]
    python examples/ddp.py                 # one rank: the same training on the whole batch

Give each rank one thread per core it has (``OMP_NUM_THREADS=1 NUMBA_NUM_THREADS=1`` on a
machine with as many cores as ranks): ranks that each start a thread per core of the machine
fight over the cores.

The final loss is the same (to float32 rounding) at any number of ranks dividing the global
batch: each rank's batch is a slice of the same global batch, and the averaged gradient is the
global batch's. Needs the ``mpi`` extra (``pip install 'numbagrad[mpi]'``: mpi4py and MPICH).
"""

import argparse
import time

import digits  # (examples/digits.py: the generated images)

import numbagrad as torch

nn, dist = torch.nn, torch.distributed
DataLoader, DistributedSampler = torch.utils.data.DataLoader, torch.utils.data.DistributedSampler

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--global-batch", type=int, default=64)
parser.add_argument("--samples", type=int, default=3000)
args = parser.parse_args()


def main() -> None:
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.global_batch % world:
        raise SystemExit(f"--global-batch {args.global_batch} must divide among {world} ranks")
    images, labels = digits.images(args.samples, seed=1)
    data = torch.utils.data.TensorDataset(torch.from_numpy(images), torch.from_numpy(labels))
    sampler = DistributedSampler(data, shuffle=True, seed=0, drop_last=True)
    loader = DataLoader(data, batch_size=args.global_batch // world, sampler=sampler)
    torch.manual_seed(0)  # (rank 0's initial weights are broadcast anyway)
    model = nn.parallel.DistributedDataParallel(nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(16 * 4 * 4, 10)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    start = time.perf_counter()
    steps = 0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = loss_fn(model(x), y)
            opt.zero_grad()
            loss.backward()  # (the gradients' all-reduce runs during this)
            opt.step()
            steps += 1
        # the global batch's loss: the mean of the ranks' (equal-sized) batch losses
        total = loss.detach().clone()
        dist.all_reduce(total, op=dist.ReduceOp.AVG)
        if rank == 0:
            print(f"epoch {epoch + 1}: loss of the last global batch {total.item():.6f}")
    seconds = time.perf_counter() - start
    if rank == 0:
        print(f"{world} rank(s): {seconds / steps * 1e3:.1f} ms per step of a global batch of "
              f"{args.global_batch}; final loss {total.item():.6f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
