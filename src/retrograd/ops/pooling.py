"""Window pooling: max_pool1d/2d/3d (with indices), avg_pool1d/2d/3d, lp_pool1d/2d/3d.

The windows come from ops/windows.py (the one sliding-window machinery); each pool loops
over the kernel's offsets (4 for 2x2, 9 for 3x3), one strided slice of the input each, never
over output positions.

* max-pooling keeps, per output, the offset of its window's max (PyTorch's rule: the first
  of tied values, the last NaN; padding is -inf and never wins), as int8.  Its derivative
  adds the gradient at the argmax's position in the input plane (one bincount; the
  position is the window's start plus the offset's displacement, two small tables); the
  derivative of that gathers from the same positions (adjoint records, see
  pool_common.adjoint_pair), so double backward works.  Indices (the same positions, as
  PyTorch returns them) are worked out only when asked for.
* average-pooling sums the window's slices and divides by PyTorch's divisor (the window
  clipped to the padded input, or to the input with ``count_include_pad=False``, or
  ``divisor_override``); its derivative spreads the gradient back (windows_adjoint).
* 1-d pools are the 2-d ones on ``x.unsqueeze(-2)``, squeezed after, as PyTorch records
  them; lp-pooling is PyTorch's composite (pow, avg_pool, sign * relu(abs), mul, pow).
"""

from __future__ import annotations

import itertools
import math

from ..autograd.grad_mode import state
from ..backend import namespace
from ..tensor import make_tensor
from .pointwise import abs as _abs
from .pointwise import relu, sign
from .pool_common import (
    adjoint_pair, check_input, expand, lowest, recorded, refuse_dtype, running_max,
    scatter_add_plane, take_plane,
)
from .saved_checks import check_also
from .shape import squeeze, unsqueeze
from .windows import offset_slices, output_shape, sliding_windows, windows_adjoint
from .quiet_fp import quiet_fp


# ----------------------------------------------------------------- arguments


def _geometry(x, n, fn, kernel_size, stride, padding, dilation, ceil_mode):
    """Normalised ``(kernel, stride, padding, dilation, ceil_mode, out)`` for an ``n``-d
    pool of ``x``, with PyTorch's checks (in its order) and errors."""
    kernel = expand(kernel_size, n, "kernel_size", fn)
    stride = kernel if stride is None or (hasattr(stride, "__len__") and not len(stride)) \
        else expand(stride, n, "stride", fn, omittable=True)
    padding = expand(padding, n, "padding", fn)
    dilation = expand(dilation, n, "dilation", fn)
    if any(s == 0 for s in stride):
        raise RuntimeError(f"{fn}: stride should not be zero (got stride={list(stride)}, "
                           f"kernel_size={list(kernel)})")
    if any(p < 0 for p in padding):
        raise RuntimeError(f"{fn}: pad must be non-negative, but got pad: {list(padding)}")
    for k, p, d in zip(kernel, padding, dilation):
        if p > ((k - 1) * d + 1) // 2:
            raise RuntimeError(
                f"{fn}: pad should be at most half of effective kernel size, but got pad={p}, "
                f"kernel_size={k} and dilation={d}; use a smaller padding or a larger kernel")
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"{fn}: kernel size should be greater than zero, but got "
                           f"kernel_size={list(kernel)}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"{fn}: stride should be greater than zero, but got "
                           f"stride={list(stride)}")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"{fn}: dilation should be greater than zero, but got "
                           f"dilation={list(dilation)}")
    for k, p in zip(kernel, padding):
        if p > k // 2:
            raise RuntimeError(f"{fn}: pad should be smaller than or equal to half of kernel "
                               f"size, but got pad={list(padding)} and "
                               f"kernel_size={list(kernel)}")
    spatial = tuple(x.shape[-n:])
    out = output_shape(spatial, kernel, stride, padding, dilation, bool(ceil_mode))
    if any(o < 1 for o in out):
        c = x.shape[-n - 1]
        raise RuntimeError(
            f"{fn}: Given input size: ({'x'.join(map(str, (c, *spatial)))}). Calculated output "
            f"size: ({'x'.join(map(str, (c, *out)))}). Output size is too small: the kernel "
            f"{list(kernel)} (dilation {list(dilation)}) does not fit the input padded by "
            f"{list(padding)}; use a smaller kernel_size or more padding")
    return kernel, stride, padding, dilation, bool(ceil_mode), out


