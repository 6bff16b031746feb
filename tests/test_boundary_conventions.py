"""Values and derivatives at the points random inputs never hit: 0, -0, +-inf, nan, ties,
zeros in a product, and an inf gradient arriving from above.

Each op's convention is written next to the op (ops/pointwise.py, binary.py, activation.py,
reduce.py, stats.py); here every one is checked against PyTorch 2.13 -- the value, the first
derivatives and all second derivatives (``create_graph=True``) -- nan where PyTorch gives
nan, a number where it gives a number.
"""

import math
import warnings

import numpy as np
import pytest

import retrograd as R

torch = pytest.importorskip("torch")

INF, NAN = math.inf, math.nan
POINTS = [0.0, -0.0, 1.0, -1.0, 2.0, INF, -INF, NAN]


def _np(lib, t, like):
    if t is None:
        return np.zeros(tuple(like.shape))
    if lib is torch and t._is_zerotensor():  # abs's second derivative is a ZeroTensor
        return np.zeros(tuple(t.shape))
    return t.detach().numpy()


def _derivatives(lib, fn, arrays):
    """The value, the gradient of ``sum(out)`` for each input, and the gradient of each
    gradient's sum for each input."""
    xs = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(lib, *xs)
        first = lib.autograd.grad(out.sum(), xs, create_graph=True, allow_unused=True)
        results = [("value", out.detach().numpy())]
        results += [(f"d/dx{i}", _np(lib, g, x)) for i, (g, x) in enumerate(zip(first, xs))]
        for i, g in enumerate(first):
            if g is None or not g.requires_grad:
                continue  # constant: all its second derivatives are zero (checked by torch's)
            second = lib.autograd.grad(g.sum(), xs, retain_graph=True, allow_unused=True)
            results += [(f"d2/dx{i}dx{j}", _np(lib, h, x))
                        for j, (h, x) in enumerate(zip(second, xs))]
    return dict(results)


def _check(fn, arrays):
    # 8 copies: PyTorch's CPU kernels treat nan differently in their vectorised body and
    # their scalar tail (hardtanh, elu); the body is what a real tensor mostly meets
    arrays = [np.tile(np.asarray(a, dtype=np.float64), 8) for a in arrays]
    want = _derivatives(torch, fn, arrays)
    got = _derivatives(R, fn, arrays)
    for key, expected in want.items():
        # a derivative retrograd records as constant must be zero in torch too
        actual = got.get(key, np.zeros_like(expected))
        np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-12, equal_nan=True,
                                   err_msg=f"{key} at {arrays}")


