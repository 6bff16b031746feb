"""KNOWN_BUGS: mismatches being fixed on other branches (issue items named in each comment).

Each predicate sees a failing program and its failure; a failure that matches one is counted
as known, not reported.  Delete an entry once its fix is merged (and the fuzzer passes).
"""

from __future__ import annotations

KNOWN_BUGS: list = []  # (name, predicate(program, failure) -> bool)


def known(name):
    def register(pred):
        KNOWN_BUGS.append((name, pred))
        return pred
    return register


def which_known(prog, failure) -> str | None:
    for name, pred in KNOWN_BUGS:
        if pred(prog, failure):
            return name
    return None
