"""``nn.utils.prune`` as the pruning tutorial uses it, against PyTorch run side by side: masks
of the deterministic methods, pruned values and gradients, the parameters, buffers, hooks and
state_dict keys the reparametrization leaves, masks composed by iterative pruning, ``remove``,
and the errors. Random methods draw from each library's own generator: only what does not
depend on the stream (counts, shapes, keys) is compared."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

import numbagrad as ng
import numbagrad.nn.utils.prune as ng_prune

torch = pytest.importorskip("torch")
torch_prune = importlib.import_module("torch.nn.utils.prune")

PRUNE = {ng: ng_prune, torch: torch_prune}
DTYPES = ["float32", "float64"]


def _values(shape, seed=0):
    """Distinct values (no ties for L1 or Ln pruning to break differently)."""
    n = math.prod(shape)
    perm = np.random.default_rng(seed).permutation(n)
    return ((perm - n / 2 + 0.25) * 0.1).reshape(shape)


def _conv(lib, dtype):
    m = lib.nn.Conv2d(2, 4, 3).to(getattr(lib, dtype))
    with lib.no_grad():
        m.weight.copy_(lib.tensor(_values((4, 2, 3, 3))))
        m.bias.copy_(lib.tensor(_values((4,), 1)))
    return m


def _linear(lib, dtype, n_in=5, n_out=3, seed=2):
    m = lib.nn.Linear(n_in, n_out).to(getattr(lib, dtype))
    with lib.no_grad():
        m.weight.copy_(lib.tensor(_values((n_out, n_in), seed)))
        m.bias.copy_(lib.tensor(_values((n_out,), seed + 1)))
    return m


def _np(t):
    return t.detach().cpu().numpy() if hasattr(t, "cpu") else t.detach().numpy()


def _state(lib, m):
    """What the reparametrization leaves on ``m``, by name and dtype."""
    return (
        [n for n, _ in m.named_parameters()],
        [(n, str(b.dtype).split(".")[-1]) for n, b in m.named_buffers()],
        list(m.state_dict().keys()),
        [type(h).__name__ for h in m._forward_pre_hooks.values()],
        PRUNE[lib].is_pruned(m),
    )


def _error(lib, fn):
    with pytest.raises(Exception) as e:
        fn(lib, PRUNE[lib])
    return type(e.value), str(e.value).replace("torch.", "numbagrad.")


# -- the deterministic methods ------------------------------------------------------------------

STEPS = {
    "l1_fraction": lambda p, m: p.l1_unstructured(m, "weight", amount=0.3),
    "l1_count": lambda p, m: p.l1_unstructured(m, "weight", amount=7),
    "l1_bias": lambda p, m: p.l1_unstructured(m, "bias", amount=2),
    "ln2_dim0": lambda p, m: p.ln_structured(m, "weight", amount=0.5, n=2, dim=0),
    "ln1_dim1": lambda p, m: p.ln_structured(m, "weight", amount=1, n=1, dim=1),
    "lninf_last": lambda p, m: p.ln_structured(m, "weight", amount=0.34, n=float("inf"), dim=-1),
    "identity": lambda p, m: p.identity(m, "weight"),
    "custom": lambda p, m: p.custom_from_mask(
        m, "weight", mask=m.weight.new_tensor(np.arange(72).reshape(4, 2, 3, 3) % 3 != 0)),
}

SEQUENCES = [
    ["l1_fraction"], ["l1_count"], ["ln2_dim0"], ["ln1_dim1"], ["lninf_last"], ["identity"],
    ["custom"], ["l1_bias"],
    ["l1_fraction", "ln2_dim0"],  # the tutorial's iterative pruning: a PruningContainer
    ["ln2_dim0", "l1_count", "lninf_last"],
    ["custom", "identity", "l1_fraction", "l1_bias"],
]


def _pruned(lib, dtype, steps):
    m = _conv(lib, dtype)
    for s in steps:
        STEPS[s](PRUNE[lib], m)
    return m


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("steps", SEQUENCES, ids=["+".join(s) for s in SEQUENCES])
def test_deterministic_pruning_matches_torch(steps, dtype):
    got, want = _pruned(ng, dtype, steps), _pruned(torch, dtype, steps)
    assert _state(ng, got) == _state(torch, want)
    for name in ("weight", "bias"):
        if hasattr(want, name + "_mask"):
            np.testing.assert_array_equal(_np(getattr(got, name + "_mask")),
                                          _np(getattr(want, name + "_mask")))
            np.testing.assert_array_equal(_np(getattr(got, name)), _np(getattr(want, name)))
            assert type(getattr(got, name)).__name__ == "Tensor"
            assert getattr(got, name).grad_fn.name() == getattr(want, name).grad_fn.name()
    assert _history(ng_prune, got) == _history(torch_prune, want)


def _history(p, m):
    """The methods pruning each tensor, in order (a container's, or the one method)."""
    return {h._tensor_name: [type(k).__name__ for k in
                             (h if isinstance(h, p.PruningContainer) else [h])]
            for h in m._forward_pre_hooks.values()}


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_hook_recomputes_the_weight_and_gradients_reach_the_original(dtype):
    x = np.random.default_rng(3).standard_normal((2, 2, 5, 4))
    results = []
    for lib in (ng, torch):
        m = _pruned(lib, dtype, ["l1_fraction", "ln2_dim0"])
        with lib.no_grad():
            m.weight_orig.mul_(2.0)  # (the hook reads weight_orig at the next call)
        y = m(lib.tensor(x, dtype=getattr(lib, dtype)))
        (y * y).sum().backward()
        results.append((_np(y), _np(m.weight), _np(m.weight_orig.grad), _np(m.bias.grad),
                        m.weight_mask.requires_grad, m.weight.requires_grad))
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == "float32" else dict(rtol=1e-12, atol=1e-12)
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, **tol)
    assert results[0][2][results[0][1] == 0].max() == 0  # (pruned entries get no gradient)


