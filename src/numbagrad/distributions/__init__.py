"""Parameterizable probability distributions and sampling functions, as
``torch.distributions``: ``log_prob`` and ``rsample`` are built from recorded ops, so score
functions (REINFORCE) and reparameterized samples (VAEs) backpropagate."""

from . import constraints
from .bernoulli import Bernoulli
from .beta import Beta
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .gamma import Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .uniform import Uniform

__all__ = [
    "Bernoulli", "Beta", "Categorical", "Dirichlet", "Distribution", "Exponential", "Gamma",
    "Independent", "Laplace", "LogNormal", "MultivariateNormal", "Normal", "OneHotCategorical",
    "Poisson", "Uniform",
    "constraints", "kl_divergence", "register_kl",
]
