"""Separable resampling: each trailing axis mapped on its own by a small table of taps.

Padding (reflect, replicate, circular), nearest and linear-type interpolation (linear,
bilinear, bicubic, trilinear) and area interpolation (adaptive average pooling) all have
this form: along one axis,

    out[..., o, ...] = sum_t weight[t, o] * in[..., index[t, o], ...]

with ``T`` taps per output position (1 for an index map, 2 for linear, 4 for cubic).  An
:class:`AxisMap` holds one axis's ``index`` and ``weight`` tables, built once per call from
the sizes; the forward gathers (``take`` per tap, no loop over pixels) and the derivative
is the transposed map, which scatters the gradient back and sums repeats (sorted once,
``add.reduceat``).  Both directions are op records and each is the other's derivative, so
every order of derivative works.  :func:`resample_op` gives the record for a grad_fn name
(``UpsampleBilinear2DBackward0``, ``ReflectionPad1DBackward0``...).
"""

from __future__ import annotations

import numpy as np

from ..backend import namespace
from ._apply import NOTHING, defop
from .quiet_fp import quiet_fp


# the transpose of an axis map with out_size * in_size up to this is a dense matrix product
# (BLAS); beyond it, sorted segment sums (bench/resample.py: dense is ~10x faster for
# 32 -> 64, slower from about 256 -> 512)
_DENSE_LIMIT = 32768


class AxisMap:
    """How one axis is resampled.

    Parameters
    ----------
    axis : int
        The axis, counted from the end (``-1`` is the last), so a batch dimension may be
        absent.
    index : ndarray of int64, shape (T, O)
        The input positions each output position reads (in ``[0, in_size)``).
    weight : ndarray of float64, shape (T, O), or None
        Each tap's weight; None for a plain index map (one tap, weight 1).
    in_size : int
        The input's size along ``axis``.
    """

    __slots__ = ("axis", "index", "weight", "in_size", "_cast", "_sorted", "_dense")

    def __init__(self, axis, index, weight, in_size):
        self.axis = axis
        self.index = np.ascontiguousarray(index, dtype=np.int64)
        self.weight = weight
        self.in_size = in_size
        self._cast = {}
        self._sorted = None
        self._dense = None

    @property
    def out_size(self):
        return self.index.shape[1]

    def _shape(self, n):
        return (n,) + (1,) * (-self.axis - 1)

    def _weights(self, xp, dtype):
        """The weights in ``dtype`` on ``xp``'s device (float32 stays float32), cached."""
        key = (xp.__name__, dtype)
        w = self._cast.get(key)
        if w is None:
            w = self._cast[key] = xp.asarray(self.weight, dtype=dtype)
        return w

    def gather(self, a):
        """The forward: ``a`` resampled along the axis."""
        xp = namespace(a)
        idx = self.index if xp is np else xp.asarray(self.index)
        if self.weight is None:
            return xp.take(a, idx[0], axis=self.axis)
        w = self._weights(xp, a.dtype)
        shape = self._shape(self.out_size)
        out = xp.take(a, idx[0], axis=self.axis) * w[0].reshape(shape)
        for t in range(1, idx.shape[0]):
            out += xp.take(a, idx[t], axis=self.axis) * w[t].reshape(shape)
        return out

    def scatter(self, g):
        """The transpose: each output position's ``g`` times its weights, added back at the
        input positions it read (a gather's derivative)."""
        xp = namespace(g)
        if self.out_size == 0:  # nothing was read: a zero gradient
            shape = list(g.shape)
            shape[self.axis] = self.in_size
            return xp.zeros(shape, dtype=g.dtype)
        if xp is not np or (self.in_size * self.out_size <= _DENSE_LIMIT
                            and xp.isfinite(g).all()):
            # a dense (O, I) matrix: one BLAS product, much faster than sorting and summing
            # for the small axes of most images (and there is no ufunc.reduceat on every
            # backend); not for an inf or nan gradient, which the zeros would spread
            m = xp.asarray(self._dense_matrix(), dtype=g.dtype)
            if self.axis == -1:  # one (rows, O) @ (O, I) product rather than one per matrix
                g2 = xp.ascontiguousarray(g)
                return (g2.reshape(-1, self.out_size) @ m).reshape(*g.shape[:-1], self.in_size)
            if self.axis == -2:
                return m.T @ g
            return xp.moveaxis(xp.moveaxis(g, self.axis, -1) @ m, -1, self.axis)
        if self._sorted is None:
            flat = self.index.reshape(-1)
            order = np.argsort(flat, kind="stable")
            uniq, starts = np.unique(flat[order], return_index=True)
            w = None if self.weight is None else self.weight.reshape(-1)[order]
            self._sorted = (order % self.out_size, w, uniq, starts,
                            uniq.size == self.in_size)
        src, w, uniq, starts, covers = self._sorted
        vals = np.take(g, src, axis=self.axis)
        if w is not None:
            vals *= self._sorted_weights(g.dtype, w)
        sums = np.add.reduceat(vals, starts, axis=self.axis)
        if covers:  # every input position was read (the usual case): no zeros to fill
            return sums
        shape = list(g.shape)
        shape[self.axis] = self.in_size
        out = np.zeros(shape, dtype=g.dtype)
        where = [slice(None)] * g.ndim
        where[self.axis] = uniq
        out[tuple(where)] = sums
        return out

    def _dense_matrix(self):
        if self._dense is None:
            dense = np.zeros((self.out_size, self.in_size))
            w = np.ones(self.index.shape) if self.weight is None else self.weight
            np.add.at(dense, (np.broadcast_to(np.arange(self.out_size), self.index.shape),
                              self.index), w)
            self._dense = dense
        return self._dense

    def _sorted_weights(self, dtype, w):
        key = ("sorted", dtype)
        cast = self._cast.get(key)
        if cast is None:
            cast = self._cast[key] = w.astype(dtype).reshape(self._shape(w.size))
        return cast


@quiet_fp
def _forward(a, maps, name):
    for m in maps:
        a = m.gather(a)
    return a


def _transpose(g, maps, name):
    for m in reversed(maps):
        g = m.scatter(g)
    return g


_OPS: dict = {}


def _forward_vjp(node, g, saved):
    maps, name = node.params
    return (resample_op(name, transposed=True)(g, maps, name),)


def _transpose_vjp(node, g, saved):
    maps, name = node.params
    return (resample_op(name)(g, maps, name),)


def resample_op(name, transposed=False):
    """The op record ``f(x, maps, name)`` applying ``maps`` (AxisMaps, in order), recorded
    as the grad_fn ``name``; ``transposed=True``: its derivative (the maps transposed)."""
    key = (name, transposed)
    op = _OPS.get(key)
    if op is None:
        if transposed:
            op = defop("resample_backward", _transpose, _transpose_vjp,
                       name.replace("Backward0", "BackwardBackward0"), 1, NOTHING)
        else:
            op = defop("resample", _forward, _forward_vjp, name, 1, NOTHING)
        _OPS[key] = op
    return op


def apply_maps(x, maps, name):
    """``x`` resampled by ``maps`` (one :class:`AxisMap` per axis), recorded as ``name``."""
    return resample_op(name)(x, tuple(maps), name)
