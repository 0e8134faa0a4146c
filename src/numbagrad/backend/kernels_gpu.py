"""CUDA kernels that are not elementwise (gathers, reductions, matmul): plain Python, per dtype.

``gpu._kernel`` compiles these with ``_c`` bound to the kernel's dtype (literals are *not*
retyped here: write ``_c(0)`` for a value of the kernel's dtype), ``THREADS`` to the block size
of the reductions and ``TILE`` to the matmul tile edge. The reductions are folds run by
``fold_thread``/``fold_tree`` (see "reductions" below).

All buffers are flat 1-D device arrays; a (rows, n) matrix is row-major with no padding.
"""

import math  # noqa: F401

import numpy as np

# bound in the generated modules: numba.cuda, and the kernel's dtype (so that reading these
# definitions, as the ops that declare them do, never imports numba-cuda)
cuda = None
_c = np.float64
THREADS = 32
TILE = 16


# ---------------------------------------------------------------- reductions
# A reduction is written as the step that folds one more value into a row's result, named as
# the CPU kernel of the same reduction (kernels_reduce.py). ``gpu.reduce_rows`` runs a fold with
# one of the two loops below, compiled with it under the name ``combine``, as an elementwise
# op's scalar function is compiled under the name ``_entry``; ``gpu.argreduce_rows`` runs an
# index fold (``better``) the same way.


def sum_rows(acc, v):
    return acc + v


def prod_rows(acc, v):
    return acc * v


def amax_rows(acc, v):
    # NaN wins, as in PyTorch
    if acc != acc:
        return acc
    if v != v:
        return v
    return acc if acc >= v else v


def amin_rows(acc, v):
    if acc != acc:
        return acc
    if v != v:
        return v
    return acc if acc <= v else v


def argmax_rows(v, i, w, j):
    # does (w, j) beat (v, i)? the first NaN, else the larger value, else the smaller index
    if v != v:
        return w != w and j < i
    if w != w:
        return True
    return w > v or (w == v and j < i)


def argmin_rows(v, i, w, j):
    if v != v:
        return w != w and j < i
    if w != w:
        return True
    return w < v or (w == v and j < i)


def fold_thread(x, r, n, out, init):
    # many short rows: one thread reduces one row
    for i in range(cuda.grid(1), r, cuda.gridsize(1)):
        acc = init
        base = i * n
        for j in range(n):
            acc = combine(acc, x[base + j])  # noqa: F821 (the fold, bound in its module)
        out[i] = acc


def fold_tree(x, nb, n, chunks, clen, out, init):
    # block b reduces chunk (b % chunks) of row (b // chunks): strided loads, then a tree
    sm = cuda.shared.array(THREADS, _c)
    tid = cuda.threadIdx.x
    for b in range(cuda.blockIdx.x, nb, cuda.gridDim.x):
        row = b // chunks
        lo = (b - row * chunks) * clen
        hi = min(lo + clen, n)
        acc = init
        for j in range(lo + tid, hi, THREADS):
            acc = combine(acc, x[row * n + j])  # noqa: F821
        sm[tid] = acc
        cuda.syncthreads()
        s = THREADS // 2
        while s > 0:
            if tid < s:
                sm[tid] = combine(sm[tid], sm[tid + s])  # noqa: F821
            cuda.syncthreads()
            s //= 2
        if tid == 0:
            out[b] = sm[0]
        cuda.syncthreads()


def argfold_thread(x, r, n, out):
    for i in range(cuda.grid(1), r, cuda.gridsize(1)):
        base = i * n
        best = x[base]
        k = 0
        for j in range(1, n):
            if better(best, k, x[base + j], j):  # noqa: F821 (the index fold, bound likewise)
                best = x[base + j]
                k = j
        out[i] = k


def argfold_tree(x, r, n, out):
    sv = cuda.shared.array(THREADS, _c)
    si = cuda.shared.array(THREADS, np.int64)
    tid = cuda.threadIdx.x
    for row in range(cuda.blockIdx.x, r, cuda.gridDim.x):
        base = row * n
        best = x[base]
        k = 0
        for j in range(tid, n, THREADS):
            if better(best, k, x[base + j], j):  # noqa: F821
                best = x[base + j]
                k = j
        sv[tid] = best
        si[tid] = k
        cuda.syncthreads()
        s = THREADS // 2
        while s > 0:
            if tid < s and better(sv[tid], si[tid], sv[tid + s], si[tid + s]):  # noqa: F821
                sv[tid] = sv[tid + s]
                si[tid] = si[tid + s]
            cuda.syncthreads()
            s //= 2
        if tid == 0:
            out[row] = si[0]
        cuda.syncthreads()


# ---------------------------------------------------------------- other row kernels


def prod_others_rows(x, r, n, out):
    # out[i, j] = product of row i without element j, zeros included (no division)
    for i in range(cuda.grid(1), r, cuda.gridsize(1)):
        base = i * n
        acc = _c(1)
        for j in range(n):
            out[base + j] = acc
            acc *= x[base + j]
        acc = _c(1)
        for j in range(n - 1, -1, -1):
            out[base + j] *= acc
            acc *= x[base + j]


def cumsum_rows(x, r, n, out):
    for i in range(cuda.grid(1), r, cuda.gridsize(1)):
        base = i * n
        acc = _c(0)
        for j in range(n):
            acc += x[base + j]
            out[base + j] = acc


def rcumsum_rows(x, r, n, out):
    # the sums from each element to the end of its row (cumsum's gradient)
    for i in range(cuda.grid(1), r, cuda.gridsize(1)):
        base = i * n
        acc = _c(0)
        for j in range(n - 1, -1, -1):
            acc += x[base + j]
            out[base + j] = acc


# ---------------------------------------------------------------- indexing


def gather(src, pos, out, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[i] = src[pos[i]]


def scatter(dst, pos, vals, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        dst[pos[i]] = vals[i]


def scatter_add(dst, pos, vals, n):
    # repeated positions accumulate (NumPy's add.at)
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        cuda.atomic.add(dst, pos[i], vals[i])


# ---------------------------------------------------------------- matmul


def matmul_tiled(x, xo, y, yo, out, n, k, m):
    # out[b] = x[b] @ y[b]; x (b, n, k), y (b, k, m), out (b, n, m), all contiguous.
    # Each block computes a TILE x TILE tile of out, staging tiles of x and y in shared memory.
    tx = cuda.shared.array((TILE, TILE), _c)
    ty = cuda.shared.array((TILE, TILE), _c)
    b = cuda.blockIdx.z
    row = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    xb = xo + b * n * k
    yb = yo + b * k * m
    acc = _c(0)
    for t in range((k + TILE - 1) // TILE):
        kx = t * TILE + cuda.threadIdx.x
        ky = t * TILE + cuda.threadIdx.y
        if row < n and kx < k:
            tx[cuda.threadIdx.y, cuda.threadIdx.x] = x[xb + row * k + kx]
        else:
            tx[cuda.threadIdx.y, cuda.threadIdx.x] = _c(0)
        if col < m and ky < k:
            ty[cuda.threadIdx.y, cuda.threadIdx.x] = y[yb + ky * m + col]
        else:
            ty[cuda.threadIdx.y, cuda.threadIdx.x] = _c(0)
        cuda.syncthreads()
        for j in range(TILE):
            acc += tx[cuda.threadIdx.y, j] * ty[j, cuda.threadIdx.x]
        cuda.syncthreads()
    if row < n and col < m:
        out[b * n * m + row * m + col] = acc
