"""Fuzzer findings fixed on branch fuzzF (issue 7, the last KNOWN_BUGS classes): each program
must run alike in retrograd and PyTorch (values, dtypes, shapes, grad_fn names, gradients,
exceptions)."""

import pytest

pytest.importorskip("torch")

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # kron ends in PyTorch's _unsafe_view (UnsafeViewBackward0): a fresh tensor, not a view of
    # the product, so an in-place op on it is recorded on it, not as AsStridedBackward0
    # (seeds 9972015, 9976976, 9979842)
    "kron_result_is_fresh": """
v0 = T.tensor(0.0, dtype=T.float32)
v1 = T.tensor(-0.0, dtype=T.float32, requires_grad=True)
v2 = T.kron(v0, v1)
v2.frac_()
v3 = T.tensor([[1.0], [-2.0]], dtype=T.float64, requires_grad=True)
v4 = T.tensor([[0.5, 1.5], [2.0, -1.0]], dtype=T.float64, requires_grad=True)
v5 = T.kron(v3, v4)
v5.mul_(2.0)
v6 = T.kron(v3[:, 0], v4)
v6.add_(1.0)
loss = v5.sum() + (v6 * v6).sum()
loss.backward()
""",
    # group_norm's weight gradient under create_graph requires grad whenever weight does (PyTorch's
    # double backward reads the forward node's mean/rstd outputs), even for an input without
    # grad; the bias gradient does not; a second backward leaves both .grad None (seed 9970909)
    "group_norm_derivative_flags": """
v1 = T.tensor([[1.0, 0.0, 1.0], [0.5, -2.0, 0.25]], dtype=T.float64)
v4 = T.sinh(v1)
v5 = T.tensor([-1.0, -0.0, -0.5], dtype=T.float64, requires_grad=True)
v6 = T.tensor([0.0, 1.0, -1.0], dtype=T.float64, requires_grad=True)
v7 = T.nn.functional.group_norm(v4, 1, weight=v5, bias=v6)
loss = (v5 * v5.detach().tanh()).sum() + (v6 * v6.detach().tanh()).sum() + \
    (v7 * v7.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v5, v6], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    # multi_margin_loss's first derivative under create_graph is PyTorch's NotImplemented node
    # (multi_margin_loss_backward has no derivative): it requires grad, and a second backward
    # through it raises RuntimeError in both (seed 9970773)
    "multi_margin_loss_no_second_derivative": """
v0 = T.tensor([[0.5, -1.0, 0.25], [0.1, 0.3, 0.9]], dtype=T.float64, requires_grad=True)
v1 = T.nn.functional.multi_margin_loss(v0, T.tensor([1, 2]), p=2)
loss = v1 * 1.5
gs = T.autograd.grad(loss, [v0], create_graph=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    # conv1d / conv_transpose1d of bool tensors: PyTorch's CPU kernels raise NotImplementedError
    # after the shape checks; integer tensors run (seed 9970436)
    "conv_bool_not_implemented": """
v0 = T.tensor([[[True, False, True], [False, True, True]]])
v1 = T.tensor([[[True, True]], [[False, True]]])
v2 = T.nn.functional.conv_transpose1d(v0, v1)
v3 = T.nn.functional.conv1d(v0, v1.transpose(0, 1))
v4 = T.nn.functional.conv_transpose1d(v0.long(), v1.long())
""",
    # cumsum_/cumprod_ of a bool tensor: NotImplementedError (PyTorch's kernel has no bool
    # version), while a 0-d or empty one is left as it is (seeds 9971648, 9974289)
    "cumsum_cumprod_inplace_bool": """
v0 = T.tensor([True, False, True])
v0.cumsum_(0)
v1 = T.tensor([[True], [True]])
v1.cumprod_(-1)
v2 = T.tensor(True)
v2.cumsum_(0)
v3 = T.tensor(False)
v3.cumprod_(-1)
v4 = T.tensor([1, 2, 3])
v4.cumsum_(0)
""",
    # dist of a float and an int (or bool) tensor: the promoted float dtype, a gradient for the
    # float one; two integer tensors raise RuntimeError (seeds 9972035, 9976024)
    "dist_mixed_dtypes": """
v0 = T.tensor([1.0, -2.0, 0.5], dtype=T.float32, requires_grad=True)
v1 = T.tensor([1, 3, -1])
v2 = T.dist(v0, v1)
v3 = T.dist(v1, v0, 3)
v4 = T.dist(v0.double(), T.tensor([True, False, True]), 1)
v5 = T.dist(v1, T.tensor([2, 2, 2]))
v6 = T.dist(T.tensor([True]), T.tensor([False]))
loss = v2 * 2 + v3 + v4
loss.backward()
""",
    # a node without a derivative (1.5 % x, NotImplemented) whose input is a no_grad view of a
    # leaf: its gradient goes nowhere, but PyTorch still calls it, and it raises (seed 9966412)
    "not_implemented_node_gradient_nowhere": """
v0 = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
with T.no_grad():
    v1 = v0[0:1]
v2 = 1.5 % v1
loss = v2.sum() * 2
loss.backward()
""",
    # reflect/replicate padding's first derivative under create_graph takes the input too, as
    # PyTorch's ReplicationPad1DBackwardBackward0 (zeros for it): it requires grad whenever
    # the input does, so a second backward runs (seed 9962455)
    "pad_derivative_takes_input": """
v0 = T.tensor([[-1.0, 2.0, 0.5]], dtype=T.float64, requires_grad=True)
v1 = T.nn.functional.pad(v0, (2, 1), mode='replicate')
v2 = T.nn.functional.pad(v0, (1, 2), mode='reflect')
loss = (v0 * v0.detach().tanh()).sum() + (v1 * v1.detach().tanh()).sum() + \
    (v2 * v2.detach().exp()).sum()
gs = T.autograd.grad(loss, [v0], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    # LAPACK results are column-major in PyTorch (inv, matrix_power(-1), solve, cholesky):
    # flatten/reshape of them copies, so a later in-place change does not show (seed 9960414)
    "lapack_results_column_major": """
v4 = T.tensor([[1.0]], dtype=T.float64)
v5 = T.linalg.matrix_power(((v4 @ v4.mT) + 3 * T.eye(2, dtype=v4.dtype)), -1)
v6 = v5.flatten(-2, 1)
v5.sign_()
v7 = T.tensor([[4.0, 1.0], [1.0, 3.0]], dtype=T.float64, requires_grad=True)
v8 = T.linalg.cholesky(v7 @ v7.mT)
v9 = v8.reshape(4)
v10 = T.linalg.solve(v7, v7.detach())
v11 = v10.flatten()
v12 = T.linalg.inv(v7)
v13 = v12.reshape(-1)
v8.mul_(2)
v10.add_(1)
v12.neg_()
loss = v6.sum() + (v9 * v9).sum() + v11.sum() * 3 + (v13 * v13).sum()
loss.backward()
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzf(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)
