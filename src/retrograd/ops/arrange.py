"""Arranging tensors: broadcast_tensors, meshgrid, cartesian_prod, combinations, block_diag,
constant_pad_nd, rot90, fliplr / flipud, tensor_split and h/v/dsplit, split_with_sizes,
ravel, atleast_Nd, h/v/d/column_stack, Tensor.unfold, repeat_interleave, diagflat, msort,
``.H`` / ``.mH``.

Most are compositions of existing views and joins, chosen so the recorded graph is
PyTorch's (``meshgrid`` = view + expand, ``hstack`` = cat of atleast_1d...).  Those with
a node of their own (BlockDiagBackward0, ConstantPadNdBackward0, Rot90Backward0,
UnfoldBackward0) write their derivative with ops that are themselves differentiable, so
every order works.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import dtypes
from ..backend import namespace
from ..tensor import Tensor, make_tensor
from ._apply import NOTHING, apply_op, defop
from ._errors import int_arg, scalar_type_name
from .index import _slice, getitem
from .shape import _PY_VALUES, not_tensor_element
from .layout import _copy_keeping_layout, _diag_embed, flip_op, index_select, masked_select, split
from .shape import (
    _norm_dim, _shape_arg, cat, clone, clone_contiguous, expand, reshape, stack, track_view,
    transpose, unsqueeze, view,
)
from .sorting import sort


def _tensors_arg(tensors, name):
    """``f(a, b)`` or ``f([a, b])``: the tensors as a list."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    tensors = list(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    return tensors


# ----------------------------------------------------------------- broadcasting, grids


def broadcast_tensors(*tensors):
    """The tensors expanded to their common shape (views; one already of that shape is
    returned as it is, as PyTorch)."""
    tensors = _tensors_arg(tensors, "broadcast_tensors")
    shape = ()
    for t in tensors:
        shape = _broadcast_shape(shape, tuple(t.shape))
    return tuple(t if tuple(t.shape) == shape else expand(t, *shape) for t in tensors)


