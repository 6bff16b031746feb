"""Learning-rate schedulers, as ``torch.optim.lr_scheduler``; this module also composes
them (:class:`SequentialLR`, :class:`ChainedScheduler`).

The schedules themselves live in ``_schedules.py`` (functions of the epoch) and
``_cyclic_schedules.py`` (cycles, phases, plateau detection), on the base class in
``_scheduler_base.py``.
"""

from __future__ import annotations

from bisect import bisect_right

from ._cyclic_schedules import (
    CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR, ReduceLROnPlateau,
)
from ._scheduler_base import LRScheduler, group_values, set_group_value
from ._schedules import (
    ConstantLR, CosineAnnealingLR, ExponentialLR, LambdaLR, LinearLR, MultiplicativeLR,
    MultiStepLR, PolynomialLR, StepLR,
)

__all__ = ["LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
           "ExponentialLR", "SequentialLR", "CosineAnnealingLR", "ChainedScheduler",
           "ReduceLROnPlateau", "CyclicLR", "CosineAnnealingWarmRestarts", "OneCycleLR",
           "PolynomialLR", "LRScheduler"]

_LRScheduler = LRScheduler  # PyTorch's old name, kept for code that subclasses it


def _check_members(owner: str, optimizer, schedulers) -> None:
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{owner} at index {i} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(
                f"{owner} does not support `ReduceLROnPlateau` scheduler as it requires "
                "additional kwargs to be specified when calling `step`, but got one at index "
                f"{i} in the given schedulers sequence.")
        if optimizer is not scheduler.optimizer:
            raise ValueError(
                f"{owner} expects all schedulers to belong to the same optimizer, but got "
                f"scheduler {scheduler.__class__.__name__} at index {i} has "
                f"{scheduler.optimizer}, which is different from "
                f"{optimizer.__class__.__name__}.")


class _Composite(LRScheduler):
    """State dicts of schedulers made of schedulers: each member's own state dict."""

    def state_dict(self) -> dict:
        state = {k: v for k, v in self.__dict__.items()
                 if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        members = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        state_dict["_schedulers"] = members  # the caller's dict is left as it was
        for scheduler, saved in zip(self._schedulers, members):
            scheduler.load_state_dict(saved)


class SequentialLR(_Composite):
    """Run ``schedulers`` one after another, switching at each of ``milestones``.

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd.optim import lr_scheduler as S
    >>> opt = T.optim.SGD([T.zeros(1, requires_grad=True)], lr=1.0)
    >>> warm = S.LinearLR(opt, start_factor=0.5, total_iters=2)
    >>> decay = S.ExponentialLR(opt, gamma=0.5)
    >>> sched = S.SequentialLR(opt, [warm, decay], milestones=[2])
    >>> lrs = []
    >>> for _ in range(4):
    ...     opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
    >>> lrs
    [0.75, 1.0, 0.5, 0.25]
    """

    def __init__(self, optimizer, schedulers, milestones, last_epoch: int = -1) -> None:
        name = self.__class__.__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler, but got no scheduler.")
        _check_members(name, optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more "
                "than the number of milestone points, but got number of schedulers "
                f"{len(schedulers)} and the number of milestones to be equal to "
                f"{len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # the members already took their initial steps: undo them, then start the first
        for group in self.optimizer.param_groups:
            set_group_value(group, "lr", group["initial_lr"])
        self.recursive_undo()
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def recursive_undo(self, sched=None) -> None:
        """Take one epoch off every member (recursively through nested composites)."""
        scheds = self if sched is None else sched
        if hasattr(scheds, "_schedulers"):
            for s in scheds._schedulers:
                self.recursive_undo(s)
        elif hasattr(scheds, "last_epoch"):
            scheds.last_epoch -= 1

    def step(self) -> None:
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)  # a new phase starts at its epoch 0
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_Composite):
    """Step every scheduler in ``schedulers`` at each step; their factors multiply."""

    def __init__(self, schedulers, optimizer=None) -> None:
        name = self.__class__.__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler to be chained, but got "
                             "no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_members(name, optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = group_values(self._schedulers[-1].optimizer, "lr")

    def step(self) -> None:
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = group_values(self._schedulers[-1].optimizer, "lr")
