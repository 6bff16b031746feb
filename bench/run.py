"""retrograd vs PyTorch (CPU, 1 thread and default threads) vs hand-written NumPy.

One run measures every contestant on the same inputs, interleaved round-robin (so a
machine that slows down mid-run slows everybody), and reports medians and *paired*
ratios: for every repeat, retrograd's time divided by the other contestant's time in that
same repeat, then the median of those ratios.  Gradients are checked equal (allclose)
before anything is timed.

Run ``python bench/run.py`` (about 2-3 minutes) or ``python bench/run.py --quick`` (a
smoke run of a few seconds).  See bench/README.md for how to read the table.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time

try:
    import resource
except ImportError:  # not on Windows
    resource = None

import numpy as np

try:  # run from a checkout without installing
    import retrograd as R
except ImportError:  # pragma: no cover
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
    import retrograd as R

import torch
import torch.nn.functional as TF

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
from digits_mlp import init_mlp, load_digits_standardized, mlp_forward  # noqa: E402

import retrograd.nn.functional as RF

TORCH_DEFAULT_THREADS = torch.get_num_threads()
CONTESTANTS = ("retrograd", "torch1", "torchN", "numpy")


# --------------------------------------------------------------------------- helpers
def _np(x):
    """Any contestant's gradient as a NumPy array (outside the timed region)."""
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    if isinstance(x, R.Tensor):
        return x.detach().numpy()
    return np.asarray(x)


def _check(name, results, rtol, atol):
    """Every contestant must produce the same gradients as retrograd before timing."""
    ref = [_np(g) for g in results["retrograd"]]
    for who, grads in results.items():
        got = [_np(g) for g in grads]
        if len(got) != len(ref):
            raise AssertionError(f"{name}: {who} returned {len(got)} results, expected {len(ref)}")
        for i, (a, b) in enumerate(zip(ref, got)):
            if a.shape != b.shape or not np.allclose(a, b, rtol=rtol, atol=atol):
                err = np.max(np.abs(a.astype(np.float64) - b)) if a.shape == b.shape else "shape"
                raise AssertionError(
                    f"{name}: result {i} of {who} differs from retrograd's (max abs err {err})"
                )


def _r(a, requires_grad=False):
    return R.tensor(a, requires_grad=requires_grad)


def _t(a, requires_grad=False):
    return torch.tensor(a, requires_grad=requires_grad)


# --------------------------------------------------------------------------- workloads
# Each workload returns (fns, inner, rtol, atol): fns maps a contestant to a callable
# doing ONE iteration and returning its gradients (or outputs) for the equality check.


def wl_seed(quick):
    """(a) the seed example: y = 2x; z = y**3; z.backward() on a 1x1 leaf."""
    x0 = np.array([[0.7]], dtype=np.float32)
    xr = _r(x0, True)
    xt = _t(x0, True)

    def rg():
        xr.grad = None
        z = (2 * xr) ** 3
        z.backward()
        return [xr.grad]

    def th():
        xt.grad = None
        z = (2 * xt) ** 3
        z.backward()
        return [xt.grad]

    def nump():
        y = 2 * x0
        _z = y ** 3
        gy = 3 * y ** 2  # dz/dy with dz = 1
        return [gy * 2]

    return {"retrograd": rg, "torch": th, "numpy": nump}, 200 if quick else 2000, 1e-5, 1e-6


