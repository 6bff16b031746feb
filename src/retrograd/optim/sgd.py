"""Stochastic gradient descent, with momentum, dampening, Nesterov, weight decay, maximize."""

from __future__ import annotations

import numpy as _np

from ..backend import namespace
from ..tensor import make_tensor
from ._updates import add_scaled_, effective_grad
from .optimizer import PerParameterOptimizer, check_tensor_lr, to_scalar

__all__ = ["SGD"]

# below this many elements a plain step's ``alpha * grad`` is a fresh temporary (NumPy's
# small-allocation cache makes it cheaper than a reshaped scratch view); above it, scratch
# memory reused from step to step (no page faults on big parameters)
_SMALL = 1 << 16


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

    def step(self, closure=None):
        """One update of every parameter that has a gradient; ``closure`` re-evaluates the
        loss, whose value is returned."""
        loss = self._evaluate_closure(closure)
        scratch = None
        for group in self.param_groups:
            settings = self._group_settings(group)
            lr, momentum, _, _, wd, maximize = settings
            if momentum != 0 or wd != 0 or maximize or type(self)._update is not SGD._update:
                if scratch is None:
                    scratch = self._scratch()
                self._step_group(group, settings, scratch)
                continue
            # plain SGD (the common case, resolved once per group): ``p.add_(grad,
            # alpha=-lr)``, one NumPy multiply and one in-place add per parameter, in
            # PyTorch's order (alpha * grad, then the add), as _updates.add_scaled_
            alpha = -lr
            for p in group["params"]:
                grad = p._grad
                if grad is None:
                    continue
                param = p._data
                gd = grad._data
                if alpha == 1:
                    param += gd
                elif param.size < _SMALL:  # (a temporary is cheaper than a scratch view)
                    param += gd * alpha
                else:
                    if scratch is None:
                        scratch = self._scratch()
                    tmp = scratch.get(1, param)
                    (_np if param.__class__ is _np.ndarray else namespace(param)).multiply(
                        gd, alpha, out=tmp)
                    param += tmp
                vc = p._vc
                if vc.__class__ is list:
                    vc[0] += 1
                else:
                    p._bump_version()  # (no counter yet, or an inference tensor's)
        return loss

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
