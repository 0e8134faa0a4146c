"""nn layers, their functionals and nn.utils, against PyTorch on the same inputs and weights."""

from __future__ import annotations

import math

import numpy as np
import pytest

import numbagrad as ng
from numbagrad import nn
from numbagrad.nn import functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _pair(lib, arr, grad=True):
    return lib.tensor(arr, requires_grad=grad)


def _check_module(ours, theirs, *inputs, rtol=1e-5):
    """Forward values and the gradients of inputs and parameters, ours vs PyTorch's."""
    ours.load_state_dict({k: ng.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    xo = [_pair(ng, a, a.dtype.kind == "f") for a in inputs]
    xt = [_pair(torch, a, a.dtype.kind == "f") for a in inputs]
    yo, yt = ours(*xo), theirs(*xt)
    np.testing.assert_allclose(yo.detach().numpy(), yt.detach().numpy(), rtol=rtol, atol=1e-6)
    if yt.grad_fn is None:
        return
    assert yo.grad_fn.name() == yt.grad_fn.name()
    w = np.random.default_rng(1).standard_normal(tuple(yt.shape)).astype(inputs[0].dtype
                                                                          if inputs[0].dtype.kind
                                                                          == "f" else np.float32)
    (yo * ng.tensor(w)).sum().backward()
    (yt * torch.tensor(w)).sum().backward()
    for a, b in zip(xo, xt):
        if b.grad is not None:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-6)
    for (n, po), (_, pt) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(po.grad.numpy(), pt.grad.numpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=n)


RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3)).astype(np.float32)


@pytest.mark.parametrize("build", [
    lambda lib: lib.nn.Linear(3, 5),
    lambda lib: lib.nn.Linear(3, 2, bias=False),
    lambda lib: lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2)),
    lambda lib: lib.nn.ReLU(),
    lambda lib: lib.nn.LeakyReLU(0.2),
    lambda lib: lib.nn.ELU(alpha=0.7),
    lambda lib: lib.nn.GELU(),
    lambda lib: lib.nn.GELU(approximate="tanh"),
    lambda lib: lib.nn.SiLU(),
    lambda lib: lib.nn.Tanh(),
    lambda lib: lib.nn.Sigmoid(),
    lambda lib: lib.nn.Softplus(beta=2.0, threshold=1.0),
    lambda lib: lib.nn.Softmax(dim=1),
    lambda lib: lib.nn.LogSoftmax(dim=-1),
    lambda lib: lib.nn.Identity(54, unused=1),
    lambda lib: lib.nn.Flatten(0),
    lambda lib: lib.nn.Unflatten(1, (1, 3)),
    lambda lib: lib.nn.Dropout(0.3).eval(),
])
def test_module_matches_pytorch(build):
    ours, theirs = build(ng), build(torch)
    assert repr(ours) == repr(theirs)
    _check_module(ours, theirs, X)


def test_linear_on_a_batch_of_sequences_and_float64():
    _check_module(nn.Linear(3, 2).double(), torch.nn.Linear(3, 2).double(),
                  RNG.standard_normal((2, 5, 3)))


def test_bilinear_matches_pytorch():
    ours, theirs = nn.Bilinear(3, 2, 4), torch.nn.Bilinear(3, 2, 4)
    assert repr(ours) == repr(theirs)
    _check_module(ours, theirs, X, RNG.standard_normal((4, 2)).astype(np.float32))


def test_activation_reprs_with_inplace_and_defaults():
    for build in (lambda lib: lib.nn.ReLU(True), lambda lib: lib.nn.LeakyReLU(inplace=True),
                  lambda lib: lib.nn.ELU(inplace=True), lambda lib: lib.nn.SiLU(True),
                  lambda lib: lib.nn.Softmax(), lambda lib: lib.nn.Softplus(),
                  lambda lib: lib.nn.Dropout(), lambda lib: lib.nn.Flatten()):
        assert repr(build(ng)) == repr(build(torch))


