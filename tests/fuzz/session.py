"""One program, start to end: generate, compare, filter known bugs, shrink."""

from __future__ import annotations

import dataclasses

from .generator import generate
from .known_bugs import which_known
from .program import Program
from .runner import Failure, compare, reproducer, torch
from .shrinker import shrink


@dataclasses.dataclass
class Result:
    program: Program
    failure: Failure | None = None
    known: str | None = None      # the KNOWN_BUGS entry that explains the failure
    reproducer: str = ""


def fuzz_one(seed: int, max_steps: int = 14, shrink_failures: bool = True) -> Result:
    prog = generate(seed, torch, max_steps)
    failure = compare(prog)
    if failure is None:
        return Result(prog)
    name = which_known(prog, failure)
    if name:
        return Result(prog, failure, name)
    small = prog
    if shrink_failures:
        def still_fails(cand):
            f = compare(cand)
            return f is not None and f.signature == failure.signature and not which_known(cand, f)
        small = shrink(prog, still_fails)
        failure = compare(small) or failure
    return Result(prog, failure, None, reproducer(small, failure))
