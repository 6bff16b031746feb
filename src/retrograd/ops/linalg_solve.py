"""Solves and inverses (issue 11): linalg.solve / solve_ex, linalg.inv / inv_ex,
linalg.solve_triangular, triangular_solve, linalg.pinv and pinverse.

Each has one record with PyTorch's grad_fn name whose derivative is written with these same
ops (a solve's derivative is a solve with the transposed matrix, an inverse's is a product
with the inverse), so every order of derivative works.  Batches ``(..., n, n)`` broadcast
against the right-hand side's; the engine sums broadcast batch dims back.

Singular inputs raise :class:`LinAlgError` (a RuntimeError, as ``torch.linalg.LinAlgError``)
naming the batch element and the zero pivot (LAPACK's ``info``); the ``_ex`` forms return
``info`` (int32) instead.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..backend import namespace
from ..tensor import Tensor, make_tensor
from ._apply import BOTH, OUTPUT, defop
from ._errors import scalar_type_name, tensor_arg
from .layout import tril, triu
from .linalg import _mT, _same_dtype, matmul
from .shape import clone, unsqueeze
from .quiet_fp import quiet_fp


class LinAlgError(RuntimeError):
    """A linear-algebra routine failed on its input (a singular matrix, a matrix that is not
    positive-definite): PyTorch's ``torch.linalg.LinAlgError``, a RuntimeError."""


LinAlgError.__module__ = "retrograd.linalg"


def refuse_infinite_svd(name, a):
    """Raise LinAlgError, before LAPACK's gesdd is called for an SVD with vectors, where
    ``a`` (sides of 3 or more) holds an infinite entry and no NaN (which LAPACK refuses
    itself): OpenBLAS's gesdd never returns on many such matrices (``ones(3, 3) + eye(3)``
    with -inf at [0, 0] hangs NumPy), and MKL's, PyTorch's, gives up on most of them too
    (LinAlgError; else NaN singular values and unspecified vectors).  The singular values
    alone (compute_uv=False) come back, NaN, as PyTorch's, so those callers skip this."""
    if min(a.shape[-2:]) >= 3 and a.size:
        xp = namespace(a)
        if xp.isinf(a).any() and not xp.isnan(a).any():
            raise LinAlgError(f"{name}: The algorithm failed to converge because the input "
                              "matrix contained an infinite entry (LAPACK's result for it "
                              "is unspecified); clamp or mask it first")

inv_ex_type = namedtuple("linalg_inv_ex", ["inverse", "info"])
solve_ex_type = namedtuple("linalg_solve_ex", ["result", "info"])
triangular_solve_type = namedtuple("triangular_solve", ["solution", "cloned_coefficient"])


# ----------------------------------------------------------------- checks and pivots


def check_square(name, A, arg="A", dtype=True):  # noqa: N803 - PyTorch's name
    """PyTorch's errors for a tensor that is not a batch of square float matrices (the
    dtype left to ``kernel_dtype`` with ``dtype=False``: ops that refuse it in their kernel)."""
    tensor_arg(A, arg)
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {arg} must have at least 2 dimensions "
                           f"(got shape {list(A.shape)}); pass a matrix or a batch of them")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: {arg} must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if dtype and A._data.dtype.kind != "f":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_type_name(A._data.dtype)} (convert first, e.g. A.double())")
    if dtype:
        no_half(name, A)


# PyTorch's refusal of a float16 matrix, by op: its LAPACK kernel's NotImplementedError, or
# a RuntimeError up front (NumPy's linalg raised a TypeError of its own)
_HALF_KERNEL = {"linalg.det": "lu_cpu", "torch.linalg.solve": "lu_cpu",
                "torch.linalg.solve_ex": "lu_cpu", "linalg.cholesky": "cholesky_cpu",
                "linalg.cholesky_ex": "cholesky_cpu", "cholesky": "cholesky_cpu",
                "linalg.eigh": "linalg_eigh_cpu", "linalg.eigvalsh": "linalg_eigh_cpu",
                "linalg.solve_triangular": "triangular_solve_cpu",
                "triangular_solve": "triangular_solve_cpu",
                "cholesky_inverse": "cholesky_inverse_out_cpu", "linalg.qr": "geqrf_cpu",
                "qr": "geqrf_cpu", "linalg.svd": "linalg_svd_cpu",
                "linalg.svdvals": "linalg_svd_cpu", "linalg.cond": "linalg_svd_cpu"}
