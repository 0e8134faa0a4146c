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


# -- losses -------------------------------------------------------------------------------------

RNG = np.random.default_rng(7)
X = RNG.standard_normal((4, 5))
Y = RNG.standard_normal((4, 5))
Z = RNG.standard_normal((4, 5))
V = RNG.standard_normal(4)
SIGNS4 = np.array([1.0, -1.0, -1.0, 1.0])
SIGNS = np.sign(RNG.standard_normal((4, 5)))
LABELS = (RNG.random((4, 5)) > 0.5).astype(np.float64)
COUNTS = np.array([[0.0, 1, 2, 5, 3], [1, 0, 4, 2, 7], [3, 3, 0, 1, 2], [2, 1, 1, 9, 0]])
CLASSES = np.array([0, 4, 2, 2])


def _t(lib, a, grad=True):
    return lib.tensor(a, dtype=lib.float32, requires_grad=grad)


LOSSES = {
    "margin_ranking": lambda lib, F, r: F.margin_ranking_loss(
        _t(lib, V), _t(lib, X[:, 0]), _t(lib, SIGNS4, False), margin=0.3, reduction=r),
    "hinge_embedding": lambda lib, F, r: F.hinge_embedding_loss(
        _t(lib, X), _t(lib, SIGNS, False), margin=0.5, reduction=r),
    "cosine_embedding": lambda lib, F, r: F.cosine_embedding_loss(
        _t(lib, X), _t(lib, Y), _t(lib, SIGNS4, False), margin=-0.2, reduction=r),
    "cosine_embedding-0d": lambda lib, F, r: F.cosine_embedding_loss(
        _t(lib, X[0]), _t(lib, Y[0]), lib.tensor(-1.0), margin=-0.5, reduction=r),
    "triplet_margin": lambda lib, F, r: F.triplet_margin_loss(
        _t(lib, X), _t(lib, Y), _t(lib, Z), margin=1.5, reduction=r),
    "triplet_margin-swap-p1": lambda lib, F, r: F.triplet_margin_loss(
        _t(lib, X), _t(lib, Y), _t(lib, Z), p=1, swap=True, eps=1e-3, reduction=r),
    "soft_margin": lambda lib, F, r: F.soft_margin_loss(_t(lib, X), _t(lib, SIGNS, False),
                                                        reduction=r),
    "multilabel_soft_margin": lambda lib, F, r: F.multilabel_soft_margin_loss(
        _t(lib, X), _t(lib, LABELS, False), reduction=r),
    "multilabel_soft_margin-weight": lambda lib, F, r: F.multilabel_soft_margin_loss(
        _t(lib, X), _t(lib, LABELS, False), weight=_t(lib, np.arange(1.0, 6.0), False),
        reduction=r),
    "poisson_nll": lambda lib, F, r: F.poisson_nll_loss(_t(lib, X), _t(lib, COUNTS),
                                                        reduction=r),
    "poisson_nll-full-rate": lambda lib, F, r: F.poisson_nll_loss(
        _t(lib, np.abs(X)), _t(lib, COUNTS, False), log_input=False, full=True, reduction=r),
    "gaussian_nll": lambda lib, F, r: F.gaussian_nll_loss(
        _t(lib, X), _t(lib, Y), _t(lib, np.abs(Z)), reduction=r),
    "gaussian_nll-full-1d-var": lambda lib, F, r: F.gaussian_nll_loss(
        _t(lib, X), _t(lib, Y), _t(lib, np.abs(V) + 1e-7), full=True, eps=0.1, reduction=r),
    "gaussian_nll-float-var": lambda lib, F, r: F.gaussian_nll_loss(
        _t(lib, X), _t(lib, Y, False), 0.5, reduction=r),
    "multi_margin": lambda lib, F, r: F.multi_margin_loss(
        _t(lib, X), lib.tensor(CLASSES), reduction=r),
    "multi_margin-p2-weight": lambda lib, F, r: F.multi_margin_loss(
        _t(lib, X), lib.tensor(CLASSES), p=2, margin=0.7,
        weight=_t(lib, np.arange(1.0, 6.0), False), reduction=r),
    "multi_margin-1d": lambda lib, F, r: F.multi_margin_loss(
        _t(lib, X[1]), lib.tensor([3]), reduction=r),
    "multi_margin-1d-0d-target": lambda lib, F, r: F.multi_margin_loss(
        _t(lib, X[1]), lib.tensor(1), margin=2.0, reduction=r),
    "pairwise_distance": lambda lib, F, r: F.pairwise_distance(_t(lib, X), _t(lib, Y[0])),
    "pairwise_distance-p3-keepdim": lambda lib, F, r: F.pairwise_distance(
        _t(lib, X), _t(lib, Y), p=3, keepdim=True),
}


