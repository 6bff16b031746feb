"""Op tests, decompositions (ops/linalg_decomp.py, ops/linalg_decomp_lstsq.py): cholesky,
qr, eigh / eigvalsh, svd / svdvals, lstsq, matrix_rank, cond.

The case table goes through the wrappers PyTorch's own gradchecks use: a symmetric
(positive-definite) input built from the free one for cholesky and eigh (they read one
triangle), and losses that do not depend on the sign of singular or eigen vectors (``U * U``,
``V * V``; only the first k = min(m, n) columns of a full U).  Edge shapes, errors and the
fields of the results are checked below against PyTorch.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import retrograd

from .helpers import Case, case_checks

CASES: list[Case] = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


def spd(m, a):
    """A symmetric positive-definite matrix (batch) from ``a``: a^T a + n I (the product
    elementwise and summed: a batched matmul records a graph of another shape than
    PyTorch's, which the structure check would compare)."""
    n = a.shape[-1]
    return (a.unsqueeze(-1) * a.unsqueeze(-2)).sum(-3) + n * m.eye(n, dtype=a.dtype)


def sym(m, a):
    return a + a.mT


def svd_gauge(r, k):
    """The SVD's results less their sign gauge (first k columns of U, rows of Vh)."""
    u, s, vh = r
    u, vh = u[..., :k], vh[..., :k, :]
    return u * u, s, vh * vh


# ----------------------------------------------------------------- cholesky
case("cholesky", lambda m, a: m.linalg.cholesky(spd(m, a)), ((3, 3),))
case("cholesky_batched", lambda m, a: m.linalg.cholesky(spd(m, a)), ((2, 3, 3),))
case("cholesky_upper", lambda m, a: m.linalg.cholesky(spd(m, a), upper=True), ((2, 3, 3),))
case("cholesky_1x1", lambda m, a: m.linalg.cholesky(a * a + 1), ((1, 1),))
case("cholesky_ex", lambda m, a: m.linalg.cholesky_ex(spd(m, a)).L, ((2, 3, 3),))
case("cholesky_ex_upper", lambda m, a: m.linalg.cholesky_ex(spd(m, a), upper=True)[0],
     ((3, 3),))
case("cholesky_old", lambda m, a: m.cholesky(spd(m, a)), ((3, 3),))
case("cholesky_method_upper", lambda m, a: spd(m, a).cholesky(upper=True), ((2, 2, 2),))
# ----------------------------------------------------------------- qr
case("qr_tall", lambda m, a: m.linalg.qr(a), ((4, 3),))
case("qr_square_batched", lambda m, a: m.linalg.qr(a), ((2, 3, 3),))
case("qr_wide_batched", lambda m, a: tuple(m.linalg.qr(a)), ((2, 3, 5),))
case("qr_complete_wide", lambda m, a: m.linalg.qr(a, mode="complete"), ((3, 4),))
case("qr_complete_square", lambda m, a: m.linalg.qr(a, "complete"), ((3, 3),))
case("qr_1x1", lambda m, a: m.linalg.qr(a), ((1, 1),))
case("qr_old", lambda m, a: m.qr(a), ((4, 2),))
case("qr_method_some_false", lambda m, a: a.qr(some=False), ((2, 4),))
# ----------------------------------------------------------------- eigh
case("eigh", lambda m, a: (lambda r: (r[0], r[1] * r[1]))(m.linalg.eigh(sym(m, a))), ((3, 3),))
case("eigh_batched_upper", lambda m, a: (lambda r: (r.eigenvalues, r.eigenvectors ** 2))(
    m.linalg.eigh(sym(m, a), UPLO="U")), ((2, 4, 4),))
case("eigh_1x1", lambda m, a: m.linalg.eigh(a)[0], ((1, 1),))
case("eigh_vectors_product", lambda m, a: (lambda r: r[1] @ m.diag_embed(r[0].exp()) @ r[1].mT)(
    m.linalg.eigh(sym(m, a))), ((3, 3),))
case("eigvalsh", lambda m, a: m.linalg.eigvalsh(sym(m, a)), ((2, 3, 3),))
case("eigvalsh_upper", lambda m, a: m.linalg.eigvalsh(sym(m, a), "U"), ((3, 3),))
# ----------------------------------------------------------------- svd
case("svd_thin_tall", lambda m, a: svd_gauge(m.linalg.svd(a, full_matrices=False), 3),
     ((4, 3),))
case("svd_full_tall", lambda m, a: svd_gauge(m.linalg.svd(a), 2), ((2, 4, 2),))
case("svd_full_wide", lambda m, a: svd_gauge(m.linalg.svd(a), 3), ((3, 5),))
case("svd_thin_wide_batched", lambda m, a: svd_gauge(m.linalg.svd(a, False), 2), ((2, 2, 4),))
case("svd_square_product", lambda m, a: (lambda r: r.U @ m.diag_embed(r.S ** 2) @ r.Vh)(
    m.linalg.svd(a)), ((3, 3),))
case("svd_1x1", lambda m, a: m.linalg.svd(a)[1], ((1, 1),))
case("svdvals", lambda m, a: m.linalg.svdvals(a), ((2, 3, 5),))
case("svdvals_tall", lambda m, a: m.linalg.svdvals(a), ((4, 2),))
case("svd_old", lambda m, a: (lambda r: (r.U * r.U, r.S, r.V * r.V))(m.svd(a)), ((4, 3),))
case("svd_old_some_false", lambda m, a: (lambda r: (r.U[..., :2] ** 2, r.S, r.V ** 2))(
    m.svd(a, some=False)), ((2, 3, 2),))
case("svd_old_no_uv", lambda m, a: m.svd(a, compute_uv=False), ((3, 4),))
case("svd_method", lambda m, a: (lambda r: (r[0] ** 2, r[1]))(a.svd()), ((3, 3),))
# ----------------------------------------------------------------- lstsq, rank, cond
case("lstsq", lambda m, a, b: m.linalg.lstsq(a, b), ((4, 3), (4, 2)))
# (singular_values, which need no gradient, are compared below: gradcheck would differentiate
# them numerically)
case("lstsq_gelsd_batched", lambda m, a, b: m.linalg.lstsq(a, b, driver="gelsd")[:3],
     ((2, 4, 3), (2, 4, 2)))
case("lstsq_gels", lambda m, a, b: m.linalg.lstsq(a, b, driver="gels"), ((5, 2), (5, 3)))
case("lstsq_gelss_vector", lambda m, a, b: m.linalg.lstsq(a, b, driver="gelss")[:3],
     ((4, 2), (4,)))
case("lstsq_wide", lambda m, a, b: m.linalg.lstsq(a, b).solution, ((3, 5), (3, 2)))
case("lstsq_broadcast", lambda m, a, b: m.linalg.lstsq(a, b, driver="gelsd")[:2],
     ((2, 3, 2), (1, 3, 2)))
case("lstsq_rcond", lambda m, a, b: m.linalg.lstsq(a, b, 1e-3, driver="gelsd")[:3],
     ((4, 3), (4, 1)))
case("matrix_rank", lambda m, a: (m.linalg.matrix_rank(a), m.linalg.svdvals(a)), ((2, 3, 4),))
case("matrix_rank_hermitian_tol", lambda m, a: (
    m.linalg.matrix_rank(sym(m, a), hermitian=True, atol=0.5), m.linalg.eigvalsh(sym(m, a))),
    ((2, 3, 3),))
case("matrix_rank_old_tol", lambda m, a: (m.linalg.matrix_rank(a, 1.0), a * 2), ((3, 3),))
_TORCH_COND_BACKWARD = ("PyTorch 2.13's own backward of linalg.cond(p=1, -1, inf, -inf, 'fro') "
                        "raises (it modifies inv_ex's saved output in place); retrograd's "
                        "gradients are checked by gradcheck and gradgradcheck")
for _p in (None, 2, -2, "nuc"):
    case(f"cond_{_p}", lambda m, a, p=_p: m.linalg.cond(a, p), ((2, 3, 3),))
for _p in (1, -1, math.inf, -math.inf, "fro"):
    case(f"cond_{_p}", lambda m, a, p=_p: m.linalg.cond(a, p), ((2, 3, 3),),
         xfail={"grads": _TORCH_COND_BACKWARD})
case("cond_wide", lambda m, a: m.linalg.cond(a), ((3, 5),))
case("cond_tall_minus2", lambda m, a: m.linalg.cond(a, -2), ((4, 2),))
# the matrix norms that go through the SVD (second derivatives need its derivative)
case("matrix_norm_nuc_through_svd", lambda m, a: m.linalg.matrix_norm(a, "nuc"), ((2, 3, 4),))
case("matrix_norm_2_through_svd", lambda m, a: m.linalg.matrix_norm(a, 2), ((4, 3),))
case("norm_nuc_through_svd", lambda m, a: m.norm(a, "nuc"), ((3, 4),))


(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


# ----------------------------------------------------------------- results and fields


def test_namedtuple_fields():
    a = retrograd.eye(3, dtype=retrograd.float64)
    la = retrograd.linalg
    assert la.cholesky_ex(a)._fields == ("L", "info")
    assert la.qr(a)._fields == ("Q", "R") and retrograd.qr(a)._fields == ("Q", "R")
    assert la.eigh(a)._fields == ("eigenvalues", "eigenvectors")
    assert la.svd(a)._fields == ("U", "S", "Vh") and retrograd.svd(a)._fields == ("U", "S", "V")
    assert la.lstsq(a, a)._fields == ("solution", "residuals", "rank", "singular_values")


def _same(r, t, tol=1e-10):
    r = r if isinstance(r, tuple) else (r,)
    t = t if isinstance(t, tuple) else (t,)
    assert len(r) == len(t)
    for x, y in zip(r, t):
        assert tuple(x.shape) == tuple(y.shape)
        assert str(x.dtype).split(".")[-1] == str(y.dtype).split(".")[-1]
        assert x.requires_grad == y.requires_grad
        np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("shapes", [((2, 4, 3), (2, 4, 2)), ((3, 5), (3, 2)), ((4, 3), (4,)),
                                    ((3, 0), (3, 2)), ((0, 2), (0, 3))])
def test_lstsq_fields_per_driver_as_torch(driver, shapes, torch):
    rng = np.random.default_rng(4)
    a, b = (rng.standard_normal(s) for s in shapes)
    _same(retrograd.linalg.lstsq(retrograd.tensor(a), retrograd.tensor(b), driver=driver),
          torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver))


def test_lstsq_rank_deficient_as_torch(torch):
    a = np.random.default_rng(5).standard_normal((2, 5, 3))
    a[..., 2] = a[..., 0] + a[..., 1]
    b = np.random.default_rng(6).standard_normal((2, 5, 2))
    for driver in ("gelsy", "gelsd", "gelss"):  # (gels assumes full rank: no defined answer)
        _same(retrograd.linalg.lstsq(retrograd.tensor(a), retrograd.tensor(b), driver=driver),
              torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver), 1e-8)


