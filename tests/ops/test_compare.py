"""isclose, allclose, equal (ops/compare.py) against PyTorch: values, dtypes, broadcasting,
nan and inf, tolerances, and PyTorch's errors (mixed dtypes, negative tolerances)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import retrograd

from .helpers import Case

NAN, INF = math.nan, math.inf
A = np.array([1.0, NAN, INF, -INF, 1e10, 0.0, 1.0, 1e-9])
B = np.array([1.000001, NAN, INF, INF, 1.00001e10, 1e-9, 1.1, 0.0])

# value cases (the registry's coverage check runs these too): (name, call, inputs)
CASES = [
    Case("isclose", lambda m, a, b: m.isclose(a, b), ((8,), (8,))),
    Case("allclose", lambda m, a, b: m.allclose(a, b), ((8,), (8,))),
    Case("equal", lambda m, a, b: m.equal(a, b), ((8,), (8,))),
]

CALLS = {
    "isclose": lambda m, a, b: m.isclose(a, b),
    "isclose_nan": lambda m, a, b: m.isclose(a, b, equal_nan=True),
    "isclose_tols": lambda m, a, b: m.isclose(a, b, rtol=0.2, atol=1e-3),
    "isclose_zero_tols": lambda m, a, b: a.isclose(b, rtol=0, atol=0),
    "isclose_kw": lambda m, a, b: m.isclose(input=a, other=b, rtol=1e-3),
    "allclose": lambda m, a, b: m.allclose(a, b),
    "allclose_loose": lambda m, a, b: a[:1].allclose(b[:1], rtol=1e-3),
    "allclose_nan": lambda m, a, b: m.allclose(a[:2], b[:2], equal_nan=True),
    "equal": lambda m, a, b: m.equal(a, b),
    "equal_self": lambda m, a, b: a[2:4].equal(a[2:4]),
    "equal_nan": lambda m, a, b: m.equal(a[1:2], a[1:2]),
    "equal_shapes": lambda m, a, b: m.equal(a[:2], a[:3]),
    "isclose_bcast": lambda m, a, b: m.isclose(a.reshape(8, 1), b),
}


def _same(r, t):
    if isinstance(t, bool):
        assert type(r) is bool and r == t
    else:
        assert str(r.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_array_equal(r.numpy(), t.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_values_vs_torch(name, dtype, torch):
    fn = CALLS[name]
    r = fn(retrograd, retrograd.tensor(A, dtype=getattr(retrograd, dtype)),
           retrograd.tensor(B, dtype=getattr(retrograd, dtype)))
    t = fn(torch, torch.tensor(A, dtype=getattr(torch, dtype)),
           torch.tensor(B, dtype=getattr(torch, dtype)))
    _same(r, t)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_cases_vs_torch(case, torch):
    xs = case.arrays()
    _same(case.call(retrograd, *[retrograd.tensor(x) for x in xs]),
          case.call(torch, *[torch.tensor(x) for x in xs]))


INTS = ([1, 2, 250, 7], [1, 3, 250, 6])


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("name", ["isclose", "isclose_tols", "allclose", "equal"])
def test_integer_and_bool_vs_torch(name, dtype, torch):
    fn = CALLS[name]
    a, b = (np.array(v).astype(dtype) for v in INTS)
    _same(fn(retrograd, retrograd.tensor(a), retrograd.tensor(b)),
          fn(torch, torch.tensor(a), torch.tensor(b)))


def test_equal_mixed_dtypes_vs_torch(torch):
    for m in (retrograd, torch):
        assert m.equal(m.tensor([1, 2]), m.tensor([1.0, 2.0])) is True
        assert m.equal(m.tensor([1, 2]), m.tensor([1.0, 2.5])) is False


@pytest.mark.parametrize("call", [
    lambda m: m.isclose(m.tensor([1]), m.tensor([1.0])),
    lambda m: m.allclose(m.tensor([1.0]), m.tensor([1.0], dtype=m.float64)),
    lambda m: m.isclose(m.tensor([1.0]), m.tensor([1.0]), rtol=-1),
    lambda m: m.isclose(m.tensor([1.0]), m.tensor([1.0]), atol=-1e-3),
    lambda m: m.isclose(m.tensor([1.0, 2.0]), m.tensor([1.0, 2.0, 3.0])),
    lambda m: m.isclose(m.tensor([1.0]), 1.0),
    lambda m: m.equal(m.tensor([1.0]), [1.0]),
], ids=["dtype", "dtype_allclose", "rtol", "atol", "shapes", "number", "list"])
def test_errors_vs_torch(call, torch):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)) as got:
        call(retrograd)
    if isinstance(want.value, RuntimeError):  # PyTorch's first words, then retrograd's advice
        assert str(got.value).startswith(str(want.value).split(" (")[0][:30])


def test_no_graph():
    a = retrograd.tensor([1.0, 2.0], requires_grad=True)
    r = retrograd.isclose(a, a * 1)
    assert r.grad_fn is None and not r.requires_grad
