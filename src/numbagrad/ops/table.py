"""The op table and the public names: what the definitions (registry.py) fill in, and what
the rest reads to find an op by name (``REGISTRY``) or to make the public API (``PUBLIC``)."""

from __future__ import annotations

from typing import Callable, NamedTuple

REGISTRY: dict = {}  # op name -> its OpDef (registry.py), filled as the definitions load


class Binding(NamedTuple):
    """A public spelling of an op or of a function of the functional layer."""

    name: str
    function: Callable
    # "function": numbagrad.<name>; "method": Tensor.<name>; "inplace": Tensor.<name>_;
    # "inplace_function": numbagrad.<name>_ too (PyTorch's set of these is irregular: abs_ but
    # not absolute_, sin_ but not mul_); "functional": numbagrad.nn.functional.<name>
    variants: frozenset
    method: Callable | None  # Tensor.<name> where it is not ``function`` with self first


PUBLIC: list[Binding] = []  # every public name, declared with what it names


def public(variants: str, name: str | None = None, aliases: str = "", method=None):
    """Declare the decorated function public as ``variants`` (see ``Binding``) under ``name``
    (its own by default) and each of ``aliases``. ``ops/__init__.py`` makes the name lists
    from these declarations, and tensor.py binds the methods."""

    def deco(fn):
        kinds = frozenset(variants.split())
        for n in [name or fn.__name__, *aliases.split()]:
            PUBLIC.append(Binding(n, fn, kinds, method))
        return fn

    return deco
