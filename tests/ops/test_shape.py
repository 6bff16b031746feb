"""Op tests, shape: reshape, views, transpose, expand, cat, stack (ops/shape.py).

One table of cases; ``case_checks`` runs every check on every case (float64 gradcheck and
gradgradcheck, values and gradients against PyTorch in float32 and float64, the grad_fn
name and the whole graph's shape): see ``tests/ops/helpers.py``.
"""

from __future__ import annotations

from .helpers import Case, case_checks

CASES: list[Case] = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


# shape ops
case("reshape", lambda m, a: a.reshape(4, -1), ((2, 3, 2),))
case("reshape_tuple", lambda m, a: m.reshape(a, (3, 4)), ((2, 6),))
case("reshape_noncontig", lambda m, a: a.t().reshape(-1), ((2, 3),))
case("view", lambda m, a: a.view(2, -1), ((2, 3, 2),))
case("view_tuple", lambda m, a: a.view((12,)), ((3, 4),))
case("view_0d", lambda m, a: a.view(1, 1), ((),))
case("flatten", lambda m, a: a.flatten(), ((2, 3, 2),))
case("flatten_range", lambda m, a: m.flatten(a, 1), ((2, 3, 2),))
case("transpose", lambda m, a: a.transpose(0, 2), ((2, 3, 4),))
case("transpose_neg", lambda m, a: m.transpose(a, -1, -2), ((2, 3, 4),))
case("t", lambda m, a: a.t(), ((2, 3),))
case("t_fn_1d", lambda m, a: m.t(a), ((3,),))
case("T", lambda m, a: a.T, ((2, 3),))
case("mT", lambda m, a: a.mT, ((2, 3, 4),))
case("permute", lambda m, a: a.permute(2, 0, 1), ((2, 3, 4),))
case("permute_tuple", lambda m, a: m.permute(a, (1, 0, 2)), ((2, 3, 4),))
case("squeeze_all", lambda m, a: a.squeeze(), ((3, 1, 4, 1),))
case("squeeze_dim", lambda m, a: a.squeeze(1), ((3, 1, 4, 1),))
case("squeeze_dim_noop", lambda m, a: m.squeeze(a, 0), ((3, 1, 4, 1),))
case("squeeze_dims", lambda m, a: a.squeeze((1, 3)), ((3, 1, 4, 1),))
case("unsqueeze0", lambda m, a: a.unsqueeze(0), ((3, 4),))
case("unsqueeze_neg", lambda m, a: m.unsqueeze(a, -1), ((3, 4),))
case("unsqueeze_0d", lambda m, a: a.unsqueeze(0), ((),))
case("expand", lambda m, a: a.expand(2, 3, 4), ((3, 1),))
case("expand_keep", lambda m, a: a.expand(-1, 4), ((3, 1),))
case("expand_as", lambda m, a, b: a.expand_as(b), ((1, 4), (3, 4)))
case("broadcast_to", lambda m, a: m.broadcast_to(a, (2, 3, 4)), ((4,),))
case("clone", lambda m, a: a.clone(), ((2, 3),))
case("clone_fn", lambda m, a: m.clone(a), ((2, 3),))
case("contiguous", lambda m, a: a.t().contiguous(), ((2, 3),))

# joining and selecting
case("cat0", lambda m, a, b: m.cat([a, b]), ((2, 3), (1, 3)))
case("cat1", lambda m, a, b, c: m.cat((a, b, c), dim=1), ((2, 3), (2, 1), (2, 2)))
case("cat_neg", lambda m, a, b: m.cat([a, b], -1), ((2, 3), (2, 2)))
case("stack0", lambda m, a, b: m.stack([a, b]), ((2, 3), (2, 3)))
case("stack_last", lambda m, a, b, c: m.stack([a, b, c], dim=-1), ((2, 3),) * 3)
case("sum_to_size", lambda m, a: a.sum_to_size(3, 1), ((3, 4),))
case("view_as", lambda m, a, b: a.view_as(b), ((3, 4), (4, 3)))
case("reshape_as", lambda m, a, b: a.t().reshape_as(b), ((3, 4), (2, 6)))
case("flatten_0d", lambda m, a: a.flatten(), ((),))
case("concat", lambda m, a, b: m.concat([a, b], 1), ((2, 1), (2, 3)))


(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)
