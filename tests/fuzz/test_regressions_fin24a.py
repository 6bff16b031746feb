"""Fuzzer findings of the final run of stop 24 handled by fin24a (issue 7): the sign of an
exactly zero det (accepted, seed 20609704); a norm's FMA residue amplified by sqrt (accepted,
seed 20609468)."""

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
