"""Fuzzer findings fixed by fuzzZ (issue 7, a fresh range, seeds 16600000+): each program
must run alike in retrograd and PyTorch, and each call of the check-order table must raise
PyTorch's exception class (or run where PyTorch runs)."""

import warnings

import pytest

torch = pytest.importorskip("torch")

import retrograd  # noqa: E402

from .program import program_from_text  # noqa: E402
from .runner import compare, exc_class, reproducer  # noqa: E402

CASES = {
    # glu of a bool tensor whose halved dimension is odd: PyTorch checks the shape before
    # its kernel's dtype (RuntimeError), retrograd refused the dtype first (seed 16605020)
    "glu_odd_bool": """
v0 = T.tensor([True], dtype=T.bool)
v4 = v0[None]
try:
    v5 = T.nn.functional.glu(v4, dim=-2)
except Exception as e:
    pass
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzz(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)


# A kernel's dtype dispatch comes after the argument and shape checks in PyTorch: an integer
# or bool input with a bad shape or argument raises the shape's error (its class), not the
# kernel's NotImplementedError.  One call per op of the family (F: nn.functional).
CHECK_ORDER = [
    "F.glu(T.tensor([[True]]), dim=-2)",
    "F.glu(T.tensor([[1, 2, 3]]), dim=-1)",
    "F.prelu(T.tensor([[1, 2]]), T.tensor([1, 2, 3]))",
    "F.prelu(T.tensor([[1, 2]]), T.tensor([[1, 2]]))",
    "F.prelu(T.tensor(1), T.tensor([1, 2]))",
    "F.gelu(T.tensor([[True]]), approximate='bad')",
    "F.celu(T.tensor([[1]]), alpha=0.0)",
    "F.rrelu(T.tensor([[1]]), 0.5, 0.1)",
    "F.softmin(T.tensor([[True]]), dim=4)",
    "F.layer_norm(T.tensor([[1, 2]]), (3,))",
    "F.layer_norm(T.tensor([[True, False]]), (3,))",
    "F.layer_norm(T.tensor([[1, 2]]), (2,), weight=T.ones(2))",
    "F.layer_norm(T.tensor([[1, 2]]), (2,), weight=T.ones(3, dtype=T.int64))",
    "F.layer_norm(T.tensor([[1, 2]]), (2,), bias=T.ones(3))",
    "F.rms_norm(T.tensor([[1, 2]]), (3,))",
    "F.rms_norm(T.tensor([[1, 2]]), (2,), weight=T.ones(3))",
    "F.group_norm(T.tensor([[1, 2, 3]]), 2)",
    "F.group_norm(T.tensor([[1.0, 2, 3]]), 2)",
    "F.group_norm(T.tensor([[1.0, 2, 3]]), 0)",
    "F.group_norm(T.ones(2, 0), 0)",
    "F.group_norm(T.tensor([[1.0, 2, 3], [1, 2, 3]]), 4)",
    "F.group_norm(T.tensor([[1, 2, 3], [3, 4, 5]]), 2)",
    "F.group_norm(T.tensor([[1, 2], [3, 4]]), 2, weight=T.ones(3))",
    "F.group_norm(T.tensor([[1, 2], [3, 4]]), 2, weight=T.ones(2))",
    "F.pad(T.tensor([[True]]), (1, 1), mode='reflect')",
    "F.pad(T.tensor([[[True]]]), (1, 1, 1, 1), mode='reflect')",
    "F.pad(T.tensor([[[[True]]]]), (1, 1, 1, 1, 1, 1), mode='reflect')",
    "F.pad(T.tensor([[True, False]]), (1, 1), mode='replicate')",
    "F.pad(T.tensor([[[True]]]), (1, 1, 1, 1), mode='replicate')",
    "F.pad(T.tensor([[True, False]]), (-3, 0), mode='replicate')",
    "F.pad(T.tensor([[True, False]]), (1, 1), mode='circular')",
    "F.max_pool1d(T.tensor([[[1, 2]]]), 3)",
    "F.max_pool1d(T.tensor([[[True, False]]]), 3)",
    "F.max_pool1d(T.tensor([[1, 2]]), 0)",
    "F.max_pool1d(T.tensor([[[1, 2]]]), 2, padding=2)",
    "F.max_pool1d(T.tensor([[1, 2]]), 1, return_indices=True)",
    "F.max_pool1d(T.tensor([[True, False]]), 1, return_indices=True)",
    "F.max_pool2d(T.tensor([[[[True, False]]]]), 3)",
    "F.avg_pool1d(T.tensor([[[True, False]]]), 3)",
    "F.avg_pool1d(T.tensor([[[True, False]]]), 2, padding=2)",
    "F.avg_pool2d(T.tensor([[[[True, False]]]]), 3)",
    "F.avg_pool2d(T.tensor([[[1, 2]]], dtype=T.int32), 1, divisor_override=0)",
    "F.avg_pool2d(T.tensor([[[True, False]]]), 1, divisor_override=0)",
    # elementwise ops: the operands' shapes must broadcast before any dtype is refused
    "T.hypot(T.tensor([1, 2]), T.tensor([[1, 2, 3]]))",
    "T.tensor([True, False]).hypot(T.tensor([[True, False, True]]))",
    "T.logaddexp(T.tensor([True, False]), T.tensor([[True, False, True]]))",
    "T.logaddexp2(T.tensor([1, 0]), T.tensor([[True, False, True]]))",
    "T.nextafter(T.tensor([1, 2]), T.tensor([[1, 2, 3]]))",
    "T.fmod(T.tensor([True, False]), T.tensor([[True, False, True]]))",
    "T.remainder(T.tensor([True, False]), T.tensor([[True, False, True]]))",
    "T.remainder(T.tensor([1, 2]), T.tensor([[0, 2, 3]]))",
    "T.pow(T.tensor([True, False]), T.tensor([[True, False, True]]))",
    "T.ldexp(T.tensor([1.0, 0.0]), T.tensor([[True, False, True]]))",
    "T.lerp(T.tensor([1, 2]), T.tensor([[1, 2, 3]]), 0.5)",
    "T.addcmul(T.tensor([True, False]), T.tensor([[True, False, True]]), T.tensor([True]))",
    "T.igamma(T.tensor([True, False]), T.tensor([[True, False, True]]))",
    # dims, sizes and arguments before the dtype
    "T.logcumsumexp(T.tensor([[True]]), dim=4)",
    "T.logcumsumexp(T.tensor(1), dim=4)",
    "T.median(T.tensor([[True]]), dim=4)",
    "T.nanmedian(T.tensor([[True]]), dim=4)",
    "T.kthvalue(T.tensor([[True]]), 3)",
    "T.kthvalue(T.ones((2, 0), dtype=T.bool), 1)",
    "T.histc(T.tensor([[True]]), bins=0)",
    "T.histc(T.tensor([[1]]), min=2, max=1)",
    "T.renorm(T.tensor([[1, 2]]), 2, 4, 1.0)",
    "T.cumulative_trapezoid(T.tensor([[True]]), dim=4)",
    "T.cumulative_trapezoid(T.tensor(True), T.tensor([1.0]))",
    "T.cumulative_trapezoid(T.tensor([[True]]), T.tensor([1.0]), dim=4)",
    "T.trapezoid(T.tensor([[1.0, 2]]), T.tensor([True, False]))",
    "T.cumulative_trapezoid(T.tensor([[1.0, 2]]), T.tensor([True, False]))",
    # searchsorted's kernel has no bool version (one bool operand is promoted)
    "T.searchsorted(T.tensor([True]), T.tensor([True]))",
    "T.searchsorted(T.tensor([True]), True)",
    "T.searchsorted(T.tensor([[True, False]]), T.tensor([True]))",
    "T.searchsorted(T.tensor([True]), T.tensor([1]))",
    "T.bucketize(T.tensor([[True]]), T.tensor([True]))",
    "T.bucketize(T.tensor([1]), T.tensor([True]))",
    # in place: the output's shape (self must hold the broadcast result) comes first
    "T.tensor([[1, 0, 1]], dtype=T.bool).fmod_(T.tensor([[1], [0]], dtype=T.bool))",
    "T.tensor([[1, 0, 1]], dtype=T.bool).remainder_(T.tensor([[1], [0]], dtype=T.bool))",
    "T.tensor([[1, 0, 1]], dtype=T.bool).pow_(T.tensor([[1], [0]], dtype=T.bool))",
    "T.tensor([[1, 0, 1]]).hypot_(T.tensor([[1], [0]]))",
    "T.tensor([[1, 0, 1]], dtype=T.bool).nextafter_(T.tensor([[1], [0]]))",
    "T.tensor([[1.0, 0, 1]]).ldexp_(T.tensor([[1], [0]], dtype=T.bool))",
    "T.tensor([[1, 0, 1]], dtype=T.bool).hypot_(T.tensor([[1, 1, 0]]))",
    "T.tensor([[1, 0, 1]], dtype=T.bool).nextafter_(T.tensor(1))",
    # ops that take tensors only: a number operand is PyTorch's TypeError
    "T.atan2(T.tensor([1.0, 2]), 2)",
    "T.tensor([1.0, 2]).hypot(1.5)",
    "T.logaddexp(T.tensor([1.0, 2]), True)",
    "T.maximum(T.tensor([1.0, 2]), 2)",
    "T.tensor([1.0, 2]).minimum(2)",
    "T.tensor([1.0, 2]).atan2_(2)",
    "T.tensor([1, 2]).hypot_(2)",
    "T.tensor([True, False]).ldexp_(2)",
    "T.tensor([1, 2]).nextafter_(1.5)",
    "T.clamp_min(2, T.tensor([1.0, 2]))",
    "T.clamp_max(1.5, T.tensor([1.0, 2]))",
    # the scalar clamp kernels have no bool version (an int bound promotes the tensor)
    "T.tensor([True, False]).clamp(min=True)",
    "T.tensor([True, False]).clamp(False, True)",
    "T.tensor([True, False]).clamp(False, 1)",
    "T.tensor([True, False]).clamp(min=T.tensor(True))",
    "T.tensor([True, False]).clamp_min(True)",
    "T.clamp_max(T.tensor([True, False]), False)",
    "T.tensor([True, False]).clamp_max_(True)",
    "T.tensor([True, False]).clamp_(min=True)",
    # index_add's index out of range: IndexError, but RuntimeError (index_put_'s) with alpha
    # 1 along the first or last dim of a tensor of 2 or more dims
    "T.zeros(2).index_add(0, T.tensor([5]), T.ones(1))",
    "T.zeros(2, dtype=T.bool).index_add_(0, T.tensor([-3]), T.ones(1, dtype=T.bool))",
    "T.zeros(2, 3).index_add(0, T.tensor([5]), T.ones(1, 3))",
    "T.zeros(2, 3).index_add(0, T.tensor([5]), T.ones(1, 3), alpha=2)",
    "T.zeros(2, 3, 2).index_add(1, T.tensor([5]), T.ones(2, 1, 2))",
    "T.zeros(2, 3, 2, dtype=T.int64).index_add(-1, T.tensor([5]), T.ones(2, 3, 1, dtype=T.int64))",
    # cross's kernel has no bool version (NumPy's TypeError leaked)
    "T.linalg.cross(T.ones(2, 3, dtype=T.bool), T.ones(2, 3, dtype=T.bool))",
    "T.linalg.cross(T.ones(2, 3, dtype=T.bool), T.ones(2, 3, dtype=T.int64))",
    "T.linalg.cross(T.ones(2, 3, dtype=T.bool), T.ones(3, 3, dtype=T.bool))",
    "T.cross(T.tensor([True, False, True]), T.tensor([True, False, True]), dim=0)",
    # F.hardtanh refuses min_val > max_val (ValueError) before anything else; hardtanh_ not
    "F.hardtanh(T.tensor([1.0]), 1.0, -1.0)",
    "F.hardtanh(T.tensor([True]), 1.0, -1.0)",
    "F.hardtanh(T.tensor([1.0]), 1.0, -1.0, inplace=True)",
    "F.hardtanh_(T.tensor([1.0]), 1.0, -1.0)",
    "F.hardtanh(T.tensor([1.0]), 1.0, 1.0)",
]


def _outcome(lib, src):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            eval(src, {"T": lib, "F": lib.nn.functional})  # noqa: S307 - the table above
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            return exc_class(e)
    return None


@pytest.mark.parametrize("src", CHECK_ORDER)
def test_check_order_like_pytorch(src):
    assert _outcome(retrograd, src) == _outcome(torch, src), src
