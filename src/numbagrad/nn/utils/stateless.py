"""``nn.utils.stateless``: ``functional_call``, deprecated for ``func.functional_call``."""

from __future__ import annotations

import warnings

from ... import func

__all__ = ["functional_call"]

_DEPRECATED = (
    "`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be "
    "removed in a future version of PyTorch. Please use `torch.func.functional_call` instead "
    "which is a drop-in replacement."
)


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """``func.functional_call`` (deprecated) of one dict: call ``module`` with its parameters
    and buffers replaced by those of ``parameters_and_buffers`` (by name), then give it its
    own back."""
    # (PyTorch's text and category; every call warns, at the caller's line)
    warnings.warn(_DEPRECATED, FutureWarning, stacklevel=2)
    return func._functional_call(module, parameters_and_buffers, args, kwargs,
                                 tie_weights=tie_weights, strict=strict)
