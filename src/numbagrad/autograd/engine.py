"""The backward pass: run the reached nodes newest-first. No recursion, no counting pass.

Every edge leads from a node to an older one (a node's inputs exist before it, and so do
their nodes), so when the newest node the pass has reached is taken, every node that could
still send it a gradient is newer and has run: it is ready. That is the order PyTorch's ready
queue gives (the newest ready node first) without counting each node's dependencies first.
The counts are made only when a fused region needs them (``node.run_region``).
"""

from __future__ import annotations

import heapq
import itertools

from .._tensor import Tensor
from .accumulate import accumulate_into_grad
from .anomaly_mode import is_anomaly_enabled, run_checked
from .grad_mode import _state as _grad_state
from .grad_mode import backward_fusion, backward_passes
from .graph import AccumulateGrad, _wrap, edge_of
from .graph import running_passes as _running

ERR_NO_GRAD = "element {i} of tensors does not require grad and does not have a grad_fn"
ERR_UNUSED = (
    "The differentiated Tensor at index {k} appears to not have been used in the graph. "
    "Set allow_unused=True if this is the desired behavior."
)


def _root_edge(t, i):
    edge = edge_of(t)
    if edge[0] is None:
        raise RuntimeError(ERR_NO_GRAD.format(i=i))
    return edge


def _collect(roots):
    """Dependency counts of every node reachable from ``roots`` (iterative DFS), and the nodes
    in the order visited. A node other than a root is visited when it gets its first count.
    The counts are those of the edges from the nodes visited, roots included."""
    deps: dict = {}
    order = []
    stack = []
    for node in roots:
        if node not in order:
            order.append(node)
            stack.append(node)
    rooted = set(order)
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is not None:
                n = deps.get(nxt)
                if n is None:
                    deps[nxt] = 1
                    if nxt not in rooted:
                        order.append(nxt)
                        stack.append(nxt)
                else:
                    deps[nxt] = n + 1
    return deps, order


def _needed(order, targets):
    """Nodes from which some target node can be reached (only those need to run)."""
    needed = set()
    # ``order`` is a DFS pre-order; sweeping it backwards until nothing changes is enough
    # for a DAG visited this way in practice, but iterate to a fixed point to be safe.
    changed = True
    while changed:
        changed = False
        for node in reversed(order):
            if node in needed:
                continue
            if node in targets or any(n is not None and n in needed for n, _ in node.next_functions):
                needed.add(node)
                changed = True
    return needed


class _Mode:
    """The backward pass's modes: grad mode on only with ``create_graph`` (the no_grad or
    enable_grad block, written out), and deferring paused (``grad_mode.backward_passes``): the
    pass's own ops run at once (ops/lazy.py)."""

    __slots__ = ("on", "prev")

    def __init__(self, on):
        self.on = on

    def __enter__(self):
        self.prev = _grad_state.enabled
        _grad_state.enabled = bool(self.on)
        backward_passes.running += 1

    def __exit__(self, *exc):
        _grad_state.enabled = self.prev
        backward_passes.running -= 1


ERR_ORDER = (
    "autograd engine: the node {nxt} is not older than {node}, which feeds it (an edge must "
    "lead to a node made before it)"
)


def _push(heap, node):
    """Queue ``node``: the newest queued node is taken first."""
    heapq.heappush(heap, (-node._sequence_nr, id(node), node))


def _deliver(buf, nr, grad):
    """Add ``grad`` into slot ``nr`` of a node's gradient buffer."""
    cur = buf[nr]
    buf[nr] = grad if cur is None else cur + grad


ERR_CALLBACK = "Final callbacks can only be installed during backward pass."
ERR_LEAF_IN_GRAD = (
    "A leaf node was passed to _will_engine_execute_node but we are currently running "
    "autograd.grad(). This is currently not supported."
)
_pass_ids = itertools.count()


def queue_callback(callback) -> None:
    """Run ``callback()`` when the running backward pass has run its last node (PyTorch's
    ``Variable._execution_engine.queue_callback``): DistributedDataParallel waits there for
    the all-reduces it started during the pass."""
    passes = getattr(_running, "passes", None)
    if not passes:
        raise RuntimeError(ERR_CALLBACK)
    passes[-1].callbacks.append(callback)


