"""Op tests, ``split_copy``, ``split_with_sizes_copy``, ``unbind_copy``
(ops/split_copies.py): values, gradients, grad_fn names (SplitBackward0_copy...), memory
not shared, and the argument errors."""

from __future__ import annotations

import pytest

import retrograd

from .helpers import Case, case_checks

CASES = [
    Case("split_copy", lambda m, x: m.split_copy(x, 2), ((5, 3),)),
    Case("split_copy_dim", lambda m, x: m.split_copy(x, 2, -1), ((2, 3),)),
    Case("split_with_sizes_copy", lambda m, x: m.split_with_sizes_copy(x, [1, 3], 1),
         ((2, 4),)),
    Case("unbind_copy", lambda m, x: m.unbind_copy(x, 1), ((2, 3),)),
]

(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


def test_pieces_do_not_share_memory():
    x = retrograd.zeros(4)
    a, _ = retrograd.split_copy(x, 2)
    x.add_(1.0)
    assert a.tolist() == [0.0, 0.0]


BAD = [
    ("split_size 0", lambda m: m.split_copy(m.zeros(5), 0), "split_size can only be 0"),
    ("sizes sum", lambda m: m.split_with_sizes_copy(m.zeros(5), [1, 2]), "sum exactly"),
    ("unbind dim", lambda m: m.unbind_copy(m.zeros(2, 3), 2), "dimension out of range"),
]


@pytest.mark.parametrize("call,words", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_split_copy_errors_as_torch(call, words, torch):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)) as got:
        call(retrograd)
    assert words in str(got.value).lower(), str(got.value)
