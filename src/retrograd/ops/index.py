"""Indexing: ``x[idx]``, ``x[idx] = v``, and gather/scatter along a dimension.

``x[idx]``'s derivative writes the gradient into zeros at ``idx`` (adding where an
advanced index repeats a position); that op's own derivative is indexing again, so
every order works.
"""

from __future__ import annotations

import numpy as _np

from ..backend import namespace
from ..autograd.grad_mode import state
from ._apply import NOTHING, defop
from .saved_checks import check_also
from .shape import track_view


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
        return tuple(i._data if isinstance(i, Tensor) else namespace_of_list(i)
                     if isinstance(i, list) else i for i in index)
    if isinstance(index, list):
        return namespace_of_list(index)
    return index


def namespace_of_list(index):
    import numpy as np

    arr = np.asarray([i._data if hasattr(i, "_data") else i for i in index]) \
        if any(hasattr(i, "_data") for i in index) else np.asarray(index)
    # an empty list is an empty integer index (NumPy would make it float64 and refuse it)
    return arr.astype(np.int64) if arr.size == 0 else arr


def check_index_tensors(index, shape):
    """PyTorch's checks of the arrays in an advanced index that NumPy does not make: an
    integer index of more than 0 dims must be int64 or int32 (uint8 is a mask to PyTorch;
    int16 and int8 raise "must be long, int, byte or bool"), and a bool mask's shape must be
    the shape of the dims it covers (NumPy takes an empty mask of any length, or a (3, 0)
    mask on a (3, 2) tensor, and returns nothing)."""
    items = index if isinstance(index, tuple) else (index,)
    arrays = [i for i in items if hasattr(i, "dtype") and hasattr(i, "ndim")]
    if not arrays:
        return
    for i in arrays:
        if i.ndim and i.dtype.kind in "iu" and i.dtype.name not in ("int64", "int32", "uint8"):
            raise IndexError("tensors used as indices must be long, int, byte or bool "
                             f"tensors (got {i.dtype.name}; convert it with .long())")
    consumed = sum(i.ndim if getattr(i, "dtype", None) is not None and i.dtype.kind == "b"
                   else 0 if i is None or i is Ellipsis or i.__class__ is bool else 1
                   for i in items)
    pos = 0
    for i in items:
        if i is Ellipsis:
            pos += max(len(shape) - consumed, 0)
        elif i is None or i.__class__ is bool:
            continue
        elif hasattr(i, "dtype") and i.dtype.kind == "b":
            covered = tuple(shape[pos:pos + i.ndim])
            if len(covered) == i.ndim and covered != tuple(i.shape):
                k = next(d for d, (m, n) in enumerate(zip(i.shape, covered)) if m != n)
                raise IndexError(f"The shape of the mask {list(i.shape)} at index {k} does "
                                 f"not match the shape of the indexed tensor {list(shape)} at "
                                 f"index {pos + k}")
            pos += i.ndim
        else:
            pos += 1


def _torch_layout(index, ndim):
    """Split a mixed index into a basic part and an advanced part applied after it.

    PyTorch applies ints, slices, None and Ellipsis first (an int removes its dimension)
    and only then the tensor indices; NumPy counts an int as an advanced index, which
    changes where the indexed dimensions land (``x[0, :, [1, 2]]``).  Returns None when
    the index has nothing that NumPy would treat differently.
    """
    items = index if isinstance(index, tuple) else (index,)
    if not any(i is None or i is Ellipsis or i.__class__ in (int, bool) for i in items):
        return None
    consumed = 0
    for i in items:
        if hasattr(i, "dtype"):
            consumed += i.ndim if i.dtype.kind == "b" else 1
        elif isinstance(i, (int, slice)) and i.__class__ is not bool:
            consumed += 1
    basic, advanced = [], []
    for i in items:
        if i is Ellipsis:
            basic.append(Ellipsis)
            advanced.extend([slice(None)] * (ndim - consumed))
        elif i is None:
            basic.append(None)
            advanced.append(slice(None))
        elif i.__class__ is bool:  # a new dimension of 1, kept (True) or emptied (False)
            basic.append(None)
            advanced.append(namespace_of_list([i]))
        elif isinstance(i, int):
            basic.append(i)
        elif isinstance(i, slice):
            basic.append(i)
            advanced.append(slice(None))
        else:
            k = i.ndim if i.dtype.kind == "b" else 1
            basic.extend([slice(None)] * k)
            advanced.append(i)
    return tuple(basic), tuple(advanced)


