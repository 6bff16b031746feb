"""Decompositions (issue 11): linalg.cholesky / cholesky_ex / cholesky, linalg.qr / qr,
linalg.eigh / eigvalsh, linalg.svd / svdvals / svd.

Each decomposition is one node with PyTorch's grad_fn name, whose outputs are all its
results (``U, S, Vh``; ``eigenvalues, eigenvectors``...).  It saves its own outputs, so with
``create_graph=True`` the derivative, written below with retrograd's ops (matmul,
solve_triangular, tril...), is itself recorded and every order of derivative works.  The
one-result forms (``svdvals``, ``eigvalsh``) are the full decomposition with the other
results dropped, as in PyTorch, so they share the derivative.

Derivatives are the known results, in the form PyTorch's FunctionsManual.cpp uses (so the
gradients are the same numbers): Murray's for Cholesky, Walter and Lehmann's for QR,
Townsend's for the SVD, Giles' for the symmetric eigendecomposition.  As in PyTorch they are
correct for losses invariant to the sign of singular/eigen vectors, and repeated singular or
eigen values give inf/NaN gradients of the vectors.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..autograd.forward_state import fw, tangent_of
from ..autograd.grad_mode import state
from ..backend import namespace
from ..tensor import Tensor, make_tensor
from ._apply import record_multi_inputs
from ._jvp import JVPS
from ._errors import scalar_type_name, tensor_arg
from .layout import tril, triu
from .linalg import _mT, matmul
from .linalg_solve import (LinAlgError, _solve_triangular, check_square, kernel_dtype,
                           no_half, refuse_infinite_svd)
from .iter_layout import strided_copy
from .shape import unsqueeze

cholesky_ex_type = namedtuple("linalg_cholesky_ex", ["L", "info"])
qr_type = namedtuple("linalg_qr", ["Q", "R"])
qr_old_type = namedtuple("qr", ["Q", "R"])
eigh_type = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
svd_type = namedtuple("linalg_svd", ["U", "S", "Vh"])
svd_old_type = namedtuple("svd", ["U", "S", "V"])


# ----------------------------------------------------------------- recording


def multi_node(name, vjp):
    """A node class with several outputs whose derivative is ``vjp(node, grads, saved)``."""
    from ._apply import multi_output_class

    return multi_output_class(name, vjp)


def record_outputs(node_cls, inputs, arrays, params, keep=(), save_inputs=False):
    """Tensors for ``arrays``, one node of ``node_cls`` for all of them when an input needs a
    gradient.  The node saves ``inputs`` (with ``save_inputs``) and then the outputs whose
    indices are in ``keep`` (see ``_apply.record_multi_inputs``)."""
    outs = [make_tensor(a) for a in arrays]
    if state.enabled and any(x._requires_grad for x in inputs):
        record_multi_inputs(node_cls, inputs, outs, params,
                            tuple(inputs) if save_inputs else (), keep)
    if fw.active:  # forward AD: the tangents (ops/_jvp.py), from what the node would save
        saved = tuple(inputs) if save_inputs else ()
        fw.propagate_outputs(node_cls, inputs, outs, params,
                             saved + tuple(outs[i] for i in keep))
    return outs


def _is_zero(g, node=None, nr=None):
    """Whether ``g`` is a gradient the engine filled with zeros: PyTorch's undefined
    gradient of an unused output, so the derivative takes the values-only form (svdvals,
    eigvalsh with repeated values stay finite).  The engine says which outputs of ``node``
    got none (a zero gradient that did flow takes PyTorch's full form: NaN at repeated
    singular values, seed 19734708); called by hand, a zero gradient outside any graph
    stands for an undefined one (a zero that requires grad is a real gradient)."""
    undefined = getattr(node, "undefined_grads", None) if node is not None else None
    if undefined is not None:
        return nr in undefined
    if isinstance(g, Tensor):
        return not g._requires_grad and not g._data.any()
    return not g.any()


def _float_matrices(name, A, arg="A"):  # noqa: N803 - PyTorch's name
    tensor_arg(A, arg)
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {arg} must have at least 2 dimensions.")
    if A._data.dtype.kind != "f":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_type_name(A._data.dtype)} (convert first, e.g. A.double())")
    no_half(name, A)


def _bool_arg(fn, arg, value):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{fn}(): argument '{arg}' must be bool, not {type(value).__name__}")
    return bool(value)


def _eye_like(data, n):
    return namespace(data).eye(n, dtype=data.dtype)


# ----------------------------------------------------------------- cholesky


def _potf2(a):
    """LAPACK's unblocked Cholesky (potf2, lower) of one matrix: ``(L, info)`` with, on
    failure at order j, the columns before j done and the non-positive pivot on the
    diagonal (what potrf leaves, and PyTorch's cholesky_ex returns)."""
    n = a.shape[-1]
    low = np.tril(np.array(a, dtype=a.dtype, copy=True))
    for j in range(n):
        ajj = low[j, j] - low[j, :j] @ low[j, :j]
        if not ajj > 0:  # (also NaN)
            low[j, j] = ajj
            return low, j + 1
        low[j, j] = np.sqrt(ajj)
        with np.errstate(invalid="ignore"):  # (inf / inf: the NaN LAPACK makes too)
            low[j + 1:, j] = (low[j + 1:, j] - low[j + 1:, :j] @ low[j, :j]) / low[j, j]
    return low, 0


def _cholesky_arrays(a, upper):
    """``(L, infos)``: the Cholesky factors of the batch ``a`` from its lower triangle (the
    upper one with ``upper``, giving U = L^T), and LAPACK's info per matrix."""
    xp = namespace(a)
    src = a.swapaxes(-1, -2) if upper else a
    try:
        low = xp.linalg.cholesky(src)
        infos = np.zeros(a.shape[:-2], dtype=np.int32)
        # a NaN pivot: LAPACK's potrf stops there (info > 0, PyTorch raises) where NumPy
        # carries the NaN on (fuzz seed 12678710); with an inf NumPy's blocked factor even
        # drops the inf / inf = NaN below it (seed 13812838): any non-finite factor is redone
        # with LAPACK's unblocked steps
        failed = not bool(xp.isfinite(low).all())
    except xp.linalg.LinAlgError:
        failed = True
    if failed:
        host = np.asarray(src.get() if hasattr(src, "get") else src)
        flat = host.reshape(-1, *host.shape[-2:])
        parts = [_potf2(m) for m in flat]
        low = xp.asarray(np.stack([p[0] for p in parts]).reshape(host.shape))
        infos = np.array([p[1] for p in parts], dtype=np.int32).reshape(host.shape[:-2])
    low = low.astype(a.dtype, copy=False)
    # column-major factors (strides (1, n)), as LAPACK's in PyTorch, upper or lower (9960414)
    out = low.swapaxes(-1, -2) if upper else low
    return xp.swapaxes(xp.ascontiguousarray(xp.swapaxes(out, -1, -2)), -1, -2), infos


def not_positive_definite(name, a, infos):
    """The LinAlgError PyTorch raises for the first matrix that is not positive-definite."""
    bad = np.argwhere(np.asarray(infos) > 0)[0]
    info = int(np.asarray(infos)[tuple(bad)])
    batch = ""
    if a.ndim > 2:
        batch = f"(Batch element {int(np.ravel_multi_index(tuple(bad), a.shape[:-2]))}): "
    return LinAlgError(f"{name}: {batch}The factorization could not be completed because the "
                       f"input is not positive-definite (the leading minor of order {info} is "
                       "not positive-definite).")


def _cholesky_vjp(node, grads, saved):
    # Murray (2016): gA = L^-T Phi(L^T gL) L^-1, symmetrized (PyTorch's cholesky_backward)
    (low,) = saved
    (g,) = grads[:1]
    upper = node.params[0]
    if upper:
        low, g = _mT(low), _mT(g)
    ga = tril(matmul(_mT(low), g))
    ga = 0.5 * (ga + _mT(tril(ga, -1)))
    if not isinstance(low, Tensor):  # first order: one inverse and two products are faster
        inv_low = _lower_inverse(low)  # than two solves
        return (_mT(inv_low) @ ga @ inv_low,)
    ga = _solve_triangular(_mT(low), ga, True, True, False)
    return (_solve_triangular(low, ga, False, False, False),)


def _lower_inverse(low):
    """L^-1 of a batch of lower-triangular matrices: many small ones by substitution, a row
    at a time across the whole batch (twice as fast on 256 8x8 matrices as LAPACK's inverse,
    which pays a call per matrix), others by LAPACK."""
    xp = namespace(low)
    n = low.shape[-1]
    if n > 16 or low.size < 32 * n * n:
        return xp.linalg.inv(low)
    out = xp.zeros(low.shape, dtype=low.dtype)
    inv_diag = 1 / low[..., range(n), range(n)]
    for i in range(n):
        row = -xp.einsum("...k,...kj->...j", low[..., i, :i], out[..., :i, :])
        row[..., i] += 1
        out[..., i, :] = row * inv_diag[..., i:i + 1]
    return out


def _cholesky_jvp(inputs, tangents, outs, params):
    # forward AD, PyTorch's cholesky_jvp: dL = L Phi(L^-1 dA L^-T), Phi = the lower
    # triangle with the diagonal halved (two triangular solves: half the time of the VJP's
    # transpose, which records and differentiates the whole backward formula)
    (out,), (dA,), upper = outs, tangents, params[0]  # noqa: N806 - the formula's names
    low = _mT(out) if upper else out
    x = _solve_triangular(low, dA, False, True, False)
    phi = tril(_mT(_solve_triangular(low, _mT(x), False, True, False)))
    phi = phi - 0.5 * phi * _eye_like(out._data, out.shape[-1])
    d_low = matmul(low, phi)
    return [_mT(d_low) if upper else d_low]


_CholeskyExNode = multi_node("LinalgCholeskyExBackward0", _cholesky_vjp)
_CholeskyNode = multi_node("CholeskyBackward0", _cholesky_vjp)
JVPS["LinalgCholeskyExBackward0"] = JVPS["CholeskyBackward0"] = _cholesky_jvp


def _cholesky(name, A, upper, check, node_cls=_CholeskyExNode):  # noqa: N803
    # linalg.cholesky refuses an integer dtype up front, torch.cholesky in its kernel (an
    # empty one passes: the kernel never runs)
    check_square(name, A, dtype=name != "cholesky")
    kernel_dtype("cholesky_cpu", name, A, empty_ok=True)
    low, infos = _cholesky_arrays(A._data, upper)
    if check and infos.any():
        raise not_positive_definite(name, A._data, infos)
    (out,) = record_outputs(node_cls, (A,), (low,), (upper,), keep=(0,))
    return out, infos


def linalg_cholesky(A, *, upper=False):  # noqa: N803 - PyTorch's name
    """The Cholesky factor L (lower, ``A = L L^T``) of each symmetric positive-definite
    matrix of ``A``, read from its lower triangle (U with ``A = U^T U`` from the upper one
    with ``upper=True``).  A matrix that is not positive-definite raises LinAlgError naming
    its batch element and the order of the failing leading minor.

    Examples
    --------
    >>> import retrograd as T
    >>> T.linalg.cholesky(T.tensor([[4.0, 2.0], [2.0, 5.0]]))
    tensor([[2., 0.],
            [1., 2.]])
    """
    upper = _bool_arg("linalg_cholesky", "upper", upper)
    return _cholesky("linalg.cholesky", A, upper, True)[0]


def cholesky_ex(A, *, upper=False, check_errors=False):  # noqa: N803 - PyTorch's names
    """``(L, info)``: ``linalg.cholesky`` reporting, instead of raising, the order of the
    first leading minor that is not positive-definite (``info``, int32, 0 when it is)."""
    upper = _bool_arg("linalg_cholesky_ex", "upper", upper)
    out, infos = _cholesky("linalg.cholesky_ex", A, upper, bool(check_errors))
    return cholesky_ex_type(out, make_tensor(namespace(A._data).asarray(infos)))


def cholesky(input, upper=False):  # noqa: A002 - PyTorch's name
    """``torch.cholesky`` (deprecated in PyTorch for ``linalg.cholesky``; same values,
    grad_fn CholeskyBackward0)."""
    upper = _bool_arg("cholesky", "upper", upper)
    return _cholesky("cholesky", input, upper, True, _CholeskyNode)[0]


# ----------------------------------------------------------------- qr


def _qr_vjp(node, grads, saved):
    # Walter and Lehmann; for m >= n:  gA = [gQ + Q copyltu(M)] R^-T, M = R gR^T - gQ^T Q
    # (copyltu: the lower triangle mirrored).  For m < n, A = [X | Y] with X = Q U square:
    # gY = Q gV and X's gradient is the square one with gQ + Y gV^T (PyTorch's qr_backward)
    q, r = saved
    gq, gr = grads
    mode, m, n = node.params
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when "
                           "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going "
                           "to differentiate through linalg.qr.")
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")
    if m >= n:
        return (_qr_square_part(q, r, gq, gr),)
    x_r, y_r = r[..., :, :m], r[..., :, m:]
    g_u, g_v = gr[..., :, :m], gr[..., :, m:]
    a_y = matmul(q, y_r)  # Y, the columns after the first m
    gx = _qr_square_part(q, x_r, gq + matmul(a_y, _mT(g_v)), g_u)
    gy = matmul(q, g_v)
    from .layout import cat

    return (cat([gx, gy], -1),)


