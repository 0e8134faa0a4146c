"""Recurrent layers (``RNN``, ``LSTM``, ``GRU``) and their cells. A layer projects the input of
every step with one ``linear``, then runs the steps of each direction as one op
(ops/recurrent.py); a cell is one step composed of recorded ops (``linear``, ``tanh``,
``sigmoid``, ...). The parameters, their names, shapes, order and initialisation are PyTorch's;
so are the gate orders (LSTM: input, forget, cell, output; GRU: reset, update, new).

An LSTM with ``proj_size`` (a projected LSTM) carries ``h = (o * tanh(c)) @ weight_hr.T`` of
``proj_size`` features from step to step; the fused layer kernel makes ``h`` as ``o * tanh(c)``
of ``hidden_size`` features, so such a layer runs its steps as recorded cell ops instead
(``_run_projected``).

A packed input (``PackedSequence``) runs as PyTorch's: the steps where the same sequences are
running are one layer op on just those rows, a finished sequence's state is kept as its final
one, and the steps of padding are never computed."""

from __future__ import annotations

import math
import numbers
import warnings

from ... import factory
from ... import ops as _ops
from ...ops import movement as _M
from ...ops import recurrent as _rec
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, _runs
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _init_uniform(module, hidden_size):
    bound = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0
    for w in module.parameters():
        init.uniform_(w, -bound, bound)


