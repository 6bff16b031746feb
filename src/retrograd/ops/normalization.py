"""Normalization ops: batch_norm, layer_norm, group_norm (each its own record with a
hand-written derivative), and instance_norm, rms_norm, local_response_norm, normalize
(composed from other ops, as PyTorch records them).

The three records share one forward and one derivative.  Each normalizes ``x`` over some
axes of a *statistics view* of it (batch_norm: ``(N, C, L)`` over axes 0 and 2; layer_norm:
``(M, K)`` over axis 1; group_norm: ``(N, G, D)`` over axis 2) and applies ``weight`` and
``bias`` in an *affine view* (per channel, or per normalized element).  The derivative is
PyTorch's (``native_batch_norm_backward`` and friends)::

    xhat = (x - mean) * rstd
    dx = rstd * (gx - mean(gx) - xhat * mean(gx * xhat)),   gx = g * weight
    dweight = sum(g * xhat), dbias = sum(g)

The records' forward also updates batch_norm's running statistics in place (training), so
a replayed forward does too.  A first-order backward runs on arrays with the saved mean and
rstd; with ``create_graph=True`` the statistics are recomputed from the saved input with
retrograd ops, so the derivative is itself differentiable (gradient penalties through a
normalized layer), and for float32 the whole derivative runs in float64, rounded once.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from ..backend import namespace
from ..tensor import Tensor, make_tensor
from ._apply import INPUTS, NOTHING, defop
from ._errors import dim_error, float_only, scalar_type_name
from .derivative_flags import tie
from .pointwise import add_number
from .pointwise_common import to_dtype
from .stats import quiet
from .quiet_fp import mean_of, quiet_fp


class _Layout(NamedTuple):
    """How a record views its input (see the module docstring)."""

    stat_shape: tuple  # x viewed for the statistics
    stat_axes: tuple  # the axes normalized over, in that view
    aff_shape: tuple  # x viewed for weight and bias
    w_shape: tuple  # weight and bias viewed to broadcast there
    aff_axes: tuple  # the axes summed for their gradients
    eps: float
    fixed: bool  # batch_norm in eval mode: mean and rstd are constants (the running stats)


def _mean(a, axes):
    if isinstance(a, Tensor):
        return a.mean(axes, keepdim=True)
    return a.mean(axis=axes, keepdims=True)


def _sum(a, axes):
    if isinstance(a, Tensor):
        return a.sum(axes)
    return a.sum(axis=axes)


def _sum_kept(a, axes):
    """``a.sum(axis=axes, keepdims=True)`` on an array; over the outer and inner axes (0, 2)
    of (N, C, L) one axis at a time, the inner first: NumPy's one-call reduction over
    non-adjacent axes takes ~20x longer on a (32, 64, 1024) float32 input (einsum here).

    batch_norm's sums (and instance_norm's, through it) are float64 for a float32 or float16
    input, as PyTorch's CPU kernel accumulates (its accumulate type): NumPy's float32 sum
    over the strided batch axis is naive, not pairwise, and was ~2x (up to 80x on a weight
    gradient) further off a float64 reference than PyTorch (fuzz seed 16220117).  The
    caller rounds the per-channel results it derives from them (see _rounded)."""
    if axes == (0, 2):
        # (einsum's float64 sum of a float32 input: ~1.5-2x faster than NumPy's buffered
        # ``sum(dtype=float64)`` and than the float32 sum one axis at a time)
        xp = namespace(a)
        return xp.einsum("ncl->c", a, dtype=_acc_dtype(a)).reshape(1, a.shape[1], 1)
    return a.sum(axis=axes, keepdims=True)


def _acc_dtype(a):
    return a.dtype if a.dtype.itemsize >= 8 or a.dtype.kind != "f" else "float64"


def _rounded(v, like):
    """A per-channel value computed in the accumulate type, rounded once to ``like``'s."""
    return v.astype(like.dtype, copy=False)


def _mean_kept(a, axes):
    return _sum_kept(a, axes) / math.prod(a.shape[i] for i in axes)


def _moments(xs, axes):
    """(mean, biased variance) over ``axes``, both kept as size-1 axes."""
    mean = _mean(xs, axes)
    xc = xs - mean
    return mean, _mean(xc * xc, axes)


@quiet_fp
def _norm_fwd(x, w, b, p: _Layout, fixed=None):
    """The normalized, scaled and shifted ``x``; and (mean, rstd, var) in the stats view.
    (Every full-size pass counts on big inputs: the centred input becomes the result.)"""
    xp = namespace(x)
    xs = x.reshape(p.stat_shape)
    with quiet(xp):  # (an empty batch: nan statistics, as PyTorch)
        if fixed is None and p.stat_axes == p.aff_axes:
            y, mean, rstd, var = _bn_train_fwd(xs, w, b, p, xp)
            return y.reshape(x.shape), mean, rstd, var
        if fixed is None:
            y, mean, rstd, var = _row_stats_fwd(xs, p, xp)
        else:
            mean, rstd = fixed
            var = None
            y = xs - mean
        if fixed is None:  # (y is already scaled: _row_stats_fwd)
            y = y.reshape(p.aff_shape)
            if w is not None:
                y *= w.reshape(p.w_shape)
        elif w is not None and p.stat_axes == p.aff_axes:  # batch_norm: one scale per channel
            y *= rstd * w.reshape(p.w_shape)
        else:
            y *= rstd
            y = y.reshape(p.aff_shape)
            if w is not None:
                y *= w.reshape(p.w_shape)
        if b is not None:
            y = y.reshape(p.aff_shape)
            y += b.reshape(p.w_shape)
    return y.reshape(x.shape), mean, rstd, var


