"""Transposed copies: ``dst[b, j, i] = src[b, i, j]`` for C-contiguous (B, M, N) ``src`` and
(B, N, M) ``dst`` (``cpu.ascontiguousarray`` brings a transposed or permuted array to that
form). Compiled per unsigned dtype of the element width: a copy only moves bits.

NumPy copies such an array element by element along the output's rows, reading the source
with a stride of a whole row, so that every read touches a new cache line. Here the copy goes
by tiles of 8 x 8 elements, whose fixed-size loops LLVM turns into vector shuffles, and a
strip of 8 output rows is written from a block of up to 256 source rows, whose cache lines
stay in L1 for the next strip.
"""

from numba import prange  # noqa: F401  (the parallel kernel's loop)

from .kernels_reduce import jit_options


def _transpose_block(src, dst, b, i_start, i_stop):
    # source rows i_start..i_stop-1 of batch b (i_start a multiple of 8), all its columns
    n = src.shape[2]
    s = src[b]
    d = dst[b]
    i_full = i_start + (i_stop - i_start) // 8 * 8
    n_full = n // 8 * 8
    for j0 in range(0, n_full, 8):
        for i0 in range(i_start, i_full, 8):
            for j in range(8):
                for i in range(8):
                    d[j0 + j, i0 + i] = s[i0 + i, j0 + j]
        for i in range(i_full, i_stop):
            for j in range(8):
                d[j0 + j, i] = s[i, j0 + j]
    for j in range(n_full, n):
        for i in range(i_start, i_stop):
            d[j, i] = s[i, j]


def transpose(src, dst):
    m = src.shape[1]
    for b in range(src.shape[0]):
        for i0 in range(0, m, 256):
            _transpose_block(src, dst, b, i0, min(i0 + 256, m))


@jit_options(", parallel=True")
def transpose_par(src, dst):
    # transpose with the (batch, block of 256 source rows) pairs over Numba's threads
    m = src.shape[1]
    per = (m + 255) // 256
    for t in prange(src.shape[0] * per):
        b = t // per
        i0 = (t - b * per) * 256
        _transpose_block(src, dst, b, i0, min(i0 + 256, m))
