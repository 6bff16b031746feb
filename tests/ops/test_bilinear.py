"""Op tests, bilinear (ops/bilinear.py): the case table (see ``tests/ops/helpers.py``)."""

from __future__ import annotations

import pytest

import retrograd

from .helpers import Case, case_checks, nnf

CASES = [
    Case("bilinear", lambda m, a, b, w: nnf(m).bilinear(a, b, w), ((2, 3), (2, 4), (5, 3, 4))),
    Case("bilinear_bias_batch", lambda m, a, b, w, c: m.bilinear(a, b, w, c),
         ((2, 2, 3), (2, 2, 4), (5, 3, 4), (5,))),
    Case("bilinear_1d", lambda m, a, b, w, c: nnf(m).bilinear(a, b, w, c),
         ((3,), (4,), (2, 3, 4), (2,))),
]

(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)

BAD = [
    lambda m: m.bilinear(m.zeros(2, 3), m.zeros(2, 4), m.zeros(5, 3, 3)),
    lambda m: m.bilinear(m.zeros(2, 3), m.zeros(3, 4), m.zeros(5, 3, 4)),
    lambda m: m.bilinear(m.zeros(2, 3), m.zeros(2, 4), m.zeros(5, 3, 4), m.zeros(4)),
    lambda m: m.bilinear(m.zeros(2, 3), m.zeros(2, 1, 4), m.zeros(5, 3, 4)),
    lambda m: m.bilinear(m.zeros(2, 3), m.zeros(2, 4), m.zeros(5, 3, 4, dtype=m.float64)),
]


@pytest.mark.parametrize("call", BAD)
def test_bilinear_refuses_as_torch(call, torch):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)) as got:
        call(retrograd)
    assert "bilinear" in str(got.value) or "dtype" in str(got.value)
