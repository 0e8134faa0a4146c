"""numbagrad.optim.lr_scheduler against torch's: the same learning rates (and momenta) epoch
after epoch, state_dict, warnings and errors."""

from __future__ import annotations

import math
import warnings

import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

EPOCHS = 30


def _optimizer(lib, cls="SGD", **kw):
    a, b = lib.ones(2, requires_grad=True), lib.ones(3, requires_grad=True)
    kw.setdefault("lr", 0.1)
    return getattr(lib.optim, cls)([{"params": [a]}, {"params": [b], "lr": 0.03}], **kw)


def _trace(lib, make, cls="SGD", epochs=EPOCHS, metrics=None, **opt_kw):
    """lr of each group (and momentum or beta1) after each epoch: optimizer.step() then
    scheduler.step(), as training scripts do."""
    opt = _optimizer(lib, cls, **opt_kw)
    sched = make(lib.optim.lr_scheduler, opt)
    out = [sched.get_last_lr()]
    for epoch in range(epochs):
        opt.step()
        sched.step() if metrics is None else sched.step(metrics[epoch])
        out.append(sched.get_last_lr())
        out.append([g.get("momentum", g.get("betas", (None,))[0]) for g in opt.param_groups])
    return out, opt, sched


SCHEDULERS = {
    "StepLR": lambda m, o: m.StepLR(o, step_size=4, gamma=0.5),
    "MultiStepLR": lambda m, o: m.MultiStepLR(o, milestones=[3, 8, 8, 20], gamma=0.3),
    "ExponentialLR": lambda m, o: m.ExponentialLR(o, gamma=0.9),
    "CosineAnnealingLR": lambda m, o: m.CosineAnnealingLR(o, T_max=7, eta_min=0.001),
    "LambdaLR": lambda m, o: m.LambdaLR(o, [lambda e: 0.95**e, lambda e: 1 / (e + 1)]),
    "MultiplicativeLR": lambda m, o: m.MultiplicativeLR(o, lambda e: 0.97),
    "LinearLR": lambda m, o: m.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=10),
    "ConstantLR": lambda m, o: m.ConstantLR(o, factor=0.4, total_iters=6),
    "PolynomialLR": lambda m, o: m.PolynomialLR(o, total_iters=12, power=2.0),
    "SequentialLR": lambda m, o: m.SequentialLR(
        o, [m.LinearLR(o, start_factor=0.1, total_iters=5), m.CosineAnnealingLR(o, T_max=20)],
        milestones=[5]),
    "ChainedScheduler": lambda m, o: m.ChainedScheduler(
        [m.ConstantLR(o, factor=0.5, total_iters=4), m.ExponentialLR(o, gamma=0.9)]),
    "OneCycleLR": lambda m, o: m.OneCycleLR(o, max_lr=[0.5, 0.2], total_steps=EPOCHS),
    "OneCycleLR-linear-3phase": lambda m, o: m.OneCycleLR(
        o, max_lr=0.5, epochs=6, steps_per_epoch=5, anneal_strategy="linear",
        three_phase=True, pct_start=0.25, div_factor=10.0, final_div_factor=100.0),
}


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_learning_rates_match_torch(name):
    ours, opt, sched = _trace(ng, SCHEDULERS[name], momentum=0.9)
    theirs, topt, tsched = _trace(torch, SCHEDULERS[name], momentum=0.9)
    assert ours == theirs  # exactly: the same float operations in the same order
    assert [g["initial_lr"] for g in opt.param_groups] == [
        g["initial_lr"] for g in topt.param_groups]
    assert getattr(sched, "last_epoch", None) == getattr(tsched, "last_epoch", None)
    sd, tsd = sched.state_dict(), tsched.state_dict()
    assert sd.keys() == tsd.keys()
    assert repr(opt) == repr(topt)


def test_cosine_annealing_over_several_periods_and_one_cycle_with_adam_betas():
    make = lambda m, o: m.CosineAnnealingLR(o, T_max=5)  # noqa: E731
    assert _trace(ng, make, epochs=60)[0] == _trace(torch, make, epochs=60)[0]
    make = SCHEDULERS["OneCycleLR"]
    ours, opt, _ = _trace(ng, make, cls="Adam")
    theirs, topt, _ = _trace(torch, make, cls="Adam")
    assert ours == theirs and opt.param_groups[0]["betas"] == topt.param_groups[0]["betas"]
    assert repr(opt) == repr(topt)


@pytest.mark.parametrize("kw", [dict(patience=2), dict(mode="max", factor=0.5, patience=1,
                                                       cooldown=2, min_lr=[0.01, 0.02]),
                                dict(threshold_mode="abs", threshold=0.1, patience=0, eps=1e-3)])