def _loss_run(lib, name, reduction):
    """The loss, its node's name and the gradients of its leaves (through a weighted sum)."""
    leaves = []
    real_tensor = lib.tensor

    def tensor(*a, **kw):
        t = real_tensor(*a, **kw)
        leaves.append(t)
        return t

    lib.tensor = tensor
    try:
        out = LOSSES[name](lib, lib.nn.functional, reduction)
    finally:
        lib.tensor = real_tensor
    w = real_tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)),
                    dtype=lib.float32)
    (out * w).sum().backward()
    return (_np(out), type(out.grad_fn).__name__,
            [None if t.grad is None else _np(t.grad) for t in leaves])


@pytest.mark.parametrize("name,reduction", [
    (name, r) for name in LOSSES for r in ("none", "mean", "sum")
    if r == "none" or not name.startswith("pairwise")])  # (a distance has no reduction)
def test_loss_values_gradients_and_nodes_match_torch(name, reduction):
    out, node, grads = _loss_run(ng, name, reduction)
    tout, tnode, tgrads = _loss_run(torch, name, reduction)
    np.testing.assert_allclose(out, tout, rtol=1e-5, atol=1e-6)
    assert out.shape == tout.shape
    # (pairwise_distance's norm is linalg's vector norm here, at::norm's NormBackward1 there)
    assert node == tnode or (node, tnode) == ("LinalgVectorNormBackward0", "NormBackward1")
    assert [g is None for g in grads] == [g is None for g in tgrads]
    for g, tg in zip(grads, tgrads):
        if g is not None:
            np.testing.assert_allclose(g, tg, rtol=1e-5, atol=1e-6)


LOSS_MODULES = [
    ("MarginRankingLoss", dict(margin=0.3), ("V", "X0", "S4")),
    ("HingeEmbeddingLoss", dict(margin=0.5, reduction="sum"), ("X", "S")),
    ("CosineEmbeddingLoss", dict(margin=0.1), ("X", "Y", "S4")),
    ("TripletMarginLoss", dict(margin=0.5, p=1.0, swap=True), ("X", "Y", "Z")),
    ("SoftMarginLoss", dict(reduction="none"), ("X", "S")),
    ("MultiLabelSoftMarginLoss", dict(weight="W"), ("X", "L")),
    ("PoissonNLLLoss", dict(log_input=False, full=True), ("A", "C")),
    ("GaussianNLLLoss", dict(full=True, eps=1e-3), ("X", "Y", "A")),
    ("MultiMarginLoss", dict(p=2, margin=0.5, weight="W", reduction="sum"), ("X", "K")),
    ("PairwiseDistance", dict(p=1.5, keepdim=True), ("X", "Y")),
    ("CosineSimilarity", dict(dim=0, eps=1e-6), ("X", "Y")),
]
ARGS = {"V": V, "X0": X[:, 0], "S4": SIGNS4, "X": X, "S": SIGNS, "Y": Y, "Z": Z, "L": LABELS,
        "A": np.abs(Z), "C": COUNTS, "W": np.arange(1.0, 6.0)}


