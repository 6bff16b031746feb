"""Fuzzer findings of stop 18's 10-minute run fixed by fuzzJ (issue 7, the silent wrong
values, gradients and dtypes): each program must run alike in retrograd and PyTorch (values,
dtypes, shapes, grad_fn names, gradients, exceptions)."""

import pytest

pytest.importorskip("torch")

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # in-place view ops (t_, unsqueeze_, squeeze_, transpose_, as_strided_) leave a
    # retain_grad on the old node in PyTorch: .grad is the gradient of the value before the
    # op, in its old shape (seeds 11005484, 11040102; 10047713 of stop 18)
    "retain_grad_then_inplace_view": """
v4 = T.tensor([[-0.0, -1.0, 2.0]], dtype=T.float64, requires_grad=True)
v8 = T.nn.functional.softshrink(v4)
v8.retain_grad()
v8.t_()
v3 = T.tensor(2.0, dtype=T.float64, requires_grad=True)
v5 = T.nn.functional.rrelu(v3, training=False)
v5.retain_grad()
v9 = (v5).add(-1.5)
v5.t_()
v0 = T.tensor([[[-1.0]]], dtype=T.float64, requires_grad=True)
v1 = v0.masked_fill(v0 > 0, 0.0)
v1.retain_grad()
v1.unsqueeze_(2)
v6 = v1.permute(2, 3, 0, 1)
v10 = v4 * 2.0
v10.retain_grad()
v10.as_strided_((3, 1), (1, 1))
v20 = (v8 * v8.detach().tanh()).sum() + (v9 * v9.detach().tanh()).sum()
loss = v20 + (v6 * v6.detach().tanh()).sum() + (v10 * v10.detach().tanh()).sum()
loss.backward()
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzJ(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)
