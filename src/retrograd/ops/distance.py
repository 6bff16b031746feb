"""Distances: ``cdist``, ``pdist``, ``pairwise_distance``, ``cosine_similarity`` and the
triplet losses built on them.

Two records, as PyTorch: ``CdistBackward0`` (every p, the rows' differences computed
directly) and, for p = 2 when ``compute_mode`` asks for it (or by default when either side
has more than 25 rows), ``EuclideanDistBackward0`` (the matrix-product formula
``|a|^2 - 2 a.b + |b|^2``, then a view to the output shape).

The derivatives are PyTorch's (``_cdist_backward`` and ``_euclidean_dist_backward``),
including their choices where the distance is not differentiable: 0 where a distance is 0
(every p but 1 and inf), ``sign(diff)`` for p = 1, and for p = inf the gradient goes to
every coordinate attaining the maximum (ties are not split).  CdistBackward0's derivative
has no derivative itself, as PyTorch's (a second backward raises NotImplementedError);
forward mode has a rule of its own (PyTorch has none); EuclideanDistBackward0's derivative
is written with retrograd's ops, so it is differentiable again, as PyTorch's composite.
"""

from __future__ import annotations

import math

from ..backend import namespace
from ..tensor import Tensor
from ._apply import BOTH, NOTHING, defop
from ._jvp import RULES as _JVP_RULES
from .linalg import matmul
from . import stats as _stats
from .pointwise import abs as abs_, minimum, sign, sub as _sub, where
from .pointwise import add_number as _add_number
from .reduce import _sum_dim
from .shape import clone, clone_contiguous, expand, reshape, transpose, unsqueeze, view
from .quiet_fp import quiet_fp


_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
          "donot_use_mm_for_euclid_dist")


def _contiguous(x):
    return x if x._data.flags.c_contiguous else clone_contiguous(x)


def _sum(x, axis, keepdim=False):
    shape = tuple(x.shape)
    return _sum_dim(x, (axis % len(shape),), keepdim, shape)


# ----------------------------------------------------------------- CdistBackward0


def _cdist_fwd(x1, x2, p):
    # PyTorch's cdist allocates a contiguous result, whatever the inputs' layouts (so its
    # contiguous() is the tensor itself: seed 12612771)
    return namespace(x1).ascontiguousarray(_cdist_values(x1, x2, p))


@quiet_fp
def _cdist_values(x1, x2, p):
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


def _cdist_backward_vjp(node, g, saved):
    raise NotImplementedError(
        "the derivative for '_cdist_backward' is not implemented (as in PyTorch: cdist has no "
        "second derivative; for p=2, compute_mode='use_mm_for_euclid_dist' has one)")


# PyTorch's _cdist_backward has no derivative: under create_graph the first derivative
# requires grad (CdistBackwardBackward0) and a backward through it raises NotImplementedError,
# as torch's (fuzz seeds 11016021, 11021230, 11036781)
_cdist_backward = defop("_cdist_backward", lambda g, a, b, d, p: _cdist_grad(g, a, b, d, p),
                        _cdist_backward_vjp, "CdistBackwardBackward0", 4, NOTHING)


def _cdist_vjp(node, g, saved):
    x1, x2, d = saved
    p = node.params[0]
    n1, n2 = node.next
    # x2's is x1's formula with the roles swapped (PyTorch: _cdist_backward(grad.mT, x2, x1))
    grad = _cdist_backward if isinstance(g, Tensor) else _cdist_grad
    return (grad(g, x1, x2, d, p) if n1 else None,
            grad(transpose(g, -2, -1), x2, x1, transpose(d, -2, -1), p) if n2 else None)


_cdist = defop("cdist", _cdist_fwd, _cdist_vjp, "CdistBackward0", 2, BOTH)


def _cdist_pair_derivative(a, b, d, p):
    """``d d[..., i, j] / d a[..., i, k]`` for every (i, j, k): shape (..., P, R, M), the
    choices of :func:`_cdist_grad` where the distance is not differentiable."""
    diff = unsqueeze(a, -2) - unsqueeze(b, -3)
    dd = unsqueeze(d, -1)
    if p == 0:
        return diff * 0.0
    if p == 1:
        return sign(diff)
    if math.isinf(p):
        return sign(diff) * where(abs_(diff) == dd, 1.0, 0.0)
    zero = dd == 0
    safe_d = where(zero, 1.0, dd)
    if p == 2:
        return where(zero, 0.0, diff / safe_d)
    if p < 1:
        zero = zero | (diff == 0)
        ad = where(diff == 0, 1.0, abs_(diff))
    else:
        ad = abs_(diff)
    return where(zero, 0.0, sign(diff) * ad ** (p - 1) / safe_d ** (p - 1))


