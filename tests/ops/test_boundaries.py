"""Ops at the points random inputs never hit (kinks, ties, zeros, saturation): PyTorch's
conventions, checked against the expected numbers and against torch itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

import retrograd

from .helpers import as_numpy, check_same, leaves, nnf, TOL


@dataclass
class Boundary:
    """An op at points random inputs never hit (kinks, ties, zeros), float64.

    ``values`` are the inputs; ``expect`` the gradients PyTorch's convention gives with an
    all-ones output gradient (one list per input), checked here and against torch itself.
    """

    name: str
    fn: Callable
    values: tuple
    expect: tuple


BOUNDARIES = [
    # relu'(0) = 0; abs'(0) = 0 (the sign function), as PyTorch
    Boundary("relu_at_0", lambda m, x: m.relu(x), ([-1.0, 0.0, 2.0],), ([0.0, 0.0, 1.0],)),
    Boundary("F.relu_at_0", lambda m, x: nnf(m).relu(x), ([0.0, -0.0],), ([0.0, 0.0],)),
    Boundary("abs_at_0", lambda m, x: x.abs(), ([-1.0, 0.0, 2.0],), ([-1.0, 0.0, 1.0],)),
    # clamp passes the gradient at the bounds themselves
    Boundary("clamp_at_bounds", lambda m, x: x.clamp(0.0, 1.0),
             ([-0.5, 0.0, 0.5, 1.0, 1.5],), ([0.0, 1.0, 1.0, 1.0, 0.0],)),
    Boundary("clamp_min_at_bound", lambda m, x: x.clamp(min=0.0), ([0.0, -1.0],), ([1.0, 0.0],)),
    Boundary("clamp_max_at_bound", lambda m, x: x.clamp(max=0.0), ([0.0, 1.0],), ([1.0, 0.0],)),
    # max()/min() over everything split ties evenly
    Boundary("max_all_tie", lambda m, x: x.max(), ([1.0, 3.0, 3.0],), ([0.0, 0.5, 0.5],)),
    Boundary("min_all_tie3", lambda m, x: m.min(x), ([[2.0, 1.0], [1.0, 1.0]],),
             ([[0.0, 1 / 3], [1 / 3, 1 / 3]],)),
    # max(dim)/min(dim) give all of it to the returned index (the first of the tied ones)
    Boundary("max_dim_tie", lambda m, x: x.max(dim=1).values,
             ([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]],), ([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]],)),
    Boundary("min_dim_tie_keepdim", lambda m, x: m.min(x, 0, keepdim=True)[0],
             ([[1.0, 0.0], [1.0, 0.0]],), ([[1.0, 1.0], [0.0, 0.0]],)),
    # maximum/minimum split a tie between the two inputs
    Boundary("maximum_tie", lambda m, x, y: m.maximum(x, y), ([1.0, 2.0, 3.0], [1.0, 0.0, 3.0]),
             ([0.5, 1.0, 0.5], [0.5, 0.0, 0.5])),
    Boundary("minimum_tie_bcast", lambda m, x, y: m.minimum(x, y), ([1.0, 2.0, 3.0], [2.0]),
             ([1.0, 0.5, 0.0], [1.5])),
    # pow: d(x**0)/dx = 0 even at x = 0; d(x**p)/dp = 0 where x = 0 and p >= 0
    Boundary("pow_0_at_0", lambda m, x: x ** 0, ([0.0, 2.0],), ([0.0, 0.0],)),
    Boundary("pow_2_at_0", lambda m, x: x ** 2, ([0.0, -1.0],), ([0.0, -2.0],)),
    Boundary("pow_1_at_0", lambda m, x: x ** 1, ([0.0],), ([1.0],)),
    Boundary("pow_tt_at_0", lambda m, x, p: x ** p, ([0.0, 0.0, 2.0], [0.0, 2.0, 0.0]),
             ([0.0, 0.0, 0.0], [0.0, 0.0, float(np.log(2.0))])),
    Boundary("rpow_0_base", lambda m, p: 0.0 ** p, ([0.0, 1.0, 2.0],), ([0.0, 0.0, 0.0],)),
    # sqrt and log at 0: infinite slope, as PyTorch (no nan)
    Boundary("sqrt_at_0", lambda m, x: x.sqrt(), ([0.0, 4.0],), ([float("inf"), 0.25],)),
    Boundary("log_at_0", lambda m, x: x.log(), ([0.0, 2.0],), ([float("inf"), 0.5],)),
    Boundary("pow_half_at_0", lambda m, x: x ** 0.5, ([0.0],), ([float("inf")],)),
    # activations at their kinks: leaky_relu'(0) and elu'(0) take the x <= 0 branch;
    # hardtanh / relu6 stop the gradient at their bounds (unlike clamp)
    Boundary("leaky_relu_at_0", lambda m, x: nnf(m).leaky_relu(x, 0.1), ([0.0, -1.0, 1.0],),
             ([0.1, 0.1, 1.0],)),
    Boundary("elu_at_0", lambda m, x: nnf(m).elu(x, 0.5), ([0.0, 1.0],), ([0.5, 1.0],)),
    Boundary("hardtanh_at_bounds", lambda m, x: nnf(m).hardtanh(x), ([-1.0, 1.0, 0.0, 2.0],),
             ([0.0, 0.0, 1.0, 0.0],)),
    Boundary("relu6_at_bounds", lambda m, x: nnf(m).relu6(x), ([0.0, 6.0, 3.0, 7.0],),
             ([0.0, 0.0, 1.0, 0.0],)),
    Boundary("softplus_at_threshold", lambda m, x: nnf(m).softplus(x) - x, ([20.0, 21.0],),
             ([float(1 / (1 + np.exp(20.0))) * -1, 0.0],)),
    Boundary("floor_at_integer", lambda m, x: x.floor() + x.round(), ([1.0, 2.5, -0.5],),
             ([0.0, 0.0, 0.0],)),
    # prod with zeros: one zero gets the product of the rest, two zeros give 0 everywhere
    Boundary("prod_one_zero", lambda m, x: x.prod(), ([2.0, 0.0, 3.0],), ([0.0, 6.0, 0.0],)),
    Boundary("prod_two_zeros", lambda m, x: x.prod(1), ([[0.0, 2.0, 0.0], [1.0, 0.0, 4.0]],),
             ([[0.0, 0.0, 0.0], [0.0, 4.0, 0.0]],)),
    # norm of a zero vector, std of constant values: 0 (not nan)
    Boundary("norm_zero", lambda m, x: x.norm(), ([0.0, 0.0],), ([0.0, 0.0],)),
    Boundary("std_constant", lambda m, x: x.std(), ([1.0, 1.0, 1.0],), ([0.0, 0.0, 0.0],)),
    # amax/amin split ties evenly
    Boundary("amax_tie", lambda m, x: x.amax(1), ([[1.0, 3.0, 3.0]],), ([[0.0, 0.5, 0.5]],)),
    Boundary("logsumexp_neg_inf", lambda m, x: x.logsumexp(0),
             ([float("-inf"), 0.0],), ([0.0, 1.0],)),
    # binary_cross_entropy at 0 and 1: each log is clamped at -100, the slope's denominator
    # x (1 - x) at 1e-12 (as PyTorch)
    Boundary("bce_at_0_and_1", lambda m, x: nnf(m).binary_cross_entropy(
        x, m.tensor([1.0, 0.0, 1.0], dtype=m.float64), reduction="sum"),
        ([0.0, 1.0, 1.0],), ([-1 / 9.999999960041972e-13, 1 / 9.999999960041972e-13, 0.0],)),
    # xlogy(0, y) = 0; its x-gradient is log(y), but 0 where y <= 0 too; clamp_min passes
    # the gradient at its bound
    Boundary("xlogy_at_0", lambda m, x: m.xlogy(x, m.tensor([0.0, 2.0], dtype=m.float64)),
             ([0.0, 0.0],), ([0.0, float(np.log(2.0))],)),
    Boundary("clamp_min_at_bound", lambda m, x: x.clamp_min(0.5), ([0.5, 0.0],), ([1.0, 0.0],)),
    # saturated and large inputs stay finite
    Boundary("sigmoid_large", lambda m, x: x.sigmoid(), ([-800.0, 0.0, 800.0],),
             ([0.0, 0.25, 0.0],)),
    Boundary("tanh_large", lambda m, x: x.tanh(), ([-50.0, 0.0, 50.0],), ([0.0, 1.0, 0.0],)),
    Boundary("softmax_large", lambda m, x: (x.softmax(0) * m.tensor([1.0, 2.0, 3.0],
                                                                   dtype=m.float64)).sum(),
             ([1000.0, 1000.0, -1000.0],), ([-0.25, 0.25, 0.0],)),
    Boundary("cross_entropy_large", lambda m, x: nnf(m).cross_entropy(x, m.tensor([0])),
             ([[1000.0, 0.0]],), ([[0.0, 0.0]],)),
    # where: the unpicked branch gets exactly zero, even where it is infinite
    Boundary("where_zero_branch", lambda m, x: m.where(x > 0, x, x * 0.0),
             ([1.0, 0.0, -1.0],), ([1.0, 0.0, 0.0],)),
]


@pytest.mark.parametrize("b", BOUNDARIES, ids=[b.name for b in BOUNDARIES])
def test_boundary_vs_torch(b, torch):
    arrays = [np.array(v, dtype=np.float64) for v in b.values]
    rg_in = leaves(retrograd, arrays, "float64")
    th_in = leaves(torch, arrays, "float64")
    with np.errstate(divide="ignore", invalid="ignore"):
        rg_out = b.fn(retrograd, *rg_in)
        th_out = b.fn(torch, *th_in)
        check_same(rg_out, th_out, TOL["float64"], f"{b.name} value")
        rg_out.backward(retrograd.ones_like(rg_out))
        th_out.backward(torch.ones_like(th_out))
    for i, (r, t, want) in enumerate(zip(rg_in, th_in, b.expect)):
        check_same(r.grad, t.grad, TOL["float64"], f"{b.name} grad {i} vs torch")
        np.testing.assert_allclose(as_numpy(r.grad), np.array(want), rtol=1e-12, atol=1e-12,
                                   err_msg=f"{b.name} grad {i} vs the convention")
