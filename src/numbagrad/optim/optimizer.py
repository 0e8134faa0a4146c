"""The ``Optimizer`` base class: parameter groups, per-parameter state, ``zero_grad`` and
``state_dict``/``load_state_dict`` in PyTorch's format (integer parameter ids).

A subclass passes its hyperparameters as ``defaults`` and defines ``_update(p, grad, group)``,
the update of one parameter (reading and writing ``self.state[p]``); ``step`` calls it for
each parameter whose ``grad`` is not None, under ``no_grad`` so the in-place writes keep the
parameters leaves (and bump their version counters). A subclass may instead define ``step``
itself, as PyTorch's do (and as users' own optimizers do).
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from copy import deepcopy
from itertools import chain

from .. import backend
from .. import dtypes as D
from ..backend.memory import before_write
from ..autograd.grad_mode import enable_grad, no_grad
from ..factory import tensor
from ..ops.inplace import check_no_overlap
from ..tensor import Tensor


# elements per row of an update kernel (backend/kernels_optim.py): a CUDA thread's share, and
# the CPU's unit of work between threads
UPDATE_ROW = 4096


def run_update(kernel, written, read, numbers, bumps):
    """Run update kernel ``kernel`` (a row function of ``kernels_optim``) over the elements of
    ``written`` (tensors updated in place, the parameter first) and ``read`` (the gradient),
    then add ``bumps[k]`` to the version of ``written[k]``: the in-place ops the kernel stands
    for. ``numbers`` go to the kernel as values of the parameter's dtype (flags as they are).
    A tensor that is not C-contiguous is updated through a contiguous copy, written back; one
    whose elements share memory (expanded) is refused as an in-place op would be."""
    p = written[0]
    dt = p._data.dtype
    be = backend.of(p._data)
    args, back, seen = [], [], {}
    for k, t in enumerate((*written, *read)):
        view = seen.get(id(t))  # (a tensor passed twice is one buffer)
        if view is None:
            a = t._data
            if k < len(written):
                check_no_overlap(t)
                before_write(a)
            c = be.ascontiguousarray(a) if not a.flags.c_contiguous else a
            if c is not a and k < len(written):
                back.append((a, c))
            view = seen[id(t)] = be.flat_view(c)[:2]
        args += view
    args += [n if type(n) is bool else dt.type(n) for n in numbers]
    size = p._data.size
    be.run_row_kernel(kernel, -(-size // UPDATE_ROW), size * len(args) // 2,
                      (UPDATE_ROW, size, *args), dt)
    for a, c in back:
        be.copyto(a, c)
    for t, k in zip(written, bumps):
        t._version_cell[0] += k


class _RequiredParameter:
    """Marks a hyperparameter every parameter group must give (no default)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj) -> str:
    """``torch.typename``: a tensor's ``type()``, else the qualified name of the object."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def check_implementation_flags(foreach, fused, differentiable, capturable=False):
    """PyTorch's checks of the flags that pick an implementation. numbagrad has one
    implementation, whose values do not depend on ``foreach`` or ``fused``; a differentiable
    or capturable step is not supported."""
    if fused and differentiable:
        raise RuntimeError("`fused` does not support `differentiable`")
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
    if differentiable:
        raise NotImplementedError("numbagrad.optim does not support differentiable=True")
    if capturable:
        raise NotImplementedError("numbagrad.optim does not support capturable=True")


def check_adam_arguments(lr, eps, betas, weight_decay) -> None:
    """PyTorch's ValueError for the first invalid one of Adam's family's arguments (Adam,
    AdamW, Adamax, NAdam, RAdam check them in this order)."""
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    for i in (0, 1):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def weight_decay_numbers(group) -> tuple:
    """(decay, weight_decay) for an update kernel: the parameter is first multiplied by
    ``decay`` (decoupled weight decay, AdamW's; 1 without), then ``weight_decay`` times it is
    added to the gradient (L2; 0 with decoupled weight decay)."""
    weight_decay = group["weight_decay"]
    if weight_decay != 0 and group.get("decoupled_weight_decay"):
        return 1 - group["lr"] * weight_decay, 0
    return 1, weight_decay


def new_step(value: float = 0.0) -> Tensor:
    """The step count PyTorch keeps per parameter: a 0-dim float tensor on the CPU (float64
    when that is the default dtype, else float32)."""
    return tensor(float(value), dtype=D.float64 if D.default_float is D.float64 else D.float32)


def next_step(state) -> float:
    """Add one to ``state['step']`` and return the new count as a Python float."""
    step_t = state["step"]
    if not isinstance(step_t, Tensor):  # a count saved as a number (older checkpoints)
        step_t = state["step"] = new_step(step_t)
    # the count in Python then written back: a fill_ costs a tenth of an add_, and the float32
    # sum equals PyTorch's ``step_t += 1`` while the count is below 2**24
    step = step_t.item() + 1
    step_t.fill_(step)
    return step



class Optimizer:
    """Base class of all optimizers (``torch.optim.Optimizer``).

    ``params`` is an iterable of tensors, of ``(name, tensor)`` pairs, or of dicts that each
    define a parameter group (``{'params': [...], 'lr': ...}``); ``defaults`` fills the
    hyperparameters a group does not give.
    """

    def __init__(self, params, defaults: dict) -> None:
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                "dicts, but got " + _typename(params)
            )
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __getstate__(self) -> dict:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        # groups saved before a hyperparameter existed get its default
        for group in self.param_groups:
            for name, default in self.defaults.items():
                if default is not required:
                    group.setdefault(name, default)

    def __repr__(self) -> str:
        s = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"

    def add_param_group(self, param_group: dict) -> None:
        """Add a parameter group (a dict with ``'params'`` and optional hyperparameters)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list instead."
            )
        else:
            params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        param_group["params"] = [p[1] if isinstance(p, tuple) else p for p in params]
        if names:
            if len(names) != len(params):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names are "
                    "missing"
                )
            param_group["param_names"] = names
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is "
                    + _typename(p)
                )
            if not (p.is_leaf or p._retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required optimization parameter "
                    + name
                )
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len(set(params)):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, "
                "this will cause an error; see github.com/pytorch/pytorch/issues/40967 for more "
                "information",
                stacklevel=3,
            )
        param_set: set = set()
        for group in self.param_groups:
            param_set.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {which} to the optimizer"
                )
        if not param_set.isdisjoint(params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized tensors (to None, or to zeros)."""
        for group in self.param_groups:
            for p in group["params"]:
                grad = p._grad
                if grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if grad.grad_fn is not None:
                        grad.detach_()
                    else:
                        grad.requires_grad_(False)
                    grad.zero_()

    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the model and returns the
        loss, which ``step`` returns."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    grad = p._grad
                    if grad is not None:
                        self._update(p, grad, group)
        return loss

    def _update(self, p, grad, group) -> None:
        raise NotImplementedError

    def state_dict(self) -> dict:
        """The optimizer's state: ``{'state': {id: {...}}, 'param_groups': [{..., 'params':
        [ids]}]}``, parameters numbered in the order of the groups. The state's tensors are
        the optimizer's own (not copies), as in PyTorch."""
        param_mappings: dict = {}
        start = 0

        def pack_group(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                param_mappings.setdefault(id(p), i)
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {
            (param_mappings[id(k)] if isinstance(k, Tensor) else k): v
            for k, v in self.state.items()
        }
        return {"state": packed_state, "param_groups": param_groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Load a ``state_dict()``: its groups' hyperparameters replace this optimizer's, and its
        state tensors are cast to their parameter's dtype and device (``step`` is kept)."""
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of "
                "optimizer's group"
            )
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, key=None):
            if isinstance(value, Tensor):
                if key == "step":
                    return value
                if param.is_floating_point():
                    return value.to(dtype=param.dtype, device=param.device)
                return value.to(device=param.device)
            if isinstance(value, dict):
                return {k: cast(param, v, key=k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v) for v in value)
            return value

        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = cast(id_map[k], v)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