def _index_backward_fwd(g, index, shape, basic):
    xp = namespace(g)
    out = xp.zeros(shape, dtype=g.dtype)
    if basic:
        out[index] = g
    elif g.size:  # (an empty result may have come from indices out of bounds, see below)
        xp.add.at(out, index, g)
    return out


def _getitem_vjp(node, g, saved):
    index, shape, basic = node.params
    return (_index_backward(g, index, shape, basic),)


def _index_backward_vjp(node, g, saved):
    index, _, basic = node.params
    # the shape is recorded for this getitem's own derivative (third order and up)
    return (getitem_op(g, index, tuple(g.shape), basic),)


_index_backward = defop("index_put", _index_backward_fwd, _index_backward_vjp,
                        "IndexPutBackward0", 1, NOTHING)


def _empty_result_shape(a, index):
    """The shape of ``a[index]`` (advanced) when that result is empty, else None.

    PyTorch's index kernel checks the bounds of the indices as it reads the elements: for an
    empty result (an empty dimension left whole, or sliced empty) nothing is read, and no
    index is out of bounds (fuzz seeds 11028356, 11044563).  NumPy checks them all first."""
    xp = namespace(a)
    sizes, pos, arrays, indexes_empty_dim = list(a.shape), 0, [], False
    for item in index if isinstance(index, tuple) else (index,):
        if not hasattr(item, "dtype"):  # a slice
            pos += 1
        elif item.dtype.kind == "b":
            pos += item.ndim
        else:  # integer indices: a dimension long enough for them, to learn the shape
            arrays.append(item)
            if pos < len(sizes):
                indexes_empty_dim |= sizes[pos] == 0
                if item.size:
                    sizes[pos] = max(sizes[pos], int(xp.abs(item).max()) + 1)
            pos += 1
    try:
        if indexes_empty_dim and 0 not in xp.broadcast_shapes(*(i.shape for i in arrays)):
            return None  # (PyTorch: "index is out of bounds for dimension with size 0")
        out_shape = xp.broadcast_to(xp.empty((), dtype=bool), sizes)[index].shape
    except (IndexError, ValueError):
        return None
    return out_shape if 0 in out_shape else None


def _getitem_fwd(a, index, shape, basic):
    if not basic:
        try:
            return a[index]
        except IndexError:
            empty = _empty_result_shape(a, index)
            if empty is None:
                raise
            return namespace(a).empty(empty, dtype=a.dtype)
    out = a[index]
    if basic and isinstance(out, _np.generic) and isinstance(a, _np.ndarray):
        # an int for every dimension gives NumPy's scalar, a copy; PyTorch's x[i] is a 0-d
        # view, so an in-place change of it must reach x: a trailing ... keeps it a view
        out = a[(*index, Ellipsis) if isinstance(index, tuple) else (index, Ellipsis)]
    return out


getitem_op = defop("getitem", _getitem_fwd, _getitem_vjp, "IndexBackward0", 1, NOTHING)
_select = defop("getitem", _getitem_fwd, _getitem_vjp, "SelectBackward0", 1, NOTHING, view=True)
_slice = defop("getitem", _getitem_fwd, _getitem_vjp, "SliceBackward0", 1, NOTHING, view=True)
_unsq = defop("getitem", _getitem_fwd, _getitem_vjp, "UnsqueezeBackward0", 1, NOTHING, view=True)
_alias = defop("getitem", _getitem_fwd, _getitem_vjp, "AliasBackward0", 1, NOTHING, view=True)


def _keeps_whole(item, size) -> bool:
    """Whether PyTorch skips slice ``item`` of a dimension of ``size`` (applySlice's test on
    the slice as written, before its bounds are clamped: start 0, step 1, stop at or past
    the end), so ``x[None, -3:]`` of 3 elements and ``x[None, 1:1]`` of none still slice."""
    return item.start in (None, 0) and item.step in (None, 1) and (
        item.stop is None or item.stop >= size)


def _basic_op(index, shape):
    """The op whose grad_fn name PyTorch shows for a basic index.

    PyTorch applies the items left to right (an int selects, a slice slices, None
    unsqueezes) and names the result after the last one; inside a tuple a slice that keeps
    a whole dimension is skipped, and an index that does nothing gives an alias.
    """
    if not isinstance(index, tuple):
        if isinstance(index, int):
            return _select
        if isinstance(index, slice):
            return _slice
        return _unsq if index is None else _alias
    op = _alias
    consumed = sum(1 for i in index if isinstance(i, (int, slice)))
    dim = 0
    for item in index:
        if item is Ellipsis:
            dim += len(shape) - consumed
        elif item is None:
            op = _unsq
        elif isinstance(item, int):
            op = _select
            dim += 1
        else:
            size = shape[dim] if dim < len(shape) else 0
            if not _keeps_whole(item, size):
                op = _slice
            dim += 1
    return op


