"""Losses of elementwise errors, reduced: ``binary_cross_entropy`` (and ``_with_logits``),
``l1_loss``, ``mse_loss``, with their own derivative records; and ``legacy_reduction``
(PyTorch's deprecated ``size_average``/``reduce`` arguments), which every loss uses.
"""

from __future__ import annotations

import numpy as _np

from ..backend import namespace
from .stats import quiet
from ._errors import float_only
from ._apply import INPUTS, defop
from . import pointwise as _pointwise
from .log1p_exp import log1p_exp_neg_abs
from .loss_checks import bce_logits_checks
from .quiet_fp import mean_of, quiet_fp


_NLL_TARGET_DTYPES = (_np.dtype(_np.int64), _np.dtype(_np.uint8))



def _check_reduction(reduction):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _reduce_loss(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "mean":  # (an empty array's: nan, as PyTorch's, without NumPy's warning)
        return loss.mean() if hasattr(loss, "_data") else mean_of(loss)
    return loss.sum()


def _bce_fwd(x, t, weight, reduction):
    xp = namespace(x)
    if hasattr(t, "shape") and x.dtype != t.dtype:
        t = t.astype(x.dtype)
    # PyTorch clamps each log at -100, so that x = 0 or 1 give a finite loss; a float32
    # loss in float64, rounded once (NumPy's float32 log1p and two float32 roundings left
    # it up to 2.3 ulp off the truth, unequal to PyTorch's where PyTorch's is correctly
    # rounded: ops/log1p_exp.py); the reduction stays in the loss's dtype
    narrow = x.dtype.kind == "f" and x.dtype.itemsize < 8
    xw, tw = (x.astype(xp.float64), xp.asarray(t, dtype=xp.float64)) if narrow else (x, t)
    with quiet(xp):
        loss = -(tw * xp.maximum(xp.log(xw), -100) + (1 - tw) * xp.maximum(xp.log1p(-xw), -100))
    if narrow:
        loss = xp.asarray(loss, dtype=x.dtype)
    if weight is not None:  # (PyTorch's loss.mul_(weight): the loss keeps the input's dtype)
        loss = (loss * weight).astype(x.dtype, copy=False)
    return _reduce_loss(loss, reduction)


def _spread_loss_grad(g, x, weight, reduction):
    """The gradient of each element of a weighted, reduced loss (before the element's own
    derivative): ``g / numel`` for a mean, times the weight."""
    if reduction == "mean":
        g = g / (x.numel() if hasattr(x, "_data") else x.size)
    return g if weight is None else g * weight


def _bce_vjp(node, g, saved):
    x, t = saved
    weight, reduction = node.params
    nx, nt = node.next
    from .pointwise import clamp
    from .unary import logit

    def scaled(d):  # PyTorch's order: grad times the derivative, times weight, over numel
        d = g * d
        if weight is not None:
            d = d * weight
        return d / (x.numel() if hasattr(x, "_data") else x.size) if reduction == "mean" else d

    gx = gt = None
    if nx:
        # d/dx = (x - t) / (x (1 - x)), the denominator kept >= PyTorch's EPSILON (1e-12 as
        # a float32, whatever the dtype)
        gx = scaled((x - t) / clamp((1 - x) * x, 9.999999960041972e-13))
    if nt:  # d/dt = log(1 - x) - log(x) = -logit(x), unclamped as PyTorch's (the loss's logs
        # are clamped at -100, not its target derivative: +-inf at x = 0 or 1; seed 12553003)
        gt = scaled(-logit(x))
    return (gx, gt)


_bce = defop("binary_cross_entropy", _bce_fwd, _bce_vjp, "BinaryCrossEntropyBackward0", 2,
             INPUTS, "promote")


def _as_data(v):
    return v._data if hasattr(v, "_data") else v


def binary_cross_entropy(input, target, weight=None, size_average=None,  # noqa: A002
                         reduce=None, reduction="mean"):
    """``-(t log x + (1 - t) log(1 - x))`` for probabilities ``x`` (logs clamped at -100)."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({list(target.shape)}) that is different to the input size "
            f"({list(input.shape)}) is deprecated. Please ensure they have the same size."
        )
    xd, td = input._data, _as_data(target)
    if td.dtype != xd.dtype:  # (PyTorch: before the range checks)
        raise RuntimeError(
            f"Found dtype {_pointwise.scalar_type_name(td.dtype)} but expected "
            f"{_pointwise.scalar_type_name(xd.dtype)}: binary_cross_entropy takes the target in "
            "the input's dtype (target.to(input.dtype))")
    float_only(input, "binary_cross_entropy", "binary_cross_entropy")  # (after the dtypes)
    for what, a in (("input", xd), ("target", td)):
        if a.size and not ((a >= 0) & (a <= 1)).all():  # (nan fails too, as PyTorch's)
            raise RuntimeError(
                f"all elements of {what} should be between 0 and 1 (binary_cross_entropy takes "
                f"probabilities; for logits use binary_cross_entropy_with_logits)")
    # (the loss is the input's dtype, as PyTorch's: a float64 weight does not widen it)
    w = None if weight is None else _as_data(weight).astype(xd.dtype, copy=False)
    return _bce(input, target, w, reduction)


@quiet_fp
def _bce_logits_fwd(x, t, weight, reduction, pos_weight=None):
    xp = namespace(x)
    # PyTorch's form, (1 - t) x - log_sigmoid(x), with log_sigmoid(x) = min(x, 0) -
    # log(1 + exp(-|x|)): stable for any x, and rounded in PyTorch's order (the log1p term
    # in float64, rounded once: ops/log1p_exp.py)
    log_sigmoid = xp.minimum(x, 0) - log1p_exp_neg_abs(xp, x)
    if pos_weight is None:
        loss = (1 - t) * x - log_sigmoid
    else:  # (the positive term, -log_sigmoid, weighed by 1 + (pw - 1) t)
        loss = (1 - t) * x - log_sigmoid * (1 + (pos_weight - 1) * t)
    out = _reduce_loss(loss if weight is None else loss * weight, reduction)
    # PyTorch's result has the target's dtype ((1 - target).mul_(input)...): a float64 input
    # with a float32 target gives float32
    return out.astype(t.dtype if t.dtype.kind == "f" else x.dtype)


def _bce_logits_vjp(node, g, saved):
    x, t = saved
    weight, reduction, *rest = node.params
    pos_weight = rest[0] if rest else None
    from .pointwise import sigmoid

    nx, nt = node.next
    g = _spread_loss_grad(g, x, weight, reduction)
    if pos_weight is None:
        return (g * (sigmoid(x) - t) if nx else None, -g * x if nt else None)
    # d/dx = (1 + (pw - 1) t) sigmoid(x) - pw t;  d/dt = (pw - 1) softplus(-x) - x
    from .activation import logsigmoid

    gx = g * ((1 + (pos_weight - 1) * t) * sigmoid(x) - pos_weight * t) if nx else None
    gt = g * ((1 - pos_weight) * logsigmoid(x) - x) if nt else None
    return (gx, gt)


_bce_logits = defop("binary_cross_entropy_with_logits", _bce_logits_fwd, _bce_logits_vjp,
                    "BinaryCrossEntropyWithLogitsBackward0", 2, INPUTS, "same")


def legacy_reduction(size_average, reduce, reduction):
    """PyTorch's ``_Reduction.legacy_get_string``: the deprecated ``size_average`` /
    ``reduce`` flags, when either is given, decide the reduction (with its warning)."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else "sum" if reduce else "none"
    import warnings

    warnings.warn(f"size_average and reduce args will be deprecated, please use "
                  f"reduction='{ret}' instead.", UserWarning, stacklevel=3)
    return ret


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,  # noqa: A002
                                     reduce=None, reduction="mean", pos_weight=None):
    """``binary_cross_entropy(sigmoid(x), t)`` computed stably from the logits ``x``.

    ``pos_weight`` (broadcast against the input, typically one per class along the last
    dimension) weighs the positive term: ``-(pw t log sigmoid(x) + (1 - t) log(1 -
    sigmoid(x)))``.  Like ``weight``, it is a constant: PyTorch refuses one that requires
    grad.

    Examples
    --------
    >>> import retrograd as T
    >>> F = T.nn.functional
    >>> F.binary_cross_entropy_with_logits(T.tensor([0.0]), T.tensor([1.0]))
    tensor(0.6931)
    >>> F.binary_cross_entropy_with_logits(T.tensor([0.0]), T.tensor([1.0]),
    ...                                    pos_weight=T.tensor([2.0]))
    tensor(1.3863)
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({list(target.shape)}) must be the same as input size "
                         f"({list(input.shape)})")
    pw = bce_logits_checks(input, target, weight, pos_weight)
    w = None if weight is None else _as_data(weight)
    if pos_weight is None:
        return _bce_logits(input, target, w, reduction)
    return _bce_logits(input, target, w, reduction, pw.astype(input._data.dtype))


@quiet_fp
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean",  # noqa: A002
            weight=None):
    """Mean (or summed) absolute error: ``|x - t|``, optionally weighted per element."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, reduction)
    shape = tuple(input.shape)  # (PyTorch: broadcast first, then the reduction's name)
    input, target = _broadcast_pair(input, target, "l1_loss")  # noqa: A001
    if weight is not None:
        return _weighted_loss((input - target).abs(), shape, weight, reduction)
    _check_reduction(reduction)
    return _reduce_loss((input - target).abs(), reduction)


