"""Transformer layers, as ``torch.nn.modules.transformer``: ``TransformerEncoderLayer``,
``TransformerEncoder``, ``TransformerDecoderLayer``, ``TransformerDecoder`` and
``Transformer``.

Every layer is the composition PyTorch's reference Python computes (attention block,
feed-forward block, residuals, layer norms, post-norm or ``norm_first``), so values and
gradients follow from the recorded ops.  PyTorch's inference fast paths (nested tensors,
fused encoder kernels) are skipped: they compute the same function.
"""

from __future__ import annotations

import copy
import warnings

from ..._creation import full
from ...autograd.grad_mode import is_grad_enabled
from ...backend import namespace
from ...ops.attention import _canonical_mask
from ...ops.layout import triu
from ...tensor import make_tensor
from .. import functional as F
from .. import init
from ..module import Module
from .activation import GELU, ReLU
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .normalization import LayerNorm

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder",
           "TransformerEncoderLayer", "TransformerDecoderLayer"]




# ----------------------------------------------------------------- helpers (PyTorch's)


def _generate_square_subsequent_mask(sz: int, device=None, dtype=None):
    return triu(full((sz, sz), float("-inf"), dtype=dtype), diagonal=1)


def _get_seq_len(src, batch_first: bool) -> int:
    if src.ndim == 2:
        return src.shape[0]
    return src.shape[1 if batch_first else 0]


