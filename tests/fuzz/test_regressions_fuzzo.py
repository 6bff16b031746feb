"""Fuzzer findings fixed by fuzzO (issue 7: leaf gradients and values after in-place ops,
hooks, setitem): each program must run alike in retrograd and PyTorch (values, dtypes,
shapes, grad_fn names, gradients, hook logs, exceptions)."""

import pytest

pytest.importorskip("torch")

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # norm(p) for p > 1, p != 2: PyTorch masks grad / norm ** (p - 1) where the norm is 0, on
    # the reduced shape, so the second derivative there is nan (0 * inf): retrograd guarded
    # the division and gave finite numbers (seeds 12508461, 12526828)
    "norm_p3_zero_second_derivative": """
v0 = T.tensor([[[0.0, 1.0, 1.0]], [[1.0, -1.0, 0.0]]], dtype=T.float64, requires_grad=True)
v3 = v0.norm(p=3, dim=-2)
v4 = T.tensor([[[-1.0]], [[-1.0]]], dtype=T.float64, requires_grad=True)
v5 = T.nn.functional.conv_transpose1d(v3, v4, None, stride=1, padding=1)
v6 = (v5.tanh().mul(0.9)).tan()
v7 = v0.norm(p=1.5, dim=-1)
loss = (v6 * v6.detach().tanh()).sum() + (v7 * v7.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v0, v4], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    "norm_p3_empty_slice_hook": """
LOG = []
v2 = T.zeros((0, 1), dtype=T.float32, requires_grad=True)
v5 = v2.T
v10 = v5.norm(p=3, dim=1)
h11 = v10.register_hook(lambda g: LOG.append(('v10', g.detach().clone())))
loss = (v5 * v5.detach().tanh()).sum() + (v10 * v10.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v2], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzo(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)