def _basic_steps(index, shape):
    """PyTorch's steps for a basic tuple index: one select / slice / unsqueeze per item that
    changes something (a whole-dimension slice and Ellipsis do not), left to right."""
    consumed = sum(1 for i in index if isinstance(i, (int, slice)))
    cur = list(shape)
    steps, pos = [], 0
    for item in index:
        if item is Ellipsis:
            pos += len(shape) - consumed
        elif item is None:
            steps.append((_unsq, (slice(None),) * pos + (None,)))
            cur.insert(pos, 1)
            pos += 1
        elif isinstance(item, int):
            steps.append((_select, (slice(None),) * pos + (item,)))
            if pos < len(cur):
                cur.pop(pos)
        else:
            size = cur[pos] if pos < len(cur) else 0
            bounds = item.indices(size)
            if not _keeps_whole(item, size):
                steps.append((_slice, (slice(None),) * pos + (item,)))
                if pos < len(cur):
                    cur[pos] = len(range(*bounds))
            pos += 1
    return steps


def index_tensors(index) -> tuple:
    """The tensors of an index that PyTorch's IndexBackward0 / IndexPutBackward0 save (to
    check their versions: see :func:`check_also`); a 0-d integer tensor is an int there."""
    from ..tensor import Tensor

    items = index if isinstance(index, tuple) else (index,)
    return tuple(i for i in items
                 if isinstance(i, Tensor) and (i.ndim or i._data.dtype.kind == "b"))


def getitem(x, index):
    """``x[index]``: basic (ints, slices, None, ...) and advanced (arrays, masks) indexing."""
    given = index
    index = _unwrap_index(index)
    shape = tuple(x.shape)
    basic = _is_basic(index)
    if not hasattr(x, "_data"):
        return x[index]
    if basic:
        for item in index if isinstance(index, tuple) else (index,):
            if item.__class__ is slice and item.step is not None and item.step <= 0:
                raise ValueError("step must be greater than zero" if item.step else
                                 "slice step cannot be zero")  # PyTorch has no reversed views
        try:
            if isinstance(index, tuple) and x._requires_grad and state.enabled:
                steps = _basic_steps(index, shape)
                if len(steps) > 1:  # recorded as PyTorch records it: one node per step
                    out = x
                    for op, step in steps:
                        out = op(out, step, tuple(out.shape), True)
                    return track_view(x, out)
            op = _basic_op(index, shape)
            return track_view(x, op(x, index, shape, True))
        except IndexError as e:
            raise IndexError(f"{e} (indexing a tensor of shape {list(shape)} with {index!r})") \
                from None
    check_index_tensors(index, shape)
    try:
        split = _torch_layout(index, len(shape))
        if split is not None:
            x = getitem(x, split[0])
            index = split[1]
        return check_also(getitem_op(x, index, tuple(x.shape), False), *index_tensors(given))
    except IndexError as e:
        raise IndexError(
            f"{e} (indexing a tensor of shape {list(shape)}); check the index values and shape"
        ) from None


# ----------------------------------------------------------------- gather / scatter along dim


def _gather_fwd(a, idx, dim, in_shape):
    # an open grid rather than take_along_axis: PyTorch lets the index be smaller than the
    # input in the other dimensions too
    if idx.size == 0:  # (any shape: nothing is read)
        return namespace(a).zeros(idx.shape, dtype=a.dtype)
    if a.ndim == 0:  # a 0-d input: every index is 0 (checked), the result has its shape
        return namespace(a).broadcast_to(a, idx.shape).copy()
    if idx.ndim == 0:  # a 0-d index into a 1-d input (PyTorch counts 0-d as 1-d): 0-d out
        return a[idx.reshape(1)].reshape(())
    grid = list(namespace(idx).indices(idx.shape, sparse=True))
    grid[dim] = idx
    return a[tuple(grid)]


def _gather_vjp(node, g, saved):
    idx, dim, in_shape = node.params
    return (scatter_along(g, idx, dim, in_shape),)


_gather = defop("gather", _gather_fwd, _gather_vjp, "GatherBackward0", 1, NOTHING)


