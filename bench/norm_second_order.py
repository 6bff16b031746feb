"""Accuracy (not speed) of float32 second-order derivatives through batch_norm, layer_norm,
group_norm and instance_norm: retrograd and PyTorch against a float64 run of PyTorch on the
same (float32-rounded) inputs.

Each case draws a shape, a kind of input (standard normal; a small spread about a large
mean; near-constant groups), an optional affine weight and bias, and computes with
``create_graph=True``::

    loss = sum(y * y * c)                 # so the first gradient depends on x again
    gx, gw = grad(loss, (x, weight))      # create_graph
    hx, hw, hb = grad(sum(gx * v) + sum(gw * u), (x, weight, bias))   # Hessian-vector

and the case's error is the largest over the three results of max |h32 - h64| relative to
that result's max |h64|.  The report is the distribution per norm of the ratio
(retrograd's error / PyTorch's error), each error first raised to a floor (``--floor``
float32 ulps, default 4: below it both are rounding noise, and the ratio says nothing).

Run ``python bench/norm_second_order.py`` (about 20 s; ``--cases N`` per norm, ``--seed S``,
``--big`` for long reductions, ``--floor 0`` for raw ratios, ``--worst K`` to print the
worst case seeds).
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

try:  # run from a checkout without installing
    import retrograd as R
except ImportError:  # pragma: no cover
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
    import retrograd as R

import torch

KINDS = ("batch_norm", "layer_norm", "group_norm", "instance_norm")
EPS32 = float(np.finfo(np.float32).eps)


def draw(kind: str, rng: np.random.Generator, big: bool = False) -> dict:
    """One case's float32 inputs (as float64 arrays holding float32 values); ``big``: long
    reductions (hundreds to thousands of elements per statistic), where the order of a
    float32 sum shows."""
    if big:
        n, c, length = int(rng.integers(8, 48)), 2 * int(rng.integers(1, 4)), int(
            rng.integers(16, 160))
    else:
        n, c, length = int(rng.integers(2, 6)), 2 * int(rng.integers(1, 4)), int(
            rng.integers(2, 9))
    shape = (n, c, length)
    style = rng.choice(["normal", "offset", "flat"])
    if style == "normal":
        x = rng.standard_normal(shape)
    elif style == "offset":  # a small spread about a large mean: cancellation in x - mean
        x = 10.0 ** rng.uniform(1, 3) + 10.0 ** rng.uniform(-3, 0) * rng.standard_normal(shape)
    else:  # near-constant groups: var comparable to eps
        x = rng.standard_normal((1, c, 1)) + 10.0 ** rng.uniform(-4, -2) * rng.standard_normal(
            shape)
    affine = rng.random() < 0.6
    wshape = (c,) if kind != "layer_norm" else (length,)
    f32 = lambda a: a.astype(np.float32).astype(np.float64)  # noqa: E731
    return {
        "x": f32(x),
        "w": f32(1 + 0.5 * rng.standard_normal(wshape)) if affine else None,
        "b": f32(rng.standard_normal(wshape)) if affine else None,
        "c": f32(rng.standard_normal(shape)),
        "v": f32(rng.standard_normal(shape)),
        "u": f32(rng.standard_normal(wshape)) if affine else None,
        "groups": 2 if c % 2 == 0 else 1,
        "style": str(style),
    }


def _norm(lib, kind, x, w, b, groups):
    f = lib.nn.functional
    if kind == "batch_norm":
        return f.batch_norm(x, None, None, weight=w, bias=b, training=True)
    if kind == "layer_norm":
        return f.layer_norm(x, (x.shape[-1],), w, b)
    if kind == "group_norm":
        return f.group_norm(x, groups, w, b)
    return f.instance_norm(x, weight=w, bias=b)


def second_order(lib, kind: str, case: dict, dtype) -> list:
    """The Hessian-vector products (x, weight, bias) as float64 arrays."""
    t = {k: None if case[k] is None else lib.tensor(case[k].astype(dtype))
         for k in ("x", "w", "b", "c", "v", "u")}
    leaves = [t["x"]] + ([t["w"], t["b"]] if t["w"] is not None else [])
    for leaf in leaves:
        leaf.requires_grad_(True)
    y = _norm(lib, kind, t["x"], t["w"], t["b"], case["groups"])
    loss = (y * y * t["c"]).sum()
    first = lib.autograd.grad(loss, leaves[:2], create_graph=True)
    loss2 = (first[0] * t["v"]).sum()
    if len(first) > 1:
        loss2 = loss2 + (first[1] * t["u"]).sum()
    hs = lib.autograd.grad(loss2, leaves, allow_unused=True)
    return [np.zeros(0) if h is None else h.detach().numpy().astype(np.float64) for h in hs]


def errors(kind: str, case: dict) -> tuple[float, float]:
    """(retrograd's, PyTorch's) error off the float64 run: the largest over the results
    (x, weight, bias) of the result's error relative to its own largest value."""
    ref = second_order(torch, kind, case, np.float64)
    got = {lib: second_order(lib, kind, case, np.float32) for lib in (R, torch)}

    def err(hs):
        return max(float(np.abs(h - r).max()) / max(float(np.abs(r).max()), 1e-30)
                   for h, r in zip(hs, ref))

    return err(got[R]), err(got[torch])


def measure(cases: int, seed: int, big: bool = False, floor_ulps: float = 4.0):
    """Per norm: a list of (ratio, rg error, torch error, case seed, style)."""
    out = {}
    for kind in KINDS:
        rows = []
        for i in range(cases):
            case_seed = seed * 100003 + i
            case = draw(kind, np.random.default_rng(case_seed), big)
            rg, pt = errors(kind, case)
            floor = floor_ulps * EPS32
            ratio = max(rg, floor) / max(pt, floor)
            rows.append((ratio, rg, pt, case_seed, case["style"]))
        out[kind] = rows
    return out


def report(results, worst: int) -> None:
    print(f"{'norm':14} {'cases':>5} {'median':>7} {'p90':>7} {'p99':>7} {'max':>7} "
          f"{'>2x':>6} {'>4x':>6} {'rg<torch':>8}  (ratio = retrograd error / PyTorch error)")
    for kind, rows in results.items():
        r = np.array([row[0] for row in rows])
        print(f"{kind:14} {len(r):5d} {np.median(r):7.2f} {np.quantile(r, 0.9):7.2f} "
              f"{np.quantile(r, 0.99):7.2f} {r.max():7.2f} {np.mean(r > 2):6.1%} "
              f"{np.mean(r > 4):6.1%} {np.mean(r < 1):8.1%}")
        for ratio, rg, pt, s, style in sorted(rows, reverse=True)[:worst]:
            print(f"    ratio {ratio:7.2f}  rg {rg:.2e}  torch {pt:.2e}  case seed {s} ({style})")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=300, help="cases per norm")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--big", action="store_true", help="long reductions (see draw)")
    ap.add_argument("--floor", type=float, default=4.0, help="error floor, float32 ulps")
    ap.add_argument("--worst", type=int, default=0, help="print the K worst cases per norm")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    report(measure(args.cases, args.seed, args.big, args.floor), args.worst)


if __name__ == "__main__":
    main()
