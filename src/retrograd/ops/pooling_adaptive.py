"""Pooling over windows that are not one sliding kernel: adaptive_avg_pool1d/2d/3d,
adaptive_max_pool1d/2d/3d, fractional_max_pool2d/3d, and max_unpool1d/2d/3d.

* Adaptive average pooling is separable: output ``o`` of a dimension of size ``I`` averages
  ``[floor(o I / O), ceil((o + 1) I / O))``, so the pool is one ``(O, I)`` averaging matrix
  applied along each spatial dimension (a BLAS matmul each); its derivative applies the
  transposes.
* Adaptive and fractional max-pooling gather each output's candidates with one fancy index
  (windows of different lengths are padded by repeating their last element, which never
  changes the max nor PyTorch's choice among ties), scan them with PyTorch's rule
  (pool_common.running_max) and keep flat indices into the input plane, as PyTorch returns
  them.  Their derivative scatter-adds the gradient at those indices; its derivative
  gathers (adjoint records).
* max_unpool writes each value at its index in a zero plane; its derivative gathers.
"""

from __future__ import annotations

import itertools
import math

from ..backend import namespace
from ..tensor import Tensor, make_tensor
from ._apply import NOTHING, defop
from .pool_common import (
    adjoint_pair, check_input, expand, recorded, refuse_dtype, running_max, scatter_add_plane,
    take_plane,
)
from .pooling import squeezed_indices
from .reduce import mean
from .saved_checks import check_also
from .shape import squeeze, unsqueeze

# ----------------------------------------------------------------- separable averaging


def _along(a, m, axis):
    """Matrix ``m`` (O, I) applied along ``axis`` of ``a`` (size I there)."""
    xp = namespace(a)
    if a.size and not xp.isfinite(a).all():
        return _along_windows(a, m, axis)
    shape = a.shape
    lead = math.prod(shape[:axis])
    rest = math.prod(shape[axis + 1:])
    if rest == 1:
        res = a.reshape(lead, shape[axis]) @ m.T
    else:
        res = xp.matmul(m, a.reshape(lead, shape[axis], rest))
    return res.reshape(shape[:axis] + (m.shape[0],) + shape[axis + 1:])


def _along_windows(a, m, axis):
    """:func:`_along` for an array with an inf or nan: each output takes only its window's
    elements (the matmul's 0 * nan made every output nan, where PyTorch's kernels sum the
    window alone: seed 11061004); a loop over the rows of ``m``, on this rare path only."""
    xp = namespace(a)
    moved = xp.moveaxis(a, axis, -1)
    out = xp.zeros(moved.shape[:-1] + (m.shape[0],), dtype=xp.result_type(a, m))
    for p in range(m.shape[0]):
        cols = xp.nonzero(m[p])[0]
        if cols.size:
            out[..., p] = moved[..., cols] @ m[p, cols]
    return xp.moveaxis(out, -1, axis)


def _apply_mats(a, mats):
    for i, m in enumerate(mats):
        a = _along(a, m, a.ndim - len(mats) + i)
    return a


def _apply_transposed(g, mats):
    return _apply_mats(g, tuple(m.T for m in mats))


def _adaptive_avg_backward(g, mats):
    """The derivative of the adaptive average pool: PyTorch's adaptive_avg_pool2d/3d_backward
    refuses a grad_output with an empty dim past the first (zero channels of a batched input,
    or an output size of 0), though the forward ran: the first backward raises, not only a
    double backward (1-d pools too, through their unsqueezed 2-d form)."""
    for d in range(1, g.ndim):
        if g.shape[d] == 0:
            raise RuntimeError(
                f"adaptive_avg_pool{len(mats)}d_backward(): Expected grad_output to have "
                f"non-zero size for non-batch dimensions, but grad_output has sizes "
                f"{list(g.shape)} with dimension {d} being empty (PyTorch's derivative of "
                "adaptive_avg_pool refuses empty channels or output sizes)")
    return _apply_transposed(g, mats)


