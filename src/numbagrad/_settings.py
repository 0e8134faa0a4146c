"""Process-wide settings scripts set through ``torch.*``: thread counts, determinism, float32
matmul precision, and ``compile``."""

from __future__ import annotations

import warnings

import numba

try:  # (optional: the BLAS NumPy's matmuls run on is sized through it when installed)
    import threadpoolctl as _threadpoolctl
except ImportError:
    _threadpoolctl = None

# ---------------------------------------------------------------- threads


def get_num_threads() -> int:
    """The threads numbagrad's parallel kernels run on (Numba's thread count)."""
    return numba.get_num_threads()


def set_num_threads(n: int) -> None:
    """Run the parallel kernels (Numba's) and, if ``threadpoolctl`` is installed, the BLAS
    behind NumPy's matmuls on ``n`` threads. (Numba's count is per calling thread, as its
    ``set_num_threads`` is.)"""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"set_num_threads(): argument 'int' (position 1) must be int, not "
                        f"{type(n).__name__}")
    if n <= 0:
        raise RuntimeError("Number of threads must be positive")
    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    if _threadpoolctl is not None:
        _threadpoolctl.threadpool_limits(n, user_api="blas")


_interop = [None]


def get_num_interop_threads() -> int:
    """PyTorch's inter-op pool size; numbagrad runs ops one after another, so this is only the
    number set (by default the thread count, as PyTorch's)."""
    return _interop[0] if _interop[0] is not None else numba.config.NUMBA_NUM_THREADS


def set_num_interop_threads(n: int) -> None:
    if n <= 0:
        raise RuntimeError("Number of threads must be positive")
    _interop[0] = n


# ---------------------------------------------------------------- determinism

_deterministic = {"mode": False, "warn_only": False}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Recorded and reported back; numbagrad's kernels are deterministic already (reductions
    and scatters sum in a fixed order on the CPU)."""
    _deterministic["mode"] = bool(mode)
    _deterministic["warn_only"] = bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    return _deterministic["mode"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _deterministic["warn_only"]


# ---------------------------------------------------------------- matmul precision

_precision = ["highest"]


def get_float32_matmul_precision() -> str:
    return _precision[0]


def set_float32_matmul_precision(precision: str) -> None:
    """Recorded only: numbagrad's float32 matmuls are always full float32 ("highest")."""
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _precision[0] = precision


# ---------------------------------------------------------------- compile


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """``model`` (a module or a function) unchanged: numbagrad has no graph compiler, and
    ``torch.compile`` promises the compiled program the semantics of the original, so the
    original is a valid result. Usable as ``@compile`` and ``@compile(...)``."""
    if model is None:
        return lambda m: m
    if not callable(model):
        raise RuntimeError("The torch.compile decorator can only be applied to nn.Module or "
                           "function")
    return model
