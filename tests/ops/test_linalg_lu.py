"""Op tests, the LU family and the Cholesky solves (ops/linalg_lu.py): linalg.lu_factor /
lu_factor_ex, linalg.lu, torch.lu, lu_unpack, linalg.lu_solve / torch.lu_solve,
cholesky_solve, cholesky_inverse; singular inputs, pivots, errors.

The case table (``case_checks``) runs on random matrices (LU needs no conditioning for its
factors; the solves use a + 4 I) and on Cholesky factors made as ``tril(a) + 3 I`` (its
diagonal positive), batched, broadcast, tall, wide and 1x1.
"""

from __future__ import annotations

import warnings

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


def chol(m, a):
    """A Cholesky factor (lower) from ``a``: its lower triangle + 3 I."""
    return m.tril(a) + 3 * m.eye(a.shape[-1], dtype=a.dtype)


for _shape in ((3, 3), (2, 3, 3), (4, 2), (2, 4), (1, 1)):
    _id = "x".join(map(str, _shape))
    case(f"lu_factor {_id}", lambda m, a: m.linalg.lu_factor(a), (_shape,))
    case(f"linalg.lu {_id}", lambda m, a: m.linalg.lu(a), (_shape,))
case("lu_factor_ex", lambda m, a: m.linalg.lu_factor_ex(a), ((2, 3, 3),))
case("lu_factor_ex check_errors", lambda m, a: m.linalg.lu_factor_ex(a, check_errors=True),
     ((3, 2),))
case("lu L only", lambda m, a: m.linalg.lu(a)[1], ((3, 3),))
case("lu U only", lambda m, a: m.linalg.lu(a).U, ((3, 4),))
case("torch.lu", lambda m, a: m.lu(a), ((3, 3),))
case("torch.lu get_infos", lambda m, a: m.lu(a, get_infos=True), ((2, 3, 2),))
case("Tensor.lu", lambda m, a: a.lu(pivot=True), ((2, 2),))
for _shape in ((3, 3), (2, 4, 2), (2, 4)):
    case(f"lu_unpack {'x'.join(map(str, _shape))}",
         lambda m, a: m.lu_unpack(*m.linalg.lu_factor(a)), (_shape,))
case("lu_unpack no pivots", lambda m, a: m.lu_unpack(*m.linalg.lu_factor(a),
                                                     unpack_pivots=False), ((3, 3),))
for _left in (True, False):
    for _adjoint in (False, True):
        case(f"lu_solve left={_left} adjoint={_adjoint}",
             lambda m, a, b, lf=_left, ad=_adjoint: m.linalg.lu_solve(
                 *m.linalg.lu_factor(wc(m, a)), b, left=lf, adjoint=ad),
             ((3, 3), (3, 2) if _left else (2, 3)))
case("lu_solve broadcast", lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(wc(m, a)), b),
     ((2, 1, 3, 3), (4, 3, 2)))
case("lu_solve 1x1", lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(wc(m, a)), b),
     ((1, 1), (1, 3)))
case("torch.lu_solve", lambda m, b, a: m.lu_solve(b, *m.linalg.lu_factor(wc(m, a))),
     ((2, 3, 1), (2, 3, 3)))
case("Tensor.lu_solve", lambda m, b, a: b.lu_solve(*m.lu(wc(m, a))), ((3, 2), (3, 3)))
for _upper in (False, True):
    case(f"cholesky_solve upper={_upper}", lambda m, b, a, u=_upper: m.cholesky_solve(
        b, chol(m, a).mT if u else chol(m, a), upper=u), ((3, 2), (3, 3)))
    case(f"cholesky_inverse upper={_upper}", lambda m, a, u=_upper: m.cholesky_inverse(
        chol(m, a).mT if u else chol(m, a), upper=u), ((2, 3, 3),))
case("cholesky_solve broadcast", lambda m, b, a: m.cholesky_solve(b, chol(m, a)),
     ((2, 1, 3, 2), (4, 3, 3)))
case("Tensor.cholesky_solve", lambda m, b, a: b.cholesky_solve(chol(m, a)), ((2, 2), (2, 2)))
case("Tensor.cholesky_inverse", lambda m, a: chol(m, a).cholesky_inverse(), ((1, 1),))

# LDL (ops/linalg_ldl.py): no derivative, as PyTorch's (a NotImplemented node that raises)
_NO_DERIVATIVE = {k: "no derivative, as PyTorch's (its NotImplemented node raises)"
                  for k in ("gradcheck", "gradgradcheck", "grads")}
case("ldl_factor", lambda m, a: m.linalg.ldl_factor(a + a.mT), ((2, 3, 3),), xfail=_NO_DERIVATIVE)
case("ldl_factor_ex", lambda m, a: m.linalg.ldl_factor_ex(a + a.mT, hermitian=True), ((4, 4),),
     xfail=_NO_DERIVATIVE)
