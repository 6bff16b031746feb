"""Fuzzer findings of the 10-minute run on stop 18's final main (issue 7, forward refusals
and crashes) fixed by fuzzI: each program must run alike in retrograd and PyTorch (values,
dtypes, shapes, grad_fn names, gradients, exceptions: a statement that raises must raise the
same class in both)."""

import pytest

pytest.importorskip("torch")

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # circular padding is slice copies in PyTorch, with no empty-dim check: an empty batch,
    # channel or padded dim passes (seeds 11004226, 11035995, 11036154, 11036846, 11056640;
    # the padded result is not named: its grad_fn differs by design, CopySlices there)
    "circular_pad_empty_dims": """
v0 = T.zeros((0, 2, 1), dtype=T.float64)
v1 = T.nn.functional.pad(v0, (1, 0, 2, 0), mode='circular')
v2 = T.zeros((0, 1), dtype=T.float64)
v3 = T.nn.functional.pad(v2, (1, 1), mode='circular')
v4 = T.zeros((2, 0), dtype=T.float64)
v5 = T.nn.functional.pad(v4, (0, 0), mode='circular')
v6 = T.nn.functional.pad(T.zeros((1, 0, 2), dtype=T.float64), (1, 2, 0, 0), mode='circular')
v7 = T.nn.functional.pad(v4, (1, 0), mode='circular')
v8 = T.zeros((0, 1, 2), dtype=T.float64, requires_grad=True)
loss = T.nn.functional.pad(v8, (1, 2, 1, 1), mode='circular').sum() * 2
loss.backward()
""",
    # constant padding crops with narrow() first, low side then high side: a negative pad
    # larger than what is left raises narrow's RuntimeError even where the other side's pad
    # would give a non-negative size (seeds 11019032, 11023679, 11060935)
    "constant_pad_narrow_rule": """
v1 = T.zeros((1, 0), dtype=T.float64)
v5 = T.nn.functional.pad(v1, (-1, 2, -1, 0), value=0.5)
v6 = T.nn.functional.pad(T.zeros((0,), dtype=T.float64), (2, -1), value=-2)
v7 = T.nn.functional.pad(T.zeros((1,), dtype=T.float64), (2, -2), value=1.0)
v8 = T.constant_pad_nd(T.zeros((2, 3), dtype=T.float64), (1, -1, -1, -1))
v9 = T.nn.functional.pad(T.zeros((3,), dtype=T.float64, requires_grad=True), (-3, 1), value=2.0)
loss = v8.sum() + v9.sum()
""",
    # adaptive average pooling: an output of 1s is mean (its dtype error first); the 2-d
    # kernel checks the empty spatial dims, then the dtype only when it writes an output;
    # the 3-d one always (seed 11009059: adaptive_avg_pool1d of an empty int64 input)
    "adaptive_avg_pool_int_empty": """
v3 = T.tensor([[-1]], dtype=T.int64)
v5 = v3.narrow(-2, 0, 0)
v6 = T.nn.functional.adaptive_avg_pool1d(v5, 2)
v7 = T.nn.functional.adaptive_avg_pool1d(v3, 1)
v8 = T.nn.functional.adaptive_avg_pool1d(T.zeros((1, 0), dtype=T.int64), 2)
v9 = T.nn.functional.adaptive_avg_pool1d(v3, 2)
v10 = T.nn.functional.adaptive_avg_pool2d(T.zeros((1, 1, 3, 3), dtype=T.bool), (0, 2))
v11 = T.nn.functional.adaptive_avg_pool3d(T.zeros((0, 1, 2, 2, 2), dtype=T.int64), 2)
v12 = T.nn.functional.adaptive_avg_pool2d(T.zeros((3,), dtype=T.float64), (1, None))
v13 = T.nn.functional.adaptive_max_pool2d(T.zeros((3,), dtype=T.float64), (2, 2))
v14 = T.nn.functional.adaptive_avg_pool2d(T.zeros((3,), dtype=T.float64), 1)
""",
    # softmax/log_softmax of an empty integer or bool tensor: PyTorch's kernel (and its
    # dtype check) is not reached, the result is empty of the input's dtype (seeds
    # 11010560, 11058080); non-empty ones still raise NotImplementedError
    "softmax_empty_int_bool": """
v2 = T.tensor([[True]], dtype=T.bool)
v10 = v2.narrow(0, 0, 0)
v11 = v10.softmax(dim=-1)
v12 = T.nn.functional.log_softmax(v10.reshape(0, 3), dim=-2)
v13 = T.zeros((2, 0), dtype=T.int64).softmax(0)
v14 = T.nn.functional.softmin(T.zeros((0,), dtype=T.int64), dim=0)
v15 = v2.softmax(dim=-1)
v16 = T.tensor([1, 2]).log_softmax(dim=0)
""",
    # repeat_interleave with tensor repeats: PyTorch's kernel is dispatched on int32/int64
    # first, so another dtype is NotImplementedError (seed 11007523); the size check comes
    # before it, the 1-d check and the sign check after
    "repeat_interleave_repeats_dtype": """
v1 = T.zeros((1, 0), dtype=T.float64)
v4 = v1.repeat_interleave(T.tensor([]), dim=1)
v5 = T.zeros((2, 3), dtype=T.float64)
v6 = v5.repeat_interleave(T.tensor([1, 2, 0], dtype=T.int16), dim=1)
v7 = v5.repeat_interleave(T.tensor(2.0))
v8 = v5.repeat_interleave(T.tensor([1.0, 2.0]), dim=1)
v9 = T.repeat_interleave(T.tensor([[1.0]]))
v10 = T.repeat_interleave(T.tensor(2))
v11 = v5.repeat_interleave(T.tensor([1, 2, 0], dtype=T.int32), dim=1)
""",
    # huber_loss writes into empty_like(input): the input's dtype, float32 for a float64
    # target (seed 11017475: index_put of a float32 value into it then raised in
    # retrograd); its backward refuses mixed dtypes, as PyTorch's kernel; l1/mse broadcast
    # first, so a 0-d float64 target promotes a float32 input
    "loss_mixed_float_dtypes": """
v1 = T.tensor([1.0, -0.0, 1.0], dtype=T.float64)
v4 = T.tensor(0, dtype=T.int64).i0()
v5 = T.nn.functional.huber_loss(v4, v1, reduction='none', delta=1.0)
v8 = v5.index_put((T.tensor(1, dtype=T.int64),), T.tensor(-0.0, dtype=T.float32), accumulate=True)
v9 = T.tensor([0.5, -1.0, 2.5], dtype=T.float32, requires_grad=True)
v10 = T.tensor(0.25, dtype=T.float64, requires_grad=True)
v11 = T.nn.functional.mse_loss(v9, v10, reduction='none')
v12 = T.nn.functional.l1_loss(v10, v9, reduction='sum')
v13 = T.nn.functional.huber_loss(v9, v10, reduction='mean')
loss = v11.sum() + v12
loss.backward()
try:
    v13.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # binary_cross_entropy iterates loss, input and target as the input's dtype (seed
    # 11033338: a float64 input with a float32 target raises in PyTorch)
    "bce_target_dtype": """
