"""One ``nn.TransformerEncoderLayer`` step, forward + backward: retrograd vs PyTorch on one
thread.

d_model 64, 4 heads, sequence 32, batch 16 (batch_first), float32, training mode with
dropout 0 (so both compute the same function; dropout's masks would differ), loss = sum of
the output.  ``--ff`` sets dim_feedforward (default 2048, PyTorch's default; 256 is the usual
4 x d_model); ``--norm-first`` the pre-norm variant.  Both layers start from the same
weights (torch's, loaded through ``load_state_dict``), and the input and parameter
gradients are checked allclose before anything is timed.  The contestants run
interleaved (round-robin); the ratio is the median of per-repeat ratios.

Run ``python bench/nn_transformer.py`` (about half a minute), ``--quick`` for a smoke run;
on a busy shared machine add ``--clock cpu``.
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

D_MODEL, NHEAD, SEQ, BATCH = 64, 4, 32, 16


def build(ff, norm_first):
    torch.manual_seed(0)
    th = torch.nn.TransformerEncoderLayer(D_MODEL, NHEAD, ff, dropout=0.0, batch_first=True,
                                          norm_first=norm_first)
    rg = R.nn.TransformerEncoderLayer(D_MODEL, NHEAD, ff, dropout=0.0, batch_first=True,
                                      norm_first=norm_first)
    rg.load_state_dict({k: R.tensor(v.detach().numpy().copy())
                        for k, v in th.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((BATCH, SEQ, D_MODEL)).astype(np.float32)
    return th, rg, x


def step_fn(lib, layer, x):
    def step():
        layer.zero_grad()
        xt = lib.tensor(x, requires_grad=True)
        layer(xt).sum().backward()
        return [xt.grad] + [p.grad for p in layer.parameters()]
    return step


def check(rg_step, th_step):
    torch.set_num_threads(1)
    for a, b in zip(rg_step(), th_step()):
        a, b = a.detach().numpy(), b.detach().numpy()
        if not np.allclose(a, b, rtol=1e-3, atol=1e-3):
            raise AssertionError(f"gradients differ: max abs err {np.abs(a - b).max()}")


def measure(fns, inner, repeats, clock):
    torch.set_num_threads(1)
    for fn in fns.values():  # warm-up
        fn()
    times = {k: [] for k in fns}
    order = list(fns)
    gc.disable()
    try:
        for r in range(repeats):
            for name in order[r % 2:] + order[:r % 2]:
                t0 = clock()
                for _ in range(inner):
                    fns[name]()
                times[name].append((clock() - t0) / inner)
            gc.collect()
    finally:
        gc.enable()
    return times


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--ff", type=int, nargs="+", default=[2048, 256])
    parser.add_argument("--norm-first", action="store_true")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    args = parser.parse_args(argv)
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    repeats = args.repeats or (3 if args.quick else 11)
    inner = 1 if args.quick else 3
    try:  # one BLAS thread: retrograd single-threaded like the torch reference
        from threadpoolctl import threadpool_limits
    except ImportError:
        print("(threadpoolctl missing: NumPy's BLAS keeps its default threads)",
              file=sys.stderr)
    else:
        threadpool_limits(1, user_api="blas")
    print(f"TransformerEncoderLayer d_model {D_MODEL}, {NHEAD} heads, seq {SEQ}, batch "
          f"{BATCH}, float32, norm_first={args.norm_first}, fwd+bwd; median of {repeats} "
          f"x {inner}, {args.clock} clock, torch {torch.__version__} on 1 thread\n")
    print("| dim_feedforward | retrograd | torch 1 thread | rg/torch1 |")
    print("|---|---|---|---|")
    for ff in args.ff:
        th, rg, x = build(ff, args.norm_first)
        fns = {"retrograd": step_fn(R, rg, x), "torch": step_fn(torch, th, x)}
        check(fns["retrograd"], fns["torch"])
        times = measure(fns, inner, repeats, clock)
        ratio = statistics.median(a / b for a, b in zip(times["retrograd"], times["torch"]))
        print(f"| {ff} | {statistics.median(times['retrograd']) * 1e3:.2f} ms | "
              f"{statistics.median(times['torch']) * 1e3:.2f} ms | {ratio:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
