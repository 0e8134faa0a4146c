"""numbagrad.optim.Adafactor and numbagrad.optim.Muon against torch.optim: the same steps from
the same parameters give the same parameters, state, state_dict, repr and errors."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)
# a vector, two matrices (one tall, one wide), a 3-d tensor and a scalar: Adafactor keeps a
# factored second moment for the matrices and the 3-d tensor, a full one for the others
P0 = [np.array([0.5, -1.5, 2.0]), rng.standard_normal((2, 3)), rng.standard_normal((5, 2)),
      np.arange(24.0).reshape(2, 3, 4) / 10 - 1, np.array(0.7)]
# Muon optimizes matrices only
M0 = [rng.standard_normal((3, 5)), rng.standard_normal((6, 2)), rng.standard_normal((4, 4))]
TOL = {"float64": dict(rtol=1e-12, atol=1e-14), "float32": dict(rtol=2e-6, atol=1e-6)}


def _np(t):
    return t.detach().numpy()


def _run(lib, cls, kw, values, dtype="float64", steps=6, opt_and_params=None):
    """``steps`` steps of ``cls`` on a non-quadratic loss; a last parameter gets no grad."""
    if opt_and_params is None:
        ps = [lib.tensor(v, dtype=getattr(lib, dtype), requires_grad=True) for v in values]
        ps.append(lib.tensor(np.ones((2, 2)), dtype=getattr(lib, dtype), requires_grad=True))
        opt = getattr(lib.optim, cls)(ps, **kw)
    else:
        opt, ps = opt_and_params
    weights = np.random.default_rng(1)
    cs = [lib.tensor(weights.standard_normal(tuple(p.shape)), dtype=getattr(lib, dtype))
          for p in ps[:-1]]
    for _ in range(steps):
        opt.zero_grad()
        loss = sum((p * c).sum() ** 2 + (p**3).sum() * 0.1 for p, c in zip(ps[:-1], cs))
        loss.backward()
        opt.step()
    return opt, ps


def _assert_same(ours, theirs, ps, tps, tol):
    for p, tp in zip(ps, tps, strict=True):
        np.testing.assert_allclose(_np(p), _np(tp), **tol)
        assert p.is_leaf and p.requires_grad
    sd, tsd = ours.state_dict(), theirs.state_dict()
    assert sd["param_groups"] == tsd["param_groups"]
    assert sd["state"].keys() == tsd["state"].keys()
    for k, st in tsd["state"].items():
        assert list(sd["state"][k]) == list(st)
        for name, v in st.items():
            mine = sd["state"][k][name]
            assert str(mine.dtype).split(".")[-1] == str(v.dtype).split(".")[-1], name
            assert tuple(mine.shape) == tuple(v.shape), name
            np.testing.assert_allclose(_np(mine), v.numpy(), **tol, err_msg=name)
    assert repr(ours) == repr(theirs)


def _check(cls, kw, values, dtype="float64", tol=None):
    opt, ps = _run(ng, cls, kw, values, dtype)
    topt, tps = _run(torch, cls, kw, values, dtype)
    _assert_same(opt, topt, ps, tps, tol or TOL[dtype])


# ---------------------------------------------------------------- Adafactor


ADAFACTOR_CASES = [
    dict(),
    dict(lr=0.1),
    dict(lr=0.05, weight_decay=0.3),
    dict(maximize=True),
    dict(beta2_decay=-0.5, eps=(1e-2, 1e-1)),
    dict(d=2.0, lr=0.5),  # (updates clipped at RMS 2)
    dict(lr=0.5),  # (updates clipped at RMS 1)
    dict(eps=(0.0, 0.0), lr=0.03),
    dict(foreach=None),
    dict(foreach=True),
    dict(foreach=False, weight_decay=0.1, maximize=True),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kw", ADAFACTOR_CASES, ids=[str(k) for k in ADAFACTOR_CASES])
def test_adafactor_steps_match_torch(kw, dtype):
    _check("Adafactor", kw, P0, dtype)


def test_adafactor_defaults_state_and_repr():
    opt = ng.optim.Adafactor([ng.ones(2)])
    topt = torch.optim.Adafactor([torch.ones(2)])
    assert opt.defaults == topt.defaults
    assert repr(opt) == repr(topt)
    # a Tensor lr is kept as its value, as PyTorch does
    opt = ng.optim.Adafactor([ng.ones(2)], lr=ng.tensor(0.1))
    topt = torch.optim.Adafactor([torch.ones(2)], lr=torch.tensor(0.1))
    assert opt.param_groups[0]["lr"] == topt.param_groups[0]["lr"]
    assert repr(opt) == repr(topt)


def test_adafactor_param_groups_with_their_own_hyperparameters():
    def run(lib):
        ps = [lib.tensor(v, requires_grad=True) for v in P0[:4]]
        opt = lib.optim.Adafactor([{"params": ps[:2], "lr": 0.2, "beta2_decay": -0.6},
                                   {"params": ps[2:], "weight_decay": 0.1}], lr=0.05)
        return _run(lib, "Adafactor", {}, None, opt_and_params=(opt, ps))

    (opt, ps), (topt, tps) = run(ng), run(torch)
    _assert_same(opt, topt, ps, tps, TOL["float32"])


@pytest.mark.parametrize("cls,kw,values", [("Adafactor", dict(lr=0.1, weight_decay=0.1), P0),
                                           ("Muon", dict(lr=0.05), M0)])
def test_state_dict_round_trip_continues_like_an_uninterrupted_run(cls, kw, values):
    straight, ps = _run(ng, cls, kw, values, steps=6)
    first, qs = _run(ng, cls, kw, values, steps=3)
    saved = pickle.loads(pickle.dumps(first.state_dict()))
    # torch loads our state dict (before ours goes on: a loaded state of the parameters' dtype
    # is taken as it is, and changed by the steps)
    tq = [torch.tensor(_np(q), requires_grad=True) for q in qs]
    topt = getattr(torch.optim, cls)(tq, **kw)
    topt.load_state_dict({
        "state": {k: {n: torch.tensor(_np(v)) for n, v in st.items()}
                  for k, st in saved["state"].items()},
        "param_groups": saved["param_groups"]})
    rs = [ng.tensor(_np(q), requires_grad=True) for q in qs]
    fresh = getattr(ng.optim, cls)(rs, **{**kw, "lr": 123.0})
    fresh.load_state_dict(saved)
    assert fresh.param_groups[0]["lr"] == kw["lr"]
    _run(ng, cls, kw, values, steps=3, opt_and_params=(fresh, rs))
    for p, r in zip(ps, rs):
        np.testing.assert_array_equal(_np(p), _np(r))
    _run(torch, cls, kw, values, steps=3, opt_and_params=(topt, tq))
    for p, t in zip(ps, tq):
        np.testing.assert_allclose(_np(p), _np(t), **TOL["float64"])


def _error(lib, cls, kw, params=None):
    if params is None:
        params = [lib.ones(2, 3, requires_grad=True)]
    with pytest.raises(Exception) as info:
        getattr(lib.optim, cls)(params, **kw)
    # (a shape in a message is a numbagrad.Size where PyTorch's is a torch.Size)
    return type(info.value).__name__, str(info.value).replace("numbagrad.Size", "torch.Size")


ADAFACTOR_ERRORS = [
    dict(lr=-1.0), dict(lr=-1.0, beta2_decay=1.0), dict(beta2_decay=0.1),
    dict(beta2_decay=1.0, eps=(-1, -1)), dict(eps=(-1, 1e-3)), dict(eps=(None, -1.0)),
    dict(eps=(1e-3, -1), d=0.0), dict(d=0.5), dict(d=0.0, weight_decay=-1.0),
    dict(weight_decay=-1.0), dict(eps=(None,)), dict(eps=1e-3),
]


@pytest.mark.parametrize("kw", ADAFACTOR_ERRORS, ids=[str(k) for k in ADAFACTOR_ERRORS])
def test_adafactor_errors_match_torch(kw):
    assert _error(ng, "Adafactor", kw) == _error(torch, "Adafactor", kw)


def test_adafactor_tensor_lr_errors_match_torch():
    for lr in ([-1.0, 2.0], -1.0):
        got = _error(ng, "Adafactor", dict(lr=ng.tensor(lr)))
        assert got == _error(torch, "Adafactor", dict(lr=torch.tensor(lr)))


# ---------------------------------------------------------------- Muon


MUON_CASES = [
    dict(),
    dict(lr=0.05),
    dict(lr=0.05, nesterov=False, momentum=0.8),
    dict(lr=0.02, adjust_lr_fn="match_rms_adamw", weight_decay=0.0),
    dict(lr=0.02, adjust_lr_fn="original", weight_decay=0.3),
    dict(lr=0.02, ns_steps=3, eps=1e-3, ns_coefficients=(2.0, -1.5, 0.5)),
    dict(lr=0.05, momentum=0.0),
]


def _muon_tolerance(kw, steps=6):
    """PyTorch orthogonalizes in bfloat16: a last-bit difference of the momentum buffer (the
    float lerp rounds once in PyTorch, an fma) can move a bfloat16 rounding by one step
    (2**-8 relative, the entries being below 1), that is the adjusted lr times 2**-8 a step."""
    lr = kw.get("lr", 1e-3) * (0.2 * 6 if kw.get("adjust_lr_fn") == "match_rms_adamw" else 2)
    return dict(rtol=0, atol=steps * lr * 2.0**-8)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kw", MUON_CASES, ids=[str(k) for k in MUON_CASES])
def test_muon_steps_match_torch(kw, dtype):
    _check("Muon", kw, M0, dtype, tol=_muon_tolerance(kw))


def test_muon_single_float32_steps_from_zero_momentum_match_to_the_last_bit():
    # (the orthogonalized update is PyTorch's bit for bit; the parameter's update may round
    # once more than PyTorch's fma: one float32 ulp)
    for shape in [(3, 5), (6, 2), (4, 4)]:
        w = rng.standard_normal(shape).astype(np.float32)
        g = rng.standard_normal(shape).astype(np.float32)
        got = []
        for lib in (ng, torch):
            p = lib.tensor(w, requires_grad=True)
            opt = lib.optim.Muon([p], lr=0.05)
            p.grad = lib.tensor(g)
            opt.step()
            got.append(_np(p))
        np.testing.assert_allclose(*got, rtol=2.0**-23, atol=0)


def test_muon_defaults_and_repr():
    for kw in (dict(), dict(adjust_lr_fn="match_rms_adamw", nesterov=False)):
        opt = ng.optim.Muon([ng.ones(2, 2)], **kw)
        topt = torch.optim.Muon([torch.ones(2, 2)], **kw)
        assert opt.defaults == topt.defaults
        assert repr(opt) == repr(topt)


MUON_ERRORS = [
    dict(lr=-1.0), dict(lr=-1, weight_decay=-1, momentum=-1, adjust_lr_fn="x"),
    dict(weight_decay=-1, momentum=-1, adjust_lr_fn="x"), dict(momentum=-0.1),
    dict(weight_decay=-1.0), dict(weight_decay=-1, adjust_lr_fn="x"), dict(adjust_lr_fn="foo"),
]


@pytest.mark.parametrize("kw", MUON_ERRORS, ids=[str(k) for k in MUON_ERRORS])
def test_muon_errors_match_torch(kw):
    assert _error(ng, "Muon", kw) == _error(torch, "Muon", kw)


def test_muon_refuses_parameters_that_are_not_matrices():
    for shape in [(3,), (2, 2, 2), ()]:
        got = _error(ng, "Muon", {}, [ng.ones(2, 2), ng.ones(shape)])
        want = _error(torch, "Muon", {}, [torch.ones(2, 2), torch.ones(shape)])
        assert got == want
    # the adjust_lr_fn check comes first
    assert (_error(ng, "Muon", dict(adjust_lr_fn="x"), [ng.ones(3)])
            == _error(torch, "Muon", dict(adjust_lr_fn="x"), [torch.ones(3)]))
    got = _error(ng, "Muon", dict(lr=ng.tensor([0.1, 0.2])))
    assert got == _error(torch, "Muon", dict(lr=torch.tensor([0.1, 0.2])))


def test_muon_accepts_momentum_one_and_other_unchecked_values():
    for kw in (dict(momentum=1.0), dict(eps=-1.0), dict(ns_steps=0)):
        for lib in (ng, torch):
            lib.optim.Muon([lib.ones(2, 2)], **kw)