def _qr_square_part(q, r, gq, gr):
    m_ = matmul(r, _mT(gr)) - matmul(_mT(gq), q)
    low = tril(m_, -1)
    copyltu = low + _mT(low) + tril(triu(m_))  # the lower triangle mirrored, the diagonal once
    b = gq + matmul(q, copyltu)
    return _solve_triangular(_mT(r), b, False, False, False)  # B R^-T: solve X R^T = B


_QrNode = multi_node("LinalgQrBackward0", _qr_vjp)


def _column_major(x):
    """``x`` (a fresh batch of matrices) with each matrix column-major, as LAPACK leaves
    PyTorch's factors (its cloneBatchedColumnMajor); a 1-d ``x`` as it is."""
    if x.ndim < 2 or x.size == 0:
        return x  # (an empty one keeps NumPy's strides, as every empty array here)
    strides = [0] * x.ndim
    step = 1
    for d in [x.ndim - 2, x.ndim - 1, *range(x.ndim - 3, -1, -1)]:  # (size-1 dims' too)
        strides[d] = step
        step *= x.shape[d]
    return strided_copy(x, strides)


def _qr(A, mode, name="linalg.qr"):  # noqa: N803
    _float_matrices(name, A)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    a = A._data
    xp = namespace(a)
    m, n = a.shape[-2:]
    if a.size == 0:  # (NumPy's qr refuses empty matrices)
        k = m if mode == "complete" else min(m, n)
        q = xp.broadcast_to(_eye_like(a, m)[:, :k], a.shape[:-2] + (m, k)).copy()
        r = xp.zeros(a.shape[:-2] + (k, n), dtype=a.dtype)
    else:
        q, r = xp.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
    if mode == "r":
        q = xp.zeros((0,), dtype=a.dtype)
    # LAPACK's layout, as PyTorch returns Q and R: each matrix column-major (the batch
    # row-major over the matrices), so R.is_contiguous() is False and R.t() is a plain view
    q = _column_major(q.astype(a.dtype, copy=False))
    r = _column_major(r.astype(a.dtype, copy=False))
    return record_outputs(_QrNode, (A,), (q, r), (mode, m, n), keep=(0, 1))


