"""numexpr against NumPy on the elementwise kernels of workload (d) (issue 12).

Issue 12 asks whether an optional kernel library (numexpr) beats NumPy's float32
transcendentals and should be used automatically when installed.  This bench answers it
on the kernels retrograd would hand over: the forwards sin, tanh, exp; the first-order
derivatives of sin, tanh and exp (``g*cos(x)``, ``g*(1-y*y)``, ``g*y``); and, numexpr's
best case, one cycle of (d)'s whole backward as one expression
(``g + g*0.1*e*(1-t*t)*cos(h)``, eight NumPy passes).  For each: the median time per call
(paired, interleaved repeats, CPU time and wall time; numexpr at 1 thread and at its
default), and the largest error in float32 ulps against a float64 reference (the fuzzer
compares float32 results with PyTorch's within tolerances: a library less accurate than
NumPy would need wider ones).

numexpr is no dependency of retrograd: `pip install numexpr` for this bench only.

Result (2026-12-02, numexpr 2.14.2 from PyPI, which has no VML; NumPy 2.4.6 with AVX-512;
a 2-core machine shared with other jobs, so the CPU-time ratios are the ones to read):
numexpr loses, so retrograd does not use it.  float32, numexpr / NumPy CPU time, 1 thread
(its default of 2 threads: the same or worse): sin x9-12, tanh x38-44, exp x4-5,
g*cos(x) x6-7, g*(1-y*y) x1.5-1.8, g*y x1.2-1.8, the whole backward cycle as one
expression x4-5.  NumPy's float32 sin/tanh/exp take 1-2x the time of a plain copy of the
array (0.4-0.9 ms against 0.5 ms): they are close to memory bound, which leaves a kernel
library little to win even where it is vectorised; numexpr's calls the scalar libm per
element.  Accuracy (max float32 ulps against float64): sin 0.56 (NumPy 1.41), exp 0.50
(2.35), but tanh 2.18 (1.37): worse than NumPy's.  float64: sin and g*cos(x) tie (x0.99-
1.05: both scalar libm), the rest lose (tanh x9, exp x6).  On (d) itself, the backward
steps in numexpr (``--workload-d 1``; measured then with the blockwise chains that
autograd/fused_chain.py ran until stop 25) took (d) from 1.03-1.27x hand-written NumPy to
2.8-3.3x.

    OPENBLAS_NUM_THREADS=1 python bench/numexpr_kernels.py [--size 1000] [--repeats 15]
    OPENBLAS_NUM_THREADS=1 python bench/numexpr_kernels.py --workload-d 1   # (d) itself
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time

import numpy as np

try:
    import numexpr as ne
except ImportError:
    sys.exit("bench/numexpr_kernels.py measures numexpr: `pip install numexpr` first")


def _cases(size, dtype):
    """name -> (numpy callable, numexpr expression, reference in float64, inputs)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((size, size)).astype(dtype)
    g = rng.standard_normal((size, size)).astype(dtype)
    y = np.tanh(x)
    e = np.exp(y)
    out = np.empty_like(x)
    tmp = np.empty_like(x)
    env = {"x": x, "g": g, "y": y, "e": e}
    x64, g64, y64, e64 = (a.astype(np.float64) for a in (x, g, y, e))

    def copy():  # the floor: read one array, write one (1000x1000 float32 leaves L2)
        np.copyto(out, x)

    def sin():
        np.sin(x, out=out)

    def tanh():
        np.tanh(x, out=out)

    def exp():
        np.exp(x, out=out)

    def g_cos():  # SinBackward0's step
        np.cos(x, out=tmp)
        np.multiply(tmp, g, out=out)

    def g_tanh():  # TanhBackward0's step
        np.multiply(y, y, out=tmp)
        np.subtract(1, tmp, out=tmp)
        np.multiply(tmp, g, out=out)

    def g_y():  # ExpBackward0's step
        np.multiply(g, y, out=out)

    c = dtype(0.1)

    def cycle():  # one cycle of (d)'s backward, as bench/run.py's hand-written NumPy
        np.multiply(g, c, out=out)
        np.multiply(out, e, out=out)
        np.multiply(y, y, out=tmp)
        np.subtract(1, tmp, out=tmp)
        np.multiply(out, tmp, out=out)
        np.cos(x, out=tmp)
        np.multiply(out, tmp, out=out)
        np.add(out, g, out=out)

    return env, out, {
        "copy": (copy, "x", x64),
        "sin": (sin, "sin(x)", np.sin(x64)),
        "tanh": (tanh, "tanh(x)", np.tanh(x64)),
        "exp": (exp, "exp(x)", np.exp(x64)),
        "g*cos(x)": (g_cos, "g*cos(x)", g64 * np.cos(x64)),
        "g*(1-y*y)": (g_tanh, "(1-y*y)*g", (1 - y64 * y64) * g64),
        "g*y": (g_y, "g*y", g64 * y64),
        "cycle": (cycle, "g + g*c*e*(1-y*y)*cos(x)",
                  g64 + g64 * float(c) * e64 * (1 - y64 * y64) * np.cos(x64)),
    }, c