_adaptive_avg_records = {n: adjoint_pair(
    f"adaptive_avg_pool{n}d", _apply_mats, _adaptive_avg_backward,
    f"AdaptiveAvgPool{n}DBackward0",
    f"AdaptiveAvgPool{n}DBackwardBackward0", anchored=True) for n in (2, 3)}


def _bounds(size: int, out: int):
    """PyTorch's adaptive windows along one dimension: (starts, ends)."""
    starts = [(o * size) // out for o in range(out)]
    ends = [-((-(o + 1) * size) // out) for o in range(out)]
    return starts, ends


def _averaging(size, out, xp, dtype):
    m = xp.zeros((out, size), dtype=dtype)
    for o, (s, e) in enumerate(zip(*_bounds(size, out))):
        m[o, s:e] = 1.0 / (e - s)
    return m


def _output_size(x, n, output_size, fn):
    """``output_size`` as ``n`` ints (None entries keep the input's size), with checks."""
    if n == 1 and hasattr(output_size, "__len__") and len(output_size) != 1:
        raise RuntimeError(f"{fn}() argument 'output_size' should contain one int (got "
                           f"{len(output_size)})")
    if hasattr(output_size, "__len__"):
        if len(output_size) != n:  # (a sequence is not repeated, unlike a kernel_size)
            raise RuntimeError(f"{fn}: output_size must be {n} (got output_size="
                               f"{list(output_size)}); pass one int or {n} ints")
        sizes = tuple(x.shape[x.ndim - n + i] if v is None else v
                      for i, v in enumerate(output_size))
    else:
        sizes = (output_size,) * n
    sizes = expand(sizes, n, "output_size", fn)
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"{fn}: elements of output_size must be greater than or equal to 0 "
                           f"but received {list(sizes)}")
    return sizes


def _check_adaptive_input(x, n, fn, dtype_check=True):
    if x.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{fn}(): Expected {n + 1}D or {n + 2}D tensor, but got "
                           f"{list(x.shape)} (pass (C, *spatial) or (N, C, *spatial))")
    # PyTorch lets the first dim be empty, (N, C, ...) or (C, ...) alike; its 1-d and 2-d
    # average kernels check only the spatial dims, so C may be empty there too
    skip = (0, 1) if "avg" in fn and n < 3 and x.ndim == n + 2 else (0,)
    for d in range(x.ndim):
        if x.shape[d] == 0 and d not in skip:
            raise RuntimeError(
                f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {list(x.shape)} with dimension {d} being empty")
    if dtype_check:
        refuse_dtype(x, fn, "biu")


def _python_wrapper_check(x, n, output_size, fn):
    """PyTorch's Python wrappers of the 2-d/3-d adaptive pools read the None entries of a
    sequence ``output_size`` from the input's trailing sizes first (_list_with_default)."""
    if n > 1 and hasattr(output_size, "__len__") and x.ndim <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1} ({fn}() "
                         f"got an input of shape {list(x.shape)} for output_size "
                         f"{tuple(output_size)})")


def _adaptive_avg(x, n, output_size, fn):
    # PyTorch's order: its Python wrapper (2-d/3-d) fills None entries from the input's
    # trailing sizes, refusing an input with too few dims (ValueError); an output of all 1s
    # is the mean (MeanBackward1; mean's own dim and dtype checks, before the kernel's
    # empty-dim check, seed 10005729); then the kernel checks dims, empty dims, and the
    # dtype, the 2-d kernel only when it has an output to write (seed 11009059)
    _python_wrapper_check(x, n, output_size, fn)
    sizes = _output_size(x, n, output_size, fn)
    if all(s == 1 for s in sizes):
        return mean(x, tuple(range(-n, 0)), True)
    _check_adaptive_input(x, n, fn, dtype_check=n == 3 or math.prod(
        x.shape[:x.ndim - n] + tuple(sizes)) > 0)
    a = x._data
    xp = namespace(a)
    mats = tuple(_averaging(a.shape[-n + i], sizes[i], xp, a.dtype) for i in range(n))
    return check_also(_adaptive_avg_records[n][0](x, mats), x)  # (PyTorch's node saves self)


def adaptive_avg_pool2d(input, output_size):  # noqa: A002 - PyTorch's names
    """Average-pool ``(N, C, H, W)`` or ``(C, H, W)`` to ``output_size`` (an int, or two, None
    keeping that size), each output averaging ``[floor(o H / oH), ceil((o + 1) H / oH))``.

    Examples
    --------
    >>> import retrograd as T
    >>> T.nn.functional.adaptive_avg_pool2d(T.arange(6.0).reshape(1, 2, 3), (1, 2))
    tensor([[[2., 3.]]])
    """
    return _adaptive_avg(input, 2, output_size, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input, output_size):  # noqa: A002
    """:func:`adaptive_avg_pool2d` over the last three dims."""
    return _adaptive_avg(input, 3, output_size, "adaptive_avg_pool3d")


def _check_1d(x, fn):
    if x.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {x.ndim}-dimensional tensor "
                           f"for argument #1 'self' (while checking arguments for {fn})")


