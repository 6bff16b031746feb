"""Activation checkpointing: memory saved and time paid, on a 20-layer MLP.

A 20-layer MLP (Linear 128->128 + tanh, batch 1024, float32: activations, not weights,
dominate) runs forward + backward three
ways: plain; ``checkpoint_sequential(..., segments=5, use_reentrant=False)`` (saved-tensor
hooks, as PyTorch); the same with ``use_reentrant=True``.  Reported per way:

* peak memory: the highest NumPy allocation (``tracemalloc``) during forward + backward,
  above what the model, the input and their ``.grad`` already hold (gradients accumulate
  in place): saved values, activations and the gradients in flight;
* saved after forward: the bytes of the arrays the graph keeps for backward once the
  forward is done (walking ``grad_fn`` nodes; a checkpointed region keeps none);
* gradients: checked equal (bit for bit) to the plain run's before anything is timed;
* time: median of forward + backward over repeats (interleaved, without tracemalloc), and
  its ratio to the plain run.

Run: ``PYTHONPATH=src python bench/checkpoint.py`` (about 10 seconds, one BLAS thread).
"""

from __future__ import annotations

import os

# one BLAS thread (before NumPy loads): on a shared machine, threads fighting for the cores
# make the times noise
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402


try:
    import retrograd as R
except ImportError:  # pragma: no cover
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
    import retrograd as R
from retrograd.autograd.graph import SavedOutput  # noqa: E402
from retrograd.utils.checkpoint import checkpoint_sequential  # noqa: E402

DEPTH, WIDTH, BATCH, SEGMENTS, REPEATS = 20, 128, 1024, 5, 7


def make_model():
    R.manual_seed(0)
    layers = []
    for _ in range(DEPTH):
        layers += [R.nn.Linear(WIDTH, WIDTH), R.nn.Tanh()]
    return R.nn.Sequential(*layers)


def forward(model, x, how):
    if how == "plain":
        return model(x)
    return checkpoint_sequential(model, SEGMENTS, x, use_reentrant=how == "reentrant")


def saved_bytes(y) -> int:
    """Bytes of the arrays the graph from ``y`` keeps for backward (each counted once)."""
    seen, arrays, stack = set(), {}, [y.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        for s in node.saved or ():
            if type(s) is SavedOutput:
                data = s.data
            elif isinstance(s, R.Tensor) and s._grad_fn is not None:  # not the weights
                data = s._data
            else:  # a checkpoint's holder (PackedSaved) keeps no array; numbers, None
                continue
            while data.base is not None:  # a view (weight.t()) costs nothing of its own
                data = data.base
            arrays[id(data)] = data.nbytes
        stack.extend(node.next)
    return sum(arrays.values())


def step(model, x, how):
    y = forward(model, x, how)
    kept = saved_bytes(y)
    y.sum().backward()
    return kept


def main():
    model = make_model()
    x = R.randn(BATCH, WIDTH, requires_grad=True)
    warnings.simplefilter("ignore")
    ways = ("plain", "non-reentrant", "reentrant")
    times = {how: [] for how in ways}
    reference = None
    for how in ways:  # warm up, and check that every way gives the plain run's gradients
        model.zero_grad(set_to_none=True)
        x.grad = None
        step(model, x, how)
        grads = [x.grad.numpy().copy()] + [p.grad.numpy().copy() for p in model.parameters()]
        if reference is None:
            reference = grads
        elif not all(np.array_equal(a, b) for a, b in zip(grads, reference)):
            raise SystemExit(f"{how}: gradients differ from the plain run's")
    for _ in range(REPEATS):  # interleaved: a change in the machine's load hits every way
        for how in ways:
            t0 = time.perf_counter()
            step(model, x, how)
            times[how].append(time.perf_counter() - t0)
    results = {}
    for how in ways:
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        kept = step(model, x, how)
        peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
        results[how] = (statistics.median(times[how]), peak, kept)
    plain_t, plain_peak, _ = results["plain"]
    print(f"{DEPTH}-layer MLP {WIDTH}x{WIDTH}, batch {BATCH}, float32; "
          f"checkpoint_sequential segments={SEGMENTS}")
    print(f"{'':15s} {'peak MB':>8s} {'vs plain':>9s} {'saved MB':>9s} {'time ms':>8s} "
          f"{'vs plain':>9s}")
    for how, (t, peak, kept) in results.items():
        print(f"{how:15s} {peak / 2**20:8.1f} {peak / plain_peak:9.2f} {kept / 2**20:9.1f} "
              f"{t * 1e3:8.1f} {t / plain_t:9.2f}")


if __name__ == "__main__":
    main()
