"""``as_strided`` and ``as_strided_scatter`` (issue 6): views given by sizes, element strides
and a storage offset, as PyTorch's.

A tensor's storage is the array its data is a view of (``.base``, followed to the root,
through the DummyArray that NumPy's as_strided views hang off); a tensor that owns its data
is its own storage.  ``as_strided`` returns a view of that storage (writes show in the
input) when the storage is a dense array of the tensor's dtype (read in memory order),
otherwise a copy taken from the tensor's values in row-major order (PyTorch would use the
odd storage itself; retrograd tensors rarely have one).  ``as_strided_scatter`` and
``resize_`` (tensor_extras.py) address the same storage.  The derivative (AsStridedBackward0)
sums the gradient into a zero storage at the positions the view reads, then reads the
input's own positions back: overlapping windows add up, as in PyTorch.  Written with
``index_add`` and ``take``, so every order works.
"""

from __future__ import annotations

import operator

from ..backend import namespace
from ..tensor import Tensor, make_tensor
from ._apply import defop
from .dtype_rules import check_grad_dtype
from .scatter import index_add
from .take_put import take


def _ints(values, what, name):
    if isinstance(values, int):
        values = (values,)
    out = []
    for v in values:
        if isinstance(v, bool) or not hasattr(v, "__index__"):
            raise TypeError(f"{name}(): argument '{what}' must be tuple of ints, but found "
                            f"element of type {type(v).__name__}")
        out.append(operator.index(v))
    return tuple(out)


def _storage(a):
    """(the flat storage array, a's offset in it, a's element strides), or None when a's
    root array cannot serve as one (another dtype, gaps or overlaps, negative strides)."""
    root = a
    while getattr(root, "base", None) is not None:
        up = root.base
        if not hasattr(up, "dtype"):  # NumPy's as_strided views (retrograd's diagonal, ...)
            up = getattr(up, "base", None)  # hang off a DummyArray that holds their array
            if not hasattr(up, "dtype"):
                break
        root = up
    if root.dtype != a.dtype:
        return None
    flat = _memory_order(root)
    if flat is None:
        return None
    if root is a:
        return flat, 0, tuple(s // a.itemsize for s in a.strides)
    try:
        start = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    except AttributeError:  # CuPy
        start = a.data.ptr - root.data.ptr
    if start % a.itemsize or any(s % a.itemsize for s in a.strides):
        return None
    return flat, start // a.itemsize, tuple(s // a.itemsize for s in a.strides)


def _memory_order(root):
    """``root``'s elements as a flat view in memory order, when they fill their memory
    without gaps or overlaps from the first element on (row-major, column-major, a permuted
    dense array); else None."""
    if root.flags.c_contiguous:
        return root.reshape(-1)
    from .iter_layout import dense

    if any(s < 0 for s in root.strides) or not dense(root.shape, root.strides, root.itemsize):
        return None
    return namespace(root).lib.stride_tricks.as_strided(root, (root.size,), (root.itemsize,))


def _positions(xp, size, stride, offset):
    """The storage position of every element of the view (an int64 array of shape size)."""
    pos = xp.full(size, offset, dtype=xp.int64)
    for d, (n, s) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        pos = pos + (xp.arange(n, dtype=xp.int64) * s).reshape(shape)
    return pos


def _check_bounds(size, stride, offset, itemsize, storage_size, name):
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape ({name} got size "
                           f"{list(size)} and stride {list(stride)})")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, "
                           f"got strides: {list(stride)}")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(size)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    needed = 0 if 0 in size else offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1
    if needed > storage_size:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, "
            f"and itemsize {itemsize} requiring a storage size of {needed * itemsize} are out "
            f"of bounds for storage of size {storage_size * itemsize} ({name})")


def _as_strided_fwd(a, size, stride, offset, storage_info, in_shape):
    flat, _, _ = storage_info
    xp = namespace(a)
    if flat is None:
        return xp.ascontiguousarray(a).reshape(-1)[_positions(xp, size, stride, offset)]
    start = flat[offset:] if flat.size > offset else flat[:0]
    return xp.lib.stride_tricks.as_strided(start, size, tuple(s * a.itemsize for s in stride))


