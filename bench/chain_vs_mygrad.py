"""Workload (d) of bench/run.py raced against MyGrad, the other NumPy autograd engine.

Issue 12 asks for the 1000x1000 float32 chain (4 cycles of h = h + exp(tanh(sin(h))) * 0.1,
then sum().backward()) to be ahead of MyGrad and of hand-written NumPy. MyGrad is not a
dependency of retrograd, not even of its tests: install it for this bench only
(`pip install mygrad`). Paired, interleaved repeats as bench/run.py: the ratios are medians
of per-repeat ratios. Page faults per call are measured too (temporaries that NumPy's
allocator cannot reuse show up there before they show up in time).

    OPENBLAS_NUM_THREADS=1 python bench/chain_vs_mygrad.py [--repeats 15] [--size 1000]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time

import numpy as np

try:
    import resource
except ImportError:  # not on Windows
    resource = None

try:  # run from a checkout without installing
    import retrograd as R
except ImportError:  # pragma: no cover
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
    import retrograd as R

try:
    import mygrad as mg
except ImportError:
    sys.exit("bench/chain_vs_mygrad.py races MyGrad: `pip install mygrad` first")

import torch

CYCLES = 4


def contestants(size):
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((size, size)).astype(np.float32)
    xr = R.tensor(x0, requires_grad=True)
    xt = torch.tensor(x0, requires_grad=True)
    xm = mg.tensor(x0)

    def retrograd():
        xr.grad = None
        h = xr
        for _ in range(CYCLES):
            h = h + R.exp(R.tanh(R.sin(h))) * 0.1
        h.sum().backward()
        return xr.grad.numpy()

    def torch1():
        xt.grad = None
        h = xt
        for _ in range(CYCLES):
            h = h + torch.exp(torch.tanh(torch.sin(h))) * 0.1
        h.sum().backward()
        return xt.grad.numpy()

    def mygrad():
        h = xm
        for _ in range(CYCLES):
            h = h + mg.exp(mg.tanh(mg.sin(h))) * 0.1
        h.sum().backward()
        return xm.grad

    def numpy():
        h = x0
        tape = []
        for _ in range(CYCLES):
            t = np.tanh(np.sin(h))
            e = np.exp(t)
            tape.append((h, t, e))
            h = h + e * np.float32(0.1)
        g = np.ones_like(h)
        for h_in, t, e in reversed(tape):
            g = g + g * np.float32(0.1) * e * (1 - t * t) * np.cos(h_in)
        return g

    return {"retrograd": retrograd, "numpy": numpy, "mygrad": mygrad, "torch1": torch1}


def _faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt if resource else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--size", type=int, default=1000)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    runs = contestants(args.size)
    ref = runs["retrograd"]()
    for name, fn in runs.items():  # same gradients before anything is timed
        got = fn()
        if got.dtype != ref.dtype or not np.allclose(got, ref, rtol=1e-4, atol=1e-5):
            raise AssertionError(f"{name}'s gradient ({got.dtype}) differs from retrograd's")
    names = list(runs)
    times = {n: [] for n in names}
    faults = {n: [] for n in names}
    for r in range(args.repeats):
        shift = r % len(names)
        for n in names[shift:] + names[:shift]:
            gc.collect()
            gc.disable()
            f0, t0 = _faults(), time.perf_counter()
            runs[n]()
            times[n].append(time.perf_counter() - t0)
            faults[n].append(_faults() - f0)
            gc.enable()
    print(f"(d) {CYCLES}x[sin,tanh,exp,*,+] on {args.size}x{args.size} float32, "
          f"{args.repeats} paired repeats, mygrad {mg.__version__}")
    for n in names:
        ratio = statistics.median(a / b for a, b in zip(times["retrograd"], times[n]))
        print(f"  {n:10s} {statistics.median(times[n]) * 1e3:8.2f} ms  "
              f"page faults {statistics.median(faults[n]):7.0f}  rg/{n} {ratio:.2f}")


if __name__ == "__main__":
    main()
