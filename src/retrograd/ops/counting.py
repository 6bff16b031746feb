"""Counting and searching (issue 6): unique, unique_consecutive, searchsorted, bucketize,
bincount, histc, histogram, count_nonzero, argwhere, isin, unravel_index, tril_indices,
triu_indices, and ``Tensor.fill_diagonal_``.

None of them has a derivative.  Where PyTorch still records a node for an input that
requires grad (unique's ``Unique2Backward0``, histogram's and bincount's ``NotImplemented``),
retrograd records one of the same name whose backward raises PyTorch's error; elsewhere the
result is a plain tensor.  Index results are int64 (int32 with ``out_int32=True``).
"""

from __future__ import annotations

import builtins
import operator
from collections import namedtuple

import numpy as np

from .. import dtypes
from ..autograd.forward_state import fw, refuse_forward
from ..autograd.grad_mode import state
from ..backend import namespace
from ..tensor import Tensor, make_tensor
from ._apply import defop
from ._errors import PY_VALUES, dim_error, scalar_type_name
from .iter_layout import row_major
from .quiet_fp import quiet_fp

histogram_type = namedtuple("histogram", ["hist", "bin_edges"])

# ----------------------------------------------------------------- shared pieces


def _data(x, fn, arg="input", position=1):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' (position {position}) must be Tensor, not "
                        f"{type(x).__name__}")
    return x._data


def _dim(dim, ndim, fn):
    if isinstance(dim, bool) or not hasattr(dim, "__index__"):
        raise TypeError(f"{fn}(): argument 'dim' must be int, not {type(dim).__name__}")
    dim = operator.index(dim)
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise dim_error(dim, ndim)
    return dim % max(ndim, 1)


def _refusing(backward_name, message, cls=NotImplementedError):
    """A node named ``backward_name`` over values already computed, whose backward raises
    ``cls(message)``: what PyTorch records for these ops when the input requires grad."""

    def vjp(node, g, saved):
        raise cls(message)

    return defop(backward_name, lambda a, values: values, vjp, backward_name, 1)


def _recorded(x, values, node_op):
    """``values`` as a tensor; under ``node_op`` when x requires grad (a float result)."""
    if state.enabled and x._requires_grad and values.dtype.kind == "f":
        return node_op(x, values)
    return make_tensor(values)


def _index_dtype(xp, out_int32=False):
    return xp.int32 if out_int32 else xp.int64


# ----------------------------------------------------------------- unique


_UNIQUE = _refusing("Unique2Backward0", "the derivative for '_unique2' is not implemented.")
_UNIQUE_DIM = _refusing("UniqueDimBackward0",
                        "the derivative for 'unique_dim' is not implemented.")
_UNIQUE_CONSECUTIVE = _refusing(
    "UniqueConsecutiveBackward0", "the derivative for 'unique_consecutive' is not implemented.")


def _unique_flat(a):
    xp = namespace(a)
    flat = a.reshape(-1)
    try:  # each nan its own value, as in PyTorch (NumPy >= 1.24 merges them by default)
        values, inverse, counts = xp.unique(flat, return_inverse=True, return_counts=True,
                                            equal_nan=False)
    except TypeError:  # an array library without equal_nan
        values, inverse, counts = xp.unique(flat, return_inverse=True, return_counts=True)
    return values, inverse.reshape(a.shape).astype(xp.int64), counts.astype(xp.int64)


def _unique_values(a):
    xp = namespace(a)
    try:
        return xp.unique(a.reshape(-1), equal_nan=False)
    except TypeError:
        return xp.unique(a.reshape(-1))


