"""RAdam: Adam with a rectified adaptive learning rate (plain momentum SGD while the
variance estimate is unreliable)."""

from __future__ import annotations

from ..backend import namespace
from ..tensor import make_tensor
from ._updates import adam_moments_, zeros_state
from .adam import check_betas_eps
from .optimizer import PerParameterOptimizer, step_tensor, to_scalar

__all__ = ["RAdam"]


class RAdam(PerParameterOptimizer):
    """RAdam, as ``torch.optim.RAdam``; ``decoupled_weight_decay=True`` decays the
    parameters directly (as AdamW).

    Examples
    --------
    >>> import retrograd as T
    >>> w = T.tensor([1.0], requires_grad=True)
    >>> opt = T.optim.RAdam([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([0.8000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        check_betas_eps(lr, betas, eps, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _group_settings(self, group):
        beta1, beta2 = group["betas"]
        return (to_scalar(group["lr"]), beta1, beta2, group["eps"], group["weight_decay"],
                group["decoupled_weight_decay"], group["maximize"])

    def _init_state(self, state, param, group):
        state["step"] = step_tensor()
        state["exp_avg"] = make_tensor(zeros_state(param))
        state["exp_avg_sq"] = make_tensor(zeros_state(param))

    def _update(self, param, grad, state, settings, scratch):
        lr, beta1, beta2, eps, wd, decoupled, maximize = settings
        xp = namespace(param)
        step = float(state["step"]._data)
        _, exp_avg, exp_avg_sq, tmp = adam_moments_(param, grad, state, lr, beta1, beta2, wd,
                                                    decoupled, maximize, scratch)

        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        # update = exp_avg / bias_correction1 * lr [* adaptive_lr * rect], in PyTorch's
        # order of products
        update = tmp
        xp.divide(exp_avg, bias_correction1, out=update)
        update *= lr
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive = scratch.get(2, param)
            xp.sqrt(exp_avg_sq, out=adaptive)
            adaptive += eps
            xp.divide(bias_correction2 ** 0.5, adaptive, out=adaptive)
            update *= adaptive
            update *= rect
        param -= update
