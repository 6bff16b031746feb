"""multilabel_margin_loss: the multi-label hinge loss, one record (MultilabelMarginLossBackward0)
with a hand-written derivative (moved out of losses.py, which it had grown past 800 lines)."""

from __future__ import annotations

from ..backend import namespace
from ._apply import INPUTS, defop
from ._errors import float_only
from .loss_checks import class_input_check, empty_batch_loss, long_target
from .losses import _data, _spread, check_reduction
from .elementwise_losses import legacy_reduction
from .saved_checks import check_also
from .quiet_fp import mean_of, quiet_fp


def _multilabel_counts(target, c):
    """How many times each class is listed as a target of each sample (up to the first -1)."""
    xp = namespace(target)
    valid = xp.cumprod(target >= 0, axis=1).astype(bool)  # before the first negative
    counts = xp.zeros((target.shape[0], c + 1), dtype="int64")
    rows = xp.broadcast_to(xp.arange(target.shape[0])[:, None], target.shape)
    xp.add.at(counts, (rows, xp.where(valid, target, c)), 1)
    return counts[:, :c]


def _multilabel_pairs(x, counts):
    """``z[n, j, k] = 1 - x[j] + x[k]`` and its weight: counts[j] for target j, non-target
    k, where z > 0."""
    is_t = counts > 0
    z = 1.0 - x[:, :, None] + x[:, None, :]
    w = counts[:, :, None] * (~is_t)[:, None, :] * (_data(z) > 0)
    return z, w


@quiet_fp
def _multilabel_fwd(x, counts, reduction, shape):
    x2 = x.reshape(1, -1) if x.ndim <= 1 else x
    z, w = _multilabel_pairs(x2, counts)
    loss = (z * w.astype(x.dtype)).sum((1, 2)) / x2.shape[1]
    if reduction == "mean":
        return mean_of(loss)
    return loss.sum() if reduction == "sum" else loss.reshape(shape)


def _multilabel_vjp(node, g, saved):
    x = saved[0]  # (then the target: a version check only)
    counts, reduction, shape = node.params
    x2 = x.reshape(1, -1) if x.ndim <= 1 else x
    n, c = x2.shape
    _, w = _multilabel_pairs(_data(x2), counts)
    w = w.astype(_data(x).dtype)
    row = w.sum(1) - w.sum(2)  # d/dx[k]: +w[j, k]; d/dx[j]: -w[j, k]
    gl = _spread(g, reduction, n)
    gl = gl.reshape(n, 1) if reduction == "none" else gl.reshape(1, 1)
    return ((gl * (row / c)).reshape(x.shape),)


_multilabel = defop("multilabel_margin_loss", _multilabel_fwd, _multilabel_vjp,
                    "MultilabelMarginLossBackward0", 1, INPUTS)


def multilabel_margin_loss(input, target, size_average=None, reduce=None,  # noqa: A002
                           reduction="mean"):
    """The multi-label hinge loss: ``sum_{j in y, k not in y} max(0, 1 - (x[j] - x[k])) / C``;
    ``target`` (the input's shape) lists each sample's classes, ended by the first -1.

    Examples
    --------
    >>> import retrograd as T
    >>> x, y = T.tensor([[0.1, 0.2, 0.4, 0.8]]), T.tensor([[3, 0, -1, 1]])
    >>> T.nn.functional.multilabel_margin_loss(x, y)
    tensor(0.8500)
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction, "multilabel_margin_loss")
    # PyTorch's order: the shapes, then (for a non-empty input) the targets' range, the
    # input's dtype and the target's
    t = _data(target)
    nframe, c = class_input_check(input, "multilabel_margin_loss")
    if (t.ndim > 1 or t.size != c) if input.ndim <= 1 else tuple(t.shape) != (nframe, c):
        raise RuntimeError(f"multilabel_margin_loss(): inconsistent target size: "
                           f"{list(t.shape)} for input of size: {list(input.shape)} (the target "
                           "has the input's shape: class indices ended by -1)")
    if input.numel():
        if (t < -1).any() or (t >= c).any():
            raise RuntimeError(f"multilabel_margin_loss(): argument #2 'target' is out of range "
                               f"(targets must be in [0, {c - 1}], or -1 to end the list)")
        float_only(input, "multilabel_margin_loss_forward_out_frame", "multilabel_margin_loss")
        long_target(t, "multilabel_margin_loss")
    t2 = t.reshape(nframe, c).astype("int64", copy=False)  # (an empty input: any dtype)
    # (PyTorch: one loss per sample for a 2-d target, a 0-d loss otherwise)
    shape = (nframe,) if t.ndim == 2 else ()
    if not input.numel() and input._data.dtype.kind != "f":
        return empty_batch_loss(input, shape, reduction)
    return check_also(_multilabel(input, _multilabel_counts(t2, c), reduction, shape),
                      target)  # (saved by MultilabelMarginLossBackward0)


from .registry import register  # noqa: E402

register(multilabel_margin_loss, function=False, method=False,
         functional=("multilabel_margin_loss",))
