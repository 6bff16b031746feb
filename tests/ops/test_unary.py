"""Op tests, unary: more elementwise functions (ops/unary.py).

One table of cases; ``case_checks`` runs every check on every case (float64 gradcheck and
gradgradcheck, values and gradients against PyTorch in float32 and float64, the grad_fn
name and the whole graph's shape): see ``tests/ops/helpers.py``.
"""

from __future__ import annotations

import sys

import numpy as np

import retrograd

from .helpers import Case, case_checks

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
