"""Issue 6's new ops: per-call cost of the new elementwise ops (predicates, logical, aliases)
against ``sin``/``mul`` on a small tensor (the target: no more per call), and the counting /
searching ops on a 1000x1000 float32 input against the equivalent NumPy calls (target:
within 1.3x).  No backward: none of them has a derivative.

Run ``python bench/counting.py`` (about 30 s) or ``--quick``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import timeit

import numpy as np

try:  # run from a checkout without installing
    import retrograd as R
except ImportError:  # pragma: no cover
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
    import retrograd as R


def best(fn, number, repeat):
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rep = 3 if args.quick else 7
    R.manual_seed(0)
    small = R.randn(8, 8)
    other = R.randn(8, 8)
    print("per call on an 8x8 float32 tensor (us), vs sin / mul (interleaved; best of each,"
          " as a shared machine only ever adds time):")
    sin, mul = (lambda: R.sin(small)), (lambda: R.mul(small, other))
    calls = {
        "isnan": (lambda: R.isnan(small), sin), "isfinite": (lambda: small.isfinite(), sin),
        "signbit": (lambda: R.signbit(small), sin), "absolute": (lambda: R.absolute(small), sin),
        "logical_and": (lambda: R.logical_and(small, other), mul),
        "multiply": (lambda: R.multiply(small, other), mul),
        "greater": (lambda: R.greater(small, other), mul),
    }
    for name, (fn, base) in calls.items():
        pairs = [(best(fn, 500, 1), best(base, 500, 1)) for _ in range(rep * 3)]
        t = min(t for t, _ in pairs)
        ratio = t / min(b for _, b in pairs)
        print(f"  {name:14s} {t * 1e6:7.2f} us   ratio {ratio:5.2f}")

    rng = np.random.default_rng(0)
    a = rng.standard_normal((1000, 1000)).astype(np.float32)
    ints = rng.integers(0, 1000, 10**6)
    seq = np.sort(rng.standard_normal(1000).astype(np.float32))
    x, xi, s = R.from_numpy(a), R.from_numpy(ints), R.from_numpy(seq)
    rounded = np.round(a * 10)
    xr = R.from_numpy(rounded)
    print("1000x1000 float32 (ms), retrograd vs NumPy:")
    pairs = {
        "unique": (lambda: R.unique(xr), lambda: np.unique(rounded)),
        "unique+inverse+counts": (
            lambda: R.unique(xr, return_inverse=True, return_counts=True),
            lambda: np.unique(rounded, return_inverse=True, return_counts=True)),
        "searchsorted": (lambda: R.searchsorted(s, x), lambda: np.searchsorted(seq, a)),
        "bucketize": (lambda: R.bucketize(x, s), lambda: np.searchsorted(seq, a)),
        "bincount": (lambda: R.bincount(xi), lambda: np.bincount(ints)),
        "histc": (lambda: R.histc(x, 100, -3, 3),
                  lambda: np.histogram(a, 100, (-3, 3))),
        "count_nonzero dim": (lambda: R.count_nonzero(x > 0, dim=1),
                              lambda: np.count_nonzero(a > 0, axis=1)),
        "isin": (lambda: R.isin(xi, xi[:100]), lambda: np.isin(ints, ints[:100])),
        "argwhere": (lambda: R.argwhere(x > 1), lambda: np.argwhere(a > 1)),
    }
    for name, (rg, npf) in pairs.items():
        runs = [(best(rg, 1, 1), best(npf, 1, 1)) for _ in range(rep)]
        tr, tn = min(r for r, _ in runs), min(n for _, n in runs)
        ratio = statistics.median(r / n for r, n in runs)
        print(f"  {name:22s} retrograd {tr * 1e3:8.2f}  numpy {tn * 1e3:8.2f}  "
              f"ratio {ratio:5.2f} (median of interleaved runs)")


if __name__ == "__main__":
    main()
