"""``BatchNorm1d``/``2d``/``3d``: per-channel normalisation with the batch's statistics while
training and running statistics (buffers) in eval mode, as PyTorch's."""

from __future__ import annotations

from ... import dtypes, factory
from .. import functional as F
from .normalization import _affine_parameters
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]


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
