"""Least squares, rank and condition numbers (issue 11): linalg.lstsq, linalg.matrix_rank,
linalg.cond.

``lstsq`` computes the minimum-norm solution from the SVD (what LAPACK's gelsd does; gelsy
and gelss give the same solution), and fills the four result fields as PyTorch does on the
CPU for each ``driver``.  Its derivative is PyTorch's: the solution is ``pinv(A) B``, so its
gradients go through ``linalg.pinv``'s derivative (written with retrograd ops: every order),
and the residuals' gradients are the explicit ones (the solution is stationary for them).
``matrix_rank`` and ``cond`` are compositions of the SVD, as in PyTorch.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from ..backend import namespace
from ..tensor import make_tensor
from ._errors import scalar_type_name, tensor_arg
from .layout import narrow
from .linalg import _mT, matmul
from .linalg_decomp import _is_zero, eigvalsh, multi_node, record_outputs, svd_arrays, svdvals
from .linalg_scalars import _out_copied, matrix_norm
from .linalg_solve import _pinv, _pinv_vjp, check_square, inv_ex
from .pointwise import reciprocal
from .reduce import sum as _sum
from .registry import entry
from .shape import squeeze, unsqueeze
from .unary import nan_to_num
from .quiet_fp import quiet_fp

lstsq_type = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])

DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


# ----------------------------------------------------------------- lstsq


@quiet_fp
def _lstsq_arrays(a, b, rcond, driver):
    """``(solution, residuals, rank, singular_values)`` arrays for matrices ``a`` (..., m, n)
    and ``b`` (..., m, k), batches broadcast."""
    xp = namespace(a)
    m, n = a.shape[-2:]
    k = b.shape[-1]
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    dtype = a.dtype
    if a.size == 0 or b.size == 0:
        x = xp.zeros(batch + (n, k), dtype=dtype)
        s = xp.zeros(batch + (min(m, n),), dtype=dtype)
        rank = xp.zeros(batch, dtype=np.int64)
    else:
        u, s, vh = svd_arrays("linalg.lstsq", a, full_matrices=False)
        top = s[..., :1]
        cutoff = 0.0 if driver == "gels" else rcond * top  # gels: no rank decision
        keep = s > cutoff
        with np.errstate(divide="ignore"):
            s_inv = xp.where(keep, 1 / xp.where(keep, s, 1), 0).astype(dtype)
        x = (_mT(vh) * s_inv[..., None, :]) @ (_mT(u) @ b)
        x = xp.broadcast_to(x, batch + (n, k)).astype(dtype, copy=False)
        rank = xp.broadcast_to(keep.sum(-1).astype(np.int64), batch)
    full_rank = bool((rank == n).all())
    if m > n and driver != "gelsy" and (driver == "gels" or full_rank):
        res = (((a @ x) - b) ** 2).sum(-2).astype(dtype, copy=False)
        if driver == "gels" and a.size == 0:  # (LAPACK's gels returns at once: PyTorch's 0s)
            res = xp.zeros_like(res)
    else:
        res = xp.zeros((0,), dtype=dtype)
    rank_out = rank.copy() if driver != "gels" else xp.zeros((0,), dtype=np.int64)
    if driver in ("gelsd", "gelss"):
        sv = xp.broadcast_to(s, batch + s.shape[-1:]).astype(dtype, copy=True)
    else:
        sv = xp.zeros((0,), dtype=dtype)
    return x, res, rank_out, sv


def _lstsq_vjp(node, grads, saved):
    # X = pinv(A) B: gB = pinv(A)^T gX, gA = pinv's derivative applied to gX B^T (PyTorch's
    # linalg_lstsq_backward); the residuals r = |A X - B|^2 (per column) add 2 (AX - B) X^T
    # and -2 (AX - B), their gradient through X being zero at the optimum
    a, b, x = saved
    gx, gr = grads
    vec = node.params[0]
    if vec:
        b, x, gx = unsqueeze(b, -1), unsqueeze(x, -1), unsqueeze(gx, -1)
    na, nb = node.next
    data = getattr(a, "_data", a)
    xp = namespace(data)
    ga = gb = None
    if not _is_zero(gx):
        zero = xp.asarray(0.0, dtype=data.dtype)
        default = xp.asarray(float(np.finfo(data.dtype).eps) * max(data.shape[-2:]),
                             dtype=data.dtype)
        p = _pinv(a, zero, default, False)
        gb = matmul(_mT(p), gx)
        if na:
            (ga,) = _pinv_vjp(None, matmul(gx, _mT(b)), (a, p))
    if 0 not in tuple(gr.shape) and not _is_zero(gr):  # (empty: no residuals computed)
        res = matmul(a, x) - b
        weighted = 2 * res * unsqueeze(gr, -2)
        ga_r, gb_r = matmul(weighted, _mT(x)), -weighted
        ga = ga_r if ga is None else ga + ga_r
        gb = gb_r if gb is None else gb + gb_r
    if vec and gb is not None:
        gb = squeeze(gb, -1)
    return (ga if na else None, gb if nb else None)


_LstsqNode = multi_node("LinalgLstsqBackward0", _lstsq_vjp)


def lstsq(A, B, rcond=None, *, driver=None):  # noqa: N803 - PyTorch's names
    """``(solution, residuals, rank, singular_values)`` of the least-squares problem
    ``min |A X - B|`` for each matrix of ``A`` (..., m, n) and ``B`` (..., m, k), or a
    vector ``B`` (A's dims less one): the minimum-norm solution, singular values at or
    below ``rcond`` times the largest counting as zero (default: eps * max(m, n)).

    The fields are filled as PyTorch fills them on the CPU: ``rank`` except for driver
    'gels'; ``singular_values`` for 'gelsd' and 'gelss'; ``residuals`` (squared, per
    column) when m > n, the driver is not 'gelsy' (the default) and every matrix has full
    rank (always for 'gels'); the others are empty.

    Examples
    --------
    >>> import retrograd as T
    >>> A = T.tensor([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
    >>> T.linalg.lstsq(A, T.tensor([1.0, 2.0, 4.0])).solution
    tensor([0.8333, 1.5000])
    """
    name = "torch.linalg.lstsq"
    tensor_arg(A, "A")
    tensor_arg(B, "B")
    if A.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if A._data.dtype.kind != "f" or B._data.dtype.kind != "f" or A._data.itemsize == 2:
        raise RuntimeError(f"{name}: This function doesn't handle types other than float and "
                           f"double (got {scalar_type_name(A._data.dtype)} and "
                           f"{scalar_type_name(B._data.dtype)})")
    if A._data.dtype != B._data.dtype:
        raise RuntimeError(f"{name}: Expected input and other to have the same dtype, but got "
                           f"input's dtype {scalar_type_name(A._data.dtype)} and other's dtype "
                           f"{scalar_type_name(B._data.dtype)}")
    diff = A.ndim - B.ndim
    if diff not in (0, 1):
        raise RuntimeError(f"{name}: input.dim() must be greater or equal to other.dim() and "
                           f"(input.dim() - other.dim()) <= 1")
    vec = diff == 1
    b = B._data[..., None] if vec else B._data
    if A.shape[-2] != b.shape[-2]:
        other = "other.size(-1)" if vec else "other.size(-2)"
        raise RuntimeError(f"{name}: input.size(-2) should match {other} (A is "
                           f"{list(A.shape)}, B is {list(B.shape)})")
    try:
        np.broadcast_shapes(tuple(A.shape[:-2]), b.shape[:-2])
    except ValueError:
        raise RuntimeError(f"{name}: the batch dimensions of A {list(A.shape[:-2])} and B "
                           f"{list(b.shape[:-2])} do not broadcast") from None
    if driver is None:
        driver = "gelsy"
    if driver not in DRIVERS:
        raise RuntimeError(f"{name}: parameter `driver` should be one of (gels, gelsy, gelsd, "
                           "gelss)")
    if rcond is None:
        rcond = float(np.finfo(A._data.dtype).eps) * max(A.shape[-2:])
    x, res, rank, sv = _lstsq_arrays(A._data, b, float(rcond), driver)
    if vec:
        x = x[..., 0]
    outs = record_outputs(_LstsqNode, (A, B), (x, res), (vec,), keep=(0,), save_inputs=True)
    return lstsq_type(outs[0], outs[1], make_tensor(rank), make_tensor(sv))


# ----------------------------------------------------------------- matrix_rank


def _tolerance(value, like):
    xp = namespace(like)
    return xp.asarray(getattr(value, "_data", value), dtype=like.dtype)


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None):  # noqa: N803
    """The numerical rank (int64) of each matrix of ``A``: the number of singular values
    (absolute eigenvalues with ``hermitian``) above ``max(atol, rtol * largest)``.  ``rtol``
    defaults to eps * max(m, n), or 0 where a positive ``atol`` is given; ``tol`` (the older
    spelling) is ``atol`` with ``rtol=0``.  Tolerances may be tensors, one per matrix."""
    name = "torch.linalg.matrix_rank"
    tensor_arg(A, "A")
    if tol is not None and (atol is not None or rtol is not None):
        raise TypeError("linalg_matrix_rank() received an invalid combination of arguments: "
                        "pass tol, or atol and rtol, not both")
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor input must have at least 2 dimensions.")
    if A._data.dtype.kind != "f" or A._data.itemsize == 2:  # (float16 too)
        raise RuntimeError(f"{name}: This function doesn't handle types other than float and "
                           f"double (got {scalar_type_name(A._data.dtype)})")
    if tol is not None:
        atol, rtol = tol, 0.0
    s = (eigvalsh(A.detach()) if hermitian else svdvals(A.detach()))._data  # (no graph)
    xp = namespace(s)
    if hermitian:
        s = xp.abs(s)
    a_tol = _tolerance(0.0 if atol is None else atol, s)
    if rtol is None:
        default = float(np.finfo(s.dtype).eps) * max(A.shape[-2:])
        r_tol = xp.where(a_tol > 0, 0.0, default) if atol is not None else \
            _tolerance(default, s)
    else:
        r_tol = _tolerance(rtol, s)
    top = s.max(-1) if s.shape[-1] else xp.zeros(s.shape[:-1], dtype=s.dtype)
    cutoff = xp.maximum(a_tol, r_tol * top)
    return make_tensor(xp.asarray((s > cutoff[..., None]).sum(-1), dtype=np.int64))


# ----------------------------------------------------------------- cond


def cond(A, p=None):  # noqa: N803 - PyTorch's names
    """The condition number of each matrix of ``A`` in the norm ``p``: ``None`` / 2 (the
    ratio of the largest and smallest singular values, any shape), -2 (its inverse), or
    for square matrices 'fro', 'nuc', 1, -1, inf, -inf (``norm(A) * norm(inv(A))``; inf for
    a singular matrix).  As PyTorch, and differentiable the same way.

    Examples
    --------
    >>> import retrograd as T
    >>> T.linalg.cond(T.tensor([[2.0, 0.0], [0.0, 0.5]]))
    tensor(4.)
    """
    tensor_arg(A, "A")
    if A.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if p is None or (not isinstance(p, str) and abs(p) == 2):
        if A.numel() == 0:  # (no singular values: 0, as PyTorch and NumPy)
            return make_tensor(namespace(A._data).zeros(tuple(A.shape[:-2]),
                                                        dtype=A._data.dtype))
        s = svdvals(A)
        k = s.shape[-1]
        s_max, s_min = narrow(s, -1, 0, 1), narrow(s, -1, k - 1, 1)
        ratio = s_min / s_max if p == -2 else s_max / s_min
        return squeeze(ratio, -1)
    valid = p in ("fro", "nuc") if isinstance(p, str) else p in (1, -1, math.inf, -math.inf)
    check_square(f"linalg.cond(ord={p})", A)
    if not valid:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if A.numel() == 0:
        return make_tensor(namespace(A._data).zeros(tuple(A.shape[:-2]), dtype=A._data.dtype))
    if p == "nuc":
        s = svdvals(A)
        return _sum(s, -1) * _sum(reciprocal(s), -1)
    inverse, info = inv_ex(A)
    # masked_fill (registered in ops/__init__, above this module: taken from the registry)
    masked_fill = entry("masked_fill").fn
    inverse = masked_fill(inverse, info._data[..., None, None] > 0, math.inf)
    out = matrix_norm(A, p) * matrix_norm(inverse, p)
    return nan_to_num(out, math.inf, math.inf, -math.inf)  # 0 * inf: inf, as NumPy


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(lstsq, function=False, method=False, linalg=("lstsq",))
register(matrix_rank, function=False, method=False, linalg=("matrix_rank",),
         differentiable=False, signature="A, tol=None, hermitian=False, *, atol=None, rtol=None")
# (composite in PyTorch: out= is copied in and recorded, even when a gradient is needed)
register(_out_copied(cond), "cond", function=False, method=False, linalg=("cond",))