def _acc_mean_kept(a, axes):
    """The mean over ``axes`` (kept) in the accumulate type: float64 for float32/float16."""
    acc = _acc_dtype(a)
    if acc == a.dtype or axes == (0, 2):
        return _mean_kept(a, axes)
    n = math.prod(a.shape[i] for i in axes)
    if axes == (a.ndim - 1,):  # (einsum's float64 row sums: ~2x NumPy's buffered sum here)
        return namespace(a).einsum("...k->...", a, dtype=acc)[..., None] / n
    return a.sum(axis=axes, keepdims=True, dtype=acc) / n


def _row_stats_fwd(xs, p, xp):
    """layer_norm and group_norm: ``(x - mean) * rstd`` and (mean, rstd, var), the statistics
    in the accumulate type (float64 for float32), as _bn_train_fwd: ``x - mean32`` is exact
    near the mean, and the mean's float32 rounding ``mean32 - mean`` is added back scaled
    (``shift``), not left multiplied by a large rstd.  A float32 mean summed in float32 was
    off by an ulp for a row of equal values, so its normalized row came out -1.9e-05, not 0
    (fuzz seed 19427977); this way a row's values are ~500x closer to a float64 reference
    than before in aggregate, and closer than PyTorch's."""
    mean_acc = _acc_mean_kept(xs, p.stat_axes)
    if mean_acc.dtype == xs.dtype and xs.size:
        # float64: sum / n is not exactly c for a row of equal values c (1.56 x 3 gives
        # 1.5600000000000003), and the row's residue then meets a kink downstream where
        # PyTorch's row moments give exactly 0 (fuzz seed 20722360: abs after layer_norm,
        # gradient 463 against 0); one correction pass makes a constant row exact
        mean_acc = mean_acc + _acc_mean_kept(xs - mean_acc, p.stat_axes)
    mean = _rounded(mean_acc, xs)
    y = xs - mean
    var = _acc_mean_kept(y * y, p.stat_axes)
    rstd = 1 / xp.sqrt(var + p.eps)
    if mean_acc.dtype == xs.dtype:  # (float64: nothing was rounded)
        y *= rstd
        return y, mean, rstd, var
    shift = _rounded((mean - mean_acc) * rstd, xs)
    rstd = _rounded(rstd, xs)
    y *= rstd
    y += shift
    return y, mean, rstd, _rounded(var, xs)


def _bn_train_fwd(xs, w, b, p, xp):
    """batch_norm in training (and instance_norm): the statistics and the per-channel
    factors in the accumulate type (float64 for float32, see _sum_kept), each rounded once.
    ``y = (x - mean32) * scale + shift``: ``x - mean32`` is exact near the mean, and the
    mean's float32 rounding ``mean32 - mean`` goes into ``shift``, so it is not multiplied
    by ``scale`` (a large ``rstd`` when the spread is small next to the mean)."""
    mean_acc = _mean_kept(xs, p.stat_axes)
    mean = _rounded(mean_acc, xs)
    y = xs - mean
    var = _mean_kept(y * y, p.stat_axes)
    rstd = 1 / xp.sqrt(var + p.eps)
    scale = rstd if w is None else rstd * w.reshape(p.w_shape)
    shift = (mean - mean_acc) * scale
    if b is not None:
        shift = shift + b.reshape(p.w_shape)
    y *= _rounded(scale, xs)
    y += _rounded(shift, xs)
    return y, mean, _rounded(rstd, xs), _rounded(var, xs)


# PyTorch's group_norm double backward reads the mean and rstd *outputs* of its forward node,
# which require grad whenever weight or bias does, so the weight gradient made under
# create_graph requires grad even when the input does not; their derivative reaches only the
# input, so a second backward leaves weight.grad and bias.grad None (seed 9970909).  This
# record ties the recomputed rstd to weight and bias the same way: identity, None for them.
_stats_of_node = defop("group_norm_stats", lambda a, w, b: a.copy(),
                       lambda node, g, saved: (g if node.next[0] else None, None, None),
                       "NativeGroupNormBackward0", 3, NOTHING)


