"""Op tests, distance: cdist, pdist, pairwise_distance, cosine_similarity, triplet losses
(ops/distance.py).

One table of cases; ``case_checks`` runs every check on every case (float64 gradcheck and
gradgradcheck, values and gradients against PyTorch in float32 and float64, the grad_fn
name and the whole graph's shape): see ``tests/ops/helpers.py``.  PyTorch's CdistBackward0
has no second derivative, nor has retrograd's (a second backward raises NotImplementedError,
test_cdist_second_backward_raises_as_torch): gradgradcheck is an expected failure there.
Below the table: the derivative at zero distance and at ties, which PyTorch fixes by
convention.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

from .helpers import Case, case_checks

CASES: list[Case] = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


MM = "use_mm_for_euclid_dist"
NO_MM = "donot_use_mm_for_euclid_dist"
_NO_GG = {"gradgradcheck": "CdistBackward0 has no second derivative (PyTorch's _cdist_backward "
                           "neither): the second backward raises NotImplementedError"}

case("cdist", lambda m, a, b: m.cdist(a, b), ((3, 4), (2, 4)),
     xfail=_NO_GG)
case("cdist_p1", lambda m, a, b: m.cdist(a, b, p=1), ((3, 4), (2, 4)),
     xfail=_NO_GG)
case("cdist_p0", lambda m, a, b: m.cdist(a, b, 0), ((3, 4), (2, 4)),
     xfail=_NO_GG)
case("cdist_inf", lambda m, a, b: m.cdist(a, b, p=float("inf")), ((3, 4), (2, 4)),
     xfail=_NO_GG)
case("cdist_p3", lambda m, a, b: m.cdist(a, b, p=3), ((3, 4), (2, 4)),
     xfail=_NO_GG)
case("cdist_p1.5", lambda m, a, b: m.cdist(a, b, p=1.5), ((3, 2), (4, 2)),
     xfail=_NO_GG)
case("cdist_p0.5", lambda m, a, b: m.cdist(a, b, p=0.5), ((3, 2), (4, 2)),
     xfail=_NO_GG)
case("cdist_batch", lambda m, a, b: m.cdist(a, b), ((2, 3, 4), (2, 5, 4)),
     xfail=_NO_GG)
case("cdist_batch_bcast", lambda m, a, b: m.cdist(a, b, p=1), ((2, 1, 3, 2), (3, 4, 2)),
     xfail=_NO_GG)
case("cdist_mm_batch_bcast", lambda m, a, b: m.cdist(a, b, compute_mode=MM),
     ((2, 1, 3, 2), (3, 4, 2)))
case("cdist_mm_2d_3d", lambda m, a, b: m.cdist(a, b, compute_mode=MM), ((3, 2), (2, 4, 2)))
case("cdist_mm", lambda m, a, b: m.cdist(a, b, compute_mode=MM), ((3, 4), (2, 4)))
case("cdist_mm_batch", lambda m, a, b: m.cdist(a, b, 2.0, MM), ((2, 3, 4), (2, 5, 4)))
case("cdist_mm_auto", lambda m, a, b: m.cdist(a, b), ((26, 2), (3, 2)))
case("cdist_no_mm", lambda m, a, b: m.cdist(a, b, compute_mode=NO_MM), ((26, 2), (30, 2)),
     xfail=_NO_GG)
case("cdist_empty_rows", lambda m, a, b: m.cdist(a, b), ((0, 3), (2, 3)),
     xfail=_NO_GG)
case("cdist_empty_cols", lambda m, a, b: m.cdist(a, b, p=1), ((2, 0), (3, 0)))

# pdist, pairwise_distance, cosine_similarity and the triplet losses (issue 8)
for _p in (2.0, 1.0, 3.0, 0.5, float("inf"), 0.0):
    case(f"pdist_p{_p}", lambda m, a, p: m.pdist(a, p), ((4, 3),), params={"p": _p})
    case(f"pairwise_distance_p{_p}", lambda m, a, b, p: m.nn.functional.pairwise_distance(
        a, b, p), ((3, 4), (3, 4)), params={"p": _p})
case("pdist_one_row", lambda m, a: m.pdist(a), ((1, 3),))
case("pairwise_distance_bcast_keepdim", lambda m, a, b: m.pairwise_distance(
    a, b, eps=0.0, keepdim=True), ((2, 3, 4), (4,)))
case("pairwise_distance_1d", lambda m, a, b: m.pairwise_distance(a, b), ((4,), (4,)))
case("cosine_similarity", lambda m, a, b: m.nn.functional.cosine_similarity(a, b), ((3, 4),
                                                                                    (3, 4)))
case("cosine_similarity_dim_bcast", lambda m, a, b: m.cosine_similarity(a, b, dim=-1, eps=0.1),
     ((2, 3, 4), (3, 1)))
case("cosine_similarity_1d", lambda m, a, b: m.cosine_similarity(a, b, 0), ((4,), (4,)))
for _red in ("mean", "sum", "none"):
    for _swap in (False, True):
        kw = {"reduction": _red, "swap": _swap}
        case(f"triplet_margin_loss_{_red}_swap{_swap}", lambda m, a, b, c, **kw: m.nn.functional
             .triplet_margin_loss(a, b, c, margin=2.0, **kw), ((3, 4),) * 3, params=kw)
        case(f"triplet_margin_with_distance_loss_{_red}_swap{_swap}", lambda m, a, b, c, **kw:
             m.nn.functional.triplet_margin_with_distance_loss(a, b, c, margin=2.0, **kw),
             ((3, 4),) * 3, params=kw)
case("triplet_margin_loss_p1_legacy", lambda m, a, b, c: m.nn.functional.triplet_margin_loss(
    a, b, c, 1.5, 1, 0.0, size_average=False), ((3, 4),) * 3)
case("triplet_margin_with_cosine_distance", lambda m, a, b, c: m.nn.functional
     .triplet_margin_with_distance_loss(a, b, c, distance_function=lambda x, y: 1.0 - m.nn
                                        .functional.cosine_similarity(x, y), swap=True),
     ((3, 4),) * 3)


(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


# ----------------------------------------------------------------- conventions at kinks

TIES = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [1.0, -1.0, 2.0]])
OTHER = np.array([[1.0, 2.0, 3.0], [2.0, -1.0, 2.0], [0.0, 0.0, 0.0]])


@pytest.mark.parametrize("mode", [MM, NO_MM])
@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf")])
def test_cdist_gradient_at_zero_distance_and_ties_as_torch(p, mode, torch):
    """Rows equal to rows of the other side (distance 0), equal coordinates (diff 0) and
    ties for the largest coordinate (p = inf): PyTorch's choices."""
    got, want = [], []
    for m, out in ((retrograd, got), (torch, want)):
        a = m.tensor(TIES, dtype=m.float64, requires_grad=True)
        b = m.tensor(OTHER, dtype=m.float64, requires_grad=True)
        d = m.cdist(a, b, p=p, compute_mode=mode)
        d.backward(m.ones_like(d))
        out += [d.detach().numpy(), a.grad.numpy(), b.grad.numpy()]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


