"""Passes over a recorded program before its replay is written: dead steps and constants.

Both work on the steps (``_trace.Step``) and the lines written for them, tagged with the
step's index (``_program._Writer``), and both keep the replay bit-identical to eager: they
only leave out calls whose results nothing reads, or make a call once instead of on every
replay when all it reads is constant.

* **Dead steps.**  A step is *pure* when it only computes its result from its arguments:
  a derivative call (``vjp``), a sum of gradients, and an op forward of the modules below
  (forwards elsewhere may update state in place: batch norm's running statistics).  A pure
  step whose result no later line (nor the return value) reads is left out: the loss value
  of a Hessian-vector product's first backward, the dot product ``sum(g * v)`` whose only
  use is its gradient.
* **Constants.**  A pure step reading only constants (private copies of arrays made inside
  the function, frozen; Python values; other constant steps) gives the same arrays on
  every call: it runs once when the replay is built, and its arrays are frozen (a replay
  step writing into one raises instead of changing it for later calls).  The gradient of
  ``loss.sum()`` spread back over its input (``ones`` broadcast) is one.
"""

from __future__ import annotations

import re

import numpy as np

from ._trace import Const, Ref

# modules whose op forwards only compute (no argument changed in place)
_PURE_MODULES = frozenset(f"retrograd.ops.{m}" for m in (
    "pointwise", "unary", "binary", "reduce", "nn", "linalg", "shape", "activation", "losses",
    "compare", "logical", "elementary", "selection", "pointwise_compare", "pointwise_common",
    "nll", "elementwise_losses", "multi_margin", "linear", "einsum"))

_NAME = re.compile(r"\bv\d+\b")


def is_pure(step) -> bool:
    if step.kind in ("vjp", "sum"):
        return True
    return step.kind == "fwd" and getattr(step.fn, "__module__", None) in _PURE_MODULES


def _refs(tpl, out):
    t = type(tpl)
    if t is Ref:
        out.append(tpl)
    elif t in (tuple, list):
        for x in tpl:
            _refs(x, out)
    elif t is dict:
        for x in tpl.values():
            _refs(x, out)
    return out


def step_refs(step) -> list:
    """The arrays (:class:`Ref`) a step reads."""
    if step.kind == "sum":
        return [ref for ref, _spec in step.args]
    out = _refs(step.args, [])
    if step.extra is not None and type(step.extra) is not Const:
        _refs(step.extra, out)
    return out


def constant_steps(steps, constant_unknowns) -> set:
    """Indices of the pure steps that read nothing but constants (see the module doc)."""
    const: set = set()
    for k, s in enumerate(steps):
        if not is_pure(s):
            continue
        if all((r.kind == "v" and r.k in const) or (r.kind == "u" and r.k in constant_unknowns)
               for r in step_refs(s)):
            const.add(k)
    return const


def drop_unused(tagged, steps, tail) -> list:
    """``tagged``: ``(step index, line)`` in order; ``tail``: lines that come after them
    (the return).  The lines of pure steps whose results nothing reads are left out."""
    used: set = set()
    for line in tail:
        used.update(_NAME.findall(line))
    keep_step: dict = {}
    out = []
    for k, line in reversed(tagged):
        if k not in keep_step:
            keep_step[k] = not is_pure(steps[k]) or f"v{k}" in used
        if not keep_step[k]:
            continue
        target, sep, rest = line.partition(" = ")
        used.update(_NAME.findall(rest if sep and target == f"v{k}" else line))
        out.append((k, line))
    out.reverse()
    return out


def freeze(value) -> None:
    """Make every array in ``value`` (nested tuples/lists) read-only."""
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    elif type(value) in (tuple, list):
        for x in value:
            freeze(x)


def free_after_last_use(lines, tail, globals_=()) -> list:
    """``del`` each value right after the last line that reads it, as eager frees a
    gradient once the engine has passed it on: the memory goes back to the allocator
    while the step runs, and the next arrays reuse it (still in cache), instead of every
    intermediate of the step staying alive until it returns.  ``globals_``: names the
    function reads but does not assign (the constant steps), never deleted."""
    used_later: set = set(globals_)
    for line in tail:  # (the return value is never deleted)
        used_later.update(_NAME.findall(line))
    blocks: list = []  # a line with the indented lines (and else:) that belong to it
    for line in lines:
        if blocks and (line[:1] == " " or line.startswith(("else:", "elif "))):
            blocks[-1].append(line)
        else:
            blocks.append([line])
    out = []
    for block in reversed(blocks):
        first = block[0]
        target, sep, rest = first.partition(" = ")
        if len(block) == 1 and sep and _NAME.fullmatch(target):
            names = set(_NAME.findall(rest))
        else:
            names = set(_NAME.findall("\n".join(block)))
        dead = sorted(names - used_later, key=lambda n: int(n[1:]))
        if dead:
            out.append(["del " + ", ".join(dead)])
        used_later.update(names)
        out.append(block)
    out.reverse()
    return [line for block in out for line in block]
