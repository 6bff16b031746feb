"""Fuzzer findings fixed by fuzzM (issue 7, stop 19's run: the losses' exceptions): each
program must run alike in retrograd and PyTorch (values, dtypes, shapes, grad_fn names,
gradients, exceptions).  tests/ops/test_loss_raises.py is the table behind them."""

import pytest

pytest.importorskip("torch")

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # smooth_l1_loss is a structured kernel: an integer input with a floating target runs in
    # the promoted dtype (seeds 12546956, 12593136, 12636610, 12663795)
    "smooth_l1_integer_input": """
v0 = T.tensor(4, dtype=T.int64)
v1 = T.tensor(1.0, dtype=T.float64)
v2 = T.nn.functional.smooth_l1_loss(v0, v1, beta=0.5)
v3 = T.tensor(1.0, dtype=T.float64).count_nonzero(dim=-1)
v4 = T.nn.functional.smooth_l1_loss(v3, v1, reduction='none', beta=1.0)
v5 = T.tensor([3], dtype=T.int64).topk(0, dim=0)[1]
v6 = T.nn.functional.smooth_l1_loss(v5, v1, reduction='sum', beta=1.0)
try:
    v7 = T.nn.functional.smooth_l1_loss(v0, v0, beta=0.5)
except Exception as e:
    pass
""",
    # huber_loss writes into empty_like(input): a bool or integer input with a floating
    # target fails the cast (RuntimeError) before the dtype dispatch (seed 12628074)
    "huber_bool_input": """
v0 = T.tensor(0.0, dtype=T.float64)
v4 = (v0) > (v0)
v5 = T.tensor(-1.0, dtype=T.float64)
try:
    v6 = T.nn.functional.huber_loss(v4, v5, reduction='none', delta=2.0)
except Exception as e:
    pass
try:
    v7 = T.nn.functional.huber_loss(v5.long(), v4, delta=2.0)
except Exception as e:
    pass
""",
    # soft_margin_loss's kernel multiplies the target into a tensor of the input's shape:
    # a larger target is PyTorch's RuntimeError (seed 12554155)
    "soft_margin_target_larger": """
v1 = T.tensor([-0.0], dtype=T.float64)
v3 = T.tensor([1.0, -1.0, 0.0, -1.0], dtype=T.float64)
try:
    v4 = T.nn.functional.soft_margin_loss(v1, (v3).sign(), reduction='none')
except Exception as e:
    pass
v5 = T.nn.functional.soft_margin_loss(v3, v1.sign(), reduction='none')
""",
    # nll_loss refuses an integer input at its kernel, after the shape checks, even for a
    # one-element target of a 1-d input (seed 12530685)
    "nll_loss_integer_input": """
v3 = T.tensor([4], dtype=T.int64)
v7 = T.tensor([0], dtype=T.int64)
v8 = T.tensor([3], dtype=T.int64)
try:
    v9 = T.nn.functional.nll_loss(v3, v7, weight=v8.abs())
except Exception as e:
    pass
try:
    v10 = T.nn.functional.nll_loss(T.tensor([[4, 1]], dtype=T.int64), v7)
except Exception as e:
    pass
""",
    # a 1-d input (one sample) with a one-element target: PyTorch's forward takes it (the
    # target as 0-d), its backward raises, and cross_entropy's label smoothing raises in
    # the forward (seeds 12561272, 12634718...; were accepted differences)
    "nll_one_sample_one_element_target": """
v1 = T.tensor([0.5, -1.0, 2.0], dtype=T.float64, requires_grad=True)
v2 = T.nn.functional.nll_loss(v1, T.tensor([1], dtype=T.int64), reduction='none')
v3 = T.nn.functional.cross_entropy(v1, T.tensor([2], dtype=T.int64))
try:
    v4 = T.nn.functional.cross_entropy(v1, T.tensor([2], dtype=T.int64), label_smoothing=0.1)
except Exception as e:
    pass
try:
    v3.backward()
except Exception as e:
    pass
""",
    # multilabel_soft_margin_loss's logsigmoid refuses a bool input (seed 12658616)
    "multilabel_soft_margin_bool_input": """
v0 = T.tensor(1.0, dtype=T.float64)
v2 = (v0) < (v0)
try:
    v3 = T.nn.functional.multilabel_soft_margin_loss(v2, (v0 > 0).to(v2.dtype), reduction='none')
except Exception as e:
    pass
""",
    # conv_transpose1d with an empty weight: PyTorch's check of weight.shape[0] >= groups
    # (seeds 12520038, 12604229, 12626152)
    "conv_transpose_empty_weight": """
v1 = T.zeros((0, 1), dtype=T.float64)
v2 = T.zeros((0, 1, 3), dtype=T.float64)
v4 = T.tensor([-0.0], dtype=T.float64)
try:
    v3 = T.nn.functional.conv_transpose1d(v1, v2, v4, stride=2, padding=1)
except Exception as e:
    pass
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzm(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)
