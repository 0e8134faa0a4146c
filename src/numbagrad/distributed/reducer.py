"""DistributedDataParallel's gradient reducer (PyTorch's ``Reducer``): the parameters in
buckets, each bucket's gradients averaged over the ranks by one non-blocking all-reduce that a
post-accumulate-grad hook starts during backward, as soon as the bucket's last gradient is in,
so that communication overlaps the rest of the backward pass; the pass's end waits for all."""

from __future__ import annotations

import dataclasses

import numpy as np

from .._tensor import Tensor
from ..autograd.engine import queue_callback
from ..autograd.grad_mode import no_grad
from ..autograd.graph import AccumulateGrad
from ..factory import zeros
from .c10d import ReduceOp, _pg, all_reduce, broadcast

MB = 1024 * 1024
DEFAULT_BUCKET_CAP_MB = 25
# the first bucket to fill (the last parameters') is small, so communication starts early
DEFAULT_FIRST_BUCKET_BYTES = 1 * MB

ERR_MARKED_TWICE = (
    "Expected to mark a variable ready only once. This error is caused by one of the following "
    "reasons: 1) Use of a module parameter outside the `forward` function, or 2) Reused "
    "parameters in multiple reentrant backward passes. Parameter at index {index} has been "
    "marked as ready twice."
)
ERR_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `numbagrad.nn.parallel.DistributedDataParallel`, and by \n"
    "making sure all `forward` function outputs participate in calculating loss. \n"
    "If you already have done the above, then the distributed data parallel module wasn't able "
    "to locate the output tensors in the return value of your module's `forward` function. "
    "Please include the loss function and the structure of the return value of `forward` of "
    "your module when reporting this issue (e.g. list, dict, iterable).\n"
    "Parameter indices which did not receive grad for rank {rank}: {indices}"
)


class _Bucket:
    """Parameters of one dtype and device whose gradients travel together in ``flat``."""

    def __init__(self, indices, params):
        self.indices = indices
        self.params = params
        first = params[0]
        self.flat = zeros(sum(p.numel() for p in params), dtype=first.dtype, device=first.device)
        self.views = []
        offset = 0
        for p in params:
            n = p.numel()
            self.views.append(self.flat[offset:offset + n].view(p.shape))
            offset += n
        self.pending = len(params)
        self.work = None


def bucket_assignment(params, bucket_bytes_cap: int, first_bucket_bytes_cap: int):
    """Bucket the parameters as PyTorch does: in reverse order (the order backward produces
    their gradients), one dtype and device per bucket, a bucket closed once it holds
    ``bucket_bytes_cap`` bytes (the first: ``first_bucket_bytes_cap``). Lists of indices."""
    open_ = {}  # (dtype, device) -> [indices, bytes, cap]
    done = []
    for i in reversed(range(len(params))):
        p = params[i]
        key = (p.dtype, str(p.device))
        b = open_.get(key)
        if b is None:
            b = open_[key] = [[], 0, first_bucket_bytes_cap if not done else bucket_bytes_cap]
        b[0].append(i)
        b[1] += p.numel() * p.element_size()
        if b[1] >= b[2]:
            done.append(b[0])
            del open_[key]
    done.extend(b[0] for b in open_.values())
    return done


def find_tensors(obj):
    """The tensors in a forward's output: nested in lists, tuples, dicts and dataclasses."""
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in find_tensors(o)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in find_tensors(o)]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return [t for f in dataclasses.fields(obj) for t in find_tensors(getattr(obj, f.name))]
    return []


def _reached_leaves(outputs) -> set:
    """ids of the leaves whose AccumulateGrad the graphs of ``outputs`` reach."""
    leaves = {id(t) for t in outputs if t.grad_fn is None and t.requires_grad}
    stack = [t.grad_fn for t in outputs if t.grad_fn is not None]
    seen = set()
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if isinstance(node, AccumulateGrad):
            leaves.add(id(node.variable))
        stack.extend(n for n, _ in node.next_functions if n is not None and n not in seen)
    return leaves


def broadcast_tensors(tensors, src: int = 0, group=None) -> None:
    """Overwrite ``tensors`` with rank ``src``'s values on every rank (all started, then all
    waited for)."""
    with no_grad():
        works = [broadcast(t.detach(), src, group=group, async_op=True) for t in tensors]
    for w in works:
        w.wait()


