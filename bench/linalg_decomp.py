"""Decompositions with derivatives (issue 11): retrograd vs hand-written NumPy, with PyTorch
on one thread for reference.

* ``batched``: 256 float64 SPD matrices 8x8, ``slogdet(A).logabsdet.sum() + solve(A, B).sum()
  + cholesky(A).sum()`` forward and backward (B: 256 x 8 x 2);
* ``svd``: one 512x512 float64 matrix, the thin SVD and the backward of random cotangents
  for U, S and Vh (Townsend's formula);
* ``eigh``: one symmetric 512x512 matrix, eigh and the backward of random cotangents for
  the eigenvalues and eigenvectors;
* ``solve_inv``: one 512x512 matrix, ``solve(A, B).sum() + inv(A).sum()`` with B 512 x 8.

The NumPy contestant writes the forward and the gradients by hand (the same formulas,
NumPy's routines only; ``--share-inverse`` lets it reuse slogdet's A^-1 for solve's
gradient, a shortcut across ops).  Gradients are checked against retrograd's first; the contestants
run round-robin and the ratios are medians of per-repeat ratios.
``python bench/linalg_decomp.py`` (about a minute), ``--quick`` for a smoke run.
"""

from __future__ import annotations

import argparse
import functools
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


def _t(x):
    return x.swapaxes(-1, -2)


# ----------------------------------------------------------------- hand-written NumPy


def np_batched(a, b, share_inverse=False):
    _, logabs = np.linalg.slogdet(a)
    x = np.linalg.solve(a, b)
    low = np.linalg.cholesky(a)
    ainv = np.linalg.inv(a)
    # each derivative by its own formula, as bench/linalg.py: solve's is a transposed solve;
    # --share-inverse reuses slogdet's A^-1 for it (a shortcut across ops, which an engine
    # differentiating op by op does not take)
    gb = _t(ainv) @ np.ones_like(b) if share_inverse else np.linalg.solve(_t(a), np.ones_like(b))
    ga = _t(ainv) - gb @ _t(x)
    # Murray: gA = L^-T Phi(L^T gL) L^-1, symmetrized, with gL = ones
    phi = np.tril(_t(low) @ np.ones_like(low))
    phi = 0.5 * (phi + _t(np.tril(phi, -1)))
    linv = np.linalg.inv(low)
    ga = ga + _t(linv) @ phi @ linv
    return ga, gb


def np_svd(a, gu, gs, gvh):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    k = s.shape[-1]
    s2 = s * s
    e = s2[None, :] - s2[:, None] + np.eye(k)
    uhgu = u.T @ gu
    vhgv = vh @ gvh.T
    ret = ((uhgu - uhgu.T) * s[None, :] + s[:, None] * (vhgv - vhgv.T)) / e
    ret += np.diag(gs)
    return (u @ ret @ vh,)


def np_eigh(a, gw, gv):
    w, v = np.linalg.eigh(a)
    vhgv = v.T @ gv
    vhgv = 0.5 * (vhgv - vhgv.T)
    e = w[None, :] - w[:, None]
    np.fill_diagonal(e, 1.0)
    inner = vhgv / e
    np.fill_diagonal(inner, gw)
    return (v @ inner @ v.T,)


def np_solve_inv(a, b):
    x = np.linalg.solve(a, b)
    ainv = np.linalg.inv(a)
    gb = np.linalg.solve(a.T, np.ones_like(b))
    it = ainv.T
    return (-gb @ x.T - it @ np.ones_like(a) @ it, gb)


# ----------------------------------------------------------------- the libraries


def lib_batched(m, a, b):
    loss = (m.linalg.slogdet(a)[1].sum() + m.linalg.solve(a, b).sum()
            + m.linalg.cholesky(a).sum())
    loss.backward()


def lib_svd(m, a, gu, gs, gvh):
    u, s, vh = m.linalg.svd(a, full_matrices=False)
    m.autograd.backward([u, s, vh], [gu, gs, gvh])


def lib_eigh(m, a, gw, gv):
    w, v = m.linalg.eigh(a)
    m.autograd.backward([w, v], [gw, gv])


def lib_solve_inv(m, a, b):
    (m.linalg.solve(a, b).sum() + m.linalg.inv(a).sum()).backward()


WORKLOADS = {"batched": (np_batched, lib_batched, 2), "svd": (np_svd, lib_svd, 1),
             "eigh": (np_eigh, lib_eigh, 1), "solve_inv": (np_solve_inv, lib_solve_inv, 2)}


def make(workload, rng):
    if workload == "batched":
        x = rng.standard_normal((256, 8, 8))
        return [x @ _t(x) + 8 * np.eye(8), rng.standard_normal((256, 8, 2))]
    n = 512
    a = rng.standard_normal((n, n))
    if workload == "svd":
        return [a, rng.standard_normal((n, n)), rng.standard_normal(n),
                rng.standard_normal((n, n))]
    if workload == "eigh":
        return [a + a.T, rng.standard_normal(n), rng.standard_normal((n, n))]
    return [a + 30 * np.eye(n), rng.standard_normal((n, 8))]


def contestants(workload, arrays, share_inverse=False):
    np_fn, lib_fn, n_grad = WORKLOADS[workload]
    if share_inverse and workload == "batched":
        np_fn = functools.partial(np_batched, share_inverse=True)

    def run_lib(m):
        def go():
            leaves = [m.tensor(x, requires_grad=True) for x in arrays[:n_grad]]
            rest = [m.tensor(x) for x in arrays[n_grad:]]
            if workload in ("svd", "eigh"):
                leaves = leaves[:1]
                rest = [m.tensor(x) for x in arrays[1:]]
            lib_fn(m, *leaves, *rest)
            return [t.grad for t in leaves]
        return go

    return {"retrograd": run_lib(R), "torch1": run_lib(torch),
            "numpy": lambda: np_fn(*arrays)}


def check(runs):
    want = [np.asarray(g) for g in runs["retrograd"]()]
    for name in ("torch1", "numpy"):
        got = [np.asarray(g) for g in runs[name]()]
        for w, g in zip(want, got):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7, err_msg=name)


def bench(workload, repeats, inner, share_inverse=False):
    runs = contestants(workload, make(workload, np.random.default_rng(0)), share_inverse)
    check(runs)
    report(workload, *paired_times(runs, repeats, inner), width=9, digits=2)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--share-inverse", action="store_true",
                   help="batched: NumPy reuses A^-1 for solve's gradient")
    p.add_argument("workloads", nargs="*", default=list(WORKLOADS))
    args = p.parse_args()
    torch.set_num_threads(1)
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)  # NumPy's BLAS on one thread too, as torch's
    except ImportError:  # pragma: no cover
        pass
    for w in args.workloads:
        bench(w, 3 if args.quick else 11, 2 if args.quick else (20 if w == "batched" else 2),
              args.share_inverse)


if __name__ == "__main__":
    main()
