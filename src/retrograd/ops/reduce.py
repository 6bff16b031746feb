"""Reductions: sum, mean, max/min (whole tensor and along a dim), argmax, prod, var...

Each derivative broadcasts the gradient back over the reduced dimensions: the gradient
is unsqueezed where ``keepdim=False`` removed a dimension, then expanded.
"""

from __future__ import annotations

import builtins
from collections import namedtuple

import numpy as _np

from ..backend import namespace
from ..backend import ndarray as _ndarray
from ..tensor import Tensor
from ._apply import INPUTS, NOTHING, OUTPUT, defop
from .iter_layout import row_major
from .dtype_rules import check_grad_dtype
from .pointwise import scalar_type_name, where
from .saved_checks import check_also
from .cast_inside import take_source
from .shape import _int_dim, _shape_arg, _unique_dims, expand_op, reshape_op, view
from .quiet_fp import mean_of

# PyTorch's torch.return_types.max / .min: named tuples called after the op
_TYPES = {name: namedtuple(name, ["values", "indices"]) for name in ("max", "min")}


def _dims(dim, ndim):
    """Normalise ``dim`` (None, int, or tuple) to a sorted tuple of axes, or None."""
    if dim is None:
        return None
    if dim.__class__ is int:
        if 0 <= dim < ndim:  # the common case, without the general checks below
            return (dim,)
        dim = (dim,)
    elif hasattr(dim, "__index__") or not hasattr(dim, "__len__"):
        dim = (_int_dim(dim),)  # an int tensor or NumPy int passes, 1.0 doesn't
    elif len(dim) == 0:
        return None  # sum(x, ()) reduces every dimension, as PyTorch
    out = _unique_dims(dim, ndim)  # IndexError out of range, RuntimeError for a repeat
    if ndim == 0:
        return ()
    return tuple(sorted(out))


def _one_dim(dim, ndim, name):
    """``_dims`` for ops that reduce one dimension (max, argmax, cumsum): not a tuple."""
    if hasattr(dim, "__len__") and not hasattr(dim, "__index__"):
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__} "
                        f"({dim!r}); {name} reduces one dimension at a time")
    return _dims(dim, ndim)


def _keep_shape(in_shape, axes):
    """The reduced shape with the reduced dimensions kept as size 1."""
    if axes is None:
        return (1,) * len(in_shape)
    return tuple(1 if i in axes else s for i, s in enumerate(in_shape))


def _broadcast_view(g, shape):
    """``broadcast_to(g, shape)`` for a C-contiguous NumPy array of ``shape``'s rank: the
    same read-only view, built directly (NumPy's broadcast_to sets up an nditer: 5 us,
    against 1 us here, and a sum's derivative runs it on every backward; bench/ (g))."""
    strides = tuple(0 if n == 1 and s != 1 else st
                    for n, s, st in zip(g.shape, shape, g.strides))
    out = _ndarray(shape, g.dtype, g, 0, strides)
    # read-only, as np.broadcast_to's; setflags itself: ``flags.writeable = False`` builds
    # a flags object and calls setflags by name (2.4k instructions more, 7 a second gradient)
    out.setflags(False)
    return out


def _spread(g, in_shape, axes):
    """Send a reduced gradient back to every element that was reduced."""
    if type(g) is not _ndarray and not isinstance(g, Tensor) and g.shape == ():
        g = namespace(g).asarray(g)  # (a NumPy scalar: the derivative of a 0-d product)
    if type(g) is _ndarray:  # a first-order backward: arrays, nothing to record
        if axes is None and not g.ndim and in_shape:
            # a sum of everything (a loss, each term of a Hessian-vector product's dot):
            # every element reads the one value (the read-only view _broadcast_view makes;
            # all strides 0, as PyTorch's expand, which a leaf's AccumulateGrad checks)
            out = _ndarray(in_shape, g.dtype, g, 0, (0,) * len(in_shape))
            out.setflags(False)  # (read-only; see _broadcast_view)
            return out
        keep = _keep_shape(in_shape, axes)
        if g.shape != keep:
            g = g.reshape(keep)
        if g.flags.c_contiguous and g.size:
            return _broadcast_view(g, in_shape)
    else:
        keep = _keep_shape(in_shape, axes)
    if tuple(g.shape) != keep:
        g = reshape_op(g, keep, tuple(g.shape))
    return expand_op(g, in_shape, keep)


