"""nn layer modules: one training step of a small CNN built from modules, retrograd vs
PyTorch (1 thread), and the per-call overhead of a module over its functional.

(a) Conv2d(3, 16, 3, padding=1) -> BatchNorm2d -> ReLU -> MaxPool2d(2) -> Conv2d(16, 32, 3,
padding=1, padding_mode="reflect") -> GroupNorm(4, 32) -> GELU -> AdaptiveAvgPool2d(1) ->
Flatten -> Linear(32, 10) -> CrossEntropyLoss, batch 16 of 3x32x32, forward + backward;
(b) the same network in eval mode, forward only, under no_grad;
(c) LayerNorm(64) on a 4 x 64 input, forward only: a module call's fixed cost.

Each figure is the median over repeats of retrograd's time / torch's time in the same repeat
(below 1: retrograd faster), timed as process CPU time with NumPy's BLAS and torch both on
one thread, so a busy shared machine disturbs it less than wall time.
Run: ``PYTHONPATH=src python bench/layers.py`` (~20 s).
"""

from __future__ import annotations

import os
import statistics
import sys
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before NumPy loads its BLAS

import numpy as np  # noqa: E402
import torch  # noqa: E402

try:
    import retrograd as R
except ImportError:  # pragma: no cover
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
    import retrograd as R

torch.set_num_threads(1)
rng = np.random.default_rng(0)
X = rng.standard_normal((16, 3, 32, 32)).astype(np.float32)
Y = rng.integers(0, 10, 16)


def network(nn):
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1, padding_mode="reflect"), nn.GroupNorm(4, 32),
        nn.GELU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))


def paired(mine, ref, repeat=9):
    mine()
    ref()
    ratios, mine_s, ref_s = [], [], []
    for _ in range(repeat):
        t = time.process_time()
        mine()
        a = time.process_time() - t
        t = time.process_time()
        ref()
        b = time.process_time() - t
        ratios.append(a / b)
        mine_s.append(a)
        ref_s.append(b)
    return statistics.median(ratios), statistics.median(mine_s), statistics.median(ref_s)


def main():
    th_net = network(torch.nn)
    rg_net = network(R.nn)
    rg_net.load_state_dict({k: R.tensor(v.numpy().copy()) for k, v in th_net.state_dict().items()})
    th_loss, rg_loss = torch.nn.CrossEntropyLoss(), R.nn.CrossEntropyLoss()
    tx, ty, rx, ry = torch.tensor(X), torch.tensor(Y), R.tensor(X), R.tensor(Y)

    def step(net, loss, x, y):
        def run():
            net.zero_grad()
            loss(net(x), y).backward()
        return run

    def infer(lib, net, x):
        def run():
            with lib.no_grad():
                net(x)
        return run

    rows = [("a train step (fwd+bwd)", step(rg_net, rg_loss, rx, ry),
             step(th_net, th_loss, tx, ty))]
    rg_net.eval()
    th_net.eval()
    rows.append(("b eval forward, no_grad", infer(R, rg_net, rx), infer(torch, th_net, tx)))
    ln_r, ln_t = R.nn.LayerNorm(64), torch.nn.LayerNorm(64)
    sx, stx = R.randn(4, 64), torch.randn(4, 64)
    rows.append(("c LayerNorm(64) call, 4x64", lambda: ln_r(sx), lambda: ln_t(stx)))
    print(f"{'workload':32s} {'rg/torch1':>10s} {'rg ms':>9s} {'torch1 ms':>10s}")
    for name, mine, ref in rows:
        ratio, a, b = paired(mine, ref, repeat=25 if name.startswith("c") else 9)
        print(f"{name:32s} {ratio:10.2f} {a * 1e3:9.3f} {b * 1e3:10.3f}")


if __name__ == "__main__":
    main()
