"""Derivatives at nan, inf, zeros and tiny values, fixed by numC (issue 7): the elu family's
second derivative (PyTorch's elu_double_backward), sinc's derivatives where x * x is tiny or
underflows, cumprod's derivatives with zeros, infs and nans.  Fuzz programs that must run
alike in retrograd and PyTorch, and direct comparisons with PyTorch over grids of special
values (values, first and second derivatives, by the input and by the incoming gradient)."""

import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import retrograd  # noqa: E402

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # elu / selu / celu under create_graph with nan and inf incoming gradients: PyTorch's
    # elu_double_backward multiplies by the mask (x < 0), so gg * g * 0 is nan for x >= 0
    # where g is nan or inf; retrograd's derivative of a where gave 0 there
    "elu_family_double_backward_nan_grad": """
v0 = T.tensor([-1.5, 0.0, -0.0, 2.0, -3.0, 0.5], dtype=T.float64, requires_grad=True)
v1 = T.nn.functional.elu(v0, alpha=0.7)
v2 = T.nn.functional.selu(v0)
v3 = T.nn.functional.celu(v0, alpha=1.3)
v4 = T.tensor([1.0, 0.0, 1.0, 1.0, -1.0, 0.0], dtype=T.float64).log().neg()
v5 = T.tensor([0.0, 1.0, 2.0, 0.0, 1.0, 2.0], dtype=T.float64) / v4.abs().detach() + v4
gs = T.autograd.grad((v1 * v5).sum() + (v2 * v5).sum() + (v3 * v5).sum(), [v0], create_graph=True)
loss2 = sum((g * 0.75).sum() for g in gs)
loss2.backward()
""",
    # the in-place forms differentiate from the result: gg * g * input_scale * (r < 0), so
    # an inf gradient at r = 0 gives nan (retrograd stopped the derivative there: 0)
    "elu_family_inplace_double_backward_inf_grad": """
v0 = T.tensor([[-1.5, 0.0], [2.0, -3.0]], dtype=T.float32, requires_grad=True)
v1 = v0 * 1.0
v2 = T.nn.functional.elu(v1, alpha=0.7, inplace=True)
v3 = v0 * 2.0
v4 = T.nn.functional.celu(v3, alpha=1.3, inplace=True)
v5 = v0 * 0.5
v6 = T.nn.functional.selu(v5, inplace=True)
v7 = T.tensor([[1.0, 1.0], [1.0, 2.0]], dtype=T.float32) / T.tensor([[1.0, 0.0], [0.0, 1.0]])
gs = T.autograd.grad((v2 * v7).sum() + (v4 * v7).sum() + (v6 * v7).sum(), [v0], create_graph=True)
loss2 = sum((g * 0.75).sum() for g in gs)
loss2.backward()
""",
    # sinc's derivative is g * (quotient), PyTorch's order: where x * x is subnormal the
    # derivative by g is 0 / tiny = 0, not (g * 0) / tiny -> inf * 0 = nan; and near 0 its
    # second derivative follows PyTorch's order of summing the three gradients reaching
    # pi * x (sin's first): 0 at 1e-20, not -pi^2
    "sinc_tiny_double_backward": """
v0 = T.tensor([1e-160, -1e-160, 1e-20, 0.0, 0.5, 1e-200], dtype=T.float64, requires_grad=True)
v1 = T.tensor([1.0, 2.0, -1.0, 1.0, 1.0, 3.0], dtype=T.float64, requires_grad=True)
v2 = T.sinc(v0)
gs = T.autograd.grad((v2 * v1).sum(), [v0], create_graph=True)
loss2 = sum((g * 0.75).sum() for g in gs)
loss2.backward()
""",
    "sinc_tiny_double_backward_float32": """
v0 = T.tensor([1e-20, -1e-20, 1e-5, 0.0, 1e-23], dtype=T.float32, requires_grad=True)
v1 = T.tensor([1.0, 2.0, -1.0, 1.0, 3.0], dtype=T.float32, requires_grad=True)
v2 = T.sinc(v0)
gs = T.autograd.grad((v2 * v1).sum(), [v0], create_graph=True)
loss2 = sum((g * 0.75).sum() for g in gs)
loss2.backward()
""",
    # cumprod with zeros under create_graph: PyTorch's O(n^2) loop (prod(x[:k]) *
    # cumprod(x[k+1:]) per k, written into slices: CopySlices), whose derivatives meet an
    # inf after a zero as 0 * inf = nan where retrograd's running products did not
    "cumprod_zeros_inf_double_backward": """
v0 = T.tensor([[2.0, 1.0, 0.0, 3.0], [0.0, -1.0, 1.0, 0.0], [1.5, 0.0, 0.5, -2.0]], dtype=T.float64)
v1 = T.tensor([[1.0, 0.0, 1.0, 1.0], [1.0, 1.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0]], dtype=T.float64)
v2 = (v0 / v1).requires_grad_()
v3 = v2.cumprod(1)
v4 = T.tensor([[1.0, -0.5, 2.0, 1.0], [0.5, 1.0, 1.0, -1.0], [1.0, 1.0, 2.0, 0.5]], dtype=T.float64)
gs = T.autograd.grad((v3 * v4).sum(), [v2], create_graph=True)
loss2 = sum((g * 0.75).sum() for g in gs)
loss2.backward()
""",
    # the first-order masked formula: the gradient is masked after the running product of
    # (z1, z2), so an inf there meets a 0 (nan), as in PyTorch
    "cumprod_zeros_inf_first_order": """
v0 = T.tensor([[0.0, 1.0, 0.0, 5.0], [0.0, 2.0, 0.0, 1.0], [3.0, 0.0, -1.0, 1.0]], dtype=T.float64)
v1 = T.tensor([[1.0, 0.0, 1.0, 1.0], [1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 1.0]], dtype=T.float64)
v2 = (v0 / v1).requires_grad_()
v3 = T.cumprod(v2, dim=1)
loss = (v3 * T.tensor([1.0, 2.0, 0.5, -1.0], dtype=T.float64)).sum()
loss.backward()
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_numc(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)


# ---------------------------------------------------------------- direct comparisons
NAN, INF = float("nan"), float("inf")


def _derivatives(lib, fn, x, g, gg, dtype):
    """[y, dy/dx . g, its grad_fn name, d2 by x, d2 by g] (create_graph)."""
    dt = getattr(lib, dtype)
    a = lib.tensor(x, dtype=dt, requires_grad=True)
    gt = lib.tensor(g, dtype=dt, requires_grad=True)
    y = fn(lib, a)
    (d,) = lib.autograd.grad(y, a, gt, create_graph=True)
    name = d.grad_fn.name().replace("torch::autograd::", "") if d.grad_fn else None
    out = [y, d, name]
    if d.requires_grad:
        out += list(lib.autograd.grad(d, [a, gt], lib.tensor(gg, dtype=dt),
                                      allow_unused=True))
    return out


def _assert_alike(fn, x, g, gg, dtype, what, rtol=None):
    with np.errstate(all="ignore"):
        want = _derivatives(torch, fn, x, g, gg, dtype)
        got = _derivatives(retrograd, fn, x, g, gg, dtype)
    assert len(want) == len(got), what
    for k, (t, r) in enumerate(zip(want, got)):
        if isinstance(t, str) or t is None or r is None:
            assert t == r, f"{what} [{k}]: torch {t}, retrograd {r}"
            continue
        a, b = t.detach().numpy(), r.detach().numpy()
        assert a.dtype == b.dtype, what
        tol = rtol or (1e-5 if dtype == "float32" else 1e-12)
        np.testing.assert_allclose(b, a, rtol=tol,
                                   atol=0, equal_nan=True, err_msg=f"{what} [{k}]")


def _elu_family(name, inplace):
    def fn(lib, a):
        f = lib.nn.functional
        b = a * 1.0 if inplace else a
        if name == "elu":
            return f.elu(b, alpha=0.7, inplace=inplace)
        if name == "elu_default":
            return f.elu(b, inplace=inplace)
        if name == "selu":
            return f.selu(b, inplace=inplace)
        return f.celu(b, alpha=1.3, inplace=inplace)
    return fn


# no nan input: PyTorch's elu_backward at a nan x depends on the element's position
# (vectorized body: nan; scalar tail: g * scale); see known_bugs._elu_nan_input_position
_ELU_X = [-2.0, -0.0, 0.0, 1.5, INF, -INF, 5e-324, -5e-324, -1e-310, 80.0, -80.0, 700.0,
          -700.0, -1e-40]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("name", ["elu", "elu_default", "selu", "celu"])
def test_elu_family_second_derivatives_at_special_values_match_torch(name, inplace, dtype):
    fn = _elu_family(name, inplace)
    n = len(_ELU_X)
    for g, gg in itertools.product([1.0, NAN, INF, -INF, 0.0], [1.0, NAN, INF, 0.0]):
        _assert_alike(fn, _ELU_X, [g] * n, [gg] * n, dtype, f"{name} g={g} gg={gg}")


def test_elu_family_third_derivative_matches_torch():
    for name, inplace in itertools.product(["elu", "selu", "celu"], [False, True]):
        fn = _elu_family(name, inplace)
        got = []
        for lib in (torch, retrograd):
            a = lib.tensor(_ELU_X[:4] + [-1.0, 0.3], dtype=lib.float64, requires_grad=True)
            g = lib.tensor([1.0, NAN, 2.0, INF, -0.5, 1.0], dtype=lib.float64,
                           requires_grad=True)
            (d,) = lib.autograd.grad(fn(lib, a), a, g, create_graph=True)
            (d2,) = lib.autograd.grad(d.sum(), a, create_graph=True)
            with np.errstate(all="ignore"):
                d3 = lib.autograd.grad(d2.sum(), [a, g], allow_unused=True)
            got.append([None if t is None else t.detach().numpy() for t in d3])
        for t, r in zip(*got):
            assert (t is None) == (r is None), name
            if t is not None:
                np.testing.assert_allclose(r, t, rtol=1e-12, equal_nan=True, err_msg=name)


_SINC_X = {"float64": [0.0, -0.0, 1e-160, -1e-160, 1e-200, 5e-324, 1e-154, 1.5e-154, 1e-20,
                       1e-8, 1e-5, 0.5, 1.0, -3.0, 1e300, INF, -INF, NAN, 1e-100],
           "float32": [0.0, -0.0, 1e-20, -1e-20, 1e-23, 1e-45, 1e-38, 1e-19, 1e-10, 1e-5,
                       1e-3, 0.5, 1.0, -3.0, 1e30, INF, -INF, NAN, 3e-4]}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_sinc_derivatives_at_tiny_and_special_values_match_torch(dtype):
    """One element at a time (PyTorch's scalar kernels, whose sin/cos retrograd's float32
    derivative rounds as they do)."""
    for x in _SINC_X[dtype]:
        for g, gg in [(1.0, 1.0), (NAN, 1.0), (INF, 1.0), (0.0, 1.0), (1.0, NAN), (-2.0, INF)]:
            _assert_alike(lambda lib, a: lib.sinc(a), [x], [g], [gg], dtype,
                          f"sinc x={x} g={g} gg={gg}")


def test_sinc_second_derivative_near_zero_matches_torch_float64():
    """sinc''s quotient cancels to all its digits near 0: the second derivative there is
    decided by the order PyTorch's engine sums the gradients reaching pi * x."""
    x = [10.0 ** -e for e in range(1, 170, 7)] + [-(10.0 ** -e) for e in range(3, 40, 9)]
    _assert_alike(lambda lib, a: lib.sinc(a), x, [1.5] * len(x), [1.0] * len(x), "float64",
                  "sinc near 0")


