"""Writing into positions: scatter / scatter_add / scatter_reduce, index_add / index_copy /
index_fill / index_reduce (and, in ops/take_put.py on the same primitives, index_put, take,
put, masked_scatter and the *_scatter ops).

Every op here turns its index arguments into one array of *flat positions* ``p`` into
``self`` (C order, negative indices already wrapped, bounds already checked), shaped like
the values written there.  Three position primitives then carry every derivative:

* ``_gat(x, p)``        -- ``x.reshape(-1)[p]``                (derivative: ``_add0``)
* ``_add0(g, p, shape)`` -- zeros of ``shape`` with ``g`` added at ``p`` (repeats add up;
  derivative: ``_gat``)
* ``_zero_at(x, p)``    -- ``x`` with zeros at ``p``            (derivative: itself)

Each public op's derivative is written with them and retrograd's pointwise ops, so it is
recorded under ``create_graph=True`` and every order works.  The conventions where positions
repeat follow PyTorch's derivatives.yaml / FunctionsManual.cpp:

* overwrite (scatter, index_copy, index_put, put): the written values' gradient is ``g``
  gathered at their positions (every duplicate gets it), ``self`` gets ``g`` zeroed there;
* accumulate (scatter_add, index_add, index_put/put with accumulate=True): ``self`` gets
  ``g``, each source value gets ``g`` at its position;
* amax / amin: the gradient is divided evenly among all values equal to the result (ties,
  ``self`` included where it takes part);
* mean: divided by the count at that position (``self`` counting one with include_self);
* prod: the product of the others, computed without dividing by a zero.
"""

from __future__ import annotations

import warnings

import numpy as _np

from ..backend import namespace
from ..tensor import Tensor
from ._apply import NOTHING, INPUTS, OUTPUT, defop
from ._errors import broadcast_message, scalar_type_name, tensor_arg
from .saved_checks import check_also
from .cast_inside import take_source
from .inplace import inplace
from .selection import _where
from .shape import _norm_dim


def _raw(x):
    return x._data if isinstance(x, Tensor) else x


# ----------------------------------------------------------------- the position primitives


def _gat_fwd(a, p, shape):
    return a.reshape(-1)[p]


def _gat_vjp(node, g, saved):
    p, shape = node.params
    return (_add0(g, p, shape),)


def _add0_fwd(g, p, shape):
    xp = namespace(g)
    n = 1
    for s in shape:
        n *= s
    out = xp.zeros(n, dtype=g.dtype)
    if p.size:
        g = xp.broadcast_to(g, p.shape)
        xp.add.at(out, p.reshape(-1), g.reshape(-1))
    return out.reshape(shape)


def _add0_vjp(node, g, saved):
    p, shape = node.params
    return (_gat(g, p, tuple(g.shape)),)


def _zero_at_fwd(a, p):
    out = a.copy() if a.ndim else namespace(a).array(a)
    out.reshape(-1)[p] = 0
    return out


def _zero_at_vjp(node, g, saved):
    return (_zero_at(g, node.params[0]),)


_gat = defop("take", _gat_fwd, _gat_vjp, "TakeBackward0", 1, NOTHING)
_add0 = defop("put", _add0_fwd, _add0_vjp, "PutBackward0", 1, NOTHING)
_zero_at = defop("scatter", _zero_at_fwd, _zero_at_vjp, "ScatterBackward1", 1, NOTHING)


def _src_take(s, q):
    """The part of the source that is written (``q``: its flat positions; None: all)."""
    return s if q is None else s.reshape(-1)[q]


def _src_back(gs, q, src_shape):
    """The gradient of the part written, back at its place in the whole source (a source
    that was broadcast is summed back by the engine; put's source of another shape but the
    same size is reshaped)."""
    if q is None:
        if tuple(gs.shape) != tuple(src_shape) and _size(gs.shape) == _size(src_shape):
            return gs.reshape(src_shape)
        return gs
    return _add0(gs, q, src_shape)


def _wants_grad(t):
    """Whether PyTorch's node computes (so saves what it needs for) ``t``'s gradient."""
    return isinstance(t, Tensor) and t._requires_grad


def _size(shape):
    n = 1
    for s in shape:
        n *= s
    return n


# ----------------------------------------------------------------- the op kinds


def _overwrite_fwd(a, s, p, q, src_shape, full=None):
    if full is not None and tuple(a.shape) != full:
        a = namespace(a).broadcast_to(a, full)
    out = a.copy() if a.ndim else namespace(a).array(a)
    out.reshape(-1)[p] = _src_take(s, q)
    return out


