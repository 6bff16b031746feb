"""Data loading and save/load: retrograd vs PyTorch, CPU, paired and interleaved.

(a) one epoch of a shuffled DataLoader over a TensorDataset (4096 x 32 float32 features,
int64 labels), batch_size 64, num_workers=0 (retrograd gathers a batch's rows at once there);
(a') the same with a TensorDataset subclass, which takes the general path: a sample at a
time, then default_collate (retrograd's per-sample Tensor indexing dominates);
(b) the same epoch when the dataset fetches a whole batch with ``__getitems__``
(fancy indexing, no per-sample tensors);
(c) save + load of a 40 MB state dict (10 float32 tensors of 1000 x 1000) through memory.

Each figure is the median over repeats of retrograd's time / torch's time in the same
repeat (below 1: retrograd faster).  Run: ``PYTHONPATH=src python bench/data.py``
(about half a minute).
"""

from __future__ import annotations

import io
import os
import statistics
import sys
import time

import numpy as np
import torch
import torch.utils.data as TD

try:
    import retrograd as R
except ImportError:  # pragma: no cover
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
    import retrograd as R
from retrograd.utils import data as RD

rng = np.random.default_rng(0)
X = rng.standard_normal((4096, 32)).astype(np.float32)
Y = rng.integers(0, 10, 4096)
STATE = {f"layer{i}.weight": rng.standard_normal((1000, 1000)).astype(np.float32)
         for i in range(10)}


def _once(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def paired(mine, ref, repeat=7):
    mine()
    ref()
    ratios, mine_s, ref_s = [], [], []
    for _ in range(repeat):
        a, b = _once(mine), _once(ref)
        ratios.append(a / b)
        mine_s.append(a)
        ref_s.append(b)
    return statistics.median(ratios), statistics.median(mine_s), statistics.median(ref_s)


class RSub(RD.TensorDataset):
    pass


class TSub(TD.TensorDataset):
    pass


class _Batched:
    """Mixin: fetch a batch with one fancy index (both libraries call __getitems__)."""

    def __getitems__(self, indices):
        idx = indices
        x, y = self.tensors
        return [(x[idx], y[idx])]


class RBatched(_Batched, RD.TensorDataset):
    pass


class TBatched(_Batched, TD.TensorDataset):
    pass


def _first(samples):
    return samples[0]


def epoch(loader):
    def run():
        for _ in loader:
            pass
    return run


def save_load(lib, state):
    def run():
        buf = io.BytesIO()
        lib.save(state, buf)
        buf.seek(0)
        lib.load(buf)
    return run


def main():
    r_ds = RD.TensorDataset(R.tensor(X), R.tensor(Y))
    t_ds = TD.TensorDataset(torch.tensor(X), torch.tensor(Y))
    rows = []
    rows.append(("(a) DataLoader epoch, TensorDataset", paired(
        epoch(RD.DataLoader(r_ds, batch_size=64, shuffle=True)),
        epoch(TD.DataLoader(t_ds, batch_size=64, shuffle=True)))))
    r_sub, t_sub = RSub(R.tensor(X), R.tensor(Y)), TSub(torch.tensor(X), torch.tensor(Y))
    rows.append(("(a') DataLoader epoch, per-sample", paired(
        epoch(RD.DataLoader(r_sub, batch_size=64, shuffle=True)),
        epoch(TD.DataLoader(t_sub, batch_size=64, shuffle=True)))))
    r_b = RBatched(R.tensor(X), R.tensor(Y))
    t_b = TBatched(torch.tensor(X), torch.tensor(Y))
    rows.append(("(b) DataLoader epoch, __getitems__", paired(
        epoch(RD.DataLoader(r_b, batch_size=64, shuffle=True, collate_fn=_first)),
        epoch(TD.DataLoader(t_b, batch_size=64, shuffle=True, collate_fn=_first)))))
    r_state = {k: R.tensor(v) for k, v in STATE.items()}
    t_state = {k: torch.tensor(v) for k, v in STATE.items()}
    rows.append(("(c) save + load 40 MB state dict", paired(
        save_load(R, r_state), save_load(torch, t_state))))
    print(f"{'case':38s} {'retrograd/torch':>16s} {'retrograd s':>12s} {'torch s':>10s}")
    for name, (ratio, mine, ref) in rows:
        print(f"{name:38s} {ratio:16.2f} {mine:12.4f} {ref:10.4f}")


if __name__ == "__main__":
    torch.set_num_threads(1)
    main()
