"""Issue 6's two-input ops against PyTorch with every dtype pair, Python numbers on either
side, boundary values (zeros, -0.0, nan, inf, integer division by zero) and mixed second
derivatives; the result dtype and values, or PyTorch's exception class."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest

import retrograd

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
NUMBERS = [True, 3, -2, 2.5]
A = [3, -2, 7, 1]
B = [2, 3, -4, 5]  # no zero: division by zero is tested on its own below

OPS = {
    "copysign": lambda m, a, b: m.copysign(a, b),
    "fmax": lambda m, a, b: m.fmax(a, b),
    "fmin": lambda m, a, b: m.fmin(a, b),
    "fmod": lambda m, a, b: m.fmod(a, b),
    "ldexp": lambda m, a, b: m.ldexp(a, b),
    "logaddexp2": lambda m, a, b: m.logaddexp2(a, b),
    "nextafter": lambda m, a, b: m.nextafter(a, b),
    "float_power": lambda m, a, b: m.float_power(a, b),
    "rsub": lambda m, a, b: m.rsub(a, b),
    "rsub_alpha": lambda m, a, b: m.rsub(a, b, alpha=2),
    "div_trunc": lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
    "div_floor": lambda m, a, b: m.div(a, b, rounding_mode="floor"),
    "true_divide": lambda m, a, b: m.true_divide(a, b),
    "sub_reflected": lambda m, a, b: b - a,
    "__rsub__": lambda m, a, b: a.__rsub__(b),
}


def _tensor(m, values, dtype):
    return m.tensor(np.array(values).astype(dtype))


def _run(m, fn, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return fn(m, *args)
        except Exception as e:  # noqa: BLE001 - the class is compared with PyTorch's
            return e


def _compare(r, t, what):
    if isinstance(t, Exception):
        assert isinstance(r, Exception), f"{what}: torch raises {t!r}, retrograd gives {r!r}"
        assert type(r) is type(t) or isinstance(r, type(t)), f"{what}: {r!r} vs torch {t!r}"
        return
    assert not isinstance(r, Exception), f"{what}: retrograd raises {r!r}; torch gives {t}"
    assert str(r.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], \
        f"{what}: dtype {r.dtype} vs torch {t.dtype}"
    tol = 1e-3 if "float16" in str(t.dtype) else 1e-6
    np.testing.assert_allclose(r.numpy().astype(np.float64), t.numpy().astype(np.float64),
                               rtol=tol, atol=tol, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("da,db", list(itertools.product(DTYPES, DTYPES)))
@pytest.mark.parametrize("op", sorted(OPS))
def test_every_dtype_pair_vs_torch(op, da, db, torch):
    fn = OPS[op]
    r = _run(retrograd, fn, _tensor(retrograd, A, da), _tensor(retrograd, B, db))
    t = _run(torch, fn, _tensor(torch, A, da), _tensor(torch, B, db))
    _compare(r, t, f"{op}({da}, {db})")


@pytest.mark.parametrize("number", NUMBERS, ids=repr)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(OPS))
def test_tensor_and_number_vs_torch(op, dtype, number, torch):
    fn = OPS[op]
    for args in (lambda m: (_tensor(m, A, dtype), number),
                 lambda m: (number, _tensor(m, B, dtype))):
        if op in ("sub_reflected", "__rsub__") and not hasattr(args(torch)[0], "shape"):
            continue  # ``number.__rsub__`` is Python's, not an op
        r, t = _run(retrograd, fn, *args(retrograd)), _run(torch, fn, *args(torch))
        kinds = tuple(dtype if hasattr(x, "shape") else type(x).__name__ for x in args(torch))
        _compare(r, t, f"{op}{kinds}")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("op", sorted(OPS))
def test_zero_dim_promotes_by_category_vs_torch(op, dtype, torch):
    # a 0-d tensor of a higher dtype in the same category does not raise the dtype
    fn = OPS[op]
    for other in ("float64", "int64"):
        r = _run(retrograd, fn, _tensor(retrograd, A, dtype), _tensor(retrograd, 2, other))
        t = _run(torch, fn, _tensor(torch, A, dtype), _tensor(torch, 2, other))
        _compare(r, t, f"{op}({dtype}, 0-d {other})")


# ----------------------------------------------------------------------------- boundaries

Z = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 2.5]
BOUNDARY_OPS = ["copysign", "fmax", "fmin", "fmod", "ldexp", "logaddexp2", "nextafter",
                "float_power", "div_trunc", "div_floor", "rsub"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", BOUNDARY_OPS)
def test_boundary_values_and_grads_vs_torch(op, dtype, torch):
    """Every pair of (0, -0.0, +-1, +-inf, nan, 2.5): values (signs of zeros included) and
    first-order gradients."""
    pairs = list(itertools.product(Z, Z))
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    out = {}
    for m in (retrograd, torch):
        x = m.tensor(a, dtype=getattr(m, dtype), requires_grad=True)
        y = m.tensor(b, dtype=getattr(m, dtype), requires_grad=True)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            r = OPS[op](m, x, y)
            r.backward(m.ones_like(r))
        out[m] = (r.detach().numpy(), x.grad, y.grad)
    (rv, rgx, rgy), (tv, tgx, tgy) = out[retrograd], out[torch]
    # one ulp: NumPy's and PyTorch's libm differ in the last bit for pow and log1p/exp2
    ulp = {"float32": 2.4e-7, "float64": 4.5e-16}[dtype]
    np.testing.assert_allclose(rv, tv, rtol=ulp, atol=ulp / 4)
    real = tv == 0  # -0.0 vs 0.0
    np.testing.assert_array_equal(np.signbit(rv[real]), np.signbit(tv[real]))
    for rg, tg, which in ((rgx, tgx, "input"), (rgy, tgy, "other")):
        assert (rg is None) == (tg is None), which
        if tg is not None:
            np.testing.assert_allclose(rg.numpy(), tg.numpy(), rtol=ulp, atol=ulp / 4,
                                       err_msg=f"grad of {which}")


@pytest.mark.parametrize("call", [
    lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
    lambda m, a, b: m.div(a, b, rounding_mode="floor"),
    lambda m, a, b: m.fmod(a, b),
    lambda m, a, b: m.fmod(a, 0),
    lambda m, a, b: a.div_(b, rounding_mode="floor"),
    lambda m, a, b: m.div(a.float(), b, rounding_mode="floor"),
    lambda m, a, b: m.div(a, 0.0, rounding_mode="trunc"),
    lambda m, a, b: m.div(a.bool(), b.bool(), rounding_mode="floor"),
    lambda m, a, b: m.div(a, b, rounding_mode="round"),
    lambda m, a, b: m.fmod(a.bool(), b.bool()),
    lambda m, a, b: m.fmax(a, 2),
    lambda m, a, b: m.ldexp(2.0, b),
    lambda m, a, b: m.nextafter(a, b),
    lambda m, a, b: m.logaddexp2(a, b),
    lambda m, a, b: a.float().float_power_(2),
    lambda m, a, b: m.rsub(a.bool(), 1),
    lambda m, a, b: True - a.bool(),
], ids=["trunc", "floor", "fmod", "fmod_number", "div_", "float_by_int_zero",
        "int_by_float_zero", "bool", "bad_mode", "fmod_bool", "fmax_number", "ldexp_number",
        "nextafter_int", "logaddexp2_int", "float_power_float32", "rsub_bool", "rsub_bool_op"])
def test_integer_division_by_zero_and_errors_vs_torch(call, torch):
    a, b = [5, -5, 7, 0], [0, 2, -3, 0]
    r = _run(retrograd, call, _tensor(retrograd, a, "int64"), _tensor(retrograd, b, "int64"))
    t = _run(torch, call, _tensor(torch, a, "int64"), _tensor(torch, b, "int64"))
    _compare(r, t, "call")
    if isinstance(t, RuntimeError):  # PyTorch's first words, then retrograd's advice
        assert str(r).startswith(str(t).split("\n")[0][:20]), (str(r), str(t))


# ----------------------------------------------------------------------------- second order

MIXED = {
    "copysign": (lambda m, a, b: m.copysign(a, b), "nonzero"),
    "fmax": (lambda m, a, b: m.fmax(a, b), "real"),
    "fmin": (lambda m, a, b: m.fmin(a, b), "real"),
    "fmod": (lambda m, a, b: m.fmod(a, b), "nonzero"),
    "ldexp": (lambda m, a, b: m.ldexp(a, b), "real"),
    "logaddexp2": (lambda m, a, b: m.logaddexp2(a, b), "real"),
    "nextafter": (lambda m, a, b: m.nextafter(a, b), "real"),
    "float_power": (lambda m, a, b: m.float_power(a.abs() + 0.5, b), "real"),
    "rsub": (lambda m, a, b: m.rsub(a * b, b, alpha=3), "real"),
    "div_floor": (lambda m, a, b: m.div(a, b, rounding_mode="floor") * a * b, "nonzero"),
    "div_trunc": (lambda m, a, b: m.div(a * a, b, rounding_mode="trunc"), "nonzero"),
    "true_divide": (lambda m, a, b: m.true_divide(a, b), "nonzero"),
}


@pytest.mark.parametrize("op", sorted(MIXED))
def test_mixed_second_derivatives_vs_torch(op, torch):
    """d2/da db (and d2/da2, d2/db2) through create_graph=True, against PyTorch; where
    PyTorch's first derivative records nothing, retrograd's records nothing either."""
    fn, domain = MIXED[op]
    rng = np.random.default_rng(7)
    a = rng.standard_normal((3, 4))
    b = rng.standard_normal((4,))
    if domain == "nonzero":
        b = np.sign(b) * (np.abs(b) + 0.5)
    w = rng.standard_normal((3, 4))
    got = {}
    for m in (retrograd, torch):
        x = m.tensor(a, requires_grad=True)
        y = m.tensor(b, requires_grad=True)
        out = fn(m, x, y)
        gx, gy = m.autograd.grad((out * m.tensor(w)).sum(), (x, y), create_graph=True)
        res = [gx.detach().numpy().copy(), gy.detach().numpy().copy(),
               gx.requires_grad, gy.requires_grad]
        for g in (gx, gy):
            if g.requires_grad:
                h = m.autograd.grad((g * g).sum(), (x, y), allow_unused=True,
                                    retain_graph=True)
                res += [None if v is None else v.numpy().copy() for v in h]
            else:
                res += ["no graph"]
        got[m] = res
    r, t = got[retrograd], got[torch]
    assert len(r) == len(t) and r[2:4] == t[2:4], (r[2:4], t[2:4])
    for i, (u, v) in enumerate(zip(r, t)):
        if isinstance(v, np.ndarray):
            assert isinstance(u, np.ndarray), f"item {i}: {u!r}"
            np.testing.assert_allclose(u, v, rtol=1e-10, atol=1e-12, err_msg=f"item {i}")
        else:
            assert u == v or (u is None and v is None), f"item {i}: {u!r} vs {v!r}"


ALPHAS = [2, 1.5, True, False, 0, np.float64(2.0), np.int64(-1)]


@pytest.mark.parametrize("op", ["add", "sub", "add_", "sub_"])
@pytest.mark.parametrize("dtype_a,dtype_b", [("int64", "int64"), ("bool", "bool"),
                                             ("int64", "float32"), ("float32", "float32"),
                                             ("uint8", "bool")])
@pytest.mark.parametrize("alpha", ALPHAS, ids=repr)
def test_alpha_of_add_and_sub_follows_pytorch(op, dtype_a, dtype_b, alpha):
    # a fractional alpha with an integer result raises, a bool alpha needs a bool result,
    # and with a bool result alpha counts as a bool (NumPy would compute True + 2 = 3)
    torch = pytest.importorskip("torch")
    results = []
    for m in (retrograd, torch):
        a = m.tensor([True, False, True] if dtype_a == "bool" else [3, 0, -2],
                     dtype=getattr(m, dtype_a))
        b = m.tensor([True, True, False] if dtype_b == "bool" else [1, 4, 2],
                     dtype=getattr(m, dtype_b))
        try:
            out = getattr(a, op)(b, alpha=alpha)
            results.append((str(out.dtype).split(".")[-1], out.tolist()))
        except (RuntimeError, TypeError) as e:
            results.append(type(e).__name__)
    assert results[0] == results[1]


@pytest.mark.parametrize("op", ["remainder", "fmod", "floor_divide"])
@pytest.mark.parametrize("shapes", [((1,), ()), ((), (1,)), ((1,), (1,))])
def test_jumpy_ops_compute_in_the_result_dtype_vs_torch(op, shapes, torch):
    """3.0 % 0.02 jumps near a multiple: PyTorch computes in float32 for a float32 tensor
    and a 0-d float64 one (about 7e-8), NumPy would in float64 (about 0.02); fuzz seed
    9473801."""
    def run(m):
        a = m.tensor(3.0, dtype=m.float32).reshape(shapes[0])
        b = m.tensor(0.02, dtype=m.float64).reshape(shapes[1])
        out = getattr(m, op)(a, b)
        return str(out.dtype).split(".")[-1], np.asarray(out).tolist()

    assert run(retrograd) == run(torch)
