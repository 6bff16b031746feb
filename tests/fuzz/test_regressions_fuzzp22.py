"""Fuzzer findings of stop 22's fresh ranges (18000000+, 18100000+) handled by fuzzP (issue
7, values and gradients): accepted differences must match their seed and refuse variants."""

import re

import pytest

torch = pytest.importorskip("torch")

from .program import program_from_text  # noqa: E402
from .runner import Failure, compare  # noqa: E402


# ------------------------------------------------ fuzzP's accepted entries: found and narrow
def _annotated(text, ops):
    """A parsed reproducer with the op names the generator gave (``ops``: target -> op)."""
    prog = program_from_text(text)
    for st in prog.steps:
        m = re.fullmatch(r"(v\d+)\.(\w+_)\(.*\)", st.text)
        if m:
            st.kind, st.on, st.op = "inplace", m.group(1), m.group(2)
        elif st.target in ops:
            st.op = ops[st.target]
    return prog


_ACCEPTED = {
    # (seed 18002641) PyTorch's float32 sigmoid(17) is 1.0, so logit of it is inf
    "_sigmoid_float32_rounding_at_logit": ("""
v8 = T.tensor([2, 7, 10, 13, 17, 8, 1, 9, 3, 4, 14], dtype=T.int64)
v10 = (v8.sigmoid()).logit()
""", {"v10": "logit"}),
}


@pytest.mark.parametrize("entry", sorted(_ACCEPTED))
def test_accepted_entry_matches_its_seed(entry):
    from . import known_bugs

    text, ops = _ACCEPTED[entry]
    prog = _annotated(text, ops)
    failure = compare(prog)
    assert failure is not None and getattr(known_bugs, entry)(prog, failure), failure


def test_sigmoid_logit_entry_stays_narrow():
    """The entry refuses the same program where retrograd's logit is the farther one, or
    where no float32 rounding is involved."""
    from . import known_bugs as kb

    text, ops = _ACCEPTED["_sigmoid_float32_rounding_at_logit"]
    prog = _annotated(text, ops)
    torch_row = "[1.9999995231628418, 7.000059127807617, 9.999540328979492, " \
        "12.997943878173828, inf, 8.000042915344238, 1.0, 9.000104904174805, " \
        "3.000000238418579, 3.9999983310699463, 13.996474266052246]"
    ours = torch_row.replace("inf", "16.63553237915039").replace("7.000059127807617",
                                                                 "6.999993801116943")
    near = Failure("value", "logit", f"v10: values differ\n  torch     {torch_row}\n"
                   f"  retrograd {ours}")
    assert kb._sigmoid_float32_rounding_at_logit(prog, near)
    # (retrograd farther from the float64 value at an element: a bug of ours)
    far = Failure("value", "logit", "v10: values differ\n  torch     " + torch_row +
                  "\n  retrograd " + ours.replace("6.999993801116943", "6.998"))
    assert not kb._sigmoid_float32_rounding_at_logit(prog, far)
    # (inf in retrograd where PyTorch is finite)
    swapped = Failure("value", "logit", f"v10: values differ\n  torch     {ours}\n"
                      f"  retrograd {torch_row}")
    assert not kb._sigmoid_float32_rounding_at_logit(prog, swapped)
    # (float64 throughout, or another op's value)
    f64 = _annotated(text.replace("T.int64", "T.float64").replace("[2, 7,", "[2.0, 7.0,"),
                     ops)
    assert not kb._sigmoid_float32_rounding_at_logit(f64, near)
    other = Failure("value", "digamma", near.message)
    assert not kb._sigmoid_float32_rounding_at_logit(prog, other)


_DIGAMMA = """
v2 = T.tensor([[-2.24, 0.97, 2.08], [2.34, 0.82, -1.36]], dtype=T.float32)
v3 = T.linalg.matrix_exp((v2 @ v2.mT).mul(0.3))
v8 = v3.digamma()
"""


def test_digamma_pole_entry_matches_its_seed_and_stays_narrow():
    """(seed 18218768) PyTorch's float32 matrix_exp is 1 ulp off (not symmetric) at
    -69.0065, where digamma's pole amplifies it; refused where retrograd's digamma is wrong
    for its own argument, or in float64."""
    from . import known_bugs as kb

    prog = _annotated(_DIGAMMA, {"v3": "linalg_square", "v8": "digamma"})
    failure = compare(prog)
    assert failure is not None and kb._float32_digamma_pole(prog, failure), failure
    torch_row = "[[4.405580043792725, 158.4224395751953], [158.2412109375, 4.097851753234863]]"
    wrong = Failure("value", "digamma", "v8: values differ\n  torch     " + torch_row +
                    "\n  retrograd [[4.405580043792725, 158.4224395751953], [159.5, "
                    "4.097851753234863]]")
    assert not kb._float32_digamma_pole(prog, wrong)
    f64 = _annotated(_DIGAMMA.replace("T.float32", "T.float64"),
                     {"v3": "linalg_square", "v8": "digamma"})
    assert not kb._float32_digamma_pole(f64, failure)
    # (the argument of another digamma form, far from a pole: 1 ulp there is no difference)
    far = _annotated(_DIGAMMA.replace("v3.digamma()", "T.digamma(v3.abs())"),
                     {"v3": "linalg_square", "v8": "digamma"})
    assert not kb._float32_digamma_pole(far, failure)


_LOG_DET = """
v1 = T.tensor([[[-1.14, 1.58], [-1.14, -2.73], [2.18, 0.0]], [[0.74, 1.24], [0.63, -1.71], \
[0.74, -2.23]]], dtype=T.float64)
v2 = (v1.abs().add(0.5)).lgamma()
v4 = T.linalg.det((v2 @ v2.mT))
v5 = v4.log2()
"""


def test_log_of_singular_det_entry_matches_its_seed_and_stays_narrow():
    """(seed 18300230) log2 of a rank-2 3x3 Gram matrix's det: -inf against -67.29;
    refused for a det of a regular matrix (the 2x2 Gram matrix)."""
    from . import known_bugs as kb

    ops = {"v2": "lgamma", "v4": "linalg_square", "v5": "log2"}
    prog = _annotated(_LOG_DET, ops)
    failure = compare(prog)
    assert failure is not None and kb._log_of_singular_det(prog, failure), failure
    regular = _annotated(_LOG_DET.replace("(v2 @ v2.mT)", "(v2.mT @ v2)"), ops)
    assert not kb._log_of_singular_det(regular, failure)
    # (stop 23: the entry checks by a rerun with the noise zeroed, not by the failing op)
