"""Op tests, unary: more elementwise functions (ops/unary.py).

One table of cases; ``case_checks`` runs every check on every case (float64 gradcheck and
gradgradcheck, values and gradients against PyTorch in float32 and float64, the grad_fn
name and the whole graph's shape): see ``tests/ops/helpers.py``.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import retrograd

from .helpers import TOL, Case, case_checks, check_same

CASES: list[Case] = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


for _name, _dom in [("log1p", "pos"), ("expm1", "real"), ("rsqrt", "pos"), ("log2", "pos"),
                    ("log10", "pos"), ("exp2", "real"), ("tan", "unit"), ("atan", "real"),
                    ("asin", "unit"), ("acos", "unit"), ("sinh", "real"), ("cosh", "real"),
                    ("square", "real"), ("floor", "real"), ("ceil", "real"), ("trunc", "real"),
                    ("frac", "real"), ("round", "real")]:
    case(_name, lambda m, a, f=_name: getattr(m, f)(a), ((3, 4),), _dom)
    case(f"{_name}_method", lambda m, a, f=_name: getattr(a, f)(), ((2, 3),), _dom)
case("round_decimals", lambda m, a: a.round(decimals=2), ((3, 4),))
case("arctan_method", lambda m, a: a.arctan(), ((3, 4),))
case("erf", lambda m, a: m.erf(a), ((3, 4),))
case("erfc_method", lambda m, a: a.erfc(), ((3, 4),))


# ----------------------------------------------------------------------------- operator library I
# (acosh... frexp, fill; the SciPy-backed special functions are in test_special.py)

for _name, _call, _shapes, _dom in [
    ("acosh", lambda m, a: m.acosh(a + 1), ((3, 4),), "pos"),
    ("arccosh_method", lambda m, a: (a + 1).arccosh(), ((2, 3),), "pos"),
    ("asinh", lambda m, a: m.asinh(a), ((3, 4),), "real"),
    ("arcsinh_method", lambda m, a: a.arcsinh(), ((2, 3),), "real"),
    ("atanh", lambda m, a: m.atanh(a), ((3, 4),), "unit"),
    ("arctanh_method", lambda m, a: a.arctanh(), ((2, 3),), "unit"),
    ("positive", lambda m, a: m.positive(a * 2), ((3, 4),), "real"),
    ("positive_method", lambda m, a: (a * 2).positive(), ((3,),), "real"),
    ("pos_operator", lambda m, a: +(a * 2), ((3,),), "real"),
    ("conj", lambda m, a: m.conj(a * 2), ((3, 4),), "real"),
    ("conj_method", lambda m, a: (a * 2).conj(), ((3,),), "real"),
    ("conj_physical", lambda m, a: m.conj_physical(a * 2), ((3, 4),), "real"),
    ("conj_physical_method", lambda m, a: (a * 2).conj_physical(), ((3,),), "real"),
    ("resolve_conj", lambda m, a: m.resolve_conj(a * 2).resolve_conj(), ((3,),), "real"),
    ("resolve_neg", lambda m, a: m.resolve_neg(a * 2).resolve_neg(), ((3,),), "real"),
    ("real", lambda m, a: m.real(a * 2), ((3, 4),), "real"),
    ("real_property", lambda m, a: (a * 2).real, ((3,),), "real"),
    ("angle", lambda m, a: m.angle(a), ((3, 4),), "nonzero"),
    ("angle_method", lambda m, a: a.angle(), ((3,),), "nonzero"),
    # (times a: PyTorch's gradient of sgn alone is a lazy zero tensor, which .numpy() refuses)
    ("sgn", lambda m, a: m.sgn(a) * a, ((3, 4),), "nonzero"),
    ("sgn_method", lambda m, a: a.sgn() * a, ((3,),), "nonzero"),
    ("deg2rad", lambda m, a: m.deg2rad(a), ((3, 4),), "real"),
    ("deg2rad_method", lambda m, a: a.deg2rad(), ((3,),), "real"),
    ("rad2deg", lambda m, a: m.rad2deg(a), ((3, 4),), "real"),
    ("rad2deg_method", lambda m, a: a.rad2deg(), ((3,),), "real"),
    ("sinc", lambda m, a: m.sinc(a), ((3, 4),), "real"),
    ("sinc_method", lambda m, a: a.sinc(), ((3,),), "real"),
    ("nan_to_num", lambda m, a: m.nan_to_num(a), ((3, 4),), "real"),
    ("nan_to_num_replacing", lambda m, a: m.nan_to_num(a.log(), nan=1.5, posinf=2.0,
                                                        neginf=-3.0), ((3, 4),), "real"),
    ("nan_to_num_method", lambda m, a: a.log().nan_to_num(neginf=1.0), ((3, 4),), "real"),
    ("logit", lambda m, a: m.logit(a.sigmoid()), ((3, 4),), "real"),
    ("logit_eps", lambda m, a: m.logit(a.sigmoid(), eps=0.3), ((3, 4),), "real"),
    ("logit_method", lambda m, a: a.sigmoid().logit(eps=0.01), ((3,),), "real"),
    ("frexp", lambda m, a: m.frexp(a * 10), ((3, 4),), "real"),
    ("frexp_method", lambda m, a: (a * 10).frexp().mantissa, ((3,),), "real"),
    ("fill", lambda m, a: m.fill(a, 2.5), ((3, 4),), "real"),
    ("fill_tensor", lambda m, a, b: m.fill(a, b), ((3, 4), ()), "real"),
    # in-place forms, on a non-leaf
    ("conj_physical_", lambda m, a: (a * 2).conj_physical_(), ((3, 4),), "real"),
    ("sgn_", lambda m, a: (a * 2).sgn_() * a, ((3, 4),), "nonzero"),
    ("deg2rad_", lambda m, a: (a * 2).deg2rad_(), ((3, 4),), "real"),
    ("rad2deg_", lambda m, a: (a * 2).rad2deg_(), ((3, 4),), "real"),
    ("sinc_", lambda m, a: (a * 2).sinc_(), ((3, 4),), "real"),
    ("nan_to_num_", lambda m, a: a.log().nan_to_num_(posinf=1.0), ((3, 4),), "real"),
    ("logit_", lambda m, a: (a.sigmoid() * 1).logit_(), ((3, 4),), "real"),
    ("logit_eps_", lambda m, a: (a.sigmoid() * 1).logit_(0.2), ((3, 4),), "real"),
]:
    case(_name, _call, _shapes, _dom)

# PyTorch 2.13 records acosh_, asinh_ and atanh_ (AcoshBackward1...) but has no derivative for
# them: backward raises NotImplementedError, and so does retrograd's
# (test_inplace_inverse_hyperbolic_has_no_derivative_like_torch)
_NO_DERIVATIVE = "PyTorch 2.13: the derivative for 'inplace version of ...' is not implemented"
for _name, _call, _dom in [("acosh_", lambda m, a: (a + 1).acosh_(), "pos"),
                           ("arccosh_", lambda m, a: (a + 1).arccosh_(), "pos"),
                           ("asinh_", lambda m, a: (a * 1).asinh_(), "real"),
                           ("arcsinh_", lambda m, a: (a * 1).arcsinh_(), "real"),
                           ("atanh_", lambda m, a: (a * 1).atanh_(), "unit"),
                           ("arctanh_", lambda m, a: (a * 1).arctanh_(), "unit")]:
    case(_name, _call, ((3, 4),), _dom, xfail={k: _NO_DERIVATIVE for k in (
        "gradcheck", "gradgradcheck", "grads")})


(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


def test_erf_without_scipy_matches(monkeypatch):
    """NumPy has no erf: without SciPy, erf (and gelu) fall back to the math module."""
    x = retrograd.tensor(np.linspace(-3, 3, 13), requires_grad=True)
    with_scipy = retrograd.erf(x).detach().numpy().copy()
    monkeypatch.setitem(sys.modules, "scipy.special", None)  # import now raises ImportError
    without = retrograd.erf(x)
    np.testing.assert_allclose(without.detach().numpy(), with_scipy, rtol=1e-15, atol=1e-16)
    without.sum().backward()
    want = 2 / np.sqrt(np.pi) * np.exp(-x.detach().numpy() ** 2)
    np.testing.assert_allclose(x.grad.numpy(), want)


# ----------------------------------------------------------------------------- boundary points


def _at_points(m, fn, points, g, dtype_name):
    """Value, first derivative (g weighted) and second derivative (create_graph) at points."""
    dtype = getattr(m, dtype_name)
    x = m.tensor(points, dtype=dtype).requires_grad_(True)
    out = fn(m, x)
    out = out[0] if isinstance(out, tuple) else out
    (g1,) = m.autograd.grad(out, x, m.tensor(g, dtype=dtype), retain_graph=True)
    (g1c,) = m.autograd.grad(out, x, m.tensor(np.ones(len(points)), dtype=dtype),
                             create_graph=True)
    g2 = (m.autograd.grad(g1c.sum(), x, allow_unused=True)[0]
          if g1c.requires_grad else None)
    return tuple(m.zeros(t.shape, dtype=t.dtype)  # PyTorch's lazy zeros refuse .numpy()
                 if t is not None and getattr(t, "_is_zerotensor", lambda: False)() else t
                 for t in (out, g1, g2))


_INF, _NAN = float("inf"), float("nan")
BOUNDARY = [
    ("acosh", lambda m, x: m.acosh(x), [1.0, 0.5, _INF, 2.0, _NAN]),
    ("asinh", lambda m, x: m.asinh(x), [0.0, -_INF, _INF, -2.0, _NAN]),
    ("atanh", lambda m, x: m.atanh(x), [1.0, -1.0, 2.0, 0.5, -0.0]),
    ("angle", lambda m, x: m.angle(x), [-1.0, 0.0, -0.0, _NAN, 2.0, -_INF]),
    ("sgn", lambda m, x: m.sgn(x), [0.0, -0.0, _NAN, -2.0, 3.0, _INF]),
    ("deg2rad", lambda m, x: m.deg2rad(x), [_INF, 1.0, -0.0, 180.0, _NAN]),
    ("rad2deg", lambda m, x: m.rad2deg(x), [_INF, 1.0, -0.0, 3.0, _NAN]),
    ("sinc", lambda m, x: m.sinc(x), [0.0, -0.0, 1.0, _INF, 0.5, -2.0]),
    ("nan_to_num", lambda m, x: m.nan_to_num(x), [_NAN, _INF, -_INF, 1.0, 0.0]),
    ("nan_to_num_args", lambda m, x: m.nan_to_num(x, nan=1.5, posinf=9.0, neginf=-9.0),
     [_NAN, _INF, -_INF, 1.0, 0.0]),
    ("nan_to_num_huge_posinf", lambda m, x: m.nan_to_num(x, posinf=1e300), [_INF, 1.0]),
    ("logit", lambda m, x: m.logit(x), [0.0, 1.0, -0.5, 1.5, 0.25, _NAN]),
    ("logit_eps", lambda m, x: m.logit(x, eps=0.25), [0.0, 1.0, 0.25, 0.75, 0.5, -0.5, _NAN]),
    ("logit_eps0", lambda m, x: m.logit(x, eps=0.0), [0.0, 1.0, 0.5, -0.5, 1.5]),
    ("logit_neg_eps", lambda m, x: m.logit(x, eps=-0.25), [-0.5, -0.2, 0.0, 1.0, 1.2, 0.5]),
    ("logit_eps_over_half", lambda m, x: m.logit(x, eps=0.75), [-0.5, 0.0, 0.5, 1.0, 0.8]),
    ("frexp", lambda m, x: m.frexp(x), [0.0, -0.0, 3.0, _INF, -_INF, _NAN, 1e-310, -8.0]),
    ("fill", lambda m, x: m.fill(x, 2), [_NAN, 1.0, _INF]),
]


@pytest.mark.parametrize("dtype_name", ["float64", "float32"])
@pytest.mark.parametrize("name,fn,points", [pytest.param(*b, id=b[0]) for b in BOUNDARY])
def test_boundary_points_vs_torch(name, fn, points, dtype_name, torch):
    """Kinks, poles and the ends of domains: values, first and second derivatives as
    PyTorch's, with an inf and a nan in the incoming gradient."""
    g = [_INF, 2.0, 1.0, -1.0, _NAN, 0.5, 3.0, -2.0][:len(points)]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        rg = _at_points(retrograd, fn, points, g, dtype_name)
        th = _at_points(torch, fn, points, g, dtype_name)
    for what, r, t in zip(("value", "grad", "second derivative"), rg, th):
        if t is None:
            assert r is None or not np.asarray(r.detach()).any(), f"{name} {what}"
        else:
            check_same(r, t, TOL[dtype_name], f"{name} {what}")


