"""Op tests, activation: nn.functional activations (ops/activation.py, activation_more.py).

One table of cases; ``case_checks`` runs every check on every case (float64 gradcheck and
gradgradcheck, values and gradients against PyTorch in float32 and float64, the grad_fn
name and the whole graph's shape): see ``tests/ops/helpers.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

from .helpers import Case, case_checks, nnf

CASES: list[Case] = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


case("F.leaky_relu", lambda m, a: nnf(m).leaky_relu(a, 0.2), ((3, 4),), "nonzero")
case("F.leaky_relu_default", lambda m, a: nnf(m).leaky_relu(a), ((3, 4),), "nonzero")
case("F.softplus", lambda m, a: nnf(m).softplus(a), ((3, 4),))
case("F.softplus_beta", lambda m, a: nnf(m).softplus(a * 10, beta=2, threshold=5), ((3, 4),))
case("F.silu", lambda m, a: nnf(m).silu(a), ((3, 4),))
case("F.elu", lambda m, a: nnf(m).elu(a, alpha=0.7), ((3, 4),), "nonzero")
case("F.logsigmoid", lambda m, a: nnf(m).logsigmoid(a * 5), ((3, 4),))
case("F.hardtanh", lambda m, a: nnf(m).hardtanh(a * 2, -1.5, 1.0), ((3, 4),))
case("F.relu6", lambda m, a: nnf(m).relu6(a * 8), ((3, 4),))
case("F.gelu", lambda m, a: nnf(m).gelu(a * 2), ((3, 4),))
case("F.gelu_tanh", lambda m, a: nnf(m).gelu(a * 2, approximate="tanh"), ((3, 4),))
case("F.relu", lambda m, a: nnf(m).relu(a), ((2, 3),), "nonzero")
case("F.sigmoid", lambda m, a: nnf(m).sigmoid(a), ((2, 3),))
case("F.tanh", lambda m, a: nnf(m).tanh(a), ((2, 3),))


# ----------------------------------------------------------------- issue 8: more activations
# (ops/activation_more.py); values drawn from N(0, 1), scaled where a kink sits further out
case("F.selu", lambda m, a: nnf(m).selu(a), ((3, 4),), "nonzero")
case("selu", lambda m, a: m.selu(a), ((3, 4),), "nonzero")
case("F.selu_inplace", lambda m, a: nnf(m).selu(a * 1, inplace=True), ((3, 4),), "nonzero")
case("F.selu_", lambda m, a: nnf(m).selu_(a * 1), ((3, 4),), "nonzero")
case("F.celu", lambda m, a: nnf(m).celu(a, 0.7), ((3, 4),), "nonzero")
case("celu", lambda m, a: m.celu(a), ((3, 4),), "nonzero")
case("F.celu_inplace", lambda m, a: nnf(m).celu(a * 1, 1.5, True), ((3, 4),), "nonzero")
case("celu_", lambda m, a: m.celu_(a * 1, alpha=2.0), ((3, 4),), "nonzero")
case("F.glu", lambda m, a: nnf(m).glu(a), ((3, 4),))
case("F.glu_dim", lambda m, a: nnf(m).glu(a, 0), ((4, 2, 3),))
case("F.prelu", lambda m, a, w: nnf(m).prelu(a, w), ((2, 3, 4), (3,)), "nonzero")
case("prelu_one_weight", lambda m, a, w: m.prelu(a, w), ((2, 3), (1,)), "nonzero")
case("prelu_0d_weight", lambda m, a, w: m.prelu(a, w), ((2, 3), ()), "nonzero")
case("Tensor.prelu_1d", lambda m, a, w: a.prelu(w), ((4,), (1,)), "nonzero")
case("F.rrelu", lambda m, a: nnf(m).rrelu(a), ((3, 4),), "nonzero")
case("F.rrelu_fixed_training", lambda m, a: nnf(m).rrelu(a, 0.2, 0.2, True), ((3, 4),),
     "nonzero")
case("F.rrelu_inplace", lambda m, a: nnf(m).rrelu(a * 1, 0.1, 0.3, False, True), ((3, 4),),
     "nonzero")
case("rrelu", lambda m, a: m.rrelu(a, 0.1, 0.5), ((3, 4),), "nonzero")
case("rrelu_", lambda m, a: m.rrelu_(a * 1), ((3, 4),), "nonzero")
case("F.rrelu_", lambda m, a: nnf(m).rrelu_(a * 1, 0.3, 0.3, True), ((3, 4),), "nonzero")
# PyTorch has no second derivative of hardsigmoid (its derivative is a NotImplemented node that
# raises): retrograd raises alike (tests/ops/test_derivative_flags.py)
_NO_SECOND = {"gradgradcheck": "derivative for aten::hardsigmoid_backward is not implemented, "
                               "as in PyTorch"}
case("F.hardsigmoid", lambda m, a: nnf(m).hardsigmoid(a * 4), ((3, 4),), xfail=_NO_SECOND)
case("F.hardsigmoid_inplace", lambda m, a: nnf(m).hardsigmoid(a * 4, True), ((3, 4),),
     xfail=_NO_SECOND)
case("F.hardswish", lambda m, a: nnf(m).hardswish(a * 4), ((3, 4),))
case("F.hardswish_inplace", lambda m, a: nnf(m).hardswish(a * 4, inplace=True), ((3, 4),))
case("F.mish", lambda m, a: nnf(m).mish(a * 3), ((3, 4),))
case("F.mish_inplace", lambda m, a: nnf(m).mish(a * 1, True), ((3, 4),))
case("F.softsign", lambda m, a: nnf(m).softsign(a), ((3, 4),))
case("F.tanhshrink", lambda m, a: nnf(m).tanhshrink(a), ((3, 4),))
case("F.threshold", lambda m, a: nnf(m).threshold(a, 0.5, -2.0), ((3, 4),))
case("threshold", lambda m, a: m.threshold(a, -0.5, 3.0), ((3, 4),))
case("F.threshold_inplace", lambda m, a: nnf(m).threshold(a * 1, 0.1, 2.0, True), ((3, 4),))
case("F.threshold_", lambda m, a: nnf(m).threshold_(a * 1, 0.1, 2.0), ((3, 4),))
case("threshold_", lambda m, a: m.threshold_(a * 1, 0.0, -1.0), ((3, 4),))
case("F.softshrink", lambda m, a: nnf(m).softshrink(a), ((3, 4),))
case("F.softshrink_lambd", lambda m, a: nnf(m).softshrink(a, lambd=1.0), ((3, 4),))
case("F.hardshrink", lambda m, a: nnf(m).hardshrink(a), ((3, 4),))
case("hardshrink", lambda m, a: m.hardshrink(a, 1.0), ((3, 4),))
case("Tensor.hardshrink", lambda m, a: a.hardshrink(), ((3, 4),))
case("F.softmin", lambda m, a: nnf(m).softmin(a, 1), ((3, 4),))
case("F.softmin_dtype", lambda m, a: nnf(m).softmin(a, 0, dtype=m.float64), ((3, 4),))
case("F.relu_", lambda m, a: nnf(m).relu_(a * 1), ((3, 4),), "nonzero")
case("F.elu_", lambda m, a: nnf(m).elu_(a * 1, 0.5), ((3, 4),), "nonzero")
case("F.leaky_relu_", lambda m, a: nnf(m).leaky_relu_(a * 1, 0.2), ((3, 4),), "nonzero")
case("F.hardtanh_", lambda m, a: nnf(m).hardtanh_(a * 2, -1.0, 1.5), ((3, 4),))

(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


# ----------------------------------------------------------------- kinks: first and second
# derivatives at the boundary points, as PyTorch's kernels give them
KINKS = [
    ("selu", lambda m, x: nnf(m).selu(x), [0.0, -1.0, 1.0]),
    ("celu", lambda m, x: nnf(m).celu(x, 0.5), [0.0, -1.0, 1.0]),
    ("selu_", lambda m, x: nnf(m).selu_(x * 1), [0.0, -1.0, 1.0]),
    ("celu_", lambda m, x: nnf(m).celu_(x * 1), [0.0, -1.0, 1.0]),
    ("prelu", lambda m, x: nnf(m).prelu(x, m.tensor([0.25], dtype=x.dtype)), [0.0, -1.0, 1.0]),
    ("rrelu", lambda m, x: nnf(m).rrelu(x), [0.0, -1.0, 1.0]),
    ("rrelu_", lambda m, x: nnf(m).rrelu_(x * 1), [0.0, -1.0, 1.0]),
    ("hardsigmoid", lambda m, x: nnf(m).hardsigmoid(x), [-3.0, 3.0, 0.0, -4.0, 4.0]),
    ("hardswish", lambda m, x: nnf(m).hardswish(x), [-3.0, 3.0, 0.0, -4.0, 4.0]),
    ("threshold", lambda m, x: nnf(m).threshold(x, 0.5, 2.0), [0.5, 0.0, 1.0]),
    ("threshold_", lambda m, x: nnf(m).threshold_(x * 1, 0.5, 2.0), [0.5, 0.0, 1.0]),
    ("softshrink", lambda m, x: nnf(m).softshrink(x, 0.5), [-0.5, 0.5, 0.0, 1.0, -1.0]),
    ("hardshrink", lambda m, x: nnf(m).hardshrink(x, 0.5), [-0.5, 0.5, 0.0, 1.0, -1.0]),
    ("mish", lambda m, x: nnf(m).mish(x), [0.0, -30.0, 30.0]),
]


@pytest.mark.parametrize("name,fn,points", KINKS, ids=[k[0] for k in KINKS])
def test_derivatives_at_kinks_match_torch(torch, name, fn, points):
    got = []
    for m in (retrograd, torch):
        x = m.tensor(points, dtype=m.float64, requires_grad=True)
        (g,) = m.autograd.grad(fn(m, x).sum(), x, create_graph=True)
        try:
            gg = (m.autograd.grad(g.sum(), x, allow_unused=True)[0] if g.requires_grad
                  else None)
            gg = np.zeros(len(points)) if gg is None else gg.numpy()
        except RuntimeError as e:  # hardsigmoid: no second derivative, in either library
            assert "not implemented" in str(e)
            gg = None
        got.append((g.detach().numpy(), gg))
    (g, gg), (tg, tgg) = got
    np.testing.assert_array_equal(g, tg)
    assert (gg is None) == (tgg is None)  # both raise, or neither
    if tgg is not None:
        np.testing.assert_allclose(gg, tgg, rtol=1e-14, atol=1e-300)


def test_rrelu_training_draws_slopes_and_backward_uses_them():
    x = retrograd.tensor([-1.0, -2.0, 3.0, -4.0] * 50, requires_grad=True)
    retrograd.manual_seed(5)
    y = nnf(retrograd).rrelu(x, 0.1, 0.3, training=True)
    retrograd.manual_seed(5)
    again = nnf(retrograd).rrelu(x, 0.1, 0.3, training=True)
    np.testing.assert_array_equal(y.detach().numpy(), again.detach().numpy())  # seeded
    slopes = y.detach().numpy() / x.detach().numpy()
    neg = x.detach().numpy() < 0
    assert np.all(slopes[~neg] == 1)
    assert np.all((slopes[neg] >= 0.1) & (slopes[neg] <= 0.3))
    assert len(np.unique(slopes[neg])) > 100  # one slope per element
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), slopes, rtol=1e-6)  # the same slopes


def test_docstring_examples_run():
    import doctest

    from retrograd.ops import activation_more

    assert doctest.testmod(activation_more, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0


_SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.0, float("inf"), float("-inf"), float("nan"), 3.0, -3.0,
            0.5, -0.5, 40.0, -40.0]


@pytest.mark.parametrize("name,fn,points", KINKS, ids=[k[0] for k in KINKS])
def test_values_and_derivatives_at_inf_nan_and_zeros_match_torch(torch, name, fn, points):
    """Values at +-0, +-inf and nan (nan where PyTorch gives nan); first derivatives at all
    but nan (PyTorch's own kernels disagree there between float32 and float64)."""
    got = []
    for m in (retrograd, torch):
        x = m.tensor(_SPECIAL, dtype=m.float64, requires_grad=True)
        with np.errstate(all="ignore"):
            y = fn(m, x)
            (g,) = m.autograd.grad(y.sum(), x)
        got.append((y.detach().numpy(), g.numpy()))
    (y, g), (ty, tg) = got
    np.testing.assert_allclose(y, ty, rtol=1e-14)  # (nan where torch has nan)
    finite = ~np.isnan(_SPECIAL)
    np.testing.assert_allclose(g[finite], tg[finite], rtol=1e-14)