@pytest.mark.parametrize("cls,kw,args", LOSS_MODULES, ids=[c for c, _, _ in LOSS_MODULES])
def test_loss_modules_match_torch(cls, kw, args):
    results = []
    for lib in (ng, torch):
        kw_lib = {k: (_t(lib, ARGS[v], False) if v == "W" else v) for k, v in kw.items()}
        m = getattr(lib.nn, cls)(**kw_lib)
        inputs = [lib.tensor(CLASSES) if a == "K" else _t(lib, ARGS[a], a not in ("S", "S4", "L"))
                  for a in args]
        out = m(*inputs)
        out.sum().backward()
        results.append((repr(m), _np(out), [_np(t.grad) for t in inputs if t.grad is not None],
                        sorted(m.state_dict()), type(out.grad_fn).__name__))
    (r, out, grads, keys, node), (tr, tout, tgrads, tkeys, tnode) = results
    assert r == tr and keys == tkeys
    assert node == tnode or (node, tnode) == ("LinalgVectorNormBackward0", "NormBackward1")
    np.testing.assert_allclose(out, tout, rtol=1e-5, atol=1e-6)
    assert len(grads) == len(tgrads)
    for g, tg in zip(grads, tgrads):
        np.testing.assert_allclose(g, tg, rtol=1e-5, atol=1e-6)


def test_soft_margin_and_multi_margin_second_derivatives_match_torch():
    results = []
    for lib in (ng, torch):
        x = _t(lib, X)
        gx, = lib.autograd.grad(lib.nn.functional.soft_margin_loss(x, _t(lib, SIGNS, False)), x,
                                create_graph=True)
        gx2, = lib.autograd.grad((gx * gx).sum(), x)
        results.append(_np(gx2))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5, atol=1e-6)


def _x(lib):
    return lib.tensor(X, dtype=lib.float32)


LOSS_ERRORS = [
    lambda lib: lib.nn.functional.margin_ranking_loss(_x(lib), _x(lib), lib.ones(4)),
    lambda lib: lib.nn.functional.cosine_embedding_loss(_x(lib), _x(lib), lib.ones(4, 1)),
    lambda lib: lib.nn.functional.cosine_embedding_loss(_x(lib)[0], _x(lib)[0], lib.ones(4)),
    lambda lib: lib.nn.functional.cosine_embedding_loss(_x(lib), _x(lib), lib.tensor(1.0)),
    lambda lib: lib.nn.functional.triplet_margin_loss(_x(lib), _x(lib), _x(lib)[0]),
    lambda lib: lib.nn.functional.triplet_margin_loss(_x(lib), _x(lib), _x(lib), margin=0),
    lambda lib: lib.nn.TripletMarginLoss(margin=-1.0),
    lambda lib: lib.nn.functional.multi_margin_loss(_x(lib), lib.tensor([0, 1, 2, 5])),
    lambda lib: lib.nn.functional.multi_margin_loss(_x(lib), lib.tensor([0, 1])),
    lambda lib: lib.nn.functional.multi_margin_loss(_x(lib), lib.tensor([0, 1, 2, 3]), p=3),
    lambda lib: lib.nn.functional.multi_margin_loss(_x(lib), lib.tensor([0, 1, 2, 3]),
                                                    weight=lib.ones(2, 2)),
    lambda lib: lib.nn.functional.multi_margin_loss(_x(lib), lib.tensor([0, 1, 2, 3]),
                                                    weight=lib.ones(3)),
    lambda lib: lib.nn.functional.multi_margin_loss(lib.ones(2, 3, 4), lib.tensor([0, 1])),
    lambda lib: lib.nn.functional.multi_margin_loss(_x(lib), lib.tensor([0.0, 1, 2, 3])),
    lambda lib: lib.nn.MultiMarginLoss(p=0),
    lambda lib: lib.nn.MultiMarginLoss(weight=lib.ones(2, 2)),
    lambda lib: lib.nn.functional.gaussian_nll_loss(_x(lib), _x(lib), lib.ones(2)),
    lambda lib: lib.nn.functional.gaussian_nll_loss(_x(lib), _x(lib), -1.0),
    lambda lib: lib.nn.functional.gaussian_nll_loss(_x(lib), _x(lib), -lib.ones(4, 5)),
    lambda lib: lib.nn.functional.gaussian_nll_loss(_x(lib), _x(lib), 1.0, reduction="x"),
    lambda lib: lib.nn.functional.poisson_nll_loss(_x(lib), _x(lib), reduction="x"),
    lambda lib: lib.nn.functional.multilabel_soft_margin_loss(_x(lib), _x(lib), reduction="x"),
    lambda lib: lib.nn.functional.soft_margin_loss(_x(lib), _x(lib), reduction="x"),
    lambda lib: lib.nn.functional.hinge_embedding_loss(_x(lib), _x(lib), reduction="avg"),
    lambda lib: lib.nn.functional.soft_margin_loss(_x(lib), _x(lib).requires_grad_()),
]


