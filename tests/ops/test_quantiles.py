"""Op tests, order statistics: median, nanmedian, mode, quantile, nanquantile
(ops/quantiles.py).

The case table runs every check of ``tests/ops/helpers.py``; the tests below cover ties
(PyTorch's index choices, so its gradients), nan, 0-d and empty inputs, dtypes and errors.
"""

from __future__ import annotations

import numpy as np
import pytest

from .differential import check_both, dtype_outcomes, error_classes, same
from .helpers import Case, case_checks

CASES: list[Case] = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


def _q(m, a, values):
    return m.tensor(values, dtype=a.dtype)


case("median", lambda m, a: a.median(), ((3, 4),), "spread")
case("median_dim", lambda m, a: a.median(1), ((3, 4),), "spread")
case("median_dim0_keep", lambda m, a: m.median(a, dim=0, keepdim=True), ((4, 3),), "spread")
case("median_0d", lambda m, a: a.median(0), ((),))
case("median_ties", lambda m, a: a.round().median(), ((3, 5),))
case("median_dim_ties", lambda m, a: a.round().median(-1), ((3, 6),))
case("nanmedian", lambda m, a: a.nanmedian(), ((3, 4),), "spread")
case("nanmedian_dim", lambda m, a: m.nanmedian(a, 1), ((3, 4),), "spread")
case("mode", lambda m, a: a.mode(), ((3, 4),), "spread")
case("mode_ties", lambda m, a: m.mode(a.round(), 0, keepdim=True), ((6, 3),))
case("mode_0d", lambda m, a: a.mode(), ((),))
case("quantile", lambda m, a: a.quantile(0.3), ((3, 4),))
case("quantile_dim", lambda m, a: a.quantile(0.6, dim=1), ((3, 4),))
case("quantile_dim0_keep", lambda m, a: m.quantile(a, 0.6, 0, True), ((3, 4),))
case("quantile_qs", lambda m, a: a.quantile(_q(m, a, [0.0, 0.25, 1.0]), dim=1), ((3, 4),))
case("quantile_qs_all_keep", lambda m, a: a.quantile(_q(m, a, [0.5, 0.9]), keepdim=True),
     ((3, 4),))
for _mode in ("linear", "lower", "higher", "midpoint", "nearest"):
    case(f"quantile_{_mode}", lambda m, a, mode=_mode: a.quantile(
        _q(m, a, [0.0, 0.1, 0.5, 0.75, 1.0]), dim=0, interpolation=mode), ((5, 3),))
case("quantile_0d", lambda m, a: a.quantile(0.5), ((),))
case("nanquantile", lambda m, a: a.nanquantile(0.3, dim=1), ((3, 4),))
case("nanquantile_midpoint", lambda m, a: m.nanquantile(a, _q(m, a, [0.2, 0.5]),
                                                        interpolation="midpoint"), ((3, 4),))

(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)

n = np.nan
TIES = np.array([[1.0, 0.0, 2.0, 3.0, 2.0], [2.0, 2.0, 0.0, 0.0, 1.0], [1.0, 1, 1, 1, 1]])
NANS = np.array([[1.0, n, 2.0, n], [3.0, 1.0, 1.0, 2.0], [n, n, n, n]])
BOUNDARY = {
    "median_ties": (lambda m, x: x.median(), TIES),
    "median_dim_ties": (lambda m, x: x.median(1), TIES),
    "median_dim0_ties": (lambda m, x: m.median(x, 0, keepdim=True), TIES),
    "median_nan": (lambda m, x: x.median(), NANS),
    "median_dim_nan": (lambda m, x: x.median(1), NANS),
    "median_inf": (lambda m, x: x.median(0), np.array([np.inf, -np.inf, np.inf])),
    "nanmedian_nan": (lambda m, x: x.nanmedian(), NANS),
    "nanmedian_dim_nan": (lambda m, x: x.nanmedian(1), NANS),
    "nanmedian_all_nan": (lambda m, x: x.nanmedian(), np.array([n, n])),
    "median_empty": (lambda m, x: x.median(), np.zeros((0,))),
    "median_empty_dim": (lambda m, x: x.median(0), np.zeros((2, 0))),
    "mode_ties": (lambda m, x: x.mode(), TIES),
    "mode_ties_dim0": (lambda m, x: x.mode(0), TIES.T),
    "mode_empty_dim": (lambda m, x: x.mode(0), np.zeros((0, 2)).T),
    "quantile_ties": (lambda m, x: x.quantile(m.tensor([0.25, 0.5, 0.75], dtype=x.dtype),
                                              dim=1), TIES),
    "quantile_nan": (lambda m, x: x.quantile(0.4, dim=1), NANS),
    "nanquantile_nan": (lambda m, x: x.nanquantile(m.tensor([0.0, 0.4, 1.0], dtype=x.dtype),
                                                   dim=1), NANS),
    "quantile_inf": (lambda m, x: x.quantile(0.5), np.array([np.inf, -np.inf, 1.0, 2.0])),
    "quantile_0d_dim_qs": (lambda m, x: x.quantile(m.tensor([0.3, 0.4], dtype=x.dtype), dim=0,
                                                   keepdim=True), np.array(3.0)),
}


