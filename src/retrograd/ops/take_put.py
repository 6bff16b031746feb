"""index_put, take / take_along_dim / put, masked_scatter and diagonal / select /
slice_scatter, with their in-place forms: positions into ``self`` turned into flat
positions, then ops/scatter.py's overwrite / accumulate ops (whose derivatives, written with
the position primitives there, work at every order).
"""

from __future__ import annotations

import numpy as _np

from ..backend import namespace
from ._errors import tensor_arg
from .dtype_rules import check_grad_dtype
from ..tensor import Tensor
from .index import gather
from .saved_checks import check_also
from .inplace import inplace
from .scatter import (
    _diagonal_scatter, _index_put_acc, _index_put_ow, _masked_scatter, _put_acc, _put_ow, _raw,
    _select_scatter, _size, _slice_scatter, _take, _tname,
)
from .shape import _norm_dim


# ----------------------------------------------------------------- index_put, take, put


def _flat_ids(shape, xp=_np):
    return xp.arange(_size(shape), dtype=xp.int64).reshape(shape)


def index_put(input, indices, values, accumulate=False):  # noqa: A002
    """``input`` with ``values`` written (or, with ``accumulate=True``, added: repeats add
    up) at ``input[indices]`` (a tuple of integer or bool tensors)."""
    from .index import _unwrap_index, check_index_tensors

    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put(): argument 'indices' (position 2) must be tuple of "
                        f"Tensors, not {type(indices).__name__}")
    tensor_arg(_raw(values), "values", 3)
    for k, i in enumerate(indices):
        if i is not None and not hasattr(i, "dtype"):
            raise TypeError(f"expected Tensor as element {k} in argument 0, but got "
                            f"{type(i).__name__} (index_put() takes a tuple of index tensors)")
    items = _unwrap_index(tuple(indices))
    for i in items:
        if not hasattr(i, "dtype") or i.dtype.kind not in "iub":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    check_index_tensors(items, tuple(input.shape))
    if _raw(values).dtype != _raw(input).dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_tname(_raw(input))} for the destination and "
                           f"{_tname(_raw(values))} for the source.")
    shape = tuple(input.shape)
    dim, out_of_bounds = 0, None
    for i in items:
        if i.dtype.kind == "b":
            dim += i.ndim
            continue
        if dim < len(shape) and i.size and out_of_bounds is None:
            lo, hi = int(i.min()), int(i.max())
            if lo < -shape[dim] or hi >= shape[dim]:
                bad = hi if hi >= shape[dim] else lo
                out_of_bounds = (f"index {bad} is out of bounds for dimension {dim} with size "
                                 f"{shape[dim]} (index_put on a tensor of shape {list(shape)})")
        dim += 1
    if dim > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)} (index_put "
                         f"with {len(items)} indices)")
    from .index import _empty_result_shape, _torch_layout

    split = _torch_layout(items, len(shape))
    xp = namespace(_raw(input))
    ids = _flat_ids(shape, xp)
    if out_of_bounds is None:
        p = ids[items if split is None else split[1]]
    else:  # PyTorch checks no index where the region written is empty
        empty = _empty_result_shape(ids, items)
        if empty is None:
            raise IndexError(out_of_bounds)
        p = xp.empty(empty, dtype=ids.dtype)
    vshape = tuple(values.shape)
    try:
        _np.broadcast_shapes(vshape, p.shape)
        if len(vshape) > p.ndim or _np.broadcast_shapes(vshape, p.shape) != p.shape:
            raise ValueError
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(vshape)} cannot be "
                           f"broadcast to indexing result of shape {list(p.shape)}") from None
    # (IndexPutBackward0 saves the indices: changing one in place breaks backward)
    if accumulate:
        return check_also(_index_put_acc(input, values, p, None, vshape, 1), *indices)
    return check_also(_index_put_ow(input, values, p, None, vshape), *indices)


