"""A focused probe of AccumulateGrad's shape rule: a float64 leaf, one or two random ops of
the fuzzer's table on it (or on what they made), then ``squeeze_``/``unsqueeze_``/``t_``/
``transpose_``/``swapaxes_`` of the LEAF under no_grad, then a backward.  PyTorch steals the
gradient when its strides obey the leaf's new strides and copies it into the leaf's layout
otherwise (which broadcasts or raises), so whether the two libraries agree depends on the
strides each op's derivative gives.  The random fuzzer meets this rarely; this counts it.

    python -m tests.fuzz.leaf_reshape_probe --count 3000 --empty   # empty leaves only
    python -m tests.fuzz.leaf_reshape_probe --count 3000           # any leaf shape

Prints the number of programs that differ, grouped by the ops between leaf and backward
and by failure kind, and a few reproducers (``--show N``).
"""

from __future__ import annotations

import argparse
import collections
import warnings

import numpy as np

from .generator import Generator
from .known_bugs import which_known
from .program import Program, Step
from .runner import compare, reproducer, torch

RESHAPES = ("t_", "transpose_", "unsqueeze_", "squeeze_", "swapaxes_")


class LeafReshapeProbe(Generator):
    _forced = None

    def _pick(self, pred=lambda v: True):
        return self._forced if self._forced is not None else super()._pick(pred)

    def _reshape_text(self, a):
        rng = self.rng
        fn = rng.choice(RESHAPES)
        if fn == "t_":
            return (fn, f"{a.name}.t_()") if a.ndim <= 2 else None
        if fn == "unsqueeze_":
            return fn, f"{a.name}.unsqueeze_({rng.randint(-a.ndim - 1, a.ndim)})"
        if fn == "squeeze_":
            return fn, f"{a.name}.squeeze_({self.dim(a)})" if a.ndim else f"{a.name}.squeeze_()"
        if not a.ndim:
            return None
        return fn, f"{a.name}.{fn}({self.dim(a)}, {self.dim(a)})"

    def probe(self, empty: bool) -> Program | None:
        rng = self.rng
        shape = self._random_shape()
        if empty:
            shape = shape or (0,)
            if 0 not in shape:
                shape = tuple(0 if i == rng.randrange(len(shape)) else n
                              for i, n in enumerate(shape))
        leaf = self.fresh(shape, "float64", requires_grad=True)
        first = True
        for _ in range(rng.randint(1, 2)):
            for _ in range(8):
                # the first op reads the leaf itself (later ones what is there)
                self._forced = self.vals[leaf] if first else None
                if self.act_op():
                    break
            first = False
        self._forced = None
        if len(self.vals) < 2:
            return None
        made = self._reshape_text(self.vals[leaf])
        if made is None:
            return None
        fn, text = made
        if not self._commit(Step(text, fn, "inplace", None, on=leaf), keep_error=0,
                            ctx="no_grad"):
            return None
        self.touched_no_grad.add(leaf)
        self._ending()
        return Program(self.seed, self.steps)


def ops_of(prog: Program) -> str:
    return "+".join(st.op for st in prog.steps if st.kind not in ("leaf", "end", "inplace"))


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--empty", action="store_true")
    p.add_argument("--show", type=int, default=0)
    args = p.parse_args(argv)
    by_op, by_kind, shown, ran, accepted = collections.Counter(), collections.Counter(), 0, 0, 0
    seeds = collections.defaultdict(list)
    for seed in range(args.seed, args.seed + args.count):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            prog = LeafReshapeProbe(seed, torch, 4).probe(args.empty)
            if prog is None:
                continue
            ran += 1
            failure = compare(prog)
        if failure is None:
            continue
        if which_known(prog, failure):  # accepted (or a known bug): counted apart
            accepted += 1
            continue
        key = (failure.kind, failure.torch_exc, failure.retro_exc)
        by_kind[key] += 1
        by_op[ops_of(prog)] += 1
        seeds[key].append(seed)
        if shown < args.show:
            shown += 1
            print(reproducer(prog, failure))
    print(f"{ran} programs, {sum(by_kind.values())} differ ({accepted} more: accepted "
          "differences or known bugs)")
    for key, n in by_kind.most_common():
        print(f"  {key}: {n}  seeds {seeds[key][:8]}")
    for ops, n in by_op.most_common(40):
        print(f"  {n:4d}  {ops}")


if __name__ == "__main__":
    main()
