"""The memory layout of a pointwise op's fresh result, as PyTorch's TensorIterator picks it.

NumPy's ufuncs and ``astype`` (order "K") follow the input's strides even where the input is
a broadcast (a stride 0): ``tanh`` of ``broadcast_to(t, (3, 2))`` comes out Fortran-ordered,
where PyTorch's comes out row-major, so a later ``flatten()`` copies in retrograd and is a
view in PyTorch (fuzz seed 19123515: ``sub_`` then reached the op's result only in PyTorch).
PyTorch sorts the dims by the input's strides, a stride-0 dim being ambiguous (left in place),
equal strides broken by size (``reorder_dimensions``), and lays the result out densely in
that order."""

from __future__ import annotations

from ..backend import namespace


def _permutation(shape, strides):
    """TensorIterator's ``perm_`` (fastest dim first) for one input's byte strides."""
    ndim = len(shape)
    perm = list(range(ndim - 1, -1, -1))

    def should_swap(d0, d1):
        s0, s1 = strides[d0], strides[d1]
        if s0 == 0 or s1 == 0:
            return 0  # a broadcast dim: ambiguous, no reorder
        if s0 < s1:
            return -1
        if s0 > s1:
            return 1
        return 1 if shape[d0] > shape[d1] else 0

    for i in range(1, ndim):
        dim1 = i
        for dim0 in range(i - 1, -1, -1):
            c = should_swap(perm[dim0], perm[dim1])
            if c > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif c < 0:
                break
    return perm


def like_torch(src, data):
    """``data`` (a pointwise result computed from array ``src``, same shape) laid out as
    PyTorch's result of a one-input op would be; ``data`` itself when it already is.

    Only a source that is neither row-major nor dense reaches the sort: the caller checks
    ``src.flags.c_contiguous`` first, so the hot path pays one flag read."""
    shape = src.shape
    if data.shape != shape or data.ndim < 2 or data.size < 2:
        return data
    if data.strides == src.strides and 0 not in src.strides:
        return data  # a dense input (a transpose): NumPy kept its strides, as PyTorch does
    perm = _permutation(shape, src.strides)
    want = [0] * len(shape)
    step = data.itemsize
    for d in perm:
        want[d] = step
        step *= max(shape[d], 1)
    # PyTorch keeps a dense input's own strides; size-1 dims' strides do not matter
    if all(s == w or n == 1 for s, w, n in zip(data.strides, want, shape)):
        return data
    xp = namespace(data)
    order = [perm[i] for i in range(len(perm) - 1, -1, -1)]  # slowest dim first
    inverse = [0] * len(order)
    for i, d in enumerate(order):
        inverse[d] = i
    return xp.ascontiguousarray(data.transpose(order)).transpose(inverse)
