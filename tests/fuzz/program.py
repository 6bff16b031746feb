"""A fuzz program: straight-line steps over named values, rendered as Python source.

The same text runs with ``T = retrograd`` and with ``T = torch``, so a failing program printed
by :func:`Program.source` is its own reproducer.  Steps know which names they define and use
(read off their text), so the shrinker can delete a step together with everything built on it.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np

NAME = re.compile(r"\b(?:v\d+|h\d+|loss2?|gs)\b")
CONTEXTS = {"no_grad": "with T.no_grad():", "grad_off": "with T.set_grad_enabled(False):"}


@dataclasses.dataclass
class Leaf:
    """Data of a leaf: a NumPy array written into the program as a literal."""

    array: np.ndarray
    dtype: str              # "float64", "float32", "int64", "bool"
    requires_grad: bool

    def expr(self) -> str:
        rg = ", requires_grad=True" if self.requires_grad else ""
        if self.array.size == 0:
            return f"T.zeros({tuple(self.array.shape)}, dtype=T.{self.dtype}{rg})"
        return f"T.tensor({self.array.tolist()!r}, dtype=T.{self.dtype}{rg})"


@dataclasses.dataclass
class Step:
    """One statement (or, for ``dyn`` steps, a statement built from the names still alive).

    ``op`` names what the step exercises (coverage, known-bug predicates); ``ctx`` puts it in
    a ``with T.no_grad():`` block (consecutive steps of one ``group`` share the block).
    ``view_chain`` is, for a step defining a view, the view ops from its base to it.
    """

    text: str = ""
    op: str = ""
    kind: str = ""
    target: str | None = None
    leaf: Leaf | None = None
    ctx: str | None = None
    group: int = 0
    view_chain: tuple = ()
    dyn: object = None       # callable(alive: set[str]) -> str | None
    on: str | None = None    # the value an in-place statement changes

    def render(self, alive: set) -> str | None:
        if self.leaf is not None:
            return f"{self.target} = {self.leaf.expr()}"
        if self.dyn is not None:
            return self.dyn(alive)
        if not self.uses() <= alive:
            return None
        return self.text

    def uses(self) -> set:
        text = self.text
        if self.target and text.startswith(self.target + " ="):
            text = text[len(self.target) + 2:]
        return set(NAME.findall(text))


@dataclasses.dataclass
class Program:
    seed: int
    steps: list

    def chunks(self) -> list:
        """[(source, steps)]: the units executed one at a time (a ``with`` block is one)."""
        out, alive = [], set()
        i = 0
        while i < len(self.steps):
            st = self.steps[i]
            if st.ctx is None:
                src = st.render(alive)
                if src is not None:
                    out.append((src, [st]))
                    if st.target:
                        alive.add(st.target)
                i += 1
                continue
            block, lines = [], []
            while (i < len(self.steps) and self.steps[i].ctx == st.ctx
                   and self.steps[i].group == st.group):
                src = self.steps[i].render(alive)
                if src is not None:
                    lines.append("    " + src.replace("\n", "\n    "))
                    block.append(self.steps[i])
                    if self.steps[i].target:
                        alive.add(self.steps[i].target)
                i += 1
            if lines:
                out.append((CONTEXTS[st.ctx] + "\n" + "\n".join(lines), block))
        return out

    def source(self, header: str = "", raising: dict | None = None) -> str:
        """The program as code; ``raising``: {chunk index: exception class} of the
        statements that raise in PyTorch, printed inside try/except so the rest runs."""
        lines = [f"# retrograd fuzz program, seed {self.seed}"]
        if header:
            lines += ["# " + h for h in header.splitlines()]
        lines += ["# Runs as is with retrograd; replace the import with `import torch as T` to",
                  "# compare.", "import retrograd as T", "LOG = []"]
        for i, (src, _) in enumerate(self.chunks()):
            if raising and i in raising:
                body = "    " + src.replace("\n", "\n    ")
                lines += ["try:", body, f"except Exception as e:  # PyTorch: {raising[i]}",
                          "    print(type(e).__name__, e)"]
            else:
                lines.append(src)
        return "\n".join(lines)

    def ops(self) -> list:
        return [st.op for st in self.steps if st.op]


TARGET = re.compile(r"^(v\d+|h\d+|loss2?|gs) = ")


def program_from_text(text: str, seed: int = -1) -> Program:
    """A program from its printed source (a reproducer): one step per statement, the lines
    of a ``with`` block as steps sharing its context.  Comments and imports are skipped."""
    steps, ctx, group = [], None, 0
    ctx_of = {v: k for k, v in CONTEXTS.items()}
    for line in _unwrap_try(text.strip().splitlines()):
        if not line.strip() or line.startswith(("#", "import ", "LOG = ")):
            continue
        if line in ctx_of:
            ctx, group = ctx_of[line], group + 1
            continue
        if not line.startswith("    "):
            ctx = None
        stmt = line.strip()
        m = TARGET.match(stmt)
        steps.append(Step(stmt, "", "", m.group(1) if m else None, ctx=ctx, group=group))
    return Program(seed, steps)


def _unwrap_try(lines):
    """The statements of a printed program without the try/except around those that raise."""
    out, mode = [], None
    for line in lines:
        if line == "try:":
            mode = "try"
        elif line.startswith("except "):
            mode = "except"
        elif mode and line.startswith("    "):
            if mode == "try":
                out.append(line[4:])
        else:
            mode = None
            out.append(line)
    return out
