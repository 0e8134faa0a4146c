"""Parametrizations built on ``parametrize``: ``weight_norm`` (PyTorch's ``orthogonal`` and
``spectral_norm`` are not here)."""

from __future__ import annotations

from ..modules.module import Module
from . import parametrize
from .weight_norm import _norm_except_dim, _weight_norm

__all__ = ["weight_norm"]


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Re-express ``module.<name>`` as ``g * v / |v|`` (the norm over every dim but ``dim``;
    None: over all of it): ``g`` is ``parametrizations.<name>.original0``, ``v``
    ``original1``."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module