def _cdist_jvp(op, inputs, tangents, out, params):
    # forward mode (PyTorch has none): sum_k D[i, j, k] (t1[i, k] - t2[j, k]); the fallback
    # would transpose the VJP, whose derivative is the NotImplemented record above
    x1, x2 = inputs
    t1, t2 = tangents
    dt = 0.0 if t1 is None else unsqueeze(t1, -2)
    if t2 is not None:
        dt = dt - unsqueeze(t2, -3)
    return _sum(_cdist_pair_derivative(x1, x2, out, params[0]) * dt, -1)


_JVP_RULES[("cdist", "CdistBackward0")] = _cdist_jvp


# ----------------------------------------------------------------- EuclideanDistBackward0


@quiet_fp
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
    if x1._data.dtype.name == "float16":  # (PyTorch's CPU kernel has no Half version)
        raise NotImplementedError("\"cdist\" not implemented for 'Half' (convert first, e.g. "
                                  "x1.float())")
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


# ----------------------------------------------------------------- pdist (PdistBackward0)


_PAIRS: dict = {}


def _pair_index(xp, n):
    """The (i, j), i < j, of pdist's pairs in row-major order, kept for the last few sizes
    (building them costs as much as the distances of a few hundred rows)."""
    key = (xp.__name__, n)
    pairs = _PAIRS.get(key)
    if pairs is None:
        if len(_PAIRS) > 8:
            _PAIRS.clear()
        pairs = _PAIRS[key] = xp.triu_indices(n, 1)
    return pairs


@quiet_fp
def _pdist_fwd(x, p):
    xp = namespace(x)
    i, j = _pair_index(xp, x.shape[0])
    diff = xp.abs(xp.take(x, i, 0) - xp.take(x, j, 0))  # (take: ~10x faster than x[i])
    if p == 0:
        return (diff != 0).sum(-1).astype(x.dtype)
    if p == 1:
        return diff.sum(-1)
    if p == 2:
        return xp.sqrt(xp.einsum("pm,pm->p", diff, diff))
    if math.isinf(p):
        return diff.max(-1, initial=0) if diff.shape[-1] else diff.sum(-1)
    return ((diff ** p).sum(-1)) ** (1.0 / p)


def _pair_grad(g, diff, d, p):
    """The gradient for the first row of each pair (rows ``diff = a - b``), PyTorch's
    ``_pdist_backward`` per pair: the second row gets its negative.  0 where the distance
    is 0 (every p but 1), sign(diff) for p = 1, the maximum coordinates for p = inf."""
    gg, dd = unsqueeze(g, -1), unsqueeze(d, -1)
    if p == 0:
        return diff * 0.0 * gg
    if p == 1:
        return sign(diff) * gg
    if math.isinf(p):
        return sign(diff) * where(abs_(diff) == dd, gg, 0.0)
    zero = dd == 0
    safe_d = where(zero, 1.0, dd)
    if p == 2:
        return where(zero, 0.0, diff * (gg / safe_d))
    if p < 1:
        zero = zero | (diff == 0)
        ad = where(diff == 0, 1.0, abs_(diff))
    else:
        ad = abs_(diff)
    return where(zero, 0.0, sign(diff) * ad ** (p - 1) * (gg / safe_d ** (p - 1)))


def _pair_sums(xp, gp, n, out):
    """``out[i] += gp[k]``, ``out[j] -= gp[k]`` for each pair k = (i, j), as segment sums:
    the pairs are grouped by i already (row-major), and by j in the order of
    ``tril_indices`` (np.add.at, unbuffered, is ~20x slower)."""
    if n < 2:
        return out
    sizes = xp.arange(n - 1, 0, -1)
    starts = xp.concatenate([xp.zeros(1, "int64"), xp.cumsum(sizes)[:-1]])
    out[:-1] += xp.add.reduceat(gp, starts, axis=0)
    jj, ii = xp.tril_indices(n, -1)  # by j, then i
    order = ii * (2 * n - ii - 1) // 2 + (jj - ii - 1)  # their row-major pair numbers
    starts = xp.concatenate([xp.zeros(1, "int64"), xp.cumsum(xp.arange(1, n - 1))])
    out[1:] -= xp.add.reduceat(xp.take(gp, order, 0), starts, axis=0)
    return out


