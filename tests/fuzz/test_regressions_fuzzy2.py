"""Fuzzer findings fixed by fuzzY2 (issue 7, new signatures of stop 21's helper runs): each
program must run alike in retrograd and PyTorch (values, dtypes, shapes, grad_fn names,
gradients, exceptions)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import retrograd  # noqa: E402

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # maximum(0-d float64, float32): PyTorch compares the saved operands in the promoted
    # dtype (float32), where 0.69 and float32's 0.69 tie, so the gradient is split; retrograd
    # compared in float64 and gave all of it to the 0-d operand (seed 16502663)
    "maximum_zero_dim_float64_ties_in_float32": """
v0 = T.tensor([1.82, 0.69, 2.59], dtype=T.float32)
v2 = T.tensor(0.69, dtype=T.float64, requires_grad=True)
v3 = (v2).maximum(v0)
v5 = T.tensor([[[-0.0], [1.0]], [[1.0], [-0.0]]], dtype=T.float64)
v6 = T.where(v5 > 0, v3, 0.0)
v8 = T.tensor([[[-2.0, 1.0, 1.0], [2.0, 0.0, 0.0]], [[0.0, -1.0, -1.0], [0.0, -0.0, -0.0]]],
              dtype=T.float64)
v9 = T.stack([v6, v8], dim=2)
loss = (v9 * v9.detach().tanh()).sum()
loss.backward()
""",
    # -0.0 % 1.5 is -0.0 in PyTorch (its kernel: fmod, then + b where a nonzero rest and b
    # differ in sign, so a zero rest keeps the dividend's sign), 0.0 with NumPy's %; atan2
    # then gave 0 instead of -pi (seed 16463986)
    "remainder_zero_keeps_dividend_sign": """
v1 = T.tensor(-0.0, dtype=T.float64)
v2 = T.round(v1)
v3 = T.tensor(-1.0, dtype=T.float64)
v4 = (v2) % (v3.abs().add(0.5))
v5 = (v4).atan2(v4)
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzy2(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)


def _mixed_dtype_grads(lib, name, create_graph):
    """The gradients of an op of a float32 tensor and a 0-d float64 one whose value equals
    (in float32) one of the tensor's, or which divides the tensor near a multiple."""
    x = lib.tensor([1.82, 0.69, 2.59, 3.0, 0.06], dtype=lib.float32, requires_grad=True)
    s = lib.tensor(0.69 if name not in ("remainder", "fmod") else 0.02, dtype=lib.float64,
                   requires_grad=True)
    if name.startswith("clamp"):
        kw = {"min": s} if name == "clamp_lo" else {"max": s} if name == "clamp_hi" else {
            "min": s, "max": s * 1}
        y = lib.clamp(x, **kw)
    elif name in ("clamp_min", "clamp_max"):
        y = getattr(x, name)(s)
    elif name in ("remainder", "fmod"):
        y = getattr(lib, name)(x, s)
    else:
        y = getattr(lib, name)(s, x)
    grads = lib.autograd.grad(y.sum(), [s, x], create_graph=create_graph)
    return [y.detach().numpy()] + [g.detach().numpy() for g in grads]


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin", "clamp_lo", "clamp_hi",
                                  "clamp_both", "clamp_min", "clamp_max", "remainder",
                                  "fmod"])
def test_derivative_compares_in_promoted_dtype(name, create_graph):
    """Derivatives that compare or floor-divide the saved operands do it in PyTorch's
    promoted dtype (float32 for a float32 tensor and a 0-d float64 one), first order as
    under create_graph (seed 16502663)."""
    want = _mixed_dtype_grads(torch, name, create_graph)
    got = _mixed_dtype_grads(retrograd, name, create_graph)
    for w, g in zip(want, got):
        assert w.dtype == g.dtype, name
        np.testing.assert_array_equal(g, w, err_msg=name)


@pytest.mark.parametrize("mode", ["floor", "trunc"])
def test_div_rounded_in_promoted_dtype(mode):
    """div(rounding_mode=...) of float32 by a 0-d float64 rounds float32's quotient."""
    out = []
    for lib in (torch, retrograd):
        a = lib.tensor([3.0, 1.0, 0.06], dtype=lib.float32)
        b = lib.tensor(0.02, dtype=lib.float64)
        out.append(lib.div(a, b, rounding_mode=mode).numpy())
    np.testing.assert_array_equal(out[1], out[0])


def _remainders(lib, dtype):
    """remainder of every pair of signed zeros, +-inf, nan, small and exact multiples, by a
    tensor, a number, and of a number: the values' signs included."""
    import math
    vals = [-0.0, 0.0, 3.0, -3.0, 1.5, -1.5, 4.5, -4.5, math.inf, -math.inf, math.nan,
            1e-300, -1e-300]
    divs = [1.5, -1.5, 0.0, -0.0, math.inf, -math.inf, math.nan, 3.0, -3.0]
    a = lib.tensor([v for v in vals for _ in divs], dtype=dtype)
    b = lib.tensor([d for _ in vals for d in divs], dtype=dtype)
    c = a.clone()
    c %= b
    return [lib.remainder(a, b), a % 1.5, a % -1.5, lib.remainder(-0.0, b), c]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_remainder_signed_zeros_like_pytorch(dtype):
    """A zero remainder takes the dividend's sign, as PyTorch's fmod-based kernel (seed
    16463986); the rest (nan for a zero divisor, inf divisors) is unchanged."""
    want = _remainders(torch, getattr(torch, dtype))
    got = _remainders(retrograd, getattr(retrograd, dtype))
    for w, g in zip(want, got):
        w, g = w.numpy(), g.numpy()
        assert w.dtype == g.dtype
        np.testing.assert_array_equal(g, w)
        number = ~np.isnan(w)  # (a NaN's sign is unspecified)
        np.testing.assert_array_equal(np.signbit(g[number]), np.signbit(w[number]))


