"""``numbagrad.func``: torch.func's function transforms, on numbagrad's autograd.

``grad``, ``grad_and_value``, ``vjp`` and ``jacrev`` run reverse mode (``autograd.grad`` with
``create_graph=True``, so transforms compose: ``grad(grad(f))``); ``jvp`` and ``jacfwd`` run
forward-mode AD (``autograd.forward_ad``), of which one level exists at a time, so a forward
transform inside another (``jacfwd(jacfwd(f))``) raises; ``hessian`` is
``jacfwd(jacrev(f))`` as in PyTorch. ``vmap`` is a Python loop over the mapped dimension.
Arguments may be Tensors or tuples, lists and dicts of them.
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Sequence

from . import random as _random
from ._tensor import Tensor
from .autograd import forward_ad as fwAD
from .autograd.api import grad as _autograd_grad
from .autograd.grad_mode import enable_grad
from .factory import zeros, zeros_like
from .ops.forward import set_tangent
from .ops.movement import stack

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian",
           "vmap", "functional_call", "stack_module_state"]

# ---------------------------------------------------------------- pytrees (tuples, lists, dicts)


def _leaves(tree) -> list:
    if isinstance(tree, (tuple, list)):
        return [leaf for t in tree for leaf in _leaves(t)]
    if isinstance(tree, dict):
        return [leaf for t in tree.values() for leaf in _leaves(t)]
    return [tree]


def _map(fn, tree):
    if isinstance(tree, (tuple, list)):
        items = [_map(fn, t) for t in tree]
        return type(tree)(*items) if hasattr(tree, "_fields") else type(tree)(items)
    if isinstance(tree, dict):
        return {k: _map(fn, v) for k, v in tree.items()}
    return fn(tree)


def _unflatten(tree, leaves):
    it = iter(leaves)
    return _map(lambda _: next(it), tree)


# ---------------------------------------------------------------- the reverse-mode core


def _track(x, running):
    """A fresh tensor standing for ``x`` to differentiate by: connected to ``x`` when ``x``
    requires grad (an enclosing transform or the caller differentiates through it), else a
    new leaf marked with the transform's ``running`` cell ([True] until it returns)."""
    if not isinstance(x, Tensor):
        raise RuntimeError(f"Expected a Tensor argument to differentiate, got {type(x)}")
    if x.requires_grad:
        return x.view_as(x)
    t = x.detach().requires_grad_()
    t._transform_running = running
    if x._fw_grad is not None:  # (inside jacfwd: forward over reverse)
        set_tangent(t, x._fw_grad)
    return t


_USER = (True,)  # what a leaf that no transform made counts as: always live


def _only_on(t, leaves) -> bool:
    """Whether ``t``'s graph reaches no leaf requiring grad but ``leaves`` (the transform's
    own) and those of transforms that have returned: then it is returned detached, as
    torch.func's results are outside any transform."""
    own = {id(x) for x in leaves}
    node = t.grad_fn
    stack_, seen = [node] if node is not None else [], set()
    while stack_:
        n = stack_.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        variable = getattr(n, "variable", None)
        if variable is not None and id(variable) not in own and (
                variable.__dict__.get("_transform_running", _USER)[0]):
            return False  # (a user's tensor, or one of a transform still running)
        stack_.extend(nxt for nxt, _ in n.next_functions if nxt is not None)
    return True


def _finish(tree, leaves):
    """Detach the Tensors of ``tree`` that depend only on the transform's own ``leaves``
    (keeping a tangent: an enclosing jacfwd reads it)."""

    def finish(t):
        if not (isinstance(t, Tensor) and t.requires_grad and _only_on(t, leaves)):
            return t
        out = t.detach()
        if t._fw_grad is not None:
            set_tangent(out, t._fw_grad)
        return out

    return _map(finish, tree)


def _done(leaves):
    """The transform that made ``leaves`` has returned: graphs reaching only them (and those of
    other returned transforms) are detached by enclosing ones."""
    for x in leaves:
        running = x.__dict__.get("_transform_running")
        if running is not None:
            running[0] = False


def _grads(outputs, inputs, grad_outputs=None):
    """``autograd.grad`` with zeros for unused inputs, keeping the graph (transforms nest)."""
    outs = [o for o in outputs if o.requires_grad]
    if not outs:
        return [zeros_like(x) for x in inputs]
    gos = None if grad_outputs is None else [g for o, g in zip(outputs, grad_outputs)
                                             if o.requires_grad]
    res = _autograd_grad(outs, inputs, gos, retain_graph=True, create_graph=True,
                         allow_unused=True)
    return [zeros_like(x) if g is None else g for x, g in zip(inputs, res)]


