"""Finite-difference checks of first and second derivatives (float64, PyTorch's tolerances)."""

from __future__ import annotations

import numpy as np

from .. import factory
from .._tensor import Tensor
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


def _analytical_jacobian(fn, inputs, out_index):
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
                if g.shape != t.shape:
                    raise GradcheckError(
                        f"Gradient has wrong shape: expected {t.shape}, got {g.shape}"
                    )
                rows[id(t)][k] = g._host().astype(np.float64).reshape(-1)
    return [rows.get(id(t)) for t in inputs]


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, fast_mode=False) -> bool:
    """Compare analytical gradients with central finite differences on double inputs."""
    inputs = _as_tuple(inputs)
    for t in inputs:
        if isinstance(t, Tensor) and t.requires_grad and t.dtype.name != "float64":
            import warnings

            warnings.warn(
                "Input #0 requires gradient and is not a double precision floating point. "
                "This check will likely fail if all the inputs are not of double precision "
                "floating point. ",
                UserWarning,
                stacklevel=2,
            )
    outputs = _as_tuple(func(*inputs))
    for i, out in enumerate(outputs):
        if not isinstance(out, Tensor) or not out.dtype.is_floating_point:
            continue
        numerical = _numerical_jacobian(func, inputs, i, eps)
        analytical = _analytical_jacobian(func, inputs, i)
        for j, (a, n) in enumerate(zip(analytical, numerical)):
            if a is None or n is None:
                continue
            if not np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=True):
                if raise_exception:
                    raise GradcheckError(
                        f"Jacobian mismatch for output {i} with respect to input {j},\n"
                        f"numerical:{n}\nanalytical:{a}\n"
                    )
                return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True) -> bool:
    """gradcheck of the function that maps (inputs, grad_outputs) to the first gradients."""
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
                     raise_exception=raise_exception)
