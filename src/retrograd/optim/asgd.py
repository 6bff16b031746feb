"""ASGD: averaged stochastic gradient descent (SGD plus a running average of the iterates)."""

from __future__ import annotations

from ..backend import namespace
from ..tensor import make_tensor
from ._updates import add_scaled_, effective_grad, zeros_state
from .optimizer import PerParameterOptimizer, check_tensor_lr, step_tensor, to_scalar

__all__ = ["ASGD"]


class ASGD(PerParameterOptimizer):
    """ASGD, as ``torch.optim.ASGD``: SGD with a decaying rate ``eta`` and the average
    ``ax`` of the iterates after ``t0`` steps.  ``eta`` and ``mu`` are 0-d state tensors
    of the scalar dtype (float32 unless float64 is the default), rounded as PyTorch's.

    Examples
    --------
    >>> import retrograd as T
    >>> w = T.tensor([1.0], requires_grad=True)
    >>> opt = T.optim.ASGD([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([0.8000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _group_settings(self, group):
        return (to_scalar(group["lr"]), group["lambd"], group["alpha"], group["t0"],
                group["weight_decay"], group["maximize"])

    def _init_state(self, state, param, group):
        state["step"] = step_tensor()
        state["eta"] = step_tensor(to_scalar(group["lr"]))
        state["mu"] = step_tensor(1.0)
        state["ax"] = make_tensor(zeros_state(param))

    def _update(self, param, grad, state, settings, scratch):
        lr, lambd, alpha, t0, wd, maximize = settings
        grad = effective_grad(param, grad, wd, maximize, scratch)
        eta_arr, mu_arr = state["eta"]._data, state["mu"]._data
        eta = float(eta_arr)
        tmp = scratch.get(1, param)
        param *= 1 - lambd * eta  # decay
        add_scaled_(param, grad, -eta, tmp)
        ax = state["ax"]._data
        mu = float(mu_arr)
        if mu != 1:  # averaging starts after t0 steps: ax += (param - ax) * mu
            namespace(param).subtract(param, ax, out=tmp)
            tmp *= mu
            ax += tmp
        else:
            ax[...] = param
        step = float(state["step"]._data)
        eta_arr[...] = lr / ((1 + lambd * lr * step) ** alpha)
        mu_arr[...] = 1 / max(1, step - t0)
