"""Tensor: NumPy storage plus the autograd state PyTorch users expect."""

from __future__ import annotations

import math
import sys
import warnings

import numpy as np

from . import dtypes as D
from .autograd.grad_mode import _state as _grad_state
from .autograd.grad_mode import is_grad_enabled
from .autograd.graph import _TENSOR, HookDict, RemovableHandle, grad_accumulator


class Size(tuple):
    """A tensor's shape: a tuple that prints as ``numbagrad.Size([3, 4])``."""

    def __repr__(self) -> str:
        return f"numbagrad.Size({list(self)})"

    __str__ = __repr__

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


class device:
    """Where a tensor lives: ``device('cpu')``, ``device('cuda')``, ``device('cuda:0')``."""

    __slots__ = ("type", "index")

    def __init__(self, type_="cpu", index=None):
        if isinstance(type_, device):
            type_, index = type_.type, type_.index
        if isinstance(type_, str) and ":" in type_:
            type_, idx = type_.split(":", 1)
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type_}:{idx}'")
            index = int(idx)
        if type_ not in ("cpu", "cuda"):
            raise RuntimeError(
                "Expected one of cpu, cuda device type at start of device string: " + str(type_)
            )
        if type_ == "cpu" and index not in (None, 0):
            raise RuntimeError(f"CPU device index must be -1 or zero, got {index}")
        self.type = type_
        self.index = index

    def __repr__(self):
        idx = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{idx})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


CPU = device("cpu")
CUDA0 = device("cuda", 0)


_default_device = [None]


def set_default_device(dev) -> None:
    """Where factories put tensors when no ``device=`` is given (None: the CPU)."""
    _default_device[0] = None if dev is None else _check_device(dev)


def get_default_device() -> device:
    return _default_device[0] or CPU


def _check_device(dev):
    """``dev`` as a device (None: the default device, or None for the CPU); CUDA must exist."""
    if dev is None:
        return _default_device[0]
    d = dev if isinstance(dev, device) else device(dev)
    if d.type == "cuda":
        from . import cuda

        cuda._require(d.index)
        return CUDA0
    return CPU


def _on(data, dev):
    """Host array ``data`` moved to ``dev`` (None or cpu: left as is)."""
    if dev is None or dev.type == "cpu":
        return data
    from .backend import gpu

    return gpu.to_device(data)


_BACKWARD: list = []  # autograd.backward, bound on first use


