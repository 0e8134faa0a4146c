"""numbagrad.distributed in one process (a world of one rank), the autograd hooks DDP is
built on, DistributedSampler; and the multi-rank scripts of tests/mpi/, launched with
``mpiexec -n 2`` (marker ``mpi``; skipped, saying why, without mpi4py and mpiexec)."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import numbagrad
import numbagrad.distributed as dist
from numbagrad.distributed.reducer import bucket_assignment
from numbagrad.utils.data.distributed import DistributedSampler

torch = pytest.importorskip("torch")

HAS_MPI4PY = importlib.util.find_spec("mpi4py") is not None


@pytest.fixture
def world():
    """The process group of this process alone."""
    if not HAS_MPI4PY:
        pytest.skip("needs mpi4py: pip install 'numbagrad[mpi]'")
    dist.init_process_group("mpi")
    yield
    dist.destroy_process_group()


def _raises(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the oracle's type and text are what is compared)
        return type(e), str(e)
    raise AssertionError("no error")


# ---------------------------------------------------------------- autograd: hooks, callbacks


def _post_hook_events(lib):
    p = lib.tensor([1.0, 2.0], requires_grad=True)
    events = []
    handle = p.register_post_accumulate_grad_hook(
        lambda t: events.append(("post", t is p, t.grad.tolist())))
    p.register_hook(lambda g: events.append(("pre", g.tolist())))
    (p * 3).sum().backward()
    (p * p).sum().backward()  # the hook sees the accumulated .grad
    lib.autograd.grad((p * 3).sum(), p)  # no accumulation: no post hook
    (p * 2).sum().backward(inputs=[p])
    handle.remove()
    (p * 2).sum().backward()
    return events


def test_post_accumulate_grad_hook_runs_as_in_torch():
    assert _post_hook_events(numbagrad) == _post_hook_events(torch)


@pytest.mark.parametrize("case", ["non-leaf", "no grad", "returns a value"])
def test_post_accumulate_grad_hook_errors_as_in_torch(case):
    def run(lib):
        p = lib.ones(2, requires_grad=True)
        if case == "non-leaf":
            return _raises(lambda: (p * 2).register_post_accumulate_grad_hook(print))
        if case == "no grad":
            return _raises(lambda: lib.ones(2).register_post_accumulate_grad_hook(print))
        p.register_post_accumulate_grad_hook(lambda t: t * 2)
        return _raises(lambda: (p * 2).sum().backward())
    assert run(numbagrad) == run(torch)


def _callback_events(lib):
    a = lib.tensor([1.0], requires_grad=True)
    b = lib.tensor([2.0], requires_grad=True)
    events = []
    engine = lib.autograd.Variable._execution_engine

    def at_end():
        events.append(("end", a.grad.item(), b.grad.item()))
        engine.queue_callback(lambda: events.append(("queued by a callback",)))

    def first(t):
        events.append(("grad", t.item()))
        if len(events) == 1:
            engine.queue_callback(at_end)
    a.register_post_accumulate_grad_hook(first)
    b.register_post_accumulate_grad_hook(first)
    (a * b * 5).sum().backward()
    return events


def test_queue_callback_runs_when_the_pass_has_run_its_last_node():
    # (which leaf is accumulated first is the engines' choice: they differ)
    events, theirs = _callback_events(numbagrad), _callback_events(torch)
    assert sorted(events[:2]) == sorted(theirs[:2]) and events[2:] == theirs[2:]
    assert events[2:] == [("end", 10.0, 5.0), ("queued by a callback",)]


def test_queue_callback_outside_backward_errors_as_in_torch():
    def run(lib):
        return _raises(lambda: lib.autograd.Variable._execution_engine.queue_callback(print))
    assert run(numbagrad) == run(torch)


# ---------------------------------------------------------------- the process group


def test_import_numbagrad_does_not_import_mpi4py():
    code = "import sys, numbagrad; assert 'mpi4py' not in sys.modules; print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=_env(), timeout=120)
    assert out.stdout.strip() == "ok", out.stderr


def test_without_mpi4py_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    with pytest.raises(ImportError, match=r"pip install 'numbagrad\[mpi\]'"):
        dist.init_process_group("mpi")
    assert not dist.is_initialized()


def test_before_init_errors_as_in_torch():
    assert not dist.is_initialized()
    for name in ("get_rank", "get_world_size", "barrier"):
        assert _raises(getattr(dist, name)) == _raises(getattr(torch.distributed, name))
    assert (_raises(lambda: dist.all_reduce(numbagrad.ones(2)))
            == _raises(lambda: torch.distributed.all_reduce(torch.ones(2))))
    assert _raises(dist.destroy_process_group) == _raises(torch.distributed.destroy_process_group)


def test_init_takes_rank_and_size_from_mpi(world):
    assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (0, 1, "mpi")
    assert dist.is_initialized() and dist.group.WORLD.size() == 1
    assert sys.excepthook is dist.c10d._abort_on_exception
    assert _raises(lambda: dist.init_process_group("mpi")) == (
        ValueError, "trying to initialize the default process group twice!")


def test_init_accepts_torch_keywords_only_when_they_agree_with_mpi():
    if not HAS_MPI4PY:
        pytest.skip("needs mpi4py: pip install 'numbagrad[mpi]'")
    hook = sys.excepthook
    for bad, msg in [({"backend": "nccl"}, "has one backend, 'mpi', not 'nccl'"),
                     ({"world_size": 2}, "world_size=2 does not match MPI's world_size 1"),
                     ({"rank": 1}, "rank=1 does not match MPI's rank 0")]:
        with pytest.raises(ValueError, match=msg):
            dist.init_process_group(**{"backend": "mpi", **bad})
        assert not dist.is_initialized() and sys.excepthook is hook
    dist.init_process_group(backend="MPI", init_method="env://", world_size=1, rank=0)
    dist.destroy_process_group()
    assert sys.excepthook is hook


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_collectives_of_one_rank_work_in_place(world, dtype):
    dt = getattr(numbagrad, dtype)
    for op in (dist.ReduceOp.SUM, dist.ReduceOp.AVG, dist.ReduceOp.PRODUCT, dist.ReduceOp.MAX,
               dist.ReduceOp.MIN):
        if op == dist.ReduceOp.AVG and dtype == "int64":
            continue
        t = numbagrad.arange(6, dtype=dt).reshape(2, 3)
        array = t._data
        assert dist.all_reduce(t, op=op) is None
        assert t._data is array and t.tolist() == [[0, 1, 2], [3, 4, 5]]
        work = dist.all_reduce(t.t(), op=op, async_op=True)  # (non-contiguous: staged)
        assert work.wait() is True and work.is_completed()
        assert t.tolist() == [[0, 1, 2], [3, 4, 5]]
    out = numbagrad.zeros(2, 3, dtype=dt)
    dist.all_gather_into_tensor(out, t)
    assert out.tolist() == t.tolist()
    outs = [numbagrad.zeros(2, 3, dtype=dt)]
    dist.all_gather(outs, t, async_op=True).wait()
    assert outs[0].tolist() == t.tolist()


@pytest.mark.parametrize("op, dtype", [("AVG", "int64"), ("BAND", "float32")])
def test_reduce_op_dtype_errors_as_in_torch(world, op, dtype):
    ours = _raises(lambda: dist.all_reduce(numbagrad.ones(2, dtype=getattr(numbagrad, dtype)),
                                           op=getattr(dist.ReduceOp, op)))
    torch.distributed.init_process_group("gloo", init_method="tcp://127.0.0.1:29517", rank=0,
                                         world_size=1)
    try:
        theirs = _raises(lambda: torch.distributed.all_reduce(
            torch.ones(2, dtype=getattr(torch, dtype)), op=getattr(torch.distributed.ReduceOp,
                                                                   op)))
    finally:
        torch.distributed.destroy_process_group()
    assert ours == theirs


def test_reduce_op_matches_torch():
    for name in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM"):
        ours, theirs = getattr(dist.ReduceOp, name), getattr(torch.distributed.ReduceOp, name)
        assert int(ours) == int(theirs) and repr(ours) == repr(theirs)


@pytest.mark.cuda
def test_cuda_tensors_are_staged_through_host_memory(world):
    # (the simulator's device memory is no MPI library's: the staging copy is the path taken)
    t = numbagrad.arange(6.0, device="cuda").reshape(2, 3)
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    dist.broadcast(t.t(), src=0)
    assert t.device.type == "cuda" and t.tolist() == [[0, 1, 2], [3, 4, 5]]


# ---------------------------------------------------------------- buckets, sampler


def test_buckets_hold_parameters_in_reverse_order_by_dtype_and_size():
    ps = [numbagrad.zeros(256), numbagrad.zeros(256), numbagrad.zeros(8, dtype=numbagrad.float64),
          numbagrad.zeros(256), numbagrad.zeros(100)]
    # 1 KiB a float32 parameter of 256: the first bucket closes at 1000 bytes, the others at 2000
    assert bucket_assignment(ps, 2000, 1000) == [[4, 3], [1, 0], [2]]
    assert bucket_assignment(ps, 10**9, 10**9) == [[4, 3, 1, 0], [2]]


@pytest.mark.parametrize("n, replicas, drop_last", [(10, 3, False), (10, 3, True), (2, 5, False),
                                                    (12, 4, False), (11, 4, True)])
def test_distributed_sampler_shards_as_torch(n, replicas, drop_last):
    from torch.utils.data.distributed import DistributedSampler as TorchSampler

    shards = []
    for rank in range(replicas):
        ours = DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = TorchSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
        shuffled = DistributedSampler(range(n), replicas, rank, seed=3, drop_last=drop_last)
        shards.append(list(shuffled))
        assert len(shards[-1]) == len(theirs)
    # the shuffled shards cover the dataset (padding repeats indices, drop_last drops some)
    seen = [i for s in shards for i in s]
    if drop_last:
        assert len(set(seen)) == len(seen) == n - n % replicas
    else:
        assert set(seen) == set(range(n))


def test_distributed_sampler_epochs_are_deterministic():
    def order(seed, epoch):
        s = DistributedSampler(range(50), 2, 1, seed=seed)
        s.set_epoch(epoch)
        return list(s)
    assert order(0, 1) == order(0, 1)
    assert order(0, 1) != order(0, 2) and order(0, 1) != order(1, 1)
    other = DistributedSampler(range(50), 2, 0, seed=0)
    other.set_epoch(1)
    assert sorted(order(0, 1) + list(other)) == list(range(50))  # the ranks' halves


def test_distributed_sampler_errors_as_torch(world):
    from torch.utils.data.distributed import DistributedSampler as TorchSampler

    assert (_raises(lambda: DistributedSampler(range(4), 2, 2))
            == _raises(lambda: TorchSampler(range(4), 2, 2)))
    s = DistributedSampler(range(5))
    assert (s.num_replicas, s.rank, len(s)) == (1, 0, 5)


# ---------------------------------------------------------------- several ranks: mpiexec

MPI_DIR = Path(__file__).parent / "mpi"
MPIEXEC = (shutil.which("mpiexec", path=str(Path(sys.executable).parent))
           or shutil.which("mpiexec"))
needs_mpiexec = pytest.mark.skipif(
    not HAS_MPI4PY or MPIEXEC is None,
    reason="needs mpi4py and mpiexec: pip install 'numbagrad[mpi]'")


def _env():
    src = str(Path(numbagrad.__file__).parents[1])  # (the numbagrad this test imported)
    path = os.environ.get("PYTHONPATH")
    return dict(os.environ, PYTHONPATH=src + (os.pathsep + path if path else ""),
                NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1")


def _mpiexec(script, n: int = 2, timeout: float = 300, args=()):
    """Run tests/mpi/``script`` (or the path ``script``) on ``n`` ranks; (exit status,
    stdout, stderr). The whole process group is killed if it runs past ``timeout``."""
    proc = subprocess.Popen([MPIEXEC, "-n", str(n), sys.executable, str(MPI_DIR / script),
                             *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env(), start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return proc.returncode, out, err


@pytest.mark.mpi
@needs_mpiexec
@pytest.mark.parametrize("script", ["collectives.py", "ddp_core.py", "ddp_module.py"])
def test_on_two_ranks(script):
    rc, out, err = _mpiexec(script)
    assert rc == 0, out + err
    # (the ranks' lines may arrive interleaved)
    assert sorted(re.findall(r"rank (\d+): OK", out)) == ["0", "1"], out + err


@pytest.mark.mpi
@needs_mpiexec
def test_ddp_example_loss_at_two_ranks_equals_one_rank():
    example = Path(__file__).parents[1] / "examples" / "ddp.py"
    losses = []
    for n in (1, 2):
        rc, out, err = _mpiexec(example, n, args=("--epochs", "1", "--samples", "640"))
        assert rc == 0, out + err
        losses.append(float(re.search(r"final loss ([0-9.]+)", out).group(1)))
    assert losses[0] == pytest.approx(losses[1], rel=1e-5, abs=1e-6)


@pytest.mark.mpi
@needs_mpiexec
def test_a_failing_rank_ends_the_job():
    rc, out, err = _mpiexec("failing_rank.py", timeout=120)
    assert rc != 0
    assert "ValueError: rank 1 fails on purpose" in err
    assert "never joined" not in out
