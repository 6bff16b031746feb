"""More shape ops: split / chunk / unbind (one node, several outputs), flip, roll, repeat,
tril / triu, index_select, masked_select, and the view aliases movedim, swapaxes, narrow,
unflatten.

``split`` and ``unbind`` return views sharing one multi-output node, as PyTorch's
SplitBackward0 / UnbindBackward0: the engine hands their derivative one gradient per
output (zeros for outputs that got none), which it joins back with ``cat`` / ``stack``.
"""

from __future__ import annotations

from ..autograd.forward_state import fw
from ..autograd.grad_mode import state
from ..backend import namespace
from ..tensor import Tensor, make_tensor
from ._errors import int_arg, tensor_arg
from ._apply import NOTHING, defop, integer_grad, multi_output_class, record_multi
from .index import _index_backward, _slice, getitem, keep_for_check
from .shape import (
    _norm_dim, _shape_arg, _unique_dims, cat, input_meta, permute, reshape, stack, track_view,
    transpose,
)


# ----------------------------------------------------------------- split / chunk / unbind


def _multi_node(name, vjp):
    # multi_view: PyTorch refuses in-place changes of these outputs (see changed_views.py)
    return multi_output_class(name, vjp, NOTHING, multi_view=True)


def _split_vjp(node, grads, saved):
    return (cat(list(grads), node.params[0]),)


def _unbind_vjp(node, grads, saved):
    return (stack(list(grads), node.params[0]),)


_SplitBackward0 = _multi_node("SplitBackward0", _split_vjp)
_SplitWithSizesBackward0 = _multi_node("SplitWithSizesBackward0", _split_vjp)
_UnbindBackward0 = _multi_node("UnbindBackward0", _unbind_vjp)


def _views_of(x, arrays, node_cls, params):
    """Tensors for ``arrays`` (views into ``x``), recorded as the outputs of one node."""
    if x._requires_grad and state.enabled:
        # PyTorch's multi-output views refuse an integer or bool tensor that requires grad
        # (split/chunk/unbind: 'Autograd not support dtype', seed 12652648)
        integer_grad(node_cls.__name__, (x,), x._data)
    outs = [make_tensor(a) for a in arrays]
    if x._vc is None:
        x._vc = [0]
    for o in outs:
        o._vc = x._vc
    if x._requires_grad and state.enabled:
        if x._data.dtype.kind in "iub":
            # an integer or bool tensor requiring grad (a write made it): PyTorch's split/
            # unbind refuse to record, as its other views (seed 13306688)
            integer_grad(node_cls.__name__, (x,), x._data)
        record_multi(node_cls, x, outs, params)
    if fw.active:  # forward AD: the tangents (ops/_jvp.py)
        fw.propagate_multi(node_cls, x, outs, params)
    for o in outs:
        track_view(x, o, "multi")
    return tuple(outs)


def _cut(x, sizes, dim):
    index = [slice(None)] * x.ndim
    start, arrays = 0, []
    for s in sizes:
        index[dim] = slice(start, start + s)
        arrays.append(x._data[tuple(index)])
        start += s
    return arrays


def split(x, split_size_or_sections, dim=0):
    """Views of ``x`` cut along ``dim``: pieces of ``split_size`` (the last may be smaller),
    or of the listed sizes.

    Examples
    --------
    >>> import retrograd as T
    >>> [p.shape[1] for p in T.zeros(2, 5).split(2, dim=1)]
    [2, 2, 1]
    """
    if x.ndim == 0:
        raise RuntimeError("split(): split expects at least a 1-dimensional tensor (got a 0-d "
                           "tensor); unsqueeze it first")
    dim = _norm_dim(dim, x.ndim)
    n = x.shape[dim]
    if not hasattr(split_size_or_sections, "__len__"):
        size = int_arg(split_size_or_sections, "split_size")
        if size <= 0 and not (size == 0 and n == 0):
            raise RuntimeError(f"split expects split_size be non-negative, but got {size}")
        sizes = [min(size, n - i) for i in range(0, n, size)] if n else [0]
        cls = _SplitBackward0
    else:
        sizes = [int_arg(s, "split_sizes") for s in split_size_or_sections]
        if any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative "
                               f"entries, but got split_sizes={sizes}")
        if sum(sizes) != n:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's "
                f"size at dimension {dim}), but got split_sizes={sizes}"
            )
        cls = _SplitWithSizesBackward0
    return _views_of(x, _cut(x, sizes, dim), cls, (dim,))


