"""retrograd.compile: a compiled step against eager retrograd, hand-written NumPy and
PyTorch (one thread), plus the memory of a compiled step over many calls.

Run ``python bench/compile.py`` (about two minutes) or ``--quick``; ``--only mach`` picks
workloads (m, a, c, h below; s: memory).  Workloads:

* ``mlp-sgd`` / ``mlp-adam``: a 64-128-128-10 ReLU MLP of nn.Linear modules on the digits
  data (batch 64), F.cross_entropy, ``optimizer.zero_grad(); loss.backward();
  optimizer.step()``; NumPy is the same step written by hand (SGD, or Adam's update).
  For SGD, ``floor`` is the NumPy calls eager makes, by hand, with no Python around them
  (compiled/floor is the Python left in the replay; the lowered replay also writes into
  dying intermediates with ``out=`` and skips copies, so it can go below it).
* ``chain``: 100 cycles of ``h = h + exp(tanh(sin(h))) * 0.1`` (500 ops) on a (16,)
  tensor, ``sum().backward()``; NumPy is the forward and backward by hand.
* ``hvp``: bench/run.py's workload (g), a Hessian-vector product of a 64-64-10 tanh MLP's
  cross-entropy loss (``autograd.grad(create_graph=True)``, then ``grad`` of the dot with
  ``v``); NumPy is Pearlmutter's R-operator by hand.
* memory: RSS and tracemalloc's current size after 1,000 and after 10,000 compiled calls
  of a small step (10 cycles of ``chain``: 40 ops, backward).

Times are CPU time of this process (``--clock wall`` for wall time; BLAS is limited to one
thread, so the two agree on a quiet machine), medians over round-robin repeats;
``compiled/X`` is the median of paired ratios (compiled time / X time in the same repeat).
Targets (issue 12): mlp within 1.3x NumPy, chain and hvp within 2x NumPy.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))

import retrograd as R  # noqa: E402
import retrograd.nn.functional as RF  # noqa: E402
from digits_mlp import init_mlp, load_digits_standardized  # noqa: E402

import run as _run_bench  # noqa: E402  (its hand-written NumPy MLP step)

try:
    import torch
    import torch.nn.functional as TF

    torch.set_num_threads(1)
except ImportError:  # pragma: no cover
    torch = None


def _mlp(kind):
    x, y = load_digits_standardized()
    x = x.astype(np.float32)
    bs = 64
    batches = [(x[i:i + bs], y[i:i + bs]) for i in range(0, len(x) - bs + 1, bs)]
    init = init_mlp([64, 128, 128, 10], 0)
    lr = 0.05 if kind == "sgd" else 1e-3

    def build(nn, make):
        layers = []
        for i in range(0, len(init), 2):
            lin = nn.Linear(*init[i].shape)
            lin.weight = nn.Parameter(make(np.ascontiguousarray(init[i].T)))
            lin.bias = nn.Parameter(make(init[i + 1].copy()))
            layers += [lin, nn.ReLU()]
        return nn.Sequential(*layers[:-1])

    def opt_for(lib, params):
        return lib.optim.SGD(params, lr=lr) if kind == "sgd" else lib.optim.Adam(params, lr=lr)

    out = {}
    models = {}
    for name, lib, F, make, wrap in (
            ("eager", R, RF, R.tensor, lambda f: f),
            ("compiled", R, RF, R.tensor, R.compile),
            ("torch1", torch, TF if torch else None, torch.tensor if torch else None,
             lambda f: f)):
        if lib is None:
            continue
        model = build(lib.nn, make)
        opt = opt_for(lib, model.parameters())
        data = [(make(a), make(b)) for a, b in batches]

        def step(xb, yb, model=model, opt=opt, fn=F):
            opt.zero_grad()
            loss = fn.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            return loss

        step = wrap(step)
        counter = [0]

        def run(step=step, data=data, counter=counter):
            xb, yb = data[counter[0] % len(data)]
            counter[0] += 1
            return step(xb, yb)

        out[name] = run
        models[name] = model
    pn = [p.copy() for p in init]
    state = {"t": 0, "m": [np.zeros_like(p) for p in pn], "v": [np.zeros_like(p) for p in pn]}
    counter = [0]

    def nump():
        xb, yb = batches[counter[0] % len(batches)]
        counter[0] += 1
        # the same hand-written step as bench/run.py (e) and mlp_module.py
        _loss, grads = _run_bench._np_mlp_fwd_bwd(pn, xb, yb)
        if kind == "sgd":
            for p, g in zip(pn, grads):
                p -= lr * g
            return
        state["t"] += 1
        t = state["t"]
        for p, g, m, v in zip(pn, grads, state["m"], state["v"]):
            m *= 0.9
            m += 0.1 * g
            v *= 0.999
            v += 0.001 * g * g
            p -= (lr / (1 - 0.9 ** t)) * m / (np.sqrt(v) / np.sqrt(1 - 0.999 ** t) + 1e-8)

    out["numpy"] = nump
    if kind == "sgd":
        out["floor"] = _eager_array_calls(batches, init, lr)
        for _ in range(3):  # (the compiled one traces twice, then replays)
            got, want = out["compiled"]().detach().numpy(), out["floor"]()
            assert np.array_equal(got, want), "floor: not eager's array calls any more"
    return out, models


def _eager_array_calls(batches, init, lr):
    """The SGD step as the NumPy calls eager retrograd makes (the element operations a
    bit-identical replay must make), written by hand with no Python layer around them.
    More array work than ``numpy``: log_softmax then nll instead of one
    softmax, the weight gradients computed transposed and copied into ``.grad``, relu's
    derivative through a mask and a finiteness check, SGD through a scratch buffer."""
    weights = [np.ascontiguousarray(init[i].T) for i in range(0, len(init), 2)]
    biases = [init[i + 1].copy() for i in range(0, len(init), 2)]
    tmps = [np.empty_like(p) for p in weights + biases]
    counter = [0]
    n = len(weights)

    def step():
        xb, yb = batches[counter[0] % len(batches)]
        counter[0] += 1
        acts = [xb]
        h = xb
        for i in range(n):
            z = biases[i] + h @ weights[i].T
            h = np.maximum(z, 0) if i < n - 1 else z
            acts.append(h)
        shifted = h - h.max(axis=1, keepdims=True)
        logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        b = xb.shape[0]
        loss = (-logp[np.arange(b), yb]).sum() / b
        g = np.zeros(logp.shape, logp.dtype)
        g[np.arange(b), yb] = -(np.float32(1.0) / b)
        g = g - np.exp(logp) * g.sum(axis=1, keepdims=True)
        grads = [None] * (2 * n)
        for i in reversed(range(n)):
            gx = g @ weights[i] if i else None
            gw = acts[i].swapaxes(-1, -2) @ g
            grads[n + i] = g.sum(axis=(0,), keepdims=True).reshape((g.shape[1],)).copy()
            grads[i] = gw.swapaxes(-1, -2).copy()
            if i:
                keep = ~(acts[i] <= 0)
                g = gx * keep if np.isfinite(gx).all() else np.where(keep, gx, 0.0)
        for p, gr, t in zip(weights + biases, grads, tmps):
            np.multiply(gr, -lr, out=t)
            p += t
        return loss

    return step


def _chain_step(lib, h0, cycles=100):
    def step(h):
        h.grad = None
        x = h
        for _ in range(cycles):
            x = x + lib.exp(lib.tanh(lib.sin(x))) * 0.1
        x.sum().backward()
        return h.grad

    return step


def _chain():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(16).astype(np.float32)
    out = {}
    for name, lib, wrap in (("eager", R, lambda f: f), ("compiled", R, R.compile),
                            ("torch1", torch, lambda f: f)):
        if lib is None:
            continue
        h = lib.tensor(a.copy(), requires_grad=True)
        step = wrap(_chain_step(lib, h))
        out[name] = lambda step=step, h=h: step(h)

    def nump():
        xs = [a]
        x = a
        for _ in range(100):
            s = np.sin(x)
            t = np.tanh(s)
            e = np.exp(t)
            xs.append((x, s, t, e))
            x = x + e * np.float32(0.1)
        g = np.ones_like(x)
        for x_, _s, t, e in reversed(xs[1:]):
            g = g + (g * np.float32(0.1)) * e * (1 - t * t) * np.cos(x_)
        return g

    out["numpy"] = nump
    return out


def _hvp():
    # bench/run.py's workload (g): the step as a user writes it, and Pearlmutter's
    # R-operator written out in NumPy (one copy of that code)
    fns = _run_bench.wl_hvp(False)[0]
    out = {"eager": fns["retrograd"], "compiled": R.compile(fns["retrograd"]),
           "torch1": fns["torch"], "numpy": fns["numpy"]}
    for _ in range(3):  # the compiled one traces twice, then replays: check the replay
        got = out["compiled"]()
    want = fns["numpy"]()
    assert all(np.allclose(g.numpy(), w, rtol=1e-3, atol=1e-5) for g, w in zip(got, want))
    return out


_clock = time.process_time  # CPU time: on a shared machine, waiting for a core is not ours


def measure(fns, inner, repeats):
    names = list(fns)
    for f in fns.values():  # warm up: the compiled ones trace here
        for _ in range(3):
            f()
    times = {n: [] for n in names}
    for r in range(repeats):
        order = names[r % len(names):] + names[:r % len(names)]
        gc.collect()
        gc.disable()
        for n in order:
            t0 = _clock()
            for _ in range(inner):
                fns[n]()
            times[n].append((_clock() - t0) / inner)
        gc.enable()
    return times


def report(title, times):
    print(f"\n{title}")
    for n, ts in times.items():
        print(f"  {n:>9}: {statistics.median(ts) * 1e6:9.1f} us")
    c = times["compiled"]
    for n in times:
        if n != "compiled":
            ratio = statistics.median(a / b for a, b in zip(c, times[n]))
            print(f"  compiled/{n}: {ratio:.2f}")


def _rss_kib():
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
    except OSError:  # pragma: no cover - not Linux
        return 0


def memory(calls):
    h = R.tensor(np.ones(16, np.float32), requires_grad=True)
    step = R.compile(_chain_step(R, h, cycles=10))  # a small step: 40 ops, backward

    def f():
        return step(h)

    for _ in range(10):
        f()
    tracemalloc.start()
    marks = []
    for i in range(1, calls + 1):
        f()
        if i in (calls // 10, calls):
            gc.collect()
            marks.append((i, _rss_kib(), tracemalloc.get_traced_memory()[0]))
    tracemalloc.stop()
    print(f"\nmemory of a compiled 40-op step (forward, backward, .grad) over {calls} calls")
    for i, rss, traced in marks:
        print(f"  after {i:>6} calls: RSS {rss} KiB, tracemalloc current {traced / 1024:.1f} KiB")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="machs")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="cpu: process time (default; robust on a busy machine), wall: "
                    "perf_counter")
    args = ap.parse_args(argv)
    global _clock
    _clock = time.process_time if args.clock == "cpu" else time.perf_counter
    try:  # one BLAS thread, as bench/run.py: busy-waiting pools distort small matmuls
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
    except ImportError:  # pragma: no cover
        pass
    inner, repeats = (5, 5) if args.quick else (20, 15)
    if "m" in args.only:
        fns, _ = _mlp("sgd")
        report("MLP step, nn.Linear + relu + cross_entropy + SGD (batch 64)",
               measure(fns, inner, repeats))
    if "a" in args.only:
        fns, _ = _mlp("adam")
        report("MLP step with Adam", measure(fns, inner, repeats))
    if "c" in args.only:
        report("500-op chain on (16,), backward", measure(_chain(), inner, repeats))
    if "h" in args.only:
        report("Hessian-vector product of a 64-64-10 tanh MLP's loss (create_graph=True)",
               measure(_hvp(), inner, repeats))
    if "s" in args.only:
        memory(1000 if args.quick else 10000)


if __name__ == "__main__":
    main()