def _strides_kept_fwd(a, s, p, q, src_shape):
    """slice/select/diagonal_scatter: PyTorch's result is ``clone_preserve_strides(self)``
    written into, so it keeps ``self``'s strides (a transposed or diagonal view's too: a
    later contiguous() copies, seed 20093986); a ``self`` that overlaps itself (expanded) is
    cloned instead, dense in its dims' order (TensorIterator's sort for one operand)."""
    from .iter_layout import _c_strides, result_strides, with_strides

    out = _overwrite_fwd(a, s, p, q, src_shape)
    if a.ndim == 0 or a.size == 0 or any(st < 0 for st in a.strides):
        return out  # (an empty tensor's strides are NumPy's in retrograd)
    strides = tuple(st // a.itemsize for st in a.strides)
    if any(st == 0 and n > 1 for st, n in zip(strides, a.shape)):
        # clone(): empty_like's infer_dense_strides, size-1 dims' strides included
        shape = tuple(a.shape)
        strides = result_strides(shape, 1, [(shape, strides, 1)]) or _c_strides(shape, 1)
    return with_strides(out, strides)


def _overwrite_vjp(node, g, saved):
    p, q, src_shape = node.params[:3]
    na, ns = node.next
    return (_zero_at(g, p) if na else None,
            _src_grad(node, _gat(g, p, tuple(g.shape)), q, src_shape) if ns else None)


#: the nodes whose source gradient is PyTorch's ``grad.gather(dim, index)``: shaped like the
#: index, which the engine then refuses where the index is smaller than src (PyTorch's
#: "returned an invalid gradient at index 1"; fuzz seeds 11001870, 11002663, 11016870)
_INDEX_SHAPED = {"ScatterBackward0", "ScatterAddBackward0", "ScatterReduceBackward0"}


def _src_grad(node, gs, q, src_shape):
    if q is not None and type(node).__name__ in _INDEX_SHAPED:
        return gs
    return _src_back(gs, q, src_shape)


def _accumulate_fwd(a, s, p, q, src_shape, alpha):
    out = a.copy() if a.ndim else namespace(a).array(a)
    s = _src_take(s, q)
    if alpha != 1:
        s = s * alpha
    if p.size:
        xp = namespace(out)
        xp.add.at(out.reshape(-1), p.reshape(-1), xp.broadcast_to(s, p.shape).reshape(-1))
    return out


def _accumulate_vjp(node, g, saved):
    p, q, src_shape, alpha = node.params
    na, ns = node.next
    gs = None
    if ns:
        gs = _gat(g, p, tuple(g.shape))
        if alpha != 1:
            gs = gs * alpha
        gs = _src_grad(node, gs, q, src_shape)
    return (g if na else None, gs)


def _fill_fwd(a, p, value):
    out = a.copy() if a.ndim else namespace(a).array(a)
    out.reshape(-1)[p] = value
    return out


def _fill_vjp(node, g, saved):
    return (_zero_at(g, node.params[0]),)


def _fill_tensor_fwd(a, v, p):
    return _fill_fwd(a, p, v)


def _fill_tensor_vjp(node, g, saved):
    p = node.params[0]
    na, nv = node.next
    return (_zero_at(g, p) if na else None, _gat(g, p, tuple(g.shape)).sum() if nv else None)


_IDENTITY = {"sum": 0, "mean": 0, "prod": 1}


def _reduce_fwd(a, s, p, q, src_shape, reduce, include_self):
    xp = namespace(a)
    out = a.copy() if a.ndim else xp.array(a)
    flat = out.reshape(-1)
    s = xp.broadcast_to(_src_take(s, q), p.shape).reshape(-1)
    p = p.reshape(-1)
    if not include_self:
        if reduce in _IDENTITY:
            flat[p] = _IDENTITY[reduce]
        else:
            # the dtype's lowest (highest) value, as PyTorch's lowest()/max(): False/True
            # for bool, 0 for unsigned
            low = reduce in ("amax", "max")
            if a.dtype.kind == "f":
                flat[p] = -xp.inf if low else xp.inf
            elif a.dtype.kind == "b":
                flat[p] = not low
            else:
                info = xp.iinfo(a.dtype)
                flat[p] = info.min if low else info.max
    if reduce in ("max", "min"):  # PyTorch's undocumented spellings (forward only)
        reduce = "a" + reduce
    if reduce in ("sum", "mean"):
        xp.add.at(flat, p, s)
    elif reduce == "prod":
        xp.multiply.at(flat, p, s)
    elif reduce == "amax":
        xp.maximum.at(flat, p, s)
    else:
        xp.minimum.at(flat, p, s)
    if reduce == "mean":
        count = _count(a.shape, p, include_self, a.dtype)
        if a.dtype.kind == "f":
            out = out / count
        else:
            out = xp.floor_divide(out, count).astype(a.dtype)
    return out


def _count(shape, p, include_self, dtype):
    """How many values were reduced at each position (1 where none: a division by 1)."""
    xp = namespace(p)
    n = xp.bincount(p.reshape(-1), minlength=_size(shape)).reshape(shape)
    n = n + 1 if include_self else xp.maximum(n, 1)
    return n.astype(dtype)


def _reduce_vjp(node, g, saved):
    # PyTorch's scatter_reduce_backward / index_reduce_backward (FunctionsManual.cpp)
    self_, src, result = saved[:3]  # (then the index: scatter.check_also)
    p, q, src_shape, reduce, include_self = node.params
    na, ns = node.next
    if reduce in ("max", "min"):
        raise RuntimeError(f"Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', "
                           f"'amin' but got {reduce}.")
    shape = tuple(g.shape)
    s = _src_take(src, q)
    s_raw, self_raw, res_raw = _raw(s), _raw(self_), _raw(result)
    dt = res_raw.dtype
    xp = namespace(res_raw)
    one = xp.ones((), dt)
    # an index smaller than src (q: the part written): PyTorch's amax/amin/prod derivative
    # compares the whole src with index-shaped values, broadcast: it raises where they do
    # not broadcast (whichever gradient is asked), and where they do, src elements outside
    # the index's part take gradients too (as its formulas give them)
    whole = reduce in ("amax", "amin", "prod") and q is not None
    if whole:
        message = broadcast_message([tuple(src_shape), tuple(p.shape)])
        if message is not None:
            raise RuntimeError(f"{message} (the derivative of scatter_reduce/index_reduce "
                               f"with reduce='{reduce}' compares src of shape "
                               f"{list(src_shape)} with the index's {list(p.shape)})")
    if reduce == "sum":
        gself, gsrc = g, _gat(g, p, shape)
    elif reduce == "mean":
        n = _count(shape, p, include_self, dt)
        gself = g / n
        gsrc = _gat(g, p, shape) / n.reshape(-1)[p]
    elif reduce in ("amax", "amin"):
        value = res_raw.reshape(-1)[p]
        self_is = (self_raw == res_raw).astype(dt)
        src_is = (xp.broadcast_to(s_raw, p.shape) == value).astype(dt)
        n = self_is + _add0_fwd(src_is, p, shape)
        gd = g / n
        gself = gd * self_is
        if whole:
            src_is = (_raw(src) == value).astype(dt)
        gsrc = _gat(gd, p, shape) * src_is
    else:  # prod
        gself = gsrc = None
        if na:
            self_zero = self_raw == 0
            masked_self = _where(one, self_, self_zero)
            gself = g * _reduce_op(masked_self, src, p, q, src_shape, reduce, include_self) \
                / masked_self
        if ns:
            src_zero = xp.broadcast_to(s_raw == 0, p.shape)
            zeros_at = _add0_fwd(src_zero.astype(dt), p, shape).reshape(-1)[p]
            if whole:  # (the index's part counts the zeros; the whole src is masked)
                s, src_zero = src, _raw(src) == 0
            single = src_zero & (zeros_at == 1)
            masked_src = _where(one, s, single)
            masked_result = (_reduce_op(self_, masked_src, p, q, src_shape, reduce, include_self)
                             if whole else
                             _reduce_op(self_, masked_src, p, None, p.shape, reduce,
                                        include_self))
            gsrc = _where(_gat(g * masked_result, p, shape),
                          _gat(g * result, p, shape) / _where(one, s, src_zero),
                          single)
            if isinstance(gsrc, Tensor) and (zeros_at > 1).any():
                # PyTorch's second derivative stops here, with its message
                op, what = (("scatter_reduce", "src") if type(node).__name__.startswith("Scatter")
                            else ("index_reduce", "source"))
                gsrc = _error(gsrc, f"{op}(): Double backward is unsupported for {what} when "
                              f">1 zeros in {what} are scattered to the same position in self")
    if not include_self and na:
        gself = _zero_at(gself, p)
    if ns:
        # sum and mean: PyTorch's index-shaped gather (see _src_grad); amax, amin and prod
        # compare the whole src with the gathered result (broadcast: src-shaped values)
        if not whole:  # (whole: src-shaped already)
            gsrc = _src_grad(node, gsrc, q, src_shape) if reduce in ("sum", "mean") else \
                _src_back(gsrc, q, src_shape)
    return (gself if na else None, gsrc if ns else None)


def _error_vjp(node, g, saved):
    raise RuntimeError(node.params[0])


# a gradient past which PyTorch refuses to differentiate (its DelayedError node, "Error")
_error = defop("error", lambda a, message: a.copy(), _error_vjp, "Error", 1)


def _reduce_op(self_, src, p, q, src_shape, reduce, include_self):
    # (the derivative's own recomputation: recorded under create_graph, so prod's second
    # order goes through it)
    return _scatter_reduce(self_, src, p, q, src_shape, reduce, include_self)


def _unimplemented_vjp(node, g, saved):
    raise RuntimeError(f"derivative for aten::{node.params[-1]} is not implemented (scatter "
                       "with reduce=; use scatter_reduce, whose derivative exists)")


# one op per PyTorch grad_fn name; ``alpha`` is 1 for the accumulating put / index_put
_scatter_src = defop("scatter", _overwrite_fwd, _overwrite_vjp, "ScatterBackward0", 2)
_scatter_value = defop("scatter", _fill_fwd, _fill_vjp, "ScatterBackward1", 1)
_scatter_add = defop("scatter_add", _accumulate_fwd, _accumulate_vjp, "ScatterAddBackward0", 2)
_scatter_reduce = defop("scatter_reduce", _reduce_fwd, _reduce_vjp, "ScatterReduceBackward0", 2,
                        INPUTS | OUTPUT)
_index_add = defop("index_add", _accumulate_fwd, _accumulate_vjp, "IndexAddBackward0", 2)
_index_copy = defop("index_copy", _overwrite_fwd, _overwrite_vjp, "IndexCopyBackward0", 2)
_index_fill = defop("index_fill", _fill_fwd, _fill_vjp, "IndexFillBackward0", 1)
_index_fill_t = defop("index_fill", _fill_tensor_fwd, _fill_tensor_vjp, "IndexFillBackward1", 2)
_index_reduce = defop("index_reduce", _reduce_fwd, _reduce_vjp, "IndexReduceBackward0", 2,
                      INPUTS | OUTPUT)
_index_put_ow = defop("index_put", _overwrite_fwd, _overwrite_vjp, "IndexPutBackward0", 2)
_index_put_acc = defop("index_put", _accumulate_fwd, _accumulate_vjp, "IndexPutBackward0", 2)
_put_ow = defop("put", _overwrite_fwd, _overwrite_vjp, "PutBackward0", 2)
_put_acc = defop("put", _accumulate_fwd, _accumulate_vjp, "PutBackward0", 2)
_take = defop("take", _gat_fwd, _gat_vjp, "TakeBackward0", 1)
_masked_scatter = defop("masked_scatter", _overwrite_fwd, _overwrite_vjp,
                        "MaskedScatterBackward0", 2)
_diagonal_scatter = defop("diagonal_scatter", _strides_kept_fwd, _overwrite_vjp,
                          "DiagonalScatterBackward0", 2)
_select_scatter = defop("select_scatter", _strides_kept_fwd, _overwrite_vjp,
                        "SelectScatterBackward0", 2)
_slice_scatter = defop("slice_scatter", _strides_kept_fwd, _overwrite_vjp,
                       "SliceScatterBackward0", 2)
_scatter_reduce_old = defop("scatter", lambda a, s, p, q, ss, reduce, name: _reduce_fwd(
    a, s, p, q, ss, {"add": "sum", "multiply": "prod"}[reduce], True), _unimplemented_vjp,
    "NotImplemented", 2)
_scatter_value_reduce = defop("scatter", lambda a, p, value, reduce, name: _reduce_fwd(
    a, namespace(a).asarray(value, dtype=a.dtype), p, None, (),
    {"add": "sum", "multiply": "prod"}[reduce], True), _unimplemented_vjp, "NotImplemented", 1)


# ----------------------------------------------------------------- argument checks

_TYPE_NAMES = {"float64": "Double", "float32": "Float", "float16": "Half", "int64": "Long",
               "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
               "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _tname(a) -> str:
    return _TYPE_NAMES.get(a.dtype.name, a.dtype.name)


def _index(index, op, ints=("int64", "int32"), exc=RuntimeError, message=None, position=2):
    """The index's array, an integer array of an accepted dtype (PyTorch's error if not)."""
    idx = _raw(index)
    tensor_arg(idx, "index", position)
    if idx.dtype.name not in ints:
        raise exc(message.format(_tname(idx)) if message else
                  f"{op}(): Expected dtype int32/int64 for index, but got {_tname(idx)}; "
                  "convert it with index.long()")
    return idx.astype(namespace(idx).int64, copy=False)


def _same_dtype(x, src, op, message=None):
    if _raw(src).dtype != _raw(x).dtype:
        raise RuntimeError(
            (message or "{op}(): Expected self.dtype to be equal to src.dtype").format(
                op=op, self=_tname(_raw(x)), src=_tname(_raw(src)))
            + f" (self is {_tname(_raw(x))}, src is {_tname(_raw(src))}); convert one "
            "with .to(other.dtype)")


def _bounds(idx, size, dim, op, exc=RuntimeError):
    if idx.size:
        lo, hi = int(idx.min()), int(idx.max())
        if lo < 0 or hi >= size:
            bad = hi if hi >= size else lo
            raise exc(f"index {bad} is out of bounds for dimension {dim} with size {size} "
                      f"({op})")


def _strides(shape):
    out, n = [], 1
    for s in reversed(shape):
        out.append(n)
        n *= s
    return out[::-1]


def _grid(shape, region, dim, idx):
    """Flat positions in ``shape`` of the region ``region`` (a shape no larger than
    ``shape``) with the coordinate along ``dim`` replaced by ``idx`` (broadcast to it)."""
    strides = _strides(shape)
    xp = namespace(idx) if idx is not None else _np
    if 0 in tuple(region):
        # an empty region (a stride is 0 past an empty dim, which arange cannot step by)
        return xp.zeros(tuple(region), dtype=xp.int64)
    # one array written once, then each other dimension's offsets added in place (a third
    # of the passes of summing fresh arrays: bench/indexing.py)
    if idx is None:
        p = xp.zeros(region, dtype=xp.int64)
    elif tuple(idx.shape) == tuple(region):
        p = idx * strides[dim] if strides[dim] != 1 else idx.astype(xp.int64, copy=True)
    else:
        p = xp.empty(region, dtype=xp.int64)
        p[...] = idx * strides[dim]
    for d, (n, st) in enumerate(zip(region, strides)):
        if d != dim and n > 1:
            p += xp.arange(0, n * st, st, dtype=xp.int64).reshape(
                (n,) + (1,) * (len(region) - d - 1))
    return p


def _reduce_arg(reduce, allowed, op):
    if reduce not in allowed:
        if op == "index_reduce":
            raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax "
                               f"or amin but got {reduce}.")
        raise RuntimeError(f"{op}(): reduce argument must be either "
                           f"{', '.join(allowed[:-1])} or {allowed[-1]}, got {reduce}")


# ----------------------------------------------------------------- scatter along a dimension


def _scatter_positions(x, dim, index, src, op):
    """(p, q, index array): ``x``'s flat positions written, and ``src``'s flat positions
    read (None where the index covers all of src)."""
    shape = tuple(x.shape)
    raw = _raw(index)
    if getattr(raw, "size", None) == 0:
        return _empty_positions(raw, src, shape, dim)
    idx = _index(index, "scatter")
    dim = _norm_dim(dim, len(shape))
    if not shape:  # a 0-d self: index 0, any number of times (0-d or 1-d index)
        if idx.ndim > 1:
            raise RuntimeError("Index tensor must have the same number of dimensions as self "
                               f"tensor ({op}: self is 0-d, index shape {list(idx.shape)})")
        _bounds(idx, 1, 0, op)
        p = idx
        src_shape = tuple(src.shape) if src is not None else idx.shape
        q = None if src is None or src_shape == idx.shape else \
            namespace(idx).arange(idx.size, dtype=idx.dtype).reshape(idx.shape)
        return p, q
    if idx.ndim != len(shape):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as self "
                           f"tensor ({op}: self shape {list(shape)}, index shape "
                           f"{list(idx.shape)})")
    src_shape = tuple(src.shape) if src is not None else None
    if src is not None and len(src_shape) != idx.ndim:
        raise RuntimeError(f"Index tensor must have the same number of dimensions as src "
                           f"tensor ({op}: src shape {list(src_shape)}, index shape "
                           f"{list(idx.shape)})")
    if any(n > m for d, (n, m) in enumerate(zip(idx.shape, shape)) if d != dim) or (
            src is not None and any(n > m for n, m in zip(idx.shape, src_shape))):
        raise RuntimeError(
            f"Expected index {list(idx.shape)} to be no larger than self {list(shape)} apart "
            f"from dimension {dim}" + (f" and to be no larger size than src {list(src_shape)}"
                                       if src is not None else "") + f" ({op})")
    _bounds(idx, shape[dim], dim, op)
    p = _grid(shape, idx.shape, dim, idx)
    q = None if src is None or src_shape == idx.shape else _grid(src_shape, idx.shape, -1, None)
    return p, q


