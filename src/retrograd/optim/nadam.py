"""NAdam: Adam with Nesterov momentum and a momentum-decay schedule."""

from __future__ import annotations

from ..backend import namespace
from ..tensor import make_tensor
from ._updates import adam_moments_, addcdiv_, zeros_state
from .adam import check_betas_eps
from .optimizer import PerParameterOptimizer, step_tensor, to_scalar

__all__ = ["NAdam"]


class NAdam(PerParameterOptimizer):
    """NAdam, as ``torch.optim.NAdam``; ``decoupled_weight_decay=True`` gives NAdamW.

    The momentum schedule is ``mu_t = beta1 * (1 - 0.5 * 0.96^(t * momentum_decay))`` and
    their running product ``mu_product`` is state (a 0-d tensor, rounded to its dtype each
    step as PyTorch's is).

    Examples
    --------
    >>> import retrograd as T
    >>> w = T.tensor([1.0], requires_grad=True)
    >>> opt = T.optim.NAdam([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([0.8944], requires_grad=True)
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        check_betas_eps(lr, betas, eps, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _group_settings(self, group):
        beta1, beta2 = group["betas"]
        return (to_scalar(group["lr"]), beta1, beta2, group["eps"], group["weight_decay"],
                group["momentum_decay"], group["decoupled_weight_decay"], group["maximize"])

    def _init_state(self, state, param, group):
        state["step"] = step_tensor()
        state["mu_product"] = step_tensor(1.0)
        state["exp_avg"] = make_tensor(zeros_state(param))
        state["exp_avg_sq"] = make_tensor(zeros_state(param))

    def _update(self, param, grad, state, settings, scratch):
        lr, beta1, beta2, eps, wd, decay, decoupled, maximize = settings
        step = float(state["step"]._data)
        bias_correction2 = 1 - beta2 ** step
        grad, exp_avg, exp_avg_sq, tmp = adam_moments_(param, grad, state, lr, beta1, beta2,
                                                       wd, decoupled, maximize, scratch)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * decay)))
        mu_arr = state["mu_product"]._data
        mu_arr *= mu
        mu_product = float(mu_arr)

        denom = tmp
        namespace(param).divide(exp_avg_sq, bias_correction2, out=denom)
        namespace(param).sqrt(denom, out=denom)
        denom += eps
        work = scratch.get(2, param)
        mu_product_next = mu_product * mu_next
        addcdiv_(param, grad, denom, -lr * (1.0 - mu) / (1.0 - mu_product), work)
        addcdiv_(param, exp_avg, denom, (-lr * mu_next) / (1.0 - mu_product_next), work)
