"""The transformer layers against torch.nn's with the same weights, in eval mode: outputs,
input and every parameter gradient (float64 tight, float32 close), with masks (bool and
float, key padding, causal), batch_first and norm_first both ways; repr, state_dict keys,
the causal-mask helper, warnings, errors, dropout in training, double backward."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest

import retrograd as T
from retrograd import nn
from retrograd.autograd import gradcheck, gradgradcheck

from .helpers import close, copy_weights

pytestmark = pytest.mark.filterwarnings("ignore:enable_nested_tensor is True",
                                        "ignore:Support for mismatched",
                                        "ignore:The PyTorch API of nested tensors")

RNG = np.random.default_rng(3)
D, H, FF = 4, 2, 6  # d_model, heads, feed-forward width
S, TG, N = 4, 3, 2  # source length, target length, batch


def real(*shape):
    return RNG.standard_normal(shape)


def seq(n, batch_first=False):
    return real(N, n, D) if batch_first else real(n, N, D)


def padding(n):
    m = np.zeros((N, n), bool)
    m[0, -1] = m[1, 0] = True
    return m


def bool_mask(lq, ls):
    m = RNG.uniform(size=(lq, ls)) < 0.3
    m[:, 1] = False  # never a whole row masked
    return m


def causal(n):
    return np.triu(np.full((n, n), -np.inf), 1)


def enc_layer(**kw):
    return lambda nn: nn.TransformerEncoderLayer(D, H, FF, **kw)


def dec_layer(**kw):
    return lambda nn: nn.TransformerDecoderLayer(D, H, FF, **kw)


def encoder(norm=True, **kw):
    return lambda nn: nn.TransformerEncoder(nn.TransformerEncoderLayer(D, H, FF, **kw), 2,
                                            nn.LayerNorm(D) if norm else None)


def decoder(**kw):
    return lambda nn: nn.TransformerDecoder(nn.TransformerDecoderLayer(D, H, FF, **kw), 2,
                                            nn.LayerNorm(D))


def transformer(**kw):
    return lambda nn: nn.Transformer(D, H, 1, 1, FF, **kw)


class _TorchNN:
    """torch.nn as the factories see it (LayerNorm included)."""

    def __init__(self, torch):
        self._nn = torch.nn

    def __getattr__(self, name):
        return getattr(self._nn, name)


def _rg_nn():
    """retrograd.nn as the factories see it: nn.LayerNorm when it is there, else the
    transformer module's own (until the layers branch lands)."""
    if hasattr(nn, "LayerNorm"):
        return nn
    from retrograd.nn.modules import transformer as tr

    class _NS:
        LayerNorm = tr.LayerNorm

        def __getattr__(self, name):
            return getattr(nn, name)

    return _NS()


