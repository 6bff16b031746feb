"""Fuzzer findings fixed on branch fuzzD (seeds 9950000+, op families added to the generator
in ops_table_more.py): each program must run alike in retrograd and PyTorch (values, dtypes,
shapes, grad_fn names, gradients, exceptions)."""

import pytest

pytest.importorskip("torch")

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # Tensor.sum_to_size as PyTorch composes it (at::sum_to): sum() for an empty size
    # (SumBackward0), a view dropping the leading dims (ViewBackward0), the tensor itself when
    # nothing is summed (a leaf stays a leaf); it was one SumBackward1 record (seeds 9950023,
    # 9950110)
    "sum_to_size_composition": """
v0 = T.tensor(3.0, dtype=T.float64, requires_grad=True)
v1 = v0.sum_to_size(())
v2 = T.tensor([[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]], dtype=T.float64, requires_grad=True)
v3 = v2.sum_to_size((3,))
v4 = v2.sum_to_size((2, 1))
v5 = v2.sum_to_size((2, 3))
v6 = v2.sum_to_size(1, 3)
v7 = v2.sum_to_size(())
v8 = T.tensor([[True, False, True]]).sum_to_size((3,))
loss = (v1 + v3.sum() + v4.sum() * 2 + (v5 * v5).sum() + v6.sum() + v7) * 1.5
gs = T.autograd.grad(loss, [v0, v2], create_graph=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    # index_add of an integer tensor casts a float alpha to the integer type first, as
    # PyTorch (-1.5 -> -1, 2.5 -> 2): it multiplied in float and rounded (seed 9950672)
    "index_add_int_alpha": """
v2 = T.tensor([[2, 2, 0], [0, 2, 1]], dtype=T.int64)
v4 = T.tensor([1, 0], dtype=T.int64)
v5 = T.tensor([[0, 2], [4, 1]], dtype=T.int64)
v6 = v2.index_add(1, v4, v5, alpha=-1.5)
v7 = v2.index_add(0, T.tensor([1]), T.tensor([[3, 1, 2]]), alpha=2.5)
v2.index_add_(1, v4, v5, alpha=True)
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzd(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)