@pytest.mark.parametrize("name", ["relu", "leaky_relu", "elu", "silu"])
def test_inplace_activations_write_into_their_input(name):
    a = X.astype(np.float64)
    xo = ng.tensor(a, requires_grad=True) * 1
    xt = torch.tensor(a, requires_grad=True) * 1
    yo = getattr(F, name)(xo, inplace=True)
    yt = getattr(TF, name)(xt, inplace=True)
    assert yo is xo and xo._version == 1
    np.testing.assert_allclose(xo.detach().numpy(), xt.detach().numpy(), rtol=1e-12)


def test_gelu_refuses_an_unknown_approximation():
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh."):
        F.gelu(ng.ones(2), approximate="foo")


def test_softmax_without_dim_warns_and_picks_pytorch_s_dim():
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        yo = nn.Softmax()(ng.tensor(X))
    with pytest.warns(UserWarning):
        yt = torch.nn.Softmax()(torch.tensor(X))
    np.testing.assert_allclose(yo.numpy(), yt.numpy(), rtol=1e-6)


# ---------------------------------------------------------------- dropout


def test_dropout_train_eval_and_scaling():
    ng.manual_seed(0)
    m = nn.Dropout(0.25)
    x = ng.ones(200, 50, requires_grad=True)
    y = m(x)
    vals = set(np.unique(y.detach().numpy()).tolist())
    assert vals <= {0.0, np.float32(1 / 0.75)}
    assert abs((y.detach().numpy() == 0).mean() - 0.25) < 0.02
    assert y.grad_fn.name() == "MulBackward0"
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())  # mask / (1 - p)
    m.eval()
    assert m(x) is x
    assert F.dropout(x, 0.0) is x and F.dropout(x, training=False) is x
    assert F.dropout(x, 1.0).detach().numpy().max() == 0
    for p in (-0.1, 1.1):
        msg = f"dropout probability has to be between 0 and 1, but got {p}"
        with pytest.raises(ValueError, match=msg):
            nn.Dropout(p)
        with pytest.raises(ValueError, match=msg):
            F.dropout(x, p)


# ---------------------------------------------------------------- embedding


def test_embedding_padding_idx_gradient_and_repr_match_pytorch():
    ours, theirs = nn.Embedding(5, 3, padding_idx=-1), torch.nn.Embedding(5, 3, padding_idx=-1)
    assert repr(ours) == repr(theirs) and ours.padding_idx == 4
    assert ours.weight[4].tolist() == [0.0, 0.0, 0.0]
    idx = np.array([[0, 4, 2], [2, 2, 4]])
    _check_module(ours, theirs, idx)
    assert ours.weight.grad[4].tolist() == [0.0, 0.0, 0.0]
    out = ours(ng.tensor(idx))
    assert out.grad_fn.name() == "EmbeddingBackward0" and out.shape == (2, 3, 3)


def test_embedding_scale_grad_by_freq_and_max_norm_match_pytorch():
    idx = np.array([0, 1, 1, 3, 1])
    for kw in ({"scale_grad_by_freq": True}, {"max_norm": 1.0}):
        ours, theirs = nn.Embedding(4, 2, **kw), torch.nn.Embedding(4, 2, **kw)
        assert repr(ours) == repr(theirs)
        _check_module(ours, theirs, idx)
        np.testing.assert_allclose(ours.weight.detach().numpy(),
                                   theirs.weight.detach().numpy(), rtol=1e-6)


def test_embedding_from_pretrained_and_errors():
    w = ng.tensor([[1.0, 2.0], [3.0, 4.0]])
    e = nn.Embedding.from_pretrained(w)
    assert repr(e) == "Embedding(2, 2)" and not e.weight.requires_grad
    assert e.weight.data_ptr() == w.data_ptr()
    assert nn.Embedding.from_pretrained(w, freeze=False).weight.requires_grad
    with pytest.raises(IndexError, match="index out of range in self"):
        e(ng.tensor([2]))
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices' to have one "
                       "of the following scalar types: Long, Int; but got "
                       "numbagrad.FloatTensor instead"):
        e(ng.tensor([1.0]))
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(5, 3, padding_idx=5)


