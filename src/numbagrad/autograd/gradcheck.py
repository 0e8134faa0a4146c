"""Finite-difference checks of first and second derivatives (float64, PyTorch's tolerances)."""

from __future__ import annotations

import warnings

import numpy as np

from .. import factory
from .._tensor import Tensor
from . import forward_ad
from .api import grad as autograd_grad


class GradcheckError(RuntimeError):
    pass


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _numerical_jacobian(fn, inputs, out_index, eps):
    """Central differences of output ``out_index`` w.r.t. every differentiable input."""
    jac = []
    for t in inputs:
        if not getattr(t, "requires_grad", False):
            jac.append(None)
            continue
        data = t._data
        flat = data.reshape(-1) if data.flags.c_contiguous else None
        if flat is None:
            raise GradcheckError("gradcheck expects contiguous inputs")
        out0 = _as_tuple(fn(*inputs))[out_index]
        cols = []
        host = t._host().reshape(-1)  # flat itself on the CPU; a copy of a CUDA tensor
        for k in range(flat.size):
            orig = host[k].item()
            flat[k] = orig + eps
            plus = _as_tuple(fn(*inputs))[out_index]._host().astype(np.float64).reshape(-1)
            flat[k] = orig - eps
            minus = _as_tuple(fn(*inputs))[out_index]._host().astype(np.float64).reshape(-1)
            flat[k] = orig
            cols.append((plus - minus) / (2 * eps))
        jac.append(np.stack(cols, axis=1) if cols else np.zeros((out0.numel(), 0)))
    return jac


def _forward_jacobians(fn, inputs):
    """{(output, input): Jacobian} by forward mode: one dual pass per input element, its
    tangent one-hot (an output without a tangent has a zero column)."""
    jac = {}
    for j, t in enumerate(inputs):
        if not getattr(t, "requires_grad", False):
            continue
        cols = {}
        for k in range(t.numel()):
            seed = np.zeros(t.numel(), dtype=t.dtype.np)
            seed[k] = 1
            tangent = factory.tensor(seed.reshape(t.shape), dtype=t.dtype, device=t.device)
            with forward_ad.dual_level():
                args = list(inputs)
                args[j] = forward_ad.make_dual(t, tangent)
                outs = _as_tuple(fn(*args))
                for i, out in enumerate(outs):
                    if not isinstance(out, Tensor) or not out.dtype.is_floating_point:
                        continue
                    tan = forward_ad.unpack_dual(out).tangent
                    if tan is not None and tan.dtype is not out.dtype:
                        raise GradcheckError("Forward AD gradient has dtype mismatch.")
                    col = (np.zeros(out.numel()) if tan is None
                           else tan._host().astype(np.float64).reshape(-1))
                    cols.setdefault(i, []).append(col)
        for i, c in cols.items():
            jac[i, j] = np.stack(c, axis=1)
    return jac


def _analytical_jacobian(fn, inputs, out_index, check_grad_dtypes=False):
    diff = [t for t in inputs if getattr(t, "requires_grad", False)]
    out = _as_tuple(fn(*inputs))[out_index]
    n = out.numel()
    rows = {id(t): np.zeros((n, t.numel())) for t in diff}
    if not out.requires_grad:
        return [rows.get(id(t)) for t in inputs]
    for k in range(n):
        seed = np.zeros(n, dtype=out.dtype.np)
        seed[k] = 1
        g_out = factory.tensor(seed.reshape(out.shape), dtype=out.dtype, device=out.device)
        grads = autograd_grad(out, diff, g_out, retain_graph=True, allow_unused=True)
        for t, g in zip(diff, grads):
            if g is not None:
                if check_grad_dtypes and g.dtype is not t.dtype:
                    raise GradcheckError("Gradient has dtype mismatch")
                if g.shape != t.shape:
                    raise GradcheckError(
                        f"Gradient has wrong shape: expected {t.shape}, got {g.shape}"
                    )
                rows[id(t)][k] = g._host().astype(np.float64).reshape(-1)
    return [rows.get(id(t)) for t in inputs]


def _mismatch(raise_exception, i, j, numerical, analytical, forward=False):
    if raise_exception:
        mode = "computed with forward mode " if forward else ""
        raise GradcheckError(f"Jacobian {mode}mismatch for output {i} with respect to input "
                             f"{j},\nnumerical:{numerical}\nanalytical:{analytical}\n")
    return False


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None) -> bool:
    """Compare analytical gradients (reverse mode, and forward mode where
    ``check_forward_ad``) with central finite differences on double inputs."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError(
            "Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    if check_batched_grad or check_batched_forward_grad:
        raise NotImplementedError(
            "gradcheck: check_batched_grad and check_batched_forward_grad are not implemented "
            "in numbagrad (its vmap is a loop, so there is no batching rule to check)")
    inputs = _as_tuple(inputs)
    for t in inputs:
        if isinstance(t, Tensor) and t.requires_grad and t.dtype.name != "float64":
            warnings.warn(
                "Input #0 requires gradient and is not a double precision floating point. "
                "This check will likely fail if all the inputs are not of double precision "
                "floating point. ",
                UserWarning,
                stacklevel=2,
            )
    outputs = _as_tuple(func(*inputs))
    forward = _forward_jacobians(func, inputs) if check_forward_ad else {}
    for i, out in enumerate(outputs):
        if not isinstance(out, Tensor) or not out.dtype.is_floating_point:
            continue
        numerical = _numerical_jacobian(func, inputs, i, eps)
        if check_backward_ad:
            analytical = _analytical_jacobian(func, inputs, i, check_grad_dtypes)
            for j, (a, n) in enumerate(zip(analytical, numerical)):
                if a is None or n is None:
                    continue
                if not np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=True):
                    return _mismatch(raise_exception, i, j, n, a)
        for j, n in enumerate(numerical):
            a = forward.get((i, j))
            if a is not None and not np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=True):
                return _mismatch(raise_exception, i, j, n, a, forward=True)
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False) -> bool:
    """gradcheck of the function that maps (inputs, grad_outputs) to the first gradients:
    reverse over reverse, and forward over reverse where ``check_fwd_over_rev``."""
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError(
            "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_rev_over_rev to be True")
    inputs = _as_tuple(inputs)
    outputs = _as_tuple(func(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(
            factory.tensor(rng.standard_normal(o.shape), dtype=o.dtype, device=o.device,
                           requires_grad=True)
            for o in outputs
        )
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)
    diff_idx = [k for k, t in enumerate(inputs) if getattr(t, "requires_grad", False)]

    def first_grads(*args):
        ins, gos = args[:n_in], args[n_in:]
        outs = _as_tuple(func(*ins))
        diff = [ins[k] for k in diff_idx]
        pairs = [(o, g) for o, g in zip(outs, gos) if o.requires_grad]
        grads = autograd_grad(
            [o for o, _ in pairs], diff, [g for _, g in pairs], create_graph=True,
            allow_unused=True, materialize_grads=True,
        )
        return tuple(grads)

    return gradcheck(first_grads, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, check_grad_dtypes=check_grad_dtypes,
                     check_batched_grad=check_batched_grad,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev)
