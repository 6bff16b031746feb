"""Op tests, linalg products (ops/linalg_products.py): mv, addmv, addr, addbmm, baddbmm,
vdot, inner, kron, tensordot, linalg.vecdot, multi_dot, matrix_power, cross, diagonal.

One table of cases (``case_checks``: float64 gradcheck and gradgradcheck, values and
gradients against PyTorch, grad_fn names, graph shapes), then the order multi_dot picks.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd.ops.linalg_products import _chain_order

from .helpers import Case, case_checks

CASES: list[Case] = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


def wc(m, a):
    """A well-conditioned square matrix (batch) from ``a``: a + 4 I."""
    return a + 4 * m.eye(a.shape[-1], dtype=a.dtype)


case("mv", lambda m, a, v: m.mv(a, v), ((2, 3), (3,)))
case("mv_method", lambda m, a, v: a.mv(v), ((3, 3), (3,)))
case("addmv", lambda m, c, a, v: m.addmv(c, a, v), ((2,), (2, 3), (3,)))
case("addmv_scaled", lambda m, c, a, v: m.addmv(c, a, v, beta=0.5, alpha=-2),
     ((1,), (2, 3), (3,)))
case("addmv_beta0", lambda m, c, a, v: c.addmv(a, v, beta=0), ((2,), (2, 3), (3,)))
case("addr", lambda m, c, u, v: m.addr(c, u, v), ((2, 3), (2,), (3,)))
case("addr_scaled", lambda m, c, u, v: m.addr(c, u, v, beta=2, alpha=0.5), ((3,), (2,), (3,)))
case("addbmm", lambda m, c, a, b: m.addbmm(c, a, b), ((2, 4), (3, 2, 3), (3, 3, 4)))
case("addbmm_scaled", lambda m, c, a, b: c.addbmm(a, b, beta=0.5, alpha=3),
     ((1, 4), (2, 2, 3), (2, 3, 4)))
case("baddbmm", lambda m, c, a, b: m.baddbmm(c, a, b), ((3, 2, 4), (3, 2, 3), (3, 3, 4)))
case("baddbmm_bcast", lambda m, c, a, b: m.baddbmm(c, a, b, beta=2, alpha=0.5),
     ((2, 4), (3, 2, 3), (3, 3, 4)))
case("vdot", lambda m, a, b: m.vdot(a, b), ((4,), (4,)))
case("inner", lambda m, a, b: m.inner(a, b), ((2, 3), (4, 3)))
case("inner_3d", lambda m, a, b: m.inner(a, b), ((2, 2, 3), (3,)))
case("inner_0d", lambda m, a, b: m.inner(a, b), ((), (2, 3)))
# (kron: PyTorch's graph, _unsafe_view / mul / _unsafe_view, since fuzzG)
case("kron", lambda m, a, b: m.kron(a, b), ((2, 3), (3, 2)))
case("kron_ranks", lambda m, a, b: m.kron(a, b), ((2,), (2, 3)))
case("tensordot_int", lambda m, a, b: m.tensordot(a, b, 2), ((2, 3, 4), (3, 4, 2)),
     )
case("tensordot_pairs", lambda m, a, b: m.tensordot(a, b, ([0, 2], [1, 0])),
     ((2, 3, 4), (4, 2, 3)))
case("tensordot_0", lambda m, a, b: m.tensordot(a, b, 0), ((2,), (3,)))
case("vecdot", lambda m, a, b: m.linalg.vecdot(a, b), ((2, 3), (3,)))
case("vecdot_dim", lambda m, a, b: m.linalg.vecdot(a, b, dim=0), ((3, 2), (3, 1)))
for _shapes in [((2, 3), (3, 4), (4, 2)), ((3,), (3, 4), (4, 2), (2,)), ((2, 5), (5, 1)),
                ((4, 2), (2, 4), (4, 3), (3, 2))]:
    case(f"multi_dot{_shapes}", lambda m, *xs: m.linalg.multi_dot(xs), _shapes)
for _n in (2, 3, 5, -1, -2):
    case(f"matrix_power{_n}", lambda m, a, n=_n: m.linalg.matrix_power(wc(m, a), n), ((3, 3),),
         xfail={"structure": "repeated squaring multiplies in another order than PyTorch"}
         if _n == 3 else {})
case("matrix_power_batched", lambda m, a: m.matrix_power(wc(m, a), 3), ((2, 3, 3),),
     xfail={"structure": "matmul's batched node where PyTorch records bmm and views"})
case("matrix_power_method", lambda m, a: wc(m, a).matrix_power(2), ((3, 3),))
case("matrix_power1", lambda m, a: m.linalg.matrix_power(a, 1), ((2, 2),))
case("cross", lambda m, a, b: m.cross(a, b, dim=1), ((2, 3), (2, 3)))
case("cross_method", lambda m, a, b: a.cross(b, dim=0), ((3, 2), (3, 2)))
case("linalg.cross", lambda m, a, b: m.linalg.cross(a, b), ((2, 1, 3), (1, 4, 3)))
case("linalg.cross_dim", lambda m, a, b: m.linalg.cross(a, b, dim=0), ((3, 2), (3, 1)))
case("linalg.diagonal", lambda m, a: m.linalg.diagonal(a), ((2, 3, 3),))
case("linalg.diagonal_offset", lambda m, a: m.linalg.diagonal(a, offset=1, dim1=0, dim2=2),
     ((3, 2, 4),))


# the in-place forms, on a non-leaf copy of the first input
for _name, _shapes in (("addmv_", ((2,), (2, 3), (3,))), ("addr_", ((2, 3), (2,), (3,))),
                       ("addbmm_", ((2, 4), (3, 2, 3), (3, 3, 4))),
                       ("baddbmm_", ((3, 2, 4), (3, 2, 3), (3, 3, 4)))):
    case(f"{_name} inplace", lambda m, c, a, b, n=_name: getattr(c * 1, n)(a, b, alpha=0.5),
         _shapes)


(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


def test_matrix_power_zero_is_the_identity(torch):
    a = np.random.default_rng(0).standard_normal((2, 3, 3))
    for m in (retrograd, torch):
        x = m.tensor(a, requires_grad=True)
        y = m.linalg.matrix_power(x, 0)
        y.sum().backward()
        np.testing.assert_array_equal(y.detach().numpy(), np.broadcast_to(np.eye(3), (2, 3, 3)))
        np.testing.assert_array_equal(x.grad.numpy(), np.zeros((2, 3, 3)))


def test_multi_dot_picks_the_cheapest_order():
    # (10x100)(100x5)(5x50): (AB)C costs 7500, A(BC) 75000
    assert _chain_order([10, 100, 5, 50])[0][2] == 1
    assert _chain_order([50, 5, 100, 10])[0][2] == 0


def test_cross_without_dim_warns_and_takes_the_first_size_3(torch):
    a = np.random.default_rng(1).standard_normal((3, 3))
    b = np.random.default_rng(2).standard_normal((3, 3))
    with pytest.warns(UserWarning, match="dim"):
        got = retrograd.cross(retrograd.tensor(a), retrograd.tensor(b))
    with pytest.warns(UserWarning):
        want = torch.cross(torch.tensor(a), torch.tensor(b))
    np.testing.assert_allclose(got.numpy(), want.numpy())


_BOOL_PRODUCTS = {
    "mm": lambda m, a, b, c: m.mm(a, b),
    "addmm": lambda m, a, b, c: m.addmm(c, a, b),
    "mv": lambda m, a, b, c: m.mv(a, b[:, 0]),
    "addmv": lambda m, a, b, c: m.addmv(c, a, b[:, 0]),
    "bmm": lambda m, a, b, c: m.bmm(a[None], b[None]),
    "baddbmm": lambda m, a, b, c: m.baddbmm(c, a[None], b[None]),
    "addbmm": lambda m, a, b, c: m.addbmm(c, a[None], b[None]),
    "addmm of an empty matrix": lambda m, a, b, c: m.addmm(c, a[:0], b),
    "bmm of an empty batch": lambda m, a, b, c: m.bmm(a[None][:, :0], b[None]),
}


@pytest.mark.parametrize("name", list(_BOOL_PRODUCTS))
def test_bool_products_raise_or_run_as_torch(torch, name):
    """PyTorch's CPU product kernels have no bool version (fuzz seed 9425510); with an empty
    operand they return before looking at the dtype."""
    def run(m):
        a, b = m.ones(2, 3, dtype=m.bool), m.ones(3, 2, dtype=m.bool)
        try:
            out = _BOOL_PRODUCTS[name](m, a, b, m.tensor(False))
        except NotImplementedError as e:
            return str(e).split(" (")[0].split(";")[0]
        return tuple(out.shape), str(out.dtype).split(".")[-1]

    assert run(retrograd) == run(torch)
