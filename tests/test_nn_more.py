"""More of ``nn`` against PyTorch: padded and packed sequences (``nn.utils.rnn``) and the
recurrent layers on packed input; ``RMSNorm``; ``nn.init``'s ``dirac_``, ``sparse_`` and
deprecated names; ``get_total_norm``, ``clip_grads_with_norm_`` and ``clip_grad_norm``;
``EmbeddingBag``; ``gumbel_softmax``; ``LazyLinear`` and the lazy convolutions and
normalisations; ``weight_norm`` (hook and parametrization)
and ``parametrize``."""

import math

import numpy as np
import pytest

import numbagrad as ng

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)


def _rnn_mod(lib):
    return lib.nn.utils.rnn


def _name(t):
    return t.grad_fn.name().split("::")[-1]


# ---------------------------------------------------------------- padding and packing


def test_pad_sequence_sides_and_values(lib):
    R = _rnn_mod(lib)
    a, b = lib.tensor([[1.0, 2.0], [3.0, 4.0]]), lib.tensor([[5.0, 6.0]])
    assert R.pad_sequence([a, b]).tolist() == [[[1, 2], [5, 6]], [[3, 4], [0, 0]]]
    left = R.pad_sequence([a, b], batch_first=True, padding_value=-1.0, padding_side="left")
    assert left.tolist() == [[[1, 2], [3, 4]], [[-1, -1], [5, 6]]]


@pytest.mark.parametrize("call, error, message", [
    (lambda R, t: R.pad_sequence([]), RuntimeError, "received an empty list of sequences"),
    (lambda R, t: R.pad_sequence([t], padding_side="up"), RuntimeError,
     "Expected padding_side to be one of left or right, but got up."),
    (lambda R, t: R.pad_sequence(3), RuntimeError,
     "pad_sequence: Expected iterable for input sequences, but got arg of type: <class 'int'>"),
    (lambda R, t: R.pack_padded_sequence(t, [1, 2]), RuntimeError,
     "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can "
     "pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this "
     "requirement if you do not need ONNX exportability."),
    (lambda R, t: R.pack_padded_sequence(t, [2, 0]), RuntimeError,
     "Length of all samples has to be greater than 0, but found an element in 'lengths' that "
     "is <= 0"),
    (lambda R, t: R.pack_padded_sequence(t, [2, 2, 1]), RuntimeError,
     "Expected `len(lengths)` to be equal to batch_size, but got 3 (batch_size=2)"),
    (lambda R, t: R.pad_packed_sequence(R.pack_padded_sequence(t, [2, 1]), total_length=1),
     ValueError, "Expected total_length to be at least the length of the longest sequence in "
     "input, but got total_length=1 and max sequence length being 2"),
])
def test_sequence_errors(lib, call, error, message):
    with pytest.raises(error) as info:
        call(_rnn_mod(lib), lib.zeros(2, 2, 3))
    assert str(info.value) == message


def test_pack_and_pad_side_by_side():
    """Values, batch sizes, indices, lengths, nodes and gradients of pad/pack/unpack, unsorted
    and batch first, against PyTorch's."""
    seqs = [rng.standard_normal((n, 2)).astype(np.float32) for n in (2, 4, 1)]
    got = []
    for lib in (ng, torch):
        R = _rnn_mod(lib)
        xs = [lib.tensor(s, requires_grad=True) for s in seqs]
        padded = R.pad_sequence(xs, batch_first=True)
        packed = R.pack_padded_sequence(padded, lib.tensor([2, 4, 1]), batch_first=True,
                                        enforce_sorted=False)
        out, lengths = R.pad_packed_sequence(packed, padding_value=-2.0, total_length=5)
        weights = lib.arange(out.numel()).view(out.shape).to(out.dtype)
        (out * weights).sum().backward()
        again = R.pack_sequence(xs, enforce_sorted=False)
        got.append(dict(
            padded=padded.detach().numpy(), nodes=[_name(padded), _name(packed.data), _name(out)],
            data=packed.data.detach().numpy(), batch_sizes=packed.batch_sizes.tolist(),
            sorted=packed.sorted_indices.tolist(), unsorted=packed.unsorted_indices.tolist(),
            out=out.detach().numpy(), lengths=lengths.tolist(),
            grads=[x.grad.numpy() for x in xs], again=again.data.detach().numpy(),
            unpacked=[t.detach().numpy() for t in R.unpack_sequence(again)],
            unpadded=[t.detach().numpy() for t in R.unpad_sequence(
                padded, lib.tensor([2, 4, 1]), batch_first=True)]))
    ours, theirs = got
    for key in ours:
        if isinstance(ours[key], list) and ours[key] and isinstance(ours[key][0], np.ndarray):
            for a, b in zip(ours[key], theirs[key], strict=True):
                np.testing.assert_array_equal(a, b)
        elif isinstance(ours[key], np.ndarray):
            np.testing.assert_array_equal(ours[key], theirs[key])
        else:
            assert ours[key] == theirs[key], key


