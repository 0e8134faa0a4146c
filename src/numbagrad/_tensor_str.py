"""PyTorch's ``torch._tensor_str`` names (``printoptions``, ``get_printoptions``,
``PRINT_OPTS``), which some programs reach for: numbagrad's printing lives in ``_printing``."""

from ._printing import PRINT_OPTS, get_printoptions, printoptions, set_printoptions

__all__ = ["PRINT_OPTS", "get_printoptions", "printoptions", "set_printoptions"]
