"""The op registry drives the op tests: every registered op must have cases in the tables.

The tables' calls are run once on retrograd with every public spelling of every op
(``retrograd.X``, ``Tensor.X`` and its operators, ``retrograd.special.X``,
``nn.functional.X``) wrapped to record which op a case calls; only the outermost call
counts, not what an op calls inside.  Then:

* a differentiable op needs a case whose gradients are checked: a ``CASES`` row (float64
  gradcheck, gradgradcheck and gradients against PyTorch) or, for an in-place form, an
  ``INPLACE_CASES`` row (gradients against PyTorch);
* every op needs a case comparing its values with PyTorch's (any table).

A new op registered without cases fails here, naming it.
"""

from __future__ import annotations

import importlib
import pkgutil
import warnings

import numpy as np
import pytest

import retrograd
from retrograd.ops import registry
from retrograd.tensor import Tensor

from . import test_dtypes, test_inplace
from .helpers import NAMESPACE_MODULES, recording_outermost_calls

def _case_modules():
    pkg = importlib.import_module(__package__)
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("test_") and info.name != "test_registry":
            yield importlib.import_module(f"{__package__}.{info.name}")


def _quietly(fn):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            fn()
        except Exception:  # noqa: BLE001 - error tables raise on purpose; the call counts
            pass


def _hits():
    """(ops with a gradient case, ops with a value case)."""
    m = retrograd
    grad_hits, value_hits = set(), set()
    with recording_outermost_calls() as hits:
        for mod in _case_modules():
            for c in getattr(mod, "CASES", ()):
                xs = [m.tensor(a).requires_grad_(True) for a in c.arrays()]
                _quietly(lambda c=c, xs=xs: c.call(m, *xs))
        grad_hits |= hits
        value_hits |= hits
        hits.clear()
        rng = np.random.default_rng(0)
        for _, fn, b_shape in test_inplace.INPLACE_CASES:
            y = m.tensor(rng.standard_normal((3, 4))).requires_grad_(True) * 1
            b = None if b_shape is None else m.tensor(rng.standard_normal(b_shape))
            _quietly(lambda fn=fn, y=y, b=b: fn(m, y, b))
        hits.discard("mul")  # the `* 1` that made y a non-leaf
        grad_hits |= hits
        value_hits |= hits
        hits.clear()
        for _, fn, inputs in test_dtypes.DTYPE_CASES:
            _quietly(lambda fn=fn, inputs=inputs: fn(m, *[
                m.tensor(v, dtype=getattr(m, d)) for v, d in inputs]))
        for _, op, dtype_name, args in test_dtypes._matrix_calls():
            _quietly(lambda op=op, d=dtype_name, args=args: getattr(
                m.tensor([[0, 1], [2, 3]], dtype=getattr(m, d)), op)(*args))
        for fn in test_dtypes._PAIR_OPS.values():
            _quietly(lambda fn=fn: fn(m, m.tensor([1.0, 2.0]), m.tensor([2.0, 1.0])))
        value_hits |= hits
    return grad_hits, value_hits


GRAD_HITS, VALUE_HITS = _hits()

# Ops that no table can compare with PyTorch, and why; each is tested on its own instead.
EXEMPT = {
    # its mask comes from NumPy's generator, not PyTorch's: the values cannot match torch's;
    # tests/ops/test_nn.py checks the mask's rate, the scale, the gradient and gradcheck
    "nn.functional.dropout",
}


def test_every_differentiable_op_has_a_gradient_case():
    missing = [e.key for e in registry.entries()
               if e.differentiable and e.key not in GRAD_HITS | EXEMPT]
    assert not missing, (
        f"differentiable ops registered without a gradient case: {missing}; add a case to "
        "CASES in tests/ops/test_<kind>.py (or INPLACE_CASES for an in-place form)")


def test_every_op_has_a_value_case():
    missing = [e.key for e in registry.entries() if e.key not in VALUE_HITS | EXEMPT]
    assert not missing, (
        f"ops registered without a case comparing values with PyTorch: {missing}; add one to "
        "tests/ops/test_<kind>.py (CASES) or test_dtypes.py (DTYPE_CASES)")


def test_the_coverage_check_can_fail():
    # an op registered now, and called by no table, is reported as missing
    def made_up(x):
        return x

    key = "nn.functional.made_up_op_for_this_test"
    registry.register(made_up, "made_up_op_for_this_test", function=False, method=False,
                      functional=("made_up_op_for_this_test",))
    try:
        assert key in {e.key for e in registry.entries()} and key not in VALUE_HITS
    finally:
        del registry._ENTRIES[key]
        for spot in [s for s, k in registry._TAKEN.items() if k == key]:
            del registry._TAKEN[spot]


@pytest.mark.parametrize("entry", registry.entries(), ids=lambda e: e.key)
def test_every_public_name_resolves(entry):
    for ns, names in entry.names.items():
        for n in names:
            assert getattr(NAMESPACE_MODULES[ns], n) is entry.fn, f"{ns}.{n}"
    for name, fn in entry.methods.items():
        assert Tensor.__dict__[name] is fn, f"Tensor.{name}"
    assert entry.jvp is None  # reserved slot, not yet filled (batch_rule: retrograd.func sets it)


# Spellings retrograd has that PyTorch 2.13 lacks (kept: code written for retrograd uses them)
NOT_IN_TORCH = {"torch.expand"}


def test_every_public_name_is_pytorchs(torch):
    owners = {"torch": torch, "special": torch.special, "linalg": torch.linalg,
              "nn.functional": torch.nn.functional}
    extra = set()
    for e in registry.entries():
        for ns, names in e.names.items():
            extra |= {f"{ns}.{n}" for n in names if not hasattr(owners[ns], n)}
        extra |= {f"Tensor.{m}" for m in e.methods if not hasattr(torch.Tensor, m)}
    assert extra == NOT_IN_TORCH
