"""What each op of the MLP inference (bench/run.py (f)) adds to the same NumPy call.

Every op of ``h @ W + b`` / ``relu`` under ``no_grad``, at the MLP's shapes (batch 64,
float32, weights that require grad as the bench's do), is timed against the NumPy
expression it stands for, and ``with no_grad():`` against an empty statement.  The
contestants run interleaved, in blocks; each keeps its best block (a shared machine only
ever adds time), on this process's CPU clock.  ``overhead`` is the difference per call:
retrograd's Python (operator dispatch, checks, the result Tensor), or less than nothing
where retrograd's array call is cheaper than the plain NumPy one (relu's 0-d zero).

Run ``OPENBLAS_NUM_THREADS=1 python bench/inference_overhead.py`` (about 20 s) or
``--quick``.  On a loaded machine, read instruction counts instead (valgrind's callgrind
counts what a call executes, whatever else runs).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

try:  # run from a checkout without installing
    import retrograd as R
except ImportError:  # pragma: no cover
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
    import retrograd as R

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
from digits_mlp import init_mlp, mlp_forward  # noqa: E402


def _block(stmt, env, n):
    """A function timing ``n`` runs of ``stmt`` (compiled, so the loop costs no call)."""
    src = f"def block():\n    t0 = _clock()\n    for _ in _range:\n        {stmt}\n" \
          "    return (_clock() - t0) / _n\n"
    ns = dict(env, _clock=time.process_time, _range=range(n), _n=n)
    exec(src, ns)  # noqa: S102 - our own statements
    return ns["block"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    rounds, n = (5, 100) if args.quick else (40, 200)

    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 64)).astype(np.float32)
    params = init_mlp([64, 128, 128, 10], 0)
    w, b = params[0], params[1]
    h = x @ w
    env = {
        "R": R, "np": np, "mlp_forward": mlp_forward,
        "x": x, "w": w, "b": b, "h": h, "params": params,
        "rx": R.tensor(x), "rw": R.tensor(w, requires_grad=True),
        "rb": R.tensor(b, requires_grad=True), "rh": R.tensor(h),
        "rparams": [R.tensor(p, requires_grad=True) for p in params],
        "np_relu": lambda a: np.maximum(a, 0),
    }
    # (name, retrograd statement, NumPy statement, run under no_grad)
    rows = [
        ("MLP forward (f)", "with R.no_grad(): mlp_forward(rparams, rx, R.relu)",
         "mlp_forward(params, x, np_relu)", False),
        ("x @ W  (64x64 @ 64x128)", "rx @ rw", "x @ w", True),
        ("h + b  (64x128 + 128)", "rh + rb", "h + b", True),
        ("relu(h)  (64x128)", "R.relu(rh)", "np.maximum(h, 0)", True),
        ("with no_grad(): pass", "with R.no_grad(): pass", "pass", False),
    ]
    blocks = [(_block(rs, env, n), _block(ns, env, n), inside) for _, rs, ns, inside in rows]
    best = [[float("inf"), float("inf")] for _ in rows]
    for _ in range(rounds):
        for i, (rg, nump, inside) in enumerate(blocks):
            if inside:
                with R.no_grad():
                    t_rg = rg()
            else:
                t_rg = rg()
            t_np = nump()
            best[i][0] = min(best[i][0], t_rg)
            best[i][1] = min(best[i][1], t_np)

    print(f"# per call, best of {rounds} interleaved blocks of {n} (process CPU time)\n")
    print("| call | retrograd | numpy | overhead | rg/numpy |")
    print("|---|---|---|---|---|")
    for (name, *_), (t_rg, t_np) in zip(rows, best):
        ratio = f"{t_rg / t_np:.3f}" if t_np > 1e-7 else "-"
        print(f"| {name} | {t_rg * 1e6:.2f} us | {t_np * 1e6:.2f} us | "
              f"{(t_rg - t_np) * 1e9:+.0f} ns | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