def _empty_positions(raw, src, shape, dim):
    """An empty index writes nothing, and PyTorch checks it for nothing: its dtype and shape
    checks (scatter_gather_dtype_check, scatter_shape_check) return at index.numel() == 0, so
    any dtype and any shape pass; only ``dim`` is wrapped.  The positions are empty arrays
    shaped as the index (src's gradient is index-shaped, as PyTorch's gather of it, which
    its engine then sums to a 0-d src or refuses)."""
    tensor_arg(raw, "index", 2)
    _norm_dim(dim, len(shape))
    p = namespace(raw).zeros(raw.shape, dtype=namespace(raw).int64)
    q = None if src is None or tuple(src.shape) == tuple(raw.shape) else p
    return p, q


def scatter(input, dim, index, src=None, *, value=None, reduce=None):  # noqa: A002
    """``src`` (a tensor, or a number ``value``) written into ``input`` at ``index`` along
    ``dim``: ``out[index[i][j]][j] = src[i][j]`` for ``dim=0``.

    Where an index repeats, which value lands is undefined (as PyTorch); every source value
    written there gets the gradient at that position.  ``reduce='add'`` / ``'multiply'``
    accumulate instead (no derivative, as PyTorch: use ``scatter_reduce``).
    """
    if src is None and value is None:
        raise TypeError("scatter() missing 1 required argument: 'src' or 'value'")
    if value is None and not isinstance(src, Tensor):
        value, src = src, None
    if reduce is not None and reduce not in ("add", "multiply"):
        raise RuntimeError(f"reduce argument must be either add or multiply. (scatter got "
                           f"reduce={reduce!r}; use scatter_reduce for the others)")
    if src is not None:
        _same_dtype(input, src, "scatter")
        p, q = _scatter_positions(input, dim, index, src, "scatter")
        if reduce is not None:
            warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated "
                          "and will be removed in a future PyTorch release. Use "
                          "torch.scatter_reduce instead for more reduction options.",
                          UserWarning, stacklevel=2)
            return _scatter_reduce_old(input, src, p, q, tuple(src.shape), reduce, "scatter")
        return check_also(_scatter_src(input, src, p, q, tuple(src.shape)), index)
    if isinstance(value, Tensor):
        raise RuntimeError("Index tensor must have the same number of dimensions as src "
                           "tensor (scatter: a 0-d tensor value; pass a number, or "
                           "value.expand(index.shape) as src)")
    p, _ = _scatter_positions(input, dim, index, None, "scatter")
    if reduce is not None:
        return _scatter_value_reduce(input, p, value, reduce, "scatter")
    return check_also(_scatter_value(input, p, value), index)


