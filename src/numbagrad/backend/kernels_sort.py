"""Sorting and selection kernels (sort, topk, kthvalue, median, mode).

They read an array's bits as unsigned integers of its width (``u``: a C-contiguous
(rows, n) view), so one kernel of a width serves every dtype of it, and compare keys made from
those bits (``_key``): unsigned integers whose order is the output order, largest (or
smallest) value first, NaN as the largest value, -0.0 and 0.0 one key. Equal keys go by
index, as a stable sort has them. Compiled per unsigned dtype (``_c``), with literals as in
kernels_reduce.py.

``kind`` says what the bits are: 0 unsigned integers (and bool), 1 signed integers (two's
complement), 2 IEEE floats. ``top`` is the sign bit of the width, ``nan_above`` the bits of
+inf (a float's magnitude above it is NaN).
"""

import numpy as np  # noqa: F401  (used by the generated modules)
from numba import prange  # noqa: F401  (the parallel kernel's loop)

from .kernels_reduce import jit_options

_c = np.uint64  # replaced by the kernel's unsigned dtype in generated modules


def _key(v, kind, top, nan_above, largest):
    # bits v as a key: keys in ascending order are the values in the output order (each
    # result cast back to _c: Numba computes with integers narrower than 64 bits as int64)
    if kind == 2:
        mag = _c(v & ~top)
        if mag > nan_above:
            k = _c(~_c(0))  # NaN: after every number
        elif mag == _c(0):
            k = top  # -0.0 and 0.0 alike
        elif v & top:
            k = _c(~v)  # a negative number: the larger its magnitude, the smaller its key
        else:
            k = _c(v | top)
    elif kind == 1:
        k = _c(v ^ top)
    else:
        k = v
    if largest:
        k = _c(~k)
    return k


def _select_small(u, k, kind, top, nan_above, largest, values, indices, start, stop):
    # rows start..stop-1: the first k of each, kept sorted in a buffer as the row's keys are
    # read (most keys cost one comparison with its last)
    n = u.shape[1]
    keys = np.empty(n, u.dtype)
    bk = np.empty(k, u.dtype)
    bi = np.empty(k, np.int64)
    for r in range(start, stop):
        row = u[r]
        for j in range(n):  # (a loop of its own, which vectorizes)
            keys[j] = _key(row[j], kind, top, nan_above, largest)
        for j in range(k):  # the first k, by insertion
            key = keys[j]
            p = j
            while p > 0 and key < bk[p - 1]:
                bk[p] = bk[p - 1]
                bi[p] = bi[p - 1]
                p -= 1
            bk[p] = key
            bi[p] = j
        last = bk[k - 1]
        for j in range(k, n):
            key = keys[j]
            if key >= last:
                continue  # (an equal key comes from a later index: it stays out)
            p = k - 1
            while p > 0 and key < bk[p - 1]:
                bk[p] = bk[p - 1]
                bi[p] = bi[p - 1]
                p -= 1
            bk[p] = key
            bi[p] = j
            last = bk[k - 1]
        out_v = values[r]
        out_i = indices[r]
        for t in range(k):
            out_i[t] = bi[t]
            out_v[t] = row[bi[t]]


def select_small(u, k, kind, top, nan_above, largest, values, indices):
    _select_small(u, k, kind, top, nan_above, largest, values, indices, 0, u.shape[0])


@jit_options(", parallel=True")
def select_small_par(u, k, kind, top, nan_above, largest, values, indices):
    # select_small with blocks of rows over Numba's threads (each block its own buffers)
    rows = u.shape[0]
    blocks = min(rows, 64)
    for b in prange(blocks):
        _select_small(u, k, kind, top, nan_above, largest, values, indices,
                      b * rows // blocks, (b + 1) * rows // blocks)


def sort_keys(u, kind, top, nan_above, largest, packed, keys):
    # each row's keys; ``packed`` (keys of up to 32 bits, rows of up to 2**32): with the
    # index in the low 32 bits, so that keys are distinct and any sort of them is the stable
    # one
    n = u.shape[1]
    for r in range(u.shape[0]):
        row = u[r]
        out = keys[r]
        if packed:
            for j in range(n):
                out[j] = (np.uint64(_key(row[j], kind, top, nan_above, largest)) << np.uint64(32)
                          | np.uint64(j))
        else:
            for j in range(n):
                out[j] = np.uint64(_key(row[j], kind, top, nan_above, largest))


def take_packed(u, keys, values, indices):
    # the first k of each row from its sorted packed keys (sort_keys)
    k = values.shape[1]
    low = np.uint64(0xFFFFFFFF)
    for r in range(u.shape[0]):
        row = u[r]
        for t in range(k):
            j = np.int64(keys[r, t] & low)
            indices[r, t] = j
            values[r, t] = row[j]


def take_ordered(u, keys, order, values, indices):
    # the first k of each row in ``order`` (an argsort of its keys); whether two of them, or
    # the k-th and the next, have equal keys (an unstable argsort may have put them out of
    # index order)
    n = u.shape[1]
    k = values.shape[1]
    tie = False
    for r in range(u.shape[0]):
        row = u[r]
        key = keys[r]
        at = order[r]
        for t in range(k):
            j = at[t]
            indices[r, t] = j
            values[r, t] = row[j]
            if t + 1 < n and key[j] == key[at[t + 1]]:
                tie = True
    return tie
