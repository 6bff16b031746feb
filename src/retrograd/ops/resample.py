"""Resizing: ``interpolate`` (and the deprecated ``upsample*`` spellings), ``pixel_shuffle``,
``pixel_unshuffle``, ``channel_shuffle``.

Every ``interpolate`` mode is separable: along each spatial axis an output position reads a
few input positions with fixed weights (nearest: one; linear: two; cubic: four; area is
adaptive_avg_pool, as PyTorch's).  The tables are built here from the sizes, once per call, with
PyTorch's index arithmetic (its precision included: nearest indices in float32 as its
kernels compute them), and applied by the separable resampler (ops/_separable.py), whose
derivative is the transposed map.  grid_sample and affine_grid live in ops/grid_sample.py.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from ..backend import namespace
from ._apply import NOTHING, defop
from ._separable import AxisMap, apply_maps
from .pooling_adaptive import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d

_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact",
          "lanczos")
_LINEAR_RANK = {"linear": 3, "bilinear": 4, "trilinear": 5, "bicubic": 4}
_NAMES = {"nearest": "UpsampleNearest{k}DBackward0",
          "nearest-exact": "UpsampleNearestExact{k}DBackward0",
          "linear": "UpsampleLinear1DBackward0", "bilinear": "UpsampleBilinear2DBackward0",
          "trilinear": "UpsampleTrilinear3DBackward0", "bicubic": "UpsampleBicubic2DBackward0",
          "lanczos": "UpsampleLanczos2DBackward0"}  # (area: ops/pooling_adaptive.py)
_CUBIC_A = -0.75  # PyTorch's (and OpenCV's) cubic convolution coefficient


# ----------------------------------------------------------------- one axis's taps


def _nearest_taps(in_size, out_size, scale, exact):
    """PyTorch's nearest source index: float32 arithmetic, as its kernels compute it."""
    f32 = np.float32
    if scale is not None and scale > 0:
        s = f32(1.0 / scale)
    else:
        s = f32(in_size) / f32(out_size)
    o = np.arange(out_size)
    if exact:  # (o + 0.5) is a double in C++, times the float scale, then floorf (of a float)
        src = np.floor(((o + 0.5) * np.float64(s)).astype(f32))
    else:
        src = np.floor(o.astype(f32) * s)
    return np.minimum(src.astype(np.int64), in_size - 1)[None, :]


def _linear_scale(in_size, out_size, align_corners, scale, dt):
    if align_corners:
        return dt(in_size - 1) / dt(out_size - 1) if out_size > 1 else dt(0)
    if scale is not None and scale > 0:
        return dt(1.0 / scale)
    return dt(in_size) / dt(out_size)


def _source_positions(in_size, out_size, align_corners, scale, dt, cubic):
    """Real-valued input positions of the output positions (PyTorch's
    area_pixel_compute_source_index), in the input's float precision."""
    s = _linear_scale(in_size, out_size, align_corners, scale, dt)
    o = np.arange(out_size).astype(dt)
    if align_corners:
        return s * o
    src = s * (o + dt(0.5)) - dt(0.5)
    return src if cubic else np.maximum(src, dt(0))


def _linear_taps(in_size, out_size, align_corners, scale, dt):
    src = _source_positions(in_size, out_size, align_corners, scale, dt, False)
    i0 = np.minimum(np.floor(src).astype(np.int64), in_size - 1)
    l1 = np.clip(src - i0, 0, 1).astype(np.float64)
    i1 = i0 + (i0 < in_size - 1)
    return np.stack([i0, i1]), np.stack([1 - l1, l1])


def _cubic_weights(t):
    """The four cubic-convolution weights of taps -1, 0, 1, 2 at fraction ``t``."""
    a = _CUBIC_A

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return np.stack([far(t + 1), near(t), near(1 - t), far(2 - t)])


def _cubic_taps(in_size, out_size, align_corners, scale, dt):
    src = _source_positions(in_size, out_size, align_corners, scale, dt, True)
    i = np.minimum(np.floor(src).astype(np.int64), in_size - 1)
    t = np.clip(src - i, 0, 1).astype(np.float64)
    idx = np.clip(i[None, :] + np.arange(-1, 3)[:, None], 0, in_size - 1)
    return idx, _cubic_weights(t)