BAD = [
    lambda m: m.cdist(m.zeros(3), m.zeros(2, 3)),
    lambda m: m.cdist(m.zeros(2, 3), m.zeros(2, 4)),
    lambda m: m.cdist(m.zeros(2, 3), m.zeros(2, 3), p=-1),
    lambda m: m.cdist(m.zeros(2, 3, dtype=m.int64), m.zeros(2, 3, dtype=m.int64)),
    lambda m: m.cdist(m.zeros(2, 3), m.zeros(2, 3, dtype=m.float64)),
    lambda m: m.cdist(m.zeros(2, 3), m.zeros(2, 3), compute_mode="fast"),
    lambda m: m.cdist(m.zeros(2, 2, 3), m.zeros(3, 2, 3)),
]


@pytest.mark.parametrize("call", BAD)
def test_cdist_refuses_as_torch(call, torch):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)) as got:
        call(retrograd)
    assert "cdist" in str(got.value) or "X1" in str(got.value)


# ----------------------------------------------------------------- zero distances (issue 8)

SAME = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0], [1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])


@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf")])
def test_pdist_gradient_at_zero_distance_as_torch(p, torch):
    """Rows 0 and 2 are equal: PyTorch's pdist gives 0 for that pair (sign(0) for p = 1)."""
    got = []
    for m in (retrograd, torch):
        a = m.tensor(SAME, dtype=m.float64, requires_grad=True)
        d = m.pdist(a, p)
        d.backward(m.arange(1.0, d.numel() + 1, dtype=m.float64))
        got.append((d.detach().numpy(), a.grad.numpy()))
    for g, w in zip(*got):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("p", [1.0, 2.0, float("inf")])
