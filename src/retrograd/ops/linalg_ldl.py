"""The LDL factorisation of symmetric matrices (issue 11): linalg.ldl_factor,
linalg.ldl_factor_ex, linalg.ldl_solve.

LAPACK's sytrf / sytrs (Bunch-Kaufman pivoting, 1x1 and 2x2 blocks) through SciPy, an
optional dependency imported on first use, as PyTorch (the same packed factors and pivots:
a negative pair marks a 2x2 block).  Not differentiable, as PyTorch's: a result that needs
a gradient gets a node named ``NotImplemented`` whose derivative raises.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..autograd.forward_state import fw
from ..autograd.grad_mode import state
from ..tensor import make_tensor
from ._apply import multi_output_class, node_class, record, record_multi
from ._errors import scalar_type_name, tensor_arg
from .linalg import _same_dtype
from .linalg_solve import LinAlgError

ldl_factor_type = namedtuple("linalg_ldl_factor", ["LD", "pivots"])
ldl_factor_ex_type = namedtuple("linalg_ldl_factor_ex", ["LD", "pivots", "info"])


def _lapack(name, a):
    try:
        from scipy.linalg.lapack import get_lapack_funcs
    except ImportError:
        raise ImportError(f"linalg.{name} needs SciPy (LAPACK's sytrf/sytrs): pip install "
                          "retrograd[scipy]") from None
    return get_lapack_funcs((name,), (a,))[0]


def _not_implemented(op, multi):
    def vjp(node, grads, saved):
        raise RuntimeError(f"derivative for aten::{op} is not implemented")

    return (multi_output_class if multi else node_class)("NotImplemented", vjp)


_FactorNode = _not_implemented("linalg_ldl_factor_ex", True)
_SolveNode = _not_implemented("linalg_ldl_solve", False)


def _host(x):
    return np.asarray(x.get() if hasattr(x, "get") else x)


def _check_square(name, A):  # noqa: N803 - PyTorch's name
    tensor_arg(A, "A")
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if A._data.dtype.kind != "f":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_type_name(A._data.dtype)}")
    if A._data.itemsize == 2 and "factor" in name:  # (float16: the kernel refuses it)
        raise NotImplementedError("\"ldl_factor_kernel_cpu\" not implemented for 'Half' ("
                                  f"{name} needs float32 or float64 matrices: convert first, "
                                  "e.g. A.float())")


def _factor(name, A, check):  # noqa: N803
    a = _host(A._data)
    n = a.shape[-1]
    flat = a.reshape(-1, n, n)
    ld = np.zeros_like(flat)
    piv = np.zeros(flat.shape[:-1], dtype=np.int32)
    info = np.zeros(flat.shape[0], dtype=np.int32)
    if n:
        sytrf = _lapack("sytrf", flat)
        for i, m in enumerate(flat):
            out, p, inf = sytrf(m, lower=1)
            ld[i], piv[i], info[i] = np.tril(out), p, inf
    if check and (info > 0).any():
        k = int(np.argmax(info > 0))
        batch = f"(Batch element {k}): " if A.ndim > 2 else ""
        raise LinAlgError(f"{name}: {batch}The factorization could not be completed because "
                          f"the block diagonal matrix D is exactly singular (D[{info[k]},"
                          f"{info[k]}] is zero); linalg.ldl_factor_ex reports it in info")
    from ..backend import namespace

    xp = namespace(A._data)
    outs = (make_tensor(xp.asarray(ld.reshape(a.shape))),
            make_tensor(xp.asarray(piv.reshape(a.shape[:-1]))),
            make_tensor(xp.asarray(info.reshape(a.shape[:-2]))))
    if A._requires_grad and state.enabled:
        record_multi(_FactorNode, A, outs[:1], ())
    if fw.active:  # forward AD: the tangent (ops/_jvp.py)
        fw.propagate_outputs(_FactorNode, (A,), outs[:1], ())
    return outs


def ldl_factor_ex(input, *, hermitian=False, check_errors=False):  # noqa: A002 - PyTorch's
    """``(LD, pivots, info)``: the LDL^T factorisation with Bunch-Kaufman pivoting of each
    symmetric matrix of ``A`` (its lower triangle is read), as LAPACK's sytrf; ``info`` > 0
    where D is exactly singular.  Not differentiable, as PyTorch's."""
    _check_square("torch.linalg.ldl_factor_ex", input)
    return ldl_factor_ex_type(*_factor("torch.linalg.ldl_factor_ex", input, check_errors))