@pytest.mark.parametrize("dtype", DTYPES)
def test_remove_makes_the_pruning_permanent(dtype):
    states, values = [], []
    for lib in (ng, torch):
        p = PRUNE[lib]
        m = _pruned(lib, dtype, ["l1_fraction", "ln2_dim0", "l1_bias"])
        orig = m.weight_orig
        p.remove(m, "weight")
        assert m.weight is orig and isinstance(m.weight, lib.nn.Parameter)
        states.append(_state(lib, m))
        p.remove(m, "bias")
        states.append(_state(lib, m))
        values.append((_np(m.weight), _np(m.bias)))
        out = m(lib.ones(1, 2, 3, 3, dtype=getattr(lib, dtype)))
        assert out.shape == (1, 4, 1, 1)
    assert states[:2] == states[2:]
    assert states[1][4] is False
    np.testing.assert_array_equal(values[0][0], values[1][0])
    np.testing.assert_array_equal(values[0][1], values[1][1])


def test_the_tutorial_custom_pruning_method():
    """A ``BasePruningMethod`` subclass defining only ``compute_mask`` (every other entry)."""
    masks = []
    for lib in (ng, torch):
        p = PRUNE[lib]

        class FooBarPruningMethod(p.BasePruningMethod):
            PRUNING_TYPE = "unstructured"

            def compute_mask(self, t, default_mask):
                mask = default_mask.clone()
                mask.view(-1)[::2] = 0
                return mask

        m = _linear(lib, "float32")
        p.l1_unstructured(m, "bias", amount=1)
        FooBarPruningMethod.apply(m, "bias")
        masks.append((_np(m.bias_mask), _np(m.bias),
                      [type(h).__name__ for h in m._forward_pre_hooks[
                          next(iter(m._forward_pre_hooks))]]))
    np.testing.assert_array_equal(masks[0][0], masks[1][0])
    np.testing.assert_array_equal(masks[0][1], masks[1][1])
    assert masks[0][2] == masks[1][2] == ["L1Unstructured", "FooBarPruningMethod"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_prune_method_on_a_tensor_and_importance_scores(dtype):
    t = _values((3, 4), 5)
    scores = _values((3, 4), 6)
    got, want = [], []
    for lib, out in ((ng, got), (torch, want)):
        p = PRUNE[lib]
        x = lib.tensor(t, dtype=getattr(lib, dtype))
        out.append(_np(p.L1Unstructured(amount=5).prune(x)))
        out.append(_np(p.LnStructured(amount=2, n=1, dim=1).prune(
            x, importance_scores=lib.tensor(scores, dtype=getattr(lib, dtype)))))
        out.append(_np(p.Identity().prune(x, default_mask=lib.ones_like(x))))
        m = _linear(lib, dtype, 4, 3)
        p.l1_unstructured(m, "weight", amount=0.5, importance_scores=lib.tensor(scores))
        p.ln_structured(m, "weight", amount=1, n=2, dim=0,
                        importance_scores=lib.tensor(scores * scores))
        out.append(_np(m.weight_mask))
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


# -- global pruning -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_global_unstructured_matches_torch(dtype):
    results = []
    for lib in (ng, torch):
        p = PRUNE[lib]
        a, b = _linear(lib, dtype, 5, 3, 7), _linear(lib, dtype, 3, 2, 9)
        c = _conv(lib, dtype)
        p.l1_unstructured(c, "weight", amount=10)  # (an earlier mask is respected)
        params = ((a, "weight"), (b, "weight"), (c, "weight"), (a, "bias"))
        p.global_unstructured(params, pruning_method=p.L1Unstructured, amount=0.4)
        p.global_unstructured([(b, "bias")], pruning_method=p.L1Unstructured, amount=1,
                              importance_scores={(b, "bias"): lib.tensor([0.0, -5.0])})
        results.append([(_np(getattr(m, n + "_mask")), _np(getattr(m, n)), _state(lib, m))
                        for m, n in params + ((b, "bias"),)])
        # the tutorial's sparsity report
        total = sum(float((getattr(m, n) == 0).sum()) for m, n in params)
        results[-1].append(round(100.0 * total / sum(getattr(m, n).nelement()
                                                     for m, n in params), 4))
    for got, want in zip(*results[:1], *results[1:]):
        if isinstance(got, float):
            assert got == want
            continue
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
        assert got[2] == want[2]


# -- the random methods: counts and shapes ------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_random_pruning_counts_and_masks(dtype):
    for lib in (ng, torch):
        p = PRUNE[lib]
        m = _conv(lib, dtype)
        p.random_unstructured(m, "weight", amount=0.3)
        assert int((m.weight_mask == 0).sum()) == round(0.3 * 72) == 22
        assert int((m.weight == 0).sum()) == 22 and m.weight_mask.shape == (4, 2, 3, 3)
        p.random_structured(m, "weight", amount=2, dim=0)
        zero_channels = (m.weight_mask.sum(dim=(1, 2, 3)) == 0).sum()
        assert int(zero_channels) == 2
        before = int((m.weight_mask == 0).sum())
        assert 36 <= before <= 36 + 22
        p.random_unstructured(m, "weight", amount=5)  # (acts on the entries still kept)
        assert int((m.weight_mask == 0).sum()) == before + 5
        kinds = [type(h).__name__ for h in next(iter(m._forward_pre_hooks.values()))]
        assert kinds == ["RandomUnstructured", "RandomStructured", "RandomUnstructured"]
        m2 = _linear(lib, dtype)
        p.random_structured(m2, "weight", amount=0.6, dim=1)  # (round(3.0) = 3 columns)
        assert int((m2.weight_mask.sum(dim=0) == 0).sum()) == 3
        p.random_unstructured(m2, "bias", amount=0)
        assert int((m2.bias_mask == 0).sum()) == 0
        assert _state(lib, m2)[2] == ["weight_orig", "bias_orig", "weight_mask", "bias_mask"]


def test_random_structured_after_unstructured_keeps_the_earlier_zeros():
    m = _conv(ng, "float32")
    ng_prune.l1_unstructured(m, "weight", amount=0.5)
    before = m.weight_mask.clone()
    ng_prune.random_structured(m, "weight", amount=1, dim=1)
    assert bool(((m.weight_mask == 1) <= (before == 1)).all())
    assert int((m.weight_mask.sum(dim=(0, 2, 3)) == 0).sum()) >= 1


# -- errors ---------------------------------------------------------------------------------------

ERRORS = [
    lambda lib, p: p.l1_unstructured(_linear(lib, "float32"), "weight", amount="a"),
    lambda lib, p: p.l1_unstructured(_linear(lib, "float32"), "weight", amount=-1),
    lambda lib, p: p.l1_unstructured(_linear(lib, "float32"), "weight", amount=1.5),
    lambda lib, p: p.random_unstructured(_linear(lib, "float32"), "weight", amount=16),
    lambda lib, p: p.ln_structured(_linear(lib, "float32"), "bias", amount=1, n=2, dim=0),
    lambda lib, p: p.ln_structured(_linear(lib, "float32"), "weight", amount=1, n=2, dim=2),
    lambda lib, p: p.random_structured(_linear(lib, "float32"), "weight", amount=4, dim=0),
    lambda lib, p: p.remove(_linear(lib, "float32"), "weight"),
    lambda lib, p: p.global_unstructured(3, pruning_method=p.L1Unstructured, amount=1),
    lambda lib, p: p.global_unstructured([(_linear(lib, "float32"), "weight")],
                                         pruning_method=p.L1Unstructured, amount=1,
                                         importance_scores=[1]),
    lambda lib, p: p.global_unstructured([(_linear(lib, "float32"), "weight")],
                                         pruning_method=p.RandomStructured, amount=1),
    lambda lib, p: p.l1_unstructured(_linear(lib, "float32"), "weight", amount=1,
                                     importance_scores=lib.ones(2, 2)),
    lambda lib, p: p.L1Unstructured(amount=1).prune(lib.ones(3), importance_scores=lib.ones(2)),
    lambda lib, p: p.custom_from_mask(_linear(lib, "float32"), "weight", mask=lib.ones(2)),
    lambda lib, p: p.PruningContainer(_named(p.Identity(), "a")).add_pruning_method(
        _named(p.Identity(), "b")),
    lambda lib, p: p.PruningContainer(_named(p.Identity(), "a")).add_pruning_method(3),
    lambda lib, p: p.BasePruningMethod(),
]


def _named(method, name):
    method._tensor_name = name
    return method


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_match_torch(i):
    got, want = _error(ng, ERRORS[i]), _error(torch, ERRORS[i])
    # (the module's repr and the container's address are in some messages)
    assert got[0] == want[0]
    if "PruningContainer" in want[1] or "object" in want[1]:
        assert got[1].split("<")[0] == want[1].split("<")[0]
    else:
        assert got[1] == want[1]


def test_a_failed_pruning_puts_the_parameter_back():
    for lib in (ng, torch):
        m = _linear(lib, "float32")
        with pytest.raises(ValueError):
            PRUNE[lib].l1_unstructured(m, "weight", amount=100)
        assert [n for n, _ in m.named_parameters()] == ["bias", "weight"]
        assert not PRUNE[lib].is_pruned(m) and list(m.named_buffers()) == []


# -- CUDA -----------------------------------------------------------------------------------------


def test_pruning_on_each_device(device):
    m = _conv(ng, "float32").to(device)
    ng_prune.l1_unstructured(m, "weight", amount=0.3)
    ng_prune.ln_structured(m, "weight", amount=0.5, n=2, dim=0)
    ng_prune.random_structured(m, "weight", amount=1, dim=1)
    assert m.weight_mask.device.type == m.weight.device.type == device
    want = _pruned(torch, "float32", ["l1_fraction", "ln2_dim0"])
    kept = _np(m.weight_mask)
    assert ((kept == 1) <= (_np(want.weight_mask) == 1)).all()
    assert int((kept.sum(axis=(0, 2, 3)) == 0).sum()) >= 1
    y = m(ng.ones(1, 2, 3, 3, device=device))
    y.sum().backward()
    np.testing.assert_array_equal(_np(m.weight_orig.grad) != 0, kept != 0)
    ng_prune.remove(m, "weight")
    assert m.weight.device.type == device and not ng_prune.is_pruned(m)


@pytest.mark.parametrize("p", [2, 2.0, 1, float("inf")])
def test_norm_with_a_number_over_three_dims_is_a_vector_norm(p):
    """(``ln_structured`` of a conv weight: the norm over every dim but one)"""
    x = _values((4, 2, 3, 3))
    got = ng.norm(ng.tensor(x, requires_grad=True), p=p, dim=[1, 2, 3])
    want = torch.norm(torch.tensor(x, requires_grad=True), p=p, dim=[1, 2, 3])
    np.testing.assert_allclose(_np(got), _np(want), rtol=1e-12)
    assert got.grad_fn.name() == want.grad_fn.name() == "LinalgVectorNormBackward0"
    for lib in (ng, torch):
        with pytest.raises(RuntimeError, match="linalg.matrix_norm: dim must be a 2-tuple. "
                                               "Got 1 2 3"):
            lib.norm(lib.tensor(x), p="fro", dim=[1, 2, 3])
