"""``multi_margin_loss``: PyTorch's MultiMarginLoss kernel, with its own derivative record
(derivative written with retrograd's ops, so double backward works) and forward-mode rule.
"""

from __future__ import annotations

from ..backend import namespace
from ..tensor import Tensor, make_tensor
from ._apply import INPUTS, NOTHING, defop
from ._errors import float_only, scalar_type_name
from .elementwise_losses import legacy_reduction
from .pointwise import _no_derivative
from ._jvp import RULES as _JVP_RULES
from .saved_checks import check_also
from .losses import _data, _spread, check_reduction
from .loss_checks import class_input_check, empty_batch_loss, long_target
from .quiet_fp import mean_of, quiet_fp


def _class_rows(x, target):
    """(input as (N, C), target as (N,)) for an input of (N, C), (C,) or () (one class)."""
    if x.ndim <= 1:
        return x.reshape(1, -1) if x.ndim else x.reshape(1, 1), target.reshape(1)
    return x, target.reshape(x.shape[0])


def _multi_margin_terms(x, y, margin):
    """``z = margin - x[y] + x`` per class and the mask of the terms that count."""
    xp = namespace(_data(x))
    rows = xp.arange(len(y))
    z = margin - x[rows, y][:, None] + x
    zd = _data(z)
    other = xp.ones(zd.shape, bool)
    other[rows, y] = False
    return z, other & (zd > 0)


@quiet_fp
def _multi_margin_fwd(x, y, weight, p, margin, reduction, shape):
    xp = namespace(x)
    x2, y2 = _class_rows(x, y)
    z, mask = _multi_margin_terms(x2, y2, margin)
    h = xp.where(mask, z, 0) ** p
    if weight is not None:
        h = h * weight[y2][:, None]
    loss = h.sum(1) / x2.shape[1]
    if reduction == "mean":
        return mean_of(loss)
    if reduction == "sum":
        return loss.sum()
    return loss.reshape(shape)


def _multi_margin_grad_fwd(g, x, y, weight, p, margin, reduction, shape):
    """The first derivative on arrays (PyTorch's multi_margin_loss_backward)."""
    xp = namespace(x)
    x2, y2 = _class_rows(x, y)
    n, c = x2.shape
    z, mask = _multi_margin_terms(x2, y2, margin)
    # d/dx[j] = p z^(p-1) w[y] / C for each counted j; x[y] gets minus their sum
    coef = xp.where(mask, z * 2.0, 0.0) if p == 2 else mask.astype(x.dtype)
    if weight is not None:
        coef = coef * weight[y2][:, None]
    onehot = xp.zeros((n, c), x.dtype)
    onehot[xp.arange(n), y2] = 1.0
    row = coef - coef.sum(1)[:, None] * onehot
    gl = _spread(g, reduction, n)
    gl = gl.reshape(n, 1) if reduction == "none" else gl.reshape(1, 1)
    return (row * (gl / c)).reshape(x.shape).astype(x.dtype, copy=False)


# PyTorch's multi_margin_loss_backward has no derivative: under create_graph the first
# derivative requires grad (a node called NotImplemented) and a backward through it raises,
# as torch's (seed 9970773)
_multi_margin_backward = defop("multi_margin_loss_backward", _multi_margin_grad_fwd,
                               _no_derivative("multi_margin_loss_backward"), "NotImplemented",
                               2, NOTHING)


def _multi_margin_vjp(node, g, saved):
    x = saved[0]  # (then the target and weight: a version check only)
    if isinstance(g, Tensor) or isinstance(x, Tensor):
        return (_multi_margin_backward(g, x, *node.params),)
    return (_multi_margin_grad_fwd(g, x, *node.params),)


_multi_margin = defop("multi_margin_loss", _multi_margin_fwd, _multi_margin_vjp,
                      "MultiMarginLossBackward0", 1, INPUTS)


