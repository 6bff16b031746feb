"""Op tests, ``slice_inverse`` (ops/slice_inverse.py): values, gradients (to ``input`` the
slice, to ``src`` the rest, as PyTorch's SliceInverseBackward0) and the errors."""

from __future__ import annotations

import pytest

import retrograd

from .helpers import Case, case_checks

SPLIT = {"gradcheck": "PyTorch's derivative sends the slice to input and the rest to src, "
                      "though the values read all of input's storage (a functionalization "
                      "helper, not a function of its inputs)"}

CASES = [
    # input a slice of src itself: the derivative is then the true one (the identity)
    Case("slice_inverse_of_own_slice", lambda m, b: m.slice_inverse(b[1:5:2], b, 0, 1, 5, 2),
         ((6, 4),)),
    Case("slice_inverse_dim1_negative", lambda m, b: m.slice_inverse(b[:, 1:], b, -1, 1),
         ((3, 4),)),
    Case("slice_inverse_split_gradient", lambda m, b, s: m.slice_inverse(
        (b * 1)[1:5:2], s, 0, 1, 5, 2), ((6, 4), (6, 4)), xfail=SPLIT),
]

(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


BAD = [
    ("dim, at backward", lambda m: m.slice_inverse(
        m.zeros(2, 4, requires_grad=True)[:1], m.zeros(2, 4), 2).sum().backward(),
     "dimension out of range"),
    ("storage too small", lambda m: m.slice_inverse(m.zeros(2, 4), m.zeros(6, 4), 0, 1, 5, 2),
     "out of bounds"),
]


@pytest.mark.parametrize("call,words", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_slice_inverse_errors_as_torch(call, words, torch):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)) as got:
        call(retrograd)
    assert words in str(got.value).lower(), str(got.value)