def run_backward(
    outputs,
    grad_outputs,
    retain_graph: bool,
    create_graph: bool,
    inputs=None,
    accumulate: bool = True,
    allow_unused: bool = False,
):
    """Backpropagate ``grad_outputs`` from ``outputs``.

    With ``accumulate`` the leaves' ``.grad`` are updated (``Tensor.backward``); otherwise the
    gradients of ``inputs`` are returned (``autograd.grad``).
    """
    roots = [_root_edge(t, i) for i, t in enumerate(outputs)]
    p = _Pass(roots, inputs, accumulate, retain_graph, create_graph)
    for (node, nr), g in zip(roots, grad_outputs):
        buf = p.buffers.get(node)  # (a root listed twice is queued once)
        _deliver(p.reach(node) if buf is None else buf, nr, g)
    passes = getattr(_running, "passes", None)
    if passes is None:
        passes = _running.passes = []
    with _Mode(create_graph):
        passes.append(p)
        try:
            p.run()
            callbacks = p.callbacks
            for callback in callbacks:  # (a callback may queue another: the loop sees it)
                callback()
        finally:
            passes.pop()

    results = p.results
    if accumulate:
        # non-leaf tensors named in ``inputs`` get their gradient in .grad, as in PyTorch
        if inputs is not None:
            for t in inputs:
                if t.grad_fn is not None and results.get(id(t)) is not None:
                    accumulate_into_grad(t, results[id(t)])
        return None
    out = []
    for k, t in enumerate(inputs):
        g = results.get(id(t))
        if g is None and not allow_unused:
            raise RuntimeError(ERR_UNUSED.format(k=k))
        out.append(g)
    return tuple(out)


