"""Tensor: NumPy storage plus the autograd state PyTorch users expect.

The data class is ``_tensor.py``; this module binds onto it the methods and operators that run
ops (``to``, ``x + y``, ``x[i]``, ``backward``, ...), so that ops can import the class
without importing this module."""

from __future__ import annotations

import weakref
from types import FunctionType

import numpy as np

from . import _memory_format as MF
from . import _overloads
from . import cuda as _cuda
from . import dtypes as D
from . import factory
from .backend import cpu
from . import ops as _F
from ._printing import tensor_repr
from ._tensor import _TYPE_NAMES, CPU, Tensor, _check_device, device, warn_once
from ._tensor import LazyTensor, Size, get_default_device, set_default_device  # noqa: F401
from ._tensor import _rebuild  # noqa: F401 (a pickled Tensor may name it here)
from .autograd.api import backward as _backward
from .autograd.grad_mode import is_grad_enabled
from .autograd.graph import HookDict, RemovableHandle, grad_accumulator
from .ops.dispatch import NUMBERS as _NUMBERS
from .ops.movement import alias as _alias
from .ops.movement import by_keyword

# what an operator takes: a Tensor or a number (else NotImplemented: Python's TypeError)
_OPERANDS = (Tensor, *_NUMBERS)


class _Methods:
    """Tensor's methods that run ops, bound onto Tensor below (a class body, so that methods
    named ``float``, ``int``, ``bool`` and ``type`` do not hide the builtins here)."""

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate the gradient of this tensor into the leaves' ``.grad``."""
        _backward(self, gradient, retain_graph, create_graph, inputs=inputs)

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

    def register_post_accumulate_grad_hook(self, hook) -> RemovableHandle:
        """Call ``hook(self)`` each time backward has accumulated this leaf's ``.grad``."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors")
        node = grad_accumulator(self)
        hooks = node._own("_post_accumulate_hooks")
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        self._hooks = node  # (keeps the accumulator, and so the hook, alive with the leaf)
        return handle

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after backward."""
        # (the property: a view made before its base's requires_grad_() requires grad too)
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        self._retains_grad = True
        node = self.grad_fn

        def capture(grad, ref=weakref.ref(self)):
            t = ref()
            if t is not None:
                if t._grad is None:
                    # a copy, recorded under create_graph (CloneBackward0), as PyTorch's hook
                    t._grad = grad.detach().clone() if not is_grad_enabled() else grad.clone()
                else:
                    t._grad = t._grad + grad
        node._own("_retain_grad_hooks")[self._output_nr] = capture

    def __repr__(self) -> str:
        return tensor_repr(self)

    __str__ = __repr__

    def to(self, *args, **kwargs) -> Tensor:
        """``to(dtype)``, ``to(device)``, ``to(device, dtype)`` or ``to(other)``, each followed
        by ``non_blocking`` and ``copy``; ``memory_format=`` lays out the copy (a tensor
        already laid out so, of that dtype and device, is returned itself unless ``copy``)."""
        if not kwargs and len(args) == 1 and type(args[0]) is D.dtype:
            # ``x.to(torch.float32)``, ``x.float()``: what the parsing below gives for a dtype
            return self if args[0] is self.dtype else _F.to_dtype(self, args[0],
                                                                  MF.preserve_format)
        if kwargs or len(args) > 4:  # (fewer positional arguments fit the first overload)
            _overloads.check("to", args, kwargs, _overloads.TO)
        dt = kwargs.get("dtype")
        dev = kwargs.get("device")
        if kwargs.get("tensor") is not None:
            dt, dev = kwargs["tensor"].dtype, kwargs["tensor"].device
        copy = kwargs.get("copy", False)
        n_flags = 0
        for a in args:
            if a is True or a is False:  # (non_blocking, then copy)
                n_flags += 1
                if n_flags == 2:
                    copy = a
            elif isinstance(a, Tensor):
                dt, dev = a.dtype, a.device
            elif isinstance(a, (str, device)):
                dev = a
            elif a is not None:
                dt = a
        fmt = kwargs.get("memory_format")  # (None: preserve_format)
        if fmt is not None and fmt is not MF.preserve_format:
            fmt = MF.checked(fmt, "to")
        else:
            fmt = None
        dev = _check_device(dev) if dev is not None else None
        dt = D.as_dtype(dt) if dt is not None else None
        out = self
        if dev is not None and dev != self.device:
            out = _F.to_device(out, dev)  # (laid out as self)
            # (a new tensor already: copied again only for another dtype or layout)
            copy = fmt is not None and not out.is_contiguous(memory_format=fmt)
        elif fmt is not None and not copy:
            # PyTorch's test of whether ``to`` returns the tensor itself: the format its
            # strides suggest
            copy = MF.suggest(tuple(self.shape), self.stride()) is not fmt
        if dt is not None and dt is not out.dtype or copy:
            out = _F.to_dtype(out, dt or out.dtype, fmt or MF.preserve_format)
        return out

    def cuda(self, device=None, non_blocking=False, memory_format=MF.preserve_format):
        """A copy on the GPU (this tensor itself if it is there already)."""
        return self.to("cuda" if device is None else (
            f"cuda:{device}" if isinstance(device, int) else device),
            memory_format=memory_format)

    def cpu(self, memory_format=MF.preserve_format):
        return self.to(CPU, memory_format=memory_format)

    def type(self, dtype=None, non_blocking=False):
        """This tensor's type name (``"numbagrad.FloatTensor"``), or the tensor converted to
        ``dtype``: a dtype, a legacy type (``numbagrad.DoubleTensor``) or its name (with
        ``torch.`` or ``numbagrad.`` in front; ``.cuda.`` for a CUDA tensor)."""
        if dtype is None:
            cuda = ".cuda" if self.is_cuda else ""
            return f"numbagrad{cuda}.{_TYPE_NAMES[self.dtype.name]}"
        if isinstance(dtype, str):
            module, _, name = dtype.rpartition(".")
            legacy = factory.LEGACY_TYPES.get(name)
            if legacy is None or module not in ("torch", "numbagrad", "torch.cuda",
                                                "numbagrad.cuda"):
                raise ValueError(f"invalid type: '{dtype}'")
            out = self.to(legacy.dtype)
            return out.cuda() if module.endswith("cuda") else out.cpu()
        if isinstance(dtype, factory._LegacyType):
            return self.to(dtype.dtype).cpu()
        return self.to(dtype)

    # (each a copy in ``memory_format``, or the tensor itself where ``to`` returns it)
    def _converted(self, dt, memory_format, name):
        if memory_format is MF.preserve_format:
            return self.to(dt)
        return self.to(dt, memory_format=MF.checked(memory_format, name, MF.preserve_format))

    def float(self, memory_format=MF.preserve_format):
        return self._converted(D.float32, memory_format, "float")

    def double(self, memory_format=MF.preserve_format):
        return self._converted(D.float64, memory_format, "double")

    def long(self, memory_format=MF.preserve_format):
        return self._converted(D.int64, memory_format, "long")

    def int(self, memory_format=MF.preserve_format):
        return self._converted(D.int32, memory_format, "int")

    def short(self, memory_format=MF.preserve_format):
        return self._converted(D.int16, memory_format, "short")

    def char(self, memory_format=MF.preserve_format):
        return self._converted(D.int8, memory_format, "char")

    def byte(self, memory_format=MF.preserve_format):
        return self._converted(D.uint8, memory_format, "byte")

    def bool(self, memory_format=MF.preserve_format):
        return self._converted(D.bool_, memory_format, "bool")

    def half(self, memory_format=MF.preserve_format):
        return self.to(D.float16)  # (which refuses: numbagrad has no half-precision tensors)

    def bfloat16(self, memory_format=MF.preserve_format):
        return self.to(D.bfloat16)

    # numbagrad's tensors are real and dense: each of these is the tensor itself, as PyTorch's
    # are on a real, dense tensor (no node, no copy)
    def conj(self):
        return self

    def conj_physical(self):
        return self

    def conj_physical_(self):
        return self

    def resolve_conj(self):
        return self

    def resolve_neg(self):
        return self

    @property
    def real(self):
        return self

    @property
    def imag(self):
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")

    def to_dense(self, dtype=None, *, masked_grad=None):
        return self if dtype is None else self.to(dtype)

    def ndimension(self) -> int:
        return self.ndim

    def new(self, *args, size=None, device=None):
        """The legacy constructor (``legacy_new``) with this tensor's dtype and device."""
        return legacy_new(args, size, self.dtype, self.device if device is None else device)

    def resize_(self, *sizes, size=None, memory_format=None):
        """PyTorch's ``resize_`` of a tensor that needs no gradient: the same shape leaves it
        as it is; another lays it out contiguously over its memory from its first element.
        The shape: ints, one sequence, or ``size=``."""
        if self.requires_grad:
            raise RuntimeError("cannot resize variables that require grad")
        shape = factory._size_arg(sizes, size, "resize_")
        if self.is_cuda:
            raise NotImplementedError("numbagrad's resize_ has no CUDA version yet: call it on a "
                                      "CPU tensor (x.cpu())")
        self._bump()
        if shape != tuple(self.shape):
            self._data = cpu.resized(self._data, shape)
        return self

    def resize_as_(self, the_template, memory_format=None):
        return self.resize_(the_template.shape)

    def new_tensor(self, data, dtype=None, requires_grad=False):
        if isinstance(data, Tensor):
            factory.warn_copy_construct("tensor.new_tensor")
        return factory.copy_of(data, dtype=dtype or self.dtype, device=self.device,
                               requires_grad=requires_grad)

    # (C order whatever this tensor's layout, as PyTorch's: they take no memory_format;
    # ``layout`` and ``pin_memory``: the factories' check, factory.check_options)
    def new_zeros(self, *sizes, size=None, dtype=None, device=None, requires_grad=False,
                  layout=None, pin_memory=False):
        return factory.zeros(*by_keyword(sizes, size), dtype=dtype or self.dtype,
                             device=device or self.device, requires_grad=requires_grad,
                             layout=layout, pin_memory=pin_memory)

    def new_ones(self, *sizes, size=None, dtype=None, device=None, requires_grad=False,
                 layout=None, pin_memory=False):
        return factory.ones(*by_keyword(sizes, size), dtype=dtype or self.dtype,
                            device=device or self.device, requires_grad=requires_grad,
                            layout=layout, pin_memory=pin_memory)

    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False, *,
                 layout=None, pin_memory=False):
        return factory.full(size, fill_value, dtype=dtype or self.dtype,
                            device=device or self.device, requires_grad=requires_grad,
                            layout=layout, pin_memory=pin_memory)

    def new_empty(self, *sizes, size=None, dtype=None, device=None, requires_grad=False,
                  layout=None, pin_memory=False):
        return factory.empty(*by_keyword(sizes, size), dtype=dtype or self.dtype,
                             device=device or self.device, requires_grad=requires_grad,
                             layout=layout, pin_memory=pin_memory)

    def new_empty_strided(self, size, stride, dtype=None, device=None, requires_grad=False, *,
                          layout=None, pin_memory=False):
        return factory.empty_strided(size, stride, dtype=dtype or self.dtype,
                                     device=device or self.device, requires_grad=requires_grad,
                                     layout=layout, pin_memory=pin_memory)

    # ------------------------------------------------------------ operators
    # (x + y, x * y, x - y and x / y are the ops' operator functions, bound below)

    def __rsub__(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return _F.reflected_sub(self, other)

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
        return _F.positive(self)  # (itself; refused for a bool tensor, as PyTorch's)

    def __invert__(self):
        if self.dtype.is_floating_point:  # (Python's operator refuses it before the op would)
            raise TypeError(
                "~ (operator.invert) is only implemented on integer and Boolean-type tensors")
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

    def __lshift__(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return _F.bitwise_left_shift(self, other)

    def __rlshift__(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return _F.bitwise_left_shift(other, self)

    def __rshift__(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return _F.bitwise_right_shift(self, other)

    def __rrshift__(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return _F.bitwise_right_shift(other, self)

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

    def __ifloordiv__(self, other):
        return self.floor_divide_(other)

    def __imod__(self, other):
        return self.remainder_(other)

    def __ipow__(self, other):
        return self.pow_(other)

    def __iand__(self, other):
        return self.bitwise_and_(other)

    def __ior__(self, other):
        return self.bitwise_or_(other)

    def __ixor__(self, other):
        return self.bitwise_xor_(other)

    def __ilshift__(self, other):
        return self.bitwise_left_shift_(other)

    def __irshift__(self, other):
        return self.bitwise_right_shift_(other)

    @property
    def T(self):
        if self.ndim == 0:
            warn_once("T0", "Tensor.T is deprecated on 0-D tensors. This function is the identity "
                             "in these cases.")
        elif self.ndim != 2:
            warn_once("T", _WARN_T)
        return _F.permute(self, tuple(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self):
        if self.ndim < 2:
            if self.ndim == 1:
                raise RuntimeError(
                    "tensor.mT is only supported on matrices or batches of matrices. Got 1-D "
                    "tensor."
                )
            warn_once("mT0", "Tensor.mT is deprecated on 0-D tensors. This function is the "
                              "identity in these cases.")
            return self  # (PyTorch returns the tensor itself: no node, no view)
        return _F.transpose(self, -2, -1)


    @property
    def mH(self):
        """The conjugate transpose of each matrix: ``mT``, numbagrad's dtypes being real."""
        if self.ndim < 2:
            raise RuntimeError("tensor.mH is only supported on matrices or batches of matrices. "
                               f"Got {self.ndim}-D tensor.")
        return _F.transpose(self, -2, -1)

    @property
    def H(self):
        """The conjugate transpose of a matrix: its transpose, numbagrad's dtypes being real."""
        if self.ndim == 0:
            warn_once("H0", "Tensor.H is deprecated on 0-D tensors. Consider using x.conj().")
            return self
        if self.ndim != 2:
            more = (" For batches of matrices, consider using tensor.mH" if self.ndim > 2
                    else "")
            raise RuntimeError("tensor.H is only supported on matrices (2-D tensors). Got "
                               f"{self.ndim}-D tensor.{more}")
        return _F.transpose(self, 0, 1)

    def storage_offset(self) -> int:
        """The offset of the first element in the memory of the tensor it views (0 for a
        tensor that owns its memory)."""
        base = self._base
        if base is None:
            return 0
        return (self.data_ptr() - base.data_ptr()) // self._data.itemsize

    def is_pinned(self) -> bool:
        return False  # (no page-locked host memory here)

    def pin_memory(self, device=None):
        """PyTorch's refusal without an accelerator; with CUDA, the tensor itself (host memory
        is copied to the device the same way, pinned or not)."""
        if not _cuda.is_available():
            raise RuntimeError("Cannot access accelerator device when none is available.")
        return self

    def share_memory_(self):
        """The tensor itself: threads share tensors already, and numbagrad hands no tensors to
        other processes by shared memory."""
        return self


# its functions and properties only: not the class's own attributes, nor the ``__hash__ = None``
# its ``__eq__`` implies (Tensor keeps its own)
for _name, _value in vars(_Methods).items():
    if isinstance(_value, FunctionType):
        _value.__qualname__ = "Tensor." + _value.__name__
    if isinstance(_value, (FunctionType, property)):
        setattr(Tensor, _name, _value)
Tensor._refresh_view = _F.refresh_view  # (what grad_fn and requires_grad call for a view)


# the pieces of PyTorch's TypeError when ``new`` is given a tensor of another dtype
_OPTIONS = ("TensorOptions(dtype={}, device=cpu, layout=Strided, requires_grad=false (default), "
            "pinned_memory=false (default), memory_format=(nullopt))")
_C_TYPES = {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
            "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool"}

# the overloads PyTorch's ``new`` lists when its arguments match none
_NEW_OVERLOADS = [_overloads._Signature(text) for text in (
    "(*, torch.device device = None)", "(torch.Storage storage)", "(Tensor other)",
    "(tuple of ints size, *, torch.device device = None)",
    "(object data, *, torch.device device = None)")]


def _is_size_int(value) -> bool:
    """Whether ``new``'s one argument is a size: an int or a NumPy integer (a bool is not)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _parser_type_name(value) -> str:
    """A value's type as PyTorch's parser names it: ``float``, ``numpy.float32``."""
    cls = type(value)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__name__}"


def legacy_new(args, size, dtype, device, same_dtype=True) -> Tensor:
    """PyTorch's legacy constructor, behind ``x.new(...)``, ``Tensor(...)`` and
    ``FloatTensor(...)``, as its parser reads the arguments: sizes (ints, a Size, or ``size=``;
    none: empty) give an uninitialized tensor, tried before the data, so that ``x.new(3)`` is
    three values and ``x.new((2, 3))`` holds 2 and 3; a sequence or array gives its values; a
    tensor gives an alias of itself (AliasBackward0 when it requires grad), refused when
    ``same_dtype`` and its dtype is another."""
    if size is not None:
        if args or not isinstance(size, (tuple, list)):
            raise _overloads.invalid_combination("new", args, {"size": size}, _NEW_OVERLOADS)
        return factory.empty(factory._size_arg((), size, "new"), dtype=dtype, device=device)
    if len(args) == 1 and isinstance(args[0], Tensor):
        other = args[0]
        if same_dtype and other.dtype is not dtype:
            raise TypeError(f"expected {_OPTIONS.format(_C_TYPES[dtype.name])} (got "
                            f"{_OPTIONS.format(_C_TYPES[other.dtype.name])})")
        return _alias(other)  # (a view: its memory and version counter, its gradient)
    if len(args) == 1 and not isinstance(args[0], Size) and not _is_size_int(args[0]):
        data = args[0]
        if not isinstance(data, (list, tuple, np.ndarray)):
            raise TypeError(f"new(): data must be a sequence (got {_parser_type_name(data)})")
        return factory.tensor(data, dtype=dtype, device=device)
    return factory.empty(factory._size_arg(args or (0,), None, "new"), dtype=dtype,
                         device=device)


Tensor._legacy_new = staticmethod(legacy_new)  # (what the constructor, Tensor(...), calls)


_WARN_T = (
    "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated "
    "and it will throw an error in a future release. Consider `x.mT` to transpose batches of "
    "matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a "
    "tensor."
)


def _inplace(name, fn):
    check = getattr(fn, "check_args", None)
    if check is None:
        def method(self, *args, **kwargs):
            return _F.inplace(self, fn, *args, **kwargs)
    else:
        # (PyTorch's argument parser refuses an argument of the wrong type before the in-place
        # checks, a leaf that requires grad's among them)
        def method(self, *args, **kwargs):
            check(self, *args, **kwargs)
            return _F.inplace(self, fn, *args, **kwargs)

    method.__name__ = method.__qualname__ = name + "_"
    return method


# the methods every op and function declares (``variants``, ops/__init__.py): an elementwise
# op's method is its plain function's method variant (ops/dispatch.py, make_function)
for _name, _method in _F.METHODS.items():
    setattr(Tensor, _name, _method)
for _name, _fn in _F.INPLACE.items():
    setattr(Tensor, _name + "_", _inplace(_name, _fn))
del _name, _value, _method, _fn


def _scan_inplace(name):
    """``cumsum_`` / ``cumprod_``: PyTorch's scan into the tensor itself, in its own dtype (a
    bool tensor's refused by the op, unless 0-d or empty: no kernel runs for those)."""
    plain = getattr(Tensor, name + "_")

    def method(self, dim, *, dtype=None):
        if dtype is None and self.dtype is D.bool_:
            dtype = D.bool_
        return plain(self, dim, dtype=dtype)

    method.__name__ = method.__qualname__ = name + "_"
    return method


Tensor.cumsum_ = _scan_inplace("cumsum")
Tensor.cumprod_ = _scan_inplace("cumprod")
# (commutative: ``1 + x`` is ``add(x, 1)``; the operator variants return NotImplemented
# for an operand that is no Tensor or number, so Python raises its TypeError)
Tensor.__add__ = Tensor.__radd__ = _F._add.operator
Tensor.__mul__ = Tensor.__rmul__ = _F.mul.operator
# (x - y and x / y: the ops' functions themselves, as _F.sub and _F.div call them)
Tensor.__sub__ = _F._sub.operator
Tensor.__truediv__ = _F._div.operator
Tensor.__neg__ = _F.neg
Tensor.__abs__ = _F.abs
Tensor.add_ = _F.add_
Tensor.zero_ = _F.zero_
Tensor.fill_ = lambda self, value: _F.fill_(self, value)
Tensor.copy_ = lambda self, src, non_blocking=False: _F.copy_(self, src, non_blocking)
