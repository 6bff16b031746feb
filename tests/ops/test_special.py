"""``retrograd.special`` against ``torch.special``: one call per name, values and gradients."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import retrograd
from retrograd.ops import registry
from retrograd.ops import special as special_ops

from .helpers import TOL, Case, case_checks, check_same, leaves
from .test_unary import MATRIX_DTYPES, _at_points, same_as_torch_on_dtype

# name -> (call on (special, *inputs), domain of the inputs); every name special has
CALLS = {
    "erf": lambda s, a: s.erf(a),
    "erfc": lambda s, a: s.erfc(a),
    "exp2": lambda s, a: s.exp2(a),
    "expit": lambda s, a: s.expit(a),
    "expm1": lambda s, a: s.expm1(a),
    "log1p": lambda s, a: s.log1p(a.abs()),
    "log_softmax": lambda s, a: s.log_softmax(a, 1),
    "logsumexp": lambda s, a: s.logsumexp(a, (0, 1)),
    "round": lambda s, a: s.round(a * 10, decimals=1),
    "softmax": lambda s, a: s.softmax(a, dim=0),
    "xlogy": lambda s, a: s.xlogy(a, a.abs() + 0.5),
    # operator library I
    "logit": lambda s, a: s.logit(a.sigmoid(), eps=0.2),
    "sinc": lambda s, a: s.sinc(a),
    "gammaln": lambda s, a: s.gammaln(a),
    "digamma": lambda s, a: s.digamma(a),
    "psi": lambda s, a: s.psi(a.abs() + 0.1),
    "polygamma": lambda s, a: s.polygamma(2, a),
    "multigammaln": lambda s, a: s.multigammaln(a.abs() + 2, 3),
    "erfinv": lambda s, a: s.erfinv(a.tanh()),
    "i0": lambda s, a: s.i0(a),
    "i0e": lambda s, a: s.i0e(a),
    "i1": lambda s, a: s.i1(a),
    "i1e": lambda s, a: s.i1e(a),
    "ndtr": lambda s, a: s.ndtr(a),
    "ndtri": lambda s, a: s.ndtri(a.sigmoid()),
    "log_ndtr": lambda s, a: s.log_ndtr(a * 3),
    "erfcx": lambda s, a: s.erfcx(a),
    "entr": lambda s, a: s.entr(a.abs()),
    "xlog1py": lambda s, a: s.xlog1py(a, a.abs()),
    # (a derivative for the first argument of igamma does not exist in PyTorch: detached)
    "gammainc": lambda s, a: s.gammainc(a.detach().abs() + 0.5, a.abs() + 0.1),
    "gammaincc": lambda s, a: s.gammaincc(a.detach().abs() + 0.5, a.abs() + 0.1),
}


def test_every_special_name_has_a_call():
    assert set(CALLS) == set(registry.namespace("special"))


@pytest.mark.parametrize("name", sorted(CALLS))
def test_special_vs_torch(name, torch):
    arrays = [np.random.default_rng(4).standard_normal((3, 4))]
    rg_in, th_in = leaves(retrograd, arrays, "float64"), leaves(torch, arrays, "float64")
    rg_out = CALLS[name](retrograd.special, *rg_in)
    th_out = CALLS[name](torch.special, *th_in)
    check_same(rg_out, th_out, TOL["float64"], f"special.{name}")
    g = np.random.default_rng(5).standard_normal(tuple(th_out.shape))
    rg_out.backward(retrograd.tensor(g))
    th_out.backward(torch.tensor(g))
    check_same(rg_in[0].grad, th_in[0].grad, TOL["float64"], f"special.{name} grad")


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_special_softmax_needs_dim_like_torch(name, torch):
    # torch.softmax(x) guesses a dim (with a warning); torch.special's requires it
    with pytest.raises(TypeError):
        getattr(torch.special, name)(torch.randn(2, 3))
    with pytest.raises(TypeError):
        getattr(retrograd.special, name)(retrograd.randn(2, 3))


# ----------------------------------------------------------------------------- the case table
# (ops/special.py: the gamma family, erfinv, Bessel functions, the normal distribution, entr,
# xlog1py and their in-place forms; each case gets every check of helpers.case_checks)

CASES: list[Case] = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


for _name, _call, _shapes, _dom in [
    ("lgamma", lambda m, a: m.lgamma(a), ((3, 4),), "real"),
    ("lgamma_method", lambda m, a: a.lgamma(), ((3,),), "pos"),
    ("digamma", lambda m, a: m.digamma(a), ((3, 4),), "real"),
    ("digamma_method", lambda m, a: a.digamma(), ((3,),), "pos"),
    ("polygamma0", lambda m, a: m.polygamma(0, a), ((3, 4),), "real"),
    ("polygamma1", lambda m, a: m.polygamma(1, a), ((3, 4),), "real"),
    ("polygamma3", lambda m, a: m.polygamma(3, a), ((3, 4),), "pos"),
    ("polygamma_method", lambda m, a: a.polygamma(2), ((3,),), "real"),
    ("mvlgamma", lambda m, a: m.mvlgamma(a + 2, 3), ((3, 4),), "pos"),
    ("mvlgamma_p1", lambda m, a: m.mvlgamma(a, p=1), ((3,),), "pos"),
    ("mvlgamma_method", lambda m, a: (a + 1).mvlgamma(2), ((3,),), "pos"),
    ("erfinv", lambda m, a: m.erfinv(a), ((3, 4),), "unit"),
    ("erfinv_method", lambda m, a: a.erfinv(), ((3,),), "unit"),
    ("i0", lambda m, a: m.i0(a), ((3, 4),), "real"),
    ("i0_method", lambda m, a: a.i0(), ((3,),), "real"),
    ("i0e", lambda m, a: m.special.i0e(a), ((3, 4),), "real"),
    ("i1", lambda m, a: m.special.i1(a), ((3, 4),), "real"),
    ("i1e", lambda m, a: m.special.i1e(a), ((3, 4),), "real"),
    ("ndtr", lambda m, a: m.special.ndtr(a), ((3, 4),), "real"),
    ("ndtri", lambda m, a: m.special.ndtri(a), ((3, 4),), "pos"),
    ("log_ndtr", lambda m, a: m.special.log_ndtr(a * 4), ((3, 4),), "real"),
    ("erfcx", lambda m, a: m.special.erfcx(a), ((3, 4),), "real"),
    ("entr", lambda m, a: m.special.entr(a), ((3, 4),), "pos"),
    ("xlog1py", lambda m, a, b: m.special.xlog1py(a, b), ((3, 4), (3, 4)), ("real", "pos")),
    ("xlog1py_bcast", lambda m, a, b: m.special.xlog1py(a, b), ((3, 1), (4,)), ("real", "pos")),
    ("xlog1py_number_input", lambda m, b: m.special.xlog1py(2.5, b), ((3, 4),), "pos"),
    ("xlog1py_number_other", lambda m, a: m.special.xlog1py(a, 1.5), ((3, 4),), "real"),
    # in-place forms, on a non-leaf
    ("lgamma_", lambda m, a: (a * 1).lgamma_(), ((3, 4),), "real"),
    ("digamma_", lambda m, a: (a * 1).digamma_(), ((3, 4),), "real"),
    ("polygamma_", lambda m, a: (a * 1).polygamma_(1), ((3, 4),), "real"),
    ("mvlgamma_", lambda m, a: (a + 1).mvlgamma_(p=2), ((3, 4),), "pos"),
    ("erfinv_", lambda m, a: (a * 1).erfinv_(), ((3, 4),), "unit"),
    ("i0_", lambda m, a: (a * 1).i0_(), ((3, 4),), "real"),
]:
    # "ndtri" draws from (0.5, 2): its input must lie in (0, 1)
    if _name == "ndtri":
        _call = lambda m, a: m.special.ndtri(a / 2.5)  # noqa: E731
    case(_name, _call, _shapes, _dom)


(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


# ----------------------------------------------------------------------------- boundary points

_INF, _NAN = float("inf"), float("nan")
BOUNDARY = [
    ("lgamma_poles", lambda m, x: m.lgamma(x), [0.0, -0.0, -1.0, -2.5, -_INF, _INF, _NAN]),
    ("digamma_poles", lambda m, x: m.digamma(x), [0.0, -0.0, -1.0, -2.5, -3.0, 1.0, _NAN]),
    ("trigamma_poles", lambda m, x: m.polygamma(1, x), [0.0, -1.0, -2.0, -2.5, _INF, -_INF]),
    ("polygamma2_ends", lambda m, x: m.polygamma(2, x), [_INF, -_INF, 0.0, -1.0, 0.5, 30.0]),
    ("mvlgamma_edges", lambda m, x: m.mvlgamma(x, 2), [0.5, 0.4, 1.0, _INF, _NAN, 30.0]),
    ("erfinv_ends", lambda m, x: m.erfinv(x), [1.0, -1.0, 2.0, 0.0, -0.0, _NAN]),
    ("i0_ends", lambda m, x: m.i0(x), [0.0, -_INF, _INF, 700.0, _NAN]),
    ("i0e_zero", lambda m, x: m.special.i0e(x), [0.0, 1e-17, -2.5, _INF, -_INF]),
    ("i1_zero", lambda m, x: m.special.i1(x), [0.0, 1e-17, -1e-17, 2.5, _NAN]),
    ("i1e_zero", lambda m, x: m.special.i1e(x), [0.0, 1e-17, -2.5, _INF, -_INF]),
    ("ndtr_tails", lambda m, x: m.special.ndtr(x), [-10.0, -_INF, _INF, 0.0, 5.0, _NAN]),
    ("ndtri_ends", lambda m, x: m.special.ndtri(x), [0.0, 1.0, -0.5, 1.5, 0.5, _NAN]),
    ("log_ndtr_tails", lambda m, x: m.special.log_ndtr(x), [-40.0, -_INF, _INF, 0.0, 10.0]),
    ("erfcx_tails", lambda m, x: m.special.erfcx(x), [-30.0, -_INF, _INF, 0.0, 1e10]),
    ("entr_zero", lambda m, x: m.special.entr(x), [0.0, -0.0, -1.0, 2.5, _INF, _NAN]),
    ("xlog1py_zero", lambda m, x: m.special.xlog1py(x * 0, x - 2), [1.0, 0.0, -1.0, _INF, 3.0]),
    ("xlog1py_at_minus_one", lambda m, x: m.special.xlog1py(x, m.tensor(
        [-1.0, -2.0, -1.0, _NAN, _INF, -_INF], dtype=x.dtype)), [0.0, 0.0, 1.0, 0.0, 0.0, 1.0]),
    ("xlog1py_other_grad", lambda m, x: m.special.xlog1py(m.tensor(
        [0.0, 0.0, 1.0, 0.0], dtype=x.dtype), x), [-1.0, -2.0, -1.0, 0.0]),
]


@pytest.mark.parametrize("dtype_name", ["float64", "float32"])
@pytest.mark.parametrize("name,fn,points", [pytest.param(*b, id=b[0]) for b in BOUNDARY])
def test_boundary_points_vs_torch(name, fn, points, dtype_name, torch):
    """Poles, zeros and domain ends: values, first and second derivatives as PyTorch's."""
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


