"""``grid_sample`` and ``affine_grid``: sampling an image at given (normalised) positions.

``grid_sample`` reads, for each output point, a few input pixels around the point its grid
entry names (bilinear: 2 per axis, nearest: 1, bicubic: 4) and weighs them by polynomials of
the point's fractional position.  Everything discrete (which pixels, whether they are inside
the image, the padding mode's folds and clips) is worked out on arrays from the grid's
values; what is continuous is the fraction ``f`` along each axis, an affine function of the
grid entry (``df / dgrid = alpha``: the unnormalising scale times the padding's sign).  The
derivative is then explicit:

* input: each tap's weight times the output gradient, added back at the tap's pixel;
* grid: the output gradient times each tap's pixel values, times the derivative of the
  tap's weight in ``f``, times ``alpha``.

It is written with retrograd ops that take arrays or tensors alike (gather, scatter, Python
arithmetic), so the same code is the first-order backward and, under ``create_graph``, a
recorded graph whose derivative is the second order.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from ..backend import namespace
from ..tensor import Tensor
from ._apply import INPUTS, NOTHING, defop
from ._errors import scalar_type_name
from .index import _gather, scatter_along
from .shape import stack

_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")
_CUBIC_A = -0.75


# ----------------------------------------------------------------- one axis


def _reflect(c, lo2, hi2):
    """PyTorch's reflect_coordinates: ``c`` folded into [lo2 / 2, hi2 / 2]; with the sign
    of the fold (the derivative of the result in ``c``)."""
    if lo2 == hi2:
        return np.zeros_like(c), np.zeros_like(c)
    low = lo2 / 2
    span = (hi2 - lo2) / 2
    c = c - low
    sign = np.where(c < 0, -1.0, 1.0)
    c = np.abs(c)
    extra = np.fmod(c, span)
    even = np.floor(c / span) % 2 == 0
    return np.where(even, extra + low, span - extra + low), np.where(even, sign, -sign)


def _clip(c, size):
    """PyTorch's clip_coordinates, with its derivative (1 strictly inside, else 0)."""
    inside = (c > 0) & (c < size - 1)
    return np.clip(c, 0, size - 1), inside.astype(c.dtype)


def _pad_coordinate(c, size, padding, align_corners):
    """``c`` after the padding mode, and the derivative of that in ``c``."""
    if padding == "border":
        return _clip(c, size)
    if padding == "reflection":
        if align_corners:
            c, sign = _reflect(c, 0, 2 * (size - 1))
        else:
            c, sign = _reflect(c, -1, 2 * size - 1)
        c, inside = _clip(c, size)
        return c, sign * inside
    return c, np.ones_like(c)


def _cubic(t):
    """The four cubic-convolution weights (taps -1, 0, 1, 2) at fraction ``t`` and their
    derivatives in ``t``; ``t`` is an array or a tensor."""
    a = _CUBIC_A

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def near_d(x):
        return (3 * (a + 2) * x - 2 * (a + 3)) * x

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    def far_d(x):
        return (3 * a * x - 10 * a) * x + 8 * a

    w = [far(t + 1), near(t), near(1 - t), far(2 - t)]
    dw = [far_d(t + 1), near_d(t), -near_d(1 - t), -far_d(2 - t)]
    return w, dw


class _Axis:
    """One spatial axis of a grid_sample: its taps' pixel indices (``idx``, T arrays), where
    they are inside the image (``valid``), the fraction ``frac`` and ``alpha = dfrac/dgrid``."""

    def __init__(self, g, size, mode, padding, align_corners):
        scale = (size - 1) / 2 if align_corners else size / 2
        c = (g + 1) * scale - (0 if align_corners else 0.5)  # PyTorch's unnormalize
        if mode == "bicubic":  # the taps are padded one by one, the position is not
            base = np.floor(c)
            self.frac = c - base
            self.alpha = np.full_like(c, scale)
            idx = []
            for t in (-1, 0, 1, 2):
                tap = base + t
                if padding != "zeros":
                    tap = _pad_coordinate(tap, size, padding, align_corners)[0]
                idx.append(tap)
        else:
            c, mult = _pad_coordinate(c, size, padding, align_corners)
            self.alpha = mult * scale
            if mode == "nearest":
                idx = [np.rint(c)]  # round half to even, as PyTorch's nearbyint
                self.frac = np.zeros_like(c)
            else:
                base = np.floor(c)
                self.frac = c - base
                idx = [base, base + 1]
        self.valid = [(i >= 0) & (i <= size - 1) for i in idx]
        self.idx = [np.where(v, i, 0).astype(np.int64) for i, v in zip(idx, self.valid)]
        self.mode = mode
        self.size = size

    def weights(self, frac):
        """Per tap: (weight, derivative in frac), zero outside the image; ``frac`` is
        ``self.frac`` or a tensor of its values that carries the grid's gradient."""
        if self.mode == "nearest":
            w, dw = [1.0 + 0 * frac], [0 * frac]
        elif self.mode == "bilinear":
            w, dw = [1 - frac, frac], [-1.0 + 0 * frac, 1.0 + 0 * frac]
        else:
            w, dw = _cubic(frac)
        dt = self.frac.dtype
        return ([x * v.astype(dt) for x, v in zip(w, self.valid)],
                [x * v.astype(dt) for x, v in zip(dw, self.valid)])