# ----------------------------------------------------------------- max-pooling


def _offsets(kernel):
    """Every kernel offset, row-major (PyTorch's scan order within a window)."""
    return list(itertools.product(*(range(k) for k in kernel)))


def _max_forward(a, geom):
    """(max values, argmax offset per output) of the windows of array ``a``."""
    kernel, stride, padding, dilation, ceil_mode, out = geom
    xp = namespace(a)
    pad = lowest(a.dtype, xp)
    win = sliding_windows(a, kernel, stride, padding, dilation, ceil_mode, pad)
    offsets = _offsets(kernel)
    best, arg = running_max(lambda: (win[(Ellipsis, *o)] for o in offsets), len(offsets))
    if (any(padding) or ceil_mode) and bool((best == pad).any()):
        # a window holding nothing above the padding: PyTorch then points at the window's
        # first element inside the input, never at the padding
        first = _first_inside(geom, xp)
        arg = xp.where(best == pad, first, arg).astype(arg.dtype)
    return best, arg


def _first_inside(geom, xp):
    """Per output position, the first kernel offset that reads inside the input."""
    kernel, stride, padding, dilation, _, out = geom
    n = len(kernel)
    flat = 0
    for d in range(n):
        start = xp.arange(out[d]) * stride[d] - padding[d]
        k = xp.maximum((dilation[d] - 1 - start) // dilation[d], 0)  # start + k * dil >= 0
        k = xp.minimum(k, kernel[d] - 1).reshape((-1,) + (1,) * (n - 1 - d))
        flat = flat * kernel[d] + k
    return flat


def _plane_index(arg, geom, spatial, xp):
    """The argmax offsets as positions in the input's plane (PyTorch's indices): each
    output's window start plus its argmax offset's displacement, one table look-up."""
    kernel, stride, padding, dilation, _, out = geom
    n = len(kernel)
    inner = [math.prod(spatial[d + 1:]) for d in range(n)]
    base = 0
    for d in range(n):
        start = (xp.arange(out[d], dtype=xp.int64) * stride[d] - padding[d]) * inner[d]
        base = base + start.reshape((-1,) + (1,) * (n - 1 - d))
    delta = xp.asarray([sum(k * dl * st for k, dl, st in zip(o, dilation, inner))
                        for o in _offsets(kernel)], dtype=xp.int64)
    return xp.take(delta, arg) + base


def _pick(a, arg, geom, in_shape):
    """Each output's value at its argmax, from input-shaped ``a`` (the adjoint of
    :func:`_route`; max-pool's double backward)."""
    n = len(geom[0])
    spatial = tuple(in_shape[len(in_shape) - n:])
    return take_plane(a, _plane_index(arg, geom, spatial, namespace(a)), spatial)


def _route(g, arg, geom, in_shape):
    """Each output's gradient added at its argmax: an input-shaped array."""
    n = len(geom[0])
    spatial = tuple(in_shape[len(in_shape) - n:])
    return scatter_add_plane(g, _plane_index(arg, geom, spatial, namespace(g)), spatial)


_max_records = {n: adjoint_pair(f"max_pool{n}d", _pick, _route,
                                f"MaxPool{n}DWithIndicesBackward0",
                                f"MaxPool{n}DWithIndicesBackwardBackward0", anchored=True)
                for n in (2, 3)}


def _max_pool(x, n, fn, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
              kernel=None, kinds="b"):
    check_input(x, n, fn)
    geom = _geometry(x, n, fn, kernel_size, stride, padding, dilation, ceil_mode)
    # the kernel's dtype dispatch comes after PyTorch's shape and size checks
    refuse_dtype(x, kernel or fn, kinds)
    a = x._data
    if a.shape[0] == 0:  # an empty batch: an empty result (the kernel never runs)
        xp = namespace(a)
        shape = a.shape[:a.ndim - n] + geom[-1]
        values, arg = xp.zeros(shape, a.dtype), xp.zeros(shape, xp.int8)
    else:
        values, arg = _max_forward(a, geom)
    pick = _max_records[n][0]
    out = recorded(pick.op.node_cls, x, values, (arg, geom, tuple(a.shape)))
    if not return_indices:
        return check_also(out, x)  # (PyTorch's node saves self: its version counts)
    indices = make_tensor(_plane_index(arg, geom, a.shape[-n:], namespace(a)))
    return check_also(out, x, indices), indices  # (and its indices, result1)


def _args_1d(x, fn, kernel_size, stride, padding, dilation=1):
    """A 1-d pool's input check and arguments, as the 2-d pool's (PyTorch runs 1-d pools as
    2-d ones on ``x.unsqueeze(-2)``, and records them so)."""
    if x.ndim not in (2, 3) or any(s == 0 for s in x.shape[-2:]):
        raise RuntimeError(f"{fn}: Expected 2D or 3D (batch mode) tensor with optional 0 dim "
                           f"batch size for input, but got:{list(x.shape)}")
    (k,) = expand(kernel_size, 1, "kernel_size", fn)
    (s,) = (k,) if stride is None or (hasattr(stride, "__len__") and not len(stride)) else \
        expand(stride, 1, "stride", fn, omittable=True)
    (p,) = expand(padding, 1, "padding", fn)
    (d,) = expand(dilation, 1, "dilation", fn)
    return (1, k), (1, s), (0, p), (1, d)


def _squeezed(res):
    if isinstance(res, tuple):
        return squeeze(res[0], -2), squeezed_indices(res[1])
    return squeeze(res, -2)


def squeezed_indices(indices):
    """A 1-d pool's indices: the 2-d pool's squeezed, sharing their version counter (PyTorch's
    are a view), so an in-place change of them is seen by the node that saved them."""
    out = make_tensor(indices._data.squeeze(-2))
    if indices._vc is None:
        indices._vc = [0]
    out._vc = indices._vc
    return out


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
               ceil_mode=False, return_indices=False):
    """The max of each ``kernel_size`` window of an ``(N, C, H, W)`` or ``(C, H, W)`` input,
    windows ``stride`` apart (default: ``kernel_size``), the input padded with -inf, the
    window's elements ``dilation`` apart; ``ceil_mode`` keeps a last partial window.
    ``return_indices``: also the argmax (flat positions in each ``H * W`` plane).

    Examples
    --------
    >>> import retrograd as T
    >>> x = T.arange(16.0).reshape(1, 1, 4, 4)
    >>> T.nn.functional.max_pool2d(x, 2)
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """
    return _max_pool(input, 2, "max_pool2d", kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
               ceil_mode=False, return_indices=False):
    """:func:`max_pool2d` over the last three dims of ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""
    return _max_pool(input, 3, "max_pool3d", kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def _max_pool1d_kernel(x, return_indices):
    """PyTorch's max_pool1d runs max_pool1d_impl (floats only) unless indices or a gradient
    are wanted; then the 2-d kernel with indices, which takes integers too."""
    if return_indices or (x.requires_grad and state.enabled):
        return "max_pool2d", "b"
    return "max_pool1d_impl", "biu"


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
               ceil_mode=False, return_indices=False):
    """:func:`max_pool2d` along the last dim of ``(N, C, L)`` or ``(C, L)``."""
    k, s, p, d = _args_1d(input, "max_pool1d", kernel_size, stride, padding, dilation)
    out = _squeezed(_max_pool(unsqueeze(input, -2), 2, "max_pool1d", k, s, p, d, ceil_mode,
                              return_indices, *_max_pool1d_kernel(input, return_indices)))
    if return_indices or (input.requires_grad and state.enabled):
        return out
    # PyTorch's max_pool1d_impl, taken when no gradient is needed, makes a fresh tensor (not
    # a view of the 2-d pool's): an in-place op on it records that op, not AsStridedBackward0
    return make_tensor(out._data.copy())


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
                            ceil_mode=False, return_indices=False):
    """:func:`max_pool1d` and its indices, always."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
                            ceil_mode=False, return_indices=False):
    """:func:`max_pool2d` and its indices, always."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
                            ceil_mode=False, return_indices=False):
    """:func:`max_pool3d` and its indices, always."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