def _broadcast_shape(a, b):
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"broadcast_tensors(): The size of tensor a ({x}) must match the "
                               f"size of tensor b ({y}) at non-singleton dimension {i} (shapes "
                               f"{list(a)} and {list(b)})")
        out.append(y if x == 1 else x)
    return tuple(out)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids of 0-d or 1-d tensors (views: each a view + expand, as PyTorch).

    ``indexing="ij"`` (the default, with PyTorch's warning when not given) makes the first
    tensor vary along dimension 0; ``"xy"`` swaps the first two dimensions.
    """
    tensors = _tensors_arg(tensors, "meshgrid")
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                         f"received: {indexing}")
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {t.ndim}D (shape {list(t.shape)}) at position {i}")
        if t.dtype != tensors[0].dtype:
            raise RuntimeError(f"torch.meshgrid: Expected all tensors in the tensor list to have "
                               f"the same dtype (got {tensors[0].dtype} and {t.dtype})")
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors[0], tensors[1] = tensors[1], tensors[0]
    shape = tuple(t.numel() for t in tensors)
    grids = []
    for i, t in enumerate(tensors):
        vshape = [1] * len(tensors)
        vshape[i] = -1
        grids.append(expand(view(t, *vshape), *shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def _vectors(tensors, name):
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"{name}(): Expect a 1D vector, but got shape {list(t.shape)}")


def cartesian_prod(*tensors):
    """Every combination of one element from each 1-D tensor, as rows (one tensor: itself)."""
    tensors = _tensors_arg(tensors, "cartesian_prod")
    _vectors(tensors, "cartesian_prod")
    if len(tensors) == 1:
        return tensors[0]
    return stack([reshape(g, -1) for g in meshgrid(tensors, indexing="ij")], 1)


def combinations(x, r=2, with_replacement=False):
    """The length-``r`` combinations of the elements of a 1-D tensor, as rows
    (itertools.combinations order); built as PyTorch builds it: a meshgrid, masked_select,
    stack."""
    _vectors([x], "combinations")
    r = int_arg(r, "r")
    if r < 0:
        raise RuntimeError(f"combinations(): Expect a non-negative number, but got {r}")
    if r == 0:
        return _empty_like(x)
    xp = namespace(x._data)
    n = x.shape[0]
    grids = meshgrid([x] * r, indexing="ij")
    index = xp.indices((n,) * r)
    mask = xp.ones((n,) * r, dtype=bool)
    for i in range(r - 1):
        mask &= (index[i] <= index[i + 1]) if with_replacement else (index[i] < index[i + 1])
    return stack([masked_select(g, make_tensor(mask)) for g in grids], 1)


def _empty_like(x):
    return make_tensor(namespace(x._data).empty((0,), dtype=x._data.dtype))


# ----------------------------------------------------------------- block_diag


def _block_diag_fwd(*args):
    *arrays, shapes, _ = args
    xp = namespace(arrays[0])
    dtype = xp.result_type(*arrays)
    rows = sum(s[0] for s in shapes)
    cols = sum(s[1] for s in shapes)
    out = xp.zeros((rows, cols), dtype=dtype)
    r = c = 0
    for a, (n, m) in zip(arrays, shapes):
        out[r:r + n, c:c + m] = a.reshape(n, m)
        r, c = r + n, c + m
    return out


def _block_diag_vjp(node, g, saved):
    # each input's gradient: its block of g, in the input's own shape (0-d, 1-d or 2-d)
    shapes, in_shapes = node.params
    out = []
    r = c = 0
    for (n, m), shape, nxt in zip(shapes, in_shapes, node.next):
        out.append(reshape(getitem(g, (slice(r, r + n), slice(c, c + m))), shape)
                   if nxt is not None else None)
        r, c = r + n, c + m
    return tuple(out)


_block_diag = defop("block_diag", _block_diag_fwd, _block_diag_vjp, "BlockDiagBackward0", 0,
                    NOTHING, "promote")


def block_diag(*tensors):
    """A block-diagonal matrix of the tensors (0-d, 1-d: a 1-row matrix, or 2-d)."""
    tensors = _tensors_arg(tensors, "block_diag")
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {t.ndim} dimensions (shape {list(t.shape)})")
    if not tensors:
        return make_tensor(np.zeros((1, 0), dtype=dtypes.get_default_dtype().numpy))
    shapes = tuple((1, 1) if t.ndim == 0 else (1, t.shape[0]) if t.ndim == 1 else tuple(t.shape)
                   for t in tensors)
    in_shapes = tuple(tuple(t.shape) for t in tensors)
    return apply_op(_block_diag.op, tensors, (shapes, in_shapes))


# ----------------------------------------------------------------- padding


def _pad_fwd(a, pad, value):
    xp = namespace(a)
    n = len(pad) // 2
    out_shape = list(a.shape)
    src = [slice(None)] * a.ndim
    dst = [slice(None)] * a.ndim
    for i in range(n):
        d = a.ndim - 1 - i  # pad pairs start from the last dimension
        lo, hi = pad[2 * i], pad[2 * i + 1]
        size = a.shape[d]
        out_shape[d] = size + lo + hi
        src[d] = slice(max(-lo, 0), size - max(-hi, 0))
        dst[d] = slice(max(lo, 0), max(lo, 0) + max(size - max(-lo, 0) - max(-hi, 0), 0))
    out = xp.full(out_shape, value, dtype=a.dtype)
    if all(s > 0 for s in out_shape):
        out[tuple(dst)] = a[tuple(src)]
    return out


def _pad_vjp(node, g, saved):
    # PyTorch's constant_pad_nd_backward: the gradient padded by the negated pads (crops
    # what was added, zero-fills what was cropped), so every order is the same op again
    pad, _ = node.params
    return (_pad(g, tuple(-p for p in pad), 0),)


_pad = defop("constant_pad_nd", _pad_fwd, _pad_vjp, "ConstantPadNdBackward0", 1, NOTHING)


def constant_pad_nd(x, pad, value=0):
    """Pad (or, with negative pads, crop) the last ``len(pad) // 2`` dimensions with
    ``value``: ``pad = (last_lo, last_hi, second_last_lo, ...)``."""
    pad = _shape_arg((pad,))
    if len(pad) % 2:
        raise RuntimeError(f"constant_pad_nd(): Length of pad must be even but instead it equals "
                           f"{len(pad)}")
    if len(pad) // 2 > x.ndim:
        raise RuntimeError(f"constant_pad_nd(): Length of pad should be no more than twice the "
                           f"number of dimensions of the input. Pad length is {len(pad)} while "
                           f"the input has {x.ndim} dimensions.")
    # PyTorch crops with narrow() first, the low side then the high side, from the first
    # padded dim on: a negative pad larger than what is left of the dim is narrow's error,
    # even where the other side's pad would make the output size non-negative (seeds
    # 11019032, 11023679); that also covers every negative output size
    for d in range(x.ndim - len(pad) // 2, x.ndim):
        i = x.ndim - 1 - d
        left = x.shape[d]
        for p in (pad[2 * i], pad[2 * i + 1]):
            if p < 0 and left + p < 0:
                raise RuntimeError(
                    f"narrow(): length must be non-negative. (constant_pad_nd(): the negative "
                    f"padding {p} crops more than the {left} entries left of dimension {d} of "
                    f"the input, shape {list(x.shape)}, padding {list(pad)}; crop by at most "
                    "the size)")
            left += min(p, 0)
    return _pad(x, pad, value)


# ----------------------------------------------------------------- rotations, flips


def _rot90_fwd(a, k, dims):
    # PyTorch's layout: k = 0 a contiguous clone; 2 a flip of both dims; 1 and 3 a flip of
    # one dim, then a transposed view of it (non-contiguous: rms_norm of it clones, seed
    # 17036254); the flips keep the input's memory order
    xp, k, (d0, d1) = namespace(a), k % 4, dims
    if k == 0:
        return a.copy()
    if k == 2:
        return _copy_keeping_layout(xp.flip(a, axis=dims))
    return xp.swapaxes(_copy_keeping_layout(xp.flip(a, axis=d1 if k == 1 else d0)), d0, d1)


_rot90 = defop("rot90", _rot90_fwd,
               lambda node, g, saved: (_rot90(g, -node.params[0], node.params[1]),),
               "Rot90Backward0", 1, NOTHING)


def rot90(x, k=1, dims=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane ``dims``, from the first towards the
    second (a copy, one Rot90Backward0 node, as PyTorch)."""
    dims = _shape_arg((dims,))
    k = int_arg(k, "k")
    if len(dims) != 2:
        raise RuntimeError(f"rot90(): expected total rotation dims == 2, but got dims = "
                           f"{len(dims)}")
    if x.ndim < 2:
        raise RuntimeError(f"rot90(): expected total dims >= 2, but got total dims = {x.ndim}")
    d0, d1 = (_norm_dim(d, x.ndim) for d in dims)
    if d0 == d1:
        raise RuntimeError(f"rot90(): expected rotation dims to be different, but got dim0 = "
                           f"{dims[0]} and dim1 = {dims[1]}")
    return _rot90(x, k % 4, (d0, d1))


def fliplr(x):
    """Reverse the columns (dimension 1; at least 2-D)."""
    if x.ndim < 2:
        raise RuntimeError(f"fliplr(): Input must be >= 2-d (got {x.ndim}-d, shape "
                           f"{list(x.shape)})")
    return flip_op(x, (1,))


def flipud(x):
    """Reverse the rows (dimension 0; at least 1-D)."""
    if x.ndim < 1:
        raise RuntimeError("flipud(): Input must be >= 1-d (got a 0-d tensor)")
    return flip_op(x, (0,))


# ----------------------------------------------------------------- splitting


def split_with_sizes(x, split_sizes, dim=0):
    """Views of ``x`` cut along ``dim`` into the listed sizes (SplitWithSizesBackward0)."""
    if not hasattr(split_sizes, "__len__"):
        raise TypeError(f"split_with_sizes(): argument 'split_sizes' (position 1) must be tuple "
                        f"of ints, not {type(split_sizes).__name__}")
    return split(x, list(split_sizes), dim)


def _one_of(name, given, **keywords):
    """PyTorch's overloads ``f(x, sections)``, ``f(x, indices)``, ``f(x, tensor_...)``: the
    one argument given, positionally or by one of those keyword names."""
    named = {k: v for k, v in keywords.items() if v is not None}
    if len(named) + (given is not None) != 1:
        raise TypeError(f"{name}() received an invalid combination of arguments: give the "
                        f"sections or the indices once, positionally or as one of "
                        f"{', '.join(keywords)}= (got {len(named) + (given is not None)})")
    return given if given is not None else next(iter(named.values()))


def tensor_split(x, indices_or_sections=None, /, dim=0, *, sections=None, indices=None,
                 tensor_indices_or_sections=None):
    """Views of ``x`` along ``dim``: ``sections`` nearly equal pieces (the first ones one
    longer), or the pieces between ``indices`` (each a slice, SliceBackward0, as PyTorch)."""
    indices_or_sections = _one_of("tensor_split", indices_or_sections, sections=sections,
                                  indices=indices,
                                  tensor_indices_or_sections=tensor_indices_or_sections)
    if x.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        if ios._data.dtype.kind not in "iu":
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have integer "
                               f"dtype, but got {ios.dtype}")
        if ios.ndim > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a "
                               f"zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {ios.ndim} dims")
        ios = int(ios.item()) if ios.ndim == 0 else [int(v) for v in ios._data.tolist()]
    dim = _norm_dim(dim, x.ndim)
    n = x.shape[dim]
    if not hasattr(ios, "__len__"):
        sections = int_arg(ios, "sections")
        if sections <= 0:
            raise RuntimeError(f"tensor_split(): number of sections must be larger than 0, got "
                               f"{sections}")
        small, extra = divmod(n, sections)
        bounds, start = [], 0
        for i in range(sections):
            end = start + small + (i < extra)
            bounds.append((start, end))
            start = end
    else:
        def pos(i):  # as PyTorch's slice: from the end if negative, clamped to [0, n]
            return min(max(i + n if i < 0 else i, 0), n)

        bounds, start = [], 0
        for idx in [int_arg(i, "indices") for i in ios] + [n]:
            s = pos(start)
            bounds.append((s, max(pos(idx), s)))  # an end before the start: an empty piece
            start = idx
    pre = (slice(None),) * dim
    return tuple(_slice_view(x, pre + (slice(s, e),)) for s, e in bounds)


