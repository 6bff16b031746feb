"""Scalars of a matrix (issue 11): linalg.det / det, logdet, linalg.slogdet / slogdet,
linalg.vector_norm, linalg.matrix_norm, linalg.norm.

det and slogdet have records of their own (the derivative of log|det A| is A^-T, written
with ``linalg.inv`` so it is differentiable again); the norms reuse the vector-norm records
of ``stats.py`` and compose the matrix norms from them, amax/amin and the singular values,
as PyTorch does (so the grad_fn names are PyTorch's).
"""

from __future__ import annotations

import math
from collections import namedtuple

from ..autograd.forward_state import fw
from ..autograd.grad_mode import state
from ..backend import namespace
from ..tensor import Tensor, make_tensor
from ._apply import BOTH, multi_output_class, record_multi_inputs
from ._errors import tensor_arg
from .dtype_rules import norm_input
from .linalg import _mT
from .linalg_lu import _lu_solve, getrf, permutation
from .linalg_solve import LinAlgError, check_square, inv
from .pointwise import defop, where
from .reduce import _dims
from .reduce import sum as _sum
from .shape import permute, stack, unsqueeze
from .linalg_decomp import svdvals
from .stats import _vector_norm, amax, amin, quiet
from .saved_checks import check_also
from .cast_inside import take_source
from .quiet_fp import quiet_fp

slogdet_type = namedtuple("linalg_slogdet", ["sign", "logabsdet"])


# ----------------------------------------------------------------- det, slogdet, logdet


def _inv_t(a):
    return _mT(inv(a))


def _scaled_inv_t(a, scale):
    """``scale * A^-T`` (first order, arrays).  A singular A: PyTorch solves A^T X = scale I
    with A's LU factors, whose zero pivot gives inf and nan (no error); the same solve here,
    the same values."""
    try:
        return scale * _inv_t(a)
    except LinAlgError:
        data = getattr(a, "_data", a)
        lu, piv, _ = getrf(data)
        eye = namespace(data).eye(a.shape[-1], dtype=data.dtype)
        return _lu_solve(lu, scale * eye, permutation(piv, a.shape[-1]), True, True)


def _det_vjp(node, g, saved):
    # d det A = det A * tr(A^-1 dA): gA = g det(A) A^-T.  A singular matrix (det exactly 0)
    # gets a zero gradient, as PyTorch's: the identity stands in for it in the inverse
    a, d = saved
    if isinstance(g, Tensor) and a.numel() == 0:
        # an empty batch: PyTorch's create_graph gradient is a fresh zeros tensor that does
        # not require grad, also where g does (seed 20759497: a second backward through it
        # raises "does not require grad" there)
        data = getattr(d, "_data", d)
        return (make_tensor(namespace(data).zeros(tuple(a.shape), dtype=data.dtype)),)
    if a.shape[-1] == 1:
        # a 1x1 determinant is its entry: the gradient is g itself, also at 0 (PyTorch's
        # expand of g, which under create_graph does not depend on A: seeds 12599717,
        # 12677605)
        if isinstance(g, Tensor):
            return (unsqueeze(unsqueeze(g, -1), -1).expand(tuple(a.shape)),)
        return (g[..., None, None],)
    scale = unsqueeze(unsqueeze(g * d, -1), -1)
    data = getattr(d, "_data", d)
    if isinstance(g, Tensor):
        return (_det_create_graph(a, g, d, data),)
    if bool((data == 0).any()):
        xp = namespace(data)
        singular = (data == 0)[..., None, None]
        a = where(singular, xp.eye(a.shape[-1], dtype=data.dtype), a)
    # (a zero pivot here: a matrix whose det is nan, an inf or nan entry: seed 20402816)
    return (_scaled_inv_t(a, scale),)


