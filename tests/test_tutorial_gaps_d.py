"""What the tutorial programs of tests/programs_d needed and numbagrad lacked, each checked
against PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn"])
def test_factory_size_keyword(name):
    # d2l traces shapes with torch.rand(size=(1, 1, 96, 96))
    mine, ref = getattr(ng, name), getattr(torch, name)
    for size in ((2, 3), [4], ()):
        t = mine(size=size, dtype=ng.float64)
        assert tuple(t.shape) == tuple(ref(size=size).shape) and t.dtype == ng.float64
    if name in ("zeros", "ones"):
        assert mine(size=(2,)).tolist() == ref(size=(2,)).tolist()
    both = _error(lambda: mine(2, size=(3,))), _error(lambda: ref(2, size=(3,)))
    # (rand and randn list their overloads in the message, which numbagrad does not)
    assert both[0] == both[1] if name in ("zeros", "ones", "empty") else both[0][0] is TypeError
    assert _error(lambda: mine(size=3)) == _error(lambda: ref(size=3))
    if name in ("zeros", "ones", "empty"):
        assert _error(lambda: mine()) == _error(lambda: ref())


# ---------------------------------------------------------------- F.interpolate's other modes

_rng = np.random.default_rng(0)
_X = {3: _rng.standard_normal((2, 3, 5)), 4: _rng.standard_normal((2, 3, 4, 5)),
      5: _rng.standard_normal((1, 2, 3, 4, 5))}
INTERPOLATE = [
    (4, dict(size=(6, 7), mode="bicubic")), (4, dict(scale_factor=1.7, mode="bicubic")),
    (4, dict(size=(3, 9), mode="bicubic", align_corners=True)),
    (4, dict(scale_factor=0.5, mode="bicubic")), (4, dict(size=1, mode="bicubic")),
    (4, dict(scale_factor=(2, 1.3), mode="bicubic", recompute_scale_factor=True)),
    (5, dict(size=(4, 5, 6), mode="trilinear")),
    (5, dict(scale_factor=1.5, mode="trilinear", align_corners=True)),
    (5, dict(scale_factor=(0.5, 1.5, 2), mode="trilinear")),
    (3, dict(size=7, mode="nearest-exact")), (4, dict(scale_factor=1.5, mode="nearest-exact")),
    (4, dict(size=(7, 3), mode="nearest-exact")), (5, dict(size=(2, 3, 7), mode="nearest-exact")),
    (3, dict(size=3, mode="area")), (4, dict(scale_factor=0.6, mode="area")),
    (4, dict(size=(7, 2), mode="area")), (5, dict(size=(2, 2, 3), mode="area")),
    (5, dict(scale_factor=2)), (5, dict(size=(2, 5, 3))),
    # a scale_factor that leaves a size as it was (or doubles it) is used as given, except
    # by PyTorch's 2-d nearest kernel
    (3, dict(scale_factor=1.2)), (4, dict(scale_factor=(1.2, 2.2))), (5, dict(scale_factor=1.2)),
    (3, dict(scale_factor=2.2, mode="nearest-exact")),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("k", range(len(INTERPOLATE)))
def test_interpolate_modes_match_pytorch(k, dtype):
    ndim, kw = INTERPOLATE[k]
    x = _X[ndim].astype(dtype)
    xt, xn = torch.tensor(x, requires_grad=True), ng.tensor(x, requires_grad=True)
    yt = torch.nn.functional.interpolate(xt, **kw)
    yn = ng.nn.functional.interpolate(xn, **kw)
    assert tuple(yn.shape) == tuple(yt.shape) and yn.dtype.name == dtype and yn.is_contiguous()
    tol = 1e-12 if dtype == "float64" else 1e-5
    np.testing.assert_allclose(yn.detach().numpy(), yt.detach().numpy(), rtol=tol, atol=tol)
    if ndim == 5 and kw.get("mode", "nearest") == "nearest" and 1.2 in kw.values():
        # PyTorch's 3-d nearest backward reads a size kept as-is one to one, which its
        # forward (and numbagrad's, the true gradient) does not: its gradient is not its
        # forward's transpose there
        return
    w = _rng.standard_normal(tuple(yt.shape)).astype(dtype)
    (yt * torch.tensor(w)).sum().backward()
    (yn * ng.tensor(w)).sum().backward()
    np.testing.assert_allclose(xn.grad.numpy(), xt.grad.numpy(), rtol=tol, atol=tol)
    if kw.get("mode") == "area":
        assert yn.grad_fn.name() == yt.grad_fn.name()


def test_upsample_bicubic_module():
    for kw in (dict(scale_factor=2, mode="bicubic"), dict(size=(3, 4, 5), mode="trilinear"),
               dict(scale_factor=1.5, mode="nearest-exact")):
        x = _X[5 if kw["mode"] == "trilinear" else 4]
        ours, theirs = ng.nn.Upsample(**kw), torch.nn.Upsample(**kw)
        assert repr(ours) == repr(theirs)
        np.testing.assert_allclose(ours(ng.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy(),
                                   rtol=1e-12, atol=1e-12)


INTERPOLATE_ERRORS = {
    "bicubic_3d": (3, dict(size=3, mode="bicubic")),
    "bicubic_5d": (5, dict(size=3, mode="bicubic")),
    "trilinear_4d": (4, dict(size=3, mode="trilinear")),
    "bilinear_5d": (5, dict(size=3, mode="bilinear")),
    "linear_5d": (5, dict(size=3, mode="linear")),
    "area_align": (4, dict(size=3, mode="area", align_corners=True)),
    "exact_align": (3, dict(size=3, mode="nearest-exact", align_corners=False)),
    "antialias_nearest": (4, dict(size=3, antialias=True)),
    "antialias_bilinear_3d": (3, dict(size=3, mode="bilinear", antialias=True)),
    "recompute_with_size": (4, dict(size=3, mode="bicubic", recompute_scale_factor=True)),
    "lanczos_no_aa": (4, dict(size=3, mode="lanczos")),
    "lanczos_align": (4, dict(size=3, mode="lanczos", align_corners=True, antialias=True)),
    "lanczos_3d": (3, dict(size=3, mode="lanczos")),
    # the align_corners check comes before the mode's
    "align_before_mode": (3, dict(size=3, mode="area", align_corners=True)),
}


@pytest.mark.parametrize("case", list(INTERPOLATE_ERRORS))
def test_interpolate_mode_errors_match_pytorch(case):
    ndim, kw = INTERPOLATE_ERRORS[case]
    x = _X[ndim]
    ours = _error(lambda: ng.nn.functional.interpolate(ng.tensor(x), **kw))
    assert ours == _error(lambda: torch.nn.functional.interpolate(torch.tensor(x), **kw))


@pytest.mark.cuda
@pytest.mark.skipif(not ng.cuda.is_available(), reason="no CUDA device or simulator")
def test_cuda_interpolate_bicubic_trilinear():
    for ndim, kw in ((4, dict(scale_factor=2, mode="bicubic")),
                     (5, dict(size=(2, 3, 3), mode="trilinear")), (4, dict(size=3, mode="area"))):
        x = _X[ndim][:1, :1]
        xn = ng.tensor(x, device="cuda", requires_grad=True)
        xt = torch.tensor(x, requires_grad=True)
        yn = ng.nn.functional.interpolate(xn, **kw)
        yt = torch.nn.functional.interpolate(xt, **kw)
        assert yn.device.type == "cuda"
        np.testing.assert_allclose(yn.cpu().detach().numpy(), yt.detach().numpy(), rtol=1e-12)
        yn.pow(2).sum().backward()
        yt.pow(2).sum().backward()
        np.testing.assert_allclose(xn.grad.cpu().numpy(), xt.grad.numpy(), rtol=1e-10)


# ---------------------------------------------------------------- optim.LBFGS


def _lbfgs_run(L, dtype, steps=3, **kw):
    """LBFGS on a least-squares term plus Rosenbrock's valley: the losses ``step`` returns,
    the parameters after, and the optimizer."""
    rng = np.random.default_rng(0)
    X = L.tensor(rng.normal(size=(20, 3)).astype(dtype))
    y = L.tensor(rng.normal(size=20).astype(dtype))
    w = L.tensor(np.array([-1.5, 2.0, 0.5], dtype=dtype), requires_grad=True)
    b = L.tensor(np.array([0.3], dtype=dtype), requires_grad=True)
    opt = L.optim.LBFGS([w, b], **kw)

    def closure():
        opt.zero_grad()
        loss = ((X @ w + b - y) ** 2).mean() + (1 - w[0]) ** 2 + 10 * (w[1] - w[0] ** 2) ** 2
        loss.backward()
        return loss

    losses = [opt.step(closure).item() for _ in range(steps)]
    return losses, [w.detach().numpy().copy(), b.detach().numpy().copy()], opt


LBFGS_CASES = [dict(), dict(lr=0.5, history_size=2, max_iter=7),
               dict(line_search_fn="strong_wolfe"),
               dict(line_search_fn="strong_wolfe", lr=0.5, history_size=3, max_iter=6),
               dict(max_iter=4, max_eval=3, tolerance_grad=1e-3)]


@pytest.mark.parametrize("kw", LBFGS_CASES, ids=range(len(LBFGS_CASES)))
def test_lbfgs_matches_pytorch(kw):
    mine, ref = _lbfgs_run(ng, "float64", **kw), _lbfgs_run(torch, "float64", **kw)
    np.testing.assert_allclose(mine[0], ref[0], rtol=1e-10, atol=1e-12)
    for a, b in zip(mine[1], ref[1]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    state, ref_state = mine[2].state_dict()["state"][0], ref[2].state_dict()["state"][0]
    assert state.keys() == ref_state.keys()
    for key in ("func_evals", "n_iter"):
        assert state[key] == ref_state[key]
    assert len(state["old_dirs"]) == len(ref_state["old_dirs"])
    np.testing.assert_allclose(float(state["t"]), float(ref_state["t"]), rtol=1e-9)
    np.testing.assert_allclose(state["d"].numpy(), ref_state["d"].numpy(), rtol=1e-8, atol=1e-12)
    assert repr(mine[2]) == repr(ref[2])


def test_lbfgs_float32_and_resume():
    kw = dict(line_search_fn="strong_wolfe", max_iter=4)
    mine, ref = _lbfgs_run(ng, "float32", 1, **kw), _lbfgs_run(torch, "float32", 1, **kw)
    np.testing.assert_allclose(mine[0], ref[0], rtol=1e-5)
    np.testing.assert_allclose(mine[1][0], ref[1][0], rtol=1e-4, atol=1e-5)
    # the state carries over to the next step: a fresh optimizer loaded from it goes on alike
    saved = mine[2].state_dict()
    w, b = (ng.tensor(p, requires_grad=True) for p in mine[1])
    fresh = ng.optim.LBFGS([w, b], **kw)
    fresh.load_state_dict(saved)
    assert fresh.state[w]["n_iter"] == mine[2].state[mine[2]._params[0]]["n_iter"]


def test_lbfgs_errors_match_pytorch():
    def groups(L):
        return L.optim.LBFGS([{"params": [L.ones(1, requires_grad=True)]},
                              {"params": [L.ones(1, requires_grad=True)]}])

    assert _error(lambda: groups(ng)) == _error(lambda: groups(torch))
    for L in (ng, torch):
        assert _error(lambda: L.optim.LBFGS([L.ones(1, requires_grad=True)], lr=-1)) == (
            ValueError, "Invalid learning rate: -1")
    p = ng.ones(2, requires_grad=True)
    opt = ng.optim.LBFGS([p], line_search_fn="backtracking")

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    assert _error(lambda: opt.step(closure)) == (RuntimeError, "only 'strong_wolfe' is supported")
    assert _error(lambda: opt.step())[0] is TypeError


def test_float_of_requires_grad_tensor_warns_only_with_grad_mode_on():
    for L in (ng, torch):
        y = (L.ones(2, requires_grad=True) * 2).sum()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with L.no_grad():
                assert float(y) == 4.0


def test_tensor_from_any_python_sequence():
    # Tensor Puzzles builds everything from torch.tensor(range(i))
    import collections

    for data in (range(4), range(0), range(2, 9, 3), [range(2), range(2)],
                 collections.deque([1.5, 2])):
        mine, ref = ng.tensor(data), torch.tensor(data)
        assert mine.tolist() == ref.tolist() and str(mine.dtype) == str(ref.dtype).replace(
            "torch", "numbagrad")
    assert ng.tensor(range(3), dtype=ng.float64).dtype == ng.float64
    assert ng.as_tensor(range(3)).tolist() == [0, 1, 2]
    assert ng.ones(2).new_tensor(range(3)).dtype == ng.float32
    for bad in (object(), None, {1, 2}, "ab"):
        assert _error(lambda: ng.tensor(bad)) == _error(lambda: torch.tensor(bad))


# ---------------------------------------------------------------- optim.swa_utils


def _swa_run(L, dtype, **kw):
    """An AveragedModel over 4 perturbed copies of a small BatchNorm net: its state, and its
    BatchNorm statistics after update_bn."""
    rng = np.random.default_rng(1)
    net = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.BatchNorm1d(4), L.nn.Linear(4, 2)).to(
        getattr(L, dtype))
    with L.no_grad():
        for p in net.parameters():
            p.copy_(L.tensor(rng.normal(size=tuple(p.shape)).astype(dtype)))
    avg = L.optim.swa_utils.AveragedModel(net, **kw)
    x = L.tensor(rng.normal(size=(6, 3)).astype(dtype))
    for step in range(4):
        with L.no_grad():
            for p in net.parameters():
                p.add_(L.tensor(rng.normal(size=tuple(p.shape)).astype(dtype)))
        net.train()
        net(x * (step + 1))  # the buffers move too
        avg.update_parameters(net)
    state = {k: v.double().numpy() for k, v in avg.state_dict().items()}
    loader = [(x[:3], None), (x[3:], None)]
    L.optim.swa_utils.update_bn(loader, avg)
    return state, avg.module[1].running_var.double().numpy(), avg.module[1].momentum


SWA_CASES = {
    "swa": lambda L: {},
    "swa_buffers": lambda L: dict(use_buffers=True),
    "ema_multi": lambda L: dict(multi_avg_fn=L.optim.swa_utils.get_ema_multi_avg_fn(0.8),
                                use_buffers=True),
    "ema_fn": lambda L: dict(avg_fn=L.optim.swa_utils.get_ema_avg_fn(0.7)),
    "swa_multi": lambda L: dict(multi_avg_fn=L.optim.swa_utils.get_swa_multi_avg_fn()),
    "swa_fn": lambda L: dict(avg_fn=L.optim.swa_utils.get_swa_avg_fn()),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", list(SWA_CASES))
def test_averaged_model_matches_pytorch(case, dtype):
    mine = _swa_run(ng, dtype, **SWA_CASES[case](ng))
    ref = _swa_run(torch, dtype, **SWA_CASES[case](torch))
    assert mine[0].keys() == ref[0].keys()
    tol = 1e-12 if dtype == "float64" else 1e-5
    for k in ref[0]:
        np.testing.assert_allclose(mine[0][k], ref[0][k], rtol=tol, atol=tol, err_msg=k)
    np.testing.assert_allclose(mine[1], ref[1], rtol=tol, atol=tol)
    assert mine[2] == ref[2] == 0.1


@pytest.mark.parametrize("kw", [dict(swa_lr=0.05), dict(swa_lr=[0.05, 0.2], anneal_epochs=3),
                                dict(swa_lr=0.01, anneal_epochs=0, anneal_strategy="linear"),
                                dict(swa_lr=0.3, anneal_epochs=4, anneal_strategy="linear")])
def test_swalr_matches_pytorch(kw):
    lrs = []
    for L in (ng, torch):
        p, q = L.ones(2, requires_grad=True), L.ones(1, requires_grad=True)
        opt = L.optim.SGD([{"params": [p]}, {"params": [q], "lr": 0.5}], lr=1.0)
        sched = L.optim.swa_utils.SWALR(opt, **kw)
        out = [sched.get_last_lr()]
        for _ in range(6):
            opt.step()
            sched.step()
            out.append(sched.get_last_lr())
        state = sched.state_dict()
        assert "anneal_func" not in state and "optimizer" not in state
        lrs.append(out)
    np.testing.assert_allclose(lrs[0], lrs[1], rtol=1e-12)


def test_swa_utils_errors_match_pytorch():
    def cases(L):
        opt = L.optim.SGD([L.ones(1, requires_grad=True)], lr=1.0)
        u = L.optim.swa_utils
        return [lambda: u.get_ema_avg_fn(1.5), lambda: u.get_ema_multi_avg_fn(-0.1),
                lambda: u.SWALR(opt, 0.1, anneal_strategy="exp"),
                lambda: u.SWALR(opt, 0.1, anneal_epochs=-1),
                lambda: u.SWALR(opt, [0.1, 0.2]),
                lambda: u.AveragedModel(L.nn.Linear(1, 1), avg_fn=u.get_swa_avg_fn(),
                                        multi_avg_fn=u.get_swa_multi_avg_fn())]

    for mine, ref in zip(cases(ng), cases(torch)):
        assert _error(mine) == _error(ref)


# ---------------------------------------------------------------- testing.assert_close


def _assert_close_cases(L):
    T, t = L.testing.assert_close, L.tensor
    return [
        lambda: T(t([1., 2., 3.]), t([1., 2.1, 3.])),
        lambda: T(t([1., 2., 3.], dtype=L.float64), t([1., 2., 3.])),
        lambda: T(t([1, 2]), t([1, 3])),
        lambda: T(L.ones(2, 3), L.ones(3, 2)),
        lambda: T(1.0, 1.1), lambda: T(1, 2), lambda: T(1.0, 1),
        lambda: T(1.0, 1, check_dtype=False),
        lambda: T([L.ones(2), L.zeros(2)], [L.ones(2), L.ones(2)]),
        lambda: T({"a": L.ones(2)}, {"a": L.zeros(2)}),
        lambda: T({"a": 1}, {"b": 1, "a": 1}),
        lambda: T(t([float("nan")]), t([float("nan")])),
        lambda: T(t([float("nan")]), t([float("nan")]), equal_nan=True),
        lambda: T(t([True, False]), t([True, True])),
        lambda: T(np.ones(2), np.ones(2) * 2),
        lambda: T(L.ones(2, 2), t([[1., 1.], [1., 1.5]]), msg="custom"),
        lambda: T(L.ones(2, 2), t([[1., 1.], [1., 1.5]]), msg=lambda m: "H\n" + m),
        lambda: T(t([1.]), t([1.]), rtol=1e-3), lambda: T(t([1.]), t([1.]), atol=1e-3),
        lambda: T([1, 2], [1, 2, 3]),
        lambda: T(t(1.), t(2.)), lambda: T(t(float("nan")), t(float("nan"))),
        lambda: T(t([1., 2.]), t([1., 2. + 1e-6])),
        lambda: T(t([[1., 2.], [3., 4.]]), t([[1., 2.], [3., 5.]])),
        lambda: T(t([0.]), t([1e-6])), lambda: T(t([0.]), t([1.]), atol=0, rtol=0),
        lambda: T(L.ones(2, requires_grad=True), L.ones(2)),
        lambda: T("a", "a"), lambda: T(None, None), lambda: T(None, 1),
        lambda: T(True, False), lambda: T(True, 1),
        lambda: T(L.ones(2), L.ones(2) * 1.1, check_dtype=False, rtol=0.2, atol=0),
        lambda: T(t([1, 2], dtype=L.int32), t([1, 2])),
        lambda: T(t([1, 2], dtype=L.int32), t([1, 3]), check_dtype=False),
        lambda: T(L.ones(3, 4).t(), L.ones(4, 3), check_stride=True),
        lambda: T((t([1.]), {"x": [t([2.]), 3]}), (t([1.]), {"x": [t([2.]), 4]})),
        lambda: T(np.float32(1.0), 1.0), lambda: T(np.int64(3), 3),
        lambda: T(t([0., 1.]), t([1., 0.])),
        lambda: T(t([[1, 2], [3, 4]], dtype=L.uint8), t([[1, 2], [3, 9]], dtype=L.uint8)),
        lambda: T(t([1.5, 2.5], dtype=L.float64), t([1.5, 2.5000001], dtype=L.float64)),
    ]


def _outcome(fn):
    try:
        fn()
    except Exception as e:  # (the class of a tensor prints with its own module)
        text = str(e).replace("numbagrad._tensor.Tensor", "torch.Tensor")
        return type(e), text.replace("numbagrad.", "torch.")
    return None


@pytest.mark.parametrize("k", range(len(_assert_close_cases(ng))))
def test_assert_close_matches_pytorch(k):
    assert _outcome(_assert_close_cases(ng)[k]) == _outcome(_assert_close_cases(torch)[k])


@pytest.mark.cuda
@pytest.mark.skipif(not ng.cuda.is_available(), reason="no CUDA device or simulator")
def test_assert_close_devices():
    x = ng.ones(3, device="cuda")
    assert _outcome(lambda: ng.testing.assert_close(x, ng.ones(3))) == (
        AssertionError, "The values for attribute 'device' do not match: cuda:0 != cpu.")
    ng.testing.assert_close(x, ng.ones(3), check_device=False)
    assert _outcome(lambda: ng.testing.assert_close(x, ng.zeros(3, device="cuda")))[1].startswith(
        "Tensor-likes are not close!\n\nMismatched elements: 3 / 3 (100.0%)")


# ---------------------------------------------------------------- utils.checkpoint


def _checkpoint_run(L, dtype, use_reentrant, sequential=False):
    rng = np.random.default_rng(0)
    net = L.nn.Sequential(L.nn.Linear(4, 5), L.nn.Tanh(), L.nn.Linear(5, 5), L.nn.GELU(),
                          L.nn.Linear(5, 3)).to(getattr(L, dtype))
    with L.no_grad():
        for p in net.parameters():
            p.copy_(L.tensor(rng.normal(size=tuple(p.shape)).astype(dtype)))
    x = L.tensor(rng.normal(size=(2, 4)).astype(dtype), requires_grad=True)
    if sequential:
        out = L.utils.checkpoint.checkpoint_sequential(net, 2, x, use_reentrant=use_reentrant)
    else:
        def block(x, scale):
            return net(x) * scale, x.sum()

        out, s = L.utils.checkpoint.checkpoint(block, x, 2.0, use_reentrant=use_reentrant)
        out = out + s
    (out ** 2).sum().backward()
    return (out.grad_fn.name(), out.detach().numpy(), x.grad.numpy(),
            [p.grad.numpy() for p in net.parameters()])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("use_reentrant", [True, False])
@pytest.mark.parametrize("sequential", [False, True])
def test_checkpoint_matches_pytorch(use_reentrant, dtype, sequential):
    mine = _checkpoint_run(ng, dtype, use_reentrant, sequential)
    ref = _checkpoint_run(torch, dtype, use_reentrant, sequential)
    assert mine[0] == ref[0]
    tol = 1e-12 if dtype == "float64" else 1e-5
    for a, b in zip(mine[1:3] + tuple(mine[3]), ref[1:3] + tuple(ref[3])):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def test_checkpoint_recomputes_the_same_dropout():
    """The recomputation draws the forward's random numbers (preserve_rng_state): gradients
    as without checkpointing."""
    grads = []
    for use_checkpoint in (False, True):
        ng.manual_seed(0)
        w = ng.ones(50, requires_grad=True)

        def f(x):
            return ng.nn.functional.dropout(x * w, 0.5)

        x = ng.arange(50.0)
        y = ng.utils.checkpoint.checkpoint(f, x.requires_grad_(), use_reentrant=True) \
            if use_checkpoint else f(x)
        ng.rand(3)  # a draw between the forward and the backward
        y.sum().backward()
        grads.append(w.grad.numpy().copy())
    np.testing.assert_array_equal(grads[0], grads[1])
    assert 5 < (grads[1] == 0).sum() < 45


def test_checkpoint_warnings_and_errors_match_pytorch():
    for L in (ng, torch):
        x = L.ones(2, requires_grad=True)
        with pytest.warns(UserWarning, match="use_reentrant parameter should be passed"):
            L.utils.checkpoint.checkpoint(lambda t: t * 2, x)
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
            L.utils.checkpoint.checkpoint(lambda t: t * 2, L.ones(2), use_reentrant=True)
    for call in (lambda L: L.utils.checkpoint.checkpoint(lambda t: t, L.ones(1), use_reentrant=True,
                                                         extra=1),
                 lambda L: L.utils.checkpoint.checkpoint(lambda t: t, L.ones(1), use_reentrant=True,
                                                         debug=True),
                 lambda L: L.utils.checkpoint.checkpoint_sequential([lambda t: t], 1, L.ones(1),
                                                                    use_reentrant=True, extra=1)):
        assert _error(lambda: call(ng)) == _error(lambda: call(torch))
    # the function's own keyword arguments go through without reentrance
    y = ng.utils.checkpoint.checkpoint(lambda t, k: t * k, ng.ones(2, requires_grad=True),
                                       k=3.0, use_reentrant=False)
    assert y.tolist() == [3.0, 3.0] and y.grad_fn.name() == "MulBackward0"