class RNNBase(Module):
    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None) -> None:
        super().__init__()
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(
                dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero "
                f"dropout expects num_layers greater than 1, but got dropout={dropout} and "
                f"num_layers={num_layers}", UserWarning, stacklevel=2)
        if not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError("hidden_size must be an integer greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional = float(dropout), bidirectional
        self.proj_size = proj_size
        directions = 2 if bidirectional else 1
        gate = _GATES[mode] * hidden_size
        state = proj_size or hidden_size  # (the size of h: what w_hh reads, what a layer outputs)
        kw = {"device": device, "dtype": dtype}
        self._flat_weights_names = []
        for layer in range(num_layers):
            for direction in range(directions):
                in_size = input_size if layer == 0 else state * directions
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                shapes = [("weight_ih", (gate, in_size)), ("weight_hh", (gate, state))]
                if bias:
                    shapes += [("bias_ih", (gate,)), ("bias_hh", (gate,))]
                if proj_size:  # (after the biases, as in PyTorch's flat weights)
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for name, shape in shapes:
                    setattr(self, name + suffix, Parameter(factory.empty(shape, **kw)))
                    self._flat_weights_names.append(name + suffix)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _init_uniform(self, self.hidden_size)

    def flatten_parameters(self) -> None:
        """PyTorch packs the weights into one cuDNN buffer here; numbagrad's kernels read them
        where they are, so there is nothing to do (as in PyTorch on the CPU)."""

    @property
    def all_weights(self) -> list:
        """Each layer's (and direction's) parameters in PyTorch's order: ``weight_ih``,
        ``weight_hh``, then the biases and ``weight_hr`` where it has them."""
        names = self._flat_weights_names
        n = len(names) // (self.num_layers * (2 if self.bidirectional else 1))
        return [[getattr(self, name) for name in names[i:i + n]]
                for i in range(0, len(names), n)]

    def _weights(self, layer, direction):
        suffix = f"_l{layer}" + ("_reverse" if direction else "")
        get = lambda name: getattr(self, name + suffix, None)  # noqa: E731
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh")

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    def _check_hidden(self, h, expected, index=""):
        if tuple(h.shape) != expected:
            raise RuntimeError(f"Expected hidden{index} size {expected}, got {list(h.shape)}")

    def _run(self, x_proj, h, c, layer, direction):
        """One layer op: ``(out, h_T, c_T)`` (``c`` None but in an LSTM)."""
        _, w_hh, _, b_hh = self._weights(layer, direction)
        if self.proj_size:
            return self._run_projected(x_proj, h, c, w_hh, b_hh, layer, direction)
        op = _rec.LAYERS[self.mode]
        if self.mode == "LSTM":
            return op(x_proj, h, c, w_hh, b_hh, reverse=bool(direction))
        return (*op(x_proj, h, w_hh, b_hh, reverse=bool(direction)), None)

    def _run_projected(self, x_proj, h, c, w_hh, b_hh, layer, direction):
        """A projected LSTM layer's steps as recorded ops (the cell's, then ``h @ w_hr.T``), so
        its gradients, of any order, are those of these ops."""
        w_hr = getattr(self, f"weight_hr_l{layer}" + ("_reverse" if direction else ""))
        steps = x_proj.shape[0]
        seq = [None] * steps
        for t in range(steps - 1, -1, -1) if direction else range(steps):
            h, c = _rec.lstm_cell(x_proj[t], h, c, w_hh, b_hh)
            h = F.linear(h, w_hr)
            seq[t] = h
        out = _ops.stack(seq) if steps else x_proj.new_zeros((0, *h.shape))
        return out, h, c

    def _run_packed(self, x_proj, batch_sizes, h0, c0, layer, direction):
        """One layer and direction over packed data: ``(packed out, h_n, c_n)``. Each run of
        steps with the same batch size is one layer op on the rows still running; the rows
        that stop keep their state (going forward), the rows that start take theirs from
        ``h0``, ``c0`` (going backward)."""
        runs = _runs(batch_sizes)
        reverse = bool(direction)
        outs, done_h, done_c = [None] * len(runs), [], []
        h = h0[:runs[-1][2]] if reverse else h0
        c = None if c0 is None else c0[:runs[-1][2]] if reverse else c0
        for k in range(len(runs) - 1, -1, -1) if reverse else range(len(runs)):
            _, steps, bs, row = runs[k]
            if reverse and h.shape[0] < bs:  # (sequences that end here start now)
                h = _ops.cat([h, h0[h.shape[0]:bs]])
                c = None if c is None else _ops.cat([c, c0[c.shape[0]:bs]])
            elif h.shape[0] > bs:  # (sequences that ended: their state is final)
                done_h.append(h[bs:])
                h = h[:bs]
                if c is not None:
                    done_c.append(c[bs:])
                    c = c[:bs]
            x = x_proj[row:row + steps * bs].view(steps, bs, -1)
            seq, h, c = self._run(x, h, c, layer, direction)
            outs[k] = seq.reshape(steps * bs, -1)
        out = _ops.cat(outs)  # (a cat also of one run, as PyTorch's node)
        if done_h:  # (the states in the batch's order: the longest sequences' first)
            h = _ops.cat([h, *done_h[::-1]])
            c = None if c is None else _ops.cat([c, *done_c[::-1]])
        return out, h, c

    def _check_state_dims(self, hx, batched):
        """PyTorch's check that the states have the input's batchedness (3-D with a batched
        input, 2-D without), made before the sizes are."""
        dims = 3 if batched else 2
        what = "batched 3-D" if batched else "unbatched 2-D"
        if self.mode == "LSTM":
            if hx[0].ndim != dims or hx[1].ndim != dims:
                raise RuntimeError(f"For {what} input, hx and cx should also be {dims}-D but got "
                                   f"({hx[0].ndim}-D, {hx[1].ndim}-D) tensors")
        elif hx.ndim != dims:
            raise RuntimeError(f"For {what} input, hx should also be {dims}-D but got "
                               f"{hx.ndim}-D tensor")

    def _states(self, input, hx, batch, batched, permutation):
        """The initial states ``(h0, c0)`` (``c0`` None but in an LSTM), checked: zeros without
        ``hx``; ``permutation`` puts a packed input's states in its sorted order."""
        lstm = self.mode == "LSTM"
        directions = 2 if self.bidirectional else 1
        expected = (self.num_layers * directions, batch, self.hidden_size)
        # (h has proj_size features in a projected LSTM; c always has hidden_size)
        sizes = [expected[:2] + (self.proj_size,) if self.proj_size else expected]
        if lstm:
            sizes.append(expected)
        if hx is None:
            zeros = factory.zeros(expected, dtype=input.dtype, device=input.device)
            if not lstm:
                return zeros, None
            h0 = factory.zeros(sizes[0], dtype=input.dtype, device=input.device) \
                if self.proj_size else zeros
            return h0, zeros
        states = hx if lstm else (hx,)
        if not batched:
            states = tuple(s.unsqueeze(1) for s in states)
        if permutation is not None:
            states = tuple(s.index_select(1, permutation) for s in states)
        for k, (s, size) in enumerate(zip(states, sizes)):
            self._check_hidden(s, size, f"[{k}]" if lstm else "")
        return states[0], (states[1] if lstm else None)

    def _layers(self, input, h0, c0, batch_sizes):
        """Every layer and direction over ``input`` (T, B, input_size), or over packed data
        with ``batch_sizes``: ``(out, h_n, c_n)``."""
        directions = 2 if self.bidirectional else 1
        out, h_n, c_n = input, [], []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                k = layer * directions + direction
                w_ih, _, b_ih, _ = self._weights(layer, direction)
                x_proj = F.linear(out, w_ih, b_ih)  # every step's input at once
                c = None if c0 is None else c0[k]
                if batch_sizes is None:
                    seq, h, c = self._run(x_proj, h0[k], c, layer, direction)
                else:
                    seq, h, c = self._run_packed(x_proj, batch_sizes, h0[k], c, layer,
                                                 direction)
                outputs.append(seq)
                h_n.append(h)
                c_n.append(c)
            out = outputs[0] if directions == 1 else _ops.cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                out = F.dropout(out, self.dropout, True)
        return out, _ops.stack(h_n), (None if c0 is None else _ops.stack(c_n))

    def _forward_packed(self, input, hx):
        data, batch_sizes, sorted_indices, unsorted_indices = input
        if data.ndim != 2:
            raise RuntimeError(f"input must have 2 dimensions, got {data.ndim}")
        if data.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {data.shape[-1]}")
        batch_sizes_list = batch_sizes.tolist()
        h0, c0 = self._states(data, hx, batch_sizes_list[0], True, sorted_indices)
        if self.mode == "LSTM" and not self.proj_size and len(set(batch_sizes_list)) == 1:
            # (PyTorch's LSTM runs a packed input of equal lengths as a padded one and views
            # its output as packed data; not a projected one, which its oneDNN path lacks)
            steps = len(batch_sizes_list)
            out, h_n, c_n = self._layers(data.view(steps, batch_sizes_list[0], -1), h0, c0,
                                         None)
            out = out.view(-1, out.shape[-1])
        else:
            out, h_n, c_n = self._layers(data, h0, c0, batch_sizes_list)
        if unsorted_indices is not None:  # (the final states in the caller's order)
            h_n = h_n.index_select(1, unsorted_indices)
            c_n = None if c_n is None else c_n.index_select(1, unsorted_indices)
        out = PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices)
        return (out, (h_n, c_n)) if self.mode == "LSTM" else (out, h_n)

    def forward(self, input, hx=None):
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        batched = input.ndim == 3
        if input.ndim not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got "
                             f"{input.ndim}D input instead")
        if hx is not None:
            self._check_state_dims(hx, batched)
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")
        if not batched:
            input = input.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        h0, c0 = self._states(input, hx, input.shape[1], batched, None)
        out, h_n, c_n = self._layers(input, h0, c0, None)
        if not batched:
            out, h_n = out.squeeze(1), h_n.squeeze(1)
            c_n = None if c_n is None else c_n.squeeze(1)
        elif self.batch_first:
            # (PyTorch's GRU and RNN transpose their stacked output in place: TransposeBackward1;
            # its LSTM takes a view, TransposeBackward0)
            out = out.transpose(0, 1) if self.mode == "LSTM" else _M.transpose_result(out, 0, 1)
        return (out, (h_n, c_n)) if self.mode == "LSTM" else (out, h_n)


