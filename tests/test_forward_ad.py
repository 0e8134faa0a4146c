"""Forward-mode AD (autograd.forward_ad): every op_db row against reverse mode, a few
functions against torch.func.jvp, and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest

import numbagrad as ng
import numbagrad.autograd.forward_ad as fwAD
from numbagrad.ops import forward as F
from op_db import OP_DB, base_and_layout

# the ops forward mode refuses (with PyTorch's error); every other one has a written rule or
# the one derived from its VJP (ops/forward.py, through_vjp)
NO_FORWARD = {"copy_slices", "multi_margin_loss", "_ctc_loss"}
GRAD_ROWS = sorted(name for name, info in OP_DB.items() if info.grad)


def _inputs(info, shape, rng):
    shapes = shape if info.arity > 1 else (shape,)
    out = []
    for s in shapes:
        base, tfn, _ = base_and_layout(s, np.float64, info, rng)
        out.append(tfn(ng.tensor(base, requires_grad=True)))
    return out


@pytest.mark.parametrize("name", GRAD_ROWS)
def test_forward_matches_reverse(name):
    """<J v, u> by forward mode equals <v, J^T u> by reverse mode, on each row's first two
    sample shapes (float64); rows without a forward rule raise PyTorch's error."""
    info = OP_DB[name]
    rng = np.random.default_rng(0)
    for shape in info.shapes[:2]:
        inputs = _inputs(info, shape, rng)
        tangents = [ng.tensor(rng.standard_normal(x.shape)) for x in inputs]
        with fwAD.dual_level():
            duals = [fwAD.make_dual(x, t) for x, t in zip(inputs, tangents)]
            if name in NO_FORWARD:
                with pytest.raises(NotImplementedError) as e:
                    info.call(*duals)
                assert str(e.value).startswith("Trying to use forward AD with ")
                assert str(e.value) == F.ERR_NO_JVP.format(name=str(e.value).split()[6])
                return
            out = info.call(*duals)
            jvp = fwAD.unpack_dual(out).tangent
        out = info.call(*inputs)
        assert jvp is not None and jvp.shape == out.shape and jvp.dtype is out.dtype
        u = ng.tensor(rng.standard_normal(out.shape))
        vjps = ng.autograd.grad(out, inputs, u, allow_unused=True)
        lhs = (jvp * u).sum().item()
        rhs = sum((g * t).sum().item() for g, t in zip(vjps, tangents) if g is not None)
        assert lhs == pytest.approx(rhs, rel=1e-9, abs=1e-12)


GRADGRAD_ROWS = sorted(name for name in GRAD_ROWS
                       if OP_DB[name].gradgrad and name not in NO_FORWARD)


@pytest.mark.parametrize("name", GRADGRAD_ROWS)
def test_forward_over_reverse(name):
    """Tangents run through a backward pass (jacfwd over jacrev): w^T H v by forward over
    reverse equals it by reverse over reverse, on each row's first sample shape."""
    info = OP_DB[name]
    rng = np.random.default_rng(2)
    inputs = _inputs(info, info.shapes[0], rng)
    vs = [ng.tensor(rng.standard_normal(x.shape)) for x in inputs]
    with fwAD.dual_level():
        duals = [fwAD.make_dual(x, v) for x, v in zip(inputs, vs)]
        out = info.call(*duals)
        u = ng.tensor(rng.standard_normal(out.shape))
        grads = ng.autograd.grad(out, duals, u, create_graph=True, allow_unused=True)
        ws = [ng.tensor(rng.standard_normal(x.shape)) for x in inputs]
        fwd = 0.0
        for g, w in zip(grads, ws):
            tangent = None if g is None else fwAD.unpack_dual(g).tangent
            if tangent is not None:
                fwd += (tangent * w).sum().item()
    out = info.call(*inputs)
    grads = ng.autograd.grad(out, inputs, u, create_graph=True, allow_unused=True)
    total = sum((g * w).sum() for g, w in zip(grads, ws) if g is not None and g.requires_grad)
    rev = 0.0
    if isinstance(total, ng.Tensor):
        hv = ng.autograd.grad(total, inputs, allow_unused=True)
        rev = sum((h * v).sum().item() for h, v in zip(hv, vs) if h is not None)
    assert fwd == pytest.approx(rev, rel=1e-9, abs=1e-12)


# ---------------------------------------------------------------- against torch.func.jvp

# (torch.func's import warns about torch.jit.script)
_TORCH_WARNING = "ignore:`torch.jit.script` is deprecated:DeprecationWarning"