def _chain_cycle(shape, cycles, dtype):
    """(b)/(d): cycles of h = h + exp(tanh(sin(h))) * 0.1, then sum().backward()."""
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal(shape).astype(dtype)
    xr = _r(x0, True)
    xt = _t(x0, True)

    def rg():
        xr.grad = None
        h = xr
        for _ in range(cycles):
            h = h + R.exp(R.tanh(R.sin(h))) * 0.1
        h.sum().backward()
        return [xr.grad]

    def th():
        xt.grad = None
        h = xt
        for _ in range(cycles):
            h = h + torch.exp(torch.tanh(torch.sin(h))) * 0.1
        h.sum().backward()
        return [xt.grad]

    def nump():
        h = x0
        tape = []
        for _ in range(cycles):
            s = np.sin(h)
            t = np.tanh(s)
            e = np.exp(t)
            tape.append((h, t, e))
            h = h + e * 0.1
        g = np.ones_like(h)
        for h_in, t, e in reversed(tape):
            # d/dh [h + 0.1 exp(tanh(sin h))] = 1 + 0.1 e (1 - t^2) cos h
            g = g + g * 0.1 * e * (1 - t * t) * np.cos(h_in)
        return [g]

    return {"retrograd": rg, "torch": th, "numpy": nump}


def wl_small_vec(quick):
    """(b) 100 cycles of [sin, tanh, exp, *0.1, +] on a (16,) tensor."""
    return _chain_cycle((16,), 100, np.float32), 3 if quick else 30, 1e-4, 1e-5


def wl_big(quick):
    """(d) 4 cycles of [sin, tanh, exp, *0.1, +] on a (1000, 1000) float32 tensor."""
    return _chain_cycle((1000, 1000), 4, np.float32), 1 if quick else 3, 1e-4, 1e-5


def _scalar_cycle(cycles):
    """(c)/(h): h = relu(h*h*-0.01 + h + 0.01) on a 0-d tensor, then backward."""
    x0 = np.array(0.5, dtype=np.float32)
    xr = _r(x0, True)
    xt = _t(x0, True)

    def rg():
        xr.grad = None
        h = xr
        for _ in range(cycles):
            h = R.relu(h * h * -0.01 + h + 0.01)
        h.backward()
        return [xr.grad]

    def th():
        xt.grad = None
        h = xt
        for _ in range(cycles):
            h = torch.relu(h * h * -0.01 + h + 0.01)
        h.backward()
        return [xt.grad]

    def nump():
        h = x0
        tape = []
        for _ in range(cycles):
            sq = h * h
            u = sq * np.float32(-0.01) + h + np.float32(0.01)
            tape.append((h, u))
            h = np.maximum(u, np.float32(0))
        g = np.ones_like(h)
        for h_in, u in reversed(tape):
            g = g * (u > 0) * (np.float32(-0.02) * h_in + 1)
        return [g]

    return {"retrograd": rg, "torch": th, "numpy": nump}


def wl_scalar(quick):
    """(c) 100 cycles of [h*h, *-0.01, +h, +0.01, relu] on a 0-d tensor."""
    return _scalar_cycle(100), 3 if quick else 30, 1e-4, 1e-6


def wl_long_chain(quick):
    """(h) a 20,000-op chain (4,000 cycles of (c)'s 5 ops) on a 0-d tensor, then backward."""
    return _scalar_cycle(4000), 1, 1e-3, 1e-6


def _digits():
    x, y = load_digits_standardized()
    return x.astype(np.float32), y


def _np_mlp_fwd_bwd(params, x, y):
    """Hand-written forward and backward of the ReLU MLP with mean cross-entropy."""
    n = len(params) // 2
    acts = [x]
    h = x
    for i in range(n):
        z = h @ params[2 * i] + params[2 * i + 1]
        h = np.maximum(z, 0) if i < n - 1 else z
        acts.append(h)
    logits = h
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    p = e / e.sum(axis=1, keepdims=True)
    b = x.shape[0]
    loss = -(shifted[np.arange(b), y] - np.log(e.sum(axis=1))).mean()
    g = p
    g[np.arange(b), y] -= 1
    g /= b
    grads = [None] * len(params)
    for i in reversed(range(n)):
        a = acts[i]
        grads[2 * i] = a.T @ g
        grads[2 * i + 1] = g.sum(axis=0)
        if i:
            g = (g @ params[2 * i].T) * (a > 0)
    return loss, grads


def _batches(x, y, bs):
    return [(x[i:i + bs], y[i:i + bs]) for i in range(0, len(x) - bs + 1, bs)]


