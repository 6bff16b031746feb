"""``lobpcg``: the ``k`` largest (or smallest) eigenpairs of a symmetric generalized problem
``A x = lambda B x``, as ``torch.lobpcg`` (returns ``(E, X)``).

The forward is LOBPCG (Knyazev 2001): Rayleigh-Ritz on the block ``[X, iK R, P]`` (current
estimates, preconditioned residuals, previous update) with that block B-orthonormalised by
an eigen-decomposition of its Gram matrix, dropping directions that have become dependent
(the robustness of PyTorch's ``method="ortho"``, by other means), until the first ``k``
pairs meet PyTorch's backward-stable residual test ``|r| / (|x| (|A X|/|X| + |lambda|
|B X|/|X|)) < tol`` or ``niter`` steps pass.  It runs on raw arrays, one matrix at a time.

Gradients, as PyTorch's: only for ``B = None`` (PyTorch's backward refuses ``B``, and so does
this one, with its message).  The derivative of ``k`` exact eigenpairs of the symmetrised
``A`` is that of ``linalg.eigh`` restricted to them, so with a gradient required the pairs
are taken from retrograd's differentiable ``eigh`` of ``(A + A^T) / 2`` (exact, where
LOBPCG is exact to ``tol``), which gives first and higher derivatives.  grad_fn names are
therefore eigh's, not PyTorch's LOBPCGAutogradFunctionBackward.
"""

from __future__ import annotations

from ..autograd.grad_mode import state
from ..backend import namespace
from ..random import numpy_generator
from ..tensor import Tensor, make_tensor
from ._apply import NOTHING, defop
from .linalg_decomp import eigh
from .shape import transpose

_FEPS = {"float32": 1.2e-07, "float64": 2.23e-16}


def _b_orthonormal(xp, S, BS, drop):  # noqa: N803
    """Columns ``T`` with ``(S T)^T B (S T) = I`` spanning ``S``, dependent ones dropped."""
    G = S.T @ BS  # noqa: N806
    G = (G + G.T) / 2  # noqa: N806
    d, V = xp.linalg.eigh(G)  # noqa: N806
    keep = d > drop * max(float(d.max()), 1e-300)
    return V[:, keep] / xp.sqrt(d[keep])


def _run(A, B, X, iK, k, n, niter, tol, largest):  # noqa: N803
    """LOBPCG on arrays: the first ``k`` Ritz values and vectors (ascending, or descending
    with ``largest``)."""
    xp = namespace(A)
    matB = (lambda v: v) if B is None else (lambda v: B @ v)  # noqa: E731, N806
    drop = _FEPS[str(A.dtype)] * 10 if str(A.dtype) in _FEPS else 1e-12
    x_norm = float(xp.linalg.norm(X))
    a_norm = float(xp.linalg.norm(A @ X)) / x_norm
    b_norm = float(xp.linalg.norm(matB(X))) / x_norm
    P = R = E = None  # noqa: N806 - the update, the residuals, the Ritz values
    for step in range(max(niter, 0) + 1):
        blocks = [X] if E is None else [X, (R if iK is None else iK @ R)]
        if P is not None:
            blocks.append(P)
        S = xp.concatenate(blocks, axis=1)  # noqa: N806
        T = _b_orthonormal(xp, S, matB(S), drop)  # noqa: N806
        Q = S @ T  # noqa: N806
        H = Q.T @ (A @ Q)  # noqa: N806
        theta, C = xp.linalg.eigh((H + H.T) / 2)  # noqa: N806
        order = xp.argsort(-theta if largest else theta, kind="stable")[:n]
        E, Cn = theta[order], C[:, order]  # noqa: N806
        X_new = Q @ Cn  # noqa: N806
        if X.shape[1] == X_new.shape[1] and step > 0:
            # P: the part of the update outside the old X's span (Knyazev's implicit form)
            P = X_new - X @ (X.T @ matB(X_new))  # noqa: N806
        X = X_new  # noqa: N806
        R = A @ X - matB(X) * E  # noqa: N806
        rerr = xp.linalg.norm(R, axis=0) / (xp.linalg.norm(X, axis=0)
                                            * (a_norm + xp.abs(E) * b_norm))
        converged = 0
        for ok in (rerr < tol).tolist():
            if not ok:
                break
            converged += 1
        if converged >= k:
            break
    return E[:k], X[:, :k]


