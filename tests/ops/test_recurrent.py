"""Op tests, the functional recurrent ops at top level (ops/recurrent.py): the cells
``rnn_tanh_cell``, ``rnn_relu_cell``, ``lstm_cell``, ``gru_cell`` and the sequence functions
``rnn_tanh``, ``rnn_relu``, ``lstm``, ``gru``.

One table (float64 gradcheck and gradgradcheck, values, gradients of the input, the states
and every weight against PyTorch, grad_fn names and the graph's shape); below it, the
errors.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

from .helpers import Case, case_checks

CASES: list[Case] = []

B, IN, H = 2, 3, 2  # batch, input size, hidden size (tiny: gradgradcheck over many weights)


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


def _cell_shapes(gates, bias):
    shapes = ((B, IN), (B, H), (gates * H, IN), (gates * H, H))
    return shapes + (((gates * H,), (gates * H,)) if bias else ())


for _name in ("rnn_tanh_cell", "rnn_relu_cell", "gru_cell"):
    _gates = 3 if _name == "gru_cell" else 1
    case(_name, lambda m, x, h, *w, name: getattr(m, name)(x, h, *w),
         _cell_shapes(_gates, True), params={"name": _name})
    case(f"{_name}_no_bias", lambda m, x, h, *w, name: getattr(m, name)(x, h, *w),
         _cell_shapes(_gates, False), params={"name": _name})
case("lstm_cell", lambda m, x, h, c, *w: m.lstm_cell(x, (h, c), *w),
     ((B, IN), (B, H), (B, H), (4 * H, IN), (4 * H, H), (4 * H,), (4 * H,)))
case("lstm_cell_no_bias_keywords", lambda m, x, h, c, wi, wh: m.lstm_cell(
    input=x, hx=[h, c], w_ih=wi, w_hh=wh), ((B, IN), (B, H), (B, H), (4 * H, IN), (4 * H, H)))

def _seq_shapes(gates, bias, layers=1, directions=1):
    shapes = []
    for layer in range(layers):
        width = IN if layer == 0 else H * directions
        for _ in range(directions):
            shapes += [(gates * H, width), (gates * H, H)]
            if bias:
                shapes += [(gates * H,), (gates * H,)]
    return tuple(shapes)


for _name, _gates in (("rnn_tanh", 1), ("rnn_relu", 1), ("gru", 3)):
    case(_name, lambda m, x, h, *w, name: getattr(m, name)(
        x, h, w, True, 1, 0.0, False, False, False),
        ((2, 1, IN), (1, 1, H)) + _seq_shapes(_gates, True), params={"name": _name})
case("rnn_tanh_two_layers_bidirectional_batch_first", lambda m, x, h, *w: m.rnn_tanh(
    x, h, w, False, 2, 0.0, False, True, True), ((1, 2, IN), (4, 1, H)) + _seq_shapes(
    1, False, 2, 2), xfail={"structure": "retrograd's matmul of a 3-D input by a matrix is one "
                          "node (UnsafeViewBackward0); PyTorch's folds it into view, mm and "
                          "_unsafe_view (ops/linalg.py, not this op)"})
case("lstm", lambda m, x, h, c, *w: m.lstm(x, (h, c), w, True, 1, 0.0, False, False, False),
     ((2, 1, IN), (1, 1, H), (1, 1, H)) + _seq_shapes(4, True))
case("gru_bidirectional", lambda m, x, h, *w: m.gru(x, h, w, True, 1, 0.5, False, True, False),
     ((2, 1, IN), (2, 1, H)) + _seq_shapes(3, True, 1, 2))

(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


def z(m, *shape):
    return m.zeros(*shape)


BAD = [
    ("1-d input", lambda m: m.rnn_tanh_cell(z(m, 3), z(m, 4), z(m, 4, 3), z(m, 4, 4)),
     "dimension out of range"),
    ("batch mismatch", lambda m: m.rnn_tanh_cell(z(m, 2, 3), z(m, 3, 4), z(m, 4, 3),
                                                 z(m, 4, 4)), "batch size"),
    ("input size", lambda m: m.rnn_relu_cell(z(m, 2, 5), z(m, 2, 4), z(m, 4, 3), z(m, 4, 4)),
     "input_size"),
    ("hidden size", lambda m: m.gru_cell(z(m, 2, 3), z(m, 2, 5), z(m, 12, 3), z(m, 12, 4)),
     "hidden_size"),
    ("one lstm state", lambda m: m.lstm_cell(z(m, 2, 3), (z(m, 2, 4),), z(m, 16, 3),
                                             z(m, 16, 4)), "two hidden states"),
    ("gate rows", lambda m: m.lstm_cell(z(m, 2, 3), (z(m, 2, 4), z(m, 2, 4)), z(m, 15, 3),
                                        z(m, 15, 4)), "4 * hidden_size"),
]


@pytest.mark.parametrize("call,words", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_recurrent_errors_as_torch(call, words, torch):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)) as got:
        call(retrograd)
    assert words in str(got.value).lower(), str(got.value)


def test_the_cells_agree_with_nn_cells():
    retrograd.manual_seed(0)
    cell = retrograd.nn.LSTMCell(IN, H)
    x, h, c = retrograd.randn(B, IN), retrograd.randn(B, H), retrograd.randn(B, H)
    want = cell(x, (h, c))
    got = retrograd.lstm_cell(x, (h, c), cell.weight_ih, cell.weight_hh, cell.bias_ih,
                              cell.bias_hh)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
