"""Op tests, layout: split, flip, roll, tril, diagonal... (ops/layout.py).

One table of cases; ``case_checks`` runs every check on every case (float64 gradcheck and
gradgradcheck, values and gradients against PyTorch in float32 and float64, the grad_fn
name and the whole graph's shape): see ``tests/ops/helpers.py``.
"""

from __future__ import annotations

from .helpers import Case, case_checks, MASK

CASES: list[Case] = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


# more layout ops
case("split", lambda m, a: a.split(2, 1), ((3, 5),))
case("split_sizes", lambda m, a: m.split(a, [1, 3, 1], dim=1), ((3, 5),))
case("split_one_used", lambda m, a: a.split(2)[1] * 2, ((5, 2),))
case("chunk", lambda m, a: a.chunk(3, -1), ((2, 7),))
case("unbind", lambda m, a: a.unbind(1), ((2, 3),))
case("unbind_fn", lambda m, a: m.unbind(a)[1].exp(), ((3, 2),))
case("flip", lambda m, a: a.flip(0), ((3, 4),))
case("flip_dims", lambda m, a: m.flip(a, dims=(0, 2)), ((2, 3, 2),))
case("roll", lambda m, a: a.roll(1, 0), ((3, 4),))
case("roll_multi", lambda m, a: m.roll(a, (1, -2), (1, 0)), ((3, 4),))
case("roll_flat", lambda m, a: a.roll(5), ((3, 4),))
case("repeat", lambda m, a: a.repeat(2, 3), ((2, 3),))
case("repeat_lead", lambda m, a: a.repeat(2, 1, 2), ((2, 3),))
case("tile", lambda m, a: a.tile((2,)), ((2, 3),))
case("tril", lambda m, a: a.tril(), ((3, 4),))
case("triu_diag", lambda m, a: m.triu(a, 1), ((2, 3, 3),))
case("tril_neg", lambda m, a: a.tril(-1), ((4, 3),))
case("index_select", lambda m, a: a.index_select(1, m.tensor([0, 3, 3])), ((3, 4),))
case("index_select_fn", lambda m, a: m.index_select(a, 0, m.tensor([2, 2])), ((3, 4),))
case("masked_select", lambda m, a: a.masked_select(m.tensor(MASK)), ((3, 4),))
case("masked_select_bcast", lambda m, a: m.masked_select(a, m.tensor(MASK[0])), ((3, 4),))
case("movedim", lambda m, a: a.movedim(0, 2), ((2, 3, 4),))
case("movedim_multi", lambda m, a: m.movedim(a, (0, 1), (2, 0)), ((2, 3, 4),))
case("swapaxes", lambda m, a: a.swapaxes(0, 2), ((2, 3, 4),))
case("narrow", lambda m, a: a.narrow(1, 1, 2), ((3, 4),))
case("narrow_whole", lambda m, a: a.narrow(1, 0, 4), ((3, 4),))  # SliceBackward0, not Alias
case("select", lambda m, a: a.select(1, -2), ((3, 4),))
case("select 0-d result", lambda m, a: a.select(0, 1), ((3,),))
case("T.select", lambda m, a: m.select(a, 0, 2), ((3, 4),))
case("unflatten", lambda m, a: a.unflatten(1, (2, 2)), ((3, 4),))
case("diagonal", lambda m, a: a.diagonal(), ((3, 4),))
case("diagonal_offset", lambda m, a: m.diagonal(a, 1), ((3, 4),))
case("diagonal_neg_offset", lambda m, a: a.diagonal(-1), ((3, 4),))
case("diagonal_3d", lambda m, a: a.diagonal(0, 1, 2), ((2, 3, 4),))
case("diagonal_3d_dims", lambda m, a: m.diagonal(a, 1, -1, 0), ((3, 2, 4),))
case("diag_embed", lambda m, a: m.diag_embed(a), ((2, 3),))
case("diag_embed_offset", lambda m, a: m.diag_embed(a, -1), ((3,),))
case("diag_vector", lambda m, a: m.diag(a), ((3,),))
case("diag_vector_k", lambda m, a: m.diag(a, 1), ((3,),))
case("diag_matrix", lambda m, a: a.diag(), ((3, 4),))
case("diag_matrix_k", lambda m, a: m.diag(a, -1), ((3, 4),))
case("trace", lambda m, a: a.trace(), ((3, 4),))


(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)
