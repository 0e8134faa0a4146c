"""optim.LBFGS against PyTorch's: the parameters it reaches, the losses ``step`` returns, the
closure's evaluations and the state it keeps (a saved state goes on alike), on Rosenbrock's
function, a least-squares fit and a tiny MLP, with a fixed step and the strong-Wolfe line
search; and its errors."""

from __future__ import annotations

import io

import numpy as np
import pytest

import numbagrad as ng
from devices import on_cuda

torch = pytest.importorskip("torch")

_RNG = np.random.default_rng(0)
_A, _B = _RNG.normal(size=(12, 3)), _RNG.normal(size=(12, 2))  # least squares: A W + c ~ B
_X, _Y = _RNG.normal(size=(8, 3)), _RNG.normal(size=(8, 1))  # the MLP's batch
_MLP = [_RNG.normal(size=(4, 3)) * 0.5, _RNG.normal(size=4) * 0.1,
        _RNG.normal(size=(1, 4)) * 0.5, _RNG.normal(size=1) * 0.1]


def _problem(L, name, dtype, device=None):
    """(parameters, loss) of a problem, built alike in numbagrad and PyTorch."""
    dt = getattr(L, dtype)

    def const(a):
        return L.tensor(a, dtype=dt, device=device)

    def param(a):
        return L.tensor(a, dtype=dt, device=device, requires_grad=True)

    if name == "rosenbrock":  # the extended (chained) valley in 4 dimensions
        x = param([-1.2, 1.0, -0.5, 0.8])
        return [x], lambda: (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()
    if name == "lstsq":  # a 2-D parameter, a bias, and one the loss does not use (grad None)
        A, B = const(_A), const(_B)
        W, c, unused = param(np.zeros((3, 2))), param([0.5, -0.5]), param([1.0])
        return [W, c, unused], lambda: ((A @ W + c - B) ** 2).mean()
    X, Y = const(_X), const(_Y)
    w1, b1, w2, b2 = (param(a) for a in _MLP)
    return [w1, b1, w2, b2], lambda: (((X @ w1.T + b1).tanh() @ w2.T + b2 - Y) ** 2).mean()


def _run(L, name, dtype, steps, device=None, **kw):
    """Run ``steps`` steps: (losses step returned, closure evaluations per step, the
    parameters after, the optimizer)."""
    params, loss_fn = _problem(L, name, dtype, device)
    opt = L.optim.LBFGS(params, **kw)
    calls = [0]

    def closure():
        calls[0] += 1
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss

    losses, evals = [], []
    for _ in range(steps):
        calls[0] = 0
        losses.append(opt.step(closure).item())
        evals.append(calls[0])
    return losses, evals, [p.detach().cpu().numpy().copy() for p in params], opt


def _value(v):
    """A state value for comparison: a tensor as (kind, dtype name, array), a list item by
    item, a number as ("number", float)."""
    if isinstance(v, (ng.Tensor, torch.Tensor)):
        return "tensor", str(v.dtype).split(".")[-1], v.detach().cpu().numpy()
    if isinstance(v, list):
        return [_value(x) for x in v]
    if v is None:
        return None
    return "number", float(v)


def _assert_close(a, b, tol):
    if isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _assert_close(x, y, tol)
    elif a is None:
        assert b is None
    else:
        assert a[:-1] == b[:-1]  # a tensor where PyTorch keeps one, of its dtype
        # (relative to the largest entry: near a minimum the state holds differences of nearly
        # equal gradients, whose small entries carry the libraries' rounding differences)
        np.testing.assert_allclose(a[-1], b[-1], rtol=0, atol=tol * np.abs(b[-1]).max())


def _assert_same_state(state, ref_state, tol):
    assert list(state) == list(ref_state)  # the same keys, set in the same order
    for key in ref_state:
        if key in ("func_evals", "n_iter"):
            assert state[key] == ref_state[key], key
        else:
            _assert_close(_value(state[key]), _value(ref_state[key]), tol)


def _assert_matches(mine, ref, tol, state_tol):
    np.testing.assert_allclose(mine[0], ref[0], rtol=tol, atol=tol)
    assert mine[1] == ref[1]  # the closure's evaluations, step by step
    for a, b in zip(mine[2], ref[2]):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    _assert_same_state(mine[3].state_dict()["state"][0], ref[3].state_dict()["state"][0],
                       state_tol)


CASES = [
    ("rosenbrock", dict(max_iter=10)),
    ("rosenbrock", dict(line_search_fn="strong_wolfe")),
    ("rosenbrock", dict(lr=0.5, max_iter=7, history_size=2)),
    ("rosenbrock", dict(line_search_fn="strong_wolfe", history_size=3, max_eval=30)),
    ("lstsq", dict()),
    ("lstsq", dict(line_search_fn="strong_wolfe", tolerance_change=1e-12)),
    ("mlp", dict(lr=0.8, max_iter=8, history_size=4)),
    ("mlp", dict(line_search_fn="strong_wolfe", max_iter=10, history_size=5)),
]
# (over many iterations the libraries' last-bit differences in the losses and gradients grow:
# Rosenbrock with 20 fixed steps a call ends 1e-8 apart in float64 after three calls, and in
# float32 a long search ends 1e-4 apart; these runs stay short enough to agree closely)
CASES_32 = [
    ("rosenbrock", dict(max_iter=10)),
    ("rosenbrock", dict(line_search_fn="strong_wolfe", max_iter=6)),
    ("lstsq", dict(line_search_fn="strong_wolfe", max_iter=4)),
    ("mlp", dict(lr=0.8, max_iter=8, history_size=4)),
    ("mlp", dict(line_search_fn="strong_wolfe", max_iter=4, history_size=5)),
]


def _ids(cases):
    return [f"{name}-{i}" for i, (name, _) in enumerate(cases)]


@pytest.mark.parametrize("name,kw", CASES, ids=_ids(CASES))
def test_float64_matches_pytorch(name, kw):
    mine = _run(ng, name, "float64", 3, **kw)
    ref = _run(torch, name, "float64", 3, **kw)
    _assert_matches(mine, ref, 1e-12, 1e-6)


@pytest.mark.parametrize("name,kw", CASES_32, ids=_ids(CASES_32))
def test_float32_matches_pytorch(name, kw):
    mine = _run(ng, name, "float32", 1, **kw)
    ref = _run(torch, name, "float32", 1, **kw)
    _assert_matches(mine, ref, 1e-6, 1e-3)


@pytest.mark.parametrize("kw", [dict(max_iter=4), dict(max_iter=1, history_size=2),
                                dict(line_search_fn="strong_wolfe", max_iter=3)])
def test_a_saved_state_goes_on_alike(kw):
    # two steps, the state saved and loaded into a fresh optimizer (through ng.save), then two
    # more: the same as four steps without the break, and as PyTorch's four
    first = _run(ng, "rosenbrock", "float64", 2, **kw)
    buf = io.BytesIO()
    ng.save(first[3].state_dict(), buf)
    buf.seek(0)
    x = ng.tensor(first[2][0], requires_grad=True)
    opt = ng.optim.LBFGS([x], **kw)
    opt.load_state_dict(ng.load(buf))

    def closure():
        opt.zero_grad()
        loss = (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()
        loss.backward()
        return loss

    resumed = [opt.step(closure).item() for _ in range(2)]
    whole = _run(ng, "rosenbrock", "float64", 4, **kw)
    ref = _run(torch, "rosenbrock", "float64", 4, **kw)
    assert first[0] + resumed == whole[0]
    np.testing.assert_array_equal(x.detach().numpy(), whole[2][0])
    np.testing.assert_allclose(whole[0], ref[0], rtol=1e-12)
    _assert_same_state(opt.state_dict()["state"][0], whole[3].state_dict()["state"][0], 0)
    _assert_same_state(opt.state_dict()["state"][0], ref[3].state_dict()["state"][0], 1e-6)


@pytest.mark.parametrize("kw", [
    dict(line_search_fn="strong_wolfe", max_eval=1),  # the line search has one evaluation
    dict(line_search_fn="strong_wolfe", max_eval=3, max_iter=5),  # it runs out mid-search
    dict(max_iter=0),  # no iteration: the state holds Nones
    dict(tolerance_change=10.0),  # the first step's change already counts as none
    dict(lr=ng.tensor(0.5, dtype=ng.float64)),  # a tensor lr: t is a tensor
    dict(lr=ng.tensor([0.5], dtype=ng.float64), line_search_fn="strong_wolfe"),
])
def test_corner_cases_match_pytorch(kw):
    ref_kw = {k: torch.tensor(v.tolist(), dtype=torch.float64) if isinstance(v, ng.Tensor)
              else v for k, v in kw.items()}
    mine = _run(ng, "lstsq", "float64", 2, **kw)
    ref = _run(torch, "lstsq", "float64", 2, **ref_kw)
    _assert_matches(mine, ref, 1e-12, 1e-6)


def test_a_stationary_start_returns_after_one_evaluation():
    for L in (ng, torch):
        x = L.zeros(3, dtype=L.float64, requires_grad=True)
        opt = L.optim.LBFGS([x], line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = (x ** 2).sum() + 2.0
            loss.backward()
            return loss

        assert opt.step(closure).item() == 2.0
        assert dict(opt.state[x]) == {"func_evals": 1, "n_iter": 0}
        assert x.tolist() == [0.0, 0.0, 0.0]


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


def test_constructor_defaults_and_errors_match_pytorch():
    def make(L, *groups, **kw):
        return L.optim.LBFGS(list(groups) or [L.ones(1, requires_grad=True)], **kw)

    assert repr(make(ng)) == repr(make(torch))
    assert make(ng).defaults == make(torch).defaults
    assert make(ng, max_iter=9).defaults["max_eval"] == 11
    for L in (ng, torch):
        assert _error(lambda: make(L, lr=-0.5)) == (ValueError, "Invalid learning rate: -0.5")
        assert _error(lambda: make(L, lr=L.ones(2))) == (ValueError,
                                                         "Tensor lr must be 1-element")
    assert _error(lambda: make(ng, {"params": [ng.ones(1, requires_grad=True)]},
                               {"params": [ng.ones(1, requires_grad=True)]})) == _error(
        lambda: make(torch, {"params": [torch.ones(1, requires_grad=True)]},
                     {"params": [torch.ones(1, requires_grad=True)]}))


def test_step_errors_match_pytorch():
    for L in (ng, torch):
        x = L.ones(2, requires_grad=True)
        opt = L.optim.LBFGS([x], line_search_fn="backtracking")

        def closure():
            opt.zero_grad()
            loss = (x * x).sum()
            loss.backward()
            return loss

        # (raised where the first line search would start: the closure ran once)
        assert _error(lambda: opt.step(closure)) == (RuntimeError,
                                                     "only 'strong_wolfe' is supported")
        assert (opt.state[x]["func_evals"], opt.state[x]["n_iter"]) == (1, 1)
        assert _error(lambda: opt.step()) == (
            TypeError, "LBFGS.step() missing 1 required positional argument: 'closure'")


@on_cuda
def test_cuda_matches_pytorch():
    kw = dict(line_search_fn="strong_wolfe", max_iter=4)
    mine = _run(ng, "lstsq", "float64", 1, device="cuda", **kw)
    ref = _run(torch, "lstsq", "float64", 1, **kw)
    assert mine[3].state[mine[3]._params[0]]["d"].device.type == "cuda"
    np.testing.assert_allclose(mine[0], ref[0], rtol=1e-12)
    assert mine[1] == ref[1]
    for a, b in zip(mine[2], ref[2]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- the line search's branches

# Shapes along the search line that take the strong-Wolfe search through its branches:
# extrapolation, a bracket from a rise or from a positive slope, the zoom's both updates, its
# safeguard, a cubic with no minimum (double wells), a bracket shrunk to nothing (the kink), an
# exhausted budget (the tiny lr), and a trial higher than the one before it but still
# descending (the bump: from 0 the search tries 1, then 10 on the bump's side, and goes on,
# since that test starts at the third trial). Each is (loss, starting point).
_SHAPES = {
    "double_wells": (lambda x: (x ** 4 - 3 * x ** 2 + x).sum(), [-1.3, 0.4, 2.1]),
    "power_1.5": (lambda x: ((x - 0.7).abs() ** 1.5).sum(), [-1.3, 0.4, 2.1]),
    "kink": (lambda x: (x - 1).abs().sum() + 0.1 * (x ** 2).sum(), [-1.3, 0.4, 2.1]),
    "exp": (lambda x: (x.exp() - 2 * x).sum(), [-1.3, 0.4, 2.1]),
    "log_cosh": (lambda x: (3 * x).cosh().log().sum(), [-1.3, 0.4, 2.1]),
    "sines": (lambda x: (x.sin() * 2 + 0.1 * x ** 2).sum(), [-1.3, 0.4, 2.1]),
    "bump": (lambda x: (0.001 * x ** 2 - x + 9.8 * (-(x - 9.8) ** 2).exp()).sum(), [0.0]),
}


def _search_run(L, shape, lr):
    loss_fn, start = _SHAPES[shape]
    x = L.tensor(start, dtype=L.float64, requires_grad=True)
    opt = L.optim.LBFGS([x], lr=lr, line_search_fn="strong_wolfe")
    calls = [0]

    def closure():
        calls[0] += 1
        opt.zero_grad()
        loss = loss_fn(x)
        loss.backward()
        return loss

    losses = [opt.step(closure).item() for _ in range(2)]
    return losses, calls[0], x.detach().numpy().copy(), opt.state[x]["t"]


@pytest.mark.parametrize("shape", list(_SHAPES))
def test_line_search_branches_match_pytorch(shape):
    for lr in (1e-3, 0.3, 1.0, 5.0, 100.0):
        mine, ref = _search_run(ng, shape, lr), _search_run(torch, shape, lr)
        np.testing.assert_allclose(mine[0], ref[0], rtol=1e-12, atol=1e-12)
        assert mine[1] == ref[1], lr
        np.testing.assert_allclose(mine[2], ref[2], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(float(mine[3]), float(ref[3]), rtol=1e-12, atol=1e-12)
