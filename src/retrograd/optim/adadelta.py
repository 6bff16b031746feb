"""Adadelta: steps scaled by the ratio of running RMS of updates and of gradients."""

from __future__ import annotations

from ..backend import namespace
from ..tensor import make_tensor
from ._updates import add_scaled_, addcmul_, effective_grad, zeros_state
from .optimizer import PerParameterOptimizer, check_tensor_lr, step_tensor, to_scalar

__all__ = ["Adadelta"]


class Adadelta(PerParameterOptimizer):
    """Adadelta, as ``torch.optim.Adadelta``: ``delta = sqrt(u + eps) / sqrt(v + eps) * g``
    with running averages ``v`` of ``g^2`` and ``u`` of ``delta^2``.

    Examples
    --------
    >>> import retrograd as T
    >>> w = T.tensor([1.0], requires_grad=True)
    >>> opt = T.optim.Adadelta([w], lr=1.0)
    >>> (w * w).sum().backward(); opt.step()
    >>> round(w.item(), 4)
    0.9968
    """

    def __init__(self, params, lr=1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _group_settings(self, group):
        return (to_scalar(group["lr"]), group["rho"], group["eps"], group["weight_decay"],
                group["maximize"])

    def _init_state(self, state, param, group):
        state["step"] = step_tensor()
        state["square_avg"] = make_tensor(zeros_state(param))
        state["acc_delta"] = make_tensor(zeros_state(param))

    def _update(self, param, grad, state, settings, scratch):
        lr, rho, eps, wd, maximize = settings
        xp = namespace(param)
        grad = effective_grad(param, grad, wd, maximize, scratch)
        square_avg, acc_delta = state["square_avg"]._data, state["acc_delta"]._data
        tmp = scratch.get(1, param)
        square_avg *= rho
        addcmul_(square_avg, grad, grad, 1 - rho, tmp)
        std = scratch.get(2, param)
        xp.add(square_avg, eps, out=std)
        xp.sqrt(std, out=std)
        delta = scratch.get(3, param)
        xp.add(acc_delta, eps, out=delta)
        xp.sqrt(delta, out=delta)
        delta /= std
        delta *= grad
        acc_delta *= rho
        addcmul_(acc_delta, delta, delta, 1 - rho, tmp)
        add_scaled_(param, delta, -lr, tmp)
