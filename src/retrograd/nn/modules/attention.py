"""Attention layers: ``MultiheadAttention`` (PyTorch keeps it in ``torch.nn.modules.activation``).

The layer owns the parameters and the ``batch_first`` layout; the math is
``nn.functional.multi_head_attention_forward`` (ops/attention.py), whose derivatives come
from the recorded ops it is built of.
"""

from __future__ import annotations

from ..._creation import empty
from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter
from .linear import Linear

__all__ = ["MultiheadAttention", "NonDynamicallyQuantizableLinear"]


class NonDynamicallyQuantizableLinear(Linear):
    """A :class:`Linear` under another name: PyTorch uses it for ``MultiheadAttention``'s
    ``out_proj`` (so its quantization passes leave it alone), and it shows in the repr."""


class MultiheadAttention(Module):
    """Attention from ``num_heads`` heads in parallel, as ``torch.nn.MultiheadAttention``.

    ``in_proj_weight`` (3E, E) packs the query, key and value projections when
    ``kdim == vdim == embed_dim``; otherwise ``q_proj_weight`` (E, E), ``k_proj_weight``
    (E, kdim) and ``v_proj_weight`` (E, vdim) are separate.  ``in_proj_bias`` (3E) and
    ``out_proj`` (E -> E) follow; ``add_bias_kv`` adds ``bias_k``/``bias_v`` (1, 1, E)
    appended to the keys and values.  Projections start from xavier_uniform_, biases at 0,
    ``bias_k``/``bias_v`` from xavier_normal_ (PyTorch's).

    Inputs are (L, N, E) (``batch_first``: (N, L, E)) or unbatched (L, E).  ``forward``
    returns ``(attn_output, attn_weights)``; the weights are averaged over heads unless
    ``average_attn_weights=False``, and None when ``need_weights=False``.

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd import nn
    >>> mha = nn.MultiheadAttention(4, 2, batch_first=True)
    >>> x = T.zeros(3, 5, 4)
    >>> out, w = mha(x, x, x)
    >>> tuple(out.shape), tuple(w.shape)
    ((3, 5, 4), (3, 5, 5))
    """

    __constants__ = ["batch_first"]

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0,
                 bias: bool = True, add_bias_kv: bool = False, add_zero_attn: bool = False,
                 kdim: int | None = None, vdim: int | None = None, batch_first: bool = False,
                 device=None, dtype=None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            # PyTorch's class and words, with the numbers
            raise AssertionError(f"embed_dim must be divisible by num_heads (got embed_dim="
                                 f"{embed_dim}, num_heads={num_heads})")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(empty((embed_dim, embed_dim), dtype=dtype))
            self.k_proj_weight = Parameter(empty((embed_dim, self.kdim), dtype=dtype))
            self.v_proj_weight = Parameter(empty((embed_dim, self.vdim), dtype=dtype))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(empty((3 * embed_dim, embed_dim), dtype=dtype))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        dtype=dtype)
        if add_bias_kv:
            self.bias_k = Parameter(empty((1, 1, embed_dim), dtype=dtype))
            self.bias_v = Parameter(empty((1, 1, embed_dim), dtype=dtype))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def __setstate__(self, state) -> None:
        # modules pickled before kdim/vdim existed had the packed projection
        state.setdefault("_qkv_same_embed_dim", True)
        super().__setstate__(state)

    def forward(self, query, key, value, key_padding_mask=None, need_weights: bool = True,
                attn_mask=None, average_attn_weights: bool = True, is_causal: bool = False):
        """``(attn_output, attn_weights)``; ``key_padding_mask`` (N, S) and ``attn_mask``
        ((L, S) or (N*num_heads, L, S)): bool (True: not attended) or float (added to the
        scores).  ``is_causal`` is a hint that ``attn_mask`` is the causal mask."""
        is_batched = query.ndim == 3
        if self.batch_first and is_batched:
            # one transpose per distinct tensor, so self-attention stays recognisable
            # (query is key is value) for the packed projection
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = not self._qkv_same_embed_dim
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, use_separate_proj_weight=separate,
            q_proj_weight=self.q_proj_weight if separate else None,
            k_proj_weight=self.k_proj_weight if separate else None,
            v_proj_weight=self.v_proj_weight if separate else None,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and is_batched:
            out = out.transpose(1, 0)
        return out, weights

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """One (N, num_heads, L, L) float mask from ``attn_mask`` and ``key_padding_mask``
        (already float), with PyTorch's mask type: None, 1 (padding only) or 2 (merged)."""
        mask_type, merged = None, None
        if key_padding_mask is not None:
            mask_type, merged = 1, key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.ndim == 3:
                merged = attn_mask.view(batch_size, -1, seq_len, seq_len)
            else:
                merged = attn_mask.view(1, 1, seq_len, seq_len).expand(
                    batch_size, self.num_heads, -1, -1)
            if key_padding_mask is not None:
                merged = merged + key_padding_mask.view(batch_size, 1, 1, seq_len).expand(
                    -1, self.num_heads, -1, -1)
        return merged, mask_type