def _detect_is_causal_mask(mask, is_causal=None, size=None) -> bool:
    """``is_causal`` when given; else (None) whether ``mask`` is exactly the causal mask
    (-inf above the diagonal, 0 elsewhere, in the mask's own dtype)."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.shape[-2]
        data = mask._data
        xp = namespace(data)
        if tuple(data.shape) == (sz, sz):
            causal = xp.triu(xp.full((sz, sz), float("-inf")), 1).astype(data.dtype)
            make_causal = bool((data == causal).all())
        else:
            make_causal = False
    return make_causal


def _get_clones(module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation: str):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _canonical(mask, name, other, other_name, like, check_other=True):
    return _canonical_mask(mask, name, other, other_name, like._data.dtype, check_other)


# ----------------------------------------------------------------- encoder


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward network, each with a residual connection and a
    layer norm (after the residual; before the block with ``norm_first=True``).

    ``activation``: ``"relu"``, ``"gelu"`` or any callable (a module is registered as a
    submodule, as PyTorch).  Dropout (``dropout``) acts in training mode only, drawing from
    retrograd's generator.

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd import nn
    >>> layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16)
    >>> tuple(layer(T.zeros(5, 3, 8)).shape)
    (5, 3, 8)
    """

    __constants__ = ["norm_first"]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation=F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        # PyTorch's flag for its fused kernel (1: relu, 2: gelu, 0: other); kept for parity
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        if not hasattr(self, "activation"):
            self.activation = F.relu

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal: bool = False):
        """``src`` (S, N, E) (``batch_first``: (N, S, E)) or (S, E); ``src_mask`` (S, S) or
        (N*nhead, S, S); ``src_key_padding_mask`` (N, S); bool (True: masked) or float."""
        src_key_padding_mask = _canonical(src_key_padding_mask, "src_key_padding_mask",
                                          src_mask, "src_mask", src)
        src_mask = _canonical(src_mask, "src_mask", None, "", src, check_other=False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


def _why_no_nested_tensor(layer) -> str:
    """PyTorch's reason (its words) why an encoder cannot use its nested-tensor fast path;
    retrograd never uses one, but keeps ``use_nested_tensor`` and the warning identical."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    if layer.norm_first:
        return f"{name}.norm_first was True"
    if not layer.self_attn.batch_first:
        return (f"{name}.self_attn.batch_first was not True"
                "(use batch_first for better inference performance)")
    if not layer.self_attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if layer.self_attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if layer.self_attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""


class TransformerEncoder(Module):
    """``num_layers`` deep copies of ``encoder_layer`` applied in turn, then ``norm`` if
    given.  ``enable_nested_tensor`` and ``mask_check`` are accepted for PyTorch's API (and
    its warning); retrograd has no nested tensors, the result is the same.

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd import nn
    >>> layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
    >>> enc = nn.TransformerEncoder(layer, num_layers=2)
    >>> tuple(enc(T.zeros(3, 5, 8)).shape)
    (3, 5, 8)
    """

    __constants__ = ["norm"]

    def __init__(self, encoder_layer, num_layers: int, norm=None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _why_no_nested_tensor(encoder_layer)
        if enable_nested_tensor and why_not:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False "
                          f"because {why_not}", stacklevel=2)
            self.use_nested_tensor = False

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        """``is_causal=None``: detected from ``mask`` (True when it is exactly the causal
        mask), as PyTorch."""
        src_key_padding_mask = _canonical(src_key_padding_mask, "src_key_padding_mask",
                                          mask, "mask", src)
        mask = _canonical(mask, "mask", None, "", src, check_other=False)
        seq_len = _get_seq_len(src, self.layers[0].self_attn.batch_first)
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal,
                         src_key_padding_mask=src_key_padding_mask)
        keep = self._nested_tensor_keep(src, mask, src_key_padding_mask)
        if keep is not None:
            output = output * keep
        if self.norm is not None:
            output = self.norm(output)
        return output

    def _nested_tensor_keep(self, src, mask, padding):
        """Where PyTorch's inference would run its nested-tensor path, the (N, S, 1) array
        that zeroes the padded positions, as that path's output has them (its valid
        positions equal the masked computation's); None elsewhere.

        PyTorch takes it with ``use_nested_tensor``, eval mode, a batched ``src``, a key
        padding mask that leaves each sequence a prefix (left-aligned), no ``mask``, and no
        gradient wanted from the first layer's tensors.
        """
        first = self.layers[0]
        if (not getattr(self, "use_nested_tensor", False) or first.training or src.ndim != 3
                or padding is None or mask is not None):
            return None
        if is_grad_enabled():
            attn, tensors = first.self_attn, [src]
            tensors += [attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight,
                        attn.out_proj.bias]
            for sub in (first.norm1, first.norm2, first.linear1, first.linear2):
                tensors += [sub.weight, sub.bias]
            if any(t is not None and t.requires_grad for t in tensors):
                return None
        xp = namespace(padding._data)
        valid = padding._data == 0  # (N, S); PyTorch's ``logical_not`` of the float mask
        left_aligned = (xp.cumprod(valid, axis=1) == valid).all()
        if not left_aligned:  # PyTorch's mask check sends these down the masked path
            return None
        return make_tensor(valid[:, :, None].astype(src._data.dtype))


# ----------------------------------------------------------------- decoder


class TransformerDecoderLayer(Module):
    """Self-attention, attention over the encoder's ``memory``, then a feed-forward
    network; each with a residual connection and a layer norm (post-norm, or pre-norm with
    ``norm_first=True``).

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd import nn
    >>> layer = nn.TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=16)
    >>> tuple(layer(T.zeros(4, 3, 8), T.zeros(6, 3, 8)).shape)
    (4, 3, 8)
    """

    __constants__ = ["norm_first"]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation=F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, bias=bias, dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias,
                                                 dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        self.activation = activation

    def __setstate__(self, state) -> None:
        state.setdefault("activation", F.relu)
        super().__setstate__(state)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False):
        """``tgt`` (T, N, E), ``memory`` (S, N, E) (``batch_first``: batch first);
        ``tgt_mask`` (T, T), ``memory_mask`` (T, S), key padding masks (N, T) / (N, S)."""
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask,
                                   tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask,
                                              tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask,
                                               memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


class TransformerDecoder(Module):
    """``num_layers`` deep copies of ``decoder_layer`` applied in turn, then ``norm``."""

    __constants__ = ["norm"]

    def __init__(self, decoder_layer, num_layers: int, norm=None) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None,
                memory_is_causal: bool = False):
        """``tgt_is_causal=None``: detected from ``tgt_mask``, as PyTorch."""
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        output = tgt
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask,
                         memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


# ----------------------------------------------------------------- the whole model


class Transformer(Module):
    """Encoder-decoder transformer ("Attention Is All You Need"), as
    ``torch.nn.Transformer``: ``num_encoder_layers`` encoder layers and a final LayerNorm,
    ``num_decoder_layers`` decoder layers and a final LayerNorm (or ``custom_encoder`` /
    ``custom_decoder``); every matrix parameter starts from xavier_uniform_.

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd import nn
    >>> model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1,
    ...                        num_decoder_layers=1, dim_feedforward=16)
    >>> mask = nn.Transformer.generate_square_subsequent_mask(4)
    >>> tuple(model(T.zeros(6, 2, 8), T.zeros(4, 2, 8), tgt_mask=mask).shape)
    (4, 2, 8)
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(
                d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                batch_first, norm_first, bias, dtype=dtype)
            encoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(
                d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                batch_first, norm_first, bias, dtype=dtype)
            decoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal: bool = False):
        """Encode ``src`` (S, N, E), decode ``tgt`` (T, N, E) against it (``batch_first``:
        (N, S, E), (N, T, E)); masks as the encoder's and decoder's."""
        is_batched = src.ndim == 3
        batch_dim = 0 if self.batch_first else 1
        if is_batched and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise RuntimeError(
                f"the batch number of src and tgt must be equal (src {list(src.shape)}, tgt "
                f"{list(tgt.shape)}, batch dimension {batch_dim} with "
                f"batch_first={self.batch_first})")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError(
                f"the feature number of src and tgt must be equal to d_model (src "
                f"{list(src.shape)}, tgt {list(tgt.shape)}, d_model={self.d_model})")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None):
        """The (sz, sz) causal mask: ``-inf`` above the diagonal (future positions), 0
        elsewhere; float32 unless ``dtype`` is given."""
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)