case("ldl_solve", lambda m, a, b: m.linalg.ldl_solve(*m.linalg.ldl_factor(a + a.mT), b),
     ((2, 3, 3), (3, 2)), xfail=_NO_DERIVATIVE)


(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


def _singular(m):
    a = np.zeros((2, 3, 3))
    a[0] = np.eye(3)
    a[1] = [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]]
    return m.tensor(a)


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.lu_factor(_singular(m)),
    lambda m: m.linalg.lu_factor(m.zeros(3, 3)),
    lambda m: m.linalg.lu_factor_ex(_singular(m), check_errors=True),
])
def test_a_zero_pivot_raises_as_torch(call, torch):
    with pytest.raises(RuntimeError) as want:
        call(torch)
    with pytest.raises(retrograd.linalg.LinAlgError) as got:
        call(retrograd)
    assert str(got.value) == str(want.value)  # (PyTorch's is a RuntimeError, ours a subclass)


def test_singular_factorisations_as_torch(torch):
    # info, the factors and the pivots of singular matrices (no error: _ex, linalg.lu, torch.lu)
    rows = [[0.0, 0.0, 0.0], [1.0, 2.0, 0.0], [2.0, 4.0, 0.0]]
    got, want = [
        (m.linalg.lu_factor_ex(_singular(m)), m.linalg.lu(_singular(m)),
         m.lu(m.tensor(rows), get_infos=True), m.linalg.lu_factor_ex(m.zeros(2, 3)))
        for m in (retrograd, torch)]
    for g, w in zip(got, want):
        for x, y in zip(g, w):
            assert str(x.dtype).split(".")[-1] == str(y.dtype).split(".")[-1]
            np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-12, atol=1e-15)


def test_large_matrices_match_torch(torch):
    # big enough for SciPy's getrf (when installed): the same pivots and factors
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 60, 60))
    got = retrograd.linalg.lu_factor(retrograd.tensor(a))
    want = torch.linalg.lu_factor(torch.tensor(a))
    np.testing.assert_array_equal(got.pivots.numpy(), want.pivots.numpy())
    np.testing.assert_allclose(got.LU.numpy(), want.LU.numpy(), rtol=1e-9, atol=1e-12)
    # and the solves with SciPy's triangular solves (both orientations), values and grads
    b = rng.standard_normal((60, 3))
    for adjoint in (False, True):
        res = []
        for m in (retrograd, torch):
            x = m.tensor(a, requires_grad=True)
            y = m.tensor(b, requires_grad=True)
            out = m.linalg.lu_solve(*m.linalg.lu_factor(x), y, adjoint=adjoint)
            out.sin().sum().backward()
            res.append([out.detach().numpy(), x.grad.numpy(), y.grad.numpy()])
        for g, w in zip(*res):
            np.testing.assert_allclose(g, w, rtol=1e-8, atol=1e-10)


def test_lu_solve_accepts_torch_lu_factors_and_reconstructs(torch):
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((3, 4, 4)), rng.standard_normal((3, 4, 2))
    p, low, up = retrograd.linalg.lu(retrograd.tensor(a))
    np.testing.assert_allclose((p @ low @ up).numpy(), a, atol=1e-12)
    x = retrograd.linalg.lu_solve(*retrograd.linalg.lu_factor(retrograd.tensor(a)),
                                  retrograd.tensor(b))
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(a, b), rtol=1e-9)


def test_empty_matrices_as_torch(torch):
    calls = [lambda m: m.linalg.lu_factor(m.zeros(2, 0, 0)),
             lambda m: m.linalg.lu_factor_ex(m.zeros(0, 3)),
             lambda m: m.linalg.lu(m.zeros(0, 3)),
             lambda m: m.linalg.lu(m.zeros(3, 0, 2)),
             lambda m: m.lu_unpack(*m.linalg.lu_factor(m.zeros(2, 0, 0))),
             lambda m: (m.linalg.lu_solve(*m.linalg.lu_factor(m.eye(2)), m.zeros(2, 0)),),
             lambda m: (m.cholesky_solve(m.zeros(0, 2), m.zeros(0, 0)),),
             lambda m: (m.cholesky_inverse(m.zeros(2, 0, 0)),)]
    for call in calls:
        got, want = call(retrograd), call(torch)
        assert [tuple(x.shape) for x in got] == [tuple(x.shape) for x in want]
        assert [str(x.dtype)[-5:] for x in got] == [str(x.dtype)[-5:] for x in want]