def _annotated(text, ops):
    """A parsed reproducer with the op names the generator gave (``ops``: target -> op) and
    its in-place statements marked as the generator marks them."""
    import re

    prog = program_from_text(text)
    for st in prog.steps:
        m = re.fullmatch(r"(v\d+)\.(\w+_)\(.*\)", st.text)
        if m:
            st.kind, st.on, st.op = "inplace", m.group(1), m.group(2)
        elif st.target in ops:
            st.op = ops[st.target]
    return prog


_ACCEPTED = {
    # (seed 16507591) floor of corrcoef's diagonal: PyTorch's 0.9999999999999999, exact 1
    "_rounding_corrcoef_diagonal": ("""
v1 = T.tensor([[-0.45, 2.7, 2.7], [-1.23, -3.17, -0.55]], dtype=T.float64)
v2 = v1.detach()
v3 = T.corrcoef(v2)
v4 = v3.floor()
""", {"v3": "statistics", "v4": "floor"}),
    # (seed 16464046) sign_ of Q @ R at the 0 it reconstructs: rounding noise in both
    "_sign_of_reconstruction_noise": ("""
v1 = T.tensor([[[0.22, 0.46], [2.01, -0.82]], [[0.71, 0.0], [-0.47, 0.74]]], dtype=T.float64)
v3 = (lambda qr: qr[0] @ qr[1])(T.linalg.qr(v1))
v3.sign_()
""", {"v3": "linalg_square"}),
}


@pytest.mark.parametrize("entry", sorted(_ACCEPTED))
def test_accepted_entry_matches_its_seed(entry):
    from . import known_bugs

    text, ops = _ACCEPTED[entry]
    prog = _annotated(text, ops)
    failure = compare(prog)
    assert failure is not None and getattr(known_bugs, entry)(prog, failure), failure


def test_accepted_entries_stay_narrow():
    """Each fuzzY2 entry refuses a program where its excuse does not hold."""
    from . import known_bugs as kb
    from .runner import Failure

    text, ops = _ACCEPTED["_rounding_corrcoef_diagonal"]
    # (floor of corrcoef's off-diagonal entries, or of a matrix that is no corrcoef)
    shifted = _annotated(text.replace("v3.floor()", "(v3 - 0.5).floor()"), ops)
    assert not kb._rounding_corrcoef_diagonal(shifted, Failure("value", "floor",
                                                               "v4: values differ"))
    cov = _annotated(text.replace("T.corrcoef(v2)", "T.cov(v2)"), ops)
    assert not kb._rounding_corrcoef_diagonal(cov, Failure("value", "floor",
                                                           "v4: values differ"))
    text, ops = _ACCEPTED["_sign_of_reconstruction_noise"]
    # (a product with no zero to reconstruct: no sign differs; a sign_ of another tensor)
    full = _annotated(text.replace("[0.71, 0.0]", "[0.71, 0.3]"), ops)
    assert not kb._sign_of_reconstruction_noise(full, Failure("value", "linalg_square",
                                                              "v3: values differ"))
    plain = _annotated(text.replace("(lambda qr: qr[0] @ qr[1])(T.linalg.qr(v1))", "v1 * 1"),
                       ops)
    assert not kb._sign_of_reconstruction_noise(plain, Failure("value", "linalg_square",
                                                               "v3: values differ"))


def _mixed_binary(lib):
    """Binary ops of a float32 tensor and a 0-d float64 one (either side), the dist of them
    with its gradients: PyTorch casts the 0-d operand to float32 first."""
    a = lib.tensor([0.69, 1.0, -0.69], dtype=lib.float32, requires_grad=True)
    b = lib.tensor(0.69, dtype=lib.float64, requires_grad=True)
    outs = [a - b, b - a, a + (-b), a * b, a / b, lib.atan2(a - b, b), lib.hypot(a - b, b),
            lib.addcmul(-b, a, a.detach() * 0 + 1), lib.addcdiv(-b, a, a.detach() * 0 + 1)]
    for p in (float("inf"), 1.0, 2.0, 3.0):
        d = lib.dist(a, b, p=p)
        outs += [d] + list(lib.autograd.grad(d, [a, b]))
    return [o.detach().numpy() for o in outs]


def test_float32_with_zero_dim_float64_computes_in_float32():
    """0.69 (float32) - 0.69 (0-d float64) is 0.0 in PyTorch, -2.4e-9 computed in float64;
    dist's derivative alike (found replaying seed 16502663)."""
    for w, g in zip(_mixed_binary(torch), _mixed_binary(retrograd)):
        assert w.dtype == g.dtype
        np.testing.assert_array_equal(g, w)