# ----------------------------------------------------------------------------- dtypes, errors

DTYPE_CALLS = {
    "lgamma": lambda m, x: m.lgamma(x), "digamma": lambda m, x: x.digamma(),
    "polygamma": lambda m, x: m.polygamma(1, x), "polygamma3": lambda m, x: x.polygamma(3),
    "mvlgamma": lambda m, x: m.mvlgamma(x, 1), "erfinv": lambda m, x: m.erfinv(x),
    "i0": lambda m, x: m.i0(x), "i0e": lambda m, x: m.special.i0e(x),
    "i1": lambda m, x: m.special.i1(x), "i1e": lambda m, x: m.special.i1e(x),
    "ndtr": lambda m, x: m.special.ndtr(x), "ndtri": lambda m, x: m.special.ndtri(x),
    "log_ndtr": lambda m, x: m.special.log_ndtr(x), "erfcx": lambda m, x: m.special.erfcx(x),
    "entr": lambda m, x: m.special.entr(x), "xlog1py": lambda m, x: m.special.xlog1py(x, x),
    "xlog1py_number": lambda m, x: m.special.xlog1py(x, 2.5),
    "xlog1py_number_input": lambda m, x: m.special.xlog1py(2, x),
    "xlog1py_float64": lambda m, x: m.special.xlog1py(x, m.ones(1, dtype=m.float64)),
}


