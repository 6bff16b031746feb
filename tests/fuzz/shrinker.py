"""Shrink a failing program: delete statements, leave ``with`` blocks, shrink leaf shapes and
simplify leaf values, greedily, while the program still fails the same way."""

from __future__ import annotations

import dataclasses

import numpy as np

from .program import Program


def shrink(prog: Program, still_fails, max_rounds: int = 8) -> Program:
    """``still_fails(program) -> bool``; returns the smallest program found."""
    steps = list(prog.steps)

    def attempt(cand):
        return still_fails(Program(prog.seed, cand))

    for _ in range(max_rounds):
        changed = False
        for i in reversed(range(len(steps))):  # later statements first: fewer dependents
            if i < len(steps) and attempt(steps[:i] + steps[i + 1:]):
                steps = steps[:i] + steps[i + 1:]
                changed = True
        for i, st in enumerate(steps):
            if st.ctx is not None:
                cand = steps[:i] + [dataclasses.replace(st, ctx=None)] + steps[i + 1:]
                if attempt(cand):
                    steps, changed = cand, True
        for i, st in enumerate(steps):
            if st.leaf is None:
                continue
            for new in _smaller_leaves(st.leaf):
                cand = steps[:i] + [dataclasses.replace(st, leaf=new)] + steps[i + 1:]
                if attempt(cand):
                    steps, changed = cand, True
                    st = steps[i]
        if not changed:
            break
    # drop statements no longer rendered (their inputs were deleted)
    alive = {s.target for _, chunk in Program(prog.seed, steps).chunks() for s in chunk}
    kept = [s for s in steps if s.target is None or s.target in alive]
    return Program(prog.seed, kept)


def _smaller_leaves(leaf):
    """Candidate simplifications of a leaf, simplest first."""
    arr = leaf.array
    for axis, size in enumerate(arr.shape):
        if size > 1:
            yield dataclasses.replace(leaf, array=np.take(arr, [0], axis=axis))
        if size == 1:
            yield dataclasses.replace(leaf, array=np.squeeze(arr, axis=axis))
    if arr.dtype.kind == "f" and arr.size:
        rounded = np.round(arr)
        if not np.array_equal(rounded, arr):
            yield dataclasses.replace(leaf, array=rounded)
    if leaf.dtype != "float64" and leaf.requires_grad is False and arr.dtype.kind == "f":
        yield dataclasses.replace(leaf, dtype="float64")
    if not leaf.requires_grad and leaf.dtype in ("float64", "float32"):
        return
    if leaf.requires_grad:
        yield dataclasses.replace(leaf, requires_grad=False)
