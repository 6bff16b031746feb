"""Pairwise distances: ``cdist``.

Two records, as PyTorch: ``CdistBackward0`` (every p, the rows' differences computed
directly) and, for p = 2 when ``compute_mode`` asks for it (or by default when either side
has more than 25 rows), ``EuclideanDistBackward0`` (the matrix-product formula
``|a|^2 - 2 a.b + |b|^2``, then a view to the output shape).

The derivatives are PyTorch's (``_cdist_backward`` and ``_euclidean_dist_backward``),
including their choices where the distance is not differentiable: 0 where a distance is 0
(every p but 1 and inf), ``sign(diff)`` for p = 1, and for p = inf the gradient goes to
every coordinate attaining the maximum (ties are not split).  They are written with
retrograd's ops, so they are differentiable again (PyTorch's CdistBackward0 has no second
derivative; retrograd's is the derivative of these formulas).
"""

from __future__ import annotations

import math

from ..backend import namespace
from ..tensor import Tensor
from ._apply import BOTH, defop
from .linalg import matmul
from .pointwise import abs as abs_, sign, where
from .reduce import _sum_dim
from .shape import clone, expand, reshape, transpose, unsqueeze, view

_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
          "donot_use_mm_for_euclid_dist")


def _contiguous(x):
    return x if x._data.flags.c_contiguous else clone(x)


def _sum(x, axis, keepdim=False):
    shape = tuple(x.shape)
    return _sum_dim(x, (axis % len(shape),), keepdim, shape)


# ----------------------------------------------------------------- CdistBackward0


def _cdist_fwd(x1, x2, p):
    xp = namespace(x1)
    diff = xp.abs(x1[..., :, None, :] - x2[..., None, :, :])
    if p == 0:
        return (diff != 0).sum(-1).astype(x1.dtype)
    if p == 1:
        return diff.sum(-1)
    if p == 2:
        return xp.sqrt((diff * diff).sum(-1))
    if math.isinf(p):
        return diff.max(-1, initial=0) if diff.shape[-1] else diff.sum(-1)
    return ((diff ** p).sum(-1)) ** (1.0 / p)


def _cdist_grad(g, a, b, d, p):
    """The gradient for ``a`` of ``d = cdist(a, b, p)`` (PyTorch's ``_cdist_backward``)."""
    diff = unsqueeze(a, -2) - unsqueeze(b, -3)  # (..., P, R, M)
    gg, dd = unsqueeze(g, -1), unsqueeze(d, -1)
    if p == 0:  # a count of nonzero differences: flat almost everywhere
        return _sum(diff * 0.0 * gg, -2)
    if p == 1:
        return _sum(sign(diff) * gg, -2)
    if math.isinf(p):  # every coordinate attaining the maximum gets the whole gradient
        return _sum(sign(diff) * where(abs_(diff) == dd, gg, 0.0), -2)
    zero = dd == 0
    safe_d = where(zero, 1.0, dd)  # (no 0/0 in this formula's own derivative either)
    if p == 2:
        return _sum(where(zero, 0.0, diff * (gg / safe_d)), -2)
    if p < 1:  # |diff|^(p-1) is infinite at diff = 0: PyTorch gives 0 there
        zero = zero | (diff == 0)
        ad = where(diff == 0, 1.0, abs_(diff))
    else:
        ad = abs_(diff)
    term = sign(diff) * ad ** (p - 1) * (gg / safe_d ** (p - 1))
    return _sum(where(zero, 0.0, term), -2)


def _cdist_vjp(node, g, saved):
    x1, x2, d = saved
    p = node.params[0]
    n1, n2 = node.next
    # x2's is x1's formula with the roles swapped (PyTorch: _cdist_backward(grad.mT, x2, x1))
    return (_cdist_grad(g, x1, x2, d, p) if n1 else None,
            _cdist_grad(transpose(g, -2, -1), x2, x1, transpose(d, -2, -1), p) if n2 else None)