_HALF_UP_FRONT = {"linalg.slogdet": "linalg.slogdet", "logdet": "logdet",
                  "linalg.inv": "linalg.inv", "linalg.inv_ex": "linalg.inv"}


def no_half(name, A):  # noqa: N803 - PyTorch's name
    """PyTorch's error for a float16 ``A`` given to op ``name`` (nothing for other ops)."""
    if A._data.dtype != np.float16:
        return
    key = name.split("(")[0]
    if key in _HALF_KERNEL:
        raise NotImplementedError(f'"{_HALF_KERNEL[key]}" not implemented for \'Half\' ({name} '
                                  "needs float32 or float64 matrices: convert first, e.g. "
                                  "A.float())")
    if key in _HALF_UP_FRONT:
        raise RuntimeError(f"{_HALF_UP_FRONT[key]}: Low precision dtypes not supported. Got "
                           "Half (convert first, e.g. A.float())")


def kernel_dtype(kernel, name, A, empty_ok=False):  # noqa: N803 - PyTorch's name
    """PyTorch's NotImplementedError for an integer or bool ``A`` met by LAPACK kernel
    ``kernel`` (after the op's shape checks; where PyTorch returns an empty input before
    its kernel, ``empty_ok``, an empty one passes)."""
    if A._data.dtype.kind != "f" and not (empty_ok and A._data.size == 0):
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{scalar_type_name(A._data.dtype)}' ({name} takes float "
                                  "matrices: convert first, e.g. A.double())")
    no_half(name, A)


@quiet_fp
def _pivot_info(a):
    """LAPACK getrf's ``info`` for one square matrix: the 1-based index of the first exactly
    zero pivot of the LU factorisation with partial pivoting, or 0."""
    u = np.array(a, dtype=np.float64, copy=True)
    n = u.shape[0]
    info = 0
    for k in range(n):
        p = k + int(np.argmax(np.abs(u[k:, k])))
        if u[p, k] == 0:
            info = info or k + 1  # getrf goes on past a zero pivot, reporting the first
            continue
        u[[k, p]] = u[[p, k]]
        u[k + 1:, k:] -= np.outer(u[k + 1:, k] / u[k, k], u[k, k:])
    return info


def pivot_infos(a):
    """``info`` (int32) per matrix of the batch ``a`` (..., n, n)."""
    host = np.asarray(a.get() if hasattr(a, "get") else a)
    flat = host.reshape(-1, *host.shape[-2:])
    return np.array([_pivot_info(m) for m in flat], dtype=np.int32).reshape(host.shape[:-2])


def _first_failure(infos):
    bad = np.argwhere(np.asarray(infos) > 0)
    return (tuple(int(i) for i in bad[0]), int(infos[tuple(bad[0])])) if len(bad) else None


def _flat_index(index, shape):
    return int(np.ravel_multi_index(index, shape)) if shape else 0


def singular_error(name, a, infos, what):
    """The LinAlgError PyTorch raises for the first singular matrix of ``a``."""
    index, info = _first_failure(infos)
    batch = f"(Batch element {_flat_index(index, a.shape[:-2])}): " if a.ndim > 2 else ""
    if what == "inv":
        msg = (f"{name}: {batch}The diagonal element {info} is zero, the inversion could not "
               "be completed because the input matrix is singular.")
    else:
        msg = f"{name}: {batch}The solver failed because the input matrix is singular."
    return LinAlgError(msg)


# ----------------------------------------------------------------- inv


def _inv_fwd(a, name="linalg.inv", check=True):
    xp = namespace(a)
    try:
        out = xp.linalg.inv(a)
    except xp.linalg.LinAlgError:
        infos = pivot_infos(a)
        if check:
            raise singular_error(name, a, infos, "inv") from None
        out = xp.full(a.shape, xp.nan, dtype=a.dtype)  # (LAPACK's partial results: not kept)
        flat_a, flat_o = a.reshape(-1, *a.shape[-2:]), out.reshape(-1, *a.shape[-2:])
        for k, info in enumerate(infos.reshape(-1)):
            if info == 0:
                flat_o[k] = xp.linalg.inv(flat_a[k])
    # column-major matrices (strides (1, n)), as LAPACK's result in PyTorch: a flatten or
    # reshape of it then copies there too, so a later in-place change does not show through
    # (seed 9960414)
    out = out.astype(a.dtype, copy=False)
    return xp.swapaxes(xp.ascontiguousarray(xp.swapaxes(out, -1, -2)), -1, -2)


