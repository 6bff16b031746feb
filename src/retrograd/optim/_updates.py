"""In-place array arithmetic shared by the optimizers, in PyTorch's order of operations.

Every function writes into existing arrays with ``out=`` and takes its temporaries from the
optimizer's :class:`~retrograd.optim.optimizer.Scratch`, so a step allocates nothing on
big parameters.  Each mirrors one PyTorch in-place op (``lerp_``, ``addcmul_``,
``addcdiv_``) and evaluates it in the same order (``self + (value * t1) * t2``...), so
trajectories match PyTorch's to rounding (PyTorch's vector kernels fuse some multiply-adds,
which NumPy cannot, so the last bit may differ).  Scalars are Python floats: with NumPy's
promotion rules a float32 array stays float32, as PyTorch's does.
"""

from __future__ import annotations

from ..backend import namespace


def effective_grad(param, grad, weight_decay, maximize, scratch, slot=0):
    """``(-grad if maximize else grad) + weight_decay * param``; ``grad`` itself when that
    is unchanged (the result is read, never written)."""
    if weight_decay == 0:
        if not maximize:
            return grad
        out = scratch.get(slot, grad)
        namespace(grad).negative(grad, out=out)
        return out
    xp = namespace(grad)
    out = scratch.get(slot, grad)
    xp.multiply(param, weight_decay, out=out)
    if maximize:
        xp.subtract(out, grad, out=out)
    else:
        xp.add(grad, out, out=out)
    return out


def lerp_(start, end, weight: float, tmp) -> None:
    """``start.lerp_(end, weight)``: PyTorch's two-sided formula (exact at weight 0 and 1)."""
    xp = namespace(start)
    xp.subtract(end, start, out=tmp)
    if abs(weight) < 0.5:
        tmp *= weight
        start += tmp
    else:
        # the coefficient (weight - 1) is formed in the array's precision, as PyTorch does
        kind = start.dtype.type
        tmp *= kind(weight) - kind(1)
        xp.add(end, tmp, out=start)


def addcmul_(target, t1, t2, value: float, tmp) -> None:
    """``target.addcmul_(t1, t2, value=value)``: target + (value * t1) * t2."""
    xp = namespace(target)
    if value == 1:
        xp.multiply(t1, t2, out=tmp)
    else:
        xp.multiply(t1, value, out=tmp)
        tmp *= t2
    target += tmp


def addcdiv_(target, t1, t2, value: float, tmp) -> None:
    """``target.addcdiv_(t1, t2, value=value)``: target + (value * t1) / t2."""
    xp = namespace(target)
    if value == 1:
        xp.divide(t1, t2, out=tmp)
    else:
        xp.multiply(t1, value, out=tmp)
        tmp /= t2
    target += tmp


def add_scaled_(target, other, alpha: float, tmp) -> None:
    """``target.add_(other, alpha=alpha)``: target + alpha * other."""
    if alpha == 1:
        target += other
        return
    namespace(target).multiply(other, alpha, out=tmp)
    target += tmp


def zeros_state(param):
    """A zero state array shaped and typed like the parameter's array."""
    return namespace(param).zeros_like(param)


def adam_moments_(param, grad, state, lr: float, beta1: float, beta2: float, wd: float,
                  decoupled: bool, maximize: bool, scratch):
    """The part Adam, NAdam and RAdam share: weight decay (decoupled: ``param *= 1 - lr *
    wd``; else into the gradient), then ``exp_avg.lerp_(g, 1 - beta1)`` and ``exp_avg_sq =
    beta2 * exp_avg_sq + (1 - beta2) * g * g``.  Returns the arrays exp_avg, exp_avg_sq and
    a work buffer (scratch slot 1) the caller may reuse."""
    if wd != 0 and decoupled:
        param *= 1 - lr * wd
    grad = effective_grad(param, grad, 0 if decoupled else wd, maximize, scratch)
    exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
    tmp = scratch.get(1, param)
    lerp_(exp_avg, grad, 1 - beta1, tmp)
    exp_avg_sq *= beta2
    addcmul_(exp_avg_sq, grad, grad, 1 - beta2, tmp)
    return grad, exp_avg, exp_avg_sq, tmp