def _argnums(argnums, n_args):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not isinstance(argnums, int):
        if not nums:
            raise RuntimeError("argnums must be non-empty")
        if len(set(nums)) != len(nums):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    for n in nums:
        if not -n_args <= n < n_args:
            raise RuntimeError(f"Got argnum={n}, but only {n_args} positional inputs")
    return nums


def _tracked_args(args, argnums):
    """(args with those at ``argnums`` tracked, the tracked trees, their leaves)."""
    args = list(args)
    nums = _argnums(argnums, len(args))
    trees = []
    running = [True]
    for n in nums:
        args[n] = _map(lambda x: _track(x, running), args[n])
        trees.append(args[n])
    return args, trees, _leaves(trees)


def _pick(argnums, trees):
    """What the caller gets for ``argnums``: one tree for an int, else a tuple of them."""
    return trees[0] if isinstance(argnums, int) else tuple(trees)


def _split_aux(out, has_aux, name):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{name}(f)(*args): output of function f should be a tuple: "
                           "(output, aux) if has_aux is True")
    return out


# ---------------------------------------------------------------- transforms


def grad_and_value(func, argnums=0, has_aux=False):
    """``(gradient, value)`` of scalar ``func`` with respect to the arguments at ``argnums``
    (``((gradient, (value, aux))`` with ``has_aux``)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with enable_grad():
            args, trees, leaves = _tracked_args(args, argnums)
            output, aux = _split_aux(func(*args, **kwargs), has_aux, "grad_and_value")
            if not isinstance(output, Tensor):
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"Tensor, got {type(output)}")
            if output.dim() != 0:
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, "
                    f"got tensor with {output.dim()} dims. Maybe you wanted to use the vjp or "
                    "jacrev APIs instead?")
            grads = _unflatten(trees, _grads([output], leaves))
        grads = _finish(_pick(argnums, grads), leaves)
        output = _finish(output, leaves)
        aux = _finish(aux, leaves)
        _done(leaves)
        return (grads, (output, aux)) if has_aux else (grads, output)

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of scalar ``func`` with respect to the arguments at ``argnums`` (with
    ``has_aux``: ``(gradient, aux)``); ``grad(grad(f))`` is the second derivative."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = gv(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return wrapper


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)``; ``vjp_fn(cotangents)`` returns a tuple with the
    vector-Jacobian product for each primal (``(output, vjp_fn, aux)`` with ``has_aux``)."""
    with enable_grad():
        args, trees, leaves = _tracked_args(primals, tuple(range(len(primals))))
        output, aux = _split_aux(func(*args), has_aux, "vjp")
    outs = _leaves(output)

    def vjp_fn(cotangents):
        cots = _leaves(cotangents)
        if len(cots) != len(outs):
            raise RuntimeError("Expected pytree structure of cotangents to be the same as "
                               "pytree structure of outputs to the function")
        for c, o in zip(cots, outs):
            if c.shape != o.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of "
                                   f"{c.shape} and output[0] has a shape of {o.shape}.")
        with enable_grad():
            grads = _unflatten(trees, _grads(outs, leaves, cots))
        return _finish(tuple(grads), leaves)

    output, aux = _finish(output, leaves), _finish(aux, leaves)
    return (output, vjp_fn, aux) if has_aux else (output, vjp_fn)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J @ tangents)`` by forward-mode AD (``(output, jvp_out, aux)`` with
    ``has_aux``)."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it "
                           "should be valid to call f(*primals).")
    p_leaves, t_leaves = _leaves(primals), _leaves(tangents)
    if len(p_leaves) != len(t_leaves):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have "
                           "the same python structure. For example, if primals is a tuple of "
                           "3 tensors, tangents also must be.")
    for p, t in zip(p_leaves, t_leaves):
        if p.shape != t.shape:
            raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to "
                               "have the same shape")
    with fwAD.dual_level():
        duals = _unflatten(primals, [fwAD.make_dual(p, t) for p, t in zip(p_leaves, t_leaves)])
        output, aux = _split_aux(func(*duals), has_aux, "jvp")
        unpacked = [fwAD.unpack_dual(o) for o in _leaves(output)]
        primal_out = _unflatten(output, [u.primal for u in unpacked])
        tangent_out = _unflatten(output, [u.tangent if u.tangent is not None
                                          else zeros_like(u.primal) for u in unpacked])
        if has_aux:
            aux = _map(lambda a: fwAD.unpack_dual(a).primal if isinstance(a, Tensor) else a,
                       aux)
    if has_aux:
        return primal_out, tangent_out, aux
    return primal_out, tangent_out


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is the Jacobian-vector product of
    ``func`` at ``primals``. (Each call runs ``func`` again in forward mode; PyTorch traces
    it once into a graph.)"""
    output = func(*primals)
    p_leaves = _leaves(primals)

    def jvp_fn(*tangents):
        for k, (p, t) in enumerate(zip(p_leaves, _leaves(tangents))):
            if p.shape != t.shape:
                raise RuntimeError(
                    f"tangent:{k} with shape {t.shape} in flattened pytree doesn't match the "
                    f"shape {p.shape} of the corresponding primal.")
        return jvp(func, primals, tangents)[1]

    return output, jvp_fn


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of ``func`` with respect to the arguments at ``argnums``, by reverse mode,
    one output element at a time: block ``out.shape + arg.shape`` per output and argument."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with enable_grad():
            args, trees, leaves = _tracked_args(args, argnums)
            output, aux = _split_aux(func(*args, **kwargs), has_aux, "jacrev")
            per_output = []
            for out in _leaves(output):
                flat = out.reshape(-1)
                rows = [_grads([flat[k]], leaves) for k in range(out.numel())]
                blocks = [stack([r[j] for r in rows], 0).reshape(*out.shape, *x.shape)
                          if rows else zeros(*out.shape, *x.shape, dtype=x.dtype)
                          for j, x in enumerate(leaves)]
                per_output.append(_pick(argnums, _unflatten(trees, blocks)))
            jac = _finish(_unflatten(output, per_output), leaves)
            aux = _finish(aux, leaves)
        _done(leaves)
        return (jac, aux) if has_aux else jac

    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of ``func`` with respect to the arguments at ``argnums``, by forward-mode
    AD, one input element at a time."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        args = list(args)
        nums = _argnums(argnums, len(args))
        trees = [args[n] for n in nums]
        leaves = _leaves(trees)
        columns = []  # per leaf, per element: the tangents of the output leaves
        output = aux = None
        for j, x in enumerate(leaves):
            cols = []
            for k in range(x.numel()):
                basis = zeros_like(x).reshape(-1)
                basis[k] = 1
                with fwAD.dual_level():
                    dual = fwAD.make_dual(x, basis.view_as(x))
                    new = _unflatten(trees, [dual if i == j else y
                                             for i, y in enumerate(leaves)])
                    call = list(args)
                    for n, tree in zip(nums, new):
                        call[n] = tree
                    out, aux = _split_aux(func(*call, **kwargs), has_aux, "jacfwd")
                    unpacked = [fwAD.unpack_dual(o) for o in _leaves(out)]
                    output = _unflatten(out, [u.primal for u in unpacked])
                    cols.append([u.tangent if u.tangent is not None else zeros_like(u.primal)
                                 for u in unpacked])
            columns.append(cols)
        if output is None:
            output, aux = _split_aux(func(*args, **kwargs), has_aux, "jacfwd")
        per_output = []
        for i, out in enumerate(_leaves(output)):
            blocks = [stack([c[i].reshape(-1) for c in columns[j]], 1).reshape(
                          *out.shape, *x.shape) if columns[j]
                      else zeros(*out.shape, *x.shape, dtype=out.dtype)
                      for j, x in enumerate(leaves)]
            per_output.append(_pick(argnums, _unflatten(trees, blocks)))
        # (tangents computed through a jacrev inside reach only its returned leaves)
        jac = _finish(_unflatten(output, per_output), ())
        return (jac, aux) if has_aux else jac

    return wrapper


def hessian(func, argnums=0):
    """The Hessian of scalar ``func``: ``jacfwd(jacrev(func, argnums), argnums)``."""
    return jacfwd(jacrev(func, argnums), argnums)


# ---------------------------------------------------------------- vmap


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` mapped over a dimension of its inputs (``in_dims``: one per argument, None
    for an argument passed whole), the results stacked at ``out_dims``.

    This is a Python loop: ``func`` runs once per index of the mapped dimension, so it costs
    as many calls as the batch size (PyTorch's vmap runs ``func`` once on batched tensors;
    ``chunk_size``, which only bounds its memory, has nothing to bound here).

    ``randomness``, for draws from the default generator inside ``func``: "error" refuses
    them, "different" lets each index draw its own, "same" gives every index the same draws
    (the generator's state is set back before each call), as PyTorch's."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        dims = in_dims if isinstance(in_dims, (tuple, list)) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(
                f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims is not "
                "compatible with the structure of `inputs`.")
        sizes, mapped = [], []
        for a, d in zip(args, dims):
            if d is None:
                mapped.append(None)
                continue
            leaves = _leaves(a)
            for t in leaves:
                if not -t.dim() <= d < max(t.dim(), 0) or t.dim() == 0:
                    raise ValueError(
                        f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim="
                        f"{d} for some input, but that input is a Tensor of dimensionality "
                        f"{t.dim()} so expected in_dim to satisfy -{t.dim()} <= in_dim < "
                        f"{t.dim()}.")
                sizes.append(t.shape[d])
            mapped.append(d)
        if not sizes:
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): at least "
                             "one input must be a Tensor mapped over a dimension")
        if len(set(sizes)) != 1:
            raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                             f"dimension, got sizes {sizes} for the mapped dimension")
        if randomness not in ("error", "different", "same"):
            raise RuntimeError("Only allowed values for randomness are 'error', 'different', "
                               f"or 'same'. Got {randomness}")
        state = _random.get_rng_state()
        results = []
        for i in range(sizes[0]):
            call = [a if d is None else _map(lambda t, d=d: t.select(d, i), a)
                    for a, d in zip(args, mapped)]
            if randomness == "same" and i:
                _random.set_rng_state(state)
            results.append(func(*call, **kwargs))
            if randomness == "error" and not _random.get_rng_state().equal(state):
                raise RuntimeError(
                    "vmap: called random operation while in randomness error mode. Please "
                    "either use the 'same' or 'different' randomness flags on vmap or perform "
                    "the randomness operation out of vmap")
        first = results[0]
        leaves = [_leaves(r) for r in results]
        n_out = len(leaves[0])
        odims = (out_dims if isinstance(out_dims, (tuple, list)) else (out_dims,) * n_out)
        stacked = [stack([r[k] for r in leaves], odims[k]) for k in range(n_out)]
        return _unflatten(first, stacked)

    return wrapper


def _name(func):
    return getattr(func, "__name__", repr(func))


# ---------------------------------------------------------------- functional_call


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Call ``module(*args, **kwargs)`` with its parameters and buffers replaced by the
    tensors of ``parameter_and_buffer_dicts`` (a dict, or a list or tuple of dicts with
    distinct keys; names as in ``named_parameters``), then put the module's own back.
    ``tie_weights``: a value given for one of tensors the module shares under several names
    stands for all of them; ``strict``: the names must be exactly the module's."""
    if isinstance(parameter_and_buffer_dicts, dict):
        values = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError(
                "Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        counts = collections.Counter(k for d in parameter_and_buffer_dicts for k in d)
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
        values = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(parameter_and_buffer_dicts)}")
    return _functional_call(module, values, args, kwargs, tie_weights=tie_weights,
                            strict=strict)


