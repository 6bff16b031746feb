"""Op tests, ``lobpcg`` (ops/lobpcg.py): eigenpairs against PyTorch's LOBPCG, gradients
against its backward (B = None), the generalized problem, and the errors.

Eigenvectors are compared through sign-free quantities (their squares).  The differential
cases use m = 3 n, where LOBPCG's search space is the whole space by the third step, so
both libraries are exact to rounding, whatever their random starts.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

from .helpers import Case, case_checks

EIGH = {"grad_fn": "with a gradient required the pairs come from eigh (IndexSelectBackward0); "
                   "PyTorch's node is LOBPCGAutogradFunctionBackward",
        "structure": "the pairs come from eigh's graph, not one LOBPCG node"}

CASES = [
    Case("lobpcg_largest", lambda m, a: (lambda e, x: (e, x * x))(*m.lobpcg(a, k=2)),
         ((6, 6),), xfail=EIGH),
    Case("lobpcg_smallest_n", lambda m, a: (lambda e, x: (e, x * x))(
        *m.lobpcg(a, k=1, n=2, largest=False)), ((6, 6),), xfail=EIGH),
    Case("lobpcg_batched", lambda m, a: m.lobpcg(a, k=1)[0], ((2, 3, 3),), xfail=EIGH),
]

(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


def _problem(m, seed):
    rng = np.random.default_rng(seed)
    q = np.linalg.qr(rng.standard_normal((m, m)))[0]
    a = q @ np.diag(np.arange(1.0, m + 1)) @ q.T
    b = rng.standard_normal((m, m))
    return a, b @ b.T + m * np.eye(m)


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("with_b", [False, True])
def test_iterations_find_torchs_pairs(largest, with_b, torch):
    a, b = _problem(40, 1)
    got = []
    for m in (retrograd, torch):
        e, x = m.lobpcg(m.tensor(a), k=3, B=m.tensor(b) if with_b else None, largest=largest)
        got.append((e.numpy(), np.abs(x.numpy())))
    np.testing.assert_allclose(got[0][0], got[1][0], rtol=1e-10)
    np.testing.assert_allclose(got[0][1], got[1][1], atol=1e-6)  # both converge to tol


def test_a_given_start_and_preconditioner_converge():
    a, _ = _problem(30, 2)
    x0 = retrograd.tensor(np.random.default_rng(3).standard_normal((30, 2)))
    ik = retrograd.tensor(np.diag(1.0 / np.diag(a)))
    e, x = retrograd.lobpcg(retrograd.tensor(a), X=x0, iK=ik, largest=False)
    np.testing.assert_allclose(e.numpy(), [1.0, 2.0], rtol=1e-10)
    assert x.shape == (30, 2)


def test_backward_with_b_is_refused_as_torch(torch):
    a, b = _problem(9, 4)
    for m in (retrograd, torch):
        e, _ = m.lobpcg(m.tensor(a, requires_grad=True), k=2, B=m.tensor(b))
        with pytest.raises(ValueError, match="B != I"):
            e.sum().backward()


BAD = [
    ("not square", lambda m: m.lobpcg(m.zeros(4, 3)), "square"),
    ("too many pairs", lambda m: m.lobpcg(m.eye(5), k=2), "3 x the number"),
    ("B shape", lambda m: m.lobpcg(m.eye(6), B=m.eye(5)), "same shape"),
]


@pytest.mark.parametrize("call,words", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_lobpcg_errors_as_torch(call, words, torch):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)) as got:
        call(retrograd)
    assert words in str(got.value), str(got.value)
