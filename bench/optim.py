"""Optimizer steps on 1M float32 parameters (10 tensors of 100k): retrograd vs the same
update written in plain NumPy (the target: within 1.3x) and PyTorch on one thread.

The NumPy contestant is what one would write by hand for speed: in-place ufuncs with
``out=`` and preallocated work buffers shared by the tensors (all of one size here),
PyTorch's order of operations.
Every contestant starts from the same parameters and gradients; after the warm-up the
parameters are compared (allclose) before anything is timed.  Contestants run interleaved
(round-robin) and the ratios are medians of per-repeat ratios.

Run ``python bench/optim.py`` (about half a minute), ``--quick`` for a smoke run, or
``--only adam,sgd`` for some optimizers.
"""

from __future__ import annotations

import argparse
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

TENSORS, SIZE = 10, 100_000
LR, BETA1, BETA2, EPS, MOMENTUM = 1e-3, 0.9, 0.999, 1e-8, 0.9


# --------------------------------------------------------------------------- NumPy by hand
class NumpyAdam:
    def __init__(self, params):
        self.params = params
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        # two work buffers shared by all tensors (they stay in cache)
        self.tmp = [np.empty_like(params[0])] * len(params)
        self.tmp2 = [np.empty_like(params[0])] * len(params)
        self.t = 0

    def step(self, grads):
        self.t += 1
        step_size = LR / (1 - BETA1 ** self.t)
        bc2_sqrt = (1 - BETA2 ** self.t) ** 0.5
        for p, g, m, v, tmp, tmp2 in zip(self.params, grads, self.m, self.v, self.tmp,
                                         self.tmp2):
            np.subtract(g, m, out=tmp)           # m += (1 - beta1) * (g - m)
            tmp *= 1 - BETA1
            m += tmp
            v *= BETA2                           # v = beta2 * v + (1 - beta2) * g * g
            np.multiply(g, 1 - BETA2, out=tmp)
            tmp *= g
            v += tmp
            np.sqrt(v, out=tmp)                  # denom = sqrt(v) / bc2_sqrt + eps
            tmp /= bc2_sqrt
            tmp += EPS
            np.multiply(m, -step_size, out=tmp2)  # p += -step_size * m / denom
            tmp2 /= tmp
            p += tmp2


class NumpySGD:
    def __init__(self, params):
        self.params = params
        self.buf = [None] * len(params)
        self.tmp = [np.empty_like(params[0])] * len(params)

    def step(self, grads):
        for i, (p, g, tmp) in enumerate(zip(self.params, grads, self.tmp)):
            if self.buf[i] is None:
                self.buf[i] = g.copy()
            else:
                self.buf[i] *= MOMENTUM
                self.buf[i] += g
            np.multiply(self.buf[i], -LR, out=tmp)
            p += tmp


WORKLOADS = {
    "adam": (NumpyAdam, lambda lib, ps: lib.optim.Adam(ps, lr=LR, betas=(BETA1, BETA2),
                                                       eps=EPS)),
    "sgd": (NumpySGD, lambda lib, ps: lib.optim.SGD(ps, lr=LR, momentum=MOMENTUM)),
}


def setup(name):
    rng = np.random.default_rng(0)
    start = [rng.standard_normal(SIZE).astype(np.float32) for _ in range(TENSORS)]
    grads = [rng.standard_normal(SIZE).astype(np.float32) for _ in range(TENSORS)]
    np_cls, make = WORKLOADS[name]

    ours = [R.tensor(s.copy(), requires_grad=True) for s in start]
    for p, g in zip(ours, grads):
        p.grad = R.tensor(g)
    opt = make(R, ours)

    theirs = [torch.tensor(s.copy(), requires_grad=True) for s in start]
    for p, g in zip(theirs, grads):
        p.grad = torch.tensor(g)
    topt = make(torch, theirs)

    by_hand = np_cls([s.copy() for s in start])

    contestants = {
        "retrograd": (opt.step, lambda: [p.detach().numpy() for p in ours]),
        "torch1": (topt.step, lambda: [p.detach().numpy() for p in theirs]),
        "numpy": (lambda: by_hand.step(grads), lambda: by_hand.params),
    }
    return contestants


def check(contestants):
    ref = contestants["retrograd"][1]()
    for who, (_, values) in contestants.items():
        for a, b in zip(ref, values()):
            if not np.allclose(a, b, rtol=1e-5, atol=1e-6):
                raise SystemExit(f"{who} disagrees with retrograd: max diff "
                                 f"{np.abs(a - b).max()}")


def measure(contestants, repeats, inner):
    times = {who: [] for who in contestants}
    for _ in range(repeats):
        for who, (step, _) in contestants.items():
            t0 = time.perf_counter()
            for _ in range(inner):
                step()
            times[who].append((time.perf_counter() - t0) / inner)
    return times


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run (rough numbers)")
    parser.add_argument("--only", default=",".join(WORKLOADS), help="comma-separated names")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    repeats, inner = (3, 2) if args.quick else (15, 5)
    print(f"{TENSORS} float32 tensors of {SIZE} (1M parameters); ms per step, median of "
          f"{repeats} x {inner}")
    print(f"{'optimizer':10s} {'retrograd':>10s} {'numpy':>10s} {'torch1':>10s} "
          f"{'rg/numpy':>9s} {'rg/torch1':>10s}")
    for name in args.only.split(","):
        contestants = setup(name)
        for step, _ in contestants.values():  # warm-up, also the state's first step
            step()
        check(contestants)
        times = measure(contestants, repeats, inner)
        med = {who: statistics.median(ts) * 1e3 for who, ts in times.items()}
        vs_np = statistics.median(a / b for a, b in zip(times["retrograd"], times["numpy"]))
        vs_t = statistics.median(a / b for a, b in zip(times["retrograd"], times["torch1"]))
        target = "ok" if vs_np <= 1.3 else "MISSED (target 1.3)"
        print(f"{name:10s} {med['retrograd']:10.2f} {med['numpy']:10.2f} {med['torch1']:10.2f} "
              f"{vs_np:9.2f} {vs_t:10.2f}  {target}")


if __name__ == "__main__":
    main()
