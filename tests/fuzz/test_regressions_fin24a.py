"""Fuzzer findings of the final run of stop 24 handled by fin24a (issue 7): the sign of an
exactly zero det (accepted, seed 20609704); a norm's FMA residue amplified by sqrt (accepted,
seed 20609468); float32 cond of an ill-conditioned matrix (accepted, seed 20704027)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import retrograd  # noqa: E402

from . import known_bugs as kb  # noqa: E402
from .program import program_from_text  # noqa: E402
from .runner import compare  # noqa: E402

_SEED_20609704 = """
v1 = T.tensor([[2.84], [0.91], [0.49], [-0.0]], dtype=T.float64)
v3 = T.linalg.det((v1 @ v1.mT))
v5 = T.tensor([-1.0, 0.0, 0.0, 0.0], dtype=T.float64)
v7 = v5.atan()
v7.atan2_(v3)
"""


def test_det_signed_zero_accepted():
    """(seed 20609704) PyTorch's det of the singular v @ v.mT is -0.0, retrograd's +0.0, and
    atan2_ reads the sign; the entry matches the program."""
    prog = program_from_text(_SEED_20609704)
    failure = compare(prog)
    assert failure is not None and failure.kind == "value", failure
    assert kb._det_signed_zero(prog, failure)
    assert kb.which_known(prog, failure) is not None
    a = np.array([[2.84], [0.91], [0.49], [-0.0]])
    t = float(torch.linalg.det(torch.tensor(a @ a.T)))
    r = float(retrograd.linalg.det(retrograd.tensor(a @ a.T)))
    assert t == r == 0.0 and np.signbit(t) and not np.signbit(r)


def test_det_signed_zero_entry_stays_narrow():
    prog = program_from_text(_SEED_20609704)
    failure = compare(prog)
    # (a det that is not zero: nothing to blame on the sign of a zero)
    regular = program_from_text(_SEED_20609704.replace("(v1 @ v1.mT)", "(v1 @ v1.mT + "
                                                       "T.eye(4, dtype=v1.dtype))"))
    assert not kb._det_signed_zero(regular, failure)
    # (no det at all)
    plain = program_from_text(_SEED_20609704.replace("T.linalg.det((v1 @ v1.mT))",
                                                     "(v1 @ v1.mT).sum()"))
    assert not kb._det_signed_zero(plain, failure)


_SEED_20609468 = """
v0 = T.tensor([[1.63, -0.49], [0.19, 0.0], [-0.49, -0.49]], dtype=T.float64)
v1 = v0.unflatten(0, (1, 3))
v2 = T.nn.functional.instance_norm(v1)
v3 = v2.amax(dim=-2, keepdim=True)
v7 = v3.sqrt()
"""


def test_instance_norm_residue_through_sqrt_accepted():
    """(seed 20609468) PyTorch's instance_norm of the equal instance (-0.49, -0.49) is
    ~1e-14 (its FMA residue), retrograd's exactly 0; amax picks it, sqrt amplifies it."""
    prog = program_from_text(_SEED_20609468)
    failure = compare(prog)
    assert failure is not None and failure.kind == "value", failure
    assert kb._norm_fma_residue_amplified(prog, failure)
    assert kb.which_known(prog, failure) is not None
    x = [[[1.63, -0.49], [0.19, 0.0], [-0.49, -0.49]]]
    t = torch.nn.functional.instance_norm(torch.tensor(x, dtype=torch.float64))[0, 2]
    r = retrograd.nn.functional.instance_norm(retrograd.tensor(x, dtype=retrograd.float64))
    assert 0 < float(t.abs().max()) < 1e-13 and not r[0, 2].numpy().any()


def test_norm_residue_entry_stays_narrow():
    prog = program_from_text(_SEED_20609468)
    failure = compare(prog)
    # (no instance of equal values: no residue to blame)
    distinct = program_from_text(_SEED_20609468.replace("[-0.49, -0.49]", "[-0.49, 0.5]"))
    assert not kb._norm_fma_residue_amplified(distinct, failure)
    # (no norm at all)
    plain = program_from_text(_SEED_20609468.replace("T.nn.functional.instance_norm(v1)",
                                                     "v1.tanh()"))
    assert not kb._norm_fma_residue_amplified(plain, failure)


_SEED_20704027 = """
v0 = T.tensor([[[1.0, -1.0, -2.0, -1.0], [-1.0, -0.0, 2.0, -1.0], [-2.0, -3.0, -3.0, 0.0]], [[-0.0, -1.0, 0.0, 0.0], [-2.0, 1.0, 2.0, -1.0], [-1.0, 0.0, 2.0, -1.0]]], dtype=T.float32)
v0.exp_()
v1 = v0.exp()
v2 = T.tensor([[-1.0, -0.0, 2.0], [0.0, -4.0, 1.0]], dtype=T.float64)
v3 = T.select_scatter(v1, v2, -1, 3)
v4 = T.linalg.cond(((v3 @ v3.mT) + 4 * T.eye(3, dtype=v3.dtype)))
"""  # noqa: E501 - the reproducer as printed


def test_float32_cond_conditioning_accepted():
    """(seed 20704027) cond 4.5e5 in float32: PyTorch's is 2e-3 off the float64 cond of its
    own matrix, retrograd's within 1e-6 of its own."""
    prog = program_from_text(_SEED_20704027)
    failure = compare(prog)
    assert failure is not None and failure.kind == "value", failure
    assert kb._float32_cond_conditioning(prog, failure)
    assert kb.which_known(prog, failure) is not None


def test_float32_cond_entry_stays_narrow():
    prog = program_from_text(_SEED_20704027)
    failure = compare(prog)
    # (float64 throughout: not float32 conditioning)
    as64 = program_from_text(_SEED_20704027.replace("dtype=T.float32", "dtype=T.float64"))
    assert not kb._float32_cond_conditioning(as64, failure)
    # (a well-conditioned matrix: the conds agree, nothing to accept)
    small = program_from_text(_SEED_20704027.replace("v1 = v0.exp()", "v1 = v0.tanh()"))
    assert not kb._float32_cond_conditioning(small, failure)


def test_float32_cond_past_one_over_eps_accepted():
    """(seed 20704027 as replayed) cond 9.4e8, past 1/eps of float32: the two float32
    matrices differ by 2 ulp after exp of exp, and PyTorch's cond is 3.3e6 off the float64
    cond of its matrix where retrograd's is 3e3 off its own; accepted at the cond itself."""
    text = _SEED_20704027.replace(
        "[[[1.0, -1.0, -2.0, -1.0], [-1.0, -0.0, 2.0, -1.0], [-2.0, -3.0, -3.0, 0.0]], "
        "[[-0.0, -1.0, 0.0, 0.0], [-2.0, 1.0, 2.0, -1.0], [-1.0, 0.0, 2.0, -1.0]]]",
        "[[[1.28, -0.98, -1.58, -1.18], [-1.19, -0.42, 1.79, -1.04], [-1.58, -2.63, -2.63, "
        "0.0]], [[-0.01, -1.18, 0.23, 0.0], [-2.46, 0.87, 2.42, -1.44], [-0.96, 0.04, 1.65, "
        "-0.51]]]")
    prog = program_from_text(text)
    failure = compare(prog)
    assert failure is not None and failure.message.startswith("v4:"), failure
    assert kb._float32_cond_conditioning(prog, failure)
