"""``python -m tests.fuzz --seed S --duration SECONDS``: fuzz retrograd against PyTorch.

Programs get seeds S, S+1, ... until the time is up; each failure is shrunk and printed as
a reproducer.  The report counts programs, op kinds covered, known bugs hit and findings.
"""

from __future__ import annotations

import argparse
import collections
import faulthandler
import sys
import time

from .session import fuzz_one


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--duration", type=float, default=60.0, help="seconds")
    ap.add_argument("--count", type=int, default=0, help="stop after this many programs")
    ap.add_argument("--max-steps", type=int, default=14)
    ap.add_argument("--progress", type=float, default=300.0,
                    help="seconds between progress lines (0: none)")
    args = ap.parse_args(argv)
    # A long run can die in native code (PyTorch has segfaulted on programs the generator
    # now avoids: test_torch_crash_guard.py); the traceback and the last progress line then
    # say where, instead of a run that ends without its summary.
    faulthandler.enable()
    ops, known, findings = collections.Counter(), collections.Counter(), {}
    start, n = time.time(), 0
    next_progress = start + args.progress
    while time.time() - start < args.duration and (not args.count or n < args.count):
        seed = args.seed + n
        if args.progress and time.time() >= next_progress:
            next_progress += args.progress
            print(f"[{time.time() - start:.0f} s] {n} programs, next seed {seed},"
                  f" {len(findings)} finding(s)", flush=True)
        n += 1
        result = fuzz_one(seed, max_steps=args.max_steps, shrink_failures=True)
        ops.update(result.program.ops())
        if result.known:
            known[result.known] += 1
        elif result.failure is not None:
            sig = result.failure.signature
            if sig not in findings:
                print(f"\n=== finding {len(findings) + 1} (seed {seed}) ===")
                print(result.reproducer, flush=True)
                findings[sig] = [seed]
            else:
                findings[sig].append(seed)
    print(f"\n{n} programs (seeds {args.seed}..{args.seed + n - 1}) in {time.time() - start:.0f}"
          f" s; {len(ops)} op kinds covered:")
    print("  " + ", ".join(f"{k} {v}" for k, v in sorted(ops.items())))
    print(f"known bugs hit: {dict(known) or 'none'}")
    print(f"findings: {len(findings)}")
    for sig, seeds in findings.items():
        print(f"  {sig}: {len(seeds)} program(s), seeds {seeds[:8]}")
    sys.stdout.flush()
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
