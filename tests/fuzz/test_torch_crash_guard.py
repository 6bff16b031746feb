"""PyTorch 2.13 segfaults in ``register_hook`` on a view whose memory was written, since the
view was made, by a write its graph did not see (under no_grad, or through a ``detach()``
alias).  A long fuzz run died of it (seed 9009322).  The generator keeps hooks away from such
views and the runner refuses to run one that shrinking made; both are checked in a child
process, since a failure here is a crash."""

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

TESTS = Path(__file__).resolve().parents[1]

# seed 9009322, shrunk by hand: v5 is a view (ravel) of v4 = v3.detach(); v3's write changes
# v4's memory behind its graph; then v4 requires grad and a hook goes on v5
CRASHING = """
v0 = T.tensor([[1.0, 2.0]], dtype=T.float64, requires_grad=True)
v3 = v0 * 2
v4 = v3.detach()
v5 = v4.ravel()
v3[0:1] = v4.sum()
v4.requires_grad_()
h8 = v5.register_hook(lambda g: LOG.append(('v5', g.detach().clone())))
loss = (v5 * v5.detach().tanh()).sum()
loss.backward()
"""

CHILD = f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
import numpy as np
import torch
from fuzz.generator import Generator
from fuzz.program import Leaf, Step, program_from_text
from fuzz.runner import execute

# the generator, holding the crash's values up to its hook (seed 9009322's program is not
# replayed: what a seed generates changes when the op tables grow): it hooks the others,
# never v3, and does not crash
g = Generator(9009322, torch)
g._leaf(Leaf(np.array([[1.0, 2.0]]), "float64", True))
for text in ("v1 = v0 * 2", "v2 = v1.detach()", "v3 = v2.ravel()", "v1[0:1] = v2.sum()",
             "v2.requires_grad_()"):
    target = g.name() if " = " in text and not text.startswith("v1[") else None
    assert g._commit(Step(text, "op", "op", target)), text
for _ in range(100):
    g.act_hook()
hooked = sorted({{st.text.split(" = ")[1].split(".")[0] for st in g.steps
                 if ".register_hook(" in st.text}})
assert "v3" not in hooked and hooked, hooked
# the runner: a program with the crash is refused at the hook, and the rest runs
outcomes, ns = execute(program_from_text({CRASHING!r}), torch)
print([exc for exc, _ in outcomes])
"""


def test_register_hook_crash_is_kept_out_of_torch():
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    outcomes = eval(done.stdout.strip().splitlines()[-1])  # noqa: S307 - our own output
    assert "TorchSegfault" in outcomes
    assert outcomes[-1] is None  # the backward after it still ran


# seed 19879210: retain_grad on std_mean(...)[1] (a later output of a multi-output node), then
# an in-place write to it, then backward: PyTorch 2.13 segfaults (also for qr(...)[1] and
# svd(...)[1]); the generator now never retains the grad of such an output.  Below, the seed's
# program as the guarded generator wrote it on 2026-12-02 (the whole program: what the seed
# generates changes when the op tables grow), run in a child, and the guard itself.
SEED_19879210 = """
v0 = T.tensor([[[True]]], dtype=T.bool)
v1 = T.tensor([[[-1.54]], [[1.95]], [[-1.27]]], dtype=T.float64, requires_grad=True)
v2 = T.tensor([0.0, -0.52], dtype=T.float64)
v3 = T.std_mean(v1, dim=2, correction=1)[1]
with T.set_grad_enabled(False):
    v2.copy_(v2)
    v2[1] = v3.sum()
    v4 = T.rot90(v0, 3, [0, 2])
v5 = T.tensor([0.23, 1.24], dtype=T.float64, requires_grad=True)
v6 = (v2).lt(v5)
v7 = T.tensor([[-0.04], [-0.54], [-0.34]], dtype=T.float64, requires_grad=True)
with T.set_grad_enabled(False):
    v8 = T.dist(v3, v7, p=1)
h9 = v1.register_hook(lambda g: None)
v10 = v6.sign()
loss = (v3 * v3.detach().tanh()).sum() + (v5 * v5.detach().tanh()).sum() + (v7 * v7.detach().tanh()).sum()
loss.backward(inputs=[v1, v5, v7])
"""  # noqa: E501 - the program as printed

CHILD_MULTI_OUTPUT = f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
from fuzz.program import program_from_text
from fuzz.runner import compare

print(compare(program_from_text({SEED_19879210!r}, 19879210)))
print("ran")
"""


def test_seed_19879210_runs_in_torch():
    done = subprocess.run([sys.executable, "-c", CHILD_MULTI_OUTPUT], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-2:] == ["None", "ran"], done.stdout


def test_retain_grad_on_a_later_output_is_kept_out_of_torch():
    """The generator's guard: of std_mean's two outputs, only the first ([0]) ever has its
    grad retained, however often the generator tries (nothing runs backward here)."""
    import numpy as np
    import torch

    from .generator import Generator
    from .program import Leaf, Step

    g = Generator(19879210, torch)
    g._leaf(Leaf(np.array([[[-1.54, 0.3]], [[1.95, 0.0]], [[-1.27, 2.1]]]), "float64", True))
    for k in (1, 0):
        name = g.name()
        assert g._commit(Step(f"{name} = T.std_mean(v0, dim=2, correction=1)[{k}]",
                              "statistics", "statistics", name))
    for _ in range(200):
        g.act_misc()
    texts = [st.text for st in g.steps]
    assert "v2.retain_grad()" in texts, texts  # (the first output: the guard lets it be)
    assert "v1.retain_grad()" not in texts, texts
