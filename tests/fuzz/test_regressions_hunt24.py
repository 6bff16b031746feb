"""Fuzzer findings handled by hunt24 (issue 7, stop 24, seeds 20200000..): PyTorch 2.13's
register_hook crash on a view written under no_grad, reached through a name bound to the
same tensor object (``v3 = v1.to(v1.dtype)`` returns v1 itself), which neither the
generator's nor the runner's guard saw (seed 20226372 killed a child of the run); and the
watcher, which lost the findings and counts of a child that died (seed 20221715's)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

TESTS = Path(__file__).resolve().parents[1]

# seed 20226372 as generated (before the fix), shrunk by hand: v1 is a view of the leaf v0,
# written under no_grad; v3 = v1.to(T.float64) (and v1.contiguous()) is v1 itself, so it
# was "made" before that write although its name appears after it
CRASHING = """
v0 = T.tensor([-1.8, 0.0], dtype=T.float64, requires_grad=True)
v1 = v0.t()
with T.no_grad():
    v1.sgn_()
with T.no_grad():
    v3 = v1.{alias}
h4 = v3.register_hook(lambda g: LOG.append(('v3', g.detach().clone())))
loss = (v1 * v1.detach().tanh()).sum()
loss.backward(inputs=[v0])
"""

CHILD = f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
import torch
from fuzz.generator import generate
from fuzz.program import program_from_text
from fuzz.runner import execute
from fuzz.session import fuzz_one

# the generator: the seed's program now puts no hook on the alias, and runs
texts = [s.text for s in generate(20226372, torch, 14).steps]
assert "v3 = v1.to(T.float64)" in texts, texts
assert not any(t.startswith("h4 = v3.register_hook") for t in texts), texts
fuzz_one(20226372, shrink_failures=False)
# the runner: the crashing form is refused at the hook, and the rest runs
got = []
for alias in ("to(T.float64)", "contiguous()"):
    outcomes, ns = execute(program_from_text({CRASHING!r}.format(alias=alias)), torch)
    assert ns["v3"] is ns["v1"]
    got.append([exc for exc, _ in outcomes])
print(got)
"""


def test_hook_on_an_alias_of_a_written_view_is_kept_out_of_torch():
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    for outcomes in eval(done.stdout.strip().splitlines()[-1]):  # noqa: S307 - our output
        assert "TorchSegfault" in outcomes, outcomes
        assert outcomes[-1] is None  # the backward after it still ran


def test_a_new_view_made_after_the_write_is_still_hooked():
    """The guard stays narrow: a new view object made after the write (v1[:]) does not
    crash PyTorch, so the runner runs its hook (the crash needs the same object)."""
    import torch

    from .program import program_from_text
    from .runner import execute

    text = CRASHING.replace("v1.{alias}", "v1[:]")
    outcomes, ns = execute(program_from_text(text), torch)
    assert "TorchSegfault" not in [exc for exc, _ in outcomes]
    assert ns["v3"] is not ns["v1"]


ROOT = TESTS.parent


def _report(out):
    """The report's ops and known-bugs lines (the programs' coverage)."""
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if " op kinds covered:" in line)
    return lines[at].split(";", 1)[1], lines[at + 1], lines[at + 2]


def test_a_crashed_child_keeps_what_it_covered():
    """The programs a child ran before it died count in the report (their op kinds and
    known bugs; their findings too, see below): they were lost with the child."""
    env = dict(os.environ, FUZZ_TEST_CRASH_AT="3")
    crashed = subprocess.run([sys.executable, "-m", "tests.fuzz", "--seed", "1", "--count",
                              "3"], cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=300)
    assert "3 programs (seeds 1..3)" in crashed.stdout, crashed.stdout[-2000:]
    plain = subprocess.run([sys.executable, "-m", "tests.fuzz", "--seed", "1", "--count", "2",
                            "--in-process"], cwd=ROOT, capture_output=True, text=True,
                           timeout=300)
    assert " 0 op kinds" not in plain.stdout
    assert _report(crashed.stdout) == _report(plain.stdout)


def test_the_child_writes_its_findings_before_each_program(tmp_path, monkeypatch):
    """A finding is in the child's partial summary before the next program starts, so a
    crash in that program keeps it (seed 20221715 was printed, then missing from the
    summary of the run whose child crashed on seed 20226372)."""
    from . import __main__ as fuzz_main
    from .program import Program
    from .runner import Failure
    from .session import Result

    class CrashError(Exception):
        pass

    def fake(seed, max_steps=14, shrink_failures=True):
        if seed == 3:
            raise CrashError
        failure = Failure("value", "flatten", "v5: values differ") if seed == 2 else None
        return Result(Program(seed, []), failure, None, "reproducer")

    monkeypatch.setattr(fuzz_main, "fuzz_one", fake)
    state = tmp_path / "seed"
    with pytest.raises(CrashError):
        fuzz_main.run_programs(fuzz_main._args(["--seed", "1", "--count", "5"]), str(state))
    part = json.loads((tmp_path / "partial.json").read_text())
    assert part["n"] == 2
    assert part["findings"] == {repr(Failure("value", "flatten", "").signature): [2]}
    assert fuzz_main._read_seed(str(state)) == 3