def _det_create_graph(a, g, d, data):
    """The derivative under create_graph as PyTorch's linalg_det_backward: a matrix whose
    |det| is below 100 eps is singular to it and gets its true derivative, the matrix of
    cofactors, through the SVD (zeros would leave a second derivative of 0); the others
    linalg.solve(A^T, diag_embed(g det)) (_solve_diag).  A batch of both is put together
    with two index_put_s (grad_fn IndexPutBackward0; LinalgSolveExBackward0 or the SVD
    path's matmul else)."""
    from .index_assign import setitem

    xp = namespace(data)
    small = xp.abs(data) < 100 * xp.finfo(data.dtype).eps

    def regular(a_, g_, d_):
        return _solve_diag(a_, g_ * d_)

    if not small.any():
        return regular(a, g, d)
    if small.all():
        return _det_cofactors(a, g)
    mask = make_tensor(small)
    out = make_tensor(xp.zeros(a.shape, dtype=data.dtype))
    setitem(out, mask, _det_cofactors(a[mask], g[mask]))
    keep = make_tensor(~small)
    setitem(out, keep, regular(a[keep], g[keep], d[keep]))
    return out


def _det_cofactors(a, g):
    """g times the cofactors of each matrix of ``a`` as PyTorch's singular path: with
    A = U diag(S) Vh, d det A = det(U) det(Vh) d prod(S), so the gradient is
    U diag(g det(U) det(Vh) prod_{j != i} S_j) Vh (differentiable again)."""
    from .linalg_decomp import svd

    u, s, vh = svd(a, full_matrices=False)
    alpha = _det(u) * _det(vh) * g
    n = s.shape[-1]
    others = []
    for i in range(n):  # the product of the other singular values, zeros included
        p = None
        for j in range(n):
            if j != i:
                p = s[..., j] if p is None else p * s[..., j]
        others.append(p)
    dd = stack(others, -1) * unsqueeze(alpha, -1)
    return (u * unsqueeze(dd, -2)) @ vh


@quiet_fp
def _det_fwd(a):
    """NumPy's det, but for a matrix with an inf or nan entry PyTorch's: the product of the
    LU factors' diagonal times the pivots' parity, so nan where the elimination met one.
    NumPy stops at an exactly zero pivot and returns 0 (det [[0, nan], [0, 1.4]] is 0 there,
    nan in PyTorch: seed 20402816)."""
    xp = namespace(a)
    d = xp.linalg.det(a)
    if a.shape[-1] == 0:
        return d
    bad = ~xp.isfinite(a).all(axis=(-2, -1))
    if not bad.any():
        return d
    lu, piv, _ = getrf(a)
    swaps = (piv != xp.arange(1, piv.shape[-1] + 1)).sum(axis=-1) % 2
    lu_det = xp.diagonal(lu, axis1=-2, axis2=-1).prod(axis=-1) * (1 - 2 * swaps)
    return xp.where(bad, lu_det.astype(d.dtype), d)


_det = defop("linalg.det", _det_fwd, _det_vjp, "LinalgDetBackward0", 1, BOTH)


def det(A):  # noqa: N803 - PyTorch's name
    """The determinant of each square matrix of ``A`` (..., n, n).

    Examples
    --------
    >>> import retrograd as T
    >>> T.linalg.det(T.tensor([[2.0, 1.0], [1.0, 3.0]]))
    tensor(5.)
    """
    check_square("linalg.det", A)
    return _det(A)


def _slogdet_vjp(node, grads, saved):
    # the sign is locally constant; d log|det A| = tr(A^-1 dA)
    a = saved[0]  # (then the sign, saved for its version check as PyTorch's node saves it)
    g = grads[1]
    if g is None:
        return (None,)
    if isinstance(g, Tensor):
        return (_slogdet_create_graph(a, g),)
    # (first order, arrays: a view, not two recorded unsqueezes)
    scale = g[..., None, None]
    return (_scaled_inv_t(a, scale),)


def _solve_diag(a, v):
    """linalg.solve(A^T, diag_embed(v)^T), recorded: det's and slogdet's derivative under
    create_graph as PyTorch writes it (LinalgSolveExBackward0 over a DiagEmbedBackward0).
    diag_embed leaves exact zeros off the diagonal, where v * I has nan for an inf v."""
    from .layout import diag_embed
    from .linalg_solve import solve

    d = diag_embed(unsqueeze(v, -1).expand(tuple(v.shape) + (a.shape[-1],)))
    return solve(_mT(a), _mT(d))


