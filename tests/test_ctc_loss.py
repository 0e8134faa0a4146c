"""``nn.functional.ctc_loss`` and ``nn.CTCLoss`` against PyTorch: values and gradients of the
same log-probabilities (normalised or not), padded and concatenated targets, lengths as tensors
or tuples, each reduction, ``zero_infinity``, the unbatched form, the nodes, and PyTorch's
errors in its words."""

import numpy as np
import pytest

import numbagrad as ng
from devices import on_cuda

torch = pytest.importorskip("torch")

WHERE = "(while checking arguments for ctc_loss_allocate_outputs)"


def _raises(error, message, call):
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == message


def _log_softmax(x):
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def _lengths(lib, values, as_tensor):
    return lib.tensor(values) if as_tensor else tuple(int(v) for v in values)


def _both(x, targets, input_lengths, target_lengths, as_tensors=True, rtol=1e-10,
          atol=1e-12, **kw):
    """``ctc_loss`` of the same arrays in both libraries: checks the values, the grad_fn's
    name and the gradient of ``x`` under an uneven incoming gradient; returns numbagrad's
    ``(loss, grad)``."""
    got = []
    for lib in (torch, ng):
        xs = lib.tensor(x, requires_grad=True)
        loss = lib.nn.functional.ctc_loss(
            xs, lib.tensor(targets), _lengths(lib, input_lengths, as_tensors),
            _lengths(lib, target_lengths, as_tensors), **kw)
        w = lib.tensor(np.arange(1, loss.numel() + 1, dtype=x.dtype).reshape(tuple(loss.shape)))
        (g,) = lib.autograd.grad((loss * w).sum(), xs)
        got.append((loss.detach().numpy(), loss.grad_fn.name(), g.numpy()))
    (want, want_name, want_grad), (loss, name, grad) = got
    assert loss.shape == want.shape and loss.dtype == want.dtype
    np.testing.assert_allclose(loss, want, rtol=rtol, atol=atol)
    assert name == want_name
    np.testing.assert_allclose(grad, want_grad, rtol=rtol, atol=atol)
    return loss, grad


rng = np.random.default_rng(0)
T, N, C, S = 8, 4, 6, 4
X = rng.standard_normal((T, N, C))
LP = _log_softmax(X)
TARGETS = rng.integers(1, C, (N, S))
IL = np.array([8, 7, 5, 3])
TL = np.array([4, 3, 0, 2])
FLAT = np.concatenate([TARGETS[b, :TL[b]] for b in range(N)])


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("layout", ["padded", "concatenated"])
@pytest.mark.parametrize("as_tensors", [True, False])
def test_values_and_gradient(reduction, layout, as_tensors):
    targets = TARGETS if layout == "padded" else FLAT
    _both(LP, targets, IL, TL, as_tensors, reduction=reduction)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_float32(reduction):
    loss, grad = _both(LP.astype(np.float32), TARGETS, IL, TL, rtol=2e-5, atol=1e-5,
                       reduction=reduction)
    assert loss.dtype == np.float32 and grad.dtype == np.float32


def test_gradient_of_unnormalised_log_probs():
    """PyTorch's gradient is exp(log_probs) - posterior / exp(log_probs): that of a
    log_softmax's input, not the loss's own derivative, where log_probs are not normalised."""
    x = 2 * X
    _, grad = _both(x, TARGETS, IL, TL, reduction="sum")
    got = []
    for lib in (torch, ng):  # through a log_softmax both agree with the true derivative
        xs = lib.tensor(x, requires_grad=True)
        loss = lib.nn.functional.ctc_loss(xs.log_softmax(2), lib.tensor(TARGETS),
                                          lib.tensor(IL), lib.tensor(TL), reduction="sum")
        got.append(lib.autograd.grad(loss, xs)[0].numpy())
    np.testing.assert_allclose(got[1], got[0], rtol=1e-10, atol=1e-12)
    assert not np.allclose(grad, got[1])


def test_mean_divides_by_target_lengths_then_averages():
    per_sequence, _ = _both(LP, TARGETS, IL, TL, reduction="none")
    mean, _ = _both(LP, TARGETS, IL, TL, reduction="mean")
    np.testing.assert_allclose(mean, np.mean(per_sequence / np.maximum(TL, 1)), rtol=1e-12)


