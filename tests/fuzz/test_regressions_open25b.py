"""Fuzzer findings of stop 24's final run handled by open25b (issue 7).

- seed 20856220 (accepted): multi_margin_loss(p=2, reduction='sum') of an empty input is
  uninitialized memory in PyTorch 2.13 (its CPU kernel resizes the output to 0-d and returns
  before writing it), read downstream by erfinv and sign_: 1.0 against retrograd's 0.0.
"""

import math

import pytest

torch = pytest.importorskip("torch")

import retrograd  # noqa: E402

from . import known_bugs as kb  # noqa: E402
from .program import program_from_text  # noqa: E402
from .runner import compare  # noqa: E402

_SEED_20856220 = """
v2 = T.zeros((0, 1), dtype=T.float64)
v6 = T.zeros((0,), dtype=T.int64)
v7 = T.nn.functional.multi_margin_loss(v2, v6, p=2, reduction='sum')
v10 = v7.erfinv()
v10.sign_()
"""


def _margin_failure(text):
    """The program's failure, or a stand-in value failure at its last statement where
    PyTorch's uninitialized memory happened to read 0 this time (it is 6.9e-310 most)."""
    prog = program_from_text(text)
    failure = compare(prog)
    if failure is None:
        from .runner import Failure

        failure = Failure("value", "sign_", "v10: values differ")
    return prog, failure


def test_empty_margin_loss_read_downstream_accepted():
    prog, failure = _margin_failure(_SEED_20856220)
    assert failure.kind == "value", failure
    assert kb._margin_loss_empty_garbage_downstream(prog, failure)
    assert kb.which_known(prog, failure) is not None


@pytest.mark.parametrize("reduction", ["sum", "mean"])
@pytest.mark.parametrize("fn", ["multi_margin_loss", "multilabel_margin_loss"])
def test_empty_margin_loss_entry_matches_variants(fn, reduction):
    target = "T.zeros((0,), dtype=T.int64)" if fn == "multi_margin_loss" else \
        "T.zeros((0, 3), dtype=T.int64)"
    text = f"""
v2 = T.zeros((0, 3), dtype=T.float64, requires_grad=True)
v6 = {target}
v7 = T.nn.functional.{fn}(v2, v6, reduction='{reduction}')
v10 = v7.erfinv()
v10.sign_()
"""
    prog, failure = _margin_failure(text)
    assert kb._margin_loss_empty_garbage_downstream(prog, failure)


def test_empty_margin_loss_entry_stays_narrow():
    prog, failure = _margin_failure(_SEED_20856220)
    # (a non-empty input: PyTorch's loss is defined, nothing to blame on its memory)
    full = program_from_text(_SEED_20856220.replace("T.zeros((0, 1), dtype=T.float64)",
                                                    "T.zeros((2, 1), dtype=T.float64)")
                             .replace("T.zeros((0,), dtype=T.int64)",
                                      "T.zeros((2,), dtype=T.int64)"))
    assert not kb._margin_loss_empty_garbage_downstream(full, failure)
    # (reduction='none': an empty result, no uninitialized 0-d value)
    none = program_from_text(_SEED_20856220.replace("reduction='sum'", "reduction='none'"))
    assert not kb._margin_loss_empty_garbage_downstream(none, failure)
    # (a difference the loss's value does not explain: the rerun still disagrees)
    other = program_from_text(_SEED_20856220 + "v11 = T.tensor(1.0 if T.__name__ == "
                              "'torch' else 2.0)\n")
    f2 = compare(other)
    assert f2 is not None
    assert not kb._margin_loss_empty_garbage_downstream(other, f2)


@pytest.mark.parametrize("reduction", ["sum", "mean"])
@pytest.mark.parametrize("fn", ["multi_margin_loss", "multilabel_margin_loss"])
def test_empty_margin_loss_retrograd_value(fn, reduction):
    """retrograd's value for an empty batch is the empty reduction (PyTorch's is
    uninitialized memory, so compared with the other losses' empty reductions instead),
    0-d, of the input's dtype, and its gradient is empty."""
    x = retrograd.zeros((0, 3), dtype=retrograd.float64, requires_grad=True)
    target = retrograd.zeros((0,) if fn == "multi_margin_loss" else (0, 3),
                             dtype=retrograd.int64)
    out = getattr(retrograd.nn.functional, fn)(x, target, reduction=reduction)
    ref = torch.nn.functional.soft_margin_loss(torch.zeros(0, 3, dtype=torch.float64),
                                               torch.zeros(0, 3, dtype=torch.float64),
                                               reduction=reduction)
    assert out.shape == () and out.dtype == retrograd.float64
    assert (math.isnan(float(out)) and math.isnan(float(ref))) or float(out) == float(ref)
    out.backward()
    assert x.grad.shape == (0, 3)
