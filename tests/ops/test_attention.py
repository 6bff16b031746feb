"""Op tests, attention: scaled_dot_product_attention and multi_head_attention_forward
(ops/attention.py).

One table of cases; ``case_checks`` runs every check on every case (float64 gradcheck and
gradgradcheck, values and gradients against PyTorch in float32 and float64, the grad_fn
name and the whole graph's shape): see ``tests/ops/helpers.py``.  Both functions are
composites of recorded ops, so where PyTorch records one fused node (its CPU flash-attention
kernel) the names and the graph's shape are known gaps, not the values or gradients.
Dropout draws from retrograd's generator: its own tests below.  Bad arguments are in
tests/test_argument_errors.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

from .helpers import Case, case_checks, nnf

CASES: list[Case] = []
# PyTorch's math fallback (head dims differ, or not 4-D) ends in the same op as retrograd's
# composite, but its graph inside differs; its CPU flash kernel (4-D, equal head dims) is one
# fused node
_MATH = {"structure": "PyTorch's math attention records other intermediate ops"}
_FUSED = {"grad_fn": "PyTorch records one fused ScaledDotProductFlashAttentionForCpu node",
          "structure": "PyTorch records one fused ScaledDotProductFlashAttentionForCpu node"}
# multi-head attention has ~200 input elements and ~40 recorded ops: gradcheck's random
# projections (fast_mode) for all but the plainest case, to keep the table quick
_FAST = {"fast_mode": True}
_MHA_GRAPH = {"structure": "PyTorch's multi-head attention records baddbmm and fused "
                           "attention nodes; retrograd composes add, matmul and softmax"}


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


def _sdpa(m, q, k, v, **kw):
    return nnf(m).scaled_dot_product_attention(q, k, v, **kw)


_BOOL = np.array([[True, False, True, True], [False, False, False, False],  # row 1: all masked
                  [True, True, False, True]])
_QKV = ((2, 1, 3, 4), (2, 1, 4, 4), (2, 1, 4, 2))
case("sdpa", _sdpa, _QKV, xfail=_MATH)
case("sdpa_3d", _sdpa, ((2, 3, 2), (2, 4, 2), (2, 4, 3)), xfail=_MATH)
case("sdpa_2d", _sdpa, ((3, 2), (4, 2), (4, 1)), xfail=_MATH)
case("sdpa_scale", _sdpa, _QKV, params={"scale": 0.3}, xfail=_MATH)
case("sdpa_causal", _sdpa, _QKV, params={"is_causal": True}, xfail=_MATH)
case("sdpa_causal_square", _sdpa, ((1, 2, 3, 2), (1, 2, 3, 2), (1, 2, 3, 2)),
     params={"is_causal": True}, xfail=_FUSED)
case("sdpa_bool_mask", lambda m, q, k, v: _sdpa(m, q, k, v, attn_mask=m.tensor(_BOOL)), _QKV,
     xfail=_MATH)
case("sdpa_bool_mask_batched", lambda m, q, k, v: _sdpa(
    m, q, k, v, attn_mask=m.tensor(np.stack([_BOOL, ~_BOOL])[:, None])), _QKV, xfail=_MATH)
case("sdpa_float_mask", lambda m, q, k, v, b: _sdpa(m, q, k, v, attn_mask=b), _QKV + ((3, 4),),
     xfail=_MATH)
case("sdpa_float_mask_inf", lambda m, q, k, v, b: _sdpa(
    m, q, k, v, attn_mask=b.masked_fill(m.tensor(~_BOOL), float("-inf"))), _QKV + ((3, 4),),
    xfail=_MATH)
case("sdpa_gqa", lambda m, q, k, v: _sdpa(m, q, k, v, enable_gqa=True),
     ((1, 4, 2, 2), (1, 2, 3, 2), (1, 1, 3, 2)), xfail=_MATH)
case("sdpa_broadcast_heads", _sdpa, ((1, 2, 2, 2), (1, 1, 3, 2), (1, 1, 3, 2)), xfail=_MATH)
case("sdpa_dropout_zero", lambda m, q, k, v: _sdpa(m, q, k, v, dropout_p=0.0), _QKV,
     xfail=_MATH)

# multi_head_attention_forward: E = 4, 2 heads, target length 3, source length 5, batch 2
_E, _H, _L, _S, _N = 4, 2, 3, 5, 2
_KPM = np.array([[False, True, False, False, True], [False, False, False, False, True]])
_AM = np.array([[0.0, -1.0, 0.5, 0.0, 2.0], [1.0, 0.0, 0.0, -0.5, 0.0], [0.0, 0.0, 3.0, 0.0, 0.0]])


def _mha(m, q, k, v, w, b, wo, bo, *extra, self_attn=False, unbatched=False, weights=True,
         **kw):
    if "key_padding_mask" in kw:
        kw["key_padding_mask"] = m.tensor(kw["key_padding_mask"])
    if "attn_mask" in kw:  # (a float mask in the query's dtype, as PyTorch's baddbmm wants)
        mask = kw["attn_mask"]
        kw["attn_mask"] = m.tensor(mask, dtype=q.dtype if mask.dtype.kind == "f" else None)
    if self_attn:
        k = v = q
    if unbatched:
        q, k, v = q[:, 0], k[:, 0], v[:, 0]
        if "key_padding_mask" in kw:
            kw["key_padding_mask"] = kw["key_padding_mask"][0]
    bias_k, bias_v = extra if extra else (None, None)
    out = nnf(m).multi_head_attention_forward(
        q, k, v, _E, _H, w, b, bias_k, bias_v, kw.pop("add_zero_attn", False), 0.0, wo, bo,
        **kw)
    return out if weights and kw.get("need_weights", True) else out[0]


_MHA = ((_L, _N, _E), (_S, _N, _E), (_S, _N, _E), (3 * _E, _E), (3 * _E,), (_E, _E), (_E,))
_CAUSAL = np.triu(np.ones((_L, _S), dtype=bool), 1)
for _name, _kw in {
        "": {}, "_no_weights": {"need_weights": False},
        "_per_head_weights": {"average_attn_weights": False},
        "_key_padding": {"key_padding_mask": _KPM},
        "_key_padding_no_weights": {"key_padding_mask": _KPM, "need_weights": False},
        "_float_mask": {"attn_mask": _AM},
        "_bool_mask_no_weights": {"attn_mask": _AM > 0.4, "need_weights": False},
        "_masks_both": {"attn_mask": _AM > 0.4, "key_padding_mask": _KPM},
        "_zero_attn": {"add_zero_attn": True, "key_padding_mask": _KPM},
        "_causal": {"is_causal": True, "attn_mask": _CAUSAL, "need_weights": False},
        "_causal_weights": {"is_causal": True, "attn_mask": _CAUSAL},
        "_self": {"self_attn": True}, "_unbatched": {"unbatched": True},
        "_unbatched_key_padding": {"unbatched": True, "key_padding_mask": _KPM},
}.items():
    case(f"mha{_name}", _mha, _MHA, params=_kw, xfail=_MHA_GRAPH, gc=_FAST if _name else {})
case("mha_bias_kv", _mha, _MHA + ((1, 1, _E), (1, 1, _E)), params={"attn_mask": _AM},
     xfail=_MHA_GRAPH, gc=_FAST)
case("mha_bias_kv_no_weights", _mha, _MHA + ((1, 1, _E), (1, 1, _E)),
     params={"key_padding_mask": _KPM, "need_weights": False}, xfail=_MHA_GRAPH, gc=_FAST)
case("mha_encoder_decoder", lambda m, q, kv, w, b, wo, bo: _mha(m, q, kv, kv, w, b, wo, bo),
     ((_L, _N, _E), (_S, _N, _E), (3 * _E, _E), (3 * _E,), (_E, _E), (_E,)), xfail=_MHA_GRAPH,
     gc=_FAST)


def _mha_separate(m, q, k, v, wq, wk, wv, b, wo, bo, **kw):
    return nnf(m).multi_head_attention_forward(
        q, k, v, _E, _H, None, b, None, None, False, 0.0, wo, bo, use_separate_proj_weight=True,
        q_proj_weight=wq, k_proj_weight=wk, v_proj_weight=wv, **kw)


case("mha_separate_proj", _mha_separate,
     ((_L, _N, _E), (_S, _N, 3), (_S, _N, 2), (_E, _E), (_E, 3), (_E, 2), (3 * _E,), (_E, _E),
      (_E,)), xfail=_MHA_GRAPH, gc=_FAST)
case("mha_separate_proj_no_bias", lambda m, *a: _mha_separate(
    m, *a[:6], None, *a[6:], need_weights=False)[0],
     ((_L, _N, _E), (_S, _N, _E), (_S, _N, _E), (_E, _E), (_E, _E), (_E, _E), (_E, _E), (_E,)),
     xfail=_MHA_GRAPH, gc=_FAST)


def _mha_static(m, q, k, v, w, b, wo, bo, sk, sv, **kw):
    return nnf(m).multi_head_attention_forward(
        q, k, v, _E, _H, w, b, None, None, False, 0.0, wo, bo, static_k=sk, static_v=sv, **kw)


case("mha_static_kv", _mha_static, _MHA + ((_N * _H, 6, _E // _H), (_N * _H, 6, _E // _H)),
     xfail=_MHA_GRAPH, gc=_FAST)
case("mha_static_kv_zero_attn", lambda m, *a: _mha_static(m, *a, need_weights=False)[0],
     _MHA + ((_N * _H, 6, _E // _H), (_N * _H, 6, _E // _H)), xfail=_MHA_GRAPH, gc=_FAST)

(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


# ----------------------------------------------------------------- dropout, fully masked rows


def _qkv(dtype="float64"):
    rng = np.random.default_rng(5)
    return [retrograd.tensor(rng.standard_normal(s), dtype=getattr(retrograd, dtype))
            .requires_grad_(True) for s in ((2, 2, 6, 4), (2, 2, 7, 4), (2, 2, 7, 3))]


def test_dropout_repeats_with_the_seed_and_scales():
    q, k, v = _qkv()
    F = retrograd.nn.functional
    retrograd.manual_seed(3)
    a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    retrograd.manual_seed(3)
    b = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    plain = F.scaled_dot_product_attention(q, k, v)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert not np.allclose(a.detach().numpy(), plain.detach().numpy())
    # all dropped: zeros; the mean over many draws is the undropped output
    assert not F.scaled_dot_product_attention(q, k, v, dropout_p=1.0).detach().numpy().any()
    draws = [F.scaled_dot_product_attention(q, k, v, dropout_p=0.3).detach().numpy()
             for _ in range(400)]
    np.testing.assert_allclose(np.mean(draws, 0), plain.detach().numpy(), atol=0.15)


def test_dropout_gradients_check_with_a_fixed_mask():
    q, k, v = [t.detach()[:1, :1, :3].requires_grad_(True) for t in _qkv()]

    def fn(q, k, v):
        retrograd.manual_seed(11)  # the same mask on every evaluation
        return retrograd.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=0.4)

    assert retrograd.autograd.gradcheck(fn, (q, k, v))
    assert retrograd.autograd.gradgradcheck(fn, (q, k, v))


def test_mha_dropout_only_in_training():
    F = retrograd.nn.functional
    rng = np.random.default_rng(2)
    args = [retrograd.tensor(rng.standard_normal(s)) for s in _MHA]
    q, k, v, w, b, wo, bo = args

    def run(training):
        return F.multi_head_attention_forward(q, k, v, _E, _H, w, b, None, None, False, 0.9, wo,
                                              bo, training=training)

    eval_out = run(False)
    plain = F.multi_head_attention_forward(q, k, v, _E, _H, w, b, None, None, False, 0.0, wo, bo)
    np.testing.assert_allclose(eval_out[0].numpy(), plain[0].numpy())
    assert not np.allclose(run(True)[1].numpy(), plain[1].numpy())


def test_fully_masked_rows_give_zero_output_and_gradients(torch):
    q, k, v = _qkv()
    mask = np.ones((6, 7), dtype=bool)
    mask[2] = False
    out = retrograd.nn.functional.scaled_dot_product_attention(q, k, v,
                                                               attn_mask=retrograd.tensor(mask))
    out.sum().backward()
    assert not out.detach().numpy()[:, :, 2].any()
    assert np.isfinite(q.grad.numpy()).all() and not q.grad.numpy()[:, :, 2].any()
    tq = torch.tensor(_qkv()[0].detach().numpy())
    want = torch.nn.functional.scaled_dot_product_attention(
        tq, *[torch.tensor(t.detach().numpy()) for t in _qkv()[1:]], attn_mask=torch.tensor(mask))
    np.testing.assert_allclose(out.detach().numpy(), want.numpy(), atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float32_stays_float32(dtype):
    q, k, v = _qkv(dtype)
    out = retrograd.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert out.dtype == getattr(retrograd, dtype)
