"""DistributedDataParallel: a module whose replicas, one per rank, train as one. The
gradient averaging is ``numbagrad.distributed.Reducer``'s; this is the Module around it."""

from __future__ import annotations

from contextlib import contextmanager

from ...autograd.grad_mode import is_grad_enabled
from ...distributed.c10d import _pg
from ...distributed.reducer import (
    DEFAULT_BUCKET_CAP_MB, DEFAULT_FIRST_BUCKET_BYTES, MB, Reducer, broadcast_tensors,
    find_tensors,
)
from ..modules.module import Module


class DistributedDataParallel(Module):
    """Wrap ``module`` (the same on every rank): parameters and buffers start as rank 0's, and
    each backward pass through its forward leaves in every ``.grad`` the mean over the ranks,
    all-reduced in buckets of ``bucket_cap_mb`` while the pass runs. ``no_sync()`` skips
    that for gradient accumulation.

    Taken and not used (one process per rank, on CPU or its one GPU): ``device_ids``,
    ``output_device``, ``dim``, ``check_reduction``, ``static_graph``.
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, init_sync=True, process_group=None,
                 bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        super().__init__()
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        self.module = module
        self.device_ids = device_ids
        self.process_group = _pg(process_group)
        self.broadcast_buffers = broadcast_buffers is not False
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        if init_sync:
            broadcast_tensors([*module.parameters(), *module.buffers()], 0, process_group)
        cap = DEFAULT_BUCKET_CAP_MB if bucket_cap_mb is None else bucket_cap_mb
        self.reducer = Reducer(
            params, int(cap * MB),
            DEFAULT_FIRST_BUCKET_BYTES if bucket_cap_mb is None else int(cap * MB),
            find_unused_parameters, gradient_as_bucket_view, process_group)

    def forward(self, *inputs, **kwargs):
        sync = is_grad_enabled() and self.require_backward_grad_sync
        if sync:
            self.reducer.prepare_for_forward()
        if self.broadcast_buffers and self.require_forward_param_sync:
            buffers = list(self.module.buffers())
            if buffers:
                broadcast_tensors(buffers, 0, self.process_group)
        output = self.module(*inputs, **kwargs)
        if sync:
            self.reducer.prepare_for_backward(
                find_tensors(output) if self.find_unused_parameters else ())
        self.require_forward_param_sync = sync
        return output

    @contextmanager
    def no_sync(self):
        """Backward passes of forwards run inside only accumulate ``.grad`` locally; the first
        synchronised pass after averages the accumulated gradients."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old
