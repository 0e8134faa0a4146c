"""Tensor's data: storage, dtype, device, version counter, autograd slots and the properties
that read them (``tensor.py`` binds the methods that run ops); LazyTensor, Size, device."""

from __future__ import annotations

import math
import warnings

import numpy as np

from . import _memory_format as MF
from . import backend
from . import cuda
from . import dtypes as D
from .autograd.grad_mode import _state as _grad_state
from .backend import layout
from .backend.memory import escape

_BY_NP = D._BY_NP


# a new Size without ``Size(...)``'s type call (it has no __new__ or __init__ of its own):
# half the cost of the ``shape`` that code reads all the time
_new_size = tuple.__new__
_tuple_item = tuple.__getitem__


class Size(tuple):
    """A tensor's shape: a tuple that prints as ``numbagrad.Size([3, 4])``."""

    __module__ = "numbagrad"  # (print(type(x.shape)): <class 'numbagrad.Size'>, as torch.Size)

    def __repr__(self) -> str:
        return f"numbagrad.Size({list(self)})"

    __str__ = __repr__

    # slices, concatenations and repeats of a Size are Sizes, as PyTorch's
    def __getitem__(self, index):
        if type(index) is int:  # (the common case first: ``x.shape[0]``)
            return _tuple_item(self, index)
        out = _tuple_item(self, index)
        return _new_size(Size, out) if isinstance(index, slice) else out

    def __add__(self, other):
        if not isinstance(other, tuple):
            raise TypeError(f"can only concatenate tuple (not {type(other).__name__}) to "
                            "numbagrad.Size")
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(other) + tuple(self))

    def __mul__(self, n):
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


class device:
    """Where a tensor lives: ``device('cpu')``, ``device('cuda')``, ``device('cuda:0')``."""

    __module__ = "numbagrad"  # (its class prints as numbagrad.device, as torch.device)

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

    # ``with device("cuda"):``: the default device for the factories inside the block, as
    # PyTorch's (the previous default back after it, blocks nesting)
    def __enter__(self):
        _DEVICE_STACK.append(_default_device)
        set_default_device(self)
        return self

    def __exit__(self, *exc):
        set_default_device(_DEVICE_STACK.pop())


_DEVICE_STACK: list = []
CPU = device("cpu")
CUDA0 = device("cuda", 0)


_default_device = None
# warnings PyTorch gives once a process (its TORCH_WARN_ONCE), by name, once given
_WARNED_ONCE: set[str] = set()
_WARN_ALWAYS = [False]  # (set_warn_always)


def warn_once(key: str, message: str, stacklevel: int = 2) -> None:
    """Give the UserWarning ``message`` unless the one named ``key`` was given already and
    ``set_warn_always`` is off (``stacklevel`` counted from the caller, as
    ``warnings.warn``'s)."""
    if key not in _WARNED_ONCE or _WARN_ALWAYS[0]:
        _WARNED_ONCE.add(key)
        warnings.warn(message, UserWarning, stacklevel=stacklevel + 1)


def set_warn_always(b: bool, /) -> None:
    """Whether the warnings PyTorch gives once a process (``warn_once``) are given every time."""
    _WARN_ALWAYS[0] = bool(b)


def is_warn_always_enabled() -> bool:
    return _WARN_ALWAYS[0]


def set_default_device(device) -> None:
    """Where factories put tensors when no ``device=`` is given (None: the CPU)."""
    global _default_device
    _default_device = None if device is None else _check_device(device)


def get_default_device() -> device:
    return _default_device or CPU


def _check_device(dev):
    """``dev`` as a device (None: the default device, or None for the CPU); CUDA must exist."""
    if dev is None:
        return _default_device
    d = dev if isinstance(dev, device) else device(dev)
    if d.type == "cuda":
        cuda._require(d.index)
        return CUDA0
    return CPU