FUNCTIONS = {
    "mlp": lambda L, x, w: (x @ w).tanh().sum(-1),
    "softmax": lambda L, x, w: (x @ w).softmax(-1) * x.sum(),
    "log_softmax": lambda L, x, w: (x.exp() @ w).log_softmax(0),
    "broadcast": lambda L, x, w: (x[:, :1] * w[0, :3] + 2.0) / (1 + x.sigmoid()),
    "reductions": lambda L, x, w: L.stack([x.mean(0), (w.t() ** 2).sum(1)[:3].sqrt()], 0),
}


@pytest.mark.filterwarnings(_TORCH_WARNING)
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_jvp_matches_torch_func(name):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x, w, tx, tw = (rng.standard_normal(s) for s in [(2, 3), (3, 4), (2, 3), (3, 4)])
    fn = FUNCTIONS[name]
    out_t, jvp_t = torch.func.jvp(lambda a, b: fn(torch, a, b),
                                  (torch.tensor(x), torch.tensor(w)),
                                  (torch.tensor(tx), torch.tensor(tw)))
    with fwAD.dual_level():
        y = fn(ng, fwAD.make_dual(ng.tensor(x), ng.tensor(tx)),
               fwAD.make_dual(ng.tensor(w), ng.tensor(tw)))
        primal, tangent = fwAD.unpack_dual(y)
    np.testing.assert_allclose(primal.numpy(), out_t.numpy(), rtol=1e-12)
    np.testing.assert_allclose(tangent.numpy(), jvp_t.numpy(), rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- the API


def test_make_dual_and_unpack_dual():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, ng.ones(2))
        assert d._base is x and d.grad_fn.name() == "ViewBackward0"
        p = fwAD.unpack_dual(d.sin())
        assert isinstance(p, fwAD.UnpackedDualTensor) and isinstance(p, tuple)
        np.testing.assert_allclose(p.tangent.detach().numpy(), np.cos([1.0, 2.0]), rtol=1e-6)
        # reverse over forward: the tangent is recorded (PyTorch's is MulBackward0 too)
        assert p.tangent.grad_fn.name() == "MulBackward0"
        g, = ng.autograd.grad(p.tangent.sum(), x)
        np.testing.assert_allclose(g.numpy(), -np.sin([1.0, 2.0]), rtol=1e-6)
        assert fwAD.unpack_dual(x) == (x, None)
        kept = d * 3
    assert fwAD.unpack_dual(kept).tangent is None  # dropped when the level ends


def test_inplace_op_carries_the_tangent():
    with fwAD.dual_level():
        d = fwAD.make_dual(ng.tensor([1.0, 2.0]), ng.tensor([1.0, 0.5]))
        y = d * 1
        y.mul_(y)
        y.add_(1.0)
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.numpy(), [2.0, 2.0])


@pytest.mark.parametrize("lib", ["torch", "numbagrad"])
def test_errors(lib):
    torch = pytest.importorskip("torch") if lib == "torch" else None
    L = torch if lib == "torch" else ng
    A = torch.autograd.forward_ad if lib == "torch" else fwAD
    x = L.ones(2)
    with pytest.raises(RuntimeError, match="^Trying to create a dual Tensor for forward AD but "
                       "no level exists, make sure to enter_dual_level\\(\\) first.$"):
        A.make_dual(x, x)
    with A.dual_level():
        with pytest.raises(RuntimeError, match="^Nested forward mode AD is not supported at the "
                           "moment$"):
            with A.dual_level():
                pass
        with pytest.raises(RuntimeError, match="Tensor is of size \\[2\\] while the given "
                           "forward gradient is of size \\[3\\].$"):
            A.make_dual(x, L.ones(3))
        with pytest.raises(ValueError, match="^Expected tangent to be floating point or "
                           "complex, but got: "):
            A.make_dual(x, L.ones(2, dtype=L.int64))
        with pytest.raises(ValueError, match="^Expected primal to be floating point or complex"):
            A.make_dual(L.ones(2, dtype=L.int64), x)


def test_observers_leave_no_trace():
    """Outside a dual level the fast path and the plain calls are back."""
    from numbagrad.ops import dispatch, observe, registry

    with fwAD.dual_level():
        assert not dispatch.FAST_PATH and observe.OBSERVERS
    assert dispatch.FAST_PATH and not observe.OBSERVERS
    assert registry.Elementwise._call is dispatch.call_general
    assert registry.Composite.__call__ is dispatch.call_composite
    x = ng.ones(3, dtype=ng.float64)
    x * x
    assert ng.ops.elementwise.mul._plans[np.dtype(np.float64)]
