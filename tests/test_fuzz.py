"""The differential fuzzer, bounded: 400 random programs (fixed seeds) run in retrograd and in
PyTorch 2.13 must agree on values, dtypes, shapes, grad_fn names, first and second order
gradients, hook logs and exceptions.  A failure prints the shrunk program as code.

Failures that match an entry of tests/fuzz/known_bugs.py (bugs being fixed on other branches)
are counted, not failed.  The long run is `make fuzz SEED=... DURATION=...`.
"""

import pytest

pytest.importorskip("torch")

from fuzz.session import fuzz_one  # noqa: E402  (tests/ is on sys.path under pytest)

N_PROGRAMS, BATCH = 400, 50


@pytest.mark.parametrize("start", range(0, N_PROGRAMS, BATCH))
def test_fuzz_programs_agree_with_torch(start):
    found = []
    for seed in range(start, start + BATCH):
        result = fuzz_one(seed, shrink_failures=False)
        if result.failure is not None and not result.known:
            found.append(fuzz_one(seed, shrink_failures=True).reproducer)
    assert not found, "\n\n".join(found)


def test_fuzz_is_repeatable():
    """Same seed, same program: a seed identifies a failing program."""
    a, b = fuzz_one(12345, shrink_failures=False), fuzz_one(12345, shrink_failures=False)
    assert a.program.source() == b.program.source()
    assert len(a.program.steps) >= 3