def chunk(x, chunks, dim=0):
    """Split into ``chunks`` views of (nearly) equal size along ``dim``."""
    if x.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor (got a 0-d tensor); "
                           "unsqueeze it first")
    chunks = int_arg(chunks, "chunks")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = x.shape[_norm_dim(dim, x.ndim)]
    # an empty dimension gives `chunks` empty pieces, as PyTorch
    return split(x, max(-(-n // chunks), 1), dim) if n else split(x, [0] * chunks, dim)


def unbind(x, dim=0):
    """The slices of ``x`` along ``dim``, as views without that dimension."""
    if x.ndim == 0:
        raise IndexError(f"unbind(): Dimension specified as {dim} but tensor has no dimensions "
                         "(a 0-d tensor has nothing to unbind)")
    dim = _norm_dim(dim, x.ndim)
    arrays = [x._data[(slice(None),) * dim + (i, Ellipsis)] for i in range(x.shape[dim])]
    return _views_of(x, arrays, _UnbindBackward0, (dim,))


# ----------------------------------------------------------------- flip / roll / repeat


def _flip_fwd(a, dims):
    return _copy_keeping_layout(namespace(a).flip(a, axis=dims))


def _copy_keeping_layout(a):
    """A copy in ``a``'s memory order, as PyTorch's flip (TensorIterator's output takes a
    dense input's stride order: flip of a transposed tensor is transposed, seed 17036254).
    An expanded (stride-0) input has no order there: C order, as PyTorch."""
    if any(st == 0 and n > 1 for st, n in zip(a.strides, a.shape)):
        return a.copy()
    return a.copy(order="K")


flip_op = defop("flip", _flip_fwd, lambda node, g, saved: (flip_op(g, node.params[0]),),
                "FlipBackward0", 1, NOTHING)


def flip(x, *dims, **kwargs):
    """Reverse the order along ``dims`` (a copy, as PyTorch).

    Examples
    --------
    >>> import retrograd as T
    >>> T.tensor([1.0, 2.0, 3.0]).flip(0)
    tensor([3., 2., 1.])
    """
    if not dims and "dims" not in kwargs:
        raise TypeError('flip() missing 1 required positional arguments: "dims"')
    dims = _shape_arg(dims or (kwargs.pop("dims"),))
    dims = _unique_dims(dims, x.ndim)
    return flip_op(x, dims if x.ndim else ())  # (a 0-d tensor: a copy, NumPy has no axis 0)


def _roll_fwd(a, shifts, dims):
    xp = namespace(a)
    if not a.flags.c_contiguous:  # PyTorch's roll writes a row-major result, whatever the
        a = xp.ascontiguousarray(a)  # input's layout (NumPy's follows it)
    if dims is None:
        return xp.roll(a.reshape(-1), shifts).reshape(a.shape)
    return xp.roll(a, shifts, axis=dims)


def _roll_vjp(node, g, saved):
    shifts, dims = node.params
    return (roll_op(g, tuple(-s for s in shifts) if dims is not None else -shifts, dims),)


roll_op = defop("roll", _roll_fwd, _roll_vjp, "RollBackward0", 1, NOTHING)


def roll(x, shifts, dims=None):
    """Shift elements cyclically along ``dims`` (the flattened tensor without ``dims``)."""
    if dims is None:
        return roll_op(x, int(shifts) if not isinstance(shifts, tuple) else shifts[0], None)
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if x._data.size == 0 and x.ndim and len(shifts) == len(dims):
        return roll_op(x, shifts, (0,) * len(dims))  # PyTorch checks no dim of an empty tensor
    if x.ndim == 0:
        raise IndexError(f"roll(): Dimension specified as {dims[0]} but tensor has no "
                         "dimensions (roll a 0-d tensor without dims=)")
    if len(shifts) != len(dims):
        raise RuntimeError(f"roll(): shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims: {len(dims)}")
    return roll_op(x, shifts, tuple(_norm_dim(d, x.ndim) for d in dims))


def _repeat_fwd(a, reps, in_shape):
    xp = namespace(a)
    lead = len(reps) - a.ndim
    return xp.tile(a.reshape((1,) * lead + a.shape), reps)


def _repeat_vjp(node, g, saved):
    # each input element was copied once per tile: sum the tiles back
    reps, in_shape = node.params
    lead = len(reps) - len(in_shape)
    full = (1,) * lead + tuple(in_shape)
    split_shape = []
    for r, s in zip(reps, full):
        split_shape += [r, s]
    from .reduce import _sum_dim

    g = reshape(g, tuple(split_shape)) if hasattr(g, "_data") else g.reshape(split_shape)
    axes = tuple(range(0, 2 * len(reps), 2))
    summed = _sum_dim(g, axes, False, tuple(split_shape))
    return (reshape(summed, tuple(in_shape)) if hasattr(summed, "_data") else
            summed.reshape(in_shape),)


_repeat = defop("repeat", _repeat_fwd, _repeat_vjp, "RepeatBackward0", 1, NOTHING)


def repeat(x, *sizes):
    """Tile ``x``: ``sizes[i]`` copies along dimension ``i`` (leading new dimensions too).

    Examples
    --------
    >>> import retrograd as T
    >>> T.tensor([1.0, 2.0]).repeat(2, 2)
    tensor([[1., 2., 1., 2.],
            [1., 2., 1., 2.]])
    """
    if not sizes:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    reps = _shape_arg(sizes)
    if any(r < 0 for r in reps):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(reps)}: "
                           f"{list(reps)} (repeat counts must be >= 0)")
    if len(reps) < x.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions "
            f"of tensor (repeat {list(reps)} for a tensor of shape {list(x.shape)})"
        )
    return _repeat(x, reps, tuple(x.shape))