# (id, factory(nn) -> module, positional inputs (arrays), forward kwargs (arrays for masks))
CASES = [
    ("enc", enc_layer(), [seq(S)], {}),
    ("enc-norm_first", enc_layer(norm_first=True), [seq(S)], {}),
    ("enc-batch_first", enc_layer(batch_first=True), [seq(S, True)], {}),
    ("enc-batch_first-norm_first", enc_layer(batch_first=True, norm_first=True),
     [seq(S, True)], {"src_key_padding_mask": padding(S)}),
    ("enc-gelu", enc_layer(activation="gelu"), [seq(S)], {}),
    ("enc-module-activation", lambda nn: nn.TransformerEncoderLayer(
        D, H, FF, activation=nn.GELU(approximate="tanh")), [seq(S)], {}),
    ("enc-callable-activation", lambda nn: nn.TransformerEncoderLayer(
        D, H, FF, activation=nn.functional.silu), [seq(S)], {}),
    ("enc-no-bias-eps", enc_layer(bias=False, layer_norm_eps=1e-3), [seq(S)], {}),
    ("enc-bool-src_mask", enc_layer(), [seq(S)], {"src_mask": bool_mask(S, S)}),
    ("enc-float-src_mask", enc_layer(), [seq(S)], {"src_mask": real(S, S)}),
    ("enc-3d-src_mask", enc_layer(), [seq(S)], {"src_mask": real(N * H, S, S)}),
    ("enc-bool-padding", enc_layer(), [seq(S)], {"src_key_padding_mask": padding(S)}),
    ("enc-float-padding", enc_layer(), [seq(S)],
     {"src_key_padding_mask": np.where(padding(S), -np.inf, 0.0)}),
    ("enc-masks-both", enc_layer(norm_first=True), [seq(S)],
     {"src_mask": bool_mask(S, S), "src_key_padding_mask": padding(S)}),
    ("enc-causal", enc_layer(), [seq(S)], {"src_mask": causal(S), "is_causal": True}),
    ("enc-unbatched", enc_layer(batch_first=True), [real(S, D)], {"src_mask": causal(S)}),
    ("encoder", encoder(), [seq(S)], {}),
    ("encoder-no-norm-batch_first", encoder(norm=False, batch_first=True), [seq(S, True)],
     {"src_key_padding_mask": padding(S)}),
    ("encoder-causal-detected", encoder(norm_first=True), [seq(S)], {"mask": causal(S)}),
    ("encoder-causal-flag", encoder(), [seq(S)], {"mask": causal(S), "is_causal": True}),
    ("encoder-bool-mask", encoder(), [seq(S)],
     {"mask": bool_mask(S, S), "src_key_padding_mask": padding(S)}),
    ("dec", dec_layer(), [seq(TG), seq(S)], {}),
    ("dec-norm_first", dec_layer(norm_first=True), [seq(TG), seq(S)], {}),
    ("dec-batch_first", dec_layer(batch_first=True), [seq(TG, True), seq(S, True)], {}),
    ("dec-gelu-no-bias", dec_layer(activation="gelu", bias=False), [seq(TG), seq(S)], {}),
    ("dec-masks", dec_layer(), [seq(TG), seq(S)],
     {"tgt_mask": causal(TG), "memory_mask": bool_mask(TG, S),
      "tgt_key_padding_mask": padding(TG), "memory_key_padding_mask": padding(S)}),
    ("dec-float-masks-batch_first-norm_first", dec_layer(batch_first=True, norm_first=True),
     [seq(TG, True), seq(S, True)],
     {"tgt_mask": real(TG, TG), "memory_mask": real(TG, S),
      "memory_key_padding_mask": np.where(padding(S), -np.inf, 0.0)}),
    ("dec-causal", dec_layer(), [seq(TG), seq(S)],
     {"tgt_mask": causal(TG), "tgt_is_causal": True}),
    ("decoder", decoder(), [seq(TG), seq(S)], {"tgt_mask": causal(TG)}),
    ("decoder-batch_first", decoder(batch_first=True, norm_first=True),
     [seq(TG, True), seq(S, True)],
     {"tgt_mask": bool_mask(TG, TG), "memory_key_padding_mask": padding(S)}),
    ("transformer", transformer(), [seq(S), seq(TG)], {}),
    ("transformer-masks", transformer(), [seq(S), seq(TG)],
     {"src_mask": bool_mask(S, S), "tgt_mask": causal(TG), "memory_mask": real(TG, S),
      "src_key_padding_mask": padding(S), "tgt_key_padding_mask": padding(TG),
      "memory_key_padding_mask": padding(S)}),
    ("transformer-batch_first-norm_first", transformer(batch_first=True, norm_first=True,
                                                       activation="gelu"),
     [seq(S, True), seq(TG, True)], {"tgt_mask": causal(TG), "tgt_is_causal": True}),
    ("transformer-unbatched", transformer(), [real(S, D), real(TG, D)],
     {"tgt_mask": causal(TG)}),
]


