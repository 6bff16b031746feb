"""Fuzzer findings fixed on the fuzzC branch (engine, double backward, empty tensors, layouts):
each program must run alike in retrograd and PyTorch (values, dtypes, shapes, grad_fn names,
gradients, exceptions).  Kept apart from test_regressions.py so that branches merge."""

import pytest

pytest.importorskip("torch")

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # cat's 1-D empty inputs ("legacy empty", shape [0]) are skipped by PyTorch's shape and dim
    # checks, and their gradient is fresh zeros: under create_graph it does not require grad,
    # so the second backward raises as PyTorch's (seed 9450620)
    "cat_legacy_empty_create_graph": """
v0 = T.zeros((0,), dtype=T.bool)
v2 = T.flipud(v0)
v5 = T.tensor(0.0, dtype=T.float64, requires_grad=True)
v6 = v2.masked_fill(v5 > 0, 0.25)
v7 = T.zeros((0,), dtype=T.float64, requires_grad=True)
v8 = T.hstack([v6, v7])
v9 = T.remainder(v5, v8.abs().add(0.5))
loss = (v8 * v8.detach().tanh()).sum() + (v9 * v9.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v5, v7], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
try:
    loss2.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # a hook registered on a view, then the view changed in place: PyTorch's CopySlices runs
    # the in-place op's derivative itself, so the view's old grad_fn (which keeps the hook) is
    # reached only through other uses of the old value (the hook doubled the whole gradient)
    "hook_on_view_then_inplace": """
v1 = T.tensor([[0.26, 2.0]], dtype=T.float64)
v2 = T.tensor([[1.0, 3.0]], dtype=T.float64, requires_grad=True)
v3 = v1 * v2
v4 = v3[0]
h5 = v4.register_hook(lambda g: g * 2)
v6 = v4 * 3
v4.clamp_(-0.4, 0.5)
loss = (v4 * v4.detach().tanh()).sum() + (v6 * 10).sum() + (v3 * 100).sum()
loss.backward()
""",
    # an einsum result that PyTorch makes a view of its product (ViewBackward0): a hook on it,
    # then an in-place change: the hook sees nothing, under create_graph too (seed 9482606)
    "einsum_view_hook_inplace": """
v1 = T.tensor([[0.26]], dtype=T.float64)
v2 = T.tensor([[1.0]], dtype=T.float64, requires_grad=True)
v3 = T.einsum('ij,jk->j', v1, v2)
h4 = v3.register_hook(lambda g: g * 2)
v3.clamp_(-0.4, 0.5)
loss = (v2 * v2.detach().tanh()).sum() + (v3 * v3.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v2], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
""",
    # ... and its gradient goes through CopySlices, which keeps it requiring grad under
    # create_graph though sign_'s derivative is zero (seed 9485972)
    "einsum_view_sign_create_graph": """
v1 = T.tensor([[-0.5]], dtype=T.float64)
v2 = T.tensor([[0.25]], dtype=T.float64, requires_grad=True)
v3 = T.einsum('ij,jk->', v1, v2)
v3.sign_()
v4 = (v3).float_power(v1.abs().add(0.5))
loss = (v2 * v2.detach().tanh()).sum() + (v3 * v3.detach().tanh()).sum()
loss = loss + (v4 * v4.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v2], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    # einsum that only reorders dims is a permute view of its operand (NumPy's einsum shares
    # the memory too): an in-place change of it bumps the operand's version
    "einsum_permute_view": """
v0 = T.tensor([[1.0, -2.0], [0.5, 3.0]], dtype=T.float64, requires_grad=True)
v1 = v0 * v0
v2 = T.einsum('ij->ji', v1)
v2.mul_(2)
v3 = T.einsum('ij->ij', v1 + 1)
v3.add_(1)
try:
    v1.sum().backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # a node whose gradients all go nowhere (its input a view made under no_grad) still
    # unpacks its saved result, as PyTorch's: an in-place change of the result raises, and a
    # second backward finds it freed; its saved inputs PyTorch never saved (a mul here)
    "dead_end_node_unpacks_result": """
