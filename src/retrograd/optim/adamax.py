"""Adamax: Adam with the infinity norm in place of the second moment."""

from __future__ import annotations

from ..backend import namespace
from ..tensor import make_tensor
from ._updates import addcdiv_, effective_grad, lerp_, zeros_state
from .adam import check_betas_eps
from .optimizer import PerParameterOptimizer, step_tensor, to_scalar

__all__ = ["Adamax"]


class Adamax(PerParameterOptimizer):
    """Adamax, as ``torch.optim.Adamax``: ``u = max(beta2 * u, |g| + eps)`` and a step of
    ``lr / (1 - beta1^t) * m / u``.

    Examples
    --------
    >>> import retrograd as T
    >>> w = T.tensor([1.0], requires_grad=True)
    >>> opt = T.optim.Adamax([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([0.9000], requires_grad=True)
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        check_betas_eps(lr, betas, eps, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _group_settings(self, group):
        beta1, beta2 = group["betas"]
        return (to_scalar(group["lr"]), beta1, beta2, group["eps"], group["weight_decay"],
                group["maximize"])

    def _init_state(self, state, param, group):
        state["step"] = step_tensor()
        state["exp_avg"] = make_tensor(zeros_state(param))
        state["exp_inf"] = make_tensor(zeros_state(param))

    def _update(self, param, grad, state, settings, scratch):
        lr, beta1, beta2, eps, wd, maximize = settings
        xp = namespace(param)
        grad = effective_grad(param, grad, wd, maximize, scratch)
        exp_avg, exp_inf = state["exp_avg"]._data, state["exp_inf"]._data
        tmp = scratch.get(1, param)
        lerp_(exp_avg, grad, 1 - beta1, tmp)
        exp_inf *= beta2
        xp.abs(grad, out=tmp)
        tmp += eps
        xp.maximum(exp_inf, tmp, out=exp_inf)
        clr = lr / (1 - beta1 ** float(state["step"]._data))
        addcdiv_(param, exp_avg, exp_inf, -clr, tmp)