# ----------------------------------------------------------------- sum / mean


_add_reduce = _np.add.reduce


def _sum_fwd(a, axes, keepdim, in_shape):
    if type(a) is _ndarray:
        # the ufunc's reduction itself: ndarray.sum is a Python wrapper in NumPy 2 that makes
        # this same call (each term of a Hessian-vector product's dot, bench/ (g))
        out = _add_reduce(a, axes, None, None, keepdim)
    else:
        out = a.sum(axis=axes, keepdims=keepdim)
    # PyTorch's reductions allocate a row-major result; NumPy's follow the input's order
    # (a result of under two dims is fresh and dense: the common case, one attribute read)
    return out if out.ndim < 2 else row_major(out)


def _sum_vjp(node, g, saved):
    axes, keepdim, in_shape = node.params
    return (_spread(g, in_shape, axes),)


_sum_all = defop("sum", _sum_fwd, _sum_vjp, "SumBackward0", 1, NOTHING)
_sum_dim = defop("sum", _sum_fwd, _sum_vjp, "SumBackward1", 1, NOTHING)


def sum(x, dim=None, keepdim=False, *, dtype=None):  # noqa: A001 - PyTorch's name
    """Sum of all elements, or over ``dim`` (int or tuple), keeping it with ``keepdim``.

    Examples
    --------
    >>> import retrograd as T
    >>> x = T.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> x.sum(), x.sum(0), x.sum(1, keepdim=True).shape
    (tensor(10.), tensor([4., 6.]), retrograd.Size([2, 1]))
    """
    source = x
    if dtype is not None:
        x = x.to(dtype=dtype)  # (a keyword: a string is refused, not a device)
    cast = x
    asked = x._data.dtype if dtype is not None else None
    if x._data.dtype.kind in "biu" and x._data.dtype.itemsize != 8 or x._data.dtype.kind == "b":
        x = x.long()  # integers and bools sum to int64 (NumPy: uint8 -> uint64)
    shape = x._data.shape
    if dim is None:
        result = _sum_all(x, None, False, shape)
    else:
        result = _sum_dim(x, _dims(dim, len(shape)), keepdim, shape)
    if cast is not source:  # (no ToCopyBackward0 below SumBackward, as PyTorch)
        take_source(result, cast, source)
    if asked is not None and result._data.dtype != asked:  # dtype=int32 or bool is the result's
        result = result.to(dtype=dtype)  # (bool: True where the sum is nonzero, as PyTorch)
    if asked is not None:
        check_grad_dtype(source, result, "sum")
    return result


def _mean_vjp(node, g, saved):
    axes, keepdim, in_shape, count = node.params
    return (_spread(g, in_shape, axes) / count,)


def _mean_fwd(a, axes, keepdim, in_shape, count):
    out = mean_of(a, axes, keepdim)  # (empty: nan, without NumPy's warning)
    return out if out.ndim < 2 else row_major(out)  # (PyTorch's: see _sum_fwd)


_mean_all = defop("mean", _mean_fwd, _mean_vjp, "MeanBackward0", 1, NOTHING)
_mean_dim = defop("mean", _mean_fwd, _mean_vjp, "MeanBackward1", 1, NOTHING)


