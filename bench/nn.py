"""Convolutional networks: one SGD training step, retrograd vs PyTorch vs hand-written NumPy.

Two workloads, each written three ways on the same inputs and the same initial weights:

* ``cnn_digits`` -- sklearn's digits (8x8, one channel), batch 64: conv 1->8 3x3 pad 1, relu,
  2x2 max-pool, conv 8->16 3x3 pad 1, relu, 2x2 max-pool, linear 64->10, cross-entropy;
* ``cnn_cifar`` -- a CIFAR-sized batch of 32 3x32x32 images (random, seeded): conv 3->32 and
  32->64 (3x3, padding 1), each followed by relu and a 2x2 max-pool, linear 4096->10;
* ``conv`` -- cnn_cifar's second convolution alone, forward and backward (input, weight and
  bias gradients): the convolution's own cost, without the pooling.

Contestants and timing as in bench/run.py (its helpers: round-robin repeats, paired median
ratios, gradients checked equal before timing, one BLAS thread for NumPy); the NumPy
contestant is the forward and backward written by hand with the best layout we know (im2col
from a strided window view, one batched matmul per layer and direction, col2im by one strided
add per kernel offset, columns reused for the weight gradient): the floor for a NumPy library.
The max-pool is ``nn.functional.max_pool2d`` where retrograd has it, else written with
retrograd ops (reshape + amax), and torch's ``F.max_pool2d``; the header says which ran.

Peak memory: each contestant runs a warm-up step and then 3 steps in a fresh subprocess
(Linux, glibc) and reports its peak resident set during the 3 minus what it held before
them (after ``malloc_trim``), i.e. a step's transient memory: activations, saved tensors,
gradients, column buffers.

Run ``python bench/nn.py`` (a minute or two), ``--quick`` for a smoke run, ``--only cifar``;
on a shared, busy machine ``--clock cpu`` (see bench/README.md).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as _bench  # noqa: E402  (bench/run.py: R, torch, the timing helpers)

R, torch, TF = _bench.R, _bench.torch, _bench.TF
RF = R.nn.functional
LR = 0.05


# --------------------------------------------------------------------------- the network
def _init(channels, hidden_in, seed):
    """Conv weights and biases (PyTorch's default uniform init) and the linear layer."""
    rng = np.random.default_rng(seed)
    params = []
    for cin, cout in zip(channels[:-1], channels[1:]):
        bound = 1 / np.sqrt(cin * 9)
        params += [rng.uniform(-bound, bound, (cout, cin, 3, 3)),
                   rng.uniform(-bound, bound, cout)]
    bound = 1 / np.sqrt(hidden_in)
    params += [rng.uniform(-bound, bound, (hidden_in, 10)), rng.uniform(-bound, bound, 10)]
    return [p.astype(np.float32) for p in params]


def _amax_pool(x):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).amax((3, 5))


R_POOL = getattr(RF, "max_pool2d", None)
POOL_USED = "F.max_pool2d" if R_POOL is not None else "reshape + amax (pooling not merged)"


def cnn_forward(nnf, pool, params, x):
    """The network, written once for retrograd and torch (``nnf``: their nn.functional)."""
    h = x
    for i in range(0, len(params) - 2, 2):
        h = pool(nnf.relu(nnf.conv2d(h, params[i], params[i + 1], padding=1)))
    return h.flatten(1) @ params[-2] + params[-1]


def _sgd_step(lib, nnf, pool, params, xb, yb):
    loss = nnf.cross_entropy(cnn_forward(nnf, pool, params, xb), yb)
    loss.backward()
    grads = [p.grad for p in params]
    with lib.no_grad():
        for p in params:
            p -= LR * p.grad
            p.grad = None
    return grads


# --------------------------------------------------------------------------- NumPy by hand
# Written as a careful NumPy programmer would: im2col from a strided window view into a
# (N, C*9, H*W) column buffer, one batched matmul per layer and direction (the output comes
# out in NCHW, no transpose), col2im by one strided add per kernel offset, the columns kept
# from the forward for the weight gradient, no input gradient for the first layer.
def _np_conv(x, w, b):
    """3x3, padding 1, stride 1: (output, columns (N, C*9, H*W))."""
    n, c, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))  # N C H W 3 3
    cols = win.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * 9, h * wd)  # the one copy
    y = np.matmul(w.reshape(w.shape[0], -1), cols).reshape(n, w.shape[0], h, wd)
    y += b[:, None, None]
    return y, cols


def _np_conv_back(gy, cols, w, x_shape, input_grad=True):
    n, c, h, wd = x_shape
    g2 = gy.reshape(n, w.shape[0], h * wd)
    gw = np.matmul(g2, cols.transpose(0, 2, 1)).sum(axis=0).reshape(w.shape)
    gb = gy.sum(axis=(0, 2, 3))
    if not input_grad:
        return None, gw, gb
    gcols = np.matmul(w.reshape(w.shape[0], -1).T, g2).reshape(n, c, 3, 3, h, wd)
    gxp = np.zeros((n, c, h + 2, wd + 2), gy.dtype)
    for i in range(3):
        for j in range(3):
            gxp[:, :, i:i + h, j:j + wd] += gcols[:, :, i, j]
    return gxp[:, :, 1:-1, 1:-1], gw, gb