def unique(input, sorted=True, return_inverse=False, return_counts=False,  # noqa: A002
           dim=None):
    """The distinct values of ``input`` (sorted), with optionally the index of each element's
    value (``return_inverse``) and each value's count (``return_counts``); with ``dim``, the
    distinct slices along ``dim``."""
    if fw.active:  # no forward derivative, as PyTorch
        refuse_forward("_unique2", input, not_yet=True)
    a = _data(input, "unique")
    xp = namespace(a)
    if dim is None:
        if return_inverse or return_counts:
            values, inverse, counts = _unique_flat(a)
        else:  # (the values alone: a sort, no argsort)
            return _recorded(input, _unique_values(a), _UNIQUE)
        out = _recorded(input, values, _UNIQUE)
    else:
        d = _dim(dim, a.ndim, "unique")
        if a.ndim == 0:
            raise dim_error(dim, 0)
        values, inverse, counts = xp.unique(a, return_inverse=True, return_counts=True, axis=d)
        inverse = inverse.reshape(-1).astype(xp.int64)
        out = _recorded(input, values, _UNIQUE_DIM)
    extra = [make_tensor(x.astype(xp.int64)) for x, want in ((inverse, return_inverse),
                                                              (counts, return_counts)) if want]
    return (out, *extra) if extra else out


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """Each run of equal consecutive values (or slices along ``dim``) kept once."""
    if fw.active:
        refuse_forward("unique_consecutive", input, not_yet=True)
    a = _data(input, "unique_consecutive")
    xp = namespace(a)
    if dim is None:
        rows = a.reshape(-1, 1)
    else:
        if a.ndim == 0:
            raise dim_error(dim, 0)
        d = _dim(dim, a.ndim, "unique_consecutive")
        rows = xp.moveaxis(a, d, 0).reshape(a.shape[d], -1)
    n = rows.shape[0]
    starts = xp.ones((n,), dtype=bool)
    if n > 1:
        starts[1:] = (rows[1:] != rows[:-1]).any(axis=1) if rows.shape[1] else False
    first = xp.flatnonzero(starts)
    if dim is None:
        values = a.reshape(-1)[first]
        inverse = (xp.cumsum(starts) - 1).reshape(a.shape)
    else:
        values = xp.take(a, first, axis=d)
        inverse = xp.cumsum(starts) - 1
    out = _recorded(input, values, _UNIQUE_CONSECUTIVE)
    counts = xp.diff(xp.append(first, n))
    extra = [make_tensor(x.astype(xp.int64)) for x, want in ((inverse, return_inverse),
                                                              (counts, return_counts)) if want]
    return (out, *extra) if extra else out


# ----------------------------------------------------------------- searching


def _search(seq, values, right, out_int32, fn, sorter=None):
    xp = namespace(seq)
    side = "right" if right else "left"
    dtype = _index_dtype(xp, out_int32)
    if seq.ndim > 1 and (values.ndim == 0 or seq.shape[:-1] != values.shape[:-1]):
        raise RuntimeError(
            f"torch.{fn}(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(seq.shape)} and input value tensor {list(values.shape)}")
    if seq.dtype.kind == "b" and values.dtype.kind == "b":
        # the kernel (after the shape checks) has no bool version; one bool operand is
        # promoted to the other's dtype
        raise NotImplementedError(f"\"searchsorted_out_cpu\" not implemented for 'Bool' "
                                  f"({fn} of bool boundaries and bool values: convert one "
                                  "first, e.g. x.int())")
    if sorter is not None:
        seq = xp.take_along_axis(seq, sorter, axis=-1)
    if seq.ndim <= 1:
        return xp.searchsorted(seq, values, side=side).astype(dtype)
    rows_s = seq.reshape(-1, seq.shape[-1])
    rows_v = values.reshape(-1, values.shape[-1])
    out = xp.empty(rows_v.shape, dtype=dtype)
    for i in builtins.range(rows_s.shape[0]):
        out[i] = xp.searchsorted(rows_s[i], rows_v[i], side=side)
    return out.reshape(values.shape)


def _values_array(values, like, fn):
    if isinstance(values, Tensor):
        return values._data
    if isinstance(values, (bool, int, float)):
        return namespace(like).asarray(values)
    raise TypeError(f"{fn}(): argument 'input' must be Tensor or Number, not "
                    f"{type(values).__name__}")


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False,  # noqa: A002
                 side=None, sorter=None):
    """For each value of ``input``, the index where it would be inserted into the sorted
    innermost dimension of ``sorted_sequence`` (``right``/``side='right'``: after equals)."""
    seq = _data(sorted_sequence, "searchsorted", "sorted_sequence")
    values = _values_array(input, seq, "searchsorted")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to "
                               "opposites, got side of left while right was True")
        right = side == "right"
    sort = None
    if sorter is not None:
        sort = _data(sorter, "searchsorted", "sorter")
        if sort.shape != seq.shape:
            raise RuntimeError(
                "torch.searchsorted(): boundary and sorter must have the same size, but got "
                f"boundary tensor {list(seq.shape)}and got sorter tensor {list(sort.shape)}")
    return make_tensor(_search(seq, values, right, out_int32, "searchsorted", sort))


