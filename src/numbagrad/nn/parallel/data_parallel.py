"""DataParallel as PyTorch's CPU build has it: a wrapper that runs its module directly."""

from __future__ import annotations

from typing import Generic, TypeVar

from ..modules.module import Module

T = TypeVar("T", bound=Module)


class DataParallel(Module, Generic[T]):
    """Hold ``module`` (shown as ``(module)``, its state under ``module.`` keys) and call it
    on the inputs as they are. This is what PyTorch does where it finds no accelerator:
    ``device_ids`` becomes ``[]``, and ``output_device`` and ``dim`` are taken but not kept.
    numbagrad does the same on CUDA too (one device: nothing to split the batch across)."""

    def __init__(self, module: T, device_ids=None, output_device=None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
