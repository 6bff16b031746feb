"""`python -m tests.fuzz` runs its programs in a child process: a child that dies (PyTorch has
segfaulted on fuzz programs) is reported as a 'crash' finding with its seed, and the run goes
on from the next seed to its report, instead of ending without one."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]


def test_a_crashed_child_is_a_finding_and_the_run_goes_on():
    env = dict(os.environ, FUZZ_TEST_CRASH_AT="3")
    done = subprocess.run([sys.executable, "-m", "tests.fuzz", "--seed", "1", "--count", "5"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    out = done.stdout
    assert done.returncode == 1, out[-2000:]
    assert "the child process crashed on seed 3" in out
    assert "5 programs (seeds 1..5)" in out  # seeds 4 and 5 ran in a second child
    assert "('crash', 'exit -6'): 1 program(s), seeds [3]" in out


def test_a_run_without_crash_reports_as_before():
    done = subprocess.run([sys.executable, "-m", "tests.fuzz", "--seed", "1", "--count", "3"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:]
    assert "3 programs (seeds 1..3)" in done.stdout
    assert "findings: 0" in done.stdout
