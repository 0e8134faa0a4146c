"""The backward pass: count dependencies, then run ready nodes newest-first. No recursion."""

from __future__ import annotations

import heapq

from .anomaly_mode import is_anomaly_enabled, run_checked
from .grad_mode import enable_grad, no_grad
from .graph import AccumulateGrad, edge_of

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
    in the order visited. A node other than a root is visited when it gets its first count."""
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


_FUSION: list = []  # the ops.fusion module
_PAUSE: list = []  # ops.lazy.PAUSED


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
    deps, order = _collect([n for n, _ in roots])

    captures = {}
    targets = None
    if inputs is not None:
        for t in inputs:
            node, nr = edge_of(t)
            if node is not None:
                captures.setdefault((node, nr), []).append(t)
        targets = {node for node, _ in captures}
    needed = _needed(order, targets) if targets is not None else None

    buffers: dict = {}
    for (node, nr), g in zip(roots, grad_outputs):
        buf = buffers.setdefault(node, [None] * node._num_outputs)
        _add(buf, nr, g)

    results = {}
    heap = []
    pushed = set()  # a root listed twice goes in once
    for node, _ in roots:
        if deps.get(node, 0) == 0 and node not in pushed:
            pushed.add(node)
            heapq.heappush(heap, (-node._sequence_nr, id(node), node))

    # the loop runs once per node: what it needs is bound to locals, checks that are the
    # same for every node are made once
    push, pop = heapq.heappush, heapq.heappop
    anomaly = is_anomaly_enabled()
    plain = needed is None and inputs is None  # Tensor.backward() without inputs=
    # runs of large elementwise nodes as one kernel (ops/fusion.py); same gradients
    fuse = plain and not anomaly and not create_graph
    if fuse:
        if not _FUSION:  # (ops/ imports this module: bound on first use, not per call)
            from ..ops import fusion as module

            _FUSION.append(module)
        fusion = _FUSION[0]
        fuse_min = fusion.FUSE_MIN_ITEMS
    mode = enable_grad() if create_graph else no_grad()
    if not _PAUSE:
        from ..ops import lazy

        _PAUSE.append(lazy.PAUSED)
    with mode, _PAUSE[0]:  # the backward's own ops run at once (ops/lazy.py)
        node = pop(heap)[2] if heap else None
        while node is not None:
            grads = buffers.pop(node, None) or [None] * node._num_outputs
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
                    fused = fusion.run(node, grads, deps, buffers)
                    if fused is not None:
                        members, contributions, external = fused
                        fused = grads = None
                        for m in members:
                            if not retain_graph and m._saved_anything:
                                m.release()
                        for (nxt, nr), g in contributions:
                            buf = buffers.get(nxt)
                            if buf is None:
                                buf = buffers[nxt] = [None] * nxt._num_outputs
                            cur = buf[nr]
                            buf[nr] = g if cur is None else cur + g
                        contributions = g = cur = buf = members = None
                        for nxt in external:
                            left = deps[nxt] - 1
                            deps[nxt] = left
                            if left == 0:
                                push(heap, (-nxt._sequence_nr, id(nxt), nxt))
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
            if not retain_graph and node._saved_anything:
                node.release()
            follow = None  # a node this one made ready
            for (nxt, nr), g in zip(node.next_functions, in_grads):
                if nxt is None:
                    continue
                if g is not None:
                    buf = buffers.get(nxt)
                    if buf is None:
                        buf = buffers[nxt] = [None] * nxt._num_outputs
                    cur = buf[nr]
                    buf[nr] = g if cur is None else cur + g
                left = deps[nxt] - 1
                deps[nxt] = left
                if left == 0:
                    if follow is not None:
                        push(heap, (-follow._sequence_nr, id(follow), follow))
                    follow = nxt
            # hold no gradient past its node: AccumulateGrad takes a gradient's memory only
            # when nothing else refers to it
            in_grads = g = cur = buf = None
            # the newest ready node runs next; the only one (a chain) skips the heap
            if follow is not None:
                if not heap:
                    node = follow
                    continue
                push(heap, (-follow._sequence_nr, id(follow), follow))
            node = pop(heap)[2] if heap else None

    if accumulate:
        # non-leaf tensors named in ``inputs`` get their gradient in .grad, as in PyTorch
        if inputs is not None:
            from ..tensor import accumulate_into_grad

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
