"""Reduction and row kernels, written once as plain Python and compiled per dtype.

Each kernel reads a C-contiguous (rows, n) matrix ``x`` and writes one value per row (or a
row of the same length). Literals are compiled as written, as in the CUDA kernels
(kernels_gpu.py): a value of the kernel's dtype is spelled ``_c(0)``, a plain ``0`` is an
integer.
"""

import math  # noqa: F401  (used by the generated modules)

import numpy as np  # noqa: F401
from numba import prange  # noqa: F401  (the parallel kernels' loops)

_c = np.float64  # replaced by the kernel dtype in generated modules
_acc = np.float64  # ... by its accumulator type (codegen.HEADER)


def jit_options(extra):
    """Declare the Numba options ``extra`` (``codegen.jit_line``'s) the kernel compiles with."""

    def declare(fn):
        fn.jit_options = extra
        return fn

    return declare


# reassociation lets LLVM vectorise sums: faster, and more accurate than a serial float32 sum
REASSOC = ", fastmath={'reassoc'}"


@jit_options(REASSOC)
def sum_rows(x, out):
    for i in range(x.shape[0]):
        acc = _c(0)
        for j in range(x.shape[1]):
            acc += x[i, j]
        out[i] = acc


def small_mm(x, y, out):
    # out = x @ y for a small product (cpu.matmul's), of operands of any layout: rows of y
    # are added into a row of out, so the loop over j runs along rows where y is row-major
    n = x.shape[0]
    k = x.shape[1]
    m = y.shape[1]
    for i in range(n):
        for j in range(m):
            out[i, j] = _c(0)
        for p in range(k):
            v = x[i, p]
            for j in range(m):
                out[i, j] += v * y[p, j]


def sum_cols(x, out, part):
    _add_cols(x, out, part)


def _add_cols(x, out, part):
    # out[j] = the sum of column j, for a sum over leading dims (a broadcast gradient summed
    # back to a bias): rows are added whole, so the loop over j vectorizes and no transposed
    # copy is made. Blocks of 256 rows sum into ``part`` first, so rounding error grows with
    # the number of blocks, not of rows.
    m = x.shape[0]
    n = x.shape[1]
    for j in range(n):
        out[j] = _c(0)
    for b in range(0, m, 256):
        for j in range(n):
            part[j] = _c(0)
        for i in range(b, min(b + 256, m)):
            for j in range(n):
                part[j] += x[i, j]
        for j in range(n):
            out[j] += part[j]


@jit_options(", parallel=True")
def sum_cols_par(x, out, parts):
    # sum_cols over Numba's threads: each block of 256 rows sums into its own row of
    # ``parts`` in parallel (whole rows, so the loop over j vectorizes), then the blocks are
    # added in order: the same rounding as sum_cols
    m = x.shape[0]
    n = x.shape[1]
    for b in prange(parts.shape[0]):
        part = parts[b]
        for j in range(n):
            part[j] = _c(0)
        for i in range(b * 256, min(b * 256 + 256, m)):
            row = x[i]
            for j in range(n):
                part[j] += row[j]
    for j in range(n):
        out[j] = _c(0)
    for b in range(parts.shape[0]):
        part = parts[b]
        for j in range(n):
            out[j] += part[j]


@jit_options(REASSOC + ", parallel=True")
def sum_all_par(x, out, part):
    # the sum of a whole contiguous array (one row) over Numba's threads: ``part`` holds one
    # sum per block of 16384 elements, added up at the end
    n = x.shape[1]
    for b in prange(part.shape[0]):
        acc = _c(0)
        block = x[0, b * 16384:min((b + 1) * 16384, n)]
        for j in range(block.shape[0]):
            acc += block[j]
        part[b] = acc
    acc = _c(0)
    for b in range(part.shape[0]):
        acc += part[b]
    out[0] = acc


def prod_rows(x, out):
    for i in range(x.shape[0]):
        acc = _c(1)
        for j in range(x.shape[1]):
            acc *= x[i, j]
        out[i] = acc


def amax_rows(x, out):
    # NaN wins, as in PyTorch
    for i in range(x.shape[0]):
        out[i] = _extreme_of(x[i], True)


def amin_rows(x, out):
    for i in range(x.shape[0]):
        out[i] = _extreme_of(x[i], False)


def argmax_rows(x, out):
    # first index of the maximum; the first NaN counts as the maximum
    for i in range(x.shape[0]):
        out[i] = _extreme_at(x[i], True)


def argmin_rows(x, out):
    for i in range(x.shape[0]):
        out[i] = _extreme_at(x[i], False)


def max_rows_indices(x, out, indices):
    # max(dim)'s values and indices in one kernel: out[i] = x[i, indices[i]]
    for i in range(x.shape[0]):
        k = _extreme_at(x[i], True)
        out[i] = x[i, k]
        indices[i] = k


def min_rows_indices(x, out, indices):
    for i in range(x.shape[0]):
        k = _extreme_at(x[i], False)
        out[i] = x[i, k]
        indices[i] = k