def _slice_view(x, index):
    # PyTorch's at::slice: SliceBackward0 even for a whole dimension (x[:] is an alias)
    return track_view(x, _slice(x, index, tuple(x.shape), True))


def _dir_split(x, ios, name, dim, min_dims, sections, indices):
    ios = _one_of(name, ios, sections=sections, indices=indices)
    if x.ndim < min_dims:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} dimension"
                           f"{'s' if min_dims > 1 else ''}, but got a tensor with {x.ndim} "
                           "dimensions!")
    if not hasattr(ios, "__len__") and not isinstance(ios, Tensor):
        sections = int_arg(ios, "sections")
        if sections == 0 or x.shape[dim] % sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the "
                               f"size of the dimension {x.shape[dim]} is not divisible by the "
                               f"split_size {sections}!")
    return tensor_split(x, ios, dim)


def hsplit(x, indices_or_sections=None, /, *, sections=None, indices=None):
    """tensor_split along dimension 1 (0 for a 1-D tensor); sections must divide evenly."""
    return _dir_split(x, indices_or_sections, "hsplit", 0 if x.ndim == 1 else 1, 1, sections,
                      indices)


def vsplit(x, indices_or_sections=None, /, *, sections=None, indices=None):
    """tensor_split along dimension 0 of a tensor of at least 2 dimensions."""
    return _dir_split(x, indices_or_sections, "vsplit", 0, 2, sections, indices)