def _as_strided_vjp(node, g, saved):
    size, stride, offset, (flat, in_offset, in_strides), in_shape = node.params
    xp = namespace(flat) if flat is not None else None
    storage_size = flat.size if flat is not None else _numel(in_shape)
    if xp is None:
        import numpy as xp  # (the storage was a copy: host positions)
    out_pos = _positions(xp, size, stride, offset).reshape(-1)
    in_pos = _positions(xp, in_shape, in_strides, in_offset)
    # PyTorch hands back the zero storage viewed with the input's geometry (its strides,
    # not row-major) where the input's elements do not overlap
    as_view = flat is not None and _non_overlapping(in_shape, in_strides)
    share = None if as_view else _shared_places(xp, in_pos, storage_size)
    if isinstance(g, Tensor):
        zeros = make_tensor(xp.zeros((storage_size,), dtype=g._data.dtype))
        summed = index_add(zeros, 0, make_tensor(out_pos), g.reshape(-1))
        if as_view:
            return (as_strided(summed, in_shape, in_strides, in_offset),)
        if share is not None:
            summed = summed * make_tensor(share.astype(g._data.dtype))
        return (take(summed, make_tensor(in_pos)),)
    summed = xp.zeros((storage_size,), dtype=g.dtype)
    xp.add.at(summed, out_pos, g.reshape(-1))
    if as_view:
        return (xp.lib.stride_tricks.as_strided(
            summed[in_offset:], in_shape, tuple(s * summed.itemsize for s in in_strides)),)
    if share is not None:
        summed = summed * share.astype(g.dtype)
    return (summed[in_pos],)


def _non_overlapping(shape, strides):
    """Whether no two elements of a view of these (element) strides share a place."""
    reach = 0  # the farthest place the dims taken so far reach, from the first element
    for s, n in sorted((s, n) for n, s in zip(shape, strides) if n > 1):
        if s <= reach:
            return False
        reach += (n - 1) * s
    return True


def _shared_places(xp, in_pos, storage_size):
    """For an input whose elements share storage places (expanded, overlapping windows):
    1 / how many of them read each place, else None.  A place's gradient then goes to its
    readers in equal parts, which the input's own backward (expand's sum) adds up again, as
    PyTorch's as_strided_backward divides by that count."""
    flat_pos = in_pos.reshape(-1)
    if flat_pos.size < 2 or xp.unique(flat_pos).size == flat_pos.size:
        return None
    count = xp.zeros((storage_size,), dtype=xp.float64)
    xp.add.at(count, flat_pos, 1.0)
    return 1.0 / xp.maximum(count, 1.0)


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


_as_strided = defop("as_strided", _as_strided_fwd, _as_strided_vjp, "AsStridedBackward0", 1,
                    view=True)