def adaptive_avg_pool1d(input, output_size):  # noqa: A002
    """:func:`adaptive_avg_pool2d` along the last dim (as PyTorch: on ``x.unsqueeze(-2)``)."""
    _check_1d(input, "adaptive_avg_pool1d")
    (size,) = _output_size(input, 1, output_size, "adaptive_avg_pool1d")
    return squeeze(_adaptive_avg(unsqueeze(input, -2), 2, (1, size), "adaptive_avg_pool1d"), -2)


# ----------------------------------------------------------------- gathers at flat indices


def _scatter_set(v, idx, spatial):
    """max_unpool: each value written at its flat index of a zero plane."""
    xp = namespace(v)
    n = len(spatial)
    lead = v.shape[:v.ndim - n]
    rows = math.prod(lead)
    out = xp.zeros((rows, math.prod(spatial)), dtype=v.dtype)
    if rows:
        out[xp.arange(rows)[:, None], idx.reshape(rows, -1)] = v.reshape(rows, -1)
    return out.reshape(lead + tuple(spatial))


_gather_records = {name: adjoint_pair(name, take_plane, scatter_add_plane, f"{node}Backward0",
                                      f"{node}BackwardBackward0", anchored=True)
                   for name, node in [(f"{kind}_max_pool{n}d", f"{Kind}MaxPool{n}D")
                                      for kind, Kind in (("adaptive", "Adaptive"),
                                                         ("fractional", "Fractional"))
                                      for n in (2, 3)]}


# max_unpool's derivative gathers at the indices (PyTorch: GatherBackward0); the gather's
# derivative scatter-adds (the adjoint of the unpool's scatter when indices do not repeat)
_unpool_gather, _ = adjoint_pair("max_unpool_backward", take_plane, scatter_add_plane,
                                 "GatherBackward0", "ScatterAddBackward0")


def _unpool_vjp(node, g, saved):
    return (_unpool_gather(g, *node.params),)


_unpool = {n: defop(f"max_unpool{n}d", _scatter_set, _unpool_vjp, f"MaxUnpool{n}DBackward0", 1,
                    NOTHING) for n in (2, 3)}


