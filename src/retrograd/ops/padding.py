"""``nn.functional.pad``: constant, reflect, replicate and circular padding.

Constant padding is ``constant_pad_nd`` (ops/arrange.py).  The other modes read every output
position from one input position, axis by axis: an index map per padded axis, applied by the
separable resampler (ops/_separable.py), whose derivative adds the gradient of each copy
back to the position it was read from.  Negative pads crop, as in PyTorch.
"""

from __future__ import annotations

import numbers

import numpy as np

from ._apply import INPUTS, NOTHING, defop
from ._separable import AxisMap, _forward, _transpose, apply_maps, resample_op
from .arrange import constant_pad_nd
from .pointwise import zeros_like_grad

_MODES = ("constant", "reflect", "replicate", "circular")
_UNSUPPORTED = ("Padding size {n} is not supported for {d}D input tensor.\n"
                "Supported combinations for non-constant padding:\n"
                "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
# PyTorch's grad_fn names; circular padding is recorded as one node here (PyTorch builds
# it from slice copies, a chain of CopySlices)
_NAMES = {"reflect": "ReflectionPad{k}DBackward0", "replicate": "ReplicationPad{k}DBackward0",
          "circular": "CircularPad{k}DBackward0"}


# reflect/replicate: PyTorch's derivative (reflection_pad1d_backward(grad, self, padding)...)
# takes the input too, so under create_graph the first derivative requires grad whenever the
# input does (its node, ReflectionPad1DBackwardBackward0, gives the input zeros), and the
# input is saved (changing it in place before backward raises), as there (seed 9962455)
_PAD_OPS: dict = {}


def _pad_back_vjp(node, gg, saved):
    maps, name = node.params
    n_grad, n_x = node.next
    return (resample_op(name)(gg, maps, name) if n_grad else None,
            zeros_like_grad(gg) if n_x else None)


def _pad_vjp(node, g, saved):
    maps, name = node.params
    if isinstance(saved[0], np.ndarray) or not hasattr(g, "_data"):
        return (_transpose(g, maps, name),)  # first order, on arrays
    return (_PAD_OPS[name][1](g, saved[0], maps, name),)


def _pad_op(name):
    """(the forward record, its derivative's record) for the grad_fn ``name``."""
    ops = _PAD_OPS.get(name)
    if ops is None:
        back = defop("pad_backward", lambda g, x, maps, nm: _transpose(g, maps, nm),
                     _pad_back_vjp, name.replace("Backward0", "BackwardBackward0"), 2, NOTHING)
        ops = _PAD_OPS[name] = (defop("pad", _forward, _pad_vjp, name, 1, INPUTS), back)
    return ops


def _pad_arg(pad):
    if isinstance(pad, (int, np.integer)) or not hasattr(pad, "__len__"):
        raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, not "
                        f"{type(pad).__name__}")
    out = []
    for i, p in enumerate(pad):
        if isinstance(p, bool) or not isinstance(p, numbers.Integral):
            raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, but "
                            f"found element of type {type(p).__name__} at pos {i}")
        out.append(int(p))
    return tuple(out)


def _source(mode, size, lo, hi):
    """The input position each output position of one axis reads, for ``mode``."""
    n_out = size + lo + hi
    p = np.arange(n_out) - lo  # output positions in input coordinates
    if mode == "reflect":
        p = np.abs(p)
        return np.where(p > size - 1, 2 * (size - 1) - p, p)
    if mode == "replicate":
        return np.clip(p, 0, size - 1)
    # circular: PyTorch crops the negative pads first, then wraps within what is left
    start = max(-lo, 0)
    kept = size + min(lo, 0) + min(hi, 0)
    return start + (np.arange(n_out) - max(lo, 0)) % max(kept, 1)


