"""Resampling, padding and attention: retrograd against single-threaded PyTorch.

Each workload runs forward only, and forward + backward (``out.backward(g)``) on float32
inputs that require grad; the figure is the median over interleaved repeats of
retrograd's time / PyTorch's time in the same repeat (as bench/run.py).  Below 1: retrograd
is faster.  Before timing, outputs and gradients are checked to agree.

Run: ``PYTHONPATH=src python bench/resample.py`` (about a minute; ``--quick``: seconds).
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import numpy as np

try:
    import retrograd as R
except ImportError:  # pragma: no cover
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
    import retrograd as R

import torch

torch.set_num_threads(1)
QUICK = "--quick" in sys.argv
rng = np.random.default_rng(0)
IMG = rng.standard_normal((4 if QUICK else 8, 16, 32, 32)).astype(np.float32)
GRID = rng.uniform(-1.1, 1.1, (IMG.shape[0], 48, 48, 2)).astype(np.float32)
Q = rng.standard_normal((4, 8, 128, 32)).astype(np.float32)
SEQ = rng.standard_normal((64, 8, 64)).astype(np.float32)  # (L, N, E) for MHA
W_IN = (rng.standard_normal((192, 64)) * 0.1).astype(np.float32)
W_OUT = (rng.standard_normal((64, 64)) * 0.1).astype(np.float32)


def workloads():
    """name -> fn(m, tensors) -> output, and the arrays its differentiable inputs take."""
    def nnf(m):
        return m.nn.functional

    return {
        "interpolate bilinear x2": (lambda m, x: nnf(m).interpolate(
            x, scale_factor=2, mode="bilinear"), [IMG]),
        "interpolate nearest x2": (lambda m, x: nnf(m).interpolate(x, scale_factor=2), [IMG]),
        "interpolate bicubic 32->45": (lambda m, x: nnf(m).interpolate(
            x, size=45, mode="bicubic", align_corners=True), [IMG]),
        "interpolate area 32->12": (lambda m, x: nnf(m).interpolate(x, size=12, mode="area"),
                                    [IMG]),
        "pad reflect 3": (lambda m, x: nnf(m).pad(x, (3, 3, 3, 3), mode="reflect"), [IMG]),
        "pad circular 3": (lambda m, x: nnf(m).pad(x, (3, 3, 3, 3), mode="circular"), [IMG]),
        "grid_sample bilinear": (lambda m, x, g: nnf(m).grid_sample(
            x, g, align_corners=False), [IMG, GRID]),
        "grid_sample bicubic": (lambda m, x, g: nnf(m).grid_sample(
            x, g, mode="bicubic", padding_mode="reflection", align_corners=False), [IMG, GRID]),
        "pixel_shuffle 2": (lambda m, x: nnf(m).pixel_shuffle(x, 2), [IMG]),
        "sdpa causal": (lambda m, q: nnf(m).scaled_dot_product_attention(
            q, q * 0.5, q, is_causal=True), [Q]),
        "mha self, weights": (lambda m, x, w, wo: nnf(m).multi_head_attention_forward(
            x, x, x, 64, 8, w, None, None, None, False, 0.0, wo, None)[0], [SEQ, W_IN, W_OUT]),
    }


def _leaves(m, arrays):
    return [m.tensor(a).requires_grad_(True) for a in arrays]


def _run(m, fn, arrays, grad, backward):
    xs = _leaves(m, arrays)
    out = fn(m, *xs)
    if backward:
        out.backward(grad)
    return out, xs


def _time(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main():
    repeat = 3 if QUICK else 9
    print(f"{'workload':30s} {'fwd rg/torch1':>14s} {'fwd+bwd rg/torch1':>18s}   rg fwd+bwd ms")
    for name, (fn, arrays) in workloads().items():
        out_t, xs_t = _run(torch, fn, arrays, None, False)
        g = rng.standard_normal(tuple(out_t.shape)).astype(np.float32)
        rg_g, th_g = R.tensor(g), torch.tensor(g)
        out_r, xs_r = _run(R, fn, arrays, rg_g, True)
        out_t, xs_t = _run(torch, fn, arrays, th_g, True)
        np.testing.assert_allclose(out_r.detach().numpy(), out_t.detach().numpy(), rtol=1e-3,
                                   atol=1e-4, err_msg=name)
        for r, t in zip(xs_r, xs_t):
            np.testing.assert_allclose(r.grad.numpy(), t.grad.numpy(), rtol=1e-3, atol=1e-3,
                                       err_msg=name)
        ratios = []
        for backward in (False, True):
            def mine(b=backward, fn=fn, arrays=arrays, g=rg_g):
                return _run(R, fn, arrays, g, b)

            def ref(b=backward, fn=fn, arrays=arrays, g=th_g):
                return _run(torch, fn, arrays, g, b)

            pairs = [(_time(mine), _time(ref)) for _ in range(repeat)]
            ratios.append(statistics.median(a / b for a, b in pairs))
            ms = statistics.median(a for a, _ in pairs) * 1e3
        print(f"{name:30s} {ratios[0]:14.2f} {ratios[1]:18.2f}   {ms:10.1f}")


if __name__ == "__main__":
    main()