def ldl_factor(input, *, hermitian=False):  # noqa: A002 - PyTorch's names
    """``(LD, pivots)`` of ``ldl_factor_ex``; an exactly singular D raises LinAlgError.

    Examples
    --------
    >>> import retrograd as T
    >>> LD, pivots = T.linalg.ldl_factor(T.tensor([[4.0, 2.0], [2.0, 3.0]]))
    >>> LD, pivots
    (tensor([[4.0000, 0.0000],
            [0.5000, 2.0000]]), tensor([1, 2], dtype=retrograd.int32))
    """
    _check_square("torch.linalg.ldl_factor", input)
    return ldl_factor_type(*_factor("torch.linalg.ldl_factor", input, True)[:2])


def ldl_solve(LD, pivots, B, *, hermitian=False):  # noqa: N803 - PyTorch's names
    """The solution X of ``A X = B`` from A's ``ldl_factor`` (sytrs); batches broadcast.
    Not differentiable, as PyTorch's."""
    name = "torch.linalg.ldl_solve"
    _check_square(name, LD)
    tensor_arg(pivots, "pivots", 1)
    tensor_arg(B, "B", 2)
    if B.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    n = LD.shape[-1]
    if B.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {n} by {n} "
                           f"but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    if pivots._data.dtype.kind not in "iu" or tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError(f"{name}: Expected pivots to be integers of shape "
                           f"{list(LD.shape[:-1])}, but got {pivots.dtype} of shape "
                           f"{list(pivots.shape)}")
    _same_dtype(name, (LD, B), name + ": Expected LD and B to have the same dtype, but found "
                "LD of type {} and B of type {} instead")
    try:
        batch = np.broadcast_shapes(tuple(LD.shape[:-2]), tuple(B.shape[:-2]))
    except ValueError:
        raise RuntimeError(f"{name}: the batch dimensions of LD {list(LD.shape[:-2])} and B "
                           f"{list(B.shape[:-2])} do not broadcast") from None
    ld = np.broadcast_to(_host(LD._data), batch + (n, n)).reshape(-1, n, n)
    piv = np.broadcast_to(_host(pivots._data), batch + (n,)).reshape(-1, n)
    b = np.broadcast_to(_host(B._data), batch + tuple(B.shape[-2:]))
    flat_b = b.reshape(-1, *B.shape[-2:])
    x = np.zeros(flat_b.shape, dtype=flat_b.dtype)
    if n and flat_b.shape[-1]:
        sytrs = _lapack("sytrs", ld)
        for i in range(flat_b.shape[0]):
            x[i] = sytrs(ld[i], piv[i], flat_b[i], lower=1)[0]
    from ..backend import namespace

    out = make_tensor(namespace(B._data).asarray(x.reshape(b.shape)))
    if (LD._requires_grad or B._requires_grad) and state.enabled:
        record(_SolveNode, (LD, B), out, ())
    if fw.active:  # forward AD: the tangent (ops/_jvp.py)
        fw.propagate_node(_SolveNode, (LD, B), out, ())
    return out


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(ldl_factor, function=False, method=False, linalg=("ldl_factor",), differentiable=False)
register(ldl_factor_ex, function=False, method=False, linalg=("ldl_factor_ex",),
         differentiable=False)
register(ldl_solve, function=False, method=False, linalg=("ldl_solve",), differentiable=False,
         signature="LD, pivots, B, *, hermitian=False")
