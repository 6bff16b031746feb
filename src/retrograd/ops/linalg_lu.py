"""The LU family and the Cholesky solves (issue 11): linalg.lu_factor / lu_factor_ex,
linalg.lu, torch.lu, lu_unpack, linalg.lu_solve / torch.lu_solve, cholesky_solve,
cholesky_inverse.

The factorisation is partial pivoting as LAPACK's getrf (the same pivots, int32 and
1-based, and ``info``: the first exactly zero pivot); a NumPy loop over the columns,
vectorised over the batch (fast for many small matrices), or SciPy's getrf per matrix for
big ones when SciPy is installed.  Each op has one record with PyTorch's grad_fn name; the
derivatives (the known ones: A = P L U gives gA = P L^-T [tril(L^T gL, -1) + triu(gU U^T)]
U^-T, for tall and wide matrices too) are written with retrograd ops, so every order works.
"""

from __future__ import annotations

import warnings
from collections import namedtuple

import numpy as np

from ..autograd.forward_state import fw
from ..autograd.grad_mode import state
from ..backend import namespace
from ..tensor import Tensor, make_tensor
from ._apply import (
    BOTH, OUTPUT, defop, multi_output_class, node_class, record, record_multi,
    record_multi_inputs,
)
from ._errors import scalar_type_name, tensor_arg
from .layout import tril, triu
from .linalg import _mT, _same_dtype, matmul
from .linalg_solve import (
    LinAlgError, _solve_triangular, _solve_triangular_fwd, check_square, column_major,
)
from .index import gather
from .shape import cat, expand
from .quiet_fp import quiet_fp

lu_factor_type = namedtuple("linalg_lu_factor", ["LU", "pivots"])
lu_factor_ex_type = namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
lu_type = namedtuple("linalg_lu", ["P", "L", "U"])
lu_unpack_type = namedtuple("lu_unpack", ["P", "L", "U"])
lu_with_info_type = namedtuple("_lu_with_info", ["LU", "pivots", "info"])

_SCIPY_FROM = 48  # from this size SciPy's blocked getrf beats the column loop below


# ----------------------------------------------------------------- the factorisation


@quiet_fp
def _getrf_numpy(a):
    """LU with partial pivoting of a batch ``a`` (B, m, n), as LAPACK's getrf: the packed
    factors, the 1-based pivots (B, k) and ``info`` (B,).  One step per column, each a
    rank-one update of the whole batch at once (as few NumPy calls per step as it can:
    each costs more than the arithmetic on small matrices)."""
    xp = namespace(a)
    count, m, n = a.shape
    k = min(m, n)
    lu = a.copy()
    flat = lu.reshape(count * m, n)  # a view: one flat row index swaps rows of every matrix
    piv = xp.empty((k, count), dtype=np.int32)
    base = xp.arange(count) * m
    for j in range(k):
        p = xp.argmax(xp.abs(lu[:, j:, j]), axis=1)  # the first largest, as idamax
        piv[j] = p + (j + 1)
        if p.any():
            src, dst = base + j, base + j + p
            top = flat[src]
            flat[src] = flat[dst]
            flat[dst] = top
        if j + 1 < m:
            d = lu[:, j, j]
            zero = d == 0
            if zero.any():  # getrf leaves the column of a zero pivot as it is (all zeros)
                d = xp.where(zero, 1, d)
            col = lu[:, j + 1:, j]
            col /= d[:, None]
            lu[:, j + 1:, j + 1:] -= col[:, :, None] * lu[:, j, None, j + 1:]
    # later steps never change row j, so U's diagonal holds each step's pivot: info is the
    # first zero one
    zero = xp.diagonal(lu, axis1=-2, axis2=-1)[:, :k] == 0
    info = xp.where(zero.any(-1), zero.argmax(-1) + 1, 0).astype(np.int32)
    return lu, xp.ascontiguousarray(piv.T), info


