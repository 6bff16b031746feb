"""retrograd.func: per-sample gradients with vmap(grad), and jacrev/jacfwd, vs PyTorch.

* Per-sample gradients of the digits MLP (64-128-128-10, ReLU, cross-entropy; batch 64, the
  sklearn digits when installed, else random data of the same shape):
  ``vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)`` against a Python loop of
  ``grad`` over the 64 samples (target: vmap at least 5x faster) and against
  ``torch.func`` doing the same on one thread (target: within 2x).
* ``jacrev`` and ``jacfwd`` of a 64->64 tanh layer ``tanh(W x + b)`` against torch.func's
  (the issue's target: within 1.5x).

Each contestant's result is checked against the others before anything is timed.
Times are medians of round-robin repeats.  Run ``python bench/func.py`` (``--quick``: fewer
repeats).
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
from retrograd import func

torch.set_num_threads(1)


def _digits(batch=64):
    try:
        from sklearn.datasets import load_digits

        d = load_digits()
        x, y = d.data[:batch] / 16.0, d.target[:batch]
    except ImportError:  # pragma: no cover
        rng = np.random.default_rng(0)
        x, y = rng.uniform(0, 1, (batch, 64)), rng.integers(0, 10, batch)
    return x.astype(np.float32), y.astype(np.int64)


def _weights():
    rng = np.random.default_rng(1)
    shapes = [(128, 64), (128,), (128, 128), (128,), (10, 128), (10,)]
    return [(rng.standard_normal(s) / np.sqrt(s[-1])).astype(np.float32) for s in shapes]


def _mlp_loss(m):
    F = m.nn.functional  # noqa: N806

    def loss(p, x, y):
        h = F.relu(F.linear(x, p[0], p[1]))
        h = F.relu(F.linear(h, p[2], p[3]))
        return F.cross_entropy(F.linear(h, p[4], p[5]).unsqueeze(0), y.unsqueeze(0))

    return loss


def _round_robin(fns, repeats, inner):
    times = {k: [] for k in fns}
    for r in range(repeats):
        order = list(fns)[r % len(fns):] + list(fns)[:r % len(fns)]
        for k in order:
            t0 = time.perf_counter()
            for _ in range(inner):
                fns[k]()
            times[k].append((time.perf_counter() - t0) / inner)
    return {k: statistics.median(v) for k, v in times.items()}


def bench_per_sample(repeats):
    x, y = _digits()
    ws = _weights()
    rp = tuple(R.tensor(w) for w in ws)
    tp = tuple(torch.tensor(w) for w in ws)
    rx, ry, tx, ty = R.tensor(x), R.tensor(y), torch.tensor(x), torch.tensor(y)
    rloss, tloss = _mlp_loss(R), _mlp_loss(torch)

    def rg_vmap():
        return R.vmap(func.grad(rloss), in_dims=(None, 0, 0))(rp, rx, ry)

    def rg_loop():
        g = func.grad(rloss)
        per = [g(rp, rx[i], ry[i]) for i in range(len(y))]
        return tuple(R.stack([p[k] for p in per]) for k in range(len(rp)))

    def th_vmap():
        return torch.vmap(torch.func.grad(tloss), in_dims=(None, 0, 0))(tp, tx, ty)

    a, b, c = rg_vmap(), rg_loop(), th_vmap()
    for u, v, w in zip(a, b, c):
        np.testing.assert_allclose(u.numpy(), v.numpy(), rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(u.numpy(), w.numpy(), rtol=1e-4, atol=1e-6)
    t = _round_robin({"vmap": rg_vmap, "loop": rg_loop, "torch": th_vmap}, repeats, 3)
    return [("per-sample grads, MLP batch 64: vmap(grad)", t["vmap"], t["torch"],
             f"loop/vmap {t['loop'] / t['vmap']:.1f}x (target >= 5)",
             t["loop"] / t["vmap"] >= 5 and t["vmap"] / t["torch"] <= 2, 2.0),
            ("per-sample grads, MLP batch 64: loop of grad", t["loop"], t["torch"], "", None,
             None)]


def bench_jacobians(repeats):
    rng = np.random.default_rng(2)
    w = (rng.standard_normal((64, 64)) / 8).astype(np.float32)
    b, x = (rng.standard_normal(64).astype(np.float32) for _ in range(2))
    rows = []
    for name in ("jacrev", "jacfwd"):
        fns, outs = {}, {}
        for m, api in ((R, getattr(func, name)), (torch, getattr(torch.func, name))):
            wt, bt, xt = m.tensor(w), m.tensor(b), m.tensor(x)

            def layer(v, wt=wt, bt=bt, m=m):
                return m.tanh(wt @ v + bt)

            fns[m.__name__] = (lambda api=api, layer=layer, xt=xt: api(layer)(xt))
            outs[m.__name__] = fns[m.__name__]()
        np.testing.assert_allclose(outs["retrograd"].numpy(), outs["torch"].numpy(), rtol=1e-4,
                                   atol=1e-6)
        t = _round_robin(fns, repeats, 10)
        rows.append((f"{name} of a 64->64 tanh layer", t["retrograd"], t["torch"], "",
                     t["retrograd"] / t["torch"] <= 1.5, 1.5))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    repeats = 3 if args.quick else 9
    rows = bench_per_sample(repeats) + bench_jacobians(repeats)
    print(f"{'workload':48s} {'retrograd':>11s} {'torch 1thr':>11s} {'rg/torch':>9s} "
          f"{'target':>7s} {'met?':>5s}  note")
    for name, rg, th, note, met, target in rows:
        mark = "" if met is None else ("yes" if met else "NO")
        tgt = "" if target is None else f"<= {target}"
        print(f"{name:48s} {rg * 1e3:9.3f}ms {th * 1e3:9.3f}ms {rg / th:9.2f} {tgt:>7s} "
              f"{mark:>5s}  {note}")


if __name__ == "__main__":
    main()