def _pdist_vjp(node, g, saved):
    from .layout import index_select
    from .scatter import index_add

    x, d = saved
    p = node.params[0]
    xp = namespace(d._data if isinstance(d, Tensor) else d)
    n = x.shape[0]
    if p == 2 and not isinstance(g, Tensor):
        # first order, p = 2: grad_i = sum_j r_ij (x_i - x_j) with r = g / d (0 where d = 0)
        # in one symmetric (N, N) matrix and a product, no (pairs, M) arrays
        with xp.errstate(divide="ignore", invalid="ignore"):
            ratio = xp.where(d == 0, 0, g / d)
        i, j = _pair_index(xp, n)
        r = xp.zeros((n, n), x.dtype)
        r[i, j] = ratio
        r += r.T
        return (r.sum(1)[:, None] * x - r @ x,)
    i, j = (xp.asarray(k, dtype="int64") for k in _pair_index(xp, n))
    if isinstance(x, Tensor):
        from ..tensor import make_tensor

        i, j = make_tensor(i), make_tensor(j)
        diff = index_select(x, 0, i) - index_select(x, 0, j)
        zeros = make_tensor(xp.zeros(tuple(x.shape), x._data.dtype))
    else:
        diff = xp.take(x, i, 0) - xp.take(x, j, 0)
        zeros = xp.zeros(x.shape, x.dtype)
    gp = _pair_grad(g, diff, d, p)
    if not isinstance(gp, Tensor):
        return (_pair_sums(xp, gp, n, zeros),)
    return (index_add(index_add(zeros, 0, i, gp), 0, j, gp, alpha=-1),)


_pdist = defop("pdist", _pdist_fwd, _pdist_vjp, "PdistBackward0", 1, BOTH)


def pdist(input, p=2):  # noqa: A002 - PyTorch's names
    """The ``p``-norm distance between every pair of rows ``i < j`` of ``input`` (N, M), in
    row-major order: shape (N (N - 1) / 2,), the upper triangle of ``cdist(input, input)``.

    Examples
    --------
    >>> import retrograd as T
    >>> T.pdist(T.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))
    tensor([5.0000, 1.0000, 4.2426])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"pdist(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if input._data.dtype.kind != "f":
        raise RuntimeError(f"pdist only supports floating-point dtypes, got "
                           f"{str(input.dtype).split('.')[-1]}; convert with x.float()")
    if input._data.dtype.name == "float16":  # (PyTorch's CPU kernel has no Half version)
        raise NotImplementedError("\"pdist\" not implemented for 'Half' (convert first, e.g. "
                                  "x.float())")
    p = float(p)
    if p < 0 or math.isnan(p):
        raise RuntimeError(f"pdist only supports non-negative p values (got p={p})")
    return _pdist(_contiguous(input), p)


# ----------------------------------------------------------------- pairwise_distance


def _named(fn, backward_name):
    """``fn``'s op record again, under another grad_fn name (PyTorch's norm(x, p, dim) is
    NormBackward1, its linalg.vector_norm LinalgVectorNormBackward0: the same derivative)."""
    op = fn.op
    return defop(op.name, op.forward, op.node_cls.vjp, backward_name, op.n_inputs,
                 op.node_cls.saves, op.dtype_rule, op.extras)


_NORM1 = _named(_stats._norm, "NormBackward1")
_NORM1_INF = _named(_stats._norm_inf, "NormBackward1")
_NORM1_ZERO = _named(_stats._norm0, "NormBackward1")


def _norm_backward1(x, p, dim, keepdim):
    axes = (dim % max(x.ndim, 1),) if x.ndim else ()
    if math.isinf(p):
        return _NORM1_INF(x, axes, keepdim, "max" if p > 0 else "min")
    if p == 0:
        return _NORM1_ZERO(x, axes, keepdim)
    return _NORM1(x, p, axes, keepdim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``norm(x1 - x2 + eps, p, dim=-1)``: the distance between matching rows (the inputs
    broadcast).  ``eps`` keeps the gradient finite where x1 = x2.

    Examples
    --------
    >>> import retrograd as T
    >>> T.pairwise_distance(T.tensor([[0.0, 0.0]]), T.tensor([[3.0, 4.0]]), eps=0.0)
    tensor([5.])
    """
    for name, x in (("x1", x1), ("x2", x2)):
        if not isinstance(x, Tensor):
            raise TypeError(f"pairwise_distance(): argument '{name}' must be Tensor, not "
                            f"{type(x).__name__}")
    dim = max(x1.ndim, x2.ndim) - 1
    diff = _add_number(x1 - x2, eps)
    if diff._data.dtype.kind != "f":
        raise RuntimeError(f"pairwise_distance(): expected a floating point input, got "
                           f"{diff.dtype}; convert with x.float()")
    return _norm_backward1(diff, float(p), dim, keepdim)


