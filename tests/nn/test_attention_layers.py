"""nn.MultiheadAttention against torch.nn.MultiheadAttention with the same weights: outputs,
attention weights, input and parameter gradients (float64, tight), over every constructor
option and mask form; repr, state_dict keys, initialisation, errors and dropout."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as T
from retrograd import nn
from retrograd.autograd import gradcheck, gradgradcheck

from .helpers import close, copy_weights

RNG = np.random.default_rng(11)
E, H, L, S, N = 4, 2, 3, 5, 2  # embed dim, heads, query length, key length, batch


def real(*shape):
    return RNG.standard_normal(shape)


def _padding(n, s):
    m = np.zeros((n, s), bool)
    m[0, -1] = m[-1, 1] = True  # never a whole row masked
    return m


def _bool_mask(lq, ls):
    m = RNG.uniform(size=(lq, ls)) < 0.3
    m[:, 0] = False  # every query keeps at least key 0
    return m


def _causal(n):
    return np.triu(np.full((n, n), -np.inf), 1)


# (id, constructor kwargs, tensors {name: array}, which names are query/key/value,
#  forward kwargs: arrays for masks are given as ("mask", array))
SELF = {"x": real(L, N, E)}
CROSS = {"q": real(L, N, E), "k": real(S, N, E), "v": real(S, N, E)}
CASES = [
    ("self", {}, SELF, ("x", "x", "x"), {}),
    ("cross", {}, CROSS, ("q", "k", "v"), {}),
    ("kv-shared", {}, {"q": real(L, N, E), "kv": real(S, N, E)}, ("q", "kv", "kv"), {}),
    ("batch_first", {"batch_first": True}, {"x": real(N, L, E)}, ("x", "x", "x"), {}),
    ("batch_first-cross", {"batch_first": True},
     {"q": real(N, L, E), "k": real(N, S, E), "v": real(N, S, E)}, ("q", "k", "v"), {}),
    ("no-bias", {"bias": False}, CROSS, ("q", "k", "v"), {}),
    ("bias_kv", {"add_bias_kv": True}, CROSS, ("q", "k", "v"), {}),
    ("zero_attn", {"add_zero_attn": True}, CROSS, ("q", "k", "v"), {}),
    ("bias_kv+zero_attn+masks", {"add_bias_kv": True, "add_zero_attn": True}, CROSS,
     ("q", "k", "v"),
     {"attn_mask": _bool_mask(L, S), "key_padding_mask": _padding(N, S)}),
    ("kdim-vdim", {"kdim": 3, "vdim": 6},
     {"q": real(L, N, E), "k": real(S, N, 3), "v": real(S, N, 6)}, ("q", "k", "v"), {}),
    ("kdim-vdim-batch_first", {"kdim": 3, "vdim": 6, "batch_first": True},
     {"q": real(N, L, E), "k": real(N, S, 3), "v": real(N, S, 6)}, ("q", "k", "v"),
     {"key_padding_mask": _padding(N, S)}),
    ("unbatched", {}, {"q": real(L, E), "k": real(S, E), "v": real(S, E)}, ("q", "k", "v"),
     {"key_padding_mask": np.array([False, True, False, False, False])}),
    ("unbatched-batch_first", {"batch_first": True}, {"x": real(L, E)}, ("x", "x", "x"), {}),
    ("per-head-weights", {}, CROSS, ("q", "k", "v"), {"average_attn_weights": False}),
    ("no-weights", {}, CROSS, ("q", "k", "v"), {"need_weights": False}),
    ("bool-attn_mask", {}, CROSS, ("q", "k", "v"), {"attn_mask": _bool_mask(L, S)}),
    ("float-attn_mask", {}, CROSS, ("q", "k", "v"), {"attn_mask": real(L, S)}),
    ("3d-attn_mask", {}, CROSS, ("q", "k", "v"), {"attn_mask": real(N * H, L, S)}),
    ("bool-3d-attn_mask-no-weights", {}, CROSS, ("q", "k", "v"),
     {"attn_mask": np.stack([_bool_mask(L, S) for _ in range(N * H)]),
      "need_weights": False}),
    ("bool-key_padding", {}, CROSS, ("q", "k", "v"), {"key_padding_mask": _padding(N, S)}),
    ("float-key_padding", {}, CROSS, ("q", "k", "v"),
     {"key_padding_mask": np.where(_padding(N, S), -np.inf, 0.0)}),
    ("masks-both-no-weights", {}, CROSS, ("q", "k", "v"),
     {"attn_mask": real(L, S), "key_padding_mask": _padding(N, S), "need_weights": False}),
    ("causal-hint", {}, SELF, ("x", "x", "x"),
     {"attn_mask": _causal(L), "is_causal": True, "need_weights": False}),
    ("causal-hint-with-weights", {"batch_first": True}, {"x": real(N, L, E)},
     ("x", "x", "x"), {"attn_mask": _causal(L), "is_causal": True}),
    ("causal-hint+padding", {}, SELF, ("x", "x", "x"),
     {"attn_mask": _causal(L), "is_causal": True, "need_weights": False,
      "key_padding_mask": np.array([[False, False, True], [False, False, False]])}),
    ("dropout-eval", {"dropout": 0.5}, CROSS, ("q", "k", "v"), {}),
]


def _as(lib, value, dtype):
    if isinstance(value, np.ndarray):
        arr = value.astype(dtype) if value.dtype.kind == "f" else value
        return lib.tensor(arr.copy())
    return value


def _run(lib, module, tensors, names, call_kwargs, dtype):
    ins = {k: lib.tensor(v.astype(dtype), requires_grad=True) for k, v in tensors.items()}
    kwargs = {k: _as(lib, v, dtype) for k, v in call_kwargs.items()}
    out, weights = module(*(ins[n] for n in names), **kwargs)
    return ins, out, weights


@pytest.mark.filterwarnings("ignore:Support for mismatched key_padding_mask")
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("cid, ctor, tensors, names, call_kwargs", CASES,
                         ids=[c[0] for c in CASES])
def test_mha_matches_torch(torch, cid, ctor, tensors, names, call_kwargs, dtype):
    tol = 1e-12 if dtype == "float64" else 2e-5
    th = torch.nn.MultiheadAttention(E, H, **ctor).to(getattr(torch, dtype)).eval()
    rg = nn.MultiheadAttention(E, H, **ctor).to(getattr(T, dtype)).eval()
    copy_weights(rg, th)
    ins_t, out_t, w_t = _run(torch, th, tensors, names, call_kwargs, dtype)
    ins_r, out_r, w_r = _run(T, rg, tensors, names, call_kwargs, dtype)
    assert str(out_r.dtype) == str(out_t.dtype).replace("torch", "retrograd")
    close(out_r, out_t, tol)
    assert (w_r is None) == (w_t is None)
    loss_t, loss_r = out_t, out_r
    g = RNG.standard_normal(tuple(out_t.shape))
    loss_t = (out_t * torch.tensor(g.astype(dtype))).sum()
    loss_r = (out_r * T.tensor(g.astype(dtype))).sum()
    if w_t is not None:
        close(w_r, w_t, tol)
        gw = RNG.standard_normal(tuple(w_t.shape))
        loss_t = loss_t + (w_t * torch.tensor(gw.astype(dtype))).sum()
        loss_r = loss_r + (w_r * T.tensor(gw.astype(dtype))).sum()
    loss_t.backward()
    loss_r.backward()
    for name in tensors:
        close(ins_r[name].grad, ins_t[name].grad, tol)
    th_params = dict(th.named_parameters())
    for name, p in rg.named_parameters():
        assert p.grad is not None, name
        close(p.grad, th_params[name].grad, tol)


def test_mha_repr_and_state_dict_keys(torch):
    for ctor in ({}, {"bias": False}, {"add_bias_kv": True, "kdim": 3, "vdim": 5},
                 {"batch_first": True, "add_zero_attn": True, "dropout": 0.1}):
        th, rg = torch.nn.MultiheadAttention(6, 3, **ctor), nn.MultiheadAttention(6, 3, **ctor)
        assert repr(rg) == repr(th)
        assert list(rg.state_dict()) == list(th.state_dict())
        shapes = {k: tuple(v.shape) for k, v in th.state_dict().items()}
        assert {k: tuple(v.shape) for k, v in rg.state_dict().items()} == shapes
        for attr in ("embed_dim", "kdim", "vdim", "num_heads", "head_dim", "dropout",
                     "batch_first", "add_zero_attn", "_qkv_same_embed_dim"):
            assert getattr(rg, attr) == getattr(th, attr), attr
        assert (rg.bias_k is None) == (th.bias_k is None)
        assert (rg.in_proj_weight is None) == (th.in_proj_weight is None)


def test_mha_default_init():
    m = nn.MultiheadAttention(16, 4, add_bias_kv=True)
    w = m.in_proj_weight.detach().numpy()
    bound = np.sqrt(6.0 / (16 + 48))  # xavier_uniform_ on (3E, E)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert not m.in_proj_bias.detach().numpy().any()
    assert not m.out_proj.bias.detach().numpy().any()
    assert m.bias_k.detach().numpy().std() > 0  # xavier_normal_
    sep = nn.MultiheadAttention(8, 2, kdim=4)
    kb = np.sqrt(6.0 / (8 + 4))
    assert np.abs(sep.k_proj_weight.detach().numpy()).max() <= kb
    assert m.in_proj_weight.dtype == T.float32
    assert nn.MultiheadAttention(4, 2, dtype=T.float64).in_proj_weight.dtype == T.float64


def test_mha_constructor_errors(torch):
    for lib in (torch.nn, nn):
        with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
            lib.MultiheadAttention(5, 2)
        with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0"):
            lib.MultiheadAttention(0, 2)


def test_mha_mismatched_mask_types_warn_as_torch(torch):
    x = RNG.standard_normal((3, 2, 4))
    pad = np.zeros((2, 3), bool)
    for lib, m in ((torch, torch.nn.MultiheadAttention(4, 2)), (T, nn.MultiheadAttention(4, 2))):
        t = lib.tensor(x, dtype=lib.float32)
        with pytest.warns(UserWarning, match="mismatched key_padding_mask and attn_mask"):
            m(t, t, t, key_padding_mask=lib.tensor(pad), attn_mask=lib.zeros(3, 3))


def test_mha_forward_errors():
    m = nn.MultiheadAttention(4, 2)
    x = T.randn(3, 2, 4)
    with pytest.raises(AssertionError, match="embedding dimension of 4"):
        m(T.randn(3, 2, 6), T.randn(3, 2, 6), T.randn(3, 2, 6))
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m(x, x, x, is_causal=True)
    with pytest.raises(RuntimeError, match="The shape of the 2D attn_mask"):
        m(x, x, x, attn_mask=T.zeros(2, 2))


def test_mha_dropout_training_uses_retrograd_generator():
    m = nn.MultiheadAttention(4, 2, dropout=0.5)
    x = T.randn(3, 2, 4)
    T.manual_seed(5)
    a, wa = m(x, x, x)
    T.manual_seed(5)
    b, wb = m(x, x, x)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    np.testing.assert_array_equal(wa.detach().numpy(), wb.detach().numpy())
    m.eval()
    c, wc = m(x, x, x)
    assert not np.allclose(a.detach().numpy(), c.detach().numpy())
    # in eval the head-averaged weights are a distribution over keys
    np.testing.assert_allclose(wc.detach().numpy().sum(-1), 1.0, rtol=1e-6)


def test_mha_double_backward():
    T.manual_seed(0)
    m = nn.MultiheadAttention(4, 2, add_bias_kv=True).double()
    q = T.randn(2, 1, 4, dtype=T.float64, requires_grad=True)
    kv = T.randn(3, 1, 4, dtype=T.float64, requires_grad=True)
    mask = T.tensor(np.array([[False, True, False], [False, False, True]]))

    def f(q, kv, w):
        out, weights = nn.functional.multi_head_attention_forward(
            q, kv, kv, 4, 2, w, m.in_proj_bias, m.bias_k, m.bias_v, False, 0.0,
            m.out_proj.weight, m.out_proj.bias, attn_mask=mask)
        return out, weights

    w = m.in_proj_weight.detach().clone().requires_grad_(True)
    assert gradcheck(f, (q, kv, w))
    assert gradgradcheck(f, (q, kv, w))
    out, _ = m(q, kv, kv, attn_mask=mask)
    (g,) = T.autograd.grad(out.square().sum(), q, create_graph=True)
    g.sum().backward()
    assert m.in_proj_weight.grad is not None


# ----------------------------------------------------------------- random shapes (hypothesis)
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(heads=st.integers(1, 3), head_dim=st.integers(1, 3), lq=st.integers(1, 4),
       lk=st.integers(1, 4), n=st.integers(1, 3), batch_first=st.booleans(),
       same_kv=st.booleans(), need_weights=st.booleans(), pad=st.booleans(),
       seed=st.integers(0, 2 ** 16))
def test_random_shapes_match_torch(torch, heads, head_dim, lq, lk, n, batch_first, same_kv,
                                   need_weights, pad, seed):
    rng = np.random.default_rng(seed)
    e = heads * head_dim
    shape = (lambda length: (n, length, e)) if batch_first else (lambda length: (length, n, e))
    tensors = {"q": rng.standard_normal(shape(lq)), "k": rng.standard_normal(shape(lk))}
    names = ("q", "k", "k")
    if not same_kv:
        tensors["v"], names = rng.standard_normal(shape(lk)), ("q", "k", "v")
    call = {"need_weights": need_weights}
    if pad:
        mask = rng.uniform(size=(n, lk)) < 0.4
        mask[:, 0] = False
        call["key_padding_mask"] = mask
    th = torch.nn.MultiheadAttention(e, heads, batch_first=batch_first).double()
    rg = nn.MultiheadAttention(e, heads, batch_first=batch_first).double()
    copy_weights(rg, th)
    results = []
    for lib, module in ((T, rg), (torch, th)):
        ins, out, weights = _run(lib, module, tensors, names, call, "float64")
        loss = out.square().sum() + (0 if weights is None else weights.square().sum())
        loss.backward()
        results.append([out] + ([] if weights is None else [weights])
                       + [ins[k].grad for k in tensors]
                       + [p.grad for p in module.parameters()])
    assert len(results[0]) == len(results[1])
    for a, b in zip(*results):
        close(a, b, 1e-10)
