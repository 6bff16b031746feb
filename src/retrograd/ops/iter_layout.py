"""The memory layout of a pointwise op's fresh result, as PyTorch's TensorIterator picks it.

NumPy's ufuncs (order "K") follow the operands' strides their own way: ``tanh`` of
``broadcast_to(t, (3, 2))`` comes out Fortran-ordered, and ``a + b`` of a row-major ``a`` and
a column-major ``b`` row-major whichever comes first.  PyTorch's TensorIterator
(aten/src/ATen/TensorIterator.cpp) picks the layout differently, and the difference is
observable: ``flatten()`` of the result is a view in one library and a copy in the other, so
a later in-place op reaches a different tensor (fuzz seed 19123515).  PyTorch's rule:

* ``fast_set_up``: operands all of the output's shape (no broadcasting), all contiguous: a
  row-major result; all non-overlapping and dense with equal strides: those strides
  (an operand of another dtype, ``sin`` of an int or ``int + float``, is read as it is:
  PyTorch's CPU kernels cast while they iterate);
* otherwise ``reorder_dimensions``: an insertion sort of the dims, fastest first, where for
  each pair the first operand (in argument order) with a nonzero stride on both dims
  decides (smaller stride is faster; equal strides: the smaller size is faster, else no
  preference), a stride-0 (broadcast) dim is no preference, and no preference keeps the
  row-major order; the result is dense in that order.

Only ops marked pointwise here (``POINTWISE``, by op name: most of them are TensorIterator
kernels in PyTorch) are re-laid; rot90/flip, LAPACK results, reductions... keep the layout
their forward chose.  The callers test first whether the first operand is row-major with
the result's shape (it then decides every pair of dims of size > 1: a row-major result in
both libraries), so the common case pays that flag read only.  A size-1 dim's stride takes
part in the sort, and a broadcast dim leaves pairs undecided, so (1, 2, 1) + its (2, 1, 1)
permutation, both row-major, comes out column-major in PyTorch.  Strides of size-1 dims are
not matched (NumPy computes its own)."""

from __future__ import annotations

from ..backend import namespace

# Ops (``Op.name``) whose result PyTorch computes with a TensorIterator over their tensor
# operands: unary, one tensor with numbers, two or three tensors (addcmul, lerp, clamp);
# ``to`` (a dtype copy: empty_like's preserve_format, whose infer_dense_strides is the same
# sort for one operand; its forward already lays the result out so, with size-1 dims'
# strides too: preserved_strides below).  A name here must be pointwise
# in every record of that name that goes through _unary_caller/_binary_caller
# (tests/fuzz/test_regressions_layouth23.py checks each one against PyTorch).
POINTWISE = frozenset("""
abs acos acosh add angle asin asinh atan atan2 atanh bitwise_and bitwise_left_shift
bitwise_not bitwise_or bitwise_right_shift bitwise_xor ceil celu clamp clamp_max clamp_min
copysign cos cosh deg2rad digamma div elu eq erf erfc erfinv exp exp2 expm1 floor floor_divide
fmax fmin fmod frac gcd ge gelu gt hardshrink hardsigmoid hardswish hardtanh heaviside hypot
i0 igamma igammac isfinite isinf isnan isneginf isposinf lcm ldexp le leaky_relu lgamma log
log10 log1p log2 logaddexp logaddexp2 logical_and logical_not logical_or logical_xor logit
lt maximum minimum mish mul nan_to_num ne neg nextafter polygamma pow rad2deg
reciprocal relu remainder round rsqrt rsub selu sgn sigmoid sign signbit silu sin sinc sinh
softplus softshrink special_entr special_erfcx special_i0e special_i1 special_i1e
special_log_ndtr special_ndtri special_xlog1py sqrt sub tan tanh threshold trunc xlogy
addcmul addcdiv lerp to where
""".split())

# Records among those whose PyTorch kernel allocates a row-major result instead (by grad_fn
# name): pow(number, tensor)'s meta function gives no strides
ROW_MAJOR = frozenset(["PowBackward2"])


def layout_operands(op, arrays):
    """The operands whose layout decides ``op``'s result: ``arrays``, or none (row-major)."""
    return () if op.node_cls.__name__ in ROW_MAJOR else arrays


def dense(shape, strides, itemsize):
    """PyTorch's ``is_non_overlapping_and_dense`` (size-1 dims' strides do not count)."""
    need = itemsize
    for d in sorted((d for d in range(len(shape)) if shape[d] > 1), key=lambda d: strides[d]):
        if strides[d] != need:
            return False
        need *= shape[d]
    return True


