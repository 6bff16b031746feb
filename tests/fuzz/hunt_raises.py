"""``python -m tests.fuzz.hunt_raises SEED SECONDS``: an error-heavy variant of the fuzzer for
the 'raise', 'grad_fn' and 'flags' kinds (a hunting tool; `make fuzz` is the judge).

The generator is patched for the run only: a statement PyTorch refuses is kept 90 % of the
time (25 % normally), a dim is out of range 20 % of the time (2 %), an operand does not
broadcast 15 % of the time (3 %) or has another dtype (bool, int64, float32) 10 % of the
time.  Seeds differ from `make fuzz`'s programs: replay a finding with this module, and pin
it as a program in a regression file.  Found seed 18706469 (lerp by a 0-d weight of another
dtype saved a cast copy) and, with it, the dtype= reductions' saved copies.
"""

from __future__ import annotations

import collections
import sys
import time

from . import generator as G
from .known_bugs import which_known
from .runner import compare, reproducer, torch
from .shrinker import shrink


def _patch():
    commit, dim, other = G.Generator._commit, G.Generator.dim, G.Generator.other

    def keep_errors(self, st, keep_error=0.25, ctx=None):
        return commit(self, st, 0.9, ctx)

    def bad_dim(self, a):
        nd = max(a.ndim, 1)
        if self.rng.random() < 0.2:
            return self.rng.choice([nd, -nd - 1])
        return dim(self, a)

    def bad_other(self, a, same_shape=False, any_shape=False, into=False):
        if self.rng.random() < 0.15 and a.ndim:
            return self.fresh(tuple(s + 1 for s in a.shape))
        if self.rng.random() < 0.1:
            return self.fresh(a.shape, self.rng.choice(["bool", "int64", "float32"]))
        return other(self, a, same_shape, any_shape, into)

    G.Generator._commit, G.Generator.dim, G.Generator.other = keep_errors, bad_dim, bad_other


def main(seed0: int, duration: float) -> int:
    _patch()
    start, n = time.time(), 0
    findings, others = {}, collections.Counter()
    while time.time() - start < duration:
        seed = seed0 + n
        n += 1
        prog = G.generate(seed, torch)
        f = compare(prog)
        if f is None or which_known(prog, f):
            continue
        sig = f.signature
        if f.kind not in ("raise", "grad_fn", "flags"):
            others[sig] += 1  # values and gradients: `make fuzz` finds those as well
            continue
        if sig in findings:
            findings[sig].append(seed)
            continue
        findings[sig] = [seed]

        def still_fails(cand, sig=sig):
            g = compare(cand)
            return g is not None and g.signature == sig and not which_known(cand, g)

        small = shrink(prog, still_fails)
        print(f"\n=== finding (seed {seed}) {sig} ===")
        print(reproducer(small, compare(small) or f), flush=True)
    print(f"\n{n} programs (seeds {seed0}..{seed0 + n - 1}) in {time.time() - start:.0f} s")
    for sig, seeds in findings.items():
        print(f"  {sig}: seeds {seeds[:8]}")
    print(f"other kinds: {dict(others) or 'none'}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else 60.0))
