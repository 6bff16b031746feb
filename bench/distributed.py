"""retrograd.distributed against raw mpi4py, and DistributedDataParallel's costs.

Run under MPI (rank 0 prints)::

    .venv/bin/mpiexec -n 2 .venv/bin/python bench/distributed.py          # ~30 s
    .venv/bin/mpiexec -n 2 .venv/bin/python bench/distributed.py --quick  # smoke run

Every sample starts the ranks together (a barrier), runs ``--calls`` calls back to back and
takes the time until the *slowest* rank is done (a MAX all-reduce of the elapsed times,
outside the timing): a collective is finished when every rank has its result, and ranks
leave a large all-reduce up to a few ms apart, so timing rank 0 alone (the first version of
this bench) credits whichever variant lets rank 0 leave early.  Variants are interleaved
sample by sample; ratios are medians of per-sample ratios.

1. ``dist.all_reduce`` of a 4 MiB float32 tensor vs ``comm.Allreduce(IN_PLACE, array)`` on
   the same array (target: within 1.1x), as by default (no cross-rank check, as PyTorch)
   and in the debug mode (``RETROGRAD_DISTRIBUTED_DEBUG=DETAIL``: one 16-byte all-reduce
   first), and the check alone.
2. One SGD step of the digits MLP (64-128-128-10, ReLU, cross-entropy, global batch 64) on
   random digits-shaped data: plain single-process on the global batch vs
   DistributedDataParallel (each rank a batch of 64/n), copying the gradients into its
   buckets and back (the default) or with ``gradient_as_bucket_view=True``; the overhead is
   DDP's time over the plain step.  For scale, the floor DDP cannot go under: the plain
   step on one rank's shard plus one raw mpi4py all-reduce of all the gradients.
3. Overlap: backward with DDP's bucketed all-reduces started from the hooks vs backward
   under no_sync() followed by the same all-reduces, one after another (a wider MLP, 1 MiB
   buckets, so that there is something to overlap); and the overlapped step with
   ``gradient_as_bucket_view=True`` (no copy out; with ``zero_grad(set_to_none=False)`` no
   copy in either).
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
from retrograd.distributed import _check  # noqa: E402
from retrograd.distributed.process_group import resolve  # noqa: E402
from retrograd.nn.parallel import DistributedDataParallel  # noqa: E402

COMM = MPI.COMM_WORLD


def timed(fn, calls):
    """Seconds per call of ``fn``, until the slowest rank is done (see the docstring)."""
    COMM.Barrier()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    elapsed = np.array([time.perf_counter() - start])
    COMM.Allreduce(MPI.IN_PLACE, elapsed, MPI.MAX)
    return float(elapsed[0]) / calls


def say(*args):
    if COMM.rank == 0:
        print(*args, flush=True)


def interleaved(variants, repeats, calls):
    """{name: [seconds per call, one per sample]}, the variants taking turns."""
    for fn in variants.values():
        fn()
    times = {name: [] for name in variants}
    for _ in range(repeats):
        for name, fn in variants.items():
            times[name].append(timed(fn, calls))
    return times


def report(times, base, unit=1e3, label="ms"):
    for name, ts in times.items():
        ratio = statistics.median(a / b for a, b in zip(ts, times[base]))
        say(f"  {name:40s} {statistics.median(ts) * unit:8.3f} {label}   ratio {ratio:5.2f}x")


def bench_all_reduce(repeats, calls):
    # zeros: the sums stay finite however many calls (adding zeros costs what any sum does)
    arr = np.zeros(2 ** 20, dtype=np.float32)   # 4 MiB
    t = R.from_numpy(arr)

    def ours_debug():
        dist.set_debug_level(dist.DebugLevel.DETAIL)
        try:
            dist.all_reduce(t)
        finally:
            dist.set_debug_level(dist.DebugLevel.OFF)

    def raw():
        COMM.Allreduce(MPI.IN_PLACE, arr, MPI.SUM)

    def ours():
        dist.all_reduce(t)

    world = resolve(None, "bench")
    description = ("all_reduce", tuple(arr.shape), arr.dtype.str, "op=SUM")

    def check_alone():   # what the check costs by itself, ranks in step
        _check.check_same(world, "all_reduce", description, always=True)

    times = interleaved({"mpi4py Allreduce": raw, "dist.all_reduce (default)": ours,
                         "dist.all_reduce, debug mode (checked)": ours_debug,
                         "the check alone (16 bytes)": check_alone}, repeats, calls)
    say(f"all_reduce 4 MiB float32, {COMM.size} rank(s), {calls} calls per sample, median "
        f"of {repeats} samples:")
    report(times, "mpi4py Allreduce")


def mlp(widths):
    R.manual_seed(0)
    layers = []
    for a, b in zip(widths, widths[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


def bench_ddp_step(repeats, calls):
    rng = np.random.default_rng(0)
    x = R.from_numpy(rng.random((64, 64), dtype=np.float32) * 16)
    y = R.from_numpy(rng.integers(0, 10, 64))
    n, me = COMM.size, COMM.rank
    shard = slice(me * 64 // n, (me + 1) * 64 // n)
    plain = mlp([64, 128, 128, 10])
    ddp = DistributedDataParallel(mlp([64, 128, 128, 10]))
    ddp_view = DistributedDataParallel(mlp([64, 128, 128, 10]), gradient_as_bucket_view=True)
    floor_model = mlp([64, 128, 128, 10])
    floor_params = list(floor_model.parameters())

    def step(model, xs, ys, after_backward=None):
        opt = R.optim.SGD(model.parameters(), lr=0.01)

        def run():
            opt.zero_grad()
            nn.functional.cross_entropy(model(xs), ys).backward()
            if after_backward is not None:
                after_backward()
            opt.step()
        return run

    flat = np.empty(sum(p.numel() for p in floor_params), dtype=np.float32)

    def raw_all_reduce():   # the communication DDP cannot avoid, with no machinery
        np.concatenate([p.grad._data.reshape(-1) for p in floor_params], out=flat)
        COMM.Allreduce(MPI.IN_PLACE, flat, MPI.SUM)

    times = interleaved({
        "single process, batch 64": step(plain, x, y),
        f"DDP, {n} rank(s) of batch {64 // n}": step(ddp, x[shard], y[shard]),
        "  the same, gradient_as_bucket_view": step(ddp_view, x[shard], y[shard]),
        f"floor: batch {64 // n} + raw Allreduce": step(floor_model, x[shard], y[shard],
                                                         raw_all_reduce),
    }, repeats, calls)
    say(f"digits MLP SGD step, global batch 64, {n} rank(s), {calls} steps per sample, "
        f"median of {repeats} samples:")
    report(times, "single process, batch 64")


def bench_overlap(repeats):
    rng = np.random.default_rng(1)
    widths = [256, 1024, 1024, 1024, 10]
    x = R.from_numpy(rng.standard_normal((64, 256), dtype=np.float32))
    ddp = DistributedDataParallel(mlp(widths), bucket_cap_mb=1)
    ddp_view = DistributedDataParallel(mlp(widths), bucket_cap_mb=1,
                                       gradient_as_bucket_view=True)

    def overlapped():
        ddp(x).sum().backward()

    def overlapped_view():
        ddp_view(x).sum().backward()

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

    def zero(name):
        if name.endswith("zeroed in place"):   # the bucket views stay: nothing to copy in
            ddp_view.zero_grad(set_to_none=False)
        else:
            ddp.zero_grad()
            ddp_view.zero_grad()

    def backward_only():   # the floor: no communication at all
        with ddp.no_sync():
            ddp(x).sum().backward()

    variants = (("overlapped", overlapped), ("sequential", sequential),
                ("backward only", backward_only), ("bucket view", overlapped_view),
                ("bucket view, zeroed in place", overlapped_view))
    times = {name: [] for name, _ in variants}
    for name, fn in variants * (repeats + 1):
        zero(name)
        times[name].append(timed(fn, 1))
    assert all(p.grad is not None for p in ddp_view.parameters())
    o, s, b, v, vz = (statistics.median(times[k][1:]) for k in times)
    ratio = statistics.median(a / b for a, b in zip(times["overlapped"][1:],
                                                    times["sequential"][1:]))
    count = sum(p.numel() for p in ddp.parameters())
    say(f"overlap ({len(ddp._buckets)} buckets, cap 1 MiB, {count} float32 params, median "
        f"of {repeats}): backward+all-reduce overlapped {o * 1e3:.2f} ms, backward then "
        f"all-reduce {s * 1e3:.2f} ms (ratio {ratio:.2f}x); backward alone {b * 1e3:.2f} ms; "
        f"overlapped with gradient_as_bucket_view {v * 1e3:.2f} ms ({vz * 1e3:.2f} ms with "
        "the gradients zeroed in place)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few repeats only")
    parser.add_argument("--calls", type=int, default=10, help="calls per timed sample")
    args = parser.parse_args()
    dist.init_process_group("mpi")
    repeats = 5 if args.quick else 30
    say(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    bench_all_reduce(repeats, args.calls)
    bench_ddp_step(repeats, args.calls)
    bench_overlap(max(3, repeats // 3))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
