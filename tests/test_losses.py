"""The losses against PyTorch on the same inputs: values, gradients of the input (and of the
target where PyTorch differentiates it), node names, error types and texts."""

import warnings

import numpy as np
import pytest

import numbagrad as ng
import numbagrad.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

rng = np.random.default_rng(0)
X = rng.normal(size=(5, 4))
T = rng.normal(size=(5, 4))
IDX = np.array([0, 3, 1, 1, 2])
P = rng.random((5, 4))
P /= P.sum(1, keepdims=True)
W4 = rng.random(4)
PW4 = rng.random(4) * 3
X4 = rng.normal(size=(2, 4, 3, 2))
IDX4 = rng.integers(0, 4, (2, 3, 2))
X3 = rng.normal(size=(2, 4, 3))
IDX3 = rng.integers(0, 4, (2, 3))

CASES = {
    # name: (call on a functional module M, arrays; the first is the input, differentiated)
    "mse": (lambda M, x, t, r: M.mse_loss(x, t, reduction=r), X, T),
    "l1": (lambda M, x, t, r: M.l1_loss(x, t, reduction=r), X, T),
    "smooth_l1": (lambda M, x, t, r: M.smooth_l1_loss(x, t, reduction=r, beta=0.5), X, T),
    "smooth_l1_beta0": (lambda M, x, t, r: M.smooth_l1_loss(x, t, reduction=r, beta=0.0), X, T),
    "huber": (lambda M, x, t, r: M.huber_loss(x, t, reduction=r, delta=0.7), X, T),
    "nll": (lambda M, x, t, r: M.nll_loss(x, t, reduction=r), X, IDX),
    "nll_weight_ignore": (lambda M, x, t, w, r: M.nll_loss(x, t, weight=w, ignore_index=1,
                                                           reduction=r), X, IDX, W4),
    "nll_4d": (lambda M, x, t, r: M.nll_loss(x, t, reduction=r), X4, IDX4),
    "nll_3d": (lambda M, x, t, r: M.nll_loss(x, t, reduction=r), X3, IDX3),
    "nll_all_ignored": (lambda M, x, t, r: M.nll_loss(x, t, reduction=r), X, np.full(5, -100)),
    "cross_entropy": (lambda M, x, t, r: M.cross_entropy(x, t, reduction=r), X, IDX),
    "cross_entropy_1d": (lambda M, x, t, r: M.cross_entropy(x, t, reduction=r), X[0],
                         np.array(2)),
    "cross_entropy_smooth_weight": (
        lambda M, x, t, w, r: M.cross_entropy(x, t, weight=w, label_smoothing=0.2, ignore_index=3,
                                              reduction=r), X, IDX, W4),
    "cross_entropy_4d": (lambda M, x, t, w, r: M.cross_entropy(x, t, w, reduction=r,
                                                               label_smoothing=0.3),
                         X4, IDX4, W4),
    "cross_entropy_probs": (lambda M, x, t, r: M.cross_entropy(x, t, reduction=r,
                                                               label_smoothing=0.1), X, P),
    "cross_entropy_probs_weight": (lambda M, x, t, w, r: M.cross_entropy(x, t, w, reduction=r),
                                   X, P, W4),
    "bce": (lambda M, x, t, w, r: M.binary_cross_entropy(x.sigmoid(), t, w, reduction=r),
            X, P, W4),
    "bce_saturated": (lambda M, x, t, r: M.binary_cross_entropy(x, t, reduction=r),
                      np.array([0.0, 1.0, 0.5]), np.array([1.0, 0.0, 0.3])),
    "bce_with_logits": (lambda M, x, t, r: M.binary_cross_entropy_with_logits(x, t, reduction=r),
                        X * 30, P),
    "bce_with_logits_pos_weight": (
        lambda M, x, t, w, pw, r: M.binary_cross_entropy_with_logits(x, t, w, reduction=r,
                                                                     pos_weight=pw),
        X, P, W4, PW4),
    "kl_div": (lambda M, x, t, r: M.kl_div(x.log_softmax(1), t, reduction=r), X, P),
    "kl_div_log_target": (lambda M, x, t, r: M.kl_div(x, t, reduction=r, log_target=True), X,
                          np.log(P)),
}


# PyTorch divides the probability-target mean by a C++ scalar (DivBackward1); ours is the
# Python division of a tensor by a number, which in PyTorch too records DivBackward0
NODE_DIFFERENCES = {
    ("cross_entropy_probs", "mean"): ("DivBackward0", "DivBackward1"),
    ("cross_entropy_probs_weight", "mean"): ("DivBackward0", "DivBackward1"),
}