# The statistics under create_graph: the forward's saved values (accumulated in float64 for
# a float32 input) with the derivative of their float32 recomputation from x.  PyTorch's
# double backwards (batchnorm_double_backward, layer_norm_double_backward) read the saved
# mean and invstd too; the recomputed float32 moments of a channel whose spread is small
# next to its mean were off enough that a second-order gradient came out 2e-4 relative
# from PyTorch's, 5x farther from a float64 reference (fuzz seed 20916633).  (Named as
# the forward's node: PyTorch's saved statistics are outputs of it.)
_SAVED_VALUE = {name: defop("norm_saved_statistic", lambda a, value: value.copy(),
                            lambda node, g, saved: (g,), name, 1, NOTHING)
                for name in ("NativeBatchNormBackward0", "NativeLayerNormBackward0",
                             "NativeGroupNormBackward0")}


def _norm_vjp(node, g, saved):
    x, w, b, mean, rstd = saved
    p = node.params[0]
    nx, nw, nb = node.next
    x_in, w_in, b_in = x, w, b  # (the records' inputs: anchors, and the results' dtype)
    acc = _acc_dtype(x._data) if isinstance(g, Tensor) else None
    if acc is not None and acc != x._data.dtype:
        # create_graph on float32 (float16): the whole derivative in float64, as the
        # forward's statistics and the first-order sums, each result rounded once by its
        # cast back (and, in the second backward, each input's gradient by the cast's).
        # In float32 its reductions, and the engine's sums of the per-group values it
        # broadcasts, rounded at every step (naively over batch_norm's strided batch
        # axis): over random float32 Hessian-vector products it was more than 2x further
        # off a float64 run than PyTorch in 1-3 % of cases (4.7x at worst), and up to 16x
        # further than now where the second derivative cancels heavily; now in 0-1 %
        # (2.8x at worst, ulp-level noise; bench/norm_second_order.py --floor 0).  The
        # statistics stay the forward's saved ones (rounded to float32, as PyTorch's), so
        # this first derivative is still the first-order path's (arrays, untouched).
        x, g = to_dtype(x, acc), to_dtype(g, acc)
        w = None if w is None else to_dtype(w, acc)
        mean, rstd = mean.astype(acc), rstd.astype(acc)  # (eval: the running statistics)
    else:
        acc = None
    if isinstance(g, Tensor) and not p.fixed:
        # create_graph: the statistics as functions of x, so that dx is differentiable in x
        xs = x.reshape(p.stat_shape)
        mean_x, var = _moments(xs, p.stat_axes)
        saved_value = _SAVED_VALUE[node.name()]
        mean = saved_value(mean_x, mean)
        rstd = saved_value((var + p.eps).rsqrt(), rstd)
        if p.stat_axes == (2,) and (nw or nb):  # group_norm (see _stats_of_node)
            rstd = _stats_of_node(rstd, w_in, b_in)
    else:
        xs = x.reshape(p.stat_shape)
    xhat = (xs - mean) * rstd
    ga = g.reshape(p.aff_shape)
    dx = dw = db = None
    if nx:
        gx = ga if w is None else ga * w.reshape(p.w_shape)
        gx = gx.reshape(p.stat_shape)
        if p.fixed:
            dx = gx * rstd
        else:
            dx = (gx - _mean(gx, p.stat_axes) - xhat * _mean(gx * xhat, p.stat_axes)) * rstd
        dx = _rounded_back(dx, x_in, acc).reshape(tuple(x.shape))
    if nw:
        dw = _sum(ga * xhat.reshape(p.aff_shape), p.aff_axes)
        if p.stat_axes == (2,) and p.stat_shape[2] == 0 and p.stat_shape[0]:
            # group_norm of empty groups: PyTorch's kernel (as _grouped_grads) scales each
            # sample's sum by its nan rstd, so the weight's gradient is nan (seed 12557762)
            dw = dw * math.nan
        dw = _rounded_back(dw, x_in, acc).reshape(tuple(w.shape))
    if nb:
        db = _rounded_back(_sum(ga, p.aff_axes), x_in, acc).reshape(_input_shape(node, 2))
    x, w = x_in, w_in
    if isinstance(g, Tensor) and p.stat_axes != (2,):  # (group_norm: see _stats_of_node)
        # PyTorch's native_batch_norm_backward takes the input and weight, and
        # native_layer_norm_backward the bias too: under create_graph every derivative
        # requires grad when one of them does; their double backward gives them nothing here
        if p.stat_axes == (1,):
            anchors, name = (x, w, b), "NativeLayerNormBackwardBackward0"
        else:
            anchors, name = (x, w), "NativeBatchNormBackwardBackward0"
        dx, dw, db = (tie(d, anchors, name) for d in (dx, dw, db))
    return dx, dw, db


def _rounded_back(d, like, acc):
    """A create_graph derivative computed in the accumulate type ``acc`` (None: in the
    input's dtype) cast back to ``like``'s dtype (before the final reshape, so the results
    keep their ViewBackward0)."""
    return d if acc is None else to_dtype(d, like._data.dtype)


def _input_shape(node, i):
    """The shape of input ``i``'s gradient, read off its edge: batch_norm and group_norm
    keep no bias, as PyTorch's (changing it in place before backward is no error)."""
    child = node.next[i]
    if getattr(child, "multi_output", False):
        return tuple(child.out_shape[node.next_nr[i] if node.next_nr else 0])
    return tuple(child.out_shape)