v5 = T.tensor([[[0.0]]], dtype=T.float64, requires_grad=True)
with T.no_grad():
    v6 = v5.squeeze(-3)
v7 = T.exp(v6)
v7.clamp_(-0.4, 0.5)
try:
    v7.sum().backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
v8 = T.exp(v6)
v9 = v8.sum()
v9.backward()
try:
    v9.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
v10 = (v6 * v6.detach().tanh()).sum()
v10.backward()
v10.backward()
v11 = v6.sin()
with T.no_grad():
    v5.mul_(1)
try:
    v11.sum().backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # ldexp saves its result (the exponent's derivative is g * result * log 2) and the
    # exponent, not the input, as PyTorch's LdexpBackward0 (seeds 9801820, 9802665)
    "ldexp_saves_result": """
v4 = T.tensor([-3.0, 0.5], dtype=T.float64, requires_grad=True)
v5 = v4.abs()
v6 = v5.erf()
v8 = v5.sign()
v9 = (v6).ldexp(v8)
v9[0] = 2.0
try:
    v9.sum().backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
v10 = T.tensor([1.5, -2.0], dtype=T.float64, requires_grad=True)
v11 = v10 * 1
v12 = v11.ldexp(v4)
v11.mul_(2)
loss = (v12 * v12.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v4], create_graph=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    # gather saves its index tensor (PyTorch's GatherBackward0): changing the index in place
    # breaks backward instead of moving the gradient (seed 9804715)
    "gather_saves_index": """
v0 = T.tensor([[0.0], [1.0]], dtype=T.float64, requires_grad=True)
v2 = T.tensor([[1]], dtype=T.int64)
v3 = v0.gather(-2, v2)
v2.pow_(0)
try:
    v3.sum().backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
v4 = v0.gather(0, v2)
v4.sum().backward(retain_graph=True)
v4.sum().backward()
""",
    # masked_select saves its input and mask, index_select its index (PyTorch's nodes), for
    # the version check: a change of the input through a no_grad alias raises (seed 9805926)
    "masked_select_saves_input": """
v0 = T.tensor(-2.0, dtype=T.float64, requires_grad=True)
v1 = v0.flatten()
v2 = v0.masked_select(v0 > 0)
v4 = (v2) + (v2)
with T.set_grad_enabled(False):
    v1.add_(T.tensor(-1.0, dtype=T.float64))
loss = (v4 * v4.detach().tanh()).sum()
try:
    gs = T.autograd.grad(loss, [v0], create_graph=True, allow_unused=True)
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
v5 = T.tensor([[1.0, -2.0], [3.0, 4.0]], dtype=T.float64, requires_grad=True)
v6 = T.tensor([1, 0])
v7 = v5.index_select(1, v6)
v6.mul_(1)
try:
    v7.sum().backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # einsum keeps an operand only for the other operands' derivatives (seed 9807254)
    "einsum_saves_what_others_need": """
v0 = T.tensor([[-1.0, 0.5]], dtype=T.float64)
v2 = v0.log_softmax(dim=1)
v4 = T.tensor([[-1.0], [2.0]], dtype=T.float64, requires_grad=True)
v5 = T.einsum('ij,jk->ki', v2, v4)
v6 = T.tensor(-2.0, dtype=T.float64)
with T.set_grad_enabled(False):
    v4.lerp_(v6, 0.25)
loss = (v5 * v5.detach().tanh()).sum() + (v6 * v6.detach().tanh()).sum()
loss.backward()
""",
    # matmul (dot, mv, mm, batched) keeps an operand only for the other's derivative, as
    # PyTorch's: changing the operand that alone needs a gradient breaks nothing (seeds
    # 9805661, 9807248, 9805650)
    "matmul_saves_what_the_other_needs": """
v1 = T.tensor([-1.0, -1.0, -1.0], dtype=T.float64, requires_grad=True)
v3 = T.tensor([-0.0, -2.0, -1.0], dtype=T.float64)
v4 = T.matmul(v1, v3)
v5 = T.tensor([[1.0, 2.0, 0.5], [0.0, 1.0, 3.0]], dtype=T.float64)
v6 = T.matmul(v5, v1)
v7 = T.matmul(v1, v5.mT)
v8 = T.matmul(v5.unsqueeze(0).expand(2, 2, 3), v1)
v9 = T.matmul(v1.unsqueeze(0), v5.mT)
with T.no_grad():
    v1 *= 1.5
loss = (v1 * v1.detach().tanh()).sum() + (v4 * v4.detach().tanh()).sum()
loss = loss + (v6 * 2).sum() + (v7 * 3).sum() + v8.sum() + (v9 * v9).sum()
gs = T.autograd.grad(loss, [v1], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
    # index_select's result is contiguous, as PyTorch's (NumPy put the indexed dimension
    # outermost): view() of it works (seed 9804175)
    "index_select_contiguous": """
