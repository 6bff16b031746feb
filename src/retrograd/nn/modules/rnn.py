"""Recurrent layers: RNN, LSTM, GRU and their one-step cells, as ``torch.nn``.

Written with retrograd's differentiable ops, so backward (and double backward) come from
the ops' own derivatives, except where one node with a hand-written derivative is much
faster (``_rnn_fused.py``): an LSTM direction over a padded batch, and the LSTM's and GRU's
per-step gate arithmetic.

Every sequence, padded or packed, runs through one loop over a flat ``(rows, features)``
layout: the rows of time step ``t`` are the ``batch_sizes[t]``
sequences still running (a padded batch is the case where every step has the whole batch),
so packed input needs no second implementation.  For speed the input projection of all
time steps is one matmul before the loop (with both biases folded into it where the
equations allow), and the loop only does the recurrent matmul and the gate arithmetic.
"""

from __future__ import annotations

import math
import numbers
import warnings

from ..._creation import empty, zeros
from ...ops.linear import addmm
from ...ops.shape import cat, stack
from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from ._rnn_fused import GRUGates, LSTMDirection, LSTMGates

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


# ------------------------------------------------------------------ one time step per kind
def _mm(gi, h, w_hh_t):
    """``gi + h @ w_hh_t`` in one op (AddmmBackward0, as PyTorch's cells)."""
    return addmm(gi, h, w_hh_t)


def _tanh_step(gi, h, c, weights):
    return _mm(gi, h, weights[0]).tanh(), None


def _relu_step(gi, h, c, weights):
    return F.relu(_mm(gi, h, weights[0])), None


def _lstm_step(gi, h, c, weights):
    """``gi`` already holds x @ W_ih.T + b_ih + b_hh; gates in PyTorch's order i, f, g, o."""
    w_hh_t, _, w_hr_t = weights
    # the gate arithmetic is one node (_rnn_fused.py): ten small ops per step cost more
    h, c = LSTMGates.apply(_mm(gi, h, w_hh_t), c)
    if w_hr_t is not None:
        h = h.matmul(w_hr_t)
    return h, c


def _gru_step(gi, h, c, weights):
    """``gi`` holds x @ W_ih.T + b_ih; b_hh stays inside (r multiplies its n part)."""
    w_hh_t, b_hh, _ = weights
    gh = h.matmul(w_hh_t) if b_hh is None else addmm(b_hh, h, w_hh_t)
    return GRUGates.apply(gi, gh, h), None  # one node for the gate arithmetic


_STEPS = {"LSTM": _lstm_step, "GRU": _gru_step, "RNN_TANH": _tanh_step,
          "RNN_RELU": _relu_step}


def _input_projection(mode, x, w_ih, b_ih, b_hh):
    """x @ W_ih.T plus the biases that do not depend on the hidden state, for every row."""
    if b_ih is None:
        return x.matmul(w_ih.t())
    bias = b_ih if mode == "GRU" else b_ih + b_hh
    return addmm(bias, x, w_ih.t())


def _step_weights(mode, w_hh, b_hh, w_hr):
    return (w_hh.t(), b_hh if mode == "GRU" else None, None if w_hr is None else w_hr.t())


