"""max_pool2d and avg_pool2d (2x2 stride 2 and 3x3 stride 2) on a (32, 64, 32, 32) float32
input, forward and forward+backward: retrograd vs hand-written NumPy (the target: within
1.3x) and PyTorch on one thread.

The NumPy contestants are what one would write without an autodiff library: a loop over the
kernel offsets (4 or 9), each a strided slice of the input, keeping the argmax offset for
the max-pool's backward, which adds the gradient back slice by slice.  (For the 2x2 windows
that tile the input, a reshape to (N, C, H/2, 2, W/2, 2) and a reduction over the window
axes is the other obvious way; it measured 1.5x (max) to 5x (mean) slower than the loop,
so the loop is the bar.)  Each contestant's gradient is checked
against retrograd's before timing; the contestants run interleaved (round-robin) and the
ratios are medians of per-repeat ratios.

Run ``python bench/pooling.py`` (about a minute), ``--quick`` for a smoke run, ``--cpu``
to time CPU seconds instead of wall time (steadier when other processes share the cores).
"""

from __future__ import annotations

import argparse
import gc
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


# --------------------------------------------------------------------------- NumPy by hand


def _offset_slices(k, s, out):
    for i in range(k):
        for j in range(k):
            yield (Ellipsis, slice(i, i + (out[0] - 1) * s + 1, s),
                   slice(j, j + (out[1] - 1) * s + 1, s))


def _out(x, k, s):
    return ((x.shape[2] - k) // s + 1, (x.shape[3] - k) // s + 1)


def np_max_loop(x, g, k, s):
    """Overlapping windows: one strided slice per kernel offset, the argmax offset kept."""
    out = _out(x, k, s)
    slices = list(_offset_slices(k, s, out))
    best = x[slices[0]].copy()
    arg = np.zeros(best.shape, np.int8)
    mask = np.empty(best.shape, bool)
    for i, sl in enumerate(slices[1:], 1):
        v = x[sl]
        np.greater(v, best, out=mask)
        arg = np.where(mask, np.int8(i), arg)
        np.maximum(best, v, out=best)
    if g is None:
        return best
    gx = np.zeros_like(x)
    for i, sl in enumerate(slices):
        gx[sl] += np.where(arg == i, g, 0)
    return best, gx


def np_avg_loop(x, g, k, s):
    out_shape = _out(x, k, s)
    slices = list(_offset_slices(k, s, out_shape))
    total = x[slices[0]].copy()
    for sl in slices[1:]:
        total += x[sl]
    total /= k * k
    if g is None:
        return total
    gx = np.zeros_like(x)
    share = g / (k * k)
    for sl in slices:
        gx[sl] += share
    return total, gx


# (name, call on m = retrograd or torch, NumPy forward (+ backward with a gradient))
OPS = [
    ("max_pool2d 2x2 s2", lambda m, x: m.nn.functional.max_pool2d(x, 2, 2),
     lambda x, g: np_max_loop(x, g, 2, 2)),
    ("max_pool2d 3x3 s2", lambda m, x: m.nn.functional.max_pool2d(x, 3, 2),
     lambda x, g: np_max_loop(x, g, 3, 2)),
    ("avg_pool2d 2x2 s2", lambda m, x: m.nn.functional.avg_pool2d(x, 2, 2),
     lambda x, g: np_avg_loop(x, g, 2, 2)),
    ("avg_pool2d 3x3 s2", lambda m, x: m.nn.functional.avg_pool2d(x, 3, 2),
     lambda x, g: np_avg_loop(x, g, 3, 2)),
]


def _contestants(call, np_fn, x, g):
    def rg_fwd():
        return call(R, R.tensor(x))

    def rg_both():
        t = R.tensor(x, requires_grad=True)
        call(R, t).backward(R.tensor(g))
        return t.grad.numpy()

    def th_fwd():
        return call(torch, torch.from_numpy(x))

    def th_both():
        t = torch.from_numpy(x).requires_grad_(True)
        call(torch, t).backward(torch.from_numpy(g))
        return t.grad.numpy()

    return {"fwd": {"retrograd": rg_fwd, "torch1": th_fwd, "numpy": lambda: np_fn(x, None)},
            "fwd+bwd": {"retrograd": rg_both, "torch1": th_both,
                        "numpy": lambda: np_fn(x, g)[1]}}


def measure(call, np_fn, repeats, rng, clock=time.perf_counter):
    # distinct values: no ties, so every contestant sends the gradient to the same element
    x = rng.permutation(np.arange(np.prod(SHAPE), dtype=np.float32)).reshape(SHAPE) / 1e3
    out = call(torch, torch.from_numpy(x))
    g = rng.standard_normal(tuple(out.shape)).astype(np.float32)
    cont = _contestants(call, np_fn, x, g)
    want = cont["fwd+bwd"]["retrograd"]()
    for who in ("torch1", "numpy"):
        got = np.asarray(cont["fwd+bwd"][who]())
        if not np.allclose(got, want, rtol=1e-5, atol=1e-6):
            raise SystemExit(f"{who}'s gradient differs from retrograd's; not timing")
    result = {}
    for phase, fns in cont.items():
        times = {who: [] for who in fns}
        order = list(fns)
        for rep in range(repeats):
            gc.collect()
            gc.disable()
            for who in order[rep % 3:] + order[:rep % 3]:  # rotate who goes first
                t0 = clock()
                fns[who]()
                times[who].append(clock() - t0)
            gc.enable()
        ratio = {who: statistics.median(r / o for r, o in zip(times["retrograd"], times[who]))
                 for who in ("numpy", "torch1")}
        result[phase] = ({who: statistics.median(t) for who, t in times.items()}, ratio)
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 repeats (a smoke run)")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--cpu", action="store_true",
                        help="time with process_time (CPU seconds: steadier on a shared "
                        "machine; every contestant runs on one thread)")
    args = parser.parse_args(argv)
    clock = time.process_time if args.cpu else time.perf_counter
    torch.set_num_threads(1)
    repeats = 3 if args.quick else args.repeats
    rng = np.random.default_rng(0)
    print(f"{SHAPE} float32, median of {repeats} ({'CPU' if args.cpu else 'wall'} time); "
          "ratio = retrograd time / other's (target: vs numpy <= 1.3)")
    print(f"{'op':18s} {'phase':8s} {'rg ms':>7s} {'np ms':>7s} {'th1 ms':>7s} "
          f"{'/numpy':>7s} {'/torch1':>8s}")
    missed = []
    for name, call, np_fn in OPS:
        for phase, (ms, ratio) in measure(call, np_fn, repeats, rng, clock).items():
            print(f"{name:18s} {phase:8s} {ms['retrograd'] * 1e3:7.2f} {ms['numpy'] * 1e3:7.2f} "
                  f"{ms['torch1'] * 1e3:7.2f} {ratio['numpy']:7.2f} {ratio['torch1']:8.2f}")
            if ratio["numpy"] > 1.3:
                missed.append(f"{name} {phase}")
    print("all within 1.3x of NumPy" if not missed else f"over 1.3x of NumPy: {missed}")


if __name__ == "__main__":
    main()