def scatter_add(input, dim, index, src):  # noqa: A002
    """``input`` plus ``src`` added at ``index`` along ``dim`` (repeats add up).

    Examples
    --------
    >>> import retrograd as T
    >>> T.zeros(3).scatter_add(0, T.tensor([0, 0, 2]), T.tensor([1.0, 2.0, 3.0]))
    tensor([3., 0., 3.])
    """
    tensor_arg(_raw(src), "src", 4)
    _same_dtype(input, src, "scatter")
    p, q = _scatter_positions(input, dim, index, src, "scatter_add")
    return check_also(_scatter_add(input, src, p, q, tuple(src.shape), 1),
                      index if _wants_grad(src) else None)


_SCATTER_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _no_bool(x, kernel, op, reduce):
    """PyTorch's NotImplementedError where its reduction kernel has no bool version."""
    if _raw(x).dtype.kind == "b":
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{scalar_type_name(_raw(x).dtype)}': {op}() "
            f"with reduce='{reduce}' does not take a bool tensor; convert it first (x.int()) "
            "or use a logical op (any/all)")


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):  # noqa: A002
    """``src`` reduced into ``input`` at ``index`` along ``dim`` with ``reduce`` (sum, prod,
    mean, amax, amin); ``include_self=False`` leaves ``input``'s values out where something
    is scattered.  Gradients as PyTorch's: ties of amax/amin share evenly, mean divides by
    the count, prod skips a single zero."""
    tensor_arg(_raw(src), "src", 4)
    if reduce not in ("max", "min"):  # (accepted by PyTorch too, without a derivative)
        _reduce_arg(reduce, _SCATTER_REDUCES, "scatter_reduce")
    _same_dtype(input, src, "scatter")
    p, q = _scatter_positions(input, dim, index, src, "scatter_reduce")
    if reduce == "mean":
        _no_bool(input, "scatter_gather_tensor_cpu_reduce_mean", "scatter_reduce", reduce)
    return check_also(_scatter_reduce(input, src, p, q, tuple(src.shape), reduce,
                                      bool(include_self)), index)