def qr(A, mode="reduced"):  # noqa: N803 - PyTorch's name
    """``(Q, R)`` with ``A = Q R``, Q with orthonormal columns, R upper triangular:
    ``mode='reduced'`` (k = min(m, n) columns), ``'complete'`` (Q square), ``'r'`` (R only,
    Q empty; not differentiable, as PyTorch).

    Examples
    --------
    >>> import retrograd as T
    >>> T.linalg.qr(T.tensor([[3.0, 1.0], [4.0, 2.0]])).R
    tensor([[-5.0000, -2.2000],
            [ 0.0000,  0.4000]])
    """
    return qr_type(*_qr(A, mode))


def qr_old(input, some=True):  # noqa: A002 - PyTorch's names
    """``torch.qr(input, some)``: ``linalg.qr`` with mode 'reduced' (``some``) or
    'complete'."""
    return qr_old_type(*_qr(input, "reduced" if some else "complete"))


# ----------------------------------------------------------------- eigh


def _eigh_vjp(node, grads, saved):
    # gA = V (diag(gL) + skew(V^T gV)/2 / E) V^T, E_ij = L_j - L_i (PyTorch's
    # linalg_eig_backward for Hermitian A); symmetric, for the symmetric A that eigh assumes
    w, v = saved
    gw, gv = grads
    if _is_zero(gv, node, 1):
        return (matmul(v * gw[..., None, :], _mT(v)),)
    data = getattr(w, "_data", w)
    eye = _eye_like(data, data.shape[-1])
    vhgv = matmul(_mT(v), gv)
    vhgv = 0.5 * (vhgv - _mT(vhgv))
    e = unsqueeze(w, -2) - unsqueeze(w, -1) + eye
    with np.errstate(divide="ignore", invalid="ignore"):  # repeated eigenvalues: inf/NaN,
        inner = vhgv / e + unsqueeze(gw, -1) * eye  # as PyTorch, quietly (diagonal: 0 + gw)
        return (matmul(matmul(v, inner), _mT(v)),)


