"""Matrix functions and Householder products (issue 11): linalg.matrix_exp / matrix_exp,
linalg.vander, linalg.tensorinv, linalg.tensorsolve, linalg.householder_product, ormqr,
geqrf.

matrix_exp is PyTorch's Taylor scaling and squaring (per matrix of the batch); its
derivative is the block-matrix identity exp([[A^T, G], [0, A^T]]) = [[., gA], [0, .]],
computed with matrix_exp itself, so every order of derivative works.  vander, tensorinv and
tensorsolve are PyTorch's compositions (the same grad_fn names).  householder_product and
ormqr apply the reflectors one by one; each is one record with a hand-written derivative
(the product rule over the reflectors, in retrograd ops: every order).  geqrf is NumPy's QR
in LAPACK's raw form, with no derivative, as PyTorch's.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from ..autograd.forward_state import fw
from ..autograd.grad_mode import state
from ..backend import namespace
from ..tensor import Tensor, make_tensor
from ._apply import INPUTS, defop, multi_output_class, record_multi
from ._errors import scalar_type_name, tensor_arg
from .layout import movedim, tril
from .linalg import _mT, _same_dtype, matmul
from .linalg_solve import check_square, inv, solve
from .scans import cumprod
from .shape import cat, expand, reshape, stack, unsqueeze
from .quiet_fp import quiet_fp

geqrf_type = namedtuple("geqrf", ["a", "tau"])

# ----------------------------------------------------------------- matrix_exp

# PyTorch's matrix_exp: Bader, Blanes and Casas (2019), "Computing the matrix exponential
# with an optimized Taylor polynomial approximation": per matrix, the Taylor polynomial of
# the lowest degree (1, 2, 4, 8, 12) whose 1-norm bound (theta) it is within, else degree 18
# on A / 2^s squared back s times.  (Pade-13 before: 1 ulp under 1 for exp of a tiny entry,
# which s ~ 1000 squarings, for a huge one elsewhere in the matrix, took to 0: exp of
# [[-1e300, 0], [0, 1]] was all zeros, PyTorch's [[0, 0], [0, 1]].)
_THETAS = {  # the 1-norm bounds of degrees 1, 2, 4, 8, 12, 18, per dtype
    np.dtype(np.float64): (1.490116119384765625e-8, 2.580956802971767e-8, 3.397168839976962e-4,
                           4.991228871115323e-2, 2.996158913811580e-1, 1.090863719290036),
    np.dtype(np.float32): (1.192092800768788e-07, 5.978858893805233e-04, 5.116619363445086e-02,
                           5.800524627688768e-01, 1.461661507209034, 3.010066362817634),
}
_SQRT_177 = 0.1330413469565007072504e+2
_X3 = 2.0 / 3.0
# degree 8: A4 = A2 (x1 A + x2 A2), A8 = (x3 A2 + A4)(x4 I + x5 A + x6 A2 + x7 A4)
_T8 = (_X3 * ((1.0 + _SQRT_177) / 88.0), _X3 * ((1.0 + _SQRT_177) / 352.0),
       (-271.0 + 29.0 * _SQRT_177) / (315.0 * _X3), (-11.0 + 11.0 * _SQRT_177) / (1260.0 * _X3),
       (-99.0 + 11.0 * _SQRT_177) / (5040.0 * _X3), (89.0 - _SQRT_177) / (5040.0 * _X3),
       (857.0 - 58.0 * _SQRT_177) / 630.0)
# degree 12: B_i = sum_k b[i][k] A^k (k = 0..3); A6 = B2 + B3 B3; T = B0 + (B1 + A6) A6
_T12 = ((9.0198e-16, 0.46932117595418237389, -0.20099424927047284052,
         -0.04623946134063071740),
        (5.31597895759871264183, 1.19926790417132231573, 0.01179296240992997031,
         0.01108844528519167989),
        (0.18188869982170434744, 0.05502798439925399070, 0.09351590770535414968,
         0.00610700528898058230),
        (-2.0861320e-13, -0.13181061013830184015, -0.02027855540589259079,
         -0.00675951846863086359))
# degree 18: B_i = sum_k b[i][k] (I, A, A2, A3, A6)[k]; A9 = B0 B4 + B3; T = B1 + (B2 + A9) A9
_T18 = ((0.0, -1.00365581030144618291e-01, -8.02924648241156932449e-03,
         -8.92138498045729985177e-04, 0.0),
        (0.0, 3.97849749499645077844e-01, 1.36783778460411720168e+00,
         4.98289622525382669416e-01, -6.37898194594723280150e-04),
        (-1.09676396052962061844e+01, 1.68015813878906206114e+00, 5.71779846478865511061e-02,
         -6.98210122488052056106e-03, 3.34975017086070470649e-05),
        (-9.04316832390810593223e-02, -6.76404519071381882256e-02, 6.75961301770459654925e-02,
         2.95552570429315521194e-02, -1.39180257516060693404e-05),
        (0.0, 0.0, -9.23364619367118555360e-02, -1.69364939002081722752e-02,
         -1.40086798182036094347e-05))


def _combine(coefs, powers):
    """sum_k coefs[k] * powers[k], in that order."""
    out = coefs[0] * powers[0]
    for c, p in zip(coefs[1:], powers[1:]):
        out = out + c * p
    return out


def _taylor(x, degree):
    """The degree-``degree`` approximant of exp for a stack of matrices ``x`` (b, n, n)."""
    eye = namespace(x).broadcast_to(namespace(x).eye(x.shape[-1]), x.shape)
    if degree == 1:
        return eye + x
    x2 = x @ x
    if degree == 2:
        return eye + x + x2 / 2.0
    if degree == 4:
        return eye + x + x2 @ _combine((1 / 2.0, 1 / 6.0, 1 / 24.0), (eye, x, x2))
    if degree == 8:
        x1c, x2c, x4c, x5c, x6c, x7c, y2 = _T8
        a4 = x2 @ (x1c * x + x2c * x2)
        a8 = (_X3 * x2 + a4) @ _combine((x4c, x5c, x6c, x7c), (eye, x, x2, a4))
        return eye + x + y2 * x2 + a8
    x3 = x @ x2
    if degree == 12:
        b0, b1, b2, b3 = (_combine(row, (eye, x, x2, x3)) for row in _T12)
        a6 = b2 + b3 @ b3
        return b0 + (b1 + a6) @ a6
    powers = (eye, x, x2, x3, x3 @ x3)
    b0, b1, b2, b3, b4 = (_combine(row, powers) for row in _T18)
    a9 = b0 @ b4 + b3
    return b1 + (b2 + a9) @ a9


def _expm(a):
    """exp of each matrix of ``a`` (..., n, n), in float64 (cast back after)."""
    xp = namespace(a)
    n = a.shape[-1]
    if a.size == 0:
        return a.copy()
    if n == 1:  # PyTorch takes exp of the entry (exp(-inf) = 0, where a polynomial gives
        # nan; in float64, cast back: correctly rounded, as near PyTorch's float32 exp as
        # can be)
        return xp.exp(a.astype(np.float64)).astype(a.dtype, copy=False)
    thetas = _THETAS.get(np.dtype(a.dtype), _THETAS[np.dtype(np.float64)])
    x = a.astype(np.float64).reshape(-1, n, n)
    norm1 = xp.abs(x).sum(axis=-2).max(axis=-1)  # the 1-norm of each matrix
    out = xp.empty_like(x)
    lower = -1.0
    for degree, theta in zip((1, 2, 4, 8, 12), thetas):
        pick = (lower < norm1) & (norm1 <= theta)
        if pick.any():
            out[pick] = _taylor(x[pick], degree)
        lower = theta
    # the rest (a nan or inf norm too: nan, as PyTorch's) by degree 18, scaled and squared
    pick = ~(norm1 <= thetas[4])
    if pick.any():
        norm = norm1[pick]
        with np.errstate(divide="ignore", invalid="ignore"):
            s = xp.maximum(0, xp.ceil(xp.log2(norm / thetas[5])))
        s = xp.where(xp.isfinite(s), s, 0).astype(np.int64)
        with np.errstate(over="ignore", invalid="ignore"):  # (inf, nan: the value, silently
            # as PyTorch's)
            r = _taylor(x[pick] / (2.0 ** s)[:, None, None], 18)
            for j in range(int(s.max())):  # square back, each matrix its s times
                r = xp.where((j < s)[:, None, None], r @ r, r)
        out[pick] = r
    return out.reshape(a.shape).astype(a.dtype, copy=False)


def _matrix_exp_vjp(node, g, saved):
    # gA is the upper-right block of exp([[A^T, g], [0, A^T]]) (Mathias; Najfeld and Havel)
    (a,) = saved
    n = a.shape[-1]
    at = _mT(a)
    data = getattr(a, "_data", a)
    xp = namespace(data)
    zeros = xp.zeros(a.shape, dtype=data.dtype)
    # The block is linear in g: g scaled to about 1 (by a power of 2, exact) and the block
    # scaled back.  Else a large g dominates the block's norm, scaling and squaring squares
    # ~log2|g| times more, and the result loses digits, then underflows to 0 (a gradient of
    # 1e20 gave 0; PyTorch's is 9e20: final-run seed 20078349).
    gd = getattr(g, "_data", g)
    with np.errstate(divide="ignore", invalid="ignore"):
        peak = xp.abs(gd).max(axis=(-2, -1), keepdims=True) if gd.size else xp.ones(1)
        scale = xp.where(xp.isfinite(peak) & (peak > 0), xp.exp2(xp.floor(xp.log2(peak))), 1.0)
    scale = scale.astype(data.dtype)
    if bool((scale == 1).all()):
        big = cat([cat([at, g], -1), cat([zeros, at], -1)], -2)
        return (_upper_right(_matrix_exp(big), n),)
    if hasattr(g, "_data"):  # (a create_graph backward: tensors; else arrays)
        scale = make_tensor(scale)
    big = cat([cat([at, g / scale], -1), cat([zeros, at], -1)], -2)
    return (_upper_right(_matrix_exp(big), n) * scale,)


def _upper_right(m, n):
    """The upper right n x n block of ``m`` (..., 2n, 2n).  Under create_graph two narrows,
    as PyTorch's: two SliceBackward0 also where n is 0, where an index of the whole empty
    block is an AliasBackward0 (a (2, 0, 0) gradient's grad_fn)."""
    if isinstance(m, Tensor):
        return m.narrow(-2, 0, n).narrow(-1, n, n)
    return m[..., :n, n:]


_matrix_exp = defop("linalg.matrix_exp", _expm, _matrix_exp_vjp, "LinalgMatrixExpBackward0", 1,
                    INPUTS)


def matrix_exp(A):  # noqa: N803 - PyTorch's name
    """The matrix exponential of each square matrix of ``A`` (..., n, n).

    Examples
    --------
    >>> import retrograd as T
    >>> T.linalg.matrix_exp(T.tensor([[0.0, 1.0], [0.0, 0.0]]))
    tensor([[1., 1.],
            [0., 1.]])
    """
    check_square("linalg.matrix_exp", A)
    return _matrix_exp(A)


# ----------------------------------------------------------------- vander


def vander(x, *, N=None):  # noqa: N803 - PyTorch's name
    """The Vandermonde matrix of ``x`` (..., n): columns x^0, x^1, ..., x^(N-1) (N defaults
    to n), as PyTorch composes it (a column of ones and a cumulative product).

    Examples
    --------
    >>> import retrograd as T
    >>> T.linalg.vander(T.tensor([1, 2, 3]))
    tensor([[1, 1, 1],
            [1, 2, 4],
            [1, 3, 9]])
    """
    tensor_arg(x, "x")
    if x._data.dtype.kind == "b" or x._data.dtype.name == "float16":
        # (PyTorch's cumprod has a Half kernel, but linalg.vander refuses Half, before its
        # checks of N: torch.vander takes it)
        raise RuntimeError("linalg.vander supports floating point, complex, and integer "
                           f"tensors, but got {scalar_type_name(x._data.dtype)}; convert it "
                           "first (x.float()), or use torch.vander")
    if x.ndim == 0:
        if N is None:
            raise RuntimeError("N must be greater than 1. (linalg.vander takes a vector or a "
                               "batch of them, got a 0-d tensor: pass N, or x.reshape(1))")
        x = x.reshape(1)  # (PyTorch: a 0-d x with N given is one point)
    n = x.shape[-1] if N is None else int(N)
    if n <= 1:
        raise RuntimeError(f"N must be greater than 1. (linalg.vander got N={n})")
    if x._data.dtype.kind in "iu":
        x = x.to(dtype=np.int64)  # (PyTorch's cumprod: integers give int64)
    shape = tuple(x.shape) + (n - 1,)
    powers = cumprod(expand(unsqueeze(x, -1), *shape), -1)
    xp = namespace(x._data)
    ones = make_tensor(xp.ones(tuple(x.shape) + (1,), dtype=powers._data.dtype))
    return cat([ones, powers], -1)


# ----------------------------------------------------------------- tensorinv, tensorsolve


def tensorinv(A, ind=2):  # noqa: N803 - PyTorch's name
    """The inverse of ``A`` for ``tensordot(A, ., ind)``: A reshaped to a square matrix
    (the first ``ind`` dims its rows), inverted, and shaped ``A.shape[ind:] +
    A.shape[:ind]``."""
    tensor_arg(A, "A")
    if not isinstance(ind, int) or isinstance(ind, bool) or ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    p_rows, p_cols = math.prod(rows), math.prod(cols)
    if p_rows != p_cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {p_cols} != {p_rows}")
    return reshape(inv(reshape(A, p_rows, p_cols)), *(cols + rows))


def tensorsolve(A, B, dims=None):  # noqa: N803 - PyTorch's names
    """X with ``tensordot(A, X, X.ndim) == B``: A's dims ``dims`` (if given) moved last,
    A reshaped to a square matrix, and one linear solve; X has shape ``A.shape[B.ndim:]``."""
    tensor_arg(A, "A")
    tensor_arg(B, "B", 1)
    if dims is not None:
        dims = [dims] if isinstance(dims, int) else list(dims)
        A = movedim(A, dims, list(range(A.ndim - len(dims), A.ndim)))  # noqa: N806
    out_shape = tuple(A.shape[B.ndim:])
    p_out, p_b = math.prod(out_shape), B.numel()
    if p_out != p_b:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim"
                           f":]) == prod(self.shape[:other.ndim]), but got {p_out} != {p_b}")
    return reshape(solve(reshape(A, p_out, p_out), reshape(B, p_b)), *out_shape)