def _functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                     tie_weights=True, strict=False):
    """``functional_call`` of one dict (``nn.utils.stateless``'s: PyTorch's takes no list of
    them there). Tensors the module's forward assigns in place of given ones are written back
    into ``parameters_and_buffers``, as PyTorch's."""
    from .nn.parallel.data_parallel import DataParallel

    if isinstance(module, DataParallel):
        raise RuntimeError("The stateless API can't be used with nn.DataParallel module")
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    values = (_untied(module, parameters_and_buffers) if tie_weights
              else parameters_and_buffers)
    if strict:
        keys = set(values.keys())
        valid = {name for name, _ in _named_tensors(module)}
        errors = []
        if keys - valid:
            errors.append(f"Unexpected key(s): {', '.join(map(repr, sorted(keys - valid)))}.")
        if valid - keys:
            errors.append(f"Missing key(s): {', '.join(map(repr, sorted(valid - keys)))}.")
        if errors:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
                _module_name(module), "\n\t".join(errors)))
    originals = {}
    try:
        originals = _swap_all(module, values)
        return module(*args, **(kwargs or {}))
    finally:
        replaced = _swap_all(module, originals)
        parameters_and_buffers.update(
            {k: replaced[k] for k in parameters_and_buffers if k in replaced})


def stack_module_state(models) -> tuple[dict, dict]:
    """The parameters and the buffers of same-class ``models``, each stacked along a new first
    dim, by name (for ``vmap`` over ``functional_call``: model ensembling); stacked
    parameters are new leaves requiring grad."""
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) != 1:
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode.")
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(tables):
        return {k: _stacked_leaf([t[k] for t in tables], k) for k in tables[0]}

    return (stacked([dict(m.named_parameters()) for m in models]),
            stacked([dict(m.named_buffers()) for m in models]))