v1 = T.tensor([[2.0, 2.0], [-2.0, 0.0], [-1.0, 2.0], [0.0, -1.0]], requires_grad=True)
v6 = v1.index_select(-1, T.tensor([1, 1]))
v8 = v6.view(-1)
v9 = v1.eq(2.0).index_select(1, T.tensor([1, 0])).view(-1)
loss = (v8 * v8.detach().tanh()).sum()
loss.backward()
""",
    # copysign saves its input only when the input needs a gradient (seed 9813834)
    "copysign_saves_input_if_needed": """
v2 = T.tensor([-0.5, 2.0], dtype=T.float64)
v5 = v2 * 1
v7 = T.tensor(-1.0, dtype=T.float64, requires_grad=True)
v8 = (v5).copysign(v7)
v5.floor_()
loss = (v7 * v7.detach().tanh()).sum() + (v8 * v8.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v7], retain_graph=True, allow_unused=True)
""",
    # addmm keeps mat1 only for mat2's gradient and the reverse (seeds 9834415, 9836679)
    "addmm_saves_what_the_other_needs": """
v0 = T.tensor([[1.0, 0.0, 1.0]], dtype=T.float64)
v3 = T.tensor([[-3.0], [1.0], [0.0]], dtype=T.float64)
v4 = T.tensor(0.0, dtype=T.float64, requires_grad=True)
v5 = T.addmm(v4, v0, v3)
v7 = v3.detach()
v7.pow_(3)
loss = (v5 * v5.detach().tanh()).sum()
loss.backward(retain_graph=True)
v8 = T.tensor([[-1.0], [2.0], [0.0]], dtype=T.float64, requires_grad=True)
v9 = T.addmm(v4, v0, v8)
with T.no_grad():
    v8.clamp_(-0.9, 0.5)
loss2 = (v8 * v8.detach().tanh()).sum() + (v9 * v9.detach().tanh()).sum()
gs = T.autograd.grad(loss2, [v8, v4], create_graph=True, allow_unused=True)
""",
    # dot keeps an operand only for the other's gradient too (seed 9838609)
    "dot_saves_what_the_other_needs": """
v0 = T.tensor([-0.5, 1.0], dtype=T.float64, requires_grad=True)
v2 = v0.cumsum(dim=-1)
v3 = T.tensor([-0.0, -1.0], dtype=T.float64)
v4 = v2.dot(v3)
v2[1] = 0.5
loss = (v4 * v4.detach().tanh()).sum()
loss.backward()
""",
    "cat_legacy_empty_shapes": """
v0 = T.zeros((0,), dtype=T.float64, requires_grad=True)
v1 = T.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=T.float32, requires_grad=True)
v2 = T.cat([v0, v1])
v3 = T.cat([v1, v0, v1], 1)
v4 = T.cat([v0, v0], 2)
try:
    v5 = T.cat([v0, v1], -3)
except Exception as e:  # PyTorch: IndexError
    print(type(e).__name__, e)
loss = (v2 * v2.detach().tanh()).sum() + (v3 * 2).sum() + v4.sum()
loss.backward()
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzc(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)