# ----------------------------------------------------------------- Householder reflectors


def _vectors(a, k):
    """V (..., m, k): the reflectors' vectors, ones on the diagonal and ``a``'s strictly
    lower part below it (as LAPACK stores them); ``a`` an array or a tensor."""
    m = a.shape[-2]
    data = getattr(a, "_data", a)
    return tril(a[..., :, :k], -1) + namespace(data).eye(m, k, dtype=data.dtype)


@quiet_fp
def _reflect(x, v, t):
    """H x for H = I - t v v^T (v (..., m), t (...,), x (..., m, p)); arrays or tensors."""
    vc = unsqueeze(v, -1)
    return x - unsqueeze(unsqueeze(t, -1), -1) * matmul(vc, matmul(_mT(vc), x))


def _reflect_all(x, v, tau, order):
    """H_{order[0]} H_{order[1]} ... H_{order[-1]} x (the last applied first)."""
    for i in reversed(order):
        x = _reflect(x, v[..., :, i], tau[..., i])
    return x


def _reflect_all_vjp(x, v, tau, order, gy):
    """(gV, gtau, gX) of Y = H_{o[0]} ... H_{o[-1]} X, H_i = I - tau_i v_i v_i^T: with R_j
    what H_{o[j]} is applied to and G_j = (H_{o[0]} ... H_{o[j-1]})^T gY, the gradient of
    H_{o[j]} is G_j R_j^T, so gtau_i = -(v^T G_j)(R_j^T v) and
    gv_i = -tau_i (G_j R_j^T v + R_j G_j^T v).  Written with retrograd ops."""
    rs = [None] * len(order)
    r = x
    for j in range(len(order) - 1, -1, -1):
        rs[j] = r
        r = _reflect(r, v[..., :, order[j]], tau[..., order[j]])
    g = gy
    gv, gtau = {}, {}
    for j, i in enumerate(order):
        vi, ti = unsqueeze(v[..., :, i], -1), tau[..., i]
        r_v = matmul(_mT(rs[j]), vi)  # (..., p, 1)
        g_v = matmul(_mT(g), vi)
        gtau[i] = -(r_v * g_v).sum((-2, -1))
        gv[i] = (-unsqueeze(unsqueeze(ti, -1), -1) * (matmul(g, r_v) + matmul(rs[j], g_v)))[..., 0]
        g = _reflect(g, v[..., :, i], ti)  # (H symmetric: G_{j+1} = H_{o[j]} G_j)
    k = len(order)
    return (stack([gv[i] for i in range(k)], -1) if k else None,
            stack([gtau[i] for i in range(k)], -1) if k else None, g)