# ----------------------------------------------------------------- average pooling


def _divisors(spatial, geom, count_include_pad, divisor_override, xp, dtype):
    """PyTorch's divisor per output position (broadcastable over the output): a number
    with ``divisor_override``, else the product of each dimension's window length (clipped
    to the padded input, or to the input when padding does not count; 1 for an empty
    window, whose sum is 0)."""
    if divisor_override is not None:
        return divisor_override
    kernel, stride, padding, _, _, out = geom
    n = len(kernel)
    div = 1
    uniform = True
    for d in range(n):
        start = xp.arange(out[d]) * stride[d] - padding[d]
        end = xp.minimum(start + kernel[d], spatial[d] + padding[d])
        if count_include_pad:
            size = end - start
        else:
            size = xp.minimum(end, spatial[d]) - xp.maximum(start, 0)
        size = xp.maximum(size, 1)
        uniform = uniform and bool((size == size[0]).all())
        div = div * size.reshape((-1,) + (1,) * (n - 1 - d))
    if uniform:
        return int(div.reshape(-1)[0])
    return div.astype(dtype) if dtype.kind == "f" else div


def _divide(total, div, xp):
    if total.dtype.kind == "f":
        total /= div
        return total
    q = xp.abs(total) // div  # C++'s integer division truncates toward zero
    return (xp.sign(total) * q).astype(total.dtype)


