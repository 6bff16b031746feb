"""Reductions, scans and order statistics on a 1000x1000 float32 input: retrograd vs the
equivalent hand-written NumPy (the target: within 1.3x, forward and forward+backward), with
PyTorch on one thread for reference.

Each op is one call written against a module ``m`` (retrograd or torch), a NumPy forward,
and a NumPy forward+backward (the derivative by hand, as one would write it without an
autodiff library).  The gradients are checked against retrograd's before timing; the
contestants run interleaved (round-robin), and the ratios are medians of per-repeat ratios.

Run ``python bench/reductions.py`` (a few minutes), ``--quick`` for a smoke run, or
``--only cumsum,median`` for some ops.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

try:  # run from a checkout without installing
    import retrograd as R
except ImportError:  # pragma: no cover
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
    import retrograd as R

import torch

N = 1000


def _rev_cumsum(g, axis=1):
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


def _scatter_bincount(g, idx, shape):
    rows = (np.arange(shape[0])[:, None] * shape[1] + idx).reshape(-1)
    return np.bincount(rows, g.reshape(-1), shape[0] * shape[1]).astype(g.dtype).reshape(shape)


# --------------------------------------------------------------------------- NumPy by hand


def np_cumsum(x, g):
    return np.cumsum(x, 1), _rev_cumsum(g)


def np_cumprod(x, g):
    out = np.cumprod(x, 1)
    return out, _rev_cumsum(g * out) / x


def np_cummax(x, g):
    out = np.maximum.accumulate(x, 1)
    pos = np.arange(x.shape[1])
    idx = np.maximum.accumulate(np.where(x == out, pos, 0), 1)
    return (out, idx), None if g is None else _scatter_bincount(g, idx, x.shape)


def np_logcumsumexp(x, g):
    out = np.logaddexp.accumulate(x, 1)
    return out, np.exp(x) * _rev_cumsum(g * np.exp(-out))


def _select_rows(x, k, g):
    idx = np.argpartition(x, k, axis=1)[:, k:k + 1]
    val = np.take_along_axis(x, idx, 1)[:, 0]
    grad = np.zeros_like(x)
    np.put_along_axis(grad, idx, g[:, None], 1)
    return val, grad


def np_median(x, g):
    return _select_rows(x, (x.shape[1] - 1) // 2, g)


def np_kthvalue(x, g):
    return _select_rows(x, 99, g)


def np_nanmedian(x, g):
    return _select_rows(x, (x.shape[1] - 1) // 2, g)  # (the input has no nan)


def np_mode(x, g):
    s = np.sort(x, 1)
    new = np.ones(s.shape, bool)
    new[:, 1:] = s[:, 1:] != s[:, :-1]
    pos = np.arange(x.shape[1])
    start = np.maximum.accumulate(np.where(new, pos, 0), 1)
    end = np.argmax(pos - start + 1, 1)
    val = s[np.arange(x.shape[0]), end]
    idx = (x == val[:, None]) * pos
    grad = np.zeros_like(x)
    np.put_along_axis(grad, idx.argmax(1)[:, None], g[:, None], 1)
    return val, grad


def np_quantile(x, g, q=0.3):
    order = np.argsort(x, 1)
    s = np.take_along_axis(x, order, 1)
    r = q * (x.shape[1] - 1)
    lo, w = int(np.floor(r)), r - np.floor(r)
    val = s[:, lo] * (1 - w) + s[:, lo + 1] * w
    grad = np.zeros_like(x)
    np.put_along_axis(grad, order[:, lo:lo + 1], (g * (1 - w))[:, None], 1)
    np.put_along_axis(grad, order[:, lo + 1:lo + 2], (g * w)[:, None], 1)
    return val, grad


def np_var_mean(x, g):
    n = x.shape[1]
    m = x.mean(1, keepdims=True)
    c = x - m
    var = (c * c).sum(1) / (n - 1)
    return (var, m[:, 0]), g[:, None] * c * (2.0 / (n - 1))  # (var's gradient only)


def np_std_mean(x, g):
    n = x.shape[1]
    m = x.mean(1, keepdims=True)
    c = x - m
    std = np.sqrt((c * c).sum(1) / (n - 1))
    return (std, m[:, 0]), g[:, None] * c / (std[:, None] * (n - 1))  # (std's only)


def np_aminmax(x, g):
    lo, hi = x.min(1, keepdims=True), x.max(1, keepdims=True)
    hit = (x == lo)
    return (lo, hi), g * hit / hit.sum(1, keepdims=True)  # (g is (N, 1): keepdim)


def np_nansum(x, g):
    return np.nansum(x, 1), g[:, None] * ~np.isnan(x)


def np_nanmean(x, g):
    keep = ~np.isnan(x)
    count = keep.sum(1)
    return np.nansum(x, 1) / count, (g / count)[:, None] * keep


def np_norm3(x, g):
    a = np.abs(x)
    out = ((a ** 3).sum(1)) ** (1 / 3)
    return out, x * a * (g / out ** 2)[:, None]


def np_norm_neg1(x, g):
    a = np.abs(x)
    out = ((1 / a).sum(1)) ** -1
    return out, np.sign(x) * a ** -2 * (g * out ** 2)[:, None]


def np_norm_nuc(x, g):
    u, s, vh = np.linalg.svd(x, full_matrices=False)
    return s.sum(), (u * g) @ vh


def np_dist(x, g, y=None):
    d = x - np.ones(x.shape[1], x.dtype)  # (as the call: a broadcast row of ones)
    out = np.sqrt((d * d).sum())
    return out, g * d / out


def np_renorm(x, g):
    norm = np.sqrt((x * x).sum(1, keepdims=True))
    factor = np.where(norm > 10.0, 10.0 / (norm + 1e-7), 1.0)
    inv = 1 / (norm + 1e-7)
    nb = (x * g).sum(1, keepdims=True) * x / norm
    return x * factor, np.where(norm > 10.0, factor * g - factor * inv * nb, g)


def np_cov(x, g):
    n = x.shape[1]
    c = x - x.mean(1, keepdims=True)
    out = c @ c.T / (n - 1)
    gc = (g + g.T) @ c / (n - 1)
    return out, gc - gc.mean(1, keepdims=True)


def np_corrcoef(x, g):
    out = np.corrcoef(x)
    # (the backward as composed ops: cov's, then the two divisions; not hand-fused)
    n = x.shape[1]
    c = x - x.mean(1, keepdims=True)
    cov = c @ c.T / (n - 1)
    sd = np.sqrt(np.diag(cov))
    gcov = g / np.outer(sd, sd)
    gsd = -(g * cov / np.outer(sd, sd) / sd[:, None]).sum(1) - (
        g * cov / np.outer(sd, sd) / sd[None, :]).sum(0)
    gcov = gcov + np.diag(gsd / (2 * sd))
    gc = (gcov + gcov.T) @ c / (n - 1)
    return out, gc - gc.mean(1, keepdims=True)


def np_diff(x, g):
    grad = np.zeros_like(x)
    grad[:, 1:] += g
    grad[:, :-1] -= g
    return np.diff(x, axis=1), grad


def np_trapezoid(x, g):
    w = np.ones(x.shape[1], x.dtype)
    w[0] = w[-1] = 0.5
    return np.trapezoid(x, axis=1), g[:, None] * w


def np_cumulative_trapezoid(x, g):
    out = np.cumsum((x[:, 1:] + x[:, :-1]) * 0.5, 1)
    r = _rev_cumsum(g) * 0.5
    grad = np.zeros_like(x)
    grad[:, 1:] += r
    grad[:, :-1] += r
    return out, grad


def np_gradient(x, g):
    out = np.gradient(x, axis=1)
    grad = np.zeros_like(x)
    grad[:, 2:] += g[:, 1:-1] / 2
    grad[:, :-2] -= g[:, 1:-1] / 2
    grad[:, 1] += g[:, 0]
    grad[:, 0] -= g[:, 0]
    grad[:, -1] += g[:, -1]
    grad[:, -2] -= g[:, -1]
    return out, grad


def _first(out):
    return out[0] if isinstance(out, tuple) else out


# (name, call on m = retrograd or torch, NumPy forward+backward, input kind)
OPS = [
    ("cumsum", lambda m, x: x.cumsum(1), np_cumsum, "real"),
    ("cumprod", lambda m, x: x.cumprod(1), np_cumprod, "near1"),
    ("cummax", lambda m, x: x.cummax(1).values, lambda x, g: (None, np_cummax(x, g)[1]),
     "real"),
    ("logcumsumexp", lambda m, x: x.logcumsumexp(1), np_logcumsumexp, "real"),
    ("median", lambda m, x: x.median(1).values, np_median, "real"),
    ("nanmedian", lambda m, x: x.nanmedian(1).values, np_nanmedian, "real"),
    ("kthvalue", lambda m, x: x.kthvalue(100, 1).values, np_kthvalue, "real"),
    ("mode", lambda m, x: x.mode(1).values, np_mode, "ints"),
    ("quantile", lambda m, x: x.quantile(0.3, dim=1), np_quantile, "real"),
    ("nanquantile", lambda m, x: x.nanquantile(0.3, dim=1), np_quantile, "real"),
    ("var_mean", lambda m, x: m.var_mean(x, 1)[0], None, "real"),
    ("std_mean", lambda m, x: m.std_mean(x, 1)[0], None, "real"),
    ("aminmax", lambda m, x: m.aminmax(x, dim=1, keepdim=True)[0], np_aminmax, "real"),
    ("nansum", lambda m, x: x.nansum(1), np_nansum, "real"),
    ("nanmean", lambda m, x: x.nanmean(1), np_nanmean, "real"),
    ("norm_p3", lambda m, x: x.norm(3, dim=1), np_norm3, "real"),
    ("norm_neg1", lambda m, x: x.norm(-1, dim=1), np_norm_neg1, "real"),
    ("norm_nuc", lambda m, x: x.norm("nuc"), np_norm_nuc, "real"),
    ("dist", lambda m, x: x.dist(m.ones(N, dtype=x.dtype)), np_dist, "real"),
    ("renorm", lambda m, x: x.renorm(2, 0, 10.0), np_renorm, "real"),
    ("cov", lambda m, x: x.cov(), np_cov, "real"),
    ("corrcoef", lambda m, x: x.corrcoef(), np_corrcoef, "real"),
    ("diff", lambda m, x: x.diff(dim=1), np_diff, "real"),
    ("trapezoid", lambda m, x: m.trapezoid(x, dim=1), np_trapezoid, "real"),
    ("cumulative_trapezoid", lambda m, x: m.cumulative_trapezoid(x, dim=1),
     np_cumulative_trapezoid, "real"),
    ("gradient", lambda m, x: m.gradient(x, dim=1)[0], np_gradient, "real"),
]


def _np_first_output(fn):
    """var_mean/std_mean: the NumPy contestant for the first output only."""
    def both(x, g):
        (v, _), grad = fn(x, g)
        return v, grad
    return both


def _input(kind, rng):
    if kind == "near1":
        return rng.uniform(0.999, 1.001, (N, N)).astype(np.float32)
    if kind == "ints":
        return rng.integers(0, 50, (N, N)).astype(np.float32)
    return rng.standard_normal((N, N)).astype(np.float32)


def _contestants(call, np_fn, x, g):
    # from_numpy on both sides (no copy), so a sub-millisecond op is not timed with a 4 MB
    # copy that torch's contestant and NumPy's do not make
    def rg_fwd():
        return call(R, R.from_numpy(x))

    def rg_both():
        t = R.from_numpy(x).requires_grad_(True)
        call(R, t).backward(R.from_numpy(g))
        return t.grad

    def th_fwd():
        return call(torch, torch.from_numpy(x))

    def th_both():
        t = torch.from_numpy(x).requires_grad_(True)
        call(torch, t).backward(torch.from_numpy(g))
        return t.grad

    def np_fwd():
        return np_fn(x, g)[0]  # (the forward alone: the hand-written backward is skipped)

    def np_both():
        return np_fn(x, g)[1]

    return {"fwd": {"retrograd": rg_fwd, "torch1": th_fwd, "numpy": np_fwd},
            "fwd+bwd": {"retrograd": rg_both, "torch1": th_both, "numpy": np_both}}


def _np_select(x, k):
    idx = np.argpartition(x, k, axis=1)[:, k:k + 1]
    return np.take_along_axis(x, idx, 1), idx


def _np_forward_only(name, np_fn):
    """A NumPy forward without the backward's work, where the two are separable."""
    forwards = {
        "cumsum": lambda x: np.cumsum(x, 1), "cumprod": lambda x: np.cumprod(x, 1),
        "cummax": lambda x: np_cummax(x, None)[0],  # (values and indices, as cummax)
        "logcumsumexp": lambda x: np.logaddexp.accumulate(x, 1),
        # (values and indices, as these ops return)
        "median": lambda x: _np_select(x, 499),
        "nanmedian": lambda x: np.nanmedian(x, 1),
        "kthvalue": lambda x: _np_select(x, 99),
        "quantile": lambda x: np.quantile(x, 0.3, axis=1),
        "nanquantile": lambda x: np.nanquantile(x, 0.3, axis=1),
        "var_mean": lambda x: (np.var(x, 1, ddof=1), np.mean(x, 1)),
        "std_mean": lambda x: (np.std(x, 1, ddof=1), np.mean(x, 1)),
        "aminmax": lambda x: (x.min(1), x.max(1)), "nansum": lambda x: np.nansum(x, 1),
        "nanmean": lambda x: np.nanmean(x, 1),
        "norm_p3": lambda x: np.linalg.norm(x, 3, axis=1),
        "norm_neg1": lambda x: np.linalg.norm(x, -1, axis=1),
        "norm_nuc": lambda x: np.linalg.norm(x, "nuc"),
        "dist": lambda x: np.linalg.norm(x - np.ones(x.shape[1], x.dtype)),
        "cov": np.cov, "corrcoef": np.corrcoef,
        "diff": lambda x: np.diff(x, axis=1), "trapezoid": lambda x: np.trapezoid(x, axis=1),
        "gradient": lambda x: np.gradient(x, axis=1),
    }
    return forwards.get(name)