def _grad_a(gv, a, k):
    """A's gradient from the reflectors' vectors' (only A's strictly lower part of its first
    k columns is read)."""
    data = getattr(a, "_data", a)
    xp = namespace(data)
    if gv is None:
        return xp.zeros(a.shape, dtype=data.dtype)
    ga = tril(gv, -1)
    if a.shape[-1] > k:
        ga = cat([ga, xp.zeros(a.shape[:-1] + (a.shape[-1] - k,), dtype=data.dtype)], -1)
    return ga


def _householder_fwd(a, tau):
    xp = namespace(a)
    m, n = a.shape[-2:]
    k = tau.shape[-1]
    e = xp.broadcast_to(xp.eye(m, n, dtype=a.dtype), a.shape)
    return _reflect_all(e, _vectors(a, k), tau, list(range(k))).astype(a.dtype, copy=False)


def _householder_vjp(node, g, saved):
    a, tau = saved
    m, n = a.shape[-2:]
    k = tau.shape[-1]
    data = getattr(a, "_data", a)
    e = namespace(data).broadcast_to(namespace(data).eye(m, n, dtype=data.dtype), a.shape)
    gv, gtau, _ = _reflect_all_vjp(e, _vectors(a, k), tau, list(range(k)), g)
    na, nt = node.next
    if gtau is None:
        gtau = namespace(data).zeros(tau.shape, dtype=data.dtype)
    return (_grad_a(gv, a, k) if na else None, gtau if nt else None)


