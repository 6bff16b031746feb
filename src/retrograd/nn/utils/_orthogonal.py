"""``nn.utils.parametrizations.orthogonal``: a matrix (or batch of matrices) kept orthogonal.

The original tensor ``X`` is mapped to an orthogonal ``Q`` by one of three maps, as in
PyTorch: the matrix exponential or the Cayley transform of the skew-symmetric matrix built
from ``X``'s lower triangle, or a product of Householder reflectors whose vectors are the
columns of ``X``'s strictly lower triangle.  With ``use_trivialization=True`` (the default)
the result is multiplied by a buffer ``base`` that ``right_inverse`` sets to the assigned
matrix (orthogonalised by QR when it is not orthogonal), and the original becomes ``-I``:
the "dynamic trivialization" of Lezcano-Casado (2019).  Everything is written with
retrograd's differentiable ops, so gradients flow to the original through any of the maps.
"""

from __future__ import annotations

from enum import Enum, auto

from ..._creation import eye, randn, zeros_like
from ...autograd.grad_mode import no_grad
from ...dtypes import finfo
from ...ops import registry
from ...ops.shape import cat
from ...tensor import Tensor
from ..module import Module
from . import parametrize

__all__ = ["orthogonal"]


def _op(key: str):
    """The registered op ``key`` (nn may not import the top level, see
    tests/test_architecture.py); looked up on call, as the registry fills on import."""
    return registry.entry(key).fn


def _is_orthogonal(Q: Tensor) -> bool:  # noqa: N803 - the math names
    """``Q^H Q == I`` up to ``10 * n * eps`` (PyTorch's tolerance)."""
    n, k = Q.size(-2), Q.size(-1)
    identity = eye(k, dtype=Q.dtype)
    eps = 10.0 * n * finfo(Q.dtype).eps
    return bool((Q.mH @ Q).allclose(identity, atol=eps))


def _make_orthogonal(A: Tensor) -> Tensor:  # noqa: N803
    """The Q of ``A = QR`` (A tall) with ``diag(R)`` made non-negative, so the factor is
    unique (PyTorch's sign convention)."""
    X, tau = _op("geqrf")(A)
    Q = _op("linalg.householder_product")(X, tau)
    return Q * X.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    """``forward(X) = [base @] map(X)`` (transposed for a wide matrix); see the module
    docstring.  ``base`` is a buffer only with ``use_trivialization``."""

    def __init__(self, weight: Tensor, orthogonal_map: _OrthMaps, *,
                 use_trivialization: bool = True) -> None:
        super().__init__()
        # a complex Householder vector does not determine its tau, so the map would not
        # cover the unitary matrices (PyTorch refuses it for the same reason)
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:  # noqa: N803 - PyTorch names it X
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        # from here X is tall: n >= k
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()  # n*k - k(k-1)/2 free parameters
            if n != k:  # embed into a square matrix
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH  # skew-symmetric (skew-Hermitian)
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = _op("matrix_exp")(A)
            else:  # the Cayley retraction (I + A/2)(I - A/2)^{-1}
                identity = eye(n, dtype=A.dtype)
                add = _op("add")
                Q = _op("linalg.solve")(add(identity, A, alpha=-0.5), add(identity, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _op("linalg.householder_product")(A, tau)
            # X's diagonal holds the signs (+-1); cast so no gradient reaches it
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q: Tensor) -> Tensor:  # noqa: N803 - as PyTorch
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q: Tensor) -> Tensor:  # noqa: N803
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            # without a base only the Householder map can be inverted: for exp/Cayley no
            # closed form gives the X that maps to Q (PyTorch raises the same error)
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError(
                    "It is not possible to assign to the matrix exponential or the Cayley "
                    "parametrizations when use_trivialization=False.")
            A, tau = _op("geqrf")(Q)
            # diag(R) > 0 makes the decomposition unique; its signs go on the diagonal,
            # and LAPACK's tau == 0 (no reflection used) flips the sign back
            A.diagonal(dim1=-2, dim2=-1).sign_()
            A.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
            return A.mT if transpose else A
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:  # complete Q to a full n x n orthogonal matrix
            N = randn(*(tuple(Q.size()[:-2]) + (n, n - k)), dtype=Q.dtype)
            Q = _make_orthogonal(cat([Q, N], dim=-1))
        self.base = Q
        # -I, because the Householder map sends X with diagonal -1 to I: then
        # householder(zeros) == eye and every map starts at Q = base
        neg_identity = zeros_like(Q_init)
        neg_identity.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_identity


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Keep ``module.<name>`` (a matrix or a batch of matrices ``(..., m, n)``) orthogonal:
    orthonormal columns when ``m >= n``, orthonormal rows otherwise.

    ``orthogonal_map`` is ``"matrix_exp"``, ``"cayley"`` or ``"householder"`` (default:
    ``"matrix_exp"`` for a square or complex matrix, else ``"householder"``).  With
    ``use_trivialization`` an extra buffer ``parametrizations.<name>[0].base`` holds the
    current point and the original is a correction around it.

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd import nn
    >>> m = nn.utils.parametrizations.orthogonal(nn.Linear(3, 5))
    >>> Q = m.weight
    >>> bool((Q.T @ Q).allclose(T.eye(3), atol=1e-5))
    True
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.size(-2) == weight.size(-1)
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
