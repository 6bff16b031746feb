"""Op tests, matrix functions and Householder products (ops/linalg_matfn.py):
linalg.matrix_exp / matrix_exp, linalg.vander, linalg.tensorinv, linalg.tensorsolve,
linalg.householder_product, ormqr, geqrf; errors, empty and 1x1 inputs.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

from .helpers import Case, case_checks

CASES: list[Case] = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


def wc(m, a):
    """A well-conditioned square matrix (batch) from ``a``: a + 4 I."""
    return a + 4 * m.eye(a.shape[-1], dtype=a.dtype)


case("matrix_exp", lambda m, a: m.linalg.matrix_exp(a), ((3, 3),))
case("matrix_exp batched", lambda m, a: m.matrix_exp(a), ((2, 2, 2),))
case("matrix_exp scaled", lambda m, a: (4 * a).matrix_exp(), ((2, 2),))  # (squarings)
case("matrix_exp 1x1", lambda m, a: m.linalg.matrix_exp(a), ((1, 1),))
case("vander", lambda m, x: m.linalg.vander(x), ((3,),))
case("vander N batched", lambda m, x: m.linalg.vander(x, N=4), ((2, 3),))
case("tensorinv", lambda m, a: m.linalg.tensorinv(wc(m, a.reshape(6, 6)).reshape(2, 3, 6)),
     ((6, 6),))
case("tensorinv ind=1", lambda m, a: m.linalg.tensorinv(wc(m, a).reshape(4, 2, 2), ind=1),
     ((4, 4),))
case("tensorsolve", lambda m, a, b: m.linalg.tensorsolve(
    wc(m, a).reshape(2, 3, 6), b), ((6, 6), (2, 3)))
case("tensorsolve dims", lambda m, a, b: m.linalg.tensorsolve(
    wc(m, a).reshape(6, 2, 3), b, dims=(0,)), ((6, 6), (2, 3)))
case("householder_product", lambda m, a, t: m.linalg.householder_product(a, t),
     ((4, 3), (2,)))
case("householder_product batched square", lambda m, a, t: m.linalg.householder_product(a, t),
     ((2, 3, 3), (2, 3)))
for _left in (True, False):
    for _transpose in (False, True):
        case(f"ormqr left={_left} transpose={_transpose}",
             lambda m, a, t, c, lf=_left, tr=_transpose: m.ormqr(a, t, c, left=lf, transpose=tr),
             ((4, 3), (3,), (4, 2) if _left else (2, 4)))
case("Tensor.ormqr batched", lambda m, a, t, c: a.ormqr(t, c), ((2, 3, 2), (2, 2), (2, 3, 3)))

_NO_DERIVATIVE = "geqrf has no derivative (PyTorch's GeqrfBackward0 raises too)"
case("geqrf", lambda m, a: m.geqrf(a), ((4, 3),),
     xfail={k: _NO_DERIVATIVE for k in ("gradcheck", "gradgradcheck", "grads")})
case("Tensor.geqrf batched wide", lambda m, a: a.geqrf(), ((2, 2, 3),),
     xfail={k: _NO_DERIVATIVE for k in ("gradcheck", "gradgradcheck", "grads")})


(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


def test_matrix_exp_of_large_and_special_matrices_as_torch(torch):
    rng = np.random.default_rng(2)
    mats = [rng.standard_normal((3, 5, 5)) * [[[0.01]], [[3.0]], [[20.0]]],
            np.zeros((2, 3, 3)), np.diag([1.0, -2.0, 0.5]), rng.standard_normal((40, 40))]
    for a in mats:
        got = retrograd.linalg.matrix_exp(retrograd.tensor(a)).numpy()
        want = torch.linalg.matrix_exp(torch.tensor(a)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12 * np.abs(want).max())
    f32 = retrograd.matrix_exp(retrograd.tensor(mats[0], dtype=retrograd.float32))
    assert f32.dtype == retrograd.float32


def test_matrix_exp_third_derivative_matches_torch(torch):
    # the block-matrix derivative is matrix_exp again: every order (here the third)
    a = np.array([[0.3, -0.7], [0.5, 0.1]])
    results = []
    for m in (retrograd, torch):
        x = m.tensor(a, requires_grad=True)
        (g,) = m.autograd.grad(m.linalg.matrix_exp(x).sin().sum(), x, create_graph=True)
        (h,) = m.autograd.grad(g.pow(2).sum(), x, create_graph=True)
        (t,) = m.autograd.grad(h.sum(), x)
        results.append(t.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-9)


def test_geqrf_as_torch(torch):
    rng = np.random.default_rng(6)
    for shape in ((5, 3), (2, 3, 4), (1, 1), (0, 3)):
        a = rng.standard_normal(shape)
        got = retrograd.geqrf(retrograd.tensor(a))
        want = torch.geqrf(torch.tensor(a))
        assert type(got).__name__ == type(want).__name__ and got._fields == ("a", "tau")
        for g, w in zip(got, want):
            assert tuple(g.shape) == tuple(w.shape)
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-10, atol=1e-12)
    # geqrf then householder_product is Q of the QR factorisation
    a = rng.standard_normal((4, 3))
    q = retrograd.linalg.householder_product(*retrograd.geqrf(retrograd.tensor(a)))
    np.testing.assert_allclose(np.abs(q.numpy()), np.abs(np.linalg.qr(a)[0]), atol=1e-12)


def test_geqrf_has_no_derivative_as_torch(torch):
    for m in (retrograd, torch):
        a, tau = m.geqrf(m.ones(3, 2, dtype=m.float64, requires_grad=True))
        assert a.requires_grad and a.grad_fn is not None
        with pytest.raises(RuntimeError, match="derivative for 'geqrf' is not implemented"):
            a.sum().backward()


def test_vander_dtypes_as_torch(torch):
    for values, dtype in (([1, 2, 3], "int64"), ([1, 2], "int32"), ([0.5, 2.0], "float32")):
        got = retrograd.linalg.vander(retrograd.tensor(values, dtype=getattr(retrograd, dtype)),
                                      N=3)
        want = torch.linalg.vander(torch.tensor(values, dtype=getattr(torch, dtype)), N=3)
        assert str(got.dtype)[-5:] == str(want.dtype)[-5:]
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_empty_inputs_as_torch(torch):
    calls = [lambda m: m.linalg.matrix_exp(m.zeros(2, 0, 0)),
             lambda m: m.linalg.vander(m.zeros(0, 3)),
             lambda m: m.linalg.householder_product(m.zeros(3, 0), m.zeros(0)),
             lambda m: m.ormqr(m.zeros(3, 0), m.zeros(0), m.ones(3, 2))]
    for call in calls:
        got, want = call(retrograd), call(torch)
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.numpy(), want.numpy())


def test_argument_errors_match_torch(torch):
    calls = [
        lambda m: m.linalg.matrix_exp(m.ones(3, 4)),
        lambda m: m.linalg.matrix_exp(m.ones(3)),
        lambda m: m.linalg.vander(m.ones(3), N=1),
        lambda m: m.linalg.vander(m.tensor(1.0)),
        lambda m: m.linalg.tensorinv(m.ones(4, 6, 8, 3), ind=0),
        lambda m: m.linalg.tensorinv(m.ones(4, 6, 8), ind=2),
        lambda m: m.linalg.tensorsolve(m.ones(2, 3, 6), m.ones(2, 2)),
        lambda m: m.linalg.householder_product(m.ones(3, 4), m.ones(2)),
        lambda m: m.linalg.householder_product(m.ones(4, 3), m.ones(4)),
        lambda m: m.linalg.householder_product(m.ones(4, 3), m.ones(2, dtype=m.float64)),
        lambda m: m.ormqr(m.ones(4, 3), m.ones(2), m.ones(3, 2)),
        lambda m: m.ormqr(m.ones(4, 3), m.ones(2), m.ones(4)),
        lambda m: m.ormqr(m.ones(4, 3), m.ones(2), m.ones(4, 2)),
        lambda m: m.geqrf(m.ones(3)),
        lambda m: m.geqrf(m.ones(3, 3, dtype=m.int64)),
        lambda m: m.linalg.householder_product(m.ones(2, 2, dtype=m.int64),
                                               m.ones(2, dtype=m.int64)),
        lambda m: m.ormqr(m.ones(2, 2, dtype=m.int64), m.ones(2, dtype=m.int64),
                          m.ones(2, 2, dtype=m.int64)),
        lambda m: m.linalg.matrix_exp(m.ones(2, 2, dtype=m.int64)),
        lambda m: m.cholesky_inverse(m.ones(2, 2, dtype=m.int64)),
        lambda m: m.cholesky_solve(m.ones(2, 1, dtype=m.int64), m.ones(2, 2, dtype=m.int64)),
    ]
    for call in calls:
        with pytest.raises(Exception) as want:
            call(torch)
        with pytest.raises(type(want.value)):
            call(retrograd)


@pytest.mark.parametrize("module", ["linalg_lu", "linalg_ldl", "linalg_matfn"])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    mod = importlib.import_module(f"retrograd.ops.{module}")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("shape", [(2, 0, 0), (0, 0, 0), (2, 3, 3)])
def test_matrix_exp_create_graph_gradient_graph_as_torch(shape, torch):
    """The create_graph gradient is the upper right block of exp([[A^T, g], [0, A^T]]) cut
    with two narrows, as PyTorch's: SliceBackward0 over SliceBackward0, also for an empty
    (k, 0, 0) batch, where an index of the whole block was an AliasBackward0."""
    seen = []
    for m in (retrograd, torch):
        a = m.zeros(shape, dtype=m.float64, requires_grad=True)
        (g,) = m.autograd.grad(m.linalg.matrix_exp(a).sum(), [a], create_graph=True)
        inner = g.grad_fn.next_functions[0][0]
        seen.append((tuple(g.shape), type(g.grad_fn).__name__, type(inner).__name__))
    assert seen[0] == seen[1]