def keep_for_check(out, *tensors):
    """Save ``tensors`` on ``out``'s node (if it recorded one) for their version check only,
    as PyTorch's node saves them (GatherBackward0: self and index; MaskedSelectBackward0:
    self and mask): an in-place change of one breaks backward instead of moving the
    gradient, and a second backward finds them freed (fuzz seeds 9804715, 9805926).  The
    derivative reads the arrays kept in the params, which the check guarantees unchanged."""
    from ..tensor import Tensor

    node = getattr(out, "_grad_fn", None)  # (a batched tensor under vmap has none)
    if node is not None:
        saved = tuple(t for t in tensors if isinstance(t, Tensor))
        versions = tuple(t._vc[0] if t._vc is not None else 0 for t in saved)
        node.saved = saved
        node.versions = versions if any(versions) else None
    return out


def gather(x, dim, index, *, sparse_grad=False):
    """Pick values along ``dim``: ``out[i][j] = x[i][index[i][j]]`` for ``dim=1``.

    ``index`` is an int64 tensor with as many dimensions as ``x``, no larger than ``x`` in the
    other dimensions.  The gradient is added back at the picked positions (repeats add up).

    Examples
    --------
    >>> import retrograd as T
    >>> T.gather(T.tensor([[1.0, 2.0], [3.0, 4.0]]), 1, T.tensor([[0, 0], [1, 0]]))
    tensor([[1., 1.],
            [4., 3.]])
    """
    from .shape import _norm_dim

    from ._errors import tensor_arg

    idx = index._data if hasattr(index, "_data") else index
    tensor_arg(idx, "index", 2)
    shape = tuple(x.shape)
    dim = _norm_dim(dim, len(shape))
    if idx.size == 0:
        # PyTorch checks an empty index for nothing (gather's dtype and shape checks are
        # skipped at index.numel() == 0): an empty result shaped as the index
        idx = namespace(idx).zeros(idx.shape, dtype=namespace(idx).int64)
        return keep_for_check(_gather(x, idx, dim, shape), x, index)
    if not shape and idx.size and idx.ndim <= 1 and idx.dtype.kind in "iu":
        # a 0-d input: index 0, any number of times (NumPy has no axis 0 to gather on)
        if idx.max() != 0 or idx.min() != 0:
            bad = int(idx.max() if idx.max() != 0 else idx.min())
            raise RuntimeError(f"gather(): index {bad} is out of bounds for dimension 0 with "
                               "size 1 (a 0-d input)")
        return keep_for_check(_gather(x, idx, 0, ()), x, index)
    if idx.dtype.name not in ("int64", "int32"):
        raise RuntimeError(
            f"gather(): Expected dtype int32/int64 for index, but got {idx.dtype.name}; "
            "convert it with index.long()"
        )
    if idx.ndim != len(shape) and not (len(shape) <= 1 and idx.ndim <= 1):
        raise RuntimeError(
            f"gather(): Index tensor must have the same number of dimensions as input tensor "
            f"(input shape {list(shape)}, index shape {list(idx.shape)})"
        )
    for d, (n, m) in enumerate(zip(idx.shape, shape)):
        if d != dim and n > m:
            raise RuntimeError(
                f"Size does not match at dimension {d} expected index {list(idx.shape)} to be "
                f"smaller than self {list(shape)} apart from dimension {dim}"
            )
    if idx.size and shape:
        lo, hi = int(idx.min()), int(idx.max())
        if lo < 0 or hi >= shape[dim]:
            raise RuntimeError(
                f"index {hi if hi >= shape[dim] else lo} is out of bounds for dimension {dim} "
                f"with size {shape[dim]} (gather on a tensor of shape {list(shape)})"
            )
    return keep_for_check(_gather(x, idx, dim, shape), x, index)


def _scatter_fwd(g, idx, dim, shape):
    xp = namespace(g)
    out = xp.zeros(shape, dtype=g.dtype)
    if not shape:  # (into a 0-d input: every index is 0)
        return xp.asarray(g.sum(), dtype=g.dtype)
    if idx.size == 0:  # (an empty index of any shape: nothing is added)
        return out
    if idx.ndim == 0:  # (a 0-d index into a 1-d input)
        idx, g = idx.reshape(1), g.reshape(1)
    # put_along_axis would drop repeated indices; accumulate instead
    grid = list(xp.indices(idx.shape, sparse=True))
    grid[dim] = idx
    # on flat positions: ufunc.at with one 1-d index is ~8x faster than with a tuple of
    # broadcast indices (bench/indexing.py, gather's backward)
    pos = xp.ravel_multi_index(tuple(grid), shape).reshape(-1)
    xp.add.at(out.reshape(-1), pos, xp.broadcast_to(g, idx.shape).reshape(-1))
    return out


def _scatter_vjp(node, g, saved):
    idx, dim, shape = node.params
    return (_gather(g, idx, dim, tuple(g.shape)),)


