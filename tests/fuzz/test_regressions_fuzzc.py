"""Fuzzer findings fixed on the fuzzC branch (engine, double backward, empty tensors, layouts):
each program must run alike in retrograd and PyTorch (values, dtypes, shapes, grad_fn names,
gradients, exceptions).  Kept apart from test_regressions.py so that branches merge."""

import pytest

pytest.importorskip("torch")

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # cat's 1-D empty inputs ("legacy empty", shape [0]) are skipped by PyTorch's shape and dim
    # checks, and their gradient is fresh zeros: under create_graph it does not require grad,
    # so the second backward raises as PyTorch's (seed 9450620)
    "cat_legacy_empty_create_graph": """
v0 = T.zeros((0,), dtype=T.bool)
v2 = T.flipud(v0)
v5 = T.tensor(0.0, dtype=T.float64, requires_grad=True)
v6 = v2.masked_fill(v5 > 0, 0.25)
v7 = T.zeros((0,), dtype=T.float64, requires_grad=True)
v8 = T.hstack([v6, v7])
v9 = T.remainder(v5, v8.abs().add(0.5))
loss = (v8 * v8.detach().tanh()).sum() + (v9 * v9.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v5, v7], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
try:
    loss2.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    "cat_legacy_empty_shapes": """
v0 = T.zeros((0,), dtype=T.float64, requires_grad=True)
v1 = T.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=T.float32, requires_grad=True)
v2 = T.cat([v0, v1])
v3 = T.cat([v1, v0, v1], 1)
v4 = T.cat([v0, v0], 2)
try:
    v5 = T.cat([v0, v1], -3)
except Exception as e:  # PyTorch: IndexError
    print(type(e).__name__, e)
loss = (v2 * v2.detach().tanh()).sum() + (v3 * 2).sum() + v4.sum()
loss.backward()
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzc(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)
