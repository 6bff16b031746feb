"""Fuzzer findings fixed by fuzzS (issue 7, stop 20's 7-minute runs): each program must run
alike in retrograd and PyTorch (values, dtypes, shapes, grad_fn names, gradients,
exceptions)."""

import pytest

pytest.importorskip("torch")

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # matrix_exp of a matrix of 1-norm below PyTorch's first theta is I + A exactly (the Pade
    # solve gave exp(0) = 0.9999999999999999, which trunc turned into 0: seed 13404629)
    "matrix_exp_tiny_norm": """
v0 = T.zeros((3, 0), dtype=T.float64)
v1 = T.zeros((1, 0), dtype=T.float64)
v2 = T.inner(v0, v1)
v3 = T.linalg.matrix_exp((v2 @ v2.mT).mul(0.3))
v5 = T.trunc(v3)
v7 = v5.nan_to_num()
v3.xlogy_(v7.abs().add(0.5))
v8 = T.linalg.matrix_exp(T.zeros((2, 3, 3), dtype=T.float32)).floor()
v9 = T.linalg.matrix_exp(T.full((2, 2), 1e-9, dtype=T.float64)).sub(1).mul(1e9).round()
""",
    # a view made under no_grad of a leaf, refused after a write to the leaf, kept the
    # leaf's AccumulateGrad (of the shape before transpose_) alive: later graphs' gradients
    # for the leaf mismatched it (seed 13204195)
    "refused_view_keeps_no_accumulator": """
v1 = T.tensor([[1.0], [-1.0], [1.0]], dtype=T.float32, requires_grad=True)
with T.set_grad_enabled(False):
    v2 = v1.unflatten(0, (3, 1))
with T.no_grad():
    v2.mul_(0.25)
    v1.transpose_(-2, 1)
loss = (v1 * v1.detach().tanh()).sum()
loss.backward(retain_graph=True)
v3 = T.tensor([2.0, 3.0], dtype=T.float64, requires_grad=True)
with T.no_grad():
    v4 = v3[:1]
    v3.mul_(2)
    v3.unsqueeze_(0)
loss2 = (v3 * 3).sum()
loss2.backward()
""",
    # det of singular matrices under create_graph: PyTorch's derivative is the cofactor
    # matrix (its SVD path), not zeros, so the second derivative is not 0 either (brief)
    "det_singular_create_graph": """
v0 = T.tensor([[0.0, 1.0], [0.0, 0.0]], dtype=T.float64, requires_grad=True)
v1 = T.tensor([[[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]], dtype=T.float64)
v2 = T.tensor([[[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]]], dtype=T.float64)
v3 = T.cat([v1, v2]).requires_grad_()
v4 = T.tensor([1.0, -2.0], dtype=T.float64)
v5 = T.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=T.float64)
v6 = T.arange(18, dtype=T.float64).reshape(2, 3, 3)
loss = T.linalg.det(v0) + (T.linalg.det(v3) * v4).sum()
gs = T.autograd.grad(loss, [v0, v3], create_graph=True)
loss2 = (gs[0] * v5).sum() + (gs[1] * v6).sum()
loss2.backward()
""",
    # nll_loss of a one-class 1-d input with a one-element target: PyTorch's backward
    # compares input.size(0) with the target's, so one class passes (seed 13907262)
    "nll_one_class_one_element_target": """
v0 = T.tensor([0.0], dtype=T.float64, requires_grad=True)
v1 = (v0.abs().add(0.5)).rsqrt()
v3 = T.tensor([0], dtype=T.int64)
v4 = T.nn.functional.nll_loss(v1, v3, reduction='sum')
loss = (v1 * v1.detach().tanh()).sum() + (v4 * v4.detach().tanh()).sum()
loss.backward()
""",
    # an in-place op of an integer tensor with an operand of a shape that does not
    # broadcast: PyTorch's RuntimeError naming both sizes, not NumPy's ValueError from the
    # cast check before the kernel (seed 15126039)
    "inplace_cast_check_unbroadcastable": """
v1 = T.tensor([-3, 0], dtype=T.int64)
v2 = v1.transpose(-1, 0)
v3 = T.tensor([1.0, -0.0, 2.0], dtype=T.float64)
try:
    v2.hypot_(v3)
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # a batched matmul of operands requiring grad whose batch dims do not broadcast:
    # PyTorch's RuntimeError naming both sizes, not NumPy's ValueError from the check of
    # which operands PyTorch saves as copies (ops/matmul_saved.py)
    "matmul_unbroadcastable_batch_requiring_grad": """
v0 = T.ones((2, 3, 4), dtype=T.float64, requires_grad=True)
v1 = T.ones((3, 4, 5), dtype=T.float64, requires_grad=True)
v2 = T.ones((5, 4, 2), dtype=T.float64)
try:
    v3 = v0 @ v1
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
try:
    v4 = v0 @ v2
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzs(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)