def _norm_vjp_arrays(node, g, saved):
    """First order on arrays, with as few full-size passes as the formula allows: the input
    centred once (``xc``, not divided by the std: rstd goes into the per-row or
    per-channel factors), one product ``g * xc`` for both weight and input gradients, and
    the per-channel sums it needs reused."""
    if isinstance(g, Tensor):
        return _norm_vjp(node, g, saved)
    x, w, b, mean, rstd = saved
    p = node.params[0]
    nx, nw, nb = node.next
    xp = namespace(g)
    ga = g.reshape(p.aff_shape)
    wb = None if w is None else w.reshape(p.w_shape)
    xc = x.reshape(p.stat_shape) - mean
    prod = ga * xc.reshape(p.aff_shape) if nw or (nx and not p.fixed) else None
    with quiet(xp):
        if p.stat_axes == p.aff_axes:  # batch_norm: statistics per channel, as the affine
            dx, dw, db = _bn_grads(ga, xc, prod, wb, rstd, p, nx, nw, nb, xp)
        else:
            dx, dw, db = _grouped_grads(ga, xc, prod, wb, rstd, p, nx, nw, nb, xp)
    return (None if dx is None else dx.reshape(x.shape), None if dw is None else
            dw.reshape(w.shape), None if db is None else db.reshape(_input_shape(node, 2)))


def _bn_grads(ga, xc, prod, wb, rstd, p, nx, nw, nb, xp):
    # (the sums are in the accumulate type, float64 for float32: the per-channel factors
    # are computed there and rounded once)
    gsum = _sum_kept(ga, p.aff_axes) if nb or (nx and not p.fixed) else None
    gxsum = None if prod is None else _sum_kept(prod, p.aff_axes) * rstd  # sum(g * xhat)
    dx = None
    if nx:
        k = rstd if wb is None else _rounded(rstd.astype(_acc_dtype(rstd)) * wb, ga)
        if p.fixed:  # eval: the statistics are constants
            dx = ga * k
        else:  # rstd * w * (g - mean(g) - xhat * mean(g * xhat))
            n = math.prod(p.stat_shape[a] for a in p.stat_axes)
            xc *= _rounded(rstd * gxsum / n, xc)
            xc += _rounded(gsum / n, xc)
            dx = xp.subtract(ga, xc, out=prod)  # (prod's memory: one allocation less)
            dx *= k
    return (dx, _rounded(gxsum, ga) if nw else None, _rounded(gsum, ga) if nb else None)


def _grouped_grads(ga, xc, prod, wb, rstd, p, nx, nw, nb, xp):
    """layer_norm ((M, K), one statistic per row: the weighted row sums are matrix-vector
    products) and group_norm ((N, C, L) for the affine, (N, G, D) for the statistics: sums
    per (sample, channel) first, then per group)."""
    dx = dw = db = None
    if len(p.aff_shape) == 2:  # layer_norm
        m, k = p.aff_shape
        wf = None if wb is None else wb.reshape(k)
        r = rstd  # (M, 1)
        if nw:
            dw = rstd.reshape(m) @ prod  # sum over rows of g * xhat
        if nb:
            db = ga.sum(axis=0)
        if nx:
            s0 = (ga.sum(axis=1) if wf is None else ga @ wf)[:, None] / k  # mean(gx)
            # mean(gx * xhat), xhat = xc * rstd
            s1 = (prod.sum(axis=1) if wf is None else prod @ wf)[:, None] * (r / k)
    else:  # group_norm
        n, c, _ = p.aff_shape
        groups, d = p.stat_shape[1], p.stat_shape[2]
        per = c // groups

        def spread(v):  # (N, G) -> (N, C, 1), each group's value on its channels
            return xp.repeat(v.reshape(n, groups), per, axis=1).reshape(n, c, 1)

        r = spread(rstd)
        pc = None if prod is None else prod.sum(axis=2)  # (N, C): sums of g * xc
        gc = ga.sum(axis=2) if nb or nx else None
        if nw:
            dw = (pc * r[:, :, 0]).sum(axis=0)
        if nb:
            db = gc.sum(axis=0)
        if nx:
            if wb is not None:
                gc = gc * wb.reshape(1, c)
                pc = pc * wb.reshape(1, c)
            s0 = spread(gc.reshape(n, groups, per).sum(axis=2) / d)
            s1 = spread(pc.reshape(n, groups, per).sum(axis=2) / d) * r
    if nx:
        xa = xc.reshape(p.aff_shape)
        dx = ga * wb if wb is not None else ga.copy()
        dx -= s0
        dx -= xp.multiply(xa, s1 * r, out=prod)  # xhat * mean(gx * xhat)
        dx *= r
    return dx, dw, db


def _data(t):
    return None if t is None else t._data


def _channels_last(x) -> bool:
    """Whether a 4-d ``x`` is dense in channels-last order (PyTorch's suggest_memory_format:
    the one layout its normalization kernels keep)."""
    if x.ndim != 4 or x.size < 2:
        return False
    n, c, h, w = x.shape
    want = (h * w * c, 1, w * c, c)
    return all(s == k * x.itemsize or d == 1 for s, k, d in zip(x.strides, want, x.shape))