def wl_mlp_train(quick):
    """(e) SGD steps of a 64-128-128-10 ReLU MLP, cross-entropy, batch 64, on digits."""
    x, y = _digits()
    batches = _batches(x, y, 64)
    init = init_mlp([64, 128, 128, 10], 0)
    lr = 0.05
    rb = [(_r(a), _r(b)) for a, b in batches]
    tb = [(_t(a), _t(b)) for a, b in batches]
    pr = [_r(p, True) for p in init]
    pt = [_t(p, True) for p in init]
    pn = [p.copy() for p in init]
    step = {"r": 0, "t": 0, "n": 0}

    def rg():
        xb, yb = rb[step["r"] % len(rb)]
        step["r"] += 1
        loss = RF.cross_entropy(mlp_forward(pr, xb, R.relu), yb)
        loss.backward()
        grads = [p.grad for p in pr]
        with R.no_grad():
            for p in pr:
                p -= lr * p.grad
                p.grad = None
        return grads

    def th():
        xb, yb = tb[step["t"] % len(tb)]
        step["t"] += 1
        loss = TF.cross_entropy(mlp_forward(pt, xb, torch.relu), yb)
        loss.backward()
        grads = [p.grad for p in pt]
        with torch.no_grad():
            for p in pt:
                p -= lr * p.grad
                p.grad = None
        return grads

    def nump():
        xb, yb = batches[step["n"] % len(batches)]
        step["n"] += 1
        _loss, grads = _np_mlp_fwd_bwd(pn, xb, yb)
        for p, g in zip(pn, grads):
            p -= lr * g
        return grads

    return {"retrograd": rg, "torch": th, "numpy": nump}, 5 if quick else 50, 1e-4, 1e-5


def wl_mlp_module(quick):
    """(m) workload (e) written with nn.Linear modules and F.cross_entropy (SGD by hand)."""
    x, y = _digits()
    batches = _batches(x, y, 64)
    init = init_mlp([64, 128, 128, 10], 0)
    lr = 0.05
    rb = [(_r(a), _r(b)) for a, b in batches]
    tb = [(_t(a), _t(b)) for a, b in batches]
    pn = [p.copy() for p in init]

    def build(nn, make):
        layers = []
        for i in range(0, len(init), 2):
            w, b = init[i], init[i + 1]
            lin = nn.Linear(w.shape[0], w.shape[1])
            lin.weight = nn.Parameter(make(np.ascontiguousarray(w.T)))
            lin.bias = nn.Parameter(make(b.copy()))
            layers += [lin, nn.ReLU()]
        return nn.Sequential(*layers[:-1])

    mr, mt = build(R.nn, R.tensor), build(torch.nn, torch.tensor)
    pr, pt = list(mr.parameters()), list(mt.parameters())
    step = {"r": 0, "t": 0, "n": 0}

    def rg():
        xb, yb = rb[step["r"] % len(rb)]
        step["r"] += 1
        loss = RF.cross_entropy(mr(xb), yb)
        loss.backward()
        grads = [p.grad for p in pr]
        with R.no_grad():
            for p in pr:
                p -= lr * p.grad
        mr.zero_grad()
        return grads

    def th():
        xb, yb = tb[step["t"] % len(tb)]
        step["t"] += 1
        loss = TF.cross_entropy(mt(xb), yb)
        loss.backward()
        grads = [p.grad for p in pt]
        with torch.no_grad():
            for p in pt:
                p -= lr * p.grad
        mt.zero_grad()
        return grads

    def nump():
        xb, yb = batches[step["n"] % len(batches)]
        step["n"] += 1
        _loss, grads = _np_mlp_fwd_bwd(pn, xb, yb)
        for p, g in zip(pn, grads):
            p -= lr * g
        return [g.T if g.ndim == 2 else g for g in grads]  # nn.Linear's (out, in) layout

    return {"retrograd": rg, "torch": th, "numpy": nump}, 5 if quick else 50, 1e-4, 1e-5