def _broadcast_pair(input, target, name):  # noqa: A002
    """PyTorch's l1_loss and mse_loss broadcast the pair first (torch.broadcast_tensors), so
    a 0-d operand counts in the dtype promotion as a dimensioned one: a float32 input with a
    0-d float64 target gives float64 (seed 11017475's class)."""
    if hasattr(target, "_data") and tuple(input.shape) != tuple(target.shape):
        from .arrange import broadcast_tensors

        try:
            return broadcast_tensors(input, target)
        except RuntimeError as e:
            raise RuntimeError(f"{e} ({name}() broadcasts the input and the target against "
                               "each other; give them the same shape)") from None
    return input, target


def _weighted_loss(errors, shape, weight, reduction):
    """PyTorch's weighted l1/mse: ``errors * weight``, its sum, or that sum over
    ``weight.sum()`` for the mean; ``weight`` must have the input's size as given (``shape``,
    before broadcasting), and the reduction's name is checked last."""
    if tuple(weight.shape) != shape:
        raise ValueError(f"Weights and input must have the same size. (weight "
                         f"{list(weight.shape)}, input {list(shape)})")
    weighted = errors * weight
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', "
                         "'mean', 'sum'.")
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return weighted.sum()
    return weighted.sum() / weight.sum()


@quiet_fp
def _mse_fwd(a, b, reduction):
    d = (a - b) ** 2
    if reduction == "mean":
        return mean_of(d)
    if reduction == "sum":
        return d.sum()
    return d