def _getrf_scipy(a):
    from scipy.linalg import lu_factor as scipy_lu_factor

    count, m, n = a.shape
    k = min(m, n)
    lu = np.empty_like(a)
    piv = np.empty((count, k), dtype=np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (its warning for a singular matrix: info says it)
        for i in range(count):
            lu[i], p = scipy_lu_factor(a[i], check_finite=False)
            piv[i] = p[:k] + 1
    diag = np.abs(np.diagonal(lu, axis1=-2, axis2=-1)) == 0
    info = np.where(diag.any(-1), diag.argmax(-1) + 1, 0).astype(np.int32)
    return lu, piv, info


def getrf(a):
    """``(LU, pivots, info)`` of ``a`` (..., m, n): LAPACK's getrf for every matrix."""
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    flat = a.reshape(int(np.prod(batch, dtype=np.int64)), m, n)
    if flat.shape[0] == 0 or k == 0:
        lu, piv = flat.copy(), np.zeros((flat.shape[0], k), dtype=np.int32)
        info = np.zeros(flat.shape[0], dtype=np.int32)
    elif k >= _SCIPY_FROM and type(a) is np.ndarray and _have_scipy():
        lu, piv, info = _getrf_scipy(flat)
    else:
        lu, piv, info = _getrf_numpy(flat)
    xp = namespace(a)
    return (xp.asarray(lu).reshape(a.shape), xp.asarray(piv).reshape(batch + (k,)),
            xp.asarray(info).reshape(batch))


def _have_scipy():
    try:
        import scipy.linalg  # noqa: F401
    except ImportError:
        return False
    return True


def permutation(piv, m):
    """The row order ``perm`` (..., m) the pivots (1-based swaps, as getrf's) give: row i of
    ``P^T A`` is row ``perm[i]`` of A, and ``P = eye(m)[:, perm]``."""
    host = np.asarray(piv.get() if hasattr(piv, "get") else piv)
    flat = host.reshape(int(np.prod(host.shape[:-1], dtype=np.int64)), host.shape[-1])
    if flat.shape[0] * 8 < flat.shape[1]:
        # few big matrices: swaps on Python lists (a fancy-index step costs ~50 list swaps)
        rows = []
        for swaps in flat.tolist():
            order = list(range(m))
            for j, p in enumerate(swaps):
                order[j], order[p - 1] = order[p - 1], order[j]
            rows.append(order)
        return np.array(rows, dtype=np.int64).reshape(host.shape[:-1] + (m,))
    perm = np.tile(np.arange(m), flat.shape[0])  # flat: one index per swap, not two
    base = np.arange(flat.shape[0]) * m
    swaps = flat.T.astype(np.int64) - 1 + base
    for j in range(flat.shape[1]):
        src, dst = base + j, swaps[j]
        top = perm[src]
        perm[src] = perm[dst]
        perm[dst] = top
    return perm.reshape(host.shape[:-1] + (m,))


def perm_matrix(perm, dtype, xp=np):
    """P (..., m, m) with ``A = P L U``: column i is the unit vector of row ``perm[i]``."""
    m = perm.shape[-1]
    eye = np.eye(m, dtype=dtype)
    return xp.asarray(np.moveaxis(eye[perm], -1, -2))


def permute_rows(x, perm, transposed=False):
    """``P x`` (``P^T x`` with ``transposed``) for P = perm_matrix(perm): a gather of rows, not
    a product (O(n^2)); ``x`` an array or a tensor (then recorded, differentiable)."""
    if not transposed:  # (P x)[perm[i]] = x[i]: P x = x[inverse of perm]
        perm = np.argsort(perm, axis=-1)
    batch = np.broadcast_shapes(perm.shape[:-1], tuple(x.shape[:-2]))
    if isinstance(x, Tensor):
        idx = np.ascontiguousarray(np.broadcast_to(perm[..., None], batch + tuple(x.shape[-2:])))
        if tuple(x.shape[:-2]) != batch:
            x = expand(x, *(batch + tuple(x.shape[-2:])))
        return gather(x, -2, make_tensor(namespace(x._data).asarray(idx)))
    return take_rows(x, np.broadcast_to(perm, batch + perm.shape[-1:]))


def take_rows(x, perm):
    """``x[..., perm[...], :]`` per matrix of the batch (arrays; ``perm`` (..., m) NumPy,
    its batch broadcasting ``x``'s): one flat fancy index, cheaper than take_along_axis."""
    xp = namespace(x)
    batch = np.broadcast_shapes(perm.shape[:-1], tuple(x.shape[:-2]))
    m, p = x.shape[-2:]
    count = int(np.prod(batch, dtype=np.int64))
    if count == 0:  # an empty batch: reshape(0, -1) is ambiguous (seed 14507863)
        return xp.zeros(batch + (perm.shape[-1], p), dtype=x.dtype)
    flat = xp.broadcast_to(x, batch + (m, p)).reshape(count * m, p)
    # (the row count spelled out: -1 is ambiguous for an empty batch, seeds 11046543, 11055204)
    rows = (np.broadcast_to(perm, batch + (perm.shape[-1],)).reshape(count, perm.shape[-1])
            + np.arange(count)[:, None] * m).ravel()
    return flat[xp.asarray(rows)].reshape(batch + (perm.shape[-1], p))


def _unpack_arrays(lu):
    """L (unit lower, m x k) and U (upper, k x n) of the packed factors (arrays or tensors)."""
    m, n = lu.shape[-2:]
    k = min(m, n)
    data = getattr(lu, "_data", lu)
    eye = namespace(data).eye(m, k, dtype=data.dtype)
    return tril(lu[..., :, :k], -1) + eye, triu(lu[..., :k, :])


# ----------------------------------------------------------------- the LU derivative


def tri_solve_array(a, b, upper, unit=False):
    """``a^-1 b`` for triangular arrays ``a`` (..., n, n): linalg_solve's forward (a
    substitution over the batch for small matrices, SciPy's trsm for big ones)."""
    return _solve_triangular_fwd(a, b, upper, True, unit)


def _tri(a, b, upper, left, unit=False):
    """``solve_triangular`` for the derivatives: recorded on tensors (create_graph), the
    fast array path on arrays (a first-order backward)."""
    if type(a) is not np.ndarray or type(b) is not np.ndarray:
        return _solve_triangular(a, b, upper, left, unit)
    if left:
        return tri_solve_array(a, b, upper, unit)
    return tri_solve_array(a.swapaxes(-1, -2), b.swapaxes(-1, -2), not upper, unit
                           ).swapaxes(-1, -2)


def _lu_backward(gl, gu, perm, low, up):
    """gA for A = P L U (L m x k unit lower, U k x n upper) from gL and gU (None for none):
    PyTorch's linalg_lu_backward (square, wide and tall), with retrograd ops."""
    m, n = low.shape[-2], up.shape[-1]
    k = min(m, n)
    if m == n:
        ga = None
        if gl is not None:
            ga = tril(matmul(_mT(low), gl), -1)
        if gu is not None:
            term = triu(matmul(gu, _mT(up)))
            ga = term if ga is None else ga + term
        ga = _tri(_mT(up), ga, False, False, False)
        ga = _tri(_mT(low), ga, True, True, True)
    elif m < n:  # wide: U = [U1 U2], U1 square
        u1 = up[..., :, :k]
        ga = matmul(_mT(low), gl) if gl is not None else None
        if gu is not None:
            term = matmul(triu(gu), _mT(up))
            ga = -term if ga is None else ga - term
        ga = _tri(_mT(u1), tril(ga, -1), False, False, False)
        if gu is not None:
            ga = cat([ga + triu(gu[..., :, :k]), gu[..., :, k:]], -1)
        ga = _tri(_mT(low), ga, True, True, True)
        if gu is None:
            data = getattr(ga, "_data", ga)
            ga = cat([ga, namespace(data).zeros(ga.shape[:-1] + (n - k,), dtype=data.dtype)],
                     -1)
    else:  # tall: L = [L1; L2], L1 square
        l1 = low[..., :k, :]
        ga = matmul(gu, _mT(up)) if gu is not None else None
        if gl is not None:
            term = matmul(_mT(low), tril(gl, -1))
            ga = -term if ga is None else ga - term
        ga = _tri(_mT(l1), triu(ga), True, True, True)
        if gl is not None:
            ga = cat([ga + tril(gl[..., :k, :], -1), gl[..., k:, :]], -2)
        ga = _tri(_mT(up), ga, False, False, False)
        if gl is None:
            data = getattr(ga, "_data", ga)
            ga = cat([ga, namespace(data).zeros(ga.shape[:-2] + (m - k, n), dtype=data.dtype)],
                     -2)
    return permute_rows(ga, perm)


def _lu_factor_vjp(node, g, saved):
    lu, perm = saved
    low, up = _unpack_arrays(lu)
    k = min(lu.shape[-2:])
    return (_lu_backward(g[..., :, :k], g[..., :k, :], perm, low, up),)


_LuFactorNode = node_class("LinalgLuFactorExBackward0", _lu_factor_vjp, OUTPUT)


def _lu_vjp(node, grads, saved):
    low, up, perm = saved
    return (_lu_backward(grads[0], grads[1], perm, low, up),)


_LuNode = multi_output_class("LinalgLuBackward0", _lu_vjp)


def _check_lu_input(name, A, pivot):  # noqa: N803 - PyTorch's name
    tensor_arg(A, "A")
    if A.ndim < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A.shape)} instead")
    if A._data.dtype.kind != "f" or A._data.itemsize == 2:  # (float16 too)
        raise NotImplementedError(f'"lu_cpu" not implemented for '
                                  f"'{scalar_type_name(A._data.dtype)}' ({name} takes float "
                                  "matrices: convert first, e.g. A.double())")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the "
                           "CPU (pass pivot=True)")