def _inv_vjp(node, g, saved):
    # d(A^-1) = -A^-1 dA A^-1, so gA = -A^-T g A^-T (the saved output is A^-1, recorded)
    (out,) = saved
    out_t = _mT(out)
    return (-matmul(matmul(out_t, g), out_t),)


_inv = defop("linalg.inv", _inv_fwd, _inv_vjp, "LinalgInvExBackward0", 1, OUTPUT)


def inv(A):  # noqa: N803 - PyTorch's name
    """The inverse of each square matrix of ``A`` (..., n, n); a singular one raises
    LinAlgError naming its batch element and zero pivot.

    Examples
    --------
    >>> import retrograd as T
    >>> T.linalg.inv(T.tensor([[2.0, 0.0], [0.0, 4.0]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.2500]])
    """
    if not isinstance(A, Tensor):
        return _inv_fwd(A)  # (a first-order backward on arrays)
    check_square("linalg.inv", A)
    return _inv(A, "linalg.inv", True)


def inverse(input):  # noqa: A002 - PyTorch's name
    """``linalg.inv`` under its older name (``torch.inverse``, ``Tensor.inverse``)."""
    return inv(input)


def inv_ex(A, *, check_errors=False):  # noqa: N803 - PyTorch's name
    """``(inverse, info)``: ``info`` (int32, one per matrix) is 0, or the 1-based index of
    the zero pivot of a singular matrix (whose inverse is then not meaningful)."""
    check_square("linalg.inv_ex", A)
    out = _inv(A, "linalg.inv_ex", check_errors)
    xp = namespace(A._data)
    if bool(xp.isfinite(out._data).all()):
        info = np.zeros(A.shape[:-2], dtype=np.int32)
    else:
        info = pivot_infos(A._data)
    return inv_ex_type(out, make_tensor(xp.asarray(info)))


# ----------------------------------------------------------------- solve


def _solve_fwd(a, b, vec=False, left=True, name="torch.linalg.solve", check=True):
    xp = namespace(a)
    if not left:  # X A = B  <=>  A^T X^T = B^T
        a = a.swapaxes(-1, -2)
        if not vec:
            b = b.swapaxes(-1, -2)
    if vec:
        b = b[..., None]
    try:
        x = xp.linalg.solve(a, b)
    except xp.linalg.LinAlgError:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        full = xp.broadcast_to(a, batch + a.shape[-2:])
        infos = pivot_infos(full)
        if check:
            raise singular_error(name, full, infos, "solve") from None
        x = xp.full(batch + b.shape[-2:], xp.nan, dtype=xp.result_type(a, b))
        fb = xp.broadcast_to(b, batch + b.shape[-2:]).reshape(-1, *b.shape[-2:])
        fa, fx = full.reshape(-1, *a.shape[-2:]), x.reshape(-1, *b.shape[-2:])
        for k, info in enumerate(infos.reshape(-1)):
            if info == 0:
                fx[k] = xp.linalg.solve(fa[k], fb[k])
    if vec:
        x = x[..., 0]
    else:  # column-major solutions as LAPACK's in PyTorch (row-major for left=False, whose
        # solution is the transposed one; seed 9960414)
        x = xp.swapaxes(xp.ascontiguousarray(xp.swapaxes(x, -1, -2)), -1, -2)
        if not left:
            x = x.swapaxes(-1, -2)
    return x


def _solve_vjp(node, g, saved):
    a, _, x = saved
    vec, left = node.params[:2]
    na, nb = node.next
    # the gradient of B solves the transposed system; A's is minus its product with X
    gb = _solve(_mT(a), g, vec, left, "torch.linalg.solve", True)
    if not na:
        return (None, gb)
    if vec:
        ga = unsqueeze(gb, -1) * unsqueeze(x, -2) if left else unsqueeze(x, -1) * unsqueeze(gb, -2)
    else:
        ga = matmul(gb, _mT(x)) if left else matmul(_mT(x), gb)
    return (-ga, gb if nb else None)


