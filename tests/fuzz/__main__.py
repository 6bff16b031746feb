"""``python -m tests.fuzz --seed S --duration SECONDS``: fuzz retrograd against PyTorch.

Programs get seeds S, S+1, ... until the time is up; each failure is shrunk and printed as
a reproducer.  The report counts programs, op kinds covered, known bugs hit and findings.

The programs run in a child process, watched by this one: PyTorch itself can crash
(a segfault in its backward, seed 19879210) and a LAPACK call can hang (OpenBLAS's SVD of a
matrix with an infinite entry), and either used to end a 30-minute run without its report.
A child that dies or stops making progress is reported as a finding ('crash' or 'hang', with
its seed), and a new child goes on from the next seed.
"""

from __future__ import annotations

import argparse
import collections
import faulthandler
import json
import os
import subprocess
import sys
import tempfile
import time

from .session import fuzz_one

HANG_SECONDS = 120.0  # one program (with its shrinking) taking longer than this is a hang


def _args(argv):
    ap = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--duration", type=float, default=60.0, help="seconds")
    ap.add_argument("--count", type=int, default=0, help="stop after this many programs")
    ap.add_argument("--max-steps", type=int, default=14)
    ap.add_argument("--progress", type=float, default=300.0,
                    help="seconds between progress lines (0: none)")
    ap.add_argument("--in-process", action="store_true",
                    help="run the programs in this process (no crash or hang watch)")
    ap.add_argument("--child-state", help=argparse.SUPPRESS)  # internal: the watched child
    return ap.parse_args(argv)


def _dump(path, result) -> None:
    """Write ``result`` to ``path`` whole or not at all (a crash may come at any moment)."""
    with open(path + ".tmp", "w") as f:
        json.dump(result, f)
    os.replace(path + ".tmp", path)


def run_programs(args, state_path=None) -> dict:
    """Run programs from ``args.seed``; the summary as plain data.  With ``state_path``,
    the seed about to run is written there first, so a watcher knows where a child died,
    and the summary of the programs before it beside it (``partial.json``), so a child that
    dies does not take its findings and counts with it (seed 20221715's finding was lost
    from a run's report when PyTorch segfaulted on a later seed of the same child)."""
    ops, known, findings = collections.Counter(), collections.Counter(), {}
    start, n = time.time(), 0
    state = open(state_path, "w") if state_path else None
    partial = _partial_path(state_path) if state_path else None
    # (tests/fuzz/test_fuzz_watch.py: a child told to crash at a seed, to test the watcher)
    crash_at = int(os.environ.get("FUZZ_TEST_CRASH_AT", "-1")) if state_path else -1
    while time.time() - start < args.duration and (not args.count or n < args.count):
        seed = args.seed + n
        if state is not None:
            _dump(partial, {"n": n, "ops": dict(ops), "known": dict(known),
                            "findings": findings})
            state.seek(0)
            state.write(f"{seed:>20}")
            state.flush()
        n += 1
        if seed == crash_at:
            os.abort()
        result = fuzz_one(seed, max_steps=args.max_steps, shrink_failures=True)
        ops.update(result.program.ops())
        if result.known:
            known[result.known] += 1
        elif result.failure is not None:
            sig = repr(result.failure.signature)
            if sig not in findings:
                print(f"\n=== finding (seed {seed}) ===")
                print(result.reproducer, flush=True)
                findings[sig] = [seed]
            else:
                findings[sig].append(seed)
    return {"n": n, "ops": dict(ops), "known": dict(known), "findings": findings}


def _partial_path(state_path):
    return os.path.join(os.path.dirname(state_path), "partial.json")


def _merge(total: dict, part: dict) -> None:
    total["n"] += part["n"]
    for key in ("ops", "known"):
        for k, v in part[key].items():
            total[key][k] = total[key].get(k, 0) + v
    for sig, seeds in part["findings"].items():
        total["findings"].setdefault(sig, []).extend(seeds)


def _read_seed(path):
    try:
        with open(path) as f:
            text = f.read().strip()
        return int(text) if text else None
    except (OSError, ValueError):
        return None