v0 = T.tensor(-2, dtype=T.int64)
v7 = T.relu(T.tensor(-0.0, dtype=T.float64))
v8 = T.nn.functional.binary_cross_entropy((v7).sigmoid(), (v0).sigmoid(), reduction='sum')
v1 = T.tensor([0.5], dtype=T.float32)
v2 = T.tensor([2.0], dtype=T.float64)
v9 = T.nn.functional.binary_cross_entropy(v1, T.tensor([1.0], dtype=T.float64))
v10 = T.nn.functional.binary_cross_entropy(v1, T.tensor([1.0]), weight=v2)
""",
    # an advanced index whose result is empty checks no index: PyTorch's kernel checks the
    # bounds as it reads, and reads nothing (seeds 11028356, 11044563); the same for
    # x[index] = v and index_put; an index into a dim of size 0 with a non-empty index
    # shape still raises (IndexError), as index_select of an empty input (RuntimeError)
    "advanced_index_empty_result": """
v0 = T.tensor([[[0]]], dtype=T.int64)
v1 = v0.narrow(2, 0, 0)
v2 = v1[T.tensor([1, 1, 1])]
v3 = T.zeros((1, 0), dtype=T.bool)[T.tensor([2])]
v4 = T.zeros((3, 3), dtype=T.float64, requires_grad=True)
v5 = v4[0:0, T.tensor([5])]
v6 = T.zeros((1, 0), dtype=T.float64, requires_grad=True)
v7 = v6[T.tensor([2])]
v8 = v6 * 2
v8[T.tensor([2])] = 1.0
v9 = T.zeros((1, 0), dtype=T.float64)
v9[T.tensor([2])] = 1.0
v10 = v9.index_put((T.tensor([-3]),), T.tensor(1.0, dtype=T.float64), accumulate=True)
v11 = T.zeros((0, 0), dtype=T.float64)[:, T.tensor([0])]
v12 = T.zeros((2, 0, 3), dtype=T.float64).index_select(0, T.tensor([3]))
v13 = T.zeros((0, 2), dtype=T.float64).index_select(0, T.tensor([0]))
v14 = T.zeros((2, 0), dtype=T.float64)[:, T.tensor([0])]
loss = v5.sum() + v7.sum() + v8.sum()
loss.backward()
""",
    # trapezoid of an empty dim: zeros of y's dtype, bool too, as an array (an in-place op on
    # it raised TypeError: a NumPy scalar; seeds 11047747, 11049051)
    "trapezoid_empty_dim": """
