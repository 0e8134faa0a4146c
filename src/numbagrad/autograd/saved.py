"""SavedTensor: a tensor an op or a custom Function keeps for its backward, with the version
it had when saved, so that the backward can tell it was modified in place since."""

from __future__ import annotations

from .._tensor import Tensor
from ..dtypes import _BY_NP, SCALAR_TYPE
from .grad_mode import is_grad_enabled


class SavedTensor:
    """A tensor kept for backward, with the version it had when saved.

    A lazy tensor (``ops/lazy.py``) is kept as its expression: ``data`` is None until
    ``array()`` evaluates it, and the backward fusion may compute it instead."""

    __slots__ = ("tensor", "data", "expr", "version_cell", "version", "is_output", "dtype",
                 "fw_grad")

    def __init__(self, tensor, is_output: bool, dtype=None):
        self.is_output = is_output
        # a saved output's forward-mode tangent, given back when unpacked (ops/forward.py:
        # a backward run inside a dual level is then differentiated forward too)
        self.fw_grad = None
        # an output is not kept as a Tensor (that would make a cycle through its grad_fn)
        self.tensor = None if is_output else tensor
        expr = self.expr = tensor._lazy
        if expr is None:
            data = self.data = tensor._data
            if dtype is None:  # (Tensor.dtype's lookup, without the property's call)
                dtype = _BY_NP.get(data.dtype)
        else:
            self.data = None
            expr.saved = True  # (a forward evaluation keeps it if it is heavy: lazy.py)
        self.dtype = tensor.dtype if dtype is None else dtype
        self.version_cell = tensor._version_cell
        self.version = tensor._version_cell[0]

    @classmethod
    def _of(cls, tensor, data, version_cell, version, dtype):
        """One rebuilt from an item of a lean node's ``_saved`` (``tensor`` None: the op's
        output)."""
        s = object.__new__(cls)
        s.is_output = tensor is None
        s.tensor = tensor
        s.expr = None
        s.data = data
        s.dtype = dtype
        s.version_cell = version_cell
        s.version = version
        s.fw_grad = None
        return s

    def array(self):
        """The saved values as an array."""
        a = self.data
        if a is None:
            a = self.data = self.expr.evaluate()
            self.expr = None
        return a

    def check(self, node, index: int):
        if self.version_cell[0] != self.version:
            shape = list(self.array().shape)
            kind = SCALAR_TYPE[self.dtype.name]
            if self.is_output:
                where = f", which is output {index} of {node.name()},"
            elif self.tensor.grad_fn is not None:
                fn = self.tensor.grad_fn
                where = f", which is output {self.tensor._output_nr} of {fn.name()},"
            else:
                where = ""
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [numbagrad.{kind}Tensor {shape}]{where} is at "
                f"version {self.version_cell[0]}; expected version {self.version} instead. Hint: "
                "enable anomaly detection to find the operation that failed to compute its "
                "gradient, with numbagrad.autograd.set_detect_anomaly(True, check_nan=False)."
            )

    def unpack(self, node, index: int = 0):
        self.check(node, index)
        if not self.is_output:
            return self.tensor
        t = Tensor._make(self.array(), requires_grad=False)
        t._version_cell = self.version_cell
        if self.fw_grad is not None:
            t._fw_grad = self.fw_grad
        if is_grad_enabled() and t.dtype.is_floating_point:
            # a saved output re-enters the graph through the node that made it (not an
            # integer one, cummax's indices: it has no gradient)
            t._requires_grad = True
            t.grad_fn = node
            t._output_nr = index
        return t