_CUMPROD_SPECIAL = [0.0, -0.0, INF, -INF, NAN, 1.5, -2.0, 0.5, 1e-300, 1e300, 5e-324, 3.0,
                    -1.0]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_cumprod_derivatives_with_zeros_inf_nan_match_torch(dtype):
    rng = np.random.default_rng(7)
    shapes = [(2, 4), (3, 3), (5,), (1, 3), (4,)]
    for it in range(60):
        shape = shapes[it % len(shapes)]
        x = rng.choice(_CUMPROD_SPECIAL, size=shape).tolist()
        g = rng.choice([1.0, -0.5, 2.0, 0.0, NAN, INF] if it % 3 == 0 else [1.0, -0.5, 2.0],
                       size=shape).tolist()
        gg = rng.choice([1.0, -0.5, 2.0, 0.0, NAN, INF] if it % 3 == 1 else [1.0, 2.0],
                        size=shape).tolist()
        for dim in (0, -1):
            _assert_alike(lambda lib, a, d=dim: lib.cumprod(a, d), x, g, gg, dtype,
                          f"cumprod dim={dim} x={x} g={g} gg={gg}")
            # the first-order path (no create_graph) has its own formula with zeros
            got = []
            for lib in (torch, retrograd):
                a = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
                with np.errstate(all="ignore"):
                    (d,) = lib.autograd.grad(lib.cumprod(a, dim), a,
                                             lib.tensor(g, dtype=getattr(lib, dtype)))
                got.append(d.numpy())
            np.testing.assert_allclose(got[1], got[0], rtol=1e-5, equal_nan=True,
                                       err_msg=f"first order cumprod x={x} g={g}")


