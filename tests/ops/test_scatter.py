"""Op tests, scatter: scatter / scatter_add / scatter_reduce, index_add / index_copy /
index_fill / index_put / index_reduce, take / take_along_dim / put, masked_scatter and the
*_scatter ops, with their in-place forms (ops/scatter.py).

The case table runs every check of ``tests/ops/helpers.py`` (float64 gradcheck and
gradgradcheck, values, gradients, grad_fn names and graph shape against PyTorch); the tests
below it cover what a table cannot: repeated indices, amax/amin ties, prod with zeros, empty
and 0-d indices, errors, and the in-place forms on views.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd

from .helpers import Case, case_checks

pytestmark = pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")

CASES: list[Case] = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


# along dim 1 of a (3, 4): SIDX does not repeat within a row (scatter's overwrite is defined),
# RIDX does (accumulations must add up); both have the source's shape (PyTorch's own
# backward refuses an index smaller than src)
SIDX = np.array([[1, 3], [0, 2], [3, 0]])
RIDX = np.array([[1, 1], [0, 2], [3, 3]])
DIDX = np.array([[0, 1, 0, 2], [1, 1, 0, 0], [2, 2, 2, 0]])  # along dim 0, repeats
VIDX = np.array([0, 2, 0])  # index_* along dim 1: slice 0 twice
UIDX = np.array([2, 0, 3])  # no repeat


def t(m, a):
    return m.tensor(a)


case("scatter", lambda m, a, s: a.scatter(1, t(m, SIDX), s), ((3, 4), (3, 2)))
case("scatter_fn_dim0", lambda m, a, s: m.scatter(a, 0, t(m, np.array([[0, 2, 1, 0]])), s),
     ((3, 4), (1, 4)))
case("scatter_value", lambda m, a: a.scatter(1, t(m, RIDX), 1.5), ((3, 4),))
case("scatter_value_kw", lambda m, a: m.scatter(a, 1, t(m, RIDX), value=-2.0), ((3, 4),))
case("scatter_add", lambda m, a, s: a.scatter_add(1, t(m, RIDX), s), ((3, 4), (3, 2)))
case("scatter_add_dim0", lambda m, a, s: m.scatter_add(a, 0, t(m, DIDX), s), ((3, 4), (3, 4)))
# amax/amin: distinct source values, and self's apart from them (ties are tested below)
_DOM = {"sum": "real", "prod": "nonzero", "mean": "real", "amax": ("real", "spread"),
        "amin": ("real", "spread")}
for _red in ("sum", "prod", "mean", "amax", "amin"):
    for _inc in (True, False):
        case(f"scatter_reduce_{_red}_{_inc}",
             lambda m, a, s, r=_red, inc=_inc: a.scatter_reduce(0, t(m, DIDX), s, r,
                                                                include_self=inc),
             ((3, 4), (3, 4)), _DOM[_red])
        if _red != "sum":
            case(f"index_reduce_{_red}_{_inc}",
                 lambda m, a, s, r=_red, inc=_inc: a.index_reduce(1, t(m, VIDX), s, r,
                                                                  include_self=inc),
                 ((3, 4), (3, 3)), _DOM[_red])
case("index_add", lambda m, a, s: a.index_add(1, t(m, VIDX), s), ((3, 4), (3, 3)))
case("index_add_alpha", lambda m, a, s: m.index_add(a, 0, t(m, VIDX[:2]), s, alpha=-2.5),
     ((3, 4), (2, 4)))
case("index_copy", lambda m, a, s: a.index_copy(1, t(m, UIDX), s), ((3, 4), (3, 3)))
case("index_fill", lambda m, a: a.index_fill(1, t(m, VIDX), 0.5), ((3, 4),))
case("index_fill_neg", lambda m, a: a.index_fill(0, t(m, np.array([-1, 2])), 0.5), ((3, 4),))
case("index_fill_tensor", lambda m, a, v: a.index_fill(1, t(m, VIDX), v.sum()),
     ((3, 4), (2,)))
case("index_put", lambda m, a, v: a.index_put((t(m, UIDX[:2] % 3),), v), ((3, 4), (4,)))
case("index_put_acc", lambda m, a, v: m.index_put(a, (t(m, VIDX), t(m, UIDX)), v,
                                                  accumulate=True), ((3, 4), (3,)))
case("index_put_acc_bcast", lambda m, a, v: a.index_put((t(m, VIDX),), v, accumulate=True),
     ((3, 4), (1, 4)))
case("take", lambda m, a: a.take(t(m, np.array([[0, 5], [-1, 5]]))), ((3, 4),))
case("take_fn", lambda m, a: m.take(a, t(m, np.array([11, 0, 0]))), ((3, 4),))
case("take_along_dim", lambda m, a: a.take_along_dim(t(m, RIDX), 1), ((3, 4),))
case("take_along_dim_flat", lambda m, a: m.take_along_dim(a, t(m, np.array([0, 5, 5]))),
     ((3, 4),))
case("take_along_dim_bcast", lambda m, a: m.take_along_dim(a, t(m, np.array([[0, 3]])), dim=1),
     ((3, 4),))
case("put", lambda m, a, s: a.put(t(m, np.array([[0, 5], [11, 2]])), s), ((3, 4), (2, 2)))
case("put_acc", lambda m, a, s: m.put(a, t(m, np.array([0, 0, -1])), s, accumulate=True),
     ((3, 4), (3,)))
case("masked_scatter", lambda m, a, s: a.masked_scatter(t(m, np.array([[True, False, True,
                                                                         False]])), s),
     ((3, 4), (2, 4)))
case("masked_scatter_bcast_self", lambda m, a, s: m.masked_scatter(
    a, t(m, np.array([[True], [False], [True]])), s), ((4,), (3, 3)))
case("diagonal_scatter", lambda m, a, s: a.diagonal_scatter(s), ((3, 4), (3,)))
case("diagonal_scatter_off", lambda m, a, s: m.diagonal_scatter(a, s, -1, 1, 0), ((3, 4), (3,)))
case("diagonal_scatter_3d", lambda m, a, s: a.diagonal_scatter(s, 1, 0, 2), ((3, 2, 4), (2, 3)))
case("select_scatter", lambda m, a, s: a.select_scatter(s, 1, -1), ((3, 4), (3,)))
case("slice_scatter", lambda m, a, s: a.slice_scatter(s, 1, 0, 4, 2), ((3, 4), (3, 2)))
case("slice_scatter_default", lambda m, a, s: m.slice_scatter(a, s, start=1), ((3, 4), (2, 4)))
# the in-place forms (on a non-leaf, and on a view of one: CopySlices as PyTorch)
case("scatter_", lambda m, a, s: (a * 1).scatter_(1, t(m, SIDX), s), ((3, 4), (3, 2)))
case("scatter_value_", lambda m, a: (a * 1).scatter_(1, t(m, SIDX), 2.0), ((3, 4),))
case("scatter_add_", lambda m, a, s: (a * 1).scatter_add_(1, t(m, RIDX), s), ((3, 4), (3, 2)))
case("scatter_reduce_", lambda m, a, s: (a * 1).scatter_reduce_(0, t(m, DIDX), s, "amax"),
     ((3, 4), (3, 4)), ("real", "spread"))
case("index_add_", lambda m, a, s: (a * 1).index_add_(1, t(m, VIDX), s, alpha=2),
     ((3, 4), (3, 3)))
case("index_copy_", lambda m, a, s: (a * 1).index_copy_(1, t(m, UIDX), s), ((3, 4), (3, 3)))
case("index_fill_", lambda m, a: (a * 1).index_fill_(1, t(m, VIDX), -1.0), ((3, 4),))
case("index_reduce_", lambda m, a, s: (a * 1).index_reduce_(1, t(m, VIDX), s, "prod"),
     ((3, 4), (3, 3)), "nonzero")
case("index_put_", lambda m, a, v: (a * 1).index_put_((t(m, UIDX[:2] % 3),), v),
     ((3, 4), (4,)))
case("index_put_fn", lambda m, a, v: m.index_put_(a * 1, (t(m, VIDX),), v, True),
     ((3, 4), (4,)))
case("put_", lambda m, a, s: (a * 1).put_(t(m, np.array([1, 1])), s, accumulate=True),
     ((3, 4), (2,)))
case("masked_scatter_", lambda m, a, s: (a * 1).masked_scatter_(t(m, np.array(
    [True, False, True, True])), s), ((3, 4), (10,)))


def _on_view(m, a, s):
    b = a * 1
    b[1:].index_add_(1, t(m, VIDX), s)  # a view of b: b's grad_fn becomes CopySlices
    return b


def _on_view_scatter(m, a, s):
    b = a * 1
    b[:, 1].scatter_add_(0, t(m, np.array([2, 2])), s)
    return b


# (retrograd's CopySlices keeps the in-place op's node below it, where PyTorch folds it in:
# the same for every in-place op on a view, e.g. b[1:].add_(s); see ops/inplace.py)
_FOLD = {"structure": "CopySlices lists the op's node, PyTorch folds it in (all in-place ops)"}
case("index_add_on_view", _on_view, ((3, 4), (2, 3)), xfail=_FOLD)
case("scatter_add_on_view", _on_view_scatter, ((3, 4), (2,)), xfail=_FOLD)


(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)
