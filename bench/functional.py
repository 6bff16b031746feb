"""autograd.functional and checkpoint: retrograd vs PyTorch (one thread).

* ``jacobian`` and ``hessian`` of a 64->64 tanh layer ``tanh(W x + b)`` (the Hessian of its
  sum), against ``torch.autograd.functional`` with the same arguments (reverse mode, not
  vectorized: both run one ``autograd.grad`` per output element).
* ``checkpoint`` on a 20-layer tanh MLP (width 256, batch 512): the peak of memory allocated
  during forward+backward (tracemalloc, which sees NumPy's array buffers), the saved values
  alive after the forward, and the time, with and without checkpointing: each layer
  checkpointed, ``checkpoint_sequential`` in 2 and 5 segments (use_reentrant=False, and 5
  segments with use_reentrant=True).

Run ``python bench/functional.py`` (about a minute) or ``--quick``.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
import tracemalloc

import numpy as np

try:  # run from a checkout without installing
    import retrograd as R
except ImportError:  # pragma: no cover
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
    import retrograd as R

import torch
from retrograd.utils.checkpoint import checkpoint, checkpoint_sequential


def _median_time(fn, repeats):
    fn()  # warm up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench_functional(repeats):
    rng = np.random.default_rng(0)
    w, b, x = rng.standard_normal((64, 64)) / 8, rng.standard_normal(64), rng.standard_normal(64)
    rows = []
    for name in ("jacobian", "hessian"):
        times, results = {}, {}
        for m in (R, torch):
            wt, bt, xt = (m.tensor(a, dtype=m.float32) for a in (w, b, x))
            api = getattr(m.autograd.functional, name)
            if name == "jacobian":
                def fn(v, wt=wt, bt=bt):
                    return (wt @ v + bt).tanh()
            else:
                def fn(v, wt=wt, bt=bt):
                    return (wt @ v + bt).tanh().sum()

            def call(api=api, fn=fn, xt=xt):
                return api(fn, xt)

            results[m.__name__] = call().numpy()
            times[m.__name__] = _median_time(call, repeats)
        np.testing.assert_allclose(results["retrograd"], results["torch"], rtol=1e-4,
                                   atol=1e-5)
        rows.append((name, times["retrograd"], times["torch"]))
    print(f"{'64->64 tanh layer':<22}{'retrograd':>12}{'torch 1t':>12}{'rg/torch':>10}")
    for name, ours, theirs in rows:
        print(f"{name:<22}{ours * 1e3:>10.2f}ms{theirs * 1e3:>10.2f}ms{ours / theirs:>10.2f}")


def _mlp(depth=20, width=256):
    R.manual_seed(0)
    layers = []
    for _ in range(depth):
        layers += [R.nn.Linear(width, width), R.nn.Tanh()]
    return R.nn.Sequential(*layers)


MODES = ("plain", "per layer", "sequential 2", "sequential 5", "sequential 5 reentrant")


def _run(model, x, how):
    if how == "plain":
        return model(x)
    if how == "per layer":
        y = x
        for k in range(0, len(model), 2):
            y = checkpoint(model[k:k + 2], y, use_reentrant=False)
        return y
    return checkpoint_sequential(model, int(how.split()[1]), x,
                                 use_reentrant=how.endswith("reentrant"))


def bench_checkpoint(repeats):
    # batch 512, width 256: the activations (512 KiB a layer) outweigh a layer's weight
    # gradient (256 KiB), so the peak shows what the graph keeps
    model = _mlp()
    x = R.randn(512, 256, requires_grad=True)
    print(f"\n{'20-layer MLP, 512x256':<24}{'saved MiB':>10}{'peak MiB':>10}{'time':>11}"
          f"{'t/plain':>9}")
    grads, memory = {}, {}
    for how in MODES:
        model.zero_grad()
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        y = _run(model, x, how)
        saved = tracemalloc.get_traced_memory()[0] - base  # what the graph keeps alive
        y.sum().backward()
        del y
        peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
        grads[how] = model[0].weight.grad.numpy().copy()
        memory[how] = (saved, peak)
    for how in MODES[1:]:
        np.testing.assert_array_equal(grads[how], grads["plain"])
    times = {how: [] for how in MODES}
    for _ in range(repeats):  # interleaved, so a busy machine slows every mode alike
        for how in MODES:
            model.zero_grad()
            t0 = time.perf_counter()
            _run(model, x, how).sum().backward()
            times[how].append(time.perf_counter() - t0)
    plain = statistics.median(times["plain"])
    for how in MODES:
        t = statistics.median(times[how])
        saved, peak = memory[how]
        print(f"{how:<24}{saved / 2**20:>10.1f}{peak / 2**20:>10.1f}{t * 1e3:>9.1f}ms"
              f"{t / plain:>9.2f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
    except ImportError:
        pass
    repeats = 3 if args.quick else 15
    bench_functional(repeats)
    bench_checkpoint(2 if args.quick else 7)


if __name__ == "__main__":
    main()
