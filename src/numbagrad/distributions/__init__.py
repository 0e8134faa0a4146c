"""Parameterizable probability distributions and sampling functions, as
``torch.distributions``: ``log_prob`` and ``rsample`` are built from recorded ops, so score
functions (REINFORCE) and reparameterized samples (VAEs) backpropagate."""

from . import constraints
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .kl import kl_divergence, register_kl
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .uniform import Uniform

__all__ = [
    "Bernoulli", "Categorical", "Distribution", "Normal", "OneHotCategorical", "Uniform",
    "constraints", "kl_divergence", "register_kl",
]