@pytest.mark.parametrize("name", sorted(BOUNDARY))
def test_boundaries_vs_torch(name, torch):
    fn, a = BOUNDARY[name]
    check_both(torch, fn, a)


def test_median_and_mode_ties_random_vs_torch(torch):
    # PyTorch's index choices at ties, on many small integer-valued rows
    rng = np.random.default_rng(0)
    a = rng.integers(0, 3, (200, 7)).astype(np.float64)
    for fn in (lambda m, x: x.median(1), lambda m, x: x.nanmedian(1), lambda m, x: x.mode(1)):
        check_both(torch, fn, a)


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "bool", "float32"])
@pytest.mark.parametrize("op", ["median", "median_dim", "nanmedian", "mode", "quantile"])
def test_dtypes_vs_torch(op, dtype, torch):
    calls = {
        "median": lambda m, x: x.median(), "median_dim": lambda m, x: x.median(1),
        "nanmedian": lambda m, x: x.nanmedian(0).values, "mode": lambda m, x: x.mode(1),
        "quantile": lambda m, x: x.quantile(0.5),
    }
    r, t = dtype_outcomes(torch, calls[op], np.array([[1, 0, 2], [3, 1, 1]]), dtype)
    if isinstance(t, type):
        assert r is t
    else:
        for ri, ti in zip(r if isinstance(r, tuple) else (r,), t if isinstance(t, tuple) else (t,)):
            same(ri, ti)


@pytest.mark.parametrize("call", [
    lambda m, x: x.median(2), lambda m, x: x.median((0, 1)), lambda m, x: x.mode(3),
    lambda m, x: x.quantile(1.5), lambda m, x: x.quantile(m.tensor([[0.5]])),
    lambda m, x: x.quantile(m.tensor([0.5], dtype=m.float64)),
    lambda m, x: x.quantile(0.5, interpolation="foo"), lambda m, x: x.quantile(0.5, dim=4),
    lambda m, x: x[:0].quantile(0.5), lambda m, x: x[:, :0].median(1),
    lambda m, x: x[:, :0].mode(1), lambda m, x: x.nanquantile(-0.1),
])
def test_errors_vs_torch(call, torch):
    r, t = error_classes(torch, call, np.ones((2, 3), dtype=np.float32))
    assert r is t


def test_nanmedian_all_nan_index_vs_torch(torch):
    # every length: PyTorch's std::nth_element moves equivalent elements around
    for size in range(1, 70):
        check_both(torch, lambda m, x: x.nanmedian(0), np.full((size, 2), np.nan))


def test_kthvalue_ties_vs_torch(torch):
    # kthvalue's index at ties (and nans) is what ATen's quickselect leaves at k
    rng = np.random.default_rng(1)
    for _ in range(60):
        size = int(rng.integers(1, 30))
        a = rng.integers(0, 4, (3, size)).astype(np.float64)
        a[rng.random(a.shape) < 0.1] = np.nan
        k = int(rng.integers(1, size + 1))
        check_both(torch, lambda m, x, k=k: x.kthvalue(k, 1), a)
        check_both(torch, lambda m, x, k=k: x.kthvalue(min(k, 3), 0, keepdim=True), a)