# ----------------------------------------------------------------------------- dtypes

MATRIX_DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8",
                 "bool"]


def same_as_torch_on_dtype(fn, dtype_name, torch, data=((0, 1, 2), (3, 4, 5))):
    """``fn(m, x)`` on an integer, bool or float tensor: PyTorch's result dtype and values
    (every output), or its exception class."""
    results = []
    for m in (retrograd, torch):
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                results.append(fn(m, m.tensor(np.array(data), dtype=getattr(m, dtype_name))))
        except (RuntimeError, NotImplementedError, TypeError, ValueError) as e:
            results.append(type(e))
    rg, th = results
    if isinstance(th, type):
        assert rg is th, f"torch raised {th.__name__}, retrograd gave {rg!r}"
        return
    assert not isinstance(rg, type), f"retrograd raised {rg.__name__}"
    tol = {"rtol": 1e-2, "atol": 1e-3} if "16" in dtype_name else TOL["float32"]
    rg, th = (list(o) if isinstance(o, tuple) else [o] for o in (rg, th))
    assert len(rg) == len(th)
    for r, t in zip(rg, th):
        check_same(r, t, tol, f"{dtype_name}")


DTYPE_CALLS = {
    "acosh": lambda m, x: m.acosh(x), "asinh": lambda m, x: x.asinh(),
    "atanh": lambda m, x: m.atanh(x), "positive": lambda m, x: m.positive(x),
    "pos": lambda m, x: +x, "conj": lambda m, x: m.conj(x),
    "conj_physical": lambda m, x: x.conj_physical(), "real": lambda m, x: m.real(x),
    "angle": lambda m, x: m.angle(x - 2), "sgn": lambda m, x: m.sgn(x),
    "deg2rad": lambda m, x: m.deg2rad(x), "rad2deg": lambda m, x: x.rad2deg(),
    "sinc": lambda m, x: m.sinc(x), "nan_to_num": lambda m, x: m.nan_to_num(x, nan=2.5),
    "logit": lambda m, x: m.logit(x), "logit_eps": lambda m, x: x.logit(eps=0.25),
    "frexp": lambda m, x: m.frexp(x), "fill": lambda m, x: m.fill(x, 2.75),
    "fill_tensor": lambda m, x: m.fill(x, m.tensor(1.5, dtype=m.float64)),
}


