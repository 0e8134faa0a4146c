"""``weight_norm``: a module's parameter re-expressed as a direction ``<name>_v`` and a norm
``<name>_g`` (Salimans and Kingma, 2016), recomputed before each call by a forward pre-hook;
PyTorch's deprecated hook version (``parametrizations.weight_norm`` is not here)."""

from __future__ import annotations

import warnings

from ...ops import normalization as _N
from ..modules.module import Module
from ..parameter import Parameter, UninitializedParameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


def _norm_except_dim(v, pow, dim):
    """The ``pow``-norm of ``v`` over every dim but ``dim``, with size 1 there (-1: over all)."""
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        return v.contiguous().view(v.size(0), -1).norm(pow, 1).view(v.size(0),
                                                                      *[1] * (v.dim() - 1))
    if dim == v.dim() - 1:
        return v.contiguous().view(-1, v.size(-1)).norm(pow, 0).view(*[1] * (v.dim() - 1),
                                                                       v.size(-1))
    return _norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _weight_norm(v, g, dim):
    """``v * (g / |v|)``: one op (its node WeightNormInterfaceBackward0) along the first or the
    last dim, else composed, as PyTorch's ``_weight_norm``."""
    v, g = v.contiguous(), g.contiguous()
    if dim == 0 or dim == v.dim() - 1:
        return _N.weight_norm_interface(v, g, dim)
    return v * (g / _norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that sets ``<name>`` from ``<name>_g`` and ``<name>_v``."""

    def __init__(self, name: str, dim: int) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module):
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"),
                            self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int) -> WeightNorm:
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                      stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError(
                "The module passed to `WeightNorm` can't have uninitialized parameters. Make "
                "sure to run the dummy forward before applying weight normalization")
        del module._parameters[name]
        module.register_parameter(name + "_g",
                                  Parameter(_norm_except_dim(weight, 2, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Re-express ``module.<name>`` as ``<name>_g * <name>_v / |<name>_v|``, the norm over
    every dim but ``dim`` (None: over all of it)."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Make ``module.<name>`` a plain parameter again, of its current value."""
    return remove_reparametrization(module, WeightNorm, name, "weight_norm")


def remove_reparametrization(module: Module, kind: type, name: str, what: str) -> Module:
    """Take off ``module``'s forward pre-hook of class ``kind`` that recomputes ``name``
    (weight norm, spectral norm), leaving ``name`` a plain parameter; PyTorch's ValueError
    naming ``what`` when there is none."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, kind) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"{what} of '{name}' not found in {module}")
