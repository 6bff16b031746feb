"""Top-level ATen spellings of ops retrograd has under other names (issue 6 census):
``grid_sampler`` / ``grid_sampler_2d`` / ``grid_sampler_3d`` (``nn.functional.grid_sample``
with PyTorch's integer modes), ``affine_grid_generator`` (``nn.functional.affine_grid``),
``embedding_renorm_`` (the in-place renorm behind ``embedding(max_norm=...)``),
``is_inference``, ``frombuffer``, ``conv_tbc`` and ``empty_permuted``.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..tensor import Tensor, make_tensor
from . import embedding as _emb
from .conv import conv1d
from .grid_sample import affine_grid, grid_sample
from .shape import permute

_INTERPOLATION = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_PADDING = {0: "zeros", 1: "border", 2: "reflection"}


def _sampler(name, ndim):
    def sampler(input, grid, interpolation_mode, padding_mode, align_corners):  # noqa: A002
        if ndim is not None and input.ndim != ndim:
            raise RuntimeError(f"{name}(): expected {ndim}D input, but got input with sizes "
                               f"{list(input.shape)}")
        if interpolation_mode not in _INTERPOLATION:
            raise RuntimeError(f"{name}(): interpolation_mode must be 0 (bilinear), 1 (nearest)"
                               f" or 2 (bicubic), got {interpolation_mode}")
        if padding_mode not in _PADDING:
            raise RuntimeError(f"{name}(): padding_mode must be 0 (zeros), 1 (border) or 2 "
                               f"(reflection), got {padding_mode}")
        return grid_sample(input, grid, _INTERPOLATION[interpolation_mode],
                           _PADDING[padding_mode], bool(align_corners))

    sampler.__name__ = sampler.__qualname__ = name
    sampler.__doc__ = (f"``{name}(input, grid, interpolation_mode, padding_mode, "
                       "align_corners)``: ``nn.functional.grid_sample`` with PyTorch's "
                       "integer modes (interpolation 0 bilinear, 1 nearest, 2 bicubic; "
                       "padding 0 zeros, 1 border, 2 reflection).")
    return sampler


grid_sampler = _sampler("grid_sampler", None)
grid_sampler_2d = _sampler("grid_sampler_2d", 4)
grid_sampler_3d = _sampler("grid_sampler_3d", 5)


def affine_grid_generator(theta, size, align_corners):
    """``nn.functional.affine_grid`` under its ATen name (``align_corners`` required)."""
    if len(size) not in (4, 5):
        raise RuntimeError(f"AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs "
                           f"(got size {list(size)}: (N, C, H, W) or (N, C, D, H, W))")
    return affine_grid(theta, list(size), bool(align_corners))


def embedding_renorm_(input, indices, max_norm, norm_type):  # noqa: A002
    """Scale, in place and unrecorded, the rows of ``input`` that ``indices`` name whose
    ``norm_type`` norm exceeds ``max_norm`` down to ``max_norm``; returns ``input``.

    Examples
    --------
    >>> import retrograd as T
    >>> w = T.tensor([[3.0, 4.0], [0.3, 0.4]])
    >>> T.embedding_renorm_(w, T.tensor([0, 1]), 1.0, 2.0)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    idx = _emb._check_indices(indices, "embedding_renorm_")
    if input.ndim != 2:
        raise RuntimeError(f"embedding_renorm_(): input must be 2-D (rows of embeddings), got "
                           f"shape {list(input.shape)}")
    _emb._renorm_rows(input, idx, float(max_norm), float(norm_type))
    return input


