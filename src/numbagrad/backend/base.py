"""What a backend module offers the ops, declared once: ``cpu`` and ``gpu`` each provide every
member of ``Backend`` (tests/test_structure.py checks it), so an op written against
``backend.of(a)`` runs on either. Arrays are NumPy arrays on the CPU and ``gpu.DeviceArray``
on CUDA.

Reductions are not members: each backend runs them its own way (the CPU one fused kernel per
reduction, ``cpu.run_reduce``; CUDA folds through tree kernels, ``gpu.reduce_rows`` and
``gpu.argreduce_rows``), and each reduction names its kernel on both (ops/reduce.py).
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, Sequence

Array = Any  # numpy.ndarray or gpu.DeviceArray


class Backend(Protocol):
    # ---- kernels made from the ops' scalar definitions
    def scalar_module_body(self, functions: list, entry: str, n_in: int, n_params: int) -> str:
        """The source of an elementwise kernel module over ``entry``."""

    def get_elementwise_kernel(self, key: tuple, np_dtype, build_body: Callable) -> Any:
        """The compiled kernel for ``key``; ``build_body()`` gives its source."""

    def run_elementwise(self, kernel, arrays: Sequence, out_dtype, params=(), out=None) -> Array:
        """``kernel`` over broadcast ``arrays`` into ``out`` (new if None)."""

    # ---- row kernels (kernels_reduce/kernels_gpu, kernels_conv)
    def as_rows(self, a: Array, dims: tuple, /) -> tuple:
        """``a`` with ``dims`` moved last, as a contiguous (outer, inner) matrix, and the
        shape of the kept dims."""

    def run_rows(self, kernel, a: Array, dim: int, /) -> Array:
        """Row kernel ``kernel`` of this backend's kernel file along ``dim``, same shape out."""

    def run_row_kernel(self, fn, rows: int, work: int, args, dtype, /) -> None:
        """Row function ``fn`` of kernels_conv for every row in ``range(rows)``."""

    def flat_view(self, a: Array, /) -> tuple:
        """(flat buffer, element offset, element strides) of ``a``'s storage."""

    # ---- allocation
    def empty(self, shape, dtype, /) -> Array: ...

    def zeros(self, shape, dtype, /) -> Array: ...

    def full(self, shape, value, dtype, /) -> Array: ...

    # ---- copies and views
    def copyto(self, dst: Array, src, /) -> None: ...

    def ascontiguousarray(self, a: Array, /) -> Array: ...

    def as_strided(self, a: Array, shape, strides, /) -> Array: ...

    def moveaxis(self, a: Array, source, destination, /) -> Array: ...

    def concatenate(self, parts: Sequence, axis: int = 0, /) -> Array: ...

    def scatter(self, a: Array, index, value, accumulate: bool, /) -> None:
        """``a[index] = value``, or with ``accumulate`` repeated positions add up."""

    # ---- linear algebra
    def matmul(self, x: Array, y: Array, /) -> Array: ...