# ----------------------------------------------------------------- index_* along a dimension


def _index_positions(x, dim, index, source, op, int_rule, out_of_range=None):
    """(p, idx): flat positions in ``x`` of the slices ``index`` along ``dim``, shaped as the
    source (``x``'s shape with ``len(index)`` along ``dim``)."""
    _index_shape_first(x, index, source, op)
    idx = _index(index, op, **int_rule)
    shape = tuple(x.shape)
    if op == "index_fill_" and idx.ndim > 1:
        raise RuntimeError(f"Index has to be a vector/scalar (index_fill_ got an index of "
                           f"shape {list(idx.shape)})")
    if source is not None and not source.ndim and shape:
        # a 0-d source into a tensor: one index (PyTorch reads source.size(dim) for its
        # message otherwise, which raises), and then the slice shapes differ
        if idx.size != 1:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions "
                             f"({op} of {idx.size} indices from a 0-d source)")
        if op == "index_copy_":
            if len(shape) != 1:  # (a 1-d self's slice is 0-d, as the source)
                raise RuntimeError("index_copy_(): Source/destination tensor must have same "
                                   f"slice shapes (self shape {list(shape)}, a 0-d source)")
        else:
            raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                               f"specified dimension. Got self.shape = {list(shape)} "
                               "source.shape = []")
    if not shape and source is not None:
        # a 0-d self takes a 0-d source and one index, 0 (PyTorch's checks, in its order)
        k = idx.size
        if op == "index_copy_" and source.ndim == 1:
            # index_copy compares the slices (both 0-d) and then the number of indices
            if k != source.shape[0]:
                raise IndexError(f"index_copy_(): Number of indices ({k}) should be equal to "
                                 f"source.size(dim) ({source.shape[0]})")
            _bounds(idx.reshape(-1), 1, 0, op, IndexError)
            _norm_dim(dim, 0)
            return namespace(idx).zeros(idx.reshape(-1).shape, idx.dtype)
        if source.ndim:
            if k != source.shape[0]:
                raise RuntimeError(f"{op}(): Number of indices ({k}) should be equal to "
                                   f"source.size(dim): ({source.shape[0]}), for dim: {dim}")
            raise RuntimeError(
                f"source tensor shape must match self tensor shape, excluding the specified "
                f"dimension. Got self.shape = [] source.shape = {list(source.shape)}")
        if k != 1:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions "
                             f"({op} of {k} indices into a 0-d tensor)")
        if int(idx.reshape(-1)[0]) != 0:
            raise IndexError(f"index out of range in self ({op}: index "
                             f"{int(idx.reshape(-1)[0])} into a 0-d tensor)")
        _norm_dim(dim, 0)
        return namespace(idx).zeros((), idx.dtype)
    dim = _norm_dim(dim, len(shape))
    if idx.ndim > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector, but got dim: {idx.ndim} "
                         f"with type: Long and size: {list(idx.shape)}")
    idx = idx.reshape(-1)
    n = shape[dim] if shape else 1
    if op == "index_fill_":
        if idx.size and (int(idx.min()) < -n or int(idx.max()) >= n):
            bad = int(idx.max()) if int(idx.max()) >= n else int(idx.min())
            raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {n} "
                             f"(index_fill_)")
        # a repeated index fills once: the value's gradient counts each slice once
        # (PyTorch: grad.index_select(dim, unique(index)).sum())
        idx = namespace(idx).unique(idx % max(n, 1))
    else:
        exc = out_of_range or (IndexError if op in ("index_copy_", "index_reduce_")
                               else RuntimeError)
        if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= n):
            bad = int(idx.max()) if int(idx.max()) >= n else int(idx.min())
            pre = "index_copy_(): " if op == "index_copy_" else ""
            raise exc(f"{pre}index {bad} is out of bounds for dimension {dim} with size {n} "
                      f"({op[:-1]}; index out of range in self)")
    if not shape:
        region = ()
        if source is not None and source.ndim and tuple(source.shape) != (idx.size,):
            raise RuntimeError(
                f"source tensor shape must match self tensor shape, excluding the specified "
                f"dimension. Got self.shape = [] source.shape = {list(source.shape)}")
        # (a fill's positions: one per index left, none for an empty index, which fills
        # nothing, as PyTorch)
        return namespace(idx).zeros(idx.shape if source is None or source.ndim else (),
                                    idx.dtype)
    region = shape[:dim] + (idx.size,) + shape[dim + 1:]
    if source is not None:
        sshape = tuple(source.shape)
        if op == "index_copy_" and len(sshape) == len(shape) and \
                sshape[:dim] + sshape[dim + 1:] != shape[:dim] + shape[dim + 1:]:
            # (index_copy compares the slices before the number of indices)
            raise RuntimeError(f"index_copy_(): Source/destination tensor must have same "
                               f"slice shapes (self {list(shape)}, source {list(sshape)}, "
                               f"dim {dim})")
        if len(sshape) == len(shape) and sshape[dim] != idx.size or (
                sshape and len(sshape) != len(shape)):
            if op == "index_copy_":
                raise IndexError(f"index_copy_(): Number of indices ({idx.size}) should be "
                                 f"equal to source.size(dim) ({sshape[dim] if sshape else 1})")
            raise RuntimeError(f"{op}(): Number of indices ({idx.size}) should be equal to "
                               f"source.size(dim): ({sshape[dim] if len(sshape) > dim else 1}"
                               f"), for dim: {dim}")
        if sshape and sshape != region:
            raise RuntimeError(
                f"source tensor shape must match self tensor shape, excluding the specified "
                f"dimension. Got self.shape = {list(shape)} source.shape = {list(sshape)}")
    return _grid(shape, region, dim, idx.reshape((-1,) + (1,) * (len(shape) - dim - 1)))