@pytest.mark.parametrize("blank", [0, 3, 5])
def test_blank_index_and_targets_holding_the_blank_class(blank):
    targets = np.random.default_rng(blank).integers(0, C, (N, S))
    targets[0, TL[0] - 1] = blank  # (a target that ends with the blank's class)
    _both(LP, targets, IL, TL, blank=blank, reduction="none")


def test_repeated_labels():
    targets = TARGETS.copy()
    targets[0] = [2, 2, 3, 3]
    targets[1, :3] = [4, 4, 4]
    _both(LP, targets, IL, TL, reduction="none")


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_impossible_targets(reduction, zero_infinity):
    # sequence 1 has 2 steps for 3 labels, sequence 3 has 2 steps for 2 equal labels (which
    # need a blank between them): no path, an infinite loss
    targets = TARGETS.copy()
    targets[3, :2] = [5, 5]
    loss, grad = _both(LP, targets, [8, 2, 5, 2], TL, reduction=reduction,
                       zero_infinity=zero_infinity)
    if reduction == "none":
        assert list(np.isinf(loss)) == [False, not zero_infinity, False, not zero_infinity]
    if zero_infinity:
        assert np.isfinite(grad).all() and not grad[:, 1].any() and not grad[:, 3].any()
    else:  # (PyTorch's gradient of an infinite loss: nan at its steps, 0 after them)
        assert np.isnan(grad[:2, 1]).all() and not grad[2:, 1].any()


def test_empty_inputs_and_targets():
    # no steps and no labels: a loss of -0.0; no steps for some labels: inf
    loss, grad = _both(LP, TARGETS, [8, 0, 0, 3], [4, 0, 2, 2], reduction="none")
    assert loss[1] == 0 and np.signbit(loss[1]) and loss[2] == np.inf
    assert not grad[:, 1].any()
    _both(LP, TARGETS[:, :0], IL, [0, 0, 0, 0], reduction="mean")
    _both(LP, FLAT[:0], IL, [0, 0, 0, 0], reduction="none")


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("layout", ["1d", "2d"])
def test_unbatched(reduction, layout):
    targets = TARGETS[0] if layout == "1d" else TARGETS[:1]
    loss, _ = _both(LP[:, 0], targets, (8,), (4,), False, reduction=reduction)
    assert loss.shape == ()
    _both(LP[:, 0], targets, np.array(8), np.array(4), reduction=reduction)


@pytest.mark.parametrize("seed", range(6))
def test_random_batches(seed):
    g = np.random.default_rng(100 + seed)
    steps, batch, classes, longest = (int(g.integers(1, 12)), int(g.integers(1, 5)),
                                      int(g.integers(2, 7)), int(g.integers(0, 6)))
    x = 2 * g.standard_normal((steps, batch, classes))
    if seed % 2:
        x = _log_softmax(x)
    targets = g.integers(0, classes, (batch, longest))
    tl = g.integers(0, longest + 1, batch)
    il = g.integers(0, steps + 1, batch)
    if seed % 3 == 0:
        targets = np.concatenate([targets[b, :tl[b]] for b in range(batch)])
    _both(x, targets, il, tl, blank=int(g.integers(0, classes)),
          reduction=["none", "mean", "sum"][seed % 3], zero_infinity=bool(seed % 4 == 1))


def test_lengths_of_other_integral_dtypes_and_shapes():
    for lib in (torch, ng):
        xs = lib.tensor(LP)
        want = lib.nn.functional.ctc_loss(xs, lib.tensor(TARGETS), tuple(IL), tuple(TL))
        for il, tl in [(lib.tensor(IL, dtype=lib.int32), lib.tensor(TL, dtype=lib.uint8)),
                       (lib.tensor(IL)[None], lib.tensor(TL)[:, None]),
                       (list(IL), [np.int64(v) for v in TL])]:
            got = lib.nn.functional.ctc_loss(xs, lib.tensor(TARGETS), il, tl)
            assert got.item() == want.item()
        got = lib.nn.functional.ctc_loss(xs, lib.tensor(TARGETS, dtype=lib.int32), tuple(IL),
                                         tuple(TL))
        assert got.item() == want.item()