def wl_mlp_infer(quick):
    """(f) the same MLP's forward under no_grad (batch 64)."""
    x, _ = _digits()
    xb = x[:64]
    init = init_mlp([64, 128, 128, 10], 0)
    pr = [_r(p, True) for p in init]
    pt = [_t(p, True) for p in init]
    xr, xt = _r(xb), _t(xb)

    def rg():
        with R.no_grad():
            return [mlp_forward(pr, xr, R.relu)]

    def th():
        with torch.no_grad():
            return [mlp_forward(pt, xt, torch.relu)]

    def nump():
        return [mlp_forward(init, xb, lambda h: np.maximum(h, 0))]

    return {"retrograd": rg, "torch": th, "numpy": nump}, 20 if quick else 300, 1e-4, 1e-5


def wl_hvp(quick):
    """(g) Hessian-vector product of a 64-64-10 tanh MLP's cross-entropy loss (batch 64)."""
    x, y = _digits()
    xb, yb = x[:64], y[:64]
    init = init_mlp([64, 64, 10], 1)
    rng = np.random.default_rng(2)
    vec = [rng.standard_normal(p.shape).astype(np.float32) for p in init]
    pr = [_r(p, True) for p in init]
    pt = [_t(p, True) for p in init]
    vr = [_r(v) for v in vec]
    vt = [_t(v) for v in vec]
    xr, yr, xt, yt = _r(xb), _r(yb), _t(xb), _t(yb)

    def rg():
        loss = RF.cross_entropy(R.tanh(xr @ pr[0] + pr[1]) @ pr[2] + pr[3], yr)
        gs = R.autograd.grad(loss, pr, create_graph=True)
        dot = sum((g * v).sum() for g, v in zip(gs, vr))
        return list(R.autograd.grad(dot, pr))

    def th():
        loss = TF.cross_entropy(torch.tanh(xt @ pt[0] + pt[1]) @ pt[2] + pt[3], yt)
        gs = torch.autograd.grad(loss, pt, create_graph=True)
        dot = sum((g * v).sum() for g, v in zip(gs, vt))
        return list(torch.autograd.grad(dot, pt))

    def nump():
        # Pearlmutter's R-operator: forward and backward passes differentiated along v.
        w1, b1, w2, b2 = init
        v1, c1, v2, c2 = vec
        b = xb.shape[0]
        h = np.tanh(xb @ w1 + b1)
        dh_dz = 1 - h * h
        rh = dh_dz * (xb @ v1 + c1)
        logits = h @ w2 + b2
        rlogits = rh @ w2 + h @ v2 + c2
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        p = e / e.sum(axis=1, keepdims=True)
        rp = p * (rlogits - (p * rlogits).sum(axis=1, keepdims=True))
        g = p.copy()
        g[np.arange(b), yb] -= 1
        g /= b
        rg_ = rp / b
        rw2 = rh.T @ g + h.T @ rg_
        rb2 = rg_.sum(axis=0)
        dh = g @ w2.T
        rdh = rg_ @ w2.T + g @ v2.T
        rdz = rdh * dh_dz - dh * 2 * h * rh
        return [xb.T @ rdz, rdz.sum(axis=0), rw2, rb2]

    return {"retrograd": rg, "torch": th, "numpy": nump}, 3 if quick else 30, 1e-3, 1e-5