def test_argument_errors_match_torch(torch):
    piv = np.array([1, 2, 3], dtype=np.int32)
    calls = [
        lambda m: m.linalg.lu_factor(m.ones(3)),
        lambda m: m.linalg.lu_factor(m.ones(3, 3, dtype=m.int64)),
        lambda m: m.linalg.lu_factor(m.ones(3, 3), pivot=False),
        lambda m: m.linalg.lu(m.ones(3, 3), pivot=False),
        lambda m: m.linalg.lu_solve(m.eye(3), m.tensor(piv), m.ones(4, 2)),
        lambda m: m.linalg.lu_solve(m.eye(3), m.tensor(piv).long(), m.ones(3, 2)),
        lambda m: m.linalg.lu_solve(m.ones(3, 2), m.tensor(piv[:2]), m.ones(3, 2)),
        lambda m: m.linalg.lu_solve(m.eye(3), m.tensor(piv), m.ones(3, 2, dtype=m.float64)),
        lambda m: m.lu_unpack(m.eye(3), m.ones(3)),
        lambda m: m.cholesky_solve(m.ones(3, 2), m.eye(4)),
        lambda m: m.cholesky_solve(m.ones(3), m.eye(3)),
        lambda m: m.cholesky_inverse(m.ones(3, 4)),
    ]
    for call in calls:
        with pytest.raises(Exception) as want:
            call(torch)
        with pytest.raises(type(want.value)):
            call(retrograd)


def test_result_types_as_torch(torch):
    a = np.eye(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch.lu's deprecation notice
        for call in (lambda m: m.linalg.lu_factor(m.tensor(a)),
                     lambda m: m.linalg.lu_factor_ex(m.tensor(a)),
                     lambda m: m.linalg.lu(m.tensor(a)),
                     lambda m: m.lu_unpack(*m.linalg.lu_factor(m.tensor(a))),
                     lambda m: m.lu(m.tensor(a), get_infos=True)):
            got, want = call(retrograd), call(torch)
            assert type(got).__name__ == type(want).__name__
            assert all(hasattr(want, f) for f in got._fields) and len(got) == len(want)
        assert type(retrograd.lu(retrograd.tensor(a))) is tuple


def test_second_derivatives_through_lu_solve_match_torch(torch):
    # a Hessian-vector product through lu_factor and lu_solve (create_graph)
    rng = np.random.default_rng(8)
    a, b, v = rng.standard_normal((3, 3)) + 4 * np.eye(3), rng.standard_normal((3, 2)), \
        rng.standard_normal((3, 3))
    results = []
    for m in (retrograd, torch):
        x = m.tensor(a, requires_grad=True)
        out = m.linalg.lu_solve(*m.linalg.lu_factor(x), m.tensor(b)).pow(2).sum()
        (g,) = m.autograd.grad(out, x, create_graph=True)
        (h,) = m.autograd.grad((g * m.tensor(v)).sum(), x)
        results.append(h.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-9, atol=1e-12)


# ----------------------------------------------------------------- det / slogdet fixes


def test_det_takes_input_keyword_and_linalg_det_takes_a(torch):
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    for m in (retrograd, torch):
        assert m.det(input=m.tensor(a)).item() == pytest.approx(5.0)
        assert m.linalg.det(A=m.tensor(a)).item() == pytest.approx(5.0)
        with pytest.raises(TypeError):
            m.linalg.det(input=m.tensor(a))


@pytest.mark.parametrize("mats", [
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]],
    [[[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [2.0, 4.0]]],  # a batch, one singular matrix
])
def test_slogdet_gradient_at_a_singular_matrix_as_torch(mats, torch):
    # PyTorch solves A^T X = g I with A's LU factors: inf and nan, no error
    grads = []
    for m in (retrograd, torch):
        x = m.tensor(mats, dtype=m.float64, requires_grad=True)
        m.linalg.slogdet(x).logabsdet.sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-15)


def test_slogdet_gradient_at_a_singular_matrix_is_not_finite(torch):
    # where the zero pivot's inf meets the other factor, BLAS kernels differ (PyTorch's MKL
    # gives a finite row where OpenBLAS and reference LAPACK give nan): retrograd follows
    # LAPACK's getrs; the row of the zero pivot is the same in both
    a = [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]]
    grads = []
    for m in (retrograd, torch):
        x = m.tensor(a, dtype=m.float64, requires_grad=True)
        m.logdet(x).backward()
        grads.append(x.grad.numpy())
    assert not np.isfinite(grads[0]).any()
    np.testing.assert_array_equal(grads[0][0], grads[1][0])
    # and twice differentiable where it is defined (create_graph goes through lu_factor)
    x = retrograd.tensor([[2.0, 1.0], [1.0, 3.0]], dtype=retrograd.float64, requires_grad=True)
    assert retrograd.autograd.gradgradcheck(lambda t: retrograd.linalg.slogdet(t)[1], (x,))