def dsplit(x, indices_or_sections=None, /, *, sections=None, indices=None):
    """tensor_split along dimension 2 of a tensor of at least 3 dimensions."""
    return _dir_split(x, indices_or_sections, "dsplit", 2, 3, sections, indices)


# ----------------------------------------------------------------- flattening, atleast


def _contiguous(x):
    return x if x._data.flags.c_contiguous else clone_contiguous(x)


def ravel(x):
    """The elements as a 1-D view (of a contiguous copy when ``x`` is not contiguous:
    PyTorch's ``contiguous().view(-1)``)."""
    return view(_contiguous(x), -1)


def _atleast(tensors, fn):
    if len(tensors) == 1 and isinstance(tensors[0], Tensor):
        return fn(tensors[0])
    return tuple(fn(t) for t in _tensors_arg(tensors, fn.__name__))


def _at1(x):
    return reshape(x, 1) if x.ndim == 0 else x


def _at2(x):
    if x.ndim == 0:
        return reshape(x, 1, 1)
    return unsqueeze(x, 0) if x.ndim == 1 else x


def _at3(x):
    if x.ndim == 0:
        return reshape(x, 1, 1, 1)
    if x.ndim == 1:
        return unsqueeze(unsqueeze(x, 0), -1)
    return unsqueeze(x, -1) if x.ndim == 2 else x


