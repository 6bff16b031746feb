"""Op tests, scalars of a matrix (ops/linalg_scalars.py): det, logdet, slogdet, and the
vector, matrix and general norms.

The case table (``case_checks``) runs on well-conditioned matrices (a + 4 I, or a - 4 I for
a negative determinant), batched; singular inputs and bad arguments are checked below.
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


def wc(m, a, shift=4):
    """A well-conditioned square matrix (batch) from ``a``: a + shift I."""
    return a + shift * m.eye(a.shape[-1], dtype=a.dtype)


case("det", lambda m, a: m.linalg.det(wc(m, a)), ((3, 3),))
case("det_batched_negative", lambda m, a: m.det(wc(m, a, -4)), ((2, 3, 3),))
case("det_method", lambda m, a: wc(m, a).det(), ((1, 1),))
case("slogdet", lambda m, a: m.linalg.slogdet(wc(m, a, -4)), ((2, 2, 2),))
case("slogdet_old", lambda m, a: m.slogdet(wc(m, a)), ((3, 3),))
case("slogdet_logabsdet", lambda m, a: wc(m, a).slogdet()[1], ((3, 3),))
case("logdet", lambda m, a: m.logdet(wc(m, a)), ((2, 3, 3),))
case("logdet_method", lambda m, a: wc(m, a).logdet(), ((2, 2),))
for _ord in (2, 1, 3.5, math.inf, -math.inf, -1.5):
    case(f"vector_norm{_ord}", lambda m, a, o=_ord: m.linalg.vector_norm(a, o), ((2, 3),),
         domain="spread")
case("vector_norm_dim", lambda m, a: m.linalg.vector_norm(a, 2, dim=(0, 2), keepdim=True),
     ((2, 3, 2),))
case("vector_norm_dtype", lambda m, a: m.linalg.vector_norm(a, dim=-1, dtype=m.float64),
     ((2, 3),))
for _ord in ("fro", 1, -1, math.inf, -math.inf):
    case(f"matrix_norm{_ord}", lambda m, a, o=_ord: m.linalg.matrix_norm(a, o), ((2, 3, 4),),
         domain="spread")
for _ord in ("nuc", 2, -2):
    case(f"matrix_norm{_ord}", lambda m, a, o=_ord: m.linalg.matrix_norm(a, o), ((3, 2),))
    case(f"matrix_norm{_ord}_wide", lambda m, a, o=_ord: m.linalg.matrix_norm(a, o),
         ((2, 2, 4),))
case("matrix_norm_dims", lambda m, a: m.linalg.matrix_norm(a, 1, dim=(2, 0), keepdim=True),
     ((3, 2, 4),), domain="spread")
case("matrix_norm_2_keepdim", lambda m, a: m.linalg.matrix_norm(a, -2, keepdim=True),
     ((2, 3, 3),))
case("norm_default", lambda m, a: m.linalg.norm(a), ((2, 3, 2),))
case("norm_vector_dim", lambda m, a: m.linalg.norm(a, 3, dim=1), ((2, 3),))
case("norm_matrix_dims", lambda m, a: m.linalg.norm(a, dim=(0, 1)), ((2, 3),))
case("norm_matrix_ord", lambda m, a: m.linalg.norm(a, math.inf), ((3, 4),), domain="spread")
case("norm_vector_ord", lambda m, a: m.linalg.norm(a, 1), ((4,),))
case("norm_nuc", lambda m, a: m.linalg.norm(a, "nuc"), ((2, 3),))
case("matrix_norm_nuc_keepdim", lambda m, a: m.linalg.matrix_norm(a, "nuc", dim=(0, 2),
                                                                  keepdim=True), ((3, 2, 2),))


(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


def test_singular_determinants_as_torch(torch):
    a = np.array([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, -2.0]]])
    for fn in (lambda m, x: m.linalg.det(x), lambda m, x: m.logdet(x),
               lambda m, x: m.linalg.slogdet(x)):
        got, want = fn(retrograd, retrograd.tensor(a)), fn(torch, torch.tensor(a))
        got = got if isinstance(got, tuple) else (got,)
        want = want if isinstance(want, tuple) else (want,)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w.numpy(), atol=1e-12)


def test_slogdet_fields():
    out = retrograd.linalg.slogdet(retrograd.eye(2))
    assert out._fields == ("sign", "logabsdet")


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.det(m.ones(2, 3)),
    lambda m: m.linalg.det(m.ones(3)),
    lambda m: m.linalg.det(m.ones(2, 2, dtype=m.int64)),
    lambda m: m.linalg.vector_norm(m.ones(2, dtype=m.int64)),
    lambda m: m.linalg.vector_norm(m.ones(0), -1),
    lambda m: m.linalg.matrix_norm(m.ones(3)),
    lambda m: m.linalg.matrix_norm(m.ones(2, 2), "abc"),
    lambda m: m.linalg.matrix_norm(m.ones(2, 2), 3),
    lambda m: m.linalg.matrix_norm(m.ones(2, 2), dim=(0, 0)),
    lambda m: m.linalg.matrix_norm(m.ones(2, 2), dim=(0, 2)),
    lambda m: m.linalg.norm(m.ones(2, 2, 2), 2),
    lambda m: m.linalg.norm(m.ones(2, 2), dim=(0, 1, 1)),
])
def test_argument_errors_match_torch(call, torch):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)):
        call(retrograd)


def test_singular_determinant_gradient_as_torch(torch):
    a = np.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 1.0], [1.0, 3.0]]])
    grads = []
    for m in (retrograd, torch):
        x = m.tensor(a, requires_grad=True)
        m.linalg.det(x).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-12)


@pytest.mark.parametrize("module", ["linalg_products", "linalg_solve", "linalg_scalars"])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    mod = importlib.import_module(f"retrograd.ops.{module}")
    assert doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0


_OUT_CALLS = [
    lambda m, a, **o: m.linalg.inv(a, **o),
    lambda m, a, **o: m.linalg.solve(a, a[:, :1], **o),
    lambda m, a, **o: m.linalg.solve_triangular(a, a, upper=True, **o),
    lambda m, a, **o: m.linalg.pinv(a, **o),
    lambda m, a, **o: m.linalg.det(a, **o),
    lambda m, a, **o: m.linalg.vector_norm(a, 3, dim=0, **o),
    lambda m, a, **o: m.linalg.matrix_norm(a, 1, **o),
    lambda m, a, **o: m.linalg.norm(a, **o),
    lambda m, a, **o: m.linalg.vecdot(a, a, **o),
    lambda m, a, **o: m.linalg.matrix_power(a, 2, **o),
    lambda m, a, **o: m.linalg.cross(a, a.flip(0), **o),
]
_COMPOSITE_OUT = _OUT_CALLS[6:8]  # matrix_norm and norm: PyTorch composes them


@pytest.mark.parametrize("call", _OUT_CALLS)
def test_out_keyword_as_torch(call, torch):
    a = np.random.default_rng(3).standard_normal((3, 3)) + 4 * np.eye(3)
    outs = []
    for m in (retrograd, torch):
        want = call(m, m.tensor(a))
        out = m.empty(tuple(want.shape), dtype=m.float64)
        got = call(m, m.tensor(a), out=out)
        assert got is out
        outs.append(out.numpy())
        x = m.tensor(a, requires_grad=True)
        if call in _COMPOSITE_OUT:  # copied in, recorded (CopyBackwards)
            assert call(m, x, out=out).requires_grad
        else:
            with pytest.raises(RuntimeError):  # no out= when the result needs a gradient
                call(m, x, out=out)
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-12, atol=1e-12)


def _e(m, *shape):
    return m.zeros(*shape, dtype=m.float64)


# empty, 1x1 and broadcast shapes, float32 dtypes, across the linalg modules
EDGE_CALLS = [
    lambda m: m.linalg.det(_e(m, 2, 0, 0)), lambda m: m.linalg.slogdet(_e(m, 2, 0, 0)),
    lambda m: m.logdet(_e(m, 0, 0)), lambda m: m.linalg.solve(_e(m, 0, 0), _e(m, 0, 2)),
    lambda m: m.linalg.inv_ex(_e(m, 3, 0, 0)),
    lambda m: m.linalg.solve_triangular(_e(m, 0, 0), _e(m, 0, 3), upper=True),
    lambda m: m.linalg.vector_norm(_e(m, 0)), lambda m: m.linalg.vector_norm(_e(m, 0), math.inf),
    lambda m: m.linalg.matrix_norm(_e(m, 0, 0)), lambda m: m.linalg.matrix_norm(_e(m, 2, 0, 0), 1),
    lambda m: m.linalg.matrix_norm(_e(m, 0, 3), "nuc"),
    lambda m: m.linalg.matrix_norm(_e(m, 3, 0), 2), lambda m: m.linalg.pinv(_e(m, 2, 3)),
    lambda m: m.mv(_e(m, 0, 3), _e(m, 3)), lambda m: m.kron(_e(m, 0, 2), _e(m, 2, 2)),
    lambda m: m.tensordot(_e(m, 2, 0), _e(m, 0, 3), 1),
    lambda m: m.linalg.multi_dot([_e(m, 2, 0), _e(m, 0, 3)]),
    lambda m: m.linalg.matrix_power(_e(m, 0, 0), 3),
    lambda m: m.linalg.vecdot(_e(m, 2, 0), _e(m, 2, 0)),
    lambda m: m.linalg.solve(m.eye(2, dtype=m.float32), m.ones(2)),
    lambda m: m.linalg.det(2 * m.eye(3, dtype=m.float32)),
    lambda m: m.linalg.slogdet(m.eye(3, dtype=m.float32)),
    lambda m: m.linalg.pinv(m.ones(2, 3, dtype=m.float32)),
    lambda m: m.linalg.pinv(m.ones(3, 3), hermitian=True),
    lambda m: m.linalg.inv(m.tensor([[1.0, 2.0], [3.0, 4.0]])),
    lambda m: m.linalg.solve(m.ones(3, 3) * m.eye(3), m.ones(2, 1, 3, 1)),
    lambda m: m.linalg.solve(m.ones(2, 3, 3) + m.eye(3), m.ones(3, 3)),
    lambda m: m.linalg.solve(m.eye(3), m.ones(3, 2, 2)),
    lambda m: m.addmv(m.ones(1), m.ones(2, 3), m.ones(3)),
    lambda m: m.addr(m.ones(3, 1), m.ones(2), m.ones(3)),
    lambda m: m.linalg.matrix_norm(m.ones(2, 3, 4), dim=(0, 2)),
    lambda m: m.linalg.norm(m.ones(2, 3, 4), dim=(2, 0), ord=-math.inf),
    lambda m: m.linalg.vector_norm(m.ones(2, 3, dtype=m.float32), dtype=m.float64),
    lambda m: m.linalg.norm(m.ones(2, 3), ord=0, dim=1),
    *[lambda m, s=s, o=o: m.linalg.matrix_norm(_e(m, *s), o)
      for s in ((0, 3), (3, 0), (2, 0, 0)) for o in (1, -1, 2, -2, math.inf, -math.inf, "nuc")],
    *[lambda m, d=d, o=o: m.linalg.vector_norm(_e(m, 0, 3), o, dim=d)
      for d in (0, -1, None) for o in (-1, math.inf, 2)],
]


@pytest.mark.parametrize("call", EDGE_CALLS)
def test_edge_shapes_and_dtypes_as_torch(call, torch):
    try:
        call(torch)
    except (RuntimeError, IndexError) as e:  # (refused shapes: retrograd refuses them too)
        with pytest.raises(type(e)):
            call(retrograd)
        return
    results = []
    for m in (retrograd, torch):
        r = call(m)
        results.append([(tuple(x.shape), str(x.dtype).split(".")[-1], x.numpy())
                        for x in (r if isinstance(r, tuple) else (r,))])
    for (s1, d1, v1), (s2, d2, v2) in zip(*results):
        assert (s1, d1) == (s2, d2)
        np.testing.assert_allclose(v1, v2, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("shape", [(0, 2, 2), (2, 0, 0), (0, 1, 1)])
@pytest.mark.parametrize("op", ["det", "slogdet", "logdet"])
def test_empty_batch_create_graph_gradient_as_torch(shape, op, torch):
    """Fuzz seed 20759497: PyTorch's create_graph gradient of det of an empty matrix batch
    is a fresh tensor that does not require grad, also where the incoming gradient does (so
    a second backward raises); slogdet's and logdet's are linalg.solve's, and do."""
    seen = []
    for m in (retrograd, torch):
        a = m.zeros(shape, dtype=m.float64, requires_grad=True)
        y = m.linalg.det(a) if op == "det" else m.logdet(a) if op == "logdet" else \
            m.linalg.slogdet(a)[1]
        y = (y.abs() + 0.5).sqrt()  # an incoming gradient that depends on a
        (g,) = m.autograd.grad(y.sum(), [a], create_graph=True)
        seen.append((tuple(g.shape), str(g.dtype).split(".")[-1], g.requires_grad,
                     type(g.grad_fn).__name__ if g.grad_fn is not None else None))
    assert seen[0] == seen[1]