def tile(x, *dims):
    """Like repeat, but with fewer ``dims`` than dimensions the leading ones are kept."""
    if not dims:
        raise TypeError('tile() missing 1 required positional arguments: "dims"')
    dims = _shape_arg(dims)  # tile(2, 3), tile((2, 3)) or tile([2, 3])
    # (one tuple argument: for a 0-d tensor and tile(()) it is empty, which repeat takes)
    return repeat(x, (1,) * (x.ndim - len(dims)) + tuple(dims))


# ----------------------------------------------------------------- triangles


def _tri_fwd(a, diagonal, upper):
    xp = namespace(a)
    if not a.flags.c_contiguous:  # PyTorch's tril/triu write a row-major result, whatever
        a = xp.ascontiguousarray(a)  # the input's layout (NumPy's where follows it)
    return xp.triu(a, diagonal) if upper else xp.tril(a, diagonal)


def _tri_vjp(node, g, saved):
    diagonal, upper = node.params
    return ((_triu if upper else _tril)(g, diagonal, upper),)


_tril = defop("tril", _tri_fwd, _tri_vjp, "TrilBackward0", 1, NOTHING)
_triu = defop("triu", _tri_fwd, _tri_vjp, "TriuBackward0", 1, NOTHING)


def _check_matrix(x, name):
    if x.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions (got shape "
                           f"{list(x.shape)})")


def tril(x, diagonal=0):
    """The lower triangle (below and on ``diagonal``) of the last two dimensions."""
    _check_matrix(x, "tril")
    return _tril(x, diagonal, False)


def triu(x, diagonal=0):
    """The upper triangle (above and on ``diagonal``) of the last two dimensions."""
    _check_matrix(x, "triu")
    return _triu(x, diagonal, True)


# ----------------------------------------------------------------- selection


def _select_fwd(a, index, shape):
    # contiguous, as PyTorch's result: NumPy lays out a[:, idx] with the indexed dimension
    # outermost, so view() of it raised where PyTorch's succeeds (fuzz seed 9804175)
    out = a[index]
    return out if out.flags.c_contiguous else out.copy()  # (copy's order is C)


def _select_vjp(node, g, saved):
    index, shape = node.params
    return (_index_backward(g, index, shape, False),)  # repeated indices add up


_index_select = defop("index_select", _select_fwd, _select_vjp, "IndexSelectBackward0", 1,
                      NOTHING)
_masked_select = defop("masked_select", _select_fwd, _select_vjp, "MaskedSelectBackward0", 1,
                       NOTHING)