def _multi_margin_jvp(op, inputs, tangents, out, params):
    # forward mode (PyTorch has none): the tangent times the first derivative, a constant
    # (the fallback would transpose the VJP, which is the NotImplemented record above)
    x, t = inputs[0], tangents[0]
    xd = _data(x)
    xp = namespace(xd)
    d = make_tensor(_multi_margin_grad_fwd(xp.ones(tuple(out.shape), xd.dtype), xd, *params))
    prod = d * t
    if params[4] != "none":
        return prod.sum()
    return prod.reshape(-1, xd.shape[-1]).sum(1).reshape(tuple(out.shape))


_JVP_RULES[("multi_margin_loss", "MultiMarginLossBackward0")] = _multi_margin_jvp


def _class_targets(input, target, weight, name):  # noqa: A002
    """The class-index target of multi_margin_loss, checked in PyTorch's order: the shapes
    (input, then target: at most 1-d with one index per sample, then weight: one per
    class), then, for a non-empty input, its dtype, the target's and the weight's."""
    t = _data(target)
    nframe, c = class_input_check(input, name)
    if t.ndim > 1 or t.size != nframe:
        raise RuntimeError(f"{name}: target tensor should be 1-D with size equal to the number "
                           f"of input samples (batch size). Expected target size [{nframe}], "
                           f"but got {list(t.shape)}. Input has shape {list(input.shape)}.")
    if weight is not None and (weight.ndim > 1 or weight.numel() != c):
        raise RuntimeError(f"{name}(): inconsistent weight size, expected {c} but got "
                           f"{list(weight.shape)} (one weight per class)")
    if input.numel():
        float_only(input, f"{name}_cpu_kernel", name)
        long_target(t, name)
        if weight is not None and weight._data.dtype != input._data.dtype:
            raise RuntimeError(f"expected scalar type {scalar_type_name(input._data.dtype)} but "
                               f"found {scalar_type_name(weight._data.dtype)} ({name}() takes "
                               "the weight in the input's dtype: weight.to(input.dtype))")
    return t


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None,  # noqa: A002
                      size_average=None, reduce=None, reduction="mean"):
    """The multi-class hinge loss: ``sum_{j != y} max(0, margin - x[y] + x[j])^p / C``
    (times ``weight[y]``), for an input (N, C) or (C,) and class indices ``y``.

    Examples
    --------
    >>> import retrograd as T
    >>> T.nn.functional.multi_margin_loss(T.tensor([[0.1, 0.2, 0.4, 0.8]]), T.tensor([3]))
    tensor(0.3250)
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction, "multi_margin_loss")
    if p not in (1, 2):
        raise ValueError(f"only p == 1 and p == 2 supported (multi_margin_loss got p={p})")
    if weight is not None and weight.ndim != 1:
        raise ValueError(f"weight must be one-dimensional (multi_margin_loss got a weight of "
                         f"shape {list(weight.shape)})")
    t = _class_targets(input, target, weight, "multi_margin_loss")
    c = input.shape[-1] if input.ndim else 1
    if t.size and input.numel() and (t.min() < 0 or t.max() >= c):
        bad = int(t.max() if t.max() >= c else t.min())
        raise RuntimeError(f"multi_margin_loss(): target out of range: index {bad} for {c} "
                           f"classes (targets must be in [0, {c - 1}])")
    w = None if weight is None else _data(weight).reshape(-1).astype(input._data.dtype)
    # (PyTorch: one loss per sample for a 1-d target, a 0-d loss for a 0-d one)
    shape = (input.shape[0] if input.ndim == 2 else 1,) if t.ndim else ()
    if not input.numel() and input._data.dtype.kind != "f":
        return empty_batch_loss(input, shape, reduction)
    # (MultiMarginLossBackward0 saves the target: its version counts)
    return check_also(_multi_margin(input, t.reshape(()) if input.ndim <= 1 else
                                    t.reshape(-1), w, int(p), float(margin), reduction,
                                    shape), target, weight)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(multi_margin_loss, function=False, method=False, functional=("multi_margin_loss",))