UNARY = {
    "sqrt": lambda lib, x: lib.sqrt(x),
    "abs": lambda lib, x: lib.abs(x),
    "sign": lambda lib, x: lib.sign(x),  # sign(nan) = 0, sign' = zeros
    "sign_times_x": lambda lib, x: lib.sign(x) * x,
    "log": lambda lib, x: lib.log(x),
    "relu": lambda lib, x: lib.relu(x),  # relu'(0) = 0, nan passes g
    "rsqrt_relu_sq": lambda lib, x: lib.rsqrt(lib.relu(x) ** 2),  # issue 7: 0, not nan, at x <= 0
    "square": lambda lib, x: x ** 2,
    "cube": lambda lib, x: x ** 3,
    "pow_0": lambda lib, x: x ** 0,
    "pow_half": lambda lib, x: x ** 0.5,
    "pow_minus_half": lambda lib, x: x ** -0.5,  # rsqrt: -inf at -0.0
    "pow_minus_one": lambda lib, x: x ** -1,
    "pow_2_5": lambda lib, x: x ** 2.5,
    "two_pow": lambda lib, x: 2 ** x,
    "zero_pow": lambda lib, x: 0 ** x,
    "rdiv": lambda lib, x: 1 / x,
    "clamp": lambda lib, x: lib.clamp(x, -1, 1),
    "clamp_min": lambda lib, x: lib.clamp(x, min=0),
    "hardtanh": lambda lib, x: lib.nn.functional.hardtanh(x),  # 0 at the bounds and at nan
    "elu": lambda lib, x: lib.nn.functional.elu(x, alpha=2.0),  # elu'(0) = alpha, elu''(0) = 0
    "leaky_relu": lambda lib, x: lib.nn.functional.leaky_relu(x),
    "round_times_x": lambda lib, x: lib.round(x) * x,  # round' = zeros, even for an inf g
    "floor_times_x": lambda lib, x: lib.floor(x) * x,
    "std_flat": lambda lib, x: lib.stack([x, x * 2]).std(0),  # std' = 0 where std == 0
    "max": lambda lib, x: lib.max(x),
    "min": lambda lib, x: lib.min(x),
    "max_dim": lambda lib, x: lib.max(lib.stack([x, x * 0.5]), 0)[0],
    "amax": lambda lib, x: lib.amax(lib.stack([x, x * 0.5]), 0),
    "tanh": lambda lib, x: lib.tanh(x),
    "sigmoid": lambda lib, x: lib.sigmoid(x),
    "exp": lambda lib, x: lib.exp(x),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_at_boundary_points(name):
    _check(UNARY[name], [POINTS])  # elementwise ops: every point at once; reductions: all


@pytest.mark.parametrize("name", ["max", "min", "amax", "max_dim", "sign_times_x"])
@pytest.mark.parametrize("point", POINTS)
def test_reductions_at_each_point_alone(name, point):
    _check(UNARY[name], [[point, 1.0, point]])  # ties, and a nan among numbers


# Elementwise ops of two tensors, over every pair of boundary points at once.
BINARY = {
    "atan2": lambda lib, a, b: lib.atan2(a, b),  # 0 for both at (0, 0) (issue 7)
    "hypot": lambda lib, a, b: lib.hypot(a, b),
    "div": lambda lib, a, b: a / b,  # d/db = -g * ((a / b) / b): inf, not nan, at b == 0
    "mul": lambda lib, a, b: a * b,
    "pow": lambda lib, a, b: a ** b,
    "xlogy": lambda lib, a, b: lib.xlogy(a, b),
    "maximum": lambda lib, a, b: lib.maximum(a, b),  # ties split, nan gives g to both
    "minimum": lambda lib, a, b: lib.minimum(a, b),
    "logaddexp": lambda lib, a, b: lib.logaddexp(a, b),  # g / (1 + exp(b - a))
    "clamp_tensor_min": lambda lib, a, b: lib.clamp(a, b),
    "clamp_tensor_both": lambda lib, a, b: lib.clamp(a * 0.5, b, b + 1),
    "where": lambda lib, a, b: lib.where(a > 0, a, b),
    "lerp": lambda lib, a, b: lib.lerp(a, b, 0.5),  # two-sided formula: lerp(inf, 0, .5) = inf
    "lerp_small_weight": lambda lib, a, b: lib.lerp(a, b, 0.25),
    "remainder": lambda lib, a, b: lib.remainder(a, b),
    "sub": lambda lib, a, b: a - b,
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_at_boundary_points(name):
    a, b = zip(*[(p, q) for p in POINTS for q in POINTS])
    _check(BINARY[name], [a, b])


# An inf (or nan) gradient from above must not leak as nan into the elements whose
# derivative is exactly 0 (PyTorch masks or uses where; g * mask would give inf * 0 = nan).
INF_GRAD = {
    "relu": lambda lib, x: lib.relu(x) * INF,
    "clamp": lambda lib, x: lib.clamp(x, -1, 1) * INF,
    "clamp_tensor": lambda lib, x: lib.clamp(x, lib.zeros(()), lib.ones(())) * INF,
    "where": lambda lib, x: lib.where(x > 0, x, x * 2) ** 2 * INF,
    "maximum": lambda lib, x: lib.maximum(x, lib.zeros(())) * INF,
    "max": lambda lib, x: lib.max(x) * INF,
    "sign": lambda lib, x: lib.sign(x) * INF,
    "round": lambda lib, x: lib.round(x) * INF,
    "hardtanh": lambda lib, x: lib.nn.functional.hardtanh(x) * INF,
    "masked_fill": lambda lib, x: (x * 1).masked_fill(x > 1, lib.tensor(3.0)) * INF,
    "xlogy": lambda lib, x: lib.xlogy(x, x - 1) * INF,
    "pow_0": lambda lib, x: (x ** 0) * INF,
}


@pytest.mark.parametrize("name", sorted(INF_GRAD))
def test_inf_gradient_from_above(name):
    _check(INF_GRAD[name], [[-2.0, -1.0, 0.0, 0.5, 1.0, 2.0]])


# ----------------------------------------------------------------- prod with zeros (issue 6)


def _prod_input(n_zeros, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((5, 5, 5))
    a.reshape(-1)[rng.choice(a.size, n_zeros, replace=False)] = 0
    return a


@pytest.mark.parametrize("n_zeros", [0, 1, 2, 3, 15])
@pytest.mark.parametrize("dim,keepdim", [(None, False), (1, False), (1, True), (-1, True)])
def test_prod_first_and_second_derivatives_with_zeros(n_zeros, dim, keepdim):
    a = _prod_input(n_zeros)

    def derivatives(lib):
        x = lib.tensor(a, requires_grad=True)
        y = x.prod() if dim is None else x.prod(dim, keepdim=keepdim)
        w = lib.tensor(np.linspace(0.5, 1.5, y.numel()).reshape(tuple(y.shape)))
        (g,) = lib.autograd.grad((y * w).sum(), x, create_graph=True)
        v = lib.tensor(np.linspace(-1.0, 1.0, g.numel()).reshape(tuple(g.shape)))
        (h,) = lib.autograd.grad((g * v).sum(), x)
        return g.detach().numpy(), h.numpy()

    for got, want in zip(derivatives(R), derivatives(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("values", [[0.0, 2.0, 3.0], [0.0, 0.0, 3.0], [0.0, 0.0, 0.0],
                                    [1.5, 2.0, 3.0]])
def test_prod_of_a_vector_with_zeros_gradgradcheck(values):
    x = R.tensor(values, dtype=R.float64, requires_grad=True)
    assert R.autograd.gradgradcheck(lambda t: t.prod(), (x,))
    m = R.tensor([values, values[::-1]], dtype=R.float64, requires_grad=True)
    assert R.autograd.gradgradcheck(lambda t: t.prod(1), (m,))


@pytest.mark.parametrize("values", [[0.0, 0.0, INF], [0.0, 2.0, INF], [1.0, 2.0, INF],
                                    [0.0, NAN, 2.0], [0.0, -0.0, 3.0], [2.0, NAN, INF]])
@pytest.mark.parametrize("dim", [None, 1])
def test_prod_with_zeros_and_inf_or_nan_first_order(values, dim):
    # the product of the others, from both ends: 0 * inf is nan where PyTorch's is, and a
    # full prod with two zeros gives zeros (PyTorch's first-order shortcut)
    def grad(lib):
        x = lib.tensor([values, values[::-1]], dtype=lib.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (x.prod() if dim is None else x.prod(dim)).sum().backward()
        return x.grad.numpy()

    np.testing.assert_allclose(grad(R), grad(torch), rtol=1e-12, equal_nan=True)


def test_prod_of_a_0d_tensor_passes_the_gradient():
    for lib in (R, torch):
        x = lib.tensor(INF, dtype=lib.float64, requires_grad=True)
        x.prod().backward()
        assert x.grad.item() == 1.0  # PyTorch returns grad itself (not inf / inf)


@pytest.mark.parametrize("dim", [None, 1])
def test_prod_third_derivative_with_zeros(dim):
    a = np.array([[0.0, 0.0, 2.0, 3.0], [0.0, 1.5, -2.0, 0.5]])
    u = np.arange(8.0).reshape(2, 4)

    def derivatives(lib):
        x = lib.tensor(a, requires_grad=True)
        y = x.prod() if dim is None else x.prod(dim)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (h,) = lib.autograd.grad((g * lib.tensor(u)).sum(), x, create_graph=True)
        (k,) = lib.autograd.grad((h * lib.tensor(u[::-1].copy())).sum(), x)
        return [t.detach().numpy() for t in (g, h, k)]

    for got, want in zip(derivatives(R), derivatives(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-12)