@pytest.mark.parametrize("i", range(len(LOSS_ERRORS)))
def test_loss_errors_match_torch(i):
    assert _error(ng, LOSS_ERRORS[i]) == _error(torch, LOSS_ERRORS[i])


# -- layers -------------------------------------------------------------------------------------

IMG = RNG.standard_normal((2, 4, 5, 6))


def _layer_run(lib, make, x, grad=True):
    """(repr, output, input gradient through a weighted sum, node name) of ``make(lib)(x)``."""
    m = make(lib)
    t = lib.tensor(x, dtype=lib.float32, requires_grad=grad)
    out = m(t)
    w = lib.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)), dtype=lib.float32)
    (out * w).sum().backward()
    return repr(m), _np(out), _np(t.grad), type(out.grad_fn).__name__


def _check_layer(make, x, node=None, rtol=1e-5):
    r, out, g, n = _layer_run(ng, make, x)
    tr, tout, tg, tn = _layer_run(torch, make, x)
    assert r == tr
    assert out.shape == tout.shape
    np.testing.assert_allclose(out, tout, rtol=rtol, atol=1e-6)
    np.testing.assert_allclose(g, tg, rtol=rtol, atol=1e-6)
    assert n == (node or tn)


PADS = [
    ("ZeroPad1d", 2, 3), ("ZeroPad2d", (1, 0, 2, 1), 4), ("ZeroPad3d", 1, 4),
    ("ConstantPad1d", ((1, -2), 3.5), 3), ("ConstantPad2d", (2, -1.0), 3),
    ("ConstantPad3d", ((1, 0, 0, 1, 2, 0), 0.5), 4), ("ReflectionPad1d", (2, 4), 3),
    ("ReflectionPad2d", (1, 3, 2, 0), 4), ("ReflectionPad2d", 1, 3), ("ReflectionPad3d", 1, 4),
    ("ReplicationPad1d", (3, 1), 2), ("ReplicationPad2d", 2, 4), ("ReplicationPad3d", 1, 4),
    ("CircularPad1d", (2, 1), 3), ("CircularPad2d", (1, 2, 0, 3), 4), ("CircularPad2d", 1, 3),
    ("CircularPad3d", 1, 4), ("CircularPad1d", (-1, 2), 3),
]


@pytest.mark.parametrize("cls,arg,ndim", PADS, ids=[f"{c}-{i}" for i, (c, _, _) in
                                                     enumerate(PADS)])
def test_padding_modules_match_torch(cls, arg, ndim):
    args = arg if isinstance(arg, tuple) and cls.startswith("Constant") else (arg,)
    x = IMG.reshape(-1, 5, 6)[0] if ndim == 2 else IMG[0] if ndim == 3 else IMG
    # (every mode under PyTorch's node: ReflectionPad1DBackward0, CopySlices, ...)
    _check_layer(lambda lib: getattr(lib.nn, cls)(*args), x)


PAD_ERRORS = [
    lambda lib: lib.nn.CircularPad2d(1)(lib.ones(2, 3)),
    lambda lib: lib.nn.CircularPad1d(1)(lib.ones(2, 3, 4, 5)),
    lambda lib: lib.nn.CircularPad1d(4)(lib.ones(2, 3)),
    lambda lib: lib.nn.ReflectionPad1d(3)(lib.ones(2, 3)),
    lambda lib: lib.nn.ReflectionPad2d((0, 0, 0, 3))(lib.ones(2, 1, 3, 4)),
    lambda lib: lib.nn.ReflectionPad3d((3, 0, 0, 0, 0, 0))(lib.ones(1, 1, 4, 4, 3)),
    lambda lib: lib.nn.functional.pad(lib.ones(2, 3, 4, 5), (1, 1), mode="reflect"),
    lambda lib: lib.nn.functional.pad(lib.ones(5), (1, 1), mode="replicate"),
    lambda lib: lib.nn.functional.pad(lib.ones(2, 5), (1, 1, 1, 1), mode="circular"),
]


