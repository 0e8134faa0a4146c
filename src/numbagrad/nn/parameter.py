"""``Parameter``: a leaf Tensor that a Module registers as one of its parameters; ``Buffer``;
``UninitializedParameter`` and ``UninitializedBuffer``: a parameter or buffer whose shape a
lazy module learns at its first call."""

from __future__ import annotations

from .. import serialization
from .._tensor import PLAIN_SUBCLASSES
from ..factory import empty
from ..tensor import Tensor


class Parameter(Tensor):
    """A Tensor sharing ``data``'s memory, a leaf that requires grad (unless told otherwise).

    >>> import numbagrad as torch
    >>> torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    Parameter containing:
    tensor([1., 2.], requires_grad=True)
    """

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        p = cls._make(data._data)
        # (shares data's version counter too: an in-place change to one shows in the other)
        p._version_cell = data._version_cell
        if requires_grad:
            if not p.dtype.is_floating_point:
                raise RuntimeError(
                    "Only Tensors of floating point and complex dtype can require gradients"
                )
            p._requires_grad = True
        return p

    def __init__(self, data=None, requires_grad=True):
        pass  # (not the legacy Tensor constructor: __new__ did the work)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        return (Parameter, (self.detach(), self._requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        p = Parameter(self.detach().clone(), self._requires_grad)
        if self._grad is not None:
            p._grad = self._grad.detach().clone()
        memo[id(self)] = p
        return p


# (to the ops a Parameter is a plain tensor: their fast paths take it; saved, it loads back as
# a Parameter)
PLAIN_SUBCLASSES.add(Parameter)
serialization.register_tensor_class(Parameter)


class UninitializedTensorMixin:
    """A parameter or buffer with no shape yet (it holds an empty tensor of its dtype and
    device) until ``materialize`` gives it one and makes it its ``cls_to_become``: a lazy
    module's, before its first call."""

    __slots__ = ()
    cls_to_become: type

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error "
            "usually happens in `load_state_dict` when trying to load an uninitialized "
            "parameter into an initialized one. Call `forward` to initialize the parameters "
            "before accessing their attributes.")

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give it memory of ``shape`` (uninitialized values), on ``device`` and of ``dtype``
        (by default its own), and make it its ``cls_to_become``."""
        device = self.device if device is None else device
        dtype = self.dtype if dtype is None else dtype
        self.data = empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    def detach(self):
        # (itself, as PyTorch's: what a lazy module's state_dict holds before its first call)
        return self

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        return (type(self), (self._requires_grad,))

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self._requires_grad, self.device, self.dtype)
        return memo[id(self)]


def is_lazy(t) -> bool:
    """Whether ``t`` is a parameter or buffer without its shape yet."""
    return isinstance(t, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return Parameter.__new__(cls, empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        b = cls._make(empty(0, device=device, dtype=dtype)._data)
        b.persistent = persistent
        if requires_grad:
            b._requires_grad = True
        return b

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass


class Buffer(Tensor):
    """Marks a Tensor assigned to a Module attribute as a buffer (``persistent``: whether it is
    in the ``state_dict``). The module stores a plain Tensor sharing its memory."""

    __slots__ = ()

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = empty(0)
        b = cls._make(data._data)
        b._version_cell = data._version_cell
        b.persistent = persistent
        return b

    def __init__(self, data=None, *, persistent=True):
        pass