def bucketize(input, boundaries, *, out_int32=False, right=False):  # noqa: A002
    """The index of the bucket (between consecutive ``boundaries``) of each value."""
    b = _data(boundaries, "bucketize", "boundaries", 2)
    if b.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({b.ndim})")
    values = _values_array(input, b, "bucketize")
    return make_tensor(_search(b, values, right, out_int32, "bucketize"))


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each of ``elements`` is in ``test_elements`` (a bool tensor)."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError(
            f"isin() received an invalid combination of arguments - got "
            f"({type(elements).__name__}, {type(test_elements).__name__}), but expected "
            "one of: (Tensor elements, Tensor test_elements, ...), (Number element, Tensor "
            "test_elements, ...), (Tensor elements, Number test_element, ...)")
    for v in (elements, test_elements):
        if v.__class__ is bool or (isinstance(v, Tensor) and v._data.dtype.kind == "b"):
            raise RuntimeError("Unsupported input type encountered for isin(): Bool (convert "
                               "the bools first, e.g. x.int())")
    like = (elements if isinstance(elements, Tensor) else test_elements)._data
    xp = namespace(like)
    e = elements._data if isinstance(elements, Tensor) else xp.asarray(elements)
    t = test_elements._data if isinstance(test_elements, Tensor) else xp.asarray(test_elements)
    return make_tensor(xp.isin(e, t, assume_unique=assume_unique, invert=invert))


# ----------------------------------------------------------------- counting


_BINCOUNT = _refusing("NotImplemented", "derivative for aten::bincount is not implemented",
                      RuntimeError)


