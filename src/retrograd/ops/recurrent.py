"""PyTorch's functional recurrent ops at top level: ``rnn_tanh_cell``, ``rnn_relu_cell``,
``lstm_cell``, ``gru_cell`` (one step), and ``rnn_tanh``, ``rnn_relu``, ``lstm``, ``gru``
(whole padded sequences, every layer and direction, as ``torch.lstm(input, hx, params,
has_biases, num_layers, dropout, train, bidirectional, batch_first)``).

The cells are composed of retrograd's differentiable ops in the order PyTorch's CPU kernels
compose them (``linear`` of the input and of the state, ``unsafe_chunk`` into gates,
sigmoid/tanh, products), so values, gradients of every order, grad_fn names and the graph's
shape all match PyTorch's.  ``nn.RNNCell`` and friends (nn/modules/rnn.py) keep their fused
nodes for speed; this layer cannot import them (nn sits above ops), and the two agree in
value.  The sequence functions loop these cells over time and stack the outputs, as
PyTorch's CPU path does.  PackedSequence data (the ``data, batch_sizes`` overloads) is not
supported here: use ``nn.LSTM`` etc., which take PackedSequence.
"""

from __future__ import annotations

from ..tensor import Tensor
from .leftovers import unsafe_chunk
from .layout import unbind
from .linalg import matmul
from .linear import addmm, linear
from .nn import dropout as _dropout
from .pointwise import relu, sigmoid, tanh
from .inplace_forms import transpose_ as inplace_transpose
from .shape import cat, stack, t, transpose
from .quiet_fp import quiet_fp


def _linear(x, w, b):
    wt = t(w)
    return matmul(x, wt) if b is None else addmm(b, x, wt)


def _check_cell(name, input, states, w_ih, w_hh, gates):  # noqa: A002
    for s in (input, *states, w_ih, w_hh):
        if not isinstance(s, Tensor):
            raise TypeError(f"{name}(): expected Tensor arguments, got {type(s).__name__}")
    if input.ndim != 2:
        # PyTorch indexes input.size(1) without a check; a 1-D input fails there
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got "
                         f"1): {name} takes a batch, input of shape (batch, input_size), got "
                         f"shape {list(input.shape)}; unsqueeze(0) a single sample")
    if input.shape[1] != w_ih.shape[1]:
        raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected "
                           f"{w_ih.shape[1]} ({name}: w_ih has shape {list(w_ih.shape)})")
    hidden = w_hh.shape[1]
    if w_ih.shape[0] != gates * hidden:
        raise RuntimeError(f"weight_ih first dim must be {gates} * hidden_size = "
                           f"{gates * hidden}, but got {w_ih.shape[0]} ({name})")
    for i, s in enumerate(states):
        if s.ndim != 2 or s.shape[0] != input.shape[0]:
            raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{i} "
                               f"batch size {s.shape[0] if s.ndim else list(s.shape)} ({name}: "
                               "one state row per input row)")
        if s.shape[1] != hidden:
            raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {s.shape[1]}, "
                               f"expected {hidden} ({name}: w_hh has shape "
                               f"{list(w_hh.shape)})")


def _tanh_step(x, h, w_ih, w_hh, b_ih, b_hh, pre=None):
    """PyTorch's ``linear_hh(h).add_(linear_ih(x))`` (``pre``: the input's projection,
    computed for every step at once by the sequence functions)."""
    return tanh(_linear(h, w_hh, b_hh) + (_linear(x, w_ih, b_ih) if pre is None else pre))


def _relu_step(x, h, w_ih, w_hh, b_ih, b_hh, pre=None):
    return relu(_linear(h, w_hh, b_hh) + (_linear(x, w_ih, b_ih) if pre is None else pre))


def _lstm_step(x, hc, w_ih, w_hh, b_ih, b_hh, pre=None):
    h, c = hc
    gates = _linear(h, w_hh, b_hh) + (_linear(x, w_ih, b_ih) if pre is None else pre)
    i, f, g, o = unsafe_chunk(gates, 4, 1)
    cy = sigmoid(f) * c + sigmoid(i) * tanh(g)
    return sigmoid(o) * tanh(cy), cy


def _gru_step(x, h, w_ih, w_hh, b_ih, b_hh, pre=None):
    i_r, i_z, i_n = unsafe_chunk(_linear(x, w_ih, b_ih) if pre is None else pre, 3, 1)
    h_r, h_z, h_n = unsafe_chunk(_linear(h, w_hh, b_hh), 3, 1)
    r = sigmoid(h_r + i_r)
    z = sigmoid(h_z + i_z)
    n = tanh(i_n + h_n * r)
    return (h - n) * z + n


@quiet_fp
def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):  # noqa: A002
    """One Elman RNN step: ``tanh(input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh)``.

    Examples
    --------
    >>> import retrograd as T
    >>> T.rnn_tanh_cell(T.zeros(2, 3), T.zeros(2, 4), T.ones(4, 3), T.ones(4, 4)).shape
    retrograd.Size([2, 4])
    """
    _check_cell("rnn_tanh_cell", input, (hx,), w_ih, w_hh, 1)
    return _tanh_step(input, hx, w_ih, w_hh, b_ih, b_hh)


@quiet_fp
def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):  # noqa: A002
    """One Elman RNN step with ReLU: ``relu(input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh)``."""
    _check_cell("rnn_relu_cell", input, (hx,), w_ih, w_hh, 1)
    return _relu_step(input, hx, w_ih, w_hh, b_ih, b_hh)


