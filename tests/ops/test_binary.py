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

# issue 6: the two-input ops (tensor and number operands), with broadcasting
case("copysign", lambda m, a, b: m.copysign(a, b), ((3, 4), (4,)), ("nonzero", "nonzero"))
case("copysign_number", lambda m, a: a.copysign(-2.0), ((3, 4),), "nonzero")
case("fmax", lambda m, a, b: m.fmax(a, b), ((3, 4), (3, 4)))
case("fmin_bcast", lambda m, a, b: a.fmin(b), ((3, 1), (4,)), ("spread", "real"))
case("fmod", lambda m, a, b: m.fmod(a, b), ((3, 4), (4,)), ("real", "nonzero"))
case("fmod_number", lambda m, a: a.fmod(-0.7), ((3, 4),))
case("ldexp", lambda m, a, b: m.ldexp(a, b), ((3, 4), (3, 1)))
case("logaddexp2", lambda m, a, b: m.logaddexp2(a, b), ((3, 4), (4,)))
case("nextafter", lambda m, a, b: m.nextafter(a, b), ((3, 4), (3, 4)))
case("float_power", lambda m, a, b: m.float_power(a, b), ((3, 4), (4,)), ("pos", "real"))
case("float_power_number", lambda m, a: a.float_power(2.5), ((3, 4),), "pos")
case("float_power_base", lambda m, b: m.float_power(1.5, b), ((3, 4),))
case("rsub", lambda m, a, b: m.rsub(a, b), ((3, 4), (4,)))
case("rsub_alpha", lambda m, a, b: m.rsub(a, b, alpha=2.5), ((3, 1), (4,)))
case("rsub_number_alpha", lambda m, a: m.rsub(a, 2, alpha=-3), ((3, 4),))
case("rsub_dunder_tensor", lambda m, a, b: a.__rsub__(b), ((3, 4), (4,)))
case("true_divide", lambda m, a, b: m.true_divide(a, b), ((3, 4), (4,)), ("real", "nonzero"))
for _mode in ("trunc", "floor"):
    case(f"div_{_mode}", lambda m, a, b, mode: m.div(a, b, rounding_mode=mode),
         ((3, 4), (4,)), ("real", "nonzero"), params={"mode": _mode})
    case(f"div_{_mode}_number", lambda m, a, mode: a.div(0.3, rounding_mode=mode), ((3, 4),),
         params={"mode": _mode})
# keyword names (PyTorch's) reach the same ops
case("copysign_kw", lambda m, a, b: m.copysign(input=a, other=b), ((3, 4), (3, 4)), "nonzero")
case("mul_kw", lambda m, a, b: m.mul(input=a, other=b), ((3, 4), (4,)))
case("pow_kw", lambda m, a, b: m.pow(input=a, exponent=b), ((3, 4), (4,)), ("pos", "real"))
# the in-place forms, on a non-leaf (a * 1): gradients through the rebased graph
case("copysign_", lambda m, a, b: (a * 1).copysign_(b), ((3, 4), (4,)), "nonzero")
case("fmod_", lambda m, a, b: (a * 1).fmod_(b), ((3, 4), (4,)), ("real", "nonzero"))
case("ldexp_", lambda m, a, b: (a * 1).ldexp_(b), ((3, 4), (4,)))
case("ldexp__fn", lambda m, a, b: m.ldexp_(a * 1, b), ((3, 4), (4,)))
case("nextafter_", lambda m, a, b: (a * 1).nextafter_(b), ((3, 4), (3, 4)))
case("float_power_", lambda m, a, b: (a * 1).double().float_power_(b), ((3, 4), (4,)),
     ("pos", "real"))
case("true_divide_", lambda m, a, b: (a * 1).true_divide_(b), ((3, 4), (4,)), ("real", "nonzero"))
case("div__floor", lambda m, a, b: (a * 1).div_(b, rounding_mode="floor"), ((3, 4), (4,)),
     ("real", "nonzero"))


(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)