def as_strided(input, size, stride, storage_offset=None):  # noqa: A002
    """The view of ``input``'s storage with sizes ``size``, element strides ``stride``,
    starting ``storage_offset`` elements in (default: where ``input`` starts)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"as_strided(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return _as_strided(input, *view_params(input, size, stride, storage_offset))


def view_params(input, size, stride, storage_offset, name="as_strided"):  # noqa: A002
    """The parameters of AsStridedBackward0 (size, stride, offset, the storage, the input's
    shape), checked; as_strided_copy records the same."""
    a = input._data
    size, stride = _ints(size, "size", name), _ints(stride, "stride", name)
    info = _storage(a)
    if info is None:  # a copy of the values in row-major order serves as the storage
        info = (None, 0, tuple(_contiguous_strides(a.shape)))
        storage_size = a.size
    else:
        storage_size = info[0].size
    offset = info[1] if storage_offset is None else operator.index(storage_offset)
    _check_bounds(size, stride, offset, a.itemsize, storage_size, name)
    return size, stride, offset, info, tuple(a.shape)


def _contiguous_strides(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


# ----------------------------------------------------------------- as_strided_scatter
# PyTorch's as_strided_scatter is ``out = clone_preserve_strides(input)`` (a copy of the
# input's whole storage, viewed with the input's sizes, strides and storage offset), then
# ``out.as_strided(size, stride, storage_offset).copy_(src)``: the positions address that
# storage, not the input's values in row-major order (issue 7), and the result keeps the
# input's strides.  An input that overlaps itself (a stride 0, expanded) is cloned dense
# first (its storage is then that clone's, offset 0).

_NOT_CONTIGUOUS = ("!self.requires_grad() || self.is_contiguous() INTERNAL ASSERT FAILED: "
                   "as_strided_scatter is currently only supported for contiguous inputs")


def _expanded(a):
    return any(n > 1 and s == 0 for n, s in zip(a.shape, a.strides))


def _scatter_geometry(a):
    """(a's offset, a's element strides, the storage size) in the storage PyTorch's
    clone_preserve_strides(a) has: a's own; a dense clone's for an expanded a; a row-major
    copy's where a's storage cannot be addressed (see _storage)."""
    shape, isz = tuple(a.shape), a.itemsize
    if _expanded(a):
        from .iter_layout import _c_strides, result_strides  # clone()'s dense strides

        steps = tuple(s // isz for s in a.strides)
        dense = result_strides(shape, 1, [(shape, steps, 1)]) or _c_strides(shape, 1)
        return 0, tuple(dense), a.size
    info = _storage(a)
    if info is None or any(s < 0 for s in info[2]):
        return 0, _contiguous_strides(shape), a.size
    return info[1], info[2], info[0].size


def _scatter_base(a, in_strides):
    """A fresh copy of that storage (``in_strides`` from _scatter_geometry)."""
    xp = namespace(a)
    if _expanded(a):
        flat = xp.empty((a.size,), dtype=a.dtype)
        xp.lib.stride_tricks.as_strided(flat, a.shape,
                                        tuple(s * a.itemsize for s in in_strides))[...] = a
        return flat
    info = _storage(a)
    if info is None or any(s < 0 for s in info[2]):
        return xp.ascontiguousarray(a).reshape(-1).copy()
    return info[0].copy()


def _scatter_fwd(a, src, size, stride, offset, in_offset, in_strides, storage_size, in_shape):
    xp = namespace(a)
    flat = _scatter_base(a, in_strides)
    flat[_positions(xp, size, stride, offset)] = src
    start = flat[in_offset:] if flat.size > in_offset else flat[:0]
    return xp.lib.stride_tricks.as_strided(start, in_shape,
                                           tuple(s * a.itemsize for s in in_strides))


def _scatter_vjp(node, g, saved):
    """The derivative in storage terms: an output element whose storage position was written
    gets its value from ``src`` (the input's gradient there is 0); each ``src`` element's
    gradient is the sum over the output elements that read its position (none when that
    position lies outside the input's view).  PyTorch's formulas assume a contiguous input
    at offset 0 (tests/ops/test_as_strided_scatter_views.py shows where they differ)."""
    size, stride, offset, in_offset, in_strides, storage_size, in_shape = node.params
    ni, ns = node.next
    tensor = isinstance(g, Tensor)
    xp = namespace(g._data if tensor else g)
    pos = _positions(xp, size, stride, offset)
    out_pos = _positions(xp, in_shape, in_strides, in_offset)
    gi = gs = None
    if ni is not None:
        kept = xp.ones((storage_size,), dtype=bool)
        kept[pos.reshape(-1)] = False
        mask = kept[out_pos]
        gi = g * make_tensor(mask.astype(g._data.dtype)) if tensor else g * mask
    if ns is not None:
        if tensor:
            zeros = make_tensor(xp.zeros((storage_size,), dtype=g._data.dtype))
            summed = index_add(zeros, 0, make_tensor(out_pos.reshape(-1)), g.reshape(-1))
            gs = take(summed, make_tensor(pos))
        else:
            summed = xp.zeros((storage_size,), dtype=g.dtype)
            xp.add.at(summed, out_pos.reshape(-1), xp.ascontiguousarray(g).reshape(-1))
            gs = summed[pos]
    return (gi, gs)


_as_strided_scatter = defop("as_strided_scatter", _scatter_fwd, _scatter_vjp,
                            "AsStridedScatterBackward0", 2, dtype_rule="same")


def as_strided_scatter(input, src, size, stride, storage_offset=None):  # noqa: A002
    """A copy of ``input``'s storage with ``src`` written into its strided view ``(size,
    stride, storage_offset)`` (default offset: where ``input`` starts), seen as ``input``
    is (same sizes, strides and offset), as PyTorch's."""
    for t, arg, pos in ((input, "input", 1), (src, "src", 2)):
        if not isinstance(t, Tensor):
            raise TypeError(f"as_strided_scatter(): argument '{arg}' (position {pos}) must be "
                            f"Tensor, not {type(t).__name__}")
    a = input._data
    size = _ints(size, "size", "as_strided_scatter")
    stride = _ints(stride, "stride", "as_strided_scatter")
    if input.requires_grad and not input.is_contiguous():  # (PyTorch asserts, any grad mode)
        raise RuntimeError(_NOT_CONTIGUOUS)
    in_offset, in_strides, storage_size = _scatter_geometry(a)
    offset = in_offset if storage_offset is None else operator.index(storage_offset)
    _check_bounds(size, stride, offset, a.itemsize, storage_size, "as_strided_scatter")
    if tuple(src.shape) != size:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size "
                           f"= {list(src.shape)}, slice size = {list(size)}")
    if any(n > 1 and s == 0 for n, s in zip(size, stride)):  # copy_ into an overlapping view
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the "
                           "tensor before performing the operation.")
    # src of another dtype is cast, as copy_ does (its gradient is cast back by the engine);
    # but an integer or bool result cannot carry src's gradient
    check_grad_dtype(src, input, "as_strided_scatter")
    return _as_strided_scatter(input, src, size, stride, offset, in_offset, in_strides,
                               storage_size, tuple(a.shape))