def _activation(name):
    def fn(lib, a):
        f = lib.nn.functional
        if name == "softplus":
            return f.softplus(a, beta=2.0, threshold=5.0)
        if name == "softplus_default":
            return f.softplus(a)
        return getattr(f, name)(a)
    return fn


# softplus: PyTorch's softplus_double_backward is a product with the mask beta * x <
# threshold (nan above it for an inf/nan gradient; the first derivative is g * z / (z + 1));
# (a threshold above ~709 / beta: PyTorch's forward log1p(exp(beta * x)) overflows to inf
# there, retrograd's is exact, and so is its slope, where PyTorch's is inf / inf = nan);
# hardswish: its first derivative is its own record (HardswishBackwardBackward0), so the
# derivative by g at +-inf is the slope, not inf * 0; mish: PyTorch's composite derivative
# with log1p(exp(x)), whose own derivative at x > 709 meets exp's inf
_ACT_X = [0.0, -0.0, 3.0, -3.0, 2.5, 20.0, 10.0, -1.0, 1e-310, INF, -INF, 800.0, -800.0, 1e300]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", ["softplus", "softplus_default", "hardswish", "mish"])
def test_activation_second_derivatives_at_special_values_match_torch(name, dtype):
    fn = _activation(name)
    for x in _ACT_X:  # (one element: PyTorch's scalar kernels; no nan input, see below)
        for g, gg in [(1.0, 1.0), (NAN, 1.0), (INF, 2.0), (-2.0, NAN), (0.5, INF), (0.0, 1.0)]:
            # (mish's 1 - tanh(sp)^2 cancels near t = 1: the fuzzer's tolerances)
            _assert_alike(fn, [x], [g], [gg], dtype, f"{name} x={x} g={g} gg={gg}",
                          rtol=2e-4 if dtype == "float32" else 1e-6)


