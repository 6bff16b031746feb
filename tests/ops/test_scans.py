"""Op tests, scans: cumprod, cummax, cummin, logcumsumexp, cumsum_ / cumprod_, diff,
trapezoid, trapz, cumulative_trapezoid (ops/scans.py).

The case table runs every check of ``tests/ops/helpers.py`` (float64 gradcheck and
gradgradcheck, values, dtypes, gradients, grad_fn names and the graph's shape vs PyTorch);
the tests below it cover boundaries (zeros, ties, nan, 0-d, empty), dtypes and errors.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

from .differential import check_both, same
from .helpers import Case, case_checks

CASES: list[Case] = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


def _zeros_at(a, where):
    """``a`` with zeros at the positions ``where`` (a constant mask): cumprod's zero paths."""
    return a * retrograd.tensor(where) if isinstance(a, retrograd.Tensor) else a * \
        __import__("torch").tensor(where)


Z1 = np.array([[1.0, 0.0, 1.0, 1.0], [1.0, 1.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]])

case("cumprod", lambda m, a: a.cumprod(1), ((3, 4),), "nonzero")
case("cumprod_dim0", lambda m, a: m.cumprod(a, dim=-2), ((3, 4),), "nonzero")
case("cumprod_0d", lambda m, a: a.cumprod(0), ((),))
case("cumprod_zeros", lambda m, a: (a * m.tensor(Z1, dtype=a.dtype)).cumprod(1), ((3, 4),))
case("cumprod_", lambda m, a: (a * 1).cumprod_(0), ((3, 4),), "nonzero")
case("cumsum_", lambda m, a: (a * 1).cumsum_(1), ((3, 4),))
case("cumsum_0d", lambda m, a: m.cumsum(a, 0), ((),))
for _op in ("cummax", "cummin"):
    case(_op, lambda m, a, op=_op: getattr(a, op)(1), ((3, 4),), "spread")
    case(f"{_op}_fn_dim0", lambda m, a, op=_op: getattr(m, op)(a, dim=0), ((3, 4),), "spread")
    case(f"{_op}_0d", lambda m, a, op=_op: getattr(a, op)(0), ((),))
    case(f"{_op}_ties", lambda m, a, op=_op: getattr(m, op)(a.round(), -1), ((3, 5),))
case("logcumsumexp", lambda m, a: a.logcumsumexp(1), ((3, 4),))
case("logcumsumexp_big", lambda m, a: m.logcumsumexp(a * 300, 0), ((3, 4),))
case("logcumsumexp_0d", lambda m, a: a.logcumsumexp(0), ((),))
case("diff", lambda m, a: a.diff(), ((3, 4),))
case("diff_n2_dim0", lambda m, a: m.diff(a, 2, 0), ((4, 3),))
case("diff_prepend_append", lambda m, a, b, c: m.diff(a, dim=1, prepend=b, append=c),
     ((3, 4), (3, 1), (3, 2)))
case("trapezoid", lambda m, a: m.trapezoid(a), ((3, 4),))
case("trapezoid_dx", lambda m, a: m.trapezoid(a, dx=0.5, dim=0), ((3, 4),))
case("trapezoid_x", lambda m, a, x: m.trapezoid(a, x), ((3, 4), (4,)))
case("trapezoid_x_nd", lambda m, a, x: m.trapezoid(a, x, dim=0), ((3, 4), (3, 4)))
case("trapz", lambda m, a: m.trapz(a, dim=0), ((3, 4),))
case("cumulative_trapezoid", lambda m, a: m.cumulative_trapezoid(a), ((3, 4),))
case("cumulative_trapezoid_x", lambda m, a, x: m.cumulative_trapezoid(a, x, dim=-1),
     ((3, 4), (4,)))
case("cumulative_trapezoid_dx", lambda m, a: m.cumulative_trapezoid(a, dx=2.0, dim=0),
     ((3, 4),))