def _aa_taps(in_size, out_size, align_corners, scale, dt, kind):
    """Antialiased taps (PIL's and PyTorch's): when shrinking, the filter (triangle, or
    Keys' cubic with a = -0.5) is widened by the scale, and each output's weights sum to 1."""
    s = float(_linear_scale(in_size, out_size, align_corners, scale, dt))
    half = {"bilinear": 1.0, "bicubic": 2.0, "lanczos": 3.0}[kind]
    support = half * s if s >= 1.0 else half
    inv = 1.0 / s if s >= 1.0 else 1.0
    center = s * (np.arange(out_size) + 0.5)
    lo = np.maximum((center - support + 0.5).astype(np.int64), 0)
    hi = np.minimum((center + support + 0.5).astype(np.int64), in_size)
    taps = np.arange(max(int((hi - lo).max()), 1))[:, None]
    x = np.abs((taps + lo[None, :] - center[None, :] + 0.5) * inv)
    if kind == "lanczos":  # sinc(x) sinc(x / 3) inside |x| < 3
        w = np.where(x < 3, np.sinc(x) * np.sinc(x / 3), 0.0)
    elif kind == "bicubic":
        a = -0.5
        w = np.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                     np.where(x < 2, ((a * x - 5 * a) * x + 8 * a) * x - 4 * a, 0.0))
    else:
        w = np.where(x < 1, 1 - x, 0.0)
    w = np.where(taps < (hi - lo)[None, :], w, 0.0)
    total = w.sum(0)
    w = np.where(total != 0, w / np.where(total != 0, total, 1), w)
    return np.minimum(lo[None, :] + taps, in_size - 1), w


# ----------------------------------------------------------------- interpolate


def _is_integer(v):
    if isinstance(v, bool):
        return True
    if isinstance(v, (numbers.Integral, np.integer)):
        return True
    return hasattr(v, "_data") and v._data.dtype.kind in "iub"