_scatter = defop("scatter_add", _scatter_fwd, _scatter_vjp, "ScatterAddBackward0", 1, NOTHING)


def scatter_along(g, idx, dim, shape):
    """Zeros of ``shape`` with ``g`` added at ``idx`` along ``dim`` (gather's derivative)."""
    return _scatter(g, idx, dim, tuple(shape))


# ----------------------------------------------------------------- x[idx] = v


def _is_array(i) -> bool:
    return getattr(i, "dtype", None) is not None and getattr(i, "ndim", None) is not None


def setitem_split(given, index, shape):
    """How PyTorch's ``x[index] = v`` splits an index mixing tensors with basic parts:
    ``(basic, rest)``, where it first takes the view ``x[basic]`` (ints and 0-d integer
    tensors select, None unsqueezes, a slice that is not the whole dim slices) and then
    writes ``view[rest] = v`` with index_put_ (so ``x`` records CopySlices, not
    IndexPutBackward0, and an int counts as a select, not as an advanced index:
    ``x[0, :, idx]`` keeps idx's dim in place).  ``rest`` is None when no tensor is left
    (then ``x[basic] = v`` is a basic write); None when PyTorch takes no view first.
    ``given`` is the index as written (its tensors go on into ``rest``), ``index`` its
    unwrapped form."""
    raw = given if isinstance(given, tuple) else (given,)
    items = index if isinstance(index, tuple) else (index,)
    if len(raw) != len(items) or any(isinstance(i, bool) or not (
            _is_array(i) or i is None or i is Ellipsis or isinstance(i, (int, slice)))
            for i in items):
        return None  # (bool scalars, nested sequences: the plain index_put_ path)
    ndim = len(shape)
    consumed = sum(i.ndim if _is_array(i) and i.dtype.kind == "b" else
                   0 if i is None or i is Ellipsis else 1 for i in items)
    dim, basic, rest, makes_view, tensors_left = 0, [], [], False, False
    for r, i in zip(raw, items):
        if i is Ellipsis:
            basic.append(Ellipsis)
            rest.append(Ellipsis)
            dim += max(ndim - consumed, 0)
        elif i is None:
            basic.append(None)
            rest.append(slice(None))
            makes_view = True
        elif isinstance(i, slice):
            if dim >= ndim:
                return None
            makes_view = makes_view or not _keeps_whole(i, shape[dim])
            basic.append(i)
            rest.append(slice(None))
            dim += 1
        elif isinstance(i, int) or (i.ndim == 0 and i.dtype.kind in "iu"):
            basic.append(int(i))
            makes_view = True
            dim += 1
        else:
            k = i.ndim if i.dtype.kind == "b" else 1
            basic.extend([slice(None)] * k)
            rest.append(r)
            tensors_left = True
            dim += k
    if not makes_view:
        return None
    return tuple(basic), (tuple(rest) if tensors_left else None)


def write_at(target, index, value):
    """``target[index] = value``; as PyTorch's index_put_, an advanced index whose region is
    empty writes nothing and has no index checked (see _empty_result_shape)."""
    try:
        target[index] = value
    except IndexError:
        empty = None if _is_basic(index) else _empty_result_shape(target, index)
        if empty is None:
            raise
        xp = namespace(target)
        xp.broadcast_to(xp.asarray(value), empty)  # (a value that does not fit still fails)


def _setitem_fwd(a, v, index, basic):
    # (a 0-d gradient may arrive as a NumPy scalar, which has no item assignment)
    out = _np.array(a) if isinstance(a, _np.generic) else a.copy()
    write_at(out, index, v)
    return out


def _setitem_vjp(node, g, saved):
    index, basic = node.params
    na, nv = node.next
    ga = gv = None
    if na:
        # exact zeros over the written region (not g[index] * 0: nan where g is inf or nan)
        ga = _setitem_op(g, 0.0, index, basic)
    if nv:
        gv = getitem_op(g, index, tuple(g.shape), basic)
    return (ga, gv)


_setitem_op = defop("setitem", _setitem_fwd, _setitem_vjp, "CopySlices", 2, NOTHING, "same")
# x[tensor_index] = v: PyTorch's index_put_ (IndexPutBackward0); basic indices give CopySlices
_index_put_op = defop("setitem", _setitem_fwd, _setitem_vjp, "IndexPutBackward0", 2, NOTHING,
                      "same")


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

# sparse_grad=True asks PyTorch for a sparse gradient; retrograd has no sparse tensors,
# so the gradient is dense either way (same values)
register(gather, signature="input, dim, index, *, sparse_grad=False")
register(getitem, function=False, method=False, dunders=("__getitem__",))