def put_along_dim(out, g, index):
    # out[b, index[b, a], a] = g[b, a]: max(dim)'s and min(dim)'s gradient scattered into
    # zeros ``out``, the input seen as (dims before dim, dim, dims after)
    for b in range(out.shape[0]):
        for a in range(out.shape[2]):
            out[b, index[b, a], a] = g[b, a]


def _extreme_at(r, largest):
    # the first index of the largest (smallest) of r's values, or of its first NaN: the
    # extreme by the vectorized loop of _extreme_of, then a scan for its first position
    m = _extreme_of(r, largest)
    j = 0
    if m != m:
        while r[j] == r[j]:
            j += 1
    else:
        while r[j] != m:
            j += 1
    return j


def _extreme_of(r, largest):
    # the largest (smallest) of r's values (one or more), or its first NaN, as in PyTorch: in
    # eight independent running extremes and one NaN flag OR-ed per element, checked once, so
    # that the compares overlap (one chain that breaks at a NaN took 20 us for 64 rows of
    # 512, this 8.5; LLVM still does not turn it into vector max instructions)
    n = r.shape[0]
    m0 = m1 = m2 = m3 = m4 = m5 = m6 = m7 = r[0]
    nan = False
    j = 0
    while j + 8 <= n:
        v0, v1, v2, v3 = r[j], r[j + 1], r[j + 2], r[j + 3]
        v4, v5, v6, v7 = r[j + 4], r[j + 5], r[j + 6], r[j + 7]
        nan |= ((v0 != v0) | (v1 != v1) | (v2 != v2) | (v3 != v3)
                | (v4 != v4) | (v5 != v5) | (v6 != v6) | (v7 != v7))
        m0 = _better(m0, v0, largest)
        m1 = _better(m1, v1, largest)
        m2 = _better(m2, v2, largest)
        m3 = _better(m3, v3, largest)
        m4 = _better(m4, v4, largest)
        m5 = _better(m5, v5, largest)
        m6 = _better(m6, v6, largest)
        m7 = _better(m7, v7, largest)
        j += 8
    m = _better(_better(_better(m0, m1, largest), _better(m2, m3, largest), largest),
                _better(_better(m4, m5, largest), _better(m6, m7, largest), largest), largest)
    while j < n:
        v = r[j]
        nan |= v != v
        m = _better(m, v, largest)
        j += 1
    if nan:  # (only a float row gets here)
        j = 0
        while r[j] == r[j]:
            j += 1
        m = r[j]
    return m


def _better(m, v, largest):
    return max(m, v) if largest else min(m, v)


@jit_options(REASSOC)  # (both sums vectorize; the shift by k stays per element)
def var_rows(x, out, correction):
    # two passes over the values shifted by the row's first one: the mean first, then squared
    # deviations (stable for large offsets, and exactly 0 for a constant row, whose mean may
    # not be exact in float32)
    n = x.shape[1]
    for i in range(x.shape[0]):
        k = x[i, 0] if n > 0 else _c(0)
        s = _c(0)
        for j in range(n):
            s += x[i, j] - k
        mean = s / _c(n)
        ss = _c(0)
        for j in range(n):
            d = (x[i, j] - k) - mean
            ss += d * d
        dof = _c(n) - correction
        if dof < 0:
            dof = _c(0)
        out[i] = ss / dof


@jit_options(REASSOC)
def norm2_rows(x, out):
    for i in range(x.shape[0]):
        acc = _c(0)
        for j in range(x.shape[1]):
            acc += x[i, j] * x[i, j]
        out[i] = math.sqrt(acc)


@jit_options(REASSOC)  # (the sum of exponentials vectorizes)
def logsumexp_rows(x, out):
    for i in range(x.shape[0]):
        # (an empty row's maximum is -inf, and so is its result)
        m = _max_of(x[i], x.shape[1])
        # an infinite maximum cannot be subtracted; shift by 0 and let inf/-inf through
        if math.isinf(m):
            m = _c(0)
        s = _c(0)
        for j in range(x.shape[1]):
            s += math.exp(x[i, j] - m)
        out[i] = math.log(s) + m


def _max_of(r, n):
    # the largest of the first n values of r (-inf for none), in eight running maxima so that
    # the loop vectorizes (one chain of compares does not, whatever the fastmath flags: 33
    # against 9 us for 64 rows of 1000). Only its value for values without NaN matters: a NaN
    # makes a row's result NaN through the sum of exponentials either way
    m0 = m1 = m2 = m3 = m4 = m5 = m6 = m7 = _c(-math.inf)
    j = 0
    while j + 8 <= n:
        m0 = max(m0, r[j])
        m1 = max(m1, r[j + 1])
        m2 = max(m2, r[j + 2])
        m3 = max(m3, r[j + 3])
        m4 = max(m4, r[j + 4])
        m5 = max(m5, r[j + 5])
        m6 = max(m6, r[j + 6])
        m7 = max(m7, r[j + 7])
        j += 8
    m = max(max(max(m0, m1), max(m2, m3)), max(max(m4, m5), max(m6, m7)))
    while j < n:
        m = max(m, r[j])
        j += 1
    return m


