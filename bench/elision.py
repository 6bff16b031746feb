"""Temporary elision (ops/_elision.py) on and off, paired in one process: bench/run.py's (d)
(4 cycles of h + exp(tanh(sin(h))) * 0.1 on 1000x1000 float32, then backward) and (f) (the
digits MLP's forward under no_grad), each also against the hand-written NumPy version.

Run ``OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python bench/elision.py``.  Elision is turned off
by raising the size threshold the op callers read (``ops._apply.ELIDE_MIN``), so both arms run
the same code otherwise; the CPU clock and per-repeat ratios make it usable on a shared
machine (the per-repeat ratios' quartiles say how much to trust the median).
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

import retrograd as R  # noqa: E402
from retrograd.ops import _apply  # noqa: E402
from digits_mlp import init_mlp, mlp_forward  # noqa: E402

ON = _apply.ELIDE_MIN
OFF = sys.maxsize


def chain(cycles=4, shape=(1000, 1000)):
    x0 = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    xr = R.tensor(x0, requires_grad=True)

    def rg():
        xr.grad = None
        h = xr
        for _ in range(cycles):
            h = h + R.exp(R.tanh(R.sin(h))) * 0.1
        h.sum().backward()

    def nump():
        h = x0
        tape = []
        for _ in range(cycles):
            s = np.sin(h)
            t = np.tanh(s)
            e = np.exp(t)
            tape.append((h, t, e))
            h = h + e * 0.1
        g = np.ones_like(h)
        for h_in, t, e in reversed(tape):
            g = g + g * 0.1 * e * (1 - t * t) * np.cos(h_in)

    return rg, nump, 2


def mlp():
    x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    params = init_mlp([64, 128, 128, 10], 0)
    pr = [R.tensor(p, requires_grad=True) for p in params]
    xr = R.tensor(x)

    def rg():
        with R.no_grad():
            mlp_forward(pr, xr, R.relu)

    def nump():
        mlp_forward(params, x, lambda h: np.maximum(h, 0))

    return rg, nump, 300


def _set(threshold):
    _apply.ELIDE_MIN = threshold


def measure(workload, repeats):
    rg, nump, inner = workload()
    arms = {"elide": (rg, ON), "no elision": (rg, OFF), "numpy": (nump, None)}
    times = {k: [] for k in arms}
    for fn, threshold in arms.values():  # warm-up
        _set(ON if threshold is None else threshold)
        fn()
    order = list(arms)
    gc.disable()
    try:
        for r in range(repeats):
            for name in order[r % 3:] + order[:r % 3]:
                fn, threshold = arms[name]
                _set(ON if threshold is None else threshold)
                t0 = time.process_time()
                for _ in range(inner):
                    fn()
                times[name].append((time.process_time() - t0) / inner)
            gc.collect()
    finally:
        gc.enable()
        _set(ON)
    return times


def _q(values):
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return f"{q2:.3f} ({q1:.3f}-{q3:.3f})"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=21)
    ap.add_argument("--only", default="df")
    args = ap.parse_args(argv)
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1, user_api="blas")
    except ImportError:
        pass
    print(f"ELIDE_MIN {ON} elements; {args.repeats} repeats, CPU clock; median ratio "
          "(quartiles) of paired repeats\n")
    print("| workload | elide | no elision | numpy | elide/no | elide/numpy | no/numpy |")
    print("|---|---|---|---|---|---|---|")
    for key, workload in (("d", chain), ("f", mlp)):
        if key not in args.only:
            continue
        t = measure(workload, args.repeats)
        med = {k: statistics.median(v) for k, v in t.items()}
        on_off = [a / b for a, b in zip(t["elide"], t["no elision"])]
        on_np = [a / b for a, b in zip(t["elide"], t["numpy"])]
        off_np = [a / b for a, b in zip(t["no elision"], t["numpy"])]
        print(f"| ({key}) | {med['elide'] * 1e3:.3f} ms | {med['no elision'] * 1e3:.3f} ms | "
              f"{med['numpy'] * 1e3:.3f} ms | {_q(on_off)} | {_q(on_np)} | {_q(off_np)} |")


if __name__ == "__main__":
    main()