def _stacked_leaf(tensors, name):
    grads = {t.requires_grad for t in tensors}
    if len(grads) != 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = stack(tensors)
    return result.detach().requires_grad_() if grads.pop() else result


def _named_tensors(module):
    """The module's parameters and buffers by name, shared ones under each of their names
    (none for an object that only keeps a module's registries: see ``_swap``)."""
    if hasattr(module, "named_parameters"):
        yield from module.named_parameters(remove_duplicate=False)
        yield from module.named_buffers(remove_duplicate=False)


def _module_name(module) -> str:
    return module._get_name() if hasattr(module, "_get_name") else type(module).__name__


def _untied(module, given):
    """``given`` with each value for a tensor the module holds under several names (tied
    weights) given for all those names; two different values for one tied tensor raise."""
    names_of = {}  # id(tensor) -> its names in the module
    for name, t in dict(_named_tensors(module)).items():
        names_of.setdefault(id(t), set()).add(name)
    tied = {n: names for names in names_of.values() if len(names) > 1 for n in names}
    given_names = set(given.keys())
    given_tied = {n for n in given_names if n in tied}
    for name in given_tied:
        names = tied[name]
        # (every name of the tie is looked up, as PyTorch's: a tie of three names two of
        # which are given raises KeyError there too)
        if len(names & given_tied) > 1 and len({id(given[n]) for n in names}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             "which are tied. Consider using tie_weights=False")
    untied = given.copy()
    for name in given_tied:
        for other in tied[name]:
            untied[other] = given[name]
    return untied