def _run_direction(step, gi, batch_sizes, h0, c0, weights, reverse):
    """One layer, one direction, over the flat layout.

    ``gi``: (rows, gates) input projections; ``batch_sizes``: running sequences per step
    (decreasing).  Returns the outputs (rows, hidden) in the same layout and the final
    states (batch, hidden) of each sequence (the state after its own last step).
    """
    # one split for all steps: its backward is one cat (slicing per step would allocate a
    # zero gradient of the whole projection at every step)
    steps_in = gi.split(batch_sizes, 0) if len(batch_sizes) > 1 else (gi,)
    uniform = batch_sizes[0] == batch_sizes[-1]
    outputs = [None] * len(batch_sizes)
    if not reverse:
        h, c, running = h0, c0, batch_sizes[0]
        finished_h, finished_c = [], []  # rows whose sequences ended, highest rows first
        for t, bs in enumerate(batch_sizes):
            if bs < running:
                finished_h.append(h[bs:running])
                h = h[:bs]
                if c is not None:
                    finished_c.append(c[bs:running])
                    c = c[:bs]
                running = bs
            h, c = step(steps_in[t], h, c, weights)
            outputs[t] = h
        if not uniform:
            h = cat([h] + finished_h[::-1], 0)
            c = None if c is None else cat([c] + finished_c[::-1], 0)
    else:
        running = batch_sizes[-1]
        h = h0 if uniform else h0[:running]
        c = None if c0 is None else (c0 if uniform else c0[:running])
        for t in range(len(batch_sizes) - 1, -1, -1):
            bs = batch_sizes[t]
            if bs > running:  # longer sequences start here, from their initial state
                h = cat([h, h0[running:bs]], 0)
                if c is not None:
                    c = cat([c, c0[running:bs]], 0)
                running = bs
            h, c = step(steps_in[t], h, c, weights)
            outputs[t] = h
    return cat(outputs, 0) if len(outputs) > 1 else outputs[0], h, c