def _check(x, mode, pad, k):
    shape = list(x.shape)
    batch_mode = f"{k + 1}D or {k + 2}D (batch mode)"
    # reflect/replicate are kernels that refuse empty non-batch dims; PyTorch's circular
    # padding is slice copies, which take any empty dim (seeds 11004226, 11035995)
    if mode != "circular" and any(s == 0 for s in (shape[1:] if x.ndim == k + 2 else shape)):
        raise RuntimeError(f"Expected {batch_mode} tensor with possibly 0 batch size and other "
                           f"non-zero dimensions for input, but got: {shape}")
    for i in range(k):
        d = x.ndim - 1 - i
        size, lo, hi = shape[d], pad[2 * i], pad[2 * i + 1]
        if mode == "reflect" and (lo >= size or hi >= size):
            raise RuntimeError(
                f"Argument #{2 * k + 2}: Padding size should be less than the corresponding "
                f"input dimension, but got: padding ({lo}, {hi}) at dimension {d} of input "
                f"{shape} (reflect padding mirrors the input without its edge; use "
                "mode='replicate' or 'circular', or a smaller pad)")
        out = size + lo + hi
        if mode == "circular":
            if lo > size or hi > size:
                raise RuntimeError(
                    f"Padding value causes wrapping around more than once: padding ({lo}, "
                    f"{hi}) at dimension {d} of input {shape} (circular padding can copy at "
                    "most the whole dimension)")
            if out < 0 or (out > 0 and size + min(lo, 0) + min(hi, 0) <= 0):
                raise RuntimeError(
                    f"Negative padding value is resulting in an empty dimension: padding "
                    f"({lo}, {hi}) at dimension {d} of input {shape} (in pad(mode='circular'))")
        if out < (1 if k == 1 and mode != "circular" else 0):  # (PyTorch's 1-d kernels: >= 1)
            raise RuntimeError(
                f"input ({'DHW'[3 - k + i] if k > 1 else 'W'}: {size}) is too small. "
                f"Calculated output {'DHW'[3 - k + i] if k > 1 else 'W'}: {out} (in "
                f"pad(mode={mode!r}) with padding ({lo}, {hi}) at dimension {d})")


def pad(input, pad, mode="constant", value=None):  # noqa: A002 - PyTorch's names
    """Pad (or with negative values crop) the last ``len(pad) // 2`` dimensions.

    ``pad = (last_lo, last_hi, second_last_lo, second_last_hi, ...)``.  ``mode``:

    * ``"constant"``: fill with ``value`` (default 0), any number of dimensions;
    * ``"reflect"``: mirror without repeating the edge (pads smaller than the dimension);
    * ``"replicate"``: repeat the edge value;
    * ``"circular"``: wrap around (pads no larger than the dimension).

    The last three pad 1, 2 or 3 dimensions of a batched (N, C, ...) or unbatched (C, ...)
    input.

    Examples
    --------
    >>> import retrograd as T
    >>> T.nn.functional.pad(T.tensor([[1.0, 2.0, 3.0]]), (2, 1), mode="reflect")
    tensor([[3., 2., 1., 2., 3., 2.]])
    """
    x = input
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode} (pad() takes one of "
                                  f"{', '.join(_MODES)})")
    pad = _pad_arg(pad)
    if len(pad) % 2:
        raise RuntimeError(f"Padding length must be divisible by 2 (pad() got {len(pad)} "
                           "values: one (low, high) pair per padded dimension)")
    if mode == "constant":
        if len(pad) > 2 * x.ndim:
            raise RuntimeError(
                f"Padding length should be less than or equal to two times the input "
                f"dimension but got padding length {len(pad)} and input of dimension {x.ndim}")
        return constant_pad_nd(x, pad, 0 if value is None else value)
    if value is not None and value != 0:  # (PyTorch lets a value of 0 pass)
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument (only '
                           'mode="constant" fills with a value)')
    k = len(pad) // 2
    if k not in (1, 2, 3) or x.ndim not in (k + 1, k + 2):
        raise NotImplementedError(_UNSUPPORTED.format(n=len(pad), d=x.ndim))
    _check(x, mode, pad, k)
    # the reflect/replicate kernels take no bool, a check that comes after the shape checks
    # (PyTorch's circular padding is slice copies: any dtype)
    if x._data.dtype.kind == "b" and mode != "circular":
        kernel = "reflection" if mode == "reflect" else "replication"
        raise NotImplementedError(f'"{kernel}_pad{k}d" not implemented for \'Bool\' (pad '
                                  f'mode={mode!r}: convert the input first, x.to(T.uint8))')
    maps = []
    for i in range(k):
        size = x.shape[x.ndim - 1 - i]
        src = _source(mode, size, pad[2 * i], pad[2 * i + 1])
        maps.append(AxisMap(-1 - i, src[None, :], None, size))
    if mode == "circular":
        return apply_maps(x, maps, _NAMES[mode].format(k=k))
    name = _NAMES[mode].format(k=k)
    return _pad_op(name)[0](x, tuple(maps), name)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(pad, function=False, method=False, functional=("pad",))