# ----------------------------------------------------------------- the taps of a whole grid


def _axes(grid, sizes, mode, padding, align_corners):
    """One :class:`_Axis` per spatial axis of the input (outermost first); grid entry j is
    the coordinate along the j-th axis from the end (x is the width)."""
    k = len(sizes)
    return [_Axis(grid[..., k - 1 - d], sizes[d], mode, padding, align_corners)
            for d in range(k)]


def _combine(axes, fracs, derivatives=True):
    """Every combination of one tap per axis: (flat pixel index (N, P) per combination,
    weight per combination, d weight / d frac_d per axis and combination).  ``fracs``
    holds each axis's fraction (N, P) (arrays, or tensors that carry the grid's gradient)."""
    per_axis = [a.weights(f) for a, f in zip(axes, fracs)]
    sizes = [a.size for a in axes]
    combos = [[]]
    for a in axes:
        combos = [c + [t] for c in combos for t in range(len(a.idx))]
    flat, weight = [], []
    dweight = [[] for _ in axes]
    for combo in combos:
        lin = 0
        for d, t in enumerate(combo):
            lin = lin * sizes[d] + axes[d].idx[t]
        flat.append(lin)
        w = None
        for d, t in enumerate(combo):
            w = per_axis[d][0][t] if w is None else w * per_axis[d][0][t]
        weight.append(w)
        for j in range(len(axes) if derivatives else 0):
            dw = None
            for d, t in enumerate(combo):
                f = per_axis[d][1 if d == j else 0][t]
                dw = f if dw is None else dw * f
            dweight[j].append(dw)
    return flat, weight, dweight


def _stack(parts, dim):
    if isinstance(parts[0], Tensor):
        return stack(parts, dim)
    return namespace(parts[0]).stack(parts, axis=dim)


def _plan(inp_shape, grid_data, mode, padding, align_corners):
    """Everything discrete about one call: (axes, gather index (N, C, K*P), N, C, P, K)."""
    n, c = inp_shape[:2]
    sizes = list(inp_shape[2:])
    g = grid_data.reshape(n, -1, len(sizes))
    axes = _axes(g, sizes, mode, padding, align_corners)
    p = g.shape[1]
    flat, _, _ = _combine(axes, [a.frac for a in axes], False)
    k = len(flat)
    xp = namespace(grid_data)
    idx = xp.broadcast_to(xp.concatenate(flat, axis=1)[:, None, :], (n, c, k * p))
    return axes, idx, n, c, p, k


def _taps_values(inp, idx, n, c, p, k):
    """The input's pixels at every tap: (N, C, K, P)."""
    flat = inp.reshape(n, c, -1)
    if not isinstance(inp, Tensor):  # arrays: one 1-d take per image (~5x a 3-index gather)
        xp = namespace(inp)
        return xp.stack([xp.take(flat[b], idx[b, 0], axis=1) for b in range(n)]).reshape(
            n, c, k, p)
    return _gather(flat, idx, 2, tuple(flat.shape)).reshape(n, c, k, p)


def _scatter_taps(contrib, idx, n, c, size):
    """``contrib`` (N, C, K*P) added up at the pixels ``idx`` names: (N, C, size)."""
    if isinstance(contrib, Tensor):
        return scatter_along(contrib, idx, 2, (n, c, size))
    xp = namespace(contrib)
    if xp is not np:
        return scatter_along(contrib, idx, 2, (n, c, size))
    out = np.empty((n, c, size), dtype=contrib.dtype)
    rows = (np.arange(c) * size)[:, None]
    for b in range(n):  # one bincount per image: its (channel, pixel) bins
        out[b] = np.bincount((rows + idx[b, 0][None, :]).ravel(), contrib[b].ravel(),
                             minlength=c * size).reshape(c, size)
    return out