class Tensor:
    """A multi-dimensional array that can record the operations applied to it.

    >>> import numbagrad as torch
    >>> x = torch.tensor([4.0], requires_grad=True)
    >>> y = x * x
    >>> y.backward()
    >>> x.grad
    tensor([8.])
    """

    # Two attributes every tensor sets; the rest start as the class defaults below and are
    # written only when they change (a new tensor costs two attribute writes, not twelve).
    __slots__ = ("_data", "_version_cell", "__weakref__", "__dict__")
    _requires_grad = False
    _grad_fn = None
    _output_nr = 0
    _grad = None
    _base = None
    _view_src = None
    _view_kind = None
    _accumulator = None
    _hooks = None
    _retains_grad = False
    _lazy = None  # an unevaluated expression (only on a LazyTensor; see ops/lazy.py)
    _inference = False  # made under inference_mode(): keeps no version counter

    # allow NumPy binary ops to defer to our reflected operators
    __array_priority__ = 1000

    def __new__(cls, *args, **kwargs):
        return object.__new__(cls)

    def __init__(self, *args, dtype=None, device=None, requires_grad=False):
        # the legacy constructor: Tensor(data) or Tensor(*sizes), float32 by default
        dev = _check_device(device)
        dt = D.as_dtype(dtype) if dtype is not None else D.default_float
        if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
            data = np.array(_unwrap(args[0]), dtype=dt.np)
        else:
            shape = args[0] if len(args) == 1 and isinstance(args[0], tuple) else args
            data = np.empty(tuple(int(s) for s in shape), dtype=dt.np)
        Tensor._init(self, _on(data, dev), requires_grad)

    @staticmethod
    def _init(self, data, requires_grad=False):
        self._data = data
        self._version_cell = [0]
        if requires_grad:
            self._requires_grad = True
        if _grad_state.inference:
            self._inference = True

    @classmethod
    def _make(cls, data: np.ndarray, requires_grad: bool = False) -> Tensor:
        t = object.__new__(cls)
        t._data = data
        t._version_cell = [0]
        if requires_grad:
            t._requires_grad = True
        if _grad_state.inference:
            t._inference = True
        return t

    # ------------------------------------------------------------ basic attributes

    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim=None):
        shape = self.shape
        return shape if dim is None else shape[_wrap_dim(dim, len(shape))]

    @property
    def dtype(self) -> D.dtype:
        return D.from_numpy_dtype(self._data.dtype)

    @property
    def device(self) -> device:
        return CPU if type(self._data) is np.ndarray else CUDA0

    @property
    def is_cuda(self) -> bool:
        return type(self._data) is not np.ndarray

    def _host(self) -> np.ndarray:
        """The values as a NumPy array (a copy for a CUDA tensor)."""
        a = self._data
        return a if type(a) is np.ndarray else a.get()

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self.ndim

    def numel(self) -> int:
        return self._data.size

    def nelement(self) -> int:
        return self.numel()

    def element_size(self) -> int:
        return self._data.itemsize

    def stride(self, dim=None):
        st = tuple(s // self._data.itemsize for s in self._data.strides)
        return st if dim is None else st[_wrap_dim(dim, self.ndim)]

    def is_contiguous(self) -> bool:
        return self._data.flags.c_contiguous

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def data_ptr(self) -> int:
        a = self._data
        if type(a) is np.ndarray:
            return a.ctypes.data
        return a.__cuda_array_interface__["data"][0]

    def __dlpack__(self, stream=None, **kwargs):
        """Export a CPU tensor through DLPack (NumPy's implementation; no copy)."""
        if type(self._data) is not np.ndarray:
            raise BufferError(
                "numbagrad exports only CPU tensors through DLPack; a CUDA tensor offers "
                "__cuda_array_interface__"
            )
        if self._requires_grad:
            raise RuntimeError(
                "Can't export tensors that require gradient, use tensor.detach()"
            )
        _lazy_ops.escape(self._data)
        return self._data.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self):
        if type(self._data) is not np.ndarray:
            return (2, 0)  # kDLCUDA
        return self._data.__dlpack_device__()

    @property
    def __cuda_array_interface__(self):
        """Version 3 of Numba's CUDA Array Interface, for a CUDA tensor (no copy)."""
        if type(self._data) is np.ndarray:
            raise AttributeError(
                "Can't get __cuda_array_interface__ on non-CUDA tensor type: "
                f"numbagrad.{_TYPE_NAMES[self.dtype.name]} If CUDA data is required use "
                "tensor.cuda() to copy tensor to device memory."
            )
        if self._requires_grad:
            raise RuntimeError(
                "Can't get __cuda_array_interface__ on Variable that requires grad. If gradients "
                "aren't required, use var.detach() to get Variable that doesn't require grad."
            )
        return self._data.__cuda_array_interface__

    @property
    def grad_fn(self):
        """The node that made this tensor (None for a leaf)."""
        base = self._base
        if base is not None and base._grad_fn is not self._view_src:
            _F.refresh_view(self)
        return self._grad_fn

    @grad_fn.setter
    def grad_fn(self, node) -> None:
        self._grad_fn = node

    @property
    def output_nr(self) -> int:
        """Which output of ``grad_fn`` this tensor is."""
        self.grad_fn  # a view re-derives its node first
        return self._output_nr

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def requires_grad(self) -> bool:
        base = self._base
        if base is not None and base._grad_fn is not self._view_src:
            _F.refresh_view(self)
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        # (PyTorch's wording differs between the setter and requires_grad_, and so here)
        if self.grad_fn is not None:
            if not value:
                raise RuntimeError(_ERR_NON_LEAF_FLAG)
            raise RuntimeError("you can only change requires_grad flags of leaf variables.")
        if value and not self.dtype.is_floating_point:
            raise RuntimeError(
                "only Tensors of floating point and complex dtype can require gradients"
            )
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(_ERR_NON_LEAF_FLAG)
            return self  # a non-leaf requires grad already
        if requires_grad and not self.dtype.is_floating_point:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def volatile(self) -> bool:
        """Always False: volatile was replaced by ``no_grad`` (PyTorch 0.4)."""
        warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning,
                      stacklevel=2)
        return False

    @property
    def _version(self) -> int:
        if self._inference:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._version_cell[0]

    def is_inference(self) -> bool:
        """Whether this tensor was made under ``inference_mode()`` (or is a view of one)."""
        return self._inference

    def _is_view(self) -> bool:
        """Whether this tensor is a view of another (its ``_base``)."""
        return self._base is not None

    def _bump(self) -> None:
        self._version_cell[0] += 1

    # ------------------------------------------------------------ grad

    @property
    def grad(self):
        if self._grad is None and self.grad_fn is not None and not self._retains_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                ".grad attribute won't be populated during autograd.backward(). If you indeed "
                "want the .grad field to be populated for a non-leaf Tensor, use .retain_grad() "
                "on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
                "you access the leaf Tensor instead.",
                UserWarning,
                stacklevel=2,
            )
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}"
                )
            if value.shape != self.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor "
                    f"of size '{list(self.shape)}'. Please ensure that the gradient and the "
                    "tensor are the same size"
                )
            if value.dtype is not self.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_C_NAMES[value.dtype.name]}' "
                    f"to a tensor with grad_dtype '{_C_NAMES[self.dtype.name].capitalize()}'. "
                    "The gradient must match the tensor's grad_dtype (defaults to the tensor's "
                    "dtype)."
                )
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        # PyTorch's ``del t.grad`` sets it to None
        self._grad = None

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate the gradient of this tensor into the leaves' ``.grad``."""
        if not _BACKWARD:  # (an import statement per call costs a microsecond)
            from .autograd import backward

            _BACKWARD.append(backward)
        _BACKWARD[0](self, gradient, retain_graph, create_graph, inputs=inputs)

    def register_hook(self, hook) -> RemovableHandle:
        """Call ``hook(grad)`` when this tensor's gradient is computed; it may return a new one."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        node = self.grad_fn if self.grad_fn is not None else grad_accumulator(self)
        table = node._own("_tensor_hooks")
        hooks = table.get(self._output_nr)
        if hooks is None:
            hooks = table[self._output_nr] = HookDict()
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if self.grad_fn is None:
            # keep the accumulator (and so the hook) alive as long as the leaf
            self._hooks = node
        return handle

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after backward."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        self._retains_grad = True
        node = self.grad_fn

        def capture(grad, ref=_weak(self)):
            t = ref()
            if t is not None:
                if t._grad is None:
                    t._grad = grad.detach().clone() if not is_grad_enabled() else grad
                else:
                    t._grad = t._grad + grad
        node._own("_retain_grad_hooks")[self._output_nr] = capture

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def detach(self) -> Tensor:
        """A new leaf sharing storage, outside the graph."""
        t = Tensor._make(self._data)
        t._version_cell = self._version_cell
        # an alias: an inference tensor exactly when the source is one (as in PyTorch)
        if t._inference is not self._inference:
            t._inference = self._inference
        return t

    def detach_(self) -> Tensor:
        if self._base is not None and self.grad_fn is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead."
            )
        self.grad_fn = None
        self._requires_grad = False
        return self

    @property
    def data(self) -> Tensor:
        t = Tensor._make(self._data)
        if t._inference is not self._inference:  # (an alias, as ``detach``)
            t._inference = self._inference
        return t

    @data.setter
    def data(self, value: Tensor) -> None:
        data = value._data
        if self._lazy is not None:
            _settle(self)
        self._data = data

    # ------------------------------------------------------------ conversion

    def numpy(self, force: bool = False) -> np.ndarray:
        if type(self._data) is not np.ndarray:
            if force:
                return self._data.get()
            raise TypeError(
                f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() to "
                "copy the tensor to host memory first."
            )
        # refused only while grad mode is on: under no_grad (and so in a custom Function's
        # forward) PyTorch hands out the array of a tensor that requires grad
        if self._requires_grad and _grad_state.enabled and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        a = self._data
        _lazy_ops.escape(a)  # NumPy code may now write to it
        return a

    def __array__(self, dtype=None, copy=None):
        if self._requires_grad or type(self._data) is not np.ndarray:
            # NumPy conversion of a graph or CUDA tensor goes through numpy() and its refusal
            self.numpy()
        # NumPy 2's protocol: copy=True copies, copy=False refuses a copy, None copies only
        # when the dtype asks for it
        a = self._data
        if dtype is not None and np.dtype(dtype) != a.dtype:
            if copy is False:
                raise ValueError("Unable to avoid copy while creating an array as requested.")
            return a.astype(dtype)
        if copy:
            return a.copy()
        _lazy_ops.escape(a)  # NumPy code may now write to it
        return a

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        return self._host().reshape(-1)[0].item()

    def tolist(self):
        return self._host().tolist()

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with {'more than one' if self._data.size else 'no'} "
                "value is ambiguous"
            )
        return bool(self._host().reshape(-1)[0])

    def __float__(self) -> float:
        return float(self._scalar())

    def __int__(self) -> int:
        return int(self._scalar())

    def _scalar(self):
        """The one value, for ``float(t)`` and ``int(t)`` (PyTorch's ValueError there)."""
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __hash__(self):
        return id(self)

    def __repr__(self) -> str:
        from ._printing import tensor_repr

        return tensor_repr(self)

    __str__ = __repr__

    def __format__(self, spec):
        # a 0-d tensor formats as its Python number, even with an empty spec (f"{t}" of
        # tensor(2.5) is '2.5'); any other tensor takes object.__format__: str() for an empty
        # spec, TypeError for any other (PyTorch's Tensor.__format__; a subclass other than
        # the lazy tensor, as PyTorch's own subclasses, takes the second way)
        if self._data.ndim == 0 and (type(self) is Tensor or type(self) is Tensor._Lazy):
            return format(self.item(), spec)
        return object.__format__(self, spec)

    def __reduce_ex__(self, proto):
        return (_rebuild, (self._host(), self._requires_grad, str(self.device)))

    def __deepcopy__(self, memo):
        t = Tensor._make(self._data.copy(), self._requires_grad)
        if self._grad is not None:
            t._grad = Tensor._make(self._grad._data.copy())
        memo[id(self)] = t
        return t

    def to(self, *args, **kwargs) -> Tensor:
        """``to(dtype)``, ``to(device)``, ``to(device, dtype)`` or ``to(other)``."""
        dt = kwargs.get("dtype")
        dev = kwargs.get("device")
        for a in args:
            if isinstance(a, Tensor):
                dt, dev = a.dtype, a.device
            elif isinstance(a, (str, device)):
                dev = a
            elif a is not None:
                dt = a
        dev = _check_device(dev) if dev is not None else None
        out = self
        if dev is not None and dev != self.device:
            out = _F.to_device(out, dev)
        if dt is not None and D.as_dtype(dt) is not out.dtype:
            out = _F.to_dtype(out, D.as_dtype(dt))
        return out

    def cuda(self, device=None, non_blocking=False):
        """A copy on the GPU (this tensor itself if it is there already)."""
        return self.to("cuda" if device is None else (
            f"cuda:{device}" if isinstance(device, int) else device))

    def cpu(self):
        return self.to(CPU)

    def type(self, dtype=None):
        if dtype is None:
            return f"numbagrad.{_TYPE_NAMES[self.dtype.name]}"
        return self.to(dtype)

    def float(self):
        return self.to(D.float32)

    def double(self):
        return self.to(D.float64)

    def long(self):
        return self.to(D.int64)

    def int(self):
        return self.to(D.int32)

    def bool(self):
        return self.to(D.bool_)

    def new_tensor(self, data, dtype=None, requires_grad=False):
        from .factory import tensor

        return tensor(data, dtype=dtype or self.dtype, device=self.device,
                      requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None):
        from .factory import zeros

        return zeros(*size, dtype=dtype or self.dtype, device=self.device)

    def new_ones(self, *size, dtype=None):
        from .factory import ones

        return ones(*size, dtype=dtype or self.dtype, device=self.device)

    def new_full(self, size, fill_value, dtype=None):
        from .factory import full

        return full(size, fill_value, dtype=dtype or self.dtype, device=self.device)

    def new_empty(self, *size, dtype=None):
        from .factory import empty

        return empty(*size, dtype=dtype or self.dtype, device=self.device)

    # ------------------------------------------------------------ operators

    def __sub__(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return _F.sub(self, other)

    def __rsub__(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return _F.rsub(self, other)

    def __truediv__(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return _F.div(self, other)

    def __rtruediv__(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return _F.rdiv(self, other)

    def __mod__(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return _F.remainder(self, other)

    def __rmod__(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return _F.rremainder(self, other)

    def __floordiv__(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return _F.floor_divide(self, other)

    def __rfloordiv__(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return _F.rfloor_divide(self, other)

    def __pow__(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return _F.pow(self, other)

    def __rpow__(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return _F.rpow(self, other)

    def __matmul__(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return _F.matmul(self, other)

    def __rmatmul__(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return _F.matmul(other, self)

    def __pos__(self):
        return self

    def __invert__(self):
        return _F.bitwise_not(self)

    # (bitwise, as PyTorch's: on bool tensors they are the logical ops)
    def __and__(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return _F.bitwise_and(self, other)

    __rand__ = __and__

    def __or__(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return _F.bitwise_or(self, other)

    __ror__ = __or__

    def __xor__(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return _F.bitwise_xor(self, other)

    __rxor__ = __xor__

    def __eq__(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return _F.eq(self, other)

    def __ne__(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return _F.ne(self, other)

    def __lt__(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return _F.lt(self, other)

    def __le__(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return _F.le(self, other)

    def __gt__(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return _F.gt(self, other)

    def __ge__(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return _F.ge(self, other)

    def __getitem__(self, index):
        return _F.getitem(self, index)

    def __setitem__(self, index, value):
        _F.setitem(self, index, value)

    # in-place operators
    def __iadd__(self, other):
        return self.add_(other)

    def __isub__(self, other):
        return self.sub_(other)

    def __imul__(self, other):
        return self.mul_(other)

    def __itruediv__(self, other):
        return self.div_(other)

    @property
    def T(self):
        if self.ndim == 0:
            _warn_once("T0", "Tensor.T is deprecated on 0-D tensors. This function is the identity "
                             "in these cases.")
        elif self.ndim != 2:
            _warn_once("T", _WARN_T)
        return _F.permute(self, tuple(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self):
        if self.ndim < 2:
            if self.ndim == 1:
                raise RuntimeError(
                    "tensor.mT is only supported on matrices or batches of matrices. Got 1-D "
                    "tensor."
                )
            _warn_once("mT0", "Tensor.mT is deprecated on 0-D tensors. This function is the "
                              "identity in these cases.")
            return self  # (PyTorch returns the tensor itself: no node, no view)
        return _F.transpose(self, -2, -1)


_WARN_T = (
    "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated "
    "and it will throw an error in a future release. Consider `x.mT` to transpose batches of "
    "matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a "
    "tensor."
)
_WARNED_ONCE: set = set()  # PyTorch gives these deprecation warnings once per process


def _warn_once(key, message):
    if key not in _WARNED_ONCE:
        _WARNED_ONCE.add(key)
        warnings.warn(message, UserWarning, stacklevel=3)


_TYPE_NAMES = {
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "int64": "LongTensor",
    "int32": "IntTensor",
    "bool": "BoolTensor",
}


_C_NAMES = {"float32": "float", "float64": "double", "int64": "long", "int32": "int",
            "bool": "bool"}

_ERR_NON_LEAF_FLAG = (
    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
    "variable in a subgraph that doesn't require differentiation use var_no_grad = "
    "var.detach()."
)


def _weak(t):
    import weakref

    return weakref.ref(t)


def _rebuild(data, requires_grad, dev="cpu"):
    return Tensor._make(_on(data, _check_device(dev)), requires_grad)


def _unwrap(data):
    """Nested lists/tuples of Tensors and numbers as plain Python/NumPy data."""
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, (list, tuple)):
        return [_unwrap(d) for d in data]
    return data


def _wrap_dim(dim, ndim):
    lo, hi = (-ndim, ndim - 1) if ndim else (-1, 0)
    if not isinstance(dim, (int, np.integer)):
        raise TypeError(f"dim must be an int, got {type(dim).__name__}")
    if dim < lo or dim > hi:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})"
        )
    return dim % ndim if ndim else 0


def accumulate_into_grad(t: Tensor, grad: Tensor, unshared: bool = False) -> None:
    """Add ``grad`` into ``t.grad`` (in place unless the backward pass is being recorded).

    ``unshared``: nothing else refers to ``grad`` or its memory, so a first ``.grad`` may take
    its array instead of a copy (PyTorch steals such a gradient too).
    """
    if type(grad) is Tensor and type(t) is Tensor:  # (the arrays: no Size, no dtype lookup)
        gd, td = grad._data, t._data
        same = gd.shape == td.shape and gd.dtype == td.dtype
        gd = td = None
    else:
        same = False
    if not same:
        if grad.shape != t.shape:
            grad = grad.expand(t.shape) if grad.ndim <= t.ndim else grad.reshape(t.shape)
            unshared = False
        if grad.dtype is not t.dtype:
            grad = grad.to(t.dtype)
            unshared = False
    if t._grad is None:
        if is_grad_enabled():
            t._grad = grad
        elif unshared:
            t._grad = Tensor._make(grad._data)
        else:
            # .grad owns its memory: never an alias of another tensor or an expanded view
            data = grad._data
            if type(data) is np.ndarray:
                from .backend import cpu

                t._grad = Tensor._make(cpu.empty(data.shape, data.dtype))
                np.copyto(t._grad._data, data)
            else:
                t._grad = Tensor._make(data.copy())
    elif is_grad_enabled():
        t._grad = t._grad + grad
    else:
        _F.add_(t._grad, grad)


# ---------------------------------------------------------------- gradient ownership
# AccumulateGrad may hand a gradient's array to ``.grad`` when nothing else can see it. That
# is judged by reference counts, each taken through one of these functions; what each returns
# for an unshared value is measured once on a probe of the same structure, because the count
# a given call shape sees differs between Python versions.


def _refs(x) -> int:
    return sys.getrefcount(x)


def _tensor_refs(grads) -> int:
    return _refs(grads[0])


def _array_refs(t) -> int:
    return _refs(t._data)


def _base_refs(a) -> int:
    return _refs(a.base)


def _probe_counts():
    block = np.empty(16, np.uint8)
    pool = [block]  # held like a pool block
    t = Tensor._make(block.view(np.float32))
    del block
    grads = [t]
    del t
    counts = _tensor_refs(grads), _array_refs(grads[0]), _base_refs(grads[0]._data)
    del pool
    return counts


_UNSHARED_TENSOR, _UNSHARED_ARRAY, _UNSHARED_BLOCK = _probe_counts()


def gradient_is_unshared(grads) -> bool:
    """Whether the CPU tensor ``grads[0]`` is referred to by nothing but the list ``grads``,
    and its memory by nothing but it: a fresh, contiguous kernel output whose array owns its
    memory or is the only array on a pool block."""
    if _tensor_refs(grads) != _UNSHARED_TENSOR:
        return False
    g = grads[0]
    a = g._data
    if type(a) is not np.ndarray or not a.flags.carray or g._base is not None:
        return False
    del a, g
    if _array_refs(grads[0]) != _UNSHARED_ARRAY:
        return False
    base = grads[0]._data.base
    if base is None:
        return True
    from .backend import cpu

    ok = cpu.is_pool_block(base)
    del base
    return ok and _base_refs(grads[0]._data) == _UNSHARED_BLOCK


# the class the hot paths make tensors of without an import (autograd/graph.py)
_TENSOR[:] = [Tensor]

from . import ops as _F  # noqa: E402  (ops need the Tensor class defined above)
from .ops import lazy as _lazy_ops  # noqa: E402
from .ops.dispatch import NUMBERS as _NUMBERS  # noqa: E402

# what an operator takes: a Tensor or a number (else NotImplemented: Python's TypeError)
_OPERANDS = (Tensor, *_NUMBERS)


class LazyTensor(Tensor):
    """A Tensor whose values are an unevaluated expression (``ops/lazy.py``).

    Its shape, dtype and device come from the expression; reading ``_data`` (any use of the
    values) evaluates it, and the object becomes a plain ``Tensor``.
    """

    __slots__ = ()

    def __getattr__(self, name):
        if name == "_data" and type(self) is LazyTensor:
            data = self._lazy.evaluate()
            _settle(self)
            self._data = data
            return data
        raise AttributeError(f"'Tensor' object has no attribute '{name}'")

    @property
    def shape(self) -> Size:
        return Size(self._lazy.shape)

    @property
    def dtype(self) -> D.dtype:
        return D.from_numpy_dtype(self._lazy.np_dtype)

    @property
    def device(self) -> device:
        return CPU

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def ndim(self) -> int:
        return len(self._lazy.shape)

    def numel(self) -> int:
        return math.prod(self._lazy.shape)

    def is_contiguous(self) -> bool:
        return True


LazyTensor.__name__ = LazyTensor.__qualname__ = "Tensor"  # as PyTorch's users see it
Tensor._Lazy = LazyTensor
_F.reduce._LAZY[:] = [LazyTensor, Size]


def _settle(t) -> None:
    """Make lazy tensor ``t`` a plain Tensor (its ``_data`` is set by the caller)."""
    del t._lazy
    t.__class__ = Tensor

# ---------------------------------------------------------------- methods that forward to ops

_FORWARD = {
    name: name
    for name in (
        "exp log log1p expm1 sqrt rsqrt reciprocal sin cos tan tanh sigmoid relu abs neg sign "
        "square clamp clip sum mean prod amax amin argmax argmin logsumexp softmax log_softmax "
        "view reshape flatten permute transpose t squeeze unsqueeze expand expand_as broadcast_to "
        "contiguous clone select split chunk matmul mm bmm mv dot maximum minimum add sub mul div "
        "pow eq ne lt le gt ge logical_not logical_and logical_or max min as_strided "
        "remainder floor_divide bitwise_and bitwise_or bitwise_xor bitwise_not"
    ).split()
}
_FORWARD.update(
    var="var_", std="std_", norm="norm_", any="any_", negative="neg", multiply="mul",
    true_divide="div", divide="div", absolute="abs", greater="gt", less="lt", square_="square",
)


def _forwarder(target):
    def method(self, *args, **kwargs):
        return getattr(_F, target)(self, *args, **kwargs)

    method.__name__ = target
    return method


def _inplace(target):
    def method(self, *args, **kwargs):
        return _F.inplace(self, getattr(_F, target), *args, **kwargs)

    method.__name__ = target + "_"
    return method


for _name, _target in _FORWARD.items():
    # an elementwise op's plain function is the method itself (ops/dispatch.py, make_function)
    _op = getattr(_F, _target)
    setattr(Tensor, _name, _op.method if hasattr(_op, "op") else _forwarder(_target))
# (commutative: ``1 + x`` is ``add(x, 1)``; the operator variants return NotImplemented
# for an operand that is no Tensor or number, so Python raises its TypeError)
Tensor.__add__ = Tensor.__radd__ = _F._add.operator


def _add_method(self, other, *, alpha=1):
    return _F._add.method(self, other if alpha == 1 else _F.mul(other, alpha))


_add_method.__name__ = "add"
Tensor.add = _add_method
Tensor.__mul__ = Tensor.__rmul__ = _F.mul.operator
Tensor.__neg__ = _F.neg
Tensor.__abs__ = _F.abs
for _name in (
    "sub mul div pow clamp clip exp log sigmoid relu neg abs sqrt tanh sin cos reciprocal "
    "square"
).split():
    setattr(Tensor, _name + "_", _inplace(_name))
del _name, _target, _op
Tensor.add_ = lambda self, other: _F.add_(self, other)
Tensor.zero_ = lambda self: _F.zero_(self)
Tensor.fill_ = lambda self, value: _F.fill_(self, value)
Tensor.copy_ = lambda self, src: _F.copy_(self, src)