def _watch(args) -> dict:
    """Run the programs in children, restarting after a crash or a hang."""
    total = {"n": 0, "ops": {}, "known": {}, "findings": {}}
    start = time.time()
    seed, left = args.seed, args.count
    next_progress = start + args.progress if args.progress else float("inf")
    with tempfile.TemporaryDirectory(prefix="fuzz_") as tmp:
        state, summary = os.path.join(tmp, "seed"), os.path.join(tmp, "summary.json")
        partial = _partial_path(state)
        while time.time() - start < args.duration and (not args.count or left > 0):
            for p in (state, summary, partial):
                if os.path.exists(p):
                    os.remove(p)
            cmd = [sys.executable, "-m", "tests.fuzz", "--child-state", state,
                   "--seed", str(seed), "--duration", str(args.duration - (time.time() - start)),
                   "--count", str(left if args.count else 0), "--max-steps", str(args.max_steps)]
            child = subprocess.Popen(cmd, cwd=os.getcwd())
            last_seed, last_change, hung = None, time.time(), False
            while child.poll() is None:
                time.sleep(0.5)
                now_seed = _read_seed(state)
                if now_seed != last_seed:
                    last_seed, last_change = now_seed, time.time()
                elif time.time() - last_change > HANG_SECONDS:
                    child.kill()
                    child.wait()
                    hung = True
                    break
                if time.time() >= next_progress:
                    next_progress += args.progress
                    done = total["n"] + ((last_seed or seed) - seed)
                    print(f"[{time.time() - start:.0f} s] {done} programs, at seed {last_seed},"
                          f" {len(total['findings'])} finding(s) before this child", flush=True)
            if os.path.exists(summary):
                with open(summary) as f:
                    _merge(total, json.load(f))
                break  # the child ran to the end of the time or the count
            # the child died (or hung) at last_seed: count the programs before it, report it
            dead = _read_seed(state)
            dead = seed if dead is None else dead
            try:  # what the child found and covered before the seed it died on
                with open(partial) as f:
                    part = json.load(f)
            except (OSError, ValueError):
                part = None
            if part is not None and part["n"] == dead - seed:
                _merge(total, dict(part, n=0))  # (the programs are counted below)
            kind = "hang" if hung else "crash"
            sig = repr((kind, f"exit {child.returncode}" if not hung else f">{HANG_SECONDS:.0f} s"))
            print(f"\n=== finding (seed {dead}) ===\nthe child process {kind}ed on seed {dead}"
                  f" (exit status {child.returncode}); replay it with"
                  f" `python -m tests.fuzz --seed {dead} --count 1 --in-process`", flush=True)
            total["n"] += dead - seed + 1
            total["findings"].setdefault(sig, []).append(dead)
            if args.count:
                left -= dead - seed + 1
            seed = dead + 1
    return total


def main(argv=None) -> int:
    args = _args(argv)
    if args.child_state:
        faulthandler.enable()  # a native crash prints where it happened
        result = run_programs(args, args.child_state)
        summary = os.path.join(os.path.dirname(args.child_state), "summary.json")
        with open(summary, "w") as f:
            json.dump(result, f)
        return 0
    start = time.time()
    if args.in_process:
        faulthandler.enable()
        total = run_programs(args)
    else:
        total = _watch(args)
    n, ops = total["n"], total["ops"]
    print(f"\n{n} programs (seeds {args.seed}..{args.seed + n - 1}) in {time.time() - start:.0f}"
          f" s; {len(ops)} op kinds covered:")
    print("  " + ", ".join(f"{k} {v}" for k, v in sorted(ops.items())))
    print(f"known bugs hit: {total['known'] or 'none'}")
    print(f"findings: {len(total['findings'])}")
    for sig, seeds in total["findings"].items():
        print(f"  {sig}: {len(seeds)} program(s), seeds {seeds[:8]}")
    sys.stdout.flush()
    return 1 if total["findings"] else 0


if __name__ == "__main__":
    sys.exit(main())