def _avg_fwd(a, geom, div):
    """Each window's sum / divisor; ``geom`` ends with the input's spatial shape."""
    kernel, stride, padding, _, ceil_mode, out, _ = geom
    xp = namespace(a)
    win = sliding_windows(a, kernel, stride, padding, None, ceil_mode, 0)
    offsets = _offsets(kernel)
    total = xp.array(win[(Ellipsis, *offsets[0])], copy=True)
    for o in offsets[1:]:
        total += win[(Ellipsis, *o)]
    return _divide(total, div, xp)


def _tiles(geom, spatial) -> bool:
    """Whether the windows cover the input exactly once (no padding, stride = kernel, the
    last window ending at the input's end): a gradient then writes every element once."""
    kernel, stride, padding, dilation, _, out = geom[:6]
    return all(p == 0 and s == k and d == 1 and o * k == size for k, s, p, d, o, size in zip(
        kernel, stride, padding, dilation, out, spatial))


def _avg_bwd(g, geom, div):
    """The average's derivative: each output's gradient / divisor over its window."""
    kernel, stride, padding, _, ceil_mode, out, spatial = geom
    xp = namespace(g)
    n = len(kernel)
    share = g / div
    in_shape = share.shape[:g.ndim - n] + spatial
    if _tiles(geom, spatial):  # each element gets one share: written, not added to zeros
        acc = xp.empty(in_shape, dtype=share.dtype)
        for _, index in offset_slices(in_shape, kernel, stride, padding, (1,) * n, out)[1]:
            acc[index] = share
        return acc
    spread = xp.broadcast_to(share.reshape(share.shape + (1,) * n), share.shape + kernel)
    return windows_adjoint(spread, in_shape, kernel, stride, padding, None, ceil_mode)


_avg_records = {n: adjoint_pair(f"avg_pool{n}d", _avg_fwd, _avg_bwd, f"AvgPool{n}DBackward0",
                                f"AvgPool{n}DBackwardBackward0", anchored=True) for n in (2, 3)}