@pytest.mark.parametrize("i", range(len(PAD_ERRORS)))
def test_padding_errors_match_torch(i):
    assert _error(ng, PAD_ERRORS[i]) == _error(torch, PAD_ERRORS[i])


@pytest.mark.parametrize("make,x", [
    (lambda lib: lib.nn.PixelShuffle(2), IMG),
    (lambda lib: lib.nn.PixelShuffle(1), IMG[0]),
    (lambda lib: lib.nn.PixelUnshuffle(2), RNG.standard_normal((2, 3, 4, 6))),
    (lambda lib: lib.nn.PixelUnshuffle(3), RNG.standard_normal((1, 2, 3, 6, 3))),
    (lambda lib: lib.nn.Unfold(2), IMG),
    (lambda lib: lib.nn.Unfold((2, 3), dilation=2, padding=1, stride=(1, 2)), IMG[0]),
    (lambda lib: lib.nn.Fold((5, 6), 2), RNG.standard_normal((2, 12, 20))),
    (lambda lib: lib.nn.Fold((4, 7), (2, 3), dilation=(1, 2), padding=1, stride=2),
     RNG.standard_normal((18, 9))),
])
def test_pixel_shuffle_fold_and_unfold_match_torch(make, x):
    _check_layer(make, x)


def test_fold_is_unfolds_adjoint_and_second_derivatives_match_torch():
    results = []
    for lib in (ng, torch):
        x = lib.tensor(IMG, dtype=lib.float32, requires_grad=True)
        cols = lib.nn.functional.unfold(x * x, (2, 3), padding=1, stride=2)
        back = lib.nn.functional.fold(cols * cols, (5, 6), (2, 3), padding=1, stride=2)
        g, = lib.autograd.grad(back.sum(), x, create_graph=True)
        g2, = lib.autograd.grad((g * g).sum(), x)
        shuffled = lib.nn.functional.pixel_unshuffle(lib.nn.functional.pixel_shuffle(x, 2), 2)
        results.append((_np(back), _np(g2), bool((shuffled == x).all()),
                        type(cols.grad_fn).__name__, type(back.grad_fn).__name__))
    (b, g2, same, *nodes), (tb, tg2, tsame, *tnodes) = results
    np.testing.assert_allclose(b, tb, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g2, tg2, rtol=1e-5, atol=1e-5)
    assert same and tsame and nodes == tnodes == ["Im2ColBackward0", "Col2ImBackward0"]


SHAPE_ERRORS = [
    lambda lib: lib.pixel_shuffle(lib.ones(4, 4), 2),
    lambda lib: lib.nn.functional.pixel_shuffle(lib.ones(4, 4, 4), 0),
    lambda lib: lib.nn.functional.pixel_shuffle(lib.ones(5, 4, 4), 2),
    lambda lib: lib.nn.functional.pixel_unshuffle(lib.ones(4, 4), 2),
    lambda lib: lib.nn.functional.pixel_unshuffle(lib.ones(4, 4, 4), 0),
    lambda lib: lib.nn.functional.pixel_unshuffle(lib.ones(4, 5, 4), 2),
    lambda lib: lib.nn.functional.pixel_unshuffle(lib.ones(4, 4, 5), 2),
    lambda lib: lib.nn.functional.unfold(lib.ones(2, 3, 5, 6), 0),
    lambda lib: lib.nn.functional.unfold(lib.ones(2, 3, 5, 6), 2, stride=0),
    lambda lib: lib.nn.functional.unfold(lib.ones(2, 3, 5, 6), 2, dilation=(1, 0)),
    lambda lib: lib.nn.functional.unfold(lib.ones(2, 3, 5, 6), 2, padding=-1),
    lambda lib: lib.nn.functional.unfold(lib.ones(2, 3, 5, 6), 7),
    lambda lib: lib.nn.functional.unfold(lib.ones(2, 3, 5, 6), (2, 2, 2)),
    lambda lib: lib.nn.functional.fold(lib.ones(2, 12, 20), (5, 7), 2),
    lambda lib: lib.nn.functional.fold(lib.ones(2, 10, 20), (5, 6), 2),
    lambda lib: lib.nn.functional.fold(lib.ones(2, 3, 5, 6), (5, 6), 2),
]


