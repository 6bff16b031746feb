"""Op tests, distance: cdist (ops/distance.py).

One table of cases; ``case_checks`` runs every check on every case (float64 gradcheck and
gradgradcheck, values and gradients against PyTorch in float32 and float64, the grad_fn
name and the whole graph's shape): see ``tests/ops/helpers.py``.  PyTorch's CdistBackward0
has no second derivative, so gradgradcheck checks retrograd alone there.  Below the table:
the derivative at zero distance and at ties, which PyTorch fixes by convention.
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

case("cdist", lambda m, a, b: m.cdist(a, b), ((3, 4), (2, 4)))
case("cdist_p1", lambda m, a, b: m.cdist(a, b, p=1), ((3, 4), (2, 4)))
case("cdist_p0", lambda m, a, b: m.cdist(a, b, 0), ((3, 4), (2, 4)))
case("cdist_inf", lambda m, a, b: m.cdist(a, b, p=float("inf")), ((3, 4), (2, 4)))
case("cdist_p3", lambda m, a, b: m.cdist(a, b, p=3), ((3, 4), (2, 4)))
case("cdist_p1.5", lambda m, a, b: m.cdist(a, b, p=1.5), ((3, 2), (4, 2)))
case("cdist_p0.5", lambda m, a, b: m.cdist(a, b, p=0.5), ((3, 2), (4, 2)))
case("cdist_batch", lambda m, a, b: m.cdist(a, b), ((2, 3, 4), (2, 5, 4)))
case("cdist_batch_bcast", lambda m, a, b: m.cdist(a, b, p=1), ((2, 1, 3, 2), (3, 4, 2)))
case("cdist_mm_batch_bcast", lambda m, a, b: m.cdist(a, b, compute_mode=MM),
     ((2, 1, 3, 2), (3, 4, 2)))
case("cdist_mm_2d_3d", lambda m, a, b: m.cdist(a, b, compute_mode=MM), ((3, 2), (2, 4, 2)))
case("cdist_mm", lambda m, a, b: m.cdist(a, b, compute_mode=MM), ((3, 4), (2, 4)))
case("cdist_mm_batch", lambda m, a, b: m.cdist(a, b, 2.0, MM), ((2, 3, 4), (2, 5, 4)))
case("cdist_mm_auto", lambda m, a, b: m.cdist(a, b), ((26, 2), (3, 2)))
case("cdist_no_mm", lambda m, a, b: m.cdist(a, b, compute_mode=NO_MM), ((26, 2), (30, 2)))
case("cdist_empty_rows", lambda m, a, b: m.cdist(a, b), ((0, 3), (2, 3)))
case("cdist_empty_cols", lambda m, a, b: m.cdist(a, b, p=1), ((2, 0), (3, 0)))


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
