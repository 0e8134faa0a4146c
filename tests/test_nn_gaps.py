"""Optimizers, schedulers, losses and layers scripts use that numbagrad lacked, against
PyTorch run side by side: the same parameters after the same steps, the same learning rates,
losses, gradients, reprs and errors."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import numbagrad as ng
from test_lr_scheduler import _trace
from test_optim_oracle import TOL, _check, _error, _np, _run

torch = pytest.importorskip("torch")


# -- optimizers ---------------------------------------------------------------------------------

OPTIM_CASES = [
    ("NAdam", dict(lr=0.1)),
    ("NAdam", dict(lr=0.1, weight_decay=0.1, momentum_decay=0.01, maximize=True)),
    ("NAdam", dict(lr=0.1, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.1)),  # rho_t > 5 from step 6 on: both branches of the update
    ("RAdam", dict(lr=0.1, betas=(0.8, 0.9), weight_decay=0.2)),
    ("RAdam", dict(lr=0.1, betas=(0.8, 0.9), weight_decay=0.2, decoupled_weight_decay=True,
                   maximize=True)),
    ("Adamax", dict(lr=0.1)),
    ("Adamax", dict(lr=0.1, betas=(0.5, 0.9), weight_decay=0.1, maximize=True, eps=1e-3)),
    ("Rprop", dict(lr=0.1)),
    ("Rprop", dict(lr=0.1, etas=(0.3, 1.5), step_sizes=(0.05, 0.2), maximize=True)),
    ("ASGD", dict(lr=0.05)),
    ("ASGD", dict(lr=0.05, lambd=0.1, alpha=0.5, t0=2, weight_decay=0.1, maximize=True)),
]


@pytest.mark.parametrize("cls,kw", OPTIM_CASES,
                         ids=[f"{c}-{i}" for i, (c, _) in enumerate(OPTIM_CASES)])
def test_optimizer_steps_match_torch_float64(cls, kw):
    _check(cls, kw)  # 5 steps: parameters, state_dict (state and groups) and repr


@pytest.mark.parametrize("cls", ["NAdam", "RAdam", "Adamax", "Rprop", "ASGD"])
def test_optimizer_steps_match_torch_float32(cls):
    _check(cls, dict(lr=0.05, weight_decay=0.1) if cls != "Rprop" else dict(lr=0.05),
           dtype="float32")


@pytest.mark.parametrize("cls,kw", [("NAdam", dict(lr=0.1)), ("RAdam", dict(lr=0.1)),
                                    ("Adamax", dict(lr=0.1)), ("Rprop", dict(lr=0.1)),
                                    ("ASGD", dict(lr=0.05, t0=1))])
def test_optimizer_state_dict_round_trip(cls, kw):
    """A run resumed from a pickled state dict continues as torch's resumed from the same
    dict. (Not bit for bit as an uninterrupted run: loading casts the 0-dim float32 state
    ``mu_product``, ``eta``, ``mu`` to the parameter's dtype, in torch as here.)"""
    first, qs = _run(ng, cls, kw, steps=4)
    saved = pickle.loads(pickle.dumps(first.state_dict()))
    rs = [ng.tensor(_np(q), requires_grad=True) for q in qs]
    fresh = getattr(ng.optim, cls)(rs, **{**kw, "lr": 123.0})
    fresh.load_state_dict(saved)
    assert fresh.param_groups[0]["lr"] == kw["lr"]
    tq = [torch.tensor(_np(q), requires_grad=True) for q in qs]
    topt = getattr(torch.optim, cls)(tq, **{**kw, "lr": 123.0})
    topt.load_state_dict({
        "state": {k: {n: torch.tensor(_np(v)) for n, v in st.items()}
                  for k, st in saved["state"].items()},
        "param_groups": saved["param_groups"]})
    for k, st in topt.state_dict()["state"].items():
        assert {n: str(v.dtype) for n, v in st.items()} == {
            n: str(v.dtype).replace("numbagrad", "torch")
            for n, v in fresh.state_dict()["state"][k].items()}
    _run(ng, cls, kw, steps=4, opt_and_params=(fresh, rs))
    _run(torch, cls, kw, steps=4, opt_and_params=(topt, tq))
    for r, t in zip(rs, tq):
        np.testing.assert_allclose(_np(r), _np(t), **TOL["float64"])
    _, ps = _run(ng, cls, kw, steps=8)
    for p, r in zip(ps, rs):
        np.testing.assert_allclose(_np(p), _np(r), rtol=1e-6)


def _one(lib):
    return [lib.ones(2, requires_grad=True)]


OPTIM_ERRORS = [
    lambda lib: lib.optim.NAdam(_one(lib), lr=-1.0),
    lambda lib: lib.optim.NAdam(_one(lib), momentum_decay=-1.0),
    lambda lib: lib.optim.NAdam(_one(lib), betas=(0.9, 1.0)),
    lambda lib: lib.optim.RAdam(_one(lib), eps=-1.0),
    lambda lib: lib.optim.RAdam(_one(lib), weight_decay=-1.0),
    lambda lib: lib.optim.Adamax(_one(lib), betas=(1.0, 0.9)),
    lambda lib: lib.optim.Rprop(_one(lib), etas=(1.5, 1.2)),
    lambda lib: lib.optim.Rprop(_one(lib), lr=-0.1),
    lambda lib: lib.optim.ASGD(_one(lib), weight_decay=-0.1),
]


@pytest.mark.parametrize("i", range(len(OPTIM_ERRORS)))
def test_optimizer_errors_match_torch(i):
    assert _error(ng, OPTIM_ERRORS[i]) == _error(torch, OPTIM_ERRORS[i])


def test_optimizers_refuse_differentiable_and_capturable():
    for cls in ("NAdam", "RAdam", "Adamax", "Rprop", "ASGD"):
        with pytest.raises(NotImplementedError, match="differentiable=True"):
            getattr(ng.optim, cls)(_one(ng), differentiable=True)
        with pytest.raises(NotImplementedError, match="capturable=True"):
            getattr(ng.optim, cls)(_one(ng), capturable=True)


# -- schedulers ---------------------------------------------------------------------------------

NEW_SCHEDULERS = {
    "CyclicLR": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.05], step_size_up=4),
    "CyclicLR-triangular2": lambda m, o: m.CyclicLR(
        o, 0.01, 0.1, step_size_up=3, step_size_down=5, mode="triangular2",
        base_momentum=0.7, max_momentum=[0.95, 0.9]),
    "CyclicLR-exp_range": lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=2,
                                                  mode="exp_range", gamma=0.9),
    "CyclicLR-scale_fn": lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=3,
                                                 scale_fn=lambda x: 0.5**x,
                                                 scale_mode="iterations"),
    "CosineAnnealingWarmRestarts": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=4),
    "CosineAnnealingWarmRestarts-T_mult": lambda m, o: m.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.001),
}


