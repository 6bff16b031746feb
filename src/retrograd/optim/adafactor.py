"""Adafactor: Adam-like steps with a factored second moment (a row and a column average
per matrix instead of a full-size estimate), as ``torch.optim.Adafactor``."""

from __future__ import annotations

import math

from ..backend import namespace
from ..tensor import make_tensor
from ._updates import lerp_
from .optimizer import PerParameterOptimizer, check_tensor_lr, step_tensor, to_scalar

__all__ = ["Adafactor"]


class Adafactor(PerParameterOptimizer):
    """Adafactor (Shazeer & Stern, 2018) in PyTorch's form: ``beta2_t = 1 - t^beta2_decay``,
    a relative step ``rho_t = min(lr, 1/sqrt(t))`` scaled by the parameter's RMS (at least
    ``eps[1]``), updates clipped to RMS ``d``.  State: ``step`` and, for a parameter of two
    or more dims, ``row_var``/``col_var`` (the last dim, resp. the one before, reduced to 1);
    for a vector, ``variance``.

    Examples
    --------
    >>> import retrograd as T
    >>> w = T.tensor([[1.0, 2.0]], requires_grad=True)
    >>> opt = T.optim.Adafactor([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> sorted(opt.state[w])
    ['col_var', 'row_var', 'step']
    """

    def __init__(self, params, lr=1e-2, beta2_decay: float = -0.8,
                 eps: tuple = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: bool | None = None, maximize: bool = False) -> None:
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def _group_settings(self, group):
        eps1, eps2 = group["eps"]
        return (to_scalar(group["lr"]), group["beta2_decay"], eps1, eps2, group["d"],
                group["weight_decay"], group["maximize"])

    def _init_state(self, state, param, group):
        xp = namespace(param)
        state["step"] = step_tensor()
        if param.ndim > 1:
            state["row_var"] = make_tensor(xp.zeros(param.shape[:-1] + (1,), param.dtype))
            state["col_var"] = make_tensor(
                xp.zeros(param.shape[:-2] + (1,) + param.shape[-1:], param.dtype))
        else:
            state["variance"] = make_tensor(xp.zeros_like(param))

    def _update(self, param, grad, state, settings, scratch):
        lr, beta2_decay, eps1, eps2, d, wd, maximize = settings
        xp = namespace(param)
        if maximize:
            grad = -grad
        if eps1 is None:
            eps1 = float(xp.finfo(param.dtype).eps)
        step = float(state["step"]._data)
        one_minus_beta2_t = step ** beta2_decay
        rho_t = min(lr, 1 / step ** 0.5)
        # the relative step: the parameter's RMS (before weight decay), at least eps2
        rms = float(xp.sqrt(xp.sum(param * param))) / math.sqrt(max(param.size, 1))
        alpha = max(eps2, rms) * rho_t
        if wd != 0:
            param *= 1 - lr * wd
        tmp = scratch.get(0, param)
        if grad.ndim > 1:
            row_var, col_var = state["row_var"]._data, state["col_var"]._data
            squares = grad * grad
            lerp_(row_var, xp.sum(squares, axis=-1, keepdims=True) / grad.shape[-1],
                  one_minus_beta2_t, scratch.get(1, row_var))
            lerp_(col_var, xp.sum(squares, axis=-2, keepdims=True) / grad.shape[-2],
                  one_minus_beta2_t, scratch.get(2, col_var))
            # the rank-1 estimate of the second moment: row x col / mean(row)
            xp.matmul(row_var, col_var, out=tmp)
            tmp /= xp.maximum(xp.mean(row_var, axis=-2, keepdims=True), eps1)
        else:
            variance = state["variance"]._data
            lerp_(variance, grad * grad, one_minus_beta2_t, scratch.get(1, variance))
            tmp[...] = variance
        xp.maximum(tmp, eps1 * eps1, out=tmp)
        tmp **= -0.5
        tmp *= grad
        update_rms = float(xp.sqrt(xp.sum(tmp * tmp))) / (math.sqrt(max(tmp.size, 1)) * d)
        denom = max(1.0, update_rms)
        tmp *= -alpha / denom
        param += tmp
