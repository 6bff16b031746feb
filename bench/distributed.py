"""retrograd.distributed against raw mpi4py, and DistributedDataParallel's costs.

Run under MPI (rank 0 prints)::

    .venv/bin/mpiexec -n 2 .venv/bin/python bench/distributed.py          # ~20 s
    .venv/bin/mpiexec -n 2 .venv/bin/python bench/distributed.py --quick  # smoke run

1. ``dist.all_reduce`` of a 4 MiB float32 tensor vs ``comm.Allreduce(IN_PLACE, array)`` on
   the same array (target: within 1.1x), with the default cross-rank (shape, dtype) check
   and without it (``RETROGRAD_DISTRIBUTED_CHECK=0``).  Interleaved; medians of per-repeat
   ratios.
2. One SGD step of the digits MLP (64-128-128-10, ReLU, cross-entropy, global batch 64) on
   random digits-shaped data: plain single-process vs DistributedDataParallel (each rank
   a batch of 64/n); the overhead is DDP's time over the plain step.
3. Overlap: backward with DDP's bucketed all-reduces started from the hooks vs backward
   under no_sync() followed by the same all-reduces, one after another (a wider MLP, 1 MiB
   buckets, so that there is something to overlap).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

# one BLAS thread per rank: ranks share the cores, and threads fighting them distort every
# timing (set before NumPy loads its BLAS)
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

try:  # run from a checkout without installing
    import retrograd as R
except ImportError:  # pragma: no cover
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
    import retrograd as R

import retrograd.distributed as dist  # noqa: E402
from mpi4py import MPI  # noqa: E402
from retrograd import nn  # noqa: E402
from retrograd.distributed import collectives  # noqa: E402
from retrograd.nn.parallel import DistributedDataParallel  # noqa: E402

COMM = MPI.COMM_WORLD


def timed(fn, sync=True):
    if sync:
        COMM.Barrier()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def say(*args):
    if COMM.rank == 0:
        print(*args, flush=True)


def bench_all_reduce(repeats):
    arr = np.ones(2 ** 20, dtype=np.float32)   # 4 MiB
    t = R.from_numpy(arr)
    raw = lambda: COMM.Allreduce(MPI.IN_PLACE, arr, MPI.SUM)
    ours = lambda: dist.all_reduce(t)

    def unchecked():
        collectives.CHECK_METADATA = False
        try:
            dist.all_reduce(t)
        finally:
            collectives.CHECK_METADATA = True

    for fn in (raw, ours, unchecked):
        fn()
    times = {"mpi4py": [], "retrograd": [], "retrograd, no check": []}
    for _ in range(repeats):
        for name, fn in (("mpi4py", raw), ("retrograd", ours),
                         ("retrograd, no check", unchecked)):
            arr[...] = 1   # keep the values finite
            times[name].append(timed(fn))
    base = statistics.median(times["mpi4py"])
    say(f"all_reduce 4 MiB float32, {COMM.size} ranks, median of {repeats}:")
    for name, ts in times.items():
        ratio = statistics.median(a / b for a, b in zip(ts, times["mpi4py"]))
        say(f"  {name:22s} {statistics.median(ts) * 1e3:8.3f} ms   ratio {ratio:5.2f}x"
            f"  (mpi4py {base * 1e3:.3f} ms)")


def mlp(widths):
    R.manual_seed(0)
    layers = []
    for a, b in zip(widths, widths[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


def bench_ddp_step(repeats):
    rng = np.random.default_rng(0)
    x = R.from_numpy(rng.random((64, 64), dtype=np.float32) * 16)
    y = R.from_numpy(rng.integers(0, 10, 64))
    n, me = COMM.size, COMM.rank
    shard = slice(me * 64 // n, (me + 1) * 64 // n)
    plain = mlp([64, 128, 128, 10])
    ddp = DistributedDataParallel(mlp([64, 128, 128, 10]))

    def step(model, xs, ys):
        opt = R.optim.SGD(model.parameters(), lr=0.01)
        def run():
            opt.zero_grad()
            nn.functional.cross_entropy(model(xs), ys).backward()
            opt.step()
        return run

    single = step(plain, x, y)
    parallel = step(ddp, x[shard], y[shard])
    for fn in (single, parallel):
        fn()
    ts_single = [timed(single, sync=False) for _ in range(repeats)]
    ts_ddp = [timed(parallel) for _ in range(repeats)]
    s, d = statistics.median(ts_single), statistics.median(ts_ddp)
    say(f"digits MLP SGD step, global batch 64: single process {s * 1e3:.3f} ms; "
        f"DDP on {n} rank(s) (batch {64 // n} each) {d * 1e3:.3f} ms "
        f"(overhead {(d - s) * 1e3:+.3f} ms, {d / s:.2f}x)")


def bench_overlap(repeats):
    rng = np.random.default_rng(1)
    widths = [256, 1024, 1024, 1024, 10]
    x = R.from_numpy(rng.standard_normal((64, 256), dtype=np.float32))
    ddp = DistributedDataParallel(mlp(widths), bucket_cap_mb=1)
    grads = lambda: [p.grad for p in ddp.parameters()]

    def overlapped():
        ddp(x).sum().backward()

    def sequential():
        with ddp.no_sync():
            ddp(x).sum().backward()
        for b in ddp._buckets:    # the same buckets, reduced one after another
            for p, lo, hi in zip(b.params, b.offsets, b.offsets[1:]):
                b.buffer[lo:hi] = p.grad._data.reshape(-1)
            COMM.Allreduce(MPI.IN_PLACE, b.buffer, MPI.SUM)
            b.buffer /= COMM.size
            for p, lo, hi in zip(b.params, b.offsets, b.offsets[1:]):
                p.grad._data[...] = b.buffer[lo:hi].reshape(p.grad.shape)

    def zero():
        for p in ddp.parameters():
            p.grad = None

    times = {"overlapped": [], "sequential": []}
    for name, fn in (("overlapped", overlapped), ("sequential", sequential)) * (repeats + 1):
        zero()
        times[name].append(timed(fn))
    assert grads()[0] is not None
    o, s = (statistics.median(times[k][1:]) for k in ("overlapped", "sequential"))
    count = sum(p.numel() for p in ddp.parameters())
    say(f"overlap ({len(ddp._buckets)} buckets of <= 1 MiB, {count} float32 params): "
        f"backward+all-reduce overlapped {o * 1e3:.2f} ms, "
        f"backward then all-reduce {s * 1e3:.2f} ms ({o / s:.2f}x)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few repeats only")
    args = parser.parse_args()
    dist.init_process_group("mpi")
    repeats = 5 if args.quick else 50
    bench_all_reduce(repeats)
    bench_ddp_step(repeats)
    bench_overlap(max(3, repeats // 5))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