def _on(data, dev):
    """Host array ``data`` moved to ``dev`` (None or cpu: left as is)."""
    if dev is None or dev.type == "cpu":
        return data
    return backend.gpu_module().to_device(data)


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
    __module__ = "numbagrad"  # (its class prints as numbagrad.Tensor, as PyTorch's torch.Tensor)
    _requires_grad = False
    _grad_fn = None
    _output_nr = 0
    _grad = None
    _base = None
    _view_src = None
    _view_version = 0  # (a view: the version its node was derived at)
    _view_kind = None
    _accumulator = None
    _hooks = None
    _retains_grad = False
    _lazy = None  # an unevaluated expression (only on a LazyTensor; see ops/lazy.py)
    _inference = False  # made under inference_mode(): keeps no version counter
    # an inference tensor's ``detach()``/``.data`` made outside inference_mode: still an
    # inference tensor, but PyTorch lets it be written in place
    _inference_writable = False
    _fw_grad = None  # the forward-mode tangent, inside a dual level (ops/forward.py)

    # allow NumPy binary ops to defer to our reflected operators
    __array_priority__ = 1000

    def __new__(cls, *args, **kwargs):
        return object.__new__(cls)

    def __init__(self, *args, dtype=None, device=None, requires_grad=False, size=None):
        # the legacy constructor, its arguments read as PyTorch's parser reads them
        # (tensor.legacy_new, bound by tensor.py: it runs ops), float32 by default;
        # ``Tensor(other)`` aliases ``other``, whatever its dtype, and so shares its version
        # counter (a typed one, ``FloatTensor(other)``, passes its dtype and refuses another)
        dt = D.as_dtype(dtype) if dtype is not None else D.default_float
        made = Tensor._legacy_new(args, size, dt, _check_device(device),
                                  same_dtype=dtype is not None)
        Tensor._init(self, made._data, requires_grad)
        self._version_cell = made._version_cell

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
        return _new_size(Size, self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return self.shape
        # (a plain tuple: no Size made to read one size; a lazy tensor's is its expression's)
        shape = self._data.shape if self._lazy is None else self._lazy.shape
        if type(dim) is int and 0 <= dim < len(shape):
            return shape[dim]
        if not shape and isinstance(dim, (int, np.integer)):
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        # (tuple's own indexing: Size's is a Python method, for slices that stay Sizes)
        return tuple.__getitem__(shape, _wrap_dim(dim, len(shape)))

    @property
    def dtype(self) -> D.dtype:
        d = _BY_NP.get(self._data.dtype)  # (the common dtypes without a call)
        return d if d is not None else D.from_numpy_dtype(self._data.dtype)

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

    def is_contiguous(self, memory_format=MF.contiguous_format) -> bool:
        """Whether the elements lie in memory in ``memory_format``'s order without gaps (C
        order by default)."""
        if memory_format is MF.contiguous_format:  # (the common case: NumPy's flag)
            return self._data.flags.c_contiguous
        fmt = MF.checked(memory_format, "is_contiguous")
        return MF.is_contiguous(tuple(self._data.shape), self.stride(), fmt)

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        return False  # (numbagrad has no complex dtypes)

    def is_signed(self) -> bool:
        return self.dtype.is_signed

    def get_device(self) -> int:
        """The CUDA device's index, -1 on the CPU (PyTorch's spelling of it)."""
        return -1 if type(self._data) is np.ndarray else 0

    # (numbagrad's tensors are dense, strided, unquantized and hold their values: no sparse,
    # quantized or meta tensors, nor the lazy conjugate and negative bits of complex ones)
    @property
    def layout(self) -> D.layout:
        return D.strided

    @property
    def is_sparse(self) -> bool:
        return False

    @property
    def is_quantized(self) -> bool:
        return False

    @property
    def is_meta(self) -> bool:
        return False

    def is_conj(self) -> bool:
        return False

    def is_neg(self) -> bool:
        return False

    @property
    def is_cpu(self) -> bool:
        return not self.is_cuda

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        """The bytes of its elements (an expanded tensor's counted once per element, as
        PyTorch's ``numel() * itemsize``)."""
        return self.numel() * self.dtype.itemsize

    def is_same_size(self, other) -> bool:
        return self.shape == other.shape

    def is_nonzero(self) -> bool:
        """The one element's truth, with ``bool(t)``'s refusals of other sizes."""
        return self.__bool__()

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
        escape(self._data)
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
        if base is not None and (base._grad_fn is not self._view_src
                                 or self._version_cell[0] != self._view_version):
            self._refresh_view()  # (bound by tensor.py: it runs ops)
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
        if base is not None:
            # a view requires grad while its base does, as PyTorch's (one made before the
            # base's requires_grad_() or under no_grad too, a leaf then); its node is not
            # re-derived here (PyTorch does not, so a view that may not be does not raise)
            return self._requires_grad or base._requires_grad
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
                    f"attempting to assign a gradient with dtype '{D.C_TYPE[value.dtype.name]}' "
                    f"to a tensor with grad_dtype '{D.SCALAR_TYPE[self.dtype.name]}'. "
                    "The gradient must match the tensor's grad_dtype (defaults to the tensor's "
                    "dtype)."
                )
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        # PyTorch's ``del t.grad`` sets it to None
        self._grad = None

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
            t._inference_writable = not _grad_state.inference
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
            t._inference_writable = not _grad_state.inference
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
        escape(a)  # NumPy code may now write to it
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
        escape(a)  # NumPy code may now write to it
        return a

    def item(self):
        a = self._data
        if a.size != 1:
            raise RuntimeError(f"a Tensor with {a.size} elements cannot be converted to Scalar")
        # (``loss.item()`` once a step: NumPy's own item on a CPU array)
        return a.item() if type(a) is np.ndarray else self._host().reshape(-1)[0].item()

    def tolist(self):
        return self._host().tolist()

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        # (PyTorch's unbind: the rows' node is UnbindBackward0)
        return iter(self.unbind(0))

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(
                "Boolean value of Tensor with "
                f"{'more than one value' if self._data.size else 'no values'} is ambiguous"
            )
        return bool(self._host().reshape(-1)[0])

    def __float__(self) -> float:
        # (PyTorch warns only where grad mode is on: not inside LBFGS's no_grad step)
        if self.requires_grad and _grad_state.enabled:
            warn_once("float", "Converting a tensor with requires_grad=True to a scalar may lead "
                      "to unexpected behavior.\nConsider using tensor.detach() first.")
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


    def __format__(self, spec):
        # a 0-d tensor formats as its Python number, even with an empty spec (f"{t}" of
        # tensor(2.5) is '2.5'); any other tensor takes object.__format__: str() for an empty
        # spec, TypeError for any other (PyTorch's Tensor.__format__; a subclass other than
        # the lazy tensor, as PyTorch's own subclasses, takes the second way)
        if self._data.ndim == 0 and (type(self) is Tensor or type(self) is LazyTensor):
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


