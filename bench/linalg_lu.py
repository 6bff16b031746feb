"""The LU family and matrix functions with derivatives (issue 11): retrograd vs hand-written
NumPy/SciPy, with PyTorch on one thread for reference.

* ``lu_batched``: 256 float64 matrices 8x8, ``lu_solve(*lu_factor(A), B).sum()`` forward and
  backward (B: 256 x 8 x 2);
* ``lu_large``: one 512x512 matrix, the same with B 512 x 8;
* ``chol_batched``: 256 matrices 8x8, ``cholesky_solve(B, L).sum() +
  cholesky_inverse(L).sum()`` forward and backward, L a Cholesky factor;
* ``expm_batched``: 256 matrices 8x8, ``matrix_exp(A).sum()`` forward and backward;
* ``expm_large``: one 128x128 matrix, the same.

The NumPy contestant writes forward and gradients by hand: for lu_solve, ``numpy.linalg.solve``
and its transposed solve (NumPy has no LU: the gradient of A through the factorisation is
the solve's, so this contestant skips the LU algebra that retrograd and PyTorch do: two
records, each with its own derivative, four more triangular solves); for the Cholesky ops
the same formulas as PyTorch's; for matrix_exp
``scipy.linalg.expm`` of the matrix and of the block matrix [[A^T, G], [0, A^T]].  Gradients
are checked against retrograd's first; the contestants run round-robin and the ratios are
medians of per-repeat ratios.  ``python bench/linalg_lu.py`` (about 30 s), ``--quick`` for a
smoke run.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import scipy.linalg

try:  # run from a checkout without installing
    import retrograd as R
except ImportError:  # pragma: no cover
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
    import retrograd as R

import torch
from _paired import paired_times, report  # (bench/ is on sys.path: run as a script)


# ----------------------------------------------------------------- hand-written NumPy


def np_lu(a, b):
    x = np.linalg.solve(a, b)
    gb = np.linalg.solve(a.swapaxes(-1, -2), np.ones_like(b))
    return -gb @ x.swapaxes(-1, -2), gb


def np_chol(b, c):
    low = np.tril(c)
    x = np.linalg.solve(low @ low.swapaxes(-1, -2), b)  # (as a user without potrs would)
    inv_a = np.linalg.inv(low @ low.swapaxes(-1, -2))
    gb = np.linalg.solve(low @ low.swapaxes(-1, -2), np.ones_like(b))
    common = gb @ x.swapaxes(-1, -2)
    gc1 = -(common + common.swapaxes(-1, -2)) @ c
    ones = np.ones_like(c)
    gc2 = -(inv_a @ (ones + ones.swapaxes(-1, -2)) @ inv_a) @ c
    return gb, np.tril(gc1 + gc2)


def np_expm(a):
    n = a.shape[-1]
    at = a.swapaxes(-1, -2)
    big = np.zeros(a.shape[:-2] + (2 * n, 2 * n))
    big[..., :n, :n] = at
    big[..., n:, n:] = at
    big[..., :n, n:] = 1.0
    scipy.linalg.expm(a)
    return (scipy.linalg.expm(big)[..., :n, n:],)


# ----------------------------------------------------------------- the libraries


def lib_lu(m, a, b):
    loss = m.linalg.lu_solve(*m.linalg.lu_factor(a), b).sum()
    loss.backward()


def lib_chol(m, b, c):
    low = m.tril(c)
    loss = m.cholesky_solve(b, low).sum() + m.cholesky_inverse(low).sum()
    loss.backward()


def lib_expm(m, a):
    m.linalg.matrix_exp(a).sum().backward()


def make(workload, rng):
    if workload == "lu_batched":
        return (rng.standard_normal((256, 8, 8)) + 4 * np.eye(8),
                rng.standard_normal((256, 8, 2)))
    if workload == "lu_large":
        return rng.standard_normal((512, 512)) + 30 * np.eye(512), rng.standard_normal((512, 8))
    if workload == "chol_batched":
        c = np.tril(rng.standard_normal((256, 8, 8))) + 3 * np.eye(8)
        return rng.standard_normal((256, 8, 2)), c
    if workload == "expm_batched":
        return (rng.standard_normal((256, 8, 8)),)
    return (rng.standard_normal((128, 128)) / 8,)


FUNCTIONS = {"lu": (np_lu, lib_lu), "chol": (np_chol, lib_chol), "expm": (np_expm, lib_expm)}


def contestants(workload, arrays):
    np_fn, lib_fn = FUNCTIONS[workload.split("_")[0]]

    def run_lib(m):
        def go():
            ts = [m.tensor(x, requires_grad=True) for x in arrays]
            lib_fn(m, *ts)
            return [t.grad for t in ts]
        return go

    return {"retrograd": run_lib(R), "torch1": run_lib(torch), "numpy": lambda: np_fn(*arrays)}


def check(runs):
    want = [np.asarray(g) for g in runs["retrograd"]()]
    for name in ("torch1", "numpy"):
        got = [np.asarray(g) for g in runs[name]()]
        for w, g in zip(want, got):
            np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-9, err_msg=name)


def bench(workload, repeats, inner):
    runs = contestants(workload, make(workload, np.random.default_rng(0)))
    check(runs)
    report(workload, *paired_times(runs, repeats, inner), width=12, digits=3)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--only", nargs="*", help="workload names")
    args = p.parse_args()
    torch.set_num_threads(1)
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)  # NumPy's BLAS on one thread too, as torch's
    except ImportError:  # pragma: no cover
        pass
    repeats = 3 if args.quick else 11
    for workload, inner in (("lu_batched", 10), ("lu_large", 2), ("chol_batched", 10),
                            ("expm_batched", 5), ("expm_large", 2)):
        if not args.only or workload in args.only:
            bench(workload, repeats, 1 if args.quick else inner)


if __name__ == "__main__":
    main()