_EighNode = multi_node("LinalgEighBackward0", _eigh_vjp)


def _eigh(A, UPLO, name):  # noqa: N803 - PyTorch's names
    check_square(name, A, dtype=False)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    kernel_dtype("linalg_eigh_cpu", name, A, empty_ok=True)  # (seed 15096647)
    a = A._data
    xp = namespace(a)
    if a.size == 0:
        w = xp.zeros(a.shape[:-1], dtype=a.dtype)
        v = xp.zeros(a.shape, dtype=a.dtype)
    else:
        try:
            w, v = xp.linalg.eigh(a, UPLO=UPLO)
        except xp.linalg.LinAlgError:
            # LAPACK's syevd does not converge (a matrix of NaNs): PyTorch's LinAlgError, a
            # RuntimeError, not NumPy's ValueError (fuzz seed 19759501)
            raise LinAlgError(
                f"{name.replace('eigvalsh', 'eigh')}: The algorithm failed to converge because "
                "the input matrix is ill-conditioned or has too many repeated eigenvalues "
                "(error code: 1); check it for NaN or infinite entries") from None
    return record_outputs(_EighNode, (A,), (w.astype(a.dtype, copy=False),
                                            v.astype(a.dtype, copy=False)), (), keep=(0, 1))


def eigh(A, UPLO="L"):  # noqa: N803 - PyTorch's names
    """``(eigenvalues, eigenvectors)`` of each symmetric matrix of ``A``, read from its
    lower (``UPLO='L'``) or upper triangle: eigenvalues ascending, eigenvectors as columns
    (each up to sign).

    Examples
    --------
    >>> import retrograd as T
    >>> T.linalg.eigh(T.tensor([[2.0, 1.0], [1.0, 2.0]])).eigenvalues
    tensor([1., 3.])
    """
    return eigh_type(*_eigh(A, UPLO, "linalg.eigh"))