def _slogdet_create_graph(a, g):
    """The derivative under create_graph as PyTorch's slogdet_backward with grad mode on:
    linalg.solve(A^T, diag_embed(g)), so the second derivative is solve's; inv(A)^T * g, the
    same function, rounds differently in float32: a 1e-4 relative difference in a second
    derivative of logdet at condition number 500 (fuzz seed 20010520).  A singular matrix
    raises solve's LinAlgError there, as PyTorch."""
    return _solve_diag(a, g)


def _slogdet_nonfinite(a, sign, logabs):
    """PyTorch's slogdet from the LU factors for matrices with an inf or nan entry:
    sign = prod(sgn(diag U)) (sgn(nan) = 0) times the pivots' parity, logabsdet =
    sum(log|diag U|), so nan where U has one (NumPy's gives sign 1, or 0 and -inf, there:
    seed 11019784)."""
    xp = namespace(a)
    bad = ~xp.isfinite(a).all(axis=(-2, -1))
    if not bad.any():
        return sign, logabs
    lu, piv, _ = getrf(a)
    d = xp.diagonal(lu, axis1=-2, axis2=-1)
    swaps = (piv != xp.arange(1, piv.shape[-1] + 1)).sum(axis=-1) % 2
    lu_sign = xp.where(xp.isnan(d), 0, xp.sign(d)).prod(axis=-1) * (1 - 2 * swaps)
    lu_log = xp.log(xp.abs(d)).sum(axis=-1)
    return xp.where(bad, lu_sign, sign), xp.where(bad, lu_log, logabs)


_SlogdetNode = multi_output_class("LinalgSlogdetBackward0", _slogdet_vjp, _materialize=False)


def slogdet(A):  # noqa: N803 - PyTorch's name
    """``(sign, logabsdet)`` of the determinant of each matrix (sign 0 and logabsdet -inf
    for a singular one): log|det| without overflow.

    Examples
    --------
    >>> import retrograd as T
    >>> T.linalg.slogdet(T.tensor([[-2.0, 0.0], [0.0, 3.0]]))
    linalg_slogdet(sign=tensor(-1.), logabsdet=tensor(1.7918))
    """
    check_square("linalg.slogdet", A)
    with quiet(namespace(A._data)):  # (a nan entry: NumPy warns, PyTorch does not)
        sign, logabs = namespace(A._data).linalg.slogdet(A._data)
        sign, logabs = _slogdet_nonfinite(A._data, sign, logabs)
    outs = [make_tensor(namespace(A._data).asarray(v, dtype=A._data.dtype)) for v in
            (sign, logabs)]
    if A._requires_grad and state.enabled:
        record_multi_inputs(_SlogdetNode, (A,), outs, (), saved=(A,), keep=(0,))
    if fw.active:  # forward AD: the tangents (ops/_jvp.py)
        fw.propagate_multi(_SlogdetNode, A, outs, (), (A,))
    return slogdet_type(*outs)


_slogdet_old_type = namedtuple("slogdet", ["sign", "logabsdet"])


def _slogdet_old(input):  # noqa: A002 - PyTorch's name (torch.slogdet(input))
    return _slogdet_old_type(*slogdet(input))


def logdet(input):  # noqa: A002 - PyTorch's name
    """log det of each matrix: nan for a negative determinant, -inf for a singular one."""
    check_square("logdet", input, "input")
    sign, logabs = slogdet(input)
    return where(sign._data < 0, math.nan, logabs)


# ----------------------------------------------------------------- norms