def measure(name, call, np_fn, kind, repeats, rng):
    x = _input(kind, rng)
    if np_fn is None:
        np_fn = _np_first_output(np_var_mean if name == "var_mean" else np_std_mean)
    gout = _probe_grad(call, x, rng)
    cont = _contestants(call, np_fn, x, gout)
    fwd_only = _np_forward_only(name, np_fn)
    if fwd_only is not None:
        cont["fwd"]["numpy"] = lambda: fwd_only(x)
    # the gradients agree before anything is timed
    want = np.asarray(cont["fwd+bwd"]["retrograd"]().numpy(), np.float64)
    for who in ("torch1", "numpy"):
        got = cont["fwd+bwd"][who]()
        got = np.asarray(got.numpy() if hasattr(got, "numpy") else got, np.float64)
        scale = max(np.abs(want).max(), 1e-30)
        if not np.allclose(got / scale, want / scale, atol=2e-3, equal_nan=True):
            print(f"  ! {name}: {who}'s gradient differs from retrograd's", file=sys.stderr)
    result = {}
    for phase, fns in cont.items():
        times = {who: [] for who in fns}
        for _ in range(repeats):
            for who, fn in fns.items():
                t0 = time.perf_counter()
                fn()
                times[who].append(time.perf_counter() - t0)
        ratio = {who: statistics.median(r / o for r, o in zip(times["retrograd"], times[who]))
                 for who in ("numpy", "torch1")}
        result[phase] = (statistics.median(times["retrograd"]), ratio)
    return result


