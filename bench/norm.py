"""batch_norm, layer_norm and group_norm on a (32, 64, 32, 32) float32 input: retrograd vs
hand-written NumPy (the target: within 1.3x, forward and forward+backward), with PyTorch on
one thread for reference.

Each workload is the functional call with a weight and a bias (and running statistics for
batch_norm, in training mode), and a NumPy forward+backward written by hand: the
statistics, the normalized input kept from the forward, the three gradients.  Gradients are
checked against retrograd's before timing; the contestants run interleaved (round-robin),
and the ratios are medians of per-repeat ratios.

Run ``python bench/norm.py`` (about a minute), ``--quick`` for a smoke run, or
``--only layer_norm`` for some.  NumPy's BLAS runs on one thread (``--blas-threads``), as in
bench/run.py: layer_norm's backward does a matrix-vector product, and OpenBLAS's
busy-waiting threads fight torch's for the cores of a small machine.  ``--clock cpu``
times this process's CPU instead of the wall (for a machine shared with other work).
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import statistics
import sys
import time

import numpy as np

try:  # run from a checkout without installing
    import retrograd as R
except ImportError:  # pragma: no cover
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
    import retrograd as R

import torch

SHAPE = (32, 64, 32, 32)
EPS = 1e-5
GROUPS = 8


# --------------------------------------------------------------------------- NumPy by hand


def _sum(a, axes):
    # (0, 2) of (N, C, L) one axis at a time: NumPy's reduction over both at once is ~20x
    # slower (a fair hand-written NumPy knows this, as retrograd does)
    if axes == (0, 2):
        return a.sum(axis=2, keepdims=True).sum(axis=0, keepdims=True)
    return a.sum(axis=axes, keepdims=True)


def _normalize(xs, axes):
    n = math.prod(xs.shape[a] for a in axes)  # (a Python int: float32 stays float32)
    mean = _sum(xs, axes) / n
    xc = xs - mean
    var = _sum(xc * xc, axes) / n
    rstd = 1 / np.sqrt(var + EPS)
    xc *= rstd
    return xc, rstd  # (xc is now xhat)


def _dx(gx, xhat, rstd, axes):
    """rstd * (gx - mean(gx) - xhat * mean(gx * xhat)), over the statistics axes."""
    n = math.prod(gx.shape[a] for a in axes)
    t = xhat * (_sum(gx * xhat, axes) / n)
    t += _sum(gx, axes) / n
    dx = gx - t
    dx *= rstd
    return dx


def np_batch_norm(x, w, b, g=None):
    n, c = x.shape[:2]
    xs = x.reshape(n, c, -1)
    xhat, rstd = _normalize(xs, (0, 2))
    y = xhat * w[:, None] + b[:, None]
    if g is None:
        return y
    gs = g.reshape(xs.shape)
    db = _sum(gs, (0, 2))[0, :, 0]
    dw = _sum(gs * xhat, (0, 2))[0, :, 0]
    m = n * xs.shape[2]
    # (the batch_norm special case: the means of gx are w times the sums above)
    dx = (gs - xhat * (dw / m)[:, None] - (db / m)[:, None]) * (w[:, None] * rstd)
    return dx.reshape(x.shape), dw, db


def np_layer_norm(x, w, b, g=None):
    k = x.shape[-1]
    xs = x.reshape(-1, k)
    xhat, rstd = _normalize(xs, (1,))
    y = xhat * w + b
    if g is None:
        return y
    gs = g.reshape(xs.shape)
    dw = (gs * xhat).sum(0)
    db = gs.sum(0)
    return _dx(gs * w, xhat, rstd, (1,)).reshape(x.shape), dw, db


def np_group_norm(x, w, b, g=None):
    n, c = x.shape[:2]
    xs = x.reshape(n, GROUPS, -1)
    xhat, rstd = _normalize(xs, (2,))
    xa = xhat.reshape(n, c, -1)
    y = xa * w[:, None] + b[:, None]
    if g is None:
        return y
    ga = g.reshape(n, c, -1)
    dw = _sum(ga * xa, (0, 2))[0, :, 0]
    db = _sum(ga, (0, 2))[0, :, 0]
    gx = (ga * w[:, None]).reshape(xs.shape)
    return _dx(gx, xhat, rstd, (2,)).reshape(x.shape), dw, db


# (name, call on m = retrograd or torch with x, w, b; NumPy; weight/bias size)
OPS = [
    ("batch_norm", lambda m, x, w, b: m.nn.functional.batch_norm(
        x, m.zeros(SHAPE[1]), m.ones(SHAPE[1]), w, b, training=True), np_batch_norm, SHAPE[1]),
    ("layer_norm", lambda m, x, w, b: m.nn.functional.layer_norm(x, (SHAPE[-1],), w, b),
     np_layer_norm, SHAPE[-1]),
    ("group_norm", lambda m, x, w, b: m.nn.functional.group_norm(x, GROUPS, w, b),
     np_group_norm, SHAPE[1]),
]


def _contestants(call, np_fn, x, w, b, g):
    def lib_fwd(m):
        return lambda: call(m, m.tensor(x) if m is R else torch.from_numpy(x),
                            *(m.tensor(v) if m is R else torch.from_numpy(v) for v in (w, b)))

    def lib_both(m):
        def run():
            wrap = R.tensor if m is R else torch.from_numpy
            ts = [wrap(v).requires_grad_(True) for v in (x, w, b)]
            call(m, *ts).backward(wrap(g))
            return [t.grad for t in ts]
        return run

    return {"fwd": {"retrograd": lib_fwd(R), "torch1": lib_fwd(torch),
                    "numpy": lambda: np_fn(x, w, b)},
            "fwd+bwd": {"retrograd": lib_both(R), "torch1": lib_both(torch),
                        "numpy": lambda: np_fn(x, w, b, g)}}


_clock = time.perf_counter


def measure(call, np_fn, c, repeats, rng):
    x = (rng.standard_normal(SHAPE) * 2 + 0.5).astype(np.float32)
    w = rng.uniform(0.5, 1.5, c).astype(np.float32)
    b = rng.standard_normal(c).astype(np.float32)
    g = rng.standard_normal(SHAPE).astype(np.float32)
    cont = _contestants(call, np_fn, x, w, b, g)
    want = [np.asarray(t.numpy(), np.float64) for t in cont["fwd+bwd"]["retrograd"]()]
    for who in ("torch1", "numpy"):
        got = cont["fwd+bwd"][who]()
        for name, gw, gg in zip(("x", "weight", "bias"), want, got):
            gg = np.asarray(gg.numpy() if hasattr(gg, "numpy") else gg, np.float64)
            scale = max(np.abs(gw).max(), 1e-30)
            if not np.allclose(gg / scale, gw / scale, atol=2e-3):
                print(f"  ! {who}'s gradient of {name} differs from retrograd's",
                      file=sys.stderr)
    result = {}
    for phase, fns in cont.items():
        times = {who: [] for who in fns}
        order = list(fns)
        for rep in range(repeats):
            gc.collect()
            for who in order[rep % 3:] + order[:rep % 3]:  # rotate who goes first
                t0 = _clock()
                fns[who]()
                times[who].append(_clock() - t0)
        ratio = {who: statistics.median(r / o for r, o in zip(times["retrograd"], times[who]))
                 for who in ("numpy", "torch1")}
        result[phase] = (statistics.median(times["retrograd"]), ratio)
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 repeats (a smoke run)")
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--only", default="", help="comma-separated op names")
    parser.add_argument("--blas-threads", type=int, default=1,
                        help="threads for NumPy's BLAS (0: leave the library's default)")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    args = parser.parse_args(argv)
    global _clock
    _clock = time.perf_counter if args.clock == "wall" else time.process_time
    if args.blas_threads:
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:
            print("(threadpoolctl is not installed: NumPy's BLAS keeps its default threads)",
                  file=sys.stderr)
        else:
            threadpool_limits(args.blas_threads, user_api="blas")
    torch.set_num_threads(1)
    repeats = 3 if args.quick else args.repeats
    only = set(filter(None, args.only.split(",")))
    rng = np.random.default_rng(0)
    print(f"{SHAPE} float32, median of {repeats}, {args.clock} clock, BLAS threads "
          f"{args.blas_threads or 'default'}; ratio = retrograd time / other's "
          "(target: vs numpy <= 1.3)")
    print(f"{'op':12s} {'fwd ms':>8s} {'/numpy':>7s} {'/torch1':>8s}   "
          f"{'fwd+bwd ms':>10s} {'/numpy':>7s} {'/torch1':>8s}")
    over = []
    for name, call, np_fn, c in OPS:
        if only and name not in only:
            continue
        (tf, rf), (tb, rb) = measure(call, np_fn, c, repeats, rng).values()
        flag = " *" if max(rf["numpy"], rb["numpy"]) > 1.3 else ""
        print(f"{name:12s} {tf * 1e3:8.1f} {rf['numpy']:7.2f} {rf['torch1']:8.2f}   "
              f"{tb * 1e3:10.1f} {rb['numpy']:7.2f} {rb['torch1']:8.2f}{flag}", flush=True)
        if flag:
            over.append(name)
    print(f"over 1.3x NumPy (*): {', '.join(over) or 'none'}")


if __name__ == "__main__":
    main()