def atleast_1d(*tensors):
    """The tensor(s) with at least one dimension (a 0-d one becomes shape ``(1,)``)."""
    return _atleast(tensors, _at1)


def atleast_2d(*tensors):
    """The tensor(s) with at least two dimensions (new ones in front)."""
    return _atleast(tensors, _at2)


def atleast_3d(*tensors):
    """The tensor(s) with at least three dimensions (a 1-D ``(n,)`` becomes ``(1, n, 1)``,
    a 2-D ``(m, n)`` becomes ``(m, n, 1)``)."""
    return _atleast(tensors, _at3)


def _joined(tensors, name):
    if isinstance(tensors, Tensor) or not hasattr(tensors, "__len__"):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    for i, x in enumerate(tensors):
        if x.__class__ in _PY_VALUES:
            raise not_tensor_element(i, x)
    return tensors


def hstack(tensors):
    """Join along dimension 1 (along 0 for 1-D tensors)."""
    tensors = [_at1(t) for t in _joined(tensors, "hstack")]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    """Join along dimension 0, 1-D tensors as rows."""
    return cat([_at2(t) for t in _joined(tensors, "vstack")], 0)


def dstack(tensors):
    """Join along dimension 2 (after atleast_3d)."""
    return cat([_at3(t) for t in _joined(tensors, "dstack")], 2)


def column_stack(tensors):
    """Join along dimension 1, 0-d and 1-d tensors as columns."""
    tensors = _joined(tensors, "column_stack")
    return cat([reshape(t, t.numel(), 1) if t.ndim <= 1 else t for t in tensors], 1)


# ----------------------------------------------------------------- unfold


def _unfold_fwd(a, dim, size, step, in_shape=None):
    xp = namespace(a)
    if a.ndim == 0:
        return a.reshape(1)[:size]
    n = (a.shape[dim] - size) // step + 1
    shape = a.shape[:dim] + (n,) + a.shape[dim + 1:] + (size,)
    strides = a.strides[:dim] + (a.strides[dim] * step,) + a.strides[dim + 1:] + (a.strides[dim],)
    return xp.lib.stride_tricks.as_strided(a, shape, strides)


def _unfold_vjp(node, g, saved):
    # (the input's shape when unfold ran, not its producer's: see layout._diagonal_vjp)
    dim, size, step, in_shape = node.params
    return (_unfold_backward(g, in_shape, dim, size, step),)