def _float_input(name, x, dtype):
    return norm_input(name, x, dtype)  # (dtype_rules: PyTorch's checks, in its order)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    """The vector ``ord``-norm of ``x`` over ``dim`` (all elements by default): ord > 0,
    0 (the count of nonzeros), +-inf (the largest / smallest magnitude), or negative.

    Examples
    --------
    >>> import retrograd as T
    >>> T.linalg.vector_norm(T.tensor([3.0, -4.0])), T.linalg.vector_norm(T.tensor([3.0, -4.0]), 1)
    (tensor(5.), tensor(7.))
    """
    tensor_arg(x, "x")
    given = x
    x = _float_input("linalg.vector_norm", x, dtype)
    if isinstance(ord, str) or isinstance(ord, bool):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' must be Number, not "
                        f"{type(ord).__name__}")
    if isinstance(dim, int):
        dim = (dim,)
    axes = _dims(dim, x.ndim)
    if (ord < 0 or ord == math.inf) and x.numel() == 0:  # a max or min over nothing
        if dim is None:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {ord} norm on an empty "
                               "tensor because the operation does not have an identity")
        for d in axes:
            if x.shape[d] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {ord} norm on the "
                                   f"dimension {d} because this dimension is zero-size (the "
                                   "operation has no identity)")
    out = take_source(_vector_norm(x, float(ord), axes, keepdim), x, given)  # (as PyTorch)
    # (dtype=: the node saved the cast copy; PyTorch's saves the caller's tensor: an
    # in-place change of it before backward raises, so check_also keeps it for that check)
    # (its 0-norm node saves it too, though its derivative is 0)
    return check_also(out, given) if x is not given or ord == 0 else out


def _matrix_dims(name, A, dim):  # noqa: N803
    if len(dim) != 2:
        raise RuntimeError(f"{name}: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    nd = A.ndim
    for d in dim:
        if not -nd <= d < nd:
            raise IndexError(f"{name}(): Dimension out of range (expected to be in range of "
                             f"[{-nd}, {nd - 1}], but got {d})")
    d0, d1 = dim[0] % nd, dim[1] % nd
    if d0 == d1:
        raise RuntimeError(f"{name}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


def _spectral(A, d0, d1, reduce, keepdim):  # noqa: N803
    """``reduce`` over the singular values of the (d0, d1) matrices, as PyTorch records it:
    the matrix dims permuted last, the singular values, the reduction, and with ``keepdim``
    an unsqueeze and the inverse permutation."""
    perm = [i for i in range(A.ndim) if i not in (d0, d1)] + [d0, d1]
    moved = permute(A, *perm)
    out = reduce(svdvals(moved), keepdim)
    if not keepdim:
        return out
    back = [perm.index(i) for i in range(A.ndim)]
    return permute(unsqueeze(out, -1), *back)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):  # noqa: A002,N803
    """The matrix norm of each matrix of ``A`` over the two dims ``dim``: ``'fro'``,
    ``'nuc'`` (sum of singular values), 2 / -2 (largest / smallest singular value), 1 / -1
    (largest / smallest column sum of magnitudes), inf / -inf (rows).

    Examples
    --------
    >>> import retrograd as T
    >>> T.linalg.matrix_norm(T.tensor([[1.0, -2.0], [3.0, 4.0]]), 1)
    tensor(6.)
    """
    tensor_arg(A, "A")
    given = A
    A = _float_input("linalg.matrix_norm", A, dtype)  # noqa: N806
    return _matrix_norm(A, ord, dim, keepdim, given)


def _cast_vector_norm(A, p, axes, keepdim, given):  # noqa: N803
    """matrix_norm's vector norm of ``A``, the cast of ``given`` to the dtype asked: its node
    takes ``given`` (no ToCopyBackward0 between, as PyTorch) and checks its version."""
    out = take_source(_vector_norm(A, p, axes, keepdim), A, given)
    return check_also(out, given) if A is not given else out


def _matrix_norm(A, ord, dim, keepdim, given):  # noqa: A002,N803
    """matrix_norm of ``A``, ``given`` cast to the dtype asked (the SVD-based norms keep
    the ToCopyBackward0 of that cast, as PyTorch)."""
    if A.ndim < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 "
                           f"dimensions (got shape {list(A.shape)})")
    d0, d1 = _matrix_dims("linalg.matrix_norm", A, tuple(dim))
    if A._data.dtype.itemsize == 2 and (ord == "nuc" or ord in (2, -2)):  # (an SVD)
        raise RuntimeError("linalg.matrix_norm: Low precision dtypes not supported. Got Half "
                           "(convert first, e.g. A.float())")
    if isinstance(ord, str):
        if ord == "fro":
            return _cast_vector_norm(A, 2.0, (d0, d1), keepdim, given)
        if ord == "nuc":
            return _spectral(A, d0, d1, lambda s, k: _sum(s, -1, keepdim=k), keepdim)
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported (use 'fro', 'nuc', "
                           "1, -1, 2, -2, inf or -inf)")
    if ord not in (1, -1, 2, -2, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported (use 'fro', 'nuc', "
                           "1, -1, 2, -2, inf or -inf)")
    if A.numel() == 0 and ord == -2:  # (no singular values to take the smallest of)
        raise IndexError("linalg.matrix_norm: amin(): Expected reduction dim -1 to have "
                         "non-zero size (the -2 norm of an empty matrix has no value)")
    # the max over nothing (no singular values; no columns for ord 1, no rows for inf) is
    # 0 for PyTorch, a constant that does not require grad
    over = min(A.shape[d0], A.shape[d1]) if abs(ord) == 2 else \
        A.shape[d1] if abs(ord) == 1 else A.shape[d0]
    if over == 0 and ord > 0:
        shape = [1 if i in (d0, d1) else n for i, n in enumerate(A.shape)
                 if keepdim or i not in (d0, d1)]
        return make_tensor(namespace(A._data).zeros(tuple(shape), dtype=A._data.dtype))
    if abs(ord) == 2:
        pick = amax if ord > 0 else amin
        return _spectral(A, d0, d1, lambda s, k: pick(s, -1, keepdim=k), keepdim)
    # 1: the largest column sum (the 1-norms over rows d0, then the max over columns d1);
    # inf: the same with the dims swapped (PyTorch's composition)
    summed, other = (d0, d1) if abs(ord) == 1 else (d1, d0)
    if not keepdim and summed < other:
        other -= 1
    col = _cast_vector_norm(A, 1.0, (summed,), keepdim, given)
    return amax(col, other, keepdim) if ord > 0 else amin(col, other, keepdim)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):  # noqa: A002,N803
    """A vector norm or a matrix norm, as ``ord`` and ``dim`` say: with ``ord=None``, the
    2-norm of all elements (``dim=None``), of vectors (an int ``dim``) or the Frobenius norm
    (two dims); a string ``ord`` or a 2-tuple ``dim`` (or a 2-D input) means a matrix norm."""
    tensor_arg(A, "A")
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                           f"Got {list(dim)}")
    if ord is None:
        if dim is not None and len(dim) == 2:
            return matrix_norm(A, "fro", dim, keepdim, dtype=dtype)
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if dim is None:
        if A.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input "
                               f"must be 1D or 2D. Got {A.ndim}D.")
        dim = tuple(range(A.ndim))
    if isinstance(ord, str) or len(dim) == 2:
        if len(dim) != 2:
            raise RuntimeError(f"linalg.norm: If ord is a string ({ord}), the input must be 2D "
                               f"or dim must be a 2-tuple (got dim={list(dim)})")
        return matrix_norm(A, ord, dim, keepdim, dtype=dtype)
    return vector_norm(A, ord, dim, keepdim, dtype=dtype)


def _out_copied(fn):
    """``fn`` with ``out=``, copied in as PyTorch's composite ops do: recorded
    (CopyBackwards) even when the result needs a gradient."""
    import functools

    @functools.wraps(fn)
    def call(*args, out=None, **kwargs):
        res = fn(*args, **kwargs)
        if out is None:
            return res
        from .inplace import copy_

        return copy_(out, res)  # (out must have the result's shape: no resizing)

    return call


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(det, "det", function=True, method=True, signature="input")  # torch.det(input)
register(det, "det", function=False, method=False, linalg=("det",), signature="A")
register(_slogdet_old, "slogdet", function=True, method=True, tuple_out=True)
register(slogdet, "slogdet", function=False, method=False, linalg=("slogdet",),
         tuple_out=True)
register(logdet, signature="input")
register(vector_norm, function=False, method=False, linalg=("vector_norm",),
         signature="x, ord=2, dim=None, keepdim=False, *, dtype=None")
register(_out_copied(matrix_norm), "matrix_norm", function=False, method=False,
         linalg=("matrix_norm",))
register(_out_copied(norm), "norm", function=False, method=False, linalg=("norm",))
