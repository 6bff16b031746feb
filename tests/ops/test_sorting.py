"""Op tests, sorting: sort, topk, kthvalue (ops/sorting.py).

One table of cases; ``case_checks`` runs every check on every case (float64 gradcheck and
gradgradcheck, values and gradients against PyTorch in float32 and float64, the grad_fn
name and the whole graph's shape): see ``tests/ops/helpers.py``.
"""

from __future__ import annotations

from .helpers import Case, case_checks

CASES: list[Case] = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


# sorting and selecting by value ("spread": no ties, so the order is unambiguous)
case("sort", lambda m, a: a.sort(), ((3, 4),), "spread")
case("sort_desc_dim0", lambda m, a: m.sort(a, 0, descending=True), ((3, 4),), "spread")
case("sort_values", lambda m, a: a.sort(dim=1).values * 2, ((2, 3),), "spread")
case("topk", lambda m, a: a.topk(2), ((3, 4),), "spread")
case("topk_smallest", lambda m, a: m.topk(a, 2, dim=0, largest=False), ((3, 4),), "spread")
case("kthvalue", lambda m, a: a.kthvalue(2, 1), ((3, 4),), "spread")
case("kthvalue_keep", lambda m, a: m.kthvalue(a, 3, 0, keepdim=True), ((3, 4),), "spread")


(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


def test_return_types_are_named_as_torch(torch):
    # torch.return_types.<op>: the tuple's type is named after the op, fields values/indices
    import numpy as np

    import retrograd

    a = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    calls = [lambda m, x: x.sort(), lambda m, x: x.topk(2), lambda m, x: x.kthvalue(1),
             lambda m, x: x.max(1), lambda m, x: m.min(x, 0), lambda m, x: x.median(1),
             lambda m, x: x.nanmedian(1), lambda m, x: x.mode(1), lambda m, x: x.cummax(1),
             lambda m, x: x.cummin(0), lambda m, x: x.aminmax()]
    for call in calls:
        r, t = (call(m, m.tensor(a)) for m in (retrograd, torch))
        assert type(r).__name__ == type(t).__name__
        # (torch's are structseqs: fields by attribute, in order)
        assert len(r) == len(t) == t.n_fields
        for i, field in enumerate(r._fields):
            assert getattr(t, field) is t[i]