def _flat_index(x, index, op):
    idx = _raw(index)
    tensor_arg(idx, "index", 2)
    if idx.dtype.name != "int64":
        raise RuntimeError(f"{op}(): Expected a long tensor for index, but got {_tname(idx)}")
    n = _size(tuple(x.shape))
    if idx.size and (int(idx.min()) < -n or int(idx.max()) >= n):
        bad = int(idx.max()) if int(idx.max()) >= n else int(idx.min())
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                         f"elements ({op})")
    return idx % max(n, 1) if idx.size else idx


def take(input, index):  # noqa: A002
    """``input`` as 1-D, at ``index`` (negative counts from the end); the result has the
    index's shape.  The gradient is added back at the positions (repeats add up)."""
    p = _flat_index(input, index, "take")
    return check_also(_take(input, p, tuple(input.shape)), input, index)  # (TakeBackward0's)


def put(input, index, source, accumulate=False):  # noqa: A002
    """``input`` (seen as 1-D) with ``source`` written (or added) at ``index``."""
    tensor_arg(_raw(source), "source", 3)
    if _raw(source).dtype != _raw(input).dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {_tname(_raw(input))} and source.dtype = "
                           f"{_tname(_raw(source))}")
    p = _flat_index(input, index, "put_")
    if p.size != _raw(source).size:
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {_raw(source).size}, "
                         f"index.numel() = {p.size}")
    p = p.reshape(tuple(source.shape))
    # PutBackward0 saves the index, and the source when it requires grad
    keep = (index, source if isinstance(source, Tensor) and source._requires_grad else None)
    if accumulate:
        return check_also(_put_acc(input, source, p, None, tuple(source.shape), 1), *keep)
    return check_also(_put_ow(input, source, p, None, tuple(source.shape)), *keep)


def take_along_dim(input, indices, dim=None):  # noqa: A002
    """``gather`` after broadcasting ``input`` and ``indices`` against each other outside
    ``dim``; with no ``dim``, both are flattened (PyTorch's composite: GatherBackward0)."""
    from .shape import broadcast_to, reshape

    idx = _raw(indices)
    tensor_arg(idx, "indices", 2)
    if idx.dtype.name != "int64":
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_tname(idx)}")
    if dim is None:
        return gather(reshape(input, -1), 0, idx.reshape(-1))
    if idx.ndim != input.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.ndim} dimensions for input, "
                           f"and {idx.ndim} dimensions for indices")
    if not input.ndim:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions "
                         "(take_along_dim on a 0-d tensor: pass dim=None)")
    d = _norm_dim(dim, input.ndim)
    # PyTorch wraps negative indices along dim into a new tensor, which its gather saves:
    # changing the indices in place later changes nothing (seed 11022856)
    idx = namespace(idx).where(idx < 0, idx + input.shape[d], idx)
    ishape, xshape = list(input.shape), list(idx.shape)
    ishape[d] = idx.shape[d]
    try:
        full = list(_np.broadcast_shapes(tuple(ishape), tuple(idx.shape)))
        idx_b = namespace(idx).broadcast_to(idx, full)
        xshape = list(full)
        xshape[d] = input.shape[d]
        xfull = tuple(_np.broadcast_shapes(tuple(input.shape), tuple(xshape)))
    except ValueError:
        raise RuntimeError(f"take_along_dim(): shapes of input {list(input.shape)} and indices "
                           f"{list(idx.shape)} do not broadcast outside dim {d}") from None
    # (PyTorch expands both always: ExpandBackward0 even where nothing is broadcast)
    return gather(broadcast_to(input, xfull), d, idx_b)


# ----------------------------------------------------------------- masked_scatter, *_scatter