@pytest.mark.parametrize("i", range(len(SHAPE_ERRORS)))
def test_shuffle_and_fold_errors_match_torch(i):
    assert _error(ng, SHAPE_ERRORS[i]) == _error(torch, SHAPE_ERRORS[i])


@pytest.mark.parametrize("make,x,node", [
    (lambda lib: lib.nn.AdaptiveMaxPool2d((2, 3)), RNG.standard_normal((2, 3, 5, 7)), None),
    (lambda lib: lib.nn.AdaptiveMaxPool2d((None, 4)), RNG.standard_normal((3, 5, 7)), None),
    (lambda lib: lib.nn.AdaptiveMaxPool2d(3), RNG.standard_normal((1, 2, 3, 3)), None),
    (lambda lib: lib.nn.AdaptiveMaxPool1d(4), RNG.standard_normal((2, 3, 9)), None),
    (lambda lib: lib.nn.AdaptiveMaxPool1d(3), RNG.standard_normal((3, 10)), None),
    (lambda lib: lib.nn.AdaptiveAvgPool1d(4), RNG.standard_normal((2, 3, 9)), None),
    (lambda lib: lib.nn.AdaptiveAvgPool1d((2,)), RNG.standard_normal((3, 7)), None),
    (lambda lib: lib.nn.LocalResponseNorm(3), IMG, None),
    (lambda lib: lib.nn.LocalResponseNorm(2, alpha=0.1, beta=0.5, k=2.0), IMG[0], None),
    (lambda lib: lib.nn.LocalResponseNorm(4), RNG.standard_normal((2, 5, 3, 2, 2)), None),
    # (F.interpolate's gathers and matmuls under PyTorch's upsample nodes)
    (lambda lib: lib.nn.UpsamplingNearest2d(scale_factor=2), IMG, None),
    (lambda lib: lib.nn.UpsamplingNearest2d((7, 9)), IMG, None),
    (lambda lib: lib.nn.UpsamplingBilinear2d((7, 9)), IMG, None),
    (lambda lib: lib.nn.UpsamplingBilinear2d(scale_factor=1.5), IMG, None),
], ids=["amax2d", "amax2d-none", "amax2d-same", "amax1d", "amax1d-unbatched", "aavg1d",
        "aavg1d-unbatched", "lrn", "lrn-3d", "lrn-5d", "nearest-scale", "nearest-size",
        "bilinear-size", "bilinear-scale"])
def test_pooling_lrn_and_upsampling_modules_match_torch(make, x, node):
    _check_layer(make, x, node)


def test_adaptive_max_pool_indices_match_torch():
    x = RNG.standard_normal((2, 3, 5, 7))
    x[0, 0, :2, :2] = 9.0  # (a tie: the first in the window wins)
    results = []
    for lib in (ng, torch):
        t = lib.tensor(x, dtype=lib.float32)
        out, idx = lib.nn.functional.adaptive_max_pool2d(t, (3, 4), return_indices=True)
        out1, idx1 = lib.nn.AdaptiveMaxPool1d(5, return_indices=True)(t[0])
        results.append((_np(out), _np(idx), str(idx.dtype).split(".")[-1], _np(out1), _np(idx1)))
    for a, b in zip(*results):
        assert a == b if isinstance(a, str) else np.array_equal(a, b)


@pytest.mark.parametrize("kw", [{}, {"affine": True}, {"track_running_stats": True,
                                                       "momentum": 0.3},
                                {"affine": True, "track_running_stats": True, "momentum": None}])
