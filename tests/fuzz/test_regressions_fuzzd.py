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
    # sum_to_size(()) of a 0-d tensor is a new tensor (it shared the memory: a later
    # in-place change showed through, seed 9952341); under no_grad a size it already has
    # gives the tensor itself (a leaf that requires grad, seed 9953158)
    "sum_to_size_0d_copy": """
v0 = T.tensor(-3.0, dtype=T.float64)
v1 = (v0).mul(v0)
v2 = v1.sum_to_size(())
v1.sub_(1.5)
v3 = T.tensor([[-1.0], [0.0], [1.0]], dtype=T.float64, requires_grad=True)
with T.no_grad():
    v5 = v3.sum_to_size((3, 1))
""",
    # heaviside has no derivative: PyTorch's grad_fn is NotImplemented (seed 9952051)
    "heaviside_grad_fn": """
v0 = T.tensor(0.0, dtype=T.float64, requires_grad=True)
v1 = (v0.abs().add(0.5)).log10()
v3 = T.heaviside(v1, T.tensor(1.0, dtype=T.float64))
v4 = T.heaviside(T.tensor([0.0, 2.0], dtype=T.float64), v1)
""",
    # binary_cross_entropy_with_logits has the target's dtype, as PyTorch's
    # (1 - target).mul_(input)...: float64 logits with a float32 target give float32 (seed
    # 9951960); the gradients keep each input's dtype
    "bce_with_logits_target_dtype": """
v0 = T.tensor([[-1.0, -1.0, 0.5], [0.0, -1.0, 2.0]], dtype=T.float64, requires_grad=True)
v2 = T.tensor([[1.0, -0.5, -2.0], [1.0, 0.25, 0.0]], dtype=T.float32, requires_grad=True)
v3 = T.nn.functional.binary_cross_entropy_with_logits(v0, (v2).sigmoid())
v4 = T.nn.functional.binary_cross_entropy_with_logits(v0.float(), v2.double().sigmoid(),
    reduction='none')
v5 = T.nn.functional.binary_cross_entropy_with_logits(v0, v2.sigmoid(), reduction='sum',
    pos_weight=T.tensor([2.0, 1.0, 0.5], dtype=T.float32))
loss = v3 * 2 + v4.sum() + v5
loss.backward()
""",
    # linalg.vecdot of two 1-d tensors is PyTorch's vdot (VdotBackward0, seed 9953332), and
    # multi_dot ends in a view (ViewBackward0, seed 9952212)
    "vecdot_multi_dot_grad_fn": """
v7 = T.tensor([2.0, -1.0], dtype=T.float64)
v11 = T.tensor([-0.5, 1.5], dtype=T.float64, requires_grad=True)
v12 = T.linalg.vecdot(v7, v11)
v1 = T.tensor([[-1.0, -0.0, -1.0], [1.0, 1.0, 2.0], [-0.0, 0.0, 0.0]], dtype=T.float64)
v3 = T.tensor([[-1.0, -1.0, 0.0]], dtype=T.float64, requires_grad=True)
v4 = T.tensor([[0.0], [-1.0], [0.0]], dtype=T.float64, requires_grad=True)
v5 = T.linalg.multi_dot([v3, v1, v4])
v6 = T.linalg.multi_dot([v11, T.tensor([[1.0], [2.0]], dtype=T.float64)])
loss = v12 + v5.sum() + v6.sum()
gs = T.autograd.grad(loss, [v11, v3, v4], create_graph=True, allow_unused=True)
""",
    # a multi-output op of which one output is used: slogdet's sign alone gives the input
    # no gradient (None), std_mean's/var_mean's mean alone a gradient that does not require
    # grad under create_graph, as PyTorch's derivatives that skip an undefined output
    # gradient (the engine materialized zeros; seeds 9952671, 9955369)
    "multi_output_unused_gradient": """
v3 = T.zeros((0, 1, 1), dtype=T.float64, requires_grad=True)
v6 = T.tensor([[2.0, 1.0], [1.0, 3.0]], dtype=T.float64, requires_grad=True)
v0 = T.tensor(1.0, dtype=T.float64, requires_grad=True)
v1 = T.tensor([1.0, 2.0, 4.0], dtype=T.float64, requires_grad=True)
v9 = T.linalg.slogdet(((v3 @ v3.mT) + 5 * T.eye(4, dtype=v3.dtype)))[0]
v10 = T.linalg.slogdet(v6)[0]
v2 = T.std_mean(v0, dim=-1)[1]
v4 = T.var_mean(v1, dim=0)[1]
v5 = T.std_mean(v1, dim=0)[1]
loss = (v0 * v0.detach().tanh()).sum() + v9.sum() + v10 + v2 + v4 * 2 + v5
gs = T.autograd.grad(loss, [v3, v6, v0, v1], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
try:
    loss2.backward()
except Exception as e:  # PyTorch: RuntimeError (loss2 does not require grad)
    print(type(e).__name__, e)
""",
    # hardtanh/relu6 of an integer tensor clamp in its type, the bounds cast to it (-1.5 ->
    # -1), as PyTorch: it gave float64, and hardtanh_ refused the float result (seed 9955277)
    "hardtanh_integer": """
v0 = T.tensor(-1, dtype=T.int64)
T.nn.functional.hardtanh_(v0)
v1 = T.tensor([-2, 0, 3, 7], dtype=T.int64)
v2 = T.nn.functional.hardtanh(v1, -1.5, 2.5)
v3 = T.nn.functional.relu6(v1)
v4 = T.nn.functional.hardtanh(v1, -0.5, 0.5)
v5 = v1.clone()
T.nn.functional.hardtanh_(v5, -1.5, 2.5)
""",
    # max_pool1d of an input that needs no gradient is a fresh tensor (PyTorch's
    # max_pool1d_impl), not a view of the 2-d pool's: an in-place op on it records that op
    # (IndexAddBackward0, MulBackward0), not AsStridedBackward0 (seed 9951746)
    "max_pool1d_no_grad_not_a_view": """
v2 = T.tensor([[-1.0, -1.0, -0.0]], dtype=T.float64)
v3 = v2.cos()
v9 = T.nn.functional.max_pool1d(v3, 1, stride=1, padding=0, ceil_mode=True)
v10 = T.tensor([0, 0], dtype=T.int64)
v11 = T.tensor([[-2.0, 1.0, -1.0], [-2.0, 2.0, -1.0]], dtype=T.float64, requires_grad=True)
v9.index_add_(0, v10, v11)
v12 = T.nn.functional.max_pool1d(v3, 2, stride=1)
v12.mul_(T.tensor(2.0, dtype=T.float64, requires_grad=True))
v13 = T.tensor([[[1.0, -2.0, 3.0, 0.5]]], dtype=T.float64, requires_grad=True)
v14 = T.nn.functional.max_pool1d(v13 * 1, 2)
v14.mul_(3.0)
loss = v9.sum() + v12.sum() + v14.sum()
loss.backward()
""",
    # multi_margin_loss of one sample (a 1-d input) with reduction='none' has the target's
    # shape, as PyTorch's: (1,) for a 1-element target, () for a 0-d one (seed 9962389)
    "multi_margin_loss_one_sample_shape": """
v0 = T.tensor([0.5, -1.0, 0.25], dtype=T.float64, requires_grad=True)
v8 = T.nn.functional.multi_margin_loss(v0, T.tensor([2]), p=2, reduction='none')
v9 = T.nn.functional.multi_margin_loss(v0, T.tensor(0), reduction='none')
loss = (v8 * 3).sum() + v9
loss.backward()
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzd(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)