def _lu_factor(name, A, check):  # noqa: N803
    lu, piv, info = getrf(A._data)
    if check and bool((info > 0).any()):
        bad = np.argwhere(np.asarray(info) > 0)[0]
        j = int(info[tuple(bad)])
        batch = f"(Batch element {int(np.ravel_multi_index(bad, A.shape[:-2]))}): " \
            if A.ndim > 2 else ""
        raise LinAlgError(
            f"{name}: {batch}U[{j},{j}] is zero and using it on lu_solve would result in a "
            "division by zero. If you still want to perform the factorization, consider "
            "calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    out = make_tensor(lu)
    if A._requires_grad and state.enabled:
        record(_LuFactorNode, (A,), out, (), (permutation(piv, A.shape[-2]),))
    if fw.active:  # forward AD: the tangent (ops/_jvp.py)
        fw.propagate_node(_LuFactorNode, (A,), out, (), (permutation(piv, A.shape[-2]),))
    return out, make_tensor(piv), make_tensor(info)


def lu_factor_ex(A, *, pivot=True, check_errors=False):  # noqa: N803 - PyTorch's names
    """``(LU, pivots, info)``: the packed LU factorisation with partial pivoting of each
    matrix of ``A`` (..., m, n); ``info`` (int32) is the 1-based index of the first zero
    pivot of U (0 for none), an error only with ``check_errors``."""
    _check_lu_input("torch.linalg.lu_factor_ex", A, pivot)
    return lu_factor_ex_type(*_lu_factor("torch.linalg.lu_factor_ex", A, check_errors))


def lu_factor(A, *, pivot=True):  # noqa: N803 - PyTorch's names
    """``(LU, pivots)``: the packed LU factorisation of each matrix of ``A`` (L's unit
    diagonal not stored; pivots int32, 1-based as LAPACK's); a zero pivot raises
    LinAlgError naming the batch element (``lu_factor_ex`` reports it in ``info``).

    Examples
    --------
    >>> import retrograd as T
    >>> LU, pivots = T.linalg.lu_factor(T.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> LU, pivots
    (tensor([[3.0000, 4.0000],
            [0.3333, 0.6667]]), tensor([2, 2], dtype=retrograd.int32))
    """
    _check_lu_input("torch.linalg.lu_factor", A, pivot)
    return lu_factor_type(*_lu_factor("torch.linalg.lu_factor", A, True)[:2])


def lu_old(A, pivot=True, get_infos=False):  # noqa: N803 - PyTorch's names
    """``torch.lu``: ``(LU, pivots)``, or ``(LU, pivots, infos)`` with ``get_infos``; never
    raises for a singular matrix (as PyTorch's)."""
    _warn_once("lu", "torch.lu is deprecated in favor of torch.linalg.lu_factor / "
               "torch.linalg.lu_factor_ex and will be removed in a future PyTorch release.\n"
               "LU, pivots = torch.lu(A, compute_pivots)\nshould be replaced with\n"
               "LU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
               "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be "
               "replaced with\nLU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)")
    _check_lu_input("torch.lu_factor", A, pivot)
    lu, piv, info = _lu_factor("torch.lu", A, False)
    return lu_with_info_type(lu, piv, info) if get_infos else (lu, piv)


def lu(A, *, pivot=True):  # noqa: N803 - PyTorch's names
    """``(P, L, U)`` with ``A = P L U`` for each matrix of ``A`` (..., m, n): P a
    permutation (m x m), L unit lower (m x k), U upper (k x n), k = min(m, n).

    Examples
    --------
    >>> import retrograd as T
    >>> P, L, U = T.linalg.lu(T.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> (P @ L @ U)
    tensor([[1., 2.],
            [3., 4.]])
    """
    _check_lu_input("linalg.lu", A, pivot)
    xp = namespace(A._data)
    lu_data, piv, _ = getrf(A._data)
    low, up = _unpack_arrays(lu_data)
    perm = permutation(piv, A.shape[-2])
    p = perm_matrix(perm, lu_data.dtype, xp)
    outs = [make_tensor(xp.ascontiguousarray(low)), make_tensor(xp.ascontiguousarray(up))]
    if A._requires_grad and state.enabled:
        # L and U saved (through saved-tensor hooks, as every record), then the permutation
        node = record_multi_inputs(_LuNode, (A,), outs, (), keep=(0, 1))
        node.saved += (perm,)
    if fw.active:  # forward AD: the tangents (ops/_jvp.py)
        fw.propagate_outputs(_LuNode, (A,), outs, (), (*outs, perm))
    return lu_type(make_tensor(p), *outs)


# ----------------------------------------------------------------- lu_unpack


def _lu_unpack_vjp(node, grads, saved):
    # L reads the strictly lower part of LU's first k columns, U the upper part of its
    # first k rows
    gl, gu = grads
    m, n = node.params
    k = min(m, n)
    ga = triu(gu)
    low = tril(gl, -1)
    if m > n:
        ga = cat([ga, _zeros_like_rows(gl, m - k, n)], -2)
    elif m < n:
        low = cat([low, _zeros_like_rows(gl, m, n - k)], -1)
    return (ga + low,)


def _zeros_like_rows(g, rows, cols):
    data = getattr(g, "_data", g)
    return namespace(data).zeros(g.shape[:-2] + (rows, cols), dtype=data.dtype)


_LuUnpackNode = multi_output_class("LuUnpackBackward0", _lu_unpack_vjp)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):  # noqa: N803
    """``(P, L, U)`` from ``lu_factor``'s packed factors and pivots (empty tensors for the
    parts not asked for)."""
    tensor_arg(LU_data, "LU_data")
    tensor_arg(LU_pivots, "LU_pivots", 1)
    if LU_pivots._data.dtype != np.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor "
                           "of torch.int32 dtype.\nNote: this function is intended to be used "
                           "with the output produced by torch.linalg.lu_factor")
    if LU_data.ndim < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(LU_data.shape)} instead")
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    if tuple(LU_pivots.shape) != tuple(LU_data.shape[:-2]) + (k,):
        raise RuntimeError(f"torch.lu_unpack: the pivots' shape {list(LU_pivots.shape)} does "
                           f"not match LU's {list(LU_data.shape)} (expected "
                           f"{list(LU_data.shape[:-2]) + [k]})")
    xp = namespace(LU_data._data)
    dtype = LU_data._data.dtype
    empty = make_tensor(xp.zeros((0,), dtype=dtype))
    if unpack_pivots:
        p = make_tensor(perm_matrix(permutation(LU_pivots._data, m), dtype, xp))
    else:
        p = empty
    if not unpack_data:
        return lu_unpack_type(p, empty, make_tensor(xp.zeros((0,), dtype=dtype)))
    low, up = _unpack_arrays(LU_data._data)
    outs = [make_tensor(xp.ascontiguousarray(low)), make_tensor(xp.ascontiguousarray(up))]
    if LU_data._requires_grad and state.enabled:
        record_multi(_LuUnpackNode, LU_data, outs, (m, n))
    if fw.active:  # forward AD: the tangents (ops/_jvp.py)
        fw.propagate_outputs(_LuUnpackNode, (LU_data,), outs, (m, n))
    return lu_unpack_type(p, *outs)


