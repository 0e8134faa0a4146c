"""Loss kernels (ops/loss.py): negative log-likelihood, forward and backward, on the CPU.

``nll_loss`` picks one log-probability per target. Composed of NumPy calls (the targets'
bounds, an index grid, a gather, a sum; in backward a mask, a scatter, a select) it cost
about 20 us forward and 40 backward on a (64, 10) batch, four times PyTorch's; each kernel
here is one pass. The input is read as (N, C, S): the batch, the classes, and the trailing
dims flattened (S = 1 for (N, C), N = S = 1 for a 1-d input); the targets as (N, S).
Compiled per dtype by ``cpu.get_reduce_kernel``; CUDA keeps the composed form.
"""

import numpy as np

_c = np.float64  # replaced by the kernel dtype in generated modules


def nll_forward(x, t, w, ignore, terms, out, bad):
    # terms[n, s] = -w[k] x[n, k, s] for target k = t[n, s] (0 where k == ignore); out: their
    # sum, the targets' summed weights and the mean, in float64 (w empty: every weight 1).
    # A target outside [0, C) other than ignore stops the kernel: bad = [1, that target]
    classes = x.shape[1]
    weighted = w.shape[0] > 0
    total = 0.0
    weights = 0.0
    for n in range(x.shape[0]):
        for s in range(x.shape[2]):
            k = t[n, s]
            if k == ignore:
                terms[n, s] = _c(0)
                continue
            if k < 0 or k >= classes:
                bad[0] = 1
                bad[1] = k
                return
            wk = w[k] if weighted else _c(1)
            v = -(wk * x[n, k, s])
            terms[n, s] = v
            total += v
            weights += wk
    out[0] = total
    out[1] = weights
    out[2] = total / weights  # (no target counted: 0 / 0, NaN, as PyTorch's mean)


def nll_backward(g, each, t, w, ignore, total, mean, out):
    # out[n, k, s] = -w[k] g for each target k = t[n, s] (g / total for a mean; g[n, s] when
    # ``each``, a loss per target), zero elsewhere: PyTorch's nll_loss_backward
    weighted = w.shape[0] > 0
    for n in range(out.shape[0]):
        for k in range(out.shape[1]):
            for s in range(out.shape[2]):
                out[n, k, s] = _c(0)
    for n in range(out.shape[0]):
        for s in range(out.shape[2]):
            k = t[n, s]
            if k == ignore:
                continue
            gv = g[n, s] if each else g[0, 0]
            if mean:
                gv = gv / total
            out[n, k, s] = -((w[k] if weighted else _c(1)) * gv)