def test_qr_mode_r_as_torch(torch):
    a = np.random.default_rng(7).standard_normal((2, 4, 3))
    outs = []
    for m in (retrograd, torch):
        x = m.tensor(a, requires_grad=True)
        q, r = m.linalg.qr(x, mode="r")
        outs.append((q, r))
        with pytest.raises(RuntimeError, match="mode='r'"):
            r.sum().backward()
    _same(outs[0], outs[1])


def test_qr_complete_tall_is_not_differentiable_as_torch(torch):
    a = np.random.default_rng(8).standard_normal((4, 2))
    for m in (retrograd, torch):
        q, r = m.linalg.qr(m.tensor(a, requires_grad=True), mode="complete")
        with pytest.raises(RuntimeError, match="nrows > ncols"):
            (q.sum() + r.sum()).backward()


@pytest.mark.parametrize("what", ["eigh", "svd"])
def test_repeated_values_give_nonfinite_vector_gradients_as_torch(what, torch):
    a = np.diag([2.0, 2.0, 1.0])
    finite = []
    for m in (retrograd, torch):
        x = m.tensor(a, requires_grad=True)
        vectors = m.linalg.eigh(x)[1] if what == "eigh" else m.linalg.svd(x)[0]
        (vectors * m.tensor(np.arange(9.0).reshape(3, 3))).sum().backward()
        finite.append(np.isfinite(x.grad.numpy()))
    np.testing.assert_array_equal(finite[0], finite[1])
    assert not finite[0].all()