# key, title, workload, (reference contestant, bound): issue 12's targets (d: ahead of
# hand-written NumPy; f: within 5% of it; the rest: ahead of torch on one thread)
WORKLOADS = [
    ("a", "seed: (2x)**3 backward, 1x1", wl_seed, ("torch1", 1.0)),
    ("b", "100x[sin,tanh,exp,*,+] on (16,)", wl_small_vec, ("torch1", 1.0)),
    ("c", "100x[h*h,*,+h,+c,relu] on 0-d", wl_scalar, ("torch1", 1.0)),
    ("d", "4x[sin,tanh,exp,*,+] on 1000x1000 f32", wl_big, ("numpy", 1.0)),
    ("e", "MLP 64-128-128-10 SGD step, batch 64", wl_mlp_train, ("torch1", 1.0)),
    ("f", "MLP 64-128-128-10 forward, no_grad", wl_mlp_infer, ("numpy", 1.05)),
    ("g", "HVP of 64-64-10 tanh MLP loss", wl_hvp, ("torch1", 1.0)),
    ("h", "20,000-op chain on 0-d, backward", wl_long_chain, ("torch1", 1.0)),
    ("m", "MLP step with nn.Linear modules (e)", wl_mlp_module, ("torch1", 1.0)),
]


# --------------------------------------------------------------------------- timing
_SETTLE_S = float(os.environ.get("BENCH_SETTLE_S", "0.01"))
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
_clock = time.perf_counter


def _minor_faults():
    # page faults: on big tensors, memory freed to the OS and touched again costs more than
    # the arithmetic (DESIGN.md: measure faults, not only time)
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt if resource else 0


def _timed(fn, inner, threads=None, faults=None):
    if threads is not None:
        torch.set_num_threads(threads)
    f0 = _minor_faults()
    t0 = _clock()
    for _ in range(inner):
        fn()
    elapsed = (_clock() - t0) / inner
    if faults is not None:
        faults.append((_minor_faults() - f0) / inner)
    return elapsed


def measure(fns, inner, repeats):
    """Round-robin: every repeat times every contestant once, in a rotating order."""
    runs = {
        "retrograd": (fns["retrograd"], None),
        "torch1": (fns["torch"], 1),
        "torchN": (fns["torch"], TORCH_DEFAULT_THREADS),
        "numpy": (fns["numpy"], None),
    }
    times = {k: [] for k in runs}
    faults = {k: [] for k in runs}
    order = list(runs)
    for name in order:  # warm-up (caches, allocator, lazy imports)
        fn, threads = runs[name]
        _timed(fn, 1, threads)
    gc_was = gc.isenabled()
    gc.disable()  # a collection landing in one contestant's slot would skew its pair
    try:
        for r in range(repeats):
            rot = order[r % len(order):] + order[:r % len(order)]
            for name in rot:
                fn, threads = runs[name]
                times[name].append(_timed(fn, inner, threads, faults[name]))
                if threads is not None and threads > 1:
                    # torch's OpenMP workers spin for a while after their last task; let
                    # them go to sleep before the next contestant's clock starts.
                    time.sleep(_SETTLE_S)
            gc.collect()
    finally:
        if gc_was:
            gc.enable()
        torch.set_num_threads(TORCH_DEFAULT_THREADS)
    return times, faults


def _quartiles(values):
    if len(values) < 2:
        return values[0], values[0]
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q3