def _run(lib, module, inputs, call_kwargs, dtype):
    ins = [lib.tensor(a.astype(dtype), requires_grad=True) for a in inputs]
    kwargs = {k: lib.tensor(v.astype(dtype) if v.dtype.kind == "f" else v)
              if isinstance(v, np.ndarray) else v for k, v in call_kwargs.items()}
    return ins, module(*ins, **kwargs)


def _compare(torch, factory, inputs, call_kwargs, dtype, train=False):
    tol = 1e-11 if dtype == "float64" else 5e-5
    th = factory(_TorchNN(torch)).to(getattr(torch, dtype)).train(train)
    rg = factory(_rg_nn()).to(getattr(T, dtype)).train(train)
    copy_weights(rg, th)
    ins_t, out_t = _run(torch, th, inputs, call_kwargs, dtype)
    ins_r, out_r = _run(T, rg, inputs, call_kwargs, dtype)
    assert str(out_r.dtype) == str(out_t.dtype).replace("torch", "retrograd")
    close(out_r, out_t, tol)
    g = RNG.standard_normal(tuple(out_t.shape)).astype(dtype)
    out_t.backward(torch.tensor(g))
    out_r.backward(T.tensor(g))
    for a, b in zip(ins_r, ins_t):
        close(a.grad, b.grad, tol)
    th_params = dict(th.named_parameters())
    assert [n for n, _ in rg.named_parameters()] == list(th_params)
    for name, p in rg.named_parameters():
        assert p.grad is not None, name
        close(p.grad, th_params[name].grad, tol)
    return rg, th


@pytest.mark.parametrize("cid, factory, inputs, call_kwargs", CASES, ids=[c[0] for c in CASES])
def test_matches_torch_float64(torch, cid, factory, inputs, call_kwargs):
    _compare(torch, factory, inputs, call_kwargs, "float64")


FLOAT32 = ["enc-masks-both", "dec-masks", "transformer-batch_first-norm_first"]


@pytest.mark.parametrize("cid", FLOAT32)
def test_matches_torch_float32(torch, cid):
    _, factory, inputs, call_kwargs = next(c for c in CASES if c[0] == cid)
    _compare(torch, factory, inputs, call_kwargs, "float32")


def test_dropout_zero_training_matches_torch(torch):
    # training mode takes the same path as eval (no fast path either side) when p = 0
    _compare(torch, transformer(dropout=0.0), [seq(S), seq(TG)], {"tgt_mask": causal(TG)},
             "float64", train=True)


STRUCTURES = [
    enc_layer(), enc_layer(bias=False, activation=lambda x: x), dec_layer(norm_first=True),
    encoder(), decoder(), transformer(), transformer(bias=False, batch_first=True),
    lambda nn: nn.TransformerEncoderLayer(D, H, FF, activation=nn.GELU()),
]


@pytest.mark.parametrize("factory", STRUCTURES)
def test_repr_and_state_dict_keys(torch, factory):
    th, rg = factory(_TorchNN(torch)), factory(_rg_nn())
    assert repr(rg) == repr(th)
    assert list(rg.state_dict()) == list(th.state_dict())
    assert ({k: tuple(v.shape) for k, v in rg.state_dict().items()}
            == {k: tuple(v.shape) for k, v in th.state_dict().items()})
    for attr in ("norm_first", "activation_relu_or_gelu", "num_layers", "d_model", "nhead",
                 "batch_first", "use_nested_tensor", "enable_nested_tensor", "mask_check"):
        if hasattr(th, attr):
            assert getattr(rg, attr) == getattr(th, attr), attr


@pytest.mark.parametrize("dtype", [None, "float64"])
def test_generate_square_subsequent_mask(torch, dtype):
    th = torch.nn.Transformer.generate_square_subsequent_mask(
        4, dtype=None if dtype is None else getattr(torch, dtype))
    rg = nn.Transformer.generate_square_subsequent_mask(
        4, dtype=None if dtype is None else getattr(T, dtype))
    assert str(rg.dtype) == str(th.dtype).replace("torch", "retrograd")
    np.testing.assert_array_equal(rg.numpy(), th.numpy())
    assert not rg.requires_grad