def _max_over(a, index, spatial, xp):
    """(values, flat indices) of the max over each output position's candidates.

    ``a`` is ``(rows, *spatial)``; ``index[d]`` is ``(R, O_d, L_d)`` with R = rows (windows
    per plane: fractional) or 1 (the same windows for every plane: adaptive): output ``o``
    of plane ``r`` reads positions ``index[d][r, o, :]`` along dim ``d``, and the candidates
    are scanned row-major, PyTorch's order."""
    n = len(spatial)
    rows = a.shape[0]
    shaped = []
    for d, ix in enumerate(index):
        shape = [ix.shape[0]] + [1] * (2 * n)
        shape[1 + 2 * d], shape[2 + 2 * d] = ix.shape[1], ix.shape[2]
        shaped.append(ix.reshape(shape))
    r = xp.arange(rows).reshape((rows,) + (1,) * (2 * n))
    cand = a[(r, *shaped)]  # (rows, O0, L0, O1, L1, ...)
    window = tuple(ix.shape[2] for ix in index)
    offsets = list(itertools.product(*(range(k) for k in window)))

    def candidates():
        for o in offsets:
            yield cand[(slice(None),) + tuple(x for j in o for x in (slice(None), j))]

    best, arg = running_max(candidates, len(offsets))
    arg = arg.astype(xp.int64)
    flat = 0
    inner = math.prod(window)
    for d in range(n):
        inner //= window[d]
        pick = (arg // inner) % window[d]
        ix = index[d]
        rr = xp.arange(ix.shape[0]).reshape((-1,) + (1,) * n)
        o = xp.arange(ix.shape[1]).reshape((-1,) + (1,) * (n - 1 - d))
        flat = flat * spatial[d] + ix[rr, o, pick]
    return best, flat


def _pooled(x, n, index, node, return_indices):
    """``x`` max-pooled over the candidates ``index`` (see :func:`_max_over`), recorded as
    ``node`` (its derivative scatters at the flat indices)."""
    a = x._data
    xp = namespace(a)
    lead = a.shape[:a.ndim - n]
    spatial = a.shape[a.ndim - n:]
    out = tuple(ix.shape[1] for ix in index)
    if math.prod(lead) == 0 or math.prod(out) == 0:
        values = xp.zeros(lead + out, dtype=a.dtype)
        flat = xp.zeros(lead + out, dtype=xp.int64)
    else:
        values, flat = _max_over(a.reshape((-1,) + spatial), index, spatial, xp)
        values, flat = values.reshape(lead + out), flat.reshape(lead + out)
    pick = _gather_records[node][0]
    res = recorded(pick.op.node_cls, x, values, (flat, spatial))
    if not return_indices:
        return check_also(res, x)  # (PyTorch's node saves self and the indices)
    indices = make_tensor(flat)
    return check_also(res, x, indices), indices


def _adaptive_index(size, out, xp):
    """(1, O, L) candidate positions of PyTorch's adaptive windows (the short ones padded
    by repeating their last position)."""
    starts, ends = _bounds(size, out)
    longest = max((e - s for s, e in zip(starts, ends)), default=1)
    j = xp.arange(longest)
    ix = xp.minimum(xp.asarray(starts)[:, None] + j, xp.asarray(ends)[:, None] - 1)
    return ix.reshape(1, out, longest) if out else xp.zeros((1, 0, 1), dtype=xp.int64)


def _adaptive_max(x, n, output_size, return_indices, fn):
    _python_wrapper_check(x, n, output_size, fn)
    _check_adaptive_input(x, n, fn)
    sizes = _output_size(x, n, output_size, fn)
    xp = namespace(x._data)
    index = [_adaptive_index(x.shape[-n + d], sizes[d], xp) for d in range(n)]
    return _pooled(x, n, index, f"adaptive_max_pool{n}d", return_indices)


def adaptive_max_pool2d(input, output_size, return_indices=False):  # noqa: A002
    """Max-pool ``(N, C, H, W)`` or ``(C, H, W)`` to ``output_size`` over PyTorch's adaptive
    windows; ``return_indices``: also the argmax (flat positions in each plane)."""
    return _adaptive_max(input, 2, output_size, return_indices, "adaptive_max_pool2d")


def adaptive_max_pool3d(input, output_size, return_indices=False):  # noqa: A002
    """:func:`adaptive_max_pool2d` over the last three dims."""
    return _adaptive_max(input, 3, output_size, return_indices, "adaptive_max_pool3d")


def adaptive_max_pool1d(input, output_size, return_indices=False):  # noqa: A002
    """:func:`adaptive_max_pool2d` along the last dim (on ``x.unsqueeze(-2)``, as PyTorch)."""
    _check_1d(input, "adaptive_max_pool1d")
    (size,) = _output_size(input, 1, output_size, "adaptive_max_pool1d")
    res = _adaptive_max(unsqueeze(input, -2), 2, (1, size), return_indices,
                        "adaptive_max_pool1d")
    if return_indices:
        return squeeze(res[0], -2), squeezed_indices(res[1])
    return squeeze(res, -2)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):  # noqa: A002
    """:func:`adaptive_max_pool1d` and its indices, always."""
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):  # noqa: A002
    """:func:`adaptive_max_pool2d` and its indices, always."""
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):  # noqa: A002
    """:func:`adaptive_max_pool3d` and its indices, always."""
    return adaptive_max_pool3d(input, output_size, True)


