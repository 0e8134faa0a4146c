"""``numbagrad.backends``: the switches PyTorch scripts set on ``torch.backends``.

numbagrad uses neither cuDNN nor Apple's MPS: ``cudnn.is_available()`` and
``mps.is_available()`` are False, and the cuDNN flags, which scripts set for speed or
reproducibility (``torch.backends.cudnn.deterministic = True``), are kept and have no effect,
as on a PyTorch built without cuDNN.
"""

from . import cudnn, mps  # noqa: F401
