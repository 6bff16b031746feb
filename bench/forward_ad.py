"""Forward-mode AD: what it costs when unused, and when used (retrograd vs PyTorch, 1 thread).

* ``hot path``: small ops with no dual level open (every op reads one flag, ``fw.active``),
  with and without ``requires_grad``: microseconds per op, the minimum over repeats (the
  least noisy statistic on a shared machine).  Run it on two checkouts to compare.
* ``jvp``: one Jacobian-vector product of a 64-128-10 tanh MLP (batch 32) by forward AD
  (``forward_ad.make_dual`` / ``unpack_dual``), against torch.autograd.forward_ad, and the
  plain forward for scale.
* ``decompositions``: the JVP of linalg.qr, eigh, svd and lu of a 32x32 matrix: the
  hand-written rules (``ops/linalg_jvp.py``), the automatic fallback they replace (the
  transpose of the VJP, one engine run over the recorded backward formula) and PyTorch,
  beside the decomposition alone (NumPy's LAPACK call dominates it: run with
  ``OPENBLAS_NUM_THREADS=1`` on a shared machine, or its threads add noise).

Run ``python bench/forward_ad.py`` (a few seconds) or ``--quick``.
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


def _min_time(fn, number, repeats):
    fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def hot_path(repeats):
    """Microseconds per op of 5 small ops (mul, exp, add, sum, reshape) on (16,)."""
    rows = []
    for requires_grad in (False, True):
        x = R.randn(16, requires_grad=requires_grad)
        y = R.randn(16)

        def step(x=x, y=y):
            return ((x * y).exp() + x).sum(), x.reshape(4, 4)

        rows.append((f"5 ops on (16,), requires_grad={requires_grad}",
                     _min_time(step, 2000, repeats) / 5 * 1e6, "us/op"))
    return rows


def _mlp(m, seed=0):
    rng = np.random.default_rng(seed)
    w1, w2 = (m.tensor(rng.standard_normal(s) * 0.1) for s in ((64, 128), (128, 10)))
    x = m.tensor(rng.standard_normal((32, 64)))
    v = m.tensor(rng.standard_normal((32, 64)))

    def f(a):
        return ((a @ w1).tanh() @ w2).log_softmax(-1)

    return f, x, v


def jvp(repeats):
    import torch
    import torch.autograd.forward_ad as th_fwAD

    import retrograd.autograd.forward_ad as fwAD

    torch.set_num_threads(1)
    rows = []
    for name, m, ad in (("retrograd", R, fwAD), ("torch", torch, th_fwAD)):
        f, x, v = _mlp(m)

        def run(f=f, x=x, v=v, ad=ad):
            with ad.dual_level():
                return ad.unpack_dual(f(ad.make_dual(x, v))).tangent

        rows.append((f"jvp of a 64-128-10 MLP, {name}", _min_time(run, 50, repeats) * 1e6, "us"))
        rows.append((f"its plain forward, {name}",
                     _min_time(lambda f=f, x=x: f(x), 50, repeats) * 1e6, "us"))
    got = _mlp(R)
    want = _mlp(torch)
    with fwAD.dual_level():
        a = fwAD.unpack_dual(got[0](fwAD.make_dual(got[1], got[2]))).tangent.numpy()
    with th_fwAD.dual_level():
        b = th_fwAD.unpack_dual(want[0](th_fwAD.make_dual(want[1], want[2]))).tangent.numpy()
    assert np.allclose(a, b), "retrograd's JVP differs from PyTorch's"
    return rows


def decompositions(repeats):
    import torch
    import torch.autograd.forward_ad as th_fwAD

    import retrograd.autograd.forward_ad as fwAD
    from retrograd.ops import _jvp

    torch.set_num_threads(1)
    rng = np.random.default_rng(3)
    a = rng.standard_normal((32, 32))
    t = rng.standard_normal((32, 32))
    sym = a + a.T, t + t.T
    ops = {"qr": (lambda m, x: m.linalg.qr(x), (a, t), "LinalgQrBackward0"),
           "eigh": (lambda m, x: m.linalg.eigh(x), sym, "LinalgEighBackward0"),
           "svd": (lambda m, x: m.linalg.svd(x), (a, t), "LinalgSvdBackward0"),
           "lu": (lambda m, x: m.linalg.lu(x)[1:], (a, t), "LinalgLuBackward0")}
    rows = []
    for name, (f, (x, v), key) in ops.items():
        def run(m, ad, f=f, x=x, v=v):
            with ad.dual_level():
                return [ad.unpack_dual(o).tangent for o in f(m, ad.make_dual(m.tensor(x),
                                                                              m.tensor(v)))]

        hand = _min_time(lambda: run(R, fwAD), 5, repeats)
        table = _jvp.JVPS if key in _jvp.JVPS else _jvp.JVPS_SAVED
        rule = table.pop(key)
        try:
            fallback = _min_time(lambda: run(R, fwAD), 5, repeats)
            want = [o.numpy() for o in run(R, fwAD)]
        finally:
            table[key] = rule
        got = [o.numpy() for o in run(R, fwAD)]
        assert all(np.allclose(g, w, atol=1e-8) for g, w in zip(got, want)), name
        th = _min_time(lambda: run(torch, th_fwAD), 5, repeats)
        plain = _min_time(lambda f=f, x=x: f(R, R.tensor(x)), 5, repeats)
        rows.append((f"linalg.{name} 32x32, no dual (the decomposition)", plain * 1e6, "us"))
        rows.append((f"jvp of linalg.{name} 32x32: hand-written", hand * 1e6, "us"))
        rows.append((f"  ... VJP-transpose fallback ({fallback / hand:.1f}x)", fallback * 1e6,
                     "us"))
        rows.append(("  ... torch", th * 1e6, "us"))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--only", choices=("hot", "jvp", "decompositions"), default=None)
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else 15
    rows = []
    if args.only in (None, "hot"):
        rows += hot_path(repeats)
    if args.only in (None, "jvp"):
        rows += jvp(repeats)
    if args.only in (None, "decompositions"):
        rows += decompositions(repeats)
    for what, value, unit in rows:
        print(f"{what:<48} {value:10.2f} {unit}")


if __name__ == "__main__":
    main()