def test_one_hot_matches_pytorch():
    t = [0, 2, 1]
    assert F.one_hot(ng.tensor(t)).tolist() == TF.one_hot(torch.tensor(t)).tolist()
    assert F.one_hot(ng.tensor(t), 5).dtype is ng.int64
    for args in (([0, 3], 3), ([-1], 3)):
        with pytest.raises(RuntimeError) as theirs:
            TF.one_hot(torch.tensor(args[0]), args[1])
        with pytest.raises(RuntimeError) as ours:
            F.one_hot(ng.tensor(args[0]), args[1])
        assert str(ours.value) == str(theirs.value)


# ---------------------------------------------------------------- nn.utils


@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf, 3.0])
def test_clip_grad_norm_matches_pytorch(norm_type):
    grads = [RNG.standard_normal((3, 2)).astype(np.float32), RNG.standard_normal(4).astype(
        np.float32)]
    results = []
    for lib in (ng, torch):
        params = [lib.zeros(*g.shape, requires_grad=True) for g in grads]
        for p, g in zip(params, grads):
            p.grad = lib.tensor(g)
        total = lib.nn.utils.clip_grad_norm_(params, 0.5, norm_type=norm_type)
        results.append((total.item(), [p.grad.numpy().copy() for p in params]))
    (to, go), (tt, gt) = results
    assert to == pytest.approx(tt, rel=1e-5)
    for a, b in zip(go, gt):
        np.testing.assert_allclose(a, b, rtol=1e-5)


def test_clip_grad_norm_below_the_limit_nonfinite_and_empty():
    p = ng.zeros(2, requires_grad=True)
    p.grad = ng.tensor([0.3, 0.4])
    assert nn.utils.clip_grad_norm_(p, 10.0).item() == pytest.approx(0.5)
    assert p.grad.tolist() == pytest.approx([0.3, 0.4])
    p.grad = ng.tensor([float("inf"), 0.0])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from "
                       "`parameters` is non-finite"):
        nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    assert nn.utils.clip_grad_norm_([], 1.0).item() == 0.0


def test_clip_grad_value_and_vector_round_trip():
    p = ng.zeros(3, requires_grad=True)
    p.grad = ng.tensor([-2.0, 0.5, 3.0])
    nn.utils.clip_grad_value_([p], 1.0)
    assert p.grad.tolist() == [-1.0, 0.5, 1.0]
    m = nn.Linear(2, 3)
    vec = nn.utils.parameters_to_vector(m.parameters())
    assert vec.shape == (9,)
    nn.utils.vector_to_parameters(ng.arange(9.0), m.parameters())
    assert m.weight.tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    assert m.bias.tolist() == [6.0, 7.0, 8.0] and type(m.weight) is nn.Parameter


def test_clip_grad_value_without_any_gradient_raises_as_pytorch():
    for lib in (ng, torch):
        p = lib.nn.Parameter(lib.ones(3))
        q = lib.nn.Parameter(lib.ones(2))
        q.grad = lib.tensor([5.0, -0.5])
        assert lib.nn.utils.clip_grad_value_([p, q], 1.0) is None
        assert q.grad.tolist() == [1.0, -0.5]
        for params in ([p], p, [], (t for t in [])):
            with pytest.raises(RuntimeError) as err:
                lib.nn.utils.clip_grad_value_(params, 1.0)
            assert str(err.value) == nn.utils.clip_grad.ERR_NO_GRADS


def test_training_step_with_an_optimizer_matches_pytorch():
    ours = nn.Sequential(nn.Linear(3, 8), nn.GELU(), nn.Linear(8, 1))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.GELU(), torch.nn.Linear(8, 1))
    ours.load_state_dict({k: ng.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    opt_o = ng.optim.SGD(ours.parameters(), lr=0.1)
    opt_t = torch.optim.SGD(theirs.parameters(), lr=0.1)
    for _ in range(3):
        for m, opt, lib in ((ours, opt_o, ng), (theirs, opt_t, torch)):
            opt.zero_grad()
            loss = (m(lib.tensor(X)) ** 2).mean()
            loss.backward()
            lib.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
            opt.step()
    for (n, a), (_, b) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-6, err_msg=n)
