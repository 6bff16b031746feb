"""Randomized low-rank factorisations: ``svd_lowrank`` and ``pca_lowrank`` (Halko, Martinsson
and Tropp 2009, algorithms 4.4 and 5.1), as ``torch.svd_lowrank`` / ``torch.pca_lowrank``.

Composed, step by step as PyTorch composes them, of differentiable ops (matmul,
``linalg.qr``, ``linalg.svd``), so gradients of every order flow through them exactly as
through PyTorch's.  The random test matrix comes from retrograd's generator
(``manual_seed`` makes a call repeatable); it is not PyTorch's stream, so the two libraries
agree exactly only where the answer does not depend on it: a matrix of rank at most ``q``
(then ``U``, ``S``, ``V`` are its exact thin SVD, up to the signs of singular vectors).
"""

from __future__ import annotations

from ..backend import namespace
from ..random import numpy_generator
from ..tensor import Tensor, make_tensor
from .linalg import matmul
from .linalg_decomp import qr, svd
from .reduce import mean
from .shape import transpose


def _mH(x):  # noqa: N802 - PyTorch's .mH (real tensors: the transpose of the last two dims)
    return transpose(x, -2, -1)


def _float_dtype(A):  # noqa: N803
    return A._data.dtype if A._data.dtype.kind == "f" else "float32"


def get_approximate_basis(A, q, niter=2, M=None):  # noqa: N803 - PyTorch's names
    """An orthonormal ``(m, q)`` basis ``Q`` with ``A ~ Q Q^H A`` (``A - M`` when given),
    from ``niter`` subspace iterations on a random start."""
    niter = 2 if niter is None else niter
    xp = namespace(A._data)
    r = numpy_generator().standard_normal((A.shape[-1], q)).astype(_float_dtype(A))
    R = make_tensor(xp.asarray(r))  # noqa: N806
    X = matmul(A, R)  # noqa: N806
    if M is not None:
        X = X - matmul(M, R)  # noqa: N806
    Q = qr(X).Q  # noqa: N806
    for _ in range(niter):
        X = matmul(_mH(A), Q)  # noqa: N806
        if M is not None:
            X = X - matmul(_mH(M), Q)  # noqa: N806
        Q = qr(X).Q  # noqa: N806
        X = matmul(A, Q)  # noqa: N806
        if M is not None:
            X = X - matmul(M, Q)  # noqa: N806
        Q = qr(X).Q  # noqa: N806
    return Q


def _check(A, name):  # noqa: N803
    if not isinstance(A, Tensor):
        raise TypeError(f"{name}(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A.ndim < 2:
        raise RuntimeError(f"{name}: A must be a matrix or a batch of matrices, got shape "
                           f"{list(A.shape)}")


def _svd_lowrank(A, q=6, niter=2, M=None):  # noqa: N803
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)  # noqa: N806
    if m < n:
        A = _mH(A)  # noqa: N806
        if M is not None:
            M = _mH(M)  # noqa: N806
    Q = get_approximate_basis(A, q, niter=niter, M=M)  # noqa: N806
    B = matmul(_mH(Q), A)  # noqa: N806
    if M is not None:
        B = B - matmul(_mH(Q), M)  # noqa: N806
    U, S, Vh = svd(B, full_matrices=False)  # noqa: N806
    V = _mH(Vh)  # noqa: N806
    U = matmul(Q, U)  # noqa: N806
    if m < n:
        U, V = V, U  # noqa: N806
    return U, S, V


def svd_lowrank(A, q=6, niter=2, M=None):  # noqa: N803 - PyTorch's names
    """An approximate thin SVD ``A ~ U diag(S) V^T`` of rank ``q`` (of ``A - M`` when ``M``
    is given): returns ``(U, S, V)`` of shapes ``(m, q)``, ``(q,)``, ``(n, q)`` (batched
    over leading dims).  ``niter`` subspace iterations sharpen it.

    Examples
    --------
    >>> import retrograd as T
    >>> A = T.tensor([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])  # rank 1
    >>> U, S, V = T.svd_lowrank(A, q=1)
    >>> S.allclose(T.linalg.svdvals(A)[:1])
    True
    """
    _check(A, "svd_lowrank")
    return _svd_lowrank(A, q=q, niter=niter, M=M)


def pca_lowrank(A, q=None, center=True, niter=2):  # noqa: N803 - PyTorch's names
    """Principal components of the rows of ``A`` (centred on their mean when ``center``):
    ``svd_lowrank`` of ``A - mean``, ``q`` defaulting to ``min(6, m, n)``.

    Examples
    --------
    >>> import retrograd as T
    >>> A = T.tensor([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])
    >>> U, S, V = T.pca_lowrank(A, q=1)
    >>> round(float(S[0]) ** 2 / 2, 6)  # the variance along the principal direction
    2.0
    """
    _check(A, "pca_lowrank")
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not (niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter=niter, M=None)
    C = mean(A, -2, True)  # noqa: N806
    return _svd_lowrank(A - C, q, niter=niter, M=None)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(svd_lowrank, method=False)
register(pca_lowrank, method=False)
