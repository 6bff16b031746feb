"""Linear algebra with derivatives (issue 11): retrograd vs hand-written NumPy, with PyTorch
on one thread for reference.

* ``batched``: 256 float64 matrices 8x8, ``slogdet(A).logabsdet.sum() + solve(A, B).sum()``
  forward and backward (B: 256 x 8 x 2);
* ``large``: one 512x512 float64 matrix, ``solve(A, B).sum() + inv(A).sum()`` forward and
  backward (B: 512 x 8).

The NumPy contestant writes the forward and the gradients by hand (A^-T for log|det|, a
transposed solve for solve, -A^-T g A^-T for inv).  Gradients are checked against
retrograd's first; the contestants run round-robin and the ratios are medians of
per-repeat ratios.  ``python bench/linalg.py`` (about 20 s), ``--quick`` for a smoke run.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

try:  # run from a checkout without installing
    import retrograd as R
except ImportError:  # pragma: no cover
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
    import retrograd as R

import torch
from _paired import paired_times, report  # (bench/ is on sys.path: run as a script)


def np_batched(a, b):
    _, logabs = np.linalg.slogdet(a)
    x = np.linalg.solve(a, b)
    at = a.swapaxes(-1, -2)
    gb = np.linalg.solve(at, np.ones_like(b))
    ga = np.linalg.inv(at) - gb @ x.swapaxes(-1, -2)
    return logabs.sum() + x.sum(), ga, gb


def np_large(a, b):
    x = np.linalg.solve(a, b)
    ainv = np.linalg.inv(a)
    gb = np.linalg.solve(a.T, np.ones_like(b))
    it = ainv.T
    ga = -gb @ x.T - it @ np.ones_like(a) @ it
    return x.sum() + ainv.sum(), ga, gb


def lib_batched(m, a, b):
    loss = m.linalg.slogdet(a)[1].sum() + m.linalg.solve(a, b).sum()
    loss.backward()
    return loss


def lib_large(m, a, b):
    loss = m.linalg.solve(a, b).sum() + m.linalg.inv(a).sum()
    loss.backward()
    return loss


def make(workload, rng):
    if workload == "batched":
        a = rng.standard_normal((256, 8, 8)) + 4 * np.eye(8)
        b = rng.standard_normal((256, 8, 2))
    else:
        a = rng.standard_normal((512, 512)) + 30 * np.eye(512)
        b = rng.standard_normal((512, 8))
    return a, b


def contestants(workload, a, b):
    np_fn = np_batched if workload == "batched" else np_large
    lib_fn = lib_batched if workload == "batched" else lib_large

    def run_lib(m):
        def go():
            ta = m.tensor(a, requires_grad=True)
            tb = m.tensor(b, requires_grad=True)
            lib_fn(m, ta, tb)
            return ta.grad, tb.grad
        return go

    return {"retrograd": run_lib(R), "torch1": run_lib(torch),
            "numpy": lambda: np_fn(a, b)[1:]}


def check(runs):
    want = [np.asarray(g) for g in runs["retrograd"]()]
    for name in ("torch1", "numpy"):
        got = [np.asarray(g) for g in runs[name]()]
        for w, g in zip(want, got):
            np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-9, err_msg=name)


def bench(workload, repeats, inner):
    runs = contestants(workload, *make(workload, np.random.default_rng(0)))
    check(runs)
    report(workload, *paired_times(runs, repeats, inner), width=8, digits=3)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()
    torch.set_num_threads(1)
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)  # NumPy's BLAS on one thread too, as torch's
    except ImportError:  # pragma: no cover
        pass
    repeats = 3 if args.quick else 15
    bench("batched", repeats, 2 if args.quick else 20)
    bench("large", repeats, 1 if args.quick else 3)


if __name__ == "__main__":
    main()