def _as_float(x, like):
    """``x`` in ``like``'s dtype if it is bool: a bool input of mse_loss is read as 0/1 (and
    a bool tensor has no ``-``, which create_graph's derivative would call: seed 12669445)."""
    if getattr(x, "_data", x).dtype.kind != "b":
        return x
    return x.to(like.dtype) if hasattr(x, "_data") else x.astype(like.dtype)


def _mse_vjp(node, g, saved):
    a, b = saved
    reduction = node.params[0]
    na, nb = node.next
    diff = _as_float(a, b) - _as_float(b, a)
    scale = 2.0
    if reduction == "mean":  # a Tensor's size is a method, an array's a number
        n = diff.numel() if hasattr(diff, "_data") else diff.size
        scale = 2.0 / n if n else 0.0  # an empty input: an empty gradient
    ga = g * scale * diff
    return (ga if na else None, -ga if nb else None)


_mse = defop("mse_loss", _mse_fwd, _mse_vjp, "MseLossBackward0", 2, INPUTS, "promote")


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean",  # noqa: A002
             weight=None):
    """Mean (or summed) squared error, optionally weighted per element.

    Examples
    --------
    >>> import retrograd as T
    >>> T.nn.functional.mse_loss(T.tensor([1.0, 3.0]), T.tensor([0.0, 0.0]))
    tensor(5.)
    """
    if tuple(input.shape) != tuple(target.shape):
        import warnings

        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            UserWarning, stacklevel=2,
        )
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, reduction)
    shape = tuple(input.shape)  # (PyTorch: broadcast first, then the reduction's name)
    input, target = _broadcast_pair(input, target, "mse_loss")  # noqa: A001
    if weight is not None:
        return _weighted_loss((input - target) ** 2, shape, weight, reduction)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    kinds = (input._data.dtype.kind, getattr(target, "_data", target).dtype.kind)
    if all(k in "biu" for k in kinds):
        from .pointwise import scalar_type_name

        raise NotImplementedError(f"\"mse_cpu\" not implemented for "
                                  f"'{scalar_type_name(input._data.dtype)}'; mse_loss needs a "
                                  "floating input (x.float())")
    return _mse(input, target, reduction)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

for _fn in (binary_cross_entropy, binary_cross_entropy_with_logits, l1_loss, mse_loss):
    register(_fn, function=False, method=False, functional=(_fn.__name__,))