def eigvalsh(A, UPLO="L"):  # noqa: N803 - PyTorch's names
    """The eigenvalues (ascending) of each symmetric matrix of ``A``."""
    return _eigh(A, UPLO, "linalg.eigvalsh")[0]


# ----------------------------------------------------------------- svd


def _svd_vjp(node, grads, saved):
    # Townsend (PyTorch's svd_backward), on the thin factors (the extra columns of full
    # ones get no gradient, as in PyTorch): with E_jk = s_k^2 - s_j^2,
    # gA = U [(skew(U^T gU) S + S skew(V^T gV)) / E + diag(gS)] V^T
    #      + (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T)
    u, s, vh = saved
    gu, gs, gvh = grads
    m, n, full = node.params
    k = min(m, n)
    if full:
        u, gu, vh, gvh = u[..., :, :k], gu[..., :, :k], vh[..., :k, :], gvh[..., :k, :]
    if _is_zero(gu, node, 0) and _is_zero(gvh, node, 2):
        return (matmul(u * gs[..., None, :], vh),)
    data = getattr(s, "_data", s)
    eye = _eye_like(data, k)
    s2 = s * s
    e = unsqueeze(s2, -2) - unsqueeze(s2, -1) + eye
    uhgu = matmul(_mT(u), gu)
    vhgv = matmul(vh, _mT(gvh))
    with np.errstate(divide="ignore", invalid="ignore"):  # repeated or zero singular
        ret = ((uhgu - _mT(uhgu)) * unsqueeze(s, -2)    # values: inf/NaN as PyTorch
               + unsqueeze(s, -1) * (vhgv - _mT(vhgv))) / e
        ret = ret + unsqueeze(gs, -1) * eye
        if m > k:
            gus = gu / unsqueeze(s, -2)
            ga = matmul(u, ret) + gus - matmul(u, matmul(_mT(u), gus))
            return (matmul(ga, vh),)
        if n > k:
            sgvh = gvh / unsqueeze(s, -1)
            ga = matmul(ret, vh) + sgvh - matmul(matmul(sgvh, _mT(vh)), vh)
            return (matmul(u, ga),)
        return (matmul(matmul(u, ret), vh),)