def _norm_op_fwd(x, w, b, p: _Layout, fixed, running, momentum):
    """The records' forward on arrays: ``(y, (mean, rstd))``, the two saved for the
    derivative; ``running`` (batch_norm in training): the running stats' arrays, updated in
    place here, so that a replayed forward updates them too."""
    y, mean, rstd, var = _norm_fwd(x, w, b, p, fixed)
    if not y.flags.c_contiguous and not _channels_last(x):
        # PyTorch's kernels write a row-major result (a channels-last 4-d input keeps its
        # format): NumPy's arithmetic followed the input's layout (a transpose)
        y = namespace(y).ascontiguousarray(y)
    count = math.prod(p.stat_shape[a] for a in p.stat_axes)
    if running is not None and count:  # (an empty batch leaves them, as PyTorch)
        rm, rv = running
        with quiet(namespace(x)):
            # momentum, the unbiased variance; and, as PyTorch's kernel, no new version (the
            # stats are buffers, not graph inputs)
            if rm is not None:
                rm *= 1 - momentum
                rm += momentum * mean.reshape(rm.shape)
            if rv is not None:
                unbiased = var * (count / (count - 1)) if count > 1 else var * math.inf
                rv *= 1 - momentum
                rv += momentum * unbiased.reshape(rv.shape)
    # (eval mode: the running stats' values now, not the arrays, which may change later)
    return y, (mean if fixed is None else mean.copy(), rstd)


# (PyTorch's batch_norm and group_norm save no bias: their derivatives do not take it;
# layer_norm's does, so an in-place change of the bias before backward raises there only)
_batch_norm_op = defop("batch_norm", _norm_op_fwd, _norm_vjp_arrays, "NativeBatchNormBackward0",
                       3, INPUTS, extras=True, saved_for=lambda needs: (True, True, False))
_layer_norm_op = defop("layer_norm", _norm_op_fwd, _norm_vjp_arrays, "NativeLayerNormBackward0",
                       3, INPUTS, extras=True)
_group_norm_op = defop("group_norm", _norm_op_fwd, _norm_vjp_arrays, "NativeGroupNormBackward0",
                       3, INPUTS, extras=True, saved_for=lambda needs: (True, True, False))


def _check_same_dtype(x, name, *params):
    for t in params:
        if t is not None and t._data.dtype != x._data.dtype:
            raise RuntimeError(
                f"mixed dtype (CPU): all inputs must share same datatype. ({name} got input "
                f"{scalar_type_name(x._data.dtype)} and a weight or bias "
                f"{scalar_type_name(t._data.dtype)}; convert them with .to(x.dtype))")


def _check_numel(t, what, n, name):
    if t is not None and t._data.size != n:
        raise RuntimeError(f"{what} should contain {n} elements not {t._data.size} ({name}'s "
                           f"{what} has one value per channel: dimension 1 of the input)")


# ----------------------------------------------------------------- batch_norm


def _batch_norm(x, weight, bias, running_mean, running_var, training, momentum, eps,
                name="batch_norm"):
    if x.ndim < 2:
        raise dim_error(1, x.ndim)
    n, c = x.shape[0], x.shape[1]
    length = math.prod(x.shape[2:])
    for t, what in ((weight, "weight"), (bias, "bias"), (running_mean, "running_mean"),
                    (running_var, "running_var")):
        _check_numel(t, what, c, name)
    if x._data.size == 0:
        # PyTorch's empty-input path (_batch_norm_impl_index): a clone times weight[0] plus
        # bias[0], so the graph stays connected (CloneBackward0, MulBackward0, AddBackward0);
        # no statistics, and the running ones are left alone (fuzz seeds 10000088, 10008777);
        # any dtype, as there: the kernel's dtype check is never reached (seed 11907661)
        out = x.clone()
        if weight is not None:
            out = out * weight[0]
        if bias is not None:
            out = out + bias[0]
        return out
    float_only(x, "batch_norm", name)
    _check_same_dtype(x, name, weight, bias)
    for t in (running_mean, running_var):
        if t is not None and t._data.dtype != x._data.dtype:
            raise RuntimeError(
                f"mixed dtype (CPU): expect parameter to have scalar type of "
                f"{scalar_type_name(x._data.dtype)} ({name} got running stats of "
                f"{scalar_type_name(t._data.dtype)}; keep them in the input's dtype)")
    p = _Layout((n, c, length), (0, 2), (n, c, length), (1, c, 1), (0, 2), eps,
                not training)
    if training:
        running = (_data(running_mean), _data(running_var))
        return _batch_norm_op(x, weight, bias, p, None, running, momentum)
    if running_mean is None or running_var is None:
        raise RuntimeError("running_mean must be defined in evaluation mode (batch_norm with "
                           "training=False normalizes with the running statistics; pass them, "
                           "or training=True)")
    xp = namespace(x._data)
    rm = running_mean._data.reshape(1, c, 1)
    rstd = 1 / xp.sqrt(running_var._data.reshape(1, c, 1) + eps)
    return _batch_norm_op(x, weight, bias, p, (rm, rstd), None, momentum)


