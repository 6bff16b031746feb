"""Adagrad: per-coordinate steps scaled by the root of the summed squared gradients."""

from __future__ import annotations

from ..backend import namespace
from ..tensor import make_tensor
from ._updates import addcdiv_, addcmul_, effective_grad
from .optimizer import PerParameterOptimizer, check_tensor_lr, step_tensor, to_scalar

__all__ = ["Adagrad"]


class Adagrad(PerParameterOptimizer):
    """Adagrad, as ``torch.optim.Adagrad``: ``s += g^2``, a step of ``clr * g / (sqrt(s) +
    eps)`` with ``clr = lr / (1 + (t - 1) * lr_decay)``.  Its state (``step`` and ``sum``,
    filled with ``initial_accumulator_value``) exists from construction on, as PyTorch's.

    Examples
    --------
    >>> import retrograd as T
    >>> w = T.tensor([1.0], requires_grad=True)
    >>> opt = T.optim.Adagrad([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([0.9000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10,
                 foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps,
                    "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = step_tensor()
                init = namespace(p._data).full_like(p._data, initial_accumulator_value)
                state["sum"] = make_tensor(init)

    def _group_settings(self, group):
        return (to_scalar(group["lr"]), group["lr_decay"], group["eps"], group["weight_decay"],
                group["maximize"])

    def _update(self, param, grad, state, settings, scratch):
        lr, lr_decay, eps, wd, maximize = settings
        step = float(state["step"]._data)
        grad = effective_grad(param, grad, wd, maximize, scratch)
        clr = lr / (1 + (step - 1) * lr_decay)
        state_sum = state["sum"]._data
        tmp = scratch.get(1, param)
        addcmul_(state_sum, grad, grad, 1, tmp)
        std = scratch.get(2, param)
        namespace(param).sqrt(state_sum, out=std)
        std += eps
        addcdiv_(param, grad, std, -clr, tmp)