# (PyTorch's node saves A, its LU factors and the result, never B: changing B in place
# before backward is no error there; seeds 11046112, 11049757)
_solve = defop("linalg.solve", _solve_fwd, _solve_vjp, "LinalgSolveExBackward0", 2, BOTH,
               "promote", saved_for=lambda needs: (True, False))


def _solve_args(name, A, B, left):  # noqa: N803 - PyTorch's names
    check_square(name, A, dtype=False)
    if A._data.dtype.kind != "f":
        check_square(name, A)  # (its RuntimeError for an integer A)
    tensor_arg(B, "B", 1)
    _same_dtype(name, (A, B), name + ": Expected A and B to have the same dtype, but found A "
                "of type {} and B of type {} instead")
    # PyTorch's rule: B is a (batch of) vector(s) when it is 1-D or A's shape less one dim
    vec = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    n = A.shape[-1]
    if vec and not left:  # PyTorch takes B as a column there, which XA = B cannot use
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"XA = B ({A.shape[-2]}x{A.shape[-1]} and {B.shape[-1]}x1)")
    if vec:
        if B.shape[-1] != n:
            eq = "AX = B" if left else "XA = B"
            raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation {eq} "
                               f"({A.shape[-2]}x{A.shape[-1]} and {B.shape[-1]})")
    else:
        if B.ndim < 2:
            raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
        k = B.shape[-2] if left else B.shape[-1]
        if k != n:
            eq = "AX = B" if left else "XA = B"
            raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation {eq} "
                               f"({A.shape[-2]}x{A.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})")
        try:
            np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
        except ValueError:
            raise RuntimeError(f"{name}: the batch dimensions of A {list(A.shape[:-2])} and B "
                               f"{list(B.shape[:-2])} do not broadcast") from None
    no_half(name, A)  # (the LU kernel's, after the shape checks)
    return vec


def solve(A, B, *, left=True):  # noqa: N803 - PyTorch's names
    """The solution X of ``A X = B`` (``X A = B`` with ``left=False``); ``B`` may be a
    vector (or a batch of them: A's shape less its last dim).

    Examples
    --------
    >>> import retrograd as T
    >>> T.linalg.solve(T.tensor([[2.0, 0.0], [0.0, 4.0]]), T.tensor([1.0, 1.0]))
    tensor([0.5000, 0.2500])
    """
    vec = _solve_args("torch.linalg.solve", A, B, left)
    return _solve(A, B, vec, left, "torch.linalg.solve", True)


def solve_ex(A, B, *, left=True, check_errors=False):  # noqa: N803 - PyTorch's names
    """``(result, info)``: ``solve`` reporting singular matrices in ``info`` (int32)."""
    vec = _solve_args("torch.linalg.solve_ex", A, B, left)
    x = _solve(A, B, vec, left, "torch.linalg.solve_ex", check_errors)
    xp = namespace(A._data)
    batch = tuple(x.shape[:-1] if vec else x.shape[:-2])
    if bool(xp.isfinite(x._data).all()):
        info = np.zeros(batch, dtype=np.int32)
    else:
        info = pivot_infos(xp.broadcast_to(A._data, batch + tuple(A.shape[-2:])))
    return solve_ex_type(x, make_tensor(xp.asarray(info)))


# ----------------------------------------------------------------- triangular solves


def _triangle(a, upper, unit):
    xp = namespace(a)
    t = xp.triu(a) if upper else xp.tril(a)
    if unit:
        n = a.shape[-1]
        t = t.copy()
        t[..., range(n), range(n)] = 1
    return t


_SUBSTITUTE_UP_TO = 16  # up to this size a row loop over the batch beats a solve per matrix
_TRSM_FROM = 48  # from this size SciPy's trsm per matrix beats NumPy's general solve


def column_major(a):
    """``a`` with each matrix stored column by column (strides (1, rows)): the layout of
    PyTorch's LAPACK-computed solutions (solve_triangular, lu_solve, cholesky_solve), so that
    a later reshape copies where PyTorch's does (UnsafeViewBackward0: seeds 12617295,
    12670162)."""
    xp = namespace(a)
    # (a fresh array, not ascontiguousarray: that keeps a (1, n) transpose as it is, whose
    # size-1 dim's stride is then not PyTorch's (an (m, 1) solution has strides (1, m) there,
    # which PyTorch's kron then refuses to view: seed 19670971))
    t = xp.empty(a.shape[:-2] + (a.shape[-1], a.shape[-2]), dtype=a.dtype)
    t[...] = xp.swapaxes(a, -1, -2)
    return xp.swapaxes(t, -1, -2)


