"""The backward pass: run the reached nodes newest-first. No recursion, no counting pass.

Every edge leads from a node to an older one (a node's inputs exist before it, and so do
their nodes), so when the newest node the pass has reached is taken, every node that could
still send it a gradient is newer and has run: it is ready. That is the order PyTorch's ready
queue gives (the newest ready node first) without counting each node's dependencies first.
The counts are made only when a fused region needs them (``ops/fusion.py``).
"""

from __future__ import annotations

import heapq

from .._tensor import Tensor
from .accumulate import accumulate_into_grad
from .anomaly_mode import is_anomaly_enabled, run_checked
from .grad_mode import _state as _grad_state
from .grad_mode import backward_passes
from .graph import AccumulateGrad, _wrap, edge_of

ERR_NO_GRAD = "element {i} of tensors does not require grad and does not have a grad_fn"
ERR_UNUSED = (
    "One of the differentiated Tensors appears to not have been used in the graph. "
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


class _Pending:
    """The dependency counts of the nodes still to run, made on first use: only a fused
    region (``ops/fusion.py``) needs to know whether all of a node's gradient is in hand.

    The nodes still to run are those reachable from the running node and the queued ones
    (anything reachable from them is older, so has not run); once made, the engine keeps
    the counts up to date."""

    __slots__ = ("counts", "heap", "node")

    def __init__(self, heap):
        self.heap = heap
        self.node = None
        self.counts = None

    def __call__(self) -> dict:
        if self.counts is None:
            self.counts = _collect([self.node] + [entry[2] for entry in self.heap])[0]
        return self.counts


def _add(buf, slot, grad):
    cur = buf[slot]
    buf[slot] = grad if cur is None else cur + grad


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
    roots = []
    for i, t in enumerate(outputs):
        node, nr = _root_edge(t, i)
        roots.append((node, nr))

    captures = {}
    targets = needed = None
    if inputs is not None:
        for t in inputs:
            node, nr = edge_of(t)
            if node is not None:
                captures.setdefault((node, nr), []).append(t)
        targets = {node for node, _ in captures}
        needed = _needed(_collect([n for n, _ in roots])[1], targets)

    # a node's gradient buffer is made when the pass first reaches it, and the node is queued
    # then (a root listed twice goes in once)
    push, pop = heapq.heappush, heapq.heappop
    buffers: dict = {}
    heap = []
    for (node, nr), g in zip(roots, grad_outputs):
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node._num_outputs
            push(heap, (-node._sequence_nr, id(node), node))
        _add(buf, nr, g)

    results = {}
    # the loop runs once per node: what it needs is bound to locals, checks that are the
    # same for every node are made once
    anomaly = is_anomaly_enabled()
    plain = needed is None and inputs is None  # Tensor.backward() without inputs=
    # runs of large elementwise nodes as one kernel (ops/fusion.py); same gradients
    fuse = plain and not anomaly and not create_graph
    pending = _Pending(heap)
    deps = None  # pending.counts, once a region has made them
    if fuse:
        # (here, not above: ops/ build on autograd/, which so loads first; the threshold is
        # read per pass, as users and tests set it)
        from ..ops import fusion

        fuse_min = fusion.FUSE_MIN_ITEMS
    release = not retain_graph
    with _Mode(create_graph):
        # the gradient (an array) a lean node hands straight to the node it runs next
        carried = None
        node = pop(heap)[2] if heap else None
        while node is not None:
            if carried is None:
                grads = buffers.pop(node)
            else:
                grads = None
            if fuse and node._lean is not None and not node._hooked:
                # a small elementwise node (ops/registry.py, ElementwiseNode): its rules run on
                # arrays, and a node it reaches first that is lean too gets its gradient as
                # the array, with no buffer, no Tensor and no queue (W3 in benchmarks/)
                # (it frees its saved arrays itself unless retain_graph; from the fusion's
                # size on, a region's one loop beats a loop per node)
                gdata = carried if grads is None else (
                    grads[0]._data if grads[0] is not None else None)
                if gdata is not None and gdata.size < fuse_min:
                    outs = node.lean_grads(gdata, release, grads is None)
                else:
                    outs = None
                gdata = None
                if outs is None:
                    if grads is None:
                        grads = [_wrap(Tensor, carried)]
                        carried = None
                else:
                    carried = None
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
                            if (a is not None and carried is None and nxt._lean is not None
                                    and not nxt._hooked):
                                carried, follow = a, nxt
                                continue
                            buf = buffers[nxt] = [None] * nxt._num_outputs
                            push(heap, (-nxt._sequence_nr, id(nxt), nxt))
                        if a is not None:
                            cur = buf[nr]
                            g = _wrap(Tensor, a)
                            buf[nr] = g if cur is None else cur + g
                    outs = a = g = cur = buf = None
                    if carried is not None:
                        if not heap or follow._sequence_nr > -heap[0][0]:
                            node = follow
                            continue
                        buffers[follow] = [_wrap(Tensor, carried)]
                        carried = None
                        push(heap, (-follow._sequence_nr, id(follow), follow))
                    node = pop(heap)[2] if heap else None
                    continue
            hooked = node._hooked  # (one flag for the four hook tables)
            if hooked and (node._tensor_hooks or node._retain_grad_hooks):
                grads = _run_tensor_hooks(node, grads)
            if plain:
                run = True
                if (
                    fuse and node._fusable and grads[0] is not None
                    # (a small gradient is only worth a look from a sum: it may be broadcast)
                    and (node._fusable == 2 or grads[0]._data.size >= fuse_min)
                    # (tensor hooks have run: they do not keep a node out)
                    and not (hooked and (node._pre_hooks or node._post_hooks))
                ):
                    pending.node = node
                    fused = fusion.run(node, grads, pending, buffers)
                    deps = pending.counts
                    if fused is not None:
                        members, contributions, external = fused
                        fused = grads = None
                        for m in members:
                            if not retain_graph and m._has_saved:
                                m.release()
                        for nxt in external:
                            if nxt not in buffers:
                                buffers[nxt] = [None] * nxt._num_outputs
                                push(heap, (-nxt._sequence_nr, id(nxt), nxt))
                            deps[nxt] -= 1
                        for (nxt, nr), g in contributions:
                            buf = buffers[nxt]
                            cur = buf[nr]
                            buf[nr] = g if cur is None else cur + g
                        contributions = g = cur = buf = members = None
                        node = pop(heap)[2] if heap else None
                        continue
            else:
                if captures and any((node, k) in captures for k in range(node._num_outputs)):
                    for k in range(node._num_outputs):
                        for t in captures.get((node, k), ()):
                            results[id(t)] = grads[k]
                run = needed is None or node in needed
                if isinstance(node, AccumulateGrad):
                    run = run and accumulate and (inputs is None or (node, 0) in captures)
                elif inputs is not None and not accumulate and node in targets and not _feeds(
                    node, needed
                ):
                    run = False
            if run and (grads[0] is not None or any(g is not None for g in grads)):
                if hooked and node._pre_hooks:
                    for hook in tuple(node._pre_hooks.values()):
                        res = hook(tuple(grads))
                        if res is not None:
                            grads = list(res)
                if node._released:
                    node.check_not_released()
                if anomaly:
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
            if not retain_graph and node._has_saved:
                node.release()
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
                        push(heap, (-follow._sequence_nr, id(follow), follow))
                    follow = nxt
                if g is not None:
                    cur = buf[nr]
                    buf[nr] = g if cur is None else cur + g
                if deps is not None:
                    deps[nxt] -= 1
            # hold no gradient past its node: AccumulateGrad takes a gradient's memory only
            # when nothing else refers to it
            in_grads = g = cur = buf = None
            # the newest reached node runs next; one newer than all the queued ones (a chain)
            # skips the queue
            if follow is not None:
                if not heap or follow._sequence_nr > -heap[0][0]:
                    node = follow
                    continue
                push(heap, (-follow._sequence_nr, id(follow), follow))
            node = pop(heap)[2] if heap else None

    if accumulate:
        # non-leaf tensors named in ``inputs`` get their gradient in .grad, as in PyTorch
        if inputs is not None:
            for t in inputs:
                if t.grad_fn is not None and results.get(id(t)) is not None:
                    accumulate_into_grad(t, results[id(t)])
        return None
    out = []
    for t in inputs:
        g = results.get(id(t))
        if g is None and not allow_unused:
            raise RuntimeError(ERR_UNUSED)
        out.append(g)
    return tuple(out)


def _feeds(node, needed) -> bool:
    return any(n is not None and n in needed for n, _ in node.next_functions)


def _run_tensor_hooks(node, grads):
    """Hooks registered on the tensors this node produced, then retain_grad capture."""
    if node._tensor_hooks:
        grads = list(grads)
        for k, hooks in node._tensor_hooks.items():
            for hook in tuple(hooks.values()):
                if grads[k] is None:
                    break
                res = hook(grads[k])
                if res is not None:
                    grads[k] = res
    if node._retain_grad_hooks:
        for k, fn in node._retain_grad_hooks.items():
            if grads[k] is not None:
                fn(grads[k])
    return grads