def _grid_sample_fwd(inp, grid, mode, padding, align_corners):
    axes, idx, n, c, p, k = _plan(inp.shape, grid, mode, padding, align_corners)
    _, weight, _ = _combine(axes, [a.frac for a in axes], False)
    xp = namespace(inp)
    w = xp.stack(weight, axis=1).astype(inp.dtype)  # (N, K, P)
    flat = inp.reshape(n, c, -1)
    out = xp.empty((n, c, p), dtype=inp.dtype)
    for b in range(n):  # per image: one take of every tap, then the weighted sum over taps
        vals = xp.take(flat[b], idx[b, 0], axis=1).reshape(c, k, p)
        out[b] = xp.einsum("ckp,kp->cp", vals, w[b])
    return out.reshape(n, c, *grid.shape[1:-1])


def _grid_sample_vjp(node, g, saved):
    inp, grid = saved
    mode, padding, align_corners = node.params
    ni, ng = node.next
    grid_data = grid._data if isinstance(grid, Tensor) else grid
    axes, idx, n, c, p, k = _plan(tuple(inp.shape), grid_data, mode, padding, align_corners)
    d = len(axes)
    if isinstance(grid, Tensor):
        # the fractions as tensors of the same values whose gradient reaches the grid
        flat_grid = grid.reshape(n, p, d)
        plain = grid_data.reshape(n, p, d)
        fracs = [(flat_grid[..., d - 1 - j] - plain[..., d - 1 - j]) * a.alpha + a.frac
                 for j, a in enumerate(axes)]
    else:
        fracs = [a.frac for a in axes]
    _, weight, dweight = _combine(axes, fracs)
    g = g.reshape(n, c, 1, p)
    grad_in = grad_grid = None
    if ni:
        w = _stack(weight, 1).reshape(n, 1, k, p)
        contrib = (g * w).reshape(n, c, k * p)
        shape = tuple(inp.shape)
        grad_in = _scatter_taps(contrib, idx, n, c, int(np.prod(shape[2:]))).reshape(shape)
    if ng:
        gv = (g * _taps_values(inp, idx, n, c, p, k)).sum(1)  # (N, K, P)
        parts = []
        for j in reversed(range(d)):  # grid entry 0 is the last axis
            dw = _stack(dweight[j], 1)
            parts.append((gv * dw).sum(1) * axes[j].alpha.astype(grid_data.dtype))
        grad_grid = _stack(parts, 2).reshape(tuple(grid.shape))
    return (grad_in, grad_grid)


_grid_sample_2d = defop("grid_sampler", _grid_sample_fwd, _grid_sample_vjp,
                        "GridSampler2DBackward0", 2, INPUTS)
_grid_sample_3d = defop("grid_sampler", _grid_sample_fwd, _grid_sample_vjp,
                        "GridSampler3DBackward0", 2, INPUTS)


def _check_grid(x, grid, mode):
    xd, gd = x._data, grid._data
    if x.ndim not in (4, 5) or grid.ndim != x.ndim:
        if x.ndim in (4, 5):
            raise RuntimeError(
                f"grid_sampler(): expected {x.ndim}D input and grid with same number of "
                f"dimensions, but got input with sizes {list(x.shape)} and grid with sizes "
                f"{list(grid.shape)}")
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {max(x.ndim - 2, 1)} in last "
            f"dimension, but got grid with sizes {list(grid.shape)} (grid_sample takes a 4-D "
            "(N, C, H, W) or 5-D (N, C, D, H, W) input)")
    if xd.dtype.kind != "f":
        raise NotImplementedError(f"\"grid_sampler_{x.ndim - 2}d_cpu_kernel_impl\" not "
                                  f"implemented for '{scalar_type_name(xd.dtype)}' (grid_sample "
                                  "needs a floating input; convert it with x.float())")
    if gd.dtype != xd.dtype:
        raise RuntimeError(
            f"expected scalar type {scalar_type_name(xd.dtype)} but found "
            f"{scalar_type_name(gd.dtype)} (grid_sample's grid must have the input's dtype)")
    if x.shape[0] != grid.shape[0]:
        raise RuntimeError(
            f"grid_sampler(): expected grid and input to have same batch size, but got input "
            f"with sizes {list(x.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != x.ndim - 2:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {x.ndim - 2} in last dimension, but "
            f"got grid with sizes {list(grid.shape)}")
    if mode == "bicubic" and x.ndim != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    for d in range(2, x.ndim):
        if x.shape[d] == 0:
            raise RuntimeError(
                f"grid_sampler(): expected input to have non-empty spatial dimensions, but "
                f"input has sizes {list(x.shape)} with dimension {d} being empty")