def test_cholesky_errors_name_the_batch_element_and_minor(torch):
    a = np.stack([np.eye(3), [[4.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]]])
    for call in (lambda m, x: m.linalg.cholesky(x), lambda m, x: m.cholesky(x),
                 lambda m, x: m.linalg.cholesky(x[1]),
                 lambda m, x: m.linalg.cholesky_ex(x, check_errors=True)):
        with pytest.raises(torch.linalg.LinAlgError) as want:
            call(torch, torch.tensor(a))
        with pytest.raises(retrograd.linalg.LinAlgError) as got:
            call(retrograd, retrograd.tensor(a))
        assert isinstance(got.value, RuntimeError)
        assert str(got.value) == str(want.value)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_ex_info_and_partial_factor_as_torch(upper, torch):
    a = np.stack([[[4.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]], 2 * np.eye(3),
                  [[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, 1.0]]])
    _same(retrograd.linalg.cholesky_ex(retrograd.tensor(a), upper=upper),
          torch.linalg.cholesky_ex(torch.tensor(a), upper=upper))


def test_reads_one_triangle_as_torch(torch):
    a = np.random.default_rng(9).standard_normal((3, 3)) + 6 * np.eye(3)
    for call in (lambda m, x: m.linalg.cholesky(x), lambda m, x: m.linalg.cholesky(x, upper=True),
                 lambda m, x: m.linalg.eigvalsh(x), lambda m, x: m.linalg.eigvalsh(x, "U")):
        _same(call(retrograd, retrograd.tensor(a)), call(torch, torch.tensor(a)))