def _avg_pool(x, n, fn, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override):
    check_input(x, n, fn)
    geom = _geometry(x, n, fn, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError(f"{fn}: divisor must be not zero (got divisor_override=0)")
    # PyTorch's average kernels take floats and int64 only (checked after the sizes)
    refuse_dtype(x, fn, "b" if x._data.dtype.itemsize == 8 else "biu")
    a = x._data
    xp = namespace(a)
    spatial = tuple(a.shape[-n:])
    div = _divisors(spatial, geom, count_include_pad, divisor_override, xp, a.dtype)
    # the adjoint needs the input's spatial shape: carried as a 7th geometry entry
    return check_also(_avg_records[n][0](x, geom + (spatial,), div), x)  # (saves self)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,  # noqa: A002
               count_include_pad=True, divisor_override=None):
    """The mean of each ``kernel_size`` window of an ``(N, C, H, W)`` or ``(C, H, W)`` input
    (zero padding; ``count_include_pad=False`` leaves the padding out of the divisor;
    ``divisor_override`` replaces it).

    Examples
    --------
    >>> import retrograd as T
    >>> T.nn.functional.avg_pool2d(T.arange(16.0).reshape(1, 4, 4), 2)
    tensor([[[ 2.5000,  4.5000],
             [10.5000, 12.5000]]])
    """
    return _avg_pool(input, 2, "avg_pool2d", kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,  # noqa: A002
               count_include_pad=True, divisor_override=None):
    """:func:`avg_pool2d` over the last three dims of ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""
    return _avg_pool(input, 3, "avg_pool3d", kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,  # noqa: A002
               count_include_pad=True):
    """:func:`avg_pool2d` along the last dim of ``(N, C, L)`` or ``(C, L)``."""
    k, s, p, _ = _args_1d(input, "avg_pool1d", kernel_size, stride, padding)
    return _squeezed(_avg_pool(unsqueeze(input, -2), 2, "avg_pool1d", k, s, p, ceil_mode,
                               count_include_pad, None))


# ----------------------------------------------------------------- power-average pooling


def _lp_pool(x, n, norm_type, kernel_size, stride, ceil_mode, max_pool, avg_pool):
    """PyTorch's composite: ``(sign(s) * relu(|s|) * prod(kernel)) ** (1 / p)`` of the
    window means ``s`` of ``x ** p``; ``p = +-inf`` is a max-pool of ``|x|``."""
    fn = f"lp_pool{n}d"
    if isinstance(norm_type, (int, float)) and abs(norm_type) == float("inf"):
        if norm_type > 0:
            return max_pool(_abs(x), kernel_size, stride, 0, 1, ceil_mode)
        return -max_pool(-_abs(x), kernel_size, stride, 0, 1, ceil_mode)
    if n == 1:
        k = kernel_size  # PyTorch multiplies by kernel_size as given
    else:
        k = 1
        for v in expand(kernel_size, n, "kernel_size", fn):
            k *= v
    if stride is not None:
        out = avg_pool(x.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool(x.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return (sign(out) * relu(_abs(out))).mul(k).pow(1.0 / norm_type)


@quiet_fp
def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):  # noqa: A002
    """``(sum of x ** p over each window) ** (1 / p)`` along the last dim (``p = norm_type``;
    the sum of windows with a zero total has zero gradient)."""
    return _lp_pool(input, 1, norm_type, kernel_size, stride, ceil_mode, max_pool1d, avg_pool1d)


@quiet_fp
def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):  # noqa: A002
    """:func:`lp_pool1d` over the last two dims."""
    return _lp_pool(input, 2, norm_type, kernel_size, stride, ceil_mode, max_pool2d, avg_pool2d)


@quiet_fp
def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):  # noqa: A002
    """:func:`lp_pool1d` over the last three dims."""
    return _lp_pool(input, 3, norm_type, kernel_size, stride, ceil_mode, max_pool3d, avg_pool3d)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

# PyTorch has these at its top level too (torch.max_pool2d...); the rest only in F
for _fn in (max_pool1d, max_pool2d, max_pool3d, max_pool1d_with_indices, avg_pool1d):
    register(_fn, method=False, functional=(_fn.__name__,))
for _fn in (max_pool2d_with_indices, max_pool3d_with_indices, avg_pool2d, avg_pool3d,
            lp_pool1d, lp_pool2d, lp_pool3d):
    register(_fn, function=False, method=False, functional=(_fn.__name__,))
