"""ctc_loss: the connectionist temporal classification loss, its own record (CtcLossBackward0).

The forward is the alpha recursion over time in log space, all samples of the batch at
once (each sample's extended label ``blank l1 blank l2 ... blank`` padded to the longest);
the backward runs the beta recursion and gives PyTorch's gradient for ``log_probs``::

    grad[t, n, c] = exp(lp[t, n, c]) - exp(log(sum_{s: l'(s) = c} alpha_t(s) beta_t(s))
                                            + nll[n] - lp[t, n, c])

for t below the sample's input length, 0 after it.  Note the ``exp(lp)`` term: PyTorch's
gradient is the derivative with respect to ``log_probs`` *plus* ``softmax`` of them, which
``log_softmax``'s backward removes again (its rows sum to one), so the gradient reaching the
logits is exact when ``log_probs = log_softmax(logits)``, as ctc_loss expects.  retrograd
keeps PyTorch's convention so ``log_probs.grad`` is the same in both.

As in PyTorch, the derivative has no derivative of its own: a second backward through it
raises.  Reductions are composed as PyTorch's: ``'mean'`` divides each sample's loss by
its target length (at least 1) and averages (DivBackward0, MeanBackward0), ``'sum'`` sums.
"""

from __future__ import annotations

from ..backend import namespace
from ..tensor import Tensor, make_tensor
from ._apply import INPUTS, NOTHING, defop
from ._errors import float_only, scalar_type_name
from .losses import check_reduction
from .pointwise import where
from .quiet_fp import quiet_fp


@quiet_fp
def _logaddexp(xp, *terms):
    out = terms[0]
    for t in terms[1:]:
        out = xp.logaddexp(out, t)
    return out


