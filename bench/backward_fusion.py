"""Blockwise chains of unary derivatives (autograd/fused_chain.py) on and off, paired in one
process, on bench/run.py's (d): 4 cycles of h + exp(tanh(sin(h))) * 0.1 on 1000x1000
float32, then backward; against the hand-written NumPy version too.

Run ``OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python bench/backward_fusion.py``.  Fusion is
turned off by raising the size threshold the engine reads (``engine.CHAIN_MIN``), so both
arms run the same code otherwise.  Two rows: the whole iteration (what (d) times) and the
backward alone (the forward and ``sum()`` outside the clock; NumPy's backward from its
``ones_like`` on).  CPU clock, per-repeat ratios, arms in a rotating order: usable on a
shared machine (the quartiles say how much to trust the median).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time

import numpy as np

import retrograd as R
from retrograd.autograd import engine

ON = engine.CHAIN_MIN
OFF = 1 << 62
_clock = time.process_time


def workload(cycles=4, shape=(1000, 1000)):
    x0 = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    xr = R.tensor(x0, requires_grad=True)

    def rg():
        t0 = _clock()
        xr.grad = None
        h = xr
        for _ in range(cycles):
            h = h + R.exp(R.tanh(R.sin(h))) * 0.1
        loss = h.sum()
        del h
        t1 = _clock()
        loss.backward()
        t2 = _clock()
        return t2 - t0, t2 - t1

    def nump():
        t0 = _clock()
        h = x0
        tape = []
        for _ in range(cycles):
            s = np.sin(h)
            t = np.tanh(s)
            e = np.exp(t)
            tape.append((h, t, e))
            h = h + e * 0.1
        t1 = _clock()
        g = np.ones_like(h)
        for h_in, t, e in reversed(tape):
            g = g + g * 0.1 * e * (1 - t * t) * np.cos(h_in)
        t2 = _clock()
        return t2 - t0, t2 - t1

    return rg, nump


def measure(repeats):
    rg, nump = workload()
    arms = {"fused": (rg, ON), "unfused": (rg, OFF), "numpy": (nump, ON)}
    times = {k: [] for k in arms}
    for fn, threshold in arms.values():  # warm-up
        engine.CHAIN_MIN = threshold
        fn()
    order = list(arms)
    gc.disable()
    try:
        for r in range(repeats):
            for name in order[r % 3:] + order[:r % 3]:
                fn, threshold = arms[name]
                engine.CHAIN_MIN = threshold
                times[name].append(fn())
            gc.collect()
    finally:
        gc.enable()
        engine.CHAIN_MIN = ON
    return times


def _q(values):
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return f"{q2:.3f} ({q1:.3f}-{q3:.3f})"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=31)
    args = ap.parse_args(argv)
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1, user_api="blas")
    except ImportError:
        pass
    print(f"CHAIN_MIN {ON} elements; {args.repeats} repeats, CPU clock; median ratio "
          "(quartiles) of paired repeats\n")
    print("| (d) | fused | unfused | numpy | fused/unfused | fused/numpy | unfused/numpy |")
    print("|---|---|---|---|---|---|---|")
    t = measure(args.repeats)
    for col, label in ((0, "iteration"), (1, "backward")):
        v = {k: [x[col] for x in xs] for k, xs in t.items()}
        med = {k: statistics.median(x) for k, x in v.items()}
        ratios = [[a / b for a, b in zip(v[p], v[q])]
                  for p, q in (("fused", "unfused"), ("fused", "numpy"), ("unfused", "numpy"))]
        print(f"| {label} | {med['fused'] * 1e3:.2f} ms | {med['unfused'] * 1e3:.2f} ms | "
              f"{med['numpy'] * 1e3:.2f} ms | " + " | ".join(_q(r) for r in ratios) + " |")


if __name__ == "__main__":
    main()
