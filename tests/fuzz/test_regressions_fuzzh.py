"""Fuzzer findings of stop 19's 10-minute run fixed by fuzzH (issue 7: retrograd raised at
backward where PyTorch does not, mostly derivative flags under create_graph): each program
must run alike in retrograd and PyTorch (values, dtypes, shapes, grad_fn names, gradients,
exceptions)."""

import pytest

pytest.importorskip("torch")

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # pooling's derivative takes the pooled input too in PyTorch (avg_pool2d_backward(grad,
    # self, ...)): under create_graph the first derivative requires grad, the second gives
    # the input zeros; the input is saved (seeds 11002610, 11004720, 11006292, 11011959)
    "pool_derivative_takes_input": """
v0 = T.tensor([[1.0, -2.0, 0.5, 3.0], [0.3, -0.7, 2.0, 1.0]], dtype=T.float64, requires_grad=True)
v1 = T.nn.functional.adaptive_max_pool1d(v0, 3)
v2 = T.nn.functional.adaptive_avg_pool1d(v0, 3)
v3 = T.nn.functional.avg_pool1d(v0, 2, stride=1, padding=1)
v4 = T.nn.functional.max_pool1d(v0, 2)
v5 = T.nn.functional.max_pool2d(v0[None], 2)
v6 = T.nn.functional.avg_pool2d(v0[None], 2, ceil_mode=True)
v7 = T.nn.functional.adaptive_avg_pool2d(v0[None], 2)
v8 = T.nn.functional.fractional_max_pool2d(v0[None], 1, output_size=(1, 2))
v9 = v3.sum() + v4.sum() + v5.sum() + v6.sum() + v7.sum() + v8.sum()
loss = (v1 * v1.detach().tanh()).sum() + (v2 * v2.detach().tanh()).sum() + v9
gs = T.autograd.grad(loss, [v0], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    "pool_saves_input": """
v0 = T.tensor([[1.0, -2.0, 0.5, 3.0], [0.3, -0.7, 2.0, 1.0]], dtype=T.float64, requires_grad=True)
v1 = v0 * 1.5
v2 = T.nn.functional.avg_pool1d(v1, 2)
v3 = T.nn.functional.adaptive_max_pool1d(v1, 3)
v1.add_(1.0)
loss = v2.sum() + v3.sum()
loss.backward()
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzh(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)