# ----------------------------------------------------------------- lu_solve


def _lu_solve_fwd(lu, b, perm, left, adjoint):
    # (LAPACK's layout, as PyTorch's)
    return column_major(_lu_solve_fwd_values(lu, b, perm, left, adjoint))


def _lu_solve_fwd_values(lu, b, perm, left, adjoint):
    """X with op(A) X = B (``left``) or X op(A) = B, A = P L U, op(A) = A or A^T
    (``adjoint``), by two triangular solves and a row permutation."""
    xp = namespace(lu)
    if not left:  # X op(A) = B  <=>  op(A)^T X^T = B^T
        return _lu_solve_fwd(lu, b.swapaxes(-1, -2), perm, True, not adjoint).swapaxes(-1, -2)
    batch = np.broadcast_shapes(lu.shape[:-2], b.shape[:-2])
    b = xp.broadcast_to(b, batch + b.shape[-2:])
    perm = np.broadcast_to(perm, batch + perm.shape[-1:])
    if not adjoint:  # U X = L^-1 P^T B
        pb = take_rows(b, perm)
        return tri_solve_array(lu, tri_solve_array(lu, pb, False, True), True)
    # A^T X = B: U^T L^T P^T X = B, so X = P L^-T U^-T B
    lut = lu.swapaxes(-1, -2)
    z = tri_solve_array(lut, tri_solve_array(lut, b, False), True, True)
    return take_rows(z, np.argsort(perm, axis=-1))