def _unfold_backward_fwd(g, in_shape, dim, size, step):
    # each window's gradient added back where it came from (windows may overlap): one pass
    # per position j inside the windows, whose elements lie ``step`` apart and never collide
    xp = namespace(g)
    out = xp.zeros(in_shape, dtype=g.dtype)
    if not in_shape:
        out[...] = g.sum()
        return out
    n = g.shape[dim]
    for j in range(size if n else 0):
        index = (slice(None),) * dim + (slice(j, j + step * (n - 1) + 1, step),)
        out[index] += g[..., j]
    return out


def _unfold_backward_vjp(node, g, saved):
    # the adjoint of the adjoint: unfold the gradient again (PyTorch's UnfoldBackwardBackward0)
    _, dim, size, step = node.params
    return (_unfold(g, dim, size, step, tuple(g.shape)),)


_unfold = defop("unfold", _unfold_fwd, _unfold_vjp, "UnfoldBackward0", 1, NOTHING, view=True)
_unfold_backward = defop("unfold_backward", _unfold_backward_fwd, _unfold_backward_vjp,
                         "UnfoldBackwardBackward0", 1, NOTHING)


def unfold(x, dimension, size, step):
    """A view of all windows of length ``size`` along ``dimension``, ``step`` apart: that
    dimension becomes the number of windows and a last dimension of ``size`` is added."""
    d = _norm_dim(dimension, x.ndim)
    size, step = int_arg(size, "size"), int_arg(step, "step")
    n = x.shape[d] if x.ndim else 1
    if size < 0:
        raise RuntimeError(f"unfold(): size is {size} but must be >= 0")
    if size > n:
        raise RuntimeError(f"unfold(): maximum size for tensor at dimension {d} is {n} but size "
                           f"is {size}")
    if step <= 0:
        raise RuntimeError(f"unfold(): step is {step} but must be > 0")
    return track_view(x, _unfold(x, d, size, step, tuple(x.shape)))


# ----------------------------------------------------------------- repeat_interleave


def _repeat_counts(repeats, output_size):
    """``repeat_interleave(repeats)``: index ``i`` repeated ``repeats[i]`` times."""
    r = repeats._data
    xp = namespace(r)
    # PyTorch's kernel is dispatched on the index types (int32, int64) before any check: a
    # float, bool or other integer repeats is its NotImplementedError (seed 11007523)
    if r.dtype not in (np.int32, np.int64):
        raise NotImplementedError(
            f"\"repeat_interleave_cpu\" not implemented for '{scalar_type_name(r.dtype)}': "
            "repeat_interleave() takes int64 or int32 repeats; convert them with .long()")
    if r.ndim != 1:
        raise RuntimeError(f"repeat_interleave only accept 1D vector as repeat (got shape "
                           f"{list(r.shape)}; pass a 1-D tensor of counts)")
    if r.size and r.min() < 0:
        raise RuntimeError("repeat_interleave(): repeats can not be negative")
    total = int(r.sum())
    if output_size is not None and output_size != total:
        raise RuntimeError(f"repeat_interleave(): allocated size does not match required size "
                           f"(output_size={output_size}, repeats sum to {total})")
    return make_tensor(xp.repeat(xp.arange(r.size, dtype=r.dtype), r))


