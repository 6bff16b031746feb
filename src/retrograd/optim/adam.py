"""Adam and AdamW (decoupled weight decay), with AMSGrad and maximize."""

from __future__ import annotations

from ..backend import namespace
from ..tensor import Tensor, make_tensor
from ._updates import adam_moments_, addcdiv_, zeros_state
from .optimizer import PerParameterOptimizer, check_tensor_lr, step_tensor, to_scalar

__all__ = ["Adam", "AdamW"]


def check_betas_eps(lr, betas, eps, weight_decay) -> None:
    """PyTorch's argument checks shared by the Adam family."""
    check_tensor_lr(lr)
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


class Adam(PerParameterOptimizer):
    """Adam, as ``torch.optim.Adam`` (``decoupled_weight_decay=True`` makes it AdamW).

    State per parameter: ``step`` (a 0-d float tensor), ``exp_avg``, ``exp_avg_sq`` and,
    with ``amsgrad``, ``max_exp_avg_sq``.

    Examples
    --------
    >>> import retrograd as T
    >>> w = T.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = T.optim.Adam([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([ 0.9000, -0.9000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False) -> None:
        check_betas_eps(lr, betas, eps, weight_decay)
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        betas = tuple(to_scalar(b) for b in betas)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable,
                    "fused": fused, "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def _group_settings(self, group):
        beta1, beta2 = (to_scalar(b) for b in group["betas"])
        return (to_scalar(group["lr"]), beta1, beta2, group["eps"], group["weight_decay"],
                group["amsgrad"], group["decoupled_weight_decay"], group["maximize"])

    def _init_state(self, state, param, group):
        state["step"] = step_tensor()
        state["exp_avg"] = make_tensor(zeros_state(param))
        state["exp_avg_sq"] = make_tensor(zeros_state(param))
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = make_tensor(zeros_state(param))

    def _update(self, param, grad, state, settings, scratch):
        lr, beta1, beta2, eps, wd, amsgrad, decoupled, maximize = settings
        step = float(state["step"]._data)
        _, exp_avg, exp_avg_sq, tmp = adam_moments_(param, grad, state, lr, beta1, beta2, wd,
                                                    decoupled, maximize, scratch)

        step_size = lr / (1 - beta1 ** step)
        bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
        second = exp_avg_sq
        if amsgrad:
            second = state["max_exp_avg_sq"]._data
            namespace(param).maximum(second, exp_avg_sq, out=second)
        denom = tmp
        namespace(param).sqrt(second, out=denom)
        denom /= bias_correction2_sqrt
        denom += eps
        addcdiv_(param, exp_avg, denom, -step_size, scratch.get(2, param))


class AdamW(Adam):
    """AdamW: Adam whose weight decay shrinks the parameters directly
    (``p *= 1 - lr * weight_decay``) instead of entering the moments; as
    ``torch.optim.AdamW``.

    Examples
    --------
    >>> import retrograd as T
    >>> w = T.tensor([1.0], requires_grad=True)
    >>> opt = T.optim.AdamW([w], lr=0.1, weight_decay=0.5)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([0.8500], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None,
                 capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