def _lu_solve_vjp(node, g, saved):
    lu, _, x = saved
    perm, left, adjoint = node.params
    nlu, nb = node.next
    gb = _lu_solve(lu, g, perm, left, not adjoint)
    if not nlu:
        return (None, gb)
    # the gradient of A = P L U (as linalg.solve's), then of the packed factors
    # gA = -u v^T, of rank r (B's columns, or rows with left=False)
    if left:
        u, v = (gb, x) if not adjoint else (x, gb)
    else:
        u, v = (_mT(x), _mT(gb)) if not adjoint else (_mT(gb), _mT(x))
    low, up = _unpack_arrays(lu)
    pu = permute_rows(u, perm, transposed=True)
    if u.shape[-1] < lu.shape[-1]:
        # P^T gA U^T = -(P^T u)(U v)^T and L^T P^T gA = -(L^T P^T u) v^T: products with
        # the thin factors, O(n^2 r) instead of two O(n^3) ones with the full gA
        lower = matmul(pu, _mT(matmul(up, v)))
        upper = matmul(matmul(_mT(low), pu), _mT(v))
    else:
        pga = matmul(pu, _mT(v))
        lower, upper = matmul(pga, _mT(up)), matmul(_mT(low), pga)
    glu = -(tril(lower, -1) + triu(upper))
    return (glu, gb if nb else None)


