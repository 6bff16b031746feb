"""Moving tensors between vmap levels: the chain of BatchedTensor wrappers of a value.

A value batched at levels 1 and 3 is ``BatchedTensor(BatchedTensor(physical, 1), 3)``; its
physical tensor holds the level-1 batch in dimension 0 and the level-3 batch in dimension 1.
The transforms (grad, vjp, jvp) differentiate physical tensors, which is right because
samples never mix: a gradient of the physical output w.r.t. the physical input is the stack
of the per-sample gradients, provided input and output carry the same levels.
"""

from __future__ import annotations

from .batched import STACK, BatchedTensor


def chain(x) -> tuple:
    """``(physical, levels)``: the innermost tensor and the levels wrapping it, lowest first."""
    levels = []
    while type(x) is BatchedTensor:
        levels.append(x.level)
        x = x.value
    return x, tuple(reversed(levels))


def rewrap(physical, levels):
    """The inverse of :func:`chain`."""
    for lv in levels:
        physical = BatchedTensor(physical, lv)
    return physical


def active():
    """The running vmap levels, outermost (lowest) first."""
    return list(STACK)


def to_levels(x, want):
    """``x`` batched at exactly the levels ``want`` (Level records, lowest first): levels it
    lacks are added by expanding (a view), levels it has beyond ``want`` are an error."""
    p, have = chain(x)
    want_ids = [lv.level for lv in want]
    if not set(have) <= set(want_ids):
        raise RuntimeError(f"retrograd.func: a tensor batched at vmap levels {have} is used where "
                           f"only levels {want_ids} exist")
    for i, lv in enumerate(want):
        if lv.level not in have:
            p = p.unsqueeze(i)
            p = p.expand(*p.shape[:i], lv.size, *p.shape[i + 1:])
    return rewrap(p, want_ids)
