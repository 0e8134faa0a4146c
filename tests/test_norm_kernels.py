"""Batch, layer and group norm by their CPU kernels (and layer norm's CUDA row kernels) against
PyTorch: outputs, every gradient, running statistics, second derivatives; the inputs the
kernels leave to the composed ops (other dtypes, strided running statistics).

Shapes are few and small, so each kernel compiles once per dtype and is shared by the cases.
"""

from __future__ import annotations

import numpy as np
import pytest

import numbagrad as ng
import numbagrad.nn.functional as F
from devices import on_cuda

torch = pytest.importorskip("torch")
TF = torch.nn.functional

TOL = {"float32": 2e-5, "float64": 1e-10}
RNG = np.random.default_rng(0)


def _pair(a, dtype, requires=True, device="cpu"):
    a = np.asarray(a, dtype)
    return (ng.tensor(a, requires_grad=requires, device=device),
            torch.tensor(a, requires_grad=requires))


def _close(ours, theirs, tol):
    ours = ours.detach().cpu().numpy() if isinstance(ours, ng.Tensor) else ours
    np.testing.assert_allclose(ours, theirs.detach().numpy(), rtol=tol, atol=tol)


def _check(out, ref, leaves, dtype, grads_tol=None):
    """Values, node name and the gradients of ``leaves`` (pairs) for one random ``grad``."""
    tol = TOL[dtype]
    assert out.grad_fn.name() == ref.grad_fn.name()
    _close(out, ref, tol)
    g = RNG.standard_normal(tuple(ref.shape)).astype(dtype)
    out.backward(ng.tensor(g, device=out.device))
    ref.backward(torch.tensor(g))
    for ours, theirs in leaves:
        _close(ours.grad, theirs.grad, grads_tol or tol * 10)


# ---------------------------------------------------------------- batch norm


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(6, 5), (4, 3, 7), (3, 2, 4, 5)])
@pytest.mark.parametrize("affine,track,momentum", [
    (True, True, 0.1), (False, True, None), (True, False, 0.3)])
def test_batch_norm_module_training_then_eval_matches_pytorch(dtype, shape, affine, track,
                                                              momentum):
    cls = {2: "BatchNorm1d", 3: "BatchNorm1d", 4: "BatchNorm2d"}[len(shape)]
    kw = {"affine": affine, "track_running_stats": track, "momentum": momentum}
    ours = getattr(ng.nn, cls)(shape[1], dtype=getattr(ng, dtype), **kw)
    theirs = getattr(torch.nn, cls)(shape[1], dtype=getattr(torch, dtype), **kw)
    if affine:
        w, b = RNG.standard_normal(shape[1]), RNG.standard_normal(shape[1])
        with ng.no_grad(), torch.no_grad():
            for p, t, v in ((ours.weight, theirs.weight, w), (ours.bias, theirs.bias, b)):
                p.copy_(ng.tensor(v.astype(dtype)))
                t.copy_(torch.tensor(v.astype(dtype)))
    versions = [m.running_mean._version for m in (ours, theirs)] if track else None
    for step in range(2):  # (two steps: momentum None averages them)
        x, xt = _pair(RNG.standard_normal(shape) * 3 + 2, dtype)
        leaves = [(x, xt)] + ([(ours.weight, theirs.weight), (ours.bias, theirs.bias)]
                              if affine else [])
        if affine:
            ours.weight.grad = ours.bias.grad = theirs.weight.grad = theirs.bias.grad = None
        _check(ours(x), theirs(xt), leaves, dtype)
    if track:
        _close(ours.running_mean, theirs.running_mean, TOL[dtype])
        _close(ours.running_var, theirs.running_var, TOL[dtype])
        assert ours.num_batches_tracked.item() == theirs.num_batches_tracked.item() == 2
        # (written by the kernel, as PyTorch's, without a version bump)
        assert [m.running_mean._version for m in (ours, theirs)] == versions
    else:
        assert ours.running_mean is None
    ours.eval()
    theirs.eval()
    x, xt = _pair(RNG.standard_normal(shape), dtype)
    leaves = [(x, xt)] + ([(ours.weight, theirs.weight)] if affine else [])
    if affine:
        ours.weight.grad = theirs.weight.grad = None
    _check(ours(x), theirs(xt), leaves, dtype)


