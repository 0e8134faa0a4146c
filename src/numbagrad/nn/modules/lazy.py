"""``LazyModuleMixin``: a module whose parameters (and buffers) are ``UninitializedParameter``
(``UninitializedBuffer``) until its first call, which gives them their shapes from the input
(``initialize_parameters``) and makes the module its ``cls_to_become`` (``LazyLinear`` becomes
``Linear``), as PyTorch's."""

from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ..parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Mixed in before a Module class; the lazy class defines ``initialize_parameters(*input)``
    and may name ``cls_to_become``."""

    cls_to_become = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters,
                                                               with_kwargs=True)

    def has_uninitialized_params(self) -> bool:
        return any(is_lazy(t) for t in (*self._parameters.values(), *self._buffers.values()))

    def initialize_parameters(self, *args, **kwargs) -> None:
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def _infer_parameters(self, module, args, kwargs=None):
        """The forward pre-hook of the first call: materialize, then stop being lazy."""
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        delattr(module, "_initialize_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs) -> None:
        # (a loaded entry gives an uninitialized parameter or buffer its shape; the copy comes
        # after)
        for name, t in (*self._parameters.items(), *self._buffers.items()):
            value = state_dict.get(prefix + name)
            if is_lazy(t) and value is not None and not is_lazy(value):
                with no_grad():
                    t.materialize(value.shape)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)
