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
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzq(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)