def index_select(x, dim, index):
    """The entries at ``index`` (1-D integers) along ``dim``.

    Examples
    --------
    >>> import retrograd as T
    >>> T.tensor([[1.0, 2.0], [3.0, 4.0]]).index_select(1, T.tensor([1, 1]))
    tensor([[2., 2.],
            [4., 4.]])
    """
    idx = index._data if isinstance(index, Tensor) else index
    tensor_arg(idx, "index", 2)
    if idx.ndim > 1:
        raise IndexError(f"index_select(): Index is supposed to be a vector, got shape "
                         f"{list(idx.shape)}")
    if idx.dtype.name not in ("int64", "int32"):
        raise RuntimeError(f"index_select(): Expected dtype int32 or int64 for index (got "
                           f"{idx.dtype}); convert it with index.long()")
    dim = _norm_dim(dim, x.ndim)
    n = x.shape[dim] if x.ndim else 1
    if not x.ndim:  # a 0-d tensor: index 0 selects it, as PyTorch (a 0-d result)
        if idx.size != 1:
            raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                               f"{idx.size} value(s)")
        if int(idx.reshape(-1)[0]) != 0:
            raise IndexError(f"index_select(): index out of range in self (indices "
                             f"{idx.tolist()} for a 0-d tensor, whose only index is 0)")
        return _index_select(x, (), ())
    if x.ndim > 1 and idx.size and not x._data.size:
        # PyTorch's kernel checks an empty input's indices apart, as RuntimeErrors
        if n == 0:
            raise RuntimeError(f"index_select(): self indexing axis dim should be positive "
                               f"(dimension {dim} of the input, shape {list(x.shape)}, is "
                               f"empty: no index {idx.tolist()} can select from it)")
        bad = idx[(idx < 0) | (idx >= n)]
        if bad.size:
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={int(bad[0])} "
                               f"axis_dim={n} (index_select() along dimension {dim} of an "
                               f"input of shape {list(x.shape)}; indices go from 0 to {n - 1})")
    if idx.size and (idx.min() < 0 or idx.max() >= n):  # negative indices too, as PyTorch
        # (PyTorch's class depends on its kernel: RuntimeError along dim 1, else IndexError)
        raise (RuntimeError if dim == 1 else IndexError)(
            f"index_select(): index out of range in self: INDICES element is out of DATA bounds "
            f"(along dimension {dim} of size {n}, indices {idx.tolist()})")
    return keep_for_check(_index_select(x, (slice(None),) * dim + (idx.reshape(-1),),
                                        tuple(x.shape)), index)


def masked_select(x, mask):
    """The entries of ``x`` where the bool ``mask`` (broadcast together) is True, as 1-D."""
    m = mask._data if isinstance(mask, Tensor) else mask
    tensor_arg(m, "mask")
    if m.dtype.kind != "b":
        raise RuntimeError(f"masked_select: expected BoolTensor for mask (got {m.dtype}); "
                           "compare first, e.g. x.masked_select(m > 0)")
    xp = namespace(m)
    try:
        shape = xp.broadcast_shapes(tuple(x.shape), m.shape)
    except ValueError:
        from ._errors import broadcast_message

        raise RuntimeError(f"masked_select(): {broadcast_message([x.shape, m.shape])} (input "
                           f"shape {list(x.shape)}, mask shape {list(m.shape)})") from None
    given = x
    if tuple(x.shape) != shape:
        from .shape import expand

        x = expand(x, *shape)
    return keep_for_check(_masked_select(x, xp.broadcast_to(m, shape), shape), given, mask)


# ----------------------------------------------------------------- diagonals


def _diag_view(a, offset, dim1, dim2, in_shape=None):
    """A writable strided view of the diagonal of ``a`` (NumPy's own is read-only): the
    other dimensions first, the diagonal last, as PyTorch's diagonal.  ``in_shape``
    (``a``'s shape, recorded by diagonal and diag) is for the derivative only."""
    xp = namespace(a)
    index = [slice(None)] * a.ndim
    if offset >= 0:
        index[dim2] = slice(offset, None)
    else:
        index[dim1] = slice(-offset, None)
    start = a[tuple(index)]
    n = max(min(start.shape[dim1], start.shape[dim2]), 0)
    keep = [d for d in range(a.ndim) if d not in (dim1, dim2)]
    shape = tuple(a.shape[d] for d in keep) + (n,)
    strides = tuple(start.strides[d] for d in keep) + (start.strides[dim1] + start.strides[dim2],)
    return xp.lib.stride_tricks.as_strided(start, shape, strides)