@pytest.mark.parametrize("kw", [{}, {"batch_first": True}, {"batch_first": True,
                                                              "norm_first": True},
                                {"batch_first": True, "bias": False},
                                {"batch_first": True, "activation": lambda x: x}])
def test_encoder_nested_tensor_warning_as_torch(torch, kw):
    import warnings

    def build(lib_nn, **extra):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            enc = lib_nn.TransformerEncoder(lib_nn.TransformerEncoderLayer(D, H, FF, **kw), 1,
                                            **extra)
        return enc, [str(w.message) for w in seen if "nested" in str(w.message)]

    (th, th_warn), (rg, rg_warn) = build(torch.nn), build(nn)
    assert rg_warn == th_warn and rg.use_nested_tensor == th.use_nested_tensor
    assert build(nn, enable_nested_tensor=False)[1] == []


@pytest.mark.parametrize("nested", [True, False])
@pytest.mark.parametrize("pad", [[[0, 0, 0, 1], [0, 0, 0, 0], [1, 1, 1, 1]],  # left-aligned
                                 [[0, 1, 0, 1], [0, 0, 0, 0], [0, 0, 1, 1]]])
def test_encoder_inference_matches_torch_fast_path(torch, pad, nested):
    """Under no_grad in eval mode PyTorch runs batch_first encoders on nested tensors: the
    padded positions of left-aligned sequences come out 0 (before the final norm).  Without
    nested tensors its fused layer gives NaN for a sequence with every key padded (where its
    own masked path, and retrograd, give numbers): those rows are not compared."""
    def build(lib_nn):
        return lib_nn.TransformerEncoder(lib_nn.TransformerEncoderLayer(D, H, FF,
                                                                        batch_first=True),
                                         2, lib_nn.LayerNorm(D),
                                         enable_nested_tensor=nested).eval()

    th, rg = build(_TorchNN(torch)), build(_rg_nn())
    copy_weights(rg, th)
    x, pad = real(3, S, D).astype(np.float32), np.array(pad, bool)
    with torch.no_grad():
        want = th(torch.tensor(x), src_key_padding_mask=torch.tensor(pad))
    with T.no_grad():
        got = rg(T.tensor(x), src_key_padding_mask=T.tensor(pad))
    rows = slice(None) if nested else ~pad.all(1)
    close(got[rows], want[rows], 1e-5)
    with_grad = rg(T.tensor(x), src_key_padding_mask=T.tensor(pad))  # the masked path
    close(with_grad, th(torch.tensor(x), src_key_padding_mask=torch.tensor(pad)), 1e-5)


def test_layers_are_independent_copies():
    layer = nn.TransformerEncoderLayer(D, H, FF)
    enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    a, b = enc.layers[0].linear1.weight, enc.layers[1].linear1.weight
    assert a is not b and a is not layer.linear1.weight
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    with T.no_grad():
        a.add_(1.0)
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())


def test_transformer_init():
    model = nn.Transformer(8, 2, 1, 1, 12)
    for name, p in model.named_parameters():
        w = p.detach().numpy()
        if p.ndim > 1:  # xavier_uniform_ over every matrix, as PyTorch
            fan_out, fan_in = w.shape
            assert np.abs(w).max() <= np.sqrt(6.0 / (fan_in + fan_out)), name
        elif "norm" in name and name.endswith("weight"):
            np.testing.assert_array_equal(w, 1.0)
        elif "norm" in name or "in_proj_bias" in name or "out_proj.bias" in name:
            np.testing.assert_array_equal(w, 0.0)