def masked_scatter(input, mask, source):  # noqa: A002
    """``input`` with the positions where ``mask`` is True filled, in order, from the start
    of ``source`` (flattened); ``source``'s unused tail gets a zero gradient."""
    m = _raw(mask)
    tensor_arg(m, "mask", 2)
    tensor_arg(_raw(source), "source", 3)
    if m.dtype.kind != "b":
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {_tname(m)}")
    if _raw(source).dtype != _raw(input).dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{_tname(_raw(input))} and {_tname(_raw(source))}")
    shape = tuple(input.shape)
    try:
        full = tuple(_np.broadcast_shapes(shape, m.shape))
    except ValueError:
        raise RuntimeError(f"masked_scatter: the size of mask {list(m.shape)} must match the "
                           f"size of self {list(shape)} (they must broadcast)") from None
    xp = namespace(m)
    p = xp.flatnonzero(xp.broadcast_to(m, full))
    n = _raw(source).size
    if p.size > n:
        raise RuntimeError(f"Number of elements of source < number of ones in mask "
                           f"(masked_scatter: {n} < {p.size})")
    q = xp.arange(p.size, dtype=xp.int64)
    # self broadcast to the mask's shape inside the op (no ExpandBackward0, as PyTorch; the
    # engine sums self's gradient back to its shape)
    return check_also(_masked_scatter(input, source, p, q, tuple(source.shape), full), mask)


def _check_src(src, region, dtype_of, name):
    tensor_arg(_raw(src), "src", 2)
    if tuple(src.shape) != tuple(region.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(region.shape)}")
    # an integer or bool result cannot carry src's gradient: PyTorch's autograd refuses it
    check_grad_dtype(src, dtype_of, name)
    if _raw(src).dtype != _raw(dtype_of).dtype:  # PyTorch casts src (a copy_)
        src = src.to(dtype_of.dtype)
    return src


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):  # noqa: A002
    """``input`` with its diagonal (as ``input.diagonal(offset, dim1, dim2)``) replaced by
    ``src``."""
    shape = tuple(input.shape)
    d1, d2 = _norm_dim(dim1, len(shape)), _norm_dim(dim2, len(shape))
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    p = namespace(_raw(input)).diagonal(_flat_ids(shape, namespace(_raw(input))), offset, d1, d2)
    src = _check_src(src, p, input, "diagonal_scatter")
    return _diagonal_scatter(input, src, p, None, tuple(src.shape))


def select_scatter(input, src, dim, index):  # noqa: A002
    """``input`` with ``input.select(dim, index)`` replaced by ``src``."""
    shape = tuple(input.shape)
    if not shape:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _norm_dim(dim, len(shape))
    if not -shape[d] <= index < shape[d]:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(shape)} at dimension {d}")
    p = _flat_ids(shape, namespace(_raw(input)))[(slice(None),) * d + (index,)]
    src = _check_src(src, p, input, "select_scatter")
    return _select_scatter(input, src, p, None, tuple(src.shape))


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):  # noqa: A002
    """``input`` with ``input[..., start:end:step, ...]`` (along ``dim``) replaced by
    ``src``."""
    shape = tuple(input.shape)
    d = _norm_dim(dim, len(shape))
    if step is None:
        step = 1
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    if not shape:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    p = _flat_ids(shape, namespace(_raw(input)))[(slice(None),) * d + (slice(start, end, step),)]
    src = _check_src(src, p, input, "slice_scatter")
    return _slice_scatter(input, src, p, None, tuple(src.shape))


# ----------------------------------------------------------------- in-place forms

_index_put_refusing = inplace(index_put, "index_put_", False)
_index_put_writing = inplace(index_put, "index_put_", False, overlap_ok=True)


def index_put_(input, indices, values, accumulate=False):  # noqa: A002
    """In-place ``index_put``.  Without ``accumulate`` PyTorch writes through an expanded
    tensor (with its deprecation warning), as ``x[i] = v`` does; an accumulating one is
    refused here (adding through aliases would depend on the kernel's order)."""
    return (_index_put_refusing if accumulate else _index_put_writing)(
        input, indices, values, accumulate)
put_ = inplace(put, "put_", False)
masked_scatter_ = inplace(masked_scatter, "masked_scatter_", False)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

for _fn in (index_put, take, take_along_dim, put, masked_scatter, diagonal_scatter,
            select_scatter, slice_scatter):
    register(_fn)
for _fn in (index_put_, put_, masked_scatter_):
    # (torch.index_put_ is also a function; the others are methods only)
    register(_fn, function=_fn is index_put_, inplace_of=_fn.__name__[:-1])