def _sizes(x, size, scale_factor, mode, recompute_scale_factor):
    """(output sizes, scale factors or None per dim), as PyTorch's interpolate works them out."""
    dim = x.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(x.shape[2:])} and output size of "
                    f"{size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "output size in (o1, o2, ...,oK) format.")
            if not all(_is_integer(s) for s in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    f"Tuple[int, int, int], but got size with types {[type(s) for s in size]}")
            out = [int(s) for s in size]
        else:
            if not _is_integer(size):
                raise TypeError(f"interpolate(): size must be an int or a tuple of ints, got "
                                f"{type(size).__name__} {size!r}")
            out = [int(size)] * dim
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        return out, [None] * dim
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        if len(scale_factor) != dim:
            raise ValueError(
                "Input and scale_factor must have the same number of spatial dimensions, but "
                f"got input with spatial dimensions of {list(x.shape[2:])} and scale_factor of "
                f"shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                "format and scale_factor in (s1, s2, ...,sK) format.")
        factors = [float(s) for s in scale_factor]
    else:
        factors = [float(scale_factor)] * dim
    out = [math.floor(x.shape[2 + i] * factors[i]) for i in range(dim)]
    if mode == "area" or recompute_scale_factor:  # scales recomputed from the integer sizes
        return out, [None] * dim
    return out, factors


def _check_sizes(x, out, mode):
    names = "DHW"[3 - len(out):]
    ins = list(x.shape[2:])
    # (area is adaptive average pooling, which takes an empty output size)
    if min(ins) <= 0 or min(out) < (0 if mode == "area" else 1):
        def show(sizes):
            return ", ".join(f"{n}: {s}" for n, s in zip(names, sizes))

        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({show(ins)}) output ({show(out)}) (in interpolate)")
    if any(s == 0 for s in x.shape[1:2]):
        raise RuntimeError(f"Non-empty {x.ndim}D data tensor expected but got a tensor with "
                           f"sizes {list(x.shape)}")


def interpolate(input, size=None, scale_factor=None, mode="nearest",  # noqa: A002
                align_corners=None, recompute_scale_factor=None, antialias=False):
    """Resize the spatial dimensions of an (N, C, [D, [H,]] W) tensor.

    Give the output ``size`` (an int or one per spatial dim) or a ``scale_factor``.
    ``mode``: ``"nearest"``, ``"nearest-exact"``, ``"linear"`` (3-D input),
    ``"bilinear"`` / ``"bicubic"`` / ``"lanczos"`` (4-D; lanczos only with
    ``antialias=True``), ``"trilinear"`` (5-D), ``"area"`` (adaptive
    average pooling).  ``align_corners`` (linear-type modes) maps the corner pixels' centres
    onto each other; ``recompute_scale_factor=True`` derives the scales from the rounded
    output size instead of using ``scale_factor``.  ``antialias=True`` (bilinear, bicubic,
    lanczos) widens the filter when shrinking, as PIL does.  (PyTorch 2.13's antialiased kernels
    return the first row for every row when the output width is 1; retrograd does not copy
    that.)

    Examples
    --------
    >>> import retrograd as T
    >>> x = T.tensor([[[1.0, 3.0]]])
    >>> T.nn.functional.interpolate(x, scale_factor=2, mode="linear")
    tensor([[[1.0000, 1.5000, 2.5000, 3.0000]]])
    """
    x = input
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if mode in _MODES and x.ndim in (3, 4, 5) and (mode != "lanczos" or x.ndim == 4):
        if mode in _LINEAR_RANK and x.ndim != _LINEAR_RANK[mode]:
            need = _LINEAR_RANK[mode]
            raise NotImplementedError(f"Got {x.ndim}D input, but {mode} mode needs {need}D "
                                      "input")
    else:
        raise NotImplementedError(
            "Input Error: Only 3D, 4D and 5D input Tensors supported (got "
            f"{x.ndim}D) for the modes: nearest | linear | bilinear | bicubic | trilinear | "
            f"lanczos | area | nearest-exact (got {mode})")
    out, factors = _sizes(x, size, scale_factor, mode, recompute_scale_factor)
    if antialias:
        if not (mode in ("bilinear", "bicubic", "lanczos") and x.ndim == 4):
            raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and "
                             "lanczos modes and requires a 4-D tensor as input")
    if mode == "lanczos":
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if mode == "area":
        # PyTorch's area mode is adaptive_avg_pool{1,2,3}d to the output size: its checks (zero
        # channels pass, the backward refuses them), its mean for an all-ones output
        # (MeanBackward1), its dtype errors
        pool = (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[x.ndim - 3]
        return pool(x, tuple(out))
    _check_sizes(x, out, mode)
    kind = x._data.dtype.kind
    if kind != "f" and not (kind == "u" and x._data.dtype.itemsize == 1
                            and mode.startswith("nearest")):
        from ._errors import scalar_type_name

        raise NotImplementedError(
            f'"upsample_{mode}" not implemented for \'{scalar_type_name(x._data.dtype)}\' '
            "(interpolate needs a floating input; convert it with x.float())")
    k = x.ndim - 2
    dt = np.float32 if x._data.dtype == np.float32 else np.float64
    maps = []
    for i in range(k):
        axis = i - k  # spatial dims counted from the end
        n_in, n_out, sf = x.shape[2 + i], out[i], factors[i]
        if antialias:
            maps.append(AxisMap(axis, *_aa_taps(n_in, n_out, align_corners, sf, dt, mode),
                                n_in))
        elif n_in == n_out and (mode in ("linear", "bilinear", "trilinear")
                              or (mode == "nearest" and k == 2)):
            # PyTorch's kernels copy an axis whose size does not change, whatever the scale
            # factor says (these modes only: bicubic, nearest-exact, 1-d and 3-d nearest
            # resample it)
            maps.append(AxisMap(axis, np.arange(n_in)[None, :], None, n_in))
        elif mode.startswith("nearest"):
            maps.append(AxisMap(axis, _nearest_taps(n_in, n_out, sf, mode != "nearest"),
                                None, n_in))
        elif mode == "bicubic":
            maps.append(AxisMap(axis, *_cubic_taps(n_in, n_out, align_corners, sf, dt), n_in))
        else:
            maps.append(AxisMap(axis, *_linear_taps(n_in, n_out, align_corners, sf, dt), n_in))
    name = _NAMES[mode].format(k=k)
    return apply_maps(x, maps, name.replace("2DBackward0", "2DAaBackward0") if antialias else name)


def upsample(input, size=None, scale_factor=None, mode="nearest",  # noqa: A002
             align_corners=None):
    """Deprecated: ``interpolate(input, size, scale_factor, mode, align_corners)``."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):  # noqa: A002
    """Deprecated: ``interpolate(input, size, scale_factor, mode="nearest")``."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):  # noqa: A002
    """Deprecated: ``interpolate(input, size, scale_factor, mode="bilinear",
    align_corners=True)``."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ----------------------------------------------------------------- shuffles (pure layout)


def _pixel_shuffle_fwd(a, r):
    *batch, c, h, w = a.shape
    oc = c // (r * r)
    b = a.reshape(*batch, oc, r, r, h, w)
    n = len(batch)
    order = list(range(n)) + [n, n + 3, n + 1, n + 4, n + 2]
    return namespace(a).ascontiguousarray(b.transpose(order)).reshape(*batch, oc, h * r, w * r)


def _pixel_unshuffle_fwd(a, r):
    *batch, c, h, w = a.shape
    b = a.reshape(*batch, c, h // r, r, w // r, r)
    n = len(batch)
    order = list(range(n)) + [n, n + 2, n + 4, n + 1, n + 3]
    return namespace(a).ascontiguousarray(b.transpose(order)).reshape(
        *batch, c * r * r, h // r, w // r)


_pixel_shuffle = defop(
    "pixel_shuffle", _pixel_shuffle_fwd,
    lambda node, g, saved: (_pixel_unshuffle(g, node.params[0]),), "PixelShuffleBackward0", 1,
    NOTHING)
_pixel_unshuffle = defop(
    "pixel_unshuffle", _pixel_unshuffle_fwd,
    lambda node, g, saved: (_pixel_shuffle(g, node.params[0]),), "PixelUnshuffleBackward0", 1,
    NOTHING)


def _factor(value, name, fn):
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"{fn}(): argument '{name}' (position 2) must be int, not "
                        f"{type(value).__name__}")
    return int(value)


def pixel_shuffle(input, upscale_factor):  # noqa: A002
    """(*, C r^2, H, W) -> (*, C, H r, W r): channel blocks laid out as r x r pixel blocks.

    Examples
    --------
    >>> import retrograd as T
    >>> T.nn.functional.pixel_shuffle(T.arange(4.0).reshape(1, 4, 1, 1), 2)
    tensor([[[[0., 1.],
              [2., 3.]]]])
    """
    r = _factor(upscale_factor, "upscale_factor", "pixel_shuffle")
    x = input
    if x.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got "
                           f"input with {x.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c = x.shape[-3]
    if c % (r * r):
        raise RuntimeError(
            f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
            f"square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    return _pixel_shuffle(x, r)


def pixel_unshuffle(input, downscale_factor):  # noqa: A002
    """(*, C, H r, W r) -> (*, C r^2, H, W): the inverse of :func:`pixel_shuffle`."""
    r = _factor(downscale_factor, "downscale_factor", "pixel_unshuffle")
    x = input
    if x.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {x.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    h, w = x.shape[-2], x.shape[-1]
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor,"
                           f" but input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, "
                           f"but input.size(-1)={w} is not divisible by {r}")
    return _pixel_unshuffle(x, r)


def _channel_shuffle_fwd(a, groups):
    n, c = a.shape[0], a.shape[1]
    rest = a.shape[2:]
    b = a.reshape(n, groups, c // groups, *rest).swapaxes(1, 2)
    return namespace(a).ascontiguousarray(b).reshape(a.shape)


_channel_shuffle = defop(
    "channel_shuffle", _channel_shuffle_fwd,
    # shuffling c = g * k channels by g groups is undone by shuffling them by k groups
    lambda node, g, saved: (_channel_unshuffle(g, g.shape[1] // node.params[0]),),
    "ChannelShuffleBackward0", 1, NOTHING)
_channel_unshuffle = defop(
    "channel_shuffle", _channel_shuffle_fwd,
    lambda node, g, saved: (_channel_shuffle(g, g.shape[1] // node.params[0]),),
    "ChannelShuffleBackward0", 1, NOTHING)


def _no_derivative(node, g, saved):
    raise RuntimeError("derivative for aten::native_channel_shuffle is not implemented (as in "
                       "PyTorch); use channel_shuffle, whose derivative exists")


# PyTorch's native_channel_shuffle has no derivative: its grad_fn raises at backward
_native_channel_shuffle = defop("native_channel_shuffle", _channel_shuffle_fwd, _no_derivative,
                                "NotImplemented", 1, NOTHING)


def channel_shuffle(input, groups):  # noqa: A002
    """Interleave the channels of (N, C, *) in ``groups`` groups: (g, C/g) -> (C/g, g)."""
    return _channel_shuffle(_check_channel_shuffle(input, groups), groups)


def native_channel_shuffle(input, groups):  # noqa: A002
    """:func:`channel_shuffle` without a derivative (PyTorch's native kernel)."""
    return _native_channel_shuffle(_check_channel_shuffle(input, groups), groups)


def _check_channel_shuffle(input, groups):  # noqa: A002
    g = _factor(groups, "groups", "channel_shuffle")
    x = input
    if x.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but "
                           f"got input with {x.ndim} dimension(s)")
    if g <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{g}")
    if x.shape[1] % g:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got "
                           f"{x.shape[1]} channels and {g} groups.")
    return x


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

for _fn in (interpolate, upsample, upsample_nearest, upsample_bilinear):
    register(_fn, function=False, method=False, functional=(_fn.__name__,))
register(pixel_shuffle, method=False, functional=("pixel_shuffle",))
register(pixel_unshuffle, method=False, functional=("pixel_unshuffle",))
register(channel_shuffle, method=False, functional=("channel_shuffle",))
register(native_channel_shuffle, method=False, functional=("native_channel_shuffle",),
         differentiable=False)
