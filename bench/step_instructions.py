"""Instructions per training step (valgrind's callgrind), immune to the load of a shared
machine: bench/run.py's (e) digits MLP SGD step, (m) the same with nn.Linear modules and
Module.zero_grad, (o) bench/mlp_module.py's form of (m) (nn.CrossEntropyLoss, optim.SGD),
(g) the Hessian-vector product, and (n) the hand-written NumPy step of (e).

The shapes are bench/run.py's (batch 64, 64-128-128-10 and 64-64-10), on random data (the
instruction count does not depend on the values).  Only the steps are counted: the process
runs under callgrind with instrumentation off until the warm-up steps are done
(``callgrind_control -i on``), and collects only inside ``functools.reduce``, which runs the
counted steps.  A garbage collection of the young generation is run just before the counted
steps: the warm-up and the ``callgrind_control`` call leave the generation's count at some
arbitrary height, and a collection that this starting point (not the step) set off inside
the counted window was +22,000 instructions a step of (m) at stop 25 (in steady state none
of e, m, g collects at all: 0 collections in 1,000 steps).

Run ``python bench/step_instructions.py`` (needs valgrind; about a minute per workload on a
quiet machine), ``--only em``, ``--steps 20``.  ``--phases``: per phase of e, m and o
(forward, backward, optimizer, zero_grad; four valgrind runs per workload).  Python-level
detail: ``--opcodes`` counts the bytecodes each function executes per step (sys.settrace,
no valgrind).
"""

from __future__ import annotations

import argparse
import collections
import functools
import gc
import os
import re
import subprocess
import sys

import numpy as np

try:  # run from a checkout without installing
    import retrograd as R
except ImportError:  # pragma: no cover
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
    import retrograd as R
import retrograd.nn.functional as RF

LR = 0.05


def _init(rng, sizes):
    params = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        params += [(rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32),
                   np.zeros(b, np.float32)]
    return params


def _np_step(params, x, y):
    """bench/run.py's hand-written NumPy forward, backward and SGD update."""
    n = len(params) // 2
    acts, h = [x], x
    for i in range(n):
        z = h @ params[2 * i] + params[2 * i + 1]
        h = np.maximum(z, 0) if i < n - 1 else z
        acts.append(h)
    shifted = h - h.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    g = e / e.sum(axis=1, keepdims=True)
    b = x.shape[0]
    g[np.arange(b), y] -= 1
    g /= b
    grads = [None] * len(params)
    for i in reversed(range(n)):
        a = acts[i]
        grads[2 * i] = a.T @ g
        grads[2 * i + 1] = g.sum(axis=0)
        if i:
            g = (g @ params[2 * i].T) * (a > 0)
    for p, gr in zip(params, grads):
        p -= LR * gr


def make_step(which):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 64)).astype(np.float32)
    y = rng.integers(0, 10, 64)
    xr, yr = R.tensor(x), R.tensor(y)
    if which == "e":
        pr = [R.tensor(p, requires_grad=True) for p in _init(rng, [64, 128, 128, 10])]

        def step():
            h = xr
            for i in range(0, 6, 2):
                h = h @ pr[i] + pr[i + 1]
                if i < 4:
                    h = R.relu(h)
            RF.cross_entropy(h, yr).backward()
            with R.no_grad():
                for p in pr:
                    p -= LR * p.grad
                    p.grad = None
    elif which == "m":
        layers = []
        for a, b in [(64, 128), (128, 128), (128, 10)]:
            layers += [R.nn.Linear(a, b), R.nn.ReLU()]
        model = R.nn.Sequential(*layers[:-1])
        pr = list(model.parameters())

        def step():
            RF.cross_entropy(model(xr), yr).backward()
            with R.no_grad():
                for p in pr:
                    p -= LR * p.grad
            model.zero_grad()
    elif which == "o":  # bench/mlp_module.py's form: CrossEntropyLoss and optim.SGD
        layers = []
        for a, b in [(64, 128), (128, 128), (128, 10)]:
            layers += [R.nn.Linear(a, b), R.nn.ReLU()]
        model = R.nn.Sequential(*layers[:-1])
        criterion = R.nn.CrossEntropyLoss()
        opt = R.optim.SGD(model.parameters(), lr=LR)

        def step():
            opt.zero_grad()
            criterion(model(xr), yr).backward()
            opt.step()
    elif which == "g":
        pr = [R.tensor(p, requires_grad=True) for p in _init(rng, [64, 64, 10])]
        vr = [R.tensor(rng.standard_normal(p.shape).astype(np.float32)) for p in pr]

        def step():
            loss = RF.cross_entropy(R.tanh(xr @ pr[0] + pr[1]) @ pr[2] + pr[3], yr)
            gs = R.autograd.grad(loss, pr, create_graph=True)
            dot = sum((g * v).sum() for g, v in zip(gs, vr))
            return R.autograd.grad(dot, pr)
    elif which == "n":
        pn = _init(rng, [64, 128, 128, 10])

        def step():
            _np_step(pn, x, y)
    else:
        raise SystemExit(f"unknown workload {which!r}")
    return step