def _torch_adaptive_max_pool1d(input, output_size):  # noqa: A002
    """``torch.adaptive_max_pool1d``: values and indices (F's returns only the values)."""
    return adaptive_max_pool1d(input, output_size, True)


# ----------------------------------------------------------------- fractional max-pooling

_DIM_WORDS = {2: ("height", "width"), 3: ("time", "height", "width")}


def _intervals(u, size, out, pool, xp):
    """Window starts (rows, out) of Graham's fractional pooling, from samples ``u`` (rows,)
    in ``[0, 1)``: PyTorch's formula in the input's dtype, so the starts agree exactly."""
    dt = u.dtype
    starts = xp.empty((u.shape[0], out), dtype=xp.int64)
    if out > 1:
        alpha = xp.asarray(size - pool, dtype=dt) / xp.asarray(out - 1, dtype=dt)
        i = xp.arange(out - 1, dtype=dt)
        starts[:, :-1] = (((i + u[:, None]) * alpha).astype(xp.int64)
                          - (u * alpha).astype(xp.int64)[:, None])
    if out > 0:
        starts[:, -1] = size - pool
    return starts


def _fractional(x, n, kernel_size, output_size, output_ratio, return_indices, samples):
    fn = f"fractional_max_pool{n}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{fn} requires specifying either an output_size or an output_ratio")
    check_input(x, n, fn)
    refuse_dtype(x, fn, "biu")
    kernel = expand(kernel_size, n, "kernel_size", fn)
    spatial = tuple(x.shape[-n:])
    if output_size is None:
        if not hasattr(output_ratio, "__len__"):
            if n == 2:  # (PyTorch's F.fractional_max_pool2d takes len() of it)
                raise TypeError(f"object of type '{type(output_ratio).__name__}' has no len() "
                                f"({fn} takes output_ratio as a tuple (rH, rW), as PyTorch)")
            ratio = (output_ratio,) * n
        else:
            if n == 2 and len(output_ratio) > 2:
                raise ValueError(f"{fn} requires output_ratio to either be a single Int or "
                                 "tuple of Ints.")
            ratio = tuple(output_ratio)
            if len(ratio) < n:
                raise IndexError(f"tuple index out of range ({fn} takes output_ratio as one "
                                 f"number per spatial dimension ({n}), got {list(ratio)})")
        sizes = tuple(int(s * r) for s, r in zip(spatial, ratio))
    else:
        sizes = expand(output_size, n, "output_size", fn)
    for word, o, k, s in zip(_DIM_WORDS[n], sizes, kernel, spatial):
        # PyTorch's bound: output + kernel - 1 <= input in 2-d, < input in 3-d
        if o + k - 1 > s - (n == 3):
            raise RuntimeError(f"{fn}(): pool {word} {k} too large relative to input {word} "
                               f"{s} (for an output {word} of {o}; use a smaller kernel_size "
                               "or output_size)")
    a = x._data
    xp = namespace(a)
    batch = x.shape[0] if x.ndim == n + 2 else 1
    channels = x.shape[-n - 1]
    if samples is None:
        from ..random import generator

        u = xp.asarray(generator().random((batch, channels, n))).astype(a.dtype)
    else:
        u = samples._data if isinstance(samples, Tensor) else xp.asarray(samples)
        if u.ndim != 3:
            raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {u.ndim}")
        if u.shape[0] < batch:
            raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
        if u.shape[1] != channels:
            raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
        if u.shape[2] != n:
            raise RuntimeError(f"Expect _random_samples.size(2) equals to {n}; got "
                               f"{u.shape[2]}.")
        u = u[:batch].astype(a.dtype, copy=False)
    u = u.reshape(batch * channels, n)
    # PyTorch's sample order: (width, height) for 2-d, (time, height, width) for 3-d
    which = (1, 0) if n == 2 else (0, 1, 2)
    index = [(_intervals(u[:, which[d]], spatial[d], sizes[d], kernel[d], xp)[:, :, None]
              + xp.arange(kernel[d])) for d in range(n)]
    return _pooled(x, n, index, fn, return_indices)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,  # noqa: A002
                          return_indices=False, _random_samples=None):
    """Fractional max-pooling (Graham, 2014): ``kernel_size`` windows at pseudo-random
    steps that shrink ``(N, C, H, W)`` or ``(C, H, W)`` to ``output_size`` (or
    ``output_ratio`` times the input).  The steps come from ``_random_samples`` (``(N, C,
    2)`` in ``[0, 1)``), else from retrograd's generator (``retrograd.manual_seed``)."""
    return _fractional(input, 2, kernel_size, output_size, output_ratio, return_indices,
                       _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,  # noqa: A002
                          return_indices=False, _random_samples=None):
    """:func:`fractional_max_pool2d` over the last three dims (samples ``(N, C, 3)``)."""
    return _fractional(input, 3, kernel_size, output_size, output_ratio, return_indices,
                       _random_samples)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None,  # noqa: A002
                                       output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """:func:`fractional_max_pool2d` and its indices, always."""
    return _fractional(input, 2, kernel_size, output_size, output_ratio, True, _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None,  # noqa: A002
                                       output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """:func:`fractional_max_pool3d` and its indices, always."""
    return _fractional(input, 3, kernel_size, output_size, output_ratio, True, _random_samples)


# ----------------------------------------------------------------- max_unpool


def _unpool_size(x, n, kernel, stride, padding, output_size):
    """PyTorch's ``_unpool_output_size``: the default size, or ``output_size`` checked."""
    default = [(x.shape[-n + d] - 1) * stride[d] + kernel[d] - 2 * padding[d] for d in range(n)]
    if output_size is None:
        sizes = default
    else:
        sizes = list(output_size)
        if len(sizes) == n + 2:
            sizes = sizes[2:]
        if len(sizes) != n:
            raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} "
                             f"elements, but it has a length of '{len(sizes)}'")
        for d in range(n):
            lo, hi = default[d] - stride[d], default[d] + stride[d]
            if not lo < sizes[d] < hi:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between '
                                 f"{lo} and {hi})")
    for d in range(n):
        if sizes[d] < 0:
            raise ValueError("max_unpooling: output_size must contain non-negative spatial "
                             f"dimensions, but got output_size[{d}]={sizes[d]}")
    return tuple(int(s) for s in sizes)


