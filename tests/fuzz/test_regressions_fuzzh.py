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
    # convolution_backward takes the input and the weight: under create_graph each first
    # derivative requires grad when one of them does (seeds 11001116, 11005097)
    "conv_derivative_flags": """
v0 = T.tensor([[0.2, -1.0, 1.5], [0.1, 0.4, -0.6]], dtype=T.float64)
v1 = T.tensor([[[-1.0, 0.5]], [[2.0, 0.25]]], dtype=T.float64, requires_grad=True)
v2 = T.tensor([0.5], dtype=T.float64, requires_grad=True)
v3 = T.nn.functional.conv_transpose1d(v0, v1, v2, stride=1, padding=0)
v4 = T.tensor([[[-1.0, 0.5], [0.3, 1.0]]], dtype=T.float64, requires_grad=True)
v5 = T.nn.functional.conv1d(v0, v4, v2)
v6 = T.tensor([[[0.5, 1.0, -2.0], [1.0, 0.0, 0.5]]], dtype=T.float64, requires_grad=True)
v7 = T.nn.functional.conv1d(v6, v4.detach())
loss = (v3 * v3.detach().tanh()).sum() + (v5 * v5.detach().tanh()).sum() + v7.sum()
gs = T.autograd.grad(loss, [v1, v2, v4, v6], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    # _prelu_kernel_backward takes the weight: its derivative requires grad, and its own
    # derivative gives the weight zeros (seed 11001163)
    "prelu_weight_derivative_flags": """
v1 = T.tensor([[-0.5, 1.0], [-2.0, -0.25]], dtype=T.float64)
v2 = T.tensor([2.0, 0.5], dtype=T.float64, requires_grad=True)
v3 = T.nn.functional.prelu(v1, v2)
loss = (v2 * v2.detach().tanh()).sum() + (v3 * v3.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v2], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    # native_layer_norm_backward takes input, weight and bias, native_batch_norm_backward
    # input and weight: every first derivative requires grad when one of them does, and the
    # second backward gives them nothing (seed 11002602)
    "layer_norm_derivative_flags": """
v0 = T.tensor([[[1.0, -1.0]], [[1.0, 2.0]], [[-3.0, 0.5]]], dtype=T.float64)
v1 = T.tensor([[0.0, 1.0]], dtype=T.float64, requires_grad=True)
v2 = T.tensor([[0.5, -1.0]], dtype=T.float64, requires_grad=True)
v3 = T.nn.functional.layer_norm(v0, (1, 2), weight=v1, eps=1e-05)
v4 = T.nn.functional.layer_norm(v0, (1, 2), bias=v2)
loss = (v3 * v3.detach().tanh()).sum() + (v4 * v4.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v1, v2], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    "batch_norm_derivative_flags": """
v0 = T.tensor([[[1.0, -1.0]], [[1.0, 2.0]], [[-3.0, 0.5]]], dtype=T.float64)
v5 = T.tensor([-1.5], dtype=T.float64, requires_grad=True)
v6 = T.nn.functional.batch_norm(v0, None, None, weight=v5, training=True)
v7 = T.nn.functional.instance_norm(v0.reshape(1, 3, 2), weight=v5.expand(3))
loss = (v6 * v6.detach().tanh()).sum() + (v7 * v7.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v5], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    # batch_norm and group_norm save no bias (their derivatives do not take it): changing it
    # in place before backward is no error, as PyTorch's (seed 11056630); layer_norm's does
    "norm_bias_not_saved": """
v1 = T.tensor([[1.0, -3.0], [-0.0, 2.0], [0.5, 0.25]], dtype=T.float64, requires_grad=True)
v3 = T.sigmoid(v1)
v4 = T.tensor([2.0, -1.0], dtype=T.float64, requires_grad=True)
v5 = T.tensor([-1.0, 0.5], dtype=T.float64)
v6 = T.nn.functional.batch_norm(v3, None, None, weight=v4, bias=v5, training=True)
v7 = T.nn.functional.group_norm(v3, 1, weight=v4, bias=v5)
v5.sin_()
loss = (v6 * v6.detach().tanh()).sum() + v7.sum()
gs = T.autograd.grad(loss, [v1, v4], create_graph=True, allow_unused=True)
""",
    # nll_loss_backward takes the input (saved): under create_graph the derivative requires
    # grad and its own derivative gives the input zeros
    "nll_loss_derivative_flags": """
v0 = T.tensor([[0.91, -0.99], [-1.46, 0.74], [0.82, 0.93]], dtype=T.float64, requires_grad=True)
v2 = T.tensor([1, 0, 0], dtype=T.int64)
v3 = T.nn.functional.nll_loss(v0, v2, reduction='none')
v4 = T.nn.functional.nll_loss(v0, v2, weight=T.tensor([0.5, 2.0], dtype=T.float64))
loss = (v0 * v0.detach().tanh()).sum() + (v3 * v3.detach().tanh()).sum() + v4
gs = T.autograd.grad(loss, [v0], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    # cumprod along a dim of size 1 (or of an empty tensor): PyTorch's derivative is the
    # gradient itself, recording nothing, so a second backward through it raises there too
    "cumprod_size_one_dim": """
