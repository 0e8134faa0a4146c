"""Connectionist temporal classification (ops/ctc.py): the forward (alpha) and backward (beta)
recursions over log-probabilities, on the CPU, in float64 whatever the input's dtype.

Each sequence ``b`` of the batch has ``il[b]`` steps of ``lp[:, b, :]`` (T, N, C) and a target
of ``tl[b]`` labels at ``targets[offsets[b]:]``. The recursions run over the extended target
``l'``: the labels with a blank before each and one after the last, ``2 * tl[b] + 1``
positions; an even position is a blank, an odd one ``s`` the label ``targets[offsets[b] + s //
2]``. A path may stay at a position, move to the next, or skip the blank between two labels
that differ.

``log_alpha[b, t, s]`` is the log of the summed probability of the path prefixes of steps
``0..t`` that end at position ``s``; ``log_beta[t, s]`` the same for the suffixes of steps
``t..il[b]-1`` that start at ``s``. Both include step ``t``'s own emission, so their sum
counts it twice, which the gradient divides out.

Compiled by ``cpu.get_reduce_kernel`` (float64 only); literals are compiled as written.
"""

import math  # noqa: F401  (used by the generated modules)

import numpy as np  # noqa: F401

_c = np.float64  # replaced by the kernel dtype in generated modules


def _lse2(a, b):
    # log(exp(a) + exp(b)) without overflow; -inf when both are -inf (not nan)
    m = a if a > b else b
    if m == -math.inf:
        return -math.inf
    return math.log(math.exp(a - m) + math.exp(b - m)) + m


def _lse3(a, b, c):
    m = a if a > b else b
    m = m if m > c else c
    if m == -math.inf:
        return -math.inf
    return math.log(math.exp(a - m) + math.exp(b - m) + math.exp(c - m)) + m


def _label(targets, offset, blank, s):
    # the extended target's label at position s
    if s % 2 == 0:
        return blank
    return targets[offset + s // 2]


def ctc_forward(lp, targets, offsets, tl, il, blank, log_alpha, nll):
    # log_alpha (N, T, W) with W >= 2 * max(tl) + 1, filled here (-inf where no path reaches);
    # nll[b] = -log p(target b | lp[:il[b], b]): +inf where no path fits in il[b] steps
    n_batch = lp.shape[1]
    for b in range(n_batch):
        steps = il[b]
        width = 2 * tl[b] + 1
        off = offsets[b]
        for t in range(log_alpha.shape[1]):
            for s in range(log_alpha.shape[2]):
                log_alpha[b, t, s] = -math.inf
        if steps == 0:
            # (no steps: only the empty target has a path, the empty one; -0.0 as PyTorch)
            nll[b] = -0.0 if tl[b] == 0 else math.inf
            continue
        log_alpha[b, 0, 0] = lp[0, b, blank]
        if width > 1:
            log_alpha[b, 0, 1] = lp[0, b, targets[off]]
        for t in range(1, steps):
            for s in range(width):
                k = _label(targets, off, blank, s)
                stay = log_alpha[b, t - 1, s]
                step = log_alpha[b, t - 1, s - 1] if s > 0 else -math.inf
                skip = -math.inf
                if s > 1 and k != _label(targets, off, blank, s - 2):
                    skip = log_alpha[b, t - 1, s - 2]
                log_alpha[b, t, s] = _lse3(stay, step, skip) + lp[t, b, k]
        # a path ends on the last label or on the blank after it
        last = log_alpha[b, steps - 1, width - 1]
        if width > 1:
            last = _lse2(last, log_alpha[b, steps - 1, width - 2])
        nll[b] = -last


def ctc_backward(lp, targets, offsets, tl, il, blank, log_alpha, nll, grad_out, zero_infinity,
                 log_beta, lcab, grad):
    # grad (T, N, C): for t < il[b], (exp(lp) - exp(lcab + nll - lp)) * grad_out[b], where lcab
    # is the log of the summed alpha * beta of the positions carrying class c at step t; 0 for
    # the steps after il[b], and for a whole sequence of infinite loss under zero_infinity.
    # The exp(lp) term is the gradient through a log_softmax that lp is taken to come from
    # (PyTorch's convention: the loss's own derivative is the second term alone).
    # log_beta (T, W) and lcab (C,): scratch.
    n_steps = lp.shape[0]
    n_batch = lp.shape[1]
    classes = lp.shape[2]
    for b in range(n_batch):
        steps = il[b]
        width = 2 * tl[b] + 1
        off = offsets[b]
        gr = grad_out[b]
        if zero_infinity and nll[b] == math.inf:
            steps = 0
        for t in range(steps, n_steps):
            for c in range(classes):
                grad[t, b, c] = 0.0
        if steps == 0:
            continue
        for t in range(steps):
            for s in range(width):
                log_beta[t, s] = -math.inf
        t = steps - 1
        log_beta[t, width - 1] = lp[t, b, blank]
        if width > 1:
            log_beta[t, width - 2] = lp[t, b, targets[off + tl[b] - 1]]
        for t in range(steps - 2, -1, -1):
            for s in range(width):
                k = _label(targets, off, blank, s)
                stay = log_beta[t + 1, s]
                step = log_beta[t + 1, s + 1] if s + 1 < width else -math.inf
                skip = -math.inf
                if s + 2 < width and k != _label(targets, off, blank, s + 2):
                    skip = log_beta[t + 1, s + 2]
                log_beta[t, s] = _lse3(stay, step, skip) + lp[t, b, k]
        loss = nll[b]
        for t in range(steps):
            for c in range(classes):
                lcab[c] = -math.inf
            for s in range(width):
                k = _label(targets, off, blank, s)
                lcab[k] = _lse2(lcab[k], log_alpha[b, t, s] + log_beta[t, s])
            if t == steps - 1 and width > 1 and targets[off + tl[b] - 1] == blank:
                # PyTorch's CPU kernel sets the last step's two terms one after the other,
                # taking the last label for other than the blank: where a target ends with
                # the blank's class, the second replaces the first instead of adding to it
                lcab[blank] = log_alpha[b, t, width - 2] + log_beta[t, width - 2]
            for c in range(classes):
                v = lp[t, b, c]
                grad[t, b, c] = (math.exp(v) - math.exp(lcab[c] + loss - v)) * gr