def _diag_embed_fwd(g, in_shape, offset, dim1, dim2):
    out = namespace(g).zeros(in_shape, dtype=g.dtype)
    _diag_view(out, offset, dim1, dim2)[...] = g
    return out


def _diagonal_vjp(node, g, saved):
    # the input's shape when the op ran (PyTorch's self_sym_sizes), not its producer's
    # recorded output shape: an in-place unsqueeze_/t_ under no_grad may have changed it
    # since, and the engine then sums the gradient to that shape or refuses it, as
    # PyTorch's (fuzz seed 19735467)
    offset, dim1, dim2, in_shape = node.params
    return (_diag_embed(g, in_shape, offset, dim1, dim2),)


def _diag_embed_vjp(node, g, saved):
    _, offset, dim1, dim2 = node.params
    return (_diagonal(g, offset, dim1, dim2, tuple(g.shape)),)


_diagonal = defop("diagonal", _diag_view, _diagonal_vjp, "DiagonalBackward0", 1, NOTHING,
                  view=True)
_diag_embed = defop("diag_embed", _diag_embed_fwd, _diag_embed_vjp, "DiagEmbedBackward0", 1,
                    NOTHING)


def diagonal(x, offset=0, dim1=0, dim2=1):
    """The diagonal (``offset`` above or below the main one) of the ``dim1``, ``dim2`` planes,
    as a view whose last dimension runs along it."""
    d1, d2 = _norm_dim(dim1, x.ndim), _norm_dim(dim2, x.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return track_view(x, _diagonal(x, offset, d1, d2, tuple(x.shape)))


def diag_embed(x, offset=0, dim1=-2, dim2=-1):
    """Matrices with the last dimension of ``x`` on their ``offset`` diagonal."""
    d1, d2 = _norm_dim(dim1, x.ndim + 1), _norm_dim(dim2, x.ndim + 1)  # dims of the result
    if d1 == d2:
        raise RuntimeError(f"diag_embed(): diagonal dimensions cannot be identical {dim1}, "
                           f"{dim2}")
    n = x.shape[-1] + abs(offset)
    shape = list(x.shape[:-1])  # the other dimensions keep their order around dim1, dim2
    for d in sorted((d1, d2)):
        shape.insert(d, n)
    return _diag_embed(x, tuple(shape), offset, d1, d2)


def _diag_copy_fwd(a, offset, dim1, dim2, in_shape):
    return _diag_view(a, offset, dim1, dim2).copy()


_diag_copy = defop("diag", _diag_copy_fwd, _diagonal_vjp, "DiagonalBackward0_copy", 1, NOTHING)


def diag(x, diagonal=0):
    """A 1-D tensor made the ``diagonal`` of a square matrix, or a matrix's diagonal (a copy)."""
    if x.ndim == 1:
        n = x.shape[0] + abs(diagonal)
        return _diag_embed(x, (n, n), diagonal, 0, 1)
    if x.ndim != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {x.ndim}D")
    return _diag_copy(x, diagonal, 0, 1, tuple(x.shape))


def _trace_vjp(node, g, saved):
    (n, m), dtype = node.params[0], input_meta(node)[1]  # (the shape when trace ran)
    xp = namespace(g._data if hasattr(g, "_data") else g)
    # g on the diagonal, exact zeros elsewhere (PyTorch's; g * eye is nan off the diagonal
    # where g is inf or nan)
    from .pointwise import grad_where

    return (grad_where(xp.eye(n, m, dtype=bool), g * xp.ones((n, m), dtype=dtype)),)


def _trace_fwd(a, in_shape):
    # integers sum to int64, as PyTorch's (NumPy: uint8 -> uint64, which no tensor holds)
    return namespace(a).trace(a, dtype="int64" if a.dtype.kind in "iu" else None)


trace_op = defop("trace", _trace_fwd, _trace_vjp, "TraceBackward0", 1, NOTHING)


def trace(x):
    """The sum of the main diagonal of a matrix."""
    if x._data.dtype.kind == "b":  # (PyTorch checks the dtype first)
        raise NotImplementedError("\"trace\" not implemented for 'Bool'; convert first, e.g. "
                                  "x.int().trace()")
    if x.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.ndim}")
    return trace_op(x, tuple(x.shape))


