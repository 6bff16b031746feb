"""Op tests, scatter: scatter / scatter_add / scatter_reduce, index_add / index_copy /
index_fill / index_put / index_reduce, take / take_along_dim / put, masked_scatter and the
*_scatter ops, with their in-place forms (ops/scatter.py, ops/take_put.py).

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
# (CopySlices folds the op's node in, as PyTorch's: its graph has the same shape)
case("index_add_on_view", _on_view, ((3, 4), (2, 3)))
case("scatter_add_on_view", _on_view_scatter, ((3, 4), (2,)))


(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


# ----------------------------------------------------------------- boundaries vs torch


def _both(torch, fn, arrays, grad_seed=3):
    """Run ``fn(m, *leaves)`` on both libraries; values, dtypes, grad_fn names and the
    gradients of every input must agree."""
    res = {}
    for m in (retrograd, torch):
        xs = [m.tensor(a).requires_grad_(a.dtype.kind == "f") for a in arrays]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            out = fn(m, *xs)
        name = None if out.grad_fn is None else (
            out.grad_fn.name())
        grads = None
        if out.requires_grad:
            g = np.random.default_rng(grad_seed).standard_normal(tuple(out.shape))
            out.backward(m.tensor(g, dtype=out.dtype))
            grads = [None if x.grad is None else x.grad.numpy() for x in xs]
        res[m] = (out.detach().numpy(), str(out.dtype).split(".")[-1], name, grads)
    r, t = res[retrograd], res[torch]
    np.testing.assert_allclose(r[0], t[0], rtol=1e-12, atol=1e-12)
    assert r[0].shape == t[0].shape and r[1:3] == t[1:3], (r[1:3], t[1:3])
    if t[3] is not None:
        for gr, gt in zip(r[3], t[3]):
            assert (gr is None) == (gt is None)
            if gt is not None:
                np.testing.assert_allclose(gr, gt, rtol=1e-12, atol=1e-12)


TIES = np.array([[1.0, 3.0, 2.0, 0.0], [3.0, 3.0, 5.0, 0.0], [1.0, 3.0, 5.0, -1.0]])
SELF_TIES = np.array([[3.0, 0.0, 5.0, 0.0], [0.0, 0.0, 0.0, 0.0], [1.0, 3.0, 5.0, 7.0]])


@pytest.mark.parametrize("reduce", ["amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_ties_share_the_gradient_as_torch(torch, reduce, include_self):
    # ties among the sources, and between sources and self: PyTorch divides evenly (and
    # counts a tying self even with include_self=False: its formula, followed exactly)
    idx = np.array([[0, 0, 0, 0], [0, 0, 0, 0], [0, 1, 0, 2]])
    _both(torch, lambda m, a, s: a.scatter_reduce(0, m.tensor(idx), s, reduce,
                                                  include_self=include_self),
          [SELF_TIES, TIES if reduce == "amax" else -TIES])
    _both(torch, lambda m, a, s: a.index_reduce(0, m.tensor([0, 0, 2]), s, reduce,
                                                include_self=include_self),
          [SELF_TIES, TIES if reduce == "amax" else -TIES])


@pytest.mark.parametrize("include_self", [True, False])
def test_prod_with_zeros_as_torch(torch, include_self):
    # one zero at a position: the others' product; two zeros there: zero gradients
    src = np.array([[0.0, 2.0, 0.0, 3.0], [4.0, 0.0, 0.0, 5.0], [2.0, 2.0, 1.5, 0.0]])
    me = np.array([[1.5, 0.0, 2.0, 0.0], [2.0, 3.0, 1.0, 1.0], [0.5, 0.0, 2.0, 3.0]])
    idx = np.array([[0, 0, 0, 1], [0, 0, 0, 1], [2, 0, 1, 1]])
    _both(torch, lambda m, a, s: a.scatter_reduce(0, m.tensor(idx), s, "prod",
                                                  include_self=include_self), [me, src])
    _both(torch, lambda m, a, s: a.index_reduce(0, m.tensor([0, 0, 2]), s, "prod",
                                                include_self=include_self), [me, src])


def test_repeated_indices_accumulate_as_torch(torch):
    idx = np.array([[0, 0, 0, 0], [0, 0, 0, 0]])
    x, s = np.zeros((3, 4)), np.arange(8.0).reshape(2, 4)
    _both(torch, lambda m, a, b: a.scatter_add(0, m.tensor(idx), b), [x, s])
    _both(torch, lambda m, a, b: a.scatter_reduce(0, m.tensor(idx), b, "mean",
                                                  include_self=False), [x, s])
    _both(torch, lambda m, a, b: a.index_put((m.tensor([1, 1]),), b, accumulate=True), [x, s])
    _both(torch, lambda m, a, b: a.put(m.tensor([1, 1, 1, -11]), b[0], accumulate=True), [x, s])
    _both(torch, lambda m, a, b: a.index_add(0, m.tensor([2, 2]), b, alpha=0.5), [x, s])
    _both(torch, lambda m, a, b: a.take(m.tensor([[1, 1], [1, 0]])) * b[:, :2], [x, s])


def test_empty_and_zero_d_indices_as_torch(torch):
    x, s = np.arange(12.0).reshape(3, 4), np.ones((3, 4))
    e = np.zeros((0, 4), dtype=np.int64)
    # (a source as large as the index: PyTorch's backward refuses a larger one)
    _both(torch, lambda m, a, b: a.scatter_add(0, m.tensor(e), b[:0]), [x, s])
    _both(torch, lambda m, a, b: a.scatter_reduce(0, m.tensor(e), b[:0], "amax"), [x, s])
    _both(torch, lambda m, a, b: a.scatter(0, m.tensor(e), b[:0]), [x, s])
    _both(torch, lambda m, a, b: a.index_add(0, m.tensor(e[:, 0]), b[:0]), [x, s])
    _both(torch, lambda m, a, b: a.index_fill(1, m.tensor(e[:, 0]), 2.0), [x, s])
    _both(torch, lambda m, a, b: a.take(m.tensor(e)), [x, s])
    _both(torch, lambda m, a, b: a.index_put((m.tensor(e[:, 0]),), b[0, 0]), [x, s])
    # 0-d self, 0-d index
    z, v = np.array(1.5), np.array(2.5)
    _both(torch, lambda m, a, b: a.scatter_add(0, m.tensor(0), b), [z, v])
    _both(torch, lambda m, a, b: a.scatter(0, m.tensor([0, 0]), b.expand(2)), [z, v])
    _both(torch, lambda m, a, b: a.index_copy(0, m.tensor([0]), b), [z, v])
    _both(torch, lambda m, a, b: a.index_add(0, m.tensor([0]), b, alpha=2), [z, v])
    _both(torch, lambda m, a, b: a.index_fill(0, m.tensor(0), b), [z, v])
    _both(torch, lambda m, a, b: a.take(m.tensor([0, 0])) * b, [z, v])
    _both(torch, lambda m, a, b: a.put(m.tensor(0), b), [z, v])


def test_integer_tensors_as_torch(torch):
    # no gradient; integer mean floors, as PyTorch's
    xi = np.arange(12).reshape(3, 4)
    idx = np.array([[0, 1, 0, 2], [1, 1, 0, 0]])
    for red in ("sum", "prod", "mean", "amax", "amin"):
        for inc in (True, False):
            _both(torch, lambda m, a, r=red, i=inc: a.scatter_reduce(
                0, m.tensor(idx), a * 3 + 1, r, include_self=i), [xi])
    _both(torch, lambda m, a: a.scatter(0, m.tensor(idx), 2.5), [xi])
    _both(torch, lambda m, a: a.index_fill(0, m.tensor([0, 2]), 2.7), [xi])
    _both(torch, lambda m, a: a.index_add(0, m.tensor([0, 2, 0]), m.ones_like(a), alpha=2), [xi])


def test_scatter_with_reduce_has_no_derivative_as_torch(torch):
    idx = np.array([[0, 1, 0, 2]])
    for m in (retrograd, torch):
        x = m.zeros(3, 4, dtype=m.float64).requires_grad_(True)
        s = m.ones(1, 4, dtype=m.float64).requires_grad_(True)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            out = x.scatter(0, m.tensor(idx), s, reduce="add")
        # (PyTorch warns once a process, so only retrograd's warning is checked each time)
        assert m is torch or any("deprecated" in str(w.message) for w in seen)
        name = out.grad_fn.name()
        assert name == "torch::autograd::NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
            out.sum().backward()
        out = x.scatter(0, m.tensor(idx), 2.0, reduce="multiply")
        assert out.detach().numpy().sum() == 0.0


def test_out_of_bounds_is_never_a_numpy_error(torch):
    # PyTorch's class, and a message naming the index and the size (not NumPy's IndexError
    # traceback from inside an array call)
    x = retrograd.zeros(3, 4)
    with pytest.raises(RuntimeError, match="index 7 is out of bounds for dimension 1 with size 4"):
        x.scatter_add(1, retrograd.tensor([[7]]), retrograd.ones(1, 1))
    with pytest.raises(IndexError, match="index 12 on a tensor of 12 elements"):
        x.put_(retrograd.tensor([12]), retrograd.ones(1))


def test_int32_index_accepted_where_torch_accepts_it(torch):
    x, s = np.zeros((3, 4)), np.ones((1, 4))
    for fn in (lambda m, a, b: a.scatter_add(0, m.tensor([[0, 1, 2, 0]]).int(), b),
               lambda m, a, b: a.index_add(0, m.tensor([1]).int(), b),
               lambda m, a, b: a.index_reduce(0, m.tensor([1]).int(), b, "amax"),
               lambda m, a, b: a.index_put((m.tensor([1]).int(),), b[0])):
        _both(torch, fn, [x, s])


# ----------------------------------------------------------------- in-place forms vs torch


INPLACE = {
    "scatter_": lambda m, y, s: y.scatter_(1, m.tensor(SIDX[:2]), s[:, :2]),
    "scatter_add_": lambda m, y, s: y.scatter_add_(1, m.tensor(RIDX[:2]), s[:, :2]),
    "scatter_reduce_": lambda m, y, s: y.scatter_reduce_(0, m.tensor(DIDX[:2] % 2), s, "mean"),
    "index_add_": lambda m, y, s: y.index_add_(0, m.tensor([1, 1]), s, alpha=3),
    "index_copy_": lambda m, y, s: y.index_copy_(0, m.tensor([1, 0]), s),
    "index_fill_": lambda m, y, s: y.index_fill_(1, m.tensor([1, 1]), s[0, 0]),
    "index_reduce_": lambda m, y, s: y.index_reduce_(0, m.tensor([0, 0]), s, "amin"),
    "index_put_": lambda m, y, s: y.index_put_((m.tensor([1, 0]),), s, accumulate=True),
    "put_": lambda m, y, s: y.put_(m.tensor([0, 3]), s[0, :2]),
    "masked_scatter_": lambda m, y, s: y.masked_scatter_(m.tensor([True, False, True, False]),
                                                         s),
}


def _inplace_run(m, name, on_view):
    rng = np.random.default_rng(5)
    a = m.tensor(rng.standard_normal((3, 4))).requires_grad_(True)
    s = m.tensor(rng.standard_normal((2, 4))).requires_grad_(True)
    b = a * 1
    y = b[1:] if on_view else b
    view = b[:, 1:]  # taken before: must see the change and its gradient
    v0 = y._version
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        out = INPLACE[name](m, y, s)
    assert out is y
    name_of = (lambda f: f.name())
    rec = (y._version - v0, view._version - v0, name_of(y.grad_fn), name_of(b.grad_fn),
           view.detach().numpy().copy(), b.detach().numpy().copy())
    (b * b).sum().backward(retain_graph=True)
    view.sum().backward()
    return rec, a.grad.numpy(), s.grad.numpy()


@pytest.mark.parametrize("on_view", [False, True], ids=["tensor", "view"])
@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_forms_vs_torch(torch, name, on_view):
    (r, ra, rs), (t, ta, ts) = (_inplace_run(retrograd, name, on_view),
                                _inplace_run(torch, name, on_view))
    assert r[:4] == t[:4]
    for got, want in zip((*r[4:], ra, rs), (*t[4:], ta, ts)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_inplace_on_a_leaf_is_refused_as_torch(torch):
    for m in (retrograd, torch):
        a = m.zeros(3).requires_grad_(True)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            a.index_add_(0, m.tensor([0]), m.ones(1))
        with m.no_grad():
            a.scatter_add_(0, m.tensor([0, 0]), m.ones(2))
        assert a.tolist() == [2.0, 0.0, 0.0] and a._version == 1


THIRD_ORDER = {
    "scatter_add": lambda m, a, s: a.scatter_add(0, m.tensor(DIDX), s),
    "scatter_reduce_prod": lambda m, a, s: a.scatter_reduce(0, m.tensor(DIDX), s, "prod"),
    "scatter_reduce_mean": lambda m, a, s: a.scatter_reduce(0, m.tensor(DIDX), s, "mean",
                                                            include_self=False),
    "index_reduce_amax": lambda m, a, s: a.index_reduce(0, m.tensor([0, 2, 0]), s, "amax"),
    "index_add": lambda m, a, s: a.index_add(0, m.tensor([1, 1, 0]), s, alpha=-2),
    "masked_scatter": lambda m, a, s: a.masked_scatter(m.tensor([True, False, True, True]), s),
    "take": lambda m, a, s: a.take(m.tensor([[0, 0, 5, 11]])) * s[:1],
}


@pytest.mark.parametrize("name", list(THIRD_ORDER))
def test_third_derivatives_vs_torch(torch, name):
    # d3/dx3 of sum(f(a, s) ** 3), through create_graph twice: every derivative is recorded
    rng = np.random.default_rng(11)
    arrays = [rng.uniform(0.5, 2.0, (3, 4)), rng.uniform(0.5, 2.0, (3, 4))]
    got = {}
    for m in (retrograd, torch):
        a, s = [m.tensor(x).requires_grad_(True) for x in arrays]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            y = (THIRD_ORDER[name](m, a, s) ** 3).sum()
        g1 = m.autograd.grad(y, (a, s), create_graph=True)
        g2 = m.autograd.grad(sum(g.sum() for g in g1), (a, s), create_graph=True)
        g3 = m.autograd.grad(sum((g * g).sum() for g in g2), (a, s))
        got[m] = [g.detach().numpy() for g in (*g1, *g2, *g3)]
    for r, t in zip(got[retrograd], got[torch]):
        np.testing.assert_allclose(r, t, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("op", ["scatter_reduce", "index_reduce"])
def test_prod_second_derivative_refused_with_two_zeros_as_torch(torch, op):
    # PyTorch's prod derivative wrt the source has no second order where two zeros meet;
    # its Error node refuses it (the derivative wrt self keeps going)
    got = []
    for m in (retrograd, torch):
        a = m.tensor([1.0, 2.0], dtype=m.float64).requires_grad_(True)
        s = m.tensor([0.0, 0.0, 3.0], dtype=m.float64).requires_grad_(True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            y = getattr(a, op)(0, m.tensor([0, 0, 1]), s, "prod").sum()
        ga, gs = m.autograd.grad(y, (a, s), create_graph=True)
        name = gs.grad_fn.name()
        with pytest.raises(RuntimeError, match="Double backward is unsupported") as e:
            m.autograd.grad(gs.sum(), (a, s))
        got.append((name, str(e.value), [g.numpy() for g in m.autograd.grad(ga.sum(), (a, s))]))
    assert got[0][:2] == got[1][:2]
    for r, t in zip(got[0][2], got[1][2]):
        np.testing.assert_allclose(r, t)


@pytest.mark.parametrize("reduce", ["max", "min"])
def test_scatter_reduce_max_min_spellings_as_torch(torch, reduce):
    # PyTorch accepts "max"/"min" (as amax/amin) but has no derivative for them
    for inc in (True, False):
        _both(torch, lambda m, a, s, i=inc: a.detach().scatter_reduce(
            0, m.tensor([0, 0, 1]), s.detach(), reduce, include_self=i),
            [np.array([0.5, -1.0, 2.0]), np.array([1.0, 5.0, -2.0])])
    for m in (retrograd, torch):
        x = m.zeros(3, dtype=m.float64).requires_grad_(True)
        y = x.scatter_reduce(0, m.tensor([0, 0, 1]), m.ones(3, dtype=m.float64), reduce)
        with pytest.raises(RuntimeError, match=f"but got {reduce}"):
            y.sum().backward()