def _verify_batch_size(size):
    count = size[0] * math.prod(size[2:])
    if count == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{size} (batch_norm and group_norm need more than one value to "
                         "normalize over; use eval mode, or a bigger batch)")


def batch_norm(input, running_mean, running_var, weight=None, bias=None,  # noqa: A002
               training=False, momentum=0.1, eps=1e-05):
    """Normalize each channel (dimension 1) of ``input`` ``(N, C, *)`` to zero mean and unit
    variance, then scale by ``weight`` and shift by ``bias`` (each ``(C,)``).

    In training the statistics are the batch's, and ``running_mean`` / ``running_var`` (when
    given) are updated in place: ``r = (1 - momentum) * r + momentum * stat``, the variance
    unbiased.  In evaluation (``training=False``) the running statistics normalize.

    Examples
    --------
    >>> import retrograd as T
    >>> x = T.tensor([[1.0], [3.0]])
    >>> rm, rv = T.zeros(1), T.ones(1)
    >>> T.nn.functional.batch_norm(x, rm, rv, training=True)
    tensor([[-1.0000],
            [ 1.0000]])
    >>> rm, rv
    (tensor([0.2000]), tensor([1.1000]))
    """
    if momentum is None:
        raise TypeError("batch_norm(): argument 'momentum' (position 7) must be float, not "
                        "NoneType (nn.BatchNorm's momentum=None, a cumulative average, is the "
                        "module's to compute)")
    if training:
        _verify_batch_size(input.shape)
    return _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


def batch_norm_aten(input, weight, bias, running_mean, running_var, training,  # noqa: A002
                    momentum, eps, cudnn_enabled):
    """``retrograd.batch_norm``: PyTorch's top-level form (argument order of ATen's op)."""
    return _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


# ----------------------------------------------------------------- layer_norm, group_norm


def _normalized_shape(shape, name):
    if isinstance(shape, int) or not isinstance(shape, (tuple, list)) and not hasattr(
            shape, "__len__"):
        raise TypeError(f"{name}(): argument 'normalized_shape' (position 2) must be tuple of "
                        f"ints, not {type(shape).__name__} (write ({shape},) for one dimension)")
    return tuple(int(s) for s in shape)


def _check_normalized(x, shape, weight, bias, name, sep=", "):
    k = len(shape)
    if k == 0 or k > x.ndim or tuple(x.shape[x.ndim - k:]) != shape:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape "
            f"[*{sep if name == 'layer_norm' else ''}{', '.join(map(str, shape))}], but got "
            f"input of size{list(x.shape)} ({name} normalizes the last dimensions of its input)")
    for t, what in ((weight, "weight"), (bias, "bias")):
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(
                f"Expected {what} to be of same shape as normalized_shape, but got {what} of "
                f"shape {list(t.shape)} and normalized_shape = {list(shape)} ({name})")


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):  # noqa: A002
    """Normalize over the last ``len(normalized_shape)`` dimensions of ``input`` (each sample
    to zero mean and unit variance), then scale by ``weight`` and shift by ``bias`` (both of
    ``normalized_shape``).

    Examples
    --------
    >>> import retrograd as T
    >>> T.nn.functional.layer_norm(T.tensor([[1.0, 3.0]]), (2,))
    tensor([[-1.0000,  1.0000]])
    """
    shape = _normalized_shape(normalized_shape, "layer_norm")
    _check_normalized(input, shape, weight, bias, "layer_norm")
    _check_same_dtype(input, "layer_norm", weight, bias)
    # the kernel's dtype check comes after the shape and dtype-agreement checks, as PyTorch's
    float_only(input, "LayerNormKernelImpl", "layer_norm")
    k = math.prod(shape)
    m = math.prod(input.shape[:input.ndim - len(shape)])
    p = _Layout((m, k), (1,), (m, k), (1, k), (0,), eps, False)
    return _layer_norm_op(input, weight, bias, p, None, None, None)


def layer_norm_aten(input, normalized_shape, weight=None, bias=None, eps=1e-05,  # noqa: A002
                    cudnn_enable=True):
    """``retrograd.layer_norm``: PyTorch's top-level form (with ``cudnn_enable``)."""
    return layer_norm(input, normalized_shape, weight, bias, eps)


