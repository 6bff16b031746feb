"""Neural-network ops with their own derivative records (composites would be slower).

softmax / log_softmax are computed stably (max subtracted); cross_entropy is
log_softmax followed by nll_loss, as PyTorch records it.
"""

from __future__ import annotations

from ..backend import namespace
from ._apply import INPUTS, NOTHING, OUTPUT, defop
from .index import scatter_along
from .reduce import sum as _sum
from .shape import expand_op, reshape_op


def _softmax_fwd(a, dim):
    xp = namespace(a)
    if a.size == 0:  # (the max of an empty dimension has no identity)
        return a.copy()
    e = xp.exp(a - a.max(axis=dim, keepdims=True))
    e /= e.sum(axis=dim, keepdims=True)
    return e


def _softmax_vjp(node, g, saved):
    (y,) = saved
    dim = node.params[0]
    gy = g * y
    return (gy - y * _sum(gy, dim, True) if hasattr(gy, "_data") else gy - y * gy.sum(
        axis=dim, keepdims=True),)


_softmax = defop("softmax", _softmax_fwd, _softmax_vjp, "SoftmaxBackward0", 1, OUTPUT, "float")


def _log_softmax_fwd(a, dim):
    xp = namespace(a)
    if a.size == 0:
        return a.copy()
    shifted = a - a.max(axis=dim, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=dim, keepdims=True))


def _log_softmax_vjp(node, g, saved):
    (y,) = saved
    dim = node.params[0]
    from .pointwise import exp

    if hasattr(g, "_data"):
        return (g - exp(y) * _sum(g, dim, True),)
    return (g - exp(y) * g.sum(axis=dim, keepdims=True),)


_log_softmax = defop("log_softmax", _log_softmax_fwd, _log_softmax_vjp, "LogSoftmaxBackward0", 1,
                     OUTPUT, "float")


def _dim_for(x, dim, name):
    if dim is None:
        # PyTorch's legacy implicit choice, with its warning
        import warnings

        warnings.warn(
            f"Implicit dimension choice for {name} has been deprecated. Change the call to "
            "include dim=X as an argument.",
            UserWarning, stacklevel=3,
        )
        dim = 0 if x.ndim in (0, 1, 3) else 1
    n = max(x.ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n if x.ndim else 0


def softmax(x, dim=None, dtype=None):
    """``exp(x) / exp(x).sum(dim)``, computed stably."""
    if dtype is not None:
        x = x.to(dtype)
    return _softmax(x, _dim_for(x, dim, "softmax"))


def log_softmax(x, dim=None, dtype=None):
    """``log(softmax(x, dim))``, computed stably."""
    if dtype is not None:
        x = x.to(dtype)
    return _log_softmax(x, _dim_for(x, dim, "log_softmax"))


# ----------------------------------------------------------------- losses


def _nll_fwd(logp, target, reduction, count):
    xp = namespace(logp)
    # fancy indexing: ~3x faster than take_along_axis on a training batch (bench/ (e))
    picked = -logp[xp.arange(logp.shape[0]), target]
    if reduction == "mean":
        return picked.sum() / count
    if reduction == "sum":
        return picked.sum()
    return picked


def _nll_vjp(node, g, saved):
    target, reduction, count = node.params
    n = target.shape[0]
    if not hasattr(g, "_data"):
        # First-order backward (arrays): write the (N, C) gradient in one allocation
        # instead of going through reshape/expand/scatter (-15 us a step in bench/ (e)).
        xp = namespace(g)
        into = node.next[0]
        out = xp.zeros(into.out_shape, into.out_dtype)
        out[xp.arange(n), target] = -(g / count) if reduction == "mean" else -g
        return (out,)
    if reduction == "mean":
        g = g / count
    if reduction != "none":
        g = expand_op(reshape_op(g, (1,), tuple(g.shape)), (n,), (1,))
    g = reshape_op(-g, (n, 1), (n,))
    return (scatter_along(g, target[:, None], 1, node.next[0].out_shape),)


_nll = defop("nll_loss", _nll_fwd, _nll_vjp, "NllLossBackward0", 1, NOTHING)


def nll_loss(logp, target, reduction="mean"):
    """Negative log-likelihood of class-index ``target`` under log-probabilities ``logp``."""
    t = target._data if hasattr(target, "_data") else target
    if logp.ndim != 2 or t.ndim != 1 or t.shape[0] != logp.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({logp.shape[0] if logp.ndim else 1}) to match target "
            f"batch_size ({t.shape[0] if t.ndim else 1}); nll_loss/cross_entropy take input of "
            f"shape (N, C) and class indices of shape (N,), got {list(logp.shape)} and "
            f"{list(t.shape)}"
        )
    if t.dtype.kind not in "iu":
        raise RuntimeError(
            f"expected scalar type Long but found {t.dtype.name} for the target; class-index "
            "targets must be integers (use target.long())"
        )
    c = logp.shape[1]
    if t.size and (t.min() < 0 or t.max() >= c):
        raise IndexError(
            f"Target {int(t.max() if t.max() >= c else t.min())} is out of bounds: there are "
            f"{c} classes, so targets must be in [0, {c - 1}]"
        )
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _nll(logp, t, reduction, t.shape[0])


def cross_entropy(input, target, reduction="mean"):  # noqa: A002 - PyTorch's name
    """log_softmax over classes followed by nll_loss (class-index targets)."""
    return nll_loss(log_softmax(input, 1), target, reduction)


def _mse_fwd(a, b, reduction):
    d = (a - b) ** 2
    if reduction == "mean":
        return d.mean()
    if reduction == "sum":
        return d.sum()
    return d


def _mse_vjp(node, g, saved):
    a, b = saved
    reduction = node.params[0]
    na, nb = node.next
    diff = a - b
    scale = 2.0
    if reduction == "mean":  # a Tensor's size is a method, an array's a number
        n = diff.numel() if hasattr(diff, "_data") else diff.size
        scale = 2.0 / n if n else 0.0  # an empty input: an empty gradient
    ga = g * scale * diff
    return (ga if na else None, -ga if nb else None)


_mse = defop("mse_loss", _mse_fwd, _mse_vjp, "MseLossBackward0", 2, INPUTS, "promote")


def mse_loss(input, target, reduction="mean"):  # noqa: A002
    """Mean (or summed) squared error."""
    if tuple(input.shape) != tuple(target.shape):
        import warnings

        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            UserWarning, stacklevel=2,
        )
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _mse(input, target, reduction)
