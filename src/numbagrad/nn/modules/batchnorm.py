"""``BatchNorm1d``/``2d``/``3d``: per-channel normalisation with the batch's statistics while
training and running statistics (buffers) in eval mode, as PyTorch's."""

from __future__ import annotations

from ... import dtypes, factory
from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..parameter import UninitializedBuffer, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module
from .normalization import _affine_parameters

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d"]


class _NormBase(Module):
    """What batch and instance normalisation share: the affine parameters, the running
    statistics' buffers, and the repr."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device=None,
                 dtype=None, bias: bool = True) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        _affine_parameters(self, (num_features,), affine, bias, device, dtype)
        if track_running_stats:
            kw = {"device": device, "dtype": dtype}
            self.register_buffer("running_mean", factory.zeros(num_features, **kw))
            self.register_buffer("running_var", factory.ones(num_features, **kw))
            self.register_buffer("num_batches_tracked",
                                 factory.tensor(0, dtype=dtypes.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    _dims: tuple  # the input ranks accepted, and their wording in the error
    _dims_text: str

    def forward(self, input):
        if input.ndim not in self._dims:
            raise ValueError(f"expected {self._dims_text} input (got {input.ndim}D input)")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            # without a momentum, the running statistics are the mean over all batches
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else factor
        batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        use_running = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_running else None,
                            self.running_var if use_running else None, self.weight, self.bias,
                            batch_stats, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    _dims, _dims_text = (2, 3), "2D or 3D"


class BatchNorm2d(_BatchNorm):
    _dims, _dims_text = (4,), "4D"


class BatchNorm3d(_BatchNorm):
    _dims, _dims_text = (5,), "5D"


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """A normalisation whose ``num_features`` is its first input's dim 1: until then its
    parameters and running statistics are uninitialized (PyTorch's defaults: affine, with
    running statistics, for instance norm too); then it is its ``cls_to_become``."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True) -> None:
        super().__init__(0, eps, momentum, False, False, device, dtype)
        self.affine, self.track_running_stats = affine, track_running_stats
        kw = {"device": device, "dtype": dtype}
        if affine:
            self.weight = UninitializedParameter(**kw)
            if bias:  # (else it stays None, as the base class set it, and is never made)
                self.bias = UninitializedParameter(**kw)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(**kw)
            self.running_var = UninitializedBuffer(**kw)
            self.num_batches_tracked = factory.tensor(0, dtype=dtypes.int64, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        if self.has_uninitialized_params():
            self.num_features = n = input.shape[1]
            with no_grad():
                if self.affine:
                    self.weight.materialize((n,))
                    if self.bias is not None:
                        self.bias.materialize((n,))
                if self.track_running_stats:
                    self.running_mean.materialize((n,))
                    self.running_var.materialize((n,))
                self.reset_parameters()


def lazy_norm(base):
    """The lazy class of normalisation ``base`` (``LazyBatchNorm2d`` of ``BatchNorm2d``)."""
    lazy = type("Lazy" + base.__name__, (_LazyNormBase, base), {"cls_to_become": base})
    lazy.__module__ = base.__module__
    return lazy


LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d = map(lazy_norm, (BatchNorm1d, BatchNorm2d,
                                                                    BatchNorm3d))