@pytest.mark.parametrize("reduction, zero_infinity, batched, names", [
    ("none", False, True, ["CtcLossBackward0"]),
    ("mean", False, True, ["MeanBackward0", "DivBackward0", "CtcLossBackward0"]),
    ("sum", False, True, ["SumBackward0", "CtcLossBackward0"]),
    ("none", True, True, ["WhereBackward0", "CtcLossBackward0"]),
    ("mean", True, True, ["MeanBackward0", "DivBackward0", "WhereBackward0",
                          "CtcLossBackward0"]),
    ("none", False, False, ["SqueezeBackward1", "CtcLossBackward0", "UnsqueezeBackward0"]),
])
def test_nodes(lib, reduction, zero_infinity, batched, names):
    x = lib.tensor(LP if batched else LP[:, 0], requires_grad=True)
    targets = lib.tensor(TARGETS if batched else TARGETS[0])
    lengths = (tuple(IL), tuple(TL)) if batched else ((8,), (4,))
    loss = lib.nn.functional.ctc_loss(x, targets, *lengths, reduction=reduction,
                                      zero_infinity=zero_infinity)
    node, got = loss.grad_fn, []
    while node is not None and "AccumulateGrad" not in node.name():
        got.append(node.name())
        # (where's first input, the condition, has no node)
        node = next(f for f, _ in node.next_functions if f is not None)
    assert got == names


def test_module(lib):
    m = lib.nn.CTCLoss(blank=1, reduction="sum", zero_infinity=True)
    assert repr(m) == "CTCLoss()"
    assert (m.blank, m.reduction, m.zero_infinity) == (1, "sum", True)
    d = lib.nn.CTCLoss()
    assert (d.blank, d.reduction, d.zero_infinity) == (0, "mean", False)


def test_module_matches_functional():
    targets = TARGETS + 1
    targets[targets >= C] = 2
    loss, grad = _both(LP, targets, IL, TL, blank=1, reduction="sum", zero_infinity=True)
    x = ng.tensor(LP, requires_grad=True)
    out = ng.nn.CTCLoss(blank=1, reduction="sum", zero_infinity=True)(
        x, ng.tensor(targets), ng.tensor(IL), ng.tensor(TL))
    out.backward()
    np.testing.assert_array_equal(out.detach().numpy(), loss)
    np.testing.assert_array_equal(x.grad.numpy(), grad)


def test_no_second_derivative(lib):
    x = lib.tensor(LP, requires_grad=True)
    loss = lib.nn.functional.ctc_loss(x, lib.tensor(TARGETS), tuple(IL), tuple(TL))
    (g,) = lib.autograd.grad(loss, x, create_graph=True)
    _raises(RuntimeError, "derivative for aten::_ctc_loss_backward is not implemented",
            lambda: lib.autograd.grad(g.sum(), x))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # (torch's forward AD, on import)
def test_no_forward_derivative(lib):
    fwad = lib.autograd.forward_ad
    with fwad.dual_level(), pytest.raises(NotImplementedError) as info:
        x = fwad.make_dual(lib.tensor(LP), lib.ones(T, N, C, dtype=lib.float64))
        lib.nn.functional.ctc_loss(x, lib.tensor(TARGETS), tuple(IL), tuple(TL))
    assert str(info.value).startswith(
        "Trying to use forward AD with _ctc_loss that does not support it")


def test_log_probs_written_in_place_before_backward(lib):
    x = lib.tensor(LP, requires_grad=True)
    y = x * 1
    loss = lib.nn.functional.ctc_loss(y, lib.tensor(TARGETS), tuple(IL), tuple(TL))
    y.add_(1)
    with pytest.raises(RuntimeError) as info:
        loss.backward()
    assert str(info.value).startswith("one of the variables needed for gradient computation "
                                      "has been modified by an inplace operation")


def _call(lib, lp=None, targets=None, il=tuple(IL), tl=tuple(TL), **kw):
    lp = lib.tensor(LP if lp is None else lp)
    targets = lib.tensor(TARGETS if targets is None else targets)
    return lambda: lib.nn.functional.ctc_loss(lp, targets, il, tl, **kw)