_NAN_INPUT = """
v0 = T.tensor([0.0, 1.0, -1.0], dtype=T.float64, requires_grad=True)
v1 = v0 / v0.detach()
v2 = T.nn.functional.OP(v1)
loss = (v2 * T.tensor([1.0, 2.0, 3.0], dtype=T.float64)).sum()
loss.backward()
"""


_NAN_INPUT_LONG = _NAN_INPUT.replace("[0.0, 1.0, -1.0]", "[0.0] + [1.0] * 32").replace(
    "[1.0, 2.0, 3.0]", "[1.0] * 33")


@pytest.mark.parametrize("op", ["elu", "selu", "celu", "hardswish"])
def test_nan_input_position_is_accepted_narrowly(op):
    """PyTorch's elu_backward at a nan input: g * scale in its scalar tail (all of a
    3-element tensor), nan in its vectorized body (retrograd's answer everywhere);
    hardswish_backward: nan in the vectorized body (the first 32 float64 elements of 33,
    with AVX2 or AVX-512),
    where retrograd passes g as the scalar tail does."""
    from . import known_bugs as kb
    from .runner import Failure

    text = _NAN_INPUT_LONG if op == "hardswish" else _NAN_INPUT
    prog = program_from_text(text.replace("OP", op))
    failure = compare(prog)
    assert failure is not None and failure.kind == "grad" and "nan" in failure.message
    assert kb._nan_input_position(prog, failure)
    # (no nan reaches the op: the same difference would be a bug)
    plain = program_from_text(text.replace("OP", op).replace(
        "v1 = v0 / v0.detach()", "v1 = v0 * 2.0"))
    assert compare(plain) is None
    assert not kb._nan_input_position(plain, failure)
    # (a difference without a nan on either side is not this one)
    other = Failure("grad", "", "v0.grad: values differ\n  torch     [1.0, 2.0, 3.0]\n"
                    "  retrograd [1.5, 2.0, 3.0]")
    assert not kb._nan_input_position(prog, other)
    # (an op whose nan derivative does not depend on the position)
    silu = program_from_text(_NAN_INPUT.replace("OP", "silu"))
    assert not kb._nan_input_position(silu, failure)