# (PyTorch's node saves LU, the pivots and the result, never B: changing B in place before
# backward is no error there; fuzz seed 11305266)
_lu_solve = defop("linalg.lu_solve", _lu_solve_fwd, _lu_solve_vjp, "LinalgLuSolveBackward0",
                  2, BOTH, saved_for=lambda needs: (True, False))


def lu_solve(LU, pivots, B, *, left=True, adjoint=False):  # noqa: N803 - PyTorch's names
    """The solution X of ``A X = B`` from A's ``lu_factor`` (``X A = B`` with
    ``left=False``; A^T in place of A with ``adjoint``); batches broadcast.

    Examples
    --------
    >>> import retrograd as T
    >>> A = T.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> T.linalg.lu_solve(*T.linalg.lu_factor(A), T.tensor([[5.0], [6.0]]))
    tensor([[-4.0000],
            [ 4.5000]])
    """
    name = "linalg.lu_solve"
    tensor_arg(LU, "LU")
    tensor_arg(pivots, "pivots", 1)
    tensor_arg(B, "B", 2)
    if LU.ndim < 2 or LU.shape[-1] != LU.shape[-2]:
        raise RuntimeError(f"torch.linalg.lu_solve: A must be batches of square matrices, but "
                           f"they are {LU.shape[-2] if LU.ndim > 1 else 1} by {LU.shape[-1]} "
                           "matrices")
    if B.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions "
                           f"(got shape {list(B.shape)})")
    n = LU.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation {eq} "
                           f"({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    _same_dtype(name, (LU, B), name + ": Expected LU and B to have the same dtype, but found "
                "LU of type {} and B of type {} instead")
    if pivots._data.dtype != np.int32:
        raise RuntimeError(f"{name}: pivots should be a Tensor of scalar type torch.int32 "
                           f"(got {pivots.dtype}; pass lu_factor's pivots)")
    if tuple(pivots.shape) != tuple(LU.shape[:-1]):
        raise RuntimeError(f"{name}: Expected pivots to have shape {list(LU.shape[:-1])} "
                           f"(LU's less its last dim), but got {list(pivots.shape)}")
    try:
        np.broadcast_shapes(tuple(LU.shape[:-2]), tuple(B.shape[:-2]))
    except ValueError:
        raise RuntimeError(f"{name}: the batch dimensions of LU {list(LU.shape[:-2])} and B "
                           f"{list(B.shape[:-2])} do not broadcast") from None
    perm = permutation(pivots._data, n)
    return _lu_solve(LU, B, perm, bool(left), bool(adjoint))


