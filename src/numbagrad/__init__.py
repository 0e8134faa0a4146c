"""numbagrad: a PyTorch-compatible autograd library whose kernels are compiled by Numba.

Use it as you would use PyTorch: ``import numbagrad as torch``.
"""

from __future__ import annotations

import math as _math
import os as _os

# Numba's parallel kernels use GNU OpenMP, whose idle threads spin for ~300k iterations after
# each parallel loop; on a small machine they then starve the BLAS threads of the next matmul
# (an MLP step took 16 ms instead of 4.5). Must be set before the OpenMP library loads.
_os.environ.setdefault("GOMP_SPINCOUNT", "1000")

from . import autograd, cuda, distributed, dtypes, func, nn, ops, optim  # noqa: F401
from . import _tensor_str  # noqa: F401  (torch._tensor_str.printoptions and friends)
from ._printing import set_printoptions  # noqa: F401
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled  # noqa: F401
from .autograd.grad_mode import (  # noqa: F401
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
    set_grad_enabled,
)
from .dtypes import bool_ as bool  # noqa: F401
from .dtypes import (bfloat16, dtype, float16, float32, float64, int8, int16, int32,  # noqa: F401
                     int64, uint8)
from .dtypes import finfo, iinfo, layout, strided  # noqa: F401
from . import _memory_format as _MF
from . import factory as _factory
from ._memory_format import (channels_last, channels_last_3d, contiguous_format,  # noqa: F401
                             memory_format, preserve_format)
# (the submodule tensor first: its import would rebind ``numbagrad.tensor``, which is the
# factory function below)
from .tensor import Size, Tensor, device, get_default_device, set_default_device  # noqa: F401
from ._tensor import is_warn_always_enabled, set_warn_always  # noqa: F401
from .factory import (  # noqa: F401
    BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, IntTensor, LongTensor,
    ShortTensor, arange, as_tensor, asarray, bartlett_window, blackman_window, empty,
    empty_like, empty_strided, eye, from_dlpack, from_numpy, frombuffer, full, full_like,
    hamming_window, hann_window, kaiser_window, linspace, logspace, manual_seed, ones,
    ones_like, rand, rand_like, randint, randn, randn_like, randperm, scalar_tensor, tensor,
    tril_indices, triu_indices, zeros, zeros_like,
)
from .factory import range_ as range  # noqa: F401 (a builtin's name: factory.py keeps it)
from .random import (  # noqa: F401
    Generator, default_generator, get_rng_state, initial_seed, seed, set_rng_state,
)
from .serialization import load, save  # noqa: F401
from . import accelerator, utils  # noqa: F401
from . import amp, backends  # noqa: E402, F401
from . import linalg  # noqa: E402, F401
from . import special  # noqa: E402, F401
from . import distributions  # noqa: E402, F401
from .cuda import amp as _cuda_amp  # noqa: E402, F401 (numbagrad.cuda.amp)
from ._settings import (  # noqa: E402, F401
    are_deterministic_algorithms_enabled, compile, get_float32_matmul_precision,
    get_num_interop_threads, get_num_threads, is_deterministic_algorithms_warn_only_enabled,
    set_float32_matmul_precision, set_num_interop_threads, set_num_threads,
    use_deterministic_algorithms,
)
from .amp import autocast  # noqa: E402, F401

# the functions every op and function of ops/ declares public (their ``variants``)
globals().update(ops.FUNCTIONS)
from .ops.user import elementwise  # noqa: E402, F401
from ._variable_functions import (  # noqa: E402, F401
    adaptive_max_pool1d, alpha_dropout, alpha_dropout_, batch_norm, bilinear,
    binary_cross_entropy_with_logits, constant_pad_nd, cosine_embedding_loss, cosine_similarity,
    ctc_loss,
    dropout, dropout_, embedding, feature_alpha_dropout, feature_alpha_dropout_, feature_dropout,
    feature_dropout_, group_norm, hinge_embedding_loss, instance_norm, kl_div, layer_norm,
    margin_ranking_loss, max_pool1d_with_indices, pairwise_distance, poisson_nll_loss,
    rms_norm, triplet_margin_loss,
)
from . import testing  # noqa: E402, F401
from . import profiler  # noqa: E402, F401 (and numbagrad.autograd.profiler)