def _solve_triangular_fwd(a, b, upper, left=True, unit=False):
    return column_major(_solve_triangular_values(a, b, upper, left, unit))


def _solve_triangular_values(a, b, upper, left=True, unit=False):
    xp = namespace(a)
    if not left:  # X T = B  <=>  T^T X^T = B^T
        return _solve_triangular_values(a.swapaxes(-1, -2), b.swapaxes(-1, -2), not upper,
                                        True, unit).swapaxes(-1, -2)
    n = a.shape[-1]
    if (type(a) is np.ndarray and type(b) is np.ndarray and n > 0
            and (unit or np.diagonal(a, axis1=-2, axis2=-1).all())):
        # triangular fast paths, reading only the triangle (no copy of it): a general solve
        # would refactor it (O(n^3) per matrix) and pay a LAPACK call per small matrix
        if n <= _SUBSTITUTE_UP_TO:
            return substitute(a, b, upper, unit)
        if n >= _TRSM_FROM and _have_scipy():
            return _trsm(a, b, upper, unit)
    t = _triangle(a, upper, unit)
    batch = np.broadcast_shapes(t.shape[:-2], b.shape[:-2])
    try:
        return xp.linalg.solve(t, b)
    except xp.linalg.LinAlgError:
        # a zero on the diagonal: back substitution gives inf/nan as LAPACK's trtrs does
        with np.errstate(all="ignore"):
            return substitute(xp.broadcast_to(t, batch + t.shape[-2:]),
                              xp.broadcast_to(b, batch + b.shape[-2:]), upper, unit)


def _have_scipy():
    try:
        import scipy.linalg  # noqa: F401
    except ImportError:
        return False
    return True


def _trsm(a, b, upper, unit):
    """``a^-1 b`` by SciPy's triangular solve, one call per matrix of the batch."""
    from scipy.linalg import solve_triangular as trsm

    n = a.shape[-1]
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    flat_a = np.broadcast_to(a, batch + a.shape[-2:]).reshape(-1, n, n)
    flat_b = np.broadcast_to(b, batch + b.shape[-2:]).reshape(-1, *b.shape[-2:])
    out = np.empty(flat_b.shape, dtype=np.result_type(a, b))
    for i in range(flat_b.shape[0]):
        out[i] = trsm(flat_a[i], flat_b[i], lower=not upper, unit_diagonal=unit,
                      check_finite=False)
    return out.reshape(batch + b.shape[-2:])


@quiet_fp
def substitute(t, b, upper, unit=False):
    """``t^-1 b`` for triangular ``t`` (..., n, n) by substitution, one row at a time over
    the whole batch (reading only the triangle; the diagonal too unless ``unit``): for
    small n far cheaper than a solve per matrix; a zero pivot gives inf/nan, as trtrs."""
    xp = namespace(t)
    n = t.shape[-1]
    batch = np.broadcast_shapes(t.shape[:-2], b.shape[:-2])
    x = xp.empty(batch + b.shape[-2:], dtype=xp.result_type(t, b))
    diag = xp.diagonal(t, axis1=-2, axis2=-1)[..., None]
    order = range(n - 1, -1, -1) if upper else range(n)
    for i in order:
        if i == order[0]:  # (nothing solved yet: no product)
            row = b[..., i, :]
        else:
            done = slice(i + 1, n) if upper else slice(0, i)
            row = b[..., i, :] - (t[..., i:i + 1, done] @ x[..., done, :])[..., 0, :]
        if unit:
            x[..., i, :] = row
        else:  # (into x directly: one temporary less per row)
            xp.divide(row, diag[..., i, :], out=x[..., i, :])
    return x


def _solve_triangular_vjp(node, g, saved):
    a, _, x = saved
    upper, left, unit = node.params
    na, nb = node.next
    gb = _solve_triangular(_mT(a), g, not upper, left, unit)
    if not na:
        return (None, gb)
    ga = -(matmul(gb, _mT(x)) if left else matmul(_mT(x), gb))
    # only the triangle that was read (less its diagonal when it is taken as ones)
    if upper:
        ga = triu(ga, 1 if unit else 0)
    else:
        ga = tril(ga, -1 if unit else 0)
    return (ga, gb if nb else None)


