"""Fuzzer findings of stop 18's 30-minute run fixed by the lead (issue 7): each program must
run alike in retrograd and PyTorch (values, dtypes, shapes, grad_fn names, gradients,
exceptions)."""

import pytest

pytest.importorskip("torch")

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # index and scatter ops on a region with an empty dim: the flat positions were built
    # with arange stepping by a stride that is 0 past the empty dim (ZeroDivisionError;
    # seeds 10001504, 10022698, 10002869, 10002948, 10008752 and the others of that run)
    "index_copy_empty_region": """
v2 = T.zeros((2, 3, 0), dtype=T.float64, requires_grad=True)
v4 = v2.sigmoid()
v5 = T.tensor([1, 0], dtype=T.int64)
v6 = T.zeros((2, 3, 0), dtype=T.float64, requires_grad=True)
v7 = v4.index_copy(-3, v5, v6)
v8 = v4.index_add(0, v5, v6)
v9 = v4.index_fill(0, v5, 1.0)
loss = v7.sum() + v8.sum() + v9.sum()
loss.backward()
""",
    # (forward only: PyTorch's ScatterAddBackward0 gives src a gradient of index's shape
    # there, [3, 1, 0] for [3, 3, 0], and its engine refuses it)
    "scatter_add_empty_region": """
v1 = T.zeros((1, 1, 0), dtype=T.float64)
v2 = T.zeros((3, 1, 0), dtype=T.int64)
v3 = T.zeros((3, 3, 0), dtype=T.float64)
v1.scatter_add_(0, v2, v3)
with T.set_grad_enabled(False):
    v0 = T.zeros((1, 4, 0), dtype=T.float64)
    v0.scatter_add_(0, T.zeros((1, 4, 0), dtype=T.int64), v0.clone())
    v4 = v0.sub(v1.sum())
""",
    # batch_norm of an empty input: PyTorch's clone * weight[0] + bias[0] (AddBackward0,
    # MulBackward0, CloneBackward0), in training and in eval without running statistics
    # (seeds 10000088, 10008777 and the other batch_norm grad_fn signatures)
    "batch_norm_empty_input": """
v0 = T.zeros((1, 3, 0), dtype=T.float64, requires_grad=True)
v3 = T.tensor([-0.5, 3.0, 1.0], dtype=T.float64, requires_grad=True)
v4 = T.tensor([-0.0, 2.0, -1.0], dtype=T.float64, requires_grad=True)
v5 = T.nn.functional.batch_norm(v0, None, None, weight=v3, bias=v4, training=True)
v6 = T.nn.functional.batch_norm(v0, None, None, weight=v3, training=False)
v7 = T.nn.functional.batch_norm(v0, None, None, training=True)
loss = v5.sum() + v6.sum() + v7.sum() + (v3 * v4).sum()
loss.backward()
""",
    # adaptive pooling lets the first dim be empty, (N, C, L) or (C, L) alike, as PyTorch
    # (seed 10000684: adaptive_max_pool1d of [0, 1, 1] raised in retrograd); an average to size 1
    # is a mean, taken before the empty-dim check (seed 10005729)
    "adaptive_pool_empty_first_dim": """
v1 = T.tensor([[2.0], [-1.0], [-0.0]], dtype=T.float64, requires_grad=True)
v3 = v1.narrow(-2, 2, 0)
v9 = T.nn.functional.adaptive_max_pool1d(v3[None], 2)
v10 = T.nn.functional.adaptive_avg_pool1d(v3, 2)
v11 = T.nn.functional.adaptive_max_pool2d(T.zeros((0, 2, 2), dtype=T.float64), 2)
v12 = T.nn.functional.adaptive_avg_pool1d(T.zeros((1, 0), dtype=T.float64), 1)
loss = v9.sum() + v10.sum() + v1.sum()
loss.backward()
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_stop18(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)