PHASES = ("forward", "backward", "optimizer", "zero_grad")


def make_phases(which):
    """Workload ``which`` (e, m or o) as its four phases (``PHASES``), each a function of
    what the one before returned: for counting them one at a time (``--phases``)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 64)).astype(np.float32)
    y = rng.integers(0, 10, 64)
    xr, yr = R.tensor(x), R.tensor(y)
    if which == "e":
        pr = [R.tensor(p, requires_grad=True) for p in _init(rng, [64, 128, 128, 10])]

        def forward(_):
            h = xr
            for i in range(0, 6, 2):
                h = h @ pr[i] + pr[i + 1]
                if i < 4:
                    h = R.relu(h)
            return RF.cross_entropy(h, yr)

        def optimizer(_):
            with R.no_grad():
                for p in pr:
                    p -= LR * p.grad

        def zero_grad(_):
            for p in pr:
                p.grad = None
    elif which in "mo":
        layers = []
        for a, b in [(64, 128), (128, 128), (128, 10)]:
            layers += [R.nn.Linear(a, b), R.nn.ReLU()]
        model = R.nn.Sequential(*layers[:-1])
        pr = list(model.parameters())
        if which == "m":
            def forward(_):
                return RF.cross_entropy(model(xr), yr)

            def optimizer(_):
                with R.no_grad():
                    for p in pr:
                        p -= LR * p.grad

            def zero_grad(_):
                model.zero_grad()
        else:
            criterion = R.nn.CrossEntropyLoss()
            opt = R.optim.SGD(model.parameters(), lr=LR)

            def forward(_):
                return criterion(model(xr), yr)

            def optimizer(_):
                opt.step()

            def zero_grad(_):
                opt.zero_grad()
    else:
        raise SystemExit(f"--phases: only e, m and o have phases, not {which!r}")

    def backward(loss):
        loss.backward()

    return [forward, backward, optimizer, zero_grad]


def child_phase(which, steps, phase):
    """Inside callgrind: run the phased steps, collecting only inside phase ``phase``
    (called through ``functools.reduce``, which the collection toggles on)."""
    fns = make_phases(which)
    k = PHASES.index(phase)

    def step(counted):
        out = None
        for i, fn in enumerate(fns):
            if i == k and counted:
                out = functools.reduce(lambda acc, _, f=fn, a=out: f(a), range(1), None)
            else:
                out = fn(out)

    step(False)
    step(False)
    subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())],
                   stdout=subprocess.DEVNULL, check=False)
    gc.collect()  # (a young generation emptied: the docstring says why)
    for _ in range(steps):
        step(True)


def child(which, steps):
    """Inside callgrind: warm up, switch instrumentation on, run the counted steps."""
    step = make_step(which)
    step()
    step()
    subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())],
                   stdout=subprocess.DEVNULL, check=False)
    gc.collect()  # (a young generation emptied: the docstring says why)
    functools.reduce(lambda acc, _: step(), range(steps), None)


def count(which, steps, phase=None):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--collect-atstart=no",
           "--toggle-collect=functools_reduce", "--callgrind-out-file=/dev/null",
           sys.executable, os.path.abspath(__file__), "--child", which, "--steps", str(steps)]
    if phase:
        cmd += ["--phase", phase]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stderr
    found = re.search(r"Collected : ([\d,]+)", out)
    return int(found.group(1).replace(",", "")) / steps


def opcodes(which, steps, top):
    step = make_step(which)
    step()
    per_fn = collections.Counter()

    def tracer(frame, event, arg):
        if event == "call":
            frame.f_trace_opcodes = True
            return tracer
        if event == "opcode":
            code = frame.f_code
            per_fn[(code.co_filename.split("src/")[-1], code.co_firstlineno, code.co_name)] += 1
        return tracer

    sys.settrace(tracer)
    try:
        for _ in range(steps):
            step()
    finally:
        sys.settrace(None)
    print(f"({which}) {sum(per_fn.values()) / steps:.0f} bytecodes a step")
    for (path, line, name), n in per_fn.most_common(top):
        print(f"  {n / steps:8.0f}  {path}:{line} {name}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="emgn", help="workload keys (e, m, o, g, n)")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--opcodes", action="store_true", help="bytecodes per function instead")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--phases", action="store_true",
                    help="instructions per phase (forward, backward, optimizer, zero_grad) "
                    "of e, m and o, one valgrind run each")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--phase", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        if args.phase:
            child_phase(args.child, args.steps, args.phase)
        else:
            child(args.child, args.steps)
        return
    for which in args.only:
        if args.phases:
            counts = {ph: count(which, args.steps, ph) for ph in PHASES}
            print(f"({which}) " + ", ".join(f"{ph} {n:,.0f}" for ph, n in counts.items())
                  + f"; sum {sum(counts.values()):,.0f} instructions a step", flush=True)
        elif args.opcodes:
            opcodes(which, args.steps, args.top)
        else:
            print(f"({which}) {count(which, args.steps):,.0f} instructions a step", flush=True)


if __name__ == "__main__":
    main()
