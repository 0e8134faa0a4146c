"""numbagrad.optim against torch.optim: the same steps from the same parameters give the same
parameters, state, state_dict, repr and errors."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

P0 = (np.array([0.5, -1.5, 2.0]), np.array([[0.3, -0.7], [1.1, 0.2]]))
C = (np.array([1.0, 2.0, -0.5]), np.array([[0.4, -1.2], [0.9, 1.7]]))
TOL = {"float64": dict(rtol=1e-12, atol=1e-14), "float32": dict(rtol=2e-6, atol=1e-7)}


def _leaves(lib, dtype, values=P0):
    return [lib.tensor(v, dtype=getattr(lib, dtype), requires_grad=True) for v in values]


def _loss(lib, ps, dtype):
    c1, c2 = (lib.tensor(c, dtype=getattr(lib, dtype)) for c in C)
    p1, p2 = ps[0], ps[1]
    return ((p1 * c1) ** 2).sum() + (p2 * c2).sum() * p1.sum() + (p2 * p2 * p2).sum()


def _run(lib, cls, kw, dtype="float64", steps=5, groups=None, opt_and_params=None):
    """``steps`` steps of ``cls`` on the loss above; a third parameter never gets a gradient."""
    if opt_and_params is None:
        ps = _leaves(lib, dtype) + [lib.tensor([7.0], dtype=getattr(lib, dtype),
                                               requires_grad=True)]
        params = ps if groups is None else groups(ps)
        opt = getattr(lib.optim, cls)(params, **kw)
    else:
        opt, ps = opt_and_params
    for _ in range(steps):
        opt.zero_grad()
        _loss(lib, ps, dtype).backward()
        opt.step()
    return opt, ps


def _np(t):
    return t.detach().cpu().numpy() if hasattr(t, "cpu") else np.asarray(t)


def _assert_state_equal(ours, theirs, tol):
    sd, tsd = ours.state_dict(), theirs.state_dict()
    assert sd["param_groups"] == tsd["param_groups"]
    assert sd["state"].keys() == tsd["state"].keys()
    for k, st in tsd["state"].items():
        assert sd["state"][k].keys() == st.keys()
        for name, v in st.items():
            mine = sd["state"][k][name]
            assert str(mine.dtype).split(".")[-1] == str(v.dtype).split(".")[-1], name
            assert tuple(mine.shape) == tuple(v.shape), name
            np.testing.assert_allclose(_np(mine), v.numpy(), **tol, err_msg=name)


def _check(cls, kw, dtype="float64", groups=None):
    opt, ps = _run(ng, cls, kw, dtype, groups=groups)
    topt, tps = _run(torch, cls, kw, dtype, groups=groups)
    for p, tp in zip(ps, tps):
        np.testing.assert_allclose(_np(p), _np(tp), **TOL[dtype])
        assert p.is_leaf and p.requires_grad
    _assert_state_equal(opt, topt, TOL[dtype])
    assert repr(opt) == repr(topt)


CASES = [
    ("SGD", dict(lr=0.05)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.1)),
    ("Adam", dict(lr=0.1, amsgrad=True, weight_decay=0.2)),
    ("Adam", dict(lr=0.1, betas=(0.3, 0.8), maximize=True)),  # lerp's weight >= 0.5
    ("Adam", dict(lr=0.1, weight_decay=0.1, decoupled_weight_decay=True, amsgrad=True)),
    ("AdamW", dict(lr=0.1)),
    ("AdamW", dict(lr=0.1, weight_decay=0.3, amsgrad=True, eps=1e-3)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, alpha=0.9, maximize=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.5)),
    ("Adagrad", dict(lr=0.1, maximize=True, eps=1e-3)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.7, eps=1e-4, weight_decay=0.1, maximize=True)),
]


@pytest.mark.parametrize("cls,kw", CASES, ids=[f"{c}-{i}" for i, (c, _) in enumerate(CASES)])
def test_steps_match_torch_float64(cls, kw):
    _check(cls, kw)


@pytest.mark.parametrize("cls", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta"])
def test_steps_match_torch_float32(cls):
    kw = {"SGD": dict(lr=0.05, momentum=0.9)}.get(cls, dict(lr=0.01))
    _check(cls, kw, dtype="float32")


def test_param_groups_with_their_own_hyperparameters():
    def groups(ps):
        return [{"params": [ps[0]], "lr": 0.3, "betas": (0.5, 0.9)},
                {"params": ps[1:], "weight_decay": 0.1}]

    _check("Adam", dict(lr=0.05), groups=groups)
    _check("SGD", dict(lr=0.05, momentum=0.5), groups=groups)


@pytest.mark.parametrize("cls,kw", [("SGD", dict(lr=0.05, momentum=0.9)),
                                    ("Adam", dict(lr=0.1, amsgrad=True)),
                                    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5)),
                                    ("Adagrad", dict(lr=0.1, lr_decay=0.01)),
                                    ("Adadelta", dict(lr=0.5, rho=0.8))])
def test_state_dict_round_trip_continues_like_an_uninterrupted_run(cls, kw):
    straight, ps = _run(ng, cls, kw, steps=6)
    first, qs = _run(ng, cls, kw, steps=3)
    saved = pickle.loads(pickle.dumps(first.state_dict()))
    assert all(isinstance(k, int) for k in saved["state"])
    assert saved["param_groups"][0]["params"] == [0, 1, 2]
    # torch loads our state dict (tensors converted) and continues alike
    tq = [torch.tensor(_np(q), requires_grad=True) for q in qs]
    topt = getattr(torch.optim, cls)(tq, **kw)
    topt.load_state_dict({
        "state": {k: {n: torch.tensor(_np(v)) for n, v in st.items()}
                  for k, st in saved["state"].items()},
        "param_groups": saved["param_groups"]})
    rs = [ng.tensor(_np(q), requires_grad=True) for q in qs]
    fresh = getattr(ng.optim, cls)(rs, **{**kw, "lr": 123.0})
    fresh.load_state_dict(saved)
    assert fresh.param_groups[0]["lr"] == kw["lr"] and fresh.param_groups[0]["params"][0] is rs[0]
    _run(ng, cls, kw, steps=3, opt_and_params=(fresh, rs))
    for p, r in zip(ps, rs):
        np.testing.assert_array_equal(_np(p), _np(r))
    _run(torch, cls, kw, steps=3, opt_and_params=(topt, tq))
    for p, t in zip(ps, tq):
        np.testing.assert_allclose(_np(p), _np(t), **TOL["float64"])


def test_load_state_dict_casts_state_to_the_parameters_dtype():
    opt, _ = _run(ng, "Adam", {}, steps=2)
    p32 = _leaves(ng, "float32") + [ng.tensor([7.0], requires_grad=True)]
    opt32 = ng.optim.Adam(p32)
    opt32.load_state_dict(opt.state_dict())
    st = opt32.state[p32[0]]
    assert st["exp_avg"].dtype == ng.float32 and st["step"].dtype == ng.float32
    assert st["step"].item() == 2.0
    # same dtype: the tensors are taken as they are, as torch does
    opt64 = ng.optim.Adam(_leaves(ng, "float64") + [ng.tensor([7.0], requires_grad=True)])
    sd = opt.state_dict()
    opt64.load_state_dict(sd)
    assert opt64.state[opt64.param_groups[0]["params"][0]]["exp_avg"] is sd["state"][0]["exp_avg"]


def test_load_state_dict_errors():
    opt = ng.optim.SGD(_leaves(ng, "float64"), lr=0.1)
    two = ng.optim.SGD([{"params": [p]} for p in _leaves(ng, "float64")], lr=0.1)
    with pytest.raises(ValueError) as e:
        opt.load_state_dict(two.state_dict())
    assert str(e.value) == "loaded state dict has a different number of parameter groups"
    one = ng.optim.SGD(_leaves(ng, "float64")[:1], lr=0.1)
    with pytest.raises(ValueError) as e:
        opt.load_state_dict(one.state_dict())
    assert str(e.value) == ("loaded state dict contains a parameter group that doesn't match "
                            "the size of optimizer's group")


def test_step_skips_parameters_without_grad_and_keeps_leaves():
    opt, ps = _run(ng, "Adam", dict(lr=0.1), steps=2)
    assert ps[2].tolist() == [7.0] and ps[2] not in opt.state
    assert ps[0]._version > 0 and ps[0].is_leaf and ps[0].grad_fn is None
    sgd, qs = _run(ng, "SGD", dict(lr=0.1), steps=1)
    assert sgd.state_dict()["state"] == {}  # plain SGD keeps no state, as torch


def test_closure_runs_with_grad_enabled_and_its_loss_is_returned():
    ps = _leaves(ng, "float64")
    opt = ng.optim.SGD(ps, lr=0.1)

    def closure():
        opt.zero_grad()
        loss = _loss(ng, ps, "float64")
        loss.backward()
        return loss

    with ng.no_grad():
        loss = opt.step(closure)
    tps = _leaves(torch, "float64")
    topt = torch.optim.SGD(tps, lr=0.1)
    topt.zero_grad()
    tloss = _loss(torch, tps, "float64")
    tloss.backward()
    topt.step()
    assert loss.item() == pytest.approx(tloss.item(), rel=1e-14)
    np.testing.assert_allclose(_np(ps[0]), _np(tps[0]), rtol=1e-14)


def test_zero_grad():
    ps = _leaves(ng, "float64")
    opt = ng.optim.SGD(ps)
    _loss(ng, ps, "float64").backward()
    opt.zero_grad(set_to_none=False)
    assert ps[0].grad.tolist() == [0.0, 0.0, 0.0]
    opt.zero_grad()
    assert ps[0].grad is None and ps[1].grad is None


def _error(lib, fn):
    with pytest.raises(Exception) as e:
        fn(lib)
    return type(e.value), str(e.value).replace("torch.", "numbagrad.")


ERRORS = [
    lambda lib: lib.optim.SGD([lib.ones(2, requires_grad=True)], lr=-1),
    lambda lib: lib.optim.SGD([lib.ones(2, requires_grad=True)], momentum=-0.5),
    lambda lib: lib.optim.SGD([lib.ones(2, requires_grad=True)], weight_decay=-1),
    lambda lib: lib.optim.SGD([lib.ones(2, requires_grad=True)], nesterov=True),
    lambda lib: lib.optim.SGD([lib.ones(2, requires_grad=True)], momentum=0.9, dampening=0.1,
                              nesterov=True),
    lambda lib: lib.optim.Adam([lib.ones(2, requires_grad=True)], lr=-1e-3),
    lambda lib: lib.optim.Adam([lib.ones(2, requires_grad=True)], eps=-1.0),
    lambda lib: lib.optim.Adam([lib.ones(2, requires_grad=True)], betas=(1.0, 0.999)),
    lambda lib: lib.optim.Adam([lib.ones(2, requires_grad=True)], betas=(0.9, -0.1)),
    lambda lib: lib.optim.Adam([lib.ones(2, requires_grad=True)], betas=(0, 0.9)),
    lambda lib: lib.optim.AdamW([lib.ones(2, requires_grad=True)], weight_decay=-0.1),
    lambda lib: lib.optim.RMSprop([lib.ones(2, requires_grad=True)], alpha=-0.1),
    lambda lib: lib.optim.RMSprop([lib.ones(2, requires_grad=True)], momentum=-0.1),
    lambda lib: lib.optim.Adagrad([lib.ones(2, requires_grad=True)], lr_decay=-0.1),
    lambda lib: lib.optim.Adagrad([lib.ones(2, requires_grad=True)],
                                  initial_accumulator_value=-1),
    lambda lib: lib.optim.Adadelta([lib.ones(2, requires_grad=True)], rho=1.5),
    lambda lib: lib.optim.Adadelta([lib.ones(2, requires_grad=True)], eps=-1.0),
    lambda lib: lib.optim.SGD([lib.ones(2, requires_grad=True)], fused=True, foreach=True),
    lambda lib: lib.optim.Adam([]),
    lambda lib: lib.optim.SGD(lib.ones(2, requires_grad=True)),
    lambda lib: lib.optim.SGD([lib.ones(2, requires_grad=True) * 2]),
    lambda lib: lib.optim.SGD([1.0]),
    lambda lib: lib.optim.SGD([lib.ones(2, requires_grad=True)]).add_param_group("a"),
    lambda lib: lib.optim.SGD([("w", lib.ones(2, requires_grad=True)),
                               lib.ones(2, requires_grad=True)]),
    lambda lib: lib.optim.SGD([{"params": {lib.ones(2, requires_grad=True)}}]),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_match_torch(i):
    assert _error(ng, ERRORS[i]) == _error(torch, ERRORS[i])


def test_add_param_group_errors_and_duplicates():
    for lib in (ng, torch):
        a, b = lib.ones(2, requires_grad=True), lib.ones(3, requires_grad=True)
        opt = lib.optim.Adam([a], lr=0.1)
        with pytest.raises(ValueError, match="^some parameters appear in more than one "
                                             "parameter group$"):
            opt.add_param_group({"params": [b, a]})
        opt.add_param_group({"params": b, "lr": 0.5})
        assert opt.param_groups[1]["lr"] == 0.5 and opt.param_groups[1]["params"][0] is b
        assert opt.param_groups[1]["betas"] == (0.9, 0.999)
        with pytest.warns(UserWarning, match="duplicate parameters"):
            lib.optim.SGD([a, a])


def test_named_parameters_and_their_names_in_the_state_dict():
    ps = _leaves(ng, "float64")
    tps = _leaves(torch, "float64")
    opt = ng.optim.SGD([("w", ps[0]), ("b", ps[1])], lr=0.1)
    topt = torch.optim.SGD([("w", tps[0]), ("b", tps[1])], lr=0.1)
    assert opt.state_dict() == topt.state_dict()
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["w", "b"]


@pytest.mark.parametrize("cls", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta"])
def test_repr_matches_torch(cls):
    def build(lib):
        a, b = lib.ones(2, requires_grad=True), lib.ones(3, requires_grad=True)
        opt = getattr(lib.optim, cls)([{"params": [a]}, {"params": [b], "lr": 0.5}])
        return repr(opt)

    assert build(ng) == build(torch)


def test_a_custom_optimizer_written_against_the_base_class():
    def make(lib):
        class Sign(lib.optim.Optimizer):
            def __init__(self, params, lr=0.1):
                super().__init__(params, dict(lr=lr))

            @lib.no_grad()
            def step(self, closure=None):
                for group in self.param_groups:
                    for p in group["params"]:
                        if p.grad is not None:
                            self.state[p]["n"] = self.state[p].get("n", 0) + 1
                            p.add_(p.grad.sign() * -group["lr"])

        return Sign

    results = []
    for lib in (ng, torch):
        ps = _leaves(lib, "float64")
        opt, _ = _run(lib, "SGD", {}, opt_and_params=(make(lib)(ps), ps), steps=3)
        results.append(([_np(p).tolist() for p in ps], opt.state_dict(), repr(opt)))
    assert results[0] == results[1]


@pytest.mark.parametrize("kw", [dict(lr=0.1), dict(lr=0.1, amsgrad=True, weight_decay=0.2),
                                dict(lr=0.1, weight_decay=0.1, decoupled_weight_decay=True)])
def test_adam_updates_a_transposed_parameter_and_counts_versions_as_pytorch(kw):
    """Adam's one update kernel (kernels_optim.adam_row) on a parameter that is not
    C-contiguous (a transposed leaf: updated through a contiguous copy, written back), with
    the version counters PyTorch's op-by-op update leaves."""
    v = np.random.default_rng(5).standard_normal((3, 4))
    results = []
    for lib in (ng, torch):
        p = lib.tensor(v, dtype=lib.float32).t().detach().requires_grad_()
        opt = lib.optim.Adam([p], **kw)
        for _ in range(3):
            opt.zero_grad()
            (p * p * lib.arange(12.0).reshape(4, 3)).sum().backward()
            opt.step()
        st = opt.state[p]
        results.append((_np(p), p.stride(), p._version, st["exp_avg"]._version,
                        st["exp_avg_sq"]._version, _np(st["exp_avg_sq"])))
    (a, sa, *va, qa), (b, sb, *vb, qb) = results
    np.testing.assert_allclose(a, b, **TOL["float32"])
    np.testing.assert_allclose(qa, qb, **TOL["float32"])
    assert sa == sb == (1, 4) and va == vb


