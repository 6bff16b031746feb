"""RMSprop: steps scaled by a running average of squared gradients (optionally centered,
optionally with momentum)."""

from __future__ import annotations

from ..backend import namespace
from ..tensor import make_tensor
from ._updates import add_scaled_, addcdiv_, addcmul_, effective_grad, lerp_, zeros_state
from .optimizer import PerParameterOptimizer, check_tensor_lr, step_tensor, to_scalar

__all__ = ["RMSprop"]


class RMSprop(PerParameterOptimizer):
    """RMSprop, as ``torch.optim.RMSprop``: ``v = alpha * v + (1 - alpha) * g^2`` and a step
    along ``g / (sqrt(v) + eps)`` (``v - mean(g)^2`` under the root when ``centered``).

    Examples
    --------
    >>> import retrograd as T
    >>> w = T.tensor([1.0], requires_grad=True)
    >>> opt = T.optim.RMSprop([w], lr=0.01)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([0.9000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                 capturable: bool = False, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _group_settings(self, group):
        return (to_scalar(group["lr"]), group["alpha"], group["eps"], group["momentum"],
                group["centered"], group["weight_decay"], group["maximize"])

    def _init_state(self, state, param, group):
        state["step"] = step_tensor()
        state["square_avg"] = make_tensor(zeros_state(param))
        if group["momentum"] > 0:
            state["momentum_buffer"] = make_tensor(zeros_state(param))
        if group["centered"]:
            state["grad_avg"] = make_tensor(zeros_state(param))

    def _update(self, param, grad, state, settings, scratch):
        lr, alpha, eps, momentum, centered, wd, maximize = settings
        xp = namespace(param)
        grad = effective_grad(param, grad, wd, maximize, scratch)
        square_avg = state["square_avg"]._data
        tmp = scratch.get(1, param)
        square_avg *= alpha
        addcmul_(square_avg, grad, grad, 1 - alpha, tmp)
        avg = scratch.get(2, param)
        if centered:
            grad_avg = state["grad_avg"]._data
            lerp_(grad_avg, grad, 1 - alpha, tmp)
            avg[...] = square_avg
            addcmul_(avg, grad_avg, grad_avg, -1, tmp)
            xp.sqrt(avg, out=avg)
        else:
            xp.sqrt(square_avg, out=avg)
        avg += eps
        if momentum > 0:
            buf = state["momentum_buffer"]._data
            buf *= momentum
            addcdiv_(buf, grad, avg, 1, tmp)
            add_scaled_(param, buf, -lr, tmp)
        else:
            addcdiv_(param, grad, avg, -lr, tmp)
