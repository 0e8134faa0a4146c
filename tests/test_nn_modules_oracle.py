"""Layers against PyTorch: the same module built in both libraries, PyTorch's weights loaded
into ours through ``state_dict``; then reprs, state_dict keys, outputs, and the gradients of
the input and of every parameter compared, in train and eval mode where they differ."""

import copy

import numpy as np
import pytest

import numbagrad as ng
from devices import on_cuda

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)


def _copy_weights(ours, theirs):
    state = {k: ng.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()}
    result = ours.load_state_dict(state)
    assert result.missing_keys == [] and result.unexpected_keys == []


def _outputs(out):
    """The tensors of a module's output (RNNs return nested tuples)."""
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _outputs(o)]
    return [out]


def _run(lib, module, x, seed_grads):
    xt = lib.tensor(x, requires_grad=True)
    outs = _outputs(module(xt))
    total = sum((o * lib.tensor(g)).sum() for o, g in zip(outs, seed_grads))
    total.backward()
    grads = {k: p.grad for k, p in module.named_parameters()}
    return [o.detach().numpy() for o in outs], xt.grad, grads


MODULES = {
    # name: (constructor on an nn namespace, input shape)
    "conv2d": (lambda nn: nn.Conv2d(2, 4, 3, padding=1), (2, 2, 5, 6)),
    "conv2d_strided_groups": (lambda nn: nn.Conv2d(4, 6, (3, 2), stride=2, dilation=(1, 2),
                                                   groups=2, bias=False), (2, 4, 7, 8)),
    "conv2d_same_reflect": (lambda nn: nn.Conv2d(2, 3, 4, padding="same",
                                                 padding_mode="reflect"), (1, 2, 6, 5)),
    "conv2d_circular": (lambda nn: nn.Conv2d(1, 2, 3, padding=1, padding_mode="circular"),
                        (2, 1, 4, 4)),
    "conv1d": (lambda nn: nn.Conv1d(3, 2, 3, stride=2, padding=1), (2, 3, 9)),
    "maxpool2d": (lambda nn: nn.MaxPool2d(3, 2, 1, ceil_mode=True), (2, 2, 7, 6)),
    "maxpool1d": (lambda nn: nn.MaxPool1d(2), (2, 3, 8)),
    "avgpool2d": (lambda nn: nn.AvgPool2d(2, padding=1, count_include_pad=False), (1, 2, 5, 5)),
    "avgpool1d": (lambda nn: nn.AvgPool1d(3, 2), (2, 2, 9)),
    "adaptive_avgpool2d": (lambda nn: nn.AdaptiveAvgPool2d((2, None)), (2, 3, 5, 4)),
    "layernorm": (lambda nn: nn.LayerNorm((3, 4)), (2, 5, 3, 4)),
    "layernorm_no_bias": (lambda nn: nn.LayerNorm(4, bias=False), (3, 4)),
    "groupnorm": (lambda nn: nn.GroupNorm(2, 4), (3, 4, 5)),
    "batchnorm1d": (lambda nn: nn.BatchNorm1d(3), (6, 3)),
    "batchnorm1d_3d": (lambda nn: nn.BatchNorm1d(3, momentum=None), (4, 3, 5)),
    "batchnorm2d": (lambda nn: nn.BatchNorm2d(2, affine=False), (3, 2, 4, 4)),
    "rnn": (lambda nn: nn.RNN(3, 4, num_layers=2, nonlinearity="relu"), (5, 2, 3)),
    "lstm": (lambda nn: nn.LSTM(3, 4, batch_first=True, bidirectional=True), (2, 5, 3)),
    "gru": (lambda nn: nn.GRU(3, 4, num_layers=2), (4, 2, 3)),
    "lstm_unbatched": (lambda nn: nn.LSTM(3, 2), (5, 3)),
    "rnncell": (lambda nn: nn.RNNCell(3, 4), (2, 3)),
    "lstmcell": (lambda nn: nn.LSTMCell(3, 4, bias=False), (2, 3)),
    "grucell": (lambda nn: nn.GRUCell(3, 4), (3,)),
    "sequential_cnn": (lambda nn: nn.Sequential(
        nn.Conv2d(1, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(12, 5), nn.LayerNorm(5), nn.GELU(), nn.Linear(5, 2)), (4, 1, 6, 6)),
}


@pytest.mark.parametrize("mode", ["train", "eval"])
@pytest.mark.parametrize("name", list(MODULES))
def test_module_matches_torch(name, mode):
    make, shape = MODULES[name]
    torch.manual_seed(0)
    theirs = make(torch.nn).double()
    ours = make(ng.nn).double()
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _copy_weights(ours, theirs)
    getattr(ours, mode)()
    getattr(theirs, mode)()
    x = rng.normal(size=shape)
    with torch.no_grad():
        probe = _outputs(theirs(torch.tensor(x)))
    seeds = [rng.normal(size=tuple(o.shape)) for o in probe]
    _copy_weights(ours, theirs)  # (the probe moved PyTorch's running statistics)
    our_out, our_gx, our_grads = _run(ng, ours, x, seeds)
    their_out, their_gx, their_grads = _run(torch, theirs, x, seeds)
    for a, b in zip(our_out, their_out):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(our_gx.numpy(), their_gx.numpy(), rtol=1e-9, atol=1e-12)
    for k in their_grads:
        np.testing.assert_allclose(our_grads[k].numpy(), their_grads[k].numpy(), rtol=1e-9,
                                   atol=1e-12, err_msg=k)
    for k, v in theirs.state_dict().items():  # (running statistics, after the step)
        np.testing.assert_allclose(ours.state_dict()[k].numpy(), v.numpy(), rtol=1e-12,
                                   err_msg=k)


def test_default_initialisation_bounds_match_torch():
    # the same distributions: the bounds PyTorch's kaiming_uniform_(a=sqrt(5)) and bias rule give
    for make in (lambda nn: nn.Conv2d(3, 8, 5), lambda nn: nn.Linear(50, 7),
                 lambda nn: nn.LSTM(10, 20), lambda nn: nn.Conv1d(4, 2, 3, groups=2)):
        ours, theirs = make(ng.nn), make(torch.nn)
        for (k, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
            bound = float(q.detach().abs().max())
            assert p.shape == tuple(q.shape) and p.dtype.name == "float32"
            top = float(p.detach().abs().max())
            assert bound * 0.5 <= top <= bound * 1.2 + 1e-6, k


ERRORS = {
    "conv_groups": lambda nn: nn.Conv2d(3, 4, 3, groups=2),
    "conv_same_strided": lambda nn: nn.Conv2d(3, 3, 3, stride=2, padding="same"),
    "batchnorm_rank": lambda nn: nn.BatchNorm2d(3)(nn.Identity()(_T["t"].randn(2, 3, 4))),
    "batchnorm_one_value": lambda nn: nn.BatchNorm1d(3)(_T["t"].randn(1, 3)),
    "groupnorm_groups": lambda nn: nn.GroupNorm(4, 6),
    "layernorm_shape": lambda nn: nn.LayerNorm(4)(_T["t"].randn(2, 3)),
    "rnn_input_size": lambda nn: nn.LSTM(3, 4)(_T["t"].randn(5, 2, 4)),
    "rnn_hidden_size": lambda nn: nn.GRU(3, 4)(_T["t"].randn(5, 2, 3), _T["t"].randn(1, 3, 4)),
    "rnn_nonlinearity": lambda nn: nn.RNN(3, 4, nonlinearity="sigmoid"),
    "cell_input_size": lambda nn: nn.RNNCell(3, 4)(_T["t"].randn(2, 5)),
}
_T = {}


@pytest.mark.parametrize("name", list(ERRORS))
def test_module_errors_match_torch(name):
    got = []
    for lib in (torch, ng):
        _T["t"] = lib
        with pytest.raises(Exception) as e:
            ERRORS[name](lib.nn)
        got.append((type(e.value).__name__, str(e.value).replace("numbagrad.", "torch.")))
    assert got[0] == got[1]


def test_conv_padding_mode_error():
    # (PyTorch lists the modes from a set, in an order that changes from run to run)
    with pytest.raises(ValueError, match="padding_mode must be one of .*, but got "
                                         "padding_mode='edge'"):
        ng.nn.Conv2d(3, 3, 3, padding_mode="edge")


def test_loss_modules_match_torch():
    x, t = rng.normal(size=(4, 3)), rng.integers(0, 3, 4)
    p = rng.random((4, 3))
    for make, target in [
        (lambda nn, L: nn.CrossEntropyLoss(weight=L.tensor([1.0, 2.0, 0.5], dtype=L.float64),
                                           label_smoothing=0.1, ignore_index=2), t),
        (lambda nn, L: nn.NLLLoss(reduction="sum"), t),
        (lambda nn, L: nn.MSELoss(), p), (lambda nn, L: nn.L1Loss(reduction="none"), p),
        (lambda nn, L: nn.SmoothL1Loss(beta=0.3), p), (lambda nn, L: nn.HuberLoss(delta=0.4), p),
        (lambda nn, L: nn.BCEWithLogitsLoss(pos_weight=L.tensor([1.0, 2.0, 3.0],
                                                                dtype=L.float64)), p),
        (lambda nn, L: nn.KLDivLoss(reduction="batchmean", log_target=True), np.log(p)),
    ]:
        vals = []
        for L in (ng, torch):
            loss = make(L.nn, L)
            xt = L.tensor(x, requires_grad=True)
            out = loss(xt, L.tensor(target))
            out.sum().backward()
            vals.append((out.detach().numpy(), xt.grad.numpy(), repr(loss),
                         list(loss.state_dict())))
        np.testing.assert_allclose(vals[0][0], vals[1][0], rtol=1e-10)
        np.testing.assert_allclose(vals[0][1], vals[1][1], rtol=1e-9, atol=1e-12)
        assert vals[0][2:] == vals[1][2:]
    with pytest.raises(ValueError, match="bad is not a valid value for reduction"):
        ng.nn.MSELoss(reduction="bad")(ng.ones(2), ng.ones(2))


# ---------------------------------------------------------------- recurrent layers' options

RECURRENT = {
    # name: (constructor on an nn namespace, input shape, initial state shape or None)
    "lstm_2layers_bidir_states": (lambda nn: nn.LSTM(3, 4, num_layers=2, bidirectional=True),
                                  (5, 2, 3), (4, 2, 4)),
    "lstm_no_bias_batch_first": (lambda nn: nn.LSTM(3, 4, bias=False, batch_first=True),
                                 (2, 5, 3), (1, 2, 4)),
    "gru_bidir_batch_first_states": (lambda nn: nn.GRU(3, 4, batch_first=True,
                                                       bidirectional=True), (2, 5, 3), (2, 2, 4)),
    "gru_unbatched_states": (lambda nn: nn.GRU(3, 4, num_layers=2), (5, 3), (2, 4)),
    "rnn_tanh_bidir_no_bias": (lambda nn: nn.RNN(3, 4, bias=False, bidirectional=True),
                               (5, 2, 3), None),
    "rnn_relu_2layers_states": (lambda nn: nn.RNN(3, 4, 2, nonlinearity="relu"), (5, 2, 3),
                                (2, 2, 4)),
}


@pytest.mark.parametrize("name", list(RECURRENT))
def test_recurrent_layer_options_match_torch(name):
    # the initial states given (and differentiated) too, and every output seeded
    make, shape, state_shape = RECURRENT[name]
    torch.manual_seed(0)
    theirs = make(torch.nn).double()
    ours = make(ng.nn).double()
    _copy_weights(ours, theirs)
    lstm = isinstance(theirs, torch.nn.LSTM)
    x = rng.normal(size=shape)
    states = [] if state_shape is None else [rng.normal(size=state_shape)
                                             for _ in range(2 if lstm else 1)]
    results, seeds = [], None
    for lib, module in ((torch, theirs), (ng, ours)):
        xt = lib.tensor(x, requires_grad=True)
        st = [lib.tensor(s, requires_grad=True) for s in states]
        outs = _outputs(module(xt, (tuple(st) if lstm else st[0]) if st else None))
        if seeds is None:
            seeds = [rng.normal(size=tuple(o.shape)) for o in outs]
        sum((o * lib.tensor(g)).sum() for o, g in zip(outs, seeds)).backward()
        grads = [xt.grad, *[s.grad for s in st], *[p.grad for p in module.parameters()]]
        results.append(([o.detach().numpy() for o in outs], [g.numpy() for g in grads]))
    for a, b in zip(results[1][0] + results[1][1], results[0][0] + results[0][1]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_lstm_output_node_is_pytorchs():
    # PyTorch's CPU LSTM runs a layer as one op: its output's node, and the stacked states'
    for lib in (torch, ng):
        out, (h, c) = lib.nn.LSTM(3, 4)(lib.randn(5, 2, 3))
        assert [type(t.grad_fn).__name__ for t in (out, h, c)] == [
            "MkldnnRnnLayerBackward0", "StackBackward0", "StackBackward0"]


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_recurrent_layer_double_backward(kind):
    # a recorded backward replays the layer's steps as the cells' ops: second derivatives
    ng.manual_seed(0)
    module = getattr(ng.nn, kind)(2, 3, bidirectional=True).double()
    x = ng.randn(3, 2, 2, dtype=ng.float64, requires_grad=True)
    h0 = ng.randn(2, 2, 3, dtype=ng.float64, requires_grad=True)
    state = (h0, ng.randn(2, 2, 3, dtype=ng.float64)) if kind == "LSTM" else h0

    def fn(x, h0):
        out = module(x, (h0, state[1]) if kind == "LSTM" else h0)
        return out[0]

    assert ng.autograd.gradgradcheck(fn, (x, h0))


@on_cuda
@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_recurrent_layer_on_cuda_equals_cpu(kind):
    ng.manual_seed(0)
    cpu_module = getattr(ng.nn, kind)(3, 4, num_layers=2, bidirectional=True, batch_first=True)
    x = rng.normal(size=(2, 5, 3)).astype(np.float32)
    modules = {"cpu": cpu_module, "cuda": copy.deepcopy(cpu_module).to("cuda")}
    results = []
    for dev, module in modules.items():
        xt = ng.tensor(x, device=dev, requires_grad=True)
        out, state = module(xt)
        h = state[0] if kind == "LSTM" else state
        ((out * out).sum() + (h * h).sum()).backward()
        results.append([out.detach().cpu().numpy(), xt.grad.cpu().numpy()]
                       + [p.grad.cpu().numpy() for p in module.parameters()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