# ----------------------------------------------------------------- cosine_similarity


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``sum(x1 / |x1| * x2 / |x2|, dim)``, each norm clamped at ``eps`` (without stopping
    the gradient, as PyTorch: the norms are cloned and clamped in place under no_grad); the
    inputs broadcast.

    Examples
    --------
    >>> import retrograd as T
    >>> T.cosine_similarity(T.tensor([[1.0, 0.0]]), T.tensor([[1.0, 1.0]]))
    tensor([0.7071])
    """
    from .. import dtypes
    from ..autograd.grad_mode import no_grad

    for name, x in (("x1", x1), ("x2", x2)):
        if not isinstance(x, Tensor):
            raise TypeError(f"cosine_similarity(): argument '{name}' must be Tensor, not "
                            f"{type(x).__name__}")
    common = dtypes.result_type(x1._data, x2._data)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{str(common).split('.')[-1].capitalize()} (cosine_similarity: "
                           "convert the inputs with x.float())")
    x1, x2 = (x if x._data.dtype == common.numpy else x.to(common) for x in (x1, x2))
    if tuple(x1.shape) != tuple(x2.shape):  # PyTorch's expand_outplace: both expanded
        try:
            shape = namespace(x1._data).broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
        except ValueError:
            from ._errors import broadcast_message

            raise RuntimeError(f"cosine_similarity(): {broadcast_message([x1.shape, x2.shape])}"
                               f" (shapes {list(x1.shape)} and {list(x2.shape)})") from None
        x1, x2 = expand(x1, *shape), expand(x2, *shape)
    ndim = x1.ndim
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise IndexError(f"cosine_similarity(): Dimension out of range (expected to be in "
                         f"range of [{-max(ndim, 1)}, {max(ndim, 1) - 1}], but got {dim})")
    n1 = clone(_stats.norm(x1, 2, dim, True))
    n2 = clone(_stats.norm(x2, 2, dim, True))
    with no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


# ----------------------------------------------------------------- triplet losses


def _same_ndims(anchor, positive, negative):
    a, p, n = anchor.ndim, positive.ndim, negative.ndim
    if not (a == p == n):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {a}D, positive "
                           f"{p}D, and negative {n}D inputs")


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """``max(0, margin + d(a, p) - d(a, n))`` with ``d`` the ``pairwise_distance``; with
    ``swap``, ``d(a, n)`` is replaced by ``d(p, n)`` where smaller.

    Examples
    --------
    >>> import retrograd as T
    >>> a, p, n = T.tensor([[0.0, 0.0]]), T.tensor([[0.0, 1.0]]), T.tensor([[3.0, 0.0]])
    >>> T.nn.functional.triplet_margin_loss(a, p, n, margin=2.5, eps=0.0)
    tensor(0.5000)
    """
    from .losses import check_reduction, reduce_loss
    from .elementwise_losses import legacy_reduction

    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction, "triplet_margin_loss")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _same_ndims(anchor, positive, negative)
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = minimum(dist_neg, pairwise_distance(positive, negative, p, eps))
    loss = _sub(_add_number(dist_pos, float(margin)), dist_neg).clamp_min(0)
    return reduce_loss(loss, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """``triplet_margin_loss`` with any distance: ``distance_function(x, y)`` (default
    ``pairwise_distance``) gives one distance per row.

    Examples
    --------
    >>> import retrograd as T
    >>> F = T.nn.functional
    >>> a, p, n = T.tensor([[1.0, 0.0]]), T.tensor([[1.0, 0.1]]), T.tensor([[0.0, 1.0]])
    >>> F.triplet_margin_with_distance_loss(
    ...     a, p, n, distance_function=lambda x, y: 1 - F.cosine_similarity(x, y))
    tensor(0.0050)
    """
    from .losses import reduce_loss

    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _same_ndims(anchor, positive, negative)
    distance = pairwise_distance if distance_function is None else distance_function
    dist_pos = distance(anchor, positive)
    dist_neg = distance(anchor, negative)
    if swap:
        dist_neg = minimum(dist_neg, distance(positive, negative))
    return reduce_loss((margin + dist_pos - dist_neg).clamp_min(0), reduction)


__all__ = ["cdist", "cosine_similarity", "pairwise_distance", "pdist", "triplet_margin_loss",
           "triplet_margin_with_distance_loss"]



# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

def _triplet_margin_aten(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False,
                         reduction=0):
    """``retrograd.triplet_margin_loss``: PyTorch's top-level spelling (an int reduction)."""
    from .losses import reduction_name

    return triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                               reduction=reduction_name(reduction, "triplet_margin_loss"))


register(cdist, method=False)
register(_triplet_margin_aten, "triplet_margin_loss", method=False)
for _fn in (pdist, pairwise_distance, cosine_similarity):
    register(_fn, method=False, functional=(_fn.__name__,))
for _fn in (triplet_margin_loss, triplet_margin_with_distance_loss):
    register(_fn, function=False, method=False, functional=(_fn.__name__,))