@quiet_fp
def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):  # noqa: A002
    """One LSTM step; ``hx`` is ``(h, c)``; returns ``(h', c')``.  Gates in PyTorch's order
    (input, forget, cell, output) along ``w_ih``'s rows."""
    if len(hx) != 2:
        raise RuntimeError(f"lstm_cell expects two hidden states (h, c), got {len(hx)}")
    _check_cell("lstm_cell", input, tuple(hx), w_ih, w_hh, 4)
    return _lstm_step(input, tuple(hx), w_ih, w_hh, b_ih, b_hh)


@quiet_fp
def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):  # noqa: A002
    """One GRU step: ``r``, ``z`` gates, ``n = tanh(i_n + h_n * r)``,
    ``h' = (hx - n) * z + n`` (PyTorch's arrangement of ``(1 - z) * n + z * hx``)."""
    _check_cell("gru_cell", input, (hx,), w_ih, w_hh, 3)
    return _gru_step(input, hx, w_ih, w_hh, b_ih, b_hh)


# ------------------------------------------------------------------ whole sequences


def _sequence(name, step, input, hx, params, has_biases, num_layers,  # noqa: A002
              dropout, train, bidirectional, batch_first):
    """PyTorch's CPU layout: per layer, the input's projection for all steps at once
    (``linear`` of the (steps, batch, features) input, unbound into steps), the states
    unbound per layer and direction, one step per time, the outputs stacked; directions
    concatenated along features; the final states stacked."""
    lstm = name == "lstm"
    if not isinstance(input, Tensor) or isinstance(params, Tensor):
        raise NotImplementedError(
            f"{name}(): only the padded form (input, hx, params, has_biases, num_layers, "
            "dropout, train, bidirectional, batch_first) is supported; for a PackedSequence "
            "use the nn module")
    if input.ndim != 3:
        raise RuntimeError(f"{name}(): input must have 3 dimensions (seq_len, batch, "
                           f"input_size), got shape {list(input.shape)}")
    directions = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    params = list(params)
    if len(params) != per * num_layers * directions:
        raise RuntimeError(f"{name}(): got {len(params)} parameters, expected {per} per layer "
                           f"and direction ({num_layers} layers, {directions} directions: "
                           f"{per * num_layers * directions}); projections (proj_size) are "
                           "not supported here")
    h0 = unbind(hx[0] if lstm else hx, 0)
    c0 = unbind(hx[1], 0) if lstm else None
    layer_in = transpose(input, 0, 1) if batch_first else input
    steps = layer_in.shape[0]
    final_h, final_c = [], []
    for layer in range(num_layers):
        if layer > 0 and dropout > 0 and train:
            layer_in = _dropout(layer_in, dropout, True)
        outs = []
        for direction in range(directions):
            k = layer * directions + direction
            w = params[k * per:(k + 1) * per]
            b_ih, b_hh = (w[2], w[3]) if has_biases else (None, None)
            pre = unbind(linear(layer_in, w[0], b_ih), 0)
            state = (h0[k], c0[k]) if lstm else h0[k]
            seq = [None] * steps
            for s in (range(steps - 1, -1, -1) if direction == 1 else range(steps)):
                state = step(None, state, None, w[1], None, b_hh, pre[s])
                seq[s] = state[0] if lstm else state
            outs.append(stack(seq, 0))
            final_h.append(state[0] if lstm else state)
            if lstm:
                final_c.append(state[1])
        layer_in = outs[0] if directions == 1 else cat(outs, 2)
    out = inplace_transpose(layer_in, 0, 1) if batch_first else layer_in
    if lstm:
        return out, stack(final_h, 0), stack(final_c, 0)
    return out, stack(final_h, 0)


@quiet_fp
def rnn_tanh(input, hx, params, has_biases, num_layers, dropout, train,  # noqa: A002
             bidirectional, batch_first):
    """A multi-layer tanh RNN over a padded sequence: returns ``(output, h_n)``."""
    return _sequence("rnn_tanh", _tanh_step, input, hx, params, has_biases, num_layers,
                     dropout, train, bidirectional, batch_first)


@quiet_fp
def rnn_relu(input, hx, params, has_biases, num_layers, dropout, train,  # noqa: A002
             bidirectional, batch_first):
    """A multi-layer ReLU RNN over a padded sequence: returns ``(output, h_n)``."""
    return _sequence("rnn_relu", _relu_step, input, hx, params, has_biases, num_layers,
                     dropout, train, bidirectional, batch_first)


@quiet_fp
def lstm(input, hx, params, has_biases, num_layers, dropout, train,  # noqa: A002
         bidirectional, batch_first):
    """A multi-layer LSTM over a padded sequence; ``hx`` is ``(h_0, c_0)``; returns
    ``(output, h_n, c_n)``."""
    return _sequence("lstm", _lstm_step, input, hx, params, has_biases, num_layers,
                     dropout, train, bidirectional, batch_first)


@quiet_fp
def gru(input, hx, params, has_biases, num_layers, dropout, train,  # noqa: A002
        bidirectional, batch_first):
    """A multi-layer GRU over a padded sequence: returns ``(output, h_n)``."""
    return _sequence("gru", _gru_step, input, hx, params, has_biases, num_layers,
                     dropout, train, bidirectional, batch_first)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

for _fn in (rnn_tanh_cell, rnn_relu_cell, lstm_cell, gru_cell, rnn_tanh, rnn_relu, lstm, gru):
    register(_fn, method=False)