(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


_same = same


BOUNDARY = {
    "cumprod_zeros_grad": (lambda m, x: x.cumprod(1), [[1.0, 0.0, 2.0, 0.0], [0.0, 2, 3, 4]]),
    "cumprod_0d": (lambda m, x: x.cumprod(-1), 2.5),
    "cumprod_empty": (lambda m, x: x.cumprod(0), np.zeros((0, 3))),
    "cummax_ties_nan": (lambda m, x: x.cummax(1),
                        [[1.0, 3, 3, 2, 3], [2, np.nan, 1, np.nan, 5]]),
    "cummin_ties_nan": (lambda m, x: m.cummin(x, 0), [[1.0, 3], [1, np.nan], [0, 1], [0, 2]]),
    "cummax_inf": (lambda m, x: x.cummax(0), [-np.inf, 1.0, np.inf, np.inf]),
    "cummax_empty": (lambda m, x: x.cummax(1), np.zeros((2, 0))),
    "logcumsumexp_inf": (lambda m, x: x.logcumsumexp(0), [-np.inf, -np.inf, 1.0, np.inf]),
    "logcumsumexp_empty": (lambda m, x: x.logcumsumexp(0), np.zeros((0,))),
    "diff_n0": (lambda m, x: x.diff(0), [1.0, 2.0]),
    "diff_big_n": (lambda m, x: x.diff(5), [1.0, 2.0, 4.0]),
    "diff_empty": (lambda m, x: x.diff(), np.zeros((2, 0))),
    "trapezoid_empty": (lambda m, x: m.trapezoid(x), np.zeros((2, 0))),
    "trapezoid_one": (lambda m, x: m.trapezoid(x), [[3.0], [4.0]]),
    "cumulative_trapezoid_one": (lambda m, x: m.cumulative_trapezoid(x), [[3.0], [4.0]]),
}


@pytest.mark.parametrize("name", sorted(BOUNDARY))
def test_boundaries_vs_torch(name, torch):
    fn, a = BOUNDARY[name]
    check_both(torch, fn, np.asarray(a, dtype=np.float64))


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "bool", "float32"])
@pytest.mark.parametrize("op", ["cumprod", "cumsum", "cummax", "cummin", "logcumsumexp",
                                "diff", "trapezoid", "cumulative_trapezoid"])
def test_dtypes_vs_torch(op, dtype, torch):
    calls = {
        "cumprod": lambda m, x: x.cumprod(1), "cumsum": lambda m, x: x.cumsum(1),
        "cummax": lambda m, x: x.cummax(1).values, "cummin": lambda m, x: x.cummin(0).indices,
        "logcumsumexp": lambda m, x: x.logcumsumexp(1), "diff": lambda m, x: x.diff(),
        "trapezoid": lambda m, x: m.trapezoid(x), "cumulative_trapezoid":
            lambda m, x: m.cumulative_trapezoid(x),
    }
    a = np.array([[1, 0, 2], [3, 1, 1]])
    got = []
    for m in (retrograd, torch):
        try:
            got.append(calls[op](m, m.tensor(a, dtype=getattr(m, dtype))))
        except Exception as e:  # noqa: BLE001 - the class is compared
            got.append(type(e))
    r, t = got
    if isinstance(t, type):
        assert r is t
    else:
        _same(r, t)


@pytest.mark.parametrize("call", [
    lambda m, x: x.cumprod(2), lambda m, x: x.cummax((0, 1)), lambda m, x: x.cummin(5),
    lambda m, x: m.diff(x, -1), lambda m, x: m.diff(x[0, 0]),
    lambda m, x: m.diff(x, prepend=m.ones(3)), lambda m, x: m.trapezoid(x, m.ones(5)),
    lambda m, x: m.trapezoid(x[0, 0]), lambda m, x: x.logcumsumexp(2),
])
def test_errors_vs_torch(call, torch):
    classes = []
    for m in (retrograd, torch):
        with pytest.raises(Exception) as info:
            call(m, m.ones(2, 3))
        classes.append(info.type)
    assert classes[0] is classes[1]


def test_cumprod_zeros_third_order_vs_torch(torch):
    # the dedicated zero formula is differentiable: third derivatives match PyTorch's
    a = np.array([0.5, 0.0, 2.0, 0.0, 3.0])
    outs = []
    for m in (retrograd, torch):
        x = m.tensor(a, dtype=m.float64, requires_grad=True)
        y = (x.cumprod(0) * m.tensor([1.0, 2, 3, 4, 5], dtype=m.float64)).sum()
        (g,) = m.autograd.grad(y, x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x, create_graph=True)
        (ggg,) = m.autograd.grad((gg * gg).sum(), x)
        outs.append([g, gg, ggg])
    for r, t in zip(*outs):
        _same(r, t)


def test_cumprod_zeros_first_order_many_patterns_vs_torch(torch):
    # the O(n) first-order formula with zeros (none, one, two, at the ends) on a large dim:
    # PyTorch's values, computed without an n x n intermediate per slice
    rng = np.random.default_rng(2)
    a = rng.uniform(0.5, 1.5, (6, 2000))
    a[1, 0] = a[2, -1] = a[3, 10] = a[3, 500] = a[4, 7] = a[4, 8] = 0.0
    check_both(torch, lambda m, x: x.cumprod(1), a)
    check_both(torch, lambda m, x: m.cumprod(x.t(), 0), a)
