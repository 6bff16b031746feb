"""Op tests, index: x[i], gather (ops/index.py).

One table of cases; ``case_checks`` runs every check on every case (float64 gradcheck and
gradgradcheck, values and gradients against PyTorch in float32 and float64, the grad_fn
name and the whole graph's shape): see ``tests/ops/helpers.py``.
"""

from __future__ import annotations

from .helpers import Case, case_checks, IDX, IDX2, MASK

CASES: list[Case] = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


# indexing
case("index_int", lambda m, a: a[1], ((3, 4),))
case("index_neg_int", lambda m, a: a[-1], ((3, 4),))
case("index_2int", lambda m, a: a[1, 2], ((3, 4),))
case("index_slice", lambda m, a: a[1:3], ((3, 4),))
case("index_step", lambda m, a: a[::2], ((5, 2),))
case("index_col", lambda m, a: a[:, 1], ((3, 4),))
case("index_int_slice", lambda m, a: a[0, 1:], ((3, 4),))
case("index_slice_int", lambda m, a: a[1:, 2], ((3, 4),))
case("index_none", lambda m, a: a[None], ((3, 4),))
case("index_none_mid", lambda m, a: a[:, None], ((3, 4),))
case("index_ellipsis", lambda m, a: a[..., 1], ((2, 3, 4),))
case("index_ellipsis_only", lambda m, a: a[...], ((3, 4),))
case("index_array", lambda m, a: a[m.tensor(IDX)], ((3, 4),))
case("index_list", lambda m, a: a[[0, 0, 2]], ((3, 4),))
case("index_col_array", lambda m, a: a[:, m.tensor(IDX)], ((3, 4),))
case("index_2arrays", lambda m, a: a[m.tensor(IDX), m.tensor(IDX)], ((3, 4),))
case("index_mask", lambda m, a: a[m.tensor(MASK)], ((3, 4),))
case("index_row_mask", lambda m, a: a[m.tensor(MASK[:, 0])], ((3, 4),))
case("index_int_then_list", lambda m, a: a[0, :, [1, 2]], ((2, 3, 4),))
case("index_int_ellipsis_mask", lambda m, a: a[1, ..., m.tensor(MASK[0])], ((2, 3, 4),))
case("index_bool_scalar", lambda m, a: a[None, True, 1:], ((3, 4),))
case("index_empty_list", lambda m, a: a[:, []], ((3, 4),))
case("gather_dim1", lambda m, a: m.gather(a, 1, m.tensor(IDX2)), ((3, 4),))
case("gather_dim0", lambda m, a: a.gather(0, m.tensor(IDX2.T[:, :3] % 3)), ((3, 4),))
case("gather_0d_index", lambda m, a: a.gather(0, m.tensor(2)), ((4,),))
case("gather_int32", lambda m, a: m.gather(a, 1, m.tensor(IDX2).int()), ((3, 4),))
case("gather_empty_index", lambda m, a: a.gather(1, m.tensor(IDX2)[:, :0]), ((3, 4),))
case("gather_0d_input", lambda m, a: a.gather(0, m.tensor([0, 0])), ((),))
case("index_select_0d_index", lambda m, a: a.index_select(1, m.tensor(2)), ((3, 4),))
case("index_select_0d_input", lambda m, a: a.index_select(0, m.tensor([0])), ((),))
case("index_select_int32", lambda m, a: a.index_select(0, m.tensor(IDX[:3]).int()), ((3, 4),))
case("select_tensor_index", lambda m, a: a.select(1, m.tensor(-1)), ((3, 4),))


(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)
