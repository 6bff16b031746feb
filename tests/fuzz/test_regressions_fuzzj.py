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
    # var_mean skipped an all-zero var gradient, where PyTorch's 0 * 2 / (n - correction)
    # * (x - mean) is nan for n == correction (seed 11010000); std's derivative under
    # create_graph divides by std before masking, so std's own gradient is nan where std is 0
    # (seed 11042127); var_mean and std_mean gradients over a dim with n < correction
    # (2 / dof negative, not nan) and of an infinite element (x - mean = -inf); only the
    # outputs that got a gradient contribute (var_mean(...)[1] of one element: seed 11101700)
    "var_std_degenerate_gradients": """
v0 = T.tensor([[[-1.0]]], dtype=T.float64, requires_grad=True)
v2 = T.var_mean(v0, dim=-3)[0]
v2.zero_()
v10 = T.tensor([[[-2.0]], [[0.0]]], dtype=T.float64, requires_grad=True)
v12 = v10.relu()
v13 = v12.std(dim=-3, keepdim=True, correction=1)
v13.retain_grad()
v20 = T.tensor([[3.0], [1.0], [2.0]], dtype=T.float64, requires_grad=True)
v21 = T.var_mean(v20, dim=1, correction=2)
v22 = T.tensor([[1.0, float('inf')], [1.0, 1.0]], dtype=T.float64, requires_grad=True)
v23 = T.var_mean(v22, dim=1, correction=0)[0]
v24 = T.std_mean(v22[1:], dim=1, correction=0)[0]
v24.retain_grad()
v27 = T.var_mean(T.tensor(-1.0, dtype=T.float64, requires_grad=True), dim=0)[1]
v25 = (v2 * v2.detach().tanh()).sum() + (v12 * v12.detach().tanh()).sum()
v26 = v25 + (v13 * v13.detach().tanh()).sum() + v21[0].sum() + v21[1].sum()
loss = v26 + (v23 * T.tensor([0.0, 1.0], dtype=T.float64)).sum() + v24.sum() + v27
gs = T.autograd.grad(loss, [v0, v10, v20, v22], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    # var_mean/std_mean kept the forward's mean and spread for the backward in the outputs'
    # memory: an in-place change of an output changed the gradient silently; std_mean saves
    # its std as PyTorch (an in-place change of it is refused at backward)
    "var_mean_outputs_changed_in_place": """
v0 = T.tensor([[1.0, 1.0], [1.0, 2.0]], dtype=T.float64, requires_grad=True)
v1 = T.var_mean(v0, dim=1)
v2 = v1[1]
v2.mul_(2)
v3 = T.std_mean(v0, dim=1)
v4 = v3[1]
v4.mul_(2)
loss = v1[0].sum() + v2.sum() + v3[0].sum() + v4.sum()
loss.backward()
""",
    "std_mean_std_changed_in_place": """
v0 = T.tensor([[1.0, 1.0], [1.0, 2.0]], dtype=T.float64, requires_grad=True)
v5 = T.std_mean(v0, dim=0)
v6 = v5[0]
v6.mul_(2)
loss = v6.sum()
loss.backward()
""",
    # nll_loss/cross_entropy skip an ignored target in the backward, as PyTorch: 0, not
    # 0 * g / 0 (every target ignored: the mean's total weight is 0; seed 11039613); a
    # batched target of the wrong spatial shape is a RuntimeError (ValueError: the batch)
    "nll_all_targets_ignored": """
v0 = T.tensor([[-2.0]], dtype=T.float64, requires_grad=True)
v7 = T.tensor([0], dtype=T.int64)
v8 = T.tensor([1.0], dtype=T.float64)
v9 = T.nn.functional.cross_entropy(v0, v7, weight=v8.abs(), ignore_index=0)
v10 = T.tensor([[[-2.0, 1.0], [0.5, -1.0]]], dtype=T.float64, requires_grad=True)
v11 = T.tensor([[1, 0]], dtype=T.int64)
v12 = T.nn.functional.nll_loss(v10, v11, ignore_index=1, reduction='none')
v13 = T.nn.functional.nll_loss(v10, v11, weight=T.tensor([0.0, 2.0], dtype=T.float64))
v14 = T.nn.functional.nll_loss(v10, T.tensor([[1, 0, 1]], dtype=T.int64))
loss = (v9 * v9.detach().tanh()).sum() + (v12 * v12.detach().tanh()).sum() + v13
loss.backward()
""",
    # masked_fill_ through an expanded tensor writes the masked elements only, as PyTorch's
    # kernel: an alias left alone wrote its old value back over a filled one (seed 11020511)
    "masked_fill_expanded_aliases": """
