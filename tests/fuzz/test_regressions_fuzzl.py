"""Fuzzer findings fixed by fuzzL (issue 7, leftovers of fuzzK's run): each program must run
alike in retrograd and PyTorch (values, dtypes, shapes, grad_fn names, gradients,
exceptions)."""

import pytest

pytest.importorskip("torch")

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # index_fill_ is a fill: PyTorch writes it through an expanded tensor (every alias takes
    # the value, with a deprecation warning) where retrograd refused it (seed 14508826)
    "index_fill_expanded": """
v0 = T.tensor([[-0.0]], dtype=T.float64)
v2 = (v0.log_softmax(dim=-1) > 0).any(dim=-2)
v6 = v2.expand(2, 2).reshape(4)
v7 = T.tensor(2, dtype=T.int64)
v6.index_fill_(0, v7, -2)
v8 = T.zeros(1, dtype=T.float64).expand(3)
v8.index_fill_(0, T.tensor([1], dtype=T.int64), T.tensor(3.0, dtype=T.float64))
v9 = v8 + v6[:3]
""",
    # lu_solve with an empty batch: take_rows' reshape(0, -1) raised (seed 14507863)
    "lu_solve_empty_batch": """
v0 = T.zeros((0, 1, 1), dtype=T.float64, requires_grad=True)
v1 = T.zeros((0, 1, 1), dtype=T.float64, requires_grad=True)
v2 = T.linalg.lu_solve(*T.linalg.lu_factor(((v0 @ v0.mT) + 2 * T.eye(1, dtype=v0.dtype))), v1)
v3 = T.linalg.lu_solve(*T.linalg.lu_factor(T.eye(2, dtype=T.float64)[None]),
                       T.zeros((0, 2, 3), dtype=T.float64), adjoint=True)
loss = v2.sum() + v3.sum()
loss.backward()
""",
    # conv_transpose1d of an empty batch may have an empty output, as PyTorch's; its backward
    # gives zeros (seed 14500518)
    "conv_transpose_empty_batch": """
v2 = T.zeros((0, 3, 0), dtype=T.float64, requires_grad=True)
v5 = T.tensor([[[2.0]], [[1.0]], [[-1.0]]], dtype=T.float64, requires_grad=True)
v6 = T.tensor([1.0], dtype=T.float64, requires_grad=True)
v7 = T.nn.functional.conv_transpose1d(v2, v5, v6, stride=1, padding=0)
v8 = T.nn.functional.conv_transpose2d(T.zeros((0, 3, 0, 0), dtype=T.float64), v5[..., None])
loss = v7.sum() + v8.sum()
loss.backward()
""",
    # cross_entropy dispatches as PyTorch: a target of the input's shape is probabilities
    # (integers refused: RuntimeError), and a weight of the wrong shape is refused before
    # the targets are read (seed 12101249)
    "cross_entropy_check_order": """
v1 = T.tensor([1.0], dtype=T.float64)
v6 = T.tensor([1], dtype=T.int64)
v7 = T.tensor(-1.0, dtype=T.float64)
try:
    v8 = T.nn.functional.cross_entropy(v1, v6, weight=v7.abs(), label_smoothing=0.1)
except Exception as e:
    pass
v2 = T.tensor([[1.0, 2.0, 0.0], [0.0, 1.0, 2.0]], dtype=T.float64)
try:
    v9 = T.nn.functional.cross_entropy(v2, T.tensor([1, 0], dtype=T.int64), weight=v7.abs())
except Exception as e:
    pass
try:
    v10 = T.nn.functional.cross_entropy(v2, v2.softmax(-1), ignore_index=0)
except Exception as e:
    pass
try:
    v11 = T.nn.functional.cross_entropy(v2, v2.softmax(-1), weight=v7[None])
except Exception as e:
    pass
""",
    # a leaf's first .grad takes its current shape, changed under no_grad by unsqueeze_ after
    # its AccumulateGrad was made (PyTorch's clone_obey_contract; seed 14502034)
    "leaf_grad_after_unsqueeze_": """
v1 = T.zeros((0,), dtype=T.float64, requires_grad=True)
v4 = v1.ceil()
v2 = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
v5 = v2 * 3
with T.no_grad():
    v1.unsqueeze_(-2)
    v2.unsqueeze_(0)
loss = (v1 * v1.detach().tanh()).sum() + v5.sum()
loss.backward()
""",
    # a second backward through CopySlices without retain_graph raises, as PyTorch's (which
    # frees the function it wraps); with retain_graph it runs
    "copy_slices_backward_twice": """
w = T.tensor([1.0], dtype=T.float64, requires_grad=True)
b = T.zeros(3, dtype=T.float64)
b[0:1] = w
b.sum().backward()
try:
    (b * 2).sum().backward()
except Exception as e:
    pass
c = T.zeros(3, dtype=T.float64)
v = c[1:]
v.copy_(w.expand(2))
c.sum().backward(retain_graph=True)
try:
    (c * 2).sum().backward()
except Exception as e:
    pass
try:
    (c * 3).sum().backward()
except Exception as e:
    pass
""",
    # an unbatched input: PyTorch's order of checks (target rank, dtype, size, then the
    # weight's shape; seed 12101249, its second shrink)
    "nll_loss_unbatched_one_element_target": """
v1 = T.tensor([1.0, -0.0], dtype=T.float64, requires_grad=True)
v6 = T.tensor([1], dtype=T.int64)
v7 = T.tensor(-1.0, dtype=T.float64)
try:
    v8 = T.nn.functional.cross_entropy(v1, v6, weight=v7.abs(), label_smoothing=0.1)
except Exception as e:
    pass
try:
    v9 = T.nn.functional.nll_loss(v1, T.tensor([1, 0], dtype=T.int64))
except Exception as e:
    pass
try:
    v10 = T.nn.functional.nll_loss(v1, T.tensor([1.0], dtype=T.float64))
except Exception as e:
    pass
try:
    v11 = T.nn.functional.nll_loss(v1, T.tensor([[1]], dtype=T.int64))
except Exception as e:
    pass
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzl(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)