ERRORS = [
    (dict(il=(9, 7, 5, 3)), RuntimeError,
     f"Expected input_lengths to have value at most 8, but got value 9 {WHERE}"),
    (dict(il=(8, 7, -1, 3)), RuntimeError,
     f"Expected input_lengths to have value at least 0, but got value -1 {WHERE}"),
    (dict(il=(8, 7, 5)), RuntimeError, "input_lengths must be of size batch_size"),
    (dict(tl=(4, 3, 0)), RuntimeError, "target_lengths must be of size batch_size"),
    (dict(tl=(5, 3, 0, 2)), RuntimeError,
     f"Expected tensor to have size at least 5 at dimension 1, but got size 4 for argument "
     f"#2 'targets' {WHERE}"),
    (dict(tl=(4, 3, -1, 2)), RuntimeError,
     f"Expected target_lengths to have value at least 0, but got value -1 {WHERE}"),
    (dict(targets=TARGETS[:3]), RuntimeError,
     f"Expected tensor to have size 4 at dimension 0, but got size 3 for argument #2 "
     f"'targets' {WHERE}"),
    (dict(targets=FLAT[:-1]), RuntimeError,
     f"Expected tensor to have size 9 at dimension 0, but got size 8 for argument #2 "
     f"'targets' {WHERE}"),
    (dict(targets=TARGETS[None]), RuntimeError,
     f"Expected 1 to 2 dimensions, but got 3-dimensional tensor for argument #2 'targets' "
     f"{WHERE}"),
    (dict(lp=LP[..., None]), RuntimeError,
     f"Expected 3-dimensional tensor, but got 5-dimensional tensor for argument #1 "
     f"'log_probs' {WHERE}"),
    (dict(lp=LP[0, 0]), RuntimeError,
     f"Expected 3-dimensional tensor, but got 2-dimensional tensor for argument #1 "
     f"'log_probs' {WHERE}"),
    (dict(lp=LP[:0], il=(0, 0, 0, 0)), RuntimeError, "log_probs tensor must not be empty"),
    (dict(blank=C), RuntimeError, "blank must be in label range"),
    (dict(blank=-1), RuntimeError, "blank must be in label range"),
    (dict(reduction="avg"), ValueError, "avg is not a valid value for reduction"),
    (dict(lp=LP.astype(np.int32)), NotImplementedError,
     "\"ctc_loss_cpu\" not implemented for 'Int'"),
    # (the order of PyTorch's checks where two fail)
    (dict(targets=TARGETS[:3], tl=(4, 3, -2, 2)), RuntimeError,
     f"Expected target_lengths to have value at least 0, but got value -2 {WHERE}"),
    (dict(targets=TARGETS[None], blank=C), RuntimeError,
     f"Expected 1 to 2 dimensions, but got 3-dimensional tensor for argument #2 'targets' "
     f"{WHERE}"),
    (dict(il=(9, -1, 5, 3)), RuntimeError,
     f"Expected input_lengths to have value at most 8, but got value 9 {WHERE}"),
    (dict(tl=(5, 3, 0, 2), il=(9, 7, 5, 3)), RuntimeError,
     f"Expected tensor to have size at least 5 at dimension 1, but got size 4 for argument "
     f"#2 'targets' {WHERE}"),
]


@pytest.mark.parametrize("args, error, message", ERRORS)
def test_errors(lib, args, error, message):
    _raises(error, message, _call(lib, **args))


def test_unbatched_targets_must_fit(lib):
    _raises(RuntimeError, f"Expected tensor to have size 1 at dimension 0, but got size 4 for "
            f"argument #2 'targets' {WHERE}", _call(lib, lp=LP[:, 0], il=(8,), tl=(4,)))
    _raises(RuntimeError, f"Expected tensor to have size 3 at dimension 0, but got size 4 for "
            f"argument #2 'targets' {WHERE}",
            _call(lib, lp=LP[:, 0], targets=TARGETS[0], il=(8,), tl=(3,)))