_TYPE_NAMES = D.TENSOR_TYPE

_ERR_NON_LEAF_FLAG = (
    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
    "variable in a subgraph that doesn't require differentiation use var_no_grad = "
    "var.detach()."
)


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


# Tensor subclasses the ops' fast paths take as plain tensors: those that change nothing about
# how ops treat their instances (nn.Parameter adds itself). Not LazyTensor: its data is an
# expression. (A set beside ``type(x) is Tensor``, which is tried first: plain Tensors pay
# nothing for it.)
PLAIN_SUBCLASSES: set = set()


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
        return _new_size(Size, self._lazy.shape)

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

    def is_contiguous(self, memory_format=MF.contiguous_format) -> bool:
        # (its expression evaluates to a C-contiguous array)
        if memory_format is MF.contiguous_format:
            return True
        fmt = MF.checked(memory_format, "is_contiguous")
        shape = tuple(self._lazy.shape)
        return MF.is_contiguous(shape, layout.permuted_strides(shape, range(len(shape) - 1,
                                                                            -1, -1)), fmt)


LazyTensor.__name__ = LazyTensor.__qualname__ = "Tensor"  # as PyTorch's users see it
Tensor._Lazy = LazyTensor


def _settle(t) -> None:
    """Make lazy tensor ``t`` a plain Tensor (its ``_data`` is set by the caller)."""
    del t._lazy
    t.__class__ = Tensor
