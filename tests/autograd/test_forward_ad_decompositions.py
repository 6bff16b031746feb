"""Hand-written JVPs of linalg.qr, eigh, svd and lu (ops/linalg_jvp.py): equal to finite
differences, to PyTorch's forward AD (where both pick the same factors) and to the VJP's
transpose they replace; they run as rules (not the fallback) and differentiate again."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as R
import retrograd.autograd.forward_ad as fwAD
from retrograd.autograd import gradcheck
from retrograd.ops import _jvp as jvp_rules


def _sym(a):
    return a + a.swapaxes(-1, -2)


CASES = {  # name: (op(lib) -> f, shape, symmetric input)
    "qr square": (lambda m: m.linalg.qr, (4, 4), False),
    "qr tall": (lambda m: m.linalg.qr, (5, 3), False),
    "qr wide": (lambda m: m.linalg.qr, (3, 5), False),
    "qr batched": (lambda m: m.linalg.qr, (2, 4, 3), False),
    "eigh": (lambda m: m.linalg.eigh, (4, 4), True),
    "eigh batched": (lambda m: m.linalg.eigh, (2, 3, 3), True),
    "eigvalsh": (lambda m: (lambda x: (m.linalg.eigvalsh(x),)), (4, 4), True),
    "svd square": (lambda m: m.linalg.svd, (4, 4), False),
    "svd tall": (lambda m: (lambda x: m.linalg.svd(x, full_matrices=False)), (5, 3), False),
    "svd wide": (lambda m: (lambda x: m.linalg.svd(x, full_matrices=False)), (3, 5), False),
    "svdvals": (lambda m: (lambda x: (m.linalg.svdvals(x),)), (3, 5), False),
    "lu square": (lambda m: (lambda x: m.linalg.lu(x)[1:]), (4, 4), False),
    "lu tall": (lambda m: (lambda x: m.linalg.lu(x)[1:]), (5, 3), False),
    "lu wide": (lambda m: (lambda x: m.linalg.lu(x)[1:]), (3, 5), False),
    "lu batched": (lambda m: (lambda x: m.linalg.lu(x)[1:]), (2, 3, 3), False),
}
RULES = ("LinalgQrBackward0", "LinalgEighBackward0", "LinalgSvdBackward0")


def _inputs(name):
    _, shape, sym = CASES[name]
    rng = np.random.default_rng(abs(hash(name)) % 2 ** 32)
    a, t = rng.standard_normal(shape), rng.standard_normal(shape)
    return (_sym(a), _sym(t)) if sym else (a, t)


def _jvp(m, ad, f, a, t):
    with ad.dual_level():
        outs = f(ad.make_dual(m.tensor(a), m.tensor(t)))
        return [ad.unpack_dual(o).primal.numpy() for o in outs], \
               [ad.unpack_dual(o).tangent.numpy() for o in outs]


def _without_rules(fn):
    saved = {k: jvp_rules.JVPS.pop(k) for k in RULES}, dict(jvp_rules.JVPS_SAVED)
    jvp_rules.JVPS_SAVED.clear()
    try:
        return fn()
    finally:
        jvp_rules.JVPS.update(saved[0])
        jvp_rules.JVPS_SAVED.update(saved[1])


@pytest.mark.parametrize("name", list(CASES))
def test_jvp_vs_finite_differences_torch_and_the_fallback(name, torch):
    op, _, _ = CASES[name]
    a, t = _inputs(name)
    f = op(R)
    with R.autograd.trace() as tr:
        primals, tangents = _jvp(R, fwAD, f, a, t)
    assert [s.how for s in tr.forward_steps] == ["rule"], "the hand-written JVP ran"
    eps = 1e-6
    plus = [o.numpy() for o in f(R.tensor(a + eps * t))]
    minus = [o.numpy() for o in f(R.tensor(a - eps * t))]
    for i, (got, p, q) in enumerate(zip(tangents, plus, minus)):
        np.testing.assert_allclose(got, (p - q) / (2 * eps), rtol=1e-5, atol=1e-6,
                                   err_msg=f"{name} output {i} vs finite differences")
    fallback = _without_rules(lambda: _jvp(R, fwAD, f, a, t)[1])
    for i, (got, want) in enumerate(zip(tangents, fallback)):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11,
                                   err_msg=f"{name} output {i} vs the VJP's transpose")
    th_primals, th_tangents = _jvp(torch, torch.autograd.forward_ad, op(torch), a, t)
    if all(np.allclose(x, y, atol=1e-10) for x, y in zip(primals, th_primals)):
        for i, (got, want) in enumerate(zip(tangents, th_tangents)):
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11,
                                       err_msg=f"{name} output {i} vs PyTorch")
    else:  # LAPACK drivers may pick other signs of singular/eigen vectors: compare the
        # values' tangents, which do not depend on them
        assert name.startswith(("svd", "eigh")), f"{name}: primals differ from PyTorch's"
        k = 1 if name.startswith("svd") else 0
        np.testing.assert_allclose(tangents[k], th_tangents[k], rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name", ["qr tall", "eigh", "svd wide", "lu square"])
def test_tangents_differentiate_again(name):
    op, _, _ = CASES[name]
    a, t = _inputs(name)
    tangent = R.tensor(t)

    def tangent_of_output(x):
        if CASES[name][2]:  # eigh reads one triangle: perturb symmetrically
            x = x + x.mT
        with fwAD.dual_level():
            outs = op(R)(fwAD.make_dual(x, tangent))
            return tuple(fwAD.unpack_dual(o).tangent for o in outs)

    assert gradcheck(tangent_of_output, (R.tensor(a, requires_grad=True),))


def test_modes_without_a_forward_formula_fall_back():
    # qr's mode='r' has no derivative (as PyTorch): the fallback raises the VJP's error
    with fwAD.dual_level(), pytest.raises(RuntimeError, match="mode='r'"):
        R.linalg.qr(fwAD.make_dual(R.ones(3, 2), R.ones(3, 2)), mode="r")
    # a full-matrices SVD of a wide matrix: the fallback's JVP (the extra rows get none)
    a, t = _inputs("svd wide")
    with fwAD.dual_level():
        u, s, vh = R.linalg.svd(fwAD.make_dual(R.tensor(a), R.tensor(t)))
        assert fwAD.unpack_dual(vh).tangent.shape == vh.shape
