"""Op tests, binary: two- and three-input elementwise ops (ops/binary.py).

One table of cases; ``case_checks`` runs every check on every case (float64 gradcheck and
gradgradcheck, values and gradients against PyTorch in float32 and float64, the grad_fn
name and the whole graph's shape): see ``tests/ops/helpers.py``.
"""

from __future__ import annotations

from .helpers import Case, case_checks

CASES: list[Case] = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


# what optimizers use, and other two- and three-input elementwise ops
case("addcmul", lambda m, a, b, c: m.addcmul(a, b, c, value=0.5), ((3, 4), (4,), (3, 1)))
case("addcdiv", lambda m, a, b, c: a.addcdiv(b, c, value=-2), ((3, 4), (3, 4), (4,)),
     ("real", "real", "nonzero"))
case("lerp_number", lambda m, a, b: m.lerp(a, b, 0.3), ((3, 4), (4,)))
case("lerp_tensor", lambda m, a, b, w: a.lerp(b, w), ((3, 4), (3, 4), (4,)))
case("atan2", lambda m, a, b: m.atan2(a, b), ((3, 4), (3, 4)), ("nonzero", "nonzero"))
case("hypot", lambda m, a, b: a.hypot(b), ((3, 4), (4,)), ("nonzero", "nonzero"))
case("logaddexp", lambda m, a, b: m.logaddexp(a, b), ((3, 4), (3, 1)))
case("xlogy", lambda m, a, b: m.xlogy(a, b), ((3, 4), (3, 4)), ("real", "pos"))
case("clamp_min", lambda m, a: a.clamp_min(0.1), ((3, 4),))
case("clamp_max_fn", lambda m, a: m.clamp_max(a, -0.2), ((3, 4),))


(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)