_SvdNode = multi_node("LinalgSvdBackward0", _svd_vjp)


def svd_arrays(name, a, **kwargs):
    """``xp.linalg.svd(a, **kwargs)``; a matrix with NaN or inf, where LAPACK's gesdd does
    not converge, raises PyTorch's LinAlgError (a RuntimeError, not NumPy's ValueError:
    fuzz seed 12660401)."""
    xp = namespace(a)
    try:
        if kwargs.get("compute_uv", True):
            refuse_infinite_svd(name, a)
        return xp.linalg.svd(a, **kwargs)
    except xp.linalg.LinAlgError:
        batch = ""
        if a.ndim > 2:
            bad = ~xp.isfinite(a).all(axis=(-2, -1)).reshape(-1)
            batch = f"(Batch element {int(xp.argmax(bad))}): " if bad.any() else ""
        raise LinAlgError(f"{name}: {batch}The algorithm failed to converge because the input "
                          "matrix contained non-finite values.") from None


def _svd(A, full_matrices, name="linalg.svd"):  # noqa: N803
    _float_matrices(name, A)
    a = A._data
    xp = namespace(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    if a.size == 0:  # (NumPy's svd refuses empty matrices)
        mu, nv = (m, n) if full_matrices else (k, k)
        u = xp.broadcast_to(_eye_like(a, m)[:, :mu], a.shape[:-2] + (m, mu)).copy()
        vh = xp.broadcast_to(_eye_like(a, n)[:nv], a.shape[:-2] + (nv, n)).copy()
        s = xp.zeros(a.shape[:-2] + (k,), dtype=a.dtype)
    else:
        u, s, vh = svd_arrays("linalg.svd", a, full_matrices=full_matrices)
    arrays = tuple(x.astype(a.dtype, copy=False) for x in (u, s, vh))
    return record_outputs(_SvdNode, (A,), arrays, (m, n, bool(full_matrices)), keep=(0, 1, 2))


def svd(A, full_matrices=True, *, driver=None):  # noqa: N803 - PyTorch's names
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``: S descending, U and Vh square with
    ``full_matrices`` (the default), else k = min(m, n) columns / rows.  Singular vectors
    are defined up to sign; gradients are right for losses that do not depend on it.

    Examples
    --------
    >>> import retrograd as T
    >>> T.linalg.svd(T.tensor([[3.0, 0.0], [0.0, -4.0]])).S
    tensor([4., 3.])
    """
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on "
                           "CUDA inputs with cuSOLVER backend.")
    return svd_type(*_svd(A, full_matrices))


def svdvals(A, *, driver=None):  # noqa: N803 - PyTorch's names
    """The singular values (descending) of each matrix of ``A``.  The values alone when no
    gradient is needed; otherwise the thin SVD (its derivative needs U and V)."""
    if driver is not None:
        raise RuntimeError("torch.linalg.svdvals: keyword argument `driver=` is only supported "
                           "on CUDA inputs with cuSOLVER backend.")
    _float_matrices("linalg.svdvals", A)
    if (state.enabled and A._requires_grad) or (fw.active and tangent_of(A) is not None):
        return _svd(A, False, "linalg.svdvals")[1]
    a = A._data
    xp = namespace(a)
    if a.size == 0:
        return make_tensor(xp.zeros(a.shape[:-2] + (min(a.shape[-2:]),), dtype=a.dtype))
    return make_tensor(svd_arrays("linalg.svd", a, compute_uv=False).astype(a.dtype,
                                                                          copy=False))


def svd_old(input, some=True, compute_uv=True):  # noqa: A002 - PyTorch's names
    """``torch.svd``: ``(U, S, V)`` with V (not Vh); thin unless ``some=False``.  Without
    ``compute_uv``, U and V are zero matrices (m x m, n x n) as in PyTorch."""
    if not compute_uv:
        _float_matrices("linalg.svd", input)
        s = svdvals(input)
        xp = namespace(input._data)
        m, n = input.shape[-2:]
        batch = tuple(input.shape[:-2])
        zeros = [make_tensor(xp.zeros(batch + (d, d), dtype=input._data.dtype)) for d in (m, n)]
        return svd_old_type(zeros[0], s, zeros[1])
    u, s, vh = _svd(input, not some, "linalg.svd")
    return svd_old_type(u, s, _mT(vh))


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(linalg_cholesky, "cholesky", function=False, method=False, linalg=("cholesky",),
         signature="A, *, upper=False")
register(cholesky_ex, function=False, method=False, linalg=("cholesky_ex",), tuple_out=True)
register(cholesky, signature="input, upper=False")
register(qr, "qr", function=False, method=False, linalg=("qr",), tuple_out=True)
register(qr_old, "qr", signature="input, some=True")
register(eigh, function=False, method=False, linalg=("eigh",), tuple_out=True)
register(eigvalsh, function=False, method=False, linalg=("eigvalsh",), signature="A, UPLO='L'")
register(svd, "svd", function=False, method=False, linalg=("svd",), tuple_out=True)
register(svdvals, function=False, method=False, linalg=("svdvals",),
         signature="A, *, driver=None")
register(svd_old, "svd", signature="input, some=True, compute_uv=True")
