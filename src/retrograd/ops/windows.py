"""Sliding windows: the one place that turns an ``(N, C, *spatial)`` array into its windows.

Convolution, unfold/fold and pooling all read their input window by window.  Here:

* :func:`output_size` / :func:`output_shape` -- PyTorch's output-size arithmetic (with the
  ``ceil_mode`` rule of pooling: the last window must start inside the input or the left
  padding);
* :func:`sliding_windows` -- a strided *view* of the (padded) input shaped
  ``(*lead, *out_spatial, *kernel)``: no copy of the windows, no Python loop over positions
  (only the padding, if any, copies the input once);
* :func:`windows_adjoint` -- its transpose: window gradients scatter-added back to the
  input's shape, one strided ``+=`` per kernel offset (9 for a 3x3 kernel), never a loop
  over output positions.

Everything works on 1 to 3 (or more) trailing spatial dimensions with any leading
dimensions, and through the array namespace ``xp`` (NumPy or CuPy).  Arguments are already
normalised by the caller: ``kernel``, ``stride``, ``dilation`` are tuples of ints with one
entry per spatial dimension, ``padding`` is one ``(lo, hi)`` pair per spatial dimension (or a
tuple of ints for symmetric padding); :func:`expand_arg` and :func:`padding_pairs` do that.

>>> import numpy as np
>>> x = np.arange(16.0).reshape(1, 1, 4, 4)
>>> w = sliding_windows(x, (2, 2), stride=(2, 2))
>>> w.shape, w[0, 0, 1, 0].tolist()
((1, 1, 2, 2, 2, 2), [[8.0, 9.0], [12.0, 13.0]])
"""

from __future__ import annotations

import itertools
import operator

from ..backend import namespace


def expand_arg(value, n: int, name: str, fn: str) -> tuple:
    """``value`` (an int, or a sequence of ``n`` ints) as a tuple of ``n`` ints.

    A sequence of one int is repeated, as PyTorch's ``_ntuple`` does for ``(3,)``.  Anything
    else is PyTorch's RuntimeError naming ``fn`` and the argument."""
    if isinstance(value, bool):
        raise TypeError(f"{fn}(): argument '{name}' must be tuple of ints, not bool")
    if isinstance(value, int) or (hasattr(value, "__index__") and not hasattr(value, "__len__")):
        return (int(value),) * n
    try:
        values = tuple(operator.index(v) for v in value)
    except TypeError:
        raise TypeError(f"{fn}(): argument '{name}' must be tuple of ints, not "
                        f"{type(value).__name__}") from None
    if len(values) == 1 and n > 1:
        return values * n
    if len(values) != n:
        raise RuntimeError(f"{fn}(): expected {name} to be a single integer value or a list of "
                           f"{n} values to match the convolution dimensions, but got "
                           f"{name}={list(values)}")
    return values


def padding_pairs(padding) -> tuple:
    """``(p0, p1)`` or ``((lo0, hi0), (lo1, hi1))`` as ``((lo, hi), ...)`` pairs."""
    return tuple((p, p) if isinstance(p, int) else (int(p[0]), int(p[1])) for p in padding)


