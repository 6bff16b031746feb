"""Attention: ``scaled_dot_product_attention`` and ``multi_head_attention_forward`` (what
``nn.MultiheadAttention`` calls).

Both are composites of recorded ops (matmul, softmax, masked_fill, linear, dropout), so
their derivatives of every order come from those ops; they follow PyTorch's reference
(``torch.nn.functional``'s own Python for multi_head_attention_forward; the math
reference of scaled_dot_product_attention).  A query row whose keys are all masked out
attends to nothing: its output and gradients are 0, as PyTorch's kernels give (not the NaN
of a plain softmax over -inf).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..backend import namespace
from ._errors import scalar_type_name
from .linear import linear
from .nn import dropout, softmax
from .padding import pad
from .quiet_fp import quiet_fp

# the C++ names in PyTorch's dtype messages
_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
            "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool"}


def _c_name(t):
    return _C_NAMES.get(t._data.dtype.name, t._data.dtype.name)


def _check_sdpa(q, k, v, attn_mask, dropout_p, is_causal):
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        raise RuntimeError(
            f"Expected query, key, and value to all be  at least 2 dimensional, but got "
            f"query.dim: {q.ndim} key.dim: {k.ndim} and value.dim: {v.ndim} instead.")
    if not (q._data.dtype == k._data.dtype == v._data.dtype):
        raise RuntimeError(
            f"Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_c_name(q)} key.dtype: {_c_name(k)} and value.dtype: {_c_name(v)} instead.")
    if q._data.dtype.kind != "f":
        raise RuntimeError(f"expected scalar type Float but found "
                           f"{scalar_type_name(q._data.dtype)} (scaled_dot_product_attention "
                           "needs floating query, key and value)")
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise RuntimeError(
            f"scaled_dot_product_attention: size mismatch: query {list(q.shape)}, key "
            f"{list(k.shape)}, value {list(v.shape)}; query and key need the same last "
            "dimension (E), key and value the same second-to-last (S)")
    if attn_mask is not None:
        md = attn_mask._data.dtype
        if not (md.kind == "b" or md == q._data.dtype or md == np.float32):
            raise RuntimeError(
                f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                f"attn_mask.dtype: {_c_name(attn_mask)} and  query.dtype: {_c_name(q)} instead.")
        if is_causal:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                               "set when is_causal=True (the causal mask is built in; pass one "
                               "or the other)")
    if not 0 <= dropout_p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")


@quiet_fp
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """``softmax(query @ key^T * scale + mask) @ value`` over the last two dimensions.

    ``query`` (..., L, E), ``key`` (..., S, E), ``value`` (..., S, Ev); leading dimensions
    broadcast.  ``attn_mask``: bool (True: may attend) or float (added to the scores),
    broadcast to (..., L, S).  ``is_causal``: query i sees keys 0..i.  ``scale`` defaults to
    ``1 / sqrt(E)``.  ``dropout_p``: dropout on the attention weights (retrograd's
    generator: ``retrograd.manual_seed`` repeats it).  ``enable_gqa``: key/value heads
    (dim -3) are shared by groups of query heads.

    Examples
    --------
    >>> import retrograd as T
    >>> q = k = T.tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> v = T.tensor([[1.0], [3.0]])
    >>> T.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    tensor([[1.0000],
            [2.3395]])
    """
    q, k, v = query, key, value
    _check_sdpa(q, k, v, attn_mask, dropout_p, is_causal)
    if enable_gqa and q.ndim >= 3:
        hq, hk, hv = q.shape[-3], k.shape[-3], v.shape[-3]
        if hk == 0 or hv == 0 or hq % hk or hq % hv:
            raise RuntimeError(
                f"Number of heads in key and value must divide the number of heads in query "
                f"(got {hq} query heads, {hk} key heads and {hv} value heads)")
        if hk != hq:
            k = k.repeat_interleave(hq // hk, -3)
        if hv != hq:
            v = v.repeat_interleave(hq // hv, -3)
    n_q, n_k = q.shape[-2], k.shape[-2]
    s = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = (q @ k.swapaxes(-2, -1)) * s
    xp = namespace(scores._data)
    keep = None
    if is_causal:
        keep = xp.tril(xp.ones((n_q, n_k), dtype=bool))
    elif attn_mask is not None:
        if attn_mask._data.dtype.kind == "b":
            keep = attn_mask._data
        else:
            scores = scores + attn_mask
    if keep is not None:
        scores = scores.masked_fill(~keep, float("-inf"))
    dead = xp.isneginf(scores._data).all(axis=-1, keepdims=True)
    if dead.any():
        # rows with nothing to attend to: a finite softmax (of zeros), then zeroed, so the
        # output and every gradient through them are 0 (PyTorch's safe softmax)
        weights = softmax(scores.masked_fill(dead, 0.0), -1).masked_fill(dead, 0.0)
    else:
        weights = softmax(scores, -1)
    if dropout_p > 0:
        weights = dropout(weights, dropout_p)
    return weights @ v


# ----------------------------------------------------------------- multi-head attention


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """PyTorch's checks (AssertionError, as its Python raises); whether the query is
    batched (3-D: (L, N, E)) or not (2-D: (L, E))."""
    if query.ndim == 3:
        if key.ndim != 3 or value.ndim != 3:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                f"{key.ndim}-D and {value.ndim}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 2:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                f"found {key_padding_mask.ndim}-D tensor instead")
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise AssertionError(
                "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                f"found {attn_mask.ndim}-D tensor instead")
        return True
    if query.ndim == 2:
        if key.ndim != 2 or value.ndim != 2:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                f"{key.ndim}-D and {value.ndim}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 1:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D "
                f"but found {key_padding_mask.ndim}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.ndim not in (2, 3):
                raise AssertionError(
                    "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                    f"but found {attn_mask.ndim}-D tensor instead")
            want = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.ndim == 3 and tuple(attn_mask.shape) != want:
                raise AssertionError(f"Expected `attn_mask` shape to be {want} but got "
                                     f"{tuple(attn_mask.shape)}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.ndim}-D query tensor")


def _canonical_mask(mask, name, other, other_name, target_dtype, check_other=True):
    """A bool mask as a float one (-inf where True); float masks pass (PyTorch's)."""
    if mask is None:
        return None
    kind = mask._data.dtype.kind
    if kind != "b" and kind != "f":
        raise AssertionError(f"only bool and floating types of {name} are supported")
    if check_other and other is not None and mask._data.dtype != other._data.dtype:
        warnings.warn(f"Support for mismatched {name} and {other_name} is deprecated. Use same "
                      "type for both instead.", stacklevel=3)
    if kind == "b":
        from ..tensor import make_tensor

        xp = namespace(mask._data)
        data = xp.where(mask._data, -xp.inf, 0.0).astype(target_dtype)
        return make_tensor(data)
    return mask


def _in_projection_packed(q, k, v, w, b):
    e = q.shape[-1]
    if k is v:
        if q is k:  # self-attention: one projection, split in three
            proj = linear(q, w, b).unflatten(-1, (3, e)).unsqueeze(0).transpose(0, -2)
            proj = proj.squeeze(-2).contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([e, e * 2])
        b_q, b_kv = (None, None) if b is None else b.split([e, e * 2])
        kv = linear(k, w_kv, b_kv).unflatten(-1, (2, e)).unsqueeze(0).transpose(0, -2)
        kv = kv.squeeze(-2).contiguous()
        return linear(q, w_q, b_q), kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q, b_k, b_v):
    eq, ek, ev = q.shape[-1], k.shape[-1], v.shape[-1]
    for what, w, want in (("query", w_q, (eq, eq)), ("key", w_k, (eq, ek)),
                          ("value", w_v, (eq, ev))):
        if tuple(w.shape) != want:
            raise AssertionError(f"expecting {what} weights shape of {want}, but got "
                                 f"{tuple(w.shape)}")
    for what, b in (("query", b_q), ("key", b_k), ("value", b_v)):
        if b is not None and tuple(b.shape) != (eq,):
            raise AssertionError(f"expecting {what} bias shape of {(eq,)}, but got "
                                 f"{tuple(b.shape)}")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _static(t, name, bsz_heads, head_dim):
    if t.shape[0] != bsz_heads:
        raise AssertionError(f"expecting {name}.size(0) of {bsz_heads}, but got {t.shape[0]}")
    if t.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {t.shape[2]}")
    return t