def _e(m, *shape):
    return m.zeros(*shape, dtype=m.float64)


EDGE_CALLS = [
    *[lambda m, s=s: m.linalg.cholesky_ex(_e(m, *s)) for s in ((0, 0), (2, 0, 0))],
    *[lambda m, s=s, mode=mode: m.linalg.qr(_e(m, *s), mode=mode)
      for s in ((0, 0), (0, 3), (3, 0), (2, 0, 2)) for mode in ("reduced", "complete", "r")],
    *[lambda m, s=s: m.linalg.eigh(_e(m, *s)) for s in ((0, 0), (2, 0, 0))],
    *[lambda m, s=s, f=f: m.linalg.svd(_e(m, *s), full_matrices=f)
      for s in ((0, 0), (0, 3), (3, 0), (2, 0, 2)) for f in (True, False)],
    *[lambda m, s=s: m.linalg.svdvals(_e(m, *s)) for s in ((0, 3), (2, 3, 0))],
    *[lambda m, s=s: m.svd(_e(m, *s)) for s in ((0, 3), (3, 0))],
    *[lambda m, s=s: m.linalg.matrix_rank(_e(m, *s)) for s in ((0, 3), (2, 0, 0))],
    *[lambda m, s=s, p=p: m.linalg.cond(_e(m, *s), p)
      for s in ((0, 0), (2, 0, 0)) for p in (None, 2, -2, 1, "fro", "nuc", math.inf)],
    lambda m: m.linalg.cond(_e(m, 0, 3)),
    # (singular: through the inverse, whose LU of ones meets an exact zero pivot, inf
    # everywhere; through the SVD only a diagonal input's zero singular value is exact on every
    # CPU: ones' is rounding, test_cond_through_the_svd_of_singular_ones_as_torch)
    *[lambda m, p=p: m.linalg.cond(m.ones(2, 2, dtype=m.float64), p)
      for p in (1, -1, math.inf, -math.inf, "fro")],
    *[lambda m, p=p: m.linalg.cond(m.tensor([[0.0, 0.0], [0.0, 3.0]], dtype=m.float64), p)
      for p in (None, 2, -2, "nuc")],
    *[lambda m, p=p: m.linalg.cond(_e(m, 2, 2), p) for p in (None, -2, 1, "fro", "nuc")],
    lambda m: m.linalg.cholesky(m.eye(2, dtype=m.float32) * 4),
    lambda m: m.linalg.svd(m.ones(2, 3, dtype=m.float32)).S,  # (vectors: not unique here)
    lambda m: m.linalg.eigh(m.eye(2, dtype=m.float32)).eigenvalues,
    lambda m: m.linalg.qr(m.tensor([[2.0, 0.0], [0.0, 0.0], [0.0, 0.0]])),  # (rank 1: ones'
    # Q is rounding, test_qr_of_rank_deficient_ones_as_torch)
    lambda m: m.linalg.lstsq(m.eye(2, dtype=m.float32), m.ones(2, 1, dtype=m.float32)),
    lambda m: m.linalg.cond(m.eye(2, dtype=m.float32) * 3, 1),
    lambda m: m.linalg.matrix_rank(m.ones(3, 3, dtype=m.float32)),
    lambda m: m.linalg.matrix_rank(m.eye(3) * m.tensor([1.0, 1e-3, 1e-9]),
                                   atol=m.tensor([1e-4, 1e-2])[:, None, None][:, 0, 0]),
    lambda m: m.linalg.matrix_rank(m.eye(3) * m.tensor([1.0, 1e-3, 1e-9]), rtol=1e-2),
    lambda m: m.linalg.matrix_rank(m.eye(3) * m.tensor([1.0, 1e-3, 1e-9]), atol=1e-6, rtol=0.1),
]


@pytest.mark.parametrize("call", EDGE_CALLS)
def test_edge_shapes_and_dtypes_as_torch(call, torch):
    import warnings

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        _same(call(retrograd), call(torch), 1e-6)