# ----------------------------------------------------------------- view aliases


def movedim(x, source, destination):
    """Move dimension(s) ``source`` to ``destination`` (a permute)."""
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
            f"contain the same number of dims as destination ({list(dst)} dims)"
        )
    n = x.ndim
    src = [_norm_dim(d, n) for d in src]
    dst = [_norm_dim(d, n) for d in dst]
    for which, dims, given in (("source", src, source), ("destination", dst, destination)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{which}` ({list(dims)}, given as "
                               f"{given}); name each dimension once")
    if n == 0:  # dims 0 and -1 of a 0-d tensor: nothing moves
        return permute(x, ())
    order = [d for d in range(n) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(x, *order)


def swapaxes(x, axis0, axis1):
    """``transpose(axis0, axis1)``."""
    return transpose(x, axis0, axis1)


def narrow(x, dim, start, length):
    """The view ``x[..., start:start + length, ...]`` along ``dim``."""
    if x.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    start, length = int_arg(start, "start"), int_arg(length, "length")
    if length < 0:
        raise RuntimeError(f"narrow(): length must be non-negative (got {length}).")
    dim = _norm_dim(dim, x.ndim)
    n = x.shape[dim]
    if not -n <= start <= n:
        raise IndexError(f"narrow(): start out of range (expected to be in range of [{-n}, {n}], "
                         f"but got {start}) for dimension {dim} of size {n}")
    start = start + n if start < 0 else start
    if start + length > n:
        raise RuntimeError(f"narrow(): start ({start}) + length ({length}) exceeds dimension "
                           f"size ({n}).")
    index = (slice(None),) * dim + (slice(start, start + length),)
    if not isinstance(x, Tensor):
        return getitem(x, index)
    # always a slice (SliceBackward0), as PyTorch's narrow, even of the whole dimension
    return track_view(x, _slice(x, index, tuple(x.shape), True))


def select(x, dim, index):
    """The view ``x[..., index, ...]`` along ``dim``, without that dimension
    (SelectBackward0)."""
    if x.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor; index a tensor with at "
                         "least one dimension (x.reshape(1).select(0, 0) for a 0-d x)")
    dim = _norm_dim(dim, x.ndim)
    n = x.shape[dim]
    index = int_arg(index, "index")
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(x.shape)} at dimension {dim}")
    return getitem(x, (slice(None),) * dim + (index,))


def unflatten(x, dim, sizes):
    """Split dimension ``dim`` into ``sizes`` (a view)."""
    if not hasattr(sizes, "__len__"):
        raise TypeError(f"unflatten(): argument 'sizes' (position 2) must be tuple of ints, not "
                        f"{type(sizes).__name__}; e.g. unflatten({dim}, ({sizes}, -1))")
    if x.ndim == 0:
        raise RuntimeError(f"unflatten(): Dimension specified as {dim} but tensor has no "
                           "dimensions")
    dim = _norm_dim(dim, x.ndim)
    shape = tuple(x.shape)
    sizes = _shape_arg((sizes,))
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    numel = 1
    for s in sizes:
        numel *= s
    if -1 not in sizes and numel != shape[dim]:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {dim} ({shape[dim]}) in the input tensor (shape "
                           f"{list(shape)})")
    from .shape import view

    return view(x, shape[:dim] + tuple(sizes) + shape[dim + 1:])


__all__ = ["split", "chunk", "unbind", "flip", "roll", "repeat", "tile", "tril", "triu",
           "index_select", "masked_select", "movedim", "swapaxes", "narrow", "select", "unflatten",
           "diagonal", "diag_embed", "diag", "trace"]


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

_ALIASES = {"swapaxes": ("swapdims",), "movedim": ("moveaxis",)}
# PyTorch's keyword names and out= for the ops that take out= in PyTorch
_SIGNATURES = {"tril": "input, diagonal=0", "triu": "input, diagonal=0",
               "index_select": "input, dim, index", "masked_select": "input, mask"}
for _name in __all__:
    register(globals()[_name], _name, aliases=_ALIASES.get(_name, ()),
             function=_name != "repeat",  # torch.repeat does not exist: a method only
             signature=_SIGNATURES.get(_name))
