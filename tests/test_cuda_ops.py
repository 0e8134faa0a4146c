"""Every registry op on CUDA equals the CPU, forward and backward (op table rows, small shapes).

Run by ``make test`` in the CUDA simulator (``NUMBA_ENABLE_CUDASIM=1 pytest -m cuda``) and,
unchanged, on a GPU. The CPU results are themselves checked against NumPy and finite
differences in ``test_ops.py``; here the CUDA kernels must reproduce them: float32 within
rtol 1e-5, float64 within 1e-12.
"""

from __future__ import annotations

import numpy as np
import pytest

import numbagrad as ng
from numbagrad import dtypes as D
from devices import CUDA
from op_db import OPS, base_and_layout

pytestmark = CUDA

RTOL = {"float32": 1e-5, "float64": 1e-12}


def _cases():
    for info in OPS:
        for shape in info.shapes:
            # every layout in float64; float32 (for f32 kernels) on the row's main shape
            main = info.shapes[1] if len(info.shapes) > 1 else info.shapes[0]
            for dtype in ("float64", "float32") if shape == main else ("float64",):
                yield pytest.param(info, shape, dtype, id=f"{info.name}-{shape}-{dtype}")


def _run(info, bases, tfns, dev, dtype, seed_grad):
    ng.set_default_device(dev)
    try:
        req = info.grad
        tensors = [ng.tensor(b, device=dev, requires_grad=req) for b in bases]
        out = info.call(*[f(t) for f, t in zip(tfns, tensors)])
        grads = None
        if req and out.requires_grad:
            g = ng.tensor(seed_grad(out.shape), dtype=out.dtype, device=dev)
            out.backward(g)
            grads = [t.grad for t in tensors]
        return out, grads
    finally:
        ng.set_default_device(None)


def _close(a, b, rtol, what):
    assert a.device == ng.device("cuda:0"), what
    assert b.device == ng.device("cpu"), what
    assert a.dtype is b.dtype and a.shape == b.shape, what
    got, ref = a.cpu().numpy(), b.numpy()
    if got.dtype.kind in "bi":
        np.testing.assert_array_equal(got, ref, err_msg=what)
    else:
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol, err_msg=what)


@pytest.mark.parametrize("info,shape,dtype", list(_cases()))
def test_cuda_equals_cpu(info, shape, dtype):
    rng = np.random.default_rng(0)
    shapes = shape if info.arity > 1 else (shape,)
    bases, tfns = [], []
    for s in shapes:
        b, tf, _ = base_and_layout(s, dtype, info, rng)
        bases.append(b)
        tfns.append(tf)
    grng = np.random.default_rng(1)
    upstream = {}

    def seed_grad(shape):
        if shape not in upstream:
            upstream[shape] = grng.uniform(-1, 1, size=shape)
        return upstream[shape]

    out_c, grads_c = _run(info, bases, tfns, "cpu", dtype, seed_grad)
    out_g, grads_g = _run(info, bases, tfns, "cuda", dtype, seed_grad)
    rtol = RTOL[dtype]
    _close(out_g.detach(), out_c.detach(), rtol, "forward")
    if grads_c is None:
        assert grads_g is None
        return
    assert type(out_g.grad_fn) is type(out_c.grad_fn)
    for k, (gg, gc) in enumerate(zip(grads_g, grads_c)):
        assert (gg is None) == (gc is None)
        if gc is not None:
            _close(gg, gc, rtol, f"gradient of input {k}")


@pytest.mark.parametrize("info", [i for i in OPS if i.int_ok], ids=lambda i: i.name)
def test_cuda_int64_equals_cpu(info):
    rng = np.random.default_rng(0)
    shape = info.shapes[1]
    shapes = shape if info.arity > 1 else (shape,)
    bases, tfns = [], []
    for s in shapes:
        b, tf, _ = base_and_layout(s, "int64", info, rng)
        bases.append(b)
        tfns.append(tf)
    outs = {}
    for dev in ("cpu", "cuda"):
        ts = [ng.tensor(b, device=dev) for b in bases]
        outs[dev] = info.call(*[f(t) for f, t in zip(tfns, ts)])
    assert outs["cuda"].dtype is outs["cpu"].dtype
    np.testing.assert_array_equal(outs["cuda"].cpu().numpy(), outs["cpu"].numpy())


def test_cuda_ops_and_rules_of_one_formula_share_one_kernel():
    # as on the CPU (test_kernels.py): mul, its rules and exp's rule are one a * b kernel
    from numbagrad.backend import gpu
    from numbagrad.ops.registry import REGISTRY

    mul, exp = REGISTRY["mul"], REGISTRY["exp"]
    kernels = [mul.kernel(D.float32, gpu), mul.vjp_kernel(0, D.float32, gpu),
               mul.vjp_kernel(1, D.float32, gpu), exp.vjp_kernel(0, D.float32, gpu)]
    assert all(k is kernels[0] for k in kernels)
    assert REGISTRY["add"].kernel(D.float32, gpu) is not kernels[0]
    x = ng.tensor([1.0, 2.0, 3.0], device="cuda", requires_grad=True)
    y = ng.tensor([4.0, 5.0, 6.0], device="cuda", requires_grad=True)
    (x * y * ng.exp(x)).sum().backward()
    xv, yv = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])
    np.testing.assert_allclose(x.grad.cpu().numpy(), yv * np.exp(xv) * (1 + xv), rtol=1e-6)
    np.testing.assert_allclose(y.grad.cpu().numpy(), xv * np.exp(xv), rtol=1e-6)


@pytest.mark.parametrize("shape", [(1,), (255,), (257,), (1000,), (3, 97), (5, 1, 7)])
def test_unrolled_elementwise_kernels_cover_every_element(shape):
    # each thread takes four elements a grid stride apart (gpu.UNROLL): sizes around and past
    # a step's span, ranks 1-3, a transposed and a broadcast operand, every element written
    r = np.random.default_rng(len(shape) * 1000 + shape[-1])
    a = r.standard_normal(shape).astype(np.float32)
    b = r.standard_normal(shape[::-1]).astype(np.float32)
    c = r.standard_normal(shape[-1:]).astype(np.float32)
    got = ng.tensor(a, device="cuda") * ng.tensor(b, device="cuda").permute(
        *range(len(shape) - 1, -1, -1)) + ng.sin(ng.tensor(c, device="cuda"))
    want = a * np.transpose(b) + np.sin(c)
    np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-5, atol=1e-6)