float = float32
double = float64
half = float16
long = int64
int = int32
short = int16

__version__ = "0.1.0"  # the one version source: pyproject.toml reads it ([tool.hatch.version])


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def is_floating_point(input: Tensor) -> bool:
    return input.is_floating_point()


def is_nonzero(input: Tensor) -> bool:
    return input.is_nonzero()


def is_same_size(input: Tensor, other: Tensor) -> bool:
    return input.is_same_size(other)


def is_complex(input: Tensor) -> bool:
    return input.is_complex()


def detach(input: Tensor) -> Tensor:
    return input.detach()


def detach_(input: Tensor) -> Tensor:
    return input.detach_()


def is_inference(input: Tensor) -> bool:
    return input.is_inference()


# (the in-place functions of Tensor methods that are no op's variant)
def fill_(input: Tensor, value) -> Tensor:
    return input.fill_(value)


def zero_(input: Tensor) -> Tensor:
    return input.zero_()


def conj_physical_(input: Tensor) -> Tensor:
    return input.conj_physical_()


def resize_as_(input: Tensor, the_template: Tensor, *, memory_format=None) -> Tensor:
    return input.resize_as_(the_template, memory_format=memory_format)


def get_device(input: Tensor) -> int:
    return input.get_device()


def typename(obj) -> str:
    """A tensor's type name (``x.type()``), else the object's qualified class name."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module == "builtins" else f"{module}.{name}"


def randint_like(input: Tensor, low=0, high=None, *, dtype=None, layout=None, device=None,
                 pin_memory=False, requires_grad=False, memory_format=preserve_format) -> Tensor:
    """Random integers in [low, high) of ``input``'s shape, dtype and device (or those
    given): ``randint_like(x, high)`` or ``randint_like(x, low, high)``; laid out as
    ``memory_format`` says (as ``zeros_like``)."""
    _factory.check_options("randint_like", layout, pin_memory)
    if high is None:
        low, high = 0, low
    strides = None
    if memory_format is not contiguous_format:
        strides = _MF.like_strides(input, _MF.checked(memory_format, "randint_like",
                                                      preserve_format))
    out = randint(low, high, tuple(input.shape), dtype=dtype or input.dtype,
                  device=device or input.device,
                  requires_grad=requires_grad and strides is None)
    if strides is None:
        return out
    return _factory._strided(tuple(input.shape), strides, out._data, out._data.dtype,
                             requires_grad, out.device)


vmap = func.vmap


def is_signed(input: Tensor) -> bool:
    return input.is_signed()


def is_conj(input: Tensor) -> bool:
    return input.is_conj()


def is_neg(input: Tensor) -> bool:
    return input.is_neg()


# numbagrad's dtypes being real, these are the tensor itself, as PyTorch's are on a real tensor
def conj(input: Tensor) -> Tensor:
    return input.conj()


def conj_physical(input: Tensor) -> Tensor:
    return input.conj_physical()


def resolve_conj(input: Tensor) -> Tensor:
    return input.resolve_conj()


def resolve_neg(input: Tensor) -> Tensor:
    return input.resolve_neg()


def real(input: Tensor) -> Tensor:
    return input.real


def numel(input: Tensor) -> int:
    return input.numel()


def get_default_dtype():
    return dtypes.default_float


def set_default_dtype(d) -> None:
    """The dtype of float tensors made from Python floats (float32 or float64)."""
    d = dtypes.as_dtype(d)
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    dtypes.default_float = d


pi = _math.pi
e = _math.e
inf = _math.inf
nan = _math.nan


def result_type(tensor=None, other=None, *, scalar=None, scalar1=None, scalar2=None):
    """The dtype an op of the two operands computes in. By keyword, as PyTorch's overloads
    name them: ``(tensor, other)``, ``(scalar, tensor)`` or ``(scalar1, scalar2)``."""
    if scalar1 is not None or scalar2 is not None:
        return dtypes.result_type(scalar1, scalar2)
    if scalar is not None:
        return dtypes.result_type(scalar, tensor)
    return dtypes.result_type(tensor, other)


def promote_types(type1, type2):
    return dtypes.promote(type1, type2)


def can_cast(from_, to):
    return dtypes.can_cast(from_, to)
