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


def adam_row(i, n_per, n, p, po, m, mo, v, vo, vmax, vmaxo, g, go, amsgrad, maximize, decay,
             weight_decay, small, weight, one_minus_weight, value, beta2, bc2_sqrt, eps,
             neg_step_size):
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
        x = ps[j] * decay
        grad = _decayed(gs[j], x, maximize, weight_decay)
        a = _lerp(ms[j], grad, small, weight, one_minus_weight)
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


def _lerp(a, b, small, weight, one_minus_weight):
    # ``a.lerp_(b, weight)``: PyTorch's two formulas, each exact at its end
    if small:
        return a + (b - a) * weight
    return b - (b - a) * one_minus_weight


def _decayed(grad, x, maximize, weight_decay):
    # the gradient negated for ``maximize``, then with L2 weight decay added
    if maximize:
        grad = -grad
    if weight_decay != _c(0):
        grad = grad + x * weight_decay
    return grad


def sgd_row(i, n_per, n, p, po, buf, bo, g, go, maximize, weight_decay, momentum, first,
            dampened, nesterov, neg_lr):
    # SGD: grad (+ p * weight_decay); with momentum: buf = grad on the first step, else
    #   buf = buf * momentum + grad * (1 - dampening); grad = grad + buf * momentum (Nesterov)
    #   or buf; then p += grad * -lr
    lo = i * n_per
    hi = min(n, lo + n_per)
    ps = p[po + lo:po + hi]
    bs = buf[bo + lo:bo + hi]
    gs = g[go + lo:go + hi]
    for j in range(hi - lo):
        x = ps[j]
        grad = _decayed(gs[j], x, maximize, weight_decay)
        if momentum != _c(0):
            b = grad if first else bs[j] * momentum + grad * dampened
            bs[j] = b
            grad = grad + b * momentum if nesterov else b
        ps[j] = x + grad * neg_lr


def rmsprop_row(i, n_per, n, p, po, sq, sqo, buf, bo, ga, gao, g, go, maximize, weight_decay,
                alpha, weight, one_minus_weight, small, centered, eps, momentum, neg_lr):
    # RMSprop (weight = 1 - alpha): s = s * alpha + (grad * weight) * grad; centered:
    # ga.lerp_(grad, weight)
    # and avg = sqrt(s - ga * ga), else sqrt(s); avg += eps; with momentum
    # buf = buf * momentum + grad / avg and p += buf * -lr, else p += (grad * -lr) / avg
    lo = i * n_per
    hi = min(n, lo + n_per)
    ps = p[po + lo:po + hi]
    sqs = sq[sqo + lo:sqo + hi]
    bs = buf[bo + lo:bo + hi]
    gas = ga[gao + lo:gao + hi]
    gs = g[go + lo:go + hi]
    for j in range(hi - lo):
        x = ps[j]
        grad = _decayed(gs[j], x, maximize, weight_decay)
        s = sqs[j] * alpha + (grad * weight) * grad
        sqs[j] = s
        if centered:
            a = _lerp(gas[j], grad, small, weight, one_minus_weight)
            gas[j] = a
            s = s - a * a
        avg = math.sqrt(s) + eps
        if momentum > _c(0):
            b = bs[j] * momentum + grad / avg
            bs[j] = b
            ps[j] = x + b * neg_lr
        else:
            ps[j] = x + (grad * neg_lr) / avg


def adagrad_row(i, n_per, n, p, po, acc, ao, g, go, maximize, weight_decay, eps, neg_clr):
    # Adagrad: sum += grad * grad; p += (grad * -clr) / (sqrt(sum) + eps)
    lo = i * n_per
    hi = min(n, lo + n_per)
    ps = p[po + lo:po + hi]
    accs = acc[ao + lo:ao + hi]
    gs = g[go + lo:go + hi]
    for j in range(hi - lo):
        x = ps[j]
        grad = _decayed(gs[j], x, maximize, weight_decay)
        s = accs[j] + grad * grad
        accs[j] = s
        ps[j] = x + (grad * neg_clr) / (math.sqrt(s) + eps)


def adadelta_row(i, n_per, n, p, po, sq, sqo, acc, ao, g, go, maximize, weight_decay, rho,
                 one_minus_rho, eps, neg_lr):
    # Adadelta: s = s * rho + (grad * (1 - rho)) * grad;
    # delta = sqrt(acc + eps) / sqrt(s + eps) * grad; acc = acc * rho + (delta * (1 - rho)) *
    # delta; p += delta * -lr
    lo = i * n_per
    hi = min(n, lo + n_per)
    ps = p[po + lo:po + hi]
    sqs = sq[sqo + lo:sqo + hi]
    accs = acc[ao + lo:ao + hi]
    gs = g[go + lo:go + hi]
    for j in range(hi - lo):
        x = ps[j]
        grad = _decayed(gs[j], x, maximize, weight_decay)
        s = sqs[j] * rho + (grad * one_minus_rho) * grad
        sqs[j] = s
        a = accs[j]
        delta = math.sqrt(a + eps) / math.sqrt(s + eps) * grad
        accs[j] = a * rho + (delta * one_minus_rho) * delta
        ps[j] = x + delta * neg_lr