v0 = T.tensor([[1.35, 1.78, -0.1]], dtype=T.float64, requires_grad=True)
v2 = v0.cumprod(-2)
loss = (v2 * v2.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v0], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    # rms_norm's result is contiguous, as PyTorch's composite: a transposed input's result
    # is cloned (CloneBackward0; seed 11029607)
    "rms_norm_contiguous_result": """
v0 = T.tensor([[-1.0, 1.0, 0.0], [0.0, -1.0, 0.5]], dtype=T.float64)
v2 = (v0 - 0.25).mT
v4 = T.tensor([0.5, -2.0], dtype=T.float64, requires_grad=True)
v5 = T.nn.functional.rms_norm(v2, (2,), weight=v4, eps=0.1)
v6 = T.nn.functional.rms_norm(v2, (3, 2))
v7 = v5.view(6)
loss = (v5 * v5.detach().tanh()).sum() + v6.sum() + v7.sum()
loss.backward()
""",
    # cdist's derivative has no derivative, as PyTorch's _cdist_backward: a second backward
    # raises NotImplementedError in both (seeds 11016021, 11021230, 11036781)
    "cdist_second_backward_not_implemented": """
v4 = T.tensor([[0.0], [2.0]], dtype=T.float64)
v5 = T.tensor([[1.0]], dtype=T.float64, requires_grad=True)
v6 = T.cdist(v4, v5, p=2.0)
v7 = T.cdist(v5, v4, p=1.0)
loss = (v5 * v5.detach().tanh()).sum() + (v6 * v6.detach().tanh()).sum() + v7.sum()
gs = T.autograd.grad(loss, [v5], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    # var_mean/std_mean with no degrees of freedom over everything: PyTorch's var_backward
    # is grad * where(x == mean, nan, inf), a constant (the first derivative of var_mean
    # then requires grad only if grad does); over some dims 2 / dof, negative or inf
    "var_mean_no_dof": """
v0 = T.tensor(1.04, dtype=T.float64, requires_grad=True)
v1 = T.var_mean(v0, dim=-1)[0]
v2 = T.tensor([0.5, -1.0], dtype=T.float64, requires_grad=True)
v3 = T.std_mean(v2, correction=3)[0]
v4 = T.var_mean(v2, dim=0, correction=3)[0]
loss = (v0 * v0.detach().tanh()).sum() + (v1 * v1.detach().tanh()).sum() + v3 + v4
gs = T.autograd.grad(loss, [v0, v2], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs[:1] if g is not None)
loss2.backward()
""",
    # an empty batch: PyTorch's double backward of the convolution gives nothing (sweep)
    "conv_empty_batch_second_backward": """
v0 = T.zeros((0, 3, 2), dtype=T.float64, requires_grad=True)
v2 = T.tensor([[[1.56, -3.86], [-1.49, 0.0], [-0.08, -0.74]]], dtype=T.float64, requires_grad=True)
v3 = T.tensor([-1.25], dtype=T.float64, requires_grad=True)
v4 = T.nn.functional.conv1d(v0, v2, v3, stride=1, padding=1)
loss = (v2 * v2.detach().tanh()).sum() + (v3 * v3.detach().tanh()).sum() + v4.sum()
gs = T.autograd.grad(loss, [v0, v2, v3], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    # what the nodes save, as PyTorch's: linalg.solve, solve_triangular and lu_solve never
    # save B (seeds 11046112, 11049757, 11303127, 11305266); tensordot sums a contracted
    # dim of size 1 first (seed 11041000); kron multiplies _unsafe_views (seed 11046607);
    # take_along_dim wraps the indices into a new tensor (seed 11022856): changing these in
    # place before backward is no error
    "saved_tensors_as_pytorch": """
v0 = T.tensor([[-2.0]], dtype=T.float64, requires_grad=True)
v1 = T.tensor([0.0, -1.0, -0.5], dtype=T.float64)
v2 = T.linalg.solve(((v0 @ v0.mT) + 4 * T.eye(3, dtype=v0.dtype)), v1, left=True)
v12 = (v0 @ v0.mT) + 4 * T.eye(3, dtype=v0.dtype)
v11 = T.linalg.solve_triangular(v12, v1[:, None], upper=True)
v14 = T.linalg.lu_solve(*T.linalg.lu_factor(v12), v1[:, None])
v1.exp_()
v3 = T.tensor([-1.0], dtype=T.float64, requires_grad=True)
v4 = v3.abs().add(1.25)
v5 = T.tensor([1.0], dtype=T.float64, requires_grad=True)
v6 = T.tensordot(v4, v5, dims=1)
v4.reciprocal_()
v7 = T.tensor(-1.0, dtype=T.float64)
v8 = T.kron(v7, v5)
v7.sin_()
v9 = T.tensor([1, 0, 1], dtype=T.int64)
v10 = T.take_along_dim(v5.expand(2), v9, dim=-1)
v9.index_add_(0, T.tensor([2, 0], dtype=T.int64), T.tensor([1, -3], dtype=T.int64))
v13 = v6 + v8.sum() + v11.sum() + v14.sum()
loss = (v2 * v2.detach().tanh()).sum() + (v10 * v10.detach().tanh()).sum() + v13
loss.backward()
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzh(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)