def lu_solve_old(input, LU_data, LU_pivots):  # noqa: A002,N803 - PyTorch's names
    """``torch.lu_solve(b, LU_data, LU_pivots)``: ``linalg.lu_solve(LU_data, LU_pivots, b)``
    under its older argument order."""
    _warn_once("lu_solve", "torch.lu_solve is deprecated in favor of torch.linalg.lu_solve"
               "and will be removed in a future PyTorch release.\nNote that "
               "torch.linalg.lu_solve has its arguments reversed.\nX = torch.lu_solve(B, LU, "
               "pivots)\nshould be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)")
    return lu_solve(LU_data, LU_pivots, input)


_WARNED: set = set()


def _warn_once(key, message):
    """PyTorch's deprecation notices, once per process as its TORCH_WARN_ONCE."""
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(message, UserWarning, stacklevel=3)


# ----------------------------------------------------------------- Cholesky solves


def _tri_solve(t, b, upper, transposed):
    """t^-1 b (t^-T b with ``transposed``) for a triangular ``t`` (arrays)."""
    if transposed:
        return tri_solve_array(t.swapaxes(-1, -2), b, not upper)
    return tri_solve_array(t, b, upper)


def _cholesky_solve_fwd(b, c, upper):
    return column_major(_cholesky_solve_fwd_values(b, c, upper))


def _cholesky_solve_fwd_values(b, c, upper):
    # A = L L^T (lower) or U^T U (upper): two triangular solves
    if upper:
        return _tri_solve(c, _tri_solve(c, b, True, True), True, False)
    return _tri_solve(c, _tri_solve(c, b, False, False), False, True)


def _cholesky_solve_vjp(node, g, saved):
    # PyTorch's: gB = (L L^T)^-1 g, and with C = gB X^T + X gB^T, gL = -C L (-U C upper)
    _, c, x = saved
    (upper,) = node.params
    nb, nc = node.next
    gb = _cholesky_solve(g, c, upper)
    if not nc:
        return (gb, None)
    common = matmul(gb, _mT(x))
    common = common + _mT(common)
    gc = -matmul(c, common) if upper else -matmul(common, c)
    return (gb if nb else None, gc)


_cholesky_solve = defop("cholesky_solve", _cholesky_solve_fwd, _cholesky_solve_vjp,
                        "CholeskySolveBackward0", 2, BOTH)


