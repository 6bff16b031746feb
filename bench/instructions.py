"""Instructions per call (valgrind's callgrind) of the MLP inference of bench/run.py (f), its
ops, and the same NumPy code: a count that another engineer's load on the machine does not
change, where timings on a shared machine swing by more than the differences measured.

Run ``OPENBLAS_NUM_THREADS=1 python bench/instructions.py`` (about 2 minutes: the script
runs itself under valgrind, counting only the timed statements).  It needs valgrind, its
headers (``valgrind/callgrind.h``) and a C compiler, for a two-function library that turns
the counting on and off around each statement (callgrind's client requests).
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

# statement -> what it stands for; each runs N times, counted, after one uncounted block
STATEMENTS = [
    ("rg_forward()", "(f) retrograd: MLP 64-128-128-10 forward under no_grad"),
    ("np_forward()", "(f) NumPy: the same forward"),
    ("rx @ rw", "retrograd x @ W (64x64 @ 64x128, W requires grad)"),
    ("x @ w", "NumPy x @ W"),
    ("rh + rb", "retrograd h + b (bias add)"),
    ("h + b", "NumPy h + b"),
    ("R.relu(rh)", "retrograd relu(h)"),
    ("np.maximum(h, 0)", "NumPy maximum(h, 0)"),
    ("with R.no_grad(): pass", "retrograd with no_grad()"),
]

_SHIM = r"""
#include <valgrind/callgrind.h>
void count_on(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION;
                      CALLGRIND_TOGGLE_COLLECT; }
void count_off(void) { CALLGRIND_TOGGLE_COLLECT; CALLGRIND_DUMP_STATS;
                       CALLGRIND_STOP_INSTRUMENTATION; }
"""


def _child(lib_path, n):
    import retrograd as R
    from digits_mlp import init_mlp, mlp_forward

    lib = ctypes.CDLL(lib_path)
    x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    params = init_mlp([64, 128, 128, 10], 0)
    w, b = params[0], params[1]
    h = x @ w
    rparams = [R.tensor(p, requires_grad=True) for p in params]
    rx, rh = R.tensor(x), R.tensor(h)
    rw, rb = rparams[0], rparams[1]

    def rg_forward():
        with R.no_grad():
            return mlp_forward(rparams, rx, R.relu)

    def np_forward():
        return mlp_forward(params, x, lambda v: np.maximum(v, 0))

    env = dict(locals(), R=R, np=np)
    for stmt, _ in STATEMENTS:
        ns = dict(env)
        exec(f"def block():\n    for _ in range({n}):\n        {stmt}\n", ns)  # noqa: S102
        with R.no_grad():  # (the weights require grad, as the bench's)
            ns["block"]()
            lib.count_on()
            ns["block"]()
            lib.count_off()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=30, help="counted runs of each statement")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return _child(args.child, args.n)
    if shutil.which("valgrind") is None or shutil.which("cc") is None:
        sys.exit("bench/instructions.py needs valgrind and a C compiler (cc)")
    with tempfile.TemporaryDirectory() as tmp:
        lib = os.path.join(tmp, "libcount.so")
        src = os.path.join(tmp, "count.c")
        with open(src, "w") as f:
            f.write(_SHIM)
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", lib, src], check=True)
        out = os.path.join(tmp, "cg.out")
        subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no",
                        "--collect-atstart=no", f"--callgrind-out-file={out}",
                        sys.executable, os.path.abspath(__file__), "--child", lib,
                        "-n", str(args.n)], check=True, capture_output=True)
        totals = {}
        for path in glob.glob(out + ".*"):
            with open(path) as f:
                text = f.read()
            part = next((int(line.split()[1]) for line in text.splitlines()
                         if line.startswith("part:")), None)
            total = next((int(line.split()[1]) for line in text.splitlines()
                          if line.startswith("totals:")), None)
            if part is not None and total is not None:
                totals[part] = total
    print(f"| statement | instructions per call ({args.n} counted) |\n|---|---|")
    for i, (stmt, title) in enumerate(STATEMENTS, 1):
        print(f"| {title}: `{stmt}` | {totals.get(i, 0) / args.n:,.0f} |")


if __name__ == "__main__":
    main()