@quiet_fp
def multi_head_attention_forward(
        query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
        bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
        training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
        use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
        v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
        is_causal=False):
    """Multi-head attention, as ``nn.MultiheadAttention`` computes it: returns
    ``(attn_output, attn_weights)`` (weights None unless ``need_weights``).

    ``query`` (L, N, E) (or (L, E) unbatched), ``key``/``value`` (S, N, Ek/Ev): the caller
    handles ``batch_first``.  Projections: ``in_proj_weight`` (3E, E) packed, or
    ``q/k/v_proj_weight`` with ``use_separate_proj_weight=True``; ``bias_k``/``bias_v``
    append one key/value, ``add_zero_attn`` a zero one; ``static_k``/``static_v`` (N*heads,
    S, E/heads) replace the projected keys/values.  ``key_padding_mask`` (N, S) and
    ``attn_mask`` ((L, S) or (N*heads, L, S)): bool (True: masked out) or float (added).
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    target = query._data.dtype
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", attn_mask,
                                       "attn_mask", target)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the causal hint replaces the mask (scaled_dot_product_attention)
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", target, False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {tuple(key.shape[:2])} do not "
                                 f"match value's {tuple(value.shape[:2])}")
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight "
                                     "is None")
        b_q, b_k, b_v = (None,) * 3 if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight,
                                 v_proj_weight, b_q, b_k, b_v)
    else:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError(f"key shape {tuple(key.shape)} does not match value shape "
                                 f"{tuple(value.shape)}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {list(attn_mask.shape)}, "
                                   f"but should be {(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.ndim == 3:
            want = (bsz * num_heads, tgt_len, src_len)
            if tuple(attn_mask.shape) != want:
                raise RuntimeError(f"The shape of the 3D attn_mask is {list(attn_mask.shape)}, "
                                   f"but should be {want}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        from .shape import cat

        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.view(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        k = _static(static_k, "static_k", bsz * num_heads, head_dim)
    if static_v is None:
        v = v.view(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        v = _static(static_v, "static_v", bsz * num_heads, head_dim)
    if add_zero_attn:
        from ..tensor import make_tensor
        from .shape import cat

        shape = (bsz * num_heads, 1, head_dim)
        k = cat([k, make_tensor(namespace(k._data).zeros(shape, dtype=k._data.dtype))], dim=1)
        v = cat([v, make_tensor(namespace(v._data).zeros(shape, dtype=v._data.dtype))], dim=1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            which = 0 if key_padding_mask.shape[0] != bsz else 1
            raise AssertionError(f"Expected key_padded_mask.shape[{which}] to be "
                                 f"{(bsz, src_len)[which]}, but got "
                                 f"{key_padding_mask.shape[which]}")
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len).expand(
            -1, num_heads, -1, -1).reshape(bsz * num_heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0
    if need_weights:
        e = q.shape[-1]
        q_scaled = q * math.sqrt(1.0 / float(e))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        weights = q_scaled @ k.transpose(-2, -1)
        if attn_mask is not None:
            if attn_mask._data.dtype != q._data.dtype:
                raise RuntimeError(
                    f"Input dtypes must be the same, got: input {_c_name(attn_mask)}, batch1: "
                    f"{_c_name(q)}, batch2: {_c_name(k)} (multi_head_attention_forward: give "
                    "the float attn_mask / key_padding_mask the query's dtype)")
            weights = attn_mask + weights  # (PyTorch: baddbmm(attn_mask, q, k^T))
        weights = softmax(weights, -1)
        if dropout_p > 0.0:
            weights = dropout(weights, dropout_p)
        out = (weights @ v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, -1)
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not is_batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.ndim == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, -1)
    if not is_batched:
        out = out.squeeze(1)
    return out, None


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(scaled_dot_product_attention, function=False, method=False,
         functional=("scaled_dot_product_attention",))
register(multi_head_attention_forward, function=False, method=False,
         functional=("multi_head_attention_forward",))