@pytest.mark.parametrize("cls", ["InstanceNorm1d", "InstanceNorm2d"])
def test_instance_norm_matches_torch(cls, kw):
    x = IMG if cls == "InstanceNorm2d" else IMG.reshape(2, 4, 30)
    results = []
    for lib in (ng, torch):
        m = getattr(lib.nn, cls)(4, **kw)
        if kw.get("affine"):
            with lib.no_grad():
                m.weight.copy_(lib.tensor([0.5, 1.0, 1.5, 2.0]))
                m.bias.copy_(lib.tensor([0.1, -0.2, 0.3, 0.0]))
        t = lib.tensor(x, dtype=lib.float32, requires_grad=True)
        outs = []
        for i in range(2):  # training: the running statistics move twice
            out = m(t * (i + 1))
            out.backward(lib.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)),
                                    dtype=lib.float32))
            outs.append(_np(out))
        m.eval()
        outs.append(_np(m(t[0])))  # unbatched; the running statistics when tracked
        grads = [_np(t.grad)] + ([_np(m.weight.grad), _np(m.bias.grad)] if kw.get("affine")
                                 else [])
        results.append((repr(m), outs, grads, {k: _np(v) for k, v in m.state_dict().items()},
                        type(m(t).grad_fn).__name__))
    (r, outs, grads, sd, node), (tr, touts, tgrads, tsd, tnode) = results
    assert r == tr and node == tnode and sd.keys() == tsd.keys()
    for a, b in zip(outs + grads, touts + tgrads):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    for k in sd:
        np.testing.assert_allclose(sd[k], tsd[k], rtol=1e-5, atol=1e-6)


def test_instance_norm_warns_on_a_channel_count_it_does_not_use():
    for lib in (ng, torch):
        with pytest.warns(UserWarning, match=r"^input's size at dim=1 does not match "
                                             "num_features. You can silence"):
            lib.nn.InstanceNorm1d(3)(lib.ones(2, 4, 5))


LAYER_ERRORS = [
    lambda lib: lib.nn.InstanceNorm1d(3)(lib.ones(2, 3, 4, 5)),
    lambda lib: lib.nn.InstanceNorm2d(3, affine=True)(lib.ones(2, 4, 4, 5)),
    lambda lib: lib.nn.functional.instance_norm(lib.ones(2, 3, 1)),
    lambda lib: lib.nn.functional.instance_norm(lib.ones(2, 3, 4), use_input_stats=False),
    lambda lib: lib.nn.functional.local_response_norm(lib.ones(2, 3), 2),
    lambda lib: lib.nn.functional.adaptive_max_pool2d(lib.ones(5, 7), 3),
    lambda lib: lib.nn.functional.adaptive_max_pool2d(lib.ones(2, 3, 5, 7), (1, 2, 3)),
    lambda lib: lib.nn.functional.adaptive_max_pool2d(lib.ones(2, 3, 5, 7), (-1, 2)),
    lambda lib: lib.nn.functional.adaptive_max_pool2d(lib.ones(2, 0, 3, 3), 2),
    lambda lib: lib.nn.functional.adaptive_max_pool1d(lib.ones(2, 3, 5, 7), 4),
    lambda lib: lib.nn.functional.adaptive_max_pool1d(lib.ones(3, 5), (4, 2)),
    lambda lib: lib.nn.functional.adaptive_avg_pool1d(lib.ones(2, 3, 5, 7), 4),
    lambda lib: lib.adaptive_avg_pool1d(lib.ones(3, 5), (4, 2)),
]


@pytest.mark.parametrize("i", range(len(LAYER_ERRORS)))
def test_layer_errors_match_torch(i):
    assert _error(ng, LAYER_ERRORS[i]) == _error(torch, LAYER_ERRORS[i])


@pytest.mark.parametrize("p", [1, 2])
def test_multi_margin_loss_has_no_second_derivative_as_in_torch(p):
    results = []
    for lib in (ng, torch):
        x = _t(lib, X)
        loss = lib.nn.functional.multi_margin_loss(x, lib.tensor(CLASSES), p=p)
        g, = lib.autograd.grad(loss, x, create_graph=True)
        with pytest.raises(RuntimeError) as e:
            lib.autograd.grad((g * g).sum(), x)
        results.append((type(g.grad_fn).__name__, str(e.value), _np(g)))
    (node, msg, g), (tnode, tmsg, tg) = results
    assert node == tnode == "NotImplemented" and msg == tmsg
    np.testing.assert_allclose(g, tg, rtol=1e-5, atol=1e-7)
