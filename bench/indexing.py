"""Scatter ops on a 1000x1000 float32 input: retrograd vs the equivalent NumPy calls.

For each op, retrograd's forward (nothing recorded) and forward + backward (inputs requiring
grad, ``out.backward(g)``), each timed against the same computation written directly in
NumPy, interleaved, as the median of paired ratios (``np.add.at``, ``np.put_along_axis``,
``np.maximum.at``, fancy indexing).  Target: every ratio within 1.3.

Run: ``PYTHONPATH=src python bench/indexing.py`` (about half a minute).
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import numpy as np

try:
    import retrograd as R
except ImportError:  # pragma: no cover
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
    import retrograd as R

N = 1000
rng = np.random.default_rng(0)
X = rng.standard_normal((N, N)).astype(np.float32)
S = rng.standard_normal((N, N)).astype(np.float32)
G = rng.standard_normal((N, N)).astype(np.float32)
IDX = rng.integers(0, N, (N, N))  # along dim 0, with repeats
PERM = np.argsort(rng.random((N, N)), axis=0)  # along dim 0, no repeats (scatter's overwrite)
ROWS = rng.integers(0, N, N)  # index_add along dim 0
COLS = np.arange(N)[None, :]


def _once(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def paired_ratio(mine, ref, repeat=21):
    """Median over repeats of mine's time / ref's time in the same repeat (interleaved, so
    a machine that slows down mid-run slows both: as bench/run.py)."""
    mine()
    ref()
    return statistics.median(_once(mine) / _once(ref) for _ in range(repeat))


# ---- NumPy, by hand


def np_scatter_add(backward):
    out = X.copy()
    np.add.at(out, (IDX, COLS), S)
    if backward:
        return out, G.copy(), G[IDX, COLS]
    return out


def np_scatter(backward):
    out = X.copy()
    np.put_along_axis(out, PERM, S, 0)
    if backward:
        gx = G.copy()
        np.put_along_axis(gx, PERM, 0, 0)
        return out, gx, np.take_along_axis(G, PERM, 0)
    return out


def np_scatter_amax(backward):
    out = X.copy()
    np.maximum.at(out, (IDX, COLS), S)
    if backward:  # ties shared evenly, as retrograd's / PyTorch's rule
        self_is = (X == out).astype(np.float32)
        src_is = (S == out[IDX, COLS]).astype(np.float32)
        n = self_is.copy()
        np.add.at(n, (IDX, COLS), src_is)
        gd = G / n
        return out, gd * self_is, gd[IDX, COLS] * src_is
    return out


def np_index_add(backward):
    out = X.copy()
    np.add.at(out, ROWS, S)
    if backward:
        return out, G.copy(), G[ROWS]
    return out


def np_gather(backward):
    out = np.take_along_axis(X, IDX, 0)
    if backward:
        gx = np.zeros_like(X)
        np.add.at(gx, (IDX, COLS), G)
        return out, gx
    return out


# ---- retrograd


def rg(call):
    # the tensors are made once (NumPy's side does not pay for making its arrays either)
    x, s, g = R.tensor(X), R.tensor(S), R.tensor(G)
    xg, sg = R.tensor(X).requires_grad_(True), R.tensor(S).requires_grad_(True)

    def run(backward):
        if not backward:
            return call(x, s)
        xg.grad = sg.grad = None
        out = call(xg, sg)
        out.backward(g)
        return out

    return run


ridx, rperm, rrows = R.tensor(IDX), R.tensor(PERM), R.tensor(ROWS)
CASES = {
    "scatter_add": (rg(lambda x, s: x.scatter_add(0, ridx, s)), np_scatter_add),
    "scatter": (rg(lambda x, s: x.scatter(0, rperm, s)), np_scatter),
    "scatter_reduce amax": (rg(lambda x, s: x.scatter_reduce(0, ridx, s, "amax")),
                            np_scatter_amax),
    "index_add": (rg(lambda x, s: x.index_add(0, rrows, s)), np_index_add),
    "gather": (rg(lambda x, s: x.gather(0, ridx)), np_gather),
}


def main():
    print(f"{'op (1000x1000 float32)':24s} {'fwd ratio':>10s} {'fwd+bwd ratio':>14s}")
    for name, (mine, ref) in CASES.items():
        f = paired_ratio(lambda m=mine: m(False), lambda r=ref: r(False))
        b = paired_ratio(lambda m=mine: m(True), lambda r=ref: r(True))
        print(f"{name:24s} {f:10.2f} {b:14.2f}")


if __name__ == "__main__":
    main()
