"""Sequences of different lengths for the recurrent layers, as ``torch.nn.utils.rnn``: padded
into one tensor (``pad_sequence``) or packed (``PackedSequence``: each step's elements of the
sequences still running, step after step, sorted longest first, with the number of them at
each step in ``batch_sizes``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from ... import dtypes as D
from ... import factory
from ... import ops as _ops
from ...ops import recurrent as _rec
from ...tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(PackedSequence_):
    """The data and ``batch_sizes`` of a packed batch of sequences; made by
    ``pack_padded_sequence`` or ``pack_sequence``, read by the recurrent layers."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # (``data`` is the pair (data, batch_sizes))
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never "
                "be created manually. They should be instantiated by functions like "
                "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _with(self, data) -> PackedSequence:
        """``self`` with ``data`` converted (``self`` itself if that changed nothing); the
        indices follow it to its device."""
        if data is self.data:
            return self
        move = lambda t: None if t is None else t.to(data.device)  # noqa: E731
        return type(self)(data, self.batch_sizes, move(self.sorted_indices),
                          move(self.unsorted_indices))

    def to(self, *args, **kwargs) -> PackedSequence:
        """The data converted as ``Tensor.to``."""
        return self._with(self.data.to(*args, **kwargs))

    def cuda(self, *args, **kwargs) -> PackedSequence:
        return self._with(self.data.cuda(*args, **kwargs))

    def cpu(self) -> PackedSequence:
        return self._with(self.data.cpu())

    def double(self) -> PackedSequence:
        return self.to(dtype=D.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=D.float32)

    def long(self) -> PackedSequence:
        return self.to(dtype=D.int64)

    def int(self) -> PackedSequence:
        return self.to(dtype=D.int32)

    def short(self) -> PackedSequence:
        return self.to(dtype=D.int16)

    def char(self) -> PackedSequence:
        return self.to(dtype=D.int8)

    def byte(self) -> PackedSequence:
        return self.to(dtype=D.uint8)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of the permutation ``permutation`` (None for None)."""
    if permutation is None:
        return None
    output = factory.empty_like(permutation)
    output.scatter_(0, permutation,
                    factory.arange(0, permutation.numel(), device=permutation.device))
    return output


def _lengths_list(lengths: Tensor) -> list[int]:
    if lengths.ndim != 1 or lengths.device.type != "cpu":
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lengths.ndim}D {lengths.device.type} Long tensor")
    return lengths.tolist()


def pack_padded_sequence(input: Tensor, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack padded sequences ``input`` (T, B, *; B, T, * with ``batch_first``) of ``lengths``;
    unless ``enforce_sorted``, they are sorted longest first (and ``sorted_indices`` say how)."""
    if isinstance(lengths, Tensor):
        lengths = lengths.to(dtype=D.int64)
    else:
        lengths = factory.as_tensor(lengths, dtype=D.int64, device="cpu")
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths, sorted_indices = _ops.sort(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    lens = _lengths_list(lengths)
    if lens and lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if any(a < b for a, b in zip(lens, lens[1:])):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
            "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
            "to sidestep this requirement if you do not need ONNX exportability.")
    if len(lens) != input.shape[1]:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lens)} (batch_size={input.shape[1]})")
    data = _rec.pack_padded_sequence(input, lengths=tuple(lens))
    batch_sizes = [sum(n > t for n in lens) for t in range(lens[0] if lens else 0)]
    # (batch_sizes stay on the CPU whatever the default device, as PyTorch's)
    batch_sizes = factory.tensor(batch_sizes, dtype=D.int64, device="cpu")
    return PackedSequence(data, batch_sizes, sorted_indices)


def _runs(batch_sizes: list[int]):
    """``(first step, steps, batch size, first row of data)`` of each run of steps with the
    same batch size."""
    runs, row = [], 0
    for t, bs in enumerate(batch_sizes):
        if runs and runs[-1][2] == bs:
            first, steps, _, start = runs[-1]
            runs[-1] = (first, steps + 1, bs, start)
        else:
            runs.append((t, 1, bs, row))
        row += bs
    return runs


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """The packed ``sequence`` padded with ``padding_value`` to its longest length (or
    ``total_length``), in the order the sequences were packed in, and their lengths."""
    batch_sizes = sequence.batch_sizes.tolist()
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{steps}")
        steps = total_length
    data = sequence.data
    batch = batch_sizes[0] if batch_sizes else 0
    padded = data.new_full((steps, batch, *data.shape[1:]), padding_value)
    for first, n, bs, row in _runs(batch_sizes):
        padded[first:first + n, :bs] = data[row:row + n * bs].view(n, bs, *data.shape[1:])
    lengths = [sum(bs > b for bs in batch_sizes) for b in range(batch)]
    if batch_first:
        padded = padded.transpose(0, 1)
    lengths = factory.tensor(lengths, dtype=D.int64, device="cpu")
    unsorted = sequence.unsorted_indices
    if unsorted is not None:
        return padded.index_select(0 if batch_first else 1, unsorted), lengths[unsorted.cpu()]
    return padded, lengths


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """The ``sequences`` (each L x *) stacked along a new batch dimension (the second, or the
    first with ``batch_first``), padded with ``padding_value`` on ``padding_side``."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    longest = max(s.shape[0] for s in sequences)
    first = sequences[0]
    out = first.new_full((len(sequences), longest, *first.shape[1:]) if batch_first
                         else (longest, len(sequences), *first.shape[1:]), padding_value)
    for i, seq in enumerate(sequences):
        n = seq.shape[0]
        start = 0 if padding_side == "right" else longest - n
        out.select(0 if batch_first else 1, i).narrow(0, start, n).copy_(seq)
    return out


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor,
                   batch_first: bool = False) -> list[Tensor]:
    """The sequences of ``lengths`` in ``padded_sequences``, as a list. Without
    ``batch_first`` it transposes ``padded_sequences`` in place, as PyTorch."""
    if not batch_first:
        padded_sequences.transpose_(0, 1)
    idx = factory.arange(padded_sequences.shape[1], device=lengths.device)
    return [seq[idx < length] for seq, length in zip(padded_sequences, lengths, strict=True)]


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """``pack_padded_sequence`` of ``pad_sequence(sequences)``."""
    lengths = factory.as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The sequences of ``packed_sequences`` as a list, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