@pytest.mark.parametrize("which", ["input_lengths", "target_lengths"])
@pytest.mark.parametrize("dtype", ["float32", "bool"])
def test_lengths_must_be_integral(lib, which, dtype):
    lengths = {"input_lengths": lib.tensor(IL), "target_lengths": lib.tensor(TL)}
    lengths[which] = lengths[which].to(getattr(lib, dtype))
    _raises(RuntimeError, f"{which} must be integral", lambda: lib.nn.functional.ctc_loss(
        lib.tensor(LP), lib.tensor(TARGETS), lengths["input_lengths"],
        lengths["target_lengths"]))


@pytest.mark.parametrize("args, got", [
    (dict(il=list(IL), tl="tensor"), "Tensor, Tensor, list, Tensor, int, int, bool"),
    (dict(il="tensor", tl=(4, 3, 0, 2)), "Tensor, Tensor, Tensor, tuple, int, int, bool"),
    (dict(il=8, tl=4), "Tensor, Tensor, int, int, int, int, bool"),
    (dict(il=(8.0, 7, 5, 3)), "Tensor, Tensor, tuple, tuple, int, int, bool"),
    (dict(il=(True, 7, 5, 3)), "Tensor, Tensor, tuple, tuple, int, int, bool"),
    (dict(blank=1.0), "Tensor, Tensor, tuple, tuple, float, int, bool"),
    (dict(zero_infinity=1), "Tensor, Tensor, tuple, tuple, int, int, int"),
])
def test_argument_types(lib, args, got):
    for key, values in (("il", IL), ("tl", TL)):
        if args.get(key) == "tensor":
            args = {**args, key: lib.tensor(values)}
    with pytest.raises(TypeError) as info:
        _call(lib, **args)()
    # (PyTorch's parser then says why each overload did not match: left out by numbagrad)
    assert str(info.value).startswith(
        f"ctc_loss() received an invalid combination of arguments - got ({got}), but expected "
        "one of:\n * (Tensor log_probs, Tensor targets, tuple of ints input_lengths, tuple of "
        "ints target_lengths, int blank = 0, int reduction = at::Reduction::Mean, bool "
        "zero_infinity = False)\n")


@pytest.mark.parametrize("label", [-1, C])
def test_label_out_of_range(label):
    # (PyTorch reads out of bounds, unchecked: numbagrad raises)
    targets = TARGETS.copy()
    targets[1, 2] = label
    _raises(IndexError, f"Target {label} is out of bounds.", _call(ng, targets=targets))
    targets[1, 2:] = label  # (past the target's length: not read, no error)
    ng.nn.functional.ctc_loss(ng.tensor(LP), ng.tensor(targets), (8, 7, 5, 3), (4, 2, 0, 2))


@on_cuda
def test_on_cuda_as_on_cpu():
    got = []
    for device in ("cpu", "cuda"):
        x = ng.tensor(X, device=device, requires_grad=True)
        loss = ng.nn.functional.ctc_loss(
            x.log_softmax(2), ng.tensor(TARGETS, device=device), ng.tensor(IL, device=device),
            ng.tensor(TL, device=device), reduction="mean", zero_infinity=True)
        assert loss.device.type == device
        (g,) = ng.autograd.grad(loss, x)
        assert g.device.type == device
        got.append((loss.item(), g.cpu().numpy()))
    assert got[1][0] == pytest.approx(got[0][0], rel=1e-12)
    np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("reduction", [None, 0, 1, 2, 5])
def test_torch_level_ctc_loss_takes_aten_reductions(reduction):
    """``torch.ctc_loss``: ATen's enum for the reduction; called without one it reduces
    nothing, as PyTorch 2.13's binding does."""
    lp = np.log(np.random.default_rng(3).dirichlet(np.ones(4), size=(5, 2)))
    out = []
    for lib in (ng, torch):
        args = (lib.tensor(lp), lib.tensor([[1, 2], [1, 1]]), [5, 5], [2, 2])
        out.append(lib.ctc_loss(*args) if reduction is None
                   else lib.ctc_loss(*args, 0, reduction, False))
    assert tuple(out[0].shape) == tuple(out[1].shape)
    np.testing.assert_allclose(out[0].numpy(), out[1].numpy(), rtol=1e-12)
    assert ng.nn.modules.CTCLoss is ng.nn.CTCLoss