@pytest.mark.parametrize("dtype_name", MATRIX_DTYPES)
@pytest.mark.parametrize("name", sorted(DTYPE_CALLS))
def test_dtypes_vs_torch(name, dtype_name, torch):
    """Integers and bools compute in the default float; float16 where PyTorch has a kernel
    (ndtri, log_ndtr and erfcx refuse it with NotImplementedError)."""
    same_as_torch_on_dtype(DTYPE_CALLS[name], dtype_name, torch)


ERRORS = [
    ("polygamma_negative_n", lambda m: m.polygamma(-1, m.ones(2))),
    ("polygamma_float_n", lambda m: m.polygamma(1.5, m.ones(2))),
    ("polygamma_tensor_n", lambda m: m.polygamma(m.ones(2), 1)),
    ("mvlgamma_p0", lambda m: m.mvlgamma(m.ones(2) * 3, 0)),
    ("mvlgamma_float_p", lambda m: m.mvlgamma(m.ones(2) * 3, 2.0)),
    ("mvlgamma_no_p", lambda m: m.ones(2).mvlgamma()),
    ("xlog1py_two_numbers", lambda m: m.special.xlog1py(2.0, 3.0)),
    ("xlog1py_bad_broadcast", lambda m: m.special.xlog1py(m.ones(2, 3), m.ones(4))),
    ("ndtri_half", lambda m: m.special.ndtri(m.ones(2, dtype=m.float16) / 2)),
    ("lgamma__int", lambda m: m.tensor([1, 2]).lgamma_()),
]