def test_batch_norm_of_a_transposed_input_and_functional_arguments():
    a = RNG.standard_normal((5, 4, 3))
    x, xt = _pair(a, "float64")
    w, wt = _pair(RNG.standard_normal(5), "float64")
    rm, rmt = _pair(RNG.standard_normal(5), "float64", requires=False)
    rv, rvt = _pair(RNG.random(5) + 0.5, "float64", requires=False)
    out = F.batch_norm(x.transpose(0, 1), rm, rv, w, None, True, 0.25, 1e-3)
    ref = TF.batch_norm(xt.transpose(0, 1), rmt, rvt, wt, None, True, 0.25, 1e-3)
    _check(out, ref, [(x, xt), (w, wt)], "float64")
    _close(rm, rmt, 1e-12)
    _close(rv, rvt, 1e-12)


def test_batch_norm_updates_strided_running_statistics_in_place():
    # a view of every other element: the kernel's statistics are copied into it
    buf, buft = _pair(np.ones(8), "float32", requires=False)
    x, xt = _pair(RNG.standard_normal((6, 4)), "float32")
    rm, rmt = buf[::2], buft[::2]
    rv, rvt = buf[1::2], buft[1::2]
    out = F.batch_norm(x, rm, rv, training=True)
    ref = TF.batch_norm(xt, rmt, rvt, training=True)
    _check(out, ref, [(x, xt)], "float32")
    _close(buf, buft, 1e-6)
    assert buf._version == buft._version


def test_batch_norm_with_parameters_of_another_dtype_is_refused_as_in_pytorch():
    # (PyTorch 2.13's CPU kernels refuse a weight, bias or running statistic of another dtype)
    x, xt = _pair(RNG.standard_normal((4, 3)), "float32")
    w, wt = _pair(RNG.standard_normal(3), "float64")
    for lib, F_, a, p in ((ng, F, x, w), (torch, TF, xt, wt)):
        with pytest.raises(RuntimeError, match="mixed dtype"):
            F_.batch_norm(a, lib.zeros(3), lib.ones(3), p, training=False)
        with pytest.raises(RuntimeError, match="mixed dtype"):
            F_.batch_norm(a.double(), lib.zeros(3), lib.ones(3), p.float(), training=True)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_second_derivatives_match_pytorch(training):
    a = RNG.standard_normal((4, 3, 5))
    x, xt = _pair(a, "float64")
    w, wt = _pair(RNG.standard_normal(3), "float64")
    b, bt = _pair(RNG.standard_normal(3), "float64")
    stats = (RNG.standard_normal(3), RNG.random(3) + 0.5)
    rm, rv = (ng.tensor(s) for s in stats)
    rmt, rvt = (torch.tensor(s) for s in stats)
    g = RNG.standard_normal(a.shape)
    out = F.batch_norm(x, rm, rv, w, b, training)
    ref = TF.batch_norm(xt, rmt, rvt, wt, bt, training)
    gx, gw = ng.autograd.grad(out, (x, w), ng.tensor(g), create_graph=True)
    gxt, gwt = torch.autograd.grad(ref, (xt, wt), torch.tensor(g), create_graph=True)
    _close(gx, gxt, 1e-10)
    (gx * gx).sum().backward()
    (gxt * gxt).sum().backward()
    if training:
        _close(x.grad, xt.grad, 1e-9)
    else:  # (the input's gradient is linear in grad alone)
        assert x.grad is None and xt.grad is None
    _close(w.grad, wt.grad, 1e-9)