def mean(x, dim=None, keepdim=False, *, dtype=None):
    """Mean of all elements, or over ``dim`` (int or tuple).

    Examples
    --------
    >>> import retrograd as T
    >>> T.tensor([[1.0, 2.0], [3.0, 5.0]]).mean(1)
    tensor([1.5000, 4.0000])
    """
    source = x
    if dtype is not None:
        x = x.to(dtype=dtype)  # (a keyword: a string is refused, not a device)
    if x._data.dtype.kind != "f":
        raise RuntimeError(
            f"mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {scalar_type_name(x._data.dtype)}; convert first, e.g. "
            "x.float().mean()"
        )
    shape = tuple(x.shape)
    axes = _dims(dim, x.ndim)
    count = 1
    for i, s in enumerate(shape):
        if axes is None or i in axes:
            count *= s
    if dim is None:
        out = _mean_all(x, None, False, shape, count)
    else:
        out = _mean_dim(x, axes, keepdim, shape, count)
    return take_source(out, x, source)  # (no ToCopyBackward0 below MeanBackward, as PyTorch)


# ----------------------------------------------------------------- max / min


def _extreme_all_vjp(node, g, saved):
    # ties share the gradient evenly, as PyTorch's max()/min() without dim; a nan result
    # (any nan in the input) shares it among the nans; elsewhere exactly 0, even for inf g
    a, out = saved
    a, out = getattr(a, "_data", a), getattr(out, "_data", out)  # the mask is not recorded
    xp = namespace(a)
    mask = xp.isnan(a) if xp.isnan(out) else a == out
    return (where(mask, g / (int(mask.sum()) or 1), 0.0),)  # (or 1: an empty median)


def _max_all_fwd(a):
    if a.size == 0:
        raise RuntimeError(
            "max(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument."
        )
    return a.max()


def _min_all_fwd(a):
    if a.size == 0:
        raise RuntimeError(
            "min(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument."
        )
    return a.min()


_max_all = defop("max", _max_all_fwd, _extreme_all_vjp, "MaxBackward1", 1, INPUTS | OUTPUT)
_min_all = defop("min", _min_all_fwd, _extreme_all_vjp, "MinBackward1", 1, INPUTS | OUTPUT)


def _select_fwd(a, idx, dim, keepdim, in_shape):
    """The values of ``a`` at ``idx`` (kept as size 1 along ``dim``): the forward of every
    value-selecting reduction (max/min(dim), kthvalue, median(dim), mode, sort, topk).
    ``in_shape`` (``a``'s shape) is for the derivative only: see :func:`_select_vjp`."""
    if a.ndim == 0:  # a 0-d tensor is its own value along dim 0 (a copy, not a view)
        return a.copy()
    out = namespace(a).take_along_axis(a, idx, axis=dim)
    return out if keepdim else out.squeeze(dim)


def _select_vjp(node, g, saved):
    # PyTorch's value_selecting_reduction_backward: all of the gradient goes to the
    # returned index, 0 elsewhere.  The index is saved (max/min(dim), which find it in the
    # forward: backward frees it, as PyTorch's) or the first param (the others); what
    # follows in ``saved`` is kept for its version check only (the returned indices)
    idx = saved[0] if node.__class__ in _INDEX_SAVED else node.params[0]
    # the input's shape when the op ran (PyTorch's saved self_sym_sizes), not the shape its
    # producer's node recorded: an in-place unsqueeze_/squeeze_/t_ under no_grad may have
    # changed it in between, and the engine then sums the gradient to the producer's shape
    # or refuses it, as PyTorch's (fuzz seeds 11022280, 19735467)
    dim, keepdim, shape = node.params[-3:]
    if not shape:
        return (g,)  # a 0-d input: the value itself
    from .index import scatter_along

    if not keepdim:
        g = reshape_op(g, tuple(idx.shape), tuple(g.shape))
    if not isinstance(g, Tensor) and idx.ndim and idx.shape[dim] == 1:
        # first order, one index per slice (max/min(dim), median, kthvalue, mode): no index
        # repeats, so a plain put is exact, several times faster than scatter's add.at
        xp = namespace(g)
        out = xp.zeros(shape, dtype=g.dtype)
        xp.put_along_axis(out, idx, g, axis=dim)
        return (out,)
    return (scatter_along(g, idx, dim, shape),)