def test_reduce_lr_on_plateau_matches_torch(kw):
    metrics = [1.0, 0.9, 0.95, 0.95, 0.89, 0.9, 0.9, 0.9, 0.8, 0.85, 0.85, 0.85, 0.85, 0.7,
               0.71, 0.72, 0.73, 0.74, 0.5, 0.5]
    make = lambda m, o: m.ReduceLROnPlateau(o, **kw)  # noqa: E731
    ours, _, sched = _trace(ng, make, epochs=len(metrics), metrics=metrics)
    theirs, _, tsched = _trace(torch, make, epochs=len(metrics), metrics=metrics)
    assert ours == theirs
    assert {k: v for k, v in sched.state_dict().items()} == tsched.state_dict()


def test_state_dict_round_trip():
    make = SCHEDULERS["CosineAnnealingLR"]
    straight, _, _ = _trace(ng, make)
    opt = _optimizer(ng)
    sched = make(ng.optim.lr_scheduler, opt)
    for _ in range(10):
        opt.step()
        sched.step()
    saved_opt, saved = opt.state_dict(), sched.state_dict()
    opt2 = _optimizer(ng)
    sched2 = make(ng.optim.lr_scheduler, opt2)
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved)
    rest = []
    for _ in range(EPOCHS - 10):
        opt2.step()
        sched2.step()
        rest.append(sched2.get_last_lr())
    assert rest == straight[1 + 2 * 10::2]


def test_scheduler_stepped_before_optimizer_warns_like_torch():
    for lib in (ng, torch):
        opt = _optimizer(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, 2)
        with pytest.warns(UserWarning, match=r"^Detected call of `lr_scheduler.step\(\)` before "
                                             r"`optimizer.step\(\)`"):
            sched.step()
        opt = _optimizer(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            opt.step()
            sched.step()
        with pytest.warns(UserWarning, match="please use `get_last_lr"):
            sched.get_lr()


def _error(lib, fn):
    with pytest.raises(Exception) as e:
        fn(lib)
    return type(e.value), str(e.value)


def _step_times(sched, n):
    for _ in range(n):
        sched.step()


ERRORS = [
    lambda lib: lib.optim.lr_scheduler.StepLR("sgd", 3),
    lambda lib: lib.optim.lr_scheduler.StepLR(_optimizer(lib), 3, last_epoch=4),
    lambda lib: lib.optim.lr_scheduler.LambdaLR(_optimizer(lib), [lambda e: 1.0]),
    lambda lib: lib.optim.lr_scheduler.MultiplicativeLR(_optimizer(lib), 0.9),
    lambda lib: lib.optim.lr_scheduler.ConstantLR(_optimizer(lib), factor=2.0),
    lambda lib: lib.optim.lr_scheduler.LinearLR(_optimizer(lib), start_factor=0),
    lambda lib: lib.optim.lr_scheduler.ReduceLROnPlateau(_optimizer(lib), factor=1.0),
    lambda lib: lib.optim.lr_scheduler.ReduceLROnPlateau(_optimizer(lib), mode="up"),
    lambda lib: lib.optim.lr_scheduler.ReduceLROnPlateau(_optimizer(lib), min_lr=[0.1]),
    lambda lib: lib.optim.lr_scheduler.OneCycleLR(_optimizer(lib), 0.1),
    lambda lib: lib.optim.lr_scheduler.OneCycleLR(_optimizer(lib), 0.1, total_steps=0),
    lambda lib: lib.optim.lr_scheduler.OneCycleLR(_optimizer(lib), [0.1], total_steps=5),
    lambda lib: lib.optim.lr_scheduler.OneCycleLR(_optimizer(lib), 0.1, 5, pct_start=1),
    lambda lib: lib.optim.lr_scheduler.OneCycleLR(_optimizer(lib), 0.1, 5,
                                                  anneal_strategy="exp"),
    lambda lib: lib.optim.lr_scheduler.OneCycleLR(_optimizer(lib, "Adagrad"), 0.1, 5),
    lambda lib: _step_times(lib.optim.lr_scheduler.OneCycleLR(_optimizer(lib), 0.1, 2), 3),
    lambda lib: lib.optim.lr_scheduler.SequentialLR(_optimizer(lib), [], []),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_match_torch(i):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _error(ng, ERRORS[i]) == _error(torch, ERRORS[i])


def test_base_class_names():
    m = ng.optim.lr_scheduler
    assert issubclass(m._LRScheduler, m.LRScheduler) and m._LRScheduler.__name__ == "_LRScheduler"
    assert math.isclose(m.ExponentialLR(_optimizer(ng), 0.5).base_lrs[1], 0.03)