def test_adam_on_a_parameter_large_enough_for_threads_agrees_with_pytorch():
    v = np.random.default_rng(6).standard_normal(300_001).astype(np.float32)
    results = []
    for lib in (ng, torch):
        p = lib.tensor(v, requires_grad=True)
        opt = lib.optim.AdamW([p], lr=0.01)
        for _ in range(2):
            opt.zero_grad()
            (p * p).sum().backward()
            opt.step()
        results.append(_np(p))
    np.testing.assert_allclose(results[0], results[1], **TOL["float32"])


KERNEL_CASES = [
    ("SGD", dict(lr=0.05)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.2, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, maximize=True)),
    ("RMSprop", dict(lr=0.01, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True, alpha=0.3)),  # lerp's weight >= 0.5
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, maximize=True)),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1)),
    ("Adamax", dict(lr=0.1, weight_decay=0.1)),
    ("NAdam", dict(lr=0.1, weight_decay=0.1, decoupled_weight_decay=True)),
    ("NAdam", dict(lr=0.1, weight_decay=0.1, maximize=True)),
    ("RAdam", dict(lr=0.1, weight_decay=0.1)),  # both branches (rho_t > 5 from step 6)
    ("RAdam", dict(lr=0.1, weight_decay=0.1, decoupled_weight_decay=True)),
    ("ASGD", dict(lr=0.05, t0=3, weight_decay=0.1)),
    ("Rprop", dict(lr=0.01, maximize=True)),
    ("Adam", dict(lr=0.1, weight_decay=0.1, amsgrad=True)),
]