@pytest.mark.parametrize("name,call", [pytest.param(*e, id=e[0]) for e in ERRORS])
def test_errors_like_torch(name, call, torch):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(want.type):
        call(retrograd)


KEYWORDS = [
    ("polygamma", lambda m, x: m.polygamma(n=2, input=x)),
    ("mvlgamma", lambda m, x: m.mvlgamma(input=x + 2, p=2)),
    ("multigammaln", lambda m, x: m.special.multigammaln(input=x + 2, p=3)),
    ("xlog1py", lambda m, x: m.special.xlog1py(input=x, other=x)),
    ("polygamma_method", lambda m, x: x.polygamma(n=1)),
    ("mvlgamma_method", lambda m, x: (x + 2).mvlgamma(p=2)),
]


@pytest.mark.parametrize("name,call", [pytest.param(*k, id=k[0]) for k in KEYWORDS])
def test_keyword_names_like_torch(name, call, torch):
    x_np = np.array([0.25, 0.5, 2.0, 3.5])
    rg, th = (call(m, m.tensor(x_np)) for m in (retrograd, torch))
    check_same(rg, th, TOL["float64"], name)


@pytest.mark.parametrize("name", ["lgamma_", "digamma_", "polygamma_", "mvlgamma_",
                                  "erfinv_", "i0_"])
def test_inplace_forms_vs_torch(name, torch):
    """Same object, one version step, PyTorch's grad_fn name (PolygammaBackward1 for the
    in-place polygamma_), values and gradients."""
    args = {"polygamma_": (2,), "mvlgamma_": (2,)}.get(name, ())
    rng = np.random.default_rng(2)
    a_np, g_np = rng.uniform(0.1, 0.9, (3, 4)), rng.standard_normal((3, 4))
    out = []
    for m in (retrograd, torch):
        a = m.tensor(a_np, requires_grad=True)
        y = a + (1 if name == "mvlgamma_" else 0)
        before = y._version
        r = getattr(y, name)(*args)
        fn = y.grad_fn.name()
        (y * m.tensor(g_np)).sum().backward()
        out.append((r is y, y._version - before, fn, y.detach(), a.grad))
    (rs, rv, rf, ry, rg), (ts, tv, tf, ty, tg) = out
    assert (rs, rv, rf) == (ts, tv, tf)
    check_same(ry, ty, TOL["float64"], "value")
    check_same(rg, tg, TOL["float64"], "grad")


# ----------------------------------------------------------------------------- without SciPy

NEEDS_SCIPY = {
    "lgamma": lambda m, x: m.lgamma(x), "digamma": lambda m, x: m.digamma(x),
    "polygamma": lambda m, x: m.polygamma(2, x), "mvlgamma": lambda m, x: m.mvlgamma(x, 2),
    "erfinv": lambda m, x: m.erfinv(x), "special.i0e": lambda m, x: m.special.i0e(x),
    "special.i1": lambda m, x: m.special.i1(x), "special.i1e": lambda m, x: m.special.i1e(x),
    "special.ndtri": lambda m, x: m.special.ndtri(x),
    "special.log_ndtr": lambda m, x: m.special.log_ndtr(x),
    "special.erfcx": lambda m, x: m.special.erfcx(x),
    "gammaln": lambda m, x: m.special.gammaln(x),
}
NO_SCIPY_NEEDED = {
    "i0": lambda m, x: m.i0(x), "trigamma": lambda m, x: m.polygamma(1, x),
    "ndtr": lambda m, x: m.special.ndtr(x), "entr": lambda m, x: m.special.entr(x),
    "xlog1py": lambda m, x: m.special.xlog1py(x, x), "sinc": lambda m, x: m.sinc(x),
    "logit": lambda m, x: m.logit(x),
}


