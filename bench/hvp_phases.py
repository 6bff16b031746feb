"""Instructions per phase of bench/run.py's (g), the Hessian-vector product, for retrograd
and PyTorch (valgrind's callgrind, immune to the load of a shared machine).

The four phases: the forward (``fwd``), the first gradient with ``create_graph=True``
(``g1``), the dot product with the vector (``dot``) and the second, first-order gradient
through the recorded derivatives (``g2``).  Each is counted alone: the process runs under
callgrind with instrumentation on only after the warm-up steps and collects only inside
``functools.reduce``, which wraps the measured phase of each step; the other phases run
outside it.  Comparing the phases with PyTorch's shows where an HVP's cost is (as a step
total, ``bench/step_instructions.py --only g``, cannot).

Run ``python bench/hvp_phases.py`` (needs valgrind; about a minute per library), ``--torch``
for PyTorch's counts too, ``--steps 10``.
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import re
import subprocess
import sys

import numpy as np

PHASES = ("fwd", "g1", "dot", "g2")


def make_phases(lib):
    """The four phase functions over bench/run.py's (g) shapes, on random data."""
    if lib == "torch":
        import torch as L
        import torch.nn.functional as F

        L.set_num_threads(1)
    else:
        try:  # run from a checkout without installing
            import retrograd as L
        except ImportError:  # pragma: no cover
            sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
            import retrograd as L
        import retrograd.nn.functional as F
    rng = np.random.default_rng(0)
    x = L.tensor(rng.standard_normal((64, 64)).astype(np.float32))
    y = L.tensor(rng.integers(0, 10, 64))
    ps = [L.tensor((rng.standard_normal(s) / 8).astype(np.float32), requires_grad=True)
          for s in [(64, 64), (64,), (64, 10), (10,)]]
    vs = [L.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)) for p in ps]
    return {
        "fwd": lambda _: F.cross_entropy(L.tanh(x @ ps[0] + ps[1]) @ ps[2] + ps[3], y),
        "g1": lambda loss: L.autograd.grad(loss, ps, create_graph=True),
        "dot": lambda gs: sum((g * v).sum() for g, v in zip(gs, vs)),
        "g2": lambda dot: L.autograd.grad(dot, ps),
    }


def child(lib, phase, steps):
    """Inside callgrind: warm up, switch instrumentation on, count ``phase`` of each step."""
    fns = make_phases(lib)

    def step(counted):
        value = None
        for name in PHASES:
            if name == counted:
                value = functools.reduce(lambda acc, _: fns[name](value), range(1), None)
            else:
                value = fns[name](value)

    step(None)
    step(None)
    subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())],
                   stdout=subprocess.DEVNULL, check=False)
    gc.collect()  # (as step_instructions.py: no collection set off by the warm-up counted)
    for _ in range(steps):
        step(phase)


def count(lib, phase, steps):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--collect-atstart=no",
           "--toggle-collect=functools_reduce", "--callgrind-out-file=/dev/null",
           sys.executable, os.path.abspath(__file__), "--child", lib, phase, "--steps",
           str(steps)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stderr
    found = re.search(r"Collected : ([\d,]+)", out)
    return int(found.group(1).replace(",", "")) / steps


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--torch", action="store_true", help="count PyTorch's phases too")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--child", nargs=2, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(*args.child, args.steps)
        return
    for lib in ("retrograd", "torch") if args.torch else ("retrograd",):
        counts = {phase: count(lib, phase, args.steps) for phase in PHASES}
        cells = ", ".join(f"{phase} {n:,.0f}" for phase, n in counts.items())
        print(f"{lib}: {cells}; total {sum(counts.values()):,.0f} instructions a step",
              flush=True)


if __name__ == "__main__":
    main()