@pytest.mark.parametrize("cls,kw", KERNEL_CASES,
                         ids=[f"{c}-{i}" for i, (c, _) in enumerate(KERNEL_CASES)])
def test_update_kernels_match_torch_float32_with_its_version_counts(cls, kw):
    """Each optimizer's one update kernel (kernels_optim) against PyTorch's single-tensor
    CPU update: float32 parameters and state after eight steps on random gradients (a
    parameter laid out by columns among them; gradients of both signs and some zeros, for
    Rprop's sign changes), and the version counters PyTorch's in-place ops leave. (Not bit for
    bit: PyTorch's vectorized ``a + alpha * b`` is a fused multiply-add.)"""
    rng = np.random.default_rng(11)
    shapes = [(40, 30), (30,), (6, 5)]
    values = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [[np.where(rng.random(s) < 0.1, 0, rng.standard_normal(s)).astype(np.float32)
              for s in shapes] for _ in range(8)]
    results = []
    for lib in (ng, torch):
        ps = [lib.tensor(values[0]), lib.tensor(values[1]),
              lib.tensor(values[2].T.copy()).t()]  # (the last one by columns)
        ps = [p.detach().requires_grad_() for p in ps]
        opt = getattr(lib.optim, cls)(ps, **kw)
        for step in grads:
            for p, g in zip(ps, step):
                p.grad = lib.tensor(g)
            opt.step()
        state = [{k: (_np(v), v._version) for k, v in opt.state[p].items()
                  if k != "step" and v.dim() > 0} for p in ps]
        results.append(([(_np(p), p._version) for p in ps], state))
    tol = dict(rtol=1e-5, atol=1e-6)
    for (a, va), (b, vb) in zip(results[0][0], results[1][0]):
        np.testing.assert_allclose(a, b, **tol)
        assert va == vb
    for sa, sb in zip(results[0][1], results[1][1]):
        assert sa.keys() == sb.keys()
        for k in sa:
            np.testing.assert_allclose(sa[k][0], sb[k][0], **tol, err_msg=k)
            assert sa[k][1] == sb[k][1], k