def _refuse_b(node, g, saved):
    raise ValueError("lobpcg.backward does not support backward with B != I yet.")


# With B and a gradient required: the outputs' node refuses backward, as PyTorch's
_refusing = defop("lobpcg", lambda a, b, out: out.copy(), _refuse_b,
                  "LOBPCGAutogradFunctionBackward", 2, NOTHING)


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None,  # noqa: N803
           largest=None, method=None, tracker=None, ortho_iparams=None, ortho_fparams=None,
           ortho_bparams=None):
    """The ``k`` largest (``largest=True``, the default) or smallest eigenvalues ``E`` and
    eigenvectors ``X`` of ``A x = lambda B x`` (``A`` symmetric, ``B`` symmetric positive
    definite, default the identity), by LOBPCG from the start ``X`` (default random, ``n``
    columns).  ``A`` (m, m) needs ``m >= 3 n``.  Batched over leading dimensions.

    Examples
    --------
    >>> import retrograd as T
    >>> A = T.diag(T.arange(1.0, 10.0, dtype=T.float64))
    >>> E, X = T.lobpcg(A, k=2)
    >>> [round(v, 6) for v in E.tolist()]
    [9.0, 8.0]
    """
    if not isinstance(A, Tensor):
        raise TypeError(f"lobpcg(): argument 'A' must be Tensor, not {type(A).__name__}")
    if method not in (None, "ortho", "basic"):
        raise ValueError(f"lobpcg: method must be 'ortho' or 'basic' (got {method!r})")
    if tracker is not None:
        raise NotImplementedError("lobpcg(tracker=...): retrograd's LOBPCG has no tracker hook; "
                                  "call it with tracker=None")
    if A.ndim < 2 or A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {tuple(A.shape)}")
    if B is not None and tuple(A.shape) != tuple(B.shape):
        raise AssertionError(f"A and B must have same shape, got {tuple(A.shape)} vs "
                             f"{tuple(B.shape)}")
    a = A._data
    xp = namespace(a)
    dtype = a.dtype if a.dtype.kind == "f" else xp.dtype("float32")
    if tol is None:
        tol = _FEPS.get(str(dtype), 2.23e-16) ** 0.5
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m})"
                         f" is smaller than 3 x the number of requested eigenpairs (={n})")
    largest = True if largest is None else bool(largest)
    niter = 1000 if niter is None else niter
    if ortho_fparams and "tol" in ortho_fparams:
        tol = ortho_fparams["tol"]
    wants_grad = state.enabled and (A.requires_grad or (B is not None and B.requires_grad))
    if wants_grad and B is None:
        sym = (A + transpose(A, -2, -1)) / 2
        values, vectors = eigh(sym)
        idx = list(range(m - 1, m - 1 - k, -1)) if largest else list(range(k))
        pick = make_tensor(xp.asarray(idx, dtype="int64"))
        return values.index_select(-1, pick), vectors.index_select(-1, pick)
    batch = tuple(A.shape[:-2])
    flat_a = a.astype(dtype, copy=False).reshape((-1, m, m))
    flat_b = None if B is None else B._data.astype(dtype, copy=False).reshape((-1, m, m))
    flat_x = None if X is None else X._data.astype(dtype, copy=False).reshape((-1, m, n))
    ik = None if iK is None else iK._data.astype(dtype, copy=False)
    es, xs = [], []
    for i in range(flat_a.shape[0]):
        x0 = (xp.asarray(numpy_generator().standard_normal((m, n)).astype(dtype))
              if flat_x is None else flat_x[i])
        if B is not None:  # symmetrised as PyTorch's autograd path does; harmless otherwise
            b = (flat_b[i] + flat_b[i].T) / 2
        else:
            b = None
        e, x = _run((flat_a[i] + flat_a[i].T) / 2, b, x0, ik, k, n, niter, tol, largest)
        es.append(e)
        xs.append(x)
    E = xp.stack(es).reshape(batch + (k,))  # noqa: N806
    Xr = xp.stack(xs).reshape(batch + (m, k))  # noqa: N806
    if wants_grad:  # B given: tensors whose backward refuses, as PyTorch's
        return _refusing(A, B, E), _refusing(A, B, Xr)
    return make_tensor(E), make_tensor(Xr)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(lobpcg, method=False)
