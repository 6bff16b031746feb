"""``retrograd.special`` against ``torch.special``: one call per name, values and gradients."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd.ops import registry

from .helpers import TOL, check_same, leaves

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