# ---------------------------------------------------------------- layer norm


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,normalized", [
    ((6, 5), (5,)), ((2, 3, 4), (3, 4)), ((3, 5000), (5000,))])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_matches_pytorch(dtype, shape, normalized, affine):
    # (5000 values: a row of two summed blocks)
    x, xt = _pair(RNG.standard_normal(shape) * 2 + 5, dtype)
    leaves = [(x, xt)]
    w = b = wt = bt = None
    if affine:
        w, wt = _pair(RNG.standard_normal(normalized), dtype)
        b, bt = _pair(RNG.standard_normal(normalized), dtype)
        leaves += [(w, wt), (b, bt)]
    out = F.layer_norm(x, normalized, w, b, 1e-3)
    ref = TF.layer_norm(xt, normalized, wt, bt, 1e-3)
    _check(out, ref, leaves, dtype, grads_tol=5e-4 if dtype == "float32" else None)


def test_layer_norm_with_weight_only_and_second_derivatives():
    x, xt = _pair(RNG.standard_normal((3, 4)), "float64")
    w, wt = _pair(RNG.standard_normal(4), "float64")
    g = RNG.standard_normal((3, 4))
    gx, gw = ng.autograd.grad(F.layer_norm(x, (4,), w), (x, w), ng.tensor(g),
                              create_graph=True)
    gxt, gwt = torch.autograd.grad(TF.layer_norm(xt, (4,), wt), (xt, wt), torch.tensor(g),
                                   create_graph=True)
    _close(gx, gxt, 1e-12)
    _close(gw, gwt, 1e-12)
    (gx * gx).sum().backward()
    (gxt * gxt).sum().backward()
    _close(x.grad, xt.grad, 1e-10)
    _close(w.grad, wt.grad, 1e-10)


@on_cuda
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_row_kernels_on_cuda(affine):
    x, xt = _pair(RNG.standard_normal((3, 2, 5)), "float32", device="cuda")
    leaves = [(x, xt)]
    w = b = wt = bt = None
    if affine:
        w, wt = _pair(RNG.standard_normal(5), "float32", device="cuda")
        b, bt = _pair(RNG.standard_normal(5), "float32", device="cuda")
        leaves += [(w, wt), (b, bt)]
    _check(F.layer_norm(x, (5,), w, b), TF.layer_norm(xt, (5,), wt, bt), leaves, "float32")


# ---------------------------------------------------------------- group norm


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,groups", [((5, 6), 3), ((2, 4, 3), 2), ((2, 6, 2, 3), 3)])
@pytest.mark.parametrize("affine", [True, False])
def test_group_norm_matches_pytorch(dtype, shape, groups, affine):
    x, xt = _pair(RNG.standard_normal(shape) - 3, dtype)
    leaves = [(x, xt)]
    w = b = wt = bt = None
    if affine:
        w, wt = _pair(RNG.standard_normal(shape[1]), dtype)
        b, bt = _pair(RNG.standard_normal(shape[1]), dtype)
        leaves += [(w, wt), (b, bt)]
    _check(F.group_norm(x, groups, w, b, 1e-4), TF.group_norm(xt, groups, wt, bt, 1e-4),
           leaves, dtype)


def test_group_norm_second_derivatives_match_pytorch():
    x, xt = _pair(RNG.standard_normal((2, 4, 3)), "float64")
    w, wt = _pair(RNG.standard_normal(4), "float64")
    g = RNG.standard_normal((2, 4, 3))
    (gx,) = ng.autograd.grad(F.group_norm(x, 2, w), (x,), ng.tensor(g), create_graph=True)
    (gxt,) = torch.autograd.grad(TF.group_norm(xt, 2, wt), (xt,), torch.tensor(g),
                                 create_graph=True)
    _close(gx, gxt, 1e-12)
    (gx * gx).sum().backward()
    (gxt * gxt).sum().backward()
    _close(x.grad, xt.grad, 1e-10)
    _close(w.grad, wt.grad, 1e-10)