def adamax_row(i, n_per, n, p, po, m, mo, u, uo, g, go, maximize, weight_decay, small, weight,
               one_minus_weight, beta2, eps, neg_clr):
    # Adamax: m.lerp_(grad, 1 - beta1); u = maximum(u * beta2, |grad| + eps) (NaN wins);
    # p += (m * -clr) / u
    lo = i * n_per
    hi = min(n, lo + n_per)
    ps = p[po + lo:po + hi]
    ms = m[mo + lo:mo + hi]
    us = u[uo + lo:uo + hi]
    gs = g[go + lo:go + hi]
    for j in range(hi - lo):
        x = ps[j]
        grad = _decayed(gs[j], x, maximize, weight_decay)
        a = _lerp(ms[j], grad, small, weight, one_minus_weight)
        ms[j] = a
        top = us[j] * beta2
        c = abs(grad) + eps
        if c > top or c != c:
            top = c
        us[j] = top
        ps[j] = x + (a * neg_clr) / top


def nadam_row(i, n_per, n, p, po, m, mo, v, vo, g, go, maximize, decay, weight_decay, small,
              weight, one_minus_weight, value, beta2, bc2, eps, grad_step, avg_step):
    # NAdam: p *= decay (decoupled) | grad += p * weight_decay; m.lerp_(grad, 1 - beta1);
    # v = v * beta2 + (grad * (1 - beta2)) * grad; d = sqrt(v / bc2) + eps;
    # p += (grad * grad_step) / d, then p += (m * avg_step) / d
    lo = i * n_per
    hi = min(n, lo + n_per)
    ps = p[po + lo:po + hi]
    ms = m[mo + lo:mo + hi]
    vs = v[vo + lo:vo + hi]
    gs = g[go + lo:go + hi]
    for j in range(hi - lo):
        x = ps[j] * decay
        grad = _decayed(gs[j], x, maximize, weight_decay)
        a = _lerp(ms[j], grad, small, weight, one_minus_weight)
        ms[j] = a
        s = vs[j] * beta2 + (grad * value) * grad
        vs[j] = s
        d = math.sqrt(s / bc2) + eps
        x = x + (grad * grad_step) / d
        ps[j] = x + (a * avg_step) / d


def radam_row(i, n_per, n, p, po, m, mo, v, vo, g, go, maximize, decay, weight_decay, small,
              weight, one_minus_weight, value, beta2, bc1, lr, rectified, bc2_sqrt, eps, rect):
    # RAdam: moments as NAdam's; e = m / bc1; rectified: p -= ((e * lr) * (bc2_sqrt /
    # (sqrt(v) + eps))) * rect, else p -= e * lr
    lo = i * n_per
    hi = min(n, lo + n_per)
    ps = p[po + lo:po + hi]
    ms = m[mo + lo:mo + hi]
    vs = v[vo + lo:vo + hi]
    gs = g[go + lo:go + hi]
    for j in range(hi - lo):
        x = ps[j] * decay
        grad = _decayed(gs[j], x, maximize, weight_decay)
        a = _lerp(ms[j], grad, small, weight, one_minus_weight)
        ms[j] = a
        s = vs[j] * beta2 + (grad * value) * grad
        vs[j] = s
        e = a / bc1
        if rectified:
            ps[j] = x - ((e * lr) * (bc2_sqrt / (math.sqrt(s) + eps))) * rect
        else:
            ps[j] = x - e * lr


def asgd_row(i, n_per, n, p, po, ax, axo, g, go, maximize, weight_decay, decay, neg_eta,
             averaging, mu):
    # ASGD: p = p * decay + grad * -eta; then ax += (p - ax) * mu while averaging, else ax = p
    lo = i * n_per
    hi = min(n, lo + n_per)
    ps = p[po + lo:po + hi]
    axs = ax[axo + lo:axo + hi]
    gs = g[go + lo:go + hi]
    for j in range(hi - lo):
        x = ps[j]
        grad = _decayed(gs[j], x, maximize, weight_decay)
        x = x * decay + grad * neg_eta
        ps[j] = x
        if averaging:
            a = axs[j]
            axs[j] = a + (x - a) * mu
        else:
            axs[j] = x


def _sign(v):
    # PyTorch's sign of a float: 0 for 0 and NaN
    if v > _c(0):
        return _c(1)
    if v < _c(0):
        return _c(-1)
    return _c(0)


def rprop_row(i, n_per, n, p, po, size, so, prev, pro, g, go, maximize, etaminus, etaplus,
              size_min, size_max):
    # Rprop: the step size times etaplus where grad * prev keeps its sign, etaminus where it
    # flips (that element's gradient then taken as 0), 1 where it is 0, clamped to
    # [size_min, size_max] (NaN kept); p += (sign(grad) * -1) * size; prev = grad
    lo = i * n_per
    hi = min(n, lo + n_per)
    ps = p[po + lo:po + hi]
    sizes = size[so + lo:so + hi]
    prevs = prev[pro + lo:pro + hi]
    gs = g[go + lo:go + hi]
    for j in range(hi - lo):
        grad = gs[j]
        if maximize:
            grad = -grad
        s = _sign(grad * prevs[j])
        factor = etaplus if s > _c(0) else etaminus if s < _c(0) else _c(1)
        step = sizes[j] * factor
        if step < size_min:
            step = size_min
        if step > size_max:
            step = size_max
        sizes[j] = step
        if factor == etaminus:
            grad = _c(0)
        ps[j] = ps[j] + (_sign(grad) * _c(-1)) * step
        prevs[j] = grad
