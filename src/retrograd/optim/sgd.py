"""Stochastic gradient descent, with momentum, dampening, Nesterov, weight decay, maximize."""

from __future__ import annotations

from ..tensor import make_tensor
from ._updates import add_scaled_, effective_grad
from .optimizer import PerParameterOptimizer, check_tensor_lr, to_scalar

__all__ = ["SGD"]


class SGD(PerParameterOptimizer):
    """Stochastic gradient descent (optionally with momentum), as ``torch.optim.SGD``.

    With momentum ``mu`` and dampening ``tau`` the buffer is ``b = mu * b + (1 - tau) * g``
    (``b = g`` on the first step); Nesterov steps along ``g + mu * b`` instead of ``b``.

    Examples
    --------
    >>> import retrograd as T
    >>> w = T.tensor([1.0], requires_grad=True)
    >>> opt = T.optim.SGD([w], lr=0.5, momentum=0.9)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([0.], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay=0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        check_tensor_lr(lr)
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def _group_settings(self, group):
        return (to_scalar(group["lr"]), group["momentum"], group["dampening"],
                group["nesterov"], to_scalar(group["weight_decay"]), group["maximize"])

    def _keeps_state(self, group):
        return group["momentum"] != 0

    def _update(self, param, grad, state, settings, scratch):
        lr, momentum, dampening, nesterov, wd, maximize = settings
        grad = effective_grad(param, grad, wd, maximize, scratch)
        if momentum != 0:
            buf_t = state.get("momentum_buffer")
            if buf_t is None:
                buf_t = state["momentum_buffer"] = make_tensor(grad.copy())
                buf = buf_t._data
            else:
                buf = buf_t._data
                buf *= momentum
                add_scaled_(buf, grad, 1 - dampening, scratch.get(1, buf))
            if nesterov:
                nest = scratch.get(2, buf)
                nest[...] = grad
                add_scaled_(nest, buf, momentum, scratch.get(1, buf))
                grad = nest
            else:
                grad = buf
        add_scaled_(param, grad, -lr, scratch.get(1, param))
