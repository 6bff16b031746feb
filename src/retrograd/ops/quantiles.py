"""Order statistics: median, nanmedian, mode, quantile, nanquantile.

Which element a value came from decides where its gradient goes, so the index choices
follow PyTorch's CPU kernels exactly (each is written next to its op):

* ``median(dim)`` / ``nanmedian(dim)``: the element at position ``(n - 1) // 2`` of a
  *stable* sort (PyTorch's nth_element breaks ties by index), nans last; ``median``
  returns the first nan of a slice that has one.
* ``median()`` / ``nanmedian()`` without dim: the gradient is shared evenly among the
  elements equal to the result (among the nans when it is nan), PyTorch's
  evenly_distribute_backward.
* ``mode``: the most frequent value (the smallest among equally frequent ones) and the
  last index where it occurs; the gradient goes to that index.
* ``quantile``: PyTorch's own composition (sort, gather below and above the rank, lerp),
  so the gradient goes to the sorted positions it reads, and the graph is PyTorch's.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as _np

from ..backend import namespace
from ..tensor import Tensor, make_tensor
from ._apply import INPUTS, NOTHING, OUTPUT, defop
from ._errors import scalar_type_name
from .binary import lerp
from .index import gather
from .reduce import _extreme_all_vjp, _one_dim, _select_fwd, _select_vjp
from .shape import reshape, reshape_op, transpose, unsqueeze
from .sorting import _order, _sorted, picked
from .stats import quiet
from .quiet_fp import quiet_fp

median_type = namedtuple("median", ["values", "indices"])
nanmedian_type = namedtuple("nanmedian", ["values", "indices"])
mode_type = namedtuple("mode", ["values", "indices"])


# ----------------------------------------------------------------- median / nanmedian


# the median of nothing, as PyTorch's NaN cast to the dtype on x86: the "integer
# indefinite" 0x80...0 for int32/int64, its low bits (0) for the narrower ones, True for bool
_NAN_AS = {"i8": -(2 ** 63), "i4": -(2 ** 31), "i2": 0, "i1": 0, "u1": 0, "b1": True}


def _median_all_fwd(a, ignore_nan):
    xp = namespace(a)
    flat = a.reshape(-1)
    if flat.size == 0:  # PyTorch fills in NaN cast to the dtype (seeds 11034350, 11044285)
        return xp.asarray(_NAN_AS.get(a.dtype.str[1:], xp.nan), dtype=a.dtype)
    if not ignore_nan and a.dtype.kind == "f" and xp.isnan(flat).any():
        return xp.asarray(xp.nan, dtype=a.dtype)
    n = int((~xp.isnan(flat)).sum()) if ignore_nan and a.dtype.kind == "f" else flat.size
    k = max((n - 1) // 2, 0)
    return xp.asarray(xp.partition(flat, k)[k])  # (nans sort last)


# evenly_distribute_backward, shared with max()/min() (reduce._extreme_all_vjp)
_median_all = defop("median", _median_all_fwd, _extreme_all_vjp, "MedianBackward0", 1,
                    INPUTS | OUTPUT)
_nanmedian_all = defop("nanmedian", _median_all_fwd, _extreme_all_vjp, "NanmedianBackward0",
                       1, INPUTS | OUTPUT)


# value_selecting_reduction_backward, shared with max/min(dim) (reduce._select_vjp)
_median_dim = defop("median", _select_fwd, _select_vjp, "MedianBackward1", 1, NOTHING)
_nanmedian_dim = defop("nanmedian", _select_fwd, _select_vjp, "NanmedianBackward1", 1, NOTHING)
_mode = defop("mode", _select_fwd, _select_vjp, "ModeBackward0", 1, NOTHING)


def _median_index(a, d, ignore_nan):
    """PyTorch's median index along ``d`` (kept as size 1)."""
    xp = namespace(a)
    n = a.shape[d]
    if n and (a.dtype.kind != "f" or not xp.isnan(a).any()):
        return _stable_position(a, (n - 1) // 2, d)
    order = xp.argsort(a, axis=d, kind="stable")  # ties by index; nans last, by index
    if a.dtype.kind != "f":
        return xp.take(order, [(n - 1) // 2], axis=d).astype("int64")
    nans = xp.isnan(a)
    if ignore_nan:
        count = n - nans.sum(axis=d, keepdims=True)
        k = xp.maximum((count - 1) // 2, 0)
        idx = xp.take_along_axis(order, k, axis=d)
        # an all-nan slice: every element is equivalent under PyTorch's comparator, so
        # which one std::nth_element leaves first depends on the slice's length only
        return xp.where(count == 0, _all_equivalent_first(n), idx).astype("int64")
    idx = xp.take(order, [(n - 1) // 2], axis=d)
    has_nan = nans.any(axis=d, keepdims=True)
    return xp.where(has_nan, xp.argmax(nans, axis=d, keepdims=True), idx).astype("int64")


def _stable_position(a, k, d):
    """The index at position ``k`` of a stable sort along ``d`` (kept as size 1), without
    sorting: the k-th value by partition, then, among the elements equal to it, the one
    that k - (how many are smaller) elements equal to it precede.  No nans."""
    xp = namespace(a)
    v = xp.take(xp.partition(a, k, axis=d), [k], axis=d)
    eq = a == v
    if not (eq.sum(axis=d) > 1).any():  # no ties at the k-th value (the usual case): the
        return xp.argmax(eq, axis=d, keepdims=True).astype("int64")  # one equal element
    rank = k - (a < v).sum(axis=d, keepdims=True)  # among the equal ones, 0-based
    hit = eq & (xp.cumsum(eq, axis=d) == rank + 1)
    return xp.argmax(hit, axis=d, keepdims=True).astype("int64")


def _all_equivalent_first(n):
    """The index libstdc++'s std::nth_element (introselect, nth = first) leaves first among
    ``n`` equivalent elements: its median-of-three and partition swaps, replayed."""
    idx = list(range(n))
    first, last = 0, n
    depth = 2 * (n.bit_length() - 1)
    while last - first > 3 and depth > 0:
        depth -= 1
        mid = first + (last - first) // 2
        idx[first], idx[mid] = idx[mid], idx[first]  # every comparison is false
        lo, hi = first + 1, last
        while True:
            hi -= 1
            if not lo < hi:
                break
            idx[lo], idx[hi] = idx[hi], idx[lo]
            lo += 1
        if lo <= 0:
            first = lo
        else:
            last = lo
    return idx[first]


def _check_median_dtype(x, name, dim=0):
    # (PyTorch: an empty bool tensor's median is NaN as True; along an empty dim, the
    # IndexError comes first: seed 11200587)
    if x._data.dtype.kind == "b" and x._data.size == 0 and (
            dim is None or (x.ndim and x.shape[(_one_dim(dim, x.ndim, name) or (0,))[0]] == 0)):
        return
    if x._data.dtype.kind == "b":
        if dim is not None:  # (a dim out of range: PyTorch's IndexError comes first)
            _one_dim(dim, x.ndim, name)
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for 'Bool'; convert first "
                                  "(x.int())")


def _median(x, dim, keepdim, ignore_nan):
    name = "nanmedian" if ignore_nan else "median"
    _check_median_dtype(x, name, dim)
    kind = nanmedian_type if ignore_nan else median_type
    if dim is None:
        return (_nanmedian_all if ignore_nan else _median_all)(x, ignore_nan)
    d = (_one_dim(dim, x.ndim, name) or (0,))[0]
    xp = namespace(x._data)
    op = _nanmedian_dim if ignore_nan else _median_dim
    if x.ndim == 0:
        idx = xp.zeros((), dtype="int64")
        return picked(kind, op(x, idx, 0, keepdim, ()), idx)
    if x.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    idx = _median_index(x._data, d, ignore_nan)
    return picked(kind, op(x, idx, d, keepdim, tuple(x.shape)), idx if keepdim else idx.squeeze(d))


def median(x, dim=None, keepdim=False):
    """The lower median of all elements (nan if any is nan), or ``(values, indices)`` along
    ``dim``.

    Examples
    --------
    >>> import retrograd as T
    >>> T.tensor([3.0, 1.0, 2.0, 4.0]).median()
    tensor(2.)
    """
    return _median(x, dim, keepdim, False)


def nanmedian(x, dim=None, keepdim=False):
    """``median`` ignoring nans (nan only where every element is nan)."""
    return _median(x, dim, keepdim, True)


# ----------------------------------------------------------------- mode


def _mode_index(a, d):
    """The most frequent value along ``d`` (the smallest of equally frequent ones) and the
    last index where it occurs (kept as size 1)."""
    xp = namespace(a)
    moved = xp.moveaxis(a, d, -1)
    n = moved.shape[-1]
    s = xp.sort(moved, axis=-1)
    with quiet(xp):
        new = xp.ones(s.shape, dtype=bool)
        new[..., 1:] = s[..., 1:] != s[..., :-1]
    pos = xp.arange(n)
    start = xp.maximum.accumulate(xp.where(new, pos, 0), axis=-1)  # the run's first position
    # the end of the longest run; argmax takes the first, i.e. the smallest value
    end = xp.argmax(pos - start, axis=-1)[..., None]
    value = xp.take_along_axis(s, end, axis=-1)
    # the last index where it occurs, as PyTorch's (exact where its std::sort is stable:
    # slices of up to 16 elements, where libstdc++ sorts by insertion)
    hit = (moved == value) | ((value != value) & (moved != moved))
    idx = (n - 1 - xp.argmax(hit[..., ::-1], axis=-1))[..., None].astype("int64")
    if a.dtype.kind == "f":
        with quiet(xp):
            nan_slices = xp.isnan(moved).any(axis=-1)
        if nan_slices.any():  # (rare: a Python loop over those slices only)
            host = _np.asarray(moved.get() if hasattr(moved, "get") else moved)
            flat_idx = idx.reshape(-1).copy()
            rows = host.reshape(-1, n)
            for r in _np.flatnonzero(_np.asarray(nan_slices).reshape(-1)):
                flat_idx[r] = _torch_mode_with_nan(rows[r].tolist())
            idx = xp.asarray(flat_idx.reshape(idx.shape))
    return xp.moveaxis(idx, -1, d)


def _torch_mode_with_nan(values):
    """The index PyTorch's CPU mode gives for a slice with a NaN: its kernel std::sorts
    (value, index) pairs by ``a < b``, which NaN (never less, nothing less than it) leaves
    in place, then takes the first longest run of equal values (NaN != NaN: runs of one), so
    mode([nan, 0.4]) is nan and mode([0.4, nan]) 0.4 (seed 11062220).  libstdc++ sorts up to
    16 elements by insertion, emulated here exactly; past 16 its introsort's order depends on
    the partitioning, which this does not copy (a real mode of the non-NaN values or a NaN,
    not always PyTorch's)."""
    pairs = list(enumerate(values))
    for i in range(1, len(pairs)):  # libstdc++'s __insertion_sort with comp(a, b) = a < b
        item = pairs[i]
        if item[1] < pairs[0][1]:
            pairs[1:i + 1] = pairs[:i]
            pairs[0] = item
        else:
            j = i
            while item[1] < pairs[j - 1][1]:
                pairs[j] = pairs[j - 1]
                j -= 1
            pairs[j] = item
    best, best_at, run = 0, 0, 0
    for i, (_, v) in enumerate(pairs):
        run += 1
        if i == len(pairs) - 1 or v != pairs[i + 1][1]:
            if run > best:
                best, best_at = run, i
            run = 0
    return pairs[best_at][0]


def mode(x, dim=-1, keepdim=False):
    """``(values, indices)``: the most frequent value along ``dim`` (the smallest among
    equally frequent ones) and the last index where it occurs.

    The values are always PyTorch's.  The index is PyTorch's wherever PyTorch's is
    well-defined: its CPU kernel sorts (value, index) pairs by value with ``std::sort`` and
    returns the index that lands last in the mode's run.  libstdc++'s ``std::sort`` is an
    insertion sort (stable) for up to 16 elements, so there PyTorch returns the last
    occurrence, as here; past 16 elements it is an introsort, which leaves equal values in
    an order that depends on the partitioning, so PyTorch returns *some* occurrence of the
    mode (measured on torch 2.13: not the last one in about 85% of random 17-64 element
    slices with ties).  retrograd keeps the last occurrence there too: a real index of the
    mode, the same on every platform, but not always PyTorch's.

    Examples
    --------
    >>> import retrograd as T
    >>> T.tensor([1.0, 2.0, 2.0, 3.0]).mode()
    mode(values=tensor(2.), indices=tensor(2))
    """
    d = (_one_dim(dim, x.ndim, "mode") or (0,))[0]
    xp = namespace(x._data)
    if x.ndim == 0:
        idx = xp.zeros((), dtype="int64")
        return picked(mode_type, _mode(x, idx, 0, keepdim, ()), idx)
    if x.shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    idx = _mode_index(x._data, d)
    return picked(mode_type, _mode(x, idx, d, keepdim, tuple(x.shape)),
                  idx if keepdim else idx.squeeze(d))


# ----------------------------------------------------------------- quantile


def _squeeze_fwd(a, shape, in_shape):
    return a.reshape(shape)


def _squeeze_vjp(node, g, saved):
    shape, in_shape = node.params
    return (reshape_op(g, in_shape, shape),)


# PyTorch's quantile ends with in-place reshapes (squeeze_(-1), unsqueeze_(0)) and a
# transpose_: their grad_fn names
_squeeze4 = defop("squeeze", _squeeze_fwd, _squeeze_vjp, "SqueezeBackward4", 1, NOTHING)
_unsqueeze1 = defop("unsqueeze", _squeeze_fwd, _squeeze_vjp, "UnsqueezeBackward1", 1, NOTHING)
_transpose1 = defop("transpose", lambda a, d0, d1: namespace(a).swapaxes(a, d0, d1),
                    lambda node, g, saved: (_transpose1(g, *node.params),),
                    "TransposeBackward1", 1, NOTHING)

_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


# at most this many distinct positions read: a partition (O(n)) instead of a full sort
_PARTIAL_MAX = 16

# SortBackward0 (sort's derivative, _select_vjp: the gradient scattered back to ``idx``)
# whose forward is handed the values, found by a partition: correct at the positions
# quantile reads, which is all that the graph ever reads of them
_sort_read = defop("sort", lambda a, idx, values, dim, keepdim, in_shape: values, _select_vjp,
                   "SortBackward0", 1, NOTHING)


def _partial_sort(a, lo, hi, nans):
    """``(indices, values)`` of a stable sort of ``a`` along its last dim, right at the
    positions ``lo`` and ``hi`` (the same in every slice) read: there the values, and the
    index each comes from (ties by index, nans last), are the full sort's; elsewhere the
    indices are still a permutation (SortBackward0 scatters through them) and the values
    are only partitioned.  ``None`` where too many positions are read (sort everything)."""
    xp = namespace(a)
    n = a.shape[-1]
    ks = xp.unique(xp.concatenate([lo.reshape(-1), hi.reshape(-1)])).astype("int64")
    if a.ndim == 0 or n == 0 or len(ks) > _PARTIAL_MAX:
        return None
    ks = [int(k) for k in ks]
    values = xp.partition(a, ks, axis=-1)  # (nans last, as the sort)
    flat = a.reshape(-1, n)
    part = values.reshape(-1, n)
    isnan = nans.reshape(-1, n)
    wants = []
    for k in ks:
        v = part[:, k][:, None]
        vnan = xp.isnan(v)
        same = (flat == v) | (vnan & isnan) if vnan.any() else flat == v
        want = xp.argmax(same, axis=-1)  # the first element equal to v
        ties = same.sum(axis=-1) > 1
        if ties.any():  # the (k - #smaller)-th of the equal elements, in index order
            t = xp.nonzero(ties)[0]
            ft, st, vt = flat[t], same[t], v[t]
            smaller = xp.where(vnan[t], ~isnan[t], ft < vt).sum(axis=-1)
            hit = st & (xp.cumsum(st, axis=-1) == (k - smaller + 1)[:, None])
            want[t] = xp.argmax(hit, axis=-1)
        wants.append(want)
    # a permutation with wants at ks: the identity, except that positions ks take wants
    # and the indices ks that no position k wants go where those wants were
    w = xp.stack(wants, axis=1)  # (slices, J)
    kk = xp.asarray(ks)
    k_wanted = (kk[None, :, None] == w[:, None, :]).any(axis=-1)
    w_in_k = (w[:, :, None] == kk[None, None, :]).any(axis=-1)
    big = n + 1
    homeless = xp.sort(xp.where(k_wanted, big, kk[None, :]), axis=-1)
    free = xp.sort(xp.where(w_in_k, big, w), axis=-1)
    order = xp.broadcast_to(xp.arange(n, dtype="int64"), flat.shape).copy()
    rows, cols = xp.nonzero(homeless < big)
    order[rows, free[rows, cols]] = homeless[rows, cols]
    order[:, kk] = w
    return order.reshape(a.shape), values


@quiet_fp
def _quantile(x, q, dim, keepdim, interpolation, ignore_nan):
    name = "nanquantile" if ignore_nan else "quantile"
    data = x._data
    xp = namespace(data)
    if data.size == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if data.dtype.kind != "f":
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype "
                           f"(got {scalar_type_name(data.dtype)}; convert first, e.g. "
                           "x.float())")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q._data.dtype != data.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        qd = q._data
    else:
        if not isinstance(q, (int, float)) or isinstance(q, bool):
            raise TypeError(f"{name}(): argument 'q' must be a float or a Tensor, not "
                            f"{type(q).__name__}")
        qd = xp.asarray(q, dtype=data.dtype)
    if interpolation not in _MODES:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if not ((qd >= 0) & (qd <= 1)).all():
        bad = float(qd) if qd.ndim == 0 else qd.tolist()
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {bad}"
                           if qd.ndim == 0 else f"{name}() q values must be in the range "
                           f"[0, 1] (got {bad})")
    # the output shape, then PyTorch's steps (Sorting.cpp quantile_compute)
    if dim is None:
        out_shape = [1] * x.ndim if keepdim else []
        flat = reshape(x, -1)
    else:
        d = (_one_dim(dim, x.ndim, name) or (0,))[0]
        out_shape = list(x.shape)
        if x.ndim:
            if keepdim:
                out_shape[d] = 1
            else:
                del out_shape[d]
        flat = x if x.ndim and d == x.ndim - 1 else transpose(unsqueeze(x, -1), d, -1)
    full = [int(qd.size) if qd.ndim else 1] + out_shape
    in_shape = tuple(full[1:]) + (flat.shape[-1],)  # PyTorch views sorted as (*, n)
    f = flat._data
    n = f.shape[-1]
    qv = qd.reshape(-1)
    rows = in_shape[:-1] + (1,)
    # the ranks come from the unsorted data (its nans, counted per slice: the same as the
    # sorted slice's), so the sort can stop at the positions they read
    with quiet(xp):
        nans = xp.isnan(f)
        if ignore_nan:
            ranks = qv * ((n - nans.sum(axis=-1)).reshape(rows) - 1)
            ranks = xp.where(ranks < 0, 0, ranks)
        else:
            ranks = xp.where(nans.any(axis=-1).reshape(rows), n - 1, qv * (n - 1))
    ranks = ranks.astype(data.dtype)
    if interpolation == "lower":
        ranks = xp.floor(ranks)
    elif interpolation == "higher":
        ranks = xp.ceil(ranks)
    elif interpolation == "nearest":
        ranks = xp.round(ranks)  # half to even, as PyTorch's round_
    partial = _partial_sort(f, xp.floor(ranks), xp.ceil(ranks), nans)
    if partial is None:  # SortBackward0, as PyTorch's sort
        sorted_ = _sorted(flat, _order(f, f.ndim - 1, False), flat.ndim - 1, True,
                          tuple(flat.shape))
    else:
        sorted_ = _sort_read(flat, partial[0], partial[1], flat.ndim - 1, True,
                             tuple(flat.shape))
    sorted_ = reshape_op(sorted_, in_shape, tuple(sorted_.shape))
    below = ranks.astype("int64")
    values = gather(sorted_, -1, make_tensor(below))
    if interpolation in ("linear", "midpoint"):
        weights = xp.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below
        above = xp.ceil(ranks).astype("int64")
        values = lerp(values, gather(sorted_, -1, make_tensor(above)),
                      make_tensor(weights.astype(data.dtype)))
    vs = tuple(values.shape)
    if qd.ndim == 0:
        return _squeeze4(values, vs[:-1], vs)
    values = _unsqueeze1(values, (1,) + vs, vs)
    values = _transpose1(values, 0, len(vs))
    ts = tuple(values.shape)
    return _squeeze4(values, ts[:-1], ts)


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):  # noqa: A002
    """The ``q``-th quantiles (``q`` a number or a 1-d tensor in [0, 1]) of all elements or
    along ``dim``; nan where a slice has a nan.  ``interpolation``: linear, lower, higher,
    midpoint or nearest (PyTorch's, from the sorted values).  A 1-d ``q`` adds a first
    dimension.

    Examples
    --------
    >>> import retrograd as T
    >>> T.tensor([1.0, 2.0, 3.0, 4.0]).quantile(0.5)
    tensor(2.5000)
    """
    return _quantile(input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):  # noqa: A002
    """``quantile`` ignoring nans (nan only where a slice is all nan)."""
    return _quantile(input, q, dim, keepdim, interpolation, True)


__all__ = ["median", "nanmedian", "mode", "quantile", "nanquantile"]


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

for _name in __all__:
    register(globals()[_name], _name, tuple_out=True)