def bincount(input, weights=None, minlength=0):  # noqa: A002
    """How often each non-negative integer occurs in the 1-D ``input`` (or the sum of its
    ``weights``), at least ``minlength`` bins."""
    if fw.active:
        refuse_forward("aten::bincount", weights)
    a = _data(input, "bincount")
    xp = namespace(a)
    if a.dtype.kind not in "iub" or a.dtype.kind == "b":
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for "
                                  f"'{scalar_type_name(a.dtype)}' (bincount counts integers)")
    if minlength < 0:
        raise RuntimeError(f"minlength should be >= 0 (got {minlength})")
    if a.ndim != 1 or (a.size and a.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs. (got a "
                           f"tensor of shape {list(a.shape)})")
    if weights is None:
        return make_tensor(xp.bincount(a, minlength=minlength).astype(xp.int64, copy=False))
    w = _data(weights, "bincount", "weights", 2)
    if w.shape != a.shape:
        raise RuntimeError(f"weights should be 1-d and have the same length as input (input "
                           f"{list(a.shape)}, weights {list(w.shape)})")
    out_dtype = w.dtype if w.dtype.kind == "f" else xp.float64
    values = xp.bincount(a, weights=w, minlength=minlength).astype(out_dtype, copy=False)
    return _recorded(weights, values, _BINCOUNT)


def count_nonzero(input, dim=None):  # noqa: A002
    """The number of nonzero elements (over ``dim``: an int or a tuple of ints)."""
    a = _data(input, "count_nonzero")
    xp = namespace(a)
    if dim is None:
        axes = None
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        axes = tuple(_dim(d, a.ndim, "count_nonzero") for d in dims)
        if len(set(axes)) != len(axes):
            raise RuntimeError(f"dim {axes[0]} appears multiple times in the list of dims")
        if a.ndim == 0:
            axes = None
    # (row-major, as PyTorch's reductions: NumPy's follows the input's order)
    return make_tensor(row_major(xp.asarray(xp.count_nonzero(a, axis=axes), dtype=xp.int64)))


def argwhere(input):  # noqa: A002
    """The indices of the nonzero elements, one row per element: shape (n, input.dim())."""
    a = _data(input, "argwhere")
    xp = namespace(a)
    found = xp.argwhere(a).astype(xp.int64)
    return make_tensor(found.reshape(found.shape[0], a.ndim))


# ----------------------------------------------------------------- histograms


def _float_input(a, kernel):
    if a.dtype.kind != "f":
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{scalar_type_name(a.dtype)}' (convert with .float())")


_BLOCK = 1 << 16


def _linear_bins(xp, a, bins, lo, hi, local_search):
    """Bin positions as PyTorch's histogram kernel: linear interpolation, then (histogram,
    not histc) one step of local search against the edges."""
    keep = (a >= lo) & (a <= hi)
    a = a[keep]
    pos = ((a - lo) * bins / (hi - lo)).astype(xp.int64) if hi > lo else \
        xp.zeros(a.shape, dtype=xp.int64)
    pos = xp.minimum(pos, bins - 1)
    if local_search:
        edges = xp.linspace(lo, hi, bins + 1).astype(a.dtype)
        pos = pos - (a < edges[pos])
        pos = pos + ((a >= edges[pos + 1]) & (pos + 1 < bins))
    return pos, keep


def histc(input, bins=100, min=0, max=0):  # noqa: A002
    """A histogram of ``bins`` equal bins between ``min`` and ``max`` (both 0: the data's
    range); elements outside are ignored."""
    a = _data(input, "histc")
    xp = namespace(a)
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for "
                           "dimension 0")
    if max < min:
        raise RuntimeError(f"torch.histc: max must be larger than min (got min={min}, "
                           f"max={max})")
    _float_input(a, "histogram_cpu")  # (after the argument checks, as PyTorch's)
    lo, hi = float(min), float(max)
    if lo == hi and a.size:
        lo, hi = float(a.min()), float(a.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (xp.isfinite(lo) and xp.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not finite")
    flat, lo, hi = a.reshape(-1), a.dtype.type(lo), a.dtype.type(hi)
    counts = xp.zeros((bins,), dtype=xp.int64)
    for i in builtins.range(0, flat.size, _BLOCK):  # (blocks that stay in cache, as NumPy)
        pos, _ = _linear_bins(xp, flat[i:i + _BLOCK], bins, lo, hi, False)
        counts += xp.bincount(pos, minlength=bins)
    return make_tensor(counts.astype(a.dtype))


_HISTOGRAM = _refusing("NotImplemented", "derivative for aten::histogram is not implemented",
                       RuntimeError)


@quiet_fp
def histogram(input, bins, *, range=None, weight=None, density=False):  # noqa: A002
    """A histogram of ``input``: ``bins`` equal bins over ``range`` (default: the data's) or
    the given bin edges (a 1-D tensor); returns ``(hist, bin_edges)``."""
    if fw.active:
        refuse_forward("aten::histogram", input, weight)
    a = _data(input, "histogram")
    _float_input(a, "histogramdd")
    xp = namespace(a)
    flat = a.reshape(-1)
    w = None
    if weight is not None:
        w = _data(weight, "histogram", "weight").reshape(-1)
        if weight.shape != input.shape:
            raise RuntimeError(f"torch.histogram(): if weight tensor is provided it should have "
                               f"the same shape as the input tensor excluding its innermost "
                               f"dimension, but got input with shape {list(a.shape)} and "
                               f"weight with shape {list(weight.shape)}")
    if isinstance(bins, Tensor):
        edges = bins._data
        if edges.ndim != 1 or edges.size < 1:
            raise RuntimeError("torch.histogram(): bins tensor should have one dimension and "
                               f"at least 1 element, but got {list(edges.shape)}")
        n = edges.size - 1
        if n > 0:
            keep = (flat >= edges[0]) & (flat <= edges[-1])
            pos = xp.searchsorted(edges, flat[keep], side="right") - 1
            pos = xp.minimum(pos, n - 1)  # the last edge belongs to the last bin
        else:
            keep, pos = xp.zeros(flat.shape, dtype=bool), xp.zeros((0,), dtype=xp.int64)
    else:
        n = operator.index(bins)
        if n <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {n} for "
                               "dimension 0")
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
            if lo > hi:
                raise ValueError(f"torch.histogram(): min should not exceed max, but got min "
                                 f"{lo} max {hi}")
        elif flat.size:
            lo, hi = float(flat.min()), float(flat.max())
        else:
            lo, hi = 0.0, 1.0  # (PyTorch's range for no data)
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = xp.linspace(lo, hi, n + 1).astype(a.dtype)
        pos, keep = _linear_bins(xp, flat, n, a.dtype.type(lo), a.dtype.type(hi), True)
    weights = None if w is None else w[keep]
    hist = xp.bincount(pos, weights=weights, minlength=builtins.max(n, 0))[:builtins.max(n, 0)]
    hist = hist.astype(a.dtype)
    if density and n > 0:
        widths = xp.diff(edges)
        total = hist.sum()
        hist = (hist / (total * widths)).astype(a.dtype)
    leader = weight if weight is not None and not input._requires_grad else input
    # PyTorch records both outputs when the input or weight requires grad
    return histogram_type(_recorded(leader, hist, _HISTOGRAM),
                          _recorded(leader, edges.astype(a.dtype), _HISTOGRAM))


# ----------------------------------------------------------------- index arithmetic


def unravel_index(indices, shape):
    """The coordinates (one tensor per dimension of ``shape``) of flat ``indices``."""
    idx = _data(indices, "unravel_index", "indices")
    xp = namespace(idx)
    if idx.dtype.kind not in "iu" or idx.dtype.kind == "b":
        raise TypeError(f"expected 'indices' to be integer dtype, but got "
                        f"{dtypes.to_dtype(idx.dtype)}")
    sizes = (shape,) if isinstance(shape, int) else tuple(shape)
    for s in sizes:
        if isinstance(s, bool) or not isinstance(s, int) and not hasattr(s, "__index__"):
            raise TypeError(f"expected 'shape' to be int or sequence of ints, but got "
                            f"{type(s).__name__}")
        if operator.index(s) < 0:
            raise ValueError(f"'shape' cannot have negative values, but got {tuple(sizes)}")
    rest = idx.astype(xp.int64)
    coords = []
    for s in reversed(sizes):  # floor division: -1 is the last element, as PyTorch
        s = operator.index(s)
        coords.append(rest % s if s else rest * 0)
        rest = rest // s if s else rest
    return tuple(make_tensor(c) for c in reversed(coords))


def _triangle_indices(name, lower):
    def fn(row, col, offset=0, *, dtype=None, device=None, layout=None,
           requires_grad=False):
        for pos, (v, what) in enumerate(((row, "row"), (col, "col"), (offset, "offset")), 1):
            if v.__class__ is not int and v.__class__ in PY_VALUES:  # (2.5, True, None...)
                raise TypeError(f"{name}(): argument '{what}' (position {pos}) must be int, "
                                f"not {type(v).__name__}")
        for v, what in ((row, "row"), (col, "col")):
            if v < 0:
                raise RuntimeError(f"{what} must be non-negative, got{v}")
        np_dtype = dtypes.to_dtype(dtype).numpy if dtype is not None else np.int64
        if requires_grad:
            raise RuntimeError(f"{name}(): only Tensors of floating point dtype can require "
                               "gradients (the indices are integers)")
        # no input array to take a namespace from: host arrays, as _creation.py makes them
        make = np.tril_indices if lower else np.triu_indices
        r, c = make(row, offset, col)
        return make_tensor(np.stack([r, c]).astype(np_dtype).reshape(2, -1))

    fn.__name__ = name
    fn.__doc__ = (f"The (row, col) indices of the {'lower' if lower else 'upper'} triangle of "
                  f"a row x col matrix (``offset`` shifts the diagonal): a (2, N) tensor.")
    return fn


tril_indices = _triangle_indices("tril_indices", True)
triu_indices = _triangle_indices("triu_indices", False)


# ----------------------------------------------------------------- fill_diagonal_


def fill_diagonal_(input, fill_value, wrap=False):  # noqa: A002
    """Write ``fill_value`` on the main diagonal (``x[i, i, ..., i]``), in place; ``wrap``:
    a tall matrix's diagonal starts again every ``cols + 1`` rows (NumPy's fill_diagonal).
    Done through diagonal views, so the graph is PyTorch's (CopySlices)."""
    a = _data(input, "fill_diagonal_")
    if a.ndim < 2:
        raise RuntimeError(f"dimensions must larger than 1 (fill_diagonal_ of a tensor of "
                           f"shape {list(a.shape)})")
    if a.ndim > 2 and len(set(a.shape)) != 1:
        raise RuntimeError(f"all dimensions of input must be of equal length (fill_diagonal_ "
                           f"of a tensor of shape {list(a.shape)})")
    rows, cols = a.shape[0], a.shape[1]
    if a.ndim == 2 and wrap and rows > cols:
        blocks = [input[s:s + cols] for s in builtins.range(0, rows, cols + 1)]
    else:
        blocks = [input]
    for block in blocks:
        diag = block
        for _ in builtins.range(a.ndim - 1):
            diag = diag.diagonal(0, 0, 1)
        diag.fill_(fill_value)
    return input


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

# unique, unique_consecutive, bincount, count_nonzero: no signature= (which adds out=):
# PyTorch's take no out= and raise TypeError for one
register(unique, differentiable=False)
register(unique_consecutive, differentiable=False)
register(searchsorted, method=False, differentiable=False,
         signature="sorted_sequence, input, *, out_int32=False, right=False, side=None, "
                   "sorter=None")
register(bucketize, method=False, differentiable=False,
         signature="input, boundaries, *, out_int32=False, right=False")
register(isin, method=False, differentiable=False,
         signature="elements, test_elements, *, assume_unique=False, invert=False")
register(bincount, differentiable=False)
register(count_nonzero, differentiable=False)
register(argwhere, differentiable=False, signature="input")
register(histc, differentiable=False, signature="input, bins=100, min=0, max=0")
register(histogram, differentiable=False, tuple_out=True,  # out=(hist, bin_edges)
         signature="input, bins, *, range=None, weight=None, density=False")
register(unravel_index, method=False, differentiable=False)
register(tril_indices, method=False, differentiable=False)
register(triu_indices, method=False, differentiable=False)
register(fill_diagonal_, function=False)
