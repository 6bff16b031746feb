"""Hand-written forward derivatives (JVPs) of linalg.qr, linalg.eigh, linalg.svd and
linalg.lu, in the form of PyTorch's FunctionsManual (``linalg_qr_jvp``,
``linalg_eig_jvp`` for Hermitian input, ``svd_jvp``, ``linalg_lu_jvp``), so the tangents
are PyTorch's numbers.

Without them forward AD transposes each decomposition's VJP (``_jvp.jvp_of_vjp``): it
records the whole backward formula and runs the engine over it, several times slower than
these few matmuls and triangular solves.  They are written with retrograd's ops, so a
tangent that requires grad is differentiated further (reverse-over-forward).  A rule
returns None where PyTorch's forward formula does not apply (qr's mode 'r' or 'complete'
with m > n, a full-matrices SVD of a non-square matrix): the fallback then gives the
VJP's answer or its error.
"""

from __future__ import annotations

from ._jvp import JVPS, JVPS_SAVED
from .layout import cat, tril, triu
from .linalg import _mT, matmul
from .linalg_decomp import _eye_like
from .linalg_lu import permute_rows
from .linalg_solve import _solve_triangular
from .shape import unsqueeze

__all__ = ["qr_jvp", "eigh_jvp", "svd_jvp", "lu_jvp"]


def _diag(x):
    return x.diagonal(0, -2, -1)


def _no_diag(x):
    """``x`` with its diagonal zeroed (a product with 1 - I, recorded)."""
    return tril(x, -1) + triu(x, 1)


# ----------------------------------------------------------------- qr
def _qr_square_jvp(q, r, da):
    # A = Q R (m >= n): X = Q^T dA R^-1 = C + dR R^-1, C skew, dR R^-1 upper:
    # dR = (triu(X) + tril(X, -1)^T) R, dQ = dA R^-1 - Q (triu(X) + tril(X, -1)^T)
    da_rinv = _solve_triangular(r, da, True, False, False)  # dA R^-1: solve Y R = dA
    x = matmul(_mT(q), da_rinv)
    upper = triu(x) + _mT(tril(x, -1))
    return da_rinv - matmul(q, upper), matmul(upper, r)


def qr_jvp(inputs, tangents, outs, params):
    mode, m, n = params
    if mode == "r" or (mode == "complete" and m > n):
        return None  # not differentiable, as PyTorch: the fallback raises the VJP's error
    (q, r), (da,) = outs, tangents
    if m >= n:
        return list(_qr_square_jvp(q, r, da))
    # wide: A = [X | Y], X = Q R_x square; Y = Q R_y, so dR_y = Q^T (dY - dQ R_y)
    dq, drx = _qr_square_jvp(q, r[..., :, :m], da[..., :, :m])
    dry = matmul(_mT(q), da[..., :, m:] - matmul(dq, r[..., :, m:]))
    return [dq, cat([drx, dry], -1)]


# ----------------------------------------------------------------- eigh
def eigh_jvp(inputs, tangents, outs, params):
    # A V = V diag(L), V^T V = I: with T = V^T dA V, dL = diag(T) and
    # dV = V (T / E off the diagonal), E_ij = L_j - L_i (PyTorch's, with T as given)
    (w, v), (da,) = outs, tangents
    t = matmul(_mT(v), matmul(da, v))
    # (1 on the diagonal, whose T is dropped; repeated eigenvalues divide by zero: inf/NaN
    # as PyTorch's)
    e = unsqueeze(w, -2) - unsqueeze(w, -1) + _eye_like(w._data, w.shape[-1])
    return [_diag(t), matmul(v, _no_diag(t) / e)]


# ----------------------------------------------------------------- svd
def svd_jvp(inputs, tangents, outs, params):
    # PyTorch's svd_jvp (real): dP = U^T dA V, dS = diag(dP), and with X = dP off the
    # diagonal, E_jk = s_k^2 - s_j^2, sym(Y) = Y + Y^T:
    #   dU = U sym(X S) / E (+ (I - U U^T) dA V S^-1 when m > n)
    #   dVh = -sym(S X) / E Vh (+ S^-1 U^T dA (I - V V^T) when m < n)
    m, n, full = params
    if full and m != n:
        return None  # PyTorch's forward formula needs the thin factors
    (u, s, vh), (da,) = outs, tangents
    v = _mT(vh)
    dp = matmul(_mT(u), matmul(da, v))
    ds = _diag(dp)
    x = _no_diag(dp)
    s2 = s * s
    e = unsqueeze(s2, -2) - unsqueeze(s2, -1) + _eye_like(s._data, s.shape[-1])
    xs = x * unsqueeze(s, -2)
    sx = x * unsqueeze(s, -1)
    du = matmul(u, (xs + _mT(xs)) / e)
    dvh = -matmul((sx + _mT(sx)) / e, vh)
    if m > n:
        da_v_sinv = matmul(da, v / unsqueeze(s, -2))
        du = du + da_v_sinv - matmul(u, matmul(_mT(u), da_v_sinv))
    elif m < n:
        sinv_ut_da = matmul(_mT(u) / unsqueeze(s, -1), da)
        dvh = dvh + sinv_ut_da - matmul(matmul(sinv_ut_da, v), vh)
    return [du, ds, dvh]


# ----------------------------------------------------------------- lu
def _lu_square_jvp(low, up, pda):
    # P^T A = L U: X = L^-1 P^T dA U^-1 = L^-1 dL + dU U^-1 (strictly lower + upper), so
    # dL = L tril(X, -1), dU = triu(X) U
    x = _solve_triangular(low, pda, False, True, True)  # L^-1 (P^T dA), L unit lower
    x = _solve_triangular(up, x, True, False, False)  # ... U^-1: solve Y U = ...
    return matmul(low, tril(x, -1)), matmul(triu(x), up)


def lu_jvp(inputs, tangents, outs, params, saved):
    (low, up), (da,) = outs, tangents
    perm = saved[-1]
    pda = permute_rows(da, perm, transposed=True)  # P^T dA
    m, n = low.shape[-2], up.shape[-1]
    if m == n:
        return list(_lu_square_jvp(low, up, pda))
    k = min(m, n)
    if m < n:  # wide: U = [U1 U2], P^T A2 = L U2, so dU2 = L^-1 (P^T dA2 - dL U2)
        dl, du1 = _lu_square_jvp(low, up[..., :, :k], pda[..., :, :k])
        du2 = _solve_triangular(low, pda[..., :, k:] - matmul(dl, up[..., :, k:]), False,
                                True, True)
        return [dl, cat([du1, du2], -1)]
    # tall: L = [L1; L2], P^T A = [L1 U; L2 U], so dL2 = (P^T dA2 - L2 dU) U^-1
    dl1, du = _lu_square_jvp(low[..., :k, :], up, pda[..., :k, :])
    dl2 = _solve_triangular(up, pda[..., k:, :] - matmul(low[..., k:, :], du), True, False,
                            False)
    return [cat([dl1, dl2], -2), du]


JVPS["LinalgQrBackward0"] = qr_jvp
JVPS["LinalgEighBackward0"] = eigh_jvp
JVPS["LinalgSvdBackward0"] = svd_jvp
JVPS_SAVED["LinalgLuBackward0"] = lu_jvp
