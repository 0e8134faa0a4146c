"""Optimizers: ``SGD`` and ``Adam`` with PyTorch's update rules and parameter groups."""

from .optimizer import SGD, Adam, Optimizer  # noqa: F401
