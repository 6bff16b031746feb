"""The ``mlp_digits`` training step written as users write it: nn.Linear layers in an
nn.Sequential, nn.CrossEntropyLoss and optim.SGD (zero_grad, forward, backward, step),
retrograd vs PyTorch (1 thread and default) vs the same step by hand in NumPy; and the
resident memory over 10,000 such steps.

Timing: bench/run.py's round-robin, paired median ratios, gradients checked equal first.
Target (issue 9): rg / torch-1-thread < 1.0.

Memory: a fresh subprocess builds the model, runs 500 warm-up steps, then 10,000 steps,
reading its resident set (/proc/self/statm, after ``gc.collect`` and ``malloc_trim``)
every 1,000 steps; it reports the growth from the first reading to the last (issue 9:
under 5 MB, i.e. flat).

Run ``python bench/mlp_module.py`` (about a minute), ``--quick`` for a smoke run,
``--clock cpu`` on a busy machine, ``--memory-only`` / ``--time-only``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as _bench  # noqa: E402  (bench/run.py: R, torch, the timing helpers)

R, torch = _bench.R, _bench.torch
LR = 0.05
SIZES = [64, 128, 128, 10]


def build(lib, init):
    """The same MLP for retrograd or torch (``lib``), PyTorch's layout (weight out x in)."""
    nn = lib.nn
    layers = []
    for i in range(0, len(init), 2):
        w, b = init[i], init[i + 1]
        lin = nn.Linear(w.shape[0], w.shape[1])
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(np.ascontiguousarray(w.T)))
            lin.bias.copy_(lib.tensor(b.copy()))
        layers += [lin, nn.ReLU()]
    model = nn.Sequential(*layers[:-1])
    return model, nn.CrossEntropyLoss(), lib.optim.SGD(model.parameters(), lr=LR)


def trainer(lib, init, batches):
    """One training step per call, cycling through ``batches``; returns the gradients."""
    model, criterion, opt = build(lib, init)
    params = list(model.parameters())
    data = [(lib.tensor(x), lib.tensor(y)) for x, y in batches]
    count = [0]

    def step():
        x, y = data[count[0] % len(data)]
        count[0] += 1
        opt.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        grads = [p.grad.clone() for p in params] if count[0] == 1 else None
        opt.step()
        return grads

    return step


def workload(quick):
    x, y = _bench._digits()
    batches = _bench._batches(x, y, 64)
    init = _bench.init_mlp(SIZES, 0)
    pn = [p.copy() for p in init]
    count = [0]

    def nump():
        xb, yb = batches[count[0] % len(batches)]
        count[0] += 1
        _loss, grads = _bench._np_mlp_fwd_bwd(pn, xb, yb)
        for p, g in zip(pn, grads):
            p -= LR * g
        return grads

    fns = {"retrograd": trainer(R, init, batches), "torch": trainer(torch, init, batches),
           "numpy": nump}
    return fns, 5 if quick else 50


def time_it(quick, repeats):
    fns, inner = workload(quick)
    torch.set_num_threads(1)
    first = {k: fn() for k, fn in fns.items()}  # the first step's gradients, same weights
    torch.set_num_threads(_bench.TORCH_DEFAULT_THREADS)
    first["numpy"] = [np.ascontiguousarray(g.T) if g.ndim == 2 else g for g in first["numpy"]]
    _bench._check("mlp_module", first, 1e-4, 1e-5)
    times, _faults = _bench.measure(fns, inner, repeats)
    med = {k: statistics.median(v) for k, v in times.items()}
    ratio = {k: statistics.median(a / b for a, b in zip(times["retrograd"], times[k]))
             for k in ("torch1", "torchN", "numpy")}
    return med, ratio


MEMORY_CHILD = r"""
import ctypes, gc, json, os, sys
sys.path.insert(0, {bench!r})
import run as _bench
import mlp_module as m
lib = _bench.R if {who!r} == "retrograd" else _bench.torch
if {who!r} == "torch":
    lib.set_num_threads(1)
x, y = _bench._digits()
step = m.trainer(lib, _bench.init_mlp(m.SIZES, 0), _bench._batches(x, y, 64))
page = os.sysconf("SC_PAGE_SIZE")
libc = ctypes.CDLL("libc.so.6")
def rss():
    gc.collect()
    libc.malloc_trim(0)
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * page
for _ in range({warm}):
    step()
readings = []
for i in range({steps}):
    if i % 1000 == 0:
        readings.append(rss())
    step()
readings.append(rss())
print(json.dumps(readings))
"""


def memory(who, steps, warm=500):
    code = MEMORY_CHILD.format(bench=os.path.dirname(os.path.abspath(__file__)), who=who,
                               steps=steps, warm=warm)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "OMP_NUM_THREADS": "1",
                                          "OPENBLAS_NUM_THREADS": "1"})
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--clock", choices=sorted(_bench.CLOCKS), default="wall")
    parser.add_argument("--steps", type=int, default=10_000, help="steps of the memory run")
    parser.add_argument("--memory-only", action="store_true")
    parser.add_argument("--time-only", action="store_true")
    args = parser.parse_args(argv)
    _bench._clock = _bench.CLOCKS[args.clock]
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1, user_api="blas")
    except ImportError:
        print("(threadpoolctl missing: NumPy's BLAS keeps its threads)", file=sys.stderr)
    if not args.memory_only:
        repeats = args.repeats or (3 if args.quick else 15)
        med, ratio = time_it(args.quick, repeats)
        print(f"# mlp_module: nn.Linear x3 + CrossEntropyLoss + optim.SGD, batch 64 "
              f"({repeats} repeats, {args.clock} clock)\n")
        print("| retrograd | torch 1 thread | torch default | numpy | rg/torch1 | rg/torchN "
              "| rg/numpy | target rg/torch1 < 1.0 |")
        print("|---|---|---|---|---|---|---|---|")
        f = _bench._fmt_time
        print(f"| {f(med['retrograd'])} | {f(med['torch1'])} | {f(med['torchN'])} | "
              f"{f(med['numpy'])} | {ratio['torch1']:.2f} | {ratio['torchN']:.2f} | "
              f"{ratio['numpy']:.2f} | {'yes' if ratio['torch1'] < 1.0 else '**no**'} |")
    if not args.time_only:
        steps = 1000 if args.quick else args.steps
        print(f"\n# resident memory over {steps} steps (after 500 warm-up steps)\n")
        print("| contestant | first RSS | last RSS | growth | largest reading - first | "
              "target growth < 5 MB |")
        print("|---|---|---|---|---|---|")
        for who in ("retrograd", "torch"):
            readings = memory(who, steps)
            growth = readings[-1] - readings[0]
            met = "yes" if growth < 5 * 2**20 else "**no**"
            peak = max(readings) - readings[0]
            print(f"| {who} | {readings[0] / 2**20:.1f} MB | {readings[-1] / 2**20:.1f} MB | "
                  f"{growth / 2**20:+.2f} MB | {peak / 2**20:+.2f} MB | "
                  f"{met if who == 'retrograd' else '-'} |")


if __name__ == "__main__":
    main()