def _index_shape_first(x, index, source, op):
    """PyTorch's checks of index_add/index_reduce/index_copy that come before the index's
    dtype: an index of more than 1 dim (IndexError), and index_copy's 0-d source with other
    than one index, or source and self of different dims, neither 0-d (IndexError)."""
    raw = _raw(index)
    tensor_arg(raw, "index", 2)
    if op == "index_fill_":
        return
    if raw.ndim > 1:
        if op == "index_copy_":
            raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got "
                             f"{raw.ndim})")
        raise IndexError(f"{op}(): Index is supposed to be a vector, but got dim: {raw.ndim} "
                         f"with type: {_tname(raw)} and size: {list(raw.shape)}")
    if op == "index_copy_" and source is not None and not source.ndim and raw.size != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one "
                         f"element (got {raw.size})")
    if op == "index_copy_" and source is not None and source.ndim and x.ndim and \
            source.ndim != x.ndim:
        raise IndexError(f"index_copy_(): When source and destination are not scalars, "
                         f"their dimensionality must match. Source dimensionality "
                         f"({source.ndim}), destination dimensionality ({x.ndim})")


def _rule(op, kind):
    if kind == "any":
        return {"message": f"{op}(): Expected dtype int32/int64 for index but got: {{}}"}
    if kind == "long":
        return {"ints": ("int64",), "message": f"{op}(): Expected a long tensor for index, "
                "but got {}"}
    return {"ints": ("int64",), "exc": IndexError,
            "message": f"{op}(): Expected dtype int64 for index."}


