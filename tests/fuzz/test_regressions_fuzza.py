"""Fuzzer findings about views, no_grad views, requires_grad_ flags and overlapping memory
(issue 7, fuzzA): each program must run alike in retrograd and PyTorch (values, dtypes,
shapes, flags, grad_fn names, gradients, exceptions), as in test_regressions.py."""

import pytest

pytest.importorskip("torch")

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # swapaxes of two size-1 dims is the same block with other strides: PyTorch's partial
    # overlap (it compares every stride), so an in-place op with it as operand raises
    "partial_overlap_size1_strides": """
v8 = T.tensor([[[[0.0]], [[1.0]], [[-1.0]]]], dtype=T.float64)
v9 = v8.swapaxes(0, -2)
try:
    v8.mul_(v9)
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
v1 = T.arange(3.0)
v2 = v1[None]
v2.mul_(v1.unsqueeze(0))
v3 = v1.view(3, 1)
v3.add_(v1[:, None])
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)