_MISSING = object()  # (a name the module did not have: deleted again when restored)


def _swap_all(module, values):
    """Put each of ``values`` in place of the module's tensor of that dotted name; returns
    what was there. All or none: if one fails, those already put are swapped back."""
    originals = {}
    submodules = {"": module}
    try:
        for name, value in values.items():
            originals[name] = _swap(_submodule(module, name.rpartition(".")[0], submodules),
                                    name.rpartition(".")[2], value)
    except Exception:
        for name, old in originals.items():
            _swap(_submodule(module, name.rpartition(".")[0], submodules),
                  name.rpartition(".")[2], old)
        raise
    return originals


def _submodule(module, path, memo):
    if path in memo:
        return memo[path]
    # (nn sits above this module: nn.utils.stateless imports it)
    from .nn.modules.module import Module

    prefix, dot, attr = path.rpartition(".")
    owner = _submodule(module, prefix, memo) if dot else module
    try:
        sub = getattr(owner, attr)
    except AttributeError as e:
        raise AttributeError(f"{_module_name(owner)} has no attribute `{attr}`") from e
    if not isinstance(sub, Module) and not isinstance(getattr(sub, "_parameters", None), dict):
        raise TypeError(f"submodule `{path}`: {sub} is not an instance of torch.nn.Module")
    memo[path] = sub
    return sub


def _swap(module, name, value):
    """Put ``value`` in place of ``module``'s parameter, buffer or tensor attribute ``name``
    (``_MISSING``: remove it); returns what was there (``_MISSING`` if nothing). (A module's
    registries are written directly, as a plain tensor may not be assigned to a parameter's
    name. Any object that keeps a module's ``_parameters`` and ``_buffers`` dicts will do.)"""
    if value is not _MISSING and value is not None and not isinstance(value, Tensor):
        raise TypeError(f"{value} is not an instance of torch.Tensor")
    if name == "":
        raise KeyError('tensor name can\'t be empty string ""')
    for registry in (getattr(module, "_parameters", None), getattr(module, "_buffers", None)):
        if isinstance(registry, dict) and name in registry:
            old = registry[name]
            if value is _MISSING:
                del registry[name]
            else:
                registry[name] = value
            return old
    old = getattr(module, name, _MISSING)
    if old is not _MISSING and old is not None and not isinstance(old, Tensor):
        raise TypeError(f"attribute `{name}`: {old} is not an instance of torch.Tensor")
    if value is not _MISSING:
        setattr(module, name, value)
    elif hasattr(module, name):
        delattr(module, name)
    return old
