"""Op tests, stats: prod, var, std, norm, logsumexp, cumsum, amax (ops/stats.py).

One table of cases; ``case_checks`` runs every check on every case (float64 gradcheck and
gradgradcheck, values and gradients against PyTorch in float32 and float64, the grad_fn
name and the whole graph's shape): see ``tests/ops/helpers.py``.
"""

from __future__ import annotations

from .helpers import Case, case_checks

CASES: list[Case] = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


for _kw in [{}, {"dim": 1}, {"dim": 0, "keepdim": True}]:
    _tag = "".join(f"_{k}{v}" for k, v in _kw.items())
    case(f"prod{_tag}", lambda m, a, **kw: a.prod(**kw), ((3, 4),), params=_kw)
    case(f"amax{_tag}", lambda m, a, **kw: a.amax(**kw), ((3, 4),), "spread", params=_kw)
    case(f"amin{_tag}", lambda m, a, **kw: m.amin(a, **kw), ((3, 4),), "spread", params=_kw)
for _kw in [{}, {"dim": 1}, {"dim": (0, 1), "keepdim": True}, {"dim": 0, "correction": 0}]:
    _tag = "".join(f"_{k}{v}" for k, v in _kw.items())
    case(f"var{_tag}", lambda m, a, **kw: a.var(**kw), ((3, 4),), params=_kw)
    case(f"std{_tag}", lambda m, a, **kw: m.std(a, **kw), ((3, 4),), params=_kw)
for _kw in [{}, {"dim": 1}, {"p": 1, "dim": 0}, {"p": 3, "dim": 1, "keepdim": True}]:
    _tag = "".join(f"_{k}{v}" for k, v in _kw.items())
    case(f"norm{_tag}", lambda m, a, **kw: a.norm(**kw), ((3, 4),), "nonzero", params=_kw)
case("norm_inf", lambda m, a: a.norm(float("inf"), dim=1), ((3, 4),), "spread")
case("norm_neg_inf", lambda m, a: m.norm(a, -float("inf")), ((3, 4),), "spread")
case("norm_0", lambda m, a: a.norm(0, dim=0), ((3, 4),))
case("norm_neg1", lambda m, a: a.norm(-1, dim=1), ((3, 4),), "nonzero")
case("norm_neg2_all", lambda m, a: m.norm(a, -2.5), ((3, 4),), "nonzero")
case("norm_p05", lambda m, a: a.norm(0.5, dim=0, keepdim=True), ((3, 4),), "nonzero")
case("norm_p15", lambda m, a: a.norm(1.5), ((3, 4),), "nonzero")
case("norm_fro_dims", lambda m, a: a.norm("fro", dim=(0, 2)), ((2, 3, 2),))
case("norm_nuc", lambda m, a: a.norm("nuc"), ((3, 4),))
case("norm_nuc_dims", lambda m, a: m.norm(a, "nuc", dim=(0, 2)), ((3, 2, 4),))
case("logsumexp", lambda m, a: a.logsumexp(1), ((3, 4),))
case("logsumexp_tuple_keep", lambda m, a: m.logsumexp(a * 30, (0, 1), keepdim=True), ((3, 4),))
case("cumsum", lambda m, a: a.cumsum(1), ((3, 4),))
case("cumsum_neg", lambda m, a: m.cumsum(a, dim=-2), ((3, 4),))
case("prod_3d", lambda m, a: m.prod(a, 1), ((2, 3, 2),))


(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)