@pytest.mark.parametrize("p", [None, 2, -2, "nuc"])
def test_cond_through_the_svd_of_singular_ones_as_torch(p, torch):
    """ones(2, 2) is exactly singular, but whether its computed smallest singular value is 0
    or 3e-17 is rounding, decided by the CPU's kernels (NumPy's OpenBLAS: 0 on AVX2, 3.4e-17
    with AVX-512's; PyTorch: 0), and cond is its reciprocal: inf or 6e16.  Determined, and
    compared: the largest singular value (2); the smallest within the SVD's backward error
    (n eps |A|) of 0, so cond >= 1 / (2 eps) (inf included) and cond(-2) <= 2 eps; the
    result's shape and dtype.  The exact cases: a diagonal singular input, EDGE_CALLS."""
    eps = np.finfo(np.float64).eps
    for m in (retrograd, torch):
        a = m.ones(2, 2, dtype=m.float64)
        s = m.linalg.svdvals(a).numpy()
        assert s[0] == pytest.approx(2.0, rel=4 * eps) and 0 <= s[1] <= 2 * eps * s[0]
        c = m.linalg.cond(a, p)
        assert tuple(c.shape) == () and str(c.dtype).endswith("float64") and not c.requires_grad
        if p == -2:
            assert 0 <= c.item() <= 2 * eps
        else:
            assert c.item() >= 1 / (2 * eps)


def test_qr_of_rank_deficient_ones_as_torch(torch):
    """ones(3, 2) has rank 1: after the first Householder step the second column's remainder
    is rounding (0 with PyTorch's LAPACK and AVX2 OpenBLAS, -3e-17 with AVX-512's), and Q's
    second column is whichever unit vector orthogonal to the first that remainder's reflector
    gives (PyTorch: (-0.58, 0.79, -0.21); AVX-512: (0.82, -0.41, -0.41)).  Determined, and
    compared: Q's first column and R's first row (as PyTorch's), R[1, 1] at rounding level,
    Q orthonormal, Q R = A; the fields' shapes, dtypes and flags."""
    tol, eps = 1e-6, np.finfo(np.float32).eps
    a = np.ones((3, 2), np.float32)
    (rq, rr), (tq, tr) = (m.linalg.qr(m.tensor(a)) for m in (retrograd, torch))
    for x, y in ((rq, tq), (rr, tr)):
        assert tuple(x.shape) == tuple(y.shape) and str(x.dtype) == "retrograd.float32"
        assert str(y.dtype) == "torch.float32" and not x.requires_grad
    for q, r in ((rq.numpy(), rr.numpy()), (tq.numpy(), tr.numpy())):
        np.testing.assert_allclose(q[:, 0], tq.numpy()[:, 0], rtol=tol, atol=tol)
        np.testing.assert_allclose(r[0], tr.numpy()[0], rtol=tol, atol=tol)
        assert r[1, 0] == 0 and abs(r[1, 1]) <= 4 * eps * np.linalg.norm(a)
        np.testing.assert_allclose(q.T @ q, np.eye(2), atol=tol)
        np.testing.assert_allclose(q @ r, a, atol=tol)


def test_svd_driver_is_cuda_only_as_torch(torch):
    for m in (retrograd, torch):
        with pytest.raises(RuntimeError, match="driver"):
            m.linalg.svd(m.eye(2), driver="gesvd")


@pytest.mark.parametrize("module", ["linalg_decomp", "linalg_decomp_lstsq"])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    mod = importlib.import_module(f"retrograd.ops.{module}")
    assert doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0


_OUT_CALLS = [
    lambda m, a, **o: m.linalg.cholesky(a, **o),
    lambda m, a, **o: m.cholesky(a, upper=True, **o),
    lambda m, a, **o: m.linalg.eigvalsh(a, **o),
    lambda m, a, **o: m.linalg.svdvals(a, **o),
    lambda m, a, **o: m.linalg.cond(a, **o),
    lambda m, a, **o: m.linalg.matrix_rank(a, **o),
]


@pytest.mark.parametrize("call", _OUT_CALLS)
def test_out_keyword_as_torch(call, torch):
    import warnings

    x = np.random.default_rng(3).standard_normal((3, 3))
    a = x @ x.T + 3 * np.eye(3)
    outs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch.cholesky's deprecation notice)
        for m in (retrograd, torch):
            want = call(m, m.tensor(a))
            out = m.empty(tuple(want.shape), dtype=want.dtype)
            assert call(m, m.tensor(a), out=out) is out
            outs.append(out.numpy())
            x = m.tensor(a, requires_grad=True)
            if call is _OUT_CALLS[4]:  # cond is composite: copied in, recorded (CopyBackwards)
                assert call(m, x, out=out).requires_grad
            elif want.dtype != m.int64:  # no out= when the result needs a gradient
                with pytest.raises(RuntimeError):
                    call(m, x, out=out)
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-10)