@jit_options(REASSOC)
def softmax_rows(x, out):
    for i in range(x.shape[0]):
        m = _max_of(x[i], x.shape[1])
        # (the exponentials in a loop of their own, then their sum: each loop vectorizes, the
        # sum by the reassociation this kernel allows; one loop doing both did not)
        for j in range(x.shape[1]):
            out[i, j] = math.exp(x[i, j] - m)
        s = _c(0)
        for j in range(x.shape[1]):
            s += out[i, j]
        for j in range(x.shape[1]):
            out[i, j] = out[i, j] / s


@jit_options(REASSOC)
def log_softmax_rows(x, out):
    for i in range(x.shape[0]):
        m = _max_of(x[i], x.shape[1])
        # (the exponentials first, into out, as in softmax_rows)
        for j in range(x.shape[1]):
            out[i, j] = math.exp(x[i, j] - m)
        s = _c(0)
        for j in range(x.shape[1]):
            s += out[i, j]
        ls = math.log(s)
        # (x - m) - log(s), not x - (m + log(s)): near the row's maximum the second loses
        # the digits of a small result to cancellation
        for j in range(x.shape[1]):
            out[i, j] = (x[i, j] - m) - ls


# The gradients of softmax and log_softmax along rows, each row in one pass over its two
# inputs (the ops' formulas as Tensor ops make three passes and two temporaries):
#   softmax:     out = y * (g - sum(g * y))
#   log_softmax: out = g - exp(y) * sum(g)
@jit_options(REASSOC)
def softmax_backward_rows(g, y, out):
    for i in range(g.shape[0]):
        s = _c(0)
        for j in range(g.shape[1]):
            s += g[i, j] * y[i, j]
        for j in range(g.shape[1]):
            out[i, j] = y[i, j] * (g[i, j] - s)


@jit_options(REASSOC)
def log_softmax_backward_rows(g, y, out):
    for i in range(g.shape[0]):
        s = _c(0)
        for j in range(g.shape[1]):
            s += g[i, j]
        for j in range(g.shape[1]):
            out[i, j] = g[i, j] - math.exp(y[i, j]) * s


@jit_options(REASSOC)
def mean_rows(x, out):
    n = _c(x.shape[1])
    for i in range(x.shape[0]):
        acc = _c(0)
        for j in range(x.shape[1]):
            acc += x[i, j]
        out[i] = acc / n


# A reduction over the leading dims of a contiguous array (a batch norm's statistics, a mean
# over the batch) runs its ``columns`` kernel on the (rows, columns) matrix as it is, each
# row added whole so the loop over columns vectorizes, instead of the row kernel on a
# transposed copy (cpu.run_reduce): out[j] is column j's value.
def mean_cols(x, out):
    _add_cols(x, out, np.empty(x.shape[1], x.dtype))
    n = _c(x.shape[0])
    for j in range(x.shape[1]):
        out[j] = out[j] / n


def var_cols(x, out, correction):
    # var_rows's two passes for each column, shifted by its first value
    m = x.shape[0]
    k = np.empty(x.shape[1], x.dtype)
    mean = np.zeros(x.shape[1], x.dtype)
    for j in range(x.shape[1]):
        k[j] = x[0, j] if m > 0 else _c(0)
        out[j] = _c(0)
    for i in range(m):
        for j in range(x.shape[1]):
            mean[j] += x[i, j] - k[j]
    for j in range(x.shape[1]):
        mean[j] = mean[j] / _c(m)
    for i in range(m):
        for j in range(x.shape[1]):
            d = (x[i, j] - k[j]) - mean[j]
            out[j] += d * d
    dof = _c(m) - correction
    if dof < 0:
        dof = _c(0)
    for j in range(x.shape[1]):
        out[j] = out[j] / dof


mean_rows.columns = mean_cols


def prod_others_rows(x, out):
    # out[i, j] = product of row i without element j, zeros included (no division)
    for i in range(x.shape[0]):
        acc = _c(1)
        for j in range(x.shape[1]):
            out[i, j] = acc
            acc *= x[i, j]
        acc = _c(1)
        for j in range(x.shape[1] - 1, -1, -1):
            out[i, j] *= acc
            acc *= x[i, j]


def cumsum_rows(x, out):
    # (a float32 row summed in float64, each running sum rounded: PyTorch's CPU cumsum)
    for i in range(x.shape[0]):
        acc = _acc(0)
        for j in range(x.shape[1]):
            acc += x[i, j]
            out[i, j] = acc


def rcumsum_rows(x, out):
    # the sums from each element to the end of its row (cumsum's gradient)
    for i in range(x.shape[0]):
        acc = _acc(0)
        for j in range(x.shape[1] - 1, -1, -1):
            acc += x[i, j]
            out[i, j] = acc


def index_add_rows(a, index, values):
    # a[index[k]] += values[k] for each k in turn, so repeated rows add up: the accumulating
    # scatter of a gather's gradient along the first dim (embedding, x[idx]). Indices were
    # range-checked by the gather; a negative one counts from the end.
    n = a.shape[0]
    for k in range(index.shape[0]):
        r = index[k]
        if r < 0:
            r += n
        for j in range(a.shape[1]):
            a[r, j] += values[k, j]


var_rows.columns = var_cols  # (see mean_cols)
