"""``nn.utils.spectral_norm`` (the hook version and ``parametrizations.spectral_norm``),
``func.stack_module_state`` with ``vmap`` over ``functional_call`` (model ensembling),
``nn.ChannelShuffle``, ``nn.TripletMarginWithDistanceLoss`` and
``nn.AdaptiveLogSoftmaxWithLoss``, against PyTorch run side by side: values, gradients,
state_dict keys, reprs and errors. The random start of spectral norm's power iteration is
drawn from each library's generator, so PyTorch's module is given numbagrad's vectors."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64"]
TOL = {"float32": dict(rtol=2e-5, atol=2e-6), "float64": dict(rtol=1e-10, atol=1e-12)}
RNG = np.random.default_rng(0)


def _np(t):
    return t.detach().cpu().numpy()


def _set(lib, module, seed=0):
    """Every parameter of ``module`` to the same values in both libraries."""
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for p in module.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape))))
    return module


def _error(lib, fn):
    with pytest.raises(Exception) as e:
        fn(lib)
    return type(e.value), str(e.value).replace("torch.", "numbagrad.")


# -- spectral_norm (forward pre-hook) -------------------------------------------------------------

LAYERS = [
    (lambda lib: lib.nn.Linear(4, 3), (2, 4), {}),
    (lambda lib: lib.nn.Conv1d(3, 4, 2), (2, 3, 5), dict(n_power_iterations=3)),
    (lambda lib: lib.nn.ConvTranspose1d(3, 2, 2), (2, 3, 4), {}),  # (dim 1 by default)
    (lambda lib: lib.nn.Conv2d(2, 3, 2), (1, 2, 3, 3), dict(dim=2, eps=1e-6)),
]


def _spectral_run(lib, make, shape, kw, dtype, uv=None):
    m = _set(lib, make(lib).to(getattr(lib, dtype)))
    lib.nn.utils.spectral_norm(m, **kw)
    before = (type(m.weight).__name__, _np(m.weight))
    if uv is not None:
        with lib.no_grad():
            m.weight_u.copy_(lib.tensor(uv[0]))
            m.weight_v.copy_(lib.tensor(uv[1]))
    uv = (_np(m.weight_u).copy(), _np(m.weight_v).copy())
    x = lib.tensor(np.linspace(-1, 1, int(np.prod(shape))).reshape(shape),
                   dtype=getattr(lib, dtype))
    m(x)
    y = m(x)  # (a second step of power iteration)
    (y * y).sum().backward()
    trained = (_np(y), _np(m.weight_orig.grad), _np(m.weight_u), _np(m.weight_v), _np(m.weight))
    m.eval()
    u_before = _np(m.weight_u).copy()
    ye = m(x)
    assert np.array_equal(u_before, _np(m.weight_u))  # (no power iteration in eval mode)
    keys = list(m.state_dict().keys())
    node = m.weight.grad_fn.name()
    lib.nn.utils.remove_spectral_norm(m)
    after = (list(m.state_dict().keys()), _np(m.weight), isinstance(m.weight, lib.nn.Parameter),
             len(m._forward_pre_hooks))
    return uv, before, trained, _np(ye), keys, node, after


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", range(len(LAYERS)))
def test_spectral_norm_matches_torch(k, dtype):
    make, shape, kw = LAYERS[k]
    got = _spectral_run(ng, make, shape, kw, dtype)
    want = _spectral_run(torch, make, shape, kw, dtype, uv=got[0])
    assert got[1][0] == want[1][0] == "Tensor"  # (a plain tensor until the first call)
    np.testing.assert_array_equal(got[1][1], want[1][1])
    for a, b in zip(got[2], want[2]):
        np.testing.assert_allclose(a, b, **TOL[dtype])
    np.testing.assert_allclose(got[3], want[3], **TOL[dtype])
    assert got[4] == want[4] and got[5] == want[5] == "DivBackward0"
    assert got[6][0] == want[6][0] and got[6][2:] == want[6][2:] == (True, 0)
    np.testing.assert_allclose(got[6][1], want[6][1], **TOL[dtype])


def test_spectral_norm_converges_to_the_largest_singular_value():
    w = RNG.standard_normal((5, 7))
    m = ng.nn.Linear(7, 5).double()
    with ng.no_grad():
        m.weight.copy_(ng.tensor(w))
    ng.nn.utils.spectral_norm(m, n_power_iterations=50)
    m(ng.ones(1, 7, dtype=ng.float64))
    np.testing.assert_allclose(np.linalg.svd(_np(m.weight), compute_uv=False)[0], 1.0,
                               rtol=1e-10)


SPECTRAL_ERRORS = [
    lambda lib: lib.nn.utils.spectral_norm(lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2))),
    lambda lib: lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2), n_power_iterations=0),
    lambda lib: lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2, bias=False), name="bias"),
    lambda lib: lib.nn.utils.remove_spectral_norm(lib.nn.Linear(2, 2)),
    lambda lib: lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2), dim=2),
    lambda lib: lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2), name="w"),
    lambda lib: lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2),
                                                            n_power_iterations=-1),
]


@pytest.mark.parametrize("i", range(len(SPECTRAL_ERRORS)))
def test_spectral_norm_errors_match_torch(i):
    got, want = _error(ng, SPECTRAL_ERRORS[i]), _error(torch, SPECTRAL_ERRORS[i])
    assert got == want


# -- parametrizations.spectral_norm ---------------------------------------------------------------


def _param_run(lib, make, shape, kw, dtype, uv=None, name="weight"):
    m = _set(lib, make(lib).to(getattr(lib, dtype)), seed=1)
    lib.nn.utils.parametrizations.spectral_norm(m, name=name, **kw)
    sn = getattr(m.parametrizations, name)[0]
    if uv is not None and uv[0] is not None:
        with lib.no_grad():
            sn._u.copy_(lib.tensor(uv[0]))
            sn._v.copy_(lib.tensor(uv[1]))
    uv = ((_np(sn._u).copy(), _np(sn._v).copy()) if hasattr(sn, "_u") else (None, None))
    x = lib.tensor(np.linspace(-1, 2, int(np.prod(shape))).reshape(shape),
                   dtype=getattr(lib, dtype))
    y = m(x)
    y = m(x)
    (y * y).sum().backward()
    orig = getattr(m.parametrizations, name).original
    out = [_np(y), _np(orig.grad), _np(getattr(m, name))]
    if hasattr(sn, "_u"):
        out += [_np(sn._u), _np(sn._v)]
    m.eval()
    out.append(_np(m(x)))
    return uv, out, list(m.state_dict().keys()), getattr(m, name).grad_fn.name()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", range(len(LAYERS)))
def test_parametrized_spectral_norm_matches_torch(k, dtype):
    make, shape, kw = LAYERS[k]
    got = _param_run(ng, make, shape, kw, dtype)
    want = _param_run(torch, make, shape, kw, dtype, uv=got[0])
    for a, b in zip(got[1], want[1]):
        np.testing.assert_allclose(a, b, **TOL[dtype])
    assert got[2:] == want[2:]


def test_parametrized_spectral_norm_of_a_vector_normalizes_it():
    got = _param_run(ng, lambda lib: lib.nn.Linear(3, 4), (2, 3), {}, "float64", name="bias")
    want = _param_run(torch, lambda lib: lib.nn.Linear(3, 4), (2, 3), {}, "float64",
                      name="bias")
    for a, b in zip(got[1], want[1]):
        np.testing.assert_allclose(a, b, **TOL["float64"])
    assert got[2:] == want[2:]


def test_parametrized_spectral_norm_starts_converged():
    """15 power-iteration steps at registration: sigma is then near the largest singular
    value, whatever the random start."""
    w = RNG.standard_normal((4, 6)) @ np.diag([5.0, 1, 1, 1, 1, 1])
    m = ng.nn.Linear(6, 4).double()
    with ng.no_grad():
        m.weight.copy_(ng.tensor(w))
    ng.nn.utils.parametrizations.spectral_norm(m)
    m.eval()
    np.testing.assert_allclose(np.linalg.svd(_np(m.weight), compute_uv=False)[0], 1.0,
                               rtol=1e-6)


# -- stack_module_state: model ensembling ---------------------------------------------------------


def _models(lib, dtype, n=3):
    models = []
    for k in range(n):
        m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.ReLU(),
                              lib.nn.Linear(4, 2)).to(getattr(lib, dtype))
        _set(lib, m, seed=10 + k)
        with lib.no_grad():
            m[1].running_mean.copy_(lib.tensor(np.arange(4.0) * 0.1 * (k + 1)))
        models.append(m.eval())
    return models


def _ensemble(lib, dtype, in_dims=(0, 0, None)):
    models = _models(lib, dtype)
    params, buffers = lib.func.stack_module_state(models)
    base = copy.deepcopy(models[0])

    def fmodel(params, buffers, x):
        return lib.func.functional_call(base, (params, buffers), (x,))

    x = lib.tensor(np.linspace(-2, 2, 15).reshape(5, 3), dtype=getattr(lib, dtype))
    if in_dims[2] == 0:
        x = lib.stack([x, x * 2, -x])
    y = lib.func.vmap(fmodel, in_dims=in_dims)(params, buffers, x)
    (y * y).sum().backward()
    singles = [_np(m(x if in_dims[2] is None else x[k])) for k, m in enumerate(models)]
    return (
        {k: (tuple(v.shape), v.requires_grad, v.is_leaf, str(v.dtype).split(".")[-1])
         for k, v in params.items()},
        {k: (tuple(v.shape), v.requires_grad) for k, v in buffers.items()},
        _np(y), singles, {k: _np(v.grad) for k, v in params.items()},
        [m[0].weight.grad for m in models],
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("in_dims", [(0, 0, None), (0, 0, 0)])
def test_stack_module_state_and_vmap_over_functional_call_match_torch(dtype, in_dims):
    got, want = _ensemble(ng, dtype, in_dims), _ensemble(torch, dtype, in_dims)
    assert got[0] == want[0] and got[1] == want[1]
    np.testing.assert_allclose(got[2], want[2], **TOL[dtype])
    for k, single in enumerate(got[3]):  # (each model's own prediction)
        np.testing.assert_allclose(got[2][k], single, **TOL[dtype])
    for k in want[4]:
        np.testing.assert_allclose(got[4][k], want[4][k], **TOL[dtype])
    assert got[5] == [None] * 3  # (the models' own parameters are not in the graph)


def test_stacked_parameters_are_fresh_leaves_and_buffers_are_copies():
    models = _models(ng, "float32", 2)
    params, buffers = ng.func.stack_module_state(models)
    with ng.no_grad():
        params["0.weight"][0].zero_()
        buffers["1.running_mean"].zero_()
    assert float(models[0][0].weight.detach().abs().sum()) > 0
    assert float(models[1][1].running_mean.abs().sum()) > 0
    assert params["0.weight"].grad_fn is None


STACK_ERRORS = [
    lambda lib: lib.func.stack_module_state([]),
    lambda lib: lib.func.stack_module_state([lib.nn.Linear(2, 2), lib.nn.Linear(2, 2).eval()]),
    lambda lib: lib.func.stack_module_state([lib.nn.Linear(2, 2), lib.nn.Conv1d(2, 2, 1)]),
    lambda lib: lib.func.stack_module_state([lib.nn.Linear(2, 2),
                                             lib.nn.Linear(2, 2).requires_grad_(False)]),
]


@pytest.mark.parametrize("i", range(len(STACK_ERRORS)))
def test_stack_module_state_errors_match_torch(i):
    assert _error(ng, STACK_ERRORS[i]) == _error(torch, STACK_ERRORS[i])


# -- ChannelShuffle -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,groups", [((2, 6, 3), 3), ((1, 4, 2, 3), 2), ((2, 4, 3, 2, 1), 4)])
def test_channel_shuffle_module_matches_torch(shape, groups, dtype):
    x = RNG.standard_normal(shape)
    w = RNG.standard_normal(shape)
    out = []
    for lib in (ng, torch):
        m = lib.nn.ChannelShuffle(groups)
        t = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
        y = m(t)
        (y * lib.tensor(w, dtype=getattr(lib, dtype))).sum().backward()
        out.append((repr(m), _np(y), _np(t.grad)))
    assert out[0][0] == out[1][0] == f"ChannelShuffle(groups={groups})"
    np.testing.assert_array_equal(out[0][1], out[1][1])
    np.testing.assert_array_equal(out[0][2], out[1][2])


def test_channel_shuffle_module_on_each_device(device):
    y = ng.nn.ChannelShuffle(2)(ng.arange(8.0, device=device).reshape(1, 4, 2))
    assert y.device.type == device and y.flatten().tolist() == [0, 1, 4, 5, 2, 3, 6, 7]


# -- TripletMarginWithDistanceLoss ----------------------------------------------------------------


def _cosine_distance(lib):
    return lambda a, b: 1.0 - lib.nn.functional.cosine_similarity(a, b)


TRIPLET_CASES = [
    (dict(), (4, 5)),
    (dict(margin=2.0, swap=True, reduction="sum"), (4, 5)),
    (dict(reduction="none"), (4, 5)),
    (dict(), (5,)),  # (unbatched)
    (dict(distance="cosine", margin=0.5), (3, 4)),
    (dict(distance="cosine", swap=True, reduction="none"), (3, 4)),
    (dict(distance="l1", margin=1.5), (2, 3, 4)),
]


def _triplet(lib, kw, shape, dtype, module):
    kw = dict(kw)
    distance = kw.pop("distance", None)
    if distance == "cosine":
        kw["distance_function"] = _cosine_distance(lib)
    elif distance == "l1":
        kw["distance_function"] = lib.nn.PairwiseDistance(p=1)
    rng = np.random.default_rng(1)
    a, p, n = (lib.tensor(rng.standard_normal(shape), dtype=getattr(lib, dtype),
                          requires_grad=True) for _ in range(3))
    if module:
        loss = lib.nn.TripletMarginWithDistanceLoss(**kw)(a, p, n)
    else:
        loss = lib.nn.functional.triplet_margin_with_distance_loss(a, p, n, **kw)
    loss.backward(lib.ones_like(loss))
    return _np(loss), [_np(t.grad) for t in (a, p, n)], loss.grad_fn.name()


@pytest.mark.parametrize("module", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", range(len(TRIPLET_CASES)))
def test_triplet_margin_with_distance_loss_matches_torch(k, dtype, module):
    kw, shape = TRIPLET_CASES[k]
    got = _triplet(ng, kw, shape, dtype, module)
    want = _triplet(torch, kw, shape, dtype, module)
    np.testing.assert_allclose(got[0], want[0], **TOL[dtype])
    for a, b in zip(got[1], want[1]):
        np.testing.assert_allclose(a, b, **TOL[dtype])
    assert got[2] == want[2]


def test_triplet_margin_with_distance_loss_reprs():
    for lib in (ng, torch):
        assert repr(lib.nn.TripletMarginWithDistanceLoss()) == (
            "TripletMarginWithDistanceLoss(\n  (distance_function): PairwiseDistance()\n)")
        assert repr(lib.nn.TripletMarginWithDistanceLoss(
            distance_function=_cosine_distance(lib))) == "TripletMarginWithDistanceLoss()"


TRIPLET_ERRORS = [
    lambda lib: lib.nn.TripletMarginWithDistanceLoss(margin=0.0),
    lambda lib: lib.nn.functional.triplet_margin_with_distance_loss(
        lib.ones(2, 3), lib.ones(2, 3), lib.ones(2, 3), margin=-1),
    lambda lib: lib.nn.functional.triplet_margin_with_distance_loss(
        lib.ones(2, 3), lib.ones(2, 3), lib.ones(2, 3), reduction="avg"),
    lambda lib: lib.nn.functional.triplet_margin_with_distance_loss(
        lib.ones(2, 3), lib.ones(2, 3), lib.ones(3)),
    lambda lib: lib.nn.TripletMarginWithDistanceLoss()(lib.ones(3), lib.ones(2, 3),
                                                       lib.ones(2, 3)),
    lambda lib: lib.nn.functional.triplet_margin_with_distance_loss(
        lib.ones(2, 3), lib.ones(2, 3), lib.ones(2, 3), 1.0),
]


@pytest.mark.parametrize("i", range(len(TRIPLET_ERRORS)))
def test_triplet_margin_with_distance_loss_errors_match_torch(i):
    got, want = _error(ng, TRIPLET_ERRORS[i]), _error(torch, TRIPLET_ERRORS[i])
    assert got == want


# -- AdaptiveLogSoftmaxWithLoss -------------------------------------------------------------------


def _asm(lib, dtype, **kw):
    kw.setdefault("div_value", 2.0)  # (4.0 would leave the second tail a hidden size of 0)
    cutoffs = kw.pop("cutoffs", [4, 9])
    return _set(lib, lib.nn.AdaptiveLogSoftmaxWithLoss(8, 13, cutoffs, **kw).to(
        getattr(lib, dtype)), seed=3)


TARGETS = np.array([0, 3, 5, 9, 12, 1, 8])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", [dict(head_bias=True), dict(cutoffs=[5], div_value=4.0)])
def test_adaptive_log_softmax_matches_torch(dtype, kw):
    x = RNG.standard_normal((7, 8))
    out = []
    for lib in (ng, torch):
        m = _asm(lib, dtype, **kw)
        t = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
        r = m(t, lib.tensor(TARGETS))
        r.loss.backward()
        single = m(t[2], lib.tensor(TARGETS[2]))
        out.append(dict(
            fields=(type(r).__name__, r._fields, r.output.grad_fn.name(),
                    r.loss.grad_fn.name(), tuple(single.output.shape),
                    single.output.grad_fn.name()),
            keys=list(m.state_dict().keys()), repr=repr(m),
            sizes=(m.shortlist_size, m.n_clusters, m.head_size, m.cutoffs),
            output=_np(r.output), loss=_np(r.loss), grad=_np(t.grad),
            head_grad=_np(m.head.weight.grad), tail_grad=_np(m.tail[-1][0].weight.grad),
            single=_np(single.output), log_prob=_np(m.log_prob(t)),
            predict=m.predict(t).cpu().numpy()))
    got, want = out
    for k in ("fields", "keys", "repr", "sizes"):
        assert got[k] == want[k], k
    for k in ("output", "loss", "grad", "head_grad", "tail_grad", "single", "log_prob"):
        np.testing.assert_allclose(got[k], want[k], **TOL[dtype], err_msg=k)
    np.testing.assert_array_equal(got["predict"], want["predict"])
    np.testing.assert_allclose(np.exp(got["log_prob"]).sum(1), 1.0, rtol=1e-5)


@pytest.mark.parametrize("bias", [[9.0, 0, 0, 0, -9, -9], [-9.0, -9, -9, -9, 9, 0],
                                  [0.0, 0, 0, 0, 0.5, 0.2]],
                         ids=["shortlist", "tail", "mixed"])
def test_adaptive_log_softmax_predict_matches_torch(bias):
    x = RNG.standard_normal((9, 8))
    preds = []
    for lib in (ng, torch):
        m = lib.nn.AdaptiveLogSoftmaxWithLoss(8, 13, [4, 9], 2.0, head_bias=True).double()
        _set(lib, m, seed=4)
        with lib.no_grad():
            m.head.bias.copy_(lib.tensor(bias))
        p = m.predict(lib.tensor(x))
        preds.append((p.cpu().numpy(), str(p.dtype).split(".")[-1]))
    np.testing.assert_array_equal(preds[0][0], preds[1][0])
    assert preds[0][1] == preds[1][1] == "int64"


def test_adaptive_log_softmax_on_each_device(device):
    m = ng.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2, 4], 2.0, head_bias=True).to(device)
    x = ng.randn(5, 4, device=device, requires_grad=True)
    r = m(x, ng.tensor([0, 1, 2, 4, 5], device=device))
    r.loss.backward()
    assert r.output.device.type == x.grad.device.type == device
    np.testing.assert_allclose(np.exp(_np(m.log_prob(x))).sum(1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(_np(r.output), _np(m.log_prob(x))[np.arange(5), [0, 1, 2, 4, 5]],
                               rtol=1e-5)


ASM_ERRORS = [
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 13, []),
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 13, [9, 4]),
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 13, [0, 4]),
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 13, [4, 13]),
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 13, [4, 4]),
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 13, [4.5]),
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 13, [4])(lib.ones(3, 8),
                                                              lib.tensor([0, 13, 2])),
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 13, [4])(lib.ones(3, 8), lib.tensor([0, 1])),
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 13, [4])(lib.ones(2, 3, 8),
                                                              lib.tensor([0, 1])),
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 13, [4])(lib.ones(2, 8), lib.tensor(1)),
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 13, [4])(lib.ones(2, 8),
                                                              lib.tensor([[1, 2]])),
]


@pytest.mark.parametrize("i", range(len(ASM_ERRORS)))
def test_adaptive_log_softmax_errors_match_torch(i):
    assert _error(ng, ASM_ERRORS[i]) == _error(torch, ASM_ERRORS[i])


def test_spectral_norms_on_each_device(device):
    for register in (ng.nn.utils.spectral_norm, ng.nn.utils.parametrizations.spectral_norm):
        m = ng.nn.Linear(3, 2).to(device)
        register(m, n_power_iterations=30)  # (one step from a random start is not enough)
        y = m(ng.ones(4, 3, device=device))
        y.sum().backward()
        assert y.device.type == m.weight.device.type == device
        np.testing.assert_allclose(np.linalg.svd(_np(m.weight), compute_uv=False)[0], 1.0,
                                   rtol=1e-3)