_solve_triangular = defop("linalg.solve_triangular", _solve_triangular_fwd,
                          _solve_triangular_vjp, "LinalgSolveTriangularBackward0", 2, BOTH,
                          "promote")
# the public linalg.solve_triangular: PyTorch's node saves A and the result, never B (changing
# B in place before backward is no error there: fuzz seed 11303127); triangular_solve's does
_solve_triangular_public = defop("linalg.solve_triangular", _solve_triangular_fwd,
                                 _solve_triangular_vjp, "LinalgSolveTriangularBackward0", 2,
                                 BOTH, "promote", saved_for=lambda needs: (True, False))


def _triangular_args(name, A, B, left, a_name="A", b_name="B"):  # noqa: N803
    check_square(name, A, a_name, dtype=False)
    tensor_arg(B, b_name)
    if B.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {b_name} must have at least 2 dimensions.")
    if name != "linalg.solve_triangular":  # (which casts B to A's dtype instead)
        _same_dtype(name, (A, B), name + ": Expected " + a_name + " and " + b_name + " to "
                    "have the same dtype, but found {} and {} instead")
    k = B.shape[-2] if left else B.shape[-1]
    if k != A.shape[-1]:
        raise RuntimeError(f"{name}: Incompatible shapes of {a_name} and {b_name} for the "
                           f"equation {'AX = B' if left else 'XA = B'} ({A.shape[-2]}x"
                           f"{A.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})")
    try:
        np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    except ValueError:
        raise RuntimeError(f"{name}: the batch dimensions of {a_name} {list(A.shape[:-2])} and "
                           f"{b_name} {list(B.shape[:-2])} do not broadcast") from None
    # the shapes pass: an integer A is refused by the kernel, even empty
    kernel_dtype("triangular_solve_cpu", name, A)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):  # noqa: N803
    """The solution X of ``A X = B`` (``X A = B`` with ``left=False``) reading only the
    upper or lower triangle of ``A`` (its diagonal taken as ones with ``unitriangular``).
    A zero on the diagonal gives inf/nan, as PyTorch (no error)."""
    _triangular_args("linalg.solve_triangular", A, B, left)
    if B._data.dtype != A._data.dtype:  # PyTorch computes in A's dtype (B's gradient in B's)
        B = B.to(A.dtype)  # noqa: N806
    return _solve_triangular_public(A, B, bool(upper), bool(left), bool(unitriangular))


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False):  # noqa: A002,N803
    """``(solution, cloned_coefficient)``: X with ``op(A) X = input``, op(A) = A or A^T
    (``transpose``); the older spelling of ``linalg.solve_triangular``."""
    _triangular_args("triangular_solve", A, input, True, "A", "input")
    a = _mT(A) if transpose else A
    x = _solve_triangular(a, input, bool(upper) != bool(transpose), True, bool(unitriangular))
    return triangular_solve_type(x, clone(A))


# ----------------------------------------------------------------- pinv


def _pinv_fwd(a, atol, rtol, hermitian):
    xp = namespace(a)
    m, n = a.shape[-2:]
    if a.size == 0:
        return xp.zeros(a.shape[:-2] + (n, m), dtype=a.dtype)
    if hermitian:
        w, v = xp.linalg.eigh(a)
        s = xp.abs(w)
    else:
        refuse_infinite_svd("linalg.pinv", a)
        u, s, vh = xp.linalg.svd(a, full_matrices=False)
    top = s.max(axis=-1, keepdims=True)
    # atol / rtol: numbers, or arrays broadcasting against the batch (one per matrix)
    atol = xp.asarray(atol, dtype=a.dtype)[..., None]
    rtol = xp.asarray(rtol, dtype=a.dtype)[..., None]
    cutoff = xp.maximum(atol, rtol * top)
    keep = s > cutoff
    with np.errstate(divide="ignore"):
        s_inv = xp.where(keep, 1 / xp.where(keep, s if not hermitian else w, 1), 0)
    if hermitian:
        return (v * s_inv[..., None, :]) @ v.swapaxes(-1, -2)
    return (vh.swapaxes(-1, -2) * s_inv[..., None, :]) @ u.swapaxes(-1, -2)


