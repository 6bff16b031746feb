"""Op tests, reduce: sum, mean, max, min (ops/reduce.py).

One table of cases; ``case_checks`` runs every check on every case (float64 gradcheck and
gradgradcheck, values and gradients against PyTorch in float32 and float64, the grad_fn
name and the whole graph's shape): see ``tests/ops/helpers.py``.
"""

from __future__ import annotations

import warnings

import hypothesis
import hypothesis.extra.numpy as hnp
import hypothesis.strategies as st
import numpy as np
import pytest

import retrograd

from .helpers import Case, case_checks, check_same, leaves, TOL

CASES: list[Case] = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


# reductions
for _dim in [None, 0, -1, (0, 2), (-1, 0)]:
    for _keep in [False, True]:
        if _dim is None and _keep:
            continue
        kw = {} if _dim is None else {"dim": _dim, "keepdim": _keep}
        _tag = "".join(f"_{k}{v}" for k, v in kw.items()).replace(" ", "")
        case(f"sum{_tag}", lambda m, a, **kw: a.sum(**kw), ((2, 3, 4),), params=kw)
        case(f"mean{_tag}", lambda m, a, **kw: m.mean(a, **kw), ((2, 3, 4),), params=kw)
case("sum_0d", lambda m, a: a.sum(), ((),))
case("sum_0d_dim", lambda m, a: a.sum(0), ((),))
case("mean_0d", lambda m, a: a.mean(), ((),))
case("sum_fn", lambda m, a: m.sum(a, 1), ((2, 3),))
for _op in ("max", "min"):
    case(f"{_op}_all", lambda m, a, op=_op: getattr(a, op)(), ((3, 4),), "spread")
    case(f"{_op}_fn_all", lambda m, a, op=_op: getattr(m, op)(a), ((5,),), "spread")
    for _dim in (0, 1, -1):
        for _keep in (False, True):
            case(f"{_op}_dim{_dim}_keep{_keep}",
                 lambda m, a, op=_op, **kw: getattr(m, op)(a, **kw), ((3, 4),), "spread",
                 params={"dim": _dim, "keepdim": _keep})
    case(f"{_op}_dim_values", lambda m, a, op=_op: getattr(a, op)(dim=1).values, ((2, 3),),
         "spread")
    case(f"{_op}_dim_1d", lambda m, a, op=_op: getattr(a, op)(0), ((5,),), "spread")


(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


REDUCTIONS = {
    "sum": lambda m, a, d, k: a.sum(d, keepdim=k), "mean": lambda m, a, d, k: a.mean(d, k),
    "amax": lambda m, a, d, k: a.amax(d, k), "prod": lambda m, a, d, k: a.prod(d, k),
    "var": lambda m, a, d, k: a.var(d, keepdim=k), "norm": lambda m, a, d, k: a.norm(dim=d),
    "logsumexp": lambda m, a, d, k: a.logsumexp(d, k), "softmax": lambda m, a, d, k: a.softmax(d),
    "log_softmax": lambda m, a, d, k: a.log_softmax(d), "cumsum": lambda m, a, d, k: a.cumsum(d),
    "max_dim": lambda m, a, d, k: a.max(d, k).values, "flip": lambda m, a, d, k: a.flip(d),
    "unsqueeze_sum": lambda m, a, d, k: a.unsqueeze(d).sum(d),
    "transpose": lambda m, a, d, k: a.transpose(d, 0),
}


@hypothesis.settings(max_examples=40, deadline=None)
@hypothesis.given(
    shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3),
    op=st.sampled_from(sorted(REDUCTIONS)),
    dim_seed=st.integers(0, 100), keepdim=st.booleans(), seed=st.integers(0, 2**16),
)
def test_reductions_over_any_dim_vs_torch_hypothesis(shape, op, dim_seed, keepdim, seed):
    """Reductions and scans over a random dimension (negative too) of a random shape."""
    torch = pytest.importorskip("torch")
    dim = dim_seed % (2 * len(shape)) - len(shape)
    rng = np.random.default_rng(seed)
    # distinct values: max/amax have no ties; prod stays away from 0
    arrays = [rng.permutation(np.arange(1, int(np.prod(shape)) + 1)).reshape(shape) / 4.0]
    rg_in, th_in = leaves(retrograd, arrays, "float64"), leaves(torch, arrays, "float64")
    fn = REDUCTIONS[op]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # var over one element: both warn
        rg_out, th_out = fn(retrograd, rg_in[0], dim, keepdim), fn(torch, th_in[0], dim, keepdim)
    check_same(rg_out, th_out, TOL["float64"], "value")
    g = rng.standard_normal(tuple(th_out.shape))
    rg_out.backward(retrograd.tensor(g))
    th_out.backward(torch.tensor(g))
    check_same(rg_in[0].grad, th_in[0].grad, TOL["float64"], "grad")


@pytest.mark.parametrize("call", [
    lambda m, x: x.max(0), lambda m, x: m.min(x, -1, keepdim=True), lambda m, x: x.max(dim=0),
    lambda m, x: x.kthvalue(1), lambda m, x: x.cumsum(0), lambda m, x: m.cumsum(x, -1),
    lambda m, x: x.median(0), lambda m, x: x.mode(-1), lambda m, x: x.cummax(0),
    lambda m, x: x.sort(), lambda m, x: x.topk(1), lambda m, x: x.topk(0),
])
def test_0d_along_a_dim_vs_torch(call, torch):
    # a 0-d tensor reduces or scans along dim 0 (or -1) as a one-element slice
    from .differential import check_both

    check_both(torch, call, np.array(2.5))


def test_max_min_dim_ties_and_nan_vs_torch(torch):
    # the first index among ties; a nan wins (its first index); the gradient goes there
    from .differential import check_both

    a = np.array([[1.0, 3.0, 3.0], [np.nan, 2.0, np.nan], [0.0, 0.0, -1.0]])
    for call in (lambda m, x: x.max(1), lambda m, x: x.min(1), lambda m, x: m.max(x, 0, True)):
        check_both(torch, call, a)