def test_ldl_as_torch(torch):
    rng = np.random.default_rng(9)
    a = rng.standard_normal((3, 5, 5))
    a = a + a.swapaxes(-1, -2)
    a[2] = 0.0  # an exactly singular D: info, and an error without _ex
    b = rng.standard_normal((5, 2))
    got, want = [(m.linalg.ldl_factor_ex(m.tensor(a)),
                  m.linalg.ldl_solve(*m.linalg.ldl_factor(m.tensor(a[:2])), m.tensor(b)))
                 for m in (retrograd, torch)]
    for g, w in zip(list(got[0]) + [got[1]], list(want[0]) + [want[1]]):
        assert str(g.dtype)[-5:] == str(w.dtype)[-5:] and tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-10, atol=1e-12)
    with pytest.raises(RuntimeError):
        torch.linalg.ldl_factor(torch.tensor(a))
    with pytest.raises(retrograd.linalg.LinAlgError, match="Batch element 2"):
        retrograd.linalg.ldl_factor(retrograd.tensor(a))
    for m in (retrograd, torch):
        ld = m.linalg.ldl_factor(m.tensor(a[:2], requires_grad=True)).LD
        with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex"):
            ld.sum().backward()
        with pytest.raises(RuntimeError):
            m.linalg.ldl_factor(m.ones(3, 4))
        with pytest.raises(RuntimeError):
            m.linalg.ldl_solve(m.eye(3), m.ones(3, dtype=m.int32), m.ones(4, 2))


def test_old_names_warn_once_as_torch():
    from retrograd.ops import linalg_lu

    linalg_lu._WARNED.clear()
    a = retrograd.eye(2)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for _ in range(2):
            lu, piv = retrograd.lu(a)
            retrograd.lu_solve(retrograd.ones(2, 1), lu, piv)
    messages = [str(w.message) for w in seen if w.category is UserWarning]
    assert len(messages) == 2
    assert "torch.lu is deprecated" in messages[0]
    assert "torch.lu_solve is deprecated" in messages[1]


def test_out_and_keyword_names_as_torch(torch):
    a = np.array([[4.0, 1.0], [2.0, 3.0]])
    chol = np.array([[2.0, 0.0], [1.0, 1.5]])
    b = np.array([[1.0], [2.0]])
    for m in (retrograd, torch):
        lu, piv = m.linalg.lu_factor(m.tensor(a))
        outs = [m.empty(2, 1, dtype=m.float64), m.empty(2, 1, dtype=m.float64),
                m.empty(2, dtype=m.float64), m.empty(2, 2, dtype=m.float64)]
        got = [m.linalg.lu_solve(LU=lu, pivots=piv, B=m.tensor(b), adjoint=True, out=outs[0]),
               m.cholesky_solve(input=m.tensor(b), input2=m.tensor(chol), out=outs[1]),
               m.linalg.tensorsolve(input=m.tensor(a), other=m.tensor(b[:, 0]), out=outs[2]),
               m.cholesky_inverse(input=m.tensor(chol), out=outs[3])]
        want = [np.linalg.solve(a.T, b), np.linalg.solve(chol @ chol.T, b),
                np.linalg.solve(a, b[:, 0]), np.linalg.inv(chol @ chol.T)]
        for g, o, w in zip(got, outs, want):
            assert g is o
            np.testing.assert_allclose(o.numpy(), w, rtol=1e-12)


_KEYWORD_CALLS = [
    lambda m, e, piv: m.linalg.tensorinv(input=e, ind=1),
    lambda m, e, piv: m.linalg.householder_product(input=e, tau=e[0]),
    lambda m, e, piv: m.linalg.matrix_exp(input=e),
    lambda m, e, piv: m.matrix_exp(input=e),
    lambda m, e, piv: m.linalg.lu_factor(A=e),
    lambda m, e, piv: m.linalg.lu(A=e),
    lambda m, e, piv: m.linalg.ldl_factor(input=e),
    lambda m, e, piv: m.linalg.ldl_factor_ex(input=e),
    lambda m, e, piv: m.linalg.ldl_solve(LD=e, pivots=piv, B=e),
    lambda m, e, piv: m.linalg.vander(x=e[0]),
    lambda m, e, piv: m.lu_unpack(LU_data=e, LU_pivots=piv),
    lambda m, e, piv: m.ormqr(input=e, input2=e[0], input3=e),
    lambda m, e, piv: m.geqrf(input=e),
]


@pytest.mark.parametrize("call", _KEYWORD_CALLS)
def test_keyword_names_as_torch(call, torch):
    for m in (retrograd, torch):
        call(m, m.eye(2, dtype=m.float64), m.tensor([1, 2], dtype=m.int32))