def _probe_grad(call, x, rng):
    out = _first(call(torch, torch.from_numpy(x)))
    return rng.standard_normal(tuple(out.shape)).astype(np.float32)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 repeats (a smoke run)")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--only", default="", help="comma-separated op names")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    repeats = 2 if args.quick else args.repeats
    only = set(filter(None, args.only.split(",")))
    rng = np.random.default_rng(0)
    print(f"{N}x{N} float32, median of {repeats}; ratio = retrograd time / other's "
          "(target: vs numpy <= 1.3)")
    print(f"{'op':22s} {'fwd ms':>8s} {'/numpy':>7s} {'/torch1':>8s}   "
          f"{'fwd+bwd ms':>10s} {'/numpy':>7s} {'/torch1':>8s}")
    over = []
    for name, call, np_fn, kind in OPS:
        if only and name not in only:
            continue
        r = measure(name, call, np_fn, kind, repeats, rng)
        (tf, rf), (tb, rb) = r["fwd"], r["fwd+bwd"]
        flag = " *" if max(rf["numpy"], rb["numpy"]) > 1.3 else ""
        print(f"{name:22s} {tf * 1e3:8.1f} {rf['numpy']:7.2f} {rf['torch1']:8.2f}   "
              f"{tb * 1e3:10.1f} {rb['numpy']:7.2f} {rb['torch1']:8.2f}{flag}", flush=True)
        if flag:
            over.append(name)
    print(f"over 1.3x NumPy (*): {', '.join(over) or 'none'}")


if __name__ == "__main__":
    main()
