"""A duck-typed module and a DistributedDataParallel stand-in built from the same parts
(``numbagrad.distributed.reducer``) as ``nn.parallel.DistributedDataParallel``, whose
Module-specific shell these scripts do not need."""

from contextlib import contextmanager

import numpy as np

import numbagrad as torch
from numbagrad.distributed.reducer import Reducer, broadcast_tensors, find_tensors


class MLP:
    """4 -> 8 -> 1 with a ReLU; ``extra``: parameters the forward may leave unused."""

    def __init__(self, seed, extra=0):
        rng = np.random.default_rng(seed)

        def p(*shape):
            return torch.tensor(rng.standard_normal(shape).astype(np.float32) * 0.5,
                                requires_grad=True)
        self.w1, self.b1, self.w2, self.b2 = p(8, 4), p(8), p(1, 8), p(1)
        self.extra = [p(3) for _ in range(extra)]
        self.running = torch.tensor(rng.standard_normal(2).astype(np.float32))  # a buffer
        self.names = ["w1", "b1", "w2", "b2"] + [f"extra{i}" for i in range(extra)]

    def parameters(self):
        return [self.w1, self.b1, self.w2, self.b2, *self.extra]

    def buffers(self):
        return [self.running]

    def __call__(self, x, use_extra=()):
        out = (x @ self.w1.t() + self.b1).relu() @ self.w2.t() + self.b2
        for i in use_extra:
            out = out + self.extra[i].sum()
        return out


class StandInDDP:
    """What DistributedDataParallel does around its module, without the Module base."""

    def __init__(self, module, bucket_bytes_cap=25 * 2**20, find_unused_parameters=False,
                 gradient_as_bucket_view=False):
        self.module = module
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        broadcast_tensors([*module.parameters(), *module.buffers()])
        self.reducer = Reducer([p for p in module.parameters() if p.requires_grad],
                               bucket_bytes_cap, bucket_bytes_cap, find_unused_parameters,
                               gradient_as_bucket_view)

    def __call__(self, *args, **kwargs):
        sync = torch.is_grad_enabled() and self.require_backward_grad_sync
        if sync:
            self.reducer.prepare_for_forward()
        if self.require_forward_param_sync:
            broadcast_tensors(self.module.buffers())
        out = self.module(*args, **kwargs)
        if sync:
            self.reducer.prepare_for_backward(
                find_tensors(out) if self.find_unused_parameters else ())
        self.require_forward_param_sync = sync
        return out

    @contextmanager
    def no_sync(self):
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old
