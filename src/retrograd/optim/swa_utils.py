"""``optim.swa_utils``: stochastic weight averaging (SWA) and exponential moving averages (EMA)
of a model's weights, as ``torch.optim.swa_utils``.

``AveragedModel`` keeps a deep copy of a model and folds the model's current parameters into
it on each ``update_parameters`` call (an equal-weight running mean by default, or the
``avg_fn``/``multi_avg_fn`` given); ``SWALR`` anneals each group's rate to a fixed
``swa_lr``; ``update_bn`` recomputes BatchNorm statistics for the averaged weights.
"""

from __future__ import annotations

import itertools
import math
import warnings
from copy import deepcopy

from .._creation import tensor
from ..autograd.grad_mode import no_grad
from ..dtypes import int64
from ..nn.module import Module
from ..nn.modules.batchnorm import _BatchNorm
from ..tensor import Tensor
from ._scheduler_base import LRScheduler, format_param

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")


def _lerp_(ends, starts, weight) -> None:
    """``end += weight * (start - end)`` for each pair (PyTorch's ``_foreach_lerp_``)."""
    for end, start in zip(ends, starts, strict=True):
        end.lerp_(start, weight)


def get_ema_multi_avg_fn(decay: float = 0.999):
    """An in-place EMA over lists: ``ema = decay * ema + (1 - decay) * model``."""
    _check_decay(decay)

    def ema_update(ema_param_list, current_param_list, _) -> None:
        with no_grad():
            if ema_param_list[0].is_floating_point():
                _lerp_(ema_param_list, current_param_list, 1 - decay)
            else:
                for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """An in-place running mean over lists: ``avg += (model - avg) / (n + 1)``."""

    def swa_update(averaged_param_list, current_param_list, num_averaged) -> None:
        with no_grad():
            if averaged_param_list[0].is_floating_point():
                _lerp_(averaged_param_list, current_param_list, 1 / (num_averaged + 1))
                return
            for avg, cur in zip(averaged_param_list, current_param_list, strict=True):
                diff = cur - avg
                if isinstance(num_averaged, Tensor):
                    avg.addcdiv_(diff, num_averaged + 1)
                else:
                    avg.add_(diff, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999):
    """An EMA of one tensor: returns ``decay * ema + (1 - decay) * model``."""
    _check_decay(decay)

    def ema_update(ema_param, current_param, num_averaged):
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """A running mean of one tensor: returns ``avg + (model - avg) / (n + 1)``."""

    def swa_update(averaged_param, current_param, num_averaged):
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and buffers, with ``use_buffers``) are the
    running average of ``model``'s, updated by :meth:`update_parameters`.  The number of
    models averaged so far is the buffer ``n_averaged``.

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd import nn
    >>> model = nn.Linear(2, 1)
    >>> swa = T.optim.swa_utils.AveragedModel(model)
    >>> swa.update_parameters(model); int(swa.n_averaged)
    1
    """

    def __init__(self, model: Module, device=None, avg_fn=None, multi_avg_fn=None,
                 use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=int64))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current weights into the average (the first call copies them)."""
        if self.use_buffers:
            self_params = itertools.chain(self.module.parameters(), self.module.buffers())
            model_params = itertools.chain(model.parameters(), model.buffers())
        else:
            self_params, model_params = self.parameters(), model.parameters()
        averaged, current = [], []
        first = bool(self.n_averaged == 0)
        with no_grad():
            # zip without strict, as PyTorch: a model with fewer tensors updates a prefix
            for p_averaged, p_model in zip(self_params, model_params):
                p_model = p_model.detach().to(p_averaged.device)
                averaged.append(p_averaged.detach())
                current.append(p_model)
                if first:
                    p_averaged.detach().copy_(p_model)
            if self.n_averaged > 0:
                self._average(averaged, current)
            if not self.use_buffers:
                # buffers (BatchNorm statistics) follow the model rather than averaging
                for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                    b_swa.detach().copy_(b_model.detach().to(b_swa.device))
            self.n_averaged += 1

    def _average(self, averaged: list, current: list) -> None:
        if self.multi_avg_fn is not None:
            # PyTorch groups the lists by device and dtype, as its foreach kernels need
            groups: dict = {}
            for p_averaged, p_model in zip(averaged, current, strict=True):
                key = (str(p_averaged.device), p_averaged.dtype)
                group = groups.setdefault(key, ([], []))
                group[0].append(p_averaged)
                group[1].append(p_model)
            for self_group, model_group in groups.values():
                self.multi_avg_fn(self_group, model_group, self.n_averaged)
            return
        # no function given: the equal-weight mean one tensor at a time, PyTorch's path on
        # the CPU (it has no foreach kernels there); an integer buffer is truncated back
        avg_fn = self.avg_fn or get_swa_avg_fn()
        for p_averaged, p_model in zip(averaged, current, strict=True):
            p_averaged.copy_(avg_fn(p_averaged, p_model, self.n_averaged))


def update_bn(loader, model: Module, device=None) -> None:
    """One pass over ``loader`` in training mode to recompute every BatchNorm's running
    statistics as a plain (cumulative) average; each batch is a tensor or a list/tuple
    whose first element is the input."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's rate from its current value to ``swa_lr`` over ``anneal_epochs``
    steps (``anneal_strategy`` ``"cos"`` or ``"linear"``), then hold it there.

    Examples
    --------
    >>> import retrograd as T
    >>> opt = T.optim.SGD([T.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = T.optim.swa_utils.SWALR(opt, swa_lr=0.5, anneal_epochs=2, anneal_strategy="linear")
    >>> for _ in range(2):
    ...     opt.step(); sched.step()
    >>> sched.get_last_lr()
    [0.5]
    """

    def __init__(self, optimizer, swa_lr, anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        swa_lrs = format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list:
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use "
                          "`get_last_lr()`.", UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        # undo last step's interpolation to recover the rate the annealing started from,
        # so another scheduler may have changed group["lr"] meanwhile (chainable form)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)]

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self) -> dict:
        """Everything but the optimizer and the annealing function."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