def _run(lib, fn, arrays, reduction, target_grad=False):
    tensors = [lib.tensor(a, requires_grad=(i == 0 or (i == 1 and target_grad)))
               for i, a in enumerate(arrays)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (kl_div's "mean" warns, on both sides)
        out = fn(lib.nn.functional, *tensors, reduction)
    out.sum().backward()
    grads = [t.grad for t in tensors[: 1 + target_grad]]
    return out, grads


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", list(CASES))
def test_loss_matches_torch(name, reduction):
    fn, *arrays = CASES[name]
    ours, our_grads = _run(ng, fn, arrays, reduction)
    theirs, their_grads = _run(torch, fn, arrays, reduction)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    assert ours.shape == tuple(theirs.shape) and ours.dtype.name == str(theirs.dtype)[6:]
    names = ours.grad_fn.name(), type(theirs.grad_fn).__name__
    assert names[0] == names[1] or NODE_DIFFERENCES.get((name, reduction)) == names
    for g, h in zip(our_grads, their_grads):
        np.testing.assert_allclose(g.numpy(), h.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["mse", "smooth_l1", "huber", "bce",
                                  "bce_with_logits_pos_weight", "kl_div"])
def test_loss_target_gradient_matches_torch(name):
    fn, *arrays = CASES[name]
    _, our_grads = _run(ng, fn, arrays, "mean", target_grad=True)
    _, their_grads = _run(torch, fn, arrays, "mean", target_grad=True)
    np.testing.assert_allclose(our_grads[1].numpy(), their_grads[1].numpy(), rtol=1e-9,
                               atol=1e-12)


def test_cross_entropy_second_derivative_matches_torch():
    def hess_diag(lib):
        x = lib.tensor(X, requires_grad=True)
        loss = lib.nn.functional.cross_entropy(x, lib.tensor(IDX), weight=lib.tensor(W4),
                                               label_smoothing=0.1)
        (g,) = lib.autograd.grad(loss, x, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), x)
        return h.numpy()

    np.testing.assert_allclose(hess_diag(ng), hess_diag(torch), rtol=1e-9, atol=1e-12)


def test_kl_div_batchmean_and_legacy_reduction_match_torch():
    for lib in (ng, torch):
        x = lib.tensor(X).log_softmax(1)
        assert abs(lib.nn.functional.kl_div(x, lib.tensor(P), reduction="batchmean").item()
                   - (lib.tensor(P) * (lib.tensor(P).log() - x)).sum().item() / 5) < 1e-12
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        ours = F.mse_loss(ng.tensor(X), ng.tensor(T), size_average=False)
    assert ours.item() == pytest.approx(((X - T) ** 2).sum(), rel=1e-12)


def _error(lib, call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call(lib)
        except Exception as e:  # noqa: BLE001 (the oracle decides which)
            # (our Size's repr names our package)
            return type(e).__name__, str(e).replace("numbagrad.Size", "torch.Size")
    return None


ERRORS = {
    "batch_mismatch": lambda L: L.nn.functional.nll_loss(L.randn(3, 4), L.tensor([1, 2])),
    "multi_target": lambda L: L.nn.functional.nll_loss(L.randn(3, 4), L.tensor([[1, 2, 3]])),
    "out_of_bounds": lambda L: L.nn.functional.cross_entropy(L.randn(3, 4), L.tensor([1, 2, 5])),
    "weight_size": lambda L: L.nn.functional.nll_loss(L.randn(3, 4), L.tensor([1, 2, 1]),
                                                      weight=L.ones(3)),
    "target_size_nd": lambda L: L.nn.functional.nll_loss(L.randn(3, 4, 5),
                                                         L.zeros(3, 4).long()),
    "float_target": lambda L: L.nn.functional.nll_loss(L.randn(3, 4), L.tensor([1.0, 2, 1])),
    "int32_target": lambda L: L.nn.functional.cross_entropy(L.randn(3, 4),
                                                            L.tensor([1, 2, 1]).int()),
    "bad_reduction": lambda L: L.nn.functional.nll_loss(L.randn(3, 4), L.tensor([1, 2, 1]),
                                                        reduction="bad"),
    "probs_shape": lambda L: L.nn.functional.cross_entropy(L.randn(3, 4), L.rand(3, 5)),
    "label_smoothing": lambda L: L.nn.functional.cross_entropy(L.randn(3, 4), L.tensor([1, 2, 1]),
                                                               label_smoothing=1.5),
    "bce_size": lambda L: L.nn.functional.binary_cross_entropy(L.rand(3), L.rand(3, 1)),
    "bce_range": lambda L: L.nn.functional.binary_cross_entropy(L.tensor([0.5, 1.5]),
                                                                L.tensor([0.0, 1.0])),
    "bce_dtype": lambda L: L.nn.functional.binary_cross_entropy(L.rand(3), L.rand(3).double()),
    "bce_logits_size": lambda L: L.nn.functional.binary_cross_entropy_with_logits(
        L.rand(3), L.rand(3, 1)),
    "huber_delta": lambda L: L.nn.functional.huber_loss(L.rand(3), L.rand(3), delta=0),
    "smooth_l1_beta": lambda L: L.nn.functional.smooth_l1_loss(L.rand(3), L.rand(3), beta=-1),
    "int_input": lambda L: L.nn.functional.nll_loss(L.tensor([[1, 2], [3, 4]]), L.tensor([0, 1])),
    # (the first target out of the classes, in order; ignore_index is not one)
    "nll_target_high": lambda L: L.nn.functional.nll_loss(
        L.zeros(3, 4, requires_grad=True), L.tensor([1, 7, 9]), ignore_index=9),
    "nll_target_negative": lambda L: L.nn.functional.cross_entropy(
        L.zeros(2, 4, 2, 1), L.tensor([[[0], [-3]], [[1], [5]]])),
    "nll_target_1d": lambda L: L.nn.functional.nll_loss(L.zeros(4), L.tensor(4)),
    "bce_target_range": lambda L: L.nn.functional.binary_cross_entropy(
        L.tensor([0.5, 0.2]), L.tensor([1.0, 1.5])),
    "bce_input_nan": lambda L: L.nn.functional.binary_cross_entropy(
        L.tensor([0.5, float("nan")]), L.tensor([1.0, 0.5])),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_loss_errors_match_torch(name):
    theirs = _error(torch, ERRORS[name])
    assert theirs is not None
    assert _error(ng, ERRORS[name]) == theirs


# ---------------------------------------------------------------- large losses (ops/lazy.py)
BIG = np.random.default_rng(11).standard_normal((2, 40000)) * 2  # past the deferral size
BIG_T = np.random.default_rng(12).standard_normal((2, 40000))


@pytest.mark.parametrize("name", ["mse_loss", "smooth_l1_loss", "huber_loss", "l1_loss",
                                  "binary_cross_entropy_with_logits"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_large_losses_and_their_gradients_match_torch(name, dtype):
    # a composite loss's backward defers its elementwise ops (one loop per gradient) and
    # gives back evaluated tensors; the target's gradient is computed only when asked for
    def run(lib, target_grad):
        x = lib.tensor(BIG, dtype=getattr(lib, dtype), requires_grad=True)
        t = lib.tensor(BIG_T if "logits" not in name else 1 / (1 + np.exp(-BIG_T)),
                       dtype=getattr(lib, dtype), requires_grad=target_grad)
        loss = getattr(lib.nn.functional, name)(x, t)
        loss.backward()
        return loss, x.grad, t.grad

    for target_grad in (False, True):
        ours, theirs = run(ng, target_grad), run(torch, target_grad)
        rtol = 1e-5 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(ours[0].item(), theirs[0].item(), rtol=rtol)
        for g, h in zip(ours[1:], theirs[1:]):
            assert (g is None) == (h is None)
            if g is not None:
                assert g._lazy is None or g._lazy.value is not None  # (evaluated)
                np.testing.assert_allclose(g.numpy(), h.numpy(), rtol=rtol,
                                           atol=rtol * np.abs(h.numpy()).max())


def test_a_composite_backward_skips_the_gradient_no_input_asks_for():
    from numbagrad.ops import observe

    calls = []

    def seen(op, args, kwargs, result):
        if op.name == "smooth_l1_loss_backward":
            calls.append(args[1])

    x = ng.tensor(X, requires_grad=True)
    t = ng.tensor(P)
    loss = ng.nn.functional.smooth_l1_loss(x, t)
    observe.add(seen)
    try:
        loss.backward()
    finally:
        observe.remove(seen)
    assert len(calls) == 1 and calls[0] is x  # x's gradient only: the target needs none


@pytest.mark.parametrize("name, delta", [("smooth_l1_loss", "beta"), ("huber_loss", "delta")])
def test_piecewise_loss_second_derivatives_and_node_names_match_torch(name, delta):
    values = np.array([-3.0, -0.5, 0.0, 0.2, 0.7, 2.0, np.nan])

    def run(lib):
        x = lib.tensor(values, requires_grad=True)
        t = lib.tensor(np.zeros(7), requires_grad=True)
        loss = getattr(lib.nn.functional, name)(x, t, **{delta: 0.7})
        gx, gt = lib.autograd.grad(loss, (x, t), create_graph=True)
        (gx.sum() + 2 * gt.sum()).backward()
        return [loss, gx, gt, x.grad, t.grad], type(gx.grad_fn).__name__

    (ours, our_name), (theirs, their_name) = run(ng), run(torch)
    assert our_name == their_name
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy_second_derivatives_and_node_names_match_torch(reduction, weighted):
    # one kernel each way (binary_cross_entropy_elementwise, binary_cross_entropy_backward):
    # PyTorch's values at the log floor (x of 0 or 1) and the denominator's floor, its node
    # BinaryCrossEntropyBackwardBackward0 under create_graph, and its second derivatives
    values = np.array([0.0, 1.0, 0.3, 0.6, 0.999, 1e-7])
    targets = np.array([1.0, 0.0, 0.5, 1.0, 0.2, 0.0])
    weights = np.array([1.0, 0.5, 2.0, 1.5, 0.25, 3.0])

    def run(lib):
        x = lib.tensor(values[2:], requires_grad=True)
        t = lib.tensor(targets[2:], requires_grad=True)
        w = lib.tensor(weights[2:]) if weighted else None
        loss = lib.nn.functional.binary_cross_entropy(x, t, weight=w, reduction=reduction)
        gx, gt = lib.autograd.grad(loss.sum(), (x, t), create_graph=True)
        (gx.sum() + 2 * gt.sum()).backward()
        edge = lib.tensor(values[:2], requires_grad=True)
        floor = lib.nn.functional.binary_cross_entropy(edge, lib.tensor(targets[:2]),
                                                       reduction="sum")
        floor.backward()
        return [loss, gx, gt, x.grad, t.grad, floor, edge.grad], type(gx.grad_fn).__name__

    (ours, our_name), (theirs, their_name) = run(ng), run(torch)
    assert our_name == their_name == "BinaryCrossEntropyBackwardBackward0"
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)


def test_class_weights_that_require_grad_are_refused_as_pytorch():
    """nll_loss, cross_entropy (class indices) and multi_margin_loss have no gradient for their
    weight: PyTorch refuses one that requires grad (under grad mode), where a silent zero
    would mislead; soft-label cross entropy composes ops and takes it (DivBackward1 on top)."""
    rng = np.random.default_rng(5)
    v, wv = rng.standard_normal((3, 4)), rng.random(4)
    calls = {
        "nll_loss_forward": lambda L, x, w: L.nn.functional.nll_loss(x, L.tensor([0, 1, 2]),
                                                                     weight=w),
        "nll_loss_forward ": lambda L, x, w: L.nn.functional.cross_entropy(
            x, L.tensor([0, 1, 2]), weight=w),
        "multi_margin_loss": lambda L, x, w: L.nn.functional.multi_margin_loss(
            x, L.tensor([0, 1, 2]), weight=w),
        "nll_loss2d_forward": lambda L, x, w: L.nn.functional.nll_loss(
            x.reshape(1, 4, 3, 1), L.zeros(1, 3, 1, dtype=L.int64), weight=w),
    }
    for name, call in calls.items():
        for lib in (ng, torch):
            x, w = lib.tensor(v, requires_grad=True), lib.tensor(wv, requires_grad=True)
            with pytest.raises(RuntimeError, match=f"^The function '{name.strip()}' is not "
                                                   "differentiable with respect to argument "
                                                   "'weight'"):
                call(lib, x, w)
            with lib.no_grad():
                call(lib, x, w)
    out = []
    for lib in (ng, torch):
        x, w = lib.tensor(v, requires_grad=True), lib.tensor(wv, requires_grad=True)
        loss = lib.nn.functional.cross_entropy(x, x.softmax(1).detach(), weight=w)
        loss.backward()
        out.append((loss.item(), loss.grad_fn.name(), x.grad.numpy(), w.grad.numpy()))
    assert out[0][1] == out[1][1] == "DivBackward1"
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-12)
    for p, q in zip(out[0][2:], out[1][2:]):
        np.testing.assert_allclose(p, q, rtol=1e-12)
