"""RNN, LSTM, GRU and their cells against PyTorch with the same weights: outputs, final
states, input / initial-state gradients and every parameter gradient (float64 tight,
float32 loose), over layers x directions x batch_first x packed; gradcheck on a tiny LSTM;
parameter names, state_dict keys, reprs and errors as PyTorch's."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import retrograd as T
from retrograd import nn
from retrograd.autograd import gradcheck, gradgradcheck
from retrograd.nn.utils import rnn as rnn_utils

from .helpers import close, copy_weights

TOL = {"float64": 1e-10, "float32": 2e-5}
STEPS, BATCH, IN, HIDDEN = 4, 3, 3, 4
LENGTHS = [2, 4, 3]  # unsorted: the packed runs use enforce_sorted=False


def _pair(torch, dtype, *shape, seed):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return T.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def _states(torch, mode, dtype, layers, directions, batch, proj, seed, unbatched=False):
    """Initial states for both libraries (h0, or (h0, c0) for an LSTM)."""
    lead = (layers * directions,)
    mid = () if unbatched else (batch,)
    h = _pair(torch, dtype, *lead, *mid, proj or HIDDEN, seed=seed)
    if mode != "LSTM":
        return [h]
    return [h, _pair(torch, dtype, *lead, *mid, HIDDEN, seed=seed + 1)]


def _run_both(torch, mode, *, layers=1, bidirectional=False, batch_first=False, packed=False,
              proj=0, with_states=True, unbatched=False, dtype="float64", bias=True,
              lengths=LENGTHS):
    kwargs = dict(num_layers=layers, bidirectional=bidirectional, batch_first=batch_first,
                  bias=bias)
    if proj:
        kwargs["proj_size"] = proj
    th = getattr(torch.nn, mode)(IN, HIDDEN, **kwargs).to(getattr(torch, dtype))
    rg = getattr(nn, mode)(IN, HIDDEN, **kwargs).to(getattr(T, dtype))
    copy_weights(rg, th)
    shape = (STEPS, IN) if unbatched else ((BATCH, STEPS, IN) if batch_first else
                                           (STEPS, BATCH, IN))
    x_rg, x_th = _pair(torch, dtype, *shape, seed=1)
    directions = 2 if bidirectional else 1
    states = (_states(torch, mode, dtype, layers, directions, BATCH, proj, 2, unbatched)
              if with_states else [])
    hx_rg = [s[0] for s in states]
    hx_th = [s[1] for s in states]

    def call(lib, utils, module, x, hx):
        if packed:
            x = utils.pack_padded_sequence(x, lengths, batch_first=batch_first,
                                           enforce_sorted=False)
        if not hx:
            hx = None
        elif mode == "LSTM":
            hx = tuple(hx)
        else:
            hx = hx[0]
        out, state = module(x, hx)
        if packed:
            out, got_lengths = utils.pad_packed_sequence(out, batch_first=batch_first)
            assert got_lengths.tolist() == list(lengths)
        return out, (list(state) if mode == "LSTM" else [state])

    out_rg, st_rg = call(T, rnn_utils, rg, x_rg, hx_rg)
    out_th, st_th = call(torch, torch.nn.utils.rnn, th, x_th, hx_th)
    tol = TOL[dtype]
    assert str(out_rg.dtype).split(".")[-1] == str(out_th.dtype).split(".")[-1]
    close(out_rg, out_th, tol)
    for a, b in zip(st_rg, st_th):
        close(a, b, tol)
    # one backward through the output and every final state
    rng = np.random.default_rng(3)
    loss_rg, loss_th = 0, 0
    for a, b in zip([out_rg] + st_rg, [out_th] + st_th):
        w = rng.standard_normal(tuple(b.shape)).astype(dtype)
        loss_rg = loss_rg + (a * T.tensor(w)).sum()
        loss_th = loss_th + (b * torch.tensor(w)).sum()
    loss_rg.backward()
    loss_th.backward()
    for a, b in zip([x_rg] + hx_rg, [x_th] + hx_th):
        close(a.grad, b.grad, tol)
    th_params = dict(th.named_parameters())
    assert [n for n, _ in rg.named_parameters()] == list(th_params)
    for name, p in rg.named_parameters():
        assert p.grad is not None, name
        close(p.grad, th_params[name].grad, tol)


GRID = list(itertools.product(["RNN", "LSTM", "GRU"], [1, 2], [False, True], [False, True],
                              [False, True]))


@pytest.mark.parametrize("mode, layers, bidirectional, batch_first, packed", GRID,
                         ids=["-".join(str(v) for v in g) for g in GRID])
def test_sequence_layers_match_torch(torch, mode, layers, bidirectional, batch_first, packed):
    _run_both(torch, mode, layers=layers, bidirectional=bidirectional, batch_first=batch_first,
              packed=packed)


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("lengths", [[4, 4, 4], [1, 4, 1], [3, 1, 3], [1, 1, 1]])
def test_packed_lengths_with_ties_and_ones(torch, mode, lengths):
    _run_both(torch, mode, layers=2, bidirectional=True, packed=True, lengths=lengths,
              proj=2 if mode == "LSTM" else 0)


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("packed", [False, True])
def test_float32_matches_torch_loosely(torch, mode, packed):
    _run_both(torch, mode, layers=2, bidirectional=True, packed=packed, dtype="float32")


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
def test_default_zero_states_and_no_bias(torch, mode):
    _run_both(torch, mode, with_states=False, layers=2, bias=False)
    _run_both(torch, mode, with_states=False, packed=True, bidirectional=True)


@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("packed", [False, True])
def test_lstm_proj_size(torch, bidirectional, packed):
    _run_both(torch, "LSTM", proj=2, layers=2, bidirectional=bidirectional, packed=packed)
    _run_both(torch, "LSTM", proj=3, with_states=False, batch_first=True, packed=packed)


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("with_states", [False, True])
def test_unbatched_input(torch, mode, with_states):
    _run_both(torch, mode, unbatched=True, with_states=with_states, bidirectional=True,
              batch_first=True)


def test_relu_rnn(torch):
    th = torch.nn.RNN(IN, HIDDEN, 2, nonlinearity="relu").double()
    rg = nn.RNN(IN, HIDDEN, 2, nonlinearity="relu").double()
    copy_weights(rg, th)
    x = np.random.default_rng(0).standard_normal((STEPS, BATCH, IN))
    x_rg, x_th = T.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (o_rg, h_rg), (o_th, h_th) = rg(x_rg), th(x_th)
    close(o_rg, o_th, 1e-10)
    close(h_rg, h_th, 1e-10)
    (o_rg.sum() + h_rg.sum()).backward()
    (o_th.sum() + h_th.sum()).backward()
    close(x_rg.grad, x_th.grad, 1e-10)
    close(rg.weight_hh_l1.grad, th.weight_hh_l1.grad, 1e-10)


# ------------------------------------------------------------------ cells
CELLS = [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("RNNCell", {"bias": False}),
         ("LSTMCell", {}), ("LSTMCell", {"bias": False}), ("GRUCell", {}),
         ("GRUCell", {"bias": False})]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_states", [True, False])
@pytest.mark.parametrize("name, kwargs", CELLS, ids=[f"{c[0]}-{c[1]}" for c in CELLS])
def test_cells_match_torch(torch, name, kwargs, batched, with_states, dtype):
    th = getattr(torch.nn, name)(IN, HIDDEN, **kwargs).to(getattr(torch, dtype))
    rg = getattr(nn, name)(IN, HIDDEN, **kwargs).to(getattr(T, dtype))
    copy_weights(rg, th)
    lead = (BATCH,) if batched else ()
    x_rg, x_th = _pair(torch, dtype, *lead, IN, seed=4)
    states = [_pair(torch, dtype, *lead, HIDDEN, seed=5 + i)
              for i in range(2 if name == "LSTMCell" else 1)] if with_states else []
    hx_rg = tuple(s[0] for s in states)
    hx_th = tuple(s[1] for s in states)
    if name != "LSTMCell":
        hx_rg, hx_th = (hx_rg[0], hx_th[0]) if states else (None, None)
    elif not states:
        hx_rg = hx_th = None
    out_rg, out_th = rg(x_rg, hx_rg), th(x_th, hx_th)
    out_rg = list(out_rg) if name == "LSTMCell" else [out_rg]
    out_th = list(out_th) if name == "LSTMCell" else [out_th]
    tol = TOL[dtype]
    for a, b in zip(out_rg, out_th):
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        close(a, b, tol)
    sum(o.sum() * (i + 1) for i, o in enumerate(out_rg)).backward()
    sum(o.sum() * (i + 1) for i, o in enumerate(out_th)).backward()
    for a, b in zip([x_rg] + [s[0] for s in states], [x_th] + [s[1] for s in states]):
        close(a.grad, b.grad, tol)
    th_params = dict(th.named_parameters())
    for pname, p in rg.named_parameters():
        close(p.grad, th_params[pname].grad, tol)


# ------------------------------------------------------------------ gradcheck
def _lstm_function(lstm, names):
    """The LSTM as a function of (x, h0, c0, *weights named ``names``)."""

    def f(x, h0, c0, *weights):
        # the weights as plain tensors in the parameter slots, so gradcheck differentiates
        # through them (a Parameter built from them would be a new leaf)
        for name, w in zip(names, weights):
            lstm._parameters[name] = w
        out, (h, c) = lstm(x, (h0, c0))
        return out, h, c

    return f


def _leaf(*shape):
    return T.randn(*shape, dtype=T.float64, requires_grad=True)


def test_lstm_gradcheck():
    T.manual_seed(0)
    lstm = nn.LSTM(2, 2, num_layers=2, bidirectional=True, proj_size=1).double()
    names = ["weight_ih_l0", "weight_hh_l1_reverse", "bias_hh_l1", "weight_hr_l0_reverse"]
    weights = [getattr(lstm, n).detach().clone().requires_grad_(True) for n in names]
    assert gradcheck(_lstm_function(lstm, names),
                     (_leaf(2, 2, 2), _leaf(4, 2, 1), _leaf(4, 2, 2), *weights))


def test_lstm_gradgradcheck():
    T.manual_seed(0)
    lstm = nn.LSTM(2, 2).double()
    names = ["weight_hh_l0"]
    weights = [lstm.weight_hh_l0.detach().clone().requires_grad_(True)]
    assert gradgradcheck(_lstm_function(lstm, names),
                         (_leaf(2, 1, 2), _leaf(1, 1, 2), _leaf(1, 1, 2), *weights))


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_create_graph_gradients_equal_first_order_ones(mode):
    # the fused gate nodes have two derivative forms (arrays; retrograd ops under
    # create_graph): both must give the same gradients
    T.manual_seed(2)
    layer = getattr(nn, mode)(3, 4, bidirectional=True).double()
    x, h0, c0 = _leaf(3, 2, 3), _leaf(2, 2, 4), _leaf(2, 2, 4)
    inputs = [x, h0] + ([c0] if mode == "LSTM" else []) + list(layer.parameters())

    def loss():
        out, state = layer(x, (h0, c0) if mode == "LSTM" else h0)
        h, c = state if mode == "LSTM" else (state, state)
        return (out * out).sum() + (h * c).sum() + c.sum()

    plain = T.autograd.grad(loss(), inputs)
    recorded = T.autograd.grad(loss(), inputs, create_graph=True)
    for a, b in zip(plain, recorded):
        close(a, b, 1e-12)
    assert recorded[0].requires_grad


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_retain_graph_and_freed_graph(mode):
    layer = getattr(nn, mode)(3, 4).double()
    x = _leaf(3, 2, 3)
    out = layer(x)[0].sum()
    out.backward(retain_graph=True)
    first = x.grad.detach().clone()
    out.backward()
    close(x.grad, 2 * first.numpy(), 1e-12)
    with pytest.raises(RuntimeError, match="second time"):
        out.backward()


@pytest.mark.parametrize("mode", ["GRU", "RNN"])
def test_packed_gradcheck(mode):
    T.manual_seed(1)
    layer = getattr(nn, mode)(2, 2, bidirectional=True).double()
    x = T.randn(3, 2, 2, dtype=T.float64, requires_grad=True)

    def f(x):
        packed = rnn_utils.pack_padded_sequence(x, [2, 3], enforce_sorted=False)
        out, h = layer(packed)
        return rnn_utils.pad_packed_sequence(out)[0], h

    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))


# ------------------------------------------------------------------ structure
STRUCTURES = [
    ("RNN", (3, 4), {}),
    ("RNN", (3, 4, 2), {"nonlinearity": "relu", "bias": False, "batch_first": True}),
    ("LSTM", (3, 4), {"num_layers": 2, "bidirectional": True, "proj_size": 2}),
    ("LSTM", (3, 4), {"num_layers": 2, "bias": False, "dropout": 0.5, "proj_size": 1}),
    ("GRU", (3, 4), {"num_layers": 3, "bidirectional": True, "batch_first": True}),
    ("RNNCell", (2, 3), {"nonlinearity": "relu", "bias": False}),
    ("LSTMCell", (2, 3), {}),
    ("GRUCell", (2, 3), {"bias": False}),
]


@pytest.mark.parametrize("name, args, kwargs", STRUCTURES,
                         ids=[f"{s[0]}-{i}" for i, s in enumerate(STRUCTURES)])
def test_parameters_state_dict_and_repr_match_torch(torch, name, args, kwargs):
    th = getattr(torch.nn, name)(*args, **kwargs)
    rg = getattr(nn, name)(*args, **kwargs)
    assert repr(rg) == repr(th)
    assert list(rg.state_dict()) == list(th.state_dict())
    th_shapes = [(n, tuple(p.shape)) for n, p in th.named_parameters()]
    assert [(n, tuple(p.shape)) for n, p in rg.named_parameters()] == th_shapes
    if hasattr(th, "all_weights"):
        assert [[tuple(p.shape) for p in ws] for ws in rg.all_weights] == \
            [[tuple(p.shape) for p in ws] for ws in th.all_weights]
        assert rg._flat_weights_names == th._flat_weights_names
        rg.flatten_parameters()


def test_default_init_uses_retrogrades_generator_and_bounds():
    T.manual_seed(3)
    a = nn.LSTM(3, 16, 2)
    T.manual_seed(3)
    b = nn.LSTM(3, 16, 2)
    bound = 1 / 4
    for (name, p), q in zip(a.named_parameters(), b.parameters()):
        assert np.array_equal(p.detach().numpy(), q.detach().numpy()), name
        assert p.detach().abs().max().item() <= bound
        assert p.detach().abs().max().item() > bound * 0.5  # drawn, not left empty or zero


def test_dropout_between_layers_only_in_training():
    lstm = nn.LSTM(3, 4, num_layers=2, dropout=0.5).double()
    x = T.randn(5, 2, 3, dtype=T.float64)
    T.manual_seed(0)
    a = lstm(x)[0]
    T.manual_seed(0)
    b = lstm(x)[0]
    T.manual_seed(1)
    c = lstm(x)[0]
    assert np.array_equal(a.detach().numpy(), b.detach().numpy())  # the generator's draws
    assert not np.allclose(a.detach().numpy(), c.detach().numpy())
    lstm.eval()
    e1, e2 = lstm(x)[0], lstm(x)[0]
    assert np.array_equal(e1.detach().numpy(), e2.detach().numpy())
    lstm.dropout = 0.0
    lstm.train()
    assert np.array_equal(lstm(x)[0].detach().numpy(), e1.detach().numpy())


def test_float32_stays_float32():
    out, (h, c) = nn.LSTM(3, 4)(T.randn(2, 1, 3))
    assert out.dtype == h.dtype == c.dtype == T.float32


# ------------------------------------------------------------------ errors
def _raises(torch, build, call, exc):
    """Both libraries raise ``exc``; retrograd's message starts with PyTorch's."""
    with pytest.raises(exc) as th_err:
        call(torch, build(torch.nn))
    with pytest.raises(exc) as rg_err:
        call(T, build(nn))
    expected = str(th_err.value).replace("torch.", "retrograd.")
    assert str(rg_err.value).startswith(expected), (str(rg_err.value), expected)


ERRORS = [
    ("input-size", lambda n: n.LSTM(3, 4), lambda lib, m: m(lib.zeros(5, 2, 6)), RuntimeError),
    ("h-shape", lambda n: n.GRU(3, 4), lambda lib, m: m(lib.zeros(5, 2, 3), lib.zeros(2, 2, 4)),
     RuntimeError),
    ("lstm-h-shape", lambda n: n.LSTM(3, 4),
     lambda lib, m: m(lib.zeros(5, 2, 3), (lib.zeros(1, 3, 4), lib.zeros(1, 2, 4))), RuntimeError),
    ("lstm-c-shape", lambda n: n.LSTM(3, 4, proj_size=2),
     lambda lib, m: m(lib.zeros(5, 2, 3), (lib.zeros(1, 2, 2), lib.zeros(1, 2, 2))), RuntimeError),
    ("hx-dims", lambda n: n.RNN(3, 4), lambda lib, m: m(lib.zeros(5, 2, 3), lib.zeros(2, 4)),
     RuntimeError),
    ("hx-dims-unbatched", lambda n: n.LSTM(3, 4),
     lambda lib, m: m(lib.zeros(5, 3), (lib.zeros(1, 2, 4), lib.zeros(1, 2, 4))), RuntimeError),
    ("input-dims", lambda n: n.GRU(3, 4), lambda lib, m: m(lib.zeros(5, 2, 3, 1)), ValueError),
    ("rnn-input-dims", lambda n: n.RNN(3, 4), lambda lib, m: m(lib.zeros(3)), ValueError),
    ("dtype", lambda n: n.GRU(3, 4), lambda lib, m: m(lib.zeros(5, 2, 3, dtype=lib.float64)),
     ValueError),
    ("no-steps", lambda n: n.GRU(3, 4), lambda lib, m: m(lib.zeros(0, 2, 3)), RuntimeError),
    ("cell-input-size", lambda n: n.LSTMCell(3, 4), lambda lib, m: m(lib.zeros(2, 5)),
     RuntimeError),
    ("cell-batch", lambda n: n.LSTMCell(3, 4),
     lambda lib, m: m(lib.zeros(2, 3), (lib.zeros(3, 4), lib.zeros(2, 4))), RuntimeError),
    ("cell-hidden", lambda n: n.GRUCell(3, 4), lambda lib, m: m(lib.zeros(2, 3), lib.zeros(2, 5)),
     RuntimeError),
    ("cell-dims", lambda n: n.RNNCell(3, 4), lambda lib, m: m(lib.zeros(1, 2, 3)), ValueError),
    ("cell-nonlinearity", lambda n: n.RNNCell(3, 4, nonlinearity="x"),
     lambda lib, m: m(lib.zeros(3)), RuntimeError),
]


@pytest.mark.parametrize("name, build, call, exc", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(torch, name, build, call, exc):
    _raises(torch, build, call, exc)


CONSTRUCTOR_ERRORS = [
    lambda n: n.RNN(3, 4, nonlinearity="x"),
    lambda n: n.GRU(3, 4, proj_size=2),
    lambda n: n.LSTM(3, 4, proj_size=4),
    lambda n: n.LSTM(3, 4, dropout=2),
    lambda n: n.LSTM(3, 0),
    lambda n: n.LSTM(3, 4, num_layers=0),
]


@pytest.mark.parametrize("build", CONSTRUCTOR_ERRORS)
def test_constructor_errors_match_torch(torch, build):
    with pytest.raises(ValueError) as th_err:
        build(torch.nn)
    with pytest.raises(ValueError) as rg_err:
        build(nn)
    assert str(rg_err.value) == str(th_err.value)
    with pytest.raises(TypeError, match="bias should be of type bool"):
        nn.GRU(3, 4, bias=1)


def test_dropout_with_one_layer_warns():
    with pytest.warns(UserWarning, match="num_layers greater than 1"):
        nn.GRU(3, 4, dropout=0.2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.GRU(3, 4, num_layers=2, dropout=0.2)