def _c_strides(shape, itemsize):
    out = [0] * len(shape)
    step = itemsize
    for d in range(len(shape) - 1, -1, -1):
        out[d] = step
        step *= max(shape[d], 1)
    return out


def _order(shape, operands):
    """TensorIterator's ``perm_`` (fastest dim first) for operands given as (shape, byte
    strides), broadcast to ``shape`` (stride 0 where an operand broadcasts)."""
    ndim = len(shape)
    table = []
    for osh, ost in operands:
        off = ndim - len(osh)
        st = [0] * off
        for i, (n, s) in enumerate(zip(osh, ost)):
            st.append(0 if n == 1 and shape[off + i] != 1 else s)
        table.append(st)

    def should_swap(d0, d1):
        for st in table:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue  # a broadcast dim: this operand has no preference
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(ndim - 1, -1, -1))
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


def result_strides(shape, itemsize, operands):
    """The byte strides of PyTorch's result of shape ``shape`` for ``operands`` (a list of
    (shape, byte strides, itemsize) after casts), or None for row-major."""
    if all(osh == shape for osh, _, _ in operands):  # fast_set_up
        if all(_row_major(osh, ost, isz) for osh, ost, isz in operands):
            return None
        first, isz = operands[-1][1], operands[-1][2]  # (the last input's strides)
        if (all([s // i for s in ost] == [s // isz for s in first] for _, ost, i in operands)
                and all(dense(shape, ost, i) for _, ost, i in operands)):
            return [s // isz * itemsize for s in first]
    perm = _order(shape, [(osh, ost) for osh, ost, _ in operands])
    if perm == list(range(len(shape) - 1, -1, -1)):
        return None
    want = [0] * len(shape)
    step = itemsize
    for d in perm:
        want[d] = step
        step *= max(shape[d], 1)
    return want


def _row_major(shape, strides, itemsize):
    want = _c_strides(shape, itemsize)
    return all(s == w or n == 1 for s, w, n in zip(strides, want, shape))


def like_torch(data, arrays):
    """``data`` (a pointwise result computed from ``arrays``, the tensor operands' arrays in
    TensorIterator's order; none: row-major) laid out as PyTorch's result; ``data`` itself
    when it already is."""
    shape = data.shape
    if data.ndim < 2 or data.size < 2:
        return data
    ops = [(a.shape, a.strides, a.itemsize) for a in arrays if a.ndim]  # (0-d: no say)
    want = result_strides(shape, data.itemsize, ops) if ops else None
    if want is None:
        if data.flags.c_contiguous:
            return data
        return namespace(data).ascontiguousarray(data)
    if all(s == w or n == 1 for s, w, n in zip(data.strides, want, shape)):
        return data
    order = sorted(range(len(shape)), key=lambda d: -want[d])  # slowest dim first
    inverse = [0] * len(order)
    for i, d in enumerate(order):
        inverse[d] = i
    return namespace(data).ascontiguousarray(data.transpose(order)).transpose(inverse)


def with_strides(data, strides):
    """``data`` laid out with these element strides (non-negative, non-overlapping, such as
    a result's that PyTorch derives from its operands): itself when it has them, else a copy
    into a fresh buffer just large enough (gaps included, zeros)."""
    if tuple(s // data.itemsize for s in data.strides) == tuple(strides):
        return data
    xp = namespace(data)
    n = 0 if 0 in data.shape else 1 + sum((m - 1) * s for m, s in zip(data.shape, strides))
    out = xp.lib.stride_tricks.as_strided(xp.zeros(n, data.dtype), data.shape,
                                          tuple(s * data.itemsize for s in strides))
    out[...] = data
    return out


def binary_like_torch(data, a, b, name, params=()):
    """``like_torch`` for a binary op ``name``'s result of operands ``a`` and ``b`` (arrays,
    or a Python number for one of them) and parameters ``params``."""
    if name == "pow" and not hasattr(a, "ndim"):
        # pow(number, tensor)'s meta function allocates a row-major result (no strides)
        return data if data.flags.c_contiguous else namespace(data).ascontiguousarray(data)
    if name == "rsub":  # rsub(a, b) is sub(b, a): b is TensorIterator's first operand
        a, b = b, a
    if name == "ldexp" and hasattr(b, "ndim"):
        # ldexp(a, b) is a * exp2(b): exp2's result is dense in b's order (a fresh array)
        b = like_torch(namespace(b).empty(b.shape, b.dtype), [b])
    arrays = [o for o in (a, b) if hasattr(o, "ndim")]
    if name == "where" and params and hasattr(params[0], "ndim"):
        arrays.insert(0, params[0])  # where(cond, a, b): the condition is the first operand
    return like_torch(data, arrays)


def preserved_strides(data):
    """The element strides of PyTorch's ``preserve_format`` copy of ``data`` (``empty_like``,
    ``clone``, ``_to_copy``), or None when they are NumPy's row-major ones.

    PyTorch keeps a non-overlapping and dense input's strides as they are (size-1 dims'
    included: ``empty_strided(sizes, strides)``); any other input (a sliced, expanded or
    overlapping view) gets ``infer_dense_strides``: dense in the input's stride order,
    which is TensorIterator's sort for one operand (``_order``).  A row-major input without
    size-1 or size-0 dims (whose strides NumPy and PyTorch may set their own ways) is the
    common case, answered by two cheap tests.  An empty input gets NumPy's row-major
    result: NumPy gives empty arrays strides of its own (zeros), so there is no PyTorch
    layout to keep."""
    shape = data.shape
    if data.flags.c_contiguous and 1 not in shape or data.size == 0:
        return None
    isz = data.itemsize
    strides = [s // isz for s in data.strides]
    if dense(shape, strides, 1):
        want = strides
    else:
        want = [0] * len(shape)
        step = 1
        for d in _order(shape, [(shape, strides)]):
            want[d] = step
            step *= shape[d] if shape[d] > 1 else 1  # (size 0 counts as 1, as PyTorch's)
    return None if want == _c_strides(shape, 1) else want


def format_strides(data, fmt):
    """The element strides of a fresh tensor like ``data`` in memory format ``fmt`` (None:
    preserve), or None for row-major; PyTorch's RuntimeError for a channels-last format of
    the wrong rank."""
    from .. import memory_formats as mf

    if fmt is None or fmt is mf.preserve_format:
        return preserved_strides(data)
    if fmt is mf.contiguous_format:
        return None
    rank = {mf.channels_last: 4, mf.channels_last_3d: 5}.get(fmt)
    if rank is None:
        raise TypeError(f"memory_format must be a retrograd.memory_format, not "
                        f"{type(fmt).__name__}")
    if data.ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt.name} format")
    shape = data.shape  # channels fastest, then the spatial dims right to left, batch last
    want = [0] * rank
    step = 1
    for d in [1, *range(rank - 1, 1, -1), 0]:
        want[d] = step
        step *= max(shape[d], 1)
    return want


def strided_copy(data, strides, dtype=None):
    """A fresh copy of ``data`` (cast to ``dtype``) with these element strides (None:
    row-major), such as ``format_strides`` gives."""
    dtype = data.dtype if dtype is None else dtype
    if strides is None:
        return data.astype(dtype, order="C")  # (astype always copies)
    xp = namespace(data)
    n = 0 if 0 in data.shape else 1 + sum((m - 1) * s for m, s in zip(data.shape, strides))
    itemsize = xp.dtype(dtype).itemsize
    out = xp.lib.stride_tricks.as_strided(xp.empty(n, dtype), data.shape,
                                          tuple(s * itemsize for s in strides))
    out[...] = data
    return out


def row_major(data):
    """``data`` (a reduction's result) laid out as PyTorch allocates a reduction's output
    (``resize_reduction``: row-major, size-1 dims' strides included), where NumPy's reduce
    follows the input's order (``sum`` over a transposed tensor comes out transposed, and
    ``keepdims`` leaves a kept dim the input's stride): itself when it already is."""
    if getattr(data, "ndim", 0) < 2:
        return data  # (a fresh result of under two dims, or a NumPy scalar: dense as it is)
    if data.flags.c_contiguous and (1 not in data.shape
                                    or list(data.strides) == _c_strides(data.shape,
                                                                        data.itemsize)):
        return data
    return data.copy()  # (order C)


def reduction(forward):
    """``forward`` (a reduction's, on arrays) with its result laid out ``row_major``."""
    def laid_out(*args, **kwargs):
        return row_major(forward(*args, **kwargs))

    laid_out.__name__ = laid_out.__qualname__ = forward.__name__
    laid_out.__doc__ = forward.__doc__
    return laid_out