_householder = defop("linalg.householder_product", _householder_fwd, _householder_vjp,
                     "LinalgHouseholderProductBackward0", 2, INPUTS, "promote")


def _ormqr_plan(k, left, transpose):
    # Q C = H_1 (... (H_k C)); Q^T C = H_k (... (H_1 C)); C Q = (Q^T C^T)^T; C Q^T = (Q C^T)^T
    forward = left != transpose
    return list(range(k)) if forward else list(range(k - 1, -1, -1))


def _ormqr_fwd(a, tau, c, left, transpose):
    k = tau.shape[-1]
    x = c if left else c.swapaxes(-1, -2)
    y = _reflect_all(x, _vectors(a, k), tau, _ormqr_plan(k, left, transpose))
    return y if left else y.swapaxes(-1, -2)


def _ormqr_vjp(node, g, saved):
    a, tau, c = saved
    left, transpose = node.params
    k = tau.shape[-1]
    x, gy = (c, g) if left else (_mT(c), _mT(g))
    gv, gtau, gx = _reflect_all_vjp(x, _vectors(a, k), tau, _ormqr_plan(k, left, transpose), gy)
    na, nt, nc = node.next
    data = getattr(a, "_data", a)
    if gtau is None:
        gtau = namespace(data).zeros(tau.shape, dtype=data.dtype)
    return (_grad_a(gv, a, k) if na else None, gtau if nt else None,
            (gx if left else _mT(gx)) if nc else None)


