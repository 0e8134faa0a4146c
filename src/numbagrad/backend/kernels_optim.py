"""Optimizer updates, written once for both targets as row functions (the convention of
kernels_conv.py): row ``i`` updates elements ``[i * n_per, min(n, (i + 1) * n_per))`` of a
flat parameter and its state in place. The CPU runs the rows in a loop (over Numba's threads
when the work pays), CUDA as one thread per row; compiled per dtype. Every array is a flat
buffer with an element offset (``flat_view``): the arrays written first, the parameter first
of them, then those read (``optim.optimizer.run_update``). Every number is of the kernel's
dtype, so each step rounds as the op-by-op update of PyTorch's single-tensor optimizer does.
"""

import math  # noqa: F401  (used by the generated modules)

import numpy as np

_c = np.float64  # replaced by the kernel dtype in generated modules


def adam_row(i, n_per, n, p, po, m, mo, v, vo, vmax, vmaxo, g, go, amsgrad, maximize,
             decoupled, decay, weight_decay, small, weight, one_minus_weight, value, beta2,
             bc2_sqrt, eps, neg_step_size):
    # Adam and AdamW, element by element, in PyTorch's order:
    #   p *= decay (decoupled weight decay) | grad += p * weight_decay (L2)
    #   m.lerp_(grad, weight); v = v * beta2 + (grad * value) * grad
    #   (AMSGrad: vmax = maximum(vmax, v), read instead of v)
    #   p += (m * neg_step_size) / (sqrt(v) / bc2_sqrt + eps)
    lo = i * n_per
    hi = min(n, lo + n_per)
    # (each buffer's row as a slice, indexed from 0: an index ``offset + j`` makes Numba check
    # for a negative index, which keeps LLVM from vectorizing the loop)
    ps = p[po + lo:po + hi]
    ms = m[mo + lo:mo + hi]
    vs = v[vo + lo:vo + hi]
    tops = vmax[vmaxo + lo:vmaxo + hi]
    gs = g[go + lo:go + hi]
    for j in range(hi - lo):
        grad = gs[j]
        if maximize:
            grad = -grad
        x = ps[j]
        if decoupled:
            x = x * decay
        elif weight_decay != _c(0):
            grad = grad + x * weight_decay
        a = ms[j]
        if small:  # (lerp's two formulas, each exact at its end)
            a = a + (grad - a) * weight
        else:
            a = grad - (grad - a) * one_minus_weight
        ms[j] = a
        s = vs[j] * beta2
        s = s + (grad * value) * grad
        vs[j] = s
        if amsgrad:
            top = tops[j]
            if s > top or s != s:  # (NaN wins, as maximum's)
                top = s
            tops[j] = top
            s = top
        ps[j] = x + (a * neg_step_size) / (math.sqrt(s) / bc2_sqrt + eps)
