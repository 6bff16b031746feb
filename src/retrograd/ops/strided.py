"""``as_strided`` and ``as_strided_scatter`` (issue 6): views given by sizes, element strides
and a storage offset, as PyTorch's.

A tensor's storage is the array its data is a view of (``.base``, followed to the root); a
tensor that owns its data is its own storage.  ``as_strided`` returns a view of that storage
(writes show in the input) when the storage is a contiguous array of the tensor's dtype,
otherwise a copy taken from the tensor's values in row-major order (PyTorch would use the
odd storage itself; retrograd tensors rarely have one).  The derivative (AsStridedBackward0)
sums the gradient into a zero storage at the positions the view reads, then reads the
input's own positions back: overlapping windows add up, as in PyTorch.  Written with
``index_add`` and ``take``, so every order works.
"""

from __future__ import annotations

import operator

from ..backend import namespace
from ..tensor import Tensor, make_tensor
from ._apply import defop
from ._errors import scalar_type_name
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
    root array cannot serve as one (not contiguous, another dtype)."""
    root = a
    while getattr(root, "base", None) is not None and hasattr(root.base, "dtype"):
        root = root.base
    if root is a:
        if a.flags.c_contiguous:
            return a.reshape(-1), 0, tuple(s // a.itemsize for s in a.strides)
        return None
    if root.dtype != a.dtype or not root.flags.c_contiguous:
        return None
    try:
        start = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    except AttributeError:  # CuPy
        start = a.data.ptr - root.data.ptr
    if start % a.itemsize or any(s % a.itemsize for s in a.strides):
        return None
    return root.reshape(-1), start // a.itemsize, tuple(s // a.itemsize for s in a.strides)


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
    if isinstance(g, Tensor):
        zeros = make_tensor(xp.zeros((storage_size,), dtype=g._data.dtype))
        summed = index_add(zeros, 0, make_tensor(out_pos), g.reshape(-1))
        if as_view:
            return (as_strided(summed, in_shape, in_strides, in_offset),)
        return (take(summed, make_tensor(in_pos)),)
    summed = xp.zeros((storage_size,), dtype=g.dtype)
    xp.add.at(summed, out_pos, g.reshape(-1))
    if as_view:
        return (xp.lib.stride_tricks.as_strided(
            summed[in_offset:], in_shape, tuple(s * summed.itemsize for s in in_strides)),)
    return (summed[in_pos],)


def _non_overlapping(shape, strides):
    """Whether no two elements of a view of these (element) strides share a place."""
    reach = 0  # the farthest place the dims taken so far reach, from the first element
    for s, n in sorted((s, n) for n, s in zip(shape, strides) if n > 1):
        if s <= reach:
            return False
        reach += (n - 1) * s
    return True


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


def _scatter_fwd(a, src, size, stride, offset, in_shape):
    xp = namespace(a)
    out = xp.ascontiguousarray(a).copy().reshape(-1)
    out[_positions(xp, size, stride, offset)] = src
    return out.reshape(a.shape)


def _scatter_vjp(node, g, saved):
    size, stride, offset, in_shape = node.params
    ni, ns = node.next
    xp = namespace(g._data if isinstance(g, Tensor) else g)
    pos = _positions(xp, size, stride, offset)
    mask = xp.ones((_numel(in_shape),), dtype=bool)
    mask[pos.reshape(-1)] = False
    mask = mask.reshape(in_shape)
    gi = gs = None
    if isinstance(g, Tensor):
        if ni is not None:
            gi = g * make_tensor(mask.astype(g._data.dtype))
        if ns is not None:
            gs = take(g, make_tensor(pos))
    else:
        if ni is not None:
            gi = g * mask
        if ns is not None:
            gs = xp.ascontiguousarray(g).reshape(-1)[pos]
    return (gi, gs)


_as_strided_scatter = defop("as_strided_scatter", _scatter_fwd, _scatter_vjp,
                            "AsStridedScatterBackward0", 2, dtype_rule="same")


def as_strided_scatter(input, src, size, stride, storage_offset=None):  # noqa: A002
    """A copy of ``input`` (laid out row-major) with ``src`` written into the strided view
    ``(size, stride, storage_offset)`` of it."""
    for t, arg, pos in ((input, "input", 1), (src, "src", 2)):
        if not isinstance(t, Tensor):
            raise TypeError(f"as_strided_scatter(): argument '{arg}' (position {pos}) must be "
                            f"Tensor, not {type(t).__name__}")
    a = input._data
    size = _ints(size, "size", "as_strided_scatter")
    stride = _ints(stride, "stride", "as_strided_scatter")
    offset = 0 if storage_offset is None else operator.index(storage_offset)
    _check_bounds(size, stride, offset, a.itemsize, a.size, "as_strided_scatter")
    if tuple(src.shape) != size:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size "
                           f"= {list(src.shape)}, slice size = {list(size)}")
    if src._data.dtype != a.dtype:
        raise RuntimeError(f"as_strided_scatter: expected src of dtype "
                           f"{scalar_type_name(a.dtype)}, got "
                           f"{scalar_type_name(src._data.dtype)}")
    return _as_strided_scatter(input, src, size, stride, offset, tuple(a.shape))


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
