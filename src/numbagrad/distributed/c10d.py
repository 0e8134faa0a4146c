"""The default process group on MPI (mpi4py, imported on first use) and the collectives, which
read and write the tensors' own memory, blocking or asynchronous (``async_op=True``)."""

from __future__ import annotations

import ctypes
import enum
import importlib.util
import sys
import time

import numpy as np

from .. import backend
from .. import dtypes as D
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..backend.memory import before_write

ERR_NOT_INITIALIZED = (
    "Default process group has not been initialized, please make sure to call "
    "init_process_group."
)
ERR_TWICE = "trying to initialize the default process group twice!"
ERR_INSTALL = (
    "numbagrad.distributed runs on MPI through mpi4py, which could not be imported ({reason}). "
    "Install both with: pip install 'numbagrad[mpi]' (mpi4py, and MPICH's wheel), or install "
    "mpi4py against the cluster's own MPI"
)


def _mpi():
    """mpi4py's ``MPI`` module; importing it initialises MPI (once per process)."""
    try:
        from mpi4py import MPI
    except (ImportError, RuntimeError, OSError) as e:  # (no mpi4py, or no MPI library)
        raise ImportError(ERR_INSTALL.format(reason=e)) from e
    return MPI


def is_available() -> bool:
    """Whether mpi4py can be imported (without importing it, so without initialising MPI)."""
    return importlib.util.find_spec("mpi4py") is not None


def is_mpi_available() -> bool:
    return is_available()


def is_gloo_available() -> bool:
    return False


def is_nccl_available() -> bool:
    return False


# ---------------------------------------------------------------- reduction operators