v2 = T.zeros((0,), dtype=T.bool)
v7 = T.trapezoid(v2, dim=0)
v8 = T.trapezoid(T.zeros((2, 0), dtype=T.bool), dx=0.5, dim=-1)
v0 = T.zeros((0,), dtype=T.float64, requires_grad=True)
v4 = T.log10(v0.abs().add(0.5))
v6 = T.trapezoid(v4, dim=-1)
v6.mul_(1.5)
v9 = T.trapezoid(T.zeros((1,), dtype=T.bool), dim=0)
""",
    # lu_solve over an empty batch: the row permutation reshaped with -1, ambiguous for no
    # rows (seeds 11046543, 11055204)
    "lu_solve_empty_batch": """
v2 = T.zeros((0, 1, 1), dtype=T.float64, requires_grad=True)
v5 = T.zeros((0, 3, 1), dtype=T.float64, requires_grad=True)
v6 = T.linalg.lu_solve(*T.linalg.lu_factor(((v2 @ v2.mT) + 4 * T.eye(3, dtype=v2.dtype))), v5)
v7 = T.linalg.lu_solve(*T.linalg.lu_factor(v2 + 2), v5[..., :1, :].mT, left=False)
loss = v6.sum() + v7.sum()
loss.backward()
""",
    # linalg.cross along a dim other than the last is contiguous, as PyTorch's (NumPy's
    # was a transposed view, and .view() of it raised; seed 11029955)
    "cross_result_contiguous": """
v1 = T.tensor([[-0.0], [1.0], [-1.0]], dtype=T.float64, requires_grad=True)
v6 = T.tensor([[-1.0, -2.0], [1.0, 2.0], [0.0, 0.0]], dtype=T.float64)
v7 = T.linalg.cross(v1.trunc(), v6, dim=0)
v8 = v7.view(6)
v9 = T.cross(v6, v6, dim=0).view(-1)
loss = (v8 * v8).sum()
loss.backward()
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzi(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)