class Reducer:
    """Averages the gradients of ``params`` over the ranks during each backward pass that
    follows ``prepare_for_backward``; other backward passes (``no_sync``) only accumulate."""

    def __init__(self, params, bucket_bytes_cap: int = DEFAULT_BUCKET_CAP_MB * MB,
                 first_bucket_bytes_cap: int = DEFAULT_FIRST_BUCKET_BYTES,
                 find_unused_parameters: bool = False, gradient_as_bucket_view: bool = False,
                 process_group=None):
        self.params = list(params)
        self.process_group = process_group
        pg = _pg(process_group)
        self.rank, self.world_size = pg.rank(), pg.size()
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.buckets = []
        self._place = {}  # parameter index -> (bucket, position in it)
        for indices in bucket_assignment(self.params, bucket_bytes_cap, first_bucket_bytes_cap):
            b = _Bucket(indices, [self.params[i] for i in indices])
            for k, i in enumerate(indices):
                self._place[i] = (b, k)
            self.buckets.append(b)
        self._expecting = False  # a synchronised backward pass is to come
        self._queued = False  # this pass's end will run ``_finalize``
        self._next = 0  # the next bucket to launch (all ranks launch them in this order)
        self._marked = [False] * len(self.params)
        self._used = None
        self._handles = [p.register_post_accumulate_grad_hook(self._hook(i))
                         for i, p in enumerate(self.params)]

    def remove_hooks(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles = []

    # ------------------------------------------------------------ per iteration

    def prepare_for_forward(self) -> None:
        """Refuse to start an iteration while the last one's reduction is unfinished."""
        if self._expecting:
            indices = [i for i, m in enumerate(self._marked) if not m]
            raise RuntimeError(ERR_UNFINISHED.format(
                rank=self.rank, indices=" ".join(map(str, indices))))

    def prepare_for_backward(self, outputs=()) -> None:
        """The next backward pass is to be synchronised. With ``find_unused_parameters``, the
        parameters the graph of ``outputs`` does not reach are ready at once."""
        for b in self.buckets:
            b.pending = len(b.params)
            b.work = None
        self._marked = [False] * len(self.params)
        self._next = 0
        self._queued = False
        self._expecting = True
        if self.find_unused_parameters:
            reached = _reached_leaves(outputs)
            self._used = [id(p) in reached for p in self.params]
            for i, used in enumerate(self._used):
                if not used:
                    self._mark(i)

    def _hook(self, index: int):
        def ready(param):
            if not self._expecting:
                return  # (no_sync, or a backward pass with no forward through DDP)
            if self._marked[index]:
                raise RuntimeError(ERR_MARKED_TWICE.format(index=index))
            if not self._queued:
                queue_callback(self._finalize)
                self._queued = True
            if self._used is not None:
                self._used[index] = True
            self._mark(index)
            self._launch_ready()
            for b in self.buckets[:self._next]:  # (MPI progresses inside MPI calls)
                b.work.is_completed()
        return ready

    def _mark(self, index: int) -> None:
        self._marked[index] = True
        bucket, _ = self._place[index]
        bucket.pending -= 1

    def _launch_ready(self) -> None:
        """Start the all-reduce of each complete bucket, in bucket order: MPI needs every rank
        to start the same collectives in the same order."""
        while self._next < len(self.buckets) and self.buckets[self._next].pending == 0:
            b = self.buckets[self._next]
            self._next += 1
            with no_grad():
                for p, view in zip(b.params, b.views):
                    g = p._grad
                    if g is None:
                        view.zero_()
                    elif g is not view:
                        view.copy_(g)
                b.flat.div_(self.world_size)
            b.work = all_reduce(b.flat, ReduceOp.SUM, group=self.process_group, async_op=True)

    def _finalize(self) -> None:
        """At the end of the backward pass: wait for every bucket and put the averages in
        ``.grad``. A bucket left incomplete (a parameter got no gradient) is reported by the
        next forward, as in PyTorch."""
        self._queued = False
        self._launch_ready()
        if self._next < len(self.buckets):
            return
        for b in self.buckets:
            b.work.wait()
        used = None
        if self.find_unused_parameters:
            # a parameter unused on every rank keeps its .grad; one used anywhere gets the mean
            flags = Tensor._make(np.array(self._used, dtype=np.int32))
            all_reduce(flags, ReduceOp.MAX, group=self.process_group)
            used = flags.tolist()
        with no_grad():
            for b in self.buckets:
                for i, p, view in zip(b.indices, b.params, b.views):
                    if used is not None and not used[i]:
                        continue
                    if self.gradient_as_bucket_view or p._grad is None:
                        p.grad = view if self.gradient_as_bucket_view else view.clone()
                    elif p._grad is not view:
                        p._grad.copy_(view)
        self._expecting = False