@pytest.mark.parametrize("name", list(NEW_SCHEDULERS))
@pytest.mark.parametrize("cls", ["SGD", "Adam"])
def test_scheduler_learning_rates_match_torch(name, cls):
    kw = {"momentum": 0.9} if cls == "SGD" else {}
    ours, opt, sched = _trace(ng, NEW_SCHEDULERS[name], cls, **kw)
    theirs, topt, tsched = _trace(torch, NEW_SCHEDULERS[name], cls, **kw)
    assert ours == theirs  # exactly, momenta (or beta1) included
    assert sched.last_epoch == tsched.last_epoch
    sd, tsd = sched.state_dict(), tsched.state_dict()
    assert sd.keys() == tsd.keys()
    assert {k: v for k, v in sd.items() if k != "base_lrs" and not callable(v)} == {
        k: v for k, v in tsd.items() if k != "base_lrs" and not callable(v)}
    assert repr(opt) == repr(topt)


def test_warm_restarts_at_fractional_epochs_and_a_cyclic_state_dict_round_trip():
    epochs = [0.0, 0.5, 1.25, 3.0, 2.5, 7.75, 10.0, 21.5, 0.0]
    lrs = []
    for lib in (ng, torch):
        opt = lib.optim.SGD([lib.ones(2, requires_grad=True)], lr=0.1)
        sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2)
        out = []
        for e in epochs:
            opt.step()
            sched.step(e)
            out.append((sched.get_last_lr(), sched.T_cur, sched.T_i, sched.last_epoch))
        lrs.append(out)
    assert lrs[0] == lrs[1]

    make = NEW_SCHEDULERS["CyclicLR-triangular2"]
    straight = _trace(ng, make)[0]
    opt, sched = _trace(ng, make, epochs=10)[1:]
    saved_opt, saved = opt.state_dict(), pickle.loads(pickle.dumps(sched.state_dict()))
    opt2 = _trace(ng, make, epochs=0)[1]
    sched2 = make(ng.optim.lr_scheduler, opt2)
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved)
    rest = []
    for _ in range(20):
        opt2.step()
        sched2.step()
        rest.append(sched2.get_last_lr())
    assert rest == straight[1 + 2 * 10::2]


SCHEDULER_ERRORS = [
    lambda lib: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        lib.optim.SGD(_one(lib)), T_0=0),
    lambda lib: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        lib.optim.SGD(_one(lib)), T_0=2, T_mult=1.5),
    lambda lib: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        lib.optim.SGD(_one(lib)), T_0=2, eta_min="0"),
    lambda lib: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        lib.optim.SGD(_one(lib)), T_0=2).step(-1),
    lambda lib: lib.optim.lr_scheduler.CyclicLR(lib.optim.SGD(_one(lib)), 0.1, 1.0,
                                                mode="sawtooth"),
    lambda lib: lib.optim.lr_scheduler.CyclicLR(lib.optim.Adagrad(_one(lib)), 0.1, 1.0),
    lambda lib: lib.optim.lr_scheduler.CyclicLR(lib.optim.SGD(_one(lib)), [0.1, 0.2], 1.0),
]


@pytest.mark.parametrize("i", range(len(SCHEDULER_ERRORS)))
def test_scheduler_errors_match_torch(i):
    assert _error(ng, SCHEDULER_ERRORS[i]) == _error(torch, SCHEDULER_ERRORS[i])