_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                  "old behavior is desired. See the documentation of grid_sample for details.")


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros",  # noqa: A002
                align_corners=None):
    """Sample ``input`` (N, C, H, W) at ``grid`` (N, Ho, Wo, 2) positions, or a 5-D input
    at a (N, Do, Ho, Wo, 3) grid.

    Grid entries are (x, y[, z]) in [-1, 1] (the input's left/top edge to its right/bottom
    edge; with ``align_corners=True`` the centres of the corner pixels).  ``mode``:
    ``"bilinear"``, ``"nearest"`` or ``"bicubic"`` (4-D only); ``padding_mode`` says what
    lies outside: ``"zeros"``, ``"border"`` (the edge pixels) or ``"reflection"``.
    Differentiable in the input and in the grid.

    Examples
    --------
    >>> import retrograd as T
    >>> img = T.arange(4.0).reshape(1, 1, 2, 2)
    >>> T.nn.functional.grid_sample(img, T.zeros(1, 1, 1, 2), align_corners=False)
    tensor([[[[1.5000]]]])
    """
    if mode not in _MODES:
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in _PADDINGS:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    _check_grid(input, grid, mode)
    op = _grid_sample_2d if input.ndim == 4 else _grid_sample_3d
    return op(input, grid, mode, padding_mode, bool(align_corners))


# ----------------------------------------------------------------- affine_grid


def _base_grid(sizes, align_corners, dtype):
    """(prod(sizes), k + 1): each output point's (x, y[, z], 1), PyTorch's base grid."""
    axes = []
    for s in reversed(sizes):  # x runs along the last dimension
        if s <= 1:
            r = np.zeros(max(s, 1))
        else:
            r = np.linspace(-1.0, 1.0, s)
            if not align_corners:
                r = r * (s - 1) / s
        axes.append(r.astype(dtype))
    mesh = np.meshgrid(*reversed(axes), indexing="ij")  # outermost first
    coords = [m.reshape(-1) for m in reversed(mesh)] + [np.ones(mesh[0].size, dtype=dtype)]
    return np.stack(coords, axis=1)


def _affine_grid_fwd(theta, sizes, align_corners):
    xp = namespace(theta)
    base = xp.asarray(_base_grid(sizes, align_corners, theta.dtype))
    n, k = theta.shape[0], len(sizes)
    return (base @ theta.swapaxes(1, 2)).reshape(n, *sizes, k)


def _affine_grid_vjp(node, g, saved):
    sizes, align_corners = node.params
    n, k = g.shape[0], len(sizes)
    base = _base_grid(sizes, align_corners, g.dtype if not isinstance(g, Tensor)
                      else g._data.dtype)
    # d(base @ theta^T) = g^T @ base, batched: (N, k, P) @ (P, k + 1)
    return (g.reshape(n, -1, k).swapaxes(1, 2) @ base,)


_affine_grid = defop("affine_grid_generator", _affine_grid_fwd, _affine_grid_vjp,
                     "AffineGridGeneratorBackward0", 1, NOTHING)


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of a batch of affine maps: (N, H, W, 2) for ``theta`` (N, 2, 3) and
    ``size`` (N, C, H, W); (N, D, H, W, 3) for (N, 3, 4) and (N, C, D, H, W).  Feed it to
    :func:`grid_sample`.

    Examples
    --------
    >>> import retrograd as T
    >>> identity = T.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> T.nn.functional.affine_grid(identity, (1, 1, 1, 2), align_corners=True)[0, 0]
    tensor([[-1.,  0.],
            [ 1.,  0.]])
    """
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if theta._data.dtype.kind != "f":
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = [int(s) if isinstance(s, (numbers.Integral, np.integer)) else s for s in size]
    shape = tuple(theta.shape)
    if len(size) == 4:
        if theta.ndim != 3 or shape[-2:] != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{tuple(size)}. Got {list(shape)}.")
    elif len(size) == 5:
        if theta.ndim != 3 or shape[-2:] != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{tuple(size)}. Got {list(shape)}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {tuple(size)}.")
    spatial = list(size[2:])
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {tuple(size)}")
    if size[0] != shape[0]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size[0]}, {len(size) - 1}] but got: [{shape[0]}, "
                           f"{len(size) - 1}]. (affine_grid: size[0] must be theta's batch "
                           f"size {shape[0]})")
    return _affine_grid(theta, tuple(spatial), bool(align_corners))


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(grid_sample, function=False, method=False, functional=("grid_sample",))
register(affine_grid, function=False, method=False, functional=("affine_grid",))
