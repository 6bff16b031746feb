"""Op tests, logical: predicates, logical and bitwise ops, heaviside/gcd/lcm, igamma/igammac
(ops/logical.py) and PyTorch's aliases and top-level in-place functions (ops/aliases.py).

``CASES`` holds every call (the registry's coverage check runs them); the differentiable
ones run all the checks of ``tests/ops/helpers.py``, the others are compared with PyTorch by
``test_values_vs_torch`` (values, dtypes, shapes, Python bools).  Below: dtypes, in-place
forms, special values, 0-d and empty inputs, and errors.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import retrograd

from .differential import check_both
from .helpers import Case, case_checks

NAN, INF = math.nan, math.inf
SPECIAL = np.array([1.0, -0.0, 0.0, NAN, INF, -INF, -2.5])
A_IGAMMA = np.array([[0.5, 1.0, 2.0, 3.5], [1.5, 0.7, 4.0, 2.2], [1.0, 2.0, 0.9, 5.0]])

CASES: list[Case] = []
GRAD_CASES: list[Case] = []


def case(*args, grad=False, **kwargs):
    c = Case(*args, **kwargs)
    CASES.append(c)
    if grad:
        GRAD_CASES.append(c)


def _sp(m, x):
    return m.tensor(SPECIAL, dtype=x.dtype)


def _ints(m, x, dtype="int64"):
    return (x.detach() * 10).round().to(getattr(m, dtype))


# elementwise predicates (bool results, never recorded)
for _name in ("isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "signbit"):
    case(_name, lambda m, x, n=_name: getattr(m, n)(_sp(m, x)), ((7,),))
    case(f"{_name}_method", lambda m, x, n=_name: getattr(x, n)(), ((2, 3),))
    case(f"{_name}_int", lambda m, x, n=_name: getattr(m, n)(_ints(m, x)), ((5,),))
# tensor predicates (Python bools)
case("is_nonzero", lambda m, x: m.is_nonzero(x[:1]), ((3,),))
case("is_nonzero_zero", lambda m, x: (x[0] * 0).is_nonzero(), ((3,),))
case("is_same_size", lambda m, a, b: m.is_same_size(a, b), ((2, 3), (2, 3)))
case("is_same_size_no", lambda m, a, b: a.is_same_size(b), ((2, 3), (3, 2)))
case("is_signed", lambda m, x: (m.is_signed(x), x.is_signed(), _ints(m, x, "uint8").is_signed(),
                                (x > 0).is_signed(), _ints(m, x, "int8").is_signed()), ((2,),))
case("is_complex", lambda m, x: (m.is_complex(x), x.is_complex()), ((2,),))
case("is_conj_neg", lambda m, x: (m.is_conj(x), x.is_conj(), m.is_neg(x), x.is_neg()), ((2,),))
# logical ops, any dtypes
case("logical_and", lambda m, a, b: m.logical_and(a > 0, b), ((3, 4), (3, 4)))
case("logical_or", lambda m, a, b: a.logical_or(_ints(m, b)), ((3, 1), (1, 4)))
case("logical_xor", lambda m, a, b: m.logical_xor(a, b > 0), ((4,), (2, 3, 4)))
case("logical_xor_method", lambda m, a: a.logical_xor(a * 0), ((3,),))
case("logical_not_fn", lambda m, a: m.logical_not(_ints(m, a)), ((5,),))
case("logical_and_", lambda m, a, b: (a.detach() * 1).logical_and_(b > 0), ((3, 4), (4,)))
case("logical_or_", lambda m, a, b: (a.detach() > 0).logical_or_(b), ((3, 4), (3, 4)))
case("logical_xor_", lambda m, a, b: _ints(m, a).logical_xor_(b), ((3, 4), ()))
# bitwise ops and their operators
case("bitwise_and", lambda m, a, b: m.bitwise_and(_ints(m, a), _ints(m, b)), ((3, 4), (4,)))
case("bitwise_or", lambda m, a, b: _ints(m, a).bitwise_or(_ints(m, b)), ((3, 4), (3, 4)))
case("bitwise_xor", lambda m, a, b: m.bitwise_xor(a > 0, b > 0), ((5,), (5,)))
case("bitwise_not", lambda m, a: m.bitwise_not(_ints(m, a, "int32")), ((5,),))
case("bitwise_shifts", lambda m, a: (m.bitwise_left_shift(_ints(m, a).abs(), 2),
                                      _ints(m, a).bitwise_right_shift(1),
                                      3 << _ints(m, a).abs() % 5, 64 >> _ints(m, a).abs() % 5),
     ((5,),))
case("bitwise_and_", lambda m, a, b: _ints(m, a).bitwise_and_(_ints(m, b)), ((5,), (5,)))
case("bitwise_or_", lambda m, a, b: _ints(m, a).bitwise_or_(_ints(m, b)), ((5,), (5,)))
case("bitwise_shift_", lambda m, a: (_ints(m, a).abs().bitwise_left_shift_(2),
                                     _ints(m, a).bitwise_right_shift_(1)), ((5,),))
case("all_any", lambda m, a: (m.all(a > 0), m.any(a > 0, dim=1), m.all(a, 0, keepdim=True)),
     ((3, 4),))
# heaviside, gcd, lcm
case("heaviside", lambda m, a, b: m.heaviside(a * (a.abs() > 0.5), b), ((3, 4), (4,)))
case("heaviside_", lambda m, a: (a.detach() * (a.detach() > 0.3)).heaviside_(
    m.tensor([0.5], dtype=a.dtype)), ((6,),))
case("gcd", lambda m, a, b: m.gcd(_ints(m, a), _ints(m, b)), ((3, 4), (4,)))
case("lcm", lambda m, a, b: _ints(m, a, "int32").lcm(_ints(m, b, "int32")), ((6,), (6,)))
case("gcd_lcm_", lambda m, a, b: (m.gcd_(_ints(m, a), _ints(m, b)),
                                  _ints(m, a).lcm_(_ints(m, b))), ((6,), (6,)))
# igamma / igammac: a gradient for `other` only (PyTorch has none for `input`)
for _name in ("igamma", "igammac"):
    case(_name, lambda m, x, n=_name: getattr(m, n)(m.tensor(A_IGAMMA, dtype=x.dtype), x),
         ((3, 4),), "pos", grad=True)
    case(f"{_name}_method", lambda m, x, n=_name: getattr(m.tensor(A_IGAMMA[0], dtype=x.dtype),
                                                           n)(x), ((4,),), "pos", grad=True)
    case(f"{_name}_", lambda m, x, n=_name: getattr(x.detach() + 0.5, n + "_")(
        m.tensor(A_IGAMMA[1], dtype=x.dtype)), ((4,),), "pos")
case("special_gammainc", lambda m, x: (m.special.gammainc(m.tensor(A_IGAMMA[2], dtype=x.dtype), x),
                                       m.special.gammaincc(m.tensor(A_IGAMMA[1], dtype=x.dtype),
                                                           x)), ((4,),), "pos",
     grad=True)
# aliases: the same op under PyTorch's other names, methods and in-place forms
case("absolute", lambda m, x: (m.absolute(x), x.absolute()), ((3, 4),), "nonzero", grad=True)
case("arctan2", lambda m, a, b: m.arctan2(a, b) + a.arctan2(b), ((3, 4), (4,)), "nonzero",
     grad=True)
case("multiply", lambda m, a, b: m.multiply(a, b) + a.multiply(2), ((3, 1), (1, 4)), grad=True)
case("divide", lambda m, a, b: (m.divide(a, b), a.divide(b, rounding_mode="floor"),
                                m.divide(a, b, rounding_mode="trunc")), ((3, 4), (4,)),
     "nonzero", grad=True)
case("subtract", lambda m, a, b: m.subtract(a, b, alpha=2) + a.subtract(b), ((3, 4), (3, 4)),
     grad=True)
case("negative", lambda m, a: (m.negative(a), a.negative()), ((2, 3),), grad=True)
case("fix", lambda m, a: (m.fix(a * 3), a.fix()), ((2, 3),), grad=True)
case("comparison_aliases", lambda m, a, b: (m.greater(a, b), a.greater_equal(b), m.less(a, 0),
                                            a.less_equal(b), m.not_equal(a, b)), ((3, 4), (4,)))
case("floor_divide", lambda m, a, b: (m.floor_divide(a, b), a.floor_divide(2)), ((3, 4), (4,)),
     "nonzero")
case("reciprocal_fn", lambda m, a: m.reciprocal(a), ((3,),), "nonzero", grad=True)
case("masked_fill_fn", lambda m, a: m.masked_fill(a, a > 0, 1.5), ((3, 4),), grad=True)
case("detach_fn", lambda m, a: m.detach(a * 2), ((3,),))
case("detach__fn", lambda m, a: m.detach_(a * 2), ((3,),))
case("imag", lambda m, a: m.imag(a), ((3,),))
case("imag_property", lambda m, a: a.imag, ((3,),))
# the in-place aliases and top-level in-place functions
case("alias_inplace", lambda m, a, b: (
    (a * 1).absolute_(), (a * 1).multiply_(b), (a * 1).divide_(b, rounding_mode="floor"),
    (a * 1).subtract_(b, alpha=3), (a * 1).negative_(), (a * 1).fix_(),
    (a * 1).arctan2_(b)), ((3, 4), (4,)), "nonzero", grad=True)
case("comparison_aliases_", lambda m, a, b: (
    (a * 1).greater_(b), (a * 1).greater_equal_(b), (a * 1).less_(b), (a * 1).less_equal_(b),
    (a * 1).not_equal_(b), (a.detach() * 1).floor_divide_(b.detach())), ((3, 4), (4,)),
    "nonzero")
case("top_level_inplace", lambda m, a: (
    m.abs_(a * 1), m.sin_(a * 1), m.exp_(a * 1), m.relu_(a * 1), m.clamp_(a * 1, -0.5, 0.5),
    m.negative_(a * 1), m.fix_(a * 1), m.reciprocal_(a * 1), m.sigmoid_(a * 1),
    m.square_(a * 1), m.xlogy_(a * 1, a.abs() + 1), m.rad2deg_(a * 1)), ((2, 3),), "nonzero",
     grad=True)
case("top_level_fills", lambda m, a: (m.zero_(a.detach() * 1), m.fill_(a.detach() * 1, 2.5)),
     ((2, 3),))

(test_gradcheck, test_gradgradcheck, test_values_and_grads_vs_torch_f32_f64,
 test_grads_vs_torch, test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = \
    case_checks(GRAD_CASES)


def _outputs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _same(r, t):
    if isinstance(t, bool):
        assert type(r) is bool and r == t
        return
    assert tuple(r.shape) == tuple(t.shape)
    assert str(r.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert r.requires_grad == t.requires_grad
    np.testing.assert_allclose(r.detach().numpy(), t.detach().numpy(), rtol=1e-6, atol=1e-7,
                               equal_nan=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_values_vs_torch(case, dtype, torch):
    """Every case (differentiable or not): values, dtypes, shapes, or the exception class."""
    got = []
    for m in (retrograd, torch):
        xs = [m.tensor(a, dtype=getattr(m, dtype)).requires_grad_(True) for a in case.arrays()]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                got.append(_outputs(case.call(m, *xs)))
        except Exception as e:  # noqa: BLE001 - the class is compared
            got.append(type(e))
    r, t = got
    if isinstance(t, type):
        assert r is t or (isinstance(r, type) and issubclass(r, t)), (r, t)
        return
    assert not isinstance(r, type), f"retrograd raised {r}"
    assert len(r) == len(t)
    for a, b in zip(r, t):
        _same(a, b)


# ----------------------------------------------------------------- dtypes and special values

DTYPES = ["float32", "float64", "float16", "int64", "int32", "int8", "uint8", "bool"]
VALUES = [3.0, -2.0, 0.0, 1.0, -0.0, 7.0]


def _outcome(m, fn, dtype, values=VALUES):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(m, m.tensor(np.array(values), dtype=getattr(m, dtype)))
    except Exception as e:  # noqa: BLE001
        return type(e)


def _compare(r, t):
    if isinstance(t, type):
        assert r is t or (isinstance(r, type) and issubclass(r, t)), (r, t)
    else:
        assert not isinstance(r, type), f"retrograd raised {r}, torch gave {t}"
        for a, b in zip(_outputs(r), _outputs(t)):
            _same(a, b)


DTYPE_CALLS = {
    "isnan": lambda m, x: m.isnan(x), "isinf": lambda m, x: x.isinf(),
    "isfinite": lambda m, x: m.isfinite(x), "isposinf": lambda m, x: m.isposinf(x),
    "isneginf": lambda m, x: x.isneginf(), "isreal": lambda m, x: m.isreal(x),
    "signbit": lambda m, x: m.signbit(x), "is_signed": lambda m, x: m.is_signed(x),
    "logical_and": lambda m, x: m.logical_and(x, x.flip(0)),
    "logical_xor_": lambda m, x: x.clone().logical_xor_(x.flip(0)),
    "logical_or_float": lambda m, x: m.logical_or(x, m.tensor(0.5)),
    "bitwise_and": lambda m, x: m.bitwise_and(x, x.flip(0)),
    "bitwise_or_3": lambda m, x: x | 3, "bitwise_xor": lambda m, x: m.bitwise_xor(x, x),
    "bitwise_not": lambda m, x: m.bitwise_not(x), "lshift": lambda m, x: x << 1,
    "bitwise_and_": lambda m, x: x.clone().bitwise_and_(x.flip(0)),
    "gcd": lambda m, x: m.gcd(x, x.flip(0)), "lcm": lambda m, x: m.lcm(x, x.flip(0)),
    "heaviside": lambda m, x: m.heaviside(x, x.flip(0)),
    "igamma": lambda m, x: m.igamma(x.abs(), x.abs()),
    "floor_divide": lambda m, x: m.floor_divide(x, 2),
    "divide_trunc": lambda m, x: m.divide(x, 2, rounding_mode="trunc"),
    "all": lambda m, x: m.all(x), "any_dim": lambda m, x: m.any(x, 0),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(DTYPE_CALLS))
def test_dtypes_vs_torch(name, dtype, torch):
    fn = DTYPE_CALLS[name]
    _compare(_outcome(retrograd, fn, dtype), _outcome(torch, fn, dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite", "isposinf", "isneginf",
                                  "signbit", "isreal"])
def test_predicates_at_special_values(name, dtype, torch):
    vals = [1.0, -0.0, 0.0, NAN, -NAN, INF, -INF, -2.5, 1e-40]
    fn = DTYPE_CALLS[name]
    _compare(_outcome(retrograd, fn, dtype, vals), _outcome(torch, fn, dtype, vals))


@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3)])
@pytest.mark.parametrize("name", ["isnan", "signbit", "logical_and", "bitwise_and", "gcd",
                                  "heaviside", "all", "isposinf"])
def test_zero_dim_and_empty(name, shape, torch):
    fn = DTYPE_CALLS[name]
    n = int(np.prod(shape))
    for dtype in ("float64", "int64"):
        vals = np.arange(n, dtype=np.float64).reshape(shape) - 1
        _compare(_outcome(retrograd, fn, dtype, vals), _outcome(torch, fn, dtype, vals))


def test_predicates_record_nothing():
    x = retrograd.tensor([1.0, NAN], requires_grad=True)
    for out in (retrograd.isnan(x), x.signbit(), retrograd.logical_xor(x, x),
                retrograd.isfinite(x * 2)):
        assert out.grad_fn is None and not out.requires_grad


def test_logical_inplace_records_nothing(torch):
    # PyTorch 2.13: x.logical_and_(y) keeps x's grad_fn (and writes 1/0 in x's dtype)
    for m in (retrograd, torch):
        x = m.tensor([1.0, 0.0, 2.0], requires_grad=True) * 1
        version = x._version
        y = x.logical_and_(m.tensor([1.0, 1.0, 0.0]))
        assert y is x and x._version == version + 1
        name = x.grad_fn.name()
        assert name == "MulBackward0"
        assert x.tolist() == [1.0, 0.0, 0.0]


def test_alias_is_the_op():
    m = retrograd
    assert m.multiply is m.mul and m.absolute is m.abs and m.Tensor.fix is m.Tensor.trunc
    # (retrograd.abs_ is the method under a vmap-aware wrapper: retrograd.func)
    assert getattr(m.abs_, "__wrapped__", m.abs_) is m.Tensor.abs_
    assert m.special.gammainc is m.igamma


def test_igamma_input_gradient_raises(torch):
    for m in (retrograd, torch):
        a = m.tensor([0.5, 1.5], requires_grad=True)
        out = m.igamma(a, m.tensor([1.0, 2.0]))
        with pytest.raises(NotImplementedError, match="igamma: input"):
            out.sum().backward()


def test_heaviside_has_no_derivative(torch):
    for m in (retrograd, torch):
        out = m.heaviside(m.tensor([-1.0, 0.0, 2.0], requires_grad=True), m.tensor([0.5]))
        assert out.requires_grad
        with pytest.raises(RuntimeError, match="derivative for aten::heaviside"):
            out.sum().backward()


def test_boundaries_vs_torch(torch):
    # abs'(0) = 0 through the alias; fix's gradient is zero; divide by a rounding mode too
    check_both(torch, lambda m, x: m.absolute(x), np.array([0.0, -1.0, 2.0]))
    check_both(torch, lambda m, x: m.fix(x), np.array([0.0, -1.5, 2.5]))
    check_both(torch, lambda m, x, y: m.divide(x, y, rounding_mode="floor"),
               np.array([3.0, -3.0]), np.array([2.0, 2.0]))
    check_both(torch, lambda m, x: m.igamma(m.tensor([1.0, 2.0], dtype=x.dtype), x),
               np.array([0.5, 3.0]))


# ----------------------------------------------------------------- errors


ERRORS = {
    "is_nonzero_empty": (lambda m: m.is_nonzero(m.tensor([])), RuntimeError, "no values"),
    "is_nonzero_many": (lambda m: m.tensor([1, 2]).is_nonzero(), RuntimeError,
                        "more than one value"),
    "is_nonzero_number": (lambda m: m.is_nonzero(1), TypeError, "is_nonzero"),
    "bitwise_and_float": (lambda m: m.bitwise_and(m.tensor([1.0]), m.tensor([1.0])),
                          NotImplementedError, "bitwise_and"),
    "gcd_float": (lambda m: m.gcd(m.tensor([1.0]), m.tensor([2.0])), NotImplementedError, "gcd"),
    "heaviside_dtypes": (lambda m: m.heaviside(m.tensor([1.0]), m.tensor([1])), RuntimeError,
                         "heaviside"),
    "logical_and_bcast": (lambda m: m.logical_and(m.ones(2, 3), m.ones(4)), RuntimeError,
                          "size of tensor"),
    "logical_and_inplace_shape": (lambda m: m.ones(3).logical_and_(m.ones(2, 3)), RuntimeError,
                                  "shape"),
    "imag_real": (lambda m: m.imag(m.ones(2)), RuntimeError, "imag"),
    "igamma_int": (lambda m: m.igamma(m.tensor([1]), m.tensor([1])), NotImplementedError,
                   "igamma"),
    "divide_mode": (lambda m: m.divide(m.ones(2), 2, rounding_mode="round"), RuntimeError,
                    "rounding_mode"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_as_torch(name, torch):
    fn, cls, words = ERRORS[name]
    with pytest.raises(cls) as got:
        fn(retrograd)
    assert words in str(got.value)
    with pytest.raises(cls):
        fn(torch)


def test_floor_divide_records_as_torch(torch):
    # PyTorch records floor_divide (function, method, // and its reflection) when an operand
    # requires grad, with a node whose backward raises; integer tensors record nothing
    for m in (retrograd, torch):
        a = m.tensor([3.0, -4.5], requires_grad=True)
        for out in (m.floor_divide(a, 2), a.floor_divide(a), a // 2, 7 // a):
            assert out.requires_grad
            name = out.grad_fn.name()
            assert name == "torch::autograd::NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::floor_divide is not"):
            (7 // a).sum().backward()
        assert (7 // m.tensor([2, 3])).tolist() == [3, 2]
        assert (m.tensor([2.0]) // 2).grad_fn is None


@pytest.mark.parametrize("call", [
    lambda m, o: m.logical_and(m.tensor([1.0, 0, 2]), m.tensor([1.0, 1, 0]), out=o(m, 3)),
    lambda m, o: m.isposinf(m.tensor([1.0, INF, 2]), out=o(m, 3, "bool")),
    lambda m, o: m.gcd(m.tensor([4, 6]), m.tensor([6, 4]), out=o(m, 0, "int64")),
    lambda m, o: m.heaviside(m.tensor([-1.0, 0, 1]), m.tensor([0.5]), out=o(m, 0)),
], ids=["logical_and", "isposinf", "gcd", "heaviside"])
def test_out_as_torch(call, torch):
    def make(m, n, dtype="float32"):
        return m.empty(n, dtype=getattr(m, dtype))

    r, t = call(retrograd, make), call(torch, make)
    assert r.tolist() == t.tolist()
    assert str(r.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