@pytest.mark.parametrize("dtype_name", MATRIX_DTYPES)
@pytest.mark.parametrize("name", sorted(DTYPE_CALLS))
def test_dtypes_vs_torch(name, dtype_name, torch):
    """Integer and bool inputs: the default float where PyTorch promotes, the same dtype
    where it keeps it (sgn, nan_to_num, conj...), its error where it refuses (frexp of an
    integer, + of a bool)."""
    same_as_torch_on_dtype(DTYPE_CALLS[name], dtype_name, torch)


@pytest.mark.parametrize("name", ["positive", "conj", "conj_physical", "resolve_conj",
                                  "resolve_neg", "real"])
def test_identity_on_real_tensors_like_torch(name, torch):
    """On a real tensor these return the tensor itself, leaf or not (no node recorded)."""
    for m in (retrograd, torch):
        x = m.randn(3, requires_grad=True)
        y = x * 2
        for t in (x, y):
            assert getattr(m, name)(t) is t
            assert (t.real if name == "real" else getattr(t, name)()) is t
    x = retrograd.randn(2)
    assert x.real is x and type(x).real.__doc__  # a property, as Tensor.real in PyTorch


def _inplace_record(m, call, a_np, g_np):
    a = m.tensor(a_np).requires_grad_(True)
    y = a * 1
    view = y[1:]
    before = y._version
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        out = call(m, y)
    rec = {"same": out is y, "version": y._version - before,
           "view_version": view._version == y._version,
           "grad_fn": y.grad_fn.name()}
    value = y.detach()
    (y * m.tensor(g_np)).sum().backward()
    grad = a.grad
    if getattr(grad, "_is_zerotensor", lambda: False)():
        grad = m.zeros(grad.shape, dtype=grad.dtype)  # PyTorch's lazy zeros refuse .numpy()
    return rec, value, grad