def test_packed_sequence_tuple_and_to(lib):
    R = _rnn_mod(lib)
    packed = R.pack_sequence([lib.tensor([1, 2, 3]), lib.tensor([4, 5])])
    data, batch_sizes, sorted_indices, unsorted_indices = packed
    assert data.tolist() == [1, 4, 2, 5, 3] and batch_sizes.tolist() == [2, 2, 1]
    assert sorted_indices is None and unsorted_indices is None
    assert packed.to(lib.int64) is packed
    double = packed.to(lib.float64)
    assert double.data.dtype == lib.float64 and double.batch_sizes is packed.batch_sizes
    assert packed.cpu() is packed and packed.long() is packed
    assert [p.data.dtype for p in (packed.int(), packed.short(), packed.char(), packed.byte(),
                                   packed.float(), packed.double())] == [
        lib.int32, lib.int16, lib.int8, lib.uint8, lib.float32, lib.float64]
    assert repr(packed).startswith("PackedSequence(data=tensor([1, 4, 2, 5, 3]), batch_sizes=")
    assert R.invert_permutation(lib.tensor([2, 0, 1])).tolist() == [1, 2, 0]
    made = R.PackedSequence(data, batch_sizes, lib.tensor([1, 0]))
    assert made.unsorted_indices.tolist() == [1, 0]


# ---------------------------------------------------------------- recurrent layers, packed