def _pinv_vjp(node, g, saved):
    # Golub and Pereyra's derivative of the pseudoinverse P (constant rank):
    # gA = -P^T g P^T + (I - A P) g^T P P^T + P^T P g^T (I - P A)
    a, p = saved
    pt, gt = _mT(p), _mT(g)
    first = -matmul(matmul(pt, g), pt)
    ap = matmul(a, p)
    left = matmul(gt, matmul(p, pt))
    second = left - matmul(ap, left)
    right = matmul(matmul(pt, p), gt)
    third = right - matmul(right, matmul(p, a))
    return (first + second + third,)


_pinv = defop("linalg.pinv", _pinv_fwd, _pinv_vjp, "LinalgPinvBackward0", 1, BOTH)


def pinv(A, *, atol=None, rtol=None, hermitian=False):  # noqa: N803 - PyTorch's names
    """The Moore-Penrose pseudoinverse of each matrix of ``A`` (..., m, n): singular values
    at or below ``max(atol, rtol * largest)`` count as zero (``rtol`` defaults to
    ``eps * max(m, n)``, or 0 where a positive ``atol`` is given); each a number or a tensor
    broadcasting against the batch (one tolerance per matrix).  ``hermitian`` uses
    the symmetric eigendecomposition (A is assumed symmetric, not checked)."""
    tensor_arg(A, "A")
    if A.ndim < 2:
        raise RuntimeError(f"linalg.pinv(A): The input tensor A must have at least 2 "
                           f"dimensions (got shape {list(A.shape)})")
    if A._data.dtype.kind != "f":
        raise RuntimeError(f"linalg.pinv(A): Expected a floating point or complex tensor as "
                           f"input. Got {scalar_type_name(A._data.dtype)}")
    if A._data.dtype == np.float16:
        raise RuntimeError(f"linalg.pinv(Half{list(A.shape)}): expected a tensor with 2 or more "
                           "dimensions of float, double, cfloat or cdouble types (convert "
                           "first, e.g. A.float())")
    if hermitian and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.pinv(A, hermitian=True): A must be batches of square "
                           f"matrices, but they are {A.shape[-2]} by {A.shape[-1]} matrices")
    xp = namespace(A._data)
    # tolerances: numbers or tensors (one per matrix of the batch, broadcasting)
    atol_a = xp.asarray(0.0 if atol is None else getattr(atol, "_data", atol), dtype=A._data.dtype)
    if rtol is None:  # eps * max(m, n), or 0 where a positive atol is given (PyTorch's rule)
        default = float(np.finfo(A._data.dtype).eps) * max(A.shape[-2:])
        rtol_a = xp.where(atol_a > 0, 0.0, default) if atol is not None else \
            xp.asarray(default, dtype=A._data.dtype)
    else:
        rtol_a = xp.asarray(getattr(rtol, "_data", rtol), dtype=A._data.dtype)
    return _pinv(A, atol_a.astype(A._data.dtype), rtol_a.astype(A._data.dtype), bool(hermitian))


def _pinv_rcond(A, rcond=None, hermitian=False, *, atol=None, rtol=None):  # noqa: N803
    if rcond is not None:
        rtol = rcond
    return pinv(A, atol=atol, rtol=rtol, hermitian=hermitian)


def pinverse(input, rcond=1e-15):  # noqa: A002 - PyTorch's names
    """``linalg.pinv(input, rtol=rcond)`` (the older spelling)."""
    return pinv(input, rtol=rcond)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(inv, function=False, method=False, linalg=("inv",), signature="A")
register(inverse, signature="input")
register(inv_ex, function=False, method=False, linalg=("inv_ex",), tuple_out=True)
register(solve, function=False, method=False, linalg=("solve",),
         signature="A, B, *, left=True")
register(solve_ex, function=False, method=False, linalg=("solve_ex",), tuple_out=True)
register(solve_triangular, function=False, method=False, linalg=("solve_triangular",),
         signature="A, B, *, upper, left=True, unitriangular=False")
register(triangular_solve, tuple_out=True)
register(_pinv_rcond, "pinv", function=False, method=False, linalg=("pinv",),
         signature="A, rcond=None, hermitian=False, *, atol=None, rtol=None")
register(pinverse, signature="input, rcond=1e-15")