# ----------------------------------------------------------------- as_strided_


def _as_strided_inplace_vjp(node, g, saved):
    class _Params:  # as_strided's derivative, on the params after the new data
        params = node.params[1:]

    return _as_strided_vjp(_Params, g, saved)


_AS_STRIDED_1 = defop("as_strided_", lambda a, data, *params: data, _as_strided_inplace_vjp,
                      "AsStridedBackward1", 1).op


def as_strided_(input, size, stride, storage_offset=None):  # noqa: A002
    """``as_strided`` in place: the tensor itself becomes that view of its storage (its
    values do not change, so its other views keep their graph); in a graph its grad_fn
    becomes AsStridedBackward1, as PyTorch."""
    from ..autograd.grad_mode import no_grad, state
    from ._apply import apply_op
    from .changed_views import _leaf_error, check_view_of_leaf, shadow_of

    with no_grad():
        view = as_strided(input, size, stride, storage_offset)
    x = input
    if state.enabled and x._requires_grad:
        if x._grad_fn is None:
            raise _leaf_error(x, "as_strided_")
        check_view_of_leaf(x, "as_strided_")
        a = x._data
        size_t = tuple(view.shape)
        stride_t = _ints(stride, "stride", "as_strided_")
        info = _storage(a) or (None, 0, _contiguous_strides(a.shape))
        offset = info[1] if storage_offset is None else operator.index(storage_offset)
        new = apply_op(_AS_STRIDED_1, (shadow_of(x, False),),
                       (view._data, size_t, stride_t, offset, info, tuple(a.shape)))
        x._grad_fn = new._grad_fn
        x._nr = 0  # retain_grad stays on the old node, as t_ (ops/inplace_forms.py)
    x._data = view._data
    x._bump_version()
    from ..autograd.forward_state import fw, set_tangent, tangent_of

    if fw.active and tangent_of(x) is not None:  # forward AD: the view's tangent
        set_tangent(x, tangent_of(view))
    return x


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(as_strided, signature="input, size, stride, storage_offset=None")
register(as_strided_scatter, signature="input, src, size, stride, storage_offset=None")
register(as_strided_, inplace_of="as_strided")
