"""Sorting and selecting by value: sort, argsort, topk, kthvalue, nonzero.

The values come with the indices they were taken from; the derivative puts the gradient
back at those indices (``scatter_along``), as PyTorch's SortBackward0 / TopkBackward0.
Sorting is stable, so tied elements keep their order (what PyTorch's CPU sort gives).
"""

from __future__ import annotations

from collections import namedtuple

from ..backend import namespace
from ..tensor import make_tensor
from ._apply import NOTHING, defop
from .iter_layout import preserved_strides, strided_copy, with_strides
from .reduce import _select_fwd, _select_vjp
from .saved_checks import check_also
from ._errors import int_arg
from .shape import _norm_dim

# PyTorch's torch.return_types.<op>: a named tuple called after the op
_TYPES = {name: namedtuple(name, ["values", "indices"]) for name in ("sort", "topk", "kthvalue")}


def _sort_fwd(a, idx, dim, keepdim, in_shape):
    # the values take the indices' strides: PyTorch's sort allocates both alike (see sort)
    out = _select_fwd(a, idx, dim, keepdim, in_shape)
    if idx.flags.c_contiguous and 1 not in idx.shape:
        return out  # (the common case: row-major, as take_along_axis gives it)
    return with_strides(out, [s // idx.itemsize for s in idx.strides])


# the forward and derivative of every value-selecting reduction (reduce._select_fwd)
_sorted = defop("sort", _sort_fwd, _select_vjp, "SortBackward0", 1, NOTHING)
# PyTorch's sort.stable overload (``stable=`` given, even False or None) records this name
_sorted_stable = defop("sort", _sort_fwd, _select_vjp, "SortBackward1", 1, NOTHING)
_topk = defop("topk", _select_fwd, _select_vjp, "TopkBackward0", 1, NOTHING)
_kth = defop("kthvalue", _select_fwd, _select_vjp, "KthvalueBackward0", 1, NOTHING)


def picked(kind, values, idx):
    """``kind(values, indices)``: the indices a tensor of ``idx``, saved on the values' node
    for its version check, as PyTorch's node saves them.  The derivative scatters through
    the same array, so without the check an in-place change of the indices would move the
    gradient silently (PyTorch raises at backward)."""
    indices = make_tensor(idx)
    return kind(check_also(values, indices), indices)


def _picked(name, values, idx):
    return picked(_TYPES[name], values, idx)


def _order(data, dim, descending):
    xp = namespace(data)
    if data.ndim == 0:
        return xp.zeros((), dtype="int64")
    if descending:
        # stable and descending: sort the reversed array ascending, then reverse back
        flipped = xp.flip(data, axis=dim)
        idx = xp.argsort(flipped, axis=dim, kind="stable")
        n = data.shape[dim]
        return xp.flip(n - 1 - idx, axis=dim).astype("int64")
    return xp.argsort(data, axis=dim, kind="stable").astype("int64")


def _sort_order(data, dim, descending):
    """``_order`` laid out as PyTorch's sort lays out its values and indices: with the
    input's strides when non-overlapping and dense, else dense in its stride order (the
    preserve_format rule, ops/iter_layout.py), so sorting a transposed tensor gives a
    transposed result."""
    idx = _order(data, dim, descending)
    strides = preserved_strides(data)
    return idx if strides is None else strided_copy(idx, strides)


def _dim_of(x, dim):
    return _norm_dim(dim, x.ndim)  # 0 (or -1) for a 0-d tensor, as PyTorch


_NOT_GIVEN = object()


def _type_name(v):
    t = type(v)  # (numpy.bool, not "bool", for NumPy's bool: PyTorch refuses it too)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"


def _sort_args(name, x, args, kwargs, stable_may_be_none):
    """``(dim, descending, stable_given)`` by PyTorch's two overloads of sort/argsort:
    ``(input, dim=-1, descending=False)`` and ``(input, *, stable, dim=-1,
    descending=False)``: with ``stable=``, dim and descending are keywords only (PyTorch
    refuses ``sort(x, 0, stable=True)``).  Booleans must be bools (not 1, None, a NumPy
    bool); sort's ``stable`` may be None, argsort's may not."""
    kwargs = dict(kwargs)
    stable = kwargs.pop("stable", _NOT_GIVEN)
    for k in kwargs:
        if k not in ("dim", "descending"):
            raise TypeError(f"{name}() got an unexpected keyword argument {k!r} (it takes "
                            "dim, descending and stable)")
    if stable is not _NOT_GIVEN:
        if args:
            raise TypeError(
                f"{name}() received an invalid combination of arguments: with stable=, "
                f"pass dim and descending by keyword ({name}(x, dim=..., descending=..., "
                f"stable=...)), not as {len(args)} positional argument(s)")
        if not (stable.__class__ is bool or stable is None and stable_may_be_none):
            raise TypeError(f"{name}(): argument 'stable' must be bool, not "
                            f"{_type_name(stable)}")
    elif len(args) > 2:
        raise TypeError(f"{name}() takes at most 3 positional arguments (input, dim, "
                        f"descending) but {len(args) + 1} were given")
    given = dict(zip(("dim", "descending"), args))
    for k, v in kwargs.items():
        if k in given:
            raise TypeError(f"{name}() got multiple values for argument {k!r}")
        given[k] = v
    dim = given.get("dim", -1)
    if dim is None or dim.__class__ is bool or not hasattr(dim, "__index__"):
        raise TypeError(f"{name}(): argument 'dim' must be int, not {_type_name(dim)}")
    descending = given.get("descending", False)
    if descending.__class__ is not bool:
        raise TypeError(f"{name}(): argument 'descending' must be bool, not "
                        f"{_type_name(descending)}")
    return _dim_of(x, dim.__index__()), descending, stable is not _NOT_GIVEN


def sort(input, *args, **kwargs):  # noqa: A002 - PyTorch's name
    """``(values, indices)`` sorted along ``dim`` (ties keep their order): ``sort(x,
    dim=-1, descending=False)`` or ``sort(x, *, stable, dim=-1, descending=False)``.

    Examples
    --------
    >>> import retrograd as T
    >>> T.tensor([3.0, 1.0, 2.0]).sort()
    sort(values=tensor([1., 2., 3.]), indices=tensor([1, 2, 0]))
    """
    x = input
    d, descending, stable_given = _sort_args("sort", x, args, kwargs, True)
    idx = _sort_order(x._data, d, descending)
    op = _sorted_stable if stable_given else _sorted
    return _picked("sort", op(x, idx, d, True, tuple(x.shape)), idx)


def argsort(input, *args, **kwargs):  # noqa: A002 - PyTorch's name
    """The indices that sort ``x`` along ``dim``: ``argsort(x, dim=-1, descending=False)``
    or ``argsort(x, *, stable, dim=-1, descending=False)``."""
    d, descending, _ = _sort_args("argsort", input, args, kwargs, False)
    return make_tensor(_sort_order(input._data, d, descending))


def topk(x, k, dim=-1, largest=True, sorted=True):  # noqa: A002 - PyTorch's name
    """The ``k`` largest (or smallest) values along ``dim`` and their indices."""
    d = _dim_of(x, dim)
    k = int_arg(k, "k")
    if x._data.dtype.kind == "b":
        raise RuntimeError("topk does not support bool dtypes on CPU; convert first (x.int())")
    n = x.shape[d] if x.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError(f"topk(): selected index k out of range (k={k} for dimension {d} of "
                           f"size {n}); k must be in [0, {n}]")
    xp = namespace(x._data)  # (a 0-d tensor, even with k=0, gives the value itself)
    idx = _order(x._data, d, largest)
    idx = xp.take(idx, xp.arange(k), axis=d) if x.ndim else idx
    return _picked("topk", _topk(x, idx, d, True, tuple(x.shape)), idx)


def _aten_quickselect(vals, k):
    """The original index that ATen's quick_select_template (the kthvalue kernel) leaves at
    position ``k`` of ``vals`` (a list; nans largest): its exact steps, so that ties pick
    PyTorch's index and hence get its gradient."""
    arr, ind = list(vals), list(range(len(vals)))

    def gt(x, y):
        return (x != x and y == y) or x > y

    def swap(i, j):
        arr[i], arr[j] = arr[j], arr[i]
        ind[i], ind[j] = ind[j], ind[i]

    lo, hi = 0, len(arr) - 1
    while True:
        if hi <= lo:
            return ind[k]
        if hi == lo + 1:
            if gt(arr[lo], arr[hi]):
                swap(lo, hi)
            return ind[k]
        swap(lo + (hi - lo) // 2, lo + 1)  # median of three as the pivot
        if gt(arr[lo + 1], arr[hi]):
            swap(lo + 1, hi)
        if gt(arr[lo], arr[hi]):
            swap(lo, hi)
        if gt(arr[lo + 1], arr[lo]):
            swap(lo + 1, lo)
        i, j, pivot = lo + 1, hi, arr[lo]
        while True:
            i += 1
            while gt(pivot, arr[i]):
                i += 1
            j -= 1
            while gt(arr[j], pivot):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1


def _kth_index(a, d, k):
    """kthvalue's index (kept as size 1 along ``d``): where the k-th value (found by
    partition, no full sort) occurs once in its slice, that place; where it is tied or nan,
    what ATen's quickselect (replayed) leaves at k."""
    xp = namespace(a)
    vals = xp.take(xp.partition(a, k - 1, axis=d), [k - 1], axis=d)  # (nans last)
    tied = (a == vals).sum(axis=d, keepdims=True) != 1  # (a nan k-th value: 0)
    idx = xp.argmax(a == vals, axis=d, keepdims=True).astype("int64")
    if not tied.any():
        return idx
    moved_a, moved_i, moved_t = (xp.moveaxis(t, d, -1) for t in (a, idx, tied))
    flags = moved_t[..., 0]  # 0-d for a 1-d input: its one slice is tied
    for pos in [()] if flags.ndim == 0 else zip(*xp.nonzero(flags)):
        moved_i[pos + (0,)] = _aten_quickselect(moved_a[pos].tolist(), k - 1)
    return idx


def kthvalue(x, k, dim=-1, keepdim=False):
    """The ``k``-th smallest value along ``dim`` (1-based) and its index (at ties, the one
    PyTorch's quickselect returns, which is where the gradient goes)."""
    d = _dim_of(x, dim)
    k = int_arg(k, "k")
    n = x.shape[d] if x.ndim else 1
    if n == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d} "
                           f"(k={k}, size {n})")
    # (the kernel's dtype check comes after the size checks, as PyTorch's)
    if x._data.dtype.kind == "b" and x.ndim:  # (PyTorch returns a 0-d bool tensor itself)
        raise NotImplementedError("\"kthvalue_cpu\" not implemented for 'Bool'; convert first "
                                  "(x.int())")
    xp = namespace(x._data)
    if x.ndim:
        # the k-th value by partition (no full sort); its index where it occurs once, else
        # ATen's quickselect replayed (_kth_index)
        idx = _kth_index(x._data, d, k)
    else:  # a 0-d tensor is its own k-th value (KthvalueBackward0, as PyTorch)
        idx = xp.zeros((), dtype="int64")
    values = _kth(x, idx, d, keepdim, tuple(x.shape))
    return _picked("kthvalue", values, idx if keepdim or not x.ndim else xp.squeeze(idx, axis=d))


def nonzero(x, as_tuple=False):
    """Indices of the nonzero elements: an ``(n, ndim)`` int64 tensor, or one per dim."""
    xp = namespace(x._data)
    found = xp.nonzero(x._data) if x.ndim else xp.nonzero(x._data.reshape(1))
    if as_tuple:
        return tuple(make_tensor(i.astype("int64")) for i in found)
    return make_tensor(xp.stack(found, axis=1).astype("int64") if found else
                       xp.zeros((0, 0), dtype="int64"))


__all__ = ["sort", "argsort", "topk", "kthvalue", "nonzero"]


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

for _name in __all__:
    register(globals()[_name], _name, differentiable=_name in ("sort", "topk", "kthvalue"),
             tuple_out=_name != "argsort")  # (torch.argsort takes no out=)