def test_errors(torch):
    model = nn.Transformer(D, H, 1, 1, FF)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        model(T.randn(S, 2, D), T.randn(TG, 3, D))
    with pytest.raises(RuntimeError, match="feature number of src and tgt must be equal"):
        model(T.randn(S, 2, D), T.randn(TG, 2, D + 2))
    bf = nn.Transformer(D, H, 1, 1, FF, batch_first=True)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        bf(T.randn(2, S, D), T.randn(3, TG, D))
    for lib in (torch.nn, nn):
        with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
            lib.TransformerEncoderLayer(D, H, FF, activation="tanh")
        with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
            lib.TransformerDecoderLayer(D, H, FF, activation="tanh")


def test_layer_errors_as_torch(torch):
    for lib in (torch, T):
        layer = lib.nn.TransformerEncoderLayer(D, H, FF)
        x = lib.zeros(S, N, D)
        with pytest.raises(AssertionError, match="only bool and floating types of "
                                                 "src_key_padding_mask are supported"):
            layer(x, src_key_padding_mask=lib.zeros(N, S, dtype=lib.int64))
        with pytest.raises(AssertionError, match="only bool and floating types of src_mask"):
            layer(x, src_mask=lib.zeros(S, S, dtype=lib.int64))
        with pytest.raises(RuntimeError, match="The shape of the 2D attn_mask is"):
            layer(x, src_mask=lib.zeros(S + 1, S + 1))
        with pytest.raises(AssertionError, match="was expecting embedding dimension of 4"):
            layer(lib.zeros(S, N, D + 1))


def test_custom_encoder_and_decoder(torch):
    def build(lib_nn):
        return lib_nn.Transformer(
            D, H, custom_encoder=lib_nn.TransformerEncoder(
                lib_nn.TransformerEncoderLayer(D, H, FF, norm_first=True), 1),
            custom_decoder=lib_nn.TransformerDecoder(
                lib_nn.TransformerDecoderLayer(D, H, 3), 2))

    rg, th = _compare(torch, build, [seq(S), seq(TG)], {"tgt_mask": causal(TG)}, "float64")
    assert repr(rg) == repr(th)


def test_dropout_in_training_uses_retrograd_generator():
    layer = nn.TransformerEncoderLayer(D, H, FF, dropout=0.5)
    x = T.randn(S, N, D, requires_grad=True)
    T.manual_seed(1)
    a = layer(x)
    T.manual_seed(1)
    b = layer(x)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    a.sum().backward()
    assert x.grad is not None and layer.self_attn.in_proj_weight.grad is not None
    layer.eval()
    assert not np.allclose(layer(x).detach().numpy(), a.detach().numpy())


def test_double_backward_through_layers():
    T.manual_seed(0)
    enc = nn.TransformerEncoderLayer(D, H, 3, dropout=0.0, activation="gelu").double()
    dec = nn.TransformerDecoderLayer(D, H, 3, dropout=0.0, norm_first=True).double()
    src = T.randn(2, 1, D, dtype=T.float64, requires_grad=True)
    tgt = T.randn(2, 1, D, dtype=T.float64, requires_grad=True)
    mask = nn.Transformer.generate_square_subsequent_mask(2, dtype=T.float64)

    def f(src, tgt):
        return dec(tgt, enc(src), tgt_mask=mask)

    assert gradcheck(f, (src, tgt))
    assert gradgradcheck(f, (src, tgt))


@pytest.mark.parametrize("module", ["attention", "transformer"])
def test_docstring_examples_run(module):
    mod = importlib.import_module(f"retrograd.nn.modules.{module}")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


def test_pickle_round_trip():
    import pickle

    model = nn.Transformer(D, H, 1, 1, FF, activation="gelu").eval()
    copy = pickle.loads(pickle.dumps(model))
    src, tgt = T.randn(S, N, D), T.randn(TG, N, D)
    np.testing.assert_array_equal(model(src, tgt).detach().numpy(),
                                  copy(src, tgt).detach().numpy())
    assert copy.encoder.layers[0].activation is nn.functional.gelu