def _extended(xp, targets, target_lengths, blank):
    """The labels with blanks between and around them, (N, 2 S + 1), and where s - 2 -> s
    transitions are allowed (a label different from the one two before)."""
    n = len(target_lengths)
    s_max = int(target_lengths.max()) if n else 0
    ext = xp.full((n, 2 * s_max + 1), blank, dtype="int64")
    ext[:, 1::2] = targets[:, :s_max] if s_max else ext[:, 1::2]
    skip = xp.zeros(ext.shape, bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    # positions past a sample's own extended length are never reachable
    valid = xp.arange(ext.shape[1])[None, :] < (2 * target_lengths + 1)[:, None]
    return ext, skip, valid


def _recursion(xp, emit, first, skip, valid, step_order):
    """The forward (alpha) or, on time- and label-reversed inputs, backward (beta) recursion
    in log space: ``out[t, s] = logsumexp(out[t-1, s], out[t-1, s-1], out[t-1, s-2] where
    skip) + emit[t, s]``, -inf outside ``valid``; ``first`` (N,) bool per step says where a
    sample starts (its row of ``emit`` is taken as is, on its two first positions)."""
    t_max, n, width = emit.shape
    neg_inf = -xp.inf
    out = xp.full(emit.shape, neg_inf, emit.dtype)
    one = xp.full((n, width), neg_inf, emit.dtype)  # buffers shifted by one and two labels
    two = xp.full((n, width), neg_inf, emit.dtype)
    invalid, no_skip = ~valid, ~skip
    start = xp.full((n, width), neg_inf, emit.dtype)
    with xp.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for k, t in enumerate(step_order):
            row = out[t]
            if k:
                prev = out[step_order[k - 1]]
                one[:, 1:] = prev[:, :-1]
                two[:, 2:] = prev[:, :-2]
                xp.putmask(two, no_skip, neg_inf)
                xp.logaddexp(prev, one, out=row)
                xp.logaddexp(row, two, out=row)
                row += emit[t]
            starts = first[k]
            if starts.any():
                start[:, :2] = emit[t][:, :2]
                row[starts] = start[starts]
            xp.putmask(row, invalid, neg_inf)
    return out


def _alphas(lp, ext, skip, valid, input_lengths):
    """log alpha, (T, N, S'), -inf where unreachable."""
    xp = namespace(lp)
    t_max, n = lp.shape[:2]
    emit = lp[:, xp.arange(n)[:, None], ext]  # (T, N, S'): lp of each extended label
    first = [xp.full(n, k == 0) for k in range(t_max)]
    return _recursion(xp, emit, first, skip, valid, list(range(t_max))), emit


def _nll(alpha, input_lengths, target_lengths):
    xp = namespace(alpha)
    n = alpha.shape[1]
    rows = xp.arange(n)
    last = alpha[xp.maximum(input_lengths - 1, 0), rows]  # (N, S')
    end = 2 * target_lengths
    a = last[rows, end]
    b = xp.where(target_lengths > 0, last[rows, xp.maximum(end - 1, 0)], -xp.inf)
    nll = -_logaddexp(xp, a, b)
    return xp.where(input_lengths > 0, nll, xp.where(target_lengths > 0, xp.inf, 0.0))


def _ctc_fwd(lp, targets, input_lengths, target_lengths, blank, zero_infinity):
    xp = namespace(lp)
    ext, skip, valid = _extended(xp, targets, target_lengths, blank)
    alpha, _ = _alphas(lp, ext, skip, valid, input_lengths)
    nll = _nll(alpha, input_lengths, target_lengths).astype(lp.dtype)
    return nll, ((alpha, nll),)  # (zero_infinity's zeros: a where after it, as PyTorch)


def _ctc_grad(lp, alpha, nll, targets, input_lengths, target_lengths, blank, zero_infinity):
    """PyTorch's ctc gradient for ``log_probs`` per unit of each sample's loss (T, N, C)."""
    xp = namespace(lp)
    t_max, n, c = lp.shape
    ext, skip, valid = _extended(xp, targets, target_lengths, blank)
    rows = xp.arange(n)[:, None]
    emit = lp[:, rows, ext]
    # beta is alpha's recursion run backwards in time on the labels reversed per sample
    width = ext.shape[1]
    rev = (2 * target_lengths)[:, None] - xp.arange(width)[None, :]  # s -> L' - 1 - s
    rev_ok = rev >= 0
    rev_idx = xp.where(rev_ok, rev, 0)
    emit_rev = xp.take_along_axis(emit, xp.broadcast_to(rev_idx, emit.shape), axis=2)
    skip_rev = xp.take_along_axis(skip, xp.where(rev_ok, rev_idx + 2, 0).clip(0, width - 1),
                                  axis=1) & rev_ok & (rev_idx + 2 < width)
    first = [(input_lengths - 1) == t for t in range(t_max - 1, -1, -1)]
    beta_rev = _recursion(xp, emit_rev, first, skip_rev, valid & rev_ok,
                          list(range(t_max - 1, -1, -1)))
    beta = xp.take_along_axis(beta_rev, xp.broadcast_to(rev_idx, emit.shape), axis=2)
    beta = xp.where(valid & rev_ok, beta, -xp.inf)
    beta = xp.where((xp.arange(t_max)[:, None] < input_lengths[None, :])[:, :, None], beta,
                    -xp.inf)
    ab = alpha + beta  # (T, N, S')
    # log sum over the positions s carrying each class c: shifted by the largest term per
    # (t, n), summed through a one-hot product (terms below it by > ~700 underflow: they
    # are that much smaller than the gradient's other terms)
    with xp.errstate(over="ignore", invalid="ignore", divide="ignore"):
        top = ab.max(2, keepdims=True)
        top = xp.where(xp.isfinite(top), top, 0)
        onehot = (ext[:, :, None] == xp.arange(c)).astype(lp.dtype)  # (N, S', C)
        summed = xp.einsum("tns,nsc->tnc", xp.exp(ab - top), onehot)
        lcab = xp.log(summed) + top
        grad = xp.exp(lp) - xp.exp(lcab + nll[None, :, None] - lp)
    in_time = (xp.arange(t_max)[:, None] < input_lengths[None, :])[:, :, None]
    grad = xp.where(in_time, grad, 0)
    if zero_infinity:
        grad = xp.where(xp.isinf(nll)[None, :, None], 0, grad)
    return grad.astype(lp.dtype)


def _no_double_backward(node, g, saved):
    raise RuntimeError("the derivative for '_ctc_loss_backward' is not implemented (as in "
                       "PyTorch: ctc_loss has first derivatives only); differentiate ctc_loss "
                       "once, without create_graph=True through it")


def _scale_fwd(g, lp, grad):
    return g[None, :, None] * grad


# create_graph=True: the gradient is recorded by this node (linked to log_probs, as PyTorch's
# _ctc_loss_backward), whose own backward raises
_ctc_backward = defop("_ctc_loss_backward", _scale_fwd, _no_double_backward,
                      "CtcLossBackwardBackward0", 2, NOTHING)


def _ctc_vjp(node, g, saved):
    lp, (alpha, nll) = saved
    lpd = lp._data if isinstance(lp, Tensor) else lp
    grad = _ctc_grad(lpd, alpha, nll, *node.params)
    return (_ctc_backward(g, lp, grad),)


_ctc_record = defop("ctc_loss", _ctc_fwd, _ctc_vjp, "CtcLossBackward0", 1, INPUTS, extras=True)


def _lengths(value, name):
    xp_value = value._data if isinstance(value, Tensor) else value
    import numpy as np  # lengths are host values (PyTorch moves them to the CPU too)

    arr = np.asarray(xp_value if not isinstance(xp_value, (list, tuple)) else list(xp_value))
    if arr.dtype.kind not in "iu":
        raise RuntimeError(f"ctc_loss(): {name} must be integers, got "
                           f"{scalar_type_name(arr.dtype)}")
    return arr.reshape(-1).astype("int64")


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0,
             reduction="mean", zero_infinity=False):
    """The connectionist temporal classification loss of ``log_probs`` (T, N, C) or (T, C)
    (log-softmax outputs) for the label sequences ``targets``: (N, S) padded, or the
    concatenation of every sample's labels (1-d).  ``zero_infinity`` turns infinite losses
    (impossible alignments) and their gradients into 0.

    Examples
    --------
    >>> import retrograd as T
    >>> lp = T.zeros(3, 1, 2).log_softmax(2)
    >>> T.nn.functional.ctc_loss(lp, T.tensor([[1]]), [3], [1], reduction="sum")
    tensor(0.2877)
    """
    check_reduction(reduction, "ctc_loss")
    if isinstance(log_probs, Tensor):  # (PyTorch: its kernel's dtype dispatch, first)
        float_only(log_probs, "ctc_loss_cpu", "ctc_loss")
    else:
        raise RuntimeError("ctc_loss(): log_probs must be a floating tensor (log-softmax "
                           "outputs of shape (T, N, C) or (T, C))")
    if log_probs.ndim not in (2, 3):
        raise RuntimeError(f"ctc_loss(): log_probs must be 2-d (T, C) or 3-d (T, N, C), got "
                           f"shape {list(log_probs.shape)}")
    unbatched = log_probs.ndim == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    tg = targets._data if isinstance(targets, Tensor) else targets
    if tg.dtype.kind in "fb":  # PyTorch truncates floating labels to integers (bool: 0/1)
        tg = tg.astype("int64")
    if tg.dtype.kind not in "iu":
        raise RuntimeError(f"ctc_loss(): targets must be integers (Long or Int), got "
                           f"{scalar_type_name(tg.dtype)}")
    il = _lengths(input_lengths, "input_lengths")
    tl = _lengths(target_lengths, "target_lengths")
    t_max, n, c = lp.shape
    if unbatched and tg.ndim == 1:
        tg = tg[None]
    if not 0 <= blank < c:
        raise RuntimeError(f"blank must be in label range (ctc_loss got blank={blank} for "
                           f"{c} classes)")
    if len(il) != n:
        raise RuntimeError(f"input_lengths must be of size batch_size (ctc_loss got "
                           f"{len(il)} lengths for a batch of {n})")
    if len(tl) != n:
        raise RuntimeError(f"target_lengths must be of size batch_size (ctc_loss got "
                           f"{len(tl)} lengths for a batch of {n})")
    if (il > t_max).any() or (il < 0).any():
        bad = int(il.max() if (il > t_max).any() else il.min())
        raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got "
                           f"value {bad} (ctc_loss: lengths must be in [0, T])")
    xp = namespace(tg)
    if tg.ndim == 1:  # concatenated labels: split them into padded rows
        if tg.shape[0] < tl.sum():
            raise RuntimeError(f"ctc_loss(): targets has {tg.shape[0]} labels, fewer than the "
                               f"sum of target_lengths ({int(tl.sum())})")
        width = int(tl.max()) if n else 0
        padded = xp.full((n, width), blank, dtype="int64")
        starts = xp.concatenate([[0], xp.cumsum(tl)[:-1]]).astype("int64")
        for i in range(n):
            padded[i, :tl[i]] = tg[starts[i]:starts[i] + tl[i]]
        tg = padded
    elif tg.ndim == 2:
        if tg.shape[0] != n:
            raise RuntimeError(f"ctc_loss(): targets has batch size {tg.shape[0]}, log_probs "
                               f"{n}")
        if (tl > tg.shape[1]).any():
            raise RuntimeError(f"Expected tensor to have size at least {int(tl.max())} at "
                               f"dimension 1, but got size {tg.shape[1]} for argument #2 "
                               "'targets' (while checking arguments for ctc_loss_cpu)")
    else:
        raise RuntimeError(f"ctc_loss(): targets must be 1-d (concatenated) or 2-d (N, S), "
                           f"got shape {list(tg.shape)}")
    tg = tg.astype("int64")
    used = xp.arange(tg.shape[1])[None, :] < tl[:, None]
    if tg.size and used.any() and ((tg[used] < 0).any() or (tg[used] >= c).any()):
        raise IndexError(f"ctc_loss(): a target label is out of range for {c} classes (labels "
                         f"must be in [0, {c - 1}])")
    losses = _ctc_record(lp, tg, il, tl, blank, bool(zero_infinity))
    if zero_infinity:
        inf = xp.isinf(losses._data)
        losses = where(inf, make_tensor(xp.zeros((), lp._data.dtype)), losses)
    if reduction == "sum":
        return losses.sum()
    if reduction == "mean":
        lengths = make_tensor(xp.maximum(tl, 1).astype(lp._data.dtype))
        return (losses / lengths).mean()
    return losses.squeeze(0) if unbatched else losses  # (unbatched: only 'none' squeezes)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402



def _ctc_loss_aten(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0,
                   zero_infinity=False):
    """``retrograd.ctc_loss``: PyTorch's top-level spelling (an int reduction)."""
    from .losses import reduction_name

    return ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                    reduction_name(reduction, "ctc_loss"), zero_infinity)


register(ctc_loss, function=False, method=False, functional=("ctc_loss",))
register(_ctc_loss_aten, "ctc_loss", method=False)
