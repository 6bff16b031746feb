"""Fuzzer findings fixed by fuzzQ (issue 7, stop 19's run: in-place ops on odd dtypes,
argument raises, layout grad_fn names, rounding values): each program must run alike in
retrograd and PyTorch (values, dtypes, shapes, grad_fn names, gradients, exceptions)."""

import pytest

pytest.importorskip("torch")

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # an in-place two-input op whose kernel refuses the dtype: PyTorch checks first that the
    # promoted type can be written into self (RuntimeError), then the kernel
    # (NotImplementedError) (seeds 12520467, 12525213)
    "inplace_cast_before_kernel": """
v1 = T.tensor([2, 0], dtype=T.int64)
v3 = (v1).ge(1.5)
try:
    v3.hypot_(v1)
except Exception as e:
    pass
try:
    v1.hypot_(v1)
except Exception as e:
    pass
try:
    v1.hypot_(T.tensor([1.0, 2.0], dtype=T.float64))
except Exception as e:
    pass
try:
    v3.gcd_(v1)
except Exception as e:
    pass
try:
    v1.bitwise_and_(T.tensor([1.0, 2.0], dtype=T.float64))
except Exception as e:
    pass
try:
    v3.nextafter_(v1)
except Exception as e:
    pass
""",
    # the in-place view ops check the leaf before their dims (seeds 12522982, 12676348)
    "inplace_view_leaf_before_dim": """
v0 = T.tensor(1.0, dtype=T.float64, requires_grad=True)
try:
    v0.squeeze_(2)
except Exception as e:
    pass
v1 = T.zeros((0,), dtype=T.float64, requires_grad=True)
try:
    v1.unsqueeze_(3)
except Exception as e:
    pass
try:
    v1.transpose_(0, 4)
except Exception as e:
    pass
""",
    # a convolution over 0 input channels keeps 0 output channels, as PyTorch's empty-weight
    # path (seeds 12564073, 12657216, 12649893)
    "conv_zero_in_channels": """
v0 = T.zeros((0, 1), dtype=T.float64)
v4 = T.zeros((1, 0, 1), dtype=T.float64)
v5 = T.nn.functional.conv1d(v0, v4, None, stride=1, padding=0)
v5.div_(T.zeros((0, 1), dtype=T.float64).add(0.5))
v6 = T.zeros((2, 0, 3), dtype=T.float64, requires_grad=True)
v7 = T.zeros((4, 0, 2), dtype=T.float64, requires_grad=True)
v8 = T.tensor([1.0, 2.0, 3.0, 4.0], dtype=T.float64, requires_grad=True)
v9 = T.nn.functional.conv1d(v6, v7, v8, stride=2, dilation=1)
v10 = T.nn.functional.conv2d(T.zeros((1, 0, 2, 2), dtype=T.float64), v7[..., None], v8)
loss = v9.sum() + v10.sum()
loss.backward()
""",
    # cummax/cummin take any dim of an empty tensor: PyTorch wraps it only for a non-empty
    # one (seeds 12523336, 12527010, 12545262, 12554892, 12561716, 12662772)
    "cummax_empty_any_dim": """
v0 = T.zeros((0,), dtype=T.float64, requires_grad=True)
v1 = v0.cummax(3)
v2 = v0.cummin(-4)[0]
v3 = T.zeros((0, 1), dtype=T.float64).permute(1, 0).cummax(2)[1]
loss = v1.values.sum() + v2.sum()
loss.backward()
""",
    # an integer or bool tensor that requires grad (a write of one that does): PyTorch's
    # hardtanh_/threshold_/hypot_ and multi-output views refuse it (seeds 12554342, 12652648)
    "integer_requires_grad_refusals": """
v1 = T.tensor(1.0, dtype=T.float64, requires_grad=True)
v0 = T.tensor([-1, 2], dtype=T.int64)
v0[0:1] = v1.sum()
try:
    T.nn.functional.hardtanh_(v0)
except Exception as e:
    pass
try:
    T.nn.functional.threshold_(v0, 0.5, 0.0)
except Exception as e:
    pass
try:
    v0.hypot_(v0.detach())
except Exception as e:
    pass
v2 = (T.tensor([[[-1.0]]], dtype=T.float64)).eq(1.5).diagonal(1, 0, 1)
v2[0:1] = v1.sum()
try:
    v3 = v2.chunk(3, dim=-2)[0]
except Exception as e:
    pass
try:
    v4 = v0.unbind()[0]
except Exception as e:
    pass
try:
    v5 = v0.split(1)[1]
except Exception as e:
    pass
""",
    # activations' dtype refusals: logsigmoid has no integer kernel, threshold's bool refusal
    # is a NotImplementedError, prelu checks the weight's dtype first (12614665, 12675702)
    "activation_dtype_refusals": """
v0 = T.tensor([-2.0, 1.0], dtype=T.float64)
v1 = v0.topk(1, dim=0)[1]
try:
    v2 = T.nn.functional.logsigmoid(v1)
except Exception as e:
    pass
try:
    v3 = T.nn.functional.threshold(v1 > 0, -0.5, 0.0)
except Exception as e:
    pass
try:
    v4 = T.nn.functional.prelu(v1, T.tensor([0.25], dtype=T.float64))
except Exception as e:
    pass
""",
    # linalg on NaN: svd's non-convergence is PyTorch's LinAlgError (a RuntimeError), a NaN
    # Cholesky pivot fails as LAPACK's; vecdot takes floating tensors only
    # (seeds 12660401, 12678710, 12517484)
    "linalg_nan_and_dtype": """
v0 = T.tensor([[-0.0], [-3.0]], dtype=T.float64)
v1 = (v0.asin().tanh().mul(0.9)).acos()
try:
    v2 = T.linalg.svdvals(v1)
except Exception as e:
    pass
try:
    v3 = T.linalg.matrix_norm(v1, 2)
except Exception as e:
    pass
v4 = T.tensor([[float("nan"), 0.0], [0.0, 1.0]], dtype=T.float64)
try:
    v5 = T.linalg.cholesky(v4, upper=True)
except Exception as e:
    pass
v6 = T.linalg.cholesky_ex(T.tensor([[1.0, 0.0], [0.0, float("nan")]], dtype=T.float64))
v7 = v6.info
try:
    v8 = T.linalg.vecdot(T.tensor([True]), T.tensor([False]))
except Exception as e:
    pass
""",
    # tril_/triu_ of at most 3 dims write through an expanded tensor (every alias of a
    # zeroed element becomes 0), as nan_to_num_ of an integer one (nothing to replace)
    # (seeds 12598053, 12609766)
    "tril_nan_to_num_expanded": """
v2 = T.tensor(True, dtype=T.bool)
v3 = v2.expand(2, 3)
v3.tril_(0)
v4 = T.tensor([1.0, 2.0], dtype=T.float64)
v5 = v4.expand(3, 2)
v5.triu_()
v6 = T.tensor([False, True], dtype=T.bool)
v7 = T.sign(v6).view(1, 2).broadcast_to((1, 2, 2))
v7.nan_to_num_()
v8 = T.zeros((2,), dtype=T.float64).expand(1, 1, 2, 2)
try:
    v8.tril_()
except Exception as e:
    pass
""",
    # layouts: rms_norm of a transposed input is cloned whatever the weight's layout, and
    # matmul's folded 2-d by batched product with no element is not (seeds 12506039,
    # 12534526, 12544820, 12663285)
    "layout_grad_fn_names": """
v0 = T.tensor([[True, True, True, False], [False, False, False, False]], dtype=T.bool)
v6 = v0.t().double()
v7 = T.tensor([[3.0, 2.0], [1.0, -0.0], [1.0, 1.0], [1.0, 1.0]], dtype=T.float64,
             requires_grad=True)
v8 = T.nn.functional.rms_norm(v6, (4, 2), weight=v7)
v9 = T.zeros((0, 4), dtype=T.float64, requires_grad=True)
v10 = T.matmul(v9, T.zeros((1, 4, 3), dtype=T.float64))
v11 = T.conj_physical(v10)
loss = v8.sum() + v11.sum()
loss.backward()
""",
    # result layouts: cdist's is contiguous (contiguous() is itself); the LAPACK solutions are
    # column-major, so flatten() copies as PyTorch's (seeds 12612771, 12617295, 12670162)
    "solution_layouts": """
v0 = T.tensor([[-1.0, -1.0], [-0.0, 0.0]], dtype=T.float64).permute(1, 0)
v2 = T.tensor([[0.0, 0.0], [0.0, -1.0]], dtype=T.float64, requires_grad=True)
v3 = T.cdist(v0, v2, p=1.0)
v4 = v3.contiguous()
v5 = T.tensor([[1.0, 2.0], [1.0, -2.0], [-1.0, -1.0]], dtype=T.float64, requires_grad=True)
v6 = T.linalg.lu_solve(*T.linalg.lu_factor(5 * T.eye(3, dtype=T.float64)), v5)
v7 = v6.flatten()
v8 = T.linalg.solve_triangular((4 * T.eye(3, dtype=T.float64)).triu(), v5, upper=True)
v9 = v8.flatten()
v10 = T.linalg.solve_triangular(4 * T.eye(2, dtype=T.float64), v5, upper=False, left=False)
v11 = v10.reshape(-1)
v12 = T.cholesky_solve(v5, 2 * T.eye(3, dtype=T.float64))
v13 = v12.view(-1) if v12.is_contiguous() else v12.reshape(-1)
loss = v4.sum() + v7.sum() + v9.sum() + v11.sum() + v13.sum()
loss.backward()
""",
    # the norm of one element is its magnitude, as PyTorch's kernel, where x ** p overflows
    # (seed 12533611)
    "norm_of_one_element": """
v0 = T.tensor(0.0, dtype=T.float64)
v2 = v0.log().nan_to_num()
v3 = v2.norm()
v4 = T.tensor([[1e200], [3e300]], dtype=T.float64, requires_grad=True)
v5 = v4.norm(dim=1)
v6 = T.linalg.vector_norm(v4[:1], 3)
loss = v5.sum() * 0 + v6
loss.backward()
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzq(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)