def index_add(input, dim, index, source, *, alpha=1):  # noqa: A002
    """``input`` plus ``alpha * source`` added at the slices ``index`` along ``dim``
    (repeats add up)."""
    tensor_arg(_raw(source), "source", 4)
    if _raw(source).dtype != _raw(input).dtype:
        raise RuntimeError(f"index_add_(): self ({_tname(_raw(input))}) and source "
                           f"({_tname(_raw(source))}) must have the same scalar type")
    # PyTorch's CPU index_add_ checks an index out of range in one of two paths: with alpha 1
    # along the first or last dim of a tensor of 2 or more dims, index_put_'s (RuntimeError),
    # else its slice loop's TORCH_CHECK_INDEX (IndexError: also every 1-d tensor)
    ndim = _raw(input).ndim
    outer = ndim > 1 and alpha == 1 and isinstance(dim, int) and dim % ndim in (0, ndim - 1)
    p = _index_positions(input, dim, index, source, "index_add_", _rule("index_add_", "any"),
                         RuntimeError if outer else IndexError)
    if _raw(input).dtype.kind in "iu" and not isinstance(alpha, bool):
        alpha = int(alpha)  # PyTorch casts alpha to an integer tensor's type (-1.5 -> -1)
    keep = _wants_grad(source)  # (self's gradient is the gradient itself)
    return check_also(_index_add(input, source, p, None, tuple(source.shape), alpha),
                      index if keep else None, source if keep else None)


