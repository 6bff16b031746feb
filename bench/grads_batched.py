"""``autograd.grad(..., is_grads_batched=True)``: one batched backward vs the per-sample loop.

The Jacobian of a 64->64 tanh MLP's output (``tanh(W2 tanh(W1 x + b1) + b2)``, x: (64,),
float32) with respect to its input and weights, by ``is_grads_batched=True`` with the
64x64 identity as the batch of grad_outputs.  Contestants:

* batched: retrograd's one backward pass with BatchedTensor gradients (issue 10);
* loop: the old implementation, one full backward per row of the identity
  (``retrograd.autograd.frontend._batched_loop``), kept as the reference;
* torch: ``torch.autograd.grad(..., is_grads_batched=True)`` on one thread (vmap).

All three results are checked equal before timing; times are medians of round-robin
repeats.  Run ``python bench/grads_batched.py`` (``--quick``: fewer repeats).
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
from retrograd.autograd import frontend

torch.set_num_threads(1)
N = 64


def _arrays():
    rng = np.random.default_rng(0)
    shapes = [(N,), (N, N), (N,), (N, N), (N,)]
    return [(rng.standard_normal(s) / np.sqrt(s[-1])).astype(np.float32) for s in shapes]


def _make(lib, arrs, grad_fn):
    def jac():
        x, w1, b1, w2, b2 = (lib.tensor(a, requires_grad=True) for a in arrs)
        out = (lib.nn.functional.linear((lib.nn.functional.linear(x, w1, b1)).tanh(), w2, b2)
               ).tanh()
        eye = lib.eye(N, dtype=lib.float32)
        return grad_fn(out, [x, w1, w2], eye)
    return jac


def _contestants():
    arrs = _arrays()
    return {
        "batched": _make(R, arrs, lambda o, i, e: R.autograd.grad(o, i, e,
                                                                 is_grads_batched=True)),
        "loop": _make(R, arrs, lambda o, i, e: frontend._batched_loop(o, i, e, None, False,
                                                                      None, False)),
        "torch": _make(torch, arrs, lambda o, i, e: torch.autograd.grad(o, i, e,
                                                                       is_grads_batched=True)),
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    args = ap.parse_args(argv)
    runs = _contestants()
    ref = [g.detach().numpy() for g in runs["torch"]()]
    for name in ("batched", "loop"):
        for a, b in zip(runs[name](), ref):
            np.testing.assert_allclose(a.numpy(), b, rtol=1e-4, atol=1e-5, err_msg=name)
    times = {k: [] for k in runs}
    for _ in range(3 if args.quick else 15):
        for name, fn in runs.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    print(f"Jacobian of a {N}->{N} tanh MLP (x, W1, W2), is_grads_batched with eye({N}):")
    for k, v in med.items():
        print(f"  {k:8s} {v:8.2f} ms")
    print(f"  loop / batched  = {med['loop'] / med['batched']:.1f}x")
    print(f"  batched / torch = {med['batched'] / med['torch']:.2f}x")


if __name__ == "__main__":
    main()