def _extreme_dim_fwd(which):
    def forward(a, dim, keepdim, in_shape):
        xp = namespace(a)
        if a.ndim == 0:  # a 0-d tensor is its own max along dim 0 (NumPy has no axis 0)
            idx = xp.zeros((), dtype="int64")
        else:
            idx = xp.argmax(a, axis=dim, keepdims=True) if which == "max" else xp.argmin(
                a, axis=dim, keepdims=True)
        return _select_fwd(a, idx, dim, keepdim, in_shape), (idx,)

    return forward


_max_dim = defop("max", _extreme_dim_fwd("max"), _select_vjp, "MaxBackward0", 1, NOTHING,
                 extras=True)
_min_dim = defop("min", _extreme_dim_fwd("min"), _select_vjp, "MinBackward0", 1, NOTHING,
                 extras=True)
_INDEX_SAVED = (_max_dim.op.node_cls, _min_dim.op.node_cls)


def _extreme(x, dim, keepdim, other, whole, along, name):
    from ..tensor import Tensor, make_tensor

    if isinstance(dim, Tensor):  # max(a, b): elementwise
        from .pointwise import maximum, minimum

        return (maximum if name == "max" else minimum)(x, dim)
    if dim is None:
        return whole(x)
    d = _one_dim(dim, x.ndim, name)
    if not d:  # a 0-d tensor: its own max along dim 0 (recorded as MaxBackward0 too)
        indices = make_tensor(namespace(x._data).zeros((), dtype="int64"))
        return _TYPES[name](check_also(along(x, 0, keepdim, tuple(x.shape)), indices), indices)
    d = d[0]
    if x.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    values = along(x, d, keepdim, tuple(x.shape))
    xp = namespace(x._data)
    idx = xp.argmax(x._data, axis=d, keepdims=keepdim) if name == "max" else xp.argmin(
        x._data, axis=d, keepdims=keepdim)
    # (MaxBackward0 saves the indices: an in-place change of them breaks backward)
    indices = make_tensor(xp.asarray(idx, dtype="int64"))
    return _TYPES[name](check_also(values, indices), indices)


def max(x, dim=None, keepdim=False):  # noqa: A001
    """Largest element, or ``(values, indices)`` along ``dim``.

    Examples
    --------
    >>> import retrograd as T
    >>> x = T.tensor([[1.0, 5.0], [7.0, 2.0]])
    >>> x.max()
    tensor(7.)
    >>> x.max(dim=1).indices
    tensor([1, 0])
    """
    return _extreme(x, dim, keepdim, None, _max_all, _max_dim, "max")


def min(x, dim=None, keepdim=False):  # noqa: A001
    """Smallest element, or ``(values, indices)`` along ``dim``."""
    return _extreme(x, dim, keepdim, None, _min_all, _min_dim, "min")


def argmax(x, dim=None, keepdim=False):
    """The index of the largest element (flattened), or along ``dim``."""
    from ..tensor import make_tensor

    if x._data.dtype.kind == "b":
        raise RuntimeError("argmax(): does not support bool input; convert first, e.g. x.int()")

    xp = namespace(x._data)
    if dim is None:
        if x._data.size == 0:
            raise IndexError("argmax(): Expected reduction dim to be specified for input.numel() "
                             "== 0 (the tensor is empty); pass dim=")
        return make_tensor(xp.asarray(xp.argmax(x._data), dtype="int64"))
    dim = _one_dim(dim, x.ndim, "argmax")  # IndexError out of range, as PyTorch
    axis = dim[0] if dim else None
    if axis is not None and x.shape[axis] == 0:
        raise IndexError(f"argmax(): Expected reduction dim {axis} to have non-zero size (input "
                         f"shape {list(x.shape)}).")
    if axis is None:  # a 0-d tensor
        return make_tensor(xp.asarray(xp.argmax(x._data), dtype="int64"))
    return make_tensor(xp.asarray(xp.argmax(x._data, axis=axis, keepdims=keepdim), dtype="int64"))


