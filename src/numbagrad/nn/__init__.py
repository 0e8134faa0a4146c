"""``numbagrad.nn``: modules, parameters, initializations and the functional API, laid out as
``torch.nn``."""

from . import attention, functional, grad, init, parallel, utils  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from .parallel import DataParallel
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = ["functional", "grad", "init", "parallel", "utils", "Parameter", "Buffer",
           "UninitializedParameter", "UninitializedBuffer", "DataParallel", *_modules_all]