@pytest.fixture
def without_scipy(monkeypatch):
    """SciPy made unimportable (as if not installed), and retrograd's cache of it emptied."""
    for name in [n for n in sys.modules if n == "scipy" or n.startswith("scipy.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setattr(special_ops, "_SCIPY", {})


@pytest.mark.parametrize("name", sorted(NEEDS_SCIPY))
def test_without_scipy_the_op_says_what_to_install(name, without_scipy):
    x = retrograd.tensor([0.25, 0.5])
    op = name.replace("gammaln", "lgamma")
    with pytest.raises(ImportError, match=rf"{op}.*pip install retrograd\[scipy\]"):
        NEEDS_SCIPY[name](retrograd, x)


@pytest.mark.parametrize("name", sorted(NO_SCIPY_NEEDED))
def test_without_scipy_these_still_work(name, without_scipy, torch):
    x_np = np.array([0.25, 0.5, 0.75])
    rg = NO_SCIPY_NEEDED[name](retrograd, retrograd.tensor(x_np))
    check_same(rg, NO_SCIPY_NEEDED[name](torch, torch.tensor(x_np)), TOL["float64"], name)


def test_without_scipy_i0s_derivative_needs_it(without_scipy):
    # i0's forward is NumPy's; its derivative is special.i1, from SciPy
    x = retrograd.tensor([0.5], requires_grad=True)
    y = retrograd.i0(x)
    with pytest.raises(ImportError, match=r"special.i1.*pip install retrograd\[scipy\]"):
        y.backward()


def test_scipy_is_imported_once_and_cached():
    x = retrograd.tensor([1.5])
    retrograd.lgamma(x)
    assert special_ops._SCIPY["numpy"] is sys.modules["scipy.special"]


def test_special_module_docstring_examples_run():
    import doctest

    result = doctest.testmod(special_ops, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


THIRD_ORDER = {
    "lgamma": lambda m, x: m.lgamma(x), "digamma": lambda m, x: m.digamma(x),
    "polygamma1": lambda m, x: m.polygamma(1, x), "mvlgamma": lambda m, x: m.mvlgamma(x + 1, 3),
    "erfinv": lambda m, x: m.erfinv(x - 0.5), "i0": lambda m, x: m.i0(x),
    "i0e": lambda m, x: m.special.i0e(x), "i1": lambda m, x: m.special.i1(x),
    "i1e": lambda m, x: m.special.i1e(x), "ndtr": lambda m, x: m.special.ndtr(x),
    "ndtri": lambda m, x: m.special.ndtri(x / 2), "log_ndtr": lambda m, x: m.special.log_ndtr(x),
    "erfcx": lambda m, x: m.special.erfcx(x), "entr": lambda m, x: m.special.entr(x),
    "xlog1py": lambda m, x: m.special.xlog1py(x, x * x), "acosh": lambda m, x: m.acosh(x + 1),
    "asinh": lambda m, x: m.asinh(x), "atanh": lambda m, x: m.atanh(x - 0.5),
    "sinc": lambda m, x: m.sinc(x), "logit": lambda m, x: m.logit(x / 2),
    "logit_eps": lambda m, x: m.logit(x / 2, eps=0.1), "deg2rad": lambda m, x: m.deg2rad(x),
}


@pytest.mark.parametrize("name", sorted(THIRD_ORDER))
def test_third_derivative_vs_torch(name, torch):
    """Derivatives of every order: the VJPs are written with differentiable ops."""
    x_np = np.array([0.3, 0.55, 0.8, 1.6])
    res = []
    for m in (retrograd, torch):
        x = m.tensor(x_np, requires_grad=True)
        y = THIRD_ORDER[name](m, x)
        for _ in range(3):
            (y,) = m.autograd.grad(y.sum(), x, create_graph=True, allow_unused=True)
            if y is None or not y.requires_grad:
                break
        res.append(y)
    if res[1] is None or not res[1].requires_grad:  # torch's third derivative is a constant
        assert res[0] is None or not res[0].requires_grad or not res[0].detach().numpy().any()
        return
    check_same(res[0], res[1], TOL["float64"], f"{name} third derivative")
