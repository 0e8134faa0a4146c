"""More of ``nn`` against PyTorch: padded and packed sequences (``nn.utils.rnn``) and the
recurrent layers on packed input."""

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
    assert repr(packed).startswith("PackedSequence(data=tensor([1, 4, 2, 5, 3]), batch_sizes=")
    assert R.invert_permutation(lib.tensor([2, 0, 1])).tolist() == [1, 2, 0]
    made = R.PackedSequence(data, batch_sizes, lib.tensor([1, 0]))
    assert made.unsorted_indices.tolist() == [1, 0]


# ---------------------------------------------------------------- recurrent layers, packed


@pytest.mark.parametrize("cls, layers, bidirectional, given", [
    ("LSTM", 1, False, False), ("LSTM", 2, True, True), ("GRU", 1, True, True),
    ("GRU", 2, False, False), ("RNN", 2, True, False), ("RNN", 1, False, True),
])
def test_recurrent_layers_on_packed_input(cls, layers, bidirectional, given):
    """Packed outputs, final states (each sequence's at its own length) and the gradients of the
    input, the initial states and every parameter, against PyTorch's."""
    x = rng.standard_normal((4, 4, 3)).astype(np.float32)
    lengths = [2, 4, 1, 4]
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
        assert out.batch_sizes.tolist() == [4, 3, 2, 2]
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


def test_packed_input_errors(lib):
    R = _rnn_mod(lib)
    gru = lib.nn.GRU(2, 3)
    packed = R.PackedSequence(lib.zeros(3, 2, 2), lib.tensor([2, 1]))
    with pytest.raises(RuntimeError, match="^input must have 2 dimensions, got 3$"):
        gru(packed)
    packed = R.pack_sequence([lib.zeros(2, 2), lib.zeros(1, 2)])
    with pytest.raises(RuntimeError, match=r"^Expected hidden size \(1, 2, 3\), got \[1, 3, 3\]$"):
        gru(packed, lib.zeros(1, 3, 3))
