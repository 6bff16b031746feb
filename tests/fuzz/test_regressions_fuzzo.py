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
    # binary_cross_entropy's target derivative is -logit(x) unclamped, as PyTorch's (the
    # loss clamps its logs at -100, the derivative does not): inf at x = 0 (seed 12514494)
    "bce_target_grad_at_zero": """
v0 = T.tensor(-0.0, dtype=T.float64)
v3 = T.clamp_max(v0, v0).rsqrt()
v4 = T.tensor(1.0, dtype=T.float64, requires_grad=True)
v5 = T.nn.functional.binary_cross_entropy((v3).sigmoid(), (v4).sigmoid(), reduction='sum')
v6 = T.tensor([0.0, 0.3], dtype=T.float64, requires_grad=True)
v7 = T.tensor([0.25, 0.5], dtype=T.float64, requires_grad=True)
v8 = T.nn.functional.binary_cross_entropy(v6, v7, weight=T.tensor([2.0, 3.0], dtype=T.float64))
loss = (v4 * v4.detach().tanh()).sum() + (v5 * v5.detach().tanh()).sum() + v8
gs = T.autograd.grad(loss, [v4, v7], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    # logcumsumexp's derivative takes log|g| unguarded, as PyTorch's: at g = 0 the second
    # derivative by g is nan in both (seed 12570680)
    "logcumsumexp_zero_grad_second_derivative": """
v0 = T.tensor([-2.0], dtype=T.float64, requires_grad=True)
v2 = v0.logcumsumexp(-1)
v7 = T.nn.functional.binary_cross_entropy((v2).sigmoid(), (v0).sigmoid(), reduction='none')
loss = (v7 * v7.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v0], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    # norm (p = 2) of a zero slice under a nan gradient: grad * 0 is nan, as PyTorch's
    # (the first-order path multiplied the element by a guarded 0: seed 12564607)
    "norm_zero_nan_grad": """
v1 = T.tensor(0.0, dtype=T.float64, requires_grad=True)
v3 = v1.norm(dim=0)
v10 = v3.var(dim=-1)
loss = (v3 * v3.detach().tanh()).sum() + (v10 * v10.detach().tanh()).sum()
loss.backward(retain_graph=True)
""",
    # smooth_l1/huber at a nan difference: PyTorch's kernels give nan (both comparisons
    # fail), and their double backward multiplies by the mask |d| < beta (strict), so a nan
    # gradient stays nan where the mask is 0 (seed 12514730)
    "smooth_l1_huber_nan": """
v2 = T.tensor([-1.0, 2.0], dtype=T.float64, requires_grad=True)
v6 = v2.log().frac()
v7 = T.tensor([2.0, 2.0], dtype=T.float64, requires_grad=True)
v8 = T.nn.functional.smooth_l1_loss(v6, v7, beta=0.5)
v9 = T.nn.functional.huber_loss(v6, v7, delta=0.5, reduction='sum')
v10 = T.tensor([1.5, 0.1], dtype=T.float64, requires_grad=True)
v11 = T.nn.functional.huber_loss(v10, T.tensor([1.0, 0.0], dtype=T.float64), delta=0.5)
loss = (v6 * v6.detach().tanh()).sum() + (v7 * v7.detach().tanh()).sum()
loss = loss + (v8 * v8.detach().tanh()).sum() + v9 + v11
gs = T.autograd.grad(loss, [v2, v7, v10], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    # an in-place view op on an integer tensor that requires grad: PyTorch changes its shape
    # and version, then refuses the record (seed 12533187)
    "inplace_view_of_int_requiring_grad": """
v0 = T.tensor(-0.0, dtype=T.float64, requires_grad=True)
v2 = T.tensor([0, 3], dtype=T.int64)
v2[0:1] = v0.sum()
try:
    v2.unsqueeze_(0)
except Exception as e:
    pass
try:
    v2.t_()
except Exception as e:
    pass
v4 = T.tensor([5], dtype=T.int64)
v4[0:1] = v0.sum()
try:
    v4.squeeze_(0)
except Exception as e:
    pass
""",
    # stack/cat give a contiguous result (unless every input is channels-last), as
    # PyTorch's: a reshape of it is then a view in both, which under no_grad requires grad
    # (seed 12675358)
    "stack_of_transposed_is_contiguous": """
v0 = T.tensor([[[-1.0, -2.0, 2.0]], [[0.0, -0.0, 1.0]]], dtype=T.float64, requires_grad=True)
v1 = T.float_power(v0, v0.abs().add(0.5))
v1.swapaxes_(2, 0)
v2 = T.stack([v1, v1], dim=-4)
v3 = T.cat([v1, v1], dim=1)
with T.set_grad_enabled(False):
    v10 = v2.reshape(2, 6)
    v11 = v3.reshape(12)
""",
    # x[basic, tensor] = v: PyTorch takes the basic part's view first and index_put_s into
    # it, so x records CopySlices (not IndexPutBackward0), an int selects (x[0, :, idx]
    # keeps idx's dim in place, where NumPy moves it first) and a whole-dim slice takes no
    # view (stop 19's open item)
    "setitem_basic_then_tensor": """
v0 = T.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], dtype=T.float64)
v0.requires_grad_()
v1 = v0 * 1
v2 = T.tensor(0.5, dtype=T.float64, requires_grad=True)
v1[1:, T.tensor([0, 2])] = v2
v3 = v0 * 2
v3[:, T.tensor([1])] = v2
v4 = (v0 * 3).reshape(1, 3, 3)
v4[0, :, T.tensor([0, 2])] = T.tensor([7.0, 8.0], dtype=T.float64)
v4[None, T.tensor(0), T.tensor([1])] = v2 * 2
loss = (v1 * v1.detach().tanh()).sum() + (v3 * v3.detach().tanh()).sum() + v4.sum()
loss.backward()
""",
    # an in-place view op on a leaf or a view of a leaf requiring grad: PyTorch refuses the
    # leaf (RuntimeError) before it reads the dims (IndexError), seed 13305823
    "inplace_view_of_leaf_before_dims": """
v0 = T.tensor([[2.0]], dtype=T.float64, requires_grad=True)
v3 = v0.flatten(-2, 1)
try:
    v3.transpose_(-1, 1)
except Exception as e:
    pass
try:
    v0.unsqueeze_(5)
except Exception as e:
    pass
""",
    # split/chunk/unbind of a bool tensor that a write made require grad: PyTorch refuses
    # to record them ('Autograd not support dtype'), as its other views (seed 13306688)
    "split_of_bool_requiring_grad": """
v1 = T.tensor([[-0.0], [-1.0], [0.0]], dtype=T.float64, requires_grad=True)
v6 = (v1).lt(0.25)
v6[2] = v1.sum()
try:
    v8 = v6.chunk(3, dim=1)[0]
except Exception as e:
    pass
try:
    v9 = v6.unbind(0)[0]
except Exception as e:
    pass
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzo(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)
