"""stft / istft and the functional LSTM (ops6c, issue 6 leftovers): retrograd against
single-threaded PyTorch, forward and forward + backward, float32.

The figure is the median over interleaved repeats of retrograd's time / PyTorch's time in
the same repeat; below 1 retrograd is faster.  Outputs are checked to agree first.

Run: ``PYTHONPATH=src python bench/spectral_recurrent.py`` (``--quick``: fewer repeats).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
import warnings

import numpy as np

try:
    import retrograd as R
except ImportError:  # pragma: no cover
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
    import retrograd as R

import torch

torch.set_num_threads(1)
warnings.simplefilter("ignore")
QUICK = "--quick" in sys.argv
rng = np.random.default_rng(0)
SIGNAL = rng.standard_normal((4, 16000)).astype(np.float32)
WINDOW = np.hanning(512).astype(np.float32)
SEQ = rng.standard_normal((32, 16, 64)).astype(np.float32)  # (L, N, input)
H0 = np.zeros((1, 16, 64), np.float32)
PARAMS = [(rng.standard_normal(s) * 0.1).astype(np.float32)
          for s in ((256, 64), (256, 64), (256,), (256,))]


def _spectrum(m, x, w):
    return m.stft(x, 512, 128, window=w, return_complex=False)


def _istft(m, s, w):
    s = s if m is R else torch.view_as_complex(s)
    return m.istft(s, 512, 128, window=w, length=16000)


SPEC = _spectrum(torch, torch.tensor(SIGNAL), torch.tensor(WINDOW)).numpy()

WORKLOADS = {
    "stft 4x16000 n_fft=512": (lambda m, x: _spectrum(m, x, m.tensor(WINDOW)), [SIGNAL]),
    "istft 4x257x126": (lambda m, s: _istft(m, s, m.tensor(WINDOW)), [SPEC]),
    "lstm L=32 N=16 H=64": (lambda m, x, *p: m.lstm(
        x, (m.tensor(H0), m.tensor(H0)), p, True, 1, 0.0, False, False, False)[0],
        [SEQ] + PARAMS),
}


def run(m, fn, arrays, backward):
    xs = [m.tensor(a).requires_grad_(backward) for a in arrays]
    out = fn(m, *xs)
    if backward:
        out.backward(m.ones_like(out))
    return out


def main():
    repeats = 3 if QUICK else 7
    for name, (fn, arrays) in WORKLOADS.items():
        a = run(R, fn, arrays, False).detach().numpy()
        b = run(torch, fn, arrays, False).detach().numpy()
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-3)
        for backward in (False, True):
            ratios, times = [], []
            for r in range(repeats):
                pair = []
                for m in ((R, torch) if r % 2 == 0 else (torch, R)):
                    t0 = time.perf_counter()
                    run(m, fn, arrays, backward)
                    pair.append((m, time.perf_counter() - t0))
                t = dict(pair)
                ratios.append(t[R] / t[torch])
                times.append(t[R])
            what = "fwd+bwd" if backward else "fwd"
            print(f"{name:26s} {what:8s} retrograd {statistics.median(times) * 1e3:8.2f} ms  "
                  f"rg/torch1 {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
