"""Rprop: resilient backpropagation, per-coordinate step sizes driven by gradient signs."""

from __future__ import annotations

from ..backend import namespace
from ..tensor import make_tensor
from ._updates import effective_grad, zeros_state
from .optimizer import PerParameterOptimizer, check_tensor_lr, step_tensor, to_scalar

__all__ = ["Rprop"]


class Rprop(PerParameterOptimizer):
    """Rprop, as ``torch.optim.Rprop``: each coordinate's step size grows by ``etas[1]``
    while its gradient keeps its sign and shrinks by ``etas[0]`` when the sign flips (that
    coordinate then skips one update), within ``step_sizes``.

    Examples
    --------
    >>> import retrograd as T
    >>> w = T.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = T.optim.Rprop([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([ 0.9000, -0.9000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable: bool = False, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _group_settings(self, group):
        return group["etas"], group["step_sizes"], group["maximize"]

    def _init_state(self, state, param, group):
        state["step"] = step_tensor()
        state["prev"] = make_tensor(zeros_state(param))
        state["step_size"] = make_tensor(
            namespace(param).full_like(param, to_scalar(group["lr"])))

    def _update(self, param, grad, state, settings, scratch):
        (etaminus, etaplus), (step_size_min, step_size_max), maximize = settings
        xp = namespace(param)
        grad = effective_grad(param, grad, 0, maximize, scratch)
        prev, step_size = state["prev"]._data, state["step_size"]._data
        # the factor per coordinate: etaplus where the sign held, etaminus where it
        # flipped, 1 where either gradient is zero
        product = scratch.get(1, param)
        xp.multiply(grad, prev, out=product)
        factor = scratch.get(2, param)
        factor[...] = 1
        factor[product > 0] = etaplus
        flipped = product < 0
        factor[flipped] = etaminus
        step_size *= factor
        xp.clip(step_size, step_size_min, step_size_max, out=step_size)
        # a flipped coordinate forgets its gradient: no step now, no flip next time
        prev[...] = grad
        prev[flipped] = 0
        xp.sign(prev, out=product)
        product *= step_size
        param -= product