def cholesky_solve(input, input2, upper=False):  # noqa: A002 - PyTorch's names
    """The solution X of ``A X = B`` (B = ``input``) from A's Cholesky factor ``input2``
    (lower, or upper with ``upper``: A = L L^T or U^T U); batches broadcast.

    Examples
    --------
    >>> import retrograd as T
    >>> T.cholesky_solve(T.tensor([[4.0], [2.0]]), T.tensor([[2.0, 0.0], [0.0, 1.0]]))
    tensor([[1.],
            [2.]])
    """
    tensor_arg(input, "input")
    tensor_arg(input2, "input2", 1)
    for t, what in ((input, "b"), (input2, "u")):
        if t.ndim < 2:
            raise RuntimeError(f"cholesky_solve: {what} should have at least 2 dimensions, but "
                               f"has {t.ndim} dimensions instead")
    if input2.shape[-1] != input2.shape[-2] or input.shape[-2] != input2.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is "
                           f"{input2.shape[-2]} by {input2.shape[-1]} but each b matrix is "
                           f"{input.shape[-2]} by {input.shape[-1]}")
    _same_dtype("cholesky_solve", (input, input2), "cholesky_solve: Expected b and A to have "
                "the same dtype, but found b of type {} and A of type {} instead.")
    if input._data.dtype.kind != "f" or input._data.itemsize == 2:  # (float16 too)
        raise NotImplementedError(f'"cholesky_solve_cpu" not implemented for '
                                  f"'{scalar_type_name(input._data.dtype)}' (cholesky_solve "
                                  "takes float matrices: convert first, e.g. b.double())")
    try:
        np.broadcast_shapes(tuple(input.shape[:-2]), tuple(input2.shape[:-2]))
    except ValueError:
        raise RuntimeError(f"cholesky_solve: the batch dimensions of b {list(input.shape[:-2])}"
                           f" and A {list(input2.shape[:-2])} do not broadcast") from None
    return _cholesky_solve(input, input2, bool(upper))


def _cholesky_inverse_fwd(c, upper):
    xp = namespace(c)
    eye = xp.broadcast_to(xp.eye(c.shape[-1], dtype=c.dtype), c.shape)
    inv_c = tri_solve_array(c, eye, upper)
    # A^-1 = L^-T L^-1 (lower), U^-1 U^-T (upper)
    if upper:
        return inv_c @ inv_c.swapaxes(-1, -2)
    return inv_c.swapaxes(-1, -2) @ inv_c


def _cholesky_inverse_vjp(node, g, saved):
    # PyTorch's: with C = A^-1 (g + g^T) A^-1, gL = -C L (-U C upper)
    c, inv_a = saved
    (upper,) = node.params
    common = matmul(inv_a, matmul(g + _mT(g), inv_a))
    return (-matmul(c, common) if upper else -matmul(common, c),)


_cholesky_inverse = defop("cholesky_inverse", _cholesky_inverse_fwd, _cholesky_inverse_vjp,
                          "CholeskyInverseBackward0", 1, BOTH)


def cholesky_inverse(input, upper=False):  # noqa: A002 - PyTorch's names
    """The inverse of A from its Cholesky factor ``input`` (A = L L^T, or U^T U with
    ``upper``).

    Examples
    --------
    >>> import retrograd as T
    >>> T.cholesky_inverse(T.tensor([[2.0, 0.0], [0.0, 1.0]]))
    tensor([[0.2500, 0.0000],
            [0.0000, 1.0000]])
    """
    tensor_arg(input, "input")
    if input._data.dtype.kind != "f":
        raise NotImplementedError(f'"cholesky_inverse_out_cpu" not implemented for '
                                  f"'{scalar_type_name(input._data.dtype)}' (cholesky_inverse "
                                  "takes float matrices: convert first, e.g. L.double())")
    check_square("cholesky_inverse", input, "A")
    return _cholesky_inverse(input, bool(upper))


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(lu_factor, function=False, method=False, linalg=("lu_factor",))
register(lu_factor_ex, function=False, method=False, linalg=("lu_factor_ex",))
register(lu, "lu", function=False, method=False, linalg=("lu",))
register(lu_old, "lu", function=True, method=True)
register(lu_unpack, method=False)
register(lu_solve, function=False, method=False, linalg=("lu_solve",),
         signature="LU, pivots, B, *, left=True, adjoint=False")
register(lu_solve_old, "lu_solve", function=True, method=True)
register(cholesky_solve, signature="input, input2, upper=False")
register(cholesky_inverse, signature="input, upper=False")