def _group_norm(x, num_groups, weight, bias, eps):
    if x.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{x.ndim} (group_norm takes (N, C, *))")
    n, c = x.shape[0], x.shape[1]
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got input "
            f"of shape {list(x.shape)} and num_groups={num_groups} (group_norm)")
    for t in (weight, bias):
        if t is not None and (t.ndim != 1 or t.shape[0] != c):
            raise RuntimeError(
                f"Expected weight to be a vector of size equal to the number of channels in "
                f"input, but got weight of shape {list(t.shape)} and input of shape "
                f"{list(x.shape)} (group_norm)")
    _check_same_dtype(x, "group_norm", weight, bias)
    # the kernel's dtype check comes last, after the shape checks, as PyTorch's
    float_only(x, "GroupNormKernelImpl", "group_norm")
    # PyTorch's composite makes the three contiguous first (CloneBackward0 for a strided one),
    # so its node saves that copy: an in-place change of a transposed input is no error at
    # backward there (fuzz seed 12661846)
    x, weight, bias = (t if t is None else t.contiguous() for t in (x, weight, bias))
    length = math.prod(x.shape[2:])
    p = _Layout((n, num_groups, c // num_groups * length), (2,), (n, c, length), (1, c, 1),
                (0, 2), eps, False)
    return _group_norm_op(x, weight, bias, p, None, None, None)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):  # noqa: A002
    """Split the channels of ``input`` ``(N, C, *)`` into ``num_groups`` groups and normalize
    each group of each sample; then scale and shift per channel (``weight``, ``bias``: ``(C,)``).

    Examples
    --------
    >>> import retrograd as T
    >>> T.nn.functional.group_norm(T.tensor([[1.0, 3.0]]), 1)
    tensor([[-1.0000,  1.0000]])
    """
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim} (group_norm takes (N, C, *))")
    # PyTorch's functional checks the batch size first, for any num_groups (a group count
    # that does not divide the channels too: its floor division), so the ValueError or
    # ZeroDivisionError comes before the kernel's divisibility check
    if num_groups == 0:
        raise ZeroDivisionError("integer division or modulo by zero (group_norm's num_groups "
                                "is 0: give at least one group)")
    _verify_batch_size([input.shape[0] * input.shape[1] // num_groups, num_groups]
                       + list(input.shape[2:]))
    return _group_norm(input, num_groups, weight, bias, eps)


def group_norm_aten(input, num_groups, weight=None, bias=None, eps=1e-05,  # noqa: A002
                    cudnn_enabled=True):
    """``retrograd.group_norm``: PyTorch's top-level form (with ``cudnn_enabled``)."""
    return _group_norm(input, num_groups, weight, bias, eps)


# ----------------------------------------------------------------- instance_norm


def _instance_norm(x, weight, bias, running_mean, running_var, use_input_stats, momentum, eps):
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false (instance_norm)")
    if x.ndim < 2:
        raise dim_error(1, x.ndim)
    n, c = x.shape[0], x.shape[1]
    # PyTorch's composite: batch_norm of x viewed (1, N * C, *), the parameters repeated
    shape = tuple(x.shape)
    xv = x.reshape((1, n * c) + shape[2:])
    w = None if weight is None else weight.repeat(n)
    b = None if bias is None else bias.repeat(n)
    rm = None if running_mean is None else make_tensor(
        namespace(running_mean._data).tile(running_mean._data, n))
    rv = None if running_var is None else make_tensor(
        namespace(running_var._data).tile(running_var._data, n))
    # (its checks see the repeated parameters, as PyTorch's: N * C values each)
    out = _batch_norm(xv, w, b, rm, rv, use_input_stats, momentum, eps, "instance_norm")
    for repeated, target in ((rm, running_mean), (rv, running_var)):
        if target is not None:
            target._data[...] = mean_of(repeated._data.reshape(n, c), 0)  # (n = 0: nan)
            target._bump_version()
    return out.reshape(shape)


def instance_norm(input, running_mean=None, running_var=None, weight=None,  # noqa: A002
                  bias=None, use_input_stats=True, momentum=0.1, eps=1e-05):
    """Normalize each channel of each sample of ``input`` ``(N, C, *)`` over its spatial
    dimensions; scale and shift per channel.  ``running_mean`` / ``running_var`` (``(C,)``)
    are updated in place with the batch's average statistics, and normalize instead when
    ``use_input_stats=False``.

    Examples
    --------
    >>> import retrograd as T
    >>> T.nn.functional.instance_norm(T.tensor([[[1.0, 3.0]]]))
    tensor([[[-1.0000,  1.0000]]])
    """
    if use_input_stats:
        size = tuple(input.shape)
        if math.prod(size[2:]) == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input "
                             f"size {input.shape} (instance_norm normalizes over the spatial "
                             "dimensions)")
    return _instance_norm(input, weight, bias, running_mean, running_var, use_input_stats,
                          momentum, eps)


def instance_norm_aten(input, weight, bias, running_mean, running_var,  # noqa: A002
                       use_input_stats, momentum, eps, cudnn_enabled):
    """``retrograd.instance_norm``: PyTorch's top-level form (ATen's argument order)."""
    return _instance_norm(input, weight, bias, running_mean, running_var, use_input_stats,
                          momentum, eps)


# ----------------------------------------------------------------- rms_norm


# ``x + eps`` as ATen's add(Tensor, Scalar) records it: AddBackward1
_add_number = add_number


