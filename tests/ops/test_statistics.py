"""Op tests, statistics: var_mean, std_mean, aminmax, nansum, nanmean, dist, renorm(_),
cov, corrcoef, gradient (ops/statistics.py).

The case table runs every check of ``tests/ops/helpers.py``; the tests below cover ties,
zeros, nan, inf, 0-d and empty inputs, dtypes and errors against PyTorch.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from .differential import check_both, dtype_outcomes, error_classes, same
from .helpers import Case, case_checks

CASES: list[Case] = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


W = np.array([1, 2, 1, 3, 1])
AW = np.array([0.5, 1.0, 2.0, 1.0, 0.25])

for _kw in [{}, {"dim": 1}, {"dim": (0, 1), "keepdim": True}, {"dim": 0, "correction": 0}]:
    _tag = "".join(f"_{k}{v}" for k, v in _kw.items()).replace(" ", "")
    case(f"var_mean{_tag}", lambda m, a, **kw: m.var_mean(a, **kw), ((3, 4),), params=_kw)
    case(f"std_mean{_tag}", lambda m, a, **kw: m.std_mean(a, **kw), ((3, 4),), params=_kw)
case("var_mean_only_mean", lambda m, a: m.var_mean(a, 1)[1] * 2, ((3, 4),))
case("aminmax", lambda m, a: a.aminmax(), ((3, 4),), "spread")
case("aminmax_dim", lambda m, a: m.aminmax(a, dim=1, keepdim=True), ((3, 4),), "spread")
case("aminmax_ties", lambda m, a: a.round().aminmax(dim=0), ((5, 3),))
case("aminmax_0d", lambda m, a: a.aminmax(), ((),))
case("nansum", lambda m, a: a.nansum(), ((3, 4),))
case("nansum_dim", lambda m, a: m.nansum(a, (0, 1), keepdim=True), ((3, 4),))
NANS = np.where(np.eye(3, 4) + np.eye(3, 4, 2) > 0, np.nan, 0.0)  # nan at fixed places
case("nansum_nan", lambda m, a: (a + m.tensor(NANS, dtype=a.dtype)).nansum(1), ((3, 4),))
case("nanmean", lambda m, a: a.nanmean(), ((3, 4),))
case("nanmean_nan", lambda m, a: m.nanmean(a + m.tensor(NANS, dtype=a.dtype), 0), ((3, 4),))
for _p in (2, 1, 3, 0.5, -1.5, float("inf"), -float("inf")):
    case(f"dist_p{_p}", lambda m, a, b, p=_p: m.dist(a, b, p), ((3, 4), (4,)), "spread")
case("renorm", lambda m, a: a.renorm(2, 0, 1.0), ((3, 4),))
case("renorm_p1_dim1", lambda m, a: m.renorm(a, 1, 1, 1.5), ((3, 4),))
case("renorm_p3", lambda m, a: a.renorm(3, -1, 0.8), ((2, 3, 2),))
case("renorm_", lambda m, a: (a * 1).renorm_(2, 1, 1.0), ((3, 4),))
case("cov", lambda m, a: a.cov(), ((3, 5),))
case("cov_1d", lambda m, a: m.cov(a), ((5,),))
case("cov_weights", lambda m, a: m.cov(a, correction=0, fweights=m.tensor(W),
                                       aweights=m.tensor(AW, dtype=a.dtype)), ((3, 5),))
case("cov_aweights", lambda m, a: a.cov(aweights=m.tensor(AW, dtype=a.dtype)), ((2, 5),))
case("cov_fweights", lambda m, a: m.cov(a, correction=2, fweights=m.tensor(W)), ((2, 5),))
case("corrcoef", lambda m, a: a.corrcoef(), ((3, 5),))
case("corrcoef_1d", lambda m, a: m.corrcoef(a), ((5,),))
case("gradient", lambda m, a: m.gradient(a), ((3, 4),))
case("gradient_dim_spacing", lambda m, a: m.gradient(a, spacing=0.5, dim=1), ((3, 4),))
case("gradient_edge2", lambda m, a: m.gradient(a, spacing=[2.0, 0.5], edge_order=2),
     ((3, 4),))
case("gradient_coords", lambda m, a: m.gradient(
    a, spacing=[m.tensor([0.0, 1.0, 3.0, 3.5], dtype=a.dtype)], dim=-1), ((3, 4),))
case("gradient_coords_edge2", lambda m, a: m.gradient(
    a, spacing=(m.tensor([0.0, 0.5, 2.0], dtype=a.dtype),), dim=0, edge_order=2), ((3, 4),))

(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)

n = np.nan
TIES = np.array([[1.0, 0.0, 3.0, 3.0], [0.0, 2.0, 0.0, 1.0]])
BOUNDARY = {
    "aminmax_ties": (lambda m, x: x.aminmax(), TIES),
    "aminmax_dim_ties": (lambda m, x: x.aminmax(dim=0), TIES),
    "aminmax_nan": (lambda m, x: x.aminmax(dim=1), np.array([[1.0, n, 2.0], [1.0, 2.0, 3.0]])),
    "aminmax_inf": (lambda m, x: x.aminmax(), np.array([np.inf, 1.0, -np.inf, np.inf])),
    "var_mean_one": (lambda m, x: m.var_mean(x, 0), np.array([[1.0, 2.0]])),
    "std_mean_zero_std": (lambda m, x: m.std_mean(x, 1), np.array([[1.0, 1.0], [1.0, 2.0]])),
    "var_mean_empty": (lambda m, x: m.var_mean(x, 1), np.zeros((2, 0))),
    "nansum_all_nan": (lambda m, x: x.nansum(0), np.array([[n, 1.0], [n, 2.0]])),
    "nansum_empty": (lambda m, x: x.nansum(), np.zeros((0, 3))),
    "nanmean_all_nan": (lambda m, x: x.nanmean(0), np.array([[n, 1.0], [n, 2.0]])),
    "nanmean_inf": (lambda m, x: x.nanmean(), np.array([np.inf, n, 1.0])),
    "dist_zero": (lambda m, x: m.dist(x, x.detach()), np.array([1.0, 2.0])),
    "dist_zero_p3": (lambda m, x: m.dist(x, x.detach(), 3), np.array([1.0, 2.0])),
    "dist_zero_p05": (lambda m, x: m.dist(x, m.zeros_like(x), 0.5), np.array([1.0, 0.0])),
    "dist_inf_ties": (lambda m, x: m.dist(x, m.zeros_like(x), float("inf")),
                      np.array([2.0, -2.0, 1.0])),
    "renorm_zero_rows": (lambda m, x: x.renorm(2, 0, 1.0), np.array([[0.0, 0.0], [3.0, 4.0]])),
    "renorm_exact": (lambda m, x: x.renorm(1, 0, 7.0), np.array([[3.0, 4.0], [1.0, 1.0]])),
    "cov_one_obs": (lambda m, x: x.cov(), np.array([[1.0], [2.0]])),
    "corrcoef_const": (lambda m, x: x.corrcoef(), np.array([[1.0, 1.0, 1.0], [1.0, 2.0, 3.0]])),
    "gradient_3d": (lambda m, x: m.gradient(x, dim=(0, 2), spacing=[1.0, 2.0]),
                    np.arange(24.0).reshape(2, 3, 4) ** 2),
    "norm_neg_p_zero": (lambda m, x: x.norm(-1), np.array([[1.0, 0.0], [2.0, 3.0]])),
    "norm_p05_zero": (lambda m, x: x.norm(0.5, dim=1), np.array([[1.0, 0.0], [2.0, 3.0]])),
    "norm_p3_zero_vec": (lambda m, x: x.norm(3, dim=1), np.array([[0.0, 0.0], [2.0, 3.0]])),
    "norm_nuc": (lambda m, x: x.norm("nuc"), np.array([[1.0, 2.0, 0.0], [0.5, -1.0, 3.0]])),
    "norm_nuc_dims": (lambda m, x: m.norm(x, "nuc", dim=(2, 0)), np.arange(12.0).reshape(2, 3, 2)
                      ** 1.5),
    "norm_fro_dims": (lambda m, x: x.norm("fro", dim=(0, 1)), np.array([[1.0, 2.0], [3, 4]])),
}


@pytest.mark.parametrize("name", sorted(BOUNDARY))
def test_boundaries_vs_torch(name, torch):
    fn, a = BOUNDARY[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_both(torch, fn, a)


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "bool", "float32"])
@pytest.mark.parametrize("op", ["var_mean", "aminmax", "nansum", "nanmean", "dist", "renorm",
                                "cov", "corrcoef", "gradient"])
def test_dtypes_vs_torch(op, dtype, torch):
    calls = {
        "var_mean": lambda m, x: m.var_mean(x, 1), "aminmax": lambda m, x: x.aminmax(),
        "nansum": lambda m, x: x.nansum(1), "nanmean": lambda m, x: x.nanmean(),
        "dist": lambda m, x: x.dist(x), "renorm": lambda m, x: x.renorm(2, 0, 1.0),
        "cov": lambda m, x: x.cov(), "corrcoef": lambda m, x: x.corrcoef(),
        "gradient": lambda m, x: m.gradient(x, dim=1),
    }
    r, t = dtype_outcomes(torch, calls[op], np.array([[1, 0, 2], [3, 1, 1]]), dtype)
    if isinstance(t, type):
        assert r is t
    else:
        for ri, ti in zip(r if isinstance(r, tuple) else (r,), t if isinstance(t, tuple) else (t,)):
            same(ri, ti)


@pytest.mark.parametrize("call", [
    lambda m, x: m.var_mean(x, 3), lambda m, x: x.aminmax(dim=2), lambda m, x: x[:0].aminmax(),
    lambda m, x: x[:, :0].aminmax(dim=1), lambda m, x: x.nansum(4),
    lambda m, x: x.dist(m.ones(4)), lambda m, x: x.renorm(-1, 0, 1.0),
    lambda m, x: x.renorm(2, 0, -1.0), lambda m, x: x[0].renorm(2, 0, 1.0),
    lambda m, x: x.renorm(2, 5, 1.0), lambda m, x: x.unsqueeze(0).cov(),
    lambda m, x: x.cov(fweights=m.ones(3)), lambda m, x: x.cov(fweights=m.tensor([1, 2])),
    lambda m, x: x.cov(aweights=m.tensor([1, 2, 3])),
    lambda m, x: x.cov(aweights=m.tensor([1.0, -2.0, 3.0])),
    lambda m, x: m.gradient(x, edge_order=3), lambda m, x: m.gradient(x, spacing=[1.0]),
    lambda m, x: m.gradient(x[:, :1], dim=1), lambda m, x: m.gradient(x, dim=(1, 1)),
    lambda m, x: x.norm("abc"),
])
def test_errors_vs_torch(call, torch):
    r, t = error_classes(torch, call, np.ones((2, 3), dtype=np.float32))
    assert r is t


def test_dist_p0_vs_torch(torch):
    # the "0-norm" counts nonzero differences; PyTorch's backward of it fails (its gradient
    # is undefined), so only values and the recorded grad_fn are compared
    check_both(torch, lambda m, x: x.dist(m.zeros_like(x), 0), np.array([[1.0, 0.0, 2.0]]),
               grad=False)


def test_nuclear_norm_second_order_as_torch(torch):
    # the nuclear norm goes through the SVD's node (ops/linalg_decomp.py), whose derivative
    # is differentiable again: its second derivative matches PyTorch's
    import retrograd

    a = np.array([[1.0, 2.0], [0.5, 3.0]])
    hv = []
    for m in (retrograd, torch):
        x = m.tensor(a, dtype=m.float64, requires_grad=True)
        (g,) = m.autograd.grad(x.norm("nuc"), x, create_graph=True)
        (h,) = m.autograd.grad((g * m.tensor([[1.0, -2.0], [0.5, 1.0]],
                                              dtype=m.float64)).sum(), x)
        hv.append(h.detach().numpy())
    np.testing.assert_allclose(hv[0], hv[1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("root", [False, True])
@pytest.mark.parametrize("axes", [(1,), None])
def test_var_mean_array_derivative_without_forward_stats(root, axes):
    # a node built without the forward's (mean, spread) (the forward-AD fallback) recomputes
    # them: the derivative must equal the one from the forward's own statistics
    from retrograd.ops.statistics import _var_mean_grad_array

    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 4))
    n = a.size if axes is None else a.shape[1]
    mean = a.mean(axis=axes, keepdims=True)
    spread = ((a - mean) ** 2).sum(axis=axes, keepdims=True) / (n - 1)
    spread = np.sqrt(spread) if root else spread
    g_var = rng.standard_normal(spread.shape).reshape(() if axes is None else (3,))
    g_mean = rng.standard_normal(g_var.shape)
    with_stats = _var_mean_grad_array(a, g_var, g_mean, axes, 1, root, n, (mean, spread))
    without = _var_mean_grad_array(a, g_var, g_mean, axes, 1, root, n, None)
    np.testing.assert_allclose(without, with_stats, rtol=1e-12, atol=1e-12)