def index_copy(input, dim, index, source):  # noqa: A002
    """``input`` with the slices ``index`` along ``dim`` replaced by ``source``'s."""
    tensor_arg(_raw(source), "source", 4)
    if _raw(source).dtype != _raw(input).dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {_tname(_raw(input))} and (source) "
                           f"{_tname(_raw(source))}")
    p = _index_positions(input, dim, index, source, "index_copy_",
                         _rule("index_copy_", "long"))
    return check_also(_index_copy(input, source, p, None, tuple(source.shape)), index,
                      source if _wants_grad(source) else None)


def index_fill(input, dim, index, value):  # noqa: A002
    """``input`` with the slices ``index`` along ``dim`` set to ``value`` (a number, or a
    0-d tensor, which then gets the sum of their gradients)."""
    p = _index_positions(input, dim, index, None, "index_fill_",
                         _rule("index_fill_", "long64"))
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                             f"tensor with {value.ndim} dimension(s)")
        # a value of another dtype: cast inside the op (no ToCopyBackward0 below
        # IndexFillBackward1, as PyTorch; its gradient comes back in the value's dtype)
        cast = value.to(input.dtype) if value.dtype != input.dtype else value
        return check_also(take_source(_index_fill_t(input, cast, p), cast, value), index)
    return check_also(_index_fill(input, p, value), index)


_INDEX_REDUCES = ("prod", "mean", "amax", "amin")


def index_reduce(input, dim, index, source, reduce, *, include_self=True):  # noqa: A002
    """``source``'s slices reduced into ``input`` at ``index`` along ``dim`` (prod, mean,
    amax, amin); gradients as scatter_reduce's."""
    tensor_arg(_raw(source), "source", 4)
    warnings.warn("index_reduce() is in beta and the API may change at any time.",
                  UserWarning, stacklevel=2)
    _reduce_arg(reduce, _INDEX_REDUCES, "index_reduce")
    if _raw(source).dtype != _raw(input).dtype:
        raise RuntimeError(f"index_reduce_(): self ({_tname(_raw(input))}) and source "
                           f"({_tname(_raw(source))}) must have the same scalar type")
    p = _index_positions(input, dim, index, source, "index_reduce_",
                         _rule("index_reduce_", "any"))
    # PyTorch's kernels for bool (after its shape checks): the include_self=False fill and
    # the loop over a 0-d/1-d self have none; a higher-rank self reduces with bool's
    # elementwise ops, except mean, whose floor division has none
    if not include_self:
        _no_bool(input, "index_reduce_func_exclude_input_init", "index_reduce", reduce)
    elif input.ndim <= 1:
        _no_bool(input, "index_func_", "index_reduce", reduce)
    elif reduce == "mean":
        _no_bool(input, "div_floor_cpu", "index_reduce", reduce)
    return check_also(_index_reduce(input, source, p, None, tuple(source.shape), reduce,
                                    bool(include_self)), index)


# ----------------------------------------------------------------- in-place forms
# (ops/inplace.py's machinery: the out-of-place op on a shadow of self, written back,
# version bumped, views rebased; saves_inputs where the derivative reads self's old values)

scatter_ = inplace(scatter, "scatter_", False)
scatter_add_ = inplace(scatter_add, "scatter_add_", False)
scatter_reduce_ = inplace(scatter_reduce, "scatter_reduce_", True)
index_add_ = inplace(index_add, "index_add_", False)
index_copy_ = inplace(index_copy, "index_copy_", False)
index_fill_ = inplace(index_fill, "index_fill_", False, overlap_ok=True)  # a fill (seed 14508826)
index_reduce_ = inplace(index_reduce, "index_reduce_", True)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

for _fn in (scatter, scatter_add, scatter_reduce, index_add, index_copy, index_fill,
            index_reduce):
    register(_fn)
for _fn in (scatter_, scatter_add_, scatter_reduce_, index_add_, index_copy_, index_fill_,
            index_reduce_):
    register(_fn, function=False, inplace_of=_fn.__name__[:-1])