def _max_unpool(x, indices, n, kernel_size, stride, padding, output_size):
    fn = f"max_unpool{n}d"
    kernel = expand(kernel_size, n, "kernel_size", fn)
    stride = kernel if stride is None else expand(stride, n, "stride", fn)
    padding = expand(padding, n, "padding", fn)
    sizes = _unpool_size(x, n, kernel, stride, padding, output_size)
    return _unpool_sized(x, indices, n, sizes, fn)


def _unpool_sized(x, indices, n, sizes, fn):
    idx = indices._data if isinstance(indices, Tensor) else indices
    k = 2 if fn == "max_unpool1d" else n  # (the 1-d form runs as a 2-d one)
    if x.ndim not in (k + 1, k + 2):
        got = x.ndim - (1 if fn == "max_unpool1d" else 0)
        raise RuntimeError(f"Input to max_unpooling{k}d should be a {k + 1}d or {k + 2}d "
                           f"Tensor, but got a tensor with {got} dimensions.")
    if idx.dtype.kind not in "iu" or idx.dtype.itemsize != 8:
        from ._errors import scalar_type_name

        raise RuntimeError(f"{fn}: elements in indices should be type int64 but got: "
                           f"{scalar_type_name(idx.dtype)} (use the indices that max_pool "
                           "returns, or indices.long())")
    if tuple(idx.shape) != tuple(x.shape):
        raise RuntimeError(f"{fn}: Expected shape of indices to be same as that of the input "
                           f"tensor ({list(x.shape)}) but got indices tensor with shape: "
                           f"{list(idx.shape)}")
    size = math.prod(sizes)
    if idx.size:
        bad = idx[(idx < 0) | (idx >= size)]
        if bad.size:
            raise RuntimeError(f"{fn}: Found an invalid max index: {int(bad.reshape(-1)[0])} "
                               f"(output volumes are of size {'x'.join(map(str, sizes))})")
    return check_also(_unpool[n](x, idx, sizes), indices)  # (saved by PyTorch's node)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0,  # noqa: A002
                 output_size=None):
    """A partial inverse of :func:`max_pool2d`: each value of ``input`` written at its index
    (as ``max_pool2d(..., return_indices=True)`` gives them) in a zero plane of the
    pre-pooling size (or ``output_size``).

    Examples
    --------
    >>> import retrograd as T
    >>> F = T.nn.functional
    >>> y, i = F.max_pool2d(T.tensor([[[1.0, 2.0], [4.0, 3.0]]]), 2, return_indices=True)
    >>> F.max_unpool2d(y, i, 2)
    tensor([[[0., 0.],
             [4., 0.]]])
    """
    return _max_unpool(input, indices, 2, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0,  # noqa: A002
                 output_size=None):
    """:func:`max_unpool2d` over the last three dims."""
    return _max_unpool(input, indices, 3, kernel_size, stride, padding, output_size)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0,  # noqa: A002
                 output_size=None):
    """:func:`max_unpool2d` along the last dim (as PyTorch: a 2-d unpool of
    ``x.unsqueeze(-1)``)."""
    fn = "max_unpool1d"
    kernel = expand(kernel_size, 1, "kernel_size", fn)
    stride = kernel if stride is None else expand(stride, 1, "stride", fn)
    padding = expand(padding, 1, "padding", fn)
    sizes = _unpool_size(input, 1, kernel, stride, padding, output_size)
    idx = indices._data if isinstance(indices, Tensor) else indices
    xp = namespace(idx)
    idx2 = make_tensor(xp.expand_dims(idx, -1))
    if isinstance(indices, Tensor):  # (PyTorch's is a view: the same version counter)
        if indices._vc is None:
            indices._vc = [0]
        idx2._vc = indices._vc
    res = _unpool_sized(unsqueeze(input, -1), idx2, 2, sizes + (1,), fn)
    return squeeze(res, -1)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(adaptive_avg_pool1d, method=False, functional=("adaptive_avg_pool1d",))
register(_torch_adaptive_max_pool1d, "adaptive_max_pool1d", method=False)
for _fn in (adaptive_avg_pool2d, adaptive_avg_pool3d, adaptive_max_pool1d, adaptive_max_pool2d,
            adaptive_max_pool3d, adaptive_max_pool1d_with_indices,
            adaptive_max_pool2d_with_indices, adaptive_max_pool3d_with_indices,
            fractional_max_pool2d, fractional_max_pool3d, fractional_max_pool2d_with_indices,
            fractional_max_pool3d_with_indices, max_unpool1d, max_unpool2d, max_unpool3d):
    register(_fn, function=False, method=False, functional=(_fn.__name__,))