def argmin(x, dim=None, keepdim=False):
    """The index of the smallest element (flattened), or along ``dim``."""
    from ..tensor import make_tensor

    if x._data.dtype.kind == "b":
        raise RuntimeError("argmin(): does not support bool input; convert first, e.g. x.int()")

    xp = namespace(x._data)
    if dim is None:
        if x._data.size == 0:
            raise IndexError("argmin(): Expected reduction dim to be specified for input.numel() "
                             "== 0 (the tensor is empty); pass dim=")
        return make_tensor(xp.asarray(xp.argmin(x._data), dtype="int64"))
    dim = _one_dim(dim, x.ndim, "argmin")
    axis = dim[0] if dim else None
    if axis is not None and x.shape[axis] == 0:
        raise IndexError(f"argmin(): Expected reduction dim {axis} to have non-zero size (input "
                         f"shape {list(x.shape)}).")
    if axis is None:  # a 0-d tensor
        return make_tensor(xp.asarray(xp.argmin(x._data), dtype="int64"))
    return make_tensor(xp.asarray(xp.argmin(x._data, axis=axis, keepdims=keepdim), dtype="int64"))


def _logical_reduce(x, dim, keepdim, which):
    from ..tensor import make_tensor

    data = x._data
    xp = namespace(data)
    axes = _dims(dim, data.ndim)
    fn = xp.all if which == "all" else xp.any
    out = row_major(xp.asarray(fn(data, axis=axes, keepdims=keepdim)))  # (see _sum_fwd)
    # uint8 in, uint8 out: PyTorch keeps its legacy mask dtype
    return make_tensor(out.astype(data.dtype) if data.dtype.name == "uint8" else out)


def all(x, dim=None, keepdim=False):  # noqa: A001 - PyTorch's name
    """True where every element (over ``dim``, or all of them) is nonzero; a bool tensor."""
    return _logical_reduce(x, dim, keepdim, "all")


def any(x, dim=None, keepdim=False):  # noqa: A001 - PyTorch's name
    """True where some element (over ``dim``, or all of them) is nonzero; a bool tensor."""
    return _logical_reduce(x, dim, keepdim, "any")


# ----------------------------------------------------------------- public names (registry.py)
def sum_to_size(x, *size):
    """``Tensor.sum_to_size`` as PyTorch composes it (``at::sum_to``): ``sum()`` for an empty
    size, else a sum with keepdim over the dims summed and a view dropping the leading ones,
    and ``x`` itself when nothing is summed, so grad_fn names (SumBackward0/1, ViewBackward0)
    and aliasing match PyTorch's; the engine's own broadcasting keeps the one-record
    ``shape.sum_to_size``."""
    shape = _shape_arg(size, "size")
    have = tuple(x.shape)
    lead = len(have) - len(shape)
    if lead < 0 or builtins.any(s != 1 and s != have[lead + i] for i, s in enumerate(shape)):
        raise RuntimeError(f"sum_to_size(): size {{{list(shape)}}} is not expandable to size "
                           f"{{{list(have)}}}; each size must be 1 or the tensor's own")
    if not shape:
        return sum(x)
    dims = list(range(lead)) + [i for i in range(lead, len(have))
                                if shape[i - lead] == 1 and have[i] != 1]
    out = sum(x, tuple(dims), keepdim=True) if dims else x
    return view(out, shape) if lead > 0 else out


from .registry import register  # noqa: E402

for _fn in (sum, mean):
    register(_fn, signature="input, dim=None, keepdim=False, *, dtype=None")
for _fn in (max, min):
    register(_fn, tuple_out=True)
register(argmax, differentiable=False, signature="input, dim=None, keepdim=False")
register(argmin, differentiable=False, signature="input, dim=None, keepdim=False")
register(all, function=False, differentiable=False)
register(any, function=False, differentiable=False)
register(sum_to_size, function=False)