_ormqr = defop("ormqr", _ormqr_fwd, _ormqr_vjp, "OrmqrBackward0", 3, INPUTS, "promote")


def _check_householder(name, A, tau, dtype=True):  # noqa: N803
    tensor_arg(A, "input")
    tensor_arg(tau, "tau", 1)
    if A.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if tau.ndim != A.ndim - 1:
        raise RuntimeError(f"{name}: input.dim() must be greater than or equal to tau.dim() "
                           f"+ 1 and tau must have one dim less than input (got {A.ndim} and "
                           f"{tau.ndim})")
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])} and "
                           f"{list(A.shape[:-2])}")
    _same_dtype(name, (A, tau), name + ": tau dtype {1} does not match input dtype {0}")
    if dtype:
        _householder_kernel(name, A)


def _householder_kernel(name, A):  # noqa: N803
    """The kernel's NotImplementedError for an integer or bool ``A`` (after every shape
    check: ormqr checks other's shapes first)."""
    if A._data.dtype.kind != "f" or A._data.itemsize == 2:  # (float16 too)
        kernel = "ormqr_cpu" if name == "torch.ormqr" else "orgqr_cpu"
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{scalar_type_name(A._data.dtype)}' ({name} takes float "
                                  "matrices: convert first, e.g. A.double())")


def householder_product(A, tau):  # noqa: N803 - PyTorch's names
    """The first n columns of H_1 H_2 ... H_k, H_i = I - tau_i v_i v_i^T, v_i the i-th
    reflector stored below the diagonal of ``A`` (..., m, n) as geqrf gives it."""
    name = "torch.linalg.householder_product"
    _check_householder(name, A, tau)
    m, n = A.shape[-2:]
    if m < n:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           f"input.shape[-1] (got {m} and {n})")
    if n < tau.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           f"tau.shape[-1] (got {n} and {tau.shape[-1]})")
    return _householder(A, tau)