# ------------------------------------------------------------------ the sequence layers
class RNNBase(Module):
    """What RNN, LSTM and GRU share: the parameters (``weight_ih_l{k}``, ``weight_hh_l{k}``,
    ``bias_ih_l{k}``, ``bias_hh_l{k}``, ``weight_hr_l{k}`` with ``proj_size``, and
    ``..._reverse`` for the second direction), their initialisation, the argument checks
    and the multi-layer, bidirectional, packed-sequence forward."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first",
                     "dropout", "bidirectional", "proj_size"]

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None, dtype=None):
        super().__init__()
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                                  ("input_size", input_size, int),
                                  ("hidden_size", hidden_size, int)):
            if not isinstance(value, kind):
                raise TypeError(f"{name} should be of type {kind.__name__}, got: "
                                f"{type(value).__name__}")
            if kind is int and value <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        directions = 2 if bidirectional else 1
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else real_hidden * directions
            for direction in range(directions):
                suffix = "_reverse" if direction == 1 else ""
                shapes = [("weight_ih", (gate_size, layer_input)),
                          ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr", (proj_size, hidden_size))]
                names = []
                for base, shape in shapes:
                    name = f"{base}_l{layer}{suffix}"
                    setattr(self, name, Parameter(empty(shape, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        """The parameters, one list per layer and direction."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """A no-op: PyTorch uses it to pack weights for cuDNN; retrograd has no such layout."""

    def reset_parameters(self) -> None:
        """Draw every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # ------------------------------------------------------------------ argument checks
    def check_input(self, input, batch_sizes) -> None:
        weight_dtype = self._flat_weights[0].dtype
        if input.dtype != weight_dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight_dtype})."
                f" Convert input: input.to({weight_dtype}), or convert model: "
                f"model.to({input.dtype})")
        expected_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_dim:
            raise RuntimeError(f"input must have {expected_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                f"{input.size(-1)}: the last dimension holds the features; reshape the input "
                f"or build the layer with input_size={input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * directions, mini_batch, size)

    def check_hidden_size(self, hx, expected_hidden_size,
                          msg="Expected hidden size {}, got {}") -> None:
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(
                msg.format(tuple(expected_hidden_size), list(hx.size()))
                + " (num_layers * num_directions, batch, hidden_size); pass a state of that "
                "shape, or none for zeros")

    def check_forward_args(self, input, hidden, batch_sizes) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    # ------------------------------------------------------------------ forward
    def _zeros(self, input, batch, size):
        directions = 2 if self.bidirectional else 1
        return zeros((self.num_layers * directions, batch, size), dtype=input.dtype,
                     device=input.device)

    def _prepare(self, input, hx, lstm):
        """Unpack/unbatch ``input`` and default ``hx``; returns what forward needs."""
        name = {"LSTM": "LSTM", "GRU": "GRU"}.get(self.mode, "RNN")
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            batch = int(batch_sizes[0])
            if hx is None:
                hx = self._zeros(data, batch, real_hidden)
                if lstm:
                    hx = (hx, self._zeros(data, batch, self.hidden_size))
            elif lstm:
                hx = (self.permute_hidden(hx[0], sorted_indices),
                      self.permute_hidden(hx[1], sorted_indices))
            else:
                hx = self.permute_hidden(hx, sorted_indices)
            return data, hx, batch_sizes, unsorted_indices, True
        if input.dim() not in (2, 3):
            got = f"{input.dim()}D tensor instead" if name == "RNN" else f"{input.dim()}D instead"
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {got}")
        batched = input.dim() == 3
        x = input if batched else input.unsqueeze(0 if self.batch_first else 1)
        if hx is not None:
            states = hx if lstm else (hx,)
            want = 3 if batched else 2
            if any(s.dim() != want for s in states):
                dims = ", ".join(f"{s.dim()}-D" for s in states)
                what = "hx and cx" if lstm else "hx"
                kind = "batched 3-D" if batched else "unbatched 2-D"
                got = f"({dims}) tensors" if lstm else f"{dims} tensor"
                raise RuntimeError(f"For {kind} input, {what} should also be {want}-D but got "
                                   f"{got}")
            if not batched:
                hx = tuple(s.unsqueeze(1) for s in hx) if lstm else hx.unsqueeze(1)
        batch = x.size(0) if self.batch_first else x.size(1)
        if hx is None:
            hx = self._zeros(x, batch, real_hidden)
            if lstm:
                hx = (hx, self._zeros(x, batch, self.hidden_size))
        return x, hx, None, None, batched

    def _check_states(self, input, hx, batch_sizes, lstm):
        if not lstm:
            self.check_forward_args(input, hx, batch_sizes)
            return
        self.check_input(input, batch_sizes)
        expected = self.get_expected_hidden_size(input, batch_sizes)
        self.check_hidden_size(hx[0], expected, "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hx[1], expected[:2] + (self.hidden_size,),
                               "Expected hidden[1] size {}, got {}")

    def _forward(self, input, hx):
        lstm = self.mode == "LSTM"
        packed = isinstance(input, PackedSequence)
        x, hx, batch_sizes, unsorted, batched = self._prepare(input, hx, lstm)
        self._check_states(x, hx, batch_sizes, lstm)
        h0, c0 = hx if lstm else (hx, None)
        if packed:
            steps_sizes = [int(b) for b in batch_sizes.tolist()]
            flat = x
        else:
            if self.batch_first:
                x = x.transpose(0, 1)
            steps, batch = x.shape[0], x.shape[1]
            if steps == 0:
                raise RuntimeError("Expected sequence length to be larger than 0 in RNN; the "
                                   f"input of shape {list(input.shape)} has no time steps")
            steps_sizes = [batch] * steps
            flat = x.reshape(steps * batch, x.shape[2])
        out, h_n, c_n = self._layers(flat, steps_sizes, h0, c0)
        h_n = stack(h_n, 0)
        c_n = stack(c_n, 0) if lstm else None
        if packed:
            output = PackedSequence(out, batch_sizes, input.sorted_indices, unsorted)
            h_n = self.permute_hidden(h_n, unsorted)
            c_n = None if c_n is None else self.permute_hidden(c_n, unsorted)
        else:
            output = out.reshape(steps, batch, out.shape[-1])
            if self.batch_first:
                output = output.transpose(0, 1)
            if not batched:
                output = output.squeeze(0 if self.batch_first else 1)
                h_n = h_n.squeeze(1)
                c_n = None if c_n is None else c_n.squeeze(1)
        return output, ((h_n, c_n) if lstm else h_n)

    def _layers(self, flat, batch_sizes, h0, c0):
        step = _STEPS[self.mode]
        directions = 2 if self.bidirectional else 1
        dropout = self.dropout if self.training else 0.0
        finals_h, finals_c = [], []
        all_weights = self.all_weights
        for layer in range(self.num_layers):
            if layer > 0 and dropout > 0:
                flat = F.dropout(flat, dropout, True)
            outs = []
            for direction in range(directions):
                k = layer * directions + direction
                weights = all_weights[k]
                w_ih, w_hh = weights[0], weights[1]
                b_ih, b_hh = (weights[2], weights[3]) if self.bias else (None, None)
                w_hr = weights[-1] if self.proj_size > 0 else None
                gi = _input_projection(self.mode, flat, w_ih, b_ih, b_hh)
                if self.mode == "LSTM" and batch_sizes[0] == batch_sizes[-1]:
                    # a padded batch: the whole direction is one node (_rnn_fused.py)
                    out, h, c = LSTMDirection.apply(gi, h0[k], c0[k], w_hh, w_hr,
                                                    direction == 1)
                    outs.append(out)
                    finals_h.append(h)
                    finals_c.append(c)
                    continue
                out, h, c = _run_direction(
                    step, gi, batch_sizes, h0[k], None if c0 is None else c0[k],
                    _step_weights(self.mode, w_hh, b_hh, w_hr), reverse=direction == 1)
                outs.append(out)
                finals_h.append(h)
                finals_c.append(c)
            flat = outs[0] if directions == 1 else cat(outs, 1)
        return flat, finals_h, finals_c


class RNN(RNNBase):
    """A multi-layer Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)``
    (``nonlinearity="relu"`` for ReLU).  Input ``(L, N, H_in)`` (``(N, L, H_in)`` with
    ``batch_first``), ``(L, H_in)`` unbatched, or a :class:`PackedSequence`; returns the
    output of the last layer at every step and the final hidden state of every layer.

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd import nn
    >>> out, h = nn.RNN(3, 4, num_layers=2)(T.zeros(5, 2, 3))
    >>> out.shape, h.shape
    (retrograd.Size([5, 2, 4]), retrograd.Size([2, 2, 4]))
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def __setattr__(self, name, value):
        # nonlinearity is set before Module.__init__ (as PyTorch does): a plain attribute
        if name == "nonlinearity" and "_parameters" not in self.__dict__:
            object.__setattr__(self, name, value)
        else:
            super().__setattr__(name, value)

    def forward(self, input, hx=None):
        return self._forward(input, hx)


class LSTM(RNNBase):
    """A multi-layer LSTM (gates i, f, g, o, as PyTorch), with an optional projection of
    the hidden state (``proj_size``).  Returns ``output, (h_n, c_n)``.

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd import nn
    >>> out, (h, c) = nn.LSTM(3, 4, batch_first=True)(T.zeros(2, 5, 3))
    >>> out.shape, h.shape, c.shape
    (retrograd.Size([2, 5, 4]), retrograd.Size([1, 2, 4]), retrograd.Size([1, 2, 4]))
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def check_forward_args(self, input, hidden, batch_sizes) -> None:
        """``hidden`` is the pair (h, c): h as the other layers' state, c of hidden_size."""
        self._check_states(input, hidden, batch_sizes, lstm=True)

    def get_expected_cell_size(self, input, batch_sizes):
        expected = self.get_expected_hidden_size(input, batch_sizes)
        return expected[:2] + (self.hidden_size,)

    def permute_hidden(self, hx, permutation):
        if permutation is None or isinstance(hx, Tensor):
            return super().permute_hidden(hx, permutation)
        return tuple(super(LSTM, self).permute_hidden(s, permutation) for s in hx)

    def forward(self, input, hx=None):
        return self._forward(input, hx)


class GRU(RNNBase):
    """A multi-layer GRU: ``r, z = sigmoid(...)``, ``n = tanh(W_in x + b_in + r * (W_hn h +
    b_hn))``, ``h' = (1 - z) * n + z * h``.

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd import nn
    >>> out, h = nn.GRU(3, 4, bidirectional=True)(T.zeros(5, 3))
    >>> out.shape, h.shape
    (retrograd.Size([5, 8]), retrograd.Size([2, 4]))
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx)


# ------------------------------------------------------------------ the one-step cells
class RNNCellBase(Module):
    """What the cells share: ``weight_ih`` (gates * hidden, input), ``weight_hh``
    (gates * hidden, hidden), ``bias_ih``, ``bias_hh``, all from U(-1/sqrt(hidden),
    1/sqrt(hidden))."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), dtype=dtype))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), dtype=dtype))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _check(self, name, input, states):
        """The shape checks of PyTorch's cells, then ``input`` and ``states`` batched."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D "
                             "instead")
        for i, s in enumerate(states):
            if s is not None and s.dim() not in (1, 2):
                what = f"hx[{i}]" if name == "LSTMCell" else "hidden"
                raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {s.dim()}D "
                                 "instead")
        batched = input.dim() == 2
        x = input if batched else input.unsqueeze(0)
        if x.size(1) != self.input_size:
            raise RuntimeError(
                f"input has inconsistent input_size: got {x.size(1)} expected "
                f"{self.input_size}; the last dimension holds the features (build the cell "
                f"with input_size={x.size(1)} or reshape the input)")
        out = []
        for i, s in enumerate(states):
            if s is None:
                s = zeros((x.size(0), self.hidden_size), dtype=x.dtype,
                          device=x.device)
            elif not batched:
                s = s.unsqueeze(0)
            if s.dim() != 2 or s.size(0) != x.size(0):
                raise RuntimeError(
                    f"Input batch size {x.size(0)} doesn't match hidden{i} batch size "
                    f"{s.size(0) if s.dim() == 2 else s.shape}; give one state row per input "
                    "row")
            if s.size(1) != self.hidden_size:
                raise RuntimeError(
                    f"hidden{i} has inconsistent hidden_size: got {s.size(1)}, expected "
                    f"{self.hidden_size}; pass a state of shape (batch, {self.hidden_size})")
            out.append(s)
        if input.dtype != self.weight_ih.dtype:
            raise RuntimeError(
                f"{name}: input dtype {input.dtype} does not match the weight dtype "
                f"{self.weight_ih.dtype}; convert the input with input.to({self.weight_ih.dtype})"
                f" or the cell with cell.to({input.dtype})")
        return x, out, batched


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: ``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)`` (or ReLU).

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd import nn
    >>> nn.RNNCell(3, 4)(T.zeros(2, 3)).shape
    retrograd.Size([2, 4])
    """

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        x, (h,), batched = self._check("RNNCell", input, (hx,))
        step = _tanh_step if self.nonlinearity == "tanh" else _relu_step
        gi = _input_projection("RNN", x, self.weight_ih, self.bias_ih, self.bias_hh)
        h, _ = step(gi, h, None, _step_weights("RNN", self.weight_hh, self.bias_hh, None))
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: returns ``(h', c')``.

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd import nn
    >>> h, c = nn.LSTMCell(3, 4)(T.zeros(3))
    >>> h.shape, c.shape
    (retrograd.Size([4]), retrograd.Size([4]))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, dtype=dtype)

    def forward(self, input, hx=None):
        states = (None, None) if hx is None else tuple(hx)
        x, (h, c), batched = self._check("LSTMCell", input, states)
        gi = _input_projection("LSTM", x, self.weight_ih, self.bias_ih, self.bias_hh)
        h, c = _lstm_step(gi, h, c, _step_weights("LSTM", self.weight_hh, self.bias_hh, None))
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step: returns ``h'``.

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd import nn
    >>> nn.GRUCell(3, 4)(T.zeros(2, 3), T.zeros(2, 4)).shape
    retrograd.Size([2, 4])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, dtype=dtype)

    def forward(self, input, hx=None):
        x, (h,), batched = self._check("GRUCell", input, (hx,))
        gi = _input_projection("GRU", x, self.weight_ih, self.bias_ih, self.bias_hh)
        h, _ = _gru_step(gi, h, None, _step_weights("GRU", self.weight_hh, self.bias_hh, None))
        return h if batched else h.squeeze(0)