def _fmt_time(s):
    if s < 1e-3:
        return f"{s * 1e6:.1f} us"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a fast smoke run")
    parser.add_argument("--repeats", type=int, default=None, help="round-robin repeats")
    parser.add_argument("--only", default="", help="workload keys to run, e.g. 'abh'")
    parser.add_argument("--blas-threads", type=int, default=1,
                        help="threads for NumPy's BLAS (0: leave the library's default)")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                        help="wall: elapsed time; cpu: this process's CPU time (robust to other "
                             "load on a shared machine, but sums torch's threads)")
    parser.add_argument("--strict", action="store_true",
                        help="exit with status 1 when a target is not met")
    args = parser.parse_args(argv)
    repeats = args.repeats or (3 if args.quick else 9)
    global _clock
    _clock = CLOCKS[args.clock]
    if args.blas_threads:
        # NumPy's OpenBLAS threads busy-wait after each call, as do torch's OpenMP threads;
        # on a small machine the two pools fight over cores and the timings turn to noise
        # (x10 swings).  One BLAS thread makes retrograd and NumPy single-threaded, like
        # the torch-1-thread reference the targets are set against.
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:  # comes with scikit-learn; without it, say so and go on
            print("(threadpoolctl is not installed: NumPy's BLAS keeps its default threads)",
                  file=sys.stderr)
        else:
            threadpool_limits(args.blas_threads, user_api="blas")

    print(f"# retrograd benchmark ({'quick' if args.quick else 'full'}, {repeats} repeats, "
          f"{args.clock} clock)\n")
    print(f"numpy {np.__version__}, torch {torch.__version__} (default threads "
          f"{TORCH_DEFAULT_THREADS}), python {sys.version.split()[0]}, "
          f"NumPy BLAS threads {args.blas_threads or 'default'}, "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '')!r}\n")
    rows = []
    all_met = True
    for key, title, workload, (ref, bound) in WORKLOADS:
        if args.only and key not in args.only:
            continue
        fns, inner, rtol, atol = workload(args.quick)
        # Same inputs, same gradients: check on a fresh run before timing anything.
        torch.set_num_threads(1)
        results = {"retrograd": fns["retrograd"](), "torch": fns["torch"](),
                   "numpy": fns["numpy"]()}
        torch.set_num_threads(TORCH_DEFAULT_THREADS)
        _check(title, results, rtol, atol)
        times, faults = measure(fns, inner, repeats)
        med = {k: statistics.median(v) for k, v in times.items()}
        per_repeat = {k: [a / b for a, b in zip(times["retrograd"], times[k])]
                      for k in ("torch1", "torchN", "numpy")}
        ratio = {k: statistics.median(v) for k, v in per_repeat.items()}
        # The quartiles of the per-repeat ratios: on a shared machine one repeat can swing by
        # 10%, so a target is shown met only when the spread says so, not by one median.
        spread = {k: _quartiles(v) for k, v in per_repeat.items()}
        met = ratio[ref] < bound
        all_met &= met
        rows.append((key, title, med, ratio, ref, bound, met,
                     {k: statistics.median(v) for k, v in faults.items()}, spread))
        print(f"  ({key}) {title}: done", file=sys.stderr, flush=True)

    print("| workload | retrograd | torch 1 thread | torch default | numpy | "
          "rg/torch1 | rg/torchN | rg/numpy | target | met? |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for key, title, med, ratio, ref, bound, met, _, _ in rows:
        target = f"rg/{ref} < {bound:g}"
        print(f"| ({key}) {title} | {_fmt_time(med['retrograd'])} | {_fmt_time(med['torch1'])} "
              f"| {_fmt_time(med['torchN'])} | {_fmt_time(med['numpy'])} | "
              f"{ratio['torch1']:.2f} | {ratio['torchN']:.2f} | {ratio['numpy']:.2f} | "
              f"{target} | {'yes' if met else '**no**'} |")
    print(f"\nTimes are medians per iteration over {repeats} interleaved repeats; ratios are "
          "medians of per-repeat ratios (below 1 means retrograd is faster).")
    print("\nQuartiles (25%-75%) of the per-repeat ratios:\n")
    print("| workload | rg/torch1 | rg/torchN | rg/numpy |")
    print("|---|---|---|---|")
    for key, title, *_, spread in rows:
        cells = " | ".join(f"{spread[k][0]:.2f}-{spread[k][1]:.2f}"
                           for k in ("torch1", "torchN", "numpy"))
        print(f"| ({key}) {title} | {cells} |")
    print("\nMinor page faults per iteration (median):\n")
    print("| workload | retrograd | torch 1 thread | torch default | numpy |")
    print("|---|---|---|---|---|")
    for key, title, *_, flt, _ in rows:
        print(f"| ({key}) {title} | {flt['retrograd']:.0f} | {flt['torch1']:.0f} | "
              f"{flt['torchN']:.0f} | {flt['numpy']:.0f} |")
    return 1 if args.strict and not all_met else 0


if __name__ == "__main__":
    sys.exit(main())