def repeat_interleave(x, repeats=None, dim=None, *, output_size=None):
    """Repeat each element ``repeats`` times (a number, or one count per element) along
    ``dim`` (the flattened tensor without it).  ``repeat_interleave(counts)`` alone gives
    the indices ``i`` repeated ``counts[i]`` times."""
    if repeats is None:  # torch.repeat_interleave(repeats)
        return _repeat_counts(x, output_size)
    if dim is None:
        x = reshape(x, -1) if x.ndim != 1 else x
        dim = 0
    dim = _norm_dim(dim, x.ndim)
    if isinstance(repeats, Tensor):  # always an index_select, as PyTorch
        if repeats.ndim > 1:
            raise RuntimeError(f"repeat_interleave(): repeats must be 0-dim or 1-dim tensor (got "
                               f"shape {list(repeats.shape)})")
        n = x.shape[dim] if x.ndim else 1
        if repeats.numel() == 1:  # one count for every element
            repeats = make_tensor(namespace(repeats._data).full(n, repeats._data.reshape(-1)[0]))
        elif repeats.shape[0] != n:
            raise RuntimeError(
                f"repeat_interleave(): repeats must have the same size as input along dim, but "
                f"got repeats.size(0) = {repeats.shape[0]} and input.size({dim}) = {n}")
        return index_select(x, dim, _repeat_counts(repeats, output_size))
    repeats = int_arg(repeats, "repeats")
    if repeats < 0:
        raise RuntimeError(f"repeat_interleave(): repeats can not be negative (got {repeats})")
    if x.ndim == 0:
        x = reshape(x, 1)
    shape = list(x.shape)
    if output_size is not None and output_size != shape[dim] * repeats:
        raise RuntimeError(f"repeat_interleave(): allocated size does not match required size "
                           f"(output_size={output_size}, {shape[dim]} * {repeats} elements)")
    # PyTorch's: unsqueeze, expand, a contiguous copy, a view
    big = shape[:dim + 1] + [repeats] + shape[dim + 1:]
    out = clone(expand(unsqueeze(x, dim + 1), *big))
    shape[dim] *= repeats
    return view(out, *shape)


# ----------------------------------------------------------------- diagonals, sort


def diagflat(x, offset=0):
    """The flattened input as the ``offset`` diagonal of a square matrix."""
    flat = ravel(x)
    n = flat.shape[0] + abs(int_arg(offset, "offset"))
    return _diag_embed(flat, (n, n), offset, 0, 1)


def msort(x):
    """Sorted along dimension 0 (values only)."""
    return sort(x, 0).values


# ----------------------------------------------------------------- conjugate transposes


def _H(x):  # noqa: N802 - PyTorch's name
    # real dtypes only: the conjugate transpose is the transpose
    if x.ndim == 2:
        return transpose(x, 0, 1)
    if x.ndim == 0:  # itself, with PyTorch's deprecation warning
        warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
                      UserWarning, stacklevel=2)
        return x
    raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                       f"{x.ndim}-D tensor (shape {list(x.shape)}).")


def _mH(x):  # noqa: N802 - PyTorch's name
    if x.ndim < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. "
                           f"Got {x.ndim}-D tensor (shape {list(x.shape)}).")
    return transpose(x, -2, -1)


def adjoint(x):
    """The conjugate transpose of the last two dimensions (a view; real dtypes: ``mT``)."""
    if x.ndim < 2:
        raise RuntimeError(f"adjoint(): tensor.adjoint() is only supported on matrices or "
                           f"batches of matrices. Got {x.ndim}-D tensor.")
    return transpose(x, -2, -1)


__all__ = ["broadcast_tensors", "meshgrid", "cartesian_prod", "combinations", "block_diag",
           "constant_pad_nd", "rot90", "fliplr", "flipud", "split_with_sizes", "tensor_split",
           "hsplit", "vsplit", "dsplit", "ravel", "atleast_1d", "atleast_2d", "atleast_3d",
           "hstack", "vstack", "dstack", "column_stack", "unfold", "repeat_interleave",
           "diagflat", "msort", "adjoint"]


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

_METHOD = {"broadcast_tensors": False, "meshgrid": False, "cartesian_prod": False,
           "block_diag": False, "combinations": False, "constant_pad_nd": False,
           "atleast_1d": False, "atleast_2d": False, "atleast_3d": False, "hstack": False,
           "vstack": False, "dstack": False, "column_stack": False}
_ALIASES = {"vstack": ("row_stack",)}
for _name in __all__:
    register(globals()[_name], _name, method=_METHOD.get(_name, True),
             aliases=_ALIASES.get(_name, ()), function=_name != "unfold",
             tensor={"H": property(_H), "mH": property(_mH)} if _name == "adjoint" else None)
