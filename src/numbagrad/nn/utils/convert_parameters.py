"""``parameters_to_vector`` and ``vector_to_parameters``: parameters as one flat tensor."""

from __future__ import annotations

from ...ops import cat
from ...tensor import Tensor
from ..modules.module import typename

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_param_device(param: Tensor, old) -> object:
    if old is None:
        return param.device
    if param.device != old:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
    return old


def parameters_to_vector(parameters) -> Tensor:
    """The parameters flattened and joined into one vector."""
    device = None
    vec = []
    for param in parameters:
        device = _check_param_device(param, device)
        vec.append(param.view(-1))
    return cat(vec)


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Slices of ``vec`` become the parameters' data, in order."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {typename(vec)}")
    device = None
    pointer = 0
    for param in parameters:
        device = _check_param_device(param, device)
        n = param.numel()
        param.data = vec[pointer:pointer + n].view(param.shape).data
        pointer += n