def _np_pool(x):
    n, c, h, w = x.shape
    win = x.reshape(n, c, h // 2, 2, w // 2, 2)
    out = win.max(axis=(3, 5))
    return out, win == out[:, :, :, None, :, None]


def _np_pool_back(g, mask):
    # every tied maximum gets the gradient; the only ties here are zeros after relu, whose
    # gradient relu stops, so the input gradient is torch's max_pool2d's
    n, c, h2, _, w2, _ = mask.shape
    return (g[:, :, :, None, :, None] * mask).reshape(n, c, h2 * 2, w2 * 2)


def np_step(params, x, y):
    """One SGD step by hand; returns the gradients (before the update)."""
    acts = []
    h = x
    for i in range(0, len(params) - 2, 2):
        z, cols = _np_conv(h, params[i], params[i + 1])
        p, mask = _np_pool(np.maximum(z, 0))
        acts.append((h.shape, cols, z, mask))
        h = p
    flat = h.reshape(h.shape[0], -1)
    logits = flat @ params[-2] + params[-1]
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    prob = e / e.sum(axis=1, keepdims=True)
    n = x.shape[0]
    prob[np.arange(n), y] -= 1
    g = prob / n
    grads = [None] * len(params)
    grads[-2] = flat.T @ g
    grads[-1] = g.sum(axis=0)
    g = (g @ params[-2].T).reshape(h.shape)
    for k in reversed(range(len(acts))):
        x_shape, cols, z, mask = acts[k]
        g = _np_pool_back(g, mask) * (z > 0)
        g, grads[2 * k], grads[2 * k + 1] = _np_conv_back(g, cols, params[2 * k], x_shape,
                                                          input_grad=k > 0)
    for p, gr in zip(params, grads):
        p -= LR * gr
    return grads


# --------------------------------------------------------------------------- workloads
def _digits_data(batch):
    x, y = _bench._digits()
    n = len(x) // batch * batch
    return x[:n].reshape(-1, batch, 1, 8, 8), y[:n].reshape(-1, batch)


def _cifar_data(batch, steps=4):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((steps, batch, 3, 32, 32)).astype(np.float32)
    return x, rng.integers(0, 10, (steps, batch))


WORKLOADS = {
    "digits": ("cnn_digits: 1x8x8, conv 8, conv 16, batch 64", lambda: _digits_data(64),
               (1, 8, 16), 16 * 2 * 2),
    "cifar": ("cnn_cifar: 3x32x32, conv 32, conv 64, batch 32", lambda: _cifar_data(32),
              (3, 32, 64), 64 * 8 * 8),
    "conv": ("conv2d 32->64 3x3 on 32x32x16x16, fwd+bwd (no pooling)", None, None, None),
}


def conv_layer_contestants():
    """The second CIFAR convolution alone (32->64, 3x3, padding 1, on 32x32x16x16), forward
    and backward with a fixed output gradient: the convolution without the pooling."""
    rng = np.random.default_rng(1)
    x0 = rng.standard_normal((32, 32, 16, 16)).astype(np.float32)
    w0, b0 = [p.astype(np.float32) for p in _init((32, 64), 1, 1)[:2]]
    g0 = rng.standard_normal((32, 64, 16, 16)).astype(np.float32)

    def lib_step(lib, nnf):
        x, w, b = [lib.tensor(a, requires_grad=True) for a in (x0, w0, b0)]
        g = lib.tensor(g0)

        def step():
            x.grad = w.grad = b.grad = None
            nnf.conv2d(x, w, b, padding=1).backward(g)
            return [x.grad, w.grad, b.grad]

        return step

    def nump():
        y, cols = _np_conv(x0, w0, b0)
        return list(_np_conv_back(g0, cols, w0, x0.shape))

    return {"retrograd": lib_step(R, RF), "torch": lib_step(torch, TF), "numpy": nump}


def make_contestants(key):
    """One-step callables for retrograd, torch and NumPy, on the same data and weights."""
    if key == "conv":
        return conv_layer_contestants()
    _, data, channels, hidden = WORKLOADS[key]
    xs, ys = data()
    init = _init(channels, hidden, 0)
    pr = [R.tensor(p, requires_grad=True) for p in init]
    pt = [torch.tensor(p, requires_grad=True) for p in init]
    pn = [p.copy() for p in init]
    rb = [(R.tensor(a), R.tensor(b)) for a, b in zip(xs, ys)]
    tb = [(torch.tensor(a), torch.tensor(b)) for a, b in zip(xs, ys)]
    nb = list(zip(xs, ys))
    step = {"r": 0, "t": 0, "n": 0}
    r_pool = R_POOL if R_POOL is not None else _amax_pool

    def rg():
        xb, yb = rb[step["r"] % len(rb)]
        step["r"] += 1
        return _sgd_step(R, RF, lambda h: r_pool(h, 2) if R_POOL else r_pool(h), pr, xb, yb)

    def th():
        xb, yb = tb[step["t"] % len(tb)]
        step["t"] += 1
        return _sgd_step(torch, TF, lambda h: TF.max_pool2d(h, 2), pt, xb, yb)

    def nump():
        xb, yb = nb[step["n"] % len(nb)]
        step["n"] += 1
        return np_step(pn, xb, yb)

    return {"retrograd": rg, "torch": th, "numpy": nump}


# --------------------------------------------------------------------------- peak memory
def _status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def _peak_child(key, who, threads):
    """(in a subprocess) a step's transient memory in MiB: the peak resident set over 3
    steps minus the resident set before them (Linux, glibc).  A warm-up step first (lazy
    imports, torch's kernel setup), then ``malloc_trim`` hands what the allocator kept back
    to the OS and /proc/self/clear_refs resets the peak, so neither counts."""
    import ctypes

    torch.set_num_threads(threads)
    fn = make_contestants(key)[who]
    fn()
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset VmHWM to the current VmRSS
    before = _status_kib("VmRSS")
    for _ in range(3):
        fn()
    print(json.dumps((_status_kib("VmHWM") - before) / 1024))


def peak_memory(key, blas_threads):
    out = {}
    for label, who, threads in (("retrograd", "retrograd", 1), ("torch1", "torch", 1),
                                ("numpy", "numpy", 1)):
        cmd = [sys.executable, __file__, "--peak-child", key, who, str(threads),
               "--blas-threads", str(blas_threads)]
        res = subprocess.run(cmd, capture_output=True, text=True, check=True)
        out[label] = json.loads(res.stdout.strip().splitlines()[-1])
    return out


# --------------------------------------------------------------------------- main
def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a fast smoke run")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--only", default="", help="some of digits,cifar,conv (default: all)")
    parser.add_argument("--blas-threads", type=int, default=1,
                        help="threads for NumPy's BLAS (0: the library's default)")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory runs")
    parser.add_argument("--clock", choices=sorted(_bench.CLOCKS), default="wall",
                        help="wall: elapsed time; cpu: this process's CPU time (robust to other "
                             "load on a shared machine, but sums torch's threads)")
    parser.add_argument("--peak-child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.blas_threads:
        from threadpoolctl import threadpool_limits

        threadpool_limits(args.blas_threads, user_api="blas")
    if args.peak_child:
        key, who, threads = args.peak_child
        return _peak_child(key, who, int(threads))
    repeats = args.repeats or (3 if args.quick else 9)
    _bench._clock = _bench.CLOCKS[args.clock]
    keys = [k for k in WORKLOADS if not args.only or k in args.only]
    print(f"# retrograd CNN benchmark ({repeats} repeats, {args.clock} clock; max-pool: "
          f"{POOL_USED})\n")
    print(f"numpy {np.__version__}, torch {torch.__version__} (default threads "
          f"{_bench.TORCH_DEFAULT_THREADS}), NumPy BLAS threads {args.blas_threads or 'default'}"
          "\n")
    rows = []
    for key in keys:
        title = WORKLOADS[key][0]
        fns = make_contestants(key)
        torch.set_num_threads(1)
        results = {"retrograd": fns["retrograd"](), "torch": fns["torch"](),
                   "numpy": fns["numpy"]()}
        torch.set_num_threads(_bench.TORCH_DEFAULT_THREADS)
        _bench._check(title, results, 1e-4 if key == "conv" else 2e-3,
                      1e-3 if key == "conv" else 2e-5)  # (float32 sums of 8192 terms)
        inner = 2 if args.quick else {"digits": 20, "conv": 10}.get(key, 5)
        times, _ = _bench.measure(fns, inner, repeats)
        med = {k: statistics.median(v) for k, v in times.items()}
        ratio = {k: statistics.median(a / b for a, b in zip(times["retrograd"], times[k]))
                 for k in ("torch1", "torchN", "numpy")}
        mem = None if args.no_memory else peak_memory(key, args.blas_threads)
        rows.append((title, med, ratio, mem))
        print(f"  {title}: done", file=sys.stderr, flush=True)
    fmt = _bench._fmt_time
    print("| workload | retrograd | torch 1 thread | torch default | numpy | rg/torch1 | "
          "rg/torchN | rg/numpy | target rg/numpy < 1.2 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for title, med, ratio, _ in rows:
        print(f"| {title} | {fmt(med['retrograd'])} | {fmt(med['torch1'])} | "
              f"{fmt(med['torchN'])} | {fmt(med['numpy'])} | {ratio['torch1']:.2f} | "
              f"{ratio['torchN']:.2f} | {ratio['numpy']:.2f} | "
              f"{'yes' if ratio['numpy'] < 1.2 else '**no**'} |")
    if not args.no_memory:
        print("\nPeak memory of a step (peak RSS over 3 steps minus RSS before them, MiB):\n")
        print("| workload | retrograd | torch 1 thread | numpy |")
        print("|---|---|---|---|")
        for title, _, _, mem in rows:
            print(f"| {title} | {mem['retrograd']:.1f} | {mem['torch1']:.1f} | "
                  f"{mem['numpy']:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
