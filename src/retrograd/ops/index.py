"""Indexing: ``x[idx]``, ``x[idx] = v``, and gather/scatter along a dimension.

``x[idx]``'s derivative writes the gradient into zeros at ``idx`` (adding where an
advanced index repeats a position); that op's own derivative is indexing again, so
every order works.
"""

from __future__ import annotations

from ..backend import namespace
from ._apply import NOTHING, apply_op, defop


def _is_basic(index) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return all(
        i is None or i is Ellipsis or isinstance(i, (int, slice)) and not isinstance(i, bool)
        for i in items
    )


def _unwrap_index(index):
    """Tensors inside an index become their arrays (indices are never differentiated)."""
    from ..tensor import Tensor

    if isinstance(index, Tensor):
        return index._data
    if isinstance(index, tuple):
        return tuple(i._data if isinstance(i, Tensor) else i for i in index)
    if isinstance(index, list):
        return namespace_of_list(index)
    return index


def namespace_of_list(index):
    import numpy as np

    return np.asarray([i._data if hasattr(i, "_data") else i for i in index]) \
        if any(hasattr(i, "_data") for i in index) else np.asarray(index)


def _index_backward_fwd(g, index, shape, basic):
    xp = namespace(g)
    out = xp.zeros(shape, dtype=g.dtype)
    if basic:
        out[index] = g
    else:
        xp.add.at(out, index, g)
    return out


def _getitem_vjp(node, g, saved):
    index, shape, basic = node.params
    return (_index_backward(g, index, shape, basic),)


def _index_backward_vjp(node, g, saved):
    index = node.params[0]
    return (getitem_op(g, index, None, None),)


_index_backward = defop("index_put", _index_backward_fwd, _index_backward_vjp,
                        "IndexPutBackward0", 1, NOTHING)


def _getitem_fwd(a, index, shape, basic):
    return a[index]


getitem_op = defop("getitem", _getitem_fwd, _getitem_vjp, "IndexBackward0", 1, NOTHING)
_select = defop("getitem", _getitem_fwd, _getitem_vjp, "SelectBackward0", 1, NOTHING, view=True)
_slice = defop("getitem", _getitem_fwd, _getitem_vjp, "SliceBackward0", 1, NOTHING, view=True)
_unsq = defop("getitem", _getitem_fwd, _getitem_vjp, "UnsqueezeBackward0", 1, NOTHING, view=True)
_alias = defop("getitem", _getitem_fwd, _getitem_vjp, "AliasBackward0", 1, NOTHING, view=True)


def getitem(x, index):
    """``x[index]``: basic (ints, slices, None, ...) and advanced (arrays, masks) indexing."""
    index = _unwrap_index(index)
    shape = tuple(x.shape)
    basic = _is_basic(index)
    if not hasattr(x, "_data"):
        return x[index]
    if basic:
        items = index if isinstance(index, tuple) else (index,)
        if any(isinstance(i, int) for i in items):
            op = _select
        elif any(isinstance(i, slice) for i in items):
            op = _slice
        elif any(i is None for i in items):
            op = _unsq
        else:
            op = _alias
        try:
            return op(x, index, shape, True)
        except IndexError as e:
            raise IndexError(f"{e} (indexing a tensor of shape {list(shape)} with {index!r})") \
                from None
    try:
        return getitem_op(x, index, shape, False)
    except IndexError as e:
        raise IndexError(
            f"{e} (indexing a tensor of shape {list(shape)}); check the index values and shape"
        ) from None


# ----------------------------------------------------------------- gather / scatter along dim


def _gather_fwd(a, idx, dim, in_shape):
    return namespace(a).take_along_axis(a, idx, axis=dim)


def _gather_vjp(node, g, saved):
    idx, dim, in_shape = node.params
    return (scatter_along(g, idx, dim, in_shape),)


_gather = defop("gather", _gather_fwd, _gather_vjp, "GatherBackward0", 1, NOTHING)


def gather(x, dim, index):
    """``out[i][j] = x[i][index[i][j]]`` for dim=1 (PyTorch's gather)."""
    idx = index._data if hasattr(index, "_data") else index
    dim = dim % max(x.ndim, 1)
    return _gather(x, idx, dim, tuple(x.shape))


def take_along(x, idx, dim):
    return _gather(x, idx, dim, tuple(x.shape))


def _scatter_fwd(g, idx, dim, shape):
    xp = namespace(g)
    out = xp.zeros(shape, dtype=g.dtype)
    # put_along_axis would drop repeated indices; accumulate instead
    grid = list(xp.indices(idx.shape, sparse=True))
    grid[dim] = idx
    xp.add.at(out, tuple(grid), g)
    return out


def _scatter_vjp(node, g, saved):
    idx, dim, shape = node.params
    return (_gather(g, idx, dim, tuple(g.shape)),)


_scatter = defop("scatter_add", _scatter_fwd, _scatter_vjp, "ScatterAddBackward0", 1, NOTHING)


def scatter_along(g, idx, dim, shape):
    """Zeros of ``shape`` with ``g`` added at ``idx`` along ``dim`` (gather's derivative)."""
    return _scatter(g, idx, dim, tuple(shape))


# ----------------------------------------------------------------- x[idx] = v


def _setitem_fwd(a, v, index, basic):
    out = a.copy()
    out[index] = v
    return out


def _setitem_vjp(node, g, saved):
    index, basic = node.params
    na, nv = node.next
    ga = gv = None
    if na:
        zero = getitem_op(g, index, None, None) * 0
        ga = _setitem_op(g, zero, index, basic)
    if nv:
        gv = getitem_op(g, index, None, None)
    return (ga, gv)


_setitem_op = defop("setitem", _setitem_fwd, _setitem_vjp, "CopySlices", 2, NOTHING, "same")


def setitem(x, index, value):
    """``x[index] = value`` in place; recorded (CopySlices) when a gradient is needed."""
    from ..autograd.grad_mode import state
    from ..tensor import Tensor

    index = _unwrap_index(index)
    basic = _is_basic(index)
    v_is_t = isinstance(value, Tensor)
    wants = state.enabled and (x._requires_grad or (v_is_t and value._requires_grad))
    if wants and x._grad_fn is None and x._requires_grad:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation "
            f"(x[{index!r}] = ... on a leaf of shape {list(x.shape)}). Wrap it in "
            "`with retrograd.no_grad():` if this is an initialisation, or clone() it first."
        )
    vdata = value._data if v_is_t else value
    if wants:
        from .inplace import shadow_of

        new = apply_op(_setitem_op.op, (shadow_of(x, False), value), (index, basic))
        x._data[index] = new._data[index]
        x._grad_fn = new._grad_fn
        x._requires_grad = True
        x._nr = 0
    else:
        try:
            x._data[index] = vdata
        except (ValueError, IndexError) as e:
            # PyTorch raises RuntimeError("shape mismatch: ...") for a value that can't broadcast
            if "broadcast" in str(e):
                raise RuntimeError(f"shape mismatch: {e} (assigning into a tensor of shape "
                                   f"{list(x.shape)})") from None
            raise type(e)(f"{e} (assigning into a tensor of shape {list(x.shape)})") from None
    x._bump_version()
