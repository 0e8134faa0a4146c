"""The layer classes of ``numbagrad.nn``, one module per family (as ``torch.nn.modules``)."""

from .activation import (ELU, GELU, LeakyReLU, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax,
                         Softplus, Tanh)
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .dropout import Dropout
from .flatten import Flatten, Unflatten
from .linear import Bilinear, Identity, Linear
from .module import Module
from .sparse import Embedding

__all__ = [
    "Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
    "Identity", "Linear", "Bilinear", "Flatten", "Unflatten", "Embedding", "Dropout",
    "ReLU", "LeakyReLU", "ELU", "GELU", "SiLU", "Tanh", "Sigmoid", "Softplus", "Softmax",
    "LogSoftmax",
]
