"""Paired timing for the benches that race retrograd against NumPy and PyTorch (one thread).

``paired_times(runs, repeats, inner)``: each repeat times every contestant ``inner`` times,
in a rotated order (so no one always runs first, warm or cold), with the garbage collector
off; returns the median time per call of each and the median of the per-repeat ratios of
retrograd's time to NumPy's and to torch1's (ratios of paired runs: the machine's load
changes between repeats, not within one).
"""

from __future__ import annotations

import gc
import statistics
import time


def paired_times(runs: dict, repeats: int, inner: int):
    """``(median seconds per call by name, {"numpy": ratio, "torch1": ratio})``; ``runs``
    maps a name ("retrograd", "numpy", "torch1") to a zero-argument callable."""
    names = list(runs)
    times = {n: [] for n in names}
    for r in range(repeats):
        gc.collect()
        gc.disable()
        shift = r % len(names)
        for n in names[shift:] + names[:shift]:
            t0 = time.perf_counter()
            for _ in range(inner):
                runs[n]()
            times[n].append((time.perf_counter() - t0) / inner)
        gc.enable()
    med = {n: statistics.median(t) for n, t in times.items()}
    ratio = {n: statistics.median(x / y for x, y in zip(times["retrograd"], times[n]))
             for n in ("numpy", "torch1")}
    return med, ratio


def report(workload: str, med: dict, ratio: dict, width: int = 9, digits: int = 3) -> None:
    """One line: the three times in ms and retrograd's two ratios."""
    ms = {n: f"{med[n] * 1e3:8.{digits}f}" for n in ("retrograd", "numpy", "torch1")}
    print(f"{workload:{width}s} retrograd {ms['retrograd']} ms  numpy {ms['numpy']} ms  "
          f"torch1 {ms['torch1']} ms  rg/numpy {ratio['numpy']:.2f}  "
          f"rg/torch1 {ratio['torch1']:.2f}")