_cdist = defop("cdist", _cdist_fwd, _cdist_vjp, "CdistBackward0", 2, BOTH)


# ----------------------------------------------------------------- EuclideanDistBackward0


def _euclid_fwd(x1, x2):
    # PyTorch's _euclidean_dist: one matrix product of padded rows, clamped at 0
    xp = namespace(x1)
    n1 = (x1 * x1).sum(-1, keepdims=True)
    n2 = (x2 * x2).sum(-1, keepdims=True)
    a = xp.concatenate([-2 * x1, n1, xp.ones_like(n1)], -1)
    b = xp.concatenate([x2, xp.ones_like(n2), n2], -1)
    return xp.sqrt(xp.maximum(a @ b.swapaxes(-1, -2), 0))


def _euclid_vjp(node, g, saved):
    # PyTorch's _euclidean_dist_backward: ratio = g / d, 0 where d = 0
    x1, x2, d = saved
    n1, n2 = node.next
    zero = d == 0
    ratio = where(zero, 0.0, g / where(zero, 1.0, d))
    return (x1 * _sum(ratio, -1, True) - matmul(ratio, x2) if n1 else None,
            x2 * unsqueeze(_sum(ratio, -2), -1) - matmul(transpose(ratio, -2, -1), x1)
            if n2 else None)


_euclid = defop("_euclidean_dist", _euclid_fwd, _euclid_vjp, "EuclideanDistBackward0", 2, BOTH)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The ``p``-norm distance between each row of ``x1`` (..., P, M) and each row of ``x2``
    (..., R, M): shape (..., P, R), the batch dimensions broadcast."""
    for name, x in (("X1", x1), ("X2", x2)):
        if not isinstance(x, Tensor):
            raise TypeError(f"cdist(): argument '{name.lower()}' must be Tensor, not "
                            f"{type(x).__name__}")
    if compute_mode not in _MODES:
        raise ValueError(f"cdist(): {compute_mode} is not a valid value for compute_mode (one "
                         f"of {', '.join(_MODES)})")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"cdist(): X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    for name, x in (("X1", x1), ("X2", x2)):
        if x._data.dtype.kind != "f":
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{str(x.dtype).split('.')[-1].capitalize()}")
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"cdist(): expected scalar type {x1.dtype} but found {x2.dtype} "
                           "(X1 and X2 must have the same dtype; convert one with .to())")
    p = float(p)
    if p < 0 or math.isnan(p):
        raise RuntimeError(f"cdist only supports non-negative p values (got p={p})")
    b1, b2 = tuple(x1.shape[:-2]), tuple(x2.shape[:-2])
    n = max(len(b1), len(b2))
    for i, (s, t) in enumerate(zip((1,) * (n - len(b1)) + b1, (1,) * (n - len(b2)) + b2)):
        if s != t and s != 1 and t != 1:
            raise RuntimeError(f"cdist(): The size of tensor a ({s}) must match the size of "
                               f"tensor b ({t}) at non-singleton dimension {i} (batch shapes "
                               f"{list(b1)} and {list(b2)})")
    r1, r2 = x1.shape[-2], x2.shape[-2]
    if p == 2 and (compute_mode == _MODES[1] or (compute_mode == _MODES[0]
                                                 and (r1 > 25 or r2 > 25))):
        batch = tuple(max(s, t) for s, t in zip((1,) * (n - len(b1)) + b1,
                                                (1,) * (n - len(b2)) + b2))
        if n:  # PyTorch expands both to the batch shape and views them as one batch
            size = 1
            for s in batch:
                size *= s
            x1, x2 = (view(_contiguous(expand(x, *batch, *x.shape[-2:])), size, *x.shape[-2:])
                      for x in (x1, x2))
        out = _euclid(x1, x2)
        return reshape(out, *batch, r1, r2)  # and views the result to the output shape
    return _cdist(x1, x2, p)


__all__ = ["cdist"]


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(cdist, method=False)