@pytest.mark.parametrize("eps", [0.0, 1e-6])
def test_pairwise_distance_and_cosine_at_zero_as_torch(p, eps, torch):
    """x1 = x2 (a zero difference without eps) and a zero vector for cosine_similarity."""
    got = []
    for m in (retrograd, torch):
        a = m.tensor(SAME, dtype=m.float64, requires_grad=True)
        b = m.tensor(SAME[::-1].copy(), dtype=m.float64, requires_grad=True)
        d = m.pairwise_distance(a, a.detach(), p, eps) + m.pairwise_distance(a, b, p, eps)
        c = m.cosine_similarity(a, b)
        (d.sum() + c.sum()).backward()
        got.append((d.detach().numpy(), c.detach().numpy(), a.grad.numpy(), b.grad.numpy()))
    for g, w in zip(*got):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


DIST_BAD = [
    ("pdist", lambda m: m.pdist(m.zeros(2, 3, 4))),
    ("pdist", lambda m: m.pdist(m.zeros(3, 2), p=-1)),
    ("pdist", lambda m: m.pdist(m.zeros(3, 2, dtype=m.int64))),
    ("cosine_similarity", lambda m: m.cosine_similarity(m.zeros(2, 3), m.zeros(2, 3), dim=2)),
    ("cosine_similarity", lambda m: m.cosine_similarity(m.zeros(2, 3, dtype=m.int64),
                                                        m.zeros(2, 3, dtype=m.int64))),
    ("size", lambda m: m.pairwise_distance(m.zeros(2, 3), m.zeros(4, 3))),
    ("margin", lambda m: m.nn.functional.triplet_margin_loss(*[m.zeros(2, 3)] * 3, margin=0)),
    ("dimensions", lambda m: m.nn.functional.triplet_margin_loss(
        m.zeros(2, 3), m.zeros(3), m.zeros(2, 3))),
    ("reduction", lambda m: m.nn.functional.triplet_margin_with_distance_loss(
        *[m.zeros(2, 3)] * 3, reduction="avg")),
]


@pytest.mark.parametrize("words,call", DIST_BAD)
def test_distances_refuse_as_torch(words, call, torch):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)) as got:
        call(retrograd)
    assert type(got.value).__module__ == "builtins"
    assert words in str(got.value).lower()


@pytest.mark.parametrize("p", [1.0, 2.0, float("inf")])
def test_cdist_second_backward_raises_as_torch(p, torch):
    """PyTorch's _cdist_backward has no derivative: under create_graph both first
    derivatives require grad, and a backward through them raises NotImplementedError."""
    for m in (retrograd, torch):
        a = m.tensor(TIES, dtype=m.float64, requires_grad=True)
        b = m.tensor(OTHER, dtype=m.float64, requires_grad=True)
        d = m.cdist(a, b, p=p)
        ga, gb = m.autograd.grad((d * d.detach().tanh()).sum(), [a, b], create_graph=True)
        assert ga.requires_grad and gb.requires_grad
        with pytest.raises(NotImplementedError, match="_cdist_backward"):
            (ga.sum() + gb.sum()).backward()
