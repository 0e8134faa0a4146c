"""``nn.LSTM(..., proj_size=k)`` against PyTorch: the parameters (names, order, shapes,
initialisation), the states' sizes, values and gradients of padded, unbatched and packed inputs
from the same weights, and PyTorch's errors."""

import math

import numpy as np
import pytest

import numbagrad as ng
from devices import on_cuda

torch = pytest.importorskip("torch")

# (PyTorch warns once that oneDNN has no projected LSTM: not numbagrad's concern)
pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections:UserWarning")


def _raises(error, message, call):
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == message


def _pair(input_size=4, **kw):
    """A float64 PyTorch LSTM and a numbagrad one holding the same weights."""
    torch.manual_seed(0)
    tm = torch.nn.LSTM(input_size, **kw).double()
    nm = ng.nn.LSTM(input_size, **kw).double()
    nm.load_state_dict({k: ng.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    return tm, nm


def _sizes(kw):
    directions = 2 if kw.get("bidirectional") else 1
    layers = kw.get("num_layers", 1) * directions
    return layers, kw.get("proj_size") or kw["hidden_size"], kw["hidden_size"]


def _compare(kw, x, hx=None, packed_lengths=None, batch_first=False):
    """Runs both libraries on ``x`` (and ``hx``, arrays or None): the outputs' values, their
    grad_fn names, and the gradients of the input, states and every parameter under uneven
    incoming gradients."""
    tm, nm = _pair(x.shape[-1], batch_first=batch_first, **kw)
    got = []
    for lib, m in ((torch, tm), (ng, nm)):
        xs = lib.tensor(x, requires_grad=True)
        states = None if hx is None else tuple(lib.tensor(s, requires_grad=True) for s in hx)
        inp = xs
        if packed_lengths is not None:
            inp = lib.nn.utils.rnn.pack_padded_sequence(
                xs, lib.tensor(packed_lengths), batch_first=batch_first, enforce_sorted=False)
        out, (h, c) = m(inp, states)
        if packed_lengths is not None:
            out = out.data
        names = [t.grad_fn.name().split("::")[-1] for t in (out, h, c)]
        weights = [lib.tensor(np.cos(np.arange(t.numel())).reshape(tuple(t.shape)))
                   for t in (out, h, c)]
        total = sum((t * w).sum() for t, w in zip((out, h, c), weights))
        wrt = [xs, *(states or ()), *m.parameters()]
        grads = lib.autograd.grad(total, wrt)
        got.append(([t.detach().numpy() for t in (out, h, c)], names,
                    [g.numpy() for g in grads]))
    (want, want_names, want_grads), (vals, names, grads) = got
    for v, w in zip(vals, want, strict=True):
        assert v.shape == w.shape
        np.testing.assert_allclose(v, w, rtol=1e-10, atol=1e-12)
    assert names == want_names
    for g, w in zip(grads, want_grads, strict=True):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-11)
    return vals


CONFIGS = [
    dict(hidden_size=6, proj_size=3),
    dict(hidden_size=5, proj_size=1, bias=False),
    dict(hidden_size=6, proj_size=2, num_layers=2),
    dict(hidden_size=6, proj_size=2, bidirectional=True),
    dict(hidden_size=7, proj_size=3, num_layers=3, bidirectional=True),
    dict(hidden_size=6, proj_size=4, num_layers=2, bidirectional=True, bias=False),
]


@pytest.mark.parametrize("kw", CONFIGS)
def test_parameters_are_pytorchs(kw):
    tm, nm = _pair(**kw)
    want = [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
    assert [(n, tuple(p.shape)) for n, p in nm.named_parameters()] == want
    assert nm._flat_weights_names == tm._flat_weights_names
    assert list(nm.state_dict()) == list(tm.state_dict())
    assert [[tuple(p.shape) for p in ps] for ps in nm.all_weights] == [
        [tuple(p.shape) for p in ps] for ps in tm.all_weights]
    assert repr(nm) == repr(tm)
    assert nm.proj_size == tm.proj_size


def test_projection_weight_shapes():
    m = ng.nn.LSTM(3, 8, num_layers=2, proj_size=5, bidirectional=True)
    assert tuple(m.weight_ih_l0.shape) == (32, 3)
    assert tuple(m.weight_hh_l0.shape) == (32, 5)
    assert tuple(m.weight_hr_l0.shape) == (5, 8)
    assert tuple(m.weight_hr_l0_reverse.shape) == (5, 8)
    assert tuple(m.weight_ih_l1.shape) == (32, 10)  # (both directions' h, proj_size each)
    assert tuple(m.weight_hh_l1_reverse.shape) == (32, 5)


def test_reset_parameters_bound_includes_weight_hr():
    ng.manual_seed(0)
    m = ng.nn.LSTM(3, 16, proj_size=4)
    bound = 1 / math.sqrt(16)
    for name, p in m.named_parameters():
        a = p.detach().numpy()
        assert np.abs(a).max() <= bound, name
        assert np.unique(a).size == a.size, name
    before = m.weight_hr_l0.detach().numpy().copy()
    m.reset_parameters()
    after = m.weight_hr_l0.detach().numpy()
    assert not np.array_equal(before, after) and np.abs(after).max() <= bound


@pytest.mark.parametrize("kw", CONFIGS)
@pytest.mark.parametrize("given", [False, True])
def test_values_and_gradients(kw, given):
    rng = np.random.default_rng(1)
    layers, proj, hidden = _sizes(kw)
    x = rng.standard_normal((5, 3, 4))
    hx = (rng.standard_normal((layers, 3, proj)), rng.standard_normal((layers, 3, hidden)))
    out, h, c = _compare(kw, x, hx if given else None)
    directions = 2 if kw.get("bidirectional") else 1
    assert out.shape == (5, 3, proj * directions)
    assert h.shape == (layers, 3, proj) and c.shape == (layers, 3, hidden)


def test_batch_first():
    rng = np.random.default_rng(2)
    kw = dict(hidden_size=6, proj_size=2, num_layers=2, bidirectional=True)
    hx = (rng.standard_normal((4, 3, 2)), rng.standard_normal((4, 3, 6)))
    out, _, _ = _compare(kw, rng.standard_normal((3, 5, 4)), hx, batch_first=True)
    assert out.shape == (3, 5, 4)


def test_unbatched():
    rng = np.random.default_rng(3)
    kw = dict(hidden_size=6, proj_size=3, num_layers=2)
    hx = (rng.standard_normal((2, 3)), rng.standard_normal((2, 6)))
    out, h, c = _compare(kw, rng.standard_normal((5, 4)), hx)
    assert out.shape == (5, 3) and h.shape == (2, 3) and c.shape == (2, 6)


@pytest.mark.parametrize("lengths", [[3, 5, 2], [4, 4, 4], [1, 2, 5]])
@pytest.mark.parametrize("kw", [CONFIGS[0], CONFIGS[4]])
def test_packed(kw, lengths):
    rng = np.random.default_rng(4)
    layers, proj, hidden = _sizes(kw)
    hx = (rng.standard_normal((layers, 3, proj)), rng.standard_normal((layers, 3, hidden)))
    _compare(kw, rng.standard_normal((5, 3, 4)), hx, packed_lengths=lengths)
    _compare(kw, rng.standard_normal((5, 3, 4)), None, packed_lengths=lengths)


def test_double_backward():
    rng = np.random.default_rng(5)
    tm, nm = _pair(hidden_size=5, proj_size=2, num_layers=2)
    x = rng.standard_normal((4, 2, 4))
    got = []
    for lib, m in ((torch, tm), (ng, nm)):
        xs = lib.tensor(x, requires_grad=True)
        out, (h, c) = m(xs)
        (g,) = lib.autograd.grad((out ** 2).sum() + c.sum(), xs, create_graph=True)
        grads = lib.autograd.grad((g ** 2).sum(), [xs, m.weight_hr_l0, m.weight_hh_l1])
        got.append([t.numpy() for t in grads])
    for a, b in zip(*got, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-11)


def test_load_state_dict_from_pytorch_float32():
    torch.manual_seed(0)
    tm = torch.nn.LSTM(4, 6, proj_size=3, bidirectional=True)
    nm = ng.nn.LSTM(4, 6, proj_size=3, bidirectional=True)
    nm.load_state_dict({k: ng.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    x = np.random.default_rng(6).standard_normal((5, 2, 4)).astype(np.float32)
    want, (wh, wc) = tm(torch.tensor(x))
    out, (h, c) = nm(ng.tensor(x))
    assert out.dtype == ng.float32
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(h.detach().numpy(), wh.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c.detach().numpy(), wc.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("proj_size, message", [
    (-1, "proj_size should be a positive integer or zero to disable projections"),
    (6, "proj_size has to be smaller than hidden_size"),
    (7, "proj_size has to be smaller than hidden_size"),
])
def test_bad_proj_size(lib, proj_size, message):
    _raises(ValueError, message, lambda: lib.nn.LSTM(4, 6, proj_size=proj_size))


@pytest.mark.parametrize("cls", ["RNN", "GRU"])
@pytest.mark.parametrize("proj_size", [0, 2])
def test_proj_size_only_for_lstm(lib, cls, proj_size):
    _raises(ValueError, "proj_size argument is only supported for LSTM, not RNN or GRU",
            lambda: getattr(lib.nn, cls)(4, 6, proj_size=proj_size))


def test_unknown_keyword_of_rnn(lib):
    _raises(TypeError, "RNNBase.__init__() got an unexpected keyword argument 'foo'",
            lambda: lib.nn.GRU(4, 6, foo=1))


def test_state_sizes_are_checked(lib):
    m = lib.nn.LSTM(4, 6, num_layers=2, proj_size=3, bidirectional=True)
    x = lib.zeros(5, 2, 4)
    _raises(RuntimeError, "Expected hidden[0] size (4, 2, 3), got [4, 2, 6]",
            lambda: m(x, (lib.zeros(4, 2, 6), lib.zeros(4, 2, 6))))
    _raises(RuntimeError, "Expected hidden[1] size (4, 2, 6), got [4, 2, 3]",
            lambda: m(x, (lib.zeros(4, 2, 3), lib.zeros(4, 2, 3))))
    out, (h, c) = m(x, (lib.zeros(4, 2, 3), lib.zeros(4, 2, 6)))
    assert tuple(out.shape) == (5, 2, 6)


@on_cuda
def test_on_cuda_as_on_cpu():
    rng = np.random.default_rng(7)
    m = ng.nn.LSTM(4, 5, num_layers=2, proj_size=2, bidirectional=True).double()
    x = rng.standard_normal((4, 2, 4))
    got = []
    for device in ("cpu", "cuda"):
        m = m.to(device)
        xs = ng.tensor(x, device=device, requires_grad=True)
        out, (h, c) = m(xs)
        assert out.device.type == device
        (g,) = ng.autograd.grad(out.sum() + (h * c[..., :2]).sum(), xs)
        got.append((out.detach().cpu().numpy(), g.cpu().numpy()))
    np.testing.assert_allclose(got[1][0], got[0][0], rtol=1e-10)
    np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("x_shape,h_shape", [((5, 2, 4), (2, 6)), ((5, 4), (1, 2, 6)),
                                             ((5, 2, 4), (1, 1, 2, 6))])
def test_states_of_the_wrong_batchedness_are_refused_as_pytorch(mode, x_shape, h_shape):
    errors = []
    for lib in (ng, torch):
        m = getattr(lib.nn, mode)(4, 6)
        h = lib.zeros(*h_shape)
        with pytest.raises(RuntimeError) as e:
            m(lib.zeros(*x_shape), (h, h) if mode == "LSTM" else h)
        errors.append(str(e.value))
    assert errors[0] == errors[1]