INPLACE = {
    "conj_physical_": lambda m, y: y.conj_physical_(), "sgn_": lambda m, y: y.sgn_(),
    "deg2rad_": lambda m, y: y.deg2rad_(), "rad2deg_": lambda m, y: y.rad2deg_(),
    "sinc_": lambda m, y: y.sinc_(), "nan_to_num_": lambda m, y: y.log_().nan_to_num_(nan=2.0),
    "logit_": lambda m, y: y.mul_(0.2).add_(0.5).logit_(),
    "logit_eps_": lambda m, y: y.logit_(eps=0.2),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_forms_vs_torch(name, torch):
    """Same object back, one version step per change (seen through a view), PyTorch's
    grad_fn, values and gradients."""
    rng = np.random.default_rng(11)
    a_np, g_np = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    (rr, rv, rg), (tr, tv, tg) = (_inplace_record(m, INPLACE[name], a_np, g_np)
                                  for m in (retrograd, torch))
    assert rr == tr
    check_same(rv, tv, TOL["float64"], "value")
    check_same(rg, tg, TOL["float64"], "grad")


@pytest.mark.parametrize("call", [lambda m, x: x.acosh_(), lambda m, x: x.sgn_(),
                                  lambda m, x: x.conj_physical_(), lambda m, x: x.logit_()])
def test_inplace_errors_like_torch(call, torch):
    """On a leaf that requires grad, and an integer tensor given a float result."""
    for m in (retrograd, torch):
        leaf = m.tensor([2.0, 3.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable"):
            call(m, leaf)
    outcomes = []
    for m in (retrograd, torch):
        try:
            call(m, m.tensor([2, 3]))
            outcomes.append(None)
        except RuntimeError as e:
            outcomes.append(type(e))
    assert outcomes[0] is outcomes[1]


ERRORS = [
    ("frexp_int", lambda m: m.frexp(m.tensor([1, 2]))),
    ("frexp_bool", lambda m: m.tensor([True]).frexp()),
    ("positive_bool", lambda m: m.positive(m.tensor([True]))),
    ("pos_bool", lambda m: +m.tensor([True])),
    ("fill_1d_value", lambda m: m.fill(m.zeros(3), m.ones(1))),
    ("logit_no_input", lambda m: m.logit()),
    ("nan_to_num_positional_after", lambda m: m.nan_to_num(m.zeros(2), 0.0, 1.0, -1.0, 5)),
]


@pytest.mark.parametrize("name,call", [pytest.param(*e, id=e[0]) for e in ERRORS])
def test_errors_like_torch(name, call, torch):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(want.type):
        call(retrograd)


KEYWORDS = [
    ("nan_to_num", lambda m, x: m.nan_to_num(input=x.log(), nan=1.0, posinf=2.0, neginf=3.0)),
    ("nan_to_num_method", lambda m, x: x.log().nan_to_num(nan=1.0, neginf=-1.0)),
    ("logit", lambda m, x: m.logit(input=x, eps=0.25)),
    ("fill", lambda m, x: m.fill(input=x, value=3)),
    ("fill_method_absent", lambda m, x: hasattr(x, "fill")),
]


@pytest.mark.parametrize("name,call", [pytest.param(*k, id=k[0]) for k in KEYWORDS])
def test_keyword_names_like_torch(name, call, torch):
    x_np = np.array([0.0, 0.5, 2.0, -1.0])
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        rg, th = (call(m, m.tensor(x_np)) for m in (retrograd, torch))
    if isinstance(th, bool):
        assert rg is th
    else:
        check_same(rg, th, TOL["float64"], name)


@pytest.mark.parametrize("name", ["acosh_", "arccosh_", "asinh_", "arcsinh_", "atanh_",
                                  "arctanh_"])
def test_inplace_inverse_hyperbolic_has_no_derivative_like_torch(name, torch):
    """PyTorch records AcoshBackward1 (...) for the in-place forms and raises
    NotImplementedError at backward; the values are still acosh's."""
    for m in (retrograd, torch):
        a = m.tensor([0.5, 0.7], dtype=m.float64, requires_grad=True)
        y = a + 1 if "cosh" in name else a * 1
        out = getattr(y, name)()
        assert out is y and y._version == 1
        base = name.replace("arc", "a")[:-1]
        with pytest.raises(NotImplementedError, match=f"inplace version of {base}"):
            y.sum().backward()