def output_size(size: int, kernel: int, stride: int = 1, padding=0, dilation: int = 1,
                ceil_mode: bool = False) -> int:
    """How many windows fit along one dimension of ``size`` (PyTorch's formula).

    ``padding`` is an int (both sides) or a ``(lo, hi)`` pair.  With ``ceil_mode`` a last,
    partial window counts if it starts inside the input or the left padding (pooling).

    >>> output_size(5, 3), output_size(5, 3, stride=2, padding=1), output_size(6, 3, 2, 0, 1, True)
    (3, 3, 3)
    """
    lo, hi = (padding, padding) if isinstance(padding, int) else padding
    span = size + lo + hi - dilation * (kernel - 1) - 1
    if ceil_mode:
        out = -(-span // stride) + 1
        if (out - 1) * stride >= size + lo:
            out -= 1
        return out
    return span // stride + 1


def output_shape(spatial, kernel, stride, padding, dilation, ceil_mode: bool = False) -> tuple:
    """:func:`output_size` for each spatial dimension."""
    pairs = padding_pairs(padding)
    return tuple(output_size(s, k, st, p, d, ceil_mode)
                 for s, k, st, p, d in zip(spatial, kernel, stride, pairs, dilation))


def _padded_extent(spatial, kernel, stride, pairs, dilation, out):
    """Per dimension, ``(lo, hi)`` padding so that every window lies inside the padded
    array: ``hi`` grows past the requested padding for ceil_mode's partial last window."""
    ext = []
    for s, k, st, (lo, hi), d, o in zip(spatial, kernel, stride, pairs, dilation, out):
        need = (o - 1) * st + d * (k - 1) + 1 if o > 0 else 0
        ext.append((lo, max(hi, need - s - lo)))
    return tuple(ext)


def pad_spatial(arr, pairs, value=0):
    """``arr`` with its last ``len(pairs)`` dimensions padded by ``(lo, hi)`` with ``value``
    (one new array; ``arr`` itself when nothing is padded).  Negative pads crop."""
    if not any(lo or hi for lo, hi in pairs):
        return arr
    xp = namespace(arr)
    n = len(pairs)
    lead = arr.ndim - n
    shape = arr.shape[:lead] + tuple(s + lo + hi for s, (lo, hi) in zip(arr.shape[lead:], pairs))
    out = xp.full(shape, value, dtype=arr.dtype)
    src = [slice(None)] * lead
    dst = [slice(None)] * lead
    for s, (lo, hi) in zip(arr.shape[lead:], pairs):
        kept = max(s - max(-lo, 0) - max(-hi, 0), 0)
        src.append(slice(max(-lo, 0), max(-lo, 0) + kept))
        dst.append(slice(max(lo, 0), max(lo, 0) + kept))
    if all(s > 0 for s in shape):
        out[tuple(dst)] = arr[tuple(src)]
    return out


def sliding_windows(arr, kernel, stride=None, padding=None, dilation=None, ceil_mode=False,
                    pad_value=0):
    """A read-only strided view of ``arr``'s windows, shaped ``(*lead, *out, *kernel)``.

    ``arr`` is ``(*lead, *spatial)`` with ``len(kernel)`` spatial dimensions.  The view
    shares memory with ``arr`` (or with one padded copy of it, when ``padding`` or
    ``ceil_mode`` pad it, with ``pad_value``: 0 for convolution, -inf for max-pooling).
    Element ``[..., o0, o1, k0, k1]`` is ``padded[..., o0 * s0 + k0 * d0, o1 * s1 + k1 * d1]``.
    """
    n = len(kernel)
    stride = stride or (1,) * n
    dilation = dilation or (1,) * n
    pairs = padding_pairs(padding or (0,) * n)
    lead = arr.ndim - n
    spatial = arr.shape[lead:]
    out = output_shape(spatial, kernel, stride, pairs, dilation, ceil_mode)
    if any(o <= 0 for o in out):
        raise ValueError(f"sliding_windows: no window of size {tuple(kernel)} fits the "
                         f"(padded) input of spatial shape {tuple(spatial)}")
    padded = pad_spatial(arr, _padded_extent(spatial, kernel, stride, pairs, dilation, out),
                         pad_value)
    xp = namespace(padded)
    st = padded.strides
    strides = (st[:lead] + tuple(st[lead + i] * stride[i] for i in range(n))
               + tuple(st[lead + i] * dilation[i] for i in range(n)))
    shape = padded.shape[:lead] + out + tuple(kernel)
    kwargs = {"writeable": False} if xp.__name__ == "numpy" else {}
    return xp.lib.stride_tricks.as_strided(padded, shape, strides, **kwargs)


def windows_adjoint(grad, input_shape, kernel, stride=None, padding=None, dilation=None,
                    ceil_mode=False):
    """The transpose of :func:`sliding_windows`: ``grad`` (``(*lead, *out, *kernel)``, one
    value per window element) summed back onto an array of ``input_shape``.

    One strided ``+=`` per kernel offset (overlapping windows add up), straight into the
    result: each offset's slice is trimmed to the positions that fall inside the input, so
    what lands on the padding is never written (no padded buffer, no cropping copy).
    ``grad`` may be any strided view (e.g. a transposed column buffer)."""
    n = len(kernel)
    stride = stride or (1,) * n
    dilation = dilation or (1,) * n
    pairs = padding_pairs(padding or (0,) * n)
    xp = namespace(grad)
    lead = len(input_shape) - n
    spatial = tuple(input_shape[lead:])
    out = tuple(grad.shape[lead:lead + n])
    acc = xp.zeros(tuple(input_shape), dtype=grad.dtype)
    every = (slice(None),) * lead
    for offset in itertools.product(*(range(k) for k in kernel)):
        dst, src = [], []
        for k, d, o, s, (lo, _), size in zip(offset, dilation, out, stride, pairs, spatial):
            first = k * d - lo  # input position of window 0's element at this offset
            o0 = max(0, -(first // s) if first < 0 else 0)  # first window inside the input
            o1 = min(o, (size - 1 - first) // s + 1) if size - 1 >= first else 0
            if o1 <= o0:
                break
            dst.append(slice(first + o0 * s, first + (o1 - 1) * s + 1, s))
            src.append(slice(o0, o1))
        else:
            acc[every + tuple(dst)] += grad[every + tuple(src) + offset]
    return acc


def offset_slices(input_shape, kernel, stride, padding, dilation, out):
    """For loops that handle one kernel offset at a time (max-pooling routes each output's
    gradient to its argmax offset): the padded input's shape and, per kernel offset (in
    row-major order), the index of the padded input that offset reads at every output
    position.  :func:`windows_adjoint` is ``acc[index] += grad[..., *offset]`` over these.

    >>> shape, pieces = offset_slices((1, 4), (2,), (2,), (0,), (1,), (2,))
    >>> shape, [(o, i[-1]) for o, i in pieces]
    ((1, 4), [((0,), slice(0, 3, 2)), ((1,), slice(1, 4, 2))])
    """
    n = len(kernel)
    pairs = padding_pairs(padding)
    lead = len(input_shape) - n
    spatial = tuple(input_shape[lead:])
    ext = _padded_extent(spatial, kernel, stride, pairs, dilation, out)
    shape = tuple(input_shape[:lead]) + tuple(s + lo + hi for s, (lo, hi) in zip(spatial, ext))
    every = (slice(None),) * lead
    pieces = [(offset, every + tuple(slice(k * d, k * d + (o - 1) * s + 1, s)
                                     for k, d, o, s in zip(offset, dilation, out, stride)))
              for offset in itertools.product(*(range(k) for k in kernel))]
    return shape, pieces