def is_inference(input):  # noqa: A002
    """Whether ``input`` was made in inference mode (``Tensor.is_inference``)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_inference(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input.is_inference()


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor over the bytes of ``buffer`` (an object with the buffer protocol),
    sharing its memory: ``count`` elements of ``dtype`` (-1: all) from byte ``offset``.

    Examples
    --------
    >>> import retrograd as T
    >>> T.frombuffer(bytearray(b"\\x01\\x02\\x03"), dtype=T.uint8)
    tensor([1, 2, 3], dtype=retrograd.uint8)
    """
    d = dtypes.to_dtype(dtype).numpy
    size = memoryview(buffer).nbytes
    if offset < 0 or offset >= size and size:
        raise ValueError(f"both buffer length ({size}) and offset ({offset}) must be greater "
                         f"than 0 and offset must be less than the buffer length")
    if count == -1 and (size - offset) % d.itemsize:
        raise ValueError(f"buffer length ({size - offset} after offset) must be a multiple of "
                         f"element size ({d.itemsize})")
    if count == 0 or (count > 0 and offset + count * d.itemsize > size):
        raise ValueError(f"requested buffer length ({count} * {d.itemsize} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({size} bytes)")
    arr = np.frombuffer(buffer, dtype=d, count=count, offset=offset)
    if not arr.flags.writeable:
        import warnings

        warnings.warn("The given buffer is not writable, and PyTorch does not support "
                      "non-writable tensors.", UserWarning, stacklevel=2)
    t = make_tensor(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


# ----------------------------------------------------------------- conv_tbc, empty_permuted


def conv_tbc(input, weight, bias, pad=0):  # noqa: A002
    """A 1-D convolution in time-batch-channel layout: ``input`` (T, B, C_in), ``weight``
    (K, C_in, C_out), ``bias`` (C_out,), ``pad`` zeros at both ends of time; returns
    (T + 2 pad - K + 1, B, C_out).  Composed of ``conv1d`` and permutes (PyTorch's node is
    one ConvTbcBackward0)."""
    if input.ndim != 3:
        raise RuntimeError(f"Input must have 3 dims: time, batch, in_channel (conv_tbc got "
                           f"shape {list(input.shape)})")
    if weight.ndim != 3:
        raise RuntimeError(f"Weight tensor must have 3 dims: kernel_width, in_channels, "
                           f"out_channels. (conv_tbc got shape {list(weight.shape)})")
    if bias.ndim != 1:
        raise RuntimeError(f"Bias must have 1 dim: out_channels (conv_tbc got shape "
                           f"{list(bias.shape)})")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError(f"Input dim 2 (input channels) is not == dim 1 in the weight tensor "
                           f"(conv_tbc: {input.shape[2]} vs {weight.shape[1]})")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError(f"Bias size must equal dim 2 in the weight tensor (output channels)"
                           f" (conv_tbc: {bias.shape[0]} vs {weight.shape[2]})")
    out = conv1d(permute(input, (1, 2, 0)), permute(weight, (2, 1, 0)), bias, padding=pad)
    return permute(out, (2, 0, 1))


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   pin_memory=False, requires_grad=False):
    """An uninitialised tensor of logical shape ``size`` whose memory is laid out in the
    order ``physical_layout`` (a permutation of the dims, outermost first), as PyTorch's.

    Examples
    --------
    >>> import retrograd as T
    >>> T.empty_permuted((2, 3, 4), (0, 2, 1)).stride()
    (12, 1, 3)
    """
    size, order = tuple(int(s) for s in size), tuple(int(d) for d in physical_layout)
    if len(order) != len(size):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout (empty_permuted: {len(size)} vs {len(order)})")
    if sorted(order) != list(range(len(size))):
        raise RuntimeError(f"Duplicate dim not allowed (empty_permuted's physical_layout must "
                           f"be a permutation of 0..{len(size) - 1}, got {list(order)})")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(size)}")
    d = dtypes.get_default_dtype() if dtype is None else dtypes.to_dtype(dtype)
    physical = np.empty(tuple(size[i] for i in order), dtype=d.numpy)
    t = make_tensor(physical.transpose(tuple(order.index(i) for i in range(len(size)))))
    if device is not None and str(device) != "cpu":
        raise RuntimeError("empty_permuted(device=...): only 'cpu' here; move it with .to()")
    if requires_grad:
        t.requires_grad_(True)
    return t


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

for _fn in (grid_sampler, grid_sampler_2d, grid_sampler_3d, affine_grid_generator):
    register(_fn, method=False)
register(embedding_renorm_, method=False, differentiable=False)
register(is_inference, method=False, differentiable=False)
register(frombuffer, method=False, differentiable=False)
register(conv_tbc, method=False)
register(empty_permuted, method=False, differentiable=False)