def _no_projection(kwargs):
    """PyTorch's RNN and GRU take ``**kwargs`` and refuse ``proj_size`` by name, whatever its
    value, first; any other unknown keyword is a TypeError, as from ``RNNBase.__init__``,
    raised after RNN's check of its ``nonlinearity``."""
    if "proj_size" in kwargs:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")


def _no_other_keywords(kwargs):
    if kwargs:
        raise TypeError(f"RNNBase.__init__() got an unexpected keyword argument "
                        f"'{next(iter(kwargs))}'")


class RNN(RNNBase):
    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None,
                 **kwargs):
        _no_projection(kwargs)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        _no_other_keywords(kwargs)
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size,
                         hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)


class LSTM(RNNBase):
    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, device, dtype)


class GRU(RNNBase):
    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None, **kwargs):
        _no_projection(kwargs)
        _no_other_keywords(kwargs)
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, device=device, dtype=dtype)


class RNNCellBase(Module):
    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        kw = {"device": device, "dtype": dtype}
        self.weight_ih = Parameter(factory.empty((num_chunks * hidden_size, input_size), **kw))
        self.weight_hh = Parameter(factory.empty((num_chunks * hidden_size, hidden_size), **kw))
        if bias:
            self.bias_ih = Parameter(factory.empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(factory.empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _init_uniform(self, self.hidden_size)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        return s if nonlinearity == "tanh" else s + f", nonlinearity={nonlinearity}"

    def _prepare(self, input, hx, n_states):
        """``(input, states, batched)``: a 1-d input made a batch of one, zero states made."""
        if input.ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got "
                             f"{input.ndim}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[-1]} "
                               f"expected {self.input_size}")
        batched = input.ndim == 2
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = factory.zeros((input.shape[0], self.hidden_size), dtype=input.dtype,
                                  device=input.device)
            return input, (zeros,) * n_states, batched
        states = hx if n_states > 1 else (hx,)
        if not batched:
            states = tuple(s.unsqueeze(0) for s in states)
        return input, states, batched


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)

    def forward(self, input, hx=None):
        x, (h,), batched = self._prepare(input, hx, 1)
        mode = "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"
        h = _rec.rnn_cell(mode, F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh,
                      self.bias_hh)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        x, (h, c), batched = self._prepare(input, hx, 2)
        h, c = _rec.lstm_cell(F.linear(x, self.weight_ih, self.bias_ih), h, c, self.weight_hh,
                          self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        x, (h,), batched = self._prepare(input, hx, 1)
        h = _rec.rnn_cell("GRU", F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh,
                      self.bias_hh)
        return h if batched else h.squeeze(0)
