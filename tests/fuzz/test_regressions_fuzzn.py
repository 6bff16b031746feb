"""Fuzzer findings fixed by fuzzN (issue 7, stop 19's run: the losses' and normalizations'
values): each program must run alike in retrograd and PyTorch (values, dtypes, shapes,
grad_fn names, gradients, exceptions)."""

import pytest

pytest.importorskip("torch")

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # svdvals / cond / eigvalsh under create_graph: the engine's zeros for the unused
    # singular vectors are tensors, and the SVD's derivative took them for real gradients:
    # repeated singular values gave nan where PyTorch (undefined gradients) gives the values'
    # derivative alone (seeds 12502451, 12565863, 12574713)
    "svdvals_repeated_create_graph": """
v1 = T.tensor([[2.0], [-0.0], [-0.0]], dtype=T.float64, requires_grad=True)
v10 = T.linalg.cond(((v1 @ v1.mT) + 4 * T.eye(3, dtype=v1.dtype)))
v11 = T.linalg.svdvals(T.eye(3, dtype=T.float64) * v1)
v12 = T.linalg.eigvalsh(v1 + v1.mT)
loss = (v10 * v10.detach().tanh()).sum() + v11.sum() + (v12 * v12).sum()
gs = T.autograd.grad(loss, [v1], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
""",
    # group_norm of empty groups under create_graph: PyTorch's weight gradient is nan (its
    # kernel scales each sample's zero sum by the empty group's nan rstd), as retrograd's
    # first order; the create_graph form gave 0 (seed 12557762)
    "group_norm_empty_groups_create_graph": """
v6 = T.zeros((2, 4, 0), dtype=T.float64, requires_grad=True)
v7 = T.tensor([0.0, 1.0, 2.0, 3.0], dtype=T.float64, requires_grad=True)
v8 = T.tensor([-1.0, 0.5, 1.0, 2.0], dtype=T.float64, requires_grad=True)
v9 = T.nn.functional.group_norm(v6, 2, weight=v7, bias=v8)
v10 = (v7 * v7.detach().tanh()).sum() + (v8 * v8.detach().tanh()).sum()
loss = v10 + (v9 * v9.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v6, v7, v8], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
""",
    # binary_cross_entropy's target derivative is -logit(input), unclamped (+-inf at an
    # input of 0 or 1; the loss's logs are clamped at -100), times grad, weight, over numel
    # in PyTorch's order (seeds 12553003, 12585404)
    "bce_target_grad_at_0_and_1": """
v2 = T.tensor([0.0, 1.0, 0.5, 1e-50], dtype=T.float64, requires_grad=True)
v3 = T.tensor([0.3, 0.2, 0.9, 0.5], dtype=T.float64, requires_grad=True)
v4 = T.tensor([2.0, 0.5, 1.0, 3.0], dtype=T.float64)
v5 = T.nn.functional.binary_cross_entropy(v2, v3, reduction='none')
v6 = T.nn.functional.binary_cross_entropy(v2, v3, weight=v4, reduction='mean')
v7 = T.tensor([-0.0, 0.0, 0.0, -2.0], dtype=T.float32, requires_grad=True)
v9 = T.tensor([1.0, 0.0, 0.5, 1.0])
v8 = T.nn.functional.binary_cross_entropy(v9, v7.sigmoid(), reduction='sum')
loss = (v5 * v5.detach().tanh()).sum() + v6 + v8
gs = T.autograd.grad(loss, [v2, v3, v7], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
""",
    # an integer or bool tensor with a float number (add_number / sub_number / mul_number,
    # the losses' margins and epsilons) is the default float dtype, as PyTorch's; NumPy
    # made it float64 (seeds 12525854, 12571771, 12584940, 12614467, 12644047, 12654847)
    "integer_losses_default_float": """
v0 = T.tensor([3, -1], dtype=T.int64)
v1 = T.tensor([4, 2], dtype=T.int64)
v2 = T.tensor([-1, 1], dtype=T.int64)
v3 = T.nn.functional.margin_ranking_loss(v0, v1, v2, margin=0.5, reduction='sum')
v4 = T.nn.functional.margin_ranking_loss(v0, v1, v2, margin=0.0)
v5 = T.nn.functional.triplet_margin_loss(v0[None], v1[None], v2[None], margin=1.0, reduction='none')
v9 = v0.abs().add(0.5)
v6 = T.nn.functional.poisson_nll_loss(v9, v1.abs(), log_input=False, full=True, reduction='sum')
v7 = T.nn.functional.poisson_nll_loss(v0, v1.abs())
v8 = T.nn.functional.triplet_margin_loss(v0[None], v1[None], v2[None], p=1, swap=True)
""",
    # batch_norm/instance_norm of an empty input of any dtype: PyTorch's empty path (a
    # clone) runs before the kernel's dtype check (seed 11907661)
    "norm_empty_bool_input": """
v0 = T.tensor([[[-0.0, 2.0]]], dtype=T.float64)
v1 = v0[1:1]
v2 = (v1) <= (v1)
v3 = T.nn.functional.instance_norm(v2)
v4 = T.nn.functional.batch_norm(v2.long(), None, None, training=True)
v7 = T.tensor([2.0])
v5 = T.nn.functional.batch_norm(v2, None, None, weight=v7, bias=v7 - 1, training=True)
try:
    v6 = T.nn.functional.instance_norm(v0 > 0)
except Exception as e:
    pass
""",
    # local_response_norm of integers: PyTorch's avg_pool takes int64 (a truncating
    # division; the result float32) and refuses other integers and bool with
    # NotImplementedError, where NumPy's in-place divide raised its own TypeError
    "local_response_norm_integers": """
v0 = T.tensor([[[1, -3], [2, 5], [-7, 4]]], dtype=T.int64)
v1 = T.nn.functional.local_response_norm(v0, 3, alpha=0.5)
v2 = T.nn.functional.local_response_norm(v0[None].transpose(1, 2), 2, alpha=0.5)
try:
    v3 = T.nn.functional.local_response_norm(v0.int(), 2)
except Exception as e:
    pass
try:
    v4 = T.nn.functional.local_response_norm(v0 > 0, 2)
except Exception as e:
    pass
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzn(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)
