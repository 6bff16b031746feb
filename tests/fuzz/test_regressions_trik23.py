"""Fuzzer findings handled by triK (issue 7, stop 23: raise seeds 19619582, 19670971,
19671202): fixed ones are programs that must run alike in retrograd and PyTorch, accepted
ones test that their predicate matches the seed and refuses a variant."""

import pytest

torch = pytest.importorskip("torch")

import retrograd  # noqa: E402

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # a non-leaf squeezed in place under no_grad keeps the grad_fn (and shape) it had; the
    # matmul's gradient for it, reduced by PyTorch to its new shape (0,), does not fit that
    # grad_fn's (1, 0): PyTorch raises 'invalid gradient', retrograd summed its (1, 0)
    # gradient straight to the old shape (seed 19619582)
    "matmul_of_an_operand_squeezed_under_no_grad": """
v1 = T.zeros((0, 1), dtype=T.float64, requires_grad=True)
v2 = v1.mT
v3 = v2.masked_fill(v2 > 0, 3)
with T.no_grad():
    v3.squeeze_(-2)
v7 = T.zeros((1, 0, 1), dtype=T.float64, requires_grad=True)
v8 = v3 @ v7
loss = (v7 * v7.detach().tanh()).sum() + (v8 * v8.detach().tanh()).sum()
loss.backward(inputs=[v1, v7])
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_trik23(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)


def _matmul_after_shape_change(lib, a_shape, change, b_shape):
    x = lib.ones(a_shape, dtype=lib.float64, requires_grad=True)
    a = x * 2
    with lib.no_grad():
        getattr(a, change[0])(*change[1:])
    b = lib.ones(b_shape, dtype=lib.float64, requires_grad=True)
    try:
        (a @ b).sum().backward()
    except RuntimeError as e:
        assert "returned an invalid gradient" in str(e)
        return "raised"
    return tuple(x.grad.shape), tuple(b.grad.shape), x.grad.sum().item()


@pytest.mark.parametrize("a_shape, change, b_shape", [
    ((1, 2, 3), ("squeeze_", 0), (4, 3, 5)),   # PyTorch raises (the (2, 3) gradient)
    ((2, 3), ("unsqueeze_", 0), (4, 3, 5)),    # a (1, 2, 3) gradient sums to (2, 3)
    ((1, 3), ("squeeze_", 0), (4, 3, 5)),      # 1-D @ 3-D: raises
    ((3,), ("unsqueeze_", 0), (4, 3, 5)),
    ((2, 3), ("unsqueeze_", 0), (3, 5)),
    ((1, 3, 2), ("transpose_", 1, 2), (4, 3, 5)),
])
def test_matmul_gradient_checked_against_the_grad_fn_shape(a_shape, change, b_shape):
    # the matmul's gradients take the operands' shapes at the product, as PyTorch's, and the
    # engine then checks them against the operand's (older) grad_fn shape
    ours = _matmul_after_shape_change(retrograd, a_shape, change, b_shape)
    theirs = _matmul_after_shape_change(torch, a_shape, change, b_shape)
    assert ours == theirs