class RedOpType(enum.IntEnum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8


class ReduceOp:
    """The reductions of ``all_reduce``, ``reduce`` and ``reduce_scatter`` (``ReduceOp.SUM``)."""

    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM


_MPI_OPS = {RedOpType.SUM: "SUM", RedOpType.AVG: "SUM", RedOpType.PRODUCT: "PROD",
            RedOpType.MIN: "MIN", RedOpType.MAX: "MAX", RedOpType.BAND: "BAND",
            RedOpType.BOR: "BOR", RedOpType.BXOR: "BXOR"}
# bool tensors: a sum or max is "any", a product or min is "all" (as PyTorch's backends)
_BOOL_OPS = {"SUM": "LOR", "MAX": "LOR", "BOR": "LOR", "PROD": "LAND", "MIN": "LAND",
             "BAND": "LAND", "BXOR": "LXOR"}


def _mpi_op(MPI, op, t: Tensor):
    """The MPI operator for ``op`` on ``t``'s dtype (AVG: a sum, divided afterwards)."""
    try:
        op = RedOpType(op)
    except ValueError:
        op = None
    if op is None or op not in _MPI_OPS:
        raise ValueError(f"numbagrad.distributed does not support ReduceOp {op!r} on MPI")
    kind = t.dtype
    if op in (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR) and kind.is_floating_point:
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype")
    if op is RedOpType.AVG and not kind.is_floating_point:
        # (PyTorch divides in place, which cannot write a float into an integer tensor)
        raise RuntimeError(
            f"result type Float can't be cast to the desired output type "
            f"{D.SCALAR_TYPE[kind.name]}")
    name = _MPI_OPS[op]
    if kind.name == "bool":
        name = _BOOL_OPS[name]
    return getattr(MPI, name)


# ---------------------------------------------------------------- the process group


class ProcessGroup:
    """A communicator: the world's (``group.WORLD``), the only one numbagrad makes."""

    def __init__(self, comm):
        self._comm = comm

    def rank(self) -> int:
        return self._comm.Get_rank()

    def size(self) -> int:
        return self._comm.Get_size()

    def name(self) -> str:
        return "mpi"

    def __repr__(self) -> str:
        return f"<numbagrad.distributed.ProcessGroup mpi rank={self.rank()} size={self.size()}>"


class group:
    """``group.WORLD``: the default process group (None until ``init_process_group``)."""

    WORLD: ProcessGroup | None = None


GroupMember = group


class _State:
    pg: ProcessGroup | None = None
    MPI = None
    previous_excepthook = None
    cuda_aware: bool | None = None


def _abort_on_exception(exc_type, exc, tb):
    """An exception no code caught ends this rank: print it, then end every rank of the job
    (the others would otherwise wait in their next collective for ever)."""
    (_State.previous_excepthook or sys.__excepthook__)(exc_type, exc, tb)
    sys.stderr.flush()
    sys.stdout.flush()
    # (a moment for mpiexec to forward what was printed: Abort kills the job at once, and on
    # a busy machine the traceback was sometimes lost with it)
    time.sleep(0.5)
    _State.MPI.COMM_WORLD.Abort(1)


def init_process_group(backend: str | None = None, init_method: str | None = None, timeout=None,
                       world_size: int = -1, rank: int = -1, store=None, group_name: str = "",
                       pg_options=None, device_id=None) -> None:
    """Join the job's processes, started by ``mpiexec -n N``: rank and world size are MPI's.

    ``init_method``, ``timeout``, ``group_name``, ``pg_options`` and ``device_id`` are taken and
    not used (MPI's launcher does the rendezvous); ``world_size`` and ``rank``, when given, must
    be MPI's. From here on an uncaught exception on any rank aborts the whole job.
    """
    if _State.pg is not None:
        raise ValueError(ERR_TWICE)
    if backend is not None and str(backend).lower() != "mpi":
        raise ValueError(
            f"numbagrad.distributed has one backend, 'mpi', not {backend!r}: pass "
            "backend='mpi' (or leave it out) and start the processes with mpiexec -n N")
    if store is not None:
        raise ValueError("numbagrad.distributed takes no store: MPI's launcher connects "
                         "the processes")
    MPI = _mpi()
    comm = MPI.COMM_WORLD
    for name, given, actual in (("world_size", world_size, comm.Get_size()),
                                ("rank", rank, comm.Get_rank())):
        if given is not None and given != -1 and given != actual:
            raise ValueError(
                f"{name}={given} does not match MPI's {name} {actual}: with backend 'mpi' the "
                f"process count and ranks come from mpiexec (leave {name} out)")
    _State.MPI = MPI
    _State.pg = group.WORLD = ProcessGroup(comm)
    _State.previous_excepthook = sys.excepthook
    sys.excepthook = _abort_on_exception


def destroy_process_group(group=None) -> None:
    """Leave the process group (MPI itself stays initialised: it can be joined again)."""
    if _State.pg is None:
        raise AssertionError("Process group cannot be None")
    _pg(group)
    if sys.excepthook is _abort_on_exception:
        sys.excepthook = _State.previous_excepthook
    _State.pg = GroupMember.WORLD = None
    _State.previous_excepthook = None


def is_initialized() -> bool:
    return _State.pg is not None


def _pg(group=None) -> ProcessGroup:
    pg = _State.pg
    if pg is None:
        raise ValueError(ERR_NOT_INITIALIZED)
    if group is not None and group is not pg:
        raise ValueError("numbagrad.distributed has only the default process group "
                         "(group=None or group.WORLD)")
    return pg


def get_rank(group=None) -> int:
    return _pg(group).rank()


def get_world_size(group=None) -> int:
    return _pg(group).size()


def get_backend(group=None) -> str:
    _pg(group)
    return "mpi"


# ---------------------------------------------------------------- tensor memory for MPI


def _check_tensor(t, name: str = "tensor") -> None:
    if not isinstance(t, Tensor):
        raise TypeError(
            f"Invalid function argument. Expected parameter `{name}` of type numbagrad.Tensor\n"
            f"             but got {type(t)} instead.")


def _cuda_aware() -> bool:
    """Whether the MPI library reads and writes device memory itself (MPICH and Open MPI
    answer ``MPIX_Query_cuda_support``); asked once."""
    if _State.cuda_aware is None:
        aware = False
        try:
            with open("/proc/self/maps") as maps:  # (the library mpi4py loaded)
                libs = {line.split()[-1] for line in maps if "libmpi" in line.split()[-1]}
        except OSError:
            libs = set()
        for path in sorted(libs):
            query = getattr(ctypes.CDLL(path), "MPIX_Query_cuda_support", None)
            if query is not None:
                aware = bool(query())
                break
        _State.cuda_aware = aware
    return _State.cuda_aware


def _memory(t: Tensor, written: bool):
    """``t``'s memory as MPI takes it, and what to run once MPI is done with it (None when it
    is the tensor's own memory): a contiguous CPU tensor is passed as is; any other is staged
    through a contiguous copy, written back when ``written``. A CUDA tensor is passed as
    device memory when the MPI library is CUDA-aware, else staged through host memory."""
    a = t._data
    if type(a) is np.ndarray:
        if written:
            before_write(a)  # (pending lazy computations read the old values)
        if a.flags.c_contiguous:
            return a, None
        staged = np.ascontiguousarray(a)
        return staged, (lambda: np.copyto(a, staged)) if written else None
    gpu = backend.of(a)
    if _cuda_aware():
        staged = gpu.ascontiguousarray(a)
        gpu.synchronize()  # (MPI reads device memory outside the kernels' stream)
        if staged is a or not written:
            return staged, None
        return staged, lambda: gpu.copyto(a, staged)
    staged = a.get()
    return staged, (lambda: gpu.copyto(a, staged)) if written else None


class Work:
    """An asynchronous collective: ``wait()`` blocks until it is done and its results are in
    the tensors; ``is_completed()`` asks without blocking."""

    def __init__(self, request, finish=None, keep=()):
        self._request = request
        self._finish = finish
        self._keep = keep  # (buffers MPI uses until the request completes)
        self._done = False

    def _complete(self) -> None:
        self._done = True
        self._keep = None
        if self._finish is not None:
            finish, self._finish = self._finish, None
            finish()

    def wait(self, timeout=None) -> bool:
        if not self._done:
            self._request.Wait()
            self._complete()
        return True

    def is_completed(self) -> bool:
        if not self._done and self._request.Test():
            self._complete()
        return self._done

    def is_success(self) -> bool:
        return self._done

    def exception(self):
        return None

    def __repr__(self) -> str:
        return f"<numbagrad.distributed.Work completed={self._done}>"


def _run(start, finish, async_op: bool, keep=()):
    """Start the non-blocking collective ``start()`` and either return its Work or wait."""
    work = Work(start(), _chain(finish), keep)
    if async_op:
        return work
    work.wait()
    return None


def _chain(steps):
    steps = [s for s in steps if s is not None]
    if not steps:
        return None

    def finish():
        for step in steps:
            step()
    return finish


def _average(t: Tensor, n: int):
    """The step that turns a sum over ``n`` ranks into their mean, in place."""
    def divide():
        with no_grad():
            t.detach().div_(n)
    return divide


def _check_rank(rank: int, size: int, what: str) -> int:
    if rank is None:
        return 0
    if not 0 <= rank < size:
        raise RuntimeError(f"invalid {what} rank: {rank} (the world has ranks 0 to {size - 1})")
    return rank


def _check_like(tensors, like: Tensor, what: str, count: int) -> None:
    if len(tensors) != count:
        raise RuntimeError(f"{what}: expected a list of {count} tensors (one per rank), "
                           f"got {len(tensors)}")
    for i, t in enumerate(tensors):
        _check_tensor(t, what)
        if t.shape != like.shape or t.dtype is not like.dtype:
            raise RuntimeError(
                f"{what}: tensor {i} has shape {list(t.shape)} and dtype {t.dtype}, expected "
                f"shape {list(like.shape)} and dtype {like.dtype}")


def _copy_out(blocks: np.ndarray, tensors):
    """The step that copies ``blocks[k]`` into ``tensors[k]`` (separate tensors: MPI writes
    one array)."""
    def copy():
        for block, t in zip(blocks, tensors):
            _write(t, block)
    return copy


def _write(t: Tensor, values: np.ndarray) -> None:
    """Write host array ``values`` into tensor ``t``'s memory."""
    a = t._data
    if type(a) is np.ndarray:
        before_write(a)
        np.copyto(a, values)
    else:
        backend.of(a).copyto(a, values)


def _host_input(t: Tensor) -> np.ndarray:
    """``t``'s values in contiguous host memory (its own array for a contiguous CPU tensor):
    what a collective sends from a list of separate tensors."""
    return np.ascontiguousarray(t._host())


# ---------------------------------------------------------------- collectives


def all_reduce(tensor: Tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce ``tensor`` over all ranks with ``op``; every rank gets the result in place."""
    _check_tensor(tensor)
    pg = _pg(group)
    MPI = _State.MPI
    mop = _mpi_op(MPI, op, tensor)
    buf, back = _memory(tensor, True)
    avg = _average(tensor, pg.size()) if op == ReduceOp.AVG else None
    return _run(lambda: pg._comm.Iallreduce(MPI.IN_PLACE, buf, mop), (back, avg), async_op, buf)


def broadcast(tensor: Tensor, src: int | None = None, group=None, async_op: bool = False,
              group_src: int | None = None):
    """Copy rank ``src``'s ``tensor`` into ``tensor`` on every other rank."""
    _check_tensor(tensor)
    pg = _pg(group)
    src = _check_rank(src if src is not None else group_src, pg.size(), "root")
    buf, back = _memory(tensor, pg.rank() != src)
    return _run(lambda: pg._comm.Ibcast(buf, root=src), (back,), async_op, buf)


def all_gather(tensor_list, tensor: Tensor, group=None, async_op: bool = False):
    """Every rank's ``tensor`` into ``tensor_list[rank]``, on every rank."""
    _check_tensor(tensor)
    pg = _pg(group)
    _check_like(tensor_list, tensor, "all_gather output", pg.size())
    send = _host_input(tensor)
    recv = np.empty((pg.size(), *tensor.shape), tensor.dtype.np)
    return _run(lambda: pg._comm.Iallgather(send, recv), (_copy_out(recv, tensor_list),),
                async_op, (send, recv))


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group=None,
                           async_op: bool = False):
    """Every rank's ``input_tensor``, concatenated in rank order (along dim 0, or stacked),
    in ``output_tensor``."""
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    pg = _pg(group)
    if (output_tensor.numel() != input_tensor.numel() * pg.size()
            or output_tensor.dtype is not input_tensor.dtype):
        raise RuntimeError(
            f"all_gather_into_tensor: output tensor must have {pg.size()} times as many "
            f"elements as the input ({input_tensor.numel()}) and its dtype "
            f"({input_tensor.dtype}); got {output_tensor.numel()} of {output_tensor.dtype}")
    send, _ = _memory(input_tensor, False)
    recv, back = _memory(output_tensor, True)
    return _run(lambda: pg._comm.Iallgather(send, recv), (back,), async_op, (send, recv))


def reduce_scatter_tensor(output: Tensor, input: Tensor, op=ReduceOp.SUM, group=None,
                          async_op: bool = False):
    """Reduce ``input`` over all ranks; rank r gets block r of the result in ``output``."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    pg = _pg(group)
    if input.numel() != output.numel() * pg.size() or output.dtype is not input.dtype:
        raise RuntimeError(
            f"reduce_scatter_tensor: input tensor must have {pg.size()} times as many "
            f"elements as the output ({output.numel()}) and its dtype ({output.dtype}); got "
            f"{input.numel()} of {input.dtype}")
    MPI = _State.MPI
    mop = _mpi_op(MPI, op, output)
    send, _ = _memory(input, False)
    recv, back = _memory(output, True)
    avg = _average(output, pg.size()) if op == ReduceOp.AVG else None
    return _run(lambda: pg._comm.Ireduce_scatter_block(send, recv, mop), (back, avg), async_op,
                (send, recv))


def reduce_scatter(output: Tensor, input_list, op=ReduceOp.SUM, group=None,
                   async_op: bool = False):
    """Reduce ``input_list`` over all ranks; rank r gets the reduced ``input_list[r]``."""
    _check_tensor(output, "output")
    pg = _pg(group)
    _check_like(input_list, output, "reduce_scatter input", pg.size())
    MPI = _State.MPI
    mop = _mpi_op(MPI, op, output)
    send, _ = _memory(_stack(input_list), False)
    recv, back = _memory(output, True)
    avg = _average(output, pg.size()) if op == ReduceOp.AVG else None
    return _run(lambda: pg._comm.Ireduce_scatter_block(send, recv, mop), (back, avg), async_op,
                (send, recv))


def _stack(tensors) -> Tensor:
    """One contiguous tensor holding ``tensors`` one after another (on their device)."""
    a = tensors[0]._data
    if type(a) is np.ndarray:
        return Tensor._make(np.stack([t._data for t in tensors]))
    gpu = backend.of(a)
    out = gpu.empty((len(tensors), *a.shape), a.dtype)
    for k, t in enumerate(tensors):
        gpu.copyto(out[k], t._data)
    return Tensor._make(out)


def gather(tensor: Tensor, gather_list=None, dst: int | None = None, group=None,
           async_op: bool = False, group_dst: int | None = None):
    """Every rank's ``tensor`` into ``gather_list[rank]`` on rank ``dst``."""
    _check_tensor(tensor)
    pg = _pg(group)
    dst = _check_rank(dst if dst is not None else group_dst, pg.size(), "root")
    if pg.rank() == dst:
        if not gather_list:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        _check_like(gather_list, tensor, "gather output", pg.size())
        recv = np.empty((pg.size(), *tensor.shape), tensor.dtype.np)
        steps = (_copy_out(recv, gather_list),)
    else:
        if gather_list:
            raise ValueError(
                "Argument ``gather_list`` must NOT be specified on non-destination ranks.")
        recv, steps = None, ()
    send = _host_input(tensor)
    return _run(lambda: pg._comm.Igather(send, recv, root=dst), steps, async_op, (send, recv))


def scatter(tensor: Tensor, scatter_list=None, src: int | None = None, group=None,
            async_op: bool = False, group_src: int | None = None):
    """``scatter_list[rank]`` of rank ``src`` into ``tensor`` on every rank."""
    _check_tensor(tensor)
    pg = _pg(group)
    src = _check_rank(src if src is not None else group_src, pg.size(), "root")
    if pg.rank() == src:
        if not scatter_list:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        _check_like(scatter_list, tensor, "scatter input", pg.size())
        send = np.stack([t._host() for t in scatter_list])
    else:
        if scatter_list:
            raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
        send = None
    if tensor.is_cuda:  # (the sends are host memory: so is the receive)
        recv = np.empty(tuple(tensor.shape), tensor.dtype.np)
        back = _copy_out(recv[None], [tensor])
    else:
        recv, back = _memory(tensor, True)
    return _run(lambda: pg._comm.Iscatter(send, recv, root=src), (back,), async_op, (send, recv))


def reduce(tensor: Tensor, dst: int | None = None, op=ReduceOp.SUM, group=None,
           async_op: bool = False, group_dst: int | None = None):
    """Reduce ``tensor`` over all ranks with ``op`` into ``tensor`` on rank ``dst`` (the other
    ranks' tensors are left as they were)."""
    _check_tensor(tensor)
    pg = _pg(group)
    dst = _check_rank(dst if dst is not None else group_dst, pg.size(), "root")
    MPI = _State.MPI
    mop = _mpi_op(MPI, op, tensor)
    root = pg.rank() == dst
    buf, back = _memory(tensor, root)
    comm = pg._comm
    if root:
        avg = _average(tensor, pg.size()) if op == ReduceOp.AVG else None
        return _run(lambda: comm.Ireduce(MPI.IN_PLACE, buf, mop, root=dst), (back, avg),
                    async_op, buf)
    return _run(lambda: comm.Ireduce(buf, None, mop, root=dst), (), async_op, buf)


def barrier(group=None, async_op: bool = False, device_ids=None, timeout=None):
    """Wait until every rank has reached its barrier."""
    pg = _pg(group)
    return _run(pg._comm.Ibarrier, (), async_op)