@quiet_fp
def rms_norm(input, normalized_shape, weight=None, eps=None):  # noqa: A002
    """``x / sqrt(mean(x ** 2) + eps) * weight``, the mean over the last
    ``len(normalized_shape)`` dimensions (``eps`` default: the dtype's machine epsilon).

    Examples
    --------
    >>> import retrograd as T
    >>> T.nn.functional.rms_norm(T.tensor([[3.0, 4.0]]), (2,), eps=0.0)
    tensor([[0.8485, 1.1314]])
    """
    shape = _normalized_shape(normalized_shape, "rms_norm")
    _check_normalized(input, shape, weight, None, "rms_norm", sep="")
    float_only(input, "rms_norm", "rms_norm")  # (after the shape checks, as PyTorch's)
    if eps is None:
        eps = float(namespace(input._data).finfo(input._data.dtype).eps)
    dims = tuple(range(input.ndim - len(shape), input.ndim))
    out = input * _add_number(input.pow(2).mean(dims, keepdim=True), eps).rsqrt()
    # PyTorch's composite returns a contiguous result: a non-contiguous one (a transposed
    # input) is cloned, CloneBackward0 (fuzz seed 11029607).  Its elementwise products take
    # the layout of their first operand, the normalized input, whatever the weight's (where
    # NumPy's product of a transposed and a contiguous array is contiguous: seed 12506039)
    strided = not out._data.flags.c_contiguous
    out = out if weight is None else out * weight
    if strided or not out._data.flags.c_contiguous:
        out = out.clone()
        if not out._data.flags.c_contiguous:  # (the clone keeps the layout: made C-ordered)
            out._data = namespace(out._data).ascontiguousarray(out._data)
    return out


# ----------------------------------------------------------------- local_response_norm


def _window_fwd(a, size, mirrored):
    """The mean of ``a`` over a window of ``size`` channels (dimension 1) around each one,
    zero-padded: ``size // 2`` before, ``(size - 1) // 2`` after (PyTorch's avg_pool).
    ``mirrored``: the window flipped, the adjoint (the derivative of the window mean).
    One shifted slice-add per offset: exact sums, and few passes for the usual sizes."""
    xp = namespace(a)
    c = a.shape[1]
    out = xp.zeros_like(a)
    for j in range(-(size // 2), (size - 1) // 2 + 1):
        j = -j if mirrored else j
        lo, hi = max(0, -j), min(c, c - j)  # out[:, k] += a[:, k + j] where both exist
        if lo < hi:
            out[:, lo:hi] += a[:, lo + j:hi + j]
    if out.dtype.kind in "iu":  # (int64: PyTorch's avg_pool divides as C++, truncating)
        return xp.sign(out) * (xp.abs(out) // size)
    out /= size
    return out


def _window_vjp(node, g, saved):
    size, mirrored = node.params
    return (_channel_window(g, size, not mirrored),)


# (PyTorch records constant_pad_nd, avg_pool2d/3d and views here; one linear record instead)
_channel_window = defop("local_response_norm", _window_fwd, _window_vjp,
                        "AvgPool2DBackward0", 1, NOTHING)


@quiet_fp
def local_response_norm(input, size, alpha=0.0001, beta=0.75, k=1.0):  # noqa: A002
    """``x / (k + alpha * mean(x ** 2 over size neighbouring channels)) ** beta``.

    Examples
    --------
    >>> import retrograd as T
    >>> T.nn.functional.local_response_norm(T.ones(1, 2, 1), 1, alpha=1.0, beta=1.0)
    tensor([[[0.5000],
             [0.5000]]])
    """
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} "
                         "dimensions): local_response_norm takes (N, C, *)")
    if input.numel() == 0:
        return input
    if size <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {size} kW: 1 "
                           "(local_response_norm's size)")
    dtype = input._data.dtype
    if dtype.kind in "biu" and dtype != namespace(input._data).int64:
        # PyTorch's avg_pool kernels take int64 among the integers (seed 11907661's family)
        pool = "avg_pool2d" if input.ndim == 3 else "avg_pool3d_out_frame"
        raise NotImplementedError(
            f'"{pool}" not implemented for \'{scalar_type_name(dtype)}\': local_response_norm '
            "takes a floating tensor (or int64); convert it first (x.float())")
    div = _channel_window(input * input, size, False)
    return input / (div * alpha + k) ** beta


# ----------------------------------------------------------------- normalize


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):  # noqa: A002
    """``x / max(||x||_p, eps)``, the norm along ``dim``.

    Examples
    --------
    >>> import retrograd as T
    >>> T.nn.functional.normalize(T.tensor([[3.0, 4.0]]))
    tensor([[0.6000, 0.8000]])
    """
    if input._data.dtype.kind != "f":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {scalar_type_name(input._data.dtype)} (normalize)")
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    from .pointwise import div

    return div(input, denom, out=out)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

for _fn in (batch_norm, layer_norm, group_norm, instance_norm):
    register(_fn, function=False, method=False, functional=(_fn.__name__,))
for _fn in (batch_norm_aten, layer_norm_aten, group_norm_aten, instance_norm_aten):
    register(_fn, _fn.__name__[:-5], method=False)
register(rms_norm, method=False, functional=("rms_norm",))
register(local_response_norm, function=False, method=False, functional=("local_response_norm",))
register(normalize, function=False, method=False, functional=("normalize",))