def _ulps(got, ref, dtype):
    """The largest |got - ref| in ulps of ``dtype`` at ref (ref in float64)."""
    r = ref.astype(dtype)
    spacing = np.spacing(np.abs(r)).astype(np.float64)
    return float(np.max(np.abs(got.astype(np.float64) - ref) / spacing))


def _ne_call(expr, env, out, threads):
    def call():
        ne.set_num_threads(threads)
        ne.evaluate(expr, local_dict=env, out=out)

    return call


def _paired(fns, repeats, clock):
    times = {n: [] for n in fns}
    names = list(fns)
    for r in range(repeats):
        gc.collect()
        gc.disable()
        shift = r % len(names)
        for n in names[shift:] + names[:shift]:
            t0 = clock()
            fns[n]()
            times[n].append(clock() - t0)
        gc.enable()
    med = {n: statistics.median(t) for n, t in times.items()}
    ratio = {n: statistics.median(a / b for a, b in zip(times[n], times["numpy"]))
             for n in names if n != "numpy"}
    return med, ratio


def _swap_derivatives(threads):
    """(d) with the first-order derivatives of sin, tanh and exp evaluated by numexpr
    instead (the forwards stay NumPy's): the whole workload's answer, through
    bench/run.py."""
    from retrograd.ops import elementary

    ne.set_num_threads(threads)

    def sin_vjp(node, g, saved):
        return (ne.evaluate("cos(a)*g", local_dict={"a": saved[0], "g": g}),)

    def tanh_vjp(node, g, saved):
        return (ne.evaluate("(1-t*t)*g", local_dict={"t": saved[0], "g": g}),)

    def exp_vjp(node, g, saved):
        return (ne.evaluate("g*e", local_dict={"e": saved[0], "g": g}),)

    for op, vjp in ((elementary.sin, sin_vjp), (elementary.tanh, tanh_vjp),
                    (elementary.exp, exp_vjp)):
        op.op.node_cls.vjp = staticmethod(vjp)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=1000)
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--dtypes", default="float32,float64")
    p.add_argument("--workload-d", type=int, metavar="THREADS", default=None,
                   help="instead: bench/run.py's (d), its backward steps in numexpr")
    a = p.parse_args(argv)
    if a.workload_d is not None:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import run

        _swap_derivatives(a.workload_d)
        run.main(["--only", "d", "--clock", "cpu", "--repeats", str(a.repeats)])
        return
    default_threads = ne.get_num_threads()
    print(f"numexpr {ne.__version__} (VML: {ne.use_vml}, default threads {default_threads}),"
          f" numpy {np.__version__}, {a.size}x{a.size}, {a.repeats} paired repeats")
    print("times in ms; ratio = numexpr / numpy per repeat, median (>1: numexpr slower)")
    for dname in a.dtypes.split(","):
        dtype = np.dtype(dname).type
        env, out, cases, c = _cases(a.size, dtype)
        env["c"] = c
        print(f"\n{dname}")
        for name, (fn, expr, ref) in cases.items():
            fn()
            np_err = _ulps(out, ref, dtype) if dtype is np.float32 else float("nan")
            ne.set_num_threads(1)
            got = ne.evaluate(expr, local_dict=env)
            assert got.dtype == dtype, (expr, got.dtype)
            ne_err = _ulps(got, ref, dtype) if dtype is np.float32 else float("nan")

            fns = {"numpy": fn, "ne1": _ne_call(expr, env, out, 1),
                   "neN": _ne_call(expr, env, out, default_threads)}
            cpu, rc = _paired(fns, a.repeats, time.process_time)
            wall, rw = _paired(fns, a.repeats, time.perf_counter)
            ulp = f"  max ulp numpy {np_err:.2f} numexpr {ne_err:.2f}" \
                if dtype is np.float32 else ""
            print(f"  {name:10s} cpu: numpy {cpu['numpy'] * 1e3:7.3f} ne1 x{rc['ne1']:5.2f}"
                  f" ne{default_threads} x{rc['neN']:5.2f} | wall: numpy"
                  f" {wall['numpy'] * 1e3:7.3f} ne1 x{rw['ne1']:5.2f}"
                  f" ne{default_threads} x{rw['neN']:5.2f}{ulp}")
    ne.set_num_threads(default_threads)


if __name__ == "__main__":
    main()