class _Pass:
    """One backward pass: the gradients in hand (``buffers``: a node's list, made when the
    pass first reaches the node, which is queued then), the queue, and three steps:

    - ``_lean_chain``: small elementwise nodes run on arrays, each handing its gradient to the
      node it reaches first as the array (no buffer, no Tensor, no queue);
    - ``_fused``: a run of large elementwise nodes as one kernel (``node.run_region``);
    - ``_node``: any node on its own, with its hooks.

    Only a plain ``Tensor.backward()`` (no ``inputs=``, ``create_graph`` or anomaly mode) takes
    the first two; all three give the same gradients. A step returns before the next node
    runs, so it holds no gradient past its node: AccumulateGrad takes a gradient's memory only
    when nothing else refers to it."""

    __slots__ = ("buffers", "heap", "deps", "release", "lean", "regions", "fuse_min",
                 "anomaly", "plain", "accumulate", "captures", "targets", "needed", "results",
                 "callbacks", "id", "roots", "in_graph")

    def __init__(self, roots, inputs, accumulate, retain_graph, create_graph):
        self.id = next(_pass_ids)  # (graph.current_graph_task_id)
        self.roots = roots  # ((node, output_nr) edges)
        self.in_graph = None  # the nodes reachable from the roots, once ``will_execute`` asks
        self.buffers = {}
        self.heap = []
        self.deps = None  # made by ``dependencies``, for a fused region
        self.release = not retain_graph
        self.anomaly = is_anomaly_enabled()
        self.plain = inputs is None
        self.lean = self.plain and not self.anomaly and not create_graph
        self.regions = self.lean and backward_fusion.enabled
        self.fuse_min = backward_fusion.min_items  # (read per pass: users and tests set it)
        self.accumulate = accumulate
        self.results = {}
        self.captures = {}
        self.callbacks = []
        if inputs is not None:
            # the edges whose gradient is asked for, and the nodes that lead to one
            for t in inputs:
                node, nr = edge_of(t)
                if node is not None:
                    self.captures.setdefault((node, nr), []).append(t)
            self.targets = {node for node, _ in self.captures}
            self.needed = _needed(_collect([n for n, _ in roots])[1], self.targets)

    def will_execute(self, node) -> bool:
        """Whether this pass runs ``node`` (PyTorch's ``_will_engine_execute_node``): one
        reachable from the roots, or with ``inputs`` one that leads to one of them."""
        if self.plain:
            if self.in_graph is None:
                self.in_graph = set(_collect([node for node, _ in self.roots])[1])
            return node in self.in_graph
        if node not in self.needed:
            return False
        if type(node) is AccumulateGrad and not self.accumulate:
            raise RuntimeError(ERR_LEAF_IN_GRAD)
        return True

    def reach(self, node):
        """Make the gradient buffer of ``node``, newly reached, and queue it."""
        buf = self.buffers[node] = [None] * node._num_outputs
        _push(self.heap, node)
        return buf

    def next(self):
        """The newest queued node (None when none is left)."""
        return heapq.heappop(self.heap)[2] if self.heap else None

    def dependencies(self, node) -> dict:
        """The dependency counts of the nodes still to run: ``node``, the one running, and
        those reachable from it or from the queue (anything reachable from them is older, so
        has not run). Made on the first call, as only a fused region needs to know whether all
        of a node's gradient is in hand; the steps keep them up to date from then on."""
        if self.deps is None:
            self.deps = _collect([node] + [entry[2] for entry in self.heap])[0]
        return self.deps

    def run(self):
        """Run the reached nodes, newest first, until none is left."""
        buffers, lean, regions = self.buffers, self.lean, self.regions
        node = self.next()
        while node is not None:
            grads = buffers.pop(node)
            if lean and node._lean is not None and not node._hooked:
                node, grads = self._lean_chain(node, grads)
                if grads is None:
                    continue
            if node._hooked and (node._tensor_hooks or node._retain_grad_hooks) and (
                    self.plain or node in self.needed):
                # (a node a pass with ``inputs`` does not run calls no hooks, as PyTorch's)
                grads = _run_tensor_hooks(node, grads)
            if regions and node._fusable and self._fused(node, grads):
                node = self.next()
            else:
                node = self._node(node, grads)

    def _lean_chain(self, node, grads):
        """Run ``node``, a small elementwise node (ops/record.py, ``ElementwiseNode``), on
        arrays, then each lean node reached first the same way (W3 in benchmarks/). Returns
        (the node to run next, None), or (a node, its gradients) when that node must take the
        other steps after all: one from the fusion's size on (a region's one loop beats a loop
        per node), or one whose gradient is not as lean as its inputs."""
        buffers, heap, deps = self.buffers, self.heap, self.deps
        release, fuse_min = self.release, self.fuse_min
        gdata = grads[0]._data if grads[0] is not None else None
        carried = False  # whether ``gdata`` came from the node before, not from a buffer
        while True:
            if gdata is not None and gdata.size < fuse_min:
                # (``node.lean_grads`` without its own call: the chain is lean nodes only;
                # the node frees its saved arrays itself unless retain_graph)
                outs = node._lean.gradients(node, gdata, release, carried)
            else:
                outs = None
            if outs is None:
                return node, [_wrap(Tensor, gdata)] if carried else grads
            grads = gdata = follow = None
            seq = node._sequence_nr
            for (nxt, nr), a in zip(node.next_functions, outs):
                if nxt is None:
                    continue
                if deps is not None:
                    deps[nxt] -= 1
                buf = buffers.get(nxt)
                if buf is None:
                    if nxt._sequence_nr >= seq:
                        raise RuntimeError(ERR_ORDER.format(nxt=nxt, node=node))
                    if (a is not None and follow is None and nxt._lean is not None
                            and not nxt._hooked):
                        follow, gdata = nxt, a
                        continue
                    buf = self.reach(nxt)
                if a is not None:
                    _deliver(buf, nr, _wrap(Tensor, a))
            if follow is None:
                return self.next(), None
            if not heap or follow._sequence_nr > -heap[0][0]:
                node, carried = follow, True
                continue
            # a queued node is newer and runs first: this gradient waits in a buffer
            buffers[follow] = [_wrap(Tensor, gdata)]
            _push(heap, follow)
            return self.next(), None

    def _fused(self, node, grads) -> bool:
        """Run the region ``node`` leads as one kernel (``node.run_region``, ops/fusion.py)
        and deliver the gradients leaving it; False when ``node`` runs on its own."""
        if (
            grads[0] is None
            # (a small gradient is only worth a look from a sum: it may be broadcast)
            or (node._fusable != 2 and grads[0]._data.size < self.fuse_min)
            # (tensor hooks have run: they do not keep a node out)
            or (node._hooked and (node._pre_hooks or node._post_hooks))
        ):
            return False
        fused = node.run_region(grads, lambda: self.dependencies(node), self.buffers)
        if fused is None:
            return False
        members, contributions, external = fused
        if self.release:
            for m in members:
                if m._has_saved:
                    m.release()
        buffers, deps = self.buffers, self.deps
        for nxt in external:
            if nxt not in buffers:
                self.reach(nxt)
            deps[nxt] -= 1
        for (nxt, nr), g in contributions:
            _deliver(buffers[nxt], nr, g)
        return True

    def _node(self, node, grads):
        """Run ``node`` on its own (``node.apply``) with its pre- and post-hooks, and deliver
        its input gradients; returns the node to run next."""
        if (self.plain or self._wanted(node, grads)) and (
                grads[0] is not None or any(g is not None for g in grads)):
            hooked = node._hooked  # (one flag for the four hook tables)
            if hooked and node._pre_hooks:
                for hook in tuple(node._pre_hooks.values()):
                    res = hook(tuple(grads))
                    if res is not None:
                        grads = list(res)
            if node._released:
                node.check_not_released()
            if hooked and node._packed:  # (saved tensors that hooks packed: ops/record.py)
                in_grads = node.apply_unpacked(grads, self.anomaly)
            elif self.anomaly:
                in_grads = run_checked(node, grads)
            else:
                in_grads = node.apply(grads)
            if hooked and node._post_hooks:
                for hook in tuple(node._post_hooks.values()):
                    res = hook(tuple(in_grads), tuple(grads))
                    if res is not None:
                        in_grads = tuple(res)
        else:
            in_grads = (None,) * len(node.next_functions)
        if self.release and node._has_saved:
            node.release()
        buffers, heap, deps = self.buffers, self.heap, self.deps
        seq = node._sequence_nr
        follow = None  # a node this one reached first
        for (nxt, nr), g in zip(node.next_functions, in_grads):
            if nxt is None:
                continue
            buf = buffers.get(nxt)
            if buf is None:
                if nxt._sequence_nr >= seq:
                    raise RuntimeError(ERR_ORDER.format(nxt=nxt, node=node))
                buf = buffers[nxt] = [None] * nxt._num_outputs
                if follow is not None:
                    _push(heap, follow)
                follow = nxt
            if g is not None:
                _deliver(buf, nr, g)
            if deps is not None:
                deps[nxt] -= 1
        # the newest reached node runs next; one newer than all the queued ones (a chain)
        # skips the queue
        if follow is not None:
            if not heap or follow._sequence_nr > -heap[0][0]:
                return follow
            _push(heap, follow)
        return self.next()

    def _wanted(self, node, grads) -> bool:
        """In a pass with ``inputs``: keep the gradients asked for that ``node`` holds, and
        whether it needs to run (it leads to an input; an AccumulateGrad only when its leaf
        is asked for and ``.grad`` is to be updated)."""
        captures = self.captures
        if captures and any((node, k) in captures for k in range(node._num_outputs)):
            for k in range(node._num_outputs):
                for t in captures.get((node, k), ()):
                    self.results[id(t)] = grads[k]
        if isinstance(node, AccumulateGrad):
            return node in self.needed and self.accumulate and (node, 0) in captures
        if not self.accumulate and node in self.targets and not _feeds(node, self.needed):
            return False
        return node in self.needed


def _feeds(node, needed) -> bool:
    return any(n is not None and n in needed for n, _ in node.next_functions)


def _run_tensor_hooks(node, grads):
    """Hooks registered on the tensors this node produced, then retain_grad capture."""
    if node._tensor_hooks:
        grads = list(grads)
        # (an output that received no gradient, of a node that runs for another: its hooks
        # see None, as PyTorch's do; a node no gradient reached calls none)
        reached = any(g is not None for g in grads)
        for k, hooks in node._tensor_hooks.items():
            for hook in tuple(hooks.values()):
                if not reached:
                    break
                res = hook(grads[k])
                if res is not None:
                    grads[k] = res
    if node._retain_grad_hooks:
        for k, fn in node._retain_grad_hooks.items():
            if grads[k] is not None:
                fn(grads[k])
    return grads
