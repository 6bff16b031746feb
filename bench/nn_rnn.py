"""An LSTM (input 32, hidden 64, sequence 50, batch 16, float32) forward + backward:
retrograd's nn.LSTM against PyTorch's on one thread, same weights and inputs.

NumPy's BLAS runs on one thread (``--blas-threads``, as bench/run.py).  Before timing, the
outputs and every gradient are compared (allclose).  The contestants
run interleaved (round-robin) and the ratio is the median of per-repeat ratios.

Run ``python bench/nn_rnn.py`` (about half a minute), ``--quick`` for a smoke run,
``--packed`` to time a PackedSequence of lengths 50 down to 20 instead of a padded batch,
``--mode GRU`` (or RNN) for the other layers.
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

INPUT, HIDDEN, SEQ, BATCH = 32, 64, 50, 16


def contestant(lib, module, x, lengths):
    """One forward + backward; returns the gradients (for the check)."""
    utils = lib.nn.utils.rnn
    params = list(module.parameters())

    def step():
        for p in params:
            p.grad = None
        inp = x if lengths is None else utils.pack_padded_sequence(x, lengths,
                                                                   enforce_sorted=False)
        out, state = module(inp)
        if lengths is not None:
            out = out.data
        loss = out.sum() + sum(s.sum() for s in (state if isinstance(state, tuple)
                                                 else (state,)))
        loss.backward()
        return [p.grad for p in params]

    return step


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--packed", action="store_true")
    parser.add_argument("--mode", default="LSTM", choices=["LSTM", "GRU", "RNN"])
    parser.add_argument("--blas-threads", type=int, default=1,
                        help="threads for NumPy's BLAS (0: leave the library's default)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.blas_threads:
        # as bench/run.py: one BLAS thread, like the torch-1-thread reference (two busy-
        # waiting thread pools on a small machine turn the timings to noise)
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:
            print("(threadpoolctl is not installed: NumPy's BLAS keeps its default threads)",
                  file=sys.stderr)
        else:
            threadpool_limits(args.blas_threads, user_api="blas")
    th = getattr(torch.nn, args.mode)(INPUT, HIDDEN)
    rg = getattr(R.nn, args.mode)(INPUT, HIDDEN)
    rg.load_state_dict({k: R.tensor(v.detach().numpy().copy())
                        for k, v in th.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((SEQ, BATCH, INPUT)).astype(np.float32)
    lengths = (list(np.linspace(SEQ, 20, BATCH).astype(int)) if args.packed else None)
    steps = {"retrograd": contestant(R, rg, R.tensor(x), lengths),
             "torch1": contestant(torch, th, torch.tensor(x), lengths)}
    g_rg, g_th = steps["retrograd"](), steps["torch1"]()
    for a, b in zip(g_rg, g_th):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-3, atol=1e-4)
    repeats, inner = (3, 1) if args.quick else (15, 3)
    times = {k: [] for k in steps}
    for _ in range(repeats):
        for name, step in steps.items():
            t0 = time.perf_counter()
            for _ in range(inner):
                step()
            times[name].append((time.perf_counter() - t0) / inner)
    ratio = statistics.median(a / b for a, b in zip(times["retrograd"], times["torch1"]))
    kind = "packed" if args.packed else "padded"
    print(f"{args.mode}({INPUT}, {HIDDEN}) seq {SEQ} batch {BATCH} float32 {kind}, fwd+bwd:")
    for name, ts in times.items():
        print(f"  {name:10s} {statistics.median(ts) * 1e3:8.2f} ms")
    print(f"  retrograd / torch1 = {ratio:.2f}")


if __name__ == "__main__":
    main()