def ormqr(input, input2, input3, left=True, transpose=False):  # noqa: A002 - PyTorch's names
    """``Q C``, ``Q^T C``, ``C Q`` or ``C Q^T`` (``left``, ``transpose``) for C = ``input3``
    and Q = H_1 ... H_k the m x m product of the reflectors of ``input`` and ``input2``
    (geqrf's ``a`` and ``tau``), without forming Q."""
    name = "torch.ormqr"
    _check_householder(name, input, input2, dtype=False)
    tensor_arg(input3, "other", 2)
    _same_dtype(name, (input, input3), name + ": Expected input and other to have the same "
                "dtype, but other has dtype {1} instead of {0}")
    m = input.shape[-2]
    k = input2.shape[-1]
    if input3.ndim < 2:
        raise RuntimeError(f"{name}: other must have at least 2 dimensions.")
    side = input3.shape[-2] if left else input3.shape[-1]
    if side != m:
        raise RuntimeError(f"{name}: other.shape[{-2 if left else -1}] must be equal to "
                           f"input.shape[-2] (got {side} and {m})")
    if k != min(side, input.shape[-1]):  # (PyTorch 2.13 wants every reflector used)
        raise RuntimeError(f"{name}: tau.shape[-1] must be equal to min(other.shape["
                           f"{-2 if left else -1}], input.shape[-1]) (got {k}, "
                           f"{side} and {input.shape[-1]})")
    if tuple(input3.shape[:-2]) != tuple(input.shape[:-2]):
        raise RuntimeError(f"{name}: Expected batch dimensions of other to be equal to "
                           f"input.shape[:-2], but got {list(input3.shape[:-2])}")
    _householder_kernel(name, input)
    return _ormqr(input, input2, input3, bool(left), bool(transpose))


def _geqrf_vjp(node, grads, saved):
    raise RuntimeError("the derivative for 'geqrf' is not implemented.")


_GeqrfNode = multi_output_class("GeqrfBackward0", _geqrf_vjp)


def geqrf(input):  # noqa: A002 - PyTorch's name
    """``(a, tau)``: the QR factorisation in LAPACK's compact form (R on and above the
    diagonal of ``a``, the reflectors below it and in ``tau``); not differentiable, as
    PyTorch's."""
    tensor_arg(input, "input")
    if input.ndim < 2:
        raise RuntimeError(f"torch.geqrf: input must have at least 2 dimensions. (got shape "
                           f"{list(input.shape)})")
    if input._data.dtype.kind != "f" or input._data.itemsize == 2:  # (float16 too)
        raise NotImplementedError(f'"geqrf_cpu" not implemented for '
                           f"'{scalar_type_name(input._data.dtype)}'")
    xp = namespace(input._data)
    data = input._data
    m, n = data.shape[-2:]
    k = min(m, n)
    if data.size == 0:
        a = data.copy()
        tau = xp.zeros(data.shape[:-2] + (k,), dtype=data.dtype)
    else:
        h, tau = xp.linalg.qr(data, mode="raw")
        a = xp.ascontiguousarray(h.swapaxes(-1, -2)).astype(data.dtype, copy=False)
        tau = tau.astype(data.dtype, copy=False)
    outs = [make_tensor(a), make_tensor(tau)]
    if input._requires_grad and state.enabled:
        record_multi(_GeqrfNode, input, outs, ())
    if fw.active:  # forward AD: raises, as its backward and PyTorch's forward AD do
        fw.propagate_outputs(_GeqrfNode, (input,), outs, ())
    return geqrf_type(*outs)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(matrix_exp, "matrix_exp", function=True, method=True, linalg=("matrix_exp",),
         signature="input")
register(vander, function=False, method=False, linalg=("vander",))
register(tensorinv, function=False, method=False, linalg=("tensorinv",), signature="input, ind=2")
register(tensorsolve, function=False, method=False, linalg=("tensorsolve",),
         signature="input, other, dims=None")
register(householder_product, function=False, method=False, linalg=("householder_product",),
         signature="input, tau")
register(ormqr, signature="input, input2, input3, left=True, transpose=False")
register(geqrf, differentiable=False)