v2 = T.tensor([True, False], dtype=T.bool)
v5 = v2.expand(2, -1)
v8 = T.tensor([[-2.5, 0.03], [0.08, -0.73]], dtype=T.float64)
v5.masked_fill_(v8 > 0, 0.25)
v0 = T.tensor([1.0, 2.0, 3.0], dtype=T.float64)
v1 = v0.expand(3, 3)
v1.masked_fill_(T.eye(3, dtype=T.float64).flip(0) > 0, 9.0)
""",
    # slogdet of a matrix with a nan (or inf) entry, from the LU factors as PyTorch: sign 0
    # and logabsdet nan where U's diagonal has a nan (NumPy's: sign 1; seed 11019784)
    "slogdet_nonfinite_entries": """
v0 = T.tensor([[1.0, -0.0, -1.0], [0.0, 1.0, -2.0], [0.0, -0.0, -2.0]], dtype=T.float64)
v5 = v0.acos()
v9 = (v5.tanh().mul(0.9)).tan()
v10 = T.linalg.slogdet(((v9 @ v9.mT) + 2 * T.eye(1, dtype=v9.dtype)))[0]
v11 = T.linalg.slogdet(T.tensor([[float('nan'), 1.0], [1.0, 1.0]], dtype=T.float64))
v12 = T.linalg.slogdet(T.tensor([[1.0, 1.0], [float('-inf'), 1.0]], dtype=T.float32))
""",
    # the median of an empty integer (or bool) tensor is PyTorch's NaN cast to the dtype
    # (seeds 11034350, 11044285); mode of a slice with a NaN is what PyTorch's sort of
    # (value, index) pairs by < leaves first (seed 11062220)
    "median_empty_int_mode_nan": """
v2 = T.zeros((0,), dtype=T.int64)
v7 = v2.nanmedian()
v8 = T.zeros((1, 0), dtype=T.int32).median()
v9 = T.zeros((0, 2), dtype=T.bool).median()
v10 = T.zeros((0,), dtype=T.int16).nanmedian()
v12 = T.zeros((0, 2), dtype=T.bool)
v13 = v12.median(0)
v0 = T.tensor([-0.32, 0.19], dtype=T.float64)
v1 = T.sinh(v0)
v1.pow_(0.5)
v3 = v1.mode(0).values
v4 = T.tensor([[2.0, float('nan'), 1.0], [float('nan'), -1.0, -1.0]], dtype=T.float64)
v5 = v4.mode(1)
v6 = v5.values
v11 = v5.indices
""",
    # integer addmv/addmm/addbmm/baddbmm truncate a float beta/alpha toward 0, as PyTorch
    # (seed 11060037); integer addr refuses one
    "int_products_float_coefficients": """
v1 = T.tensor([[4]], dtype=T.int64)
v6 = v1.permute(1, 0)
v8 = T.tensor(4, dtype=T.int64)
v9 = T.tensor([4], dtype=T.int64)
v10 = T.addmv(v8, v6, v9, beta=0.5, alpha=2)
v11 = T.addmm(v1, v1, v1, beta=2, alpha=-1.5)
v12 = T.baddbmm(v1[None], v1[None], v1[None], beta=1.9, alpha=0.5)
v13 = T.addbmm(v1, v1[None], v1[None], beta=-2.5, alpha=3)
v14 = T.addr(v1, v9, v9, beta=0.5)
""",
    # adaptive average pooling of an inf or nan: only the windows holding it (the averaging
    # matmul's 0 * nan spread it to every output and every gradient; seed 11061004)
    "adaptive_avg_pool_nonfinite": """
v0 = T.tensor([[-1.0, -0.0], [2.0, -1.0]], dtype=T.float64)
v0.log_()
v1 = v0.cos()
v3 = T.nn.functional.adaptive_avg_pool1d(v1, 2)
v4 = T.tensor([[[1.0, 2.0, 5.0], [2.0, 3.0, -1.0], [0.5, 0.25, 4.0]]], requires_grad=True)
v5 = T.nn.functional.adaptive_avg_pool2d(v4, 2)
v6 = T.tensor([[float('nan'), 1.0], [2.0, float('inf')]])
loss = (v5 * v6).sum()
loss.backward()
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzj(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)
