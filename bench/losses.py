"""Issue 8's ops, forward + backward: retrograd against PyTorch (1 thread), same inputs.

Workloads (float32): ctc_loss (T=50, N=16, C=20, targets of 10), embedding (a 10000 x 64
table, 64 x 32 indices), embedding_bag (mean, 2048 indices in 64 bags), pdist (256 x 16),
smooth_l1_loss and kl_div (batchmean) on 256 x 256.  Each is timed as the median over
repeats of retrograd's CPU time / torch's CPU time in the same repeat (interleaved), after
the two results have been checked to agree.

Run: ``PYTHONPATH=src python bench/losses.py`` (about half a minute).
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
rng = np.random.default_rng(0)

CTC_X = rng.standard_normal((50, 16, 20)).astype(np.float32)
CTC_T = rng.integers(1, 20, (16, 10))
CTC_IL = np.full(16, 50)
CTC_TL = rng.integers(5, 11, 16)
TABLE = rng.standard_normal((10000, 64)).astype(np.float32)
IDX = rng.integers(0, 10000, (64, 32))
BAG_IDX = rng.integers(0, 10000, 2048)
BAG_OFF = np.sort(rng.choice(np.arange(1, 2048), 63, replace=False))
BAG_OFF = np.concatenate([[0], BAG_OFF])
ROWS = rng.standard_normal((256, 16)).astype(np.float32)
A = rng.standard_normal((256, 256)).astype(np.float32)
B = rng.standard_normal((256, 256)).astype(np.float32)


def ctc(m):
    x = m.tensor(CTC_X, requires_grad=True)
    loss = m.nn.functional.ctc_loss(x.log_softmax(2), m.tensor(CTC_T), m.tensor(CTC_IL),
                                    m.tensor(CTC_TL))
    loss.backward()
    return x.grad


def embedding(m):
    w = m.tensor(TABLE, requires_grad=True)
    m.nn.functional.embedding(m.tensor(IDX), w).sum().backward()
    return w.grad


def embedding_bag(m):
    w = m.tensor(TABLE, requires_grad=True)
    m.nn.functional.embedding_bag(m.tensor(BAG_IDX), w, m.tensor(BAG_OFF)).sum().backward()
    return w.grad


def pdist(m):
    x = m.tensor(ROWS, requires_grad=True)
    m.pdist(x).sum().backward()
    return x.grad


def smooth_l1(m):
    a = m.tensor(A, requires_grad=True)
    m.nn.functional.smooth_l1_loss(a, m.tensor(B)).backward()
    return a.grad


def kl_div(m):
    a = m.tensor(A, requires_grad=True)
    m.nn.functional.kl_div(a.log_softmax(1), m.tensor(B).softmax(1),
                           reduction="batchmean").backward()
    return a.grad


def _once(fn):
    # CPU time, not wall time: on a shared machine the wall clock mostly measures the others
    t = time.process_time()
    fn()
    return time.process_time() - t


def main():
    print(f"{'workload':<16}{'retrograd ms':>14}{'torch ms':>10}{'ratio':>8}")
    for fn in (ctc, embedding, embedding_bag, pdist, smooth_l1, kl_div):
        np.testing.assert_allclose(fn(R).numpy(), fn(torch).numpy(), rtol=1e-3, atol=1e-5)
        pairs = [(_once(lambda fn=fn: fn(R)), _once(lambda fn=fn: fn(torch))) for _ in range(21)]
        ratio = statistics.median(r / t for r, t in pairs)
        print(f"{fn.__name__:<16}{statistics.median(r for r, _ in pairs) * 1e3:>14.2f}"
              f"{statistics.median(t for _, t in pairs) * 1e3:>10.2f}{ratio:>8.2f}")


if __name__ == "__main__":
    main()