@pytest.mark.parametrize("cls, layers, bidirectional, given, lengths", [
    ("LSTM", 1, False, False, [2, 4, 1, 4]), ("LSTM", 2, True, True, [2, 4, 1, 4]),
    ("LSTM", 2, True, True, [4, 4, 4, 4]), ("GRU", 1, True, True, [2, 4, 1, 4]),
    ("GRU", 2, False, False, [2, 4, 1, 4]), ("RNN", 2, True, False, [2, 4, 1, 4]),
    ("RNN", 1, False, True, [2, 4, 1, 4]),
])
def test_recurrent_layers_on_packed_input(cls, layers, bidirectional, given, lengths):
    """Packed outputs, final states (each sequence's at its own length) and the gradients of the
    input, the initial states and every parameter, against PyTorch's."""
    x = rng.standard_normal((4, 4, 3)).astype(np.float32)
    directions = 2 if bidirectional else 1
    state = rng.standard_normal((layers * directions, 4, 5)).astype(np.float32)
    theirs = getattr(torch.nn, cls)(3, 5, num_layers=layers, bidirectional=bidirectional,
                                    batch_first=True)
    ours = getattr(ng.nn, cls)(3, 5, num_layers=layers, bidirectional=bidirectional,
                               batch_first=True)
    ours.load_state_dict({k: ng.tensor(v.detach().numpy()) for k, v in
                          theirs.state_dict().items()})
    got = []
    for lib, module in ((ng, ours), (torch, theirs)):
        R = _rnn_mod(lib)
        xt = lib.tensor(x, requires_grad=True)
        packed = R.pack_padded_sequence(xt, lengths, batch_first=True, enforce_sorted=False)
        h0 = lib.tensor(state, requires_grad=True)
        hx = None if not given else (h0, h0 * 0.5) if cls == "LSTM" else h0
        out, h = module(packed, hx)
        states = list(h) if cls == "LSTM" else [h]
        assert isinstance(out, R.PackedSequence)
        assert out.batch_sizes.tolist() == [sum(n > t for n in lengths) for t in range(4)]
        padded, _ = R.pad_packed_sequence(out, batch_first=True)
        loss = (padded ** 2).sum() + sum(
            (s * lib.arange(s.numel()).view(s.shape).to(s.dtype)).sum() for s in states)
        loss.backward()
        got.append(([out.data.detach().numpy()] + [s.detach().numpy() for s in states],
                    [xt.grad.numpy()] + ([h0.grad.numpy()] if given else [])
                    + [p.grad.numpy() for p in module.parameters()],
                    [_name(out.data)] + [_name(s) for s in states]))
    (values, grads, nodes), (t_values, t_grads, t_nodes) = got
    assert nodes == t_nodes
    for a, b in zip(values, t_values, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    for a, b in zip(grads, t_grads, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("cls", ["LSTM", "GRU"])
@pytest.mark.parametrize("lengths", [[2, 2], [3, 1]])
def test_packed_output_nodes(lib, cls, lengths):
    """PyTorch's LSTM runs sequences of equal lengths as a padded batch (its packed output a
    view); otherwise, and in a GRU, the steps' outputs are joined by a cat."""
    R = _rnn_mod(lib)
    module = getattr(lib.nn, cls)(2, 3, bidirectional=True)
    out, h = module(R.pack_padded_sequence(lib.randn(3, 2, 2, requires_grad=True), lengths))
    h = h[0] if cls == "LSTM" else h
    view = cls == "LSTM" and lengths == [2, 2]
    assert (_name(out.data), _name(h)) == ("ViewBackward0" if view else "CatBackward0",
                                          "StackBackward0")


def test_packed_input_errors(lib):
    R = _rnn_mod(lib)
    gru = lib.nn.GRU(2, 3)
    packed = R.PackedSequence(lib.zeros(3, 2, 2), lib.tensor([2, 1]))
    with pytest.raises(RuntimeError, match="^input must have 2 dimensions, got 3$"):
        gru(packed)
    packed = R.pack_sequence([lib.zeros(2, 2), lib.zeros(1, 2)])
    with pytest.raises(RuntimeError, match=r"^Expected hidden size \(1, 2, 3\), got \[1, 3, 3\]$"):
        gru(packed, lib.zeros(1, 3, 3))


# ---------------------------------------------------------------- RMSNorm


@pytest.mark.parametrize("shape, normalized, affine, eps", [
    ((2, 3), (3,), True, None), ((2, 3, 4), (3, 4), True, 1e-3), ((3, 4), 4, False, None),
])
def test_rms_norm_side_by_side(shape, normalized, affine, eps):
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal(x.shape[x.ndim - (1 if isinstance(normalized, int) else
                                               len(normalized)):]).astype(np.float32)
    got = []
    for lib in (ng, torch):
        module = lib.nn.RMSNorm(normalized, eps=eps, elementwise_affine=affine)
        if affine:
            module.weight.data = lib.tensor(w)
        xt = lib.tensor(x, requires_grad=True)
        y = module(xt)
        (y * lib.arange(y.numel()).view(y.shape).to(y.dtype)).sum().backward()
        params = [p.grad.numpy() for p in module.parameters()]
        got.append((repr(module), list(module.state_dict()), _name(y), y.detach().numpy(),
                    xt.grad.numpy(), params))
    ours, theirs = got
    assert ours[:3] == theirs[:3]
    for a, b in zip(ours[3:5] + tuple(ours[5]), theirs[3:5] + tuple(theirs[5]), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_rms_norm_default_eps_is_the_dtypes(lib):
    # (all zeros: the result is 0 * rsqrt(eps), finite only because of eps; a float64 input
    # gets float64's epsilon)
    x = lib.tensor([[1e-9, -1e-9]], dtype=lib.float64)
    expected = 1e-9 / math.sqrt(1e-18 + float(np.finfo(np.float64).eps))
    np.testing.assert_allclose(lib.nn.functional.rms_norm(x, (2,)).tolist(),
                               [[expected, -expected]], rtol=1e-12)


@pytest.mark.parametrize("normalized, weight, message", [
    ((2, 4), None, "Given normalized_shape=[2, 4], expected input with shape [*2, 4], but got "
     "input of size[2, 3, 4]"),
    ((4,), (3,), "Expected weight to be of same shape as normalized_shape, but got weight of "
     "shape [3] and normalized_shape = [4]"),
])
def test_rms_norm_errors(lib, normalized, weight, message):
    with pytest.raises(RuntimeError) as info:
        lib.nn.functional.rms_norm(lib.zeros(2, 3, 4), normalized,
                                   None if weight is None else lib.ones(weight))
    assert str(info.value) == message


# ---------------------------------------------------------------- nn.init


def test_dirac(lib):
    w = lib.nn.init.dirac_(lib.empty(4, 2, 3), groups=2)
    assert w[:, :, 1].tolist() == [[1, 0], [0, 1], [1, 0], [0, 1]]
    assert w[:, :, 0].abs().sum().item() == 0 and w[:, :, 2].abs().sum().item() == 0
    conv = lib.nn.init.dirac_(lib.empty(3, 3, 3, 3))
    x = lib.arange(27.0).view(1, 3, 3, 3)
    assert lib.nn.functional.conv2d(x, conv, padding=1).tolist() == x.tolist()
    with pytest.raises(ValueError, match="^Only tensors with 3, 4, or 5 dimensions are "
                                         "supported$"):
        lib.nn.init.dirac_(lib.empty(2, 2))
    with pytest.raises(ValueError, match="^dim 0 must be divisible by groups$"):
        lib.nn.init.dirac_(lib.empty(3, 2, 2), groups=2)


def test_sparse(lib):
    w = lib.nn.init.sparse_(lib.empty(10, 4), sparsity=0.25, std=0.5)
    assert (w == 0).sum(0).tolist() == [3, 3, 3, 3]  # (ceil(0.25 * 10) zeros in each column)
    with pytest.raises(ValueError, match="^Only tensors with 2 dimensions are supported$"):
        lib.nn.init.sparse_(lib.empty(2, 2, 2), 0.5)


@pytest.mark.parametrize("old, args", [
    ("uniform", (-1.0, 1.0)), ("normal", ()), ("constant", (0.5,)), ("eye", ()),
    ("xavier_uniform", ()), ("xavier_normal", ()), ("kaiming_uniform", ()),
    ("kaiming_normal", ()), ("orthogonal", ()), ("sparse", (0.5,)), ("dirac", ()),
])
def test_init_deprecated_names(lib, old, args):
    shape = (4, 2, 3) if old == "dirac" else (4, 3)
    lib.manual_seed(0)
    with pytest.warns(FutureWarning) as record:
        old_result = getattr(lib.nn.init, old)(lib.empty(shape), *args)
    assert [str(r.message) for r in record] == [
        f"`nn.init.{old}` is now deprecated in favor of `nn.init.{old}_`."]
    assert record[0].filename == __file__
    assert getattr(lib.nn.init, old).__name__ == old
    lib.manual_seed(0)
    new_result = getattr(lib.nn.init, old + "_")(lib.empty(shape), *args)
    assert old_result.tolist() == new_result.tolist()


# ---------------------------------------------------------------- gradient norms


def _with_grads(lib, grads):
    params = []
    for g in grads:
        p = lib.nn.Parameter(lib.zeros(len(g)))
        p.grad = lib.tensor(g)
        params.append(p)
    return params


@pytest.mark.parametrize("norm_type", [2.0, 1, math.inf])
def test_get_total_norm_and_clip_grads_with_norm(lib, norm_type):
    params = _with_grads(lib, [[3.0, -4.0], [12.0]])
    expected = {2.0: 13.0, 1: 19.0, math.inf: 12.0}[norm_type]
    total = lib.nn.utils.get_total_norm([p.grad for p in params], norm_type)
    assert total.item() == pytest.approx(expected)
    lib.nn.utils.clip_grads_with_norm_(params, 1.0, total)
    scale = 1.0 / (expected + 1e-6)
    np.testing.assert_allclose(params[0].grad.tolist() + params[1].grad.tolist(),
                               [3 * scale, -4 * scale, 12 * scale], rtol=1e-6)
    assert lib.nn.utils.get_total_norm([]).item() == 0.0
    with pytest.raises(RuntimeError, match="^The total norm of order 2.0 for gradients"):
        lib.nn.utils.get_total_norm([lib.tensor([math.nan])], error_if_nonfinite=True)


def test_clip_grad_norm_deprecated(lib):
    params = _with_grads(lib, [[3.0, -4.0]])
    with pytest.warns(FutureWarning) as record:
        total = lib.nn.utils.clip_grad_norm(params, 10.0)
    assert [str(r.message) for r in record] == [
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
        "`torch.nn.utils.clip_grad_norm_`."]
    assert record[0].filename == __file__
    assert total.item() == pytest.approx(5.0) and params[0].grad.tolist() == [3.0, -4.0]


# ---------------------------------------------------------------- EmbeddingBag

BAG_WEIGHT = rng.standard_normal((6, 3)).astype(np.float32)
BAG_INDICES = [1, 2, 4, 5, 4, 3, 2, 0, 1]
BAG_SAMPLE_WEIGHTS = rng.standard_normal(9).astype(np.float32)


@pytest.mark.parametrize("kwargs", [
    {"mode": "sum"}, {"mode": "mean"}, {"mode": "max"}, {"mode": "sum", "psw": True},
    {"mode": "mean", "padding_idx": 4}, {"mode": "max", "padding_idx": -2},
    {"mode": "sum", "psw": True, "padding_idx": 2, "include_last_offset": True},
])
def test_embedding_bag_side_by_side(kwargs):
    """Values, node and the gradients of the weight and of the per-sample weights, with an
    empty bag among them, against PyTorch's."""
    kwargs = dict(kwargs)
    psw = kwargs.pop("psw", False)
    offsets = [0, 3, 3, 7] + ([9] if kwargs.get("include_last_offset") else [])
    got = []
    for lib in (ng, torch):
        w = lib.tensor(BAG_WEIGHT, requires_grad=True)
        p = lib.tensor(BAG_SAMPLE_WEIGHTS, requires_grad=True) if psw else None
        y = lib.nn.functional.embedding_bag(lib.tensor(BAG_INDICES), w, lib.tensor(offsets),
                                            per_sample_weights=p, **kwargs)
        (y * lib.arange(y.numel()).view(y.shape).to(y.dtype)).sum().backward()
        got.append((_name(y), y.detach().numpy(), w.grad.numpy(),
                    p.grad.numpy() if psw else np.zeros(0)))
    ours, theirs = got
    assert ours[0] == theirs[0] == "EmbeddingBagBackward0"
    for a, b in zip(ours[1:], theirs[1:], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_embedding_bag_module_2d_input(lib):
    bag = lib.nn.EmbeddingBag.from_pretrained(lib.tensor([[1.0, 2.0], [3.0, 5.0], [0.0, 7.0]]),
                                              mode="max", padding_idx=2)
    assert repr(bag) == "EmbeddingBag(3, 2, mode='max', padding_idx=2)"
    assert bag(lib.tensor([[0, 1], [2, 2]])).tolist() == [[3.0, 5.0], [0.0, 0.0]]
    assert bag.weight.requires_grad is False
    fresh = lib.nn.EmbeddingBag(4, 2, mode="sum", padding_idx=-1)
    assert fresh.padding_idx == 3 and fresh.weight[3].tolist() == [0.0, 0.0]
    assert repr(fresh) == "EmbeddingBag(4, 2, mode='sum', padding_idx=3)"


def test_embedding_bag_scale_grad_by_freq():
    """Each row's gradient divided by how often the input picks it: as the sum of
    ``F.embedding(..., scale_grad_by_freq=True)`` per bag. (PyTorch's CPU embedding_bag
    miscounts some rows here: row 3 of this input gets half its gradient.)"""
    weights = [ng.tensor(BAG_WEIGHT, requires_grad=True),
               torch.tensor(BAG_WEIGHT, requires_grad=True)]
    y = ng.nn.functional.embedding_bag(ng.tensor(BAG_INDICES), weights[0], ng.tensor([0, 4]),
                                       mode="sum", scale_grad_by_freq=True)
    rows = torch.nn.functional.embedding(torch.tensor(BAG_INDICES), weights[1],
                                         scale_grad_by_freq=True)
    expected = torch.stack([rows[:4].sum(0), rows[4:].sum(0)])
    np.testing.assert_allclose(y.detach().numpy(), expected.detach().numpy(), rtol=1e-6)
    seed = np.arange(6, dtype=np.float32).reshape(2, 3)
    (y * ng.tensor(seed)).sum().backward()
    (expected * torch.tensor(seed)).sum().backward()
    np.testing.assert_allclose(weights[0].grad.numpy(), weights[1].grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("call, error, message", [
    (lambda F, t: F.embedding_bag(t([1, 7]), _bag_weight(t), t([0])), RuntimeError,
     "Index 1 of input takes value 7 which is not in the valid range [0, 5)"),
    (lambda F, t: F.embedding_bag(t([1, 2]), _bag_weight(t), t([1])), RuntimeError,
     "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
     "position 0. However, got 1"),
    (lambda F, t: F.embedding_bag(t([1, 2]), _bag_weight(t), t([0, 3])), RuntimeError,
     "offsets[-1] can not be greater than input's length 2 but got offsets[-1] of 3"),
    (lambda F, t: F.embedding_bag(t([1, 2]), _bag_weight(t), t([0]), mode="x"), ValueError,
     "mode has to be one of sum, mean or max"),
    (lambda F, t: F.embedding_bag(t([1, 2]), _bag_weight(t), t([0]),
                                  per_sample_weights=_bag_weight(t)[0, :2]), NotImplementedError,
     "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported "
     "for mode='sum' (got mode='mean'). Please open a feature request on GitHub."),
    (lambda F, t: F.embedding_bag(t([1, 2]), _bag_weight(t)), ValueError,
     "offsets has to be a 1D Tensor but got None"),
    (lambda F, t: F.embedding_bag(t([1, 2]), _bag_weight(t), t([0]), padding_idx=5), RuntimeError,
     "padding_idx must be within the number of embeddings, -5 through 4, but got 5"),
    (lambda F, t: F.embedding_bag(t([1, 2]), _bag_weight(t), t([0]), mode="max",
                                  scale_grad_by_freq=True), ValueError,
     "max mode does not support scaling the gradient by the frequency"),
])
def test_embedding_bag_errors(lib, call, error, message):
    with pytest.raises(error) as info:
        call(lib.nn.functional, lib.tensor)
    assert str(info.value).split("\n")[0] == message


def _bag_weight(tensor):
    return tensor(BAG_WEIGHT[:5])


# ---------------------------------------------------------------- gumbel_softmax


def test_gumbel_softmax_hard_samples_follow_the_softmax(lib):
    lib.manual_seed(0)
    logits = lib.tensor([[1.0, 2.0, 0.5]]).expand(4000, 3)
    y = lib.nn.functional.gumbel_softmax(logits, tau=0.5, hard=True)
    assert y.shape == (4000, 3) and y.sum(1).unique().tolist() == [1.0]
    assert ((y == 0) | (y == 1)).all().item()
    # (the argmax of logits + Gumbel noise is a sample of softmax(logits), whatever tau)
    np.testing.assert_allclose(y.mean(0).tolist(), logits[0].softmax(0).tolist(), atol=0.03)


def test_gumbel_softmax_hard_has_the_soft_samples_gradient(lib):
    """Drawn from the same seed, the hard sample's gradient is the soft sample's, and their
    forward values are a one-hot of the soft one's argmax."""
    F = lib.nn.functional
    seed = lib.tensor([[0.0, 1.0, 2.0, 3.0], [1.0, -1.0, 0.5, 2.0]])
    results = []
    for hard in (True, False):
        lib.manual_seed(3)
        logits = lib.tensor([[0.1, 0.2, 0.3, 0.4], [1.0, -1.0, 0.0, 2.0]], requires_grad=True)
        y = F.gumbel_softmax(logits, tau=2.0, hard=hard)
        (y * seed).sum().backward()
        results.append((y.detach(), logits.grad, _name(y)))
    (hard_y, hard_grad, hard_node), (soft_y, soft_grad, soft_node) = results
    assert (hard_node, soft_node) == ("AddBackward0", "SoftmaxBackward0")
    assert hard_y.argmax(1).tolist() == soft_y.argmax(1).tolist()
    assert hard_y.sum().item() == 2.0
    np.testing.assert_allclose(soft_y.sum(1).tolist(), [1.0, 1.0], rtol=1e-6)
    np.testing.assert_allclose(hard_grad.tolist(), soft_grad.tolist(), rtol=1e-5, atol=1e-7)


def test_gumbel_softmax_eps_is_deprecated(lib):
    with pytest.warns(UserWarning, match="^`eps` parameter is deprecated and has no effect.$"):
        lib.nn.functional.gumbel_softmax(lib.zeros(2, 3), eps=1e-3)


# ---------------------------------------------------------------- LazyLinear


def test_lazy_linear_infers_in_features(lib):
    lib.manual_seed(0)
    lazy = lib.nn.LazyLinear(3)
    assert repr(lazy) == "LazyLinear(in_features=0, out_features=3, bias=True)"
    assert repr(lazy.weight) == "<UninitializedParameter>"
    assert isinstance(lazy.weight, lib.nn.UninitializedParameter)
    assert isinstance(lazy.weight, lib.nn.Parameter) and lazy.weight.requires_grad
    with pytest.raises(RuntimeError, match="^Can't access the shape of an uninitialized "
                                           "parameter or buffer."):
        lazy.weight.shape
    params = list(lazy.parameters())  # (an optimizer made now keeps the same objects)
    y = lazy(lib.ones(2, 4))
    assert type(lazy) is lib.nn.Linear and type(lazy.weight) is lib.nn.Parameter
    assert repr(lazy) == "Linear(in_features=4, out_features=3, bias=True)"
    assert params[0] is lazy.weight and params[1] is lazy.bias
    assert tuple(lazy.weight.shape) == (3, 4) and tuple(y.shape) == (2, 3)
    assert len(lazy._forward_pre_hooks) == 0 and not hasattr(lazy, "_initialize_hook")
    # (initialized as a Linear made with the same seed)
    lib.manual_seed(0)
    lib.nn.LazyLinear(3)
    eager = lib.nn.Linear(4, 3)
    lib.manual_seed(0)
    lazy = lib.nn.LazyLinear(3)
    lazy(lib.ones(1, 4))
    assert lazy.weight.tolist() == eager.weight.tolist()
    assert lazy.bias.tolist() == eager.bias.tolist()


def test_lazy_linear_loads_a_state_dict(lib):
    lazy = lib.nn.LazyLinear(3, bias=False)
    lazy.load_state_dict({"weight": lib.ones(3, 5)})
    assert type(lazy) is lib.nn.LazyLinear and tuple(lazy.weight.shape) == (3, 5)
    assert lazy(lib.ones(1, 5)).tolist() == [[5.0, 5.0, 5.0]]
    assert type(lazy) is lib.nn.Linear and lazy.weight.tolist() == [[1.0] * 5] * 3


def _lenet(nn):
    """d2l's LeNet, spelled with lazy layers as its PyTorch edition writes it."""
    return nn.Sequential(nn.LazyConv2d(6, kernel_size=5, padding=2), nn.LazyBatchNorm2d(),
                         nn.Sigmoid(), nn.AvgPool2d(kernel_size=2, stride=2), nn.Flatten(),
                         nn.LazyLinear(10))


def test_lazy_conv_and_norms_take_their_sizes_from_the_first_input(lib):
    nn = lib.nn
    assert repr(nn.LazyConv2d(6, 5, padding=2)) == (
        "LazyConv2d(0, 6, kernel_size=(5, 5), stride=(1, 1), padding=(2, 2))")
    assert repr(nn.LazyConvTranspose2d(4, 3, stride=2)) == (
        "LazyConvTranspose2d(0, 4, kernel_size=(3, 3), stride=(2, 2))")
    # (PyTorch's lazy instance norm is affine and tracks running statistics by default)
    assert repr(nn.LazyInstanceNorm2d()) == (
        "LazyInstanceNorm2d(0, eps=1e-05, momentum=0.1, affine=True, bias=True, "
        "track_running_stats=True)")
    bn = nn.LazyBatchNorm2d()
    assert type(bn.running_mean) is nn.UninitializedBuffer
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var",
                                     "num_batches_tracked"]
    net = _lenet(nn)
    x = lib.tensor(rng.standard_normal((2, 3, 8, 8)), dtype=lib.float32)
    assert tuple(net(x).shape) == (2, 10)
    assert [type(m).__name__ for m in net] == ["Conv2d", "BatchNorm2d", "Sigmoid", "AvgPool2d",
                                               "Flatten", "Linear"]
    assert [tuple(p.shape) for p in net.parameters()] == [(6, 3, 5, 5), (6,), (6,), (6,),
                                                          (10, 96), (10,)]
    assert type(net[1].running_mean) is lib.Tensor and int(net[1].num_batches_tracked) == 1
    conv1d = nn.LazyConv1d(4, 3)
    assert tuple(conv1d(lib.ones(3, 10)).shape) == (4, 8)  # (unbatched: channels are dim 0)
    assert repr(conv1d) == "Conv1d(3, 4, kernel_size=(3,), stride=(1,))"
    with pytest.raises(RuntimeError, match=r"^Expected 3D \(unbatched\) or 4D \(batched\) "
                                           r"input to LazyConv2d, but got input of size: "):
        nn.LazyConv2d(6, 5)(lib.ones(8, 8))
    with pytest.raises(ValueError, match="^in_channels must be divisible by groups$"):
        nn.LazyConv2d(6, 3, groups=2)(lib.ones(1, 3, 8, 8))


def test_lazy_modules_load_a_trained_state_dict(lib):
    nn = lib.nn
    x = lib.tensor(rng.standard_normal((2, 3, 8, 8)), dtype=lib.float32)
    trained = _lenet(nn)
    trained(x)
    fresh = _lenet(nn)
    assert str(fresh.load_state_dict(trained.state_dict())) == "<All keys matched successfully>"
    trained.eval()
    fresh.eval()
    assert np.array_equal(fresh(x).detach().numpy(), trained(x).detach().numpy())
    # (as PyTorch's: a loaded conv keeps in_channels 0, a loaded Linear reads its input's)
    assert repr(fresh[0]).startswith("Conv2d(0, 6,") and fresh[5].in_features == 96


# ---------------------------------------------------------------- weight_norm


@pytest.mark.parametrize("make, dim, shape", [
    (lambda nn: nn.Linear(3, 2), 0, (4, 3)),
    (lambda nn: nn.Conv1d(3, 2, 2), 1, (1, 3, 5)),
    (lambda nn: nn.Linear(3, 2), None, (4, 3)),
    (lambda nn: nn.Linear(3, 2), -1, (4, 3)),
])
def test_weight_norm_side_by_side(make, dim, shape):
    """The parameters it makes, the weight's node and values, and the gradients of g and v,
    against PyTorch's; then ``remove_weight_norm`` leaves the weight it computed."""
    x = rng.standard_normal(shape).astype(np.float32)
    theirs = make(torch.nn)
    ours = make(ng.nn)
    ours.load_state_dict({k: ng.tensor(v.detach().numpy()) for k, v in
                          theirs.state_dict().items()})
    got = []
    for lib, module in ((ng, ours), (torch, theirs)):
        with pytest.warns(FutureWarning, match="^`torch.nn.utils.weight_norm` is deprecated in "
                                               "favor of `torch.nn.utils.parametrizations."
                                               "weight_norm`.$"):
            lib.nn.utils.weight_norm(module, dim=dim)
        names = [n for n, _ in module.named_parameters()]
        y = module(lib.tensor(x))
        (y * lib.arange(y.numel()).view(y.shape).to(y.dtype)).sum().backward()
        node = _name(module.weight)
        g, v = module.weight_g, module.weight_v
        lib.nn.utils.remove_weight_norm(module)
        values = [module.weight.detach().numpy(), y.detach().numpy(), g.grad.numpy(),
                  v.grad.numpy()]
        got.append((names, node, tuple(g.shape), values,
                    [n for n, _ in module.named_parameters()]))
    ours_got, theirs_got = got
    assert ours_got[:3] == theirs_got[:3] and ours_got[4] == theirs_got[4]
    for a, b in zip(ours_got[3], theirs_got[3], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_weight_norm_errors(lib):
    module = lib.nn.Linear(2, 2)
    with pytest.warns(FutureWarning):
        lib.nn.utils.weight_norm(module)
        with pytest.raises(RuntimeError, match="^Cannot register two weight_norm hooks on the "
                                               "same parameter weight$"):
            lib.nn.utils.weight_norm(module)
        with pytest.raises(ValueError, match="^weight_norm of 'bias' not found in Linear"):
            lib.nn.utils.remove_weight_norm(module, "bias")
        with pytest.raises(ValueError, match="^The module passed to `WeightNorm` can't have "
                                             "uninitialized parameters."):
            lib.nn.utils.weight_norm(lib.nn.LazyLinear(2))


# ---------------------------------------------------------------- parametrize


@pytest.mark.parametrize("make, dim, shape", [
    (lambda nn: nn.Linear(3, 2), 0, (4, 3)), (lambda nn: nn.Conv1d(3, 2, 2), 1, (1, 3, 5)),
    (lambda nn: nn.Linear(3, 2), None, (4, 3)),
])
def test_parametrized_weight_norm_side_by_side(make, dim, shape):
    x = rng.standard_normal(shape).astype(np.float32)
    theirs = make(torch.nn)
    ours = make(ng.nn)
    ours.load_state_dict({k: ng.tensor(v.detach().numpy()) for k, v in
                          theirs.state_dict().items()})
    got = []
    for lib, module in ((ng, ours), (torch, theirs)):
        lib.nn.utils.parametrizations.weight_norm(module, dim=dim)
        y = module(lib.tensor(x))
        (y * lib.arange(y.numel()).view(y.shape).to(y.dtype)).sum().backward()
        originals = module.parametrizations.weight
        values = [module.weight.detach().numpy(), y.detach().numpy(),
                  originals.original0.grad.numpy(), originals.original1.grad.numpy()]
        got.append((repr(module), list(module.state_dict()), _name(module.weight), values))
    ours_got, theirs_got = got
    assert ours_got[:3] == theirs_got[:3]
    for a, b in zip(ours_got[3], theirs_got[3], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


class _Symmetric:
    """A parametrization (made a Module by ``_symmetric``): the upper triangle mirrored."""

    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


def _symmetric(lib):
    return type("Symmetric", (_Symmetric, lib.nn.Module), {})()


def test_register_and_remove_parametrizations(lib):
    P = lib.nn.utils.parametrize
    layer = lib.nn.Linear(3, 3)
    original = layer.weight.detach().clone()
    P.register_parametrization(layer, "weight", _symmetric(lib))
    assert type(layer).__name__ == "ParametrizedLinear"
    assert P.type_before_parametrizations(layer) is lib.nn.Linear
    assert P.is_parametrized(layer) and P.is_parametrized(layer, "weight")
    assert not P.is_parametrized(layer, "bias")
    assert list(layer.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert layer.weight.tolist() == layer.weight.t().tolist()
    assert layer.parametrizations.weight.original.tolist() == original.tolist()
    with P.cached():
        assert layer.weight is layer.weight
    assert layer.weight is not layer.weight
    P.remove_parametrizations(layer, "weight", leave_parametrized=False)
    assert type(layer) is lib.nn.Linear and isinstance(layer.weight, lib.nn.Parameter)
    assert layer.weight.tolist() == original.tolist()
    with pytest.raises(ValueError, match="does not have a parametrization on weight$"):
        P.remove_parametrizations(layer, "weight")
    with pytest.raises(ValueError, match="parametrized element with name 'nothing'$"):
        P.register_parametrization(layer, "nothing", _symmetric(lib))


def test_parametrized_weight_norm_set_and_remove(lib):
    layer = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(3, 2))
    layer.weight = lib.ones(2, 3)  # (through right_inverse: g the rows' norms, v the rows)
    g = layer.parametrizations.weight.original0
    np.testing.assert_allclose(g.tolist(), [[math.sqrt(3)]] * 2, rtol=1e-6)
    lib.nn.utils.parametrize.remove_parametrizations(layer, "weight")
    assert type(layer) is lib.nn.Linear and type(layer.weight) is lib.nn.Parameter
    np.testing.assert_allclose(layer.weight.tolist(), [[1.0] * 3] * 2, rtol=1e-6)
    with pytest.raises(ValueError, match=r"^Cannot leave unparametrized \(`leave_parametrized="
                                         "False`\\) a tensor that is parametrized in terms of "
                                         "a sequence of tensors.$"):
        layer = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(3, 2))
        lib.nn.utils.parametrize.remove_parametrizations(layer, "weight", False)


def test_lazy_linear_state_dict_before_its_first_call(lib):
    state = lib.nn.LazyLinear(3).state_dict()
    assert [repr(v) for v in state.values()] == ["<UninitializedParameter>"] * 2
    other = lib.nn.LazyLinear(3)
    result = other.load_state_dict(state)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert other.has_uninitialized_params()
    with pytest.raises(RuntimeError, match="^Can't access the shape of an uninitialized"):
        lib.nn.Linear(2, 3).load_state_dict(state)
